#!/usr/bin/env python
"""Answer metrics from several Python threads: one call against four threads each making the
same call, on the same inputs.

    python benchmarks/bench_threads.py                  # 200,000 questions, 3 golds each
    python benchmarks/bench_threads.py --questions 50000 --threads 2

Each row prints the best of 3 wall times (``time.perf_counter``) of one call and of
``--threads`` threads each making that call at once, and their ratio. A call that holds the
GIL throughout gives a ratio of about the thread count; on a machine with ``c`` free cores
a call that runs without it gives about ``threads / c`` (2.0 for four threads on two cores).
Data is bench_answers.py's seeded SQuAD-shaped set (English with noise, 10% Chinese).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import best_of, import_qafast, in_threads  # noqa: E402
from bench_answers import make_squad  # noqa: E402




def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=200_000)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--seed", type=int, default=2016)
    ap.add_argument("--only", help="run only the rows whose name contains this")
    args = ap.parse_args()
    qafast, why = import_qafast()
    if qafast is None:
        print(why, file=sys.stderr)
        return 1
    from qafast import answers  # noqa: PLC0415

    dataset, preds, _ = make_squad(args.questions, args.seed, v2=False)
    predictions, references = [], []
    for article in dataset["data"]:
        for para in article["paragraphs"]:
            for qa in para["qas"]:
                predictions.append(preds[qa["id"]])
                references.append([a["text"] for a in qa["answers"]])
    rows = {
        "f1 token squad": lambda: answers.f1(predictions, references),
        "exact_match squad": lambda: answers.exact_match(predictions, references),
        "f1 char squad": lambda: answers.f1(predictions, references, unit="char"),
        "exact_match_and_f1": lambda: answers.exact_match_and_f1(predictions, references),
        "squad()": lambda: qafast.squad(dataset, preds, version="1.1"),
    }
    print(f"{len(predictions):,} questions, {args.threads} threads, best of 3")
    print(f"{'call':<22} {'one call':>9} {'threads':>9} {'ratio':>6}")
    for name, fn in rows.items():
        if args.only and args.only not in name:
            continue
        fn()  # warm up (imports, first allocations)
        one = best_of(fn)
        many = best_of(in_threads(fn, args.threads))
        print(f"{name:<22} {one * 1e3:8.0f}ms {many * 1e3:8.0f}ms {many / one:6.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
