"""The specification: answer metrics (exact match, F1, reader and retriever metrics) in plain Python.

This module is the readable definition of every answer number qafast reports. The compiled path in
:mod:`qafast.answers` is tested against it (``tests/test_answers.py``). It uses only the standard
library and repeats each source's rules step by step, in the same order of operations, so that the
values agree bit for bit. Each rule names its source; the code is written afresh from reading them.

Sources
-------
* **SQuAD v1.1 and v2.0**, the official evaluation scripts (``evaluate-v1.1.py``,
  ``evaluate-v2.0.py``): ``normalize_answer``, ``exact_match_score``/``compute_exact``,
  ``f1_score``/``compute_f1``, ``metric_max_over_ground_truths``.
* **MLQA** (``mlqa_evaluation_v1.py``): per-language articles and all Unicode punctuation.
* **CMRC 2018** (``cmrc2018_evaluate.py`` v6): ``remove_punctuation``, ``mixed_segmentation``
  and the longest-common-substring F1.
* **DRCD**: SQuAD v1.1 with seven full-width punctuation marks removed too, F1 over a bag of
  characters (as its maintainers describe it, DRCKnowledgeTeam/DRCD#6).
* **BioASQ**: lowercase only (``String.toLowerCase`` in the Java tool, default locale).
* **PIAF** reader/retriever metrics (Haystack 0.x ``Finder.eval`` names): see
  :func:`reader_metrics` and :func:`retriever_metrics`.

Empty answers: ``empty_rule``
-----------------------------
The two SQuAD scripts disagree only where a side has no tokens:

* ``"v1"`` (v1.1, MLQA, CMRC, DRCD): F1 is 0 whenever nothing is shared, **including empty vs
  empty**; every reference counts in the max, even one that normalizes to nothing.
* ``"v2"`` (v2.0, Haystack 1.x): when either side has no tokens F1 is ``float(pred == gold)``
  (so empty vs empty is 1); and, before the max, references that normalize to nothing are
  dropped, leaving ``[""]`` if none remain (so a question whose only reference is ``"the"`` or
  that has no reference at all is a no-answer question).

Exact match does not depend on the rule pair by pair (both scripts compare normalized strings);
it depends on it through the v2 dropping of references.
"""

from __future__ import annotations

import functools
import math
import os
import re
import stat
import string
import sys
import unicodedata
from collections import Counter
from typing import Callable, Iterable, Sequence

from .triviaqa import normalize as _normalize_triviaqa

__all__ = [
    "CJK_RANGE", "CMRC_PUNCTUATION", "DRCD_PUNCTUATION", "EMPTY_RULES", "MLQA_LANGUAGES",
    "MLQA_PUNCTUATION", "NORMALIZERS", "SQUAD_PUNCTUATION", "UNITS", "bag_f1", "cmrc_segments",
    "cmrc_split", "nltk_tokens", "plain_word_tokens",
    "exact_match", "exact_match_score", "f1", "f1_score", "get_normalizer", "lcs_f1",
    "lcs_length", "max_over_references", "normalize_bioasq", "normalize_cmrc", "normalize_drcd",
    "normalize_mlqa", "normalize_none", "normalize_squad", "reader_metrics",
    "retriever_metrics", "tokenize", "v2_references",
]

EMPTY_RULES = ("v1", "v2")
UNITS = ("token", "char", "cmrc")

# --------------------------------------------------------------------------------------------
# Normalizers
# --------------------------------------------------------------------------------------------

#: ``string.punctuation``: the 32 ASCII punctuation characters, the only ones SQuAD removes.
SQUAD_PUNCTUATION = frozenset(string.punctuation)

#: DRCD removes these full-width marks as well.
DRCD_PUNCTUATION = SQUAD_PUNCTUATION | frozenset("《》？，。、；：")

#: MLQA: every code point whose Unicode category starts with "P", plus ``string.punctuation``.
#: (MLQA scans ``range(sys.maxunicode)``, which leaves out U+10FFFF, an unassigned code point.)
@functools.lru_cache(maxsize=None)
def mlqa_punctuation() -> frozenset:
    """MLQA's punctuation set (``MLQA_PUNCTUATION``), built on first use: scanning every code
    point takes a fifth of a second, too long to spend on ``import qafast``."""
    return frozenset(
        c for c in map(chr, range(sys.maxunicode)) if unicodedata.category(c).startswith("P")
    ) | SQUAD_PUNCTUATION


def __getattr__(name):
    if name == "MLQA_PUNCTUATION":
        return mlqa_punctuation()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

#: CMRC 2018's ``sp_char``. Its entry "……" is two characters long and is compared with single
#: characters, so it never matches; it is kept to show that.
CMRC_PUNCTUATION = (
    "-", ":", "_", "*", "^", "/", "\\", "~", "`", "+", "=",
    "，", "。", "：", "？", "！", "“", "”", "；", "’", "《", "》", "……", "·", "、",
    "「", "」", "（", "）", "－", "～", "『", "』",
)

#: The basic CJK Unified Ideographs block as CMRC and MLQA test it: ``[\u4e00-\u9fa5]``.
CJK_RANGE = ("\u4e00", "\u9fa5")

_SQUAD_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)

MLQA_ARTICLES = {
    "en": r"\b(a|an|the)\b",
    "es": r"\b(un|una|unos|unas|el|la|los|las)\b",
    "hi": None,
    "vi": r"\b(của|là|cái|chiếc|những)\b",
    "de": r"\b(ein|eine|einen|einem|eines|einer|der|die|das|den|dem|des)\b",
    # MLQA's Arabic pattern; its first branch can never match ("^" after a character), so
    # every "ال" is replaced, even inside a word.
    "ar": "\\sال^|ال",
    "zh": None,
}
#: The answer languages MLQA knows.
MLQA_LANGUAGES = tuple(MLQA_ARTICLES)


def normalize_squad(s: str) -> str:
    """SQuAD's ``normalize_answer`` (identical in v1.1 and v2.0).

    Lowercase (``str.lower``, full Unicode: "İ" becomes two code points), drop the 32 ASCII
    punctuation characters (joining their neighbours: "don't" -> "dont"), replace the whole
    words a/an/the by a space (``\\b`` is Unicode-aware), then ``" ".join(s.split())`` (every
    Unicode whitespace, NBSP included). Non-ASCII punctuation such as "–" or "“" stays.
    """
    s = s.lower()
    s = "".join(ch for ch in s if ch not in SQUAD_PUNCTUATION)
    s = _SQUAD_ARTICLES.sub(" ", s)
    return " ".join(s.split())


def normalize_drcd(s: str) -> str:
    """DRCD: :func:`normalize_squad` with ``《》？，。、；：`` removed as well."""
    s = s.lower()
    s = "".join(ch for ch in s if ch not in DRCD_PUNCTUATION)
    s = _SQUAD_ARTICLES.sub(" ", s)
    return " ".join(s.split())


def _is_cjk(ch: str) -> bool:
    return CJK_RANGE[0] <= ch <= CJK_RANGE[1]


def mlqa_segments(text: str) -> list:
    """MLQA's ``mixed_segmentation``: each basic-CJK character or punctuation mark is a token,
    the text between them is split on whitespace."""
    out, buf = [], ""
    for ch in text:
        if _is_cjk(ch) or ch in mlqa_punctuation():
            if buf != "":
                out.extend(buf.split())
                buf = ""
            out.append(ch)
        else:
            buf += ch
    if buf != "":
        out.extend(buf.split())
    return out


def normalize_mlqa(s: str, lang: str) -> str:
    """MLQA's ``normalize_answer(s, lang)``.

    Lowercase, drop every Unicode punctuation character (:data:`MLQA_PUNCTUATION`), remove the
    language's articles, then tokenize (whitespace; for ``zh`` each basic-CJK character is a
    token) and join the tokens with single spaces.
    """
    if lang not in MLQA_ARTICLES:
        raise ValueError(f"unknown MLQA language {lang!r}; expected one of {MLQA_LANGUAGES}")
    s = s.lower()
    punctuation = mlqa_punctuation()
    s = "".join(ch for ch in s if ch not in punctuation)
    pattern = MLQA_ARTICLES[lang]
    if pattern is not None:
        s = re.sub(pattern, " ", s)
    tokens = mlqa_segments(s) if lang == "zh" else s.split()
    return " ".join(t for t in tokens if t.strip() != "")


def normalize_cmrc(s: str) -> str:
    """CMRC 2018's ``remove_punctuation``: lowercase, ``strip``, drop :data:`CMRC_PUNCTUATION`.

    Inner whitespace stays, so "北京 大学" and "北京大学" differ; ASCII "." stays too.
    """
    s = s.lower().strip()
    return "".join(ch for ch in s if ch not in CMRC_PUNCTUATION)


def normalize_bioasq(s: str) -> str:
    """BioASQ: lowercase only (no trimming, no punctuation handling)."""
    return s.lower()


def normalize_none(s: str) -> str:
    """No normalization: raw string equality (Haystack 2.x ``AnswerExactMatchEvaluator``)."""
    return s


#: Normalizers by name. ``"mlqa:<lang>"`` names are resolved by :func:`get_normalizer`.
NORMALIZERS: dict = {
    "squad": normalize_squad,
    "drcd": normalize_drcd,
    "cmrc": normalize_cmrc,
    "bioasq": normalize_bioasq,
    "none": normalize_none,
    "triviaqa": _normalize_triviaqa,
}
for _lang in MLQA_LANGUAGES:
    NORMALIZERS[f"mlqa:{_lang}"] = (lambda lang: (lambda s: normalize_mlqa(s, lang)))(_lang)
del _lang


def get_normalizer(normalizer) -> Callable[[str], str]:
    """The normalizing function for a name of :data:`NORMALIZERS`, or a callable itself."""
    if callable(normalizer):
        return normalizer
    if isinstance(normalizer, str):
        fn = NORMALIZERS.get(normalizer)
        if fn is not None:
            return fn
        raise ValueError(
            f"unknown normalizer {normalizer!r}; expected one of {sorted(NORMALIZERS)} "
            "or a callable")
    raise TypeError(f"normalizer must be a name or a callable, not {type(normalizer).__name__}")


# --------------------------------------------------------------------------------------------
# Units
# --------------------------------------------------------------------------------------------

#: Characters nltk's word tokenizer always makes tokens of their own (padded with spaces by
#: rules that never look at their neighbours): its ``[;@#$%&]``, ``[?!]`` and bracket rules.
_ALWAYS_ALONE = frozenset(";@#$%&()[]{}<>?!")

#: What may follow the period that ends a text in the wider class: closing brackets and spaces.
_AFTER_FINAL_PERIOD = frozenset(")]}> ")

#: The contractions the word tokenizer splits that need no apostrophe: the two halves, when
#: the whole word between word boundaries is the key (any case).
_SPLIT_WORDS = {"cannot": ("can", "not"), "gimme": ("gim", "me"), "gonna": ("gon", "na"),
                "gotta": ("got", "ta"), "lemme": ("lem", "me")}

#: The two contractions with an apostrophe inside that the word tokenizer splits: the word
#: before the apostrophe (any case) and the word after it; the second half keeps the apostrophe.
_SPLIT_APOSTROPHE_WORDS = {"d": "ye", "more": "n"}

#: The contractions split only after whitespace (``'t`` and the rest, any case): a text in
#: the class has such whitespace before an apostrophe only where a contraction was just cut.
_SPLIT_AFTER_SPACE = ("'tis", "'twas")

#: Clitics set apart at the end of a token, in the two passes the word tokenizer makes (the
#: second pass sees what the first one left): exact spellings, case as written.
_CLITICS_FIRST = ("'s", "'S", "'m", "'M", "'d", "'D", "'")
_CLITICS_SECOND = ("'ll", "'LL", "'re", "'RE", "'ve", "'VE", "n't", "N'T")

#: nltk releases whose word tokenizer the wider class (see :func:`plain_word_tokens`) was
#: checked against, rule by rule and by property tests. The rules for apostrophes and final
#: periods have changed between releases, so another release gets the narrow class only.
WIDE_CLASS_NLTK_VERSIONS = frozenset({"3.10.4"})

#: Placeholders for the marks the wider class reads in context before the comma rule runs; no
#: text in the class holds them.
_OPENING_QUOTE, _CLOSING_QUOTE, _FINAL_PERIOD = "\x01", "\x02", "\x03"
_PADDED = {_OPENING_QUOTE: " `` ", _CLOSING_QUOTE: " '' ", _FINAL_PERIOD: " . "}


@functools.lru_cache(maxsize=1)
def _installed_nltk_takes_wide_class() -> bool:
    """Whether the installed nltk is one of :data:`WIDE_CLASS_NLTK_VERSIONS`, read from its
    package metadata (importing nltk costs seconds)."""
    from importlib import metadata

    try:
        return metadata.version("nltk") in WIDE_CLASS_NLTK_VERSIONS
    except metadata.PackageNotFoundError:
        return False


@functools.lru_cache(maxsize=4096)
def _plain_word_char(ch: str) -> bool:
    """Whether ``ch`` is a word character (``\\w`` of :mod:`re`, which is ``str.isalnum()``
    besides ``_``) that matches no ASCII letter case-insensitively unless it is one: a
    non-ASCII letter whose case mappings reach ASCII (``ſ`` ~ ``s``, the Kelvin sign ~ ``k``,
    dotless ``ı`` ~ ``i``, ligatures) could spell a contraction to a ``(?i)`` pattern.

    Nor an "other number" (category ``No``: ``²``, ``½``, ``①``): nltk 3.10 compiles its
    rules with the ``regex`` module, whose ``\\w`` (letters, marks, decimal digits,
    connectors) leaves them out where :mod:`re`'s takes them in, so ``²'s`` and ``²cannot``
    split differently by release. Every other character ``str.isalnum()`` admits is a word
    character to both."""
    if not ch.isalnum():
        return False
    if ch.isascii():
        return True
    if unicodedata.category(ch) == "No":
        return False
    return not any(c.isascii() for c in ch.lower() + ch.upper() + ch.casefold())


def _final_period(text: str) -> int:
    """The index of the ``.`` that ends ``text`` before any closing brackets and spaces, or
    -1 when there is none."""
    j = len(text) - 1
    while j >= 0 and text[j] in _AFTER_FINAL_PERIOD:
        j -= 1
    return j if j >= 0 and text[j] == "." else -1


# --------------------------------------------------------------------------------------------
# Sentence breaks inside a text: the Punkt decision, written from nltk's description of it
# --------------------------------------------------------------------------------------------

#: Where nltk looks for its data after ``NLTK_DATA`` and ``~/nltk_data`` on POSIX systems,
#: relative to ``sys.prefix`` first and then absolute (``nltk.data.path``'s defaults).
_NLTK_PREFIX_DATA_DIRS = (("nltk_data",), ("share", "nltk_data"), ("lib", "nltk_data"))
_NLTK_SYSTEM_DATA_DIRS = ("/usr/share/nltk_data", "/usr/local/share/nltk_data",
                          "/usr/lib/nltk_data", "/usr/local/lib/nltk_data")

#: The English Punkt model inside a data directory, and the four files nltk reads from it.
_PUNKT_ENGLISH = ("tokenizers", "punkt_tab", "english")
_PUNKT_FILES = ("abbrev_types.txt", "collocations.tab", "sent_starters.txt",
                "ortho_context.tab")

#: Line boundaries other than ``\n`` (``str.splitlines``'s), and the byte order mark: nltk
#: reads the model files by ``str.splitlines`` and strips one final ``\n`` from each line, so a
#: file holding any of these is left to nltk rather than read here in another way.
_UNUSUAL_LINE_MARKS = frozenset("\r\v\f\x1c\x1d\x1e\x85\u2028\u2029\ufeff")

#: Punkt's orthographic context flags: a word type seen with an upper-case first letter at the
#: beginning of a sentence, in the middle of one, or where it could not tell; then the same
#: three with a lower-case first letter.
_ORTHO_BEGIN_UPPER, _ORTHO_MIDDLE_UPPER, _ORTHO_UNKNOWN_UPPER = 1 << 1, 1 << 2, 1 << 3
_ORTHO_BEGIN_LOWER, _ORTHO_MIDDLE_LOWER, _ORTHO_UNKNOWN_LOWER = 1 << 4, 1 << 5, 1 << 6
_ORTHO_UPPER = _ORTHO_BEGIN_UPPER | _ORTHO_MIDDLE_UPPER | _ORTHO_UNKNOWN_UPPER
_ORTHO_LOWER = _ORTHO_BEGIN_LOWER | _ORTHO_MIDDLE_LOWER | _ORTHO_UNKNOWN_LOWER

#: Characters that end a Punkt word token wherever they stand (its "non-word" characters; the
#: period is not one of them).
_PUNKT_NON_WORD = frozenset(")\";}]*:@'({[?!\u2018\u2019\u201c\u201d\xab\xbb")

#: Characters that, right before the word ending in a mid-text period, make that word a Punkt
#: token of its own: each ends the token before it and is a token alone (it may not start a
#: longer one).
_PUNKT_LONE_BEFORE = frozenset("()[]{}\";@")

#: The tokens Punkt never takes for the start of a sentence.
_PUNKT_PUNCTUATION = frozenset(";:,.!?")

#: The type Punkt gives a number token (``1.``, ``3.5``, ``1,000``).
_PUNKT_NUMBER = "##number##"


class _PunktModel:
    """The four parameters of a Punkt model, as nltk reads them from its ``punkt_tab`` files.

    Attributes
    ----------
    abbreviations : frozenset of str
        Word types (lowercase, without their final period) that are abbreviations.
    collocations : frozenset of tuple
        Pairs of word types that a period between them does not separate.
    sentence_starters : frozenset of str
        Word types that often start a sentence.
    orthography : dict of str to int
        The orthographic context flags of each word type.
    """

    __slots__ = ("abbreviations", "collocations", "sentence_starters", "orthography")

    def __init__(self, abbreviations, collocations, sentence_starters, orthography):
        self.abbreviations = abbreviations
        self.collocations = collocations
        self.sentence_starters = sentence_starters
        self.orthography = orthography


def _nltk_data_roots() -> tuple | None:
    """The directories nltk searches for its data, in its order, as ``nltk.data.path`` starts
    out in this environment; None where that is not known without importing nltk (not a
    POSIX system), or where an imported nltk searches other directories or trusts data it
    would otherwise refuse."""
    if os.name != "posix":
        return None
    env = os.environ
    roots = _default_nltk_data_roots(env.get("NLTK_DATA", ""), env.get("HOME"),
                                     "APPENGINE_RUNTIME" in env, sys.prefix)
    data = sys.modules.get("nltk.data")
    if data is not None and list(getattr(data, "path", ())) != list(roots):
        return None   # the user changed nltk.data.path (or NLTK_DATA since nltk was imported)
    pathsec = sys.modules.get("nltk.pathsec")
    if pathsec is not None and getattr(pathsec, "ENFORCE", None) is not True:
        return None
    return roots


@functools.lru_cache(maxsize=8)
def _default_nltk_data_roots(nltk_data: str, home: str | None, appengine: bool,
                             prefix: str) -> tuple:
    """``nltk.data.path`` as nltk sets it up on a POSIX system for these values of
    ``NLTK_DATA``, ``HOME``, whether ``APPENGINE_RUNTIME`` is set, and ``sys.prefix`` (the
    arguments are the cache key; the home directory is read from the environment)."""
    roots = [os.path.expanduser(d) for d in nltk_data.split(os.pathsep) if d]
    if not appengine and os.path.expanduser("~/") != "~/":
        roots.append(os.path.expanduser("~/nltk_data"))
    roots += [os.path.join(prefix, *parts) for parts in _NLTK_PREFIX_DATA_DIRS]
    roots += _NLTK_SYSTEM_DATA_DIRS
    return tuple(roots)


def _private(st) -> bool:
    """Whether a file's status says only its owner, this account or root, can write it: what
    nltk requires of every directory and file it reads data from."""
    return st.st_uid in (os.geteuid(), 0) and not st.st_mode & 0o022


def _read_lines(path: str) -> list | None:
    """The lines of a model file as nltk reads them (UTF-8, each without its final ``\\n``),
    or None for a file nltk might read otherwise or not at all."""
    try:
        with open(path, "rb") as f:
            text = f.read().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if not _UNUSUAL_LINE_MARKS.isdisjoint(text):
        return None
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()    # the text ended with a line break, or was empty
    return lines


def _punkt_model_dir(roots: tuple) -> str | None:
    """The English Punkt model directory nltk would load for the data roots ``roots``, or
    None when nltk would find none or when its choice is not certain here (a zip archive
    among the roots; a directory or file on the way that nltk would refuse)."""
    try:
        return _find_punkt_model_dir(roots)
    except OSError:   # a directory that cannot be read or judged: nltk gives its own answer
        return None


def _find_punkt_model_dir(roots: tuple) -> str | None:
    """:func:`_punkt_model_dir`, which see; raises OSError where a path cannot be judged."""
    for root in roots:
        if os.path.isfile(root):
            if root.endswith(".zip"):
                return None     # nltk looks inside the archive: leave the search to it
            continue
        if not os.path.isdir(root):
            continue
        if not _private(os.stat(root)):
            continue            # nltk refuses a root another account can write to
        model = os.path.join(root, *_PUNKT_ENGLISH)
        if not os.path.exists(model + os.sep):
            continue
        if os.path.realpath(model) != os.path.abspath(model):
            return None         # links on the way: nltk judges each hop; leave it to nltk
        way = root
        for part in _PUNKT_ENGLISH:
            way = os.path.join(way, part)
            if not _private(os.stat(way)):
                return None
        try:
            entries = os.listdir(model)
        except OSError:
            return None
        for name in entries:
            st = os.lstat(os.path.join(model, name))
            if not stat.S_ISREG(st.st_mode) or not _private(st):
                return None     # nltk judges the whole model directory, entry by entry
        return model
    return None


@functools.lru_cache(maxsize=4)
def _load_punkt_model(roots: tuple) -> _PunktModel | None:
    """The English Punkt model nltk would load for the data roots ``roots`` (read once per
    process and set of roots), or None where qafast leaves finding or reading it to nltk."""
    model = _punkt_model_dir(roots)
    if model is None:
        return None
    files = {}
    for name in _PUNKT_FILES:
        lines = _read_lines(os.path.join(model, name))
        if lines is None:
            return None
        files[name] = lines
    orthography: dict = {}
    try:
        for line in files["ortho_context.tab"]:
            word, flags = line.split("\t")   # nltk's reading: exactly two fields, int()
            orthography[word] = int(flags)
    except ValueError:
        return None             # nltk raises on such a file: leave the message to it
    return _PunktModel(
        abbreviations=frozenset(files["abbrev_types.txt"]),
        collocations=frozenset(tuple(line.split("\t"))
                               for line in files["collocations.tab"]),
        sentence_starters=frozenset(files["sent_starters.txt"]),
        orthography=orthography)


def _punkt_english() -> _PunktModel | None:
    """The English Punkt model ``nltk.word_tokenize`` would use, read without importing nltk;
    None where qafast leaves the sentence breaks to nltk."""
    roots = _nltk_data_roots()
    return None if roots is None else _load_punkt_model(roots)


def _punkt_type(token: str) -> str:
    """Punkt's type of a token that starts with a word character: lowercase, and
    :data:`_PUNKT_NUMBER` for a number (a decimal digit, then digits, ``,``, ``.`` and
    ``-``)."""
    low = token.lower()
    if low[0].isdecimal() and all(c.isdecimal() or c in ",.-" for c in low):
        return _PUNKT_NUMBER
    return low


def _punkt_token_end(text: str, start: int) -> int:
    """Where the Punkt word token that starts at ``text[start]`` (a word character of a text
    in the class) ends: before a space, a non-word character, or a comma that ends a word
    (followed by the end, a space or a non-word character)."""
    n = len(text)
    k = start + 1
    while k < n:
        c = text[k]
        if c == " " or c in _PUNKT_NON_WORD:
            break
        if c == "," and (k + 1 == n or text[k + 1] == " " or text[k + 1] in _PUNKT_NON_WORD):
            break
        k += 1
    return k


def _punkt_abbreviation(token: str, model: _PunktModel) -> bool:
    """Punkt's first pass on a token ending in one period: an abbreviation when the word
    before the period, lowercased (or its part after the last hyphen), is one of the model's;
    otherwise a sentence break."""
    word = token[:-1].lower()
    return word in model.abbreviations or word.split("-")[-1] in model.abbreviations


def _punkt_starts_sentence(token: str, kind: str, model: _PunktModel) -> bool | None:
    """Punkt's orthographic heuristic on the token after a period: True, False, or None for
    "unknown"."""
    if token in _PUNKT_PUNCTUATION:
        return False
    context = model.orthography.get(kind, 0)
    if token[0].isupper() and context & _ORTHO_LOWER and not context & _ORTHO_MIDDLE_UPPER:
        return True
    if token[0].islower() and (context & _ORTHO_UPPER or not context & _ORTHO_BEGIN_LOWER):
        return False
    return None


def _punkt_breaks_after(token: str, following: str, model: _PunktModel) -> bool:
    """Whether Punkt ends a sentence at the period that ends ``token`` (a word character,
    then word characters and periods) when the next token is ``following`` (it starts with a
    word character, or is a lone ``?`` or ``!``). See :func:`plain_word_tokens` for the rules and why they are all."""
    abbreviation = _punkt_abbreviation(token, model)
    kind = _punkt_type(token)
    if len(kind) > 1 and kind.endswith("."):
        kind = kind[:-1]
    next_kind = _punkt_type(following)
    if (following.endswith(".") and not _punkt_abbreviation(following, model)
            and len(next_kind) > 1 and next_kind.endswith(".")):
        next_kind = next_kind[:-1]   # the next token is itself a sentence break so far
    if (kind, next_kind) in model.collocations:
        return False
    initial = len(token) == 2 and not token[0].isdecimal()
    if abbreviation and not initial:
        if _punkt_starts_sentence(following, next_kind, model) is True:
            return True
        if following[0].isupper() and next_kind in model.sentence_starters:
            return True
    if initial or kind == _PUNKT_NUMBER:
        starts = _punkt_starts_sentence(following, next_kind, model)
        if starts is False:
            return False
        if (starts is None and initial and following[0].isupper()
                and not model.orthography.get(next_kind, 0) & _ORTHO_LOWER):
            return False
    return not abbreviation


def plain_word_tokens(text: str, *, wide: bool | None = None) -> list | None:
    """``nltk.word_tokenize(text)`` computed without nltk for the runs where that is provably
    the same; None for every other text (the caller then asks nltk).

    The narrow class, exact for every nltk 3 release: every character of ``text`` is

    * a space ``" "``;
    * a word character (a letter or digit of any script, ``str.isalnum()``; not ``_``, not a
      non-ASCII letter whose case mappings reach ASCII, and not an "other number" such as
      ``²``, see :func:`_plain_word_char`);
    * ``.`` with a word character on both sides (``3.5``, ``u.s``);
    * one of ``;@#$%&()[]{}<>``, or ``,``;
    * one ``?`` or ``!``, only as the last character other than spaces.

    The wide class, taken when ``wide`` is true (by default: when the installed nltk is one of
    :data:`WIDE_CLASS_NLTK_VERSIONS`, read without importing it), also admits

    * a *final period*: one ``.`` followed by nothing but closing brackets ``)]}>`` and spaces
      (``u.s.``, ``apple inc.``, ``(see x.)``), when the text has no ``?`` or ``!``;
    * an *apostrophe* ``'`` right after a word character and followed by a word character, a
      space, the final period or nothing, at most one in each run of word characters and
      apostrophes (``don't``, ``it's``, ``o'neill``, ``james'``; not ``'tis`` nor ``x''``);
    * an ASCII *double quote* ``"`` not right after another one;
    * a *period inside the text*: a ``.`` right after a word character, followed by one or
      more spaces and then a word character, or by the ``?`` or ``!`` that ends the text
      (right after it or after spaces), where the word it ends (word characters and periods)
      starts the text or follows a space or one of ``()[]{}";@`` (``mr. smith``,
      ``j. k. rowling``, ``(e.g. nba``, ``3 p.m.!``); the run of non-spaces after it may
      hold no period before a character other than a word character; and the English Punkt
      model must be one qafast reads as nltk would (see
      :func:`_punkt_model_dir`: found under ``NLTK_DATA`` or nltk's default data directories,
      not in an archive, in directories and files nltk's data checks accept; with nltk
      already imported, only while ``nltk.data.path`` is still its default).

    Why that is exact, rule by rule (the narrow class needs only the rules that every nltk 3
    release shares; the others were read in the releases listed and are checked by property
    tests against them):

    * *Sentences.* ``word_tokenize`` first splits the text with the Punkt sentence splitter,
      whose only candidate breaks are a ``.``, ``?`` or ``!`` followed by whitespace and more
      text or by one of its non-word marks (``)";}]*:@'({[?!`` and curly quotes). A ``.``
      between word characters is followed by a word character and a ``?``/``!`` by nothing
      but spaces: no candidate. The final period may be one when brackets follow it, but the
      word tokenizer sets a final period and the closing brackets after it apart whether or
      not the text is cut there, and the brackets are tokens of their own either way; so
      without periods inside it the text acts as one sentence. Each sentence is then given
      to the word tokenizer alone, by the rules below (a period inside a sentence, followed
      by a space, ``?`` or ``!``, is no final period and stays in its token).
    * *Periods inside the text* are the other candidates. Punkt asks of each whether the
      piece from the word before it to the run of non-spaces after it holds a sentence break
      before its last token. Its own word splitter cuts a token at whitespace, at a non-word
      mark, and at a comma that ends a word; a word ending in the period and starting at the
      text's start, after a space or after one of ``()[]{}";@`` (each a token alone that ends
      the one before) is therefore one token ``w.``, and the token after it is the lone
      ``?``/``!``, or runs from the word character after the spaces to the first space,
      non-word mark or word-ending comma. No other token of the piece can be a break with a
      token after it: a ``?``/``!`` ends the text, and the only other period that can end a
      token before another one is one before a mark, which the run after a candidate may
      not hold. Punkt's tokens and decisions are those of the piece; candidates are
      separated by whitespace, so none of its overlapping-match rules applies; the next
      sentence starts with a word character, ``?`` or ``!``, so no closing marks are moved
      back to the sentence before; and a final period before closing brackets stays harmless
      as argued above.
      The decision, with the model's abbreviations, collocations, sentence starters and
      orthographic contexts, the *type* of a token being its lowercase, or ``##number##``
      for a decimal digit followed by digits, ``,``, ``.`` and ``-``:

      1. ``w.`` is an abbreviation when ``w`` lowercased (or its part after the last hyphen)
         is one of the model's, else a break so far; the same first reading of the next
         token, when it too ends in a period, decides whether its type keeps that period.
      2. A collocation of the two types (``w``'s without its period): no break.
      3. An abbreviation that is not an initial (one non-digit word character and the
         period) becomes a break when the orthographic heuristic says the next token starts
         a sentence (it begins upper-case, its type was seen lower-case and never upper-case
         inside a sentence), or when it begins upper-case and its type is a sentence starter.
      4. An initial, or a number, becomes no break when the heuristic says the next token
         does not start a sentence (it is one of ``;:,.!?``, or begins lower-case and its
         type was seen upper-case, or never lower-case at a sentence's start); an initial
         too when the heuristic cannot
         tell, the next token begins upper-case and its type was never seen lower-case.
      5. Otherwise the first reading stands: a break unless ``w.`` is an abbreviation.

      A break ends a sentence right after the period; the next starts at the token after the
      spaces. CMRC lowercases the text first, which in most text leaves no token beginning
      upper-case, so that rule 3 and the second half of rule 4 never fire and the heuristic
      answers only "not a sentence start" or "cannot tell"; but some characters are
      upper-case and their own lowercase (``ℂ``, the mathematical capitals), and callers of
      ``unit='cmrc'`` or of this function may pass any text, so the case rules are kept.
    * *Double quotes.* A ``"`` that starts the text or follows a space or an opening bracket
      ``([{<`` is an opening quote, the token ````` ``; any other is a closing quote, the token
      ``''``. Both are set apart. (Two in a row are left out: a first one opening the text is
      padded before the second is read, which makes the second an opening one too.)
    * *Final period.* A ``.`` ending the text before closing brackets and spaces, with
      something other than a ``.`` before it, is set apart; everything before it is
      tokenized as if the text ended there, with whitespace after it.
    * *Commas.* A comma followed by a character that is not a decimal digit is set apart and
      that character is kept after it unexamined (the rule matches the two together, left to
      right, without overlap: of ``,,a`` only the first comma is set apart); a comma ending the
      text is set apart; a comma before a decimal digit stays in its token (``1,000``). The
      quotes and the final period above count as the characters they are.
    * *Always alone.* Each of ``;@#$%&?!`` and the brackets becomes a token of its own.
    * *Clitics.* After those rules the text is cut at whitespace; at the end of each piece,
      in two passes, a clitic with something other than an apostrophe before it is set apart:
      first one of ``'s 'S 'm 'M 'd 'D`` or a lone ``'``, then, on what the first pass left,
      one of ``'ll 'LL 're 'RE 've 'VE n't N'T``. An
      apostrophe elsewhere stays in its token (``o'neill``). The rules that read an apostrophe
      as an opening quote need a non-word character before it, which the class excludes; with
      one apostrophe to a word, the lone apostrophe set apart before a space earlier in the
      tokenizer leaves no clitic for these passes to find, so the two orders agree.
    * *Contractions.* Among the words between word boundaries, ``cannot``, ``gimme``,
      ``gonna``, ``gotta`` and ``lemme`` are split in two, and ``wanna`` too when whitespace
      follows it (so not in ``wanna,1``); ``d'ye`` and ``more'n`` (any case) are cut before
      the apostrophe. ``'tis`` and ``'twas`` are cut after ``'t`` only with whitespace
      before them, which in the class (an apostrophe comes after a word character) happens
      only where one of those contractions was just cut, as in ``cannot'tis``.
    * The tokens are what lies between whitespace.
    """
    if wide is None:
        wide = _installed_nltk_takes_wide_class()
    n = len(text)
    final = _final_period(text) if wide else -1
    seen_end = False        # a ? or ! was met: only spaces may follow
    word_apostrophe = False  # the current run of word characters and apostrophes holds one
    inner: list = []         # periods followed by a space and more text
    for i, ch in enumerate(text):
        if ch == " ":
            word_apostrophe = False
            continue
        if seen_end:
            return None
        if _plain_word_char(ch):
            continue
        if ch in "?!":
            if final >= 0:
                return None
            seen_end = True
        elif ch == ".":
            if i == final or (0 < i < n - 1 and _plain_word_char(text[i - 1])
                              and _plain_word_char(text[i + 1])):
                pass
            elif (wide and 0 < i < n - 1 and text[i + 1] in " ?!"
                  and _plain_word_char(text[i - 1])):
                inner.append(i)   # a period inside the text: Punkt decides (see below)
            else:
                return None
        elif ch == "'":
            if not wide or word_apostrophe or i == 0 or not _plain_word_char(text[i - 1]):
                return None
            if not (i == n - 1 or i + 1 == final or text[i + 1] == " "
                    or _plain_word_char(text[i + 1])):
                return None
            word_apostrophe = True
            continue
        elif ch == '"':
            if not wide or (i > 0 and text[i - 1] == '"'):
                return None
        elif ch != "," and ch not in _ALWAYS_ALONE:
            return None
        word_apostrophe = False
    if not inner:
        return _treebank_tokens(text, wide, final)
    sentences = _punkt_sentences(text, inner)
    if sentences is None:
        return None
    out: list = []
    for sentence in sentences:
        out += _treebank_tokens(sentence, True, _final_period(sentence))
    return out


def _punkt_sentences(text: str, inner: list) -> list | None:
    """The sentences Punkt cuts ``text`` (a text of the wide class but for the periods at
    ``inner``, each after a word character and before a space, ``?`` or ``!``) into, or None
    where qafast does not decide them: see :func:`plain_word_tokens`."""
    n = len(text)
    model = _punkt_english()
    if model is None:
        return None
    sentences: list = []
    start = 0
    for i in inner:
        after = i + 1
        while after < n and text[after] == " ":
            after += 1
        if after == n:
            return None
        if text[after] in "?!":
            following = text[after]     # it ends the text (only spaces may follow it)
        elif _plain_word_char(text[after]):
            run_end = text.find(" ", after)
            run = text[after:run_end if run_end >= 0 else n]
            if any(c == "." and not _plain_word_char(run[k + 1])
                   for k, c in enumerate(run[:-1])):
                return None   # a period before a mark in the run after: a break of its own
            following = text[after:_punkt_token_end(text, after)]
        else:
            return None
        begin = i
        while begin > 0 and (_plain_word_char(text[begin - 1]) or text[begin - 1] == "."):
            begin -= 1
        if begin > 0 and text[begin - 1] != " " and text[begin - 1] not in _PUNKT_LONE_BEFORE:
            return None
        if _punkt_breaks_after(text[begin:i + 1], following, model):
            sentences.append(text[start:i + 1])
            start = after
    sentences.append(text[start:])
    return sentences


def _treebank_tokens(text: str, wide: bool, final: int) -> list:
    """The word tokenizer's tokens of one sentence ``text`` of the class (``final``: the index
    of its final period, -1 for none); see :func:`plain_word_tokens`."""
    n = len(text)
    if wide and (final >= 0 or '"' in text):
        marked = list(text)
        if final >= 0:
            marked[final] = _FINAL_PERIOD
        for i, ch in enumerate(text):
            if ch == '"':
                opening = i == 0 or text[i - 1] in " ([{<"
                marked[i] = _OPENING_QUOTE if opening else _CLOSING_QUOTE
        text = "".join(marked)
    # the comma rule first: it decides which character after a comma is left alone
    spaced: list = []
    i = 0
    while i < n:
        ch = text[i]
        if ch == "," and (i == n - 1 or not text[i + 1].isdecimal()):
            spaced.append(" , ")
            if i < n - 1:
                spaced.append(text[i + 1] if text[i + 1] != "," else ",")
                i += 2
                # a comma taken here as "the character after a comma" is set apart still
                # when it ends the text (the rule for a final comma comes next)
                if i == n and spaced[-1] == ",":
                    spaced[-1] = " , "
                continue
            i += 1
            continue
        spaced.append(ch)
        i += 1
    out: list = []
    padded = "".join(f" {c} " if c in _ALWAYS_ALONE else _PADDED.get(c, c)
                     for c in "".join(spaced))
    for token in padded.split():
        for piece in (_peel_clitics(token) if wide and "'" in token else (token,)):
            out.extend(_split_contractions(piece))
    return out


def _peel_clitics(token: str) -> list:
    """``token`` (no whitespace in it) with the clitics at its end set apart, in the word
    tokenizer's two passes (see :func:`plain_word_tokens`)."""
    tail: list = []
    for clitics in (_CLITICS_FIRST, _CLITICS_SECOND):
        for clitic in clitics:
            cut = len(token) - len(clitic)
            if cut > 0 and token.endswith(clitic) and token[cut - 1] != "'":
                tail.insert(0, token[cut:])
                token = token[:cut]
                break
    return [token, *tail]


def _split_contractions(token: str) -> list:
    """The pieces of one token (no whitespace in it) after the contractions that are whole
    words: each maximal run of word characters that is a contraction is cut in two (``wanna``
    only at the end of the token, where whitespace follows it); ``d'ye`` and ``more'n`` are
    cut before the apostrophe."""
    low = token.lower()
    if "nn" not in low and "mm" not in low and "tt" not in low and "'" not in low:
        return [token]   # every contraction here has a double letter or an apostrophe
    pieces: list = []
    start = 0      # where the text not yet emitted begins
    k = 0
    n = len(token)
    while k < n:
        if not token[k].isalnum():
            k += 1
            continue
        end = k
        while end < n and token[end].isalnum():
            end += 1
        word = token[k:end].lower()
        halves = _SPLIT_WORDS.get(word)
        if halves is None and word == "wanna" and end == n:
            halves = ("wan", "na")
        after = _SPLIT_APOSTROPHE_WORDS.get(word)
        if halves is not None:
            cut = k + len(halves[0])
        elif (after is not None and token[end:end + 1] == "'"
              and token[end + 1:end + 1 + len(after)].lower() == after
              and not token[end + 1 + len(after):end + 2 + len(after)].isalnum()):
            cut = end
            end += 1 + len(after)
        else:
            k = end
            continue
        if k > start:
            pieces.append(token[start:k])
        pieces += [token[k:cut], token[cut:end]]
        start = end
        k = end
        # the cut leaves whitespace before what follows, where 'tis and 'twas are split too
        for rest in _SPLIT_AFTER_SPACE:
            stop = end + len(rest)
            if token[end:stop].lower() == rest and not token[stop:stop + 1].isalnum():
                pieces += [token[end:end + 2], token[end + 2:stop]]
                start = k = stop
                break
    if start < n:
        pieces.append(token[start:])
    return pieces


def nltk_tokens(text: str) -> list:
    """``nltk.word_tokenize(text)``; nltk is imported only for text outside the class
    :func:`plain_word_tokens` decides (whitespace alone gives no token)."""
    if text.strip() == "":
        return []  # what nltk.word_tokenize gives for whitespace, without needing nltk
    plain = plain_word_tokens(text)
    if plain is not None:
        return plain
    try:
        import nltk
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError(
            "unit='cmrc' tokenizes non-Chinese text with nltk.word_tokenize, as CMRC 2018 "
            f"does; install nltk (and its punkt data) to score {text!r}") from None
    return nltk.word_tokenize(text)


def cmrc_segments(s: str) -> list:
    """CMRC 2018's ``mixed_segmentation(s, rm_punc=True)``.

    Lowercase and strip; then :func:`cmrc_split`.
    """
    return cmrc_split(s.lower().strip())


def cmrc_split(s: str) -> list:
    """The tokens of the ``"cmrc"`` unit: lowercase (not strip); skip :data:`CMRC_PUNCTUATION`;
    each basic-CJK character is a token; each run of other characters goes through
    ``nltk.word_tokenize`` (whitespace-only runs give no token, which needs no nltk).

    Applied to :func:`normalize_cmrc`'s output this is :func:`cmrc_segments` of the original
    string: the script strips before it drops punctuation, so whitespace the punctuation
    uncovers stays, and nltk reads a quote after it as a closing one.
    """
    s = s.lower()
    out, buf = [], ""
    for ch in s:
        if ch in CMRC_PUNCTUATION:
            continue
        if _is_cjk(ch):
            if buf != "":
                out.extend(nltk_tokens(buf))
                buf = ""
            out.append(ch)
        else:
            buf += ch
    if buf != "":
        out.extend(nltk_tokens(buf))
    return out


def tokenize(normalized: str, unit: str) -> list:
    """The units F1 counts in a normalized answer.

    ``"token"``: ``str.split()`` (SQuAD, MLQA). ``"char"``: every character, spaces included
    (DRCD, PIAF). ``"cmrc"``: :func:`cmrc_split` (CMRC 2018; its F1 is :func:`lcs_f1`).
    """
    if unit == "token":
        return normalized.split()
    if unit == "char":
        return list(normalized)
    if unit == "cmrc":
        return cmrc_split(normalized)
    raise ValueError(f"unknown unit {unit!r}; expected one of {UNITS}")


# --------------------------------------------------------------------------------------------
# Pairwise scores
# --------------------------------------------------------------------------------------------

def _check_rule(empty_rule: str) -> None:
    if empty_rule not in EMPTY_RULES:
        raise ValueError(f"unknown empty_rule {empty_rule!r}; expected 'v1' or 'v2'")


def _prf(same: int, n_pred: int, n_gold: int) -> float:
    # The scripts' order of operations, kept for bit-equal results.
    precision = 1.0 * same / n_pred
    recall = 1.0 * same / n_gold
    return (2 * precision * recall) / (precision + recall)


def bag_f1(pred_tokens: Sequence, gold_tokens: Sequence, *, empty_rule: str = "v2") -> float:
    """F1 of the multiset overlap of two token lists (SQuAD ``f1_score`` / ``compute_f1``).

    ``num_same`` is the size of the intersection of the two multisets (``Counter & Counter``).
    ``empty_rule="v2"``: if either list is empty, ``float(pred_tokens == gold_tokens)``.
    Otherwise 0 when nothing is shared, else 2PR/(P+R).
    """
    _check_rule(empty_rule)
    pred_tokens, gold_tokens = list(pred_tokens), list(gold_tokens)
    if empty_rule == "v2" and (not pred_tokens or not gold_tokens):
        return float(pred_tokens == gold_tokens)
    common = Counter(pred_tokens) & Counter(gold_tokens)
    same = sum(common.values())
    if same == 0:
        return 0.0
    return _prf(same, len(pred_tokens), len(gold_tokens))


def lcs_length(a: Sequence, b: Sequence) -> int:
    """Length of the longest common contiguous run of two sequences (CMRC ``find_lcs``)."""
    best = 0
    prev = [0] * (len(b) + 1)
    for i in range(len(a)):
        cur = [0] * (len(b) + 1)
        for j in range(len(b)):
            if a[i] == b[j]:
                cur[j + 1] = prev[j] + 1
                if cur[j + 1] > best:
                    best = cur[j + 1]
        prev = cur
    return best


def lcs_f1(pred_tokens: Sequence, gold_tokens: Sequence, *, empty_rule: str = "v2") -> float:
    """CMRC 2018's F1: P = L/|pred|, R = L/|gold| with L the longest common substring.

    L = 0 gives 0 (so empty vs empty is 0 under ``"v1"``, CMRC's own rule); under ``"v2"`` an
    empty side gives ``float(pred_tokens == gold_tokens)`` as for :func:`bag_f1`.
    """
    _check_rule(empty_rule)
    pred_tokens, gold_tokens = list(pred_tokens), list(gold_tokens)
    if empty_rule == "v2" and (not pred_tokens or not gold_tokens):
        return float(pred_tokens == gold_tokens)
    same = lcs_length(gold_tokens, pred_tokens)
    if same == 0:
        return 0.0
    return _prf(same, len(pred_tokens), len(gold_tokens))


def exact_match_score(prediction: str, ground_truth: str, *, normalizer="squad",
                      empty_rule: str = "v2") -> float:
    """1.0 if the normalized strings are equal, else 0.0 (the same under both empty rules)."""
    _check_rule(empty_rule)
    norm = get_normalizer(normalizer)
    return float(norm(prediction) == norm(ground_truth))


def f1_score(prediction: str, ground_truth: str, *, normalizer="squad", unit: str = "token",
             empty_rule: str = "v2") -> float:
    """F1 of one prediction against one reference: :func:`bag_f1` over ``unit``, or
    :func:`lcs_f1` for ``unit="cmrc"``."""
    norm = get_normalizer(normalizer)
    pred = tokenize(norm(prediction), unit)
    gold = tokenize(norm(ground_truth), unit)
    if unit == "cmrc":
        return lcs_f1(pred, gold, empty_rule=empty_rule)
    return bag_f1(pred, gold, empty_rule=empty_rule)


def max_over_references(fn: Callable, prediction: str, references: Iterable[str]) -> float:
    """``max(fn(prediction, r) for r in references)``; an empty list is a ``ValueError``
    (SQuAD's ``metric_max_over_ground_truths``)."""
    scores = [fn(prediction, r) for r in references]
    if not scores:
        raise ValueError("max over an empty list of references")
    return max(scores)


def v2_references(references: Sequence[str], *, normalizer="squad") -> list:
    """SQuAD v2.0's gold list: the references whose normalized form is not empty, or
    ``[""]`` when none is left (a no-answer question)."""
    norm = get_normalizer(normalizer)
    kept = [r for r in references if norm(r)]
    return kept or [""]


# --------------------------------------------------------------------------------------------
# Per-question scores and means
# --------------------------------------------------------------------------------------------

def _as_reference_list(ref, i: int) -> list:
    if isinstance(ref, str):
        return [ref]
    refs = list(ref)
    for r in refs:
        if not isinstance(r, str):
            raise TypeError(f"question {i}: a reference must be a str, not {type(r).__name__}")
    return refs


def _question_refs(ref, i: int, normalizer, empty_rule: str) -> list:
    refs = _as_reference_list(ref, i)
    if empty_rule == "v2":
        return v2_references(refs, normalizer=normalizer)
    if not refs:
        raise ValueError(f"question {i}: no reference answer (empty_rule='v1' needs at least one)")
    return refs


def _per_question(score, predictions, references, normalizer, empty_rule) -> list:
    _check_rule(empty_rule)
    get_normalizer(normalizer)
    predictions, references = list(predictions), list(references)
    if len(predictions) != len(references):
        raise ValueError(f"{len(predictions)} predictions but {len(references)} references")
    out = []
    for i, (p, ref) in enumerate(zip(predictions, references)):
        if not isinstance(p, str):
            raise TypeError(f"question {i}: the prediction must be a str, not {type(p).__name__}")
        refs = _question_refs(ref, i, normalizer, empty_rule)
        out.append(max_over_references(lambda a, b: score(a, b), p, refs))
    return out


def _mean(values: list) -> float:
    if not values:
        raise ValueError("no questions to average")
    total = 0.0
    for v in values:
        total += v
    return total / len(values)


def _exact_mean(values: list) -> float:
    """The exactly rounded sum (``math.fsum``) over the count: the same whatever the order or
    split of the questions, as qafast's means are (the official scripts add in file order;
    :mod:`qafast.reference.squad` keeps that order)."""
    if not values:
        raise ValueError("no questions to average")
    return math.fsum(values) / len(values)


def exact_match(predictions: Sequence[str], references: Sequence, *, normalizer="squad",
                empty_rule: str = "v2", per_question: bool = False):
    """Exact match per question (max over its references) and their mean in [0, 1].

    A reference is a str or a list of str. Returns the mean, or the list of per-question
    values when ``per_question``. Zero questions have no mean (``ValueError``).
    """
    vals = _per_question(
        lambda p, g: exact_match_score(p, g, normalizer=normalizer, empty_rule=empty_rule),
        predictions, references, normalizer, empty_rule)
    return vals if per_question else _exact_mean(vals)


def f1(predictions: Sequence[str], references: Sequence, *, normalizer="squad",
       unit: str = "token", empty_rule: str = "v2", per_question: bool = False):
    """F1 per question (max over its references) and their mean in [0, 1]."""
    if unit not in UNITS:
        raise ValueError(f"unknown unit {unit!r}; expected one of {UNITS}")
    vals = _per_question(
        lambda p, g: f1_score(p, g, normalizer=normalizer, unit=unit, empty_rule=empty_rule),
        predictions, references, normalizer, empty_rule)
    return vals if per_question else _exact_mean(vals)


# --------------------------------------------------------------------------------------------
# PIAF reader and retriever metrics
# --------------------------------------------------------------------------------------------

def reader_metrics(predictions: Sequence[Sequence], references: Sequence, *, k=None,
                   normalizer="squad", unit: str = "char", empty_rule: str = "v1") -> dict:
    """PIAF's reader metrics over a ranked list of predicted answers per question.

    ``predictions[i]`` is question i's answers, best first; ``None`` in it means "no answer".
    ``references[i]`` is its reference answers (a str or a list); an empty list means the
    question is impossible to answer (a no-answer question). Only the first ``k`` answers
    count (``k=None``: all of them).

    Per has-answer question, against the max over its references:

    * a *correct reading* is an answer with F1 > 0 (it shares at least one unit with a
      reference: the text form of Haystack 0.x's span-overlap test);
    * ``em``/``f1`` are :func:`exact_match_score`/:func:`f1_score`; ``None`` scores 0.
    * top1 looks at the first answer only (no answer at all scores 0); topk takes the best of
      the first k (any correct reading, any exact match, the max F1).

    Per no-answer question, top1 scores 1 for all three counts iff the first answer is
    ``None``, and topk iff ``None`` is among the first k.

    Denominators: the plain metrics divide by the number of questions (pass only the questions
    whose retrieval was correct to get PIAF's "correct retrievals" denominator); ``*_has_answer``
    by the number of has-answer questions; ``*_no_answer_accuracy`` by the number of no-answer
    questions. A metric whose denominator is 0 is ``None``. PIAF's name ``reader_top1_fk`` is
    ``reader_topk_f1`` here.
    """
    _check_rule(empty_rule)
    predictions, references = list(predictions), list(references)
    if len(predictions) != len(references):
        raise ValueError(f"{len(predictions)} predictions but {len(references)} references")
    if k is not None and (not isinstance(k, int) or isinstance(k, bool) or k < 1):
        raise ValueError(f"k must be a positive int or None, not {k!r}")
    norm = get_normalizer(normalizer)
    names = ("accuracy", "em", "f1")
    sums = {f"{t}_{m}": 0.0 for t in ("top1", "topk") for m in names}
    has = {key: 0.0 for key in sums}
    n_has = n_no = 0
    no1 = nok = 0.0
    for i, (answers, ref) in enumerate(zip(predictions, references)):
        if isinstance(answers, str) or answers is None:
            raise TypeError(f"question {i}: predictions must be a list of answers per question")
        answers = list(answers)[: k if k is not None else None]
        for a in answers:
            if a is not None and not isinstance(a, str):
                raise TypeError(f"question {i}: an answer must be a str or None, "
                                f"not {type(a).__name__}")
        refs = _as_reference_list(ref, i)
        if not refs:
            n_no += 1
            top1 = 1.0 if answers and answers[0] is None else 0.0
            topk = 1.0 if any(a is None for a in answers) else 0.0
            no1 += top1
            nok += topk
            for m in names:
                sums[f"top1_{m}"] += top1
                sums[f"topk_{m}"] += topk
            continue
        n_has += 1
        scored = []
        for a in answers:
            if a is None:
                scored.append((0.0, 0.0, 0.0))
                continue
            em = max(float(norm(a) == norm(g)) for g in refs)
            f = max(f1_score(a, g, normalizer=norm, unit=unit, empty_rule=empty_rule)
                    for g in refs)
            scored.append((1.0 if f > 0 else 0.0, em, f))
        first = scored[0] if scored else (0.0, 0.0, 0.0)
        best = tuple(max((s[j] for s in scored), default=0.0) for j in range(3))
        for j, m in enumerate(names):
            for key, v in ((f"top1_{m}", first[j]), (f"topk_{m}", best[j])):
                sums[key] += v
                has[key] += v
    n = len(predictions)
    if n == 0:
        raise ValueError("no questions")
    out: dict[str, float | None] = {}
    for key in sums:
        out[f"reader_{key}"] = sums[key] / n
        out[f"reader_{key}_has_answer"] = has[key] / n_has if n_has else None
    out["reader_top1_no_answer_accuracy"] = no1 / n_no if n_no else None
    out["reader_topk_no_answer_accuracy"] = nok / n_no if n_no else None
    out["number_of_questions"] = n
    out["number_of_has_answer"] = n_has
    out["number_of_no_answer"] = n_no
    return out


def retriever_metrics(retrieved: Sequence[Sequence], relevant: Sequence[Iterable], *,
                      k=None, per_question: bool = False):
    """PIAF's retriever recall, MAP and MRR over ranked document ids per question.

    ``retrieved[i]`` is question i's document ids, best first (only the first ``k`` count);
    ``relevant[i]`` its gold document ids (a collection; duplicates do not matter). A document
    retrieved twice counts at its first position only, so each gold document is credited once
    (ranks stay positions in the list: the repeat still takes a rank).

    * recall: 1 if at least one gold document is retrieved ("correct retrieval"), else 0;
    * reciprocal rank: 1/r for the first gold document at 1-based rank r, else 0;
    * average precision: the sum over the gold documents found, at rank r with j gold found so
      far, of j/r, divided by the number of distinct gold documents (0 if there is none).

    For rankings without repeated ids these are trec_eval's ``success``, ``recip_rank`` and
    ``map``. Every question is in the denominator, those with no gold document too (scoring 0).
    Returns ``{"recall", "map", "mrr"}`` means, or per-question lists when ``per_question``.
    """
    retrieved, relevant = list(retrieved), list(relevant)
    if len(retrieved) != len(relevant):
        raise ValueError(f"{len(retrieved)} retrieved lists but {len(relevant)} relevant sets")
    if k is not None and (not isinstance(k, int) or isinstance(k, bool) or k < 1):
        raise ValueError(f"k must be a positive int or None, not {k!r}")
    rec, ap, rr = [], [], []
    for docs, gold in zip(retrieved, relevant):
        gold = set(gold)
        seen = set()
        found = 0
        total = 0.0
        first = 0.0
        rank = 0
        for d in list(docs)[: k if k is not None else None]:
            rank += 1
            if d in seen:
                continue
            seen.add(d)
            if d in gold:
                found += 1
                total += found / rank
                if first == 0.0:
                    first = 1.0 / rank
        rec.append(1.0 if found else 0.0)
        rr.append(first)
        ap.append(total / len(gold) if gold else 0.0)
    if per_question:
        return {"recall": rec, "map": ap, "mrr": rr}
    return {"recall": _mean(rec), "map": _mean(ap), "mrr": _mean(rr)}
