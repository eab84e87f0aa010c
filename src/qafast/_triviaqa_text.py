"""TriviaQA's answer normalizer (:func:`qafast.answers.normalize_triviaqa`), in a module of
its own that imports no numpy: ``qafast triviaqa`` normalizes the human answers it prints
with it, and runs without numpy."""

from __future__ import annotations

import re
import string

from .reference.triviaqa import PUNCTUATION as _TRIVIAQA_PUNCTUATION

__all__ = ["normalize_triviaqa"]

_TQA_TABLE = str.maketrans({c: " " for c in _TRIVIAQA_PUNCTUATION})
_TQA_ASCII_TABLE = bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ" + "".join(
    c for c in sorted(_TRIVIAQA_PUNCTUATION) if c.isascii()).encode(),
    b"abcdefghijklmnopqrstuvwxyz" + b" " * sum(c.isascii() for c in _TRIVIAQA_PUNCTUATION))
_TQA_ARTICLES = re.compile(r"\b(a|an|the)\b")
#: ASCII characters that are neither word characters, whitespace nor punctuation: with none,
#: an ASCII string's tokens after the table are runs of letters and digits, and a token that
#: is an article is exactly what the regex removes
_TQA_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1b\x7f]")
_TQA_ARTICLE_WORDS = frozenset({"a", "an", "the"})
assert "_" in string.punctuation   # so the table also turns "_" into a space


def normalize_triviaqa(s: str) -> str:
    """TriviaQA's ``normalize_answer``: ``_`` and punctuation (ASCII and ``‘’´```) become
    spaces, lowercase, the words a/an/the dropped, whitespace collapsed.

    SQuAD's normalizer deletes punctuation instead, so "rock-n-roll" is one token there and
    three here.

    Examples
    --------
    >>> from qafast.answers import normalize_triviaqa
    >>> normalize_triviaqa("The Rock-n-Roll_Hall’s")
    'rock n roll hall s'
    """
    if s.isascii():
        # bytes.translate lowercases and blanks the punctuation in one table lookup a byte
        t = s.encode().translate(_TQA_ASCII_TABLE).decode()
        if not _TQA_CONTROL.search(t):
            return " ".join([w for w in t.split() if w not in _TQA_ARTICLE_WORDS])
    else:
        t = s.lower().translate(_TQA_TABLE)
    return " ".join(_TQA_ARTICLES.sub(" ", t).split())
