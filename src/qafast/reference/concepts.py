"""The specification: Hit@K and Rec@K of open-ended commonsense answers (OpenCSR / DrFact).

The OpenCSR paper defines them: a system answers question q with a weighted set of concepts
``A = {(a1, w1), ...}``; the gold answers are a set of concepts ``A*``. **Hit@K** is the fraction
of questions with at least one gold concept among the top K concepts of A (sorted by weight,
descending); **Rec@K** is the mean, over questions, of the fraction of the gold concepts found
in the top K.

Rules this module pins down (the seed leaves them open):

* Ties in weight are broken by the concept string, ascending (code point order), so the result
  never depends on the order a set was written in. A plain list of concepts (no weights) is
  taken as already ranked.
* Every entry of a prediction takes a place in the ranking, and a concept given more than once
  counts at its last place, as the DrFact script's ``concept2rank`` dict keeps it (entries
  equal in concept and weight keep their list order).
* Gold concepts count once each, however often they are listed; a question needs at least one.
* ``k=None`` means no cut-off.
* Means are sums in question order divided by the number of questions; with no question
  every mean is 0, as the DrFact script prints for an empty prediction file.

``drfact=True`` reproduces the published evaluation script instead (OpenCSR repository,
``evaluation/eval_metrics.py``, functions ``hit_at_K`` and ``recall_at_K``): it ranks by the
position in the prediction list, ignoring the weights, and at a threshold T it counts a gold
concept whose 0-based position r satisfies ``r <= T``, so its "Hit@T" and "Rec@T" look at the
top **T + 1** concepts.

Plain Python, written to be read; the kernels are tested against it.
"""

from __future__ import annotations

import math

__all__ = ["hit_at_k", "mean_hit_at_k", "mean_recall_at_k", "rank_concepts", "recall_at_k"]


def rank_concepts(prediction, *, drfact=False):
    """The concepts of one prediction, best first.

    ``prediction`` is a list of concepts (already ranked), a list of ``(concept, weight)``
    pairs, or a dict ``{concept: weight}``. Weighted concepts are sorted by weight descending,
    ties by concept ascending; with ``drfact=True`` the list order is kept, as the DrFact
    script does.
    """
    if isinstance(prediction, dict):
        pairs = list(prediction.items())
    else:
        pairs = [p if isinstance(p, str) else tuple(p) for p in prediction]
        if all(isinstance(p, str) for p in pairs):
            return list(pairs)
    if drfact:
        return [c for c, _ in pairs]
    for c, w in pairs:
        if math.isnan(w):
            raise ValueError(f"concept {c!r} has a NaN weight")
    return [c for c, w in sorted(pairs, key=lambda p: (-p[1], p[0]))]  # stable


def _ranks_of_gold(prediction, gold, drfact):
    gold = set(gold)
    if not gold:
        raise ValueError("no gold concepts")
    last_place = {}
    for r, c in enumerate(rank_concepts(prediction, drfact=drfact)):
        if c in gold:
            last_place[c] = r
    return list(last_place.values()), len(gold)


def _cut(k, drfact):
    if k is None:
        return math.inf
    return k + 1 if drfact else k


def hit_at_k(prediction, gold, k=None, *, drfact=False):
    """1.0 if a gold concept is among the top ``k`` predicted concepts, else 0.0.

    >>> hit_at_k([("tree", 0.9), ("leaf", 0.8), ("sun", 0.5)], {"sun"}, 2)
    0.0
    >>> hit_at_k([("tree", 0.9), ("leaf", 0.8), ("sun", 0.5)], {"sun"}, 2, drfact=True)
    1.0
    """
    ranks, _ = _ranks_of_gold(prediction, gold, drfact)
    cut = _cut(k, drfact)
    return 1.0 if any(r < cut for r in ranks) else 0.0


def recall_at_k(prediction, gold, k=None, *, drfact=False):
    """The fraction of the (distinct) gold concepts among the top ``k`` predicted concepts.

    >>> recall_at_k(["tree", "leaf", "sun"], ["sun", "leaf", "moon"], 2)
    0.3333333333333333
    """
    ranks, n_gold = _ranks_of_gold(prediction, gold, drfact)
    cut = _cut(k, drfact)
    return len([r for r in ranks if r < cut]) / n_gold


def _mean(fn, predictions, references, k, drfact):
    if not predictions:
        return 0.0
    total = 0.0
    for q, prediction in predictions.items():
        if q not in references:
            raise ValueError(f"question {q!r} has no gold concepts")
        total += fn(prediction, references[q], k, drfact=drfact)
    return total / len(predictions)


def mean_hit_at_k(predictions, references, k=None, *, drfact=False):
    """Hit@K: the mean of :func:`hit_at_k` over the questions of ``predictions``.

    ``predictions`` is ``{question: prediction}``, ``references`` ``{question: gold concepts}``;
    questions only in ``references`` are not counted (as in the DrFact script).
    """
    return _mean(hit_at_k, predictions, references, k, drfact)


def mean_recall_at_k(predictions, references, k=None, *, drfact=False):
    """Rec@K: the mean of :func:`recall_at_k` over the questions of ``predictions``."""
    return _mean(recall_at_k, predictions, references, k, drfact)
