"""Differential test of qafast.mlqa and qafast.cmrc against the official MLQA and CMRC 2018
evaluation scripts (not collected by pytest: run it by hand).

    NLTK_DATA=... python tests/fuzz_multilingual.py [--oracles DIR] [--cases N] [--seed S]
                                                    [--only mlqa|cmrc]
                                                    [--subprocess-every K]

For each of N seeded adversarial cases (Unicode and CJK text, each MLQA language's articles
and punctuation, full-width punctuation, mixed CJK/ASCII, numbers in words and digits, dates,
odd whitespace, empty strings, missing and unknown predictions, duplicate ids), it writes a
dataset and a prediction file and compares:

* per question, the scripts' own scoring functions (imported from the unmodified files) with
  qafast's ``per_question=True`` rows, to the last bit;
* ``python mlqa_evaluation_v1.py DATA PRED LANG`` with ``qafast mlqa DATA PRED LANG`` and
  ``python cmrc2018_evaluate.py DATA PRED`` with ``qafast cmrc DATA PRED`` and ``qafast drcd
  DATA PRED`` (stdout, byte for byte), all run in-process on the files (the scripts as
  ``__main__``), and every K-th case also as separate processes. Where a script crashes,
  qafast must exit with a qafast error (exit 2).

CMRC cases in SQuAD's form are also written, half of them, in DRCD's shapes (drawn from a
stream of their own, so that a seed's cases stay those it gave before): several articles and
paragraphs with titles, contexts and ids, an article that is its own paragraph, "query_id"
beside or instead of "id", answers mixing strings and objects or with a text that is not a
string or missing, keys given twice (json.loads keeps the last), a byte order mark, one
key-value pair a line.

Prints the number of cases, crashes agreed on and mismatches (0 expected). The CMRC script
needs nltk and NLTK's punkt_tab data (NLTK_DATA).
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
import runpy
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

import qafast
from qafast.cli import main as qafast_main
from qafast.errors import QafastError

LANGS = ["en", "es", "hi", "vi", "de", "ar", "zh"]
WORDS = {
    "en": ["the", "The", "a", "an", "An", "THE", "tower", "Eiffel", "theatre", "another",
           "Paris", "don't", "U.S.", "e.g.", "rock'n'roll", "twenty", "20", "1,000", "3.5"],
    "es": ["el", "El", "la", "los", "las", "un", "una", "unos", "unas", "España", "año",
           "niño", "¿qué?", "¡sí!", "«cita»", "ella", "lazo"],
    "de": ["der", "die", "das", "Der", "den", "dem", "des", "ein", "eine", "einen", "einem",
           "eines", "einer", "Straße", "STRASSE", "Äpfel", "„Zitat“", "dieser", "deren"],
    "vi": ["của", "là", "cái", "chiếc", "những", "Của", "Việt", "Nam", "thành", "phố", "Hà",
           "Nội", "người"],
    "ar": ["الكتاب", "ال", "الجديد", "كتاب", "في", "مصر", "،", "؟", "٣", "١٩٨٩", "والقاهرة",
           "ال ال", "قال"],
    "hi": ["भारत", "की", "राजधानी", "नई", "दिल्ली", "।", "है", "१९४७", "॥"],
    "zh": ["北京", "大学", "北京大学", "二〇一八年", "2018年", "中国", "，", "。", "《三国》",
           "「引号」", "（括号）", "㐀", "豈", "𠀀", "ＡＢＣ", "１２３", "abc", "NBA球员",
           "iPhone手机", "…", "……", "·", "、", "－", "～", "『书名』", "“”", "’", "Mr.",
           "3.14", "A.B.C", "e-mail", "C++", "x=1", "a/b",
           # English qafast tokenizes without nltk (final periods, clitics, double quotes)
           "Smith's", "it's", "James'", '"NBA"', "Apple Inc.", "O'Neill", "we'll", "can't",
           "d'ye", "cannot'tis", "U.S.队",
           # periods inside English text: Punkt's sentence breaks, decided without nltk
           "Mr. Smith", "J. K. Rowling", "e.g. NBA", "3 p.m. start", "No. 1", "Dr. Who.",
           "U.S. Steel", "Jan. 5", "1st. place", "a. b. c", "St. Louis", "vs. Lakers"],
}
COMMON = ["", "Café", "İstanbul", "ﬁle", "Ωmega", "σς", "ǅ", "naïve", "🙂", "Ⅻ", "—", "–",
          "€5", "$5", "©", "°C", "%", "_", "March 3, 2001", "3/3/2001", "1st", "x", "(", ")",
          "\"", "'", "...", "!", "?", "-", "e\u0301", "\u200b", "ß", "ﬀ", "ΣΑΣ"]
SPACES = [" ", " ", " ", "  ", "\t", "\n", "\u00a0", "\u2003", "\u3000", "", "\u200b"]


def rand_text(rng: random.Random, lang: str) -> str:
    r = rng.random()
    if r < 0.06:
        return ""
    if r < 0.1:
        return rng.choice(SPACES + ["the", "。", "，", "ال", "der", "-"])
    n = rng.randint(1, 6)
    pool = WORDS[lang] * 3 + COMMON + WORDS[rng.choice(LANGS)]
    out = []
    for i in range(n):
        out.append(rng.choice(pool))
        if i < n - 1:
            out.append(rng.choice(SPACES))
    s = "".join(out)
    if rng.random() < 0.1:
        s = rng.choice(SPACES) + s + rng.choice(SPACES)
    return s


def similar(rng: random.Random, gold: str, lang: str) -> str:
    r = rng.random()
    if r < 0.3:
        return gold
    if r < 0.45:
        return gold.upper() if rng.random() < 0.5 else gold.lower()
    if r < 0.6:
        return rng.choice(WORDS[lang]) + rng.choice(SPACES) + gold
    if r < 0.7:
        return gold + rng.choice(["。", ".", "!", "，", " the", "?", "」"])
    if r < 0.8 and gold:
        cut = rng.randint(0, len(gold))
        return gold[cut:] + gold[:cut]
    return rand_text(rng, lang)


def make_case(rng: random.Random, lang: str, cmrc_form: bool = False):
    n = rng.randint(1, 12)
    ids = []
    for i in range(n):
        if ids and rng.random() < 0.1:
            ids.append(rng.choice(ids))          # a repeated id
        else:
            ids.append(rng.choice([f"q{i}", f"問{i}", f"id-{i}", f"{i}"]))
    golds = [[rand_text(rng, lang) for _ in range(rng.randint(1, 3))] for _ in ids]
    preds = {}
    for q, g in zip(ids, golds):
        if rng.random() < 0.12:
            continue                              # missing prediction
        preds[q] = similar(rng, rng.choice(g), lang)
    if rng.random() < 0.2:
        preds["unknown"] = "x"
    if rng.random() < 0.15:                       # what the scripts crash on or str()
        r = rng.random()
        i = rng.randrange(n)
        if r < 0.2:
            golds[i] = []                         # no gold answer
            if rng.random() < 0.5:
                preds.pop(ids[i], None)           # ... unread: no crash
        elif r < 0.5:
            preds[ids[i]] = rng.choice([2018, 3.5, True, None, ["北京"], {"a": 1}, 1e16])
        elif r < 0.8:
            golds[i][0] = rng.choice([2018, 3.5, False, None, 0.1, -0.0])
        else:
            ids, golds = [], []
    if cmrc_form and rng.random() < 0.5:
        data = [{"context_id": "c", "qas": [{"query_id": q, "answers": g}
                                            for q, g in zip(ids, golds)]}]
    else:
        data = {"version": "1.0" if rng.random() < 0.9 else "1.1",
                "data": [{"title": "t", "paragraphs": [{"context": "", "qas": [
                    {"id": q, "question": "", "answers": [{"text": t, "answer_start": 0}
                                                         for t in g]}
                    for q, g in zip(ids, golds)]}]}]}
    return data, preds


class Pairs(list):
    """A JSON object written as its (key, value) pairs, so that a key may be given twice."""


def dumps(obj, ensure_ascii: bool, sep: str = ", ") -> str:
    """json.dumps that also writes :class:`Pairs` (items and values joined by ``sep``)."""
    if isinstance(obj, (Pairs, dict)):
        items = obj if isinstance(obj, Pairs) else obj.items()
        return "{" + sep.join(json.dumps(k, ensure_ascii=ensure_ascii) + ": "
                              + dumps(v, ensure_ascii, sep) for k, v in items) + "}"
    if isinstance(obj, list):
        return "[" + sep.join(dumps(v, ensure_ascii, sep) for v in obj) + "]"
    return json.dumps(obj, ensure_ascii=ensure_ascii)


def drcd_shape(rng: random.Random, data: dict) -> Pairs:
    """The questions of SQuAD-form data laid out as DRCD's files may be (see the docstring),
    with variations of the form that the CMRC script reads, or crashes on."""
    questions = []
    for qa in (q for a in data["data"] for p in a["paragraphs"] for q in p["qas"]):
        answers: list = []
        for x in qa["answers"]:
            r = rng.random()
            if r < 0.05:
                answers.append(x["text"])                       # a string among objects
            elif r < 0.08:                                      # the last "text" counts
                answers.append(Pairs([("text", "舊"), ("answer_start", 3),
                                      ("text", x["text"])]))
            elif r < 0.09:
                answers.append({"text": rng.choice([7, None, ["北"], {"a": 1}]),
                                "answer_start": 0})
            elif r < 0.095:
                answers.append({"answer_start": 0})             # no text: a crash
            else:
                answers.append({"text": x["text"], "answer_start": 0})
        pairs = Pairs([("id", qa["id"]), ("question", "問題？"), ("answers", answers)])
        if rng.random() < 0.3:
            rng.shuffle(pairs)
        r = rng.random()
        if r < 0.05:
            pairs = Pairs(("query_id", v) if k == "id" else (k, v) for k, v in pairs)
        elif r < 0.1:
            pairs.insert(rng.randint(0, len(pairs)), ("query_id", "other"))
        if rng.random() < 0.04:
            pairs.insert(0, (rng.choice(["id", "answers", "question"]),
                             rng.choice(["dup", 5, [], [{"text": "重"}], None])))
        questions.append(pairs)
    articles: list = []
    i = 0
    while i < len(questions) or not articles:
        paragraphs = []
        for _ in range(rng.randint(1, 3)):
            k = rng.randint(0, 4)
            para = Pairs([("context", "臺灣的首都是臺北。"),
                          ("id", f"{len(articles)}-{len(paragraphs)}"),
                          ("qas", questions[i:i + k])])
            i += k
            if rng.random() < 0.03:
                para.insert(0, ("qas", questions[:1]))          # given twice
            paragraphs.append(para)
        r = rng.random()
        if r < 0.05:     # the article is its own paragraph
            articles.append(Pairs([("title", "標題"), *paragraphs[0][1:]]))
        elif r < 0.07:   # paragraphs given twice
            articles.append(Pairs([("paragraphs", paragraphs[:1]), ("title", "標題"),
                                   ("paragraphs", paragraphs)]))
        else:
            articles.append(Pairs([("title", "標題"), ("id", str(len(articles))),
                                   ("paragraphs", paragraphs)]))
    root = Pairs([("version", "v1.3"), ("data", articles)])
    if rng.random() < 0.03:
        root.insert(0, ("data", []))
    return root


def script_questions(data) -> list:
    """``(id, answers)`` of each question, walked as the CMRC script walks them (it may
    raise where the script crashes)."""
    out = []
    for instance in data["data"] if "data" in data else data:
        for para in instance["paragraphs"] if "paragraphs" in instance else [instance]:
            for qa in para["qas"]:
                qid = qa["id"] if "id" in qa else qa["query_id"]
                hash(qid)
                out.append((qid, [x["text"] if isinstance(x, dict) else x
                                  for x in qa["answers"]]))
    return out


def load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def same(a, b) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


def run(cmd, env=None) -> tuple[int, bytes]:
    p = subprocess.run(cmd, capture_output=True, check=False, env=env)
    return p.returncode, p.stdout


def run_script(script: Path, argv: list) -> tuple[int, bytes]:
    """The unmodified script run as ``__main__`` in this process: (exit status, stdout)."""
    out, old = io.StringIO(), sys.argv
    sys.argv = [str(script), *argv]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            runpy.run_path(str(script), run_name="__main__")
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    except Exception:  # noqa: BLE001 - the script crashed
        code = 1
    finally:
        sys.argv = old
    return code, out.getvalue().encode("utf-8")


def run_qafast(argv: list) -> tuple[int, bytes]:
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            code = qafast_main(argv)
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    return code, out.getvalue().encode("utf-8")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--oracles", default="/work/scratch/oracles")
    ap.add_argument("--cases", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", choices=["mlqa", "cmrc"])
    ap.add_argument("--subprocess-every", type=int, default=25)
    args = ap.parse_args()
    mlqa_script = Path(args.oracles) / "mlqa" / "mlqa_evaluation_v1.py"
    cmrc_script = Path(args.oracles) / "cmrc" / "cmrc2018_evaluate.py"
    mlqa_mod = load(mlqa_script, "mlqa_oracle")
    cmrc_mod = load(cmrc_script, "cmrc_oracle") if args.only != "mlqa" else None
    env = dict(os.environ, PYTHONPATH=str(HERE.parent / "src"))
    rng = random.Random(args.seed)
    cases = crashes = mismatches = 0
    with tempfile.TemporaryDirectory() as tmp:
        data_file, pred_file = Path(tmp) / "data.json", Path(tmp) / "pred.json"
        for k in range(args.cases):
            family = args.only or ("mlqa" if k % 2 == 0 else "cmrc")
            lang = rng.choice(LANGS) if family == "mlqa" else "zh"
            data, preds = make_case(rng, lang, cmrc_form=family == "cmrc")
            ascii_only = rng.random() < 0.5
            shapes = random.Random(f"{args.seed} {k}")
            if family == "cmrc" and isinstance(data, dict) and shapes.random() < 0.5:
                text = dumps(drcd_shape(shapes, data), ascii_only,
                             ",\n " if shapes.random() < 0.2 else ", ")
                raw = (b"\xef\xbb\xbf" if shapes.random() < 0.03 else b"") + text.encode()
                data = json.loads(raw)      # what the script reads
            else:
                raw = json.dumps(data, ensure_ascii=ascii_only).encode()
            data_file.write_bytes(raw)
            pred_file.write_text(json.dumps(preds, ensure_ascii=False), encoding="utf-8")
            cases += 1
            # per question, in-process
            try:
                qs = script_questions(data)
            except (KeyError, TypeError):
                qs = []      # the commands below check that qafast fails too
            try:
                if family == "mlqa":
                    rows = qafast.mlqa(data, preds, lang, per_question=True)
                    em_key, f1_key = "exact_match", "f1"
                else:
                    rows = qafast.cmrc(data, preds, per_question=True)
                    em_key, f1_key = "EM", "F1"
            except QafastError:
                qs = []      # the commands below check that the script crashes too
            for i, (qid, texts) in enumerate(qs):
                if family == "mlqa" and not (isinstance(preds.get(qid, ""), str) and texts
                                             and all(isinstance(t, str) for t in texts)):
                    continue                      # the script crashes (checked below)
                if family == "cmrc" and qid in preds and not texts:
                    continue
                if qid not in preds:
                    want_em = want_f1 = math.nan
                elif family == "mlqa":
                    want_em = float(mlqa_mod.metric_max_over_ground_truths(
                        mlqa_mod.exact_match_score, preds[qid], texts, lang))
                    want_f1 = float(mlqa_mod.metric_max_over_ground_truths(
                        mlqa_mod.f1_score, preds[qid], texts, lang))
                else:
                    want_em = float(cmrc_mod.calc_em_score(texts, str(preds[qid])))
                    want_f1 = float(cmrc_mod.calc_f1_score(texts, str(preds[qid])))
                if not (same(want_em, rows[em_key][i]) and same(want_f1, rows[f1_key][i])):
                    mismatches += 1
                    print(f"case {k} ({family} {lang}) question {qid!r}: script "
                          f"({want_em!r}, {want_f1!r}), qafast ({rows[em_key][i]!r}, "
                          f"{rows[f1_key][i]!r})")
            # the commands, byte for byte
            script = mlqa_script if family == "mlqa" else cmrc_script
            argv = [str(data_file), str(pred_file)] + ([lang] if family == "mlqa" else [])
            runs = [(run_script(script, argv), run_qafast([family, *argv]))]
            if family == "cmrc":   # qafast drcd prints what the CMRC script prints
                runs.append((runs[0][0], run_qafast(["drcd", *argv])))
            if args.subprocess_every and k % args.subprocess_every == 0:
                runs.append((run([sys.executable, str(script), *argv]),
                             run([sys.executable, "-m", "qafast", family, *argv], env)))
            for want, got in runs:
                if want[0] != 0:
                    crashes += 1
                    if got[0] != 2:
                        mismatches += 1
                        print(f"case {k}: the script crashed, qafast exited {got[0]}")
                elif got != want:
                    mismatches += 1
                    print(f"case {k} ({family} {lang}): script {want[1]!r}, qafast {got!r}")
    print(f"{cases} cases, {crashes} crashes agreed on, {mismatches} mismatches")
    return 1 if mismatches else 0


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
