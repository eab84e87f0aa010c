"""Reader for BioASQ Task B JSON (golden files and Phase B submissions).

Both are ``{"questions": [{"id": ..., "type": ..., "exact_answer": ...}, ...]}``. Types are
``"factoid"``, ``"list"``, ``"yesno"`` and ``"summary"``; only the first three have exact
answers. The reader checks the structure and returns the questions by id; how an
``exact_answer`` is read (synonym groups in gold, the first synonym of each submitted answer)
is up to :func:`qafast.factoid.evaluate_bioasq`.

Input that the official tool accepts but that may not mean what its writer meant (a question
id twice in a submission, an empty synonym group, ...) is scored as the tool scores it, with a
:class:`BioasqWarning`; ``warnings.simplefilter("error", BioasqWarning)`` makes it an error.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import IO, Any, Union

from ..errors import FormatError, InputError, InputTypeError

__all__ = ["BioasqFormatError", "BioasqWarning", "read_bioasq"]

Source = Union[str, "os.PathLike[str]", IO[str], IO[bytes], Mapping]


class BioasqFormatError(FormatError):
    """A malformed BioASQ JSON document; ``path`` names the source, ``question`` the question
    id (or index) at fault, when there is one."""

    def __init__(self, message: str, *, path: str, question: Any = None) -> None:
        where = path if question is None else f"{path}, question {question!r}"
        InputError.__init__(self, f"{where}: {message}", path=path, query=question)
        self.path = path
        self.question = question
        self.message = message


class BioasqWarning(UserWarning):
    """Input the official BioASQ tool reads in its own way, scored as the tool scores it."""


def read_bioasq(source: Source, *, repeated: str = "error") -> dict[str, dict]:
    """Read a BioASQ golden file or submission.

    Parameters
    ----------
    source : path, file object or dict
        The JSON document, or the already parsed ``{"questions": [...]}``.
    repeated : {"error", "first"}, default="error"
        What a question id that appears twice does: ``"error"`` raises; ``"first"`` keeps
        the first entry, as the official tool scores a submission, with a
        :class:`BioasqWarning`.

    Returns
    -------
    dict
        ``{question_id: {"type": str or None, "exact_answer": value or None}}`` in file order.

    Raises
    ------
    BioasqFormatError
        Not JSON, no ``questions`` list, a question without a string ``id``, a repeated id
        (with ``repeated="error"``).

    Examples
    --------
    >>> read_bioasq({"questions": [{"id": "q1", "type": "yesno", "exact_answer": "yes"}]})
    {'q1': {'type': 'yesno', 'exact_answer': 'yes'}}
    """
    if repeated not in ("error", "first"):
        raise InputError(f"The 'repeated' parameter must be 'error' or 'first'. Got "
                         f"{repeated!r} instead.")
    if isinstance(source, Mapping):
        doc, path = source, "<dict>"
    elif hasattr(source, "read"):
        path = str(getattr(source, "name", "<file>"))
        doc = _loads(source.read(), path)
    else:
        if not isinstance(source, (str, os.PathLike)):
            raise InputTypeError(f"expected a path, a file object or a dict, got "
                                 f"{type(source).__name__}")
        path = os.fspath(source)
        if not isinstance(path, str):
            raise InputTypeError(f"path must be str or os.PathLike[str], got bytes {path!r:.60}")
        with open(path, "rb") as f:
            doc = _loads(f.read(), path)
    if not isinstance(doc, Mapping) or not isinstance(doc.get("questions"), list):
        raise BioasqFormatError('expected {"questions": [...]}', path=path)
    out: dict[str, dict] = {}
    again: dict[str, int] = {}
    for i, q in enumerate(doc["questions"]):
        if not isinstance(q, Mapping):
            raise BioasqFormatError(f"is a {type(q).__name__}, not an object", path=path,
                                    question=i)
        qid = q.get("id")
        if not isinstance(qid, str):
            raise BioasqFormatError(f"has no string 'id' (got {qid!r})", path=path, question=i)
        qtype = q.get("type")
        if qtype is not None and not isinstance(qtype, str):
            raise BioasqFormatError(f"'type' is {qtype!r}, not a string", path=path,
                                    question=qid)
        if qid in out:
            if repeated == "error":
                raise BioasqFormatError("appears twice", path=path, question=qid)
            again[qid] = again.get(qid, 1) + 1
            continue
        out[qid] = {"type": qtype, "exact_answer": q.get("exact_answer")}
    if again:
        from .._warn import shown, warn

        warn(f"{path}: {len(again)} question id{'s' if len(again) > 1 else ''} "
             f"({shown(again)}) appear{'' if len(again) > 1 else 's'} more than once; the "
             "first entry of each is scored, as the official BioASQ tool does",
             BioasqWarning)
    return out


def _loads(data, path: str):
    try:
        return json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise BioasqFormatError(f"not JSON: {e}", path=path) from None
    except RecursionError:
        raise BioasqFormatError("JSON nested too deeply to read", path=path) from None
