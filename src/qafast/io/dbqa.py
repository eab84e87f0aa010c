"""Reader for NLPCC-DBQA files: ``question<TAB>sentence<TAB>label[<TAB>score]`` per line.

A question's candidate sentences are consecutive lines with the same question text (a
question that comes back later, after another one, starts a new group). Fields are split on
tabs only, with no quote processing: the data contains stray quotes that a CSV reader would
misread. Labels are ``0`` or ``1``. Scores come from a fourth column or from a separate file
with one score per data line (NLPCC's submission format). Lines may end in ``\\r\\n``.
Blank lines are skipped.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import IO, Union

import numpy as np

from ._errors import LineFormatError
from ._text import as_text, iter_decoded, open_utf8

__all__ = ["DbqaData", "DbqaFormatError", "read_dbqa"]

Source = Union[str, "os.PathLike[str]", IO[str]]


class DbqaFormatError(LineFormatError):
    """A malformed line of a DBQA file."""



@dataclass(eq=False)
class DbqaData:
    """A DBQA file as CSR arrays: question q's candidates are rows
    ``offsets[q]:offsets[q + 1]`` of ``labels`` (int8) and ``scores`` (float64, or None
    when the file has no scores); ``questions`` holds each group's question text and
    ``lines`` each row's line number."""

    questions: list
    offsets: np.ndarray
    labels: np.ndarray
    scores: np.ndarray | None
    lines: np.ndarray
    path: str = "<data>"

    def __len__(self) -> int:
        return len(self.questions)


def _open(source: Source):
    if hasattr(source, "read"):
        path = str(getattr(source, "name", "<file>"))
        return as_text(source, path, DbqaFormatError, newline="\n"), path, False
    path = os.fspath(source)
    # lines end at "\n" only: a lone "\r" is part of a sentence, as in a file object
    return open_utf8(path, DbqaFormatError, newline="\n"), path, True


def read_dbqa(source: Source, scores: Source | None = None) -> DbqaData:
    """Read a DBQA file, with scores from its fourth column or from ``scores``.

    Parameters
    ----------
    source : path or text file
        The labelled candidates, ``question<TAB>sentence<TAB>label[<TAB>score]``.
    scores : path or text file, optional
        One score per data line of ``source``; it replaces a fourth column.

    Returns
    -------
    DbqaData

    Raises
    ------
    DbqaFormatError
        A line without 3 or 4 fields, a label other than 0 or 1, a score that is not a
        number or is NaN, or a score file whose length differs.

    Examples
    --------
    >>> import io
    >>> text = 'q1\\ta "quoted\\t1\\t0.9\\nq1\\tb\\t0\\t0.1\\nq2\\tc\\t1\\t0.5\\n'
    >>> d = read_dbqa(io.StringIO(text))
    >>> d.questions, d.offsets.tolist(), d.labels.tolist(), d.scores.tolist()
    (['q1', 'q2'], [0, 2, 3], [1, 0, 1], [0.9, 0.1, 0.5])
    """
    f, path, close = _open(source)
    questions: list = []
    offsets = [0]
    labels: list = []
    vals: list = []
    lines: list = []
    has_score = None
    prev = None
    try:
        for lineno, raw in iter_decoded(f, path, DbqaFormatError):
            line = raw.rstrip("\n").rstrip("\r")
            if not line.strip():
                continue
            fields = line.split("\t")
            if len(fields) not in (3, 4):
                raise DbqaFormatError(f"expected 3 or 4 tab-separated fields (question, "
                                      f"sentence, label[, score]), got {len(fields)}",
                                      path=path, line=lineno)
            if has_score is None:
                has_score = len(fields) == 4
            elif has_score != (len(fields) == 4):
                raise DbqaFormatError(f"{len(fields)} fields, but earlier lines had "
                                      f"{4 if has_score else 3}", path=path, line=lineno)
            q, label = fields[0], fields[2].strip()
            if label not in ("0", "1"):
                raise DbqaFormatError(f"label {fields[2]!r} of question {q!r} is not 0 or 1",
                                      path=path, line=lineno)
            if q != prev:
                if prev is not None:
                    offsets.append(len(labels))
                questions.append(q)
                prev = q
            labels.append(label == "1")
            lines.append(lineno)
            if has_score:
                vals.append(_score(fields[3], path, lineno, q))
    finally:
        if close:
            f.close()
    if prev is not None:
        offsets.append(len(labels))
    if scores is not None:
        vals = _read_scores(scores, len(labels), path)
    scored = scores is not None or has_score
    return DbqaData(questions, np.array(offsets, dtype=np.int64),
                    np.array(labels, dtype=np.int8),
                    np.array(vals, dtype=np.float64) if scored else None,
                    np.array(lines, dtype=np.int64), path)


def _score(text: str, path: str, lineno: int, question: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise DbqaFormatError(f"score {text!r} of question {question!r} is not a number",
                              path=path, line=lineno) from None
    if math.isnan(v):
        raise DbqaFormatError(f"score of question {question!r} is NaN", path=path, line=lineno)
    return v


def _read_scores(source: Source, n: int, data_path: str) -> list:
    f, path, close = _open(source)
    out: list[float] = []
    try:
        for lineno, raw in iter_decoded(f, path, DbqaFormatError):
            text = raw.strip()
            if not text:
                continue
            out.append(_score(text.split("\t")[-1], path, lineno, f"#{len(out) + 1}"))
    finally:
        if close:
            f.close()
    if len(out) != n:
        raise DbqaFormatError(f"{len(out)} scores for the {n} candidate lines of {data_path}",
                              path=path, line=len(out))
    return out
