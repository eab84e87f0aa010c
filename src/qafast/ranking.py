"""Ranking measures exactly as trec_eval computes them.

:class:`Qrels` and :class:`Run` hold relevance judgments and a system's scored documents in
encoded form (CSR arrays of integer document keys), so one ``Qrels`` serves many runs.
:func:`evaluate` computes any of trec_eval 10.0's measures over them.

Ties follow trec_eval: documents are ranked by score descending, then by document id
descending in string (UTF-8 byte, ``strcmp``) order; integer document ids break ties in
numeric order, larger first. The order rows arrive in never matters.
"""

from __future__ import annotations

import math
import os
import warnings
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Iterable, Literal, Mapping, overload

import numpy as np

from . import _exactsum, _kernels
from ._measure_parser import Column, column_groups, kernel_arrays, parse_measures
from ._measures import BY_NAME, DENSE, FAMILIES, NO_CUTOFF, TEXT_MEASURES
from .errors import InputError, InputTypeError

__all__ = ["MEASURE_FAMILIES", "Qrels", "Run", "evaluate", "evaluate_runs"]

#: Measure families :func:`evaluate` accepts by their trec_eval-style names (trec_eval
#: 10.0's, plus qafast's own).
MEASURE_FAMILIES = frozenset(FAMILIES) - TEXT_MEASURES

_EMPTY_I64 = np.zeros(0, dtype=np.int64)
_EMPTY_U8 = np.zeros(0, dtype=np.uint8)
_MAX_GRADE = 1_000_000
_ID_BIAS = 2**63          # integer ids of 2**63 and above are stored as id - _ID_BIAS
_INT64_MAX = 2**63 - 1
_MIN_GEO_MEAN = 0.00001  # trec_eval.h


class _Ranked:
    """Shared encoded form of a Qrels or a Run: per-query CSR arrays of entries.

    Entry i carries ``hashes[i]``: a 64-bit hash of its document id's UTF-8 bytes, or the
    id itself for integer ids (``id_bias``: the id minus 2**63, for unsigned ids of 2**63 and
    above; the order of the ids is kept). String ids also keep their bytes: entry i's are
    ``blob[key_off[k]:key_off[k + 1]]`` with ``k = keys[i]`` (``keys is None``: k = i).
    """

    __slots__ = ("query_ids", "offsets", "values", "hashes", "tiekeys", "keys", "key_off",
                 "blob", "source", "_lines", "_qindex", "_qarray", "id_bias", "_max")

    def _set(self, query_ids, offsets, values, hashes, keys, key_off, blob, source,
             lines=None):
        self.query_ids = query_ids    # the caller's query ids, in CSR order
        self.offsets = offsets        # int64, len(query_ids) + 1
        self.values = values          # float64 scores or int32 grades, per entry
        self.hashes = hashes          # int64 per entry
        self.tiekeys = None           # int64 per entry (runs with string ids): first 8 bytes
        self.keys = keys              # int64 per entry, or None
        self.key_off = key_off        # int64 per key + 1 (string ids) or None
        self.blob = blob              # uint8 (string ids) or None
        self.source = source          # where the data came from, for messages
        self._lines = lines           # file line of each entry, or None
        self._qindex = None
        self._qarray = None
        self._max = None
        self.id_bias = False          # integer ids stored as id - 2**63 (see the class)

    def __len__(self) -> int:
        return len(self.query_ids)

    @property
    def num_entries(self) -> int:
        return int(self.offsets[-1])

    @property
    def string_ids(self) -> bool:
        return self.key_off is not None

    def query_array(self) -> np.ndarray:
        """Integer query ids as an int64 array, or as an object array of Python ints when
        one is outside the int64 range, so that no id wraps around (cached)."""
        if self._qarray is None:
            try:
                self._qarray = np.array(self.query_ids, dtype=np.int64)
            except OverflowError:
                self._qarray = np.array(self.query_ids, dtype=object)
        return self._qarray

    def max_value(self) -> int:
        """The largest grade, 0 if none (cached: a run measured a batch at a time asks for
        it at every batch)."""
        if self._max is None:
            self._freeze()
            self._max = int(self.values.max()) if len(self.values) else 0
        return self._max

    def _freeze(self) -> None:
        """Make the arrays read-only views, once evaluated: the kernels size their tables by
        what was measured of them (the largest grade, the offsets), so an edit in place
        afterwards would have them index past those tables."""
        for name in ("offsets", "values", "hashes", "tiekeys", "keys", "key_off", "blob"):
            a = getattr(self, name)
            if isinstance(a, np.ndarray) and a.flags.writeable:
                a = a.view()
                a.flags.writeable = False
                setattr(self, name, a)

    def query_index(self) -> dict:
        if self._qindex is None:
            self._qindex = {q: i for i, q in enumerate(self.query_ids)}
        return self._qindex

    def doc_id(self, entry: int):
        """The caller's document id of an entry."""
        if self.key_off is None:
            return int(self.hashes[entry]) + (_ID_BIAS if self.id_bias else 0)
        key = int(self.keys[entry]) if self.keys is not None else int(entry)
        return bytes(self.blob[self.key_off[key]:self.key_off[key + 1]]).decode("utf-8")

    def where(self, entry: int) -> str:
        if self._lines is not None:
            return f"{self.source}, line {int(self._lines[entry])}"
        return self.source

    def kernel_args(self):
        """The document tables as the kernels take them (empty arrays for absent ones)."""
        return (self.hashes,
                _EMPTY_I64 if self.keys is None or self.key_off is None else self.keys,
                _EMPTY_I64 if self.key_off is None else self.key_off,
                _EMPTY_U8 if self.blob is None else self.blob)

    def to_dict(self) -> dict:
        """The data as ``{query_id: {doc_id: value}}``."""
        vals = self.values.tolist()
        out = {}
        for i, q in enumerate(self.query_ids):
            lo, hi = int(self.offsets[i]), int(self.offsets[i + 1])
            out[q] = {self.doc_id(j): vals[j] for j in range(lo, hi)}
        return out

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({len(self.query_ids)} queries, "
                f"{self.num_entries} documents, from {self.source})")


def _check_query_ids(ids: list, source: str) -> None:
    kinds = {type(q) for q in ids}
    if kinds <= {str} or kinds <= {int}:
        return
    if bool in kinds or not kinds <= {str, int}:
        bad = next(q for q in ids if type(q) not in (str, int))
        raise InputTypeError(f"{source}: query id {bad!r} is a {type(bad).__name__}; "
                             "query ids must be str (or int)")
    raise InputTypeError(f"{source}: query ids mix str and int; use one type")


def _from_nested(cls, data, integer_values: bool, source: str):
    if not isinstance(data, Mapping):
        raise InputTypeError(f"{source}: expected a dict of dicts {{query_id: {{doc_id: value}}}}, "
                             f"got {type(data).__name__}")
    if type(data) is not dict:
        data = dict(data)  # the encoders take plain dicts (a defaultdict is copied once)
    # Sizes as the encoders will find them: the dicts' own (a subclass's __len__ need not
    # agree with what iterating it gives). The encoders check every write against these, so
    # a dict that changes while it is read is an error, never a write past the arrays.
    total = _kernels.encode_dict_total(data)
    if total < 0:
        bad = next(q for q, v in data.items() if not isinstance(v, dict))
        raise InputTypeError(f"{source}: query {bad!r} maps to a {type(data[bad]).__name__}, "
                             "not a dict of {doc_id: value}")
    offsets = np.empty(len(data) + 1, dtype=np.int64)
    values = np.empty(total, dtype=np.float64)
    hashes = np.empty(total, dtype=np.int64)
    tiekeys = _EMPTY_I64 if integer_values else np.empty(total, dtype=np.int64)
    byte_offsets = np.empty(total + 1, dtype=np.int64)
    query_ids: list = []
    blob = None
    if not integer_values:
        blob = _kernels.encode_run_dict(data, offsets, values, hashes, tiekeys, byte_offsets,
                                        query_ids)
    if blob is None:
        query_ids = []
        raw, bad = _kernels.encode_nested_dict(data, integer_values, offsets, values, hashes,
                                               tiekeys, byte_offsets, query_ids)
        if bad is not None:
            if bad[3] == "qid":
                _check_query_ids(query_ids, source)
            _raise_bad_entry(source, integer_values, *bad)
        blob = np.frombuffer(raw, dtype=np.uint8) if raw else _EMPTY_U8
    obj = cls.__new__(cls)
    obj._set(query_ids, offsets, values.astype(np.int32) if integer_values else values, hashes,
             None, byte_offsets, blob, source)
    if not integer_values:
        obj.tiekeys = tiekeys
    if integer_values:
        obj._sort_within_queries()  # dict keys are unique: no duplicate to look for
    return obj


def _raise_bad_entry(source, integer_values, qid, doc, value, why):
    what = "grade" if integer_values else "score"
    if why == "dict":
        raise InputTypeError(f"{source}: query {qid!r} maps to a {type(value).__name__}, "
                             "not a dict of {doc_id: value}")
    if why == "docid":
        raise InputTypeError(f"{source}: query {qid!r}: document id {doc!r} is a "
                             f"{type(doc).__name__}; document ids must be str")
    if why == "nan":
        raise InputError(f"{source}: query {qid!r}, document {doc!r}: score is NaN")
    if why == "range":
        raise InputError(f"{source}: query {qid!r}, document {doc!r}: grade {value!r} is "
                         "outside the 32-bit integer range")
    if why == "overflow":
        raise InputError(f"{source}: query {qid!r}, document {doc!r}: score {value!r:.40} is "
                         "too large for a float")
    if why == "changed":
        raise InputError(f"{source}: the dicts changed while they were read (at query "
                         f"{qid!r}): a {what} whose conversion to a number, or a mapping, "
                         "added or removed documents; pass dicts that stay as they are")
    raise InputTypeError(f"{source}: query {qid!r}, document {doc!r}: {what} {value!r} is a "
                         f"{type(value).__name__}, expected "
                         f"{'an int' if integer_values else 'a number'}")


def _column(values) -> np.ndarray:
    """A column as an array. Strings given as a Python list or tuple become an object array
    of the very strings: numpy's fixed-width str and bytes dtypes drop trailing NUL
    characters, so "d1\\x00" would have become "d1"."""
    if (isinstance(values, (list, tuple)) and len(values)
            and isinstance(values[0], (str, bytes))):
        col = np.empty(len(values), dtype=object)
        try:
            col[:] = values
        except (ValueError, TypeError):
            pass  # not a flat column: the checks below name it
        else:
            return col
    try:
        return np.asarray(values)
    except ValueError as e:  # nested lists of different lengths, in numpy's words
        raise InputError(f"an id or value column is not a rectangular array ({e})") from None


def _plain_id(q):
    """A query id as qafast keeps it: bytes decoded, a str subclass (numpy's str_) as the
    str it holds; anything else as is (and checked by _check_query_ids)."""
    if isinstance(q, bytes):
        return q.decode()
    if isinstance(q, str):
        return str.__str__(q)
    return q


def _above_int64(col: np.ndarray) -> bool:
    """Whether an integer column holds ids that int64 would wrap around (uint64 ids of
    2**63 and above)."""
    return (col.dtype.kind == "u" and col.dtype.itemsize == 8 and len(col) > 0
            and int(col.max()) > _INT64_MAX)


def _integer_ids(col: np.ndarray):
    """An integer id column as int64 without wrapping around: ``(ids, biased)``, where
    ``biased`` means the column has uint64 ids of 2**63 and above, and all its ids are
    stored as id - 2**63 (which keeps their order)."""
    if _above_int64(col):
        return (col ^ np.uint64(_ID_BIAS)).view(np.int64), True
    return col.astype(np.int64), False


def _from_columns(cls, query_ids, doc_ids, values, integer_values: bool, source: str):
    """Build from parallel per-entry columns (any row order)."""
    what = "grade" if integer_values else "score"
    qcol = _column(query_ids)
    dcol = _column(doc_ids)
    vcol = np.asarray(values)
    if dcol.ndim != 1 or qcol.ndim != 1 or vcol.ndim != 1:
        raise InputError(f"{source}: query ids, doc ids and {what}s must be 1-d, got shapes "
                         f"{qcol.shape}, {dcol.shape} and {vcol.shape}")
    n = len(qcol)
    if not (len(dcol) == n == len(vcol)):
        raise InputError(f"{source}: query ids, doc ids and {what}s differ in length "
                         f"({len(qcol)}, {len(dcol)}, {len(vcol)})")
    if n == 0:  # empty lists come as float64: no row, so no id or value to refuse
        qcol = qcol if qcol.dtype.kind in "iuOUS" else np.empty(0, dtype=object)
        dcol = dcol if dcol.dtype.kind in "iuOUS" else np.empty(0, dtype=object)
        vcol = vcol if vcol.dtype.kind in "iufb" else np.empty(0, dtype=np.float64)
    id_bias = False
    if dcol.dtype.kind in "iu":
        keys, id_bias = _integer_ids(dcol)
        vocab = None
    elif dcol.dtype.kind in "OUS":
        str_hashes = np.empty(n, dtype=np.int64)
        str_ties = _EMPTY_I64 if integer_values else np.empty(n, dtype=np.int64)
        str_off = np.empty(n + 1, dtype=np.int64)
        column = dcol.tolist() if dcol.dtype.kind != "O" else dcol
        blob, bad = _kernels.encode_str_column(column, str_hashes, str_ties, str_off)
        if bad is not None:
            raise InputTypeError(f"{source}: document id {bad[1]!r} is a {type(bad[1]).__name__}; "
                                 "document ids must be str, or all int in an integer array")
        keys = np.arange(n, dtype=np.int64)
        vocab = (str_hashes, str_ties, str_off,
                 np.frombuffer(blob, dtype=np.uint8) if blob else _EMPTY_U8)
    else:
        raise InputTypeError(f"{source}: document ids of dtype {dcol.dtype} are not supported; "
                             "use str or int ids")
    if integer_values:
        if vcol.dtype.kind == "f":
            vcol = vcol.astype(np.float64)  # float16's range ends below 2**31
            bad = ~np.isfinite(vcol) | (vcol != np.round(vcol))
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise InputError(f"{source}: query {qcol[i]!r}: grade {vcol[i]!r} is not an "
                                 "integer")
        elif vcol.dtype.kind not in "iub":
            raise InputTypeError(f"{source}: grades of dtype {vcol.dtype} are not integers")
        if n and (vcol.min() < -2**31 or vcol.max() >= 2**31):
            i = int(np.flatnonzero((vcol < -2**31) | (vcol >= 2**31))[0])
            raise InputError(f"{source}: grade {vcol[i]} is outside the 32-bit range")
        vcol = vcol.astype(np.int32)
    else:
        if vcol.dtype.kind not in "fiu":
            raise InputTypeError(f"{source}: scores of dtype {vcol.dtype} are not numbers")
        vcol = vcol.astype(np.float64)
        nan = np.isnan(vcol)
        if nan.any():
            i = int(np.flatnonzero(nan)[0])
            doc = dcol[i].item() if hasattr(dcol[i], "item") else dcol[i]
            raise InputError(f"{source}: query {qcol[i]!r}, document {doc!r}: score is NaN")
    if qcol.dtype.kind in "iu":
        # unsigned ids of 2**63 and above keep their uint64 form: the ids are Python ints
        qkeys = qcol if _above_int64(qcol) else qcol.astype(np.int64)
        uniq, first, qidx = np.unique(qkeys, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")
        rank = np.empty(len(uniq), dtype=np.int64)
        rank[order] = np.arange(len(uniq))
        qidx = rank[qidx]
        qlist = [int(x) for x in uniq[order]]
    else:
        qraw = [q if type(q) is str else _plain_id(q) for q in qcol.tolist()]
        qindex: dict = {}
        qidx = np.fromiter((qindex.setdefault(q, len(qindex)) for q in qraw), dtype=np.int64,
                           count=n)
        qlist = list(qindex)
        _check_query_ids(qlist, source)
    return _grouped(cls, qlist, qidx, keys, vcol, vocab, source, None, integer_values,
                    id_bias=id_bias)


def _check_range(index: np.ndarray, size: int, what: str, source: str) -> None:
    if len(index) and (index.min() < 0 or index.max() >= size):
        row = int(np.flatnonzero((index < 0) | (index >= size))[0])
        raise InputError(f"{source}: row {row}: {what} {int(index[row])} is outside 0..{size - 1}")


def _grouped(cls, qlist, qidx, keys, vcol, vocab, source, lines, integer_values, *,
             id_bias=False):
    """Group rows by query (first-seen query order, row order kept within a query), attach
    the document tables (``vocab``: per-row string tables, or None for integer ids) and check
    for documents named twice in one query."""
    nq = len(qlist)
    # the sources check what they were given; this is the last gate before the kernels,
    # which index with both, so a source that let a bad one through fails here, not there
    _check_range(qidx, nq, "query index", source)
    if vocab is not None:
        _check_range(keys, len(vocab[0]), "document key", source)
    counts = np.bincount(qidx, minlength=nq) if len(qidx) else np.zeros(nq, dtype=np.int64)
    offsets = np.zeros(nq + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    if len(qidx) and np.any(qidx[1:] < qidx[:-1]):
        order = np.argsort(qidx, kind="stable")
        keys = keys[order]
        vcol = vcol[order]
        if lines is not None:
            lines = np.asarray(lines)[order]
    keys = np.ascontiguousarray(keys, dtype=np.int64)
    if vocab is not None:
        # string ids: per-row hash, tie key and bytes (encode_str_column); keys index rows
        key_hash, key_tie, key_off, blob = vocab
        hashes = key_hash[keys]
    else:
        # integer ids: the id is its own hash, and no bytes are needed
        hashes, key_off, blob = keys, None, None
    obj = cls.__new__(cls)
    obj._set(qlist, offsets, np.ascontiguousarray(vcol), hashes, keys, key_off, blob, source,
             lines)
    obj.id_bias = id_bias
    if vocab is not None and not integer_values:
        obj.tiekeys = np.ascontiguousarray(key_tie[keys])
    i = _kernels.first_duplicate_hashed(offsets, *obj.kernel_args())
    if i >= 0:
        q = obj.query_ids[int(np.searchsorted(offsets, i, side="right")) - 1]
        verb = "judges" if integer_values else "retrieves"
        raise InputError(f"{obj.where(i)}: query {q!r} {verb} document {obj.doc_id(i)!r} twice")
    if integer_values:
        obj._sort_within_queries()
    return obj


def _read(cls, source, integer_values: bool, workers: int = 1):
    from .io import trec

    # what read_trec_qrels / read_trec_run do, without the qrels' tie keys (48 MB of fresh
    # memory for 6M lines), which are never used, nor a column of line numbers (another
    # 48 MB): messages look a line up where the numbering jumps
    cols = trec._read(source, is_run=not integer_values, workers=_workers(workers),
                      intern_docs=False, tie_keys=not integer_values, line_column=False)
    return _from_trec_columns(cls, cols, integer_values)


def _from_trec_columns(cls, cols, integer_values: bool):
    """A Qrels or Run from a TREC reader's columns (read with ``intern_docs=False``)."""
    qidx = np.ascontiguousarray(cols.query_index, dtype=np.int32)
    values = np.asarray(cols.values, dtype=np.int32 if integer_values else np.float64)
    hashes = np.asarray(cols.doc_hashes, dtype=np.int64)
    tiekeys = None if integer_values else np.asarray(cols.doc_tiekeys, dtype=np.int64)
    lines = cols.line_numbers
    offsets = np.empty(len(cols.query_ids) + 1, dtype=np.int64)
    grouped = _kernels.group_offsets(qidx, offsets)
    keys = None  # line i's bytes are doc_blob[doc_offsets[i]:doc_offsets[i + 1]]
    if not grouped:
        # a query's lines are not together in the file: group them, keeping their order
        keys = np.argsort(qidx, kind="stable")
        values, hashes, lines = values[keys], hashes[keys], np.asarray(lines)[keys]
        if tiekeys is not None:
            tiekeys = tiekeys[keys]
    obj = cls.__new__(cls)
    obj._set(cols.query_ids, offsets, values, hashes, keys,
             np.asarray(cols.doc_offsets, dtype=np.int64),
             np.asarray(cols.doc_blob, dtype=np.uint8), cols.path, lines)
    if integer_values:
        # judgments stay in file order: ranking takes them in any order, and sorting them
        # by hash (for a neighbour-comparing duplicate check) cost a row order array, 48 MB
        # of fresh memory for 6M lines, besides the sort
        obj._check_grades()
    else:
        obj.tiekeys = tiekeys
        obj.run_id = cols.run_id
    i = _kernels.first_duplicate_hashed(obj.offsets, *obj.kernel_args())
    _raise_duplicate(obj, i, integer_values)
    return obj


def _raise_duplicate(obj, i: int, integer_values: bool) -> None:
    if i >= 0:
        q = obj.query_ids[int(np.searchsorted(obj.offsets, i, side="right")) - 1]
        verb = "judges" if integer_values else "retrieves"
        raise InputError(f"{obj.where(i)}: query {q!r} {verb} document {obj.doc_id(i)!r} twice")


class Qrels(_Ranked):
    """Relevance judgments: for each query, documents and their integer grades.

    A negative grade marks a document in the pool but not judged (trec_eval's
    ``RELVALUE_UNJUDGED``, used by infAP and bpref). Build one with :meth:`from_dict`,
    :meth:`from_file`, :meth:`from_df` or :meth:`from_arrays`, or pass a dict straight to
    :func:`evaluate`.

    Examples
    --------
    >>> import qafast
    >>> qrels = qafast.Qrels({"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}})
    >>> qrels
    Qrels(2 queries, 3 documents, from qrels dict)
    """

    __slots__ = ()

    def __init__(self, data: Mapping[Any, Mapping[str, int]]):
        other = (_from_arrow(Qrels, data) if _arrow_source(data)
                 else _from_nested(Qrels, data, True, "qrels dict"))
        self._set(other.query_ids, other.offsets, other.values, other.hashes, other.keys,
                  other.key_off, other.blob, other.source)
        self.id_bias = other.id_bias

    @classmethod
    def from_dict(cls, data: Mapping[Any, Mapping[str, int]]) -> "Qrels":
        """From ``{query_id: {doc_id: grade}}`` (the pytrec_eval and ranx form)."""
        return _from_nested(cls, data, True, "qrels dict")

    @classmethod
    def from_file(cls, source, *, workers: int = 1) -> "Qrels":
        """From a TREC qrels file (``qid iter docno rel``): a path, a ``.gz`` path, ``-`` for
        stdin, bytes or a binary file object. ``workers=2`` reads while it parses."""
        return _read(cls, source, True, workers)

    @classmethod
    def from_arrays(cls, query_ids, doc_ids, grades) -> "Qrels":
        """From three equal-length arrays, one row per judgment, in any order. Ids are str
        (kept exactly, trailing NUL characters included) or integers (int64 or uint64)."""
        return _from_columns(cls, query_ids, doc_ids, grades, True, "qrels arrays")

    @classmethod
    def from_df(cls, df, *, query_col: str = "query_id", doc_col: str = "doc_id",
                relevance_col: str = "relevance") -> "Qrels":
        """From a pandas DataFrame with query, document and relevance columns (or an Arrow
        table: see :meth:`from_arrow`)."""
        if _arrow_source(df):
            return _from_arrow(cls, df, query_col=query_col, doc_col=doc_col,
                               value_col=relevance_col)
        q, d, v = _df_columns(df, (query_col, doc_col, relevance_col), "qrels DataFrame")
        return _from_columns(cls, q, d, v, True, "qrels DataFrame")

    @classmethod
    def from_arrow(cls, source, *, query_col: str = "query_id", doc_col: str = "doc_id",
                   relevance_col: str = "relevance") -> "Qrels":
        """From a ``pyarrow.Table``, ``RecordBatchReader`` or dataset, a Parquet file or a
        directory of Parquet files (``pip install "qafast[arrow]"``): string or integer
        ids, dictionary-encoded ones used through their indices, integer grades."""
        return _from_arrow(cls, source, query_col=query_col, doc_col=doc_col,
                           value_col=relevance_col)

    def _sort_within_queries(self) -> None:
        """Order each query's judgments by document hash, as the dict, array and Arrow
        constructors do. Ranking takes them in any order (since the judged-hash table), so
        a file's judgments are left in file order: sorting them cost a row-order array."""
        n = self.num_entries
        order = np.empty(n, dtype=np.int64)
        _kernels.sort_groups(self.offsets, self.hashes, order)
        self.hashes = np.ascontiguousarray(self.hashes[order])
        self.values = np.ascontiguousarray(self.values[order])
        if self._lines is not None:
            self._lines = np.asarray(self._lines)[order]
        if self.key_off is not None:
            self.keys = order if self.keys is None else np.ascontiguousarray(self.keys[order])
        else:
            self.keys = self.hashes
        self._check_grades()

    def _check_grades(self) -> None:
        n = self.num_entries
        if n and int(self.values.max()) > _MAX_GRADE:
            i = int(np.argmax(self.values))
            raise InputError(f"{self.where(i)}: grade {int(self.values[i])} is above "
                             f"{_MAX_GRADE}, the largest grade qafast supports")


class Run(_Ranked):
    """A system's output: for each query, documents and their scores.

    Examples
    --------
    >>> import qafast
    >>> run = qafast.Run({"q1": {"d1": 0.9, "d2": 0.3}})
    >>> qafast.evaluate({"q1": {"d2": 1}}, run, ["P@1", "mrr@10"])
    {'P@1': 0.0, 'mrr@10': 0.5}
    """

    __slots__ = ("run_id",)

    def __init__(self, data: Mapping[Any, Mapping[str, float]]):
        other = (_from_arrow(Run, data) if _arrow_source(data)
                 else _from_nested(Run, data, False, "run dict"))
        self._set(other.query_ids, other.offsets, other.values, other.hashes, other.keys,
                  other.key_off, other.blob, other.source)
        self.tiekeys = other.tiekeys
        self.id_bias = other.id_bias
        self.run_id = None

    @classmethod
    def from_dict(cls, data: Mapping[Any, Mapping[str, float]]) -> "Run":
        """From ``{query_id: {doc_id: score}}``."""
        obj = _from_nested(cls, data, False, "run dict")
        obj.run_id = None
        return obj

    @classmethod
    def from_file(cls, source, *, workers: int = 1) -> "Run":
        """From a TREC run file (``qid iter docno rank score run_id``): a path, a ``.gz``
        path, ``-`` for stdin, bytes or a binary file object. ``workers=2`` reads while it
        parses."""
        return _read(cls, source, False, workers)

    @classmethod
    def from_arrays(cls, query_ids, doc_ids, scores) -> "Run":
        """From three equal-length arrays, one row per retrieved document, in any order. Ids
        are str (kept exactly, trailing NUL characters included) or integers (int64 or
        uint64)."""
        obj = _from_columns(cls, query_ids, doc_ids, scores, False, "run arrays")
        obj.run_id = None
        return obj

    @classmethod
    def from_df(cls, df, *, query_col: str = "query_id", doc_col: str = "doc_id",
                score_col: str = "score") -> "Run":
        """From a pandas DataFrame with query, document and score columns (or an Arrow table:
        see :meth:`from_arrow`)."""
        if _arrow_source(df):
            return _from_arrow(cls, df, query_col=query_col, doc_col=doc_col,
                               value_col=score_col)
        q, d, v = _df_columns(df, (query_col, doc_col, score_col), "run DataFrame")
        obj = _from_columns(cls, q, d, v, False, "run DataFrame")
        obj.run_id = None
        return obj

    @classmethod
    def from_arrow(cls, source, *, query_col: str = "query_id", doc_col: str = "doc_id",
                   score_col: str = "score") -> "Run":
        """From a ``pyarrow.Table``, ``RecordBatchReader`` or dataset, a Parquet file or a
        directory of Parquet files (``pip install "qafast[arrow]"``): string or integer
        ids, dictionary-encoded ones used through their indices, numeric scores.

        ``evaluate`` given such a run reads it a row group at a time when each query's
        rows are together (as a grouped TREC run is); otherwise it reads it whole."""
        return _from_arrow(cls, source, query_col=query_col, doc_col=doc_col,
                           value_col=score_col)


def _arrow_source(data) -> bool:
    """Whether ``data`` is a pyarrow object or a Parquet path (pyarrow is not imported)."""
    from .io.arrow import is_arrow, is_parquet

    return is_arrow(data) or is_parquet(data)


def _from_arrow(cls, source, **names):
    from ._arrow_input import from_arrow

    return from_arrow(cls, source, **names)


def _df_columns(df, names, source):
    columns = list(getattr(df, "columns", ()))
    missing = [c for c in names if c not in columns]
    if missing:
        # the labels only: a column object's repr would print its data
        shown = [c if isinstance(c, (str, int)) else f"<{type(c).__name__}>"
                 for c in columns[:20]] + (["..."] if len(columns) > 20 else [])
        raise InputError(f"{source}: no column {missing[0]!r} (columns: {shown}); name it "
                         "with the *_col options")
    out = []
    for c in names:
        col = df[c]
        if str(col.dtype) == "category":
            col = col.astype(col.cat.categories.dtype)
        out.append(col.to_numpy())
    return out


def _coerce(cls, other, data, workers: int, role: str):
    """``data`` as a ``cls`` (Qrels or Run): as is, or read from a path, DataFrame or dict."""
    if isinstance(data, cls):
        return data
    if isinstance(data, other):
        raise InputTypeError(f"{role}: got a {other.__name__}; pass the qrels first, then the run")
    if _arrow_source(data):
        return cls.from_arrow(data)
    if isinstance(data, (str, os.PathLike, bytes, bytearray, memoryview)) or hasattr(data,
                                                                                   "read"):
        # a path, the file's content, or a binary file object (read once)
        return cls.from_file(data, workers=workers)
    if hasattr(data, "columns") and hasattr(data, "to_numpy"):
        return cls.from_df(data)
    return cls.from_dict(data)


def _as_qrels(qrels, workers: int = 1) -> Qrels:
    return _coerce(Qrels, Run, qrels, workers, "qrels")


def _as_run(run, workers: int = 1) -> Run:
    return _coerce(Run, Qrels, run, workers, "run")


def _pairs(qrels: Qrels, run: Run, queries: str, keep_empty: bool = False,
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
    keep = present.tolist()
    n_run = len(run.query_ids)
    if run.query_ids == qrels.query_ids[qrels_start:qrels_start + n_run]:
        # the same queries in the same order, as when the run was made from the qrels'
        # topics: no dictionary (each lookup is a cache miss on a scattered id object)
        qpos = [qrels_start + i if k else -1 for i, k in enumerate(keep)]
    else:
        get = qrels.query_index().get
        qpos = [get(q, -1) if keep[i] else -1 for i, q in enumerate(run.query_ids)]
    rpos = [i for i, j in enumerate(qpos) if j >= 0]
    if not rpos and not allow_none:
        _no_common(qrels, run, queries)
    ids = [run.query_ids[i] for i in rpos]
    pair_run = rpos
    pair_qrels = [qpos[i] for i in rpos]
    if queries == "qrels":
        in_run = set(pair_qrels)
        missing = [j for j in range(len(qrels.query_ids)) if j not in in_run]
        ids += [qrels.query_ids[j] for j in missing]
        pair_run += [-1] * len(missing)
        pair_qrels += missing
    order = sorted(range(len(ids)), key=ids.__getitem__)
    return ([ids[k] for k in order], np.array(pair_run, dtype=np.int64)[order],
            np.array(pair_qrels, dtype=np.int64)[order])


def _pairs_int(qrels, run, queries, present, allow_none=False):
    """_pairs for integer query ids, in numpy."""
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
            return [], _EMPTY_I64, _EMPTY_I64
        _no_common(qrels, run, queries)
    if queries == "run":
        return common.tolist(), rkeep[ri].astype(np.int64), qi.astype(np.int64)
    order = np.argsort(qq, kind="stable")
    pair_run = np.full(len(qq), -1, dtype=np.int64)
    pair_run[qi] = rkeep[ri]
    return qq[order].tolist(), pair_run[order], order.astype(np.int64)


def _comparable_int_ids(qrels: Qrels, run: Run):
    """(qrels, run) with integer document ids stored the same way: when only one of them
    holds ids of 2**63 and above (stored as id - 2**63), the other's ids are shifted too, in
    a copy. Order is kept, so the qrels stay sorted."""
    if qrels.id_bias == run.id_bias or qrels.key_off is not None or run.key_off is not None:
        return qrels, run
    plain = run if qrels.id_bias else qrels
    if plain.num_entries and int(plain.hashes.min()) < 0:
        i = int(np.argmin(plain.hashes))
        raise InputError(f"{plain.where(i)}: document id {plain.doc_id(i)} is negative while "
                         f"the {'qrels' if plain is run else 'run'} has ids of 2**63 and "
                         "above; integer document ids must fit in int64 or in uint64")
    shifted = type(plain).__new__(type(plain))
    hashes = plain.hashes ^ np.int64(-_ID_BIAS)
    # integer ids are their own keys (no key table)
    shifted._set(plain.query_ids, plain.offsets, plain.values, hashes,
                 None if plain.keys is None else hashes, None, None, plain.source,
                 plain._lines)
    shifted.tiekeys = plain.tiekeys
    shifted.id_bias = True
    if isinstance(shifted, Run):
        shifted.run_id = getattr(plain, "run_id", None)
    return (qrels, shifted) if plain is run else (shifted, run)


def _no_common(qrels, run, queries: str = "run"):
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


def _workers(workers: int) -> int:
    if not isinstance(workers, int) or isinstance(workers, bool):
        raise InputTypeError(f"workers must be an int, not {type(workers).__name__}")
    if workers == -1:
        return _cores()
    if workers < 1:
        raise InputError(f"workers must be a positive int or -1 (all cores), not {workers}")
    return workers


def _cores() -> int:
    """The cores this process may run on (its affinity, not the machine's count)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


_POOLS: dict[int, ThreadPoolExecutor] = {}


def _pool(size: int) -> ThreadPoolExecutor:
    """A thread pool of ``size`` threads, kept for the next call (threads idle in between)."""
    pool = _POOLS.get(size)
    if pool is None:
        pool = _POOLS[size] = ThreadPoolExecutor(size, thread_name_prefix="qafast")
    return pool


def _chunks(n: int, parts: int):
    parts = max(1, min(parts, n))
    step = -(-n // parts)
    return [(lo, min(n, lo + step)) for lo in range(0, n, step)]


class _Evaluation:
    """The ranked judged documents of every evaluated query, and measure columns over them."""

    def __init__(self, qrels: Qrels, run: Run, *, relevance_level: int, judged_only: bool,
                 max_docs, queries: str, workers: int, float32_scores: bool = False,
                 v9: bool = False, keep_empty: bool = False, qrels_start: int = 0,
                 allow_none: bool = False, pairs=None):
        # ``pairs``: (ids, run positions, qrels positions) of the queries to evaluate, when
        # the caller knows them (a streamed chunk following the qrels' order), in any order
        qrels, run = _comparable_int_ids(qrels, run)
        qrels._freeze()
        run._freeze()
        self.qrels, self.run = qrels, run
        # grades are int32: every level above their range selects the same (no) documents,
        # and a cutoff past every ranking is no cutoff; clip what the kernels' C long holds
        self.relevance_level = min(int(relevance_level), _LEVEL_CEILING)
        self.v9 = v9
        self.workers = _workers(workers)
        self.ids, pair_run, pair_qrels = pairs if pairs is not None else _pairs(
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
        run_tiekeys = run.tiekeys if run.tiekeys is not None else _EMPTY_I64
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
        chunks = _chunks(n, self.workers)
        if len(chunks) <= 1:
            for lo, hi in chunks:
                work(lo, hi)
            return
        pool = _pool(len(chunks))
        for f in [pool.submit(work, lo, hi) for lo, hi in chunks]:
            f.result()

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
                out[:, j] = np.log(np.maximum(out[:, j], _MIN_GEO_MEAN))
        if self.row is not None:
            out = out[self.row]
        missing = self.pair_run < 0 if self.row is None else self.pair_run[self.row] < 0
        if missing.any():
            # trec_eval 10.0 -c ranks one non-judged document for a query missing from the
            # run, then zeroes the values printed exactly as num_ret, utility, rbp_resid
            # and unj_* (trec_eval.c); utility_a,b,c,d or rbp_resid_p=x keep theirs. ranx and
            # ir_measures score such a query 0 in every measure.
            for j, c in enumerate(columns):
                if c.tool != "trec_eval" or (isinstance(c.name, str) and (
                        c.name in ("num_ret", "utility", "rbp_resid")
                        or c.name.startswith("unj"))):
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
        n = min(int(self.num_ret[p]), max(length, 0))
        chars = ["-"] * n
        lo = int(self.offsets[p])
        for i in range(lo, lo + int(self.count[p])):
            r = int(self.rank[i]) - 1
            if r < n:
                g = int(self.grade[i])
                chars[r] = ">" if g > 9 else (str(g) if g >= 0 else ".")
        return "".join(chars)


def _check_max_grades(qrels: Qrels, columns: list[Column]) -> None:
    """A family with a grade scale of its own (ERR, as gdeval.pl defines it, takes grades up
    to 4: its stopping probabilities are (2**grade - 1) / 16) refuses a higher grade."""
    scales = {BY_NAME[c.family].max_grade for c in columns} - {None}
    if not scales or not len(qrels.values) or int(qrels.values.max()) <= min(scales):
        return
    row = next(BY_NAME[c.family] for c in columns if BY_NAME[c.family].max_grade == min(scales))
    i = int(np.argmax(qrels.values))
    q = qrels.query_ids[int(np.searchsorted(qrels.offsets, i, side="right")) - 1]
    raise InputError(f"{qrels.where(i)}: query {q!r}, document {qrels.doc_id(i)!r}: grade "
                     f"{int(qrels.values[i])} is above {row.max_grade}, the highest grade "
                     f"{row.title} ({row.name}) takes")


# entries per chunk of a run dict evaluated as it is encoded (about 10 MB of buffers)
_CHUNK_ENTRIES = 1 << 18


class _Chunked:
    """Per-query values of a run measured a chunk of queries at a time, then put in query
    id order: what one _Evaluation of the whole run gives."""

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
        ev = _Evaluation(self.qrels, chunk, queries="run", qrels_start=first, allow_none=True,
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


def _evaluate_run_dict(qrels: Qrels, run: dict, columns: list[Column], **options):
    """(query ids in id order, per-query values) for a run given as a dict, which is encoded
    a chunk of queries at a time into buffers reused from chunk to chunk; each chunk is
    ranked and measured while it is in cache, and the run is never built whole (building it
    wrote and page-faulted five arrays of 8 bytes an entry). Returns None if the run holds
    something only the general path takes: it builds the Run, and converts or names it.
    """
    chunks = _Chunked(qrels, columns, options)
    entries = _CHUNK_ENTRIES
    start, kind, seen = 0, None, 0
    while True:
        offsets = np.empty(entries + 1, dtype=np.int64)
        values = np.empty(entries, dtype=np.float64)
        hashes = np.empty(entries, dtype=np.int64)
        tiekeys = np.empty(entries, dtype=np.int64)
        byte_offsets = np.empty(entries + 1, dtype=np.int64)
        blob = np.empty(entries * 16, dtype=np.uint8)
        while True:
            qids: list = []
            status, start_next, nq = _kernels.encode_run_dict_chunk(
                run, start, kind, offsets, values, hashes, tiekeys, byte_offsets, blob, qids)
            if status < 0:
                return None
            if status == 2:
                break  # one query is larger than the buffers: grow them
            if nq:
                kind = type(qids[0])
                ne = int(offsets[nq])
                chunks.add(_Chunked.run(qids, offsets[:nq + 1], values[:ne], hashes[:ne],
                                        byte_offsets[:ne + 1], blob[:int(byte_offsets[ne])],
                                        tiekeys[:ne], "run dict"), seen)
                seen += nq
            if status == 0:
                return chunks.result()
            start = start_next
        entries *= 2


# rows per batch of complete queries of a run file measured at once (qafast._runfile)
_FILE_CHUNK_ROWS = 1 << 18


def _summary(col: Column, total: float, count: int) -> float:
    """What trec_eval prints for "all", from the sum of the per-query values."""
    if count == 0:
        return 0.0
    if col.aggregate == "sum":
        return float(total)
    if col.aggregate == "gm":
        return float(math.exp(total / count))
    return float(total / count)


def _summaries(columns: list[Column], values: np.ndarray, *, exact: bool = False,
               every_qrels_query: Qrels | None = None) -> list[float]:
    """What trec_eval prints for "all", per column: from sums in row order, as trec_eval adds
    (the CLI), or from exactly rounded sums (``evaluate``: the same bits however the queries
    were split, as ``qafast.RankingMetrics`` accumulates them). ``every_qrels_query``: the
    qrels, when all of their queries are evaluated (trec_eval ``-c``)."""
    if exact:
        totals = _exactsum.column_sums(values)
    else:
        sums = np.empty(len(columns), dtype=np.float64)
        _kernels.column_sums(values, sums)
        totals = sums.tolist()
    out = [_summary(c, t, values.shape[0]) for c, t in zip(columns, totals)]
    if every_qrels_query is not None:
        # trec_eval -c sums num_rel afresh from the qrels lines (m_num_rel.c): every line with
        # a grade above 0, whatever -l is. ranx's and ir_measures' names keep their own
        # definition (ir_measures' NumRel counts grades >= rel)
        num_rel = float(np.count_nonzero(every_qrels_query.values > 0))
        out = [num_rel if c.family == "num_rel" and c.tool == "trec_eval" else v
               for c, v in zip(columns, out)]
    return out


_LEVEL_CEILING = 2**31  # above every int32 grade


def _check_options(relevance_level, judged_only, max_docs):
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


def _per_query_values(qrels: Qrels, run, columns: list[Column], queries: str,
                      options: dict, progress=None, ordered: bool = True
                      ) -> tuple[list, np.ndarray]:
    """(query ids, values of shape (queries, columns)) of one run against encoded qrels:
    streamed as it is read where the run allows it, otherwise through a whole ``Run``.
    ``options``: relevance_level, judged_only, max_docs, workers. Queries in id order, or
    in any order without ``ordered``."""
    if _arrow_source(run):
        if queries == "run":
            from ._arrow_input import evaluate_stream

            streamed = evaluate_stream(qrels, run, columns, **options)
            if isinstance(streamed, Run):  # an ungrouped RecordBatchReader, read once
                run = streamed
            elif streamed is not None:  # None: ungrouped, read whole below
                return streamed
    else:
        if queries == "run" and qrels.string_ids and type(run) is dict:
            streamed = _evaluate_run_dict(qrels, run, columns, **options)
            if streamed is not None:
                return streamed
        from ._runfile import evaluate_run_source, is_run_source

        if is_run_source(run):
            result = evaluate_run_source(qrels, run, columns, queries=queries,
                                         options=options, progress=progress, ordered=ordered)
            return result.ids, result.values
    ev = _Evaluation(qrels, _as_run(run, options["workers"]), queries=queries, **options)
    return ev.ids, ev.values(columns)


#: What ``evaluate`` returns: ``{measure: value}``, or ``{query_id: {measure: value}}``
#: with ``per_query=True`` (query ids as the qrels and run give them: str, or int).
Summary = dict[str, float]
PerQuery = dict[Any, dict[str, float]]


@overload
def evaluate(qrels: Any, run: Any, measures: str | Iterable[str], *, relevance_level: int = ...,
             judged_only: bool = ..., max_docs: int | None = ...,
             queries: str = ..., per_query: Literal[False] = ...,
             workers: int = ...,
             progress: bool | None = ...) -> Summary: ...
@overload
def evaluate(qrels: Any, run: Any, measures: str | Iterable[str], *, relevance_level: int = ...,
             judged_only: bool = ..., max_docs: int | None = ...,
             queries: str = ..., per_query: Literal[True],
             workers: int = ...,
             progress: bool | None = ...) -> PerQuery: ...
@overload
def evaluate(qrels: Any, run: Any, measures: str | Iterable[str], *, relevance_level: int = ...,
             judged_only: bool = ..., max_docs: int | None = ...,
             queries: str = ..., per_query: bool,
             workers: int = ...,
             progress: bool | None = ...) -> Summary | PerQuery: ...
def evaluate(qrels: Any, run: Any, measures: str | Iterable[str], *, relevance_level: int = 1,
             judged_only: bool = False, max_docs: int | None = None,
             queries: str = "run", per_query: bool = False,
             workers: int = 1,
             progress: bool | None = None) -> Summary | PerQuery:
    """Evaluate a run against relevance judgments with trec_eval 10.0's definitions.

    Parameters
    ----------
    qrels : Qrels, dict, DataFrame, Arrow table or path
        Relevance judgments, ``{query_id: {doc_id: grade}}``, a TREC qrels file or a
        Parquet file (``query_id, doc_id, relevance`` columns).
    run : Run, dict, DataFrame, Arrow table, path, bytes or binary file
        Retrieved documents, ``{query_id: {doc_id: score}}``, a TREC run file (a pipe,
        FIFO or file object is read once), or a ``pyarrow.Table``, ``RecordBatchReader``,
        Parquet file or directory (``query_id, doc_id, score`` columns; other names with
        :meth:`Run.from_arrow`), read a row group at a time when each query's rows are
        together. A TREC file whose queries' lines are together is evaluated as it is
        read, in memory that does not grow with it; one whose queries' lines are scattered
        is read whole first, about 85 bytes a line.
    measures : str or iterable of str
        trec_eval names (``"map"``, ``"P_10"``, ``"ndcg_cut.10,20"``, ``"all_trec"``), ranx
        names (``"ndcg@10"``, ``"hits@10"``, ``"map@100-l2"``, ``"rbp.95"``), ir_measures
        names or objects (``"nDCG@10"``, ``"P(rel=2)@5"``, ``"Judged@10"``), or qafast's
        (``"hit@10"``, ``"ndcg_exp@10"`` for gain 2**grade - 1); each with its tool's
        definition.
    relevance_level : int, default 1
        Lowest grade that counts as relevant (trec_eval ``-l``); nDCG uses raw grades.
    judged_only : bool, default False
        Drop unjudged documents before measuring (trec_eval ``-J``).
    max_docs : int, optional
        Keep only the top ``max_docs`` documents of each query (trec_eval ``-M``).
    queries : {"run", "qrels"}, default "run"
        ``"run"`` averages over the queries the run and qrels share; ``"qrels"`` over every
        qrels query (trec_eval ``-c``), a query missing from the run scored as trec_eval
        scores it, on an empty ranking (0 but for the ``num_rel`` count). A run sharing no
        query with the qrels is then a warning, not an error; and the ``num_rel`` summary is
        trec_eval's: the qrels lines with a grade above 0, whatever ``relevance_level``.
    per_query : bool, default False
        Return ``{query_id: {measure: value}}`` instead of the summary, queries in id order.
        Per query, ``gm_map`` and ``gm_bpref`` hold ``log(max(value, 1e-5))``, as trec_eval
        accumulates them and pytrec_eval returns them.
    workers : int, default 1
        Threads to use (-1: all cores), also to read files given by path; results do not
        depend on it. A run file of 64 MB or more is cut into ranges of whole queries that
        the threads take in turn, each a share of what is left (down to 8 MB), so that the
        threads finish together; a run's text given as bytes is cut into segments of whole
        queries; a compressed run or a Parquet run is read (decompressed, decoded) by a
        thread of its own.
    progress : bool, optional
        A progress bar on stderr while a run file is read (needs tqdm). By default only
        when stderr is a terminal and the file takes more than a moment; True: always;
        False: never.

    Returns
    -------
    dict
        ``{measure: value}``: the value trec_eval prints for ``all`` (the mean; the sum for
        the ``num_*`` counts; the geometric mean for ``gm_*``). Where trec_eval computes
        0 / 0 and prints ``-nan`` (``iprec_at_recall`` and ``11pt_avg`` of a query left with
        no document by ``judged_only``, ``Rndcg`` when no gain is positive), the value is
        ``nan``, and so is the mean of a column holding one.

    Raises
    ------
    ValueError
        Unknown measure, NaN score, duplicate document, no query in common (with
        ``queries="run"``), bad option.
    TypeError
        Input of the wrong type.

    Examples
    --------
    >>> import qafast
    >>> qrels = {"q1": {"d1": 1, "d2": 0, "d3": 2}}
    >>> run = {"q1": {"d1": 0.5, "d2": 0.9, "d3": 0.5}}
    >>> qafast.evaluate(qrels, run, ["map", "P@2", "ndcg_cut_3"])
    {'map': 0.5833333333333333, 'P@2': 0.5, 'ndcg_cut_3': 0.66967181649423}
    """
    _check_options(relevance_level, judged_only, max_docs)
    columns = [c for c in parse_measures(measures) if c.family not in TEXT_MEASURES]
    if not columns:
        raise InputError(f"measures {measures!r}: none of them is a per-query number "
                         "(runid, num_q and relstring are printed by the qafast trec command)")
    qrels = _as_qrels(qrels, workers)
    _check_max_grades(qrels, columns)
    options = dict(relevance_level=min(int(relevance_level), _LEVEL_CEILING),
                   judged_only=bool(judged_only),
                   max_docs=None if max_docs is None else min(int(max_docs), NO_CUTOFF),
                   workers=workers)
    from ._progress import Progress
    from ._runfile import is_run_source, source_size

    # a bar for text to read; a dict or a Run is measured in a moment
    bar = Progress(progress if is_run_source(run) else False, total=source_size(run),
                   desc="run")
    with bar:
        ids, values = _per_query_values(qrels, run, columns, queries, options,
                                        bar.update if bar else None, ordered=per_query)
    if per_query:
        names = [c.name for c in columns]
        rows = values.tolist()
        return {q: dict(zip(names, row)) for q, row in zip(ids, rows)}
    return dict(zip([c.name for c in columns], _summaries(
        columns, values, exact=True,
        every_qrels_query=qrels if queries == "qrels" else None)))


def evaluate_runs(qrels, runs, measures: str | Iterable[str], *, relevance_level: int = 1,
                  judged_only: bool = False, max_docs: int | None = None,
                  queries: str = "run", per_query: bool = False, workers: int = 1,
                  progress: bool | None = None) -> dict:
    """Evaluate many runs against the same relevance judgments in one call.

    The qrels are read and encoded once; each run file is streamed as :func:`evaluate`
    streams one, and the runs are spread over ``workers`` threads (the kernels release the
    GIL, so threads share the qrels and run at once). Every run's numbers are those
    :func:`evaluate` gives it alone, bit for bit, whatever ``workers``.

    Parameters
    ----------
    qrels : Qrels, dict, DataFrame or path
        Relevance judgments, as :func:`evaluate` takes them.
    runs : sequence of paths, or mapping of name to run
        Run files (each named by its path as given), or ``{name: run}`` where a run is
        anything :func:`evaluate` takes (a path, ``Run``, dict, DataFrame, ...).
    measures : str or iterable of str
        As for :func:`evaluate`.
    relevance_level, judged_only, max_docs, queries, per_query
        As for :func:`evaluate`, applied to every run.
    workers : int, default 1
        Threads (-1: every core this process may use). With fewer runs than threads, the
        spare threads read the runs' files in ranges. Memory grows with the threads by a
        few tens of MB each, not with the size of the runs.
    progress : bool, optional
        A bar on stderr counting the runs done (needs tqdm): by default only when stderr
        is a terminal and the call takes more than a moment; True: always; False: never.

    Returns
    -------
    dict
        ``{name: result}``, in the order of ``runs``, each result what :func:`evaluate`
        returns for that run.

    Raises
    ------
    OSError
        A run file is missing or cannot be read (before any run is evaluated), naming it.
    ValueError, TypeError
        As :func:`evaluate`, naming the run; two runs with the same name.

    Examples
    --------
    >>> import qafast
    >>> qrels = {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 1}}
    >>> runs = {"bm25": {"q1": {"d1": 0.2, "d2": 0.9}, "q2": {"d3": 0.5}},
    ...         "dense": {"q1": {"d1": 0.8, "d2": 0.1}, "q2": {"d4": 0.5}}}
    >>> qafast.evaluate_runs(qrels, runs, ["map", "P@1"], workers=2)
    {'bm25': {'map': 0.75, 'P@1': 0.5}, 'dense': {'map': 0.5, 'P@1': 0.5}}
    """
    from ._progress import Progress
    from ._runfile import evaluate_run_sources

    _check_options(relevance_level, judged_only, max_docs)
    named = _named_runs(runs)
    columns = [c for c in parse_measures(measures) if c.family not in TEXT_MEASURES]
    if not columns:
        raise ValueError(f"measures {measures!r}: none of them is a per-query number "
                         "(runid, num_q and relstring are printed by the qafast trec command)")
    workers = _workers(workers)
    from ._runfile import check_readable

    for name, run in named:
        check_readable(name, run)
    qrels = _as_qrels(qrels, min(workers, 2))
    _check_max_grades(qrels, columns)
    options = dict(relevance_level=int(relevance_level), judged_only=bool(judged_only),
                   max_docs=max_docs, workers=workers)
    names = [c.name for c in columns]
    with Progress(progress, total=len(named), unit="run", desc="runs") as bar:
        results = evaluate_run_sources(qrels, named, columns, queries=queries,
                                       options=options, progress=bar)
    out: dict[str, dict] = {}
    for (name, _), r in zip(named, results):
        if per_query:
            out[name] = {q: dict(zip(names, row)) for q, row in zip(r.ids, r.values.tolist())}
        else:
            out[name] = dict(zip(names, _summaries(
                columns, r.values, exact=True,
                every_qrels_query=qrels if queries == "qrels" else None)))
    return out


def _named_runs(runs) -> list[tuple[str, Any]]:
    """[(name, run)] from a mapping, or from a sequence of paths named as given."""
    if isinstance(runs, Mapping):
        return [(str(k), v) for k, v in runs.items()]
    if isinstance(runs, (str, bytes, os.PathLike)) or not isinstance(runs, Iterable):
        raise TypeError("runs must be a sequence of run paths or a mapping {name: run}, "
                        f"not {type(runs).__name__}")
    named = []
    for r in runs:
        if not isinstance(r, (str, os.PathLike)):
            raise TypeError("runs given as a sequence must be paths (give other runs as a "
                            f"mapping {{name: run}}), not {type(r).__name__}")
        named.append((os.fspath(r), r))
    seen = set()
    for name, _ in named:
        if name in seen:
            raise ValueError(f"run {name!r} is given twice")
        seen.add(name)
    return named
