"""Writing runs and qrels as TREC text, for ``Run.to_trec`` / ``Qrels.to_trec`` and ``save``.

A run line is ``qid Q0 docno rank score tag``, a qrels line ``qid 0 docno grade``, fields
separated by one space. Each query's documents are written in trec_eval's rank order (score
descending, then document id descending), ranked from 1, with scores as ``repr`` writes them:
the shortest text that reads back as the same double, so reading the file (with qafast, or
trec_eval's ``atof``) gives the run back exactly. Ids that a TREC reader would split or skip
are refused: an empty id, one holding ASCII whitespace, or a query id starting with ``#``
(a comment line to the readers).

The functions take the encoded data duck-typed (``query_ids``, ``offsets``, ``values``,
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

from ..errors import InputError, InputTypeError

__all__ = ["qrels_lines", "run_lines", "write_text"]

_WS = b" \t\n\v\f\r"
_WS_ARRAY = np.frombuffer(_WS, dtype=np.uint8)
_ROWS_PER_CHUNK = 100_000
_ID_BIAS = 2**63


def _check_query_id(q: Any, what: str) -> str:
    text = str(q)
    if not text or text.startswith("#") or any(c in text for c in " \t\n\v\f\r"):
        why = ("is empty" if not text else "starts with '#', which TREC readers take for a "
               "comment line" if text.startswith("#") else "holds whitespace, which "
               "separates the fields of a TREC line")
        raise InputError(f"cannot write {what} as TREC text: query id {q!r} {why}")
    return text


def _doc_texts(obj, entries: np.ndarray, what: str) -> list[str]:
    """The document ids of ``entries`` as text, each checked to survive a TREC reader."""
    if obj.key_off is None:   # integer ids
        ids = obj.hashes[entries]
        if obj.id_bias:
            return [str(x) for x in (ids.view(np.uint64) ^ np.uint64(_ID_BIAS)).tolist()]
        return [str(x) for x in ids.tolist()]
    keys = entries if obj.keys is None else obj.keys[entries]
    start = obj.key_off[keys]
    end = obj.key_off[keys + 1]
    blob = obj.blob
    if len(entries) and (end == start).any():
        i = int(entries[np.flatnonzero(end == start)[0]])
        raise InputError(f"cannot write {what} as TREC text: {_where(obj, i)} has an empty "
                         "document id")
    if len(blob) and np.isin(blob, _WS_ARRAY).any():
        spaces = np.flatnonzero(np.isin(blob, _WS_ARRAY))
        # an entry holds whitespace when one lies in [start, end)
        hit = np.searchsorted(spaces, start) < np.searchsorted(spaces, end)
        if hit.any():
            i = int(entries[np.flatnonzero(hit)[0]])
            raise InputError(f"cannot write {what} as TREC text: {_where(obj, i)}: document "
                             f"id {obj.doc_id(i)!r} holds whitespace, which separates the "
                             "fields of a TREC line")
    raw = blob.tobytes()
    s, e = start.tolist(), end.tolist()
    if not len(blob) or int(blob.max()) < 128:   # ASCII: byte offsets are character offsets
        text = raw.decode("ascii")
        return [text[a:b] for a, b in zip(s, e)]
    return [raw[a:b].decode("utf-8") for a, b in zip(s, e)]


def _where(obj, entry: int) -> str:
    q = obj.query_ids[int(np.searchsorted(obj.offsets, entry, side="right")) - 1]
    return f"query {q!r}"


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


def run_lines(run, order: np.ndarray, tag: str, depth: int | None) -> Iterator[str]:
    """The run's text, in pieces: ``order`` holds each query's entries in rank order."""
    if not tag or any(c in tag for c in " \t\n\v\f\r"):
        raise InputError(f"cannot write a run as TREC text with tag {tag!r}: the tag must be "
                         "a non-empty word without whitespace")
    qtext = [_check_query_id(q, "the run") for q in run.query_ids]
    counts = np.diff(run.offsets)
    if depth is not None:
        counts = np.minimum(counts, depth)
    for lo, hi in _chunks(counts):
        n = counts[lo:hi]
        if not n.sum():
            continue
        starts = run.offsets[lo:hi]
        pos = np.repeat(starts - np.concatenate(([0], np.cumsum(n)[:-1])), n)
        pos += np.arange(int(n.sum()), dtype=np.int64)
        entries = order[pos]
        docs = _doc_texts(run, entries, "the run")
        scores = run.values[entries].tolist()
        qs = [qtext[i] for i in np.repeat(np.arange(lo, hi), n).tolist()]
        ranks = (pos - np.repeat(starts, n) + 1).tolist()
        yield "".join([f"{q} Q0 {d} {r} {s!r} {tag}\n"
                       for q, d, r, s in zip(qs, docs, ranks, scores)])


def qrels_lines(qrels) -> Iterator[str]:
    """The qrels' text, in pieces, each query's judgments in stored order."""
    qtext = [_check_query_id(q, "the qrels") for q in qrels.query_ids]
    counts = np.diff(qrels.offsets)
    for lo, hi in _chunks(counts):
        a, b = int(qrels.offsets[lo]), int(qrels.offsets[hi])
        if a == b:
            continue
        entries = np.arange(a, b, dtype=np.int64)
        docs = _doc_texts(qrels, entries, "the qrels")
        grades = qrels.values[a:b].tolist()
        qs = [qtext[i] for i in np.repeat(np.arange(lo, hi), counts[lo:hi]).tolist()]
        yield "".join([f"{q} 0 {d} {g}\n" for q, d, g in zip(qs, docs, grades)])


def write_text(target, pieces: Iterator[str], compress: bool | None = None) -> bytes | None:
    """Write ``pieces`` (UTF-8) to ``target``: a path (``.gz``: gzip-compressed, or as
    ``compress`` says), a text or binary file object, or None to return the bytes."""
    if target is None:
        data = "".join(pieces).encode("utf-8")
        return gzip.compress(data, compresslevel=6) if compress else data
    if isinstance(target, (str, os.PathLike)):
        path = os.fspath(target)
        if not isinstance(path, str):
            raise InputTypeError("a path to write to must be a str or os.PathLike of str")
        gz = path.endswith(".gz") if compress is None else compress
        with open(path, "wb") as raw, (gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6)
                                       if gz else contextlib.nullcontext(raw)) as f:
            for piece in pieces:
                f.write(piece.encode("utf-8"))
        return None
    if not hasattr(target, "write"):
        raise InputTypeError(f"cannot write to a {type(target).__name__}: give a path, a file "
                             "object or None")
    text = isinstance(target, io.TextIOBase)
    for piece in pieces:
        target.write(piece if text else piece.encode("utf-8"))
    return None
