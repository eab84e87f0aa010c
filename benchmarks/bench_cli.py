#!/usr/bin/env python
"""The command line on ordinary runs: ``qafast trec`` beside trec_eval, ``qafast squad``
beside the official SQuAD scripts, each a fresh process as a user runs it.

    python benchmarks/bench_cli.py --trec-eval PATH/trec_eval --squad-v2 PATH/evaluate-v2.0.py
    python benchmarks/bench_cli.py --quick       # 3 rounds instead of 7, no 2M-line case

Not a test: one run prints one table, with the ratios the targets are stated in (trec_eval
or the official script's time over qafast's: above 1, qafast is faster). A contender that is
not given (no trec_eval binary, no script) is left out with a note. trec_eval 10.0 builds
from its source with ``make``; the SQuAD scripts are single files of the SQuAD-explorer
repository, run unmodified.

Every command runs in a child process started through ``/usr/bin/time`` (wall time and
peak resident memory); the contenders of a case are taken in turn, round after round, and
each one's best wall time is kept (``bench_scale.measure_together``), so a ratio compares
runs made seconds apart under the same load. Each case checks that qafast printed what the
reference printed, byte for byte (trec_eval) or number for number (the SQuAD scripts' JSON).

Rows:

- ``python -c pass``: the interpreter's own start, which every Python command pays: on a
  case where trec_eval's whole run takes less than that, no Python program can match it.
- trec_eval, ``qafast trec`` (the small-file path: no numpy), and ``qafast trec`` forced onto
  the numpy path (what every input took before), on generated runs (``-m all_trec``):
  43 queries x 1,000 documents with 9,000 graded judgments (the size of TREC DL 2019
  passage), 250 queries x 100 documents with 300,000 judgments (Robust04's qrels), and
  runs of 1M and 2M lines (1,000 and 2,000 queries x 1,000 documents, 50 judgments each).
- ``qafast squad`` against ``evaluate-v2.0.py`` (and ``evaluate-v1.1.py`` when given) on
  SQuAD dev-sized synthetic data: 10,570 questions (v1.1) and 11,873 (v2.0, a third
  unanswerable, with no-answer probabilities).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_answers import make_squad  # noqa: E402
from bench_scale import env, measure_together, warm, write_qrels, write_run  # noqa: E402

FORCE_NUMPY = ("import sys, qafast._trec_text as t; t.QUICK_BYTES = 0; "
               "from qafast._program import main; sys.exit(main(sys.argv[1:]))")
QAFAST = "from qafast._program import main; import sys; sys.exit(main(sys.argv[1:]))"


def small_trec(directory: Path, name: str, n_queries: int, n_docs: int, n_judged: int,
               seed: int) -> tuple[Path, Path]:
    """A run of ``n_docs`` per query, 4-decimal scores in rank order, and ``n_judged``
    graded judgments over the queries (half of each query's on retrieved documents)."""
    rng = random.Random(seed)
    per_query = n_judged // n_queries
    run_lines, qrels_lines = [], []
    for i in range(n_queries):
        qid = str(1000 + 37 * i)
        pool = rng.sample(range(1, 9_000_000), n_docs + per_query)
        scores = sorted((round(rng.uniform(0, 30), 4) for _ in range(n_docs)), reverse=True)
        for rank, (doc, score) in enumerate(zip(pool, scores), 1):
            run_lines.append(f"{qid} Q0 D{doc} {rank} {score} bench\n")
        retrieved = min(n_docs, per_query) // 2
        judged = rng.sample(pool[:n_docs], retrieved) + pool[n_docs:n_docs + per_query - retrieved]
        for doc in sorted(judged):
            qrels_lines.append(f"{qid} 0 D{doc} {rng.choice((0, 0, 0, 1, 1, 2, 3))}\n")
    qrels, run = directory / f"{name}.qrels", directory / f"{name}.run"
    qrels.write_text("".join(qrels_lines))
    run.write_text("".join(run_lines))
    return qrels, run


def ratio(reference: dict, contender: dict) -> str:
    return f"{reference['s'] / contender['s']:.2f}x"


def row(label: str, got: dict, note: str = "") -> None:
    print(f"  {label:<44} {got['s']:7.3f} s {got['mb']:7.0f} MB  {note}", flush=True)


def trec_cases(args, tmp: Path, e: dict) -> None:
    cases = [("TREC DL 2019 passage size: 43 q x 1,000 docs, 9,000 judgments",
              small_trec(tmp, "dl", 43, 1000, 9000, 1)),
             ("Robust04 size: 250 q x 100 docs, 300,000 judgments",
              small_trec(tmp, "robust", 250, 100, 300_000, 2))]
    for n_q in (1000,) if args.quick else (1000, 2000):
        run, qrels = tmp / f"run{n_q}", tmp / f"qrels{n_q}"
        write_run(run, n_q, 1000)
        write_qrels(qrels, n_q, 1000, 50)
        cases.append((f"{n_q * 1000 // 10**6}M lines: {n_q:,} q x 1,000 docs, 50 judgments each",
                      (qrels, run)))
    for title, (qrels, run) in cases:
        warm(qrels, run)
        files = ["-m", "all_trec", str(qrels), str(run)]
        cmds = {"python": ([sys.executable, "-c", "pass"], e),
                "qafast": ([sys.executable, "-c", QAFAST, "trec", *files], e),
                "numpy path": ([sys.executable, "-c", FORCE_NUMPY, "trec", *files], e)}
        if args.trec_eval:
            cmds["trec_eval"] = ([args.trec_eval, *files], e)
        got = measure_together(cmds, repeat=args.rounds)
        print(f"\n{title} ({run.stat().st_size / 2**20:.1f} MB run, "
              f"{qrels.stat().st_size / 2**20:.1f} MB qrels)")
        row("python -c pass (the interpreter's start)", got["python"])
        te = got.get("trec_eval")
        if te is not None:
            row("trec_eval -m all_trec", te)
            same = got["qafast"]["out"] == te["out"] == got["numpy path"]["out"]
            print(f"  {'output identical to trec_eval':<44} {'yes' if same else 'NO'}")
            if not same:
                raise SystemExit("qafast's output differs from trec_eval's")
        row("qafast trec -m all_trec", got["qafast"],
            f"trec_eval / qafast: {ratio(te, got['qafast'])}" if te else "(no trec_eval given)")
        row("qafast trec, numpy path (before)", got["numpy path"],
            f"numpy path / small-file path: {ratio(got['numpy path'], got['qafast'])}")


def squad_cases(args, tmp: Path, e: dict) -> None:
    scripts = [(v, s) for v, s in (("1.1", args.squad_v1), ("2.0", args.squad_v2)) if s]
    if not scripts:
        print("\nSQuAD: no official script given (--squad-v1, --squad-v2): left out")
        return
    for version, script in scripts:
        v2 = version == "2.0"
        n = 11_873 if v2 else 10_570
        dataset, preds, probs = make_squad(n, 7 + v2, v2=v2)
        paths = {}
        for name, obj in (("data", dataset), ("pred", preds), ("na", probs)):
            paths[name] = tmp / f"squad{version}-{name}.json"
            paths[name].write_text(json.dumps(obj))
        extra = ["--na-prob-file", str(paths["na"])] if v2 else []
        files = [str(paths["data"]), str(paths["pred"])]
        cmds = {"official": ([sys.executable, script, *files, *extra], e),
                "qafast": ([sys.executable, "-c", QAFAST, "squad", *files, *extra], e)}
        got = measure_together(cmds, repeat=args.rounds)
        same = json.loads(got["official"]["out"]) == json.loads(got["qafast"]["out"])
        print(f"\nSQuAD v{version}: {n:,} questions (the dev set's size)")
        row(f"python {Path(script).name}", got["official"])
        row(f"qafast squad{' --na-prob-file' if v2 else ''}", got["qafast"],
            f"script / qafast: {ratio(got['official'], got['qafast'])}")
        print(f"  {'numbers identical to the script':<44} {'yes' if same else 'NO'}")
        if not same:
            raise SystemExit("qafast squad's numbers differ from the script's")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trec-eval", default=shutil.which("trec_eval"),
                    help="the trec_eval binary (default: trec_eval on PATH)")
    ap.add_argument("--squad-v1", help="the official evaluate-v1.1.py")
    ap.add_argument("--squad-v2", help="the official evaluate-v2.0.py")
    ap.add_argument("--rounds", type=int, default=7, help="rounds per case (default 7)")
    ap.add_argument("--quick", action="store_true", help="3 rounds, no 2M-line case")
    args = ap.parse_args(argv)
    if args.quick:
        args.rounds = min(args.rounds, 3)
    print(f"qafast bench_cli: {os.uname().nodename}, {os.cpu_count()} cores, load average "
          f"{'/'.join(f'{x:.2f}' for x in os.getloadavg())}; best of {args.rounds} rounds, "
          "taken in turn")
    if not args.trec_eval:
        print("  no trec_eval binary (--trec-eval): its rows are left out")
    tmp = Path(tempfile.mkdtemp(prefix="qafast-bench-cli-"))
    try:
        e = env(tmp)
        trec_cases(args, tmp, e)
        squad_cases(args, tmp, e)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
