"""Writing runs and qrels as TREC text, for ``Run.to_trec`` / ``Qrels.to_trec`` and ``save``.

A run line is ``qid Q0 docno rank score tag``, a qrels line ``qid 0 docno grade``, fields
separated by one space. Each query's documents are written in trec_eval's rank order (score
descending, then document id descending), ranked from 1, with scores as ``repr`` writes them:
the shortest text that reads back as the same double, so reading the file (with qafast, or
trec_eval's ``atof``) gives the run back exactly. Ids that a TREC reader would split or skip
are refused: an empty id, one holding ASCII whitespace, or a query id starting with ``#``
(a comment line to the readers).

The lines are made by a kernel (``_trec_write.pxi``); the functions take the encoded data
duck-typed (``query_ids``, ``offsets``, ``values``,
``hashes``, ``keys``, ``key_off``, ``blob``, ``id_bias``), so this module imports nothing
of qafast's above the readers.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
from collections.abc import Iterator
from typing import Any

import numpy as np

from .. import _kernels
from ..errors import InputError, InputTypeError

__all__ = ["qrels_lines", "run_lines", "write_text"]

_WS = b" \t\n\v\f\r"
_WS_ARRAY = np.frombuffer(_WS, dtype=np.uint8)
_ROWS_PER_CHUNK = 100_000
_EMPTY = np.zeros(0, dtype=np.int64)
_EMPTY_U8 = np.zeros(0, dtype=np.uint8)
_EMPTY_I32 = np.zeros(0, dtype=np.int32)
_EMPTY_F64 = np.zeros(0, dtype=np.float64)


def _check_query_id(q: Any, what: str) -> str:
    text = str(q)
    if not text or text.startswith("#") or any(c in text for c in " \t\n\v\f\r"):
        why = ("is empty" if not text else "starts with '#', which TREC readers take for a "
               "comment line" if text.startswith("#") else "holds whitespace, which "
               "separates the fields of a TREC line")
        raise InputError(f"cannot write {what} as TREC text: query id {q!r} {why}")
    return text


def _doc_columns(obj, entries: np.ndarray, what: str) -> dict:
    """The document ids of ``entries`` as the line kernel takes them, each checked to
    survive a TREC reader."""
    if obj.key_off is None:   # integer ids
        return {"int_ids": np.ascontiguousarray(obj.hashes[entries], dtype=np.int64),
                "int_bias": bool(obj.id_bias), "doc_start": _EMPTY, "doc_end": _EMPTY,
                "doc_blob": _EMPTY_U8}
    keys = entries if obj.keys is None else obj.keys[entries]
    start = np.ascontiguousarray(obj.key_off[keys], dtype=np.int64)
    end = np.ascontiguousarray(obj.key_off[keys + 1], dtype=np.int64)
    blob = np.ascontiguousarray(obj.blob, dtype=np.uint8)
    if len(entries) and (end == start).any():
        i = int(entries[np.flatnonzero(end == start)[0]])
        raise InputError(f"cannot write {what} as TREC text: {_where(obj, i)} has an empty "
                         "document id")
    if len(blob):
        spaces = np.flatnonzero(np.isin(blob, _WS_ARRAY))
        if len(spaces):
            # an entry holds whitespace when one lies in [start, end)
            hit = np.searchsorted(spaces, start) < np.searchsorted(spaces, end)
            if hit.any():
                i = int(entries[np.flatnonzero(hit)[0]])
                raise InputError(f"cannot write {what} as TREC text: {_where(obj, i)}: "
                                 f"document id {obj.doc_id(i)!r} holds whitespace, which "
                                 "separates the fields of a TREC line")
    return {"int_ids": _EMPTY, "int_bias": False, "doc_start": start, "doc_end": end,
            "doc_blob": blob}


def _where(obj, entry: int) -> str:
    q = obj.query_ids[int(np.searchsorted(obj.offsets, entry, side="right")) - 1]
    return f"query {q!r}"


def _query_table(query_ids, what: str) -> tuple[np.ndarray, np.ndarray]:
    """The query ids' UTF-8 bytes, one after another, and where each starts."""
    texts = [_check_query_id(q, what).encode("utf-8") for q in query_ids]
    off = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum([len(t) for t in texts], out=off[1:])
    return off, np.frombuffer(b"".join(texts), dtype=np.uint8) if off[-1] else _EMPTY_U8


def _chunks(counts: np.ndarray) -> Iterator[tuple[int, int]]:
    """Query ranges of about _ROWS_PER_CHUNK written rows each."""
    nq = len(counts)
    ends = np.cumsum(counts)
    lo = 0
    while lo < nq:
        base = int(ends[lo - 1]) if lo else 0
        hi = int(np.searchsorted(ends, base + _ROWS_PER_CHUNK, side="right"))
        hi = max(hi, lo + 1)
        yield lo, min(hi, nq)
        lo = hi


def _lines(qid_off, qid_blob, row_query, entries, docs, scores, grades, tag: bytes) -> bytes:
    text = qid_off[row_query + 1] - qid_off[row_query]
    bound = _kernels.trec_line_bound(len(entries), int(text.sum()) + int(
        (docs["doc_end"] - docs["doc_start"]).sum()), len(tag))
    out = np.empty(bound, dtype=np.uint8)
    n = _kernels.trec_lines(row_query, qid_off, qid_blob, docs["doc_start"], docs["doc_end"],
                            docs["doc_blob"], docs["int_ids"], docs["int_bias"], scores,
                            grades, np.frombuffer(tag, dtype=np.uint8), out)
    return out[:n].tobytes()


def run_lines(run, order: np.ndarray, tag: str, depth: int | None) -> Iterator[bytes]:
    """The run's text, in pieces: ``order`` holds each query's entries in rank order."""
    if not tag or any(c in tag for c in " \t\n\v\f\r"):
        raise InputError(f"cannot write a run as TREC text with tag {tag!r}: the tag must be "
                         "a non-empty word without whitespace")
    qid_off, qid_blob = _query_table(run.query_ids, "the run")
    counts = np.diff(run.offsets)
    if depth is not None:
        counts = np.minimum(counts, depth)
    for lo, hi in _chunks(counts):
        n = counts[lo:hi]
        total = int(n.sum())
        if not total:
            continue
        starts = run.offsets[lo:hi]
        pos = np.repeat(starts - np.concatenate(([0], np.cumsum(n)[:-1])), n)
        pos += np.arange(total, dtype=np.int64)
        entries = order[pos]
        row_query = np.repeat(np.arange(lo, hi, dtype=np.int64), n)
        yield _lines(qid_off, qid_blob, row_query, entries, _doc_columns(run, entries, "the run"),
                     np.ascontiguousarray(run.values[entries], dtype=np.float64), _EMPTY_I32,
                     tag.encode("utf-8"))


def qrels_lines(qrels) -> Iterator[bytes]:
    """The qrels' text, in pieces, each query's judgments in stored order."""
    qid_off, qid_blob = _query_table(qrels.query_ids, "the qrels")
    counts = np.diff(qrels.offsets)
    for lo, hi in _chunks(counts):
        a, b = int(qrels.offsets[lo]), int(qrels.offsets[hi])
        if a == b:
            continue
        entries = np.arange(a, b, dtype=np.int64)
        row_query = np.repeat(np.arange(lo, hi, dtype=np.int64), counts[lo:hi])
        yield _lines(qid_off, qid_blob, row_query, entries,
                     _doc_columns(qrels, entries, "the qrels"), _EMPTY_F64,
                     np.ascontiguousarray(qrels.values[a:b], dtype=np.int32), b"")


def write_text(target, pieces: Iterator[bytes], compress: bool | None = None) -> bytes | None:
    """Write ``pieces`` (UTF-8 text) to ``target``: a path (``.gz``: gzip-compressed, or as
    ``compress`` says), a text or binary file object, or None to return the bytes."""
    if target is None:
        data = b"".join(pieces)
        return gzip.compress(data, compresslevel=6) if compress else data
    if isinstance(target, (str, os.PathLike)):
        path = os.fspath(target)
        if not isinstance(path, str):
            raise InputTypeError("a path to write to must be a str or os.PathLike of str")
        gz = path.endswith(".gz") if compress is None else compress
        with open(path, "wb") as raw, (gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6)
                                       if gz else contextlib.nullcontext(raw)) as f:
            for piece in pieces:
                f.write(piece)
        return None
    if not hasattr(target, "write"):
        raise InputTypeError(f"cannot write to a {type(target).__name__}: give a path, a file "
                             "object or None")
    text = isinstance(target, io.TextIOBase)
    for piece in pieces:
        target.write(piece.decode("utf-8") if text else piece)
    return None
