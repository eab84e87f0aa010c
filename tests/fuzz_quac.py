"""Differential check of qafast.quac against QuAC's official scorer.py (not collected by pytest).

Generates seeded adversarial gold and model-output files (Unicode, punctuation, articles,
CANNOTANSWER golds and predictions, empty and missing predictions, duplicate ids, dialogs of
one turn, many golds, lines that mix dialogs), then compares

* each question's human F1, model F1 and overlap kind with the script's own functions, bit
  for bit, and ``qafast.reference.quac`` with both;
* ``qafast quac`` with ``python scorer.py`` run unmodified: stdout byte for byte, the ``--o``
  JSON; where the script stops with a traceback, its stdout must begin ours.

Usage: ``python tests/fuzz_quac.py [N] [--oracle /path/to/scorer.py]``; prints the number of
mismatches and exits 1 if there is any.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import random
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "src"))

import qafast
from qafast.reference import quac as ref

ORACLE = "/work/scratch/oracles/quac/scorer.py"

WORDS = ["the", "a", "an", "The", "An", "cat", "dog", "Paris", "1968", "two", "books", "café",
         "naïve", "Straße", "ÉCOLE", "東京", "données", "'s", "--", "(1972)", "U.S.", "co-op",
         "e.g.,", "\u00a0", "ﬁ", "İstanbul", "ǅ", "x²", "CANNOTANSWER", "cannotanswer", "…",
         "don't", "\u2028", "tab\tbed", "Ω", "a.", "the.", "an,", "yes", "no", "ab", "b",
         "twenty", "20", "1,000", "one thousand", "May 5, 1990", "5/5/1990", "1990s", "3.14",
         "-7", "½", "٣", "first", "1st"]


def _text(rng: random.Random, lo: int = 1, hi: int = 8) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(lo, hi)))


def _sub(rng: random.Random, context: str) -> str:
    if not context:
        return ""
    i = rng.randrange(len(context))
    j = min(len(context), i + rng.randint(0, 40))
    return context[i:j]


def make_case(rng: random.Random):
    """(gold object, model-output text, options)."""
    data = []
    lines = []
    used_dialogs: list = []
    for _ in range(rng.randint(1, 3)):
        paragraphs = []
        for _ in range(rng.randint(1, 4)):
            if used_dialogs and rng.random() < 0.08:
                did = rng.choice(used_dialogs)           # a duplicate dialog id
            else:
                did = f"C_{rng.randrange(10**6):x}_{rng.randint(0, 1)}"
            used_dialogs.append(did)
            context = _text(rng, 5, 40) + " CANNOTANSWER"
            qas = []
            n_turns = 1 if rng.random() < 0.3 else rng.randint(1, 6)
            for t in range(n_turns):
                qid = f"{did}_q#{t}" if rng.random() > 0.06 or not qas else qas[-1]["id"]
                n_golds = rng.choice([0, 1, 1, 2, 3, 4, 5, 8]) if rng.random() < 0.97 else 12
                answers = []
                for _ in range(n_golds):
                    r = rng.random()
                    if r < 0.25:
                        answers.append({"text": "CANNOTANSWER"})
                    elif r < 0.7:
                        answers.append({"text": _sub(rng, context)})
                    elif r < 0.95:
                        answers.append({"text": _text(rng)})
                    else:
                        answers.append({"text": ""})
                qas.append({"id": qid, "answers": answers,
                            "yesno": rng.choice("ynx"), "followup": rng.choice("ynm")})
            paragraphs.append({"id": did, "context": context, "qas": qas})
            # the dialog's predictions: one line, sometimes split, sometimes missing
            if rng.random() < 0.1:
                continue
            qids, spans, yesnos, followups = [], [], [], []
            for qa in qas:
                if rng.random() < 0.1:
                    continue
                r = rng.random()
                if r < 0.15:
                    span = "CANNOTANSWER"
                elif r < 0.2:
                    span = ""
                elif r < 0.6 and qa["answers"]:
                    span = rng.choice(qa["answers"])["text"]
                    if rng.random() < 0.5:
                        span = span.upper() if rng.random() < 0.5 else span + rng.choice(
                            [".", " the", ",", "!"])
                elif r < 0.85:
                    span = _sub(rng, context)
                else:
                    span = _text(rng)
                qids.append(qa["id"])
                spans.append(span)
                yesnos.append(rng.choice("ynx"))
                followups.append(rng.choice("ynm"))
            if not qids:
                continue
            cut = rng.randint(1, len(qids)) if rng.random() < 0.3 else len(qids)
            for a, b in ((0, cut), (cut, len(qids))):
                if a < b:
                    lines.append({"qid": qids[a:b], "best_span_str": spans[a:b],
                                  "yesno": yesnos[a:b], "followup": followups[a:b]})
        data.append({"paragraphs": paragraphs})
    rng.shuffle(lines)
    if len(lines) > 1 and rng.random() < 0.1:
        # a line mixing two dialogs: all its questions go to the first one's dialog
        a, b = lines[0], lines.pop(1)
        for k in a:
            a[k] = a[k] + b[k]
    text_lines = [json.dumps(x, ensure_ascii=rng.random() < 0.5) for x in lines]
    for _ in range(rng.randint(0, 2)):
        text_lines.insert(rng.randint(0, len(text_lines)), rng.choice(["", "   ", "\t"]))
    sep = rng.choice(["\n", "\n", "\r\n"])
    output = sep.join(text_lines) + (sep if rng.random() < 0.7 else "")
    options = {"min_f1": rng.choice([None, None, "0.4", "0", "0.6", "1.0", "0.25", "nan"]),
               "verbose": rng.random() < 0.3}
    return {"data": data}, output, options


def _load_oracle(path: str):
    spec = importlib.util.spec_from_file_location("quac_scorer", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _bits(x) -> str:
    return "None" if x is None else float(x).hex()


def check_questions(oracle, gold: dict, output: str, min_f1: float) -> list:
    """Per-question mismatches between qafast, the reference and the script's functions."""
    problems = []
    preds = ref.read_predictions(output)
    rows = qafast.quac(gold, _records(output), min_f1=min_f1, per_question=True)
    spec = ref.evaluate(gold["data"], preds, min_f1)
    i = 0
    for article in gold["data"]:
        for par in article["paragraphs"]:
            for qa in par["qas"]:
                golds = oracle.handle_cannot([a["text"] for a in qa["answers"]])
                hf1 = oracle.leave_one_out(golds)
                want_f1 = want_kind = None
                p = preds.get(par["id"], {}).get(qa["id"])
                if p is not None:
                    want_kind = oracle.metric_max_over_ground_truths(p[0], golds,
                                                                     par["context"])[0]
                    want_f1 = oracle.leave_one_out_max(p[0], golds, par["context"])
                got_f1 = rows["f1"][i]
                got_f1 = None if math.isnan(got_f1) else got_f1
                row = spec["questions"][i]
                checks = [("human", _bits(hf1), _bits(rows["human_f1"][i])),
                          ("f1", _bits(want_f1), _bits(got_f1)),
                          ("kind", want_kind or "NO ANSWER", rows["kind"][i]),
                          ("ref human", _bits(hf1), _bits(row["human_f1"])),
                          ("ref f1", _bits(want_f1), _bits(row["f1"])),
                          ("ref kind", want_kind or "NO ANSWER", row["kind"])]
                for what, want, got in checks:
                    if want != got:
                        problems.append(f"question {i} ({qa['id']}): {what} {want} != {got}")
                i += 1
    return problems


def _records(output: str) -> list:
    return [json.loads(line.strip()) for line in output.replace("\r\n", "\n").split("\n")
            if line.strip()]


def run_case(oracle_path: str, gold: dict, output: str, options: dict, tmp: str) -> list:
    val_path = os.path.join(tmp, "val.json")
    out_path = os.path.join(tmp, "model_output.jsonl")
    with open(val_path, "w", encoding="utf-8") as f:
        json.dump(gold, f, ensure_ascii=False)
    with open(out_path, "w", encoding="utf-8", newline="") as f:
        f.write(output)
    argv = ["--val_file", val_path, "--model_output", out_path]
    if options["min_f1"] is not None:
        argv += ["--min_f1", options["min_f1"]]
    if options["verbose"]:
        argv.append("--verbose")
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    script = subprocess.run([sys.executable, oracle_path, *argv, "--o",
                             os.path.join(tmp, "script.json")], capture_output=True, env=env,
                            check=False)
    ours = subprocess.run([sys.executable, "-m", "qafast", "quac", *argv, "--o",
                           os.path.join(tmp, "ours.json")], capture_output=True, check=False, env=dict(
                               env, PYTHONPATH=os.path.join(HERE, "..", "src")))
    problems = []
    if ours.returncode != 0:
        return [f"qafast failed: {ours.stderr.decode(errors='replace')[-500:]}"]
    if script.returncode == 0:
        if script.stdout != ours.stdout:
            problems.append("stdout differs:\n--- script\n" + script.stdout.decode(
                errors="replace")[-1500:] + "\n--- qafast\n" + ours.stdout.decode(
                errors="replace")[-1500:])
        with open(os.path.join(tmp, "script.json"), "rb") as f:
            want = f.read()
        with open(os.path.join(tmp, "ours.json"), "rb") as f:
            got = f.read()
        if want != got:
            problems.append(f"--o differs: {want!r} != {got!r}")
    elif b"ZeroDivisionError" not in script.stderr:
        problems.append("the script failed otherwise: " + script.stderr.decode()[-300:])
    elif not ours.stdout.startswith(script.stdout):
        problems.append("the script's partial stdout does not begin ours")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", nargs="?", type=int, default=200)
    parser.add_argument("--seed", type=int, default=34)
    parser.add_argument("--oracle", default=ORACLE)
    args = parser.parse_args()
    oracle = _load_oracle(args.oracle)
    mismatches = crashed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(args.n):
            rng = random.Random(args.seed * 1_000_003 + k)
            gold, output, options = make_case(rng)
            min_f1 = float(options["min_f1"]) if options["min_f1"] is not None else 0.4
            problems = check_questions(oracle, gold, output, min_f1)
            problems += run_case(args.oracle, gold, output, options, tmp)
            if problems:
                mismatches += 1
                print(f"case {k}: " + "\n  ".join(problems[:5]))
            if not os.path.exists(os.path.join(tmp, "script.json")):
                crashed += 1
            else:
                os.remove(os.path.join(tmp, "script.json"))
    print(f"{args.n} cases ({crashed} where the script stops with a traceback): "
          f"{mismatches} mismatches")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
