#!/usr/bin/env python
"""Two builds of qafast on the API paths of bench_ranking.py and bench_stream.py, in
alternation: did a change move them?

    python benchmarks/ab_api.py --base ../base               # 5 rounds of every case
    python benchmarks/ab_api.py --base ../base --rounds 9 --case evaluate-file

``--base`` is another checkout of qafast, built in place (``python setup.py build_ext
--inplace``), for example a ``git worktree`` of the commit before the change; the other build
is this tree's ``src/``. Each round runs every case once with each build, in turn, each in a
process of its own that builds the case's data (seeded, as bench_ranking.py and
bench_stream.py build theirs), runs the call once to warm up and times the best of three;
the report gives the median of the rounds for each build and their ratio, and checks that
the two builds gave the same numbers.

The cases:

- ``evaluate-dict``: ``qafast.evaluate`` of 100,000 queries x 100 documents given as dicts
  of str ids, five measures (bench_ranking.py's dict row);
- ``evaluate-file``: the same data as TREC qrels and run files (its file row);
- ``evaluate-arrays``: the same data as integer arrays, through ``Run.from_arrays``;
- ``stream``: ``RankingMetrics(["mrr@10", "ndcg@10", "map", "recall@10"])`` over 10,000
  queries x 100 candidates in batches of 256 (bench_stream.py's first row, numpy arrays);
- ``answers``: ``AnswerMetrics`` over 100,000 questions in batches of 64.

Not a test: as ab_trec.py, it answers whether one build is faster than another on a
machine whose speed moves while it is asked, by alternating them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CASES = ("evaluate-dict", "evaluate-file", "evaluate-arrays", "stream", "answers")

# the child: builds the data of one case, then times qafast's call on it
CHILD = r"""
import json, sys, time
sys.path.insert(0, {bench!r})
import numpy as np
import _common
import qafast

case, tmp = {case!r}, {tmp!r}

def best(fn, reps=3):
    fn()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return min(times), out

if case.startswith("evaluate"):
    data = _common.make_data(100_000, 100)
    measures = _common.MEASURES_QAFAST
    if case == "evaluate-dict":
        qrels, run = data.to_dicts()
    elif case == "evaluate-file":
        qrels, run = tmp + "/qrels", tmp + "/run"
        data.write_trec(qrels, run)
    else:
        qrels = qafast.Qrels.from_arrays(*data.qrels_arrays())
        run = qafast.Run.from_arrays(*data.run_arrays())
    seconds, result = best(lambda: qafast.evaluate(qrels, run, measures))
elif case == "stream":
    rng = np.random.default_rng(0)
    scores = rng.random((10_000, 100))
    grades = rng.integers(0, 4, size=(10_000, 100)) * (rng.random((10_000, 100)) < 0.2)

    def stream():
        m = qafast.RankingMetrics(["mrr@10", "ndcg@10", "map", "recall@10"])
        for lo in range(0, 10_000, 256):
            m.update(scores[lo:lo + 256], grades[lo:lo + 256])
        return m.compute()
    seconds, result = best(stream)
else:
    rng = np.random.default_rng(0)
    words = ["the", "Eiffel", "tower", "Paris", "a", "city", "of", "France", "1889", "iron"]
    preds = [" ".join(rng.choice(words, size=rng.integers(1, 6))) for _ in range(100_000)]
    golds = [[" ".join(rng.choice(words, size=rng.integers(1, 6))) for _ in range(2)]
             for _ in range(100_000)]

    def answers():
        m = qafast.AnswerMetrics()
        for lo in range(0, 100_000, 64):
            m.update(preds[lo:lo + 64], golds[lo:lo + 64])
        return m.compute()
    seconds, result = best(answers)
print(json.dumps({{"seconds": seconds, "result": repr(result)}}))
"""


def run_case(src: Path, case: str, tmp: str) -> tuple[float, str]:
    env = dict(os.environ, PYTHONPATH=str(src), OPENBLAS_NUM_THREADS="1")
    code = CHILD.format(bench=str(HERE), case=case, tmp=tmp)
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{case} failed with {src}:\n{proc.stderr[-2000:]}")
    out = json.loads(proc.stdout.splitlines()[-1])
    return out["seconds"], out["result"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", required=True, type=Path,
                    help="another qafast checkout, built in place: the build to compare with")
    ap.add_argument("--rounds", type=int, default=5, help="runs of each build (default 5)")
    ap.add_argument("--case", action="append", choices=CASES, default=None,
                    help="a case to run (default: all); repeat for several")
    args = ap.parse_args(argv)
    builds = {"base": args.base.resolve() / "src", "this": REPO / "src"}
    cases = args.case or list(CASES)
    times: dict = {(c, b): [] for c in cases for b in builds}
    results: dict = {}
    with tempfile.TemporaryDirectory(prefix="qafast-ab-") as tmp:
        for r in range(args.rounds):
            for case in cases:
                # alternate which build goes first, so neither always meets a warmer cache
                order = list(builds) if r % 2 == 0 else list(reversed(builds))
                for b in order:
                    seconds, result = run_case(builds[b], case, tmp)
                    times[(case, b)].append(seconds)
                    results.setdefault(case, {})[b] = result
            print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
    print(f"{'case':<16} {'base median':>12} {'this median':>12} {'base/this':>10}  same numbers")
    for case in cases:
        base = statistics.median(times[(case, "base")])
        this = statistics.median(times[(case, "this")])
        same = results[case]["base"] == results[case]["this"]
        print(f"{case:<16} {base:>11.3f}s {this:>11.3f}s {base / this:>9.2f}x  {same}")
    for case in cases:
        print(f"  {case}: base {' '.join(f'{t:.3f}' for t in times[(case, 'base')])}; "
              f"this {' '.join(f'{t:.3f}' for t in times[(case, 'this')])}")
    return 0 if all(results[c]["base"] == results[c]["this"] for c in cases) else 1


if __name__ == "__main__":
    sys.exit(main())
