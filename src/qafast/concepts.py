"""Open-ended commonsense answers: Hit@K and Rec@K of ranked concept sets (OpenCSR / DrFact).

A system answers each question with a weighted set of concepts; the question has several gold
concepts. **Hit@K** is the fraction of questions with a gold concept among the top K predicted
concepts, **Rec@K** the mean fraction of a question's gold concepts found in its top K
(definitions in :mod:`qafast.reference.concepts`).

Ranking: weighted concepts are sorted by weight descending, ties by concept ascending (code
point order), so the order a set is written in never matters; a plain list of concepts is taken
as already ranked. ``drfact=True`` reproduces the published DrFact evaluation script instead:
list order, weights ignored, and at a cut-off K it counts the top **K + 1** concepts.

About that script (OpenCSR repository, ``evaluation/eval_metrics.py``, ``hit_at_K`` and
``recall_at_K``; read there, not copied): it records each gold concept's 0-based position
``r`` in the prediction list and counts it at threshold T when ``r <= T``, so the printed
"Hit@T"/"Rec@T" look at T + 1 concepts; it uses the list order of ``predictions_K["100"]``
and never sorts by the scores beside the concepts; it divides recall by the number of distinct
gold concepts and averages over the questions of the prediction file.

Input the DrFact script accepts without complaint is scored as it scores it, with a
:class:`~qafast.io.drfact.DrFactWarning`: a concept predicted twice for one question counts at
its last place; no question at all gives 0 for every measure; a question on two lines of a
file counts with its last line (:func:`qafast.io.drfact.read_drfact`). ``strict=True`` makes
each of these a ``ValueError`` instead.

Data is encoded once (:func:`encode_concepts`, or the reader :func:`qafast.io.drfact.read_drfact`)
into :class:`ConceptLists`: CSR ``int64`` offsets and flat ``int32`` concept ids, ids given in
sorted concept order so that the kernel breaks ties on ids.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Iterable, Mapping
from numbers import Real
from typing import Any, Literal, overload

import numpy as np

from . import _kernels
from .errors import InputError, InputTypeError
from .io._encoded import ConceptLists
from .io._encoded import pack_concepts as _pack

__all__ = ["ConceptLists", "encode_concepts", "evaluate_concepts", "hit_at_k", "recall_at_k"]

_MEASURE = re.compile(r"^(hit|rec)(?:@([0-9]+))?$")


_PAIR_TYPES = frozenset((tuple, list))
_NUMBER_TYPES = frozenset((float, int))


def _prediction_items(q, prediction):
    """``(concepts, weights or None)`` of one question's prediction."""
    if type(prediction) is list and prediction:
        # the usual forms, checked with C-level passes over the items (a per-item Python
        # check was most of the encoding's time); anything odd takes the general path below
        first = type(prediction[0])
        if first is str:
            if set(map(type, prediction)) == {str}:
                return prediction, None
        elif first in _PAIR_TYPES and set(map(type, prediction)) <= _PAIR_TYPES \
                and set(map(len, prediction)) == {2}:
            concepts, weights = map(list, zip(*prediction))
            if set(map(type, concepts)) == {str} and set(map(type, weights)) <= _NUMBER_TYPES:
                return concepts, weights  # NaN weights are found when all are in one array
    if isinstance(prediction, Mapping):
        concepts, weights = list(prediction.keys()), list(prediction.values())
    elif isinstance(prediction, (str, bytes)) or not isinstance(prediction, Iterable):
        raise InputTypeError(f"question {q!r}: a prediction is a list of concepts, of (concept, "
                             f"weight) pairs, or a dict; got {type(prediction).__name__}")
    else:
        items = list(prediction)
        if all(isinstance(c, str) for c in items):
            return items, None
        concepts, weights = [], []
        for item in items:
            if isinstance(item, str) or not isinstance(item, (tuple, list)) or len(item) != 2:
                raise InputTypeError(f"question {q!r}: expected concepts or (concept, weight) "
                                     f"pairs, not a mix; got {item!r}")
            concepts.append(item[0])
            weights.append(item[1])
    for c in concepts:
        if type(c) is not str and not isinstance(c, str):
            raise InputTypeError(f"question {q!r}: concept {c!r} is a {type(c).__name__}, "
                                 "not a str")
    for c, w in zip(concepts, weights):
        # exact float and int first: the abstract Real check costs more than the rest
        t = type(w)
        if t is float:
            if w != w:
                raise InputError(f"question {q!r}: the weight of {c!r} is NaN")
        elif t is not int:
            if isinstance(w, bool) or not isinstance(w, Real):
                raise InputTypeError(f"question {q!r}: the weight of {c!r} is {w!r}, not a number")
            if math.isnan(w):
                raise InputError(f"question {q!r}: the weight of {c!r} is NaN")
    return concepts, weights


def encode_concepts(predictions, references) -> tuple[ConceptLists, ConceptLists]:
    """Encode predictions and gold concepts together, with one sorted vocabulary.

    Parameters
    ----------
    predictions : dict
        ``{question_id: prediction}``; a prediction is a ranked list of concepts, a list of
        ``(concept, weight)`` pairs, or a dict ``{concept: weight}``. All questions use the
        same form (weighted or ranked).
    references : dict
        ``{question_id: gold concepts}`` (an iterable of str).

    Returns
    -------
    (ConceptLists, ConceptLists)
        The predictions and the references.
    """
    if not isinstance(predictions, Mapping) or not isinstance(references, Mapping):
        raise InputTypeError("predictions and references must be dicts {question_id: "
                             f"concepts}}, got {type(predictions).__name__} and "
                             f"{type(references).__name__}")
    if type(predictions) is dict and type(references) is dict:
        fast = _encode_concepts_fast(predictions, references)
        if fast is not None:
            return fast
    pred_items = {q: _prediction_items(q, p) for q, p in predictions.items()}
    is_weighted = None  # the form of the first non-empty prediction; empty ones fit both
    for q, (c, w) in pred_items.items():
        if not c:
            continue
        if is_weighted is None:
            is_weighted = w is not None
        elif is_weighted != (w is not None):
            raise InputTypeError(f"question {q!r}: predictions mix ranked lists and weighted "
                                 "concepts; use one form")
    gold_items = {}
    for q, gold in references.items():
        if type(gold) is list and set(map(type, gold)) <= {str}:
            gold_items[q] = gold
            continue
        if isinstance(gold, (str, bytes)) or not isinstance(gold, Iterable):
            raise InputTypeError(f"question {q!r}: gold concepts must be an iterable of str, got "
                                 f"{type(gold).__name__}")
        gold = list(gold)
        for c in gold:
            if type(c) is not str and not isinstance(c, str):
                raise InputTypeError(f"question {q!r}: gold concept {c!r} is a {type(c).__name__}, "
                                     "not a str")
        gold_items[q] = gold
    vocab_set: set = set()
    for c, _ in pred_items.values():
        vocab_set.update(c)
    for g in gold_items.values():
        vocab_set.update(g)
    vocabulary = sorted(vocab_set)
    index = {c: i for i, c in enumerate(vocabulary)}
    pred = _pack(list(pred_items), [c for c, _ in pred_items.values()],
                 [w or [] for _, w in pred_items.values()] if is_weighted else None, index,
                 vocabulary, "predictions")
    _raise_nan_weight(pred)
    gold = _pack(list(gold_items), list(gold_items.values()), None, index, vocabulary,
                 "references")
    return pred, gold


def _encode_concepts_fast(predictions: dict, references: dict):
    """encode_concepts for the usual forms, in the kernel's one pass per side (checking every
    entry in Python cost more than a plain Python loop over the whole data); None for anything
    else, which the general path then converts or names."""
    try:
        n_pred = sum(map(len, predictions.values()))
        n_gold = sum(map(len, references.values()))
    except TypeError:
        return None
    pred_ids = np.empty(n_pred, dtype=np.int32)
    weights = np.empty(n_pred, dtype=np.float64)
    pred_off = np.empty(len(predictions) + 1, dtype=np.int64)
    gold_ids = np.empty(n_gold, dtype=np.int32)
    gold_off = np.empty(len(references) + 1, dtype=np.int64)
    names: list = []
    form = _kernels.lb_encode_concepts(predictions, references, pred_ids, weights, pred_off,
                                       gold_ids, gold_off, names)
    if form < 0:
        return None
    # the vocabulary sorted, and the provisional ids (first appearance) mapped onto it
    order = sorted(range(len(names)), key=names.__getitem__)
    vocabulary = [names[i] for i in order]
    remap = np.empty(len(names), dtype=np.int32)
    remap[np.array(order, dtype=np.int64)] = np.arange(len(names), dtype=np.int32)
    pred = ConceptLists(list(predictions), pred_off, remap[pred_ids],
                        weights if form == 1 else None, vocabulary, "predictions")
    gold = ConceptLists(list(references), gold_off, remap[gold_ids], None, vocabulary,
                        "references")
    pred._distinct = gold._distinct = True  # dict keys
    _raise_nan_weight(pred)
    return pred, gold


def _raise_nan_weight(pred: ConceptLists) -> None:
    if pred.weights is not None:
        nan = np.isnan(pred.weights)
        if nan.any():
            j = int(np.argmax(nan))
            q = pred.question_ids[int(np.searchsorted(pred.offsets, j, side="right")) - 1]
            raise InputError(f"question {q!r}: the weight of "
                             f"{pred.vocabulary[pred.ids[j]]!r} is NaN")




def _plain_lists(pred, gold):
    """``pred`` and ``gold`` with their question ids and vocabularies as plain lists (one
    copy of a list both share); anything that is not a ConceptLists is left to the checks."""
    copies: dict = {}

    def plain(values):
        if id(values) not in copies:
            copies[id(values)] = (values, list(values))
        return copies[id(values)][1]

    def copy(x):
        if not isinstance(x, ConceptLists):
            return x
        out = dataclasses.replace(x, question_ids=plain(x.question_ids),
                                  vocabulary=plain(x.vocabulary))
        out._distinct = x._distinct
        return out

    return copy(pred), copy(gold)


def _check_lists(x: ConceptLists, name: str) -> None:
    if not isinstance(x, ConceptLists):
        raise InputTypeError(f"{name}: expected ConceptLists, got {type(x).__name__}")
    ok = (isinstance(x.offsets, np.ndarray) and x.offsets.dtype == np.int64
          and x.offsets.ndim == 1 and isinstance(x.ids, np.ndarray) and x.ids.dtype == np.int32
          and x.ids.ndim == 1)
    if x.weights is not None:
        ok = ok and isinstance(x.weights, np.ndarray) and x.weights.dtype == np.float64 \
            and x.weights.shape == x.ids.shape
    if not ok:
        raise InputTypeError(f"{name}: offsets must be a 1-d int64 array, ids a 1-d int32 "
                             "array and weights None or a float64 array beside the ids")
    n = len(x.question_ids)
    off = x.offsets
    if len(off) != n + 1 or off[0] != 0 or off[-1] != len(x.ids) or (
            n and np.any(off[1:] < off[:-1])):
        raise InputError(f"{name}: offsets must rise from 0 to len(ids), one per question "
                         "plus one")

    def question_of(j):
        return x.question_ids[int(np.searchsorted(off, j, side="right")) - 1]

    if len(x.ids) and (x.ids.min() < 0 or x.ids.max() >= len(x.vocabulary)):
        bad = np.flatnonzero((x.ids < 0) | (x.ids >= len(x.vocabulary)))
        if len(bad):
            raise InputError(f"question {question_of(bad[0])!r}: concept id "
                             f"{int(x.ids[bad[0]])} in the {name} is not in the vocabulary "
                             f"(0..{len(x.vocabulary) - 1})")
    if x.weights is not None and np.isnan(x.weights.sum()):  # cheap unless a NaN or inf - inf
        bad = np.flatnonzero(np.isnan(x.weights))
        if len(bad):
            c = x.vocabulary[int(x.ids[bad[0]])]
            raise InputError(f"question {question_of(bad[0])!r}: the weight of {c!r} is NaN")


def _parse_measures(measures) -> list[tuple[str, str, int | None]]:
    if isinstance(measures, str):
        measures = [measures]
    out = []
    for m in measures:
        match = _MEASURE.match(m) if isinstance(m, str) else None
        if match is None or match.group(2) == "0":
            raise InputError(f"measure {m!r}: expected 'hit@K', 'rec@K' (K >= 1), 'hit' or "
                             "'rec'")
        out.append((m, match.group(1), None if match.group(2) is None else int(match.group(2))))
    if not out:
        raise InputError("measures: give at least one")
    return out


def _check_distinct(ids: list, name: str) -> None:
    if len(set(ids)) != len(ids):
        seen: set = set()
        for q in ids:
            if q in seen:
                break
            seen.add(q)
        raise InputError(f"question {q!r} appears twice in the {name}")


def _values(predictions, references, ks: list[int | None], drfact: bool, per_question: bool,
            strict: bool):
    """Per-question hit and recall arrays, shape (n, len(ks)), and the question ids."""
    if isinstance(predictions, ConceptLists) or isinstance(references, ConceptLists):
        # the caller's lists are read once, into plain lists: every size below (and the
        # checks) then come from the same read, whatever their len() or == would say next
        pred, gold = _plain_lists(predictions, references)
        _check_lists(pred, "predictions")
        _check_lists(gold, "references")
        if pred.vocabulary is not gold.vocabulary and pred.vocabulary != gold.vocabulary:
            raise InputError("predictions and references were encoded with different "
                             "vocabularies; encode them together (encode_concepts)")
    else:
        pred, gold = encode_concepts(predictions, references)
    n = len(pred.question_ids)
    if n == 0:
        if strict:
            raise InputError("no questions in the predictions")
        from ._warn import warn
        from .io.drfact import DrFactWarning

        warn(f"{pred.source}: no questions; every measure is 0, as the DrFact evaluation "
             "script prints for an empty prediction file", DrFactWarning)
        return np.zeros((0, len(ks))), np.zeros((0, len(ks))), pred.question_ids
    if per_question and not pred._distinct:
        _check_distinct(pred.question_ids, "predictions")
    # gold rows in prediction order
    if pred.question_ids is gold.question_ids or pred.question_ids == gold.question_ids:
        g_off, g_ids = gold.offsets, gold.ids
    else:
        where = {q: i for i, q in enumerate(gold.question_ids)}
        if len(where) != len(gold.question_ids):
            _check_distinct(gold.question_ids, "references")
        rows = []
        for q in pred.question_ids:
            if q not in where:
                raise InputError(f"question {q!r} of the predictions has no gold concepts in "
                                 "the references")
            rows.append(where[q])
        rows_a = np.array(rows, dtype=np.int64)
        starts, stops = gold.offsets[rows_a], gold.offsets[rows_a + 1]
        lengths = stops - starts
        g_off = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(lengths, out=g_off[1:])
        take = np.repeat(starts - g_off[:-1], lengths) + np.arange(g_off[-1], dtype=np.int64)
        g_ids = gold.ids[take]
    g_len = np.diff(g_off)
    empty = np.flatnonzero(g_len == 0)
    if len(empty):
        raise InputError(f"question {pred.question_ids[int(empty[0])]!r} has no gold concepts; "
                         "Rec@K needs at least one")
    weights = pred.weights if (pred.weights is not None and not drfact) else np.zeros(0)
    big = int(pred.offsets[-1]) + 1
    k_arr = np.array([big if k is None else min(k, big) for k in ks], dtype=np.int64)
    v = len(pred.vocabulary)
    seen_a = np.full(v, -1, dtype=np.int64)
    mark = np.full(v, -1, dtype=np.int64)
    buf = np.empty(max(int(g_len.max()), 1), dtype=np.int64)
    hit = np.empty((n, len(ks)), dtype=np.float64)
    rec = np.empty((n, len(ks)), dtype=np.float64)
    bad = _kernels.lb_concepts_at_k(pred.offsets, pred.ids, weights, g_off, g_ids, k_arr,
                                    1 if drfact else 0, seen_a, mark, buf, hit, rec)
    if bad >= 0:
        _repeated_concepts(pred, bad, strict)
    return hit, rec, pred.question_ids


def _repeated_concepts(pred: ConceptLists, first: int, strict: bool) -> None:
    """Raise (strict) or warn about the questions that name a concept twice, from question
    ``first`` on (the kernel's report)."""
    lo, hi = int(pred.offsets[first]), int(pred.offsets[first + 1])
    ids = pred.ids[lo:hi].tolist()
    c = next(c for i, c in enumerate(ids) if c in ids[:i])
    q = pred.question_ids[first]
    if strict:
        raise InputError(f"question {q!r}: concept {pred.vocabulary[c]!r} is predicted twice")
    # every question with a repeat: (question, concept) keys sorted, equal neighbours
    rows = np.repeat(np.arange(len(pred), dtype=np.int64), np.diff(pred.offsets))
    keys = np.sort(rows[lo:] * len(pred.vocabulary) + pred.ids[lo:])
    n_questions = len(np.unique(keys[1:][keys[1:] == keys[:-1]] // len(pred.vocabulary)))
    from ._warn import warn
    from .io.drfact import DrFactWarning

    warn(f"{pred.source}: {n_questions} question{'s name' if n_questions > 1 else ' names'} a "
         f"concept more than once (the first: question {q!r}, concept "
         f"{pred.vocabulary[c]!r}); each counts at its last place, as the DrFact evaluation "
         "script ranks it", DrFactWarning)



def _means(values: np.ndarray) -> np.ndarray:
    """Column means, each a sum in row order divided by the number of rows."""
    total = np.empty(values.shape[1], dtype=np.float64)
    _kernels.column_sums(values, total)
    return total / values.shape[0]


@overload
def evaluate_concepts(predictions: Any, references: Any, measures: str | Iterable[str], *,
                      per_question: Literal[False] = ..., drfact: bool = ...,
                      strict: bool = ...) -> dict[str, float]: ...
@overload
def evaluate_concepts(predictions: Any, references: Any, measures: str | Iterable[str], *,
                      per_question: Literal[True], drfact: bool = ...,
                      strict: bool = ...) -> dict[Any, dict[str, float]]: ...
@overload
def evaluate_concepts(predictions: Any, references: Any, measures: str | Iterable[str], *,
                      per_question: bool, drfact: bool = ...,
                      strict: bool = ...) -> dict[str, float] | dict[Any, dict[str, float]]: ...
def evaluate_concepts(predictions: Any, references: Any, measures: str | Iterable[str], *,
                      per_question: bool = False, drfact: bool = False, strict: bool = False
                      ) -> dict[str, float] | dict[Any, dict[str, float]]:
    """Hit@K and Rec@K at several cut-offs, in one kernel call.

    Parameters
    ----------
    predictions : dict or ConceptLists
        ``{question_id: prediction}``: a ranked list of concepts, a list of
        ``(concept, weight)`` pairs or a dict ``{concept: weight}`` per question; or the
        encoded predictions of :func:`encode_concepts` or :func:`qafast.io.drfact.read_drfact`.
    references : dict or ConceptLists
        ``{question_id: gold concepts}``, each question of ``predictions`` with at least one;
        questions only here are not counted (as in the DrFact script).
    measures : str or iterable of str
        ``"hit@K"`` and ``"rec@K"`` for cut-offs K >= 1; ``"hit"`` and ``"rec"`` for no
        cut-off.
    per_question : bool, default False
        Return ``{question_id: {measure: value}}`` instead of the means.
    drfact : bool, default False
        Reproduce the published DrFact script: list order (weights ignored) and K + 1 concepts
        at cut-off K.
    strict : bool, default False
        Raise ``ValueError`` where the DrFact script goes on: for a concept predicted twice
        for one question (which otherwise counts at its last place) and for predictions
        with no question (which otherwise give 0 for every measure).

    Returns
    -------
    dict
        ``{measure: mean over the questions of predictions}``; values added in question order.

    Raises
    ------
    ValueError
        A question without gold concepts, a NaN weight, a question of the predictions missing
        from the references, an unknown measure (messages name the question); with
        ``strict=True``, also a concept predicted twice or no question.
    TypeError
        Input of the wrong type.

    Warns
    -----
    qafast.io.drfact.DrFactWarning
        Without ``strict``, for a concept predicted twice and for no question.

    Examples
    --------
    >>> from qafast.concepts import evaluate_concepts
    >>> predictions = {"q1": [("tree", 0.9), ("leaf", 0.8), ("sun", 0.5), ("moon", 0.1)],
    ...                "q2": {"water": 0.7, "ice": 0.7, "steam": 0.2}}
    >>> references = {"q1": ["sun", "moon"], "q2": ["ice"]}
    >>> evaluate_concepts(predictions, references, ["hit@1", "hit@3", "rec@3", "rec"])
    {'hit@1': 0.5, 'hit@3': 1.0, 'rec@3': 0.75, 'rec': 1.0}

    Ties go to the concept that sorts first ("ice" before "water"). The DrFact script's rule
    counts one concept more:

    >>> evaluate_concepts(predictions, references, ["hit@2", "rec@2"], drfact=True)
    {'hit@2': 1.0, 'rec@2': 0.75}
    """
    parsed = _parse_measures(measures)
    hit, rec, qids = _values(predictions, references, [k for _, _, k in parsed], drfact,
                             per_question, strict)
    names = [name for name, _, _ in parsed]
    if per_question:
        rows = np.where([kind == "hit" for _, kind, _ in parsed], hit, rec).tolist()
        return {q: dict(zip(names, row)) for q, row in zip(qids, rows)}
    if len(qids) == 0:
        return dict.fromkeys(names, 0.0)
    return dict(zip(names, np.where([kind == "hit" for _, kind, _ in parsed],
                                    _means(hit), _means(rec)).tolist()))


def _single(kind, predictions, references, k, per_question, drfact, strict):
    if k is not None and (isinstance(k, bool) or not isinstance(k, int)):
        raise InputTypeError(f"k must be an int or None, got {type(k).__name__}")
    if k is not None and k < 1:
        raise InputError(f"k must be at least 1 (or None for no cut-off); got {k}")
    name = kind if k is None else f"{kind}@{k}"
    out = evaluate_concepts(predictions, references, [name], per_question=per_question,
                            drfact=drfact, strict=strict)
    if per_question:
        return {q: row[name] for q, row in out.items()}
    return out[name]


@overload
def hit_at_k(predictions: Any, references: Any, *, k: int | None = ...,
             per_question: Literal[False] = ..., drfact: bool = ..., strict: bool = ...) -> float: ...
@overload
def hit_at_k(predictions: Any, references: Any, *, k: int | None = ...,
             per_question: Literal[True], drfact: bool = ...,
             strict: bool = ...) -> dict[Any, float]: ...
@overload
def hit_at_k(predictions: Any, references: Any, *, k: int | None = ..., per_question: bool,
             drfact: bool = ..., strict: bool = ...) -> float | dict[Any, float]: ...
def hit_at_k(predictions: Any, references: Any, *, k: int | None = None,
             per_question: bool = False, drfact: bool = False,
             strict: bool = False) -> float | dict[Any, float]:
    """Hit@K: the fraction of questions with a gold concept among their top ``k`` concepts.

    Parameters are those of :func:`evaluate_concepts`; ``k=None`` means no cut-off. With
    ``per_question=True`` the result is ``{question_id: 1.0 or 0.0}``.

    Examples
    --------
    >>> from qafast.concepts import hit_at_k
    >>> predictions = {"q1": ["tree", "leaf", "sun"], "q2": ["ice", "water"]}
    >>> references = {"q1": ["sun"], "q2": ["ice", "snow"]}
    >>> hit_at_k(predictions, references, k=2)
    0.5
    >>> hit_at_k(predictions, references, k=2, per_question=True)
    {'q1': 0.0, 'q2': 1.0}
    """
    return _single("hit", predictions, references, k, per_question, drfact, strict)


@overload
def recall_at_k(predictions: Any, references: Any, *, k: int | None = ...,
                per_question: Literal[False] = ..., drfact: bool = ..., strict: bool = ...) -> float: ...
@overload
def recall_at_k(predictions: Any, references: Any, *, k: int | None = ...,
                per_question: Literal[True], drfact: bool = ...,
                strict: bool = ...) -> dict[Any, float]: ...
@overload
def recall_at_k(predictions: Any, references: Any, *, k: int | None = ..., per_question: bool,
                drfact: bool = ..., strict: bool = ...) -> float | dict[Any, float]: ...
def recall_at_k(predictions: Any, references: Any, *, k: int | None = None,
                per_question: bool = False, drfact: bool = False,
                strict: bool = False) -> float | dict[Any, float]:
    """Rec@K: the mean fraction of each question's distinct gold concepts in its top ``k``.

    Parameters are those of :func:`evaluate_concepts`; ``k=None`` means no cut-off.

    Examples
    --------
    >>> from qafast.concepts import recall_at_k
    >>> predictions = {"q1": ["tree", "leaf", "sun"], "q2": ["ice", "water"]}
    >>> references = {"q1": ["sun", "leaf", "leaf"], "q2": ["ice", "snow"]}
    >>> recall_at_k(predictions, references, k=2)
    0.5
    """
    return _single("rec", predictions, references, k, per_question, drfact, strict)


# ------------------------------------------------------------------------------------------
# CLI: qafast opencsr PREDICTIONS TRUTH [-k K ...] [--drfact] [-q] [-o json]

def _opencsr_parser(sub) -> None:
    p = sub.add_parser(
        "opencsr", help="Hit@K and Rec@K of OpenCSR / DrFact concept predictions",
        description="Evaluate a DrFact prediction file (JSON lines with 'qid' and "
                    "'predictions_K': {pool: [[concept, score], ...]}) against a truth file "
                    "(JSON lines with '_id' and 'all_answer_concepts': [{'name': ...}]).")
    p.add_argument("predictions", help="prediction JSONL file")
    p.add_argument("truth", help="truth JSONL file (e.g. linked_dev.jsonl)")
    p.add_argument("-k", type=int, action="append", metavar="K",
                   help="cut-off; repeatable (default 10, 50, 100)")
    p.add_argument("--pool", default=None,
                   help="key of predictions_K to read (default: the only one)")
    p.add_argument("--drfact", action="store_true",
                   help="the published DrFact script's rule: file order, K + 1 concepts at K")
    p.add_argument("--strict", action="store_true",
                   help="stop on a question on two lines, a concept predicted twice or an "
                        "empty prediction file (the DrFact script goes on: last line, last "
                        "place, zeros; so does qafast, with a warning)")
    p.add_argument("-q", action="store_true", help="print each question's values too")
    p.add_argument("-o", choices=("text", "json"), default="text", help="output format")


def _run_opencsr(args) -> int:
    import sys
    import warnings

    from ._warn import on_stderr
    from .io.drfact import DrFactWarning, read_drfact

    ks = args.k or [10, 50, 100]
    if any(k < 1 for k in ks):
        raise InputError("-k takes a positive number")
    measures = [f"{kind}@{k}" for kind in ("hit", "rec") for k in ks]
    with on_stderr("opencsr", DrFactWarning):
        pred, gold = read_drfact(args.predictions, args.truth, pool=args.pool,
                                 strict=args.strict)
        summary = evaluate_concepts(pred, gold, measures, drfact=args.drfact,
                                    strict=args.strict)
    per = None
    if args.q:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DrFactWarning)  # said above
            per = evaluate_concepts(pred, gold, measures, per_question=True,
                                    drfact=args.drfact, strict=args.strict)
    if args.o == "json":
        doc: dict = {"questions": len(pred), "all": summary}
        if per is not None:
            doc["per_question"] = per
        from ._output import write_json

        return write_json(doc)
    lines = []
    if per is not None:
        for q, row in per.items():
            lines += [f"{m:<10}\t{q}\t{row[m]:.4f}\n" for m in measures]
    lines.append(f"{'questions':<10}\tall\t{len(pred)}\n")
    lines += [f"{m:<10}\tall\t{summary[m]:.4f}\n" for m in measures]
    sys.stdout.write("".join(lines))
    return 0


def register_cli(subparsers) -> dict:
    """Add the ``opencsr`` subcommand; returns ``{name: handler}`` for :mod:`qafast.cli`."""
    _opencsr_parser(subparsers)
    return {"opencsr": _run_opencsr}
