#!/usr/bin/env python
"""DPR retrieval accuracy benchmark: ``qafast.dpr_retrieval`` beside Pyserini's
``evaluate_dpr_retrieval.py``, in one process.

    python benchmarks/bench_dpr.py --script PATH/evaluate_dpr_retrieval.py    # 100,000 x 100
    python benchmarks/bench_dpr.py --script PATH/evaluate_dpr_retrieval.py --questions 2000

Rows:

1. Scoring: the script's ``evaluate_retrieval`` (imported from the unmodified file, default
   settings: token matching, ``--topk 1 5 20 100``) against ``qafast.dpr_retrieval`` on the
   same retrieval, which must print / return the same accuracies. The retrieval is built in
   memory and handed to the script through its module's ``json.load`` (the file would be
   gigabytes at full size); reading JSON is the same for both and not timed.
2. Threads: four calls on a quarter of the questions each, from four threads (the kernels
   release the GIL), against one call on all of them.

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
import importlib.util
import io
import random
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import import_qafast

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
    ap.add_argument("--script", required=True, help="Pyserini's evaluate_dpr_retrieval.py")
    ap.add_argument("--questions", type=int, default=100_000)
    ap.add_argument("--depth", type=int, default=100, help="passages per question")
    ap.add_argument("--seed", type=int, default=44)
    args = ap.parse_args()
    qafast, why = import_qafast()
    if qafast is None:
        raise SystemExit(why)
    spec = importlib.util.spec_from_file_location("pyserini_dpr_eval", args.script)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)

    run = make_retrieval(args.questions, args.depth, args.seed)
    topk = [1, 5, 20, 100]
    print(f"DPR retrieval accuracy, {args.questions:,} questions x {args.depth} passages")
    qafast.dpr_retrieval({"w": run["0"]}, topk=topk)         # warm: the character table

    class _Given:   # the script's module reads the retrieval through json.load
        @staticmethod
        def load(_f):
            return run

    script.json = _Given
    out, err = io.StringIO(), io.StringIO()
    t = time.perf_counter()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        script.evaluate_retrieval(__file__, topk)
    t_script = time.perf_counter() - t
    t = time.perf_counter()
    got = qafast.dpr_retrieval(run, topk=topk)
    t_qafast = time.perf_counter() - t
    ours = "".join(f"Top{k}\taccuracy: {got[f'Top{k}']:.4f}\n" for k in topk)
    if ours != out.getvalue():
        raise SystemExit(f"results differ:\n{out.getvalue()}\n{ours}")
    print(out.getvalue(), end="")
    print(f"  scoring        script {t_script:8.2f} s   qafast {t_qafast:7.3f} s   "
          f"ratio {t_script / t_qafast:6.1f}x")

    keys = list(run)
    parts = [{k: run[k] for k in keys[i::4]} for i in range(4)]
    t = time.perf_counter()
    qafast.dpr_retrieval(run, topk=topk)
    t_one = time.perf_counter() - t
    threads = [threading.Thread(target=qafast.dpr_retrieval, args=(p,),
                                kwargs={"topk": topk}) for p in parts]
    t = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    t_four = time.perf_counter() - t
    print(f"  threads        one call {t_one:7.3f} s   4 threads on quarters {t_four:7.3f} s   "
          f"speed-up {t_one / t_four:4.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
