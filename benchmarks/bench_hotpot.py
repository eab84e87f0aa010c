#!/usr/bin/env python
"""HotpotQA benchmark: qafast.hotpot beside the official hotpot_evaluate_v1.py, in one run.

    python benchmarks/bench_hotpot.py                      # 100,000 questions
    python benchmarks/bench_hotpot.py --questions 20000 --script PATH
    python benchmarks/bench_hotpot.py --contexts           # also gold files with paragraphs
    python benchmarks/bench_hotpot.py --process --repeat 5 # whole processes

The official script (unmodified; default path /work/scratch/oracles/hotpot, or --script) is
imported and its ``eval(PRED, GOLD)`` timed with its printing sent to a buffer; qafast is
timed on the same files (``qafast.hotpot(GOLD, PRED)``), and on the loaded objects. Rows:

1. end to end from the files (both read the JSON: the script with ujson, qafast with its
   compiled scan of the bytes), wall and CPU time (``time.process_time``); with
   ``--contexts`` also on a second gold file whose questions carry ``"context"`` paragraphs
   as the real dev set's do (10 paragraphs of 3-5 sentences, about 5 KB a question), which
   the script's ujson builds and qafast's scan skips unbuilt;
2. scoring only, the data already loaded: the script's ``eval`` with the ``json`` name of its
   module bound to a stand-in whose ``load`` returns the objects ujson read beforehand (the
   script's code is unchanged; it still opens the files), against
   ``qafast.hotpot(gold, pred)`` on the same objects (the only copy of the data in memory).

With ``--process``, instead: each as a whole process, as a user runs them, start-up
included: ``python hotpot_evaluate_v1.py PRED GOLD`` (the unmodified script) against
``python -m qafast hotpot PRED GOLD`` (the qafast under ``src/``), each process's wall time
and CPU time (user + system, from ``resource.getrusage(RUSAGE_CHILDREN)``), in alternating
rounds; their standard outputs must be identical (asserted).

Both must print the same dict (asserted, float for float). Data is synthetic and seeded:
answers of 1-5 words with case, punctuation and article noise, a fifth of them yes/no,
2-4 supporting facts per question with duplicates and misses, 3% of the answers and 3% of
the facts not predicted. The first gold file's entries have no ``"context"``. Needs ujson,
which the script imports. Times are the median of the rounds (each round runs every
contender once, alternating).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import os
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import SRC, import_qafast, machine_info

DEFAULT_SCRIPT = "/work/scratch/oracles/hotpot/hotpot_evaluate_v1.py"
WORDS = ["Paris", "France", "Eiffel", "tower", "river", "Seine", "1889", "twenty", "the", "a",
         "an", "American", "film", "director", "Kingdom", "of", "Scotland", "Oxford",
         "University", "café", "İstanbul", "rock", "band", "album", "1,000", "Smith's", "Walt",
         "Disney", "Company", "New", "York", "City", "Doctor", "Who", "BBC"]
TITLES = [f"{w} {v}" for w in WORDS[:20] for v in ("(band)", "(film)", "", "City")]


def make_data(n: int, seed: int) -> tuple[list, dict]:
    rng = random.Random(seed)

    def answer() -> str:
        if rng.random() < 0.2:
            return rng.choice(["yes", "no", "Yes", "no."])
        words = [rng.choice(WORDS) for _ in range(rng.randint(1, 5))]
        return " ".join(words)

    def noisy(text: str) -> str:
        r = rng.random()
        if r < 0.4:
            return text
        if r < 0.6:
            return text.lower() + rng.choice(["", ".", "!"])
        if r < 0.8:
            return "the " + text
        return answer()

    gold, answers, facts = [], {}, {}
    for i in range(n):
        qid = f"{rng.getrandbits(96):024x}"
        sp = [[rng.choice(TITLES), rng.randint(0, 5)] for _ in range(rng.randint(2, 4))]
        a = answer()
        gold.append({"_id": qid, "answer": a, "question": "?", "supporting_facts": sp,
                     "type": "bridge", "level": "hard"})
        if rng.random() > 0.03:
            answers[qid] = noisy(a)
        if rng.random() > 0.03:
            pred = [list(f) for f in sp if rng.random() < 0.8]
            if rng.random() < 0.3:
                pred.append([rng.choice(TITLES), rng.randint(0, 5)])
            if pred and rng.random() < 0.1:
                pred.append(list(pred[0]))
            facts[qid] = pred
    return gold, {"answer": answers, "sp": facts}


def add_contexts(gold: list, seed: int) -> None:
    """Give each question a "context" like the real dev set's: 10 paragraphs [title,
    [3-5 sentences of 12-30 words]], about 5 KB of JSON a question."""
    rng = random.Random(seed + 1)
    for entry in gold:
        entry["context"] = [
            [rng.choice(TITLES),
             [" ".join(rng.choice(WORDS) for _ in range(rng.randint(12, 30))) + ". "
              for _ in range(rng.randint(3, 5))]]
            for _ in range(10)]
        entry["question"] = " ".join(rng.choice(WORDS) for _ in range(12)) + "?"


def interleaved(contenders: dict, repeat: int) -> dict:
    """``{name: (median wall time, median CPU time, last result)}``: each round runs every
    contender once, so that a busy spell on a shared machine slows them all rather than one
    of them."""
    walls: dict = {name: [] for name in contenders}
    cpus: dict = {name: [] for name in contenders}
    last = {}
    for _ in range(repeat):
        for name, fn in contenders.items():
            t, c = time.perf_counter(), time.process_time()
            last[name] = fn()
            walls[name].append(time.perf_counter() - t)
            cpus[name].append(time.process_time() - c)
    return {name: (statistics.median(walls[name]), statistics.median(cpus[name]), last[name])
            for name in contenders}


def processes(commands: dict, repeat: int, env: dict) -> dict:
    """``{name: (median wall time, median CPU time, stdout)}`` of each command run as a
    process ``repeat`` times, the commands taken in turn in each round; CPU time is the
    child's user + system time."""
    walls: dict = {name: [] for name in commands}
    cpus: dict = {name: [] for name in commands}
    outs = {}
    for _ in range(repeat):
        for name, cmd in commands.items():
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t = time.perf_counter()
            outs[name] = subprocess.run(cmd, capture_output=True, check=True, env=env).stdout
            walls[name].append(time.perf_counter() - t)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus[name].append(after.ru_utime - before.ru_utime
                              + after.ru_stime - before.ru_stime)
    return {name: (statistics.median(walls[name]), statistics.median(cpus[name]), outs[name])
            for name in commands}


def main_process(args) -> int:
    """The ``--process`` rows: the script and ``qafast hotpot`` as whole processes."""
    gold, pred = make_data(args.questions, args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        gold_path, pred_path = f"{tmp}/gold.json", f"{tmp}/pred.json"
        with open(gold_path, "w", encoding="utf-8") as f:
            json.dump(gold, f)
        with open(pred_path, "w", encoding="utf-8") as f:
            json.dump(pred, f)
        del gold, pred
        env = dict(os.environ, PYTHONPATH=str(SRC), PYTHONIOENCODING="utf-8")
        qafast_cmd = [sys.executable, "-m", "qafast", "hotpot", pred_path, gold_path]
        commands = {
            "official": [sys.executable, args.script, pred_path, gold_path],
            "qafast": qafast_cmd,
        }
        if args.baseline_src:
            # another qafast (an older checkout's src/), in the same rounds
            commands["baseline"] = ["env", f"PYTHONPATH={args.baseline_src}", *qafast_cmd]
        timed = processes(commands, args.repeat, env)
    for name in commands:
        if timed[name][2] != timed["official"][2]:
            raise SystemExit(f"{name}: the standard output differs from the script's")
    print(f"HotpotQA, {args.questions:,} questions, whole processes, medians of {args.repeat} "
          "alternating rounds")
    for line in machine_info():
        print(f"  {line}")
    (wa, ca, _), (wb, cb, _) = timed["official"], timed["qafast"]
    print(f"{'':24s}{'official':>10s}{'qafast':>10s}{'ratio':>8s}")
    print(f"{'wall':24s}{wa:9.3f}s{wb:9.3f}s{wa / wb:7.1f}x")
    print(f"{'CPU (user + system)':24s}{ca:9.3f}s{cb:9.3f}s{ca / cb:7.1f}x")
    if args.baseline_src:
        wc, cc, _ = timed["baseline"]
        print(f"{'baseline wall':24s}{wa:9.3f}s{wc:9.3f}s{wa / wc:7.1f}x   ({args.baseline_src})")
        print(f"{'baseline CPU':24s}{ca:9.3f}s{cc:9.3f}s{ca / cc:7.1f}x")
    print(f"  load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs; "
          "standard outputs identical")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--script", default=DEFAULT_SCRIPT)
    ap.add_argument("--contexts", action="store_true",
                    help="also time a gold file whose questions carry context paragraphs")
    ap.add_argument("--process", action="store_true",
                    help="time the script and `qafast hotpot` as whole processes instead")
    ap.add_argument("--baseline-src", metavar="DIR",
                    help="with --process: also time the qafast in DIR (another checkout's "
                         "src/) in the same rounds")
    args = ap.parse_args()
    if args.process:
        return main_process(args)
    qafast, why = import_qafast()
    if qafast is None:
        print(why, file=sys.stderr)
        return 1
    import ujson

    import qafast.hotpot_eval as qh

    spec_ = importlib.util.spec_from_file_location("hotpot_evaluate_v1", args.script)
    script = importlib.util.module_from_spec(spec_)
    spec_.loader.exec_module(script)

    gold, pred = make_data(args.questions, args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        gold_path, pred_path = f"{tmp}/gold.json", f"{tmp}/pred.json"
        ctx_path = f"{tmp}/gold_contexts.json"
        with open(gold_path, "w", encoding="utf-8") as f:
            json.dump(gold, f)
        with open(pred_path, "w", encoding="utf-8") as f:
            json.dump(pred, f)
        if args.contexts:
            add_contexts(gold, args.seed)
            with open(ctx_path, "w", encoding="utf-8") as f:
                json.dump(gold, f)
        del gold, pred   # one copy of the data in memory: the collector walks what is there

        def official(gold_file=gold_path):
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                script.eval(pred_path, gold_file)
            return buf.getvalue().splitlines()[-1]

        # the script with its data already loaded: the same unmodified eval, its module's
        # json (ujson) swapped for one whose load hands back the objects read beforehand
        with open(pred_path) as f:
            loaded_pred = ujson.load(f)
        with open(gold_path) as f:
            loaded_gold = ujson.load(f)
        preloaded = {pred_path: loaded_pred, gold_path: loaded_gold}

        def official_loaded():
            saved = script.json
            script.json = types.SimpleNamespace(load=lambda f: preloaded[f.name])
            try:
                return official()
            finally:
                script.json = saved

        contenders = {
            "official": official,
            "qafast": lambda: qh.hotpot(gold_path, pred_path),
            "official, loaded": official_loaded,
            "qafast, loaded": lambda: qh.hotpot(loaded_gold, loaded_pred),
        }
        if args.contexts:
            contenders["official, contexts"] = lambda: official(ctx_path)
            contenders["qafast, contexts"] = lambda: qh.hotpot(ctx_path, pred_path)
            ctx_mb = os.path.getsize(ctx_path) / 1e6
        plain_mb = os.path.getsize(gold_path) / 1e6
        timed = interleaved(contenders, args.repeat)
    printed = timed["official"][2]
    for name in ("official, loaded", "qafast", "qafast, loaded"):
        assert str(timed[name][2]) == printed, (name, timed[name][2], printed)
    if args.contexts:
        assert str(timed["qafast, contexts"][2]) == timed["official, contexts"][2] == printed

    print(f"HotpotQA, {args.questions:,} questions, medians of {args.repeat} alternating rounds")
    for line in machine_info():
        print(f"  {line}")
    print(f"{'':40s}{'official':>10s}{'qafast':>10s}{'ratio':>8s}"
          f"{'CPU off.':>10s}{'CPU qaf.':>10s}{'ratio':>8s}")
    rows = [(f"end to end, gold {plain_mb:.0f} MB", "official", "qafast"),
            ("scoring the loaded data", "official, loaded", "qafast, loaded")]
    if args.contexts:
        rows.insert(1, (f"end to end, gold with contexts {ctx_mb:.0f} MB",
                        "official, contexts", "qafast, contexts"))
    for label, a, b in rows:
        (wa, ca, _), (wb, cb, _) = timed[a], timed[b]
        print(f"{label:40s}{wa:9.3f}s{wb:9.3f}s{wa / wb:7.1f}x{ca:9.3f}s{cb:9.3f}s"
              f"{ca / cb:7.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
