"""Qrels and runs from Arrow tables and Parquet files (``qafast.io.arrow`` reads them).

A run is evaluated as it is read, a batch of complete queries at a time, exactly as a
grouped TREC run file is: rows are read a Parquet row group (or a record batch) at a time,
the rows of the last query of a batch wait for the next batch, and each batch of complete
queries is ranked and measured, then dropped. A run whose queries' rows are not together is
read whole instead (a Parquet source is read again; a ``RecordBatchReader``, which gives its
batches once, keeps those read so far): it then takes the memory of a whole :class:`Run`.
"""

from __future__ import annotations

import numpy as np

from .errors import InputTypeError
from .io import arrow as _arrow
from .io.trec import _read_ahead
from .ranking import Qrels, Run, _Chunked, _grouped, _workers

__all__ = ["evaluate_stream", "from_arrow", "is_source"]


def is_source(data) -> bool:
    """Whether ``data`` is an Arrow object or a Parquet path."""
    return _arrow.is_arrow(data) or _arrow.is_parquet(data)


def _names(cls, query_col, doc_col, value_col) -> list[str]:
    for what, c in (("query_col", query_col), ("doc_col", doc_col),
                    ("relevance_col" if cls is Qrels else "score_col", value_col)):
        if not isinstance(c, str):
            raise InputTypeError(f"{what} must be a column name (str), not {type(c).__name__}")
    return [query_col, doc_col, value_col]


def _from_encoded(cls, enc: _arrow.ArrowColumns, src: str):
    integer_values = cls is Qrels
    obj = _grouped(cls, enc.query_ids, enc.query_index, enc.doc_keys, enc.values, enc.vocab,
                   src, None, integer_values, id_bias=enc.id_bias)
    if cls is Run:
        obj.run_id = None
    return obj


def from_arrow(cls, source, *, query_col: str = "query_id", doc_col: str = "doc_id",
               value_col: str | None = None, src: str | None = None, row_base: int = 0):
    """A Qrels or Run from an Arrow or Parquet source, read whole. ``src`` names the source
    in messages and ``row_base`` numbers its first row there, for a table that holds part of
    a file (a Dask task's row groups)."""
    if value_col is None:
        value_col = "relevance" if cls is Qrels else "score"
    names = _names(cls, query_col, doc_col, value_col)
    if src is None:
        src = _arrow.describe(source, "qrels" if cls is Qrels else "run")
    table = _arrow.read_table(source, names, src)
    return _from_encoded(cls, _arrow.encode(table, names, cls is Qrels, src,
                                            row_base=row_base), src)


def evaluate_stream(qrels: Qrels, source, columns, *, query_col: str = "query_id",
                    doc_col: str = "doc_id", score_col: str = "score", **options):
    """(query ids in id order, per-query values) of a run read a batch at a time; None when
    its queries' rows are not together and the source can be read again (the caller reads
    it whole), or the whole :class:`Run` when it cannot (a ``RecordBatchReader``). With
    ``workers`` above 1, a thread of its own reads the batches ahead."""
    names = _names(Run, query_col, doc_col, score_col)
    src = _arrow.describe(source, "run")
    stream = _arrow.batches(source, names, src)
    if _workers(options["workers"]) > 1 and type(source).__name__ not in ("Table", "RecordBatch"):
        # reading a Parquet row group (decompressing and decoding it) releases the GIL, and
        # was half of a 20M-row run's time on the thread that measures
        stream = _read_ahead(stream, 2, "qafast-arrow-reader")
    try:
        return _measure_batches(qrels, stream, columns, names, src,
                                type(source).__name__ == "RecordBatchReader", options)
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            close()  # a reading thread stops and is joined


def _measure_batches(qrels: Qrels, stream, columns, names: list[str], src: str, once: bool,
                     options: dict):
    import pyarrow as pa

    query_col = names[0]
    kept: list | None = [] if once else None
    chunks = _Chunked(qrels, columns, options)
    done: set = set()          # queries measured already
    pending: list = []         # batches holding the rows of the last query met so far
    first = 0                  # queries measured so far
    row_base = 0               # rows before the pending ones

    def measure(table, codes, rows: int) -> None:
        nonlocal first, row_base
        enc = _arrow.encode(table, names, False, src, row_base=row_base, query_codes=codes)
        run = _from_encoded(Run, enc, src)
        chunks.add(run, first)
        first += len(run.query_ids)
        done.update(codes[0])
        row_base += rows

    def whole():
        if not once:
            return None
        table = pa.Table.from_batches(kept + list(stream))
        return _from_encoded(Run, _arrow.encode(table, names, False, src), src)

    for batch in stream:
        if kept is not None:
            kept.append(batch)
        if not len(batch):
            continue
        table = pa.Table.from_batches(pending + [batch])
        qnames, qidx = _arrow.query_codes(table, query_col, src, row_base)
        # first-seen numbering: a run whose queries' rows are together numbers its rows in
        # non-decreasing order, and no query of the batch was measured before
        if bool((qidx[1:] < qidx[:-1]).any()) or not done.isdisjoint(qnames):
            return whole()
        last = int(qidx[-1])
        cut = int(np.searchsorted(qidx, last))
        if cut:
            measure(table.slice(0, cut), (qnames[:last], qidx[:cut]), cut)
        pending = table.slice(cut).to_batches()
    if pending:
        table = pa.Table.from_batches(pending)
        measure(table, _arrow.query_codes(table, query_col, src, row_base), table.num_rows)
    return chunks.result()
