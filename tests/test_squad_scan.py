"""The compiled scan of SQuAD-format dataset and predictions files: what it reads is what the
walk over json.loads' objects reads, for any serialisation of the same content; what it does
not take is left to json.loads."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qafast import _kernels
from qafast.io.squad import predictions_unchecked, read_squad_dataset


class _Raw(str):
    """A key written into the JSON text as it is (an escaped spelling of a kept key)."""


_str = (st.text(max_size=6)
        | st.sampled_from(["", "\\", '"', "/", "\U0001F600", "é", "中文", "\ud800", "x\udc00",
                           "\ud83d\ude00", "a\u2028b\x7f", "\x00\x1f", "x" * 70, "\u00e9" * 40]))
_leaf = (st.none() | st.booleans() | st.integers() | _str
         | st.floats(allow_nan=False, allow_infinity=False))
_value = st.recursive(_leaf, lambda c: st.lists(c, max_size=3)
                      | st.lists(st.tuples(_str, c), min_size=1, max_size=3), max_leaves=8)
_extra_key = st.sampled_from(["title", "context", "question", "answer_start", "is_impossible",
                              "plausible_answers", "Data", "ids", "texts"]) | _str
_ws = st.sampled_from(["", " ", "\n", "\r\n\t ", "  \n"])


def _dump(v, ascii_: bool, ws: str) -> str:
    """JSON text of v; a list of (key, value) pairs is an object (duplicate keys kept)."""
    if isinstance(v, list) and v and all(isinstance(x, tuple) for x in v):
        return "{" + ws + ("," + ws).join(
            (k if isinstance(k, _Raw) else json.dumps(k, ensure_ascii=ascii_)) + ws + ":" + ws
            + _dump(x, ascii_, ws) for k, x in v) + ws + "}"
    if isinstance(v, list):
        return "[" + ws + ("," + ws).join(_dump(x, ascii_, ws) for x in v) + ws + "]"
    return json.dumps(v, ensure_ascii=ascii_)


@st.composite
def _object(draw, kept: list, odd: bool):
    """An object holding the ``kept`` pairs and some others, in any order; with ``odd``, a
    kept key may be given twice or spelled with an escape."""
    names = {k for k, _ in kept}
    extra = st.tuples(_extra_key, _value)
    if not odd:   # (a kept key given twice, or a key written with an escape, is odd)
        extra = extra.filter(lambda kv: kv[0] not in names and "\\" not in json.dumps(kv[0]))
    pairs = list(kept) + draw(st.lists(extra, max_size=2))
    if odd and kept and draw(st.integers(0, 5)) == 0:
        key, value = draw(st.sampled_from(kept))
        pairs.append((key, draw(st.sampled_from([value, "other", 1]))))
    if odd and kept and draw(st.integers(0, 9)) == 0:
        k = draw(st.integers(0, len(kept) - 1))
        key, value = pairs[k]
        pairs[k] = (_Raw('"\\u00' + format(ord(key[0]), "x") + key[1:] + '"'), value)
    return draw(st.permutations(pairs)) if pairs else [("title", "")]


def _dataset(odd: bool):
    text = (_str | st.integers() | st.none()) if odd else _str
    qid = (_str | st.integers()) if odd else _str
    answers = st.lists(text.flatmap(lambda t: _object([("text", t)], odd)), max_size=3)
    if odd:
        answers = answers | st.builds(lambda t: [("text", t), ("answer_start", [0])],
                                      st.lists(_str, max_size=2))
    qa = st.tuples(qid, answers).flatmap(lambda t: _object([("id", t[0]), ("answers", t[1])], odd))
    paragraph = st.lists(qa, max_size=3).flatmap(lambda q: _object([("qas", q)], odd))
    article = st.lists(paragraph, max_size=3).flatmap(
        lambda p: _object([("paragraphs", p)], odd))
    version = st.sampled_from([[], [("version", "1.0")], [("version", "v2.0\u00e9")],
                               [("version", None)]] + ([[("version", 1.1)]] if odd else []))
    return st.tuples(st.lists(article, max_size=3), version).flatmap(
        lambda t: _object([("data", t[0])] + t[1], odd))


def _walked(obj):
    """``(ids, texts, offsets, version)`` as the evaluations read json.loads' objects."""
    ids, texts, offsets = [], [], [0]
    for article in obj["data"]:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                ids.append(qa["id"])
                texts.extend(a["text"] for a in qa["answers"])
                offsets.append(len(texts))
    version = obj.get("version")
    return ids, texts, offsets, None if version is None else str(version)


def _scan(raw: bytes):
    ids: list = []
    texts: list = []
    got = _kernels.squad_scan_dataset(raw, ids, texts, json.decoder.scanstring)
    if got is None:
        assert ids == [] and texts == []
        return None
    offsets, _, version = got
    return ids, texts, offsets.tolist(), version


def _same_strings(got: list, want: list) -> bool:
    return got == want and all(type(g) is str for g in got)


@settings(max_examples=120, deadline=None)
@given(_dataset(odd=False), st.booleans(), _ws)
def test_plain_dataset_is_scanned_as_json_reads_it(doc, ascii_, ws):
    text = _dump(doc, ascii_, ws)
    raw = text.encode("utf-8", "surrogatepass")
    got = _scan(raw)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # a lone surrogate written raw, not UTF-8: json.loads takes it, the scan leaves it
        assert got is None
        return
    assert got is not None
    ids, texts, offsets, version = _walked(json.loads(raw))
    assert _same_strings(got[0], ids) and _same_strings(got[1], texts)
    assert got[2] == offsets and got[3] == version


@settings(max_examples=150, deadline=None)
@given(_dataset(odd=True), st.booleans(), _ws)
def test_odd_dataset_is_scanned_as_json_reads_it_or_left_to_it(doc, ascii_, ws):
    raw = _dump(doc, ascii_, ws).encode("utf-8", "surrogatepass")
    got = _scan(raw)
    if got is None:
        return
    ids, texts, offsets, version = _walked(json.loads(raw))
    assert _same_strings(got[0], ids) and _same_strings(got[1], texts)
    assert got[2] == offsets and got[3] == version


@pytest.mark.parametrize("text", [
    "", " ", "[]", "{}", '{"data": {}}', '{"data": []', '{"data": [],}', '{"data": [] } x',
    '\ufeff{"data": []}', '{"data": [], "version": NaN}', '{"data": [], "x": Infinity}',
    '{"data": [], "data": []}', '{"version": "1"}', '{"data": [{}]}',
    '{"data": [{"paragraphs": [{"qas": [{"id": "a"}]}]}]}',
    '{"data": [{"paragraphs": [{"qas": [{"answers": []}]}]}]}',
    '{"data": [{"paragraphs": [{"qas": [{"id": 1, "answers": []}]}]}]}',
    '{"data": [{"paragraphs": [{"qas": [{"id": "a", "answers": [{}]}]}]}]}',
    '{"data": [{"paragraphs": [{"qas": [{"id": "a", "answers": [{"text": 1}]}]}]}]}',
    '{"data": [{"paragraphs": [{"qas": [{"id": "a", "answers": {"text": []}}]}]}]}',
    '{"data": [{"paragraphs": [{"qas": [{"id": "a", "id": "b", "answers": []}]}]}]}',
    '{"data": [{"paragraphs": [{"qas": [{"\\u0069d": "a", "answers": []}]}]}]}',
    '{"data": [{"paragraphs": [{"context": "a\tb", "qas": []}]}]}',
    '{"data": [{"paragraphs": [{"context": "\\x", "qas": []}]}]}',
    '{"data": [{"paragraphs": [{"context": ' + "[" * 300 + "]" * 300 + ', "qas": []}]}]}',
    '{"data": [{"paragraphs": [{"context": ' + "1" * 4500 + ', "qas": []}]}]}',
    '{"data": [{"paragraphs": [{"qas": []}]}], "version": 1}',
])
def test_dataset_scan_leaves_what_it_does_not_take_to_json(text):
    assert _scan(text.encode("utf-8")) is None


def test_dataset_scan_invalid_utf8_and_utf16_are_left_to_json():
    good = {"data": [{"paragraphs": [{"context": "c", "qas": [
        {"id": "a", "answers": [{"text": "t"}]}]}]}]}
    assert _scan(json.dumps(good).encode("utf-16")) is None
    assert _scan(json.dumps(good).encode("utf-8-sig")) is None
    assert _scan(b'{"data": [{"paragraphs": [{"context": "\xff", "qas": []}]}]}') is None
    assert _scan(b'{"data": [{"paragraphs": [{"context": "\xed\xa0\x80", "qas": []}]}]}') \
        is None


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(_str, _str | (st.none() | st.integers() | _value)), max_size=6),
       st.booleans(), _ws, st.booleans())
def test_predictions_are_scanned_as_json_reads_them(pairs, ascii_, ws, plain):
    if plain:
        pairs = [(k, v if isinstance(v, str) else "x") for k, v in pairs]
    raw = (_dump(pairs, ascii_, ws) if pairs else "{" + ws + "}").encode("utf-8",
                                                                      "surrogatepass")
    got = _kernels.squad_scan_predictions(raw, json.decoder.scanstring)
    want = json.loads(raw)
    if plain and raw.decode("utf-8", "replace").encode("utf-8") == raw:
        # (a lone surrogate written raw, not UTF-8, is left to json.loads, which takes it)
        assert got is not None
    if got is not None:
        assert got == want and list(got) == list(want)
        assert all(type(k) is str and type(v) is str for k, v in got.items())


@pytest.mark.parametrize("text", ["", "[]", '{"a": 1}', '{"a": null}', '{"a": "b",}',
                                  '{"a": "b"} 1', '\ufeff{"a": "b"}', '{"a" "b"}',
                                  '{"a": "\t"}'])
def test_predictions_scan_leaves_what_it_does_not_take_to_json(text):
    assert _kernels.squad_scan_predictions(text.encode("utf-8"), json.decoder.scanstring) \
        is None


def test_files_read_as_the_loaded_objects_are(tmp_path):
    obj = {"version": "1.1", "data": [{"title": "T", "paragraphs": [{"context": "c" * 200, "qas": [
        {"question": "q?", "id": "q\u00e91", "answers": [{"text": "a\\b", "answer_start": 0},
                                                         {"answer_start": 3, "text": "\U0001F600"}]},
        {"id": "q2", "answers": [], "is_impossible": True,
         "plausible_answers": [{"text": "p", "answer_start": 1}]}]}]}]}
    path = tmp_path / "data.json"
    for ascii_ in (True, False):
        path.write_text(json.dumps(obj, ensure_ascii=ascii_, indent=1), encoding="utf-8")
        assert _scan(path.read_bytes()) is not None
        got, want = read_squad_dataset(str(path)), read_squad_dataset(obj)
        assert (got.ids, got.answers, got.version) == (want.ids, want.answers, want.version)
    preds = tmp_path / "pred.json"
    preds.write_text('{"q\\u00e91": "a", "q2": "", "q\u00e91": "b"}', encoding="utf-8")
    assert predictions_unchecked(str(preds))[0] == {"q\u00e91": "b", "q2": ""}


def test_offsets_start_after_the_texts_given():
    ids, texts = ["x"], ["y"]
    raw = b'{"data": [{"paragraphs": [{"qas": [{"id": "a", "answers": [{"text": "t"}]}]}]}]}'
    offsets, has_version, version = _kernels.squad_scan_dataset(raw, ids, texts,
                                                                 json.decoder.scanstring)
    assert ids == ["x", "a"] and texts == ["y", "t"] and not has_version and version is None
    assert offsets.dtype == np.int64 and offsets.tolist() == [1, 2]
