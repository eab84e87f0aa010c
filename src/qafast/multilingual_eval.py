"""MLQA, CMRC 2018 and DRCD in one call, exactly as their evaluation scripts compute them.

:func:`mlqa` returns what MLQA's official ``mlqa_evaluation_v1.py DATA PRED LANG`` prints
(``exact_match`` and ``f1`` on 0-100, bit-identical floats); :func:`cmrc` the numbers of
CMRC 2018's ``cmrc2018_evaluate.py`` (Python 3 form); :func:`drcd` DRCD's rules as its
maintainers describe them (SQuAD v1.1 over a bag of characters; DRCD ships no script). The
answers are scored by the compiled kernels of :mod:`qafast.answers` with its ``mlqa:<lang>``,
``cmrc`` and ``drcd`` normalizers, each distinct string normalized once; the rules are
:mod:`qafast.reference.answers`. ``qafast mlqa DATA PRED LANG`` and ``qafast cmrc DATA PRED``
print, byte for byte, what the scripts print.
"""

from __future__ import annotations

import functools
import itertools
import json
import operator
import os
import sys
from array import array
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from ._gc import gc_paused
from .errors import FormatError, InputError, InputTypeError
from .io.squad import SquadDataset, predictions_unchecked, read_squad_dataset

if TYPE_CHECKING:
    import numpy as np

# numpy is imported where it is used (the per-question arrays, the general path): `qafast mlqa`
# never needs it, and importing it took a third of the time the command may take.

__all__ = ["MLQA_LANGUAGES", "cmrc", "drcd", "mlqa"]

#: The answer languages MLQA's script knows (``qafast.reference.answers.MLQA_LANGUAGES``).
MLQA_LANGUAGES = ("en", "es", "hi", "vi", "de", "ar", "zh")


def mlqa(dataset, predictions, lang: str, *, per_question: bool = False) -> dict:
    """Score answers as MLQA's official ``mlqa_evaluation_v1.py`` does.

    Parameters
    ----------
    dataset : str, os.PathLike, dict or list
        An MLQA (SQuAD-format) dataset: a file path, the loaded object (with ``"data"``) or
        its list of articles. Every question counts, a repeated id as often as it occurs.
    predictions : str, os.PathLike or mapping
        ``{question id: answer text}`` or a JSON file of it. Ids the dataset lacks are
        ignored.
    lang : {"en", "es", "hi", "vi", "de", "ar", "zh"}
        The language of the answers (the script's third argument): it chooses the articles
        removed and, for ``"zh"``, one token per Chinese character.
    per_question : bool, default False
        Return each question's scores instead of the means (see Returns).

    Returns
    -------
    dict
        ``{"exact_match": ..., "f1": ...}`` on a 0-100 scale, the floats the script prints. A
        question without a prediction scores 0 and counts in the total. With
        ``per_question=True``: ``"id"`` (the dataset's ids in order), ``"exact_match"`` and
        ``"f1"``, float64 arrays in [0, 1] with NaN where a question has no prediction.

    Notes
    -----
    MLQA lowercases, removes every Unicode punctuation character (categories P*, plus ASCII
    punctuation), removes the language's articles (Arabic: every "ال", even inside a word),
    and compares whitespace tokens (``"zh"``: each basic CJK character is a token) as SQuAD
    v1.1 does: F1 0 when nothing is shared, the best over the gold answers. Where the script
    crashes (an unknown language, a question with a prediction but no gold answer, a value
    that is not a string, no question at all), a :class:`~qafast.errors.QafastError` names
    the problem instead.

    Examples
    --------
    >>> data = [{"paragraphs": [{"qas": [
    ...     {"id": "q1", "answers": [{"text": "北京大学"}]},
    ...     {"id": "q2", "answers": [{"text": "2018年"}]}]}]}]
    >>> mlqa(data, {"q1": "大学北京", "q2": "2018"}, "zh")
    {'exact_match': 0.0, 'f1': 83.33333333333333}
    >>> rows = mlqa(data, {"q1": "北京"}, "zh", per_question=True)
    >>> rows["id"], rows["f1"].tolist()
    (['q1', 'q2'], [0.6666666666666666, nan])
    """
    _check_flag(per_question)
    _check_lang(lang)
    with gc_paused():
        if not per_question and isinstance(dataset, (str, os.PathLike)) \
                and isinstance(predictions, (str, os.PathLike)):
            read = _mlqa_files(dataset, predictions, lang)
            if read is not None:
                return read[2]
        ds = _read_squad(dataset)
        preds, _ = predictions_unchecked(predictions)
        ev = _mlqa_flat(ds, preds, lang)
        if ev is None:
            ev = _score(ds.ids, ds.answers, _squad_predicted(ds, preds), f"mlqa:{lang}",
                        "token", ds.source)
    return ev.rows("exact_match", "f1") if per_question else ev.means()


def drcd(dataset, predictions, *, per_question: bool = False) -> dict:
    """Score DRCD answers as its maintainers describe their evaluation.

    DRCD ships no evaluation script. Its maintainers describe theirs (DRCKnowledgeTeam/DRCD
    issue 6) as SQuAD's ``evaluate-v1.1.py`` with ``《》？，。、；：`` removed as punctuation too
    and F1 over the characters of the normalized answers (a bag of characters, spaces
    included). Many papers score DRCD with CMRC 2018's script instead: that is :func:`cmrc`.

    Parameters
    ----------
    dataset, predictions, per_question
        As for :func:`mlqa`.

    Returns
    -------
    dict
        ``{"exact_match": ..., "f1": ...}`` on a 0-100 scale; per question as for :func:`mlqa`.

    Examples
    --------
    >>> data = [{"paragraphs": [{"qas": [{"id": "q1", "answers": [{"text": "臺北市。"}]}]}]}]
    >>> drcd(data, {"q1": "臺北"})
    {'exact_match': 0.0, 'f1': 80.0}
    """
    _check_flag(per_question)
    with gc_paused():
        ev = _squad_style(dataset, predictions, "drcd", "char")
    return ev.rows("exact_match", "f1") if per_question else ev.means()


def cmrc(dataset, predictions, *, per_question: bool = False) -> dict:
    """Score answers as CMRC 2018's ``cmrc2018_evaluate.py`` (its Python 3 form) does.

    Parameters
    ----------
    dataset : str, os.PathLike, dict or list
        CMRC 2018 data in either of its forms: SQuAD's (``{"data": [{"paragraphs": [{"qas":
        ...}]}]}``) or the original list of passages, each with its ``"qas"`` (questions keyed
        by ``"query_id"``, answers a list of strings). A file path or the loaded object.
    predictions : str, os.PathLike or mapping
        ``{question id: answer}`` or a JSON file of it. As in the script, an answer or
        prediction that is not a string is scored as ``str()`` of it.
    per_question : bool, default False
        Return each question's scores instead of the means.

    Returns
    -------
    dict
        ``AVERAGE`` (the mean of EM and F1), ``F1``, ``EM`` (0-100 floats, which the script
        prints rounded to 3 decimals), ``TOTAL`` (questions) and ``SKIP`` (questions
        without a prediction, scored 0). With ``per_question=True``: ``"id"``, ``"EM"`` and
        ``"F1"``, float64 arrays in [0, 1] with NaN where a question has no prediction.

    Notes
    -----
    EM compares the answers lowercased, stripped and without CMRC's punctuation list (inner
    spaces and ASCII ``.`` stay). F1 is over the longest common contiguous run of tokens:
    each basic CJK character is a token and other text is split by ``nltk.word_tokenize``.
    Plain text (words and numbers; with the nltk releases it was checked against, also final
    periods, contractions, double quotes, and periods inside the text such as ``Mr. Smith``
    when NLTK's ``punkt_tab`` English files are installed, see
    :func:`qafast.reference.answers.plain_word_tokens`) is split the same way without
    importing nltk; other non-Chinese text (``Mr. (Smith)``) needs
    ``pip install 'qafast[cmrc]'`` and NLTK's ``punkt_tab`` data. Nothing shared gives F1 0, even for two empty answers.

    Examples
    --------
    >>> data = [{"qas": [{"query_id": "q1", "answers": ["北京大学", "北大"]},
    ...                  {"query_id": "q2", "answers": ["二〇一八年"]}]}]
    >>> cmrc(data, {"q1": "大学北京"})
    {'AVERAGE': 12.5, 'F1': 25.0, 'EM': 0.0, 'TOTAL': 2, 'SKIP': 1}
    """
    _check_flag(per_question)
    with gc_paused():
        ev = _cmrc_evaluate(dataset, predictions)
    if per_question:
        return ev.rows("EM", "F1")
    em, f1 = ev.sums()
    return {"AVERAGE": (em + f1) * 0.5, "F1": f1, "EM": em, "TOTAL": ev.total,
            "SKIP": len(ev.missing)}


# --------------------------------------------------------------------------------------------
# Scoring
# --------------------------------------------------------------------------------------------

def _check_flag(per_question) -> None:
    np = sys.modules.get("numpy")   # a numpy bool can only come from a loaded numpy
    if not isinstance(per_question, bool) and not (np is not None
                                                    and isinstance(per_question, np.bool_)):
        raise InputTypeError(f"per_question must be a bool, not {type(per_question).__name__}")


def _check_lang(lang) -> None:
    if not isinstance(lang, str) or lang not in MLQA_LANGUAGES:
        raise InputError(f"unknown MLQA answer language {lang!r}; expected one of "
                         f"{', '.join(MLQA_LANGUAGES)}")


class _Evaluation:
    """Scores of every question in dataset order: ``em``/``f1`` float64, NaN where the
    question has no prediction (``missing``: those ids, in order).

    Built from the predicted questions alone (``rows``: their indices, in order; ``em`` and
    ``f1`` then theirs, and ``seq_sums`` their sequential sums, as the kernel added them),
    it makes the per-question numpy arrays only when asked for: the means need neither."""

    __slots__ = ("_em", "_f1", "_rows", "_seq_sums", "ids", "missing", "total")

    def __init__(self, ids: list, em, f1, missing: list, *, rows=None,
                 seq_sums: tuple[float, float] | None = None):
        self.ids, self._em, self._f1, self.missing = ids, em, f1, missing
        self._rows, self._seq_sums = rows, seq_sums
        self.total = len(ids)

    @property
    def em(self) -> np.ndarray:
        self._spread()
        return self._em

    @property
    def f1(self) -> np.ndarray:
        self._spread()
        return self._f1

    def _spread(self) -> None:
        """The predicted questions' scores put at their questions, NaN elsewhere."""
        if self._rows is None:
            return
        import numpy as np

        rows = np.asarray(self._rows, dtype=np.int64)
        em = np.full(self.total, np.nan)
        f1 = np.full(self.total, np.nan)
        em[rows] = np.asarray(self._em, dtype=np.float64)
        f1[rows] = np.asarray(self._f1, dtype=np.float64)
        self._em, self._f1, self._rows = em, f1, None

    def sums(self) -> tuple[float, float]:
        """The scripts' ``100.0 * sum / total``: exact matches counted, F1 added left to
        right in question order (as their ``+=`` loops add)."""
        if self._seq_sums is not None:
            # the exact matches are 0 or 1: their float sum is their count, exactly
            em_sum, f1_sum = self._seq_sums
            return 100.0 * em_sum / self.total, 100.0 * f1_sum / self.total
        import numpy as np

        em = self.em[~np.isnan(self.em)]
        f1 = self.f1[~np.isnan(self.f1)]
        return (100.0 * int(np.count_nonzero(em)) / self.total,
                100.0 * _seq_sum(f1) / self.total)

    def means(self) -> dict:
        em, f1 = self.sums()
        return {"exact_match": em, "f1": f1}

    def rows(self, em_key: str, f1_key: str) -> dict:
        return {"id": list(self.ids), em_key: self.em, f1_key: self.f1}


def _seq_sum(values: np.ndarray) -> float:
    """Left-to-right sum, as the scripts' loops add (not numpy's pairwise sum)."""
    import numpy as np

    return float(np.add.accumulate(values)[-1]) if len(values) else 0.0


def _predicted(ids: list, preds, source: str) -> list:
    """Each question's prediction, None where it has none; an id that cannot be looked up
    (a list or dict, on which the scripts crash) is named."""
    try:
        return list(map(preds.get, ids))
    except TypeError:
        for q in ids:
            try:
                hash(q)
            except TypeError:
                raise InputTypeError(f"{source}: a question id must be a string, not "
                                     f"{type(q).__name__} ({q!r:.40})") from None
        raise


def _score(ids: list, golds: list, preds: list, normalizer: str, unit: str,
           source: str) -> _Evaluation:
    """Score the predicted questions (``preds[i]`` None: no prediction) against their gold
    answers (``golds[i]``, a list of str) with qafast.answers (numpy's path: any input, and
    the errors named)."""
    import numpy as np

    from . import answers

    n = len(ids)
    if n == 0:
        raise InputError(f"{source}: no question to score")
    keep = [i for i, p in enumerate(preds) if p is not None]
    missing = [ids[i] for i, p in enumerate(preds) if p is None]
    p_texts = [preds[i] for i in keep]
    g_texts = [golds[i] for i in keep]
    scored = None
    if keep and normalizer.startswith("mlqa:"):
        scored = _mlqa_scores(p_texts, g_texts, normalizer[5:])
    if scored is None and not _plain(p_texts, g_texts):
        for i, (p, g) in zip(keep, zip(p_texts, g_texts)):
            if type(p) is not str or type(g) is not list or not g or any(
                    type(t) is not str for t in g):
                if type(p) is not str:
                    raise InputTypeError(f"{source}, question {ids[i]!r}: the prediction "
                                         f"must be a string, not {type(p).__name__} "
                                         f"({p!r:.40})")
                if type(g) is not list:
                    raise InputTypeError(f"{source}, question {ids[i]!r}: its answers must "
                                         "be a list of {'text': ...} objects")
                if not g:
                    raise InputError(f"{source}, question {ids[i]!r}: no gold answer to "
                                     "score its prediction against")
                bad = next(t for t in g if type(t) is not str)
                raise InputTypeError(f"{source}, question {ids[i]!r}: a gold answer must be "
                                     f"a string, not {type(bad).__name__} ({bad!r:.40})")
    em = np.full(n, np.nan)
    f1 = np.full(n, np.nan)
    if keep:
        try:
            e, f = scored[:2] if scored is not None else answers.exact_match_and_f1(
                p_texts, g_texts, normalizer=normalizer, unit=unit, empty_rule="v1")
        except LookupError as err:  # NLTK without its punkt_tab data
            raise ImportError(_NO_PUNKT) from err
        em[keep] = e
        f1[keep] = f
    return _Evaluation(ids, em, f1, missing)


_NO_PUNKT = ("CMRC 2018 splits non-Chinese text with nltk.word_tokenize, which needs NLTK's "
             "punkt_tab data (python -m nltk.downloader punkt_tab)")


def _plain(preds: list, golds: list) -> bool:
    """Whether every prediction is a str and every gold a non-empty list of str (checked at C
    speed; :func:`_score` names what is not)."""
    return (set(map(type, preds)) <= {str} and set(map(type, golds)) <= {list}
            and all(golds) and set(map(type, itertools.chain.from_iterable(golds))) <= {str})


@functools.cache
def _mlqa_articles(lang: str) -> tuple[array, array, int]:
    """``(word_off, words, mode)`` of ``_kernels.ml_tokens`` for ``lang``: the words of the
    language's article pattern and the mode (1: each basic-CJK character a token; 2: every
    "ال" removed)."""
    from qafast.reference.answers import MLQA_ARTICLES

    pattern = MLQA_ARTICLES[lang]
    words = pattern[3:-3].split("|") if pattern and pattern.startswith(r"\b(") else []
    word_off = array("q", itertools.accumulate(map(len, words), initial=0))
    codes = array("I", map(ord, "".join(words)))
    return word_off, codes, 1 if lang == "zh" else 2 if lang == "ar" else 0


def _mlqa_drop(wide: list) -> bytearray:
    """MLQA's punctuation (Unicode categories P*, and ASCII punctuation) as a table over the
    code points up to the largest of ``wide`` (at least the ASCII ones), decided for ASCII
    and the distinct code points ``wide`` lists only: the script's set scans every code
    point, a third of a second."""
    drop = bytearray(max(128, wide[-1] + 1 if wide else 0))
    drop[:128] = _ascii_punctuation()
    for c in wide:
        if _is_mlqa_punctuation(chr(c)):
            drop[c] = 1
    return drop


def _is_mlqa_punctuation(ch: str) -> bool:
    import unicodedata

    from qafast.reference.answers import SQUAD_PUNCTUATION

    return ch in SQUAD_PUNCTUATION or unicodedata.category(ch).startswith("P")


@functools.cache
def _ascii_punctuation() -> bytes:
    return bytes(_is_mlqa_punctuation(chr(c)) for c in range(128))


def _zeros(code: Literal["q", "i", "d"], n: int) -> memoryview[Any]:
    """``n`` zeros of the array type ``code`` (``"q"`` int64, ``"i"`` int32, ``"d"`` float64)
    as a writable buffer, for a kernel's output."""
    return memoryview(bytearray(n * array(code).itemsize)).cast(code)


def _mlqa_scores(preds: list, golds: list, lang: str):
    """``(em, f1, sums)`` per question under MLQA's ``normalize_answer(s, lang)`` (as
    :func:`_mlqa_interned`), every distinct string interned by one kernel. None where a
    question's values are not plain strings in a non-empty list (for :func:`_score` to
    name)."""
    import numpy as np

    from . import _kernels

    n = len(preds)
    ref_off = np.empty(n + 1, dtype=np.int64)
    pred_sid = np.empty(n, dtype=np.int32)
    if set(map(type, golds)) != {list} or _kernels.answer_count_refs(golds, ref_off) >= 0 \
            or not np.diff(ref_off).all():
        return None  # _score names the question
    ref_sid = np.empty(int(ref_off[-1]), dtype=np.int32)
    strings: list = []
    if _kernels.answer_intern(preds, golds, strings, pred_sid, ref_sid) is not None:
        return None  # a value that is not exactly a str: _score names it
    return _mlqa_interned(strings, pred_sid, np.zeros(0, dtype=np.int64), ref_off, ref_sid,
                          lang)


def _mlqa_flat(ds: SquadDataset, preds, lang: str):
    """The :class:`_Evaluation` of :func:`mlqa` with no list made per question, and without
    numpy: the dataset's answers as one flat list, the predictions looked up and every
    distinct string interned by kernels. None where anything is not plain (a question id
    that is not hashable, a value that is not exactly a str, a predicted question without a
    gold answer, no question): then the general path scores it or names the problem."""
    flat = _flat_rows(ds, preds, null_ends=False)
    if flat is None:
        return None
    strings, rows, row_sid, ref_off, ref_sid, missing = flat
    em, f1, sums = (_mlqa_interned(strings, row_sid, rows, ref_off, ref_sid, lang)
                    if len(rows) else (_zeros("d", 0), _zeros("d", 0), (0.0, 0.0)))
    return _Evaluation(ds.ids, em, f1, missing, rows=rows, seq_sums=sums)


def _flat_rows(ds: SquadDataset, preds, *, null_ends: bool):
    """``(strings, rows, row_sid, ref_off, ref_sid, missing)`` of a scanned dataset's flat
    answers and the predictions looked up in ``preds``, every distinct string interned by
    kernels: each predicted question's row and its prediction's string id, each answer's
    string id, and the ids without a prediction. None where anything is not plain (not a
    dict of predictions, no question, an unhashable id, a prediction not exactly a str, a
    predicted question without a gold answer, and with ``null_ends`` a prediction of null,
    which CMRC's script scores as its ``str()``); the caller's general path then scores it
    or names the problem."""
    from . import _kernels

    if type(preds) is not dict or not ds.ids:
        return None
    try:
        texts, ref_off = ds.flat_buffers()
        found, absent, _, all_str = _kernels.squad_lookup(ds.ids, preds)
    except TypeError:  # an unreadable answer list or an unhashable id: named by _score
        return None
    if not all_str:  # a prediction of null or not a str
        return None
    missing: list = []
    if absent:
        missing = list(itertools.compress(ds.ids, map(operator.is_, found,
                                                     itertools.repeat(None))))
        if null_ends and any(map(preds.__contains__, missing)):   # a prediction of null
            return None
    n = len(found)
    pred_sid = _zeros("i", n)
    ref_sid = _zeros("i", len(texts))
    strings: list = []
    if _kernels.answer_intern_flat(found, texts, ref_off, strings, pred_sid,
                                   ref_sid) is not None:
        return None
    rows = _zeros("q", n)
    row_sid = _zeros("i", n)
    k = _kernels.ml_predicted_rows(pred_sid, ref_off, rows, row_sid)
    if k < 0:
        return None  # a predicted question without a gold answer: _score names it
    return strings, rows[:k], row_sid[:k], ref_off, ref_sid, missing


def _mlqa_files(dataset_file, prediction_file, lang: str):
    """``(version, missing ids, means)`` of :func:`mlqa` on a dataset file and a
    predictions file, read from their bytes by ``_kernels.MlqaFiles``: no str is made for an
    answer, nor for an id but those of the questions without a prediction. None where a
    file cannot be read or is not of the plain form the scans take, where a predicted
    question has no gold answer, where there is no question, or where an answer holds
    U+03A3 (str.lower makes it final or not by its neighbours): the general path then reads
    the files, and names any problem in its order."""
    from . import _kernels
    from .io.squad import read_file_bytes

    try:
        data, _ = read_file_bytes(dataset_file, "dataset")
        pred_bytes, _ = read_file_bytes(prediction_file, "predictions")
    except (OSError, InputTypeError):
        return None
    scanstring = json.decoder.scanstring  # type: ignore[attr-defined]
    files = _kernels.MlqaFiles(data, pred_bytes, scanstring)
    del data, pred_bytes
    n = files.nquestions
    if not files.plain or n == 0:
        return None
    pred_sid = _zeros("i", n)
    ref_off = _zeros("q", n + 1)
    ref_sid = _zeros("i", files.ngold)
    wide = files.intern(pred_sid, ref_off, ref_sid)
    if 0x3A3 in wide:
        return None
    rows = _zeros("q", n)
    row_sid = _zeros("i", n)
    k = _kernels.ml_predicted_rows(pred_sid, ref_off, rows, row_sid)
    if k < 0:
        return None  # a predicted question without a gold answer: the general path names it
    em_sum = f1_sum = 0.0
    if k:
        low_at, low_off, low_cp, grow, lowered_wide = _mlqa_lowering(wide)
        word_off, words, mode = _mlqa_articles(lang)
        tok_off = _zeros("q", files.nstrings + 1)
        ids = _zeros("i", files.string_cps * grow)
        ntok = files.tokens(low_at, low_off, low_cp, _mlqa_drop(lowered_wide), word_off,
                            words, mode, tok_off, ids)
        if ntok < 0:   # (never: a string has no more tokens than lowered code points)
            return None
        keys = ids[:ntok]  # the normalized string is its tokens joined by spaces: its key
        toks = _zeros("i", ntok)
        _kernels.answer_sort_segments(tok_off, keys, toks)
        sums = _zeros("d", 2)
        _kernels.answer_scores(row_sid[:k], rows[:k], ref_off, ref_sid, tok_off, toks,
                               tok_off, keys, 1, False, False, _zeros("d", k),
                               _zeros("d", k), sums)
        em_sum, f1_sum = sums[0], sums[1]
    missing = files.missing_ids() if k < n else []
    # the scripts' 100.0 * sum / total (as _Evaluation.sums)
    return files.version, missing, {"exact_match": 100.0 * em_sum / n,
                                    "f1": 100.0 * f1_sum / n}


def _mlqa_lowering(wide: list) -> tuple[array, array, array, int, list]:
    """``(low_at, low_off, low_cp, grow, lowered)``: ``str.lower`` of each code point of
    ``wide`` (increasing, above ASCII) as ``MlqaFiles.tokens`` takes it, the most code
    points one lowers to, and the distinct code points above ASCII they lower to, in
    increasing order."""
    low_at = array("i", [-1]) * ((wide[-1] if wide else 127) + 1)
    low_off = array("q", [0])
    low_cp = array("I")
    grow = 1
    lowered: set[int] = set()
    for j, c in enumerate(wide):
        low = list(map(ord, chr(c).lower()))
        low_at[c] = j
        low_cp.extend(low)
        low_off.append(len(low_cp))
        grow = max(grow, len(low))
        lowered.update(x for x in low if x >= 128)
    return low_at, low_off, low_cp, grow, sorted(lowered)


def _mlqa_interned(strings: list, pred_sid, row_q, ref_off, ref_sid, lang: str):
    """``(em, f1, (em sum, f1 sum))``: each row's exact match and F1 (float64 buffers) and
    their sums added in row order, row r's prediction being string ``pred_sid[r]`` of
    ``strings``, against its question's gold strings (question ``row_q[r]``, or r where
    ``row_q`` is empty); each distinct string normalized once as MLQA's
    ``normalize_answer(s, lang)``."""
    from . import _kernels

    n = len(pred_sid)
    lowered, wide, length = _kernels.ml_lower(strings)
    drop = _mlqa_drop(wide)
    word_off, words, mode = _mlqa_articles(lang)
    tok_off = _zeros("q", len(strings) + 1)
    ids = _zeros("i", length)
    ntok = _kernels.ml_tokens(lowered, drop, word_off, words, mode, tok_off, ids)
    keys = ids[:ntok]  # the normalized string is its tokens joined by spaces: they are its key
    toks = _zeros("i", ntok)
    _kernels.answer_sort_segments(tok_off, keys, toks)
    em = _zeros("d", n)
    f1 = _zeros("d", n)
    sums = _zeros("d", 2)
    _kernels.answer_scores(pred_sid, row_q, ref_off, ref_sid, tok_off,
                           toks, tok_off, keys, 1, False, False, em, f1, sums)
    return em, f1, (sums[0], sums[1])


def _squad_style(dataset, predictions, normalizer: str, unit: str) -> _Evaluation:
    ds = _read_squad(dataset)
    preds, _ = predictions_unchecked(predictions)
    return _score(ds.ids, ds.answers, _squad_predicted(ds, preds), normalizer, unit, ds.source)


def _read_squad(dataset) -> SquadDataset:
    """read_squad_dataset, or, where it finds a question's answers malformed, the questions
    with their answers as they are: the scripts read a question's answers only when it has
    a prediction (:func:`_score` checks those)."""
    try:
        return read_squad_dataset(dataset)
    except (InputError, InputTypeError):
        if isinstance(dataset, (str, os.PathLike)):
            obj, source = _load_json(dataset, "dataset")
        else:
            obj, source = dataset, "<dataset>"
        walked = _lenient_walk(obj)
        if walked is None:
            raise
        ids, golds, version = walked
        return SquadDataset(ids, golds, version, source)


def _lenient_walk(obj):
    """``(ids, answers, version)`` of SQuAD-form data, each question's answers the list of
    its ``"text"`` values (or None where they cannot be read); None if articles, paragraphs
    or ids cannot be read."""
    try:
        version = obj.get("version") if isinstance(obj, Mapping) else None
        data = obj["data"] if isinstance(obj, Mapping) else obj
        ids, golds = [], []
        for article in data:
            for paragraph in article["paragraphs"]:
                for qa in paragraph["qas"]:
                    ids.append(qa["id"])
                    try:
                        golds.append([x["text"] for x in qa["answers"]])
                    except (KeyError, TypeError, IndexError):
                        golds.append(None)
    except (KeyError, TypeError, IndexError):
        return None
    return ids, golds, None if version is None else str(version)


def _squad_predicted(ds, preds) -> list:
    """_predicted, with a prediction of null named (the scripts crash on it)."""
    texts = _predicted(ds.ids, preds, ds.source)
    if None in texts:
        for q, p in zip(ds.ids, texts):
            if p is None and q in preds:
                raise InputTypeError(f"{ds.source}, question {q!r}: the prediction must be a "
                                     "string, not None")
    return texts


# --------------------------------------------------------------------------------------------
# CMRC 2018
# --------------------------------------------------------------------------------------------

_NO = object()


def _cmrc_plain_questions(data: list):
    """:func:`_cmrc_questions` of data made of plain dicts and lists only, as it reads them;
    None where anything else is met (or something is missing), for it to walk and name."""
    ids: list = []
    answers: list = []
    add_id, add_answers = ids.append, answers.append
    for instance in data:
        if type(instance) is not dict:
            return None
        if "paragraphs" in instance:
            paras = instance["paragraphs"]
            if type(paras) is not list:
                return None
        else:
            paras = (instance,)
        for para in paras:
            if type(para) is not dict:
                return None
            qas = para.get("qas")
            if type(qas) is not list:
                return None
            for qa in qas:
                if type(qa) is not dict:
                    return None
                qid = qa.get("id", _NO)
                if qid is _NO:
                    qid = qa.get("query_id", _NO)
                    if qid is _NO:
                        return None
                gold = qa.get("answers")
                if type(gold) is not list:
                    return None
                for x in gold:
                    if type(x) is not str:
                        texts = []
                        for x in gold:
                            if type(x) is dict:
                                x = x.get("text", _NO)
                                if x is _NO:
                                    return None
                            elif isinstance(x, dict):
                                return None
                            texts.append(x if type(x) is str else str(x))
                        gold = texts
                        break
                add_id(qid)
                add_answers(gold)
    return ids, answers


def _cmrc_questions(obj, source: str) -> tuple[list, list]:
    """The questions of CMRC 2018 data in either form, as the script walks them: ``(ids,
    answers)``, each answer ``str()`` of the value (a dict's ``"text"``)."""
    data = obj["data"] if isinstance(obj, Mapping) and "data" in obj else obj
    if not isinstance(data, list):
        raise InputTypeError(f"{source}: CMRC 2018 data is a list of passages (or an object "
                             f"with a 'data' list), not {type(data).__name__}")
    plain = _cmrc_plain_questions(data)
    if plain is not None:
        return plain
    ids: list = []
    answers: list = []

    def need(obj, key, where):
        if not isinstance(obj, Mapping):
            raise InputTypeError(f"{source}: {where} must be an object, not "
                                 f"{type(obj).__name__}")
        if key not in obj:
            raise InputError(f"{source}: {where} has no {key!r}")
        return obj[key]

    for ai, instance in enumerate(data):
        where = f"passage {ai}"
        paras = need(instance, "paragraphs", where) if isinstance(instance, Mapping) and \
            "paragraphs" in instance else [instance]
        if not isinstance(paras, list):
            raise InputTypeError(f"{source}: {where}'s 'paragraphs' must be a list, not "
                                 f"{type(paras).__name__}")
        for pi, para in enumerate(paras):
            qas = need(para, "qas", f"{where}, paragraph {pi}")
            if not isinstance(qas, list):
                raise InputTypeError(f"{source}: {where}, paragraph {pi}'s 'qas' must be a "
                                     f"list, not {type(qas).__name__}")
            for qi, qa in enumerate(qas):
                at = f"{where}, paragraph {pi}, question {qi}"
                qid = qa["id"] if isinstance(qa, Mapping) and "id" in qa else \
                    need(qa, "query_id", at + " (no 'id')")
                gold = need(qa, "answers", at)
                if not isinstance(gold, list):
                    raise InputTypeError(f"{source}, question {qid!r}: 'answers' must be a "
                                         f"list, not {type(gold).__name__}")
                texts = []
                for x in gold:
                    if isinstance(x, dict):
                        if "text" not in x:
                            raise InputError(f"{source}, question {qid!r}: an answer object "
                                             "has no 'text'")
                        x = x["text"]
                    texts.append(x if type(x) is str else str(x))
                ids.append(qid)
                answers.append(texts)
    return ids, answers


def _read_bytes(path, what: str) -> tuple[bytes, str]:
    """``(the file's bytes, its path)``."""
    path = os.fspath(path)
    if isinstance(path, bytes):
        raise InputTypeError(f"the {what} path must be str or os.PathLike[str], not bytes")
    with open(path, "rb") as f:
        return f.read(), path


def _load_json(path, what: str):
    """``(the JSON value, the path)`` of a file read as the CMRC script reads it (bytes given
    to ``json.loads``, which takes UTF-8, -16 or -32); a FormatError naming it otherwise."""
    raw, path = _read_bytes(path, what)
    return _parse_json(raw, path), path


def _parse_json(raw: bytes, path: str):
    """:func:`_load_json` of bytes already read from ``path``."""
    try:
        return json.loads(raw)
    except json.JSONDecodeError as e:
        raise FormatError(f"not valid JSON ({e.msg})", path=path,
                          line=e.lineno) from None
    except UnicodeDecodeError as e:
        raise FormatError(f"not UTF-8 text ({e.reason})", path=path) from None
    except RecursionError:
        raise FormatError("JSON nested too deeply to read", path=path) from None


def _cmrc_scanned(raw: bytes, source: str) -> SquadDataset | None:
    """The questions of a SQuAD-form file (DRCD's, CMRC's SQuAD-style release) as
    :func:`_cmrc_questions` reads them from its JSON value, read from the bytes by the
    compiled SQuAD scan, which makes no object for the questions, contexts and answer offsets
    the script does not score: a third of the time json.loads takes on DRCD's files. None
    where the file is not of the plain form the scan takes (then json.loads reads it). On
    that form the two agree: the root object's "data" articles each have one "paragraphs",
    each paragraph one "qas", each question one string "id" (taken before any "query_id")
    and one "answers" list of objects with one string "text"."""
    from . import _kernels

    scanstring = json.decoder.scanstring  # type: ignore[attr-defined]
    ids: list = []
    texts: list = []
    scanned = _kernels.squad_scan_dataset(raw, ids, texts, scanstring, False)  # (no numpy)
    if scanned is None:
        return None
    return SquadDataset(ids, None, None, source, texts=texts, offsets=scanned[0])


def _cmrc_flat(ds: SquadDataset, preds) -> _Evaluation | None:
    """:func:`_score` of CMRC's rules on a scanned dataset with no list made per question (as
    :func:`_mlqa_flat`): the flat answers and the looked-up predictions interned by kernels.
    None where anything is not plain (a prediction that is not a str, null included, which
    the script scores as ``str()`` of it; a predicted question without a gold answer; no
    question): the general path then scores it or names the problem."""
    from . import _kernels
    from .answers import _Encoded

    flat = _flat_rows(ds, preds, null_ends=True)
    if flat is None:
        return None
    strings, rows, row_sid, ref_off, ref_sid, missing = flat
    k = len(rows)
    em, f1, sums = _zeros("d", k), _zeros("d", k), _zeros("d", 2)
    if k:
        try:
            enc = _Encoded(strings, "cmrc", "cmrc", False)
        except LookupError as err:  # NLTK without its punkt_tab data
            raise ImportError(_NO_PUNKT) from err
        _kernels.answer_scores(row_sid, rows, ref_off, ref_sid, enc.tok_off, enc.toks,
                               enc.key_off, enc.keys, 2, False, False, em, f1, sums)
    return _Evaluation(ds.ids, em, f1, missing, rows=rows, seq_sums=(sums[0], sums[1]))


def _cmrc_evaluate(dataset, predictions) -> _Evaluation:
    scanned = None
    if isinstance(dataset, (str, bytes)) or hasattr(dataset, "__fspath__"):
        raw, source = _read_bytes(dataset, "dataset")
        scanned = _cmrc_scanned(raw, source)
        obj = _parse_json(raw, source) if scanned is None else None
        del raw
    else:
        obj, source = dataset, "<dataset>"
    if isinstance(predictions, (str, bytes)) or hasattr(predictions, "__fspath__"):
        preds, pred_source = _load_json(predictions, "predictions")
    else:
        preds, pred_source = predictions, "<predictions>"
    if not isinstance(preds, Mapping):
        raise InputTypeError(f"{pred_source}: predictions must map question ids to answers, "
                             f"not {type(preds).__name__}")
    if scanned is not None:
        ev = _cmrc_flat(scanned, preds)
        if ev is not None:
            return ev
        ids, golds = scanned.ids, scanned.answers
    else:
        ids, golds = _cmrc_questions(obj, source)
    texts = _predicted(ids, preds, source)
    if not set(map(type, texts)) <= {str, type(None)}:
        texts = [p if p is None or type(p) is str else str(p) for p in texts]
    if None in texts and any(map(preds.__contains__, itertools.compress(
            ids, map(operator.is_, texts, itertools.repeat(None))))):   # a prediction of null
        texts = [str(preds[q]) if p is None and q in preds else p for q, p in zip(ids, texts)]
    return _score(ids, golds, texts, "cmrc", "cmrc", source)


# --------------------------------------------------------------------------------------------
# The `qafast mlqa` and `qafast cmrc` commands
# --------------------------------------------------------------------------------------------

def register_cli(subparsers) -> dict:
    """Add ``qafast mlqa``, ``qafast cmrc`` and ``qafast drcd``; returns their handlers."""
    p = subparsers.add_parser(
        "mlqa", help="score MLQA predictions, printing what mlqa_evaluation_v1.py prints",
        description="Score predictions against an MLQA dataset as the official "
                    "mlqa_evaluation_v1.py does, printing the same JSON line. Unanswered "
                    "questions are listed on stderr, as the script lists them.")
    p.add_argument("dataset_file", metavar="DATA", help="dataset JSON (SQuAD format)")
    p.add_argument("prediction_file", metavar="PRED",
                   help="predictions JSON: {question id: answer}")
    p.add_argument("answer_language", metavar="LANG",
                   help=f"language of the answers: {', '.join(MLQA_LANGUAGES)}")
    c = subparsers.add_parser(
        "cmrc", help="score CMRC 2018 (or DRCD) predictions, printing what "
                     "cmrc2018_evaluate.py prints",
        description="Score predictions against CMRC 2018 data (its own form or SQuAD's) as "
                    "the official cmrc2018_evaluate.py (Python 3) does, printing the same JSON "
                    "line. Non-Chinese text other than plain words and numbers needs nltk "
                    "and its punkt_tab data.")
    c.add_argument("dataset_file", metavar="DATA", help="dataset JSON")
    c.add_argument("prediction_file", metavar="PRED",
                   help="predictions JSON: {question id: answer}")
    d = subparsers.add_parser(
        "drcd", help="score DRCD predictions, printing what cmrc2018_evaluate.py prints",
        description="Score predictions against DRCD data. DRCD ships no script; papers score "
                    "it with CMRC 2018's cmrc2018_evaluate.py, and by default this prints what "
                    "that script prints on the files, byte for byte. --rules drcd scores with "
                    "the rules DRCD's maintainers describe (qafast.drcd) instead, printed in "
                    "the same layout.")
    d.add_argument("dataset_file", metavar="DATA", help="dataset JSON (SQuAD format)")
    d.add_argument("prediction_file", metavar="PRED",
                   help="predictions JSON: {question id: answer}")
    d.add_argument("--rules", choices=("cmrc", "drcd"), default="cmrc",
                   help="cmrc (default): CMRC 2018's script; drcd: SQuAD v1.1 over characters "
                        "with full-width punctuation removed")
    return {"mlqa": _run_mlqa, "cmrc": _run_cmrc, "drcd": _run_drcd}


def _run_mlqa(args) -> int:
    lang = args.answer_language
    try:
        _check_lang(lang)
    except InputError as e:
        print(f"qafast mlqa: {e}", file=sys.stderr)
        return 2
    # Parsing the dataset makes millions of objects too: a collection during it walks all
    # those made so far, for nothing (they hold no cycles), and costs as much as the parse.
    with gc_paused():
        read = _mlqa_files(args.dataset_file, args.prediction_file, lang)
        if read is not None:
            version, missing, means = read
            _version_note(version)
        else:
            ds = _read_squad(args.dataset_file)
            _version_note(ds.version)
            preds, _ = predictions_unchecked(args.prediction_file)
            ev = _mlqa_flat(ds, preds, lang)   # (no list made per question)
            if ev is None:
                ev = _score(ds.ids, ds.answers, _squad_predicted(ds, preds), f"mlqa:{lang}",
                            "token", ds.source)
            missing, means = ev.missing, ev.means()
    _unanswered(missing, "Unanswered question {} will receive score 0.\n")
    print(json.dumps(means))
    return 0


def _version_note(version: str | None) -> None:
    if version is not None and version != "1.0":
        # what the script says (it scores the file anyway)
        print(f"Evaluation expects v-1.0, but got dataset with v-{version}", file=sys.stderr)


def _run_cmrc(args) -> int:
    return _print_cmrc_layout("cmrc", args, "cmrc")


def _run_drcd(args) -> int:
    """``qafast drcd``: the CMRC 2018 script's output on DRCD files (``--rules cmrc``), or
    :func:`drcd`'s numbers in that layout (``--rules drcd``)."""
    return _print_cmrc_layout("drcd", args, args.rules)


def _print_cmrc_layout(command: str, args, rules: str) -> int:
    """What cmrc2018_evaluate.py prints: the unanswered questions on stderr, then one JSON
    line of the means (``rules``: ``"cmrc"`` the script's, ``"drcd"`` :func:`drcd`'s)."""
    try:
        with gc_paused():
            if rules == "cmrc":
                ev = _cmrc_evaluate(args.dataset_file, args.prediction_file)
            else:
                ev = _squad_style(args.dataset_file, args.prediction_file, "drcd", "char")
    except ImportError as e:   # nltk, or its punkt_tab data, missing
        print(f"qafast {command}: {e} (pip install 'qafast[cmrc]')", file=sys.stderr)
        return 2
    _unanswered(ev.missing, "Unanswered question: {}\n")
    em, f1 = ev.sums()
    print(json.dumps({"AVERAGE": f"{(em + f1) * 0.5:.3f}", "F1": f"{f1:.3f}",
                      "EM": f"{em:.3f}", "TOTAL": ev.total, "SKIP": len(ev.missing),
                      "FILE": args.prediction_file}))
    return 0


def _unanswered(missing: list, line: str) -> None:
    if missing:
        sys.stderr.write("".join(line.format(q) for q in missing))
