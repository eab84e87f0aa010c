"""The evaluation engine: ranking measures over encoded qrels and runs.

:class:`Evaluation` pairs a run's queries with the qrels', ranks each query's judged documents
(the rank-lookup kernel) and fills measure columns from them (the measure kernels);
:class:`Chunked` does the same a batch of queries at a time, for runs read as they stream in;
the summaries turn per-query values into what trec_eval prints for "all", from exactly
rounded sums. The engine takes :class:`~qafast._ranked.Qrels` and
:class:`~qafast._ranked.Run` and knows nothing of where they came from: the readers and the
streaming drivers (``_runfile``, ``_arrow_input``, ``_run_sources``) hand them over.
"""

from __future__ import annotations

import os
import warnings

import numpy as np

from . import _kernels
from ._measure_parser import Column, column_groups, kernel_arrays
from ._measures import BY_NAME, DENSE, NO_CUTOFF
from ._ranked import EMPTY_I64, Qrels, Run, comparable_int_ids
from ._summaries import (
    LEVEL_CEILING,
    MIN_GEO_MEAN,
    pair_queries,
    relstring,
    zeroed_when_missing,
)
from ._threads import cuts, parts, resolve_workers, run_parts
from .errors import InputError, InputTypeError

__all__ = ["Chunked", "Evaluation", "NoCommonQueryWarning", "check_max_grades", "check_options",
           "no_common", "query_pairs"]



def query_pairs(qrels: Qrels, run: Run, queries: str, keep_empty: bool = False,
           qrels_start: int = 0, allow_none: bool = False):
    """(query ids, run index, qrels index) of the evaluated queries, in query id order.

    A run query without documents counts as absent from the run, as it would be in a TREC
    file, unless ``keep_empty`` (pytrec_eval evaluates it on an empty ranking). The run's
    queries are first tried against the qrels' from position ``qrels_start`` on, in order.
    With ``allow_none``, no query in common gives empty results rather than an error.
    """
    if queries not in ("run", "qrels"):
        raise InputError(f"queries must be 'run' (run and qrels in common) or 'qrels' (every "
                         f"qrels query, missing ones scoring 0, as trec_eval -c), not {queries!r}")
    sizes = np.diff(run.offsets)
    present = sizes > 0 if not keep_empty else np.ones(len(run.query_ids), dtype=bool)
    if (run.query_ids and qrels.query_ids and type(run.query_ids[0]) is int
            and type(qrels.query_ids[0]) is int):
        return _pairs_int(qrels, run, queries, present, allow_none)
    ids, pair_run, pair_qrels = pair_queries(
        run.query_ids, qrels.query_ids, every_qrels_query=queries == "qrels",
        keep=present.tolist(), qrels_start=qrels_start, qrels_index=qrels.query_index())
    if not allow_none and not any(r >= 0 for r in pair_run):
        no_common(qrels, run, queries)  # raises; under -c, warns
    return ids, np.array(pair_run, dtype=np.int64), np.array(pair_qrels, dtype=np.int64)


def _pairs_int(qrels, run, queries, present, allow_none=False):
    """query_pairs for integer query ids, in numpy."""
    rq = run.query_array()
    qq = qrels.query_array()
    rkeep = np.flatnonzero(present) if not present.all() else np.arange(len(rq))
    rsel = rq[rkeep]
    if len(rsel) > 1 and len(qq) > 1 and (rsel[1:] > rsel[:-1]).all() and (qq[1:] > qq[:-1]).all():
        # both already in id order (rows grouped by ascending query id): no sort needed
        pos = np.minimum(np.searchsorted(qq, rsel), len(qq) - 1)
        hit = qq[pos] == rsel
        ri = np.flatnonzero(hit)
        qi = pos[hit]
        common = rsel[ri]
    else:
        common, ri, qi = np.intersect1d(rsel, qq, assume_unique=True, return_indices=True)
    if not len(common):
        if allow_none and queries == "run":
            return [], EMPTY_I64, EMPTY_I64
        no_common(qrels, run, queries)
    if queries == "run":
        return common.tolist(), rkeep[ri].astype(np.int64), qi.astype(np.int64)
    order = np.argsort(qq, kind="stable")
    pair_run = np.full(len(qq), -1, dtype=np.int64)
    pair_run[qi] = rkeep[ri]
    return qq[order].tolist(), pair_run[order], order.astype(np.int64)


def no_common(qrels, run, queries: str = "run"):
    """No query of the run is in the qrels: an error, unless every qrels query is evaluated
    (``queries="qrels"``, trec_eval ``-c``), when each is scored on an empty ranking, as
    trec_eval does, with a warning."""
    what = (f"the run ({run.source}) and the qrels ({qrels.source}) have no query in common "
            f"(run queries look like {run.query_ids[:3]!r}, qrels queries like "
            f"{qrels.query_ids[:3]!r})")
    if queries == "qrels" and len(qrels.query_ids):
        warnings.warn(f"{what}: every qrels query is scored as if nothing was retrieved, as "
                      "trec_eval -c does", NoCommonQueryWarning, stacklevel=_caller_level())
        return
    raise InputError(what)


def _caller_level() -> int:
    """The ``stacklevel`` that points a warning at the first caller outside qafast."""
    import sys
    from types import FrameType

    package = os.path.dirname(os.path.abspath(__file__))
    frame: FrameType | None = sys._getframe(1)
    level = 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame, level = frame.f_back, level + 1
    return level


class NoCommonQueryWarning(UserWarning):
    """``evaluate(queries="qrels")`` on a run that shares no query with the qrels."""


def check_options(relevance_level, judged_only, max_docs):
    if not isinstance(relevance_level, (int, np.integer)) or isinstance(relevance_level, bool):
        raise InputTypeError("relevance_level must be an int, not "
                             f"{type(relevance_level).__name__}")
    if relevance_level < 0:
        # below 0, trec_eval's "relevant" takes in the codes it gives documents outside the
        # qrels (-1) and negatively graded ones (-2): map above 1, infinite means
        raise InputError(f"relevance_level must be 0 or more, not {relevance_level}")
    if not isinstance(judged_only, (bool, np.bool_)):
        raise InputTypeError(f"judged_only must be a bool, not {type(judged_only).__name__}")
    if max_docs is not None and (not isinstance(max_docs, (int, np.integer)) or max_docs < 1):
        raise InputError(f"max_docs must be None or a positive int, not {max_docs!r}")


#: run and qrels rows a kernel call takes at most (a few milliseconds of work; each call
#: costs a few microseconds more than the work it does)
_PIECE = 1 << 18


class Evaluation:
    """The ranked judged documents of every evaluated query, and measure columns over them."""

    def __init__(self, qrels: Qrels, run: Run, *, relevance_level: int, judged_only: bool,
                 max_docs, queries: str, workers: int, float32_scores: bool = False,
                 v9: bool = False, keep_empty: bool = False, qrels_start: int = 0,
                 allow_none: bool = False, pairs=None):
        # ``pairs``: (ids, run positions, qrels positions) of the queries to evaluate, when
        # the caller knows them (a streamed chunk following the qrels' order), in any order
        qrels, run = comparable_int_ids(qrels, run)
        qrels._freeze()
        run._freeze()
        self.qrels, self.run = qrels, run
        # grades are int32: every level above their range selects the same (no) documents,
        # and a cutoff past every ranking is no cutoff; clip what the kernels' C long holds
        self.relevance_level = min(int(relevance_level), LEVEL_CEILING)
        self.v9 = v9
        self.workers = resolve_workers(workers)
        self.ids, pair_run, pair_qrels = pairs if pairs is not None else query_pairs(
            qrels, run, queries, keep_empty, qrels_start, allow_none)
        # The kernels take the queries in the order the run stores them, so each reads its
        # data front to back; rows are put back in query id order (``self.row``) after.
        self.row: np.ndarray | None
        if len(pair_run) > 1 and bool((pair_run[1:] < pair_run[:-1]).any()):
            order = np.argsort(pair_run, kind="stable")
            self.pair_run, self.pair_qrels = pair_run[order], pair_qrels[order]
            self.row = np.argsort(order)  # row[p]: where query p (in id order) was computed
        else:
            self.pair_run, self.pair_qrels, self.row = pair_run, pair_qrels, None
        n_pairs = len(self.ids)
        run_len = np.diff(run.offsets)
        # only the evaluated queries' sizes: a run evaluated a batch at a time against large
        # qrels would otherwise pay for every qrels query at each batch
        qrels_len = qrels.offsets[self.pair_qrels + 1] - qrels.offsets[self.pair_qrels]
        rl = (np.where(self.pair_run >= 0, run_len[np.maximum(self.pair_run, 0)], 0)
              if len(run_len) else np.zeros(n_pairs, dtype=np.int64))  # a run of no query
        room = np.minimum(rl, qrels_len)
        # the work of each query, as a running total: the kernels are called on pieces of
        # about _PIECE of it, so that an interrupt is seen between two (run_parts)
        self._work = np.zeros(n_pairs + 1, dtype=np.int64)
        np.cumsum(rl + qrels_len + 1, out=self._work[1:])
        self.offsets = np.zeros(n_pairs + 1, dtype=np.int64)
        np.cumsum(room, out=self.offsets[1:])
        total = int(self.offsets[-1])
        self.rank = np.empty(total, dtype=np.int32)
        self.grade = np.empty(total, dtype=np.int32)
        self.count = np.empty(n_pairs, dtype=np.int64)
        self.num_ret = np.empty(n_pairs, dtype=np.int64)
        if run.num_entries and qrels.num_entries and run.string_ids != qrels.string_ids:
            raise InputTypeError(f"the run ({run.source}) and the qrels ({qrels.source}) use "
                                 "different document id types (str and int)")
        scores = run.values
        if float32_scores:
            scores = scores.astype(np.float32).astype(np.float64)
        md = 0 if max_docs is None else min(int(max_docs), NO_CUTOFF)
        run_tables = run.kernel_args()
        run_tiekeys = run.tiekeys if run.tiekeys is not None else EMPTY_I64
        qrels_tables = qrels.kernel_args()
        # the closure holds the arrays, not self: self holding it would make a reference
        # cycle, and each batch of a streamed run would keep its arrays until the garbage
        # collector came by (100 MB more at the peak of a 100M-line run without it)
        pair_run, pair_qrels, offsets = self.pair_run, self.pair_qrels, self.offsets
        ranks, grades, count, num_ret = self.rank, self.grade, self.count, self.num_ret

        def rank(lo, hi):
            _kernels.rank_judged(
                run.offsets, run_tables[0], run_tiekeys, *run_tables[1:], scores,
                qrels.offsets, *qrels_tables, qrels.values,
                pair_run[lo:hi], pair_qrels[lo:hi], md, judged_only,
                offsets[lo:hi + 1], ranks, grades, count[lo:hi], num_ret[lo:hi])

        # ranking is deferred to the first values() call, which ranks and measures each chunk
        # of queries in one go on one thread, while its rows are still in cache
        self._rank = rank
        self._ranked = False

    def _ensure_ranked(self):
        if not self._ranked:
            self._parallel(self._rank, len(self.ids))
            self._ranked = True

    def _parallel(self, work, n):
        weights = self._work
        run_parts(work, parts(n, self.workers), lambda lo, hi: cuts(weights, lo, hi, _PIECE))

    def values(self, columns: list[Column]) -> np.ndarray:
        """Per-query values, shape (queries, columns)."""
        groups = column_groups(columns, self.relevance_level, self.v9)
        if len(groups) == 1:
            (level, v9), = groups
            return self._values(columns, level, v9)
        out = np.empty((len(self.ids), len(columns)), dtype=np.float64)
        for (level, v9), js in groups.items():
            out[:, js] = self._values([columns[j] for j in js], level, v9)
        return out

    def _values(self, columns: list[Column], relevance_level: int, v9: bool) -> np.ndarray:
        n_pairs, m = len(self.ids), len(columns)
        codes, kparams, fparams, loffs, lk, lv = kernel_arrays(columns)
        need_dense = any(c.family in DENSE for c in columns)
        max_grade = self.qrels.max_value()
        out = np.zeros((n_pairs, m), dtype=np.float64)

        ranked = self._ranked

        def work(lo, hi):
            if not ranked:
                self._rank(lo, hi)
            _kernels.ranking_measures(
                self.offsets, self.rank, self.grade, self.count, self.num_ret,
                self.pair_qrels, self.qrels.offsets, self.qrels.values, relevance_level,
                max(max_grade, 0), v9, codes, kparams, fparams, loffs, lk, lv,
                need_dense, out, lo, hi)

        self._parallel(work, n_pairs)
        self._ranked = True
        for j, c in enumerate(columns):
            if c.aggregate == "gm":
                # per query, trec_eval (and pytrec_eval) keep log(max(value, MIN_GEO_MEAN))
                out[:, j] = np.log(np.maximum(out[:, j], MIN_GEO_MEAN))
        if self.row is not None:
            out = out[self.row]
        missing = self.pair_run < 0 if self.row is None else self.pair_run[self.row] < 0
        if missing.any():
            for j, c in enumerate(columns):
                if zeroed_when_missing(c):
                    out[missing, j] = 0.0
        return out

    def relstring(self, p: int, length: int, name: str = "relstring") -> str:
        """trec_eval's relstring for query p (in id order): one character per rank for the
        top ``length``."""
        self._ensure_ranked()
        if self.row is not None:
            p = int(self.row[p])
        if self.pair_run[p] < 0 and name == "relstring":
            return ""  # trec_eval.c clears it for a query missing from the run
        return relstring(self.rank, self.grade, int(self.offsets[p]), int(self.count[p]),
                         int(self.num_ret[p]), length)


def check_max_grades(qrels: Qrels, columns: list[Column]) -> None:
    """A family with a grade scale of its own (ERR, as gdeval.pl defines it, takes grades up
    to 4: its stopping probabilities are (2**grade - 1) / 16) refuses a higher grade."""
    scaled = sorted((row.max_grade, row.name) for row in (BY_NAME[c.family] for c in columns)
                    if row.max_grade is not None)
    if not scaled or not len(qrels.values) or int(qrels.values.max()) <= scaled[0][0]:
        return
    row = BY_NAME[scaled[0][1]]
    i = int(np.argmax(qrels.values))
    q = qrels.query_ids[int(np.searchsorted(qrels.offsets, i, side="right")) - 1]
    raise InputError(f"{qrels.where(i)}: query {q!r}, document {qrels.doc_id(i)!r}: grade "
                     f"{int(qrels.values[i])} is above {row.max_grade}, the highest grade "
                     f"{row.title} ({row.name}) takes")


class Chunked:
    """Per-query values of a run measured a chunk of queries at a time, then put in query
    id order: what one Evaluation of the whole run gives."""

    def __init__(self, qrels: Qrels, columns: list[Column], options: dict):
        self.qrels, self.columns, self.options = qrels, columns, options
        self.ids: list = []
        self.blocks: list = []

    @staticmethod
    def run(query_ids, offsets, values, hashes, byte_offsets, blob, tiekeys, source,
            lines=None) -> Run:
        """A chunk's arrays (views of reused buffers, which nothing may keep) as a Run."""
        chunk = Run.__new__(Run)
        chunk._set(query_ids, offsets, values, hashes, None, byte_offsets, blob, source, lines)
        chunk.tiekeys = tiekeys
        chunk.run_id = None
        return chunk

    def add(self, chunk: Run, first: int) -> None:
        """Measure a chunk whose queries follow the ``first`` queries before it."""
        ev = Evaluation(self.qrels, chunk, queries="run", qrels_start=first, allow_none=True,
                         **self.options)
        if ev.ids:
            self.ids.extend(ev.ids)
            self.blocks.append(ev.values(self.columns))

    def result(self):
        """(query ids in id order, values), or None if no query was in the qrels (the
        general path then names the problem)."""
        if not self.ids:
            return None
        ids = self.ids
        order = sorted(range(len(ids)), key=ids.__getitem__)
        return [ids[k] for k in order], np.concatenate(self.blocks)[order]
