"""HotpotQA, exactly as its official evaluation script (``hotpot_evaluate_v1.py``) computes it.

:func:`hotpot` returns the dict the script prints: answer exact match, F1, precision and
recall (SQuAD's normalization, with HotpotQA's yes/no rule), the same four over the supporting
facts, and the joint four, with the script's keys and bit-identical floats. Answers are
scored with the compiled kernels of :mod:`qafast.answers` (one normalization per string);
supporting facts are counted in a kernel when they are ``[title, sentence id]`` pairs, and
with Python's own sets otherwise. Given two files, the questions are scored straight from
the files' bytes (ids joined, answers normalized and facts matched in compiled code, without
the GIL; the two files read and scanned at once, and a large file's questions joined and
scored in two halves at once, on two threads), Python objects being made only for the ids printed and for the few
questions the compiled code leaves to the general path. The plain-Python specification is
:mod:`qafast.reference.hotpot`; its docstring lists every rule reproduced here.
``qafast hotpot PRED GOLD`` is the command-line form, printing what the script prints.
"""

from __future__ import annotations

import os
import sys
import threading
from array import array
from collections.abc import Mapping
from typing import TYPE_CHECKING

from . import _kernels
from ._json_scan import scan_skip
from ._gc import gc_paused
from ._threads import beside
from .errors import FormatError, InputError, InputTypeError

if TYPE_CHECKING:
    import numpy as np

# numpy is imported by the functions that use it: `qafast hotpot` on files of the plain form
# scores them without it (_evaluate_spans), and importing it was half the command's start
# (0.15 s of 0.26 s)

__all__ = ["KEYS", "HotpotMetrics", "hotpot", "read_json"]

#: The script's keys, in the order it prints them.
KEYS = ("em", "f1", "prec", "recall", "sp_em", "sp_f1", "sp_prec", "sp_recall",
        "joint_em", "joint_f1", "joint_prec", "joint_recall")

_SPECIAL = ("yes", "no", "noanswer")

# json's own string decoder, which the scans hand the long escaped strings to: taken from
# the compiled module that json.decoder takes it from, as json itself is imported only by
# the functions that parse whole files (its import was 3 ms of the command's start)
try:
    from _json import scanstring as _SCANSTRING
except ImportError:   # (an interpreter without it: json's Python decoder)
    from json.decoder import scanstring as _SCANSTRING  # type: ignore[attr-defined,no-redef]


def hotpot(gold, predictions, *, per_question: bool = False) -> dict:
    """Score HotpotQA predictions as the official ``hotpot_evaluate_v1.py`` does.

    Parameters
    ----------
    gold : str, os.PathLike or list
        The gold file (such as ``hotpot_dev_distractor_v1.json``) or its loaded list of
        questions, each a dict with ``"_id"``, ``"answer"`` and ``"supporting_facts"`` (a
        list of ``[title, sentence id]`` pairs). Other fields (``"context"``, ...) are
        ignored. Every entry is a question, a repeated id as often as it occurs.
    predictions : str, os.PathLike or mapping
        ``{"answer": {id: text}, "sp": {id: [[title, sentence id], ...]}}`` or a JSON file
        of it. A question missing from ``"answer"`` (or ``"sp"``) adds nothing to the
        answer (or fact) sums and nothing to the joint ones, but counts in the number of
        questions. Ids the gold lacks are ignored.
    per_question : bool, default False
        Return each question's numbers instead of the means (see Returns).

    Returns
    -------
    dict
        The means, keyed as the script keys them: ``em``, ``f1``, ``prec``, ``recall``,
        ``sp_em``, ``sp_f1``, ``sp_prec``, ``sp_recall``, ``joint_em``, ``joint_f1``,
        ``joint_prec``, ``joint_recall`` (Python floats in [0, 1]). With
        ``per_question=True``: ``"_id"``, the gold ids in gold order, then the same twelve
        keys, each a float64 array in gold order with NaN where the question adds nothing
        (its answer, facts, or for the joint keys either, not predicted); the means are
        their sums, NaN taken as 0, over the number of questions.

    Notes
    -----
    An answer that normalizes to "yes", "no" or "noanswer" scores F1, precision and recall
    0 against any answer that normalizes to something else, on either side. Facts are
    compared as sets: a fact predicted twice counts once, and ``1``, ``1.0`` and ``true``
    are the same sentence id, as Python's equality says. Where the script crashes (no gold
    question, a prediction or a field of the wrong type, a gold field missing where it is
    read), a :class:`~qafast.errors.QafastError` names the question instead.

    Examples
    --------
    >>> gold = [{"_id": "q1", "answer": "yes", "supporting_facts": [["A", 0], ["B", 2]]},
    ...         {"_id": "q2", "answer": "the Eiffel Tower", "supporting_facts": [["C", 1]]}]
    >>> pred = {"answer": {"q1": "yes", "q2": "Eiffel tower in Paris"},
    ...         "sp": {"q1": [["A", 0]], "q2": [["C", 1]]}}
    >>> hotpot(gold, pred)  # doctest: +NORMALIZE_WHITESPACE
    {'em': 0.5, 'f1': 0.8333333333333333, 'prec': 0.75, 'recall': 1.0, 'sp_em': 0.5,
     'sp_f1': 0.8333333333333333, 'sp_prec': 1.0, 'sp_recall': 0.75,
     'joint_em': 0.0, 'joint_f1': 0.6666666666666666, 'joint_prec': 0.75, 'joint_recall': 0.75}
    >>> rows = hotpot(gold, {"answer": {"q1": "no"}, "sp": {}}, per_question=True)
    >>> rows["_id"], rows["f1"], rows["sp_f1"]
    (['q1', 'q2'], array([ 0., nan]), array([nan, nan]))
    """
    import numpy as np

    if not isinstance(per_question, (bool, np.bool_)):
        raise InputTypeError(f"per_question must be a bool, not {type(per_question).__name__}")

    with gc_paused():   # (a collection during json.loads walks every object made so far)
        ev = _evaluate_inputs(gold, predictions)
    if per_question:
        rows: dict = {"_id": ev.ids()}
        rows.update(ev.rows)
        return rows
    return ev.means()


# --------------------------------------------------------------------------------------------
# Input
# --------------------------------------------------------------------------------------------

def read_json(path, what: str, *, skip_bulk: bool = False):
    """The JSON value of the file at ``path`` as the script reads it: UTF-8 text with its
    line ends made ``\n`` (it opens the file in text mode), control characters allowed
    inside strings and each ``NaN`` a new float (as ujson reads them); a FormatError naming
    the file otherwise. ``skip_bulk``: a gold file's "context", "question", "type" and
    "level" of each question may be read as None (they are not scored)."""
    path, raw = _read_bytes(path, what)
    return _parse_json(raw, path, skip_bulk=skip_bulk)


def _read_bytes(path, what: str) -> tuple:
    """``(path as str, the file's bytes)``, read in one go."""
    path = os.fspath(path)
    if isinstance(path, bytes):
        raise InputTypeError(f"the {what} path must be str or os.PathLike[str], not bytes")
    with open(path, "rb") as f:
        return path, f.read()


def _parse_json(raw: bytes, path: str, *, skip_bulk: bool = False):
    """:func:`read_json` of a file's bytes ``raw`` (``path``: for the errors)."""
    import json

    if skip_bulk:
        short = scan_skip(raw, _kernels.JSON_SKIP_HOTPOT)
        if short is not None:
            return json.loads(short, strict=False, parse_constant=float)
    try:
        text = raw.decode("utf-8")
        if "\r" in text:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        # each NaN its own float, as ujson makes them: a fact with a NaN sentence id then
        # equals no other, as in the script (json's one shared NaN would equal itself)
        return json.loads(text, strict=False, parse_constant=float)
    except json.JSONDecodeError as e:
        raise FormatError(f"not valid JSON ({e.msg})", path=path, line=e.lineno) from None
    except UnicodeDecodeError as e:
        raise FormatError(f"not UTF-8 text ({e.reason})", path=path) from None
    except RecursionError:
        raise FormatError("JSON nested too deeply to read", path=path) from None


def _gold_from_bytes(path: str, raw: bytes) -> list:
    """The gold file's questions: the compiled scan of its bytes, which builds each
    question's "_id", "answer" and "supporting_facts" only and skips the rest unread (GIL
    released), or :func:`read_json` where the file is not of the plain form it takes."""
    gold = _kernels.hotpot_scan_gold(raw, _SCANSTRING)
    return gold if gold is not None else _parse_json(raw, path, skip_bulk=True)


def _predictions_from_bytes(path: str, raw: bytes):
    """The prediction file's ``{"answer": ..., "sp": ...}``: the compiled scan of its
    bytes, or :func:`read_json` where the file is not of the plain form it takes."""
    predictions = _kernels.hotpot_scan_predictions(raw, _SCANSTRING)
    return predictions if predictions is not None else _parse_json(raw, path)


class _FileBytes:
    """A file already read: its path and bytes (what _gold_list and _predictions take in
    place of the path, so that a file is read once)."""

    __slots__ = ("path", "raw")

    def __init__(self, path: str, raw: bytes):
        self.path, self.raw = path, raw


def _gold_list(gold) -> list:
    source = None
    if isinstance(gold, _FileBytes):
        source = gold.path
        gold = _gold_from_bytes(gold.path, gold.raw)
    elif isinstance(gold, (str, os.PathLike)):
        source = os.fspath(gold)
        gold = _gold_from_bytes(*_read_bytes(gold, "gold"))
    if type(gold) is not list:
        if isinstance(gold, (str, bytes, Mapping)) or not hasattr(gold, "__iter__"):
            where = f"{source}: " if source is not None else ""
            raise InputTypeError(f"{where}the gold must be a list of questions, not "
                                 f"{type(gold).__name__}")
        gold = list(gold)
    if not gold:
        raise InputError(f"{source + ': ' if source else ''}no gold question to score")
    return gold


def _predictions(predictions) -> dict:
    """``{"answer": dict, "sp": dict}`` of the predictions (a path or a mapping)."""
    source = "<predictions>"
    if isinstance(predictions, _FileBytes):
        source = predictions.path
        predictions = _predictions_from_bytes(predictions.path, predictions.raw)
    elif isinstance(predictions, (str, os.PathLike)):
        source = os.fspath(predictions)
        predictions = _predictions_from_bytes(*_read_bytes(predictions, "predictions"))
    if not isinstance(predictions, Mapping):
        raise InputTypeError(f"{source}: the predictions must be a JSON object with \"answer\" "
                             f"and \"sp\", not {type(predictions).__name__}")
    out = {}
    for key in ("answer", "sp"):
        if key not in predictions:
            raise InputError(f"{source}: the predictions have no {key!r} field "
                             f"(the script needs both \"answer\" and \"sp\")", field=key)
        value = predictions[key]
        if not isinstance(value, Mapping):
            raise InputTypeError(f"{source}: the predictions' {key!r} must be a JSON object "
                                 f"{{id: ...}}, not {type(value).__name__}", field=key)
        out[key] = value if type(value) is dict else dict(value)
    return out


# --------------------------------------------------------------------------------------------
# Evaluation
# --------------------------------------------------------------------------------------------

class _Evaluation:
    """Each question's twelve values (a row of ``values``, NaN where nothing is added), the
    sums of the columns in the script's order, and what was predicted (``state``).
    ``source``: the gold list, or the HotpotSpans the questions were scored from. The three
    are numpy arrays, or, from the files' bytes (_evaluate_spans), a bytearray and buffers of
    float64 (a (questions, 12) memoryview and an array)."""

    __slots__ = ("source", "state", "sums", "values")

    def __init__(self, source, state, values, sums):
        self.source, self.state, self.values, self.sums = source, state, values, sums

    def qid(self, i: int):
        """Question i's id."""
        if isinstance(self.source, list):
            return self.source[i]["_id"]
        return self.source.qid(i)

    def ids(self) -> list:
        """Every question's id, in gold order."""
        if isinstance(self.source, list):
            return [entry["_id"] for entry in self.source]
        return self.source.ids()

    @property
    def rows(self) -> dict:
        import numpy as np

        values = np.asarray(self.values, dtype=np.float64).reshape(len(self.values), 12)
        return {k: np.ascontiguousarray(values[:, j]) for j, k in enumerate(KEYS)}

    def means(self) -> dict:
        n = len(self.values)
        return {k: float(s) / n for k, s in zip(KEYS, self.sums.tolist())}

    def notes(self) -> list:
        """The script's notes, in its order: ``("answer" or "sp", id)`` for each missing
        prediction."""
        if not isinstance(self.source, list):
            return self.source.missing(self.state)
        notes = []
        state = self.state
        for i in _flagged(state, _NOT_BOTH):
            qid = self.qid(i)
            if not state[i] & 1:
                notes.append(("answer", qid))
            if not state[i] & 2:
                notes.append(("sp", qid))
        return notes


def _state_table(wanted) -> bytes:
    """A bytes.translate table: 1 for each state byte ``wanted(state)`` holds for, else 0."""
    return bytes(1 if wanted(s) else 0 for s in range(256))


#: states whose answer or facts were not predicted
_NOT_BOTH = _state_table(lambda s: s & 3 != 3)
#: states with the answer (4) or the facts (8) left to Python
_LEFT = _state_table(lambda s: s & 12)


def _flagged(state, table: bytes) -> list:
    """The positions of the state bytes (a bytearray or a uint8 array) that ``table`` marks
    1: found by bytes.find, as they are few (a question missing a prediction, one the
    kernels leave), where a Python loop over every question took milliseconds."""
    marks = bytes(memoryview(state)).translate(table)
    out = []
    i = marks.find(1)
    while i >= 0:
        out.append(i)
        i = marks.find(1, i + 1)
    return out


def _evaluate_inputs(gold, predictions, sums=None, *,
                     predictions_first: bool = False) -> _Evaluation:
    """The evaluation of the inputs :func:`hotpot` takes: where both are files, scored from
    their bytes (:func:`_evaluate_spans`) unless the scans decline them; else from the
    objects. ``predictions_first``: read the prediction file first (as the script does)."""
    if isinstance(gold, (str, os.PathLike)) and isinstance(predictions, (str, os.PathLike)):
        spans, gold_file, pred_file = _scan_files(gold, predictions, predictions_first)
        ev = None if spans is None else _evaluate_spans(spans, sums)
        if ev is not None:
            return ev
        gold, predictions = gold_file, pred_file
    if predictions_first:
        predictions = _predictions(predictions)
        gold = _gold_list(gold)
    else:
        gold = _gold_list(gold)
        predictions = _predictions(predictions)
    return _evaluate(gold, predictions, sums)


def _scan_files(gold, predictions, predictions_first: bool) -> tuple:
    """``(HotpotSpans or None, gold _FileBytes, prediction _FileBytes)`` of the two files:
    the gold file read and scanned on a second thread while this one reads and scans the
    prediction file (the reads and both scans release the GIL, so a second core takes them
    at once), then the first step of the join (hotpot_spans_rows; _evaluate_spans does the
    rest). A file that cannot be read is named as before: the one read first in the order
    asked, where both cannot."""
    given_gold = None if predictions_first else _FileBytes(*_read_bytes(gold, "gold"))
    made = threading.Event()
    made_spans: list = []

    def scan_gold() -> tuple:
        file = _FileBytes(*_read_bytes(gold, "gold")) if given_gold is None else given_gold
        made.wait()
        if not made_spans:   # (the prediction file could not be read: its error is raised)
            return file, False
        return file, _kernels.hotpot_spans_scan_gold(made_spans[0], file.raw)

    def scan_predictions() -> tuple:
        try:
            file = _FileBytes(*_read_bytes(predictions, "predictions"))
            made_spans.append(_kernels.hotpot_spans_new(file.raw, _SCANSTRING))
        finally:
            made.set()
        return file, _kernels.hotpot_spans_scan_predictions(made_spans[0])

    (gold_file, gold_taken), (pred_file, predictions_taken) = beside(
        scan_gold, scan_predictions, "qafast-hotpot-scan")
    spans = made_spans[0]
    if gold_taken and predictions_taken and _kernels.hotpot_spans_rows(spans):
        return spans, gold_file, pred_file
    return None, gold_file, pred_file


def _evaluate_spans(spans, sums=None) -> _Evaluation | None:
    """The evaluation of the questions of a HotpotSpans (hotpot_spans_rows done): joined and
    scored from the bytes, the questions it leaves (state bits 4 and 8) from their objects;
    None where the join declines the files. Without numpy: the buffers are a bytearray and
    float64 arrays (``sums``: running sums to continue, copied)."""
    n = spans.questions
    state = bytearray(n)
    # (an array repeated: a third of the time of one made from a bytes of zeros)
    values = memoryview(array("d", [0.0]) * (12 * n)).cast("B").cast("d", (n, 12))
    left = _score_on_two_threads(spans, state, values)
    if left is None:
        return None
    if left:
        for i in _flagged(state, _LEFT):
            qid, gold_answer, gold_facts, answer, facts = spans.question(i)
            if state[i] & 4:
                for j, v in enumerate(_answer_scores([answer], [gold_answer])):
                    values[i, j] = float(v[0])
            if state[i] & 8:
                for j, c in enumerate(_sp_counts_python(facts, gold_facts, qid, i)):
                    values[i, 4 + j] = c
    sums = array("d", bytes(8 * 12)) if sums is None else array("d", _floats(sums))
    _kernels.hotpot_finish(state, values, sums)
    return _Evaluation(spans, state, values, sums)


#: fewer questions than this are scored on one thread (a thread's start is not worth it)
_TWO_THREADS_FROM = 20_000


def _join_and_score(spans, state, values, start: int, stop: int) -> int | None:
    """Questions start to stop of ``spans``: their predictions looked up
    (hotpot_spans_lookup), then scored (hotpot_span_scores); how many are left to the
    caller, or None where the join declines them."""
    if not _kernels.hotpot_spans_lookup(spans, start, stop):
        return None
    return _kernels.hotpot_span_scores(spans, state, values, start, stop)


def _score_on_two_threads(spans, state, values) -> int | None:
    """_join_and_score of every question of ``spans``: the second half on a second thread
    while this one takes the first (each row is written by one of them; the sums are added
    afterwards, in order). Returns how many questions are left to the caller, or None where
    the join declines the files."""
    n = spans.questions
    if n < _TWO_THREADS_FROM:
        return _join_and_score(spans, state, values, 0, n)
    half = n // 2
    second, first = beside(lambda: _join_and_score(spans, state, values, half, n),
                           lambda: _join_and_score(spans, state, values, 0, half),
                           "qafast-hotpot-score")
    return None if first is None or second is None else first + second


def _floats(sums) -> list:
    """Twelve running sums (a numpy array or a float64 buffer) as Python floats."""
    return [float(s) for s in sums.tolist()]


def _evaluate(gold: list, predictions: dict, sums=None) -> _Evaluation:
    """The evaluation; ``sums``: running sums to continue (a copy is continued)."""
    import numpy as np

    answers, facts = predictions["answer"], predictions["sp"]
    n = len(gold)
    state = np.zeros(n, dtype=np.uint8)
    values = np.zeros((n, 12))
    if _kernels.hotpot_scores(gold, answers, facts, state, values) >= 0:
        state[:] = 0
        values[:] = 0.0
        _score_general(gold, answers, facts, state, values)
    elif (state >= 4).any():
        _score_left(gold, answers, facts, state, values)
    sums = np.zeros(12) if sums is None else np.array(_floats(sums), dtype=np.float64)
    _kernels.hotpot_finish(state, values, sums)
    return _Evaluation(gold, state, values, sums)


def _score_general(gold: list, answers, facts, state: np.ndarray, values: np.ndarray) -> None:
    """What hotpot_scores gives (before hotpot_finish), for input of any form."""
    import numpy as np

    pred_texts, gold_texts, pred_sp, gold_sp = _walk_checked(gold, answers, facts, state)
    at = np.flatnonzero(state & 1)
    values[at, 0:4] = np.column_stack(_answer_scores(pred_texts, gold_texts))
    at = np.flatnonzero(state & 2)
    values[at, 4:7] = _sp_counts(pred_sp, gold_sp, gold, at)


def _score_left(gold: list, answers, facts, state: np.ndarray, values: np.ndarray) -> None:
    """The answers (state bit 4) and facts (bit 8) that hotpot_scores left to the caller."""
    import numpy as np

    at = np.flatnonzero(state & 4)
    if len(at):
        rows = [gold[i] for i in at.tolist()]
        values[at, 0:4] = np.column_stack(_answer_scores([answers[e["_id"]] for e in rows],
                                                         [e["answer"] for e in rows]))
    for i in np.flatnonzero(state & 8).tolist():
        entry = gold[i]
        values[i, 4:7] = _sp_counts_python(facts[entry["_id"]], entry["supporting_facts"],
                                           entry["_id"], i)


def _walk_checked(gold: list, answers: dict, facts: dict, state: np.ndarray) -> tuple:
    """The walk of ``hotpot_walk`` for any input, naming the first entry that is wrong."""
    pred_texts: list = []
    gold_texts: list = []
    pred_sp: list = []
    gold_sp: list = []
    for i, entry in enumerate(gold):
        if not isinstance(entry, Mapping):
            raise InputTypeError(f"gold entry {i}: a question must be a JSON object, not "
                                 f"{type(entry).__name__}")
        if "_id" not in entry:
            raise InputError(f"gold entry {i} has no \"_id\"", field="_id")
        qid = entry["_id"]
        try:
            has_answer = qid in answers
            has_facts = qid in facts
        except TypeError:
            raise InputTypeError(f"gold entry {i}: its \"_id\" must be a str, not "
                                 f"{type(qid).__name__}", field="_id") from None
        where = f"question {qid!r} (gold entry {i})"
        if has_answer:
            text = answers[qid]
            if not isinstance(text, str):
                raise InputTypeError(f"{where}: the predicted answer must be a str, not "
                                     f"{type(text).__name__}", field="answer")
            if "answer" not in entry:
                raise InputError(f"{where} has a predicted answer but no gold \"answer\"",
                                 query=qid, field="answer")
            ref = entry["answer"]
            if not isinstance(ref, str):
                raise InputTypeError(f"{where}: the gold answer must be a str, not "
                                     f"{type(ref).__name__}", field="answer")
            pred_texts.append(str.__str__(text))
            gold_texts.append(str.__str__(ref))
            state[i] |= 1
        if has_facts:
            if "supporting_facts" not in entry:
                raise InputError(f"{where} has predicted facts but no gold "
                                 "\"supporting_facts\"", query=qid, field="supporting_facts")
            pred_sp.append(facts[qid])
            gold_sp.append(entry["supporting_facts"])
            state[i] |= 2
    return pred_texts, gold_texts, pred_sp, gold_sp


def _answer_scores(pred_texts: list, gold_texts: list) -> tuple:
    """(em, f1, prec, recall) arrays, one value per (prediction, gold) pair."""
    import numpy as np

    from . import answers

    m = len(pred_texts)
    if m == 0:
        return tuple(np.zeros(0) for _ in range(4))
    # the three special answers go through the encoder with the rest, which gives their ids
    pred_sid, ref_off, ref_sid, enc = answers._prepare_encoded(
        pred_texts + list(_SPECIAL), gold_texts + list(_SPECIAL), "v1", "squad", "token",
        bag=True)
    special = np.array([enc.toks[enc.tok_off[s]] for s in pred_sid[m:].tolist()],
                       dtype=np.int32)
    out = tuple(np.empty(m) for _ in range(4))
    # one gold per question: reference r of question r
    refs = np.ascontiguousarray(ref_sid[ref_off[:-1]][:m], dtype=np.int32)
    _kernels.hotpot_answer_scores(np.ascontiguousarray(pred_sid[:m]), refs, enc.tok_off,
                                  enc.toks, enc.key_off, enc.keys, special, *out)
    return out


def _sp_counts(pred_sp: list, gold_sp: list, gold: list, at: np.ndarray) -> np.ndarray:
    """(tp, fp, fn) rows of the facts, one per question with predicted facts (``at``:
    their gold positions, to name a question in an error)."""
    import numpy as np

    counts = np.empty((len(pred_sp), 3), dtype=np.int64)
    if _kernels.hotpot_sp_counts(pred_sp, gold_sp, counts):
        for k in np.flatnonzero(counts[:, 0] < 0).tolist():
            i = int(at[k])
            counts[k] = _sp_counts_python(pred_sp[k], gold_sp[k], gold[i]["_id"], i)
    return counts


def _sp_counts_python(pred, ref, qid, i: int) -> tuple:
    """(tp, fp, fn) with the script's sets of tuples, for facts of any form (``qid``,
    ``i``: the question's id and gold position, to name it in an error)."""
    try:
        pred_set = set(map(tuple, pred))
        ref_set = set(map(tuple, ref))
    except TypeError as e:
        raise InputTypeError(f"question {qid!r} (gold entry {i}): supporting facts must be "
                             f"lists of [title, sentence id] pairs ({e})",
                             field="supporting_facts") from None
    tp = sum(1 for f in pred_set if f in ref_set)
    return tp, len(pred_set) - tp, sum(1 for f in ref_set if f not in pred_set)


# --------------------------------------------------------------------------------------------
# Streaming
# --------------------------------------------------------------------------------------------

class HotpotMetrics:
    """HotpotQA's twelve metrics accumulated over batches of questions.

    ``update(gold, predictions)`` scores a batch (gold entries and their predictions, in the
    forms :func:`hotpot` takes) and keeps only the running sums and the number of questions;
    ``compute()`` gives the dict :func:`hotpot` gives. Each sum is continued question by
    question, as the script's ``+=`` loop adds: batches fed in gold order give the script's
    numbers, bit for bit, however the questions are split.

    Unlike :class:`qafast.AnswerMetrics`, whose sums are exactly rounded so that any split
    and any merge give the same bits, this follows the script's left-to-right sums, and the
    answer metrics are HotpotQA's (precision and recall as well, and the yes/no rule, which
    no ``AnswerMetrics`` option gives). :meth:`merge` adds the other states' sums to this
    one's: the result can then differ from one pass over all the questions in the last bit.

    Examples
    --------
    >>> from qafast.hotpot_eval import HotpotMetrics
    >>> m = HotpotMetrics()
    >>> m.update([{"_id": "q1", "answer": "yes", "supporting_facts": [["A", 0]]}],
    ...          {"answer": {"q1": "Yes."}, "sp": {"q1": [["A", 0], ["B", 1]]}})
    >>> m.update([{"_id": "q2", "answer": "Paris", "supporting_facts": []}],
    ...          {"answer": {"q2": "no"}, "sp": {}})
    >>> result = m.compute()
    >>> result["em"], result["sp_prec"], result["joint_recall"]
    (0.5, 0.25, 0.5)
    """

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Forget every update."""
        import numpy as np

        self._sums = np.zeros(12)
        self._count = 0

    def __repr__(self) -> str:
        return f"HotpotMetrics({self._count} questions)"

    def update(self, gold, predictions) -> None:
        """Score a batch of gold questions against the predictions and add their values
        (the state is unchanged if it raises). An empty batch adds nothing."""

        with gc_paused():
            if type(gold) is list and not gold:
                return
            ev = _evaluate_inputs(gold, predictions, self._sums)
        self._sums, self._count = _sums_array(ev.sums), self._count + len(ev.values)

    def compute(self) -> dict:
        """The twelve means over every question so far, keyed as the script keys them."""
        if self._count == 0:
            raise InputError("no question scored yet")
        return {k: float(s) / self._count for k, s in zip(KEYS, self._sums.tolist())}

    def merge(self, *others: HotpotMetrics) -> HotpotMetrics:
        """Add the sums and counts of ``others`` (unchanged) to this one; returns self."""
        for other in others:
            if not isinstance(other, HotpotMetrics):
                raise InputTypeError(f"can only merge HotpotMetrics, not {type(other).__name__}")
        states = [(o._sums.copy(), o._count) for o in others]
        for sums, count in states:
            self._sums = self._sums + sums
            self._count += count
        return self

    def state_dict(self) -> dict:
        """``{"sums": [twelve floats], "count": int}``, for :meth:`load_state_dict`."""
        return {"sums": self._sums.tolist(), "count": self._count}

    def load_state_dict(self, state: Mapping) -> None:
        """Restore a state that :meth:`state_dict` gave (checked first)."""
        import numpy as np

        if not isinstance(state, Mapping) or set(state) != {"sums", "count"}:
            raise InputError("a HotpotMetrics state is {'sums': [twelve floats], 'count': int}")
        count = state["count"]
        if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 0:
            raise InputError(f"the state's count must be an int >= 0, not {count!r}")
        try:
            sums = np.array(state["sums"], dtype=np.float64)
        except (TypeError, ValueError):
            raise InputError("the state's sums must be twelve numbers") from None
        if sums.shape != (12,) or not np.isfinite(sums).all() or (sums < 0).any() or (
                sums > count).any():
            raise InputError("the state's sums must be twelve numbers in [0, count]")
        self._sums, self._count = sums, int(count)


def _sums_array(sums) -> np.ndarray:
    """An evaluation's twelve sums as the float64 numpy array HotpotMetrics keeps (those
    from the files' bytes are an array.array, whose ``+`` would concatenate)."""
    import numpy as np

    return np.array(_floats(sums), dtype=np.float64)


# --------------------------------------------------------------------------------------------
# The `qafast hotpot` command
# --------------------------------------------------------------------------------------------

def register_cli(subparsers) -> dict:
    """Add ``qafast hotpot`` to the ``qafast`` command; returns ``{"hotpot": handler}``."""
    p = subparsers.add_parser(
        "hotpot", help="score HotpotQA predictions, printing what hotpot_evaluate_v1.py prints",
        description="Score HotpotQA predictions as the official hotpot_evaluate_v1.py does, "
                    "printing the same lines: one per missing answer or supporting-fact "
                    "prediction, then the dict of the twelve means.")
    p.add_argument("pred_file", metavar="PRED",
                   help="predictions JSON: {\"answer\": {id: text}, \"sp\": {id: facts}}")
    p.add_argument("gold_file", metavar="GOLD", help="gold JSON: a list of questions")
    return {"hotpot": _run_cli}


def _run_cli(args) -> int:

    with gc_paused():
        # the predictions read first, as the script reads them
        ev = _evaluate_inputs(args.gold_file, args.pred_file, predictions_first=True)
    lines = [f"missing answer {qid}" if kind == "answer" else f"missing sp fact {qid}"
             for kind, qid in ev.notes()]
    lines.append(str(ev.means()))
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


#: ``qafast hotpot PRED GOLD`` given just its two files: run without argparse (the names are
#: register_cli's, whose parser reads any other command line)
PLAIN_COMMANDS = {"hotpot": (_run_cli, ("pred_file", "gold_file"))}
