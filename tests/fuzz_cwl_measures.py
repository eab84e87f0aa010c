"""Differential fuzzing of the C/W/L measures of ``qafast.evaluate`` against ir_measures'
cwl_eval provider (ir_measures 0.4.3, cwl-eval 1.0.12), run by hand:

    PYTHONPATH=src python tests/fuzz_cwl_measures.py [--cases N] [--seed S]

Each case draws qrels (grades -2 to 9, queries the run lacks), a tie-free run (rankings
empty, short, or longer than the provider's 1,000 ranks; unjudged documents; queries the
qrels lack) and random parameters (rel, p, T, the cut-off, min_rel below or above 0, max_rel),
and compares every per-query value of ``evaluate(..., per_query=True, queries="qrels")``
with ``ir_measures.cwl_eval.iter_calc``. A value counts as a mismatch when it is more than
1e-12 away (cwl_eval sums W . gains with numpy's BLAS dot, qafast in rank order); it prints
the number of mismatches and of values equal to the last bit, and exits 1 on a mismatch.
"""

import argparse
import logging
import random
import sys
import warnings

import ir_measures

import qafast


def random_measures(rng: random.Random) -> list:
    low = rng.choice([0, 0, 0, -1, 1])
    high = low + rng.choice([1, 2, 3, 4, 8])
    T = rng.choice([0.5, 1.0, 2.0, 3.0, 1000.0])
    k = rng.choice([1, 2, 5, 10, 20, 1500])
    p = rng.choice([0.1, 0.5, 0.8, 0.9, 0.99])
    g = {"min_rel": low, "max_rel": high}
    return [ir_measures.RBP(rel=rng.choice([0, 1, 2, 3]), p=p), ir_measures.BPM(T=T, **g) @ k,
            ir_measures.SDCG(**g) @ k, ir_measures.NERR8(**g) @ k, ir_measures.NERR9(**g) @ k,
            ir_measures.NERR10(p=p, **g), ir_measures.NERR11(T=T, **g),
            ir_measures.INST(T=T, **g), ir_measures.INSQ(T=T, **g)]


def random_case(rng: random.Random):
    qrels, run = {}, {}
    for q in range(rng.randint(1, 6)):
        docs = [f"d{i}" for i in range(rng.choice([2, 10, 40, 1100]))]
        judged = rng.sample(docs, rng.randint(1, min(len(docs), 40)))
        qrels[f"q{q}"] = {d: rng.choice([-2, -1, 0, 0, 1, 2, 3, 4, 9]) for d in judged}
        if rng.random() < 0.85:
            ranked = rng.sample(docs, rng.randint(0, len(docs)))
            scores = rng.sample(range(10**7), len(ranked))
            run[f"q{q}"] = {d: s / 3.0 for d, s in zip(ranked, scores)}
    run["not judged"] = {"x": 1.0}
    if len(run) == 1:
        run["q0"] = {"d0": 0.5}
    return qrels, run


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    logging.getLogger("ir_measures.cwl_eval").disabled = True  # its warnings on max_rel
    warnings.simplefilter("ignore")  # qafast's, on a run whose rankings are all empty
    rng = random.Random(args.seed)
    compared = exact = mismatches = 0
    for case in range(args.cases):
        qrels, run = random_case(rng)
        measures = random_measures(rng)
        got = qafast.evaluate(qrels, run, measures, per_query=True, queries="qrels")
        for m in ir_measures.cwl_eval.iter_calc(measures, qrels, run):
            value = got[m.query_id][m.measure]
            compared += 1
            exact += value == m.value
            if not abs(value - m.value) <= 1e-12:
                mismatches += 1
                if mismatches <= 10:
                    print(f"case {case}: {m.query_id} {m.measure}: qafast {value!r}, "
                          f"cwl_eval {m.value!r}")
    print(f"{args.cases} cases, {compared} values: {mismatches} mismatches, "
          f"{exact} equal to the last bit")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
