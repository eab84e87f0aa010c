"""The gold-file scan that skips the bulky fields: the kept objects are those json.loads makes."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qafast import _kernels
from qafast._json_scan import scan_skip as _scan_skip

_HOT = ("context", "question", "type", "level")

_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=8) | \
    st.sampled_from(["[", "]{", "}\"", "\\", "\U0001F600", "é", "", "[\\\"]{" * 20])
_leaf = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False,
                                                               allow_infinity=False) | _text
_value = st.recursive(_leaf, lambda c: st.lists(c, max_size=3)
                      | st.lists(st.tuples(_text | st.sampled_from(_HOT), c), max_size=3),
                      max_leaves=12)


def _dump(v, ascii_: bool, ws: str) -> str:
    """JSON text of v; a list of pairs is an object (duplicate keys kept)."""
    if isinstance(v, list) and v and all(isinstance(x, tuple) for x in v):
        return "{" + ws + ",".join(_dump(k, ascii_, ws) + ws + ":" + _dump(x, ascii_, ws)
                                   for k, x in v) + "}"
    if isinstance(v, list):
        return "[" + ws + ("," + ws).join(_dump(x, ascii_, ws) for x in v) + ws + "]"
    return json.dumps(v, ensure_ascii=ascii_)


def _same(got, want, skipped) -> bool:
    """got is want with some ``skipped(path)`` values (the long ones) made None."""
    return _walk(got, want, (), skipped)


def _walk(got, want, path, skipped) -> bool:
    if skipped(path) and got is None:
        return True
    if isinstance(want, dict):
        return (isinstance(got, dict) and list(got) == list(want)
                and all(_walk(got[k], want[k], path + (k,), skipped) for k in want))
    if isinstance(want, list):
        return (isinstance(got, list) and len(got) == len(want)
                and all(_walk(g, w, path + (0,), skipped) for g, w in zip(got, want)))
    return got == want and type(got) is type(want)


def _hot_skipped(path) -> bool:
    return len(path) == 2 and path[0] == 0 and path[1] in _HOT


def _drop_skipped(path) -> bool:
    return ((len(path) == 2 and isinstance(path[0], str) and path[1] == "passage")
            or (len(path) == 4 and path[1] == "qa_pairs" and path[2] == 0
                and path[3] == "question"))


def _strip(obj):
    if isinstance(obj, list):
        return [{k: (None if k in _HOT else x) for k, x in e.items()} if isinstance(e, dict)
                else e for e in obj]
    return obj


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.tuples(_text | st.sampled_from(_HOT + ("_id", "answer")), _value),
                         max_size=5) | _value, max_size=4),
       st.booleans(), st.sampled_from(["", " ", "\n", "\r\n\t "]))
def test_hotpot_scan_matches_json_loads(entries, ascii_, ws):
    text = _dump(entries, ascii_, ws) if entries else "[]"
    want = json.loads(text, strict=False, parse_constant=float)
    got = _scan_skip(text.encode("utf-8"), _kernels.JSON_SKIP_HOTPOT)
    got = text if got is None else got
    assert _same(json.loads(got, strict=False, parse_constant=float), want, _hot_skipped)


@pytest.mark.parametrize("text", [
    "", " ", "[", "[1,]", "[{\"a\":1,}]", "[{\"context\": NaN}]", "[Infinity]", "[-Infinity]",
    "\ufeff[]", "[{\"context\": \"\\x\"}]", "[{\"context\": \"a\tb\"}]", "[1] 2", "[01]",
    "[\"\\ud800\"]", "[" * 300 + "]" * 300, "[" + "1" * 4500 + "]", "[{\"a\" 1}]",
    "[{\"context\": [\"]\"}}]",
])
def test_hotpot_scan_leaves_what_it_does_not_take_to_json(text):
    raw = text.encode("utf-8")
    got = _scan_skip(raw, _kernels.JSON_SKIP_HOTPOT) if raw else None
    if got is not None:   # only valid, plain JSON is taken
        assert _same(json.loads(got, strict=False), json.loads(text, strict=False),
                     _hot_skipped)


def test_hotpot_scan_invalid_utf8_is_left_to_json():
    assert _kernels.json_skip_spans(b'[{"context": "\xff"}]', 0) is None
    assert _kernels.json_skip_spans(b'[{"context": "\xed\xa0\x80"}]', 0) is None


def _strip_drop(obj):
    if not isinstance(obj, dict):
        return obj
    out = {}
    for pid, passage in obj.items():
        if isinstance(passage, dict):
            passage = {k: (None if k == "passage" else x) for k, x in passage.items()}
            qa = passage.get("qa_pairs")
            if isinstance(qa, list):
                passage["qa_pairs"] = [
                    {k: (None if k == "question" else x) for k, x in e.items()}
                    if isinstance(e, dict) else e for e in qa]
        out[pid] = passage
    return out


_qa = st.lists(st.tuples(st.sampled_from(["question", "answer", "query_id", "validated_answers"])
                         | _text, _value), max_size=4)
_passage = st.lists(st.tuples(st.sampled_from(["passage", "qa_pairs", "question"]) | _text,
                              st.lists(_qa, max_size=3) | _value), max_size=4)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_text | st.just("passage"), _passage | _value), max_size=4),
       st.booleans(), st.sampled_from(["", " ", "\n", "\r\n\t "]))
def test_drop_scan_matches_json_loads(passages, ascii_, ws):
    text = _dump(passages, ascii_, ws) if passages else "{}"
    want = json.loads(text)
    got = _scan_skip(text.encode("utf-8"), _kernels.JSON_SKIP_DROP)
    got = text if got is None else got
    assert _same(json.loads(got), want, _drop_skipped)


def test_long_values_are_skipped():
    raw = json.dumps([{"_id": "a", "context": [["t", ["x" * 100]]], "question": "q",
                       "answer": "y"}]).encode()
    assert json.loads(_scan_skip(raw, _kernels.JSON_SKIP_HOTPOT)) == [
        {"_id": "a", "context": None, "question": "q", "answer": "y"}]
