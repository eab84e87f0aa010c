"""The specification: factoid, list and yes/no question measures in plain Python.

Factoid QA over ranked answer lists (BioASQ's strict accuracy, lenient accuracy and mean
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
  "no", else ``"none"`` (the empty string too); a value that is not a string is no answer.
  The golden answer is read the same way. Accuracy is 1 when the two readings are equal, so a
  golden answer that reads as ``"none"`` is matched by any answer that also does. F1 of a
  label counts a correct answer as a true positive of its gold label (a golden ``"none"``
  belongs to "no", the tool's "not yes"), and a wrong one as an error of both labels;
  F1 = 2TP / (2TP + errors), 0 when that is 0/0. Macro F1 is the mean of the two.

How the tool reads a document's ``exact_answer`` values (``Task1bData.readData``), and so
how :func:`evaluate_bioasq` reads them:

* A submitted factoid or list answer is a list of answers, each a list of strings of which
  only the first counts. An empty inner list is dropped, so the answers after it move up a
  rank. A bare string there is read as a yes/no answer, which leaves the question with no
  answer: it scores 0 and still counts. (The tool stops on a flat list of strings; qafast
  reads each string as an answer.)
* A golden factoid or list answer is a list of synonym groups. An empty group is dropped, and
  a golden ``[]`` has no group: nothing matches it, and the question scores 0 and counts. A
  bare golden string never matches either, for the same reason as above. (A flat list of
  strings, on which the tool stops, is a factoid's synonyms or a list question's answers.)
* A question id the submission repeats is scored once, with its first entry
  (``Task1bData.getQuestion`` returns the first match).
* Each measure is a mean over the golden questions of its type that the submission holds,
  in golden file order; a type with none scores 0.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["evaluate_bioasq", "evaluate_factoid", "golden_groups", "list_prf", "normalize",
           "parse_yesno", "submitted_answers", "yesno_measures"]


def normalize(text: str, normalizer: str) -> str:
    """``"bioasq"``: lowercase (Java ``toLowerCase``); ``"none"``: unchanged."""
    if normalizer == "bioasq":
        return text.lower()
    if normalizer == "none":
        return text
    raise ValueError(f"unknown normalizer {normalizer!r}; expected 'bioasq' or 'none'")


def first_match(answers: Sequence[str | None], synonyms: Sequence[str], k: int | None = 5,
                normalizer: str = "none") -> int:
    """1-based rank of the first of ``answers[:k]`` equal to a synonym, else 0 (an answer
    None holds its rank and matches nothing)."""
    gold = [normalize(s, normalizer) for s in synonyms]
    for rank, answer in enumerate(answers if k is None else answers[:k], start=1):
        if answer is not None and normalize(answer, normalizer) in gold:
            return rank
    return 0


def evaluate_factoid(predicted, target, *, k: int | None = 5, normalizer: str = "none"):
    """Factoid QA: strict and lenient accuracy and MRR of ranked answer lists.

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


def list_prf(answers: Sequence[str | None], groups: Sequence[Sequence[str]],
             normalizer: str = "bioasq") -> tuple[float, float, float]:
    """Precision, recall and F1 of one list question (BioASQ
    ``calculatePRFforListQuestions``); ``groups`` are the gold answers' synonym lists, and an
    answer None matches nothing."""
    if not answers:
        return 0.0, 0.0, 0.0
    answers = [None if a is None else normalize(a, normalizer) for a in answers]
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
    """BioASQ's reading of a yes/no answer: "yes", "no", "none" (a string with neither, the
    empty string too), or None (not a string: no answer)."""
    if not isinstance(answer, str):
        return None
    low = answer.lower()
    if "yes" in low:
        return "yes"
    if "no" in low:
        return "no"
    return "none"


def yesno_measures(gold: Sequence[str | None], answers: Sequence[str | None]) -> dict:
    """Accuracy, F1 of yes, F1 of no and their mean over yes/no questions (gold and answers
    already read by :func:`parse_yesno`; a gold "none" is in the "no" class)."""
    acc = 0.0
    tp = {"yes": 0.0, "no": 0.0}
    err = {"yes": 0.0, "no": 0.0}
    for g, a in zip(gold, answers):
        if a == g:
            acc += 1
            tp["yes" if g == "yes" else "no"] += 1
        else:
            err["yes"] += 1
            err["no"] += 1
    f1 = {lab: (2 * tp[lab] / (2 * tp[lab] + err[lab]) if 2 * tp[lab] + err[lab] else 0.0)
          for lab in ("yes", "no")}
    n = len(gold)
    return {"accuracy": acc / n if n else 0.0, "f1_yes": f1["yes"], "f1_no": f1["no"],
            "macro_f1": (f1["yes"] + f1["no"]) / 2}


def golden_groups(value, qtype: str) -> list[list[str]]:
    """The synonym groups of a golden factoid or list ``exact_answer``: none for a string
    or ``[]``, empty groups dropped, a flat list of strings as a factoid's synonyms or as a
    list question's answers one by one."""
    if isinstance(value, str):
        return []
    if value and all(isinstance(s, str) for s in value):
        return [list(value)] if qtype == "factoid" else [[s] for s in value]
    return [[g] if isinstance(g, str) else list(g) for g in value if g != []]


def submitted_answers(value) -> list[str | None]:
    """The ranked answers of a submitted factoid or list ``exact_answer``: the first string
    of each inner list, empty inner lists dropped; none for a string or a missing value. A
    ``null`` among the answers holds its rank and matches nothing."""
    if value is None or isinstance(value, str):
        return []
    out = []
    for a in value:
        if isinstance(a, list):
            if not a:
                continue
            a = a[0]
        out.append(a)
    return out


def evaluate_bioasq(golden: dict, submission: dict, *, k: int | None = None,
                    normalizer: str = "bioasq") -> dict:
    """The official tool's Phase B line, as a dict in its order, from parsed JSON documents
    ``{"questions": [{"id", "type", "exact_answer"}, ...]}``.

    >>> gold = {"questions": [{"id": "f", "type": "factoid", "exact_answer": [["a"]]},
    ...                       {"id": "y", "type": "yesno", "exact_answer": "yes"}]}
    >>> sub = {"questions": [{"id": "f", "exact_answer": [[], ["b"], ["A"]]},
    ...                      {"id": "y", "exact_answer": "Yes."}]}
    >>> r = evaluate_bioasq(gold, sub)
    >>> r["factoid_mrr"], r["yesno_accuracy"]
    (0.5, 1.0)
    """
    answered: dict = {}
    for q in submission["questions"]:
        answered.setdefault(q["id"], q.get("exact_answer"))
    ranks, prf, yn_gold, yn_pred = [], [], [], []
    for q in golden["questions"]:
        if q["id"] not in answered:
            continue
        value, qtype = answered[q["id"]], q.get("type")
        if qtype == "factoid":
            synonyms = [s for g in golden_groups(q["exact_answer"], qtype) for s in g]
            answers = submitted_answers(value)
            ranks.append(first_match(answers, synonyms, k, normalizer))
        elif qtype == "list":
            answers = submitted_answers(value)
            prf.append(list_prf(answers, golden_groups(q["exact_answer"], qtype), normalizer))
        elif qtype == "yesno":
            yn_gold.append(parse_yesno(q["exact_answer"]))
            yn_pred.append(parse_yesno(value))

    def mean(values):
        total = 0.0
        for v in values:  # in order, as the tool adds them
            total += v
        return total / len(values) if values else 0.0

    yn = yesno_measures(yn_gold, yn_pred)
    return {
        "yesno_accuracy": yn["accuracy"],
        "factoid_strict_accuracy": mean([float(r == 1) for r in ranks]),
        "factoid_lenient_accuracy": mean([float(r > 0) for r in ranks]),
        "factoid_mrr": mean([1 / r if r else 0.0 for r in ranks]),
        "list_precision": mean([p for p, _, _ in prf]),
        "list_recall": mean([r for _, r, _ in prf]),
        "list_f1": mean([f for _, _, f in prf]),
        "yesno_macro_f1": yn["macro_f1"],
        "yesno_f1_yes": yn["f1_yes"],
        "yesno_f1_no": yn["f1_no"],
    }


