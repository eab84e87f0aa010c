"""ir_measures' parameters on one measure: nDCG's ``gains=`` and ``judged_only=True``.

The kernels against the specification on random tie-heavy runs (negative and large grades,
unjudged documents, empty rankings, cut-offs past the ranking), and against ir_measures
itself (its pytrec_eval provider), one measure per call, query by query.
"""

import math
import random

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import qafast
from qafast import reference
from qafast.errors import InputError, MeasureError
from _examples import examples
from _strategies import qrels_and_runs

GRADES = [-2, -1, 0, 0, 1, 1, 2, 3, 4, 40]

# name -> the specification's (family, parameter), and whether it drops unjudged documents
GAINS = {
    "nDCG(gains={0:0,1:1,2:3})@3": ("ndcg_cut", (3, ((0, 0), (1, 1), (2, 3)))),
    "nDCG(gains={0:0,1:1,2:3})@20": ("ndcg_cut", (20, ((0, 0), (1, 1), (2, 3)))),
    "nDCG(gains={1:5,2:-1,3:1})@2": ("ndcg_cut", (2, ((1, 5), (2, 0), (3, 1)))),
    "nDCG(gains={0:2,40:1})@4": ("ndcg_cut", (4, ((0, 2), (40, 1)))),
    "nDCG(gains={-1:-3,1:7})@4": ("ndcg_cut", (4, ((1, 7),))),
    "nDCG(gains={0:0,1:1,2:3})": ("ndcg", ((0, 0.0), (1, 1.0), (2, 3.0))),
    "nDCG(gains={1:5,2:-1,3:1})": ("ndcg", ((1, 5.0), (2, 0.0), (3, 1.0))),
}
JUDGED_ONLY = {
    "nDCG(judged_only=True)@3": ("ndcg_cut", 3),
    "nDCG(judged_only=True)": ("ndcg", None),
    "P(judged_only=True)@3": ("P", 3),
    "P(judged_only=True)@20": ("P", 20),
    "AP(judged_only=True)": ("map", None),
    "AP(judged_only=True)@2": ("map_cut", 2),
    "RR(judged_only=True)": ("recip_rank", None),
    "Rprec(judged_only=True)": ("Rprec", None),
    "R(judged_only=True)@2": ("recall", 2),
    "SetP(judged_only=True)": ("set_P", None),
    "SetF(judged_only=True)": ("set_F", None),
    "Success(judged_only=True)@1": ("success", 1),
    "nDCG(gains={0:1,1:1,2:3},judged_only=True)@4": ("ndcg_cut", (4, ((0, 1), (1, 1), (2, 3)))),
}


def cases():
    return qrels_and_runs(grades=GRADES)


def same(a, b):
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-12


@settings(max_examples=examples(100), deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(case=cases(), max_docs=st.sampled_from([None, None, 2]))
def test_the_kernel_computes_the_specification(case, max_docs):
    qrels, run = case
    assume(any(run.values()))  # a run of empty rankings only is refused
    names = list(GAINS) + list(JUDGED_ONLY)
    got = qafast.evaluate(qrels, run, names, max_docs=max_docs, per_query=True)
    for table, judged_only in ((GAINS, False), (JUDGED_ONLY, True)):
        want = reference.evaluate(qrels, run, list(table.values()), judged_only=judged_only,
                                  max_docs=max_docs)
        for q in want:
            for name, spec in table.items():
                assert same(got[q][name], want[q][spec]), (q, name, got[q][name], want[q][spec])


def test_judged_only_on_one_measure_leaves_the_others():
    qrels = {"q1": {"a": 1, "b": 0, "c": -1}}
    run = {"q1": {"x": 0.9, "a": 0.8, "c": 0.7, "b": 0.6}}
    got = qafast.evaluate(qrels, run, ["P@1", "P(judged_only=True)@1", "AP",
                                       "AP(judged_only=True)"])
    assert got == {"P@1": 0.0, "P(judged_only=True)@1": 1.0, "AP": 0.5,
                   "AP(judged_only=True)": 1.0}


def test_a_gain_map_on_ndcg_at_k():
    qrels = {"q1": {"a": 2, "b": 1, "c": 0}}
    run = {"q1": {"b": 0.9, "a": 0.8, "c": 0.7}}
    got = qafast.evaluate(qrels, run, ["nDCG(gains={0:0,1:1,2:3})@2"])
    want = (1 + 3 / math.log2(3)) / (3 + 1 / math.log2(3))
    assert got["nDCG(gains={0:0,1:1,2:3})@2"] == pytest.approx(want, abs=1e-15)


@pytest.mark.parametrize("name,says", [
    ("nDCG(gains={1:1.5})@10", "not an integer"),
    ("nDCG(gains={'1':2})@10", "not an integer"),
    ("nDCG(gains={-1:2})@10", "negative (unjudged) grade -1"),
    ("nDCG(gains={1:-1},judged_only=True)@10", "unjudged"),
    ("nDCG(dcg='exp-log2',gains={1:2})@10", "dcg='log2'"),
    ("nDCG(gains=3)@10", "gains=3 is not a dict"),
    ("P(judged_only=1)@10", "not a bool"),
])
def test_parameters_qafast_cannot_honour_are_refused(name, says):
    with pytest.raises(MeasureError, match=says.replace("(", r"\(").replace(")", r"\)")):
        qafast.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, [name])


def test_the_streaming_metric_refuses_judged_only():
    with pytest.raises(InputError, match="judged_only"):
        qafast.RankingMetrics(["P(judged_only=True)@5"])


# ---------------------------------------------------------------------------------------------
# ir_measures' own numbers (its pytrec_eval provider), one measure per call: a call of several
# puts an nDCG without gains= into the invocation of one with them (ir_measures 0.4.3)

def test_ir_measures_gives_the_same_numbers():
    ir_measures = pytest.importorskip("ir_measures")
    pytest.importorskip("pytrec_eval")
    from ir_measures import providers

    provider = providers.registry["pytrec_eval"]
    rng = random.Random(5)
    names = list(GAINS) + list(JUDGED_ONLY)
    measures = [eval(n, vars(ir_measures)) for n in names]  # "-1" is no ir_measures string
    compared = 0
    for _ in range(25):
        qrels, run = {}, {}
        for q in range(rng.randint(1, 4)):
            docs = [f"d{i}" for i in range(12)]
            qrels[f"q{q}"] = {d: rng.choice([-1, 0, 0, 1, 1, 2, 3])
                              for d in rng.sample(docs, rng.randint(1, 8))}
            # a grade >= 0 under every map above: pytrec_eval's ndcg never returns on a
            # query judged only below 0
            qrels[f"q{q}"][rng.choice(docs)] = rng.choice([0, 1])
            ranked = rng.sample(docs, rng.randint(1, 10))
            run[f"q{q}"] = {d: float(rng.choice([0, 1, 2, 3])) for d in ranked}
        got = qafast.evaluate(qrels, run, names, per_query=True)
        for name, measure in zip(names, measures):
            for m in provider.iter_calc([measure], qrels, run):
                assert same(got[m.query_id][name], m.value), (name, m.query_id, qrels, run)
                compared += 1
    assert compared > 1000


# ---------------------------------------------------------------------------------------------
# Compat (Clarke et al.'s compatibility)

COMPAT = {"Compat": ("compat", 0.95), "Compat(p=0.5)": ("compat", 0.5),
          "Compat(p=1.0,normalize=False)": ("compat_raw", 1.0),
          "Compat(normalize=False)": ("compat_raw", 0.95), "Compat(p=0.0)": ("compat", 0.0)}


@settings(max_examples=examples(100), deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(case=cases(), max_docs=st.sampled_from([None, None, 2]), judged_only=st.booleans())
def test_compat_kernel_computes_the_specification(case, max_docs, judged_only):
    qrels, run = case
    assume(any(run.values()))
    got = qafast.evaluate(qrels, run, list(COMPAT), max_docs=max_docs,
                          judged_only=judged_only, per_query=True)
    want = reference.evaluate(qrels, run, list(COMPAT.values()), max_docs=max_docs,
                              judged_only=judged_only)
    for q in want:
        for name, spec in COMPAT.items():
            assert same(got[q][name], want[q][spec]), (q, name, got[q][name], want[q][spec])


def test_compat_refuses_a_persistence_outside_0_1():
    with pytest.raises(MeasureError, match=r"in \[0, 1\]"):
        qafast.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["Compat(p=1.5)"])


def test_compat_is_ir_measures_own():
    ir_measures = pytest.importorskip("ir_measures")
    from ir_measures import providers

    provider = providers.registry["compat"]
    rng = random.Random(9)
    names = list(COMPAT)
    measures = [ir_measures.parse_measure(n) for n in names]
    compared = 0
    for _ in range(40):
        qrels, run = {}, {}
        for q in range(rng.randint(1, 4)):
            docs = [f"d{i}" for i in range(15)]
            qrels[f"q{q}"] = {d: rng.choice([-1, 0, 0, 1, 1, 2, 3, 3])
                              for d in rng.sample(docs, rng.randint(1, 10))}
            ranked = rng.sample(docs, rng.randint(1, 12))
            # positive, tie-free scores: ir_measures breaks ties by docno ascending (qafast
            # as trec_eval) and ranks an unranked document as scored 0 in the ideal ranking
            run[f"q{q}"] = {d: 1.0 + i + rng.random() / 2 for i, d in enumerate(ranked)}
        got = qafast.evaluate(qrels, run, names, per_query=True)
        for name, measure in zip(names, measures):
            for m in provider.iter_calc([measure], qrels, run):
                assert same(got[m.query_id][name], m.value) or math.isclose(
                    got[m.query_id][name], m.value, rel_tol=1e-13), (name, m.query_id)
                compared += 1
    assert compared > 300
