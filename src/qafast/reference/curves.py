"""The specification: average precision from precision-recall curves, in plain Python.

``y`` holds 0/1 labels and ``s`` holds scores. Samples are ranked by score, highest first.
Each definition treats equal scores as its reference tool does:

* ``threshold_ap``: a sweep over given score thresholds. For each given threshold t, a sample is
  predicted positive when its score is at least t. Precision there is TP / predicted (0 when
  nothing is predicted, as ``sklearn.metrics.precision_score``) and recall is TP / positives
  (0 when there are no positives). A point (precision 1, recall 0) is appended, and
  ``AP = sum((recall[i] - recall[i + 1]) * precision[i])``.
* ``step_ap``: ``sklearn.metrics.average_precision_score``. There is one point per
  distinct score, so ties form one step, and ``AP = sum((R_n - R_{n-1}) * P_n)``. With no
  positive, recall is 1 at every threshold (scikit-learn's rule), so the AP is 0.
* ``voc_ap``: PASCAL VOC (2010 and later) all-point interpolation, and ``voc11_ap`` the
  VOC2007 11-point form. ``coco_ap`` is COCO's 101-point form. These have one point per
  sample, in score order with equal scores in input order (COCO's stable mergesort;
  qafast also makes VOC's order stable). Recall is divided by ``n_positives`` (the ground
  truths, detected or not).

Sums that the tools take with ``numpy.sum`` / ``numpy.mean`` use :func:`numpy_sum`, numpy's
pairwise summation, so that results agree to the last bit.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["coco_ap", "numpy_sum", "precision_recall_curve", "step_ap", "threshold_ap",
           "voc11_ap", "voc_ap"]

_EPS = 2.220446049250313e-16  # np.spacing(1), np.finfo(float).eps


def numpy_sum(values: Sequence[float]) -> float:
    """``numpy.sum`` of a float64 vector: below 8 terms a plain loop; up to 128 terms eight
    interleaved partial sums, combined as ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)), then the
    remainder; above that the sum of two halves, the first a multiple of 8 long."""
    n = len(values)
    if n < 8:
        total = 0.0
        for v in values:
            total += v
        return total
    if n <= 128:
        r = list(values[:8])
        i = 8
        while i < n - n % 8:
            for j in range(8):
                r[j] += values[i + j]
            i += 8
        total = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        for v in values[i:]:
            total += v
        return total
    half = n // 2
    half -= half % 8
    return numpy_sum(values[:half]) + numpy_sum(values[half:])


def _ranked(y, s):
    order = sorted(range(len(s)), key=lambda i: s[i], reverse=True)  # stable
    return [y[i] for i in order], [s[i] for i in order]


def precision_recall_curve(y, s):
    """scikit-learn's ``precision_recall_curve``: precision and recall per distinct score
    from the lowest up, then (1, 0); thresholds ascending. Recall is 1 everywhere when no
    sample is positive."""
    yr, sr = _ranked(y, s)
    tps, fps, ths = [], [], []
    tp = fp = 0
    for i, (label, score) in enumerate(zip(yr, sr)):
        tp += label
        fp += 1 - label
        if i == len(sr) - 1 or sr[i + 1] != score:
            tps.append(tp)
            fps.append(fp)
            ths.append(score)
    precision = [tp / (tp + fp) for tp, fp in zip(tps, fps)][::-1] + [1.0]
    recall = [tp / tps[-1] if tps[-1] else 1.0 for tp in tps][::-1] + [0.0]
    return precision, recall, ths[::-1]


def step_ap(y, s) -> float:
    """``sklearn.metrics.average_precision_score``: -sum(diff(recall) * precision[:-1]),
    clipped at 0 (so -0.0 becomes 0.0)."""
    precision, recall, _ = precision_recall_curve(y, s)
    terms = [(recall[i + 1] - recall[i]) * precision[i] for i in range(len(precision) - 1)]
    return max(0.0, -numpy_sum(terms))


def threshold_ap(y, s, thresholds) -> float:
    """AP over a sweep of given score thresholds."""
    positives = sum(y)
    precisions, recalls = [], []
    for t in thresholds:
        tp = sum(1 for label, score in zip(y, s) if score >= t and label)
        predicted = sum(1 for score in s if score >= t)
        precisions.append(tp / predicted if predicted else 0.0)
        recalls.append(tp / positives if positives else 0.0)
    precisions.append(1.0)
    recalls.append(0.0)
    return numpy_sum([(recalls[i] - recalls[i + 1]) * precisions[i]
                      for i in range(len(thresholds))])


def _points(y, s, n_positives, eps=0.0):
    yr, _ = _ranked(y, s)
    rec, prec = [], []
    tp = fp = 0.0
    for label in yr:
        tp += label
        fp += 1 - label
        rec.append(tp / n_positives)
        prec.append(tp / (fp + tp + eps) if eps else tp / (tp + fp))
    return rec, prec


def voc_ap(y, s, n_positives=None) -> float:
    """PASCAL VOC all-point AP: the precision envelope, summed over recall changes."""
    rec, prec = _points(y, s, n_positives or sum(y))
    mrec = [0.0] + rec + [1.0]
    mpre = [0.0] + prec + [0.0]
    for i in range(len(mpre) - 1, 0, -1):
        mpre[i - 1] = max(mpre[i - 1], mpre[i])
    return numpy_sum([(mrec[i + 1] - mrec[i]) * mpre[i + 1]
                      for i in range(len(mrec) - 1) if mrec[i + 1] != mrec[i]])


def voc11_ap(y, s, n_positives=None) -> float:
    """PASCAL VOC2007 11-point AP: max precision at recall >= t for t = 0, 0.1, ..., 1."""
    rec, prec = _points(y, s, n_positives or sum(y))
    ap = 0.0
    for j in range(11):
        t = j * 0.1  # np.arange(0., 1.1, 0.1)
        above = [p for r, p in zip(rec, prec) if r >= t]
        ap = ap + (max(above) if above else 0.0) / 11.0
    return ap


def coco_ap(y, s, n_positives=None) -> float:
    """COCO 101-point AP (pycocotools ``COCOeval.accumulate``) for one curve."""
    rec, prec = _points(y, s, n_positives or sum(y), eps=_EPS)
    for i in range(len(prec) - 1, 0, -1):
        if prec[i] > prec[i - 1]:
            prec[i - 1] = prec[i]
    q = []
    for j in range(101):
        t = j * 0.01 if j < 100 else 1.0  # np.linspace(0, 1, 101)
        k = next((i for i, r in enumerate(rec) if r >= t), None)
        q.append(prec[k] if k is not None else 0.0)
    return numpy_sum(q) / 101
