"""QuAC, exactly as its official evaluation script (``scorer.py``) computes it.

:func:`quac` returns the dict the script writes with ``--o``: the F1 over the questions whose
gold answers agree enough (``min_f1``), the unfiltered F1, HEQ-Q and HEQ-D (how often the
model's F1 reaches the humans'), yes/no and follow-up accuracy and the F1 on unanswerable
questions, with the script's keys and bit-identical floats. Every string is normalized once
by the shared SQuAD encoder of :mod:`qafast.answers`; the leave-one-out F1s are computed in a
compiled kernel. The plain-Python specification is :mod:`qafast.reference.quac`; its
docstring lists every rule reproduced here. ``qafast quac --val_file V --model_output M`` is
the command-line form, printing what the script prints.
"""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Mapping

import numpy as np

from . import _kernels
from ._gc import gc_paused
from .errors import FormatError, InputError, InputTypeError

__all__ = ["KEYS", "KINDS", "QuacMetrics", "quac"]

#: The script's keys, in its order.
KEYS = ("unfiltered_f1", "f1", "HEQ", "DHEQ", "yes/no", "followup", "unanswerable_acc")

#: The overlap kinds, by code (``"NO ANSWER"``: the question has no prediction).
KINDS = ("NO ANSWER", "Exact match", "Partial overlap", "No overlap", "Span indexing error")

_CANNOT = "CANNOTANSWER"
_PREDICTED, _UNANSWERABLE, _PRED_CANNOT = 1, 2, 4
# Python's sum() of floats is compensated (Neumaier) from 3.12 on; the script's per-question
# leave-one-out mean uses it, so the kernel adds as the running Python adds
_COMPENSATED = sys.version_info >= (3, 12)


def quac(val, predictions, *, min_f1: float = 0.4, per_question: bool = False) -> dict:
    """Score QuAC predictions as the official ``scorer.py`` does.

    Parameters
    ----------
    val : str, os.PathLike, mapping or list
        The gold file (such as ``val_v0.2.json``), its loaded object ``{"data": [...]}``, or
        the ``"data"`` list itself: articles with ``"paragraphs"`` (the dialogs), each with
        ``"id"``, ``"context"`` and ``"qas"`` (questions with ``"id"``, ``"answers"``,
        ``"yesno"`` and ``"followup"``).
    predictions : str, os.PathLike, mapping or list
        The model output file (one JSON object per line with ``"qid"``, ``"best_span_str"``,
        ``"yesno"`` and ``"followup"`` lists), a list of such objects, or a mapping
        ``{question id: (span, yesno, followup)}`` (or ``{question id: span}``, yes/no and
        follow-up then ``None``). As in the script, every question of a line belongs to the
        dialog named by the line's first question id (the part before ``"_q#"``); with a
        mapping, each question id names its own dialog.
    min_f1 : float, default 0.4
        Questions whose golds agree less than this (their leave-one-out human F1) are left
        out of everything but the unfiltered F1, as the script's ``--min_f1``.
    per_question : bool, default False
        Return each question's numbers instead (see Returns).

    Returns
    -------
    dict
        ``unfiltered_f1``, ``f1``, ``HEQ``, ``DHEQ``, ``yes/no``, ``followup`` and
        ``unanswerable_acc``, percentages as the script computes them; NaN where the script
        divides by zero (no unanswerable question counted, for instance). With
        ``per_question=True``: ``"dialog"`` and ``"id"`` (lists, gold order), ``"human_f1"``
        and ``"f1"`` (float64 arrays in [0, 1], ``f1`` NaN without prediction), ``"kind"``
        (the overlap kind of each question, a list of str), and boolean arrays ``"kept"``
        (counted beyond the unfiltered F1), ``"heq"``, ``"yesno"``, ``"followup"`` (False
        where not kept) and ``"unanswerable"``.

    Notes
    -----
    A question without prediction scores 0 and fails its dialog whatever its agreement. The
    F1 mean adds the questions kind by kind (exact match, partial overlap, ...), as the
    script does, which can change its last bit. Where the script crashes on its input (a
    missing field, a prediction that is not a string, a division by zero), qafast raises a
    :class:`~qafast.errors.QafastError` naming the question, or gives NaN for the division.

    Examples
    --------
    >>> val = {"data": [{"paragraphs": [{
    ...     "id": "C_1", "context": "He wrote two books in 1968. CANNOTANSWER",
    ...     "qas": [{"id": "C_1_q#0", "yesno": "y", "followup": "m",
    ...              "answers": [{"text": "He wrote two books"}, {"text": "two books"},
    ...                          {"text": "two books in 1968"}]},
    ...             {"id": "C_1_q#1", "yesno": "x", "followup": "n",
    ...              "answers": [{"text": "CANNOTANSWER"}, {"text": "CANNOTANSWER"}]}]}]}]}
    >>> preds = {"C_1_q#0": ("two books in 1968", "y", "m"), "C_1_q#1": ("CANNOTANSWER", "x", "y")}
    >>> quac(val, preds)  # doctest: +NORMALIZE_WHITESPACE
    {'unfiltered_f1': 94.44444444444444, 'f1': 94.44444444444444, 'HEQ': 100.0, 'DHEQ': 100.0,
     'yes/no': 100.0, 'followup': 50.0, 'unanswerable_acc': 100.0}
    >>> rows = quac(val, preds, per_question=True)
    >>> rows["human_f1"], rows["f1"]
    (array([0.66666667, 1.        ]), array([0.88888889, 1.        ]))
    >>> rows["kind"]
    ['Exact match', 'Exact match']
    """
    if not isinstance(per_question, (bool, np.bool_)):
        raise InputTypeError(f"per_question must be a bool, not {type(per_question).__name__}")
    min_f1 = _min_f1(min_f1)
    with gc_paused():
        ev = _evaluate(_val_data(val), _prediction_map(predictions), min_f1)
    return ev.rows() if per_question else ev.metrics()


def _min_f1(value) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
        raise InputTypeError(f"min_f1 must be a number, not {type(value).__name__}")
    return float(value)


# --------------------------------------------------------------------------------------------
# Input
# --------------------------------------------------------------------------------------------

def _read_text(path, what: str) -> str:
    path = os.fspath(path)
    if isinstance(path, bytes):
        raise InputTypeError(f"the {what} path must be str or os.PathLike[str], not bytes")
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise InputError(f"cannot read the {what} file {path}: {e.strerror}", path=path) from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise FormatError(f"not UTF-8 text ({e.reason})", path=path) from None


def _val_data(val) -> list:
    """The gold's ``"data"`` list."""
    source = "the gold"
    if isinstance(val, (str, os.PathLike)):
        source = os.fspath(val)
        text = _read_text(val, "gold")
        try:
            val = json.loads(text)
        except json.JSONDecodeError as e:
            raise FormatError(f"not valid JSON ({e.msg})", path=source, line=e.lineno) from None
        except RecursionError:
            raise FormatError("JSON nested too deeply to read", path=source) from None
    if isinstance(val, Mapping):
        if "data" not in val:
            raise InputError(f"{source}: no \"data\" field", field="data")
        val = val["data"]
    if not isinstance(val, list):
        raise InputTypeError(f"{source}: the gold \"data\" must be a list of articles, not "
                             f"{type(val).__name__}", field="data")
    return val


def _record_into(out: dict, record, where: str) -> None:
    """File one predictions record (a line of the model output) as the script files it."""
    if not isinstance(record, Mapping):
        raise InputTypeError(f"{where}: a prediction record must be a JSON object, not "
                             f"{type(record).__name__}")
    fields = []
    for key in ("qid", "best_span_str", "yesno", "followup"):
        if key not in record:
            raise InputError(f"{where}: no {key!r} field", field=key)
        value = record[key]
        if not isinstance(value, list):
            raise InputTypeError(f"{where}: {key!r} must be a list, not "
                                 f"{type(value).__name__}", field=key)
        fields.append(value)
    qids = fields[0]
    if not qids:
        raise InputError(f"{where}: 'qid' is empty (the script takes the dialog from the "
                         "first question id)", field="qid")
    if not isinstance(qids[0], str):
        raise InputTypeError(f"{where}: the first question id must be a str, not "
                             f"{type(qids[0]).__name__}", field="qid")
    dialog = out.setdefault(qids[0].split("_q#")[0], {})
    for qid, span, yesno, followup in zip(*fields):
        try:
            dialog[qid] = (span, yesno, followup)
        except TypeError:
            raise InputTypeError(f"{where}: a question id must be a str, not "
                                 f"{type(qid).__name__}", field="qid") from None


def _prediction_map(predictions) -> dict:
    """``{dialog id: {question id: (span, yesno, followup)}}``."""
    out: dict = {}
    if isinstance(predictions, (str, os.PathLike)):
        source = os.fspath(predictions)
        text = _read_text(predictions, "model output")
        if "\r" in text:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        for number, line in enumerate(text.split("\n"), 1):
            line = line.strip()
            if not line:
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as e:
                raise FormatError(f"not a JSON object ({e.msg})", path=source,
                                  line=number) from None
            except RecursionError:
                raise FormatError("JSON nested too deeply to read", path=source,
                                  line=number) from None
            _record_into(out, record, f"{source}, line {number}")
        return out
    if isinstance(predictions, Mapping):
        for qid, value in predictions.items():
            if not isinstance(qid, str):
                raise InputTypeError(f"a question id must be a str, not {type(qid).__name__}")
            if isinstance(value, (tuple, list)):
                if len(value) != 3:
                    raise InputError(f"question {qid!r}: a prediction is a span or (span, "
                                     f"yesno, followup), not {len(value)} values", query=qid)
                value = tuple(value)
            else:
                value = (value, None, None)
            out.setdefault(qid.split("_q#")[0], {})[qid] = value
        return out
    if isinstance(predictions, (bytes, bytearray)) or not hasattr(predictions, "__iter__"):
        raise InputTypeError("predictions must be a path, a list of records or a mapping, not "
                             f"{type(predictions).__name__}")
    for i, record in enumerate(predictions):
        _record_into(out, record, f"prediction record {i}")
    return out


# --------------------------------------------------------------------------------------------
# Evaluation
# --------------------------------------------------------------------------------------------

def _field(obj, key: str, where: str, kind=None):
    if not isinstance(obj, Mapping):
        raise InputTypeError(f"{where}: must be a JSON object, not {type(obj).__name__}")
    if key not in obj:
        raise InputError(f"{where} has no {key!r}", field=key)
    value = obj[key]
    if kind is not None and not isinstance(value, kind):
        raise InputTypeError(f"{where}: {key!r} must be a {kind.__name__}, not "
                             f"{type(value).__name__}", field=key)
    return value


class _Evaluation:
    """Each question's values, in gold order, and its dialog."""

    __slots__ = ("dialog_of", "dialogs", "flags", "followup", "golds", "human", "kinds",
                 "min_f1", "model", "n_dialogs", "qids", "spans", "yesno")
    dialogs: list
    qids: list
    dialog_of: np.ndarray
    n_dialogs: int
    flags: np.ndarray
    human: np.ndarray
    model: np.ndarray
    kinds: np.ndarray
    golds: list
    spans: list
    yesno: np.ndarray
    followup: np.ndarray
    min_f1: float

    def rows(self) -> dict:
        kept, _ = self._kept()
        predicted = (self.flags & _PREDICTED) != 0
        model = np.where(predicted, self.model, np.nan)
        scored = kept & predicted
        return {"dialog": [self.dialogs[d] for d in self.dialog_of.tolist()],
                "id": list(self.qids), "human_f1": self.human.copy(), "f1": model,
                "kind": [KINDS[k] for k in self.kinds.tolist()], "kept": kept,
                "heq": scored & (self.model >= self.human),
                "yesno": scored & self.yesno, "followup": scored & self.followup,
                "unanswerable": (self.flags & _UNANSWERABLE) != 0}

    def _kept(self):
        min_f1 = self.min_f1
        predicted = (self.flags & _PREDICTED) != 0
        agree = ~(self.human < min_f1)
        kept = ~predicted | agree
        human_counted = np.where(predicted, agree, self.human >= min_f1)
        return kept, human_counted

    def numbers(self) -> dict:
        """Everything the script prints and returns."""
        predicted = (self.flags & _PREDICTED) != 0
        kept, human_counted = self._kept()
        scored = kept & predicted
        values = np.where(predicted, self.model, 0.0)
        kinds = self.kinds[kept]
        order = [k for k in dict.fromkeys(kinds.tolist())]
        kept_values = values[kept]
        by_kind = {k: kept_values[kinds == k].tolist() for k in order}
        all_kept = [v for k in order for v in by_kind[k]]
        unanswerable = kept & ((self.flags & _UNANSWERABLE) != 0)
        passed = scored & (self.model >= self.human)
        failed = ~predicted | (scored & ~(self.model >= self.human))
        dialogs_failed = np.zeros(self.n_dialogs, dtype=bool)
        dialogs_failed[self.dialog_of[failed]] = True
        n_q = int(kept.sum())
        return {
            "unfiltered": _ratio(values.tolist()), "n_unfiltered": len(values),
            "f1": _ratio(all_kept), "by_kind": by_kind,
            "heq": int(passed.sum()), "questions": n_q,
            "dheq": int(self.n_dialogs - dialogs_failed.sum()), "dialogs": self.n_dialogs,
            "yesno": _ratio([bool(b) for b in (scored & self.yesno)[kept].tolist()]),
            "followup": _ratio([bool(b) for b in (scored & self.followup)[kept].tolist()]),
            "unanswerable": _ratio(values[unanswerable].tolist()),
            "n_unanswerable": int(unanswerable.sum()),
            "human": _ratio(self.human[human_counted].tolist()),
        }

    def metrics(self) -> dict:
        return _metrics(self.numbers())


def _ratio(values: list) -> float:
    # Python's own sum, as the script adds (plainly, or compensated from Python 3.12)
    return 100.0 * sum(values) / len(values) if values else math.nan


def _metrics(nb: dict) -> dict:
    return {"unfiltered_f1": nb["unfiltered"], "f1": nb["f1"],
            "HEQ": 100.0 * nb["heq"] / nb["questions"] if nb["questions"] else math.nan,
            "DHEQ": 100.0 * nb["dheq"] / nb["dialogs"] if nb["dialogs"] else math.nan,
            "yes/no": nb["yesno"], "followup": nb["followup"],
            "unanswerable_acc": nb["unanswerable"]}


def _evaluate(data: list, preds: dict, min_f1: float) -> _Evaluation:
    walked: tuple = ([], [], [], [], [], [], [], {})
    if not _kernels.quac_walk(data, preds, *walked):
        walked = ([], [], [], [], [], [], [], {})
        _walk(data, preds, *walked)
    dialogs, dialog_of, qids, gold_lists, spans, flags, entries, contexts = walked
    from . import answers

    n = len(qids)
    ev = _Evaluation()
    ev.dialogs, ev.qids, ev.n_dialogs = dialogs, qids, len(dialogs)
    ev.dialog_of = np.array(dialog_of, dtype=np.int64)
    ev.flags = np.array(flags, dtype=np.uint8)
    ev.golds, ev.spans = gold_lists, spans
    ev.human = np.empty(n)
    ev.model = np.empty(n)
    best = np.empty(n, dtype=np.int32)
    exact = np.empty(n, dtype=np.uint8)
    if n:
        pred_sid, ref_off, ref_sid, enc = answers._prepare_encoded(
            spans, gold_lists, "v1", "squad", "token", bag=True)
        _kernels.quac_scores(pred_sid, ref_off, ref_sid, enc.tok_off, enc.toks, enc.key_off,
                             enc.keys, ev.flags, _COMPENSATED, ev.human, ev.model, best, exact)
    kinds = np.zeros(n, dtype=np.uint8)
    at: list = []
    ctx_list: list = []
    pred_list: list = []
    gold_list: list = []
    best_l = best.tolist()
    for i, qa, pred, where in entries:
        flag = flags[i]
        if flag & _UNANSWERABLE:
            kinds[i] = 1 if flag & _PRED_CANNOT else 3
            continue
        ctx = contexts[dialog_of[i]]
        if type(ctx) is not str:
            if not isinstance(ctx, str):
                raise InputTypeError(f"{_where(ev, i, where)}: the dialog's \"context\" must be "
                                     f"a str, not {type(ctx).__name__}", field="context")
            ctx = str.__str__(ctx)
        at.append(i)
        ctx_list.append(ctx)
        pred_list.append(spans[i])
        gold_list.append(gold_lists[i][best_l[i]])
    if at:
        idx = np.array(at, dtype=np.int64)
        found = np.empty(len(at), dtype=np.uint8)
        _kernels.quac_kinds(ctx_list, pred_list, gold_list, np.ascontiguousarray(exact[idx]),
                            found)
        kinds[idx] = found
    ev.kinds = kinds
    # yes/no and follow-up, read only where the script reads them (questions kept)
    human_l = ev.human.tolist()
    yes_at: list = []
    follow_at: list = []
    for i, qa, pred, where in entries:
        if not human_l[i] < min_f1:
            try:
                if pred[1] == qa["yesno"]:
                    yes_at.append(i)
                if pred[2] == qa["followup"]:
                    follow_at.append(i)
            except (KeyError, TypeError):
                for key in ("yesno", "followup"):
                    _field(qa, key, _where(ev, i, where))
                raise
    yesno = np.zeros(n, dtype=bool)
    followup = np.zeros(n, dtype=bool)
    yesno[yes_at] = True
    followup[follow_at] = True
    ev.yesno, ev.followup, ev.min_f1 = yesno, followup, min_f1
    return ev



# --------------------------------------------------------------------------------------------
# Streaming
# --------------------------------------------------------------------------------------------

class QuacMetrics:
    """QuAC's metrics over dialogs fed in batches.

    ``update(val, predictions)`` scores a batch of whole dialogs (``val`` and
    ``predictions`` in the forms :func:`quac` takes) and keeps each question's values;
    ``compute()`` gives the dict :func:`quac` gives for all the dialogs in the order they
    were fed, bit for bit.

    Unlike :class:`qafast.AnswerMetrics`, which keeps exactly rounded running sums that any
    split or merge leaves unchanged, this keeps a few numbers per question: the script adds
    the F1s grouped by overlap kind and with Python's ``sum``, so its last bit depends on the
    order of every value, and HEQ-D needs whole dialogs (a dialog split across two updates
    counts as two).

    Examples
    --------
    >>> from qafast.quac_eval import QuacMetrics
    >>> m = QuacMetrics()
    >>> m.update([{"paragraphs": [{"id": "D", "context": "a red car", "qas": [
    ...     {"id": "D_q#0", "answers": [{"text": "red car"}], "yesno": "x", "followup": "n"}]}]}],
    ...     {"D_q#0": ("car", "x", "n")})
    >>> m.compute()["f1"], len(m)
    (66.66666666666666, 1)
    """

    def __init__(self, *, min_f1: float = 0.4) -> None:
        self.min_f1 = _min_f1(min_f1)
        self.reset()

    def reset(self) -> None:
        """Forget every update."""
        self._parts: list = []

    def __len__(self) -> int:
        return sum(len(e.qids) for e in self._parts)

    def __repr__(self) -> str:
        return f"QuacMetrics({len(self)} questions)"

    def update(self, val, predictions) -> None:
        """Score a batch of dialogs (the state is unchanged if it raises)."""
        with gc_paused():
            ev = _evaluate(_val_data(val), _prediction_map(predictions), self.min_f1)
        self._parts.append(ev)

    def merge(self, *others: QuacMetrics) -> QuacMetrics:
        """Append the questions of ``others`` (unchanged) after this one's; returns self."""
        for other in others:
            if not isinstance(other, QuacMetrics):
                raise InputTypeError(f"can only merge QuacMetrics, not {type(other).__name__}")
            if other.min_f1 != self.min_f1 and not (math.isnan(other.min_f1)
                                                     and math.isnan(self.min_f1)):
                raise InputError("can only merge QuacMetrics with the same min_f1")
        for other in others:
            self._parts.extend(other._parts)
        return self

    def compute(self) -> dict:
        """The seven numbers over every dialog so far, keyed as the script keys them."""
        if not self._parts:
            raise InputError("no dialog scored yet")
        return _concat(self._parts, self.min_f1).metrics()

    def state_dict(self) -> dict:
        """The questions kept so far as plain lists and numbers, for :meth:`load_state_dict`
        (``torch.save`` and ``torch.load(weights_only=True)`` take it as is): ``format``,
        ``version``, ``min_f1``, ``dialogs`` (ids), and per question ``ids``, ``dialog``
        (position in ``dialogs``), ``flags``, ``human_f1``, ``f1``, ``kind``, ``yesno`` and
        ``followup``."""
        if not self._parts:
            ev = None
        else:
            ev = _concat(self._parts, self.min_f1)
        if ev is None:
            rows: dict = {k: [] for k in ("ids", "dialog", "flags", "human_f1", "f1", "kind",
                                          "yesno", "followup")}
            dialogs: list = []
        else:
            predicted = (ev.flags & _PREDICTED) != 0
            dialogs = list(ev.dialogs)
            rows = {"ids": list(ev.qids), "dialog": ev.dialog_of.tolist(),
                    "flags": ev.flags.tolist(), "human_f1": ev.human.tolist(),
                    "f1": np.where(predicted, ev.model, 0.0).tolist(),
                    "kind": ev.kinds.tolist(), "yesno": ev.yesno.tolist(),
                    "followup": ev.followup.tolist()}
        return {"format": "qafast.QuacMetrics", "version": 1, "min_f1": self.min_f1,
                "dialogs": dialogs, **rows}

    def load_state_dict(self, state: Mapping) -> None:
        """Replace the state by one from :meth:`state_dict` (checked first; the state is
        unchanged if it raises)."""
        ev = _state_evaluation(state, self.min_f1)
        self.reset()
        if ev is not None:
            self._parts.append(ev)


_STATE_ROWS = ("ids", "dialog", "flags", "human_f1", "f1", "kind", "yesno", "followup")


def _state_evaluation(state, min_f1: float) -> _Evaluation | None:
    """The _Evaluation a QuacMetrics state holds (None when it holds no question)."""
    if not isinstance(state, Mapping) or state.get("format") != "qafast.QuacMetrics":
        raise InputError("not a QuacMetrics state (its 'format' must be 'qafast.QuacMetrics')")
    if state.get("version") != 1:
        raise InputError(f"QuacMetrics state version {state.get('version')!r}, expected 1")
    missing = [k for k in ("min_f1", "dialogs", *_STATE_ROWS) if k not in state]
    if missing:
        raise InputError(f"a QuacMetrics state lacks {', '.join(missing)}")
    got = state["min_f1"]
    if isinstance(got, bool) or not isinstance(got, (int, float, np.floating, np.integer)) or (
            got != min_f1 and not (math.isnan(got) and math.isnan(min_f1))):
        raise InputError(f"the state's min_f1 is {got!r}, this QuacMetrics' is {min_f1!r}")
    dialogs, ids = state["dialogs"], state["ids"]
    for key, names in (("dialogs", dialogs), ("ids", ids)):
        if not isinstance(names, list) or not all(type(x) is str for x in names):
            raise InputError(f"the state's {key} must be a list of str")
    n = len(ids)
    arrays: dict = {}
    for key, dtype in (("dialog", np.int64), ("flags", np.int64), ("human_f1", np.float64),
                       ("f1", np.float64), ("kind", np.int64), ("yesno", np.bool_),
                       ("followup", np.bool_)):
        value = state[key]
        ok = isinstance(value, list) and len(value) == n and all(
            not isinstance(x, bool) if dtype is not np.bool_ else isinstance(x, bool)
            for x in value)
        try:
            a = np.array(value, dtype=dtype) if ok else None
        except (TypeError, ValueError, OverflowError):
            a = None
        if a is None or a.shape != (n,):
            what = "bools" if dtype is np.bool_ else "numbers"
            raise InputError(f"the state's {key} must be a list of {n} {what}, one per id")
        arrays[key] = a
    if ((arrays["dialog"] < 0) | (arrays["dialog"] >= len(dialogs))).any() or (
            n and len(dialogs) and (np.diff(arrays["dialog"]) < 0).any()):
        raise InputError("the state's dialog values must be positions in its dialogs, "
                         "in order")
    if ((arrays["flags"] < 0) | (arrays["flags"] > 7)).any():
        raise InputError("the state's flags must be in 0..7")
    if ((arrays["kind"] < 0) | (arrays["kind"] >= len(KINDS))).any():
        raise InputError(f"the state's kind values must be in 0..{len(KINDS) - 1}")
    for key in ("human_f1", "f1"):
        a = arrays[key]
        if ((a < 0) | (a > 1)).any() or (key == "f1" and not np.isfinite(a).all()):
            raise InputError(f"the state's {key} values must be in [0, 1]")
    if not n and not dialogs:
        return None
    ev = _Evaluation()
    ev.dialogs, ev.qids, ev.n_dialogs = list(dialogs), list(ids), len(dialogs)
    ev.dialog_of = arrays["dialog"]
    ev.flags = arrays["flags"].astype(np.uint8)
    ev.human, ev.model = arrays["human_f1"], arrays["f1"]
    ev.kinds = arrays["kind"].astype(np.uint8)
    ev.yesno, ev.followup = arrays["yesno"], arrays["followup"]
    ev.golds, ev.spans = [None] * n, [None] * n
    ev.min_f1 = min_f1
    return ev


def _concat(parts: list, min_f1: float) -> _Evaluation:
    if len(parts) == 1:
        return parts[0]
    ev = _Evaluation()
    ev.dialogs = [d for e in parts for d in e.dialogs]
    ev.qids = [q for e in parts for q in e.qids]
    starts = np.cumsum([0] + [e.n_dialogs for e in parts[:-1]])
    ev.dialog_of = np.concatenate([e.dialog_of + s for e, s in zip(parts, starts)])
    ev.n_dialogs = len(ev.dialogs)
    for name in ("flags", "human", "model", "kinds", "yesno", "followup"):
        setattr(ev, name, np.concatenate([getattr(e, name) for e in parts]))
    ev.golds = [g for e in parts for g in e.golds]
    ev.spans = [s for e in parts for s in e.spans]
    ev.min_f1 = min_f1
    return ev

# --------------------------------------------------------------------------------------------
# The `qafast quac` command
# --------------------------------------------------------------------------------------------

def register_cli(subparsers) -> dict:
    """Add ``qafast quac`` to the ``qafast`` command; returns ``{"quac": handler}``."""
    p = subparsers.add_parser(
        "quac", help="score QuAC predictions, printing what the official scorer.py prints",
        description="Score QuAC predictions as the official scorer.py does, printing the same "
                    "lines: one per question without prediction, then F1, yes/no and "
                    "follow-up accuracy, the unfiltered and unanswerable F1, human F1, HEQ-Q "
                    "and HEQ-D.")
    p.add_argument("--val_file", type=str, required=True, help="the gold file (QuAC JSON)")
    p.add_argument("--model_output", type=str, required=True,
                   help="the predictions, one JSON object per line")
    p.add_argument("--o", type=str, required=False, help="also write the scores as JSON here")
    p.add_argument("--min_f1", type=float, default=0.4,
                   help="leave out questions whose golds agree less (default: %(default)s)")
    p.add_argument("--verbose", action="store_true",
                   help="print each question's prediction, golds and F1, and the overlap kinds")
    return {"quac": _run_cli}


def _run_cli(args) -> int:
    with gc_paused():
        data = _val_data(args.val_file)      # the gold is read first, as the script reads it
        ev = _evaluate(data, _prediction_map(args.model_output), args.min_f1)
    nb = ev.numbers()
    lines = _question_lines(ev, args.verbose)
    if args.verbose:
        lines.append("=" * 23)
        lines += _kind_lines(ev, nb)
    lines += _summary_lines(nb)
    sys.stdout.write("".join(line + "\n" for line in lines))
    if args.o:
        with open(args.o, "w") as fout:
            json.dump(_metrics(nb), fout)
    return 0


def _question_lines(ev: _Evaluation, verbose: bool) -> list:
    """The lines printed question by question: each missing prediction, and with
    ``verbose`` each kept question's prediction, golds and F1."""
    lines: list = []
    flags = ev.flags.tolist()
    if not verbose:
        for i in np.flatnonzero((ev.flags & _PREDICTED) == 0).tolist():
            lines.append(f"{ev.dialogs[ev.dialog_of[i]]} {ev.qids[i]} "
                         "no prediction for this dialogue id")
        return lines
    human, model = ev.human.tolist(), ev.model.tolist()
    dialog_of = ev.dialog_of.tolist()
    for i, flag in enumerate(flags):
        if not flag & _PREDICTED:
            lines.append(f"{ev.dialogs[dialog_of[i]]} {ev.qids[i]} "
                         "no prediction for this dialogue id")
        elif not human[i] < ev.min_f1:
            golds = ev.golds[i]
            value = model[i]
            # one answerable gold sharing no token: the script's F1 is the int 0
            shown = "0" if (value == 0.0 and len(golds) == 1 and not flag & _UNANSWERABLE) \
                else repr(value)
            lines += ["-" * 20, ev.spans[i], repr(golds), shown, "-" * 20]
    return lines


def _kind_lines(ev: _Evaluation, nb: dict) -> list:
    by_kind = {k: v for k, v in nb["by_kind"].items() if k != 0}
    # only predicted questions count in the kinds the script lists (most common first,
    # ties in the order they first occur)
    predicted = (ev.flags & _PREDICTED) != 0
    kept, _ = ev._kept()
    kinds = ev.kinds[kept & predicted].tolist()
    counts: dict = {}
    for k in kinds:
        counts[k] = counts.get(k, 0) + 1
    total = sum(counts.values())
    lines = ["Overlap Stats"]
    for k in sorted(counts, key=lambda k: -counts[k]):
        values = by_kind[k]
        lines.append(f"{KINDS[k]}: {counts[k]:d} / {total:d}, {counts[k] * 100. / total:.1f}%, "
                     f"F1: {sum(values) * 100. / len(values):.1f}")
    return lines


def _summary_lines(nb: dict) -> list:
    heq = 100.0 * nb["heq"] / nb["questions"] if nb["questions"] else math.nan
    dheq = 100.0 * nb["dheq"] / nb["dialogs"] if nb["dialogs"] else math.nan
    return ["=" * 23,
            f"Overall F1: {nb['f1']:.1f}",
            f"Yes/No Accuracy : {nb['yesno']:.1f}",
            f"Followup Accuracy : {nb['followup']:.1f}",
            f"Unfiltered F1 ({nb['n_unfiltered']:d} questions): {nb['unfiltered']:.1f}",
            # the script's doubled %% is printed as it is
            (f"Accuracy On Unanswerable Questions: {nb['unanswerable']:.1f} %% "
             f"({nb['n_unanswerable']:d} questions)"),
            f"Human F1: {nb['human']:.1f}",
            f"Model F1 >= Human F1 (Questions): {nb['heq']:d} / {nb['questions']:d}, {heq:.1f}%",
            f"Model F1 >= Human F1 (Dialogs): {nb['dheq']:d} / {nb['dialogs']:d}, {dheq:.1f}%",
            "=" * 23]


def _where(ev: _Evaluation, i: int, where) -> str:
    return where or f"question {ev.qids[i]!r} of dialog {ev.dialogs[ev.dialog_of[i]]!r}"


def _walk(data: list, preds: dict, dialogs: list, dialog_of: list, qids: list,
          gold_lists: list, spans: list, flags: list, entries: list, contexts: dict) -> None:
    """The walk of the gold (quac_walk's, for input of any form), naming what is wrong."""
    for a, article in enumerate(data):
        where_a = f"gold article {a}"
        for par in _field(article, "paragraphs", where_a, list):
            did = _field(par, "id", f"a dialog of {where_a}")
            where_d = f"dialog {did!r}"
            qas = _field(par, "qas", where_d, list)
            try:
                dialog_preds = preds.get(did)
            except TypeError:
                raise InputTypeError(f"{where_d}: a dialog id must be hashable") from None
            d = len(dialogs)
            dialogs.append(did)
            for qa in qas:
                qid = _field(qa, "id", f"a question of {where_d}")
                where = f"question {qid!r} of {where_d}"
                answers = _field(qa, "answers", where, list)
                texts = []
                for ans in answers:
                    text = _field(ans, "text", f"an answer of {where}")
                    if not isinstance(text, str):
                        raise InputTypeError(f"{where}: an answer's \"text\" must be a str, not "
                                             f"{type(text).__name__}", field="text")
                    texts.append(text)
                cannot = texts.count(_CANNOT)
                if cannot >= len(texts) - cannot:
                    golds = [_CANNOT]
                    flag = _UNANSWERABLE
                else:
                    golds = [t for t in texts if t != _CANNOT] if cannot else texts
                    flag = 0
                try:
                    pred = dialog_preds.get(qid) if dialog_preds is not None else None
                except TypeError:
                    raise InputTypeError(f"{where}: a question id must be hashable") from None
                span = ""
                if pred is not None:
                    span = pred[0]
                    if not isinstance(span, str):
                        raise InputTypeError(f"{where}: the predicted span must be a str, not "
                                             f"{type(span).__name__}", field="best_span_str")
                    flag |= _PREDICTED | (_PRED_CANNOT if span == _CANNOT else 0)
                    if d not in contexts:
                        contexts[d] = _field(par, "context", where_d)
                    entries.append((len(qids), qa, pred, where))
                dialog_of.append(d)
                qids.append(qid)
                gold_lists.append(golds)
                spans.append(span)
                flags.append(flag)
