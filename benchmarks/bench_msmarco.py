#!/usr/bin/env python
"""MS MARCO passage ranking benchmark: ``qafast.msmarco_passage`` beside the official
``ms_marco_eval.py``, in one run.

    python benchmarks/bench_msmarco.py --script PATH/ms_marco_eval.py      # 100,000 x 1000
    python benchmarks/bench_msmarco.py --script PATH/ms_marco_eval.py --queries 10000

The script's ``compute_metrics_from_files`` (imported from the unmodified file) against
``qafast.msmarco_passage`` on the same two files, each reading them: the metrics must be
equal. Then the two phases of qafast: reading the reference, and the compiled pass over the
candidate file. The data is synthetic and seeded: 1 to 3 relevant passages a query, 1000
candidates a query with a relevant one somewhere in the first 30 ranks for most queries.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import import_qafast


def write_files(tmp: str, queries: int, depth: int, seed: int) -> tuple[str, str]:
    rng = np.random.default_rng(seed)
    qids = np.sort(rng.choice(10 ** 7, queries, replace=False))
    ref, cand = Path(tmp, "qrels.tsv"), Path(tmp, "candidate.tsv")
    n_rel = rng.integers(1, 4, queries)
    rel_q = np.repeat(qids, n_rel)
    rel_p = rng.integers(0, 8_800_000, len(rel_q))
    ref.write_text("".join(f"{q}\t0\t{p}\t1\n" for q, p in zip(rel_q.tolist(),
                                                              rel_p.tolist())))
    first = np.searchsorted(rel_q, qids)
    with open(cand, "w") as f:
        chunk = 5000
        for lo in range(0, queries, chunk):
            hi = min(lo + chunk, queries)
            k = hi - lo
            pids = rng.integers(0, 8_800_000, (k, depth))
            hit = rng.random(k) < 0.7
            where = rng.integers(0, 30, k)
            rows = np.flatnonzero(hit)
            pids[rows, where[rows]] = rel_p[first[lo:hi][rows]]
            q = np.repeat(qids[lo:hi], depth).astype(str)
            r = np.tile(np.arange(1, depth + 1), k).astype(str)
            lines = np.char.add(np.char.add(np.char.add(np.char.add(q, "\t"),
                                                        pids.ravel().astype(str)), "\t"), r)
            f.write("\n".join(lines.tolist()))
            f.write("\n")
    return str(ref), str(cand)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--script", required=True, help="the official ms_marco_eval.py")
    ap.add_argument("--queries", type=int, default=100_000)
    ap.add_argument("--depth", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    qafast, why = import_qafast()
    if qafast is None:
        raise SystemExit(why)
    spec = importlib.util.spec_from_file_location("msmarco_official", args.script)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    with tempfile.TemporaryDirectory() as tmp:
        ref, cand = write_files(tmp, args.queries, args.depth, args.seed)
        size = Path(cand).stat().st_size
        print(f"MS MARCO passage ranking, {args.queries:,} queries x {args.depth} candidates "
              f"({size / 1e6:,.0f} MB)")
        t = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            want = script.compute_metrics_from_files(ref, cand)
        t_script = time.perf_counter() - t
        t = time.perf_counter()
        ours = qafast.msmarco_passage(ref, cand)
        t_qafast = time.perf_counter() - t
        if ours != want:
            raise SystemExit(f"results differ: qafast {ours}, script {want}")
        print(f"  from the files   script {t_script:8.2f} s   qafast {t_qafast:6.2f} s   "
              f"ratio {t_script / t_qafast:6.1f}x   (MRR@10 {ours['MRR @10']:.6f})")
        from qafast import msmarco_eval

        t = time.perf_counter()
        relevant, _ = msmarco_eval._read_reference(ref)
        t_ref = time.perf_counter() - t
        t = time.perf_counter()
        msmarco_eval._read_candidate(cand, relevant)
        t_cand = time.perf_counter() - t
        print(f"  qafast: reading the reference {t_ref:.2f} s, the candidate pass "
              f"{t_cand:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
