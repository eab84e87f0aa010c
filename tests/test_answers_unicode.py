"""SQuAD's normalizer in C for any Unicode text (tokens and characters) against
qafast.reference.answers.normalize_squad: hypothesis on nasty text, and every code point."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qafast import _kernels
from qafast import answers as F
from qafast.reference import answers as R
from _examples import examples

# Curly quotes, NBSP and other Unicode spaces, İ (lowercases to two code points), final sigma,
# full-width letters, CJK, emoji, combining marks, \x1c-\x1f (str.split separators), ß, ligatures,
# titlecase letters, non-ASCII digits and numerics (word characters for \b), lone surrogates.
PIECES = ["the", "The", "THE", "a", "A", "an", "AN", "x", "paris", "don't", "_", "-", ".", "'",
          "“", "”", "‘", "’", "\u00a0", "\u2003", "\u3000", "\u2028", "\u200b", "\x85", " ",
          "\t", "\x1c", "\x1d", "\x1e", "\x1f", "İ", "ı", "Σ", "ΑΣ", "ΟΔΟΣ", "σ", "ς", "ß",
          "ＴＨＥ", "Ａ", "ａｎ", "北京", "大学", "😀", "👍🏽", "\u0301", "e\u0301", "a\u0301",
          "\u0300the", "ǅ", "ﬁ", "ﬃ", "²", "٣", "Ⅻ", "ⅻ", "K", "Å", "\ud800", "\udfff", "ⓐ",
          "ᾼ", "ﬀ", "𝐀", "ǰ"]

nasty = st.lists(st.sampled_from(PIECES), max_size=10).map("".join) | st.text(max_size=12)


def _ref_tokens(strings):
    vocab, ids, off = {}, [], [0]
    for s in strings:
        for t in R.normalize_squad(s).split():
            ids.append(vocab.setdefault(t.encode("utf-8", "surrogatepass"), len(vocab)))
        off.append(len(ids))
    return ids, off, len(vocab)


def _check_tokens(strings):
    off = np.empty(len(strings) + 1, dtype=np.int64)
    ids, nv = _kernels.answer_tokens(strings, None, True, off)
    exp_ids, exp_off, exp_nv = _ref_tokens(strings)
    assert np.frombuffer(ids, dtype=np.int32).tolist() == exp_ids
    assert off.tolist() == exp_off
    assert nv == exp_nv
    _check_copied_tokens(strings)


def _check_copied_tokens(strings):
    # the kernels that copy the strings out and normalize the copies without the GIL (Latin-1
    # lowered from a table, CJK with ASCII capitals in C, other text by str.lower): each
    # string's tokens, found through its index among the distinct strings, are the
    # reference's, with ids that name tokens one to one
    n = len(strings)
    half = (n + 1) // 2  # the first half as predictions, the rest as references
    preds, refs = strings[:half], [[] for _ in range(half)]
    for k, s in enumerate(strings[half:]):
        refs[k % half].append(s)
    refs_flat = [g for r in refs for g in r]
    ref_off = np.cumsum([0] + [len(r) for r in refs]).astype(np.int64)
    order = preds + refs_flat
    for flat in (False, True):
        ps = np.empty(half, dtype=np.int32)
        rs = np.empty(len(refs_flat), dtype=np.int32)
        if flat:
            tok_off, ids = _kernels.answer_encode_squad_flat(preds, refs_flat, ref_off, ps, rs)
        else:
            tok_off, ids = _kernels.answer_encode_squad(preds, refs, ref_off, ps, rs)
        sids = ps.tolist() + rs.tolist()
        # equal strings, and only those, share an index
        index = dict(zip(order, sids))
        assert [index[s] for s in order] == sids
        assert len(set(sids)) == len(index) == len(tok_off) - 1
        names: dict = {}
        for s, sid in zip(order, sids):
            want = [t.encode("utf-8", "surrogatepass") for t in R.normalize_squad(s).split()]
            got = ids[tok_off[sid]:tok_off[sid + 1]].tolist()
            assert len(got) == len(want)
            for i, t in zip(got, want):
                assert names.setdefault(i, t) == t
        assert len(set(names.values())) == len(names)


def _check_chars(strings):
    off = np.empty(len(strings) + 1, dtype=np.int64)
    cps = np.frombuffer(_kernels.answer_squad_chars(strings, off), dtype=np.int32)
    got = [cps[off[i]:off[i + 1]].tolist() for i in range(len(strings))]
    assert got == [[ord(c) for c in R.normalize_squad(s)] for s in strings]


# CJK ideographs with ASCII (the kernels' no-lowering path) and what must leave it: a
# capital, another script, a character above U+9FFF or below U+4E00
CJK_MIX = st.lists(st.sampled_from(["北京", "大学", "the", "an", " ", "a", "A", "The", "x1",
                                    "é", "\u4dff", "\u4e00", "\u9fff", "\ua000", ".", "'s",
                                    "\u3000", "\t", "ﬀ", "_", "-"]),
                   max_size=8).map("".join)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(CJK_MIX, max_size=8))
def test_squad_cjk_with_ascii_equal_reference(strings):
    _check_tokens(strings)
    _check_chars(strings)


@settings(max_examples=examples(250), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(nasty, max_size=8))
def test_squad_tokens_in_c_equal_reference(strings):
    _check_tokens(strings)
    _check_chars(strings)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(nasty, st.lists(nasty, max_size=3)), max_size=6),
       st.sampled_from(["v1", "v2"]))
def test_squad_scores_on_nasty_text(qs, rule):
    preds = [p for p, _ in qs]
    refs = [r if r or rule == "v2" else [""] for _, r in qs]
    for unit in ("token", "char"):
        assert (F.f1(preds, refs, unit=unit, empty_rule=rule, per_question=True).tolist()
                == R.f1(preds, refs, unit=unit, empty_rule=rule, per_question=True))
    assert (F.exact_match(preds, refs, empty_rule=rule, per_question=True).tolist()
            == R.exact_match(preds, refs, empty_rule=rule, per_question=True))
    em, f = F.exact_match_and_f1(preds, refs, unit="char", empty_rule=rule)
    assert em.tolist() == R.exact_match(preds, refs, empty_rule=rule, per_question=True)
    assert f.tolist() == R.f1(preds, refs, unit="char", empty_rule=rule, per_question=True)


@pytest.mark.parametrize(("first", "end"), [
    # planes 0 and 1: every code point with a case mapping (the last is Adlam's U+1E943),
    # every punctuation mark, space, digit and symbol, the emoji
    (0, 0x20000),
    # planes 2 to 16, seven times as many strings (about 30 s against the reference): CJK
    # ideographs, variation selectors, tags, private use and unassigned code points
    pytest.param(0x20000, 0x110000, marks=pytest.mark.slow),
], ids=["planes-0-1", "planes-2-16"])
def test_every_code_point(first, end):
    # each code point next to articles, on either side and alone: its lowercase form, whether
    # it is punctuation, whitespace or a word character all show in the tokens
    strings = []
    for c in map(chr, range(first, end)):
        strings.append(f"A{c}the{c}An{c}x{c}")
    for lo in range(0, len(strings), 1 << 17):
        chunk = strings[lo:lo + (1 << 17)]
        _check_tokens(chunk)
        _check_chars(chunk)
