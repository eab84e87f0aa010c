"""A hand-written numba reference kernel for the five ranking measures.

It is the "best per-row loop" baseline of the benchmark: the run is a dense (n_q, n_docs)
pair of arrays (int64 doc ids, float64 scores), the qrels a CSR (offsets, ids, grades).
trec_eval order is score descending, then doc id descending, so the rank of a retrieved doc
(score s, id d) is 1 + #{docs with score > s, or score == s and id > d}. Only judged docs
with grade > 0 are located (grade-0 docs contribute to none of the five measures).

Output columns: RR@10, AP@100 (map_cut_100), nDCG@10 (linear gain, ndcg_cut_10), P@10,
recall@100 -- the order of ``MEASURES_QAFAST`` in _common.py.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

N_MEASURES = 5


@njit(nogil=True, inline="always")
def _one_query(q, ids, sc, qoff, jids, jgr, rel_level, disc, ranks, gains, ideal, out):
    n = ids.shape[1]
    nrel = 0  # judged relevant (grade >= rel_level), retrieved or not
    nret = 0  # judged with grade > 0 and retrieved
    nideal = 0
    for j in range(qoff[q], qoff[q + 1]):
        g = jgr[j]
        if g >= rel_level:
            nrel += 1
        if g > 0:
            ideal[nideal] = g
            nideal += 1
        elif g < rel_level:
            continue
        d = jids[j]
        pos = -1
        for k in range(n):
            if ids[q, k] == d:
                pos = k
                break
        if pos < 0:
            continue
        s = sc[q, pos]
        r = 1
        for k in range(n):  # branch-free so LLVM vectorises it
            x = sc[q, k]
            r += (x > s) | ((x == s) & (ids[q, k] > d))
        # insertion sort by rank (at most MAX_JUDGED entries)
        i = nret
        while i > 0 and ranks[i - 1] > r:
            ranks[i] = ranks[i - 1]
            gains[i] = gains[i - 1]
            i -= 1
        ranks[i] = r
        gains[i] = g
        nret += 1

    rr = 0.0
    ap = 0.0
    dcg = 0.0
    p10 = 0
    rec = 0
    seen = 0
    for i in range(nret):
        r = ranks[i]
        g = gains[i]
        if g >= rel_level:
            seen += 1
            if seen == 1 and r <= 10:
                rr = 1.0 / r
            if r <= 10:
                p10 += 1
            if r <= 100:
                ap += seen / r
                rec += 1
        if g > 0 and r <= 10:
            dcg += g * disc[r - 1]
    # ideal DCG@10: grades sorted descending
    for i in range(1, nideal):
        v = ideal[i]
        k = i
        while k > 0 and ideal[k - 1] < v:
            ideal[k] = ideal[k - 1]
            k -= 1
        ideal[k] = v
    idcg = 0.0
    for i in range(min(nideal, 10)):
        idcg += ideal[i] * disc[i]
    out[q, 0] = rr
    out[q, 1] = ap / nrel if nrel > 0 else 0.0
    out[q, 2] = dcg / idcg if idcg > 0 else 0.0
    out[q, 3] = p10 / 10.0
    out[q, 4] = rec / nrel if nrel > 0 else 0.0


@njit(nogil=True)
def per_query_serial(ids, sc, qoff, jids, jgr, rel_level, max_judged):
    n_q = ids.shape[0]
    out = np.empty((n_q, N_MEASURES))
    disc = 1.0 / np.log2(np.arange(2, 12).astype(np.float64))
    ranks = np.empty(max_judged, np.int64)
    gains = np.empty(max_judged, np.int64)
    ideal = np.empty(max_judged, np.int64)
    for q in range(n_q):
        _one_query(q, ids, sc, qoff, jids, jgr, rel_level, disc, ranks, gains, ideal, out)
    return out


@njit(nogil=True, parallel=True)
def per_query_parallel(ids, sc, qoff, jids, jgr, rel_level, max_judged, n_chunks):
    n_q = ids.shape[0]
    out = np.empty((n_q, N_MEASURES))
    disc = 1.0 / np.log2(np.arange(2, 12).astype(np.float64))
    step = (n_q + n_chunks - 1) // n_chunks
    for c in prange(n_chunks):
        ranks = np.empty(max_judged, np.int64)
        gains = np.empty(max_judged, np.int64)
        ideal = np.empty(max_judged, np.int64)
        for q in range(c * step, min(n_q, (c + 1) * step)):
            _one_query(q, ids, sc, qoff, jids, jgr, rel_level, disc, ranks, gains, ideal, out)
    return out


def evaluate_serial(data, rel_level: int = 1) -> np.ndarray:
    """Per-query (n_q, 5) values, one thread."""
    max_j = int(np.diff(data.qrel_offsets).max(initial=1))
    return per_query_serial(
        data.run_ids, data.run_scores, data.qrel_offsets, data.qrel_ids, data.qrel_grades,
        rel_level, max_j,
    )


def evaluate_parallel(data, threads: int, rel_level: int = 1) -> np.ndarray:
    """Per-query (n_q, 5) values with numba prange over ``threads`` threads."""
    import numba

    numba.set_num_threads(threads)
    max_j = int(np.diff(data.qrel_offsets).max(initial=1))
    return per_query_parallel(
        data.run_ids, data.run_scores, data.qrel_offsets, data.qrel_ids, data.qrel_grades,
        rel_level, max_j, threads * 8,
    )
