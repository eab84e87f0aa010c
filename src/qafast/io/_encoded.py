"""The encoded data the readers return and the families evaluate.

A reader turns a file into these containers and knows nothing of the metrics; the family
modules (:mod:`qafast.concepts`, :mod:`qafast.events`) take them, and also build them from
Python objects. Keeping them here lets the imports run one way, families to readers. Each
class says it belongs to its family module, where users import it from (and pickles find it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import chain

import numpy as np

__all__ = ["EM_LABELS", "LABELS", "LABEL_CODES", "ConceptLists", "LabelSequences", "pack_concepts"]


@dataclass(eq=False)
class ConceptLists:
    """Concept lists of many questions, encoded: question i's concepts are
    ``ids[offsets[i]:offsets[i + 1]]`` (with ``weights`` beside them, when weighted).

    Attributes
    ----------
    question_ids : list
        The caller's question ids, in row order.
    offsets : numpy.ndarray of int64
        ``len(question_ids) + 1`` offsets into ``ids``.
    ids : numpy.ndarray of int32
        Concept ids, ``0 <= id < len(vocabulary)``.
    weights : numpy.ndarray of float64 or None
        A weight per concept; ``None`` when each list is already in rank order (gold lists
        have none).
    vocabulary : list of str
        The concept of each id, sorted, shared by the predictions and the references that
        were encoded together.
    source : str
        Where the lists came from, for messages.

    Each row is a question: means are over rows. Question ids must be distinct for
    per-question results and for lining up predictions and references whose rows are in a
    different order (a repeated id then raises ``ValueError``).
    """

    question_ids: list
    offsets: np.ndarray
    ids: np.ndarray
    weights: np.ndarray | None
    vocabulary: list
    source: str = "concepts"
    # True when built by qafast from a dict or a file, whose question ids are distinct
    _distinct: bool = field(default=False, init=False, repr=False)

    def __len__(self) -> int:
        return len(self.question_ids)

    def __repr__(self) -> str:
        kind = "weighted" if self.weights is not None else "ranked"
        return (f"ConceptLists({len(self.question_ids)} questions, {len(self.ids)} {kind} "
                f"concepts, {len(self.vocabulary)} distinct, from {self.source})")

    def concepts(self, i: int) -> list:
        """Question ``i``'s concepts as strings (with weights, as pairs, when weighted)."""
        lo, hi = int(self.offsets[i]), int(self.offsets[i + 1])
        names = [self.vocabulary[c] for c in self.ids[lo:hi].tolist()]
        if self.weights is None:
            return names
        return list(zip(names, self.weights[lo:hi].tolist()))


ConceptLists.__module__ = "qafast.concepts"


def pack_concepts(qids, lists, weights, index, vocabulary, source) -> ConceptLists:
    lengths = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
    offsets = np.zeros(len(lists) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    total = int(offsets[-1])
    ids = np.fromiter(map(index.__getitem__, chain.from_iterable(lists)), dtype=np.int32,
                      count=total)
    w = None
    if weights is not None:
        w = np.fromiter(chain.from_iterable(weights), dtype=np.float64, count=total)
    out = ConceptLists(qids, offsets, ids, w, vocabulary, source)
    out._distinct = True  # dict keys, or file ids checked by the reader
    return out


#: The event-mention labels, in the order a tweet's mention scores are added.
EM_LABELS = ("en", "ep", "en1", "ep1", "en2", "ep2")
#: Every label a token may carry; a label's code is its position here (``o`` is 0).
LABELS = ("o",) + EM_LABELS
LABEL_CODES = {label: i for i, label in enumerate(LABELS)}


@dataclass(eq=False)
class LabelSequences:
    """Label sequences of many tweets, encoded: tweet i's codes are
    ``codes[offsets[i]:offsets[i + 1]]`` (positions in :data:`LABELS`).

    Attributes
    ----------
    tweet_ids : list
        The caller's tweet ids (positions 0, 1, ... for a list of tweets).
    offsets : numpy.ndarray of int64
        ``len(tweet_ids) + 1`` offsets into ``codes``.
    codes : numpy.ndarray of int32
        Label codes, all tweets one after the other.
    source : str
        Where the labels came from, for messages (``'results'``, a file name, ...).
    lines : numpy.ndarray of int64 or None
        The file line of each tweet's first token, when read from a file.
    """

    tweet_ids: list
    offsets: np.ndarray
    codes: np.ndarray
    source: str = "labels"
    lines: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.tweet_ids)

    def __repr__(self) -> str:
        return (f"LabelSequences({len(self.tweet_ids)} tweets, {len(self.codes)} tokens, "
                f"from {self.source})")

    def where(self, i: int) -> str:
        """How messages name tweet ``i``."""
        text = f"tweet {self.tweet_ids[i]!r}"
        if self.lines is not None:
            text += f" (line {int(self.lines[i])} of {self.source})"
        return text

    def labels(self, i: int) -> list[str]:
        """Tweet ``i``'s labels as strings."""
        lo, hi = int(self.offsets[i]), int(self.offsets[i + 1])
        return [LABELS[c] for c in self.codes[lo:hi].tolist()]


LabelSequences.__module__ = "qafast.events"
