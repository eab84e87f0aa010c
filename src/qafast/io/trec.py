"""Fast readers for TREC run and qrels files, with trec_eval 10.0's line format.

A run line is ``qid iter docno rank score run_id`` and a qrels line is ``qid iter docno rel``,
fields separated by spaces or tabs (any of the ASCII whitespace characters of C ``isspace``).
Fields after the sixth (run) or the fourth (qrels) are ignored, as are ``iter`` and ``rank``.
Blank lines are skipped, and so are lines whose first character is ``#`` (in a run, whose first
non-blank character is, as trec_eval reads runs); a ``#`` anywhere else is data (MS MARCO
document ids contain one). Lines end in ``\\n`` or ``\\r\\n``.

The text is read in blocks of about ``CHUNK_BYTES`` (1 MiB, so that a block is still in
cache for the second stage; more only for a single longer line, up to ``MAX_LINE_BYTES``,
past which the line is refused), each ending at a line end,
and parsed by the compiled ``qafast._kernels._trec_Parser`` in two stages that release the
GIL: scanning lines (fields, scores, hashes) and interning ids (one Python ``str`` per
distinct id, made in C). With ``workers`` other than 1 a helper thread reads and scans the
next block while the calling thread interns the current one.

``intern_docs=False`` skips the document ids' interning, the largest cost of a big run (a
hash table and one ``str`` per distinct document): each line's document id is then given by
its 64-bit hash, its order-preserving tie key and its UTF-8 bytes in one blob, with no Python
object per line or per document.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import queue
import stat
import sys
import threading
import zlib
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from typing import IO, Any, Union, cast

import numpy as np

from .._kernels import _trec_last_newline, _trec_MAX_LINE_BYTES, _trec_Parser
from ..errors import InputError, InputTypeError
from ._errors import LineFormatError

__all__ = ["MAX_LINE_BYTES", "TrecColumns", "TrecFormatError", "read_trec_qrels",
           "read_trec_run"]

CHUNK_BYTES = 1024 * 1024
#: The longest line a TREC run or qrels may have: 1 MiB (1,048,576 bytes before its
#: ``\n``), a comment or blank line too. Real lines are a few dozen bytes. A longer line is
#: a :class:`TrecFormatError` naming the file and the line, met after reading at most this
#: and a block more of it: a file of one endless line (a ``.gz`` of gigabytes of one byte)
#: takes neither unbounded memory nor a rescan of the text per block.
MAX_LINE_BYTES = _trec_MAX_LINE_BYTES
_GZIP_MAGIC = b"\x1f\x8b"

Source = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, IO[bytes]]


class TrecFormatError(LineFormatError):
    """A malformed line in a TREC run or qrels file."""


def line_too_long(path: str) -> TrecFormatError:
    # what a block reader raises if asked for more after handing on a line longer than
    # MAX_LINE_BYTES (the parser refuses that line first, naming its number)
    return TrecFormatError(f"a line longer than {MAX_LINE_BYTES} bytes (1 MiB, the longest a "
                           "TREC line may be); is this a TREC file?", path=path)


@dataclass(eq=False, repr=False)
class TrecColumns:
    """The data lines of a TREC file as columns, one row per line, in file order.

    Attributes
    ----------
    query_ids : list of str
        Distinct query ids, in first-seen order.
    query_index : numpy.ndarray of int32
        Per line, the index of its query id in ``query_ids``.
    doc_ids : list of str or None
        Distinct document ids (over all queries), in first-seen order; ``None`` when read
        with ``intern_docs=False``.
    doc_index : numpy.ndarray of int32 or None
        Per line, the index of its document id in ``doc_ids``; ``None`` with
        ``intern_docs=False``.
    values : numpy.ndarray
        Per line, the score (``float64``, run) or the relevance grade (``int32``, qrels).
    line_numbers : numpy.ndarray of int64
        Per line, its 1-based line number in the file (comments and blank lines count).
    run_id : str or None
        The run's sixth field on its last data line (trec_eval reports that one); ``None``
        for qrels and for a run without data lines.
    path : str
        The source, for messages.
    doc_hashes : numpy.ndarray of int64 or None
        With ``intern_docs=False``, per line, the 64-bit hash of its document id's UTF-8
        bytes (``qafast._kernels._trec_hash_bytes``, the hash qafast uses for ids throughout);
        else ``None``. Equal ids hash equal; different ids may too, rarely, so compare bytes.
    doc_tiekeys : numpy.ndarray of int64 or None
        With ``intern_docs=False``, per line, its document id's tie key: the first 8 bytes
        read big-endian (zero-padded), the top bit flipped, as int64, so that comparing two
        keys as signed integers orders the ids by their first 8 bytes; else ``None``.
    doc_offsets : numpy.ndarray of int64 or None
        With ``intern_docs=False``, ``len(self) + 1`` offsets into ``doc_blob``: line i's
        document id is ``doc_blob[doc_offsets[i]:doc_offsets[i + 1]]``; else ``None``.
    doc_blob : numpy.ndarray of uint8 or None
        With ``intern_docs=False``, the document ids' UTF-8 bytes (all valid UTF-8),
        concatenated in line order; else ``None``.
    """

    query_ids: list[str]
    query_index: np.ndarray
    doc_ids: list[str] | None
    doc_index: np.ndarray | None
    values: np.ndarray
    line_numbers: Any  # numpy.ndarray; qafast._lines.LineNumbers inside qafast
    run_id: str | None
    path: str
    doc_hashes: np.ndarray | None = None
    doc_tiekeys: np.ndarray | None = None
    doc_offsets: np.ndarray | None = None
    doc_blob: np.ndarray | None = None

    def __len__(self) -> int:
        return int(self.query_index.shape[0])

    def __repr__(self) -> str:  # the id lists can hold millions of strings: counts only
        what = "qrels" if self.values.dtype.kind == "i" else "run"
        docs = (
            f"{len(self.doc_ids)} documents"
            if self.doc_ids is not None
            else "documents not interned"
        )
        return (
            f"TrecColumns({what}, {len(self)} lines, {len(self.query_ids)} queries, "
            f"{docs}, run_id={self.run_id!r}, path={self.path!r})"
        )

    def doc_id_bytes(self, i: int) -> bytes:
        """Line ``i``'s document id as UTF-8 bytes, in either mode."""
        if self.doc_ids is not None and self.doc_index is not None:
            return self.doc_ids[int(self.doc_index[i])].encode("utf-8")
        assert self.doc_offsets is not None and self.doc_blob is not None
        return self.doc_blob[self.doc_offsets[i] : self.doc_offsets[i + 1]].tobytes()


def read_trec_run(source: Source, *, workers: int = 1, intern_docs: bool = True) -> TrecColumns:
    """Read a TREC run: ``qid iter docno rank score run_id`` per line.

    Parameters
    ----------
    source : str, os.PathLike, bytes-like or binary file object
        A path (gzip-compressed when it ends in ``.gz`` or starts with the gzip magic bytes),
        ``"-"`` for standard input, the file's content as bytes, or an open file (binary;
        a text-mode file is read through its ``buffer``).
    workers : int, default=1
        1 parses in the calling thread. Any other value (``-1`` for all cores) reads and
        scans lines in one helper thread while the calling thread interns ids; more than two
        threads are never used. The result is the same.
    intern_docs : bool, default=True
        True maps document ids to ``doc_ids`` / ``doc_index``. False leaves those ``None``
        and gives each line's document id as ``doc_hashes``, ``doc_tiekeys`` and its bytes
        in ``doc_blob`` at ``doc_offsets`` instead: no Python object per document, and
        several times faster on a large run. Query ids are interned either way, and the
        same lines are refused.

    Returns
    -------
    TrecColumns
        ``values`` holds the scores as ``float64``, each exactly ``float(token)``.

    Raises
    ------
    TrecFormatError
        For a line with fewer than 6 fields, a score that is not a number (Python ``float``
        syntax without ``_`` separators) or is NaN, or an id or run id that is not UTF-8.

    Examples
    --------
    >>> from qafast.io import read_trec_run
    >>> run = read_trec_run(b"q1 Q0 d1 1 2.5 bm25\\nq1 Q0 d2 2 1.5 bm25\\nq2 Q0 d1 1 0.5 bm25\\n")
    >>> run.query_ids, run.query_index
    (['q1', 'q2'], array([0, 0, 1], dtype=int32))
    >>> run.doc_ids, run.doc_index
    (['d1', 'd2'], array([0, 1, 0], dtype=int32))
    >>> run.values, run.run_id
    (array([2.5, 1.5, 0.5]), 'bm25')
    >>> flat = read_trec_run(b"q1 Q0 d1 1 2.5 r\\nq1 Q0 doc22 2 1.5 r\\n", intern_docs=False)
    >>> flat.doc_ids is None, flat.doc_offsets, flat.doc_blob.tobytes()
    (True, array([0, 2, 7]), b'd1doc22')
    >>> hex(int(flat.doc_tiekeys[0]) % 2**64)  # b"d1" + 6 zero bytes, top bit flipped
    '0xe431000000000000'
    """
    return read_columns(source, is_run=True, workers=workers, intern_docs=intern_docs)


def read_trec_qrels(
    source: Source, *, workers: int = 1, intern_docs: bool = True
) -> TrecColumns:
    """Read TREC relevance judgements: ``qid iter docno rel`` per line.

    Parameters
    ----------
    source : str, os.PathLike, bytes-like or binary file object
        As for :func:`read_trec_run`.
    workers : int, default=1
        As for :func:`read_trec_run`.
    intern_docs : bool, default=True
        As for :func:`read_trec_run`.

    Returns
    -------
    TrecColumns
        ``values`` holds the grades as ``int32``; ``run_id`` is ``None``.

    Raises
    ------
    TrecFormatError
        For a line with fewer than 4 fields, a grade that is not an integer (``[+-]digits``;
        ``1.5`` is refused, where trec_eval's ``atol`` would read 1) or is outside int32, or
        an id that is not UTF-8.

    Examples
    --------
    >>> from qafast.io import read_trec_qrels
    >>> qrels = read_trec_qrels(b"# judged by hand\\nq1 0 d1 1\\nq1 0 d3 0\\n")
    >>> qrels.doc_ids, qrels.values, qrels.line_numbers
    (['d1', 'd3'], array([1, 0], dtype=int32), array([2, 3]))
    >>> try:
    ...     read_trec_qrels(b"q1 0 d1 1\\nq1 0 d2 1.5\\n")
    ... except ValueError as e:  # a TrecFormatError
    ...     print(e.path, e.line, e.message)
    <bytes> 2 relevance grade (4th field) '1.5' is not an integer
    """
    return read_columns(source, is_run=False, workers=workers, intern_docs=intern_docs)


def read_columns(
    source: Source,
    *,
    is_run: bool,
    workers: int = 1,
    chunk_bytes: int | None = None,
    intern_docs: bool = True,
    tie_keys: bool = True,
    line_column: bool = True,
) -> TrecColumns:
    # tie_keys=False: no doc_tiekeys (None), for qrels, which are never ranked by document.
    # line_column=False: line_numbers as the parser keeps them, a qafast._lines.LineNumbers
    # (the rows where the numbering jumps), not an int64 column (8 bytes a line)
    threaded = _threaded(workers)
    if not isinstance(intern_docs, (bool, np.bool_)):
        raise InputTypeError(f"intern_docs must be a bool, got {type(intern_docs).__name__}")
    intern_docs = bool(intern_docs)
    chunk = CHUNK_BYTES if chunk_bytes is None else chunk_bytes
    with contextlib.ExitStack() as stack:
        path, blocks = open_blocks(source, chunk, stack)
        with memory_named(path, f"reading it as a TREC {'run' if is_run else 'qrels'}"):
            cols = parse_blocks(path, blocks, is_run=is_run, threaded=threaded,
                                intern_docs=intern_docs, tie_keys=tie_keys)
    if line_column:
        cols.line_numbers = np.asarray(cols.line_numbers)
    return cols


@contextlib.contextmanager
def memory_named(path: str, doing: str) -> Iterator[None]:
    """A MemoryError raised within (a bare one from Python, numpy's, the parser's) again,
    its message naming ``path``, what was being done and the allocation that failed."""
    try:
        yield
    except MemoryError as e:
        what = str(e)
        if what.startswith(f"{path}: out of memory"):  # named already, further in
            raise
        raise MemoryError(f"{path}: out of memory {doing}: "
                          f"{what or 'an allocation failed'}") from e


def parse_blocks(path: str, blocks: Iterator, *, is_run: bool, threaded: bool = False,
                  intern_docs: bool = True, tie_keys: bool = True) -> TrecColumns:
    """The columns of the lines in ``blocks`` (each ending at a line end, as open_blocks
    gives them), line_numbers as a qafast._lines.LineNumbers."""
    parser = _trec_Parser(is_run, intern_docs, tie_keys)
    (_pipelined if threaded else _sequential)(parser, blocks, path)
    (query_ids, query_index, doc_ids, doc_index, values, line_numbers, run_id,
     doc_hashes, doc_tiekeys, doc_offsets, doc_blob) = parser.finish()
    return TrecColumns(
        query_ids=query_ids,
        query_index=query_index,
        doc_ids=doc_ids,
        doc_index=doc_index,
        values=values,
        line_numbers=line_numbers,
        run_id=run_id,
        path=path,
        doc_hashes=doc_hashes,
        doc_tiekeys=doc_tiekeys,
        doc_offsets=doc_offsets,
        doc_blob=doc_blob,
    )


def _threaded(workers: int) -> bool:
    if isinstance(workers, bool) or not isinstance(workers, int):
        raise InputTypeError(f"workers must be an int, got {type(workers).__name__}")
    if workers == 0:
        raise InputError("workers must be 1, more than 1, or negative for all cores; got 0")
    if workers == 1:
        return False
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return (cores or 1) > 1


# ----------------------------------------------------------------------------------------------
# sources, as an iterator of blocks that each end at a line end


def text_as_path_hint(name: str) -> str | None:
    """What to say when a str that is not an existing file holds a line break: it is most
    likely a file's text given where a path is read."""
    if "\n" not in name:
        return None
    return "a str is read as a file's path; to give a TREC file's text, pass bytes: text.encode()"


def shown_path(name: str) -> str:
    """A path for a message, cut to 60 characters: one made of a file's text can be huge."""
    return name if len(name) <= 60 else name[:57] + "..."


def _open_path(name: str) -> Any:
    try:
        return open(name, "rb", buffering=0)
    except FileNotFoundError as e:
        hint = text_as_path_hint(name)
        if hint is None:
            raise
        raise FileNotFoundError(e.errno, f"{e.strerror} ({hint})", shown_path(name)) from None


def open_blocks(source: Source, chunk: int, stack: contextlib.ExitStack) -> tuple[str, Iterator]:
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = memoryview(source).cast("B")
        if data[:2] == _GZIP_MAGIC:
            return "<bytes>", _gzip_blocks(io.BytesIO(data), chunk, "<bytes>")
        return "<bytes>", _buffer_blocks(data, chunk)
    if isinstance(source, (str, os.PathLike)):
        name = os.fspath(source)
        if not isinstance(name, str):
            raise InputTypeError(f"source path must be str or os.PathLike[str], got {name!r}")
        if name == "-":
            return "<stdin>", _sniffed_blocks(sys.stdin, chunk, "<stdin>", stack)
        raw = stack.enter_context(_open_path(name))
        gz = name.endswith(".gz")
        if not gz and raw.seekable():  # not a pipe: sniff the gzip magic
            gz = raw.read(2) == _GZIP_MAGIC
            raw.seek(0)
        _widen_pipe(raw)  # a named pipe (FIFO)
        raw = _polled(raw)
        if gz:
            return name, _gzip_blocks(raw, chunk, name, stack)
        return name, _stream_blocks(raw, chunk, name)
    if hasattr(source, "read"):
        file_name = getattr(source, "name", None)
        name = file_name if isinstance(file_name, str) else "<file>"
        return name, _sniffed_blocks(source, chunk, name, stack)
    raise InputTypeError(
        "source must be a path, '-', a bytes-like object or a binary file object, "
        f"got {type(source).__name__}"
    )


# the pipe buffer asked for when a run or qrels comes through a pipe
_PIPE_BYTES = 1 << 20


def _widen_pipe(f: Any) -> None:
    """Ask Linux for a pipe buffer of ``_PIPE_BYTES`` when ``f`` reads from a pipe. The
    writer and this reader then take turns a megabyte at a time instead of 64 KiB: 3.6 GB
    from ``cat`` were read in 1.6 s instead of 3.6 s. Nothing happens elsewhere, or when
    the kernel refuses (/proc/sys/fs/pipe-max-size, a user's pipe quota)."""
    try:
        import fcntl

        fd = f.fileno()
        if stat.S_ISFIFO(os.fstat(fd).st_mode):
            fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
    except (ImportError, AttributeError, OSError, ValueError, io.UnsupportedOperation):
        pass


def _sniffed_blocks(f: Any, chunk: int, path: str,
                    stack: contextlib.ExitStack) -> Iterator[memoryview]:
    """A stream's blocks, decompressed when it starts with the gzip magic (a ``.gz`` piped
    to stdin). Only a buffered stream can be looked at without consuming it (``peek``);
    others are read as they are."""
    _widen_pipe(f)
    binary = getattr(f, "buffer", f) if isinstance(f, io.TextIOBase) else f
    peek = getattr(binary, "peek", None)
    if peek is not None:
        try:
            head = peek(2)
        except (OSError, ValueError):
            head = b""
        if isinstance(head, bytes) and head[:2] == _GZIP_MAGIC:
            return _gzip_blocks(_polled(binary), chunk, path, stack)
    return _stream_blocks(_polled(f), chunk, path)


# how long a thread reading a pipe waits for it at a time, in seconds, before it looks
# whether it should stop (read_ahead)
_POLL = 0.1
# set in a thread that read_ahead runs: its event, set when the reading should stop
_reading = threading.local()


class _Stopped(Exception):
    """A read_ahead helper was told to stop while it waited for a pipe."""


def _polled(f: Any) -> Any:
    """``f`` read so that a thread waiting for its bytes can stop, where it is a pipe, a
    socket or a terminal (a plain file object over one: others are left alone, as their
    file descriptor may not hold the bytes they give). A helper thread (read_ahead) blocked
    in a read of a pipe whose writer has stalled could not be stopped, and waiting for it
    kept a Ctrl-C from ending the call; the polled reader waits a tenth of a second at a time
    and stops when read_ahead is closed. Bytes ``f`` had buffered already (a ``peek``) are
    handed over first."""
    if os.name != "posix" or type(f) not in (io.BufferedReader, io.FileIO, io.TextIOWrapper):
        return f
    binary = f.buffer if isinstance(f, io.TextIOWrapper) else f
    if type(binary) not in (io.BufferedReader, io.FileIO):
        return f
    try:
        fd = binary.fileno()
        mode = os.fstat(fd).st_mode
    except (OSError, ValueError, io.UnsupportedOperation):
        return f
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)):
        return f
    pending = b""
    if isinstance(binary, io.BufferedReader):
        # what a peek read ahead; peek does not read again while bytes are buffered
        held = binary.peek(1)
        pending = binary.read1(len(held)) if held else b""
    return _PipeReader(fd, pending)


class _PipeReader(io.RawIOBase):
    """The bytes of a pipe's file descriptor (left open), ``pending`` ones first, each read
    waiting for the pipe in steps of _POLL."""

    def __init__(self, fd: int, pending: bytes) -> None:
        super().__init__()
        self._fd = fd
        self._pending = memoryview(pending)
        import select

        self._poll = select.poll()
        self._poll.register(fd, select.POLLIN | select.POLLPRI)

    def readable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        if len(self._pending):
            n = min(len(view), len(self._pending))
            view[:n] = self._pending[:n]
            self._pending = self._pending[n:]
            return n
        stop = getattr(_reading, "stop", None)
        # an interrupt in the main thread breaks the wait (the poll is retried only when
        # the signal handler raises nothing)
        while not self._poll.poll(int(_POLL * 1000)):
            if stop is not None and stop.is_set():
                raise _Stopped()
        return os.readv(self._fd, [view])


def _gzip_blocks(raw: Any, chunk: int, path: str,
                 stack: contextlib.ExitStack | None = None) -> Iterator[memoryview]:
    """The decompressed blocks of gzip data, a truncated or corrupt stream being a
    TrecFormatError that names the source (gzip's own errors name neither it nor the
    problem's kind)."""
    gz, corrupt = _gzip_reader(raw)
    if stack is not None:
        stack.enter_context(gz)
    try:
        yield from _stream_blocks(gz, chunk, path)
    except EOFError:
        raise TrecFormatError("truncated gzip data: the compressed stream ends before its "
                              "end marker", path=path) from None
    except corrupt as e:
        raise TrecFormatError(f"corrupt gzip data ({e})", path=path) from None


# False: always the standard library's gzip (tests compare the two readers)
_USE_ISAL = True


def _gzip_reader(raw: Any) -> tuple[Any, tuple[type[Exception], ...]]:
    """A file object reading the gzip data of ``raw``, and the exceptions that mean the data
    is corrupt. python-isal's reader (``pip install "qafast[gzip]"``) when it is installed:
    the same bytes, decompressed twice as fast as by the standard library (0.94 s against
    2.08 s for a 705 MB run), which is the bound of reading a ``.gz`` run."""
    if _USE_ISAL:
        try:
            from isal import igzip, isal_zlib
        except ImportError:
            pass
        else:
            isal_error = cast(type[Exception], isal_zlib.error)
            return igzip.IGzipFile(fileobj=raw), (gzip.BadGzipFile, zlib.error, isal_error)
    return gzip.GzipFile(fileobj=raw), (gzip.BadGzipFile, zlib.error)


def _buffer_blocks(data: memoryview, chunk: int) -> Iterator[memoryview]:
    # Already in memory: zero-copy slices of about `chunk` bytes.
    start, n = 0, len(data)
    while n - start > chunk:
        cut = _trec_last_newline(data[start : start + chunk])
        if cut < 0:  # a single line longer than the chunk: the rest in one block
            break
        yield data[start : start + cut + 1]
        start += cut + 1
    if start < n:
        yield data[start:]


def _stream_blocks(f: Any, chunk: int, path: str = "<file>") -> Iterator[memoryview]:
    if isinstance(f, io.TextIOBase):
        buffer = getattr(f, "buffer", None)
        if buffer is None:  # io.StringIO
            return _read_blocks(f, chunk, path)
        f = buffer
    readinto = getattr(f, "readinto", None)
    if readinto is None:
        return _read_blocks(f, chunk, path)
    return readinto_blocks(readinto, chunk, path)


def readinto_blocks(readinto: Any, chunk: int, path: str = "<file>") -> Iterator[memoryview]:
    # Each block is a fresh buffer (a batch may still hold the previous one): the partial
    # line at the end of one read starts the next buffer. A line longer than MAX_LINE_BYTES
    # is handed on unfinished, for the parser to refuse with its line number, and the
    # reading stops there: the buffers never grow past about twice the bound.
    carry = b""
    size = chunk
    while True:
        view = np.empty(max(size, len(carry) + chunk), dtype=np.uint8).data
        filled = len(carry)
        view[:filled] = carry
        eof = False
        while filled < len(view):  # pipes and sockets return short reads
            got = readinto(view[filled:])
            if not got:
                eof = True
                break
            filled += got
        if eof:
            if filled:
                yield view[:filled]
            return
        cut = _trec_last_newline(view[:filled])
        if cut < 0:  # a single line longer than the buffer
            if filled > MAX_LINE_BYTES:
                yield view[:filled]
                raise line_too_long(path)
            carry = bytes(view[:filled])
            size = 2 * len(view)
            continue
        yield view[: cut + 1]
        carry = bytes(view[cut + 1 : filled])
        size = chunk


def _read_blocks(f: Any, chunk: int, path: str = "<file>") -> Iterator[memoryview]:
    # Objects with read() only, and text-mode ones (their str is encoded to UTF-8).
    carry = b""
    while True:
        data = f.read(chunk)
        if isinstance(data, str):
            data = data.encode("utf-8")
        if not data:
            if carry:
                yield memoryview(carry)
            return
        data = carry + data if carry else bytes(data)
        cut = data.rfind(b"\n")
        if cut < 0:
            if len(data) > MAX_LINE_BYTES:  # as readinto_blocks
                yield memoryview(data)
                raise line_too_long(path)
            carry = data
            continue
        yield memoryview(data)[: cut + 1]
        carry = data[cut + 1 :]


# ----------------------------------------------------------------------------------------------
# drivers


def _sequential(parser: _trec_Parser, blocks: Iterator, path: str) -> None:
    batch = None
    fused = not parser.interns_docs
    for block in blocks:
        if fused:  # both stages in one pass over the text
            batch = parser.scan_intern(block, batch)
            raise_scan_error(batch, path)
        else:
            batch = parser.scan(block, batch)
            _intern(parser, batch, path, lambda: None)
        batch.release()


def _intern(parser: _trec_Parser, batch: Any, path: str, quiesce: Callable[[], None]) -> None:
    if not parser.intern(batch):
        quiesce()  # error_line() reads an array the scanning thread may be growing
        assert parser.error_message is not None  # set whenever intern() fails
        raise TrecFormatError(parser.error_message, path=path, line=parser.error_line())
    raise_scan_error(batch, path)


def raise_scan_error(batch: Any, path: str) -> None:
    if batch.error_line:
        raise TrecFormatError(batch.error_message, path=path, line=batch.error_line)


def read_ahead(items: Iterator, depth: int, name: str) -> Generator[Any, None, None]:
    """``items``, produced by a helper thread up to ``depth`` items ahead of the caller
    (the producer's work, reading, decompressing or scanning, releases the GIL). An
    exception the producer raises is raised here; closing this generator stops the producer
    at its next item and waits for it."""
    todo: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()
    done = object()

    def put(item: Any) -> bool:
        while not stop.is_set():
            try:
                todo.put(item, timeout=0.05)
                return True
            except queue.Full:
                pass
        return False

    def produce() -> None:
        _reading.stop = stop  # a pipe read (_PipeReader) waits no longer once it is set
        try:
            for item in items:
                if not put(item):
                    return
        except BaseException as exc:  # noqa: BLE001 - handed to the consuming thread
            put(exc)
            return
        put(done)

    worker = threading.Thread(target=produce, name=name, daemon=True)
    worker.start()
    try:
        while True:
            item = todo.get()
            if item is done:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        worker.join()


def _pipelined(parser: _trec_Parser, blocks: Iterator, path: str) -> None:
    # A helper thread reads and scans block k + 1 while this one interns block k. Both
    # stages release the GIL; the queue bounds the text held at once to about 4 blocks.
    spare: queue.SimpleQueue = queue.SimpleQueue()  # batches to reuse

    def scanned() -> Iterator:
        for block in blocks:
            try:
                batch = spare.get_nowait()
            except queue.Empty:
                batch = None
            batch = parser.scan(block, batch)
            yield batch
            if batch.error_line:
                return

    ahead = read_ahead(scanned(), 2, "qafast-trec-scan")
    try:
        for batch in ahead:
            _intern(parser, batch, path, ahead.close)
            batch.release()
            spare.put(batch)
    finally:
        ahead.close()
