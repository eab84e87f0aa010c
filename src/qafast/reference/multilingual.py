"""The specification: MLQA, CMRC 2018 and DRCD evaluation in plain Python.

The readable definition of every number :func:`qafast.mlqa`, :func:`qafast.cmrc` and
:func:`qafast.drcd` report, written from the rules the evaluation scripts apply (read, then
described here in our own words). The compiled path is tested against it bit for bit.

MLQA (``mlqa_evaluation_v1.py``)
--------------------------------
* Normalize an answer in four steps: ``str.lower``; drop every character whose Unicode
  category starts with ``P`` (every code point below ``sys.maxunicode``) and the 32 ASCII
  punctuation characters; replace the answer language's articles by a space
  (:data:`ARTICLES`; Arabic: every "ال", inside words too); split into tokens (``zh``: each
  character of U+4E00-U+9FA5 is a token of its own and the text between them is split on
  whitespace; the other languages: whitespace) and join them with one space.
* Exact match: the normalized strings are equal. F1: the multiset overlap ``same`` of the
  whitespace tokens of the two normalized strings; 0 when ``same`` is 0 (two empty answers:
  EM 1, F1 0), else ``2PR / (P + R)`` with ``P = 1.0 * same / len(pred)`` and
  ``R = 1.0 * same / len(gold)``. A question scores the best over its gold answers.

CMRC 2018 (``cmrc2018_evaluate.py``, the Python 3 form)
-------------------------------------------------------
* Every answer and prediction is first ``str()`` of its value (a gold answer object: its
  ``"text"``), then lowercased and stripped.
* Exact match: the two strings, with every character of :data:`CMRC_MARKS` dropped, are
  equal (inner spaces and ``.`` stay).
* F1: each string becomes tokens, its marks skipped: each character of U+4E00-U+9FA5 is a
  token, each run of other characters is split by ``nltk.word_tokenize`` (a run of whitespace
  gives no token). ``L`` is the length of the longest common contiguous run of tokens; 0 when
  ``L`` is 0 (even for two empty answers), else ``2PR / (P + R)`` with ``P = L / len(pred)``,
  ``R = L / len(gold)``. The best over the gold answers counts.
* The data is SQuAD's form or CMRC's own list of passages (each passage its own paragraph,
  a question's id ``"id"`` or else ``"query_id"``).
* Result: ``EM`` and ``F1`` as ``100.0 * sum / questions``, ``AVERAGE`` their mean,
  ``TOTAL`` the number of questions and ``SKIP`` those without a prediction.

DRCD (no script; its maintainers' description)
----------------------------------------------
* SQuAD v1.1's normalization (lowercase, ASCII punctuation dropped, whole-word a/an/the
  replaced by a space, whitespace collapsed) with ``《》？，。、；：`` dropped as well.
* Exact match as MLQA's; F1 as MLQA's over the characters of the normalized strings (spaces
  included) instead of their tokens.

Aggregation (MLQA and DRCD)
---------------------------
Every question of the data counts, a repeated id as often as it occurs (each time with the
one prediction of that id); a question without a prediction adds 0 but counts. Sums are taken
left to right in data order; ``exact_match`` and ``f1`` are ``100.0 * sum / questions``.

This module stands alone and raises the built-in exceptions where the scripts do.
"""

from __future__ import annotations

import re
import string
import sys
import unicodedata
from collections import Counter

__all__ = ["ARTICLES", "CMRC_MARKS", "DRCD_MARKS", "cmrc", "cmrc_scores", "drcd",
           "drcd_scores", "mlqa", "mlqa_scores", "normalize_drcd", "normalize_mlqa"]

#: Each MLQA answer language's articles, as a regular expression (None: no articles).
ARTICLES = {
    "en": r"\b(a|an|the)\b",
    "es": r"\b(un|una|unos|unas|el|la|los|las)\b",
    "hi": None,
    "vi": r"\b(của|là|cái|chiếc|những)\b",
    "de": r"\b(ein|eine|einen|einem|eines|einer|der|die|das|den|dem|des)\b",
    "ar": "ال",  # the script's first alternative cannot match: every "ال" goes
    "zh": None,
}

#: The characters CMRC 2018 drops ("……" is listed too but, two characters long, never
#: equals one character).
CMRC_MARKS = frozenset("-:_*^/\\~`+=，。：？！“”；’《》·、「」（）－～『』")

#: The characters DRCD drops.
DRCD_MARKS = frozenset(string.punctuation) | frozenset("《》？，。、；：")

_PUNCT: frozenset | None = None


def _mlqa_punct() -> frozenset:
    global _PUNCT
    if _PUNCT is None:
        _PUNCT = frozenset(c for c in map(chr, range(sys.maxunicode))
                           if unicodedata.category(c)[0] == "P") | frozenset(string.punctuation)
    return _PUNCT


def _cjk(ch: str) -> bool:
    return "\u4e00" <= ch <= "\u9fa5"


def normalize_mlqa(text: str, lang: str) -> str:
    """MLQA's normalized answer in language ``lang``."""
    if lang not in ARTICLES:
        raise ValueError(f"unknown MLQA language {lang!r}")
    punct = _mlqa_punct()
    text = "".join(c for c in text.lower() if c not in punct)
    articles = ARTICLES[lang]
    if articles is not None:
        text = re.sub(articles, " ", text)
    if lang != "zh":
        return " ".join(text.split())
    tokens: list = []
    run = ""
    for c in text:
        if _cjk(c):
            tokens += run.split() + [c]
            run = ""
        else:
            run += c
    return " ".join(tokens + run.split())


def normalize_drcd(text: str) -> str:
    """DRCD's normalized answer."""
    text = "".join(c for c in text.lower() if c not in DRCD_MARKS)
    return " ".join(re.sub(r"\b(a|an|the)\b", " ", text).split())


def _bag_f1(pred: list, gold: list) -> float:
    same = sum((Counter(pred) & Counter(gold)).values())
    if same == 0:
        return 0.0
    p = 1.0 * same / len(pred)
    r = 1.0 * same / len(gold)
    return (2 * p * r) / (p + r)


def mlqa_scores(prediction: str, golds: list, lang: str) -> tuple[float, float]:
    """``(em, f1)`` of one MLQA prediction: the best over the gold answers."""
    p = normalize_mlqa(prediction, lang)
    gs = [normalize_mlqa(g, lang) for g in golds]
    return (max(float(p == g) for g in gs),
            max(_bag_f1(p.split(), g.split()) for g in gs))


def drcd_scores(prediction: str, golds: list) -> tuple[float, float]:
    """``(em, f1)`` of one DRCD prediction: the best over the gold answers."""
    p = normalize_drcd(prediction)
    gs = [normalize_drcd(g) for g in golds]
    return (max(float(p == g) for g in gs),
            max(_bag_f1(list(p), list(g)) for g in gs))


def _words(run: str) -> list:
    if run.strip() == "":
        return []
    import nltk

    return nltk.word_tokenize(run)


def _cmrc_tokens(text: str) -> list:
    tokens: list = []
    run = ""
    for c in text.lower().strip():
        if c in CMRC_MARKS:
            continue
        if _cjk(c):
            tokens += _words(run) + [c]
            run = ""
        else:
            run += c
    return tokens + _words(run)


def _longest_common_run(a: list, b: list) -> int:
    best = 0
    for i in range(len(a)):
        for j in range(len(b)):
            k = 0
            while i + k < len(a) and j + k < len(b) and a[i + k] == b[j + k]:
                k += 1
            best = max(best, k)
    return best


def cmrc_scores(prediction, golds: list) -> tuple[float, float]:
    """``(em, f1)`` of one CMRC 2018 prediction (any value: its ``str()`` is scored)."""
    pred = str(prediction)
    golds = [str(g) for g in golds]

    def bare(s: str) -> str:
        return "".join(c for c in s.lower().strip() if c not in CMRC_MARKS)

    em = max(float(bare(pred) == bare(g)) for g in golds)
    p_toks = _cmrc_tokens(pred)
    f1s = []
    for g in golds:
        g_toks = _cmrc_tokens(g)
        same = _longest_common_run(g_toks, p_toks)
        if same == 0:
            f1s.append(0.0)
            continue
        p = 1.0 * same / len(p_toks)
        r = 1.0 * same / len(g_toks)
        f1s.append((2 * p * r) / (p + r))
    return em, max(f1s)


def _squad_questions(dataset) -> list:
    data = dataset["data"] if isinstance(dataset, dict) else dataset
    return [(qa["id"], qa["answers"]) for article in data
            for paragraph in article["paragraphs"] for qa in paragraph["qas"]]


def _means(rows: list) -> dict:
    em_sum = f1_sum = 0.0
    for em, f1 in rows:
        em_sum += em
        f1_sum += f1
    return {"exact_match": 100.0 * em_sum / len(rows), "f1": 100.0 * f1_sum / len(rows)}


def mlqa(dataset, predictions: dict, lang: str) -> dict:
    """MLQA's ``{"exact_match", "f1"}`` of a loaded dataset (the object or its ``"data"``)
    and ``{id: answer}`` predictions."""
    return _means([mlqa_scores(predictions[q], [a["text"] for a in answers], lang)
                   if q in predictions else (0.0, 0.0)
                   for q, answers in _squad_questions(dataset)])


def drcd(dataset, predictions: dict) -> dict:
    """DRCD's ``{"exact_match", "f1"}``, arguments as for :func:`mlqa`."""
    return _means([drcd_scores(predictions[q], [a["text"] for a in answers])
                   if q in predictions else (0.0, 0.0)
                   for q, answers in _squad_questions(dataset)])


def cmrc(dataset, predictions: dict) -> dict:
    """CMRC 2018's ``AVERAGE, F1, EM, TOTAL, SKIP`` of loaded data in either form."""
    data = dataset["data"] if isinstance(dataset, dict) and "data" in dataset else dataset
    rows, skip = [], 0
    for passage in data:
        # CMRC's own form: a passage without "paragraphs" is its own paragraph
        paras = passage["paragraphs"] if "paragraphs" in passage else [passage]  # noqa: SIM401
        for para in paras:
            for qa in para["qas"]:
                qid = qa["id"] if "id" in qa else qa["query_id"]
                golds = [a["text"] if isinstance(a, dict) else a for a in qa["answers"]]
                if qid in predictions:
                    rows.append(cmrc_scores(predictions[qid], golds))
                else:
                    rows.append((0.0, 0.0))
                    skip += 1
    means = _means(rows)
    em, f1 = means["exact_match"], means["f1"]
    return {"AVERAGE": (em + f1) * 0.5, "F1": f1, "EM": em, "TOTAL": len(rows), "SKIP": skip}
