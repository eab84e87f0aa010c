"""Natural Questions long and short answers, as the official ``nq_eval.py`` scores them.

:func:`nq` returns the JSON line the script prints (the optimal-threshold F1, precision, recall
and threshold, and recall at precision 0.5, 0.75 and 0.9, for long and short answers; same keys,
same floats), :func:`nq_f1` the scores it prints ignoring thresholds (``--pretty_print``), and
:func:`nq_examples` every gold example's own statistics. Spans are matched through hash sets and
the score-threshold sweep runs over numpy arrays in the script's order of operations. The
plain-Python specification is :mod:`qafast.reference.nq`; its docstring lists the rules.
``qafast nq --gold_path G --predictions_path P`` prints what the script prints.

Gold is NQ's original format, one JSON example a line (gzipped or not), of which only
``example_id`` and ``annotations`` (each with ``long_answer``, ``short_answers`` and
``yes_no_answer``) are read; a span has ``start_byte``, ``end_byte``, ``start_token`` and
``end_token``, ``-1`` for none. Predictions are ``{"predictions": [...]}``, each with
``example_id``, ``long_answer_score``, ``short_answers_score`` and optionally ``long_answer``,
``short_answers`` and ``yes_no_answer``.
"""

from __future__ import annotations

import glob
import gzip
import json
import math
import os
import sys
import warnings
from collections.abc import Iterable, Mapping

import numpy as np

from . import _kernels
from ._json_scan import scan_skip
from ._output import absl_bool_action
from .errors import FormatError, InputError, InputTypeError

__all__ = ["nq", "nq_examples", "nq_f1"]

_TARGETS = (0.5, 0.75, 0.9)  # recall at these precisions
_LIMIT = 2 ** 53  # integer scores stay exact as floats up to here
_NULL = (-1, -1, -1, -1)
_SCAN_FROM = 4096  # lines longer than this (bytes) are scanned before json.loads


# --------------------------------------------------------------------------------------------
# Reading and checking
# --------------------------------------------------------------------------------------------

class _Problem(Exception):
    """A record the script cannot read; the reader adds where it is."""


def _field(record, key, what="a JSON object"):
    if not isinstance(record, dict):
        raise _Problem(f"expected {what}, got {type(record).__name__}")
    try:
        return record[key]
    except KeyError:
        raise _Problem(f"no {key!r} field") from None


def _offset(v, field):
    if type(v) is not int:
        raise _Problem(f"{field} must be an integer, not {type(v).__name__}")
    return v


def _span(record, field):
    """``(start byte, end byte, start token, end token)``, checked as the script's Span is."""
    try:  # the common case in one go; anything else takes the checks below to say what is wrong
        sb, eb, st, et = (record["start_byte"], record["end_byte"], record["start_token"],
                          record["end_token"])
        if (type(sb) is int and type(eb) is int and type(st) is int and type(et) is int
                and (eb > sb >= 0 or (sb < 0 and eb < 0))
                and (et > st >= 0 or (st < 0 and et < 0))):
            return sb, eb, st, et
    except (KeyError, TypeError):
        pass
    return _checked_span(record, field)


def _checked_span(record, field):
    sb, eb, st, et = (_offset(_field(record, k, f"{field} to be a JSON object"), f"{field} {k}")
                      for k in ("start_byte", "end_byte", "start_token", "end_token"))
    if (sb < 0) != (eb < 0):
        raise _Problem(f"{field} has one byte offset negative (null) and one not ({sb}, {eb})")
    if (st < 0) != (et < 0):
        raise _Problem(f"{field} has one token offset negative (null) and one not ({st}, {et})")
    if sb >= 0 and sb >= eb:
        raise _Problem(f"{field} byte span ({sb}, {eb}) does not end after it starts")
    if st >= 0 and st >= et:
        raise _Problem(f"{field} token span ({st}, {et}) does not end after it starts")
    return sb, eb, st, et


def _yes_no(v, field):
    if type(v) is not str:
        raise _Problem(f"{field} must be a string, not {type(v).__name__}")
    return v.lower()


def _score(v, field):
    t = type(v)
    if t is float:
        if math.isnan(v):
            raise _Problem(f"{field} is NaN, which has no place in a ranking by score")
        return v
    if t is int:
        if -_LIMIT <= v <= _LIMIT:
            return v
        raise _Problem(f"{field} {v} is beyond 2**53 in size")
    raise _Problem(f"{field} must be a number, not {type(v).__name__}")


def _hashable(v, field):
    try:
        hash(v)
    except TypeError:
        raise _Problem(f"{field} must be a number or string, not {type(v).__name__}") from None
    return v


def _spans(record, key, field):
    items = _field(record, key)
    if not isinstance(items, list):
        raise _Problem(f"{field} must be a list, not {type(items).__name__}")
    if not items:
        return ()
    return tuple([_span(s, f"{field} {i}") for i, s in enumerate(items)])


def _gold_example(record):
    example_id = _hashable(_field(record, "example_id"), "example_id")
    annotations = _field(record, "annotations")
    if not isinstance(annotations, list):
        raise _Problem(f"annotations must be a list, not {type(annotations).__name__}")
    out = []
    for i, a in enumerate(annotations):
        try:
            long_span, short_spans, yes_no = (a["long_answer"], a["short_answers"],
                                              a["yes_no_answer"])
        except (KeyError, TypeError):  # say which field is missing, in the script's order
            where = f"annotation {i}"
            out.append((_span(_field(a, "long_answer", where + " to be a JSON object"),
                              where + " long_answer"),
                        _spans(a, "short_answers", where + " short_answers"),
                        _yes_no(_field(a, "yes_no_answer"), where + " yes_no_answer")))
            continue
        out.append((_span(long_span, f"annotation {i} long_answer"),
                    () if short_spans == []
                    else _spans(a, "short_answers", f"annotation {i} short_answers"),
                    yes_no.lower() if type(yes_no) is str
                    else _yes_no(yes_no, f"annotation {i} yes_no_answer")))
    return example_id, out


def _prediction(record):
    example_id = _hashable(_field(record, "example_id"), "example_id")
    long_span = _span(record["long_answer"], "long_answer") if (
        isinstance(record, dict) and "long_answer" in record) else _NULL
    short = _spans(record, "short_answers", "short_answers") if "short_answers" in record else ()
    yes_no = "none"
    if "yes_no_answer" in record:
        yes_no = _yes_no(record["yes_no_answer"], "yes_no_answer")
        if yes_no not in ("yes", "no", "none"):
            raise _Problem(f"yes_no_answer {record['yes_no_answer']!r} is not YES, NO or NONE")
        if yes_no != "none" and any(s[0] >= 0 or s[2] >= 0 for s in short):
            raise _Problem("a yes/no answer and short answer spans cannot both be given")
    return example_id, (long_span, short, yes_no,
                        _score(_field(record, "long_answer_score"), "long_answer_score"),
                        _score(_field(record, "short_answers_score"), "short_answers_score"))


def _add(out: dict, example_id, value, what, where):
    if example_id in out:
        warnings.warn(f"{where}: {what} example {example_id!r} given again; the later one "
                      "counts, as in the official script", stacklevel=4)
    out[example_id] = value


def _gold_file(path: str, out: dict) -> None:
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as e:
            raise FormatError(f"not a readable gzip file ({e})", path=path) from None
    lines = data.split(b"\n")  # the script's lines: GzipFile's, split at \n only
    if lines and not lines[-1]:
        lines.pop()
    for n, line in enumerate(lines, 1):
        try:
            # a line of the original format carries its whole document: the scan puts null
            # in place of every field but the two read, and json.loads builds only those
            short = scan_skip(line, _kernels.JSON_SKIP_NQ) if len(line) > _SCAN_FROM else None
            record = json.loads(line if short is None else short)
        except ValueError as e:
            raise FormatError(f"not a JSON line ({e})", path=path, line=n) from None
        try:
            example_id, annotations = _gold_example(record)
        except _Problem as e:
            raise FormatError(str(e), path=path, line=n) from None
        _add(out, example_id, annotations, "gold", f"{path}, line {n}")


def _read_gold(gold) -> dict:
    out: dict = {}
    if isinstance(gold, (str, os.PathLike)):
        pattern = os.fspath(gold)
        paths = glob.glob(pattern)  # the script's order: glob's, unsorted
        if not paths:
            raise InputError(f"no gold file matches {pattern!r}", path=pattern)
        for path in paths:
            _gold_file(path, out)
        return out
    if isinstance(gold, Mapping) or not isinstance(gold, Iterable):
        raise InputTypeError("gold must be a path (or glob pattern) of NQ JSONL files or an "
                             f"iterable of example dicts, not {type(gold).__name__}")
    for n, record in enumerate(gold):
        try:
            example_id, annotations = _gold_example(record)
        except _Problem as e:
            raise InputError(f"gold example {n}: {e}") from None
        _add(out, example_id, annotations, "gold", f"gold example {n}")
    return out


def _read_predictions(predictions) -> dict:
    where = "predictions"
    if isinstance(predictions, (str, os.PathLike)):
        where = os.fspath(predictions)
        with open(where, "rb") as f:
            try:
                predictions = json.loads(f.read())
            except ValueError as e:
                raise FormatError(f"not a JSON file ({e})", path=where) from None
    if isinstance(predictions, Mapping):
        if "predictions" not in predictions:
            raise InputError(f"{where}: no 'predictions' field", path=where)
        predictions = predictions["predictions"]
    if not isinstance(predictions, Iterable) or isinstance(predictions, (str, bytes)):
        raise InputTypeError(f"{where}: predictions must be a list of prediction objects, not "
                             f"{type(predictions).__name__}")
    out: dict = {}
    for n, record in enumerate(predictions):
        try:
            example_id, pred = _prediction(record)
        except _Problem as e:
            raise InputError(f"{where}: prediction {n}: {e}", field="predictions") from None
        _add(out, example_id, pred, "predicted", f"{where}: prediction {n}")
    return out


# --------------------------------------------------------------------------------------------
# Scoring
# --------------------------------------------------------------------------------------------

def _keys(span):
    """A span as its byte key and token key (None where absent)."""
    return (span[:2] if span[0] >= 0 else None), (span[2:] if span[2] >= 0 else None)


def _key_lists(spans):
    return [_keys(s) for s in spans if s[0] >= 0 or s[2] >= 0]


def _same(a, b) -> bool:
    return (a[0] is not None and a[0] == b[0]) or (a[1] is not None and a[1] == b[1])


def _same_lists(gold, pred) -> bool:
    return (all(any(_same(p, g) for g in gold) for p in pred)
            and all(any(_same(p, g) for p in pred) for g in gold))


def _stats(annotations, pred, long_threshold, short_threshold):
    """(long has gold, has pred, correct, short has gold, has pred, correct) of one example."""
    p_long = _keys(pred[0])
    long_pred = p_long != (None, None)
    long_votes = 0
    long_correct = False
    short_votes = 0
    short_keys = []
    yes_nos = set()
    for long_span, short_spans, yes_no in annotations:
        g = _keys(long_span)
        if g != (None, None):
            long_votes += 1
            long_correct = long_correct or _same(g, p_long)
        keys = _key_lists(short_spans)
        short_votes += bool(keys) or yes_no != "none"
        short_keys.append(keys)
        yes_nos.add(yes_no)
    long_gold = bool(annotations) and long_votes >= long_threshold
    short_gold = bool(annotations) and short_votes >= short_threshold
    p_short = _key_lists(pred[1])
    short_pred = bool(p_short) or pred[2] != "none"
    short_correct = False
    if short_gold and short_pred:
        if pred[2] != "none":
            short_correct = pred[2] in yes_nos
        else:
            short_correct = any(_same_lists(g, p_short) for g in short_keys)
    return (long_gold, long_pred, long_gold and long_pred and long_correct,
            short_gold, short_pred, short_correct)


class _Scored:
    """One ``score_answers`` call: examples in ``set`` order, their flags and scores."""

    def __init__(self, gold: dict, preds: dict, long_threshold: int, short_threshold: int):
        for name, v in (("long_non_null_threshold", long_threshold),
                        ("short_non_null_threshold", short_threshold)):
            if type(v) is not int:
                raise InputTypeError(f"{name} must be an integer, got {v!r}")
        missing = [i for i in gold if i not in preds]
        extra = [i for i in preds if i not in gold]
        if missing or extra:
            parts = []
            if missing:
                parts.append(f"{len(missing)} gold examples have no prediction (the first "
                             f"{missing[0]!r})")
            if extra:
                parts.append(f"{len(extra)} predictions have no gold example (the first "
                             f"{extra[0]!r})")
            raise InputError("the example ids of the gold data and of the predictions differ: "
                             + "; ".join(parts), query=(missing or extra)[0])
        self.ids = list(set(gold.keys()))  # the script's visiting order (a set of the keys view)
        rows = [_stats(gold[i], preds[i], long_threshold, short_threshold) for i in self.ids]
        self.flags = np.array(rows, dtype=bool).reshape(len(rows), 6)
        self.long_objects = [preds[i][3] for i in self.ids]
        self.short_objects = [preds[i][4] for i in self.ids]

    def sweep(self, long: bool):
        col = 0 if long else 3
        objects = self.long_objects if long else self.short_objects
        return _sweep(self.flags[:, col], self.flags[:, col + 1], self.flags[:, col + 2],
                      objects)

    def metrics(self) -> dict:
        out = {}
        for prefix, long in (("long-", True), ("short-", False)):
            (f1, p, r, threshold), table = self.sweep(long)
            out[prefix + "best-threshold-f1"] = f1
            out[prefix + "best-threshold-precision"] = p
            out[prefix + "best-threshold-recall"] = r
            out[prefix + "best-threshold"] = threshold
            for target, recall, precision, _ in table:
                out[f"{prefix}recall-at-precision>={target:.2}"] = recall
                out[f"{prefix}precision-at-precision>={target:.2}"] = precision
        return out

    def final_f1(self) -> dict:
        out: dict = {}
        for prefix, col in (("long-answer-", 0), ("short-answer-", 3)):
            gold, pred, correct = (int(np.count_nonzero(self.flags[:, col + k]))
                                   for k in range(3))
            p = correct / pred if pred else 0
            r = correct / gold if gold else 0
            out[prefix + "n"] = len(self.ids)
            out[prefix + "f1"] = 2 * p * r / (p + r) if p + r else 0
            out[prefix + "precision"] = p
            out[prefix + "recall"] = r
        return out


def _sweep(has_gold, has_pred, correct, objects):
    """The script's ``compute_pr_curves`` over numpy arrays: the best-F1 point and the
    recall-at-precision rows, the same values (and int 0 where the script keeps one)."""
    n = len(objects)
    best = (0.0, 0.0, 0.0, 0.0)
    table = [(t, 0, 0, None) for t in _TARGETS]
    if n == 0:
        return best, table
    score = np.array(objects, dtype=np.float64)
    order = np.argsort(-score, kind="stable")  # sorted(reverse=True) keeps ties in order
    s = score[order]
    n_correct = np.cumsum(correct[order], dtype=np.int64)
    n_pred = np.cumsum(has_pred[order], dtype=np.int64)
    n_gold = int(np.count_nonzero(has_gold))
    last = np.flatnonzero(np.append(s[1:] != s[:-1], True))  # a tie's last point counts
    first = np.append(0, last[:-1] + 1)  # and its first score object is the key
    c = n_correct[last].astype(np.float64)
    k = n_pred[last]
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(k > 0, c / np.maximum(k, 1), 0.0)
        r = c / n_gold if n_gold else np.zeros_like(c)
        f1 = np.where(p + r > 0, 2 * p * r / (p + r), 0.0)
    if f1.size and f1.max() > 0:
        i = int(np.argmax(f1))
        best = (float(f1[i]), float(p[i]), float(r[i]), objects[order[first[i]]])
    for j, t in enumerate(_TARGETS):
        ok = np.flatnonzero((p >= t) & (r > 0))
        if ok.size:
            i = int(ok[np.argmax(r[ok])])
            table[j] = (t, float(r[i]), float(p[i]), objects[order[first[i]]])
    return best, table


def _evaluate(gold, predictions, long_threshold, short_threshold) -> _Scored:
    return _Scored(_read_gold(gold), _read_predictions(predictions), long_threshold,
                   short_threshold)


def _floats(d: dict) -> dict:
    return {k: float(v) for k, v in d.items()}


# --------------------------------------------------------------------------------------------
# Public functions
# --------------------------------------------------------------------------------------------

def nq(gold, predictions, *, long_non_null_threshold: int = 2,
       short_non_null_threshold: int = 2) -> dict:
    """Natural Questions scores as ``nq_eval.py`` prints them in its JSON line.

    Parameters
    ----------
    gold : str, os.PathLike or iterable of dict
        A path or glob pattern of NQ JSONL files (gzipped or not; shards of a glob are read in
        glob's order, a later duplicate example replacing an earlier one, as in the script),
        or the examples as dicts with ``example_id`` and ``annotations``.
    predictions : str, os.PathLike, dict or list of dict
        The predictions JSON file, its ``{"predictions": [...]}`` object or that list.
    long_non_null_threshold, short_non_null_threshold : int, keyword-only
        Annotators who must give a non-null long (short) answer for gold to have one
        (the script's flags of these names; 2 by default).

    Returns
    -------
    dict
        The script's keys (``long-best-threshold-f1``, ``long-best-threshold``,
        ``long-recall-at-precision>=0.5``, ..., ``short-...``), each a Python float.

    Raises
    ------
    qafast.errors.InputError
        A malformed line or record (naming the file, line or prediction and field), or ids
        present on one side only.

    Examples
    --------
    >>> import qafast
    >>> span = {"start_byte": 10, "end_byte": 20, "start_token": 2, "end_token": 5}
    >>> none = {"start_byte": -1, "end_byte": -1, "start_token": -1, "end_token": -1}
    >>> gold = [{"example_id": 1, "annotations": [
    ...     {"long_answer": span, "short_answers": [], "yes_no_answer": "YES"}] * 3}]
    >>> pred = [{"example_id": 1, "long_answer": span, "long_answer_score": 2.5,
    ...          "short_answers": [], "short_answers_score": 1.0, "yes_no_answer": "YES"}]
    >>> m = qafast.nq(gold, pred)
    >>> m["long-best-threshold-f1"], m["long-best-threshold"], m["short-best-threshold-f1"]
    (1.0, 2.5, 1.0)
    """
    return _floats(_evaluate(gold, predictions, long_non_null_threshold,
                             short_non_null_threshold).metrics())


def nq_f1(gold, predictions, *, long_non_null_threshold: int = 2,
          short_non_null_threshold: int = 2) -> dict:
    """Precision, recall and F1 ignoring scores, as ``nq_eval.py --pretty_print`` prints them.

    Arguments are those of :func:`nq`. Returns the script's keys ``long-answer-n``,
    ``long-answer-f1``, ``long-answer-precision``, ``long-answer-recall`` and the same for
    ``short-answer-``, Python floats (the counts ints).

    Examples
    --------
    >>> import qafast
    >>> none = {"start_byte": -1, "end_byte": -1, "start_token": -1, "end_token": -1}
    >>> gold = [{"example_id": "q", "annotations": [
    ...     {"long_answer": none, "short_answers": [], "yes_no_answer": "NONE"}] * 5}]
    >>> pred = {"predictions": [{"example_id": "q", "long_answer_score": 0,
    ...                          "short_answers_score": 0}]}
    >>> qafast.nq_f1(gold, pred)["long-answer-f1"]
    0.0
    """
    out = _evaluate(gold, predictions, long_non_null_threshold,
                    short_non_null_threshold).final_f1()
    return {k: v if k.endswith("-n") else float(v) for k, v in out.items()}


def nq_examples(gold, predictions, *, long_non_null_threshold: int = 2,
                short_non_null_threshold: int = 2) -> dict:
    """Every example's own statistics, ``{example id: {...}}`` in the script's visiting order.

    Each value has ``long-has-gold``, ``long-has-prediction``, ``long-correct`` (bools),
    ``long-score`` (the prediction's score as given) and the same for ``short-``. Arguments are
    those of :func:`nq`.

    Examples
    --------
    >>> import qafast
    >>> span = {"start_byte": -1, "end_byte": -1, "start_token": 4, "end_token": 9}
    >>> gold = [{"example_id": 7, "annotations": [
    ...     {"long_answer": span, "short_answers": [span], "yes_no_answer": "NONE"}] * 2}]
    >>> pred = [{"example_id": 7, "long_answer": span, "long_answer_score": 1,
    ...          "short_answers": [span], "short_answers_score": 1}]
    >>> qafast.nq_examples(gold, pred)[7]["short-correct"]
    True
    """
    s = _evaluate(gold, predictions, long_non_null_threshold, short_non_null_threshold)
    names = ("long-has-gold", "long-has-prediction", "long-correct",
             "short-has-gold", "short-has-prediction", "short-correct")
    out = {}
    for i, example_id, row in zip(range(len(s.ids)), s.ids, s.flags.tolist()):
        d = dict(zip(names, row))
        d["long-score"] = s.long_objects[i]
        d["short-score"] = s.short_objects[i]
        out[example_id] = d
    return out


# --------------------------------------------------------------------------------------------
# The `qafast nq` command
# --------------------------------------------------------------------------------------------

def _fmt(value, spec) -> str:
    # the script formats thresholds with a float precision, which fails on None and ints;
    # qafast prints them as str() does (see docs/known-differences.md)
    if value is None or type(value) is int:
        return str(value)
    return format(value, spec)


def _table(sweep) -> list:
    (f1, p, r, threshold), table = sweep
    lines = ["Optimal threshold: " + _fmt(threshold, ".5"), " F1     /  P      /  R",
             f"{f1: >7.2%} / {p: >7.2%} / {r: >7.2%}"]
    for target, recall, precision, at in table:
        lines.append(f"R@P={target}: {recall:.2%} (actual p={precision:.2%}, "
                     f"score threshold={_fmt(at, '.4')})")
    return lines


def report_lines(scored: _Scored, pretty: bool) -> list:
    """The lines the script prints on stdout."""
    if not pretty:
        return [json.dumps(scored.metrics())]
    out = ["*" * 20, "LONG ANSWER R@P TABLE:"] + _table(scored.sweep(True))
    out += ["*" * 20, "SHORT ANSWER R@P TABLE:"] + _table(scored.sweep(False))
    s = scored.final_f1()
    out += ["*" * 20, f"METRICS IGNORING SCORES (n={s['long-answer-n']}):",
            "              F1     /  P      /  R"]
    for name, prefix in (("Long answer  ", "long-answer-"), ("Short answer ", "short-answer-")):
        out.append(f"{name}{s[prefix + 'f1']: >7.2%} / {s[prefix + 'precision']: >7.2%} / "
                   f"{s[prefix + 'recall']: >7.2%}")
    return out


def register_cli(subparsers) -> dict:
    """Add ``qafast nq`` to the ``qafast`` command; returns ``{"nq": handler}``."""
    import argparse

    _Bool = absl_bool_action()

    p = subparsers.add_parser(
        "nq", help="score Natural Questions predictions, printing what nq_eval.py prints",
        description="Score Natural Questions long- and short-answer predictions as the official "
                    "nq_eval.py does, printing the same JSON line (or, with --pretty_print, the "
                    "same tables).")
    p.add_argument("--gold_path", required=True,
                   help="gold NQ JSONL file, gzipped or not, or a glob pattern of shards")
    p.add_argument("--predictions_path", required=True, help="predictions JSON file")
    p.add_argument("--pretty_print", action=_Bool, default=False,
                   help="print R@P tables and the scores ignoring thresholds")
    p.add_argument("--nopretty_print", dest="pretty_print", action="store_false",
                   help=argparse.SUPPRESS)
    p.add_argument("--long_non_null_threshold", type=int, default=2,
                   help="annotators who must give a long answer (default 2)")
    p.add_argument("--short_non_null_threshold", type=int, default=2,
                   help="annotators who must give a short answer (default 2)")
    p.add_argument("--num_threads", type=int, default=10,
                   help="accepted for the script's sake (qafast reads in one thread)")
    p.add_argument("--cache_gold_data", action=_Bool, default=False,
                   help="refused: the script's pickle cache fails under Python 3")
    p.add_argument("--nocache_gold_data", dest="cache_gold_data", action="store_false",
                   help=argparse.SUPPRESS)
    return {"nq": _run_cli}


def _run_cli(args) -> int:
    if args.cache_gold_data:
        print("qafast nq: --cache_gold_data is not supported (the official script's pickle "
              "cache fails under Python 3)", file=sys.stderr)
        return 2
    scored = _evaluate(args.gold_path, args.predictions_path, args.long_non_null_threshold,
                       args.short_non_null_threshold)
    sys.stdout.write("\n".join(report_lines(scored, args.pretty_print)) + "\n")
    return 0
