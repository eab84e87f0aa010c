"""Differential fuzzing of ``qafast gdeval`` against gdeval.pl (version 1.3), run by hand:

    PYTHONPATH=src python tests/fuzz_gdeval.py --script /path/to/gdeval.pl [--cases N] [--seed S]

Each case writes a random qrels file, run and baseline (tie-heavy scores, duplicate documents,
topic prefixes, tabs and \\r line ends, judgments from -2 to 4 and some the script rejects,
scores Perl reads oddly: ``abc``, ``12abc``, ``.5``, ``1e0``, ``inf``, long mantissas), runs the
unmodified script with random options (-c, -k, -baseline, -riskAlpha) and compares its stdout
byte for byte with what ``qafast gdeval`` prints, and its failures with qafast's errors. It
prints the number of mismatches and exits 1 if there is any.
"""

import argparse
import os
import random
import subprocess
import sys
import tempfile

SCORES = ["1", "2", "0.5", "1e0", "abc", "12abc", "-1", "inf", "-inf", "-0", "0", ".5", "3.",
          "0.30000000000000004", "0.1000000000000000055511151231257827", "1e-320", "+2",
          "7.0E1", "1_000"]


def _case(rng: random.Random):
    topics = [str(rng.choice([1, 2, 3, 7, 10, 51, 201])) for _ in range(rng.randint(1, 4))]
    if rng.random() < 0.1:
        topics = ["0" + t for t in topics]  # one spelling everywhere
    docs = [f"d{i}" for i in range(12)] + ["clueweb09-en0000-00-00000", "d\u00e9".encode().decode("latin-1"), "D1"]
    q = []
    for t in set(topics + [str(rng.choice([4, 5]))]):
        for _ in range(rng.randint(0, 10)):
            grade = rng.choice(["-2", "-1", "0", "1", "1", "2", "3", "4", "02"]
                               + (["5"] if rng.random() < 0.02 else []))
            q.append(f"{rng.choice(['', 'WT-', 'a-b-'])}{t}{rng.choice([' ', chr(9)])}"
                     f"{rng.choice(['0', 'Q0', '0.0'] + (['1'] if rng.random() < 0.02 else []))}"
                     f" {rng.choice(docs)} {grade}{rng.choice(['', '', chr(13)])}")
    rng.shuffle(q)

    def run(tag):
        lines = []
        for t in topics:
            for _ in range(rng.randint(0, 15)):
                lines.append(f"{t} Q0 {rng.choice(docs)} {rng.randint(0, 99)} "
                             f"{rng.choice(SCORES)} {tag}{rng.choice(['', '', chr(13)])}")
        rng.shuffle(lines)
        if rng.random() < 0.02:
            lines.insert(rng.randint(0, len(lines)), "1 Q0 d1 x 1 r")  # a rank that is no number
        return lines

    return q, run(rng.choice(["run", "bm25", "r-1"])), run("base")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--script", required=True)
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
                    f.write("\n".join(lines) + ("\n" if lines and rng.random() < 0.9 else ""))
            opts = []
            if rng.random() < 0.5:
                opts.append("-c")
            if rng.random() < 0.6:
                k = rng.choice(["1", "2", "3", "5", "10", "20", "100"])
                opts += ["-k", k]
            if rng.random() < 0.4:
                opts += ["-baseline", paths["base"]]
                if rng.random() < 0.7:
                    opts += ["-riskAlpha", rng.choice(["0", "0.5", "1", "2.0", "5"])]
            perl = subprocess.run(["perl", args.script, *opts, paths["qrels"], paths["run"]],
                                  check=False, capture_output=True)
            ours = subprocess.run([sys.executable, "-m", "qafast", "gdeval", *opts,
                                   paths["qrels"], paths["run"]], check=False, capture_output=True)
            if perl.returncode != 0:
                if ours.returncode == 0:
                    bad += 1
                    print(f"case {case}: gdeval.pl failed, qafast did not: {opts}\n"
                          f"{perl.stderr.decode(errors='replace')}")
                continue
            if ours.stdout != perl.stdout:
                bad += 1
                if bad <= 5:
                    print(f"case {case} {opts}\n--- gdeval.pl\n{perl.stdout.decode('latin-1')}"
                          f"--- qafast\n{ours.stdout.decode('latin-1')}"
                          f"{ours.stderr.decode(errors='replace')}")
    print(f"{args.cases} cases, {bad} mismatches")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
