#!/usr/bin/env python
"""QuAC benchmark: qafast.quac beside the official scorer.py, in one run.

    python benchmarks/bench_quac.py                      # 100,000 questions
    python benchmarks/bench_quac.py --questions 20000 --script PATH

The official script (unmodified; default path /work/scratch/oracles/quac/scorer.py, or
--script) is timed two ways, and qafast beside each:

1. end to end from the files: ``python scorer.py --val_file V --model_output M`` as a
   process, against ``qafast quac`` with the same arguments as a process (both print the
   same lines: asserted byte for byte);
2. scoring only, the data already loaded: the script's ``eval_fn`` imported and called on
   the parsed gold and the predictions filed as its ``__main__`` files them (its module's
   ``args`` set to the parsed defaults, which ``eval_fn`` reads; printing sent to a buffer),
   against ``qafast.quac(data, records)`` on the same objects.

Data is synthetic and seeded: dialogs of 1-12 questions over a context of 60-250 words with
Unicode, numbers and punctuation; 1-5 golds per question, substrings of the context with
case and punctuation changes, a fifth of them CANNOTANSWER; predictions near a gold, another
span, CANNOTANSWER or empty, 3% missing.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import import_qafast, load_script, machine_info

DEFAULT_SCRIPT = "/work/scratch/oracles/quac/scorer.py"
WORDS = ["Paris", "France", "the", "a", "an", "he", "wrote", "two", "books", "in", "1968",
         "(1972)", "café", "İstanbul", "band's", "album", "tour,", "U.S.", "released", "first",
         "single", "year", "1,000", "copies", "sold.", "She", "married", "actor", "—", "東京",
         "naïve", "record", "label", "co-founded", "after", "war", "returned", "home."]


def make_data(n: int, seed: int) -> tuple[dict, list]:
    rng = random.Random(seed)
    data, lines, made = [], [], 0
    while made < n:
        paragraphs = []
        for _ in range(rng.randint(1, 4)):
            did = f"C_{rng.getrandbits(64):016x}_{rng.randint(0, 1)}"
            words = [rng.choice(WORDS) for _ in range(rng.randint(60, 250))]
            context = " ".join(words) + " CANNOTANSWER"
            qas, qids, spans = [], [], []
            for t in range(min(rng.randint(1, 12), n - made)):
                made += 1
                qid = f"{did}_q#{t}"
                golds = []
                for _ in range(rng.choice([1, 1, 4, 4, 5, 2, 3])):
                    if rng.random() < 0.2:
                        golds.append("CANNOTANSWER")
                    else:
                        i = rng.randrange(len(words))
                        golds.append(" ".join(words[i:i + rng.randint(1, 15)]))
                qas.append({"id": qid, "answers": [{"text": g, "answer_start": 0} for g in golds],
                            "orig_answer": {"text": golds[0], "answer_start": 0},
                            "question": "What happened next?",
                            "yesno": rng.choice("ynx"), "followup": rng.choice("ynm")})
                if rng.random() < 0.03:
                    continue
                r = rng.random()
                if r < 0.5:
                    span = rng.choice(golds)
                    if rng.random() < 0.3:
                        span = span.lower() + rng.choice(["", ".", " the"])
                elif r < 0.8:
                    i = rng.randrange(len(words))
                    span = " ".join(words[i:i + rng.randint(1, 20)])
                elif r < 0.95:
                    span = "CANNOTANSWER"
                else:
                    span = ""
                qids.append(qid)
                spans.append(span)
            paragraphs.append({"id": did, "context": context, "qas": qas})
            if qids:
                lines.append({"qid": qids, "best_span_str": spans,
                              "yesno": [rng.choice("ynx") for _ in qids],
                              "followup": [rng.choice("ynm") for _ in qids]})
            if made >= n:
                break
        data.append({"title": "T", "section_title": "S", "paragraphs": paragraphs})
    return {"data": data}, lines


def scripts_predictions(lines: list) -> dict:
    """The predictions filed as the script's __main__ files them."""
    preds = defaultdict(dict)
    for rec in lines:
        dia_id = rec["qid"][0].split("_q#")[0]
        for qid, qspan, qyesno, qfollowup in zip(rec["qid"], rec["best_span_str"],
                                                 rec["yesno"], rec["followup"]):
            preds[dia_id][qid] = qspan, qyesno, qfollowup
    return preds


def best_of(fn, repeat: int):
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=3, help="qafast's runs (the script runs once)")
    ap.add_argument("--script", default=DEFAULT_SCRIPT)
    args = ap.parse_args()
    qafast, why = import_qafast()
    if qafast is None:
        print(why, file=sys.stderr)
        return 1
    import qafast.quac_eval as qq

    script = load_script(args.script, "quac_scorer")
    script.args = argparse.Namespace(min_f1=0.4, verbose=False)   # what eval_fn reads

    gold, lines = make_data(args.questions, args.seed)
    env = dict(os.environ, PYTHONPATH=str(Path(qafast.__file__).resolve().parent.parent))
    with tempfile.TemporaryDirectory() as tmp:
        val_path, out_path = f"{tmp}/val.json", f"{tmp}/output.jsonl"
        with open(val_path, "w", encoding="utf-8") as f:
            json.dump(gold, f)
        with open(out_path, "w", encoding="utf-8") as f:
            f.write("".join(json.dumps(rec) + "\n" for rec in lines))
        argv = ["--val_file", val_path, "--model_output", out_path]

        def run(cmd):
            return subprocess.run(cmd, capture_output=True, check=True, env=env).stdout

        t_off_files, printed = best_of(lambda: run([sys.executable, args.script, *argv]), 1)
        t_qf_files, ours = best_of(lambda: run([sys.executable, "-m", "qafast", "quac", *argv]),
                                   args.repeat)
        assert printed == ours, (printed[-400:], ours[-400:])

    preds = scripts_predictions(lines)

    def official_loaded():
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            return script.eval_fn(gold["data"], preds, False)

    t_off_loaded, want = best_of(official_loaded, 1)
    t_qf_loaded, got = best_of(lambda: qq.quac(gold, lines), args.repeat)
    assert want == got, (want, got)

    print(f"QuAC, {args.questions:,} questions in "
          f"{sum(len(a['paragraphs']) for a in gold['data']):,} dialogs")
    for line in machine_info():
        print(f"  {line}")
    print(f"{'':34s}{'official':>10s}{'qafast':>10s}{'ratio':>8s}")
    for name, a, b in [("end to end from the files", t_off_files, t_qf_files),
                       ("scoring the loaded data", t_off_loaded, t_qf_loaded)]:
        print(f"{name:34s}{a:9.3f}s{b:9.3f}s{a / b:7.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
