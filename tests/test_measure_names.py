"""Measure names of ranx and ir_measures mean what those tools compute.

Each tool is checked on random tie-free runs with graded relevance (ties are out of scope:
qafast breaks them as trec_eval does, ranx by its sort and ir_measures by provider), with
queries that have no relevant document and relevant documents that were not retrieved. The
families qafast adds for these names are checked against the plain-Python specification on
tie-heavy input, as tests/test_ranking_reference.py does for trec_eval's.
"""

import math
import random
import subprocess
import sys
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import qafast
from qafast import reference
from qafast._measure_parser import Column, parse_measures
from qafast._measures import NO_CUTOFF as _NO_CUTOFF
from _examples import examples
from _strategies import qrels_and_runs


def tie_free_case(seed, *, n_queries=30, negatives=False):
    """Query ids "1".."n" (gdeval.pl wants numeric ones); grades 0..4; distinct scores
    0.01 apart (distinct as float32 too, as pytrec_eval stores them). Every query judges a
    document non-relevant; a few judge nothing relevant; most have relevant documents that
    were not retrieved."""
    rng = random.Random(seed)
    names = [f"d{i}" for i in range(80)]
    qrels, run = {}, {}
    for q in range(1, n_queries + 1):
        qid = str(q)
        judged = rng.sample(names, rng.randrange(2, 20))
        if q % 7 == 0:
            grades = [0] * len(judged)  # nothing relevant
        else:
            grades = [rng.choice((0, 0, 1, 1, 2, 3, 4)) for _ in judged]
            grades[0] = 0
        if negatives:
            grades = [g if rng.random() > 0.1 else -1 for g in grades]
            grades[0] = 0
        qrels[qid] = dict(zip(judged, grades))
        retrieved = rng.sample(names, rng.randrange(1, 40))
        order = list(range(len(retrieved)))
        rng.shuffle(order)
        run[qid] = {d: 0.5 + 0.01 * i for d, i in zip(retrieved, order)}
    return qrels, run


def close(a, b, tol=1e-12):
    return abs(a - b) <= tol


# ---------------------------------------------------------------------------------------------
# ranx

RANX_NAMES = [
    "hits", "hits@1", "hits@5", "hits@100", "hit_rate", "hit_rate@1", "hit_rate@10",
    "precision", "precision@1", "precision@5", "precision@50", "recall@0", "recall@3",
    "recall@100", "f1", "f1@1", "f1@5", "f1@100", "r-precision", "r-precision@3", "mrr",
    "mrr@1", "mrr@10", "map", "map@3", "map@100", "dcg", "dcg@5", "dcg_burges",
    "dcg_burges@5", "ndcg", "ndcg@1", "ndcg@10", "ndcg_burges", "ndcg_burges@10",
    "rbp.95", "rbp.8", "rbp@5", "precision@0", "ndcg@0",
    # ranx's relevance level suffix
    "hits@10-l2", "precision@5-l2", "recall@10-l3", "map@100-l2", "mrr-l3", "f1@5-l2",
    "r-precision-l2", "ndcg@10-l2", "ndcg_burges@5-l3", "dcg@5-l2", "dcg_burges-l2",
    "rbp.9-l2", "hit_rate@5-l2",
]


@pytest.mark.parametrize("seed", range(4))
def test_ranx_names_equal_ranx(seed):
    ranx = pytest.importorskip("ranx", reason="ranx is the reference for its metric names")
    qrels, run = tie_free_case(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba's deprecation notices
        theirs = ranx.evaluate(qrels, run, RANX_NAMES)
    ours = qafast.evaluate(qrels, run, RANX_NAMES)
    assert list(ours) == RANX_NAMES
    for name in RANX_NAMES:
        assert close(ours[name], float(theirs[name])), (name, ours[name], theirs[name])


def test_relevance_level_reaches_ranx_binary_names_only():
    # without -lN, binary ranx names follow relevance_level; graded ones (like trec_eval's
    # nDCG) keep ranx's default level 1
    qrels, run = tie_free_case(5)
    at1 = qafast.evaluate(qrels, run, ["precision@5", "ndcg@5", "dcg@5", "rbp.9"])
    at2 = qafast.evaluate(qrels, run, ["precision@5", "ndcg@5", "dcg@5", "rbp.9"],
                          relevance_level=2)
    suffixed = qafast.evaluate(qrels, run, ["precision@5-l2"])
    assert at2["precision@5"] == suffixed["precision@5-l2"] != at1["precision@5"]
    for name in ("ndcg@5", "dcg@5", "rbp.9"):
        assert at2[name] == at1[name]


def test_hits_at_k_is_a_count():
    qrels = {"q1": {"a": 1, "b": 2, "c": 0, "d": 1}, "q2": {"x": 1}}
    run = {"q1": {"a": 0.9, "b": 0.8, "c": 0.7, "d": 0.6, "e": 0.5}, "q2": {"y": 0.9, "x": 0.1}}
    got = qafast.evaluate(qrels, run, ["hits@2", "hits@4", "hits", "hit_rate@1", "hit@1"],
                          per_query=True)
    assert got == {
        "q1": {"hits@2": 2.0, "hits@4": 3.0, "hits": 3.0, "hit_rate@1": 1.0, "hit@1": 1.0},
        "q2": {"hits@2": 1.0, "hits@4": 1.0, "hits": 1.0, "hit_rate@1": 0.0, "hit@1": 0.0}}
    assert qafast.evaluate(qrels, run, "hits@4") == {"hits@4": 2.0}  # a mean of counts


@pytest.mark.parametrize("seed", range(2))
def test_ranx_bpref_equals_ranx_query_by_query(seed):
    # ranx 0.3.21's bpref over several queries gives 0 to the queries after one without a
    # relevant document (its kernel divides by R = 0 there); one query at a time it is right
    ranx = pytest.importorskip("ranx")
    qrels, run = tie_free_case(seed)
    ours = qafast.evaluate(qrels, run, ["bpref", "bpref-l2"], per_query=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for q in qrels:
            theirs = ranx.evaluate({q: qrels[q]}, {q: run[q]}, ["bpref", "bpref-l2"])
            for name in ("bpref", "bpref-l2"):
                assert close(ours[q][name], float(theirs[name])), (q, name)


def test_ranx_bpref_without_judged_nonrelevant_documents_is_trec_evals():
    # ranx divides by min(R, N) = 0 here (NaN); qafast gives trec_eval's value
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels = {"q": {"a": 1, "b": 1}}
    run = {"q": {"a": 0.9, "x": 0.5, "b": 0.1}}
    want = pytrec_eval.RelevanceEvaluator(qrels, {"bpref"}).evaluate(run)["q"]["bpref"]
    assert qafast.evaluate(qrels, run, "bpref") == {"bpref": want} == {"bpref": 1.0}


# ---------------------------------------------------------------------------------------------
# ir_measures

IR_NAMES = [
    "P(rel=2)@5", "P@10", "R@100", "R(rel=3)@10", "AP", "AP@100", "AP(rel=2)", "RR", "RR@10",
    "RR(rel=2)", "nDCG", "nDCG@10", "Judged@10", "Judged@3", "Success@5", "Success(rel=3)@10",
    "Rprec", "Rprec(rel=2)", "Bpref", "Bpref(rel=2)", "infAP", "NumRet", "NumRet(rel=2)",
    "NumRel", "NumQ", "NumRelRet", "IPrec@0.5", "IPrec@0.3", "IPrec@0.1", "SetP", "SetR",
    "SetF", "SetF(beta=0.5)", "SetAP", "SetRelP", "MAP@20", "MRR", "NDCG@5", "Precision@3",
    "Recall@20", "RPrec", "BPref",
]
# gdeval.pl prints them to 5 decimals
IR_GDEVAL = ["ERR@20", "ERR@5", "nDCG(dcg='exp-log2')@10"]


def ir_case(seed):
    qrels, run = tie_free_case(seed, negatives=True)
    run["999"] = {"d1": 1.0}                # a run query without judgments
    qrels["1000"] = {"d1": 1, "d2": 0}      # a judged query without a run
    return qrels, run


@pytest.mark.parametrize("seed", range(4))
def test_ir_measures_names_equal_calc_aggregate(seed):
    ir_measures = pytest.importorskip("ir_measures",
                                      reason="ir_measures is the reference for its names")
    qrels, run = ir_case(seed)
    measures = [ir_measures.parse_measure(n) for n in IR_NAMES]
    theirs = ir_measures.calc_aggregate(measures, qrels, run)
    # ir_measures averages over every judged query, a missing one scoring 0
    ours = qafast.evaluate(qrels, run, IR_NAMES, queries="qrels")
    for name, measure in zip(IR_NAMES, measures):
        assert close(ours[name], theirs[measure]), (name, ours[name], theirs[measure])


@pytest.mark.parametrize("seed", range(2))
def test_ir_measures_gdeval_names_equal_to_its_printed_precision(seed):
    ir_measures = pytest.importorskip("ir_measures")
    import shutil

    if not shutil.which("perl"):
        pytest.skip("ir_measures computes ERR with gdeval.pl, which needs perl")
    qrels, run = ir_case(seed)
    measures = [ir_measures.parse_measure(n) for n in IR_GDEVAL]
    theirs = {(m.query_id, str(m.measure)): m.value
              for m in ir_measures.iter_calc(measures, qrels, run)}
    ours = qafast.evaluate(qrels, run, IR_GDEVAL, queries="qrels", per_query=True)
    for (q, name), value in theirs.items():
        assert abs(ours[q][name] - value) <= 5.000001e-6, (q, name, ours[q][name], value)
    # to the last bit, nDCG with exponential gain is ranx's ndcg_burges (checked against ranx
    # above); ir_measures' ranx provider would give it, but fails on pandas' string dtype
    both = qafast.evaluate(qrels, run, ["nDCG(dcg='exp-log2')@10", "ndcg_burges@10"],
                           queries="qrels")
    assert both["nDCG(dcg='exp-log2')@10"] == both["ndcg_burges@10"]


def test_ir_measures_objects_are_keys():
    ir_measures = pytest.importorskip("ir_measures")
    from ir_measures import AP, P, nDCG

    qrels, run = ir_case(1)
    measures = [nDCG @ 10, P(rel=2) @ 5, AP, ir_measures.NumQ]
    theirs = ir_measures.calc_aggregate(measures, qrels, run)
    ours = qafast.evaluate(qrels, run, measures, queries="qrels")
    assert list(ours) == measures
    for m in measures:
        assert close(ours[m], theirs[m])
    assert qafast.evaluate(qrels, run, nDCG @ 10, queries="qrels") == {nDCG @ 10: ours[nDCG @ 10]}


def test_ir_measures_is_imported_only_for_its_objects():
    code = ("import sys, qafast; qafast.evaluate({'q': {'a': 1}}, {'q': {'a': 1.0}}, "
            "['nDCG@10', 'P(rel=2)@5', 'Judged@10', 'ndcg@3', 'hits@2']); "
            "print('ir_measures' in sys.modules, 'ranx' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == ["False", "False"]


def test_iprec_of_ir_measures_rounds_as_pytrec_eval():
    # R = 4, relevant at ranks 1, 4, 5: trec_eval 10.0 puts recall 0.3 at 1 relevant
    # document (lround(1.2)), 9.0.8 (pytrec_eval, so ir_measures) at 2 ((long)(1.2 + 0.9))
    qrels = {"q": {"a": 1, "d": 1, "e": 1, "z": 1}}
    run = {"q": {"a": 0.9, "b": 0.8, "c": 0.7, "d": 0.6, "e": 0.5}}
    got = qafast.evaluate(qrels, run, ["IPrec@0.3", "iprec_at_recall.0.3"])
    assert got == {"IPrec@0.3": 0.6, "iprec_at_recall_0.30": 1.0}


def test_rel_parameter_sets_the_level_of_one_measure():
    qrels, run = tie_free_case(3)
    mixed = qafast.evaluate(qrels, run, ["P(rel=2)@5", "P@5", "RR(rel=3)", "map@10-l2", "map"])
    assert mixed["P(rel=2)@5"] == qafast.evaluate(qrels, run, "P_5", relevance_level=2)["P_5"]
    assert mixed["RR(rel=3)"] == qafast.evaluate(qrels, run, "recip_rank",
                                                 relevance_level=3)["recip_rank"]
    assert mixed["map@10-l2"] == qafast.evaluate(qrels, run, "map_cut_10",
                                                 relevance_level=2)["map_cut_10"]
    assert mixed["P@5"] == qafast.evaluate(qrels, run, "P_5")["P_5"]
    assert mixed["map"] == qafast.evaluate(qrels, run, "map")["map"]


def test_err_refuses_grades_above_gdevals_scale():
    with pytest.raises(ValueError, match="grade 5 is above 4"):
        qafast.evaluate({"q": {"a": 5}}, {"q": {"a": 1.0}}, "ERR@10")


def test_ir_measures_parameters_are_checked():
    qrels, run = {"q": {"a": 1}}, {"q": {"a": 1.0}}
    for name, message in [
        ("P(judged_only=1)@5", "is not a bool"),
        ("P(foo=1)@5", "takes no parameter 'foo'"),
        ("P(rel=True)@5", "is not an int"),
        ("Success", "needs a cutoff"),
        ("RBP", "RBP needs rel"),
        ("nDCG(gains={1: 2.5})@5", "integer gains"),
        ("P@0", "must be positive"),
    ]:
        with pytest.raises(ValueError, match=message):
            qafast.evaluate(qrels, run, name)


# ---------------------------------------------------------------------------------------------
# names and collisions

def test_names_keep_their_tools_case_and_meaning():
    qrels, run = tie_free_case(2)
    same = {"map@100": "map_cut_100", "MAP@100": "map_cut_100", "AP@100": "map_cut_100",
            "ndcg@10": "ndcg_cut_10", "nDCG@10": "ndcg_cut_10", "NDCG@10": "ndcg_cut_10",
            "mrr@10": "recip_rank_cut_10", "RR@10": "recip_rank_cut_10", "mrr": "recip_rank",
            "r-precision": "Rprec", "hit@10": "success_10", "hit_rate@10": "success_10",
            "precision": "set_P", "recall@0": "set_recall", "P@5": "P_5", "R@5": "recall_5",
            "ndcg_exp@10": "ndcg_cut_exp_10", "ndcg_burges@10": "ndcg_cut_exp_10",
            "dcg@0": "dcg", "f1": "set_F"}
    got = qafast.evaluate(qrels, run, list(same))
    trec = qafast.evaluate(qrels, run, sorted(set(same.values())))
    for name, trec_name in same.items():
        assert close(got[name], trec[trec_name]), name
    # trec_eval's own names win: "recall" is recall_5 ... recall_1000, not ranx's recall@0
    assert "recall_5" in qafast.evaluate(qrels, run, "recall")
    for wrong in ("Ndcg@10", "Hits@10", "ap@10", "rr@10"):
        with pytest.raises(ValueError, match="unknown measure"):
            qafast.evaluate(qrels, run, wrong)


def test_unknown_name_lists_the_closest():
    qrels, run = {"q": {"a": 1}}, {"q": {"a": 1.0}}
    with pytest.raises(ValueError, match=r"did you mean ndcg@20, nDCG@20, NDCG@20"):
        qafast.evaluate(qrels, run, "ndgc@20")
    with pytest.raises(ValueError, match=r"did you mean .*hits@10"):
        qafast.evaluate(qrels, run, "hits@ten")
    with pytest.raises(ValueError, match=r"unknown measure 'nonsense'\. Measures are named"):
        qafast.evaluate(qrels, run, "nonsense")


# ---------------------------------------------------------------------------------------------
# the new families: kernels against the specification, on tie-heavy input

GRADES = [-1, 0, 0, 1, 1, 2, 3, 4]

NEW_COLUMNS = [
    Column("hits_1", "hits", k=1), Column("hits_3", "hits", k=3),
    Column("hits", "hits", k=_NO_CUTOFF), Column("f1_2", "f1", k=2),
    Column("f1", "f1", k=_NO_CUTOFF), Column("rbp_5", "rbp_graded", x=0.5),
    Column("rbp_95", "rbp_graded", x=0.95), Column("judged_1", "judged", k=1),
    Column("judged_3", "judged", k=3), Column("judged", "judged", k=_NO_CUTOFF),
    Column("err_2", "err", k=2), Column("err", "err", k=_NO_CUTOFF),
    Column("numq", "query_count"),
] + [Column(f"dcg_{k}_{flags}", "graded_dcg", k=k, x=float(flags))
     for k in (1, 3, _NO_CUTOFF) for flags in range(4)]


def spec_param(c: Column):
    k = None if c.k == _NO_CUTOFF else c.k
    if c.family == "graded_dcg":
        return (k, bool(int(c.x) & 1), bool(int(c.x) & 2))
    if c.family == "rbp_graded":
        return c.x
    if c.family == "query_count":
        return None
    return k


def cases():
    return qrels_and_runs(grades=GRADES, min_retrieved=1)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases(), level=st.sampled_from([1, 1, 2, 3]), judged_only=st.booleans(),
       max_docs=st.sampled_from([None, None, 2]))
def test_new_families_equal_the_specification(case, level, judged_only, max_docs):
    from qafast._engine import Evaluation as _Evaluation
    from qafast._ranked import as_qrels as _as_qrels
    from qafast._ranked import as_run as _as_run

    qrels, run = case
    ev = _Evaluation(_as_qrels(qrels), _as_run(run), relevance_level=level,
                     judged_only=judged_only, max_docs=max_docs, queries="run", workers=1)
    got = ev.values(NEW_COLUMNS)
    specs = [(c.family, spec_param(c)) for c in NEW_COLUMNS]
    want = reference.evaluate(qrels, run, specs, relevance_level=level,
                              judged_only=judged_only, max_docs=max_docs)
    assert list(want) == ev.ids
    for p, q in enumerate(ev.ids):
        for j, (c, spec) in enumerate(zip(NEW_COLUMNS, specs)):
            a, b = float(got[p, j]), want[q][spec]
            assert a == b or abs(a - b) <= 1e-12 * max(1.0, abs(b)), (q, c.name, a, b)


def test_other_tools_names_score_a_missing_query_zero():
    # trec_eval -c counts R for a judged query missing from the run; ir_measures and ranx 0
    qrels = {"q1": {"a": 1}, "q2": {"b": 1, "c": 2}}
    run = {"q1": {"a": 1.0}}
    got = qafast.evaluate(qrels, run, ["num_rel", "NumRel", "NumQ", "Judged@5", "hits@5"],
                          queries="qrels", per_query=True)
    assert got["q2"] == {"num_rel": 2.0, "NumRel": 0.0, "NumQ": 0.0, "Judged@5": 0.0,
                         "hits@5": 0.0}


def test_parse_measures_takes_one_object_or_name():
    assert [c.name for c in parse_measures("hits@3")] == ["hits@3"]
    assert math.isclose(qafast.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, "rbp.5")["rbp.5"],
                        0.5)


def test_mixed_levels_give_the_same_numbers_on_every_path(tmp_path):
    # columns with their own level run in their own kernel pass; threads, the streamed dict
    # and file paths, and a built Run agree to the bit
    qrels, run = tie_free_case(4)
    names = ["P(rel=2)@5", "P@5", "ndcg@10-l3", "ndcg@10", "IPrec@0.3", "iprec_at_recall.0.3",
             "hits@10-l2", "map", "ERR@10", "Judged@5"]
    one = qafast.evaluate(qrels, run, names, per_query=True)
    assert repr(qafast.evaluate(qrels, run, names, per_query=True, workers=3)) == repr(one)
    assert repr(qafast.evaluate(qrels, qafast.Run(run), names, per_query=True)) == repr(one)
    path = tmp_path / "run.txt"
    path.write_text("".join(f"{q} Q0 {d} 0 {s!r} r\n" for q in run for d, s in run[q].items()))
    assert repr(qafast.evaluate(qrels, str(path), names, per_query=True)) == repr(one)
