"""TriviaQA, exactly as the official ``triviaqa_evaluation.py`` (v1.0) scores it.

:func:`triviaqa` returns the script's dict (``exact_match``, ``f1``, ``common``,
``denominator``, ``pred_len``, ``gold_len``, its keys in its order);
:func:`triviaqa_per_question` every key's scores; :class:`TriviaqaMetrics` accumulates them
over batches; ``qafast triviaqa --dataset_file D --prediction_file P`` prints what the script
prints. The rules are in :mod:`qafast.reference.triviaqa`. Strings are normalized
(TriviaQA's normalizer) and every (prediction, gold answer) pair is scored by the compiled
answer kernels (a dataset object's strings without the GIL: see :func:`_walked_scores`);
the F1 sum is taken left to right, as the script adds.
"""

from __future__ import annotations

import itertools
import json
import mmap
import os
import re
import sys
from array import array
from typing import TYPE_CHECKING

from . import _kernels
from ._gc import gc_paused
from ._kept_scores import KeptScores
from ._triviaqa_text import normalize_triviaqa
from .errors import InputError, InputTypeError
from .io._text import load_json
from .reference.triviaqa import EXPECTED_VERSION

if TYPE_CHECKING:
    import numpy as np

# numpy (and qafast.answers, which imports it) is imported by the functions that use it:
# `qafast triviaqa` on plain files scores them without it (_plain_scores), and importing it
# was a third of the command's CPU time

__all__ = ["TriviaqaMetrics", "triviaqa", "triviaqa_per_question"]

# --------------------------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------------------------

def _load_dataset(dataset, scan_questions: bool = True) -> tuple:
    """``load_json(dataset, "dataset")`` and, where the compiled scan read them, a Wikipedia
    dataset's questions as ``(QuestionIds, Answers, gold strings, QuestionPartOfVerifiedEval
    flags)`` (the data's "Data" then being an empty list), else None.

    json.loads had most of the time of reading a dataset, and most of what it built (question
    texts, the aliases that are not normalized, the pages' titles and addresses) is never
    read. A file is read so in order of preference: the questions straight from the file
    (triviaqa_scan_questions: a Wikipedia dataset of well-formed questions); or json.loads of
    the file without the values never read (triviaqa_json_compact); or load_json, for any file
    the scans do not accept as plainly valid JSON, so that every error stays the one it gives.
    """
    if isinstance(dataset, (str, os.PathLike)):
        path = os.fspath(dataset)
        if isinstance(path, str):
            try:
                with open(path, "rb") as f:
                    # mapped, not copied: the scans read it once, json.loads only what they
                    # leave of it (an empty or special file is left to load_json)
                    raw = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) \
                        if os.fstat(f.fileno()).st_size else None
            except (OSError, ValueError):
                raw = None   # (load_json names the error)
            if raw is not None:
                with raw:
                    got = _scan_dataset(raw, scan_questions)
                if got is not None:
                    return got[0], path, got[1]
    data, src = load_json(dataset, "dataset")
    return data, src, None


def _scan_dataset(raw, scan_questions: bool) -> tuple | None:
    """_load_dataset's (data, questions) of a file's bytes, or None where the scans leave the
    file to load_json."""
    out = bytearray(len(raw))
    if scan_questions and not _not_wikipedia(raw):
        qids: list = []
        answers: list = []
        golds: list = []
        flags: list = []
        n = _kernels.triviaqa_scan_questions(raw, out, qids, answers, golds, flags,
                                             _SCANSTRING)
        if n >= 0:
            data = json.loads(str(memoryview(out)[:n], "utf-8"))
            if data.get("Domain") == "Wikipedia":
                return data, (qids, answers, golds, flags)
    n = _kernels.triviaqa_json_compact(raw, out)
    if n >= 0:
        return json.loads(str(memoryview(out)[:n], "utf-8")), None
    return None


#: json's own string decoder (json.loads's), for the long strings with an escape the scan
#: leaves to it
_SCANSTRING = json.decoder.scanstring  # type: ignore[attr-defined]

_DOMAIN = re.compile(rb'"Domain"\s*:\s*("[^"\\]*")')


def _not_wikipedia(raw) -> bool:
    """The file's Domain, where it is written near its start or its end (as json.dump writes
    it, keys sorted or not), is not "Wikipedia": the questions are then not scanned for
    nothing. (Only a guess at what the scans would find: they decide.)"""
    for part in (raw[:4096], raw[-4096:]):
        m = _DOMAIN.search(part)
        if m:
            return m.group(1) != b'"Wikipedia"'
    return False


class _Gold:
    """The keys in the script's order, each key's ``Answer`` object and the dataset's
    version. A key's gold answers are read only if it has a prediction, as the script reads
    them (``golds``). ``gold_lists``, where the dataset was scanned, are each key's gold
    strings as ``golds`` gives them, the scan having checked their types."""

    __slots__ = ("answers", "gold_lists", "keys", "src", "version")

    def __init__(self, keys, answers, src, version, gold_lists=None):
        self.keys, self.answers, self.src, self.version = keys, answers, src, version
        self.gold_lists = gold_lists

    def golds(self, preds: list) -> list:
        """Each key's gold answers, to be scored as the script scores them (the human
        answers not yet normalized: see _gold_answers_batch); [] for a key without a
        prediction."""
        fast: list | None
        if self.gold_lists is not None:
            fast = [g for g, p in zip(self.gold_lists, preds) if p is not None]
            if not all(fast):   # a key without gold answers: named below
                fast = None
        else:
            fast = _gold_answers_batch([a for a, p in zip(self.answers, preds)
                                        if p is not None])
        if fast is None:   # something to refuse: the first key at fault, as one by one
            fast = [_gold_answers(a, k, self.src)
                    for k, a, p in zip(self.keys, self.answers, preds) if p is not None]
        if len(fast) == len(preds):
            return fast
        it = iter(fast)
        return [next(it) if p is not None else [] for p in preds]


def _field(obj, name, src, where):
    try:
        return obj[name]
    except (KeyError, TypeError, IndexError):
        raise InputError(f"{src}: {where} has no {name!r}", field=name) from None


def _is_list(x) -> bool:
    return type(x) is list


def _read_gold(dataset, scan_questions: bool = True) -> _Gold:
    data, src, scanned = _load_dataset(dataset, scan_questions)
    if not isinstance(data, dict):
        raise InputError(f"{src}: the dataset must be an object with Version, Domain, "
                         "VerifiedEval and Data")
    version = _field(data, "Version", src, "the dataset")
    verified = _field(data, "VerifiedEval", src, "the dataset")
    questions = _field(data, "Data", src, "the dataset")
    if not _is_list(questions):
        raise InputError(f"{src}: Data must be a list of questions", field="Data")
    domain = _field(data, "Domain", src, "the dataset")
    web = domain != "Wikipedia"
    if not web:
        if scanned is not None:
            qids, answers_, golds, flags = scanned
            kept = _scanned_answers(qids, answers_, golds, flags, verified)
            if kept is None:   # some question is at fault: read them all, to name it
                return _read_gold(dataset, scan_questions=False)
            return _Gold(kept[0], kept[1], src, version, kept[2])
        fast = _wikipedia_answers(questions, verified)
        if fast is not None:
            keys = list(fast)
            return _Gold(keys, list(fast.values()), src, version)
    answers: dict = {}
    for n, q in enumerate(questions):
        if not isinstance(q, dict):
            raise InputError(f"{src}: question {n} is not an object")
        if verified and not _field(q, "QuestionPartOfVerifiedEval", src, f"question {n}"):
            continue
        if not web:
            qid = _field(q, "QuestionId", src, f"question {n}")
            _hashable(qid, src, n)
            answers[qid] = _field(q, "Answer", src, f"question {n}")
            continue
        pages = []
        for part in ("EntityPages", "SearchResults"):
            got = q.get(part, [])
            if not _is_list(got):
                raise InputError(f"{src}: question {n}: {part} must be a list", field=part)
            if verified and domain == "Web":
                got = [p for p in got if _field(p, "DocPartOfVerifiedEval", src,
                                                f"a page of question {n}")]
            pages.extend(got)
        if verified and domain == "Web" and not pages:
            raise InputError(f"{src}: question {n} ({q.get('QuestionId')!r}) is in the verified "
                             "set but none of its pages is (the script stops on an assertion)")
        if not pages:
            continue
        qid = _field(q, "QuestionId", src, f"question {n}")
        answer = _field(q, "Answer", src, f"question {n}")
        for page in pages:
            key = "{}--{}".format(qid, _field(page, "Filename", src, f"a page of question {n}"))
            answers[key] = answer
    keys = list(answers)
    return _Gold(keys, [answers[k] for k in keys], src, version)


def _wikipedia_answers(questions: list, verified) -> dict | None:
    """``{QuestionId: Answer}`` of a Wikipedia dataset's questions (the verified ones of a
    verified set), or None if some question is at fault: _read_gold then reads them one by
    one, naming the first. The same dict as that loop, built without a call a question."""
    if not all([type(q) is dict for q in questions]):
        return None
    try:
        if verified:
            return {q["QuestionId"]: q["Answer"] for q in questions
                    if q["QuestionPartOfVerifiedEval"]}
        return {q["QuestionId"]: q["Answer"] for q in questions}
    except Exception:   # (a missing field, a QuestionId that is no key, ...)
        return None


def _scanned_answers(qids: list, answers: list, golds: list, flags: list,
                     verified) -> tuple | None:
    """The keys, Answers and gold strings of the questions triviaqa_scan_questions read, as
    _wikipedia_answers keeps them (a key where it first comes, with its last question's
    Answer), or None if some question is at fault."""
    if verified:
        if -1 in flags:   # a question without QuestionPartOfVerifiedEval
            return None
        at = {k: i for i, (k, f) in enumerate(zip(qids, flags)) if f}
    else:
        at = dict(zip(qids, range(len(qids))))
        if len(at) == len(qids):   # (no QuestionId twice)
            return qids, answers, golds
    rows = list(at.values())
    return list(at), [answers[i] for i in rows], [golds[i] for i in rows]


def _hashable(qid, src, n) -> None:
    try:
        hash(qid)
    except TypeError:
        raise InputError(f"{src}: question {n}: QuestionId must be a string, got "
                         f"{type(qid).__name__}", field="QuestionId") from None


def _gold_answers_batch(answers: list) -> list | None:
    """Every answer's gold strings at once, or None if any answer is not what the script
    takes (then :func:`_gold_answers` names the first); one type check over all strings."""
    # The script normalizes the human answers here and every gold answer again when it
    # scores. TriviaQA's normalizer is idempotent (str.lower is, code point by code point, and
    # what it leaves has no punctuation and no article to take), so scoring the human answers
    # as they are gives the same numbers, and the scorer normalizes each string once, in C.
    try:
        aliases = [a["NormalizedAliases"] for a in answers]
        human = [a.get("HumanAnswers", []) for a in answers]
    except (KeyError, TypeError, AttributeError):
        return None
    if set(map(type, aliases)) - {list} or set(map(type, human)) - {list}:
        return None
    out = [al + h if h else al for al, h in zip(aliases, human)]
    if not all(out) or set(map(type, itertools.chain.from_iterable(out))) - {str}:
        return None
    return out


def _gold_answers(answer, key, src) -> list:
    if not isinstance(answer, dict):
        raise InputError(f"{src}: question {key!r}: Answer must be an object", query=key)
    aliases = answer.get("NormalizedAliases")
    human = answer.get("HumanAnswers", [])
    if type(aliases) is not list or type(human) is not list:
        raise InputError(f"{src}: question {key!r}: the Answer needs a NormalizedAliases list "
                         "(and HumanAnswers, if any, a list)", query=key,
                         field="NormalizedAliases")
    out = aliases + human
    if not all(type(t) is str for t in out):
        bad = next(t for t in out if type(t) is not str)
        raise InputError(f"{src}: question {key!r}: a gold answer must be a string, got "
                         f"{type(bad).__name__}", query=key)
    if not out:
        raise InputError(f"{src}: question {key!r} has no gold answer (the script stops on "
                         "max() of nothing)", query=key)
    if human:
        out = aliases + [normalize_triviaqa(h) for h in human]
    return out


def _read_predictions(predictions, gold: _Gold) -> tuple[list, int]:
    """Each key's prediction (None where there is none) and the number of predictions."""
    predictions, src = load_json(predictions, "predictions")
    if not isinstance(predictions, dict):
        raise InputTypeError(f"{src}: the predictions must be an object {{question id: answer}}"
                             f", got {type(predictions).__name__}")
    get = predictions.get
    out = list(map(get, gold.keys))
    kinds = set(map(type, out))
    if kinds <= {str, type(None)} and (type(None) not in kinds
                                       or None not in predictions.values()):
        # every answer a str (a None is a key without one): none to check one by one
        return out, len(predictions)
    for k, p in zip(gold.keys, out):
        if type(p) is not str and (p is not None or k in predictions):
            if isinstance(p, str):
                continue
            raise InputError(f"{src}: question {k!r}: the answer must be a string, got "
                             f"{type(p).__name__}", query=k)
    return [p if p is None or type(p) is str else str.__str__(p) for p in out], \
        len(predictions)


# --------------------------------------------------------------------------------------------
# Scoring
# --------------------------------------------------------------------------------------------

def _scores(preds: list, golds: list) -> tuple[np.ndarray, np.ndarray]:
    """Per key exact match (0/1) and F1, 0 where the prediction is None."""
    import numpy as np

    from . import answers

    n = len(preds)
    em, f1 = np.zeros(n), np.zeros(n)
    rows = [i for i, p in enumerate(preds) if p is not None]
    if not rows or not n:
        return em, f1
    if len(rows) == n:
        e, f = answers._score_both(preds, golds, "triviaqa", "token", "v1")
        return e, f
    e, f = answers._score_both([preds[i] for i in rows], [golds[i] for i in rows],
                               "triviaqa", "token", "v1")
    em[rows], f1[rows] = e, f
    return em, f1


def _gold_scores(gold: _Gold, preds: list) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_scores` of every key's prediction against its gold answers (``gold.golds``)."""
    if gold.gold_lists is None:
        walked = _walked_scores(gold.answers, preds)
        if walked is not None:
            return walked
    return _scores(preds, gold.golds(preds))


def _walked_scores(answers: list, preds: list) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`_scores` of the keys whose Answer objects are ``answers``, or None where some
    key's values are not exactly what the script takes (:meth:`_Gold.golds` then names it).

    Several threads scoring at once share one interpreter lock: building each key's list of
    gold strings and interning them held it for most of a call. Here one walk that makes no
    object gathers the strings (triviaqa_gold_strings); normalizing, tokenizing and scoring
    them (each occurrence, not each distinct string) run without the lock."""
    import numpy as np

    from . import answers as answers_module

    n = len(preds)
    rows = n - preds.count(None)
    em, f1 = np.zeros(n), np.zeros(n)
    if not rows:
        return em, f1
    ref_off = np.empty(rows + 1, dtype=np.int64)
    texts: list = []
    golds: list = []
    if _kernels.triviaqa_gold_strings(answers, preds, texts, golds,
                                      ref_off) != _kernels.TRIVIAQA_EVERY_KEY_TAKEN:
        return None
    strings = texts + golds
    if len(strings) >= 2**31:   # (string ids are int32: such an input goes the general way)
        return None
    tok_off = np.empty(len(strings) + 1, dtype=np.int64)
    ids, _ = _kernels.answer_tokens(strings, None, 2, tok_off)
    del strings, texts, golds
    # TriviaQA's normalized tokens as ids: each string's exact-match key as they come, its
    # F1 units sorted (the bag F1), as _scores encodes them
    keys = np.frombuffer(ids, dtype=np.int32)
    units = np.empty_like(keys)
    _kernels.answer_sort_segments(tok_off, keys, units)
    pred_sid = np.arange(rows, dtype=np.int32)
    ref_sid = np.arange(rows, rows + int(ref_off[rows]), dtype=np.int32)
    em_rows, f1_rows = (em, f1) if rows == n else (np.empty(rows), np.empty(rows))
    _kernels.answer_scores(pred_sid, answers_module._EMPTY_I64, ref_off, ref_sid, tok_off,
                           units, tok_off, keys, 1, False, False, em_rows, f1_rows,
                           np.zeros(2))
    if rows != n:
        at = np.fromiter((p is not None for p in preds), dtype=bool, count=n)
        em[at], f1[at] = em_rows, f1_rows
    return em, f1


def _walked_result(dataset, predictions) -> dict | None:
    """:func:`triviaqa`'s dict for a Wikipedia dataset object and a predictions dict, or None
    where either is not exactly what the script takes (:func:`triviaqa` then reads them the
    general way, which names the fault or takes what it can).

    Several threads scoring at once share one interpreter lock. Building the dict of keys,
    the list of each key's prediction and the lists of gold strings held it for a third of a
    call; here one compiled walk over the questions and the predictions, which makes no
    object a question, records where the strings are (triviaqa_object_tokens) and
    normalizes and tokenizes them without the lock, and the scores are summed without it."""
    if type(dataset) is not dict or type(predictions) is not dict:
        return None
    questions = dataset.get("Data")
    domain = dataset.get("Domain")
    verified = dataset.get("VerifiedEval")
    if (type(questions) is not list or type(domain) is not str or domain != "Wikipedia"
            or type(verified) is not bool or "Version" not in dataset):
        return None
    import numpy as np

    from . import answers as answers_module

    ref_off = np.empty(len(questions) + 1, dtype=np.int64)
    got = _kernels.triviaqa_object_tokens(questions, predictions, verified, ref_off)
    if got is None or not got[0]:   # (no key: the general way names it)
        return None
    keys, rows, ids, tok_off_bytes = got
    sums = np.zeros(2)
    if rows:
        tok_off = np.frombuffer(tok_off_bytes, dtype=np.int64)
        # TriviaQA's normalized tokens as ids: each string's exact-match key as they come, its
        # F1 units sorted (the bag F1), as _scores encodes them
        tokens = np.frombuffer(ids, dtype=np.int32)
        units = np.empty_like(tokens)
        _kernels.answer_sort_segments(tok_off, tokens, units)
        ref_off = ref_off[:rows + 1]
        _kernels.answer_scores(np.arange(rows, dtype=np.int32), answers_module._EMPTY_I64,
                               ref_off, np.arange(rows, rows + int(ref_off[rows]),
                                                  dtype=np.int32),
                               tok_off, units, tok_off, tokens, 1, False, False,
                               np.empty(rows), np.empty(rows), sums)
    # (the keys without a prediction add 0s to the script's sums, which change nothing)
    return _result_of(keys, int(sums[0]), float(sums[1]), rows, len(predictions), keys)


def _plain_scores(preds: list, golds: list) -> tuple | None:
    """``(rows, em, sums)``: the keys with a prediction, their exact match (0/1) and the
    sequential sums of their exact match and F1 (the script's, whose added 0s change
    nothing), scored by the same kernels as :func:`_scores` (TriviaQA's tokens, bag F1)
    without numpy; or None where some value is not exactly what they take (a str, each
    key's gold a non-empty list of str): :func:`_scores` then scores or names it."""
    rows = [i for i, p in enumerate(preds) if p is not None]
    if len(rows) == len(preds):
        texts, refs = preds, golds
    else:
        texts, refs = [preds[i] for i in rows], [golds[i] for i in rows]
    n = len(rows)
    sums = array("d", bytes(16))
    em = array("d", bytes(8 * n))
    if not n:
        return rows, em, sums
    ref_off = array("q", bytes(8 * (n + 1)))
    if _kernels.answer_count_refs(refs, ref_off) >= 0 or not all(refs):
        return None
    pred_sid = array("i", bytes(4 * n))
    ref_sid = array("i", bytes(4 * ref_off[n]))
    strings: list = []
    if _kernels.answer_intern(texts, refs, strings, pred_sid, ref_sid) is not None:
        return None
    # TriviaQA's normalized tokens as ids (mode 2), which are each string's exact-match key
    # as they come and its F1 units sorted (the bag F1), as qafast.answers encodes them
    tok_off = array("q", bytes(8 * (len(strings) + 1)))
    ids, _ = _kernels.answer_tokens(strings, None, 2, tok_off)
    keys = memoryview(ids).cast("B").cast("i")
    units = array("i", bytes(4 * len(keys)))
    _kernels.answer_sort_segments(tok_off, keys, units)
    f1 = array("d", bytes(8 * n))
    _kernels.answer_scores(pred_sid, array("q"), ref_off, ref_sid, tok_off, units, tok_off,
                           keys, 1, False, False, em, f1, sums)
    return rows, em, sums


def _seq_sum(values: np.ndarray) -> float:
    import numpy as np

    return float(np.add.accumulate(values)[-1]) if len(values) else 0.0


def _result(em: np.ndarray, f1: np.ndarray, common: int, pred_len: int, gold_len: int,
            what: str = "dataset") -> dict:
    import numpy as np

    return _result_of(len(em), int(np.count_nonzero(em)), _seq_sum(f1), common, pred_len,
                      gold_len, what)


def _result_of(n: int, em_count: int, f1_sum: float, common: int, pred_len: int,
               gold_len: int, what: str = "dataset") -> dict:
    """The script's dict from the number of keys, of exact matches and the F1s' sum."""
    if not n:
        raise InputError(f"the {what} has no question to score (the script divides by zero)")
    return {"exact_match": 100.0 * em_count / n, "f1": 100.0 * f1_sum / n, "common": common,
            "denominator": n, "pred_len": pred_len, "gold_len": gold_len}


def triviaqa(dataset, predictions) -> dict:
    """Score predictions as the official TriviaQA script (``triviaqa_evaluation.py``) does.

    Parameters
    ----------
    dataset : str, os.PathLike or dict
        A TriviaQA dataset file (a path or the loaded object): ``{"Version": 1.0, "Domain":
        "Wikipedia" or "Web", "VerifiedEval": bool, "Data": [{"QuestionId", "Answer":
        {"NormalizedAliases": [...], "HumanAnswers": [...]}, "EntityPages": [...],
        "SearchResults": [...], ...}]}``. A verified set keeps only its verified questions
        (and, on the web, their verified pages).
    predictions : str, os.PathLike or dict
        ``{key: answer}``: a Wikipedia key is the ``QuestionId``, a web key
        ``"{QuestionId}--{Filename}"`` (one per page). A key without one scores 0 and counts.

    Returns
    -------
    dict
        The script's dict, bit for bit and in its key order: ``exact_match`` and ``f1``
        (percentages), ``common`` (keys with a prediction), ``denominator`` and ``gold_len``
        (keys), ``pred_len`` (predictions, those of no key too).

    Examples
    --------
    >>> data = {"Version": 1.0, "Domain": "Wikipedia", "VerifiedEval": False, "Data": [
    ...     {"QuestionId": "q1", "Answer": {"NormalizedAliases": ["sunset boulevard",
    ...                                                           "sunset blvd"]}},
    ...     {"QuestionId": "q2", "Answer": {"NormalizedAliases": ["rock n roll"]}}]}
    >>> triviaqa(data, {"q1": "Sunset Blvd.", "q2": "rock-n-roll music"})
    {'exact_match': 50.0, 'f1': 92.85714285714286, 'common': 2, 'denominator': 2, \
'pred_len': 2, 'gold_len': 2}
    """
    with gc_paused():
        walked = _walked_result(dataset, predictions)
        if walked is not None:
            return walked
        gold = _read_gold(dataset)
        preds, pred_len = _read_predictions(predictions, gold)
        em, f1 = _gold_scores(gold, preds)
        common, keys = len(preds) - preds.count(None), len(gold.keys)
        # freed before the collector resumes (see _run_cli)
        del gold, preds
    return _result(em, f1, common, pred_len, keys)


def triviaqa_per_question(dataset, predictions) -> dict:
    """Every key's scores, in the order the script sums them.

    Returns
    -------
    dict
        ``"id"`` (the keys), ``"exact_match"`` and ``"f1"`` (float64 arrays in [0, 1]) and
        ``"predicted"`` (bool array; a key without a prediction scores 0).

    Examples
    --------
    >>> data = {"Version": 1.0, "Domain": "Web", "VerifiedEval": False, "Data": [
    ...     {"QuestionId": "q1", "Answer": {"NormalizedAliases": ["paris"]},
    ...      "SearchResults": [{"Filename": "a.txt"}, {"Filename": "b.txt"}]}]}
    >>> t = triviaqa_per_question(data, {"q1--a.txt": "Paris, France"})
    >>> t["id"], t["f1"].tolist(), t["predicted"].tolist()
    (['q1--a.txt', 'q1--b.txt'], [0.6666666666666666, 0.0], [True, False])
    """
    with gc_paused():
        gold = _read_gold(dataset)
        preds, _ = _read_predictions(predictions, gold)
        em, f1 = _gold_scores(gold, preds)
    import numpy as np

    return {"id": list(gold.keys), "exact_match": em, "f1": f1,
            "predicted": np.array([p is not None for p in preds], dtype=bool)}


class TriviaqaMetrics(KeptScores):
    """TriviaQA's exact match and F1 accumulated over batches of questions.

    ``update(predictions, answers)`` scores a batch: per question the prediction (None for
    none: it scores 0 and counts) and its gold answers as the script compares them (the
    ``NormalizedAliases``, then the ``HumanAnswers`` normalized). ``compute()`` gives the
    script's ``exact_match``, ``f1``, ``common`` and ``denominator`` for every question so far,
    in the order they came, bit for bit (the script adds the F1s left to right, so each
    question's scores are kept: 17 bytes a question).

    Examples
    --------
    >>> import qafast
    >>> m = qafast.TriviaqaMetrics()
    >>> m.update(["Sunset Blvd.", None], [["sunset boulevard", "sunset blvd"], ["paris"]])
    >>> m.update(["rock-n-roll music"], [["rock n roll"]])
    >>> m.compute()
    {'exact_match': 33.333333333333336, 'f1': 61.904761904761905, 'common': 2, \
'denominator': 3}
    """

    _LABEL = "predicted"
    _LABELS = ("no", "yes")
    _BINARY_EM = True

    def update(self, predictions, answers) -> None:
        """Score a batch of questions (the state is unchanged if it raises)."""
        if isinstance(predictions, (str, bytes)) or isinstance(answers, (str, bytes)):
            raise InputTypeError("predictions and answers are sequences, one item a question")
        predictions, answers = list(predictions), list(answers)
        n = len(predictions)
        if len(answers) != n:
            raise InputError(f"{n} predictions for {len(answers)} questions")
        preds, golds = [], []
        for i, (p, a) in enumerate(zip(predictions, answers)):
            if p is not None and not isinstance(p, str):
                raise InputError(f"question {i} of the batch: a prediction is a string or "
                                 f"None, got {type(p).__name__}")
            if isinstance(a, (str, bytes)) or not a or \
                    not all(isinstance(t, str) for t in a):
                raise InputError(f"question {i} of the batch: the gold answers must be a "
                                 "non-empty list of strings")
            preds.append(None if p is None else str.__str__(p))
            golds.append([str.__str__(t) for t in a])
        import numpy as np

        with gc_paused():
            em, f1 = _scores(preds, golds)
        self._append(em, f1, np.array([p is not None for p in preds], dtype=np.int8))

    def compute(self) -> dict:
        """The script's numbers over every question so far (``pred_len`` and ``gold_len``,
        which count the files' entries, are left out)."""
        em, f1, codes = self._arrays()
        out = _result(em, f1, int(codes.sum()), 0, 0, "metric")
        del out["pred_len"], out["gold_len"]
        return out


# --------------------------------------------------------------------------------------------
# The `qafast triviaqa` command
# --------------------------------------------------------------------------------------------

def register_cli(subparsers) -> dict:
    """Add ``qafast triviaqa`` to the ``qafast`` command; returns ``{"triviaqa": handler}``."""
    p = subparsers.add_parser(
        "triviaqa", help="score TriviaQA predictions, printing what the official "
                         "triviaqa_evaluation.py prints",
        description=f"Evaluation for TriviaQA {EXPECTED_VERSION}: score predictions as the "
                    "official triviaqa_evaluation.py does, printing the same lines.")
    p.add_argument("--dataset_file", required=True, help="Dataset file")
    p.add_argument("--prediction_file", required=True, help="Prediction File")
    return {"triviaqa": _run_cli}


def _run_cli(args) -> int:
    with gc_paused():
        # what the evaluation built is freed with _cli_write's frame, before the collector
        # resumes: else its first full collection would walk those millions of objects (half
        # a second on 100,000 questions), which are garbage by then
        _cli_write(args)
    return 0


def _cli_write(args) -> None:
    gold = _read_gold(args.dataset_file)
    if gold.version != EXPECTED_VERSION:
        sys.stderr.write(f"Evaluation expects v-{EXPECTED_VERSION} , but got dataset with "
                         f"v-{gold.version}\n")
    preds, pred_len = _read_predictions(args.prediction_file, gold)
    golds = gold.golds(preds)
    common = len(preds) - preds.count(None)
    plain = _plain_scores(preds, golds)
    if plain is not None:
        rows, em, sums = plain
        result = _result_of(len(preds), int(sums[0]), sums[1], common, pred_len,
                            len(gold.keys))
        wrong = [i for i, e in zip(rows, em.tolist()) if not e]
    else:
        import numpy as np

        em, f1 = _scores(preds, golds)
        result = _result(em, f1, common, pred_len, len(gold.keys))
        wrong = np.flatnonzero(em == 0).tolist()
    # the script's two streams, line by line in its order
    keys, answers = gold.keys, gold.answers
    sys.stderr.write("".join([f"Missed question {k} will receive score 0.\n"
                              for k, p in zip(keys, preds) if p is None]))
    missed = []
    for i in wrong:
        p = preds[i]
        if p is not None:
            # the list the script prints has the human answers normalized (golds has them as
            # they are: see _gold_answers_batch)
            g = golds[i]
            human = answers[i].get("HumanAnswers")
            if human:   # (checked by gold.golds)
                g = answers[i]["NormalizedAliases"] + [normalize_triviaqa(h) for h in human]
            missed.append((p, g))
    out = _em0_lines(missed)
    out.append(f"{result!r}\n")
    sys.stdout.write("".join(out))


def _em0_lines(missed: list) -> list:
    """The script's ``em=0: {prediction} {gold list}`` line of each (prediction, gold strings)
    pair.

    repr of the lists took most of the time of writing them (a call a string). A string
    with no quote, no backslash and no character that is not printable has repr ``'s'``
    (str.isprintable is the test repr escapes by), so where every gold string is such (as
    normalized answers are) each list is written as one join; else each by repr."""
    bodies = [_QUOTED_SEP.join(g) for _, g in missed]
    every = "".join(bodies)
    # the only quotes are the separators' (two between two strings of a list)
    quotes = 2 * (sum(map(len, (g for _, g in missed))) - len(missed))
    if (every.count("'") != quotes or "\\" in every or not every.isprintable()
            or not all(g for _, g in missed)):
        return [f"em=0: {p} {g!r}\n" for p, g in missed]
    return [f"em=0: {p} ['{b}']\n" for (p, _), b in zip(missed, bodies)]


#: what separates two plain strings in a list's repr
_QUOTED_SEP = "', '"
