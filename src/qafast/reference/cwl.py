"""The specification: ``cwl_eval`` (the C/W/L framework's evaluation tool, 1.0.12) in plain Python.

The readable definition of what ``qafast cwl`` prints, written from what ``cwl-eval`` does
(read, then described here in our own words). The compiled path (``_cwl_kernels.pxi``, which
builds W and L for every topic at once) is tested against it bit for bit.

The C/W/L framework
-------------------
A user model is a vector ``C`` of continuation probabilities, one per rank: ``C[i]`` is the
chance that a user who has looked at rank ``i + 1`` goes on to rank ``i + 2``. Every measure
is computed over exactly ``depth`` ranks (``--max_depth``, default 1000): the run's ranking
is cut there or padded to it. From ``C``:

* ``W`` (the weight of each rank): ``P[0] = 1``, ``P[i] = C[0] * ... * C[i - 1]``;
  ``W[i] = P[i] / sum(P)``.
* ``L`` (the chance of stopping at each rank): ``L[i] = P[i] * (1 - C[i])``.

With gains ``g`` and costs ``c`` (both of length ``depth``) the five numbers printed are
``EU = W . g`` (expected utility per item), ``ETU = L . cumsum(g)`` (expected total utility),
``EC = W . c``, ``ETC = L . cumsum(c)`` and ``ED = 1 / W[0]`` (expected depth).

The measures (``C[i]``, rank ``r = i + 1``)
-------------------------------------------
* ``P@k``: 1 for ``r < k``, else 0.
* ``RBP@p``: ``p`` everywhere.
* ``NDCG-k@k``: ``log2(r + 1) / log2(r + 2)`` for ``r < k``, else 0.
* ``RR``: 1 before the first rank with gain above 0; 0 there and after.
* ``AP``: with ``s[i] = g[i] / r + ... + g[depth-1] / depth`` (the tail sum),
  ``s[i + 1] / s[i]`` when ``s[i + 1] > 0``, else 0; the last is 0.
* ``INST-T=T``: ``((r + 2T - G - 1) / (r + 2T - G)) ** 2`` where ``G`` is the gain summed
  to rank ``r``; all gains must lie in [0, 1].
* ``INSQ-T=T``: ``((r + 2T - 1) / (r + 2T)) ** 2``.

The default set is P@1, P@2, P@3, P@4, P@5, P@10, RBP@0.2, RBP@0.4, RBP@0.8, NDCG-k@5,
NDCG-k@10, RR, AP, INST-T=1.0, INST-T=2.0, INST-T=3.0. A metrics file (``-m``) has one
``ClassName(arguments)`` a line (``PrecisionCWLMetric(10)``, ``RBPCWLMetric(0.8)``,
``NDCGCWLMetric(5)``, ``RRCWLMetric()``, ``APCWLMetric()``, ``INSTCWLMetric(1.0)``,
``INSQCWLMetric(1.0)``); an argument with a ``.`` is a float and is printed as one
(``RBP@0.8``), one without is an int (``INST-T=1``).

Reading the files
-----------------
* Lines are text lines (``\\n``, ``\\r\\n`` or ``\\r``), split at whitespace.
* The qrels: ``topic``, an unused column, ``docno``, ``gain`` (a float; more columns are
  ignored). A document judged twice keeps its last gain. Every gain must lie in
  [``--min_gain``, ``--max_gain``] (defaults 0 and 1), else nothing is printed.
* The run: exactly six columns, ``topic element_type docno rank score runid``. The ranking
  is the run's lines **in file order**: neither rank nor score is read, so ties need no rule.
  A topic's lines are one ranking while they are consecutive; a topic that comes back later
  is measured (and printed) again as a new ranking. Topics are printed in run order.
* A document's gain is its qrels gain; an unjudged document (and every document of a topic
  the qrels lack) counts 0, and the ranks padded after the run's last document count 0. A
  topic of the qrels missing from the run is not printed. A document listed twice counts
  twice.
* The costs (``-c``): ``element_type cost`` a line; a document's cost is its element type's
  (the run's second column), else ``--max_cost`` (default 1); padded ranks cost
  ``--max_cost`` too.

Residuals (``-r``)
------------------
The same five numbers again with unjudged and padded ranks at gain ``--max_gain`` and
unknown and padded costs at ``--min_cost`` (the best case); the residuals printed are best
case minus the numbers above.

Output
------
One line per topic and measure, in run order then measure order:
``topic<TAB>name<TAB>EU<TAB>ETU<TAB>EC<TAB>ETC<TAB>ED`` (then the five residuals with ``-r``),
each number with four decimals (``{:.4f}``). ``-n`` prints a heading line first.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = [
    "Metric", "DEFAULT_METRICS", "parse_metric_line", "c_vector", "score", "read_qrels",
    "read_costs", "read_run", "report", "HEADER", "HEADER_RESIDUALS",
]

HEADER = "Topic\tMetric\tEU\tETU\tEC\tETC\tED"
HEADER_RESIDUALS = HEADER + "\tResEU\tResETU\tResEC\tResETC\tResED"

KINDS = ("P", "RBP", "NDCG", "RR", "AP", "INST", "INSQ")

#: class name in a metrics file -> (kind, default argument or None when one is required)
CLASSES = {
    "PrecisionCWLMetric": ("P", 10),
    "RBPCWLMetric": ("RBP", 0.9),
    "NDCGCWLMetric": ("NDCG", None),
    "RRCWLMetric": ("RR", None),
    "APCWLMetric": ("AP", None),
    "INSTCWLMetric": ("INST", 1.0),
    "INSQCWLMetric": ("INSQ", 1.0),
}


@dataclass(frozen=True)
class Metric:
    """One C/W/L measure: its ``kind`` (one of :data:`KINDS`) and parameter."""

    kind: str
    param: float | int = 0

    @property
    def name(self) -> str:
        p = self.param
        return {"P": f"P@{p}", "RBP": f"RBP@{p}", "NDCG": f"NDCG-k@{p}", "RR": "RR",
                "AP": "AP", "INST": f"INST-T={p}", "INSQ": f"INSQ-T={p}"}[self.kind]


DEFAULT_METRICS = (
    Metric("P", 1), Metric("P", 2), Metric("P", 3), Metric("P", 4), Metric("P", 5),
    Metric("P", 10), Metric("RBP", 0.2), Metric("RBP", 0.4), Metric("RBP", 0.8),
    Metric("NDCG", 5), Metric("NDCG", 10), Metric("RR"), Metric("AP"),
    Metric("INST", 1.0), Metric("INST", 2.0), Metric("INST", 3.0),
)


def parse_metric_line(line: str) -> Metric:
    """``ClassName(args)`` -> :class:`Metric`; ValueError when it is not one qafast knows."""
    parts = line.strip().split("(")
    if len(parts) < 2:
        raise ValueError(f"{line.strip()!r} is not ClassName(arguments)")
    class_name = parts[0]
    args = []
    for value in parts[-1][:-1].split(","):
        if value == "":
            continue
        args.append(float(value) if "." in value else int(value))
    if class_name not in CLASSES:
        raise ValueError(f"{class_name!r} is not a measure qafast computes "
                         f"(it computes {', '.join(CLASSES)})")
    kind, default = CLASSES[class_name]
    if kind in ("RR", "AP"):
        if args:
            raise ValueError(f"{class_name} takes no argument")
        return Metric(kind)
    if args and len(args) == 1:
        return Metric(kind, args[0])
    if args or default is None:
        raise ValueError(f"{class_name} takes one argument")
    return Metric(kind, default)


def c_vector(metric: Metric, gains: np.ndarray) -> np.ndarray:
    """The continuation probabilities of ``metric`` over ``gains`` (one per rank)."""
    kind, p = metric.kind, metric.param
    depth = len(gains)
    ranks = range(1, depth + 1)
    if kind == "P":
        return np.array([1.0 if r < p else 0.0 for r in ranks])
    if kind == "RBP":
        return np.full(depth, float(p))
    if kind == "NDCG":
        return np.array([math.log(r + 1, 2.0) / math.log(r + 2, 2.0) if r < p else 0.0
                         for r in ranks])
    if kind == "RR":
        c = np.zeros(depth)
        for i in range(depth):
            if gains[i] > 0:
                break
            c[i] = 1.0
        return c
    if kind == "AP":
        # each tail sum is numpy's (pairwise) sum of the slice, as cwl_eval computes it
        terms = np.array([gains[i] / (i + 1) for i in range(depth)])
        c = np.zeros(depth)
        for i in range(depth - 1):
            top = np.sum(terms[i + 1:])
            if top > 0.0:
                c[i] = top / np.sum(terms[i:])
        return c
    if kind == "INST":
        summed = np.cumsum(gains)
        c = np.empty(depth)
        for i in range(depth):
            wanted = p - summed[i]  # the gain still wanted after rank i + 1
            c[i] = (((i + 1.0) + p + wanted - 1.0) / ((i + 1.0) + p + wanted)) ** 2.0
        return c
    if kind == "INSQ":
        return np.array([(((r + 0.0) + (2.0 * p) - 1.0) / ((r + 0.0) + (2.0 * p))) ** 2.0
                         for r in ranks])
    raise ValueError(kind)


def score(metric: Metric, gains: np.ndarray, costs: np.ndarray) -> tuple[float, ...]:
    """``(EU, ETU, EC, ETC, ED)`` of ``metric`` over gains and costs of equal length.

    The arithmetic is numpy's, step for step as cwl_eval does it (its cumulative products,
    pairwise sums and dot products), so that each number rounds, and signs its zeros, alike.
    """
    if len(gains) == 0:
        raise ValueError("the depth must be at least 1")
    c = c_vector(metric, gains)
    reach = np.concatenate([[1.0], np.cumprod(c[:-1])])
    first = 1.0 / np.sum(reach)
    w = np.concatenate([[first], reach[1:] * first])
    stop = np.cumprod(np.concatenate([[1.0], c[:-1]])) * (1.0 - c)
    return (float(np.dot(w, gains)), float(np.dot(stop, np.cumsum(gains))),
            float(np.dot(w, costs)), float(np.dot(stop, np.cumsum(costs))),
            float(1.0 / w[0]))


def _fill(values: list[float | None], depth: int, missing: float) -> np.ndarray:
    out = [missing if v is None else v for v in values[:depth]]
    return np.array(out + [missing] * (depth - len(out)), dtype=np.float64)


def measure(metric: Metric, gains: list[float | None], costs: list[float | None], *,
            depth: int = 1000, residuals: bool = False, max_gain: float = 1.0,
            max_cost: float = 1.0, min_cost: float = 1.0) -> tuple[float, ...]:
    """The five numbers (ten with ``residuals``) of one topic; ``None`` is unjudged/no cost."""
    worst = score(metric, _fill(gains, depth, 0.0), _fill(costs, depth, max_cost))
    if not residuals:
        return worst
    best = score(metric, _fill(gains, depth, max_gain), _fill(costs, depth, min_cost))
    return worst + tuple(b - w for b, w in zip(best, worst))


def read_qrels(text: str) -> dict[str, dict[str, float]]:
    """``{topic: {docno: gain}}`` of a qrels file's text (the last gain of a pair wins)."""
    qrels: dict[str, dict[str, float]] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 4:
            raise ValueError(f"{line!r}: a qrels line is topic, unused, docno, gain")
        qrels.setdefault(parts[0], {})[parts[2]] = float(parts[3])
    return qrels


def read_costs(text: str) -> dict[str, float]:
    """``{element_type: cost}`` of a cost file's text."""
    costs = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) != 2:
            raise ValueError(f"{line!r}: a cost line is element_type cost")
        costs[parts[0]] = float(parts[1])
    return costs


def read_run(text: str) -> list[tuple[str, list[tuple[str, str]]]]:
    """The run's rankings: ``[(topic, [(docno, element_type), ...]), ...]`` in file order,
    a new ranking each time the topic changes."""
    rankings: list[tuple[str, list[tuple[str, str]]]] = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) != 6:
            raise ValueError(f"{line!r}: a run line has six columns")
        topic, element_type, docno = parts[0], parts[1], parts[2]
        if not rankings or rankings[-1][0] != topic:
            rankings.append((topic, []))
        rankings[-1][1].append((docno, element_type))
    return rankings


def report(qrels_text: str, run_text: str, *, costs_text: str | None = None,
           metrics: tuple[Metric, ...] = DEFAULT_METRICS, colnames: bool = False,
           residuals: bool = False, max_gain: float = 1.0, min_gain: float = 0.0,
           max_cost: float = 1.0, min_cost: float = 1.0, depth: int = 1000) -> str:
    """What ``cwl-eval`` prints for these files' texts and options."""
    qrels = read_qrels(qrels_text)
    for judged in qrels.values():
        for gain in judged.values():
            if gain > max_gain or gain < min_gain:
                raise ValueError(f"gain {gain} outside [{min_gain}, {max_gain}]")
    cost_of = read_costs(costs_text) if costs_text is not None else {}
    lines = []
    if colnames:
        lines.append(HEADER_RESIDUALS if residuals else HEADER)
    for topic, ranking in read_run(run_text):
        judged = qrels.get(topic, {})
        gains = [judged.get(doc) for doc, _ in ranking]
        costs = [cost_of.get(kind) for _, kind in ranking]
        for metric in metrics:
            if metric.kind == "INST":
                filled = _fill(gains, depth, 0.0)
                best = _fill(gains, depth, max_gain) if residuals else filled
                if min(filled.min(), best.min()) < 0.0 or max(filled.max(), best.max()) > 1.0:
                    raise ValueError(f"{metric.name} takes gains from 0 to 1")
            values = measure(metric, gains, costs, depth=depth, residuals=residuals,
                             max_gain=max_gain, max_cost=max_cost, min_cost=min_cost)
            lines.append("\t".join([topic, metric.name] + [f"{v:.4f}" for v in values]))
    return "".join(line + "\n" for line in lines)


# ---------------------------------------------------------------------------------------------
# ir_measures' cwl_eval provider: the C/W/L measures of qafast.evaluate
#
# ir_measures (0.4.3) hands each query's ranking (score descending) to cwl_eval's measure
# classes with fixed settings: every ranking is measured over IR_DEPTH ranks, every cost is 1,
# and the value is the expected utility per document, EU = W . gains. Its gains come from
# the qrels grades, a negative grade counting 0: RBP takes ``rel`` (gain 1 at a grade of at
# least rel, else 0); the others take ``min_rel`` and ``max_rel`` (the grade clipped to
# [min_rel, max_rel], then (grade - min_rel) / (max_rel - min_rel)). An unjudged document, and
# each padded rank, has gain 0. Beyond the command line's models it has BPM (static), whose
# C is 1 while the gain summed so far is below T and the rank is below K, and the NERR
# family of Azzopardi, Mackenzie and Moffat (ICTIR 2021), equations 8 to 11.

#: the ranks every ranking is measured over (the provider's rankings' max_n)
IR_DEPTH = 1000
#: the models the provider adds, after KINDS
IR_KINDS = ("BPM", "NERR8", "NERR9", "NERR10", "NERR11")


def ir_gains(grades: list[int | None], *, rel: int | None = None, min_rel: int = 0,
             max_rel: int = 1) -> list[float]:
    """The gain at each of the IR_DEPTH ranks of a ranking whose documents have ``grades``
    (None: unjudged)."""
    gains = []
    for grade in grades[:IR_DEPTH]:
        if grade is None:
            gains.append(0.0)
            continue
        grade = max(grade, 0)
        if rel is not None:
            gains.append(1.0 if grade >= rel else 0.0)
        else:
            grade = min(max(grade, min_rel), max_rel)
            gains.append((grade - min_rel) / (max_rel - min_rel))
    return gains + [0.0] * (IR_DEPTH - len(gains))


def ir_c_vector(kind: str, gains: list[float], k: int, x: float) -> list[float]:
    """C of ``kind`` (one of KINDS or IR_KINDS; NDCG is SDCG) with cut-off ``k`` and
    parameter ``x`` (p or T), over ``gains``."""
    if kind in ("RBP", "NDCG", "INST", "INSQ"):
        metric = Metric(kind, k if kind == "NDCG" else x)
        return [float(v) for v in c_vector(metric, np.array(gains))]
    c = []
    total = 0.0
    going = True
    for i, g in enumerate(gains):
        rank = i + 1
        if kind == "BPM":
            total = total + g if i else g
            going = going and total < x and rank < k
            c.append(1.0 if going else 0.0)
        elif kind == "NERR8":
            c.append(1.0 - g if rank < k else 0.0)
        elif kind == "NERR9":
            c.append(rank / (rank + 1.0) * (1.0 - g) if rank < k else 0.0)
        elif kind == "NERR10":
            c.append(x * (1.0 - g))
        elif kind == "NERR11":
            c.append(((rank + 2.0 * x - 1.0) / (rank + 2.0 * x)) ** 2.0 * (1.0 - g))
        else:
            raise ValueError(kind)
    return c


def ir_expected_utility(kind: str, gains: list[float], k: int = 0, x: float = 0.0) -> float:
    """EU = W . gains of ``kind`` over the IR_DEPTH ``gains``: W as :func:`score` builds it,
    the dot product summed in rank order."""
    c = ir_c_vector(kind, gains, k, x)
    reach = [1.0]
    for i in range(1, len(c)):
        reach.append(reach[-1] * c[i - 1])
    first = 1.0 / float(np.sum(np.array(reach)))  # numpy's pairwise sum, as cwl_eval's
    total = first * gains[0]
    for i in range(1, len(gains)):
        total += reach[i] * first * gains[i]
    return total
