"""The ``qafast`` command.

``qafast trec QRELS RUN`` prints what trec_eval 10.0 prints, byte for byte;
``qafast example`` evaluates the sample run shipped with the package.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import warnings
from importlib import resources

from ._measures import TEXT_MEASURES, UnknownMeasureError, trec_columns
from .ranking import Qrels, Run, _Evaluation, _summaries

_COUNTS = frozenset({"num_q", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"})


def _trec_parser(sub) -> None:
    p = sub.add_parser(
        "trec", help="evaluate a TREC run against qrels, printing what trec_eval 10.0 prints",
        description="Evaluate a TREC run file against a qrels file. Output is trec_eval "
                    "10.0's, byte for byte; the options are trec_eval's.")
    p.add_argument("qrels", help="qrels file: 'qid iter docno rel' (.gz read as gzip)")
    p.add_argument("run", help="run file: 'qid iter docno rank score run_id'; '-' for stdin")
    p.add_argument("-q", action="store_true", help="print each query's values too")
    p.add_argument("-n", action="store_true", help="no summary ('all') lines")
    p.add_argument("-c", action="store_true",
                   help="average over every qrels query; those missing from the run score 0")
    p.add_argument("-l", type=int, default=1, metavar="N",
                   help="lowest grade counted as relevant (default 1)")
    p.add_argument("-M", type=int, default=None, metavar="N",
                   help="keep only the top N documents of each query")
    p.add_argument("-J", action="store_true", help="drop documents that are not judged")
    p.add_argument("-m", action="append", metavar="MEASURE",
                   help="measure[.params] or nickname (official, all_trec, set); repeatable; "
                        "default official. Any other name qafast.evaluate takes (ndcg@10, "
                        "mrr@10, ...) prints after trec_eval's measures, in the order given")
    p.add_argument("-o", choices=("text", "json"), default="text", help="output format")


def _run_trec(args) -> int:
    out = sys.stdout
    try:
        columns = trec_columns(args.m)
    except UnknownMeasureError as e:
        print(f"qafast trec: {e}", file=sys.stderr)
        return 1
    if args.M is not None and args.M < 1:
        print("qafast trec: -M takes a positive number", file=sys.stderr)
        return 1
    if args.l < 0:
        # trec_eval then counts documents outside the qrels as relevant (map above 1)
        print("qafast trec: -l takes 0 or more", file=sys.stderr)
        return 1
    qrels = Qrels.from_file(args.qrels)
    run = Run.from_file(sys.stdin.buffer if args.run == "-" else args.run)
    if not args.c:
        rindex = run.query_index()
        skipped = sorted(q for q in qrels.query_ids if q not in rindex)
        if skipped and any(q in rindex for q in qrels.query_ids):
            shown = ", ".join(skipped[:10]) + (", ..." if len(skipped) > 10 else "")
            print(f"qafast trec: {len(skipped)} qrels quer{'y has' if len(skipped) == 1 else 'ies have'}"
                  f" no results in the run and {'is' if len(skipped) == 1 else 'are'} skipped, as "
                  f"trec_eval 9.0.8 did (trec_eval 10.0 stops; -c scores them 0): {shown}",
                  file=sys.stderr)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ev = _Evaluation(qrels, run, relevance_level=args.l, judged_only=args.J,
                         max_docs=args.M, queries="qrels" if args.c else "run", workers=1)
    for w in caught:  # -c on a run sharing no query with the qrels
        print(f"qafast trec: {w.message}", file=sys.stderr)
    numeric = [c for c in columns if c.family not in TEXT_MEASURES]
    values = ev.values(numeric)
    col_of = {c.name: j for j, c in enumerate(numeric)}
    summary = dict(zip([c.name for c in numeric], _summaries(
        numeric, values, every_qrels_query=qrels if args.c else None)))
    run_id = run.run_id if run.run_id is not None else ""
    if args.o == "json":
        doc: dict = {}
        if args.q:
            doc["per_query"] = {
                q: {c.name: (ev.relstring(p, int(c.x), c.name) if c.family == "relstring"
                             else _number(c.family, values[p, col_of[c.name]]))
                    for c in columns if c.family not in ("runid", "num_q")
                    and c.aggregate != "gm"}
                for p, q in enumerate(ev.ids)}
        if not args.n:
            doc["all"] = {c.name: _summary_value(c, run_id, summary, len(ev.ids))
                          for c in columns if c.family != "relstring"}
        json.dump(json_safe(doc), out, indent=1, allow_nan=False)
        out.write("\n")
        return 0
    lines = []
    if args.q:
        for p, q in enumerate(ev.ids):
            for c in columns:
                if c.family in ("runid", "num_q") or c.aggregate == "gm":
                    continue
                if c.family == "relstring":
                    lines.append(f"{c.name:<22}\t{q}\t'{ev.relstring(p, int(c.x), c.name)}'\n")
                else:
                    lines.append(_line(c.name, q, c.family, values[p, col_of[c.name]]))
    if not args.n:
        for c in columns:
            if c.family == "relstring":
                continue
            if c.family == "runid":
                lines.append(f"{'runid':<22}\tall\t{run_id}\n")
            elif c.family == "num_q":
                lines.append(f"{'num_q':<22}\tall\t{len(ev.ids)}\n")
            else:
                lines.append(_line(c.name, "all", c.family, summary[c.name]))
    out.write("".join(lines))
    return 0


def _number(family, v):
    return int(round(v)) if family in _COUNTS else float(v)


def _summary_value(c, run_id, summary, n):
    if c.family == "runid":
        return run_id
    if c.family == "num_q":
        return n
    return _number(c.family, summary[c.name])


def _line(name: str, qid, family: str, v: float) -> str:
    if family in _COUNTS:
        return f"{name:<22}\t{qid}\t{int(round(v))}\n"
    if v != v:
        # glibc's printf shows a NaN's sign, Python's format does not. trec_eval's NaNs are
        # the x86-64 0 / 0, sign bit set: "-nan"; the kernels make theirs the same
        return f"{name:<22}\t{qid}\t{'-nan' if math.copysign(1.0, v) < 0 else 'nan':>6}\n"
    return f"{name:<22}\t{qid}\t{v:6.4f}\n"


def _run_example(args) -> int:
    from .ranking import evaluate

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


def json_safe(doc):
    """``doc`` with every NaN or infinite float as None: JSON has no such numbers, and a
    bare ``NaN`` is refused by strict parsers (trec_eval's text output prints ``-nan``)."""
    if isinstance(doc, float):
        return doc if math.isfinite(doc) else None
    if isinstance(doc, dict):
        return {k: json_safe(v) for k, v in doc.items()}
    if isinstance(doc, (list, tuple)):
        return [json_safe(v) for v in doc]
    return doc


def write_json(doc) -> int:
    """The ``-o json`` output of every subcommand: indented JSON and a newline on stdout; a
    NaN or infinite value is ``null``."""
    json.dump(json_safe(doc), sys.stdout, indent=1, allow_nan=False)
    sys.stdout.write("\n")
    return 0


def write_values(values: dict, *, width: int) -> int:
    """The text output of a subcommand's summary: ``name<TAB>value`` with 4 decimals."""
    sys.stdout.write("".join(f"{k:<{width}}\t{v:.4f}\n" for k, v in values.items()))
    return 0


#: Modules of the other metric families, each with a ``register_cli(subparsers)`` function.
FAMILY_MODULES = ("answers", "squad", "factoid", "dbqa", "curves", "concepts", "events",
                  "compare")


def _family_modules():
    import importlib

    for name in FAMILY_MODULES:
        try:
            module = importlib.import_module(f"qafast.{name}")
        except ModuleNotFoundError as e:
            if e.name != f"qafast.{name}":
                raise
            continue
        if hasattr(module, "register_cli"):
            yield module


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="qafast", description="Fast, exact evaluation of QA and retrieval systems.")
    sub = parser.add_subparsers(dest="command", required=True)
    _trec_parser(sub)
    sub.add_parser("example", help="evaluate the sample run shipped with qafast")
    handlers = {"trec": _run_trec, "example": _run_example}
    for module in _family_modules():
        # each family module registers its subcommands: register_cli(sub) -> {name: handler}
        handlers.update(module.register_cli(sub))
    args = parser.parse_args(argv)
    try:
        return handlers[args.command](args)
    except (ValueError, TypeError, OSError) as e:
        print(f"qafast {args.command}: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
