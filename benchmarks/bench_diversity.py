#!/usr/bin/env python
"""The diversity measures through ``qafast.evaluate`` beside pyndeval, in one process.

    python benchmarks/bench_diversity.py            # 100,000 run lines, 10 subtopics a topic

Data as in bench_ndeval.py: 100 topics (``--topics``) of 1,000 ranked documents each, qrels
of 300 judgments a topic over 10 subtopics (binary, a third relevant). The measures are
pyndeval's default set (ERR-IA, nERR-IA, alpha-DCG, alpha-nDCG, P-IA and subtopic recall at
5, 10 and 20; NRBP, nNRBP, MAP-IA), asked of ``qafast.evaluate`` by their ir_measures names.
pyndeval is given tuples (its input form); qafast the same data as dicts
(``{topic: {subtopic: {doc: grade}}}`` and ``{topic: {doc: score}}``) and, in a second row,
as the files' bytes (the run) and a qrels file read by ``DiversityQrels.from_file``. The last
two rows build each side's qrels object once (pyndeval's ``RelevanceEvaluator``, a
``DiversityQrels``), as for many runs against one set of judgments, their ratios taken
against the reused evaluator. Each row
is the median of ``--reps`` alternating calls, wall time and CPU time (``time.process_time``,
which a loaded machine disturbs less); the per-topic values are checked to agree.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import import_qafast, load_average, machine_info
from bench_ndeval import make_data

#: pyndeval's default measures and their ir_measures names (which qafast.evaluate takes)
_CUTS = (5, 10, 20)
NAMES = {f"{theirs}@{k}": f"{ours}@{k}" for theirs, ours in (
    ("ERR-IA", "ERR_IA"), ("nERR-IA", "nERR_IA"), ("alpha-DCG", "alpha_DCG"),
    ("alpha-nDCG", "alpha_nDCG"), ("P-IA", "P_IA"), ("strec", "StRecall")) for k in _CUTS}
NAMES.update({"NRBP": "NRBP", "nNRBP": "nNRBP", "MAP-IA": "AP_IA"})


def timed(calls: dict, reps: int) -> dict:
    """{label: (median wall s, median CPU s, last result)}, the calls alternating."""
    wall: dict = {k: [] for k in calls}
    cpu: dict = {k: [] for k in calls}
    last: dict = {}
    for _ in range(reps):
        for label, fn in calls.items():
            w0, c0 = time.perf_counter(), time.process_time()
            last[label] = fn()
            cpu[label].append(time.process_time() - c0)
            wall[label].append(time.perf_counter() - w0)
    return {k: (statistics.median(wall[k]), statistics.median(cpu[k]), last[k]) for k in calls}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--topics", type=int, default=100)
    ap.add_argument("--reps", type=int, default=5)
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
    qrels_dict: dict = {}
    for t, s, d, g in qrels:
        qrels_dict.setdefault(t, {}).setdefault(s, {})[d] = g
    run_dict: dict = {}
    for t, d, s in run:
        run_dict.setdefault(t, {})[d] = s
    names = list(NAMES.values())

    def ours_dicts():
        return qafast.evaluate(qrels_dict, run_dict, names, per_query=True)

    def ours_bytes():
        return qafast.evaluate(qafast.DiversityQrels.from_file(qbytes), rbytes, names,
                               per_query=True)

    def theirs():
        return pyndeval.ndeval(qrels, run, list(NAMES))

    # one set of judgments against many runs: each side's qrels object built once
    evaluator = pyndeval.RelevanceEvaluator(qrels, list(NAMES))
    reused = qafast.DiversityQrels(qrels_dict)

    def theirs_reused():
        return evaluator.evaluate(run)

    def ours_reused():
        return qafast.evaluate(reused, run_dict, names, per_query=True)

    # warm-up: imports and first-touch allocations, on one topic
    one = next(iter(run_dict))
    qafast.evaluate({one: qrels_dict[one]}, {one: run_dict[one]}, names)
    print(f"run: {len(run):,} lines; qrels: {len(qrels):,} lines; {len(names)} measures; "
          f"load before {load_average()}")
    t = timed({"pyndeval.ndeval": theirs, "qafast.evaluate (dicts)": ours_dicts,
               "qafast.evaluate (bytes)": ours_bytes,
               "pyndeval, evaluator reused": theirs_reused,
               "qafast, qrels reused": ours_reused}, args.reps)
    print(f"load after {load_average()}")
    base_wall, base_cpu, want = t["pyndeval.ndeval"]
    print(f"{'':<28}{'wall':>10}{'CPU':>10}{'ratio (wall)':>14}{'ratio (CPU)':>13}")
    for label, (wall, cpu, _) in t.items():
        if label == "pyndeval, evaluator reused":  # the base of the rows below
            base_wall, base_cpu = wall, cpu
        print(f"{label:<28}{wall * 1e3:>8.1f}ms{cpu * 1e3:>8.1f}ms"
              f"{base_wall / wall:>13.1f}x{base_cpu / cpu:>12.1f}x")
    same = True
    for label in ("qafast.evaluate (dicts)", "qafast.evaluate (bytes)", "qafast, qrels reused",
                  "pyndeval, evaluator reused"):
        got = t[label][2]
        for topic, values in want.items():
            for theirs_name, v in values.items():
                mine = got[topic][theirs_name if label.startswith("pyndeval")
                                  else NAMES[theirs_name]]
                if not (mine == v or math.isclose(mine, v, rel_tol=1e-12, abs_tol=1e-15)):
                    same = False
    print(f"same values: {'yes' if same else 'NO'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
