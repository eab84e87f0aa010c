"""The specification: factoid, list and yes/no question measures in plain Python.

Factoid QA as seed 000 defines it (BioASQ's strict accuracy, lenient accuracy and mean
reciprocal rank), and BioASQ's Phase B exact-answer measures as the official Java tool
computes them (``BioASQ/Evaluation-Measures``, ``QuestionAnswerEvaluator.java``, challenge
version 5 and later). The compiled kernels are tested against these functions.

* An answer matches a gold answer when it equals one of the gold synonyms, after the
  normalizer: ``"none"`` compares strings as they are (the seed), ``"bioasq"`` lowercases
  both sides (the tool's ``toLowerCase``, nothing else: no trimming, no punctuation rule).
* Factoid: strict = the first answer matches; lenient = one of the first ``k`` answers
  matches; reciprocal rank = 1 / the rank of the first match within ``k``, else 0. An empty
  answer list scores 0.
* List: answers are taken in order; one that matches a gold group still unmatched removes
  the first such group and is a true positive, any other a false positive (so a repeated
  answer counts once). Each gold group still unmatched then removes the first remaining
  answer that matches it, or is a false negative. P = TP/(TP+FP), R = TP/(TP+FN) (0 when
  that is 0/0), F1 = 2PR/(P+R) when both are non-zero, else 0. No answers: P = R = F1 = 0.
* Yes/no: an answer is read as ``"yes"`` if it contains "yes", else ``"no"`` if it contains
  "no", else neither; accuracy is 1 when it equals the gold label. F1 of a label counts a
  correct answer as a true positive of its gold label, and a wrong one as an error of both
  labels; F1 = 2TP / (2TP + errors), 0 when that is 0/0. Macro F1 is the mean of the two.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["evaluate_factoid", "list_prf", "normalize", "parse_yesno", "yesno_measures"]


def normalize(text: str, normalizer: str) -> str:
    """``"bioasq"``: lowercase (Java ``toLowerCase``); ``"none"``: unchanged."""
    if normalizer == "bioasq":
        return text.lower()
    if normalizer == "none":
        return text
    raise ValueError(f"unknown normalizer {normalizer!r}; expected 'bioasq' or 'none'")


def first_match(answers: Sequence[str], synonyms: Sequence[str], k: int | None = 5,
                normalizer: str = "none") -> int:
    """1-based rank of the first of ``answers[:k]`` equal to a synonym, else 0."""
    gold = [normalize(s, normalizer) for s in synonyms]
    for rank, answer in enumerate(answers if k is None else answers[:k], start=1):
        if normalize(answer, normalizer) in gold:
            return rank
    return 0


def evaluate_factoid(predicted, target, *, k: int | None = 5, normalizer: str = "none"):
    """Seed 000's ``evaluate_factoid``: strict and lenient accuracy and MRR.

    ``target[i]`` is the gold answer of question i, a string or a list of its synonyms.
    The sums run in question order and are divided by the number of questions, as the seed.

    >>> predicted = [["cane", "z", "z", "z", "z"], ["z", "z", "z", "z", "z"],
    ...              ["z", "z", "cipolla", "z", "z"], ["z", "melanzane", "z", "z", "z"],
    ...              ["birra", "z", "z", "z", "z"], ["z", "z", "z", "calippo", "z"]]
    >>> target = ["cane", "gatto", "cipolla", "melanzane", "birra", "calippo"]
    >>> evaluate_factoid(predicted, target)
    {'strict_accuracy': 0.3333333333333333, 'lenient_accuracy': 0.8333333333333334, \
'mean_reciprocal_rank': 0.5138888888888888}
    """
    c_1 = c_k = 0
    rank_sum = 0.0
    for answers, gold in zip(predicted, target):
        synonyms = [gold] if isinstance(gold, str) else list(gold)
        rank = first_match(list(answers), synonyms, k, normalizer)
        c_1 += rank == 1
        c_k += rank > 0
        if rank:
            rank_sum += 1 / rank
    n = len(target)
    return {"strict_accuracy": c_1 / n, "lenient_accuracy": c_k / n,
            "mean_reciprocal_rank": rank_sum / n}


def list_prf(answers: Sequence[str], groups: Sequence[Sequence[str]],
             normalizer: str = "bioasq") -> tuple[float, float, float]:
    """Precision, recall and F1 of one list question (BioASQ
    ``calculatePRFforListQuestions``); ``groups`` are the gold answers' synonym lists."""
    if not answers:
        return 0.0, 0.0, 0.0
    answers = [normalize(a, normalizer) for a in answers]
    remaining = [[normalize(s, normalizer) for s in g] for g in groups]
    tp = fp = fn = 0.0
    for a in answers:
        hit = next((j for j, g in enumerate(remaining) if a in g), None)
        if hit is None:
            fp += 1
        else:
            del remaining[hit]
            tp += 1
    unused = list(answers)
    for g in remaining:
        hit = next((j for j, a in enumerate(unused) if a in g), None)
        if hit is None:
            fn += 1
        else:
            del unused[hit]
    p = tp / (tp + fp)
    r = tp / (tp + fn) if tp + fn else 0.0
    f = 2 * p * r / (p + r) if p and r else 0.0
    return p, r, f


def parse_yesno(answer) -> str | None:
    """BioASQ's reading of a yes/no answer: "yes", "no" or None (neither, or empty)."""
    if not isinstance(answer, str) or not answer:
        return None
    low = answer.lower()
    if "yes" in low:
        return "yes"
    if "no" in low:
        return "no"
    return None


def yesno_measures(gold: Sequence[str], answers: Sequence[str | None]) -> dict:
    """Accuracy, F1 of yes, F1 of no and their mean over yes/no questions (gold "yes"/"no",
    answers already read by :func:`parse_yesno`)."""
    acc = 0.0
    tp = {"yes": 0.0, "no": 0.0}
    err = {"yes": 0.0, "no": 0.0}
    for g, a in zip(gold, answers):
        if a == g:
            acc += 1
            tp[g] += 1
        else:
            err["yes"] += 1
            err["no"] += 1
    f1 = {lab: (2 * tp[lab] / (2 * tp[lab] + err[lab]) if 2 * tp[lab] + err[lab] else 0.0)
          for lab in ("yes", "no")}
    n = len(gold)
    return {"accuracy": acc / n if n else 0.0, "f1_yes": f1["yes"], "f1_no": f1["no"],
            "macro_f1": (f1["yes"] + f1["no"]) / 2}
