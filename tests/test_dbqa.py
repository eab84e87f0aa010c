"""NLPCC-DBQA answer-sentence selection (seed 001): the seed's precision example, the kernel
against qafast.reference.dbqa, the TSV reader and bad input."""

import io
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qafast.cli import main
from qafast.dbqa import evaluate_dbqa, evaluate_dbqa_file
from qafast.io.dbqa import DbqaFormatError, read_dbqa
from qafast.reference import dbqa as ref
from _examples import examples


def test_seed_001_precision_example():
    # seed 001: relevant at ranks 1, 4 and 5; P@1..5 = 1, 1/2, 1/3, 2/4, 3/5; P@n = 3/n
    labels = [1, 0, 0, 1, 1]
    scores = [0.9, 0.8, 0.7, 0.6, 0.5]
    r = evaluate_dbqa([labels], [scores], accuracy_at=[1, 2], per_question=True)
    assert r["map"] == (1 / 1 + 2 / 4 + 3 / 5) / 3
    assert r["mrr"] == 1.0
    assert r["accuracy@1"] == 1.0
    # F1 of the top sentence: P = 1, R = 1/3
    assert r["f1"] == 2 * 1 * (1 / 3) / (1 + 1 / 3)
    assert r == {**ref.evaluate_dbqa([labels], [scores], accuracy_at=[1, 2]),
                 "per_question": r["per_question"]}


def test_ties_keep_input_order_and_no_correct_sentence_scores_zero():
    r = evaluate_dbqa([[0, 1], [1, 0], [0, 0]], [[0.5, 0.5], [0.5, 0.5], [1.0, 2.0]],
                      per_question=True)
    assert r["per_question"][:, 0].tolist() == [0.5, 1.0, 0.0]
    assert r["per_question"][:, 1].tolist() == [0.5, 1.0, 0.0]
    assert r["mrr"] == 1.5 / 3


def test_f1_threshold():
    r = evaluate_dbqa([[1, 1, 0, 0]], [[0.9, 0.2, 0.7, 0.1]], f1_threshold=0.5)
    # selected {0, 2}: P 1/2, R 1/2
    assert r["f1"] == 0.5
    assert evaluate_dbqa([[1, 0]], [[0.1, 0.2]], f1_threshold=0.5)["f1"] == 0.0


def test_flat_forms_agree():
    labels = [[0, 1, 0], [1], [0, 0, 1, 1]]
    scores = [[0.3, 0.2, 0.1], [5.0], [1.0, -1.0, 0.0, 1.0]]
    nested = evaluate_dbqa(labels, scores, accuracy_at=[1, 3])
    flat_y = np.concatenate([np.array(a) for a in labels])
    flat_s = np.concatenate([np.array(b) for b in scores])
    off = np.array([0, 3, 4, 8])
    assert evaluate_dbqa(flat_y, flat_s, offsets=off, accuracy_at=[1, 3]) == nested
    qs = ["a"] * 3 + ["b"] + ["a"] * 4  # "a" again later is a new question, as in the file
    assert evaluate_dbqa(flat_y.astype(bool), flat_s, questions=qs, accuracy_at=[1, 3]) == nested
    assert nested == ref.evaluate_dbqa(labels, scores, accuracy_at=[1, 3])


SCORES = [0.0, -0.0, 0.5, 1.0, -1.0, 0.25, 1e-300, 3.0, float("inf"), -float("inf")]


@st.composite
def dbqa_cases(draw):
    n = draw(st.integers(1, 6))
    sizes = [draw(st.integers(1, 40)) for _ in range(n)]
    labels = [draw(st.lists(st.integers(0, 1), min_size=k, max_size=k)) for k in sizes]
    scores = [draw(st.lists(st.sampled_from(SCORES), min_size=k, max_size=k)) for k in sizes]
    return labels, scores


@settings(max_examples=examples(150), deadline=None)
@given(dbqa_cases(), st.sampled_from([None, 0.0, 0.5]))
def test_kernel_matches_reference(case, threshold):
    labels, scores = case
    got = evaluate_dbqa(labels, scores, accuracy_at=[1, 3, 5], f1_threshold=threshold)
    want = ref.evaluate_dbqa(labels, scores, accuracy_at=[1, 3, 5],
                             select="top1" if threshold is None else threshold)
    assert got == want


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(st.integers(1, 17), min_size=1, max_size=40), st.data())
def test_short_questions_match_reference(sizes, data):
    # many questions of up to 16 candidates: the kernel's fixed-width path, and its general
    # path for those within 16 candidates of the end; labels as one-byte arrays
    total = sum(sizes)
    y = np.array(data.draw(st.lists(st.integers(0, 1), min_size=total, max_size=total)),
                 dtype=np.uint8)
    s = np.array(data.draw(st.lists(st.sampled_from(SCORES), min_size=total, max_size=total)))
    off = np.concatenate(([0], np.cumsum(sizes)))
    got = evaluate_dbqa(y, s, offsets=off, accuracy_at=[1, 2], per_question=True)
    nested_y = [y[a:b].tolist() for a, b in zip(off[:-1], off[1:])]
    nested_s = [s[a:b].tolist() for a, b in zip(off[:-1], off[1:])]
    want = ref.evaluate_dbqa(nested_y, nested_s, accuracy_at=[1, 2])
    rows = got.pop("per_question")
    assert got == want
    assert rows.shape == (len(sizes), 4)
    assert sum(rows[:, 0].tolist()) == pytest.approx(want["mrr"] * len(sizes))
    assert evaluate_dbqa(y.astype(bool), s, offsets=off, accuracy_at=[1, 2]) == want


def test_one_byte_labels_are_checked():
    y = np.array([0, 1, 0, 255, 1], dtype=np.uint8)
    with pytest.raises(ValueError, match="question 1: label 255 is not 0 or 1"):
        evaluate_dbqa(y, np.zeros(5), offsets=[0, 2, 5])
    with pytest.raises(ValueError, match="question 1: label -1 is not 0 or 1"):
        evaluate_dbqa(y.view(np.int8), np.zeros(5), offsets=[0, 2, 5])


@pytest.mark.parametrize("labels, scores, kw, exc, words", [
    ([[1, 2]], [[0.1, 0.2]], {}, ValueError, "question 0: label 2 is not 0 or 1"),
    ([[1], ["1"]], [[0.1], [0.2]], {}, ValueError, "question 1: label '1' is not 0 or 1"),
    ([[1], [0.5]], [[0.1], [0.2]], {}, ValueError, "question 1: label 0.5"),
    ([[1], []], [[0.1], []], {}, ValueError, "question 1 has no candidate"),
    ([[1, 0]], [[0.1]], {}, ValueError, "question 0: 2 labels but 1 scores"),
    ([[1], [0]], [[0.1], [float("nan")]], {}, ValueError, "question 1: a score is NaN"),
    ([1, 0], [0.1, float("nan")], {"questions": ["x", "y"]}, ValueError,
     "question 'y': a score is NaN"),
    ([], [], {}, ValueError, "no questions"),
    ([[1]], [[0.1], [0.2]], {}, ValueError, "1 questions but scores has 2"),
    ([[1]], [["a"]], {}, TypeError, "question 0: scores must be numbers"),
    ([[1]], [[0.1]], {"accuracy_at": 0}, ValueError, "accuracy_at"),
    ([1, 0], [0.1, 0.2], {"offsets": [0, 1]}, ValueError, "offsets must run from 0 to 2"),
])
def test_bad_input(labels, scores, kw, exc, words):
    with pytest.raises(exc, match=words):
        evaluate_dbqa(labels, scores, **kw)


DATA = ('谁是"作者\t句子 "一\t0\n谁是"作者\t句子二 "quoted" here\t1\n'
        'q2\tx\t1\n\nq2\ty\t0\r\n')


def test_reader_no_quote_processing_and_score_file(tmp_path):
    d = tmp_path / "test.txt"
    d.write_text(DATA, encoding="utf-8")
    s = tmp_path / "scores.txt"
    s.write_text("0.1\n0.9\n0.3\n0.4\n")
    data = read_dbqa(d, s)
    assert data.questions == ['谁是"作者', "q2"]
    assert data.offsets.tolist() == [0, 2, 4]
    assert data.labels.tolist() == [0, 1, 1, 0]
    assert data.lines.tolist() == [1, 2, 3, 5]
    r = evaluate_dbqa_file(d, s)
    assert r == ref.evaluate_dbqa([[0, 1], [1, 0]], [[0.1, 0.9], [0.3, 0.4]])
    four = tmp_path / "four.txt"
    four.write_text("q\ta\t1\t0.5\nq\tb\t0\t0.7\n")
    assert evaluate_dbqa_file(four)["mrr"] == 0.5


@pytest.mark.parametrize("text, words", [
    ("q\ta\n", "line 1: expected 3 or 4 tab-separated fields"),
    ("q\ta\t1\nq\tb\t2\n", "line 2: label '2' of question 'q' is not 0 or 1"),
    ("q\ta\t1\t0.5\nq\tb\t0\n", "line 2: 3 fields, but earlier lines had 4"),
    ("q\ta\t1\tnan\n", "line 1: score of question 'q' is NaN"),
    ("q\ta\t1\tx\n", "line 1: score 'x' of question 'q' is not a number"),
])
def test_reader_errors(text, words):
    with pytest.raises(DbqaFormatError, match=words):
        read_dbqa(io.StringIO(text))


def test_score_file_length_must_match(tmp_path):
    d = tmp_path / "d.txt"
    d.write_text("q\ta\t1\nq\tb\t0\n")
    with pytest.raises(DbqaFormatError, match="1 scores for the 2 candidate lines"):
        read_dbqa(d, io.StringIO("0.5\n"))
    with pytest.raises(ValueError, match="no scores"):
        evaluate_dbqa_file(d)


def test_cli(tmp_path, capsys):
    d = tmp_path / "d.txt"
    d.write_text(DATA, encoding="utf-8")
    s = tmp_path / "s.txt"
    s.write_text("0.1\n0.9\n0.3\n0.4\n")
    assert main(["dbqa", str(d), str(s), "-N", "1,2", "-o", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == evaluate_dbqa_file(d, s, accuracy_at=[1, 2])
    assert main(["dbqa", str(d), str(s)]) == 0
    assert ["mrr", "0.7500"] in [ln.split() for ln in capsys.readouterr().out.splitlines()]
    assert main(["dbqa", str(d)]) == 2
    assert "no scores" in capsys.readouterr().err
