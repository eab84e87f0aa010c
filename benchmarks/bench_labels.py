"""The seeds' own families against a plain Python loop of each seed's definition.

    python benchmarks/bench_labels.py                 # 1,000,000 questions and tweets
    python benchmarks/bench_labels.py --n 100000      # quicker

For each family the data is generated (seeded) and encoded once; qafast is timed on the
encoded arrays (what ``read_drfact`` / ``read_conll`` return), checks included, and the Python
loop on the same data as Python lists of strings, built chunk by chunk outside the timing.
The results must be identical (bitwise equal means). Encoding strings to ids is timed too and
printed on its own line: it is a one-off cost, like reading the file.

* OpenCSR (seed 003): 20 weighted concepts per question (weights on a 0.05 grid, so ties are
  common; ties by concept), 3 gold concepts, Hit@10 and Rec@10.
* Tweets (seed 004): 15 tokens per tweet, about 70% 'o', tw-events score (mean tweet score).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from qafast.concepts import ConceptLists, encode_concepts, evaluate_concepts  # noqa: E402
from qafast.events import EM_LABELS, LABELS, LabelSequences, encode_labels  # noqa: E402
from qafast.events import tw_events_score  # noqa: E402

CHUNK = 100_000


# ---- seed 003 as a plain Python loop --------------------------------------------------------

def seed_hit_rec_at_k(pairs, gold, k):
    """One question: top K of the weighted set (weight descending, ties by concept)."""
    top = [c for c, _ in sorted(pairs, key=lambda p: (-p[1], p[0]))[:k]]
    gold = set(gold)
    found = len([c for c in top if c in gold])
    return (1.0 if found else 0.0), found / len(gold)


def concepts_data(n, rng, n_pred=20, n_gold=3, v=10_007):
    vocabulary = [f"concept{i:05d}" for i in range(v)]  # sorted: id order is string order
    base = rng.integers(0, v, n)[:, None]
    step = rng.integers(1, v, n)[:, None]
    ids = ((base + step * np.arange(n_pred)) % v).astype(np.int32)       # distinct per row
    weights = rng.integers(0, 20, (n, n_pred)) * 0.05
    p0 = rng.integers(0, 2 * n_pred, n)[:, None]
    gold_pos = (p0 + np.array([0, 7, 13])) % (2 * n_pred)                 # half not predicted
    gold = ((base + step * gold_pos) % v).astype(np.int32)
    qids = list(range(n))
    pred = ConceptLists(qids, np.arange(0, n * n_pred + 1, n_pred, dtype=np.int64),
                        ids.ravel(), weights.ravel(), vocabulary, "generated")
    ref = ConceptLists(qids, np.arange(0, n * n_gold + 1, n_gold, dtype=np.int64),
                       gold.ravel(), None, vocabulary, "generated")
    return pred, ref


def python_concepts(pred, ref, k):
    voc = pred.vocabulary
    n = len(pred)
    width = int(pred.offsets[1])
    gw = int(ref.offsets[1])
    ids = pred.ids.reshape(n, width)
    ws = pred.weights.reshape(n, width)
    gold = ref.ids.reshape(n, gw)
    hit_total = rec_total = 0.0
    seconds = 0.0
    for lo in range(0, n, CHUNK):
        hi = min(n, lo + CHUNK)
        rows = [list(zip([voc[c] for c in r], w)) for r, w in zip(ids[lo:hi].tolist(),
                                                                  ws[lo:hi].tolist())]
        golds = [[voc[c] for c in g] for g in gold[lo:hi].tolist()]
        t = time.perf_counter()
        for pairs, g in zip(rows, golds):
            h, r = seed_hit_rec_at_k(pairs, g, k)
            hit_total += h
            rec_total += r
        seconds += time.perf_counter() - t
    return hit_total / n, rec_total / n, seconds


def strings_of_concepts(pred, ref, n):
    voc = pred.vocabulary
    p, g = {}, {}
    for q in range(n):
        lo, hi = int(pred.offsets[q]), int(pred.offsets[q + 1])
        p[q] = list(zip([voc[c] for c in pred.ids[lo:hi].tolist()],
                        pred.weights[lo:hi].tolist()))
        glo, ghi = int(ref.offsets[q]), int(ref.offsets[q + 1])
        g[q] = [voc[c] for c in ref.ids[glo:ghi].tolist()]
    return p, g


# ---- seed 004 as a plain Python loop --------------------------------------------------------

def seed_event_mention_score(res, ann, label):
    tp = 0
    for i in range(len(res)):
        tp += int((res[i] == label) and (ann[i] == label))
    if (ann.count(label) == 0) or (res.count(label) == 0) or (tp == 0):
        return 0
    rec = tp / ann.count(label)
    prec = tp / res.count(label)
    return (2 * rec * prec) / (rec + prec)


def seed_tweet_score(res, ann):
    ann_ems = set(ann) - set("o")
    res_ems = set(res) - set("o")
    assert ann_ems.issubset(EM_LABELS) and res_ems.issubset(EM_LABELS)
    assert len(res) == len(ann)
    tp = 0
    for label in EM_LABELS:  # the seed iterates res_ems, a set; a fixed order is reproducible
        if label in res_ems:
            tp += seed_event_mention_score(res, ann, label)
    if (len(ann_ems) == 0) or (len(res_ems) == 0) or (tp == 0):
        return 0
    rec = tp / len(ann_ems)
    prec = tp / len(res_ems)
    return (2 * rec * prec) / (rec + prec)


def events_data(n, rng, length=15):
    p = np.array([0.7] + [0.05] * 6)
    ann = rng.choice(7, size=(n, length), p=p).astype(np.int32)
    flip = rng.random((n, length)) < 0.25
    res = np.where(flip, rng.choice(7, size=(n, length), p=p), ann).astype(np.int32)
    ids = list(range(n))
    offsets = np.arange(0, n * length + 1, length, dtype=np.int64)
    return (LabelSequences(ids, offsets, res.ravel(), "results"),
            LabelSequences(ids, offsets, ann.ravel(), "annotations"))


def python_events(res, ann):
    n = len(res)
    width = int(res.offsets[1])
    r2 = res.codes.reshape(n, width)
    a2 = ann.codes.reshape(n, width)
    total = 0.0
    seconds = 0.0
    for lo in range(0, n, CHUNK):
        hi = min(n, lo + CHUNK)
        rs = [[LABELS[c] for c in row] for row in r2[lo:hi].tolist()]
        an = [[LABELS[c] for c in row] for row in a2[lo:hi].tolist()]
        t = time.perf_counter()
        for r, a in zip(rs, an):
            total += seed_tweet_score(r, a)
        seconds += time.perf_counter() - t
    return total / n, seconds


def best_of(fn, repeat=3):
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return out, best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=1_000_000, help="questions and tweets")
    ap.add_argument("--seed", type=int, default=20240601)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    print(f"{platform.python_implementation()} {platform.python_version()}, "
          f"{platform.machine()}, numpy {np.__version__}; n = {args.n:,}, seed {args.seed}; "
          f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    print(f"{'family':<34}{'Python loop':>12}{'qafast':>10}{'speed-up':>10}  identical")
    ok = True

    pred, ref = concepts_data(args.n, rng)
    k = 10
    (got, t_q) = best_of(lambda: evaluate_concepts(pred, ref, [f"hit@{k}", f"rec@{k}"]))
    hit, rec, t_py = python_concepts(pred, ref, k)
    same = got == {f"hit@{k}": hit, f"rec@{k}": rec}
    ok &= same
    print(f"{'OpenCSR Hit@10 + Rec@10':<34}{t_py:>11.2f}s{t_q:>9.3f}s{t_py / t_q:>9.0f}x  "
          f"{same}  (hit {hit:.6f}, rec {rec:.6f})")
    m = min(args.n, 100_000)
    p_str, g_str = strings_of_concepts(pred, ref, m)
    t = time.perf_counter()
    encode_concepts(p_str, g_str)
    print(f"{'  encoding dicts of strings':<34}{'':>12}{(time.perf_counter() - t) * args.n / m:>9.2f}s"
          f"  (extrapolated from {m:,})")

    res, ann = events_data(args.n, rng)
    (score, t_q) = best_of(lambda: tw_events_score(res, ann))
    want, t_py = python_events(res, ann)
    same = score == want
    ok &= same
    print(f"{'tweets tw-events score':<34}{t_py:>11.2f}s{t_q:>9.3f}s{t_py / t_q:>9.0f}x  "
          f"{same}  (score {score:.6f})")
    r_lists = [res.labels(i) for i in range(m)]
    a_lists = [ann.labels(i) for i in range(m)]
    t = time.perf_counter()
    encode_labels(r_lists, a_lists)
    print(f"{'  encoding lists of strings':<34}{'':>12}{(time.perf_counter() - t) * args.n / m:>9.2f}s"
          f"  (extrapolated from {m:,})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
