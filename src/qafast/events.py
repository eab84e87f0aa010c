"""Event mentions in tweets: mention scores, tweet scores and the tw-events score.

Each token of a tweet is labelled ``o`` (outside) or with an event-mention label (``en``,
``ep``, ``en1``, ``ep1``, ``en2``, ``ep2``). :func:`event_mention_score` is the F1 of one label's
tokens; :func:`tweet_score` is an F1 over labels in which each label the system used counts its
mention score as a (possibly fractional) true positive; :func:`tw_events_score` is the mean
tweet score of a corpus, computed by one kernel call. The definitions are in
:mod:`qafast.reference.events`.

Labels are encoded as ``int32`` codes, the positions in :data:`LABELS`; a corpus is CSR
(:class:`LabelSequences`: ``int64`` offsets and flat codes), as :func:`qafast.io.conll.read_conll`
returns it.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any, Literal, overload

import numpy as np

from . import _kernels
from .errors import InputError, InputTypeError
from .io._encoded import EM_LABELS, LABEL_CODES, LABELS, LabelSequences

__all__ = ["EM_LABELS", "LABELS", "LabelSequences", "encode_labels", "event_mention_score",
           "tw_events_score", "tweet_score", "tweet_scores"]

_NO_MENTIONS = np.zeros((0, len(LABELS)), dtype=np.float64)


def _encode_one(labels: Any, t: Any, corpus: str) -> list[str]:
    if type(labels) is list:
        return labels
    # the message is made only when there is one to give (for each of a million tweets it
    # cost more than the rest of the encoding)
    if isinstance(labels, str):
        raise InputTypeError(f"tweet {t!r} of the {corpus}: expected a sequence of labels, got the "
                             f"string {labels!r}")
    try:
        return list(labels)
    except TypeError:
        raise InputTypeError(f"tweet {t!r} of the {corpus}: expected a sequence of labels, got "
                             f"{type(labels).__name__}") from None


def encode_labels(results, annotations) -> tuple[LabelSequences, LabelSequences]:
    """Encode two corpora of label sequences, checking labels and lengths.

    Parameters
    ----------
    results, annotations : sequence of sequences of str, or dict
        One label sequence per tweet: a list of tweets (ids 0, 1, ...) or a dict
        ``{tweet_id: labels}``, the same keys in both.

    Returns
    -------
    (LabelSequences, LabelSequences)
        The results and the annotations, sharing their offsets.

    Raises
    ------
    ValueError
        A label outside :data:`LABELS`, or a tweet whose two sequences differ in length
        (the message names the tweet); different tweets in the two corpora.
    """
    if isinstance(results, Mapping) != isinstance(annotations, Mapping):
        raise InputTypeError("results and annotations: give two dicts or two sequences")
    if isinstance(results, Mapping):
        ids = list(results)
        missing = [t for t in ids if t not in annotations]
        extra = [t for t in annotations if t not in results]
        if missing or extra:
            bad = missing[0] if missing else extra[0]
            raise InputError(f"tweet {bad!r} is in the {'results' if missing else 'annotations'}"
                             f" only; both need the same tweets")
        res = [results[t] for t in ids]
        ann = [annotations[t] for t in ids]
    else:
        if isinstance(results, (str, bytes)) or isinstance(annotations, (str, bytes)) or not (
                hasattr(results, "__len__") and hasattr(annotations, "__len__")):
            raise InputTypeError("results and annotations: expected sequences of label sequences, "
                                 f"got {type(results).__name__} and {type(annotations).__name__}")
        if len(results) != len(annotations):
            raise InputError(f"{len(results)} tweets of results but {len(annotations)} of "
                             "annotations")
        ids = list(range(len(results)))
        res, ann = results, annotations
    res = [_encode_one(x, t, "results") for t, x in zip(ids, res)]
    ann = [_encode_one(x, t, "annotations") for t, x in zip(ids, ann)]
    lengths = np.fromiter(map(len, res), dtype=np.int64, count=len(res))
    ann_lengths = np.fromiter(map(len, ann), dtype=np.int64, count=len(ann))
    if not np.array_equal(lengths, ann_lengths):
        i = int(np.flatnonzero(lengths != ann_lengths)[0])
        raise InputError(f"tweet {ids[i]!r}: the results have {lengths[i]} labels and the "
                         f"annotations {ann_lengths[i]}")
    offsets = np.zeros(len(ids) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    total = int(offsets[-1])
    out = []
    for name, seqs in (("results", res), ("annotations", ann)):
        try:
            codes = np.fromiter(map(LABEL_CODES.__getitem__, itertools.chain.from_iterable(seqs)),
                                dtype=np.int32, count=total)
        except (KeyError, TypeError):
            for t, seq in zip(ids, seqs):
                for label in seq:
                    if not isinstance(label, str) or label not in LABEL_CODES:
                        raise InputError(f"tweet {t!r}: label {label!r} in the {name} is not "
                                         f"one of {', '.join(LABELS)}") from None
            raise
        out.append(LabelSequences(ids, offsets, codes, name))
    return out[0], out[1]


def _as_encoded(results, annotations) -> tuple[LabelSequences, LabelSequences]:
    if isinstance(results, LabelSequences) or isinstance(annotations, LabelSequences):
        if not (isinstance(results, LabelSequences) and isinstance(annotations, LabelSequences)):
            raise InputTypeError("results and annotations: give two LabelSequences (as "
                                 "qafast.io.conll.read_conll returns) or two plain corpora")
        _check_encoded(results, annotations)
        return results, annotations
    return encode_labels(results, annotations)


def _check_encoded(res: LabelSequences, ann: LabelSequences) -> None:
    for x in (res, ann):
        if not (isinstance(x.offsets, np.ndarray) and x.offsets.dtype == np.int64
                and x.offsets.ndim == 1 and isinstance(x.codes, np.ndarray)
                and x.codes.dtype == np.int32 and x.codes.ndim == 1):
            raise InputTypeError(f"{x.source}: offsets must be a 1-d int64 array and codes a 1-d "
                                 "int32 array")
        n = len(x.tweet_ids)
        off = x.offsets
        if len(off) != n + 1 or off[0] != 0 or off[-1] != len(x.codes) or (
                n and np.any(off[1:] < off[:-1])):
            raise InputError(f"{x.source}: offsets must rise from 0 to len(codes), one per "
                             "tweet plus one")
        if len(x.codes) and (x.codes.min() < 0 or x.codes.max() >= len(LABELS)):
            bad = np.flatnonzero((x.codes < 0) | (x.codes >= len(LABELS)))
            i = int(np.searchsorted(off, bad[0], side="right")) - 1
            raise InputError(f"{x.where(i)}: label code {int(x.codes[bad[0]])} in the "
                             f"{x.source} is not one of 0..{len(LABELS) - 1} "
                             f"({', '.join(LABELS)})")
    if len(res.tweet_ids) != len(ann.tweet_ids):
        raise InputError(f"{len(res.tweet_ids)} tweets of results but {len(ann.tweet_ids)} of "
                         "annotations")
    if res.offsets is not ann.offsets and not np.array_equal(res.offsets, ann.offsets):
        i = int(np.flatnonzero(res.offsets != ann.offsets)[0]) - 1
        raise InputError(f"{res.where(i)}: the results have "
                         f"{int(res.offsets[i + 1] - res.offsets[i])} labels and the annotations "
                         f"{int(ann.offsets[i + 1] - ann.offsets[i])}")


def _kernel_scores(res: LabelSequences, ann: LabelSequences, mention: bool = False):
    # one output per tweet the offsets hold: the kernel's loop bound, whatever
    # len(res.tweet_ids) says on another call
    out = np.empty(len(res.offsets) - 1, dtype=np.float64)
    ms = np.empty((len(out), len(LABELS)), dtype=np.float64) if mention else _NO_MENTIONS
    _kernels.lb_tweet_scores(res.offsets, res.codes, ann.codes, out, ms)
    return out, ms


def event_mention_score(res: Sequence[str], ann: Sequence[str], label: str) -> float:
    """F1 of the tokens labelled ``label``: the tweet event-mention score.

    Parameters
    ----------
    res : sequence of str
        The system's label for each token of one tweet.
    ann : sequence of str
        The annotated labels, as many as ``res``.
    label : str
        One of :data:`LABELS`.

    Returns
    -------
    float
        ``2 * rec * prec / (rec + prec)`` with ``tp`` the tokens labelled ``label`` in both,
        ``rec = tp / ann.count(label)`` and ``prec = tp / res.count(label)``; 0.0 when either
        count or ``tp`` is 0.

    Examples
    --------
    The definition's worked examples, against the annotation of "Cant wait for the ravens game
    tomorrow .... go ray rice !!!!!!!":

    >>> from qafast.events import event_mention_score
    >>> ann = ["ep", "ep", "o", "en", "en", "en", "o", "o", "ep1", "en1", "en1", "o"]
    >>> missed = ["ep", "ep", "o", "o", "o", "o", "o", "o", "ep1", "en1", "en1", "o"]
    >>> event_mention_score(missed, ann, "en")
    0.0
    >>> inaccurate = ["ep", "ep", "o", "o", "en", "en", "en", "o", "ep1", "en1", "en1", "o"]
    >>> round(event_mention_score(inaccurate, ann, "en"), 2)
    0.67
    >>> event_mention_score(ann, ann, "en")
    1.0
    """
    if not isinstance(label, str) or label not in LABEL_CODES:
        raise InputError(f"label {label!r} is not one of {', '.join(LABELS)}")
    r, a = encode_labels([res], [ann])
    _, ms = _kernel_scores(r, a, mention=True)
    return float(ms[0, LABEL_CODES[label]])


def tweet_score(res: Sequence[str], ann: Sequence[str]) -> float:
    """The tweet score: an F1 over labels, mentions counting their F1.

    True positives are the sum of :func:`event_mention_score` over the event-mention labels
    the system used (in the order of :data:`EM_LABELS`); recall divides it by the number of
    labels annotated, precision by the number predicted (``o`` is no label).

    Parameters
    ----------
    res : sequence of str
        The system's label for each token of one tweet.
    ann : sequence of str
        The annotated labels, as many as ``res``.

    Returns
    -------
    float
        0.0 when no label is annotated, none is predicted, or no mention scores.

    Raises
    ------
    ValueError
        A label outside :data:`LABELS`, or sequences of different lengths.

    Examples
    --------
    The definition's worked examples:

    >>> from qafast.events import tweet_score
    >>> ann = ["ep", "ep", "o", "en", "en", "en", "o", "o", "ep1", "en1", "en1", "o"]
    >>> tweet_score(["o"] * 12, ann)  # missed events
    0.0
    >>> missed_event = ["ep", "ep", "o", "en", "en", "en", "o", "o", "o", "o", "o", "o"]
    >>> round(tweet_score(missed_event, ann), 2)
    0.67
    >>> missed_entity = ["ep", "ep", "o", "o", "o", "o", "o", "o", "ep1", "en1", "en1", "o"]
    >>> round(tweet_score(missed_entity, ann), 2)
    0.86
    >>> false_positive = ["ep", "ep", "o", "en", "en", "en", "o", "o", "ep1", "en1", "en1", "en2"]
    >>> round(tweet_score(false_positive, ann), 2)
    0.89
    >>> inaccurate = ["ep", "ep", "o", "o", "en", "en", "en", "o", "ep1", "en1", "en1", "o"]
    >>> round(tweet_score(inaccurate, ann), 2)
    0.92
    """
    r, a = encode_labels([res], [ann])
    return float(_kernel_scores(r, a)[0][0])


def tweet_scores(results, annotations) -> np.ndarray:
    """The tweet score of every tweet, as a float64 array in tweet order.

    ``results`` and ``annotations`` are as for :func:`tw_events_score`.

    >>> from qafast.events import tweet_scores
    >>> tweet_scores([["en", "o"], ["o", "ep"]], [["en", "o"], ["ep", "ep"]])
    array([1.        , 0.66666667])
    """
    res, ann = _as_encoded(results, annotations)
    return _kernel_scores(res, ann)[0]


@overload
def tw_events_score(results: Any, annotations: Any, *,
                    per_tweet: Literal[False] = ...) -> float: ...
@overload
def tw_events_score(results: Any, annotations: Any, *,
                    per_tweet: Literal[True]) -> dict[Any, float]: ...
@overload
def tw_events_score(results: Any, annotations: Any, *,
                    per_tweet: bool) -> float | dict[Any, float]: ...
def tw_events_score(results: Any, annotations: Any, *,
                    per_tweet: bool = False) -> float | dict[Any, float]:
    """The tw-events score: the mean :func:`tweet_score` of a corpus, in one kernel call.

    Parameters
    ----------
    results, annotations : sequence of label sequences, dict, or LabelSequences
        One label sequence per tweet: lists (tweets identified by position), dicts
        ``{tweet_id: labels}`` with the same keys, or the encoded pair that
        :func:`qafast.io.conll.read_conll` returns.
    per_tweet : bool, default False
        Return ``{tweet_id: tweet score}`` instead of the mean.

    Returns
    -------
    float or dict
        The mean tweet score (tweet scores added in tweet order, divided by their number).

    Raises
    ------
    ValueError
        No tweets; a label outside :data:`LABELS` or sequences of different lengths (naming
        the tweet).

    Examples
    --------
    >>> from qafast.events import tw_events_score
    >>> ann = ["ep", "ep", "o", "en", "en", "en", "o", "o", "ep1", "en1", "en1", "o"]
    >>> missed_event = ["ep", "ep", "o", "en", "en", "en", "o", "o", "o", "o", "o", "o"]
    >>> tw_events_score([ann, missed_event], [ann, ann])
    0.8333333333333333
    >>> tw_events_score({"t1": ann, "t2": missed_event}, {"t1": ann, "t2": ann}, per_tweet=True)
    {'t1': 1.0, 't2': 0.6666666666666666}
    >>> tw_events_score([["o", "EN"]], [["o", "en"]])
    Traceback (most recent call last):
    ...
    qafast.errors.InputError: tweet 0: label 'EN' in the results is not one of o, en, ep, en1, ep1, en2, ep2
    """
    res, ann = _as_encoded(results, annotations)
    scores = _kernel_scores(res, ann)[0]
    if per_tweet:
        return dict(zip(res.tweet_ids, scores.tolist()))
    if len(scores) == 0:
        raise InputError("no tweets to score")
    total = np.empty(1, dtype=np.float64)
    _kernels.column_sums(scores.reshape(-1, 1), total)
    return float(total[0]) / len(scores)


# ------------------------------------------------------------------------------------------
# CLI: qafast events FILE [-q] [-o json]

def _events_parser(sub) -> None:
    p = sub.add_parser(
        "events", help="score event mentions in tweets (tw-events score)",
        description="Score a CoNLL-style file of tweets: one token per line as 'token "
                    "gold_label predicted_label', a blank line between tweets. Prints the "
                    "number of tweets and the tw-events score (the mean tweet score).")
    p.add_argument("file", help="CoNLL-style file; '-' for stdin")
    p.add_argument("-q", action="store_true", help="print each tweet's score too")
    p.add_argument("-o", choices=("text", "json"), default="text", help="output format")


def _run_events(args) -> int:
    import sys

    from .io.conll import read_conll

    res, ann = read_conll(sys.stdin if args.file == "-" else args.file)
    scores = tweet_scores(res, ann)
    mean = tw_events_score(res, ann)
    if args.o == "json":
        doc: dict = {"tweets": len(scores), "tw_events": mean}
        if args.q:
            doc["per_tweet"] = scores.tolist()
        from ._output import write_json

        return write_json(doc)
    lines = []
    if args.q:
        lines += [f"tweet_score\t{t}\t{v:.4f}\n" for t, v in zip(res.tweet_ids, scores.tolist())]
    lines.append(f"tweets\tall\t{len(scores)}\n")
    lines.append(f"tw_events\tall\t{mean:.4f}\n")
    sys.stdout.write("".join(lines))
    return 0


def register_cli(subparsers) -> dict:
    """Add the ``events`` subcommand; returns ``{name: handler}`` for :mod:`qafast.cli`."""
    _events_parser(subparsers)
    return {"events": _run_events}
