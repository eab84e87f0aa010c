"""Answer-sentence selection (NLPCC-DBQA): MRR, MAP, Accuracy@N and averaged F1.

As the NLPCC-DBQA evaluation defines them. Each question has labelled candidate sentences
that a system scores. The definitions, in plain Python, are in :mod:`qafast.reference.dbqa`. Files in the
NLPCC-DBQA tab-separated format are read by :func:`qafast.io.dbqa.read_dbqa`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import _kernels
from .errors import InputError, InputTypeError
from .io.dbqa import DbqaData, read_dbqa

__all__ = ["evaluate_dbqa", "evaluate_dbqa_file"]


def evaluate_dbqa(labels, scores, *, offsets=None, questions=None, accuracy_at=1,
                  f1_threshold: float | None = None, per_question: bool = False) -> dict:
    """Mean reciprocal rank, mean average precision, Accuracy@N and averaged F1.

    Each question's candidates are ranked by score, highest first. Equal scores keep their
    input order. Reciprocal rank is 1 / the rank of the first correct sentence. Average
    precision is ``sum(P(k) * rel(k)) / min(m, n)``, with m correct sentences out of n.
    Accuracy@N is 1 when a correct sentence is in the top N. F1 compares the selected
    sentences with the correct ones. Each is 0 for a question without a correct sentence,
    and each is averaged over all questions.

    Parameters
    ----------
    labels : sequence of sequences of {0, 1}, or 1-D array
        Per question, each candidate's label (1: a correct answer sentence). Without
        ``offsets`` or ``questions`` this is one list per question.
    scores : sequence of sequences of float, or 1-D array
        The system's score for each candidate, shaped like ``labels``.
    offsets : 1-D int array of length n_questions + 1, optional
        Flat ``labels`` and ``scores``: question q's candidates are
        ``offsets[q]:offsets[q + 1]``.
    questions : 1-D sequence, optional
        Flat ``labels`` and ``scores``: each row's question. Consecutive equal values are
        one question, as in the NLPCC-DBQA file.
    accuracy_at : int or sequence of int, default=1
        The N of Accuracy@N. Give several to get several.
    f1_threshold : float, optional
        The sentences selected for F1 are those scoring at least this. By default, the
        selection is the top-ranked sentence.
    per_question : bool, default=False
        Also return ``"per_question"``: an array of shape (n_questions, 4) holding the
        reciprocal rank, AP, rank of the first correct sentence (0: none) and F1.

    Returns
    -------
    dict
        ``{"mrr", "map", "accuracy@N" (one per N), "f1"}`` as floats.

    Raises
    ------
    ValueError
        For a question with no candidate, labels and scores of different lengths, a label
        outside {0, 1} or a NaN score (each naming the question), or no question at all.

    Examples
    --------
    >>> from qafast.dbqa import evaluate_dbqa
    >>> evaluate_dbqa([[0, 1, 0], [1, 0]], [[0.9, 0.5, 0.1], [0.2, 0.2]], accuracy_at=[1, 2])
    {'mrr': 0.75, 'map': 0.75, 'accuracy@1': 0.5, 'accuracy@2': 1.0, 'f1': 0.5}
    """
    ats = [accuracy_at] if isinstance(accuracy_at, (int, np.integer)) else list(accuracy_at)
    if not ats or any(isinstance(a, bool) or not isinstance(a, (int, np.integer)) or a < 1
                      for a in ats):
        raise InputError("The 'accuracy_at' parameter must be an int >= 1 or a non-empty "
                         f"sequence of them. Got {accuracy_at!r} instead.")
    if f1_threshold is not None and (not isinstance(f1_threshold, (int, float))
                                     or math.isnan(f1_threshold)):
        raise InputError(f"The 'f1_threshold' parameter must be a number or None. "
                         f"Got {f1_threshold!r} instead.")
    names = None
    if offsets is not None and questions is not None:
        raise InputTypeError("give offsets or questions, not both")
    if offsets is not None or questions is not None:
        y = np.asarray(labels)
        s = np.asarray(scores, dtype=np.float64)
        if y.ndim != 1 or s.ndim != 1 or len(y) != len(s):
            raise InputError(f"flat labels and scores must be 1-D of one length, got shapes "
                             f"{y.shape} and {s.shape}")
        if questions is not None:
            offsets, names = _group_consecutive(questions, len(y))
        off = np.ascontiguousarray(offsets, dtype=np.int64)
        if off.ndim != 1 or len(off) < 1 or off[0] != 0 or off[-1] != len(y):
            raise InputError(f"offsets must run from 0 to {len(y)} (the number of rows)")
    else:
        off, y, s = _flatten(labels, scores)
    nq = len(off) - 1
    if nq == 0:
        raise InputError("no questions to evaluate")
    sizes = np.diff(off)
    if (sizes <= 0).any():
        q = int(np.flatnonzero(sizes <= 0)[0])
        raise InputError(f"question {_name(names, q)} has no candidate sentence"
                         if sizes[q] == 0 else "offsets must not decrease")
    yy = _labels01(y, off, names)
    ss = np.ascontiguousarray(s, dtype=np.float64)
    # a cutoff past every list is the whole list: clip what int64 cannot hold
    at = np.array([min(int(a), 2**62) for a in ats], dtype=np.int64)
    rows = np.empty((nq if per_question else 0, 4), dtype=np.float64)
    sums = np.empty(4, dtype=np.float64)
    counts = np.empty(len(ats), dtype=np.int64)
    bad = _kernels.fq_dbqa(off, ss, yy, f1_threshold is None,
                           0.0 if f1_threshold is None else float(f1_threshold), at, rows,
                           sums, counts)
    if bad >= 0:
        q = int(np.searchsorted(off, bad, side="right") - 1)
        if np.isnan(ss[bad]):
            raise InputError(f"question {_name(names, q)}: a score is NaN")
        raise InputError(f"question {_name(names, q)}: label {y[bad:bad + 1].tolist()[0]!r} "
                         "is not 0 or 1")
    out: dict[str, Any] = {"mrr": float(sums[0]) / nq, "map": float(sums[1]) / nq}
    for a, c in zip(ats, counts.tolist()):
        out[f"accuracy@{int(a)}"] = c / nq
    out["f1"] = float(sums[3]) / nq
    if per_question:
        out["per_question"] = rows
    return out


def _name(names, q):
    return repr(names[q]) if names is not None else str(q)


def _group_consecutive(questions, n):
    qs = list(questions)
    if len(qs) != n:
        raise InputError(f"questions has {len(qs)} rows but labels has {n}")
    offsets = [0]
    names = []
    for i, q in enumerate(qs):
        if i == 0 or q != qs[i - 1]:
            if i:
                offsets.append(i)
            names.append(q)
    offsets.append(n)
    return np.array(offsets if n else [0], dtype=np.int64), names


def _flatten(labels, scores):
    if isinstance(labels, (str, bytes)) or not isinstance(labels, (Sequence, np.ndarray)):
        raise InputTypeError(f"labels must be a sequence of per-question lists, got "
                             f"{type(labels).__name__}")
    if len(labels) != len(scores):
        raise InputError(f"labels has {len(labels)} questions but scores has {len(scores)}")
    # each question's lists are read once, into plain lists: the offsets and the flat
    # labels and scores then come from the same read, whatever len() says
    pairs = []
    for q, (a, b) in enumerate(zip(labels, scores)):
        if not hasattr(a, "__len__") or not hasattr(b, "__len__") or isinstance(a, str):
            raise InputTypeError(f"question {q}: expected a list of labels and a list of scores")
        a, b = list(a), list(b)
        if len(a) != len(b):
            raise InputError(f"question {q}: {len(a)} labels but {len(b)} scores")
        pairs.append((a, b))
    off = np.zeros(len(pairs) + 1, dtype=np.int64)
    np.cumsum([len(a) for a, _ in pairs], out=off[1:])
    y = [v for a, _ in pairs for v in a]
    try:
        s = np.array([v for _, b in pairs for v in b], dtype=np.float64)
    except (TypeError, ValueError):
        bad = next(q for q, (_, b) in enumerate(pairs) if not _numbers(b))
        raise InputTypeError(f"question {bad}: scores must be numbers") from None
    return off, np.array(y, dtype=object) if y else np.zeros(0, dtype=np.int8), s


def _numbers(seq):
    try:
        np.array(seq, dtype=np.float64)
        return True
    except (TypeError, ValueError):
        return False


def _labels01(y, off, names):
    y = np.asarray(y)
    if y.dtype in (np.int8, np.uint8, np.bool_):
        # one byte each: the kernel checks for 0 or 1 as it reads them
        return np.ascontiguousarray(y).view(np.int8)
    if y.dtype == object:
        bad = np.array([not isinstance(v, (bool, int, np.integer, np.bool_)) or v not in (0, 1)
                        for v in y.tolist()], dtype=bool)
    elif y.dtype.kind in "biuf":
        bad = ~((y == 0) | (y == 1))
    else:
        bad = np.ones(len(y), dtype=bool)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        q = int(np.searchsorted(off, i, side="right") - 1)
        label = y[i:i + 1].tolist()[0]
        raise InputError(f"question {_name(names, q)}: label {label!r} is not 0 or 1")
    return np.ascontiguousarray(y, dtype=np.int8)


def evaluate_dbqa_file(data, scores=None, **options) -> dict:
    """:func:`evaluate_dbqa` on a DBQA file (see :func:`qafast.io.dbqa.read_dbqa`), its
    scores in a fourth column or in a separate file with one score per line."""
    d = data if isinstance(data, DbqaData) else read_dbqa(data, scores)
    if d.scores is None:
        raise InputError(f"{d.path}: no scores: give a file with a fourth column or a "
                         "score file")
    return evaluate_dbqa(d.labels, d.scores, offsets=d.offsets, **options)


def register_cli(subparsers) -> dict:
    p = subparsers.add_parser(
        "dbqa", help="MRR, MAP, Accuracy@N and F1 of NLPCC-DBQA answer-sentence selection",
        description="Evaluate answer-sentence selection in the NLPCC-DBQA format: "
                    "question<TAB>sentence<TAB>label[<TAB>score] per line, a question's "
                    "candidates on consecutive lines; scores in the fourth column or in a "
                    "separate file with one per line.")
    p.add_argument("data", help="labelled candidates (TSV)")
    p.add_argument("scores", nargs="?", help="score file, one score per data line")
    p.add_argument("-N", default="1", metavar="N[,N...]",
                   help="Accuracy@N cut-offs, comma-separated (default 1)")
    p.add_argument("--f1-threshold", type=float, default=None, metavar="T",
                   help="select sentences scoring >= T for F1 (default: the top one)")
    p.add_argument("-o", choices=("text", "json"), default="text", help="output format")
    return {"dbqa": _run_dbqa}


def _run_dbqa(args) -> int:
    try:
        ats = [int(x) for x in args.N.split(",")]
    except ValueError:
        raise InputError(f"-N takes comma-separated integers, got {args.N!r}") from None
    res = evaluate_dbqa_file(args.data, args.scores, accuracy_at=ats,
                             f1_threshold=args.f1_threshold)
    from ._output import write_json, write_values

    return write_json(res) if args.o == "json" else write_values(res, width=14)
