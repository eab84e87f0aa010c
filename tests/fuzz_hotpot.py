"""Differential test of qafast.hotpot against the official hotpot_evaluate_v1.py (not collected
by pytest: run it by hand).

    python tests/fuzz_hotpot.py [--script PATH] [--cases N] [--seed S] [--subprocess-every K]

For each of N seeded adversarial cases (Unicode, punctuation, articles, yes/no/noanswer on
either side, numbers, empty strings, missing answers and facts, duplicate and unknown ids,
duplicate facts, sentence ids as ints, floats, bools and strings, facts of odd shapes, gold
fields missing where they are not read, values the script crashes on), it writes a gold and a
prediction file and compares:

* per question, the official ``update_answer`` and ``update_sp`` values with qafast's
  ``per_question=True`` rows and the specification's, to the last bit;
* the official script's stdout (imported and run in-process on the files; every K-th case also
  run as ``python hotpot_evaluate_v1.py PRED GOLD``) with ``qafast hotpot PRED GOLD``, byte for
  byte. Where the script crashes, qafast must raise a QafastError (the command: exit 2).

Prints the number of cases, crashes agreed on, and mismatches (0 expected). Needs the
script (fetched unmodified from the hotpotqa/hotpot repository) and ujson, which it imports.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import math
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

import numpy as np

import qafast.hotpot_eval
from qafast.cli import main as qafast_main
from qafast.errors import QafastError
from qafast.reference import hotpot as spec

DEFAULT_SCRIPT = "/work/scratch/oracles/hotpot/hotpot_evaluate_v1.py"

WORDS = ["Paris", "the", "The", "a", "A", "an", "An", "yes", "Yes", "YES", "no", "No",
         "noanswer", "NoAnswer", "no answer", "Eiffel", "tower", "Tower!", "1889", "1,000",
         "3.5", "twenty", "20", "café", "Café", "İstanbul", "straße", "STRASSE", "ﬁle", "Ωmega",
         "北京", "大学", "ＦＵＬＬ", "naïve", "x", "don't", "dont", "e.g.", "U.S.", "—",
         "“quoted”", "(paren)", "a-b", "rock'n'roll", "🙂", "٣", "Ⅻ", "σς", "Σ", "ǅ", "_", "%",
         "March 3, 2001", "3/3/2001", "the the", "an an", "yes.", "no!", "noanswer?"]
SPACES = [" ", " ", " ", "  ", "\t", "\n", "\u00a0", "\u2003", "\u3000", ""]
TITLES = ["Paris", "paris", "Eiffel Tower", "", "İ", "Straße", "北京", "A", "a", " A", "Tëst"]


def rand_text(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.08:
        return ""
    if r < 0.25:
        return rng.choice(["yes", "no", "noanswer", "Yes", "NO.", " no ", "No Answer",
                           "noanswer!", "yes yes", "the yes", "a no"])
    n = rng.randint(1, 6)
    out = []
    for _ in range(n):
        out.append(rng.choice(WORDS))
        out.append(rng.choice(SPACES) if rng.random() < 0.3 else " ")
    return "".join(out).strip() if rng.random() < 0.7 else "".join(out)


def rand_sid(rng: random.Random):
    r = rng.random()
    if r < 0.75:
        return rng.randint(0, 3)
    return rng.choice([1.0, 0.0, True, False, "1", "0", -1, 2 ** 40, 2 ** 70, 1.5, None,
                       float("nan")])


def rand_fact(rng: random.Random):
    r = rng.random()
    if r < 0.9:
        return [rng.choice(TITLES), rand_sid(rng)]
    if r < 0.997:      # odd, but each makes a hashable tuple
        return rng.choice([[rng.choice(TITLES)], [rng.choice(TITLES), 0, 1], "ab", [],
                           [0, "A"], [None, None], {"A": 0}])
    return rng.choice([["A", [0]], ["A", {"k": 1}], 7])      # the script's TypeError


def rand_facts(rng: random.Random, hard: bool):
    n = rng.choice([0, 1, 2, 2, 3, 4, 6])
    facts = [rand_fact(rng) if hard else [rng.choice(TITLES), rng.randint(0, 3)]
             for _ in range(n)]
    if facts and rng.random() < 0.3:
        dup = rng.choice(facts)
        facts.append(list(dup) if isinstance(dup, list) else dup)
    if rng.random() < 0.03:
        return rng.choice(["x", "", {"A": 0}, {}])
    if rng.random() < 0.002:
        return rng.choice([None, 5])
    return facts


def make_case(rng: random.Random):
    n = rng.choice([1, 1, 2, 3, 5, 8, 20, 50])
    hard = rng.random() < 0.3          # facts of odd forms (the Python-set path)
    crashy = rng.random() < 0.08       # values the script crashes on
    ids = []
    for i in range(n):
        r = rng.random()
        if ids and r < 0.1:
            ids.append(rng.choice(ids))                     # duplicate id
        elif r < 0.15:
            ids.append(rng.choice(["é", "id with space", "北", "", "5a8b57f25542995d1e6f1371"]))
        else:
            ids.append(f"q{i}")
    gold = []
    answers: dict = {}
    facts: dict = {}
    for qid in ids:
        entry: dict = {"_id": qid, "answer": rand_text(rng),
                       "supporting_facts": rand_facts(rng, hard)}
        if rng.random() < 0.1:
            entry["type"] = "comparison"
            entry["context"] = [["T", ["s1", "s2"]]]
        if rng.random() < 0.7:
            answers[qid] = rand_text(rng)
        if rng.random() < 0.7:
            facts[qid] = rand_facts(rng, hard)
        gold.append(entry)
    for entry in gold:             # fields never read (no prediction) may be missing
        if entry["_id"] not in answers and rng.random() < 0.3:
            del entry["answer"]
        if entry["_id"] not in facts and rng.random() < 0.3:
            del entry["supporting_facts"]
    for extra in range(rng.choice([0, 0, 1, 3])):
        answers[f"unknown{extra}"] = rand_text(rng)
        facts[f"unknown{extra}"] = rand_facts(rng, False)
    if crashy and gold:
        k = rng.randrange(len(gold))
        what = rng.randrange(5)
        qid = gold[k]["_id"]
        if what == 0:
            answers[qid] = rng.choice([None, 5, ["x"]])
        elif what == 1:
            answers[qid] = "x"
            gold[k]["answer"] = rng.choice([None, 3, ["x"]])
        elif what == 2:
            answers[qid] = "x"
            gold[k].pop("answer", None)
        elif what == 3:
            facts[qid] = [["A", 0]]
            gold[k].pop("supporting_facts", None)
        else:
            gold[k]["_id"] = rng.choice([7, None, ["q"]])
    pred = {"answer": answers, "sp": facts}
    if rng.random() < 0.02:
        pred = rng.choice([{"answer": answers}, {"sp": facts}, []])
    if rng.random() < 0.01:
        gold = []
    return gold, pred


def load_script(path: str):
    spec_ = importlib.util.spec_from_file_location("hotpot_evaluate_v1", path)
    module = importlib.util.module_from_spec(spec_)
    spec_.loader.exec_module(module)
    return module


def script_stdout(script, pred_path: str, gold_path: str):
    """(stdout, crashed) of the official eval, run in this process."""
    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf):
            script.eval(pred_path, gold_path)
    except Exception:  # noqa: BLE001 - any crash of the script's is a crash to match
        return buf.getvalue(), True
    return buf.getvalue(), False


def qafast_stdout(pred_path: str, gold_path: str):
    buf, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(err):
        rc = qafast_main(["hotpot", pred_path, gold_path])
    return buf.getvalue(), rc


def same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b and (a != 0 or math.copysign(1, a) == math.copysign(1, b))


def per_question_check(script, gold, pred, rows) -> list:
    """Mismatches between the official per-question values and qafast's rows."""
    bad = []
    answers, facts = pred["answer"], pred["sp"]
    ref_rows, _ = spec.per_question(gold, pred)
    for i, entry in enumerate(gold):
        qid = entry["_id"]
        want: dict = {}
        if qid in answers:
            m = dict.fromkeys(("em", "f1", "prec", "recall"), 0)
            script.update_answer(m, answers[qid], entry["answer"])
            want.update({k: float(v) for k, v in m.items()})
        if qid in facts:
            m = dict.fromkeys(("sp_em", "sp_f1", "sp_prec", "sp_recall"), 0)
            script.update_sp(m, facts[qid], entry["supporting_facts"])
            want.update({k: float(v) for k, v in m.items()})
        for k in spec.KEYS[:8]:
            got = float(rows[k][i])
            exp = want.get(k, float("nan"))
            if not same(got, exp):
                bad.append((i, k, got, exp))
            if k in ref_rows[i] and not same(float(ref_rows[i][k]), exp):
                bad.append((i, "spec " + k, ref_rows[i][k], exp))
        for k in spec.KEYS[8:]:
            exp = float(ref_rows[i].get(k, float("nan")))
            if not same(float(rows[k][i]), exp):
                bad.append((i, k, float(rows[k][i]), exp))
    return bad


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--script", default=DEFAULT_SCRIPT)
    ap.add_argument("--cases", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--subprocess-every", type=int, default=50)
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    script = load_script(args.script)
    rng = random.Random(args.seed)
    mismatches = crashes = 0
    env = dict(os.environ, PYTHONIOENCODING="utf-8", PYTHONPATH=str(HERE.parent / "src"))
    with tempfile.TemporaryDirectory() as tmp:
        pred_path, gold_path = os.path.join(tmp, "pred.json"), os.path.join(tmp, "gold.json")
        for case in range(args.cases):
            gold, pred = make_case(rng)
            ascii_only = rng.random() < 0.5
            with open(pred_path, "w", encoding="utf-8") as f:
                json.dump(pred, f, ensure_ascii=ascii_only)
            with open(gold_path, "w", encoding="utf-8") as f:
                json.dump(gold, f, ensure_ascii=ascii_only, indent=rng.choice([None, 1]))
            want, crashed = script_stdout(script, pred_path, gold_path)
            got, rc = qafast_stdout(pred_path, gold_path)
            problem = None
            if crashed:
                crashes += 1
                if rc != 2:
                    problem = f"script crashed, qafast exit {rc}"
                else:
                    try:
                        qafast.hotpot_eval.hotpot(gold_path, pred_path)
                        problem = "script crashed, qafast.hotpot returned"
                    except QafastError:
                        pass
            elif got != want or rc != 0:
                problem = f"stdout differs (rc {rc}):\n  script {want!r}\n  qafast {got!r}"
            else:
                # read as the script reads them (ujson: each NaN a new float)
                g = qafast.hotpot_eval.read_json(gold_path, "gold")
                p = qafast.hotpot_eval.read_json(pred_path, "predictions")
                rows = qafast.hotpot_eval.hotpot(g, p, per_question=True)
                bad = per_question_check(script, g, p, rows)
                if bad:
                    problem = f"per-question values differ: {bad[:3]}"
                means = qafast.hotpot_eval.hotpot(g, p)
                if str(means) != want.splitlines()[-1] or spec.evaluate(g, p) != means:
                    problem = f"means differ: {means} / {want.splitlines()[-1]}"
            if not problem and args.subprocess_every and case % args.subprocess_every == 0:
                proc = subprocess.run([sys.executable, args.script, pred_path, gold_path],
                                      check=False, capture_output=True, env=env)
                cli = subprocess.run([sys.executable, "-m", "qafast", "hotpot", pred_path,
                                      gold_path], check=False,
                                     capture_output=True, env=env)
                if proc.returncode == 0 and proc.stdout != cli.stdout:
                    problem = "subprocess stdout differs"
                elif proc.returncode != 0 and cli.returncode != 2:
                    problem = f"script exit {proc.returncode}, qafast exit {cli.returncode}"
            if problem:
                mismatches += 1
                if args.verbose or mismatches <= 5:
                    print(f"case {case}: {problem}", file=sys.stderr)
    print(f"hotpot: {args.cases} cases, {crashes} script crashes matched by qafast errors, "
          f"{mismatches} mismatches")
    return 1 if mismatches else 0


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.exit(main())
