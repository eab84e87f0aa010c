"""The specification: DPR's top-k retrieval accuracy, as Pyserini's
``evaluate_dpr_retrieval.py`` (after DPR's ``qa_validation.py``) computes it.

Plain Python, written to be read; :mod:`qafast.dpr_eval` returns the same numbers and
``tests/test_dpr.py`` checks it against this module. The rules:

The retrieval file
    A JSON object ``{qid: {"question": ..., "answers": [str, ...], "contexts": [ctx, ...]}}``;
    the contexts are in rank order, each an object with a ``text`` and perhaps a
    ``has_answer``. Only the first ``max(topk)`` contexts are looked at.

A context's hit
    When the context has a ``has_answer`` field, its truth value (in Python's sense) is the
    hit and the text is not read. Otherwise the passage is the second line of ``text``
    (``text.split("\\n")[1]``: the first line is the title; a text without a newline is an
    error) and it is a hit when one of the answers occurs in it.

An answer occurs in a passage (token mode, the default)
    Both are put in Unicode normal form NFD and tokenized: a token is a maximal run of
    letters, numbers and marks (``\\p{L}\\p{N}\\p{M}``), or else any single character that is
    not a separator or "other" (``\\p{Z}``, ``\\p{C}``: spaces, controls, format characters,
    unassigned code points...), which belongs to no token. Each token is lowercased by
    ``str.lower`` on its own. The answer occurs when its tokens are a run of consecutive
    passage tokens; an answer of no tokens occurs in every passage.

An answer occurs in a passage (regex mode)
    The NFD answer is compiled as a pattern of Python's ``re`` with IGNORECASE, UNICODE and
    MULTILINE; it occurs when the pattern is found in the NFD passage. An answer that does
    not compile occurs nowhere.

The result
    A question's first hit is the rank (from 0) of its first context that is a hit among the
    first ``max(topk)``; for each k it counts 1 when that rank is below k. ``Top{k}
    accuracy`` is the mean of the counts over the questions (NaN when there are none),
    printed as ``f"Top{k}\\taccuracy: {mean:.4f}"``, one line per entry of ``topk`` in its
    order (a repeated k is printed again).

The character classes come from the ``regex`` module, as in the script, when it is
installed; without it, from :func:`unicodedata.category` (the same classes except for code
points that Python's Unicode database is too old to know).
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["char_class", "first_hit", "has_answer", "accuracies", "tokens"]

_CLASSES: dict[str, int] = {}


def char_class(c: str) -> int:
    """0: no token (separator or other), 1: letter/number/mark, 2: a token of its own."""
    k = _CLASSES.get(c)
    if k is None:
        try:
            import regex
        except ImportError:
            cat = unicodedata.category(c)[0]
            k = 1 if cat in "LNM" else 0 if cat in "ZC" else 2
        else:
            flags = regex.IGNORECASE | regex.UNICODE | regex.MULTILINE
            if regex.fullmatch(r"[\p{L}\p{N}\p{M}]", c, flags=flags):
                k = 1
            elif regex.fullmatch(r"[^\p{Z}\p{C}]", c, flags=flags):
                k = 2
            else:
                k = 0
        _CLASSES[c] = k
    return k


def tokens(text: str, *, classify=char_class) -> list[str]:
    """The lowercased tokens of ``text`` (already in NFD); ``classify`` gives a character's
    class as :func:`char_class` does (the engine passes its table's lookup)."""
    out: list[str] = []
    run = ""
    for c in text:
        k = classify(c)
        if k == 1:
            run += c
            continue
        if run:
            out.append(run.lower())
            run = ""
        if k == 2:
            out.append(c.lower())
    if run:
        out.append(run.lower())
    return out


def has_answer(passage: str, answers: list[str], *, regex: bool = False) -> bool:
    """Whether one of ``answers`` occurs in ``passage``."""
    passage = unicodedata.normalize("NFD", passage)
    if regex:
        for answer in answers:
            try:
                pattern = re.compile(unicodedata.normalize("NFD", answer),
                                     re.IGNORECASE | re.UNICODE | re.MULTILINE)
            except Exception:
                continue
            if pattern.search(passage) is not None:
                return True
        return False
    words = tokens(passage)
    for answer in answers:
        want = tokens(unicodedata.normalize("NFD", answer))
        for i in range(len(words) - len(want) + 1):
            if words[i:i + len(want)] == want:
                return True
    return False


def first_hit(entry: dict, max_k: int, *, regex: bool = False) -> int:
    """The rank of the first hit among the first ``max_k`` contexts, or ``max_k``."""
    for rank, ctx in enumerate(entry["contexts"]):
        if rank >= max_k:
            break
        if "has_answer" in ctx:
            if ctx["has_answer"]:
                return rank
            continue
        if has_answer(ctx["text"].split("\n")[1], entry["answers"], regex=regex):
            return rank
    return max_k


def accuracies(retrieval: dict, topk: list[int], *, regex: bool = False) -> dict[int, float]:
    """``{k: Top-k accuracy}``."""
    max_k = max(topk)
    hits = [first_hit(entry, max_k, regex=regex) for entry in retrieval.values()]
    n = len(hits)
    return {k: (sum(1 for h in hits if h < k) / n if n else float("nan")) for k in topk}
