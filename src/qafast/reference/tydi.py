"""The specification: the official TyDi QA primary-task evaluation (``tydi_eval.py``) in plain Python.

This is the readable definition of every number :mod:`qafast.tydi_eval` reports, written from what
the official script computes (read, then described here in our own words). The compiled path is
tested against it value for value, bit for bit.

Inputs here are already checked and converted (see :mod:`qafast.tydi_eval` for the file formats):

* ``gold``: ``{example id: (language, [annotation, ...])}``, each annotation a tuple
  ``(passage index, minimal start byte, minimal end byte, yes/no)``, the yes/no lowered.
* ``predictions``: ``{example id: (language, passage index, start byte, end byte, yes/no,
  passage score, minimal score)}``.

Rules
-----
* A span is null when both offsets are negative. Gold has a passage answer when at least
  ``passage_non_null_threshold`` annotators give a passage index ``>= 0``; a minimal answer when
  at least ``minimal_non_null_threshold`` give a non-null span or a yes/no other than ``"none"``.
* Passage: a prediction "has" an answer when its index is ``>= 0``; it is correct when gold has
  an answer and some annotator's non-negative index equals it.
* Minimal: a prediction has an answer when its span is non-null or its yes/no is not
  ``"none"``. When both sides have one, a yes/no prediction scores 1 for precision, recall and
  F1 if any annotator gave the same yes/no; otherwise the span is compared to each annotator's
  non-null span and the annotator with the strictly largest byte-overlap F1 (first one wins
  ties) gives precision, recall and F1. Overlap counts bytes: ends are exclusive, spans that
  only touch share nothing, and an empty span strictly inside the other makes the script fail.
* An example without a prediction has "has prediction" equal to *not* "has gold", scores 0
  and has score ``0`` (an int).
* Examples are visited in the iteration order of ``set(gold ids)`` and then sorted by score,
  descending and stable. The curve walks that order accumulating the F1 (or correctness), the
  predictions and, fixed, the gold answers; precision is ``ΣF1 / Σhas_pred`` and recall
  ``ΣF1 / Σhas_gold`` (0 when a denominator is 0). Equal scores form one threshold, whose key
  is the first score object seen and whose point is the last one's. The optimal threshold is the
  first point with the strictly largest ``2PR / (P + R)``; recall at precision ``t`` is the
  largest recall among points with precision ``>= t`` (first one wins).
* By language: for each of english, arabic, bengali, finnish, indonesian, japanese, swahili,
  korean, russian, telugu, thai (in that order) that some *prediction* names, the gold examples
  whose first annotation is of that language are scored against the predictions of that language.
  The macro average is the plain mean over those languages except English.
"""

from __future__ import annotations

__all__ = ["LANGUAGES", "TARGETS", "aggregate", "by_language", "metrics", "minimal_stat",
           "passage_stat", "pr_curve", "score_examples", "span_scores"]

LANGUAGES = ("english", "arabic", "bengali", "finnish", "indonesian", "japanese", "swahili",
             "korean", "russian", "telugu", "thai")
TARGETS = (0.5, 0.75, 0.9)


class SpanError(ValueError):
    """An empty span strictly inside the other: the script's overlap assertion fails."""


def _ratio(x, y):
    return 0 if y == 0 else x / y


def _null(start, end):
    return start < 0 and end < 0


def span_scores(gold, pred):
    """``(precision, recall, f1)`` of the bytes ``pred`` shares with ``gold`` (both non-null)."""
    gs, ge = gold
    ps, pe = pred
    if ge <= ps or pe <= gs:
        p = r = 0.0
    else:
        shared = min(ge, pe) - max(gs, ps)
        if not shared > 0:
            raise SpanError(f"span {pred} and gold span {gold} overlap in no byte")
        if gs <= ps:
            gold_only = (ps - gs) + max(0, ge - pe)
            pred_only = max(pe - ge, 0)
        else:
            pred_only = (gs - ps) + max(0, pe - ge)
            gold_only = max(ge - pe, 0)
        p = _ratio(shared, shared + pred_only)
        r = _ratio(shared, shared + gold_only)
    return p, r, _ratio(2 * p * r, p + r)


def passage_stat(annotations, pred, threshold):
    """``(has_gold, has_pred, correct, score)`` of one example's passage answer."""
    has_gold = sum(a[0] >= 0 for a in annotations) >= threshold
    if pred is None:
        return has_gold, not has_gold, False, 0
    index = pred[1]
    has_pred = index >= 0
    correct = has_gold and has_pred and any(a[0] >= 0 and a[0] == index for a in annotations)
    return has_gold, has_pred, correct, pred[5]


def minimal_stat(annotations, pred, threshold):
    """``(has_gold, has_pred, (precision, recall, f1), score)`` of one example's minimal answer."""
    has_gold = sum((not _null(a[1], a[2])) or a[3] != "none" for a in annotations) >= threshold
    if pred is None:
        return has_gold, not has_gold, (0, 0, 0), 0
    _, _, start, end, yes_no, _, score = pred
    has_pred = (not _null(start, end)) or yes_no != "none"
    best = (0.0, 0.0, 0.0)
    if has_gold and has_pred:
        if yes_no != "none":
            if any(a[3] == yes_no for a in annotations):
                best = (1.0, 1.0, 1.0)
        else:
            for a in annotations:
                if _null(a[1], a[2]):
                    continue
                prf = span_scores((a[1], a[2]), (start, end))
                if prf[2] > best[2]:
                    best = prf
    return has_gold, has_pred, best, score


def score_examples(gold, predictions, passage_threshold=2, minimal_threshold=2):
    """Both lists of per-example stats, in the script's order (sorted by score, descending)."""
    passage, minimal = [], []
    for example_id in set(gold.keys()):  # a keys view: the set grows as the script's
        annotations = gold[example_id][1]
        pred = predictions.get(example_id)
        passage.append(passage_stat(annotations, pred, passage_threshold))
        minimal.append(minimal_stat(annotations, pred, minimal_threshold))
    passage.sort(key=lambda s: s[-1], reverse=True)
    minimal.sort(key=lambda s: s[-1], reverse=True)
    return passage, minimal


def pr_curve(stats, targets=TARGETS):
    """``((f1, precision, recall, threshold), [(target, recall, precision, threshold), ...])``."""
    total_gold = 0
    for s in stats:
        total_gold += s[0]
    points = {}
    total_f1 = 0
    total_pred = 0
    for has_gold, has_pred, value, score in stats:
        total_f1 += value[2] if isinstance(value, tuple) else value
        total_pred += has_pred
        points[score] = (_ratio(total_f1, total_pred), _ratio(total_f1, total_gold))
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


def metrics(passage, minimal):
    """The script's metrics dict for two sorted stats lists (its ``get_metrics_with_answer_stats``)."""
    out = {}
    for prefix, stats in (("passage-", passage), ("minimal-", minimal)):
        (f1, p, r, threshold), rows = pr_curve(stats)
        out[prefix + "best-threshold-f1"] = f1
        out[prefix + "best-threshold-precision"] = p
        out[prefix + "best-threshold-recall"] = r
        out[prefix + "best-threshold"] = threshold
        for target, recall, precision, _ in rows:
            out[f"{prefix}recall-at-precision>={target:.2}"] = recall
            out[f"{prefix}precision-at-precision>={target:.2}"] = precision
    return out


def by_language(gold, predictions, passage_threshold=2, minimal_threshold=2):
    """``{language: (passage stats, minimal stats)}`` for the languages the script scores."""
    gold_of, pred_of = {}, {}
    for example_id, entry in gold.items():
        gold_of.setdefault(entry[0], {})[example_id] = entry
    for example_id, entry in predictions.items():
        pred_of.setdefault(entry[0], {})[example_id] = entry
    return {lang: score_examples(gold_of.get(lang, {}), pred_of[lang], passage_threshold,
                                 minimal_threshold)
            for lang in LANGUAGES if lang in pred_of}


def aggregate(per_language):
    """The macro average over the non-English languages of ``by_language``'s result."""
    sums = {"passage": ([], [], []), "minimal": ([], [], [])}
    for lang, stats in per_language.items():
        if lang == "english":
            continue
        for name, s in zip(("passage", "minimal"), stats):
            (f1, p, r, _), _ = pr_curve(s, targets=(0.5,))
            for column, v in zip(sums[name], (f1, p, r)):
                column.append(v)
    out = {}
    for name in ("passage", "minimal"):
        f1s, ps, rs = sums[name]
        out[f"avg_{name}_f1"] = _ratio(sum(f1s), len(f1s))
        out[f"avg_{name}_recall"] = _ratio(sum(rs), len(rs))
        out[f"avg_{name}_precision"] = _ratio(sum(ps), len(ps))
    return out
