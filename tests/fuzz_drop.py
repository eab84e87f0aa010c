"""Differential test of ``qafast drop`` against AllenAI's ``drop_eval.py``, run unmodified.

Not collected by pytest. Each case is a seeded random gold file and prediction file full of
what trips DROP's rules (numbers in words and digits, decimals, signs, exponents, "nan",
non-ASCII digits, dates with empty fields, multi-span answers, articles, punctuation,
Unicode, empty and missing predictions, lists and strings, duplicate ids). The script and
``qafast drop`` are run on the same files; their stdout must be byte for byte the same, and
every question's (EM, F1) from ``qafast.drop_per_question`` must equal the script's
``get_metrics`` maxima computed question by question. Prints the mismatch count.

    python tests/fuzz_drop.py [--cases N] [--seed S] [--script PATH]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import subprocess
import sys
import tempfile

SCRIPT = "/work/scratch/oracles/drop/drop_eval.py"

WORDS = [
    "the", "a", "an", "The", "An", "Eagles", "touchdown", "field", "goal", "yards", "five",
    "Five", "twenty-one", "5", "5.0", "05", "-5", "\u22125", "3.14", "1,000", "1e3", "1E-7",
    "nan", "NaN", "inf", "Infinity", "-inf", "\u0663", "\uff15", "1_000", "\u00bd", "1/2",
    "\u0130stanbul", "caf\u00e9", "na\u00efve", "Z\u00fcrich", "\u5317\u4eac", "", " ",
    "yards.", "(12)", "'s", "12-yard", "Jan.", "March", "1990", "1990s", "first", "2nd",
    "\t", "\u00a0", "don't", "U.S.", ".5", "+3", "-0", "0.0", "5%", "$5", "10th", "4.",
    "1e400", "0x10", "\u2013", "\u201cquoted\u201d", "\u00df", "!!!", "-", "--", "e", "1e",
    "12", "12.0", "7", "seven", "1,234.5", "3-4", "2019-01-02", "\u0665\u0660",
]
MONTHS = ["", "January", "March", "Sept.", "may", "12", "1"]


def _span(rng: random.Random) -> str:
    n = rng.choice([1, 1, 1, 2, 2, 3, 4])
    sep = rng.choice([" ", " ", "-", "  ", " - "])
    return sep.join(rng.choice(WORDS) for _ in range(n))


def _gold_answer(rng: random.Random) -> dict:
    answer = {"number": "", "date": {"day": "", "month": "", "year": ""}, "spans": []}
    kind = rng.random()
    if kind < 0.3:
        answer["number"] = rng.choice(["5", "12", "3.5", "0", "-3", "1,000", "1e3", "five",
                                       "7", "12.0", str(rng.randint(0, 99))])
    elif kind < 0.55:
        answer["spans"] = [_span(rng)]
    elif kind < 0.75:
        answer["spans"] = [_span(rng) for _ in range(rng.randint(2, 4))]
    elif kind < 0.92:
        answer["date"] = {"day": rng.choice(["", "1", "15", "3rd"]),
                          "month": rng.choice(MONTHS),
                          "year": rng.choice(["", "1990", "2001", "90"])}
    return answer


def _prediction(rng: random.Random, gold: dict):
    r = rng.random()
    if r < 0.25:  # close to the gold answer
        strings = (gold["spans"] or [gold["number"] or " ".join(
            str(v) for v in gold["date"].values())])
        strings = [s if rng.random() < 0.7 else s.upper() + rng.choice(["", ".", " the"])
                   for s in strings]
        if rng.random() < 0.3:
            rng.shuffle(strings)
        return strings if (len(strings) > 1 or rng.random() < 0.3) else strings[0]
    if r < 0.35:
        return ""
    if r < 0.4:
        return []
    if r < 0.7:
        return _span(rng)
    return [_span(rng) for _ in range(rng.randint(1, 5))]


def _blank(answer: dict) -> bool:
    if answer["number"]:
        return False
    if answer["spans"]:
        return answer["spans"][0].strip() == ""
    return " ".join(answer["date"].values()).strip() == ""


def make_case(rng: random.Random, questions: int, *, blank_types: bool = True):
    """(gold dict, prediction JSON text, prediction dict as json.loads reads it)."""
    gold: dict = {}
    ids = []
    first_answer: dict = {}
    q = 0
    while q < questions:
        passage = {"passage": "...", "qa_pairs": []}
        for _ in range(rng.randint(1, 4)):
            if ids and rng.random() < 0.03:
                qid = rng.choice(ids)          # a duplicated id
            else:
                qid = f"q{q}-" + rng.choice(["", "\u00e9", "x"])
            ids.append(qid)
            answer = _gold_answer(rng)
            first_answer.setdefault(qid, answer)
            if not blank_types and _blank(answer):
                answer["number"] = "3"
            pair = {"question": "?", "answer": answer, "query_id": qid}
            if rng.random() < 0.5:
                pair["validated_answers"] = [_gold_answer(rng)
                                             for _ in range(rng.randint(0, 3))]
            passage["qa_pairs"].append(pair)
            q += 1
        gold[f"p{len(gold)}" + rng.choice(["", "_\u5317"])] = passage
    items = []
    for qid in ids:
        if rng.random() < 0.1:
            continue                            # missing
        items.append((qid, _prediction(rng, first_answer[qid])))
        if rng.random() < 0.03:                 # the same id twice: the last one counts
            items.append((qid, _prediction(rng, first_answer[qid])))
    if rng.random() < 0.5:
        items.append(("not-in-gold", "x"))
    rng.shuffle(items)
    text = "{" + ", ".join(json.dumps(k, ensure_ascii=rng.random() < 0.5) + ": "
                           + json.dumps(v, ensure_ascii=rng.random() < 0.5)
                           for k, v in items) + "}"
    return gold, text, json.loads(text)


def _script_questions(script, gold: dict, predictions: dict) -> list:
    """Each question's (EM, F1) by the script's own functions, as its evaluate_json takes
    them (the maxima over kept gold answers)."""
    out = []
    for passage in gold.values():
        for pair in passage["qa_pairs"]:
            qid = pair["query_id"]
            if qid not in predictions:
                out.append((0.0, 0.0))
                continue
            best_em = best_f1 = 0.0
            for answer in [pair["answer"]] + (pair.get("validated_answers") or []):
                strings, _ = script.answer_json_to_strings(answer)
                em, f1 = script.get_metrics(predictions[qid], strings)
                if strings[0].strip() != "":
                    best_em, best_f1 = max(best_em, em), max(best_f1, f1)
            out.append((float(best_em), float(best_f1)))
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--questions", type=int, default=40)
    parser.add_argument("--script", default=SCRIPT)
    args = parser.parse_args(argv)
    import importlib.util

    import qafast
    spec = importlib.util.spec_from_file_location("drop_eval", args.script)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    mismatches = crashes = 0
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    with tempfile.TemporaryDirectory() as tmp:
        g_path, p_path = os.path.join(tmp, "gold.json"), os.path.join(tmp, "pred.json")
        o1, o2 = os.path.join(tmp, "o1.json"), os.path.join(tmp, "o2.json")
        for case in range(args.cases):
            rng = random.Random(args.seed * 1_000_003 + case)
            gold, text, predictions = make_case(rng, rng.randint(0, args.questions),
                                                blank_types=rng.random() < 0.2)
            with open(g_path, "w", encoding="utf-8") as f:
                json.dump(gold, f, ensure_ascii=rng.random() < 0.5)
            with open(p_path, "w", encoding="utf-8") as f:
                f.write(text)
            ran = subprocess.run([sys.executable, args.script, "--gold_path", g_path,
                                  "--prediction_path", p_path, "--output_path", o1],
                                 check=False, capture_output=True, env=env)
            ours = subprocess.run([sys.executable, "-m", "qafast", "drop", "--gold_path",
                                   g_path, "--prediction_path", p_path, "--output_path", o2],
                                  check=False, capture_output=True, env=env)
            bad = []
            if ours.returncode != 0:
                bad.append(f"qafast exited {ours.returncode}: {ours.stderr.decode()[-300:]}")
            elif ran.returncode != 0:
                # the script crashed (a None type beside named ones): what it printed must
                # be the start of what qafast prints
                crashes += 1
                if not ours.stdout.startswith(ran.stdout):
                    bad.append("stdout differs before the script's crash")
            else:
                if ours.stdout != ran.stdout:
                    bad.append("stdout differs")
                with open(o1, "rb") as f1, open(o2, "rb") as f2:
                    if f1.read() != f2.read():
                        bad.append("--output_path file differs")
            mine = qafast.drop_per_question(gold, predictions)
            theirs = _script_questions(script, gold, predictions)
            for k, (em, f1) in enumerate(theirs):
                got = (float(mine["exact_match"][k]), float(mine["f1"][k]))
                if got != (em, f1) and not (math.isnan(f1) and math.isnan(got[1])):
                    bad.append(f"question {k}: qafast {got}, script {(em, f1)}")
                    break
            if bad:
                mismatches += 1
                print(f"case {case}: " + "; ".join(bad))
    print(f"{args.cases} cases ({crashes} where the script crashed), {mismatches} mismatches")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
