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
seeded: 1-3 gold answers of 1-6 words or characters (in the language's own script) with case,
punctuation and article noise, 3% of the questions not predicted. CMRC's text is Chinese
with some digits and Latin words, which it hands to nltk.word_tokenize (needs NLTK's punkt_tab
data: NLTK_DATA); the CMRC row is left out, with the reason printed, when its script, nltk or
that data is missing.

Each row runs the script and qafast alternately ``--repeat`` times (a busy spell on a shared
machine then slows both) and prints the medians of the wall times and of the CPU times.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import import_qafast, load_script, machine_info

EN = ["the", "a", "an", "Paris", "France", "Eiffel", "Tower", "river", "1889", "twenty",
      "café", "İstanbul", "rock", "band", "album", "1,000", "Smith's", "New", "York", "City",
      "“quoted”", "e.g.", "—", "(film)"]
ZH = list("北京大学中国上海年月日人民共和国历史文化经济发展") + ["，", "。", "《", "》", "2018",
                                                    "NBA", "（", "）", "、"]
# Each MLQA language's answers in its own script, with its articles, diacritics, combining
# marks and punctuation, so that a row times the text that language's normalizer meets
DE = ["der", "die", "das", "ein", "eine", "Straße", "Über", "größer", "Müller", "Köln",
      "1,5", "„Zitat“", "Fluss", "Jahrhundert", "Band", "(Film)", "Bundesrepublik", "–"]
ES = ["el", "la", "los", "las", "un", "una", "canción", "¿qué?", "España", "año", "Perú",
      "niño", "1.000", "«cita»", "río", "(película)", "siglo", "—"]
VI = ["Hà", "Nội", "Việt", "Nam", "thành", "phố", "năm", "người", "sông", "Hồng", "trường",
      "đại", "học", "1945", "“trích”", "(phim)", "lịch", "sử"]
HI = ["भारत", "दिल्ली", "नदी", "गंगा", "हिंदी", "भाषा", "सरकार", "राष्ट्रपति", "१९४७", "2018",
      "विश्वविद्यालय", "प्रधानमंत्री", "।", "(फ़िल्म)", "क्रिकेट", "मुंबई", "शहर", "इतिहास"]
AR = ["ال", "مصر", "القاهرة", "نهر", "النيل", "جامعة", "اللغة", "العربية", "١٩٥٢", "2018",
      "مدينة", "الحكومة", "؟", "«اقتباس»", "(فيلم)", "تاريخ", "الرئيس", "،"]
#: each language's word pool and what joins its words
POOLS = {"en": (EN, " "), "de": (DE, " "), "es": (ES, " "), "vi": (VI, " "),
         "hi": (HI, " "), "ar": (AR, " "), "zh": (ZH, "")}


#: English with periods inside the text, whose sentence breaks nltk's Punkt model decides in
#: CMRC's script; qafast decides them from the same model's files, without importing nltk,
#: for the nltk releases it was checked against (``--nltk-share`` of bench_reading.py mixes
#: them into the CMRC and DRCD answers)
NLTK_PHRASES = ["U.S.", "Mr. Smith", "No. 1", "3 p.m.", "e.g. NBA", "Apple Inc.", "Dr. Sun"]

#: English that nltk's word tokenizer splits by final periods, contractions, possessives and
#: double quotes, which qafast tokenizes without nltk for the nltk releases it was checked
#: against (``--nltk-text wide`` of bench_reading.py)
#: (a period ending the English is followed by Chinese, as in CMRC answers: an answer with a
#: suffix added after it keeps the period final in its run)
WIDE_PHRASES = ["U.S.队", "3 p.m.开始", "Apple Inc.公司", "don't", "Smith's", '"NBA"',
                "O'Neill", "it's 1,000.元"]

#: the phrase lists by the name ``--nltk-text`` gives them
PHRASES = {"punkt": NLTK_PHRASES, "wide": WIDE_PHRASES}


def make(n: int, lang: str, seed: int, cmrc_form: bool = False, nltk_share: float = 0.0,
         phrases: list = NLTK_PHRASES):
    """Data and predictions; ``nltk_share``: the share of answers given one of ``phrases``
    (0 draws the same data as before it existed)."""
    rng = random.Random(seed)
    pool, sep = POOLS[lang]

    def text():
        t = sep.join(rng.choice(pool) for _ in range(rng.randint(1, 6)))
        if nltk_share and rng.random() < nltk_share:
            t += rng.choice(phrases)
        return t

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



def timed(fn):
    """``(wall seconds, CPU seconds, result)`` of one call, its stderr sent to a buffer."""
    t, c = time.perf_counter(), time.process_time()
    with contextlib.redirect_stderr(io.StringIO()):
        out = fn()
    return time.perf_counter() - t, time.process_time() - c, out


def alternating(script, ours, repeat: int):
    """Medians ``(script wall, script CPU, qafast wall, qafast CPU)`` and the last results
    of ``repeat`` rounds, each round running the script and then qafast."""
    rows = []
    for _ in range(repeat):
        ws, cs, want = timed(script)
        wq, cq, got = timed(ours)
        rows.append((ws, cs, wq, cq))
    return tuple(statistics.median(col) for col in zip(*rows)), want, got


def report(name: str, medians) -> None:
    ws, cs, wq, cq = medians
    print(f"{name:9s}{ws:8.3f} / {wq:7.3f}  {ws / wq:6.1f}x   (CPU {cs:7.3f} / {cq:7.3f}  "
          f"{cs / cq:6.1f}x)")


def cmrc_missing(oracles: Path) -> str | None:
    """Why the CMRC row cannot run, or None."""
    if not (oracles / "cmrc" / "cmrc2018_evaluate.py").exists():
        return f"no {oracles / 'cmrc' / 'cmrc2018_evaluate.py'}"
    try:
        import nltk

        nltk.word_tokenize("a b")
    except ImportError:
        return "nltk is not installed"
    except LookupError:
        return "NLTK's punkt_tab data is not installed"
    return None


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--questions", type=int, default=100_000)
    ap.add_argument("--oracles", default="/work/scratch/oracles")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--langs", default="en,zh", help="MLQA answer languages, comma-separated")
    args = ap.parse_args()
    qafast, why = import_qafast()
    if qafast is None:
        print(why)
        return 1
    for line in machine_info():
        print(line)
    oracles = Path(args.oracles)
    mlqa_mod = load_script(oracles / "mlqa" / "mlqa_evaluation_v1.py", "mlqa_oracle")
    n = args.questions
    print(f"\n{n:,} questions; median seconds (script / qafast) and ratio, "
          f"{args.repeat} alternating runs")
    for lang in args.langs.split(","):
        data, preds = make(n, lang, seed=7 + len(lang) + ord(lang[0]))
        medians, want, got = alternating(
            lambda d=data, p=preds, x=lang: mlqa_mod.evaluate(d, p, x),
            lambda d=data, p=preds, x=lang: qafast.mlqa(d, p, x), args.repeat)
        assert got == want, (got, want)
        report(f"MLQA {lang}:", medians)
    why_not = cmrc_missing(oracles)
    if why_not is not None:
        print(f"CMRC:    not run ({why_not})")
        return 0
    cmrc_mod = load_script(oracles / "cmrc" / "cmrc2018_evaluate.py", "cmrc_oracle")
    data, preds = make(n, "zh", seed=11, cmrc_form=True)
    medians, want, got = alternating(lambda: cmrc_mod.evaluate(data, preds),
                                     lambda: qafast.cmrc(data, preds), args.repeat)
    assert (got["F1"], got["EM"], got["TOTAL"], got["SKIP"]) == want, (got, want)
    report("CMRC:", medians)
    return 0


if __name__ == "__main__":
    sys.exit(main())
