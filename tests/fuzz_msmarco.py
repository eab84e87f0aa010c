"""Differential check of qafast.msmarco_passage against the official ``ms_marco_eval.py`` (not
collected by pytest).

    python tests/fuzz_msmarco.py [N] [--script /work/scratch/oracles/msmarco_passage/ms_marco_eval.py]

For N seeded adversarial reference/candidate files (queries apart and together, repeated
pids and slots, ranks 0, above 10 and out of range, pid 0 relevant, signs, spaces, ``_`` in
numbers, Unicode digits, blank lines, CRLF, extra columns, 20-digit ids; with ``--hostile``
also reference lines with such fields, tabs at an end, too few columns): the script's stdout
against ``qafast msmarco-passage`` byte for byte, and ``qafast.msmarco_passage`` against
``qafast.reference.msmarco``. Where the script fails, qafast must fail with a qafast error.
Prints the number of mismatches.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import random
import subprocess
import sys
import tempfile
import warnings

import qafast
from qafast import cli

ODD = [" 7", "+7", "0_7", "٧", "-3", "7 ", "x", "", "99999999999999999999", "007"]


def num(rng: random.Random, lo: int, hi: int, odd: float) -> str:
    if rng.random() < odd:
        return rng.choice(ODD)
    return str(rng.randint(lo, hi))


def make_case(rng: random.Random, hostile: bool):
    odd = 0.02 if hostile else 0.0
    qids = list(range(rng.randint(1, 6)))
    ref = []
    for q in qids:
        for _ in range(rng.randint(1, 3)):
            ref.append(f"{q}\t0\t{rng.randint(0, 12)}\t1")
    cand = []
    together = rng.random() < 0.7
    order = sorted(qids + [9]) if together else [rng.choice(qids + [9]) for _ in range(8)]
    for q in order:
        for r in range(1, rng.randint(1, 14)):
            rank = r if rng.random() < 0.9 else rng.choice([0, 11, 1000, 999, r, -1])
            if hostile and rng.random() < 0.02:
                rank = rng.choice([1001, -999, -1000])
            fields = [num(rng, q, q, odd), num(rng, 0, 15, odd), num(rng, rank, rank, odd)]
            if rng.random() < 0.2:
                fields.append(rng.choice(["1.5", "run", "x\ty"]))
            cand.append("\t".join(fields))
    if hostile and rng.random() < 0.1:
        cand.insert(rng.randint(0, len(cand)), "")
    end = rng.choice(["\n", "\r\n"])
    if hostile:
        # drawn after the rest, so that a seed's other draws stay those of earlier versions
        for k in range(len(ref)):
            if rng.random() < 0.1:
                q, _, p, _ = ref[k].split("\t")
                ref[k] = rng.choice([f"{num(rng, 0, 5, 0.5)}\t0\t{num(rng, 0, 12, 0.5)}\t1",
                                     f"\t{q}\t0\t{p}", f"{q}\t0\t{p}\t", f"{q}\t\t{p}",
                                     f"{q}\t0", f"{q}\t0\t{p}\t1\t", f" {q}\t0\t{p}\t1",
                                     "", "\t"])
    return end.join(ref) + end, end.join(cand) + rng.choice([end, ""])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("n", nargs="?", type=int, default=300)
    ap.add_argument("--script",
                    default="/work/scratch/oracles/msmarco_passage/ms_marco_eval.py")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--hostile", action="store_true")
    args = ap.parse_args()
    mismatches = crashes = 0
    with tempfile.TemporaryDirectory() as tmp:
        rpath, cpath = os.path.join(tmp, "ref.tsv"), os.path.join(tmp, "cand.tsv")
        for i in range(args.n):
            rng = random.Random(args.seed * 1_000_003 + i)
            ref_text, cand_text = make_case(rng, args.hostile)
            for path, text in ((rpath, ref_text), (cpath, cand_text)):
                with open(path, "w", encoding="utf-8", newline="") as f:
                    f.write(text)
            proc = subprocess.run([sys.executable, args.script, rpath, cpath],
                                  capture_output=True, text=True, encoding="utf-8")
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    rc = cli.main(["msmarco-passage", rpath, cpath])
                except qafast.QafastError:
                    rc = 2
            if proc.returncode != 0:
                crashes += 1
                if rc == 0 or not proc.stdout.startswith(out.getvalue()):
                    mismatches += 1
                    print(f"case {i}: the script failed, qafast printed {out.getvalue()!r}")
                continue
            if rc != 0 or out.getvalue() != proc.stdout:
                mismatches += 1
                print(f"case {i}: output differs\n--- script\n{proc.stdout}--- qafast (rc "
                      f"{rc})\n{out.getvalue()}{err.getvalue()}")
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                got = qafast.msmarco_passage(cpath.encode() and rpath, cand_text.encode())
            if f"MRR @10: {got['MRR @10']}\n" not in proc.stdout:
                mismatches += 1
                print(f"case {i}: the function differs from the script")
    print(f"{args.n} cases, {crashes} where the script failed, {mismatches} mismatches")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
