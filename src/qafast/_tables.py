"""Qrels and runs written out as tables: pandas DataFrames, Arrow tables, Parquet files.

One row per entry (a judgment or a retrieved document), three columns named as
``Qrels.from_df`` / ``Run.from_df`` and their ``from_arrow`` read them by default
(``query_id``, ``doc_id``, then ``relevance`` or ``score``), so a table read back needs no
argument and gives the same data. Rows come in the stored order: queries in the order they
were first met, each query's entries together. A query with no entries has no row.

The columns are built from the encoded arrays, not from Python dicts: query ids repeated by
each query's count, document ids from the byte table (each distinct id decoded once for
pandas; taken from the bytes as they are for Arrow), values as they are stored (``float64``
scores, ``int32`` grades). pandas and pyarrow are imported only here, when asked for.
"""

from __future__ import annotations

import os

import numpy as np

from .errors import InputError

__all__ = ["to_arrow", "to_frame", "to_parquet"]

_ID_BIAS = 2**63
_STRING_MAX = 2**31 - 1   # the most bytes an Arrow string (not large_string) array holds


def _pyarrow():
    try:
        import pyarrow
    except ImportError:
        raise ImportError("writing Arrow tables and Parquet files needs pyarrow: "
                          "pip install 'qafast[arrow]'") from None
    return pyarrow


def _counts(obj) -> np.ndarray:
    return np.diff(np.asarray(obj.offsets, dtype=np.int64))


def _integer_doc_ids(obj) -> np.ndarray:
    """Integer document ids as int64, or as uint64 when they were stored biased (ids of
    2**63 and above)."""
    if obj.id_bias:
        return np.asarray(obj.hashes, dtype=np.int64).view(np.uint64) ^ np.uint64(_ID_BIAS)
    return np.array(obj.hashes, dtype=np.int64)  # a copy: the stored array may be read-only


def _entry_keys(obj) -> np.ndarray | None:
    """Each entry's index into the string table, or None when entry i is key i."""
    return None if obj.keys is None else np.asarray(obj.keys, dtype=np.int64)


def _decoded_strings(obj) -> np.ndarray:
    """The string table's ids as an object array of str, each decoded once: the bytes are
    decoded whole and cut at character offsets found from the byte offsets."""
    blob = np.asarray(obj.blob, dtype=np.uint8)
    key_off = np.asarray(obj.key_off, dtype=np.int64)
    text = blob.tobytes().decode("utf-8")
    if len(text) == len(blob):  # ASCII: byte offsets are character offsets
        char_off = key_off
    else:
        # a character starts at every byte that is not a UTF-8 continuation byte
        starts = np.zeros(len(blob) + 1, dtype=np.int64)
        np.cumsum((blob & 0xC0) != 0x80, out=starts[1:])
        char_off = starts[key_off]
    bounds = char_off.tolist()
    out = np.empty(len(bounds) - 1, dtype=object)
    out[:] = [text[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
    return out


def _query_array(obj) -> np.ndarray:
    if obj.query_ids and isinstance(obj.query_ids[0], int):
        return obj.query_array()
    out = np.empty(len(obj.query_ids), dtype=object)
    out[:] = obj.query_ids
    return out


def to_frame(obj, value_col: str):
    """A pandas DataFrame of ``obj``'s entries (see the module docstring)."""
    import pandas as pd

    if obj.key_off is None:
        docs = _integer_doc_ids(obj)
    else:
        docs = _decoded_strings(obj)
        keys = _entry_keys(obj)
        if keys is not None:
            docs = docs[keys]
    queries = np.repeat(_query_array(obj), _counts(obj))
    return pd.DataFrame({"query_id": queries, "doc_id": docs,
                         value_col: np.array(obj.values, copy=True)})


def _arrow_query_ids(pa, obj, counts: np.ndarray):
    ids = obj.query_ids
    index = pa.array(np.repeat(np.arange(len(ids), dtype=np.int64), counts))
    if ids and isinstance(ids[0], int):
        q = obj.query_array()
        if q.dtype == object:  # outside int64: uint64 if they all fit there
            if min(ids) < 0 or max(ids) >= 2**64:
                raise InputError(f"{obj.source}: integer query ids run from {min(ids)} to "
                                 f"{max(ids)}, which no 64-bit integer column holds; use "
                                 "str query ids to write this table")
            q = np.array(ids, dtype=np.uint64)
        return pa.array(q).take(index)
    sizes = np.fromiter((len(q.encode("utf-8")) for q in ids), dtype=np.int64, count=len(ids))
    big = int(sizes @ counts) > _STRING_MAX if len(ids) else False
    return pa.array(ids, type=pa.large_string() if big else pa.string()).take(index)


def _arrow_doc_ids(pa, obj):
    if obj.key_off is None:
        return pa.array(_integer_doc_ids(obj))
    key_off = np.ascontiguousarray(obj.key_off, dtype=np.int64)
    blob = np.ascontiguousarray(obj.blob, dtype=np.uint8)
    table = pa.LargeStringArray.from_buffers(len(key_off) - 1, pa.py_buffer(key_off),
                                             pa.py_buffer(blob))
    keys = _entry_keys(obj)
    sizes = np.diff(key_off)
    total = int(sizes.sum() if keys is None else sizes[keys].sum())
    docs = table if keys is None else table.take(pa.array(keys))
    return docs.cast(pa.string()) if total <= _STRING_MAX else docs


def to_arrow(obj, value_col: str):
    """A ``pyarrow.Table`` of ``obj``'s entries (see the module docstring)."""
    pa = _pyarrow()
    values = np.array(obj.values, copy=True)
    return pa.table({"query_id": _arrow_query_ids(pa, obj, _counts(obj)),
                     "doc_id": _arrow_doc_ids(pa, obj),
                     value_col: pa.array(values)})


def to_parquet(obj, value_col: str, path, options: dict):
    """Write ``obj``'s entries to a Parquet file; returns ``path``."""
    _pyarrow()
    import pyarrow.parquet as pq

    where = os.fspath(path) if isinstance(path, os.PathLike) else path
    pq.write_table(to_arrow(obj, value_col), where, **options)
    return path
