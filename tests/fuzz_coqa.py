"""Differential check of qafast.coqa against the official CoQA script (not collected by pytest).

    python tests/fuzz_coqa.py [N] [--hostile] [--script .../evaluate-v1.0.py]

For N seeded adversarial data/prediction files: every turn's exact match and F1 from the
script's own ``get_raw_scores`` / ``get_raw_scores_human`` against ``qafast.coqa_per_turn``
and ``qafast.reference.coqa`` (bit for bit), and the stdout of the script against ``qafast
coqa`` (byte for byte, with and without ``--human``). With ``--hostile`` the files are also
malformed the ways the script reads without noticing or crashes on (non-string answers,
unknown or unhashable sources, odd turn ids, stories without questions, missing fields): where
the script prints, qafast prints the same; where it fails, qafast raises a qafast error and
the command fails. Prints the number of mismatches.
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
         "Mar. 3", "1999", "\t", "", "ǅ", "ﬁ", "Ω", "a\u0301", "twenty-one", "21", "21st",
         "March 3, 1999", "3/3/1999", "1999-03-03", "three", "3", "3.0", "½", "Ⅻ", "٣"]
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


ODD = [0, 3, 2.5, True, None, [], ["a"], {}, {"input_text": "a"}]


def _break(rng: random.Random, stories: list, preds: list) -> None:
    r, s = rng.random(), rng.choice(stories)
    if r < 0.2 and s["answers"]:                # a non-string gold answer
        lst = rng.choice([s["answers"], *s["additional_answers"].values()])
        if lst:
            rng.choice(lst)["input_text"] = rng.choice(ODD)
    elif r < 0.35:                              # a source the script does not know
        s["source"] = rng.choice(["bogus", "CNN", "", 7, None, ["cnn"], {"x": 1}])
        if rng.random() < 0.5:
            s["questions"] = []
    elif r < 0.45:                              # a story without questions, odd lists
        stories.append({"id": rng.choice(["s0", "s1", "new"]),
                        "source": rng.choice(SOURCES + ["bogus", ["x"]]),
                        "questions": rng.choice([[], [], {}, "", 0]),
                        "answers": rng.choice([[], "xx", 3, {}]),
                        "additional_answers": rng.choice([{}, {"0": 3}, {"1": "x"}])})
    elif r < 0.6 and s["questions"]:            # turn ids of other types
        q = rng.choice(s["questions"])
        q["turn_id"] = rng.choice([1, 1.0, True, "1", None, float("nan"), 0, -1, 1e300])
    elif r < 0.68 and s["answers"]:             # an answer entry missing a field
        e = rng.choice(s["answers"])
        e.pop(rng.choice(["turn_id", "input_text"]), None)
    elif r < 0.72:                              # a story missing a field
        s.pop(rng.choice(["id", "source", "questions", "answers", "additional_answers"]),
              None)
    elif r < 0.76:
        s["additional_answers"] = list(s["additional_answers"].values())
    elif r < 0.9 and preds:                     # a prediction of another type or key
        p = rng.choice(preds)
        field = rng.choice(["answer", "answer", "id", "turn_id"])
        p[field] = rng.choice(ODD + [1, "1", 1.0])
        if rng.random() < 0.3:
            preds.append({"id": "nowhere", "turn_id": 1, "answer": rng.choice(ODD)})
    elif r < 0.95 and preds:
        rng.choice(preds).pop(rng.choice(["id", "turn_id", "answer"]), None)
    else:
        s["id"] = rng.choice([7, None, 1.5, True, ["s0"]])


def hostile(rng: random.Random, data: dict, preds: list):
    """``make_case``'s files broken in a few of the ways a hand-made file is."""
    stories = data["data"]
    for _ in range(rng.randint(1, 3)):
        try:
            _break(rng, stories, preds)
        except (AttributeError, IndexError, KeyError, TypeError):
            pass   # an earlier change left nothing of that shape
    if rng.random() < 0.03:
        return data, {"id": "s0"}
    if rng.random() < 0.03:
        return {"stories": stories}, preds
    return data, preds


def run_script(script: str, argv: list) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, script, *argv], capture_output=True, text=True,
                          check=False)


def hostile_case(case: int, args, dpath: str, ppath: str) -> int:
    """The script's stdout against qafast's where it prints; a qafast error where it fails."""
    rng = random.Random(args.seed * 1_000_003 + case)
    data, preds = hostile(rng, *make_case(rng))
    with open(dpath, "w", encoding="utf-8") as f:
        json.dump(data, f)
    with open(ppath, "w", encoding="utf-8") as f:
        json.dump(preds, f)
    bad = 0
    for extra in ([], ["--human"]):
        argv = ["--data-file", dpath, "--pred-file", ppath, *extra]
        proc = run_script(args.script, argv)
        try:
            rc, out = qafast_stdout(["coqa", *argv])
        except Exception as e:  # noqa: BLE001 - anything escaping the command is a mismatch
            rc, out = None, f"{type(e).__name__}: {e}"
        if proc.returncode == 0:
            same = rc == 0 and out == proc.stdout
        elif "answer['turn_id']" in proc.stderr:
            # the script reads an answer's turn_id only to warn about it, and fails without
            # one; qafast does not need it (docs/known-differences.md): either outcome is fine
            same = rc is not None
        else:   # what the script printed before failing, then a failure
            same = rc not in (0, None) and proc.stdout.startswith(out)
        for fn, fargs in ((qafast.coqa_human, (dpath,)) if extra else
                          (qafast.coqa, (dpath, ppath)),):
            try:
                fn(*fargs)
            except qafast.errors.QafastError:
                pass
            except Exception as e:  # noqa: BLE001
                same = False
                out += f"\n{fn.__name__} raised {type(e).__name__}: {e}"
        if not same:
            bad += 1
            print(f"case {case} {extra}: script rc {proc.returncode}, qafast rc {rc}\n"
                  f"  script: {proc.stdout[:200]!r} {proc.stderr[-200:]!r}\n  qafast: {out[:300]!r}")
    return bad


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
    ap.add_argument("--hostile", action="store_true",
                    help="malformed files: compare the printed output and the failures")
    args = ap.parse_args()
    official = load_script(args.script)
    mismatches = 0
    with tempfile.TemporaryDirectory() as tmp:
        dpath, ppath = os.path.join(tmp, "data.json"), os.path.join(tmp, "pred.json")
        for case in range(args.n):
            if args.hostile:
                mismatches += hostile_case(case, args, dpath, ppath)
                continue
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
