"""The torchmetrics Metric wrapper gives what RankingMetrics gives."""

import numpy as np
import pytest

import qafast

torch = pytest.importorskip("torch")
pytest.importorskip("torchmetrics")

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
