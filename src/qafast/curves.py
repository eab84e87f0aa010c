"""Average precision from precision-recall curves: a sweep over given thresholds, scikit-learn's
step-wise AP, PASCAL VOC all-point and 11-point, and COCO 101-point.

Each kernel sorts once, stably, by score descending, and sweeps; the threshold sweep needs
no sort (each sample is counted under the largest threshold it reaches). The definitions, in plain
Python, are :mod:`qafast.reference.curves`.

With no positive sample, recall is undefined. :func:`precision_recall_curve` and
``average_precision(method="step")`` then do what scikit-learn 1.9 does (recall 1 at every
threshold, so AP 0.0) and the threshold sweep what ``sklearn.metrics.recall_score`` does
(recall 0), each with an :class:`UndefinedMetricWarning`. VOC and COCO AP raise
``ValueError`` unless ``n_positives`` is given: their tools disagree there (VOC's all-point
AP is NaN, its 11-point AP 0, and COCO leaves the class out of its mean).
"""

from __future__ import annotations

import sys

import numpy as np

from . import _kernels
from .errors import InputError, InputTypeError

__all__ = ["UndefinedMetricWarning", "average_precision", "precision_recall_curve",
           "threshold_average_precision", "threshold_precision_recall"]

_METHODS = {"step": -1, "voc": 0, "voc11": 1, "coco": 2}


class UndefinedMetricWarning(UserWarning):
    """A value that is undefined for the input (recall with no positive sample), set as
    scikit-learn sets it; the message is scikit-learn's, so filters on it apply to both."""


# scikit-learn 1.9's messages (precision_recall_curve; recall_score)
_NO_POSITIVE = ("No positive class found in y_true, recall is set to one for all "
                "thresholds.")
_NO_TRUE_SAMPLES = ("Recall is ill-defined and being set to 0.0 due to no true samples. Use "
                    "`zero_division` parameter to control this behavior.")


def _warn(message):
    from ._warn import warn

    warn(message, UndefinedMetricWarning)


def _prepare(y_true, y_score, pos_label):
    y = np.asarray(y_true)
    s = np.asarray(y_score)
    if y.ndim != 1 or s.ndim != 1:
        raise InputError(f"y_true and y_score must be 1-D, got shapes {y.shape} and {s.shape}")
    if len(y) != len(s):
        raise InputError(f"y_true has {len(y)} samples but y_score has {len(s)}")
    if len(y) == 0:
        raise InputError("no samples: y_true and y_score are empty")
    if s.dtype.kind not in "biuf":
        raise InputTypeError(f"y_score must be numbers, got dtype {s.dtype}")
    s = np.ascontiguousarray(s, dtype=np.float64)
    nan = np.isnan(s)
    if nan.any():
        raise InputError(f"y_score[{int(np.flatnonzero(nan)[0])}] is NaN")
    if pos_label is not None:
        values = set(y.tolist())
        if len(values) > 2:
            raise InputError(f"y_true must hold two classes, got {len(values)}: "
                             f"{sorted(map(repr, values))[:5]}")
        positive = np.asarray(y == pos_label)
        if positive.shape != y.shape:
            # a pos_label whose own == answered for numpy's
            raise InputError(f"pos_label {pos_label!r}: comparing y_true with it gave shape "
                             f"{positive.shape}, not {y.shape}")
        return np.ascontiguousarray(positive.astype(bool), dtype=np.int8), s
    if y.dtype.kind in "biuf":
        bad = ~((y == 0) | (y == 1))
    else:
        bad = np.array([not isinstance(v, (bool, int, float, np.number, np.bool_))
                        or v not in (0, 1) for v in y.tolist()], dtype=bool)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(f"y_true[{i}] is {y[i:i + 1].tolist()[0]!r}, not 0 or 1; pass "
                         "pos_label for other labels")
    return np.ascontiguousarray(y, dtype=np.int8), s


def _sorted(y, s):
    ss = np.empty_like(s)
    yy = np.empty_like(y)
    _kernels.fq_sort_desc(s, y, ss, yy)
    return yy, ss


def _curve_counts(y, s):
    yy, ss = _sorted(y, s)
    n = len(ss)
    tps = np.empty(n, dtype=np.int64)
    fps = np.empty(n, dtype=np.int64)
    th = np.empty(n, dtype=np.float64)
    m = _kernels.fq_binary_curve(ss, yy, tps, fps, th)
    return tps[:m], fps[:m], th[:m]


def precision_recall_curve(y_true, y_score, *, pos_label=None
                           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Precision and recall at each distinct score, as scikit-learn computes them.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Labels, 0 or 1 (or any two classes, with ``pos_label``).
    y_score : array-like of shape (n_samples,)
        Scores, higher meaning more likely positive.
    pos_label : object, optional
        The positive class when labels are not 0/1.

    Returns
    -------
    precision, recall : ndarray of shape (n_thresholds + 1,)
        From the lowest threshold up, then the point (precision 1, recall 0).
    thresholds : ndarray of shape (n_thresholds,)
        The distinct scores, ascending.

    Warns
    -----
    UndefinedMetricWarning
        When no sample is positive; recall is then 1 at every threshold, as scikit-learn
        sets it.

    Examples
    --------
    >>> from qafast.curves import precision_recall_curve
    >>> p, r, t = precision_recall_curve([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    >>> p.tolist(), r.tolist(), t.tolist()
    ([0.5, 0.6666666666666666, 0.5, 1.0, 1.0], [1.0, 1.0, 0.5, 0.5, 0.0], [0.1, 0.35, 0.4, 0.8])
    """
    y, s = _prepare(y_true, y_score, pos_label)
    tps, fps, th = _curve_counts(y, s)
    precision = tps / (tps + fps)
    if tps[-1] == 0:
        _warn(_NO_POSITIVE)
        recall = np.ones(len(tps))
    else:
        recall = tps / tps[-1]
    return (np.hstack((precision[::-1], 1.0)), np.hstack((recall[::-1], 0.0)), th[::-1].copy())


def average_precision(y_true, y_score, *, method: str = "step", pos_label=None,
                      n_positives: int | None = None) -> float:
    """Average precision of scores against binary labels.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Labels, 0 or 1 (or two classes with ``pos_label``).
    y_score : array-like of shape (n_samples,)
        Scores, higher meaning more likely positive. NaN is an error.
    method : {"step", "voc", "voc11", "coco"}, default="step"
        ``"step"`` is ``sklearn.metrics.average_precision_score``: one point per distinct
        score, ``sum((R_n - R_{n-1}) * P_n)``. ``"voc"`` is PASCAL VOC all-point
        interpolation (VOC2010+). ``"voc11"`` is VOC2007's 11 recall points. ``"coco"`` is
        COCO's 101 recall points. The last three have one point per sample, in score order
        with equal scores in input order.
    pos_label : object, optional
        The positive class when labels are not 0/1.
    n_positives : int, optional
        For ``"voc"``, ``"voc11"`` and ``"coco"``: the number of ground-truth positives,
        which may exceed the positives among the samples (missed detections). By default,
        the positive samples are counted.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If a label is outside {0, 1}, a score is NaN, or the lengths differ; for ``"voc"``,
        ``"voc11"`` and ``"coco"``, if there is no positive sample and ``n_positives`` is not
        given (AP is undefined there, and those tools disagree on a value).

    Warns
    -----
    UndefinedMetricWarning
        For ``"step"`` with no positive sample, which gives 0.0, as scikit-learn does.

    Examples
    --------
    >>> from qafast.curves import average_precision
    >>> y, s = [0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]
    >>> average_precision(y, s)
    0.8333333333333333
    >>> [round(average_precision(y, s, method=m), 4) for m in ("voc", "voc11", "coco")]
    [0.8333, 0.8485, 0.835]
    """
    if method not in _METHODS:
        raise InputError(f"The 'method' parameter must be one of {tuple(_METHODS)}. "
                         f"Got {method!r} instead.")
    y, s = _prepare(y_true, y_score, pos_label)
    if method == "step":
        if n_positives is not None:
            raise InputError("n_positives applies to 'voc', 'voc11' and 'coco' only")
        tps, fps, _ = _curve_counts(y, s)
        if tps[-1] == 0:
            # precision is 0 at every threshold, so scikit-learn's sum is 0 (clipped to +0.0)
            _warn(_NO_POSITIVE)
            return 0.0
        return float(_kernels.fq_step_ap(tps, fps, np.empty(len(tps))))
    found = int(y.sum())
    if found == 0 and n_positives is None:
        raise InputError(f"y_true has no positive sample: {method!r} average precision is "
                         "undefined without ground-truth positives; give n_positives (the "
                         "ground truths missed), or use method='step' (0.0, as scikit-learn)")
    npos = found if n_positives is None else n_positives
    if isinstance(npos, bool) or not isinstance(npos, (int, np.integer)) or npos < max(found, 1):
        raise InputError(f"n_positives must be an int >= the {found} positive samples (and "
                         f">= 1). Got {n_positives!r} instead.")
    yy, _ = _sorted(y, s)
    return float(_kernels.fq_interpolated_ap(yy, int(npos), _METHODS[method],
                                             np.empty(2 * len(yy) + 2)))


def threshold_precision_recall(y_true, y_score, *, thresholds, pos_label=None
                               ) -> tuple[np.ndarray, np.ndarray]:
    """Precision and recall at each given threshold (a sample at or above it is predicted positive).

    A sample is predicted positive when its score is at least the threshold. Precision is
    0 when nothing is predicted, as ``sklearn.metrics.precision_score`` gives. Recall is 0
    when there is no positive, as ``sklearn.metrics.recall_score`` gives, with an
    :class:`UndefinedMetricWarning` (once, where scikit-learn's metric functions, called per
    threshold, warn at each one).

    Returns
    -------
    precisions, recalls : ndarray of shape (n_thresholds,)
        In the order of ``thresholds``.
    """
    y, s = _prepare(y_true, y_score, pos_label)
    t = np.ascontiguousarray(thresholds, dtype=np.float64)
    if t.ndim != 1 or len(t) == 0 or np.isnan(t).any():
        raise InputError("thresholds must be a non-empty 1-D sequence of numbers, no NaN")
    order = np.argsort(-t, kind="stable").astype(np.int64)
    tp = np.empty(len(t), dtype=np.int64)
    fp = np.empty(len(t), dtype=np.int64)
    _kernels.fq_threshold_counts(s, y, t, order, tp, fp)
    pred = tp + fp
    precision = np.divide(tp, pred, out=np.zeros(len(t)), where=pred != 0)
    pos = int(np.count_nonzero(y))
    if not pos:
        _warn(_NO_TRUE_SAMPLES)
    recall = tp / pos if pos else np.zeros(len(t))
    return precision, recall


def threshold_average_precision(y_true, y_score, *, thresholds, pos_label=None) -> float:
    """Average precision over a sweep of given score thresholds.

    With precisions and recalls from :func:`threshold_precision_recall`, and a point
    (precision 1, recall 0) appended, ``AP = sum((recall[i] - recall[i+1]) * precision[i])``.
    The result is the threshold-sweep definition's number exactly. With no positive sample it
    is 0.0, with an :class:`UndefinedMetricWarning`, as scikit-learn's precision and recall
    functions give.

    Examples
    --------
    A worked example:

    >>> import numpy as np
    >>> from qafast.curves import threshold_average_precision
    >>> y_true = ["positive", "negative", "negative", "positive", "positive", "positive",
    ...           "negative", "positive", "negative", "positive", "positive", "positive",
    ...           "positive", "negative", "negative", "negative"]
    >>> pred_scores = [0.7, 0.3, 0.5, 0.6, 0.55, 0.9, 0.4, 0.2, 0.4, 0.3, 0.7, 0.5, 0.8, 0.2,
    ...                0.3, 0.35]
    >>> threshold_average_precision(y_true, pred_scores, pos_label="positive",
    ...                             thresholds=np.arange(start=0.2, stop=0.7, step=0.05))
    0.8898809523809523
    """
    precision, recall = threshold_precision_recall(y_true, y_score, thresholds=thresholds,
                                                   pos_label=pos_label)
    precisions = np.append(precision, 1.0)
    recalls = np.append(recall, 0.0)
    return float(np.sum((recalls[:-1] - recalls[1:]) * precisions[:-1]))


def register_cli(subparsers) -> dict:
    p = subparsers.add_parser(
        "ap", help="average precision of scored binary labels (sklearn, VOC, COCO, seed sweep)",
        description="Average precision from a file of 'label score' lines (tab or space "
                    "separated; labels 0/1).")
    p.add_argument("file", help="'label score' per line; '-' for stdin")
    p.add_argument("--thresholds", metavar="T,T,...",
                   help="also the threshold-sweep AP at these thresholds")
    p.add_argument("-o", choices=("text", "json"), default="text", help="output format")
    return {"ap": _run_ap}


def _run_ap(args) -> int:
    from .errors import FormatError
    from .io._text import iter_decoded, open_utf8

    path = "<stdin>" if args.file == "-" else args.file
    f = sys.stdin if args.file == "-" else open_utf8(args.file, FormatError)
    labels, scores = [], []
    try:
        for lineno, line in iter_decoded(f, path, FormatError):
            fields = line.split()
            if not fields:
                continue
            if len(fields) != 2:
                raise FormatError("expected 'label score'", path=path, line=lineno)
            try:
                labels.append(int(fields[0]))
                scores.append(float(fields[1]))
            except ValueError:
                raise FormatError("expected an integer label and a number", path=path,
                                  line=lineno) from None
    finally:
        if f is not sys.stdin:
            f.close()
    from ._output import write_json, write_values
    from ._warn import on_stderr

    # with no positive label, VOC and COCO AP are undefined: left out, with a note
    methods = _METHODS if any(labels) else ["step"]
    with on_stderr("ap", UndefinedMetricWarning):
        res = {m: average_precision(labels, scores, method=m) for m in methods}
        if args.thresholds:
            ts = [float(x) for x in args.thresholds.split(",")]
            res["threshold"] = threshold_average_precision(labels, scores, thresholds=ts)
    if len(methods) < len(_METHODS):
        print("qafast ap: no positive label, so voc, voc11 and coco AP are undefined and left "
              "out", file=sys.stderr)

    return write_json(res) if args.o == "json" else write_values(res, width=10)
