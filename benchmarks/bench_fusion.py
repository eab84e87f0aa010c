#!/usr/bin/env python
"""qafast.fuse beside ranx.fuse, in one process, on generated runs.

    python benchmarks/bench_fusion.py            # 5 runs x 10,000 queries x 100 docs
    python benchmarks/bench_fusion.py --quick    # 5 runs x 1,000 queries

Data: N queries; each run retrieves 100 of a query's 150 candidate documents (ids
``d0000000`` ... of one length: ranx 0.3.21 mistakes ``d1`` for ``d10``, see
docs/known-differences.md), with distinct random scores, so both tools rank alike and their
fused scores can be compared.

Rows, each the median of ``--reps`` timed calls after an untimed warm-up on a small
subsample (ranx's numba JIT, first allocations); a call over 20 s is timed once:

1. from dict-of-dicts: ``qafast.fuse(dicts)`` against ``ranx.fuse([ranx.Run(d) ...])``, the
   conversion included on both sides;
2. prebuilt runs: ``qafast.fuse([qafast.Run ...])`` (``workers=1`` and ``workers=-1``)
   against ``ranx.fuse`` on prebuilt ``ranx.Run`` objects (numba's threads: every core);
3. writing the fused run as TREC text: ``Run.save`` of both.

ranx's Condorcet is plain Python (a comparison sort per query), so it is timed on
``--condorcet-queries`` queries and scaled to N (printed with ``~``).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import import_qafast, load_average, machine_info, optional_import, time_call

#: (label, qafast kwargs, ranx kwargs)
METHODS = [
    ("rrf (min-max)", {"method": "rrf"}, {"method": "rrf", "norm": "min-max"}),
    ("wsum (min-max)", {"method": "wsum", "weights": [0.1, 0.2, 0.3, 0.2, 0.2]},
     {"method": "wsum", "norm": "min-max", "params": {"weights": [0.1, 0.2, 0.3, 0.2, 0.2]}}),
    ("mnz (zmuv)", {"method": "mnz", "norm": "zmuv"}, {"method": "mnz", "norm": "zmuv"}),
    ("bordafuse (min-max)", {"method": "bordafuse"}, {"method": "bordafuse", "norm": "min-max"}),
    ("isr (rank)", {"method": "isr", "norm": "rank"}, {"method": "isr", "norm": "rank"}),
]


def make_runs(n_queries: int, n_runs: int, n_docs: int, seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    runs: list[dict] = [{} for _ in range(n_runs)]
    pool = n_docs * 3 // 2
    for q in range(n_queries):
        cands = rng.choice(5_000_000, pool, replace=False)
        for run in runs:
            picked = rng.choice(cands, n_docs, replace=False)
            scores = rng.random(n_docs) * 10
            run[f"q{q}"] = {f"d{d:07d}": s for d, s in zip(picked.tolist(), scores.tolist())}
    return runs


def _fit(n: int) -> list:
    return [0.1, 0.2, 0.3, 0.2, 0.2][:n] + [0.2] * max(0, n - 5)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="1,000 queries")
    ap.add_argument("--queries", type=int, default=None)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--docs", type=int, default=100)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--condorcet-queries", type=int, default=200)
    ap.add_argument("--seed", type=int, default=11)
    args = ap.parse_args(argv)
    n_q = args.queries or (1_000 if args.quick else 10_000)
    qafast, why = import_qafast()
    if qafast is None or not hasattr(qafast, "fuse"):
        print(f"qafast.fuse not available: {why}", file=sys.stderr)
        return 1
    ranx, why_ranx = optional_import("ranx")
    print("\n".join(machine_info()))
    print(f"setting: {args.runs} runs x {n_q:,} queries x {args.docs} docs "
          f"({args.runs * n_q * args.docs:,} entries), distinct scores, str ids\n")
    print("generating data ...", file=sys.stderr)
    runs = make_runs(n_q, args.runs, args.docs, args.seed)
    small = make_runs(20, args.runs, 10, args.seed + 1)
    for label, kw, _ in METHODS:
        if "weights" in kw:
            kw["weights"] = _fit(args.runs)
    for _, _, rkw in METHODS:
        if "params" in rkw:
            rkw["params"]["weights"] = _fit(args.runs)
    encoded = [qafast.Run(r) for r in runs]
    rows: list[tuple[str, float, float | None, str]] = []   # label, qafast, ranx, mark
    worst = 0.0
    ranx_runs = None
    if ranx is not None:
        warnings.simplefilter("ignore")   # numba's type-safety warnings
        print("ranx warm-up (numba JIT) ...", file=sys.stderr)
        small_ranx = [ranx.Run(r) for r in small]
        for _, _, rkw in METHODS:
            ranx.fuse(small_ranx, **rkw)
        print("ranx.Run from the dicts ...", file=sys.stderr)
        ranx_runs = [ranx.Run(r) for r in runs]
    for label, kw, rkw in METHODS:
        print(f"{label} ...", file=sys.stderr)
        t_dict = time_call(lambda kw=kw: qafast.fuse(runs, **kw), reps=args.reps,
                           warmup=lambda kw=kw: qafast.fuse(small, **kw))
        t_run = time_call(lambda kw=kw: qafast.fuse(encoded, **kw), reps=args.reps)
        t_run2 = time_call(lambda kw=kw: qafast.fuse(encoded, workers=-1, **kw),
                           reps=args.reps)
        r_dict = r_run = None
        if ranx is not None:
            r_dict = time_call(lambda rkw=rkw: ranx.fuse([ranx.Run(r) for r in runs], **rkw),
                               reps=1).seconds
            theirs = time_call(lambda rkw=rkw: ranx.fuse(ranx_runs, **rkw), reps=args.reps)
            r_run = theirs.seconds
            ours = t_run.result.to_dict()
            got = theirs.result.to_dict()
            for q in ours:
                a = np.array([ours[q][d] for d in ours[q]])
                b = np.array([got[q][d] for d in ours[q]])
                worst = max(worst, float(np.max(np.abs(a - b) / np.maximum(1, np.abs(b)))))
        rows.append((f"{label}: dicts, build + fuse", t_dict.seconds, r_dict, ""))
        rows.append((f"{label}: prebuilt runs", t_run.seconds, r_run, ""))
        rows.append((f"{label}: prebuilt, workers=-1", t_run2.seconds, r_run, ""))
    # Condorcet: ranx's is a Python sort per query
    print("condorcet ...", file=sys.stderr)
    t_c = time_call(lambda: qafast.fuse(encoded, method="condorcet"), reps=args.reps)
    r_c = None
    if ranx is not None:
        n_sub = min(args.condorcet_queries, n_q)
        sub = [ranx.Run({f"q{q}": r[f"q{q}"] for q in range(n_sub)}) for r in runs]
        r_c = time_call(lambda: ranx.fuse(sub, method="condorcet"), reps=1).seconds * n_q / n_sub
    rows.append(("condorcet (min-max): prebuilt runs", t_c.seconds, r_c, "~"))
    # writing
    print("writing ...", file=sys.stderr)
    fused = qafast.fuse(encoded)
    with tempfile.TemporaryDirectory() as tmp:
        t_w = time_call(lambda: fused.save(os.path.join(tmp, "q.trec")), reps=args.reps)
        r_w = None
        if ranx is not None:
            fr = ranx.fuse(ranx_runs, method="rrf")
            r_w = time_call(lambda: fr.save(os.path.join(tmp, "r.trec")), reps=args.reps).seconds
        rows.append((f"write the fused run as TREC text ({fused.num_entries:,} lines)",
                     t_w.seconds, r_w, ""))
    print()
    print(f"{'row':<58} {'qafast s':>9} {'ranx s':>9} {'ranx/qafast':>12}")
    for label, t, r, mark in rows:
        ratio = f"{mark}{r / t:,.1f}x" if r is not None else "-"
        rs = f"{mark}{r:.3f}" if r is not None else "-"
        print(f"{label:<58} {t:9.3f} {rs:>9} {ratio:>12}")
    print()
    if ranx is not None:
        print(f"max relative |qafast - ranx| over every fused score: {worst:.2e}")
    else:
        print(f"ranx: {why_ranx}")
    print(f"load average at end: {load_average()}")
    return 0 if worst < 1e-9 else 1


if __name__ == "__main__":
    sys.exit(main())
