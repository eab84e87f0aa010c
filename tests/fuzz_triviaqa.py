"""Differential check of qafast.triviaqa against the official TriviaQA script (not collected by
pytest).

    python tests/fuzz_triviaqa.py [N] [--hostile] [--oracle /work/scratch/oracles/triviaqa]

For N seeded adversarial dataset/prediction files (Wikipedia and web domains, verified sets,
repeated keys, human answers, punctuation, articles, underscores, Unicode, empty and missing
predictions; the dataset file written in any JSON layout, a key escaped or given twice): the
script's stdout (its ``em=0:`` lines and its dict) and stderr against
``qafast triviaqa`` byte for byte, and ``qafast.triviaqa`` against
``qafast.reference.triviaqa`` bit for bit. The script runs unmodified from the oracle
directory (its ``utils`` package on PYTHONPATH). With ``--hostile`` the files are also
malformed (non-string answers, missing fields, pages without a verified one; a dataset file
that is not JSON): where the script
prints, qafast prints the same; where it fails, the command fails with a qafast error. Prints
the number of mismatches.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import re
import subprocess
import sys
import tempfile

import qafast
from qafast import cli
from qafast.reference import triviaqa as ref

WORDS = ["the", "a", "an", "The", "A", "An", "sunset", "Sunset", "blvd", "Blvd.", "boulevard",
         "rock-n-roll", "rock_n_roll", "rock", "n", "roll", "‘quoted’", "it’s", "it's", "´",
         "`x`", "café", "CAFÉ", "ß", "İstanbul", "東京", "–", "the.", "(the)", "...", "_",
         "\u00a0", "\u2003", "x", "U.S.", "5", "five", "1,000", "ǅ", "ﬁ", "Ω", "a\u0301",
         "an_", "_the_", "a-", "\t", "", "\"", "\\", "'", "Paris", "paris,", "France"]


def text(rng: random.Random) -> str:
    if rng.random() < 0.08:
        return ""
    return rng.choice(["", " "]).join(rng.choice(WORDS) for _ in range(rng.randint(1, 5)))


def make_case(rng: random.Random, hostile: bool):
    domain = rng.choice(["Wikipedia", "Web", "Web", "Other"])
    verified = rng.random() < 0.4
    qids = [f"q{i}" for i in range(rng.randint(1, 8))]
    data = []
    for _ in range(rng.randint(1, 10)):
        answer = {"NormalizedAliases": [text(rng) for _ in range(rng.randint(1, 4))],
                  "NormalizedValue": "x"}
        if rng.random() < 0.3:
            answer["HumanAnswers"] = [text(rng) for _ in range(rng.randint(0, 3))]
        q = {"QuestionId": rng.choice(qids), "Answer": answer,
             "QuestionPartOfVerifiedEval": rng.random() < 0.7}
        for part in ("EntityPages", "SearchResults"):
            if rng.random() < 0.8:
                q[part] = [{"Filename": f"{rng.choice('abc')}.txt",
                            "DocPartOfVerifiedEval": rng.random() < 0.7}
                           for _ in range(rng.randint(0, 3))]
        if verified and domain == "Web" and q["QuestionPartOfVerifiedEval"] and not hostile:
            q.setdefault("SearchResults", []).append(
                {"Filename": "v.txt", "DocPartOfVerifiedEval": True})
        if hostile:
            r = rng.random()
            if r < 0.05:
                answer["NormalizedAliases"].append(rng.choice([3, None, ["x"]]))
            elif r < 0.08:
                answer["NormalizedAliases"] = []
            elif r < 0.1:
                del q["Answer"]
        data.append(q)
    dataset = {"Version": rng.choice([1.0, 1.0, 1, 2.0, "1.0"]), "Domain": domain,
               "VerifiedEval": verified, "Data": data}
    keys = list(ref.key_answers(dataset)) if not hostile else []
    if hostile:
        with contextlib.suppress(Exception):
            keys = list(ref.key_answers(dataset))
    preds: dict = {}
    for k in keys:
        if rng.random() < 0.8:
            preds[k] = text(rng) if rng.random() < 0.7 else rng.choice(
                dataset["Data"][0].get("Answer", {}).get("NormalizedAliases", ["x"]) or ["x"])
            if hostile and rng.random() < 0.03:
                preds[k] = rng.choice([1, None, ["a"]])
    for _ in range(rng.randint(0, 2)):
        preds[f"extra{rng.randint(0, 9)}"] = text(rng)
    return dataset, preds


_DUPLICATED = {"QuestionId": '"dup"', "Answer": '{"NormalizedAliases": ["dup"]}',
               "NormalizedAliases": '["dup"]', "HumanAnswers": '["dup"]', "Data": "[]",
               "QuestionPartOfVerifiedEval": "true", "Filename": '"dup.txt"'}


def dataset_bytes(dataset: dict, rng: random.Random, hostile: bool) -> bytes:
    """The dataset as a file in one of the ways JSON is written (ASCII or not, indented or
    not, tight or loose separators, CRLF lines), a key written with an escape or given twice
    now and then (valid JSON that json.loads reads its way); with ``hostile``, sometimes not
    JSON at all (a BOM, a raw control character, bytes that are not UTF-8, NaN, a cut)."""
    indent = rng.choice([None, None, 1, "\t"])
    seps = rng.choice([None, (",", ":"), (" , ", " : ")])
    text = json.dumps(dataset, ensure_ascii=rng.random() < 0.5, indent=indent, separators=seps)
    if indent is not None and rng.random() < 0.3:
        text = text.replace("\n", "\r\n")
    r = rng.random()
    key = rng.choice(sorted(_DUPLICATED))
    if r < 0.15:   # a key written with an escape: the same key once read
        text = text.replace(f'"{key}"', f'"{key[:-1]}\\u{ord(key[-1]):04x}"', rng.randint(1, 3))
    elif r < 0.3:   # a key given twice: json.loads keeps the last value, where the first was
        text = re.sub(f'"{key}"(\\s*):(\\s*)', lambda m: f'"{key}": {_DUPLICATED[key]}, '
                      f'"{key}"{m.group(1)}:{m.group(2)}', text, count=rng.randint(1, 3))
    raw = text.encode("utf-8")
    if hostile and rng.random() < 0.2:
        cut = rng.randrange(len(raw))
        raw = rng.choice([b"\xef\xbb\xbf" + raw, raw[:cut], raw[:cut] + b"\xff" + raw[cut:],
                          raw.replace(b'"x"', b'"\x01"', 1), raw.replace(b"true", b"NaN", 1),
                          raw.replace(b"1.0", b"1" * 5000, 1), raw + b" x"])
    return raw


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("n", nargs="?", type=int, default=200)
    ap.add_argument("--oracle", default="/work/scratch/oracles/triviaqa")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--hostile", action="store_true")
    args = ap.parse_args()
    script = os.path.join(args.oracle, "evaluation", "triviaqa_evaluation.py")
    env = dict(os.environ, PYTHONPATH=args.oracle, PYTHONIOENCODING="utf-8")
    mismatches = crashes = 0
    with tempfile.TemporaryDirectory() as tmp:
        dpath, ppath = os.path.join(tmp, "data.json"), os.path.join(tmp, "pred.json")
        for i in range(args.n):
            rng = random.Random(args.seed * 1_000_003 + i)
            dataset, preds = make_case(rng, args.hostile)
            raw = dataset_bytes(dataset, rng, args.hostile)
            with open(dpath, "wb") as f:
                f.write(raw)
            with open(ppath, "w", encoding="utf-8") as f:
                json.dump(preds, f)
            argv = ["--dataset_file", dpath, "--prediction_file", ppath]
            proc = subprocess.run([sys.executable, script, *argv], capture_output=True,
                                  text=True, encoding="utf-8", env=env)
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    rc = cli.main(["triviaqa", *argv])
                except qafast.QafastError as e:
                    rc, _ = 2, err.write(str(e))
            if proc.returncode != 0:
                crashes += 1
                if rc == 0:
                    mismatches += 1
                    print(f"case {i}: the script failed, qafast printed\n{proc.stderr[-300:]}")
                continue
            if (rc, out.getvalue(), err.getvalue()) != (0, proc.stdout, proc.stderr):
                mismatches += 1
                print(f"case {i}: output differs\n--- script\n{proc.stdout}{proc.stderr}"
                      f"--- qafast (rc {rc})\n{out.getvalue()}{err.getvalue()}")
                continue
            spec = ref.triviaqa(dataset, preds)
            if qafast.triviaqa(dataset, preds) != spec:
                mismatches += 1
                print(f"case {i}: the function differs from the specification")
            # the file as the script read it (a hostile one may differ from `dataset`)
            if qafast.triviaqa(dpath, preds) != ref.triviaqa(json.loads(raw.decode()), preds):
                mismatches += 1
                print(f"case {i}: the function reading the file differs from the "
                      "specification")
    print(f"{args.n} cases, {crashes} where the script failed, {mismatches} mismatches")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
