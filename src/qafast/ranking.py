"""Ranking measures exactly as trec_eval computes them: the public functions.

:class:`Qrels` and :class:`Run` hold relevance judgments and a system's scored documents in
encoded form (CSR arrays of integer document keys), so one ``Qrels`` serves many runs.
:func:`evaluate` computes any of trec_eval 10.0's measures over them, and
:func:`evaluate_runs` many runs against one qrels.

Ties follow trec_eval: documents are ranked by score descending, then by document id
descending in string (UTF-8 byte, ``strcmp``) order; integer document ids break ties in
numeric order, larger first. The order rows arrive in never matters.
"""

from __future__ import annotations

import os
from typing import Any, Iterable, Literal, Mapping, overload

from ._engine import (
    NoCommonQueryWarning,
    check_max_grades,
    check_options,
)
from ._measure_parser import parse_measures, reads_subtopics, with_collection_size
from ._measures import FAMILIES, NO_CUTOFF, TEXT_MEASURES
from ._progress import Progress
from ._ranked import Qrels, Run, as_qrels
from ._run_sources import per_query_values
from ._runfile import check_readable, evaluate_run_sources, is_run_source, source_size
from ._summaries import LEVEL_CEILING, column_summaries
from ._threads import closes_pools_on_interrupt, resolve_workers
from .errors import InputError

__all__ = ["MEASURE_FAMILIES", "NoCommonQueryWarning", "Qrels", "Run", "evaluate",
           "evaluate_runs"]

#: Measure families :func:`evaluate` accepts by their trec_eval-style names (trec_eval
#: 10.0's, plus qafast's own).
MEASURE_FAMILIES = frozenset(FAMILIES) - TEXT_MEASURES

#: What ``evaluate`` returns: ``{measure: value}``, or ``{query_id: {measure: value}}``
#: with ``per_query=True`` (query ids as the qrels and run give them: str, or int).
Summary = dict[str, float]
PerQuery = dict[Any, dict[str, float]]


@overload
def evaluate(qrels: Any, run: Any, measures: str | Iterable[str], *, relevance_level: int = ...,
             judged_only: bool = ..., max_docs: int | None = ...,
             queries: str = ..., per_query: Literal[False] = ...,
             workers: int = ...,
             progress: bool | None = ..., qrels_format: str = ...,
             collection_size: int = ...) -> Summary: ...
@overload
def evaluate(qrels: Any, run: Any, measures: str | Iterable[str], *, relevance_level: int = ...,
             judged_only: bool = ..., max_docs: int | None = ...,
             queries: str = ..., per_query: Literal[True],
             workers: int = ...,
             progress: bool | None = ..., qrels_format: str = ...,
             collection_size: int = ...) -> PerQuery: ...
@overload
def evaluate(qrels: Any, run: Any, measures: str | Iterable[str], *, relevance_level: int = ...,
             judged_only: bool = ..., max_docs: int | None = ...,
             queries: str = ..., per_query: bool,
             workers: int = ...,
             progress: bool | None = ..., qrels_format: str = ...,
             collection_size: int = ...) -> Summary | PerQuery: ...
@closes_pools_on_interrupt
def evaluate(qrels: Any, run: Any, measures: str | Iterable[str], *, relevance_level: int = 1,
             judged_only: bool = False, max_docs: int | None = None,
             queries: str = "run", per_query: bool = False,
             workers: int = 1,
             progress: bool | None = None, qrels_format: str = "qrels",
             collection_size: int = 0) -> Summary | PerQuery:
    """Evaluate a run against relevance judgments with trec_eval 10.0's definitions.

    Parameters
    ----------
    qrels : Qrels, dict, DataFrame, Arrow table or path
        Relevance judgments, ``{query_id: {doc_id: grade}}``, a TREC qrels file or a
        Parquet file (``query_id, doc_id, relevance`` columns). The diversity measures
        (``alpha_nDCG@20``, ``ERR_IA@20``, ...) read diversity qrels, with a subtopic per
        judgment: a :class:`qafast.DiversityQrels`, ``{query_id: {subtopic: {doc_id:
        grade}}}``, a DataFrame with an ``iteration`` column or ir_measures' ``Qrel`` tuples.
    run : Run, dict, DataFrame, Arrow table, path, bytes or binary file
        Retrieved documents, ``{query_id: {doc_id: score}}``, a TREC run file (a pipe,
        FIFO or file object is read once), or a ``pyarrow.Table``, ``RecordBatchReader``
        (an IPC stream's too), IPC file reader, Parquet file or directory (``query_id, doc_id, score`` columns; other names with
        :meth:`Run.from_arrow`), read a row group at a time when each query's rows are
        together. A TREC file whose queries' lines are together is evaluated as it is
        read, in memory that does not grow with it; one whose queries' lines are scattered
        is read whole first, about 85 bytes a line.
    measures : str or iterable of str
        trec_eval names (``"map"``, ``"P_10"``, ``"ndcg_cut.10,20"``, ``"all_trec"``), ranx
        names (``"ndcg@10"``, ``"hits@10"``, ``"map@100-l2"``, ``"rbp.95"``), ir_measures
        names or objects (``"nDCG@10"``, ``"P(rel=2)@5"``, ``"Judged@10"``), or qafast's
        (``"hit@10"``, ``"ndcg_exp@10"`` for gain 2**grade - 1); each with its tool's
        definition.
    relevance_level : int, default 1
        Lowest grade that counts as relevant (trec_eval ``-l``); nDCG uses raw grades.
    judged_only : bool, default False
        Drop unjudged documents before measuring (trec_eval ``-J``).
    max_docs : int, optional
        Keep only the top ``max_docs`` documents of each query (trec_eval ``-M``).
    queries : {"run", "qrels"}, default "run"
        ``"run"`` averages over the queries the run and qrels share; ``"qrels"`` over every
        qrels query (trec_eval ``-c``), a query missing from the run scored as trec_eval
        scores it, on an empty ranking (0 but for the ``num_rel`` count). A run sharing no
        query with the qrels is then a warning, not an error; and the ``num_rel`` summary is
        trec_eval's: the qrels lines with a grade above 0, whatever ``relevance_level``.
    per_query : bool, default False
        Return ``{query_id: {measure: value}}`` instead of the summary, queries in id order.
        Per query, ``gm_map`` and ``gm_bpref`` hold ``log(max(value, 1e-5))``, as trec_eval
        accumulates them and pytrec_eval returns them.
    workers : int, default 1
        Threads to use (-1: all cores), also to read files given by path; results do not
        depend on it. A run file of 64 MB or more is cut into ranges of whole queries that
        the threads take in turn, each a share of what is left (down to 8 MB), so that the
        threads finish together; a run's text given as bytes is cut into segments of whole
        queries; a compressed run or a Parquet run is read (decompressed, decoded) by a
        thread of its own.
    progress : bool, optional
        A progress bar on stderr while a run file is read (needs tqdm). By default only
        when stderr is a terminal and the file takes more than a moment; True: always;
        False: never.
    qrels_format : {"qrels", "prefs", "qrels_prefs", "qrels_jg"}, default "qrels"
        The judgments' format, as trec_eval's ``-R`` names it. ``"prefs"``: preference
        judgments, lines ``qid jg jsg docno level``, and ``"qrels_prefs"``: a qrels file
        read as preferences (``qid jg docno level``), for the ``prefs_*`` measures
        (``prefs_simp``, ``prefs_pair``, ``prefs_avgjg``, ``prefs_avgjg_Rnonrel``, their
        ``_ret`` and ``_imp`` forms, the ``prefs_num_prefs_*`` counts; nicknames
        ``all_prefs``, ``prefs``); ``"qrels_jg"``: qrels of several judge groups, lines
        ``qid jg docno rel``, for ``map_avgjg``, ``P_avgjg.k`` and ``Rprec_mult_avgjg.x``
        (nickname ``qrels_jg``). The judgments are then a file (a path) or its bytes, and
        the names are trec_eval's; ``relevance_level`` and ``judged_only`` apply to
        ``qrels_jg`` only, as in trec_eval.
    collection_size : int, default 0
        The number of documents in the collection (trec_eval ``-N``), which ``utility``'s
        fourth coefficient multiplies: its non-relevant documents not retrieved are
        ``collection_size`` + (relevant retrieved) - (retrieved) - (relevant), computed as
        trec_eval computes them (negative when the collection is given smaller than that).
        Only ``utility`` reads it; at most 2**53 in magnitude.

    Returns
    -------
    dict
        ``{measure: value}``: the value trec_eval prints for ``all`` (the mean; the sum for
        the ``num_*`` counts; the geometric mean for ``gm_*``). Where trec_eval computes
        0 / 0 and prints ``-nan`` (``iprec_at_recall`` and ``11pt_avg`` of a query left with
        no document by ``judged_only``, ``Rndcg`` when no gain is positive), the value is
        ``nan``, and so is the mean of a column holding one.

    Raises
    ------
    ValueError
        Unknown measure, NaN score, duplicate document, no query in common (with
        ``queries="run"``), bad option.
    TypeError
        Input of the wrong type.

    Examples
    --------
    >>> import qafast
    >>> qrels = {"q1": {"d1": 1, "d2": 0, "d3": 2}}
    >>> run = {"q1": {"d1": 0.5, "d2": 0.9, "d3": 0.5}}
    >>> qafast.evaluate(qrels, run, ["map", "P@2", "ndcg_cut_3"])
    {'map': 0.5833333333333333, 'P@2': 0.5, 'ndcg_cut_3': 0.66967181649423}
    """
    check_options(relevance_level, judged_only, max_docs)
    with_collection_size([], collection_size)  # checked before any input is read
    if qrels_format != "qrels" or _judgment_measures(measures):
        # no utility is computed from preferences or judge groups (nor by trec_eval)
        return _other_judgments(qrels, run, measures, qrels_format, relevance_level,
                                judged_only, max_docs, queries, per_query, workers)
    columns = with_collection_size(
        [c for c in parse_measures(measures) if c.family not in TEXT_MEASURES],
        collection_size)
    if not columns:
        raise InputError(f"measures {measures!r}: none of them is a per-query number "
                         "(runid, num_q and relstring are printed by the qafast trec command)")
    options = dict(relevance_level=min(int(relevance_level), LEVEL_CEILING),
                   judged_only=bool(judged_only),
                   max_docs=None if max_docs is None else min(int(max_docs), NO_CUTOFF),
                   workers=workers)
    if reads_subtopics(columns, qrels):
        from .diversity import subtopic_values

        ids, values, qrels = subtopic_values(qrels, run, columns, queries, options)
        return _results(columns, ids, values, qrels, queries, per_query)
    qrels = as_qrels(qrels, workers)
    check_max_grades(qrels, columns)
    # a bar for text to read; a dict or a Run is measured in a moment
    bar = Progress(progress if is_run_source(run) else False, total=source_size(run),
                   desc="run")
    with bar:
        ids, values = per_query_values(qrels, run, columns, queries, options,
                                        bar.update if bar else None, ordered=per_query)
    if per_query:
        names = [c.name for c in columns]
        rows = values.tolist()
        return {q: dict(zip(names, row)) for q, row in zip(ids, rows)}
    return dict(zip([c.name for c in columns], column_summaries(
        columns, values, exact=True,
        every_qrels_query=qrels if queries == "qrels" else None)))


def _judgment_measures(measures) -> list[str]:
    """The names in ``measures`` that only preference or judge-group judgments give."""
    from ._trec_prefs import judgment_measure

    if isinstance(measures, str):
        measures = [measures]
    if not isinstance(measures, (list, tuple, set, frozenset)):
        return []  # an ir_measures object, or an iterator parse_measures is to read
    return [m for m in measures if isinstance(m, str) and judgment_measure(m)]


def _other_judgments(qrels, run, measures, qrels_format, relevance_level, judged_only,
                     max_docs, queries, per_query, workers) -> Any:
    """evaluate() of judgments in trec_eval's other formats (``qrels_format``)."""
    from ._trec_prefs import JUDGMENT_FORMATS, evaluate_judgments

    if qrels_format == "qrels":
        wanted = _judgment_measures(measures)
        if all(m.partition(".")[0].endswith("_avgjg") and not m.startswith("prefs_")
               or m == "qrels_jg" for m in wanted):
            need = "qrels_format='qrels_jg' with judge-group qrels ('qid jg docno rel')"
        else:
            need = ("qrels_format='prefs' with preference judgments ('qid jg jsg docno "
                    "level'), or 'qrels_prefs' with a qrels file read as preferences")
        raise InputError(f"measure {wanted[0]!r} is not computed from qrels: pass {need}")
    if qrels_format not in JUDGMENT_FORMATS:
        raise InputError(f"qrels_format must be 'qrels' or one of "
                         f"{', '.join(map(repr, JUDGMENT_FORMATS))}, not {qrels_format!r}")
    if queries not in ("run", "qrels"):
        raise InputError(f"queries must be 'run' (run and qrels in common) or 'qrels' (every "
                         f"qrels query, missing ones scoring 0, as trec_eval -c), not "
                         f"{queries!r}")
    return evaluate_judgments(
        qrels, run, measures, qrels_format=qrels_format, queries=queries,
        max_docs=max_docs, per_query=per_query,
        options=dict(relevance_level=min(int(relevance_level), LEVEL_CEILING),
                     judged_only=bool(judged_only), workers=workers))


@closes_pools_on_interrupt
def evaluate_runs(qrels, runs, measures: str | Iterable[str], *, relevance_level: int = 1,
                  judged_only: bool = False, max_docs: int | None = None,
                  queries: str = "run", per_query: bool = False, workers: int = 1,
                  progress: bool | None = None, qrels_format: str = "qrels",
                  collection_size: int = 0) -> dict:
    """Evaluate many runs against the same relevance judgments in one call.

    The qrels are read and encoded once; each run file is streamed as :func:`evaluate`
    streams one, and the runs are spread over ``workers`` threads (the kernels release the
    GIL, so threads share the qrels and run at once). Every run's numbers are those
    :func:`evaluate` gives it alone, bit for bit, whatever ``workers``.

    Parameters
    ----------
    qrels : Qrels, dict, DataFrame or path
        Relevance judgments, as :func:`evaluate` takes them.
    runs : sequence of paths, or mapping of name to run
        Run files (each named by its path as given), or ``{name: run}`` where a run is
        anything :func:`evaluate` takes (a path, ``Run``, dict, DataFrame, ...).
    measures : str or iterable of str
        As for :func:`evaluate`.
    relevance_level, judged_only, max_docs, queries, per_query, qrels_format, collection_size
        As for :func:`evaluate`, applied to every run. With a ``qrels_format`` other than
        ``"qrels"`` the judgments (a path, or the file's bytes) are read from disk once and
        parsed for each run, which is evaluated as :func:`evaluate` evaluates it alone.
    workers : int, default 1
        Threads (-1: every core this process may use). With fewer runs than threads, the
        spare threads read the runs' files in ranges. Memory grows with the threads by a
        few tens of MB each, not with the size of the runs.
    progress : bool, optional
        A bar on stderr counting the runs done (needs tqdm): by default only when stderr
        is a terminal and the call takes more than a moment; True: always; False: never.

    Returns
    -------
    dict
        ``{name: result}``, in the order of ``runs``, each result what :func:`evaluate`
        returns for that run.

    Raises
    ------
    OSError
        A run file is missing or cannot be read (before any run is evaluated), naming it.
    ValueError, TypeError
        As :func:`evaluate`, naming the run; two runs with the same name.

    Examples
    --------
    >>> import qafast
    >>> qrels = {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 1}}
    >>> runs = {"bm25": {"q1": {"d1": 0.2, "d2": 0.9}, "q2": {"d3": 0.5}},
    ...         "dense": {"q1": {"d1": 0.8, "d2": 0.1}, "q2": {"d4": 0.5}}}
    >>> qafast.evaluate_runs(qrels, runs, ["map", "P@1"], workers=2)
    {'bm25': {'map': 0.75, 'P@1': 0.5}, 'dense': {'map': 0.5, 'P@1': 0.5}}
    """
    check_options(relevance_level, judged_only, max_docs)
    named = _named_runs(runs)
    with_collection_size([], collection_size)  # checked before any input is read
    if qrels_format != "qrels" or _judgment_measures(measures):
        return _runs_of_other_judgments(qrels, named, measures, qrels_format,
                                        relevance_level, judged_only, max_docs, queries,
                                        per_query, workers)
    columns = with_collection_size(
        [c for c in parse_measures(measures) if c.family not in TEXT_MEASURES],
        collection_size)
    if not columns:
        raise ValueError(f"measures {measures!r}: none of them is a per-query number "
                         "(runid, num_q and relstring are printed by the qafast trec command)")
    workers = resolve_workers(workers)
    if reads_subtopics(columns, qrels):
        from .diversity import as_diversity_qrels, subtopic_values

        options = {"relevance_level": int(relevance_level), "judged_only": bool(judged_only),
                   "max_docs": max_docs, "workers": 1}
        diverse = as_diversity_qrels(qrels)  # read once for every run
        by_run: dict[str, dict] = {}
        for name, run in named:
            ids, values, plain = subtopic_values(diverse, run, columns, queries, options)
            by_run[name] = _results(columns, ids, values, plain, queries, per_query)
        return by_run
    for name, run in named:
        check_readable(name, run)
    qrels = as_qrels(qrels, min(workers, 2))
    check_max_grades(qrels, columns)
    options = dict(relevance_level=int(relevance_level), judged_only=bool(judged_only),
                   max_docs=max_docs, workers=workers)
    names = [c.name for c in columns]
    with Progress(progress, total=len(named), unit="run", desc="runs") as bar:
        results = evaluate_run_sources(qrels, named, columns, queries=queries,
                                       options=options, progress=bar)
    out: dict[str, dict] = {}
    for (name, _), r in zip(named, results):
        if per_query:
            out[name] = {q: dict(zip(names, row)) for q, row in zip(r.ids, r.values.tolist())}
        else:
            out[name] = dict(zip(names, column_summaries(
                columns, r.values, exact=True,
                every_qrels_query=qrels if queries == "qrels" else None)))
    return out


def _runs_of_other_judgments(judgments, named, measures, qrels_format, relevance_level,
                             judged_only, max_docs, queries, per_query, workers) -> dict:
    """evaluate_runs() of judgments in trec_eval's other formats: each run as evaluate()
    evaluates it alone, the judgments' file read once."""
    if isinstance(measures, str):
        measures = [measures]
    measures = list(measures)  # read once, for every run
    if isinstance(judgments, (str, os.PathLike)):
        for name, run in named:
            check_readable(name, run)
        try:
            with open(judgments, "rb") as f:
                judgments = f.read()
        except OSError as e:
            raise OSError(e.errno, f"cannot read the judgments file {str(judgments)!r}: "
                          f"{e.strerror}") from None
    out: dict[str, dict] = {}
    for name, run in named:
        try:
            out[name] = _other_judgments(judgments, run, measures, qrels_format,
                                         relevance_level, judged_only, max_docs, queries,
                                         per_query, workers)
        except (ValueError, TypeError) as e:
            e.add_note(f"while evaluating run {name!r}")  # as evaluate_run_sources names it
            raise
    return out


def _results(columns, ids, values, qrels, queries: str, per_query: bool) -> dict:
    """What evaluate returns for one run's per-query values."""
    names = [c.name for c in columns]
    if per_query:
        return {q: dict(zip(names, row)) for q, row in zip(ids, values.tolist())}
    return dict(zip(names, column_summaries(
        columns, values, exact=True, every_qrels_query=qrels if queries == "qrels" else None)))


def _named_runs(runs) -> list[tuple[str, Any]]:
    """[(name, run)] from a mapping, or from a sequence of paths named as given."""
    if isinstance(runs, Mapping):
        return [(str(k), v) for k, v in runs.items()]
    if isinstance(runs, (str, bytes, os.PathLike)) or not isinstance(runs, Iterable):
        raise TypeError("runs must be a sequence of run paths or a mapping {name: run}, "
                        f"not {type(runs).__name__}")
    named = []
    for r in runs:
        if not isinstance(r, (str, os.PathLike)):
            raise TypeError("runs given as a sequence must be paths (give other runs as a "
                            f"mapping {{name: run}}), not {type(r).__name__}")
        named.append((os.fspath(r), r))
    seen = set()
    for name, _ in named:
        if name in seen:
            raise ValueError(f"run {name!r} is given twice")
        seen.add(name)
    return named
