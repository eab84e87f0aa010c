#!/usr/bin/env python
"""MLQA and CMRC 2018 benchmark: qafast.mlqa and qafast.cmrc beside the official scripts, in one
run.

    python benchmarks/bench_multilingual.py                  # 100,000 questions
    python benchmarks/bench_multilingual.py --questions 20000 --oracles DIR

The official scripts (unmodified; default /work/scratch/oracles/{mlqa,cmrc}) are imported and
their ``evaluate`` functions timed on the loaded dataset and predictions (their messages about
unanswered questions sent to a buffer), against ``qafast.mlqa(data, preds, lang)`` and
``qafast.cmrc(data, preds)`` on the same objects. Both must give the same numbers (asserted).
Rows: MLQA with English answers, MLQA with Chinese answers, CMRC 2018. Data is synthetic and
seeded: 1-3 gold answers of 1-6 words or characters with case, punctuation and article noise,
3% of the questions not predicted. CMRC's text is Chinese with some digits and Latin words,
which it hands to nltk.word_tokenize (needs NLTK's punkt_tab data: NLTK_DATA).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import import_qafast, machine_info

EN = ["the", "a", "an", "Paris", "France", "Eiffel", "Tower", "river", "1889", "twenty",
      "café", "İstanbul", "rock", "band", "album", "1,000", "Smith's", "New", "York", "City",
      "“quoted”", "e.g.", "—", "(film)"]
ZH = list("北京大学中国上海年月日人民共和国历史文化经济发展") + ["，", "。", "《", "》", "2018",
                                                    "NBA", "（", "）", "、"]


def make(n: int, lang: str, seed: int, cmrc_form: bool = False):
    rng = random.Random(seed)
    pool = EN if lang == "en" else ZH
    sep = " " if lang == "en" else ""

    def text():
        return sep.join(rng.choice(pool) for _ in range(rng.randint(1, 6)))

    qas, preds = [], {}
    for i in range(n):
        golds = [text() for _ in range(rng.randint(1, 3))]
        q = f"q{i}"
        if cmrc_form:
            qas.append({"query_id": q, "answers": golds})
        else:
            qas.append({"id": q, "answers": [{"text": g, "answer_start": 0} for g in golds]})
        r = rng.random()
        if r < 0.03:
            continue
        preds[q] = rng.choice(golds) if r < 0.4 else (
            rng.choice(golds).upper() + rng.choice(["", "!", "。", " the"]) if r < 0.6 else text())
    if cmrc_form:
        return [{"context_id": "c", "qas": qas}], preds
    return [{"title": "t", "paragraphs": [{"context": "", "qas": qas}]}], preds


def load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def timed(fn):
    t = time.perf_counter()
    with contextlib.redirect_stderr(io.StringIO()):
        out = fn()
    return time.perf_counter() - t, out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--questions", type=int, default=100_000)
    ap.add_argument("--oracles", default="/work/scratch/oracles")
    args = ap.parse_args()
    qafast, why = import_qafast()
    if qafast is None:
        print(why)
        return 1
    for line in machine_info():
        print(line)
    mlqa_mod = load(Path(args.oracles) / "mlqa" / "mlqa_evaluation_v1.py", "mlqa_oracle")
    cmrc_mod = load(Path(args.oracles) / "cmrc" / "cmrc2018_evaluate.py", "cmrc_oracle")
    n = args.questions
    print(f"\n{n:,} questions; seconds (script / qafast) and ratio")
    for lang in ("en", "zh"):
        data, preds = make(n, lang, seed=7 + len(lang) + ord(lang[0]))
        t_script, want = timed(lambda d=data, p=preds, x=lang: mlqa_mod.evaluate(d, p, x))
        t_qafast, got = timed(lambda d=data, p=preds, x=lang: qafast.mlqa(d, p, x))
        assert got == want, (got, want)
        print(f"MLQA {lang}: {t_script:8.3f} / {t_qafast:7.3f}  {t_script / t_qafast:6.1f}x")
    data, preds = make(n, "zh", seed=11, cmrc_form=True)
    t_script, want = timed(lambda: cmrc_mod.evaluate(data, preds))
    t_qafast, got = timed(lambda: qafast.cmrc(data, preds))
    assert (got["F1"], got["EM"], got["TOTAL"], got["SKIP"]) == want, (got, want)
    print(f"CMRC:    {t_script:8.3f} / {t_qafast:7.3f}  {t_script / t_qafast:6.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
