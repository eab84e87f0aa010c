"""Factoid, list and yes/no question answering, as BioASQ defines them.

:func:`evaluate_factoid` scores ranked answer lists with BioASQ's strict accuracy, lenient
accuracy and mean reciprocal rank) over ranked answer lists, with synonyms, a normalizer and a
cut-off. :func:`evaluate_bioasq` scores a BioASQ Task B Phase B submission against a golden
file as the official tool (``BioASQ/Evaluation-Measures``, version 5 and later) does: factoid,
list (mean precision, recall, F1) and yes/no (accuracy, F1 per label, macro F1) questions.
The definitions, in plain Python, are :mod:`qafast.reference.factoid`.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from . import _kernels
from .errors import InputError, InputTypeError
from .io.bioasq import BioasqFormatError, BioasqWarning, read_bioasq
from .reference.factoid import parse_yesno

__all__ = ["BIOASQ_MEASURES", "evaluate_bioasq", "evaluate_factoid"]

_NORMALIZERS = ("none", "bioasq")

#: evaluate_bioasq's keys, in the order of the official tool's output line.
BIOASQ_MEASURES = (
    "yesno_accuracy", "factoid_strict_accuracy", "factoid_lenient_accuracy", "factoid_mrr",
    "list_precision", "list_recall", "list_f1", "yesno_macro_f1", "yesno_f1_yes", "yesno_f1_no",
)
_FACTOID_KEYS = ("strict_accuracy", "lenient_accuracy", "mean_reciprocal_rank")


def _check_k(k, name="k"):
    if k is None:
        return -1
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise InputError(f"The {name!r} parameter must be an int >= 1 or None. Got {k!r} instead.")
    return min(int(k), 2**62)  # a cutoff past every list is the whole list


def _check_normalizer(normalizer):
    if normalizer not in _NORMALIZERS:
        raise InputError(f"The 'normalizer' parameter must be one of {_NORMALIZERS}. "
                         f"Got {normalizer!r} instead.")


def evaluate_factoid(predicted, target, *, k: int | None = 5, normalizer: str = "none",
                     per_question: bool = False) -> dict:
    """Strict accuracy, lenient accuracy and mean reciprocal rank of factoid answers.

    Question i is answered by the ranked list ``predicted[i]``. Its gold answer
    ``target[i]`` is a string or a list of synonyms, any of which counts. Strict accuracy
    counts a question when its first answer matches. Lenient accuracy counts it when one
    of its first ``k`` answers matches. The reciprocal rank is ``1 / r`` for the first
    match at rank ``r <= k``, and 0 otherwise. Each measure is a sum in question order
    divided by the number of questions.

    Parameters
    ----------
    predicted : sequence of sequences of str, or 2-D integer array
        Ranked answers per question. Lists may have any length, including 0 (which scores
        0). An integer array of shape (n_questions, n_answers) holds answer ids, and a
        negative id is an empty slot that never matches.
    target : sequence of str or of sequences of str, or integer array
        Gold answer per question, or its synonyms. An integer array of shape
        (n_questions,) or (n_questions, n_synonyms) holds ids, with negative ids as padding.
    k : int or None, default=5
        Only the first ``k`` answers count, as in BioASQ's five. ``None`` means no cut-off.
    normalizer : {"none", "bioasq"}, default="none"
        ``"none"`` compares strings as they are, as the seed does. ``"bioasq"`` lowercases
        both sides, as the official BioASQ tool does.
    per_question : bool, default=False
        Also return ``"per_question"``: an array of shape (n_questions, 3) with strict,
        lenient and reciprocal rank per question.

    Returns
    -------
    dict
        ``{"strict_accuracy": float, "lenient_accuracy": float,
        "mean_reciprocal_rank": float}``.

    Raises
    ------
    ValueError
        If ``predicted`` and ``target`` differ in length or are empty, if a question has
        no gold synonym, or if an option is invalid.
    TypeError
        If an answer or gold is not a string (string input), or if the input mixes forms.

    See Also
    --------
    evaluate_bioasq : BioASQ JSON files, with list and yes/no questions.
    qafast.reference.factoid.evaluate_factoid : The plain-Python definition.

    Examples
    --------
    A worked example (ranked answers to six questions, in Italian):

    >>> from qafast.factoid import evaluate_factoid
    >>> predicted = [["cane", "z", "z", "z", "z"], ["z", "z", "z", "z", "z"],
    ...              ["z", "z", "cipolla", "z", "z"], ["z", "melanzane", "z", "z", "z"],
    ...              ["birra", "z", "z", "z", "z"], ["z", "z", "z", "calippo", "z"]]
    >>> target = ["cane", "gatto", "cipolla", "melanzane", "birra", "calippo"]
    >>> evaluate_factoid(predicted, target)
    {'strict_accuracy': 0.3333333333333333, 'lenient_accuracy': 0.8333333333333334, \
'mean_reciprocal_rank': 0.5138888888888888}

    Synonyms, with BioASQ's lowercasing:

    >>> evaluate_factoid([["EGFR", "her2"]], [["erbb1", "egfr"]], normalizer="bioasq")
    {'strict_accuracy': 1.0, 'lenient_accuracy': 1.0, 'mean_reciprocal_rank': 1.0}
    """
    kk = _check_k(k)
    _check_normalizer(normalizer)
    if isinstance(predicted, np.ndarray) and predicted.dtype.kind in "iu":
        rank = _ranks_from_ids(predicted, target, kk)
    else:
        rank = _ranks_from_strings(predicted, target, kk, normalizer == "bioasq")
    n = rank.shape[0]
    rows = np.empty((n, 3) if per_question else (0, 3), dtype=np.float64)
    sums = np.empty(3, dtype=np.float64)
    _kernels.fq_factoid_measures(rank, rows, sums)
    out = {key: float(sums[j]) / n for j, key in enumerate(_FACTOID_KEYS)}
    if per_question:
        out["per_question"] = rows
    return out


def _check_lengths(n_pred, n_gold):
    if n_pred != n_gold:
        raise InputError(f"predicted has {n_pred} questions but target has {n_gold}; "
                         "they must pair up one to one")
    if n_pred == 0:
        raise InputError("no questions: predicted and target are empty")


def _ranks_from_strings(predicted, target, k, lower):
    if isinstance(predicted, (str, bytes)) or not isinstance(predicted, Sequence) and not \
            isinstance(predicted, np.ndarray):
        raise InputTypeError(f"predicted must be a sequence of answer lists, got "
                             f"{type(predicted).__name__}")
    if isinstance(target, (str, bytes)):
        raise InputTypeError("target must be a sequence with one gold answer per question, "
                             "got a single string")
    pred = predicted if type(predicted) is list else list(predicted)
    gold = target if type(target) is list else list(target)
    _check_lengths(len(pred), len(gold))
    rank = np.empty(len(pred), dtype=np.int32)
    converted = False
    while True:
        bad = _kernels.fq_first_match_objects(pred, gold, k, lower, rank)
        if bad == -1:
            break
        i, what = bad
        if what == "empty":
            raise InputError(f"question {i}: target is an empty list; each question needs "
                             "at least one gold answer")
        item = pred[i] if what == "predicted" else gold[i]
        if not converted and _is_str_sequence(item):
            # tuples, arrays of str and the like: make every question a list once
            pred = [p if type(p) is list else _as_list(p, i, "predicted")
                    for i, p in enumerate(pred)]
            gold = [g if type(g) is list or type(g) is str else _as_list(g, i, "target")
                    for i, g in enumerate(gold)]
            converted = True
            continue
        _raise_bad_question(i, what, item)
    return rank


def _is_str_sequence(x) -> bool:
    if isinstance(x, (str, bytes, Mapping)):
        return False
    try:
        return all(isinstance(s, str) for s in x)
    except TypeError:
        return False


def _as_list(x, i, what):
    if not _is_str_sequence(x):
        _raise_bad_question(i, what, x)
    return list(x)


def _raise_bad_question(i, what, item):
    if isinstance(item, (str, bytes, Mapping)) or not hasattr(item, "__iter__"):
        shape = ("a list of answer strings" if what == "predicted"
                 else "a string or a list of synonym strings")
        raise InputTypeError(f"question {i}: {what} is a {type(item).__name__} ({item!r:.60}), "
                             f"expected {shape}")
    bad = next(s for s in item if not isinstance(s, str))
    raise InputTypeError(f"question {i}: {what} holds {bad!r:.60}, a {type(bad).__name__}; "
                         "answers must be str (or use integer id arrays throughout)")


def _ranks_from_ids(predicted, target, k):
    pred = np.asarray(predicted)
    gold = np.asarray(target)
    if pred.ndim != 2:
        raise InputError(f"predicted as an id array must be 2-D (questions x answers), "
                         f"got shape {pred.shape}")
    if gold.dtype.kind not in "iu" or gold.ndim not in (1, 2):
        raise InputTypeError("with integer predicted ids, target must be an integer array of "
                             "shape (n_questions,) or (n_questions, n_synonyms)")
    _check_lengths(pred.shape[0], gold.shape[0])
    if gold.ndim == 1:
        gold = gold[:, None]
    if (gold < 0).all(axis=1).any():
        i = int(np.flatnonzero((gold < 0).all(axis=1))[0])
        raise InputError(f"question {i}: target has no gold id (all negative)")
    pred_ids, gold_ids = _as_int32(pred), _as_int32(gold)
    n = pred_ids.shape[0]
    rank = np.empty(n, dtype=np.int32)
    _kernels.fq_first_match_dense(pred_ids, gold_ids, k, rank)
    return rank


def _as_int32(a):
    if a.dtype == np.int32:
        return np.ascontiguousarray(a)
    lo, hi = (int(a.min()), int(a.max())) if a.size else (0, 0)
    if lo >= -(2**31) and hi < 2**31:
        return np.ascontiguousarray(a, dtype=np.int32)
    raise InputError("answer ids must fit in 32 bits; map them to smaller integers first")


# ---------------------------------------------------------------------------------------------
# BioASQ JSON


def evaluate_bioasq(golden, submission, *, k: int | None = None, normalizer: str = "bioasq",
                    per_question: bool = False) -> dict:
    """Score a BioASQ Task B Phase B submission as the official evaluation tool does.

    Golden ``exact_answer`` values are synonym groups: a factoid's is a list of synonym
    lists, any of which counts, and a list question's is a list of synonym lists, one per
    answer. For a submission, only the first string of each answer counts, as the tool reads
    it since BioASQ5. Strings are lowercased before matching. Each measure is a mean over the
    questions of its type that the submission answers; unanswered gold questions are
    skipped, and a type with no question scores 0. See :mod:`qafast.reference.factoid` for
    each rule.

    Odd input is read as the tool reads it, with a :class:`~qafast.io.bioasq.BioasqWarning`
    naming the questions: an empty inner list ``[]`` among submitted answers is dropped (the
    answers after it move up a rank); a single string where a factoid or list answer belongs
    is no answer; a golden string or ``[]`` there matches nothing; an empty golden synonym
    group is dropped; a golden yes/no answer that reads as neither yes nor no is right only
    for an answer that also reads as neither, and counts in the "no" class of the F1s; a
    question id the submission repeats is scored with its first entry. Each such question
    still counts in its type's means.

    Parameters
    ----------
    golden, submission : path, file object or dict
        BioASQ JSON documents ``{"questions": [{"id", "type", "exact_answer"}, ...]}``.
    k : int or None, default=None
        Count only the first ``k`` factoid answers. The tool does not cut; BioASQ asks
        for at most 5.
    normalizer : {"bioasq", "none"}, default="bioasq"
        ``"bioasq"`` lowercases, as the tool does. ``"none"`` compares strings as they are.
    per_question : bool, default=False
        Also return ``"per_question"``: ``{question_id: {measure: value}}``.

    Returns
    -------
    dict
        The ten measures of :data:`BIOASQ_MEASURES`, in the order of the tool's output line.

    Raises
    ------
    qafast.io.bioasq.BioasqFormatError
        If a document is malformed, if the golden file repeats a question id, or if a
        golden answer is missing or of a type the tool cannot read (where the tool stops).

    Warns
    -----
    qafast.io.bioasq.BioasqWarning
        For the odd input above, once per kind and document.

    Examples
    --------
    >>> gold = {"questions": [
    ...     {"id": "f", "type": "factoid", "exact_answer": [["EGFR", "erbB1"]]},
    ...     {"id": "l", "type": "list", "exact_answer": [["a"], ["b", "bee"], ["c"]]},
    ...     {"id": "y", "type": "yesno", "exact_answer": "yes"}]}
    >>> sub = {"questions": [
    ...     {"id": "f", "exact_answer": [["her2"], ["ERBB1"]]},
    ...     {"id": "l", "exact_answer": [["A"], ["Bee"], ["d"]]},
    ...     {"id": "y", "exact_answer": "Yes"}]}
    >>> r = evaluate_bioasq(gold, sub)
    >>> r["factoid_mrr"], r["list_f1"], r["yesno_macro_f1"]
    (0.5, 0.6666666666666666, 0.5)
    """
    kk = _check_k(k)
    _check_normalizer(normalizer)
    gsrc, ssrc = _source_name(golden), _source_name(submission)
    gold = read_bioasq(golden)
    sub = read_bioasq(submission, repeated="first")
    lower = normalizer == "bioasq"
    norm = (lambda s: s.lower()) if lower else (lambda s: s)
    notes: dict[str, list] = {}

    fact_ids, list_ids, yn_ids = [], [], []
    f_pred_off, f_gold_off = [0], [0]
    f_pred: list[int] = []
    f_gold: list[int] = []
    l_item_off, l_qgroup_off, l_group_off = [0], [0], [0]
    l_items: list[int] = []
    l_group_ids: list[int] = []
    yn_gold, yn_pred = [], []
    for qid, g in gold.items():
        if qid not in sub:
            continue
        qtype = g["type"]
        answer = sub[qid]["exact_answer"]
        if qtype == "factoid":
            groups = _gold_groups(g["exact_answer"], qid, gsrc, True, notes)
            local: dict[str, int] = {}
            for grp in groups:
                for s in grp:
                    local.setdefault(norm(s), len(local))
            f_gold.extend(range(len(local)))
            f_gold_off.append(len(f_gold))
            f_pred.extend(local.get(norm(a), -1) if a is not None else -1
                          for a in _submitted(answer, qid, notes))
            f_pred_off.append(len(f_pred))
            fact_ids.append(qid)
        elif qtype == "list":
            groups = _gold_groups(g["exact_answer"], qid, gsrc, False, notes)
            local = {}
            for grp in groups:
                l_group_ids.extend(local.setdefault(norm(s), len(local)) for s in grp)
                l_group_off.append(len(l_group_ids))
            l_qgroup_off.append(len(l_group_off) - 1)
            l_items.extend(local.get(norm(a), -1) if a is not None else -1
                           for a in _submitted(answer, qid, notes))
            l_item_off.append(len(l_items))
            list_ids.append(qid)
        elif qtype == "yesno":
            gl = parse_yesno(g["exact_answer"])
            if gl is None:
                raise BioasqFormatError(f"golden yes/no answer is {g['exact_answer']!r:.60}, "
                                        "expected a string such as 'yes' or 'no'", path=gsrc,
                                        question=qid)
            if gl == "none":
                notes.setdefault("golden_yesno", []).append(qid)
            yn_gold.append(_YESNO_CODES[gl])
            pl = parse_yesno(answer)
            if pl is None and answer is not None:
                notes.setdefault("yesno_not_string", []).append(qid)
            yn_pred.append(-1 if pl is None else _YESNO_CODES[pl])
            yn_ids.append(qid)
    _warn_notes(notes, gsrc, ssrc)

    out: dict[str, Any] = dict.fromkeys(BIOASQ_MEASURES, 0.0)
    rows: dict = {}
    if fact_ids:
        rank = np.empty(len(fact_ids), dtype=np.int32)
        _kernels.fq_first_match_ids(np.array(f_pred_off, np.int64), np.array(f_pred, np.int32),
                                    np.array(f_gold_off, np.int64), np.array(f_gold, np.int32),
                                    kk, rank)
        per = np.empty((len(fact_ids), 3))
        sums = np.empty(3)
        _kernels.fq_factoid_measures(rank, per, sums)
        n = len(fact_ids)
        out["factoid_strict_accuracy"] = float(sums[0]) / n
        out["factoid_lenient_accuracy"] = float(sums[1]) / n
        out["factoid_mrr"] = float(sums[2]) / n
        for qid, r in zip(fact_ids, per.tolist()):
            rows[qid] = dict(zip(("strict_accuracy", "lenient_accuracy", "mrr"), r))
    if list_ids:
        prf = np.empty((len(list_ids), 3))
        _kernels.fq_list_prf(np.array(l_item_off, np.int64), np.array(l_items, np.int32),
                             np.array(l_qgroup_off, np.int64), np.array(l_group_off, np.int64),
                             np.array(l_group_ids, np.int32), prf)
        n = len(list_ids)
        totals = [0.0, 0.0, 0.0]
        for qid, r in zip(list_ids, prf.tolist()):
            rows[qid] = dict(zip(("precision", "recall", "f1"), r))
            for j in range(3):
                totals[j] += r[j]
        out["list_precision"], out["list_recall"], out["list_f1"] = (t / n for t in totals)
    if yn_ids:
        res = np.empty(3)
        gy = np.array(yn_gold, dtype=np.int8)
        py = np.array(yn_pred, dtype=np.int8)
        _kernels.fq_yesno(gy, py, res)
        out["yesno_accuracy"] = float(res[0]) / len(yn_ids)
        out["yesno_f1_yes"] = float(res[1])
        out["yesno_f1_no"] = float(res[2])
        out["yesno_macro_f1"] = (float(res[1]) + float(res[2])) / 2
        for qid, g_, p_ in zip(yn_ids, gy.tolist(), py.tolist()):
            rows[qid] = {"accuracy": float(g_ == p_)}
    if per_question:
        out["per_question"] = rows
    return out


# fq_yesno's codes: 1 is the "yes" class, anything else the "no" class; -1 (no answer) is
# never right
_YESNO_CODES = {"yes": 1, "no": 0, "none": 2}


def _source_name(src) -> str:
    if isinstance(src, Mapping):
        return "<dict>"
    return str(getattr(src, "name", src))


def _gold_groups(value, qid, path, factoid, notes):
    """A golden factoid or list answer's synonym groups, read as the tool reads them."""
    if isinstance(value, str):
        notes.setdefault("golden_string", []).append(qid)
        return []
    if not isinstance(value, list):
        raise BioasqFormatError(f"golden exact_answer is {value!r:.60}; expected a list of "
                                "synonym lists", path=path, question=qid)
    if not value:
        notes.setdefault("golden_empty", []).append(qid)
        return []
    if all(isinstance(s, str) for s in value):
        # a flat list, where the tool stops: a factoid's synonyms, or a list question's
        # answers one by one
        return [value] if factoid else [[s] for s in value]
    groups = []
    for grp in value:
        if isinstance(grp, str):
            grp = [grp]
        if not isinstance(grp, list) or not all(isinstance(s, str) for s in grp):
            raise BioasqFormatError(f"golden exact_answer holds {grp!r:.60}; expected a "
                                    "list of strings", path=path, question=qid)
        if not grp:
            notes.setdefault("golden_empty_group", []).append(qid)
            continue
        groups.append(grp)
    return groups


def _submitted(value, qid, notes):
    """A submission's answers: the first string of each (None: a slot that matches
    nothing), read as the tool reads them."""
    if value is None or value == "":
        return []
    if isinstance(value, str):
        notes.setdefault("string", []).append(qid)
        return []
    if not isinstance(value, list):
        raise InputError(f"submission, question {qid!r}: exact_answer is "
                         f"{type(value).__name__}, expected a list of answers")
    out = []
    for a in value:
        if isinstance(a, list):
            if not a:
                notes.setdefault("empty_inner", []).append(qid)
                continue
            a = a[0]
        if a is not None and not isinstance(a, str):
            raise InputError(f"submission, question {qid!r}: answer {a!r:.60} is not a string")
        out.append(a)
    return out


_NOTES = {
    "golden_string": (
        "golden", "the golden factoid or list answer is a single string, not a list of "
        "synonym lists; the tool reads it as a yes/no answer, so nothing matches it"),
    "golden_empty": (
        "golden", "the golden answer is empty ([]); nothing matches it and the question "
        "scores 0"),
    "golden_empty_group": (
        "golden", "the golden answer holds an empty synonym group ([]), which is dropped"),
    "golden_yesno": (
        "golden", "the golden yes/no answer reads as neither yes nor no; only an answer that "
        "also reads as neither (such as '') is right, and the question counts in the 'no' "
        "class of the F1s"),
    "string": (
        "submission", "the factoid or list answer is a single string, not a list of "
        "answers; the tool reads it as a yes/no answer, so the question scores as "
        "unanswered"),
    "empty_inner": (
        "submission", "an empty answer ([]) among the answers is dropped, and the answers "
        "after it move up a rank"),
    "yesno_not_string": (
        "submission", "the yes/no answer is not a string; the question scores as "
        "unanswered"),
}


def _warn_notes(notes, gsrc, ssrc):
    from ._warn import shown, warn

    for kind, (side, what) in _NOTES.items():
        qids = list(dict.fromkeys(notes.get(kind, ())))
        if qids:
            n = len(qids)
            warn(f"{gsrc if side == 'golden' else ssrc}: {n} question{'s' if n > 1 else ''} "
                 f"({shown(qids)}): {what}, as in the official BioASQ tool", BioasqWarning)


# ---------------------------------------------------------------------------------------------
# CLI


def register_cli(subparsers) -> dict:
    p = subparsers.add_parser(
        "bioasq", help="score a BioASQ Task B Phase B submission (factoid, list, yes/no)",
        description="Score a BioASQ Phase B submission against a golden file as the official "
                    "tool (version 5 and later) does. Text output lists the ten measures in "
                    "the order of the tool's line; -o line prints that line.")
    p.add_argument("golden", help="golden JSON file")
    p.add_argument("submission", help="submission JSON file; '-' for stdin")
    p.add_argument("-k", type=int, default=None,
                   help="count only the first K factoid answers (default: all, as the tool)")
    p.add_argument("--normalizer", choices=_NORMALIZERS, default="bioasq",
                   help="bioasq: lowercase (default); none: exact strings")
    p.add_argument("-q", action="store_true", help="per-question values too")
    p.add_argument("-o", choices=("text", "json", "line"), default="text",
                   help="output format")
    return {"bioasq": _run_bioasq}


def _run_bioasq(args) -> int:
    from ._output import write_json
    from ._warn import on_stderr

    sub = sys.stdin if args.submission == "-" else args.submission
    with on_stderr("bioasq", BioasqWarning):
        res = evaluate_bioasq(args.golden, sub, k=args.k, normalizer=args.normalizer,
                              per_question=args.q)

    if args.o == "json":
        write_json(res)
    elif args.o == "line":
        sys.stdout.write(" ".join(repr(res[m]) for m in BIOASQ_MEASURES) + "\n")
    else:
        if args.q:
            for qid, row in res["per_question"].items():
                for m, v in row.items():
                    sys.stdout.write(f"{m:<26}\t{qid}\t{v:.4f}\n")
        for m in BIOASQ_MEASURES:
            sys.stdout.write(f"{m:<26}\tall\t{res[m]:.4f}\n")
    return 0
