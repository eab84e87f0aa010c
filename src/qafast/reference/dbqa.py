"""The specification: answer-sentence selection (NLPCC-DBQA) measures in plain Python.

As the NLPCC-DBQA evaluation defines them. Question i has candidate sentences, each
labelled 1 (a correct answer sentence) or 0, and the system scores each one. Candidates are
ranked by score, highest first; equal scores keep their input order (a stable sort, as
Python's ``sorted`` with ``reverse=True`` gives). No official NLPCC-DBQA scorer was found, so the tie rule is
qafast's and is stated here.

* Reciprocal rank: ``1 / rank`` of the first correct sentence, 0 when there is none.
* Average precision: ``sum(P(k) * rel(k)) / min(m, n)`` over ranks k, where m is the number
  of correct sentences and n the number of candidates. It is 0 when ``min(m, n)`` is 0.
* Accuracy@N: 1 when a correct sentence is among the first N.
* F1: with C the selected sentences and A the correct ones, ``P = |C & A| / |C|``,
  ``R = |C & A| / |A|`` and ``F1 = 2PR / (P + R)``, 0 when ``C & A`` is empty. C is the
  top-ranked sentence (``select="top1"``) or the sentences scoring at least a threshold.

Every measure is averaged over all questions, by a sum in question order divided by the
count. Questions without a correct sentence count, and score 0.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["evaluate_dbqa", "question_measures"]


def question_measures(labels: Sequence[int], scores: Sequence[float], select="top1") -> dict:
    """One question's reciprocal rank, average precision, first correct rank and F1."""
    order = sorted(range(len(scores)), key=lambda i: scores[i], reverse=True)
    ranked = [labels[i] for i in order]
    m, n = sum(ranked), len(ranked)
    first = next((k for k, rel in enumerate(ranked, start=1) if rel), 0)
    hits = 0
    ap = 0.0
    for k, rel in enumerate(ranked, start=1):
        if rel:
            hits += 1
            ap += hits / k
    ap = ap / min(m, n) if min(m, n) else 0.0
    if select == "top1":
        chosen = [order[0]]
    else:
        chosen = [i for i in range(n) if scores[i] >= select]
    both = sum(labels[i] for i in chosen)
    if both:
        p, r = both / len(chosen), both / m
        f1 = 2 * p * r / (p + r)
    else:
        f1 = 0.0
    return {"rr": 1 / first if first else 0.0, "ap": ap, "first": first, "f1": f1}


def evaluate_dbqa(labels: Sequence[Sequence[int]], scores: Sequence[Sequence[float]], *,
                  accuracy_at=(1,), select="top1") -> dict:
    """MRR, MAP, Accuracy@N and averaged F1 over questions given as lists of candidates.

    >>> evaluate_dbqa([[0, 1, 0], [1, 0]], [[0.9, 0.5, 0.1], [0.2, 0.2]])
    {'mrr': 0.75, 'map': 0.75, 'accuracy@1': 0.5, 'f1': 0.5}
    """
    rows = [question_measures(y, s, select) for y, s in zip(labels, scores)]
    n = len(rows)
    out = {"mrr": 0.0, "map": 0.0}
    for r in rows:
        out["mrr"] += r["rr"]
        out["map"] += r["ap"]
    out["mrr"] /= n
    out["map"] /= n
    for at in accuracy_at:
        out[f"accuracy@{at}"] = sum(1 for r in rows if 0 < r["first"] <= at) / n
    f1 = 0.0
    for r in rows:
        f1 += r["f1"]
    out["f1"] = f1 / n
    return out
