"""qafast.squad against qafast.reference.squad, the plain-Python specification, on random input.

Datasets are small, so that ids repeat, splits go empty, probabilities tie and predictions go
missing often. Answers mix ASCII punctuation, articles, case, non-ASCII punctuation, NBSP, CJK,
the dotted capital I (which lowercases to two code points) and empty strings. Results must be
equal as dicts: same keys, same order, bit-identical floats, same types.
"""

import warnings

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qafast import squad_eval as fast
from qafast.reference import squad as spec
from _examples import examples

WORDS = ["the", "The", "a", "An", "paris", "Paris", "dog", "dog.", "red-dog", "don't", "–",
         "“cat”", "北京", "大学", "İstanbul", "ß", "ＴＨＥ", "a\u00a0b", "", " ", "!", "x,y"]
IDS = ["q1", "q2", "q3", "q4", "q5", "é", "中"]
PROBS = [0.0, 0.1, 0.5, 0.5, 0.9, 1.0, 0, 1, 0.25]

answer = st.lists(st.sampled_from(WORDS), max_size=4).map(" ".join) | st.text(max_size=6)
question = st.tuples(st.sampled_from(IDS), st.lists(answer, max_size=3), st.booleans())


def to_dataset(questions, split):
    qas = [{"id": q, "answers": {"text": g, "answer_start": [0] * len(g)} if hf
            else [{"text": t} for t in g]} for q, g, hf in questions]
    paragraphs = [{"qas": qas[:split]}, {"qas": qas[split:]}]
    return {"version": "v2.0", "data": [{"paragraphs": paragraphs}]}


@st.composite
def cases(draw):
    questions = draw(st.lists(question, min_size=1, max_size=8))
    split = draw(st.integers(0, len(questions)))
    ids = list(dict.fromkeys(q for q, _, _ in questions))
    preds = {q: draw(answer) for q in ids if draw(st.integers(0, 5))}   # 1 in 6 missing
    if draw(st.booleans()):
        preds["zz"] = "stray"
    probs = None
    if draw(st.booleans()):
        order = draw(st.permutations(ids))
        probs = {q: draw(st.sampled_from(PROBS)) for q in order}
    thresh = draw(st.sampled_from([1.0, 0.5, 0.0, -1.0, 0.25]))
    return to_dataset(questions, split), preds, probs, thresh


def both(*args, **kw):
    """Each implementation's result, or the type of exception it raised."""
    out = []
    for fn in (fast.squad, spec.squad):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out.append(fn(*args, **kw))
        except ValueError:
            out.append(ValueError)
    return out


def same(a, b):
    assert type(a) is type(b)
    if isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            assert type(a[k]) is type(b[k]), k
            assert a[k] == b[k], (k, a[k], b[k])
    else:
        assert a == b


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases(), st.sampled_from([None, "zero", "skip"]))
def test_v2_matches_reference(case, missing):
    ds, preds, probs, thresh = case
    same(*both(ds, preds, version="2.0", na_probs=probs, na_prob_thresh=thresh,
               missing=missing))


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases(), st.sampled_from([None, "zero", "skip"]))
def test_v1_matches_reference(case, missing):
    ds, preds, _, _ = case
    same(*both(ds, preds, version="1.1", missing=missing))


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.floats(0, 1) | st.sampled_from([0.1, 0.2, 0.3, 1e-17]), max_size=50))
def test_sequential_sum_is_pythons(values):
    assert fast._seq_sum(np.array(values, dtype=np.float64)) == sum(values, 0)
