"""The specification: fusing runs (rank and score fusion) in plain Python.

This module is the readable definition of what :func:`qafast.fuse` computes; the kernel
(``_fusion_kernels.pxi``) is tested against it, and both against ranx 0.3.21's ``fuse`` on
runs without ties (``tests/test_fusion.py``). The methods and normalisations are ranx's
unsupervised ones, with its formulas and defaults; the rules below pin what ranx leaves to a
sort's whim or to Python's hash order.

A run is ``{query_id: {doc_id: score}}``; document ids are all ``str`` or all ``int``. For
each query, the *candidates* are the documents any run retrieved for it. A query missing from
a run is an empty query of that run (ranx refuses runs whose query ids differ).

Order within a run
------------------
Each run's documents for a query are ranked by score descending, ties by document id
descending (trec_eval's order; ``str`` order is code point order, which is UTF-8 byte order,
as C's ``strcmp``); under ``min-max-inverted`` by score ascending, ties still by id
descending. ``pos`` is the 0-based place in that order. Sums over a run's scores (the
``sum`` and ``zmuv`` normalisations) add in that order too.

Normalisations (per run and query, over the documents that run retrieved)
-------------------------------------------------------------------------
============================  ==============================================================
``min-max``                   ``(s - min) / max(max - min, 1e-9)``
``min-max-inverted``          ``(max - s) / max(max - min, 1e-9)``
``max``                       ``s / max(max, 1e-9)``
``sum``                       ``(s - min) / max(sum - min * n, 1e-9)``
``zmuv``                      ``(s - mean) / max(std, 1e-9)`` (population standard deviation)
``rank``                      ``1 - pos / n``
``borda``                     ``1 - pos / m`` for the run's own documents, and
                              ``0.5 - (n - 1) / (2 m)`` for every other candidate, which the
                              run then counts as retrieved (``m`` candidates)
``None``                      the scores as they are
============================  ==============================================================

Under ``borda`` a run ranks its own documents first, in its order, then the candidates it
missed by document id descending (they share one score). ranx ranks those by Python's set
order, which changes from one process to the next.

Methods (``v``: a run's normalised score; sums run over the runs, in the order given)
---------------------------------------------------------------------------------------
=====================  =====================================================================
``sum``                ``sum v`` over the runs that retrieved the document
``mnz``                ``sum v * count`` (``count``: runs that retrieved it)
``anz``                ``sum v / count``
``max`` / ``min``      the largest / smallest ``v``, a run that missed it giving -1e9 / 1e9
                       (ranx's placeholders)
``med``                the median of the ``v`` of the runs that retrieved it
``gmnz``               ``sum v * count ** gamma``
``wsum``               ``sum w_r v``
``wmnz``               ``sum v * sum w_r`` (both over the runs that retrieved it)
``mixed``              ``sum w_r v * sqrt(count)``
``rrf``                ``sum 1 / (k + pos + 1)``
``isr``                ``sum 1 / (pos + 1) ** 2 * count``
``log_isr``            ``sum 1 / (pos + 1) ** 2 * log(count)``
``logn_isr``           ``sum 1 / (pos + 1) ** 2 * log(count + sigma)``
``rbc``                ``sum (1 - phi) * phi ** pos``
``bordafuse``          ``sum`` over every run of ``m - pos`` if it retrieved the document,
                       else ``(m - n + 1) / 2``
``w_bordafuse``        the same points, each times ``w_r``
``condorcet``          the candidates merge-sorted (below) by pairwise majority; the i-th
                       (from 0) scores ``m - i``
``w_condorcet``        the same, each run's vote counting ``w_r``
=====================  =====================================================================

Condorcet: candidate ``a`` beats ``b`` when the runs (weights) ranking ``a`` above ``b`` outweigh
those ranking ``b`` above ``a``; a run that retrieved neither does not vote, one that retrieved
one of them ranks it above the other. Majorities need not be transitive, so the result is that
of one stated sort: a bottom-up merge sort of the candidates, first in document id descending
order, that moves a right-hand candidate ahead of a left-hand one only when it beats it. Where
the majorities form a strict total order (as on most real runs), every sort gives it; ranx's
comparison sort then agrees.

The fused run ranks each query's candidates by fused score descending, ties by document id
descending; a query no run retrieved anything for stays, with no documents.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["METHODS", "NORMS", "fuse", "normalize"]

#: method name -> (uses weights, uses ranks only, parameters it takes)
METHODS: dict[str, tuple[bool, bool, tuple[str, ...]]] = {
    "sum": (False, False, ()),
    "mnz": (False, False, ()),
    "anz": (False, False, ()),
    "max": (False, False, ()),
    "min": (False, False, ()),
    "med": (False, False, ()),
    "gmnz": (False, False, ("gamma",)),
    "wsum": (True, False, ()),
    "wmnz": (True, False, ()),
    "mixed": (True, False, ()),
    "rrf": (False, True, ("k",)),
    "isr": (False, True, ()),
    "log_isr": (False, True, ()),
    "logn_isr": (False, True, ("sigma",)),
    "rbc": (False, True, ("phi",)),
    "bordafuse": (False, True, ()),
    "w_bordafuse": (True, True, ()),
    "condorcet": (False, True, ()),
    "w_condorcet": (True, True, ()),
}

NORMS = ("min-max", "min-max-inverted", "max", "sum", "zmuv", "rank", "borda", None)

_MISSING_MAX = -1e9   # ranx's comb_max default for a run that missed the document
_MISSING_MIN = 1e9


def _ranked(results: Mapping[Any, float], inverted: bool) -> list:
    """The run's documents in its order: score descending (ascending when inverted), ties
    by document id descending."""
    ids = sorted(results, reverse=True)             # id descending ...
    return sorted(ids, key=lambda d: results[d], reverse=not inverted)   # ... stable


def normalize(results: Mapping[Any, float], ranked: list, norm: str | None,
              candidates: list) -> dict:
    """One run's normalised scores for one query (``ranked``: its documents in its order;
    ``candidates``: every run's documents, for ``borda``)."""
    n = len(ranked)
    scores = [float(results[d]) for d in ranked]
    if norm is None:
        return dict(zip(ranked, scores))
    if norm == "rank":
        return {d: 1 - (i / n) for i, d in enumerate(ranked)}
    if norm == "borda":
        m = len(candidates)
        out = {d: 1 - (i / m) for i, d in enumerate(ranked)}
        for d in candidates:
            if d not in out:
                out[d] = 0.5 - ((n - 1) / (2 * m))
        return out
    if n == 0:
        return {}
    lo, hi = min(scores), max(scores)
    if norm == "min-max":
        den = max(hi - lo, 1e-9)
        return {d: (s - lo) / den for d, s in zip(ranked, scores)}
    if norm == "min-max-inverted":
        den = max(hi - lo, 1e-9)
        return {d: (hi - s) / den for d, s in zip(ranked, scores)}
    if norm == "max":
        den = max(hi, 1e-9)
        return {d: s / den for d, s in zip(ranked, scores)}
    total = 0.0
    for s in scores:
        total += s
    if norm == "sum":
        den = max(total - lo * n, 1e-9)
        return {d: (s - lo) / den for d, s in zip(ranked, scores)}
    if norm == "zmuv":
        mean = total / n
        sq = 0.0
        for s in scores:
            sq += (s - mean) * (s - mean)
        den = max(math.sqrt(sq / n), 1e-9)
        return {d: (s - mean) / den for d, s in zip(ranked, scores)}
    raise ValueError(f"unknown normalisation {norm!r}")


def _median(values: list) -> float:
    v = sorted(values)
    h = len(v) // 2
    return v[h] if len(v) % 2 else (v[h - 1] + v[h]) / 2


def _condorcet_order(candidates: list, positions: list, weights: list) -> list:
    """The candidates merge-sorted by pairwise majority (see the module docstring)."""
    inf = math.inf

    def beats(a, b) -> bool:
        for_a = for_b = 0.0
        for pos, w in zip(positions, weights):
            pa, pb = pos.get(a, inf), pos.get(b, inf)
            if pa < pb:
                for_a += w
            elif pb < pa:
                for_b += w
        return for_a > for_b

    items = sorted(candidates, reverse=True)
    width = 1
    while width < len(items):
        merged = []
        for lo in range(0, len(items), 2 * width):
            left, right = items[lo:lo + width], items[lo + width:lo + 2 * width]
            i = j = 0
            while i < len(left) and j < len(right):
                if beats(right[j], left[i]):
                    merged.append(right[j])
                    j += 1
                else:
                    merged.append(left[i])
                    i += 1
            merged += left[i:] + right[j:]
        items = merged
        width *= 2
    return items


def _fuse_query(per_run: list, method: str, norm: str | None, weights: list,
                params: dict) -> dict:
    inverted = norm == "min-max-inverted"
    candidates: list = []
    seen: set = set()
    for results in per_run:
        for d in results:
            if d not in seen:
                seen.add(d)
                candidates.append(d)
    m = len(candidates)
    values, positions, sizes = [], [], []
    for results in per_run:
        ranked = _ranked(results, inverted)
        sizes.append(len(ranked))
        values.append(normalize(results, ranked, norm, candidates))
        pos = {d: i for i, d in enumerate(ranked)}
        if norm == "borda":   # the run's missed candidates follow, id descending
            for d in sorted((d for d in candidates if d not in pos), reverse=True):
                pos[d] = len(pos)
        positions.append(pos)
    fused: dict = {}
    if method in ("condorcet", "w_condorcet"):
        order = _condorcet_order(candidates, positions, weights)
        fused = {d: float(m - i) for i, d in enumerate(order)}
    else:
        for d in candidates:
            fused[d] = _fuse_doc(d, method, values, positions, sizes, m, weights, params)
    order = sorted(sorted(fused, reverse=True), key=lambda d: fused[d], reverse=True)
    return {d: fused[d] for d in order}


def _fuse_doc(d, method, values, positions, sizes, m, weights, params) -> float:
    acc = 0.0
    count = 0
    wacc = 0.0
    got = []
    for r, (vals, pos) in enumerate(zip(values, positions)):
        w = weights[r]
        if method in ("bordafuse", "w_bordafuse"):
            pts = float(m - pos[d]) if d in pos else (m - sizes[r] + 1) / 2
            acc += pts * w if method == "w_bordafuse" else pts
            continue
        if d not in vals:
            continue
        v = vals[d]
        count += 1
        got.append(v)
        if method == "wsum":
            acc += w * v
        elif method == "wmnz":
            acc += v
            wacc += w
        elif method == "mixed":
            acc += v * w
        elif method == "rrf":
            acc += 1 / (params["k"] + pos[d] + 1)
        elif method in ("isr", "log_isr", "logn_isr"):
            acc += 1 / ((pos[d] + 1) * (pos[d] + 1))
        elif method == "rbc":
            acc += (1 - params["phi"]) * params["phi"] ** pos[d]
        else:
            acc += v
    if method in ("bordafuse", "w_bordafuse", "sum", "wsum", "rrf", "rbc"):
        return acc
    if method in ("mnz", "isr"):
        return acc * count
    if method == "anz":
        return acc / count
    if method == "max":
        return max(got + ([_MISSING_MAX] if count < len(values) else []))
    if method == "min":
        return min(got + ([_MISSING_MIN] if count < len(values) else []))
    if method == "med":
        return _median(got)
    if method == "gmnz":
        return acc * count ** params["gamma"]
    if method == "wmnz":
        return acc * wacc
    if method == "mixed":
        return acc * math.sqrt(count)
    if method == "log_isr":
        return acc * math.log(count)
    if method == "logn_isr":
        return acc * math.log(count + params["sigma"])
    raise ValueError(f"unknown method {method!r}")


def fuse(runs: Sequence[Mapping[Any, Mapping[Any, float]]], *, method: str = "rrf",
         norm: str | None = "min-max", weights: Sequence[float] | None = None,
         k: float = 60, gamma: float | None = None, phi: float | None = None,
         sigma: float = 0.01) -> dict:
    """The fused run ``{query_id: {doc_id: score}}``, each query's documents in rank order.

    Queries come in the order first seen, run by run. ``weights`` default to 1 per run.
    """
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}")
    if norm not in NORMS:
        raise ValueError(f"unknown normalisation {norm!r}")
    weights = [1.0] * len(runs) if weights is None else [float(w) for w in weights]
    params = {"k": k, "gamma": gamma, "phi": phi, "sigma": sigma}
    queries: dict = {}
    for run in runs:
        for q in run:
            queries.setdefault(q, None)
    return {q: _fuse_query([run.get(q, {}) for run in runs], method, norm, weights, params)
            for q in queries}
