"""Factoid QA (seed 000) and BioASQ Phase B: the seed's example, the official tool's rules,
the kernels against qafast.reference.factoid, and bad input."""

import io
import json
import subprocess
import sys
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qafast import factoid
from qafast.cli import main
from qafast.factoid import evaluate_bioasq, evaluate_factoid
from qafast.io.bioasq import BioasqFormatError, BioasqWarning, read_bioasq
from qafast.reference import factoid as ref
from _examples import examples

SEED_PREDICTED = [["cane", "z", "z", "z", "z"], ["z", "z", "z", "z", "z"],
                  ["z", "z", "cipolla", "z", "z"], ["z", "melanzane", "z", "z", "z"],
                  ["birra", "z", "z", "z", "z"], ["z", "z", "z", "calippo", "z"]]
SEED_TARGET = ["cane", "gatto", "cipolla", "melanzane", "birra", "calippo"]
SEED_RESULT = {"strict_accuracy": 0.3333333333333333, "lenient_accuracy": 0.8333333333333334,
               "mean_reciprocal_rank": 0.5138888888888888}


def seed_evaluate_factoid(predicted, target):
    """Seed 000's function, as written there."""
    c_1 = 0
    c_5 = 0
    rank_sum = 0
    for i, elem in enumerate(target):
        if predicted[i][0] == target[i]:
            c_1 += 1
        if target[i] in predicted[i]:
            c_5 += 1
        try:
            pos = predicted[i].index(target[i])
            rank_sum += 1 / (pos + 1)
        except ValueError:
            pass
    return {"strict_accuracy": c_1 / len(target), "lenient_accuracy": c_5 / len(target),
            "mean_reciprocal_rank": rank_sum / len(target)}


def test_seed_000_worked_example_exactly():
    assert evaluate_factoid(SEED_PREDICTED, SEED_TARGET) == SEED_RESULT
    assert ref.evaluate_factoid(SEED_PREDICTED, SEED_TARGET) == SEED_RESULT
    assert seed_evaluate_factoid(SEED_PREDICTED, SEED_TARGET) == SEED_RESULT
    # both normalizers, synonyms given as lists, tuples and k=None agree on the seed
    syn = [[t] for t in SEED_TARGET]
    assert evaluate_factoid(SEED_PREDICTED, syn, normalizer="bioasq", k=None) == SEED_RESULT
    assert evaluate_factoid([tuple(p) for p in SEED_PREDICTED], tuple(SEED_TARGET)) == SEED_RESULT


def test_seed_accuracy_cell():
    # the seed's accuracy cell prints 0.3333333333333333 1.0 although the function says
    # 0.8333333333333334: "gatto" is in no list, so 5/6 is right and the cell's 1.0 was stale
    r = evaluate_factoid(SEED_PREDICTED, SEED_TARGET)
    assert r["lenient_accuracy"] == 5 / 6


def test_integer_ids_give_the_same_numbers():
    vocab = {s: i for i, s in enumerate(sorted({*SEED_TARGET, "z"}))}
    pred = np.array([[vocab[s] for s in p] for p in SEED_PREDICTED])
    gold = np.array([vocab[s] for s in SEED_TARGET])
    assert evaluate_factoid(pred, gold) == SEED_RESULT
    assert evaluate_factoid(pred.astype(np.int64), gold[:, None].astype(np.uint16)) == SEED_RESULT


def test_synonyms_cut_and_normalizer():
    pred = [["X", "b", "c", "d", "e", "a"]]
    assert evaluate_factoid(pred, [["a", "zz"]]) == {
        "strict_accuracy": 0.0, "lenient_accuracy": 0.0, "mean_reciprocal_rank": 0.0}
    assert evaluate_factoid(pred, [["a", "zz"]], k=None)["mean_reciprocal_rank"] == 1 / 6
    assert evaluate_factoid(pred, ["x"])["strict_accuracy"] == 0.0
    assert evaluate_factoid(pred, ["x"], normalizer="bioasq")["strict_accuracy"] == 1.0
    # an empty answer list scores 0 (BioASQ), it is no error
    assert evaluate_factoid([[]], ["a"])["lenient_accuracy"] == 0.0


def test_per_question():
    r = evaluate_factoid(SEED_PREDICTED, SEED_TARGET, per_question=True)
    assert r["per_question"].tolist()[2] == [0.0, 1.0, 1 / 3]
    assert r["per_question"][:, 2].sum() / 6 == r["mean_reciprocal_rank"]


@pytest.mark.parametrize("predicted, target, exc, words", [
    ([["a"]], [], ValueError, "1 questions but target has 0"),
    ([], [], ValueError, "no questions"),
    ([["a"], ["b"]], [[]] * 2, ValueError, "question 0: target is an empty list"),
    ([["a", 3]], ["a"], TypeError, "question 0: predicted holds 3"),
    ([["a"], "abc"], ["a", "b"], TypeError, "question 1: predicted is a str"),
    ([["a"]], [None], TypeError, "question 0: target is a NoneType"),
    ([["a"]], [["a", b"x"]], TypeError, "question 0: target holds b'x'"),
    ("abc", ["a"], TypeError, "predicted must be a sequence"),
    (np.array([[1, 2]]), np.array([[-1, -1]]), ValueError, "question 0: target has no gold"),
    (np.array([[1, 2]]), ["a"], TypeError, "target must be an integer array"),
])
def test_bad_input_names_the_question(predicted, target, exc, words):
    with pytest.raises(exc, match=words.replace("(", r"\(")):
        evaluate_factoid(predicted, target)


@pytest.mark.parametrize("option", [{"k": 0}, {"k": 2.5}, {"k": True}, {"normalizer": "squad"}])
def test_bad_options(option):
    with pytest.raises(ValueError, match="parameter"):
        evaluate_factoid(SEED_PREDICTED, SEED_TARGET, **option)


WORDS = ["a", "A", "b", "é", "É", "ß", "SS", "中文", "😀", "", " a", "İ", "i"]


@st.composite
def factoid_cases(draw):
    n = draw(st.integers(1, 6))
    predicted = [draw(st.lists(st.sampled_from(WORDS), max_size=7)) for _ in range(n)]
    target = [draw(st.one_of(st.sampled_from(WORDS),
                             st.lists(st.sampled_from(WORDS), min_size=1, max_size=3)))
              for _ in range(n)]
    return predicted, target


@settings(max_examples=examples(150), deadline=None)
@given(factoid_cases(), st.sampled_from([None, 1, 2, 5]), st.sampled_from(["none", "bioasq"]))
def test_kernel_matches_reference(case, k, normalizer):
    predicted, target = case
    got = evaluate_factoid(predicted, target, k=k, normalizer=normalizer)
    assert got == ref.evaluate_factoid(predicted, target, k=k, normalizer=normalizer)
    if k == 5 and normalizer == "none" and all(isinstance(t, str) for t in target) and \
            all(len(p) == 5 for p in predicted):
        assert got == seed_evaluate_factoid(predicted, target)


# ---------------------------------------------------------------------------------------------
# BioASQ

GOLD = {"questions": [
    {"id": "f1", "type": "factoid", "exact_answer": [["EGFR", "erbB1"]]},
    {"id": "f2", "type": "factoid", "exact_answer": ["IL-6", "interleukin 6"]},
    {"id": "f3", "type": "factoid", "exact_answer": [["x"]]},
    {"id": "f4", "type": "factoid", "exact_answer": [["never answered"]]},
    {"id": "l1", "type": "list", "exact_answer": [["a"], ["b", "bee"], ["c"]]},
    {"id": "l2", "type": "list", "exact_answer": [["p", "q"], ["q", "r"]]},
    {"id": "l3", "type": "list", "exact_answer": [["m"]]},
    {"id": "y1", "type": "yesno", "exact_answer": "yes"},
    {"id": "y2", "type": "yesno", "exact_answer": "no"},
    {"id": "y3", "type": "yesno", "exact_answer": "no"},
    {"id": "s1", "type": "summary", "ideal_answer": "..."},
]}
SUB = {"questions": [
    {"id": "f1", "exact_answer": [["her2"], ["ERBB1", "egfr"], ["egfr"]]},
    {"id": "f2", "exact_answer": [["Interleukin 6"]]},
    {"id": "f3", "exact_answer": []},
    {"id": "l1", "exact_answer": [["A"], ["a"], ["Bee"], ["d"]]},
    {"id": "l2", "exact_answer": [["q"]]},
    {"id": "l3", "exact_answer": []},
    {"id": "y1", "exact_answer": "Yes"},
    {"id": "y2", "exact_answer": "not known"},
    {"id": "y3", "exact_answer": ""},
    {"id": "extra", "exact_answer": "yes"},
]}


def test_bioasq_official_rules():
    r = evaluate_bioasq(GOLD, SUB)
    # factoid: f4 unanswered is skipped; f1 rank 2 ("erbb1" is the first synonym only),
    # f2 rank 1, f3 empty -> 0
    assert r["factoid_strict_accuracy"] == 1 / 3
    assert r["factoid_lenient_accuracy"] == 2 / 3
    assert r["factoid_mrr"] == (0.5 + 1.0) / 3
    # list l1: a TP, a (again) FP, bee TP, d FP, c FN -> P 2/4, R 2/3. l2: q takes group 1;
    # the tool's false-negative pass then lets group 2 use the same answer "q" again (it
    # consumes answers afresh), so no FN -> P 1, R 1. l3: no answers -> 0, 0, 0
    p = [2 / 4, 1.0, 0.0]
    rr = [2 / 3, 1.0, 0.0]
    f = [2 * a * b / (a + b) if a and b else 0.0 for a, b in zip(p, rr)]
    assert r["list_precision"] == (p[0] + p[1] + p[2]) / 3
    assert r["list_recall"] == (rr[0] + rr[1] + rr[2]) / 3
    assert r["list_f1"] == (f[0] + f[1] + f[2]) / 3
    # yes/no: y1 right, y2 "not known" reads "no": right, y3 empty: wrong
    assert r["yesno_accuracy"] == 2 / 3
    assert r["yesno_f1_yes"] == 2 / (2 + 1)
    assert r["yesno_f1_no"] == 2 / (2 + 1)
    assert r["yesno_macro_f1"] == 2 / 3
    assert list(r) == list(factoid.BIOASQ_MEASURES)


def test_bioasq_list_against_reference():
    for g, s in [([["a"], ["b", "bee"], ["c"]], ["A", "a", "Bee", "d"]),
                 ([["p", "q"], ["q", "r"]], ["q"]), ([["p", "q"], ["q", "r"]], ["q", "q"]),
                 ([["m"]], [])]:
        gold = {"questions": [{"id": "l", "type": "list", "exact_answer": g}]}
        sub = {"questions": [{"id": "l", "exact_answer": [[x] for x in s]}]}
        r = evaluate_bioasq(gold, sub)
        assert (r["list_precision"], r["list_recall"], r["list_f1"]) == ref.list_prf(s, g)


@st.composite
def list_cases(draw):
    groups = draw(st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
                           min_size=1, max_size=4))
    answers = draw(st.lists(st.sampled_from(WORDS), max_size=6))
    return groups, answers


@settings(max_examples=examples(150), deadline=None)
@given(st.lists(list_cases(), min_size=1, max_size=4), st.sampled_from(["none", "bioasq"]))
def test_list_kernel_matches_reference(cases, normalizer):
    gold = {"questions": [{"id": f"q{i}", "type": "list", "exact_answer": g}
                          for i, (g, _) in enumerate(cases)]}
    sub = {"questions": [{"id": f"q{i}", "exact_answer": [[a, "ignored"] for a in s]}
                         for i, (_, s) in enumerate(cases)]}
    r = evaluate_bioasq(gold, sub, normalizer=normalizer, per_question=True)
    for i, (g, s) in enumerate(cases):
        row = r["per_question"][f"q{i}"]
        assert (row["precision"], row["recall"], row["f1"]) == ref.list_prf(s, g, normalizer)


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["yes", "no"]),
                          st.sampled_from(["yes", "no", "Yes", "maybe", "", None])),
                min_size=1, max_size=8))
def test_yesno_matches_reference(pairs):
    gold = {"questions": [{"id": f"q{i}", "type": "yesno", "exact_answer": g}
                          for i, (g, _) in enumerate(pairs)]}
    sub = {"questions": [{"id": f"q{i}", "exact_answer": a} for i, (_, a) in enumerate(pairs)]}
    r = evaluate_bioasq(gold, sub)
    e = ref.yesno_measures([g for g, _ in pairs], [ref.parse_yesno(a) for _, a in pairs])
    assert (r["yesno_accuracy"], r["yesno_f1_yes"], r["yesno_f1_no"], r["yesno_macro_f1"]) == \
        (e["accuracy"], e["f1_yes"], e["f1_no"], e["macro_f1"])


def test_bioasq_no_questions_of_a_type_score_zero():
    r = evaluate_bioasq({"questions": []}, {"questions": []})
    assert set(r.values()) == {0.0}


@pytest.mark.parametrize("doc, words", [
    ('{"questions": {}}', "expected"),
    ('[1]', "expected"),
    ('{"questions": [{"type": "list"}]}', "question 0: has no string 'id'"),
    ('{"questions": [{"id": "a"}, {"id": "a"}]}', "question 'a': appears twice"),
    ('{"questions": [', "not JSON"),
])
def test_bioasq_reader_errors(doc, words):
    with pytest.raises(BioasqFormatError, match=words):
        read_bioasq(io.StringIO(doc))


def test_bioasq_bad_gold_answer_names_the_question():
    # where the official tool stops (a null pointer or a parse error), qafast raises
    for qtype, value in [("list", None), ("factoid", 3), ("list", [["a"], [1]]),
                         ("yesno", ["yes"]), ("yesno", None)]:
        gold = {"questions": [{"id": "q7", "type": qtype, "exact_answer": value}]}
        with pytest.raises(BioasqFormatError, match="question 'q7'"):
            evaluate_bioasq(gold, {"questions": [{"id": "q7", "exact_answer": [["a"]]}]})


# Odd input the official tool reads in its own way. Each expected line below is what the
# tool (Evaluation-Measures at commit 8c8e689, built from source, "-phaseB -e 5") printed
# for the same two documents.

def _f(qid, value):
    return {"id": qid, "type": "factoid", "exact_answer": value}


def _l(qid, value):
    return {"id": qid, "type": "list", "exact_answer": value}


def _y(qid, value):
    return {"id": qid, "type": "yesno", "exact_answer": value}


def _s(qid, value):
    return {"id": qid, "exact_answer": value}


def _line(gold_questions, sub_questions, warns=None):
    gold, sub = {"questions": gold_questions}, {"questions": sub_questions}
    if warns is None:
        with warnings.catch_warnings():
            warnings.simplefilter("error", BioasqWarning)
            got = evaluate_bioasq(gold, sub)
    else:
        with pytest.warns(BioasqWarning, match=warns):
            got = evaluate_bioasq(gold, sub)
    assert list(got.values()) == list(ref.evaluate_bioasq(gold, sub).values())
    return list(got.values())


def test_bioasq_empty_inner_answer_is_dropped():
    # the answers after [] move up a rank: "a" is first
    assert _line([_f("f", [["a"]])], [_s("f", [[], ["a"]])], "'f'.*dropped") == \
        [0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    # and a dropped [] is no false positive
    assert _line([_l("l", [["a"], ["b"]])], [_s("l", [["a"], [], ["c"], []])],
                 "'l'.*dropped") == [0.0, 0.0, 0.0, 0.0, 0.5, 0.5, 0.5, 0.0, 0.0, 0.0]


def test_bioasq_bare_string_submission_scores_as_no_answer():
    assert _line([_f("f", [["a"]]), _f("g", [["b"]])], [_s("f", "a"), _s("g", [["b"]])],
                 r"submission|<dict>: 1 question \('f'\).*single string") == \
        [0.0, 0.5, 0.5, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    assert _line([_l("l", [["a"]]), _l("m", [["b"]])], [_s("l", "a"), _s("m", [["b"]])],
                 "'l'.*single string") == [0.0, 0.0, 0.0, 0.0, 0.5, 0.5, 0.5, 0.0, 0.0, 0.0]
    # an empty string is plainly no answer: no warning
    assert _line([_f("f", [["a"]])], [_s("f", "")]) == [0.0] * 10


def test_bioasq_bare_string_gold_never_matches():
    assert _line([_f("f", "a"), _f("g", [["b"]])], [_s("f", [["a"]]), _s("g", [["b"]])],
                 "'f'.*golden factoid or list answer is a single string") == \
        [0.0, 0.5, 0.5, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    assert _line([_l("l", "a"), _l("m", [["b"]])], [_s("l", [["a"]]), _s("m", [["b"]])],
                 "'l'.*single string") == [0.0, 0.0, 0.0, 0.0, 0.5, 0.5, 0.5, 0.0, 0.0, 0.0]


def test_bioasq_golden_yesno_other_than_yes_or_no():
    neither = "'y'.*neither yes nor no"
    # "maybe" reads as neither: an answer that reads as neither ("") is right, in class "no"
    assert _line([_y("y", "maybe"), _y("z", "yes")], [_s("y", ""), _s("z", "yes")],
                 neither) == [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0]
    assert _line([_y("y", "maybe"), _y("z", "yes")], [_s("y", "no"), _s("z", "yes")],
                 neither) == [0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1 / 3, 2 / 3, 0.0]
    # "unknown" holds "no"
    assert _line([_y("y", "maybe"), _y("z", "no")], [_s("y", "unknown"), _s("z", "yes")],
                 neither) == [0.0] * 10
    # golden strings that hold "yes" or "no" are read as such, quietly
    assert _line([_y("y", "Yes."), _y("z", "NO")], [_s("y", "yes"), _s("z", "no")]) == \
        [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0]


def test_bioasq_golden_empty_answer():
    assert _line([_f("f", []), _f("g", [["b"]])], [_s("f", [["a"]]), _s("g", [["b"]])],
                 r"'f'.*golden answer is empty") == \
        [0.0, 0.5, 0.5, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    for answer in ([["a"]], []):
        assert _line([_l("l", []), _l("m", [["b"]])], [_s("l", answer), _s("m", [["b"]])],
                     "'l'.*empty") == [0.0, 0.0, 0.0, 0.0, 0.5, 0.5, 0.5, 0.0, 0.0, 0.0]


def test_bioasq_empty_golden_synonym_group_is_dropped():
    assert _line([_l("l", [["a"], []])], [_s("l", [["a"]])], "'l'.*empty synonym group") == \
        [0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0]
    assert _line([_f("f", [[]])], [_s("f", [["a"]])], "'f'.*empty synonym group") == \
        [0.0] * 10


def test_bioasq_repeated_submission_id_first_counts():
    assert _line([_f("f", [["a"]])], [_s("f", [["b"]]), _s("f", [["a"]])],
                 r"1 question id \('f'\) appears more than once; the first") == [0.0] * 10
    assert _line([_l("l", [["a"], ["b"]])], [_s("l", [["a"]]), _s("l", [["a"], ["b"]])],
                 "first entry") == [0.0, 0.0, 0.0, 0.0, 1.0, 0.5, 2 / 3, 0.0, 0.0, 0.0]
    # the golden file may not repeat an id
    gold = {"questions": [_f("f", [["a"]]), _f("f", [["b"]])]}
    with pytest.raises(BioasqFormatError, match="question 'f': appears twice"):
        evaluate_bioasq(gold, {"questions": [_s("f", [["a"]])]})
    with pytest.raises(ValueError, match="'repeated' parameter"):
        read_bioasq(gold, repeated="last")


def test_bioasq_warnings_name_file_and_count():
    gold = {"questions": [_f(f"q{i}", "x") for i in range(7)]}
    sub = {"questions": [_s(f"q{i}", [["x"]]) for i in range(7)]}
    with pytest.warns(BioasqWarning) as record:
        evaluate_bioasq(gold, sub)
    assert len(record) == 1
    assert str(record[0].message).startswith(
        "<dict>: 7 questions ('q0', 'q1', 'q2', 'q3', 'q4', ...): the golden")
    assert record[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error", BioasqWarning)
        with pytest.raises(BioasqWarning):
            evaluate_bioasq(gold, sub)


def test_bioasq_yesno_answer_not_a_string():
    assert _line([_y("y", "yes")], [_s("y", ["yes"])], "'y'.*not a string") == \
        [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    # a question without exact_answer is unanswered, quietly (the tool scores it 0 too)
    assert _line([_y("y", "yes"), _f("f", [["a"]])], [{"id": "y"}, {"id": "f"}]) == [0.0] * 10


_W = ["a", "A", "b", "B", "c", "", "yes", "No", "É", "é"]
_YN = ["yes", "no", "Yes", "NO", "maybe", "", "not known", "unknown", "none"]


@st.composite
def bioasq_documents(draw):
    """Golden and submitted documents with every odd form the tool reads."""
    answer_list = st.lists(st.lists(st.sampled_from(_W), max_size=2), max_size=6)
    gold_groups = st.one_of(st.sampled_from(_W), st.just([]),
                            st.lists(st.lists(st.sampled_from(_W), max_size=3), min_size=1,
                                     max_size=4),
                            st.lists(st.sampled_from(_W), min_size=1, max_size=3))
    submitted = st.one_of(answer_list, st.sampled_from(_W), st.none(),
                          st.lists(st.one_of(st.sampled_from(_W), st.none()), max_size=4))
    gq, sq = [], []
    for i in range(draw(st.integers(1, 8))):
        qtype = draw(st.sampled_from(["factoid", "list", "yesno", "summary"]))
        gold = draw(st.sampled_from(_YN) if qtype == "yesno" else gold_groups)
        gq.append({"id": f"q{i}", "type": qtype, "exact_answer": gold})
        for _ in range(draw(st.integers(0, 2))):
            value = draw(st.one_of(st.sampled_from(_YN), st.none()) if qtype == "yesno"
                         else submitted)
            sq.append({"id": f"q{i}"} if value is None else {"id": f"q{i}",
                                                              "exact_answer": value})
    return {"questions": gq}, {"questions": draw(st.permutations(sq))}


@settings(max_examples=examples(150), deadline=None)
@given(bioasq_documents(), st.sampled_from([None, 1, 3]), st.sampled_from(["bioasq", "none"]))
def test_bioasq_matches_reference_on_odd_documents(docs, k, normalizer):
    gold, sub = docs
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BioasqWarning)
        got = evaluate_bioasq(gold, sub, k=k, normalizer=normalizer)
    assert got == ref.evaluate_bioasq(gold, sub, k=k, normalizer=normalizer)


def test_bioasq_cli(tmp_path, capsys):
    g = tmp_path / "gold.json"
    s = tmp_path / "sub.json"
    g.write_text(json.dumps(GOLD))
    s.write_text(json.dumps(SUB))
    assert main(["bioasq", str(g), str(s), "-o", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == evaluate_bioasq(GOLD, SUB)
    assert main(["bioasq", str(g), str(s), "-o", "line"]) == 0
    line = capsys.readouterr().out.split()
    assert [float(x) for x in line] == list(evaluate_bioasq(GOLD, SUB).values())
    assert main(["bioasq", str(g), str(s)]) == 0
    assert ["factoid_mrr", "all", "0.5000"] in [ln.split() for ln in
                                                capsys.readouterr().out.splitlines()]
    (tmp_path / "bad.json").write_text("{")
    assert main(["bioasq", str(g), str(tmp_path / "bad.json")]) == 2
    assert "not JSON" in capsys.readouterr().err


def test_bioasq_cli_prints_warnings_on_stderr(tmp_path, capsys):
    g, s = tmp_path / "gold.json", tmp_path / "sub.json"
    g.write_text(json.dumps({"questions": [_f("f", [["a"]]), _y("y", "maybe")]}))
    s.write_text(json.dumps({"questions": [_s("f", [[], ["a"]]), _s("f", "a"), _s("y", "")]}))
    assert main(["bioasq", str(g), str(s), "-o", "line"]) == 0
    out, err = capsys.readouterr()
    assert out.split() == ["1.0", "1.0", "1.0", "1.0", "0.0", "0.0", "0.0", "0.5", "0.0", "1.0"]
    assert err.splitlines() == [
        f"qafast bioasq: {s}: 1 question id ('f') appears more than once; the first entry "
        "of each is scored, as the official BioASQ tool does",
        f"qafast bioasq: {g}: 1 question ('y'): the golden yes/no answer reads as neither "
        "yes nor no; only an answer that also reads as neither (such as '') is right, and "
        "the question counts in the 'no' class of the F1s, as in the official BioASQ tool",
        f"qafast bioasq: {s}: 1 question ('f'): an empty answer ([]) among the answers is "
        "dropped, and the answers after it move up a rank, as in the official BioASQ tool"]


def test_bioasq_cli_stdin(tmp_path):
    g = tmp_path / "gold.json"
    g.write_text(json.dumps(GOLD))
    out = subprocess.run([sys.executable, "-m", "qafast.cli", "bioasq", str(g), "-", "-o",
                          "json"], input=json.dumps(SUB), capture_output=True, text=True,
                         check=True).stdout
    assert json.loads(out)["factoid_mrr"] == 0.5


@settings(max_examples=examples(150), deadline=None)
@given(n=st.integers(1, 12), m=st.integers(1, 7), s=st.integers(1, 3),
       k=st.sampled_from([None, 1, 2, 5, 9]), data=st.data())
def test_id_arrays_score_as_the_same_answers_as_strings(n, m, s, k, data):
    pred = np.array(data.draw(st.lists(st.lists(st.integers(-1, 4), min_size=m, max_size=m),
                                       min_size=n, max_size=n)), dtype=np.int32)
    gold = np.array(data.draw(st.lists(st.lists(st.integers(-1, 4), min_size=s, max_size=s)
                                       .filter(lambda g: max(g) >= 0), min_size=n, max_size=n)),
                    dtype=np.int32)
    # a negative id is an empty slot: it matches nothing, like a string no gold holds
    as_text = [[f"a{p}" if p >= 0 else f"empty{j}" for j, p in enumerate(row)]
               for row in pred.tolist()]
    targets = [[f"a{g}" for g in row if g >= 0] for row in gold.tolist()]
    want = evaluate_factoid(as_text, targets, k=k, per_question=True)
    got = evaluate_factoid(pred, gold if s > 1 else gold[:, 0], k=k, per_question=True)
    assert repr(got) == repr(want)
