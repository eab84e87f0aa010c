"""The torchmetrics Metric wrapper gives what RankingMetrics gives."""

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import qafast
from _examples import examples
from qafast._measures import TABLE

torch = pytest.importorskip("torch")
torchmetrics = pytest.importorskip("torchmetrics")
pytest.importorskip("torchmetrics.retrieval")

MEASURES = ["mrr@10", "ndcg@10", "map", "gm_map"]


def batches():
    rng = np.random.default_rng(3)
    for _ in range(5):
        s = rng.integers(0, 5, size=(4, 9)).astype(np.float32) / 4
        r = (rng.random((4, 9)) < 0.25).astype(np.int64) * rng.integers(1, 3, size=(4, 9))
        yield torch.from_numpy(s), torch.from_numpy(r)


def test_batches_through_torchmetrics_equal_ranking_metrics():
    from qafast.integrations.torchmetrics import RankingMetric

    metric = RankingMetric(MEASURES)
    want = qafast.RankingMetrics(MEASURES)
    for s, r in batches():
        metric.update(s, r)
        want.update(s, r)
    got = metric.compute()
    assert {k: float(v) for k, v in got.items()} == want.compute()
    assert all(v.dtype == torch.float64 for v in got.values())
    metric.reset()
    s, r = next(iter(batches()))
    batch_value = metric(s, r)  # forward: this batch's value, and accumulated
    one = qafast.RankingMetrics(MEASURES)
    one.update(s, r)
    assert {k: float(v) for k, v in batch_value.items()} == one.compute()


def test_rows_through_torchmetrics_need_doc_ids_and_drop_repeats():
    from qafast.integrations.torchmetrics import RankingMetric

    metric = RankingMetric(["mrr@10"])
    with pytest.raises(ValueError, match="needs doc_ids"):
        metric.update(torch.tensor([0.3]), torch.tensor([1]), indexes=torch.tensor([0]))
    metric.update(torch.tensor([0.3, 0.9]), torch.tensor([1, 0]), indexes=torch.tensor([0, 0]),
                  doc_ids=torch.tensor([1, 2]))
    metric.update(torch.tensor([0.9]), torch.tensor([0]), indexes=torch.tensor([0]),
                  doc_ids=torch.tensor([2]))  # a repeat
    assert float(metric.compute()["mrr@10"]) == 0.5
    with pytest.raises(ValueError, match="holds rows"):
        metric.update(torch.tensor([[0.3]]), torch.tensor([[1]]))


def test_compute_reads_its_states_through_the_state_validator():
    from qafast.integrations.torchmetrics import RankingMetric

    metric = RankingMetric(["mrr@10"])
    metric.update(torch.tensor([[0.3, 0.9]]), torch.tensor([[1, 0]]))
    metric.sums[0, 40] += 1  # 2**206 more: a sum one query cannot give
    with pytest.raises(ValueError, match=r"sums out of range: column 0 \('mrr@10'\)"):
        metric.compute()


def test_empty_batches_change_nothing():
    from qafast.integrations.torchmetrics import RankingMetric

    metric = RankingMetric(MEASURES)
    want = qafast.RankingMetrics(MEASURES)
    s, r = next(iter(batches()))
    metric.update(s, r)
    want.update(s, r)
    for shape in ((0, 9), (4, 0)):
        metric.update(torch.zeros(shape), torch.zeros(shape, dtype=torch.int64))
    # empty rows after batches: nothing to mix up
    empty = torch.zeros(0, dtype=torch.int64)
    metric.update(torch.zeros(0), empty, indexes=empty, doc_ids=empty)
    assert {k: float(v) for k, v in metric.compute().items()} == want.compute()
    rows = RankingMetric(["mrr@10"])
    rows.update(torch.zeros(0), empty, indexes=empty, doc_ids=empty)
    rows.update(torch.zeros((0, 3)), torch.zeros((0, 3)))
    rows.update(torch.tensor([0.3, 0.9]), torch.tensor([1, 0]), indexes=torch.tensor([0, 0]),
                doc_ids=torch.tensor([1, 2]))
    assert float(rows.compute()["mrr@10"]) == 0.5


# ---------------------------------------------------------------------------------------------
# torchmetrics' rule for relevant candidates scored 0 or less (Lightning-AI/torchmetrics #3104)

#: the families torchmetrics names, with each class and its arguments (top_k=3); fall-out
#: is left out: its classes score queries without a non-relevant document by their own rule
#: (docs/known-differences.md)
TM_FAMILIES = [(d, *re.fullmatch(r"(\w+)\((.*)\)", spelled).groups())
               for d in TABLE if d.name != "fallout" for spelled in d.spelled("torchmetrics")]
GRID = [-1.0, -0.5, -0.125, 0.0, 0.25, 0.5, 1.0]  # exact in float32, and many ties


@st.composite
def logits_with_ties(draw):
    """Scores on a coarse grid of logits (ties, zeros, negatives); within a query, the
    candidates sharing a score share a label, so that any tie order gives the same numbers
    and only the rule for scores of 0 or less can differ."""
    nq, nc = draw(st.integers(1, 6)), draw(st.integers(1, 8))
    scores = np.array(draw(st.lists(st.sampled_from(GRID), min_size=nq * nc,
                                    max_size=nq * nc)), dtype=np.float32).reshape(nq, nc)
    labels = np.zeros((nq, nc), dtype=np.int64)
    for i in range(nq):
        for value in np.unique(scores[i]):
            labels[i, scores[i] == value] = draw(st.booleans())
    first = scores[0] == scores[0, 0]
    labels[0, first] = 1  # a query with a relevant candidate
    return scores, labels


def _kwargs(args: str) -> dict:
    """A table spelling's arguments (``top_k=k, adaptive_k=True``), k being 3."""
    return {key: (3 if value == "k" else value == "True")
            for key, _, value in (a.strip().partition("=") for a in args.split(",") if a)}


def theirs(cls_name, args, scores, labels):
    cls = getattr(torchmetrics.retrieval, cls_name)
    metric = cls(**_kwargs(args), empty_target_action="skip")
    nq, nc = scores.shape
    metric.update(torch.from_numpy(scores.reshape(-1)), torch.from_numpy(labels.reshape(-1)),
                  indexes=torch.arange(nq).repeat_interleave(nc))
    return float(metric.compute())


def ours(name, scores, labels, **options):
    m = qafast.RankingMetrics([name], **options)
    m.update(scores, labels)
    return m.compute()[name]


@settings(max_examples=examples(40), deadline=None)
@given(logits_with_ties())
def test_torchmetrics_nonpositive_gives_torchmetrics_numbers_on_logits(data):
    from qafast.integrations.torchmetrics import RankingMetric

    scores, labels = data
    nq, nc = scores.shape
    for family, cls_name, args in TM_FAMILIES:
        name = f"{family.name}@3" if "top_k" in _kwargs(args) else family.name
        as_torchmetrics = ours(name, scores, labels, torchmetrics_nonpositive=True)
        default = ours(name, scores, labels)
        # with the option, torchmetrics' numbers; without, what torchmetrics gives once
        # every score is positive (4 added: exact in float32)
        assert abs(as_torchmetrics - theirs(cls_name, args, scores, labels)) < 1e-6, name
        assert abs(default - theirs(cls_name, args, scores + 4, labels)) < 1e-6, name
        if not family.torchmetrics_nonpositive:
            assert as_torchmetrics == default, name
        # the torchmetrics Metric, fed rows, takes the option too
        metric = RankingMetric([name], torchmetrics_nonpositive=True)
        metric.update(torch.from_numpy(scores.reshape(-1)), torch.from_numpy(labels.reshape(-1)),
                      indexes=torch.arange(nq).repeat_interleave(nc),
                      doc_ids=torch.arange(nq * nc))
        assert float(metric.compute()[name]) == as_torchmetrics, name


def test_torchmetrics_counts_relevant_logits_of_zero_or_less_as_not_found():
    # one query: the relevant candidates are scored 1.5, -0.5 and -2 among non-relevant ones
    scores = np.array([[1.5, 0.5, -0.5, -1.0, -2.0]], dtype=np.float32)
    labels = np.array([[1, 0, 1, 0, 1]])
    # trec_eval's AP: (1/1 + 2/3 + 3/5) / 3; torchmetrics': only the candidate scored 1.5
    assert ours("map", scores, labels) == (1 + 2 / 3 + 3 / 5) / 3
    assert theirs("RetrievalMAP", "", scores, labels) == 1.0
    assert ours("map", scores, labels, torchmetrics_nonpositive=True) == 1.0
    # recall: the two stay among the relevant documents, as not retrieved
    assert ours("recall@5", scores, labels, torchmetrics_nonpositive=True) == 1 / 3
    assert abs(theirs("RetrievalRecall", "top_k=k", scores, labels) - 1 / 3) < 1e-7
    assert ours("recall@5", scores, labels) == 1.0
    # a query whose relevant candidates are all scored 0 or less is not empty: it scores 0
    zero = ours("mrr@3", np.array([[0.0, 0.5]]), np.array([[1, 0]]),
                torchmetrics_nonpositive=True)
    assert zero == 0.0 == theirs("RetrievalMRR", "top_k=k", np.array([[0.0, 0.5]], np.float32),
                                 np.array([[1, 0]]))
    # a state of one rule does not load into a metric of the other
    m = qafast.RankingMetrics(["map"], torchmetrics_nonpositive=True)
    m.update(scores, labels)
    with pytest.raises(ValueError, match="torchmetrics_nonpositive=True"):
        qafast.RankingMetrics(["map"]).load_state_dict(m.state_dict())


@pytest.mark.parametrize("adaptive", [False, True])
@pytest.mark.parametrize("action", ["neg", "skip"])
def test_precision_recall_curve_and_recall_at_precision_equal_torchmetrics(adaptive, action):
    torch = pytest.importorskip("torch")
    retrieval = pytest.importorskip("torchmetrics.retrieval")
    from qafast.integrations.torchmetrics import (
        RetrievalPrecisionRecallCurve,
        RetrievalRecallAtFixedPrecision,
    )

    # tie-free positive scores; some queries without a relevant candidate; rows of queries
    # with 1 to 8 candidates, so that max_k passes the shorter ones (adaptive_k's case)
    rng = np.random.default_rng(11)
    sizes = rng.integers(1, 9, size=40)
    indexes = np.repeat(np.arange(len(sizes)), sizes)
    scores = (rng.permutation(len(indexes)) + 1.0) / 1000
    target = (rng.random(len(indexes)) < 0.3).astype(np.int64)
    docs = np.arange(len(indexes))
    args = [torch.from_numpy(scores), torch.from_numpy(target)]

    theirs = retrieval.RetrievalPrecisionRecallCurve(max_k=6, adaptive_k=adaptive,
                                                     empty_target_action=action)
    theirs.update(*args, indexes=torch.from_numpy(indexes))
    ours = RetrievalPrecisionRecallCurve(6, adaptive_k=adaptive, empty_target_action=action)
    ours.update(*args, indexes=torch.from_numpy(indexes), doc_ids=torch.from_numpy(docs))
    for a, b in zip(ours.compute(), theirs.compute()):
        assert torch.allclose(a.double(), b.double(), atol=1e-6), (a, b)

    for min_precision in (0.0, 0.2, 0.35, 0.9):
        theirs = retrieval.RetrievalRecallAtFixedPrecision(
            min_precision=min_precision, max_k=6, adaptive_k=adaptive,
            empty_target_action=action)
        theirs.update(*args, indexes=torch.from_numpy(indexes))
        ours = RetrievalRecallAtFixedPrecision(min_precision, max_k=6, adaptive_k=adaptive,
                                               empty_target_action=action)
        ours.update(*args, indexes=torch.from_numpy(indexes), doc_ids=torch.from_numpy(docs))
        (r1, k1), (r2, k2) = ours.compute(), theirs.compute()
        assert abs(float(r1) - float(r2)) < 1e-6 and int(k1) == int(k2), (min_precision,
                                                                          r1, k1, r2, k2)


def test_precision_recall_curve_refuses_what_it_does_not_offer():
    pytest.importorskip("torchmetrics")
    from qafast.errors import InputError
    from qafast.integrations.torchmetrics import (
        RetrievalPrecisionRecallCurve,
        RetrievalRecallAtFixedPrecision,
    )

    with pytest.raises(InputError, match="max_k"):
        RetrievalPrecisionRecallCurve(0)
    with pytest.raises(InputError, match="'pos'|not offered"):
        RetrievalPrecisionRecallCurve(5, empty_target_action="pos")
    with pytest.raises(InputError, match="max_k is required"):
        RetrievalRecallAtFixedPrecision(0.5)
    with pytest.raises(InputError, match="min_precision"):
        RetrievalRecallAtFixedPrecision(1.5, max_k=3)
