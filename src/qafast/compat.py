"""A drop-in for pytrec_eval's ``RelevanceEvaluator``.

Its numbers equal pytrec-eval-terrier 0.5.11's, which wraps trec_eval 9.0.8: scores are
rounded to float32 before ranking (so two doubles that round to one float32 tie, and the tie
goes to the larger docno), and the recall cut points of ``iprec_at_recall`` and ``11pt_avg``
round as ``(long)(p * R + 0.9)``. :func:`qafast.evaluate` follows trec_eval 10.0 instead.
"""

from __future__ import annotations

import re
import warnings
from collections import defaultdict
from typing import Iterable, Mapping

from ._engine import Evaluation
from ._measure_parser import Column, UnknownMeasureError, columns_for
from ._measures import FAMILIES, NICKNAMES_V9, TREC_ORDER, V10_ONLY
from ._ranked import Qrels, as_run
from .errors import InputError, InputTypeError

__all__ = ["RelevanceEvaluator", "compute_aggregated_measure", "parse_qrel", "parse_run",
           "supported_measures", "supported_nicknames"]

#: The measure families pytrec_eval supports (trec_eval 9.0.8's).
supported_measures = frozenset(TREC_ORDER) - V10_ONLY
supported_nicknames = frozenset({"official", "set", "all_trec"})

# pytrec_eval reports these per query with placeholder values
_PLACEHOLDERS = {"runid": 0.0, "num_q": 1.0, "relstring": 0.0}

# pytrec_eval's reading of "family.params" / "family_params": digits and dots only, matched
# at the start of the name (so "utility.2,-1,0,0" reads as "utility.2")
_PARAMS = r"[\._]([0-9]+(\.[0-9]+)?(,[0-9]+(\.[0-9]+)?)*)"


def _combine_measures(measures) -> dict[str, list[str]]:
    """pytrec_eval's reading of a measure set: nicknames expand to families; ``fam.p``,
    ``fam_p`` and ``fam.p,q`` collect parameters per family, and a family given parameters
    anywhere keeps only those (``{"official", "P.5"}`` yields ``P_5`` alone). Returns each
    family's distinct parameter strings in string order, as pytrec_eval passes them on
    (``{"set_F.10", "set_F.2"}`` is ``set_F.10,2``)."""
    expanded: set[str] = set()
    for m in measures:
        if not isinstance(m, str):
            raise InputTypeError(f"measures must be str, got {type(m).__name__}: {m!r}")
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
            raise InputError(f"unsupported measure {m}")
    return {fam: sorted(p) for fam, p in params.items()}


def _columns_v9(requests: dict[str, list[str]]) -> tuple[list[Column], dict[str, float]]:
    """trec_eval 9.0.8's columns for pytrec_eval's combined requests, in its measure order,
    named as pytrec_eval names them (``set_F``, ``utility``, ``11pt_avg`` and ``relstring``
    without their parameters), and the columns pytrec_eval fills with a constant."""
    columns: list[Column] = []
    fixed: dict[str, float] = {}
    for fam in TREC_ORDER:
        if fam not in requests:
            continue
        params = requests[fam]
        kind = FAMILIES[fam].params
        joined = ",".join(params)
        if fam in _PLACEHOLDERS:
            fixed[fam] = _PLACEHOLDERS[fam]
            columns.append(Column(fam, fam))
        elif not params or kind == "none":
            columns.extend(columns_for(fam, None, fam))  # a parameter of map etc. is ignored
        elif kind == "cut":
            # trec_eval 9.0.8 aborts (and pytrec_eval with it) on a repeated or non-positive
            # cutoff: refused here with a message instead
            columns.extend(columns_for(fam, joined, f"{fam}.{joined}"))
        elif kind == "fcut":
            cols = columns_for(fam, joined, f"{fam}.{joined}")
            if len({c.x for c in cols}) != len(cols):
                raise UnknownMeasureError(
                    f"measure {fam}.{joined}: a cutoff is repeated (pytrec_eval aborts)")
            columns.extend(cols)
        elif kind == "pairs":
            raise UnknownMeasureError(
                f"measure {fam}.{joined}: {fam} takes level=gain pairs, which pytrec_eval's "
                "measure names cannot carry (pytrec_eval aborts)")
        elif fam == "utility" and len(params) != 4:
            warnings.warn(
                f"utility.{joined}: trec_eval 9.0.8 needs 4 coefficients (pytrec_eval reads "
                "digits only, so a negative coefficient ends the list, and merges repeated "
                "ones); like pytrec_eval, every utility value is 0.0", RuntimeWarning,
                stacklevel=3)
            fixed[fam] = 0.0
            columns.append(Column(fam, fam))
        else:
            values = tuple(float(p) for p in params)
            # set_F takes its first parameter, in pytrec_eval's string order
            columns.append(Column(fam, fam, x=values[0] if FAMILIES[fam].arity == 1 else 0.0,
                                  values=values))
    return columns, fixed


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
            raise InputTypeError("relevance_level must be an int")
        if relevance_level < 1:
            raise InputError(f"relevance_level must be at least 1, not {relevance_level}")
        try:
            columns, self._fixed = _columns_v9(_combine_measures(measures))
        except UnknownMeasureError as e:
            raise InputError(str(e)) from None
        self._columns = columns  # in trec_eval's order, each family's parameters sorted
        self._numeric = [c for c in self._columns if c.name not in self._fixed]
        if not isinstance(query_relevance, Mapping):
            raise InputTypeError("query_relevance must be a dict {query_id: {doc_id: grade}}")
        self._qrels = Qrels.from_dict({q: d for q, d in query_relevance.items() if d})
        self.relevance_level = relevance_level
        self.judged_docs_only_flag = bool(judged_docs_only_flag)

    def evaluate(self, scores: Mapping) -> dict:
        """Per-query measures of a run ``{query_id: {doc_id: score}}``.

        Queries absent from the judgments are skipped; so are judged queries absent from
        the run.
        """
        run = as_run(scores)
        if not len(run) or not len(self._qrels):
            return {}
        qindex = self._qrels.query_index()
        if not any(q in qindex for q in run.query_ids):
            return {}
        ev = Evaluation(self._qrels, run, relevance_level=self.relevance_level,
                         judged_only=self.judged_docs_only_flag, max_docs=None, queries="run",
                         workers=1, float32_scores=True, v9=True, keep_empty=True)
        values = ev.values(self._numeric).tolist() if self._numeric else [[]] * len(ev.ids)
        names = [c.name for c in self._numeric]
        fixed = self._fixed
        out = {}
        for q, row in zip(ev.ids, values):
            d = dict(zip(names, row))
            if fixed:
                d = {c.name: fixed[c.name] if c.name in fixed else d[c.name]
                     for c in self._columns}
            out[q] = d
        # pytrec_eval returns queries in the run's order
        return {q: out[q] for q in run.query_ids if q in out}


def compute_aggregated_measure(measure: str, values) -> float:
    """Summarise per-query values as pytrec_eval does, with the same numpy operations so that
    the result is the same to the last bit: a sum for ``num_*`` counts, the geometric mean for
    ``gm_*`` (whose per-query values are logs), the mean otherwise."""
    import numpy as np

    if measure.startswith("num_"):
        return float(np.sum(values))
    if measure.startswith("gm_"):
        return float(np.exp(np.sum(values) / len(values)))
    return float(np.mean(values))


def parse_qrel(f_qrel) -> dict:
    """``{query_id: {doc_id: grade}}`` from an open TREC qrels file (or any iterable of lines),
    as ``pytrec_eval.parse_qrel`` returns it (a ``defaultdict(dict)`` of int grades), read by
    qafast's TREC reader.

    Raises
    ------
    ValueError
        A malformed line or a document judged twice for one query, naming the line.
    """
    return _parse(f_qrel, is_run=False)


def parse_run(f_run) -> dict:
    """``{query_id: {doc_id: score}}`` from an open TREC run file (or any iterable of lines),
    as ``pytrec_eval.parse_run`` returns it (a ``defaultdict(dict)`` of float scores), read by
    qafast's TREC reader.

    Raises
    ------
    ValueError
        A malformed line, a NaN score, or a document retrieved twice for one query, naming
        the line.
    """
    return _parse(f_run, is_run=True)


# text handed to the reader per call: its tables stay in cache, and no array outgrows a block
_BLOCK_CHARS = 1 << 20


def _blocks(lines, size: int):
    """The text of an open file (binary or text, read from where it stands) or of any
    iterable of lines, as UTF-8 blocks of whole lines."""
    read = getattr(lines, "read", None)
    carry = b""
    if read is not None:
        while True:
            data = read(size)
            if isinstance(data, str):
                data = data.encode("utf-8")
            if not data:
                break
            data = carry + data if carry else bytes(data)
            cut = data.rfind(b"\n") + 1
            if cut:
                yield data[:cut]
            carry = data[cut:]
        if carry:
            yield carry
        return
    block: list = []
    total = 0
    for line in lines:
        if isinstance(line, (bytes, bytearray)):
            line = bytes(line).decode("utf-8")
        if not line.endswith("\n"):
            line += "\n"  # pytrec_eval takes each item as one line
        block.append(line)
        total += len(line)
        if total >= size:
            yield "".join(block).encode("utf-8")
            block, total = [], 0
    if block:
        yield "".join(block).encode("utf-8")


def _parse(lines, *, is_run: bool) -> dict:
    import numpy as np

    from . import _kernels
    from .io.trec import TrecFormatError, read_trec_qrels, read_trec_run

    if isinstance(lines, (str, bytes)):
        raise InputTypeError("pass an open TREC file or an iterable of its lines; to read a file "
                             "by path use qafast.Run.from_file or qafast.Qrels.from_file")
    name = getattr(lines, "name", None)
    name = name if isinstance(name, str) else "<lines>"
    reader = read_trec_run if is_run else read_trec_qrels
    out: defaultdict = defaultdict(dict)
    no_scores = np.zeros(0, dtype=np.float64)
    no_grades = np.zeros(0, dtype=np.int32)
    lines_before = 0
    for block in _blocks(lines, _BLOCK_CHARS):
        try:
            cols = reader(block)
        except TrecFormatError as e:
            line = None if e.line is None else lines_before + e.line
            raise TrecFormatError(e.message, path=name, line=line) from None
        assert cols.doc_ids is not None and cols.doc_index is not None  # documents interned
        dup = _kernels.nested_dict(out, cols.query_ids, cols.query_index, cols.doc_ids,
                                   cols.doc_index, cols.values if is_run else no_scores,
                                   no_grades if is_run else cols.values)
        if dup >= 0:
            q = cols.query_ids[int(cols.query_index[dup])]
            d = cols.doc_ids[int(cols.doc_index[dup])]
            verb = "retrieves" if is_run else "judges"
            raise InputError(f"{name}, line {lines_before + int(cols.line_numbers[dup])}: "
                             f"query {q!r} {verb} document {d!r} twice")
        lines_before += block.count(b"\n") + (not block.endswith(b"\n"))
    return out
