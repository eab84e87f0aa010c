#!/usr/bin/env python
"""``qafast gdeval`` beside the TREC Web track's gdeval.pl, on a generated run.

    python benchmarks/bench_gdeval.py --script /path/to/gdeval.pl            # 1,000,000 lines
    python benchmarks/bench_gdeval.py --script /path/to/gdeval.pl --quick    # 100,000 lines

gdeval.pl is a Perl program, so it runs as a process; ``qafast gdeval`` is timed the same way
(its start-up included), and ``qafast.gdeval`` in this process. Data: T topics of 1,000
documents each (``--topics``), scores with 2 decimals (many ties, broken by docno), qrels of 200
judgments a topic with grades -2 to 4. Each row is the median of ``--reps`` runs (a run over
20 s is timed once); the outputs of the two programs are checked to be the same bytes.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import import_qafast, load_average, machine_info, time_call


def write_files(folder: str, topics: int, seed: int) -> tuple[str, str]:
    rng = np.random.default_rng(seed)
    qrels, run = os.path.join(folder, "qrels"), os.path.join(folder, "run")
    with open(qrels, "w") as f:
        for t in range(1, topics + 1):
            docs = rng.choice(3000, 200, replace=False)
            grades = rng.choice([-2, 0, 0, 0, 1, 1, 2, 3, 4], 200)
            f.writelines(f"{t} 0 clueweb-{d:06d} {g}\n" for d, g in zip(docs, grades))
    with open(run, "w") as f:
        for t in range(1, topics + 1):
            docs = rng.choice(3000, 1000, replace=False)
            scores = np.sort(rng.integers(0, 2000, 1000))[::-1] / 100
            f.writelines(f"{t} Q0 clueweb-{d:06d} {i + 1} {s:.2f} bench\n"
                         for i, (d, s) in enumerate(zip(docs, scores)))
    return qrels, run


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--script", required=True, help="gdeval.pl (version 1.3)")
    ap.add_argument("--topics", type=int, default=1000)
    ap.add_argument("--quick", action="store_true", help="100 topics")
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    topics = 100 if args.quick else args.topics
    qafast, why = import_qafast()
    if qafast is None:
        print(why)
        return 1
    print("\n".join(machine_info()))
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent / "src"))
    with tempfile.TemporaryDirectory() as tmp:
        qrels, run = write_files(tmp, topics, seed=0)
        print(f"run: {topics * 1000:,} lines; qrels: {topics * 200:,} lines; "
              f"load {load_average()}")

        def perl():
            return subprocess.run(["perl", args.script, qrels, run], capture_output=True,
                                  check=True).stdout

        def cli():
            return subprocess.run([sys.executable, "-m", "qafast", "gdeval", qrels, run],
                                  capture_output=True, check=True, env=env).stdout

        t_perl = time_call(perl, reps=args.reps)
        t_cli = time_call(cli, reps=args.reps)
        t_api = time_call(lambda: qafast.gdeval(qrels, run), reps=args.reps,
                          warmup=lambda: qafast.gdeval(qrels, run))
        same = t_perl.result == t_cli.result
    print(f"{'gdeval.pl':<28}{t_perl.label:>16}")
    print(f"{'qafast gdeval (a process)':<28}{t_cli.label:>16}   "
          f"{t_perl.seconds / t_cli.seconds:6.1f}x")
    print(f"{'qafast.gdeval (in process)':<28}{t_api.label:>16}   "
          f"{t_perl.seconds / t_api.seconds:6.1f}x")
    print(f"same output: {'yes' if same else 'NO'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
