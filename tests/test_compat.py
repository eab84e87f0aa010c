"""qafast.compat, the pytrec_eval drop-in, against pytrec-eval-terrier 0.5.11 itself: keys,
measure sets, aggregation to the bit, and the TREC file parsers."""

import io
import random
import struct
import warnings

import numpy as np
import pytest

import qafast
import qafast.compat

pytrec_eval = pytest.importorskip("pytrec_eval")

QRELS = {"q1": {"a": 2, "b": 0, "c": 1, "z": 3}, "q2": {"a": 0, "b": 1}, "q3": {"x": 1}}
RUN = {"q1": {"a": 0.9, "b": 0.8, "c": 0.7, "d": 0.6}, "q2": {"a": 0.5, "b": 0.3, "x": 0.1},
       "q3": {"y": 2.0, "x": 1.0}}


def assert_same_output(measures):
    theirs = pytrec_eval.RelevanceEvaluator(QRELS, measures).evaluate(RUN)
    ours = qafast.RelevanceEvaluator(QRELS, measures).evaluate(RUN)
    assert list(ours) == list(theirs)
    for q in theirs:
        assert list(ours[q].items()) == list(theirs[q].items()), (measures, q)


@pytest.mark.parametrize("measures", [
    {"set_F"}, {"set_F.1"}, {"set_F.0.5"}, {"set_F_0.5"}, {"set_F.0"}, {"set_F.1.0"},
    {"11pt_avg"}, {"11pt_avg.0.5"}, {"11pt_avg.0.2,0.5"}, {"11pt_avg_0.1"}, {"utility"},
    {"utility.3,2,1,0"}, {"relstring"}, {"relstring.5"}, {"official", "set_F.2"},
    {"set", "utility.1,2,3,4"}, {"all_trec"},
])
def test_parameterised_measures_keep_pytrec_evals_bare_keys(measures):
    assert_same_output(measures)


@pytest.mark.parametrize("measures", [
    # set_F named twice: pytrec_eval joins the parameters (in string order) and trec_eval
    # takes the first
    {"set_F.1", "set_F.0.5"}, {"set_F.10", "set_F.2"}, {"set_F", "set_F.0.5"},
    {"set_F.1,2"},
    # a repeated utility coefficient, a merged one, or a parameter pytrec_eval's digits-only
    # reading cuts short: trec_eval 9.0.8 rejects the count and pytrec_eval reports 0.0
    {"utility.1,1,0,0"}, {"utility.2,-1,0,0"}, {"utility", "utility.2,1,0,0"},
    {"utility.1,2,3,4", "utility.5,6,7,8"}, {"utility.0,1,2,3,4"}, {"utility.2"},
    {"utility.4,3,2,1", "utility.4"},
    # other repeats pytrec_eval merges, and parameters it ignores
    {"11pt_avg.0.5", "11pt_avg.0.2"}, {"11pt_avg.0.5,0.50"}, {"relstring.5", "relstring.3"},
    {"P.5", "P_5"}, {"P.5,5"}, {"success.1,1"}, {"P", "P.5"}, {"P.5.5"}, {"P_5x"},
    {"map_cut.5.5"}, {"iprec_at_recall.0.5,0.5"}, {"map.5"}, {"num_q.1"}, {"recip_rank_2"},
    {"ndcg_cut", "ndcg_cut.10", "ndcg_cut_5"}, {"Rprec_mult.0.5", "Rprec_mult.2"},
    {"success.0005"},
])
def test_measure_sets_pytrec_eval_accepts(measures):
    coefficients = qafast.compat._combine_measures(measures).get("utility", [])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert_same_output(measures)
    # a utility pytrec_eval cannot compute is said so, and nothing else warns
    assert len(caught) == (len(coefficients) not in (0, 4))


def test_a_utility_pytrec_eval_cannot_compute_warns():
    with pytest.warns(RuntimeWarning, match="needs 4 coefficients.*0.0"):
        ev = qafast.RelevanceEvaluator(QRELS, {"utility.2,-1,0,0"})
    assert ev.evaluate(RUN) == {q: {"utility": 0.0} for q in RUN}


@pytest.mark.parametrize("measures,message", [
    # trec_eval 9.0.8 aborts the process on these (an assert in pytrec_eval)
    ({"iprec_at_recall.0.5,0.50"}, "repeated"), ({"Rprec_mult.0.5,0.50"}, "repeated"),
    ({"P.05,5"}, "repeated"), ({"recall.0"}, "positive"), ({"ndcg.1=3"}, "level=gain"),
    ({"set_F.x"}, "unsupported measure"),
])
def test_measure_sets_that_crash_pytrec_eval_are_refused(measures, message):
    with pytest.raises(ValueError, match=message):
        qafast.RelevanceEvaluator(QRELS, measures)


def bits(x: float) -> bytes:
    return struct.pack("<d", x)


@pytest.mark.parametrize("n", [1, 2, 7, 9, 128, 129, 1000, 4099])
@pytest.mark.parametrize("measure", ["map", "P_10", "num_ret", "num_rel_ret", "gm_map",
                                     "gm_bpref"])
def test_compute_aggregated_measure_is_pytrec_evals_to_the_bit(n, measure):
    rng = random.Random(n)
    if measure.startswith("num_"):
        values = [float(rng.randrange(1000)) for _ in range(n)]
    elif measure.startswith("gm_"):
        values = [np.log(max(rng.random(), 1e-5)) for _ in range(n)]
    else:
        values = [rng.random() / 3 for _ in range(n)]
    ours = qafast.compute_aggregated_measure(measure, values)
    theirs = pytrec_eval.compute_aggregated_measure(measure, values)
    assert type(ours) is type(theirs) is float
    assert bits(ours) == bits(theirs)


def test_compute_aggregated_measure_of_real_per_query_values():
    rng = random.Random(0)
    docs = [f"d{i}" for i in range(50)]
    qrels = {f"q{i}": {d: rng.choice((0, 1, 2)) for d in rng.sample(docs, 10)}
             for i in range(300)}
    run = {q: {d: rng.random() for d in rng.sample(docs, 30)} for q in qrels}
    measures = {"map", "ndcg_cut_10", "num_rel_ret", "gm_map", "P_5"}
    res = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    assert res == qafast.RelevanceEvaluator(qrels, measures).evaluate(run)
    for m in ("map", "ndcg_cut_10", "num_rel_ret", "gm_map", "P_5"):
        values = [res[q][m] for q in res]
        assert bits(qafast.compute_aggregated_measure(m, values)) == bits(
            pytrec_eval.compute_aggregated_measure(m, values))


# ---------------------------------------------------------------------------------------------
# parse_run / parse_qrel

def run_lines(seed, n_queries=40):
    rng = random.Random(seed)
    lines = []
    for q in rng.sample(range(1000), n_queries):
        for r, d in enumerate(rng.sample(range(5000), rng.randrange(1, 60))):
            score = rng.choice([repr(rng.uniform(-50, 50)), f"{rng.random():.3e}",
                                str(rng.randrange(-9, 9)), f"{rng.random():.17g}", "1E+2"])
            lines.append(f"q{q}\tQ0 doc-{d}é {r + 1} {score} run{seed}\n")
    return lines


def qrel_lines(seed):
    rng = random.Random(seed)
    return [f"{q} 0 doc{d} {rng.choice((-1, 0, 1, 2, 10))}\n"
            for q in range(30) for d in rng.sample(range(500), rng.randrange(1, 40))]


def assert_identical(ours, theirs, value_type):
    assert type(ours) is type(theirs)
    assert ours == theirs
    assert list(ours) == list(theirs)
    for q in theirs:
        assert type(ours[q]) is dict
        assert list(ours[q].items()) == list(theirs[q].items())
        assert all(type(v) is value_type for v in ours[q].values())


@pytest.mark.parametrize("seed", range(3))
def test_parse_run_returns_what_pytrec_eval_returns(seed, tmp_path):
    path = tmp_path / "run.txt"
    path.write_text("".join(run_lines(seed)), encoding="utf-8")
    with open(path, encoding="utf-8") as f:
        theirs = pytrec_eval.parse_run(f)
    with open(path, encoding="utf-8") as f:
        assert_identical(qafast.parse_run(f), theirs, float)
    with open(path, encoding="utf-8") as f:  # a file already read in part
        next(f)
        partial = pytrec_eval.parse_run(f)
    with open(path, encoding="utf-8") as f:
        next(f)
        assert_identical(qafast.parse_run(f), partial, float)
    lines = [line.rstrip("\n") for line in run_lines(seed)]  # any iterable of lines
    assert_identical(qafast.parse_run(iter(lines)), pytrec_eval.parse_run(lines), float)


def test_parse_qrel_returns_what_pytrec_eval_returns(tmp_path):
    path = tmp_path / "qrels.txt"
    path.write_text("".join(qrel_lines(0)))
    with open(path) as f:
        theirs = pytrec_eval.parse_qrel(f)
    with open(path) as f:
        assert_identical(qafast.parse_qrel(f), theirs, int)
    with open(path, "rb") as f:  # a binary file gives the same str ids
        assert qafast.parse_qrel(f) == theirs


def test_parsers_read_in_blocks_across_line_boundaries(monkeypatch):
    monkeypatch.setattr(qafast.compat, "_BLOCK_CHARS", 64)
    lines = run_lines(7, n_queries=5)
    assert_identical(qafast.parse_run(io.StringIO("".join(lines))),
                     pytrec_eval.parse_run(io.StringIO("".join(lines))), float)
    bad = lines[:30] + [lines[3]] + lines[30:]
    with pytest.raises(ValueError, match=r"line 31: query '.*' retrieves document '.*' twice"):
        qafast.parse_run(io.StringIO("".join(bad)))
    broken = lines[:40] + ["q1 Q0 d1 1 not-a-number r\n"] + lines[40:]
    with pytest.raises(ValueError, match="line 41"):
        qafast.parse_run(io.StringIO("".join(broken)))


def test_parse_duplicates_and_paths_are_refused():
    with pytest.raises(ValueError, match="line 2: query 'q' judges document 'd' twice"):
        qafast.parse_qrel(["q 0 d 1", "q 0 d 0"])
    with pytest.raises(TypeError, match="iterable of its lines"):
        qafast.parse_run("run.txt")
