"""KILT: the official eval_retrieval.py / eval_downstream.py against qafast, in one process.

    PYTHONPATH=src python benchmarks/bench_kilt.py --oracle /work/scratch/oracles/kilt [-n 100000]
    PYTHONPATH=src python benchmarks/bench_kilt.py --threads 4 [-n 5000] [--repeat 5]
    PYTHONPATH=src python benchmarks/bench_kilt.py --oracle ... --only downstream -n 100000

Generates n questions (tests/fuzz_kilt.py's generator), writes them as JSON lines, and times
each script's ``evaluate`` (loading included) and qafast's function on the same files. With
``--threads T`` it times T calls of each qafast function in T threads against one call (the
ratio is T if nothing runs in parallel, 1 if everything does); no oracle is needed then.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import random
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fuzz_kilt
from _common import alternating_medians
import qafast


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--oracle")
    ap.add_argument("-n", type=int, default=100_000)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=1, help="alternating repeats (threads mode)")
    ap.add_argument("--only", choices=["retrieval", "downstream"],
                    help="time one evaluation only (the downstream script alone is quadratic)")
    a = ap.parse_args()
    if not a.threads and not a.oracle:
        ap.error("--oracle is needed to time the scripts")
    rng = random.Random(0)
    gold, guess = [], []
    for i in range(a.n):
        g, q = fuzz_kilt.question(rng, i)
        g["id"] = q["id"] = f"q{i}"
        g["output"][0]["answer"] = "Paris tower"
        prov = next(o for o in q["output"] if "provenance" in o)["provenance"]
        q["output"] = [{"answer": rng.choice(fuzz_kilt.ANSWERS), "provenance": prov}]
        gold.append(g)
        guess.append(q)
    with tempfile.TemporaryDirectory() as tmp:
        gp, qp = os.path.join(tmp, "gold.jsonl"), os.path.join(tmp, "guess.jsonl")
        fuzz_kilt.write(gp, gold)
        fuzz_kilt.write(qp, guess)
        if a.threads:
            threads(a, qp, gp)
            return
        sys.path.insert(0, a.oracle)
        from kilt import eval_downstream, eval_retrieval
        for name, script, ours in [
            ("retrieval", lambda: eval_retrieval.evaluate(gp, qp, [1, 5, 10, 20], ["wikipedia_id"]),
             lambda: qafast.kilt_retrieval(qp, gp)),
            ("downstream", lambda: eval_downstream.evaluate(gp, qp), lambda: qafast.kilt(qp, gp)),
        ]:
            if a.only and name != a.only:
                continue
            c, t = time.process_time(), time.perf_counter()
            with contextlib.redirect_stdout(io.StringIO()):
                script()
            t_script, c_script = time.perf_counter() - t, time.process_time() - c
            c, t = time.process_time(), time.perf_counter()
            ours()
            t_ours, c_ours = time.perf_counter() - t, time.process_time() - c
            print(f"{name}: {a.n} questions: script {t_script:.2f} s, qafast {t_ours:.2f} s, "
                  f"{t_script / t_ours:.1f}x (CPU: {c_script:.2f} s, {c_ours:.2f} s, "
                  f"{c_script / c_ours:.1f}x)")


def threads(a, qp: str, gp: str) -> None:
    """One call, then T calls in T threads, alternating ``--repeat`` times: the medians of
    the wall times (and of the process CPU times, which a loaded machine disturbs less)."""
    from concurrent.futures import ThreadPoolExecutor
    for name, ours in [("retrieval", lambda: qafast.kilt_retrieval(qp, gp)),
                       ("downstream", lambda: qafast.kilt(qp, gp))]:
        if a.only and name != a.only:
            continue
        ours()   # (warm up)
        with ThreadPoolExecutor(a.threads) as pool:
            (t_one, c_one), (t_all, c_all) = alternating_medians(
                [ours, lambda: list(pool.map(lambda f: f(), [ours] * a.threads))], a.repeat)
        print(f"{name}: {a.n} questions, median of {a.repeat}: one call {t_one:.2f} s "
              f"({c_one:.2f} s CPU), {a.threads} calls in {a.threads} "
              f"threads {t_all:.2f} s ({c_all:.2f} s CPU), "
              f"{t_all / t_one:.1f}x one call")


if __name__ == "__main__":
    main()
