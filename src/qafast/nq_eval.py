"""Natural Questions long and short answers, as the official ``nq_eval.py`` scores them.

:func:`nq` returns the JSON line the script prints (the optimal-threshold F1, precision, recall
and threshold, and recall at precision 0.5, 0.75 and 0.9, for long and short answers; same keys,
same floats), :func:`nq_f1` the scores it prints ignoring thresholds (``--pretty_print``), and
:func:`nq_examples` every gold example's own statistics. Spans are matched through hash sets and
the score-threshold sweep runs over numpy arrays in the script's order of operations. The
plain-Python specification is :mod:`qafast.reference.nq`; its docstring lists the rules.
``qafast nq --gold_path G --predictions_path P`` prints what the script prints.

Gold is NQ's original format, one JSON example a line (gzipped or not), of which only
``example_id`` and ``annotations`` (each with ``long_answer``, ``short_answers`` and
``yes_no_answer``) are read; a span has ``start_byte``, ``end_byte``, ``start_token`` and
``end_token``, ``-1`` for none. Predictions are ``{"predictions": [...]}``, each with
``example_id``, ``long_answer_score``, ``short_answers_score`` and optionally ``long_answer``,
``short_answers`` and ``yes_no_answer``.
"""

from __future__ import annotations

import glob
import gzip
import json
import math
import os
import queue
import sys
import threading
import warnings
import zlib
from collections.abc import Generator, Iterable, Iterator, Mapping

import numpy as np

from . import _kernels
from ._json_scan import scan_skip
from ._output import absl_bool_action
from .errors import FormatError, InputError, InputTypeError

__all__ = ["NqMetrics", "nq", "nq_examples", "nq_f1"]

_TARGETS = (0.5, 0.75, 0.9)  # recall at these precisions
_LIMIT = 2 ** 53  # integer scores stay exact as floats up to here
_NULL = (-1, -1, -1, -1)
_SCAN_FROM = 4096  # lines longer than this (bytes) are scanned before json.loads


# --------------------------------------------------------------------------------------------
# Reading and checking
# --------------------------------------------------------------------------------------------

class _Problem(Exception):
    """A record the script cannot read; the reader adds where it is."""


def _field(record, key, what="a JSON object"):
    if not isinstance(record, dict):
        raise _Problem(f"expected {what}, got {type(record).__name__}")
    try:
        return record[key]
    except KeyError:
        raise _Problem(f"no {key!r} field") from None


def _offset(v, field):
    if type(v) is not int:
        raise _Problem(f"{field} must be an integer, not {type(v).__name__}")
    return v


def _span(record, field):
    """``(start byte, end byte, start token, end token)``, checked as the script's Span is."""
    try:  # the common case in one go; anything else takes the checks below to say what is wrong
        sb, eb, st, et = (record["start_byte"], record["end_byte"], record["start_token"],
                          record["end_token"])
        if (type(sb) is int and type(eb) is int and type(st) is int and type(et) is int
                and (eb > sb >= 0 or (sb < 0 and eb < 0))
                and (et > st >= 0 or (st < 0 and et < 0))):
            return sb, eb, st, et
    except (KeyError, TypeError):
        pass
    return _checked_span(record, field)


def _checked_span(record, field):
    sb, eb, st, et = (_offset(_field(record, k, f"{field} to be a JSON object"), f"{field} {k}")
                      for k in ("start_byte", "end_byte", "start_token", "end_token"))
    if (sb < 0) != (eb < 0):
        raise _Problem(f"{field} has one byte offset negative (null) and one not ({sb}, {eb})")
    if (st < 0) != (et < 0):
        raise _Problem(f"{field} has one token offset negative (null) and one not ({st}, {et})")
    if sb >= 0 and sb >= eb:
        raise _Problem(f"{field} byte span ({sb}, {eb}) does not end after it starts")
    if st >= 0 and st >= et:
        raise _Problem(f"{field} token span ({st}, {et}) does not end after it starts")
    return sb, eb, st, et


def _yes_no(v, field):
    if type(v) is not str:
        raise _Problem(f"{field} must be a string, not {type(v).__name__}")
    return v.lower()


def _score(v, field):
    t = type(v)
    if t is float:
        if math.isnan(v):
            raise _Problem(f"{field} is NaN, which has no place in a ranking by score")
        return v
    if t is int:
        if -_LIMIT <= v <= _LIMIT:
            return v
        raise _Problem(f"{field} {v} is beyond 2**53 in size")
    raise _Problem(f"{field} must be a number, not {type(v).__name__}")


def _hashable(v, field):
    try:
        hash(v)
    except TypeError:
        raise _Problem(f"{field} must be a number or string, not {type(v).__name__}") from None
    return v


def _spans(record, key, field):
    items = _field(record, key)
    if not isinstance(items, list):
        raise _Problem(f"{field} must be a list, not {type(items).__name__}")
    if not items:
        return ()
    return tuple([_span(s, f"{field} {i}") for i, s in enumerate(items)])


def _gold_example(record):
    example_id = _hashable(_field(record, "example_id"), "example_id")
    annotations = _field(record, "annotations")
    if not isinstance(annotations, list):
        raise _Problem(f"annotations must be a list, not {type(annotations).__name__}")
    out = []
    for i, a in enumerate(annotations):
        try:
            long_span, short_spans, yes_no = (a["long_answer"], a["short_answers"],
                                              a["yes_no_answer"])
        except (KeyError, TypeError):  # say which field is missing, in the script's order
            where = f"annotation {i}"
            out.append((_span(_field(a, "long_answer", where + " to be a JSON object"),
                              where + " long_answer"),
                        _spans(a, "short_answers", where + " short_answers"),
                        _yes_no(_field(a, "yes_no_answer"), where + " yes_no_answer")))
            continue
        out.append((_span(long_span, f"annotation {i} long_answer"),
                    () if short_spans == []
                    else _spans(a, "short_answers", f"annotation {i} short_answers"),
                    yes_no.lower() if type(yes_no) is str
                    else _yes_no(yes_no, f"annotation {i} yes_no_answer")))
    return example_id, out


def _prediction(record):
    example_id = _hashable(_field(record, "example_id"), "example_id")
    long_span = _span(record["long_answer"], "long_answer") if (
        isinstance(record, dict) and "long_answer" in record) else _NULL
    short = _spans(record, "short_answers", "short_answers") if "short_answers" in record else ()
    yes_no = "none"
    if "yes_no_answer" in record:
        yes_no = _yes_no(record["yes_no_answer"], "yes_no_answer")
        if yes_no not in ("yes", "no", "none"):
            raise _Problem(f"yes_no_answer {record['yes_no_answer']!r} is not YES, NO or NONE")
        if yes_no != "none" and any(s[0] >= 0 or s[2] >= 0 for s in short):
            raise _Problem("a yes/no answer and short answer spans cannot both be given")
    return example_id, (long_span, short, yes_no,
                        _score(_field(record, "long_answer_score"), "long_answer_score"),
                        _score(_field(record, "short_answers_score"), "short_answers_score"))


_YES_NO = {"none": 0, "yes": 1, "no": 2}  # the codes of the kernels (3: another string)
_WIDE = 2 ** 62  # offsets are int64 in the kernels


class _Records:
    """One side's records in reading order, as arrays (a later record of an id replaces an
    earlier one only when scoring). Gold record r has annotations ``[lo[r], hi[r])``: rows of
    ``ann`` (long span), ``yn`` (yes/no code) and ``slo``/``shi`` (its short spans' rows of
    ``spans``). Prediction r is row r of ``long``, ``yn``, ``slo``/``shi``, ``score`` (long,
    short) and ``score_int`` (whether each score is an int). A span is 4 int64 (start byte,
    end byte, start token, end token), -1 for none. ``places[r]`` says where record r is."""

    def __init__(self, gold: bool):
        self.gold = gold
        self.ids: list = []
        self.parts: list = []  # (arrays, place function, first record)
        self._joined: dict | None = None
        # the ids as int64, while every part has given them so (for the join by sorting)
        self._int_ids: list | None = []

    def add(self, ids: list, arrays: dict, place, int_ids: np.ndarray | None = None) -> None:
        """Append records; ``int_ids``, when given, are ``ids`` as an int64 array."""
        self.parts.append((arrays, place, len(self.ids)))
        self.ids.extend(ids)
        self._joined = None
        if int_ids is None:
            self._int_ids = None
        elif self._int_ids is not None:
            self._int_ids.append(int_ids)

    def int_ids(self) -> np.ndarray | None:
        """The ids as one int64 array, if every part gave them so (else None)."""
        if self._int_ids is None:
            return None
        if len(self._int_ids) == 1:
            return self._int_ids[0]
        return np.concatenate(self._int_ids) if self._int_ids else np.zeros(0, np.int64)

    def place(self, r: int) -> str:
        for arrays, place, first in reversed(self.parts):
            if r >= first:
                return place(r - first)
        raise IndexError(r)

    def arrays(self) -> dict:
        """The parts' arrays as one set (row numbers shifted)."""
        if self._joined is None:
            if len(self.parts) == 1:
                self._joined = self.parts[0][0]
            else:
                self._joined = _join([a for a, _, _ in self.parts] or [_empty(self.gold)],
                                     self.gold)
        return self._joined


def _empty(gold: bool) -> dict:
    z = np.zeros(0, dtype=np.int64)
    out = {"slo": z, "shi": z, "spans": np.zeros((0, 4), dtype=np.int64),
           "yn": np.zeros(0, dtype=np.uint8)}
    if gold:
        out.update(lo=z, hi=z, ann=np.zeros((0, 4), dtype=np.int64))
    else:
        out.update(long=np.zeros((0, 4), dtype=np.int64), score=np.zeros((0, 2)),
                   score_int=np.zeros((0, 2), dtype=bool))
    return out


def _join(parts: list, gold: bool) -> dict:
    out: dict = {}
    n_spans = np.cumsum([0] + [len(a["spans"]) for a in parts])
    out["slo"] = np.concatenate([a["slo"] + k for a, k in zip(parts, n_spans)])
    out["shi"] = np.concatenate([a["shi"] + k for a, k in zip(parts, n_spans)])
    keys = ["spans", "yn"] + (["ann"] if gold else ["long", "score", "score_int"])
    for key in keys:
        out[key] = np.concatenate([a[key] for a in parts])
    if gold:
        n_ann = np.cumsum([0] + [len(a["yn"]) for a in parts])
        out["lo"] = np.concatenate([a["lo"] + k for a, k in zip(parts, n_ann)])
        out["hi"] = np.concatenate([a["hi"] + k for a, k in zip(parts, n_ann)])
    return out


def _span_rows(spans) -> list:
    for sp in spans:
        for v in sp:
            if not -_WIDE < v < _WIDE:
                raise _Problem(f"span offset {v} is beyond 2**62 in size")
    return list(spans)


class _Builder:
    """Records read through Python (dicts, or lines the scanner left), turned into arrays."""

    def __init__(self, gold: bool):
        self.gold = gold
        self.ids: list = []
        self.lo: list = []
        self.hi: list = []
        self.ann: list = []
        self.yn: list = []
        self.slo: list = []
        self.shi: list = []
        self.spans: list = []
        self.long: list = []
        self.score: list = []
        self.score_int: list = []

    def _shorts(self, shorts) -> None:
        self.slo.append(len(self.spans))
        self.spans.extend(_span_rows(shorts))
        self.shi.append(len(self.spans))

    def add_gold(self, example_id, annotations) -> None:
        self.lo.append(len(self.yn))
        for long_span, shorts, yes_no in annotations:
            self.ann.extend(_span_rows((long_span,)))
            self.yn.append(_YES_NO.get(yes_no, 3))
            self._shorts(shorts)
        self.hi.append(len(self.yn))
        self.ids.append(example_id)

    def add_prediction(self, example_id, pred) -> None:
        long_span, shorts, yes_no, long_score, short_score = pred
        self.long.extend(_span_rows((long_span,)))
        self._shorts(shorts)
        self.yn.append(_YES_NO[yes_no])
        self.score.append((long_score, short_score))
        self.score_int.append((type(long_score) is int, type(short_score) is int))
        self.ids.append(example_id)

    def arrays(self) -> dict:
        def rows(x):
            return np.array(x, dtype=np.int64).reshape(len(x), 4)

        out = {"slo": np.array(self.slo, dtype=np.int64),
               "shi": np.array(self.shi, dtype=np.int64),
               "spans": rows(self.spans), "yn": np.array(self.yn, dtype=np.uint8)}
        if self.gold:
            out.update(lo=np.array(self.lo, dtype=np.int64),
                       hi=np.array(self.hi, dtype=np.int64), ann=rows(self.ann))
        else:
            out.update(long=rows(self.long),
                       score=np.array(self.score, dtype=np.float64).reshape(len(self.score), 2),
                       score_int=np.array(self.score_int, dtype=bool).reshape(
                           len(self.score), 2))
        return out


def _score_object(value: float, is_int) -> int | float:
    """A score as the script holds it: the int or float json.loads gave."""
    return int(value) if is_int else float(value)


def _decompress(data: bytes, path: str) -> bytes:
    try:  # python-isal (the gzip extra) when it is installed: the same bytes, faster
        from isal import igzip
    except ImportError:
        pass
    else:
        try:
            return igzip.decompress(data)
        except Exception:  # noqa: BLE001 (the standard library's reader says what is wrong)
            pass
    try:
        return gzip.decompress(data)
    except (OSError, EOFError, zlib.error) as e:  # (zlib's: a corrupt deflate stream)
        raise FormatError(f"not a readable gzip file ({e})", path=path) from None


def _gold_line(line: bytes, path: str, n: int, out: _Builder):
    """Line n through json.loads and the checks, added to ``out``; returns its id."""
    try:
        # a line of the original format carries its whole document: the scan puts null
        # in place of every field but the two read, and json.loads builds only those
        short = scan_skip(line, _kernels.JSON_SKIP_NQ) if len(line) > _SCAN_FROM else None
        record = json.loads(line if short is None else short)
    except ValueError as e:
        raise FormatError(f"not a JSON line ({e})", path=path, line=n) from None
    try:
        example_id, annotations = _gold_example(record)
        out.add_gold(example_id, annotations)
    except _Problem as e:
        raise FormatError(str(e), path=path, line=n) from None
    return example_id


_PIECE = 1 << 19  # compressed bytes decompressed at a time (some 4 MB of text)


def _grown(a: np.ndarray, rows: int) -> np.ndarray:
    """``a`` with at least ``rows`` rows (twice as many, its first rows kept)."""
    if len(a) >= rows:
        return a
    b = np.empty((max(rows, 2 * len(a)),) + a.shape[1:], dtype=a.dtype)
    b[:len(a)] = a
    return b


class _GoldScan:
    """The records of one gold file, scanned piece by piece as its text is decompressed (the
    pieces stay in the processor's cache, where the whole text did not); lines the scanner
    leaves are kept to go through json.loads and the checks at the end."""

    def __init__(self, path: str, size: int):
        self.path = path
        lines = size // 256 + 16  # (grown as needed)
        self.starts = np.empty(lines, dtype=np.int64)
        self.ends = np.empty(lines, dtype=np.int64)
        self.found = np.empty((lines, 2), dtype=np.int64)
        self.lo = np.empty(lines, dtype=np.int64)
        self.hi = np.empty(lines, dtype=np.int64)
        self.int_ids = np.empty(lines, dtype=np.int64)
        self.is_int = np.empty(lines, dtype=np.uint8)
        self.ann = np.empty((lines, 4), dtype=np.int64)
        self.yn = np.empty(lines, dtype=np.uint8)
        self.slo = np.empty(lines, dtype=np.int64)
        self.shi = np.empty(lines, dtype=np.int64)
        self.spans = np.empty((lines, 4), dtype=np.int64)
        self.m = self.na = self.ns = 0
        self.left: list = []  # (line, its bytes) for json.loads
        self.other_ids: dict = {}  # line: its id, where it is not a plain int64

    def feed(self, data, final: bool) -> int:
        """Scan the whole lines of ``data`` (bytes or a memoryview of them; with ``final``, the
        text after the last \\n too); returns the bytes taken."""
        taken = 0
        view = memoryview(data)
        while True:
            taken += self._feed(view[taken:], final)
            if self.m < len(self.starts):  # (else the line arrays filled up: grow them)
                return taken
            for name in ("starts", "ends", "found", "lo", "hi", "int_ids", "is_int"):
                setattr(self, name, _grown(getattr(self, name), 2 * self.m + 16))

    def _feed(self, data, final: bool) -> int:
        m0 = self.m
        # an annotation takes more than 80 bytes, a span more than 50
        need_a = self.na + len(data) // 80 + 16
        for name in ("ann", "yn", "slo", "shi"):
            setattr(self, name, _grown(getattr(self, name), need_a))
        self.spans = _grown(self.spans, self.ns + len(data) // 50 + 16)
        self.m, ok, self.na, self.ns, taken = _kernels.nq_scan_gold(
            data, final, m0, self.na, self.ns, self.starts, self.ends, self.found, self.lo,
            self.hi, self.ann, self.yn, self.slo, self.shi, self.spans)
        m = self.m
        found = self.found[m0:m]
        ints = _kernels.nq_int_ids(data, found, self.int_ids[m0:m], self.is_int[m0:m])
        if ints < m - m0:
            if ints < ok:  # ids json.loads reads (strings, floats, big ints, ...)
                other = found.copy()
                other[self.is_int[m0:m] == 1, 0] = -1
                rows = np.flatnonzero(other[:, 0] >= 0)
                values = json.loads(_kernels.tydi_gather_gold(data, other, 1))
                for i, v in zip((rows + m0).tolist(), values):
                    self.other_ids[i] = v
            for i in np.flatnonzero(found[:, 0] < 0).tolist():
                self.left.append((m0 + i, bytes(data[self.starts[m0 + i]:self.ends[m0 + i]])))
        return taken

    def add_to(self, out: _Records) -> None:
        m, na, ns, path = self.m, self.na, self.ns, self.path
        lo, hi = self.lo[:m], self.hi[:m]
        arrays = {"lo": lo, "hi": hi, "ann": self.ann[:na], "yn": self.yn[:na],
                  "slo": self.slo[:na], "shi": self.shi[:na], "spans": self.spans[:ns]}
        int_ids = self.int_ids[:m]
        ids = int_ids.tolist()
        if self.other_ids:
            for i, v in self.other_ids.items():
                ids[i] = v
        if self.left:  # the lines the scanner left, through json.loads and the checks
            more = _Builder(True)
            for i, line in self.left:
                lo[i] = na + len(more.yn)
                ids[i] = _gold_line(line, path, i + 1, more)
                hi[i] = na + len(more.yn)
            extra = more.arrays()
            arrays = {key: np.concatenate([arrays[key], extra[key] + (
                ns if key in ("slo", "shi") else 0)]) if key not in ("lo", "hi")
                else arrays[key] for key in arrays}
        out.add(ids, arrays, lambda r: f"{path}, line {r + 1}",
                None if self.other_ids or self.left else int_ids)


class _NotStreamed(Exception):
    """The gzip stream is not one that decompressing piece by piece is sure to read as the
    whole-file reader does: that reader decides."""


def _gzip_member_reader():
    """A decompressor of one gzip member: python-isal's (the gzip extra) when it is installed,
    the same bytes faster, else zlib's."""
    try:
        from isal import isal_zlib
    except ImportError:
        return zlib.decompressobj(31)
    return isal_zlib.decompressobj(31)


def _gzip_texts(data: bytes, stop: threading.Event | None = None) -> Iterator[bytes]:
    """The text of the gzip members of ``data``, piece by piece (until ``stop`` is set);
    raises _NotStreamed where the whole-file reader is to decide."""
    view = memoryview(data)
    pos, size = 0, len(data)
    while pos < size:
        if view[pos:pos + 2] != b"\x1f\x8b":  # trailing bytes: the whole-file reader decides
            raise _NotStreamed
        d = _gzip_member_reader()
        while not d.eof:
            if stop is not None and stop.is_set():
                return
            if pos >= size:
                raise _NotStreamed  # a truncated member
            piece = view[pos:pos + _PIECE]
            try:
                text = d.decompress(piece)
            except Exception:  # noqa: BLE001 (the whole-file reader says what is wrong)
                raise _NotStreamed from None
            pos += len(piece) - len(d.unused_data)
            if text:
                yield text


def _texts_ahead(data: bytes) -> Generator[bytes, None, None]:
    """_gzip_texts(data), decompressed in a thread of its own while the caller scans the
    piece before (decompression and the scan both release the GIL): a generator whose
    closing stops that thread and waits for it."""
    if len(data) <= _PIECE or _usable_cores() < 2:
        yield from _gzip_texts(data)
        return
    pieces: queue.Queue = queue.Queue(maxsize=2)
    stop = threading.Event()

    def put(item) -> bool:
        while not stop.is_set():
            try:
                pieces.put(item, timeout=0.1)
                return True
            except queue.Full:
                pass
        return False

    def decompress() -> None:
        try:
            for text in _gzip_texts(data, stop):
                if not put((text, None)):
                    return
        except BaseException as e:  # noqa: BLE001 (raised again in the scanning thread)
            put((None, e))
        else:
            put((None, None))

    worker = threading.Thread(target=decompress, name="qafast-nq-gunzip", daemon=True)
    worker.start()
    try:
        while True:
            text, error = pieces.get()
            if error is not None:
                raise error
            if text is None:
                return
            yield text
    finally:
        stop.set()
        worker.join()


def _usable_cores() -> int:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _gunzip_into(data: bytes, scan: _GoldScan) -> None:
    """Decompress the gzip members of ``data`` piece by piece into ``scan``."""
    rest = bytearray()  # the text of a line not yet complete
    texts = _texts_ahead(data)
    try:
        for text in texts:
            start = 0
            if rest:  # the line begun in the text before, completed here (or not yet)
                end = text.find(b"\n") + 1
                if not end:
                    rest += text
                    continue
                scan.feed(rest + text[:end], False)
                start = end
            tail = memoryview(text)[start:]  # (scanned where it is, not copied)
            rest = bytearray(tail[scan.feed(tail, False):])
    finally:
        texts.close()
    scan.feed(rest, True)


def _gold_file(path: str, out: _Records) -> None:
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        scan = _GoldScan(path, 8 * len(data))
        try:
            _gunzip_into(data, scan)
        except _NotStreamed:
            data = _decompress(data, path)
        else:
            scan.add_to(out)
            return
    # the script's lines: GzipFile's, split at \n only (by the scanner)
    scan = _GoldScan(path, len(data))
    scan.feed(data, True)
    scan.add_to(out)


def _read_gold(gold) -> _Records:
    out = _Records(True)
    if isinstance(gold, (str, os.PathLike)):
        pattern = os.fspath(gold)
        paths = glob.glob(pattern)  # the script's order: glob's, unsorted
        if not paths:
            raise InputError(f"no gold file matches {pattern!r}", path=pattern)
        for path in paths:
            _gold_file(path, out)
        return out
    if isinstance(gold, Mapping) or not isinstance(gold, Iterable):
        raise InputTypeError("gold must be a path (or glob pattern) of NQ JSONL files or an "
                             f"iterable of example dicts, not {type(gold).__name__}")
    _gold_records(gold, out)
    return out


def _gold_records(gold: Iterable, out: _Records, first: int = 0) -> None:
    b = _Builder(True)
    for n, record in enumerate(gold, first):
        try:
            b.add_gold(*_gold_example(record))
        except _Problem as e:
            raise InputError(f"gold example {n}: {e}") from None
    out.add(b.ids, b.arrays(), lambda r: f"gold example {r + first}")


def _scan_predictions(data: bytes, where: str):
    """The predictions of a JSON document through the scanner (None where it leaves the
    document to json.loads): ids, arrays (predictions it left read through Python) and the
    ids as an int64 array when they are all JSON integers of that size (else None)."""
    n = len(data)
    for cap in (n // 40 + 16, n // 2 + 16):
        found = np.empty((cap, 2), dtype=np.int64)
        raw = np.empty((cap, 2), dtype=np.int64)
        long = np.empty((cap, 4), dtype=np.int64)
        yn = np.empty(cap, dtype=np.uint8)
        slo = np.empty(cap, dtype=np.int64)
        shi = np.empty(cap, dtype=np.int64)
        spans = np.empty((n // 50 + 16, 4), dtype=np.int64)
        score = np.empty((cap, 2))
        score_int = np.empty((cap, 2), dtype=np.uint8)
        m, ns = _kernels.nq_scan_predictions(data, found, raw, long, yn, slo, shi, spans,
                                             score, score_int)
        if m != -2:
            break
    if m < 0:
        return None
    arrays: dict[str, np.ndarray] = {"long": long[:m], "yn": yn[:m], "slo": slo[:m], "shi": shi[:m],
              "spans": spans[:ns], "score": score[:m], "score_int": score_int[:m].view(bool)}
    int_ids = np.empty(m, dtype=np.int64)
    is_int = np.empty(m, dtype=np.uint8)
    if _kernels.nq_int_ids(data, found[:m], int_ids, is_int) == m:
        return int_ids.tolist(), arrays, int_ids  # (the ids json.loads gives: ints)
    ids = json.loads(_kernels.tydi_gather_gold(data, found[:m], 1)) if m else []
    left = raw[:m, 0] >= 0
    if len(ids) + int(np.count_nonzero(left)) != m:
        return None  # (json.loads of the whole document then says what is wrong)
    if not left.any():
        return ids, arrays, None
    full: list = [None] * m
    for i, v in zip(np.flatnonzero(~left).tolist(), ids):
        full[i] = v
    spans_more: list = []
    for i in np.flatnonzero(left).tolist():
        a, b = (int(x) for x in raw[i])
        try:
            example_id, pred = _prediction(json.loads(data[a:b]))
            shorts = _span_rows(pred[1])
            long_span = _span_rows((pred[0],))[0]
        except _Problem as e:
            raise InputError(f"{where}: prediction {i}: {e}", field="predictions") from None
        full[i] = example_id
        arrays["long"][i] = long_span
        arrays["yn"][i] = _YES_NO[pred[2]]
        arrays["slo"][i] = ns + len(spans_more)
        spans_more.extend(shorts)
        arrays["shi"][i] = ns + len(spans_more)
        arrays["score"][i] = pred[3], pred[4]
        arrays["score_int"][i] = type(pred[3]) is int, type(pred[4]) is int
    if spans_more:
        arrays["spans"] = np.concatenate(
            [arrays["spans"], np.array(spans_more, dtype=np.int64).reshape(-1, 4)])
    return full, arrays, None


def _read_predictions(predictions, out: _Records | None = None, first: int = 0) -> _Records:
    where = "predictions"
    out = _Records(False) if out is None else out
    if isinstance(predictions, (str, os.PathLike)):
        where = os.fspath(predictions)
        with open(where, "rb") as f:
            data = f.read()
        scanned = _scan_predictions(data, where)
        if scanned is not None:
            out.add(scanned[0], scanned[1], lambda r: f"{where}: prediction {r}", scanned[2])
            return out
        try:
            predictions = json.loads(data)
        except ValueError as e:
            raise FormatError(f"not a JSON file ({e})", path=where) from None
    if isinstance(predictions, Mapping):
        if "predictions" not in predictions:
            raise InputError(f"{where}: no 'predictions' field", path=where)
        predictions = predictions["predictions"]
    if not isinstance(predictions, Iterable) or isinstance(predictions, (str, bytes)):
        raise InputTypeError(f"{where}: predictions must be a list of prediction objects, not "
                             f"{type(predictions).__name__}")
    b = _Builder(False)
    for n, record in enumerate(predictions, first):
        try:
            b.add_prediction(*_prediction(record))
        except _Problem as e:
            raise InputError(f"{where}: prediction {n}: {e}", field="predictions") from None
    out.add(b.ids, b.arrays(), lambda r: f"{where}: prediction {r + first}")
    return out


# --------------------------------------------------------------------------------------------
# Scoring
# --------------------------------------------------------------------------------------------

def _last_rows(side: _Records, what: str) -> dict:
    """``{example id: its last record}``, in the order ids first appear (the script's dict);
    warns of each repeated id."""
    rows = {example_id: r for r, example_id in enumerate(side.ids)}
    if len(rows) < len(side.ids):
        seen: set = set()
        for r, example_id in enumerate(side.ids):
            if example_id in seen:
                warnings.warn(f"{side.place(r)}: {what} example {example_id!r} given again; "
                              "the later one counts, as in the official script", stacklevel=5)
            seen.add(example_id)
    return rows


def _join_rows(gold: _Records, preds: _Records):
    """The examples in the script's visiting order (its set of the gold ids), each one's last
    gold record and last prediction (arrays of record numbers), through dicts of the ids."""
    gold_rows = _last_rows(gold, "gold")
    pred_rows = _last_rows(preds, "predicted")
    if gold_rows.keys() != pred_rows.keys():
        missing = [i for i in gold_rows if i not in pred_rows]
        extra = [i for i in pred_rows if i not in gold_rows]
        parts = []
        if missing:
            parts.append(f"{len(missing)} gold examples have no prediction (the first "
                         f"{missing[0]!r})")
        if extra:
            parts.append(f"{len(extra)} predictions have no gold example (the first "
                         f"{extra[0]!r})")
        raise InputError("the example ids of the gold data and of the predictions differ: "
                         + "; ".join(parts), query=(missing or extra)[0])
    ids = list(set(gold_rows.keys()))  # the script's visiting order (a set of the keys view)
    n = len(ids)
    g = np.fromiter(map(gold_rows.__getitem__, ids), dtype=np.int64, count=n)
    p = np.fromiter(map(pred_rows.__getitem__, ids), dtype=np.int64, count=n)
    return ids, g, p


def _int_join(gold: _Records, preds: _Records):
    """What :func:`_join_rows` gives, by sorting, when every id is an int64 and neither side
    repeats one and both have the same ids (else None: the dicts then warn or say what
    differs). The visiting order is still that of a set of the ids, built as the script
    builds it."""
    gi, pi = gold.int_ids(), preds.int_ids()
    if gi is None or pi is None or len(gi) != len(pi):
        return None
    g_order, p_order = np.argsort(gi), np.argsort(pi)
    g_sorted = gi[g_order]
    if not (np.array_equal(g_sorted, pi[p_order]) and bool(np.all(g_sorted[1:] != g_sorted[:-1]))):
        return None
    # the ids are those of the gold records in their order, each once: the script's dict keys
    ids = list(set(gold.ids))
    visiting = np.fromiter(ids, dtype=np.int64, count=len(ids))
    at = np.empty(len(ids), dtype=np.int64)  # each visited id's place among the sorted ids
    at[np.argsort(visiting)] = np.arange(len(ids))
    return ids, g_order[at], p_order[at]


class _Scored:
    """One ``score_answers`` call: examples in ``set`` order, their flags and scores."""

    def __init__(self, gold: _Records, preds: _Records, long_threshold: int,
                 short_threshold: int):
        for name, v in (("long_non_null_threshold", long_threshold),
                        ("short_non_null_threshold", short_threshold)):
            if type(v) is not int:
                raise InputTypeError(f"{name} must be an integer, got {v!r}")
        rows = _int_join(gold, preds)
        if rows is not None:
            self.ids, g, p = rows
        else:
            self.ids, g, p = _join_rows(gold, preds)
        n = len(self.ids)
        ga, pa = gold.arrays(), preds.arrays()
        flags = np.zeros((n, 6), dtype=np.uint8)
        if n:
            # the kernel visits the examples in the gold records' order, which reads the gold
            # arrays front to back (in the visiting order, the reads were cache misses)
            by_row = np.argsort(g)
            g_rows = g[by_row]
            in_row_order = np.empty((n, 6), dtype=np.uint8)
            _kernels.nq_stats(ga["lo"][g_rows], ga["hi"][g_rows], ga["ann"], ga["yn"],
                              ga["slo"], ga["shi"], ga["spans"], p[by_row], pa["long"],
                              pa["yn"], pa["slo"], pa["shi"], pa["spans"],
                              max(-_WIDE, min(long_threshold, _WIDE)),
                              max(-_WIDE, min(short_threshold, _WIDE)), in_row_order)
            flags[by_row] = in_row_order
        self.flags = flags.view(bool)
        self.score = pa["score"][p]
        self.score_int = pa["score_int"][p]

    def _objects(self, col: int) -> list:
        return [int(v) if i else v for v, i in zip(self.score[:, col].tolist(),
                                                   self.score_int[:, col].tolist())]

    @property
    def long_objects(self) -> list:
        return self._objects(0)

    @property
    def short_objects(self) -> list:
        return self._objects(1)

    def sweep(self, long: bool):
        col = 0 if long else 3
        k = 0 if long else 1
        return _sweep(self.flags[:, col], self.flags[:, col + 1], self.flags[:, col + 2],
                      self.score[:, k], self.score_int[:, k])

    def metrics(self) -> dict:
        out = {}
        for prefix, long in (("long-", True), ("short-", False)):
            (f1, p, r, threshold), table = self.sweep(long)
            out[prefix + "best-threshold-f1"] = f1
            out[prefix + "best-threshold-precision"] = p
            out[prefix + "best-threshold-recall"] = r
            out[prefix + "best-threshold"] = threshold
            for target, recall, precision, _ in table:
                out[f"{prefix}recall-at-precision>={target:.2}"] = recall
                out[f"{prefix}precision-at-precision>={target:.2}"] = precision
        return out

    def final_f1(self) -> dict:
        out: dict = {}
        for prefix, col in (("long-answer-", 0), ("short-answer-", 3)):
            gold, pred, correct = (int(np.count_nonzero(self.flags[:, col + k]))
                                   for k in range(3))
            p = correct / pred if pred else 0
            r = correct / gold if gold else 0
            out[prefix + "n"] = len(self.ids)
            out[prefix + "f1"] = 2 * p * r / (p + r) if p + r else 0
            out[prefix + "precision"] = p
            out[prefix + "recall"] = r
        return out


def _sweep(has_gold, has_pred, correct, score, is_int):
    """The script's ``compute_pr_curves`` over numpy arrays: the best-F1 point and the
    recall-at-precision rows, the same values (and int 0 where the script keeps one)."""
    n = len(score)
    best = (0.0, 0.0, 0.0, 0.0)
    table = [(t, 0, 0, None) for t in _TARGETS]
    if n == 0:
        return best, table
    order = np.argsort(-score, kind="stable")  # sorted(reverse=True) keeps ties in order
    s = score[order]
    n_correct = np.cumsum(correct[order], dtype=np.int64)
    n_pred = np.cumsum(has_pred[order], dtype=np.int64)
    n_gold = int(np.count_nonzero(has_gold))
    last = np.flatnonzero(np.append(s[1:] != s[:-1], True))  # a tie's last point counts
    first = np.append(0, last[:-1] + 1)  # and its first score object is the key
    c = n_correct[last].astype(np.float64)
    k = n_pred[last]
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(k > 0, c / np.maximum(k, 1), 0.0)
        r = c / n_gold if n_gold else np.zeros_like(c)
        f1 = np.where(p + r > 0, 2 * p * r / (p + r), 0.0)

    def key(i):
        j = order[first[i]]
        return _score_object(score[j], is_int[j])

    if f1.size and f1.max() > 0:
        i = int(np.argmax(f1))
        best = (float(f1[i]), float(p[i]), float(r[i]), key(i))
    for j, t in enumerate(_TARGETS):
        ok = np.flatnonzero((p >= t) & (r > 0))
        if ok.size:
            i = int(ok[np.argmax(r[ok])])
            table[j] = (t, float(r[i]), float(p[i]), key(i))
    return best, table


def _evaluate(gold, predictions, long_threshold, short_threshold) -> _Scored:
    return _Scored(_read_gold(gold), _read_predictions(predictions), long_threshold,
                   short_threshold)


def _floats(d: dict) -> dict:
    return {k: float(v) for k, v in d.items()}


# --------------------------------------------------------------------------------------------
# Public functions
# --------------------------------------------------------------------------------------------

def nq(gold, predictions, *, long_non_null_threshold: int = 2,
       short_non_null_threshold: int = 2) -> dict:
    """Natural Questions scores as ``nq_eval.py`` prints them in its JSON line.

    Parameters
    ----------
    gold : str, os.PathLike or iterable of dict
        A path or glob pattern of NQ JSONL files (gzipped or not; shards of a glob are read in
        glob's order, a later duplicate example replacing an earlier one, as in the script),
        or the examples as dicts with ``example_id`` and ``annotations``.
    predictions : str, os.PathLike, dict or list of dict
        The predictions JSON file, its ``{"predictions": [...]}`` object or that list.
    long_non_null_threshold, short_non_null_threshold : int, keyword-only
        Annotators who must give a non-null long (short) answer for gold to have one
        (the script's flags of these names; 2 by default).

    Returns
    -------
    dict
        The script's keys (``long-best-threshold-f1``, ``long-best-threshold``,
        ``long-recall-at-precision>=0.5``, ..., ``short-...``), each a Python float.

    Raises
    ------
    qafast.errors.InputError
        A malformed line or record (naming the file, line or prediction and field), or ids
        present on one side only.

    Examples
    --------
    >>> import qafast
    >>> span = {"start_byte": 10, "end_byte": 20, "start_token": 2, "end_token": 5}
    >>> none = {"start_byte": -1, "end_byte": -1, "start_token": -1, "end_token": -1}
    >>> gold = [{"example_id": 1, "annotations": [
    ...     {"long_answer": span, "short_answers": [], "yes_no_answer": "YES"}] * 3}]
    >>> pred = [{"example_id": 1, "long_answer": span, "long_answer_score": 2.5,
    ...          "short_answers": [], "short_answers_score": 1.0, "yes_no_answer": "YES"}]
    >>> m = qafast.nq(gold, pred)
    >>> m["long-best-threshold-f1"], m["long-best-threshold"], m["short-best-threshold-f1"]
    (1.0, 2.5, 1.0)
    """
    return _floats(_evaluate(gold, predictions, long_non_null_threshold,
                             short_non_null_threshold).metrics())


def nq_f1(gold, predictions, *, long_non_null_threshold: int = 2,
          short_non_null_threshold: int = 2) -> dict:
    """Precision, recall and F1 ignoring scores, as ``nq_eval.py --pretty_print`` prints them.

    Arguments are those of :func:`nq`. Returns the script's keys ``long-answer-n``,
    ``long-answer-f1``, ``long-answer-precision``, ``long-answer-recall`` and the same for
    ``short-answer-``, Python floats (the counts ints).

    Examples
    --------
    >>> import qafast
    >>> none = {"start_byte": -1, "end_byte": -1, "start_token": -1, "end_token": -1}
    >>> gold = [{"example_id": "q", "annotations": [
    ...     {"long_answer": none, "short_answers": [], "yes_no_answer": "NONE"}] * 5}]
    >>> pred = {"predictions": [{"example_id": "q", "long_answer_score": 0,
    ...                          "short_answers_score": 0}]}
    >>> qafast.nq_f1(gold, pred)["long-answer-f1"]
    0.0
    """
    out = _evaluate(gold, predictions, long_non_null_threshold,
                    short_non_null_threshold).final_f1()
    return {k: v if k.endswith("-n") else float(v) for k, v in out.items()}


def nq_examples(gold, predictions, *, long_non_null_threshold: int = 2,
                short_non_null_threshold: int = 2) -> dict:
    """Every example's own statistics, ``{example id: {...}}`` in the script's visiting order.

    Each value has ``long-has-gold``, ``long-has-prediction``, ``long-correct`` (bools),
    ``long-score`` (the prediction's score as given) and the same for ``short-``. Arguments are
    those of :func:`nq`.

    Examples
    --------
    >>> import qafast
    >>> span = {"start_byte": -1, "end_byte": -1, "start_token": 4, "end_token": 9}
    >>> gold = [{"example_id": 7, "annotations": [
    ...     {"long_answer": span, "short_answers": [span], "yes_no_answer": "NONE"}] * 2}]
    >>> pred = [{"example_id": 7, "long_answer": span, "long_answer_score": 1,
    ...          "short_answers": [span], "short_answers_score": 1}]
    >>> qafast.nq_examples(gold, pred)[7]["short-correct"]
    True
    """
    s = _evaluate(gold, predictions, long_non_null_threshold, short_non_null_threshold)
    names = ("long-has-gold", "long-has-prediction", "long-correct",
             "short-has-gold", "short-has-prediction", "short-correct")
    out = {}
    long_objects, short_objects = s.long_objects, s.short_objects
    for i, example_id, row in zip(range(len(s.ids)), s.ids, s.flags.tolist()):
        d = dict(zip(names, row))
        d["long-score"] = long_objects[i]
        d["short-score"] = short_objects[i]
        out[example_id] = d
    return out


# --------------------------------------------------------------------------------------------
# Streaming
# --------------------------------------------------------------------------------------------

_STATE_KEYS = {True: ("lo", "hi", "ann", "yn", "slo", "shi", "spans"),
               False: ("long", "yn", "slo", "shi", "spans", "score", "score_int")}
_STATE_DTYPES = {"yn": np.uint8, "score": np.float64, "score_int": bool}


class NqMetrics:
    """Natural Questions scores accumulated over batches of examples.

    ``update(predictions, gold)`` adds a batch: predictions as :func:`nq` takes them (a list of
    prediction dicts or ``{"predictions": [...]}``) and gold examples as dicts with
    ``example_id`` and ``annotations``. ``compute()`` gives what :func:`nq` gives for all the
    batches' predictions and gold at once, bit for bit: as there, an id given again (in any
    batch) replaces the earlier example, and every gold example needs a prediction. Each
    example's spans and scores are kept (as arrays) until then.

    Parameters
    ----------
    long_non_null_threshold, short_non_null_threshold : int, keyword-only
        As in :func:`nq`.

    Examples
    --------
    >>> import qafast
    >>> span = {"start_byte": 10, "end_byte": 20, "start_token": 2, "end_token": 5}
    >>> m = qafast.NqMetrics()
    >>> for i in range(2):
    ...     gold = [{"example_id": i, "annotations": [
    ...         {"long_answer": span, "short_answers": [span], "yes_no_answer": "NONE"}] * 2}]
    ...     pred = [{"example_id": i, "long_answer": span, "long_answer_score": 1.5 + i,
    ...              "short_answers": [], "short_answers_score": 0}]
    ...     m.update(pred, gold)
    >>> r = m.compute()
    >>> r["long-best-threshold-f1"], r["long-best-threshold"], r["short-best-threshold-f1"]
    (1.0, 1.5, 0.0)
    """

    def __init__(self, *, long_non_null_threshold: int = 2,
                 short_non_null_threshold: int = 2) -> None:
        for name, v in (("long_non_null_threshold", long_non_null_threshold),
                        ("short_non_null_threshold", short_non_null_threshold)):
            if type(v) is not int:
                raise InputTypeError(f"{name} must be an integer, got {v!r}")
        self.long_non_null_threshold = long_non_null_threshold
        self.short_non_null_threshold = short_non_null_threshold
        self.reset()

    def reset(self) -> None:
        """Forget every update."""
        self._gold = _Records(True)
        self._preds = _Records(False)
        self._batches = 0

    def __len__(self) -> int:
        """The gold examples given so far (an id given again counts again)."""
        return len(self._gold.ids)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self)} gold examples)"

    def update(self, predictions, gold) -> None:
        """Add a batch of predictions and gold examples (the state is unchanged if it
        raises)."""
        if isinstance(gold, (str, os.PathLike)):
            raise InputTypeError("gold of a batch is an iterable of example dicts, not a path")
        if isinstance(predictions, (str, os.PathLike)):
            raise InputTypeError("predictions of a batch are prediction dicts, not a path")
        if isinstance(gold, Mapping) or not isinstance(gold, Iterable):
            raise InputTypeError("gold must be an iterable of example dicts, not "
                                 f"{type(gold).__name__}")
        g = _Records(True)
        _gold_records(gold, g)
        p = _read_predictions(predictions)
        self._batches += 1
        batch = self._batches
        for side, new in ((self._gold, g), (self._preds, p)):
            for arrays, place, _ in new.parts:
                side.add(new.ids, arrays, lambda r, place=place, batch=batch:
                         f"batch {batch}, {place(r)}")

    def compute(self) -> dict:
        """The scores :func:`nq` gives for every batch so far."""
        return _floats(self._scored().metrics())

    def compute_f1(self) -> dict:
        """The scores :func:`nq_f1` gives for every batch so far."""
        out = self._scored().final_f1()
        return {k: v if k.endswith("-n") else float(v) for k, v in out.items()}

    def _scored(self) -> _Scored:
        return _Scored(self._gold, self._preds, self.long_non_null_threshold,
                       self.short_non_null_threshold)

    def state_dict(self) -> dict:
        """The state as plain lists: ``{"format", "version", "long_non_null_threshold",
        "short_non_null_threshold", "gold", "predictions"}``, each side its example ids and
        the columns of its arrays."""
        out: dict = {"format": "qafast.NqMetrics", "version": 1,
                     "long_non_null_threshold": self.long_non_null_threshold,
                     "short_non_null_threshold": self.short_non_null_threshold}
        for name, side in (("gold", self._gold), ("predictions", self._preds)):
            arrays = side.arrays()
            d = {"ids": list(side.ids)}
            for key in _STATE_KEYS[side.gold]:
                d[key] = arrays[key].tolist()
            out[name] = d
        return out

    def load_state_dict(self, state: dict) -> None:
        """Replace the state by one from :meth:`state_dict`."""
        gold, preds, thresholds = self._checked_state(state)
        self.reset()
        self.long_non_null_threshold, self.short_non_null_threshold = thresholds
        self._gold, self._preds = gold, preds

    def merge(self, *others: NqMetrics) -> NqMetrics:
        """Append the batches of ``others`` (unchanged), in order, after this one's."""
        for o in others:
            if type(o) is not type(self):
                raise InputTypeError(f"cannot merge a {type(o).__name__} into a NqMetrics")
            if (o.long_non_null_threshold, o.short_non_null_threshold) != (
                    self.long_non_null_threshold, self.short_non_null_threshold):
                raise InputError("cannot merge NqMetrics with other non-null thresholds")
        for o in others:
            for mine, theirs in ((self._gold, o._gold), (self._preds, o._preds)):
                if theirs.ids:
                    mine.add(list(theirs.ids), theirs.arrays(),
                             lambda r, side=theirs: "a merged " + side.place(r))
        return self

    @staticmethod
    def _checked_state(state):
        if not isinstance(state, dict) or state.get("format") != "qafast.NqMetrics":
            raise InputError("not a NqMetrics state")
        if state.get("version") != 1:
            raise InputError(f"NqMetrics state version {state.get('version')!r}, expected 1")
        try:
            thresholds = (state["long_non_null_threshold"], state["short_non_null_threshold"])
            sides = []
            for name, gold in (("gold", True), ("predictions", False)):
                d = state[name]
                arrays = {}
                for key in _STATE_KEYS[gold]:
                    a = np.array(d[key], dtype=_STATE_DTYPES.get(key, np.int64))
                    if key in ("ann", "long", "spans"):
                        a = a.reshape(len(d[key]), 4)
                    elif key in ("score", "score_int"):
                        a = a.reshape(len(d[key]), 2)
                    arrays[key] = a
                ids = list(d["ids"])
                side = _Records(gold)
                _check_arrays(arrays, len(ids), gold)
                if ids:
                    side.add(ids, arrays, lambda r: f"a restored record {r}")
                sides.append(side)
        except (KeyError, TypeError, ValueError, OverflowError):
            raise InputError("a NqMetrics state needs gold and predictions with their ids "
                             "and columns as state_dict gives them") from None
        if any(type(v) is not int for v in thresholds):
            raise InputError("a NqMetrics state needs integer non-null thresholds")
        return sides[0], sides[1], thresholds


def _check_arrays(a: dict, n: int, gold: bool) -> None:
    """Raise ValueError unless the arrays of a restored state index one another."""
    rows = len(a["yn"])
    ok = (len(a["slo"]) == len(a["shi"]) == rows
          and bool(np.all((0 <= a["slo"]) & (a["slo"] <= a["shi"]) & (a["shi"] <= len(a["spans"]))))
          and bool(np.all(a["yn"] <= (3 if gold else 2))))
    if gold:
        ok = ok and len(a["ann"]) == rows and len(a["lo"]) == len(a["hi"]) == n and bool(
            np.all((0 <= a["lo"]) & (a["lo"] <= a["hi"]) & (a["hi"] <= rows)))
    else:
        ok = ok and rows == n and len(a["long"]) == len(a["score"]) == len(a["score_int"]) == n
    if not ok:
        raise ValueError("inconsistent arrays")


# --------------------------------------------------------------------------------------------
# The `qafast nq` command
# --------------------------------------------------------------------------------------------

def _fmt(value, spec) -> str:
    # the script formats thresholds with a float precision, which fails on None and ints;
    # qafast prints them as str() does (see docs/known-differences.md)
    if value is None or type(value) is int:
        return str(value)
    return format(value, spec)


def _table(sweep) -> list:
    (f1, p, r, threshold), table = sweep
    lines = ["Optimal threshold: " + _fmt(threshold, ".5"), " F1     /  P      /  R",
             f"{f1: >7.2%} / {p: >7.2%} / {r: >7.2%}"]
    for target, recall, precision, at in table:
        lines.append(f"R@P={target}: {recall:.2%} (actual p={precision:.2%}, "
                     f"score threshold={_fmt(at, '.4')})")
    return lines


def report_lines(scored: _Scored, pretty: bool) -> list:
    """The lines the script prints on stdout."""
    if not pretty:
        return [json.dumps(scored.metrics())]
    out = ["*" * 20, "LONG ANSWER R@P TABLE:"] + _table(scored.sweep(True))
    out += ["*" * 20, "SHORT ANSWER R@P TABLE:"] + _table(scored.sweep(False))
    s = scored.final_f1()
    out += ["*" * 20, f"METRICS IGNORING SCORES (n={s['long-answer-n']}):",
            "              F1     /  P      /  R"]
    for name, prefix in (("Long answer  ", "long-answer-"), ("Short answer ", "short-answer-")):
        out.append(f"{name}{s[prefix + 'f1']: >7.2%} / {s[prefix + 'precision']: >7.2%} / "
                   f"{s[prefix + 'recall']: >7.2%}")
    return out


def register_cli(subparsers) -> dict:
    """Add ``qafast nq`` to the ``qafast`` command; returns ``{"nq": handler}``."""
    import argparse

    _Bool = absl_bool_action()

    p = subparsers.add_parser(
        "nq", help="score Natural Questions predictions, printing what nq_eval.py prints",
        description="Score Natural Questions long- and short-answer predictions as the official "
                    "nq_eval.py does, printing the same JSON line (or, with --pretty_print, the "
                    "same tables).")
    p.add_argument("--gold_path", required=True,
                   help="gold NQ JSONL file, gzipped or not, or a glob pattern of shards")
    p.add_argument("--predictions_path", required=True, help="predictions JSON file")
    p.add_argument("--pretty_print", action=_Bool, default=False,
                   help="print R@P tables and the scores ignoring thresholds")
    p.add_argument("--nopretty_print", dest="pretty_print", action="store_false",
                   help=argparse.SUPPRESS)
    p.add_argument("--long_non_null_threshold", type=int, default=2,
                   help="annotators who must give a long answer (default 2)")
    p.add_argument("--short_non_null_threshold", type=int, default=2,
                   help="annotators who must give a short answer (default 2)")
    p.add_argument("--num_threads", type=int, default=10,
                   help="accepted for the script's sake (qafast's reading does not depend "
                        "on it)")
    p.add_argument("--cache_gold_data", action=_Bool, default=False,
                   help="refused: the script's pickle cache fails under Python 3")
    p.add_argument("--nocache_gold_data", dest="cache_gold_data", action="store_false",
                   help=argparse.SUPPRESS)
    return {"nq": _run_cli}


def _reuse_freed_memory() -> None:
    """Have glibc's malloc keep freed blocks below 32 MB for reuse: for the ``qafast nq``
    program's own process only (a library call leaves the caller's allocator as it is).

    The gold text comes as pieces of some 4 MB, each freed once scanned. By default the
    allocator handed most of them back to the system and mapped the next one afresh, which the
    kernel zeroes on first touch: 30,000 of the 60,000 page faults of a run on 100,000
    examples, some 6% of its CPU time. Under another C library this does nothing."""
    try:
        if not os.confstr("CS_GNU_LIBC_VERSION"):
            return
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt
    except (AttributeError, ValueError, OSError, ImportError):
        return
    mallopt(-3, 32 << 20)  # M_MMAP_THRESHOLD: blocks below this come from the heap
    mallopt(-1, 256 << 20)  # M_TRIM_THRESHOLD: free heap kept (not returned) up to this


def _run_cli(args) -> int:
    if args.cache_gold_data:
        print("qafast nq: --cache_gold_data is not supported (the official script's pickle "
              "cache fails under Python 3)", file=sys.stderr)
        return 2
    _reuse_freed_memory()
    scored = _evaluate(args.gold_path, args.predictions_path, args.long_non_null_threshold,
                       args.short_non_null_threshold)
    sys.stdout.write("\n".join(report_lines(scored, args.pretty_print)) + "\n")
    return 0
