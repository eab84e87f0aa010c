"""Reader of CoNLL-style label files: one token per line, a blank line between sequences.

Each non-blank line is ``token gold_label predicted_label``, fields separated by whitespace;
the last two fields are the labels (so a tab-separated token may itself hold spaces). One or
more blank lines end a tweet. This is the usual layout of a tagger's output on a test set, and
what ``qafast events`` reads.
"""

from __future__ import annotations

import io
import os
from typing import IO, Union

import numpy as np

from ..errors import InputTypeError
from ._encoded import LABEL_CODES, LABELS, LabelSequences
from ._errors import LineFormatError

__all__ = ["ConllFormatError", "read_conll"]

Source = Union[str, "os.PathLike[str]", IO[str]]


class ConllFormatError(LineFormatError):
    """A malformed line of a CoNLL-style file."""



def _open(source: Source):
    if isinstance(source, (str, os.PathLike)):
        from ._text import open_utf8

        return open_utf8(source, ConllFormatError), os.fspath(source), True
    if isinstance(source, io.TextIOBase) or hasattr(source, "readline"):
        from ._text import as_text

        path = getattr(source, "name", "<file>")
        return as_text(source, path, ConllFormatError), path, False
    raise InputTypeError(f"source must be a path or a text file, got {type(source).__name__}")


def read_conll(source: Source):
    """Read a CoNLL-style file of tweets into encoded results and annotations.

    Parameters
    ----------
    source : str, os.PathLike or text file
        The file: ``token gold predicted`` per line, a blank line between tweets.

    Returns
    -------
    (LabelSequences, LabelSequences)
        The predicted labels (results) and the gold labels (annotations), in that order, as
        :func:`qafast.events.tw_events_score` takes them. Tweets are numbered 0, 1, ... in
        file order; messages also give the line of a tweet's first token.

    Raises
    ------
    ConllFormatError
        A line with fewer than three fields, or a label outside
        :data:`qafast.events.LABELS` (with the line number).

    Examples
    --------
    >>> import io
    >>> from qafast.io.conll import read_conll
    >>> from qafast.events import tw_events_score
    >>> text = "go ep1 ep1\\nray en1 en1\\nrice en1 o\\n\\nwait ep ep\\n"
    >>> res, ann = read_conll(io.StringIO(text))
    >>> res
    LabelSequences(2 tweets, 4 tokens, from <file>)
    >>> round(tw_events_score(res, ann), 4)
    0.9167
    """
    f, path, close = _open(source)
    gold: list[str] = []
    pred: list[str] = []
    starts: list[int] = []      # index of each tweet's first token
    lines: list[int] = []       # line of each tweet's first token
    in_tweet = False
    try:
        from ._text import iter_decoded

        for lineno, line in iter_decoded(f, path, ConllFormatError):
            fields = line.split()
            if not fields:
                in_tweet = False
                continue
            if len(fields) < 3:
                got = line.rstrip()  # shown cut: a hostile file's line may be gigabytes
                raise ConllFormatError(
                    f"expected 'token gold_label predicted_label', got {got[:200]!r}"
                    f"{'...' if len(got) > 200 else ''}", path=path, line=lineno)
            if not in_tweet:
                starts.append(len(gold))
                lines.append(lineno)
                in_tweet = True
            gold.append(fields[-2])
            pred.append(fields[-1])
    finally:
        if close:
            f.close()
    n = len(gold)
    offsets = np.empty(len(starts) + 1, dtype=np.int64)
    offsets[:-1] = starts
    offsets[-1] = n
    line_arr = np.array(lines, dtype=np.int64)
    ids = list(range(len(starts)))
    out = {}
    for name, labels in (("results", pred), ("annotations", gold)):
        try:
            codes = np.fromiter(map(LABEL_CODES.__getitem__, labels), dtype=np.int32, count=n)
        except KeyError:
            j = next(j for j, lab in enumerate(labels) if lab not in LABEL_CODES)
            t = int(np.searchsorted(offsets, j, side="right")) - 1
            which = "predicted" if name == "results" else "gold"
            raise ConllFormatError(
                f"{which} label {labels[j]!r} (tweet {t}) is not one of {', '.join(LABELS)}",
                path=path, line=int(line_arr[t] + (j - offsets[t]))) from None
        out[name] = LabelSequences(ids, offsets, codes, path, line_arr)
    return out["results"], out["annotations"]
