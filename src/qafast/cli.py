"""The ``qafast`` command.

``qafast trec QRELS RUN`` prints what trec_eval 10.0 prints, byte for byte;
``qafast example`` evaluates the sample run shipped with the package.
"""

from __future__ import annotations

if __name__ == "__main__":  # python -m qafast.cli: before numpy is imported
    from qafast._blas import quiet_blas

    quiet_blas()

import functools
import math
import os
import sys
import warnings

# argparse is imported by the functions that build the parser: a command given its plain
# positional arguments only (PLAIN_COMMANDS) runs without it, where importing it and
# building the parser were 10 ms of `qafast hotpot`'s start.
# Nothing above imports numpy: `qafast trec` on small files (_trec_text) never does, and
# importing it took most of the time trec_eval takes for such a run. What `qafast trec`
# needs besides (the measure table and parser, the summaries, the output) is imported by the
# functions that use it: the other commands never need it, and it took 15-30 ms of their
# start.


@functools.lru_cache(maxsize=None)
def _counts() -> frozenset:
    """trec_eval's counts, which it prints as integers."""
    from ._measures import TABLE

    return frozenset(f.name for f in TABLE if f.summary == "sum" and f.origin == "trec_eval")


def _trec_parser(sub) -> None:
    p = sub.add_parser(
        "trec", help="evaluate TREC runs against qrels, printing what trec_eval 10.0 prints",
        description="Evaluate TREC run files against a qrels file. Output is trec_eval "
                    "10.0's, byte for byte; the options are trec_eval's. With several runs, "
                    "the qrels are read once and each run's output follows a line "
                    "'==> RUN <==' (text), or the runs share one table (-o csv, -o json).")
    p.add_argument("qrels", help="qrels file: 'qid iter docno rel' (.gz read as gzip)")
    p.add_argument("run", nargs="+",
                   help="run file(s): 'qid iter docno rank score run_id'; '-' for stdin")
    p.add_argument("-q", action="store_true", help="print each query's values too")
    p.add_argument("-n", action="store_true", help="no summary ('all') lines")
    p.add_argument("-c", action="store_true",
                   help="average over every qrels query; those missing from the run score 0")
    p.add_argument("-l", type=int, default=1, metavar="N",
                   help="lowest grade counted as relevant (default 1)")
    p.add_argument("-M", type=int, default=None, metavar="N",
                   help="keep only the top N documents of each query")
    p.add_argument("-J", action="store_true", help="drop documents that are not judged")
    p.add_argument("-N", type=int, default=0, metavar="NUM",
                   help="number of documents in the collection, for utility's fourth "
                        "coefficient (non-relevant documents not retrieved); default 0")
    p.add_argument("-m", action="append", metavar="MEASURE",
                   help="measure[.params] or nickname (official, all_trec, set); repeatable; "
                        "default official. Any other name qafast.evaluate takes (ndcg@10, "
                        "mrr@10, ...) prints after trec_eval's measures, in the order given")
    p.add_argument("-R", choices=("qrels", "qrels_jg", "prefs", "qrels_prefs", "diversity"),
                   default="qrels", metavar="FORMAT",
                   help="format of the qrels file: qrels (default); qrels_jg: 'qid jg "
                        "docno rel', judgments from several judge groups, for the measures "
                        "map_avgjg, P_avgjg and Rprec_mult_avgjg (nickname qrels_jg, the "
                        "default then); prefs: 'qid jg jsg docno level' preference "
                        "judgments, or qrels_prefs: a qrels file read as preferences, for the "
                        "prefs_* measures (nicknames all_prefs, prefs: the default then); "
                        "diversity: 'qid subtopic docno rel' diversity qrels, for ir_measures' "
                        "diversity measures (-m alpha_nDCG@20, ERR_IA@20, NRBP, ...; the "
                        "others read each document's highest grade)")
    p.add_argument("-T", choices=("trec_results",), default="trec_results", metavar="FORMAT",
                   help="format of the run files: trec_results (the only one, as in trec_eval)")
    p.add_argument("-Z", metavar="ZSCORES_FILE", default=None,
                   help="print z-scores: each query's value less the mean, over the standard "
                        "deviation, that ZSCORES_FILE gives for that query and measure (lines "
                        "'qid measure mean stddev'); -1000000 when the file has none")
    p.add_argument("-o", choices=("text", "json", "csv"), default="text",
                   help="output format: trec_eval's text (default); JSON; or CSV, one row "
                        "per run and query ('all' for the summary), one column per measure")
    p.add_argument("-w", "--workers", type=int, default=-1, metavar="N",
                   help="threads (default -1: every core this process may use; the "
                        "output does not depend on it)")
    p.add_argument("--no-progress", action="store_true",
                   help="no progress bar (by default one is drawn on stderr, when it is a "
                        "terminal, for inputs that take more than a moment)")


def _run_trec(args) -> int:
    from ._measure_parser import (
        MAX_COLLECTION_SIZE,
        UnknownMeasureError,
        trec_columns,
        with_collection_size,
    )
    from ._measures import TEXT_MEASURES
    from ._output import write_json

    try:
        if args.R == "qrels_jg":
            from ._trec_jg import jg_columns

            columns = jg_columns(args.m)
        elif args.R in ("prefs", "qrels_prefs"):
            from ._trec_prefs import prefs_columns

            columns = prefs_columns(args.m)
        else:
            columns = trec_columns(args.m)
    except UnknownMeasureError as e:
        print(f"qafast trec: {e}", file=sys.stderr)
        return 1
    if abs(args.N) > MAX_COLLECTION_SIZE:
        print("qafast trec: -N takes at most 2**53 documents", file=sys.stderr)
        return 1
    columns = with_collection_size(columns, args.N)
    if args.M is not None and args.M < 1:
        print("qafast trec: -M takes a positive number", file=sys.stderr)
        return 1
    if args.l < 0:
        # trec_eval then counts documents outside the qrels as relevant (map above 1)
        print("qafast trec: -l takes 0 or more", file=sys.stderr)
        return 1
    if args.workers == 0 or args.workers < -1:
        print("qafast trec: --workers takes a positive number or -1 (all cores)",
              file=sys.stderr)
        return 1
    if args.run.count("-") > 1:
        print("qafast trec: standard input ('-') can be read only once", file=sys.stderr)
        return 1
    names = list(args.run)
    if len(set(names)) < len(names):
        print("qafast trec: a run file is given twice", file=sys.stderr)
        return 1
    runs = [(name, sys.stdin.buffer if name == "-" else name) for name in names]
    numeric = [c for c in columns if c.family not in TEXT_MEASURES]
    # relstrings are printed per query only (-q)
    relcols = {j: (int(c.x), c.name) for j, c in enumerate(columns)
               if c.family == "relstring" and args.q}
    options = dict(relevance_level=args.l, judged_only=args.J, max_docs=args.M,
                   workers=args.workers)
    queries = "qrels" if args.c else "run"
    zscores = None
    if args.Z is not None:
        zscores = _read_zscores(args.Z)
        if isinstance(zscores, str):
            print(f"qafast trec: {zscores}", file=sys.stderr)
            return 1
    args.zscores = zscores
    found = None
    if args.R == "diversity":
        found = _diversity_files(args, runs, numeric, queries, options, relcols)
    elif args.R == "qrels_jg":
        found = _judge_group_files(args, runs, numeric, queries, options)
    elif args.R in ("prefs", "qrels_prefs"):
        found = _prefs_files(args, runs, numeric, queries)
    else:
        found = _small_files(args.qrels, names, numeric, queries, options, relcols)
    if found is None:
        found = _any_files(args, runs, numeric, queries, options, relcols)
    qrels, results = found
    if not args.c:
        for name, r in zip(names, results):
            _say_skipped(qrels, r, name if len(runs) > 1 else None)
    text = args.o not in ("json", "csv")
    blocks = [_trec_block(args, columns, numeric, qrels, r, per_query=not text)
              for r in results]
    if args.o == "json":
        doc = blocks[0] if len(runs) == 1 else dict(zip(names, blocks))
        return write_json(doc)
    if args.o == "csv":
        return _write_csv(columns, names, blocks)
    out = sys.stdout
    for k, (name, block, r) in enumerate(zip(names, blocks, results)):
        if len(runs) > 1:
            out.write(f"{chr(10) if k else ''}==> {name} <==\n")
        if args.q:
            out.write(_per_query_text(args, columns, numeric, r))
        out.write("".join(_text_lines(args, columns, block)))
    return 0


def _small_files(qrels_path, names, numeric, queries, options, relcols):
    """(qrels, results) from the numpy-free path, or None when the inputs are not small
    plain files or are not a plain case (_trec_text)."""
    from . import _trec_text

    paths = (qrels_path, *names)
    if "-" in paths:  # standard input
        return None
    sizes = [_trec_text.text_size(p) for p in paths]
    if None in sizes or sum(sizes) > _trec_text.QUICK_BYTES:
        return None
    qrels = _trec_text.read_text(qrels_path, is_run=False)
    if qrels is None:
        return None
    results = []
    for name in names:
        run = _trec_text.read_text(name, is_run=True)
        result = None if run is None else _trec_text.evaluate_text(
            qrels, run, numeric, queries=queries, relcols=relcols,
            relevance_level=options["relevance_level"], judged_only=options["judged_only"],
            max_docs=options["max_docs"])
        if result is None:
            return None
        results.append(result)
    return qrels, results


def _any_files(args, runs, numeric, queries, options, relcols):
    """(qrels, results) from the numpy path: any source, any size, and every error."""
    from ._engine import check_max_grades
    from ._progress import Progress
    from ._runfile import check_readable, evaluate_run_source, evaluate_run_sources, source_size
    from ._threads import resolve_workers
    from .ranking import Qrels

    progress = None if not args.no_progress else False
    for name, run in runs:
        check_readable(name, run)
    qrels = Qrels.from_file(args.qrels, workers=min(resolve_workers(args.workers), 2))
    check_max_grades(qrels, numeric)  # ERR's grades end at 4, as in qafast.evaluate
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if len(runs) == 1:
            with Progress(progress, total=source_size(runs[0][1]), desc="run") as bar:
                results = [evaluate_run_source(qrels, runs[0][1], numeric, queries=queries,
                                               options=options, relcols=relcols,
                                               progress=bar.update if bar else None,
                                               ordered=args.q)]
        else:
            with Progress(progress, total=len(runs), unit="run", desc="runs") as bar:
                results = evaluate_run_sources(qrels, runs, numeric, queries=queries,
                                               options=options, relcols=relcols,
                                               progress=bar)
    for w in caught:  # -c on a run sharing no query with the qrels
        print(f"qafast trec: {w.message}", file=sys.stderr)
    return qrels, results


def _judge_group_files(args, runs, numeric, queries, options):
    """(judge groups, results) for -R qrels_jg: each run against each group's qrels."""
    from ._runfile import check_readable
    from ._trec_jg import evaluate_judge_groups, read_judge_groups
    from .ranking import Run

    for name, run in runs:
        check_readable(name, run)
    jgs = read_judge_groups(args.qrels)
    results = [evaluate_judge_groups(jgs, Run.from_file(run), numeric, queries=queries,
                                     options=options) for _, run in runs]
    return jgs, results


def _diversity_files(args, runs, numeric, queries, options, relcols):
    """(qrels, results) for -R diversity: each run against diversity qrels."""
    from ._runfile import RunResult, check_readable
    from .diversity import DiversityQrels, subtopic_values
    from .errors import InputError
    from .ranking import Run

    if relcols:
        raise InputError("-R diversity does not print relstring")
    for name, run in runs:
        check_readable(name, run)
    diverse = DiversityQrels.from_file(args.qrels)
    results = []
    for name, source in runs:
        run = Run.from_file(source)
        ids, values, _ = subtopic_values(diverse, run, numeric, queries, options)
        results.append(RunResult(ids, values, {}, run.run_id, list(run.query_ids), name))
    return diverse.plain(), results


def _prefs_files(args, runs, numeric, queries):
    """(judgments, results) for -R prefs and -R qrels_prefs."""
    from ._trec_prefs import evaluate_prefs, read_prefs

    if any(name == "-" for name, _ in runs):
        from .errors import InputError

        raise InputError("-R prefs and -R qrels_prefs read run files, not standard input")
    judgments = read_prefs(args.qrels, args.R)
    results = [evaluate_prefs(judgments, name, numeric, queries=queries, max_docs=args.M)
               for name, _ in runs]
    return judgments, results


def _say_skipped(qrels, result, name) -> None:
    if len(result.ids) == len(qrels.query_ids):
        return  # every qrels query was evaluated
    rindex = set(result.run_query_ids)
    skipped = sorted(q for q in qrels.query_ids if q not in rindex)
    if skipped and len(skipped) < len(qrels.query_ids):
        shown = ", ".join(skipped[:10]) + (", ..." if len(skipped) > 10 else "")
        where = f"{name}: " if name else ""
        print(f"qafast trec: {where}{len(skipped)} qrels quer"
              f"{'y has' if len(skipped) == 1 else 'ies have'}"
              f" no results in the run and {'is' if len(skipped) == 1 else 'are'} skipped, as "
              f"trec_eval 9.0.8 did (trec_eval 10.0 stops; -c scores them 0): {shown}",
              file=sys.stderr)


def _query_values(args, numeric, r):
    """The run's (queries, numeric columns) values as printed: -Z's z-scores or the values."""
    if args.zscores is None:
        return r.values
    return _as_zscores(args.zscores, r.ids, numeric, r.values)


def _trec_block(args, columns, numeric, qrels, r, *, per_query: bool = True) -> dict:
    """One run's output as data: {"per_query": {qid: {name: value}}, "all": {...}} (as -o
    json writes it), the values in trec_eval's types; gm_* per query are left out, and all of
    them unless ``per_query`` (the text output prints them from the values directly)."""
    from ._summaries import column_summaries

    col_of = {c.name: j for j, c in enumerate(numeric)}
    ids = r.ids
    summed = values = _query_values(args, numeric, r)
    if any(b < a for a, b in zip(ids, ids[1:])):
        # trec_eval adds the queries' values in query id order: a run streamed in file order
        # (without -q), and -c's queries missing from the run, put after it, are summed so,
        # or the last bits differ (gm_map under -c, as -o json prints them). Only the numpy
        # path's rows come out of that order; the sort took 0.1 s for a million ids.
        summed = summed[sorted(range(len(ids)), key=ids.__getitem__)]
    summary = dict(zip([c.name for c in numeric], column_summaries(
        numeric, summed, every_qrels_query=qrels if args.c else None)))
    run_id = r.run_id if r.run_id is not None else ""
    doc: dict = {}
    if args.q and per_query:
        rel = {columns[j].name: s for j, s in r.relstrings.items()}
        doc["per_query"] = {
            q: {c.name: (rel[c.name][p] if c.family == "relstring"
                         else _number(c.family, values[p, col_of[c.name]], args.zscores))
                for c in columns if c.family not in ("runid", "num_q")
                and c.aggregate != "gm"}
            for p, q in enumerate(r.ids)}
    if not args.n:
        doc["all"] = {c.name: _summary_value(c, run_id, summary, len(r.ids), args.zscores)
                      for c in columns if c.family != "relstring"}
    return doc


def _per_query_text(args, columns, numeric, r) -> str:
    """trec_eval's -q lines of one run, as ``_text_lines`` prints a block's "per_query", from
    the values directly: building the dict of dicts and a line at a time took 20 us a line."""
    z = args.zscores is not None
    col_of = {c.name: j for j, c in enumerate(numeric)}
    rel = {columns[j].name: s for j, s in r.relstrings.items()}
    printed = [c for c in columns if c.family not in ("runid", "num_q") and c.aggregate != "gm"]
    rows = _query_values(args, numeric, r).tolist()
    lines: list[str] = []
    add = lines.append
    # one template a column: its name, then the query id and the value
    plan: list[tuple] = []
    for c in printed:
        name = f"{c.name:<22}".replace("%", "%%")
        if c.family == "relstring":
            plan.append((f"{name}\t%s\t'%s'\n", -1, rel[c.name]))
        else:
            head = f"{'Z' if z else ''}{name}\t%s\t"
            as_count = c.family in _counts() and not z
            plan.append((head + ("%d\n" if as_count else "%6.4f\n"), col_of[c.name],
                         as_count))
    for p, q in enumerate(r.ids):
        row = rows[p]
        for template, j, extra in plan:
            if j < 0:
                add(template % (q, extra[p]))
                continue
            v = row[j]
            if extra:
                add(template % (q, round(v)))
            elif v != v:
                add(_line_nan(template, q, v))
            else:
                add(template % (q, v))
    return "".join(lines)


def _line_nan(template: str, qid, v: float) -> str:
    """A NaN's line: glibc's printf shows its sign, Python's format does not; trec_eval's
    NaNs are the x86-64 0 / 0, sign bit set: "-nan" (the kernels make theirs the same)."""
    shown = "-nan" if math.copysign(1.0, v) < 0 else "nan"
    return template.replace("%6.4f", "%6s") % (qid, shown)


def _text_lines(args, columns, block):
    """trec_eval's lines for one run's block (-Z: each number's name starts with "Z", and
    every number, counts too, prints as %6.4f)."""
    family = {c.name: c.family for c in columns}
    z = args.zscores is not None
    for q, row in block.get("per_query", {}).items():
        for name, v in row.items():
            if family[name] == "relstring":
                yield f"{name:<22}\t{q}\t'{v}'\n"
            else:
                yield _line(name, q, family[name], v, z)
    for name, v in block.get("all", {}).items():
        if family[name] == "runid" or (family[name] == "num_q" and not z):
            yield f"{name:<22}\tall\t{v}\n"
        else:
            yield _line(name, "all", family[name], v, z)


def _write_csv(columns, names, blocks) -> int:
    """One table: a row per run and query ("all": the summary), a column per measure. A
    cell with no value (a per-query runid, num_q or gm_*, a summary relstring) is empty;
    an undefined number is "nan"."""
    import csv

    header = [c.name for c in columns]
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(["run", "query", *header])
    for name, block in zip(names, blocks):
        for q, row in block.get("per_query", {}).items():
            w.writerow([name, q, *(_cell(row.get(h, "")) for h in header)])
        if "all" in block:
            w.writerow([name, "all", *(_cell(block["all"].get(h, "")) for h in header)])
    return 0


def _cell(v):
    return repr(v) if isinstance(v, float) else v


def _number(family, v, zscores=None):
    return int(round(v)) if family in _counts() and zscores is None else float(v)


def _summary_value(c, run_id, summary, n, zscores=None):
    if c.family == "runid":
        return run_id
    if c.family == "num_q":
        return n if zscores is None else float(n)
    return _number(c.family, summary[c.name], zscores)


#: trec_eval's value for a query and measure that the -Z file has no mean and deviation for
MISSING_ZSCORE = -1000000.0


def _read_zscores(path) -> dict | str:
    """{(qid, measure): (mean, stddev)} from a trec_eval -Z file ("qid measure mean stddev"
    lines), or the error message naming the file and line."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        return f"cannot read the z-scores file {path!r}: {e.strerror}"
    if not raw:
        return f"the z-scores file {path!r} is empty"
    out: dict = {}
    lines = raw.split(b"\n")
    if raw.endswith(b"\n"):
        lines.pop()
    for k, line in enumerate(lines, 1):
        fields = line.split()
        try:
            if len(fields) != 4:
                raise ValueError
            qid, meas = fields[0].decode(), fields[1].decode()
            mean, sd = float(fields[2]), float(fields[3])
        except ValueError:
            return (f"{path}, line {k}: a z-scores line is 'qid measure mean stddev' with "
                    f"two numbers; got {line[:80]!r}")
        if (qid, meas) in out:
            return f"{path}, line {k}: query {qid!r} measure {meas!r} is given twice"
        out[qid, meas] = (mean, sd)
    return out


def _as_zscores(zscores: dict, ids, numeric, values):
    """The (queries, columns) values as z-scores against the file's means and deviations,
    as trec_eval -Z computes them (convert_zscores.c): (v - mean) / stddev; with a 0
    deviation 0 when v equals the mean; MISSING_ZSCORE without a mean and deviation."""
    from array import array

    n, m = len(ids), len(numeric)
    out = array("d", bytes(8 * n * m))
    for p, q in enumerate(ids):
        for j, c in enumerate(numeric):
            v = float(values[p, j])
            found = zscores.get((q, c.name))
            if found is None:
                z = MISSING_ZSCORE
            elif found[1]:
                z = (v - found[0]) / found[1]
            else:
                z = 0.0 if v == found[0] else MISSING_ZSCORE
            out[p * m + j] = z
    if type(values).__module__ == "numpy":  # the numpy path's results stay numpy
        import numpy as np

        return np.frombuffer(out, dtype=np.float64).reshape(n, m)
    return memoryview(out).cast("B").cast("d", (n, m))


def _line(name: str, qid, family: str, v, z: bool = False) -> str:
    """One line; ``z`` (-Z): "Z" before the padded name, every value a float."""
    head = f"{'Z' if z else ''}{name:<22}"
    if family in _counts() and not z:
        return f"{head}\t{qid}\t{int(round(v))}\n"
    if v != v:
        # glibc's printf shows a NaN's sign, Python's format does not. trec_eval's NaNs are
        # the x86-64 0 / 0, sign bit set: "-nan"; the kernels make theirs the same
        return f"{head}\t{qid}\t{'-nan' if math.copysign(1.0, v) < 0 else 'nan':>6}\n"
    return f"{head}\t{qid}\t{v:6.4f}\n"


def _run_example(args) -> int:
    from importlib import resources  # here: 12 ms of every command's start otherwise

    from .ranking import Qrels, Run, evaluate

    data = resources.files("qafast") / "data"
    with resources.as_file(data / "sample.qrels") as qp, resources.as_file(data / "sample.run") as rp:
        qrels = Qrels.from_file(qp)
        run = Run.from_file(rp)
    measures = ["map", "ndcg@10", "P@10", "recall@100", "mrr@10", "bpref"]
    per_query = evaluate(qrels, run, measures, per_query=True)
    summary = evaluate(qrels, run, measures)
    print(f"qafast {__import__('qafast').__version__}: sample run '{run.run_id}' "
          f"({len(run)} queries, {run.num_entries} documents) against sample qrels "
          f"({qrels.num_entries} judgments), trec_eval 10.0 semantics\n")
    print(f"{'query':<8}" + "".join(f"{m:>12}" for m in measures))
    for q, row in per_query.items():
        print(f"{q:<8}" + "".join(f"{row[m]:>12.4f}" for m in measures))
    print(f"{'mean':<8}" + "".join(f"{summary[m]:>12.4f}" for m in measures))
    print(f"\nThe files are in {data}; `qafast trec -q QRELS RUN` prints trec_eval's full output.")
    return 0


#: The other families' subcommands and the module that registers each, with its
#: ``register_cli(subparsers)`` function: ``qafast drop ...`` imports the DROP module alone,
#: where importing every family took 0.3 s of a command's start (tests/test_trec_cli.py
#: checks this table against what the modules register).
SUBCOMMANDS = {
    "squad": "squad_eval",
    "hotpot": "hotpot_eval",
    "drop": "drop_eval",
    "coqa": "coqa_eval",
    "dpr-retrieval": "dpr_eval",
    "tydi": "tydi_eval",
    "quac": "quac_eval",
    "mlqa": "multilingual_eval",
    "cmrc": "multilingual_eval",
    "drcd": "multilingual_eval",
    "triviaqa": "triviaqa_eval",
    "msmarco-passage": "msmarco_eval",
    "nq": "nq_eval",
    "kilt": "kilt_eval",
    "kilt-retrieval": "kilt_eval",
    "bioasq": "factoid",
    "dbqa": "dbqa",
    "ap": "curves",
    "opencsr": "concepts",
    "events": "events",
    "compare": "comparison",
    "fuse": "fusion",
    "gdeval": "gdeval_eval",
    "cwl": "cwl_eval",
    "ndeval": "ndeval_eval",
}

#: Modules of the other metric families, in the order ``qafast --help`` lists their commands.
FAMILY_MODULES = tuple(dict.fromkeys(SUBCOMMANDS.values()))


def _family_modules(names=FAMILY_MODULES):
    import importlib

    for name in names:
        module = importlib.import_module(f"qafast.{name}")
        if hasattr(module, "register_cli"):
            yield module


def _accept_no_progress(command) -> None:
    """Give a subcommand that draws no progress bar a ``--no-progress`` that does nothing, so
    that a script may pass it to every qafast command."""
    import argparse

    try:
        command.add_argument("--no-progress", action="store_true",
                             help="accepted for scripts; this command draws no progress bar")
    except argparse.ArgumentError:
        pass  # the command has its own


def _plain_command(argv: list):
    """``(handler, args)`` of a command of a family's ``PLAIN_COMMANDS`` (``{name: (handler,
    names of its positional arguments)}``) given exactly its positional arguments, none
    starting with "-": the ``args`` argparse would give (with ``--no-progress`` off), made
    without it; None for any other command line, which argparse then reads (options,
    ``--help``, a wrong number of arguments and its errors)."""
    if not argv or argv[0] not in SUBCOMMANDS:
        return None
    import importlib
    import types

    module = importlib.import_module(f"qafast.{SUBCOMMANDS[argv[0]]}")
    plain = getattr(module, "PLAIN_COMMANDS", {}).get(argv[0])
    if plain is None:
        return None
    handler, names = plain
    values = argv[1:]
    if len(values) != len(names) or not all(
            isinstance(v, str) and not v.startswith("-") for v in values):
        return None
    return handler, types.SimpleNamespace(command=argv[0], no_progress=False,
                                          **dict(zip(names, values)))


def build_parser(*, families: bool = True, command: str | None = None):
    """The ``qafast`` argument parser and its handlers, ``{subcommand: handler(args)}``;
    ``families=False`` registers only ``trec`` and ``example``, and ``command``, one of
    :data:`SUBCOMMANDS`, only its family's subcommands beside them."""
    import argparse

    from . import __version__

    parser = argparse.ArgumentParser(
        prog="qafast", description="Fast, exact evaluation of QA and retrieval systems.")
    parser.add_argument("--version", action="version", version=f"qafast {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    _trec_parser(sub)
    sub.add_parser("example", help="evaluate the sample run shipped with qafast")
    handlers = {"trec": _run_trec, "example": _run_example}
    if families:
        modules = (SUBCOMMANDS[command],) if command in SUBCOMMANDS else FAMILY_MODULES
        for module in _family_modules(modules):
            # each family module registers its subcommands: register_cli(sub) -> {name: handler}
            handlers.update(module.register_cli(sub))
    for subparser in sub.choices.values():
        _accept_no_progress(subparser)
    return parser, handlers


def main(argv=None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    # a command needs its own family only: importing them all took 14 ms of the 0.14 s that
    # `qafast trec` takes on a small file, and 0.3 s of `qafast drop`'s start
    first = argv[0] if argv else None
    plain = _plain_command(argv)
    if plain is not None:
        handler, args = plain
    else:
        parser, handlers = build_parser(families=first not in ("trec", "example"),
                                        command=first)
        args = parser.parse_args(argv)
        handler = handlers[args.command]
    try:
        return handler(args)
    except BrokenPipeError:
        # the reader stopped early (`| head`): what is still buffered goes nowhere, instead
        # of raising again when Python flushes stdout at exit
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):  # a stdout without a file descriptor
            pass
        return 0
    except (ValueError, TypeError, OSError) as e:
        print(f"qafast {args.command}: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    from qafast._output import interrupted

    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(interrupted())
