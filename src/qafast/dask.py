"""qafast over Dask: :func:`evaluate`, :func:`compare` and :func:`answers` on data spread
over partitions and machines, with the very numbers of :func:`qafast.evaluate`,
:func:`qafast.compare`, :func:`qafast.exact_match` and :func:`qafast.f1`.

How the work is split, and why the numbers cannot depend on it:

- the qrels are encoded once, on the client, and sent once to every worker (scattered with
  ``broadcast=True`` when a ``distributed`` client is running);
- a query is measured where all of its run rows are: the run is shuffled on the query
  column, unless ``assume_grouped=True`` says each query's rows are in one partition
  already, which is then checked (a query met in two partitions is an error naming it);
- each partition sends back one row of values per query, computed by the same kernels as
  :func:`qafast.evaluate`;
- the client puts the rows in query id order and takes each summary from an exactly
  rounded sum, which is the same whatever the order and the split.

A partition lost with its worker is computed again by Dask or fails the call
(a ``RuntimeError`` after Dask's retries); a partial mean is never returned.
Needs ``pip install "qafast[dask]"`` (dask[dataframe], distributed, pyarrow).
"""

from __future__ import annotations

import concurrent.futures
import glob
import itertools
import os
from typing import Any, Iterable, Mapping

import numpy as np

from .errors import InputError, InputTypeError, MeasureError

__all__ = ["answers", "compare", "evaluate"]


def _modules():
    try:
        import dask
        import dask.dataframe as dd
    except ImportError:  # pragma: no cover - the extra is installed in the tests
        raise ImportError('qafast.dask needs dask: pip install "qafast[dask]"') from None
    return dask, dd


def _client():
    """The running distributed client, or None (Dask's default scheduler then)."""
    try:
        from distributed import default_client
    except ImportError:  # pragma: no cover
        return None
    try:
        return default_client()
    except ValueError:
        return None


def _shared(obj):
    """``obj`` sent once to every worker: a Future when a client runs, else one delayed
    object that every task of the graph names."""
    dask, _ = _modules()
    client = _client()
    if client is not None:
        return client.scatter(obj, broadcast=True, hash=False)
    return dask.delayed(obj, pure=False)


def _compute(tasks, progress=None):
    """The tasks' results, all of them, or an error: a worker lost for good (Dask retries
    a partition first) is a ``RuntimeError`` saying so, never a result with parts missing.
    With a distributed client, ``progress`` draws a bar of the partitions measured
    (see :mod:`qafast._progress`: by default only on a terminal, after two seconds)."""
    from ._progress import Progress

    dask, _ = _modules()
    client = _client()
    bar = Progress(progress if client is not None else False, total=len(tasks),
                   unit="partition", desc="partitions")
    try:
        if bar:
            from distributed import as_completed

            futures = client.compute(list(tasks))
            with bar:
                for _ in as_completed(futures):
                    bar.update(1)
            results = tuple(client.gather(futures))
        else:
            results = dask.compute(*tasks)
    except Exception as e:
        if (type(e).__module__.startswith("distributed")
                or isinstance(e, concurrent.futures.CancelledError)):
            raise RuntimeError(
                f"a Dask worker was lost while measuring the partitions "
                f"({type(e).__name__}: {e}); nothing was averaged. Run it again, or give "
                "the workers more memory") from e
        raise
    if len(results) != len(tasks):  # pragma: no cover - dask returns one result per task
        raise RuntimeError(f"Dask returned {len(results)} results for {len(tasks)} partitions")
    return results


def _is_dask_frame(obj) -> bool:
    return hasattr(obj, "to_delayed") and hasattr(obj, "npartitions")


def _paths(source) -> list[str]:
    if isinstance(source, (list, tuple)):
        for k, p in enumerate(source):
            if not isinstance(p, (str, os.PathLike)):
                # qafast.compare takes a list of runs as one system's seeds or folds; here a
                # list is one run's partition files
                raise InputTypeError(
                    f"item {k} of a list of files is a {type(p).__name__}, not a path: in "
                    "qafast.dask a list names one run's files (for several runs of one "
                    "system, over seeds or folds, use qafast.compare)")
        out = [os.fspath(p) for p in source]
    else:
        pattern = os.fspath(source)
        out = sorted(glob.glob(pattern)) if glob.has_magic(pattern) else [pattern]
    if not out:
        raise InputError(f"no file matches {source!r}")
    for p in out:
        if not os.path.exists(p):
            raise InputError(f"{p!r}: no such file or directory")
    return out


def _read_trec(path: str):
    """One TREC run file as a pandas frame of query_id, doc_id, score, read by qafast's own
    reader (the scores are the bits :func:`qafast.evaluate` reads)."""
    import pandas as pd

    from .io.trec import read_trec_run

    cols = read_trec_run(path)
    qids = np.asarray(cols.query_ids, dtype=object)
    docs = np.asarray(cols.doc_ids, dtype=object)
    return pd.DataFrame({"query_id": qids[np.asarray(cols.query_index)],
                         "doc_id": docs[np.asarray(cols.doc_index)],
                         "score": np.asarray(cols.values, dtype=np.float64)})


def _frame(source, columns: list[str], role: str):
    """A dask DataFrame of ``source``: itself, a pandas frame, or Parquet or TREC files
    named by a path, a glob or a list of paths."""
    _, dd = _modules()
    if _is_dask_frame(source):
        missing = [c for c in columns if c not in source.columns]
        if missing:
            raise InputError(f"{role} dask DataFrame: no column {missing[0]!r} (columns: "
                             f"{list(source.columns)[:20]}); name the columns with "
                             "query_col=, doc_col= or score_col=")
        return source
    if hasattr(source, "columns") and hasattr(source, "iloc"):
        return _frame(dd.from_pandas(source, npartitions=1), columns, role)
    if isinstance(source, (str, os.PathLike, list, tuple)):
        from .io.arrow import is_parquet

        paths = _paths(source)
        if all(is_parquet(p) for p in paths):
            if os.path.isfile(paths[0]):
                _check_parquet_names(paths[0], columns, role)
            # a partition per row group: a worker holds one at a time, and a big file is
            # spread over the workers (a query cut at a row group boundary is joined back)
            return dd.read_parquet(paths if len(paths) > 1 else paths[0], columns=columns,
                                   split_row_groups=True)
        if any(is_parquet(p) for p in paths):
            raise InputError(f"{role}: {source!r} names both Parquet and other files")
        import pandas as pd

        meta = pd.DataFrame({"query_id": pd.Series([], dtype=object),
                             "doc_id": pd.Series([], dtype=object),
                             "score": pd.Series([], dtype=np.float64)})
        frame = dd.from_map(_read_trec, paths, meta=meta, enforce_metadata=False)
        return frame.rename(columns=dict(zip(["query_id", "doc_id", "score"], columns)))
    raise InputTypeError(f"{role}: expected a dask DataFrame, a pandas DataFrame, or a path, glob "
                    f"or list of Parquet or TREC run files, not {type(source).__name__}")


# --------------------------------------------------------------------------------------------
# Ranking

def _measure_partition(frame, qrels, columns, options, names, edges):
    """One partition's run: (its query ids, the evaluated ones in id order, their values,
    and with ``edges`` the ids and rows of its first and last query, which may go on in the
    partitions before and after it)."""
    import pyarrow as pa

    if frame is None or len(frame) == 0:
        return [], [], np.zeros((0, len(columns)), dtype=np.float64), [], None
    table = pa.Table.from_pandas(frame[names], preserve_index=False)
    return _measure_table(table, qrels, columns, options, names, edges)


def _measure_row_groups(path: str, groups: list[int], qrels, columns, options, names):
    """_measure_partition of row groups of a Parquet file, read by pyarrow on the worker
    (query ids as the file's dictionary): no pandas frame in between."""
    from .io.arrow import describe, read_row_groups

    table, first_row = read_row_groups(path, groups, names)
    return _measure_table(table, qrels, columns, options, names, True,
                          src=describe(path, "run"), row_base=first_row)


def _measure_table(table, qrels, columns, options, names, edges, *, src=None, row_base=0):
    import pyarrow as pa
    import pyarrow.compute as pc

    from ._engine import Evaluation
    from ._ranked import Run, from_arrow

    m = len(columns)
    if table.num_rows == 0:
        return [], [], np.zeros((0, m), dtype=np.float64), [], None
    run = from_arrow(Run, table, query_col=names[0], doc_col=names[1], value_col=names[2],
                     src=src, row_base=row_base)
    ev = Evaluation(qrels, run, queries="run", allow_none=True, **options)
    values = ev.values(columns) if ev.ids else np.zeros((0, m), dtype=np.float64)
    edge_ids, edge_rows = [], None
    if edges:
        qcol = table.column(names[0])
        if pa.types.is_dictionary(qcol.type):
            # as strings, for the look-up below and for the client, which joins the rows
            # of partitions read with other dictionaries
            qcol = qcol.cast(qcol.type.value_type)
            table = table.set_column(table.column_names.index(names[0]), names[0], qcol)
        edge_ids = list(dict.fromkeys([qcol[0].as_py(), qcol[-1].as_py()]))
        edge_rows = table.filter(pc.is_in(qcol, value_set=pa.array(edge_ids, qcol.type)))
    return list(run.query_ids), list(ev.ids), values, edge_ids, edge_rows


def _check_parquet_names(path: str, columns: list[str], role: str) -> None:
    import pyarrow.parquet as pq

    names = pq.read_schema(path).names
    missing = [c for c in columns if c not in names]
    if missing:
        raise InputError(f"{role} Parquet file {path!r}: no column {missing[0]!r} (columns: "
                         f"{names[:20]})")


def _named_files(source) -> tuple[list[str], bool] | None:
    """The files a run names (a path, a glob or a list of paths), all regular files, and
    whether they are Parquet; None when it names something else (a dask or pandas frame, a
    directory, a missing file) or Parquet and other files together (_frame says which)."""
    if not isinstance(source, (str, os.PathLike, list, tuple)):
        return None
    from .io.arrow import is_parquet

    try:
        paths = _paths(source)
    except InputError:
        return None
    if not all(os.path.isfile(p) for p in paths):
        return None
    kinds = {is_parquet(p) for p in paths}
    return (paths, kinds.pop()) if len(kinds) == 1 else None


# rows of a Parquet file read and measured by one task: each task opens the file, whose
# footer lists every row group (a task per row group of 32K rows: 7.7 s for 20M rows); a
# million rows took 3.7 s and 650 MB a worker, this many 3.85 s and 410 MB
_TASK_ROWS = 1 << 18


def _row_group_tasks(paths: list[str], shared_qrels, columns, options, names):
    """Tasks of consecutive row groups of each file (about _TASK_ROWS rows each), in file
    order, read by pyarrow on the workers."""
    import pyarrow.parquet as pq

    dask, _ = _modules()
    measure = dask.delayed(_measure_row_groups, pure=True)
    tasks = []
    for path in paths:
        meta = pq.ParquetFile(path).metadata
        groups: list[int] = []
        rows = 0
        for g in range(meta.num_row_groups):
            groups.append(g)
            rows += meta.row_group(g).num_rows
            if rows >= _TASK_ROWS or g == meta.num_row_groups - 1:
                tasks.append(measure(path, groups, shared_qrels, columns, options, names))
                groups, rows = [], 0
    return tasks


# bytes of a TREC run file read and measured by one task (a compressed file is one task):
# a 700 MB file is 11 tasks, each about 2M lines and a tenth of a second
_TASK_BYTES = 64 << 20


def _measure_trec_range(path: str, start: int, end: int | None, qrels, columns, options):
    from ._runfile import measure_range

    return measure_range(qrels, path, start, end, columns, options)


def _measure_trec_file(path: str, qrels, columns, options):
    from ._runfile import measure_whole_file

    return measure_whole_file(qrels, path, columns, options)


def _trec_tasks(paths: list[str], shared_qrels, columns, options):
    """Tasks of byte ranges of each file (about _TASK_BYTES each, cut where a query's lines
    end), in file order, parsed and measured by qafast's reader on the workers; and the
    number of tasks of each file."""
    from ._runfile import task_ranges

    dask, _ = _modules()
    measure = dask.delayed(_measure_trec_range, pure=True)
    tasks: list = []
    counts = []
    for path in paths:
        ranges = task_ranges(path, _TASK_BYTES)
        tasks.extend(measure(path, a, b, shared_qrels, columns, options) for a, b in ranges)
        counts.append(len(ranges))
    return tasks, counts


def _trec_partitions(paths, counts, results, shared_qrels, columns, options, names,
                     progress):
    """The results of _trec_tasks as one partition per file, as _gather takes them. A file
    whose queries turn out not to keep their lines together (in a range, or across two) is
    measured again, whole, by one task."""
    from ._runfile import disjoint

    per_file, again = [], []
    at = 0
    for f, k in enumerate(counts):
        parts = results[at:at + k]
        at += k
        if not (all(p.grouped for p in parts) and disjoint([p.present for p in parts])):
            again.append(f)
        per_file.append(parts)
    if again:
        dask, _ = _modules()
        measure = dask.delayed(_measure_trec_file, pure=True)
        redone = _compute([measure(paths[f], shared_qrels, columns, options) for f in again],
                          progress)
        for f, result in zip(again, redone):
            per_file[f] = [result]
    return [_file_partition(parts, names, len(columns)) for parts in per_file]


def _file_partition(parts, names, m: int):
    """One file's range results as one partition's: its first and last queries are its
    edges, with their rows as an Arrow table."""
    import pyarrow as pa

    present = list(itertools.chain.from_iterable(p.present for p in parts))
    ids = list(itertools.chain.from_iterable(p.ids for p in parts))
    values = (np.concatenate([p.values for p in parts]) if parts
              else np.zeros((0, m), dtype=np.float64))
    first = next((p.first for p in parts if p.first is not None), None)
    last = next((p.last for p in reversed(parts) if p.last is not None), None)
    edges = [e for e in (first, last) if e is not None]
    if len(edges) == 2 and edges[0][0] == edges[1][0]:
        # the same query first and last: the file's only one, every row of it in each
        edges = edges[:1]
    if not edges:
        return present, ids, values, [], None
    rows = pa.table({
        names[0]: pa.array([q for q, docs, _ in edges for _d in docs], pa.string()),
        names[1]: pa.array([d for _q, docs, _ in edges for d in docs], pa.string()),
        names[2]: pa.array(np.concatenate([s for _q, _d, s in edges]), pa.float64()),
    })
    return present, ids, values, [q for q, _d, _s in edges], rows


def _partition_tasks(frame, shared_qrels, columns, options, names, shuffle, npartitions):
    dask, _ = _modules()
    if isinstance(frame, list):  # Parquet files, measured as they are partitioned
        return _row_group_tasks(frame, shared_qrels, columns, options, names)
    if shuffle:
        frame = frame.shuffle(on=names[0], npartitions=npartitions or frame.npartitions)
    measure = dask.delayed(_measure_partition, pure=True)
    return [measure(part, shared_qrels, columns, options, names, not shuffle)
            for part in frame.to_delayed()]


class _Split(ValueError):
    """A query with rows in two partitions, not at their ends."""


def _gather(results, qrels, columns, options, names, run_name: str | None):
    """(ids in id order, values, every run query) from the partitions' results. A query
    met in several partitions, each time as a partition's first or last query (a grouped run
    cut at a partition boundary), is measured on the client from its rows; any other query
    met twice raises _Split."""
    import pyarrow as pa

    from ._engine import Evaluation
    from ._ranked import Run, from_arrow

    where: dict = {}
    for p, result in enumerate(results):
        for q in result[0]:
            where.setdefault(q, []).append(p)
    spread = {q: ps for q, ps in where.items() if len(ps) > 1}
    for q, ps in spread.items():
        inner = [p for p in ps if q not in results[p][3]]
        if inner:
            other = ps[0] if ps[0] != inner[0] else ps[1]
            prefix = f"run {run_name!r}: " if run_name is not None else ""
            raise _Split(
                f"{prefix}query {q!r} has rows in partitions {min(other, inner[0])} and "
                f"{max(other, inner[0])}; with assume_grouped=True every query's rows must "
                "be together, in one partition or running on from one partition into the "
                "next (leave assume_grouped=False to bring them together by a shuffle)")
    ids, blocks = [], []
    for _present, part_ids, values, _edges, _rows in results:
        if spread:
            keep = [i for i, q in enumerate(part_ids) if q not in spread]
            part_ids, values = [part_ids[i] for i in keep], values[keep]
        ids.extend(part_ids)
        blocks.append(values)
    if spread:
        # the queries cut at partition boundaries, measured whole here
        tables = [r[4] for r in results if r[4] is not None and r[4].num_rows]
        rows = pa.concat_tables(tables, promote_options="permissive")
        mask = pa.array([q in spread for q in rows.column(names[0]).to_pylist()])
        run = from_arrow(Run, rows.filter(mask), query_col=names[0], doc_col=names[1],
                         value_col=names[2])
        ev = Evaluation(qrels, run, queries="run", allow_none=True, **options)
        if ev.ids:
            ids.extend(ev.ids)
            blocks.append(ev.values(columns))
    values = (np.concatenate(blocks) if blocks
              else np.zeros((0, len(columns)), dtype=np.float64))
    order = sorted(range(len(ids)), key=ids.__getitem__)
    return [ids[k] for k in order], values[order], set(where)


def _setup(qrels, measures, relevance_level, judged_only, max_docs, queries):
    from ._engine import check_max_grades, check_options
    from ._measure_parser import parse_measures, reads_subtopics
    from ._measures import TEXT_MEASURES
    from ._ranked import as_qrels

    check_options(relevance_level, judged_only, max_docs)
    if queries not in ("run", "qrels"):
        raise InputError(f"queries must be 'run' or 'qrels', not {queries!r}")
    columns = [c for c in parse_measures(measures) if c.family not in TEXT_MEASURES]
    if not columns:
        raise InputError(f"measures {measures!r}: none of them is a per-query number")
    if reads_subtopics(columns, qrels):
        raise MeasureError(
            f"measures {measures!r}: qafast.dask does not compute the diversity measures "
            "(alpha_nDCG, ERR_IA, ...) or read diversity qrels yet; qafast.evaluate does, "
            "from a qafast.DiversityQrels")
    qrels = as_qrels(qrels)
    check_max_grades(qrels, columns)
    options = dict(relevance_level=int(relevance_level), judged_only=bool(judged_only),
                   max_docs=max_docs, workers=1)
    return qrels, columns, options


def _finish(qrels, results, columns, options, names, queries, run_name=None):
    ids, values, seen = _gather(results, qrels, columns, options, names, run_name)
    if queries == "qrels":
        from ._run_sources import add_missing_queries

        ids, values = add_missing_queries(qrels, ids, values, columns, options)
    elif not ids:
        prefix = f"run {run_name!r}: " if run_name is not None else ""
        raise InputError(f"{prefix}the run and the qrels ({qrels.source}) have no query in "
                         f"common (run queries look like {sorted(seen, key=str)[:3]!r}, "
                         f"qrels queries like {qrels.query_ids[:3]!r})")
    return ids, values


def _measure_runs(qrels, runs: list, columns, options, names, queries, assume_grouped,
                  npartitions, run_names=None, progress=None):
    """(ids, values) of each run. Runs given as files are first measured as they are
    partitioned (each file, or row group range, one partition), which is right when each
    query's rows are together in them, as runs are written; a run whose queries turn out
    to be spread over partitions is then shuffled and measured again, unless
    ``assume_grouped`` (an error naming the query)."""
    # Parquet files are read by pyarrow on the workers, row groups at a time, unless they
    # turn out to need a shuffle: then (only) they become a dask DataFrame
    named = [_named_files(run) for run in runs]
    files = [n[0] if n and n[1] else None for n in named]
    for paths in files:
        if paths:
            _check_parquet_names(paths[0], names, "run")
    # TREC files likewise, by qafast's reader on the workers, byte ranges at a time (qrels
    # with string ids; integer ids go through a frame)
    texts = [n[0] if n and not n[1] and qrels.string_ids else None for n in named]
    frames = [None if files[r] or texts[r] else _frame(run, names, "run")
              for r, run in enumerate(runs)]
    shuffle = [not assume_grouped and _is_dask_frame(run) for run in runs]
    shared = _shared(qrels)
    out: list = [None] * len(runs)
    while True:
        todo = [r for r in range(len(runs)) if out[r] is None]
        if not todo:
            return out
        for r in todo:
            if shuffle[r] and frames[r] is None:
                frames[r] = _frame(runs[r], names, "run")
        tasks, counts = {}, {}
        for r in todo:
            text = texts[r]
            if frames[r] is None and text:
                tasks[r], counts[r] = _trec_tasks(text, shared, columns, options)
            else:
                tasks[r] = _partition_tasks(frames[r] if frames[r] is not None else files[r],
                                            shared, columns, options, names, shuffle[r],
                                            npartitions)
        flat = _compute([t for r in todo for t in tasks[r]], progress)
        at = 0
        for r in todo:
            results = flat[at:at + len(tasks[r])]
            at += len(tasks[r])
            if r in counts:
                results = _trec_partitions(texts[r], counts[r], results, shared, columns,
                                           options, names, progress)
            name = run_names[r] if run_names is not None else None
            try:
                out[r] = _finish(qrels, results, columns, options, names, queries, name)
            except _Split as e:
                if assume_grouped or shuffle[r]:
                    raise InputError(str(e)) from None
                shuffle[r] = True   # files whose queries are spread: shuffle them


def _names(query_col, doc_col, score_col) -> list[str]:
    for what, c in (("query_col", query_col), ("doc_col", doc_col), ("score_col", score_col)):
        if not isinstance(c, str):
            raise InputTypeError(f"{what} must be a column name (str), not {type(c).__name__}")
    return [query_col, doc_col, score_col]


def evaluate(qrels, run, measures: str | Iterable[str], *, per_query: bool = False,
             assume_grouped: bool = False, npartitions: int | None = None,
             relevance_level: int = 1, judged_only: bool = False,
             max_docs: int | None = None, queries: str = "run", query_col: str = "query_id",
             doc_col: str = "doc_id", score_col: str = "score",
             progress: bool | None = None):
    """:func:`qafast.evaluate` over a Dask DataFrame: the same numbers, bit for bit, however
    the run is partitioned.

    Parameters
    ----------
    qrels : Qrels, dict, DataFrame, Arrow table or path
        Relevance judgments, as :func:`qafast.evaluate` takes them; encoded once on the
        client and sent once to every worker.
    run : dask DataFrame, pandas DataFrame, path, glob or list of paths
        Rows ``query_id, doc_id, score`` (names set by the ``*_col`` options): a dask
        DataFrame, or Parquet files or TREC run files named by a path, a glob such as
        ``"runs/part-*.parquet"`` or a list, read on the workers without a pandas frame
        in between: a TREC file (``.gz`` too) by qafast's own reader, byte ranges of
        about 64 MB per task cut where a query's lines end (a compressed file whole; a
        file whose queries' lines are not together is read whole, by one task); a Parquet
        file by pyarrow, whole row groups of about 260,000 rows per task.
    measures : str or iterable of str
        As for :func:`qafast.evaluate`.
    per_query : bool, default False
        Return a pandas DataFrame: a ``query_id`` column, then one column per measure, one
        row per query in id order, the values of ``qafast.evaluate(..., per_query=True)``.
    assume_grouped : bool, default False
        Each query's rows are together: in one partition, or running on from the end of one
        partition into the start of the next (a run written in query order and cut into
        partitions anywhere): no shuffle. Checked: a query met elsewhere in two partitions
        raises ``ValueError`` naming it. With False, a dask DataFrame is shuffled on the
        query column, while files are measured as they are partitioned first and shuffled
        only if a query turns out to be spread over them.
    npartitions : int, optional
        Partitions after the shuffle (default: as many as the run has).
    relevance_level, judged_only, max_docs, queries
        As for :func:`qafast.evaluate`.
    query_col, doc_col, score_col : str
        The run's column names.
    progress : bool, optional
        A bar on stderr of the partitions measured, when a ``distributed`` client runs
        (needs tqdm). By default only when stderr is a terminal and the work takes more
        than two seconds; ``False`` never, ``True`` always.

    Returns
    -------
    dict or pandas.DataFrame
        ``{measure: value}`` as :func:`qafast.evaluate` returns it, or the per-query frame.

    Raises
    ------
    ValueError
        A query split over partitions with ``assume_grouped=True``, no query in common, and
        every error :func:`qafast.evaluate` raises (from the worker that met it).
    RuntimeError
        A partition whose workers kept dying (Dask retries it first): no result at all.

    Examples
    --------
    >>> import pandas as pd, dask.dataframe as dd
    >>> import qafast.dask
    >>> run = dd.from_pandas(pd.DataFrame({"query_id": ["q1", "q1", "q2"],
    ...                                    "doc_id": ["d1", "d2", "d9"],
    ...                                    "score": [0.5, 0.9, 0.1]}), npartitions=2)
    >>> qrels = {"q1": {"d1": 1}, "q2": {"d9": 1}}
    >>> qafast.dask.evaluate(qrels, run, ["map", "P@1"])
    {'map': 0.75, 'P@1': 0.5}
    """
    from ._summaries import column_summaries

    names = _names(query_col, doc_col, score_col)
    qrels, columns, options = _setup(qrels, measures, relevance_level, judged_only, max_docs,
                                     queries)
    (ids, values), = _measure_runs(qrels, [run], columns, options, names, queries,
                                   bool(assume_grouped), npartitions, progress=progress)
    if per_query:
        return _per_query_frame(ids, values, columns)
    return dict(zip([c.name for c in columns], column_summaries(
        columns, values, exact=True,
        every_qrels_query=qrels if queries == "qrels" else None)))


def _per_query_frame(ids, values, columns):
    import pandas as pd

    frame = pd.DataFrame({"query_id": pd.Series(ids, dtype=object)})
    for j, c in enumerate(columns):
        frame[c.name] = values[:, j]
    return frame


def compare(qrels, runs: Mapping[str, Any], measures: str | Iterable[str], *,
            assume_grouped: bool = False, npartitions: int | None = None,
            query_col: str = "query_id", doc_col: str = "doc_id", score_col: str = "score",
            baseline: str | None = None, test: str = "student",
            correction: str | None = "holm", alpha: float = 0.05, n_resamples: int = 10_000,
            seed: int = 0, queries: str = "run", ci: str = "t", relevance_level: int = 1,
            judged_only: bool = False, max_docs: int | None = None,
            progress: bool | None = None):
    """:func:`qafast.compare` over Dask: every run's partitions measured in one computation
    (the qrels sent once), then the same tests, on the client, as :func:`qafast.compare`.

    ``runs`` is ``{name: run}``, each run what :func:`evaluate` takes; ``assume_grouped``,
    ``npartitions``, ``progress`` and the ``*_col`` names apply to each. The other options
    are those of :func:`qafast.compare`; the result is the :class:`qafast.Comparison` it returns.
    """
    from .comparison import _analyse, _check_averaged, _check_settings, _run_names, _stack_runs

    if not isinstance(runs, Mapping):
        raise InputTypeError("runs must be a mapping {name: run}, not " + type(runs).__name__)
    run_names = _run_names(runs)
    _check_settings(run_names, baseline, test, correction, alpha, n_resamples, seed, ci)
    names = _names(query_col, doc_col, score_col)
    qrels, columns, options = _setup(qrels, measures, relevance_level, judged_only, max_docs,
                                     queries)
    _check_averaged(columns)
    measured = _measure_runs(qrels, [runs[name] for name in run_names], columns, options,
                             names, queries, bool(assume_grouped), npartitions, run_names,
                             progress)
    query_ids, values, means = _stack_runs(run_names, measured, columns)
    return _analyse(run_names, [c.name for c in columns], query_ids, values, means,
                    baseline=baseline, test=test, correction=correction, alpha=alpha,
                    n_resamples=n_resamples, seed=seed, ci=ci, workers=1)


# --------------------------------------------------------------------------------------------
# Answers

def _score_partition(frame, pred_col, ref_col, id_col, normalizer, unit, empty_rule):
    from .answers import exact_match_and_f1

    if frame is None or len(frame) == 0:
        return [], np.zeros(0), np.zeros(0)
    preds = frame[pred_col].tolist()
    refs = [r if isinstance(r, str) else list(r) for r in frame[ref_col].tolist()]
    em, f = exact_match_and_f1(preds, refs, normalizer=normalizer, unit=unit,
                               empty_rule=empty_rule)
    ids = frame[id_col].tolist() if id_col is not None else []
    return ids, em, f


def answers(data, *, prediction_col: str = "prediction", references_col: str = "references",
            id_col: str | None = None, normalizer="squad", unit: str = "token",
            empty_rule: str = "v2", per_question: bool = False,
            progress: bool | None = None):
    """Exact match and F1 of answers over Dask (SQuAD, MLQA, CMRC, DRCD rules): each
    question is scored where its row is, and the means are taken on the client from exactly
    rounded sums, so they equal :func:`qafast.exact_match` and :func:`qafast.f1` on the
    same rows in one process.

    Parameters
    ----------
    data : dask DataFrame, pandas DataFrame, Parquet path, glob or list of paths
        One row per question: the predicted answer (str) and its references (a str or a
        list of str). Give lists as an Arrow list column (``pd.ArrowDtype(pa.list_(
        pa.string()))``) or in Parquet: ``dd.from_pandas`` turns a column of Python lists
        into their text when Dask's ``dataframe.convert-string`` option is on (its
        default), and each would then be scored as one reference.
    prediction_col, references_col : str
        Column names.
    id_col : str, optional
        A question id column, kept in the ``per_question`` frame.
    normalizer, unit, empty_rule
        As for :func:`qafast.f1` (``unit`` applies to F1; exact match compares whole
        normalized answers).
    per_question : bool, default False
        Return a pandas DataFrame (``id_col`` if given, ``exact_match``, ``f1``), one row per
        question in partition order.
    progress : bool, optional
        As for :func:`evaluate`: a bar of the partitions scored.

    Returns
    -------
    dict or pandas.DataFrame
        ``{"exact_match": mean, "f1": mean}`` on a 0-1 scale, or the per-question frame.

    Examples
    --------
    >>> import pandas as pd, dask.dataframe as dd
    >>> import qafast.dask
    >>> frame = dd.from_pandas(pd.DataFrame({
    ...     "prediction": ["Eiffel Tower", "paris paris"],
    ...     "references": [["The Eiffel Tower"], ["Paris"]]}), npartitions=2)
    >>> qafast.dask.answers(frame)
    {'exact_match': 0.5, 'f1': 0.8333333333333333}
    """
    from . import _exactsum
    from .answers import check_answer_options

    dask, dd = _modules()
    check_answer_options(normalizer, unit, empty_rule)
    wanted = [prediction_col, references_col] + ([id_col] if id_col is not None else [])
    if _is_dask_frame(data):
        frame = data
    elif hasattr(data, "columns") and hasattr(data, "iloc"):
        frame = dd.from_pandas(data, npartitions=1)
    elif isinstance(data, (str, os.PathLike, list, tuple)):
        paths = _paths(data)
        frame = dd.read_parquet(paths if len(paths) > 1 else paths[0], columns=wanted)
    else:
        raise InputTypeError("answers: expected a dask or pandas DataFrame or Parquet paths, not "
                        + type(data).__name__)
    missing = [c for c in wanted if c not in frame.columns]
    if missing:
        raise InputError(f"answers: no column {missing[0]!r} (columns: "
                         f"{list(frame.columns)[:20]}); name it with prediction_col=, "
                         "references_col= or id_col=")
    score = dask.delayed(_score_partition, pure=True)
    results = _compute([score(part, prediction_col, references_col, id_col, normalizer,
                              unit, empty_rule) for part in frame[wanted].to_delayed()],
                       progress)
    em = np.concatenate([r[1] for r in results]) if results else np.zeros(0)
    f = np.concatenate([r[2] for r in results]) if results else np.zeros(0)
    if per_question:
        import pandas as pd

        out = pd.DataFrame({"exact_match": em, "f1": f})
        if id_col is not None:
            out.insert(0, id_col, [q for r in results for q in r[0]])
        return out
    if len(em) == 0:
        raise InputError("no questions to average")
    sums = _exactsum.column_sums(np.stack([em, f], axis=1))
    return {"exact_match": sums[0] / len(em), "f1": sums[1] / len(f)}
