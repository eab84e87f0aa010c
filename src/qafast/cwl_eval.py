"""C/W/L user-model measures as ``cwl_eval`` computes them: :func:`cwl` and ``qafast cwl``.

``cwl_eval`` (Azzopardi, Thomas and Moffat, SIGIR 2019; the ``cwl-eval`` package, 1.0.12)
describes each measure by a user model (C: continue, W: weight, L: last) and prints, per topic
and measure, the expected utility per item (EU), expected total utility (ETU), expected cost
per item (EC), expected total cost (ETC) and expected depth (ED), with residuals (``-r``)
bounding what unjudged documents could change. ``qafast cwl QRELS RUN`` prints what
``cwl-eval QRELS RUN`` prints, byte for byte, with its options (``-c``, ``-m``, ``-n``,
``-r``, ``--max_gain``, ``--min_gain``, ``--max_cost``, ``--min_cost``, ``--max_depth``). The
rules (a run is read in file order; unjudged documents gain 0) are written out in
:mod:`qafast.reference.cwl`.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import numpy as np

from . import _kernels
from .errors import FormatError, InputError, MeasureError
from .reference import cwl as _spec

__all__ = ["cwl"]


def _read(path: str | os.PathLike[str], what: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as error:
        raise InputError(f"{os.fspath(path)}: cannot read the {what}: {error.strerror}",
                         path=os.fspath(path)) from None
    except UnicodeDecodeError:
        raise FormatError(f"the {what} is not UTF-8 text", path=os.fspath(path)) from None


def _columns_error(path: str, number: int, what: str, columns: str,
                   parts: list[str]) -> FormatError:
    return FormatError(f"a {what} line is {columns}; this one has {len(parts)} "
                       f"column{'' if len(parts) == 1 else 's'}", path=path, line=number)


def _check_lines(text: str, path: str, what: str, columns: str, ok) -> None:
    for number, line in enumerate(text.splitlines(), 1):
        parts = line.split()
        if not ok(parts):
            raise _columns_error(path, number, what, columns, parts)


def _float_column(text: str, path: str, column: int, field: str) -> None:
    for number, line in enumerate(text.splitlines(), 1):
        value = line.split()[column]
        try:
            float(value)
        except ValueError:
            raise FormatError(f"the {field} {value!r} is not a number", path=path, line=number,
                              field=field) from None


def _qrels(text: str, path: str) -> dict[str, dict[str, float]]:
    """The qrels table (:func:`qafast.reference.cwl.read_qrels`), read in one pass over the
    lines that also checks them: a line short of four columns is reported before a gain that
    is not a number, wherever each is."""
    table: dict[str, dict[str, float]] = {}
    bad_gain = None
    for number, line in enumerate(text.splitlines(), 1):
        parts = line.split()
        if len(parts) < 4:
            raise _columns_error(path, number, "qrels", "topic, unused, docno, gain", parts)
        try:
            gain = float(parts[3])
        except ValueError:
            if bad_gain is None:
                bad_gain = (parts[3], number)
            continue
        judged = table.get(parts[0])
        if judged is None:
            judged = table[parts[0]] = {}
        judged[parts[2]] = gain
    if bad_gain is not None:
        raise FormatError(f"the gain {bad_gain[0]!r} is not a number", path=path,
                          line=bad_gain[1], field="gain")
    return table


def _rankings(text: str, path: str) -> list[tuple[str, list[tuple[str, str]]]]:
    """The run's rankings (:func:`qafast.reference.cwl.read_run`), read in one pass over the
    lines that also checks that each has six columns."""
    rankings: list[tuple[str, list[tuple[str, str]]]] = []
    topic: str | None = None
    ranking: list[tuple[str, str]] = []
    for number, line in enumerate(text.splitlines(), 1):
        parts = line.split()
        if len(parts) != 6:
            raise _columns_error(path, number, "run",
                                 "topic, element_type, docno, rank, score, runid", parts)
        if parts[0] != topic:
            topic, ranking = parts[0], []
            rankings.append((topic, ranking))
        ranking.append((parts[2], parts[1]))
    return rankings


def _metrics(path: str) -> tuple[_spec.Metric, ...]:
    metrics = []
    for number, line in enumerate(_read(path, "metrics file").splitlines(), 1):
        try:
            metric = _spec.parse_metric_line(line)
        except ValueError as error:
            raise MeasureError(f"{path}, line {number}: {error}", path=path,
                               line=number) from None
        if metric.kind == "P" and int(metric.param) < 1:
            raise MeasureError(f"{path}, line {number}: P@{metric.param}: the depth is 1 "
                               f"or more", path=path, line=number)
        metrics.append(metric)
    return tuple(metrics)


def cwl(qrels: str | os.PathLike[str], run: str | os.PathLike[str], *,
        costs: str | os.PathLike[str] | None = None,
        metrics: str | os.PathLike[str] | None = None, colnames: bool = False,
        residuals: bool = False, max_gain: float = 1.0, min_gain: float = 0.0,
        max_cost: float = 1.0, min_cost: float = 1.0, max_depth: int = 1000) -> str:
    """The report ``cwl-eval`` prints for a qrels file and a run (file paths).

    Parameters
    ----------
    qrels, run : path
        The gains (``topic unused docno gain``) and the run (``topic element_type docno rank
        score runid``, read in file order).
    costs, metrics : path, optional
        ``cwl-eval``'s ``-c`` (``element_type cost`` lines) and ``-m``
        (``ClassName(arguments)`` lines; the default set of 16 measures otherwise).
    colnames, residuals : bool
        ``-n`` (a heading line) and ``-r`` (the residuals).
    max_gain, min_gain, max_cost, min_cost, max_depth
        ``cwl-eval``'s options of these names.

    Returns
    -------
    str
        The report, one line per topic and measure.

    Examples
    --------
    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> q, r, m = (os.path.join(folder, name) for name in "qrm")
    >>> _ = open(q, "w").write("1 0 a 1\\n1 0 b 1\\n")
    >>> _ = open(r, "w").write("1 Q0 a 1 2.0 run\\n1 Q0 c 2 1.0 run\\n")
    >>> _ = open(m, "w").write("RBPCWLMetric(0.5)\\nPrecisionCWLMetric(2)\\n")
    >>> print(cwl(q, r, metrics=m, colnames=True).replace("\\t", " "), end="")
    Topic Metric EU ETU EC ETC ED
    1 RBP@0.5 0.5000 1.0000 1.0000 2.0000 2.0000
    1 P@2 0.5000 1.0000 1.0000 2.0000 2.0000
    """
    qrels_path, run_path = os.fspath(qrels), os.fspath(run)
    if max_depth < 1:
        raise InputError(f"--max_depth {max_depth}: the depth is 1 or more", field="max_depth")
    qrels_text = _read(qrels_path, "qrels")
    qrels_table = _qrels(qrels_text, qrels_path)
    run_text = _read(run_path, "run")
    rankings = _rankings(run_text, run_path)
    if not rankings:
        raise FormatError("the run has no lines", path=run_path)
    del run_text
    costs_text = None
    if costs is not None:
        costs_path = os.fspath(costs)
        costs_text = _read(costs_path, "cost file")
        _check_lines(costs_text, costs_path, "cost", "element_type, cost",
                     lambda parts: len(parts) == 2)
        _float_column(costs_text, costs_path, 1, "cost")
    chosen = _spec.DEFAULT_METRICS if metrics is None else _metrics(os.fspath(metrics))
    for metric in chosen:
        if metric.kind == "P" and int(metric.param) > max_depth + 1:
            raise MeasureError(f"P@{metric.param} looks deeper than --max_depth {max_depth}")
    for topic, judged in qrels_table.items():
        for doc, gain in judged.items():
            if not min_gain <= gain <= max_gain:
                raise InputError(f"{qrels_path}: topic {topic}, document {doc}: gain {gain} "
                                 f"is outside [{min_gain}, {max_gain}] (see --min_gain and "
                                 f"--max_gain)", path=qrels_path, query=topic, field="gain")
    cost_of = _spec.read_costs(costs_text) if costs_text is not None else {}
    lines = [_spec.HEADER_RESIDUALS if residuals else _spec.HEADER] if colnames else []
    names = [topic for topic, _ in rankings]
    worst = _Case(qrels_table, rankings, cost_of, max_depth, 0.0, max_cost)
    best = (_Case(qrels_table, rankings, cost_of, max_depth, max_gain, min_cost)
            if residuals else None)
    table = []
    for metric in chosen:
        low = worst.measure(metric)
        table.append(low if best is None else
                     low + [b - w for b, w in zip(best.measure(metric), low)])
    for q, topic in enumerate(names):
        for metric, columns in zip(chosen, table):
            lines.append("\t".join([topic, metric.name]
                                    + [f"{float(column[q]):.4f}" for column in columns]))
    return "".join(line + "\n" for line in lines)


class _Case:
    """Every ranking's gains and costs padded to the depth, unknowns filled one way (the
    worst case, or the best for the residuals), and the measures over them."""

    def __init__(self, qrels: dict, rankings: list, cost_of: dict, depth: int,
                 missing_gain: float, missing_cost: float) -> None:
        self.gains = np.full((len(rankings), depth), missing_gain)
        self.costs = np.full((len(rankings), depth), missing_cost)
        for q, (topic, ranking) in enumerate(rankings):
            judged = qrels.get(topic, {})
            top = ranking[:depth]
            self.gains[q, :len(top)] = [judged.get(doc, missing_gain) for doc, _ in top]
            self.costs[q, :len(top)] = [cost_of.get(kind, missing_cost) for _, kind in top]
        self.summed_gains = np.cumsum(self.gains, axis=1)
        self.summed_costs = np.cumsum(self.costs, axis=1)

    def measure(self, metric: _spec.Metric) -> list[np.ndarray]:
        """EU, ETU, EC, ETC and ED of every ranking."""
        gains, costs = self.gains, self.costs
        if metric.kind == "INST" and gains.size and (gains.min() < 0.0 or gains.max() > 1.0):
            raise MeasureError(f"{metric.name} takes gains from 0 to 1 (see --max_gain and "
                               f"--min_gain)")
        weights, stops = np.empty_like(gains), np.empty_like(gains)
        depth = np.empty(len(gains))
        _kernels.cwl_weights(gains, _spec.KINDS.index(metric.kind), float(metric.param),
                             weights, stops, depth)
        out = [np.empty(len(gains)) for _ in range(4)]
        dot = np.dot  # numpy's dot of each row, the sums cwl_eval takes
        for q in range(len(gains)):
            out[0][q] = dot(weights[q], gains[q])
            out[1][q] = dot(stops[q], self.summed_gains[q])
            out[2][q] = dot(weights[q], costs[q])
            out[3][q] = dot(stops[q], self.summed_costs[q])
        return out + [depth]


def register_cli(subparsers: Any) -> dict:
    """Add ``qafast cwl`` to the ``qafast`` command; returns ``{"cwl": handler}``."""
    p = subparsers.add_parser(
        "cwl", help="C/W/L user-model measures of a run, printing what cwl-eval prints",
        description="Score a run with the C/W/L framework's measures as cwl-eval (1.0.12) "
                    "does, printing the same table: topic, measure, EU, ETU, EC, ETC, ED.")
    p.add_argument("gain_file", help="the qrels: topic unused docno gain")
    p.add_argument("result_file", help="the run: topic element_type docno rank score runid")
    p.add_argument("-c", "--cost_file", default=None,
                   help="the cost of each element type (the run's second column)")
    p.add_argument("-m", "--metrics_file", default=None,
                   help="the measures to report, ClassName(arguments) a line")
    p.add_argument("-b", "--bib_file", default=None,
                   help="write the BibTeX of the measures used to this file")
    p.add_argument("-n", "--colnames", action="store_true", help="print a heading line")
    p.add_argument("-r", "--residuals", action="store_true", help="print the residuals")
    p.add_argument("--max_gain", type=float, default=1.0, help="the largest gain (default 1.0)")
    p.add_argument("--min_gain", type=float, default=0.0, help="the smallest gain (default 0.0)")
    p.add_argument("--max_cost", type=float, default=1.0,
                   help="the cost of a document without one, worst case (default 1.0)")
    p.add_argument("--min_cost", type=float, default=1.0,
                   help="the cost of a document without one, best case (default 1.0)")
    p.add_argument("--max_depth", type=int, default=1000,
                   help="the depth every measure is computed to (default 1000)")
    return {"cwl": _run_cli}


def _run_cli(args) -> int:
    if args.bib_file is not None:
        raise InputError("qafast cwl does not write BibTeX (-b): cite the measures' papers "
                         "listed in docs/cwl.md", field="bib_file")
    sys.stdout.write(cwl(args.gain_file, args.result_file, costs=args.cost_file,
                         metrics=args.metrics_file, colnames=args.colnames,
                         residuals=args.residuals, max_gain=args.max_gain,
                         min_gain=args.min_gain, max_cost=args.max_cost,
                         min_cost=args.min_cost, max_depth=args.max_depth))
    return 0
