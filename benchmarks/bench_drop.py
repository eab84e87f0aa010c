#!/usr/bin/env python
"""DROP benchmark: ``qafast.drop`` beside AllenAI's official ``drop_eval.py``, in one run.

    python benchmarks/bench_drop.py --script PATH/drop_eval.py            # 100,000 questions
    python benchmarks/bench_drop.py --script PATH/drop_eval.py --questions 20000

Rows:

1. Scoring loaded data: the script's ``evaluate_json(annotations, predictions)`` (imported
   from the unmodified file, its printing sent to a buffer) against
   ``qafast.drop(gold, predictions, by_type=True)``, which computes the same numbers and
   breakdown. Both start from the loaded JSON objects.
2. End to end from the files: ``python drop_eval.py --gold_path G --prediction_path P``
   against ``qafast drop`` with the same arguments (the script reads the JSON with the
   standard library, qafast with its compiled scanners), each as a subprocess, run
   alternately ``--e2e-repeat`` times; the medians of wall and of CPU time (the child's
   user + system) are shown. Their stdout must be identical.

Rows show wall time and, in brackets, CPU time: on a loaded machine the CPU ratio is the
steadier one.

The data is synthetic, seeded and DROP-shaped: passages of about ten questions whose gold
answers are numbers (about 60%), single spans, multi-span lists and dates with some fields
empty, half of them with validated answers; predictions are strings or span lists close to
or far from the gold, with case, punctuation, article and number-format noise, some missing.
The script needs SciPy; qafast does not.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import import_qafast

NAMES = ("Jay Cutler", "Matt Forte", "Robbie Gould", "Tom Brady", "Peyton Manning", "Ravens",
         "Steelers", "Bears", "Packers", "Eagles", "New York Giants", "Chicago", "Zürich",
         "the Ottoman Empire", "Habsburgs", "Poles", "Swedes", "Louis XIV", "Kraków",
         "São Paulo", "Dutch", "the French army", "Battle of Vienna", "Treaty of Karlowitz")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")
NUMBER_WORDS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def _number(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.7:
        return str(rng.randint(0, 60))
    if r < 0.85:
        return f"{rng.randint(0, 99)}.{rng.randint(0, 9)}"
    return f"{rng.randint(1, 99)},{rng.randint(0, 999):03d}"


def _gold_answer(rng: random.Random) -> dict:
    answer = {"number": "", "date": {"day": "", "month": "", "year": ""}, "spans": []}
    r = rng.random()
    if r < 0.6:
        answer["number"] = _number(rng)
    elif r < 0.88:
        answer["spans"] = [rng.choice(NAMES)]
    elif r < 0.95:
        answer["spans"] = rng.sample(NAMES, rng.randint(2, 4))
    else:
        answer["date"] = {"day": rng.choice(["", str(rng.randint(1, 28))]),
                          "month": rng.choice(("",) + MONTHS),
                          "year": str(rng.randint(1500, 2020))}
    return answer


def _noisy(rng: random.Random, text: str) -> str:
    r = rng.random()
    if r < 0.15:
        return text.upper()
    if r < 0.25:
        return "the " + text + rng.choice([".", ",", "!"])
    if r < 0.3 and text.isdigit():
        return rng.choice([text + ".0", NUMBER_WORDS[int(text) % 10], text + " yards"])
    return text


def _prediction(rng: random.Random, answer: dict):
    if rng.random() < 0.55:      # near the gold answer
        if answer["number"]:
            return _noisy(rng, answer["number"])
        if answer["spans"]:
            spans = [_noisy(rng, s) for s in answer["spans"]]
            return spans if len(spans) > 1 else spans[0]
        d = answer["date"]
        return " ".join(x for x in (d["month"], d["day"], d["year"]) if x)
    r = rng.random()
    if r < 0.5:
        return _number(rng)
    if r < 0.8:
        return rng.choice(NAMES)
    return rng.sample(NAMES, rng.randint(2, 3))


def make_drop(questions: int, seed: int) -> tuple[dict, dict]:
    rng = random.Random(seed)
    gold: dict = {}
    predictions: dict = {}
    q = 0
    while q < questions:
        pairs = []
        for _ in range(min(rng.randint(5, 15), questions - q)):
            qid = f"{rng.getrandbits(64):016x}-{q}"
            answer = _gold_answer(rng)
            pair = {"question": "How many yards was the longest field goal?", "answer": answer,
                    "query_id": qid}
            if rng.random() < 0.5:
                pair["validated_answers"] = [answer if rng.random() < 0.7 else _gold_answer(rng)
                                             for _ in range(rng.randint(1, 2))]
            pairs.append(pair)
            if rng.random() < 0.98:
                predictions[qid] = _prediction(rng, answer)
            q += 1
        gold[f"nfl_{len(gold)}"] = {"passage": "...", "qa_pairs": pairs}
    return gold, predictions


def _timed(fn, repeat: int) -> tuple[float, float, object]:
    """(best wall time, best CPU time, result) of ``repeat`` calls."""
    best, best_cpu, result = float("inf"), float("inf"), None
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        result = fn()
        best_cpu = min(best_cpu, time.process_time() - c)
        best = min(best, time.perf_counter() - t)
    return best, best_cpu, result


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--script", required=True, help="AllenAI's drop_eval.py (needs scipy)")
    ap.add_argument("--questions", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=34)
    ap.add_argument("--repeat", type=int, default=3, help="qafast's runs (best is shown)")
    ap.add_argument("--e2e-repeat", type=int, default=1,
                    help="alternating end-to-end runs of each (medians are shown)")
    args = ap.parse_args()
    qafast, why = import_qafast()
    if qafast is None:
        raise SystemExit(why)
    spec = importlib.util.spec_from_file_location("drop_eval", args.script)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)

    gold, predictions = make_drop(args.questions, args.seed)
    print(f"DROP, {args.questions:,} questions ({len(predictions):,} predicted)")

    def official():
        with contextlib.redirect_stdout(io.StringIO()):
            return script.evaluate_json(gold, predictions)

    t_script, c_script, (em, f1) = _timed(official, 1)
    t_qafast, c_qafast, ours = _timed(lambda: qafast.drop(gold, predictions, by_type=True),
                                      args.repeat)
    if (ours["global_em"], ours["global_f1"]) != (float(em), float(f1)):
        raise SystemExit(f"numbers differ: qafast {ours}, script {(em, f1)}")
    print(f"  scoring loaded data   script {t_script:8.3f} s   qafast {t_qafast:7.3f} s   "
          f"ratio {t_script / t_qafast:6.1f}x   (CPU {c_script:.3f} s / {c_qafast:.3f} s = "
          f"{c_script / c_qafast:.1f}x)")

    with tempfile.TemporaryDirectory() as tmp:
        g, p = Path(tmp, "gold.json"), Path(tmp, "pred.json")
        g.write_text(json.dumps(gold), encoding="utf-8")
        p.write_text(json.dumps(predictions), encoding="utf-8")
        files = ["--gold_path", str(g), "--prediction_path", str(p)]
        src = str(Path(__file__).resolve().parent.parent / "src")
        walls: dict = {"script": [], "qafast": []}
        cpus: dict = {"script": [], "qafast": []}
        outs: dict = {}
        for _ in range(args.e2e_repeat):
            for name, cmd in (("script", [sys.executable, args.script, *files]),
                              ("qafast", [sys.executable, "-c",
                                          (f"import sys; sys.path.insert(0, {src!r}); "
                                           "from qafast.cli import main; "
                                           "sys.exit(main(sys.argv[1:]))"), "drop", *files])):
                t, c = time.perf_counter(), _child_cpu()
                outs[name] = subprocess.run(cmd, capture_output=True, check=True).stdout
                cpus[name].append(_child_cpu() - c)
                walls[name].append(time.perf_counter() - t)
    if outs["script"] != outs["qafast"]:
        raise SystemExit("qafast drop's stdout differs from the script's")
    t_s, t_q = statistics.median(walls["script"]), statistics.median(walls["qafast"])
    c_s, c_q = statistics.median(cpus["script"]), statistics.median(cpus["qafast"])
    print(f"  end to end (CLI)      script {t_s:8.3f} s   qafast {t_q:7.3f} s   "
          f"ratio {t_s / t_q:6.1f}x   (CPU {c_s:.3f} s / {c_q:.3f} s = {c_s / c_q:.1f}x; "
          "stdout identical)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
