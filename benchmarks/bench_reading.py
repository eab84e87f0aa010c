#!/usr/bin/env python
"""Reading-comprehension evaluations beside their official scripts, every ratio in one run.

    python benchmarks/bench_reading.py                         # 100,000 questions each
    python benchmarks/bench_reading.py --questions 20000 --only coqa,mlqa-en
    NLTK_DATA=DIR python benchmarks/bench_reading.py --oracles /work/scratch/oracles

For CoQA, QuAC, TyDi QA, MLQA (English and Chinese answers), CMRC 2018 and DRCD, two rows:

* **scoring**: the script's own scoring function on data it has already read, against the
  qafast function on the same parsed objects (same numbers asserted);
* **end to end**: the script run as a program on the files, against the ``qafast``
  command with the same arguments, each a fresh process (stdout asserted identical).

Each row runs the script and qafast alternately ``--repeat`` times, so that a busy spell on
a shared machine slows both, and prints the medians of the wall times and of the CPU times
(``time.process_time`` in process; the children's user + system time for the programs).

Data is the seeded synthetic data of the family's own benchmark (``bench_coqa.py``,
``bench_quac.py``, ``bench_tydi.py``, ``bench_multilingual.py``), at the size given. DRCD
ships no script: papers score it with CMRC 2018's, which is what ``qafast drcd`` prints by
default, so its row runs that script on DRCD-shaped (SQuAD-format) files. The official
scripts are read unmodified from ``--oracles`` (``coqa/evaluate-v1.0.py``,
``quac/scorer.py``, ``tydi/tydi_eval.py``, ``mlqa/mlqa_evaluation_v1.py``,
``cmrc/cmrc2018_evaluate.py``); an evaluation whose script (or, for CMRC's and DRCD's Latin
text, nltk with its ``punkt_tab`` data: ``NLTK_DATA``) is missing is left out with the reason.

CMRC's script hands every run of non-Chinese text to ``nltk.word_tokenize``; qafast computes
the same tokens itself for plain runs (words, numbers, ``3.5%``) and imports nltk only for the
others. ``--nltk-share 0.01`` gives 1% of the CMRC and DRCD answers English with sentence
periods (``Mr. Smith``), whose breaks qafast decides from nltk's Punkt model files without
importing nltk, for the nltk releases it was checked against (with another release, or
without those files, the rows show the cost of nltk on qafast's side); with
``--nltk-text wide`` that English is final periods, contractions, possessives and double
quotes (``Apple Inc.``, ``don't``, ``"NBA"``), which qafast tokenizes without nltk for those
releases too.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import io
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import import_qafast, load_script, machine_info  # noqa: E402

EVALUATIONS = ("coqa", "quac", "tydi", "mlqa-en", "mlqa-zh", "cmrc", "drcd")
#: MLQA answer languages --only also takes (``mlqa-de``, ...), not run by default
MLQA_OTHER_LANGS = ("es", "hi", "vi", "de", "ar")



def in_process(fn):
    """``(wall, CPU, result)`` of one call, its stdout and stderr sent to a buffer."""
    w, c = time.perf_counter(), time.process_time()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        out = fn()
    return time.perf_counter() - w, time.process_time() - c, out


def as_process(cmd: list[str], env: dict):
    """``(wall, the child's user + system CPU, stdout bytes)`` of one program run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    w = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, check=True, env=env).stdout
    wall = time.perf_counter() - w
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, out


def alternating(script, ours, repeat: int):
    """Medians ``(script wall, script CPU, qafast wall, qafast CPU)`` and the last results of
    ``repeat`` rounds, each running the script and then qafast."""
    rows = []
    want = got = None
    for _ in range(repeat):
        ws, cs, want = script()
        wq, cq, got = ours()
        rows.append((ws, cs, wq, cq))
    return tuple(statistics.median(col) for col in zip(*rows)), want, got


def report(name: str, row: str, medians) -> None:
    ws, cs, wq, cq = medians
    print(f"{name:9s}{row:11s}{ws:9.3f} /{wq:7.3f} s {ws / wq:7.1f}x   "
          f"CPU {cs:8.3f} /{cq:7.3f} s {cs / cq:7.1f}x", flush=True)


class Runner:
    """What every evaluation needs: the oracles, qafast, the child environment, a temp dir."""

    def __init__(self, args, qafast, tmp: Path):
        self.oracles = Path(args.oracles)
        self.n = args.questions
        self.repeat = args.repeat
        self.nltk_share = args.nltk_share
        self.nltk_phrases = args.nltk_text
        self.qafast = qafast
        self.tmp = tmp
        src = str(Path(qafast.__file__).resolve().parent.parent)
        # The TyDi script visits tied string ids in set order: one hash seed for both sides.
        self.env = dict(os.environ, PYTHONHASHSEED="0",
                        PYTHONPATH=src + os.pathsep + os.environ.get("PYTHONPATH", ""))

    def script(self, rel: str) -> Path:
        path = self.oracles / rel
        if not path.exists():
            raise LookupError(f"no {path}")
        return path

    def programs(self, name: str, script_cmd: list[str], qafast_cmd: list[str]) -> None:
        medians, want, got = alternating(
            lambda: as_process([sys.executable, *script_cmd], self.env),
            lambda: as_process([sys.executable, "-m", "qafast", *qafast_cmd], self.env),
            self.repeat)
        if want != got:
            raise SystemExit(f"{name}: qafast printed {got[-300:]!r}, the script {want[-300:]!r}")
        report(name, "end to end", medians)

    def scoring(self, name: str, script_fn, qafast_fn, same=lambda a, b: a == b) -> None:
        medians, want, got = alternating(lambda: in_process(script_fn),
                                         lambda: in_process(qafast_fn), self.repeat)
        if not same(got, want):
            raise SystemExit(f"{name}: qafast gave {got!r}, the script {want!r}")
        report(name, "scoring", medians)


def run_coqa(r: Runner) -> None:
    import bench_coqa

    path = r.script("coqa/evaluate-v1.0.py")
    script = load_script(path, "coqa_official")
    data, preds = bench_coqa.make_coqa(r.n, 34)
    d, p = r.tmp / "coqa_data.json", r.tmp / "coqa_pred.json"
    d.write_text(json.dumps(data), encoding="utf-8")
    p.write_text(json.dumps(preds), encoding="utf-8")
    evaluator = script.CoQAEvaluator(str(d))           # the script reads the files itself
    pred_dict = script.CoQAEvaluator.preds_to_dict(str(p))
    r.scoring("CoQA", lambda: evaluator.model_performance(pred_dict),
              lambda: r.qafast.coqa(data, preds))
    files = ["--data-file", str(d), "--pred-file", str(p)]
    r.programs("CoQA", [str(path), *files], ["coqa", *files])


def run_quac(r: Runner) -> None:
    import bench_quac

    path = r.script("quac/scorer.py")
    script = load_script(path, "quac_official")
    script.args = argparse.Namespace(min_f1=0.4, verbose=False)   # what eval_fn reads
    gold, lines = bench_quac.make_data(r.n, 0)
    v, m = r.tmp / "quac_val.json", r.tmp / "quac_output.jsonl"
    v.write_text(json.dumps(gold), encoding="utf-8")
    m.write_text("".join(json.dumps(rec) + "\n" for rec in lines), encoding="utf-8")
    preds = bench_quac.scripts_predictions(lines)
    r.scoring("QuAC", lambda: script.eval_fn(gold["data"], preds, False),
              lambda: r.qafast.quac(gold, lines))
    files = ["--val_file", str(v), "--model_output", str(m)]
    r.programs("QuAC", [str(path), *files], ["quac", *files])


def run_tydi(r: Runner) -> None:
    import bench_tydi

    path = r.script("tydi/tydi_eval.py")
    gold_path, pred_path = bench_tydi.generate(r.n, str(r.tmp))
    score = bench_tydi.script_scoring(str(path.parent), gold_path, pred_path)
    with gzip.open(gold_path, "rt", encoding="utf-8") as f:
        gold = [json.loads(line) for line in f]
    with open(pred_path, encoding="utf-8") as f:
        preds = [json.loads(line) for line in f]
    r.scoring("TyDi QA", score, lambda: r.qafast.tydi_by_language(gold, preds),
              same=lambda a, b: json.dumps(a) == json.dumps(b))
    files = ["--gold_path", gold_path, "--predictions_path", pred_path]
    r.programs("TyDi QA", [str(path), *files], ["tydi", *files])


def run_mlqa(r: Runner, lang: str) -> None:
    import bench_multilingual

    path = r.script("mlqa/mlqa_evaluation_v1.py")
    script = load_script(path, "mlqa_official")
    data, preds = bench_multilingual.make(r.n, lang, seed=7 + len(lang) + ord(lang[0]))
    d, p = r.tmp / f"mlqa_{lang}.json", r.tmp / f"mlqa_{lang}_pred.json"
    d.write_text(json.dumps({"version": "1.0", "data": data}, ensure_ascii=False),
                 encoding="utf-8")
    p.write_text(json.dumps(preds, ensure_ascii=False), encoding="utf-8")
    name = f"MLQA {lang}"
    r.scoring(name, lambda: script.evaluate(data, preds, lang),
              lambda: r.qafast.mlqa(data, preds, lang))
    r.programs(name, [str(path), str(d), str(p), lang], ["mlqa", str(d), str(p), lang])


def _cmrc_script(r: Runner) -> Path:
    path = r.script("cmrc/cmrc2018_evaluate.py")
    try:
        import nltk

        nltk.word_tokenize("a b")
    except ImportError:
        raise LookupError("nltk is not installed") from None
    except LookupError:
        raise LookupError("NLTK's punkt_tab data is not installed (NLTK_DATA)") from None
    return path


def _cmrc_same(got: dict, want: tuple) -> bool:
    return (got["F1"], got["EM"], got["TOTAL"], got["SKIP"]) == want


def run_cmrc(r: Runner) -> None:
    import bench_multilingual

    data, preds = bench_multilingual.make(r.n, "zh", seed=11, cmrc_form=True,
                                          nltk_share=r.nltk_share,
                                          phrases=bench_multilingual.PHRASES[r.nltk_phrases])
    _against_cmrc_script(r, "CMRC", data, preds)


def _against_cmrc_script(r: Runner, name: str, data, preds) -> None:
    """The CMRC script beside ``qafast <name>`` on the data written as files. ``qafast drcd``
    prints by default what the CMRC script prints, which is qafast.cmrc's numbers: that is
    the scoring timed against the script's for both."""
    path = _cmrc_script(r)
    script = load_script(path, "cmrc_official")
    d, p = r.tmp / f"{name.lower()}.json", r.tmp / f"{name.lower()}_pred.json"
    d.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    p.write_text(json.dumps(preds, ensure_ascii=False), encoding="utf-8")
    r.scoring(name, lambda: script.evaluate(data, preds), lambda: r.qafast.cmrc(data, preds),
              same=_cmrc_same)
    r.programs(name, [str(path), str(d), str(p)], [name.lower(), str(d), str(p)])


# Traditional characters (DRCD is Taiwanese Wikipedia), with its full-width punctuation.
DRCD_CHARS = list("臺灣國語學歷史資訊經濟發現電腦網路開放時間區域醫院") + [
    "，", "。", "《", "》", "？", "、", "；", "：", "1995", "NBA", "（", "）"]


def make_drcd(n: int, seed: int, nltk_share: float = 0.0, phrases: str = "punkt"):
    """SQuAD-format DRCD-shaped data and predictions (3% of the questions not predicted;
    ``nltk_share`` of the answers given English from ``bench_multilingual.PHRASES[phrases]``)."""
    import bench_multilingual

    english = bench_multilingual.PHRASES[phrases]
    rng = random.Random(seed)

    def text():
        t = "".join(rng.choice(DRCD_CHARS) for _ in range(rng.randint(1, 8)))
        if nltk_share and rng.random() < nltk_share:
            t += rng.choice(english)
        return t

    qas, preds = [], {}
    for i in range(n):
        golds = [text() for _ in range(rng.randint(1, 3))]
        qid = f"{i // 7}-{i % 7}-1"
        qas.append({"id": qid, "question": "?",
                    "answers": [{"text": g, "answer_start": 0} for g in golds]})
        x = rng.random()
        if x < 0.03:
            continue
        preds[qid] = rng.choice(golds) if x < 0.4 else (
            rng.choice(golds) + rng.choice(["", "。", "？"]) if x < 0.6 else text())
    return {"version": "1.3", "data": [{"title": "t", "id": "1",
                                        "paragraphs": [{"context": "", "id": "1-1",
                                                        "qas": qas}]}]}, preds


def run_drcd(r: Runner) -> None:
    data, preds = make_drcd(r.n, 13, r.nltk_share, r.nltk_phrases)
    _against_cmrc_script(r, "DRCD", data, preds)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3, help="alternating rounds per row")
    ap.add_argument("--nltk-share", type=float, default=0.0,
                    help="CMRC and DRCD: share of answers given English with sentence periods "
                         "(\"Mr. Smith\"), which qafast tokenizes with nltk's Punkt model files "
                         "but without nltk for the nltk releases it was checked against "
                         "(default 0: plain runs of Latin text only)")
    ap.add_argument("--nltk-text", choices=("punkt", "wide"), default="punkt",
                    help="the English --nltk-share adds: 'punkt', periods inside the text "
                         "(\"Mr. Smith\"), for which qafast reads nltk's Punkt model files; "
                         "'wide', final "
                         "periods, contractions and quotes (\"Apple Inc.\", \"don't\"), which "
                         "qafast tokenizes without nltk where the installed nltk release is one "
                         "it was checked against")
    ap.add_argument("--oracles", default="/work/scratch/oracles",
                    help="directory holding the official scripts (see the docstring)")
    ap.add_argument("--only", default=",".join(EVALUATIONS),
                    help=f"comma-separated subset of {', '.join(EVALUATIONS)} (also "
                         f"{', '.join('mlqa-' + x for x in MLQA_OTHER_LANGS)})")
    args = ap.parse_args()
    qafast, why = import_qafast()
    if qafast is None:
        print(why, file=sys.stderr)
        return 1
    runs = {"coqa": run_coqa, "quac": run_quac, "tydi": run_tydi,
            "mlqa-en": lambda r: run_mlqa(r, "en"), "mlqa-zh": lambda r: run_mlqa(r, "zh"),
            "cmrc": run_cmrc, "drcd": run_drcd}
    chosen = [e.strip() for e in args.only.split(",") if e.strip()]
    for name in chosen:   # MLQA's other answer languages (synthetic text as for Chinese)
        if name.startswith("mlqa-") and name not in runs and name[5:] in MLQA_OTHER_LANGS:
            runs[name] = lambda r, lang=name[5:]: run_mlqa(r, lang)
    unknown = [e for e in chosen if e not in runs]
    if unknown:
        ap.error(f"unknown evaluation(s): {', '.join(unknown)}")
    for line in machine_info():
        print(line)
    print(f"\n{args.questions:,} questions each; medians of {args.repeat} alternating rounds, "
          "script / qafast seconds and their ratio")
    for name in chosen:
        with tempfile.TemporaryDirectory() as tmp:
            try:
                runs[name](Runner(args, qafast, Path(tmp)))
            except LookupError as exc:
                print(f"{name:9s}not run: {exc}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
