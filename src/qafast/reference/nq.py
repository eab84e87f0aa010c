"""The specification: the official Natural Questions evaluation (``nq_eval.py``) in plain Python.

This is the readable definition of every number :mod:`qafast.nq_eval` reports, written from what
the official script computes (read, then described here in our own words). The numpy path is
tested against it value for value, bit for bit.

Inputs here are already checked and converted (see :mod:`qafast.nq_eval` for the file formats).
A span is a tuple ``(start byte, end byte, start token, end token)``.

* ``gold``: ``{example id: [annotation, ...]}``, each annotation a tuple
  ``(long span, (short span, ...), yes/no)``, the yes/no lowered.
* ``predictions``: ``{example id: (long span, (short span, ...), yes/no, long score,
  short score)}``.

Rules
-----
* A span is null when all four offsets are negative. Two non-null spans are equal when both
  have byte offsets (``>= 0``) and these are equal, or both have token offsets and these are
  equal. Two span lists are equal when, null spans dropped, every span of each equals some span
  of the other.
* Gold has a long answer when at least ``long_non_null_threshold`` annotators give a non-null
  long span; a short answer when at least ``short_non_null_threshold`` give a non-null short span
  or a yes/no other than ``"none"``. (An example with no annotations has neither: the script
  fails on it.)
* Long: a prediction has an answer when its long span is non-null; it is correct when gold has
  an answer too and its span equals some annotator's non-null long span.
* Short: a prediction has an answer when a short span is non-null or its yes/no is not
  ``"none"``. When gold has an answer too, a yes/no prediction is correct if some annotator gave
  the same yes/no, and a span prediction if its span list equals some annotator's.
* Every gold example needs a prediction and every prediction a gold example.
* Examples are visited in the iteration order of ``set(gold.keys())`` and then sorted by score,
  descending and stable. The curve walks that order counting correct answers and predictions;
  precision is ``Σcorrect / Σhas_pred`` and recall ``Σcorrect / Σhas_gold`` (int ``0`` when a
  denominator is 0). Equal scores form one threshold, whose key is the first score object seen
  and whose point is the last one's. The optimal threshold is the first point with the strictly
  largest ``2PR / (P + R)`` (``0.0`` throughout when none is above 0); recall at precision ``t``
  is the largest recall above 0 among points with precision ``>= t`` (first one wins; ``0``, ``0``
  and threshold ``None`` when there is none).
* Ignoring scores, precision, recall and F1 count every example the same way.
"""

from __future__ import annotations

__all__ = ["TARGETS", "final_f1", "long_stat", "metrics", "pr_curve", "score_examples",
           "short_stat", "span_equal", "span_list_equal"]

TARGETS = (0.5, 0.75, 0.9)


def _ratio(x, y):
    return 0 if y == 0 else x / y


def _null(span):
    return all(v < 0 for v in span)


def span_equal(a, b) -> bool:
    """Two non-null spans are the same answer."""
    if a[0] >= 0 and a[1] >= 0 and b[0] >= 0 and b[1] >= 0 and a[0] == b[0] and a[1] == b[1]:
        return True
    return (a[2] >= 0 and a[3] >= 0 and b[2] >= 0 and b[3] >= 0
            and a[2] == b[2] and a[3] == b[3])


def span_list_equal(gold, pred) -> bool:
    """Two short-answer span lists are the same answer (null spans ignored)."""
    gold = [s for s in gold if not _null(s)]
    pred = [s for s in pred if not _null(s)]
    return (all(any(span_equal(p, g) for g in gold) for p in pred)
            and all(any(span_equal(p, g) for p in pred) for g in gold))


def long_stat(annotations, pred, threshold=2):
    """``(has gold, has prediction, correct, score)`` of one example's long answer."""
    has_gold = bool(annotations) and sum(not _null(a[0]) for a in annotations) >= threshold
    has_pred = not _null(pred[0])
    correct = has_gold and has_pred and any(
        not _null(a[0]) and span_equal(a[0], pred[0]) for a in annotations)
    return has_gold, has_pred, correct, pred[3]


def _short_nonnull(spans):
    return any(not _null(s) for s in spans)


def short_stat(annotations, pred, threshold=2):
    """``(has gold, has prediction, correct, score)`` of one example's short answer."""
    has_gold = bool(annotations) and sum(
        _short_nonnull(a[1]) or a[2] != "none" for a in annotations) >= threshold
    has_pred = _short_nonnull(pred[1]) or pred[2] != "none"
    correct = False
    if has_gold and has_pred:
        if pred[2] != "none":
            correct = any(pred[2] == a[2] for a in annotations)
        else:
            correct = any(span_list_equal(a[1], pred[1]) for a in annotations)
    return has_gold, has_pred, correct, pred[4]


def score_examples(gold, predictions, long_threshold=2, short_threshold=2):
    """The long and short answer statistics, sorted as the script sorts them."""
    if set(gold) != set(predictions):
        raise ValueError("the example ids of the gold data and of the predictions differ")
    long_stats, short_stats = [], []
    for example_id in set(gold.keys()):
        long_stats.append(long_stat(gold[example_id], predictions[example_id], long_threshold))
        short_stats.append(short_stat(gold[example_id], predictions[example_id],
                                      short_threshold))
    long_stats.sort(key=lambda s: s[-1], reverse=True)
    short_stats.sort(key=lambda s: s[-1], reverse=True)
    return long_stats, short_stats


def pr_curve(stats, targets=TARGETS):
    """``((best F1, its precision, its recall, its threshold), [(target, recall, precision,
    threshold), ...])`` over statistics in sorted order."""
    total_gold = sum(s[0] for s in stats)
    points: dict = {}
    correct = predicted = 0
    for _, has_pred, is_correct, score in stats:
        correct += is_correct
        predicted += has_pred
        points[score] = (_ratio(correct, predicted), _ratio(correct, total_gold))
    best = (0.0, 0.0, 0.0, 0.0)
    rows = [[t, 0, 0, None] for t in targets]
    for threshold, (p, r) in points.items():
        for row in rows:
            if p >= row[0] and r > row[1]:
                row[1:] = [r, p, threshold]
        f1 = _ratio(2 * p * r, p + r)
        if f1 > best[0]:
            best = (f1, p, r, threshold)
    return best, [tuple(row) for row in rows]


def metrics(long_stats, short_stats) -> dict:
    """The script's JSON line: its keys, its values (int 0 where the script has one)."""
    out = {}
    for prefix, stats in (("long-", long_stats), ("short-", short_stats)):
        (f1, p, r, threshold), rows = pr_curve(stats)
        out[prefix + "best-threshold-f1"] = f1
        out[prefix + "best-threshold-precision"] = p
        out[prefix + "best-threshold-recall"] = r
        out[prefix + "best-threshold"] = threshold
        for target, recall, precision, _ in rows:
            out[f"{prefix}recall-at-precision>={target:.2}"] = recall
            out[f"{prefix}precision-at-precision>={target:.2}"] = precision
    return out


def final_f1(long_stats, short_stats) -> dict:
    """Precision, recall and F1 ignoring scores, with the script's keys."""
    out = {}
    for prefix, stats in (("long-answer-", long_stats), ("short-answer-", short_stats)):
        correct = sum(s[2] for s in stats)
        p = _ratio(correct, sum(s[1] for s in stats))
        r = _ratio(correct, sum(s[0] for s in stats))
        out[prefix + "n"] = len(stats)
        out[prefix + "f1"] = _ratio(2 * p * r, p + r)
        out[prefix + "precision"] = p
        out[prefix + "recall"] = r
    return out
