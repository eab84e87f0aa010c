"""Answer metrics: exact match and F1 exactly as SQuAD v1.1/v2.0, MLQA, CMRC 2018 and DRCD score
them, and PIAF's reader and retriever metrics.

Each distinct string is normalized once; its tokens (or characters) become integer ids in one
vocabulary per call, and compiled kernels compare the ids. The definitions are
:mod:`qafast.reference.answers`; these functions return the same numbers, bit for bit.

Scale: every score is in [0, 1] (the SQuAD scripts print 100 times it).
"""

from __future__ import annotations

import functools
import re
import string
from typing import Any, Callable, Literal, Sequence, overload

import numpy as np

from . import _exactsum, _kernels
from ._triviaqa_text import normalize_triviaqa  # (its own module: it imports no numpy)
from .errors import InputError, InputTypeError
from .reference import answers as _ref

__all__ = [
    "EMPTY_RULES", "NORMALIZERS", "UNITS", "exact_match", "exact_match_and_f1", "f1",
    "get_normalizer",
    "normalize_bioasq", "normalize_cmrc", "normalize_drcd", "normalize_mlqa", "normalize_none",
    "normalize_squad", "normalize_triviaqa", "reader_metrics", "retriever_metrics",
]

#: The empty-answer rules (SQuAD v1.1's and v2.0's) and the F1 units (``"token"``: whitespace
#: tokens, SQuAD/MLQA; ``"char"``: a bag of characters, DRCD/PIAF; ``"cmrc"``: CMRC 2018's mixed
#: segmentation, scored by longest common substring), as the specification declares them.
EMPTY_RULES = _ref.EMPTY_RULES
UNITS = _ref.UNITS

_EMPTY_I64 = np.zeros(0, dtype=np.int64)
_EMPTY_F64 = np.zeros(0, dtype=np.float64)

#: Questions whose strings the kernels copy out with the GIL before they give it up to
#: normalize and score them, and take it back for the next ones. Slices of this size keep a
#: call's time with the GIL short and spread over the call, so that threads scoring at once
#: overlap it with their work without it; the results do not depend on it.
_SLICE_QUESTIONS = 4096

# --------------------------------------------------------------------------------------------
# Normalizers
# --------------------------------------------------------------------------------------------

_SQUAD_TABLE = str.maketrans("", "", string.punctuation)
_DRCD_TABLE = str.maketrans("", "", string.punctuation + "《》？，。、；：")
@functools.lru_cache(maxsize=None)
def _mlqa_table() -> dict:
    return dict.fromkeys(map(ord, _ref.mlqa_punctuation()))
_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_MLQA_PATTERNS = {lang: None if p is None else re.compile(p)
                  for lang, p in _ref.MLQA_ARTICLES.items()}


def normalize_squad(s: str) -> str:
    """SQuAD's ``normalize_answer``: lowercase, drop ASCII punctuation and a/an/the, collapse
    whitespace.

    The same string as the official v1.1 and v2.0 scripts for any Unicode text: ``str.lower``
    (so "İ" becomes two code points), only the 32 characters of ``string.punctuation`` removed
    (curly quotes and dashes stay), articles matched as whole words with ``\\b``, and
    ``str.split`` for whitespace (NBSP included).

    Examples
    --------
    >>> from qafast.answers import normalize_squad
    >>> normalize_squad("The Eiffel–Tower!")
    'eiffel–tower'
    >>> normalize_squad("Don't  stop\\u00a0a   thing")
    'dont stop thing'
    """
    return " ".join(_ARTICLES.sub(" ", s.lower().translate(_SQUAD_TABLE)).split())


def normalize_drcd(s: str) -> str:
    """DRCD: :func:`normalize_squad` that also drops ``《》？，。、；：``."""
    return " ".join(_ARTICLES.sub(" ", s.lower().translate(_DRCD_TABLE)).split())


def normalize_mlqa(s: str, lang: str) -> str:
    """MLQA's ``normalize_answer(s, lang)``: lowercase, drop all Unicode punctuation, drop the
    language's articles, tokenize (``zh``: one token per CJK character), join with spaces.

    Examples
    --------
    >>> from qafast.answers import normalize_mlqa
    >>> normalize_mlqa("Eiffel–Tower $5 €5", "en")
    'eiffeltower 5 €5'
    >>> normalize_mlqa("北京大学，2018年", "zh")
    '北 京 大 学 2018 年'
    """
    pattern = _MLQA_PATTERNS.get(lang, 0)
    if isinstance(pattern, int):
        return _ref.normalize_mlqa(s, lang)  # raises the unknown-language error
    t = s.lower().translate(_mlqa_table())
    if pattern is not None:
        t = pattern.sub(" ", t)
    if lang == "zh":
        return " ".join(x for x in _ref.mlqa_segments(t) if x.strip() != "")
    return " ".join(t.split())


#: CMRC 2018's punctuation as a translate table: its one two-character entry ("……") never
#: equals the single character the script compares it with, so it removes nothing
_CMRC_DROP = {ord(c): None for c in _ref.CMRC_PUNCTUATION if len(c) == 1}


def normalize_cmrc(s: str) -> str:
    """CMRC 2018's ``remove_punctuation`` (:func:`qafast.reference.answers.normalize_cmrc`),
    the punctuation dropped by one ``str.translate``.

    Examples
    --------
    >>> from qafast.answers import normalize_cmrc
    >>> normalize_cmrc(" 《北京》大学： ")
    '北京大学'
    """
    return s.lower().strip().translate(_CMRC_DROP)


normalize_bioasq = _ref.normalize_bioasq
normalize_none = _ref.normalize_none

#: Normalizers by name: ``squad``, ``drcd``, ``cmrc``, ``bioasq``, ``none``, ``triviaqa`` and
#: ``mlqa:<lang>`` for MLQA's languages (en, es, hi, vi, de, ar, zh). The names are the
#: specification's (``qafast.reference.answers.NORMALIZERS``); where this module has a faster
#: function giving the same strings, it takes the specification's place.
_FASTER: dict[str, Callable[[str], str]] = {"squad": normalize_squad, "drcd": normalize_drcd,
                                            "cmrc": normalize_cmrc,
                                            "triviaqa": normalize_triviaqa}
_FASTER.update({f"mlqa:{lang}": (lambda lang: (lambda s: normalize_mlqa(s, lang)))(lang)
                for lang in _ref.MLQA_LANGUAGES})
NORMALIZERS: dict[str, Callable[[str], str]] = {
    name: _FASTER.get(name, spec) for name, spec in _ref.NORMALIZERS.items()}


def get_normalizer(normalizer: str | Callable[[str], str]) -> Callable[[str], str]:
    """The function of a normalizer name of :data:`NORMALIZERS`; a callable is returned as is.

    Examples
    --------
    >>> from qafast.answers import get_normalizer
    >>> get_normalizer("bioasq")("EGFR ")
    'egfr '
    >>> get_normalizer("mlqa:de")("Der Hund")
    'hund'
    """
    if callable(normalizer):
        return normalizer
    if isinstance(normalizer, str):
        fn = NORMALIZERS.get(normalizer)
        if fn is not None:
            return fn
        raise InputError(f"unknown normalizer {normalizer!r}; expected one of "
                         f"{sorted(NORMALIZERS)} or a callable")
    raise InputTypeError("normalizer must be a name or a callable, not "
                         f"{type(normalizer).__name__}")


# --------------------------------------------------------------------------------------------
# Encoding: strings -> ids
# --------------------------------------------------------------------------------------------

def _utf8_split(s: str) -> list:
    return [t.encode("utf-8", "surrogatepass") for t in s.split()]


def _squad_slow(s: str) -> list:
    return _utf8_split(normalize_squad(s))


_CMRC_CJK = re.compile(f"([{_ref.CJK_RANGE[0]}-{_ref.CJK_RANGE[1]}])")


@functools.lru_cache(maxsize=1 << 16)
def _cmrc_run_tokens(run: str) -> tuple:
    # nltk's tokenizer is a pure function of the run, and 90% of a CMRC call: the numbers,
    # names and English words between Chinese characters repeat from answer to answer
    return tuple(t.encode("utf-8", "surrogatepass") for t in _ref.nltk_tokens(run))


def _cmrc_units(s: str) -> list:
    """:func:`qafast.reference.answers.cmrc_split` as UTF-8 tokens: the punctuation dropped
    at once, the text split at each Chinese character by one regex, each run of other text
    tokenized once per process."""
    pieces = _CMRC_CJK.split(s.lower().translate(_CMRC_DROP))
    out: list = []
    for k, piece in enumerate(pieces):
        if k % 2:
            out.append(piece.encode("utf-8", "surrogatepass"))
        elif piece:
            out.extend(_cmrc_run_tokens(piece))
    return out


#: CMRC's punctuation as a table over code points (1: removed), for the cmrc_units kernel
_CMRC_DROP_TABLE = np.zeros(max(_CMRC_DROP) + 1, dtype=np.uint8)
_CMRC_DROP_TABLE[list(_CMRC_DROP)] = 1
#: token ids below this are the basic-CJK characters (id = code point - U+4E00); the tokens
#: of the other text take the ids after them
_CMRC_NCJK = ord(_ref.CJK_RANGE[1]) - ord(_ref.CJK_RANGE[0]) + 1


def _cmrc_encode(strings: list):
    """``(tok_off, toks, key_off, keys)`` of ``normalize_cmrc`` and ``_cmrc_units`` of every
    string at once: the strings lowercased in one call, stripped, cleaned and split at the
    Chinese characters by one kernel, which interns the runs of other text so that nltk sees
    each distinct run once. None if a string holds U+0000 (the kernel's separator)."""
    n = len(strings)
    joined = "\0".join(strings)
    if n == 0 or joined.count("\0") != n - 1:
        return None
    text = np.frombuffer(joined.lower().encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    key_off = np.empty(n + 1, dtype=np.int64)
    keys = np.empty(len(text), dtype=np.int32)
    unit_off = np.empty(n + 1, dtype=np.int64)
    units = np.empty(len(text), dtype=np.int32)
    run_off = np.empty(2 * len(text) + 2, dtype=np.int64)
    nruns = _kernels.cmrc_units(text, _CMRC_DROP_TABLE, key_off, keys, unit_off, units, run_off)
    if nruns < 0:  # pragma: no cover - lowercasing made or took a separator
        return None
    keys = keys[:int(key_off[-1])]
    run_tok_off = np.zeros(nruns + 1, dtype=np.int64)
    run_toks: list = []
    if nruns:
        flat = keys.tobytes().decode("utf-32-le", "surrogatepass")
        ids: dict = {}
        bounds = run_off[:2 * nruns].tolist()
        for r in range(nruns):
            for t in _cmrc_run_tokens(flat[bounds[2 * r]:bounds[2 * r + 1]]):
                i = ids.get(t)
                if i is None:
                    i = ids[t] = _CMRC_NCJK + len(ids)
                run_toks.append(i)
            run_tok_off[r + 1] = len(run_toks)
    run_ids = np.array(run_toks, dtype=np.int32)
    nunits = int(unit_off[-1])
    counts = np.diff(run_tok_off)
    used = units[:nunits]
    total = int(np.count_nonzero(used < 0)) + int(counts[used[used >= 0]].sum())
    tok_off = np.empty(n + 1, dtype=np.int64)
    toks = np.empty(total, dtype=np.int32)
    _kernels.cmrc_expand(unit_off, units, run_tok_off, run_ids, 0, tok_off, toks)
    return tok_off, toks, key_off, keys


class _Encoded:
    """Per distinct string: F1 units (``tok_off``/``toks``, sorted for the bag F1) and the
    exact-match key (``key_off``/``keys``: the normalized string as ids)."""

    __slots__ = ("tok_off", "toks", "key_off", "keys")

    def __init__(self, strings: list, normalizer, unit: str, bag: bool):
        n = len(strings)
        if normalizer == "squad" and unit == "token":
            # normalize_squad(s) == " ".join(tokens), so the token ids are the key too.
            tok_off = np.empty(n + 1, dtype=np.int64)
            ids, _ = _kernels.answer_tokens(strings, _squad_slow, 1, tok_off)
            toks = np.frombuffer(ids, dtype=np.int32)
            key_off, keys = tok_off, toks
        elif normalizer == "squad" and unit == "char":
            # normalize_squad(s) as code points, computed in C for every string.
            key_off = np.empty(n + 1, dtype=np.int64)
            keys = np.frombuffer(_kernels.answer_squad_chars(strings, key_off), dtype=np.int32)
            tok_off, toks = key_off, keys
        elif normalizer == "triviaqa" and unit == "token":
            # as SQuAD's: normalize_triviaqa(s) == " ".join(tokens), so they are the key too
            tok_off = np.empty(n + 1, dtype=np.int64)
            ids, _ = _kernels.answer_tokens(strings, None, 2, tok_off)
            toks = np.frombuffer(ids, dtype=np.int32)
            key_off, keys = tok_off, toks
        elif normalizer == "cmrc" and unit == "cmrc" and (
                encoded := _cmrc_encode(strings)) is not None:
            tok_off, toks, key_off, keys = encoded
        else:
            fn = get_normalizer(normalizer)
            normed = [fn(s) for s in strings]
            for i, t in enumerate(normed):
                if type(t) is not str:
                    if not isinstance(t, str):
                        raise InputTypeError(f"the normalizer returned {type(t).__name__} for "
                                             f"{strings[i]!r}, not a str")
                    # its text as a plain str: the offsets below are its length, and a
                    # subclass's own __len__ need not agree with what "".join copies
                    normed[i] = str.__str__(t)
            key_off = np.zeros(n + 1, dtype=np.int64)
            np.cumsum([len(t) for t in normed], out=key_off[1:])
            keys = np.frombuffer("".join(normed).encode("utf-32-le", "surrogatepass"),
                                 dtype=np.int32)
            if unit == "char":
                tok_off, toks = key_off, keys
            else:
                tok_off = np.empty(n + 1, dtype=np.int64)
                slow = _utf8_split if unit == "token" else _cmrc_units
                ids, _ = _kernels.answer_tokens(normed, slow, 0, tok_off)
                toks = np.frombuffer(ids, dtype=np.int32)
        self._set(tok_off, toks, key_off, keys, bag)

    @classmethod
    def squad_tokens(cls, tok_off: np.ndarray, ids: np.ndarray, bag: bool) -> _Encoded:
        """The encoding of SQuAD's normalizer with token units, from the kernel that
        interned and tokenized the strings at once (answer_encode_squad)."""
        self = cls.__new__(cls)
        toks = np.frombuffer(ids, dtype=np.int32)
        self._set(tok_off, toks, tok_off, toks, bag)
        return self

    def _set(self, tok_off, toks, key_off, keys, bag: bool) -> None:
        if bag:
            out = np.empty_like(toks)
            _kernels.answer_sort_segments(tok_off, toks, out)
            toks = out
        self.tok_off, self.toks, self.key_off, self.keys = tok_off, toks, key_off, keys


# --------------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------------

def check_answer_options(normalizer, unit: str, empty_rule: str) -> None:
    """The answer metrics' options, checked as every form of them (the functions here, the
    streaming AnswerMetrics, qafast.dask.answers) checks them."""
    get_normalizer(normalizer)
    if unit not in UNITS:
        raise InputError(f"unknown unit {unit!r}; expected one of {UNITS}")
    if empty_rule not in EMPTY_RULES:
        raise InputError(f"unknown empty_rule {empty_rule!r}; expected 'v1' or 'v2'")


def _as_list(data, name: str) -> list:
    if isinstance(data, (str, bytes)):
        raise InputTypeError(f"{name} must be a sequence with one entry per question, "
                             f"not a {type(data).__name__}")
    if type(data) is list:
        return data
    try:
        return list(data)
    except TypeError:
        raise InputTypeError(f"{name} must be a sequence with one entry per question, "
                             f"not {type(data).__name__}") from None


def _prepare(predictions, references, empty_rule: str, squad_tokens: bool = False):
    """Validated questions: (strings, pred_sid, ref_off, ref_sid). With ``squad_tokens``,
    the distinct strings' SQuAD tokens ``(tok_off, ids)`` take the place of ``strings``
    (see ``_Encoded.squad_tokens``)."""
    predictions = _as_list(predictions, "predictions")
    references = _as_list(references, "references")
    n = len(predictions)
    if len(references) != n:
        raise InputError(f"{n} predictions but {len(references)} references: "
                         "one reference (or list of references) per question is expected")
    prepared = _intern(predictions, references, empty_rule, squad_tokens)
    if prepared is None:
        # A value that is not exactly a str, list or tuple (numpy's str_, an array of
        # strings, a generator, ...): the kernels take only those, whose lengths and hashes
        # no Python code can change while they are read, so the questions are copied once
        # into lists of plain str (or the first value that is no str is named).
        predictions, references = _plain_questions(predictions, references)
        prepared = _intern(predictions, references, empty_rule, squad_tokens)
        if prepared is None:  # pragma: no cover - plain lists of str are always taken
            raise RuntimeError("answers could not be encoded")
    return prepared


def _prepare_encoded(predictions, references, empty_rule: str, normalizer, unit: str,
                     bag: bool):
    """_prepare's questions with their strings encoded: (pred_sid, ref_off, ref_sid, enc)."""
    if normalizer == "squad" and unit == "token":
        # interned and tokenized in one kernel that holds the GIL only to copy the strings
        (tok_off, ids), pred_sid, ref_off, ref_sid = _prepare(predictions, references,
                                                              empty_rule, squad_tokens=True)
        return pred_sid, ref_off, ref_sid, _Encoded.squad_tokens(tok_off, ids, bag=bag)
    strings, pred_sid, ref_off, ref_sid = _prepare(predictions, references, empty_rule)
    return pred_sid, ref_off, ref_sid, _Encoded(strings, normalizer, unit, bag)


def _intern(predictions: list, references: list, empty_rule: str, squad_tokens: bool = False):
    """_prepare's encoding, or None if some value is not exactly a str (or its references
    exactly a str, list or tuple)."""
    n = len(predictions)
    ref_off = np.empty(n + 1, dtype=np.int64)
    if _kernels.answer_count_refs(references, ref_off) >= 0:
        return None
    if empty_rule == "v1" and n:
        counts = np.diff(ref_off)
        if not counts.all():
            i = int(np.argmin(counts))
            raise InputError(f"question {i} has no reference answer; empty_rule='v1' needs at "
                             "least one (use empty_rule='v2' for no-answer questions)")
    pred_sid = np.empty(n, dtype=np.int32)
    ref_sid = np.empty(int(ref_off[-1]), dtype=np.int32)
    if squad_tokens:
        tokens = _kernels.answer_encode_squad(predictions, references, ref_off, pred_sid,
                                              ref_sid, _SLICE_QUESTIONS)
        if tokens is None:
            return None
        return tokens, pred_sid, ref_off, ref_sid
    strings: list = []
    if _kernels.answer_intern(predictions, references, strings, pred_sid, ref_sid) is not None:
        return None
    return strings, pred_sid, ref_off, ref_sid


def _plain_str(s, i: int, what: str) -> str:
    """``s`` as a plain str: a str subclass (such as numpy's ``str_``) gives its text."""
    if type(s) is str:
        return s
    if isinstance(s, str):
        return str.__str__(s)
    if what == "prediction":
        raise InputTypeError(f"question {i}: the prediction must be a str, not "
                             f"{type(s).__name__} ({s!r})")
    raise InputTypeError(f"question {i}: a reference must be a str, not {type(s).__name__} "
                         f"({s!r})")


def _plain_questions(predictions: list, references: list) -> tuple[list, list]:
    """New lists of the questions' plain strings: each prediction a str, each question's
    references a str or a list of str. Raises TypeError naming the first value that is not a
    str (any references of the wrong kind first, then question by question)."""
    refs = []
    for i, r in enumerate(references):
        if type(r) is str or type(r) is list or type(r) is tuple:
            refs.append(r)
        elif isinstance(r, str):
            refs.append(str.__str__(r))
        elif isinstance(r, bytes) or not hasattr(r, "__iter__"):
            raise InputTypeError(f"question {i}: the references must be a str or a list of str, "
                                 f"not {type(r).__name__}")
        else:
            refs.append(list(r))
    preds = []
    for i, (p, r) in enumerate(zip(predictions, refs)):
        preds.append(_plain_str(p, i, "prediction"))
        if type(r) is not str:
            refs[i] = [_plain_str(g, i, "reference") for g in r]
    return preds, refs


#: The kernel's F1 mode per unit: tokens as sorted id lists, characters counted by code point
#: (no sort), CMRC's longest common substring.
_F1_MODES = {"token": 1, "char": 3, "cmrc": 2}


def _seq_sum(values: np.ndarray) -> float:
    """Left-to-right sum (as the reference adds), not numpy's pairwise sum."""
    return float(np.add.accumulate(values)[-1]) if len(values) else 0.0


def _score_both(predictions, references, normalizer, unit, empty_rule):
    check_answer_options(normalizer, unit, empty_rule)
    mode = _F1_MODES[unit]
    pred_sid, ref_off, ref_sid, enc = _prepare_encoded(predictions, references, empty_rule,
                                                       normalizer, unit, bag=mode == 1)
    n = len(pred_sid)
    em_out = np.empty(n, dtype=np.float64)
    f1_out = np.empty(n, dtype=np.float64)
    sums = np.zeros(2, dtype=np.float64)
    _kernels.answer_scores(pred_sid, _EMPTY_I64, ref_off, ref_sid, enc.tok_off, enc.toks,
                           enc.key_off, enc.keys, mode, empty_rule == "v2",
                           empty_rule == "v2", em_out, f1_out, sums)
    return em_out, f1_out


def _score(predictions, references, normalizer, unit, empty_rule, em: bool, per_question):
    check_answer_options(normalizer, unit, empty_rule)
    if not isinstance(per_question, (bool, np.bool_)):
        raise InputTypeError(f"per_question must be a bool, not {type(per_question).__name__}")
    if (not em and unit == "char" and normalizer == "squad" and type(predictions) is list
            and type(references) is list and predictions
            and len(predictions) == len(references)):
        # bag-of-characters F1 is cheap per pair: normalizing every answer where it is met
        # beats interning them, and reads each question's data once, in order
        out = np.empty(len(predictions), dtype=np.float64)
        sums = np.zeros(2, dtype=np.float64)
        if _kernels.answer_char_f1_direct(predictions, references, empty_rule == "v2", out,
                                          sums, _SLICE_QUESTIONS) == -1:
            return out if per_question else _mean(out)
    mode = 0 if em else _F1_MODES[unit]
    pred_sid, ref_off, ref_sid, enc = _prepare_encoded(
        predictions, references, empty_rule, normalizer,
        unit if not em else "char" if normalizer != "squad" else "token", bag=mode == 1)
    n = len(pred_sid)
    if n == 0 and not per_question:
        raise InputError("no questions to average")
    out = np.empty(n, dtype=np.float64)
    sums = np.zeros(2, dtype=np.float64)
    _kernels.answer_scores(pred_sid, _EMPTY_I64, ref_off, ref_sid, enc.tok_off, enc.toks,
                           enc.key_off, enc.keys, mode, empty_rule == "v2",
                           empty_rule == "v2", out if em else _EMPTY_F64,
                           _EMPTY_F64 if em else out, sums)
    if per_question:
        return out
    return _mean(out)


def _mean(values: np.ndarray) -> float:
    """The exactly rounded sum over the questions divided by their number: the same bits
    however the questions are split (``qafast.AnswerMetrics`` accumulates them so)."""
    return _exactsum.column_sums(values.reshape(-1, 1))[0] / len(values)


# --------------------------------------------------------------------------------------------
# Public metrics
# --------------------------------------------------------------------------------------------

_References = Sequence[str | Sequence[str]]
_Normalizer = str | Callable[[str], str]


@overload
def exact_match(predictions: Sequence[str], references: _References, *,
                normalizer: _Normalizer = ..., empty_rule: str = ...,
                per_question: Literal[False] = ...) -> float: ...
@overload
def exact_match(predictions: Sequence[str], references: _References, *,
                normalizer: _Normalizer = ..., empty_rule: str = ...,
                per_question: Literal[True]) -> np.ndarray: ...
@overload
def exact_match(predictions: Sequence[str], references: _References, *,
                normalizer: _Normalizer = ..., empty_rule: str = ...,
                per_question: bool) -> float | np.ndarray: ...
def exact_match(predictions: Sequence[str], references: Sequence[str | Sequence[str]], *,
                normalizer: str | Callable[[str], str] = "squad", empty_rule: str = "v2",
                per_question: bool = False) -> float | np.ndarray:
    """Exact match of each prediction with its best reference, after normalization.

    Parameters
    ----------
    predictions : sequence of str
        One predicted answer per question.
    references : sequence of str or of sequences of str
        Per question one reference or several (the best one counts).
    normalizer : str or callable, default "squad"
        A name of :data:`NORMALIZERS` (``"squad"``, ``"mlqa:<lang>"``, ``"cmrc"``,
        ``"drcd"``, ``"bioasq"``, ``"none"``) or a function from str to str.
    empty_rule : {"v2", "v1"}, default "v2"
        ``"v2"`` (SQuAD v2.0): references that normalize to "" are dropped, and a question left
        with none (or given none) is a no-answer question whose gold is "".
        ``"v1"`` (SQuAD v1.1): every reference counts; a question without one is an error.
    per_question : bool, default False
        Return the per-question values instead of their mean.

    Returns
    -------
    float or ndarray of shape (n_questions,)
        The mean in [0, 1], or one float64 per question.

    Raises
    ------
    TypeError
        A prediction or reference that is not a str (the message names the question index).
    ValueError
        Different numbers of predictions and references, an unknown normalizer or empty
        rule, no question to average, or a question without reference under ``"v1"``.

    See Also
    --------
    f1, qafast.reference.answers.exact_match

    Examples
    --------
    >>> from qafast.answers import exact_match
    >>> exact_match(["The Eiffel Tower", "Paris"], [["Eiffel Tower", "tower"], "paris!"])
    1.0
    >>> exact_match(["", ""], [["the"], ["the", "Paris"]], per_question=True)
    array([1., 0.])
    >>> exact_match(["", ""], [["the"], ["the", "Paris"]], empty_rule="v1", per_question=True)
    array([1., 1.])
    """
    return _score(predictions, references, normalizer, "token", empty_rule, True,
                  per_question)


@overload
def f1(predictions: Sequence[str], references: _References, *, normalizer: _Normalizer = ...,
       unit: str = ..., empty_rule: str = ..., per_question: Literal[False] = ...) -> float: ...
@overload
def f1(predictions: Sequence[str], references: _References, *, normalizer: _Normalizer = ...,
       unit: str = ..., empty_rule: str = ..., per_question: Literal[True]) -> np.ndarray: ...
@overload
def f1(predictions: Sequence[str], references: _References, *, normalizer: _Normalizer = ...,
       unit: str = ..., empty_rule: str = ..., per_question: bool) -> float | np.ndarray: ...
def f1(predictions: Sequence[str], references: Sequence[str | Sequence[str]], *,
       normalizer: str | Callable[[str], str] = "squad", unit: str = "token",
       empty_rule: str = "v2", per_question: bool = False) -> float | np.ndarray:
    """F1 of each prediction with its best reference, over tokens or characters.

    Precision and recall count the units the prediction and the reference share, as
    multisets (``unit="token"`` or ``"char"``), or, for ``unit="cmrc"``, the length of their
    longest common run of units (CMRC 2018): ``P = shared/|prediction|``,
    ``R = shared/|reference|``, ``F1 = 2PR/(P+R)``, and 0 when nothing is shared.

    Parameters
    ----------
    predictions : sequence of str
        One predicted answer per question.
    references : sequence of str or of sequences of str
        Per question one reference or several (the max over them counts).
    normalizer : str or callable, default "squad"
        As for :func:`exact_match`.
    unit : {"token", "char", "cmrc"}, default "token"
        Whitespace tokens of the normalized answer (SQuAD, MLQA); its characters, spaces
        included (DRCD, PIAF); or CMRC 2018's mixed segmentation (each CJK character a token,
        other text as ``nltk.word_tokenize`` splits it; nltk must be installed for text
        other than plain words and numbers).
    empty_rule : {"v2", "v1"}, default "v2"
        ``"v2"``: if either side has no unit, F1 is 1 when both have none, else 0 (so empty
        vs empty is 1); references that normalize to "" are dropped first, as in
        :func:`exact_match`. ``"v1"``: F1 is 0 whenever nothing is shared, empty vs empty
        included (SQuAD v1.1, MLQA, CMRC, DRCD).
    per_question : bool, default False
        Return the per-question values instead of their mean.

    Returns
    -------
    float or ndarray of shape (n_questions,)
        The mean in [0, 1], or one float64 per question.

    Raises
    ------
    TypeError, ValueError
        As for :func:`exact_match`, and for an unknown ``unit``.

    Examples
    --------
    >>> from qafast.answers import f1
    >>> f1(["paris paris"], ["Paris"])
    0.6666666666666666
    >>> f1(["", "the"], ["", "a"], per_question=True)
    array([1., 1.])
    >>> f1(["", "the"], ["", "a"], empty_rule="v1", per_question=True)
    array([0., 0.])
    >>> f1(["大学北京"], ["北京大学"], normalizer="cmrc", unit="cmrc", empty_rule="v1")
    0.5
    >>> f1(["大学北京"], ["北京大学"], normalizer="mlqa:zh", empty_rule="v1")
    1.0
    """
    return _score(predictions, references, normalizer, unit, empty_rule, False, per_question)


def exact_match_and_f1(predictions: Sequence[str],
                       references: Sequence[str | Sequence[str]], *,
                       normalizer: str | Callable[[str], str] = "squad", unit: str = "token",
                       empty_rule: str = "v2") -> tuple[np.ndarray, np.ndarray]:
    """Per-question exact match and F1 in one pass (each string normalized once for both).

    The same values as ``exact_match(..., per_question=True)`` and
    ``f1(..., per_question=True)`` with the same options, for about half the time of the two
    calls.

    Returns
    -------
    em, f1 : ndarray of shape (n_questions,)
        float64 per question, in [0, 1].

    Examples
    --------
    >>> from qafast.answers import exact_match_and_f1
    >>> em, f = exact_match_and_f1(["Paris", "the tower"], ["paris", ["Eiffel Tower"]])
    >>> em.tolist(), f.tolist()
    ([1.0, 0.0], [1.0, 0.6666666666666666])
    """
    return _score_both(predictions, references, normalizer, unit, empty_rule)


# --------------------------------------------------------------------------------------------
# Reader and retriever metrics (PIAF)
# --------------------------------------------------------------------------------------------

def reader_metrics(predictions: Sequence[Sequence[str | None]],
                   references: Sequence[str | Sequence[str]], *, k: int | None = None,
                   normalizer: str | Callable[[str], str] = "squad", unit: str = "char",
                   empty_rule: str = "v1") -> dict[str, Any]:
    """PIAF's reader metrics: top-1 and top-k accuracy, exact match and F1, and their
    ``has_answer`` variants, over a ranked list of answers per question.

    Parameters
    ----------
    predictions : sequence of sequences of str or None
        Per question, the reader's answers, best first; ``None`` means "no answer".
    references : sequence of str or of sequences of str
        Per question its reference answers; an empty list marks an impossible (no-answer)
        question.
    k : int, optional
        Only the first ``k`` answers count (default: all given).
    normalizer, unit, empty_rule
        How an answer is compared with a reference: as in :func:`f1`. The default is PIAF's
        F1 over a bag of characters of SQuAD-normalized text.

    Returns
    -------
    dict
        ``reader_top1_accuracy``, ``reader_topk_accuracy``, ``reader_top1_em``,
        ``reader_topk_em``, ``reader_top1_f1``, ``reader_topk_f1`` (PIAF's
        ``reader_top1_fk``), each also with ``_has_answer``; ``reader_top1_no_answer_accuracy``
        and ``reader_topk_no_answer_accuracy``; and the counts ``number_of_questions``,
        ``number_of_has_answer``, ``number_of_no_answer``.

    Notes
    -----
    For a question with an answer, an answer is a *correct reading* when its F1 with some
    reference is above 0 (it shares a unit with it: the text form of Haystack 0.x's span
    overlap); EM and F1 are the max over references; ``None`` scores 0. top1 uses the first
    answer only, topk the best of the first k. For a no-answer question, top1 accuracy, EM and
    F1 are all 1 iff the first answer is ``None``, topk iff ``None`` is among the first k.

    Denominators: the plain metrics divide by all questions given (PIAF divides by the
    "correct retrievals": pass only the questions whose retrieval found a relevant document to
    get its numbers); the ``_has_answer`` metrics by the questions with a reference; the
    ``_no_answer_accuracy`` metrics by the no-answer questions. A metric whose denominator is
    0 is ``None``.

    Examples
    --------
    >>> from qafast.answers import reader_metrics
    >>> m = reader_metrics([["Paris", "Lyon"], ["Rome", None]], [["paris"], []])
    >>> m["reader_top1_em"], m["reader_topk_em"], m["reader_top1_em_has_answer"]
    (0.5, 1.0, 1.0)
    >>> m["reader_topk_no_answer_accuracy"]
    1.0
    """
    check_answer_options(normalizer, unit, empty_rule)
    if k is not None and (not isinstance(k, (int, np.integer)) or isinstance(k, bool) or k < 1):
        raise InputError(f"k must be a positive int or None, not {k!r}")
    predictions = _as_list(predictions, "predictions")
    references = _as_list(references, "references")
    n = len(predictions)
    if len(references) != n:
        raise InputError(f"{n} predictions but {len(references)} references")
    if n == 0:
        raise InputError("no questions")
    rows: list[str] = []
    row_q: list[int] = []
    refs_flat: list[str] = []
    first = np.full(n, -1, dtype=np.int64)     # row of the first answer, -1: None or none
    row_lo = np.zeros(n + 1, dtype=np.int64)
    ref_off = np.zeros(n + 1, dtype=np.int64)
    no_answer = np.zeros(n, dtype=bool)
    none1 = np.zeros(n, dtype=np.float64)
    nonek = np.zeros(n, dtype=np.float64)
    for i in range(n):
        answers = predictions[i]
        if answers is None or isinstance(answers, (str, bytes)):
            raise InputTypeError(f"question {i}: predictions must hold a list of answers per "
                                 f"question, not {type(answers).__name__}")
        answers = list(answers)[:k]
        ref = references[i]
        ref = [ref] if isinstance(ref, str) else list(ref)
        for j, g in enumerate(ref):
            if type(g) is not str:
                if not isinstance(g, str):
                    raise InputTypeError(f"question {i}: a reference must be a str, not "
                                         f"{type(g).__name__}")
                ref[j] = str.__str__(g)  # the kernels take plain str only
        refs_flat.extend(ref)
        ref_off[i + 1] = len(refs_flat)
        no_answer[i] = not ref
        for j, a in enumerate(answers):
            if a is None:
                if j == 0:
                    none1[i] = 1.0
                nonek[i] = 1.0
                continue
            if type(a) is not str:
                if not isinstance(a, str):
                    raise InputTypeError(f"question {i}: answer {j} must be a str or None, not "
                                         f"{type(a).__name__}")
                a = str.__str__(a)
            if j == 0:
                first[i] = len(rows)
            rows.append(a)
            row_q.append(i)
        row_lo[i + 1] = len(rows)
    index: dict = {}
    strings: list = []

    def sid(s):
        v = index.get(s)
        if v is None:
            v = index[s] = len(strings)
            strings.append(s)
        return v

    pred_sid = np.array([sid(s) for s in rows], dtype=np.int32)
    ref_sid = np.array([sid(s) for s in refs_flat], dtype=np.int32)
    mode = _F1_MODES[unit]
    em_enc = _Encoded(strings, normalizer, "token" if normalizer == "squad" else "char", False)
    f1_enc = _Encoded(strings, normalizer, unit, bag=mode == 1)
    em_rows = np.empty(len(rows), dtype=np.float64)
    f1_rows = np.empty(len(rows), dtype=np.float64)
    rq = np.array(row_q, dtype=np.int64)
    sums = np.zeros(2, dtype=np.float64)
    if rows:
        _kernels.answer_scores(pred_sid, rq, ref_off, ref_sid, em_enc.tok_off, em_enc.toks,
                               em_enc.key_off, em_enc.keys, 0, False, False, em_rows,
                               _EMPTY_F64, sums)
        _kernels.answer_scores(pred_sid, rq, ref_off, ref_sid, f1_enc.tok_off, f1_enc.toks,
                               f1_enc.key_off, f1_enc.keys, mode, empty_rule == "v2", False,
                               _EMPTY_F64, f1_rows, sums)
    acc_rows = (f1_rows > 0).astype(np.float64)
    per_row = {"accuracy": acc_rows, "em": em_rows, "f1": f1_rows}
    has = ~no_answer
    counts = np.diff(row_lo)
    nonempty = counts > 0
    out: dict[str, Any] = {}
    n_has, n_no = int(has.sum()), int(no_answer.sum())
    for m in ("accuracy", "em", "f1"):
        vals = per_row[m]
        top1 = np.where(first >= 0, vals[np.maximum(first, 0)] if len(vals) else 0.0, 0.0)
        topk = np.zeros(n, dtype=np.float64)
        if len(vals):
            topk[nonempty] = np.maximum.reduceat(vals, row_lo[:-1][nonempty])
        top1 = np.where(has, top1, none1)
        topk = np.where(has, topk, nonek)
        for t, v in (("top1", top1), ("topk", topk)):
            out[f"reader_{t}_{m}"] = _seq_sum(v) / n
            out[f"reader_{t}_{m}_has_answer"] = _seq_sum(v[has]) / n_has if n_has else None
    order = ["reader_top1_accuracy", "reader_top1_accuracy_has_answer", "reader_top1_em",
             "reader_top1_em_has_answer", "reader_top1_f1", "reader_top1_f1_has_answer",
             "reader_topk_accuracy", "reader_topk_accuracy_has_answer", "reader_topk_em",
             "reader_topk_em_has_answer", "reader_topk_f1", "reader_topk_f1_has_answer"]
    result = {key: out[key] for key in order}
    result["reader_top1_no_answer_accuracy"] = _seq_sum(none1[no_answer]) / n_no if n_no else None
    result["reader_topk_no_answer_accuracy"] = _seq_sum(nonek[no_answer]) / n_no if n_no else None
    result["number_of_questions"] = n
    result["number_of_has_answer"] = n_has
    result["number_of_no_answer"] = n_no
    return result


def retriever_metrics(retrieved: Sequence[Sequence[str]], relevant: Sequence[Sequence[str]], *,
                      k: int | None = None, per_question: bool = False) -> dict:
    """PIAF's retriever metrics: recall (at least one relevant document), MAP and MRR.

    Parameters
    ----------
    retrieved : sequence of sequences of str
        Per question, the retrieved document ids, best first.
    relevant : sequence of collections of str
        Per question, its gold document ids.
    k : int, optional
        Only the first ``k`` retrieved documents count (default: all).
    per_question : bool, default False
        Return float64 arrays of per-question values instead of the means.

    Returns
    -------
    dict
        ``{"recall": ..., "map": ..., "mrr": ...}``.

    Notes
    -----
    Per question: recall is 1 if any gold document is retrieved (PIAF's "correct retrieval"),
    else 0; the reciprocal rank is 1/r for the first gold document at rank r, else 0; average
    precision sums, over the gold documents retrieved, (gold found so far)/rank, and divides
    by the number of distinct gold documents. A document retrieved twice counts at its first
    rank only (ranks stay positions in the list). The means divide by the number of questions, those without a gold document
    (which score 0) included. Without repeated ids these are trec_eval's ``success``,
    ``recip_rank`` and ``map``, and they are computed by :func:`qafast.evaluate`.

    Examples
    --------
    >>> from qafast.answers import retriever_metrics
    >>> retriever_metrics([["d1", "d2"], ["x", "d3"], ["x", "y", "z", "d4"]],
    ...                   [["d1"], ["d3"], ["d4"]])["mrr"]
    0.5833333333333334
    >>> retriever_metrics([["x", "a", "y", "b"]], [["a", "b"]])
    {'recall': 1.0, 'map': 0.5, 'mrr': 0.5}
    """
    from .ranking import evaluate

    if k is not None and (not isinstance(k, (int, np.integer)) or isinstance(k, bool) or k < 1):
        raise InputError(f"k must be a positive int or None, not {k!r}")
    retrieved = _as_list(retrieved, "retrieved")
    relevant = _as_list(relevant, "relevant")
    n = len(retrieved)
    if len(relevant) != n:
        raise InputError(f"{n} retrieved lists but {len(relevant)} relevant sets")
    run: dict = {}
    qrels: dict = {}
    repeated: list = []
    for i in range(n):
        docs, gold = retrieved[i], relevant[i]
        if isinstance(docs, str) or isinstance(gold, str):
            raise InputTypeError(f"question {i}: retrieved and relevant must be lists of ids per "
                                 "question, not a str")
        docs = list(docs)[:k]
        gold = list(gold)
        for d in (*docs, *gold):
            if not isinstance(d, str):
                raise InputTypeError(f"question {i}: document ids must be str, not "
                                     f"{type(d).__name__} ({d!r})")
        # plain str (numpy's str_ and other subclasses give their text), as evaluate takes
        docs = [d if type(d) is str else str.__str__(d) for d in docs]
        gold = {d if type(d) is str else str.__str__(d) for d in gold}
        scores = {d: float(-r) for r, d in enumerate(docs)}
        if not gold:
            continue
        if len(scores) < len(docs):
            repeated.append(i)  # ranks are list positions, which trec_eval cannot express
        elif scores:
            qrels[i] = dict.fromkeys(gold, 1)
            run[i] = scores
    rec = np.zeros(n, dtype=np.float64)
    ap = np.zeros(n, dtype=np.float64)
    rr = np.zeros(n, dtype=np.float64)
    if repeated:
        per = _ref.retriever_metrics([retrieved[i] for i in repeated],
                                     [relevant[i] for i in repeated], k=k, per_question=True)
        rec[repeated], ap[repeated], rr[repeated] = per["recall"], per["map"], per["mrr"]
    if run:
        per = evaluate(qrels, run, ["map", "recip_rank", "num_rel_ret"], per_query=True)
        for q, vals in per.items():
            ap[q] = vals["map"]
            rr[q] = vals["recip_rank"]
            rec[q] = 1.0 if vals["num_rel_ret"] > 0 else 0.0
    if per_question:
        return {"recall": rec, "map": ap, "mrr": rr}
    if n == 0:
        raise InputError("no questions to average")
    return {"recall": _seq_sum(rec) / n, "map": _seq_sum(ap) / n, "mrr": _seq_sum(rr) / n}
