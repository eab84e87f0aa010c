"""qafast.quac against QuAC's official scorer.py (its recorded output) and the specification."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import qafast
from qafast.cli import main as cli_main
from qafast.errors import FormatError, InputError, InputTypeError
from qafast.quac_eval import KEYS, KINDS, QuacMetrics, quac
from qafast.reference import quac as ref

DATA = Path(__file__).parent / "data" / "quac"
CASES = ("small", "adversarial1", "adversarial2")


def _paths(case):
    return str(DATA / f"{case}_val.json"), str(DATA / f"{case}_output.jsonl")


@pytest.mark.parametrize("verbose", [False, True])
@pytest.mark.parametrize("case", CASES)
def test_cli_prints_what_the_script_printed(case, verbose, capsys, tmp_path):
    val, out = _paths(case)
    argv = ["quac", "--val_file", val, "--model_output", out, "--o", str(tmp_path / "s.json")]
    assert cli_main(argv + (["--verbose"] if verbose else [])) == 0
    want = (DATA / f"{case}{'_verbose' if verbose else ''}.stdout").read_text(encoding="utf-8")
    assert capsys.readouterr().out == want
    written = json.loads((tmp_path / "s.json").read_text())
    assert list(written) == list(KEYS)
    assert written == quac(val, out)


def test_the_small_case_by_hand():
    val, out = _paths("small")
    assert quac(val, out) == {
        "unfiltered_f1": 94.44444444444444, "f1": 94.44444444444444, "HEQ": 100.0,
        "DHEQ": 100.0, "yes/no": 100.0, "followup": 50.0, "unanswerable_acc": 100.0}


# --------------------------------------------------------------------------------------------
# The kernels against the specification
# --------------------------------------------------------------------------------------------

_WORD = st.sampled_from(["the", "a", "An", "cat", "Cat.", "dog", "é", "東京", "x,y", "1968",
                         "CANNOTANSWER", "cannotanswer", "'s", "", "—", "ﬁ"])
_TEXT = st.lists(_WORD, max_size=5).map(" ".join)
_GOLD = st.one_of(_TEXT, st.just("CANNOTANSWER"))


@st.composite
def _cases(draw):
    data, lines = [], []
    for d in range(draw(st.integers(1, 4))):
        context = draw(_TEXT) + " CANNOTANSWER"
        qas = []
        for t in range(draw(st.integers(0, 4))):
            qid = f"D{d}_q#{draw(st.integers(0, 3))}"      # repeated ids on purpose
            golds = draw(st.lists(_GOLD, max_size=6))
            qas.append({"id": qid, "answers": [{"text": g} for g in golds],
                        "yesno": draw(st.sampled_from("ynx")),
                        "followup": draw(st.sampled_from("ynm"))})
            if draw(st.booleans()) or draw(st.booleans()):
                span = draw(st.one_of(_TEXT, st.just("CANNOTANSWER"),
                                      st.sampled_from(golds or [""])))
                lines.append({"qid": [qid], "best_span_str": [span],
                              "yesno": [draw(st.sampled_from("ynx"))],
                              "followup": [draw(st.sampled_from("ynm"))]})
        data.append({"paragraphs": [{"id": f"D{d}", "context": context, "qas": qas}]})
    return data, lines, draw(st.sampled_from([0.4, 0.0, 0.6, 1.0, math.nan]))


def _same(a, b) -> bool:
    if a is None or b is None:
        return a is None and (b is None or math.isnan(b))
    return float(a).hex() == float(b).hex() or (math.isnan(a) and math.isnan(b))


@settings(max_examples=300, deadline=None)
@given(_cases())
def test_per_question_rows_match_the_specification(case):
    data, lines, min_f1 = case
    spec = ref.evaluate(data, ref.read_predictions("\n".join(map(json.dumps, lines))), min_f1)
    rows = quac(data, lines, min_f1=min_f1, per_question=True)
    assert len(rows["id"]) == len(spec["questions"])
    for i, row in enumerate(spec["questions"]):
        assert _same(row["human_f1"], rows["human_f1"][i])
        assert _same(row["f1"], rows["f1"][i])
        assert row["kind"] == rows["kind"][i]
        assert row["kept"] == bool(rows["kept"][i])
        assert bool(row["heq"]) == bool(rows["heq"][i])
    got = quac(data, lines, min_f1=min_f1)
    for key in KEYS:
        assert _same(spec["metrics"][key], got[key]), key


@settings(max_examples=100, deadline=None)
@given(_cases(), st.lists(st.integers(0, 4), max_size=3))
def test_batches_of_dialogs_give_the_whole_evaluation(case, cuts):
    data, lines, min_f1 = case
    whole = quac(data, lines, min_f1=min_f1)
    m = QuacMetrics(min_f1=min_f1)
    bounds = sorted({0, len(data), *[min(c, len(data)) for c in cuts]})
    for a, b in itertools.pairwise(bounds):
        m.update(data[a:b], lines)
    got = m.compute()
    assert all(_same(whole[k], got[k]) for k in KEYS)
    again = QuacMetrics(min_f1=min_f1)
    again.load_state_dict(json.loads(json.dumps(m.state_dict())))
    got = again.compute()
    assert all(_same(whole[k], got[k]) for k in KEYS) and len(again) == len(m)


# --------------------------------------------------------------------------------------------
# The script's rules
# --------------------------------------------------------------------------------------------

def _dialog(qas, did="D", context="one two three CANNOTANSWER"):
    return [{"paragraphs": [{"id": did, "context": context, "qas": qas}]}]


def _qa(qid, *golds, yesno="x", followup="n"):
    return {"id": qid, "answers": [{"text": g} for g in golds], "yesno": yesno,
            "followup": followup}


def test_cannotanswer_wins_ties_and_no_answer_at_all():
    data = _dialog([_qa("D_q#0", "CANNOTANSWER", "one"), _qa("D_q#1"),
                    _qa("D_q#2", "CANNOTANSWER", "one", "two")])
    rows = quac(data, {"D_q#0": "CANNOTANSWER", "D_q#1": "CANNOTANSWER", "D_q#2": "one"},
                per_question=True)
    assert rows["unanswerable"].tolist() == [True, True, False]
    assert rows["f1"].tolist() == [1.0, 1.0, 0.5]
    assert rows["kind"] == ["Exact match", "Exact match", "Exact match"]


def test_low_agreement_counts_only_unfiltered_and_missing_counts_everywhere():
    data = _dialog([_qa("D_q#0", "one", "two"), _qa("D_q#1", "three")])
    # q0's golds share nothing: human F1 0 < 0.4, left out; q1 has no prediction
    got = quac(data, {"D_q#0": ("one", "x", "n")})
    assert got["unfiltered_f1"] == 25.0       # (0.5 + 0.0) / 2
    assert got["f1"] == 0.0 and got["HEQ"] == 0.0 and got["DHEQ"] == 0.0
    assert math.isnan(got["unanswerable_acc"])


def test_a_line_files_its_questions_under_its_first_dialog(tmp_path):
    data = _dialog([_qa("A_q#0", "one")], did="A") + _dialog([_qa("B_q#0", "two")], did="B")
    out = tmp_path / "out.jsonl"
    out.write_text(json.dumps({"qid": ["A_q#0", "B_q#0"], "best_span_str": ["one", "two"],
                               "yesno": ["x", "x"], "followup": ["n", "n"]}) + "\r\n\n")
    rows = quac(data, str(out), per_question=True)
    assert rows["kind"] == ["Exact match", "NO ANSWER"]


def test_compensated_sum_rule_is_the_running_pythons():
    # five golds whose leave-one-out values add to different last bits plainly (Python 3.11)
    # and compensated (3.12 on): the running Python's sum decides, as it does for the script
    import qafast.quac_eval as qq

    golds = ["six one", "three seven two", "four seven five six", "six five one three two",
             "three four"]
    data = _dialog([_qa("D_q#0", *golds)])
    got = quac(data, {"D_q#0": "five three seven"}, per_question=True)["f1"][0]
    assert got.hex() == float(ref.model_f1("five three seven", golds)).hex()
    saved = qq._COMPENSATED
    try:
        qq._COMPENSATED = not saved
        other = quac(data, {"D_q#0": "five three seven"}, per_question=True)["f1"][0]
    finally:
        qq._COMPENSATED = saved
    assert got != other


def test_kinds_are_the_reference_names():
    assert KINDS == ref.KINDS and KEYS == ref.KEYS


def test_qafast_quac_is_the_function():
    assert qafast.quac is quac and qafast.QuacMetrics is QuacMetrics


@pytest.mark.parametrize("data, preds, error, words", [
    (_dialog([_qa("D_q#0", "one")]), {"D_q#0": 3}, InputTypeError, "predicted span"),
    ([{"paragraphs": [{"id": "D", "qas": [_qa("D_q#0", "one")]}]}], {"D_q#0": "one"},
     InputError, "'context'"),
    ([{"paragraphs": [{"id": "D", "qas": [{"id": "D_q#0"}]}]}], {}, InputError, "'answers'"),
    (_dialog([{"id": "D_q#0", "answers": [{"text": "one"}]}]), {"D_q#0": "one"}, InputError,
     "'yesno'"),
    (_dialog([_qa("D_q#0", "one")]), [{"qid": [], "best_span_str": [], "yesno": [],
                                        "followup": []}], InputError, "empty"),
    (_dialog([_qa("D_q#0", 5)]), {}, InputTypeError, "\"text\""),
    ({"no data": []}, {}, InputError, "data"),
])
def test_bad_input_names_what_is_wrong(data, preds, error, words):
    with pytest.raises(error, match=words):
        quac(data, preds)


def test_bad_files(tmp_path, capsys):
    val, _ = _paths("small")
    bad = tmp_path / "out.jsonl"
    bad.write_text(json.dumps({"qid": ["C_1_q#0"], "best_span_str": ["x"], "yesno": ["y"],
                               "followup": ["n"]}) + '\n{not json\n')
    with pytest.raises(FormatError, match="line 2"):
        quac(val, str(bad))
    bad.write_text('{"qid": ["C_1_q#0"]}\n')
    with pytest.raises(InputError, match="best_span_str"):
        quac(val, str(bad))
    assert cli_main(["quac", "--val_file", str(bad), "--model_output", str(bad)]) == 2


def test_no_dialog_gives_nan_where_the_script_divides_by_zero():
    got = quac({"data": []}, {})
    assert all(math.isnan(v) for v in got.values())


def test_streaming_merges_and_refuses_other_thresholds():
    data = _dialog([_qa("D_q#0", "one two")])
    a, b = QuacMetrics(), QuacMetrics()
    a.update(data, {"D_q#0": "one"})
    b.update(_dialog([_qa("E_q#0", "two")], did="E"), {"E_q#0": "two"})
    assert a.merge(b).compute() == quac(data + _dialog([_qa("E_q#0", "two")], did="E"),
                                        {"D_q#0": "one", "E_q#0": "two"})
    with pytest.raises(InputError):
        QuacMetrics(min_f1=0.5).merge(QuacMetrics())
    with pytest.raises(InputError):
        QuacMetrics().compute()
    assert np.isfinite(a.compute()["f1"]) and len(a) == 2


def _state():
    m = QuacMetrics()
    m.update(_dialog([_qa("D_q#0", "one two"), _qa("D_q#1", "three")]),
             {"D_q#0": "one", "D_q#1": "CANNOTANSWER"})
    return m


def test_state_round_trips_through_torch_save(tmp_path):
    torch = pytest.importorskip("torch")
    m = _state()
    torch.save(m.state_dict(), tmp_path / "s.pt")
    again = QuacMetrics()
    again.load_state_dict(torch.load(tmp_path / "s.pt", weights_only=True))
    assert again.compute() == m.compute() and len(again) == 2
    again.update(_dialog([_qa("E_q#0", "two")], did="E"), {"E_q#0": "two"})
    assert len(again) == 3
    empty = QuacMetrics()
    empty.load_state_dict(QuacMetrics().state_dict())
    assert len(empty) == 0


@pytest.mark.parametrize("change, words", [
    ({"format": "qafast.CoqaMetrics"}, "not a QuacMetrics state"),
    ({"version": 2}, "version 2"),
    ({"min_f1": 0.5}, "min_f1 is 0.5"),
    ({"ids": ["D_q#0", 3]}, "ids must be a list of str"),
    ({"f1": [0.5]}, "f1 must be a list of 2 numbers"),
    ({"f1": [0.5, 2.0]}, r"f1 values must be in \[0, 1\]"),
    ({"yesno": [1, 0]}, "yesno must be a list of 2 bools"),
    ({"dialog": [0, 1]}, "positions in its dialogs"),
    ({"kind": [0, 9]}, "kind values"),
    ({"flags": [0, 8]}, "flags must be in"),
])
def test_a_bad_state_is_refused_and_the_state_kept(change, words):
    m = _state()
    before = m.compute()
    with pytest.raises(InputError, match=words):
        m.load_state_dict({**m.state_dict(), **change})
    assert m.compute() == before


def test_a_state_missing_a_field_names_it():
    state = _state().state_dict()
    del state["kind"]
    with pytest.raises(InputError, match="lacks kind"):
        QuacMetrics().load_state_dict(state)


def _neumaier(values) -> float:
    """Python's sum of floats from 3.12 on (compensated), written out; checked against
    Python 3.12's and 3.13's sum on 200,000 random lists when this test was written."""
    total = c = 0.0
    for x in values:
        t = total + x
        c += (total - t) + x if abs(total) >= abs(x) else (x - t) + total
        total = t
    return total + c if c and math.isfinite(c) else total


@settings(max_examples=200, deadline=None)
@given(st.lists(_TEXT, min_size=2, max_size=9), _TEXT)
def test_the_compensated_sum_of_python_3_12(golds, span):
    import qafast.quac_eval as qq

    golds = [g for g in golds if g != "CANNOTANSWER"] or ["x"]
    data = _dialog([_qa("D_q#0", *golds)])
    saved = qq._COMPENSATED
    qq._COMPENSATED = True
    try:
        got = quac(data, {"D_q#0": span}, per_question=True)["f1"][0]
    finally:
        qq._COMPENSATED = saved
    if len(golds) == 1:
        want = float(ref.score(span, golds[0]))
    else:
        values = [ref._best(span, golds[:i] + golds[i + 1:]) for i in range(len(golds))]
        want = 1.0 * _neumaier(values) / len(golds)
    assert got.hex() == float(want).hex()
