"""The C/W/L measures ir_measures takes from cwl_eval (RBP, BPM, SDCG, NERR8-11, INST, INSQ)
as rows of the measure table: the kernel against the specification on tie-heavy input with
long rankings, and qafast.evaluate against ir_measures' own cwl_eval provider."""

import math
import random
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import qafast
from qafast import reference
from qafast._measure_parser import UnknownMeasureError, parse_measures
from _examples import examples

NAMES = [
    "RBP(rel=1)", "RBP(rel=2, p=0.5)", "RBP(rel=0, p=0.95)",
    "BPM(T=1, max_rel=4)@10", "BPM(T=2.5, max_rel=3)@3000", "BPM(T=1000, max_rel=4)@10",
    "SDCG(max_rel=3)@10", "SDCG(max_rel=4, min_rel=-2)@2000",
    "NERR8(max_rel=3)@10", "NERR8(max_rel=4, min_rel=1)@1", "NERR9(max_rel=3)@5",
    "NERR10(max_rel=4)", "NERR10(p=0.5, max_rel=2)", "NERR11(max_rel=4)",
    "NERR11(T=3, max_rel=2, min_rel=-1)", "INST(max_rel=4)", "INST(T=3, max_rel=7)",
    "INSQ(max_rel=4)", "INSQ(T=0.5, max_rel=1)",
]
COLUMNS = parse_measures(NAMES)


def spec_param(c):
    return ((c.k or None), c.x) + (tuple(c.keys) or (None, None))


@st.composite
def cases(draw):
    """Tie-heavy runs: scores from a few values, grades negative to large, unjudged and
    judged-but-unretrieved documents, empty rankings and rankings longer than 1000."""
    qrels, run = {}, {}
    for n, qid in enumerate(draw(st.lists(st.sampled_from(["q1", "q2", "é"]), unique=True,
                                          min_size=1, max_size=3))):
        size = draw(st.sampled_from([0, 1, 5, 12, 1003] if n else [1, 5, 12, 1003]))
        docs = [f"d{i}" for i in range(size + 4)]
        judged = draw(st.lists(st.sampled_from(docs), unique=True, min_size=1, max_size=8))
        if size > 1000:  # judgements around rank 1000
            judged += [d for d in docs[995:1003] if d not in judged]
        qrels[qid] = {d: draw(st.sampled_from([-3, -1, 0, 1, 2, 3, 4, 9, 10**6]))
                      for d in judged}
        ties = draw(st.sampled_from([1, 3, 1000]))
        run[qid] = {d: float(draw(st.integers(0, ties)) if size < 20 else i % ties)
                    for i, d in enumerate(docs[:size])}
    return qrels, run


@settings(max_examples=examples(40), deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(case=cases(), level=st.sampled_from([1, 2]), judged_only=st.booleans())
def test_the_kernel_computes_the_specification_to_the_last_bit(case, level, judged_only):
    qrels, run = case
    got = qafast.evaluate(qrels, run, NAMES, relevance_level=level, judged_only=judged_only,
                          per_query=True, queries="qrels")
    for c in COLUMNS:
        param = spec_param(c)
        want = reference.evaluate(qrels, run, [(c.family, param)], judged_only=judged_only,
                                  relevance_level=c.rel if c.rel is not None else level)
        assert set(want) <= set(got) == set(qrels)
        for q in got:  # an empty ranking, or none: 0
            assert got[q][c.name] == want.get(q, {(c.family, param): 0.0})[(c.family, param)]


def test_ranking_metrics_streams_them_as_evaluate_computes_them():
    import numpy as np

    rng = np.random.default_rng(5)
    scores, grades = rng.random((40, 25)), rng.integers(0, 5, (40, 25))
    stream = qafast.RankingMetrics(NAMES)
    stream.update(scores[:15], grades[:15])
    stream.update(scores[15:], grades[15:])
    qrels = {f"q{i}": {f"d{j}": int(g) for j, g in enumerate(row)} for i, row in enumerate(grades)}
    run = {f"q{i}": {f"d{j}": float(s) for j, s in enumerate(row)}
           for i, row in enumerate(scores)}
    assert stream.compute() == qafast.evaluate(qrels, run, NAMES)


# ---------------------------------------------------------------------------------------------
# ir_measures' cwl_eval provider

ir_measures = pytest.importorskip("ir_measures")
pytest.importorskip("cwl")


def random_case(rng: random.Random):
    """Tie-free runs (ir_measures keeps the input order of tied documents), grades -1 to 7,
    a query of the qrels the run lacks, a run query the qrels lack, an empty ranking."""
    qrels, run = {}, {}
    for q in range(5):
        docs = [f"d{i}" for i in range(rng.choice([3, 30, 1200]))]
        qrels[f"q{q}"] = {d: rng.choice([-1, 0, 0, 1, 2, 3, 4, 7])
                          for d in rng.sample(docs, min(len(docs), 25))}
        if q < 4:
            ranked = rng.sample(docs, rng.randint(0, len(docs)))
            scores = rng.sample(range(10**6), len(ranked))
            run[f"q{q}"] = {d: s / 7.0 for d, s in zip(ranked, scores)}
    run["unjudged query"] = {"a": 1.0}
    return qrels, run


IR_MEASURES = [
    "RBP(rel=1)", "RBP(rel=2, p=0.9)", "BPM(T=2.0, max_rel=3)@10", "BPM(T=1000.0, max_rel=4)@10",
    "SDCG(max_rel=3)@10", "SDCG(max_rel=4, min_rel=1)@1500", "NERR8(max_rel=3)@10",
    "NERR9(max_rel=3)@5", "NERR10(p=0.8, max_rel=3)", "NERR11(T=3.0, max_rel=4)",
    "INST(T=3.0, max_rel=4)", "INSQ(max_rel=4)",
]


def ir_measure_objects():
    # ir_measures' own parser takes no negative number: min_rel=-1 as an object
    return ([ir_measures.parse_measure(m) for m in IR_MEASURES]
            + [ir_measures.INST(max_rel=2, min_rel=-1), ir_measures.NERR10(max_rel=3, min_rel=-2)])


def test_evaluate_gives_ir_measures_cwl_eval_values_per_query():
    measures = ir_measure_objects()
    rng = random.Random(7)
    compared = exact = 0
    for _ in range(6):
        qrels, run = random_case(rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = list(ir_measures.cwl_eval.iter_calc(measures, qrels, run))
        got = qafast.evaluate(qrels, run, measures, per_query=True, queries="qrels")
        assert {m.query_id for m in want} == set(got) == set(qrels)
        for m in want:
            value = got[m.query_id][m.measure]
            # cwl sums W . gains with numpy's dot (BLAS), qafast in rank order
            assert math.isclose(value, m.value, rel_tol=1e-12, abs_tol=1e-15), (m, value)
            compared += 1
            exact += value == m.value
        means = qafast.evaluate(qrels, run, measures, queries="qrels")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for measure, value in ir_measures.cwl_eval.calc_aggregate(measures, qrels,
                                                                      run).items():
                assert math.isclose(means[measure], value, rel_tol=1e-12, abs_tol=1e-15)
    assert compared == 6 * 5 * len(measures) and exact > compared // 2


def test_the_qafast_provider_computes_them():
    from qafast.integrations.ir_measures import QafastProvider

    provider = QafastProvider()
    measures = ir_measure_objects()
    assert all(provider.supports(m) for m in measures)
    qrels, run = random_case(random.Random(3))
    got = {(m.query_id, m.measure): m.value for m in provider.iter_calc(measures, qrels, run)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for m in ir_measures.cwl_eval.iter_calc(measures, qrels, run):
            assert math.isclose(got[m.query_id, m.measure], m.value, rel_tol=1e-12,
                                abs_tol=1e-15)


@pytest.mark.parametrize("name, message", [
    ("RBP", "RBP needs rel"), ("RBP(p=0.8)", "RBP needs rel"),
    ("RBP(rel=1)@10", "takes no parameter 'cutoff'"), ("INST", "INST needs max_rel"),
    ("NERR8(max_rel=3)", "NERR8 needs a cutoff"), ("SDCG(max_rel=3)", "needs a cutoff"),
    ("INSQ(max_rel=1, min_rel=1)", "min_rel must be less than max_rel"),
    ("BPM(max_rel=2**40)@10", "unknown measure"), ("BPM(max_rel=4294967296)@10", "outside"),
    ("NERR10(max_rel=3, p=1e999)", "not finite"), ("SDCG(max_rel=3, dcg='exp-log2')@10",
                                                   "dcg must be 'log2'"),
    ("INST(max_rel=1.5)", "is not an int"), ("BPM(max_rel=3, K=10)@10", "no parameter 'K'"),
])
def test_bad_parameters_are_named(name, message):
    with pytest.raises(UnknownMeasureError, match=message.replace("(", r"\(")
                       .replace("*", r"\*")):
        parse_measures(name)


def test_an_example():
    qrels = {"q1": {"a": 2, "b": 0, "c": 1}}
    run = {"q1": {"a": 0.9, "b": 0.8, "c": 0.1, "d": 0.5}}
    got = qafast.evaluate(qrels, run, ["RBP(rel=1, p=0.5)", "INSQ(max_rel=2)"])
    # RBP: W_i = p^(i-1) / sum of p^(j-1) over 1000 ranks; gains 1, 0, 0, 1
    w = [0.5 ** i / sum(0.5 ** j for j in range(1000)) for i in range(4)]
    assert got["RBP(rel=1, p=0.5)"] == pytest.approx(w[0] + w[3], rel=1e-15)
    assert 0.0 < got["INSQ(max_rel=2)"] < 1.0
