"""Differential fuzzing of ``qafast cwl`` against ``cwl-eval`` (the cwl-eval package, 1.0.12),
run by hand:

    PYTHONPATH=src python tests/fuzz_cwl.py [--command cwl-eval] [--cases N] [--seed S]

Each case writes a random qrels file (gains 0, 1, fractions, a document judged twice, some
out of range), a run (documents in random order, unjudged ones, topics missing from the
qrels, a topic that comes back after another, duplicate documents, tabs, ``\\r\\n``), now and
then a cost file and a metrics file, runs the unmodified ``cwl-eval`` with random options
(``-n``, ``-r``, ``--max_depth``, ``--max_gain``, ``--max_cost``, ``--min_cost``) in a scratch
folder and compares its stdout byte for byte with what :func:`qafast.cwl_eval.cwl` returns,
and its failures with qafast's errors. It prints the number of mismatches and exits 1 if any.
"""

import argparse
import os
import random
import subprocess
import sys
import tempfile

from qafast.cwl_eval import cwl
from qafast.errors import QafastError

METRICS = ["PrecisionCWLMetric(1)", "PrecisionCWLMetric(3)", "PrecisionCWLMetric(10)",
           "RBPCWLMetric(0.5)", "RBPCWLMetric(0.95)", "RBPCWLMetric()", "NDCGCWLMetric(3)",
           "NDCGCWLMetric(20)", "RRCWLMetric()", "APCWLMetric()", "INSTCWLMetric(1)",
           "INSTCWLMetric(2.5)", "INSQCWLMetric(1)", "INSQCWLMetric(0.3)"]


def _case(rng: random.Random, folder: str):
    topics = [str(t) for t in rng.sample([1, 2, 3, 10, 301, 4], rng.randint(1, 4))]
    docs = [f"d{i}" for i in range(15)]
    gains = ["0", "1", "1", "0.5", "0.25", "1.0", "0.3333"]
    q = []
    for t in topics + ["77"]:
        if rng.random() < 0.15:
            continue  # a topic the qrels lack
        for _ in range(rng.randint(0, 10)):
            q.append(f"{t}{rng.choice([' ', chr(9)])}0 {rng.choice(docs)} {rng.choice(gains)}")
    if rng.random() < 0.03:
        q.append(f"{topics[0]} 0 d1 2")  # above --max_gain 1: an error
    rng.shuffle(q)
    r = []
    order = topics + ([topics[0]] if rng.random() < 0.1 else [])
    for t in order:
        for _ in range(rng.randint(1, 14)):
            r.append(f"{t} {rng.choice(['Q0', 'Q0', 'snippet', 'doc'])} {rng.choice(docs)} "
                     f"{rng.randint(1, 99)} {rng.random():.3f} run{rng.choice(['', '', chr(13)])}")
    options = []
    if rng.random() < 0.3:
        options.append("-n")
    if rng.random() < 0.5:
        options.append("-r")
    options += ["--max_depth", str(rng.choice([1, 3, 5, 10, 20, 50]))]
    if rng.random() < 0.2:
        options += ["--max_gain", rng.choice(["1.0", "2", "0.5"])]
    if rng.random() < 0.2:
        options += ["--max_cost", rng.choice(["2", "1.5"])]
    if rng.random() < 0.2:
        options += ["--min_cost", rng.choice(["0.5", "1"])]
    files = {"q": "\n".join(q) + "\n", "r": "\n".join(r) + "\n"}
    if rng.random() < 0.3:
        files["c"] = "Q0 1.0\nsnippet 0.5\ndoc 3\n"
        options += ["-c", "c"]
    if rng.random() < 0.5:
        files["m"] = "\n".join(rng.sample(METRICS, rng.randint(1, 6))) + "\n"
        options += ["-m", "m"]
    for name, text in files.items():
        with open(os.path.join(folder, name), "w", newline="") as f:
            f.write(text)
    return options


def _qafast(folder: str, options: list) -> str:
    def value(flag, kind, default):
        return kind(options[options.index(flag) + 1]) if flag in options else default

    join = os.path.join
    return cwl(join(folder, "q"), join(folder, "r"),
               costs=join(folder, "c") if "-c" in options else None,
               metrics=join(folder, "m") if "-m" in options else None,
               colnames="-n" in options, residuals="-r" in options,
               max_gain=value("--max_gain", float, 1.0), max_cost=value("--max_cost", float, 1.0),
               min_cost=value("--min_cost", float, 1.0), max_depth=value("--max_depth", int, 1000))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--command", default="cwl-eval")
    ap.add_argument("--cases", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    mismatches = 0
    for case in range(args.cases):
        with tempfile.TemporaryDirectory() as folder:
            options = _case(rng, folder)
            oracle = subprocess.run([args.command, "q", "r", *options], cwd=folder,
                                    capture_output=True, text=True)
            try:
                mine, error = _qafast(folder, options), None
            except QafastError as e:
                mine, error = None, e
            if oracle.returncode != 0 or error is not None:
                if (oracle.returncode != 0) != (error is not None):
                    mismatches += 1
                    print(f"case {case} {options}: cwl-eval rc {oracle.returncode}, qafast {error!r}")
            elif oracle.stdout != mine:
                mismatches += 1
                print(f"case {case} {options}: output differs")
                if mismatches <= 3:
                    for a, b in zip(oracle.stdout.splitlines(), mine.splitlines()):
                        if a != b:
                            print(f"  cwl-eval: {a}\n  qafast:   {b}")
                            break
    print(f"{args.cases} cases, {mismatches} mismatches")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
