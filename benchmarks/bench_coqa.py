#!/usr/bin/env python
"""CoQA benchmark: ``qafast.coqa`` beside the official ``evaluate-v1.0.py``, in one run.

    python benchmarks/bench_coqa.py --script PATH/evaluate-v1.0.py            # 100,000 turns
    python benchmarks/bench_coqa.py --script PATH/evaluate-v1.0.py --turns 20000

Rows:

1. Scoring: the script's ``CoQAEvaluator(data file).model_performance(predictions)``
   (imported from the unmodified file; it reads the data file itself) against
   ``qafast.coqa(data file, predictions)``, which computes the same result.
2. End to end from the files: ``python evaluate-v1.0.py --data-file D --pred-file P`` against
   ``qafast coqa`` with the same arguments, each as a subprocess; their stdout must be
   identical.

The data is synthetic, seeded and CoQA-shaped: stories of about fifteen turns from the seven
sources, each turn with its answer and three additional answers (short spans, yes/no/unknown,
case, punctuation and article noise); predictions close to or far from them, some missing.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import import_qafast, load_script

WORDS = ("white", "kitten", "Cotton", "barn", "farmer", "her mother", "the old house", "Zürich",
         "three", "in the morning", "a red ball", "São Paulo", "his sisters", "paint", "bucket",
         "river", "school", "the teacher", "two dogs", "Monday")
SOURCES = ("mctest", "gutenberg", "race", "cnn", "wikipedia", "reddit", "science")


def _answer(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.2:
        return rng.choice(("yes", "no", "unknown"))
    return " ".join(rng.sample(WORDS, rng.randint(1, 3)))


def _noisy(rng: random.Random, text: str) -> str:
    r = rng.random()
    if r < 0.15:
        return text.upper()
    if r < 0.3:
        return "the " + text + rng.choice([".", ",", "!"])
    if r < 0.4:
        return text + " " + rng.choice(WORDS)
    return text


def make_coqa(turns: int, seed: int) -> tuple[dict, list]:
    rng = random.Random(seed)
    stories, preds = [], []
    t = 0
    while t < turns:
        n = min(rng.randint(10, 20), turns - t)
        sid = f"{rng.getrandbits(64):016x}"
        answers = [_answer(rng) for _ in range(n)]
        extra = {str(m): [{"input_text": _noisy(rng, a) if rng.random() < 0.7 else _answer(rng),
                           "turn_id": i + 1} for i, a in enumerate(answers)] for m in range(3)}
        stories.append({"id": sid, "source": rng.choice(SOURCES), "story": "...",
                        "questions": [{"input_text": "?", "turn_id": i + 1} for i in range(n)],
                        "answers": [{"input_text": a, "turn_id": i + 1}
                                    for i, a in enumerate(answers)],
                        "additional_answers": extra})
        for i, a in enumerate(answers):
            if rng.random() < 0.98:
                preds.append({"id": sid, "turn_id": i + 1,
                              "answer": _noisy(rng, a) if rng.random() < 0.6 else _answer(rng)})
        t += n
    return {"version": "1.0", "data": stories}, preds


def _timed(fn, repeat: int) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t)
    return best, result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--script", required=True, help="the official evaluate-v1.0.py")
    ap.add_argument("--turns", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=34)
    ap.add_argument("--repeat", type=int, default=3, help="qafast's runs (best is shown)")
    args = ap.parse_args()
    qafast, why = import_qafast()
    if qafast is None:
        raise SystemExit(why)
    script = load_script(args.script, "coqa_official")

    data, preds = make_coqa(args.turns, args.seed)
    print(f"CoQA, {args.turns:,} turns ({len(preds):,} predicted, 4 gold answers each)")
    with tempfile.TemporaryDirectory() as tmp:
        d, p = Path(tmp, "data.json"), Path(tmp, "pred.json")
        d.write_text(json.dumps(data), encoding="utf-8")
        p.write_text(json.dumps(preds), encoding="utf-8")

        def official():
            with contextlib.redirect_stderr(io.StringIO()):
                ev = script.CoQAEvaluator(str(d))
                return ev.model_performance(script.CoQAEvaluator.preds_to_dict(str(p)))

        t_script, want = _timed(official, 1)
        t_qafast, ours = _timed(lambda: qafast.coqa(d, p), args.repeat)
        if ours != want:
            raise SystemExit(f"results differ: qafast {ours['overall']}, script "
                             f"{want['overall']}")
        print(f"  scoring the files     script {t_script:8.3f} s   qafast {t_qafast:7.3f} s   "
              f"ratio {t_script / t_qafast:6.1f}x")

        files = ["--data-file", str(d), "--pred-file", str(p)]
        src = str(Path(__file__).resolve().parent.parent / "src")
        runs = {}
        for name, cmd in (("script", [sys.executable, args.script, *files]),
                          ("qafast", [sys.executable, "-c",
                                      (f"import sys; sys.path.insert(0, {src!r}); "
                                       "from qafast.cli import main; "
                                       "sys.exit(main(sys.argv[1:]))"), "coqa", *files])):
            t = time.perf_counter()
            out = subprocess.run(cmd, capture_output=True, check=True).stdout
            runs[name] = (time.perf_counter() - t, out)
    if runs["script"][1] != runs["qafast"][1]:
        raise SystemExit("qafast coqa's stdout differs from the script's")
    t_s, t_q = runs["script"][0], runs["qafast"][0]
    print(f"  end to end (CLI)      script {t_s:8.3f} s   qafast {t_q:7.3f} s   "
          f"ratio {t_s / t_q:6.1f}x   (stdout identical)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
