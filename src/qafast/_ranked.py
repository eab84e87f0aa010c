"""Relevance judgments and runs in encoded form, built from any input.

:class:`Qrels` and :class:`Run` hold each query's documents as CSR arrays of integer keys
(the data layout of DESIGN.md): what the engine (``_engine``) ranks and measures. Their
constructors turn every input a user gives into that form: dicts, arrays, pandas frames,
TREC files (through ``qafast.io.trec``) and Arrow or Parquet sources (through
``qafast.io.arrow``), each read, checked once and encoded here; nothing downstream reads the
input again. ``grouped``, ``from_trec_columns`` and ``from_arrow_columns`` take what the
readers return, for the streaming drivers that build a batch of queries at a time.

Ties follow trec_eval: documents are ranked by score descending, then by document id
descending in string (UTF-8 byte, ``strcmp``) order; integer document ids break ties in
numeric order, larger first. The order rows arrive in never matters.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Mapping

import numpy as np

from . import _kernels
from ._measures import MAX_GRADE
from ._threads import resolve_workers
from .errors import InputError, InputTypeError

__all__ = ["EMPTY_I64", "EMPTY_U8", "Qrels", "Run", "as_qrels", "as_run", "comparable_int_ids",
           "from_arrow", "from_arrow_columns", "from_encoded", "from_trec_columns", "grouped",
           "is_arrow_source", "raise_duplicate"]

EMPTY_I64 = np.zeros(0, dtype=np.int64)
EMPTY_U8 = np.zeros(0, dtype=np.uint8)
_ID_BIAS = 2**63          # integer ids of 2**63 and above are stored as id - _ID_BIAS
_INT64_MAX = 2**63 - 1


class _Ranked:
    """Shared encoded form of a Qrels or a Run: per-query CSR arrays of entries.

    Entry i carries ``hashes[i]``: a 64-bit hash of its document id's UTF-8 bytes, or the
    id itself for integer ids (``id_bias``: the id minus 2**63, for unsigned ids of 2**63 and
    above; the order of the ids is kept). String ids also keep their bytes: entry i's are
    ``blob[key_off[k]:key_off[k + 1]]`` with ``k = keys[i]`` (``keys is None``: k = i).
    """

    __slots__ = ("query_ids", "offsets", "values", "hashes", "tiekeys", "keys", "key_off",
                 "blob", "source", "_lines", "_qindex", "_qarray", "id_bias", "_max")

    to_trec: Callable[..., bytes | None]   # Qrels.to_trec, Run.to_trec (for save)
    to_parquet: Callable[..., Any]         # Qrels.to_parquet, Run.to_parquet (for save)

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
                EMPTY_I64 if self.keys is None or self.key_off is None else self.keys,
                EMPTY_I64 if self.key_off is None else self.key_off,
                EMPTY_U8 if self.blob is None else self.blob)

    def to_dict(self) -> dict:
        """The data as ``{query_id: {doc_id: value}}``."""
        vals = self.values.tolist()
        out = {}
        for i, q in enumerate(self.query_ids):
            lo, hi = int(self.offsets[i]), int(self.offsets[i + 1])
            out[q] = {self.doc_id(j): vals[j] for j in range(lo, hi)}
        return out

    def save(self, path, **options) -> None:
        """Write to ``path`` in the format its suffix names: ``.trec``, ``.txt``, ``.run`` or
        ``.qrels`` for TREC text (see ``to_trec``, which takes the ``options``), each also
        with ``.gz`` for gzip; ``.parquet`` through ``to_parquet``."""
        if not isinstance(path, (str, os.PathLike)):
            raise InputTypeError(f"save takes a path, not a {type(path).__name__}; to_trec "
                                 "writes to a file object")
        name = os.fspath(path)
        if not isinstance(name, str):
            raise InputTypeError("save takes a path of str, not of bytes")
        base = name[:-3] if name.lower().endswith(".gz") else name
        suffix = os.path.splitext(base)[1].lower()
        if suffix in _TEXT_SUFFIXES:
            self.to_trec(name, **options)
        elif suffix == ".parquet" and base == name:
            self.to_parquet(name, **options)
        else:
            raise InputError(f"cannot save {name!r}: unknown suffix {suffix or '(none)'!r}; "
                             f"use one of {', '.join(_TEXT_SUFFIXES)} (each optionally "
                             "with .gz) or .parquet")

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({len(self.query_ids)} queries, "
                f"{self.num_entries} documents, from {self.source})")


_TEXT_SUFFIXES = (".trec", ".txt", ".run", ".qrels")


def from_encoded(cls, query_ids: list, offsets: np.ndarray, values: np.ndarray,
                 hashes: np.ndarray, *, tiekeys: np.ndarray | None = None,
                 key_off: np.ndarray | None = None, blob: np.ndarray | None = None,
                 id_bias: bool = False, source: str = "encoded data"):
    """A Qrels or Run from arrays already in its encoded form (entry i's bytes are
    ``blob[key_off[i]:key_off[i + 1]]`` for string ids; integer ids are their hashes), for
    the modules that compute one (fusion). No check is made."""
    obj = cls.__new__(cls)
    obj._set(list(query_ids), offsets, values, hashes, None, key_off, blob, source)
    obj.id_bias = id_bias
    if cls is Run:
        obj.tiekeys = tiekeys
        obj.run_id = None
    return obj


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
    tiekeys = EMPTY_I64 if integer_values else np.empty(total, dtype=np.int64)
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
        blob = np.frombuffer(raw, dtype=np.uint8) if raw else EMPTY_U8
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
        str_ties = EMPTY_I64 if integer_values else np.empty(n, dtype=np.int64)
        str_off = np.empty(n + 1, dtype=np.int64)
        column = dcol.tolist() if dcol.dtype.kind != "O" else dcol
        blob, bad = _kernels.encode_str_column(column, str_hashes, str_ties, str_off)
        if bad is not None:
            raise InputTypeError(f"{source}: document id {bad[1]!r} is a {type(bad[1]).__name__}; "
                                 "document ids must be str, or all int in an integer array")
        keys = np.arange(n, dtype=np.int64)
        vocab = (str_hashes, str_ties, str_off,
                 np.frombuffer(blob, dtype=np.uint8) if blob else EMPTY_U8)
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
    return grouped(cls, qlist, qidx, keys, vcol, vocab, source, None, integer_values,
                    id_bias=id_bias)


def _check_range(index: np.ndarray, size: int, what: str, source: str) -> None:
    if len(index) and (index.min() < 0 or index.max() >= size):
        row = int(np.flatnonzero((index < 0) | (index >= size))[0])
        raise InputError(f"{source}: row {row}: {what} {int(index[row])} is outside 0..{size - 1}")


def _grouping_order(qidx: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """The stable sort of the query indices, by counting (``offsets``: where each query's
    rows go). A kernel, not ``np.argsort``, which took 11 s on a 20M-line run whose queries
    are scattered through the file, and could not be interrupted in that time."""
    if len(offsets) - 1 > np.iinfo(np.int32).max:  # pragma: no cover - 2**31 queries
        return np.argsort(qidx, kind="stable")
    order = np.empty(len(qidx), dtype=np.int64)
    _kernels.group_order(np.ascontiguousarray(qidx, dtype=np.int32), offsets, order)
    return order


def grouped(cls, qlist, qidx, keys, vcol, vocab, source, lines, integer_values, *,
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
        order = _grouping_order(qidx, offsets)
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


def _read_trec(cls, source, integer_values: bool, workers: int = 1):
    from .io import trec

    # what read_trec_qrels / read_trec_run do, without the qrels' tie keys (48 MB of fresh
    # memory for 6M lines), which are never used, nor a column of line numbers (another
    # 48 MB): messages look a line up where the numbering jumps
    cols = trec.read_columns(source, is_run=not integer_values, workers=resolve_workers(workers),
                      intern_docs=False, tie_keys=not integer_values, line_column=False)
    with trec.memory_named(cols.path, f"building a {cls.__name__} of its {len(cols)} lines"):
        return from_trec_columns(cls, cols, integer_values)


def from_trec_columns(cls, cols, integer_values: bool):
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
        keys = _grouping_order(qidx, offsets)
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
    raise_duplicate(obj, i, integer_values)
    return obj


def raise_duplicate(obj, i: int, integer_values: bool) -> None:
    if i >= 0:
        q = obj.query_ids[int(np.searchsorted(obj.offsets, i, side="right")) - 1]
        verb = "judges" if integer_values else "retrieves"
        raise InputError(f"{obj.where(i)}: query {q!r} {verb} document {obj.doc_id(i)!r} twice")


class Qrels(_Ranked):
    """Relevance judgments: for each query, documents and their integer grades.

    A negative grade marks a document in the pool but not judged (trec_eval's
    ``RELVALUE_UNJUDGED``, used by infAP and bpref). Build one with :meth:`from_dict`,
    :meth:`from_file`, :meth:`from_df`, :meth:`from_arrays`, :meth:`from_arrow` or
    :meth:`from_ir_datasets`, or pass a dict straight to :func:`evaluate`.

    Examples
    --------
    >>> import qafast
    >>> qrels = qafast.Qrels({"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}})
    >>> qrels
    Qrels(2 queries, 3 documents, from qrels dict)
    """

    __slots__ = ()

    def __init__(self, data: Mapping[Any, Mapping[str, int]]):
        other = (from_arrow(Qrels, data) if is_arrow_source(data)
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
        return _read_trec(cls, source, True, workers)

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
        if is_arrow_source(df):
            return from_arrow(cls, df, query_col=query_col, doc_col=doc_col,
                               value_col=relevance_col)
        q, d, v = _df_columns(df, (query_col, doc_col, relevance_col), "qrels DataFrame")
        return _from_columns(cls, q, d, v, True, "qrels DataFrame")

    @classmethod
    def from_arrow(cls, source, *, query_col: str = "query_id", doc_col: str = "doc_id",
                   relevance_col: str = "relevance") -> "Qrels":
        """From a ``pyarrow.Table``, ``RecordBatchReader`` (``pyarrow.ipc.open_stream``),
        IPC file reader (``pyarrow.ipc.open_file``) or dataset, a Parquet file or a
        directory of Parquet files (``pip install "qafast[arrow]"``): string, binary
        (UTF-8) or integer ids, dictionary-encoded ones used through their indices, integer
        grades (or decimal and float ones that are whole numbers)."""
        return from_arrow(cls, source, query_col=query_col, doc_col=doc_col,
                           value_col=relevance_col)

    def to_frame(self):
        """The judgments as a pandas DataFrame, one row per judgment, with the columns
        :meth:`from_df` reads by default: ``query_id``, ``doc_id`` and ``relevance``
        (``int32``). Queries keep their order, each one's rows together; a query with no
        judgments has no row.

        Examples
        --------
        >>> import qafast
        >>> qafast.Qrels({"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}}).to_frame()
          query_id doc_id  relevance
        0       q1     d1          1
        1       q1     d2          0
        2       q2     d3          2
        """
        from ._tables import to_frame

        return to_frame(self, "relevance")

    def to_arrow(self):
        """The judgments as a ``pyarrow.Table`` with the columns of :meth:`to_frame`, which
        :meth:`from_arrow` reads back (``pip install "qafast[arrow]"``). String ids are
        taken from their bytes, never decoded one by one."""
        from ._tables import to_arrow

        return to_arrow(self, "relevance")

    def to_parquet(self, path, **options):
        """Write the judgments to a Parquet file with the columns of :meth:`to_frame`, which
        :meth:`from_arrow` and :func:`qafast.evaluate` read back (``pip install
        "qafast[arrow]"``). ``options`` go to ``pyarrow.parquet.write_table``
        (``compression``, ``row_group_size``, ...). Returns ``path``."""
        from ._tables import to_parquet

        return to_parquet(self, "relevance", path, options)

    @classmethod
    def from_ir_datasets(cls, dataset) -> "Qrels":
        """From the qrels of an ir_datasets dataset: the dataset object, or the id it is
        registered under (``pip install "qafast[ir_datasets]"``). Raises
        :class:`~qafast.errors.InputError` when the dataset has no qrels."""
        from .io import irds

        q, d, v, source = irds.read(dataset, "qrels")
        return _from_columns(cls, q, d, v, True, source)

    def to_trec(self, path_or_file=None) -> bytes | None:
        """Write the judgments as TREC qrels text, ``qid 0 docno grade`` (each query's
        judgments in stored order), to a path (``.gz``: gzip), a text or binary file object, or,
        given None, return it as bytes. Ids that a TREC reader would split (whitespace) or skip
        (a query id starting with ``#``) are refused with an ``InputError``.

        Examples
        --------
        >>> import qafast
        >>> qafast.Qrels({"q1": {"d1": 1}}).to_trec()
        b'q1 0 d1 1\\n'
        """
        from .io._trec_write import qrels_lines, write_text

        return write_text(path_or_file, qrels_lines(self))

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
        if n and int(self.values.max()) > MAX_GRADE:
            i = int(np.argmax(self.values))
            raise InputError(f"{self.where(i)}: grade {int(self.values[i])} is above "
                             f"{MAX_GRADE}, the largest grade qafast supports")


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
        other = (from_arrow(Run, data) if is_arrow_source(data)
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
        return _read_trec(cls, source, False, workers)

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
        if is_arrow_source(df):
            return from_arrow(cls, df, query_col=query_col, doc_col=doc_col,
                               value_col=score_col)
        q, d, v = _df_columns(df, (query_col, doc_col, score_col), "run DataFrame")
        obj = _from_columns(cls, q, d, v, False, "run DataFrame")
        obj.run_id = None
        return obj

    def to_trec(self, path_or_file=None, *, tag: str | None = None,
                depth: int | None = None) -> bytes | None:
        """Write the run as TREC text, ``qid Q0 docno rank score tag``.

        Each query's documents are written in trec_eval's order (score descending, then
        document id descending) and ranked from 1; a score is written as ``repr`` writes
        it, which reads back as the same double. So :meth:`from_file` gives this run back
        (query ids as str), and trec_eval's numbers on the file are :func:`qafast.evaluate`'s
        on the run. A query without documents writes no line.

        Parameters
        ----------
        path_or_file : str, path, file object or None, default=None
            Where to write: a path (``.gz``: gzip-compressed), a text or binary file object,
            or None to return the text as bytes.
        tag : str, default=None
            The last column; ``None`` takes the run's own tag (its file's, or the fusion
            method's), else ``"qafast"``.
        depth : int, default=None
            Write only the top ``depth`` documents of each query (``None``: all).

        Examples
        --------
        >>> import qafast
        >>> run = qafast.Run({"q1": {"d1": 0.5, "d2": 1.25, "d3": 0.5}})
        >>> print(run.to_trec(tag="bm25").decode(), end="")
        q1 Q0 d2 1 1.25 bm25
        q1 Q0 d3 2 0.5 bm25
        q1 Q0 d1 3 0.5 bm25
        """
        from .io._trec_write import run_lines, write_text

        if tag is None:
            tag = getattr(self, "run_id", None) or "qafast"
        if not isinstance(tag, str):
            raise InputTypeError(f"tag must be a str, not {type(tag).__name__}")
        if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int)
                                  or depth < 1):
            raise InputError(f"depth must be a positive int or None, not {depth!r}")
        order = np.empty(self.num_entries, dtype=np.int64)
        hashes, keys, key_off, blob = self.kernel_args()
        tiekeys = self.tiekeys if self.tiekeys is not None else EMPTY_I64
        if _kernels.trec_order(self.offsets, self.values, hashes, tiekeys, keys, key_off, blob,
                               order) != 0:
            raise MemoryError("to_trec: out of memory for the largest query's order")
        return write_text(path_or_file, run_lines(self, order, tag, depth))

    @classmethod
    def from_arrow(cls, source, *, query_col: str = "query_id", doc_col: str = "doc_id",
                   score_col: str = "score") -> "Run":
        """From a ``pyarrow.Table``, ``RecordBatchReader`` (``pyarrow.ipc.open_stream``),
        IPC file reader (``pyarrow.ipc.open_file``) or dataset, a Parquet file or a
        directory of Parquet files (``pip install "qafast[arrow]"``): string, binary
        (UTF-8) or integer ids, dictionary-encoded ones used through their indices, scores
        of any integer, float or decimal type (a decimal as the nearest double).

        ``evaluate`` given such a run reads it a row group at a time when each query's
        rows are together (as a grouped TREC run is); otherwise it reads it whole."""
        return from_arrow(cls, source, query_col=query_col, doc_col=doc_col,
                           value_col=score_col)

    def to_frame(self):
        """The run as a pandas DataFrame, one row per retrieved document, with the columns
        :meth:`from_df` reads by default: ``query_id``, ``doc_id`` and ``score``
        (``float64``). Queries keep their order, each one's documents together in the order
        they were given (not ranked); a query with no documents has no row.

        Examples
        --------
        >>> import qafast
        >>> run = qafast.Run({"q1": {"d1": 0.9, "d2": 0.3}, "q2": {"d7": 1.5}})
        >>> run.to_frame()
          query_id doc_id  score
        0       q1     d1    0.9
        1       q1     d2    0.3
        2       q2     d7    1.5
        >>> qafast.Run.from_df(run.to_frame()).to_dict() == run.to_dict()
        True
        """
        from ._tables import to_frame

        return to_frame(self, "score")

    def to_arrow(self):
        """The run as a ``pyarrow.Table`` with the columns of :meth:`to_frame`, which
        :meth:`from_arrow` reads back (``pip install "qafast[arrow]"``). String ids are
        taken from their bytes, never decoded one by one."""
        from ._tables import to_arrow

        return to_arrow(self, "score")

    def to_parquet(self, path, **options):
        """Write the run to a Parquet file with the columns of :meth:`to_frame`, which
        :meth:`from_arrow` and :func:`qafast.evaluate` read back, a row group at a time
        (``pip install "qafast[arrow]"``). ``options`` go to
        ``pyarrow.parquet.write_table`` (``compression``, ``row_group_size``, ...). Returns
        ``path``."""
        from ._tables import to_parquet

        return to_parquet(self, "score", path, options)

    @classmethod
    def from_ir_datasets(cls, dataset) -> "Run":
        """From the scored documents an ir_datasets dataset ships (its ``scoreddocs``, such
        as a first-stage ranking to rerank): the dataset object, or the id it is registered
        under (``pip install "qafast[ir_datasets]"``). Raises
        :class:`~qafast.errors.InputError` when the dataset has no scored documents."""
        from .io import irds

        q, d, v, source = irds.read(dataset, "scoreddocs")
        obj = _from_columns(cls, q, d, v, False, source)
        obj.run_id = None
        return obj


def is_arrow_source(data) -> bool:
    """Whether ``data`` is a pyarrow object or a Parquet path (pyarrow is not imported)."""
    from .io.arrow import is_arrow, is_parquet

    return is_arrow(data) or is_parquet(data)


def _arrow_column_names(cls, query_col, doc_col, value_col) -> list[str]:
    for what, c in (("query_col", query_col), ("doc_col", doc_col),
                    ("relevance_col" if cls is Qrels else "score_col", value_col)):
        if not isinstance(c, str):
            raise InputTypeError(f"{what} must be a column name (str), not {type(c).__name__}")
    return [query_col, doc_col, value_col]


def from_arrow_columns(cls, columns, src: str):
    """A Qrels or Run from the encoded rows of an Arrow batch (``io.arrow.ArrowColumns``)."""
    obj = grouped(cls, columns.query_ids, columns.query_index, columns.doc_keys, columns.values,
                  columns.vocab, src, None, cls is Qrels, id_bias=columns.id_bias)
    if cls is Run:
        obj.run_id = None
    return obj


def from_arrow(cls, source, *, query_col: str = "query_id", doc_col: str = "doc_id",
               value_col: str | None = None, src: str | None = None, row_base: int = 0):
    """A Qrels or Run from an Arrow or Parquet source, read whole. ``src`` names the source
    in messages and ``row_base`` numbers its first row there, for a table that holds part of
    a file (a Dask task's row groups)."""
    from .io import arrow

    if value_col is None:
        value_col = "relevance" if cls is Qrels else "score"
    names = _arrow_column_names(cls, query_col, doc_col, value_col)
    if src is None:
        src = arrow.describe(source, "qrels" if cls is Qrels else "run")
    table = arrow.read_table(source, names, src)
    return from_arrow_columns(cls, arrow.encode(table, names, cls is Qrels, src,
                                                row_base=row_base), src)


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
    if is_arrow_source(data):
        return cls.from_arrow(data)
    if isinstance(data, (str, os.PathLike, bytes, bytearray, memoryview)) or hasattr(data,
                                                                                   "read"):
        # a path, the file's content, or a binary file object (read once)
        return cls.from_file(data, workers=workers)
    if hasattr(data, "columns") and hasattr(data, "to_numpy"):
        return cls.from_df(data)
    return cls.from_dict(data)


def as_qrels(qrels, workers: int = 1) -> Qrels:
    return _coerce(Qrels, Run, qrels, workers, "qrels")


def as_run(run, workers: int = 1) -> Run:
    return _coerce(Run, Qrels, run, workers, "run")


def comparable_int_ids(qrels: Qrels, run: Run):
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
