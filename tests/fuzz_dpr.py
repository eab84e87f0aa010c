"""Differential check of qafast.dpr_retrieval against Pyserini's evaluate_dpr_retrieval.py
(not collected by pytest).

    python tests/fuzz_dpr.py [N] [--script .../evaluate_dpr_retrieval.py]

For N seeded adversarial retrieval files (mixed scripts, combining marks, case pairs whose
lowercase differs by context, punctuation, separators and controls, unassigned and private
code points, contexts with and without ``has_answer``, empty answer lists and answers of no
token, half of the files in ``--regex`` mode): every question's first hit from the script's
own ``has_answers`` (imported from the unmodified file) against ``qafast.dpr_first_hits``,
and the script's stdout, run as a program, against ``qafast dpr-retrieval``'s, byte for
byte, for ``--topk`` covering every rank. Prints the number of mismatches.
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

PIECES = ["the", "Paris", "PARIS", "paris", "café", "cafe\u0301", "CAFÉ", "ΟΔΟΣ", "οδος",
          "οδός", "Σ", "ς", "σ", "İ", "i\u0307", "I", "ı", "ß", "SS", "ﬁ", "fi", "K", "k",
          "東京", "東", "٣", "3", "½", "Ⅻ", "ⅻ", "1,000", "U.S.", "u . s .", "!", "?", "!?",
          "'", "-", "–", "\u00a0", "\u2003", "\u200b", "\u200d", "\x00", "\t", " ", "  ",
          "\ue000", "\U000e0001", "\u0378", "\U0001fae8", "\U00011f00", "ǅ", "ǆ", "Ω", "Ω",
          "\u0301", "\u093f", "क", "ि", "a", "b", "x", "(", ")", "[", "*", "+", ".", "^", "$",
          "|", "\\", "{2}", "€", "😀", "\ud800"]


def text(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(PIECES) + rng.choice(["", " ", " ", ""]) for _ in range(n))


def make_file(rng: random.Random) -> dict:
    run = {}
    for q in range(rng.randint(0, 30)):
        answers = [text(rng, rng.randint(0, 3)) for _ in range(rng.randint(0, 3))]
        contexts = []
        for _ in range(rng.randint(0, 12)):
            r = rng.random()
            if r < 0.15:
                contexts.append({"docid": "d", "has_answer": rng.random() < 0.3})
            elif r < 0.3 and answers:
                body = text(rng, 3) + rng.choice(answers) + text(rng, 3)
                contexts.append({"docid": "d", "text": text(rng, 1) + "\n" + body})
            else:
                contexts.append({"docid": "d", "text": text(rng, 2) + "\n" + text(rng, 12)
                                 + rng.choice(["", "\n" + text(rng, 2)])})
        run[f"q{q}"] = {"question": "?", "answers": answers, "contexts": contexts}
    return run


def load_script(path: str):
    spec = importlib.util.spec_from_file_location("pyserini_dpr_eval", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def script_first_hit(mod, tok, entry: dict, max_k: int, regex: bool) -> int:
    for idx, ctx in enumerate(entry["contexts"]):
        if idx >= max_k:
            break
        if "has_answer" in ctx:
            if ctx["has_answer"]:
                return idx
        elif mod.has_answers(ctx["text"].split("\n")[1], entry["answers"], tok, regex):
            return idx
    return max_k


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("n", type=int, nargs="?", default=200)
    ap.add_argument("--script", default="/work/scratch/oracles/dpr/evaluate_dpr_retrieval.py")
    args = ap.parse_args()
    mod = load_script(args.script)
    tok = mod.SimpleTokenizer()
    mismatches = 0
    topk = ["1", "2", "3", "5", "8", "12", "100"]
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(args.n):
            rng = random.Random(seed)
            run = make_file(rng)
            regex = seed % 2 == 1
            path = os.path.join(tmp, f"run{seed}.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(run, f)
            got = qafast.dpr_first_hits(path, max_k=100, regex=regex)
            for qid, entry in run.items():
                want = script_first_hit(mod, tok, entry, 100, regex)
                if got[qid] != (want + 1 if want < 100 else None):
                    mismatches += 1
                    print(f"seed {seed} {qid}: script {want}, qafast {got[qid]}")
            flags = ["--regex"] if regex else []
            done = subprocess.run([sys.executable, args.script, "--retrieval", path, "--topk",
                                   *topk, *flags], capture_output=True, text=True,
                                  cwd=os.path.dirname(args.script))
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                rc = cli.main(["dpr-retrieval", "--retrieval", path, "--topk", *topk, *flags])
            if done.returncode != 0 or rc != 0 or done.stdout != out.getvalue():
                mismatches += 1
                print(f"seed {seed}: stdout differs\n{done.stdout!r}\n{out.getvalue()!r}\n"
                      f"{done.stderr[-500:]}")
    print(f"{args.n} files, {mismatches} mismatches")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
