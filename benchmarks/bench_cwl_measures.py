#!/usr/bin/env python
"""``qafast.evaluate`` beside ir_measures' cwl_eval provider on its C/W/L measures.

    python benchmarks/bench_cwl_measures.py            # 1,000 queries x 1,000 documents
    python benchmarks/bench_cwl_measures.py --quick    # 100 queries

Both take the same dicts (qrels of 200 judgments a query, grades 0 to 3; a tie-free run of
1,000 documents a query) and compute nine measures (RBP, BPM, SDCG, NERR8-11, INST, INSQ);
the means are checked to agree within 1e-12 (cwl_eval sums W . gains with BLAS, qafast in
rank order).
"""

from __future__ import annotations

import argparse
import logging
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import import_qafast, load_average, machine_info, time_call

MEASURES = ["RBP(rel=1, p=0.8)", "BPM(T=2.0, max_rel=3)@10", "SDCG(max_rel=3)@10",
            "NERR8(max_rel=3)@10", "NERR9(max_rel=3)@10", "NERR10(p=0.9, max_rel=3)",
            "NERR11(T=2.0, max_rel=3)", "INST(T=2.0, max_rel=3)", "INSQ(T=2.0, max_rel=3)"]


def data(queries: int, seed: int):
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(queries):
        judged = rng.choice(3000, 200, replace=False)
        qrels[f"q{q}"] = {f"d{d}": int(g) for d, g in zip(judged, rng.integers(0, 4, 200))}
        ranked = rng.choice(3000, 1000, replace=False)
        run[f"q{q}"] = {f"d{d}": float(1000 - i) for i, d in enumerate(ranked)}
    return qrels, run


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--quick", action="store_true", help="100 queries")
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    queries = 100 if args.quick else args.queries
    qafast, why = import_qafast()
    if qafast is None:
        print(why)
        return 1
    try:
        import ir_measures
        import cwl  # noqa: F401
    except ImportError:
        print("ir_measures and cwl-eval are needed (pip install ir-measures cwl-eval)")
        return 1
    logging.getLogger("ir_measures.cwl_eval").disabled = True  # its warnings on max_rel
    print("\n".join(machine_info()))
    qrels, run = data(queries, seed=0)
    measures = [ir_measures.parse_measure(m) for m in MEASURES]
    print(f"{queries:,} queries x 1,000 documents, {len(measures)} measures; "
          f"load {load_average()}")
    t_oracle = time_call(lambda: ir_measures.cwl_eval.calc_aggregate(measures, qrels, run),
                         reps=args.reps)
    t_api = time_call(lambda: qafast.evaluate(qrels, run, measures, queries="qrels"),
                      reps=args.reps)
    same = all(math.isclose(t_api.result[m], t_oracle.result[m], rel_tol=1e-12)
               for m in measures)
    print(f"{'ir_measures cwl_eval':<28}{t_oracle.label:>16}")
    print(f"{'qafast.evaluate':<28}{t_api.label:>16}   "
          f"{t_oracle.seconds / t_api.seconds:6.1f}x")
    print(f"same means: {'yes' if same else 'NO'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
