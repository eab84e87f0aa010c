"""Arrow and Parquet input: query, document and value columns as the kernels' arrays.

A source is a ``pyarrow.Table``, a ``RecordBatch``, a ``RecordBatchReader`` (an IPC stream
reader, ``pyarrow.ipc.open_stream``, too), an IPC file reader (``pyarrow.ipc.open_file``), a
``pyarrow.dataset.Dataset``, a Parquet file or a directory of Parquet files (a dataset).
Only the three named columns are read. :func:`batches` gives the rows a batch at a time (a
Parquet file one row group after another), so a run larger than memory is never read whole;
:func:`encode` turns the rows of one batch into plain arrays:

- query ids as a list of distinct ids (str or int) and an ``int64`` index per row;
- document ids as ``int64`` keys per row: the id itself for integer ids, or an index into a
  table of 64-bit hashes, tie keys and UTF-8 bytes read straight from the Arrow string
  buffers (no Python string per row). A dictionary-encoded column is used through its
  indices: its dictionary is hashed once and the indices are the keys;
- values as ``float64`` scores or ``int32`` grades.

pyarrow is imported only here, and only when an Arrow source is met (the ``arrow`` extra).
Errors name the source, the column and the row, never the data around them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Iterator

import numpy as np

from .._kernels import hash_keys
from ..errors import FormatError, InputError, InputTypeError

__all__ = ["ArrowColumns", "ArrowFormatError", "batches", "describe", "encode", "is_arrow",
           "is_parquet", "read_table"]

_PARQUET_SUFFIXES = (".parquet", ".parq", ".pq")
_PARQUET_MAGIC = b"PAR1"
_EMPTY_I64 = np.zeros(0, dtype=np.int64)
_EMPTY_U8 = np.zeros(0, dtype=np.uint8)
_ID_BIAS = 2**63
_INT64_MAX = 2**63 - 1
#: rows per batch read from Parquet (at most one row group is decoded at a time)
BATCH_ROWS = 1 << 18


def _pyarrow():
    try:
        import pyarrow
    except ImportError:  # pragma: no cover - the extra is installed in the tests
        raise ImportError("Arrow and Parquet input needs pyarrow: pip install "
                          "'qafast[arrow]'") from None
    return pyarrow


class ArrowFormatError(FormatError):
    """Arrow or Parquet data that pyarrow cannot decode: a damaged Parquet page, footer or
    row group, an IPC stream cut short. ``path`` is the file (``'<arrow>'`` for an object in
    memory); ``row_group`` and ``column`` say where, when known; the message ends with
    pyarrow's own."""

    row_group: int | None = None
    column: str | None = None

    def __init__(self, message: str, *, path: str, where: str, row_group: int | None = None,
                 column: str | None = None) -> None:
        InputError.__init__(self, f"{where}: {message}", path=path, field=column)
        self.path = path
        self.line = None
        self.message = message
        self.row_group = row_group
        self.column = column


def arrow_kind(obj) -> str | None:
    """'Table', 'RecordBatch', 'RecordBatchReader', 'RecordBatchFileReader' or 'Dataset'
    for such a pyarrow object (an IPC stream reader is a RecordBatchReader, read once;
    ``pyarrow.ipc.open_file`` gives a RecordBatchFileReader, whose batches can be read
    again; a FileSystemDataset is a Dataset), told by its classes' modules and names so
    that pyarrow is not imported to ask; else None."""
    for cls in type(obj).__mro__:
        module = cls.__module__ or ""
        if not (module == "pyarrow" or module.startswith(("pyarrow.", "pyarrow._"))):
            continue
        if cls.__name__ in ("Table", "RecordBatch", "RecordBatchReader",
                            "RecordBatchFileReader"):
            return cls.__name__
        if cls.__name__ == "_RecordBatchFileReader":
            return "RecordBatchFileReader"
        if cls.__name__.endswith("Dataset"):
            return "Dataset"
    return None


def is_arrow(obj) -> bool:
    """Whether ``obj`` is a pyarrow Table, RecordBatch, RecordBatchReader (an IPC stream
    reader too), IPC file reader or Dataset."""
    return arrow_kind(obj) is not None


def is_parquet(obj) -> bool:
    """Whether ``obj`` is the path of a Parquet file (by its suffix or its first bytes) or of
    a directory holding Parquet files."""
    if not isinstance(obj, (str, os.PathLike)):
        return False
    path = os.fspath(obj)
    if isinstance(path, bytes) or path == "-":
        return False
    if os.path.isdir(path):
        for _root, _dirs, files in os.walk(path):
            if any(f.endswith(_PARQUET_SUFFIXES) for f in files):
                return True
        return False
    if path.lower().endswith(_PARQUET_SUFFIXES):
        return True
    if os.path.isfile(path):  # a regular file only: a FIFO's first bytes would be lost
        try:
            with open(path, "rb") as f:
                return f.read(4) == _PARQUET_MAGIC
        except OSError:
            return False
    return False


def describe(source, role: str) -> str:
    """How messages name the source: ``run Parquet file 'x.parquet'``, ``qrels Arrow
    table``, ..."""
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        kind = "Parquet dataset" if os.path.isdir(path) else "Parquet file"
        return f"{role} {kind} {path!r}"
    name = type(source).__name__
    return f"{role} Arrow {'table' if name == 'Table' else name}"


def _schema_and_reader(source, columns: list[str], src: str):
    """(schema, a function giving an iterator of record batches of ``columns``)."""
    pa = _pyarrow()
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if os.path.isdir(path):
            import pyarrow.dataset as ds

            try:
                dataset = ds.dataset(path, format="parquet")
            except (pa.ArrowException, OSError) as e:
                raise _damaged(e, src, path) from None
            _check_names(dataset.schema, columns, src)
            return dataset.schema, lambda: _dataset_batches(dataset, columns, src)
        pf = _open_parquet(path, columns, src)
        return pf.schema_arrow, lambda: _row_group_batches(pf, path, columns, src)
    name = arrow_kind(source) or type(source).__name__
    if name == "RecordBatchReader":
        _check_names(source.schema, columns, src)
        return source.schema, lambda: _reader_batches(source, columns, src)
    if name == "RecordBatchFileReader":
        _check_names(source.schema, columns, src)
        return source.schema, lambda: _file_reader_batches(source, columns, src)
    if name == "Dataset":
        _check_names(source.schema, columns, src)
        return source.schema, lambda: _dataset_batches(source, columns, src)
    if name in ("Table", "RecordBatch"):
        _check_names(source.schema, columns, src)
        table = source.select(columns)
        if name == "RecordBatch":
            table = pa.Table.from_batches([table])
        return table.schema, lambda: iter(table.to_batches(max_chunksize=BATCH_ROWS))
    raise InputTypeError(f"{src}: expected a pyarrow Table, RecordBatchReader, IPC file "
                         f"reader, Dataset or a Parquet path, not {name}")


# what pyarrow raises for data it cannot decode (a damaged page can end in any of them)
def _decode_errors():
    return (_pyarrow().ArrowException, OSError, UnicodeDecodeError, EOFError)


def _damaged(e: Exception | str, src: str, path: str | None, *, row_group: int | None = None,
             span: str = "", column: str | None = None) -> ArrowFormatError:
    """pyarrow's error ``e`` decoding data, which names neither the file, the row group nor
    the column, as an :class:`ArrowFormatError` that does."""
    where = src + (f", row group {row_group}" if row_group is not None else span)
    if column is not None:
        where += f", column {column!r}"
    message = str(e).strip() or type(e).__name__
    return ArrowFormatError(message, path=path if path is not None else "<arrow>",
                            where=where, row_group=row_group, column=column)


def _failing_column(read_one, columns):
    """The first of ``columns`` that ``read_one(column)`` fails to read, or None: pyarrow
    names no column when a row group is damaged, so each is read alone (after a failure
    only, so this costs nothing on good data)."""
    for c in columns:
        try:
            read_one(c)
        except _decode_errors():
            return c
    return None


def _row_group_batches(pf, path: str, columns, src: str):
    # one row group decoded at a time, handed on in batches of at most BATCH_ROWS rows
    for i in range(pf.num_row_groups):
        try:
            yield from pf.iter_batches(batch_size=BATCH_ROWS, row_groups=[i], columns=columns,
                                       use_threads=False)
        except _decode_errors() as e:
            column = _failing_column(lambda c, i=i: pf.read_row_group(i, columns=[c]), columns)
            raise _damaged(e, src, path, row_group=i, column=column) from None


def _reader_batches(reader, columns, src: str):
    # an IPC stream is decoded as it is read: a damaged message fails here
    batches = iter(reader)
    i = 0
    while True:
        try:
            batch = next(batches)
        except StopIteration:
            return
        except _decode_errors() as e:
            raise _damaged(e, src, None, span=f", record batch {i}") from None
        yield batch.select(columns)
        i += 1


def _file_reader_batches(reader, columns, src: str):
    # an IPC file's record batches, each decoded when it is asked for
    for i in range(reader.num_record_batches):
        try:
            batch = reader.get_batch(i)
        except _decode_errors() as e:
            raise _damaged(e, src, None, span=f", record batch {i}") from None
        yield batch.select(columns)


def _dataset_batches(dataset, columns, src: str):
    # fragments in the dataset's (sorted path) order, so a query's rows keep their order
    for fragment in dataset.get_fragments():
        try:
            yield from fragment.to_batches(columns=columns, batch_size=BATCH_ROWS,
                                           use_threads=False)
        except _decode_errors() as e:
            where = getattr(fragment, "path", None)
            column = _failing_column(lambda c, f=fragment: f.to_table(columns=[c]), columns)
            raise _damaged(e, src, where, span=f", file {where!r}" if where else "",
                           column=column) from None


def _open_parquet(path: str, columns: list[str], src: str):
    """The ``pyarrow.parquet.ParquetFile`` at ``path``, its ``columns`` present, the first
    (the query ids) read as the file's dictionary when it is a string column."""
    pa = _pyarrow()
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path)
    except _decode_errors() as e:
        raise _damaged(f"not a readable Parquet file ({e})", src, path) from None
    _check_names(pf.schema_arrow, columns, src)
    qtype = pf.schema_arrow.field(columns[0]).type
    if pa.types.is_string(qtype) or pa.types.is_large_string(qtype):
        # query ids as the file's dictionary (per row group) and indices: each distinct id
        # is decoded once, not once per row (a tenth of a 10M-line run's time)
        pf = pq.ParquetFile(path, read_dictionary=[columns[0]])
    return pf


def read_row_groups(path: str, groups: list[int], columns: list[str]):
    """(row groups ``groups`` of the Parquet file ``path`` as a Table of ``columns``, the
    file's row number of the table's first row), read as :func:`batches` reads the file
    (names and types checked first)."""
    src = describe(path, "run")
    pf = _open_parquet(path, columns, src)
    _check_types(pf.schema_arrow, columns, src)
    first_row = sum(pf.metadata.row_group(g).num_rows for g in range(groups[0]))
    try:
        return pf.read_row_groups(groups, columns=columns), first_row
    except _decode_errors() as e:
        for g in groups:  # the first damaged one, and its column
            column = _failing_column(lambda c, g=g: pf.read_row_group(g, columns=[c]), columns)
            if column is not None:
                raise _damaged(e, src, path, row_group=g, column=column) from None
        span = f"{groups[0]}" if len(groups) == 1 else f"{groups[0]}-{groups[-1]}"
        raise _damaged(e, src, path, span=f", row group{'s' if len(groups) > 1 else ''} "
                                          f"{span}") from None


def _check_names(schema, columns: list[str], src: str) -> None:
    try:
        names = list(schema.names)
    except UnicodeDecodeError as e:  # an IPC stream's schema is read unchecked
        raise _damaged(f"a column name is not UTF-8 ({e})", src, None) from None
    for c in columns:
        if c not in names:
            shown = ", ".join(map(repr, names[:20])) + (", ..." if len(names) > 20 else "")
            cls, value = (("Qrels", "relevance_col") if src.startswith("qrels")
                          else ("Run", "score_col"))
            raise InputError(f"{src}: no column {c!r} (columns: {shown}); name the columns "
                             f"with qafast.{cls}.from_arrow(..., query_col=, doc_col=, "
                             f"{value}=)")


def batches(source, columns: list[str], src: str) -> Iterator[Any]:
    """The rows of ``columns`` as record batches, in order; the column types are checked
    before a row is read."""
    schema, reader = _schema_and_reader(source, columns, src)
    _check_types(schema, columns, src)
    return reader()


def read_table(source, columns: list[str], src: str):
    """The whole of ``columns`` as one Table (types checked first)."""
    pa = _pyarrow()
    schema, reader = _schema_and_reader(source, columns, src)
    _check_types(schema, columns, src)
    return pa.Table.from_batches(list(reader()),
                                 schema=pa.schema([schema.field(c) for c in columns]))


# --------------------------------------------------------------------------------------------
# Types

def _value_type(t):
    pa = _pyarrow()
    return t.value_type if pa.types.is_dictionary(t) else t


def _is_id_type(t) -> bool:
    pa = _pyarrow()
    t = _value_type(t)
    return (pa.types.is_integer(t) or pa.types.is_string(t) or pa.types.is_large_string(t)
            or pa.types.is_binary(t) or pa.types.is_large_binary(t)
            or getattr(pa.types, "is_string_view", lambda _: False)(t)
            or getattr(pa.types, "is_binary_view", lambda _: False)(t))


def _check_types(schema, columns: list[str], src: str) -> None:
    pa = _pyarrow()
    qcol, dcol, vcol = columns
    for c, what in ((qcol, "query ids"), (dcol, "document ids")):
        t = schema.field(c).type
        if not _is_id_type(t):
            raise InputTypeError(f"{src}: column {c!r} ({what}) is of type {t}; ids must be "
                            "strings or integers (or dictionary-encoded strings)")
    t = _value_type(schema.field(vcol).type)
    grades = src.startswith("qrels")
    ok = (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t)
          or (grades and pa.types.is_boolean(t)))
    if not ok:
        what = "relevance grades" if grades else "scores"
        raise InputTypeError(f"{src}: column {vcol!r} ({what}) is of type {t}; expected "
                        f"{'integers' if grades else 'numbers (floating point or integer)'}")


# --------------------------------------------------------------------------------------------
# Encoding

@dataclass(eq=False)
class ArrowColumns:
    """One batch of rows, encoded (see the module docstring).

    ``vocab`` is None for integer document ids (``doc_keys`` are the ids, shifted down by
    2**63 when ``id_bias``), else ``(hashes, tiekeys, key_off, blob)`` indexed by
    ``doc_keys``."""

    query_ids: list
    query_index: np.ndarray
    doc_keys: np.ndarray
    vocab: tuple | None
    values: np.ndarray
    id_bias: bool = False


def _numbers(arr, where: str = "Arrow data") -> np.ndarray:
    """The values of an Arrow array of fixed-width numbers without nulls, read from its data
    buffer (no copy); other types through pyarrow. pyarrow's own conversion (``np.asarray``,
    ``to_numpy``) imports pandas where it is installed: 0.2 s and 50 MB on the first Parquet
    run of a process, for arrays numpy reads as they are."""
    pa = _pyarrow()
    t = arr.type
    if not (pa.types.is_integer(t) or pa.types.is_floating(t)) or arr.null_count:
        return np.asarray(arr)
    dtype = np.dtype(t.to_pandas_dtype())  # a numpy type for these; pandas is not imported
    if len(arr) == 0:
        return np.zeros(0, dtype=dtype)
    return np.frombuffer(_data_buffer(arr, dtype.itemsize, where), dtype=dtype,
                         count=len(arr), offset=arr.offset * dtype.itemsize)


def _data_buffer(arr, itemsize: int, where: str, *, extra: int = 0, bits: bool = False):
    """Buffer 1 of an Array (its values, or a string array's offsets: ``extra`` 1), or with
    ``bits`` buffer 0 (the validity bits), checked to be as long as the array needs before
    anything reads it: a damaged IPC stream's record batch can give a shorter one, which
    neither pyarrow's reader nor its compute functions check (numpy refused with a bare
    ValueError). ``where`` leads the message (the source and column)."""
    count = arr.offset + len(arr) + extra
    buf = arr.buffers()[0 if bits else 1]
    need = (count + 7) // 8 if bits else count * itemsize
    if buf is None or buf.size < need:
        what = "validity bits" if bits else "offsets" if extra else "values"
        raise InputError(f"{where} is not valid Arrow data: its {len(arr)} rows need {need} "
                         f"bytes of {what}, the buffer holds {0 if buf is None else buf.size}")
    return buf


def _chunks(col) -> list:
    return list(col.chunks) if hasattr(col, "chunks") else [col]


def _first_null(col, name: str, src: str) -> int:
    """Row of the first null of a column (an Array or ChunkedArray), or -1."""
    if col.null_count == 0:
        return -1
    base = 0
    for chunk in _chunks(col):
        if chunk.null_count:
            if chunk.buffers()[0] is not None:  # the validity bits, checked to be there
                _data_buffer(chunk, 0, f"{src}: column {name!r}", bits=True)
            valid = np.asarray(chunk.is_valid())
            return base + int(np.flatnonzero(~valid)[0])
        base += len(chunk)
    return -1


def _null_error(src: str, column: str, row: int, row_base: int) -> InputError:
    return InputError(f"{src}: column {column!r} is null at row {row_base + row}; every row "
                      "needs a query id, a document id and a value", field=column)


def _validated(arr, name: str, src: str, what: str):
    """``arr`` (an Array or ChunkedArray) after pyarrow's full validation: offsets in order
    and within the data, UTF-8 text, views within their buffers. An IPC stream, a Feather
    file or an array made from raw buffers may break any of these, and pyarrow's own
    functions (dictionary encoding, casts, ``to_pylist``) read where the offsets point."""
    pa = _pyarrow()
    try:
        arr.validate(full=True)
    except pa.ArrowException as e:
        raise InputError(f"{src}: column {name!r} ({what}) is not valid Arrow data: {e}",
                         field=name) from None
    return arr


def _dictionary_indices(chunks, name: str, src: str, row_base: int) -> np.ndarray:
    """The int64 indices of a dictionary-encoded column without nulls, each chunk's checked
    against that chunk's own dictionary. Arrow does not promise them in range: IPC streams,
    Feather and damaged Parquet files can carry any value, and
    ``DictionaryArray.from_arrays(..., safe=False)`` checks nothing. Unifying the
    dictionaries, taking from them or using the indices as keys all read where an index
    points, so nothing else may see them first."""
    parts = []
    base = row_base
    for chunk in chunks:
        idx = _numbers(chunk.indices, f"{src}: column {name!r}")
        size = len(chunk.dictionary)
        # compared in the indices' own type, so a uint64 index above 2**63 is caught too
        if len(idx) and (idx.min() < 0 or idx.max() >= size):
            i = int(np.flatnonzero((idx < 0) | (idx >= size))[0])
            raise InputError(f"{src}: column {name!r}, row {base + i}: dictionary index "
                             f"{idx[i].item()} is outside the column's dictionary of {size} "
                             f"{'entry' if size == 1 else 'entries'}", field=name)
        parts.append(idx.astype(np.int64, copy=False))
        base += len(chunk)
    return np.concatenate(parts) if len(parts) > 1 else parts[0] if parts else _EMPTY_I64


def _query_codes(col, name: str, src: str, row_base: int):
    """(distinct query ids as Python objects, int64 index per row), ids in first-seen
    order: a grouped run gives a non-decreasing index."""
    import pyarrow.compute as pc

    pa = _pyarrow()
    i = _first_null(col, name, src)
    if i >= 0:
        raise _null_error(src, name, i, row_base)
    if not isinstance(col, pa.ChunkedArray):
        col = pa.chunked_array([col])
    if pa.types.is_dictionary(col.type):
        _dictionary_indices(col.chunks, name, src, row_base)
        for chunk in col.chunks:
            _validated(chunk.dictionary, name, src, "its dictionary")
        if col.num_chunks > 1:
            col = col.unify_dictionaries()
        dictionary = (col.chunk(0).dictionary if col.num_chunks
                      else pa.array([], col.type.value_type))
        if _is_binary(dictionary.type):  # ids as str, as a plain binary column's
            dictionary = _utf8(dictionary, name, src, _entry_row(
                lambda: np.concatenate([_numbers(c.indices) for c in col.chunks]), row_base))
        indices = pa.chunked_array([c.indices for c in col.chunks], col.type.index_type)
        encoded = pc.dictionary_encode(indices)
        positions = _unified(encoded)
        names_arr = dictionary.take(positions[0])
    else:
        _validated(col, name, src, "query ids")
        if _is_binary(col.type):
            col = _utf8(col, name, src, lambda k: f"row {row_base + k}")
        encoded = pc.dictionary_encode(col)
        positions = _unified(encoded)
        names_arr = positions[0]
    qidx = positions[1]
    if names_arr.null_count:
        # a dictionary entry that is null, used by some row
        bad = int(np.flatnonzero(~np.asarray(names_arr.is_valid()))[0])
        raise _null_error(src, name, int(np.flatnonzero(qidx == bad)[0]), row_base)
    names = names_arr.to_pylist()
    if len(set(names)) != len(names):
        # a dictionary holding one value twice: one query, one index
        first: dict = {}
        remap = np.fromiter((first.setdefault(q, len(first)) for q in names), np.int64,
                            count=len(names))
        names = list(first)
        qidx = remap[qidx]
    return names, qidx


def _unified(encoded):
    """(dictionary, int64 indices) of a dictionary_encode result (chunks unified)."""
    pa = _pyarrow()
    if encoded.num_chunks > 1:
        encoded = encoded.unify_dictionaries()
    if encoded.num_chunks == 0:
        return pa.array([], encoded.type.value_type), _EMPTY_I64
    dictionary = encoded.chunk(0).dictionary
    idx = np.concatenate([_numbers(c.indices).astype(np.int64, copy=False)
                          for c in encoded.chunks])
    return dictionary, idx


def _entry_row(indices, row_base: int):
    """``where(k)`` for dictionary entry k in messages: the first row that uses it (from
    ``indices()``, the rows' indices, called only then), or the entry itself."""
    def where(k: int) -> str:
        rows = np.flatnonzero(np.asarray(indices()) == k)
        return f"row {row_base + int(rows[0])}" if len(rows) else f"dictionary entry {k}"

    return where


def _is_binary(t) -> bool:
    pa = _pyarrow()
    return pa.types.is_binary(t) or pa.types.is_large_binary(t) or str(t) == "binary_view"


def _utf8(col, name: str, src: str, where):
    """A binary column (an Array or ChunkedArray, validated) as large strings; an id that is
    not UTF-8 is an InputError naming it by ``where(k)``, k its position in the column."""
    pa = _pyarrow()
    try:
        return col.cast(pa.large_string())
    except pa.ArrowInvalid:
        pass
    # the first id that is not UTF-8, looked for only once the cast has failed
    base = 0
    for chunk in _chunks(col):
        for lo in range(0, len(chunk), 1 << 16):
            for k, value in enumerate(chunk.slice(lo, 1 << 16).to_pylist()):
                try:
                    value.decode("utf-8")
                except UnicodeDecodeError as e:
                    raise InputError(f"{src}: column {name!r}, {where(base + lo + k)}: the id "
                                     f"{value[:60]!r} is not UTF-8 text ({e.reason} at byte "
                                     f"{e.start})", field=name) from None
        base += len(chunk)
    raise InputError(f"{src}: column {name!r} holds bytes that are not UTF-8 text", field=name)


def _string_table(arr, name: str, src: str, where):
    """(hashes, tiekeys, key_off, blob) of a string Array's values, read from its buffers;
    ``where(k)`` names value k in messages. The kernel checks each value's offsets against
    the data buffer and its UTF-8 (nothing before it reads them), so a plain string column
    needs no validation pass of pyarrow's."""
    pa = _pyarrow()
    t = arr.type
    if not (pa.types.is_string(t) or pa.types.is_large_string(t)):
        arr = _utf8(_validated(arr, name, src, "document ids"), name, src, where)
        t = arr.type
    n = len(arr)
    width = np.int32 if pa.types.is_string(t) else np.int64
    bufs = arr.buffers()
    if n == 0:
        return _EMPTY_I64, _EMPTY_I64, np.zeros(1, dtype=np.int64), _EMPTY_U8
    _data_buffer(arr, np.dtype(width).itemsize, f"{src}: column {name!r}", extra=1)
    off = np.frombuffer(bufs[1], dtype=width, count=n + 1,
                        offset=arr.offset * np.dtype(width).itemsize).astype(np.int64)
    blob = (np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None and bufs[2].size
            else _EMPTY_U8)
    hashes = np.empty(n, dtype=np.int64)
    tiekeys = np.empty(n, dtype=np.int64)
    k = hash_keys(off, blob, hashes, tiekeys)
    if k >= 0:
        lo, hi = int(off[k]), int(off[k + 1])
        if 0 <= lo <= hi <= len(blob):
            raise InputError(f"{src}: column {name!r}, {where(k)}: the id's bytes are not UTF-8 "
                             "text", field=name)
        raise InputError(f"{src}: column {name!r}, {where(k)}: not valid Arrow data: the "
                         f"id's offsets {lo}..{hi} are not within the column's {len(blob)} "
                         "bytes of data", field=name)
    return hashes, tiekeys, off, blob


def _merge_tables(tables):
    """One (hashes, tiekeys, key_off, blob) of several, keys numbered one after another."""
    if len(tables) == 1:
        return tables[0]
    hashes = np.concatenate([t[0] for t in tables])
    tiekeys = np.concatenate([t[1] for t in tables])
    blobs, offs, base = [], [np.zeros(1, dtype=np.int64)], 0
    for _h, _t, off, blob in tables:
        part = blob[off[0]:off[-1]]
        blobs.append(part)
        offs.append(off[1:] - off[0] + base)
        base += len(part)
    return hashes, tiekeys, np.concatenate(offs), (np.concatenate(blobs) if base
                                                    else _EMPTY_U8)


def _integer_keys(values: np.ndarray):
    """int64 keys of integer ids: (keys, biased), as ranking's integer ids are stored."""
    if (values.dtype == np.uint64 and len(values)
            and int(values.max()) > _INT64_MAX):
        return (values ^ np.uint64(_ID_BIAS)).view(np.int64), True
    return values.astype(np.int64), False


def _doc_keys(col, name: str, src: str, row_base: int):
    """(int64 keys per row, vocab or None, id_bias)."""
    pa = _pyarrow()
    i = _first_null(col, name, src)
    if i >= 0:
        raise _null_error(src, name, i, row_base)
    chunks = _chunks(col)
    t = col.type
    if pa.types.is_dictionary(t):
        indices = _dictionary_indices(chunks, name, src, row_base)
        for chunk in chunks:  # unifying, filling nulls and hashing read the strings
            _validated(chunk.dictionary, name, src, "its dictionary")
        if len(chunks) > 1:
            chunks = list(pa.chunked_array(chunks, t).unify_dictionaries().chunks)
            indices = _dictionary_indices(chunks, name, src, row_base)
        dictionary = chunks[0].dictionary if chunks else pa.array([], t.value_type)
        if dictionary.null_count:
            null = ~np.asarray(dictionary.is_valid())
            hit = np.flatnonzero(null[indices])
            if len(hit):
                raise _null_error(src, name, int(hit[0]), row_base)
            dictionary = dictionary.fill_null("" if not pa.types.is_integer(
                dictionary.type) else 0)
        if pa.types.is_integer(dictionary.type):
            keys, bias = _integer_keys(_numbers(dictionary, f"{src}: column {name!r}"))
            return keys[indices], None, bias
        # the dictionary is hashed once; each row is its index
        return indices, _string_table(dictionary, name, src,
                                      _entry_row(lambda: indices, row_base)), False
    if pa.types.is_integer(t):
        values = (np.concatenate([_numbers(c, f"{src}: column {name!r}") for c in chunks]) if chunks
                  else np.zeros(0, dtype=t.to_pandas_dtype()))
        keys, bias = _integer_keys(values)
        return keys, None, bias
    tables, base = [], row_base
    for c in chunks:
        if len(c):
            tables.append(_string_table(c, name, src, lambda k, b=base: f"row {b + k}"))
        base += len(c)
    if not tables:
        return _EMPTY_I64, (_EMPTY_I64, _EMPTY_I64, np.zeros(1, dtype=np.int64), _EMPTY_U8), False
    vocab = _merge_tables(tables)
    return np.arange(len(vocab[0]), dtype=np.int64), vocab, False


def _values(col, name: str, src: str, integer_values: bool, row_base: int, names, qidx):
    pa = _pyarrow()
    i = _first_null(col, name, src)
    if i >= 0:
        raise _null_error(src, name, i, row_base)
    if pa.types.is_dictionary(col.type):
        for chunk in _chunks(col):
            _validated(chunk.dictionary, name, src, "its dictionary")
        _dictionary_indices(_chunks(col), name, src, row_base)
        col = col.cast(col.type.value_type)
    if pa.types.is_decimal(col.type):
        return _decimal_values(col, name, src, integer_values, row_base, names, qidx)
    chunks = _chunks(col)
    if chunks:
        v = np.concatenate([_numbers(c, f"{src}: column {name!r}") for c in chunks])
    else:
        v = np.zeros(0, dtype=np.float64)
    return _checked_values(v, name, src, integer_values, row_base, names, qidx)


def _checked_values(v: np.ndarray, name: str, src: str, integer_values: bool, row_base: int,
                    names, qidx) -> np.ndarray:
    """Numbers read from a column as int32 grades (integral and within int32) or float64
    scores (not NaN)."""
    if integer_values:
        if v.dtype.kind == "f":
            bad = ~np.isfinite(v) | (v != np.round(v))
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise InputError(f"{src}: column {name!r}, row {row_base + i} (query "
                                 f"{names[qidx[i]]!r}): grade {v[i].item()!r} is not an integer")
        if len(v) and v.dtype.kind != "b" and (v.min() < -2**31 or v.max() >= 2**31):
            i = int(np.flatnonzero((v < -2**31) | (v >= 2**31))[0])
            raise InputError(f"{src}: column {name!r}, row {row_base + i}: grade {v[i].item()} is "
                             "outside the 32-bit range")
        return np.ascontiguousarray(v, dtype=np.int32)
    v = np.ascontiguousarray(v, dtype=np.float64)
    nan = np.isnan(v)
    if nan.any():
        i = int(np.flatnonzero(nan)[0])
        raise InputError(f"{src}: column {name!r}, row {row_base + i} (query "
                         f"{names[qidx[i]]!r}): score is NaN")
    return v


def _decimal_values(col, name: str, src: str, integer_values: bool, row_base: int, names,
                    qidx) -> np.ndarray:
    """A decimal column's values: grades as integers when each is a whole number (else an
    InputError naming the row), scores as the nearest double to each decimal, as
    ``float(decimal.Decimal(text))`` gives it (pyarrow's own cast to float64 is off by a
    unit in the last place for a quarter of 4-digit decimals, which would break ties that
    the same run as text keeps)."""
    pa = _pyarrow()
    if integer_values:
        try:
            ints = col.cast(pa.int64())  # refuses a fraction and an int64 overflow
        except pa.ArrowInvalid:
            i, value = _first_fraction(col)
            what = ("is outside the 32-bit range" if value == value.to_integral_value()
                    else "is not an integer")
            raise InputError(f"{src}: column {name!r}, row {row_base + i} (query "
                             f"{names[qidx[i]]!r}): grade {value} {what}", field=name) from None
        v = np.concatenate([_numbers(c) for c in _chunks(ints)]) if len(ints) else (
            np.zeros(0, dtype=np.int64))
    else:
        where = f"{src}: column {name!r}"
        v = (np.concatenate([_decimal_doubles(c, where) for c in _chunks(col)]) if len(col)
             else np.zeros(0, dtype=np.float64))
    return _checked_values(v, name, src, integer_values, row_base, names, qidx)


def _first_fraction(col):
    """(position, value) of the first decimal of ``col`` that is not a whole number within
    int64 (the cast to int64 failed, so there is one)."""
    base = 0
    for chunk in _chunks(col):
        for lo in range(0, len(chunk), 1 << 16):
            for k, d in enumerate(chunk.slice(lo, 1 << 16).to_pylist()):
                if d != d.to_integral_value() or not -2**63 <= d < 2**63:
                    return base + lo + k, d
        base += len(chunk)
    raise AssertionError("the cast to int64 failed on whole numbers")  # pragma: no cover


_POW10 = [10.0 ** k for k in range(23)]  # each exact


def _decimal_doubles(arr, where: str) -> np.ndarray:
    """The nearest double to each decimal of an Array without nulls (decimal32 to 256).
    A decimal whose unscaled integer is below 2**53 in magnitude and whose scale is within
    +-22 is one exactly rounded division (or multiplication) of two exact doubles, as the
    TREC reader converts such scores; any other goes through its exact text."""
    pa = _pyarrow()
    t = arr.type
    n = len(arr)
    size = t.bit_width // 8
    if n == 0:
        return np.zeros(0, dtype=np.float64)
    buf = _data_buffer(arr, size, where)
    if size <= 8:  # decimal32 and decimal64: the unscaled integer itself
        low = np.frombuffer(buf, dtype=f"<i{size}", count=n,
                            offset=arr.offset * size).astype(np.int64)
        fits = np.ones(n, dtype=bool)
    else:  # 64-bit words, least significant first
        words = np.frombuffer(buf, dtype="<i8", count=n * (size // 8),
                              offset=arr.offset * size).reshape(n, size // 8)
        low = words[:, 0]
        # an unscaled integer within int64: every higher word is the lowest one's sign
        fits = (words[:, 1:] == (low >> 63)[:, None]).all(axis=1)
    fast = fits & (low > -2**53) & (low < 2**53) & (abs(t.scale) <= 22)
    unscaled = np.where(fast, low, 0).astype(np.float64)
    out = (unscaled / _POW10[t.scale] if t.scale >= 0 else unscaled * _POW10[-t.scale]
           ) if abs(t.scale) <= 22 else unscaled
    slow = np.flatnonzero(~fast)
    if len(slow):
        text = arr.take(pa.array(slow)).cast(pa.string()).to_pylist()
        out[slow] = [float(x) for x in text]
    return out


def encode(batch, columns: list[str], integer_values: bool, src: str, *,
           row_base: int = 0, query_codes=None) -> ArrowColumns:
    """Encode a Table or RecordBatch holding ``columns`` (query, document, value).
    ``row_base`` numbers its first row in messages; ``query_codes`` is the result of
    :func:`query_codes` for it when the caller has it already."""
    qcol, dcol, vcol = columns
    names, qidx = (query_codes if query_codes is not None
                   else _query_codes(batch.column(qcol), qcol, src, row_base))
    keys, vocab, bias = _doc_keys(batch.column(dcol), dcol, src, row_base)
    values = _values(batch.column(vcol), vcol, src, integer_values, row_base, names, qidx)
    return ArrowColumns(names, qidx, keys, vocab, values, bias)


def query_codes(batch, column: str, src: str, row_base: int = 0):
    """(distinct query ids, int64 index per row) of a batch, ids in first-seen order."""
    return _query_codes(batch.column(column), column, src, row_base)
