"""Evaluating TREC run files as they are read, one or many runs against one encoded qrels.

A run file whose queries keep their lines together (as every retrieval system writes them)
is parsed a block at a time, and each batch of complete queries is ranked and measured in
the parser's own arrays and dropped: memory stays flat whatever the size of the file. With
``workers`` above 1, a plain file is cut into byte ranges at query boundaries, each parsed
and measured by its own thread (the kernels release the GIL), and text in memory (bytes) into
segments of whole queries, which the threads parse and measure; a compressed file or a pipe
is read and decompressed by a helper thread while the calling thread parses.

A run whose queries are not grouped is still evaluated exactly, by reading it whole (a
``Run``): about 85 bytes a line at the peak. A file, compressed or not, is then read a
second time; a pipe's text, which can be read only once, is kept as it arrives (in memory
up to ``_SPILL_BYTES``, then in a temporary file written by a thread of its own), so that
it can be parsed again.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import queue
import re
import stat
import tempfile
import threading
from dataclasses import dataclass, field
from typing import IO, Any, Sequence

import numpy as np

from . import _kernels
from ._engine import Chunked, Evaluation, no_common
from ._measure_parser import Column
from ._ranked import Qrels, Run, as_run, from_trec_columns, raise_duplicate
from ._threads import resolve_workers, settle, submit_all, thread_pool, wait_all
from .io.trec import memory_named, open_blocks, parse_blocks, read_ahead

# smallest byte range worth a thread of its own
_RANGE_MIN_BYTES = 32 << 20
# smallest of the ranges threads take in turn (_thread_ranges): a thread that reads several
# reuses its parser, so a small range costs little more than its share of the text
_TAIL_RANGE_BYTES = 8 << 20
# a pipe's text kept in memory before it goes to a temporary file
_SPILL_BYTES = 256 << 20
# the text in memory (bytes) handed to a thread at a time
_SEGMENT_BYTES = 32 << 20
_GZIP_MAGIC = b"\x1f\x8b"
# rows per batch of complete queries measured at once
FILE_CHUNK_ROWS = 1 << 18


@dataclass
class RunResult:
    """One run's per-query values: ``ids`` in query id order, ``values`` of shape (queries,
    columns), ``relstrings`` {column index: one string per query}, the run's ``run_id`` (its
    last data line's tag), and every query id of the run, evaluated or not."""

    ids: list
    values: np.ndarray
    relstrings: dict
    run_id: str | None
    run_query_ids: list
    source: str


@dataclass
class _Part:
    """What one stream of blocks gave: queries in file order."""

    ids: list = field(default_factory=list)
    blocks: list = field(default_factory=list)
    relstrings: dict = field(default_factory=dict)
    run_query_ids: list = field(default_factory=list)
    run_id: str | None = None
    grouped: bool = True
    # the qrels positions [lo, hi) of every query in ids, when each batch of queries was
    # paired with the qrels by position (the run follows the qrels' order); None otherwise
    span: tuple[int, int] | None = None
    paired: bool = True
    lines: int = 0  # lines of text read (comments and blank lines included)


@dataclass
class _Reused:
    """What a thread keeps from one byte range of a file to the next: its parser and its
    read buffers, whose memory would otherwise be page-faulted in again for every range."""

    parser: Any = None
    buffers: list | None = None


def _thread_reused(per_thread: threading.local) -> _Reused:
    """This thread's _Reused in ``per_thread`` (a ``threading.local`` made for one call),
    made on first use."""
    reused = getattr(per_thread, "reused", None)
    if reused is None:
        reused = per_thread.reused = _Reused()
    return reused


def _regular_path(source) -> str | None:
    """The path ``source`` names when it is a regular file (so it can be read again), else
    None (bytes, ``-``, a pipe, a file object)."""
    if not isinstance(source, (str, os.PathLike)):
        return None
    name = os.fspath(source)
    if not isinstance(name, str) or name == "-":
        return None
    try:
        return name if stat.S_ISREG(os.stat(name).st_mode) else None
    except (OSError, ValueError):
        return None


def _plain_path(source) -> str | None:
    """The path of a regular, uncompressed file that can be cut into ranges, else None."""
    name = _regular_path(source)
    if name is None or name.endswith(".gz"):
        return None
    try:
        with open(name, "rb") as f:
            if f.read(2) == _GZIP_MAGIC:
                return None
    except OSError:
        return None
    return name


def _rereadable(source) -> bool:
    """Whether the text of ``source`` can be read a second time: bytes, or a regular file
    (compressed or not)."""
    return (isinstance(source, (bytes, bytearray, memoryview))
            or _regular_path(source) is not None)


def is_run_source(run) -> bool:
    """Whether ``run`` is text to parse (a path, ``-``, bytes or a binary file object)."""
    return (isinstance(run, (str, os.PathLike, bytes, bytearray, memoryview))
            or (hasattr(run, "read") and not hasattr(run, "columns")))


# ---------------------------------------------------------------------------------------------
# blocks of text


def _range_blocks(raw, start: int, end: int, chunk: int, reused: _Reused | None = None):
    """Blocks of bytes [start, end) of an open file (``end`` a line start or the end),
    each ending at a line end. The blocks share two buffers (``reused``'s, if it has them):
    each is valid only until the next is asked for, which the parser allows, as it copies
    what it keeps (a fresh buffer per block had every range thread page-fault a megabyte
    per block). A file that ends before ``end`` changed after the range was measured: a
    TrecFormatError says so. A line longer than MAX_LINE_BYTES is handed on unfinished,
    for the parser to refuse with its line number, and the reading stops there."""
    from ._kernels import _trec_last_newline
    from .io.trec import MAX_LINE_BYTES, line_too_long

    raw.seek(start)
    left = end - start
    if reused is not None and reused.buffers is not None and len(reused.buffers[0]) >= chunk:
        buffers = reused.buffers
    else:
        buffers = [np.empty(chunk, dtype=np.uint8), np.empty(chunk, dtype=np.uint8)]
        if reused is not None:
            reused.buffers = buffers
    carry = 0  # bytes of an unfinished line at the front of the current buffer
    k = 0
    while True:
        buf = buffers[k]
        want = min(len(buf) - carry, left)
        filled = carry
        while want > 0:
            got = raw.readinto(buf.data[filled:filled + want])
            if not got:
                raise _changed_while_read(raw.name, os.fstat(raw.fileno()).st_size, end)
            filled += got
            want -= got
            left -= got
        if filled == 0:
            return
        view = buf.data[:filled]
        if left <= 0:
            yield view
            return
        cut = _trec_last_newline(view)
        if cut < 0 and filled > MAX_LINE_BYTES:
            yield view
            raise line_too_long(raw.name)
        if cut < 0:  # a single line longer than the buffer: a larger pair of buffers
            bigger = np.empty(2 * len(buf), dtype=np.uint8)
            bigger[:filled] = buf[:filled]
            buffers = [bigger, np.empty(2 * len(buf), dtype=np.uint8)]
            k, carry = 0, filled
            continue
        rest = filled - cut - 1
        nxt = buffers[1 - k]
        yield view[:cut + 1]
        nxt[:rest] = buf[cut + 1:filled]
        k, carry = 1 - k, rest


def _changed_while_read(name, size: int, end: int):
    """The error for a file found to be ``size`` bytes long while a range of it ending at
    ``end`` (within the file when its reading began) was read."""
    from .io.trec import TrecFormatError

    return TrecFormatError(f"the file is now {size} bytes long, but it had at least {end} when "
                           f"its reading began: it was truncated or rewritten while being read",
                           path=os.fsdecode(name) if isinstance(name, (str, bytes)) else "<file>")


def _first_field(line: bytes):
    """A run line's query id, or None for a blank or comment line."""
    parts = line.split(None, 1)
    if not parts or parts[0].startswith(b"#"):
        return None
    return parts[0]


def _lines_from(f, pos: int, window: int):
    """(start, line, ended) of each line of a file from byte ``pos`` on, read ``window``
    bytes at a time, each byte searched for a line break once; ``ended`` is False for a last
    line without one. Stops before a line longer than MAX_LINE_BYTES: the range's reader
    refuses it, naming its line."""
    from .io.trec import MAX_LINE_BYTES

    f.seek(pos)
    buf, i, scanned = b"", 0, 0  # buf[i:] not yet given; buf[scanned:] not yet searched
    while True:
        nl = buf.find(b"\n", scanned)
        if nl < 0:
            if len(buf) - i > MAX_LINE_BYTES:
                return
            more = f.read(window)
            if not more:
                if i < len(buf):
                    yield pos, buf[i:], False
                return
            buf = buf[i:] + more
            i, scanned = 0, len(buf) - len(more)
            continue
        yield pos, buf[i:nl], True
        pos += nl + 1 - i
        i = scanned = nl + 1


def _boundary(f, offset: int, size: int) -> int:
    """The start of the first line at or after ``offset`` whose query differs from the
    query of the data line before it (``size`` if none): a range may start there. A query
    split across ranges anyway (a comment line in the middle of it) is caught later, as its
    id then comes out twice. A line longer than MAX_LINE_BYTES ends the search (``size``):
    the range that holds it then refuses it."""
    window = 1 << 16
    # the line that holds offset - 1 ends the previous range's text
    lo = max(0, offset - window)
    f.seek(lo)
    lines = f.read(offset - lo).split(b"\n")
    # lines[-1] is the part of the line that continues at offset
    ahead = _lines_from(f, offset, window)
    first = next(ahead, None)
    if first is None or not first[2]:
        return size  # the line under offset ends the file, or is too long
    prev_q = _first_field(lines[-1] + first[1])
    for line in reversed(lines[:-1]):
        if prev_q is not None:
            break
        prev_q = _first_field(line)
    # walk forward until a data line of another query
    for start, line, _ended in ahead:
        q = _first_field(line)
        if q is not None and q != prev_q:
            return start
        if prev_q is None:
            prev_q = q
        if start + len(line) + 1 >= size:
            break
    return size


def _ranges(path: str, parts: int) -> list[tuple[int, int]]:
    size = os.path.getsize(path)
    parts = max(1, min(parts, size // _RANGE_MIN_BYTES))
    if parts == 1:
        return [(0, size)]
    cuts = [0]
    with open(path, "rb") as f:
        for k in range(1, parts):
            b = _boundary(f, size * k // parts, size)
            if b > cuts[-1]:
                cuts.append(b)
    if cuts[-1] < size:
        cuts.append(size)
    return [(a, b) for a, b in itertools.pairwise(cuts) if b > a]


def _thread_ranges(path: str, workers: int) -> list[tuple[int, int]]:
    """Byte ranges of a file for ``workers`` threads that take them in turn, each starting
    a query: every range is a ``1 / (2 * workers)`` share of the bytes left after its start
    (at least _TAIL_RANGE_BYTES), so that the last ones are small and the threads finish
    close together. With one equal range per thread, one thread ended 0.1-0.25 s after the
    other on a 100M-line run: the same work per byte, but not the same share of the cores.
    A file under 2 * _RANGE_MIN_BYTES is one range."""
    size = os.path.getsize(path)
    if size < 2 * _RANGE_MIN_BYTES:
        return [(0, size)]
    cuts = [0]
    smallest = min(_TAIL_RANGE_BYTES, _RANGE_MIN_BYTES)
    with open(path, "rb") as f:
        while size - cuts[-1] >= 2 * smallest:
            step = max((size - cuts[-1]) // (2 * workers), smallest)
            b = _boundary(f, cuts[-1] + step, size)
            if b >= size:
                break
            cuts.append(b)
    cuts.append(size)
    return list(itertools.pairwise(cuts))


def _lines_before(path: str, offset: int) -> int:
    """The number of lines that end before byte ``offset`` (a line start)."""
    n = 0
    with open(path, "rb") as f:
        left = offset
        while left > 0:
            data = f.read(min(left, 1 << 24))
            if not data:
                break
            n += data.count(b"\n")
            left -= len(data)
    return n


# how far from a block's end _last_query looks for a data line: a block of text in memory
# ends with a line of up to MAX_LINE_BYTES (a longer one is refused when parsed)
_LAST_QUERY_SPAN = 4 << 20

# blanks that may start a line, and those that may end its query id (C isspace but '\n')
_BLANKS = rb"[ \t\v\f\r]"


def _last_query(block) -> bytes | None:
    """The query id of the last data line of ``block`` (None if none starts in its last
    _LAST_QUERY_SPAN bytes: the segment is then cut later)."""
    n = len(block)
    for size in (4096, _LAST_QUERY_SPAN):
        lines = bytes(block[max(0, n - size):]).split(b"\n")
        if size < n:
            lines = lines[1:]  # perhaps the end of a line that starts earlier
        for line in reversed(lines):
            q = _first_field(line)
            if q is not None:
                return q
        if size >= n:
            break
    return None


def _query_lines(query: bytes):
    """(pattern of a line of ``query`` at the start of a text, pattern of the first line
    break after which a line of another query starts). Blank and comment lines count as the
    query's: _boundary does not cut before them either."""
    q = re.escape(query)
    ours = rb"%s*(?:%s%s|#|\n|\Z)" % (_BLANKS, q, _BLANKS)
    return re.compile(ours), re.compile(rb"\n(?!%s)" % ours)


def _segments(blocks, size: int):
    """The blocks of a text gathered into lists of about ``size`` bytes that each
    end where a query's lines end (a block cut in two there without a copy), for threads
    to parse as a plain file's ranges are. Each block ends at a line end, as open_blocks
    gives them; a query split anyway (a line of it that does not start with its id) is
    caught as a plain file's is, its id coming out of two segments."""
    segment: list = []
    total = 0
    query = None  # once the segment is full: the patterns of its last query's lines
    for block in blocks:
        if query is not None:
            starts_ours, break_before_other = query
            cut = None
            if not starts_ours.match(block):
                cut = 0
            else:
                m = break_before_other.search(block)
                if m is not None and m.end() < len(block):
                    cut = m.end()
            if cut is None:  # the whole block is the query's
                segment.append(block)
                continue
            if cut:
                segment.append(block[:cut])
            yield segment
            segment, total, query = [], 0, None
            block = block[cut:]
            if not len(block):
                continue
        segment.append(block)
        total += len(block)
        if total >= size:
            last = _last_query(block)
            if last is not None:
                query = _query_lines(last)
    if segment:
        yield segment


class _Spill:
    """The text of a run that can be read only once, kept as it is read: in memory up to
    ``_SPILL_BYTES``, then in a temporary file, written by a thread of its own. Writing
    3.6 GB to a file took 4.8 s of system time, as long as parsing them: on the parsing
    thread it doubled the time of a piped run. A failed write is raised only when the text
    is read back, so a grouped run (never read back) does not need the disk."""

    _DEPTH = 8  # blocks waiting for the writer; the parser waits beyond that

    def __init__(self) -> None:
        self.source = "<run>"  # what an error names; set once the source is opened
        self.blocks: list = []
        self.size = 0
        self.file: IO[bytes] | None = None
        self._todo: queue.Queue = queue.Queue(maxsize=self._DEPTH)
        self._writer: threading.Thread | None = None
        self._error: BaseException | None = None
        self._closed = False  # closed: the blocks still waiting are not written

    def add(self, block) -> None:
        if self.file is None and self.size + len(block) <= _SPILL_BYTES:
            self.blocks.append(block)  # a fresh buffer per block: holding it copies nothing
        else:
            if self.file is None:
                self.file = tempfile.TemporaryFile(prefix="qafast-run-")
                self._writer = threading.Thread(target=self._write, args=(self.file,),
                                                 name="qafast-run-spill", daemon=True)
                self._writer.start()
                # the blocks kept so far go first; each is freed once written
                kept, self.blocks = self.blocks[::-1], []
                while kept:
                    self._todo.put(kept.pop())
            self._todo.put(block)
        self.size += len(block)

    def _write(self, file: IO[bytes]) -> None:
        while True:
            block = self._todo.get()
            if block is None:
                return
            if self._error is None and not self._closed:
                try:
                    file.write(block)
                except BaseException as e:  # noqa: BLE001 - raised by replay(), if called
                    self._error = e

    def _join(self) -> None:
        if self._writer is not None:
            self._todo.put(None)
            self._writer.join()
            self._writer = None

    def replay(self):
        if self.file is None:
            yield from self.blocks
            return
        from .io.trec import readinto_blocks

        self._join()
        if self._error is not None:
            e = self._error
            if isinstance(e, OSError):
                raise OSError(e.errno, f"the run is not grouped by query, so its text is read "
                                       f"twice, kept in a temporary file, which failed: "
                                       f"{e.strerror or e}", self.source) from e
            raise e
        self.file.flush()
        self.file.seek(0)
        yield from readinto_blocks(self.file.readinto, 1 << 20, self.source)

    def close(self):
        # after an error or an interrupt too: up to _DEPTH blocks (8 MB) were waiting, and
        # written they would only have held the interrupt up
        self._closed = True
        self._join()
        if self.file is not None:
            self.file.close()


# ---------------------------------------------------------------------------------------------
# one stream of blocks


class _Cancelled(Exception):
    """The caller stopped waiting (an interrupt, or another run's error)."""


def _qrels_position(qrels: Qrels, qid: str, searched: bool, near: float = 0.0) -> int:
    """Where ``qid`` is among the qrels' queries (0 if it is not). A range of a run that
    follows the qrels' order asks once, for its first query: scanning the list of ids then
    costs less than building the dictionary of every id (0.15 s for a million). The scan
    starts at the same fraction ``near`` of the list as the range does of the file and
    widens from there: scanning from the front, the twenty ranges of a 100M-line run
    compared 0.2 s of ids. A run in another order asks again, and gets the dictionary."""
    if searched or qrels._qindex is not None:
        return qrels.query_index().get(qid, 0)
    ids = qrels.query_ids
    n = len(ids)
    lo = hi = min(max(int(near * n), 0), n)
    width = 1024
    while lo > 0 or hi < n:
        wider_lo, wider_hi = max(0, lo - width), min(n, hi + width)
        for a, b in ((hi, wider_hi), (wider_lo, lo)):
            if a < b:
                try:
                    return ids.index(qid, a, b)
                except ValueError:
                    pass
        lo, hi = wider_lo, wider_hi
        width *= 2
    return 0


def _stream(qrels: Qrels, path: str, blocks, columns: list[Column], options: dict,
            relcols: dict, on_bytes, line_base, cancel: threading.Event | _Either | None = None,
            edges: list | None = None, reused: _Reused | None = None,
            near: float = 0.0) -> _Part:
    """Parse ``blocks`` and measure each batch of complete queries; ``line_base()`` gives
    the number of lines before the first block, for messages. ``edges``: an empty list,
    given the rows (_query_rows) of the first and of the last query. ``reused``: the parser
    of this thread's previous stream, restarted rather than made anew. ``near``: how far
    into the run the text starts (0 to 1), where its first query is looked for among the
    qrels'."""
    from .io.trec import TrecFormatError, raise_scan_error

    batch_rows = FILE_CHUNK_ROWS
    if reused is not None and reused.parser is not None:
        parser = reused.parser
        parser.restart()
    else:
        parser = _kernels._trec_Parser(True, False)
        if reused is not None:
            reused.parser = parser
    part = _Part(relstrings={j: [] for j in relcols})
    qrels_ids = qrels.query_ids
    first = 0
    qpos = 0  # where the next query is expected in the qrels, if the run follows their order
    searched = False  # a query was not where expected: the qrels' dictionary is looked in

    def measure(everything: bool) -> bool:
        nonlocal first, qpos, searched
        got = parser.complete_rows(everything, first)
        if got is None:
            return False
        n, arrays = got
        if n == 0:
            return True
        qidx, scores, hashes, tiekeys, lines, offsets, blob, q_off = arrays
        nq = len(q_off) - 1
        qids = parser.query_ids[first:first + nq]
        chunk = Chunked.run(qids, q_off, scores, hashes, offsets, blob, tiekeys, path, lines)
        # checked before it is measured; each query's lines are all in this chunk
        i = _kernels.first_duplicate_hashed(chunk.offsets, *chunk.kernel_args())
        if i >= 0:
            chunk._lines = np.asarray(lines) + line_base()
            raise_duplicate(chunk, i, False)
        if edges is not None:
            if not edges:
                edges[:] = [_query_rows(qids[0], 0, int(q_off[1]), offsets, blob, scores),
                            None]
            edges[1] = _query_rows(qids[-1], int(q_off[-2]), n, offsets, blob, scores)
        # the queries are looked up from the qrels position of the chunk's first one on:
        # when the run follows the qrels' order, no dictionary of the qrels' ids is needed
        # (building one for a million queries costs more than reading them), and the
        # chunk's queries are paired with the qrels' without a look-up or a sort (the
        # results are put in id order once, at the end)
        if not (qpos < len(qrels_ids) and qrels_ids[qpos] == qids[0]):
            qpos = _qrels_position(qrels, qids[0], searched, near)
            searched = True
        pairs = None
        same = qrels_ids[qpos:qpos + nq]
        if same == qids:
            # the qrels' str objects stand for these queries from here on, and the parser's
            # equal copies are freed at once: a million-query run kept 56 MB of them
            qids = parser.query_ids[first:first + nq] = same
            pairs = (qids, np.arange(nq, dtype=np.int64),
                     np.arange(qpos, qpos + nq, dtype=np.int64))
            lo, hi = part.span or (qpos, qpos + nq)
            part.span = (min(lo, qpos), max(hi, qpos + nq))
        else:
            part.paired = False
        ev = Evaluation(qrels, chunk, queries="run", qrels_start=qpos, allow_none=True,
                         pairs=pairs, **options)
        qpos += nq
        if ev.ids:
            part.ids.extend(ev.ids)
            part.blocks.append(ev.values(columns))
            for j, (length, name) in relcols.items():
                part.relstrings[j].extend(ev.relstring(p, length, name)
                                          for p in range(len(ev.ids)))
        del chunk, ev, arrays, qidx, scores, hashes, tiekeys, lines, offsets, blob, q_off
        parser.drop_rows(n)
        first += nq
        return True

    batch = None
    try:
        for block in blocks:
            if cancel is not None and cancel.is_set():
                raise _Cancelled()
            batch = parser.scan_intern(block, batch)
            raise_scan_error(batch, path)
            batch.release()
            on_bytes(len(block))
            if parser.rows >= batch_rows and not measure(False):
                part.grouped = False
                return part
        if not measure(True):
            part.grouped = False
            return part
    except TrecFormatError as e:
        base = line_base()
        if base and e.line is not None:
            raise TrecFormatError(e.message, path=e.path or "<run>", line=e.line + base) from None
        raise
    part.run_query_ids = parser.query_ids
    part.run_id = parser.run_id
    part.lines = parser.lines
    return part


def _query_rows(qid: str, lo: int, hi: int, offsets, blob, scores):
    """(qid, document ids, scores) of rows [lo, hi) of a parsed batch, copied out of the
    parser's arrays."""
    docs = [bytes(blob[offsets[i]:offsets[i + 1]]).decode("utf-8") for i in range(lo, hi)]
    return qid, docs, np.array(scores[lo:hi], dtype=np.float64)


def _stream_range(qrels: Qrels, path: str, start: int, end: int, columns: list[Column],
                  options: dict, relcols: dict, on_bytes,
                  cancel: threading.Event | None = None, edges: list | None = None,
                  reused: _Reused | None = None) -> _Part:
    """_stream over bytes [start, end) of a plain file, error lines counted from the file's
    start."""
    from .io import trec

    with open(path, "rb", buffering=0) as raw:
        blocks = _range_blocks(raw, start, end, trec.CHUNK_BYTES, reused)
        size = os.fstat(raw.fileno()).st_size
        return _stream(qrels, path, blocks, columns, options, relcols, on_bytes,
                       lambda: _lines_before(path, start) if start else 0, cancel,
                       edges=edges, reused=reused, near=start / size if size else 0.0)


class _Either:
    """Set when either of two events is."""

    def __init__(self, a: threading.Event, b: threading.Event | None) -> None:
        self.a, self.b = a, b

    def is_set(self) -> bool:
        return self.a.is_set() or (self.b is not None and self.b.is_set())


def _stream_segments(qrels: Qrels, path: str, blocks, columns: list[Column], options: dict,
                     relcols: dict, on_bytes, workers: int, cancel: threading.Event | None,
                     size: int) -> list[_Part]:
    """_stream over the segments of a text of ``size`` bytes (_segments), ``workers``
    threads parsing and measuring them while this one cuts them, each thread with one
    parser. At most one segment more than the threads is in memory. Reading stops at the
    first segment that fails or turns out not grouped; the parts of the segments read are
    returned in order (their errors raised in order: the first is the text's first, as one
    reader meets it). ``cancel``: the caller's, which stops the segments being read as this
    function's own error does."""
    from concurrent.futures import FIRST_COMPLETED, wait

    pool = thread_pool(workers)
    futures: list = []
    stop = threading.Event()  # a segment failed, or is not grouped: read no more
    halt = threading.Event()  # an error raised here: the segments being read stop too
    either = _Either(halt, cancel)
    per_thread = threading.local()  # each thread's _Reused, for this call only

    def one(k: int, segment: list, near: float) -> _Part:
        def line_base() -> int:
            # the segments before this one have all started: they end without waiting
            return sum(f.result().lines for f in futures[:k])

        part = _stream(qrels, path, iter(segment), columns, options, relcols, on_bytes,
                       line_base, either, reused=_thread_reused(per_thread), near=near)
        if not part.grouped:
            stop.set()
        return part

    def failed(f) -> None:
        if not f.cancelled() and f.exception() is not None:
            stop.set()

    offset = 0  # of the segment in the text
    try:
        for segment in _segments(blocks, _SEGMENT_BYTES):
            running = [f for f in futures[-(workers + 1):] if not f.done()]
            while len(running) > workers:
                wait(running, return_when=FIRST_COMPLETED)
                running = [f for f in running if not f.done()]
            if stop.is_set() or either.is_set():
                break
            future = pool.submit(one, len(futures), segment, offset / size if size else 0.0)
            future.add_done_callback(failed)
            futures.append(future)
            offset += sum(len(block) for block in segment)
            del segment
        parts: list[_Part] = []
        for f in futures:
            wait_all([f], halt)  # an interrupt breaks it (f.result() would not, on Windows)
            got = f.result()  # the first error in text order is raised here
            parts.append(got)
            if not got.grouped:
                break
    except BaseException:  # an error or an interrupt: the segments being read stop
        settle(futures, halt)
        raise
    return parts


# ---------------------------------------------------------------------------------------------
# one run


def _whole(qrels: Qrels, run: Run, columns, queries: str, options: dict,
           relcols: dict, allow_none: bool = False) -> RunResult:
    ev = Evaluation(qrels, run, queries=queries, allow_none=allow_none, **options)
    values = ev.values(columns)
    rels = {j: [ev.relstring(p, length, name) for p in range(len(ev.ids))]
            for j, (length, name) in relcols.items()}
    return RunResult(ev.ids, values, rels, getattr(run, "run_id", None), run.query_ids,
                     run.source)


def _empty_run(source: str) -> Run:
    run = Chunked.run([], np.zeros(1, dtype=np.int64), np.zeros(0), np.zeros(0, np.int64),
                       np.zeros(1, dtype=np.int64), np.zeros(0, np.uint8),
                       np.zeros(0, np.int64), source)
    return run


def _subset(qrels: Qrels, rows: np.ndarray) -> Qrels:
    """The qrels of the queries at positions ``rows`` (ascending), as a Qrels."""
    lo, hi = qrels.offsets[rows], qrels.offsets[rows + 1]
    sizes = hi - lo
    offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    take = np.repeat(lo - offsets[:-1], sizes) + np.arange(int(offsets[-1]), dtype=np.int64)
    sub = Qrels.__new__(Qrels)
    sub._set([qrels.query_ids[int(r)] for r in rows], offsets, qrels.values[take],
             qrels.hashes[take], None if qrels.keys is None else qrels.keys[take],
             qrels.key_off, qrels.blob, qrels.source)
    sub.id_bias = qrels.id_bias
    return sub


def _in_id_order(ids: list, values: np.ndarray, rels: dict):
    order = sorted(range(len(ids)), key=ids.__getitem__)
    return ([ids[k] for k in order], values[order],
            {j: [s[k] for k in order] for j, s in rels.items()})


def _spans_disjoint(parts: list[_Part]) -> bool:
    """Whether the parts' queries are told apart by the qrels positions they were paired
    with: no two parts' spans of positions overlap. Comparing a million ids through a set
    took 0.08 s at the end of a 100M-line run, when both cores are otherwise idle."""
    if not all(p.paired for p in parts):
        return False
    spans = sorted(p.span for p in parts if p.span is not None)
    return all(a[1] <= b[0] for a, b in itertools.pairwise(spans))


def disjoint(id_lists: list[list]) -> bool:
    """Whether no id is in two of the lists, each of distinct ids (a parser gives each of
    its queries once). Only the shorter lists go into a set; the longest is looked up."""
    if len(id_lists) < 2:
        return True
    *shorter, longest = sorted(id_lists, key=len)
    seen: set = set()
    count = 0
    for ids in shorter:
        seen.update(ids)
        count += len(ids)
        if len(seen) != count:
            return False
    return seen.isdisjoint(longest)


class _Assembled:
    """The measured ids and values of a run's first parts, gathered in file order by the
    thread that waits for the parts while the later ones are still read. Gathering them only
    at the end (a list of a million ids, and 40 MB of values concatenated into fresh memory)
    took 50 ms of a 100M-line run with the other core idle. The values go to one array with
    a row for every qrels query: a query is measured at most once unless it is in two parts,
    and then the run is read whole anyway."""

    def __init__(self, rows: int, columns: int) -> None:
        self.ids: list = []
        self.values = np.empty((rows, columns), dtype=np.float64)
        self.rows = 0
        self.parts = 0  # parts gathered, the first ones of the run

    def add(self, part: _Part) -> None:
        """Gather the next part of the run, handing its values over (its blocks are
        dropped). A part that does not fit is left as it is; the caller gathers only the
        part after the last one gathered, so none after it is gathered either."""
        n = sum(len(b) for b in part.blocks)
        if self.rows + n > len(self.values):
            return
        for block in part.blocks:
            self.values[self.rows:self.rows + len(block)] = block
            self.rows += len(block)
        part.blocks = []
        self.ids.extend(part.ids)
        self.parts += 1


def _finish(qrels: Qrels, parts: list[_Part], columns, queries: str, options: dict,
            relcols: dict, source: str, ordered: bool = True,
            assembled: _Assembled | None = None):
    """The RunResult of the parts of a grouped run, or None when a query turned up in two
    places (the run is then read whole). Without ``ordered`` the queries stay in file
    order (sorting a million ids costs more than a second's reading, and a mean does not
    depend on the order). ``assembled``: the first parts' ids and values, already gathered
    (their blocks dropped)."""
    if not (_spans_disjoint(parts) or disjoint([p.ids for p in parts])):
        return None  # a query in two ranges
    ids: list = []
    blocks: list = []
    rest = parts
    if assembled is not None and assembled.parts:
        ids, blocks = assembled.ids, [assembled.values[:assembled.rows]]
        rest = parts[assembled.parts:]
    ids.extend(itertools.chain.from_iterable(p.ids for p in rest))
    blocks += [b for p in rest for b in p.blocks]
    if len(blocks) == 1:
        values = blocks[0]  # nothing to join, as when every part was gathered
    else:
        values = (np.concatenate(blocks) if blocks
                  else np.zeros((0, len(columns)), dtype=np.float64))
    rels = {j: [s for p in parts for s in p.relstrings[j]] for j in relcols}
    if len(parts) == 1:
        run_query_ids = parts[0].run_query_ids
    elif all(p.paired and len(p.ids) == len(p.run_query_ids) for p in parts):
        # every query of the run was measured, each batch paired with the qrels by position
        # (so ids are in file order too): one list serves both (a second list of a million
        # ids took 20 ms at the end of a 100M-line run, one core idle); neither is changed
        run_query_ids = ids
    else:
        run_query_ids = list(itertools.chain.from_iterable(p.run_query_ids for p in parts))
    run_id = next((p.run_id for p in reversed(parts) if p.run_id is not None), None)
    if ordered:
        ids, values, rels = _in_id_order(ids, values, rels)
    stub = Run.__new__(Run)
    stub._set(run_query_ids, np.zeros(1, dtype=np.int64), None, None, None, None, None,
              source)
    if queries == "qrels":
        present = set(ids)
        missing = np.array([i for i, q in enumerate(qrels.query_ids) if q not in present],
                           dtype=np.int64)
        if not ids:
            no_common(qrels, stub, queries)  # a warning: every qrels query scores 0
        if len(missing):
            extra = _whole(_subset(qrels, missing), _empty_run(source), columns, "qrels",
                           options, relcols, allow_none=True)
            ids = ids + extra.ids
            values = np.concatenate([values, extra.values])
            rels = {j: rels[j] + extra.relstrings[j] for j in relcols}
            if ordered:
                ids, values, rels = _in_id_order(ids, values, rels)
    elif not ids:
        no_common(qrels, stub, queries)  # raises
    return RunResult(ids, values, rels, run_id, run_query_ids, source)


def evaluate_run_source(qrels: Qrels, run, columns: list[Column], *, queries: str,
                        options: dict, relcols: dict | None = None,
                        progress=None, cancel: threading.Event | None = None,
                        ordered: bool = True) -> RunResult:
    """Per-query values of one run (a path, ``-``, bytes or a binary file object, or
    anything else ``evaluate`` takes) against encoded qrels, streamed where it can be.

    ``relcols``: {column index: (length, name)} of relstring columns to give per query.
    ``progress``: a callable taking the bytes read since its last call, or None.
    ``cancel``: an event that, once set, makes the reading stop (with _Cancelled).
    ``ordered``: False when only the mean is wanted: a streamed run's queries may then
    stay in file order.
    """
    if queries not in ("run", "qrels"):
        raise ValueError(f"queries must be 'run' (run and qrels in common) or 'qrels' (every "
                         f"qrels query, missing ones scoring 0, as trec_eval -c), not {queries!r}")
    relcols = relcols or {}
    workers = resolve_workers(options["workers"])
    if not (is_run_source(run) and qrels.string_ids):
        return _whole(qrels, as_run(run, workers), columns, queries, options, relcols)
    read = _Reading(qrels, columns, queries, options, relcols, workers,
                    progress or (lambda n: None), cancel, ordered)
    path = _plain_path(run)
    with memory_named(_source_name(run), "evaluating it as a TREC run"):
        return read.file(path) if path is not None else read.stream(run)


def _source_name(run) -> str:
    """How messages name a run source, as the TREC readers do."""
    if isinstance(run, (bytes, bytearray, memoryview)):
        return "<bytes>"
    if isinstance(run, (str, os.PathLike)):
        name = os.fspath(run)
        return "<stdin>" if name == "-" else os.fsdecode(name)
    name = getattr(run, "name", None)
    return name if isinstance(name, str) else "<file>"


@dataclass
class _Reading:
    """One run's reading, by evaluate_run_source: a plain file in byte ranges, one per
    thread, or any other source as one stream; each measures its batches of complete
    queries on its own thread (``opts``), and a run found ungrouped is read whole."""

    qrels: Qrels
    columns: list
    queries: str
    options: dict
    relcols: dict
    workers: int
    on_bytes: Any
    cancel: threading.Event | None
    ordered: bool

    @property
    def opts(self) -> dict:
        return dict(self.options, workers=1)

    def finish(self, parts: list[_Part], name: str, assembled=None) -> RunResult | None:
        if not all(p.grouped for p in parts):
            return None
        return _finish(self.qrels, parts, self.columns, self.queries, self.options,
                       self.relcols, name, self.ordered, assembled)

    def whole(self, run: Run) -> RunResult:
        return _whole(self.qrels, run, self.columns, self.queries, self.options, self.relcols)

    def file(self, path: str) -> RunResult:
        """A plain file, in byte ranges, each parsed and measured by a thread of its own."""
        # set by the caller, or here when this thread is interrupted while ranges are read
        halt = self.cancel if self.cancel is not None else threading.Event()
        ranges = (_thread_ranges(path, self.workers) if self.workers > 1
                  else [(0, os.path.getsize(path))])
        # starts of ranges that failed or found the run ungrouped: a range after one of
        # them is not read, as nothing it could find would be used
        stopped: list[int] = []
        per_thread = threading.local()  # each thread's _Reused, for this call only

        def one(start: int, end: int) -> _Part | None:
            if stopped and start > min(stopped):
                return None
            try:
                part = _stream_range(self.qrels, path, start, end, self.columns, self.opts,
                                     self.relcols, self.on_bytes, halt,
                                     reused=_thread_reused(per_thread))
            except _Cancelled:
                raise
            except Exception:
                stopped.append(start)
                raise
            if not part.grouped:
                stopped.append(start)
            return part

        assembled = None
        if len(ranges) == 1:
            part = one(*ranges[0])
            assert part is not None  # nothing stopped before it
            parts = [part]
        else:
            assembled = _Assembled(len(self.qrels.query_ids), len(self.columns))
            parts = self._ranges_in_threads(one, ranges, assembled, halt)
        result = self.finish(parts, path, assembled)
        if result is not None:
            return result
        return self.whole(Run.from_file(path, workers=min(self.workers, 2)))

    def _ranges_in_threads(self, one, ranges, assembled: _Assembled,
                           halt: threading.Event) -> list[_Part]:
        """The parts of the ranges, read by a pool of threads, in file order up to the first
        ungrouped one; each grouped part gathered into ``assembled`` as it arrives."""
        # a range before a failed one still runs to its end: the error raised is then the
        # file's first, the one a single reader meets
        futures = submit_all(thread_pool(min(self.workers, len(ranges))), one, ranges, halt)
        outcomes: list = []
        try:
            for f in futures:
                wait_all([f], halt)  # an interrupt breaks it (f.result() would not, on Windows)
                try:
                    got = f.result()
                except _Cancelled:
                    raise
                except Exception as e:  # noqa: BLE001 - raised below, in file order
                    outcomes.append(e)
                    continue
                outcomes.append(got)
                # the next part in file order, after only gathered ones
                if got is not None and got.grouped and assembled.parts == len(outcomes) - 1:
                    assembled.add(got)
        except BaseException:  # an interrupt: the other ranges stop at their next block
            settle(futures, halt)
            raise
        parts: list[_Part] = []
        for got in outcomes:
            if isinstance(got, Exception):
                raise got
            assert got is not None  # only after a range that raised or was ungrouped
            parts.append(got)
            if not got.grouped:
                break  # the run is read whole, which meets any later error itself
        return parts

    def stream(self, run) -> RunResult:
        """Bytes, a compressed file, a pipe, stdin or a file object: one stream. Text that
        cannot be read again (a pipe, stdin, a file object) is kept as it is read, in case
        the run turns out not to be grouped."""
        from .io import trec

        spill = None if _rereadable(run) else _Spill()
        with contextlib.ExitStack() as stack:
            if spill is not None:
                stack.callback(spill.close)
            name, blocks = open_blocks(run, trec.CHUNK_BYTES, stack)
            if spill is not None:
                spill.source = name
            # text in memory (not compressed) is cut into segments parsed by threads: 20M
            # lines in 0.63 s instead of 1.00 s. Other streams keep one parsing thread, a
            # helper reading: decompressing takes a core, and on two cores a second parser
            # only added its overhead (a 100M-line .gz run: 6.2 s with one, 7.0 s with two);
            # a pipe's text is also kept as it arrives, which took another core's time (from
            # cat: 7.4 s with one, 10.8 s with two)
            in_memory = (isinstance(run, (bytes, bytearray, memoryview))
                         and memoryview(run).cast("B")[:2] != _GZIP_MAGIC)
            if self.workers > 1 and not in_memory:
                # each block is a fresh buffer, so handing it over copies nothing
                blocks = read_ahead(blocks, 4, "qafast-run-reader")
                stack.callback(blocks.close)
            kept = blocks if spill is None else _kept(blocks, spill)
            if self.workers > 1 and in_memory:
                parts = _stream_segments(self.qrels, name, kept, self.columns, self.opts,
                                         self.relcols, self.on_bytes, self.workers,
                                         self.cancel, memoryview(run).nbytes)
            else:
                parts = [_stream(self.qrels, name, kept, self.columns, self.opts,
                                 self.relcols, self.on_bytes, lambda: 0, self.cancel)]
            result = self.finish(parts, name)
            if result is not None:
                return result
            again = (open_blocks(run, trec.CHUNK_BYTES, stack)[1] if spill is None
                     else itertools.chain(spill.replay(), blocks))
            cols = parse_blocks(name, again, is_run=True, intern_docs=False)
            return self.whole(from_trec_columns(Run, cols, False))


# ---------------------------------------------------------------------------------------------
# parts of a run file measured on their own (qafast.dask's tasks)


@dataclass
class RangeResult:
    """A part of a run file measured on its own: queries in file order, ``ids`` those
    evaluated (with ``values``), ``present`` every one met, ``grouped`` whether each kept
    its lines together (if not, nothing else is set), and ``first`` / ``last``: the rows
    (query id, document ids, scores) of the first and of the last query, which may go on
    before or after the part."""

    present: list
    ids: list
    values: np.ndarray
    grouped: bool
    first: tuple | None = None
    last: tuple | None = None


def task_ranges(path: str, target: int) -> Sequence[tuple[int, int | None]]:
    """Byte ranges of about ``target`` bytes of a run file, cut where a query's lines end;
    a compressed file (or one that is not a regular file) is one part, (0, None)."""
    if _plain_path(path) is None:
        return [(0, None)]
    return _ranges(path, max(1, -(-os.path.getsize(path) // target)))


def measure_range(qrels: Qrels, path: str, start: int, end: int | None,
                  columns: list[Column], options: dict) -> RangeResult:
    """Per-query values of bytes [start, end) of a plain run file (a range task_ranges gave),
    or of a whole file (``end`` None: compressed files too), streamed as evaluate_run_source
    streams a file."""
    from .io import trec

    opts = dict(options, workers=1)
    edges: list = []
    if end is None:
        with contextlib.ExitStack() as stack:
            name, blocks = trec.open_blocks(path, trec.CHUNK_BYTES, stack)
            part = _stream(qrels, name, blocks, columns, opts, {}, lambda n: None,
                           lambda: 0, edges=edges)
    else:
        part = _stream_range(qrels, path, start, end, columns, opts, {}, lambda n: None,
                             edges=edges)
    if not part.grouped:
        return RangeResult([], [], np.zeros((0, len(columns))), False)
    values = (np.concatenate(part.blocks) if part.blocks
              else np.zeros((0, len(columns)), dtype=np.float64))
    first, last = edges if edges else (None, None)
    return RangeResult(part.run_query_ids, part.ids, values, True, first, last)


def measure_whole_file(qrels: Qrels, path: str, columns: list[Column],
                       options: dict) -> RangeResult:
    """measure_range of a whole run file whose queries are not grouped: read whole (a
    ``Run``), ``first`` and ``last`` the queries of its first and last data lines, every
    row of each."""
    from .io import trec

    with contextlib.ExitStack() as stack:
        name, blocks = trec.open_blocks(path, trec.CHUNK_BYTES, stack)
        cols = trec.parse_blocks(name, blocks, is_run=True, intern_docs=False)
    qidx = np.asarray(cols.query_index)
    run = from_trec_columns(Run, cols, False)
    if not len(qidx):
        return RangeResult([], [], np.zeros((0, len(columns))), True)
    ev = Evaluation(qrels, run, queries="run", allow_none=True, **dict(options, workers=1))
    values = ev.values(columns) if ev.ids else np.zeros((0, len(columns)), dtype=np.float64)

    def rows(q: int):
        lo, hi = int(run.offsets[q]), int(run.offsets[q + 1])
        return (run.query_ids[q], [run.doc_id(i) for i in range(lo, hi)],
                np.array(run.values[lo:hi], dtype=np.float64))

    return RangeResult(run.query_ids, ev.ids, values, True, rows(int(qidx[0])),
                       rows(int(qidx[-1])))


def _kept(blocks, spill: _Spill):
    for block in blocks:
        spill.add(block)
        yield block


# ---------------------------------------------------------------------------------------------
# many runs


def check_readable(name: str, run) -> None:
    """Refuse a run path that cannot be opened before any run is evaluated, naming it."""
    if not isinstance(run, (str, os.PathLike)):
        return
    path = os.fspath(run)
    if not isinstance(path, str) or path == "-":
        return
    # not opened: opening a FIFO would wait for its writer, and closing it again could
    # leave the writer with no reader
    try:
        st = os.stat(path)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
        if not os.access(path, os.R_OK):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), path)
    except OSError as e:
        from .io.trec import shown_path, text_as_path_hint

        what = e.strerror or str(e)
        hint = text_as_path_hint(path) if isinstance(e, FileNotFoundError) else None
        if hint is not None:
            what = f"{what} ({hint})"
            name = path = shown_path(path)
        where = f"run file {path!r}" if name == path else f"run {name!r} ({path!r})"
        raise type(e)(f"{where} cannot be read: {what}") from None


def source_size(run) -> int | None:
    """The bytes a progress bar counts for ``run``: a plain file's size, else None."""
    path = _plain_path(run)
    return os.path.getsize(path) if path is not None else None


def evaluate_run_sources(qrels: Qrels, runs: list, columns: list[Column], *, queries: str,
                         options: dict, relcols: dict | None = None,
                         progress=None) -> list[RunResult]:
    """evaluate_run_source for each of ``runs`` ((name, run) pairs), spread over
    ``options["workers"]`` threads: one run per thread, and a run's file cut into ranges
    when there are more threads than runs. Results in the order of ``runs``; they do not
    depend on the number of threads. ``progress``: a _progress.Progress counting runs."""
    for name, run in runs:
        check_readable(name, run)
    workers = resolve_workers(options["workers"])
    n = len(runs)
    if n == 0:
        return []
    threads = min(workers, n)
    each = dict(options, workers=max(1, workers // n))

    cancel = threading.Event()

    def one(item):
        name, run = item
        try:
            result = evaluate_run_source(qrels, run, columns, queries=queries, options=each,
                                         relcols=relcols, cancel=cancel)
        except Exception as e:
            if name not in str(e):  # a run given as bytes, a dict, ...: say which one
                e.add_note(f"while evaluating run {name!r}")
            raise
        if progress is not None:
            progress.update(1)
        return result

    if threads == 1:
        return [one(item) for item in runs]
    from concurrent.futures import ThreadPoolExecutor

    # a pool of its own: each run may use the shared pools for its ranges
    with ThreadPoolExecutor(threads, thread_name_prefix="qafast-runs") as pool:
        futures = submit_all(pool, one, [(item,) for item in runs], cancel)
        try:
            results = []
            for f in futures:
                wait_all([f], cancel)
                results.append(f.result())
            return results
        except BaseException:
            # an error or an interrupt: the runs not started are dropped, and those being
            # read stop at their next block
            settle(futures, cancel)
            raise
