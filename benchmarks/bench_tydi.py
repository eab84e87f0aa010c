"""TyDi QA primary tasks: qafast against the official tydi_eval.py on 100,000 generated questions.

Usage: ``python benchmarks/bench_tydi.py [--n 100000] [--oracle DIR]``, ``DIR`` holding the
unmodified ``tydi_eval.py`` and ``eval_utils.py`` (google-research-datasets/tydiqa; needs
absl-py). Writes gzipped gold and JSONL predictions (11 languages, 3 annotations each, documents
of a few hundred multi-byte characters, tied scores), then times in one run:

* the script as a program (``python tydi_eval.py --gold_path ... --predictions_path ...``)
  against ``qafast tydi`` with the same arguments, both as subprocesses, end to end;
* the script's scoring alone (its ``score_answers`` and metric functions for every language,
  on the gold and predictions it has read) against :func:`qafast.tydi_by_language` on the
  records already parsed from JSON. qafast's side here also reads the fields of 200,000
  parsed records into its arrays, which the script did untimed, building its label objects
  as it read the files;
* the same work on both sides: the script's scoring as above against qafast's scoring of the
  gold and predictions it has read into its arrays (its internal reader, untimed).

Prints each time and the ratios; asserts that both print the same.
"""

import argparse
import gzip
import json
import os
import random
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
LANGS = ["english", "arabic", "bengali", "finnish", "indonesian", "japanese", "swahili",
         "korean", "russian", "telugu", "thai"]
WORDS = ["jambo", "日本語", "Ελληνικά", "বাংলা", "русский", "ไทย", "తెలుగు", "word", "한국어"]


def generate(n, d, seed=0):
    rng = random.Random(seed)
    gold_path = os.path.join(d, "gold.jsonl.gz")
    pred_path = os.path.join(d, "pred.jsonl")
    with gzip.open(gold_path, "wt", encoding="utf-8") as g, \
            open(pred_path, "w", encoding="utf-8") as p:
        for i in range(n):
            eid = rng.getrandbits(63) - (1 << 62)
            lang = LANGS[i % len(LANGS)]
            doc = " ".join(rng.choice(WORDS) for _ in range(40))
            anns = []
            for _ in range(3):
                if rng.random() < 0.3:
                    s = e = -1
                    idx = rng.choice([-1, 0])
                else:
                    s = rng.randint(0, 300)
                    e = s + rng.randint(1, 40)
                    idx = rng.randint(0, 4)
                yn = rng.choice(["NONE"] * 9 + ["YES"])
                if yn != "NONE":
                    s = e = -1
                anns.append({"passage_answer": {"candidate_index": idx},
                             "minimal_answer": {"plaintext_start_byte": s,
                                                "plaintext_end_byte": e},
                             "yes_no_answer": yn})
            g.write(json.dumps({"example_id": eid, "language": lang, "question_text": "q?",
                                "document_plaintext": doc, "annotations": anns},
                               ensure_ascii=False) + "\n")
            if rng.random() < 0.05:
                continue
            s = rng.randint(0, 300)
            p.write(json.dumps({
                "example_id": eid, "language": lang, "passage_answer_index": rng.randint(-1, 4),
                "passage_answer_score": round(rng.uniform(0, 20), 1),
                "minimal_answer": {"start_byte_offset": s, "end_byte_offset": s + rng.randint(1, 40)},
                "minimal_answer_score": round(rng.uniform(0, 20), 2),
                "yes_no_answer": "NONE"}) + "\n")
    return gold_path, pred_path


def timed(fn, repeat=1):
    best = None
    out = None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        dt = time.perf_counter() - t
        best = dt if best is None else min(best, dt)
    return best, out


def script_scoring(oracle, gold_path, pred_path):
    """The script's work after reading, for every language, as its main() does it."""
    sys.path.insert(0, oracle)
    import eval_utils
    import tydi_eval

    tydi_eval.FLAGS(["tydi_eval", f"--gold_path={gold_path}", f"--predictions_path={pred_path}"])
    gold = eval_utils.read_annotation(gold_path)
    pred = eval_utils.read_prediction_jsonl(pred_path)

    def run():
        per_gold, per_pred, out = {}, {}, {}
        for k, ex in gold.items():
            per_gold.setdefault(ex[0].language, {})[k] = ex
        for k, ex in pred.items():
            per_pred.setdefault(ex.language, {})[k] = ex
        for lang in LANGS:
            if lang in per_pred:
                pa, ma = tydi_eval.score_answers(per_gold.get(lang, {}), per_pred[lang])
                tydi_eval.compute_pr_curves(pa, targets=[0.5])
                tydi_eval.compute_pr_curves(ma, targets=[0.5])
                out[lang] = tydi_eval.get_metrics_with_answer_stats(pa, ma)
        return out
    return run


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--oracle", default="/work/scratch/oracles/tydi")
    a = ap.parse_args()
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import _common  # noqa: F401  (writes the in-tree bytecode, as an installed wheel has it)

    env = dict(os.environ, PYTHONHASHSEED="0",
               PYTHONPATH=os.path.join(HERE, "..", "src") + os.pathsep
               + os.environ.get("PYTHONPATH", ""))
    with tempfile.TemporaryDirectory() as d:
        gold_path, pred_path = generate(a.n, d)
        args = ["--gold_path", gold_path, "--predictions_path", pred_path]
        t_script, r_script = timed(lambda: subprocess.run(
            [sys.executable, os.path.join(a.oracle, "tydi_eval.py"), *args],
            capture_output=True, text=True, env=env, check=True))
        t_cli, r_cli = timed(lambda: subprocess.run(
            [sys.executable, "-m", "qafast", "tydi", *args],
            capture_output=True, text=True, env=env, check=True), repeat=3)
        assert r_cli.stdout == r_script.stdout, "qafast tydi printed something else"

        sys.path.insert(0, os.path.join(HERE, "..", "src"))
        import qafast

        run = script_scoring(a.oracle, gold_path, pred_path)
        t_score, theirs = timed(run)
        with gzip.open(gold_path, "rt", encoding="utf-8") as f:
            gold = [json.loads(line) for line in f]
        with open(pred_path, encoding="utf-8") as f:
            preds = [json.loads(line) for line in f]
        t_api, ours = timed(lambda: qafast.tydi_by_language(gold, preds), repeat=3)
        assert json.dumps(ours) == json.dumps(theirs), "qafast.tydi_by_language differs"
        from qafast import tydi_eval

        read_gold, read_preds = tydi_eval._Gold(gold), tydi_eval._Predictions(preds)
        t_read, ours = timed(lambda: qafast.tydi_by_language(read_gold, read_preds), repeat=3)
        assert json.dumps(ours) == json.dumps(theirs), "qafast scoring of read input differs"

    print(f"TyDi QA, {a.n:,} questions, 11 languages")
    print(f"  end to end (subprocess): tydi_eval.py {t_script:8.3f} s   qafast tydi "
          f"{t_cli:8.3f} s   ratio {t_script / t_cli:6.1f}x")
    print(f"  scoring (parsed input):  tydi_eval.py {t_score:8.3f} s   qafast      "
          f"{t_api:8.3f} s   ratio {t_score / t_api:6.1f}x")
    print(f"  scoring (read input):    tydi_eval.py {t_score:8.3f} s   qafast      "
          f"{t_read:8.3f} s   ratio {t_score / t_read:6.1f}x")


if __name__ == "__main__":
    main()
