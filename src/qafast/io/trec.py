"""Fast readers for TREC run and qrels files, with trec_eval 10.0's line format.

A run line is ``qid iter docno rank score run_id`` and a qrels line is ``qid iter docno rel``,
fields separated by spaces or tabs (any of the ASCII whitespace characters of C ``isspace``).
Fields after the sixth (run) or the fourth (qrels) are ignored, as are ``iter`` and ``rank``.
Blank lines are skipped, and so are lines whose first character is ``#``; a ``#`` anywhere else
is data (MS MARCO document ids contain one). Lines end in ``\\n`` or ``\\r\\n``.

The text is read in chunks of at most ``_CHUNK_BYTES`` (64 MiB, more only for a single longer
line) and parsed by the compiled ``qafast._kernels._trec_Parser`` without the GIL; query and
document ids are interned in C, so each distinct id becomes one Python ``str``.
"""

from __future__ import annotations

import gzip
import io
import os
import sys
from dataclasses import dataclass
from typing import IO, Any, Union

import numpy as np

from .._kernels import _trec_Parser

__all__ = ["TrecColumns", "TrecFormatError", "read_trec_qrels", "read_trec_run"]

_CHUNK_BYTES = 64 * 1024 * 1024
_GZIP_MAGIC = b"\x1f\x8b"

Source = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, IO[bytes]]


class TrecFormatError(ValueError):
    """A malformed line in a TREC run or qrels file.

    ``path`` names the source (``'<stdin>'``, ``'<bytes>'`` or ``'<file>'`` when it has no
    file name) and ``line`` is the 1-based line number.
    """

    def __init__(self, message: str, *, path: str, line: int) -> None:
        super().__init__(f"{path}, line {line}: {message}")
        self.path = path
        self.line = line
        self.message = message

    def __reduce__(self) -> Any:
        return (_rebuild_format_error, (self.message, self.path, self.line))


def _rebuild_format_error(message: str, path: str, line: int) -> TrecFormatError:
    return TrecFormatError(message, path=path, line=line)


@dataclass(eq=False)
class TrecColumns:
    """The data lines of a TREC file as columns, one row per line, in file order.

    Attributes
    ----------
    query_ids : list of str
        Distinct query ids, in first-seen order.
    query_index : numpy.ndarray of int32
        Per line, the index of its query id in ``query_ids``.
    doc_ids : list of str
        Distinct document ids (over all queries), in first-seen order.
    doc_index : numpy.ndarray of int32
        Per line, the index of its document id in ``doc_ids``.
    values : numpy.ndarray
        Per line, the score (``float64``, run) or the relevance grade (``int32``, qrels).
    line_numbers : numpy.ndarray of int64
        Per line, its 1-based line number in the file (comments and blank lines count).
    run_id : str or None
        The run's sixth field on its last data line (trec_eval reports that one); ``None``
        for qrels and for a run without data lines.
    path : str
        The source, for messages.
    """

    query_ids: list[str]
    query_index: np.ndarray
    doc_ids: list[str]
    doc_index: np.ndarray
    values: np.ndarray
    line_numbers: np.ndarray
    run_id: str | None
    path: str

    def __len__(self) -> int:
        return int(self.query_index.shape[0])


def read_trec_run(source: Source) -> TrecColumns:
    """Read a TREC run: ``qid iter docno rank score run_id`` per line.

    Parameters
    ----------
    source : str, os.PathLike, bytes-like or binary file object
        A path (gzip-compressed when it ends in ``.gz`` or starts with the gzip magic bytes),
        ``"-"`` for standard input, the file's content as bytes, or an open file.

    Returns
    -------
    TrecColumns
        ``values`` holds the scores as ``float64``, each exactly ``float(token)``.

    Raises
    ------
    TrecFormatError
        For a line with fewer than 6 fields, a score that is not a number (Python ``float``
        syntax without ``_`` separators) or is NaN, or an id or run id that is not UTF-8.
    """
    return _read(source, is_run=True)


def read_trec_qrels(source: Source) -> TrecColumns:
    """Read TREC relevance judgements: ``qid iter docno rel`` per line.

    Parameters
    ----------
    source : str, os.PathLike, bytes-like or binary file object
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
    """
    return _read(source, is_run=False)


def _read(source: Source, *, is_run: bool, chunk_bytes: int | None = None) -> TrecColumns:
    chunk = _CHUNK_BYTES if chunk_bytes is None else chunk_bytes
    parser = _trec_Parser(is_run)
    if isinstance(source, (bytes, bytearray, memoryview)):
        path = "<bytes>"
        data = memoryview(source).cast("B")
        if data[:2] == _GZIP_MAGIC:
            with gzip.GzipFile(fileobj=io.BytesIO(data)) as f:
                _feed_stream(parser, f, path, chunk)
        else:
            _feed_bytes(parser, data, path, chunk)
    elif isinstance(source, (str, os.PathLike)):
        name = os.fspath(source)
        if not isinstance(name, str):
            raise TypeError(f"source path must be str or os.PathLike[str], got {name!r}")
        if name == "-":
            path = "<stdin>"
            _feed_stream(parser, sys.stdin.buffer, path, chunk)
        else:
            path = name
            with open(name, "rb", buffering=0) as raw:
                gz = name.endswith(".gz")
                if not gz and raw.seekable():  # not a pipe: sniff the gzip magic
                    gz = raw.read(2) == _GZIP_MAGIC
                    raw.seek(0)
                if gz:
                    with gzip.GzipFile(fileobj=raw, mode="rb") as f:
                        _feed_stream(parser, f, path, chunk)
                else:
                    _feed_stream(parser, raw, path, chunk)
    elif hasattr(source, "read"):
        name = getattr(source, "name", None)
        path = name if isinstance(name, str) else "<file>"
        _feed_stream(parser, source, path, chunk)
    else:
        raise TypeError(
            "source must be a path, '-', a bytes-like object or a binary file object, "
            f"got {type(source).__name__}"
        )
    query_ids, query_index, doc_ids, doc_index, values, line_numbers, run_id = parser.finish()
    return TrecColumns(
        query_ids=query_ids,
        query_index=query_index,
        doc_ids=doc_ids,
        doc_index=doc_index,
        values=values,
        line_numbers=line_numbers,
        run_id=run_id,
        path=path,
    )


def _check(parser: _trec_Parser, consumed: int, path: str) -> int:
    if consumed < 0:
        raise TrecFormatError(parser.error_message, path=path, line=parser.error_line)
    return consumed


def _feed_bytes(parser: _trec_Parser, data: memoryview, path: str, chunk: int) -> None:
    # Already in memory: hand over zero-copy slices of about `chunk` bytes (bounding the
    # parser's per-call scratch space).
    start, n = 0, len(data)
    while n - start > chunk:
        consumed = _check(parser, parser.feed(data[start : start + chunk], False), path)
        if consumed == 0:  # a single line longer than the chunk: parse the rest at once
            break
        start += consumed
    _check(parser, parser.feed(data[start:], True), path)


def _feed_stream(parser: _trec_Parser, f: Any, path: str, chunk: int) -> None:
    if isinstance(f, io.TextIOBase):
        buffer = getattr(f, "buffer", None)
        if buffer is None:  # io.StringIO
            _feed_read(parser, f, path, chunk)
            return
        f = buffer
    readinto = getattr(f, "readinto", None)
    if readinto is None:
        _feed_read(parser, f, path, chunk)
        return
    buf = bytearray(chunk)
    view = memoryview(buf)
    filled = 0
    while True:
        if filled == len(buf):  # a single line longer than the buffer
            bigger = bytearray(2 * len(buf))
            bigger[:filled] = view
            view.release()
            buf, view = bigger, memoryview(bigger)
        got = readinto(view[filled:])
        if not got:
            break
        filled += got
        consumed = _check(parser, parser.feed(view[:filled], False), path)
        if consumed:
            rest = bytes(view[consumed:filled])
            filled = len(rest)
            view[:filled] = rest
    _check(parser, parser.feed(view[:filled], True), path)


def _feed_read(parser: _trec_Parser, f: Any, path: str, chunk: int) -> None:
    # File-like objects with read() only, and text-mode ones (their str is UTF-8 encoded).
    rest = b""
    while True:
        block = f.read(chunk)
        if isinstance(block, str):
            block = block.encode("utf-8")
        if not block:
            break
        data = rest + block if rest else bytes(block)
        consumed = _check(parser, parser.feed(data, False), path)
        rest = data[consumed:]
    _check(parser, parser.feed(rest, True), path)
