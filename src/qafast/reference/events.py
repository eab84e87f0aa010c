"""The specification: event-mention scores of tweets (the tw-events score).

Each token of a tweet carries a label: ``o`` (outside) or one of the event-mention labels
``en``, ``ep``, ``en1``, ``ep1``, ``en2``, ``ep2``. Given a system's labels ``res`` and the
annotated labels ``ann`` of one tweet:

* the **mention score** of a label is the F1 of its tokens: ``tp`` tokens carry the label in
  both, recall is ``tp / ann.count(label)``, precision ``tp / res.count(label)``, and the score
  is ``2 * rec * prec / (rec + prec)``; 0 when either count or ``tp`` is 0;
* the **tweet score** is an F1 over labels whose true positives are the mention scores of the
  labels the system used: ``tp`` is their sum, recall ``tp / (number of labels annotated)``,
  precision ``tp / (number of labels predicted)``; 0 when either number or ``tp`` is 0. So an
  inaccurate mention adds its mention score, a fraction, rather than 0 or 1;
* the **tw-events score** of a corpus is the mean tweet score.

Where this differs from the definition's published code, on purpose:

* that code adds the mention scores in the iteration order of a Python ``set`` of strings,
  which changes with ``PYTHONHASHSEED`` and so can change the last bit of a score; here they
  are added in the order en, ep, en1, ep1, en2, ep2;
* it checks its input with ``assert`` (gone under ``python -O``); here unknown labels and
  sequences of different lengths raise ``ValueError``;
* scores are floats (it returns the integer 0 for a zero score).

Plain Python, written to be read; the kernels are tested against it.
"""

from __future__ import annotations

__all__ = ["EM_LABELS", "LABELS", "event_mention_score", "tw_events_score", "tweet_score"]

#: The event-mention labels, in the order a tweet's mention scores are added.
EM_LABELS = ("en", "ep", "en1", "ep1", "en2", "ep2")
#: Every label a token may carry: outside, then the event-mention labels.
LABELS = ("o",) + EM_LABELS


def _check(res, ann):
    if len(res) != len(ann):
        raise ValueError(f"the results have {len(res)} labels and the annotations {len(ann)}")
    for name, seq in (("results", res), ("annotations", ann)):
        for label in seq:
            if label not in LABELS:
                raise ValueError(f"label {label!r} in the {name} is not one of "
                                 f"{', '.join(LABELS)}")


def _f1(tp, n_gold, n_pred):
    rec = tp / n_gold
    prec = tp / n_pred
    return (2 * rec * prec) / (rec + prec)


def event_mention_score(res, ann, label):
    """F1 of the tokens labelled ``label`` in ``res`` against ``ann``.

    >>> ann = ["ep", "ep", "o", "en", "en", "en", "o"]
    >>> round(event_mention_score(["ep", "ep", "o", "o", "en", "en", "en"], ann, "en"), 2)
    0.67
    """
    _check(res, ann)
    if label not in LABELS:
        raise ValueError(f"label {label!r} is not one of {', '.join(LABELS)}")
    tp = 0
    for r, a in zip(res, ann):
        if r == label and a == label:
            tp += 1
    if ann.count(label) == 0 or res.count(label) == 0 or tp == 0:
        return 0.0
    return _f1(tp, ann.count(label), res.count(label))


def tweet_score(res, ann):
    """F1 over event-mention labels, inaccurate mentions counting their mention score.

    >>> ann = ["ep", "ep", "o", "en", "en", "en"]
    >>> round(tweet_score(["ep", "ep", "o", "o", "o", "o"], ann), 2)
    0.67
    """
    _check(res, ann)
    ann_ems = set(ann) - {"o"}
    res_ems = set(res) - {"o"}
    tp = 0.0
    for label in EM_LABELS:  # a fixed order (the published code: set order)
        if label in res_ems:
            tp += event_mention_score(res, ann, label)
    if len(ann_ems) == 0 or len(res_ems) == 0 or tp == 0:
        return 0.0
    return _f1(tp, len(ann_ems), len(res_ems))


def tw_events_score(results, annotations):
    """The mean tweet score over a corpus, tweets added in order.

    ``results`` and ``annotations`` are sequences of label sequences, one per tweet.
    """
    if len(results) != len(annotations):
        raise ValueError(f"{len(results)} tweets of results, {len(annotations)} annotated")
    if not results:
        raise ValueError("no tweets")
    total = 0.0
    for i, (res, ann) in enumerate(zip(results, annotations)):
        try:
            total += tweet_score(res, ann)
        except ValueError as e:
            raise ValueError(f"tweet {i}: {e}") from None
    return total / len(results)
