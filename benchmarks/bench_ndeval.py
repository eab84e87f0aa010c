#!/usr/bin/env python
"""``qafast.ndeval`` beside pyndeval (ndeval's C code behind a Python API), in one process.

    python benchmarks/bench_ndeval.py            # 100,000 run lines, 10 subtopics a topic
    python benchmarks/bench_ndeval.py --binary /path/to/ndeval   # also the C program itself

Data: 100 topics (``--topics``) of 1,000 ranked documents each, qrels of 300 judgments a
topic over 10 subtopics (binary, a third relevant). qafast reads the files' bytes; pyndeval
is given the same data already parsed into tuples (its input form), ranked by score. Each
row is the median of ``--reps`` runs; the per-topic values are checked to agree.
"""

from __future__ import annotations

import argparse
import math
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import import_qafast, load_average, machine_info, time_call


def make_data(topics: int, seed: int):
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for t in range(1, topics + 1):
        docs = rng.choice(3000, 300, replace=False)
        subtopics = rng.integers(1, 11, 300)
        grades = rng.choice([0, 0, 1], 300)
        qrels += [(str(t), str(s), f"clueweb-{d:06d}", int(g))
                  for d, s, g in zip(docs, subtopics, grades)]
        ranked = rng.choice(3000, 1000, replace=False)
        run += [(str(t), f"clueweb-{d:06d}", 1000.0 - i) for i, d in enumerate(ranked)]
    qbytes = "".join(f"{t} {s} {d} {g}\n" for t, s, d, g in qrels).encode()
    rbytes = "".join(f"{t} Q0 {d} {1000 - int(s)} {s} bench\n" for t, d, s in run).encode()
    return qrels, run, qbytes, rbytes


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--topics", type=int, default=100)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--binary", help="the ndeval program, timed as a process")
    args = ap.parse_args()
    qafast, why = import_qafast()
    if qafast is None:
        print(why)
        return 1
    try:
        import pyndeval
    except ImportError:
        print("pyndeval is not installed (pip install pyndeval==0.0.8)")
        return 1
    print("\n".join(machine_info()))
    qrels, run, qbytes, rbytes = make_data(args.topics, seed=0)
    print(f"run: {len(run):,} lines; qrels: {len(qrels):,} lines; load {load_average()}")
    t_py = time_call(lambda: pyndeval.ndeval(qrels, run), reps=args.reps)
    t_api = time_call(lambda: qafast.ndeval(qbytes, rbytes), reps=args.reps,
                      warmup=lambda: qafast.ndeval(qbytes[:qbytes.index(b"\n") + 1],
                                                     rbytes[:rbytes.index(b"\n") + 1]))
    ours, theirs = t_api.result, t_py.result
    same = all(math.isclose(ours[t][m], v, rel_tol=1e-12, abs_tol=1e-15)
               or (math.isnan(ours[t][m]) and math.isnan(v))
               for t, values in theirs.items() for m, v in values.items())
    print(f"{'pyndeval.ndeval':<28}{t_py.label:>16}")
    print(f"{'qafast.ndeval (in process)':<28}{t_api.label:>16}   "
          f"{t_py.seconds / t_api.seconds:6.1f}x")
    if args.binary:
        with tempfile.TemporaryDirectory() as tmp:
            q, r = Path(tmp, "qrels"), Path(tmp, "run")
            q.write_bytes(qbytes)
            r.write_bytes(rbytes)
            t_c = time_call(lambda: subprocess.run([args.binary, str(q), str(r)],
                                                   capture_output=True, check=True),
                            reps=args.reps)
        print(f"{'ndeval (a process)':<28}{t_c.label:>16}   "
              f"{t_c.seconds / t_api.seconds:6.1f}x")
    print(f"same values: {'yes' if same else 'NO'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
