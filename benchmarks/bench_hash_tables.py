#!/usr/bin/env python
"""The kernels' one hash table (first-seen ids), in each of its three uses.

    python benchmarks/bench_hash_tables.py                  # 5M-line run, 300,000 questions
    python benchmarks/bench_hash_tables.py --lines 500000 --questions 50000 --rounds 3

Rows: reading a TREC run with ``Run.from_file`` (query ids through the table, document ids
hashed only) and with ``read_trec_run(intern_docs=True)`` (every document id through the
table too); ``answer_intern_flat`` (answer strings: str objects keyed by their Python hash);
``answer_tokens`` with SQuAD's normalizer on bench_answers' data (a small vocabulary) and on
random words (a vocabulary of about a million tokens, so the table grows past the caches).
Times are the thread's CPU time, median of the rounds, which a shared machine disturbs less
than wall-clock time. To compare two builds, run this against each in alternation (the
figures in the commit that made the table shared were taken that way). Data is synthetic
and seeded; the run file is written to a temporary directory and removed.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import import_qafast, load_average, machine_info


def write_run(path: str, lines: int, seed: int) -> None:
    """100 distinct documents per query, ids of 17 bytes drawn from 10 million."""
    rng = random.Random(seed)
    with open(path, "w") as f:
        for q in range(lines // 100):
            docs = rng.sample(range(10**7), 100)
            f.writelines(f"{q + 301} Q0 clueweb12-{docs[r]:07d} {r + 1} {-(r * 0.137):.4f} run1\n"
                         for r in range(100))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", type=int, default=5_000_000)
    ap.add_argument("--questions", type=int, default=300_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    qafast, why = import_qafast()
    if qafast is None:
        print(why)
        return 1
    import numpy as np

    from bench_answers import make_squad
    from qafast import _kernels as K
    from qafast.io.trec import read_trec_run

    data = make_squad(args.questions, 2016, v2=False)
    ids: list = []
    texts: list = []
    _, off = K.squad_flatten_flat(data[0]["data"], ids, texts)
    off = np.asarray(off)
    preds = [data[1][i] for i in ids]
    rng = random.Random(args.seed)
    words = [" ".join(f"w{rng.randrange(2_000_000)}" for _ in range(rng.randint(1, 6)))
             for _ in range(2 * args.questions)]

    def run_file(path):
        t = time.thread_time()
        qafast.Run.from_file(path)
        return time.thread_time() - t

    def run_interned(path):
        t = time.thread_time()
        read_trec_run(path, intern_docs=True)
        return time.thread_time() - t

    def strings(_):
        # fresh str objects, so that no hash is cached from an earlier round
        pl = [(p + ".")[:-1] for p in preds]
        tl = [(x + ".")[:-1] for x in texts]
        ps = np.empty(len(pl), np.int32)
        rs = np.empty(len(tl), np.int32)
        t = time.thread_time()
        K.answer_intern_flat(pl, tl, off, [], ps, rs)
        return time.thread_time() - t

    def tokens(strs):
        tok_off = np.empty(len(strs) + 1, np.int64)
        t = time.thread_time()
        K.answer_tokens(strs, None, True, tok_off)
        return time.thread_time() - t

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "run.txt")
        write_run(path, args.lines, args.seed)
        rows = [
            (f"Run.from_file, {args.lines:,} lines", run_file, path),
            ("read_trec_run(intern_docs=True)", run_interned, path),
            (f"answer_intern_flat, {args.questions:,} q.", strings, None),
            ("answer_tokens, SQuAD answers", tokens, preds + texts),
            (f"answer_tokens, {len(words):,} random", tokens, words),
        ]
        times: dict = {name: [] for name, _, _ in rows}
        gc.disable()
        try:
            for _ in range(args.rounds):
                for name, fn, arg in rows:
                    times[name].append(fn(arg))
        finally:
            gc.enable()
    print("\n".join(machine_info()))
    print(f"load average {load_average()}; {args.rounds} rounds; build {K._build_features()}")
    for name, _, _ in rows:
        print(f"{name:38s} {statistics.median(times[name]) * 1e3:8.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
