"""trec_eval's ``-N`` (the number of documents in the collection), which only ``utility``'s
fourth coefficient reads: ``qafast trec -N`` against the trec_eval 10.0 binary, byte for
byte, on random runs (when a binary is at hand), and ``evaluate(collection_size=...)``
against the specification."""

import contextlib
import io
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import qafast
from qafast.cli import main
from qafast.reference import ranking as spec

TREC_EVAL = Path("/work/tools/trec_eval/trec_eval")
BINARY = str(TREC_EVAL) if TREC_EVAL.exists() else shutil.which("trec_eval")
SIZES = (0, 1, 7, 1000, -5, 123456789, 2**40 + 1, 2**53)
UTILITIES = ["utility", "utility.1,2,3,4", "utility.0,0,0,1", "utility.-1,0,3,0.5",
             "utility.0,0,0,0.1"]


def random_case(seed: int):
    rng = random.Random(seed)
    qrels, run = {}, {}
    for q in range(rng.randint(1, 6)):
        docs = [f"d{d}" for d in range(rng.randint(1, 15))]
        judged = rng.sample(docs, rng.randint(0, len(docs)))
        # a judgment graded 0 or more in every query: trec_eval stops on a query judged only
        # negatively (tests/fuzz_trec_eval.py says why)
        qrels[f"q{q}"] = {"x": rng.choice((0, 1)),
                          **{d: rng.choice((-1, 0, 1, 2)) for d in judged}}
        if rng.random() < 0.85:
            run[f"q{q}"] = {d: rng.choice((0.5, 1.0, 2.0)) for d in docs
                            if rng.random() < 0.8} or {docs[0]: 1.0}
    if not run:
        run["q0"] = {"d0": 1.0}
    return qrels, run


def write_case(tmp_path, qrels, run):
    qrels_path, run_path = tmp_path / "qrels", tmp_path / "run"
    qrels_path.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items()
                                  for d, g in docs.items()))
    run_path.write_text("".join(f"{q} Q0 {d} {i + 1} {s} tag\n" for q, docs in run.items()
                                for i, (d, s) in enumerate(docs.items())))
    return qrels_path, run_path


def qafast_trec(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["trec", *argv])
    return code, out.getvalue(), err.getvalue()


@pytest.mark.skipif(BINARY is None, reason="no trec_eval binary")
@pytest.mark.parametrize("seed", range(12))
def test_trec_minus_n_is_trec_eval_s_output(tmp_path, seed):
    rng = random.Random(seed)
    qrels, run = random_case(seed)
    qrels_path, run_path = write_case(tmp_path, qrels, run)
    options = [f"-N{rng.choice(SIZES)}", "-m", "set", *(x for m in rng.sample(UTILITIES, 2)
                                                          for x in ("-m", m))]
    options += rng.sample(["-q", "-c", "-J", "-l2", "-M3"], rng.randint(0, 3))
    want = subprocess.run([BINARY, *options, str(qrels_path), str(run_path)],
                          capture_output=True, text=True)
    if want.returncode != 0:  # a qrels query missing from the run, without -c
        options.append("-c")
        want = subprocess.run([BINARY, *options, str(qrels_path), str(run_path)],
                              capture_output=True, text=True, check=True)
    code, out, _ = qafast_trec([*options, str(qrels_path), str(run_path)])
    assert code == 0
    assert out == want.stdout, options
    # the numpy path (standard input takes it) prints the same
    with open(run_path, "rb") as f:
        proc = subprocess.run([sys.executable, "-m", "qafast", "trec", *options,
                               str(qrels_path), "-"], stdin=f, capture_output=True, text=True,
                              env={**os.environ,
                                   "PYTHONPATH": str(Path(qafast.__file__).parents[1])})
    assert proc.stdout == want.stdout, (options, proc.stderr)


@pytest.mark.parametrize("seed", range(8))
def test_evaluate_collection_size_is_the_specification(seed):
    qrels, run = random_case(seed)
    size = random.Random(seed).choice(SIZES)
    names = ["utility", "utility.2,-1,1,0.25", "set_P"]
    got = qafast.evaluate(qrels, run, names, collection_size=size, per_query=True)
    for q, row in got.items():
        rq = spec.rank_query(qrels[q], run[q])
        assert row["utility"] == spec.measure("utility", rq, (1, -1, 0, 0, size))
        assert row["utility_2,-1,1,0.25"] == spec.measure("utility", rq, (2, -1, 1, 0.25, size))
        assert row["set_P"] == spec.measure("set_P", rq)
    # evaluate_runs takes it too, and 0 is trec_eval's default
    both = qafast.evaluate_runs(qrels, {"a": run, "b": run}, names, collection_size=size)
    assert both["a"] == both["b"] == qafast.evaluate(qrels, run, names, collection_size=size)
    assert qafast.evaluate(qrels, run, names, collection_size=0) == qafast.evaluate(
        qrels, run, names)


def test_bad_collection_sizes_are_refused_by_name(tmp_path):
    qrels, run = {"q": {"a": 1}}, {"q": {"a": 1.0}}
    with pytest.raises(TypeError, match="collection size must be an int"):
        qafast.evaluate(qrels, run, "utility", collection_size=1.5)
    with pytest.raises(ValueError, match="too large"):
        qafast.evaluate(qrels, run, "utility", collection_size=2**53 + 1)
    qrels_path, run_path = write_case(tmp_path, qrels, run)
    code, out, err = qafast_trec([f"-N{2**60}", str(qrels_path), str(run_path)])
    assert code == 1 and out == "" and "-N takes at most 2**53" in err
