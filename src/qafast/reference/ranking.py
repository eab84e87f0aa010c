"""The specification: trec_eval's ranking measures in plain Python.

This module is the readable definition of every ranking number qafast reports. The fast kernels in
``_kernels.pyx`` are tested against it, and it is tested against the golden outputs of trec_eval
10.0 (``tests/test_reference_trec.py``). It uses only the standard library, favours clarity over
speed, and follows trec_eval's formulas and order of floating-point operations so that values
agree bit for bit, quirks included (each is documented where it occurs). The rules come from
reading trec_eval's C source (usnistgov/trec_eval; the C file is named for each rule so it can be
checked there). Checks: every number of trec_eval 10.0's golden outputs (printed to 4 decimals),
and, for ``version="9.0.8"``, exact equality with pytrec-eval-terrier 0.5.11 (trec_eval 9.0.8) on
random inputs. (trec_eval: NIST / Chris Buckley; this is an independent re-implementation, not a
copy of its code.)

How trec_eval scores one query
------------------------------
1. ``rank_query`` (form_res_rels.c): sort the run's documents by score descending, ties broken by
   docno *descending* (``strcmp``, which for Python ``str`` is plain ``<``); keep the first
   ``max_docs`` (``-M``); replace each docno by its qrels grade, or ``NONPOOL`` (-1) if the docno is
   absent from the query's qrels, or ``UNJUDGED`` (-2) if its qrels grade is negative; with
   ``judged_only`` (``-J``) drop the NONPOOL/UNJUDGED entries *after* the ``-M`` cut, closing the
   gaps. The result is a list of grades by rank plus the query's qrels grades.
2. ``measure``: every measure is a function of that list, the qrels grades and the relevance level
   L (``-l``, default 1). A retrieved document is relevant when ``grade >= L``. R (``num_rel``) is
   the number of qrels entries with grade >= L and grade >= 0, retrieved or not.
3. ``summarize`` (meas_acc.c, meas_avg.c): the ``all`` line is a mean over queries, a sum for
   the ``num_*`` counts, and a geometric mean for ``gm_map``/``gm_bpref``.
4. ``evaluate`` chooses the queries (trec_eval.c) and runs the above.

Values are Python floats (C doubles); ``relstring`` is a string. Counts are floats too, as in
trec_eval, which prints them with ``%ld``.

Versions
--------
``version="10.0"`` (default) is trec_eval 10.0. ``version="9.0.8"`` is the trec_eval inside
pytrec_eval / pytrec-eval-terrier; it differs in:

* the recall cut points of ``iprec_at_recall`` and ``11pt_avg``: 10.0 uses ``lround(p * R)``,
  9.0.8 ``(long)(p * R + 0.9)`` (m_iprec_at_recall.c, m_11pt_avg.c; the golden files confirm the
  10.0 form). ``Rprec_mult`` keeps ``(long)(m * R + 0.9)`` in both;
* the measures ``dcg``, ``ideal_dcg``, ``rbp``, ``rbp_resid`` and ``unj`` do not exist in 9.0.8
  (``measure`` raises ``ValueError``);
* ``evaluate(queries="qrels")``: 9.0.8's ``-c`` does not evaluate a qrels query missing from the
  run, it only counts it in the divisor (see ``evaluate``);
* scores: 9.0.8 stores them as C ``float``; pass ``float32_scores=True`` for that (it is a separate
  switch so that it can be combined with either version).

Every other formula is the same in both versions.

trec_eval behaviour worth knowing (all reproduced unless marked)
----------------------------------------------------------------
* Ties go to the larger docno (form_res_rels.c ``comp_sim_docno``); ``-M`` cuts before ``-J``
  filters; ``-J`` then also hides every NONPOOL/UNJUDGED count (so rbp_resid and unj are 0).
* P@k, unj@k divide by k even when fewer than k docs are ranked (m_P.c, m_unjudged.c); AP,
  map_cut, recall, Rprec divide by R, not by what was retrieved (m_map.c, m_map_cut.c).
* ndcg, ndcg_cut, G, ndcg_rel, rbp ignore -l: gains are raw grades (m_ndcg.c, ...); Rndcg
  too, except that it is 0 when R (counted with -l) is 0 (m_Rndcg.c).
  ndcg's ideal list is not cut at n, ndcg_cut's is cut at k; ndcg_cut takes no gain map.
* Gain maps: levels compared as ``(int)(g1 - g2)`` when sorting (gain_init.c ``comp_rel_gain``),
  so gains less than 1 apart may not be ordered; reproduced with glibc's merge sort.
* bpref ignores NONPOOL and UNJUDGED docs and uses min(N_above, R) / min(N, R) (m_bpref.c).
* infAP counts negative qrels grades as pooled-but-unjudged (m_infap.c, INFAP_EPSILON = 1e-5).
* iprec_at_recall / 11pt_avg are NaN (C's 0/0) when nothing is ranked, e.g. -J with no judged
  docs (m_iprec_at_recall.c); 11pt_avg points keep the order given (m_11pt_avg.c).
* set_F's parameter multiplies P directly (beta squared, not beta) (m_set_F.c).
* gm_map / gm_bpref are per query log(max(v, 1e-5)); only the geometric mean is printed.
* utility defaults to (1, -1, 0, 0) with -N = 0 (m_utility.c); its summary is a mean.
* rbp: uninitialised min/max in m_rbp.c, see ``_rbp``.
* -c in 10.0 evaluates a one-document bogus ranking for a missing query, see ``evaluate``.
* Not reproduced (undefined behaviour in C): a query whose qrels are all negative reuses the
  previous query's ``num_rel_levels``; summing ``rel_levels`` below an L above every grade
  reads past the array (bpref's N); NaN scores.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple

from .._measures import TABLE as _TABLE

__all__ = [
    "NONPOOL",
    "UNJUDGED",
    "MIN_GEO_MEAN",
    "INFAP_EPSILON",
    "BOGUS_DOCNO",
    "VERSIONS",
    "DEFAULT_PARAMS",
    "FAMILIES",
    "RankedQuery",
    "rank_query",
    "measure",
    "summarize",
    "evaluate",
]

NONPOOL = -1
"""Grade code of a retrieved document absent from the query's qrels (RELVALUE_NONPOOL)."""
UNJUDGED = -2
"""Grade code of a retrieved document whose qrels grade is negative (RELVALUE_UNJUDGED)."""
MIN_GEO_MEAN = 0.00001
"""Floor applied before the log in gm_map / gm_bpref (trec_eval.h)."""
INFAP_EPSILON = 0.00001
"""Smoothing constant of infAP (trec_eval.h)."""
BOGUS_DOCNO = "ceci_nest_pas_un_docno"
"""Docno of the one-document ranking trec_eval 10.0 -c gives a missing query (trec_eval.c)."""
VERSIONS = ("10.0", "9.0.8")

# The families' parameters and summaries are the measure table's (qafast._measures, which
# imports only the standard library): declared once, for the kernels and for this module.
_TREC_ROWS = tuple(f for f in _TABLE if f.origin == "trec_eval")
DEFAULT_PARAMS: dict[str, Any] = {
    f.name: f.defaults if f.params in ("cut", "fcut", "floats") and f.arity != 1
    else f.defaults[0] for f in _TREC_ROWS if f.defaults}
"""trec_eval's default parameters (measures.c and the m_*.c files): a tuple of cut-offs for the
families that take one per call (``param=None`` is an error for them; these are the lists
``-m <family>`` prints), else the one default ``param=None`` selects."""

_MULTI_DEFAULT = frozenset(f.name for f in _TREC_ROWS if f.params in ("cut", "fcut"))
_SUM_FAMILIES = frozenset(f.name for f in _TABLE if f.summary == "sum")
_GM_FAMILIES = frozenset(f.name for f in _TABLE if f.summary == "gm")
_NOT_IN_908 = frozenset(f.name for f in _TREC_ROWS if f.since == "10.0")


# --------------------------------------------------------------------------------------------
# Building the ranking
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class RankedQuery:
    """One query, ready for the measures (what trec_eval's ``te_form_res_rels`` returns).

    ``grades``: grade at ranks 1..num_ret after ordering, ``-M`` truncation and ``-J`` filtering;
    a qrels grade (>= 0), ``NONPOOL`` (-1) or ``UNJUDGED`` (-2).
    ``qrels_grades``: every qrels grade of the query (retrieved or not, negatives included).
    ``relevance_level``: L; a grade >= L is relevant.
    """

    grades: list[int]
    qrels_grades: list[int]
    relevance_level: int


def _float32(x: float) -> float:
    """Round a double to the nearest C ``float`` (as ``(float) atof(s)`` does in trec_eval 9)."""
    try:
        return struct.unpack("f", struct.pack("f", x))[0]
    except OverflowError:  # C's cast gives an infinity; struct refuses
        return math.copysign(math.inf, x)


def rank_query(
    qrels_q: Mapping[str, int],
    run_q: Mapping[str, float],
    *,
    relevance_level: int = 1,
    max_docs: int | None = None,
    judged_only: bool = False,
    float32_scores: bool = False,
) -> RankedQuery:
    """Order one query's run and label each rank with its qrels grade (form_res_rels.c).

    Order: score descending, then docno descending by ``strcmp`` (= Python ``str`` order, as
    code-point order equals UTF-8 byte order). ``max_docs`` (``-M``) keeps the first ``max_docs``
    of that order; ``judged_only`` (``-J``) then removes NONPOOL and UNJUDGED documents, so the
    cut applies before the filter. ``float32_scores`` first rounds every score to a C ``float``
    (trec_eval 9.0.8 and pytrec_eval store ``float``), which can create ties the doubles did not
    have. NaN scores make trec_eval's comparator inconsistent; their order here is Python's and
    is not meant to match.
    """
    if max_docs is not None and max_docs < 0:
        raise ValueError(f"max_docs must be >= 0 or None, got {max_docs!r}")
    scored = []
    for docno, score in run_q.items():
        score = float(score)
        scored.append((_float32(score) if float32_scores else score, docno))
    scored.sort(reverse=True)  # score descending, then docno descending
    if max_docs is not None:
        scored = scored[:max_docs]
    grades = []
    for _, docno in scored:
        grade = qrels_q.get(docno)
        if grade is None:
            grades.append(NONPOOL)
        elif grade < 0:
            grades.append(UNJUDGED)
        else:
            grades.append(int(grade))
    if judged_only:
        grades = [g for g in grades if g >= 0]
    qrels_grades = [int(qrels_q[d]) for d in sorted(qrels_q)]
    return RankedQuery(grades, qrels_grades, int(relevance_level))


class _Counts(NamedTuple):
    num_ret: int
    num_rel: int  # R
    num_rel_ret: int
    num_nonpool: int
    num_unjudged: int
    rel_levels: list[int]  # rel_levels[g] = number of qrels entries with grade g >= 0
    num_rel_levels: int  # 1 + the highest grade g >= 0 present in the qrels, 0 if none


def _counts(rq: RankedQuery) -> _Counts:
    """The per-query counts of form_res_rels.c.

    Quirks not reproduced: trec_eval leaves ``num_rel_levels`` unchanged from the previous query
    when a query's qrels are all negative, and measures that sum ``rel_levels`` below L read past
    the array when L exceeds the highest grade + 1; here both are taken as zero counts.
    """
    level = rq.relevance_level
    highest = max((g for g in rq.qrels_grades if g >= 0), default=-1)
    rel_levels = [0] * (highest + 1)
    for g in rq.qrels_grades:
        if g >= 0:
            rel_levels[g] += 1
    num_rel = 0
    for g, count in enumerate(rel_levels):
        if g >= level:
            num_rel += count
    num_rel_ret = num_nonpool = num_unjudged = 0
    for g in rq.grades:
        if g == NONPOOL:
            num_nonpool += 1
        elif g == UNJUDGED:
            num_unjudged += 1
        elif g >= level:
            num_rel_ret += 1
    return _Counts(len(rq.grades), num_rel, num_rel_ret, num_nonpool, num_unjudged, rel_levels,
                   highest + 1)


def _c_log2(x: float) -> float:
    """C's log2: -inf at 0 and NaN below it, where Python's would raise."""
    if x > 0:
        return math.log2(x)
    return -math.inf if x == 0 else math.nan


def _div(a: float, b: float) -> float:
    """IEEE division as C does it: x/0 is +-inf, 0/0 is NaN (Python would raise)."""
    if b != 0:
        return a / b
    if a != a or a == 0:
        return math.nan
    return math.copysign(math.inf, a) * math.copysign(1.0, b)


def _c_long(x: float) -> int:
    """C's ``(long) x``: truncation toward zero."""
    return int(x)


def _lround(x: float) -> int:
    """C's ``lround``: nearest integer, halves away from zero (exact, unlike floor(x + .5))."""
    if x < 0:
        return -_lround(-x)
    whole = math.floor(x)
    return int(whole) + (1 if x - whole >= 0.5 else 0)


def _recall_cut(p: float, num_rel: int, version: str) -> int:
    """Number of relevant docs at recall point p (m_iprec_at_recall.c, m_11pt_avg.c)."""
    if version == "9.0.8":
        return _c_long(p * num_rel + 0.9)
    return _lround(p * num_rel)


def _check_cutoff(family: str, k: Any) -> int:
    if isinstance(k, bool) or not isinstance(k, int):
        raise TypeError(f"{family}: the cut-off must be an int, got {k!r}")
    if k <= 0:
        raise ValueError(f"{family}: cut-offs must be positive (meas_init.c), got {k}")
    return k


# --------------------------------------------------------------------------------------------
# Gains (gain_init.c), shared by ndcg, ndcg_rel, Rndcg, G, dcg, ideal_dcg and rbp
# --------------------------------------------------------------------------------------------

class _Gain(NamedTuple):
    level: int
    gain: float
    count: int  # type: ignore[assignment]  # qrels entries at this level (hides tuple.count)


def _glibc_merge_sort(items: list[Any], cmp: Callable[[Any, Any], int]) -> list[Any]:
    """glibc's ``qsort`` (a top-down merge sort; left half n//2, ties keep the left element).

    Needed only because trec_eval's gain comparator is not a total order (see ``_gain_table``),
    so the result depends on the algorithm; this is the one trec_eval uses on Linux.
    """
    if len(items) <= 1:
        return list(items)
    half = len(items) // 2
    left = _glibc_merge_sort(items[:half], cmp)
    right = _glibc_merge_sort(items[half:], cmp)
    merged = []
    i = j = 0
    while i < len(left) and j < len(right):
        if cmp(left[i], right[j]) <= 0:
            merged.append(left[i])
            i += 1
        else:
            merged.append(right[j])
            j += 1
    return merged + left[i:] + right[j:]


def _valid_level(key: Any) -> int | None:
    """A gain-map key as trec_eval accepts it: an integer, or a string of optional sign + digits."""
    if isinstance(key, bool):
        return None
    if isinstance(key, int):
        return key
    if isinstance(key, str):
        body = key[1:] if key[:1] in ("+", "-") else key
        if body and all(c in "0123456789" for c in body):
            return int(key)
    return None


def _gain_pairs(gain_map: Any) -> list[tuple[Any, float]]:
    """A gain map as (level, gain) pairs: a mapping, or an iterable of pairs (hashable, for use
    as an ``evaluate`` key), in the order given."""
    if gain_map is None:
        return []
    if isinstance(gain_map, Mapping):
        return list(gain_map.items())
    return [(key, value) for key, value in gain_map]


def _gain_table(rq: RankedQuery, gain_map: Any) -> list[_Gain]:
    """Gain of each relevance level, sorted by increasing gain (setup_gains in gain_init.c).

    Entries from ``gain_map`` come first, in the map's order (keys that are not integers, such as
    rbp's ``"p"``, are skipped); then every level 0..num_rel_levels-1 not in the map, with gain =
    level. Each entry carries the number of qrels docs at its level (0 for mapped levels the qrels
    do not use). Quirk: the sort compares ``(int)(gain1 - gain2)``, i.e. gains closer than 1
    compare equal (``comp_rel_gain``), so e.g. gains 0.5 and 0.0 may stay in input order.
    """
    c = _counts(rq)
    table: list[_Gain] = []
    for key, gain in _gain_pairs(gain_map):
        level = _valid_level(key)
        if level is not None:
            table.append(_Gain(level, float(gain), 0))
    for level in range(c.num_rel_levels):
        for j, entry in enumerate(table):
            if entry.level == level:
                table[j] = entry._replace(count=c.rel_levels[level])
                break
        else:
            table.append(_Gain(level, float(level), c.rel_levels[level]))
    return _glibc_merge_sort(table, lambda a, b: _c_long(a.gain - b.gain))


def _gain_of(grade: int, table: list[_Gain]) -> float:
    """Gain of a retrieved doc: its level's entry (first match), else 0 (get_gain)."""
    for entry in table:
        if entry.level == grade:
            return entry.gain
    return 0.0


def _ideal_gains(table: list[_Gain]) -> list[float]:
    """Gains of the ideal ranking, best first, stopping at the first gain <= 0.

    Walks ``table`` from its last (highest-gain) entry down, taking ``count`` copies of each
    entry's gain. This is the walk that m_ndcg.c, m_ndcg_rel.c, m_Rndcg.c and m_G.c interleave
    with the ranking; none of them looks at -l.
    """
    ideal: list[float] = []
    index = len(table) - 1  # current table entry
    if index < 0 or table[index].gain <= 0.0:
        return ideal
    taken = 0  # copies taken from the current entry, this one included
    while True:
        taken += 1
        while index >= 0 and taken > table[index].count:
            taken = 1
            index -= 1
        gain = table[index].gain if index >= 0 else 0.0
        if gain <= 0.0:
            return ideal
        ideal.append(gain)


def _dcg_and_ideal(rq: RankedQuery, gain_map: Any) -> tuple[float, float]:
    table = _gain_table(rq, gain_map)
    dcg = 0.0
    for i, grade in enumerate(rq.grades):
        gain = _gain_of(grade, table)
        if gain != 0:
            dcg += gain / math.log2(i + 2)
    ideal_dcg = 0.0
    for i, gain in enumerate(_ideal_gains(table)):
        ideal_dcg += gain / math.log2(i + 2)
    return dcg, ideal_dcg


# --------------------------------------------------------------------------------------------
# The measures. Each takes (ranked query, param, version) and returns a float (relstring: str).
# n = num_ret, R = num_rel, L = relevance_level, g_i = grade at rank i (1-based in formulas).
# --------------------------------------------------------------------------------------------

def _num_q(rq: RankedQuery, param: Any, version: str) -> float:
    """1 per evaluated query; the summary is the number of queries (m_num_q.c)."""
    return 1.0


def _num_ret(rq: RankedQuery, param: Any, version: str) -> float:
    """n, the number of ranked docs after -M and -J (m_num_ret.c). Summary: sum."""
    return float(len(rq.grades))


def _num_rel(rq: RankedQuery, param: Any, version: str) -> float:
    """R: qrels entries with grade >= L (and >= 0), retrieved or not (m_num_rel.c). Summary: sum."""
    return float(_counts(rq).num_rel)


def _num_rel_ret(rq: RankedQuery, param: Any, version: str) -> float:
    """Ranked docs with grade >= L (judged ones only) (m_num_rel_ret.c). Summary: sum."""
    return float(_counts(rq).num_rel_ret)


def _num_nonrel_judged_ret(rq: RankedQuery, param: Any, version: str) -> float:
    """n - NONPOOL - UNJUDGED - num_rel_ret: ranked docs judged below L
    (m_num_nonrel_judged_ret.c). Summary: sum."""
    c = _counts(rq)
    return float(c.num_ret - c.num_nonpool - c.num_unjudged - c.num_rel_ret)


def _average_precision(rq: RankedQuery) -> tuple[float, int]:
    """(sum over relevant ranks i of hits_i / i, number of relevant ranks) (m_map.c)."""
    level = rq.relevance_level
    total = 0.0
    hits = 0
    for i, g in enumerate(rq.grades):
        if g >= level:
            hits += 1
            total += hits / (i + 1)
    return total, hits


def _map(rq: RankedQuery, param: Any, version: str) -> float:
    """AP = sum over relevant ranks i of (relevant in top i)/i, divided by R; 0 when no relevant
    doc is ranked; unranked relevant docs add 0 (m_map.c)."""
    total, hits = _average_precision(rq)
    return _div(total, _counts(rq).num_rel) if hits else 0.0


def _yaap(rq: RankedQuery, param: Any, version: str) -> float:
    """log((1 + s) / (1 + R - s)), s AP's sum of precisions at the relevant ranks, not divided
    by R (m_yaap.c): log(1 / (1 + R)) when none is ranked."""
    total, _ = _average_precision(rq)
    return math.log((1.0 + total) / (1.0 + _counts(rq).num_rel - total))


def _gm_map(rq: RankedQuery, param: Any, version: str) -> float:
    """log(max(AP, MIN_GEO_MEAN)): the per-query value trec_eval accumulates (and pytrec_eval
    returns); trec_eval prints only the summary exp(mean) (m_gm_map.c, meas_avg.c)."""
    total, hits = _average_precision(rq)
    ap = _div(total, _counts(rq).num_rel) if hits else total
    return math.log(ap if ap > MIN_GEO_MEAN else MIN_GEO_MEAN)


def _rprec(rq: RankedQuery, param: Any, version: str) -> float:
    """(relevant in top min(n, R)) / R; 0 when n or R is 0 (m_Rprec.c)."""
    c = _counts(rq)
    depth = min(c.num_ret, c.num_rel)
    if depth == 0:
        return 0.0
    hits = sum(1 for g in rq.grades[:depth] if g >= rq.relevance_level)
    return hits / c.num_rel


def _bpref_sum(rq: RankedQuery) -> float:
    """bpref before the division by R (m_bpref.c, m_gm_bpref.c)."""
    c = _counts(rq)
    level = rq.relevance_level
    num_nonrel = sum(c.rel_levels[: max(level, 0)])  # judged nonrelevant in the qrels
    total = 0.0
    nonrel_so_far = 0
    for g in rq.grades:
        if g == NONPOOL or g == UNJUDGED:
            continue  # bpref only sees judged docs
        if 0 <= g < level:
            nonrel_so_far += 1
        elif nonrel_so_far > 0:
            total += 1.0 - min(nonrel_so_far, c.num_rel) / min(num_nonrel, c.num_rel)
        else:
            total += 1.0
    return total


def _bpref(rq: RankedQuery, param: Any, version: str) -> float:
    """(1/R) * sum over judged relevant ranked docs of 1 - min(N_above, R) / min(N, R), where
    N_above = judged nonrelevant docs (0 <= grade < L) ranked above it and N = judged nonrelevant
    docs in the qrels; the term is 1 when N_above = 0. NONPOOL and UNJUDGED docs are skipped;
    0 when R = 0 (m_bpref.c)."""
    total = _bpref_sum(rq)
    num_rel = _counts(rq).num_rel
    return total / num_rel if num_rel else total


def _gm_bpref(rq: RankedQuery, param: Any, version: str) -> float:
    """log(max(bpref, MIN_GEO_MEAN)); summary exp(mean), like gm_map (m_gm_bpref.c)."""
    value = _bpref(rq, param, version)
    return math.log(value if value > MIN_GEO_MEAN else MIN_GEO_MEAN)


def _recip_rank(rq: RankedQuery, param: Any, version: str) -> float:
    """1 / rank of the first relevant doc; 0 if none. No cut-off in trec_eval (use -M, or the
    qafast extension recip_rank_cut) (m_recip_rank.c)."""
    for i, g in enumerate(rq.grades):
        if g >= rq.relevance_level:
            return 1.0 / (i + 1)
    return 0.0


def _recip_rank_cut(rq: RankedQuery, param: Any, version: str) -> float:
    """qafast extension, not in trec_eval: 1 / rank of the first relevant doc within the top k,
    else 0. Equals trec_eval's recip_rank under -M k."""
    k = _check_cutoff("recip_rank_cut", param)
    for i, g in enumerate(rq.grades[:k]):
        if g >= rq.relevance_level:
            return 1.0 / (i + 1)
    return 0.0


def _interpolated_precision(rq: RankedQuery, cuts: Sequence[int]) -> list[float]:
    """Interpolated precision when cuts[j] relevant docs have been retrieved, for each j.

    Interpolated precision at rank r is the best precision at any rank >= r; a cut count c is
    read at the rank of the c-th relevant doc (c = 0: the best precision anywhere). A cut count
    above num_rel_ret gives 0. Shared by iprec_at_recall and 11pt_avg; it walks the ranking
    backwards and hands out values from the last cut down, so (as in C) cut counts given out of
    increasing order, possible only for 11pt_avg, get what that walk assigns them. With n = 0
    the precision is 0/0 and the reachable cuts are NaN, as in C.
    """
    c = _counts(rq)
    level = rq.relevance_level
    values = [0.0] * len(cuts)
    j = len(cuts) - 1
    while j >= 0 and cuts[j] > c.num_rel_ret:
        j -= 1
    best = _div(c.num_rel_ret, c.num_ret)
    rel_left = c.num_rel_ret
    i = c.num_ret
    while i > 0 and rel_left > 0:
        precision = rel_left / i
        if best < precision:
            best = precision
        if rq.grades[i - 1] >= level:
            while j >= 0 and rel_left == cuts[j]:
                values[j] = best
                j -= 1
            rel_left -= 1
        i -= 1
    while j >= 0:
        values[j] = best
        j -= 1
    return values


def _iprec_at_recall(rq: RankedQuery, param: Any, version: str) -> float:
    """Interpolated precision at recall p: the best precision at or after the rank where
    round(p * R) relevant docs have been retrieved (10.0: lround(p*R); 9.0.8: (long)(p*R + 0.9));
    0 when that count exceeds num_rel_ret (m_iprec_at_recall.c)."""
    p = float(param)
    return _interpolated_precision(rq, [_recall_cut(p, _counts(rq).num_rel, version)])[0]


def _11pt_avg(rq: RankedQuery, param: Any, version: str) -> float:
    """Mean of iprec_at_recall over the given recall points (default 0, .1, ..., 1), in the order
    given; duplicates are allowed and the name never shows the points (m_11pt_avg.c)."""
    points = DEFAULT_PARAMS["11pt_avg"] if param is None else tuple(param)
    if not points:
        raise ValueError("11pt_avg: needs at least one recall point")
    num_rel = _counts(rq).num_rel
    values = _interpolated_precision(rq, [_recall_cut(float(p), num_rel, version) for p in points])
    total = 0.0
    for value in reversed(values):  # C adds them from the last point down
        total += value
    return total / len(points)


def _relevant_in_top(rq: RankedQuery, k: int) -> int:
    """How many of the top k ranked docs have grade >= the relevance level."""
    return sum(1 for g in rq.grades[:k] if g >= rq.relevance_level)


def _precision(rq: RankedQuery, param: Any, version: str) -> float:
    """P@k = (relevant in top k) / k, also when fewer than k docs are ranked (m_P.c)."""
    k = _check_cutoff("P", param)
    hits = _relevant_in_top(rq, k)
    return hits / k


def _recall(rq: RankedQuery, param: Any, version: str) -> float:
    """recall@k = (relevant in top k) / R; 0 when R = 0 (m_recall.c)."""
    k = _check_cutoff("recall", param)
    num_rel = _counts(rq).num_rel
    if num_rel == 0:
        return 0.0
    hits = _relevant_in_top(rq, k)
    return hits / num_rel


def _relstring(rq: RankedQuery, param: Any, version: str) -> str:
    """The first k grades (default 10) as trec_eval prints them, quotes included: a digit for
    0-9, '>' above 9, '-' NONPOOL, '.' UNJUDGED (m_relstring.c). No summary."""
    k = _c_long(float(DEFAULT_PARAMS["relstring"] if param is None else param))
    chars = []
    for g in rq.grades[: max(k, 0)]:
        if g > 9:
            chars.append(">")
        elif g >= 0:
            chars.append(str(g))
        elif g == NONPOOL:
            chars.append("-")
        elif g == UNJUDGED:
            chars.append(".")
        else:
            chars.append("<")
    return "'" + "".join(chars) + "'"


def _infap(rq: RankedQuery, param: Any, version: str) -> float:
    """Inferred AP (Yilmaz & Aslam), divided by R (m_infap.c). NONPOOL docs are skipped;
    UNJUDGED docs (negative qrels grade) count as sampled-out pool docs u. For the judged
    relevant doc at 0-based index j, with r, N, u = relevant, judged nonrelevant and unjudged
    docs seen so far (r including this one): add 1 if j = 0, else
    1/(j+1) + (j/(j+1)) * ((r-1+N+u)/j) * ((r-1+eps)/(r-1+N+2*eps)), eps = INFAP_EPSILON."""
    level = rq.relevance_level
    total = 0.0
    rel_so_far = nonrel_so_far = unjudged_so_far = 0
    for j, g in enumerate(rq.grades):
        if g == NONPOOL:
            continue
        if g == UNJUDGED:
            unjudged_so_far += 1
            continue
        if 0 <= g < level:
            nonrel_so_far += 1
            continue
        rel_so_far += 1
        if j == 0:
            total += 1.0
        else:
            fj = float(j)
            seen = rel_so_far - 1 + nonrel_so_far + unjudged_so_far
            total += 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * (seen / fj) * (
                (rel_so_far - 1 + INFAP_EPSILON) / (rel_so_far - 1 + nonrel_so_far
                                                    + 2 * INFAP_EPSILON))
    num_rel = _counts(rq).num_rel
    return total / num_rel if num_rel else total


def _rprec_mult(rq: RankedQuery, param: Any, version: str) -> float:
    """Precision at rank c = (long)(m * R + 0.9) (both versions), c > n counting missing docs as
    nonrelevant; 0 when c = 0 (m_Rprec_mult.c)."""
    c = _counts(rq)
    cut = _c_long(float(param) * c.num_rel + 0.9)
    if cut > c.num_ret:
        return c.num_rel_ret / cut
    # Walk back from the end as m_Rprec_mult.c does (the same as counting the top `cut` when
    # L >= 0); ranks above the first relevant doc are never reached and stay 0.
    rel_left = c.num_rel_ret
    i = c.num_ret
    while i > 0 and rel_left > 0:
        if i == cut:
            return rel_left / i
        if rq.grades[i - 1] >= rq.relevance_level:
            rel_left -= 1
        i -= 1
    return 0.0


def _utility(rq: RankedQuery, param: Any, version: str) -> float:
    """a*relret + b*(n - relret) + c*(R - relret) + d*(N + relret - n - R), with (a, b, c, d)
    default (1, -1, 0, 0) and N = trec_eval's -N (number of docs in the collection, default 0;
    give it as an optional 5th element). Summary: mean (m_utility.c)."""
    params = DEFAULT_PARAMS["utility"] if param is None else tuple(param)
    if len(params) == 5:
        a, b, cc, d, coll = params
    elif len(params) == 4:
        (a, b, cc, d), coll = params, 0
    else:
        raise ValueError("utility: needs 4 coefficients (a, b, c, d) [, num_docs_in_coll]")
    c = _counts(rq)
    return (float(a) * c.num_rel_ret + float(b) * (c.num_ret - c.num_rel_ret)
            + float(cc) * (c.num_rel - c.num_rel_ret)
            + float(d) * (int(coll) + c.num_rel_ret - c.num_ret - c.num_rel))


def _bin_g(rq: RankedQuery, param: Any, version: str) -> float:
    """(1/R) * sum over relevant ranked docs of 1 / log2(2 + nonrelevant docs ranked above it)
    (m_binG.c). Uses L, unlike G."""
    level = rq.relevance_level
    total = 0.0
    hits = 0
    for i, g in enumerate(rq.grades):
        if g >= level:
            hits += 1
            total += 1.0 / math.log2(3 + i - hits)
    return _div(total, _counts(rq).num_rel) if hits else 0.0


def _g(rq: RankedQuery, param: Any, version: str) -> float:
    """G (m_G.c): sum over ranked docs with gain g_i != 0 of g_i / log2(2 + C_i - S_i), divided
    by the total ideal gain; S_i = sum of gains of ranks <= i, C_i = sum over ranks <= i of
    max(ideal gain at that rank, 1) (1 past the ideal list or for ideal gains below 1). Gains as
    in ndcg (``param`` = gain map); -l is ignored."""
    table = _gain_table(rq, param)
    ideal = _ideal_gains(table)
    results_g = sum_results = sum_cost = 0.0
    for i, grade in enumerate(rq.grades):
        gain = _gain_of(grade, table)
        sum_results += gain
        sum_cost += ideal[i] if i < len(ideal) and ideal[i] >= 1.0 else 1.0
        if gain != 0:
            results_g += _div(gain, _c_log2(2 + sum_cost - sum_results))
    sum_ideal = 0.0
    for gain in ideal:
        sum_ideal += gain
    return results_g / sum_ideal if sum_ideal > 0.0 else 0.0


def _ndcg(rq: RankedQuery, param: Any, version: str) -> float:
    """DCG / ideal DCG over the whole ranking, 0 if the ideal is 0 (m_ndcg.c). Gain of a doc =
    its grade, or the gain map's value ({grade: gain}; a map entry may give NONPOOL (-1) a gain);
    DCG = sum of gain_i / log2(i + 1) over ranks i; the ideal ranking sorts all qrels docs by
    gain and stops at the first gain <= 0; it is not cut at n. -l is ignored."""
    dcg, ideal_dcg = _dcg_and_ideal(rq, param)
    return dcg / ideal_dcg if ideal_dcg > 0.0 else 0.0


def _dcg(rq: RankedQuery, param: Any, version: str) -> float:
    """Unnormalised DCG of ndcg (same gains; 10.0 only; m_ndcg.c ``dcg``)."""
    return _dcg_and_ideal(rq, param)[0]


def _ideal_dcg(rq: RankedQuery, param: Any, version: str) -> float:
    """Ideal DCG of ndcg (10.0 only; m_ndcg.c ``ideal_dcg``). Nonzero even for a query missing
    from the run under -c, since it depends on the qrels only."""
    return _dcg_and_ideal(rq, param)[1]


def _ndcg_rel(rq: RankedQuery, param: Any, version: str) -> float:
    """Mean of ndcg@i over the ideal relevant positions (m_ndcg_rel.c): sum of DCG@i/IDCG@i over
    ranked docs with gain > 0, plus (K - such docs) * DCG@n / IDCG, all divided by K = length of
    the ideal list (ideal gains > 0); 0 unless that sum is > 0. IDCG@i stops growing at K."""
    table = _gain_table(rq, param)
    ideal = _ideal_gains(table)
    dcg = ideal_dcg = total = 0.0
    hits = 0
    for i, grade in enumerate(rq.grades):
        gain = _gain_of(grade, table)
        if gain != 0:
            dcg += gain / math.log2(i + 2)
        if i < len(ideal):
            ideal_dcg += ideal[i] / math.log2(i + 2)
        if gain > 0:
            total += _div(dcg, ideal_dcg)
            hits += 1
    for i in range(len(rq.grades), len(ideal)):
        ideal_dcg += ideal[i] / math.log2(i + 2)
    total += _div((len(ideal) - hits) * dcg, ideal_dcg)
    return total / len(ideal) if total > 0.0 else 0.0


def _rndcg(rq: RankedQuery, param: Any, version: str) -> float:
    """Mean of ndcg sampled where the ideal gain changes (m_Rndcg.c): at each rank b where the
    ideal list moves to a different gain or ends, DCG@min(b, n) / IDCG@b; plus one sample
    DCG@n / IDCG at the end of the ranking when the ranking runs more than one doc past the
    ideal list. 0 when R (with L) is 0. Written as trec_eval's three phases."""
    if _counts(rq).num_rel == 0:
        return 0.0
    table = _gain_table(rq, param)
    ideal = _ideal_gains(table)
    n = len(rq.grades)

    def ideal_at(i: int) -> float:  # the ideal gain in force at rank i+1; 0.0 once exhausted
        return ideal[i] if i < len(ideal) else 0.0

    current = table[-1].gain if table else 0.0
    previous = current
    dcg = ideal_dcg = total = 0.0
    samples = 0
    i = 0
    # Phase 1: ranking and ideal list side by side, while the ideal gain is positive.
    while i < n and current > 0.0:
        gain = _gain_of(rq.grades[i], table)
        current = ideal_at(i)
        if current != previous:
            if ideal_dcg > 0.0:
                total += dcg / ideal_dcg
                samples += 1
            previous = current
        if gain != 0:
            dcg += gain / math.log2(i + 2)
        if current > 0.0:
            ideal_dcg += current / math.log2(i + 2)
        i += 1
    # Phase 2: the ideal list ended first; finish the ranking and sample once at its end.
    if i < n:
        while i < n:
            gain = _gain_of(rq.grades[i], table)
            if gain != 0:
                dcg += gain / math.log2(i + 2)
            i += 1
        if ideal_dcg > 0.0:
            total += dcg / ideal_dcg
            samples += 1
    # Phase 3: the ranking ended first; finish the ideal list.
    while current > 0.0:
        current = ideal_at(i)
        if current != previous:
            if ideal_dcg > 0.0:
                total += dcg / ideal_dcg
                samples += 1
            previous = current
        if current > 0.0:
            ideal_dcg += current / math.log2(i + 2)
        i += 1
    return _div(total, samples)


def _ideal_levels(rq: RankedQuery) -> list[int]:
    """Qrels grades >= 1, highest first (the ideal ranking of ndcg_cut)."""
    c = _counts(rq)
    levels: list[int] = []
    for grade in range(c.num_rel_levels - 1, 0, -1):
        levels.extend([grade] * c.rel_levels[grade])
    return levels


def _ndcg_cut(rq: RankedQuery, param: Any, version: str) -> float:
    """nDCG@k (m_ndcg_cut.c): gains are the raw grades (> 0 only; no gain map), both the ranking
    and the ideal ranking (all qrels grades >= 1, best first) are cut at k; 0 if the ideal is 0.
    -l is ignored. ``param`` ``(k, gain map)``: see ``_ndcg_cut_mapped``."""
    if isinstance(param, tuple):
        return _ndcg_cut_mapped(rq, *param)
    k = _check_cutoff("ndcg_cut", param)
    dcg = 0.0
    for i, g in enumerate(rq.grades[:k]):
        if g > 0:
            dcg += g / math.log2(i + 2)
    ideal_dcg = 0.0
    for i, g in enumerate(_ideal_levels(rq)[:k]):
        ideal_dcg += g / math.log2(i + 2)
    return dcg / ideal_dcg if ideal_dcg > 0.0 else dcg


def _ndcg_cut_mapped(rq: RankedQuery, k: Any, gain_map: Any) -> float:
    """ndcg_cut on the qrels with every grade g >= 0 replaced by ``gain_map.get(g, g)`` (what
    ir_measures' ``nDCG(gains=...)@k`` hands pytrec_eval): a ranked document adds its mapped
    grade when above 0; the ideal ranking is the mapped qrels grades above 0, best first; both
    cut at k. A negative grade stays unjudged (no gain)."""
    k = _check_cutoff("ndcg_cut", k)
    mapping = dict(_gain_pairs(gain_map))

    def mapped(g: int) -> float:
        return float(mapping.get(g, g)) if g >= 0 else 0.0

    dcg = 0.0
    for i, g in enumerate(rq.grades[:k]):
        if mapped(g) > 0:
            dcg += mapped(g) / math.log2(i + 2)
    ideal = sorted((mapped(g) for g in rq.qrels_grades if mapped(g) > 0), reverse=True)
    ideal_dcg = 0.0
    for i, gain in enumerate(ideal[:k]):
        ideal_dcg += gain / math.log2(i + 2)
    return dcg / ideal_dcg if ideal_dcg > 0.0 else 0.0


def _ndcg_cut_exp(rq: RankedQuery, param: Any, version: str) -> float:
    """qafast extension, not in trec_eval: ndcg_cut with the exponential gain 2**grade - 1 for
    grade > 0 (Burges et al.), in both DCG@k and the ideal DCG@k; 0 if the ideal is 0."""
    k = _check_cutoff("ndcg_cut_exp", param)
    dcg = 0.0
    for i, g in enumerate(rq.grades[:k]):
        if g > 0:
            dcg += float(2**g - 1) / math.log2(i + 2)
    ideal_dcg = 0.0
    for i, g in enumerate(_ideal_levels(rq)[:k]):
        ideal_dcg += float(2**g - 1) / math.log2(i + 2)
    return dcg / ideal_dcg if ideal_dcg > 0.0 else 0.0


def _map_cut(rq: RankedQuery, param: Any, version: str) -> float:
    """AP@k: the AP sum restricted to the top k, divided by R (not min(k, R)); 0 when R = 0
    (m_map_cut.c)."""
    k = _check_cutoff("map_cut", param)
    num_rel = _counts(rq).num_rel
    if num_rel == 0:
        return 0.0
    total = 0.0
    hits = 0
    for i, g in enumerate(rq.grades[:k]):
        if g >= rq.relevance_level:
            hits += 1
            total += hits / (i + 1)
    return total / num_rel


def _relative_p(rq: RankedQuery, param: Any, version: str) -> float:
    """(relevant in top k) / min(k, R); 0 when R = 0 (m_rel_P.c)."""
    k = _check_cutoff("relative_P", param)
    num_rel = _counts(rq).num_rel
    if num_rel == 0:
        return 0.0
    hits = _relevant_in_top(rq, k)
    return hits / min(k, num_rel)


def _success(rq: RankedQuery, param: Any, version: str) -> float:
    """1 if a relevant doc is in the top k, else 0 (m_success.c)."""
    k = _check_cutoff("success", param)
    return 1.0 if _relevant_in_top(rq, k) else 0.0


def _set_p(rq: RankedQuery, param: Any, version: str) -> float:
    """num_rel_ret / n; 0 when n = 0 (m_set_P.c)."""
    c = _counts(rq)
    return c.num_rel_ret / c.num_ret if c.num_ret else 0.0


def _set_relative_p(rq: RankedQuery, param: Any, version: str) -> float:
    """num_rel_ret / min(n, R); 0 when n or R is 0 (m_set_rel_P.c)."""
    c = _counts(rq)
    if c.num_ret and c.num_rel:
        return c.num_rel_ret / min(c.num_ret, c.num_rel)
    return 0.0


def _set_recall(rq: RankedQuery, param: Any, version: str) -> float:
    """num_rel_ret / R; 0 when R = 0 (m_set_recall.c)."""
    c = _counts(rq)
    return c.num_rel_ret / c.num_rel if c.num_rel else 0.0


def _set_map(rq: RankedQuery, param: Any, version: str) -> float:
    """set_P * set_recall = num_rel_ret^2 / (n * R); 0 when n or R is 0 (m_set_map.c)."""
    c = _counts(rq)
    if c.num_ret and c.num_rel:
        return (float(c.num_rel_ret) * float(c.num_rel_ret)) / (float(c.num_ret)
                                                                 * float(c.num_rel))
    return 0.0


def _set_f(rq: RankedQuery, param: Any, version: str) -> float:
    """(x + 1) * P * R / (x * P + R) over the whole ranked set, x default 1.0; 0 when no relevant
    doc is ranked (m_set_F.c). Note x multiplies P directly: trec_eval's x is van Rijsbergen's
    beta squared, so set_F.1 is F1 and set_F.4 weights recall like F2."""
    x = float(DEFAULT_PARAMS["set_F"] if param is None else param)
    c = _counts(rq)
    if not c.num_rel_ret:
        return 0.0
    p = c.num_rel_ret / c.num_ret
    r = _div(c.num_rel_ret, c.num_rel)
    return _div((x + 1.0) * p * r, x * p + r)


def _rbp_p(param: Any) -> tuple[float, Any]:
    """rbp / rbp_resid parameter: a float p, or a gain map (mapping or pairs) whose optional
    "p" entry sets p and whose integer keys set gains (trec_eval's ``-m rbp.p=0.8,2=3``)."""
    if param is None:
        return DEFAULT_PARAMS["rbp"], None
    if isinstance(param, (int, float)) and not isinstance(param, bool):
        return float(param), None
    p = DEFAULT_PARAMS["rbp"]
    for key, value in _gain_pairs(param):
        if key == "p":
            p = float(value)
    return p, param


def _rbp(rq: RankedQuery, param: Any, version: str) -> float:
    """Rank-biased precision (1 - p) * sum_i gain_i * p^(i-1), p default 0.9 (m_rbp.c).

    Gains as in ndcg (``param`` may be a gain map with a "p" entry), then rescaled to
    (gain - min) / (max - min) when some gain lies outside [0, 1]; -l is ignored. Quirk: m_rbp.c
    never initialises ``min`` and ``max`` (undefined behaviour). Here the scan starts from
    min = max = 0. For default gains that equals the true min / max (level 0, gain 0, is always
    in the table), and it is what the golden files show: binary qrels are used as they are,
    grades 0..4 become grade / 4 (out.test.aql). With a gain map whose gains are all above 0 (or
    all below 1), trec_eval's value depends on stack garbage and is not reproducible.
    """
    p, gain_map = _rbp_p(param)
    table = _gain_table(rq, gain_map)
    low = high = 0.0  # what trec_eval 10.0's uninitialised min/max behave like (see docstring)
    for entry in table:
        if entry.gain < low:
            low = entry.gain
        if entry.gain > high:
            high = entry.gain
    if low < 0 or high > 1:
        table = [e._replace(gain=(e.gain - low) / (high - low)) for e in table]
    total = 0.0
    weight = 1.0
    for grade in rq.grades:
        gain = _gain_of(grade, table)
        if gain != 0:
            total += gain * weight
        weight = weight * p
    return (1.0 - p) * total


def _rbp_resid(rq: RankedQuery, param: Any, version: str) -> float:
    """RBP residual: p^n + (1 - p) * sum over NONPOOL/UNJUDGED (grade < 0) ranks i of p^(i-1),
    the most RBP could rise if every unjudged doc were fully relevant and the ranking continued
    with relevant docs; 0 when no ranked doc is unjudged (m_rbp_resid.c). Under -J it is 0."""
    p, _ = _rbp_p(param)
    total = 0.0
    weight = 1.0
    unjudged = 0
    for g in rq.grades:
        if g < 0:
            unjudged += 1
            total += weight
        weight = weight * p
    return weight + (1 - p) * total if unjudged else 0.0


def _unj(rq: RankedQuery, param: Any, version: str) -> float:
    """(NONPOOL + UNJUDGED docs in the top k) / k, even when n < k (m_unjudged.c; 10.0 only)."""
    k = _check_cutoff("unj", param)
    return sum(1 for g in rq.grades[:k] if g == NONPOOL or g == UNJUDGED) / k


# --------------------------------------------------------------------------------------------
# Other tools' definitions that no trec_eval measure gives (ranx 0.3.21, ir_measures 0.4.3)
# --------------------------------------------------------------------------------------------

def _depth(rq: RankedQuery, param: Any, family: str) -> int:
    """A cut-off k, or the whole ranking for None (ranx's k = 0)."""
    return len(rq.grades) if param is None else _check_cutoff(family, param)


def _hits(rq: RankedQuery, param: Any, version: str) -> float:
    """ranx's hits@k: the number of relevant docs in the top k (the whole ranking for None).
    Not the hit rate (that is success / ranx's hit_rate)."""
    return float(_relevant_in_top(rq, _depth(rq, param, "hits")))


def _f1(rq: RankedQuery, param: Any, version: str) -> float:
    """ranx's f1@k: 2 * ((P * R) / (P + R)) with P = hits@k / k and R = hits@k / R_total;
    without a cut-off k is the number of ranked docs. 0 when R_total = 0, when k = 0, or when
    no relevant doc is in the top k. Operations in ranx's order."""
    num_rel = _counts(rq).num_rel
    if num_rel == 0:
        return 0.0
    k = _depth(rq, param, "f1")
    if k == 0:
        return 0.0
    hits = _relevant_in_top(rq, k)
    precision = hits / k
    recall = hits / num_rel
    if precision + recall == 0:
        return 0.0
    return 2 * ((precision * recall) / (precision + recall))


def _graded_dcg(rq: RankedQuery, param: Any, version: str) -> float:
    """ranx's dcg@k, dcg_burges@k and (normalised) ndcg@k, ndcg_burges@k, as one family.

    ``param`` is ``(k, exp_gain, normalised)``, k None for the whole ranking. A doc's gain is
    its grade (``exp_gain``: 2**grade - 1) when the grade is at least the relevance level
    (and at least 1), else 0; DCG = sum of gain / log2(rank + 1) over the top k. Normalised:
    divided by the DCG of the qrels' gains sorted best first and cut at k; 0 when that is 0.
    Unlike trec_eval's ndcg_cut, the relevance level drops gains (ranx's ``-lN``)."""
    k, exp_gain, normalised = param
    threshold = max(rq.relevance_level, 1)

    def gain(g: int) -> float:
        return float(2**g - 1) if exp_gain else float(g)

    depth = len(rq.grades) if k is None else _check_cutoff("graded_dcg", k)
    dcg = 0.0
    for i, g in enumerate(rq.grades[:depth]):
        if g >= threshold:
            dcg += gain(g) / math.log2(i + 2)
    if not normalised:
        return dcg
    ideal = sorted((g for g in rq.qrels_grades if g >= threshold), reverse=True)
    if k is not None:
        ideal = ideal[:k]
    ideal_dcg = 0.0
    for i, g in enumerate(ideal):
        ideal_dcg += gain(g) / math.log2(i + 2)
    return dcg / ideal_dcg if ideal_dcg > 0.0 else 0.0


def _rbp_graded(rq: RankedQuery, param: Any, version: str) -> float:
    """ranx's rbp.p: (1 - p) * sum of grade * p**(rank - 1) over the ranked docs whose grade is
    at least the relevance level (and 1). Raw grades: trec_eval's rbp rescales them."""
    p = float(param)
    threshold = max(rq.relevance_level, 1)
    total = 0.0
    for i, g in enumerate(rq.grades):
        if g >= threshold:
            total += g * p**i
    return (1.0 - p) * total


def _judged(rq: RankedQuery, param: Any, version: str) -> float:
    """ir_measures' Judged@k: the share of the top k ranked docs that the qrels hold (any
    grade, negative ones included), over min(k, ranked docs), not over k as trec_eval's unj
    (whose complement it otherwise is); without a cut-off, over the whole ranking; 0 when
    nothing is ranked."""
    k = _depth(rq, param, "judged")
    top = rq.grades[:k]
    if not top:
        return 0.0
    return sum(1 for g in top if g != NONPOOL) / len(top)


def _err(rq: RankedQuery, param: Any, version: str) -> float:
    """Expected reciprocal rank at k (Chapelle et al.) as gdeval.pl of the TREC Web track
    computes it (ir_measures' ERR@k): a doc of grade g > 0 satisfies the user with probability
    r = (2**g - 1) / 2**4 (gdeval's highest grade is 4); ERR = sum over the top k of
    r * (probability that no doc above satisfied) / rank. No cut-off: the whole ranking."""
    k = _depth(rq, param, "err")
    score = 0.0
    decay = 1.0
    for i, g in enumerate(rq.grades[:k]):
        if g > 0:
            r = (2.0**g - 1.0) / 2.0**4
            score += r * decay / (i + 1)
            decay *= 1.0 - r
    return score


def _fallout(rq: RankedQuery, param: Any, version: str) -> float:
    """torchmetrics' fall-out at k (``RetrievalFallOut(top_k=k)``): the non-relevant ranked
    documents within the top k, over all the non-relevant ranked documents, a document being
    non-relevant when it is unjudged or graded below the level; 0 when none is ranked (the
    rule of torchmetrics' ``retrieval_fall_out``). No cut-off: the whole ranking."""
    k = _depth(rq, param, "fallout")
    nonrelevant = [g < rq.relevance_level for g in rq.grades]
    total = sum(nonrelevant)
    return sum(nonrelevant[:k]) / total if total else 0.0


def _auroc(rq: RankedQuery, param: Any, version: str) -> float:
    """torchmetrics' AUROC within the top k (``RetrievalAUROC(top_k=k)``) on a strict
    ranking: of the (relevant, non-relevant) pairs among the top k ranked documents, the share
    ranked relevant first; 0 without a pair. No cut-off: the whole ranking."""
    k = _depth(rq, param, "auroc")
    relevant = [g >= rq.relevance_level for g in rq.grades[:k]]
    above, seen = 0, 0  # pairs ranked relevant first; relevant documents met so far
    for is_relevant in relevant:
        if is_relevant:
            seen += 1
        else:
            above += seen
    positives = sum(relevant)
    negatives = len(relevant) - positives
    return above / (positives * negatives) if positives and negatives else 0.0


def _accuracy(rq: RankedQuery, param: Any, version: str) -> float:
    """ir_measures' Accuracy@k: among the top k ranked documents (the whole ranking for
    None), the share of (relevant, non-relevant) pairs ranked relevant first, computed as
    1 - (pairs ranked non-relevant first) / (pairs) in that order of operations. A document's
    grade is its qrels grade, 0 when the qrels lack it (NONPOOL); it is relevant when that is
    at least the relevance level. 0 without a relevant document in the top k, 1 with relevant
    documents and no non-relevant one (ir_measures gives no value, and divides by zero)."""
    k = _depth(rq, param, "accuracy")
    level = rq.relevance_level
    if level < 0:
        raise ValueError("accuracy: the relevance level must be 0 or more")
    relevant = [(0 if g == NONPOOL else g) >= level for g in rq.grades[:k]]
    first, nonrelevant_so_far = 0, 0  # pairs ranked non-relevant first
    for is_relevant in relevant:
        if is_relevant:
            first += nonrelevant_so_far
        else:
            nonrelevant_so_far += 1
    positives = sum(relevant)
    negatives = len(relevant) - positives
    if not positives:
        return 0.0
    if not negatives:
        return 1.0
    return 1.0 - first / (float(negatives) * positives)


def _adaptive_precision(rq: RankedQuery, param: Any, version: str) -> float:
    """torchmetrics' precision at k with ``adaptive_k=True``: the relevant documents in the
    top k over min(k, n); 0 when nothing is ranked. No cut-off: the whole ranking."""
    k = min(_depth(rq, param, "adaptive_P"), len(rq.grades))
    return _relevant_in_top(rq, k) / k if k else 0.0


def _rank_biased_overlap(a: list[Any], b: list[Any], p: float, depth: int) -> float:
    """Rank-biased overlap of the lists ``a`` and ``b`` to ``depth``: the sum over d of
    p**(d - 1) * |a[:d] & b[:d]| / d, over the sum of p**(d - 1)."""
    score = total = 0.0
    weight = 1.0
    for d in range(1, depth + 1):
        score += weight * len(set(a[:d]) & set(b[:d])) / d
        total += weight
        weight *= p
    return score / total if total else 0.0


def _compatibility(rq: RankedQuery, param: Any, normalize: bool) -> float:
    """ir_measures' Compat (Clarke, Vtyurina and Smucker, TOIS 2021): the rank-biased overlap
    of the ranking with the ideal ranking, to depth max(n, G), G the qrels documents graded
    above 0 (the relevance level plays no part). The ideal ranking holds those documents by
    grade, best first; among equal grades the ranked ones come first, in ranking order. With
    ``normalize``, divided by the ideal ranking's overlap with itself; 0 when G = 0."""
    p = 0.95 if param is None else float(param)
    ranking = [("ranked", i) for i in range(len(rq.grades))]
    good = [(g, ("ranked", i)) for i, g in enumerate(rq.grades) if g > 0]
    unranked = [g for g in rq.qrels_grades if g > 0]
    for g, _ in good:
        unranked.remove(g)
    good += [(g, ("unranked", j)) for j, g in enumerate(unranked)]
    # by grade, best first; the sort is stable, so ranked documents keep the ranking's order
    ideal = [doc for _, doc in sorted(good, key=lambda pair: -pair[0])]
    if not ideal:
        return 0.0
    depth = max(len(ranking), len(ideal))
    score = _rank_biased_overlap(ranking, ideal, p, depth)
    if normalize:
        score = score / _rank_biased_overlap(ideal, ideal, p, depth)
    return score


def _compat(rq: RankedQuery, param: Any, version: str) -> float:
    """Compat(p=param): see ``_compatibility``."""
    return _compatibility(rq, param, True)


def _compat_raw(rq: RankedQuery, param: Any, version: str) -> float:
    """Compat(p=param, normalize=False): see ``_compatibility``."""
    return _compatibility(rq, param, False)


def _query_count(rq: RankedQuery, param: Any, version: str) -> float:
    """ir_measures' NumQ: 1 per evaluated query (summed)."""
    return 1.0


# the C/W/L user models of ir_measures' cwl_eval provider (qafast.reference.cwl says how it
# builds its rankings and gains); ``param`` is ``(k, x, min_rel, max_rel)``: the cut-off
# (None where the measure takes none), p or T, and the grades scaled to gains 0 and 1 (RBP
# takes the relevance level instead: gain 1 from it on)

def _cwl(kind: str, rq: RankedQuery, param: Any) -> float:
    from . import cwl  # numpy: only for these measures

    k, x, min_rel, max_rel = param
    grades = [None if g == NONPOOL else g for g in rq.grades]  # UNJUDGED (-2) counts 0
    if kind == "RBP":
        gains = cwl.ir_gains(grades, rel=rq.relevance_level)
    else:
        gains = cwl.ir_gains(grades, min_rel=min_rel, max_rel=max_rel)
    return cwl.ir_expected_utility(kind, gains, 0 if k is None else k, x)


def _cwl_rbp(rq: RankedQuery, param: Any, version: str) -> float:
    """cwl_eval's RBP: C_i = p; the gain is 1 at a grade of at least the level."""
    return _cwl("RBP", rq, param)


def _cwl_bpm(rq: RankedQuery, param: Any, version: str) -> float:
    """cwl_eval's static BPM: C_i = 1 while the gain so far is below T and i < K."""
    return _cwl("BPM", rq, param)


def _cwl_sdcg(rq: RankedQuery, param: Any, version: str) -> float:
    """cwl_eval's NDCG-k (ir_measures' SDCG@k): C_i = log2(i + 1) / log2(i + 2) for i < k."""
    return _cwl("NDCG", rq, param)


def _cwl_nerr8(rq: RankedQuery, param: Any, version: str) -> float:
    """NERR, equation 8: C_i = 1 - gain_i for i < k."""
    return _cwl("NERR8", rq, param)


def _cwl_nerr9(rq: RankedQuery, param: Any, version: str) -> float:
    """NERR, equation 9: C_i = i / (i + 1) * (1 - gain_i) for i < k."""
    return _cwl("NERR9", rq, param)


def _cwl_nerr10(rq: RankedQuery, param: Any, version: str) -> float:
    """NERR, equation 10: C_i = p * (1 - gain_i)."""
    return _cwl("NERR10", rq, param)


def _cwl_nerr11(rq: RankedQuery, param: Any, version: str) -> float:
    """NERR, equation 11: C_i = ((i + 2T - 1) / (i + 2T))^2 * (1 - gain_i)."""
    return _cwl("NERR11", rq, param)


def _cwl_inst(rq: RankedQuery, param: Any, version: str) -> float:
    """INST: C_i = ((i + T + T_i - 1) / (i + T + T_i))^2, T_i = T - the gain so far."""
    return _cwl("INST", rq, param)


def _cwl_insq(rq: RankedQuery, param: Any, version: str) -> float:
    """INSQ: C_i = ((i + 2T - 1) / (i + 2T))^2."""
    return _cwl("INSQ", rq, param)


# each family's function, as the measure table names it
_MEASURES: dict[str, Callable[[RankedQuery, Any, str], Any]] = {
    f.name: globals()[f.reference] for f in _TABLE if f.reference}

FAMILIES = tuple(_MEASURES)
"""Every measure family ``measure`` accepts."""


def _check_version(version: str) -> None:
    if version not in VERSIONS:
        raise ValueError(f"version must be one of {VERSIONS}, got {version!r}")


def _check_family(family: str, param: Any, version: str) -> None:
    if family not in _MEASURES:
        raise ValueError(f"unknown measure family {family!r}; known: {', '.join(FAMILIES)}")
    if version == "9.0.8" and family in _NOT_IN_908:
        raise ValueError(f"{family!r} does not exist in trec_eval 9.0.8 (added in 10.0)")
    if param is None and family in _MULTI_DEFAULT:
        raise ValueError(
            f"{family!r} needs one cut-off per call; trec_eval's defaults are "
            f"DEFAULT_PARAMS[{family!r}] = {DEFAULT_PARAMS[family]}"
        )


def measure(family: str, ranked: RankedQuery, param: Any = None, *,
            version: str = "10.0") -> float | str:
    """Value of one trec_eval measure for one ranked query.

    ``family`` is trec_eval's measure name (see ``FAMILIES``). ``param`` is:

    * one cut-off for P, recall, map_cut, ndcg_cut, relative_P, success, unj (int k) and for
      iprec_at_recall (recall point) and Rprec_mult (multiple of R) (float); required;
    * a gain map for ndcg, ndcg_rel, Rndcg, G, dcg, ideal_dcg: ``{grade: gain}`` or a tuple of
      ``(grade, gain)`` pairs (use the tuple as an ``evaluate`` key; order matters only through
      the quirk in ``_gain_table``);
    * a tuple for utility (a, b, c, d[, N]) and 11pt_avg (recall points); a float for set_F, rbp
      and rbp_resid; an int for relstring; an int k for the extensions recip_rank_cut and
      ndcg_cut_exp;
    * for the other tools' definitions (ranx, ir_measures): an int k or None (the whole
      ranking) for hits, f1, judged, err and accuracy; ``(k or None, exp_gain, normalised)`` for
      graded_dcg; the float p for rbp_graded; None for query_count;
    * ``None``: trec_eval's default (``DEFAULT_PARAMS``; no parameter for the other families).

    Each family's formula and edge cases are in the docstring of its function in this module
    (``_map``, ``_ndcg_cut``, ...; ``FAMILIES`` maps names to them via ``_MEASURES``).
    """
    _check_version(version)
    _check_family(family, param, version)
    return _MEASURES[family](ranked, param, version)


def summarize(family: str, values: Sequence[float], *, num_queries: int | None = None,
              qrels: Mapping[str, Mapping[str, int]] | None = None) -> float:
    """What trec_eval prints on the ``all`` line for per-query ``values`` (meas_avg.c).

    * ``num_ret``, ``num_rel``, ``num_rel_ret``, ``num_nonrel_judged_ret``: the sum;
      ``num_q``: the number of queries (``num_queries`` if given). But with -c, pass the
      ``qrels``: trec_eval's ``num_rel`` is then counted afresh from them, every judgment with a
      grade above 0 in every query, whatever -l is (m_num_rel.c ``te_calc_avg_num_rel``).
    * ``gm_map``, ``gm_bpref``: exp(sum / Q) of the per-query logs that ``measure`` returns
      (each already floored at MIN_GEO_MEAN); when ``num_queries`` Q exceeds ``len(values)``,
      each missing query adds log(MIN_GEO_MEAN), as 9.0.8's -c does.
    * everything else: sum / Q, Q = ``num_queries`` or ``len(values)`` (trec_eval -c divides by the
      number of qrels queries); 0.0 when Q = 0.
    Sums run left to right (no compensated summation), as trec_eval accumulates queries in qid
    order. ``relstring`` has no summary.
    """
    if family == "relstring":
        raise ValueError("relstring has no summary value")
    if family not in _MEASURES:
        raise ValueError(f"unknown measure family {family!r}")
    count = len(values) if num_queries is None else int(num_queries)
    if family == "num_q":
        return float(count)
    if family == "num_rel" and qrels is not None:
        return float(sum(1 for grades in qrels.values() for g in grades.values() if g > 0))
    total = 0.0
    for value in values:
        total += value
    if family in _SUM_FAMILIES:
        return total
    if family in _GM_FAMILIES:
        if count <= 0:
            return 0.0
        missing = count - len(values)
        if missing:
            total += missing * math.log(MIN_GEO_MEAN)
        return math.exp(total / count)
    return total / count if count else 0.0


def _missing_query_values(
    qrels_q: Mapping[str, int],
    measures: Sequence[tuple[str, Any]],
    options: dict[str, Any],
    version: str,
) -> dict[tuple[str, Any], Any]:
    """Per-query values of a qrels query absent from the run, under -c."""
    if version == "9.0.8":
        # 9.0.8 never evaluates the query; its summary counts it as 0 (a log(MIN_GEO_MEAN) for
        # gm_*), and the -c num_rel summary still counts its relevant docs.
        ranked = rank_query(qrels_q, {}, **options)
        out: dict[tuple[str, Any], Any] = {}
        for family, param in measures:
            if family in _GM_FAMILIES:
                out[(family, param)] = math.log(MIN_GEO_MEAN)
            elif family == "num_rel":
                out[(family, param)] = float(_counts(ranked).num_rel)
            elif family == "num_q":
                out[(family, param)] = 1.0
            elif family == "relstring":
                out[(family, param)] = "''"
            else:
                out[(family, param)] = 0.0
        return out
    # 10.0 scores a one-document ranking of BOGUS_DOCNO (score 1.0), then resets the values named
    # exactly num_ret, utility, relstring (to '') and rbp_resid, and every unj_* (trec_eval.c).
    # Names carry parameters, so utility / relstring / rbp_resid with explicit parameters are
    # NOT reset: utility_a,b,c,d keeps b + c*R - d*(1 + R) (with N = 0), relstring_k shows '-',
    # rbp_resid with a parameter shows 1.0.
    ranked = rank_query(qrels_q, {BOGUS_DOCNO: 1.0}, **options)
    out = {}
    for family, param in measures:
        value = _MEASURES[family](ranked, param, version)
        if family in ("num_ret", "unj") or (
            param is None and family in ("utility", "rbp_resid")
        ):
            value = 0.0
        elif family == "relstring" and param is None:
            value = "''"
        out[(family, param)] = value
    return out


def evaluate(
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Mapping[str, float]],
    measures: Sequence[tuple[str, Any]],
    *,
    relevance_level: int = 1,
    judged_only: bool = False,
    max_docs: int | None = None,
    queries: str = "run",
    version: str = "10.0",
    float32_scores: bool = False,
) -> dict[str, dict[tuple[str, Any], Any]]:
    """Per-query values ``{qid: {(family, param): value}}``, qids in ``strcmp`` order.

    ``queries="run"``: the queries of both the run and the qrels (trec_eval 9.0.8 without -c;
    run-only and qrels-only queries are skipped). ``queries="qrels"``: every qrels query
    (trec_eval -c). In 10.0 a qrels query missing from the run is evaluated against a
    one-document ranking of BOGUS_DOCNO (score 1.0, normally NONPOOL); then the values named
    exactly num_ret, utility, relstring and rbp_resid, and every unj_k, are reset (trec_eval.c).
    With default parameters that leaves num_rel (= R) and ideal_dcg as the only nonzero values,
    and gm_map / gm_bpref at log(MIN_GEO_MEAN). Exceptions, because the reset matches printed
    names: utility, relstring and rbp_resid with explicit parameters keep their bogus values,
    and so does a gain map that gives NONPOOL (-1) a gain. With ``judged_only`` the bogus doc is
    dropped and the empty ranking gives NaN for iprec_at_recall at recall 0 and for 11pt_avg.
    In 9.0.8 the query is not evaluated (nothing printed for it) but counts in the averages; it
    is returned here with the values that reproduce 9.0.8's -c summaries (0, num_rel = R,
    gm_* = log(MIN_GEO_MEAN), relstring '').

    Without -c, trec_eval 10.0 itself mishandles a qrels query missing from the run (it reuses
    the previous query's ranking, or crashes if there is none, usnistgov/trec_eval#46); that is not
    reproduced. A query given as an empty dict (in either input) counts as absent, since a TREC
    file cannot express it. Use ``summarize`` over the returned values for the ``all`` line
    (with -c pass ``qrels``, and ``num_queries=len(qrels queries)`` for 9.0.8). A run sharing
    no query with the qrels is no error here: with -c trec_eval 10.0 evaluates every qrels
    query on the bogus ranking.
    """
    _check_version(version)
    if queries not in ("run", "qrels"):
        raise ValueError(f"queries must be 'run' or 'qrels', got {queries!r}")
    measures = [(family, param) for family, param in measures]
    for family, param in measures:
        _check_family(family, param, version)
        try:
            hash(param)
        except TypeError:
            raise TypeError(
                f"{family}: parameters key the result, so they must be hashable; give a gain map "
                "as a tuple of (grade, gain) pairs"
            ) from None
    options: dict[str, Any] = dict(relevance_level=relevance_level, max_docs=max_docs,
                                   judged_only=judged_only, float32_scores=float32_scores)
    judged = {qid: q for qid, q in qrels.items() if q}
    if queries == "run":
        qids = sorted(qid for qid, run_q in run.items() if run_q and qid in judged)
    else:
        qids = sorted(judged)
    results: dict[str, dict[tuple[str, Any], Any]] = {}
    for qid in qids:
        run_q = run.get(qid)
        if not run_q:
            results[qid] = _missing_query_values(judged[qid], measures, options, version)
            continue
        ranked = rank_query(judged[qid], run_q, **options)
        results[qid] = {(family, param): _MEASURES[family](ranked, param, version)
                        for family, param in measures}
    return results
