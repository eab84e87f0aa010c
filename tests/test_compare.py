"""qafast.compare: p-values against scipy and the reference enumeration, invariances, the
agreement with ranx, reports, the command line and bad input."""

import json
import math
import random

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import qafast
from qafast import _distributions as dist
from qafast import _kernels
from qafast.comparison import Comparison, adjust_p_values
from qafast.reference import stats as ref
from _examples import examples

scipy_stats = pytest.importorskip("scipy.stats", reason="scipy is the reference for p-values")


def make_case(n_queries=40, n_runs=3, seed=0, ties=False, weight=0.3):
    """(qrels, {name: run}) with string ids and, unless ``ties``, distinct scores."""
    rng = random.Random(seed)
    qrels, runs = {}, {f"r{k}": {} for k in range(n_runs)}
    for q in range(n_queries):
        qid = f"q{q:03d}"
        docs = [f"d{rng.randrange(10**6)}" for _ in range(12)]
        docs = list(dict.fromkeys(docs))
        qrels[qid] = {d: rng.choice([0, 1, 1, 2]) for d in docs[:5]}
        for k in range(n_runs):
            scores = {}
            for d in docs:
                g = qrels[qid].get(d, 0)
                s = g * weight * (1 + k) + rng.random()
                scores[d] = round(s, 1) if ties else s
            runs[f"r{k}"][qid] = scores
    return qrels, runs


# -- distributions ------------------------------------------------------------------------

@pytest.mark.parametrize("df", [1, 2, 3, 5, 10, 29, 49, 50, 99, 100, 500, 1000, 4999, 9999])
def test_t_tail_equals_scipy(df):
    ts = np.concatenate([np.linspace(0.01, 6, 40), [8.0, 12.0, 20.0, 40.0]])
    for t in ts:
        expected = 2 * scipy_stats.t.sf(t, df)
        if expected < 1e-300:
            continue
        assert dist.t_two_sided(float(t), df) == pytest.approx(expected, rel=1e-12, abs=0)


@pytest.mark.parametrize("df", [1, 3, 10, 100, 9999])
@pytest.mark.parametrize("p", [0.3, 0.05, 0.025, 0.005, 1e-6])
def test_t_quantile_equals_scipy(df, p):
    assert dist.t_isf(p, df) == pytest.approx(scipy_stats.t.isf(p, df), rel=1e-12)


def test_xoshiro_stream_is_the_published_definition():
    out = np.empty(8, dtype=np.uint64)
    for seed, stream in [(0, 0), (1, 0), (0, 5), (2**64 - 1, 12345)]:
        _kernels.xoshiro_words(seed, stream, out)
        gen = ref.xoshiro_stream(seed, stream)
        assert out.tolist() == [next(gen) for _ in range(8)]


# -- the tests against scipy --------------------------------------------------------------

def per_query(a, b):
    return {"a": {f"q{i:03d}": {"m": float(x)} for i, x in enumerate(a)},
            "b": {f"q{i:03d}": {"m": float(x)} for i, x in enumerate(b)}}


@settings(max_examples=examples(60), deadline=None)
@given(st.integers(2, 80), st.integers(0, 2**31), st.sampled_from([1, 4, 1000]))
def test_student_and_wilcoxon_equal_scipy(n, seed, levels):
    # levels=4 gives many ties and zeros (Wilcoxon's permutation and asymptotic branches);
    # 1000 gives none (the exact branch up to 50 differences)
    rng = np.random.default_rng(seed)
    a = rng.integers(0, levels + 1, n) / levels
    b = rng.integers(0, levels + 1, n) / levels
    for test in ("student", "wilcoxon"):
        c = Comparison.from_per_query(per_query(a, b), baseline="a", test=test)
        got = c.p_value[0, 0]
        if test == "student":
            expected = scipy_stats.ttest_rel(b, a).pvalue
        else:
            expected = scipy_stats.wilcoxon(b, a).pvalue if np.any(a != b) else math.nan
        if math.isnan(expected):
            assert got == 1.0  # no difference at all: nothing to test
        else:
            assert got == pytest.approx(expected, rel=1e-12, abs=1e-300)


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=12),
       st.sampled_from(["bonferroni", "holm", "holm-sidak", "bh", "none"]))
@example([1.0, 0.2], "holm-sidak")
def test_corrections_equal_the_reference_and_scipy(ps, method):
    got = adjust_p_values(ps, method)
    assert got.tolist() == pytest.approx(ref.adjust(ps, method), rel=1e-12, abs=1e-300)
    if method == "bh":
        assert got.tolist() == pytest.approx(
            np.atleast_1d(scipy_stats.false_discovery_control(ps)).tolist(), rel=1e-12)


p_values = st.lists(st.one_of(st.sampled_from([0.0, 1.0, 0.05, 0.5]), st.floats(0, 1)),
                    min_size=1, max_size=14)


@settings(max_examples=examples(60), deadline=None)
@given(p_values, st.integers(1, 3))
@example([0.0, 0.0, 1.0, 1.0], 1)
@example([0.01], 1)
def test_benjamini_yekutieli_equals_statsmodels_scipy_and_the_reference(ps, repeat):
    multitest = pytest.importorskip("statsmodels.stats.multitest",
                                    reason="statsmodels is the reference for fdr_by")
    ps = ps * repeat  # ties
    got = adjust_p_values(ps, "by")
    assert got.tolist() == pytest.approx(ref.adjust(ps, "by"), rel=1e-12, abs=1e-300)
    _, theirs, _, _ = multitest.multipletests(ps, method="fdr_by")
    assert got.tolist() == pytest.approx(theirs.tolist(), rel=1e-12, abs=1e-300)
    assert got.tolist() == pytest.approx(
        np.atleast_1d(scipy_stats.false_discovery_control(ps, method="by")).tolist(),
        rel=1e-12, abs=1e-300)
    assert (got >= adjust_p_values(ps, "bh")).all() and (got <= 1).all()
    for alias in ("fdr_by", "Benjamini-Yekutieli"):
        assert adjust_p_values(ps, alias).tolist() == got.tolist()


def test_benjamini_yekutieli_per_column_and_in_compare():
    ps = np.array([[0.01, 0.2], [0.02, 0.01], [0.04, 0.03]])
    got = adjust_p_values(ps, "by")
    for j in range(2):
        assert got[:, j].tolist() == adjust_p_values(ps[:, j], "by").tolist()
    qrels, runs = make_case(n_queries=20, n_runs=4, seed=3)
    c = qafast.compare(qrels, runs, ["map", "P@5"], correction="by")
    assert c.correction == "by"
    assert c.p_adjusted.tolist() == adjust_p_values(c.p_value, "by").tolist()
    assert "Benjamini-Yekutieli correction per measure" in str(c)


# -- randomization test -------------------------------------------------------------------

@settings(max_examples=examples(100), deadline=None)
@given(st.lists(st.integers(-4, 4), min_size=2, max_size=10))
def test_exact_randomization_equals_brute_force(steps):
    diffs = [s / 4 for s in steps]
    a = [0.5] * len(diffs)
    b = [0.5 + d for d in diffs]
    c = Comparison.from_per_query(per_query(a, b), baseline="a", test="fisher")
    assert c.exact
    assert c.p_value[0, 0] == ref.randomization_exact([y - x for x, y in zip(a, b)])


def test_monte_carlo_randomization_is_the_reference_stream_and_reproducible():
    rng = np.random.default_rng(3)
    a, b = rng.random(70), rng.random(70) + 0.05
    pq = per_query(a, b)
    c1 = Comparison.from_per_query(pq, baseline="a", test="fisher", n_resamples=300, seed=9)
    c2 = Comparison.from_per_query(pq, baseline="a", test="fisher", n_resamples=300, seed=9,
                                   workers=2)
    assert not c1.exact and c1.n_resamples == 300
    assert c1.p_value[0, 0] == c2.p_value[0, 0]
    assert c1.p_value[0, 0] == ref.randomization_monte_carlo(list(b - a), 300, 9)


@pytest.mark.parametrize("seed", range(4))
def test_monte_carlo_randomization_is_near_the_exact_one(seed):
    rng = np.random.default_rng(seed)
    n = 13
    a = rng.integers(0, 5, n) / 4
    b = np.clip(a + rng.integers(-1, 3, n) / 4, 0, 1)
    pq = per_query(a, b)
    exact = Comparison.from_per_query(pq, baseline="a", test="fisher", n_resamples=2**13)
    mc = Comparison.from_per_query(pq, baseline="a", test="fisher", n_resamples=2**13 - 1,
                                   seed=seed)
    assert exact.exact and not mc.exact
    p = exact.p_value[0, 0]
    se = math.sqrt(max(p * (1 - p), 1e-9) / mc.n_resamples)
    assert abs(mc.p_value[0, 0] - p) <= 3 * se


def test_bootstrap_is_reproducible_and_near_the_t_test():
    rng = np.random.default_rng(5)
    a = rng.random(400)
    b = a + rng.normal(0.02, 0.2, 400)
    pq = per_query(a, b)
    c1 = Comparison.from_per_query(pq, baseline="a", test="bootstrap", n_resamples=4000,
                                   ci="bootstrap")
    c2 = Comparison.from_per_query(pq, baseline="a", test="bootstrap", n_resamples=4000,
                                   ci="bootstrap", workers=2)
    t = Comparison.from_per_query(pq, baseline="a", test="student")
    assert c1.p_value.tolist() == c2.p_value.tolist()
    assert c1.ci_low.tolist() == c2.ci_low.tolist()
    assert abs(c1.p_value[0, 0] - t.p_value[0, 0]) < 0.03
    assert c1.ci_low[0, 0] == pytest.approx(t.ci_low[0, 0], abs=0.01)
    d = b - a
    half = scipy_stats.t.isf(0.025, len(d) - 1) * d.std(ddof=1) / math.sqrt(len(d))
    assert t.ci_low[0, 0] == pytest.approx(d.mean() - half, rel=1e-12)
    assert t.effect_size[0, 0] == pytest.approx(d.mean() / d.std(ddof=1), rel=1e-12)


# -- compare(): per-query values, means, invariances --------------------------------------

def test_means_and_per_query_values_are_evaluates():
    qrels, runs = make_case(ties=True)
    measures = ["map", "ndcg@10", "P@5", "recip_rank"]
    c = qafast.compare(qrels, runs, measures, baseline="r0")
    for r, name in enumerate(c.runs):
        means = qafast.evaluate(qrels, runs[name], measures)
        assert c.means[r].tolist() == list(means.values())  # bit for bit
        pq = qafast.evaluate(qrels, runs[name], measures, per_query=True)
        assert c.query_ids == list(pq)
        assert c.values[r].tolist() == [list(v.values()) for v in pq.values()]


def test_order_of_runs_queries_rows_and_workers_does_not_matter():
    qrels, runs = make_case(ties=True, seed=2)
    measures = ["map", "P@5"]
    c = qafast.compare(qrels, runs, measures, test="fisher", n_resamples=500)
    rng = random.Random(1)
    names = list(runs)
    rng.shuffle(names)
    shuffled = {}
    for name in names:
        qids = list(runs[name])
        rng.shuffle(qids)
        shuffled[name] = {}
        for q in qids:
            docs = list(runs[name][q].items())
            rng.shuffle(docs)
            shuffled[name][q] = dict(docs)
    qrels_items = list(qrels.items())
    rng.shuffle(qrels_items)
    c2 = qafast.compare(dict(qrels_items), shuffled, measures, test="fisher",
                        n_resamples=500, workers=2)
    for name in runs:
        assert (c.values[c.runs.index(name)] == c2.values[c2.runs.index(name)]).all()
        assert (c.means[c.runs.index(name)] == c2.means[c2.runs.index(name)]).all()
    c3 = qafast.compare(qrels, runs, measures, test="fisher", n_resamples=500, workers=2)
    assert c3.p_value.tolist() == c.p_value.tolist()


def test_runs_given_as_files_frames_and_runs_agree(tmp_path):
    pd = pytest.importorskip("pandas")
    qrels, runs = make_case(n_queries=15)
    path = tmp_path / "r1.run"
    with open(path, "w") as f:
        for q, docs in runs["r1"].items():
            f.writelines(f"{q} Q0 {d} {rank} {s!r} r1\n" for rank, (d, s) in enumerate(sorted(docs.items(), key=lambda x: -x[1]), 1))
    rows = [(q, d, s) for q, docs in runs["r2"].items() for d, s in docs.items()]
    frame = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    mixed = {"r0": qafast.Run(runs["r0"]), "r1": str(path), "r2": frame}
    a = qafast.compare(qafast.Qrels(qrels), mixed, ["map", "P@5"])
    b = qafast.compare(qrels, runs, ["map", "P@5"])
    assert a.values.tolist() == b.values.tolist()


def test_queries_qrels_scores_missing_queries_as_zero():
    qrels, runs = make_case(n_queries=10)
    del runs["r1"]["q003"]
    with pytest.raises(ValueError, match=r"run 'r1' has no value for 1 query of run 'r0': 'q003'"):
        qafast.compare(qrels, runs, ["map"])
    c = qafast.compare(qrels, runs, ["map"], queries="qrels")
    assert len(c.query_ids) == 10
    assert c.values[1, c.query_ids.index("q003"), 0] == 0.0
    assert c.means[1, 0] == qafast.evaluate(qrels, runs["r1"], ["map"], queries="qrels")["map"]


# -- agreement with ranx ------------------------------------------------------------------

def test_same_means_and_decisions_as_ranx():
    ranx = pytest.importorskip("ranx", reason="ranx (test extra) is the peer for compare")
    qrels, runs = make_case(n_queries=60, n_runs=4, seed=4, weight=0.1)
    ranx_measures = ["map", "ndcg@10", "precision@5"]
    ours = ["map", "ndcg@10", "P@5"]
    rq = ranx.Qrels(qrels)
    rr = [ranx.Run(r, name=n) for n, r in runs.items()]
    for test in ("student", "fisher", "tukey"):
        report = ranx.compare(rq, rr, ranx_measures, stat_test=test, max_p=0.05,
                              n_permutations=2000, random_seed=42)
        c = qafast.compare(qrels, runs, ours, test=test, correction="none", alpha=0.05,
                           n_resamples=2000)
        for r, name in enumerate(c.runs):
            for j, m in enumerate(ranx_measures):
                assert c.means[r, j] == pytest.approx(report.results[name][m], rel=1e-12)
        for k, (a, b) in enumerate(c.pairs):
            for j, m in enumerate(ranx_measures):
                theirs = report.comparisons[a, b][m]
                if test == "fisher":
                    # different random streams: decide only where both are clear of alpha.
                    # ranx compares the permuted mean difference with the observed one
                    # without a tolerance, so with a few equal non-zero differences the
                    # observed sign vector itself can fall short of the observed value by
                    # a rounding error and ranx reports p = 0 (qafast counts sums within
                    # 1e-10 of sum(|d|) as equal); such pairs are left out.
                    d = c.values[c.runs.index(a), :, j] - c.values[c.runs.index(b), :, j]
                    if abs(theirs["p_value"] - 0.05) < 0.02 or np.count_nonzero(d) < 20:
                        continue
                else:
                    assert c.p_value[k, j] == pytest.approx(theirs["p_value"], rel=1e-9)
                assert bool(c.significant[k, j]) == bool(theirs["significant"]), (test, a, b, m)


# -- reports ------------------------------------------------------------------------------

def small_comparison(**kw):
    qrels, runs = make_case(n_queries=30, n_runs=3, seed=7)
    runs = {"bm25_base": runs["r0"], "mid": runs["r1"], "dense": runs["r2"]}
    return qafast.compare(qrels, runs, ["map", "P@5"], **kw)


def test_dataframe_is_tidy():
    pytest.importorskip("pandas")
    c = small_comparison(baseline="bm25_base")
    df = c.to_dataframe()
    assert list(df.columns[:5]) == ["run", "measure", "mean", "versus", "versus_mean"]
    assert len(df) == 3 * 2
    row = df[(df.run == "dense") & (df.measure == "map")].iloc[0]
    assert row.versus == "bm25_base" and row.p_adjusted >= row.p_value
    assert row["mean"] == c.means[2, 0]
    assert df[df.run == "bm25_base"].p_value.isna().all()
    long = c.per_query_frame()
    assert len(long) == 3 * 30 * 2
    all_pairs = small_comparison().to_dataframe()
    assert len(all_pairs) == 3 * 2 * 2  # every run against each other run


def test_latex_markdown_and_text():
    c = small_comparison(baseline="bm25_base", test="student", correction="bonferroni")
    better = c.better_than()
    tex = c.to_latex()
    for piece in [r"\toprule", r"\midrule", r"\bottomrule", r"\textbf{",
                  "paired Student's t-test", "Bonferroni correction", r"bm25\_base"]:
        assert piece in tex
    assert better[2, 0].any() and "$^{a}$" in tex  # dense beats the baseline (run a)
    md = c.to_markdown()
    assert md.splitlines()[0] == "| # | run | map | P@5 |" and "<sup>a</sup>" in md
    text = str(c)
    assert "ᵃ" in text and "Bonferroni" in text
    assert "Comparison(3 runs x 30 queries x 2 measures" in repr(c)


def test_to_frame():
    pytest.importorskip("pandas")
    qrels, runs = make_case(n_queries=5)
    pq = qafast.evaluate(qrels, runs["r0"], ["map", "P@5"], per_query=True)
    frame = qafast.to_frame(pq, run="r0")
    assert list(frame.columns) == ["run", "query_id", "map", "P@5"]
    assert frame["map"].tolist() == [v["map"] for v in pq.values()]


def test_plots(tmp_path):
    pytest.importorskip("matplotlib")
    qrels, runs = make_case(n_queries=10)
    qafast.plot_precision_recall(qrels, runs, path=tmp_path / "pr.png")
    c = qafast.compare(qrels, runs, ["map"], baseline="r0")
    c.plot_differences("map", path=tmp_path / "diff.svg")
    assert (tmp_path / "pr.png").stat().st_size > 0
    assert (tmp_path / "diff.svg").read_text().lstrip().startswith("<?xml")


def test_cli_plots(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    from qafast.cli import main

    _, _, qpath, paths = write_case(tmp_path)
    assert main(["compare", qpath, *paths, "-m", "map", "--baseline", "r0",
                 "--plot", str(tmp_path / "pr.svg"), "--plot-diff", str(tmp_path / "d.png")]) == 0
    capsys.readouterr()
    assert (tmp_path / "pr.svg").stat().st_size > 0 and (tmp_path / "d.png").stat().st_size > 0


# -- command line -------------------------------------------------------------------------

def write_case(tmp_path):
    qrels, runs = make_case(n_queries=20, n_runs=2, seed=11)
    qpath = tmp_path / "qrels.txt"
    qpath.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items()
                             for d, g in docs.items()))
    paths = []
    for name, run in runs.items():
        p = tmp_path / f"{name}.run"
        p.write_text("".join(f"{q} Q0 {d} 1 {s!r} {name}\n" for q, docs in run.items()
                             for d, s in docs.items()))
        paths.append(str(p))
    return qrels, runs, str(qpath), paths


def test_cli_formats(tmp_path, capsys):
    from qafast.cli import main

    qrels, runs, qpath, paths = write_case(tmp_path)
    expected = qafast.compare(qrels, runs, ["map", "P_5"], baseline="r0")
    assert main(["compare", qpath, *paths, "-m", "map", "-m", "P_5", "--baseline", "r0",
                 "-o", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["means"]["r1"]["map"] == expected.means[1, 0]
    assert doc["comparisons"][0]["p_value"] == expected.p_value[0, 0]
    assert main(["compare", qpath, *paths, "-m", "map", "-o", "csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("run,measure,mean,versus")
    assert main(["compare", qpath, *paths, "-m", "map", "-o", "latex", "--test", "wilcoxon",
                 "--correction", "bh"]) == 0
    assert "Wilcoxon signed-rank test, Benjamini-Hochberg correction" in capsys.readouterr().out
    assert main(["compare", qpath, f"first={paths[0]}", f"second={paths[1]}", "-m", "map"]) == 0
    out = capsys.readouterr().out
    assert "first" in out and "second" in out


def test_cli_errors(tmp_path, capsys):
    from qafast.cli import main

    _, _, qpath, paths = write_case(tmp_path)
    assert main(["compare", qpath, paths[0], "-m", "map"]) == 2
    assert "at least two runs" in capsys.readouterr().err
    assert main(["compare", qpath, *paths, "--baseline", "nope"]) == 2
    assert "baseline 'nope' is not one of the runs" in capsys.readouterr().err


# -- bad input ----------------------------------------------------------------------------

def test_bad_input():
    qrels, runs = make_case(n_queries=6)
    with pytest.raises(ValueError, match="at least two runs, got 1"):
        qafast.compare(qrels, {"r0": runs["r0"]}, ["map"])
    with pytest.raises(ValueError, match="unknown test 'sign'"):
        qafast.compare(qrels, runs, ["map"], test="sign")
    with pytest.raises(ValueError, match="unknown correction 'hochberg'"):
        qafast.compare(qrels, runs, ["map"], correction="hochberg")
    with pytest.raises(ValueError, match="baseline 'r9' is not one of the runs"):
        qafast.compare(qrels, runs, ["map"], baseline="r9")
    with pytest.raises(ValueError, match="'gm_map' is a geometric mean"):
        qafast.compare(qrels, runs, ["gm_map"])
    with pytest.raises(TypeError, match="runs must be a mapping"):
        qafast.compare(qrels, [runs["r0"], runs["r1"]], ["map"])
    with pytest.raises(ValueError, match="n_resamples must be a positive int"):
        qafast.compare(qrels, runs, ["map"], test="fisher", n_resamples=0)
    one = {"q000": qrels["q000"]}
    with pytest.raises(ValueError, match="at least two queries; the runs share 1 .'q000'."):
        qafast.compare(one, runs, ["map"])
    pq = per_query([0.1, 0.2, 0.3], [0.2, float("nan"), 0.1])
    with pytest.raises(ValueError, match="run 'b', query 'q001', measure 'm': value is nan"):
        Comparison.from_per_query(pq, baseline="a")
    with pytest.raises(ValueError, match="Tukey's HSD p-values are adjusted"):
        qafast.compare(qrels, runs, ["map"], test="tukey", correction="bh")


def test_a_malformed_run_file_is_named_with_its_run_and_keeps_its_class(tmp_path):
    from qafast.io.trec import TrecFormatError

    (tmp_path / "qrels").write_text("q1 0 d1 1\n")
    (tmp_path / "good").write_text("q1 Q0 d1 1 0.5 r\n")
    (tmp_path / "bad").write_text("q1 Q0 d1 1 0.5 r\nq1 Q0 d2 2 xx r\n")
    with pytest.raises(TrecFormatError, match=r"run 'b': .*bad, line 2: score") as info:
        qafast.compare(str(tmp_path / "qrels"),
                       {"a": str(tmp_path / "good"), "b": str(tmp_path / "bad")}, ["map"])
    assert info.value.line == 2


# -- several runs per system: seeds and folds ---------------------------------------------

def seed_case(n_queries=30, n_seeds=3, seed=21):
    """(qrels, {"bm25": run, "dense": [seed runs]}, the seed runs)."""
    qrels, runs = make_case(n_queries=n_queries, n_runs=n_seeds + 1, seed=seed, weight=0.1)
    seeds = [runs[f"r{k}"] for k in range(1, n_seeds + 1)]
    return qrels, {"bm25": runs["r0"], "dense": seeds}, seeds


MEASURES = ["map", "P@5", "ndcg@10"]


def test_seeds_are_averaged_per_query_then_tested_over_queries():
    qrels, systems, seeds = seed_case()
    c = qafast.compare(qrels, systems, MEASURES, baseline="bm25")
    per_seed = [qafast.evaluate(qrels, run, MEASURES, per_query=True) for run in seeds]
    stacked = np.array([[list(pq[q].values()) for q in c.query_ids] for pq in per_seed])
    np.testing.assert_allclose(c.values[1], stacked.mean(axis=0), rtol=1e-15, atol=0)
    # a query's values are added in increasing order, then divided by the number of seeds
    ordered = np.sort(stacked, axis=0)
    assert c.values[1].tolist() == ((ordered[0] + ordered[1] + ordered[2]) / 3).tolist()
    assert c.n_seeds.tolist() == [1, 3] and c.n_folds.tolist() == [1, 1]
    # each seed's own mean is evaluate's, bit for bit; the spread is their sample sd
    for s, run in enumerate(seeds):
        assert c.seed_means[1][s].tolist() == list(qafast.evaluate(qrels, run, MEASURES).values())
    np.testing.assert_allclose(c.seed_std[1], np.std(c.seed_means[1], axis=0, ddof=1),
                               rtol=1e-15, atol=0)
    assert np.isnan(c.seed_std[0]).all()
    assert c.seed_means[0].tolist() == [c.means[0].tolist()]
    # the tests are those of the per-query means given as one run
    pq = {name: {q: dict(zip(MEASURES, c.values[r, i].tolist()))
                 for i, q in enumerate(c.query_ids)} for r, name in enumerate(c.runs)}
    alone = Comparison.from_per_query(pq, baseline="bm25")
    for field in ("means", "p_value", "p_adjusted", "statistic", "ci_low", "ci_high",
                  "mean_ci_low", "mean_ci_high"):
        np.testing.assert_allclose(getattr(c, field), getattr(alone, field), rtol=1e-12,
                                   atol=0, err_msg=field)


def test_the_order_of_the_seeds_does_not_change_a_bit():
    qrels, systems, seeds = seed_case(seed=22, n_seeds=4)
    a = qafast.compare(qrels, systems, MEASURES, test="fisher", n_resamples=300)
    for order in ([3, 1, 0, 2], [2, 3, 1, 0]):
        b = qafast.compare(qrels, {"bm25": systems["bm25"], "dense": [seeds[i] for i in order]},
                           MEASURES, test="fisher", n_resamples=300, workers=2)
        assert b.values.tolist() == a.values.tolist()
        assert b.means.tolist() == a.means.tolist()
        assert b.p_value.tolist() == a.p_value.tolist()
        assert b.seed_std.tolist()[1] == pytest.approx(a.seed_std.tolist()[1], rel=1e-15)


def test_a_list_of_one_run_is_that_run():
    qrels, runs = make_case(n_queries=25, seed=23)
    a = qafast.compare(qrels, runs, MEASURES, test="bootstrap", ci="bootstrap", n_resamples=300)
    for group in ("seeds", "folds"):
        b = qafast.compare(qrels, {name: [run] for name, run in runs.items()}, MEASURES,
                           test="bootstrap", ci="bootstrap", n_resamples=300, group=group)
        assert same_records(b.to_records(), a.to_records())


@settings(max_examples=examples(40), deadline=None)
@given(st.integers(2, 12), st.integers(1, 4), st.integers(0, 2**31), st.booleans())
def test_seeds_from_per_query_values(n, n_seeds, seed, ties):
    rng = np.random.default_rng(seed)
    levels = 4 if ties else 10**6
    base = rng.integers(0, levels + 1, n) / levels
    runs = rng.integers(0, levels + 1, (n_seeds, n)) / levels
    qids = [f"q{i:03d}" for i in range(n)]
    pq = {"a": {q: {"m": float(x)} for q, x in zip(qids, base)},
          "b": [{q: {"m": float(x)} for q, x in zip(qids, run)} for run in runs]}
    c = Comparison.from_per_query(pq, baseline="a")
    ordered = np.sort(runs, axis=0)
    total = ordered[0].copy()
    for row in ordered[1:]:
        total += row
    assert c.values[1, :, 0].tolist() == (total / n_seeds).tolist()
    assert c.n_seeds.tolist() == [1, n_seeds]
    assert c.seed_means[1][:, 0].tolist() == pytest.approx(runs.mean(axis=1).tolist(),
                                                           rel=1e-15, abs=1e-300)
    if n_seeds > 1:
        assert c.seed_std[1, 0] == pytest.approx(np.std(runs.mean(axis=1), ddof=1),
                                                 rel=1e-9, abs=1e-15)
    reversed_ = Comparison.from_per_query({"a": pq["a"], "b": pq["b"][::-1]}, baseline="a")
    assert reversed_.values.tolist() == c.values.tolist()
    assert reversed_.p_value.tolist() == c.p_value.tolist()


def same_records(a, b):
    """Records equal field by field, NaN equal to NaN."""
    def same(x, y):
        return x == y or (isinstance(x, float) and isinstance(y, float)
                          and math.isnan(x) and math.isnan(y))
    return len(a) == len(b) and all(
        r.keys() == q.keys() and all(same(r[k], q[k]) for k in r) for r, q in zip(a, b))


def split_folds(run, query_ids, k):
    return [{q: run[q] for q in query_ids[i::k] if q in run} for i in range(k)]


def test_folds_join_to_the_whole_run():
    qrels, runs = make_case(n_queries=30, seed=24)
    qids = sorted(qrels)
    whole = qafast.compare(qrels, runs, MEASURES, baseline="r0")
    folded = {"r0": runs["r0"], "r1": split_folds(runs["r1"], qids, 3),
              "r2": split_folds(runs["r2"], qids[::-1], 5)}
    c = qafast.compare(qrels, folded, MEASURES, baseline="r0", group="folds")
    assert c.n_folds.tolist() == [1, 3, 5] and c.n_seeds.tolist() == [1, 1, 1]
    assert c.query_ids == whole.query_ids
    assert c.values.tolist() == whole.values.tolist()
    assert c.means.tolist() == whole.means.tolist()
    assert c.p_value.tolist() == whole.p_value.tolist()
    assert "r1: 3 folds" in str(c) and "seeds' values" not in str(c)


def test_folds_with_every_qrels_query_score_a_query_no_fold_has_as_trec_eval_c():
    qrels, runs = make_case(n_queries=20, seed=25)
    qids = sorted(qrels)
    del runs["r1"]["q004"], runs["r1"]["q011"]
    whole = qafast.compare(qrels, runs, MEASURES, queries="qrels")
    folds = split_folds(runs["r1"], qids, 4)
    c = qafast.compare(qrels, {**runs, "r1": folds}, MEASURES, queries="qrels", group="folds")
    assert c.values.tolist() == whole.values.tolist()
    assert c.means.tolist() == whole.means.tolist()
    assert c.means[1].tolist() == list(qafast.evaluate(qrels, runs["r1"], MEASURES,
                                                       queries="qrels").values())


def test_seeds_of_folds_and_folds_of_seeds():
    qrels, systems, seeds = seed_case(n_queries=24, seed=26)
    qids = sorted(qrels)
    flat = qafast.compare(qrels, systems, MEASURES, baseline="bm25")
    seeds_of_folds = [split_folds(run, qids, 3) for run in seeds]
    folds_of_seeds = [list(fold) for fold in zip(*seeds_of_folds)]
    a = qafast.compare(qrels, {"bm25": systems["bm25"], "dense": seeds_of_folds}, MEASURES,
                       baseline="bm25")
    b = qafast.compare(qrels, {"bm25": systems["bm25"], "dense": folds_of_seeds}, MEASURES,
                       baseline="bm25", group="folds")
    for c in (a, b):
        assert c.n_seeds.tolist() == [1, 3] and c.n_folds.tolist() == [1, 3]
        assert c.values.tolist() == flat.values.tolist()
        assert c.p_value.tolist() == flat.p_value.tolist()
        assert [m.tolist() for m in c.seed_means] == [m.tolist() for m in flat.seed_means]
    assert "dense: 3 seeds x 3 folds" in a.to_markdown()


def test_several_runs_per_system_bad_input():
    qrels, systems, seeds = seed_case(n_queries=12, seed=27)
    qids = sorted(qrels)
    short = {q: d for q, d in seeds[1].items() if q != "q005"}
    with pytest.raises(ValueError, match=r"the seeds of run 'dense' must cover the same "
                       r"queries; run 'dense'\[1\] has no value for 1 query of run "
                       r"'dense'\[0\]: 'q005' \(group='folds'"):
        qafast.compare(qrels, {"bm25": systems["bm25"], "dense": [seeds[0], short]}, ["map"])
    folds = split_folds(seeds[0], qids, 3)
    folds[2] = {**folds[2], "q000": seeds[0]["q000"], "q003": seeds[0]["q003"]}
    with pytest.raises(ValueError, match=r"the folds of run 'dense' must hold disjoint "
                       r"queries; run 'dense'\[2\] shares 2 queries with the folds before "
                       r"it \('q000', 'q003'; 'q000' is also in run 'dense'\[0\]\)"):
        qafast.compare(qrels, {"bm25": systems["bm25"], "dense": folds}, ["map"],
                       group="folds")
    with pytest.raises(ValueError, match=r"the seeds of run 'dense' must cover the same"):
        qafast.compare(qrels, {"bm25": systems["bm25"], "dense": split_folds(seeds[0], qids, 2)},
                       ["map"])  # folds given as seeds: named, not averaged
    with pytest.raises(ValueError, match="run 'dense' is an empty list"):
        qafast.compare(qrels, {"bm25": systems["bm25"], "dense": []}, ["map"])
    with pytest.raises(ValueError, match=r"run 'dense': each of its seeds needs the same "
                       r"number of folds, not 1, 2"):
        qafast.compare(qrels, {"bm25": systems["bm25"], "dense": [seeds[0], seeds[1:]]},
                       ["map"])
    with pytest.raises(TypeError, match=r"run 'dense'\[0\]\[0\] is a list"):
        qafast.compare(qrels, {"bm25": systems["bm25"], "dense": [[[seeds[0]]]]}, ["map"])
    with pytest.raises(ValueError, match="group must be 'seeds' or 'folds', not 'runs'"):
        qafast.compare(qrels, systems, ["map"], group="runs")
    with pytest.raises(TypeError, match=r"run 'dense'\[1\]: run dict: query 'q000'"):
        qafast.compare(qrels, {"bm25": systems["bm25"], "dense": [seeds[0], {"q000": 3}]},
                       ["map"])


def test_a_malformed_seed_file_is_named_with_its_place(tmp_path):
    from qafast.io.trec import TrecFormatError

    (tmp_path / "qrels").write_text("q1 0 d1 1\nq2 0 d1 1\n")
    (tmp_path / "good").write_text("q1 Q0 d1 1 0.5 r\nq2 Q0 d1 1 0.5 r\n")
    (tmp_path / "bad").write_text("q1 Q0 d1 1 0.5 r\nq2 Q0 d2 2 xx r\n")
    good, bad = str(tmp_path / "good"), str(tmp_path / "bad")
    with pytest.raises(TrecFormatError, match=r"run 'b'\[1\]: .*bad, line 2: score"):
        qafast.compare(str(tmp_path / "qrels"), {"a": good, "b": [good, bad]}, ["map"])


# -- confidence intervals of each system's mean -------------------------------------------

@pytest.mark.parametrize("alpha", [0.05, 0.1, 0.01])
def test_mean_t_interval_equals_scipy(alpha):
    qrels, systems, _ = seed_case(n_queries=35, seed=28)
    c = qafast.compare(qrels, systems, MEASURES, alpha=alpha)
    for r in range(2):
        for j in range(len(MEASURES)):
            x = c.values[r, :, j]
            lo, hi = scipy_stats.t.interval(1 - alpha, len(x) - 1, loc=x.mean(),
                                            scale=scipy_stats.sem(x))
            assert c.mean_ci_low[r, j] == pytest.approx(lo, rel=1e-12)
            assert c.mean_ci_high[r, j] == pytest.approx(hi, rel=1e-12)
            got = scipy_stats.ttest_1samp(x, 0.0).confidence_interval(1 - alpha)
            assert c.mean_ci_low[r, j] == pytest.approx(got.low, rel=1e-12)


@settings(max_examples=examples(15), deadline=None)
@given(st.integers(2, 40), st.integers(0, 2**64 - 1), st.sampled_from([0.05, 0.2]),
       st.booleans())
def test_mean_bootstrap_interval_is_the_reference_stream(n, seed, alpha, ties):
    rng = np.random.default_rng(seed % 2**32)
    a = (rng.integers(0, 3, n) / 2) if ties else rng.random(n)
    b = (rng.integers(0, 3, n) / 2) if ties else rng.random(n)
    c = Comparison.from_per_query(per_query(a, b), baseline="a", ci="bootstrap",
                                  n_resamples=97, seed=seed, alpha=alpha)
    for r, x in enumerate((a, b)):
        lo, hi = ref.bootstrap_mean_interval([float(v) for v in x], 97, seed, alpha)
        assert c.mean_ci_low[r, 0] == pytest.approx(lo, rel=1e-12, abs=1e-15)
        assert c.mean_ci_high[r, 0] == pytest.approx(hi, rel=1e-12, abs=1e-15)


def test_mean_bootstrap_interval_shares_the_resamples_and_not_the_workers():
    qrels, systems, _ = seed_case(n_queries=50, seed=29)
    kw = {"ci": "bootstrap", "n_resamples": 800, "seed": 3}
    with_test = qafast.compare(qrels, systems, MEASURES, test="bootstrap", **kw)
    alone = qafast.compare(qrels, systems, MEASURES, test="student", workers=2, **kw)
    assert with_test.mean_ci_low.tolist() == alone.mean_ci_low.tolist()
    assert with_test.mean_ci_high.tolist() == alone.mean_ci_high.tolist()
    assert with_test.ci_low.tolist() == alone.ci_low.tolist()
    t = qafast.compare(qrels, systems, MEASURES)
    assert (with_test.mean_ci_low <= with_test.means).all()
    assert (with_test.means <= with_test.mean_ci_high).all()
    np.testing.assert_allclose(with_test.mean_ci_low, t.mean_ci_low, rtol=0, atol=0.03)


def test_a_comparison_pickled_before_seeds_gets_its_intervals():
    import pickle

    qrels, runs = make_case(n_queries=20, seed=30)
    for kw in ({}, {"ci": "bootstrap", "n_resamples": 300}):
        c = qafast.compare(qrels, runs, MEASURES, **kw)
        state = {k: v for k, v in c.__dict__.items()
                 if k not in ("mean_ci_low", "mean_ci_high", "group", "n_seeds", "n_folds",
                              "seed_means", "seed_std")}
        old = Comparison.__new__(Comparison)
        old.__setstate__(state)
        assert same_records(old.to_records(), c.to_records())
        again = pickle.loads(pickle.dumps(c))
        assert same_records(again.to_records(), c.to_records())


# -- reports of several runs and intervals ------------------------------------------------

def test_reports_show_spreads_and_intervals():
    qrels, systems, _ = seed_case(n_queries=20, seed=31)
    c = qafast.compare(qrels, systems, ["map", "P@5"], baseline="bm25")
    records = c.to_records()
    assert list(records[0])[-5:] == ["n_seeds", "n_folds", "seed_std", "mean_ci_low",
                                     "mean_ci_high"]
    dense = next(r for r in records if r["run"] == "dense" and r["measure"] == "map")
    assert dense["n_seeds"] == 3 and dense["seed_std"] == c.seed_std[1, 0]
    assert dense["mean_ci_low"] == c.mean_ci_low[1, 0]
    doc = c.to_dict()
    assert doc["n_seeds"] == {"bm25": 1, "dense": 3}
    assert doc["mean_ci"]["dense"]["map"] == [c.mean_ci_low[1, 0], c.mean_ci_high[1, 0]]
    assert doc["seed_means"]["dense"]["map"] == c.seed_means[1][:, 0].tolist()
    sd, lo, hi = (f"{x:.4f}" for x in (c.seed_std[1, 0], c.mean_ci_low[1, 0],
                                       c.mean_ci_high[1, 0]))
    text = c.to_text(intervals=True)
    assert f"±{sd} [{lo}, {hi}]" in text and str(c) == c.to_text()
    assert "dense: 3 seeds" in text and "95% confidence interval of a run's mean" in text
    assert f"± {sd} [{lo}, {hi}]" in c.to_markdown(intervals=True)
    assert f"± {sd}" in c.to_markdown() and "[" not in c.to_markdown().splitlines()[3]
    assert f"± {sd}" not in c.to_markdown(spread=False)
    tex = c.to_latex(intervals=True)
    assert rf"{{\scriptsize $\pm${sd}}} {{\scriptsize [{lo}, {hi}]}}" in tex
    assert r"95\% confidence interval" in tex and r"$\pm$: standard deviation" in tex
    boot = qafast.compare(qrels, systems, ["map"], ci="bootstrap", n_resamples=200)
    assert "percentile bootstrap, 200 resamples" in boot.to_text(intervals=True)
    pq = per_query([0.1, 0.5, 0.3, 0.9], [0.2, 0.7, 0.2, 1.0])
    exact = Comparison.from_per_query(pq, test="fisher", ci="bootstrap", n_resamples=300)
    assert exact.exact and exact.n_resamples == 16
    assert "percentile bootstrap, 300 resamples" in exact.to_text(intervals=True)


def test_dataframe_has_the_new_columns_last():
    pytest.importorskip("pandas")
    qrels, systems, _ = seed_case(n_queries=15, seed=32)
    df = qafast.compare(qrels, systems, ["map"], baseline="bm25").to_dataframe()
    assert list(df.columns[-5:]) == ["n_seeds", "n_folds", "seed_std", "mean_ci_low",
                                     "mean_ci_high"]
    assert df.set_index("run").n_seeds.to_dict() == {"bm25": 1, "dense": 3}


def write_seed_case(tmp_path):
    qrels, systems, seeds = seed_case(n_queries=16, seed=33)
    qpath = tmp_path / "qrels.txt"
    qpath.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items()
                             for d, g in docs.items()))
    paths = []
    named = [("bm25", systems["bm25"])] + [(f"dense.s{k}", r) for k, r in enumerate(seeds)]
    for name, run in named:
        p = tmp_path / f"{name}.run"
        p.write_text("".join(f"{q} Q0 {d} 1 {s!r} x\n" for q, docs in run.items()
                             for d, s in docs.items()))
        paths.append(str(p))
    return qrels, systems, str(qpath), paths


def test_cli_seeds_folds_and_intervals(tmp_path, capsys):
    from qafast.cli import main

    qrels, systems, qpath, paths = write_seed_case(tmp_path)
    expected = qafast.compare(qrels, systems, ["map"], baseline="bm25")
    assert main(["compare", qpath, f"bm25={paths[0]}", *(f"dense={p}" for p in paths[1:]),
                 "--group", "seeds", "-m", "map", "--baseline", "bm25", "-o", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["n_seeds"] == {"bm25": 1, "dense": 3}
    assert doc["means"]["dense"]["map"] == expected.means[1, 0]
    assert doc["seed_std"]["dense"]["map"] == expected.seed_std[1, 0]
    pattern = str(tmp_path / "dense.s*.run")
    assert main(["compare", qpath, paths[0], f"dense={pattern}", "--group", "seeds", "-m",
                 "map", "--baseline", "bm25", "--mean-ci"]) == 0
    out = capsys.readouterr().out
    assert f"±{expected.seed_std[1, 0]:.4f} [{expected.mean_ci_low[1, 0]:.4f}," in out
    assert main(["compare", qpath, *paths[:2], "-m", "map", "-o", "csv", "--ci",
                 "bootstrap", "--resamples", "100"]) == 0
    header = capsys.readouterr().out.splitlines()[0]
    assert header.endswith("n_seeds,n_folds,seed_std,mean_ci_low,mean_ci_high")
    # folds: one seed's run cut in two files of disjoint queries
    run = systems["dense"][0]
    qids = sorted(run)
    for k in range(2):
        (tmp_path / f"fold{k}.run").write_text("".join(
            f"{q} Q0 {d} 1 {s!r} x\n" for q in qids[k::2] for d, s in run[q].items()))
    assert main(["compare", qpath, f"bm25={paths[0]}", f"dense={tmp_path}/fold*.run",
                 "--group", "folds", "-m", "map", "-o", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["n_folds"]["dense"] == 2
    assert doc["means"]["dense"]["map"] == qafast.evaluate(qrels, run, ["map"])["map"]


def test_cli_group_errors(tmp_path, capsys):
    from qafast.cli import main

    _, _, qpath, paths = write_seed_case(tmp_path)
    assert main(["compare", qpath, paths[0], f"dense={tmp_path}/nothing*.run", "--group",
                 "seeds"]) == 2
    assert "run 'dense': no file matches" in capsys.readouterr().err
    assert main(["compare", qpath, paths[0], f"d={paths[1]}", f"d={paths[1]}", "--group",
                 "seeds"]) == 2
    assert "is given twice for 'd'" in capsys.readouterr().err
