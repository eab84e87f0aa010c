#!/usr/bin/env python
"""``qafast trec -R qrels_prefs -m all_prefs`` beside the trec_eval 10.0 binary.

    python benchmarks/bench_trec_prefs.py --binary /path/to/trec_eval            # 1,000,000 lines
    python benchmarks/bench_trec_prefs.py --binary /path/to/trec_eval --quick    # 100,000 lines

Both run as processes (start-up included). Data: T topics of 1,000 retrieved documents each,
scores with 2 decimals (ties broken by docno), qrels of 100 judgments a topic with grades 0
to 3. The outputs are checked to be the same bytes.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def write_files(folder: str, topics: int, seed: int) -> tuple[str, str]:
    rng = np.random.default_rng(seed)
    qrels, run = os.path.join(folder, "qrels"), os.path.join(folder, "run")
    with open(qrels, "w") as f:
        for t in range(1, topics + 1):
            docs = rng.choice(3000, 100, replace=False)
            grades = rng.choice([0, 0, 1, 2, 3], 100)
            f.writelines(f"{t} 0 doc-{d:06d} {g}\n" for d, g in zip(docs, grades))
    with open(run, "w") as f:
        for t in range(1, topics + 1):
            docs = rng.choice(3000, 1000, replace=False)
            scores = np.sort(rng.integers(0, 2000, 1000))[::-1] / 100
            f.writelines(f"{t} Q0 doc-{d:06d} {r} {s:.2f} bench\n"
                         for r, (d, s) in enumerate(zip(docs, scores), 1))
    return qrels, run


def timed(cmd: list[str], env=None) -> tuple[float, bytes]:
    t = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, check=True, env=env).stdout
    return time.perf_counter() - t, out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import _common  # noqa: F401  (writes the in-tree bytecode, as an installed wheel has it)

    topics = 100 if a.quick else 1000
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    with tempfile.TemporaryDirectory() as tmp:
        qrels, run = write_files(tmp, topics, a.seed)
        opts = ["-q", "-R", "qrels_prefs", "-m", "all_prefs", qrels, run]
        t_ref, ref = timed([a.binary, *opts])
        t_ours, ours = timed([sys.executable, "-m", "qafast", "trec", *opts], env=env)
    same = "same output" if ref == ours else "OUTPUTS DIFFER"
    print(f"{topics * 1000:,} run lines, -R qrels_prefs -m all_prefs -q: trec_eval "
          f"{t_ref:.2f} s, qafast {t_ours:.2f} s, ratio trec_eval/qafast "
          f"{t_ref / t_ours:.2f} ({same})")
    return 0 if ref == ours else 1


if __name__ == "__main__":
    sys.exit(main())
