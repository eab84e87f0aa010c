"""Natural Questions: qafast against the official nq_eval.py on 100,000 generated examples.

Usage: ``python benchmarks/bench_nq.py [--n 100000] [--oracle DIR] [--repeat K] [--keep D]``,
``DIR`` holding the
unmodified ``nq_eval.py`` and ``eval_utils.py`` (google-research-datasets/natural-questions;
needs absl-py and six). Writes gzipped gold (5 annotations each, only the fields the script
reads, plus ``--doc-tokens`` document tokens a line as the original format has) and a predictions
JSON (half copied from an annotator, tied scores), then times in one run:

* the script as a program (``python nq_eval.py --gold_path ... --predictions_path ...``)
  against ``qafast nq`` with the same arguments, both as subprocesses, end to end: ``K`` runs
  of each, alternating, their median wall time and median CPU time (user + system of the
  child), as the machine may be busy (``--keep D`` writes the files to ``D`` once and reuses
  them);
* the script's scoring alone (its ``score_answers`` and ``get_metrics_with_answer_stats`` on
  the gold and predictions it has read) against qafast's on the same files once read.

* ``qafast.nq`` on the two files, one call against four threads each making the same call
  (the reading and scoring kernels release the GIL: on two free cores about twice one call),
  with the CPU time of each: one call decompresses in a thread of its own while it scans, so
  its wall time is below its CPU time and four calls on two cores take at least
  ``4 * CPU / 2``; the last figure is the four threads' wall time over that bound (1.0: no
  waiting on the GIL or on one another).

Both programs' Python modules are compiled to bytecode first (qafast's and the script's
``eval_utils``), as an installed package's are: with ``PYTHONDONTWRITEBYTECODE`` set, each run
compiled qafast's modules again, some 0.1 s of its CPU time.

Prints each time and the ratios; asserts that both print the same.
"""

import argparse
import compileall
import gzip
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def _span(rng, null_rate):
    if rng.random() < null_rate:
        return {"start_byte": -1, "end_byte": -1, "start_token": -1, "end_token": -1}
    sb, st = rng.randint(0, 50_000), rng.randint(0, 5_000)
    return {"start_byte": sb, "end_byte": sb + rng.randint(1, 2_000),
            "start_token": st, "end_token": st + rng.randint(1, 200)}


def generate(n, d, seed=0, doc_tokens=0):
    rng = random.Random(seed)
    gold_path = os.path.join(d, "gold.jsonl.gz")
    pred_path = os.path.join(d, "predictions.json")
    preds = []
    with gzip.open(gold_path, "wt", encoding="utf-8") as g:
        for _ in range(n):
            eid = rng.getrandbits(63) - (1 << 62)
            anns = []
            for _ in range(5):
                yn = rng.choice(["NONE"] * 8 + ["YES", "NO"])
                anns.append({"long_answer": _span(rng, 0.4),
                             "short_answers": [] if yn != "NONE" else
                             [_span(rng, 0.1) for _ in range(rng.choice([0, 0, 1, 1, 2]))],
                             "yes_no_answer": yn, "annotation_id": rng.getrandbits(60)})
            record = {"example_id": eid, "annotations": anns}
            if doc_tokens:  # the original format's document, as both sides must read it
                record["document_tokens"] = [
                    {"token": "word", "start_byte": 5 * j, "end_byte": 5 * j + 4,
                     "html_token": False} for j in range(doc_tokens)]
            g.write(json.dumps(record) + "\n")
            p = {"example_id": eid, "long_answer_score": round(rng.uniform(-5, 20), 1),
                 "short_answers_score": round(rng.uniform(-5, 20), 1)}
            if rng.random() < 0.5:
                a = rng.choice(anns)
                p.update(long_answer=a["long_answer"], short_answers=a["short_answers"],
                         yes_no_answer=a["yes_no_answer"])
            else:
                p.update(long_answer=_span(rng, 0.3), short_answers=[_span(rng, 0.3)],
                         yes_no_answer="NONE")
            preds.append(p)
    rng.shuffle(preds)
    with open(pred_path, "w", encoding="utf-8") as f:
        json.dump({"predictions": preds}, f)
    return gold_path, pred_path


def timed(f):
    t = time.perf_counter()
    out = f()
    return time.perf_counter() - t, out


def _child_run(cmd, env):
    """(wall seconds, CPU seconds of the child, its stdout)"""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--oracle", default="/work/scratch/oracles/nq")
    ap.add_argument("--doc-tokens", type=int, default=0,
                    help="document tokens on each gold line (the original format has ~7,000)")
    ap.add_argument("--repeat", type=int, default=1,
                    help="end-to-end runs of each program, alternating (medians are shown)")
    ap.add_argument("--keep", default=None,
                    help="a directory for the generated files, reused when they are there")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        if a.keep:
            os.makedirs(a.keep, exist_ok=True)
            gold_path = os.path.join(a.keep, "gold.jsonl.gz")
            pred_path = os.path.join(a.keep, "predictions.json")
            if not (os.path.exists(gold_path) and os.path.exists(pred_path)):
                generate(a.n, a.keep, doc_tokens=a.doc_tokens)
        else:
            gold_path, pred_path = generate(a.n, d, doc_tokens=a.doc_tokens)
        args = [f"--gold_path={gold_path}", f"--predictions_path={pred_path}", "--num_threads=1"]
        compileall.compile_dir(os.path.join(HERE, "..", "src", "qafast"), quiet=1)
        compileall.compile_file(os.path.join(a.oracle, "eval_utils.py"), quiet=1)
        env = dict(os.environ, PYTHONHASHSEED="0",
                   PYTHONPATH=os.path.join(HERE, "..", "src"))
        script_runs, qafast_runs = [], []
        for _ in range(a.repeat):
            *t, theirs = _child_run([sys.executable, os.path.join(a.oracle, "nq_eval.py"),
                                     *args], env)
            script_runs.append(t)
            *t, ours = _child_run([sys.executable, "-m", "qafast", "nq", *args], env)
            qafast_runs.append(t)
            assert ours == theirs, (ours, theirs)
        t_script, c_script = (statistics.median(x) for x in zip(*script_runs))
        t_qafast, c_qafast = (statistics.median(x) for x in zip(*qafast_runs))

        sys.path.insert(0, os.path.join(HERE, "..", "src"))
        sys.path.insert(0, a.oracle)
        import eval_utils
        import nq_eval

        nq_eval.FLAGS(["nq_eval", *args])
        g = eval_utils.read_annotation(gold_path, n_threads=1)
        p = eval_utils.read_prediction_json(pred_path)
        t_score, _ = timed(lambda: nq_eval.get_metrics_with_answer_stats(
            *nq_eval.score_answers(g, p)))

        from qafast import nq_eval as ours_mod

        gold = ours_mod._read_gold(gold_path)
        preds = ours_mod._read_predictions(pred_path)
        t_ours, _ = timed(lambda: ours_mod._Scored(gold, preds, 2, 2).metrics())
        t_read, _ = timed(lambda: (ours_mod._read_gold(gold_path),
                                   ours_mod._read_predictions(pred_path)))
        import qafast

        c = time.process_time()
        t_one, _ = timed(lambda: qafast.nq(gold_path, pred_path))
        c_one = time.process_time() - c
        threads = [threading.Thread(target=qafast.nq, args=(gold_path, pred_path))
                   for _ in range(4)]
        c = time.process_time()
        t_four, _ = timed(lambda: ([t.start() for t in threads], [t.join() for t in threads]))
        c_four = time.process_time() - c
    print(f"Natural Questions, {a.n:,} examples, 5 annotations and {a.doc_tokens:,} document "
          "tokens each")
    print(f"  end to end (subprocess): nq_eval.py {t_script:8.3f} s   qafast nq {t_qafast:8.3f} s"
          f"   ratio {t_script / t_qafast:6.1f}x   (median of {a.repeat})")
    print(f"  end to end, CPU time:    nq_eval.py {c_script:8.3f} s   qafast nq {c_qafast:8.3f} s"
          f"   ratio {c_script / c_qafast:6.1f}x")
    print(f"  scoring (parsed input):  nq_eval.py {t_score:8.3f} s   qafast    {t_ours:8.3f} s"
          f"   ratio {t_score / t_ours:6.1f}x")
    print(f"  qafast reading the two files: {t_read:.3f} s")
    cores = os.cpu_count() or 1
    print(f"  qafast.nq: one call {t_one:.3f} s, four threads {t_four:.3f} s   ratio "
          f"{t_four / t_one:4.2f} (4 threads on {cores} cores)")
    print(f"  qafast.nq CPU time: one call {c_one:.3f} s, four threads {c_four:.3f} s;"
          f" four threads' wall over their CPU / {cores} cores {t_four / (c_four / cores):4.2f}")


if __name__ == "__main__":
    main()
