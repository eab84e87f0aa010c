"""The specification: CoQA's exact match and F1, as Stanford's official ``evaluate-v1.0.py``
scores them.

Plain Python (the standard library only), written to be read; :mod:`qafast.coqa_eval` returns
the same numbers bit for bit and ``tests/test_coqa.py`` checks it against this module. The
rules, in the script's order:

Reading the gold file
    ``{"data": [story, ...]}``; each story has an ``id``, a ``source``, ``questions``, its
    ``answers`` and ``additional_answers`` (an object of further answer lists, taken in its
    key order). Question ``i`` of a story is the turn ``(story id, question's turn_id)``; its
    gold answers are the ``input_text`` of entry ``i`` of ``answers`` and then of each
    additional list. A turn seen again replaces the earlier one's answers but keeps its first
    place; a story id seen again takes the later story's source for all its turns.

Normalizing an answer
    SQuAD's: lowercase, drop ASCII punctuation (``string.punctuation``), turn the words
    a/an/the into spaces, collapse whitespace. Tokens are the whitespace-separated words.

A pair (gold g, prediction p)
    Exact match is 1 when the normalized strings are equal. F1: if either side has no token,
    1 when both have none, else 0; otherwise 0 with no common token, else the F1 of the token
    multisets (precision over p's tokens, recall over g's).

A turn's score
    With one gold answer, the pair's scores. With k > 1, for each i in order the maximum over
    the other k - 1 answers is added to a running sum (starting at 0.0), and the sum is
    divided by k. The human score does the same with gold answer i in place of the
    prediction (and the script stops with "Gold answers should be multiple" on a turn with
    one answer).

The result
    A turn without a prediction counts with 0 but counts. Per source, in the gold file's turn
    order, the scores are summed; the seven known sources map to domains (``mctest`` ->
    ``children_stories``, ``gutenberg`` -> ``literature``, ``race`` -> ``mid-high_school``,
    ``cnn`` -> ``news``, ``wikipedia``, then out of domain ``science`` and ``reddit``). Each
    domain, ``in_domain`` (sum of the five sources' sums, from 0.0), ``out_domain`` and
    ``overall`` (in + out) report ``round(sum / max(1, turns) * 100, 1)`` for ``em`` and
    ``f1`` and the turn count, in that key order.

What is never read
    Only the turns summed need a known source (a story without questions has none), and only
    a scored turn (one with a prediction; every turn for human performance) needs string
    answers: a turn without a prediction is summed as 0 whatever its answers are.
"""

from __future__ import annotations

import re
import string
from collections import Counter

IN_DOMAIN = ("mctest", "gutenberg", "race", "cnn", "wikipedia")
OUT_DOMAIN = ("reddit", "science")
DOMAINS = {"mctest": "children_stories", "gutenberg": "literature", "race": "mid-high_school",
           "cnn": "news", "wikipedia": "wikipedia", "science": "science", "reddit": "reddit"}

_PUNCT = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)


def normalize(s: str) -> str:
    """SQuAD's normalization."""
    s = "".join(ch for ch in s.lower() if ch not in _PUNCT)
    return " ".join(_ARTICLES.sub(" ", s).split())


def tokens(s: str) -> list:
    return normalize(s).split() if s else []


def exact(gold: str, pred: str) -> int:
    return int(normalize(gold) == normalize(pred))


def f1(gold: str, pred: str):
    g, p = tokens(gold), tokens(pred)
    if not g or not p:
        return int(g == p)
    same = sum((Counter(g) & Counter(p)).values())
    if same == 0:
        return 0
    precision = 1.0 * same / len(p)
    recall = 1.0 * same / len(g)
    return (2 * precision * recall) / (precision + recall)


def turn_score(golds: list, pred: str) -> tuple:
    """(em, f1) of one prediction against a turn's gold answers (leave one out)."""
    em_sum = f1_sum = 0.0
    k = len(golds)
    if k > 1:
        for i in range(k):
            others = golds[:i] + golds[i + 1:]
            em_sum += max(exact(a, pred) for a in others)
            f1_sum += max(f1(a, pred) for a in others)
    else:
        em_sum += max(exact(a, pred) for a in golds)
        f1_sum += max(f1(a, pred) for a in golds)
    return em_sum / max(1, k), f1_sum / max(1, k)


def human_turn_score(golds: list) -> tuple:
    """(em, f1) of each gold answer against the others; needs k > 1."""
    k = len(golds)
    if k < 2:
        raise ValueError("Gold answers should be multiple")
    em_sum = f1_sum = 0.0
    for i in range(k):
        others = golds[:i] + golds[i + 1:]
        em_sum += max(exact(a, golds[i]) for a in others)
        f1_sum += max(f1(a, golds[i]) for a in others)
    return em_sum / k, f1_sum / k


def read_gold(dataset: dict) -> tuple:
    """({(story id, turn id): [gold answers]}, {story id: source})."""
    turns: dict = {}
    source_of: dict = {}
    for story in dataset["data"]:
        sid = story["id"]
        source_of[sid] = story["source"]
        lists = [story["answers"], *story["additional_answers"].values()]
        for i, qa in enumerate(story["questions"]):
            turns[(sid, qa["turn_id"])] = [answers[i]["input_text"] for answers in lists]
    return turns, source_of


def read_predictions(preds: list) -> dict:
    return {(p["id"], p["turn_id"]): p["answer"] for p in preds}


def domain_scores(turns: dict, source_of: dict, em: dict, f1_: dict) -> dict:
    """The script's result from per-turn scores (a turn absent from ``em`` scores 0)."""
    sums: dict = {s: [0, 0, 0] for s in IN_DOMAIN + OUT_DOMAIN}
    for key in turns:
        acc = sums[source_of[key[0]]]
        acc[0] += em.get(key, 0)
        acc[1] += f1_.get(key, 0)
        acc[2] += 1

    def entry(e, f, n):
        return {"em": round(e / max(1, n) * 100, 1), "f1": round(f / max(1, n) * 100, 1),
                "turns": n}

    out = {}
    part: dict = {"in": [0.0, 0.0, 0], "out": [0.0, 0.0, 0]}
    for s in IN_DOMAIN + OUT_DOMAIN:
        e, f, n = sums[s]
        out[DOMAINS[s]] = entry(e, f, n)
        acc = part["in" if s in IN_DOMAIN else "out"]
        acc[0] += e
        acc[1] += f
        acc[2] += n
    out["in_domain"] = entry(*part["in"])
    out["out_domain"] = entry(*part["out"])
    out["overall"] = entry(part["in"][0] + part["out"][0], part["in"][1] + part["out"][1],
                           part["in"][2] + part["out"][2])
    return out


def per_turn(dataset: dict, preds: list) -> tuple:
    """(turns, source_of, em, f1): per-turn scores of the predicted turns."""
    turns, source_of = read_gold(dataset)
    pred = read_predictions(preds)
    em, f = {}, {}
    for key, golds in turns.items():
        if key in pred:
            em[key], f[key] = turn_score(golds, pred[key])
    return turns, source_of, em, f


def coqa(dataset: dict, preds: list) -> dict:
    """The script's model-performance result."""
    return domain_scores(*per_turn(dataset, preds))


def coqa_human(dataset: dict) -> dict:
    """The script's ``--human`` result."""
    turns, source_of = read_gold(dataset)
    em, f = {}, {}
    for key, golds in turns.items():
        em[key], f[key] = human_turn_score(golds)
    return domain_scores(turns, source_of, em, f)
