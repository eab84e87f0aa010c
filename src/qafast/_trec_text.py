"""TREC text qrels and runs measured without numpy: the command line's path for files small
enough that importing numpy would be most of its time.

``qafast trec`` on a 45,000-line run spent 0.17 s of its 0.26 s importing numpy, where
trec_eval takes 0.05 s in all. This path reads each file whole, parses it with the same
compiled reader, and hands the reader's buffers to the same ranking and measure kernels
that ``_engine`` calls, with ``array.array`` buffers where ``_engine`` allocates numpy
arrays; the rules they share (summaries, relstrings, ``-c``) are ``_summaries``'. It takes
only the plain case: files whose lines are grouped by query, with no duplicate document,
no grade above the supported range and a query in common. For anything else it returns
None and the caller runs the numpy path, which then raises the error or gives the warning
it always gives, so that this path can never word a message differently.
"""

from __future__ import annotations

import math
import os
import stat
from array import array
from typing import Any

from . import _kernels
from ._measure_parser import Column, column_groups, kernel_arrays
from ._measures import BY_NAME, DENSE, MAX_GRADE, NO_CUTOFF
from ._summaries import (
    LEVEL_CEILING,
    MIN_GEO_MEAN,
    pair_queries,
    relstring,
    zeroed_when_missing,
)

__all__ = ["QUICK_BYTES", "TextResult", "TrecText", "evaluate_text", "grades_in_scale",
           "read_text", "text_size"]

#: The most bytes of text (qrels and runs together) this path reads. The numpy path reads a
#: large run with a thread per core as it measures, which wins once the text takes longer
#: to read than numpy to import; up to here one thread reading whole files is as fast or
#: faster (see benchmarks/bench_cli.py).
QUICK_BYTES = 48 << 20
_GZIP_MAGIC = b"\x1f\x8b"
_EMPTY_Q = array("q")


class TrecText:
    """One TREC file, parsed and grouped: query q's lines are offsets[q]:offsets[q + 1];
    ``values`` are its float64 scores (a run) or int32 grades (qrels), ``tiekeys`` a run's
    only, each column a buffer. (Plain classes here, not dataclasses: importing dataclasses
    took 9 ms of the command line's start.)"""

    __slots__ = ("blob", "doc_offsets", "hashes", "offsets", "query_ids", "run_id", "source",
                 "tiekeys", "top_grade", "values")

    def __init__(self, query_ids: list[str], offsets: array, values: Any, hashes: Any,
                 tiekeys: Any, doc_offsets: Any, blob: Any, run_id: str | None,
                 source: str) -> None:
        self.query_ids, self.offsets, self.values = query_ids, offsets, values
        self.hashes, self.tiekeys, self.doc_offsets, self.blob = hashes, tiekeys, doc_offsets, blob
        self.run_id, self.source = run_id, source
        self.top_grade = 0

    def doc_tables(self) -> tuple[Any, Any, Any, Any]:
        """The document id tables as the kernels take them: hashes, keys (none: line order),
        key offsets, bytes."""
        return self.hashes, _EMPTY_Q, self.doc_offsets, self.blob


class TextResult:
    """One run's values, as ``_runfile.RunResult`` gives them: ``ids`` in query id order,
    ``values`` a (queries, columns) float64 memoryview."""

    __slots__ = ("ids", "relstrings", "run_id", "run_query_ids", "source", "values")

    def __init__(self, ids: list, values: Any, relstrings: dict, run_id: str | None,
                 run_query_ids: list, source: str) -> None:
        self.ids, self.values, self.relstrings = ids, values, relstrings
        self.run_id, self.run_query_ids, self.source = run_id, run_query_ids, source


def text_size(path: str) -> int | None:
    """The bytes a plain or gzip file holds, at most (gzip: 8 times what it takes), or None
    for anything but a regular file (standard input, a pipe, a missing file)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return st.st_size * (8 if path.endswith(".gz") else 1)


def read_text(path: str, is_run: bool) -> TrecText | None:
    """A TREC file parsed and grouped, or None when it is not a plain case (a malformed line,
    lines of a query apart, a document twice in a query, a grade out of range, no line)."""
    try:
        with open(path, "rb") as f:
            raw = f.read(QUICK_BYTES + 1)
    except (OSError, ValueError):
        return None
    data = _gunzip(raw, QUICK_BYTES) if raw[:2] == _GZIP_MAGIC else raw
    if data is None or len(data) > QUICK_BYTES:
        return None
    parser = _kernels._trec_Parser(is_run, False, is_run)
    batch = parser.scan_intern(data)
    if batch.error_line:
        return None
    batch.release()
    (query_ids, qidx, _, _, values, _, run_id, hashes, tiekeys, doc_offsets,
     blob) = parser.finish(False)
    if not query_ids:
        return None
    offsets = array("q", bytes(8 * (len(query_ids) + 1)))
    if not _kernels.group_offsets(qidx, offsets):
        return None
    text = TrecText(query_ids, offsets, values, hashes, tiekeys, doc_offsets, blob,
                    run_id if is_run else None, path)
    if _kernels.first_duplicate_hashed(offsets, *text.doc_tables()) >= 0:
        return None
    if not is_run:
        text.top_grade = _kernels.grade_summary(values)[0]
        if text.top_grade > MAX_GRADE:
            return None
    return text


def _gunzip(data: bytes, limit: int) -> bytes | None:
    """gzip data decompressed, every member, or None when it would exceed ``limit`` bytes
    (a small ``.gz`` can hold gigabytes: only ``limit`` and one member's window are ever
    held) or is not whole gzip data (the numpy path words that error)."""
    import zlib

    parts = []
    total = 0
    while data:
        member = zlib.decompressobj(31)
        try:
            part = member.decompress(data, limit - total + 1)
        except zlib.error:
            return None
        total += len(part)
        if total > limit or not member.eof:  # too long, or truncated
            return None
        parts.append(part)
        data = member.unused_data.lstrip(b"\x00")  # zero padding ends gzip data, as gzip's
    return b"".join(parts)


def grades_in_scale(qrels: TrecText, columns: list[Column]) -> bool:
    """Whether no grade is above what a column's family takes (ERR's scale ends at 4); the
    numpy path words the error."""
    scales = [BY_NAME[c.family].max_grade for c in columns]
    return all(top is None or qrels.top_grade <= top for top in scales)


def evaluate_text(qrels: TrecText, run: TrecText, columns: list[Column], *, queries: str,
                  relevance_level: int, judged_only: bool, max_docs: int | None,
                  relcols: dict) -> TextResult | None:
    """What ``_runfile.evaluate_run_source`` gives for these files, or None where it would
    raise or warn (no query in common)."""
    ids, pair_run, pair_qrels = pair_queries(run.query_ids, qrels.query_ids,
                                             every_qrels_query=queries == "qrels")
    m = len(columns)
    if not any(r >= 0 for r in pair_run) or not m or not grades_in_scale(qrels, columns):
        # no query in common: the numpy path raises, or warns under -c; no numeric column
        # (-m runid, -m relstring): a memoryview has no (n, 0) shape
        return None
    n = len(ids)
    room = [0 if r < 0 else min(run.offsets[r + 1] - run.offsets[r],
                                 qrels.offsets[j + 1] - qrels.offsets[j])
            for r, j in zip(pair_run, pair_qrels)]
    ranked_offsets = array("q", [0])
    for size in room:
        ranked_offsets.append(ranked_offsets[-1] + size)
    total = ranked_offsets[-1]
    ranks = array("i", bytes(4 * total))
    grades = array("i", bytes(4 * total))
    count = array("q", bytes(8 * n))
    num_ret = array("q", bytes(8 * n))
    run_pos, qrels_pos = array("q", pair_run), array("q", pair_qrels)
    hashes, keys, key_off, blob = run.doc_tables()
    _kernels.rank_judged(
        run.offsets, hashes, run.tiekeys, keys, key_off, blob, run.values,
        qrels.offsets, *qrels.doc_tables(), qrels.values, run_pos, qrels_pos,
        0 if max_docs is None else min(max_docs, NO_CUTOFF), judged_only,
        ranked_offsets, ranks, grades, count, num_ret)
    values = memoryview(bytearray(8 * n * m)).cast("d", (n, m))
    flat = values.cast("B").cast("d")
    for (level, v9), js in column_groups(columns, min(relevance_level, LEVEL_CEILING)).items():
        group = [columns[j] for j in js]
        out = values if len(js) == m else memoryview(bytearray(8 * n * len(js))).cast(
            "d", (n, len(js)))
        _kernels.ranking_measures(
            ranked_offsets, ranks, grades, count, num_ret, qrels_pos, qrels.offsets,
            qrels.values, level, max(qrels.top_grade, 0), v9, *kernel_arrays(group),
            any(c.family in DENSE for c in group), out)
        if out is not values:
            part = out.cast("B").cast("d")
            for p in range(n):
                for k, j in enumerate(js):
                    flat[p * m + j] = part[p * len(js) + k]
    missing = [p for p in range(n) if pair_run[p] < 0]
    for j, c in enumerate(columns):
        if c.aggregate == "gm":
            # per query, trec_eval (and pytrec_eval) keep log(max(value, MIN_GEO_MEAN))
            for p in range(n):
                flat[p * m + j] = math.log(max(flat[p * m + j], MIN_GEO_MEAN))
        if missing and zeroed_when_missing(c):
            for p in missing:
                flat[p * m + j] = 0.0
    rels = {}
    for j, (length, name) in relcols.items():
        rels[j] = ["" if pair_run[p] < 0 and name == "relstring" else
                   relstring(ranks, grades, ranked_offsets[p], count[p], num_ret[p], length)
                   for p in range(n)]
    return TextResult(ids, values, rels, run.run_id, run.query_ids, run.source)
