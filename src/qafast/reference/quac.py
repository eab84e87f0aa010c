"""The specification: QuAC's official evaluation (``scorer.py``) in plain Python.

The readable definition of every number :func:`qafast.quac` reports, written from what the
script computes (read, then described here in our own words). The compiled path is tested
against it value for value, bit for bit.

Gold answers
------------
* A question's gold strings are the ``"text"`` of each of its ``"answers"``. The string
  ``"CANNOTANSWER"`` (exactly, case and all) marks an unanswerable reading. When at least as
  many golds are ``"CANNOTANSWER"`` as not (also when there is no gold at all), the golds
  become the one string ``"CANNOTANSWER"``; otherwise the ``"CANNOTANSWER"`` ones are
  dropped. A question whose golds are then ``["CANNOTANSWER"]`` is *unanswerable*.

Scores
------
* F1 between two strings is SQuAD v1.1's: both normalized by
  :func:`qafast.reference.answers.normalize_squad`, split on whitespace, ``same`` the size of
  the token multiset intersection; 0 (the int) when ``same`` is 0 (two empty strings too),
  else ``f1 = (2 * P * R) / (P + R)`` with ``P = 1.0 * same / len(pred)``,
  ``R = 1.0 * same / len(gold)``.
* A prediction against a gold: against ``"CANNOTANSWER"`` it scores 1.0 if the prediction is
  exactly ``"CANNOTANSWER"`` and 0.0 otherwise; against any other gold it scores their F1
  (a predicted ``"CANNOTANSWER"`` is then just the token ``cannotanswer``).
* Human F1 of a question (its agreement): 1.0 with one gold; with n > 1 golds, for each gold
  the largest F1 of it (as the prediction) against each other gold (0 if none is larger),
  added left to right from 0.0 and divided by n.
* Model F1 of a prediction: with one gold, its score against that gold (so possibly the int
  0); with n > 1 golds, for each gold left out in turn, the best score against the n - 1
  others, these n values added with Python's ``sum`` and divided by n (times 1.0).
* The overlap kind of a prediction is that of the first gold with the best score against all
  the golds: against ``"CANNOTANSWER"``, ``"Exact match"`` if the prediction is exactly
  ``"CANNOTANSWER"`` and ``"No overlap"`` otherwise; else ``"Span indexing error"`` if the
  prediction or the gold is not a substring of the dialog's ``"context"`` (``str.find``, first
  occurrence), ``"Exact match"`` if their normalized forms are equal, ``"Partial overlap"`` if
  the character ranges ``[start, start + len]`` of their first occurrences meet (touching
  ends count), ``"No overlap"`` otherwise. Kinds matter for the order of the F1 sum (below)
  and for ``--verbose``.

Questions and dialogs
---------------------
Dialogs are the gold's ``data[*]["paragraphs"][*]`` in order, questions their ``"qas"`` in
order; a prediction is found by (dialog ``"id"``, question ``"id"``).

* No prediction: model F1 0.0 in the kind ``"NO ANSWER"`` (kept whatever the agreement),
  yes/no and follow-up wrong, 0.0 among the unanswerable ones if unanswerable, counted among
  the questions (for HEQ-Q) and in the unfiltered F1 as 0.0; its human F1 counts if it is at
  least ``min_f1``; the dialog fails HEQ-D.
* A prediction: its model F1 counts in the unfiltered F1. If the human F1 is below
  ``min_f1`` nothing else is counted (the dialog is not failed by it). Otherwise: human F1
  counted, yes/no right if the predicted value ``==`` the gold ``"yesno"``, follow-up likewise
  with ``"followup"``, model F1 among the unanswerable ones if unanswerable, HEQ-Q if model F1
  ``>=`` human F1 (else the dialog fails HEQ-D), model F1 added to its kind, one question.
* Every dialog counts for HEQ-D, a dialog with no question as a success.

Numbers
-------
``f1`` is ``100.0 * sum / count`` of the model F1s of the kept questions taken kind by kind
(kinds in the order each first occurs, questions in order within a kind: the order matters to
the last bit). ``unfiltered_f1`` the same over every question in order, ``HEQ`` and ``DHEQ``
``100.0 * passed / total``, ``yes/no`` and ``followup`` ``100.0 * right / count`` over the kept
and unpredicted questions, ``unanswerable_acc`` ``100.0 * sum / count`` of the unanswerable
ones; each sum is Python's ``sum`` (plain left-to-right addition before Python 3.12,
compensated after). Where a count is 0 the script fails dividing by zero; here that number is
NaN.

Predictions file
----------------
One JSON object per non-blank line (lines split on ``\\n``, ``\\r`` and ``\\r\\n``, stripped of
whitespace): ``"qid"``, ``"best_span_str"``, ``"yesno"`` and ``"followup"`` lists, zipped (to
the shortest). Every question of a line belongs to the dialog named by the part of the line's
*first* ``"qid"`` before ``"_q#"``; a later line's question replaces an earlier one's.
"""

from __future__ import annotations

import json
import math
from collections import Counter

from .answers import normalize_squad

__all__ = ["CANNOT", "KEYS", "KINDS", "evaluate", "gold_spans", "human_f1", "model_f1",
           "overlap_kind", "read_predictions", "score", "span_f1"]

#: The unanswerable marker.
CANNOT = "CANNOTANSWER"

#: The script's keys, in its order.
KEYS = ("unfiltered_f1", "f1", "HEQ", "DHEQ", "yes/no", "followup", "unanswerable_acc")

#: The overlap kinds (``"NO ANSWER"``: no prediction).
KINDS = ("NO ANSWER", "Exact match", "Partial overlap", "No overlap", "Span indexing error")


def gold_spans(texts: list) -> list:
    """The golds as scored: ``["CANNOTANSWER"]`` when it is at least half of them (or there
    are none), else the others."""
    cannot = sum(1 for t in texts if t == CANNOT)
    if cannot >= len(texts) - cannot:
        return [CANNOT]
    return [t for t in texts if t != CANNOT]


def span_f1(pred: str, gold: str):
    """SQuAD v1.1 token F1 (the int 0 when no token is shared)."""
    p = normalize_squad(pred).split()
    g = normalize_squad(gold).split()
    same = sum((Counter(p) & Counter(g)).values())
    if same == 0:
        return 0
    precision = 1.0 * same / len(p)
    recall = 1.0 * same / len(g)
    return (2 * precision * recall) / (precision + recall)


def score(pred: str, gold: str):
    """A prediction's score against one gold (the CANNOTANSWER rule, else F1)."""
    if gold == CANNOT:
        return 1.0 if pred == CANNOT else 0.0
    return span_f1(pred, gold)


def human_f1(golds: list) -> float:
    """The leave-one-out agreement of the golds."""
    n = len(golds)
    if n == 1:
        return 1.0
    total = 0.0
    for i in range(n):
        best = 0
        for j in range(n):
            if j != i:
                best = max(best, span_f1(golds[i], golds[j]))
        total += best
    return total / n


def _best(pred: str, golds: list):
    best = None
    for g in golds:
        s = score(pred, g)
        if best is None or s > best:
            best = s
    return best


def model_f1(pred: str, golds: list):
    """The leave-one-out F1 of a prediction."""
    n = len(golds)
    if n == 1:
        return score(pred, golds[0])
    values = [_best(pred, golds[:i] + golds[i + 1:]) for i in range(n)]
    return 1.0 * sum(values) / n


def overlap_kind(pred: str, golds: list, context: str) -> str:
    """The kind of the first gold with the best score."""
    best_at, best = 0, None
    for i, g in enumerate(golds):
        s = score(pred, g)
        if best is None or s > best:
            best_at, best = i, s
    gold = golds[best_at]
    if gold == CANNOT:
        return "Exact match" if pred == CANNOT else "No overlap"
    ps = context.find(pred)
    gs = context.find(gold)
    if ps == -1 or gs == -1:
        return "Span indexing error"
    if normalize_squad(pred) == normalize_squad(gold):
        return "Exact match"
    if max(ps, gs) <= min(ps + len(pred), gs + len(gold)):
        return "Partial overlap"
    return "No overlap"


def read_predictions(text: str) -> dict:
    """``{dialog id: {question id: (span, yesno, followup)}}`` from a predictions file's
    text (already decoded)."""
    out: dict = {}
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if line.strip():
            record = json.loads(line.strip())
            dialog = record["qid"][0].split("_q#")[0]
            for qid, span, yesno, followup in zip(record["qid"], record["best_span_str"],
                                                  record["yesno"], record["followup"]):
                out.setdefault(dialog, {})[qid] = (span, yesno, followup)
    return out


def _ratio(values: list) -> float:
    return 100.0 * sum(values) / len(values) if values else math.nan


def evaluate(data: list, predictions: dict, min_f1: float = 0.4) -> dict:
    """The script's evaluation of ``data`` (the gold's ``"data"`` list) against
    ``predictions`` (as :func:`read_predictions` gives them).

    Returns ``{"metrics": {key: float}, "human_f1": float, "counts": {...},
    "questions": [row, ...]}``; a row has the dialog and question ids, ``human_f1``,
    ``f1`` (the model F1, None without prediction), ``kind``, ``kept``, ``heq``,
    ``yesno``, ``followup`` (None when not counted) and ``unanswerable``."""
    by_kind: dict = {}
    unfiltered: list = []
    humans: list = []
    yes_nos: list = []
    followups: list = []
    unanswerables: list = []
    heq = dheq = questions = dialogs = 0
    rows = []
    for article in data:
        for dialog in article["paragraphs"]:
            did = dialog["id"]
            good = True
            for qa in dialog["qas"]:
                qid = qa["id"]
                golds = gold_spans([a["text"] for a in qa["answers"]])
                hf1 = human_f1(golds)
                unanswerable = golds == [CANNOT]
                row = {"dialog": did, "id": qid, "human_f1": hf1, "unanswerable": unanswerable}
                if did not in predictions or qid not in predictions[did]:
                    good = False
                    by_kind.setdefault("NO ANSWER", []).append(0.0)
                    yes_nos.append(False)
                    followups.append(False)
                    if unanswerable:
                        unanswerables.append(0.0)
                    questions += 1
                    unfiltered.append(0.0)
                    if hf1 >= min_f1:
                        humans.append(hf1)
                    row.update(f1=None, kind="NO ANSWER", kept=True, heq=False, yesno=False,
                               followup=False)
                    rows.append(row)
                    continue
                span, yesno, followup = predictions[did][qid]
                context = dialog["context"]
                kind = overlap_kind(span, golds, context)
                f1 = model_f1(span, golds)
                unfiltered.append(f1)
                row.update(f1=f1, kind=kind)
                if hf1 < min_f1:
                    row.update(kept=False, heq=None, yesno=None, followup=None)
                    rows.append(row)
                    continue
                humans.append(hf1)
                yes_nos.append(yesno == qa["yesno"])
                followups.append(followup == qa["followup"])
                if unanswerable:
                    unanswerables.append(f1)
                passed = f1 >= hf1
                if passed:
                    heq += 1
                else:
                    good = False
                by_kind.setdefault(kind, []).append(f1)
                questions += 1
                row.update(kept=True, heq=passed, yesno=yes_nos[-1], followup=followups[-1])
                rows.append(row)
            dheq += good
            dialogs += 1
    kept = [v for values in by_kind.values() for v in values]
    metrics = {
        "unfiltered_f1": _ratio(unfiltered),
        "f1": _ratio(kept),
        "HEQ": 100.0 * heq / questions if questions else math.nan,
        "DHEQ": 100.0 * dheq / dialogs if dialogs else math.nan,
        "yes/no": _ratio(yes_nos),
        "followup": _ratio(followups),
        "unanswerable_acc": _ratio(unanswerables),
    }
    return {"metrics": metrics, "human_f1": _ratio(humans),
            "counts": {"questions": questions, "heq": heq, "dialogs": dialogs, "dheq": dheq,
                       "unfiltered": len(unfiltered), "unanswerable": len(unanswerables),
                       "kinds": {k: len(v) for k, v in by_kind.items()}},
            "questions": rows}
