#!/usr/bin/env python
"""DPR retrieval accuracy benchmark: ``qafast.dpr_retrieval`` beside Pyserini's
``evaluate_dpr_retrieval.py``, in one process.

    python benchmarks/bench_dpr.py --script PATH/evaluate_dpr_retrieval.py    # 100,000 x 100
    python benchmarks/bench_dpr.py --script PATH/evaluate_dpr_retrieval.py --questions 2000

Rows:

1. Scoring: the script's ``evaluate_retrieval`` (imported from the unmodified file, default
   settings: token matching, ``--topk 1 5 20 100``) against ``qafast.dpr_retrieval``. The
   script's full run takes about an hour at 100,000 questions, so it is timed on a seeded
   sample of ``--script-questions`` of them and its time scaled linearly to all (the output
   says so); its accuracies on the sample must equal qafast's on the same sample. qafast
   is timed on all the questions (median of ``--repeat`` calls, with its CPU time). The
   retrieval is built in memory and handed to the script through its module's
   ``json.load`` (the file would be gigabytes at full size); reading JSON is the same for
   both and not timed.
2. Threads: four threads each making the same call at once, against one call: with the
   kernels releasing the GIL for the bulk of the work, two cores do the four calls in about
   twice one call's time (ratio 2.0; four calls one after the other would be 4.0). One
   call and the four threads alternate, ``--repeat`` times; medians are printed. The same
   ratio for ``hashlib.sha256`` (which releases the GIL) is printed beside it: on a machine
   loaded by other processes, it shows how far below 4.0 any threads could get.

The data is synthetic and seeded: passages of about 100 words (title line, then text) drawn
from a Zipf-like vocabulary with capitals, punctuation, numbers and accented words; answers of
one to three words, planted in a passage at a rank drawn so that about 40% of the questions
hit at rank 1, 75% within 20, 85% within 100, as a good dense retriever does. Passages come
from a pool, so that memory stays small; every question's passages are still tokenized and
searched.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import os
import random
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import alternating_medians, import_qafast, load_script

SYLL = ("ka", "lo", "mi", "ren", "tas", "vo", "ber", "un", "el", "sto", "qua", "dré", "ñu",
        "ist", "or", "an", "the", "of", "ly", "ma")


def _vocab(rng: random.Random, n: int) -> list[str]:
    words = []
    for i in range(n):
        w = "".join(rng.choice(SYLL) for _ in range(rng.randint(1, 4)))
        r = rng.random()
        if r < 0.15:
            w = w.capitalize()
        elif r < 0.2:
            w = str(rng.randint(1, 3000))
        words.append(w)
    return words


def make_retrieval(questions: int, depth: int, seed: int) -> dict:
    rng = random.Random(seed)
    vocab = _vocab(rng, 20000)
    weights = [1.0 / (i + 1) for i in range(len(vocab))]
    pool_words = rng.choices(vocab, weights, k=300 * 100)

    def passage() -> str:
        start = rng.randrange(0, len(pool_words) - 130)
        words = pool_words[start:start + rng.randint(80, 120)]
        text = " ".join(w + (rng.choice((",", ".", "", "", "", "")) if rng.random() < 0.15
                             else "") for w in words)
        return text

    pool = [f"Title {i}\n" + passage() for i in range(4000)]
    ctx_lists = [[{"docid": str(j), "text": pool[rng.randrange(len(pool))], "score": 1.0}
                  for j in range(depth)] for _ in range(200)]
    run = {}
    for q in range(questions):
        answer = " ".join(rng.choices(vocab[500:], k=rng.randint(1, 3)))
        contexts = list(ctx_lists[rng.randrange(len(ctx_lists))])
        r = rng.random()
        rank = 0 if r < 0.4 else rng.randint(1, 19) if r < 0.75 else (
            rng.randint(20, depth - 1) if r < 0.85 and depth > 20 else None)
        if rank is not None and rank < depth:
            ctx = contexts[rank]
            title, body = ctx["text"].split("\n", 1)
            words = body.split(" ")
            at = rng.randrange(len(words))
            shown = answer.upper() if rng.random() < 0.2 else answer
            contexts[rank] = {"docid": ctx["docid"], "score": 1.0,
                              "text": title + "\n" + " ".join(words[:at] + [shown] + words[at:])}
        aliases = [answer] + (["alias " + answer] if rng.random() < 0.3 else [])
        run[str(q)] = {"question": "?", "answers": aliases, "contexts": contexts}
    return run


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--script", default="/work/scratch/oracles/dpr/evaluate_dpr_retrieval.py",
                    help="Pyserini's evaluate_dpr_retrieval.py")
    ap.add_argument("--questions", type=int, default=100_000)
    ap.add_argument("--script-questions", type=int, default=3000,
                    help="the seeded sample the script is timed on (its time is scaled)")
    ap.add_argument("--depth", type=int, default=100, help="passages per question")
    ap.add_argument("--seed", type=int, default=44)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    qafast, why = import_qafast()
    if qafast is None:
        raise SystemExit(why)
    script = load_script(args.script, "pyserini_dpr_eval")

    run = make_retrieval(args.questions, args.depth, args.seed)
    topk = [1, 5, 20, 100]
    print(f"DPR retrieval accuracy, {args.questions:,} questions x {args.depth} passages")
    qafast.dpr_retrieval({"w": run["0"]}, topk=topk)         # warm: the character tables

    keys = list(run)
    n_sample = min(args.script_questions, len(keys))
    sample = {k: run[k] for k in sorted(random.Random(args.seed).sample(keys, n_sample),
                                        key=int)}

    class _Given:   # the script's module reads the retrieval through json.load
        @staticmethod
        def load(_f):
            return sample

    script.json = _Given
    out, err = io.StringIO(), io.StringIO()
    t, c = time.perf_counter(), time.process_time()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        script.evaluate_retrieval(__file__, topk)
    t_sample, c_sample = time.perf_counter() - t, time.process_time() - c
    t_script = t_sample * len(keys) / n_sample
    c_script = c_sample * len(keys) / n_sample
    got = qafast.dpr_retrieval(sample, topk=topk)
    ours = "".join(f"Top{k}\taccuracy: {got[f'Top{k}']:.4f}\n" for k in topk)
    if ours != out.getvalue():
        raise SystemExit(f"results differ on the sample:\n{out.getvalue()}\n{ours}")

    def one_call():
        return qafast.dpr_retrieval(run, topk=topk)

    def four_threads():
        threads = [threading.Thread(target=one_call) for _ in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()

    walls: dict[str, list[float]] = {"one": [], "four": []}
    cpus: dict[str, list[float]] = {"one": [], "four": []}
    for _ in range(args.repeat):
        for name, fn in (("one", one_call), ("four", four_threads)):
            t, c = time.perf_counter(), time.process_time()
            fn()
            walls[name].append(time.perf_counter() - t)
            cpus[name].append(time.process_time() - c)
    t_one, t_four = statistics.median(walls["one"]), statistics.median(walls["four"])
    c_one, c_four = statistics.median(cpus["one"]), statistics.median(cpus["four"])
    control = _control_ratio(args.repeat)
    full = qafast.dpr_retrieval(run, topk=topk)
    print("".join(f"Top{k}\taccuracy: {full[f'Top{k}']:.4f}\n" for k in topk), end="")
    print(f"  scoring        script {t_script:8.1f} s (CPU {c_script:.1f} s; timed on a seeded "
          f"sample of {n_sample:,} questions, {t_sample:.1f} s, and scaled linearly)")
    print(f"                 qafast {t_one:8.2f} s (CPU {c_one:.2f} s; all the questions)   "
          f"ratio {t_script / t_one:6.1f}x (CPU {c_script / c_one:.1f}x)")
    print(f"  threads        one call {t_one:7.2f} s   4 threads, one call each {t_four:7.2f} s "
          f"(CPU {c_four:.2f} s)   4-thread time / 1-call time {t_four / t_one:4.2f}")
    print(f"                 (2.0: two cores busy, 4.0: no parallelism; the same measure of "
          f"hashlib.sha256, which releases the GIL, on this machine now: {control:4.2f})")
    print(f"  medians of {args.repeat}, alternating; load average "
          f"{', '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    return 0


def _control_ratio(repeat: int) -> float:
    """4-thread time / 1-call time of a call known to release the GIL: what the machine's
    load and cores allow the threads row to reach."""
    data = b"\0" * (64 << 20)

    def one_call():
        hashlib.sha256(data).digest()

    def four_threads():
        threads = [threading.Thread(target=one_call) for _ in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()

    (one, _), (four, _) = alternating_medians([one_call, four_threads], max(repeat, 3))
    return four / one


if __name__ == "__main__":
    sys.exit(main())
