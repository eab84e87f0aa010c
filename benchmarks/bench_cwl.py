#!/usr/bin/env python
"""``qafast.cwl`` beside ``cwl-eval`` (the cwl-eval package, 1.0.12), in one process.

    python benchmarks/bench_cwl.py            # 1,000 topics x 1,000 documents: 1,000,000 lines
    python benchmarks/bench_cwl.py --quick    # 100 topics: 100,000 lines

Both read the same generated files (qrels of 200 judgments a topic, gains 0, 0.5 and 1; a run
of 1,000 documents a topic) and compute the default 16 measures to depth 1000 with residuals;
cwl-eval's printing goes to a buffer. A run over 20 s is timed once. The two outputs are
checked to be the same bytes.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
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
            gains = rng.choice(["0", "0", "0", "0.5", "1"], 200)
            f.writelines(f"{t} 0 doc-{d:06d} {g}\n" for d, g in zip(docs, gains))
    with open(run, "w") as f:
        for t in range(1, topics + 1):
            docs = rng.choice(3000, 1000, replace=False)
            f.writelines(f"{t} Q0 doc-{d:06d} {i + 1} {1000 - i} bench\n"
                         for i, d in enumerate(docs))
    return qrels, run


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--topics", type=int, default=1000)
    ap.add_argument("--quick", action="store_true", help="100 topics")
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    topics = 100 if args.quick else args.topics
    qafast, why = import_qafast()
    if qafast is None:
        print(why)
        return 1
    try:
        from cwl import cwl_eval
    except ImportError:
        print("cwl-eval is not installed (pip install cwl-eval)")
        return 1
    print("\n".join(machine_info()))
    with tempfile.TemporaryDirectory() as tmp:
        qrels, run = write_files(tmp, topics, seed=0)
        print(f"run: {topics * 1000:,} lines; qrels: {topics * 200:,} lines; "
              f"load {load_average()}")

        def oracle():
            out = io.StringIO()
            here = os.getcwd()
            os.chdir(tmp)  # cwl-eval appends to cwl.log in the working folder
            try:
                with contextlib.redirect_stdout(out):
                    cwl_eval.main(run, qrels, residuals=True)
            finally:
                os.chdir(here)
            return out.getvalue()

        t_oracle = time_call(oracle, reps=args.reps)
        t_api = time_call(lambda: qafast.cwl(qrels, run, residuals=True), reps=args.reps)
        same = t_oracle.result == t_api.result
    print(f"{'cwl-eval (in process)':<28}{t_oracle.label:>16}")
    print(f"{'qafast.cwl (in process)':<28}{t_api.label:>16}   "
          f"{t_oracle.seconds / t_api.seconds:6.1f}x")
    print(f"same output: {'yes' if same else 'NO'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
