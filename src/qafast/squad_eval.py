"""SQuAD v1.1 and v2.0, exactly as the official evaluation scripts compute them.

:func:`squad` returns the dict each script prints (same keys, same order, same 0-100 scale,
bit-identical floats), scoring answers with the compiled kernels of :mod:`qafast.answers`
(one normalization per string) and doing the script-level work (sums, no-answer thresholds,
best-threshold search, precision-recall curves) over numpy arrays in the scripts' order of
operations. The plain-Python specification is :mod:`qafast.reference.squad`; its docstring
lists every rule and quirk reproduced here. ``qafast squad DATA PRED`` is the command-line form.
Hugging Face ``evaluate``'s ``squad`` and ``squad_v2`` inputs are accepted too, and give what
those metrics return.
"""

from __future__ import annotations

import json
import math
import numbers
import operator
import os
import re
import sys
from dataclasses import dataclass, field

import numpy as np

from . import _kernels
from ._gc import gc_paused
from .errors import InputError, InputTypeError
from .io.squad import (
    SquadDataset,
    SquadFormatError,
    dataset_head,
    float64_stands_in,
    is_hf_predictions,
    na_probs_with_values,
    predictions_unchecked,
    read_hf_predictions,
    read_squad_dataset,
    walk_articles,
    warn_squad,
    warn_unknown,
)

__all__ = ["squad"]

_VERSIONS = ("1.1", "2.0")
_MISSING = ("zero", "skip", "error")


def squad(dataset, predictions, *, version: str | None = None, na_probs=None,
          na_prob_thresh: float = 1.0, missing: str | None = None) -> dict:
    """Score answers as the official SQuAD evaluation script of ``version`` does.

    Parameters
    ----------
    dataset : str, os.PathLike, dict, list or SquadDataset
        SQuAD JSON: a file path, the loaded object (with ``"data"``), its list of articles, or
        a list of questions ``{"id": ..., "answers": ...}`` (the ``references`` of Hugging
        Face ``evaluate``'s ``squad`` and ``squad_v2`` metrics). Answers are a list of
        ``{"text": ...}`` or, as in Hugging Face ``datasets``, ``{"text": [...],
        "answer_start": [...]}``.
    predictions : str, os.PathLike, mapping or list
        ``{question id: answer text}`` or a JSON file of it; ``""`` predicts "no answer". Or
        Hugging Face ``evaluate``'s list ``[{"id": ..., "prediction_text": ...,
        "no_answer_probability": ...}, ...]``: the result is then what its ``squad`` metric
        (no probabilities) or ``squad_v2`` metric (every item has one) returns, see Notes.
    version : {"1.1", "2.0"} or None, default=None
        Which script to reproduce. None takes it from the input: Hugging Face predictions
        say "2.0" when they carry ``no_answer_probability`` and "1.1" when they do not;
        otherwise the dataset's ``"version"`` field decides, "1.x" (SQuAD v1.1 files say
        "1.1", MLQA's "1.0") giving "1.1" and "2.x" or "v2.x" (SQuAD v2.0 files say "v2.0")
        giving "2.0". A dataset without the field (a list of articles or questions) is
        scored as "2.0", the script that reads such files; one whose field is something
        else is scored as "2.0" with a :class:`~qafast.io.squad.SquadWarning`. A version
        given here that contradicts the input's is used, with a ``SquadWarning``.
    na_probs : str, os.PathLike, mapping or None, default=None
        v2.0 only: ``{question id: probability of no answer}`` (the script's
        ``--na-prob-file``). Adds ``best_exact``, ``best_exact_thresh``, ``best_f1``,
        ``best_f1_thresh`` and, when some question has an answer, ``pr_exact_ap``,
        ``pr_f1_ap``, ``pr_oracle_ap``. Every scored question needs one. Any number is
        compared as the script compares it, in Python: integers exactly at any size, ``True``
        as 1, infinities in order, and NaN, which is never greater than a threshold and sits
        in the sorted order wherever Python's sort leaves it.
    na_prob_thresh : float, default=1.0
        v2.0 only: a question whose probability is strictly greater is predicted unanswerable.
        Without ``na_probs`` every probability is 0.0, as in the script. NaN is accepted, as
        the script's ``-t nan``: nothing is greater than it. (Hugging Face's
        ``no_answer_threshold``.)
    missing : {"zero", "skip", "error"} or None, default=None
        A question without a prediction: ``"zero"`` scores it 0 and keeps it in every count
        (v1.1's rule), ``"skip"`` leaves it out (v2.0's rule for its overall score; the script
        then crashes on its HasAns/NoAns lines, qafast does not), ``"error"`` raises
        ``ValueError``. ``None`` takes the rule of ``version``.

    Returns
    -------
    dict
        v1.1: ``exact_match``, ``f1``. v2.0: ``exact``, ``f1``, ``total``, then
        ``HasAns_*`` and ``NoAns_*`` only for a split that has questions, then the keys added
        by ``na_probs``. Scores are on a 0-100 scale; totals are ints; thresholds are the
        caller's probability values, unchanged (0.0 when no threshold beats "all
        unanswerable").

    Notes
    -----
    The best threshold is found as the script does: ties between equal probabilities are not
    grouped and keep the order of ``na_probs``, so the reported best score may not be reachable
    at the reported threshold (see :func:`qafast.reference.squad.best_threshold`). The
    precision-recall curves do group ties. A prediction for an id the dataset lacks is
    ignored with a :class:`~qafast.io.squad.SquadWarning`.

    Given Hugging Face's predictions, the result has the keys its metric returns: ``squad``
    gives ``exact_match`` and ``f1``; ``squad_v2`` gives the v2.0 keys, always with the four
    ``best_*`` ones and never the ``pr_*`` ones. Its probabilities are rounded to float32 and
    widened back, as that metric's input features store them, so a ``best_*_thresh`` of 0.3
    comes back as 0.30000001192092896, as there. Ids and texts must be strings (the metric
    would convert other values with ``str``).

    Examples
    --------
    >>> data = [{"paragraphs": [{"qas": [
    ...     {"id": "q1", "answers": [{"text": "the Eiffel Tower"}]},
    ...     {"id": "q2", "answers": []}]}]}]
    >>> squad(data, {"q1": "Eiffel tower!", "q2": ""})
    ... # doctest: +NORMALIZE_WHITESPACE
    {'exact': 100.0, 'f1': 100.0, 'total': 2, 'HasAns_exact': 100.0, 'HasAns_f1': 100.0,
     'HasAns_total': 1, 'NoAns_exact': 100.0, 'NoAns_f1': 100.0, 'NoAns_total': 1}

    Under v1.1 a question without a prediction scores 0 ("Tower" has F1 2/3 on q1):

    >>> squad({"version": "1.1", "data": data}, {"q1": "Tower"})
    {'exact_match': 0.0, 'f1': 33.33333333333333}

    Hugging Face ``evaluate``'s form:

    >>> references = [{"id": "q1", "answers": {"text": ["1976"], "answer_start": [97]}}]
    >>> squad(references, [{"id": "q1", "prediction_text": "1976"}])
    {'exact_match': 100.0, 'f1': 100.0}
    """
    with gc_paused():
        # the evaluation (and the lists it made) is freed before the collector is back, so
        # that its first collection does not walk a million young objects on their way out
        return _evaluate(dataset, predictions, version=version, na_probs=na_probs,
                         na_prob_thresh=na_prob_thresh, missing=missing).result


_VERSION_FIELD = re.compile(r"[vV]?\s*([12])(?:\.[0-9]+)*")


def version_rules(field) -> str | None:
    """The script a dataset's ``"version"`` field names: "1.1" for 1.x ("1.1" in SQuAD v1.1
    files, "1.0" in MLQA's), "2.0" for 2.x ("v2.0" in SQuAD v2.0 files), None for a missing
    field or any other value.

    >>> version_rules("v2.0"), version_rules("1.0"), version_rules(1.1), version_rules("3")
    ('2.0', '1.1', '1.1', None)
    """
    if field is None or isinstance(field, bool):
        return None
    m = _VERSION_FIELD.fullmatch(str(field).strip())
    return None if m is None else "1.1" if m.group(1) == "1" else "2.0"


def _resolve_version(version, ds: SquadDataset, hf_version=None):
    """``(the rules to use, a warning to give or None)``; see :func:`squad`'s ``version``.
    ``hf_version`` is what Hugging Face predictions imply, when given them."""
    if hf_version is not None:
        said, what = hf_version, ("the predictions are in the form of Hugging Face's "
                                  + ("squad_v2 metric (with no_answer_probability)"
                                     if hf_version == "2.0" else
                                     "squad metric (without no_answer_probability)"))
    else:
        said = version_rules(ds.version)
        what = f"the dataset's version field says {ds.version!r}"
    if version is not None:
        if said is not None and said != version:
            return version, (f"{ds.source}: {what}, but version={version!r} was asked for; "
                             f"scoring with the v{version} script's rules")
        return version, None
    if said is not None:
        return said, None
    if ds.version is None:
        return "2.0", None
    return "2.0", (f"{ds.source}: the dataset's version field says {ds.version!r}, neither "
                   "SQuAD 1.x nor 2.x; scoring with the v2.0 script's rules (pass version= "
                   "to choose)")


@dataclass
class _Evaluation:
    result: dict
    curves: dict = field(default_factory=dict)      # name -> (precisions, recalls)
    histograms: dict = field(default_factory=dict)  # "hasAns"/"noAns" -> probabilities
    missing: list = field(default_factory=list)     # question ids without a prediction
    dataset: SquadDataset | None = None
    version: str = "2.0"                            # the rules used
    missing_rule: str = "skip"                      # the rule for missing predictions used


def _check_options(version, na_prob_thresh, missing) -> None:
    if version is not None and (not isinstance(version, str) or version not in _VERSIONS):
        raise InputError(f"version must be '1.1', '2.0' or None, got {version!r}")
    if missing is not None and (not isinstance(missing, str) or missing not in _MISSING):
        raise InputError(f"missing must be 'zero', 'skip', 'error' or None, got {missing!r}")
    if not isinstance(na_prob_thresh, numbers.Real):
        raise InputTypeError("na_prob_thresh must be a real number, got "
                             f"{type(na_prob_thresh).__name__}")


def _evaluate(dataset, predictions, *, version=None, na_probs=None, na_prob_thresh=1.0,
              missing=None, curves=False, version_warning=True) -> _Evaluation:
    """What :func:`squad` computes, with the curves for plots if asked. ``version_warning``
    False leaves a version that contradicts the input's unsaid (the caller said it)."""
    _check_options(version, na_prob_thresh, missing)
    with gc_paused():
        return _evaluate_inputs(dataset, predictions, version, na_probs, na_prob_thresh,
                                missing, curves, version_warning)


class _Walked:
    """What the walk over the dataset's articles found beside its questions, when it looked
    up their predictions and encoded their answers as it went (see :func:`_read_dataset`):
    for the questions ``ids`` and the dict ``preds``, ``squad_lookup``'s four values, and
    ``answer_encode_squad_flat``'s encoding of the predictions ``texts`` and the answers
    ``golds`` (None when some prediction is missing or not a str)."""

    __slots__ = ("absent", "aligned", "all_str", "encoding", "golds", "ids", "preds", "texts")

    def __init__(self, ids, preds, texts, absent, aligned, all_str, golds, encoding):
        self.ids, self.preds, self.texts = ids, preds, texts
        self.absent, self.aligned, self.all_str = absent, aligned, all_str
        self.golds, self.encoding = golds, encoding

    def looked(self, ids, preds):
        """squad_lookup(ids, preds), if that is what was looked up, else None."""
        if ids is self.ids and preds is self.preds:
            return self.texts, self.absent, self.aligned, self.all_str
        return None

    def encoded(self, texts, golds_texts):
        """The encoding of these predictions and answers (``(tok_off, ids, pred_sid,
        ref_sid)``), if it is what was encoded, else None."""
        if self.encoding is not None and texts is self.texts and golds_texts is self.golds:
            return self.encoding
        return None


def _read_dataset(dataset, predictions) -> tuple[SquadDataset, _Walked | None]:
    """read_squad_dataset(dataset), and, when the predictions are a dict, each question's
    prediction looked up and its answers encoded as the walk goes, a slice of questions at
    a time: a slice's walk, lookup and copy of its strings hold the GIL, its encoding then
    runs without it while other threads take their turn. (Walked whole first, four threads
    each scoring a dataset on two cores spent their walks one after the other before any
    encoding, with a core idle.) A dataset the slices cannot walk (a malformed one, ids or
    texts that are not str) is read by read_squad_dataset's walk, which says what is wrong."""
    head = dataset_head(dataset)
    if isinstance(head, SquadDataset):
        return head, None
    if type(predictions) is dict:
        walked = _walk_encoded(head.data, predictions)
        if walked is not None:
            ds, walk = walked
            return SquadDataset(ds[0], None, head.version, head.name, texts=ds[1],
                                offsets=ds[2]), walk
    return walk_articles(head), None


def _walk_encoded(data: list, preds: dict):
    """``((ids, texts, offsets), _Walked)`` of the articles, or None when a slice's walk
    meets something the whole walk has to look at (then nothing of it is kept)."""
    from . import answers

    articles = list(data)
    step = answers._SLICE_QUESTIONS
    # lists made to the likely sizes (a question per prediction, answers as in the first
    # slice) and filled: grown by appends between the slices' other allocations, they were
    # copied at each reallocation (5% of a call)
    ids: list = [None] * len(preds)
    texts: list = []
    pred_texts: list = [None] * len(preds)
    offsets: list = []
    encoder: _kernels.SquadEncoder | None = _kernels.SquadEncoder(4 * len(preds) + 16)
    at: list[int] = [0, 0, 0]  # where the next slice starts: article, paragraph, question
    nids = ntexts = 0
    pos, absent, all_str = 0, 0, True
    while True:
        lo = nids
        try:
            ok, off, *at, nids, ntexts = _kernels.squad_flatten_slice(
                articles, at[0], at[1], at[2], step, ids, nids, texts, ntexts)
        except (KeyError, TypeError, AttributeError):
            return None
        if not ok:
            return None
        if not offsets and nids:
            texts.extend([None] * (ntexts * (len(preds) - nids) // nids))
        n_absent, pos, looked_str = _kernels.squad_lookup_slice(ids, lo, nids, preds, pos,
                                                                pred_texts)
        absent += n_absent
        all_str = all_str and looked_str
        if encoder is not None and (n_absent or not looked_str
                                    or not encoder.add(pred_texts, lo, texts, off)):
            encoder = None       # scored the general way, after the walk
        offsets.append(off if not offsets else off[1:])
        if at[0] >= len(articles):
            break
    del ids[nids:], texts[ntexts:], pred_texts[nids:]
    encoding = encoder.finish() if encoder is not None else None
    aligned = pos >= 0 and len(preds) == len(ids)
    walk = _Walked(ids, preds, pred_texts, absent, aligned, all_str, texts, encoding)
    return (ids, texts, np.concatenate(offsets)), walk


def _evaluate_inputs(dataset, predictions, version, na_probs, na_prob_thresh, missing,
                     curves, version_warning=True) -> _Evaluation:
    ds, walked = _read_dataset(dataset, predictions)
    hf = is_hf_predictions(predictions)
    hf_version = None
    if hf:
        if na_probs is not None:
            raise InputError("Hugging Face predictions carry their no_answer_probability; "
                             "na_probs must be None with them")
        preds, hf_probs = read_hf_predictions(predictions)
        check_preds = None
        if predictions:
            hf_version = "2.0" if hf_probs is not None else "1.1"
    else:
        # the values are checked to be str as they are looked up (see _lookup)
        preds, check_preds = predictions_unchecked(predictions)
    asked = version
    version, note = _resolve_version(asked, ds, hf_version)
    if note is not None and version_warning:
        warn_squad(note)
    if version == "1.1" and (na_probs is not None or na_prob_thresh != 1.0):
        said = (f" ({ds.source}'s version field says {ds.version!r})"
                if asked is None and hf_version is None else "")
        raise InputError("na_probs and na_prob_thresh are SQuAD v2.0 options, and the "
                         f"v1.1 script's rules apply{said}; pass version='2.0'")
    if missing is None:
        missing = "zero" if version == "1.1" else "skip"
    source = "<predictions>" if not isinstance(predictions, (str, os.PathLike)) \
        else os.fspath(predictions)
    if walked is not None and walked.preds is not preds:
        walked = None
    if version == "1.1":
        ev = _evaluate_v1(ds, preds, missing, source, check_preds, walked)
    else:
        probs = probs_info = None
        na_source = na_probs
        if hf:
            probs, na_source = hf_probs, None
            if probs is None:            # squad_v2 always searches for the best threshold
                probs = dict.fromkeys(preds, 0.0)
        if na_probs is not None or probs is not None:
            probs, probs_values, probs_aligned = na_probs_with_values(
                probs if hf else na_probs, ds.ids)
            probs_info = (probs_values, probs_aligned)
        ev = _evaluate_v2(ds, preds, probs, na_prob_thresh, missing, source, na_source,
                          curves and not hf, check_preds, probs_info, walked)
        if hf:
            for k in ("pr_exact_ap", "pr_f1_ap", "pr_oracle_ap"):
                ev.result.pop(k, None)
    ev.version, ev.missing_rule = version, missing
    return ev


def _lookup(ids: list, preds: dict, check=None, walked: _Walked | None = None):
    """``([preds.get(q) for q in ids], how many are None, aligned)``: ``aligned`` is True
    when the predictions' keys are exactly ``ids``, in order (no unknown question then).
    ``check()`` (which raises for a prediction that is not a str) is called unless every
    prediction was seen here and is a str. ``walked``: what the walk looked up, if any."""
    looked = walked.looked(ids, preds) if walked is not None else None
    if looked is not None:
        texts, absent, aligned, all_str = looked
    elif type(preds) is dict and type(ids) is list:
        texts, absent, aligned, all_str = _kernels.squad_lookup(ids, preds)
    else:
        texts = list(map(preds.get, ids))
        absent, aligned, all_str = texts.count(None), False, False
    if check is not None and not (aligned and all_str):
        check()
    return texts, absent, aligned


def _predictions_of(ids: list, preds: dict, missing: str, looked=None, check=None,
                    walked=None):
    """Each question's prediction (None when missing) and the ids of the missing ones
    (``looked``: what ``_lookup(ids, preds)`` gave, if done already)."""
    texts, n_absent, _ = _lookup(ids, preds, check, walked) if looked is None else looked
    if not n_absent:
        return texts, []
    absent = [q for q, t in zip(ids, texts) if t is None]
    if missing == "error":
        shown = ", ".join(repr(q) for q in absent[:5]) + (", ..." if len(absent) > 5 else "")
        raise InputError(f"{len(absent)} question(s) have no prediction "
                         f"(missing='error'): {shown}")
    return texts, absent


def _nonempty(items: list) -> np.ndarray:
    """``bool(x)`` of each item, as a bool array."""
    out = np.empty(len(items), dtype=bool)
    if type(items) is list:
        _kernels.squad_nonempty(items, out.view(np.uint8))
    else:
        out[:] = np.fromiter(map(bool, items), dtype=bool, count=len(items))
    return out


def _seq_sum(values: np.ndarray) -> float:
    """Left-to-right sum, as Python's ``sum`` and the scripts' ``+=`` loops add (numpy's
    ``sum`` adds pairwise, which can differ in the last bit)."""
    if len(values) == 0:
        return 0.0
    out = np.empty(1)
    _kernels.column_sums(np.ascontiguousarray(values, dtype=np.float64).reshape(-1, 1), out)
    return float(out[0])


def _answer_scores(preds: list, golds: list, empty_rule: str):
    """Per-question exact match and token F1 (max over golds) as float64 arrays.

    One pass of the compiled kernel gives both scores from one normalization of each distinct
    string; if :mod:`qafast.answers` changes its internals, its two public functions are used.
    """
    try:
        from . import answers
    except ImportError:  # pragma: no cover - until the compiled answer metrics are in the tree
        from .reference import answers  # type: ignore[no-redef]
    try:
        prepare, kernels = answers._prepare_encoded, answers._kernels
    except AttributeError:  # pragma: no cover - only if qafast.answers is reorganized
        prepare = None
    if prepare is not None:
        v2 = empty_rule == "v2"
        pred_sid, ref_off, ref_sid, enc = prepare(preds, golds, empty_rule, "squad", "token",
                                                  bag=True)
        n = len(pred_sid)
        em, f1 = np.empty(n), np.empty(n)
        kernels.answer_scores(pred_sid, np.zeros(0, dtype=np.int64), ref_off, ref_sid,
                              enc.tok_off, enc.toks, enc.key_off, enc.keys, 1, v2, v2, em, f1,
                              np.zeros(2))
        return em, f1
    em_values = answers.exact_match(preds, golds, normalizer="squad", empty_rule=empty_rule,
                                    per_question=True)
    f1_values = answers.f1(preds, golds, normalizer="squad", unit="token",
                           empty_rule=empty_rule, per_question=True)
    return np.asarray(em_values, dtype=np.float64), np.asarray(f1_values, dtype=np.float64)


class _Golds:
    """Gold answers as one flat list: question i's are ``texts[off[i]:off[i + 1]]``."""

    __slots__ = ("texts", "off")

    def __init__(self, texts: list, off: np.ndarray):
        self.texts, self.off = texts, off

    def __len__(self) -> int:
        return len(self.off) - 1

    def counts(self) -> np.ndarray:
        return np.diff(self.off)

    def take(self, rows) -> "_Golds":
        off = self.off.tolist()
        texts = [t for i in rows for t in self.texts[off[i]:off[i + 1]]]
        sizes = np.array([off[i + 1] - off[i] for i in rows], dtype=np.int64)
        new_off = np.zeros(len(sizes) + 1, dtype=np.int64)
        np.cumsum(sizes, out=new_off[1:])
        return _Golds(texts, new_off)


def _scores_flat(preds: list, golds: _Golds, empty_rule: str, walked=None):
    """_answer_scores on flat golds: per-question exact match and token F1 arrays
    (``walked``: the walk's encoding, used if it is of these strings)."""
    from . import answers

    v2 = empty_rule == "v2"
    n = len(preds)
    encoded = walked.encoded(preds, golds.texts) if walked is not None else None
    tokens: tuple | None
    if encoded is not None:
        tok_off, ids, pred_sid, ref_sid = encoded
        tokens = tok_off, ids
    else:
        pred_sid = np.empty(n, dtype=np.int32)
        ref_sid = np.empty(len(golds.texts), dtype=np.int32)
        # interned and tokenized in one kernel that holds the GIL only to copy the strings
        # out, a slice of questions at a time
        tokens = _kernels.answer_encode_squad_flat(preds, golds.texts, golds.off, pred_sid,
                                                   ref_sid, answers._SLICE_QUESTIONS)
    if tokens is None:  # the readers let only str through; a caller's own lists may not
        return _answer_scores(preds, [golds.texts[a:b] for a, b in
                                      zip(golds.off.tolist(), golds.off[1:].tolist())],
                              empty_rule)
    enc = answers._Encoded.squad_tokens(tokens[0], tokens[1], bag=True)
    em, f1 = np.empty(n), np.empty(n)
    answers._kernels.answer_scores(pred_sid, np.zeros(0, dtype=np.int64), golds.off, ref_sid,
                                   enc.tok_off, enc.toks, enc.key_off, enc.keys, 1, v2, v2,
                                   em, f1, np.zeros(2))
    return em, f1


def _evaluate_v1(ds: SquadDataset, preds: dict, missing: str, source: str,
                 check=None, walked=None) -> _Evaluation:
    ids = ds.ids
    looked = _lookup(ids, preds, check, walked)
    # every prediction is for a question when the keys are the ids in order, or when as many
    # matched as there are, ids being unique
    if not (looked[2] or len(preds) == len(ids) - looked[1] and type(ids) is list
            and _kernels.squad_count_distinct(ids) == len(ids)):
        warn_unknown(preds, set(ids), "predictions", source)
    texts, absent = _predictions_of(ids, preds, missing, looked)
    golds = _Golds(*ds.flat())
    if absent:
        keep = [i for i, t in enumerate(texts) if t is not None]
        ids = [ids[i] for i in keep]
        golds = golds.take(keep)
        texts = [texts[i] for i in keep]
    counts = golds.counts()
    if len(counts) and not counts.all():
        q = ids[int(np.argmin(counts))]
        raise InputError(f"{ds.source}, question {q!r}: no gold answer; SQuAD v1.1 needs at "
                         "least one (unanswerable questions are version='2.0')")
    total = len(ids) if missing == "skip" else len(ds.ids)
    if total == 0:
        raise InputError(f"{ds.source}: no question to score")
    em, f1 = _scores_flat(texts, golds, "v1", walked)
    result = {"exact_match": 100.0 * float(em.sum()) / total,
              "f1": 100.0 * _seq_sum(f1) / total}
    return _Evaluation(result, missing=absent, dataset=ds)


def _keys_are(d: dict, ids: list) -> bool:
    """``list(d) == ids``."""
    if type(d) is dict and type(ids) is list:
        return _kernels.squad_keys_are(d, ids)
    return len(d) == len(ids) and list(d) == ids


def _unique_questions(ds: SquadDataset, probs, aligned=None, walked=None):
    """v2.0 keys questions by id: first place, last answers. Returns the ids, the answers
    and whether the probabilities' keys are those ids in order (``aligned``, if known)."""
    ids = ds.ids
    if probs is not None and (aligned if aligned is not None else _keys_are(probs, ids)):
        return ids, _Golds(*ds.flat()), True  # the keys of a dict: no repeat (usual case)
    if walked is not None and walked.ids is ids and walked.aligned:
        return ids, _Golds(*ds.flat()), False  # the predictions' keys: no repeat either
    if _kernels.squad_count_distinct(ids) == len(ids):
        return ids, _Golds(*ds.flat()), False
    last = dict(zip(ids, range(len(ids))))
    order = list(last)                  # dict order: first occurrence
    return order, _Golds(*ds.flat()).take([last[q] for q in order]), False


def _mean_dict(exact: np.ndarray, f1: np.ndarray) -> dict:
    total = len(exact)
    return {"exact": 100.0 * _seq_sum(exact) / total, "f1": 100.0 * _seq_sum(f1) / total,
            "total": total}


def _evaluate_v2(ds, preds, probs, thresh, missing, source, na_source, curves,
                 check=None, probs_info=None, walked=None) -> _Evaluation:
    values, aligned = probs_info if probs_info is not None else (None, None)
    ids, golds, probs_aligned = _unique_questions(ds, probs, aligned, walked)
    texts, absent = _predictions_of(ids, preds, missing, check=check, walked=walked)
    n = len(ids)
    if len(preds) != n - len(absent):   # ids are unique: some prediction matched no question
        warn_unknown(preds, set(ids), "predictions", source)
    has_ans = golds.counts() > 0
    if not absent:
        em_raw, f1_raw = _scores_flat(texts, golds, "v2", walked)
        text = _nonempty(texts)
        scored, live = np.arange(n), np.ones(n, dtype=bool)
    else:
        live = np.fromiter((t is not None for t in texts), dtype=bool, count=n)
        pos = np.flatnonzero(live)
        present = [texts[i] for i in pos]
        em_p, f1_p = _scores_flat(present, golds.take(pos.tolist()), "v2")
        text_p = np.fromiter(map(bool, present), dtype=bool, count=len(pos))
        if missing == "zero":                 # every question scored, the missing ones 0
            scored = np.arange(n)
            em_raw, f1_raw, text = np.zeros(n), np.zeros(n), np.zeros(n, dtype=bool)
            em_raw[pos], f1_raw[pos], text[pos] = em_p, f1_p, text_p
        else:                                 # only the predicted ones
            scored = pos
            em_raw, f1_raw, text = em_p, f1_p, text_p
            live = np.ones(len(pos), dtype=bool)
    if len(scored) == 0:
        raise InputError(f"{ds.source}: no question to score")
    s_ids = ids if len(scored) == n else [ids[i] for i in scored]
    s_has = has_ans[scored]

    # probabilities in the order of the scored questions (0.0 without na_probs). float64
    # stands in for the caller's numbers unless that would change a comparison (a NaN, an
    # integer beyond 2**53): then the numbers themselves are compared, as the script does.
    m = len(scored)
    thresh_f64 = float64_stands_in((thresh,)) or (type(thresh) is float and thresh != thresh)
    objs = None
    if probs is None:
        na = np.zeros(m)
        pred_na = np.full(m, bool(0.0 > thresh)) & live
    else:
        na, keypos = _align_probs(probs, s_ids, live, ids, na_source,
                                  aligned=probs_aligned and s_ids is ids, values=values)
        if na is None or not thresh_f64:
            objs = _in_scored_order(probs, keypos, m)
            limit = _comparable(thresh)
            pred_na = np.fromiter((bool(v > limit) for v in objs), dtype=bool, count=m) & live
        else:
            pred_na = (na > float(thresh)) & live
    no_ans_score = (~s_has).astype(np.float64)
    em_t = np.where(pred_na, no_ans_score, em_raw)
    f1_t = np.where(pred_na, no_ans_score, f1_raw)
    result = _mean_dict(em_t, f1_t)
    for prefix, mask in (("HasAns", s_has), ("NoAns", ~s_has)):
        if mask.any():
            for k, v in _mean_dict(em_t[mask], f1_t[mask]).items():
                result[f"{prefix}_{k}"] = v
    ev = _Evaluation(result, missing=absent, dataset=ds)
    if probs is None:
        return ev
    # the walk over na_probs: scored, predicted questions in na_probs order, sorted by
    # probability as Python's stable sort orders them
    known = keypos[keypos >= 0]
    order = known[live[known]]
    if na is None:
        # the script's sorted() over every probability (NaN lands where the sort leaves it,
        # which depends on its neighbours), then the questions not walked are dropped
        listed = list(map(_comparable, probs.values()))
        ranked = keypos[np.array(sorted(range(len(listed)), key=listed.__getitem__),
                                 dtype=np.int64)]
        ranked = ranked[ranked >= 0]
        walk = ranked[live[ranked]]
    elif len(order) == m and (m == 0 or (order[0] == 0 and order[-1] == m - 1
                                         and bool((np.diff(order) == 1).all()))):
        walk = np.empty(m, dtype=np.int64)   # every question, in order: no gather
        _kernels.argsort_stable_f64(np.ascontiguousarray(na, dtype=np.float64), walk)
    else:
        walk = order[np.argsort(na[order], kind="stable")]
    num_no_ans = int(np.count_nonzero(~s_has & live))
    # what every pass below reads, gathered in walk order once
    has_w = s_has[walk]
    no_ans_w = np.where(text[walk], -1.0, 0.0)
    for name, raw in (("exact", em_raw), ("f1", f1_raw)):
        best, at = _best_threshold(raw[walk], has_w, no_ans_w, walk, num_no_ans)
        result[f"best_{name}"] = 100.0 * best / len(scored)
        result[f"best_{name}_thresh"] = 0.0 if at < 0 else probs[s_ids[at]]
    num_pos = int(np.count_nonzero(s_has))
    if num_pos:
        point = np.ones(len(walk), dtype=bool)
        if na is None:     # where the next probability differs, as Python's != says
            walked = [objs[i] for i in walk.tolist()]
            point[:-1] = np.fromiter(map(operator.ne, walked[:-1], walked[1:]), dtype=bool,
                                     count=len(walked) - 1) if len(walked) else []
        else:
            na_w = na[walk]
            point[:-1] = na_w[:-1] != na_w[1:]
        for name, raw_w in (("exact", em_raw[walk]), ("f1", f1_raw[walk]),
                            ("oracle", has_w.astype(np.float64))):
            ap, p, r = _precision_recall(raw_w, has_w, point, num_pos)
            result[f"pr_{name}_ap"] = ap
            if curves:
                ev.curves[name] = (p, r)
    if curves:
        shown = na if na is not None else np.fromiter(map(_plotted, objs), dtype=np.float64,
                                                      count=m)
        ev.histograms["hasAns"] = shown[s_has & live]
        ev.histograms["noAns"] = shown[~s_has & live]
    return ev


def _plotted(x) -> float:
    """A probability as the histogram's float (an int beyond float64: infinite)."""
    try:
        return float(x)
    except OverflowError:
        return math.inf if x > 0 else -math.inf


def _in_scored_order(probs: dict, keypos: np.ndarray, m: int) -> list:
    """The caller's probabilities by scored position, as :func:`_comparable` makes them (0.0
    where a question has none: a missing prediction, never compared)."""
    objs: list = [0.0] * m
    for p, v in zip(keypos.tolist(), probs.values()):
        if p >= 0:
            objs[p] = _comparable(v)
    return objs


def _comparable(v):
    """A numpy scalar as the Python number it equals (numpy cannot compare one with an int
    beyond float64's range); anything else as it is. A long double stays one."""
    if isinstance(v, (np.floating, np.integer, np.bool_)) and not isinstance(
            v, np.longdouble):
        return v.item()
    return v


def _align_probs(probs: dict, s_ids: list, live: np.ndarray, ids: list, source,
                 aligned: bool = False, values=None):
    """``(na, keypos)``: the probability of each scored question as float64 (None when
    ``values`` is None: float64 does not stand in for them), and for each entry of ``probs``
    in its order, the scored position of its question (-1 for an id not scored).
    ``source`` None: the caller has warned about unknown ids already."""
    from_file = isinstance(source, (str, os.PathLike))
    name = os.fspath(source) if from_file else "<na_probs>"
    n = len(s_ids)
    if aligned or _keys_are(probs, s_ids):            # the usual case: same questions, same order
        keypos = np.arange(n)
        at = keypos
    else:
        if source is not None:
            warn_unknown(probs, set(ids), "no-answer probabilities", name)
        where = {q: i for i, q in enumerate(s_ids)}
        keypos = np.fromiter((where.get(q, -1) for q in probs), dtype=np.int64,
                             count=len(probs))
        at = keypos[keypos >= 0]
    have = np.zeros(n, dtype=bool)
    have[at] = True
    lacking = live & ~have
    if lacking.any():
        q = s_ids[int(np.argmax(lacking))]
        message = (f"no no-answer probability for this question "
                   f"({int(lacking.sum())} scored question(s) lack one)")
        if from_file:
            raise SquadFormatError(message, path=name, qid=q)
        raise InputError(f"{name}, question {q!r}: {message}")
    if values is None:
        return None, keypos
    na = np.zeros(n)
    na[at] = values if len(at) == len(values) else values[keypos >= 0]
    return na, keypos


def _best_threshold(raw_w, has_w, no_ans_w, walk, num_no_ans):
    """The script's ``find_best_thresh`` over the walk: (best score, position or -1).
    ``raw_w``, ``has_w``: the raw scores and has-answer flags in walk order; ``no_ans_w``:
    -1 where a question without an answer got a non-empty prediction, else 0."""
    if len(walk) == 0:
        return num_no_ans, -1
    diff = np.where(has_w, raw_w, no_ans_w)
    cur = np.cumsum(np.concatenate(([float(num_no_ans)], diff)))[1:]
    j = int(np.argmax(cur))
    if cur[j] > num_no_ans:
        return float(cur[j]), int(walk[j])
    return num_no_ans, -1


def _precision_recall(raw_w, has_w, point, num_pos):
    """The script's ``make_precision_recall_eval``: (100 * AP, precisions, recalls), from
    the raw scores and has-answer flags in walk order; ``point`` marks the last question
    of each run of equal probabilities."""
    m = len(raw_w)
    if m == 0:
        return 0.0, [1.0], [0.0]
    tp = np.cumsum(np.where(has_w, raw_w, 0.0))
    p = tp / np.arange(1, m + 1, dtype=np.float64)
    r = tp / float(num_pos)
    p, r = p[point], r[point]
    r_prev = np.concatenate(([0.0], r[:-1]))
    ap = _seq_sum(p * (r - r_prev))
    return 100.0 * ap, [1.0] + p.tolist(), [0.0] + r.tolist()


# --------------------------------------------------------------------------------------------
# The `qafast squad` command
# --------------------------------------------------------------------------------------------

def register_cli(subparsers) -> dict:
    """Add ``qafast squad`` to the ``qafast`` command; returns ``{"squad": handler}``."""
    p = subparsers.add_parser(
        "squad", help="score SQuAD predictions, printing what the official v1.1/v2.0 script prints",
        description="Score predictions against a SQuAD dataset as the official evaluation "
                    "script of --version does, printing the same JSON (v1.1 on one line, v2.0 "
                    "indented by 2). Notes (missing predictions, unknown ids) go to stderr.")
    p.add_argument("data_file", metavar="DATA", help="dataset JSON (SQuAD format)")
    p.add_argument("pred_file", metavar="PRED", help="predictions JSON: {question id: answer}")
    p.add_argument("--version", choices=_VERSIONS, default=None,
                   help="which official script to reproduce (default: the one the dataset's "
                        "version field names, 1.x or 2.x; 2.0 without the field)")
    p.add_argument("--na-prob-file", "-n", metavar="NA_PROB",
                   help="v2.0: JSON {question id: probability of no answer}; adds the best "
                        "thresholds")
    p.add_argument("--na-prob-thresh", "-t", type=float, default=1.0, metavar="THRESH",
                   help="v2.0: predict no answer where the probability exceeds this "
                        "(default 1.0; nan, as the script takes it, never fires)")
    p.add_argument("--out-file", "-o", metavar="OUT",
                   help="write the JSON to this file instead of stdout")
    p.add_argument("--out-image-dir", "-p", metavar="IMAGE_DIR",
                   help="v2.0 with -n: write precision-recall curves and no-answer histograms "
                        "as PNG there, and add the pr_*_ap keys (needs matplotlib: "
                        "pip install 'qafast[plot]')")
    p.add_argument("--missing", choices=_MISSING, default=None,
                   help="a question without a prediction: scored 0 (v1.1's default), left out "
                        "(v2.0's default), or an error")
    return {"squad": _run_cli}


def _run_cli(args) -> int:
    import warnings

    from .io.squad import SquadWarning

    v2_options = bool(args.na_prob_file or args.na_prob_thresh != 1.0 or args.out_image_dir)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SquadWarning)
        dataset = read_squad_dataset(args.data_file)
        version, note = _resolve_version(args.version, dataset)
        if version == "1.1" and v2_options:
            said = (f" (the dataset's version field says {dataset.version!r})"
                    if args.version is None else "")
            print(f"qafast squad: -n, -t and -p are SQuAD v2.0 options, and the v1.1 "
                  f"script's rules apply{said}; add --version 2.0", file=sys.stderr)
            return 2
        if version == "1.1" and dataset.version is not None and dataset.version != "1.1":
            # what evaluate-v1.1.py says (it scores the file anyway)
            print(f"Evaluation expects v-1.1, but got dataset with v-{dataset.version}",
                  file=sys.stderr)
        elif note is not None:
            print(f"qafast squad: {note}", file=sys.stderr)
        plot = bool(args.out_image_dir and args.na_prob_file)
        if plot:
            try:
                import matplotlib
            except ImportError:
                print("qafast squad: -p writes PNG plots with matplotlib, which is not "
                      "installed; pip install 'qafast[plot]'", file=sys.stderr)
                return 2
            matplotlib.use("Agg")
        ev = _evaluate(dataset, args.pred_file, version=version,
                       na_probs=args.na_prob_file, na_prob_thresh=args.na_prob_thresh,
                       missing=args.missing, curves=plot, version_warning=False)
    for w in caught:
        if issubclass(w.category, SquadWarning):
            print(f"qafast squad: {w.message}", file=sys.stderr)
        else:  # pragma: no cover - not ours
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    if ev.missing:
        shown = ", ".join(ev.missing[:5]) + (", ..." if len(ev.missing) > 5 else "")
        rule = "scored 0" if ev.missing_rule == "zero" else "left out"
        print(f"qafast squad: {len(ev.missing)} question(s) have no prediction and are {rule}: "
              f"{shown}", file=sys.stderr)
    result = ev.result
    if not plot:  # the script adds the AP keys only when it draws the curves
        for k in ("pr_exact_ap", "pr_f1_ap", "pr_oracle_ap"):
            result.pop(k, None)
    if plot:
        _write_plots(ev, args.out_image_dir)
    if args.out_file:
        with open(args.out_file, "w", encoding="utf-8") as f:
            json.dump(result, f)
    elif ev.version == "1.1":
        print(json.dumps(result))
    else:
        print(json.dumps(result, indent=2))
    return 0


_PR_TITLES = {
    "exact": ("pr_exact.png", "Precision-Recall curve for Exact Match score"),
    "f1": ("pr_f1.png", "Precision-Recall curve for F1 score"),
    "oracle": ("pr_oracle.png", "Oracle Precision-Recall curve (binary task of HasAns vs. NoAns)"),
}


def _write_plots(ev: _Evaluation, out_dir) -> None:
    """The v2.0 script's images: three precision-recall step curves (when some question has an
    answer) and the histogram of no-answer probabilities for each non-empty split."""
    import matplotlib.pyplot as plt

    os.makedirs(out_dir, exist_ok=True)
    for name, (precisions, recalls) in ev.curves.items():
        filename, title = _PR_TITLES[name]
        fig, ax = plt.subplots()
        ax.step(recalls, precisions, color="b", alpha=0.2, where="post")
        ax.fill_between(recalls, precisions, step="post", alpha=0.2, color="b")
        ax.set_xlabel("Recall")
        ax.set_ylabel("Precision")
        ax.set_xlim(0.0, 1.05)
        ax.set_ylim(0.0, 1.05)
        ax.set_title(title)
        fig.savefig(os.path.join(out_dir, filename))
        plt.close(fig)
    for name, probs in ev.histograms.items():
        if len(probs) == 0:
            continue
        fig, ax = plt.subplots()
        ax.hist(probs, weights=np.full(len(probs), 1.0 / len(probs)), bins=20, range=(0.0, 1.0))
        ax.set_xlabel("Model probability of no-answer")
        ax.set_ylabel("Proportion of dataset")
        ax.set_title(f"Histogram of no-answer probability: {name}")
        fig.savefig(os.path.join(out_dir, f"na_prob_hist_{name}.png"))
        plt.close(fig)
