"""qafast as an ir_measures provider: ir_measures' written-down numbers, its pipeline, and
agreement with the providers ir_measures picks by default.

The qrels, runs and expected values of the first tests are those of ir_measures' own test
suite (terrierteam/ir_measures, tests/test_pytrec_eval.py, test_judged.py, test_gdeval.py and
test_providers.py; Apache License 2.0), computed here by qafast's provider.
"""

import random

import pytest

ir_measures = pytest.importorskip("ir_measures")

from ir_measures import (
    AP,
    ERR,
    RR,
    Bpref,
    Accuracy,
    IPrec,
    Judged,
    Metric,
    NumQ,
    NumRel,
    NumRet,
    P,
    R,
    Rprec,
    SetAP,
    SetF,
    SetP,
    SetR,
    SetRelP,
    Success,
    infAP,
    nDCG,
)

from qafast.integrations import ir_measures as qafast_ir


def _qrels(text: str):
    return list(ir_measures.read_trec_qrels(text))


def _run(text: str):
    return list(ir_measures.read_trec_run(text))


_RUN_A = """0 0 D0 1 0.8 run
0 0 D2 2 0.7 run
0 0 D1 3 0.3 run
0 0 D3 4 0.4 run
0 0 D4 5 0.1 run
1 0 D1 1 0.8 run
1 0 D3 2 0.7 run
1 0 D4 3 0.3 run
1 0 D2 4 0.4 run
"""
_RUN_B = _RUN_A.replace("1 0 D3 2 0.7", "1 0 D4 2 0.7").replace("1 0 D4 3 0.3", "1 0 D3 3 0.3")
_QRELS = {
    "counts": "0 0 D0 0\n0 0 D1 1\n0 0 D2 1\n0 0 D3 2\n0 0 D4 0\n1 0 D0 1\n1 0 D3 2\n1 0 D5 2\n",
    "numrel": "0 0 D0 0\n0 0 D1 1\n0 0 D2 1\n0 0 D3 2\n0 0 D4 0\n1 0 D0 1\n1 0 D3 2\n1 0 D5 0\n",
    "sets": "0 0 D0 0\n0 0 D1 1\n0 0 D2 2\n0 0 D3 2\n0 0 D4 0\n1 0 D0 1\n1 0 D3 2\n1 0 D5 0\n",
    "iprec": "0 0 D0 1\n0 0 D1 1\n0 0 D2 2\n0 0 D3 2\n0 0 D4 0\n1 0 D0 1\n1 0 D3 2\n1 0 D5 0\n",
    "infap": ("0 0 D0 1\n0 0 D1 -1\n0 0 D2 0\n0 0 D3 2\n0 0 D4 0\n1 0 D0 1\n1 0 D3 2\n"
              "1 0 D4 -1\n1 0 D5 0\n"),
}

#: (qrels, run, measure, {query: value}, aggregate, decimal places: None = exactly)
CASES = [
    ("counts", _RUN_A, NumRet, {"0": 5, "1": 4}, 9, None),
    ("counts", _RUN_A, NumRet(rel=1), {"0": 3, "1": 1}, 4, None),
    ("counts", _RUN_A, NumRet(rel=2), {"0": 1, "1": 1}, 2, None),
    ("counts", _RUN_A, NumRet(rel=3), {"0": 0, "1": 0}, 0, None),
    ("counts", _RUN_A, NumQ, {"0": 1, "1": 1}, 2, None),
    ("numrel", _RUN_A, NumRel, {"0": 3, "1": 2}, 5, None),
    ("sets", _RUN_B, Success@2, {"0": 1, "1": 0}, 0.5, None),
    ("sets", _RUN_B, Success(rel=2)@2, {"0": 1, "1": 0}, 0.5, None),
    ("sets", _RUN_B, Success(rel=3)@2, {"0": 0, "1": 0}, 0, None),
    ("sets", _RUN_B, SetP(rel=1), {"0": 0.6, "1": 0.25}, 0.425, None),
    ("sets", _RUN_B, SetRelP(rel=1), {"0": 1.0, "1": 0.5}, 0.75, None),
    ("sets", _RUN_B, SetP(rel=2), {"0": 0.4, "1": 0.25}, 0.325, None),
    ("sets", _RUN_B, SetRelP(rel=2), {"0": 1.0, "1": 1.0}, 1.0, None),
    ("sets", _RUN_B, SetP(rel=3), {"0": 0, "1": 0}, 0, None),
    ("sets", _RUN_B, SetR(rel=1), {"0": 1.0, "1": 0.5}, 0.75, None),
    ("sets", _RUN_B, SetR(rel=2), {"0": 1.0, "1": 1.0}, 1.0, None),
    ("sets", _RUN_B, SetR(rel=3), {"0": 0, "1": 0}, 0, None),
    ("sets", _RUN_B, SetAP(rel=1), {"0": 0.6, "1": 0.125}, 0.3625, None),
    ("sets", _RUN_B, SetAP(rel=2), {"0": 0.4, "1": 0.25}, 0.325, None),
    ("sets", _RUN_B, SetAP(rel=3), {"0": 0, "1": 0}, 0, None),
    ("sets", _RUN_B, SetF(rel=1), {"0": 0.75, "1": 0.33333}, 0.5417, 4),
    ("sets", _RUN_B, SetF(rel=1, beta=0.5), {"0": 0.6923, "1": 0.3}, 0.49615, 4),
    ("sets", _RUN_B, SetF(rel=1, beta=2.0), {"0": 0.81818, "1": 0.375}, 0.59659, 4),
    ("sets", _RUN_B, SetF(rel=3), {"0": 0, "1": 0}, 0, None),
    ("iprec", _RUN_B, IPrec@0.25, {"0": 1.0, "1": 0.25}, 0.625, None),
    ("iprec", _RUN_B, IPrec@0.5, {"0": 1.0, "1": 0.25}, 0.625, None),
    ("iprec", _RUN_B, IPrec@0.75, {"0": 1.0, "1": 0}, 0.5, None),
    ("iprec", _RUN_B, IPrec(rel=2)@0.1, {"0": 0.6666666, "1": 0.25}, 0.4583, 4),
    ("iprec", _RUN_B, IPrec(rel=2)@0.75, {"0": 0.6666666, "1": 0.25}, 0.4583, 4),
    ("infap", _RUN_B, AP, {"0": 0.8333, "1": 0.125}, 0.47916666666666663, 4),
    ("infap", _RUN_B, infAP, {"0": 0.8333, "1": 0.1875}, 0.510416, 4),
    ("infap", _RUN_B, AP(rel=2), {"0": 0.33333, "1": 0.25}, 0.2917, 4),
    ("infap", _RUN_B, infAP(rel=2), {"0": 0.33333, "1": 0.375}, 0.3542, 4),
    ("infap", _RUN_B, nDCG, {"0": 0.76018, "1": 0.32739}, None, 4),
    ("infap", _RUN_B, nDCG@3, {"0": 0.76018, "1": 0.0}, None, 4),
    ("counts", _RUN_A, Judged, {"0": 1.0, "1": 0.25}, None, 4),
    ("counts", _RUN_A, Judged@1000, {"0": 1.0, "1": 0.25}, None, 4),
    ("counts", _RUN_A, Judged@3, {"0": 1.0, "1": 1 / 3}, None, 4),
    ("counts", _RUN_A, Judged@1, {"0": 1.0, "1": 0.0}, None, 4),
]


def _close(got, want, places) -> bool:
    return got == want if places is None else round(abs(got - want), places) == 0


@pytest.mark.parametrize("qrels_name, run_text, measure, per_query, aggregate, places", CASES,
                         ids=[f"{c[2]}-{c[0]}" for c in CASES])
def test_ir_measures_written_numbers(qrels_name, run_text, measure, per_query, aggregate,
                                     places):
    provider = qafast_ir.QafastProvider()
    qrels, run = _qrels(_QRELS[qrels_name]), _run(run_text)
    assert provider.supports(measure)
    got = {m.query_id: m.value for m in provider.iter_calc([measure], qrels, run)}
    assert got.keys() == per_query.keys()
    for query_id, want in per_query.items():
        assert _close(got[query_id], want, places), (query_id, got[query_id], want)
    if aggregate is not None:
        assert _close(provider.calc_aggregate([measure], qrels, run)[measure], aggregate, places)


def test_gdeval_err_to_its_printed_decimals():
    # gdeval.pl prints 5 decimals; qafast's ERR is the same number unrounded
    provider = qafast_ir.QafastProvider()
    qrels = _qrels(_QRELS["counts"])
    by = {(m.query_id, str(m.measure)): m.value
          for m in provider.iter_calc([ERR@20, ERR@2], qrels, _run(_RUN_A))}
    assert round(by["0", "ERR@20"], 5) == 0.10175
    assert round(by["1", "ERR@20"], 5) == 0.09375
    assert round(by["0", "ERR@2"], 5) == 0.03125
    assert round(by["1", "ERR@2"], 5) == 0.09375


def test_gdeval_ndcg_is_ndcg_with_exponential_gain():
    # ir_measures' gdeval provider answers nDCG@k with gdeval.pl's nDCG (gain 2**grade - 1),
    # which ir_measures spells nDCG(dcg='exp-log2')@k everywhere else
    provider = qafast_ir.QafastProvider()
    exp20, exp2 = nDCG(dcg="exp-log2")@20, nDCG(dcg="exp-log2")@2
    by = {(m.query_id, m.measure): m.value for m in provider.iter_calc(
        [exp20, exp2], _qrels(_QRELS["counts"]), _run(_RUN_A))}
    assert [round(by[k], 5) for k in [("0", exp20), ("1", exp20), ("0", exp2), ("1", exp2)]] \
        == [0.62010, 0.35099, 0.17377, 0.38685]


def test_missing_queries_and_empty_inputs_as_ir_measures_has_them():
    provider = qafast_ir.QafastProvider()
    qrels = _qrels(_QRELS["counts"])
    run = _run(_RUN_A)
    partial_run = [r for r in run if r.query_id == "0"]
    partial_qrels = [q for q in qrels if q.query_id == "0"]
    assert set(provider.iter_calc([P@5], qrels, [])) == {Metric("0", P@5, 0.0),
                                                         Metric("1", P@5, 0.0)}
    assert set(provider.iter_calc([P@5], qrels, partial_run)) == {Metric("0", P@5, 0.6),
                                                                  Metric("1", P@5, 0.0)}
    assert list(provider.iter_calc([P@5], [], run)) == []
    assert set(provider.iter_calc([P@5], partial_qrels, run)) == {Metric("0", P@5, 0.6)}
    assert list(provider.iter_calc([P@5], [], [])) == []
    assert set(provider.iter_calc([RR@5], qrels, partial_run)) == {Metric("0", RR@5, 0.5),
                                                                   Metric("1", RR@5, 0.0)}


def test_register_puts_qafast_first_and_patch_restores_the_pipeline():
    before = list(ir_measures.DefaultPipeline.providers)
    with qafast_ir.patch() as provider:
        names = [p.NAME for p in ir_measures.DefaultPipeline.providers]
        assert names.index("qafast") == names.index("runtime") + 1
        assert ir_measures.providers.registry["qafast"] is provider
        evaluator = ir_measures.evaluator([P@5, nDCG@10], _qrels(_QRELS["counts"]))
        assert type(evaluator).__module__ == "qafast.integrations.ir_measures"
        # a second register() is the same provider
        assert qafast_ir.register() is provider
    assert ir_measures.DefaultPipeline.providers == before
    assert "qafast" not in ir_measures.providers.registry


def test_measures_qafast_lacks_go_to_the_next_provider():
    # qafast's provider leaves Accuracy at rel <= 0 (where an unjudged document counts as
    # relevant) to ir_measures' accuracy provider
    qrels, run = _qrels(_QRELS["infap"]), _run(_RUN_A)
    measures = [P@5, Accuracy(rel=0)]
    with qafast_ir.patch() as provider:
        assert not provider.supports(Accuracy(rel=0))
        assert provider.supports(Accuracy())
        got = ir_measures.calc_aggregate(measures, qrels, run)
    want = ir_measures.calc_aggregate(measures, qrels, run)
    assert got == want
    with pytest.raises(ValueError, match="does not compute"):
        provider.evaluator([Accuracy(rel=0)], qrels)


def test_an_evaluator_serves_many_runs():
    qrels = _qrels(_QRELS["counts"])
    evaluator = qafast_ir.QafastProvider().evaluator([AP, P@2], qrels)
    first = evaluator.calc_aggregate(_run(_RUN_A))
    second = evaluator.calc_aggregate(_run(_RUN_B))
    assert first != second
    assert evaluator.calc_aggregate(_run(_RUN_A)) == first


def _random_case(rng: random.Random):
    qrels, run = {}, {}
    for q in range(rng.randint(1, 6)):
        qid = f"q{q}"
        docs = [f"d{d}" for d in range(rng.randint(1, 12))]
        judged = rng.sample(docs, rng.randint(0, len(docs)))
        if judged:
            qrels[qid] = {d: rng.choice([-1, 0, 0, 1, 1, 2, 3]) for d in judged}
        ranked = rng.sample(docs, rng.randint(0, len(docs)))
        if ranked:
            # distinct scores: providers break ties their own ways
            scores = rng.sample(range(1000), len(ranked))
            run[qid] = {d: s / 7.0 for d, s in zip(ranked, scores)}
    return qrels, run


MEASURES = [P@5, P(rel=2)@3, R@5, AP, AP@5, AP(rel=2), RR, RR@3, nDCG, nDCG@5, Rprec,
            Bpref, infAP, SetP, SetR, SetF, SetAP, Success@3, NumRet, NumRel,
            NumQ, Judged@5, IPrec@0.3]


def test_per_query_values_equal_ir_measures_default_providers_to_the_bit():
    rng = random.Random(20261129)
    provider = qafast_ir.QafastProvider()
    for _ in range(40):
        qrels, run = _random_case(rng)
        ours = {(m.query_id, str(m.measure)): m.value
                for m in provider.iter_calc(MEASURES, qrels, run)}
        theirs = {(m.query_id, str(m.measure)): m.value
                  for m in ir_measures.iter_calc(MEASURES, qrels, run)}
        assert ours.keys() == theirs.keys()
        assert ours == theirs, (qrels, run)
