"""Metrics for the training loop: ``update()`` per batch, ``compute()`` at the end.

:class:`RankingMetrics` accumulates any measure :func:`qafast.evaluate` accepts, and
:class:`AnswerMetrics` SQuAD-style exact match and F1. Both merge (``merge``), save and load
their state (``state_dict`` / ``load_state_dict``: plain lists, ints and strings, which
pickle writes and a checkpoint that ``torch.load(..., weights_only=True)`` reads holds; with
``state_dict(tensors=True)`` torch tensors in place of the lists), and are synchronised across
torch.distributed ranks by :func:`qafast.integrations.torch.sync`. A state is checked as it
is loaded, merged or unpickled (``qafast._state``): one that updates and merges cannot make
is refused, with an error naming the field.

Every mean is an exactly rounded sum divided by a count (the accumulator of
``qafast._exactsum``), so the result never depends on how the data was split into batches,
accumulators, workers or ranks, nor on the order of merges: ``compute()`` has the bits of one
:func:`qafast.evaluate` (or :func:`qafast.f1`) call on all the data.

Inputs are numpy arrays, lists, or any object with ``__dlpack__`` or the buffer protocol
(torch and JAX CPU tensors, read-only and strided ones too), read without a copy where the
dtype allows; see :func:`qafast._convert.as_array`. A metric object is not thread-safe: give
each thread its own and merge them.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from . import _exactsum, _kernels
from ._convert import as_array
from ._measure_parser import column_groups, kernel_arrays, parse_measures, reads_subtopics
from ._measures import BY_NAME, DENSE, MAX_GRADE, TABLE, TEXT_MEASURES
from ._state import Field, Rule, StateRecord, StateSpec, ValueRange, exact_sum_rules, state_dict
from ._summaries import MIN_GEO_MEAN, column_summary
from .errors import InputError, InputTypeError, MeasureError

__all__ = ["AnswerMetrics", "RankingMetrics"]

_EMPTY_MODES = {"skip": 0, "zero": 1, "error": 2}
#: the most relevant documents a query may have (a run's documents are counted in int32):
#: nDCG and G walk the ideal ranking one document at a time, so an unbounded count would be
#: an unbounded loop
_MAX_NUM_RELEVANT = 2**31 - 1
_STATE_VERSION = 1
#: measure families whose values change when a candidate judged 0 is treated as not judged:
#: with none of them, the kernels rank only the candidates with a positive grade (faster)
_JUDGED_ZERO_MATTERS = frozenset(f.name for f in TABLE if f.reads_nonrelevant)
_EMPTY_I64 = np.zeros(0, dtype=np.int64)
_EMPTY_U8_2D = np.zeros((0, 0), dtype=np.uint8)
_NO_SCORES = np.zeros((0, 0), dtype=np.float64)
_NO_SCORES32 = np.zeros((0, 0), dtype=np.float32)
_NO_ACC = np.zeros((0, _exactsum.LIMBS), dtype=np.int64)
_NO_SPECIAL = np.zeros(0, dtype=np.float64)


def _check_int(value, name: str, low: int) -> int:
    if not isinstance(value, (int, np.integer)) or isinstance(value, (bool, np.bool_)):
        raise InputTypeError(f"{name} must be an int, not {type(value).__name__}")
    if value < low:
        raise InputError(f"{name} must be at least {low}, not {value}")
    return int(value)


def _float_scores(s: np.ndarray, name: str) -> np.ndarray:
    if s.dtype.kind not in "fiu":
        raise InputTypeError(f"{name} must hold numbers, not {s.dtype}")
    if s.dtype != np.float64 or not s.flags.c_contiguous:
        s = np.ascontiguousarray(s, dtype=np.float64)
    return s


def _int_grades(r: np.ndarray, valid, name: str, where) -> np.ndarray:
    """Grades as C-contiguous int64 (range checks are the caller's). Float grades must be
    whole numbers where ``valid`` (a bool array, or None for everywhere); ``where(index)``
    names an entry for messages."""
    kind = r.dtype.kind
    if kind == "b" or kind in "iu" and r.dtype != np.uint64:
        return np.ascontiguousarray(r, dtype=np.int64)
    if kind == "u":
        return np.ascontiguousarray(np.minimum(r, 2**62), dtype=np.int64)
    if kind == "f":
        r = np.asarray(r, dtype=np.float64)
        bad = np.floor(r) != r  # NaN and infinities too
        if valid is not None:
            bad &= valid
        if bad.any():
            i = np.unravel_index(int(np.flatnonzero(bad.ravel())[0]), r.shape)
            raise InputError(f"{name}: {where(i)}: grade {float(r[i])!r} is not an integer")
        if valid is not None:
            r = np.where(np.isfinite(r), r, 0.0)  # padding may hold anything
        return np.ascontiguousarray(np.clip(r, -2**62, 2**62), dtype=np.int64)
    raise InputTypeError(f"{name} must hold integer grades (or bools), not {r.dtype}")


_KernelArgs = tuple[int, array, array, array, array, array, array]


def _kernel_args(columns, level: int, v9: bool, nonpositive: str) -> _KernelArgs:
    """The stream kernels' flags and per-measure arrays for columns measured at ``level``
    (with ``nonpositive``, torchmetrics' rule for relevant candidates scored 0 or less: "",
    "not relevant" or "not retrieved")."""
    codes, kparams, fparams, loffs, lkeys, lvals = kernel_arrays(columns)
    # at a level of 0 or below a candidate graded 0 is relevant: every candidate is ranked
    all_judged = level <= 0 or any(c.family in _JUDGED_ZERO_MATTERS or c.keys for c in columns)
    flags = (int(all_judged) | 2 * int(any(c.family in DENSE for c in columns))
             | 4 * int(v9) | _NONPOSITIVE_FLAGS[nonpositive])
    return flags, codes, kparams, fparams, loffs, lkeys, lvals


#: the kernels' flags for torchmetrics' rule (_stream_kernels.pxi)
_NONPOSITIVE_FLAGS = {"": 0, "not relevant": 8, "not retrieved": 16}


def _settings(columns, level: int, torchmetrics_nonpositive: bool
              ) -> list[tuple[np.ndarray, int, _KernelArgs]]:
    """The kernel passes: the columns measured at each (relevance level, recall rounding,
    rule for nonpositive scores), as ``(indices, level, kernel args)``."""
    groups: dict[tuple[int, bool, str], list[int]] = {}
    for (lvl, v9), js in column_groups(columns, level).items():
        for j in js:
            rule = (BY_NAME[columns[j].family].torchmetrics_nonpositive
                    if torchmetrics_nonpositive else "")
            groups.setdefault((min(lvl, MAX_GRADE + 1), v9, rule), []).append(j)
    return [(np.array(js, dtype=np.int64), lvl,
             _kernel_args([columns[j] for j in js], lvl, v9, rule))
            for (lvl, v9, rule), js in groups.items()]


def _ids_array(ids, name: str, n: int) -> np.ndarray:
    a = as_array(ids, name)
    if a.ndim != 1 or len(a) != n:
        raise InputError(f"{name} must be 1-d with {n} entries (one per row), not shape "
                         f"{a.shape}")
    if a.dtype.kind not in "iu":
        if a.dtype.kind == "f" and (np.floor(a) == a).all():
            return a.astype(np.int64)
        raise InputTypeError(f"{name} must be integers (as torchmetrics' indexes), not {a.dtype}")
    if a.dtype == np.uint64 and n and a.max() > 2**63 - 1:
        raise InputError(f"{name}: id {int(a.max())} does not fit in int64")
    return np.array(a, dtype=np.int64)  # a copy: the caller may reuse its buffer


# ------------------------------------------------------------------------------ saved state
#: the most queries (or questions) a state may count, and rows without document ids it may
#: number: a mean divides by the count as a double, exact up to 2**53, and the torch
#: integrations add counts of many ranks in int64
_MAX_COUNT = 2**53
_ROW_FIELDS = ("row_query_ids", "row_doc_ids", "row_scores", "row_grades")

# What one query's value of a measure may be (the measure table's ``values``: see
# ``Family.values`` for why each range is one the computation cannot leave): a state's exact
# sum of a column is held to count x this range.
_COUNT_VALUE = ValueRange(0.0, 2.0**63)
_RATIO = ValueRange(0.0, 1.0)
_ANY_VALUE = ValueRange(-sys.float_info.max, sys.float_info.max, nonfinite=True)
_RANGES = {
    "count": _COUNT_VALUE,
    "ratio": _RATIO,
    "ratio or nan": ValueRange(0.0, 1.0, nonfinite=True, infinite=False),
    # at most 1 exactly, but quotients of float sums of one term per candidate: each sum is
    # within a factor 1 +- n 2**-53 of its exact value for n candidates, which keeps the
    # quotient far below 2 for any n that fits in memory (n < 2**44)
    "rounded ratio": ValueRange(0.0, 2.0),
    "rounded ratio or nan": ValueRange(0.0, 2.0, nonfinite=True, infinite=False),
    "log": ValueRange(-12.0, 0.0),  # log(max(value, 0.00001)) of a value in [0, 1]
    "any": _ANY_VALUE,
}
_ANSWER_VALUES = (("exact_match", _RATIO), ("f1", _RATIO))


def _value_range(column) -> ValueRange:
    """What one query's value of ``column`` may be (see above)."""
    if column.keys:  # gains the user chose: nDCG may leave [0, 1] either way
        return _ANY_VALUE
    return _RANGES[BY_NAME[column.family].values]


def _rows_only_in_rows_mode(values, columns) -> str | None:
    n = len(values["row_query_ids"])
    if n and values["mode"] != "rows":
        return f"holds {n} rows in a state of mode {values['mode']!r}; only mode 'rows' has rows"
    return None


def _count_only_in_batch_mode(values, columns) -> str | None:
    if values["count"] and values["mode"] != "batch":
        return (f"{values['count']} in a state of mode {values['mode']!r}; only mode 'batch' "
                "counts queries")
    return None


def _doc_id_flag(values, columns) -> str | None:
    has_ids, mode = values["row_has_doc_ids"], values["mode"]
    if mode != "rows" and has_ids != -1:
        return f"{has_ids} in a state of mode {mode!r}; it is -1 until rows arrive"
    if has_ids == -1 and len(values["row_query_ids"]):
        return "-1 (no rows yet) in a state that holds rows"
    return None


def _rows_without_ids(values, columns) -> str | None:
    if values["row_has_doc_ids"] != 0 and values["rows_without_ids"]:
        return (f"{values['rows_without_ids']} where row_has_doc_ids is "
                f"{values['row_has_doc_ids']}; only rows without document ids are numbered")
    return None


def _tie_keys(values, columns) -> str | None:
    """Rows without document ids have tie keys 0, -1, -2, ... in arrival order: each one
    once."""
    keys, numbered = values["row_doc_ids"], values["rows_without_ids"]
    if values["row_has_doc_ids"] != 0 or not len(keys):
        return None
    if keys.max() > 0 or keys.min() <= -numbered:
        return (f"of rows without document ids are tie keys from 0 down to "
                f"-(rows_without_ids - 1) = {1 - numbered}, not {int(keys.min())}.."
                f"{int(keys.max())}")
    ordered = np.sort(keys)
    repeated = ordered[1:] == ordered[:-1]
    if repeated.any():
        return (f"of rows without document ids are tie keys, each given once; "
                f"{int(ordered[1:][repeated][0])} is repeated")
    return None


_RANKING_STATE = StateSpec(
    kind="RankingMetrics", version=_STATE_VERSION,
    config=("measures", "relevance_level", "empty_queries", "max_docs",
            "torchmetrics_nonpositive"),
    fields=(
        Field("measures", "names"),
        Field("relevance_level", "int", low=1, high=MAX_GRADE + 1),
        Field("empty_queries", "str", choices=tuple(_EMPTY_MODES)),
        Field("max_docs", "int", low=0, high=2**62),
        # absent from states written before the option
        Field("torchmetrics_nonpositive", "bool", default=False),
        Field("mode", "str", choices=("", "batch", "rows"), reduce="mode"),
        Field("count", "int", low=0, high=_MAX_COUNT, reduce="sum"),
        Field("sums", "array", "int64", ("columns", "limbs"), reduce="exact_sum"),
        Field("nonfinite_sums", "array", "float64", ("columns",), reduce="sum"),
        Field("row_query_ids", "array", "int64", ("rows",), reduce="cat"),
        Field("row_doc_ids", "array", "int64", ("rows",), reduce="cat"),
        Field("row_scores", "array", "float64", ("rows",), nan=False, reduce="cat"),
        Field("row_grades", "array", "int32", ("rows",), low=0, high="grade_scale",
              reduce="cat"),
        Field("row_has_doc_ids", "int", choices=(-1, 0, 1), reduce="flag"),
        Field("rows_without_ids", "int", low=0, high=_MAX_COUNT, reduce="sum"),
    ),
    rules=exact_sum_rules("query", "queries") + (
        Rule("count", _count_only_in_batch_mode),
        Rule("row_query_ids", _rows_only_in_rows_mode),
        Rule("row_has_doc_ids", _doc_id_flag),
        Rule("rows_without_ids", _rows_without_ids),
        Rule("row_doc_ids", _tie_keys),
    ),
)

_ANSWER_STATE = StateSpec(
    kind="AnswerMetrics", version=_STATE_VERSION, config=("normalizer", "unit", "empty_rule"),
    fields=(
        Field("normalizer", "str"),
        Field("unit", "str"),
        Field("empty_rule", "str"),
        Field("count", "int", low=0, high=_MAX_COUNT, reduce="sum"),
        Field("sums", "array", "int64", ("columns", "limbs"), reduce="exact_sum"),
        Field("nonfinite_sums", "array", "float64", ("columns",), reduce="sum"),
    ),
    rules=exact_sum_rules("question", "questions"),
)


def _check_merged_total(name: str, total: int) -> None:
    if total > _MAX_COUNT:
        raise InputError(f"merging would make {name} {total}, more than a state holds "
                         f"({_MAX_COUNT})", field=name)


class RankingMetrics:
    """Ranking measures accumulated over batches, with trec_eval 10.0's definitions.

    Two input shapes, one per metric object (the first ``update`` decides):

    - **Batches of whole queries**: ``update(scores, relevance, mask=..., num_relevant=...)``
      with 2-d ``(queries, candidates)`` arrays. Each query is measured at once and only the
      sums are kept: the state has a constant size and merges by addition.
    - **Rows in any split** (torchmetrics' ``indexes`` form): ``update(scores, relevance,
      query_ids, doc_ids)`` with 1-d arrays. A query's rows may arrive in several updates, on
      several workers; rows are kept (28 bytes each: query id, document id, score and grade)
      until ``compute()`` ranks them, and a repeated ``(query, document)`` row, as a padded
      ``DistributedSampler`` adds, counts once.

    Every candidate is judged: its grade is its relevance. ``compute()`` equals
    :func:`qafast.evaluate` bit for bit on the same data: a qrels holding every candidate
    (with ``num_relevant``, also the relevant documents that were not candidates, at grade
    ``relevance_level``) and a run holding every candidate with its score.

    Ties. With document ids, equal scores go to the larger id first, as trec_eval breaks
    them. Without (batches, or rows without ``doc_ids``), the earlier candidate wins: the
    lower column of a batch, the row that arrived first in the rows form (rows of an
    accumulator merged in come after this one's).

    Parameters
    ----------
    measures : str or iterable of str
        Any measure :func:`qafast.evaluate` accepts (``"ndcg@10"``, ``"mrr@10"``,
        ``"recall@100"``, ``"map"``, ``"P_5"``, ``"official"``, ...).
    relevance_level : int, default 1
        Lowest grade that counts as relevant (trec_eval ``-l``); at least 1. A measure
        that sets its own (ranx's ``ndcg@10-l2``, ir_measures' ``P(rel=2)@5``) uses its own,
        but which queries are empty is always decided at ``relevance_level``.
    empty_queries : {"skip", "zero", "error"}, default "skip"
        A query without a relevant document (no candidate graded ``relevance_level`` or
        above and ``num_relevant`` 0) is left out of the means (``"skip"``, as trec_eval
        leaves out a query absent from the qrels), measured like any other, which gives 0
        for precision, recall, MAP, nDCG and MRR (``"zero"``, as torchmetrics'
        ``empty_target_action="neg"``), or raises a ``ValueError`` (``"error"``).
    max_docs : int, optional
        Rank only the top ``max_docs`` candidates of each query (trec_eval ``-M``).
    torchmetrics_nonpositive : bool, default False
        Treat a relevant candidate scored 0 or less as torchmetrics 1.9 does (its PR
        #3104), to reproduce its numbers on logits: MAP, MRR and precision (``RetrievalMAP``,
        ``RetrievalMRR``, ``RetrievalPrecision``) count it as not relevant, so it leaves R
        too; recall (``RetrievalRecall``) as not retrieved, so it stays in R. Other measures,
        and which queries are empty, are unchanged. By default (trec_eval's definitions) a
        score is only a rank.

    Notes
    -----
    Padding. In a batch, a candidate is padding where ``mask`` is False, or, when no mask is
    given, where its score is ``-inf``; a row of padding only is not a query. NaN scores,
    negative or fractional grades, and grades above 1,000,000 raise ``ValueError`` (in
    padding they are ignored). A call that raises leaves the state as it was.

    Empty batches. An update without entries (2-d shape ``(0, k)`` or ``(k, 0)``, or no
    rows) is checked like any other and then changes nothing, not even which input shape
    the metric takes. ``(k, 0)`` is k queries without candidates: like a row of padding, not
    a query, as trec_eval measures only the queries a run retrieves documents for, whatever
    ``num_relevant`` says (torchmetrics refuses an empty update).

    Examples
    --------
    >>> import numpy as np, qafast
    >>> m = qafast.RankingMetrics(["mrr@10", "ndcg@10", "P@2"])
    >>> m.update(np.array([[0.9, 0.5, 0.1], [0.2, 0.8, 0.4]]), np.array([[0, 1, 0], [1, 0, 2]]))
    >>> m.update(np.array([[0.3, 0.3, -np.inf]]), np.array([[0, 1, 0]]))  # -inf: padding
    >>> m.compute()
    {'mrr@10': 0.5, 'ndcg@10': 0.6438437745457151, 'P@2': 0.5}

    The rows form, as torchmetrics takes it:

    >>> r = qafast.RankingMetrics(["mrr@10"])
    >>> r.update([0.9, 0.5, 0.2], [0, 1, 1], [7, 7, 8], [1, 2, 3])
    >>> r.update([0.5, 0.1], [1, 0], [7, 8], [2, 4])       # (7, 2) again: counted once
    >>> r.compute()
    {'mrr@10': 0.75}

    On logits, torchmetrics' MAP leaves out the relevant candidate scored -0.3 (trec_eval's
    is (1/1 + 2/3) / 2):

    >>> logits, relevance = [[1.2, 0.4, -0.3, -0.9]], [[1, 0, 1, 0]]
    >>> t = qafast.RankingMetrics(["map"], torchmetrics_nonpositive=True)
    >>> t.update(logits, relevance)
    >>> t.compute()
    {'map': 1.0}
    """

    #: the fields and rules of this metric's state (read by the torch integrations)
    _state_spec = _RANKING_STATE

    def __init__(self, measures: str | Iterable[str], *, relevance_level: int = 1,
                 empty_queries: str = "skip", max_docs: int | None = None,
                 torchmetrics_nonpositive: bool = False):
        columns = [c for c in parse_measures(measures) if c.family not in TEXT_MEASURES]
        if not columns:
            raise InputError(f"measures {measures!r}: none of them is a per-query number")
        if reads_subtopics(columns):
            raise MeasureError(
                f"measures {measures!r}: RankingMetrics' batches carry one grade per "
                "candidate, not the subtopics the diversity measures (alpha_nDCG, ERR_IA, "
                "...) read; compute those with qafast.evaluate and a qafast.DiversityQrels")
        for c in columns:
            if c.judged_only:
                raise InputError(f"measure {c.name!r}: judged_only drops the documents the "
                                 "qrels do not judge, and every candidate here has a grade")
        # grades go up to MAX_GRADE: every level above it selects the same (no) candidates,
        # and the kernels size their work by the level
        self._level = min(_check_int(relevance_level, "relevance_level", 1), MAX_GRADE + 1)
        if empty_queries not in _EMPTY_MODES:
            raise InputError(f"empty_queries must be 'skip', 'zero' or 'error', not "
                             f"{empty_queries!r}")
        self._empty = empty_queries
        self._max_docs = (None if max_docs is None
                          else min(_check_int(max_docs, "max_docs", 1), 2**62))
        self._columns = columns
        self._names = [c.name for c in columns]
        self._gm = [j for j, c in enumerate(columns) if c.aggregate == "gm"]
        if not isinstance(torchmetrics_nonpositive, (bool, np.bool_)):
            raise InputTypeError(f"torchmetrics_nonpositive must be a bool, not "
                                 f"{type(torchmetrics_nonpositive).__name__}")
        # a column may set its own relevance level (ranx's -lN, ir_measures' rel=) or recall
        # cut points (ir_measures' IPrec), or follow torchmetrics' rule for scores of 0 or
        # less: one kernel pass per setting, as evaluate makes
        self._groups = _settings(columns, self._level, bool(torchmetrics_nonpositive))
        self._config = (tuple(self._names), self._level, self._empty, self._max_docs,
                        bool(torchmetrics_nonpositive))
        # what one query's value of each column may be: a loaded state's sums are held to it
        self._allowed = [(c.name, _value_range(c)) for c in columns]
        # a family with a grade scale of its own (ERR takes 0-4) refuses a higher grade, as
        # evaluate does: its formula would give a value above 1
        scaled = [(BY_NAME[c.family].max_grade, c.name) for c in columns
                  if BY_NAME[c.family].max_grade is not None]
        self._grade_scale = min(scaled) if scaled else None
        self.reset()

    # ------------------------------------------------------------------ state
    def reset(self) -> None:
        """Forget every update."""
        self._mode: str | None = None  # "batch", "rows", or None before the first update
        self._limbs, self._special = _exactsum.new(len(self._columns))
        self._count = 0
        self._rows: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
        self._doc_ids: bool | None = None
        self._seq = 0  # rows received without document ids (their tie keys)

    @property
    def measures(self) -> list[str]:
        """The names of the values ``compute()`` returns, in order."""
        return list(self._names)

    def __repr__(self) -> str:
        what = {None: "empty", "batch": f"{self._count} queries",
                "rows": f"{sum(len(r[0]) for r in self._rows)} rows"}[self._mode]
        return f"RankingMetrics({self._names!r}, {what})"

    def _set_mode(self, mode: str) -> None:
        if self._mode is not None and self._mode != mode:
            have = ("batches of whole queries (2-d scores)" if self._mode == "batch"
                    else "rows with query ids (1-d scores)")
            raise InputError(f"this RankingMetrics already holds {have}; use one input shape "
                             "per metric object")

    # ------------------------------------------------------------------ update
    def update(self, scores, relevance, query_ids=None, doc_ids=None, *, mask=None,
               num_relevant=None) -> None:
        """Add a batch.

        Parameters
        ----------
        scores : array-like, 2-d ``(queries, candidates)`` or 1-d ``(rows,)``
            Higher ranks first. 2-d: a batch of whole queries; 1-d: rows of any queries.
        relevance : array-like, the shape of ``scores``
            Integer grades (bool, int, or float holding whole numbers); 0 is not relevant.
        query_ids : array-like of int, optional
            1-d rows: each row's query (required). 2-d batches: one id per query, used only
            to name a query in error messages.
        doc_ids : array-like of int, optional
            1-d rows: each row's document; ties then go to the larger id, and a repeated
            ``(query, document)`` row counts once.
        mask : array-like of bool, optional
            False marks padding (2-d), or rows to ignore (1-d).
        num_relevant : array-like of int, optional
            2-d batches: each query's number of relevant documents, candidates or not
            (recall, MAP and nDCG count the ones missing from the candidates, at grade
            ``relevance_level``).
        """
        s = as_array(scores, "scores")
        if s.ndim == 2:
            if doc_ids is not None:
                raise InputError("doc_ids are for 1-d rows; in a 2-d batch the column is "
                                 "the candidate")
            self._update_batch(s, relevance, query_ids, mask, num_relevant)
        elif s.ndim == 1:
            if num_relevant is not None:
                raise InputError("num_relevant is for 2-d batches of whole queries")
            if query_ids is None:
                raise InputError("1-d scores are rows of any queries: pass query_ids (or "
                                 "give 2-d (queries, candidates) scores)")
            self._update_rows(s, relevance, query_ids, doc_ids, mask)
        else:
            raise InputError(f"scores must be 2-d (queries, candidates) or 1-d rows, not "
                             f"{s.ndim}-d")

    def _update_batch(self, s, relevance, query_ids, mask, num_relevant) -> None:
        # a batch without entries, (0, k) or (k, 0), is checked as any batch and then
        # changes nothing: k queries without candidates are not queries (as a row of padding)
        empty = s.size == 0
        if not empty:
            self._set_mode("batch")
        r = as_array(relevance, "relevance")
        if r.shape != s.shape:
            raise InputError(f"relevance has shape {r.shape}, scores {s.shape}; they must "
                             "match")
        nq, nc = s.shape
        if s.dtype == np.float32 and s.flags.c_contiguous:
            s32, s = s, _NO_SCORES  # widened in the kernel
        else:
            s32, s = _NO_SCORES32, _float_scores(s, "scores")
        if mask is not None:
            mk = as_array(mask, "mask")
            if mk.shape != (nq, nc):
                raise InputError(f"mask has shape {mk.shape}, scores {(nq, nc)}; they must "
                                 "match")
            if mk.dtype != np.bool_:
                if mk.dtype.kind not in "iu":
                    raise InputTypeError(f"mask must be bool, not {mk.dtype}")
                mk = mk != 0
            mk = np.ascontiguousarray(mk).view(np.uint8)
        else:
            mk = _EMPTY_U8_2D
        if query_ids is not None and len(query_ids) != nq:
            raise InputError(f"query_ids has {len(query_ids)} entries for {nq} queries")

        def where(ij):
            if query_ids is not None:
                qid = query_ids[ij[0]]
                q = f"query {qid.item() if hasattr(qid, 'item') else qid!r}"
            else:
                q = f"query (row) {ij[0]}"
            return f"{q}, candidate {ij[1]}" if len(ij) > 1 else q

        valid = None
        if r.dtype.kind == "f":
            valid = mk.view(bool) if mask is not None else (
                s32 if s is _NO_SCORES else s) != -np.inf
        g = _int_grades(r, valid, "relevance", where)
        self._check_grade_scale(g, mk.view(bool) if mask is not None else None, where)
        if num_relevant is not None:
            nr = as_array(num_relevant, "num_relevant")
            if nr.shape != (nq,):
                raise InputError(f"num_relevant must have one entry per query ({nq}), not "
                                 f"shape {nr.shape}")
            if nr.dtype.kind not in "iu" and (nr.dtype.kind != "f"
                                              or not (np.floor(nr) == nr).all()):
                raise InputTypeError(f"num_relevant must hold integers, not {nr.dtype}")
            nr = np.ascontiguousarray(nr, dtype=np.int64)
            if nq and (nr.min() < 0 or nr.max() > _MAX_NUM_RELEVANT):
                i = int(np.flatnonzero((nr < 0) | (nr > _MAX_NUM_RELEVANT))[0])
                raise InputError(f"num_relevant: {where((i,))}: {int(nr[i])} is outside "
                                 f"0..{_MAX_NUM_RELEVANT}")
        else:
            nr = _EMPTY_I64
        m = len(self._columns)
        out = np.empty((nq, m), dtype=np.float64)
        info = np.zeros(4, dtype=np.int64)
        # one group without gm_ columns: the kernel adds its values into the sums itself
        direct = not self._gm and len(self._groups) == 1
        done = 0
        for js, level, args in self._groups:
            # every group skips (or refuses) the same queries: those without a candidate
            # graded self._level or above, whatever level the group's measures use
            group_out = out if len(self._groups) == 1 else np.empty((nq, len(js)))
            err = _kernels.stream_ranking_dense(
                s, s32, g, mk, nr, self._level, level, self._max_docs or 0,
                _EMPTY_MODES[self._empty], *args, group_out,
                self._limbs if direct else _NO_ACC, self._special if direct else _NO_SPECIAL,
                info)
            if err:
                self._raise(err, info, where)
            done = int(info[0])
            if group_out is not out:
                out[:done, js] = group_out[:done]
        if not direct and done:
            values = out[:done]
            for j in self._gm:
                values[:, j] = np.log(np.maximum(values[:, j], MIN_GEO_MEAN))
            _kernels.exact_accumulate(values, self._limbs, self._special)
        if not empty:
            self._mode = "batch"
        self._count += done

    def _check_grade_scale(self, g: np.ndarray, keep, where) -> None:
        if self._grade_scale is None:
            return
        top, name = self._grade_scale
        bad = g > top
        if keep is not None:
            bad &= keep
        if bad.any():
            at = tuple(int(i) for i in np.unravel_index(int(np.flatnonzero(bad)[0]), g.shape))
            raise InputError(f"relevance: {where(at)}: grade {int(g[at])} is above {top}, the "
                             f"highest grade {name} takes")

    def _raise(self, err, info, where):
        i, j, detail = int(info[1]), int(info[2]), int(info[3])
        if err == 1:
            raise InputError(f"scores: {where((i, j))}: score is NaN")
        if err == 2:
            raise InputError(f"relevance: {where((i, j))}: grade {detail} is negative; "
                             "grades are 0 (not relevant) or more; mark padding with mask")
        if err == 3:
            raise InputError(f"relevance: {where((i, j))}: grade {detail} is above "
                             f"{MAX_GRADE}, the largest grade qafast supports")
        if err == 4:
            raise InputError(f"num_relevant: {where((i,))}: {detail} candidates are "
                             "relevant, more than num_relevant says")
        if err == 5:
            raise InputError(f"{where((i,))} has no relevant document (empty_queries="
                             "'error'); use empty_queries='skip' or 'zero' to allow it")
        raise RuntimeError(f"stream kernel error {err}")

    def _update_rows(self, s, relevance, query_ids, doc_ids, mask) -> None:
        n = len(s)
        if n:  # no rows: checked as any rows, and then changes nothing
            self._set_mode("rows")
        r = as_array(relevance, "relevance")
        if r.shape != s.shape:
            raise InputError(f"relevance has shape {r.shape}, scores {s.shape}; they must "
                             "match")
        q = _ids_array(query_ids, "query_ids", n)
        has_docs = doc_ids is not None
        if n and self._doc_ids is not None and self._doc_ids != has_docs:
            raise InputError("give doc_ids in every update or in none: ties and repeated rows "
                             "are settled by document id when there are ids")
        d = _ids_array(doc_ids, "doc_ids", n) if has_docs else None
        s = np.array(_float_scores(s, "scores"), dtype=np.float64)  # a copy, kept
        keep = None
        if mask is not None:
            mk = as_array(mask, "mask")
            if mk.shape != s.shape:
                raise InputError(f"mask has shape {mk.shape}, scores {s.shape}; they must "
                                 "match")
            keep = np.asarray(mk, dtype=bool)

        def where(i):
            i = i[0]
            doc = f", document {int(d[i])}" if d is not None else ""
            return f"query {int(q[i])}{doc} (row {i})"

        g = _int_grades(r, keep, "relevance", where)
        self._check_grade_scale(g, keep, where)
        bad = np.isnan(s)
        if keep is not None:
            bad &= keep
        if bad.any():
            raise InputError(f"scores: {where((int(np.flatnonzero(bad)[0]),))}: score is NaN")
        bad = (g < 0) | (g > MAX_GRADE)
        if keep is not None:
            bad &= keep
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InputError(f"relevance: {where((i,))}: grade {int(g[i])} is outside 0.."
                             f"{MAX_GRADE}")
        if not n:
            return
        if keep is not None:
            s, g, q = s[keep], g[keep], q[keep]
            d = d[keep] if d is not None else None
        if d is None:
            # tie keys: earlier rows are larger, so they rank first on equal scores
            d = -np.arange(self._seq, self._seq + len(s), dtype=np.int64)
            self._seq += len(s)
        self._rows.append((q, d, s, np.array(g, dtype=np.int32)))
        self._doc_ids = has_docs
        self._mode = "rows"

    # ------------------------------------------------------------------ compute
    def _row_arrays(self):
        if not self._rows:
            return _EMPTY_I64, _EMPTY_I64, np.zeros(0), np.zeros(0, dtype=np.int32)
        if len(self._rows) > 1:
            self._rows = [tuple(np.concatenate(parts) for parts in zip(*self._rows))]
        return self._rows[0]

    def _rows_values(self) -> np.ndarray:
        """Per-query values of the buffered rows (measured queries only)."""
        q, d, s, g = self._row_arrays()
        order = np.lexsort((d, q))
        q, d, s, g = q[order], d[order], s[order], g[order]
        if len(q) > 1:
            same = (q[1:] == q[:-1]) & (d[1:] == d[:-1])
            if same.any():
                clash = same & ((s[1:] != s[:-1]) | (g[1:] != g[:-1]))
                if clash.any():
                    i = int(np.flatnonzero(clash)[0])
                    raise InputError(
                        f"query {int(q[i])}, document {int(d[i])} arrived twice with different "
                        f"scores or grades ({s[i]!r}, {int(g[i])} and {s[i + 1]!r}, "
                        f"{int(g[i + 1])}); only exact repeats are dropped")
                keep = np.ones(len(q), dtype=bool)
                keep[1:] = ~same
                q, d, s, g = q[keep], d[keep], s[keep], g[keep]
        starts = np.flatnonzero(q[1:] != q[:-1]) + 1 if len(q) else _EMPTY_I64
        offsets = np.concatenate(([0], starts, [len(q)])).astype(np.int64) if len(q) \
            else np.zeros(1, dtype=np.int64)
        if self._empty == "error" and len(q):
            rel = np.add.reduceat((g >= self._level).astype(np.int64), offsets[:-1])
            if not rel.all():
                qid = int(q[offsets[int(np.argmin(rel))]])
                raise InputError(f"query {qid} has no relevant document (empty_queries="
                                 "'error'); use empty_queries='skip' or 'zero' to allow it")
        nq = len(offsets) - 1
        out = np.empty((nq, len(self._columns)), dtype=np.float64)
        measured = np.empty(nq, dtype=np.int64)
        s, d, g = np.ascontiguousarray(s), np.ascontiguousarray(d), np.ascontiguousarray(g)
        done = 0
        for js, level, args in self._groups:
            group_out = out if len(self._groups) == 1 else np.empty((nq, len(js)))
            # the queries measured depend on self._level only: the same in every group
            done = _kernels.stream_ranking_csr(
                offsets, s, d, g, self._level, level, self._max_docs or 0,
                _EMPTY_MODES[self._empty], *args, group_out, measured)
            if group_out is not out:
                out[:done, js] = group_out[:done]
        values = out[:done]
        for j in self._gm:
            values[:, j] = np.log(np.maximum(values[:, j], MIN_GEO_MEAN))
        return values

    def compute(self) -> dict[str, float]:
        """``{measure: value}`` over every query so far: what :func:`qafast.evaluate` gives
        (the mean; the sum for ``num_*`` counts; the geometric mean for ``gm_*``).

        Raises
        ------
        ValueError
            No query measured yet, or (rows) a document repeated with different scores.
        """
        if self._mode == "rows":
            values = self._rows_values()
            count = len(values)
            limbs, special = _exactsum.new(len(self._columns))
            if count:
                _kernels.exact_accumulate(values, limbs, special)
        else:
            count, limbs, special = self._count, self._limbs, self._special
        if count == 0:
            raise InputError("no query measured yet: update() has not seen a query with "
                             "candidates" + (" and a relevant document (empty_queries='skip')"
                                             if self._empty == "skip" else ""))
        totals = _exactsum.rounded(limbs, special)
        return {c.name: column_summary(c, t, count) for c, t in zip(self._columns, totals)}

    # ------------------------------------------------------------------ merge, state
    def _check_compatible(self, others: Sequence[RankingMetrics]) -> None:
        for o in others:
            if not isinstance(o, RankingMetrics):
                raise InputTypeError(f"cannot merge a {type(o).__name__} into a RankingMetrics")
            if o._config != self._config:
                raise InputError(f"cannot merge RankingMetrics with different measures or "
                                 f"options: {_describe(self._config)} and "
                                 f"{_describe(o._config)}")
        # every metric merged, this one included, must hold the same input shape
        metrics = (self, *others)
        if len({m._mode for m in metrics} - {None}) > 1:
            raise InputError("cannot merge a RankingMetrics of whole-query batches with one of "
                             "rows")
        if len({m._doc_ids for m in metrics} - {None}) > 1:
            raise InputError("cannot merge rows with document ids and rows without")

    def merge(self, *others: RankingMetrics) -> RankingMetrics:
        """Add the state of ``others`` into this one (they are unchanged); returns self.

        Each state merged is checked as :meth:`load_state_dict` checks a state.
        """
        self._check_compatible(others)
        # checked copies first: a metric may be merged into itself, or twice
        records = [self._checked(o._state_values()) for o in others]
        _check_merged_total("count", self._count + sum(r["count"] for r in records))
        _check_merged_total("rows_without_ids",
                            self._seq + sum(r["rows_without_ids"] for r in records))
        for record in records:
            self._add(record)
        return self

    def _add(self, record: StateRecord) -> None:
        mode = record["mode"]
        if mode == "batch":
            _exactsum.merge(self._limbs, self._special, record["sums"],
                            record["nonfinite_sums"])
            self._count += record["count"]
        elif mode == "rows":
            q, d, s, g = (record[k] for k in _ROW_FIELDS)
            has_ids = record["row_has_doc_ids"]
            if len(q):
                if has_ids == 0:
                    d = d - self._seq  # tie keys after this accumulator's rows
                self._rows.append((q, d, s, g))
            self._seq += record["rows_without_ids"]
            if has_ids != -1:
                self._doc_ids = bool(has_ids)
        if mode:
            self._mode = mode

    def _state_config(self) -> dict[str, Any]:
        names, level, empty, max_docs, nonpositive = self._config
        return {"measures": names, "relevance_level": level, "empty_queries": empty,
                "max_docs": max_docs or 0, "torchmetrics_nonpositive": nonpositive}

    def _state_values(self) -> dict[str, Any]:
        """The state as :meth:`state_dict` gives it, sharing this metric's arrays."""
        q, d, s, g = self._row_arrays()
        return {"format": _RANKING_STATE.format, "version": _STATE_VERSION,
                **self._state_config(), "mode": self._mode or "", "count": self._count,
                "sums": self._limbs, "nonfinite_sums": self._special,
                "row_query_ids": q, "row_doc_ids": d, "row_scores": s, "row_grades": g,
                "row_has_doc_ids": -1 if self._doc_ids is None else int(self._doc_ids),
                "rows_without_ids": self._seq}

    def _checked(self, state) -> StateRecord:
        top, name = self._grade_scale or (MAX_GRADE, "qafast")
        grades = (MAX_GRADE if top is None else top, f"the highest grade {name} takes")
        return _RANKING_STATE.validate(state, config=self._state_config(),
                                       columns=self._allowed, bounds={"grade_scale": grades})

    def state_dict(self, *, tensors: bool = False) -> dict[str, Any]:
        """The state as plain data: strs, ints, and lists (of lists) of ints and floats.

        A checkpoint holding it loads with ``torch.load(path, weights_only=True)``, torch's
        default since 2.6, which refuses numpy arrays; pickle and ``json`` write it too.

        Parameters
        ----------
        tensors : bool, default False
            Give the arrays as torch CPU tensors instead of lists (torch is imported then):
            smaller and faster to save for a state with many rows. :meth:`load_state_dict`
            takes either, and the numpy arrays of earlier qafast versions.

        Examples
        --------
        >>> import io, torch, qafast
        >>> m = qafast.RankingMetrics(["mrr@10"])
        >>> m.update([[0.9, 0.5]], [[0, 1]])
        >>> buffer = io.BytesIO()
        >>> torch.save({"model": {}, "metric": m.state_dict()}, buffer)
        >>> _ = buffer.seek(0)
        >>> again = qafast.RankingMetrics(["mrr@10"])
        >>> again.load_state_dict(torch.load(buffer, weights_only=True)["metric"])
        >>> again.compute()
        {'mrr@10': 0.5}
        """
        return state_dict(_RANKING_STATE, self._state_values(),
                          arrays="tensors" if tensors else "lists")

    def _state_arrays(self) -> dict[str, Any]:
        """The state with numpy arrays (copies): what a pickled metric and the torch
        integrations carry."""
        return state_dict(_RANKING_STATE, self._state_values(), arrays="numpy")

    def load_state_dict(self, state: dict) -> None:
        """Replace the state by one from :meth:`state_dict` of a metric with the same
        measures and options.

        Arrays may be lists, torch tensors (``state_dict(tensors=True)``) or numpy arrays
        (as earlier qafast versions saved them).
        Every field is checked (type, dtype, shape, range, and consistency with the others,
        sums within what their count allows): a state this accepts is one that updates and
        merges can make.

        Raises
        ------
        TypeError, ValueError
            A state of another kind, for other measures or options, or inconsistent
            (:class:`~qafast.errors.InputTypeError`, :class:`~qafast.errors.InputError`;
            ``field`` names the field at fault). The metric is unchanged.
        """
        record = self._checked(state)
        self._mode = record["mode"] or None
        self._count = record["count"]
        self._limbs = record["sums"].copy()  # the record's arrays are read-only
        self._special = record["nonfinite_sums"].copy()
        rows = tuple(record[k] for k in _ROW_FIELDS)
        self._rows = [rows] if len(rows[0]) else []
        has_ids = record["row_has_doc_ids"]
        self._doc_ids = None if has_ids == -1 else bool(has_ids)
        self._seq = record["rows_without_ids"]

    def __getstate__(self):
        return {"config": self._config, "state": self._state_arrays()}

    def __setstate__(self, data):
        # the state holds the options too ("config" repeats them): read them, checked, to
        # build the metric, then the state as load_state_dict reads it
        state = data.get("state") if isinstance(data, dict) else None
        config = _RANKING_STATE.read_config(state)
        self.__init__(list(config["measures"]), relevance_level=config["relevance_level"],
                      empty_queries=config["empty_queries"],
                      max_docs=config["max_docs"] or None,
                      torchmetrics_nonpositive=config["torchmetrics_nonpositive"])
        self.load_state_dict(state)


def _describe(config) -> str:
    names, level, empty, max_docs, nonpositive = config
    return (f"measures {list(names)} (relevance_level={level}, empty_queries={empty!r}, "
            f"max_docs={max_docs}, torchmetrics_nonpositive={nonpositive})")


class AnswerMetrics:
    """SQuAD-style exact match and F1 accumulated over batches.

    ``update(predictions, golds)`` scores a batch (one predicted string per question; per
    question a gold string or a list of alternatives, the best one counting) and keeps only
    the sums; ``compute()`` gives ``{"exact_match": ..., "f1": ...}`` in [0, 1]: the means
    :func:`qafast.exact_match` and :func:`qafast.f1` give over all the questions, the sum
    rounded once (exactly rounded, whatever the batches and merges).

    Parameters
    ----------
    normalizer : str or callable, default "squad"
        As for :func:`qafast.f1` (``"squad"``, ``"mlqa:<lang>"``, ``"cmrc"``, ``"drcd"``,
        ``"bioasq"``, ``"none"``, or a function).
    unit : {"token", "char", "cmrc"}, default "token"
        F1's unit, as for :func:`qafast.f1`.
    empty_rule : {"v2", "v1"}, default "v2"
        SQuAD v2.0's or v1.1's treatment of empty answers, as for :func:`qafast.f1`.

    Examples
    --------
    >>> import qafast
    >>> m = qafast.AnswerMetrics()
    >>> m.update(["Paris", "the tower"], [["paris", "Paris, France"], ["Eiffel Tower"]])
    >>> m.update(["1889"], ["1889"])
    >>> m.compute()
    {'exact_match': 0.6666666666666666, 'f1': 0.8888888888888888}
    """

    #: the fields and rules of this metric's state (read by the torch integrations)
    _state_spec = _ANSWER_STATE

    def __init__(self, *, normalizer: str | Callable[[str], str] = "squad", unit: str = "token",
                 empty_rule: str = "v2"):
        from .answers import check_answer_options

        check_answer_options(normalizer, unit, empty_rule)
        self._normalizer, self._unit, self._empty_rule = normalizer, unit, empty_rule
        norm_name = normalizer if isinstance(normalizer, str) else (
            f"{getattr(normalizer, '__module__', '?')}.{getattr(normalizer, '__qualname__', '?')}")
        self._config = (norm_name, unit, empty_rule)
        self.reset()

    def reset(self) -> None:
        """Forget every update."""
        self._limbs, self._special = _exactsum.new(2)
        self._count = 0

    def __repr__(self) -> str:
        return f"AnswerMetrics(normalizer={self._config[0]!r}, {self._count} questions)"

    def update(self, predictions: Sequence[str], golds: Sequence[str | Sequence[str]]) -> None:
        """Score a batch of questions and add the scores (the state is unchanged if it
        raises)."""
        from .answers import exact_match_and_f1

        em, f1 = exact_match_and_f1(predictions, golds, normalizer=self._normalizer,
                                    unit=self._unit, empty_rule=self._empty_rule)
        if len(em):
            _kernels.exact_accumulate(np.stack([em, f1], axis=1), self._limbs, self._special)
            self._count += len(em)

    def compute(self) -> dict[str, float]:
        """``{"exact_match": ..., "f1": ...}``, means over every question so far."""
        if self._count == 0:
            raise InputError("no question scored yet")
        em, f1 = _exactsum.rounded(self._limbs, self._special)
        return {"exact_match": em / self._count, "f1": f1 / self._count}

    def merge(self, *others: AnswerMetrics) -> AnswerMetrics:
        """Add the state of ``others`` into this one (they are unchanged); returns self.

        Each state merged is checked as :meth:`load_state_dict` checks a state.
        """
        self._check_compatible(others)
        # checked copies first: a metric may be merged into itself
        records = [self._checked(o._state_values()) for o in others]
        _check_merged_total("count", self._count + sum(r["count"] for r in records))
        for record in records:
            _exactsum.merge(self._limbs, self._special, record["sums"],
                            record["nonfinite_sums"])
            self._count += record["count"]
        return self

    def _check_compatible(self, others: Sequence[AnswerMetrics]) -> None:
        for o in others:
            if not isinstance(o, AnswerMetrics):
                raise InputTypeError(f"cannot merge a {type(o).__name__} into an AnswerMetrics")
            if o._config != self._config:
                raise InputError(f"cannot merge AnswerMetrics with different options: "
                                 f"{self._config} and {o._config} (normalizer, unit, "
                                 "empty_rule)")

    def _state_config(self) -> dict[str, Any]:
        return dict(zip(_ANSWER_STATE.config, self._config))

    def _state_values(self) -> dict[str, Any]:
        """The state as :meth:`state_dict` gives it, sharing this metric's arrays."""
        return {"format": _ANSWER_STATE.format, "version": _STATE_VERSION,
                **self._state_config(), "count": self._count, "sums": self._limbs,
                "nonfinite_sums": self._special}

    def _checked(self, state) -> StateRecord:
        return _ANSWER_STATE.validate(state, config=self._state_config(),
                                      columns=_ANSWER_VALUES)

    def state_dict(self, *, tensors: bool = False) -> dict[str, Any]:
        """The state as plain strs, ints and lists, or with ``tensors`` the lists as torch
        tensors, as for :meth:`RankingMetrics.state_dict`: a checkpoint holding it loads
        with ``torch.load(path, weights_only=True)``."""
        return state_dict(_ANSWER_STATE, self._state_values(),
                          arrays="tensors" if tensors else "lists")

    def _state_arrays(self) -> dict[str, Any]:
        """The state with numpy arrays (copies), as for :meth:`RankingMetrics._state_arrays`."""
        return state_dict(_ANSWER_STATE, self._state_values(), arrays="numpy")

    def load_state_dict(self, state: dict) -> None:
        """Replace the state by one from :meth:`state_dict` with the same options, checked
        as :meth:`RankingMetrics.load_state_dict` checks one (arrays as lists, torch
        tensors or numpy arrays)."""
        record = self._checked(state)
        self._count = record["count"]
        self._limbs = record["sums"].copy()  # the record's arrays are read-only
        self._special = record["nonfinite_sums"].copy()

    def __getstate__(self):
        if not isinstance(self._normalizer, str):
            raise InputTypeError("an AnswerMetrics with a normalizer function cannot be pickled; "
                                 "use state_dict()")
        return {"options": (self._normalizer, self._unit, self._empty_rule),
                "state": self._state_arrays()}

    def __setstate__(self, data):
        # the state holds the options too ("options" repeats them)
        state = data.get("state") if isinstance(data, dict) else None
        config = _ANSWER_STATE.read_config(state)
        self.__init__(normalizer=config["normalizer"], unit=config["unit"],
                      empty_rule=config["empty_rule"])
        self.load_state_dict(state)
