#!/usr/bin/env python
"""Two builds of qafast on one TREC run, in alternation: is a change faster?

    python benchmarks/ab_trec.py --base ../base QRELS RUN            # 5 rounds, five measures
    python benchmarks/ab_trec.py --base ../base --rounds 9 -w 1 QRELS RUN

``--base`` is another checkout of qafast, built in place (``python setup.py build_ext
--inplace``), for example a ``git worktree`` of the commit before the change; the other build
is this tree's ``src/``. Each round runs ``qafast trec`` once with each build, in turn, in
its own process; the report gives every run's wall time and CPU time (user + system) and the
median of each, and checks that the two builds printed the same numbers.

Not a test, and not a replacement for ``bench_scale.py``: it answers one question, whether
one build is faster than another, on a machine whose speed moves while it is asked. On the
2-core VM where the 100M-line case was tuned, one build's scan of the same text took 36 ns a
line in some runs and 50-60 ns in others, minutes apart, with nothing else running: two
builds timed one after the other (best of three each) then differed by a third in either
direction. Runs that alternate see the same host within seconds of each other, and the
medians of five or more rounds settle what single runs cannot.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FIVE = ["map", "ndcg_cut.10", "P.10", "recall.100", "recip_rank"]


def run_once(src: Path, args: list[str]) -> tuple[float, float, bytes]:
    """Wall seconds, CPU seconds (user + system) and stdout of one ``qafast trec``."""
    env = dict(os.environ, PYTHONPATH=str(src))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "qafast.cli", "trec", "--no-progress", *args],
                          env=env, capture_output=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"qafast trec failed with {src}:\n{proc.stderr.decode()[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.stdout


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("qrels")
    ap.add_argument("run")
    ap.add_argument("--base", required=True, type=Path,
                    help="another qafast checkout, built in place: the build to compare with")
    ap.add_argument("--rounds", type=int, default=5, help="runs of each build (default 5)")
    ap.add_argument("-w", "--workers", default=None, help="qafast trec's -w (default: its own)")
    ap.add_argument("-m", "--measure", action="append", default=None,
                    help="a measure, as qafast trec takes it (repeatable; default five)")
    args = ap.parse_args(argv)
    builds = {"base": args.base.resolve() / "src", "this": REPO / "src"}
    for name, src in builds.items():
        if not (src / "qafast").is_dir():
            ap.error(f"{name}: no qafast package under {src}")
    trec_args = [x for m in (args.measure or FIVE) for x in ("-m", m)]
    if args.workers is not None:
        trec_args += ["-w", args.workers]
    trec_args += [args.qrels, args.run]
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in builds}
    outputs: dict[str, bytes] = {}
    for k in range(args.rounds):
        for name, src in builds.items():
            wall, cpu, out = run_once(src, trec_args)
            times[name].append((wall, cpu))
            outputs.setdefault(name, out)
            print(f"  round {k + 1}: {name:<5} {wall:7.2f} s wall {cpu:7.2f} s CPU", flush=True)
    medians = {name: (statistics.median(w for w, _ in got), statistics.median(c for _, c in got))
               for name, got in times.items()}
    for name, (wall, cpu) in medians.items():
        print(f"{name:<5} median {wall:7.2f} s wall {cpu:7.2f} s CPU  ({builds[name].parent})")
    (bw, bc), (tw, tc) = medians["base"], medians["this"]
    print(f"this build against base: wall {bw / tw:.2f}x, CPU {bc / tc:.2f}x faster; "
          f"same numbers: {outputs['base'] == outputs['this']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
