"""Differential check of qafast.coqa against the official CoQA script (not collected by pytest).

    python tests/fuzz_coqa.py [N] [--script /work/scratch/oracles/coqa/evaluate-v1.0.py]

For N seeded adversarial data/prediction files: every turn's exact match and F1 from the
script's own ``get_raw_scores`` / ``get_raw_scores_human`` against ``qafast.coqa_per_turn``
and ``qafast.reference.coqa`` (bit for bit), and the stdout of the script against ``qafast
coqa`` (byte for byte, with and without ``--human``). Prints the number of mismatches.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import os
import random
import subprocess
import sys
import tempfile

import qafast
from qafast import cli
from qafast.reference import coqa as ref

WORDS = ["the", "a", "an", "The", "A", "cat", "Cat", "white", "yes", "no", "unknown", "Yes.",
         "No!", "two", "2", "1,000", "café", "CAFÉ", "naïve", "ß", "İstanbul", "東京", "–", "an-",
         "the.", "(the)", "...", "'", "\u00a0", "\u2003", "x", "dog's", "U.S.", "5", "five",
         "Mar. 3", "1999", "\t", "", "ǅ", "ﬁ", "Ω", "a\u0301"]
SOURCES = ["mctest", "gutenberg", "race", "cnn", "wikipedia", "reddit", "science"]


def text(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.08:
        return ""
    if r < 0.15:
        return rng.choice(["unknown", "yes", "no", "Yes", "NO.", "Unknown"])
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 5)))


def make_case(rng: random.Random):
    stories = []
    n_extra = rng.choice([0, 1, 2, 3, 3, 3])
    ids = [f"s{i}" for i in range(rng.randint(1, 6))]
    for _ in range(rng.randint(1, 8)):
        sid = rng.choice(ids)
        n_turns = rng.randint(0, 6)
        extra = n_extra if rng.random() < 0.8 else rng.choice([0, 1, 2, 3, 4])
        answers = [{"input_text": text(rng), "turn_id": t + 1} for t in range(n_turns)]
        additional = {str(m): [{"input_text": text(rng), "turn_id": t + 1}
                               for t in range(n_turns + rng.choice([0, 0, 1]))]
                      for m in range(extra)}
        turn_ids = [t + 1 if rng.random() < 0.95 else rng.randint(1, 3) for t in range(n_turns)]
        stories.append({"id": sid, "source": rng.choice(SOURCES), "story": "...",
                        "questions": [{"input_text": "q?", "turn_id": t} for t in turn_ids],
                        "answers": answers, "additional_answers": additional})
    preds = []
    for s in stories:
        for q in s["questions"]:
            r = rng.random()
            if r < 0.1:
                continue
            answer = (rng.choice(s["answers"])["input_text"] if r < 0.4 and s["answers"]
                      else text(rng))
            preds.append({"id": s["id"], "turn_id": q["turn_id"], "answer": answer})
            if rng.random() < 0.05:
                preds.append({"id": s["id"], "turn_id": q["turn_id"], "answer": text(rng)})
    rng.shuffle(preds)
    return {"version": "1.0", "data": stories}, preds


def load_script(path: str):
    spec = importlib.util.spec_from_file_location("coqa_official", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def qafast_stdout(argv: list) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        rc = cli.main(argv)
    return rc, out.getvalue()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("n", nargs="?", type=int, default=200)
    ap.add_argument("--script", default="/work/scratch/oracles/coqa/evaluate-v1.0.py")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    official = load_script(args.script)
    mismatches = 0
    with tempfile.TemporaryDirectory() as tmp:
        dpath, ppath = os.path.join(tmp, "data.json"), os.path.join(tmp, "pred.json")
        for case in range(args.n):
            rng = random.Random(args.seed * 1_000_003 + case)
            data, preds = make_case(rng)
            with open(dpath, "w", encoding="utf-8") as f:
                json.dump(data, f, ensure_ascii=rng.random() < 0.5)
            with open(ppath, "w", encoding="utf-8") as f:
                json.dump(preds, f, ensure_ascii=rng.random() < 0.5)
            try:
                with contextlib.redirect_stderr(io.StringIO()):
                    ev = official.CoQAEvaluator(dpath)
            except IndexError:
                ev = None    # an answer list shorter than the questions: the script crashes
            if ev is None:
                try:
                    qafast.coqa(dpath, ppath)
                    mismatches += 1
                    print(f"case {case}: the script crashes, qafast scored")
                except qafast.errors.InputError:
                    pass
                continue
            with contextlib.redirect_stderr(io.StringIO()):
                em, f1 = ev.get_raw_scores(official.CoQAEvaluator.preds_to_dict(ppath))
            turns = qafast.coqa_per_turn(dpath, ppath)
            mine = {(i, t): (e, f, p) for i, t, e, f, p in zip(
                turns["id"], turns["turn_id"], turns["exact_match"].tolist(),
                turns["f1"].tolist(), turns["predicted"].tolist())}
            keys_ok = list(mine) == list(ev.gold_data)
            _, _, r_em, r_f1 = ref.per_turn(data, preds)
            for key in ev.gold_data:
                want = (em.get(key, 0.0), f1.get(key, 0.0), key in em)
                got = mine.get(key)
                if (not keys_ok or got is None or got[2] != want[2]
                        or float(got[0]) != float(want[0]) or float(got[1]) != float(want[1])
                        or float(r_em.get(key, 0)) != float(want[0])
                        or float(r_f1.get(key, 0)) != float(want[1])):
                    mismatches += 1
                    print(f"case {case} turn {key}: script {want}, qafast {got}, reference "
                          f"{r_em.get(key)}, {r_f1.get(key)}")
            for extra in ([], ["--human"]):
                argv = ["--data-file", dpath, "--pred-file", ppath, *extra]
                proc = subprocess.run([sys.executable, args.script, *argv], capture_output=True,
                                      text=True, check=False)
                rc, out = qafast_stdout(["coqa", *argv])
                if out != proc.stdout or (rc == 0) != (proc.returncode == 0):
                    mismatches += 1
                    print(f"case {case} {extra}: stdout differs (script rc {proc.returncode}, "
                          f"qafast rc {rc})\n{proc.stdout[:300]!r}\n{out[:300]!r}")
    print(f"{args.n} cases, {mismatches} mismatches")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
