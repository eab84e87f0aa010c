"""No-answer probabilities compared as the v2.0 script compares them, in Python.

The script runs ``na_probs[qid] > thresh``, ``sorted(na_probs, key=...)`` and ``!=`` over
whatever ``json.load`` produced: integers of any size (exact), floats, ``true``/``false``
(1/0), and the NaN, Infinity and -Infinity that Python's json reads. float64 copies would
round integers beyond 2**53 into ties, and a NaN sorts where Python's merge steps leave it
(which depends on its neighbours), not last as numpy puts it. The golden values below are
the official v2.0 script's own output on these files (run locally, with ``-p`` for the
``pr_*`` keys); the random cases compare qafast.squad with qafast.reference.squad, the
plain-Python specification, key for key.
"""

import json
import math
import random
import warnings

import numpy as np
import pytest

from qafast import cli
from qafast import squad_eval as fast
from qafast.io.squad import na_probs_with_values
from qafast.reference import squad as spec

NAN, INF, BIG = math.nan, math.inf, 10 ** 400

DATA = {"version": "v2.0", "data": [{"paragraphs": [{"qas": [
    {"id": "a", "answers": [{"text": "Paris", "answer_start": 0}]},
    {"id": "b", "answers": []},
    {"id": "c", "answers": []},
    {"id": "d", "answers": [{"text": "big red dog", "answer_start": 0}]},
    {"id": "e", "answers": [{"text": "cat", "answer_start": 0}]}]}]}]}
PREDS = {"a": "paris", "b": "dog", "c": "", "d": "red dog", "e": "cat"}

NA_NAN = {"a": NAN, "b": 0.5, "c": NAN, "d": 0.9, "e": 0.1}
NA_INTS = {"a": 2 ** 53 + 1, "b": 2 ** 53, "c": float(2 ** 53), "d": BIG, "e": True}
NA_MIXED = {"a": INF, "b": -INF, "c": False, "d": NAN, "e": 1}

SPLITS_RIGHT = {"exact": 60.0, "f1": 76.0, "total": 5, "HasAns_exact": 66.66666666666667,
                "HasAns_f1": 93.33333333333333, "HasAns_total": 3, "NoAns_exact": 50.0,
                "NoAns_f1": 50.0, "NoAns_total": 2}
# what evaluate-v2.0.py -n <file> -p <dir> printed for each file
OFFICIAL = [
    (NA_NAN, 1.0, {**SPLITS_RIGHT, "best_exact": 60.0, "best_exact_thresh": NAN,
                   "best_f1": 76.0, "best_f1_thresh": 0.9, "pr_exact_ap": 50.0,
                   "pr_f1_ap": 64.93333333333334, "pr_oracle_ap": 70.0}),
    (NA_INTS, 1.0, {"exact": 60.0, "f1": 60.0, "total": 5, "HasAns_exact": 33.333333333333336,
                    "HasAns_f1": 33.333333333333336, "HasAns_total": 3, "NoAns_exact": 100.0,
                    "NoAns_f1": 100.0, "NoAns_total": 2, "best_exact": 60.0,
                    "best_exact_thresh": True, "best_f1": 76.0, "best_f1_thresh": BIG,
                    "pr_exact_ap": 50.0, "pr_f1_ap": 64.93333333333334, "pr_oracle_ap": 70.0}),
    # -t nan: nothing is greater than NaN, so 10**400 no longer fires on d
    (NA_INTS, NAN, {**SPLITS_RIGHT, "best_exact": 60.0, "best_exact_thresh": True,
                    "best_f1": 76.0, "best_f1_thresh": BIG, "pr_exact_ap": 50.0,
                    "pr_f1_ap": 64.93333333333334, "pr_oracle_ap": 70.0}),
    (NA_MIXED, 1.0, {"exact": 40.0, "f1": 56.0, "total": 5, "HasAns_exact": 33.333333333333336,
                     "HasAns_f1": 60.0, "HasAns_total": 3, "NoAns_exact": 50.0,
                     "NoAns_f1": 50.0, "NoAns_total": 2, "best_exact": 60.0,
                     "best_exact_thresh": INF, "best_f1": 76.0, "best_f1_thresh": NAN,
                     "pr_exact_ap": 27.77777777777778, "pr_f1_ap": 42.71111111111111,
                     "pr_oracle_ap": 47.77777777777778}),
]


def same(a, b):
    """Equal dicts: same keys in the same order, same types, equal values (NaN equal to NaN)."""
    assert list(a) == list(b)
    for k in a:
        assert type(a[k]) is type(b[k]), (k, a[k], b[k])
        assert a[k] == b[k] or (a[k] != a[k] and b[k] != b[k]), (k, a[k], b[k])


@pytest.mark.parametrize("impl", [fast.squad, spec.squad], ids=["fast", "reference"])
@pytest.mark.parametrize("na, thresh, expected", OFFICIAL)
def test_official_script_output(impl, na, thresh, expected):
    same(impl(DATA, PREDS, na_probs=dict(na), na_prob_thresh=thresh), expected)


@pytest.mark.parametrize("na, thresh, expected", OFFICIAL)
def test_cli_prints_what_the_script_prints(na, thresh, expected, tmp_path, capsys):
    paths = []
    for name, obj in (("data", DATA), ("pred", PREDS), ("na", na)):
        paths.append(str(tmp_path / f"{name}.json"))
        with open(paths[-1], "w") as f:
            json.dump(obj, f)
    code = cli.main(["squad", *paths[:2], "-n", paths[2], "-t", str(thresh)])
    out = capsys.readouterr().out
    assert code == 0
    shown = {k: v for k, v in expected.items() if not k.startswith("pr_")}
    assert out == json.dumps(shown, indent=2) + "\n"     # NaN, Infinity, true and 10**400 too


def test_integers_beyond_2_53_are_compared_exactly():
    # a (HasAns, right) and b (NoAns, answered "dog"). Python: b (2**53) < a (2**53 + 1), so
    # the walk meets b first: 1 -> 0 -> 1, never above the start; best 50.0 at 0.0. As float64
    # the two tie and a comes first (dict order): 1 -> 2, best 100.0 at 2**53 + 1.
    ds = {"data": [{"paragraphs": [{"qas": [{"id": "a", "answers": [{"text": "x"}]},
                                            {"id": "b", "answers": []}]}]}]}
    probs = {"a": 2 ** 53 + 1, "b": float(2 ** 53)}
    r = fast.squad(ds, {"a": "x", "b": "dog"}, na_probs=probs)
    assert (r["best_exact"], r["best_exact_thresh"]) == (50.0, 0.0)
    # the threshold too: 2**53 + 1 > 2**53 fires on a (scored 0); float(2**53) does not on b
    r = fast.squad(ds, {"a": "x", "b": "dog"}, na_probs=probs, na_prob_thresh=2 ** 53)
    assert (r["exact"], r["HasAns_exact"], r["NoAns_exact"]) == (0.0, 0.0, 0.0)


def test_nan_sorts_where_pythons_sort_leaves_it():
    # sorted([nan, 0.5, 0.1]) is [nan, 0.1, 0.5]. From 2 NoAns credits, a (HasAns, right, at
    # NaN) walks first: 3 (best, at NaN); c (NoAns, answered ""): 3; b (NoAns, "dog"): 2.
    # In numpy's order (0.1, 0.5, NaN) the walk is 2, 1, 2: best 2 of 3 at 0.0.
    ds = {"data": [{"paragraphs": [{"qas": [{"id": "a", "answers": [{"text": "x"}]},
                                            {"id": "b", "answers": []},
                                            {"id": "c", "answers": []}]}]}]}
    r = fast.squad(ds, {"a": "x", "b": "dog", "c": ""},
                   na_probs={"a": NAN, "b": 0.5, "c": 0.1})
    assert r["best_exact"] == 100.0 * 3 / 3
    assert math.isnan(r["best_exact_thresh"])
    # no probability is greater than NaN, and NaN is greater than none: nothing fires
    r = fast.squad(ds, {"a": "x", "b": "dog", "c": ""},
                   na_probs={"a": NAN, "b": 0.5, "c": 0.1}, na_prob_thresh=NAN)
    assert (r["exact"], r["HasAns_exact"], r["NoAns_exact"]) == (100.0 * 2 / 3, 100.0, 50.0)


def test_bools_are_ints_and_come_back_as_given():
    ds = {"data": [{"paragraphs": [{"qas": [{"id": "a", "answers": [{"text": "x"}]},
                                            {"id": "b", "answers": []}]}]}]}
    r = fast.squad(ds, {"a": "x", "b": "dog"}, na_probs={"a": False, "b": True},
                   na_prob_thresh=0.5)
    assert r["best_exact_thresh"] is False and r["best_exact"] == 100.0
    assert (r["exact"], r["NoAns_exact"]) == (100.0, 100.0)      # True > 0.5 fires on b


def test_numpy_scalars_compare_as_the_numbers_they_equal():
    # numpy cannot compare np.float32(0.5) with 10**400 (OverflowError); as the Python
    # numbers they equal they compare exactly, and a threshold comes back as it was given
    ds = {"data": [{"paragraphs": [{"qas": [{"id": "a", "answers": [{"text": "x"}]},
                                            {"id": "b", "answers": []},
                                            {"id": "c", "answers": []}]}]}]}
    preds = {"a": "x", "b": "dog", "c": ""}
    plain = {"a": 0.5, "b": BIG, "c": NAN}
    numpy = {"a": np.float32(0.5), "b": BIG, "c": np.float64(NAN)}
    for thresh in (1.0, BIG, np.float64(0.25)):
        got = fast.squad(ds, preds, na_probs=numpy, na_prob_thresh=thresh)
        want = fast.squad(ds, preds, na_probs=plain, na_prob_thresh=float(thresh)
                          if thresh is not BIG else BIG)
        same({k: v for k, v in got.items() if not k.endswith("thresh")},
             {k: v for k, v in want.items() if not k.endswith("thresh")})
        # walk a (0.5), b (10**400), c (NaN) from 2 NoAns credits: 3 at a, then 2, 2
        for k in ("best_exact_thresh", "best_f1_thresh"):
            assert got[k] is numpy["a"] and want[k] == 0.5


def test_float64_path_is_kept_for_ordinary_probabilities():
    ids = ["a", "b", "c"]
    for probs in ({"a": 0.5, "b": 1, "c": 0.0}, {"a": 2 ** 53, "b": -2 ** 53, "c": INF},
                  {"a": True, "b": np.float32(0.25), "c": -INF}):
        assert na_probs_with_values(probs, ids)[1] is not None, probs
    for probs in ({"a": NAN, "b": 1, "c": 0.0}, {"a": 2 ** 53 + 1, "b": 0.5, "c": 0.0},
                  {"a": BIG, "b": 0.5, "c": 0.0}, {"a": np.float64("nan"), "b": 1, "c": 0}):
        assert na_probs_with_values(probs, ids)[1] is None, probs


POOL = [0.0, 0.1, 0.5, 1.0, 1, 0, True, False, NAN, NAN, INF, -INF, 2 ** 53, 2 ** 53 + 1,
        2 ** 53 + 2, float(2 ** 53), BIG, -BIG, 2, -1, 1e308]
THRESHOLDS = [1.0, 0.5, NAN, INF, -INF, 0.0, 2 ** 53, True, BIG]
WORDS = ["paris", "the", "dog", "red", "", "cat"]


@pytest.mark.parametrize("seed", range(60))
def test_adversarial_probabilities_match_the_specification(seed):
    rng = random.Random(seed)
    n = rng.randint(1, 12)
    qas = []
    for i in range(n):
        golds = [" ".join(rng.choices(WORDS, k=rng.randint(1, 2)))
                 for _ in range(rng.randint(0, 2))]
        qas.append({"id": f"q{i}", "answers": [{"text": g} for g in golds]})
    data = {"data": [{"paragraphs": [{"qas": qas}]}]}
    preds = {f"q{i}": " ".join(rng.choices(WORDS, k=rng.randint(0, 2))) for i in range(n)
             if rng.random() < 0.85}
    ids = [f"q{i}" for i in range(n)]
    rng.shuffle(ids)
    pool = rng.sample(POOL, k=rng.randint(1, 7))
    probs = {q: rng.choice(pool) for q in ids}
    if rng.random() < 0.3:
        probs["zz"] = rng.choice(pool)            # an id the dataset lacks: sorted, then dropped
    thresh = rng.choice(THRESHOLDS)
    for missing in ("skip", "zero"):
        results = []
        for impl in (fast.squad, spec.squad):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    results.append(impl(data, preds, na_probs=probs, na_prob_thresh=thresh,
                                        missing=missing))
                except ValueError:
                    results.append(ValueError)
        if results[0] is ValueError or results[1] is ValueError:
            assert results[0] is results[1]
        else:
            same(*results)
