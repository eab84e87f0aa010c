"""A drop-in for pytrec_eval's ``RelevanceEvaluator``.

Its numbers equal pytrec-eval-terrier 0.5.11's, which wraps trec_eval 9.0.8: scores are
rounded to float32 before ranking (so two doubles that round to one float32 tie, and the tie
goes to the larger docno), and the recall cut points of ``iprec_at_recall`` and ``11pt_avg``
round as ``(long)(p * R + 0.9)``. :func:`qafast.evaluate` follows trec_eval 10.0 instead.
"""

from __future__ import annotations

from typing import Iterable, Mapping

import re

from ._measures import NICKNAMES_V9, UnknownMeasureError, trec_columns
from .ranking import Qrels, _as_run, _Evaluation

__all__ = ["RelevanceEvaluator", "compute_aggregated_measure", "parse_qrel", "parse_run",
           "supported_measures", "supported_nicknames"]

#: The measure families pytrec_eval supports (trec_eval 9.0.8's).
supported_measures = frozenset({
    "11pt_avg", "G", "P", "Rndcg", "Rprec", "Rprec_mult", "binG", "bpref", "gm_bpref", "gm_map",
    "infAP", "iprec_at_recall", "map", "map_cut", "ndcg", "ndcg_cut", "ndcg_rel",
    "num_nonrel_judged_ret", "num_q", "num_rel", "num_rel_ret", "num_ret", "recall",
    "recip_rank", "relative_P", "relstring", "runid", "set_F", "set_P", "set_map", "set_recall",
    "set_relative_P", "success", "utility",
})
supported_nicknames = frozenset({"official", "set", "all_trec"})

# pytrec_eval reports these per query with placeholder values
_PLACEHOLDERS = {"runid": 0.0, "num_q": 1.0, "relstring": 0.0}


_PARAMS = r"[\._]([0-9]+(\.[0-9]+)?(,[0-9]+(\.[0-9]+)?)*)"


def _combine_measures(measures) -> list[str]:
    """pytrec_eval's reading of a measure set: nicknames expand to families; ``fam.p``,
    ``fam_p`` and ``fam.p,q`` collect parameters per family, and a family given parameters
    anywhere keeps only those (``{"official", "P.5"}`` yields ``P_5`` alone)."""
    expanded: set[str] = set()
    for m in measures:
        if not isinstance(m, str):
            raise TypeError(f"measures must be str, got {type(m).__name__}: {m!r}")
        expanded.update(NICKNAMES_V9[m] if m in supported_nicknames else (m,))
    params: dict[str, set[str]] = {}
    for m in expanded:
        if m in supported_measures:
            params.setdefault(m, set())
            continue
        for family in supported_measures:
            match = re.match(re.escape(family) + _PARAMS, m)
            if match:
                params.setdefault(family, set()).update(match.group(1).split(","))
                break
        else:
            raise ValueError(f"unsupported measure {m}")
    return [f"{fam}.{','.join(sorted(p))}" if p else fam for fam, p in params.items()]


class RelevanceEvaluator:
    """Evaluate runs against fixed relevance judgments, as ``pytrec_eval.RelevanceEvaluator``.

    Parameters
    ----------
    query_relevance : dict
        ``{query_id: {doc_id: grade}}``; queries with no judgments are dropped, as
        pytrec-eval-terrier does.
    measures : iterable of str
        trec_eval measure names, e.g. ``{"map", "ndcg_cut.10", "P_5", "official"}``.
    relevance_level : int, default 1
        Lowest grade counted as relevant; must be at least 1.
    judged_docs_only_flag : bool, default False
        Drop unjudged documents before measuring (trec_eval ``-J``).

    Examples
    --------
    >>> import qafast
    >>> evaluator = qafast.RelevanceEvaluator({"q1": {"d1": 1, "d2": 0}}, {"map", "P.1"})
    >>> evaluator.evaluate({"q1": {"d1": 0.2, "d2": 0.7}})
    {'q1': {'map': 0.5, 'P_1': 0.0}}
    """

    def __init__(self, query_relevance: Mapping, measures: Iterable[str],
                 relevance_level: int = 1, judged_docs_only_flag: bool = False):
        if isinstance(measures, str):
            measures = [measures]
        if not isinstance(relevance_level, int) or isinstance(relevance_level, bool):
            raise TypeError("relevance_level must be an int")
        if relevance_level < 1:
            raise ValueError(f"relevance_level must be at least 1, not {relevance_level}")
        try:
            columns = trec_columns(_combine_measures(measures), version="9.0.8")
        except UnknownMeasureError as e:
            raise ValueError(str(e)) from None
        # trec_eval 9.0.8 names relstring without its parameter
        columns = [c if c.family != "relstring" else type(c)("relstring", "relstring", x=c.x,
                   values=c.values, order=c.order) for c in columns]
        self._columns = sorted(columns, key=lambda c: c.order)
        self._numeric = [c for c in self._columns if c.family not in _PLACEHOLDERS]
        if not isinstance(query_relevance, Mapping):
            raise TypeError("query_relevance must be a dict {query_id: {doc_id: grade}}")
        self._qrels = Qrels.from_dict({q: d for q, d in query_relevance.items() if d})
        self.relevance_level = relevance_level
        self.judged_docs_only_flag = bool(judged_docs_only_flag)

    def evaluate(self, scores: Mapping) -> dict:
        """Per-query measures of a run ``{query_id: {doc_id: score}}``.

        Queries absent from the judgments are skipped; so are judged queries absent from
        the run.
        """
        run = _as_run(scores)
        if not len(run) or not len(self._qrels):
            return {}
        qindex = self._qrels.query_index()
        if not any(q in qindex for q in run.query_ids):
            return {}
        ev = _Evaluation(self._qrels, run, relevance_level=self.relevance_level,
                         judged_only=self.judged_docs_only_flag, max_docs=None, queries="run",
                         workers=1, float32_scores=True, v9=True, keep_empty=True)
        values = ev.values(self._numeric).tolist() if self._numeric else [[]] * len(ev.ids)
        names = [c.name for c in self._numeric]
        order = self._columns
        out = {}
        for q, row in zip(ev.ids, values):
            d = dict(zip(names, row))
            if len(order) != len(names):
                d = {c.name: d[c.name] if c.name in d else _PLACEHOLDERS[c.family]
                     for c in self._columns}
            out[q] = d
        # pytrec_eval returns queries in the run's order
        return {q: out[q] for q in run.query_ids if q in out}


def compute_aggregated_measure(measure: str, values: Iterable[float]) -> float:
    """Summarise per-query values as trec_eval does: a sum for ``num_*`` counts, the geometric
    mean for ``gm_*`` (whose per-query values are logs), the mean otherwise."""
    import math

    vals = list(values)
    if measure.startswith("num_"):
        return float(sum(vals))
    if not vals:
        return 0.0
    if measure.startswith("gm_"):
        return math.exp(sum(vals) / len(vals))
    return sum(vals) / len(vals)


def parse_qrel(f_qrel) -> dict:
    """``{query_id: {doc_id: grade}}`` from an open TREC qrels file (or any iterable of lines)."""
    return _parse(f_qrel, Qrels)


def parse_run(f_run) -> dict:
    """``{query_id: {doc_id: score}}`` from an open TREC run file (or any iterable of lines)."""
    from .ranking import Run

    return _parse(f_run, Run)


def _parse(lines, cls) -> dict:
    data = "".join(line if isinstance(line, str) else line.decode() for line in lines)
    return cls.from_file(data.encode()).to_dict()
