"""DROP, exactly as AllenAI's official ``drop_eval.py`` scores it.

:func:`drop` returns the script's two numbers under its output keys (``global_em``,
``global_f1``, bit-identical floats) and, if asked, its per-type breakdown;
:func:`drop_per_question` gives every question's exact match, F1 and type; :func:`drop_metrics`
scores one prediction against one gold answer (the script's ``get_metrics``); ``qafast drop
--gold_path G --prediction_path P`` prints what the script prints. The rules are in
:mod:`qafast.reference.drop`. Each distinct span is normalized once and becomes a bag of
token ids; a compiled kernel pairs the bags (the assignment SciPy's ``linear_sum_assignment``
finds, computed without SciPy) and takes the maxima. SciPy is not needed. Files are read by
compiled scanners that build no object for what is not scored (passages, questions); a file
they do not take is read by json.loads, as the script reads it. The scores and their means
need no numpy (the kernels sum as numpy.mean sums): ``qafast drop`` never imports it, and the
functions returning arrays import it when called.
"""

from __future__ import annotations

import json
import os
import sys
from array import array
from typing import Any

from . import _kernels
from ._gc import gc_paused
from ._json_scan import scan_skip
from ._kept_scores import KeptScores
from .errors import FormatError, InputError, InputTypeError
from .io._text import load_json
from .reference import drop as _ref

__all__ = ["DropMetrics", "drop", "drop_metrics", "drop_per_question"]

#: The answer types, in the order of their codes in the kernel (-1 is "no gold answer kept").
KINDS = ("number", "span", "spans", "date")
_KIND_CODE = {k: i for i, k in enumerate(KINDS)}


class _Normalizer:
    """(normalized string, its tokens, whether each is a number) by the specification's
    rules, each distinct piece normalized once: the vocabulary's way for spans with
    characters other than printable ASCII."""

    def __init__(self) -> None:
        self.pieces: dict = {}
        self.numbers: dict = {}

    def __call__(self, span: str):
        pieces = self.pieces
        out = []
        # re.split(" |-") cuts where replacing "-" by " " and splitting on " " does
        for raw in span.replace("-", " ").split(" "):
            piece = pieces.get(raw)
            if piece is None:
                piece = pieces[raw] = _ref.normalize_piece(raw)
            if piece:
                out.append(piece)
        norm = " ".join(out)
        tokens = norm.split()
        numbers = self.numbers
        flags = bytearray()
        for t in tokens:
            flag = numbers.get(t)
            if flag is None:
                flag = numbers[t] = _ref.is_number(t)
            flags.append(flag)
        return norm, tokens, flags


def _where(passage, qid) -> str:
    return f"passage {passage!r}, question {qid!r}"


def _no_field(qa, passage, source: str):
    """Raise the error for an entry of qa_pairs without a query_id or an answer."""
    if not isinstance(qa, dict) or "query_id" not in qa:
        raise InputError(f"{source}: passage {passage!r}: a question without a query_id")
    qid = qa["query_id"]
    raise InputError(f"{source}: {_where(passage, qid)}: no answer", query=qid,
                     field="answer")


def _answer_strings(answer, passage, qid, field: str, source: str):
    """The script's ``answer_json_to_strings``, with a qafast error where it would crash."""
    where = _where(passage, qid)
    if not isinstance(answer, dict):
        raise InputError(f"{source}: {where}: {field} must be an object with a number, spans "
                         f"or date, got {type(answer).__name__}", query=qid, field=field)
    number = answer.get("number")
    if number:
        return (str(number),), "number"
    spans = answer.get("spans")
    if spans:
        try:
            strings = tuple(spans)
        except TypeError:
            raise InputError(f"{source}: {where}: {field}'s spans must be a list of strings",
                             query=qid, field=field) from None
        for s in strings:
            if not isinstance(s, str):
                raise InputError(f"{source}: {where}: {field}'s spans must be strings, got "
                                 f"{type(s).__name__}", query=qid, field=field)
        return strings, "span" if len(strings) == 1 else "spans"
    if "date" in answer:
        date = answer["date"]
        try:
            return ("{} {} {}".format(date["day"], date["month"], date["year"]),), "date"
        except (KeyError, TypeError, IndexError):
            raise InputError(f"{source}: {where}: {field}'s date must have a day, a month and "
                             "a year", query=qid, field=field) from None
    raise InputError(f"{source}: {where}: {field} has no number, spans or date", query=qid,
                     field=field)


def _load(source, what: str):
    """A JSON file read as the script reads it, or the object itself; the gold file's
    passages and questions, never scored, are skipped by the scanner where it can."""
    if what == "gold file" and isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        try:
            with open(path, "rb") as f:
                text = scan_skip(f.read(), _kernels.JSON_SKIP_DROP)
        except OSError:
            text = None   # load_json reads it again and names the error
        if text is not None:
            try:
                return json.loads(text), path
            except (ValueError, RecursionError) as e:
                raise FormatError(f"not a JSON {what}: {e}", path=path) from None
    return load_json(source, what)


#: json.loads's own string decoder, for the scanners' long strings with escapes
_SCANSTRING = json.decoder.scanstring  # type: ignore[attr-defined]

#: code -> type name; code -1 (the last) is None: no gold answer kept
_NAMES = KINDS + (None,)


class _Scored:
    """Every question's id, scores, type code (an index of ``_NAMES``) and whether it was
    predicted, in the gold file's order: the scores and codes are float64 and int8 buffers
    (array.array, or numpy arrays from DropMetrics), ``predicted`` a sequence of 0/1."""

    __slots__ = ("codes", "em", "f1", "ids", "predicted")

    def __init__(self, ids, em, f1, codes, predicted):
        self.ids, self.em, self.f1, self.codes, self.predicted = ids, em, f1, codes, predicted

    @property
    def kinds(self) -> list:
        return [_NAMES[c] for c in self.codes.tolist()]


def _score(gold, predictions) -> _Scored:

    # no cyclic collection while the JSON and the vocabulary make millions of objects (each
    # collection would walk them all, for nothing: they hold no cycles); see _gc.gc_paused
    with gc_paused():
        return _score_paused(gold, predictions)


def _read_bytes(source) -> bytes | None:
    """The bytes of a file named by ``source``, or None (not a path, or unreadable: the json
    path reads it again and names the error)."""
    if not isinstance(source, (str, os.PathLike)):
        return None
    try:
        with open(os.fspath(source), "rb") as f:
            return f.read()
    except OSError:
        return None


def _scan_files(gold, predictions, bags, lists) -> bool:
    """The walk straight from the files' bytes, where the compiled scanners take them: True
    with ``lists`` filled, or False (lists to be cleared) for the json path to read them."""
    raw_gold = _read_bytes(gold)
    if raw_gold is None:
        return False
    if type(predictions) is not dict:
        raw = _read_bytes(predictions)
        predictions = _kernels.drop_scan_predictions(raw, _SCANSTRING) if raw else None
        if predictions is None:
            return False
    return _kernels.drop_scan_gold(raw_gold, predictions, bags, _SCANSTRING, *lists)


def _score_paused(gold, predictions) -> _Scored:
    bags = _kernels.DropVocab(_Normalizer())
    # the scanner appends to arrays (the offsets and bag ids as int64, the blank flags and
    # type codes as bytes); `missing` maps a question's index to its type code where it
    # has no prediction
    scanned: tuple = ([], {}, array("q", [0]), array("q"), array("q"), array("q", [0]),
                      array("q"), array("B"), array("b"), array("q", [0]))
    if _scan_files(gold, predictions, bags, scanned):
        return _kernel_scores(bags, *scanned)
    # the json path, from empty lists and a new vocabulary
    lists: tuple = ([], {}, [0], [], [], [0], [], [], [], [0])
    bags = _kernels.DropVocab(_Normalizer())
    _load_and_walk(gold, predictions, bags, lists)
    return _kernel_scores(bags, *lists)


def _load_and_walk(gold, predictions, bags, lists) -> None:
    """The walk over the loaded JSON (the files read by json.loads, or the objects given)."""
    gold, gsrc = _load(gold, "gold file")
    predictions, psrc = _load(predictions, "predictions")
    if not isinstance(gold, dict):
        raise InputTypeError(f"{gsrc}: the gold file must be an object of passages, got "
                             f"{type(gold).__name__}")
    if not isinstance(predictions, dict):
        raise InputTypeError(f"{psrc}: the predictions must be an object {{query id: "
                             f"answer}}, got {type(predictions).__name__}")
    if not (type(gold) is dict and type(predictions) is dict
            and _kernels.drop_walk(gold, predictions, bags, *lists)):
        for seq in lists:
            seq.clear()
        for offsets in (lists[2], lists[5], lists[9]):   # pred_off, gold_off, q_off
            offsets.append(0)
        _walk(gold, predictions, gsrc, psrc, bags, *lists)


def _typed(code: str, seq) -> array:
    """``seq`` as an array of ``code`` (itself where it already is one)."""
    return seq if type(seq) is array and seq.typecode == code else array(code, seq)


def _kernel_scores(bags, ids, missing_kinds, pred_off, pred_bags, pair_pred, gold_off,
                   gold_bags, gold_blank, gold_kind, q_off) -> _Scored:
    n_q = len(ids)
    n_pairs = len(pair_pred)
    pair_em = array("d", bytes(8 * n_pairs))
    pair_f1 = array("d", bytes(8 * n_pairs))
    q_em = array("d", bytes(8 * n_q))
    q_f1 = array("d", bytes(8 * n_q))
    q_kind = array("b", bytes(n_q))
    _kernels.drop_score(
        array("i", bags.tok), array("q", bags.off), bytes(bags.numbers) or b"\0",
        _typed("q", pred_off), _typed("q", pred_bags), _typed("q", pair_pred),
        _typed("q", gold_off), _typed("q", gold_bags), _typed("B", gold_blank),
        _typed("b", gold_kind), _typed("q", q_off), pair_em, pair_f1, q_em, q_f1, q_kind)
    predicted_flags = bytearray(b"\1") * n_q
    for q, code in missing_kinds.items():
        q_em[q] = q_f1[q] = 0.0
        predicted_flags[q] = 0
        q_kind[q] = code
    return _Scored(ids, q_em, q_f1, q_kind, predicted_flags)



def _walk(gold, predictions, gsrc, psrc, bags, ids, missing_kinds, pred_off, pred_bags, pair_pred,
          gold_off, gold_bags, gold_blank, gold_kind, q_off) -> None:
    """The walk over the gold file in Python: every shape the script reads, and a qafast
    error naming the place for those it crashes on (the kernel's walk takes the usual
    shapes faster and hands the others here)."""
    bag = bags.bag
    span_bag = bags.of_span.get
    # bound methods: the walk below runs once per question and per gold answer
    ids_append, pred_append, pred_off_append = ids.append, pred_bags.append, pred_off.append
    pair_append, gold_append, gold_off_append = (pair_pred.append, gold_bags.append,
                                                 gold_off.append)
    blank_append, kind_append, q_off_append = (gold_blank.append, gold_kind.append,
                                               q_off.append)
    span_code, spans_code, number_code = _KIND_CODE["span"], _KIND_CODE["spans"], 0
    k = -1
    for pkey, passage in gold.items():
        try:
            qa_pairs = passage["qa_pairs"]
        except (KeyError, TypeError, IndexError):
            raise InputError(f"{gsrc}: passage {pkey!r} has no qa_pairs list") from None
        if not isinstance(qa_pairs, list):
            raise InputError(f"{gsrc}: passage {pkey!r}: qa_pairs must be a list")
        for qa in qa_pairs:
            try:
                qid = qa["query_id"]
                first = qa["answer"]
            except (KeyError, TypeError, IndexError):
                _no_field(qa, pkey, gsrc)
            try:
                present = qid in predictions
            except TypeError:
                raise InputError(f"{gsrc}: {_where(pkey, qid)}: a query_id must be a string",
                                 query=qid) from None
            if not present:
                kind = (_answer_strings(first, pkey, qid, "answer", gsrc)[1] if first
                        else "number")
                missing_kinds[len(ids)] = _KIND_CODE[kind]
                ids_append(qid)
                q_off_append(len(pair_pred))
                continue
            ids_append(qid)
            predicted = predictions[qid]
            if type(predicted) is str:
                b = span_bag(predicted)
                pred_append(bag(predicted) if b is None else b)
            elif isinstance(predicted, (list, tuple)):
                for text in predicted:
                    if not isinstance(text, str):
                        raise InputError(f"{psrc}: question {qid!r}: a prediction is a string "
                                         f"or a list of strings, got a {type(text).__name__} "
                                         "in the list", query=qid)
                    b = span_bag(text)
                    pred_append(bag(text) if b is None else b)
            elif isinstance(predicted, str):
                pred_append(bag(predicted))
            else:
                raise InputError(f"{psrc}: question {qid!r}: a prediction is a string or a "
                                 f"list of strings, got {type(predicted).__name__}", query=qid)
            k += 1
            pred_off_append(len(pred_bags))
            validated = qa.get("validated_answers")
            if validated:
                if not isinstance(validated, list):
                    raise InputError(f"{gsrc}: {_where(pkey, qid)}: validated_answers must be "
                                     "a list", query=qid, field="validated_answers")
                answers = [first, *validated]
            else:
                answers = [first]
            for n, answer in enumerate(answers):
                pair_append(k)
                # the usual shapes inline; anything else through _answer_strings
                number = answer.get("number") if type(answer) is dict else None
                if number and type(number) is str:
                    b = span_bag(number)
                    gold_append(bag(number) if b is None else b)
                    blank_append(not number.strip())
                    kind_append(number_code)
                else:
                    spans = answer.get("spans") if not number and type(answer) is dict else None
                    if spans and type(spans) is list and all(type(x) is str for x in spans):
                        for text in spans:
                            b = span_bag(text)
                            gold_append(bag(text) if b is None else b)
                        blank_append(not spans[0].strip())
                        kind_append(span_code if len(spans) == 1 else spans_code)
                    else:
                        field = "answer" if n == 0 else f"validated_answers[{n - 1}]"
                        strings, kind = _answer_strings(answer, pkey, qid, field, gsrc)
                        for text in strings:
                            gold_append(bag(text))
                        blank_append(not strings[0].strip())
                        kind_append(_KIND_CODE[kind])
                gold_off_append(len(gold_bags))
            q_off_append(len(pair_pred))

def _breakdown(sc: _Scored) -> dict:
    """{type: (count, percent of all questions, EM mean, F1 mean)} sorted as the script
    sorts the names (None, from a question whose gold answers are all blank, as "None").
    The means are numpy.mean's over the type's questions in order, as the script's."""
    out = {}
    total = len(sc.codes)
    slots = len(_NAMES)                 # code c at c + 1
    counts = array("q", bytes(8 * slots))
    em_means = array("d", bytes(8 * slots))
    f1_means = array("d", bytes(8 * slots))
    _kernels.drop_type_means(sc.em, sc.f1, sc.codes, counts, em_means, f1_means)
    present = [code for code in range(-1, len(KINDS)) if counts[code + 1]]
    for code in sorted(present, key=lambda c: str(_NAMES[c])):
        count = counts[code + 1]
        out[_NAMES[code]] = (count, 100.0 * count / total, em_means[code + 1],
                             f1_means[code + 1])
    return out


def drop(gold, predictions, *, by_type: bool = False) -> dict:
    """Score predictions as AllenAI's official DROP evaluation script (``drop_eval.py``) does.

    Parameters
    ----------
    gold : str, os.PathLike or dict
        The gold file in the DROP release's format (a path or the loaded object):
        ``{passage id: {"qa_pairs": [{"query_id": ..., "answer": {"number": ..., "spans":
        [...], "date": {"day": ..., "month": ..., "year": ...}}, "validated_answers": [...]},
        ...]}, ...}``.
    predictions : str, os.PathLike or dict
        ``{query id: answer}`` (or a JSON file of it), each answer a string or a list of span
        strings. A question without one scores 0.
    by_type : bool, default=False
        Add ``"by_type"``: for each gold answer type the script prints (``"date"``,
        ``"number"``, ``"span"``, ``"spans"``, and None for a question whose gold answers are
        all blank), ``{"count", "percent", "exact_match", "f1"}`` in the script's order.

    Returns
    -------
    dict
        ``{"global_em": ..., "global_f1": ...}``, the means in [0, 1] the script writes to
        ``--output_path`` (it prints 100 times them), bit for bit.

    Examples
    --------
    >>> gold = {"p1": {"qa_pairs": [
    ...     {"query_id": "q1", "answer": {"number": "5", "spans": [], "date": {}}},
    ...     {"query_id": "q2", "answer": {"number": "", "spans": ["the Eagles", "Giants"]},
    ...      "validated_answers": [{"number": "", "spans": ["Eagles"]}]}]}}
    >>> drop(gold, {"q1": "5.0", "q2": ["Eagles", "New York Giants"]})
    {'global_em': 0.5, 'global_f1': 0.875}
    >>> drop(gold, {"q1": "five"}, by_type=True)["by_type"]["number"]
    {'count': 1, 'percent': 50.0, 'exact_match': 0.0, 'f1': 0.0}
    """
    sc = _score(gold, predictions)
    if not sc.ids:
        raise InputError("no question to score: the gold file has no qa_pairs")
    return _result(sc, by_type)


def _result(sc: _Scored, by_type: bool) -> dict:
    result: dict[str, Any] = {"global_em": _kernels.drop_pairwise_mean(sc.em),
                              "global_f1": _kernels.drop_pairwise_mean(sc.f1)}
    if by_type:
        result["by_type"] = {k: {"count": c, "percent": p, "exact_match": e, "f1": f}
                             for k, (c, p, e, f) in _breakdown(sc).items()}
    return result


def drop_per_question(gold, predictions) -> dict:
    """Every question's scores, in the gold file's order (a duplicated id once per
    occurrence), as :func:`drop` averages them.

    Returns
    -------
    dict
        ``"query_id"`` (list), ``"exact_match"`` and ``"f1"`` (float64 arrays, F1 rounded to
        2 decimals as the script rounds it), ``"type"`` (list of the types the script counts
        the question under) and ``"predicted"`` (bool array: False for a question without a
        prediction).

    Examples
    --------
    >>> gold = {"p": {"qa_pairs": [{"query_id": "q", "answer": {"spans": ["1,000 yards"]}}]}}
    >>> s = drop_per_question(gold, {"q": "1000 feet"})
    >>> s["exact_match"][0], s["f1"][0], s["type"]
    (np.float64(0.0), np.float64(0.5), ['span'])
    """
    import numpy as np   # only here and in DropMetrics: `qafast drop` does without it

    sc = _score(gold, predictions)
    return {"query_id": sc.ids, "exact_match": np.array(sc.em, dtype=np.float64),
            "f1": np.array(sc.f1, dtype=np.float64), "type": sc.kinds,
            "predicted": np.array(sc.predicted, dtype=bool)}


def drop_metrics(predicted, gold) -> tuple[float, float]:
    """``(exact match, F1)`` of one prediction against one gold answer, each a string or a
    list of span strings: the script's ``get_metrics``.

    Examples
    --------
    >>> drop_metrics(["Eagles", "Giants"], ["the Giants", "Eagles", "Jets"])
    (0.0, 0.67)
    >>> drop_metrics("-5 yards", "5 yards")
    (1.0, 1.0)
    """
    for side, value in (("predicted", predicted), ("gold", gold)):
        values = value if isinstance(value, (list, tuple)) else [value]
        if not all(isinstance(s, str) for s in values):
            raise InputTypeError(f"{side} must be a string or a list of strings")
    gold_strings = tuple(gold) if isinstance(gold, (list, tuple)) else (gold,)
    if not gold_strings or gold_strings[0].strip() == "":
        # no gold span, or a blank first one (which a question's maxima skip): the
        # specification scores the pair itself
        return _ref.get_metrics(predicted, gold)
    question = {"query_id": 0, "answer": {"spans": gold_strings}}
    sc = _score({"p": {"qa_pairs": [question]}}, {0: predicted})
    return float(sc.em[0]), float(sc.f1[0])


class DropMetrics(KeptScores):
    """DROP's exact match and F1 accumulated over batches of questions.

    ``update(predictions, answers)`` scores a batch; ``compute()`` gives what :func:`drop`
    gives for all the questions so far, in the order they came: the script's numbers, bit for
    bit, for a gold file holding them in that order.

    Unlike :class:`qafast.AnswerMetrics`, which keeps exactly rounded sums (the same bits
    whatever the batches and the order of merges), this keeps every question's scores: the
    script averages with ``numpy.mean``, whose pairwise sum depends on the order of the
    values, so only the scores themselves give its last bit. That is 17 bytes a question.

    Parameters of :meth:`update`
    ----------------------------
    predictions : sequence
        Per question a string, a list of span strings, or None for no prediction.
    answers : sequence
        Per question its gold answers in DROP's form (``answer`` first, then
        ``validated_answers``): a list of ``{"number", "spans", "date"}`` objects, or one.

    Examples
    --------
    >>> import qafast
    >>> m = qafast.DropMetrics()
    >>> m.update(["5", ["Eagles", "Giants"]],
    ...          [{"number": "5"}, [{"spans": ["Giants", "Eagles"]}, {"spans": ["Eagles"]}]])
    >>> m.update([None], [{"spans": ["Chicago"]}])
    >>> m.compute()
    {'global_em': 0.6666666666666666, 'global_f1': 0.6666666666666666}
    """

    _LABEL = "type"
    _LABELS = _NAMES   # code -1, the last: None, a question whose gold answers were all blank
    _BINARY_EM = True

    def _code_of_label(self) -> dict:
        return {**{kind: code for code, kind in enumerate(KINDS)}, None: -1}

    def update(self, predictions, answers) -> None:
        """Score a batch of questions (the state is unchanged if it raises)."""
        if isinstance(predictions, (str, bytes)) or isinstance(answers, (str, bytes, dict)):
            raise InputTypeError("predictions and answers are sequences, one item a question")
        predictions, answers = list(predictions), list(answers)
        if len(predictions) != len(answers):
            raise InputError(f"{len(predictions)} predictions for {len(answers)} questions")
        pairs, preds = [], {}
        for i, (p, a) in enumerate(zip(predictions, answers)):
            golds = [a] if isinstance(a, dict) else list(a)
            if not golds:
                raise InputError(f"question {i} of the batch has no gold answer")
            pairs.append({"query_id": str(i), "answer": golds[0],
                          "validated_answers": golds[1:]})
            if p is not None:
                preds[str(i)] = p
        if not pairs:
            return
        import numpy as np

        sc = _score({"batch": {"qa_pairs": pairs}}, preds)
        self._append(np.array(sc.em, dtype=np.float64), np.array(sc.f1, dtype=np.float64),
                     np.array(sc.codes, dtype=np.int8))

    def _scored(self) -> _Scored:
        if not self._em:
            raise InputError("no question scored yet")
        em, f1, codes = self._arrays()
        return _Scored([], em, f1, codes, bytearray(b"\1") * len(em))

    def compute(self, *, by_type: bool = False) -> dict:
        """What :func:`drop` returns for every question so far."""
        sc = self._scored()
        return _result(sc, by_type)


# --------------------------------------------------------------------------------------------
# The `qafast drop` command
# --------------------------------------------------------------------------------------------

def register_cli(subparsers) -> dict:
    """Add ``qafast drop`` to the ``qafast`` command; returns ``{"drop": handler}``."""
    p = subparsers.add_parser(
        "drop", help="score DROP predictions, printing what the official drop_eval.py prints",
        description="Score predictions against a DROP gold file as AllenAI's drop_eval.py "
                    "does, printing the same lines (missing predictions, then the totals and "
                    "the breakdown by answer type).")
    p.add_argument("--gold_path", default="drop_dataset_test.gold.json",
                   help="the gold file (default: %(default)s)")
    p.add_argument("--prediction_path", default="sample_predictions.json",
                   help="the predictions, {query id: answer} (default: %(default)s)")
    p.add_argument("--output_path", default=None,
                   help="also write {\"global_em\": ..., \"global_f1\": ...} as JSON here")
    return {"drop": _run_cli}


def _run_cli(args) -> int:
    sc = _score(args.gold_path, args.prediction_path)
    lines = [f"Missing prediction for question: {q}"
             for q, p in zip(sc.ids, sc.predicted) if not p]
    if sc.ids:
        em, f1 = _kernels.drop_pairwise_mean(sc.em), _kernels.drop_pairwise_mean(sc.f1)
    else:
        em = f1 = float("nan")   # what the script's numpy.mean of nothing gives
    lines += [f"Exact-match accuracy {em * 100:.2f}", f"F1 score {f1 * 100:.2f}",
              f"{em * 100:.2f}   &   {f1 * 100:.2f}", "----"]
    if sc.ids:
        for kind, (count, share, em_k, f1_k) in _breakdown(sc).items():
            lines += [f"{kind}: {count} ({share:.2f}%)",
                      f"  Exact-match accuracy {100.0 * em_k:.3f}",
                      f"  F1 score {100.0 * f1_k:.3f}"]
    sys.stdout.write("\n".join(lines) + "\n")
    if args.output_path is not None:
        with open(args.output_path, "w", encoding="utf8") as f:
            json.dump({"global_em": em, "global_f1": f1}, f)
    return 0
