"""The fast paths' twins: the kernels that read CPython's own structures give the same
results through the public C API (switched at run time, on every build), and a build with
``QAFAST_PORTABLE=1`` / ``QAFAST_PUBLIC_API_ONLY=1`` compiled what it says."""

import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import qafast
from qafast import _kernels
from _examples import examples

FEATURES = _kernels._build_features()


def _switch(name):
    return os.environ.get(name, "") not in ("", "0")


@pytest.fixture
def private_capi():
    """Runs a test body with the private path on and off; restores it afterwards."""
    before = _kernels._set_private_capi(True)
    yield _kernels._set_private_capi
    _kernels._set_private_capi(before)


def test_build_features_are_consistent():
    if FEATURES["portable"]:
        assert not (FEATURES["sse2"] or FEATURES["target_clones"] or FEATURES["gnu_builtins"]
                    or FEATURES["linux_memory"])
    # the switches are also set while CI tests those builds: the build must have taken them
    if _switch("QAFAST_PORTABLE"):
        assert FEATURES["portable"]
    if _switch("QAFAST_PUBLIC_API_ONLY"):
        assert not FEATURES["private_capi"]


def test_private_capi_switch(private_capi):
    assert private_capi(False) is FEATURES["private_capi"]
    assert private_capi(True) is False
    # on a build without the private path, switching it on leaves it off
    assert private_capi(True) is FEATURES["private_capi"]


answer = st.one_of(st.sampled_from(["", "the Cat", "cat!", "a b", "Zürich", "北京", "x" * 20]),
                   st.text(max_size=12))
question = st.builds(lambda a, i: {"id": f"q{i}", "answers": [{"text": t} for t in a]},
                     st.lists(answer, min_size=1, max_size=4), st.integers(0, 10**6))


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(question, min_size=1, max_size=40, unique_by=lambda q: q["id"]),
       st.lists(answer, min_size=40, max_size=40))
def test_squad_same_with_and_without_private_capi(questions, guesses):
    paragraphs = [{"context": "", "qas": questions[i:i + 3]} for i in range(0, len(questions), 3)]
    dataset = {"version": "1.1", "data": [{"title": "t", "paragraphs": paragraphs}]}
    preds = {q["id"]: g for q, g in zip(questions, guesses)}
    before = _kernels._set_private_capi(True)
    try:
        on = qafast.squad(dataset, preds, version="1.1")
        _kernels._set_private_capi(False)
        off = qafast.squad(dataset, preds, version="1.1")
    finally:
        _kernels._set_private_capi(before)
    assert on == off


@pytest.mark.parametrize("n", [1, 17, 3000])
def test_intern_and_walk_same_with_and_without_private_capi(private_capi, n):
    # long enough for the prefetch pipelines (8 and 4 questions ahead) and table growth
    rng = np.random.default_rng(n)
    words = [f"w{i}" for i in range(n // 2 + 1)] + ["Zürich", "北京", ""]
    qas = [{"id": f"q{i}", "answers": [{"text": str(rng.choice(words))}
                                       for _ in range(int(rng.integers(0, 4)))]}
           for i in range(n)]
    data = [{"paragraphs": [{"qas": qas[i:i + 5]} for i in range(0, n, 5)]}]
    preds = [str(rng.choice(words)) for _ in range(n)]
    results = []
    for on in (True, False):
        private_capi(on)
        ids, texts = [], []
        all_str, off = _kernels.squad_flatten_flat(data, ids, texts)
        # fresh objects each time: no str hash cached by the other pass
        p = [(s + ".")[:-1] for s in preds]
        t = [(s + ".")[:-1] for s in texts]
        strings = []
        pred_sid = np.empty(n, np.int32)
        ref_sid = np.empty(len(t), np.int32)
        assert _kernels.answer_intern_flat(p, t, np.asarray(off), strings, pred_sid,
                                           ref_sid) is None
        results.append((all_str, ids, texts, list(np.asarray(off)), strings,
                        pred_sid.tolist(), ref_sid.tolist()))
    assert results[0] == results[1]
