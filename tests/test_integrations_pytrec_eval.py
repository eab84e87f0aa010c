"""BEIR's and MTEB's retrieval evaluations, run by the real packages, give the same numbers
with ``qafast.integrations.pytrec_eval.patch()`` as without it, and qafast's evaluator is
the one they call inside the block (and only there)."""

import math
import sys
import types

import numpy as np
import pytest

import qafast.compat
from qafast.errors import InputTypeError
from qafast.integrations.pytrec_eval import patch

pytrec_eval = pytest.importorskip("pytrec_eval")

#: the install lines the skip messages give (tests/requirements.txt lists the same pins)
BEIR = "beir==2.2.0"
MTEB = "mteb==2.26.24"
K_VALUES = [1, 3, 5, 10, 100]


def make_data(seed: int):
    """qrels and results as BEIR and MTEB take them: graded judgments, zeros among them,
    tied scores and doubles that round to one float32, unicode ids, and a document whose id
    is its query's (BEIR drops it by default). Every run query is judged (MTEB looks each
    one up in the qrels); some judged queries are not in the run."""
    rng = np.random.default_rng(seed)
    docs = [f"d{i}" for i in range(40)] + ["dé", "d\u4e2d", "Δ"]
    qrels, results = {}, {}
    for q in range(12):
        qid = f"q{q}" if q % 5 else f"qé{q}"
        judged = rng.choice(len(docs), size=int(rng.integers(1, 8)), replace=False)
        qrels[qid] = {docs[i]: int(rng.integers(0, 4)) for i in judged}
        if q % 4 == 3:
            continue
        retrieved = rng.choice(len(docs), size=int(rng.integers(1, 30)), replace=False)
        results[qid] = {docs[i]: float(rng.integers(0, 6)) / 2 for i in retrieved}
        results[qid][docs[retrieved[0]]] = 1.0 + 2.0**-40   # ties 1.0 as float32
        if q == 1:
            results[qid][qid] = 9.0
    return qrels, results


def same(a, b) -> bool:
    """Equal, NaN equal to NaN, through dicts, lists, tuples and attributes."""
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, dict):
        return (isinstance(b, dict) and list(a) == list(b)
                and all(same(a[k], b[k]) for k in a))
    if isinstance(a, (list, tuple)):
        return (type(a) is type(b) and len(a) == len(b)
                and all(same(x, y) for x, y in zip(a, b)))
    return a == b


@pytest.fixture
def calls(monkeypatch):
    """How many runs qafast's RelevanceEvaluator evaluated."""
    count = [0]
    evaluate = qafast.compat.RelevanceEvaluator.evaluate

    def counted(self, scores):
        count[0] += 1
        return evaluate(self, scores)

    monkeypatch.setattr(qafast.compat.RelevanceEvaluator, "evaluate", counted)
    return count


@pytest.mark.parametrize("seed", range(3))
def test_beir_gives_the_same_numbers_through_qafast(seed, calls):
    evaluation = pytest.importorskip("beir.retrieval.evaluation",
                                     reason=f"BEIR is not installed: pip install {BEIR}")
    qrels, results = make_data(seed)
    # evaluate drops a document whose id is its query's from the results it is given
    expected = evaluation.EvaluateRetrieval.evaluate(qrels, make_data(seed)[1], K_VALUES)
    assert calls[0] == 0
    with patch():
        got = evaluation.EvaluateRetrieval.evaluate(qrels, results, K_VALUES)
    assert calls[0] == 1
    assert same(got, expected)
    assert expected[0]["NDCG@10"] > 0
    # outside the block, pytrec_eval's own evaluator again
    evaluation.EvaluateRetrieval.evaluate(qrels, make_data(seed)[1], K_VALUES)
    assert calls[0] == 1


@pytest.mark.parametrize("seed", range(3))
def test_mteb_gives_the_same_numbers_through_qafast(seed, calls):
    metrics = pytest.importorskip("mteb._evaluators.retrieval_metrics",
                                  reason=f"MTEB is not installed: pip install {MTEB}")
    qrels, results = make_data(seed)
    expected = metrics.calculate_retrieval_scores(results, qrels, K_VALUES)
    assert calls[0] == 0
    with patch():
        got = metrics.calculate_retrieval_scores(results, qrels, K_VALUES)
        # MTEB's evaluator class calls the same function
        evaluator = pytest.importorskip("mteb._evaluators.retrieval_evaluator")
        through_class = evaluator.RetrievalEvaluator.evaluate(None, qrels, results, K_VALUES)
    assert calls[0] == 2
    assert same(tuple(got), tuple(expected))
    assert same(tuple(through_class), tuple(expected))
    assert got.all_scores and expected.ndcg["NDCG@10"] > 0


def test_the_swap_is_undone_on_leaving_and_on_an_error():
    original = pytrec_eval.RelevanceEvaluator
    with patch() as evaluator:
        assert evaluator is qafast.compat.RelevanceEvaluator
        assert pytrec_eval.RelevanceEvaluator is evaluator
        with patch():   # nested: the inner block leaves the outer one's swap in place
            assert pytrec_eval.RelevanceEvaluator is evaluator
        assert pytrec_eval.RelevanceEvaluator is evaluator
    assert pytrec_eval.RelevanceEvaluator is original
    with pytest.raises(RuntimeError, match="inside"), patch():
        raise RuntimeError("inside")
    assert pytrec_eval.RelevanceEvaluator is original


def test_modules_that_imported_the_class_itself(monkeypatch):
    original = pytrec_eval.RelevanceEvaluator
    mine = types.ModuleType("qafast_test_user_module")
    mine.RelevanceEvaluator = original      # from pytrec_eval import RelevanceEvaluator
    mine.Evaluator = original               # ... as Evaluator
    mine.other = len
    monkeypatch.setitem(sys.modules, mine.__name__, mine)
    for target in (mine, mine.__name__):
        with patch(target):
            assert mine.RelevanceEvaluator is qafast.compat.RelevanceEvaluator
            assert mine.Evaluator is qafast.compat.RelevanceEvaluator
            assert mine.other is len
        assert mine.RelevanceEvaluator is original and mine.Evaluator is original
    with pytest.raises(InputTypeError, match="modules or module names"), patch(3):
        pass
    assert pytrec_eval.RelevanceEvaluator is original


def test_without_pytrec_eval_the_message_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "pytrec_eval", None)
    with pytest.raises(ImportError, match="pip install pytrec-eval-terrier"), patch():
        pass
