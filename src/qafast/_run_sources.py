"""One run against encoded qrels, whatever form the run takes, measured as it is read.

A TREC run file or pipe goes to ``_runfile``, an Arrow or Parquet source to ``_arrow_input``,
a dict is encoded a batch of queries at a time here; each streams batches of complete queries
into the engine's :class:`~qafast._engine.Chunked`, so that a run is never held whole when
its queries keep their rows together. Anything else (or a run whose queries do not) becomes
a whole :class:`~qafast._ranked.Run` first.
"""

from __future__ import annotations

import warnings

import numpy as np

from . import _kernels
from ._engine import Chunked, Evaluation, NoCommonQueryWarning
from ._measure_parser import Column
from ._ranked import Qrels, Run, as_run, is_arrow_source
from ._runfile import evaluate_run_source, is_run_source

__all__ = ["add_missing_queries", "evaluate_run_dict", "per_query_values"]

# entries per chunk of a run dict evaluated as it is encoded (about 10 MB of buffers)
_CHUNK_ENTRIES = 1 << 18


def evaluate_run_dict(qrels: Qrels, run: dict, columns: list[Column], **options):
    """(query ids in id order, per-query values) for a run given as a dict, which is encoded
    a chunk of queries at a time into buffers reused from chunk to chunk; each chunk is
    ranked and measured while it is in cache, and the run is never built whole (building it
    wrote and page-faulted five arrays of 8 bytes an entry). Returns None if the run holds
    something only the general path takes: it builds the Run, and converts or names it.
    """
    chunks = Chunked(qrels, columns, options)
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
                chunks.add(Chunked.run(qids, offsets[:nq + 1], values[:ne], hashes[:ne],
                                       byte_offsets[:ne + 1], blob[:int(byte_offsets[ne])],
                                       tiekeys[:ne], "run dict"), seen)
                seen += nq
            if status == 0:
                return chunks.result()
            start = start_next
        entries *= 2


def per_query_values(qrels: Qrels, run, columns: list[Column], queries: str,
                     options: dict, progress=None, ordered: bool = True
                     ) -> tuple[list, np.ndarray]:
    """(query ids, values of shape (queries, columns)) of one run against encoded qrels:
    streamed as it is read where the run allows it, otherwise through a whole ``Run``.
    ``options``: relevance_level, judged_only, max_docs, workers. Queries in id order, or
    in any order without ``ordered``."""
    if is_arrow_source(run):
        if queries == "run":
            # pyarrow's readers are loaded only for an Arrow source
            from ._arrow_input import evaluate_stream

            streamed = evaluate_stream(qrels, run, columns, **options)
            if isinstance(streamed, Run):  # an ungrouped RecordBatchReader, read once
                run = streamed
            elif streamed is not None:  # None: ungrouped, read whole below
                return streamed
    else:
        if queries == "run" and qrels.string_ids and type(run) is dict:
            streamed = evaluate_run_dict(qrels, run, columns, **options)
            if streamed is not None:
                return streamed
        if is_run_source(run):
            result = evaluate_run_source(qrels, run, columns, queries=queries,
                                         options=options, progress=progress, ordered=ordered)
            return result.ids, result.values
    ev = Evaluation(qrels, as_run(run, options["workers"]), queries=queries, **options)
    return ev.ids, ev.values(columns)


def add_missing_queries(qrels: Qrels, ids: list, values: np.ndarray, columns: list[Column],
                        options: dict) -> tuple[list, np.ndarray]:
    """``(ids, values)`` of a run's queries with every qrels query the run lacks added,
    scored on an empty ranking as trec_eval -c scores it; queries in id order."""
    have = set(ids)
    if all(q in have for q in qrels.query_ids):
        return ids, values
    empty = Run.from_arrays(np.zeros(0, dtype=object), np.zeros(0, dtype=object),
                            np.zeros(0, dtype=np.float64))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoCommonQueryWarning)
        ev = Evaluation(qrels, empty, queries="qrels", **options)
        missing = ev.values(columns)
    keep = [i for i, q in enumerate(ev.ids) if q not in have]
    all_ids = ids + [ev.ids[i] for i in keep]
    all_values = np.concatenate([values, missing[keep]])
    order = sorted(range(len(all_ids)), key=all_ids.__getitem__)
    return [all_ids[k] for k in order], np.ascontiguousarray(all_values[order])
