"""qafast.kilt_retrieval against its specification (qafast.reference.kilt) and against the
official kilt/eval_retrieval.py's recorded output (tests/data/kilt/)."""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import qafast
from qafast.errors import FormatError, InputError, InputTypeError
from qafast import kilt_eval
from qafast.kilt_eval import retrieval_keys
from qafast.reference import kilt as ref

DATA = Path(__file__).parent / "data" / "kilt"

_words = st.sampled_from(["the", "a", "An", "Paris", "paris!", "Éclair", "İ", "1,000", "x",
                          "«b»", "\u00a0", " ", ".", "'s", ""])
_text = st.lists(_words, max_size=6).map(" ".join)
_provenance = st.fixed_dictionaries({}, optional={
    "wikipedia_id": st.sampled_from(["1", "2", " 3", "3", 4, None]),
    "start_paragraph_id": st.sampled_from([1, 2, "2"]),
    "title": _text, "text": _text})
_gold_output = st.fixed_dictionaries({}, optional={
    "answer": _text, "provenance": st.lists(_provenance, max_size=3)})
_question = st.tuples(
    st.lists(_gold_output, min_size=1, max_size=3), _text,
    st.lists(_provenance, max_size=8))


def _files(questions):
    gold, guess = [], []
    for i, (outputs, source, provenance) in enumerate(questions):
        gold.append({"id": f"q{i}", "input": source, "output": outputs})
        guess.append({"id": f"q{i}", "output": [{"provenance": provenance}]})
    return gold, guess


@settings(max_examples=60, deadline=None)
@given(st.lists(_question, max_size=6),
       st.lists(st.integers(1, 6), min_size=1, max_size=4),
       st.sampled_from([["wikipedia_id"], ["wikipedia_id", "start_paragraph_id"], ["title"]]))
def test_matches_reference(questions, ks, rank_keys):
    gold, guess = _files(questions)
    rows = [ref.retrieval_question(q, g, ks, rank_keys) for q, g in zip(guess, gold)]
    want = ref.retrieval_means(rows, ks)
    got = qafast.kilt_retrieval(guess, gold, ks=ks, rank_keys=rank_keys)
    assert list(got) == list(want) == retrieval_keys(ks)
    assert got == want
    per = qafast.kilt_retrieval(guess, gold, ks=ks, rank_keys=rank_keys, per_question=True)
    for i, row in enumerate(rows):
        for key in want:
            assert per[key][i] == row[key], key


@pytest.mark.parametrize("name, args", [
    ("page", []),
    ("paragraph", ["--ks", "1,3", "--rank_keys", "wikipedia_id,start_paragraph_id"]),
    ("repeated_k", ["--ks", "2,2,5"]),
])
def test_cli_prints_what_the_script_prints(name, args):
    out = subprocess.run([sys.executable, "-m", "qafast", "kilt-retrieval",
                          str(DATA / "guess.jsonl"), str(DATA / "gold.jsonl"), *args],
                         capture_output=True, text=True, check=True).stdout
    assert out == (DATA / f"retrieval_{name}_stdout.txt").read_text(encoding="utf-8")


GOLD = [{"id": "q1", "input": "Who wrote Hamlet?", "output": [
    {"answer": "Shakespeare", "provenance": [{"wikipedia_id": "7", "title": "Hamlet"},
                                             {"wikipedia_id": "8", "title": "Globe"}]},
    {"answer": "W. Shakespeare", "provenance": [{"wikipedia_id": "9"}]}]}]


def _guess(*pages):
    return [{"id": "q1", "output": [{"answer": "x"}, {"provenance": [
        {"wikipedia_id": p, "text": f"page {p}"} for p in pages]}]}]


def test_evidence_sets_rank_as_one_point():
    # {9} is completed by the first guess, {7, 8} by the third, its point at 7's place
    # moving there: the rank is [True, True]
    got = qafast.kilt_retrieval(_guess("9", "7", "8"), GOLD, ks=[1, 2, 3])
    assert got["precision@1"] == 1.0 and got["recall@2"] == 1.0 and got["precision@2"] == 1.0
    assert got["precision@3"] == 2 / 3 and got["recall@3"] == 1.0
    assert got["Rprec"] == 1.0   # the best output: {9} by the first guess
    got = qafast.kilt_retrieval(_guess("7", "5", "9"), GOLD, ks=[2, 3])
    assert got["precision@2"] == 0.0 and got["recall@3"] == 0.5
    assert got["Rprec"] == 0.5   # {7, 8}: one of the first two


def test_repeated_k_is_added_and_divided_twice():
    gold = GOLD * 1 + [dict(GOLD[0], id="q2")]
    guess = _guess("9") + [dict(_guess("5")[0], id="q2")]
    once = qafast.kilt_retrieval(guess, gold, ks=[1])
    twice = qafast.kilt_retrieval(guess, gold, ks=[1, 1])
    assert once["precision@1"] == 0.5
    assert twice["precision@1"] == 2 * 1.0 / 2 / 2


def test_ids_are_stripped_and_extra_guesses_ignored():
    guess = [dict(_guess("9")[0], id=" q1 "), {"id": "other", "output": [{"provenance": []}]}]
    assert qafast.kilt_retrieval(guess, GOLD, ks=[1])["precision@1"] == 1.0


@pytest.mark.parametrize("guess, gold, match", [
    (_guess("9"), GOLD * 2, "occurs twice"),
    ([{"id": "q2", "output": [{"provenance": []}]}], GOLD, "no guess"),
    ([{"id": "q1", "output": [{"answer": "x"}]}], GOLD, "0 outputs with provenance"),
    (_guess("9"), [dict(GOLD[0], output=[])], "no outputs"),
    (_guess("9"), [{"id": "q1", "output": GOLD[0]["output"]}], "input"),
])
def test_bad_input_names_the_question(guess, gold, match):
    with pytest.raises((InputError, InputTypeError), match=match):
        qafast.kilt_retrieval(guess, gold)


def test_bad_ks_and_types():
    with pytest.raises(InputError, match="positive"):
        qafast.kilt_retrieval(_guess("9"), GOLD, ks=[0, 1])
    with pytest.raises(InputTypeError):
        qafast.kilt_retrieval(_guess("9"), GOLD, ks="1,5")
    with pytest.raises(InputTypeError, match="provenance"):
        qafast.kilt_retrieval([{"id": "q1", "output": [{"provenance": "7"}]}], GOLD)


def test_blank_line_is_a_format_error(tmp_path):
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps(GOLD[0]) + "\n\n", encoding="utf-8")
    with pytest.raises(FormatError, match="line 2"):
        qafast.kilt_retrieval(_guess("9"), gold)


def test_per_question_form():
    rows = qafast.kilt_retrieval(_guess("7", "9"), GOLD, ks=[2], per_question=True)
    assert rows["id"] == ["q1"]
    assert isinstance(rows["recall@2"], np.ndarray) and rows["recall@2"][0] == 0.5


# --- kilt/eval_downstream.py ------------------------------------------------------------------

_rouge_text = st.lists(st.sampled_from(["a", "b", "c", "The", ".", " ", "  ", "a.", "..", "é",
                                        "\u00a0", "\t"]), max_size=9).map("".join)


@settings(max_examples=200, deadline=None)
@given(_rouge_text, _rouge_text)
def test_rouge_l_matches_reference(prediction, reference):
    from qafast.kilt_eval import rouge_l
    assert rouge_l(prediction, reference) == ref.rouge_l(prediction, reference)


_long_text = st.lists(st.one_of(_rouge_text, st.text(alphabet="ab.é İ\u00a0x", max_size=8)),
                     max_size=40).map(" ".join)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(_long_text, _long_text), max_size=8))
def test_rouge_l_kernel_pairs_match_reference(pairs):
    # many pairs in one kernel call share one vocabulary and one DP buffer: long texts,
    # unicode, empty and dot-only ones
    from qafast.kilt_eval import _rouge_l_pairs
    got = _rouge_l_pairs([p for p, _ in pairs], [r for _, r in pairs])
    assert got.tolist() == [ref.rouge_l(p, r) for p, r in pairs]


def test_rouge_l_rules():
    from qafast.kilt_eval import rouge_l
    assert rouge_l("...", "a") == 0.0   # no sentence: the package raises, KILT takes 0.0
    assert 0 < rouge_l(" .a", "a") < 0.7   # the blank piece " " is the sentence "", a word
    assert rouge_l("a a a", "a") == ref.rouge_l("a a a", "a") > 0.99   # distinct words
    assert rouge_l("b a", "a b") == ref.rouge_l("b a", "a b")


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.lists(_text, min_size=1, max_size=3), _text, _rouge_text,
                          st.lists(_provenance, max_size=4)), max_size=5))
def test_downstream_matches_reference(questions):
    gold, guess = [], []
    for i, (answers, source, answer, provenance) in enumerate(questions):
        outputs = [{"answer": a + "x", "provenance": provenance[:1]} for a in answers]
        gold.append({"id": i, "input": source, "output": outputs})
        guess.append({"id": str(i), "output": [{"answer": answer, "provenance": provenance}]})
    rows = [ref.downstream_question(q, g) for q, g in zip(guess, gold)]
    got = qafast.kilt(guess, gold, per_question=True)
    for i, row in enumerate(rows):
        for key in ("accuracy", "em", "f1", "rougel", "Rprec"):
            assert got[key][i] == row[key], key
    means = qafast.kilt(guess, gold)
    n = len(rows)
    if n:
        total = 0.0
        for row in rows:
            total += row["f1"]
        assert means["downstream"]["f1"] == total / n
        kilt_total = 0.0
        for row in rows:
            kilt_total += row["rougel"] if row["Rprec"] == 1 else 0
        assert means["kilt"]["KILT-rougel"] == kilt_total / n


def test_downstream_cli_prints_what_the_script_prints():
    out = subprocess.run([sys.executable, "-m", "qafast", "kilt",
                          str(DATA / "downstream_guess.jsonl"), str(DATA / "downstream_gold.jsonl")],
                         capture_output=True, text=True, check=True).stdout
    assert out == (DATA / "downstream_stdout.txt").read_text(encoding="utf-8")


def test_downstream_rules_and_errors():
    gold = [{"id": "q1", "input": "x", "output": [{"answer": " Paris "},
                                                  {"provenance": [{"wikipedia_id": "1"}]}]}]
    got = qafast.kilt([{"id": "q1", "output": [{"answer": "paris",
                                               "provenance": [{"wikipedia_id": "1"}]}]}], gold)
    assert got["downstream"] == {"accuracy": 0.0, "em": 1.0, "f1": 1.0, "rougel": 0.0}
    assert got["kilt"]["KILT-em"] == 1.0   # Rprec 1: the best gold output's
    empty = qafast.kilt([{"id": "q1", "output": [{"answer": "  "}]}], gold)
    assert empty["downstream"]["em"] == 0.0 and empty["retrieval"]["Rprec"] == 0.0
    with pytest.raises(InputError, match="exactly one output"):
        qafast.kilt([{"id": "q1", "output": [{"answer": "a"}, {"answer": "b"}]}], gold)
    with pytest.raises(InputError, match="no answer"):
        qafast.kilt([{"id": "q1", "output": [{"answer": "a"}]}],
                    [{"id": "q1", "input": "x", "output": [{"answer": " "}]}])


# --- qafast.KiltMetrics -----------------------------------------------------------------------

@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.lists(_text, min_size=1, max_size=3), _text, _rouge_text,
                          st.lists(_provenance, max_size=4)), max_size=7),
       st.lists(st.integers(0, 7), max_size=4))
def test_streaming_equals_one_call_for_any_batches(questions, cuts):
    gold, guess = [], []
    for i, (answers, source, answer, provenance) in enumerate(questions):
        outputs = [{"answer": a + "x", "provenance": provenance[:1]} for a in answers]
        gold.append({"id": i, "input": source, "output": outputs})
        guess.append({"id": str(i), "output": [{"answer": answer, "provenance": provenance}]})
    want = qafast.kilt(guess, gold)
    bounds = sorted({0, len(gold), *(min(c, len(gold)) for c in cuts)})
    m = qafast.KiltMetrics()
    parts = []
    for lo, hi in itertools.pairwise(bounds):
        m.update(guess[lo:hi], gold[lo:hi])
        part = qafast.KiltMetrics()
        part.update(guess[lo:hi], gold[lo:hi])
        parts.append(part)
    assert m.compute() == want and repr(m.compute()) == repr(want)   # ints for no question too
    assert len(m) == len(gold)
    merged = qafast.KiltMetrics().merge(*parts)
    assert merged.compute() == want
    restored = qafast.KiltMetrics()
    restored.load_state_dict(json.loads(json.dumps(m.state_dict())))
    assert restored.compute() == want


def test_streaming_errors_leave_the_state_unchanged():
    gold = [{"id": "q1", "input": "x", "output": [{"answer": "a"}]}]
    guess = [{"id": "q1", "output": [{"answer": "a"}]}]
    m = qafast.KiltMetrics()
    m.update(guess, gold)
    with pytest.raises(InputError, match="occurs twice"):
        m.update(guess, gold)   # a gold id in two batches, as in one file
    with pytest.raises(InputError, match="no guess"):
        m.update([], [dict(gold[0], id="q2")])
    with pytest.raises(InputError, match="occurs twice"):
        m.merge(m)
    assert len(m) == 1 and m.compute()["downstream"]["em"] == 1.0
    with pytest.raises(InputError, match="not a KiltMetrics state"):
        m.load_state_dict({"format": "qafast.TriviaqaMetrics"})
    with pytest.raises(InputTypeError):
        m.merge(qafast.TriviaqaMetrics())
    assert qafast.KiltMetrics().compute() == qafast.kilt([], [])


# The files as the compiled scanner reads them (paths) against the same records as lists
# (json.loads); lines it does not take plainly go to json.loads, with the same numbers.

def _same(a: dict, b: dict) -> bool:
    return list(a) == list(b) and all(
        np.array_equal(a[k], b[k]) if isinstance(a[k], np.ndarray) else a[k] == b[k]
        for k in a)


def _outcome(f):
    try:
        return f()
    except (InputError, InputTypeError) as e:
        return type(e), str(e)


def _write(path, records, ensure_ascii: bool, end: str) -> None:
    path.write_bytes("".join(json.dumps(r, ensure_ascii=ensure_ascii) + end
                             for r in records).encode("utf-8"))


def _both_ways(tmp_path, gold, guess, ensure_ascii=False, end="\n", ks=(1, 5),
               rank_keys=("wikipedia_id",)):
    gp, qp = tmp_path / "gold.jsonl", tmp_path / "guess.jsonl"
    _write(gp, gold, ensure_ascii, end)
    _write(qp, guess, ensure_ascii, end)
    for per in (False, True):
        got = qafast.kilt_retrieval(qp, gp, ks=list(ks), rank_keys=list(rank_keys),
                                    per_question=per)
        want = qafast.kilt_retrieval(guess, gold, ks=list(ks), rank_keys=list(rank_keys),
                                     per_question=per)
        assert _same(got, want)
    return gp, qp


@settings(max_examples=60, deadline=None)
@given(st.lists(_question, max_size=6),
       st.lists(st.integers(1, 6), min_size=1, max_size=4),
       st.sampled_from([["wikipedia_id"], ["wikipedia_id", "start_paragraph_id"], ["title"]]),
       st.booleans(), st.sampled_from(["\n", "\r\n", "\r"]))
def test_files_read_as_their_records(tmp_path_factory, questions, ks, rank_keys, ascii_only,
                                     end):
    gold, guess = _files(questions)
    for g, q in zip(gold, guess):
        q["output"][0]["answer"] = g["input"]
    tmp_path = tmp_path_factory.mktemp("kilt")
    gp, qp = _both_ways(tmp_path, gold, guess, ascii_only, end, ks, rank_keys)
    got, want = (_outcome(lambda: qafast.kilt(q, g, per_question=True))
                 for g, q in ((gp, qp), (gold, guess)))
    assert got == want if isinstance(got, tuple) else _same(got, want)


@pytest.mark.parametrize("value", [
    "7", " 7\u2003", "\u00a07\u3000", "\u0037", "7\U0001f600", "\ud800", 7, -0, 0, 7.0,
    True, False, None, [7], {"a": 7}, "", "+"])
def test_odd_key_values_read_as_their_records(tmp_path, value):
    gold = [{"id": "q1", "input": "x", "output": [{"answer": "a", "provenance": [
        {"wikipedia_id": value, "start_paragraph_id": value}, {"wikipedia_id": "7"}]}]},
        {"id": "q2", "input": "y", "output": [{"provenance": [{"wikipedia_id": "0"}]}]}]
    guess = [{"id": "q2", "output": [{"provenance": [{"wikipedia_id": value},
                                                     {"wikipedia_id": 0}]}]},
             {"id": "q1", "output": [{"provenance": [{"wikipedia_id": "7"},
                                                     {"wikipedia_id": value}]}]}]
    for ascii_only in (False, True):
        if value == "\ud800" and not ascii_only:
            continue   # (a lone surrogate is written as an escape only)
        for keys in (["wikipedia_id"], ["wikipedia_id", "start_paragraph_id"]):
            _both_ways(tmp_path, gold, guess, ascii_only, rank_keys=keys)


def test_plain_files_take_the_scanner(tmp_path):
    gold, guess = _files([([{"answer": "a", "provenance": [{"wikipedia_id": "1"}]}], "x",
                           [{"wikipedia_id": "1", "text": "a"}])])
    gp, qp = _both_ways(tmp_path, gold, guess, ensure_ascii=True)
    scan = kilt_eval._scan(qp, gp, ["wikipedia_id"])
    assert scan is not None and scan[2] is not None
    assert kilt_eval._scanned_questions(scan[2], scan[3], downstream=False) is not None


@pytest.mark.parametrize("line", [
    '{"id": "q1", "id": "q1", "output": [{"provenance": []}]}',     # a key twice
    '{"\\u0069d": "q1", "output": [{"provenance": []}]}',            # an escaped key
    '{"id": 1, "output": [{"provenance": []}]}',                     # not a string id
    '{"id": "q1", "output": [{"provenance": [{"wikipedia_id": 1e0}]}]}',
    '{"id": "q1", "output": [{"provenance": [{"text": 5}]}]}',
    '{"id": "q1", "output": [{"provenance": [{"wikipedia_id": NaN}]}]}',
    '{"id": "q1", "output": [{"provenance": null}]}',
    '\ufeff{"id": "q1", "output": [{"provenance": []}]}',
    '{"id": "q1", "output": [{"provenance": []}]} x',
    '{"id": "q1", "output": [{"provenance": []}]}\n\n',
])
def test_lines_the_scanner_leaves_to_json(tmp_path, line):
    gp = tmp_path / "gold.jsonl"
    gp.write_text('{"id": "q1", "input": "x", "output": [{"answer": "a", "provenance": '
                  '[{"wikipedia_id": "1"}]}]}\n', encoding="utf-8")
    qp = tmp_path / "guess.jsonl"
    qp.write_bytes((line + "\n").encode("utf-8"))
    try:
        guess = kilt_eval.read_jsonl(qp, "guess")
        want = qafast.kilt_retrieval(guess, kilt_eval.read_jsonl(gp, "gold"))
    except (InputError, InputTypeError, FormatError) as e:
        with pytest.raises(type(e), match=re.escape(str(e))):
            qafast.kilt_retrieval(qp, gp)
    else:
        assert qafast.kilt_retrieval(qp, gp) == want


# kilt_squad_spans: SQuAD's normalize_answer of JSON string contents straight from their
# bytes (no GIL), against the reference on the decoded str.

def _spans_of(strings: list, ensure_ascii: bool):
    """The JSON text of strings (one after another, as a file holds them) and their rows
    (kind, start, end) as kilt_scan gives them."""
    raw = bytearray()
    rows = []
    for s in strings:
        if s is None:
            rows.append((0, 0, 0))
            continue
        text = json.dumps(s, ensure_ascii=ensure_ascii).encode("utf-8", "surrogatepass")
        lo = len(raw) + 1
        raw += text + b" "
        rows.append((2 if b"\\" in text else 1, lo, lo + len(text) - 2))
    return bytes(raw), np.array(rows, dtype=np.int64).reshape(-1, 3)


def _normalized(strings: list, ensure_ascii: bool):
    raw, rows = _spans_of(strings, ensure_ascii)
    room = int((rows[:, 2] - rows[:, 1]).sum()) + 3
    chars = np.full(room, -7, dtype=np.int32)
    off = np.empty(len(strings) + 1, dtype=np.int64)
    off[0] = 3
    state = np.empty(len(strings), dtype=np.uint8)
    qafast._kernels.kilt_squad_spans(raw, rows, 0, off, chars, state)
    assert (chars[:3] == -7).all()
    return ["".join(map(chr, chars[off[i]:off[i + 1]])) for i in range(len(strings))], state


_unicode_text = st.lists(st.one_of(
    st.sampled_from(["the", "a", "An", "THE", "an", "The", "ΣΑΣ", "İ", "ß", "Ǆ", "K",
                     "\u00a0", "\u3000", "\u0085", "\u2028", " ", "\t", "\x1c", "_", "-",
                     "«", "'", ".", "\u0301", "é", "\ud800"]),
    st.text(max_size=5)), max_size=8).map("".join)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.none(), _unicode_text), max_size=8), st.booleans())
def test_squad_spans_match_reference(strings, ensure_ascii):
    from qafast.reference.answers import normalize_squad
    if not ensure_ascii and any("\ud800" <= c <= "\udfff" for s in strings if s for c in s):
        ensure_ascii = True   # (a lone surrogate is written as an escape only)
    got, state = _normalized(strings, ensure_ascii)
    for s, g, st_ in zip(strings, got, state.tolist()):
        if s is None:
            assert st_ == qafast._kernels.KILT_SPAN_ABSENT and g == ""
        elif st_ == qafast._kernels.KILT_SPAN_LEFT:
            # left to CPython: exactly the strings lowered with context or into two code
            # points, and lone surrogates
            assert g == "" and any(c == "\u03a3" or "\ud800" <= c <= "\udfff" for c in s)
        else:
            assert g == normalize_squad(s)
            assert st_ == (qafast._kernels.KILT_SPAN_DONE if s.strip()
                           else qafast._kernels.KILT_SPAN_BLANK)


def test_squad_spans_lower_every_code_point_as_str_lower():
    # every code point but the surrogates, each its own string: the kernel's per code point
    # lowering is str.lower's wherever it does not leave the string to CPython
    from qafast.reference.answers import normalize_squad
    points = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    strings = [chr(c) + "x" for c in points]
    got, state = _normalized(strings, False)
    left = [points[i] for i in np.flatnonzero(state == qafast._kernels.KILT_SPAN_LEFT)]
    assert left == [0x3A3]
    bad = [hex(c) for c, s, g in zip(points, strings, got)
           if c != 0x3A3 and g != normalize_squad(s)]
    assert bad == []


def test_squad_spans_check_their_inputs():
    raw, rows = _spans_of(["ab", "cd"], False)
    off = np.zeros(3, dtype=np.int64)
    state = np.empty(2, dtype=np.uint8)
    with pytest.raises(InputError, match="no room"):
        qafast._kernels.kilt_squad_spans(raw, rows, 0, off, np.empty(3, np.int32), state)
    for lo, hi in ((0, 2), (3, 2), (1, len(raw))):
        bad = rows.copy()
        bad[0, 1:] = lo, hi
        with pytest.raises(InputError, match="out of range"):
            qafast._kernels.kilt_squad_spans(raw, bad, 0, off, np.empty(9, np.int32), state)
    with pytest.raises(InputError, match="columns"):
        qafast._kernels.kilt_squad_spans(raw, rows, 1, off, np.empty(9, np.int32), state)
    # a span that is not a JSON string's contents is left to the caller, never read past
    bad = rows.copy()
    bad[0, 2] = bad[1, 2]
    qafast._kernels.kilt_squad_spans(raw, bad, 0, off, np.empty(16, np.int32), state)
    assert state[0] == qafast._kernels.KILT_SPAN_LEFT
    assert state[1] == qafast._kernels.KILT_SPAN_DONE


@pytest.mark.parametrize("text", ["ΣΑΣ the Σ", "İstanbul", "x\ud800y", "  ", "!!!", ""])
def test_files_with_strings_left_to_cpython(tmp_path, text):
    # the scanned path with strings the kernel leaves to CPython, blank and empty ones,
    # as texts, answers, titles and inputs
    gold = [{"id": "q1", "input": text, "output": [
        {"answer": text, "provenance": [{"wikipedia_id": "1", "title": text}]},
        {"answer": "paris", "provenance": [{"wikipedia_id": "2", "title": "Σ"}]}]},
        {"id": "q2", "input": "y", "output": [{"answer": "b"}]}]
    guess = [{"id": "q1", "output": [{"provenance": [
        {"wikipedia_id": "1", "text": "a " + text}, {"wikipedia_id": "2"},
        {"wikipedia_id": "2", "text": "ΣΑΣ paris"}]}]},
        {"id": "q2", "output": [{"provenance": [{"wikipedia_id": "0", "text": text}]}]}]
    gp, qp = _both_ways(tmp_path, gold, guess, ensure_ascii=True, ks=(1, 2, 3))
    if "\ud800" not in text:
        _both_ways(tmp_path, gold, guess, ensure_ascii=False, ks=(1, 2, 3))
    scan = kilt_eval._scan(qp, gp, ["wikipedia_id"])
    assert scan[2] is not None


def _answer_scores(answers: list, golds: list, ensure_ascii: bool):
    """kilt_answer_scores of each (answer, gold answers) pair, the strings written as JSON."""
    raw, rows = _spans_of(answers, ensure_ascii)
    gold_raw, gold_rows = _spans_of([g for gs in golds for g in gs], ensure_ascii)
    gold_off = np.cumsum([0] + [len(gs) for gs in golds]).astype(np.int64)
    out = np.full((len(answers), 4), -7.0)
    state = np.empty(len(answers), dtype=np.uint8)
    qafast._kernels.kilt_answer_scores(raw, rows, gold_raw or b" ", gold_rows, gold_off, out,
                                       state)
    return out, state


_answer_text = st.one_of(
    _unicode_text, _rouge_text,
    st.lists(st.sampled_from(["the", "Paris", ".", " ", "x", "é", "..", "a.b", "\u3000"]),
             min_size=200, max_size=400).map(" ".join))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.one_of(st.none(), _answer_text),
                          st.lists(st.one_of(st.none(), _answer_text), max_size=4)),
                max_size=6), st.booleans())
def test_answer_scores_match_reference(questions, ensure_ascii):
    strings = [s for a, gs in questions for s in [a, *gs] if s is not None]
    if any("\ud800" <= c <= "\udfff" for s in strings for c in s):
        ensure_ascii = True   # (a lone surrogate is written as an escape only)
    answers = [a for a, _ in questions]
    golds = [gs for _, gs in questions]
    out, state = _answer_scores(answers, golds, ensure_ascii)
    for a, gs, row, st_ in zip(answers, golds, out.tolist(), state.tolist()):
        if a is None:   # (a guess answer is a string here; the kernel leaves it alone)
            assert st_ == qafast._kernels.KILT_ANSWER_LEFT and row == [-7.0] * 4
            continue
        stripped = {g.strip() for g in gs if g and g.strip()}
        if st_ == qafast._kernels.KILT_ANSWER_LEFT:
            # left to CPython: capital sigma or a lone surrogate somewhere it is read
            assert any(c == "\u03a3" or "\ud800" <= c <= "\udfff" for s in [a, *gs] if s
                       for c in s)
            assert row == [-7.0] * 4
            continue
        if st_ == qafast._kernels.KILT_ANSWER_NO_GOLD:
            assert a.strip() and not stripped
            continue
        assert st_ == qafast._kernels.KILT_ANSWER_DONE
        want = ref.downstream_question({"output": [{"answer": a}]},
                                       {"output": [{"answer": g} for g in gs] or [{}]})
        assert row == [want["accuracy"], want["em"], want["f1"], want["rougel"]]


def test_answer_scores_check_their_inputs():
    raw, rows = _spans_of(["ab", "cd"], False)
    off = np.array([0, 1, 2], dtype=np.int64)
    out = np.empty((2, 4))
    state = np.empty(2, dtype=np.uint8)
    k = qafast._kernels.kilt_answer_scores
    k(raw, rows, raw, rows, off, out, state)
    assert state.tolist() == [0, 0] and out[:, 0].tolist() == [1.0, 1.0]
    for lo, hi in ((0, 2), (3, 2), (1, len(raw))):
        bad = rows.copy()
        bad[0, 1:] = lo, hi
        with pytest.raises(InputError, match="out of range"):
            k(raw, bad, raw, rows, off, out, state)
        with pytest.raises(InputError, match="out of range"):
            k(raw, rows, raw, bad, off, out, state)
    for bad_off in ([0, 1, 3], [0, 2, 1], [-1, 1, 2], [0, 1]):
        with pytest.raises(InputError, match="offset"):
            k(raw, rows, raw, rows, np.array(bad_off, dtype=np.int64), out, state)
    with pytest.raises(InputError, match="expected"):
        k(raw, rows, raw, rows, off, np.empty((2, 3)), state)
    with pytest.raises(InputError, match="expected"):
        k(raw, np.ascontiguousarray(rows[:, :2]), raw, rows, off, out, state)
    # a span that is not a JSON string's contents is left to the caller, never read past
    bad = rows.copy()
    bad[0, 2] = bad[1, 2]
    k(raw, bad, raw, rows, off, out, state)
    assert state.tolist() == [qafast._kernels.KILT_ANSWER_LEFT, qafast._kernels.KILT_ANSWER_DONE]


@pytest.mark.parametrize("text", ["ΣΑΣ the Σ", "x\ud800y", "  ", "!!!", "", "a. b.. c",
                                  "İstanbul the", "\u3000. \u3000"])
def test_downstream_files_with_answers_left_to_cpython(tmp_path, text):
    # the scanned path with answers the kernel leaves to CPython, next to ones it scores
    gold = [{"id": "q1", "input": "x", "output": [{"answer": text}, {"answer": "paris"}]},
            {"id": "q2", "input": "x", "output": [{"answer": "b the"}, {}]},
            {"id": "q3", "input": "x", "output": [{"answer": text + " paris"}]}]
    guess = [{"id": "q1", "output": [{"answer": text + " paris", "provenance": []}]},
             {"id": "q2", "output": [{"answer": text}]},
             {"id": "q3", "output": [{"answer": "Paris " + text}]}]
    for ensure_ascii in (True, False) if "\ud800" not in text else (True,):
        gp, qp = tmp_path / "gold.jsonl", tmp_path / "guess.jsonl"
        _write(gp, gold, ensure_ascii, "\n")
        _write(qp, guess, ensure_ascii, "\n")
        assert kilt_eval._scan(qp, gp, ["wikipedia_id"])[2] is not None
        for per in (False, True):
            got = qafast.kilt(qp, gp, per_question=per)
            want = qafast.kilt(guess, gold, per_question=per)
            assert _same(got, want)
        rows = [ref.downstream_question(q, g) for q, g in zip(guess, gold)]
        got = qafast.kilt(qp, gp, per_question=True)
        for i, row in enumerate(rows):
            for key in ("accuracy", "em", "f1", "rougel"):
                assert got[key][i] == row[key], key


# kilt_align_ids: the gold and guess ids matched from their bytes (no GIL), against the
# reference's alignment on the decoded ids.

def _align_ids(gold_ids: list, guess_ids: list, ensure_ascii: bool, slack: int = 0):
    gold_raw, gold_rows = _spans_of(gold_ids, ensure_ascii)
    guess_raw, guess_rows = _spans_of(guess_ids, ensure_ascii)
    aligned = np.full(len(gold_ids), -7, dtype=np.int64)
    slots = 1 << max(1, (2 * (len(gold_ids) + len(guess_ids)) - 1).bit_length() + slack)
    state = qafast._kernels.kilt_align_ids(gold_raw, gold_rows, guess_raw, guess_rows, 0,
                                           aligned, np.full(slots, 5, dtype=np.int64))
    return state, aligned.tolist()


_id_text = st.lists(st.one_of(
    st.sampled_from(["q1", "q2", "Q1", " ", "\t", "\u00a0", "\u3000", "\u0085", "\u2028",
                     "\x1c", "\u200b", "\ufeff", "é", "e\u0301", "Σ", '"', "\\", "/", "\n",
                     "\U0001f600", "\ud800", "\udc00"]),
    st.text(max_size=3)), max_size=4).map("".join)


@settings(max_examples=300, deadline=None)
@given(st.lists(_id_text, max_size=8), st.lists(_id_text, max_size=8), st.randoms(),
       st.booleans(), st.integers(0, 2))
def test_align_ids_match_reference(gold_ids, extra_ids, rnd, ensure_ascii, slack):
    # the guesses: most gold ids (some re-spaced, some twice), extra ones, shuffled
    guess_ids = [rnd.choice([i, " " + i, i + "\u3000"]) for i in gold_ids
                 if rnd.random() < 0.9] + extra_ids
    guess_ids += [i for i in guess_ids if rnd.random() < 0.05]
    rnd.shuffle(guess_ids)
    ensure_ascii = ensure_ascii or any("\ud800" <= c <= "\udfff"
                                       for s in gold_ids + guess_ids for c in s)
    state, aligned = _align_ids(gold_ids, guess_ids, ensure_ascii, slack)
    # the ids as json.loads reads them from the file (it pairs escaped surrogates)
    gold_r, guess_r = ([{"id": json.loads(json.dumps(i, ensure_ascii=ensure_ascii))}
                        for i in ids] for ids in (gold_ids, guess_ids))
    want = ref.aligned_guesses(gold_r, guess_r)
    if state == qafast._kernels.KILT_ALIGN_LEFT:
        # (a lone surrogate has no UTF-8: left to CPython)
        assert any("\ud800" <= c <= "\udfff" for r in gold_r + guess_r for c in r["id"])
    elif want is None:
        assert state == qafast._kernels.KILT_ALIGN_MISMATCH
    else:
        assert state == qafast._kernels.KILT_ALIGN_DONE and aligned == want


def test_align_ids_strip_exactly_what_str_strip_strips():
    # every code point str.isspace() names around an id, and some look-alikes that it does
    # not (each such id then only matches itself)
    spaces = [c for c in range(0x110000) if chr(c).isspace()]
    others = [0x180E, 0x200B, 0x200C, 0x2060, 0xFEFF, 0x1B, 0x7F, 0xA1, 0x3001]
    gold = [f"{chr(c)}k{c}{chr(c)}" for c in spaces + others]
    guess = [f"k{c}" for c in spaces] + [f"{chr(c)}k{c}{chr(c)}" for c in others]
    guess += [f"k{c}" for c in others]   # (not the same ids: no duplicate)
    for ensure_ascii in (False, True):
        state, aligned = _align_ids(gold, guess, ensure_ascii)
        assert state == qafast._kernels.KILT_ALIGN_DONE
        assert aligned == list(range(len(gold)))


def test_align_ids_check_their_inputs():
    raw, rows = _spans_of(["a", "b"], False)
    k = qafast._kernels
    with pytest.raises(InputError, match="columns"):
        k.kilt_align_ids(raw, rows, raw, rows, 1, np.empty(2, np.int64), np.empty(8, np.int64))
    with pytest.raises(InputError, match="aligned"):
        k.kilt_align_ids(raw, rows, raw, rows, 0, np.empty(3, np.int64), np.empty(8, np.int64))
    for slots in (4, 12, 0):
        with pytest.raises(InputError, match="table"):
            k.kilt_align_ids(raw, rows, raw, rows, 0, np.empty(2, np.int64),
                             np.empty(slots, np.int64))
    # a span that is not exactly a JSON string's contents is left to the caller, never read
    # past (nor is one outside its file)
    for lo, hi in ((1, len(raw)), (0, 1), (2, 1), (1, 3), (1, 1 << 40), (-5, 1)):
        bad = rows.copy()
        bad[0, 1:] = lo, hi
        assert k.kilt_align_ids(raw, bad, raw, rows, 0, np.empty(2, np.int64),
                                np.empty(8, np.int64)) == k.KILT_ALIGN_LEFT
    assert k.kilt_align_ids(raw, rows, raw, rows, 0, np.empty(2, np.int64),
                            np.empty(8, np.int64)) == k.KILT_ALIGN_DONE
    empty = np.empty((0, 3), np.int64)
    assert k.kilt_align_ids(b"", empty, b"", empty, 0, np.empty(0, np.int64),
                            np.empty(2, np.int64)) == k.KILT_ALIGN_DONE


@pytest.mark.parametrize("gold_ids, guess_ids", [
    (["q1", "q2"], ["q2 ", "\u3000q1", "extra"]),           # stripped, reordered, extra
    (["q\u00e9", "q\\\"/"], ["q\\\"/", "q\u00e9"]),         # escaped in the file or not
    (["\U0001f600", "x\ud800"], ["x\ud800", "\U0001f600"]),  # a lone surrogate: CPython
    (["q1", " q1"], ["q1"]),                                 # a gold id twice
    (["q1"], ["q1", "q1\u2003"]),                           # a guess id twice
    (["q1", "q2"], ["q1"]),                                  # a gold id without a guess
    (["q1", "q2"], ["q1", "q2\u200b"]),                     # (U+200B is no space)
])
def test_files_align_ids_as_their_records(tmp_path, gold_ids, guess_ids):
    gold = [{"id": i, "input": "x", "output": [
        {"answer": "a", "provenance": [{"wikipedia_id": "1", "title": "a"}]}]}
        for i in gold_ids]
    guess = [{"id": i, "output": [{"answer": "a", "provenance": [
        {"wikipedia_id": "1", "text": "a"}]}]} for i in guess_ids]
    for ensure_ascii in (True, False):
        if not ensure_ascii and any("\ud800" in i for i in gold_ids + guess_ids):
            continue   # (a lone surrogate is written as an escape only)
        gp, qp = tmp_path / "gold.jsonl", tmp_path / "guess.jsonl"
        _write(gp, gold, ensure_ascii, "\n")
        _write(qp, guess, ensure_ascii, "\n")
        for f in (qafast.kilt, qafast.kilt_retrieval):
            for per in (False, True):
                got = _outcome(lambda: f(qp, gp, per_question=per))
                want = _outcome(lambda: f(guess, gold, per_question=per))
                assert got == want if isinstance(got, tuple) else _same(got, want)
        m_files, m_records = qafast.KiltMetrics(), qafast.KiltMetrics()
        if not isinstance(_outcome(lambda: m_records.update(guess, gold)), tuple):
            m_files.update(qp, gp)
            assert m_files.state_dict() == m_records.state_dict()
