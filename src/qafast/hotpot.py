"""HotpotQA, exactly as its official evaluation script (``hotpot_evaluate_v1.py``) computes it.

:func:`hotpot` returns the dict the script prints: answer exact match, F1, precision and
recall (SQuAD's normalization, with HotpotQA's yes/no rule), the same four over the supporting
facts, and the joint four, with the script's keys and bit-identical floats. Answers are
scored with the compiled kernels of :mod:`qafast.answers` (one normalization per string);
supporting facts are counted in a kernel when they are ``[title, sentence id]`` pairs, and
with Python's own sets otherwise. The plain-Python specification is
:mod:`qafast.reference.hotpot`; its docstring lists every rule reproduced here.
``qafast hotpot PRED GOLD`` is the command-line form, printing what the script prints.

The module itself can be called: ``qafast.hotpot(...)`` is :func:`hotpot` whether or not
``qafast.hotpot`` has been imported as a module.
"""

from __future__ import annotations

import json
import os
import sys
import types
from collections.abc import Mapping

import numpy as np

from . import _kernels
from .errors import FormatError, InputError, InputTypeError
from .reference.hotpot import KEYS

__all__ = ["KEYS", "hotpot", "read_json"]

_ANSWER_KEYS = KEYS[0:4]
_SP_KEYS = KEYS[4:8]
_JOINT_KEYS = KEYS[8:12]
_SPECIAL = ("yes", "no", "noanswer")


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
    if not isinstance(per_question, (bool, np.bool_)):
        raise InputTypeError(f"per_question must be a bool, not {type(per_question).__name__}")
    gold = _gold_list(gold)
    predictions = _predictions(predictions)
    from .squad_eval import _gc_paused

    with _gc_paused():
        ev = _evaluate(gold, predictions)
    if per_question:
        out: dict = {"_id": [entry["_id"] for entry in gold]}
        out.update(ev.rows)
        return out
    return ev.means()


# --------------------------------------------------------------------------------------------
# Input
# --------------------------------------------------------------------------------------------

def read_json(path, what: str):
    """The JSON value of the file at ``path`` as the script reads it: UTF-8 text with its
    line ends made ``\n`` (it opens the file in text mode), control characters allowed
    inside strings and each ``NaN`` a new float (as ujson reads them); a FormatError naming
    the file otherwise."""
    path = os.fspath(path)
    if isinstance(path, bytes):
        raise InputTypeError(f"the {what} path must be str or os.PathLike[str], not bytes")
    with open(path, "rb") as f:
        raw = f.read()
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


def _gold_list(gold) -> list:
    source = None
    if isinstance(gold, (str, os.PathLike)):
        source = os.fspath(gold)
        gold = read_json(gold, "gold")
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
    if isinstance(predictions, (str, os.PathLike)):
        source = os.fspath(predictions)
        predictions = read_json(predictions, "predictions")
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
    """Per-question values (NaN where nothing is added), and the missing predictions."""

    __slots__ = ("notes", "rows")

    def __init__(self, rows: dict, notes: list):
        self.rows, self.notes = rows, notes

    def sums(self) -> dict:
        """Each key's left-to-right sum in gold order, NaN taken as 0 (as the script's
        ``+=`` loop adds: adding nothing for a missing prediction)."""
        out = {}
        for k in KEYS:
            v = self.rows[k]
            filled = np.where(np.isnan(v), 0.0, v)
            out[k] = float(np.add.accumulate(filled)[-1]) if len(filled) else 0.0
        return out

    def means(self) -> dict:
        n = len(self.rows["em"])
        return {k: s / n for k, s in self.sums().items()}


def _evaluate(gold: list, predictions: dict) -> _Evaluation:
    answers, facts = predictions["answer"], predictions["sp"]
    n = len(gold)
    state = np.zeros(n, dtype=np.uint8)
    walk: tuple = ([], [], [], [])
    if _kernels.hotpot_walk(gold, answers, facts, *walk, state) >= 0:
        state[:] = 0
        walk = _walk_checked(gold, answers, facts, state)
    pred_texts, gold_texts, pred_sp, gold_sp = walk
    has_a = (state & 1).astype(bool)
    has_sp = (state & 2).astype(bool)
    ans = _answer_scores(pred_texts, gold_texts)
    sp = _sp_scores(pred_sp, gold_sp, gold, np.flatnonzero(has_sp))
    rows = {}
    for k, values in zip(_ANSWER_KEYS, ans):
        rows[k] = np.full(n, np.nan)
        rows[k][has_a] = values
    for k, values in zip(_SP_KEYS, sp):
        rows[k] = np.full(n, np.nan)
        rows[k][has_sp] = values
    # the joint values, where both are predicted (NaN elsewhere carries through)
    j_prec = rows["prec"] * rows["sp_prec"]
    j_rec = rows["recall"] * rows["sp_recall"]
    with np.errstate(invalid="ignore", divide="ignore"):
        j_f1 = np.where(j_prec + j_rec > 0, 2 * j_prec * j_rec / (j_prec + j_rec), 0.0)
    j_f1[np.isnan(j_prec)] = np.nan
    rows["joint_em"] = rows["em"] * rows["sp_em"]
    rows["joint_f1"] = j_f1
    rows["joint_prec"] = j_prec
    rows["joint_recall"] = j_rec
    notes = []
    if not (has_a.all() and has_sp.all()):
        for i in np.flatnonzero(~(has_a & has_sp)).tolist():
            qid = gold[i]["_id"]
            if not has_a[i]:
                notes.append(("answer", qid))
            if not has_sp[i]:
                notes.append(("sp", qid))
    return _Evaluation(rows, notes)


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


def _sp_scores(pred_sp: list, gold_sp: list, gold: list, at: np.ndarray) -> tuple:
    """(em, f1, prec, recall) arrays of the facts, one value per question with predicted
    facts (``at``: their gold positions, to name a question in an error)."""
    m = len(pred_sp)
    counts = np.empty((m, 3), dtype=np.int64)
    if _kernels.hotpot_sp_counts(pred_sp, gold_sp, counts):
        for k in np.flatnonzero(counts[:, 0] < 0).tolist():
            counts[k] = _sp_counts_python(pred_sp[k], gold_sp[k], gold, int(at[k]))
    tp, fp, fn = (counts[:, j].astype(np.float64) for j in range(3))
    with np.errstate(invalid="ignore", divide="ignore"):
        prec = np.where(tp + fp > 0, 1.0 * tp / (tp + fp), 0.0)
        rec = np.where(tp + fn > 0, 1.0 * tp / (tp + fn), 0.0)
        f1 = np.where(prec + rec > 0, 2 * prec * rec / (prec + rec), 0.0)
    em = np.where(fp + fn == 0, 1.0, 0.0)
    return em, f1, prec, rec


def _sp_counts_python(pred, ref, gold: list, i: int) -> tuple:
    """(tp, fp, fn) with the script's sets of tuples, for facts of any form."""
    try:
        pred_set = set(map(tuple, pred))
        ref_set = set(map(tuple, ref))
    except TypeError as e:
        qid = gold[i]["_id"]
        raise InputTypeError(f"question {qid!r} (gold entry {i}): supporting facts must be "
                             f"lists of [title, sentence id] pairs ({e})",
                             field="supporting_facts") from None
    tp = sum(1 for f in pred_set if f in ref_set)
    return tp, len(pred_set) - tp, sum(1 for f in ref_set if f not in pred_set)


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
    predictions = _predictions(args.pred_file)
    gold = _gold_list(args.gold_file)
    from .squad_eval import _gc_paused

    with _gc_paused():
        ev = _evaluate(gold, predictions)
    lines = [f"missing answer {qid}" if kind == "answer" else f"missing sp fact {qid}"
             for kind, qid in ev.notes]
    lines.append(str(ev.means()))
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


class _CallableModule(types.ModuleType):
    """``qafast.hotpot`` is this module once imported (the import system sets the package's
    attribute to it); calling it calls :func:`hotpot`, as ``qafast.hotpot`` does before."""

    def __call__(self, gold, predictions, *, per_question: bool = False) -> dict:
        return hotpot(gold, predictions, per_question=per_question)


sys.modules[__name__].__class__ = _CallableModule
