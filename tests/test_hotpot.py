"""qafast.hotpot: HotpotQA's official evaluation, against its plain-Python specification, the
official script's recorded output, and bad input."""

import ast
import itertools
import json
import math
import types
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import qafast
import qafast.hotpot_eval
from qafast.cli import main as cli_main
from qafast.errors import FormatError, InputError, InputTypeError, QafastError
from qafast.hotpot_eval import hotpot
from qafast.reference import hotpot as spec

DATA = Path(__file__).resolve().parent / "data" / "hotpot"
CASES = ("answers", "missing", "facts")


def bits_equal(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a)
                                                 == math.copysign(1, b))


# --------------------------------------------------------------------------------------------
# The official script's output, recorded on small adversarial files
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("case", CASES)
def test_cli_prints_what_the_script_printed(case, capsys):
    rc = cli_main(["hotpot", str(DATA / f"{case}_pred.json"), str(DATA / f"{case}_gold.json")])
    out = capsys.readouterr().out
    assert rc == 0
    assert out == (DATA / f"{case}_stdout.txt").read_text(encoding="utf-8")


@pytest.mark.parametrize("case", CASES)
def test_means_are_the_scripts_to_the_bit(case):
    printed = (DATA / f"{case}_stdout.txt").read_text(encoding="utf-8").splitlines()[-1]
    want = ast.literal_eval(printed)
    got = hotpot(DATA / f"{case}_gold.json", DATA / f"{case}_pred.json")
    assert list(got) == list(spec.KEYS) == list(want)
    assert all(type(v) is float for v in got.values())
    assert all(bits_equal(got[k], want[k]) for k in want)
    gold = qafast.hotpot_eval.read_json(DATA / f"{case}_gold.json", "gold")
    pred = qafast.hotpot_eval.read_json(DATA / f"{case}_pred.json", "predictions")
    assert spec.evaluate(gold, pred) == want


def test_docstring_example_by_hand():
    gold = [{"_id": "q1", "answer": "yes", "supporting_facts": [["A", 0], ["B", 2]]}]
    # "no" against gold "yes": the yes/no rule; the one fact predicted twice counts once
    got = hotpot(gold, {"answer": {"q1": "No."}, "sp": {"q1": [["A", 0], ["A", 0]]}})
    assert got == {"em": 0.0, "f1": 0.0, "prec": 0.0, "recall": 0.0, "sp_em": 0.0,
                   "sp_f1": 2 * 1.0 * 0.5 / 1.5, "sp_prec": 1.0, "sp_recall": 0.5,
                   "joint_em": 0.0, "joint_f1": 0.0, "joint_prec": 0.0, "joint_recall": 0.0}


# --------------------------------------------------------------------------------------------
# The kernels against the specification
# --------------------------------------------------------------------------------------------

_ALPHABET = st.sampled_from(list("aAbé İß.,!'- \u00a0\t") + ["the ", "an ", "yes", "no",
                                                              "noanswer", "北", "ﬁ", "Σ"])
_TEXT = st.lists(_ALPHABET, max_size=8).map("".join) | st.sampled_from(
    ["yes", "no", "noanswer", "Yes!", "no answer", "", "the", "a yes"])
_SID = st.integers(-2, 3) | st.sampled_from([1.0, 0.0, True, False, "1", 2 ** 63, 2 ** 70,
                                             -(2 ** 63) - 1])
_FACT = st.tuples(st.sampled_from(["A", "a", "", "İ", "北京"]), _SID).map(list)
_ODD_FACT = st.sampled_from([["A"], ["A", 0, 1], "ab", [], ("A", 0), {"A": 0}, [None, None]])
_FACTS = st.lists(_FACT | _ODD_FACT, max_size=6) | st.lists(_FACT, max_size=70)


@st.composite
def _cases(draw):
    n = draw(st.integers(1, 12))
    ids = draw(st.lists(st.sampled_from(["q0", "q1", "q2", "é", "", "q5", "q6", "q7"]),
                        min_size=n, max_size=n))
    gold = [{"_id": q, "answer": draw(_TEXT), "supporting_facts": draw(_FACTS)} for q in ids]
    answers = {q: draw(_TEXT) for q in ids if draw(st.booleans())}
    facts = {q: draw(_FACTS) for q in ids if draw(st.booleans())}
    return gold, {"answer": answers, "sp": facts}


@settings(max_examples=300, deadline=None)
@given(_cases())
def test_per_question_rows_match_the_specification(case):
    gold, pred = case
    rows = hotpot(gold, pred, per_question=True)
    want, _ = spec.per_question(gold, pred)
    assert rows["_id"] == [e["_id"] for e in gold]
    for k in spec.KEYS:
        assert rows[k].dtype == np.float64 and len(rows[k]) == len(gold)
        for i, row in enumerate(want):
            assert bits_equal(float(rows[k][i]), float(row.get(k, math.nan))), (k, i)
    means = hotpot(gold, pred)
    assert means == spec.evaluate(gold, pred)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_TEXT, _TEXT), min_size=1, max_size=20))
def test_answer_kernel_matches_the_specification(pairs):
    gold = [{"_id": f"q{i}", "answer": g, "supporting_facts": []}
            for i, (_, g) in enumerate(pairs)]
    pred = {"answer": {f"q{i}": p for i, (p, _) in enumerate(pairs)}, "sp": {}}
    rows = hotpot(gold, pred, per_question=True)
    for i, (p, g) in enumerate(pairs):
        got = tuple(float(rows[k][i]) for k in ("em", "f1", "prec", "recall"))
        assert got == spec.answer_scores(p, g), (p, g)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_FACTS, _FACTS), min_size=1, max_size=10))
def test_fact_kernel_matches_python_sets(pairs):
    gold = [{"_id": f"q{i}", "supporting_facts": g} for i, (_, g) in enumerate(pairs)]
    pred = {"answer": {}, "sp": {f"q{i}": p for i, (p, _) in enumerate(pairs)}}
    rows = hotpot(gold, pred, per_question=True)
    for i, (p, g) in enumerate(pairs):
        got = tuple(float(rows[k][i]) for k in ("sp_em", "sp_f1", "sp_prec", "sp_recall"))
        assert got == spec.sp_scores(p, g)


def test_yes_no_rule_on_either_side():
    assert spec.answer_scores("yes", "yes sir") == (0.0, 0.0, 0.0, 0.0)
    assert spec.answer_scores("yes sir", "Yes.") == (0.0, 0.0, 0.0, 0.0)
    assert spec.answer_scores("No!", "no") == (1.0, 1.0, 1.0, 1.0)
    assert spec.answer_scores("", "") == (1.0, 0.0, 0.0, 0.0)
    gold = [{"_id": "a", "answer": "noanswer", "supporting_facts": []},
            {"_id": "b", "answer": "the no", "supporting_facts": []}]
    rows = hotpot(gold, {"answer": {"a": "no answer", "b": "no"}, "sp": {}}, per_question=True)
    assert rows["f1"].tolist() == [0.0, 1.0]   # "the no" normalizes to "no"
    assert rows["em"].tolist() == [0.0, 1.0]


def test_sentence_ids_compare_as_python_numbers():
    gold = [{"_id": "q", "answer": "x", "supporting_facts": [["T", 1], ["T", 2]]}]
    for facts, tp in (([["T", 1.0]], 1), ([["T", True]], 1), ([["T", "1"]], 0),
                      ([("T", 1), ["T", 1], ["T", 2]], 2)):
        rows = hotpot(gold, {"answer": {}, "sp": {"q": facts}}, per_question=True)
        assert rows["sp_prec"][0] == (tp / len({tuple(f) for f in facts}))


# --------------------------------------------------------------------------------------------
# Missing predictions, duplicates, forms of input
# --------------------------------------------------------------------------------------------

def test_missing_predictions_count_in_the_number_of_questions():
    gold = [{"_id": "a", "answer": "x", "supporting_facts": [["T", 0]]},
            {"_id": "b"}]                       # never read: nothing predicted for it
    got = hotpot(gold, {"answer": {"a": "x"}, "sp": {"a": [["T", 0]]}})
    assert got == dict.fromkeys(spec.KEYS, 0.5)
    rows = hotpot(gold, {"answer": {"a": "x"}, "sp": {}}, per_question=True)
    assert rows["em"][0] == 1.0 and np.isnan(rows["em"][1])
    assert np.isnan(rows["sp_em"]).all() and np.isnan(rows["joint_em"]).all()


def test_duplicate_gold_ids_count_twice_and_unknown_ids_are_ignored():
    gold = [{"_id": "a", "answer": "x", "supporting_facts": []}] * 2 + [
        {"_id": "b", "answer": "y", "supporting_facts": []}]
    pred = {"answer": {"a": "x", "b": "z", "zz": "x"}, "sp": {"a": [], "b": [], "zz": []}}
    assert hotpot(gold, pred)["em"] == 2 / 3


def test_ids_that_are_not_str_are_missing_as_in_the_script():
    gold = [{"_id": 7, "answer": "x", "supporting_facts": []},
            {"_id": "q", "answer": "x", "supporting_facts": []}]
    pred = {"answer": {"q": "x"}, "sp": {"q": []}}
    assert hotpot(gold, pred)["em"] == 0.5


def test_loaded_objects_of_other_types():
    class Text(str):
        pass

    gold = ({"_id": "q", "answer": Text("Paris"), "supporting_facts": (("T", 0),)},)
    pred = types.MappingProxyType({"answer": types.MappingProxyType({"q": Text("paris")}),
                                   "sp": {"q": [("T", 0)]}})
    assert hotpot(gold, pred) == dict.fromkeys(spec.KEYS, 1.0)


def test_the_keys_are_the_specifications():
    assert qafast.hotpot_eval.KEYS == spec.KEYS


def test_qafast_hotpot_is_the_function():
    gold = [{"_id": "q", "answer": "x", "supporting_facts": []}]
    pred = {"answer": {"q": "x"}, "sp": {"q": []}}
    assert callable(qafast.hotpot)
    assert qafast.hotpot(gold, pred) == hotpot(gold, pred)
    assert qafast.hotpot(gold, pred, per_question=True)["em"].tolist() == [1.0]


# --------------------------------------------------------------------------------------------
# Bad input: a qafast error where the script crashes
# --------------------------------------------------------------------------------------------

_G = [{"_id": "q", "answer": "x", "supporting_facts": [["T", 0]]}]


@pytest.mark.parametrize("gold, pred, error, words", [
    ([], {"answer": {}, "sp": {}}, InputError, "no gold question"),
    (_G, {"answer": {}}, InputError, "'sp'"),
    (_G, {"sp": {}}, InputError, "'answer'"),
    (_G, [], InputTypeError, "JSON object"),
    (_G, {"answer": [], "sp": {}}, InputTypeError, "'answer'"),
    (_G, {"answer": {"q": 5}, "sp": {}}, InputTypeError, "predicted answer"),
    (_G, {"answer": {"q": None}, "sp": {}}, InputTypeError, "predicted answer"),
    ([{"_id": "q", "answer": ["x"]}], {"answer": {"q": "x"}, "sp": {}}, InputTypeError,
     "gold answer"),
    ([{"_id": "q"}], {"answer": {"q": "x"}, "sp": {}}, InputError, "no gold \"answer\""),
    ([{"_id": "q"}], {"answer": {}, "sp": {"q": []}}, InputError, "supporting_facts"),
    ([{"answer": "x"}], {"answer": {}, "sp": {}}, InputError, "_id"),
    ([{"_id": ["q"]}], {"answer": {}, "sp": {}}, InputTypeError, "_id"),
    (["q"], {"answer": {}, "sp": {}}, InputTypeError, "gold entry 0"),
    ({"q": 1}, {"answer": {}, "sp": {}}, InputTypeError, "list of questions"),
    (_G, {"answer": {}, "sp": {"q": [["T", [0]]]}}, InputTypeError, "'q'"),
    (_G, {"answer": {}, "sp": {"q": [7]}}, InputTypeError, "supporting facts"),
    (_G, {"answer": {}, "sp": {"q": None}}, InputTypeError, "supporting facts"),
])
def test_bad_input_names_what_is_wrong(gold, pred, error, words):
    with pytest.raises(error) as info:
        hotpot(gold, pred)
    assert words in str(info.value)
    assert isinstance(info.value, QafastError)


def test_bad_files(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("{\"answer\": ", encoding="utf-8")
    good = DATA / "missing_gold.json"
    with pytest.raises(FormatError, match="bad.json"):
        hotpot(good, bad)
    bad.write_bytes(b"\xff\xfe")
    with pytest.raises(FormatError, match="UTF-8"):
        hotpot(good, bad)
    with pytest.raises(InputTypeError):
        hotpot(b"gold.json", bad)
    with pytest.raises(InputTypeError, match="per_question"):
        hotpot(good, DATA / "missing_pred.json", per_question="yes")
    assert cli_main(["hotpot", str(bad), str(good)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "qafast hotpot: " in captured.err


def test_raw_control_characters_and_line_ends_read_as_the_script_reads_them(tmp_path):
    gold = tmp_path / "gold.json"
    pred = tmp_path / "pred.json"
    gold.write_bytes(b'[{"_id": "q", "answer": "a\tb\r\nc", "supporting_facts": []}]')
    pred.write_bytes(b'{"answer": {"q": "A B C"}, "sp": {"q": []}}')
    assert hotpot(gold, pred)["em"] == 1.0
    gold.write_bytes(b'[{"_id": "q", "answer": "x", "supporting_facts": [["T", NaN]]}]')
    pred.write_bytes(b'{"answer": {}, "sp": {"q": [["T", NaN]]}}')
    assert hotpot(gold, pred)["sp_em"] == 0.0   # each NaN its own float, as with ujson


def test_long_answers_are_scored_over_interned_ids_with_the_same_numbers():
    # more token pairs than the walk compares one by one: the general scoring takes them
    words = [f"w{i % 37}" for i in range(150)]
    long_a = " ".join(words)
    long_b = " ".join(reversed(words[:120])) + " the yes"
    pairs = [(long_a, long_b), (long_b, long_a), ("yes", long_a), (long_a, long_a), ("x", "x")]
    gold = [{"_id": f"q{i}", "answer": g, "supporting_facts": []} for i, (_, g) in enumerate(pairs)]
    pred = {"answer": {f"q{i}": p for i, (p, _) in enumerate(pairs)}, "sp": {}}
    rows = hotpot(gold, pred, per_question=True)
    for i, (p, g) in enumerate(pairs):
        got = tuple(float(rows[k][i]) for k in ("em", "f1", "prec", "recall"))
        assert got == spec.answer_scores(p, g)
    assert hotpot(gold, pred) == spec.evaluate(gold, pred)


def _reordered(pred: dict, order: str) -> dict:
    def arrange(d: dict) -> dict:
        items = list(d.items())
        if order == "reversed":
            items.reverse()
        elif order == "pairs swapped":
            for k in range(0, len(items) - 1, 2):
                items[k], items[k + 1] = items[k + 1], items[k]
        elif order == "with strangers":   # unknown ids between the gold's
            items = [x for k, item in enumerate(items) for x in ((f"zz{k}", "x"), item)]
        return dict(items)

    return {"answer": arrange(pred["answer"]), "sp": arrange(pred["sp"])}


@settings(max_examples=150, deadline=None)
@given(_cases(), st.sampled_from(["as made", "reversed", "pairs swapped", "with strangers"]))
def test_predictions_in_any_order_give_the_same_rows(case, order):
    # the walk reads predictions in their own order where it follows the gold's, and looks
    # them up where it does not: every order is the same to the specification
    gold, pred = case
    pred = _reordered(pred, order)
    rows = hotpot(gold, pred, per_question=True)
    want, _ = spec.per_question(gold, pred)
    for k in spec.KEYS:
        for i, row in enumerate(want):
            assert bits_equal(float(rows[k][i]), float(row.get(k, math.nan))), (k, i)


def test_predictions_in_gold_order_with_gaps_keys_of_other_types_and_null():
    gold = [{"_id": f"q{i}", "answer": "x y", "supporting_facts": [["T", i]]}
            for i in range(40)]
    answers = {f"q{i}": "x" for i in range(40) if i % 7}
    answers[5] = "x"                   # a key of another type, after the gold's ids
    facts = {f"q{i}": [["T", i]] for i in range(40) if i % 5}
    got = hotpot(gold, {"answer": answers, "sp": facts})
    assert got == spec.evaluate(gold, {"answer": answers, "sp": facts})
    # a null prediction in the gold's order: the script's crash, named
    answers = {f"q{i}": ("x" if i != 9 else None) for i in range(40)}
    with pytest.raises(InputTypeError, match="q9"):
        hotpot(gold, {"answer": answers, "sp": {}})


# --------------------------------------------------------------------------------------------
# HotpotMetrics: the streaming form
# --------------------------------------------------------------------------------------------

@settings(max_examples=150, deadline=None)
@given(_cases(), st.lists(st.integers(0, 12), max_size=4))
def test_batches_in_gold_order_give_the_scripts_bits(case, cuts):
    gold, pred = case
    m = qafast.HotpotMetrics()
    bounds = sorted({0, len(gold), *[min(c, len(gold)) for c in cuts]})
    for lo, hi in itertools.pairwise(bounds):
        m.update(gold[lo:hi], pred)
    m.update([], pred)
    assert m.compute() == hotpot(gold, pred)
    again = qafast.HotpotMetrics()
    again.load_state_dict(m.state_dict())
    assert again.compute() == m.compute() and repr(again) == repr(m)


def test_streaming_state_is_unchanged_by_a_bad_batch_and_merges():
    gold = [{"_id": "q", "answer": "x", "supporting_facts": [["T", 0]]}]
    pred = {"answer": {"q": "x"}, "sp": {"q": [["T", 0]]}}
    m = qafast.HotpotMetrics()
    with pytest.raises(InputError, match="no question"):
        m.compute()
    m.update(gold, pred)
    with pytest.raises(InputTypeError):
        m.update(gold, {"answer": {"q": 1}, "sp": {}})
    assert m.compute() == dict.fromkeys(spec.KEYS, 1.0)
    other = qafast.HotpotMetrics()
    other.update(gold, {"answer": {}, "sp": {}})
    assert m.merge(other).compute() == dict.fromkeys(spec.KEYS, 0.5)
    with pytest.raises(InputTypeError):
        m.merge(object())
    for bad in ({"sums": [0.0] * 11, "count": 1}, {"sums": [2.0] * 12, "count": 1},
                {"sums": [0.0] * 12, "count": -1}, {"sums": "x", "count": 1}, {}):
        with pytest.raises(InputError):
            m.load_state_dict(bad)


# --------------------------------------------------------------------------------------------
# The compiled scan of the files against json.loads of the same bytes
# --------------------------------------------------------------------------------------------

class _Pairs(list):
    """A JSON object written member by member (keys may repeat: json keeps the last)."""


def _json_string(draw, text: str, may_escape: bool = True) -> str:
    out = ['"']
    for ch in text:
        cp = ord(ch)
        short = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r",
                 "\b": "\\b", "\f": "\\f"}.get(ch)
        how = draw(st.sampled_from(["plain", "plain", "plain", "u", "short"])) \
            if may_escape else "plain"
        if short is None and cp < 0x20:
            how = "u"
        if how == "short" and short is None:
            how = "plain" if ch != "/" else "short"
        if how == "plain" and short is not None:
            how = "short"
        if how == "plain":
            out.append(ch)
        elif how == "short":
            out.append("\\/" if ch == "/" else short)
        elif cp > 0xFFFF:   # a surrogate pair
            cp -= 0x10000
            out.append(f"\\u{0xD800 + (cp >> 10):04x}\\u{0xDC00 + (cp & 0x3FF):04X}")
        else:
            out.append(f"\\u{cp:04x}")
    out.append('"')
    return "".join(out)


def _json_text(draw, value, escape_keys: bool) -> str:
    def ws() -> str:
        return draw(st.sampled_from(["", "", "", " ", "\n", "\t", " \r\n  "]))

    if isinstance(value, str):
        return _json_string(draw, value)
    if value is None or isinstance(value, (bool, int, float)):
        return json.dumps(value)
    if isinstance(value, _Pairs):
        return "{" + ws() + ",".join(
            ws() + _json_string(draw, k, escape_keys) + ws() + ":" + ws()
            + _json_text(draw, v, escape_keys) + ws() for k, v in value) + ws() + "}"
    return "[" + ws() + ",".join(ws() + _json_text(draw, v, escape_keys) + ws()
                                 for v in value) + ws() + "]"


_SCAN_TEXT = st.text(st.sampled_from(list("aZ é\"\\/\n\t\u2028") + ["\x01", "北", "🙂", "İ"]),
                     max_size=6)
_SCAN_SID = st.integers(-3, 5) | st.sampled_from([10 ** 17, -(10 ** 18) + 1, 10 ** 18,
                                                  2 ** 63, 1.0, 0.5, True, False, None])
_SCAN_FACTS = st.lists(st.tuples(_SCAN_TEXT, _SCAN_SID).map(list), max_size=4)
_SCAN_BULK = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(
    allow_nan=False, allow_infinity=False) | _SCAN_TEXT, lambda inner: st.lists(inner, max_size=3) | st.lists(
    st.tuples(_SCAN_TEXT, inner), max_size=3).map(_Pairs), max_leaves=12)


def _plain_facts(facts) -> bool:
    return all(type(s) is int and abs(s) < 10 ** 18 for _, s in facts)


@st.composite
def _scan_files(draw):
    """(gold file text, prediction file text, whether the scan must take both): the same
    content in some serialisation, with escapes, whitespace, member orders, repeated keys,
    bulky fields the scan skips and sentence ids of every JSON type."""
    escape_keys = draw(st.integers(0, 9)) == 0
    plain = not escape_keys
    gold = []
    for _ in range(draw(st.integers(1, 6))):
        members = [("_id", draw(st.sampled_from(["q0", "q1", "é", "", "q\"3"]))),
                   ("answer", draw(_SCAN_TEXT)), ("supporting_facts", draw(_SCAN_FACTS))]
        plain = plain and _plain_facts(members[2][1])
        for key in draw(st.lists(st.sampled_from(["context", "question", "type", "level",
                                                  "other"]), max_size=3)):
            members.append((key, draw(_SCAN_BULK)))
        if draw(st.booleans()):   # a key given twice: the first value is overwritten
            key = members[draw(st.integers(0, 2))][0]
            first = draw(_SCAN_FACTS) if key == "supporting_facts" else draw(_SCAN_TEXT)
            plain = plain and (key != "supporting_facts" or _plain_facts(first))
            members.insert(0, (key, first))
        gold.append(_Pairs(draw(st.permutations(members))))
    ids = [v for entry in gold for k, v in entry if k == "_id"]
    answers = _Pairs((q, draw(_SCAN_TEXT)) for q in ids if draw(st.booleans()))
    facts = _Pairs((q, draw(_SCAN_FACTS)) for q in ids if draw(st.booleans()))
    plain = plain and all(_plain_facts(f) for _, f in facts)
    top = [("answer", answers), ("sp", facts)]
    if draw(st.booleans()):
        top.append(("extra", draw(_SCAN_BULK)))
    pred = _Pairs(draw(st.permutations(top)))
    return (_json_text(draw, gold, escape_keys), _json_text(draw, pred, escape_keys), plain)


def _kept(gold: list) -> list:
    return [{k: e[k] for k in ("_id", "answer", "supporting_facts") if k in e} for e in gold]


@settings(max_examples=300, deadline=None)
@given(_scan_files())
def test_file_scan_builds_what_json_reads(files):
    gold_text, pred_text, plain = files
    scanstring = qafast.hotpot_eval._SCANSTRING
    gold = qafast._kernels.hotpot_scan_gold(gold_text.encode(), scanstring)
    pred = qafast._kernels.hotpot_scan_predictions(pred_text.encode(), scanstring)
    if plain:   # of the form the scan takes: it must take it
        assert gold is not None and pred is not None
    # json.dumps tells 1 from 1.0 and from true, which == does not
    if gold is not None:
        assert json.dumps(gold, sort_keys=True) == json.dumps(_kept(json.loads(gold_text)),
                                                              sort_keys=True)
    if pred is not None:
        want = json.loads(pred_text)
        assert json.dumps([pred["answer"], pred["sp"]]) == json.dumps([want["answer"],
                                                                      want["sp"]])


@settings(max_examples=100, deadline=None)
@given(_scan_files())
def test_files_score_as_their_loaded_objects(files):
    import tempfile

    gold_text, pred_text, _ = files
    loaded = hotpot(json.loads(gold_text), json.loads(pred_text), per_question=True)
    with tempfile.TemporaryDirectory() as tmp:
        gold_path, pred_path = Path(tmp, "gold.json"), Path(tmp, "pred.json")
        gold_path.write_text(gold_text, encoding="utf-8")
        pred_path.write_text(pred_text, encoding="utf-8")
        rows = hotpot(gold_path, pred_path, per_question=True)
    assert rows["_id"] == loaded["_id"]
    for k in spec.KEYS:
        assert all(bits_equal(a, b) for a, b in zip(rows[k].tolist(), loaded[k].tolist())), k


@pytest.mark.parametrize("gold, pred", [
    (b'[{"_id": "q", "answer": "x", "supporting_facts": []},]', b'{"answer": {}, "sp": {}}'),
    (b'[{"_id": "q", "answer": "x", "context": [1, 2,]}]', b'{"answer": {}, "sp": {}}'),
    (b'[{"_id": "q", "answer": "x", "context": "\xff"}]', b'{"answer": {}, "sp": {}}'),
    (b'[{"_id": "q", "answer": "x"}]', b'{"answer": {"q": "x"}, "sp": {} x'),
    (b'[{"_id": "q", "answer": "x"}]', b'{"answer": {"q": "x"}, "sp": {"q": [["t", 01]]}}'),
])
def test_malformed_files_name_the_file_whatever_the_scan_skips(tmp_path, gold, pred):
    (tmp_path / "gold.json").write_bytes(gold)
    (tmp_path / "pred.json").write_bytes(pred)
    with pytest.raises(FormatError, match=r"(gold|pred)\.json"):
        hotpot(tmp_path / "gold.json", tmp_path / "pred.json")


# --------------------------------------------------------------------------------------------
# Scoring straight from the files' bytes (hotpot_scan_spans) against the specification
# --------------------------------------------------------------------------------------------

# answers that the spans leave to the objects too: a capital sigma (lower() needs context),
# a lone surrogate escape, and more token pairs than the pairwise comparison takes
_SPAN_TEXT = _TEXT | st.sampled_from(["ΣΑΣ σ", "\ud800", "x\udfff y", " ".join(["w"] * 70),
                                      " ".join(["w", "v"] * 40)])


@st.composite
def _span_cases(draw):
    """(gold, predictions, gold file text, prediction file text): questions of any content
    the specification takes (duplicate ids, missing predictions, yes/no/noanswer, sentence
    ids of every type), written with escapes, whitespace and repeated keys."""
    gold, pred = draw(_cases())
    for entry in gold:
        if draw(st.integers(0, 3)) == 0:
            entry["answer"] = draw(_SPAN_TEXT)
    for q in list(pred["answer"]):
        if draw(st.integers(0, 3)) == 0:
            pred["answer"][q] = draw(_SPAN_TEXT)
    escape_keys = draw(st.integers(0, 9)) == 0
    gold_members = []
    for entry in gold:
        members = list(entry.items())
        if draw(st.integers(0, 4)) == 0:   # a key given twice: json keeps the last
            members.insert(0, (draw(st.sampled_from(["answer", "supporting_facts"])),
                               draw(_TEXT)))
        gold_members.append(_Pairs(members))
    answers = _Pairs(pred["answer"].items())
    facts = _Pairs(pred["sp"].items())
    if answers and draw(st.booleans()):   # an id given twice: its last value counts
        q, text = answers[0]
        answers.insert(0, (q, text + "x"))
    top = [("answer", answers), ("sp", facts)]
    if draw(st.booleans()):
        top.insert(0, ("answer", _Pairs([("q0", "stale")])))
    return (gold, pred, _json_text(draw, gold_members, escape_keys),
            _json_text(draw, _Pairs(top), escape_keys))


@settings(max_examples=200, deadline=None)
@given(_span_cases())
def test_files_scored_from_their_bytes_match_the_specification(tmp_path_factory, case):
    gold, pred, gold_text, pred_text = case
    gold_bytes = gold_text.encode("utf-8", "surrogatepass")
    pred_bytes = pred_text.encode("utf-8", "surrogatepass")
    try:
        loaded_gold = json.loads(gold_bytes.decode("utf-8"))
        loaded_pred = json.loads(pred_bytes.decode("utf-8"))
    except UnicodeDecodeError:
        return   # (a lone surrogate written raw: not UTF-8, the files' error)
    gold_path, pred_path = _written(tmp_path_factory.mktemp("spans"), gold_bytes, pred_bytes)
    if _rows_match_the_specification(gold_path, pred_path, lambda: (loaded_gold, loaded_pred)):
        assert hotpot(gold_path, pred_path) == spec.evaluate(loaded_gold, loaded_pred)


def _written(tmp, gold_bytes: bytes, pred_bytes: bytes) -> tuple:
    """The paths of a gold and a predictions file holding these bytes."""
    (tmp / "gold.json").write_bytes(gold_bytes)
    (tmp / "pred.json").write_bytes(pred_bytes)
    return tmp / "gold.json", tmp / "pred.json"


def _rows_match_the_specification(gold_path, pred_path, load) -> bool:
    """Assert that hotpot's rows on the two files are the specification's on ``load()``'s
    ``(gold, predictions)``, or that hotpot raises a QafastError where loading or the
    specification raises (then False)."""
    try:
        loaded_gold, loaded_pred = load()
        want, _ = spec.per_question(loaded_gold, loaded_pred)
    except Exception:
        with pytest.raises(QafastError):
            hotpot(gold_path, pred_path)
        return False
    rows = hotpot(gold_path, pred_path, per_question=True)
    assert rows["_id"] == [e["_id"] for e in loaded_gold]
    for k in spec.KEYS:
        for i, row in enumerate(want):
            assert bits_equal(float(rows[k][i]), float(row.get(k, math.nan))), (k, i)
    return True


def test_the_spans_take_plain_files_and_leave_what_they_cannot_settle(tmp_path):
    # the gold written with escapes (ensure_ascii), the predictions without: an escaped
    # title is compared unescaped, but one of a lone surrogate is left to Python, as is an
    # answer with a capital sigma
    gold = [{"_id": "a", "answer": "ΣΑΣ", "supporting_facts": [["T\u00e9", 1], ["\udc00", 0]]},
            {"_id": "b", "answer": "the Tower", "supporting_facts": [["x", 0], ["x", 0]]},
            {"_id": "b", "answer": "yes", "supporting_facts": []},
            {"_id": "c", "answer": "no", "supporting_facts": [["y", 2]]},
            {"_id": "d", "answer": "x", "supporting_facts": [["T\u00e9", 0], ["T\u00e9", 1]]}]
    gold_text = json.dumps(gold)
    pred_text = json.dumps({"answer": {"a": "σας", "b": "Tower!", "z": "no"},
                            "sp": {"a": [["T\u00e9", 1]], "b": [["x", 0]], "c": [],
                                   "d": [["T\u00e9", 0], ["T\u00e9", 0], ["T", 1]]}},
                           ensure_ascii=False)
    spans = qafast._kernels.hotpot_scan_spans(gold_text.encode(), pred_text.encode(),
                                              qafast.hotpot_eval._SCANSTRING)
    assert spans is not None and spans.questions == 5
    state = np.zeros(5, dtype=np.uint8)
    values = np.zeros((5, 12))
    assert qafast._kernels.hotpot_span_scores(spans, state, values) == 1
    assert state.tolist() == [1 | 2 | 4 | 8, 3, 3, 2, 2]
    assert values[4, 4:7].tolist() == [1.0, 1.0, 1.0]
    assert spans.question(0) == ("a", "ΣΑΣ", [["T\u00e9", 1], ["\udc00", 0]], "σας",
                                 [["T\u00e9", 1]])
    assert spans.ids() == ["a", "b", "b", "c", "d"] and spans.qid(3) == "c"
    (tmp_path / "gold.json").write_text(gold_text, encoding="utf-8")
    (tmp_path / "pred.json").write_text(pred_text, encoding="utf-8")
    assert hotpot(tmp_path / "gold.json", tmp_path / "pred.json") == spec.evaluate(
        gold, json.loads(pred_text))


# strings long enough that their end falls past the first eight bytes the scan takes at once,
# with every byte it must stop at (quotes, backslashes, control characters, UTF-8 of 2-4 bytes)
_LONG_TEXT = st.lists(st.sampled_from(list('ab "\\\n\x01é北😀') + ["abcdefgh", "the ", "yes"]),
                      max_size=24).map("".join)


@st.composite
def _long_string_files(draw):
    """(gold file bytes, prediction file bytes) of questions whose ids, answers and titles
    are long strings written with random escapes, then, in a third of the cases, one byte
    put in place of another (a file that may no longer be UTF-8, or JSON)."""
    ids = draw(st.lists(_LONG_TEXT, min_size=1, max_size=6))
    members = []
    for q in ids:
        facts = [[draw(_LONG_TEXT), draw(st.integers(0, 3))]
                 for _ in range(draw(st.integers(0, 3)))]
        members.append(_Pairs([("_id", q), ("answer", draw(_LONG_TEXT)),
                               ("context", [[draw(_LONG_TEXT), [draw(_LONG_TEXT)]]]),
                               ("supporting_facts", facts)]))
    answers = _Pairs((q, draw(_LONG_TEXT)) for q in ids if draw(st.booleans()))
    sps = _Pairs((q, [[draw(_LONG_TEXT), draw(st.integers(0, 3))]
                      for _ in range(draw(st.integers(0, 3)))])
                 for q in ids if draw(st.booleans()))
    files = [_json_text(draw, members, False).encode("utf-8"),
             _json_text(draw, _Pairs([("answer", answers), ("sp", sps)]), False).encode("utf-8")]
    if draw(st.integers(0, 2)) == 0:
        which = draw(st.integers(0, 1))
        at = draw(st.integers(0, len(files[which]) - 1))
        files[which] = (files[which][:at] + draw(st.sampled_from([b"\x01", b"\xff", b'"', b"\\",
                                                                   b"\xc3", b"a"]))
                        + files[which][at + 1:])
    return files[0], files[1]


@settings(max_examples=300, deadline=None)
@given(_long_string_files())
def test_long_strings_are_read_as_json_reads_them(tmp_path_factory, files):
    gold_bytes, pred_bytes = files
    gold_path, pred_path = _written(tmp_path_factory.mktemp("long"), gold_bytes, pred_bytes)
    _rows_match_the_specification(
        gold_path, pred_path,
        lambda: (json.loads(gold_bytes.decode("utf-8"), strict=False),
                 json.loads(pred_bytes.decode("utf-8"), strict=False)))


@settings(max_examples=200, deadline=None)
@given(_span_cases(), st.lists(st.integers(0, 12), max_size=3), st.randoms())
def test_the_join_in_ranges_scores_and_notes_as_the_specification(case, cuts, rnd):
    # the join's second step over ranges of questions in any order (as two threads take
    # them) gives the one-call join's rows, and the notes are the specification's
    gold, pred, gold_text, pred_text = case
    gold_bytes = gold_text.encode("utf-8", "surrogatepass")
    pred_bytes = pred_text.encode("utf-8", "surrogatepass")
    try:
        _, notes = spec.per_question(json.loads(gold_bytes.decode("utf-8")),
                                     json.loads(pred_bytes.decode("utf-8")))
    except Exception:
        return   # (files the command reports as bad: tested above)
    kernels = qafast._kernels
    scanstring = qafast.hotpot_eval._SCANSTRING
    whole = kernels.hotpot_scan_spans(gold_bytes, pred_bytes, scanstring)
    spans = kernels.hotpot_spans_new(pred_bytes, scanstring)
    taken = (kernels.hotpot_spans_scan_gold(spans, gold_bytes)
             & kernels.hotpot_spans_scan_predictions(spans))
    if not (taken and kernels.hotpot_spans_rows(spans)):
        assert whole is None
        return
    n = spans.questions
    edges = sorted({0, n, *(min(c, n) for c in cuts)})
    ranges = list(itertools.pairwise(edges))
    rnd.shuffle(ranges)
    looked_up = [kernels.hotpot_spans_lookup(spans, a, b) for a, b in ranges]
    if not all(looked_up):
        assert whole is None
        return
    assert whole is not None and whole.questions == n
    state, values = np.zeros(n, dtype=np.uint8), np.zeros((n, 12))
    for a, b in ranges:
        kernels.hotpot_span_scores(spans, state, values, a, b)
    state_one, values_one = np.zeros(n, dtype=np.uint8), np.zeros((n, 12))
    kernels.hotpot_span_scores(whole, state_one, values_one)
    assert state.tobytes() == state_one.tobytes()
    assert values.tobytes() == values_one.tobytes()
    assert [f"missing answer {q}" if kind == "answer" else f"missing sp fact {q}"
            for kind, q in spans.missing(state)] == notes
    for i in range(n):
        assert spans.question(i) == whole.question(i)


def test_the_spans_are_built_in_steps_each_once():
    gold = json.dumps([{"_id": "a", "answer": "x y", "supporting_facts": [["T", 1]]},
                       {"_id": "b", "answer": "no", "supporting_facts": []}]).encode()
    pred = json.dumps({"answer": {"a": "x"}, "sp": {"a": [["T", 1]], "b": []}}).encode()
    scanstring = qafast.hotpot_eval._SCANSTRING
    kernels = qafast._kernels
    spans = kernels.hotpot_spans_new(pred, scanstring)
    with pytest.raises(InputError):
        kernels.hotpot_spans_join(spans)   # (nothing scanned yet)
    assert kernels.hotpot_spans_scan_predictions(spans)
    with pytest.raises(InputError):
        kernels.hotpot_spans_scan_predictions(spans)
    assert kernels.hotpot_spans_scan_gold(spans, gold)
    with pytest.raises(InputError):
        kernels.hotpot_spans_scan_gold(spans, gold)
    with pytest.raises(InputError):
        kernels.hotpot_spans_lookup(spans)   # (no rows yet)
    assert kernels.hotpot_spans_rows(spans)
    with pytest.raises(InputError):
        kernels.hotpot_spans_join(spans)
    with pytest.raises(InputError):
        kernels.hotpot_spans_rows(spans)
    # nothing predicted until the lookup
    assert spans.question(0) == ("a", "x y", [["T", 1]], None, None)
    for start, stop in [(-1, 1), (2, 1), (0, 3)]:
        with pytest.raises(InputError):
            kernels.hotpot_spans_lookup(spans, start, stop)
    assert kernels.hotpot_spans_lookup(spans, 1, 2) and kernels.hotpot_spans_lookup(spans, 0, 1)
    with pytest.raises(InputError):
        spans.missing(np.zeros(3, dtype=np.uint8))
    assert spans.missing(np.array([1, 3], dtype=np.uint8)) == [("sp", "a")]
    assert spans.questions == 2 and spans.ids() == ["a", "b"]
    assert spans.question(0) == ("a", "x y", [["T", 1]], "x", [["T", 1]])
    assert spans.question(1) == ("b", "no", [], None, [])
    # a file the scan does not take: the join says so, and the caller reads the objects
    spans = kernels.hotpot_spans_new(b'{"answer": {}, "sp": {}}', scanstring)
    assert not kernels.hotpot_spans_scan_gold(spans, b"[1]")
    assert kernels.hotpot_spans_scan_predictions(spans)
    assert not kernels.hotpot_spans_join(spans) and spans.questions == 0
    with pytest.raises(InputError):
        kernels.hotpot_spans_scan_gold(kernels.HotpotSpans(), gold)


def test_the_questions_scored_on_two_threads_are_scored_as_on_one(tmp_path, monkeypatch):
    words = ["the", "Tower", "yes", "no", "Paris", "İstanbul", "ΣΑΣ", "a", "café"]
    gold, answers, facts = [], {}, {}
    for i in range(301):
        qid = f"q{i % 290}"   # (some ids repeated)
        gold.append({"_id": qid, "answer": " ".join(words[(i * k) % 9] for k in range(i % 4)),
                     "supporting_facts": [[words[i % 9], i % 3], [words[(i + 1) % 9], 0]]})
        if i % 7:
            answers[qid] = " ".join(words[(i * k + 1) % 9] for k in range(i % 5))
        if i % 5:
            facts[qid] = [[words[i % 9], i % 2], [words[(i + 2) % 9], 0]]
    pred = {"answer": answers, "sp": facts}
    (tmp_path / "gold.json").write_text(json.dumps(gold), encoding="utf-8")
    (tmp_path / "pred.json").write_text(json.dumps(pred), encoding="utf-8")
    one = hotpot(tmp_path / "gold.json", tmp_path / "pred.json", per_question=True)
    monkeypatch.setattr(qafast.hotpot_eval, "_TWO_THREADS_FROM", 2)
    two = hotpot(tmp_path / "gold.json", tmp_path / "pred.json", per_question=True)
    assert one["_id"] == two["_id"]
    for k in spec.KEYS:
        assert one[k].tobytes() == two[k].tobytes(), k
    assert hotpot(tmp_path / "gold.json", tmp_path / "pred.json") == spec.evaluate(gold, pred)
    spans = qafast._kernels.hotpot_scan_spans(json.dumps(gold).encode(),
                                              json.dumps(pred).encode(),
                                              qafast.hotpot_eval._SCANSTRING)
    state = np.zeros(301, dtype=np.uint8)
    values = np.zeros((301, 12))
    for start, stop in [(-1, 3), (5, 4), (0, 302)]:
        with pytest.raises(InputError):
            qafast._kernels.hotpot_span_scores(spans, state, values, start, stop)


# --------------------------------------------------------------------------------------------
# The command's start: no numpy
# --------------------------------------------------------------------------------------------

def _run_cli_process(pred, gold, module: str = "numpy") -> tuple[str, bool]:
    """(stdout, whether ``module`` was imported) of ``qafast hotpot PRED GOLD`` in a new
    process that runs the qafast under test (not the checkout's src/)."""
    import os
    import subprocess
    import sys

    code = ("import sys; from qafast.cli import main; rc = main(sys.argv[1:]); "
            f"print({module!r} in sys.modules, file=sys.stderr); sys.exit(rc)")
    env = dict(os.environ, PYTHONPATH=str(Path(qafast.__file__).resolve().parents[1]))
    ran = subprocess.run([sys.executable, "-c", code, "hotpot", str(pred), str(gold)],
                         capture_output=True, text=True, encoding="utf-8", env=env,
                         timeout=120, check=True)
    return ran.stdout, ran.stderr.strip().splitlines()[-1] == "True"


def test_cli_does_not_import_numpy(tmp_path):
    # `qafast hotpot` scores files of the plain form from their bytes without numpy, whose
    # import was half the command's start (the recorded "missing" and "facts" files, whose
    # ids the gold lacks, go to the objects' path, which imports it)
    stdout, numpy = _run_cli_process(DATA / "answers_pred.json", DATA / "answers_gold.json")
    assert stdout == (DATA / "answers_stdout.txt").read_text(encoding="utf-8")
    assert not numpy
    # and the lines on the questions missing a prediction
    gold = [{"_id": f"q{i}", "answer": a, "supporting_facts": [["T", i], ["U", 0]]}
            for i, a in enumerate(["yes", "the Eiffel Tower", "1889", "no"])]
    pred = {"answer": {"q0": "Yes", "q1": "Eiffel tower", "q3": "no"},
            "sp": {"q0": [["T", 0]], "q1": [["T", 1], ["U", 0]], "q2": [["T", 5]]}}
    g, p = tmp_path / "gold.json", tmp_path / "pred.json"
    g.write_text(json.dumps(gold), encoding="utf-8")
    p.write_text(json.dumps(pred), encoding="utf-8")
    stdout, numpy = _run_cli_process(p, g)
    assert stdout.splitlines()[:-1] == ["missing answer q2", "missing sp fact q3"]
    assert ast.literal_eval(stdout.splitlines()[-1]) == spec.evaluate(gold, pred)
    assert not numpy
    for case in ("missing", "facts"):
        stdout, _ = _run_cli_process(DATA / f"{case}_pred.json", DATA / f"{case}_gold.json")
        assert stdout == (DATA / f"{case}_stdout.txt").read_text(encoding="utf-8")


def test_cli_fallbacks_still_print_the_scripts_output(tmp_path, capsys):
    # a file the compiled scans decline (a fact's sentence id a float: Python's sets decide)
    # is scored from its objects, importing numpy there; the output is the same
    gold = [{"_id": "a", "answer": "Paris", "supporting_facts": [["T", 1], ["U", 2]]},
            {"_id": "b", "answer": "no", "supporting_facts": [["V", 0]]}]
    pred = {"answer": {"a": "paris!"}, "sp": {"a": [["T", 1.0]], "b": [["V", 0]]}}
    g, p = tmp_path / "gold.json", tmp_path / "pred.json"
    g.write_text(json.dumps(gold), encoding="utf-8")
    p.write_text(json.dumps(pred), encoding="utf-8")
    assert cli_main(["hotpot", str(p), str(g)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "missing answer b"
    assert ast.literal_eval(out.splitlines()[-1]) == spec.evaluate(gold, pred)


def test_cli_given_its_two_files_only_runs_without_argparse(tmp_path, capsys):
    # `qafast hotpot PRED GOLD` is read without argparse, whose import and parser were a
    # part of the command's start; any other command line goes to argparse, as before
    plain = qafast.cli._plain_command(["hotpot", "p.json", "g.json"])
    assert plain is not None
    handler, args = plain
    assert (args.command, args.pred_file, args.gold_file, args.no_progress) == (
        "hotpot", "p.json", "g.json", False)
    # the same arguments as the parser's, should either gain an option
    parser, _ = qafast.cli.build_parser(command="hotpot")
    assert vars(args) == vars(parser.parse_args(["hotpot", "p.json", "g.json"]))
    for argv in (["hotpot", "p.json"], ["hotpot", "p.json", "g.json", "x"],
                 ["hotpot", "-h", "g.json"], ["hotpot", "p.json", "--no-progress"],
                 ["hotpot", "p.json", "-"], ["trec", "q", "r"], [], ["hotpot2", "p", "g"]):
        assert qafast.cli._plain_command(argv) is None, argv
    p, g = DATA / "answers_pred.json", DATA / "answers_gold.json"
    assert cli_main(["hotpot", str(p), str(g)]) == 0
    plain_out = capsys.readouterr().out
    assert cli_main(["hotpot", str(p), str(g), "--no-progress"]) == 0
    assert capsys.readouterr().out == plain_out == (DATA / "answers_stdout.txt").read_text(
        encoding="utf-8")
    with pytest.raises(SystemExit):
        cli_main(["hotpot", str(p)])
    assert "GOLD" in capsys.readouterr().err
    assert _run_cli_process(p, g, "argparse") == (plain_out, False)
