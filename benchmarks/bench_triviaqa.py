#!/usr/bin/env python
"""TriviaQA benchmark: ``qafast.triviaqa`` beside the official ``triviaqa_evaluation.py``, in
one run.

    python benchmarks/bench_triviaqa.py --oracle DIR        # DIR holds evaluation/ and utils/
    python benchmarks/bench_triviaqa.py --oracle DIR --questions 20000
    python benchmarks/bench_triviaqa.py --threads 4 --questions 20000 [--repeat 7]

Rows:

1. Scoring: the script's ``evaluate_triviaqa(key_to_ground_truth, predictions, mute=True)``
   (imported from the unmodified file, with the dataset already read by its own ``utils``)
   against ``qafast.triviaqa(dataset object, predictions)``.
2. End to end from the files: the script and ``qafast triviaqa`` as subprocesses with the
   same arguments, run in turn ``--cli-repeat`` times; their stdout (the ``em=0:`` lines and
   the dict) must be identical. Median wall time and median CPU time (user + system) of each;
   the CPU time is the steadier measure on a loaded machine.

With ``--threads T`` (no oracle needed) it times instead one ``qafast.triviaqa(dataset object,
predictions)`` call against T such calls in T threads, alternating ``--repeat`` times, and
prints the medians of the wall and process CPU times and their ratio (T if nothing runs in
parallel; T / cores if the calls hold the interpreter lock for none of their work). The same
ratio for ``hashlib.sha256`` (which releases the GIL), timed in the same alternation on a
buffer that takes about one call's time, is printed beside it: on a machine loaded by other
processes, it shows how far below T any threads could get.

The data is synthetic, seeded and TriviaQA-shaped (Wikipedia domain): each question with 2 to
12 normalized aliases, some human answers; predictions an alias with case, punctuation,
article and underscore noise, or a wrong answer, a few missing.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib
import io
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import alternating_medians, import_qafast, in_threads

WORDS = ("sunset", "boulevard", "blvd", "andrew", "lloyd", "webber", "paris", "france", "rock",
         "n", "roll", "the", "beatles", "île", "de", "la", "cité", "1966", "world", "cup",
         "queen", "victoria", "mount", "everest", "river", "thames", "zürich", "o", "neill")


def _alias(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 4)))


def _noisy(rng: random.Random, text: str) -> str:
    r = rng.random()
    if r < 0.2:
        return text.title()
    if r < 0.35:
        return "The " + text + rng.choice([".", "!", "’s"])
    if r < 0.45:
        return text.replace(" ", "_")
    if r < 0.55:
        return text.replace(" ", "-")
    return text


def make(questions: int, seed: int) -> tuple[dict, dict]:
    rng = random.Random(seed)
    data, preds = [], {}
    for i in range(questions):
        qid = f"tc_{i}"
        aliases = [_alias(rng) for _ in range(rng.randint(2, 12))]
        answer = {"Aliases": aliases, "NormalizedAliases": aliases, "NormalizedValue": aliases[0],
                  "Value": aliases[0], "Type": "WikipediaEntity"}
        if rng.random() < 0.1:
            answer["HumanAnswers"] = [_noisy(rng, _alias(rng))]
        data.append({"QuestionId": qid, "Question": "?", "Answer": answer,
                     "EntityPages": [], "SearchResults": []})
        if rng.random() < 0.98:
            preds[qid] = _noisy(rng, rng.choice(aliases)) if rng.random() < 0.6 else \
                _alias(rng)
    return {"Version": 1.0, "Domain": "Wikipedia", "VerifiedEval": False, "Data": data}, preds


def _timed(fn, repeat: int):
    best, result = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t)
    return best, result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "))
    ap.add_argument("--oracle",
                    help="directory of the unmodified script (evaluation/, utils/)")
    ap.add_argument("--questions", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=3,
                    help="qafast's runs (best is shown; with --threads: alternating repeats, "
                         "medians shown)")
    ap.add_argument("--cli-repeat", type=int, default=1,
                    help="end-to-end runs of each command, taken in turn (medians shown)")
    ap.add_argument("--threads", type=int, default=0,
                    help="time T calls in T threads against one call (no script is run)")
    args = ap.parse_args()
    if not args.threads and not args.oracle:
        ap.error("--oracle is needed to time the script")
    qafast, why = import_qafast()
    if qafast is None:
        raise SystemExit(why)
    if args.threads:
        return threads(qafast, args)
    sys.path.insert(0, args.oracle)
    script = importlib.import_module("evaluation.triviaqa_evaluation")
    dataset_utils = importlib.import_module("utils.dataset_utils")

    data, preds = make(args.questions, args.seed)
    print(f"TriviaQA, {args.questions:,} questions ({len(preds):,} predicted)")
    with tempfile.TemporaryDirectory() as tmp:
        d, p = Path(tmp, "data.json"), Path(tmp, "pred.json")
        d.write_text(json.dumps(data), encoding="utf-8")
        p.write_text(json.dumps(preds), encoding="utf-8")
        gold = dataset_utils.get_key_to_ground_truth(dataset_utils.read_triviaqa_data(str(d)))

        def official():
            with contextlib.redirect_stderr(io.StringIO()):
                return script.evaluate_triviaqa(gold, preds, mute=True)

        t_script, want = _timed(official, 1)
        t_qafast, ours = _timed(lambda: qafast.triviaqa(data, preds), args.repeat)
        if ours != want:
            raise SystemExit(f"results differ: qafast {ours}, script {want}")
        print(f"  scoring              script {t_script:8.3f} s   qafast {t_qafast:7.3f} s   "
              f"ratio {t_script / t_qafast:6.1f}x")

        files = ["--dataset_file", str(d), "--prediction_file", str(p)]
        src = str(Path(__file__).resolve().parent.parent / "src")
        env = dict(os.environ, PYTHONPATH=args.oracle, PYTHONIOENCODING="utf-8")
        runs: dict = {"script": [], "qafast": []}
        outs = {}
        # alternately, so that both see the same load; wall time and the child's CPU time
        # (user + system), whose medians are shown
        for _ in range(args.cli_repeat):
            for name, cmd in (("script", [sys.executable,
                                          str(Path(args.oracle, "evaluation",
                                                   "triviaqa_evaluation.py")), *files]),
                              ("qafast", [sys.executable, "-c",
                                          (f"import sys; sys.path.insert(0, {src!r}); "
                                           "from qafast.cli import main; "
                                           "sys.exit(main(sys.argv[1:]))"), "triviaqa",
                                          *files])):
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                t = time.perf_counter()
                outs[name] = subprocess.run(cmd, capture_output=True, check=True,
                                            env=env).stdout
                wall = time.perf_counter() - t
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
                runs[name].append((wall, cpu))
    if outs["script"] != outs["qafast"]:
        raise SystemExit("qafast triviaqa's stdout differs from the script's")
    (w_s, c_s), (w_q, c_q) = ((statistics.median(w for w, _ in runs[k]),
                               statistics.median(c for _, c in runs[k]))
                              for k in ("script", "qafast"))
    print(f"  end to end (CLI)     script {w_s:8.3f} s   qafast {w_q:7.3f} s   "
          f"ratio {w_s / w_q:6.1f}x   (wall, median of {args.cli_repeat}; stdout identical)")
    print(f"                       script {c_s:8.3f} s   qafast {c_q:7.3f} s   "
          f"ratio {c_s / c_q:6.1f}x   (CPU time, user + system)")
    print(f"  load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    return 0


def threads(qafast, args) -> int:
    """One call, then ``--threads`` calls in as many threads, alternating ``--repeat`` times:
    the medians of the wall times and of the process CPU times (which a loaded machine
    disturbs less)."""
    data, preds = make(args.questions, args.seed)
    one_call = lambda: qafast.triviaqa(data, preds)   # noqa: E731
    many = in_threads(one_call, args.threads)
    one_call()   # (warm up: imports, first-touch allocations)
    # the control: a buffer that sha256 digests in about one call's CPU time
    c = time.process_time()
    one_call()
    spent = time.process_time() - c
    probe = b"\0" * (8 << 20)
    c = time.process_time()
    hashlib.sha256(probe).digest()
    rate = len(probe) / max(time.process_time() - c, 1e-4)
    buffer = b"\0" * max(1 << 20, int(rate * spent))
    control = lambda: hashlib.sha256(buffer).digest()   # noqa: E731
    control_many = in_threads(control, args.threads)
    (t_one, c_one), (t_all, c_all), (ctl_one, _), (ctl_all, _) = alternating_medians(
        [one_call, many, control, control_many], args.repeat)
    ctl = ctl_all / ctl_one
    print(f"TriviaQA, {args.questions:,} questions ({len(preds):,} predicted), qafast.triviaqa "
          f"on the objects, median of {args.repeat}")
    print(f"  one call                 {t_one:7.3f} s   ({c_one:.3f} s CPU)")
    print(f"  {args.threads} calls in {args.threads} threads    {t_all:7.3f} s   "
          f"({c_all:.3f} s CPU)   {t_all / t_one:4.2f}x one call "
          f"({args.threads} threads on {os.cpu_count()} CPUs)")
    print(f"  the same ratio for hashlib.sha256 (which releases the GIL) now: {ctl:4.2f}x")
    print(f"  load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
