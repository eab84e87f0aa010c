"""Readers of OpenCSR / DrFact files: concept predictions and the questions' gold concepts.

* A **prediction file** (what the OpenCSR repository's ``process_drx_results.py`` and
  ``process_ret_results.py`` write) has one JSON object per line with ``"qid"`` and
  ``"predictions_K"``: ``{pool: [[concept, score], ...]}``, the concepts best first. The pool
  key is usually ``"100"``.
* A **truth file** (``linked_dev.jsonl`` and the like) has one JSON object per line with
  ``"_id"`` and ``"all_answer_concepts"``: ``[{"name": concept, ...}, ...]``.

Blank lines are skipped. Other keys are ignored. A question on several lines of a file counts
once, at its first line's place, with its last line's content: the published script reads each
file into a dict keyed by question id. That comes with a :class:`DrFactWarning`, and
``strict=True`` makes it an error.
"""

from __future__ import annotations

import json
import os
from numbers import Real
from typing import Union

from ._encoded import pack_concepts
from ._errors import LineFormatError

__all__ = ["DrFactFormatError", "DrFactWarning", "read_drfact"]

Path = Union[str, "os.PathLike[str]"]


class DrFactFormatError(LineFormatError):
    """A malformed line of a DrFact file."""


class DrFactWarning(UserWarning):
    """Input the published DrFact evaluation script accepts, scored as it scores it (a
    question on two lines, a concept predicted twice, no question at all)."""


def _objects(path: Path):
    from ._text import open_utf8

    with open_utf8(path, DrFactFormatError) as f:
        name = os.fspath(path)
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                raise DrFactFormatError(f"not JSON ({e.msg})", path=name, line=lineno) from None
            except RecursionError:
                raise DrFactFormatError("JSON nested too deeply to read", path=name,
                                        line=lineno) from None
            if not isinstance(obj, dict):
                raise DrFactFormatError(f"expected a JSON object, got {type(obj).__name__}",
                                        path=name, line=lineno)
            yield name, lineno, obj


def _field(obj, key, name, lineno):
    if key not in obj:
        raise DrFactFormatError(f"no {key!r} key", path=name, line=lineno)
    return obj[key]


def _read_predictions(path: Path, pool, strict):
    qids: list = []
    concepts: list[list[str]] = []
    weights: list[list[float]] = []
    seen: dict = {}
    again: dict = {}
    for name, lineno, obj in _objects(path):
        q = _field(obj, "qid", name, lineno)
        if not isinstance(q, (str, int)) or isinstance(q, bool):
            raise DrFactFormatError(f"qid {q!r} is not a string", path=name, line=lineno)
        if q in seen:
            _again(q, seen, again, name, lineno, strict)
        pk = _field(obj, "predictions_K", name, lineno)
        if not isinstance(pk, dict) or not pk:
            raise DrFactFormatError("'predictions_K' must be a non-empty object "
                                    "{pool: [[concept, score], ...]}", path=name, line=lineno)
        if pool is None:
            if len(pk) != 1:
                raise DrFactFormatError(f"'predictions_K' has several pools ({', '.join(pk)}); "
                                        "choose one with pool=", path=name, line=lineno)
            items = next(iter(pk.values()))
        else:
            if str(pool) not in pk:
                raise DrFactFormatError(f"no pool {str(pool)!r} in 'predictions_K' (it has "
                                        f"{', '.join(pk)})", path=name, line=lineno)
            items = pk[str(pool)]
        if not isinstance(items, list):
            raise DrFactFormatError("predictions must be a list of [concept, score] pairs",
                                    path=name, line=lineno)
        cs, ws = [], []
        for item in items:
            if (not isinstance(item, list) or len(item) != 2 or not isinstance(item[0], str)
                    or isinstance(item[1], bool) or not isinstance(item[1], Real)):
                raise DrFactFormatError(f"question {q!r}: expected [concept, score], got "
                                        f"{json.dumps(item)[:80]}", path=name, line=lineno)
            cs.append(item[0])
            ws.append(float(item[1]))
        if q in seen:
            row = seen[q][1]
            concepts[row], weights[row] = cs, ws
            continue
        seen[q] = (lineno, len(qids))
        qids.append(q)
        concepts.append(cs)
        weights.append(ws)
    _warn_again(again, path)
    return qids, concepts, weights


def _again(q, seen, again, name, lineno, strict):
    """A question on a second line: an error if ``strict``, else noted for the warning."""
    if strict:
        raise DrFactFormatError(f"question {q!r} again (first on line {seen[q][0]})",
                                path=name, line=lineno)
    again.setdefault(q, [seen[q][0]]).append(lineno)


def _warn_again(again, path):
    if again:
        from .._warn import warn

        q, lines = next(iter(again.items()))
        n = len(again)
        warn(f"{os.fspath(path)}: {n} question{'s are' if n > 1 else ' is'} on more than one "
             f"line (the first: {q!r}, lines {', '.join(map(str, lines))}); the last line of "
             "each counts, at the place of its first, as the DrFact evaluation script reads "
             "the file", DrFactWarning)


def _read_truth(path: Path, strict):
    qids: list = []
    golds: list[list[str]] = []
    seen: dict = {}
    again: dict = {}
    for name, lineno, obj in _objects(path):
        q = _field(obj, "_id", name, lineno)
        if not isinstance(q, (str, int)) or isinstance(q, bool):
            raise DrFactFormatError(f"_id {q!r} is not a string", path=name, line=lineno)
        if q in seen:
            _again(q, seen, again, name, lineno, strict)
        answers = _field(obj, "all_answer_concepts", name, lineno)
        if not isinstance(answers, list) or not all(
                isinstance(a, dict) and isinstance(a.get("name"), str) for a in answers):
            raise DrFactFormatError(f"question {q!r}: 'all_answer_concepts' must be a list of "
                                    "objects with a string 'name'", path=name, line=lineno)
        if q in seen:
            golds[seen[q][1]] = [a["name"] for a in answers]
            continue
        seen[q] = (lineno, len(qids))
        qids.append(q)
        golds.append([a["name"] for a in answers])
    _warn_again(again, path)
    return qids, golds


def read_drfact(predictions: Path, truth: Path, *, pool: str | int | None = None,
                strict: bool = False):
    """Read a DrFact prediction file and a truth file, encoded together.

    Parameters
    ----------
    predictions : str or os.PathLike
        Prediction JSONL: ``{"qid": ..., "predictions_K": {"100": [[concept, score], ...]}}``.
    truth : str or os.PathLike
        Truth JSONL: ``{"_id": ..., "all_answer_concepts": [{"name": ...}, ...]}``.
    pool : str or int, optional
        The key of ``predictions_K`` to read; by default the only one.
    strict : bool, default False
        Raise on a question that is on two lines of a file, instead of keeping its last
        line (at its first line's place) with a :class:`DrFactWarning`, as the published
        script does.

    Returns
    -------
    (ConceptLists, ConceptLists)
        The predictions (weighted by their scores, in file order) and the gold concepts, as
        :func:`qafast.concepts.evaluate_concepts` takes them.

    Raises
    ------
    DrFactFormatError
        A line that is not JSON or lacks a key; with ``strict=True``, a question twice (with
        the line numbers).

    Warns
    -----
    DrFactWarning
        Without ``strict``, for a question on several lines.

    Examples
    --------
    >>> import json, tempfile, os
    >>> from qafast.io.drfact import read_drfact
    >>> from qafast.concepts import evaluate_concepts
    >>> d = tempfile.mkdtemp()
    >>> with open(os.path.join(d, "pred.jsonl"), "w") as f:
    ...     _ = f.write(json.dumps({"qid": "q1", "predictions_K": {"100": [
    ...         ["tree", 0.9], ["leaf", 0.8], ["sun", 0.5]]}}) + "\\n")
    >>> with open(os.path.join(d, "truth.jsonl"), "w") as f:
    ...     _ = f.write(json.dumps({"_id": "q1", "all_answer_concepts": [
    ...         {"name": "sun"}, {"name": "light"}]}) + "\\n")
    >>> pred, gold = read_drfact(os.path.join(d, "pred.jsonl"), os.path.join(d, "truth.jsonl"))
    >>> pred
    ConceptLists(1 questions, 3 weighted concepts, 4 distinct, from ...pred.jsonl)
    >>> evaluate_concepts(pred, gold, ["hit@2", "rec@3"])
    {'hit@2': 0.0, 'rec@3': 0.5}
    >>> evaluate_concepts(pred, gold, ["hit@2"], drfact=True)
    {'hit@2': 1.0}
    """
    p_qids, p_concepts, p_weights = _read_predictions(predictions, pool, strict)
    t_qids, t_golds = _read_truth(truth, strict)
    vocab: set = set()
    for cs in p_concepts:
        vocab.update(cs)
    for g in t_golds:
        vocab.update(g)
    vocabulary = sorted(vocab)
    index = {c: i for i, c in enumerate(vocabulary)}
    pred = pack_concepts(p_qids, p_concepts, p_weights, index, vocabulary, os.fspath(predictions))
    gold = pack_concepts(t_qids, t_golds, None, index, vocabulary, os.fspath(truth))
    return pred, gold
