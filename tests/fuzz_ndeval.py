"""Differential fuzzing of ``qafast ndeval`` against ndeval (version 4.5), run by hand:

    PYTHONPATH=src python tests/fuzz_ndeval.py --binary /path/to/ndeval [--cases N] [--seed S]

The binary is ndeval.c built unmodified (``cc -O2 -o ndeval ndeval.c -lm``; the C source is in
pyndeval's source distribution). Each case writes random diversity qrels, a run and a baseline
(few documents and subtopics so that ties abound, judgments 0 to 3, subtopics never judged
relevant, topics with no relevant judgment, a subtopic judged twice, topic prefixes, unjudged
documents, tie-heavy scores, the odd line ndeval rejects), runs the binary with random
options (-alpha, -beta, -traditional, -c, -M, -baseline, -riskAlpha) and compares its stdout
byte for byte with what ``qafast ndeval`` prints, and its failures with qafast's. It prints
the number of mismatches and exits 1 if there is any.
"""

import argparse
import os
import random
import subprocess
import sys
import tempfile


def _case(rng: random.Random):
    topics = rng.sample([1, 2, 3, 7, 10, 51], rng.randint(1, 4))
    docs = [f"d{i}" for i in range(rng.randint(2, 12))] + ["D1", "clueweb09-en0000-00-00000"]
    q = []
    for t in set(topics + [rng.choice([4, 5])]):
        subtopics = rng.randint(1, 6)
        for _ in range(rng.randint(1, 14)):
            q.append(f"{t} {rng.randint(0 if rng.random() < 0.3 else 1, subtopics)} "
                     f"{rng.choice(docs)} {rng.choice(['0', '0', '1', '1', '1', '2', '3'])}"
                     f"{rng.choice(['', '', chr(13)])}")
    rng.shuffle(q)
    if rng.random() < 0.02:
        q.insert(rng.randint(0, len(q)), "1 1 d1 -1")  # a judgment ndeval rejects

    def run(tag):
        lines = []
        for t in topics:
            chosen = rng.sample(docs, rng.randint(1, len(docs)))
            ranks = rng.sample(range(1, 40), len(chosen))
            if rng.random() < 0.03:
                ranks[-1] = ranks[0]  # a duplicate rank
            for doc, rank in zip(chosen, ranks):
                prefix = rng.choice(["", "", "", "wt09-"])
                score = rng.choice(["1", "2", "0.5", "2.0", "3", "-1"])
                lines.append(f"{prefix}{t}{rng.choice([' ', chr(9)])}Q0 {doc} {rank} {score} "
                             f"{tag}{rng.choice(['', '', chr(13)])}")
        rng.shuffle(lines)
        if rng.random() < 0.02:
            lines.insert(rng.randint(0, len(lines)), "1 Q0 d1 x 1 r")  # a rank that is no number
        return lines

    return q, run(rng.choice(["run", "bm25", "r-1"])), run("base")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--cases", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        paths = {n: os.path.join(tmp, n) for n in ("qrels", "run", "base")}
        for case in range(args.cases):
            q, r, b = _case(rng)
            for name, lines in zip(("qrels", "run", "base"), (q, r, b)):
                with open(paths[name], "w", encoding="latin-1", newline="") as f:
                    f.write("\n".join(lines) + ("\n" if rng.random() < 0.9 else ""))
            opts = []
            if rng.random() < 0.3:
                opts += ["-alpha", rng.choice(["0", "0.25", "0.5", "0.9", "1"])]
            if rng.random() < 0.3:
                opts += ["-beta", rng.choice(["0", "0.3", "0.5", "0.8", "1"])]
            if rng.random() < 0.3:
                opts += ["-M", rng.choice(["1", "3", "10", "25"])]
            if rng.random() < 0.3:
                opts += ["-baseline", paths["base"]]
                if rng.random() < 0.7:
                    opts += ["-riskAlpha", rng.choice(["0", "0.5", "1", "2.0"])]
            if rng.random() < 0.3:
                opts.append("-traditional")
            if rng.random() < 0.4:
                opts.append("-c")
            c = subprocess.run([args.binary, *opts, paths["qrels"], paths["run"]],
                               check=False, capture_output=True)
            ours = subprocess.run([sys.executable, "-m", "qafast", "ndeval", *opts,
                                   paths["qrels"], paths["run"]], check=False,
                                  capture_output=True)
            if c.returncode != 0 or ours.returncode != 0:
                if (c.returncode == 0) != (ours.returncode == 0):
                    bad += 1
                    print(f"case {case} {opts}: ndeval exit {c.returncode}, qafast exit "
                          f"{ours.returncode}\n{c.stderr.decode(errors='replace')}"
                          f"{ours.stderr.decode(errors='replace')}")
                continue
            if ours.stdout != c.stdout:
                bad += 1
                if bad <= 5:
                    print(f"case {case} {opts}\n--- ndeval\n{c.stdout.decode('latin-1')}"
                          f"--- qafast\n{ours.stdout.decode('latin-1')}"
                          f"{ours.stderr.decode(errors='replace')}")
    print(f"{args.cases} cases, {bad} mismatches")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
