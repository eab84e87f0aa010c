"""Readers for the SQuAD evaluation inputs: the dataset, the predictions and the no-answer
probabilities, each a JSON file (or the object already loaded).

* Dataset: ``{"version": ..., "data": [article, ...]}``, an article being
  ``{"paragraphs": [{"qas": [{"id": ..., "answers": ...}, ...]}, ...]}``. Answers are a list of
  ``{"text": ...}`` (SQuAD files) or ``{"text": [...], "answer_start": [...]}`` (Hugging Face
  ``datasets``). Everything else in the file (titles, contexts, offsets) is ignored.
* Predictions: ``{question id: answer text}``.
* No-answer probabilities: ``{question id: number}``: any number JSON gives (an integer of
  any size, a float, NaN, ``Infinity``, ``-Infinity``, ``true``/``false``), kept as it is, since
  the v2.0 script compares them as Python does.
* The Hugging Face ``evaluate`` input form (its ``squad`` and ``squad_v2`` metrics): references
  ``[{"id": ..., "answers": {"text": [...], "answer_start": [...]}}, ...]``, accepted as a
  dataset, and predictions ``[{"id": ..., "prediction_text": ..., "no_answer_probability":
  ...}, ...]`` (:func:`read_hf_predictions`).

Errors name the file (or ``<dataset>``, ``<predictions>``, ``<na_probs>`` for objects passed in)
and the question id. A malformed file raises :class:`SquadFormatError`, a ``ValueError``; an
object of the wrong type passed in from Python raises ``TypeError``.
"""

from __future__ import annotations

import functools
import json
import math
import operator
import os
import warnings
from collections.abc import Mapping
from array import array
from itertools import accumulate, chain
from typing import TYPE_CHECKING, Any, Union

from ..errors import FormatError, InputError, InputTypeError

if TYPE_CHECKING:
    import numpy as np

# numpy is imported where it is used: reading a dataset and its predictions needs none, and
# `qafast mlqa` does without it (its import took a third of the time the command may take).

__all__ = [
    "SquadDataset",
    "SquadFormatError",
    "SquadWarning",
    "is_hf_predictions",
    "read_hf_predictions",
    "read_na_probs",
    "read_squad_dataset",
    "read_squad_predictions",
]

Source = Union[str, "os.PathLike[str]"]


class SquadFormatError(FormatError):
    """A SQuAD dataset, predictions or probability file that cannot be evaluated.

    ``path`` names the file, ``qid`` the question (or None), ``line`` the 1-based line of a
    JSON syntax error (or None).
    """

    def __init__(self, message: str, *, path: str, qid: Any = None, line: int | None = None,
                 column: int | None = None) -> None:
        where = path
        if line is not None:
            where += f", line {line}" + (f", column {column}" if column is not None else "")
        if qid is not None:
            where += f", question {qid!r}"
        InputError.__init__(self, f"{where}: {message}", path=path, line=line, query=qid)
        self.path = path
        self.qid = qid
        self.line = line
        self.column = column
        self.message = message

    def __reduce__(self) -> Any:
        return (_rebuild, (self.message, self.path, self.qid, self.line, self.column))


def _rebuild(message, path, qid, line, column):
    return SquadFormatError(message, path=path, qid=qid, line=line, column=column)


class SquadWarning(UserWarning):
    """Input that the official scripts silently accept, such as predictions for unknown ids."""


class SquadDataset:
    """The questions of a SQuAD dataset in file order: ``ids[i]`` has gold ``answers[i]``.

    ``version`` is the file's ``"version"`` field (None when absent or for a bare list of
    articles) and ``source`` names where it came from. The answers may be held flat, as
    ``texts`` with question i's at ``texts[offsets[i]:offsets[i + 1]]`` (see :meth:`flat`);
    ``answers`` is then made from them when first asked for.
    """

    __slots__ = ("ids", "version", "source", "_answers", "_texts", "_offsets")

    def __init__(self, ids: list, answers: list | None, version: str | None, source: str, *,
                 texts: list | None = None, offsets=None):
        if answers is None and (texts is None or offsets is None):
            raise InputTypeError("SquadDataset needs answers, or texts and offsets")
        self.ids = ids
        self.version = version
        self.source = source
        self._answers = answers
        self._texts = texts
        self._offsets = offsets

    @property
    def answers(self) -> list:
        """Each question's list of gold answer texts."""
        if self._answers is None:
            assert self._texts is not None and self._offsets is not None
            t, off = self._texts, memoryview(self._offsets).tolist()
            self._answers = [t[a:b] for a, b in zip(off, off[1:])]
        return self._answers

    def flat(self):
        """``(texts, offsets)``: every answer text in one list, question i's at
        ``texts[offsets[i]:offsets[i + 1]]`` (offsets: int64 array)."""
        import numpy as np

        texts, off = self.flat_buffers()
        if type(off) is not np.ndarray:
            self._offsets = off = np.frombuffer(off, dtype=np.int64)
        return texts, off

    def flat_buffers(self):
        """:meth:`flat` without numpy: the offsets as any buffer of int64."""
        if self._texts is None:
            assert self._answers is not None
            self._texts = list(chain.from_iterable(self._answers))
            self._offsets = array("q", accumulate(map(len, self._answers), initial=0))
        return self._texts, self._offsets

    def __eq__(self, other) -> bool:
        if not isinstance(other, SquadDataset):
            return NotImplemented
        return (self.ids == other.ids and self.answers == other.answers
                and self.version == other.version and self.source == other.source)

    __hash__ = None  # type: ignore[assignment]  # equal datasets may differ in identity

    def __len__(self) -> int:
        return len(self.ids)

    def __repr__(self) -> str:
        return (f"SquadDataset({len(self.ids)} questions, version {self.version!r}, "
                f"from {self.source})")


def _is_path(source) -> bool:
    return isinstance(source, (str, os.PathLike))


def _load_json(source, what: str, object_hook=None):
    raw, path = read_file_bytes(source, what)
    return _parse_json(raw, path, object_hook), path


def read_file_bytes(source, what: str) -> tuple[bytes, str]:
    """``(the file's bytes, its path)``."""
    path = os.fspath(source)
    if isinstance(path, bytes):
        raise InputTypeError(f"{what} path must be str or os.PathLike[str], got bytes")
    with open(path, "rb") as f:
        return f.read(), path


def _parse_json(raw: bytes, path: str, object_hook=None):
    """json.loads of a file's bytes; a SquadFormatError naming the file and line otherwise."""
    try:
        return json.loads(raw, object_hook=object_hook)
    except json.JSONDecodeError as e:
        raise SquadFormatError(f"not valid JSON ({e.msg})", path=path, line=e.lineno,
                               column=e.colno) from None
    except UnicodeDecodeError as e:
        raise SquadFormatError(f"not UTF-8 text ({e.reason})", path=path) from None
    except RecursionError:
        raise SquadFormatError("JSON nested too deeply to read", path=path) from None


def _fail(from_file: bool, message: str, *, path: str, qid=None, type_error: bool = True):
    """The exception to raise: SquadFormatError for a file, else TypeError (a wrong type) or
    ValueError (a wrong value) for an object passed in from Python."""
    if from_file:
        return SquadFormatError(message, path=path, qid=qid)
    where = path + (f", question {qid!r}" if qid is not None else "")
    return (InputTypeError if type_error else InputError)(f"{where}: {message}")


def _type_name(x) -> str:
    return type(x).__name__


def _is_question_list(obj) -> bool:
    """A list of ``{"id", "answers"}`` questions (the references of Hugging Face's metrics)
    rather than a list of articles."""
    return (isinstance(obj, list) and len(obj) > 0 and isinstance(obj[0], Mapping)
            and "answers" in obj[0] and "paragraphs" not in obj[0])


def read_squad_dataset(source) -> SquadDataset:
    """The questions of a SQuAD dataset: a JSON file path, the loaded dict, its list of
    articles, or a list of questions ``{"id": ..., "answers": ...}`` (the references of Hugging
    Face's ``squad`` and ``squad_v2`` metrics). A :class:`SquadDataset` is returned as is.

    >>> ds = read_squad_dataset({"version": "1.1", "data": [{"paragraphs": [{"qas": [
    ...     {"id": "q1", "answers": [{"text": "Paris"}, {"text": "Paris, France"}]},
    ...     {"id": "q2", "answers": {"text": [], "answer_start": []}}]}]}]})
    >>> ds.ids, ds.answers, ds.version
    (['q1', 'q2'], [['Paris', 'Paris, France'], []], '1.1')
    """
    head = dataset_head(source)
    return head if isinstance(head, SquadDataset) else walk_articles(head)


class _Articles:
    """A dataset's articles, not walked yet: ``data`` (a list), the ``version`` field (None
    when absent), ``name`` (the file, or ``<dataset>``) and whether it came from a file."""

    __slots__ = ("data", "from_file", "name", "version")

    def __init__(self, data: list, version: str | None, name: str, from_file: bool):
        self.data, self.version, self.name, self.from_file = data, version, name, from_file


def dataset_head(source) -> SquadDataset | _Articles:
    """read_squad_dataset up to the walk over the articles: a file in the usual shape is read
    all the way (a SquadDataset); otherwise the articles, checked to be a list, are
    returned for walk_articles (or a walk of one's own that falls back on it)."""
    if isinstance(source, SquadDataset):
        return source
    from_file = _is_path(source)
    if from_file:
        raw, name = read_file_bytes(source, "dataset")
        ds = _scanned_dataset(raw, name)
        if ds is not None:
            return ds
        ds = _slim_dataset(_parse_json(raw, name, _slim_question), name)
        if ds is not None:
            return ds
        obj = _parse_json(raw, name)  # not the usual shape: read it all, and check
    else:
        obj, name = source, "<dataset>"
    if _is_question_list(obj):
        # Hugging Face references: the questions of one paragraph, as its metrics wrap them
        obj = [{"paragraphs": [{"qas": obj}]}]
    version = None
    if isinstance(obj, Mapping):
        if "data" not in obj:
            raise _fail(from_file, "a SQuAD dataset is an object with a 'data' list of articles",
                        path=name, type_error=False)
        version = obj.get("version")
        version = None if version is None else str(version)
        data = obj["data"]
    else:
        data = obj
    if not isinstance(data, list):
        raise _fail(from_file, f"'data' must be a list of articles, got {_type_name(data)}",
                    path=name)
    return _Articles(data, version, name, from_file)


def walk_articles(head: _Articles) -> SquadDataset:
    """The questions of the articles: read_squad_dataset's walk, which names the first
    question (or article, paragraph) that is malformed."""
    data, version, name, from_file = head.data, head.version, head.name, head.from_file
    ids: list = []
    answers: list = []
    flat = _flatten_flat(data)
    if flat is not None:
        ids, texts, offsets = flat
        return SquadDataset(ids, None, version, name, texts=texts, offsets=offsets)
    try:
        all_str = _flatten(data, ids, answers)
    except (KeyError, TypeError, AttributeError):
        ids.clear()
        answers.clear()
        _flatten_checked(data, ids, answers, name, from_file)
        raise AssertionError("unreachable: the checked pass found no error") from None
    if all_str:
        return SquadDataset(ids, answers, version, name)
    if set(map(type, ids)) - {str}:
        qid = next(q for q in ids if type(q) is not str)
        raise _fail(from_file, f"question ids must be strings, got {_type_name(qid)}",
                    path=name, qid=qid)
    if set(map(type, chain.from_iterable(answers))) - {str}:
        for qid, texts in zip(ids, answers):
            for t in texts:
                if type(t) is not str:
                    raise _fail(from_file, f"answer texts must be strings, got {_type_name(t)}",
                                path=name, qid=qid)
    return SquadDataset(ids, answers, version, name)


_text = operator.itemgetter("text")


class _Question(tuple):
    """(id, answer texts) of one question, made while the JSON is parsed."""

    __slots__ = ()


def _slim_question(obj: dict):
    # json object_hook, called innermost first: each question becomes (id, texts) as soon as
    # it is parsed, so the file's contexts, question texts and answer objects are freed at
    # once instead of all being held (the official scripts hold the whole file). Anything
    # unexpected is left as it is, and _slim_dataset then declines.
    if "answers" in obj and "id" in obj:
        a = obj["answers"]
        try:
            if a.__class__ is list:
                return _Question((obj["id"], list(map(_text, a))))
            if a.__class__ is dict and a["text"].__class__ is list:
                return _Question((obj["id"], list(a["text"])))
        except (KeyError, TypeError):
            pass
        return obj
    if "qas" in obj:
        return {"qas": obj["qas"]}
    return obj


#: json's own string decoder, which the scans call for long strings with escapes
_SCANSTRING = json.decoder.scanstring  # type: ignore[attr-defined]


def _scanned_dataset(raw: bytes, name: str) -> SquadDataset | None:
    """The SquadDataset of a file's bytes read by the compiled scan, which builds only the
    ids and answer texts; None where the file is not of the plain form it reads (then
    json.loads reads it, and says where it is malformed)."""
    try:
        from .._kernels import squad_scan_dataset
    except ImportError:  # pragma: no cover - a tree without the compiled kernels
        return None
    ids: list = []
    texts: list = []
    scanned = squad_scan_dataset(raw, ids, texts, _SCANSTRING, False)   # (without numpy)
    if scanned is None:
        return None
    offsets, _, version = scanned
    return SquadDataset(ids, None, version, name, texts=texts, offsets=offsets)


def _slim_dataset(obj, name: str):
    """The SquadDataset of a file parsed with _slim_question, or None if it is not the usual
    shape (then the caller parses it again and checks it step by step)."""
    if obj.__class__ is not dict or obj.get("data").__class__ is not list:
        return None
    ids: list = []
    answers: list = []
    add_id, add_answers = ids.append, answers.append
    try:
        for article in obj["data"]:
            for paragraph in article["paragraphs"]:
                for qa in paragraph["qas"]:
                    if qa.__class__ is not _Question:
                        return None
                    add_id(qa[0])
                    add_answers(qa[1])
    except (KeyError, TypeError, AttributeError):
        return None
    if set(map(type, ids)) - {str} or set(map(type, chain.from_iterable(answers))) - {str}:
        return None
    version = obj.get("version")
    return SquadDataset(ids, answers, None if version is None else str(version), name)


def _flatten_flat(data):
    """``(ids, texts, offsets)`` of a well-formed dataset whose ids and texts are all str,
    with no list made per question; None otherwise (then the caller's passes say why)."""
    try:
        from .._kernels import squad_flatten_flat
    except ImportError:  # pragma: no cover - a tree without the compiled kernels
        return None
    ids: list = []
    texts: list = []
    try:
        all_str, offsets = squad_flatten_flat(data, ids, texts)
    except (KeyError, TypeError, AttributeError):
        return None
    return (ids, texts, offsets) if all_str else None


def _flatten(data, ids, answers) -> bool:
    """The fast pass, either answer layout: a structural problem raises and the checked pass
    says what it is. True when every id and answer text is exactly a str."""
    try:
        from .._kernels import squad_flatten
    except ImportError:  # pragma: no cover - a tree without the compiled kernels
        _flatten_python(data, ids, answers)
        return not (set(map(type, ids)) - {str}
                    or set(map(type, chain.from_iterable(answers))) - {str})
    return squad_flatten(data, ids, answers)


def _flatten_python(data, ids, answers) -> None:
    # The pure-Python form of _kernels.squad_flatten.
    add_id, add_answers = ids.append, answers.append
    for article in data:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                add_id(qa["id"])
                a = qa["answers"]
                if a.__class__ is list:
                    add_answers(list(map(_text, a)))
                elif isinstance(a, Mapping):
                    t = a["text"]
                    if not isinstance(t, list):
                        raise TypeError
                    add_answers(list(t))
                else:
                    raise TypeError


def _flatten_checked(data, ids, answers, name, from_file) -> None:
    def need(obj, key, kind, where, qid=None):
        if not isinstance(obj, Mapping):
            raise _fail(from_file, f"{where} must be an object, got {_type_name(obj)}",
                        path=name, qid=qid)
        if key not in obj:
            raise _fail(from_file, f"{where} has no {key!r}", path=name, qid=qid,
                        type_error=False)
        value = obj[key]
        if kind is not None and not isinstance(value, kind):
            raise _fail(from_file, f"{where}'s {key!r} must be a {kind.__name__}, got "
                        f"{_type_name(value)}", path=name, qid=qid)
        return value

    for ai, article in enumerate(data):
        for pi, paragraph in enumerate(need(article, "paragraphs", list, f"article {ai}")):
            for qi, qa in enumerate(need(paragraph, "qas", list,
                                         f"article {ai}, paragraph {pi}")):
                where = f"article {ai}, paragraph {pi}, question {qi}"
                qid = need(qa, "id", None, where)
                a = need(qa, "answers", None, "the question", qid)
                if isinstance(a, list):
                    texts = [need(x, "text", None, f"answer {i}", qid) for i, x in enumerate(a)]
                elif isinstance(a, Mapping):
                    texts = need(a, "text", list, "'answers'", qid)
                else:
                    raise _fail(from_file, "'answers' must be a list of {'text': ...} or "
                                f"{{'text': [...]}}, got {_type_name(a)}", path=name, qid=qid)
                ids.append(qid)
                answers.append(list(texts))


def read_squad_predictions(source) -> dict:
    """``{question id: answer text}`` from a JSON file path or a mapping (returned as a dict).

    Every answer must be a string (``""`` predicts "no answer").

    >>> read_squad_predictions({"q1": "Paris", "q2": ""})
    {'q1': 'Paris', 'q2': ''}
    """
    preds, check = predictions_unchecked(source)
    check()
    return preds


def predictions_unchecked(source):
    """``(predictions, check)``: read_squad_predictions without its pass over the values,
    which ``check()`` makes (raising for the first one that is not a str). A caller that
    sees every value itself may call it only if it found one that is not a str."""
    from_file = _is_path(source)
    if from_file:
        raw, name = read_file_bytes(source, "predictions")
        obj = _scanned_predictions(raw)
        if obj is None:
            obj = _parse_json(raw, name)
    else:
        obj, name = source, "<predictions>"
    if not isinstance(obj, Mapping):
        hint = (" (or, from Python, be Hugging Face's list of {'id': ..., 'prediction_text': "
                "...} dicts)" if isinstance(obj, list) else "")
        raise _fail(from_file, f"predictions must map question ids to answer texts{hint}, got "
                    f"{_type_name(obj)}", path=name)
    preds = obj if type(obj) is dict else dict(obj)

    def check() -> None:
        if not _values_str(preds):
            qid, v = next((q, v) for q, v in preds.items() if type(v) is not str)
            raise _fail(from_file, f"the prediction must be a string, got {_type_name(v)} "
                        f"{v!r:.40}", path=name, qid=qid)

    return preds, check


def _scanned_predictions(raw: bytes) -> dict | None:
    """The predictions dict of a file's bytes read by the compiled scan; None where the file
    is not a plain object of strings (then json.loads reads it)."""
    try:
        from .._kernels import squad_scan_predictions
    except ImportError:  # pragma: no cover - a tree without the compiled kernels
        return None
    return squad_scan_predictions(raw, _SCANSTRING)


def _values_str(d: dict) -> bool:
    """Every value of ``d`` is exactly a str."""
    try:
        from .._kernels import squad_dict_values_str
    except ImportError:  # pragma: no cover - a tree without the compiled kernels
        return not set(map(type, d.values())) - {str}
    return squad_dict_values_str(d)


def read_na_probs(source) -> dict:
    """``{question id: probability of no answer}`` from a JSON file path or a mapping.

    Values must be numbers: what JSON gives (int, float, bool, and the NaN, Infinity and
    -Infinity Python's json reads), or numpy scalars. They are returned unchanged, since the
    v2.0 script compares them as Python does (an integer beyond 2**53 exactly, NaN never
    greater or smaller than anything, ``True`` as 1) and prints them back as they are.

    >>> read_na_probs({"q1": 0.25, "q2": 1})
    {'q1': 0.25, 'q2': 1}
    """
    return na_probs_with_values(source)[0]


#: Integers up to this magnitude are exact as float64; beyond, two of them (or one and a
#: float) can compare differently once converted.
_EXACT_INT = 2 ** 53


def na_probs_with_values(source, ids=None):
    """``(probabilities, values, aligned)``: read_na_probs, with ``aligned`` True when the
    keys are ``ids`` (a list) in order. ``values`` is a float64 array of the values in dict
    order when float64 orders and compares them exactly as Python does, else None (a NaN, an
    integer beyond 2**53, a long double): the caller then compares the values themselves."""
    from_file = _is_path(source)
    if from_file:
        obj, name = _load_json(source, "na_probs")
    else:
        obj, name = source, "<na_probs>"
    if not isinstance(obj, Mapping):
        raise _fail(from_file, "no-answer probabilities must map question ids to numbers, got "
                    f"{_type_name(obj)}", path=name)
    probs = obj if type(obj) is dict else dict(obj)
    try:
        from .._kernels import squad_probs_values
    except ImportError:  # pragma: no cover - a tree without the compiled kernels
        squad_probs_values = None
    import numpy as np

    if squad_probs_values is not None:
        values = np.empty(len(probs), dtype=np.float64)
        ok, aligned = squad_probs_values(probs, ids, values)
        if ok:
            # finite floats and ints: exact as float64 unless an int is beyond 2**53
            if (len(values) and float(np.abs(values).max()) >= _EXACT_INT
                    and not float64_stands_in(probs.values())):
                values = None
            return probs, values, aligned
    _check_na_values(probs, from_file, name)
    aligned = (type(ids) is list and len(ids) == len(probs) and list(probs) == ids)
    if not float64_stands_in(probs.values()):
        return probs, None, aligned
    return probs, np.fromiter(probs.values(), np.float64, len(probs)), aligned


@functools.cache
def _number_types() -> tuple:
    import numpy as np

    return (int, float, np.floating, np.integer, np.bool_)


def _check_na_values(probs: dict, from_file: bool, name: str) -> None:
    if set(map(type, probs.values())) - {float, int, bool}:
        for qid, v in probs.items():
            if not isinstance(v, _number_types()):
                raise _fail(from_file, "the no-answer probability must be a number, got "
                            f"{_type_name(v)} {v!r:.40}", path=name, qid=qid)


def float64_stands_in(values) -> bool:
    """True when float64 copies of these numbers order and compare (with each other, and with
    any float) exactly as the numbers do in Python: no NaN (Python's sort puts NaN where its
    position and the sort algorithm leave it), no integer beyond 2**53 in magnitude, no float
    wider than float64."""
    import numpy as np

    for v in values:
        t = type(v)
        if t is float:
            if v != v:
                return False
        elif t is int:
            if not -_EXACT_INT <= v <= _EXACT_INT:
                return False
        elif t is bool or t is np.bool_:
            continue
        elif isinstance(v, np.integer):
            if not -_EXACT_INT <= int(v) <= _EXACT_INT:
                return False
        elif isinstance(v, (np.float64, np.float32, np.float16)):
            if v != v:
                return False
        else:            # long double, or a subclass of int/float that may compare its own way
            return False
    return True


def is_hf_predictions(obj) -> bool:
    """Predictions in Hugging Face ``evaluate``'s form: a list of ``{"id": ...,
    "prediction_text": ...}`` (an empty list counts too)."""
    if not isinstance(obj, (list, tuple)):
        return False
    return not obj or isinstance(obj[0], Mapping) and "prediction_text" in obj[0]


def read_hf_predictions(items, *, float32: bool = True):
    """``(predictions, probabilities)`` from Hugging Face ``evaluate``'s predictions:
    ``[{"id": ..., "prediction_text": ..., "no_answer_probability": ...}, ...]``.

    ``probabilities`` is None when no item has ``no_answer_probability`` (the ``squad``
    metric's form); otherwise every item needs one (``squad_v2``). A repeated id keeps its first
    place and its last values, as the metrics' dict comprehensions do. With ``float32`` the
    probabilities are rounded to float32 and widened back to float, as ``squad_v2``'s input
    features store them (0.3 becomes 0.30000001192092896).

    >>> read_hf_predictions([{"id": "q1", "prediction_text": "Paris",
    ...                       "no_answer_probability": 0.5}])
    ({'q1': 'Paris'}, {'q1': 0.5})
    """
    name = "<predictions>"
    preds: dict = {}
    probs: dict = {}
    with_prob = None
    for i, item in enumerate(items):
        where = f"{name}, item {i}"
        if not isinstance(item, Mapping):
            raise InputTypeError(f"{where}: a prediction is a dict with 'id' and "
                                 f"'prediction_text', got {_type_name(item)}")
        for key in ("id", "prediction_text"):
            if key not in item:
                raise InputError(f"{where}: the prediction has no {key!r}")
        qid, text = item["id"], item["prediction_text"]
        if type(qid) is not str:
            raise InputTypeError(f"{where}: the question id must be a string, got "
                                 f"{_type_name(qid)} {qid!r:.40}")
        if type(text) is not str:
            raise InputTypeError(f"{where}, question {qid!r}: the prediction_text must be a "
                                 f"string, got {_type_name(text)} {text!r:.40}")
        has = "no_answer_probability" in item
        if with_prob is None:
            with_prob = has
        elif has != with_prob:
            raise InputError(f"{where}, question {qid!r}: "
                             + ("no 'no_answer_probability', which the earlier items have"
                                if with_prob else "a 'no_answer_probability', which the "
                                "earlier items lack"))
        preds[qid] = text
        if has:
            p = item["no_answer_probability"]
            if not isinstance(p, _number_types()):
                raise InputTypeError(f"{where}, question {qid!r}: the no_answer_probability "
                                     f"must be a number, got {_type_name(p)} {p!r:.40}")
            probs[qid] = _as_float32(p) if float32 else p
    return preds, (probs if with_prob else None)


def _as_float32(x) -> float:
    """``float(x)`` rounded to float32 and widened back (out of float32 range: infinite)."""
    import numpy as np

    with np.errstate(over="ignore"):
        try:
            return float(np.float32(float(x)))
        except OverflowError:        # an int beyond float64: float() refuses it
            return math.inf if x > 0 else -math.inf


def warn_unknown(ids, known, what: str, source: str) -> None:
    """Warn (:class:`SquadWarning`) about the ``ids`` of ``what`` that are not in ``known``
    (a set or dict of the dataset's ids); the warning points at the caller outside qafast."""
    if isinstance(ids, Mapping) and not ids.keys() - known:   # the usual case, at C speed
        return
    unknown = [q for q in ids if q not in known]
    if not unknown:
        return
    shown = ", ".join(repr(q) for q in unknown[:5]) + (", ..." if len(unknown) > 5 else "")
    warnings.warn(f"{source}: {len(unknown)} {what} for question ids the dataset lacks, "
                  f"ignored: {shown}", SquadWarning, stacklevel=_outside_stacklevel())


def _outside_stacklevel() -> int:
    """The stacklevel of the first frame outside the qafast package."""
    import sys
    from types import FrameType

    # warn_unknown's caller, stacklevel 2 of warnings.warn there
    frame: FrameType | None = sys._getframe(2)
    level = 2
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(pkg):
        frame = frame.f_back
        level += 1
    return level


def warn_squad(message: str) -> None:
    """Warn (:class:`SquadWarning`), pointing at the caller outside qafast."""
    warnings.warn(message, SquadWarning, stacklevel=_outside_stacklevel())
