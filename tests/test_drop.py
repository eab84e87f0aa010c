"""DROP (qafast.drop) against its specification (qafast.reference.drop), NumPy and SciPy, and
golden output of AllenAI's drop_eval.py recorded on small adversarial files."""

from __future__ import annotations

import json
import math
import random
from array import array

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import qafast
from qafast import _kernels
from qafast.errors import InputError, InputTypeError, QafastError
from qafast.reference import drop as ref

WORDS = ["the", "a", "An", "Eagles", "five", "5", "5.0", "-5", "\u22125", "3.14", "1,000",
         "1e3", "nan", "inf", "\u0663", "1_0", "caf\u00e9", "\u0130", "\u5317", "", " ", "yards.",
         "'s", "12-yard", "Jan.", "1990", "\t", "\u00a0", ".5", "+3", "-0", "1e400", "--"]
span = st.lists(st.sampled_from(WORDS), min_size=0, max_size=4).map(" ".join)
answer = st.one_of(span, st.lists(span, min_size=0, max_size=5))


def _gold(questions):
    return {"p": {"qa_pairs": [{"query_id": f"q{i}", "answer": a, **({"validated_answers": v}
                                                                     if v else {})}
                               for i, (a, v) in enumerate(questions)]}}


# -- pieces against NumPy and SciPy ----------------------------------------------------------

def test_numpy_mean_and_round_as_numpy():
    rng = random.Random(3)
    for _ in range(3000):
        n = rng.randint(1, 300)
        values = [rng.choice([0.0, 1.0, 0.5, 2 / 3, rng.random()]) for _ in range(n)]
        want = float(np.mean(values))
        assert ref.numpy_mean(values) == want
        assert _kernels.drop_pairwise_mean(np.array(values)) == want
        x = rng.choice([rng.random(), rng.randint(0, 400) / 400, rng.randint(0, 99) / 100 + 0.005])
        assert ref.round2(x) == float(round(np.float64(x), 2))


def test_assignment_as_scipy_with_ties():
    scipy_optimize = pytest.importorskip("scipy.optimize")
    rng = random.Random(5)
    pool = [0.0, 1.0, 0.5, 1 / 3, 2 / 3, 0.25, 0.4, 0.8, 2 / 7, 0.2, 1 / 6, 4 / 7]
    for trial in range(4000):
        g, p = rng.randint(1, 7), rng.randint(1, 7)
        values = rng.sample(pool, rng.randint(1, 4)) if trial % 3 else None
        s = [[rng.choice(values) if values else rng.random() for _ in range(p)]
             for _ in range(g)]
        rows, cols = scipy_optimize.linear_sum_assignment(-np.array(s))
        want = list(zip(rows.tolist(), cols.tolist()))
        assert ref.assign([[-x for x in row] for row in s]) == want
        cost = -np.array(s) if g <= p else -np.array(s).T
        col_of = np.empty(min(g, p), dtype=np.int64)
        assert _kernels.drop_assign(np.ascontiguousarray(cost), col_of) == 0
        got = (list(enumerate(col_of.tolist())) if g <= p
               else sorted((c, r) for r, c in enumerate(col_of.tolist())))
        assert got == want


# -- the rules ---------------------------------------------------------------------------------

@pytest.mark.parametrize("text, want", [
    ("The Eagles", "eagles"), ("5", "5.0"), ("-5", "5.0"), ("1e3", "1000.0"), ("1,000", "1000.0"),
    ("3.14 yards.", "3.14 yards"), ("nan", "nan"), ("Infinity", "inf"), ("\u0663", "3.0"),
    ("1_0", "10.0"), ("12-yard", "12.0 yard"), ("a\tb", "b"), ("", ""), ("the a an", ""),
    ("\u22125", "\u22125"), ("caf\u00e9!", "caf\u00e9"), ("1e400", "inf"), ("+3", "3.0"),
    (".5", "0.5"), ("five", "five")])
def test_normalize(text, want):
    assert ref.normalize(text) == want


@pytest.mark.parametrize("pred, gold, want", [
    ("5", "5.0", (1.0, 1.0)),
    ("five", "5", (0.0, 0.0)),
    ("5 yards", "6 yards", (0.0, 0.0)),            # numbers must match
    ("Eagles", "the eagles", (1.0, 1.0)),
    (["a b", "a b", "c"], ["a b", "c", "c"], (1.0, 0.67)),  # EM: sets and lengths
    (["Eagles", "Giants"], ["Giants", "Eagles", "Jets"], (0.0, 0.67)),
    ([], ["x"], (0.0, 0.0)),
    ("", "the", (1.0, 1.0)),
    ("0.125", "0.125 x y z a b c d", (0.0, 0.25)),
])
def test_get_metrics(pred, gold, want):
    assert ref.get_metrics(pred, gold) == want
    assert qafast.drop_metrics(pred, gold) == want


@settings(max_examples=300, deadline=None)
@given(pred=answer, gold=st.one_of(span, st.lists(span, min_size=1, max_size=5)))
def test_drop_metrics_as_reference(pred, gold):
    assert qafast.drop_metrics(pred, gold) == ref.get_metrics(pred, gold)


gold_answer = st.one_of(
    st.builds(lambda n: {"number": n}, st.sampled_from(["5", "12.0", "five", "-3", "0"])),
    st.builds(lambda s: {"number": "", "spans": s}, st.lists(span, min_size=1, max_size=4)),
    st.builds(lambda d, m, y: {"number": "", "spans": [], "date": {"day": d, "month": m,
                                                                   "year": y}},
              st.sampled_from(["", "1", "15"]), st.sampled_from(["", "March"]),
              st.sampled_from(["", "1990"])))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(gold_answer, st.lists(gold_answer, max_size=3),
                          st.one_of(st.none(), answer)), min_size=1, max_size=8))
def test_per_question_and_totals_as_reference(questions):
    gold = _gold([(a, v) for a, v, _ in questions])
    preds = {f"q{i}": p for i, (_, _, p) in enumerate(questions) if p is not None}
    want = ref.evaluate(gold, preds)
    got = qafast.drop_per_question(gold, preds)
    assert [(q, em, f1, kind) for q, em, f1, kind, _ in want["questions"]] == list(
        zip(got["query_id"], got["exact_match"].tolist(), got["f1"].tolist(), got["type"]))
    totals = qafast.drop(gold, preds, by_type=True)
    assert (totals["global_em"], totals["global_f1"]) == (want["global_em"], want["global_f1"])
    assert {k: (v["count"], v["percent"], v["exact_match"], v["f1"])
            for k, v in totals["by_type"].items()} == want["types"]
    assert list(totals["by_type"]) == list(want["types"])


# -- golden output of drop_eval.py -------------------------------------------------------------

GOLD = {
    "p1": {"qa_pairs": [
        {"query_id": "q1", "answer": {"number": "5", "spans": [], "date": {"day": "", "month": "",
                                                                            "year": ""}},
         "validated_answers": [{"number": "five", "spans": []}]},
        {"query_id": "q2", "answer": {"number": "", "spans": ["the Eagles", "Giants"]}},
        {"query_id": "q3", "answer": {"number": "", "spans": [], "date": {"day": "3",
                                                                         "month": "March",
                                                                         "year": ""}}},
    ]},
    "p2\u5317": {"qa_pairs": [
        {"query_id": "q4", "answer": {"number": "", "spans": ["caf\u00e9 -12.5"]}},
        {"query_id": "q2", "answer": {"number": "7"}},
        {"query_id": "q5", "answer": {"number": "", "spans": ["Zurich"]}},
    ]},
}
PREDICTIONS = {"q1": "five", "q2": ["Eagles", "New York Giants", "Jets"], "q3": "March 3",
               "q4": "Caf\u00e9 12.50", "ghost": "x"}
# what drop_eval.py (allennlp-reading-comprehension 14fc0a42) prints for them
GOLDEN = """\
Missing prediction for question: q5
Exact-match accuracy 33.33
F1 score 58.33
33.33   &   58.33
----
date: 1 (16.67%)
  Exact-match accuracy 0.000
  F1 score 100.000
number: 2 (33.33%)
  Exact-match accuracy 50.000
  F1 score 50.000
span: 2 (33.33%)
  Exact-match accuracy 50.000
  F1 score 50.000
spans: 1 (16.67%)
  Exact-match accuracy 0.000
  F1 score 50.000
"""
GOLDEN_JSON = '{"global_em": 0.3333333333333333, "global_f1": 0.5833333333333334}'


def test_cli_prints_what_the_script_prints(tmp_path, capsys):
    from qafast.cli import main

    g, p, o = tmp_path / "g.json", tmp_path / "p.json", tmp_path / "o.json"
    g.write_text(json.dumps(GOLD), encoding="utf-8")
    p.write_text(json.dumps(PREDICTIONS), encoding="utf-8")
    assert main(["drop", "--gold_path", str(g), "--prediction_path", str(p),
                 "--output_path", str(o)]) == 0
    assert capsys.readouterr().out == GOLDEN
    assert o.read_text(encoding="utf-8") == GOLDEN_JSON
    got = qafast.drop(GOLD, PREDICTIONS)
    assert got == json.loads(GOLDEN_JSON)


def test_duplicate_prediction_ids_keep_the_last(tmp_path):
    g, p = tmp_path / "g.json", tmp_path / "p.json"
    g.write_text(json.dumps(_gold([({"number": "3"}, None)])), encoding="utf-8")
    p.write_text('{"q0": "3", "q0": "4"}', encoding="utf-8")
    assert qafast.drop(str(g), str(p)) == {"global_em": 0.0, "global_f1": 0.0}


def test_all_blank_gold_is_type_none_sorted_as_text():
    # the script crashes sorting None among names; qafast sorts it as "None"
    gold = _gold([({"number": "", "spans": [" "]}, None), ({"number": "2"}, None)])
    got = qafast.drop(gold, {"q0": "x", "q1": "2"}, by_type=True)
    assert list(got["by_type"]) == [None, "number"]
    assert got["global_em"] == 0.5


# -- bad input ---------------------------------------------------------------------------------

@pytest.mark.parametrize("gold, preds, cls", [
    ({"p": {"qa_pairs": [{"query_id": "q", "answer": {}}]}}, {"q": "x"}, InputError),
    ({"p": {"qa_pairs": [{"query_id": "q", "answer": {"date": {"day": 1}}}]}}, {"q": "x"},
     InputError),
    ({"p": {"qa_pairs": [{"query_id": "q", "answer": {"number": "1"}}]}}, {"q": 5}, InputError),
    ({"p": {"qa_pairs": [{"query_id": "q", "answer": {"number": "1"}}]}}, {"q": None},
     InputError),
    ({"p": {"qa_pairs": [{"query_id": "q", "answer": {"number": "1"}}]}}, {"q": ["a", 1]},
     InputError),
    ({"p": {"qa_pairs": [{"query_id": "q"}]}}, {"q": "x"}, InputError),
    ({"p": {}}, {}, InputError),
    ([], {}, InputTypeError),
    ({"p": {"qa_pairs": []}}, {}, InputError),       # nothing to score
])
def test_bad_input_is_a_qafast_error(gold, preds, cls):
    with pytest.raises(cls) as e:
        qafast.drop(gold, preds)
    assert isinstance(e.value, QafastError)


def test_bad_files(tmp_path):
    g = tmp_path / "g.json"
    g.write_text("{not json", encoding="utf-8")
    with pytest.raises(qafast.FormatError, match="g.json"):
        qafast.drop(str(g), {})
    with pytest.raises(InputError, match="cannot read"):
        qafast.drop(str(tmp_path / "absent.json"), {})


def test_empty_gold_cli_prints_nan(tmp_path, capsys):
    from qafast.cli import main

    g, p = tmp_path / "g.json", tmp_path / "p.json"
    g.write_text("{}", encoding="utf-8")
    p.write_text("{}", encoding="utf-8")
    assert main(["drop", "--gold_path", str(g), "--prediction_path", str(p)]) == 0
    assert capsys.readouterr().out == ("Exact-match accuracy nan\nF1 score nan\n"
                                       "nan   &   nan\n----\n")
    assert math.isnan(ref.numpy_mean([]))


# -- the streaming form ------------------------------------------------------------------------

def test_drop_metrics_stream_equals_one_call():
    import pickle
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from fuzz_drop import make_case

    gold, _, preds = make_case(random.Random(11), 300, blank_types=False)
    pairs = [qa for passage in gold.values() for qa in passage["qa_pairs"]]
    want = qafast.drop(gold, preds, by_type=True)
    parts = [qafast.DropMetrics() for _ in range(3)]
    cut = [0, 70, 71, len(pairs)]
    for m, lo, hi in zip(parts, cut, cut[1:]):
        chunk = pairs[lo:hi]
        m.update([preds.get(qa["query_id"]) for qa in chunk],
                 [[qa["answer"], *(qa.get("validated_answers") or [])] for qa in chunk])
    merged = parts[0].merge(parts[1], parts[2])
    assert merged.compute(by_type=True) == want
    again = qafast.DropMetrics()
    again.load_state_dict(json.loads(json.dumps(merged.state_dict())))
    assert again.compute() == {k: want[k] for k in ("global_em", "global_f1")}
    assert pickle.loads(pickle.dumps(again)).compute() == again.compute()
    with pytest.raises(InputError):
        qafast.DropMetrics().compute()
    with pytest.raises(InputError):
        again.load_state_dict({"format": "qafast.DropMetrics", "version": 1,
                               "exact_match": [2.0], "f1": [0.5], "type": ["span"]})
    with pytest.raises(InputError):
        again.update(["x"], [])


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.sampled_from(list(" -.,'$%()+eE0123456789aAnNtThHiIfF_xyz\t\u00e9")),
               max_size=24))
def test_kernel_normalizer_as_reference(span):
    tokens = _kernels.drop_tokens(span)
    if tokens is not None:          # None: not printable ASCII, normalized in Python
        assert " ".join(tokens) == ref.normalize(span)
        assert tokens == ref.normalize(span).split()


def test_duplicate_gold_ids_count_each_time():
    gold = {"p1": {"qa_pairs": [{"query_id": "q", "answer": {"number": "3"}}]},
            "p2": {"qa_pairs": [{"query_id": "q", "answer": {"spans": ["three"]}}]}}
    got = qafast.drop_per_question(gold, {"q": "3"})
    assert got["query_id"] == ["q", "q"] and got["exact_match"].tolist() == [1.0, 0.0]
    assert got["type"] == ["number", "span"]


def test_score_kernel_refuses_offsets_it_cannot_trust():
    i64 = lambda *v: np.array(v, dtype=np.int64)
    tok, bag_off, tok_num = np.array([0, 1], dtype=np.int32), i64(0, 1, 2), np.ones(2, np.uint8)

    def run(pred_off=i64(0, 1), pred_bags=i64(0), pair_pred=i64(0), gold_off=i64(0, 1),
            gold_bags=i64(1), q_off=i64(0, 1), tok=tok, bag_off=bag_off):
        out = [np.empty(1), np.empty(1), np.empty(1), np.empty(1), np.empty(1, np.int8)]
        _kernels.drop_score(tok, bag_off, tok_num, pred_off, pred_bags, pair_pred, gold_off,
                            gold_bags, np.zeros(1, np.uint8), np.zeros(1, np.int8), q_off,
                            *out)
        return out

    assert run()[1][0] == 0.0                          # numbers 0 and 1 do not match
    for bad in (dict(pred_off=i64(0, 2)), dict(pred_bags=i64(2)), dict(pair_pred=i64(1)),
                dict(gold_off=i64(1, 1)), dict(gold_bags=i64(-1)), dict(q_off=i64(0, 2)),
                dict(tok=np.array([0, 2], dtype=np.int32)), dict(bag_off=i64(0, 2, 1))):
        with pytest.raises(ValueError):
            run(**bad)


# -- the files read by the compiled scanners, against json.loads ------------------------------

def _dump_string(text: str, rng: random.Random) -> str:
    # a JSON string with some characters escaped in one of the ways JSON allows
    out = []
    for ch in text:
        r = rng.random()
        if ch in '"\\' or ord(ch) < 0x20:
            out.append(json.dumps(ch)[1:-1] if r < 0.5 else f"\\u{ord(ch):04x}")
        elif r < 0.1:
            units = ch.encode("utf-16-be")   # a pair of \\u escapes beyond the BMP
            out.append("".join(f"\\u{int.from_bytes(units[i:i + 2], 'big'):04X}"
                               for i in range(0, len(units), 2)))
        elif r < 0.13 and ch == "/":
            out.append("\\/")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _dump(value, rng: random.Random, escapes: bool) -> str:
    """``value`` as JSON, with random white space, key escapes only where ``escapes``."""
    ws = lambda: rng.choice(["", "", " ", "\n  ", "\r\n", "\t"])  # noqa: E731
    if isinstance(value, dict):
        items = [f"{ws()}{_dump_string(k, rng) if escapes else json.dumps(k)}{ws()}:{ws()}"
                 f"{_dump(v, rng, escapes)}{ws()}" for k, v in value.items()]
        return "{" + ",".join(items) + ws() + "}"
    if isinstance(value, list):
        return "[" + ",".join(ws() + _dump(v, rng, escapes) + ws() for v in value) + ws() + "]"
    if isinstance(value, str):
        return _dump_string(value, rng) if escapes else json.dumps(value,
                                                                   ensure_ascii=rng.random() < .5)
    return json.dumps(value)


EXTRA = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6),
                               st.floats(allow_nan=False, allow_infinity=False),
                               st.text(max_size=80)),
                     lambda inner: st.one_of(st.lists(inner, max_size=3),
                                             st.dictionaries(st.text(max_size=5), inner,
                                                             max_size=3)),
                     max_leaves=8)
KEY_TEXT = st.text(alphabet=st.characters(codec="utf-8"), max_size=12)


def _with_extras(obj: dict, extras: dict, rng: random.Random) -> dict:
    # obj's keys and the extra ones, in a shuffled order (an extra key never replaces one of
    # obj's)
    items = list(obj.items()) + [(k, v) for k, v in extras.items() if k not in obj]
    rng.shuffle(items)
    return dict(items)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(gold_answer, st.lists(gold_answer, max_size=3),
                          st.one_of(st.none(), answer), KEY_TEXT), min_size=1, max_size=10),
       st.integers(1, 4), st.dictionaries(st.sampled_from(["passage", "question", "wiki_url",
                                                           "highlights", "x"]), EXTRA,
                                          max_size=3),
       st.booleans(), st.randoms(use_true_random=False))
def test_scanned_files_score_as_the_loaded_objects(tmp_path_factory, questions, n_passages,
                                                   extras, escapes, rng):
    gold: dict = {}
    preds: dict = {}
    for i, (first, validated, pred, qid_text) in enumerate(questions):
        qid = f"{qid_text}\u00b7{i}"
        qa = {"query_id": qid, "answer": _with_extras(first, extras, rng)}
        if validated:
            qa["validated_answers"] = [_with_extras(a, extras, rng) for a in validated]
        passage = gold.setdefault(f"p{i % n_passages}\u5317", {"qa_pairs": []})
        passage["qa_pairs"].append(_with_extras(qa, extras, rng))
        if pred is not None:
            preds[qid] = pred
    gold = {k: _with_extras(v, extras, rng) for k, v in gold.items()}
    tmp = tmp_path_factory.mktemp("drop")
    g, p = tmp / "gold.json", tmp / "pred.json"
    g_text, p_text = _dump(gold, rng, escapes), _dump(preds, rng, escapes)
    g.write_bytes(g_text.encode("utf-8"))
    p.write_bytes(p_text.encode("utf-8"))
    assert json.loads(g_text) == gold and json.loads(p_text) == preds
    # the scanners take these files (keys escaped or not) and read what json.loads reads
    scanned = _kernels.drop_scan_predictions(p.read_bytes(), json.decoder.scanstring)
    assert scanned == preds
    if not escapes:
        vocab = _kernels.DropVocab(qafast.drop_eval._Normalizer())
        assert _kernels.drop_scan_gold(g.read_bytes(), preds, vocab, json.decoder.scanstring,
                                       *_scan_outputs())
    want = qafast.drop_per_question(gold, preds)
    got = qafast.drop_per_question(str(g), str(p))
    for key in ("query_id", "type"):
        assert got[key] == want[key]
    for key in ("exact_match", "f1", "predicted"):
        assert got[key].tolist() == want[key].tolist()


def _assert_files_score_as_objects(gold, preds, g, p, keys) -> bool:
    """The files ``g`` and ``p`` (holding ``gold`` and ``preds``) score per question as the
    loaded objects do, or both raise the same kind of error; False in that case."""
    try:
        want = qafast.drop_per_question(gold, preds)
    except QafastError as e:
        with pytest.raises(type(e)):
            qafast.drop_per_question(str(g), str(p))
        return False
    got = qafast.drop_per_question(str(g), str(p))
    assert got["query_id"] == want["query_id"] and got["type"] == want["type"]
    for key in keys:
        assert got[key].tolist() == want[key].tolist()
    return True


@pytest.mark.parametrize("text", [
    # repeated fields: json.loads keeps the last value (and a repeated passage the first place)
    '{"p": {"qa_pairs": [{"query_id": "q", "answer": {"number": "5"}, '
    '"answer": {"number": "7"}}]}}',
    '{"p": {"qa_pairs": [{"query_id": "q", "answer": {"number": "5", "number": "6"}}]}}',
    '{"p": {"qa_pairs": [{"query_id": "x", "query_id": "q", "answer": {"number": "5"}}]}}',
    '{"p": {"qa_pairs": [{"query_id": "q", "answer": {"number": "5"}}]}, '
    '"r": {"qa_pairs": []}, "p": {"qa_pairs": [{"query_id": "q", "answer": {"number": "6"}}]}}',
    '{"p": {"qa_pairs": [{"query_id": "q", "answer": {"number": "5"}}], '
    '"qa_pairs": [{"query_id": "q", "answer": {"number": "6"}}]}}',
    '{"p": {"qa_pairs": [{"query_id": "q", "answer": {"number": "", "date": {"day": "1", '
    '"month": "May", "year": "1990", "day": "2"}}}]}}',
    # escaped keys, odd value types, numbers and literals json.loads takes
    '{"p": {"qa_\\u0070airs": [{"query_id": "q", "answer": {"number": "5"}}]}}',
    '{"p": {"qa_pairs": [{"query_id": "q", "answer": {"number": "5"}, "n": [1e5, -0.5, true, '
    'false, null, {}], "question": "\\ud800 \\" \\\\"}], "passage": ' + '"x" ' * 0 + '"' +
    "long " * 40 + '"}}',
    '{"p": {"qa_pairs": [{"query_id": "q", "answer": {"number": "", "spans": ["a", "b"]}, '
    '"validated_answers": [{"number": "", "spans": ["b"]}, {"number": "3", "spans": 5}]}]}}',
    '{"p": {"qa_pairs": [{"query_id": "q", "answer": {"number": "", "spans": []}, '
    '"validated_answers": {}}]}}',
    '{"p": {"qa_pairs": [{"query_id": "q", "answer": {}}, {"query_id": "r", "answer": '
    '{"date": {"day": "1", "month": "", "year": "2"}}}]}}',
    '{}', '{"p": {"qa_pairs": []}}',
])
def test_scanned_gold_as_json_loads(tmp_path, text):
    g, p = tmp_path / "g.json", tmp_path / "p.json"
    g.write_text(text, encoding="utf-8")
    preds = {"q": ["5", "b"], "x": "7"}
    p.write_text(json.dumps(preds), encoding="utf-8")
    _assert_files_score_as_objects(json.loads(text), preds, g, p, ("exact_match", "f1"))


@pytest.mark.parametrize("text", [
    '{"q": "5", "q": ["a", "b"]}', '{"q\\u00e9": "\\u00e9\\n"}', '{}', '{"q": []}',
    ' \r\n{"q" : [ "a" , "" ] }\n',
    '{"q": 5}', '{"q": null}', '{"q": ["a", 1]}', '["q"]', '{"q": "5",}', '{"q": "5"} x',
    '{"q": NaN}', '\ufeff{"q": "5"}', '{"q": "\\ud83d\\ude00 \\udc00"}',
])
def test_scanned_predictions_as_json_loads(text):
    raw = text.encode("utf-8")
    got = _kernels.drop_scan_predictions(raw, json.decoder.scanstring)
    try:
        want = json.loads(text)
    except ValueError:
        assert got is None
        return
    if got is not None:
        assert got == want and list(got) == list(want)
    else:   # the scanner leaves odd value types to json.loads
        assert not (isinstance(want, dict) and all(
            isinstance(v, str) or (isinstance(v, list) and all(isinstance(x, str) for x in v))
            for v in want.values()))


@pytest.mark.parametrize("text", ['{"p": {"qa_pairs": [{"query_id": "q", "answer": {"num',
                                  '{"p": {"qa_pairs": []}} }', '{"p": {"qa_pairs": [\x01]}}',
                                  b'{"p": "\xff"}'])
def test_malformed_scanned_files_name_the_file(tmp_path, text):
    g, p = tmp_path / "gold.json", tmp_path / "p.json"
    g.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    p.write_text("{}", encoding="utf-8")
    with pytest.raises(qafast.FormatError, match="gold.json"):
        qafast.drop(str(g), str(p))
    g.write_text('{"p": {"qa_pairs": []}}', encoding="utf-8")
    p.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    with pytest.raises(qafast.FormatError, match="p.json"):
        qafast.drop(str(g), str(p))


# -- the gold scanner's span table against the walk over the loaded object -------------------

def _scan_outputs() -> tuple:
    """Fresh outputs for drop_scan_gold, in its order (ids, missing, then the arrays)."""
    return ([], {}, array("q", [0]), array("q"), array("q"), array("q", [0]), array("q"),
            array("B"), array("b"), array("q", [0]))


def _dump_plain_keys(value, rng: random.Random) -> str:
    """``value`` as JSON whose keys are written plainly (as the scanner takes them) and whose
    strings are escaped at random, each occurrence its own way: one text, many spellings."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)}: {_dump_plain_keys(v, rng)}"
                               for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_dump_plain_keys(v, rng) for v in value) + "]"
    if isinstance(value, str):
        r = rng.random()
        if r < 0.3:
            return json.dumps(value)                        # \u escapes for non-ASCII
        if r < 0.6:
            return json.dumps(value, ensure_ascii=False)    # the UTF-8 itself
        return _dump_string(value, rng)
    return json.dumps(value)


SPAN_POOL = ["5", "5.0", "05", "-5", "\u22125", "1,000", "1e3", "nan", "caf\u00e9", "Caf\u00e9",
             "\u5317\u4eac", "", " ", "\t", "\u00a0", "the Eagles", "Eagles", "a \"b\" c\\",
             "\U0001f600 x", "line\nbreak", "12-yard", "Z\u00fcrich", "1990", "March 3"]
pool_span = st.sampled_from(SPAN_POOL)
NO_DATE = {"day": "", "month": "", "year": ""}
# an empty number and no span fall to the (here blank) date, as in the DROP release
pool_answer = st.one_of(
    st.builds(lambda n: {"number": n, "spans": [], "date": NO_DATE}, pool_span),
    st.builds(lambda s: {"number": "", "spans": s, "date": NO_DATE},
              st.lists(pool_span, min_size=0, max_size=4)),
    st.builds(lambda d, m, y: {"number": "", "spans": [], "date": {"day": d, "month": m,
                                                                   "year": y}},
              st.sampled_from(["", "1", "\u0663"]), st.sampled_from(["", "March", "caf\u00e9"]),
              st.sampled_from(["", "1990"])))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(pool_answer, st.lists(pool_answer, max_size=3),
                          st.one_of(st.none(), pool_span, st.lists(pool_span, max_size=3)),
                          st.integers(0, 5)), min_size=1, max_size=25),
       st.randoms(use_true_random=False))
def test_scanned_span_table_as_the_walk(tmp_path_factory, questions, rng):
    # every span from a small pool, so that texts repeat, each time spelled its own way
    # (escaped, \u-escaped or not): the scanner's table of JSON string bytes must give the
    # bags, blank flags and types the walk over the loaded object gives; ids repeat too
    gold: dict = {}
    preds: dict = {}
    for i, (first, validated, pred, qid_n) in enumerate(questions):
        qid = f"q\u00e9{qid_n}"
        qa = {"query_id": qid, "answer": first}
        if validated:
            qa["validated_answers"] = validated
        gold.setdefault(f"p{i % 3}", {"qa_pairs": []})["qa_pairs"].append(qa)
        if pred is not None:
            preds[qid] = pred
    text = _dump_plain_keys(gold, rng)
    assert json.loads(text) == gold
    normalizer = qafast.drop_eval._Normalizer
    scanned = _scan_outputs()
    took = _kernels.drop_scan_gold(text.encode("utf-8"), preds, _kernels.DropVocab(normalizer()),
                                   json.decoder.scanstring, *scanned)
    walked = ([], {}, [0], [], [], [0], [], [], [], [0])
    walked_ok = _kernels.drop_walk(gold, preds, _kernels.DropVocab(normalizer()), *walked)
    assert took and walked_ok
    if took:
        assert scanned[0] == walked[0] and scanned[1] == walked[1]
        for got, want in zip(scanned[2:], walked[2:]):
            assert list(got) == [int(x) for x in want]
    g, p = tmp_path_factory.mktemp("drop") / "gold.json", tmp_path_factory.mktemp("drop") / "p.json"
    g.write_text(text, encoding="utf-8")
    p.write_text(_dump_plain_keys(preds, rng), encoding="utf-8")
    if _assert_files_score_as_objects(gold, preds, g, p, ("exact_match", "f1", "predicted")):
        assert qafast.drop(str(g), str(p), by_type=True) == qafast.drop(gold, preds, by_type=True)


def test_scan_gold_refuses_outputs_of_the_wrong_width():
    text = b'{"p": {"qa_pairs": [{"query_id": "q", "answer": {"number": "5"}}]}}'
    vocab = _kernels.DropVocab(qafast.drop_eval._Normalizer())
    outputs = list(_scan_outputs())
    outputs[4] = array("i")        # pair_pred of 4-byte items
    with pytest.raises(ValueError):
        _kernels.drop_scan_gold(text, {"q": "5"}, vocab, json.decoder.scanstring, *outputs)
    outputs = list(_scan_outputs())
    outputs[8] = array("q")        # gold_kind of 8-byte items
    with pytest.raises(ValueError):
        _kernels.drop_scan_gold(text, {"q": "5"}, vocab, json.decoder.scanstring, *outputs)
    assert _kernels.drop_scan_gold(text, {"q": "5"}, vocab, json.decoder.scanstring,
                                   *_scan_outputs())


def test_scan_gold_span_table_grows():
    # more distinct spans than the table's first slots, each met twice (number and span)
    n = 9000
    gold = {"p": {"qa_pairs": [{"query_id": f"q{i}", "answer": {"number": f"{i} x"},
                                "validated_answers": [{"number": "", "spans": [f"{i} x", "y"]}]}
                               for i in range(n)]}}
    preds = {f"q{i}": f"{i}" for i in range(0, n, 2)}
    text = json.dumps(gold).encode("utf-8")
    scanned = _scan_outputs()
    assert _kernels.drop_scan_gold(text, preds, _kernels.DropVocab(qafast.drop_eval._Normalizer()),
                                   json.decoder.scanstring, *scanned)
    walked = ([], {}, [0], [], [], [0], [], [], [], [0])
    assert _kernels.drop_walk(gold, preds, _kernels.DropVocab(qafast.drop_eval._Normalizer()),
                              *walked)
    for got, want in zip(scanned[2:], walked[2:]):
        assert list(got) == [int(x) for x in want]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0.0, 1.0, 0.5, 0.67, 0.33, 1 / 3, 0.01]),
                          st.sampled_from([0.0, 1.0, 0.25, 0.8, 2 / 3]),
                          st.integers(-1, 3)), min_size=0, max_size=400))
def test_type_means_as_numpy(rows):
    em = np.array([r[0] for r in rows], dtype=np.float64)
    f1 = np.array([r[1] for r in rows], dtype=np.float64)
    codes = np.array([r[2] for r in rows], dtype=np.int8)
    counts, em_mean, f1_mean = array("q", bytes(40)), array("d", bytes(40)), array("d", bytes(40))
    _kernels.drop_type_means(em, f1, codes, counts, em_mean, f1_mean)
    for code in range(-1, 4):
        mask = codes == code
        assert counts[code + 1] == int(mask.sum())
        if mask.any():
            assert em_mean[code + 1] == float(np.mean(em[mask]))
            assert f1_mean[code + 1] == float(np.mean(f1[mask]))
    with pytest.raises(ValueError):
        _kernels.drop_type_means(em[:1], f1[:1], np.array([4], dtype=np.int8), counts, em_mean,
                                 f1_mean)


def test_cli_does_not_import_numpy(tmp_path):
    import subprocess
    import sys
    g, p = tmp_path / "g.json", tmp_path / "p.json"
    g.write_text(json.dumps(GOLD), encoding="utf-8")
    p.write_text(json.dumps(PREDICTIONS), encoding="utf-8")
    code = ("import sys; from qafast.cli import main; main(sys.argv[1:]); "
            "print('numpy' in sys.modules, file=sys.stderr)")
    ran = subprocess.run([sys.executable, "-c", code, "drop", "--gold_path", str(g),
                          "--prediction_path", str(p)], capture_output=True, text=True,
                         check=True)
    assert ran.stdout == GOLDEN
    assert ran.stderr.strip().splitlines()[-1] == "False"
