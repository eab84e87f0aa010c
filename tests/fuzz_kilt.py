"""Differential fuzzing of ``qafast kilt-retrieval`` (and, with ``--downstream``, ``qafast kilt``)
against the unmodified official KILT scripts.

Run by hand (not collected by pytest)::

    PYTHONPATH=src python tests/fuzz_kilt.py --oracle /work/scratch/oracles/kilt --seeds 0-49

``--oracle`` is a directory holding the unmodified ``kilt`` package files (``kilt/__init__.py``,
``kilt_utils.py``, ``eval_retrieval.py``, ``eval_downstream.py``) of facebookresearch/KILT;
the ``rouge`` and ``nltk`` packages must be installed. Each seed writes random adversarial
guess/gold JSON-lines files, runs ``python -m kilt.eval_retrieval`` and ``qafast
kilt-retrieval`` on them and compares stdout byte for byte, and compares each question's
numbers with the script's ``get_ranking_metrics``. Prints the mismatch count.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import io
import json
import os
import random
import subprocess
import sys
import tempfile

WORDS = ["the", "a", "an", "Paris", "paris!", "Éclair", "tower", "1,000", "x", "İ", "of",
         "An", "THE", "foo-bar", "«b»", "\u00a0", "  ", ".", "'s", "Tom's"]
PAGES = ["1", "2", "3", " 4", "4 ", "5", "12"]


def text(rng, n=None) -> str:
    n = rng.randint(0, 5) if n is None else n
    return rng.choice(["", " "]).join(rng.choice(WORDS) for _ in range(n))


def provenance(rng, ptitles) -> dict:
    p: dict = {}
    if rng.random() < 0.93:
        p["wikipedia_id"] = rng.choice(PAGES) if rng.random() < 0.9 else rng.choice([4, 12, None])
    if rng.random() < 0.8:
        p["start_paragraph_id"] = rng.choice([1, 2, 3, "2"])
    if rng.random() < 0.7:
        p["title"] = rng.choice(ptitles)
    if rng.random() < 0.7:
        p["text"] = text(rng, rng.randint(0, 12))
    return p


def question(rng, i: int) -> tuple[dict, dict]:
    qid = f"q{i}"
    ptitles = [text(rng, rng.randint(0, 2)) for _ in range(3)] + [""]
    gold_outputs = []
    for _ in range(rng.choice([1, 1, 2, 3])):
        o: dict = {}
        if rng.random() < 0.8:
            o["answer"] = text(rng, rng.randint(0, 3))
        if rng.random() < 0.85:
            o["provenance"] = [provenance(rng, ptitles) for _ in range(rng.choice([0, 1, 1, 2, 3]))]
        gold_outputs.append(o)
    gold = {"id": rng.choice([qid, f" {qid}", i]) if rng.random() < 0.1 else qid,
            "input": text(rng, rng.randint(0, 8)) + " " + rng.choice(ptitles),
            "output": gold_outputs}
    guess_outputs = [{"answer": text(rng, 2),
                      "provenance": [provenance(rng, ptitles)
                                     for _ in range(rng.choice([0, 1, 2, 4, 8, 12]))]}]
    if rng.random() < 0.2:
        guess_outputs.insert(rng.randint(0, 1), {"answer": "extra"})
    guess = {"id": qid if rng.random() < 0.9 else f"{qid} ", "output": guess_outputs}
    return gold, guess


def write(path: str, records: list) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(json.dumps(r, ensure_ascii=random.random() < 0.5) + "\n" for r in records)


def run_seed(seed: int, oracle: str, tmp: str) -> int:
    rng = random.Random(seed)
    n = rng.randint(0, 30)
    pairs = [question(rng, i) for i in range(n)]
    gold = [g for g, _ in pairs]
    guess = [q for _, q in pairs]
    rng.shuffle(guess)
    if rng.random() < 0.3:
        guess.append({"id": "extra", "output": [{"provenance": []}]})
    ks = rng.choice(["1,5,10,20", "1", "3,1", "2,2,5", "1,2,3,4,5,6,7,8,9,10,11,12"])
    rank_keys = rng.choice(["wikipedia_id", "wikipedia_id,start_paragraph_id", "title"])
    gp, qp = os.path.join(tmp, "gold.jsonl"), os.path.join(tmp, "guess.jsonl")
    write(gp, gold)
    write(qp, guess)
    args = [qp, gp, "--ks", ks, "--rank_keys", rank_keys]
    env = dict(os.environ, PYTHONPATH=oracle)
    want = subprocess.run([sys.executable, "-m", "kilt.eval_retrieval", *args], env=env,
                          capture_output=True, text=True, check=False)
    got = subprocess.run([sys.executable, "-m", "qafast", "kilt-retrieval", *args],
                         capture_output=True, text=True, check=False)
    bad = 0
    if want.returncode != 0:
        if got.returncode == 0:
            print(f"seed {seed}: script failed, qafast did not: {want.stderr.splitlines()[-1]}")
            bad += 1
    elif want.stdout != got.stdout:
        print(f"seed {seed}: stdout differs\n--- script\n{want.stdout}--- qafast\n{got.stdout}"
              f"{got.stderr}")
        bad += 1
    if want.returncode == 0:
        bad += per_question(seed, gold, guess, ks, rank_keys, oracle)
    return bad


def per_question(seed, gold, guess, ks, rank_keys, oracle) -> int:
    sys.path.insert(0, oracle)
    from kilt import (
        eval_downstream,
        eval_retrieval,  # the unmodified script
    )

    import qafast
    ks_l = sorted(int(k) for k in ks.split(","))
    keys_l = rank_keys.split(",")
    with contextlib.redirect_stdout(io.StringIO()):   # its size warning, compared above
        gold_r, guess_r = eval_downstream.validate_input(copy.deepcopy(gold),
                                                         copy.deepcopy(guess))
    guess_r = eval_retrieval.filter_answers(guess_r)
    rows = qafast.kilt_retrieval(guess, gold, ks=ks_l, rank_keys=keys_l, per_question=True)
    bad = 0
    for i, (gq, gd) in enumerate(zip(guess_r, gold_r)):
        want = eval_retrieval.get_ranking_metrics(gq, gd, ks_l, keys_l)
        for key in rows:
            if key != "id" and float(want[key]) != rows[key][i]:
                print(f"seed {seed} question {gd['id']!r} {key}: script {want[key]} "
                      f"qafast {rows[key][i]}")
                bad += 1
    return bad


ANSWERS = ["Paris", "paris.", "The Tower", "tower of Paris", "a.b.c", "x y x", "İ", "1,000",
           "..", " . ", "Tom's  tower", "the", "é a é"]


def run_downstream_seed(seed: int, oracle: str, tmp: str) -> int:
    """``kilt/eval_downstream.py`` against ``qafast kilt``: stdout and per question."""
    rng = random.Random(seed)
    pairs = [question(rng, i) for i in range(rng.randint(0, 25))]
    gold = [g for g, _ in pairs]
    guess = []
    for g, q in pairs:
        for o in g["output"]:
            if rng.random() < 0.7:
                o["answer"] = rng.choice(ANSWERS) + rng.choice(["", " ", ". x"])
        if not any(o.get("answer", "").strip() for o in g["output"]):
            g["output"][0]["answer"] = rng.choice(ANSWERS[:8])
        out = {"answer": rng.choice(ANSWERS + [text(rng), "", " ", 5])
               if rng.random() < 0.95 else rng.choice([None, 1.5])}
        if rng.random() < 0.8:
            out["provenance"] = next(o for o in q["output"] if "provenance" in o)["provenance"]
            if rng.random() < 0.4:   # the gold's own pages: R-precision 1
                out["provenance"] = [p for o in g["output"] for p in o.get("provenance", [])]
        guess.append({"id": q["id"], "output": [out]})
    rng.shuffle(guess)
    gp, qp = os.path.join(tmp, "gold.jsonl"), os.path.join(tmp, "guess.jsonl")
    write(gp, gold)
    write(qp, guess)
    env = dict(os.environ, PYTHONPATH=oracle)
    want = subprocess.run([sys.executable, "-m", "kilt.eval_downstream", qp, gp], env=env,
                          capture_output=True, text=True, check=False)
    got = subprocess.run([sys.executable, "-m", "qafast", "kilt", qp, gp],
                         capture_output=True, text=True, check=False)
    if want.returncode != 0:
        if got.returncode == 0:
            print(f"seed {seed}: script failed, qafast did not: {want.stderr.splitlines()[-1]}")
            return 1
        return 0
    if want.stdout != got.stdout:
        print(f"seed {seed}: stdout differs\n--- script\n{want.stdout}--- qafast\n{got.stdout}"
              f"{got.stderr}")
        return 1
    return 0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--oracle", required=True)
    ap.add_argument("--seeds", default="0-49")
    ap.add_argument("--downstream", action="store_true",
                    help="compare qafast kilt with eval_downstream.py instead")
    a = ap.parse_args()
    lo, hi = (int(x) for x in a.seeds.split("-"))
    mismatches = 0
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(lo, hi + 1):
            run = run_downstream_seed if a.downstream else run_seed
            mismatches += run(seed, os.path.abspath(a.oracle), tmp)
    print(f"mismatches: {mismatches} over seeds {lo}-{hi}")


if __name__ == "__main__":
    main()
