"""The specification: the official SQuAD v1.1 and v2.0 evaluation scripts in plain Python.

This is the readable definition of every number :func:`qafast.squad` reports, written from what
the two CodaLab scripts compute (read, then described here in our own words; the per-answer
scores are the spec of :mod:`qafast.reference.answers`). The compiled path is tested against it
value for value, bit for bit, and the golden tests pin it to numbers worked out by hand.

v1.1 (``evaluate-v1.1.py``)
---------------------------
* Every question of the dataset counts, duplicated ids as often as they occur. A question
  without a prediction scores 0 but stays in the count.
* A question's exact match and F1 are each the maximum over its gold texts (separately: the best
  exact-match gold may differ from the best F1 gold), with the v1 empty rule: F1 is 0 whenever no
  token is shared, so an empty prediction against an empty gold has EM 1 and F1 0.
* The result is ``{"exact_match": 100.0 * ΣEM / total, "f1": 100.0 * ΣF1 / total}``, the sums
  taken in dataset order. A question with no gold text has no maximum (the script crashes with
  ``ValueError``; so does this spec, naming the question).

v2.0 (``evaluate-v2.0.py``)
---------------------------
* A question id is one question: a repeated id keeps the place of its first occurrence and the
  answers of its last.
* ``has_ans`` is ``bool(answers)`` on the raw list. The golds scored are the texts that do not
  normalize to ``""``; if none remain, the gold is ``[""]``. A question whose only gold is
  ``"the"`` is therefore HasAns but scored as unanswerable.
* EM and F1 are maxima over the golds with the v2 empty rule: if either side has no token, F1 is
  1 when both have none and 0 otherwise.
* No-answer threshold: a question whose ``na_prob > na_prob_thresh`` (strict; the default 1.0
  never fires) scores ``float(not has_ans)`` instead of its EM/F1. Without ``na_probs`` every
  probability is 0.0.
* Output keys, in order: ``exact, f1, total``; then ``HasAns_exact, HasAns_f1, HasAns_total`` if
  some scored question has an answer; then the same three with ``NoAns_`` if some has none;
  with ``na_probs``, ``best_exact, best_exact_thresh, best_f1, best_f1_thresh``; then
  ``pr_exact_ap, pr_f1_ap, pr_oracle_ap`` if some scored question has an answer. (The script
  adds the ``pr_*`` keys only when also asked for plots; :func:`squad` always adds them, and the
  ``qafast squad`` command follows the script.) Means are ``100.0 * sum / count``, the sums in
  order of first occurrence in the dataset.
* Best threshold (:func:`best_threshold`): see there; ties between equal probabilities are *not*
  grouped, so the result depends on the order of ``na_probs``, exactly as in the script.
* Precision-recall curve and AP (:func:`precision_recall`): see there.

Which script
------------
Without an explicit ``version``: Hugging Face predictions (below) choose by their form, "2.0"
when they carry ``no_answer_probability`` (the ``squad_v2`` metric) and "1.1" when they do not
(``squad``); otherwise the dataset's ``"version"`` field, "1.x" (SQuAD v1.1's "1.1", MLQA's
"1.0") for v1.1 and "2.x" or "v2.x" (SQuAD v2.0's "v2.0") for v2.0; otherwise v2.0, the script
that reads a file without that field (the v1.1 script crashes on it).

No-answer probabilities
-----------------------
The v2.0 script compares whatever ``json.load`` produced with Python's operators: an int of
any size exactly, ``True`` as 1, ``Infinity`` above every finite number, and NaN, for which
``>``, ``<`` and ``==`` are all False. Its ``sorted`` then leaves a NaN where the merge steps
happen to put it, which depends on the positions of the values around it, so the order is
that of Python's ``sorted`` over the probabilities in ``na_probs`` order (all of them, before
the ids not scored are dropped), and nothing simpler. ``-t nan`` never fires.

Hugging Face ``evaluate``
-------------------------
Its ``squad`` and ``squad_v2`` metrics take ``references=[{"id", "answers": {"text": [...],
"answer_start": [...]}}]`` (a one-paragraph dataset) and ``predictions=[{"id",
"prediction_text"}]``, plus ``"no_answer_probability"`` for ``squad_v2``, and run the scripts
above: ``squad`` returns v1.1's two keys; ``squad_v2`` returns v2.0's keys and always the four
``best_*`` ones (it always searches), never the ``pr_*`` ones. Its input features store each
probability as float32, so it is rounded to float32 and widened back before anything else.

Missing predictions
-------------------
``missing="zero"`` (v1.1's rule, its default) scores a question without a prediction 0 and keeps
it in every count; in v2.0 it is never thresholded, never enters the threshold search or the
ranking of the PR curve (it is wrong at every threshold), but it counts in the denominators and,
when it has an answer, in the PR curve's number of positives. ``missing="skip"`` (v2.0's rule,
its default) leaves the question out of everything, as if the dataset did not hold it; this is
what the v2.0 script does for its overall score, while its HasAns/NoAns lines crash with
``KeyError`` (AwesomeMRC#7). ``missing="error"`` raises ``ValueError`` naming the questions.
With every question predicted, the three agree.

Predictions for ids the dataset lacks are ignored (both scripts), and so are probabilities for ids
that are not scored (the v2.0 script's PR analysis would crash on them).
"""

from __future__ import annotations

import math
import struct
from collections.abc import Mapping

from .answers import exact_match_score, f1_score, max_over_references, v2_references

__all__ = [
    "apply_no_answer_threshold",
    "best_threshold",
    "dataset_questions",
    "precision_recall",
    "squad",
    "version_of",
]

VERSIONS = ("1.1", "2.0")
MISSING = ("zero", "skip", "error")


def dataset_questions(dataset) -> list[tuple[str, list[str]]]:
    """``(question id, gold texts)`` for every question, in dataset order.

    ``dataset`` is a SQuAD JSON object (a dict with ``"data"``) or its list of articles.
    Answers are a list of ``{"text": ...}`` (SQuAD files) or ``{"text": [...], ...}`` (Hugging
    Face ``datasets``).
    """
    if isinstance(dataset, Mapping):
        dataset = dataset["data"]
    out = []
    for article in dataset:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                answers = qa["answers"]
                if isinstance(answers, Mapping):
                    texts = list(answers["text"])
                else:
                    texts = [a["text"] for a in answers]
                out.append((qa["id"], texts))
    return out


def _em(prediction, gold, rule):
    return exact_match_score(prediction, gold, normalizer="squad", empty_rule=rule)


def _f1(prediction, gold, rule):
    return f1_score(prediction, gold, normalizer="squad", unit="token", empty_rule=rule)


def _check_missing(questions, predictions, missing):
    absent = [q for q, _ in questions if q not in predictions]
    if absent and missing == "error":
        shown = ", ".join(repr(q) for q in absent[:5]) + (", ..." if len(absent) > 5 else "")
        raise ValueError(f"{len(absent)} question(s) have no prediction: {shown}")
    return set(absent)


def _squad_v1(questions, predictions, missing) -> dict:
    absent = _check_missing(questions, predictions, missing)
    exact: float = 0  # an int, as the official script starts its sums
    f1: float = 0
    total = 0
    for qid, golds in questions:
        if qid in absent and missing == "skip":
            continue
        total += 1
        if qid in absent:
            continue
        if not golds:
            raise ValueError(f"question {qid!r} has no gold answer; SQuAD v1.1 needs at least "
                             "one (unanswerable questions are version='2.0')")
        pred = predictions[qid]
        exact += max_over_references(lambda p, g: _em(p, g, "v1"), pred, golds)
        f1 += max_over_references(lambda p, g: _f1(p, g, "v1"), pred, golds)
    if total == 0:
        raise ValueError("no question to score")
    return {"exact_match": 100.0 * exact / total, "f1": 100.0 * f1 / total}


def apply_no_answer_threshold(scores: dict, na_probs: dict, has_ans: dict, thresh: float,
                              skip=frozenset()) -> dict:
    """v2.0's thresholded scores: ``float(not has_ans)`` where ``na_prob > thresh``, else the
    score. Questions in ``skip`` (missing predictions scored 0) keep their score."""
    out = {}
    for qid, s in scores.items():
        if qid not in skip and na_probs[qid] > thresh:
            out[qid] = float(not has_ans[qid])
        else:
            out[qid] = s
    return out


def best_threshold(predictions: dict, scores: dict, na_probs: dict, has_ans: dict,
                   skip=frozenset()):
    """v2.0's ``find_best_thresh``: the best score over no-answer thresholds, and where.

    Start with every question predicted unanswerable: the score is the number of scored NoAns
    questions, the threshold 0.0. Walk the questions in ascending ``na_prob``, ties in the order
    of ``na_probs`` (a stable sort), skipping ids that are not scored (or are in ``skip``).
    Answering a HasAns question adds its raw score, answering a NoAns question costs 1 if its
    prediction is non-empty. Only a strict improvement moves the best and sets the threshold to
    that question's ``na_prob``, so a cut can fall inside a run of equal probabilities. Returns
    ``(100.0 * best / len(scores), threshold)``; the threshold is the caller's value, unchanged.
    """
    best = cur = sum(1 for q in scores if q not in skip and not has_ans[q])
    thresh = 0.0
    for qid in sorted(na_probs, key=lambda q: na_probs[q]):
        if qid not in scores or qid in skip:
            continue
        if has_ans[qid]:
            cur += scores[qid]
        elif predictions[qid]:
            cur += -1
        if cur > best:
            best = cur
            thresh = na_probs[qid]
    return 100.0 * best / len(scores), thresh


def precision_recall(scores: dict, na_probs: dict, has_ans: dict, num_positive: int,
                     skip=frozenset()):
    """v2.0's ``make_precision_recall_eval``: AP of the curve over no-answer thresholds.

    Rank the scored questions (not in ``skip``) by ascending ``na_prob``, ties in the order of
    ``na_probs``. Going down the ranking, ``tp`` adds the score of each HasAns question
    (fractional for F1); at rank i (from 1) precision is ``tp / i`` and recall
    ``tp / num_positive``. A point is kept only where the next probability differs (or at the
    end): ties are grouped here. The curve starts at (recall 0, precision 1) and
    ``AP = Σ p * (r - r_previous)`` over the kept points, without interpolation.
    Returns ``(100.0 * AP, precisions, recalls)``.
    """
    # every id sorted, then the ones not scored dropped: with NaN the order of the rest
    # depends on what was beside them in the sort
    ranked = [q for q in sorted(na_probs, key=lambda q: na_probs[q])
              if q in scores and q not in skip]
    tp = 0.0
    precisions, recalls = [1.0], [0.0]
    ap = 0.0
    for i, qid in enumerate(ranked):
        if has_ans[qid]:
            tp += scores[qid]
        p = tp / float(i + 1)
        r = tp / float(num_positive)
        if i == len(ranked) - 1 or na_probs[qid] != na_probs[ranked[i + 1]]:
            ap += p * (r - recalls[-1])
            precisions.append(p)
            recalls.append(r)
    return 100.0 * ap, precisions, recalls


def _mean_dict(exact: dict, f1: dict, qids) -> dict:
    total = len(qids)
    return {"exact": 100.0 * sum(exact[q] for q in qids) / total,
            "f1": 100.0 * sum(f1[q] for q in qids) / total,
            "total": total}


def _squad_v2(questions, predictions, na_probs, thresh, missing, curves=None) -> dict:
    golds_of: dict = {}
    for qid, golds in questions:          # first place, last answers
        golds_of[qid] = golds
    has_ans = {q: bool(g) for q, g in golds_of.items()}
    absent = _check_missing(list(golds_of.items()), predictions, missing)
    exact_raw: dict = {}
    f1_raw: dict = {}
    for qid, golds in golds_of.items():
        if qid in absent:
            if missing == "zero":
                exact_raw[qid] = f1_raw[qid] = 0
            continue
        kept = v2_references(golds, normalizer="squad")
        pred = predictions[qid]
        exact_raw[qid] = max_over_references(lambda p, g: _em(p, g, "v2"), pred, kept)
        f1_raw[qid] = max_over_references(lambda p, g: _f1(p, g, "v2"), pred, kept)
    if not exact_raw:
        raise ValueError("no question to score")
    skip = absent if missing == "zero" else frozenset()
    if na_probs is None:
        probs = {q: 0.0 for q in exact_raw}
    else:
        for q in exact_raw:
            if q not in skip and q not in na_probs:
                raise ValueError(f"question {q!r} has no no-answer probability")
        probs = na_probs
    exact = apply_no_answer_threshold(exact_raw, probs, has_ans, thresh, skip)
    f1 = apply_no_answer_threshold(f1_raw, probs, has_ans, thresh, skip)
    out = _mean_dict(exact, f1, list(exact))
    for prefix, want in (("HasAns", True), ("NoAns", False)):
        qids = [q for q in exact if has_ans[q] == want]
        if qids:
            for k, v in _mean_dict(exact, f1, qids).items():
                out[f"{prefix}_{k}"] = v
    if na_probs is None:
        return out
    preds = {q: predictions.get(q, "") for q in exact_raw}
    out["best_exact"], out["best_exact_thresh"] = best_threshold(preds, exact_raw, na_probs,
                                                                 has_ans, skip)
    out["best_f1"], out["best_f1_thresh"] = best_threshold(preds, f1_raw, na_probs, has_ans, skip)
    num_positive = sum(1 for q in exact_raw if has_ans[q])
    if num_positive:
        oracle = {q: float(has_ans[q]) for q in exact_raw}
        for name, scores in (("exact", exact_raw), ("f1", f1_raw), ("oracle", oracle)):
            ap, p, r = precision_recall(scores, na_probs, has_ans, num_positive, skip)
            out[f"pr_{name}_ap"] = ap
            if curves is not None:
                curves[name] = (p, r)
    return out


def version_of(field) -> str | None:
    """The script a dataset's ``"version"`` field names: "1.1", "2.0", or None (missing or
    another value)."""
    if field is None or isinstance(field, bool):
        return None
    text = str(field).strip()
    if text[:1] in ("v", "V"):
        text = text[1:].lstrip()
    head, *rest = text.split(".")
    if head not in ("1", "2") or not all(p.isascii() and p.isdigit() for p in rest):
        return None
    return "1.1" if head == "1" else "2.0"


def float32(x) -> float:
    """``float(x)`` rounded to the nearest float32 and widened back; infinite beyond its
    range (Arrow's float32 column in Hugging Face ``datasets``)."""
    try:
        return struct.unpack("f", struct.pack("f", float(x)))[0]
    except OverflowError:
        return math.inf if x > 0 else -math.inf


def hf_inputs(predictions: list):
    """``(predictions dict, probabilities dict or None)`` from Hugging Face's predictions,
    as its metrics build them (a repeated id: first place, last values)."""
    preds = {p["id"]: p["prediction_text"] for p in predictions}
    if predictions and all("no_answer_probability" in p for p in predictions):
        return preds, {p["id"]: float32(p["no_answer_probability"]) for p in predictions}
    return preds, None


def squad(dataset, predictions, *, version: str | None = None,
          na_probs: Mapping | None = None, na_prob_thresh: float = 1.0,
          missing: str | None = None) -> dict:
    """The official SQuAD script's result dict for ``version`` ("1.1", "2.0", or None: see
    the module docstring).

    ``dataset`` is SQuAD JSON (a dict with ``"data"``, the list of articles, or a list of
    ``{"id", "answers"}`` questions), ``predictions`` maps question id to answer text (or is
    Hugging Face's list of predictions), ``na_probs`` question id to the probability of no
    answer (v2.0 only). ``missing`` is ``"zero"``, ``"skip"`` or ``"error"``; ``None`` takes
    the version's rule (see the module docstring).
    """
    if version is not None and version not in VERSIONS:
        raise ValueError(f"version must be '1.1', '2.0' or None, got {version!r}")
    if isinstance(dataset, list) and dataset and "answers" in dataset[0] \
            and "paragraphs" not in dataset[0]:
        dataset = [{"paragraphs": [{"qas": dataset}]}]
    hf = isinstance(predictions, list)
    field = dataset.get("version") if isinstance(dataset, Mapping) else None
    if hf:
        predictions, hf_probs = hf_inputs(predictions)
        said = None if not predictions else "2.0" if hf_probs is not None else "1.1"
    else:
        said = version_of(field)
    if version is None:
        version = said or "2.0"
    if missing is None:
        missing = "zero" if version == "1.1" else "skip"
    if missing not in MISSING:
        raise ValueError(f"missing must be 'zero', 'skip' or 'error', got {missing!r}")
    questions = dataset_questions(dataset)
    if version == "1.1":
        if na_probs is not None or na_prob_thresh != 1.0:
            raise ValueError("na_probs and na_prob_thresh are SQuAD v2.0 options")
        return _squad_v1(questions, predictions, missing)
    if not hf:
        return _squad_v2(questions, predictions, na_probs, na_prob_thresh, missing)
    if hf_probs is None:
        hf_probs = {q: 0.0 for q in predictions}
    out = _squad_v2(questions, predictions, hf_probs, na_prob_thresh, missing)
    return {k: v for k, v in out.items() if not k.startswith("pr_")}
