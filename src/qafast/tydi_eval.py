"""TyDi QA primary tasks (passage selection, minimal answer span), as ``tydi_eval.py`` scores them.

:func:`tydi` returns the macro average the official script prints last (same keys, same
floats), :func:`tydi_by_language` the metrics it prints for each language, and
:func:`tydi_questions` every gold example's own scores. Examples are scored by a compiled kernel,
and another sorts each language's examples by score and sweeps the thresholds in the script's
order of operations. The
plain-Python specification is :mod:`qafast.reference.tydi`; its docstring lists the rules.
(The module is ``tydi_eval``, as ``squad_eval`` is, so that ``qafast.tydi`` stays the function.)
``qafast tydi --gold_path G --predictions_path P`` prints what the script prints.
"""

from __future__ import annotations

import functools
import gzip
import io
import json
import math
import os
import sys
from collections.abc import Iterable, Mapping

import numpy as np

from . import _kernels
from ._gc import gc_paused
from ._output import absl_bool_action
from .errors import FormatError, InputError, InputTypeError

__all__ = ["tydi", "tydi_by_language", "tydi_questions"]

#: the languages the script scores, in its order (any other is counted but never scored)
LANGUAGES = ("english", "arabic", "bengali", "finnish", "indonesian", "japanese", "swahili",
             "korean", "russian", "telugu", "thai")
_TARGET_VALUES = (0.5, 0.75, 0.9)  # recall at these precisions
_TARGETS = np.array(_TARGET_VALUES)
_YES_NO = {"none": 0, "yes": 1, "no": 2}
_LIMIT = 2.0 ** 52  # offsets and indices stay exact through every difference and sum


# --------------------------------------------------------------------------------------------
# Reading and checking: gold annotations and predictions
# --------------------------------------------------------------------------------------------

class _Problem(Exception):
    """A record the script cannot read; the reader adds where it is."""


def _number(v, field):
    t = type(v)
    if t is int or t is bool:
        if -_LIMIT <= v <= _LIMIT:
            return v
        raise _Problem(f"{field} {v} is beyond 2**52 in size")
    if t is float:
        if math.isfinite(v):
            return v
        raise _Problem(f"{field} is {v}")
    raise _Problem(f"{field} must be a number, not {type(v).__name__}")


def _span(start, end, field):
    start = _number(start, field + " start")
    end = _number(end, field + " end")
    if (start < 0) != (end < 0):
        raise _Problem(f"{field} ({start}, {end}) has one offset negative (null) and one not")
    if start >= 0 and start > end:
        raise _Problem(f"{field} ({start}, {end}) starts after it ends")
    return start, end


def _item(record, key):
    try:
        return record[key]
    except KeyError:
        raise _Problem(f"no {key!r} field") from None
    except (TypeError, IndexError):
        raise _Problem(f"expected a JSON object, got {type(record).__name__}") from None


def _lower(v, field):
    if type(v) is not str:
        raise _Problem(f"{field} must be a string, not {type(v).__name__}")
    return v.lower()


def _hashable(v, field):
    try:
        hash(v)
    except TypeError:
        raise _Problem(f"{field} must be a string or number, not {type(v).__name__}") from None
    return v


def _records(source, what):
    """``(path or None, list of records)`` for a JSONL path or an iterable of records."""
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        return path, _jsonl(path, what)
    if isinstance(source, Mapping) or not isinstance(source, Iterable):
        raise InputTypeError(f"{what} must be a JSONL file path or an iterable of records, "
                             f"not {type(source).__name__}", field=what)
    return None, list(source)


def _jsonl(path, what):
    # as the script reads: gold through gzip when ".gz" is in its path (bytes lines, split at
    # b"\n", that json.loads decodes), otherwise text lines (universal newlines)
    if what == "gold" and ".gz" in path:
        with gzip.open(path, "rb") as f:
            return _gold_lines(f.read(), path)
    if what == "predictions":
        with open(path, "rb") as f:
            data = f.read()
        if data.count(b"\r") == data.count(b"\r\n"):  # text mode would split at no other byte
            scanned = _prediction_lines(data)
            if scanned is not None:
                return scanned
    return _jsonl_records(path)


def _jsonl_records(path):
    """The records of a JSONL text file through json.loads (the script's reader)."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = list(f)
    except UnicodeDecodeError as e:
        raise FormatError(f"not UTF-8 text ({e})", path=path) from None
    records = []
    for n, line in enumerate(lines, 1):
        try:
            records.append(json.loads(line))
        except (ValueError, UnicodeDecodeError) as e:
            raise FormatError(f"not a JSON line ({e})", path=path, line=n) from None
    return records


def _line_bounds(data: bytes):
    """``(bytes as uint8, line starts, line ends)``, lines split at b"\n" (the text after the
    last newline is a line only when it is not empty)."""
    buf = np.frombuffer(data, dtype=np.uint8)
    m = _kernels.tydi_count_lines(buf)
    starts = np.empty(m, dtype=np.int64)
    ends = np.empty(m, dtype=np.int64)
    _kernels.tydi_line_bounds(buf, starts, ends)
    return buf, starts, ends


def _ids_langs(buf, found):
    """``(ids, languages, plain)`` of the scanned lines: read in C when every id is an integer
    or a string without escapes and every language a string without escapes (``plain``: all
    ids are then int or str, all languages str), else through json.loads."""
    ids: list = []
    langs: list = []
    if _kernels.tydi_ids_langs(buf, found, ids, langs):
        return ids, langs, True
    pairs = json.loads(_kernels.tydi_gather_gold(buf, found))
    return [p[0] for p in pairs], [p[1] for p in pairs], False


def _last_lines(ids):
    """``(slot_of, last)``: each distinct id's slot in order of first appearance and the line
    of its last appearance (the script's dict: first place, last record)."""
    slot_of: dict = {}
    last = np.empty(len(ids), dtype=np.int64)
    k = _kernels.tydi_last_lines(ids, slot_of, last)
    if k >= 0:
        return slot_of, last[:k]
    slot_of = {}
    kept: list = []
    for line, eid in enumerate(ids):
        slot = slot_of.setdefault(eid, len(kept))
        if slot == len(kept):
            kept.append(line)
        else:
            kept[slot] = line
    return slot_of, np.asarray(kept, dtype=np.int64)


class _ScannedPredictions:
    """A prediction file whose every line the scanner read, one entry per line."""

    ids: list
    langs: list
    plain: bool
    has: np.ndarray
    index: np.ndarray
    start: np.ndarray
    end: np.ndarray
    yes_no: np.ndarray
    pscore: np.ndarray
    mscore: np.ndarray


def _prediction_lines(data: bytes):
    """The predictions of a JSONL file when the scanner reads every line plainly (else None:
    the lines then go through json.loads, as in the script)."""
    buf, starts, ends = _line_bounds(data)
    m = len(starts)
    if not m:
        return None
    found = np.empty((m, 4), dtype=np.int64)
    has = np.empty((m, 3), dtype=np.uint8)
    cols: list[np.ndarray] = [np.empty(m) for _ in range(3)] + [
        np.empty(m, dtype=np.uint8)] + [np.empty(m) for _ in range(2)]
    if _kernels.tydi_scan_predictions(buf, starts, ends, found, has, *cols) != m:
        return None
    sc = _ScannedPredictions()
    sc.ids, sc.langs, sc.plain = _ids_langs(buf, found)
    sc.has = has.astype(bool)
    sc.index, sc.start, sc.end, sc.yes_no, sc.pscore, sc.mscore = cols
    return sc


class _Scanned:
    """A gold file whose every line was read by the scanner: ids, languages, annotations."""

    def __init__(self, ids, langs, ann_lo, ann_hi, cols):
        self.ids, self.langs, self.ann_lo, self.ann_hi, self.cols = ids, langs, ann_lo, ann_hi, cols


def _gold_lines(data: bytes, path: str):
    """The gold records in the bytes of a JSONL file. Where every line is plainly valid JSON,
    the fields qafast reads are found without decoding the documents (a :class:`_Scanned`);
    otherwise every line goes through json.loads, as in the script, which fails where the
    script fails."""
    buf, starts, ends = _line_bounds(data)
    m = len(starts)
    found = np.empty((m, 10), dtype=np.int64)
    lo = np.empty(m, dtype=np.int64)
    hi = np.empty(m, dtype=np.int64)
    cap = len(data) // 100 + 16  # an annotation takes more than 100 bytes
    cols: list[np.ndarray] = [np.empty(cap) for _ in range(3)] + [
        np.empty(cap, dtype=np.uint8)]
    if m and _kernels.tydi_scan_gold(buf, starts, ends, found, lo, hi, *cols) == m:
        ids, langs, plain = _ids_langs(buf, found)
        if plain or all(type(i) is int or type(i) is str for i in ids):
            return _Scanned(ids, langs, lo, hi, cols)
    records = []
    for n, (a, b) in enumerate(zip(starts.tolist(), ends.tolist()), 1):
        try:
            records.append(json.loads(data[a:b]))
        except (ValueError, UnicodeDecodeError) as e:
            raise FormatError(f"not a JSON line ({e})", path=path, line=n) from None
    return records


def _fail(path, n, what, problem):
    if path is not None:
        return FormatError(str(problem), path=path, line=n)
    return InputError(f"{what} record {n}: {problem}")


class _Gold:
    """Gold examples in the script's dict order: a repeated id keeps its first place and its
    last record's annotations."""

    def __init__(self, source):
        path, records = _records(source, "gold")
        if isinstance(records, _Scanned):
            self._scanned(records)
        elif not self._walk(records):
            self._read(path, records)

    @classmethod
    def _from_lines(cls, data: bytes, path: str = "<bytes>") -> _Gold:
        """Gold from the bytes of a JSONL file, read as a gzipped gold file is read."""
        g = cls.__new__(cls)
        records = _gold_lines(data, path)
        if isinstance(records, _Scanned):
            g._scanned(records)
        elif not g._walk(records):
            g._read(path, records)
        return g

    def _scanned(self, sc: _Scanned) -> None:
        slot_of, last = _last_lines(sc.ids)
        langs = [sc.langs[i] for i in last.tolist()]
        self.slot_of, self.ids, self.languages = slot_of, list(slot_of), langs
        self.lang_code = _lang_codes(langs)
        lo, hi = sc.ann_lo[last], sc.ann_hi[last]
        self.ptr = np.zeros(len(last) + 1, dtype=np.int64)
        np.cumsum(hi - lo, out=self.ptr[1:])
        if len(last) == len(sc.ids):
            k = int(self.ptr[-1])
            self.index, self.start, self.end, self.yes_no = (c[:k] for c in sc.cols)
        else:
            take = (np.concatenate([np.arange(a, b, dtype=np.int64) for a, b in zip(lo, hi)])
                    if len(last) else np.zeros(0, dtype=np.int64))
            self.index, self.start, self.end, self.yes_no = (c[take] for c in sc.cols)

    def _walk(self, records) -> bool:
        n = len(records)
        cap = 3 * n + 16
        while True:
            slot_of: dict = {}
            ids: list = []
            langs: list = []
            lo = np.zeros(n, dtype=np.int64)
            hi = np.zeros(n, dtype=np.int64)
            self.lang_code = np.zeros(n, dtype=np.int8)
            cols: list[np.ndarray] = [np.zeros(cap) for _ in range(3)] + [
                np.zeros(cap, dtype=np.uint8)]
            k = _kernels.tydi_walk_gold(records, slot_of, ids, langs, lo, hi, self.lang_code,
                                        *cols)
            if k == -2:
                return False
            if k >= 0:
                break
            cap = sum(len(r["annotations"]) for r in records)
        m = len(ids)
        self.ids, self.languages, self.slot_of = ids, langs, slot_of
        self.lang_code = self.lang_code[:m]
        lo, hi = lo[:m], hi[:m]
        self.ptr = np.zeros(m + 1, dtype=np.int64)
        np.cumsum(hi - lo, out=self.ptr[1:])
        if m == n:
            self.index, self.start, self.end, self.yes_no = (c[:k] for c in cols)
        else:
            take = (np.concatenate([np.arange(a, b, dtype=np.int64) for a, b in zip(lo, hi)])
                    if m else np.zeros(0, dtype=np.int64))
            self.index, self.start, self.end, self.yes_no = (c[take] for c in cols)
        return True

    def _read(self, path, records):
        records = enumerate(records, 1)
        slot_of: dict = {}
        ids, langs, rec_of = [], [], []
        lo, hi = [], []
        index, start, end, yes_no = [], [], [], []
        r = 0
        for n, rec in records:
            try:
                eid = _hashable(_item(rec, "example_id"), "example_id")
                anns = _item(rec, "annotations")
                if not isinstance(anns, (list, tuple)):
                    raise _Problem("annotations must be a list")
                if not anns:
                    raise _Problem("annotations is empty (the script fails on it)")
                lang = _hashable(_item(rec, "language"), "language")
                _item(rec, "question_text")
                _item(rec, "document_plaintext")
                lo.append(len(index))
                for a in anns:
                    index.append(_number(_item(_item(a, "passage_answer"), "candidate_index"),
                                         "passage_answer candidate_index"))
                    m = _item(a, "minimal_answer")
                    s, e = _span(_item(m, "plaintext_start_byte"),
                                 _item(m, "plaintext_end_byte"), "minimal_answer")
                    start.append(s)
                    end.append(e)
                    yes_no.append(_YES_NO.get(_lower(_item(a, "yes_no_answer"),
                                                     "yes_no_answer"), 3))
                hi.append(len(index))
            except _Problem as p:
                raise _fail(path, n, "gold", p) from None
            slot = slot_of.setdefault(eid, len(ids))
            if slot == len(ids):
                ids.append(eid)
                langs.append(lang)
                rec_of.append(r)
            else:
                langs[slot] = lang
                rec_of[slot] = r
            r += 1
        self.ids, self.languages, self.slot_of = ids, langs, slot_of
        lo_a = np.asarray(lo, dtype=np.int64)[rec_of]
        hi_a = np.asarray(hi, dtype=np.int64)[rec_of]
        take = (np.arange(len(index), dtype=np.int64) if len(rec_of) == r else
                np.concatenate([np.arange(a, b, dtype=np.int64) for a, b in zip(lo_a, hi_a)]
                               or [np.zeros(0, np.int64)]))
        self.ptr = np.zeros(len(ids) + 1, dtype=np.int64)
        np.cumsum(hi_a - lo_a, out=self.ptr[1:])
        self.index = np.asarray(index, dtype=np.float64)[take]
        self.start = np.asarray(start, dtype=np.float64)[take]
        self.end = np.asarray(end, dtype=np.float64)[take]
        self.yes_no = np.asarray(yes_no, dtype=np.uint8)[take]
        self.lang_code = _lang_codes(langs)


class _Predictions:
    """Predictions by id, the last one of a repeated id winning (the script's dict)."""

    def __init__(self, source):
        path, records = _records(source, "predictions")
        if isinstance(records, _ScannedPredictions):
            if self._scanned(records):
                return
            records = _jsonl_records(path)
        if not self._walk(records):
            self._read(path, records)

    @classmethod
    def _from_lines(cls, data: bytes) -> _Predictions:
        """Predictions from the bytes of a JSONL file, as a prediction file is read."""
        p = cls.__new__(cls)
        sc = _prediction_lines(data) if data.count(b"\r") == data.count(b"\r\n") else None
        if sc is not None and p._scanned(sc):
            return p
        # lines as a text file splits them (\n, \r, \r\n), not str.splitlines, which also
        # splits at U+0085 and U+2028 inside an id
        records = [json.loads(x) for x in io.StringIO(data.decode("utf-8"), newline=None)]
        if not p._walk(records):
            p._read(None, records)
        return p

    def _scanned(self, sc: _ScannedPredictions) -> bool:
        """Rows from scanned lines; False where a line needs the Python reader (its error)."""
        if not sc.has[0, 1] or not sc.plain and (
                not all(type(i) is int or type(i) is str for i in sc.ids)
                or not all(type(lang) is str for lang in sc.langs)):
            return False
        lines = np.arange(len(sc.ids))
        with_span = np.maximum.accumulate(np.where(sc.has[:, 1], lines, 0))
        start, end = sc.start[with_span], sc.end[with_span]  # the previous line's span
        if ((sc.yes_no != 0) & ~((start < 0) & (end < 0))).any():
            return False
        row_of, last = _last_lines(sc.ids)
        self.row_of = row_of
        self.languages = [sc.langs[i] for i in last.tolist()]
        self.lang_code = _lang_codes(self.languages)
        self.index = np.where(sc.has[:, 0], sc.index, -1.0)[last]
        self.start, self.end, self.yes_no = start[last], end[last], sc.yes_no[last]
        self.pscore, self.mscore = sc.pscore[last], sc.mscore[last]
        self.passage_scores, self.minimal_scores = self.pscore.tolist(), self.mscore.tolist()
        return True

    def _walk(self, records) -> bool:
        n = len(records)
        self.row_of, self.languages = {}, []
        self.passage_scores, self.minimal_scores = [], []
        self.lang_code = np.zeros(n, dtype=np.int8)
        cols: list[np.ndarray] = [np.zeros(n) for _ in range(3)] + [
            np.zeros(n, dtype=np.uint8)] + [np.zeros(n) for _ in range(2)]
        m = _kernels.tydi_walk_predictions(records, self.row_of, self.languages,
                                           self.passage_scores, self.minimal_scores,
                                           self.lang_code, *cols)
        if m < 0:
            return False
        self.lang_code = self.lang_code[:m]
        self.index, self.start, self.end, self.yes_no, self.pscore, self.mscore = (
            c[:m] for c in cols)
        return True

    def _read(self, path, records):
        records = enumerate(records, 1)
        row_of: dict = {}
        langs, index, start, end, yes_no, pscore, mscore = [], [], [], [], [], [], []
        span = None
        for n, rec in records:
            try:
                eid = _hashable(_item(rec, "example_id"), "example_id")
                idx = -1
                if "passage_answer_index" in rec:
                    idx = _number(rec["passage_answer_index"], "passage_answer_index")
                if "minimal_answer" in rec:
                    m = rec["minimal_answer"]
                    span = _span(_item(m, "start_byte_offset"), _item(m, "end_byte_offset"),
                                 "minimal_answer")
                elif span is None:
                    raise _Problem("no 'minimal_answer' field, and no earlier prediction has "
                                   "one (the script reuses the previous prediction's)")
                yn = "none"
                if "yes_no_answer" in rec:
                    yn = _lower(rec["yes_no_answer"], "yes_no_answer")
                    if yn not in _YES_NO:
                        raise _Problem(f"yes_no_answer {rec['yes_no_answer']!r} is not yes, "
                                       f"no or none")
                    if yn != "none" and not (span[0] < 0 and span[1] < 0):
                        raise _Problem("a yes/no answer with a non-null minimal_answer span")
                lang = _hashable(_item(rec, "language"), "language")
                ps = _score(_item(rec, "passage_answer_score"), "passage_answer_score")
                ms = _score(_item(rec, "minimal_answer_score"), "minimal_answer_score")
            except _Problem as p:
                raise _fail(path, n, "predictions", p) from None
            except TypeError:
                raise _fail(path, n, "predictions",
                            f"expected a JSON object, got {type(rec).__name__}") from None
            row = row_of.setdefault(eid, len(langs))
            values = (lang, idx, span[0], span[1], _YES_NO[yn], ps, ms)
            if row == len(langs):
                for column, v in zip((langs, index, start, end, yes_no, pscore, mscore), values):
                    column.append(v)
            else:
                for column, v in zip((langs, index, start, end, yes_no, pscore, mscore), values):
                    column[row] = v
        self.row_of, self.languages = row_of, langs
        self.passage_scores, self.minimal_scores = pscore, mscore
        self.index = np.asarray(index, dtype=np.float64)
        self.start = np.asarray(start, dtype=np.float64)
        self.end = np.asarray(end, dtype=np.float64)
        self.yes_no = np.asarray(yes_no, dtype=np.uint8)
        self.pscore = np.asarray(pscore, dtype=np.float64)
        self.mscore = np.asarray(mscore, dtype=np.float64)
        self.lang_code = _lang_codes(langs)


def _lang_codes(langs) -> np.ndarray:
    """Each language's place in LANGUAGES, -1 for any other (as dict keys compare)."""
    out = np.empty(len(langs), dtype=np.int8)
    _kernels.tydi_lang_codes(list(langs), out)
    return out


def _score(v, field):
    if isinstance(v, (list, dict)) or v is None:
        raise _Problem(f"{field} must be a number, not {type(v).__name__}")
    try:
        return float(v)
    except (TypeError, ValueError, OverflowError) as e:
        raise _Problem(f"{field} {v!r} is not a number ({e})") from None


def _load(gold, predictions):
    g = gold if isinstance(gold, _Gold) else _Gold(gold)
    p = predictions if isinstance(predictions, _Predictions) else _Predictions(predictions)
    return g, p


def _check_thresholds(*values):
    for v in values:
        if type(v) is not int:
            raise InputTypeError(f"non-null thresholds are integers, got {v!r}")


# --------------------------------------------------------------------------------------------
# Scoring
# --------------------------------------------------------------------------------------------

def _score_examples(g: _Gold, p: _Predictions, gold_rows, pred_rows, passage_threshold,
                    minimal_threshold):
    """``(flags, prf, first failing position or -1)`` of the examples ``gold_rows`` with the
    predictions ``pred_rows`` (see ``_kernels.tydi_examples``)."""
    n = len(gold_rows)
    flags = np.zeros((n, 5), dtype=np.uint8)
    prf = np.zeros((n, 3), dtype=np.float64)
    failed = _kernels.tydi_examples(gold_rows, pred_rows, g.ptr, g.index, g.start, g.end,
                                    g.yes_no, p.index, p.start, p.end, p.yes_no,
                                    passage_threshold, minimal_threshold, flags, prf)
    return flags, prf, failed


class _Scored:
    """One ``score_answers`` call: examples in ``set`` order, flags, scores and both sweeps."""

    def __init__(self, g: _Gold, p: _Predictions, gold_rows, pred_rows, thresholds,
                 ids: list, scored=None):
        self.ids = ids
        self.gold_row = np.asarray(gold_rows, dtype=np.int64)
        self.pred_row = np.asarray(pred_rows, dtype=np.int64)
        self._all, self._p = scored, p
        if scored is not None and scored[2] < 0 and self._sweep_in_c(scored, p):
            return  # the per-example arrays below are then gathered only when asked for
        if scored is not None and scored[2] < 0:  # every example scored, none failing
            self.flags, self.prf = scored[0][self.gold_row], scored[1][self.gold_row]
        else:  # scored here, so that a failure names this order's first example
            self.flags, self.prf, failed = _score_examples(g, p, self.gold_row, self.pred_row,
                                                           *thresholds)
            if failed >= 0:
                q = self.pred_row[failed]
                raise InputError(
                    f"example {ids[failed]!r}: the predicted minimal answer "
                    f"({_int(p.start[q])}, {_int(p.end[q])}) and a gold span overlap in no "
                    "byte although one lies strictly inside the other (an empty span); the "
                    "official script fails on its overlap assertion", query=ids[failed])
        self.missing = self.pred_row < 0
        safe = np.where(self.missing, 0, self.pred_row)
        self.pscore = np.where(self.missing, 0.0, p.pscore[safe] if len(p.pscore) else 0.0)
        self.mscore = np.where(self.missing, 0.0, p.mscore[safe] if len(p.mscore) else 0.0)
        self._p = p
        self.passage = self._sweep(self.flags[:, 0], self.flags[:, 1],
                                   self.flags[:, 2].astype(np.float64), self.pscore,
                                   p.passage_scores, False)
        self.minimal = self._sweep(self.flags[:, 3], self.flags[:, 4],
                                   np.ascontiguousarray(self.prf[:, 2]), self.mscore,
                                   p.minimal_scores, True)

    # The examples' flags, minimal (precision, recall, F1), prediction scores (0.0 without a
    # prediction) and missing-prediction mask, in this language's set order. The slow path
    # sets them; after the kernel's sweeps they are gathered only if read.
    @functools.cached_property
    def flags(self) -> np.ndarray:
        return self._all[0][self.gold_row]

    @functools.cached_property
    def prf(self) -> np.ndarray:
        return self._all[1][self.gold_row]

    @functools.cached_property
    def missing(self) -> np.ndarray:
        return self.pred_row < 0

    @functools.cached_property
    def pscore(self) -> np.ndarray:
        return self._gathered(self._p.pscore)

    @functools.cached_property
    def mscore(self) -> np.ndarray:
        return self._gathered(self._p.mscore)

    def _gathered(self, scores: np.ndarray) -> np.ndarray:
        safe = np.where(self.missing, 0, self.pred_row)
        return np.where(self.missing, 0.0, scores[safe] if len(scores) else 0.0)

    def _sweep_in_c(self, scored, p: _Predictions) -> bool:
        """Both sweeps in one kernel call from every example's flags and scores; False
        where a score is NaN (Python's sort and dict keys then decide)."""
        n = len(self.gold_row)
        order = np.empty((2, n), dtype=np.int64)
        best = np.empty((2, 3))
        best_at = np.empty(2, dtype=np.int64)
        rows = np.empty((2, len(_TARGETS), 2))
        row_at = np.empty((2, len(_TARGETS)), dtype=np.int64)
        status = _kernels.tydi_language_sweeps(
            self.gold_row, self.pred_row, scored[0], scored[1], p.pscore, p.mscore, _TARGETS,
            order, np.empty((2, n), dtype=np.int64), np.empty(n, dtype=np.int64), best,
            best_at, rows, row_at)
        if status == -2:
            raise RuntimeError("tydi_language_sweeps: a row outside the arrays")
        if status < 0:
            return False
        pred_row = self.pred_row

        def key(s, at):
            # the score of the example a threshold starts at: 0 (an int) without a prediction
            if at < 0:
                return None
            q = pred_row[order[s, at]]
            return 0 if q < 0 else float((p.pscore if s == 0 else p.mscore)[q])

        sweeps = []
        for s in range(2):
            b = best[s].tolist()
            threshold = key(s, int(best_at[s]))
            table = []
            for k, t in enumerate(_TARGET_VALUES):
                at = int(row_at[s, k])
                table.append((t, 0, 0, None) if at < 0 else
                             (t, float(rows[s, k, 0]), float(rows[s, k, 1]), key(s, at)))
            sweeps.append(((b[0], b[1], b[2], 0.0 if threshold is None else threshold),
                           table))
        self.passage, self.minimal = sweeps
        return True

    def _sweep(self, has_gold, has_pred, value, score, objects, minimal):
        has_gold = np.ascontiguousarray(has_gold)
        has_pred = np.ascontiguousarray(has_pred)
        if np.isnan(score).any():
            return self._sweep_in_python(has_gold, has_pred, value, objects, minimal)
        order = np.argsort(-score, kind="stable")
        best = np.zeros(3)
        best_at = np.zeros(1, dtype=np.int64)
        rows = np.zeros((len(_TARGETS), 2))
        row_at = np.zeros(len(_TARGETS), dtype=np.int64)
        _kernels.tydi_curve(has_gold, has_pred, value, score, order, _TARGETS, best, best_at,
                            rows, row_at)

        def key(at):
            if at < 0:
                return None
            o = order[at]
            return 0 if self.missing[o] else float(score[o])

        b = best.tolist()
        threshold = key(best_at[0])
        best_tuple = (b[0], b[1], b[2], 0.0 if threshold is None else threshold)
        table = []
        for k, t in enumerate(_TARGET_VALUES):
            if row_at[k] < 0:
                table.append((t, 0, 0, None))
            else:
                table.append((t, float(rows[k, 0]), float(rows[k, 1]), key(row_at[k])))
        return best_tuple, table

    def _sweep_in_python(self, has_gold, has_pred, value, objects, minimal):
        # a NaN score: Python's sort and dict keys decide, so the specification sweeps
        from .reference import tydi as _spec

        rows = self.pred_row.tolist()
        stats = [(bool(hg), bool(hp), (0, 0, v) if minimal else v,
                  0 if q < 0 else objects[q])
                 for hg, hp, v, q in zip(has_gold.tolist(), has_pred.tolist(), value.tolist(),
                                         rows)]
        stats.sort(key=lambda s: s[-1], reverse=True)
        return _spec.pr_curve(stats)

    def metrics(self) -> dict:
        out = {}
        for prefix, ((f1, p, r, threshold), table) in (("passage-", self.passage),
                                                        ("minimal-", self.minimal)):
            out[prefix + "best-threshold-f1"] = f1
            out[prefix + "best-threshold-precision"] = p
            out[prefix + "best-threshold-recall"] = r
            out[prefix + "best-threshold"] = threshold
            for target, recall, precision, _ in table:
                out[f"{prefix}recall-at-precision>={target:.2}"] = recall
                out[f"{prefix}precision-at-precision>={target:.2}"] = precision
        return out


def _int(x):
    return int(x) if float(x).is_integer() else float(x)


def _sortable(ids: set, what: str) -> None:
    # the script logs sorted(ids), which fails on ids Python cannot order
    kinds = {type(i) for i in ids}
    if kinds <= {int, float, bool} or kinds == {str}:
        return
    try:
        sorted(ids)
    except TypeError:
        raise InputError(f"{what} example ids mix types Python cannot sort "
                         f"({', '.join(sorted(k.__name__ for k in kinds))}); the official "
                         "script fails listing them") from None


class _Evaluation:
    """The script's ``main``: each scored language's examples, in its order."""

    def __init__(self, gold, predictions, passage_threshold, minimal_threshold):
        with gc_paused():
            self._evaluate(gold, predictions, passage_threshold, minimal_threshold)

    def _evaluate(self, gold, predictions, passage_threshold, minimal_threshold):
        _check_thresholds(passage_threshold, minimal_threshold)
        g, p = _load(gold, predictions)
        self.gold, self.preds = g, p
        # the exact types of the ids: 1 int, 2 str, 4 float, 8 bool, 16 any other
        kinds = _kernels.tydi_id_kinds(g.ids) | _kernels.tydi_id_kinds(p.row_of)
        orderable = (kinds & ~(1 | 4 | 8)) == 0 or kinds == 2
        # Memory order, not the script's: each gold example's prediction (of its language)
        # and scores are found once, walking the examples as they lie in memory; a language
        # then gathers its rows in the order of its set. Ints of the ids' values, made side
        # by side for each language, keep that set's order (it depends only on the values)
        # and its lookups within cache.
        pred_of = np.empty(len(g.ids), dtype=np.int64)
        _kernels.tydi_rows(g.ids, p.row_of, pred_of)
        if len(pred_of) and len(p.lang_code):
            known = pred_of >= 0
            pred_of[known & (g.lang_code < 0)] = -1
            pred_of[known & (p.lang_code[np.where(known, pred_of, 0)] != g.lang_code)] = -1
        self._all = _score_examples(g, p, np.arange(len(g.ids), dtype=np.int64), pred_of,
                                    passage_threshold, minimal_threshold)
        values = None
        if kinds == 1:
            try:
                values = np.array(g.ids, dtype=np.int64)
            except OverflowError:
                values = None
        if values is None:
            ids = np.empty(len(g.ids), dtype=object)
            ids[:] = g.ids
        self.missing, self.unexpected, self.scored = {}, {}, {}
        for code, lang in enumerate(LANGUAGES):
            n_pred = int(np.count_nonzero(p.lang_code == code))
            if not n_pred:
                continue
            slots = np.flatnonzero(g.lang_code == code)
            lang_ids = (values if values is not None else ids)[slots].tolist()
            id_set = set(lang_ids)  # built as the script's set(dict.keys()): same order
            order = list(id_set)
            if values is not None:  # each id's place among the slots, by binary search
                lang_values = values[slots]
                by_value = np.argsort(lang_values)
                at = by_value[np.searchsorted(lang_values, np.array(order, dtype=np.int64),
                                              sorter=by_value)]
            else:
                at = np.empty(len(order), dtype=np.int64)
                _kernels.tydi_rows(order, dict(zip(lang_ids, range(len(lang_ids)))), at)
            gold_rows = slots[at]
            rows = pred_of[gold_rows]
            matched = int(np.count_nonzero(rows >= 0))
            self.missing[lang] = len(order) - matched
            self.unexpected[lang] = n_pred - matched
            if not orderable and (self.missing[lang] or self.unexpected[lang]):
                pred_set = {i for i, r in p.row_of.items() if p.lang_code[r] == code}
                for what, part in (("unpredicted", id_set - pred_set),
                                   ("unexpected", pred_set - id_set)):
                    if part:
                        _sortable(part, f"{lang}: {what}")
            self.scored[lang] = _Scored(g, p, gold_rows, rows,
                                        (passage_threshold, minimal_threshold), order,
                                        self._all)

    def aggregate(self) -> dict:
        cols: dict[str, tuple[list, list, list]] = {"passage": ([], [], []),
                                                    "minimal": ([], [], [])}
        for lang, s in self.scored.items():
            if lang == "english":
                continue
            for name, sweep in (("passage", s.passage), ("minimal", s.minimal)):
                f1, p, r, _ = sweep[0]
                for column, v in zip(cols[name], (f1, p, r)):
                    column.append(v)
        out = {}
        for name in ("passage", "minimal"):
            f1s, ps, rs = cols[name]
            out[f"avg_{name}_f1"] = _mean(f1s)
            out[f"avg_{name}_recall"] = _mean(rs)
            out[f"avg_{name}_precision"] = _mean(ps)
        return out


def _mean(values):
    return sum(values) / len(values) if values else 0


# --------------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------------

def tydi(gold, predictions, *, passage_non_null_threshold: int = 2,
         minimal_non_null_threshold: int = 2) -> dict:
    """The macro-averaged TyDi QA scores, as the last line of the official script.

    Parameters
    ----------
    gold : str, os.PathLike or iterable of dict
        TyDi QA gold examples: a JSONL file (gzipped when the path contains ``.gz``, as the
        script decides) or its records, each with ``example_id``, ``language``,
        ``question_text``, ``document_plaintext`` and ``annotations``.
    predictions : str, os.PathLike or iterable of dict
        Predictions: a JSONL file or its records, each with ``example_id``, ``language``,
        ``passage_answer_score``, ``minimal_answer_score`` and optionally
        ``passage_answer_index``, ``minimal_answer`` (``start_byte_offset``,
        ``end_byte_offset``) and ``yes_no_answer``.
    passage_non_null_threshold, minimal_non_null_threshold : int, default=2
        How many annotators must give a (passage, minimal) answer for the gold to have one.

    Returns
    -------
    dict
        ``avg_passage_f1``, ``avg_passage_recall``, ``avg_passage_precision``,
        ``avg_minimal_f1``, ``avg_minimal_recall``, ``avg_minimal_precision``: each the mean,
        over the non-English languages some prediction names, of that language's F1, recall
        or precision at its optimal score threshold (``0`` when there is none).

    Examples
    --------
    >>> gold = [{"example_id": 1, "language": "swahili",
    ...          "question_text": "", "document_plaintext": "",
    ...          "annotations": [{"passage_answer": {"candidate_index": 0},
    ...                           "minimal_answer": {"plaintext_start_byte": 0,
    ...                                              "plaintext_end_byte": 4},
    ...                           "yes_no_answer": "NONE"}] * 3}]
    >>> preds = [{"example_id": 1, "language": "swahili", "passage_answer_index": 0,
    ...           "passage_answer_score": 1.0, "minimal_answer_score": 1.0,
    ...           "minimal_answer": {"start_byte_offset": 2, "end_byte_offset": 6}}]
    >>> tydi(gold, preds)["avg_minimal_f1"]
    0.5
    """
    return _Evaluation(gold, predictions, passage_non_null_threshold,
                       minimal_non_null_threshold).aggregate()


def tydi_by_language(gold, predictions, *, passage_non_null_threshold: int = 2,
                     minimal_non_null_threshold: int = 2) -> dict:
    """The metrics the official script prints for each language, keyed by language.

    Same inputs as :func:`tydi`. A language is scored when some prediction names it (one of
    english, arabic, bengali, finnish, indonesian, japanese, swahili, korean, russian, telugu,
    thai, in that order). Each value has the script's keys: ``passage-best-threshold-f1``,
    ``-precision``, ``-recall``, ``passage-best-threshold``, then
    ``passage-recall-at-precision>=T`` and ``passage-precision-at-precision>=T`` for T in 0.5,
    0.75, 0.9, then the same with ``minimal-``. An unreached target gives ``0`` and ``0``;
    a threshold is the score of the first example at it, ``0`` (an int) for an example
    without a prediction.

    Examples
    --------
    >>> gold = [{"example_id": "a", "language": "thai",
    ...          "question_text": "", "document_plaintext": "",
    ...          "annotations": [{"passage_answer": {"candidate_index": 3},
    ...                           "minimal_answer": {"plaintext_start_byte": -1,
    ...                                              "plaintext_end_byte": -1},
    ...                           "yes_no_answer": "YES"}] * 2}]
    >>> preds = [{"example_id": "a", "language": "thai",
    ...           "passage_answer_index": 3, "yes_no_answer": "yes",
    ...           "minimal_answer": {"start_byte_offset": -1, "end_byte_offset": -1},
    ...           "passage_answer_score": 2.5, "minimal_answer_score": 0.5}]
    >>> m = tydi_by_language(gold, preds)["thai"]
    >>> m["passage-best-threshold-f1"], m["passage-best-threshold"], m["minimal-best-threshold-f1"]
    (1.0, 2.5, 1.0)
    """
    ev = _Evaluation(gold, predictions, passage_non_null_threshold, minimal_non_null_threshold)
    return {lang: s.metrics() for lang, s in ev.scored.items()}


def tydi_questions(gold, predictions, *, passage_non_null_threshold: int = 2,
                   minimal_non_null_threshold: int = 2) -> dict:
    """Every gold example's own scores, in gold order (a repeated id once, at its first place).

    Same inputs as :func:`tydi`. An example is matched with the prediction of its id when that
    prediction names the same language (the script scores each language on its own).

    Returns
    -------
    dict of list or numpy.ndarray
        ``example_id`` and ``language`` (lists); ``passage_has_gold``,
        ``passage_has_prediction``, ``passage_correct``, ``minimal_has_gold``,
        ``minimal_has_prediction`` (bool arrays); ``minimal_precision``, ``minimal_recall``,
        ``minimal_f1``, ``passage_score``, ``minimal_score`` (float arrays; scores are 0.0
        without a prediction, which then "has" a prediction exactly when gold has none, as in
        the script's counts).

    Examples
    --------
    >>> gold = [{"example_id": 7, "language": "korean",
    ...          "question_text": "", "document_plaintext": "",
    ...          "annotations": [{"passage_answer": {"candidate_index": 1},
    ...                           "minimal_answer": {"plaintext_start_byte": 10,
    ...                                              "plaintext_end_byte": 20},
    ...                           "yes_no_answer": "NONE"}] * 2}]
    >>> preds = [{"example_id": 7, "language": "korean", "passage_answer_index": 1,
    ...           "minimal_answer": {"start_byte_offset": 15, "end_byte_offset": 20},
    ...           "passage_answer_score": 1, "minimal_answer_score": 1}]
    >>> q = tydi_questions(gold, preds)
    >>> q["passage_correct"].tolist(), q["minimal_precision"].tolist(), q["minimal_recall"].tolist()
    ([True], [1.0], [0.5])
    """
    _check_thresholds(passage_non_null_threshold, minimal_non_null_threshold)
    with gc_paused():
        g, p = _load(gold, predictions)
    rows = []
    for eid, lang in zip(g.ids, g.languages):
        q = p.row_of.get(eid, -1)
        rows.append(q if q >= 0 and _same(p.languages[q], lang) else -1)
    n = len(g.ids)
    flags = np.zeros((n, 5), dtype=np.uint8)
    prf = np.zeros((n, 3), dtype=np.float64)
    gold_rows = np.arange(n, dtype=np.int64)
    pred_rows = np.asarray(rows, dtype=np.int64)
    failed = _kernels.tydi_examples(
        gold_rows, pred_rows, g.ptr, g.index, g.start, g.end, g.yes_no, p.index, p.start,
        p.end, p.yes_no, passage_non_null_threshold, minimal_non_null_threshold, flags, prf)
    if failed >= 0:
        raise InputError(f"example {g.ids[failed]!r}: the predicted minimal answer and a gold "
                         "span overlap in no byte although one lies strictly inside the other "
                         "(an empty span); the official script fails on its overlap assertion",
                         query=g.ids[failed])
    missing = pred_rows < 0
    safe = np.where(missing, 0, pred_rows)
    f = flags.astype(bool)
    return {
        "example_id": list(g.ids), "language": list(g.languages),
        "passage_has_gold": f[:, 0], "passage_has_prediction": f[:, 1],
        "passage_correct": f[:, 2], "passage_score": np.where(
            missing, 0.0, p.pscore[safe] if len(p.pscore) else 0.0),
        "minimal_has_gold": f[:, 3], "minimal_has_prediction": f[:, 4],
        "minimal_precision": prf[:, 0].copy(), "minimal_recall": prf[:, 1].copy(),
        "minimal_f1": prf[:, 2].copy(), "minimal_score": np.where(
            missing, 0.0, p.mscore[safe] if len(p.mscore) else 0.0),
    }


def _same(a, b) -> bool:
    return {a: 0}.get(b, 1) == 0  # the script groups languages by dict key equality


# --------------------------------------------------------------------------------------------
# The `qafast tydi` command
# --------------------------------------------------------------------------------------------

def _latex(f1, p, r) -> str:
    return f"\\fpr{{{f1 * 100:.1f}}}{{{p * 100:.1f}}}{{{r * 100:.1f}}}"


def _fmt(value, spec) -> str:
    # the script formats thresholds with a float precision, which fails on None and int 0;
    # qafast prints them as str() does (see docs/known-differences.md)
    if value is None or type(value) is int:
        return str(value)
    return format(value, spec)


def report_lines(ev: _Evaluation, pretty: bool) -> list:
    """The lines the script prints on stdout."""
    out = []
    for lang, s in ev.scored.items():
        f1, p, r, _ = s.passage[0]
        out.append("Passage & " + lang + " & " + _latex(f1, p, r))
        f1, p, r, _ = s.minimal[0]
        out.append("Minimal Answer & " + lang + " & " + _latex(f1, p, r))
        if pretty:
            n_gold = int(np.count_nonzero(ev.gold.lang_code == LANGUAGES.index(lang)))
            out += ["*" * 20, lang, f"Language: {lang} ({n_gold})", "*" * 20,
                    "PASSAGE ANSWER R@P TABLE:"]
            out += _table(s.passage)
            out += ["*" * 20, "MINIMAL ANSWER R@P TABLE:"]
            out += _table(s.minimal)
        else:
            out.append(json.dumps(s.metrics()))
    out.append(f"Total # examples in gold: {len(ev.gold.ids)}, # ex. in pred: "
               f"{len(ev.preds.row_of)} (including english)")
    agg = ev.aggregate()
    n = sum(1 for lang in ev.scored if lang != "english")
    out.append(f"*** Macro Over {n} Languages, excluding English **")
    for name in ("passage", "minimal"):
        f1, p, r = agg[f"avg_{name}_f1"], agg[f"avg_{name}_precision"], agg[f"avg_{name}_recall"]
        out.append(f"{name.capitalize()} F1:{f1:.3f} P:{p:.3f} R:{r:3f}")
        out.append(_latex(f1, p, r))
    out.append("*** / Aggregate Scores ****")
    out.append(json.dumps(agg))
    return out


def _table(sweep) -> list:
    (f1, p, r, threshold), table = sweep
    lines = ["Optimal threshold: " + _fmt(threshold, ".5"), " F1     /  P      /  R",
             f"{f1: >7.2%} / {p: >7.2%} / {r: >7.2%}"]
    for target, recall, precision, at in table:
        lines.append(f"R@P={target}: {recall:.2%} (actual p={precision:.2%}, "
                     f"score threshold={_fmt(at, '.4')})")
    return lines


def register_cli(subparsers) -> dict:
    """Add ``qafast tydi`` to the ``qafast`` command; returns ``{"tydi": handler}``."""
    p = subparsers.add_parser(
        "tydi", help="score TyDi QA primary-task predictions, printing what tydi_eval.py prints",
        description="Score TyDi QA passage-selection and minimal-answer predictions as the "
                    "official tydi_eval.py does, printing the same lines: per language, then "
                    "the macro average over the non-English languages. Notes go to stderr.")
    p.add_argument("--gold_path", required=True,
                   help="gold JSONL (gzipped when the path contains .gz)")
    p.add_argument("--predictions_path", required=True, help="predictions JSONL")
    p.add_argument("--pretty_print", action=absl_bool_action(), default=False,
                   help="print R@P tables instead of one JSON line per language")
    p.add_argument("--nopretty_print", dest="pretty_print", action="store_false",
                   help=_hidden())
    p.add_argument("--passage_non_null_threshold", type=int, default=2,
                   help="annotators who must give a passage answer (default 2)")
    p.add_argument("--minimal_non_null_threshold", type=int, default=2,
                   help="annotators who must give a minimal answer (default 2)")
    p.add_argument("--verbose", action=absl_bool_action(), default=True,
                   help="accepted for the script's sake (its per-example log goes to stderr)")
    p.add_argument("--noverbose", dest="verbose", action="store_false", help=_hidden())
    p.add_argument("--cache_gold_data", action=absl_bool_action(), default=False,
                   help="refused: the script's pickle cache fails under Python 3")
    p.add_argument("--nocache_gold_data", dest="cache_gold_data", action="store_false",
                   help=_hidden())
    return {"tydi": _run_cli}


def _hidden():
    import argparse

    return argparse.SUPPRESS


def _run_cli(args) -> int:
    if args.cache_gold_data:
        print("qafast tydi: --cache_gold_data is not supported (the official script's pickle "
              "cache fails under Python 3)", file=sys.stderr)
        return 2
    ev = _Evaluation(args.gold_path, args.predictions_path, args.passage_non_null_threshold,
                     args.minimal_non_null_threshold)
    for lang in ev.scored:
        if ev.missing[lang]:
            print(f"qafast tydi: {lang}: predictions missing for {ev.missing[lang]} examples",
                  file=sys.stderr)
        if ev.unexpected[lang]:
            print(f"qafast tydi: {lang}: {ev.unexpected[lang]} predictions for examples not "
                  "in the gold data", file=sys.stderr)
    sys.stdout.write("\n".join(report_lines(ev, args.pretty_print)) + "\n")
    return 0
