"""qafast.answers against qafast.reference.answers: random Unicode answers (hypothesis), the edge
cases of the official scripts, and input errors."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qafast import answers as F
from qafast.reference import answers as R
from _examples import examples

# Pieces that hit the normalizers' corners: articles, ASCII and Unicode punctuation, curly
# quotes, en dashes, NBSP and other Unicode spaces, İ, full-width letters, CJK, emoji, ß,
# control characters (\x1c-\x1f split in str.split), and text that normalizes to nothing.
PIECES = ["the", "The", "a", "an", "A", "An", "THE", "paris", "Paris", "tower", "eiffel",
          "don't", "the-end", "A.B.C.", "“quoted”", "‘x’", "–", "—", "-", ",", ".", "!", "_",
          "\u00a0", " ", "  ", "\t", "\n", "\x1c", "\x1f", "\x01", "\u2003", "\u3000", "İ",
          "ı", "ß", "ＴＨＥ", "Ｐａｒｉｓ", "北京", "大学", "北", "，", "。", "《》", "😀",
          "👍🏽", "é", "É", "e\u0301", "2018", "年", "Ω", "ǅ", "ﬃ", "ال", "der", "los", "_a_",
          "a_b", "x²", "٣", "\u0300"]

answer = st.lists(st.sampled_from(PIECES), max_size=6).map("".join) | st.text(max_size=8)
references = st.one_of(answer, st.lists(answer, max_size=4))

NORMALIZERS = ["squad", "drcd", "cmrc", "bioasq", "none", "triviaqa", "mlqa:en", "mlqa:zh", "mlqa:ar",
               "mlqa:de", "mlqa:es", "mlqa:vi", "mlqa:hi", str.upper]
UNITS = ["token", "char"]  # "cmrc" needs nltk for non-CJK text; covered below on CJK text


@st.composite
def questions(draw, allow_empty_refs=True):
    n = draw(st.integers(0, 6))
    preds = [draw(answer) for _ in range(n)]
    refs = [draw(references) for _ in range(n)]
    if not allow_empty_refs:
        refs = [r if isinstance(r, str) or r else [""] for r in refs]
    return preds, refs


def both(fn_fast, fn_ref, *args, **kw):
    fast = fn_fast(*args, per_question=True, **kw)
    ref = fn_ref(*args, per_question=True, **kw)
    assert fast.dtype == np.float64
    assert fast.tolist() == ref  # bit for bit
    if ref:
        assert fn_fast(*args, **kw) == fn_ref(*args, **kw)
    return fast


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(questions(), st.sampled_from(NORMALIZERS), st.sampled_from(UNITS),
       st.sampled_from(["v1", "v2"]))
def test_kernels_equal_reference(q, normalizer, unit, empty_rule):
    preds, refs = q
    if empty_rule == "v1":
        refs = [r if isinstance(r, str) or r else [""] for r in refs]
    both(F.exact_match, R.exact_match, preds, refs, normalizer=normalizer,
         empty_rule=empty_rule)
    f = both(F.f1, R.f1, preds, refs, normalizer=normalizer, unit=unit, empty_rule=empty_rule)
    em2, f2 = F.exact_match_and_f1(preds, refs, normalizer=normalizer, unit=unit,
                                   empty_rule=empty_rule)
    assert em2.tolist() == R.exact_match(preds, refs, normalizer=normalizer,
                                         empty_rule=empty_rule, per_question=True)
    assert f2.tolist() == f.tolist()


@settings(max_examples=examples(300), deadline=None)
@given(st.text() | answer)
def test_squad_normalizer_any_text(text):
    assert F.normalize_squad(text) == R.normalize_squad(text)
    assert F.normalize_drcd(text) == R.normalize_drcd(text)
    assert F.normalize_triviaqa(text) == R.NORMALIZERS["triviaqa"](text)
    for lang in R.MLQA_LANGUAGES:
        assert F.normalize_mlqa(text, lang) == R.normalize_mlqa(text, lang)


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.text(alphabet=st.characters(max_codepoint=127), max_size=12), max_size=8))
def test_squad_ascii_fast_path(texts):
    # every ASCII character, control characters included, through the C normalizer
    refs = [[t, t[::-1]] for t in texts]
    preds = texts[::-1]
    for rule in ("v1", "v2"):
        both(F.f1, R.f1, preds, refs, empty_rule=rule)
        both(F.exact_match, R.exact_match, preds, refs, empty_rule=rule)
        # TriviaQA's: the same C pass with punctuation made a space (non-ASCII strings too,
        # which go through normalize_triviaqa beside the ASCII ones in one vocabulary)
        mixed = [t + "’é" if len(t) % 3 == 0 else t for t in preds]
        both(F.f1, R.f1, mixed, refs, normalizer="triviaqa", empty_rule=rule)
        both(F.exact_match, R.exact_match, mixed, refs, normalizer="triviaqa", empty_rule=rule)


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.tuples(st.text(max_size=10) | answer,
                          st.lists(st.text(max_size=10) | answer, min_size=1, max_size=3)),
                max_size=6))
def test_triviaqa_tokens_equal_reference_on_any_text(pairs):
    # the C pass (ASCII bytes, or code points after str.lower) against TriviaQA's regexes
    preds = [p for p, _ in pairs]
    refs = [r for _, r in pairs]
    both(F.f1, R.f1, preds, refs, normalizer="triviaqa", empty_rule="v1")
    both(F.exact_match, R.exact_match, preds, refs, normalizer="triviaqa", empty_rule="v1")


CJK = st.lists(st.sampled_from(["北", "京", "大", "学", "，", "。", " ", "-", "“", "”", "年"]),
               max_size=7).map("".join)


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.tuples(CJK, st.lists(CJK, min_size=1, max_size=3)), max_size=5),
       st.sampled_from(["v1", "v2"]))
def test_cmrc_lcs_equals_reference(pairs, empty_rule):
    preds = [p for p, _ in pairs]
    refs = [r for _, r in pairs]
    both(F.f1, R.f1, preds, refs, normalizer="cmrc", unit="cmrc", empty_rule=empty_rule)


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.tuples(st.lists(st.one_of(st.none(), answer), max_size=4),
                          st.lists(answer, max_size=3)), min_size=1, max_size=6),
       st.sampled_from([None, 1, 2]), st.sampled_from(["squad", "none", "mlqa:zh"]),
       st.sampled_from(UNITS), st.sampled_from(["v1", "v2"]))
def test_reader_metrics_equal_reference(qs, k, normalizer, unit, empty_rule):
    preds = [p for p, _ in qs]
    refs = [r for _, r in qs]
    kw = dict(k=k, normalizer=normalizer, unit=unit, empty_rule=empty_rule)
    assert F.reader_metrics(preds, refs, **kw) == R.reader_metrics(preds, refs, **kw)


DOCS = st.sampled_from(["d1", "d2", "d3", "d10", "é", "", "中"])


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.tuples(st.lists(DOCS, max_size=6), st.lists(DOCS, max_size=3)),
                min_size=1, max_size=6), st.sampled_from([None, 1, 3]))
def test_retriever_metrics_equal_reference(qs, k):
    ret = [r for r, _ in qs]
    rel = [g for _, g in qs]
    fast = F.retriever_metrics(ret, rel, k=k, per_question=True)
    ref = R.retriever_metrics(ret, rel, k=k, per_question=True)
    assert {m: v.tolist() for m, v in fast.items()} == ref
    assert F.retriever_metrics(ret, rel, k=k) == R.retriever_metrics(ret, rel, k=k)


# ---- golden numbers, worked out by hand from the scripts' rules (see qa-anchors) -------------

@pytest.mark.parametrize("pred, gold, rule, em, f1", [
    ("", "", "v1", 1.0, 0.0),                 # v1.1: empty vs empty -> F1 0, EM 1
    ("", "", "v2", 1.0, 1.0),                 # v2.0: -> 1
    ("the", "a", "v1", 1.0, 0.0),             # both normalize to "": v1.1 inconsistency
    ("the", ["the"], "v2", 1.0, 1.0),         # gold only "the": no-answer under v2
    ("", ["the"], "v2", 1.0, 1.0),
    ("paris", ["the"], "v2", 0.0, 0.0),
    ("", ["the", "Paris"], "v2", 0.0, 0.0),   # "the" dropped, "Paris" stays
    ("", ["the", "Paris"], "v1", 1.0, 0.0),   # "the" kept: EM 1, F1 0
    ("x", [], "v2", 0.0, 0.0),                # no reference: gold [""]
    ("", [], "v2", 1.0, 1.0),
    ("paris paris", "Paris", "v1", 0.0, 2 / 3),
    ("The Eiffel–Tower!", "eiffel–tower", "v2", 1.0, 1.0),
    ("Eiffel-Tower", "eiffel tower", "v2", 0.0, 0.0),   # "-" joins: "eiffeltower"
    ("a\u00a0b", "b", "v2", 1.0, 1.0),
    ("ＴＨＥ end", "end", "v2", 0.0, 2 / 3),
    ("İ", "i", "v2", 0.0, 0.0),                # "i̇" is not "i"
    ("big cat", ["the black cat sat", "dog"], "v1", 0.0, 0.4),
])
def test_squad_edge_cases(pred, gold, rule, em, f1):
    assert F.exact_match([pred], [gold], empty_rule=rule) == em
    assert F.f1([pred], [gold], empty_rule=rule) == pytest.approx(f1, abs=0, rel=1e-15)


def test_other_units_and_normalizers():
    assert F.f1(["ab"], ["abc"], unit="char", empty_rule="v1") == 0.8
    assert F.f1(["北京，大學"], ["北京大學。"], normalizer="drcd", unit="char") == 1.0
    assert F.f1(["大学北京"], ["北京大学"], normalizer="cmrc", unit="cmrc") == 0.5
    assert F.f1(["大学北京"], ["北京大学"], normalizer="mlqa:zh") == 1.0
    assert F.exact_match(["北京 大学"], ["北京大学"], normalizer="cmrc") == 0.0
    assert F.f1(["北京 大学"], ["北京大学"], normalizer="cmrc", unit="cmrc") == 1.0
    assert F.exact_match(["EGFR"], [["egfr", "erbb1"]], normalizer="bioasq") == 1.0
    assert F.exact_match(["Paris"], ["paris"], normalizer="none") == 0.0
    assert F.exact_match(["Paris"], ["PARIS"], normalizer=str.lower) == 1.0
    assert sorted(F.NORMALIZERS) == sorted(R.NORMALIZERS)


def test_per_question_arrays_and_inputs():
    out = F.f1(("a b", "c"), np.array(["a b", "d"], dtype=object), per_question=True)
    assert isinstance(out, np.ndarray) and out.dtype == np.float64 and out.tolist() == [1, 0]
    # references as tuples, numpy arrays and generators of str
    refs = [("x", "a b"), np.array(["c", "zz"]), iter(["q"])]
    assert F.exact_match(["a b", "c", "q"], refs, per_question=True).tolist() == [1, 1, 1]
    assert F.exact_match([], [], per_question=True).shape == (0,)
    # read-only numpy inputs and duplicate references
    assert F.f1(["a"], [["a", "a", "a"]]) == 1.0


def test_errors_name_the_question():
    with pytest.raises(TypeError, match="question 1: the prediction must be a str, not int"):
        F.exact_match(["a", 3], ["a", "b"])
    with pytest.raises(TypeError, match="question 0: a reference must be a str, not NoneType"):
        F.f1(["a"], [["b", None]])
    with pytest.raises(TypeError, match="question 2: the references must be a str or a list"):
        F.f1(["a", "b", "c"], ["a", "b", 5])
    with pytest.raises(ValueError, match="2 predictions but 1 references"):
        F.f1(["a", "b"], ["a"])
    with pytest.raises(ValueError, match="unknown normalizer 'spam'"):
        F.f1(["a"], ["a"], normalizer="spam")
    with pytest.raises(ValueError, match="unknown unit 'word'"):
        F.f1(["a"], ["a"], unit="word")
    with pytest.raises(ValueError, match="unknown empty_rule"):
        F.exact_match(["a"], ["a"], empty_rule="v3")
    with pytest.raises(ValueError, match="question 1 has no reference answer"):
        F.f1(["a", "b"], ["a", []], empty_rule="v1")
    with pytest.raises(ValueError, match="no questions"):
        F.f1([], [])
    with pytest.raises(TypeError, match="predictions must be a sequence"):
        F.f1("abc", ["a", "b", "c"])
    with pytest.raises(TypeError, match="normalizer returned"):
        F.f1(["a"], ["a"], normalizer=lambda s: None)
    with pytest.raises(TypeError, match="question 0: answer 1 must be a str or None"):
        F.reader_metrics([["a", 1]], [["a"]])
    with pytest.raises(ValueError, match="k must be a positive int"):
        F.reader_metrics([["a"]], [["a"]], k=0)
    with pytest.raises(TypeError, match="question 0: document ids must be str"):
        F.retriever_metrics([[1]], [["a"]])


@pytest.mark.parametrize("module", [F, R], ids=lambda m: m.__name__)
def test_docstring_examples(module):
    import doctest
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0 or module is R
