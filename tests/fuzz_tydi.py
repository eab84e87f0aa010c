"""Differential test of ``qafast tydi`` against the official ``tydi_eval.py``, unmodified.

Not collected by pytest. Usage::

    python tests/fuzz_tydi.py [N] [--oracle DIR] [--seed S]

``DIR`` holds ``tydi_eval.py`` and ``eval_utils.py`` from google-research-datasets/tydiqa
(default ``/work/scratch/oracles/tydi``; needs ``absl-py``). Each seeded case writes adversarial
gold and prediction files (multi-byte text and offsets inside characters, null spans, yes/no
answers, missing and repeated ids, several languages, tied and odd scores, int and string ids,
non-null thresholds 0-3) and checks:

* per example and language, the script's ``score_answers`` statistics (its own functions,
  imported) against qafast's, in the script's sorted order, bit for bit;
* stdout of ``qafast tydi`` against the script run as a program, byte for byte. Where the
  script fails, qafast must fail with a qafast error too, except in the ``--pretty_print``
  tables, where qafast prints a threshold the script cannot format (its stdout so far must be
  a prefix of qafast's), and in its per-example log, which cannot slice the document at float
  offsets (qafast must then print what the script prints with ``--noverbose``).

Both run with the same ``PYTHONHASHSEED`` (string ids are visited in ``set`` order). Prints the
mismatch count; exits 1 if any.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import io
import json
import os
import random
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "src"))

LANGS = ["english", "arabic", "bengali", "finnish", "indonesian", "japanese", "swahili",
         "korean", "russian", "telugu", "thai", "klingon", "English"]
TEXTS = ["", "abc", "naïve café", "日本語のテキスト", "emoji 🎉🎉 mix", "ক্ষ বাংলা", "Ελληνικά"]


def _span(rng, null_rate=0.3):
    if rng.random() < null_rate:
        return -1, -1
    s = rng.randint(0, 12)
    if rng.random() < 0.03:
        return s + 0.5, s + rng.choice([0.5, 3, 4.25])  # the script takes JSON floats too
    return s, s + (0 if rng.random() < 0.03 else rng.choice([1, 1, 2, 3, 5, 8]))


def _score(rng, odd):
    # odd scores (a numeric string, True, infinities, NaN) send the file through json.loads
    if odd and rng.random() < 0.2:
        return rng.choice(["3", "1e3", True, float("inf"), -float("inf"), float("nan")])
    return rng.choice([0, 0.0, -0.0, 1, 1.0, 2.5, 2.5, 3, 7.25, -1, 1e308, 0.1, 0.2,
                       0.30000000000000004, 1 / 3, 10 ** 17 + 1, 1e-320])


def make_case(rng):
    n = rng.randint(1, 25)
    kind = rng.choice(["int", "str", "mixed"] if rng.random() < 0.1 else ["int", "str"])
    langs = rng.sample(LANGS, rng.randint(1, 5))

    def an_id(i):
        if kind == "int" or (kind == "mixed" and i % 2):
            return rng.choice([i, -2226525965842375672 + i, 10 ** 18 + i])
        return rng.choice([f"q{i}", f"ид{i}", f"例{i}"])

    ids = [an_id(i) for i in range(n)]
    odd = rng.random() < 0.3
    gold = []
    for eid in ids + (rng.sample(ids, 2) if rng.random() < 0.2 and n > 2 else []):
        anns = []
        for _ in range(rng.choice([1, 2, 3, 3, 3, 5])):
            s, e = _span(rng)
            yn = rng.choice(["NONE"] * 6 + ["YES", "NO", "yes", "Maybe"])
            if yn.lower() != "none" and rng.random() < 0.7:
                s, e = -1, -1
            anns.append({"passage_answer": {"candidate_index": rng.choice([-1, 0, 1, 2, 3])},
                         "minimal_answer": {"plaintext_start_byte": s, "plaintext_end_byte": e},
                         "yes_no_answer": yn})
        gold.append({"example_id": eid, "language": rng.choice(langs),
                     "question_text": rng.choice(TEXTS), "document_plaintext": rng.choice(TEXTS),
                     "annotations": anns})
    preds = []
    for eid in ids:
        if rng.random() < 0.15:
            continue  # missing prediction
        p = {"example_id": eid, "language": rng.choice(langs) if rng.random() < 0.2
             else next(g["language"] for g in gold if g["example_id"] == eid),
             "passage_answer_score": _score(rng, odd), "minimal_answer_score": _score(rng, odd)}
        if rng.random() < 0.9:
            p["passage_answer_index"] = rng.choice([-1, 0, 1, 2, 3])
        if rng.random() < 0.92 or not preds:
            s, e = _span(rng, 0.25)
            p["minimal_answer"] = {"start_byte_offset": s, "end_byte_offset": e}
        if rng.random() < 0.3:
            span = p.get("minimal_answer")
            if span is not None and span["start_byte_offset"] < 0:
                p["yes_no_answer"] = rng.choice(["YES", "no", "NONE"])
            else:
                p["yes_no_answer"] = rng.choice(["NONE", "none"])
        preds.append(p)
    if preds and rng.random() < 0.15:
        preds.append(dict(rng.choice(preds), passage_answer_score=_score(rng, odd)))  # repeated id
    if rng.random() < 0.1:
        preds.append({"example_id": "unknown", "language": rng.choice(langs),
                      "passage_answer_score": 1, "minimal_answer_score": 1,
                      "minimal_answer": {"start_byte_offset": -1, "end_byte_offset": -1}})
    rng.shuffle(preds)
    if preds and "minimal_answer" not in preds[0] and rng.random() < 0.8:
        preds[0]["minimal_answer"] = {"start_byte_offset": -1, "end_byte_offset": -1}
        preds[0].pop("yes_no_answer", None)
    return gold, preds


def write(gold, preds, d, gz, odd=False):
    gpath = os.path.join(d, "gold.jsonl.gz" if gz else "gold.jsonl")
    data = "".join(render(g, odd) + "\n" for g in gold).encode()
    if gz:
        with gzip.open(gpath, "wb") as f:
            f.write(data)
    else:
        with open(gpath, "wb") as f:
            f.write(data)
    ppath = os.path.join(d, "pred.jsonl")
    with open(ppath, "w", encoding="utf-8") as f:
        f.writelines(json.dumps(p, ensure_ascii=False) + "\n" for p in preds)
    return gpath, ppath


def render(g, odd):
    """One gold line, formatted as some writer might: escaped or raw Unicode, other spacing,
    a repeated key (the last one counts), an extra field, a float index. (Numbers beyond
    2**52 are a known difference: qafast refuses them.)"""
    r = random.Random(json.dumps(g, sort_keys=True))
    g = json.loads(json.dumps(g))
    roll = r.random() if odd else 1.0
    if roll < 0.1 and g["annotations"]:
        g["annotations"][0]["passage_answer"]["candidate_index"] = r.choice([1.0, -1.0, 2.5])
    elif roll < 0.15 and g["annotations"]:
        g["annotations"][0]["minimal_answer"]["extra"] = {"deep": [1, {"x": "\u2028"}]}
        g["annotations"][0]["yes_no_answer"] = r.choice(["Ye\u0073", "NONE", "ÿes", "nO"])
    sep = r.choice([(", ", ": "), (",", ":"), (" ,  ", " : ")])
    text = json.dumps(g, ensure_ascii=r.random() < 0.5, separators=sep)
    if r.random() < 0.1:
        text = '{"annotations": [], "example_id": null, ' + text[1:]
    if r.random() < 0.05:
        text = text + "  \t"
    return text


def script_stats(oracle, gpath, ppath, pt, mt):
    """The script's own per-language statistics, from its functions."""
    import eval_utils
    import tydi_eval

    tydi_eval.FLAGS.unparse_flags()
    tydi_eval.FLAGS(["tydi_eval", f"--gold_path={gpath}", f"--predictions_path={ppath}",
                     f"--passage_non_null_threshold={pt}", f"--minimal_non_null_threshold={mt}",
                     "--noverbose"])
    gold = eval_utils.read_annotation(gpath)
    pred = eval_utils.read_prediction_jsonl(ppath)
    per_gold, per_pred = {}, {}
    for k, ex in gold.items():
        per_gold.setdefault(ex[0].language, {})[k] = ex
    for k, ex in pred.items():
        per_pred.setdefault(ex.language, {})[k] = ex
    out = {}
    for lang in LANGS[:11]:
        if lang in per_pred:
            out[lang] = tydi_eval.score_answers(per_gold.get(lang, {}), per_pred[lang])
    return out


def qafast_stats(gpath, ppath, pt, mt):
    from qafast import tydi_eval as t

    ev = t._Evaluation(gpath, ppath, pt, mt)
    out = {}
    for lang, s in ev.scored.items():
        rows = []
        for kind in ("passage", "minimal"):
            score = s.pscore if kind == "passage" else s.mscore
            import numpy as np
            order = np.argsort(-score, kind="stable") if not np.isnan(score).any() else None
            rows.append((kind, order, s))
        out[lang] = rows
    return out


def compare_stats(theirs, ours):
    import math

    bad = []
    if list(theirs) != list(ours):
        return [f"languages {list(theirs)} vs {list(ours)}"]
    for lang, (pa, ma) in theirs.items():
        for (kind, order, s), stats in zip(ours[lang], (pa, ma)):
            if order is None:
                continue  # NaN scores: Python's sort decides; the CLI comparison covers it
            for k, o in enumerate(order):
                hg, hp, val, score = stats[k]
                if kind == "passage":
                    mine = (bool(s.flags[o, 0]), bool(s.flags[o, 1]), bool(s.flags[o, 2]))
                    their = (bool(hg), bool(hp), bool(val))
                else:
                    mine = (bool(s.flags[o, 3]), bool(s.flags[o, 4]),
                            tuple(float(x) for x in s.prf[o]))
                    their = (bool(hg), bool(hp), tuple(float(x) for x in val))
                sc = s.pscore[o] if kind == "passage" else s.mscore[o]
                if mine != their or not (float(score) == sc or (math.isnan(sc))):
                    bad.append(f"{lang} {kind} #{k}: script {their} {score!r}, qafast {mine} {sc!r}")
                    break
    return bad


def run_qafast(args):
    from qafast.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["tydi"] + args)
    return rc, out.getvalue(), err.getvalue()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("n", nargs="?", type=int, default=200)
    ap.add_argument("--oracle", default="/work/scratch/oracles/tydi")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    if os.environ.get("PYTHONHASHSEED") != "0":
        env = dict(os.environ, PYTHONHASHSEED="0")
        sys.exit(subprocess.call([sys.executable] + sys.argv, env=env))
    sys.path.insert(0, a.oracle)
    mismatches = crashes = 0
    for case in range(a.n):
        rng = random.Random(a.seed * 1_000_003 + case)
        gold, preds = make_case(rng)
        pt, mt = rng.choice([2, 2, 2, 1, 0, 3]), rng.choice([2, 2, 2, 1, 0, 3])
        pretty = rng.random() < 0.25
        with tempfile.TemporaryDirectory() as d:
            gpath, ppath = write(gold, preds, d, gz=rng.random() < 0.5, odd=rng.random() < 0.3)
            flags = [f"--gold_path={gpath}", f"--predictions_path={ppath}",
                     f"--passage_non_null_threshold={pt}", f"--minimal_non_null_threshold={mt}"]
            if pretty:
                flags.append("--pretty_print")
            res = subprocess.run([sys.executable, os.path.join(a.oracle, "tydi_eval.py")] + flags,
                                 check=False, capture_output=True, text=True, env=os.environ)
            rc, out, err = run_qafast(flags)
            problem = None
            if res.returncode != 0 and "slice indices" in res.stderr:
                # the script's per-example log slices the document by float offsets: without
                # it (--noverbose) the script scores them, and so does qafast
                res = subprocess.run(
                    [sys.executable, os.path.join(a.oracle, "tydi_eval.py"), "--noverbose"]
                    + flags, check=False, capture_output=True, text=True, env=os.environ)
            if res.returncode == 0:
                if rc != 0 or out != res.stdout:
                    problem = f"stdout differs (qafast rc {rc}: {err.strip()[:200]})"
                else:
                    try:
                        bad = compare_stats(script_stats(a.oracle, gpath, ppath, pt, mt),
                                            qafast_stats(gpath, ppath, pt, mt))
                    except Exception as e:  # noqa: BLE001 - reported as a mismatch
                        bad = [f"stats comparison failed: {e!r}"]
                    if bad:
                        problem = "; ".join(bad[:3])
            else:
                crashes += 1
                last = res.stderr.strip().splitlines()[-1] if res.stderr.strip() else ""
                in_table = pretty and "format" in last
                if in_table and rc == 2:
                    # qafast checks every language before printing: the script must fail
                    # without the tables too
                    plain = subprocess.run(
                        [sys.executable, os.path.join(a.oracle, "tydi_eval.py")] + flags[:-1],
                        check=False, capture_output=True, text=True, env=os.environ)
                    if plain.returncode == 0 or "qafast tydi:" not in err:
                        problem = "script failed in its table only; qafast gave an error"
                elif in_table:
                    if rc != 0 or not out.startswith(res.stdout):
                        problem = f"script failed in its table ({last}); qafast rc {rc}"
                elif rc != 2 or "qafast tydi:" not in err:
                    problem = f"script failed ({last}); qafast rc {rc}, no qafast error"
            if problem:
                mismatches += 1
                print(f"case {case}: {problem}")
                if mismatches <= 2:
                    keep = os.path.join(tempfile.gettempdir(), f"tydi_fuzz_case{case}")
                    os.makedirs(keep, exist_ok=True)
                    write(gold, preds, keep, gz=False)
                    print(f"  files kept in {keep}")
    print(f"{a.n} cases, {crashes} where the script fails, {mismatches} mismatches")
    sys.exit(1 if mismatches else 0)


if __name__ == "__main__":
    main()
