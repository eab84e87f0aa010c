#!/usr/bin/env python
"""MS MARCO passage ranking benchmark: ``qafast.msmarco_passage`` beside the official
``ms_marco_eval.py``, in one run.

    python benchmarks/bench_msmarco.py --script PATH/ms_marco_eval.py      # 100,000 x 1000
    python benchmarks/bench_msmarco.py --script PATH/ms_marco_eval.py --queries 10000
    python benchmarks/bench_msmarco.py --threads 4 --queries 20000            # qafast only

The script's ``compute_metrics_from_files`` (imported from the unmodified file) against
``qafast.msmarco_passage`` on the same two files, each reading them: the metrics must be
equal. Wall time (``time.perf_counter``) and the process's CPU time (``time.process_time``)
are both printed: on a machine shared with other work the CPU ratio is the steadier figure.
Then the two phases of qafast: reading the reference, and the compiled pass over the
candidate file (the part that runs without the GIL).

``--threads N`` then times one call against N threads each making the same call on the same
files (best of 3 wall times each) and prints their ratio: about N for a call that holds the
GIL throughout, about N / free cores for one that does not (2.0 for four threads on two
cores). It means something only on an otherwise idle machine. Without ``--script`` only
qafast is timed. The data is synthetic and seeded: 1 to 3 relevant passages a query, 1000
candidates a query with a relevant one somewhere in the first 30 ranks for most queries.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import best_of, import_qafast, in_threads, load_script


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




def timed(fn):
    """``fn()``, its wall time and its CPU time (all threads of the process)."""
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--script", help="the official ms_marco_eval.py (without it, only qafast "
                                     "is timed)")
    ap.add_argument("--queries", type=int, default=100_000)
    ap.add_argument("--depth", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--threads", type=int, default=0,
                    help="also time N threads each making the same call (best of 3)")
    args = ap.parse_args()
    qafast, why = import_qafast()
    if qafast is None:
        raise SystemExit(why)
    # imported before any clock starts, as the script's module is
    from qafast import _kernels, msmarco_eval  # noqa: F401
    # the synthetic files rank a passage twice now and then: the script's check says so
    warnings.simplefilter("ignore", qafast.MsmarcoWarning)
    script = None
    if args.script:
        script = load_script(args.script, "msmarco_official")
    with tempfile.TemporaryDirectory() as tmp:
        ref, cand = write_files(tmp, args.queries, args.depth, args.seed)
        size = Path(cand).stat().st_size
        print(f"MS MARCO passage ranking, {args.queries:,} queries x {args.depth} candidates "
              f"({size / 1e6:,.0f} MB)")
        ours, w_qafast, c_qafast = timed(lambda: qafast.msmarco_passage(ref, cand))
        if script is not None:
            def official():
                with contextlib.redirect_stdout(io.StringIO()):
                    return script.compute_metrics_from_files(ref, cand)
            want, w_script, c_script = timed(official)
            if ours != want:
                raise SystemExit(f"results differ: qafast {ours}, script {want}")
            print(f"  from the files   script {w_script:8.2f} s   qafast {w_qafast:6.2f} s   "
                  f"ratio {w_script / w_qafast:6.1f}x   wall")
            print(f"                   script {c_script:8.2f} s   qafast {c_qafast:6.2f} s   "
                  f"ratio {c_script / c_qafast:6.1f}x   CPU   (MRR@10 {ours['MRR @10']:.6f})")
        else:
            print(f"  qafast {w_qafast:.2f} s wall, {c_qafast:.2f} s CPU   "
                  f"(MRR@10 {ours['MRR @10']:.6f})")
        relevant, t_ref, _ = timed(lambda: msmarco_eval._read_reference(ref)[0])
        arrays, t_arrays, _ = timed(lambda: msmarco_eval._ref_arrays(relevant))
        _, t_cand, _ = timed(lambda: msmarco_eval._fast_candidate(cand, cand, relevant))
        print(f"  qafast: reading the reference {t_ref:.2f} s, its arrays {t_arrays:.2f} s, "
              f"the candidate pass {t_cand:.2f} s")
        if args.threads:
            call = lambda: qafast.msmarco_passage(ref, cand)  # noqa: E731
            one = best_of(call)
            many = best_of(in_threads(call, args.threads))
            print(f"  threads: one call {one:.2f} s, {args.threads} threads each making it "
                  f"{many:.2f} s, ratio {many / one:.2f}   (best of 3 wall times)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
