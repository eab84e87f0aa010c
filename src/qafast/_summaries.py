"""The engine's rules that need no numpy: what trec_eval prints for "all", what a query
missing from the run (trec_eval ``-c``) keeps, and relstrings.

Shared by the numpy engine (``_engine``) and the command line's numpy-free path for small
TREC files (``_trec_text``), so that both print the same bytes by construction.
"""

from __future__ import annotations

import math
from array import array
from typing import Any

from . import _kernels
from ._measure_parser import Column

__all__ = ["LEVEL_CEILING", "MIN_GEO_MEAN", "column_summaries", "column_summary",
           "pair_queries", "relstring", "zeroed_when_missing"]

#: trec_eval.h's floor on a per-query value before its log is taken (the gm_* measures)
MIN_GEO_MEAN = 0.00001
#: above every int32 grade: every higher relevance level selects the same (no) documents
LEVEL_CEILING = 2**31


def column_summary(col: Column, total: float, count: int) -> float:
    """What trec_eval prints for "all", from the sum of the per-query values."""
    if count == 0:
        return 0.0
    if col.aggregate == "sum":
        return float(total)
    if col.aggregate == "gm":
        return float(math.exp(total / count))
    return float(total / count)


def column_summaries(columns: list[Column], values: Any, *, exact: bool = False,
                     every_qrels_query: Any = None) -> list[float]:
    """What trec_eval prints for "all", per column: from sums in row order, as trec_eval adds
    (the CLI), or from exactly rounded sums (``evaluate``: the same bits however the queries
    were split, as ``qafast.RankingMetrics`` accumulates them). ``values``: a C-contiguous
    float64 buffer of shape (queries, columns). ``every_qrels_query``: the qrels (anything
    with an int32 ``values`` buffer of grades), when all of their queries are evaluated
    (trec_eval ``-c``)."""
    if exact:
        from . import _exactsum

        totals = _exactsum.column_sums(values)
    else:
        sums = array("d", bytes(8 * len(columns)))
        _kernels.column_sums(values, sums)
        totals = sums.tolist()
    out = [column_summary(c, t, values.shape[0]) for c, t in zip(columns, totals)]
    if every_qrels_query is not None:
        # trec_eval -c sums num_rel afresh from the qrels lines (m_num_rel.c): every line with
        # a grade above 0, whatever -l is. ranx's and ir_measures' names keep their own
        # definition (ir_measures' NumRel counts grades >= rel)
        num_rel = float(_kernels.grade_summary(every_qrels_query.values)[1])
        out = [num_rel if c.family == "num_rel" and c.tool == "trec_eval" else v
               for c, v in zip(columns, out)]
    return out


def pair_queries(run_ids: list, qrels_ids: list, *, every_qrels_query: bool,
                 keep: list[bool] | None = None, qrels_start: int = 0,
                 qrels_index: dict | None = None) -> tuple[list, list[int], list[int]]:
    """(query ids, run positions, qrels positions) of the queries evaluated, in query id
    order: those of the run also in the qrels (``keep[i]`` False leaves run query i out),
    and with ``every_qrels_query`` (trec_eval -c) each other qrels query, at run position
    -1. No run position at or above 0 means no query in common. The run's queries are first
    tried against the qrels' from ``qrels_start`` on, in order; ``qrels_index``: the qrels'
    {id: position}, when the caller keeps one."""
    keep = keep if keep is not None else [True] * len(run_ids)
    if run_ids == qrels_ids[qrels_start:qrels_start + len(run_ids)]:
        # the same queries in the same order, as when the run was made from the qrels'
        # topics: no dictionary (each lookup is a cache miss on a scattered id object)
        qpos = [qrels_start + i if k else -1 for i, k in enumerate(keep)]
    else:
        get = (qrels_index if qrels_index is not None
               else {q: j for j, q in enumerate(qrels_ids)}).get
        qpos = [get(q, -1) if keep[i] else -1 for i, q in enumerate(run_ids)]
    pair_run = [i for i, j in enumerate(qpos) if j >= 0]
    ids = [run_ids[i] for i in pair_run]
    pair_qrels = [qpos[i] for i in pair_run]
    if every_qrels_query:
        in_run = set(pair_qrels)
        missing = [j for j in range(len(qrels_ids)) if j not in in_run]
        ids += [qrels_ids[j] for j in missing]
        pair_run += [-1] * len(missing)
        pair_qrels += missing
    order = sorted(range(len(ids)), key=ids.__getitem__)
    return ([ids[k] for k in order], [pair_run[k] for k in order],
            [pair_qrels[k] for k in order])


def zeroed_when_missing(col: Column) -> bool:
    """Whether a query missing from the run (evaluated under trec_eval ``-c``) scores 0 in
    this column. trec_eval 10.0 -c ranks one non-judged document for such a query, then
    zeroes the values printed exactly as num_ret, utility, rbp_resid and unj_* (trec_eval.c);
    utility_a,b,c,d or rbp_resid_p=x keep theirs. ranx and ir_measures score such a query 0
    in every measure."""
    return col.tool != "trec_eval" or (isinstance(col.name, str) and (
        col.name in ("num_ret", "utility", "rbp_resid") or col.name.startswith("unj")))


def relstring(ranks: Any, grades: Any, lo: int, count: int, num_ret: int, length: int) -> str:
    """trec_eval's relstring of one query: a character per rank for the top ``length`` of
    its ``num_ret`` documents, from its ``count`` (rank, grade) rows from ``lo`` on: the
    grade (">" above 9, "." for a negative one), "-" for a document outside the qrels."""
    n = min(num_ret, max(length, 0))
    chars = ["-"] * n
    for i in range(lo, lo + count):
        r = int(ranks[i]) - 1
        if r < n:
            g = int(grades[i])
            chars[r] = ">" if g > 9 else (str(g) if g >= 0 else ".")
    return "".join(chars)
