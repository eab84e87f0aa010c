"""Runs from Arrow tables and Parquet files evaluated as they are read (``qafast.io.arrow``
reads them; ``_ranked.from_arrow`` builds a whole Qrels or Run from them).

A run is evaluated as it is read, a batch of complete queries at a time, exactly as a
grouped TREC run file is: rows are read a Parquet row group (or a record batch) at a time,
the rows of the last query of a batch wait for the next batch, and each batch of complete
queries is ranked and measured, then dropped. A run whose queries' rows are not together is
read whole instead (a Parquet source is read again; a ``RecordBatchReader``, which gives its
batches once, keeps those read so far): it then takes the memory of a whole :class:`Run`.
"""

from __future__ import annotations

import numpy as np

from ._engine import Chunked
from ._ranked import Qrels, Run, from_arrow_columns
from ._threads import resolve_workers
from .io import arrow as _arrow
from .io.trec import read_ahead

__all__ = ["evaluate_stream"]


def evaluate_stream(qrels: Qrels, source, columns, *, query_col: str = "query_id",
                    doc_col: str = "doc_id", score_col: str = "score", **options):
    """(query ids in id order, per-query values) of a run read a batch at a time; None when
    its queries' rows are not together and the source can be read again (the caller reads
    it whole), or the whole :class:`Run` when it cannot (a ``RecordBatchReader``). With
    ``workers`` above 1, a thread of its own reads the batches ahead."""
    names = [query_col, doc_col, score_col]
    src = _arrow.describe(source, "run")
    kind = _arrow.arrow_kind(source)
    stream = _arrow.batches(source, names, src)
    if resolve_workers(options["workers"]) > 1 and kind not in ("Table", "RecordBatch"):
        # reading a Parquet row group (decompressing and decoding it) releases the GIL, and
        # was half of a 20M-row run's time on the thread that measures
        stream = read_ahead(stream, 2, "qafast-arrow-reader")
    try:
        # a RecordBatchReader (an IPC stream's too: RecordBatchStreamReader) gives its
        # batches once: those read are kept, in case the run turns out not to be grouped
        return _measure_batches(qrels, stream, columns, names, src,
                                kind == "RecordBatchReader", options)
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            close()  # a reading thread stops and is joined


def _measure_batches(qrels: Qrels, stream, columns, names: list[str], src: str, once: bool,
                     options: dict):
    import pyarrow as pa

    query_col = names[0]
    kept: list | None = [] if once else None
    chunks = Chunked(qrels, columns, options)
    done: set = set()          # queries measured already
    pending: list = []         # batches holding the rows of the last query met so far
    first = 0                  # queries measured so far
    row_base = 0               # rows before the pending ones

    def measure(table, codes, rows: int) -> None:
        nonlocal first, row_base
        enc = _arrow.encode(table, names, False, src, row_base=row_base, query_codes=codes)
        run = from_arrow_columns(Run, enc, src)
        chunks.add(run, first)
        first += len(run.query_ids)
        done.update(codes[0])
        row_base += rows

    def whole():
        if not once:
            return None
        table = pa.Table.from_batches(kept + list(stream))
        return from_arrow_columns(Run, _arrow.encode(table, names, False, src), src)

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
