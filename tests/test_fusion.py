"""qafast.fuse: the kernel against qafast.reference.fusion, both against ranx 0.3.21's fuse,
and the qafast fuse command."""

from __future__ import annotations

import gzip
import math
import shutil
import subprocess
from functools import cmp_to_key
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import qafast
from _examples import examples
from qafast import fusion
from qafast.cli import main
from qafast.errors import InputError, InputTypeError
from qafast.reference import fusion as ref

METHODS = sorted(fusion.FUSION_METHODS)
NORMS = list(fusion.FUSION_NORMS)
WEIGHTED = [m for m, (w, _) in fusion.FUSION_METHODS.items() if w]
RANK_BASED = ["rrf", "isr", "log_isr", "logn_isr", "rbc", "bordafuse", "w_bordafuse",
              "condorcet", "w_condorcet"]
TREC_EVAL = Path("/work/tools/trec_eval/trec_eval")

# ids that sort differently as text and as code points would, a NUL, an empty one
DOCS = ["a", "b", "c", "é", "日本", "z1", "z10", "a\x00", "", "🙂"]


def test_the_tables_agree():
    assert set(fusion.FUSION_METHODS) == set(ref.METHODS) == set(qafast._kernels.FUSION_METHODS)
    assert set(fusion.FUSION_NORMS) == set(ref.NORMS) == set(qafast._kernels.FUSION_NORMS)
    for name, (weighted, params) in fusion.FUSION_METHODS.items():
        assert ref.METHODS[name][0] == weighted and ref.METHODS[name][2] == params
        assert ref.METHODS[name][1] == (name in RANK_BASED)


@st.composite
def options(draw, n_runs: int, methods=METHODS, norms=NORMS):
    method = draw(st.sampled_from(methods))
    norm = draw(st.sampled_from(norms))
    kw: dict = {}
    if method in WEIGHTED:
        kw["weights"] = draw(st.lists(st.sampled_from([0.0, 0.25, 1.0, 2.0, 0.7]),
                                      min_size=n_runs, max_size=n_runs))
    if method == "gmnz":
        kw["gamma"] = draw(st.sampled_from([0.0, 0.5, 1.0, 2.0]))
    if method == "rbc":
        kw["phi"] = draw(st.sampled_from([0.0, 0.5, 0.8, 1.0]))
    if method == "rrf":
        kw["k"] = draw(st.sampled_from([0, 1.5, 60]))
    if method == "logn_isr":
        kw["sigma"] = draw(st.sampled_from([0.0, 0.01, 1.0]))
    return method, norm, kw


# scores with many ties, and some without
SCORES = st.one_of(st.sampled_from([0.0, -0.0, 0.5, 1.0, -2.0, 3.25]),
                   st.floats(-1e6, 1e6, allow_nan=False))


STR_IDS = st.sampled_from(DOCS)


@st.composite
def tied_runs(draw, ids=STR_IDS):
    """1-4 runs over up to 3 queries: queries missing from some runs, empty queries, ties."""
    n_runs = draw(st.integers(1, 4))
    runs = []
    for _ in range(n_runs):
        queries = draw(st.lists(st.sampled_from(["q1", "q2", "日"]), unique=True, max_size=3))
        runs.append({q: draw(st.dictionaries(ids, SCORES, max_size=8)) for q in queries})
    return runs


def _items(run: dict) -> list:
    return [(q, list(docs.items())) for q, docs in run.items()]


@settings(max_examples=examples(300), deadline=None)
@given(data=st.data())
def test_kernel_equals_the_reference(data):
    runs = data.draw(tied_runs())
    method, norm, kw = data.draw(options(len(runs)))
    got = qafast.fuse(runs, method=method, norm=norm, **kw)
    assert _items(got.to_dict()) == _items(ref.fuse(runs, method=method, norm=norm, **kw))


@settings(max_examples=examples(60), deadline=None)
@given(data=st.data())
def test_integer_ids_rank_as_integers(data):
    runs = data.draw(tied_runs(ids=st.sampled_from([0, 1, 2, 9, 10, 100, 2**40])))
    # a run made of arrays has only the queries it retrieved something for
    runs = [{q: docs for q, docs in run.items() if docs} for run in runs]
    method, norm, kw = data.draw(options(len(runs)))
    arrays = []
    for run in runs:
        rows = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
        if not rows:
            arrays.append({})
            continue
        q, d, s = zip(*rows)
        arrays.append(qafast.Run.from_arrays(list(q), np.array(d, dtype=np.int64), list(s)))
    got = qafast.fuse(arrays, method=method, norm=norm, **kw).to_dict()
    assert _items(got) == _items(ref.fuse(runs, method=method, norm=norm, **kw))


def test_every_input_form_gives_the_same_run(tmp_path):
    a = {"q1": {"d1": 3.0, "d2": 1.0}, "q2": {"d3": 0.5}}
    b = {"q1": {"d2": 2.0, "d4": 1.5}, "q2": {"d3": 0.1, "d1": 0.3}}
    path = tmp_path / "b.run"
    path.write_text("q1 Q0 d4 1 1.5 x\nq2 Q0 d1 1 0.3 x\nq1 Q0 d2 2 2.0 x\nq2 Q0 d3 2 0.1 x\n")
    want = qafast.fuse([a, b], method="mnz").to_dict()
    assert qafast.fuse([qafast.Run(a), path], method="mnz").to_dict() == want
    assert qafast.fuse((a, str(path)), method="combmnz").to_dict() == want
    assert list(want["q1"]) == ["d2", "d1", "d4"]
    # a file whose queries' lines are not together, a DataFrame, an Arrow table
    assert qafast.fuse([a, path.read_bytes()], method="mnz").to_dict() == want
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame([(q, d, s) for q, docs in b.items() for d, s in docs.items()],
                         columns=["query_id", "doc_id", "score"])
    assert qafast.fuse([a, frame], method="mnz").to_dict() == want
    pa = pytest.importorskip("pyarrow")
    frame["doc_id"] = frame["doc_id"].astype("category")
    assert qafast.fuse([a, pa.Table.from_pandas(frame)], method="mnz").to_dict() == want


def test_params_as_ranx_takes_them():
    a = {"q": {"x": 1.0, "y": 0.5}}
    b = {"q": {"y": 2.0, "z": 1.0}}
    assert (qafast.fuse([a, b], method="wsum", params={"weights": [0.2, 0.8]}).to_dict()
            == qafast.fuse([a, b], method="wsum", weights=[0.2, 0.8]).to_dict())
    assert (qafast.fuse([a, b], method="rrf", params={"k": 10}).to_dict()
            == qafast.fuse([a, b], method="rrf", k=10).to_dict())
    # the keyword wins over params
    assert (qafast.fuse([a, b], method="rrf", k=5, params={"k": 10}).to_dict()
            == qafast.fuse([a, b], method="rrf", k=5).to_dict())


def test_the_fused_run_is_a_run():
    a = {"q1": {"d1": 3.0, "d2": 1.0}}
    b = {"q1": {"d2": 2.0, "d3": 1.5}, "q2": {}}
    fused = qafast.fuse([a, b])
    assert isinstance(fused, qafast.Run)
    assert fused.run_id == "rrf"
    assert list(fused.to_dict()) == ["q1", "q2"]
    assert fused.to_dict()["q2"] == {}
    assert qafast.evaluate({"q1": {"d2": 1}}, fused, "recip_rank") == {"recip_rank": 1.0}
    assert fused.to_trec() == (b"q1 Q0 d2 1 0.03252247488101534 rrf\n"
                               b"q1 Q0 d1 2 0.01639344262295082 rrf\n"
                               b"q1 Q0 d3 3 0.016129032258064516 rrf\n")
    # fusing a fused run
    again = qafast.fuse([fused, a], method="sum", norm=None)
    assert again.to_dict()["q1"]["d1"] == fused.to_dict()["q1"]["d1"] + 3.0


def test_workers_do_not_change_the_result(monkeypatch):
    rng = np.random.default_rng(3)
    runs = [{f"q{q}": {f"d{d}": float(rng.integers(0, 5)) for d in rng.choice(50, 20)}
             for q in range(40)} for _ in range(3)]
    one = qafast.fuse(runs, method="mnz", norm="zmuv").to_dict()
    monkeypatch.setattr(fusion, "_PARALLEL_ROWS", 0)
    assert _items(qafast.fuse(runs, method="mnz", norm="zmuv", workers=3).to_dict()) == _items(one)


def test_integer_ids_above_int64_beside_small_ones():
    big = np.array([2**64 - 1, 2**63], dtype=np.uint64)
    a = qafast.Run.from_arrays(["q", "q"], big, [1.0, 2.0])
    b = qafast.Run.from_arrays(["q", "q"], np.array([5, 2**63 - 1]), [3.0, 1.0])
    got = qafast.fuse([a, b], method="sum", norm=None).to_dict()
    assert got == {"q": {5: 3.0, 2**63: 2.0, 2**64 - 1: 1.0, 2**63 - 1: 1.0}}
    assert list(got["q"]) == [5, 2**63, 2**64 - 1, 2**63 - 1]   # tie: larger id first
    negative = qafast.Run.from_arrays(["q"], np.array([-1]), [1.0])
    with pytest.raises(InputError, match="negative"):
        qafast.fuse([a, negative])


@pytest.mark.parametrize("kwargs, error, match", [
    ({"method": "nope"}, InputError, "unknown fusion method 'nope'"),
    ({"method": 3}, InputTypeError, "method must be a str"),
    ({"norm": "l2"}, InputError, "unknown normalisation 'l2'"),
    ({"method": "gmnz"}, InputError, "needs gamma="),
    ({"method": "rbc"}, InputError, "needs phi="),
    ({"method": "rbc", "phi": 1.5}, InputError, r"phi .* \[0, 1\]"),
    ({"method": "logn_isr", "sigma": -1}, InputError, "sigma"),
    ({"method": "rrf", "k": -1}, InputError, "k of method 'rrf'"),
    ({"method": "rrf", "k": float("nan")}, InputError, "finite"),
    ({"method": "rrf", "k": "60"}, InputTypeError, "must be a number"),
    ({"method": "rrf", "gamma": 1.0}, InputError, "takes no parameter 'gamma'"),
    ({"method": "rrf", "weights": [1, 2]}, InputError, "takes no weights"),
    ({"method": "wsum", "weights": [1]}, InputError, "1 weights for 2 runs"),
    ({"method": "wsum", "weights": [1, float("inf")]}, InputError, "finite"),
    ({"method": "wsum", "weights": "12"}, InputTypeError, "weights must be a list"),
    ({"params": {"alpha": 1}}, InputError, "unknown fusion parameter 'alpha'"),
    ({"params": [1]}, InputTypeError, "params must be a dict"),
    ({"workers": 0}, InputError, "workers"),
])
def test_bad_options_are_refused(kwargs, error, match):
    runs = [{"q": {"a": 1.0}}, {"q": {"b": 1.0}}]
    with pytest.raises(error, match=match):
        qafast.fuse(runs, **kwargs)


def test_bad_runs_are_refused(tmp_path):
    with pytest.raises(InputError, match="at least one run"):
        qafast.fuse([])
    with pytest.raises(InputTypeError, match="list of runs"):
        qafast.fuse({"q": {"a": 1.0}})
    with pytest.raises(InputTypeError, match="list of runs"):
        qafast.fuse(qafast.Run({"q": {"a": 1.0}}))
    ints = qafast.Run.from_arrays(["q"], np.array([1]), [1.0])
    with pytest.raises(InputTypeError, match="document ids"):
        qafast.fuse([{"q": {"a": 1.0}}, ints])
    int_queries = qafast.Run.from_arrays([1], ["a"], [1.0])
    with pytest.raises(InputTypeError, match="query ids mix"):
        qafast.fuse([{"q": {"a": 1.0}}, int_queries])
    with pytest.raises(InputError, match="NaN"):
        qafast.fuse([{"q": {"a": 1.0}}, {"q": {"a": float("nan")}}])
    with pytest.raises(FileNotFoundError):
        qafast.fuse([{"q": {"a": 1.0}}, tmp_path / "missing.run"])


def test_an_infinite_score_that_normalisation_cannot_scale_is_named():
    runs = [{"q": {"a": math.inf, "b": 1.0}}, {"q": {"a": 1.0}}]
    with pytest.raises(InputError, match=r"query 'q', document 'a'.*NaN.*zmuv"):
        qafast.fuse(runs, method="sum", norm="zmuv")
    assert qafast.fuse(runs, method="sum", norm=None).to_dict()["q"]["a"] == math.inf
    assert list(qafast.fuse(runs, method="rrf").to_dict()["q"]) == ["a", "b"]


# ---------------------------------------------------------------------------------------
# against ranx 0.3.21

# ranx 0.3.21 keeps document ids in fixed-width numpy arrays, and then finds "d1" in a query
# that has "d10" (it drops or merges one of them; docs/known-differences.md): ids of one
# length keep clear of that
RANX_DOCS = ["aa", "bb", "cc", "é1", "日本", "z1", "z2", "🙂x"]


@st.composite
def tie_free_runs(draw):
    """2-4 runs over the same 1-3 queries, each run's scores distinct within a query."""
    n_runs = draw(st.integers(2, 4))
    queries = draw(st.lists(st.sampled_from(["q1", "q2", "q3"]), unique=True, min_size=1,
                            max_size=3))
    runs = []
    for _ in range(n_runs):
        run = {}
        for q in queries:
            docs = draw(st.lists(st.sampled_from(RANX_DOCS), unique=True, max_size=7))
            scores = draw(st.lists(st.floats(-50, 50, allow_nan=False, allow_subnormal=False),
                                   unique=True, min_size=len(docs), max_size=len(docs)))
            run[q] = dict(zip(docs, scores))
        runs.append(run)
    assume(all(any(run.values()) for run in runs))   # ranx cannot build a run without any
    return runs


def _ranx_condorcet_is_a_total_order(runs, weights) -> bool:
    """Whether ranx's Condorcet comparator (ties go to its second argument) orders each
    query's candidates as one strict total order, so that any sort gives it."""
    for q in runs[0]:
        cands = sorted({d for run in runs for d in run[q]})
        places = []
        for run in runs:
            ranked = sorted(run[q], key=run[q].get, reverse=True)
            places.append({d: i for i, d in enumerate(ranked)})

        def cmp(x, y, places=places):
            for_x = sum(w for p, w in zip(places, weights)
                        if p.get(x, 1_000_000) < p.get(y, 1_000_000))
            return -1 if for_x >= sum(weights) - for_x else 1

        order = sorted(cands, key=cmp_to_key(cmp))
        for i, x in enumerate(order):
            for y in order[i + 1:]:
                if cmp(x, y) != -1 or cmp(y, x) != 1:
                    return False
    return True


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


PAIRS = [(m, n) for m in METHODS for n in NORMS if not (n == "borda" and m in RANK_BASED)]


@settings(max_examples=examples(80), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(runs=tie_free_runs(), data=st.data())
def test_equals_ranx_on_runs_without_ties(runs, data):
    ranx = pytest.importorskip("ranx", reason="ranx is the reference for fusion")
    method, norm = data.draw(st.sampled_from(PAIRS))
    if norm == "zmuv":   # ranx then drops every document of a run with an empty query
        assume(all(all(run.values()) for run in runs))
    if norm == "min-max-inverted":   # ranx ranks by the normalised scores, which can tie
        for run in runs:
            for docs in run.values():
                normed = ref.normalize(docs, list(docs), norm, [])
                assume(len(set(normed.values())) == len(normed))
    _, _, kw = data.draw(options(len(runs), methods=[method], norms=[norm]))
    if method in ("condorcet", "w_condorcet"):
        assume(_ranx_condorcet_is_a_total_order(runs, kw.get("weights", [1.0] * len(runs))))
    ranx_kw = {"weights": kw["weights"]} if "weights" in kw else {}
    for name in ("k", "gamma", "phi", "sigma"):
        if name in kw:
            ranx_kw[name] = kw[name]
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = ranx.fuse([ranx.Run(r) for r in runs], norm=norm, method=method,
                           params=ranx_kw).to_dict()
    ours = qafast.fuse(runs, method=method, norm=norm, **kw).to_dict()
    assert sorted(ours) == sorted(theirs)
    for q, docs in ours.items():
        assert set(docs) == set(theirs[q]), q
        for d, score in docs.items():
            assert _close(score, theirs[q][d]), (q, d, score, theirs[q][d])
        ranked = list(docs)
        for i, x in enumerate(ranked):   # the same order wherever the scores differ
            for y in ranked[i + 1:]:
                if not _close(docs[x], docs[y]):
                    assert theirs[q][x] > theirs[q][y], (q, x, y)


def test_an_id_that_extends_another_is_its_own_document():
    # ranx 0.3.21 returns {'q': {'d1': 2.0, 'd2': 1.5}}: it takes d10 for d1 and drops it
    a = {"q": {"d1": 2.0, "d2": 1.0}}
    b = {"q": {"d10": 3.0, "d2": 0.5}}
    assert qafast.fuse([a, b], method="sum", norm=None).to_dict() == {
        "q": {"d10": 3.0, "d1": 2.0, "d2": 1.5}}


@pytest.mark.parametrize("method, norm", [("rrf", "min-max"), ("wsum", "min-max"),
                                          ("mnz", "zmuv"), ("bordafuse", "min-max"),
                                          ("log_isr", "sum"), ("rbc", "rank")])
def test_equals_ranx_on_a_bigger_run(method, norm):
    ranx = pytest.importorskip("ranx")
    rng = np.random.default_rng(7)
    runs = []
    for _ in range(3):
        run = {}
        for q in range(30):
            docs = rng.choice(200, 60, replace=False)
            run[f"q{q}"] = {f"d{d:03}": float(s)
                            for d, s in zip(docs, rng.permutation(60) * 0.5)}
        runs.append(run)
    kw = {"weights": [0.5, 1.0, 2.0]} if method == "wsum" else {"phi": 0.8} if method == "rbc" else {}
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = ranx.fuse([ranx.Run(r) for r in runs], norm=norm, method=method,
                           params=kw).to_dict()
    ours = qafast.fuse(runs, method=method, norm=norm, **kw).to_dict()
    for q in ours:
        assert set(ours[q]) == set(theirs[q])
        assert all(_close(ours[q][d], theirs[q][d]) for d in ours[q])
        assert np.allclose(list(ours[q].values()), sorted(theirs[q].values(), reverse=True))


# ---------------------------------------------------------------------------------------
# qafast fuse

RUN_A = "q1 Q0 d1 1 3.0 a\nq1 Q0 d2 2 2.0 a\nq2 Q0 d5 1 1.0 a\n"
RUN_B = "q1 Q0 d2 1 9.0 b\nq1 Q0 d3 2 4.0 b\nq2 Q0 d1 1 1.0 b\n"


def _files(tmp_path):
    a, b = tmp_path / "a.run", tmp_path / "b.run"
    a.write_text(RUN_A)
    b.write_text(RUN_B)
    return a, b


def test_cli_writes_the_fused_run(tmp_path, capsys):
    a, b = _files(tmp_path)
    assert main(["fuse", "--method", "rrf", "--no-progress", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    want = qafast.fuse([a, b], method="rrf")
    assert out.encode() == want.to_trec()
    assert out.splitlines()[0] == "q1 Q0 d2 1 0.03252247488101534 rrf"


def test_cli_options(tmp_path, capsys):
    a, b = _files(tmp_path)
    out = tmp_path / "fused.run.gz"
    assert main(["fuse", "--method", "wsum", "--weights", "0.25,0.75", "--norm", "none",
                 "--depth", "1", "--tag", "mine", "-o", str(out), str(a), str(b)]) == 0
    text = gzip.decompress(out.read_bytes()).decode()
    assert text == "q1 Q0 d2 1 7.25 mine\nq2 Q0 d1 1 0.75 mine\n"
    assert main(["fuse", "--method", "rbc", "--phi", "0.5", str(a), str(b)]) == 0
    assert capsys.readouterr().out.startswith("q1 Q0 d2 1 ")


@pytest.mark.parametrize("argv, message", [
    (["--method", "nope"], "unknown fusion method"),
    (["--method", "gmnz"], "needs gamma"),
    (["--weights", "1,x", "--method", "wsum"], "--weights takes numbers"),
    (["--depth", "0"], "depth must be a positive int"),
])
def test_cli_errors_are_one_line(tmp_path, capsys, argv, message):
    a, b = _files(tmp_path)
    assert main(["fuse", *argv, str(a), str(b)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("qafast fuse: ") and message in err and err.count("\n") == 1


@pytest.mark.skipif(not TREC_EVAL.exists() and shutil.which("trec_eval") is None,
                    reason="no trec_eval binary")
def test_trec_eval_reads_the_fused_run(tmp_path):
    a, b = _files(tmp_path)
    qrels = tmp_path / "qrels"
    qrels.write_text("q1 0 d3 1\nq1 0 d1 2\nq2 0 d1 1\n")
    out = tmp_path / "fused.run"
    assert main(["fuse", "--method", "mnz", "-o", str(out), str(a), str(b)]) == 0
    binary = str(TREC_EVAL) if TREC_EVAL.exists() else shutil.which("trec_eval")
    proc = subprocess.run([binary, "-m", "map", "-m", "ndcg", "-q", str(qrels), str(out)],
                          capture_output=True, text=True, check=True)
    theirs = {(m, q): float(v) for m, q, v in (line.split() for line in proc.stdout.splitlines())}
    ours = qafast.evaluate(qrels, qafast.fuse([a, b], method="mnz"), ["map", "ndcg"],
                           per_query=True)
    for q, values in ours.items():
        for m, v in values.items():
            assert theirs[(m, q)] == round(v, 4)
