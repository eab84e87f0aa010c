"""The specification: HotpotQA's official evaluation (``hotpot_evaluate_v1.py``) in plain Python.

The readable definition of every number :func:`qafast.hotpot` reports, written from what the
script computes (read, then described here in our own words). The compiled path is tested
against it value for value, bit for bit.

Answers
-------
* Both strings are normalized as SQuAD normalizes them
  (:func:`qafast.reference.answers.normalize_squad`: ``str.lower``, the 32 ASCII punctuation
  characters dropped, whole-word a/an/the replaced by a space, whitespace collapsed).
* Exact match: the normalized strings are equal.
* The yes/no rule: when either normalized string is exactly ``"yes"``, ``"no"`` or
  ``"noanswer"`` and the two differ, precision, recall and F1 are 0. (Exact match is unaffected:
  the strings differ, so it is 0 anyway.)
* Otherwise the token bag overlap ``same`` (``Counter & Counter`` of the whitespace tokens):
  0 shared tokens give 0, 0, 0 (so two empty strings have exact match 1 and F1 0); else
  ``precision = 1.0 * same / len(pred)``, ``recall = 1.0 * same / len(gold)``,
  ``f1 = (2 * precision * recall) / (precision + recall)``, in that order of operations.
* There is one gold answer per question, the gold entry's ``"answer"``.

Supporting facts
----------------
* Each side's list of facts becomes the set of ``tuple(fact)``: duplicates count once, and
  Python's equality decides (a sentence id ``1`` equals ``1.0`` and ``True``; ``"1"`` is
  another fact; a fact of three items is compared as three items).
* ``tp`` = predicted facts in the gold set, ``fp`` = the others, ``fn`` = gold facts not
  predicted. Precision ``tp / (tp + fp)`` (0.0 when nothing is predicted), recall
  ``tp / (tp + fn)`` (0.0 when there is no gold fact), F1 ``2PR / (P + R)`` (0.0 when
  ``P + R`` is 0), exact match 1.0 when ``fp + fn == 0`` (so empty against empty is 1.0 with
  F1 0.0).

Joint metrics
-------------
Only for a question with both an answer and supporting facts predicted: joint precision and
recall are the products of the answer's and the facts' ones, joint F1 is ``2PR / (P + R)``
(0.0 when ``P + R`` is 0), joint exact match the product of the two exact matches.

Aggregation
-----------
* The gold file is a list of questions, each with ``"_id"``, ``"answer"`` and
  ``"supporting_facts"``; the predictions are ``{"answer": {id: text}, "sp": {id: facts}}``.
  Every gold entry is one question, a repeated id as often as it occurs; predictions for ids
  the gold lacks are ignored.
* A question without an answer prediction adds nothing to the answer sums (and a note
  ``missing answer <id>``); without a fact prediction, nothing to the fact sums (``missing sp
  fact <id>``); without either, nothing to the joint sums. It still counts in the number of
  questions: the twelve results are ``sum / number of gold entries``, each sum taken left to
  right in gold order.
* The gold's ``"answer"`` is read only where an answer is predicted, its
  ``"supporting_facts"`` only where facts are.
* The result's keys, in order: ``em, f1, prec, recall, sp_em, sp_f1, sp_prec, sp_recall,
  joint_em, joint_f1, joint_prec, joint_recall``.

This module stands alone and raises the built-in exceptions (the script's own, where it has
one: ``KeyError`` for a missing field, ``ZeroDivisionError`` for an empty gold list).
"""

from __future__ import annotations

from collections import Counter

from .answers import normalize_squad

__all__ = ["KEYS", "SPECIAL_ANSWERS", "answer_scores", "evaluate", "per_question",
           "sp_scores"]

#: The result's keys, in the script's order.
KEYS = ("em", "f1", "prec", "recall", "sp_em", "sp_f1", "sp_prec", "sp_recall",
        "joint_em", "joint_f1", "joint_prec", "joint_recall")

#: Normalized answers that score F1 0 against anything but themselves.
SPECIAL_ANSWERS = ("yes", "no", "noanswer")


def answer_scores(prediction: str, gold: str) -> tuple[float, float, float, float]:
    """``(em, f1, precision, recall)`` of one answer against the gold answer."""
    p, g = normalize_squad(prediction), normalize_squad(gold)
    em = 1.0 if p == g else 0.0
    if p != g and (p in SPECIAL_ANSWERS or g in SPECIAL_ANSWERS):
        return em, 0.0, 0.0, 0.0
    p_toks, g_toks = p.split(), g.split()
    same = sum((Counter(p_toks) & Counter(g_toks)).values())
    if same == 0:
        return em, 0.0, 0.0, 0.0
    precision = 1.0 * same / len(p_toks)
    recall = 1.0 * same / len(g_toks)
    return em, (2 * precision * recall) / (precision + recall), precision, recall


def sp_scores(prediction, gold) -> tuple[float, float, float, float]:
    """``(em, f1, precision, recall)`` of predicted supporting facts against the gold ones
    (each an iterable of facts, such as ``[title, sentence id]`` pairs)."""
    pred, ref = set(map(tuple, prediction)), set(map(tuple, gold))
    tp = len([f for f in pred if f in ref])
    fp = len(pred) - tp
    fn = len([f for f in ref if f not in pred])
    precision = 1.0 * tp / (tp + fp) if tp + fp > 0 else 0.0
    recall = 1.0 * tp / (tp + fn) if tp + fn > 0 else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return (1.0 if fp + fn == 0 else 0.0), f1, precision, recall


def per_question(gold: list, predictions: dict) -> tuple[list, list]:
    """``(rows, notes)``: for each gold entry in order, ``{key: value}`` with the keys it
    adds to (answer keys when its answer is predicted, ``sp_*`` when its facts are,
    ``joint_*`` when both are), and the script's notes on missing predictions, in order."""
    answers, facts = predictions["answer"], predictions["sp"]
    rows, notes = [], []
    for entry in gold:
        qid = entry["_id"]
        row: dict = {}
        if qid in answers:
            em, f1, prec, rec = answer_scores(answers[qid], entry["answer"])
            row.update(em=em, f1=f1, prec=prec, recall=rec)
        else:
            notes.append(f"missing answer {qid}")
        if qid in facts:
            sp_em, sp_f1, sp_prec, sp_rec = sp_scores(facts[qid], entry["supporting_facts"])
            row.update(sp_em=sp_em, sp_f1=sp_f1, sp_prec=sp_prec, sp_recall=sp_rec)
        else:
            notes.append(f"missing sp fact {qid}")
        if "em" in row and "sp_em" in row:
            j_prec = row["prec"] * row["sp_prec"]
            j_rec = row["recall"] * row["sp_recall"]
            j_f1 = 2 * j_prec * j_rec / (j_prec + j_rec) if j_prec + j_rec > 0 else 0.0
            row.update(joint_em=row["em"] * row["sp_em"], joint_f1=j_f1, joint_prec=j_prec,
                       joint_recall=j_rec)
        rows.append(row)
    return rows, notes


def evaluate(gold: list, predictions: dict) -> dict:
    """The script's result: each key's sum over the gold entries (in order, a missing
    prediction adding nothing) divided by their number."""
    rows, _ = per_question(gold, predictions)
    sums = dict.fromkeys(KEYS, 0.0)
    for row in rows:
        for k, v in row.items():
            sums[k] += v
    n = len(gold)
    return {k: sums[k] / n for k in KEYS}
