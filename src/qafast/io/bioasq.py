"""Reader for BioASQ Task B JSON (golden files and Phase B submissions).

Both are ``{"questions": [{"id": ..., "type": ..., "exact_answer": ...}, ...]}``. Types are
``"factoid"``, ``"list"``, ``"yesno"`` and ``"summary"``; only the first three have exact
answers. The reader checks the structure and returns the questions by id; how an
``exact_answer`` is read (synonym groups in gold, the first synonym of each submitted answer)
is up to :func:`qafast.factoid.evaluate_bioasq`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import IO, Any, Union

__all__ = ["BioasqFormatError", "read_bioasq"]

Source = Union[str, "os.PathLike[str]", IO[str], IO[bytes], Mapping]


class BioasqFormatError(ValueError):
    """A malformed BioASQ JSON document; ``path`` names the source, ``question`` the question
    id (or index) at fault, when there is one."""

    def __init__(self, message: str, *, path: str, question: Any = None) -> None:
        where = path if question is None else f"{path}, question {question!r}"
        super().__init__(f"{where}: {message}")
        self.path = path
        self.question = question
        self.message = message


def read_bioasq(source: Source) -> dict[str, dict]:
    """Read a BioASQ golden file or submission.

    Parameters
    ----------
    source : path, file object or dict
        The JSON document, or the already parsed ``{"questions": [...]}``.

    Returns
    -------
    dict
        ``{question_id: {"type": str or None, "exact_answer": value or None}}`` in file order.

    Raises
    ------
    BioasqFormatError
        Not JSON, no ``questions`` list, a question without a string ``id``, a repeated id.

    Examples
    --------
    >>> read_bioasq({"questions": [{"id": "q1", "type": "yesno", "exact_answer": "yes"}]})
    {'q1': {'type': 'yesno', 'exact_answer': 'yes'}}
    """
    if isinstance(source, Mapping):
        doc, path = source, "<dict>"
    elif hasattr(source, "read"):
        path = str(getattr(source, "name", "<file>"))
        doc = _loads(source.read(), path)
    else:
        path = os.fspath(source)
        with open(path, "rb") as f:
            doc = _loads(f.read(), path)
    if not isinstance(doc, Mapping) or not isinstance(doc.get("questions"), list):
        raise BioasqFormatError('expected {"questions": [...]}', path=path)
    out: dict[str, dict] = {}
    for i, q in enumerate(doc["questions"]):
        if not isinstance(q, Mapping):
            raise BioasqFormatError(f"is a {type(q).__name__}, not an object", path=path,
                                    question=i)
        qid = q.get("id")
        if not isinstance(qid, str):
            raise BioasqFormatError(f"has no string 'id' (got {qid!r})", path=path, question=i)
        if qid in out:
            raise BioasqFormatError("appears twice", path=path, question=qid)
        qtype = q.get("type")
        if qtype is not None and not isinstance(qtype, str):
            raise BioasqFormatError(f"'type' is {qtype!r}, not a string", path=path,
                                    question=qid)
        out[qid] = {"type": qtype, "exact_answer": q.get("exact_answer")}
    return out


def _loads(data, path: str):
    try:
        return json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise BioasqFormatError(f"not JSON: {e}", path=path) from None
