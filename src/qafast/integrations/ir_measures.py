"""An ir_measures provider backed by qafast, for ir_measures and PyTerrier users.

``ir_measures`` sends each measure to the first of its providers that supports it
(pytrec_eval, cwl_eval, gdeval, ...). :func:`register` puts qafast's provider first (after
ir_measures' runtime provider, which only answers measures defined at run time), so that
``ir_measures.calc_aggregate``, ``ir_measures.iter_calc``, ``ir_measures.evaluator`` and
PyTerrier's ``pt.Experiment`` (which evaluates through ``ir_measures.evaluator``) take
qafast's numbers for every measure qafast computes, and the other providers' for the rest.
Inside ``with patch():`` the same holds for the duration of a block.

The provider computes each query's value with :func:`qafast.evaluate`, with the definition
the measure has in ir_measures (``P@5`` is trec_eval's, ``ERR@10`` gdeval.pl's, ``Judged@10``
ir_measures' own). The rest is ir_measures' own behaviour, unchanged:

- queries of the qrels that the run lacks get the measure's default value (0), and a query
  of the run that the qrels lack gets no value;
- ``calc_aggregate`` combines the per-query values with the measure's own aggregator (the
  mean, or the sum for the counts).

Two values differ from the providers ir_measures picks by default, and
``docs/known-differences.md`` lists both: ``ERR@k`` is gdeval.pl's number at full
precision, where gdeval.pl prints 5 decimals; and ``IPrec@r`` keeps ir_measures' recall
points (trec_eval 9.0.8's, as pytrec_eval computes them). The diversity measures
(``alpha_nDCG@20``, ``ERR_IA@20``, ...) read the qrels' ``iteration`` as the subtopic, as
the pyndeval provider does, and give its numbers; where one call asks for measures of
several pyndeval invocations (different ``rel``, ``alpha`` or ``beta``), ir_measures 0.4.3
scores the second and later ones 0 and qafast does not.

``Accuracy`` keeps the values ir_measures gives it. Its accuracy provider gives no value
for a query without a relevant document in the top k: where a call asks only for
``Accuracy`` measures, ir_measures leaves such a query out of the mean, and where it asks
for others too (ir_measures then combines providers, which fills in the defaults) the query
scores 0; qafast's provider does the same in both cases. Where the accuracy provider divides
by zero (relevant documents and no non-relevant one in the top k) the value is 1; ties in
score are ranked by document id, where it keeps the run's order; and ``Accuracy`` with
``rel`` 0 or less (at which unjudged documents count as relevant) is left to it.

The provider class is built on first access, so importing this module does not import
ir_measures.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from .._measure_parser import parse_measures
from .._measures import SUBTOPIC_FAMILIES
from ..diversity import DiversityQrels
from ..errors import QafastError
from ..ranking import evaluate

__all__ = ["QafastProvider", "patch", "register", "unregister"]  # noqa: F822 - QafastProvider is built on first access

#: ir_measures' registry key and the provider's NAME
NAME = "qafast"

_CLASS: Any = None


def _ir_measures():
    try:
        import ir_measures
    except ImportError:
        raise ImportError("qafast's ir_measures provider needs ir_measures "
                          "(pip install ir-measures)") from None
    return ir_measures


def _supported(measure) -> bool:
    """Whether qafast computes ``measure`` (an ir_measures measure object) as ir_measures
    defines it."""
    try:
        columns = parse_measures([measure])
    except (QafastError, ValueError, TypeError):
        return False
    if columns and columns[0].family == "accuracy" and _level(measure) <= 0:
        return False  # see _hits_column
    # a measure qafast reads under another tool's definition is not ir_measures' measure
    return len(columns) == 1 and columns[0].tool == "ir_measures"


def _level(measure) -> int:
    """The relevance level of an ir_measures measure that takes ``rel`` (1 by default)."""
    rel = measure.params.get("rel")
    return 1 if rel is None else int(rel)


def _hits_column(measure) -> str:
    """For an ``Accuracy`` measure, the name of a column that is 0 exactly for the queries
    its accuracy provider gives no value: no document graded at least ``rel`` is in the
    top k. (At ``rel`` 0 or less that provider counts unjudged documents as relevant, which
    no other measure does: such measures are left to it.)"""
    cutoff = measure.params.get("cutoff")
    rel = _level(measure)
    return f"Success(rel={rel})@{cutoff}" if cutoff else f"NumRet(rel={rel})"


def _build() -> type:
    ir_measures = _ir_measures()
    from ir_measures.providers import Evaluator, Provider
    from ir_measures.util import Metric, QrelsConverter, RunConverter

    class QafastEvaluator(Evaluator):
        """Evaluates runs against one set of qrels, read once."""

        def __init__(self, measures, qrels):
            measures = list(measures)
            self._qrels: Any
            if any(c.family in SUBTOPIC_FAMILIES for c in parse_measures(measures)):
                # the diversity measures read each judgment's subtopic: the qrels' iteration
                rows = list(QrelsConverter(qrels).as_namedtuple_iter())
                self._qrels = DiversityQrels(rows)
                self._queries = {r.query_id for r in rows}
            else:
                self._qrels = QrelsConverter(qrels).as_dict_of_dict()
                self._queries = self._qrels.keys()
            super().__init__(measures, self._queries)
            #: Accuracy's measures, each with the column telling which queries have a value
            self._accuracy = {m: _hits_column(m) for m in measures
                              if m.NAME == "Accuracy"}
            #: the measures that get no default value where they give none: Accuracy's, when
            #: they are all the call asks for (ir_measures then calls the accuracy provider
            #: alone, whose evaluator fills in no default; with other measures it combines
            #: providers, and the combination fills them in)
            self._no_default = (set(self._accuracy) if len(self._accuracy) == len(measures)
                                else set())

        def iter_calc(self, run) -> Iterator[Any]:
            """ir_measures' Evaluator.iter_calc, but for the measures of ``_no_default``."""
            expected = {(m, q) for m in self.measures if m not in self._no_default
                        for q in self.qrel_qids}
            for metric in self._iter_calc(run):
                expected.discard((metric.measure, metric.query_id))
                yield metric
            for measure, query_id in sorted(expected, key=lambda x: (str(x[0]), x[1])):
                yield Metric(query_id=query_id, measure=measure, value=measure.DEFAULT)

        def _iter_calc(self, run) -> Iterator[Any]:
            run = RunConverter(run).as_dict_of_dict()
            shared = {q: docs for q, docs in run.items() if q in self._queries and docs}
            if not shared or not self.measures:
                return
            # evaluate() reads ir_measures' measure objects, and keys its columns by them
            measures: Any = list(self.measures)
            hidden = sorted(set(self._accuracy.values()))
            values: dict[Any, dict[Any, float]] = evaluate(self._qrels, shared,
                                                           measures + hidden, per_query=True)
            for query_id, row in values.items():
                for measure in measures:
                    hits = self._accuracy.get(measure)
                    if hits is not None and row[hits] == 0:
                        continue  # no relevant document in the top k: no value
                    yield Metric(query_id=query_id, measure=measure, value=row[measure])

    class QafastProvider(Provider):
        """ir_measures' provider of every measure qafast computes.

        Examples
        --------
        >>> import ir_measures
        >>> from ir_measures import AP, nDCG
        >>> from qafast.integrations.ir_measures import QafastProvider
        >>> qrels = {"q1": {"d1": 1, "d2": 0, "d3": 2}}
        >>> run = {"q1": {"d1": 0.5, "d2": 0.9, "d3": 0.4}}
        >>> values = QafastProvider().calc_aggregate([AP, nDCG@2], qrels, run)
        >>> values[AP], values[nDCG@2]
        (0.5833333333333333, 0.23981246656813146)
        """

        NAME = NAME

        def supports(self, measure) -> bool:
            try:
                measure.validate_params()
            except (AssertionError, ValueError, TypeError):
                return False  # parameters ir_measures itself refuses for this measure
            return _supported(measure)

        def _evaluator(self, measures, qrels):
            measures = list(measures)
            unsupported = [m for m in measures if not _supported(m)]
            if unsupported:
                raise ValueError(f"qafast's provider does not compute {unsupported}")
            return QafastEvaluator(measures, qrels)

    QafastProvider.__module__ = __name__
    QafastEvaluator.__module__ = __name__
    del ir_measures
    return QafastProvider


def __getattr__(name: str):
    global _CLASS
    if name == "QafastProvider":
        if _CLASS is None:
            _CLASS = _build()
        return _CLASS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _pipeline():
    return _ir_measures().DefaultPipeline.providers


def register() -> Any:
    """Make qafast ir_measures' first provider, for the rest of the process.

    The provider is added to ``ir_measures.providers.registry`` as ``"qafast"`` and put at
    the head of ``ir_measures.DefaultPipeline`` (after the runtime provider, which answers
    only measures defined with ``ir_measures.define``). Calling it again changes nothing.

    Returns
    -------
    QafastProvider
        The registered provider.

    Examples
    --------
    >>> import ir_measures
    >>> from ir_measures import P, RR
    >>> from qafast.integrations.ir_measures import register, unregister
    >>> provider = register()
    >>> values = ir_measures.calc_aggregate([P@2, RR], {"q1": {"d1": 1}},
    ...                                     {"q1": {"d1": 0.2, "d2": 0.9}})
    >>> values[P@2], values[RR]
    (0.5, 0.5)
    >>> unregister()
    """
    ir_measures = _ir_measures()
    providers = _pipeline()
    for provider in providers:
        if getattr(provider, "NAME", None) == NAME:
            return provider
    provider = __getattr__("QafastProvider")()
    ir_measures.providers.register(provider)
    after = [i + 1 for i, p in enumerate(providers) if getattr(p, "NAME", None) == "runtime"]
    providers.insert(after[0] if after else 0, provider)
    return provider


def unregister() -> None:
    """Take qafast's provider out of ``ir_measures.DefaultPipeline`` and the registry."""
    ir_measures = _ir_measures()
    providers = _pipeline()
    providers[:] = [p for p in providers if getattr(p, "NAME", None) != NAME]
    ir_measures.providers.registry.pop(NAME, None)


@contextlib.contextmanager
def patch() -> Iterator[Any]:
    """Have ir_measures (and PyTerrier through it) use qafast inside a ``with`` block.

    Yields
    ------
    QafastProvider
        The provider, registered for the block; on leaving it, ir_measures' pipeline is as
        it was (unless qafast was registered already, which it leaves so).

    Examples
    --------
    >>> import ir_measures
    >>> from ir_measures import nDCG
    >>> from qafast.integrations.ir_measures import patch
    >>> with patch():
    ...     ir_measures.calc_aggregate([nDCG@10], {"q1": {"d1": 2}}, {"q1": {"d1": 1.0}})
    {nDCG@10: 1.0}
    """
    was_registered = any(getattr(p, "NAME", None) == NAME for p in _pipeline())
    provider = register()
    try:
        yield provider
    finally:
        if not was_registered:
            unregister()
