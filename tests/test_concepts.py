"""Open-ended commonsense answers (seed 003, OpenCSR / DrFact): Hit@K and Rec@K by hand, the
kernel against the plain-Python reference, the DrFact script's K + 1 rule, bad input, the
reader and the CLI."""

import doctest
import json
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import qafast.concepts
import qafast.io.drfact
import qafast.reference.concepts
from qafast import cli
from qafast.concepts import (
    ConceptLists,
    encode_concepts,
    evaluate_concepts,
    hit_at_k,
    recall_at_k,
)
from qafast.io.drfact import DrFactFormatError, DrFactWarning, read_drfact
from qafast.reference import concepts as ref
from _examples import examples

# Seed 003: a weighted set of concepts per question, several gold concepts per question.
PRED = {
    "q1": [("tree", 0.9), ("leaf", 0.8), ("sun", 0.5), ("moon", 0.1)],
    "q2": {"water": 0.7, "ice": 0.7, "steam": 0.2},          # a tie: "ice" sorts first
    "q3": [("rock", 2.0), ("sand", 1.0)],                    # no gold concept found
}
GOLD = {"q1": ["sun", "moon", "star"], "q2": ["ice", "ice"], "q3": ["clay"], "q4": ["x"]}


def test_worked_example_by_hand():
    # q1 ranks: tree leaf sun moon -> gold at ranks 2, 3 of 3 gold; q2: ice water steam -> rank 0
    assert hit_at_k(PRED, GOLD, k=1) == 1 / 3
    assert hit_at_k(PRED, GOLD, k=3) == 2 / 3
    assert recall_at_k(PRED, GOLD, k=1) == (0 + 1 + 0) / 3
    assert recall_at_k(PRED, GOLD, k=3) == (1 / 3 + 1 + 0) / 3
    assert recall_at_k(PRED, GOLD) == (2 / 3 + 1 + 0) / 3
    assert hit_at_k(PRED, GOLD, k=2, per_question=True) == {"q1": 0.0, "q2": 1.0, "q3": 0.0}
    assert recall_at_k(PRED, GOLD, k=4, per_question=True) == {"q1": 2 / 3, "q2": 1.0,
                                                                "q3": 0.0}
    assert evaluate_concepts(PRED, GOLD, ["hit@1", "rec@3", "hit"]) == {
        "hit@1": 1 / 3, "rec@3": (1 / 3 + 1 + 0) / 3, "hit": 2 / 3}


def test_drfact_rule_counts_k_plus_one_in_list_order():
    # the DrFact script: position r counts at T when r <= T, weights ignored
    assert hit_at_k(PRED, GOLD, k=1, drfact=True, per_question=True) == {
        "q1": 0.0, "q2": 1.0, "q3": 0.0}    # q2 in dict order: water, ice
    assert hit_at_k(PRED, GOLD, k=2, drfact=True) == 2 / 3
    assert recall_at_k(PRED, GOLD, k=2, drfact=True) == (1 / 3 + 1 + 0) / 3
    # the same numbers as qafast's rule at K + 1 when the list is already sorted
    ranked = {"q1": PRED["q1"], "q3": PRED["q3"]}
    for k in (1, 2, 3):
        assert (evaluate_concepts(ranked, GOLD, [f"hit@{k}", f"rec@{k}"], drfact=True)
                == {f"hit@{k}": hit_at_k(ranked, GOLD, k=k + 1),
                    f"rec@{k}": recall_at_k(ranked, GOLD, k=k + 1)})


def test_reference_agrees_on_worked_example():
    for k in (None, 1, 2, 3, 10):
        for drfact in (False, True):
            p = {q: v for q, v in PRED.items()}
            assert hit_at_k(p, GOLD, k=k, drfact=drfact) == ref.mean_hit_at_k(p, GOLD, k,
                                                                                drfact=drfact)
            assert recall_at_k(p, GOLD, k=k, drfact=drfact) == ref.mean_recall_at_k(
                p, GOLD, k, drfact=drfact)


def test_ranked_lists_and_empty_predictions():
    pred = {"a": ["x", "y", "z"], "b": [], "c": ["z"]}
    gold = {"a": ["z", "y"], "b": ["x"], "c": ["z"]}
    assert evaluate_concepts(pred, gold, ["hit@2", "rec@2", "rec"], per_question=True) == {
        "a": {"hit@2": 1.0, "rec@2": 0.5, "rec": 1.0},
        "b": {"hit@2": 0.0, "rec@2": 0.0, "rec": 0.0},
        "c": {"hit@2": 1.0, "rec@2": 1.0, "rec": 1.0}}
    # an empty prediction fits the weighted form too
    assert hit_at_k({"a": [("x", 1.0)], "b": []}, {"a": ["x"], "b": ["x"]}, k=1) == 0.5


def test_k_larger_than_lists_and_huge_k():
    assert hit_at_k({"a": ["x"]}, {"a": ["x"]}, k=10**12) == 1.0
    assert recall_at_k({"a": ["x"]}, {"a": ["x", "y"]}, k=10**12, drfact=True) == 0.5


def script_twin(pred_lines, truth, thresholds):
    """The DrFact script's hit_at_K / recall_at_K logic (from its description), one pool."""
    hits, recs = {t: 0 for t in thresholds}, {t: 0 for t in thresholds}
    for item in pred_lines:
        ans = set(truth[item["qid"]])
        concept2rank = {}
        for ind, (concept, _) in enumerate(item["pairs"]):
            if concept in ans:
                concept2rank[concept] = ind
        for t in thresholds:
            if concept2rank and any(r <= t for r in concept2rank.values()):
                hits[t] += 1
            recs[t] += len([c for c, r in concept2rank.items() if r <= t]) / len(ans)
    n = len(pred_lines)
    return {t: hits[t] / n for t in thresholds}, {t: recs[t] / n for t in thresholds}


# ---- kernel against reference ------------------------------------------------------------

CONCEPTS = ["a", "b", "B", "ab", "é", "e", "Ω", "中文", "😀", "", "z z", "c10", "c9"]
WEIGHTS = [0.0, -0.0, 0.5, 1.0, -1.0, 1e-300, 3.0, math.inf, -math.inf]

weighted_pred = st.lists(st.sampled_from(CONCEPTS), unique=True, max_size=10).flatmap(
    lambda cs: st.lists(st.sampled_from(WEIGHTS), min_size=len(cs), max_size=len(cs)).map(
        lambda ws: list(zip(cs, ws))))
ranked_pred = st.lists(st.sampled_from(CONCEPTS), unique=True, max_size=10)
gold = st.lists(st.sampled_from(CONCEPTS), min_size=1, max_size=6)
# predictions that may name a concept more than once (it counts at its last place)
repeating_weighted_pred = st.lists(st.tuples(st.sampled_from(CONCEPTS[:5]),
                                             st.sampled_from(WEIGHTS[:5])), max_size=10)
repeating_ranked_pred = st.lists(st.sampled_from(CONCEPTS[:5]), max_size=10)
qid = st.one_of(st.integers(0, 50), st.text(max_size=3))
KS = [None, 1, 2, 3, 5, 10, 11]


@settings(max_examples=examples(125), deadline=None)
@given(st.one_of(st.dictionaries(qid, st.tuples(weighted_pred, gold), min_size=1, max_size=8),
                 st.dictionaries(qid, st.tuples(ranked_pred, gold), min_size=1, max_size=8),
                 st.dictionaries(qid, st.tuples(repeating_weighted_pred, gold), min_size=1,
                                 max_size=6),
                 st.dictionaries(qid, st.tuples(repeating_ranked_pred, gold), min_size=1,
                                 max_size=6)),
       st.booleans())
def test_kernel_matches_reference(data, drfact):
    pred = {q: p for q, (p, _) in data.items()}
    golds = {q: g for q, (_, g) in data.items()}
    measures = [m if k is None else f"{m}@{k}" for k in KS for m in ("hit", "rec")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DrFactWarning)
        got = evaluate_concepts(pred, golds, measures, drfact=drfact)
        per = evaluate_concepts(pred, golds, measures, per_question=True, drfact=drfact)
    for k in KS:
        name = "" if k is None else f"@{k}"
        assert got["hit" + name] == ref.mean_hit_at_k(pred, golds, k, drfact=drfact)
        assert got["rec" + name] == ref.mean_recall_at_k(pred, golds, k, drfact=drfact)
        for q in pred:
            assert per[q]["hit" + name] == ref.hit_at_k(pred[q], golds[q], k, drfact=drfact)
            assert per[q]["rec" + name] == ref.recall_at_k(pred[q], golds[q], k, drfact=drfact)


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(st.tuples(st.one_of(weighted_pred, repeating_weighted_pred), gold), min_size=1,
                max_size=8))
def test_drfact_mode_matches_the_script_logic(rows):
    lines = [{"qid": f"q{i}", "pairs": p} for i, (p, _) in enumerate(rows)]
    truth = {f"q{i}": g for i, (_, g) in enumerate(rows)}
    ts = list(range(1, 12))
    want_hit, want_rec = script_twin(lines, truth, ts)
    pred = {ln["qid"]: ln["pairs"] for ln in lines}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DrFactWarning)
        got = evaluate_concepts(pred, truth, [f"{m}@{t}" for t in ts for m in ("hit", "rec")],
                                drfact=True)
    for t in ts:
        assert got[f"hit@{t}"] == want_hit[t]
        assert got[f"rec@{t}"] == want_rec[t]


def test_encoded_input_in_other_question_order():
    pred, gold = encode_concepts(PRED, GOLD)
    assert pred.vocabulary == sorted(pred.vocabulary) and pred.vocabulary is gold.vocabulary
    assert pred.concepts(1) == [("water", 0.7), ("ice", 0.7), ("steam", 0.2)]
    assert evaluate_concepts(pred, gold, ["hit@1", "rec@3"]) == evaluate_concepts(
        PRED, GOLD, ["hit@1", "rec@3"])
    assert "3 questions" in repr(pred)


# ---- bad input ---------------------------------------------------------------------------

def test_errors_name_the_question():
    with pytest.raises(ValueError, match=r"question 'q3' has no gold concepts"):
        hit_at_k(PRED, {"q1": ["sun"], "q2": ["ice"], "q3": []}, k=1)
    with pytest.raises(ValueError, match=r"question 'q3' of the predictions has no gold"):
        hit_at_k(PRED, {"q1": ["sun"], "q2": ["ice"]}, k=1)
    with pytest.raises(ValueError, match=r"question 'q2': concept 'ice' is predicted twice"):
        hit_at_k({"q1": ["a"], "q2": ["ice", "b", "ice"]}, {"q1": ["a"], "q2": ["b"]}, k=1,
                 strict=True)
    with pytest.raises(ValueError, match=r"question 'q1': the weight of 'b' is NaN"):
        hit_at_k({"q1": [("a", 1.0), ("b", math.nan)]}, {"q1": ["a"]}, k=1)
    with pytest.raises(TypeError, match=r"question 'q1': the weight of 'a' is '1'"):
        hit_at_k({"q1": [("a", "1")]}, {"q1": ["a"]}, k=1)
    with pytest.raises(TypeError, match=r"question 'q2': predictions mix ranked lists"):
        hit_at_k({"q1": [("a", 1.0)], "q2": ["a"]}, {"q1": ["a"], "q2": ["a"]}, k=1)
    with pytest.raises(TypeError, match=r"question 'q1': expected concepts or \(concept, "
                                        r"weight\) pairs, not a mix"):
        hit_at_k({"q1": ["a", ("b", 1.0)]}, {"q1": ["a"]}, k=1)
    with pytest.raises(TypeError, match=r"question 'q1': gold concept 3 is a int"):
        hit_at_k({"q1": ["a"]}, {"q1": ["a", 3]}, k=1)
    with pytest.raises(TypeError, match="a prediction is a list"):
        hit_at_k({"q1": "a b"}, {"q1": ["a"]}, k=1)
    with pytest.raises(ValueError, match="no questions"):
        hit_at_k({}, {"q1": ["a"]}, k=1, strict=True)
    with pytest.raises(ValueError, match="k must be at least 1"):
        hit_at_k(PRED, GOLD, k=0)
    with pytest.raises(TypeError, match="k must be an int"):
        hit_at_k(PRED, GOLD, k=2.0)
    with pytest.raises(ValueError, match="measure 'mrr@3'"):
        evaluate_concepts(PRED, GOLD, ["mrr@3"])


def test_encoded_input_is_checked():
    pred, gold = encode_concepts(PRED, GOLD)
    bad_ids = pred.ids.copy()
    bad_ids[5] = len(pred.vocabulary)
    with pytest.raises(ValueError, match=r"question 'q2': concept id \d+ in the predictions "
                                         r"is not in the vocabulary"):
        hit_at_k(ConceptLists(pred.question_ids, pred.offsets, bad_ids, pred.weights,
                              pred.vocabulary), gold, k=1)
    w = pred.weights.copy()
    w[7] = np.nan
    with pytest.raises(ValueError, match=r"question 'q3': the weight of 'rock' is NaN"):
        hit_at_k(ConceptLists(pred.question_ids, pred.offsets, pred.ids, w, pred.vocabulary),
                 gold, k=1)
    with pytest.raises(ValueError, match="offsets must rise"):
        hit_at_k(ConceptLists(pred.question_ids, pred.offsets[:-1], pred.ids, pred.weights,
                              pred.vocabulary), gold, k=1)
    with pytest.raises(TypeError, match="offsets must be a 1-d int64"):
        hit_at_k(ConceptLists(pred.question_ids, pred.offsets, pred.ids.astype(np.int64),
                              pred.weights, pred.vocabulary), gold, k=1)
    other, _ = encode_concepts({"q1": ["zzz"]}, {"q1": ["zzz"]})
    with pytest.raises(ValueError, match="different vocabularies"):
        hit_at_k(other, gold, k=1)
    with pytest.raises(TypeError):
        hit_at_k(pred, GOLD, k=1)
    dup = ConceptLists(["q1", "q1"], pred.offsets[:3], pred.ids[:pred.offsets[2]],
                       pred.weights[:pred.offsets[2]], pred.vocabulary)
    with pytest.raises(ValueError, match="question 'q1' appears twice in the predictions"):
        hit_at_k(dup, gold, k=1, per_question=True)
    gold_dup = ConceptLists(["q2", "q2"], gold.offsets[:3], gold.ids[:gold.offsets[2]], None,
                            gold.vocabulary)
    with pytest.raises(ValueError, match="question 'q2' appears twice in the references"):
        hit_at_k(pred, gold_dup, k=1)


# ---- what the DrFact script accepts: scored as it scores it, with a warning ---------------

def test_concept_predicted_twice_counts_at_its_last_place():
    # the script's concept2rank keeps a concept's last position; every entry takes a place
    pred, truth = {"q": ["b", "a", "x", "a"]}, {"q": ["a"]}
    with pytest.warns(DrFactWarning, match=r"predictions: 1 question names a concept more "
                                           r"than once \(the first: question 'q', concept "
                                           r"'a'\); each counts at its last place"):
        got = evaluate_concepts(pred, truth, ["hit@3", "hit@4", "rec@3"], drfact=False)
    assert got == {"hit@3": 0.0, "hit@4": 1.0, "rec@3": 0.0}
    lines = [{"qid": "q", "pairs": [(c, 0.0) for c in pred["q"]]}]
    want_hit, want_rec = script_twin(lines, truth, [2, 3])
    with pytest.warns(DrFactWarning):
        assert evaluate_concepts(pred, truth, ["hit@2", "hit@3", "rec@2", "rec@3"],
                                 drfact=True) == {
            "hit@2": want_hit[2], "hit@3": want_hit[3], "rec@2": want_rec[2],
            "rec@3": want_rec[3]} == {"hit@2": 0.0, "hit@3": 1.0, "rec@2": 0.0, "rec@3": 1.0}
    # weighted: the places of the ranking by weight; equal entries keep their list order
    with pytest.warns(DrFactWarning):
        assert evaluate_concepts({"q": [("a", 0.9), ("b", 0.5), ("a", 0.1)]}, truth,
                                 ["hit@2", "hit@3"]) == {"hit@2": 0.0, "hit@3": 1.0}
    with pytest.warns(DrFactWarning):
        assert evaluate_concepts({"q": [("a", 0.5), ("a", 0.5)]}, truth,
                                 ["hit@1", "hit@2"]) == {"hit@1": 0.0, "hit@2": 1.0}
    # one warning for all questions, naming the first
    many = {"q1": ["a"], "q2": ["c", "c"], "q3": ["b", "d", "b", "d"], "q4": ["a", "a"]}
    gold = dict.fromkeys(many, ["b"])
    with pytest.warns(DrFactWarning, match=r"3 questions name a concept .* question 'q2', "
                                           r"concept 'c'") as record:
        assert recall_at_k(many, gold, k=2, per_question=True) == {
            "q1": 0.0, "q2": 0.0, "q3": 0.0, "q4": 0.0}
    assert len(record) == 1 and record[0].filename == __file__
    with pytest.raises(ValueError, match=r"question 'q2': concept 'c' is predicted twice"):
        recall_at_k(many, gold, k=2, strict=True)


def test_repeated_question_line_keeps_the_last(tmp_path):
    # the script reads each file into a dict: the last line wins, at the first line's place
    pred_lines = [("q1", [["x", 0.9], ["a", 0.1]]), ("q2", [["b", 0.5]]),
                  ("q1", [["a", 0.9]]), ("q3", [["c", 0.5], ["b", 0.4]])]
    p, t = write_drfact(tmp_path, pred_lines, {"q1": ["a"], "q2": ["z"], "q3": ["b"]})
    with open(t, "a", encoding="utf-8") as f:   # q2's gold again, now found
        f.write(json.dumps({"_id": "q2", "all_answer_concepts": [{"name": "b"}]}) + "\n")
    with pytest.warns(DrFactWarning) as record:
        pred, gold = read_drfact(p, t)
    assert [str(w.message).split(": ", 1)[1] for w in record] == [
        "1 question is on more than one line (the first: 'q1', lines 1, 3); the last line "
        "of each counts, at the place of its first, as the DrFact evaluation script reads "
        "the file",
        "1 question is on more than one line (the first: 'q2', lines 2, 4); the last line "
        "of each counts, at the place of its first, as the DrFact evaluation script reads "
        "the file"]
    assert pred.question_ids == ["q1", "q2", "q3"]
    assert pred.concepts(0) == [("a", 0.9)]
    script = {}
    for q, pairs in pred_lines:
        script[q] = {"qid": q, "pairs": pairs}
    want_hit, want_rec = script_twin(list(script.values()), {"q1": ["a"], "q2": ["b"],
                                                             "q3": ["b"]}, [1])
    got = evaluate_concepts(pred, gold, ["hit@1", "rec@1"], drfact=True)
    assert got == {"hit@1": want_hit[1], "rec@1": want_rec[1]} == {"hit@1": 1.0, "rec@1": 1.0}
    assert evaluate_concepts(pred, gold, ["hit@1"], drfact=True, per_question=True) == {
        "q1": {"hit@1": 1.0}, "q2": {"hit@1": 1.0}, "q3": {"hit@1": 1.0}}
    with pytest.raises(DrFactFormatError, match=r"pred.jsonl, line 3: question 'q1' again "
                                                r"\(first on line 1\)"):
        read_drfact(p, t, strict=True)


def test_empty_prediction_file_gives_zeros(tmp_path, capsys):
    p, t = write_drfact(tmp_path, [], {"q1": ["a"]})
    pred, gold = read_drfact(p, t)
    assert len(pred) == 0
    with pytest.warns(DrFactWarning, match=r"pred.jsonl: no questions; every measure is 0"):
        assert evaluate_concepts(pred, gold, ["hit@1", "rec@10", "rec"]) == {
            "hit@1": 0.0, "rec@10": 0.0, "rec": 0.0}
    with pytest.warns(DrFactWarning):
        assert evaluate_concepts(pred, gold, ["hit@1"], per_question=True) == {}
    with pytest.warns(DrFactWarning, match="predictions: no questions"):
        assert hit_at_k({}, {"q1": ["a"]}, k=1) == 0.0
    with pytest.raises(ValueError, match="no questions in the predictions"):
        evaluate_concepts(pred, gold, ["hit@1"], strict=True)
    # the command line: zeros, and the warning on stderr
    assert cli.main(["opencsr", str(p), str(t), "-k", "1"]) == 0
    out, err = capsys.readouterr()
    assert out == "questions \tall\t0\nhit@1     \tall\t0.0000\nrec@1     \tall\t0.0000\n"
    assert err == (f"qafast opencsr: {p}: no questions; every measure is 0, as the DrFact "
                   "evaluation script prints for an empty prediction file\n")
    assert cli.main(["opencsr", str(p), str(t), "--strict"]) == 2
    assert "no questions in the predictions" in capsys.readouterr().err


def test_cli_strict_and_warnings(tmp_path, capsys):
    pred_lines = [("q1", [["a", 0.9], ["a", 0.1]]), ("q1", [["b", 0.5], ["a", 0.4],
                                                            ["b", 0.1]])]
    p, t = write_drfact(tmp_path, pred_lines, {"q1": ["a"]})
    assert cli.main(["opencsr", str(p), str(t), "-k", "1", "-q", "--drfact"]) == 0
    out, err = capsys.readouterr()
    assert "hit@1     \tq1\t1.0000\n" in out and "rec@1     \tall\t1.0000\n" in out
    assert err.count("qafast opencsr: ") == 2
    assert "'q1', lines 1, 2" in err and "concept 'b'" in err
    assert cli.main(["opencsr", str(p), str(t), "--strict"]) == 2
    assert "line 2: question 'q1' again" in capsys.readouterr().err
    p.write_text(json.dumps({"qid": "q1", "predictions_K": {"100": [["a", 1], ["a", 0]]}}))
    assert cli.main(["opencsr", str(p), str(t), "--strict"]) == 2
    assert "concept 'a' is predicted twice" in capsys.readouterr().err


# ---- reader and CLI ----------------------------------------------------------------------

def write_drfact(tmp_path, pred_lines, truth):
    p, t = tmp_path / "pred.jsonl", tmp_path / "truth.jsonl"
    p.write_text("".join(json.dumps({"qid": q, "question": "?", "predictions_K": {"100": pairs}})
                         + "\n" for q, pairs in pred_lines) + "\n", encoding="utf-8")
    t.write_text("".join(json.dumps({"_id": q, "all_answer_concepts": [{"name": g} for g in gs]})
                         + "\n" for q, gs in truth.items()), encoding="utf-8")
    return p, t


def test_read_drfact_and_script_numbers(tmp_path):
    pred_lines = [("q1", [["tree", 0.9], ["leaf", 0.8], ["sun", 0.5], ["moon", 0.1]]),
                  ("q2", [["water", 0.7], ["ice", 0.7], ["steam", 0.2]]),
                  ("q3", [["rock", 2.0], ["sand", 1.0]])]
    p, t = write_drfact(tmp_path, pred_lines, GOLD)
    pred, gold = read_drfact(p, t)
    assert pred.question_ids == ["q1", "q2", "q3"] and gold.question_ids == list(GOLD)
    assert pred.concepts(1) == [("water", 0.7), ("ice", 0.7), ("steam", 0.2)]
    ts = [1, 2, 3]
    want_hit, want_rec = script_twin([{"qid": q, "pairs": x} for q, x in pred_lines], GOLD, ts)
    got = evaluate_concepts(pred, gold, [f"{m}@{k}" for k in ts for m in ("hit", "rec")],
                            drfact=True)
    assert got == {**{f"hit@{k}": want_hit[k] for k in ts},
                   **{f"rec@{k}": want_rec[k] for k in ts}}
    assert evaluate_concepts(pred, gold, ["hit@1"]) == evaluate_concepts(PRED, GOLD, ["hit@1"])


def test_read_drfact_errors(tmp_path):
    p, t = write_drfact(tmp_path, [("q1", [["a", 1.0]]), ("q1", [["b", 1.0]])], {"q1": ["a"]})
    with pytest.raises(DrFactFormatError, match=r"pred.jsonl, line 2: question 'q1' again"):
        read_drfact(p, t, strict=True)
    p.write_text('{"qid": "q1", "predictions_K": {"100": []}}\n')
    t.write_text('{"_id": ["q1"], "all_answer_concepts": []}\n')
    with pytest.raises(DrFactFormatError, match=r"truth.jsonl, line 1: _id \['q1'\] is not"):
        read_drfact(p, t)
    t.write_text('{"_id": "q1", "all_answer_concepts": [{"name": "a"}]}\n')
    p.write_text('{"qid": "q1", "predictions_K": {"100": [["a", "x"]]}}\n')
    with pytest.raises(DrFactFormatError, match=r"line 1: question 'q1': expected "
                                                r"\[concept, score\]"):
        read_drfact(p, t)
    p.write_text('{"qid": "q1", "predictions_K": {"100": [], "50": []}}\n')
    with pytest.raises(DrFactFormatError, match="several pools"):
        read_drfact(p, t)
    assert read_drfact(p, t, pool=50)[0].question_ids == ["q1"]
    p.write_text("{not json\n")
    with pytest.raises(DrFactFormatError, match="line 1: not JSON"):
        read_drfact(p, t)
    p.write_text('{"qid": "q1", "predictions_K": {"100": []}}\n')
    t.write_text('{"_id": "q1"}\n')
    with pytest.raises(DrFactFormatError, match="truth.jsonl, line 1: no 'all_answer_concepts'"):
        read_drfact(p, t)


def test_cli_text_and_json(tmp_path, capsys):
    pred_lines = [("q1", [["tree", 0.9], ["sun", 0.5]]), ("q2", [["ice", 0.7]])]
    p, t = write_drfact(tmp_path, pred_lines, {"q1": ["sun"], "q2": ["snow"]})
    assert cli.main(["opencsr", str(p), str(t), "-k", "1", "-k", "2"]) == 0
    assert capsys.readouterr().out == (
        "questions \tall\t2\nhit@1     \tall\t0.0000\nhit@2     \tall\t0.5000\n"
        "rec@1     \tall\t0.0000\nrec@2     \tall\t0.5000\n")
    assert cli.main(["opencsr", str(p), str(t), "-k", "1", "--drfact", "-q", "-o", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc == {"questions": 2, "all": {"hit@1": 0.5, "rec@1": 0.5},
                   "per_question": {"q1": {"hit@1": 1.0, "rec@1": 1.0},
                                    "q2": {"hit@1": 0.0, "rec@1": 0.0}}}
    t.write_text('{"_id": "q1", "all_answer_concepts": []}\n')
    assert cli.main(["opencsr", str(p), str(t)]) == 2
    assert "no gold concepts" in capsys.readouterr().err


@pytest.mark.parametrize("module", [qafast.concepts, qafast.io.drfact, qafast.reference.concepts],
                         ids=lambda m: m.__name__)
def test_docstring_examples(module):
    flags = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS
    assert doctest.testmod(module, optionflags=flags).failed == 0


@settings(max_examples=examples(150), deadline=None)
@given(st.one_of(st.dictionaries(qid, st.tuples(weighted_pred, gold), min_size=1, max_size=8),
                 st.dictionaries(qid, st.tuples(ranked_pred, gold), min_size=1, max_size=8)),
       st.booleans())
def test_fast_encoding_equals_the_general_path(data, as_dicts):
    # the kernel's one-pass encoding against the per-entry Python path it stands in for
    import qafast.concepts as C

    pred = {q: (dict(p) if as_dicts and p and isinstance(p[0], tuple) else p)
            for q, (p, _) in data.items()}
    golds = {q: g for q, (_, g) in data.items()}
    fast = C._encode_concepts_fast(pred, golds)
    assert fast is not None
    original = C._encode_concepts_fast
    try:
        C._encode_concepts_fast = lambda p, g: None
        slow = C.encode_concepts(pred, golds)
    finally:
        C._encode_concepts_fast = original
    for a, b in zip(fast, slow):
        assert a.question_ids == b.question_ids and a.vocabulary == b.vocabulary
        assert a.offsets.tolist() == b.offsets.tolist() and a.ids.tolist() == b.ids.tolist()
        assert (a.weights is None) == (b.weights is None)
        if a.weights is not None:
            assert a.weights.tobytes() == b.weights.tobytes()


def test_fast_encoding_leaves_other_forms_to_the_general_path():
    import qafast.concepts as C

    golds = {"q1": ["a"], "q2": ["b"]}
    assert C._encode_concepts_fast({"q1": [["a", 1.0]], "q2": []}, golds) is None
    assert C._encode_concepts_fast({"q1": [("a", np.float64(1.0))], "q2": []}, golds) is None
    assert C._encode_concepts_fast({"q1": ["a"], "q2": {"b": 1.0}}, golds) is None
    with pytest.raises(TypeError, match="mix ranked lists and weighted"):
        C.encode_concepts({"q1": ["a"], "q2": {"b": 1.0}}, golds)
    assert C.encode_concepts({"q1": [["a", 1.0]], "q2": []}, golds)[0].weights.tolist() == [1.0]
