"""The specification: TriviaQA's exact match and F1, as the official
``triviaqa_evaluation.py`` (v1.0, mandarjoshi90/triviaqa) scores them.

Plain Python (the standard library only), written to be read; :mod:`qafast.triviaqa_eval`
returns the same numbers bit for bit and ``tests/test_triviaqa.py`` checks it against this
module. The rules, in the script's order:

Reading the dataset
    ``{"Version", "Domain", "VerifiedEval", "Data": [question, ...]}``. With ``VerifiedEval``
    true only the questions with ``QuestionPartOfVerifiedEval`` are kept, and in the ``Web``
    domain only their pages (``EntityPages`` then ``SearchResults``) with
    ``DocPartOfVerifiedEval`` (a kept question left with no page stops the script).
    A ``Version`` other than 1.0 is reported on stderr and scoring goes on.

Keys
    ``Wikipedia``: one key per question, its ``QuestionId``. Any other domain: one key
    ``"{QuestionId}--{Filename}"`` per page of ``EntityPages`` then ``SearchResults``, each with
    the question's answer. A key seen again keeps its first place and takes the later answer.

Gold answers of a key
    The ``Answer``'s ``NormalizedAliases`` as they are, then each of its ``HumanAnswers``
    (none if absent) normalized once. Scoring normalizes every gold answer again.

Normalizing
    ``_`` becomes a space; lowercase; each character of ``string.punctuation`` and of
    ``‘ ’ ´ ``` becomes a space (SQuAD's normalizer deletes them, and does not touch ``_``
    first); the words a/an/the (``\\b`` boundaries) become spaces; whitespace collapses.

A key's scores
    With no prediction for the key it scores 0 but counts (stderr: "Missed question {key}
    will receive score 0."). Otherwise exact match is 1 if the normalized prediction equals
    some normalized gold answer; F1 is the maximum over the gold answers of the token F1
    (0 when no token is common, so 0 for two empty answers). A key whose exact match is 0
    prints ``em=0: <prediction> <gold answer list repr>`` on stdout.

The result
    ``{'exact_match': 100.0 * hits / keys, 'f1': 100.0 * (left-to-right sum of F1) / keys,
    'common': keys with a prediction, 'denominator': keys, 'pred_len': number of
    predictions (those of no key too), 'gold_len': keys}``.
"""

from __future__ import annotations

import re
import string
from collections import Counter

EXPECTED_VERSION = 1.0

#: What TriviaQA's normalizer turns into spaces: ASCII punctuation and four quote marks.
PUNCTUATION = frozenset(string.punctuation + "\u2018\u2019\u00b4`")
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize(s: str) -> str:
    """TriviaQA's ``normalize_answer``."""
    s = s.replace("_", " ").lower()
    s = "".join(" " if ch in PUNCTUATION else ch for ch in s)
    return " ".join(_ARTICLES.sub(" ", s).split())


def exact(prediction: str, gold: str) -> bool:
    return normalize(prediction) == normalize(gold)


def f1(prediction: str, gold: str) -> float:
    p, g = normalize(prediction).split(), normalize(gold).split()
    same = sum((Counter(p) & Counter(g)).values())
    if same == 0:
        return 0
    precision, recall = same / len(p), same / len(g)
    return 2 * precision * recall / (precision + recall)


def gold_answers(answer: dict) -> list:
    return answer["NormalizedAliases"] + [normalize(h) for h in answer.get("HumanAnswers", [])]


def keep_verified(data: dict) -> list:
    """The dataset's questions that are scored."""
    if not data["VerifiedEval"]:
        return data["Data"]
    kept = []
    for q in data["Data"]:
        if q["QuestionPartOfVerifiedEval"]:
            if data["Domain"] == "Web":
                q = dict(q)
                for part in ("EntityPages", "SearchResults"):
                    q[part] = [p for p in q.get(part, []) if p["DocPartOfVerifiedEval"]]
                if not q["EntityPages"] and not q["SearchResults"]:
                    raise ValueError(f"question {q['QuestionId']} has no verified page")
            kept.append(q)
    return kept


def key_answers(data: dict) -> dict:
    """``{key: Answer}`` in the order the script scores the keys."""
    questions = keep_verified(data)
    out: dict = {}
    for q in questions:
        if data["Domain"] == "Wikipedia":
            out[q["QuestionId"]] = q["Answer"]
        else:
            for page in q.get("EntityPages", []) + q.get("SearchResults", []):
                out["{}--{}".format(q["QuestionId"], page["Filename"])] = q["Answer"]
    return out


def question_scores(data: dict, predictions: dict) -> list:
    """``[(key, predicted, exact match (bool), F1)]`` in the script's order."""
    rows: list = []
    for key, answer in key_answers(data).items():
        if key not in predictions:
            rows.append((key, False, False, 0))
            continue
        p, golds = predictions[key], gold_answers(answer)
        rows.append((key, True, max(exact(p, g) for g in golds), max(f1(p, g) for g in golds)))
    return rows


def triviaqa(data: dict, predictions: dict) -> dict:
    """The dict the script prints."""
    rows = question_scores(data, predictions)
    hits = sum(em for _, _, em, _ in rows)
    total = 0
    for _, _, _, f in rows:
        total += f
    n = len(rows)
    return {"exact_match": 100.0 * hits / n, "f1": 100.0 * total / n,
            "common": sum(p for _, p, _, _ in rows), "denominator": n,
            "pred_len": len(predictions), "gold_len": n}
