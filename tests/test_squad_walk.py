"""The compiled walk over a SQuAD dataset (``_kernels.squad_flatten``) against its Python form:
same ids and answers, same verdict on non-str values, and a structural problem raises."""

from collections import OrderedDict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qafast import _kernels
from qafast.io import squad as io
from _examples import examples

text = st.one_of(st.text(max_size=4), st.integers(0, 3), st.none())
answers = st.one_of(
    st.lists(st.builds(lambda t: {"text": t, "answer_start": 0}, text), max_size=3),
    st.builds(lambda ts: {"text": ts, "answer_start": [0] * len(ts)}, st.lists(text, max_size=3)),
    st.builds(lambda ts: OrderedDict(text=ts), st.lists(st.text(max_size=3), max_size=2)),
)
question = st.builds(lambda q, a: {"id": q, "question": "?", "answers": a},
                     st.one_of(st.text(max_size=3), st.integers(0, 9)), answers)
paragraph = st.builds(lambda qs: {"context": "c", "qas": qs}, st.lists(question, max_size=3))
article = st.builds(lambda ps: {"title": "t", "paragraphs": ps},
                    st.lists(paragraph, max_size=3) | st.tuples(paragraph))
data = st.lists(article, max_size=4)


@settings(max_examples=examples(150), deadline=None)
@given(data)
def test_walk_equals_python(d):
    ids, ans, ids2, ans2 = [], [], [], []
    ok = _kernels.squad_flatten(d, ids, ans)
    io._flatten_python(d, ids2, ans2)
    assert (ids, ans) == (ids2, ans2)
    assert all(type(x) is list for x in ans)
    every_str = all(type(q) is str for q in ids2) and all(type(t) is str for a in ans2 for t in a)
    assert ok == every_str


@pytest.mark.parametrize("bad", [
    [{"paragraphs": [{"qas": [{"id": "q", "answers": 3}]}]}],
    [{"paragraphs": [{"qas": [{"id": "q", "answers": {"text": "x"}}]}]}],
    [{"paragraphs": [{"qas": [{"id": "q", "answers": [{"txt": "x"}]}]}]}],
    [{"paragraphs": [{"qas": [{"answers": []}]}]}],
    [{"paragraphs": [{"qs": []}]}],
    [{"para": []}],
    [3],
    [{"paragraphs": [{"qas": ["x"]}]}],
])
def test_walk_structural_errors_raise(bad):
    with pytest.raises((KeyError, TypeError, AttributeError)):
        _kernels.squad_flatten(bad, [], [])
    with pytest.raises((KeyError, TypeError, AttributeError)):
        io._flatten_python(bad, [], [])


def test_v1_unknown_prediction_with_repeated_ids_warns():
    # as many predictions as questions, but an id repeats: one prediction is for no question
    from qafast.io.squad import SquadWarning
    from qafast.squad_eval import squad

    data = [{"paragraphs": [{"qas": [{"id": "q", "answers": [{"text": "x b"}]},
                                     {"id": "q", "answers": [{"text": "b"}]}]}]}]
    with pytest.warns(SquadWarning, match="zz"):
        r = squad(data, {"q": "b", "zz": "x"}, version="1.1")
    assert r == {"exact_match": 50.0, "f1": 83.33333333333333}


def test_lookup_and_distinct_count():
    texts, absent, aligned, all_str = _kernels.squad_lookup(["a", "b", "a", "c"],
                                                            {"a": "x", "c": "", "d": "y"})
    assert texts == ["x", None, "x", ""] and absent == 1 and not aligned and all_str
    # keys in the ids' order (equal strings, not the same objects): taken in turn
    ids = ["a", "b" * 3, "é"]
    preds = {"a": "1", "".join(["b"] * 3): "2", "é": "3"}
    assert _kernels.squad_lookup(ids, preds) == (["1", "2", "3"], 0, True, True)
    assert _kernels.squad_lookup(ids + ["z"], preds) == (["1", "2", "3", None], 1, False, True)
    assert _kernels.squad_lookup(ids[:2], preds) == (["1", "2"], 0, False, True)  # "é" unknown
    assert _kernels.squad_lookup(ids[::-1], preds) == (["3", "2", "1"], 0, False, True)
    assert _kernels.squad_lookup(ids, {**preds, "é": 3})[3] is False
    assert _kernels.squad_count_distinct(["a", "b", "a", "é", "é", ""]) == 4
    assert _kernels.squad_count_distinct([]) == 0


def test_nonempty_and_values_str():
    import numpy as np

    items = [[], ["a"], "", "x", None, 0, 3, ()]
    out = np.empty(len(items), dtype=bool)
    _kernels.squad_nonempty(items, out.view(np.uint8))
    assert out.tolist() == [bool(x) for x in items]
    assert _kernels.squad_dict_values_str({"a": "x", "b": ""})
    assert not _kernels.squad_dict_values_str({"a": "x", "b": None})
    assert _kernels.squad_dict_values_str({})


def test_keys_are():
    ids = ["a", "b" * 3, "é"]
    assert _kernels.squad_keys_are({"a": 1, "".join(["b"] * 3): 2, "é": 3}, ids)
    assert not _kernels.squad_keys_are({"a": 1, "é": 3, "bbb": 2}, ids)
    assert not _kernels.squad_keys_are({"a": 1, "bbb": 2}, ids)
    assert not _kernels.squad_keys_are({"a": 1, "bbb": 2, "é": 3, "z": 0}, ids)
    assert _kernels.squad_keys_are({}, [])


@pytest.mark.parametrize("seed", range(20))
def test_argsort_stable_f64_is_numpys_stable_argsort(seed):
    import numpy as np

    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 400))
    x = rng.choice([0.0, -0.0, 0.5, 0.01, 1e-300, -1e-300, 1.0, -2.5, 3e300, -3e300], size=n)
    x = np.where(rng.random(n) < 0.3, rng.normal(size=n), x)
    out = np.empty(n, dtype=np.int64)
    _kernels.argsort_stable_f64(x, out)
    assert out.tolist() == np.argsort(x, kind="stable").tolist()


def test_probs_values():
    import numpy as np

    out = np.empty(3)
    assert _kernels.squad_probs_values({"a": 0.5, "b": 1, "c": 0.0}, ["a", "b", "c"], out) \
        == (True, True)
    assert out.tolist() == [0.5, 1.0, 0.0]
    assert _kernels.squad_probs_values({"a": 0.5, "c": 1, "b": 0.0}, ["a", "b", "c"],
                                       out) == (True, False)
    for bad in (True, "0.5", float("nan"), float("inf"), 10 ** 400, np.float64(0.5)):
        assert _kernels.squad_probs_values({"a": 0.5, "b": bad}, None, out)[0] is False
