"""Average precision from curves (seed 001): the seed's number, scikit-learn's AP to the
last bit, VOC and COCO, the kernels against qafast.reference.curves, and bad input."""

import json
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qafast.cli import main
from qafast.curves import (
    UndefinedMetricWarning,
    average_precision,
    precision_recall_curve,
    threshold_average_precision,
    threshold_precision_recall,
)
from qafast.reference import curves as ref
from _examples import examples

SEED_Y = ["positive", "negative", "negative", "positive", "positive", "positive", "negative",
          "positive", "negative", "positive", "positive", "positive", "positive", "negative",
          "negative", "negative"]
SEED_S = [0.7, 0.3, 0.5, 0.6, 0.55, 0.9, 0.4, 0.2, 0.4, 0.3, 0.7, 0.5, 0.8, 0.2, 0.3, 0.35]
SEED_T = np.arange(start=0.2, stop=0.7, step=0.05)


def test_seed_001_threshold_sweep_exactly():
    # what seed 001's script prints (run with scikit-learn 1.9.1)
    assert threshold_average_precision(SEED_Y, SEED_S, thresholds=SEED_T,
                                       pos_label="positive") == 0.8898809523809523
    y = [int(v == "positive") for v in SEED_Y]
    assert ref.threshold_ap(y, SEED_S, list(SEED_T)) == 0.8898809523809523
    p, r = threshold_precision_recall(y, SEED_S, thresholds=SEED_T)
    assert p.tolist() == [0.5625, 0.5714285714285714, 0.5714285714285714, 0.6363636363636364,
                          0.7, 0.875, 0.875, 1.0, 1.0, 1.0]
    assert r.tolist()[:3] == [1.0, 0.8888888888888888, 0.8888888888888888]


def test_seed_sweep_matches_sklearn_scores_when_installed():
    metrics = pytest.importorskip("sklearn.metrics")
    y = np.array([int(v == "positive") for v in SEED_Y])
    s = np.array(SEED_S)
    thresholds = [0.95, 0.5, 0.2, 0.49999999999999994]
    p, r = threshold_precision_recall(y, s, thresholds=thresholds)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for t, pi, ri in zip(thresholds, p, r):
            pred = (s >= t).astype(int)
            assert pi == metrics.precision_score(y, pred)
            assert ri == metrics.recall_score(y, pred)


SCORES = [0.0, -0.0, 0.1, 0.25, 0.5, 0.7, 1.0, -1.0, 1e-300, 3.0, float("inf")]


@st.composite
def curve_cases(draw):
    n = draw(st.integers(1, 300))
    y = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    if not any(y):
        y[draw(st.integers(0, n - 1))] = 1
    if draw(st.booleans()):
        s = draw(st.lists(st.sampled_from(SCORES), min_size=n, max_size=n))
    else:
        s = draw(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=n, max_size=n))
    return y, s


@settings(max_examples=examples(150), deadline=None)
@given(curve_cases())
def test_kernels_match_reference(case):
    y, s = case
    assert average_precision(y, s) == ref.step_ap(y, s)
    assert average_precision(y, s, method="voc") == ref.voc_ap(y, s)
    assert average_precision(y, s, method="voc11") == ref.voc11_ap(y, s)
    assert average_precision(y, s, method="coco") == ref.coco_ap(y, s)
    extra = sum(y) + 3
    assert average_precision(y, s, method="coco", n_positives=extra) == \
        ref.coco_ap(y, s, extra)
    p, r, t = precision_recall_curve(y, s)
    rp, rr, rt = ref.precision_recall_curve(y, s)
    assert (p.tolist(), r.tolist(), t.tolist()) == (rp, rr, rt)
    ts = sorted(set(s))[:5] + [0.3]
    assert threshold_average_precision(y, s, thresholds=ts) == ref.threshold_ap(y, s, ts)


@settings(max_examples=examples(150), deadline=None)
@given(curve_cases())
def test_step_ap_equals_sklearn_to_the_last_bit(case):
    metrics = pytest.importorskip("sklearn.metrics")
    y, s = case
    s = [5.0 if v == float("inf") else v for v in s]  # scikit-learn rejects infinity
    assert average_precision(y, s) == metrics.average_precision_score(y, s)
    p, r, t = precision_recall_curve(y, s)
    sp, sr, st_ = metrics.precision_recall_curve(y, s)
    assert p.tolist() == sp.tolist() and r.tolist() == sr.tolist()
    assert np.array_equal(t, st_)


def voc_devkit_ap(y, s, npos, use_07):
    """The PASCAL VOC devkit's steps (voc_eval + voc_ap), transcribed in numpy, with a
    stable sort so that ties are defined."""
    order = np.argsort(-np.asarray(s, dtype=float), kind="stable")
    tp = np.cumsum(np.asarray(y, dtype=float)[order])
    fp = np.cumsum(1 - np.asarray(y, dtype=float)[order])
    rec = tp / float(npos)
    prec = tp / np.maximum(tp + fp, np.finfo(np.float64).eps)
    if use_07:
        ap = 0.0
        for t in np.arange(0.0, 1.1, 0.1):
            p = 0 if np.sum(rec >= t) == 0 else np.max(prec[rec >= t])
            ap = ap + p / 11.0
        return ap
    mrec = np.concatenate(([0.0], rec, [1.0]))
    mpre = np.concatenate(([0.0], prec, [0.0]))
    for i in range(mpre.size - 1, 0, -1):
        mpre[i - 1] = np.maximum(mpre[i - 1], mpre[i])
    i = np.where(mrec[1:] != mrec[:-1])[0]
    return np.sum((mrec[i + 1] - mrec[i]) * mpre[i + 1])


def coco_accumulate_ap(y, s, npos):
    """pycocotools COCOeval.accumulate's steps for one category, transcribed in numpy."""
    order = np.argsort(-np.asarray(s, dtype=float), kind="mergesort")
    tps = np.asarray(y, dtype=bool)[order]
    tp = np.cumsum(tps).astype(float)
    fp = np.cumsum(~tps).astype(float)
    rc = tp / npos
    pr = (tp / (fp + tp + np.spacing(1))).tolist()
    for i in range(len(tp) - 1, 0, -1):
        if pr[i] > pr[i - 1]:
            pr[i - 1] = pr[i]
    rec_thrs = np.linspace(0.0, 1.00, int(np.round((1.00 - 0.0) / 0.01)) + 1, endpoint=True)
    inds = np.searchsorted(rc, rec_thrs, side="left")
    q = np.zeros(len(rec_thrs))
    for ri, pi in enumerate(inds):
        if pi < len(pr):
            q[ri] = pr[pi]
    return np.mean(q)


@settings(max_examples=examples(100), deadline=None)
@given(curve_cases(), st.integers(0, 3))
def test_voc_and_coco_as_their_tools(case, missed):
    y, s = case
    npos = sum(y) + missed
    assert average_precision(y, s, method="voc", n_positives=npos) == \
        voc_devkit_ap(y, s, npos, False)
    assert average_precision(y, s, method="voc11", n_positives=npos) == \
        voc_devkit_ap(y, s, npos, True)
    assert average_precision(y, s, method="coco", n_positives=npos) == \
        coco_accumulate_ap(y, s, npos)


def test_large_input_crosses_the_radix_digits():
    rng = np.random.default_rng(7)
    s = np.concatenate([rng.random(20_000), rng.integers(0, 5, 20_000) / 4, -rng.random(100)])
    y = rng.integers(0, 2, len(s))
    assert average_precision(y, s) == ref.step_ap(y.tolist(), s.tolist())
    assert average_precision(y, s, method="coco") == ref.coco_ap(y.tolist(), s.tolist())


@pytest.mark.parametrize("y, s, kw, exc, words", [
    ([0, 2], [0.1, 0.2], {}, ValueError, r"y_true\[1\] is 2, not 0 or 1"),
    (["a", "b"], [0.1, 0.2], {}, ValueError, r"y_true\[0\] is 'a'"),
    ([0, 1], [0.1, float("nan")], {}, ValueError, r"y_score\[1\] is NaN"),
    ([0, 1], [0.1], {}, ValueError, "2 samples but y_score has 1"),
    ([], [], {}, ValueError, "no samples"),
    ([0, 0], [0.1, 0.2], {"method": "voc"}, ValueError, "'voc' average precision is undefined"),
    ([0, 0], [0.1, 0.2], {"method": "coco"}, ValueError, "no positive sample"),
    ([0, 1], ["a", "b"], {}, TypeError, "y_score must be numbers"),
    ([[0, 1]], [[0.1, 0.2]], {}, ValueError, "1-D"),
    ([0, 1], [0.1, 0.2], {"method": "roc"}, ValueError, "'method' parameter"),
    ([0, 1], [0.1, 0.2], {"method": "voc", "n_positives": 0}, ValueError, "n_positives"),
    (["a", "b", "c"], [0.1, 0.2, 0.3], {"pos_label": "a"}, ValueError, "two classes"),
])
def test_bad_input(y, s, kw, exc, words):
    with pytest.raises(exc, match=words):
        average_precision(y, s, **kw)


NO_POSITIVE = "No positive class found in y_true, recall is set to one for all thresholds."


@pytest.mark.parametrize("y, s", [([0, 0, 0], [0.1, 0.5, 0.3]), ([0], [0.2]),
                                  ([0, 0], [0.5, 0.5]), ([0, 0, 0], [-0.0, 0.0, 1.0])])
def test_no_positive_step_ap_is_sklearns_zero(y, s):
    # scikit-learn 1.9.1: a UserWarning, recall set to one everywhere, so AP 0.0
    with pytest.warns(UndefinedMetricWarning, match=NO_POSITIVE):
        ap = average_precision(y, s)
    assert ap == 0.0 and repr(ap) == "0.0" and type(ap) is float
    with pytest.warns(UndefinedMetricWarning, match=NO_POSITIVE):
        p, r, t = precision_recall_curve(y, s)
    assert r.tolist() == [1.0] * (len(r) - 1) + [0.0]
    assert p.tolist() == [0.0] * (len(p) - 1) + [1.0]
    assert (p.tolist(), r.tolist(), t.tolist()) == ref.precision_recall_curve(y, s)
    assert ref.step_ap(y, s) == 0.0
    # labels named by pos_label, none of them positive
    with pytest.warns(UndefinedMetricWarning):
        assert average_precision(["n"] * len(y), s, pos_label="p") == 0.0
    # the warning is a UserWarning that points at the caller
    with pytest.warns(UserWarning) as record:
        average_precision(y, s)
    assert record[0].filename == __file__


def test_no_positive_other_methods():
    y, s = [0, 0, 0], [0.1, 0.5, 0.3]
    # VOC and COCO have no value without ground truths (their tools give NaN, 0 or skip)
    for method in ("voc", "voc11", "coco"):
        with pytest.raises(ValueError, match="n_positives"):
            average_precision(y, s, method=method)
        # with ground truths that were all missed, AP is 0
        assert average_precision(y, s, method=method, n_positives=2) == 0.0
    # the seed's sweep: recall 0 as recall_score gives it, so AP 0.0
    with pytest.warns(UndefinedMetricWarning, match="Recall is ill-defined") as record:
        assert threshold_average_precision(y, s, thresholds=[0.2, 0.4]) == 0.0
    assert len(record) == 1
    assert ref.threshold_ap(y, s, [0.2, 0.4]) == 0.0
    with pytest.warns(UndefinedMetricWarning):
        p, r = threshold_precision_recall(y, s, thresholds=[0.2, 0.9])
    assert p.tolist() == [0.0, 0.0] and r.tolist() == [0.0, 0.0]


@settings(max_examples=examples(100), deadline=None)
@given(st.integers(1, 40).flatmap(lambda n: st.lists(st.sampled_from(SCORES[:-1]), min_size=n,
                                                     max_size=n)))
def test_no_positive_equals_sklearn(s):
    metrics = pytest.importorskip("sklearn.metrics")
    y = [0] * len(s)
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        want = metrics.average_precision_score(y, s)
        sp, sr, st_ = metrics.precision_recall_curve(y, s)
    with pytest.warns(UndefinedMetricWarning) as ours:
        got = average_precision(y, s)
        p, r, t = precision_recall_curve(y, s)
    assert repr(got) == repr(want)
    assert p.tolist() == sp.tolist() and r.tolist() == sr.tolist() and np.array_equal(t, st_)
    # the same message, and a UserWarning like theirs
    assert {str(w.message) for w in theirs} == {str(w.message) for w in ours} == {NO_POSITIVE}
    assert all(issubclass(w.category, UserWarning) for w in theirs)
    ts = sorted(set(s))[:3]
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        recalls = [metrics.recall_score(y, (np.asarray(s) >= x).astype(int)) for x in ts]
    with pytest.warns(UndefinedMetricWarning) as ours:
        assert threshold_precision_recall(y, s, thresholds=ts)[1].tolist() == recalls
    assert str(ours[0].message) in {str(w.message) for w in theirs}


def test_cli_with_no_positive_label(tmp_path, capsys):
    f = tmp_path / "scores.txt"
    f.write_text("0 0.5\n0 0.25\n")
    assert main(["ap", str(f), "--thresholds", "0.3", "-o", "json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out) == {"step": 0.0, "threshold": 0.0}
    assert err.splitlines() == [
        f"qafast ap: {NO_POSITIVE}",
        "qafast ap: Recall is ill-defined and being set to 0.0 due to no true samples. Use "
        "`zero_division` parameter to control this behavior.",
        "qafast ap: no positive label, so voc, voc11 and coco AP are undefined and left out"]


def test_cli(tmp_path, capsys):
    f = tmp_path / "scores.txt"
    y = [int(v == "positive") for v in SEED_Y]
    f.write_text("".join(f"{a}\t{b!r}\n" for a, b in zip(y, SEED_S)))
    ts = ",".join(repr(float(t)) for t in SEED_T)
    assert main(["ap", str(f), "--thresholds", ts, "-o", "json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["threshold"] == 0.8898809523809523
    assert res["step"] == average_precision(y, SEED_S)
    assert set(res) == {"step", "voc", "voc11", "coco", "threshold"}
    f.write_text("1 0.5\n2 x\n")
    assert main(["ap", str(f)]) == 2
    assert "line 2" in capsys.readouterr().err


def test_many_thresholds_take_the_binary_search():
    rng = np.random.default_rng(3)
    s = np.round(rng.random(2000), 2)
    y = rng.integers(0, 2, len(s))
    ts = np.concatenate([np.linspace(1.0, 0.0, 101), [0.5, 0.5, -1.0, 2.0]])
    assert threshold_average_precision(y, s, thresholds=ts) == \
        ref.threshold_ap(y.tolist(), s.tolist(), ts.tolist())
    assert threshold_average_precision(y, s, thresholds=ts[:50]) == \
        ref.threshold_ap(y.tolist(), s.tolist(), ts[:50].tolist())
