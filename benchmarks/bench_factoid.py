#!/usr/bin/env python
"""The seeds' own families on 1,000,000 questions: qafast beside a plain Python loop of each
seed's definition, on the same seeded synthetic data, checking that results are identical.

    python benchmarks/bench_factoid.py              # 1,000,000 questions (samples for AP)
    python benchmarks/bench_factoid.py --quick      # 100,000

Rows:
- factoid (seed 000): the seed's ``evaluate_factoid`` loop over lists of 5 answers, against
  ``qafast.factoid.evaluate_factoid`` on the same Python lists of strings (the strings are
  compared in C; no vocabulary is built) and on int32 answer ids (a 2-D array; other integer
  types are converted, with a range check, first).
- dbqa (seed 001): a per-question Python loop (stable sort by score, then RR, AP, Acc@1,
  top-1 F1) over nested lists, against ``qafast.dbqa.evaluate_dbqa`` on flat arrays with
  offsets, the form the DBQA reader returns.
- curves (seed 001): the seed's threshold sweep (10 thresholds) as a Python loop, and a
  Python loop of scikit-learn's step-wise AP (sort, then sweep), against
  ``qafast.curves`` on 1,000,000 scored samples.
Timings are the best of 3 runs for qafast and one run for the Python loops.
"""

from __future__ import annotations

import argparse
import platform
import random
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from qafast.curves import average_precision, threshold_average_precision  # noqa: E402
from qafast.dbqa import evaluate_dbqa  # noqa: E402
from qafast.factoid import evaluate_factoid  # noqa: E402


def best_of(fn, repeat=3):
    best, result = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t)
    return best, result


def once(fn):
    t = time.perf_counter()
    result = fn()
    return time.perf_counter() - t, result


def row(family, what, t_loop, t_fast, same):
    print(f"{family:<8} {what:<44} {t_loop:9.3f} s {t_fast * 1000:10.1f} ms "
          f"{t_loop / t_fast:8.1f}x   {'identical' if same else 'DIFFERENT'}")
    return same


# ---- factoid, seed 000 ---------------------------------------------------------------------

def seed_evaluate_factoid(predicted, target):
    c_1 = 0
    c_5 = 0
    rank_sum = 0
    for i, elem in enumerate(target):
        if predicted[i][0] == target[i]:
            c_1 += 1
        if target[i] in predicted[i]:
            c_5 += 1
        try:
            pos = predicted[i].index(target[i])
            rank_sum += 1 / (pos + 1)
        except ValueError:
            pass
    return {"strict_accuracy": c_1 / len(target), "lenient_accuracy": c_5 / len(target),
            "mean_reciprocal_rank": rank_sum / len(target)}


def bench_factoid(n, rng):
    ids = rng.integers(0, 200_000, size=(n, 5), dtype=np.int32)
    gold = rng.integers(0, 200_000, size=n, dtype=np.int32)
    hit = rng.random(n) < 0.5
    ids[hit, rng.integers(0, 5, size=int(hit.sum()))] = gold[hit]
    names = [f"entity {i}" for i in range(200_000)]
    predicted = [[names[j] for j in r] for r in ids.tolist()]
    target = [names[j] for j in gold.tolist()]
    t_loop, want = once(lambda: seed_evaluate_factoid(predicted, target))
    t_str, got_str = best_of(lambda: evaluate_factoid(predicted, target))
    t_ids, got_ids = best_of(lambda: evaluate_factoid(ids, gold))
    ok = row("factoid", "lists of str (seed's input)", t_loop, t_str, got_str == want)
    ok &= row("factoid", "int32 answer ids, (n, 5) array", t_loop, t_ids, got_ids == want)
    return ok


# ---- DBQA, seed 001 ------------------------------------------------------------------------

def python_dbqa(labels, scores):
    rr_sum = ap_sum = f1_sum = 0.0
    acc1 = 0
    for y, s in zip(labels, scores):
        order = sorted(range(len(s)), key=s.__getitem__, reverse=True)
        m = sum(y)
        hits = 0
        ap = 0.0
        first = 0
        for k, i in enumerate(order, start=1):
            if y[i]:
                hits += 1
                ap += hits / k
                if not first:
                    first = k
        rr_sum += 1 / first if first else 0.0
        ap_sum += ap / min(m, len(s)) if min(m, len(s)) else 0.0
        acc1 += first == 1
        if y[order[0]]:
            p, r = 1.0, 1 / m
            f1_sum += 2 * p * r / (p + r)
    n = len(labels)
    return {"mrr": rr_sum / n, "map": ap_sum / n, "accuracy@1": acc1 / n, "f1": f1_sum / n}


def bench_dbqa(n, rng):
    sizes = rng.integers(2, 15, size=n)
    offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    total = int(offsets[-1])
    labels = (rng.random(total) < 0.15).astype(np.int8)
    scores = np.round(rng.random(total), 3)  # 3 decimals: ties happen
    ll, ss = labels.tolist(), scores.tolist()
    off = offsets.tolist()
    nested_y = [ll[off[q]:off[q + 1]] for q in range(n)]
    nested_s = [ss[off[q]:off[q + 1]] for q in range(n)]
    t_loop, want = once(lambda: python_dbqa(nested_y, nested_s))
    t_fast, got = best_of(lambda: evaluate_dbqa(labels, scores, offsets=offsets))
    return row("dbqa", f"{total:,} candidates, flat arrays + offsets", t_loop, t_fast,
               got == want)


# ---- curves, seed 001 ----------------------------------------------------------------------

def seed_threshold_ap(y, s, thresholds):
    positives = sum(y)
    precisions, recalls = [], []
    for t in thresholds:
        tp = fp = 0
        for label, score in zip(y, s):
            if score >= t:
                if label:
                    tp += 1
                else:
                    fp += 1
        precisions.append(tp / (tp + fp) if tp + fp else 0.0)
        recalls.append(tp / positives if positives else 0.0)
    precisions.append(1)
    recalls.append(0)
    precisions = np.array(precisions)
    recalls = np.array(recalls)
    return float(np.sum((recalls[:-1] - recalls[1:]) * precisions[:-1]))


def python_step_ap(y, s):
    pairs = sorted(zip(s, y), reverse=True)
    total = sum(y)
    tp = fp = 0
    prec, rec = [], []
    for i, (score, label) in enumerate(pairs):
        tp += label
        fp += 1 - label
        if i == len(pairs) - 1 or pairs[i + 1][0] != score:
            prec.append(tp / (tp + fp))
            rec.append(tp / total)
    precision = np.array(prec[::-1] + [1.0])
    recall = np.array(rec[::-1] + [0.0])
    return float(-np.sum(np.diff(recall) * precision[:-1]))


def bench_curves(n, rng):
    y = (rng.random(n) < 0.3).astype(np.int8)
    s = np.round(np.clip(rng.normal(0.4 + 0.2 * y, 0.15), 0, 1), 4)
    yl, sl = y.tolist(), s.tolist()
    thresholds = np.arange(start=0.2, stop=0.7, step=0.05)
    t_loop, want = once(lambda: seed_threshold_ap(yl, sl, thresholds))
    t_fast, got = best_of(lambda: threshold_average_precision(y, s, thresholds=thresholds))
    ok = row("curves", "seed's threshold-sweep AP, 10 thresholds", t_loop, t_fast, got == want)
    t_loop, want = once(lambda: python_step_ap(yl, sl))
    t_fast, got = best_of(lambda: average_precision(y, s))
    ok &= row("curves", "step-wise AP (scikit-learn's definition)", t_loop, t_fast, got == want)
    try:
        from sklearn.metrics import average_precision_score
        t_sk, sk = best_of(lambda: average_precision_score(y, s), 1)
        print(f"{'':8} {'  scikit-learn average_precision_score':<44} {t_sk:9.3f} s "
              f"{'':>10}    {t_sk / t_fast:8.1f}x   {'identical' if sk == got else 'DIFFERENT'}")
    except ImportError:
        pass
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="100,000 instead of 1,000,000")
    ap.add_argument("--n", type=int, default=None, help="questions (samples for curves)")
    args = ap.parse_args()
    n = args.n or (100_000 if args.quick else 1_000_000)
    print(f"qafast seed families, n = {n:,}; Python {platform.python_version()}, "
          f"numpy {np.__version__}, {platform.machine()} {platform.processor() or ''}".rstrip())
    print(f"{'family':<8} {'input':<44} {'Python':>11} {'qafast':>13} {'speed-up':>9}")
    rng = np.random.default_rng(20240601)
    random.seed(0)
    ok = bench_factoid(n, rng)
    ok &= bench_dbqa(n, rng)
    ok &= bench_curves(n, rng)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
