"""The Hugging Face compute_metrics factories, driven the way the Trainer calls them."""

import math

import numpy as np
import pytest

import qafast
from qafast.integrations.hf import retrieval_metrics, squad_metrics


class EvalPrediction:
    """What transformers.EvalPrediction holds (the factories need no transformers)."""

    def __init__(self, predictions, label_ids, inputs=None):
        self.predictions, self.label_ids, self.inputs = predictions, label_ids, inputs


def pad_concat(arrays, value=-100):
    """The Trainer's nested_concat: batches of different widths, padded with -100."""
    width = max(a.shape[1] for a in arrays)
    return np.concatenate([np.pad(a, ((0, 0), (0, width - a.shape[1])), constant_values=value)
                           for a in arrays])


def eval_batches(seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(6):
        nq, nc = int(rng.integers(1, 5)), int(rng.integers(2, 9))
        logits = rng.normal(size=(nq, nc)).astype(np.float32)
        labels = (rng.random((nq, nc)) < 0.3).astype(np.int64)
        out.append((logits, labels))
    return out


MEASURES = ["mrr@10", "ndcg@10", "recall@5", "map"]


def expected(batches):
    m = qafast.RankingMetrics(MEASURES)
    for s, r in batches:
        m.update(s, r)
    return m.compute()


def check_plain(result, want):
    assert result == want
    assert all(type(v) is float for v in result.values())
    assert not any(k.startswith("eval_") for k in result)


@pytest.mark.parametrize("make_prediction", ["ours", "transformers"])
def test_retrieval_one_call_and_batch_eval_metrics_agree(make_prediction):
    if make_prediction == "transformers":
        transformers = pytest.importorskip("transformers")
        Prediction = transformers.EvalPrediction
    else:
        Prediction = EvalPrediction
    batches = eval_batches()
    want = expected(batches)
    compute_metrics = retrieval_metrics(MEASURES)
    # default: one call with every example, the batches concatenated and padded
    check_plain(compute_metrics(Prediction(pad_concat([s for s, _ in batches]),
                                           pad_concat([r for _, r in batches]))), want)
    # batch_eval_metrics=True: one call per batch, compute_result on the last
    for k, (s, r) in enumerate(batches):
        got = compute_metrics(Prediction(s, r), compute_result=k == len(batches) - 1)
        if k < len(batches) - 1:
            assert got == {}
    check_plain(got, want)
    # and again: the state was reset after the result
    for k, (s, r) in enumerate(batches):
        got = compute_metrics(Prediction(s, r), compute_result=k == len(batches) - 1)
    check_plain(got, want)


def test_retrieval_takes_torch_tensors_and_tuples():
    torch = pytest.importorskip("torch")
    batches = eval_batches(1)
    want = expected(batches)
    compute_metrics = retrieval_metrics(MEASURES)
    for k, (s, r) in enumerate(batches):
        logits = torch.tensor(s, requires_grad=True) * 1.0
        got = compute_metrics(EvalPrediction((logits, torch.zeros(3)), torch.tensor(r)),
                              compute_result=k == len(batches) - 1)
    check_plain(got, want)


def test_retrieval_labels_as_the_relevant_column():
    compute_metrics = retrieval_metrics(["mrr@10"])
    scores = np.array([[0.1, 0.9, 0.3], [0.5, 0.2, 0.1], [0.3, 0.2, 0.1]])
    got = compute_metrics(EvalPrediction(scores, np.array([2, 0, -100])))
    assert got == {"mrr@10": (0.5 + 1.0) / 2}
    with pytest.raises(ValueError, match="query 0 names candidate 5"):
        compute_metrics(EvalPrediction(scores, np.array([5, 0, 1])))


def test_retrieval_bad_input_resets_for_the_next_evaluation():
    compute_metrics = retrieval_metrics(["mrr@10"])
    compute_metrics(EvalPrediction(np.array([[0.1, 0.9]]), np.array([[1, 0]])),
                    compute_result=False)
    with pytest.raises(ValueError, match="score is NaN"):
        compute_metrics(EvalPrediction(np.array([[np.nan, 0.9]]), np.array([[1, 0]])),
                        compute_result=False)
    got = compute_metrics(EvalPrediction(np.array([[0.1, 0.9]]), np.array([[0, 1]])))
    assert got == {"mrr@10": 1.0}


def test_squad_lists_and_squad_format_in_both_modes():
    preds = ["Paris", "the tower", "", "1889", "b c d"]
    golds = [["paris"], ["Eiffel Tower"], [], ["1889", "in 1889"], ["a b c"]]
    want = {"exact_match": qafast.exact_match(preds, golds) * 100,
            "f1": math.fsum(qafast.f1(preds, golds, per_question=True)) / len(preds) * 100}
    compute_metrics = squad_metrics(percent=True)
    check_plain(compute_metrics(EvalPrediction(preds, golds)), want)
    fmt_preds = [{"id": str(i), "prediction_text": p} for i, p in enumerate(preds)]
    fmt_golds = [{"id": str(i), "answers": {"text": g, "answer_start": [0] * len(g)}}
                 for i, g in enumerate(golds)]
    check_plain(compute_metrics(EvalPrediction(fmt_preds[::-1], fmt_golds)), want)
    for k in range(0, 5, 2):
        got = compute_metrics(EvalPrediction(fmt_preds[k:k + 2], fmt_golds[k:k + 2]),
                              compute_result=k + 2 >= 5)
    check_plain(got, want)
    with pytest.raises(ValueError, match="question '9' has no prediction"):
        compute_metrics(EvalPrediction(fmt_preds, [{"id": "9", "answers": {"text": []}}]))


@pytest.mark.parametrize("batch_eval_metrics", [False, True])
def test_a_real_trainer_evaluates_with_retrieval_metrics(tmp_path, batch_eval_metrics):
    # the Trainer itself (transformers and its accelerate, torch's CPU build): it pads and
    # concatenates the batches, or calls once per batch, and prefixes the keys with eval_
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("accelerate")

    rng = np.random.default_rng(3)
    features = rng.normal(size=(10, 6, 4)).astype(np.float32)
    labels = (rng.random((10, 6)) < 0.35).astype(np.int64)

    class Scorer(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.weights = torch.nn.Linear(4, 1)

        def forward(self, features, labels=None):
            logits = self.weights(features).squeeze(-1)
            return {"loss": logits.sum() * 0.0, "logits": logits}

    model = Scorer()
    rows = [{"features": torch.from_numpy(f), "labels": torch.from_numpy(r)}
            for f, r in zip(features, labels)]
    args = transformers.TrainingArguments(
        output_dir=str(tmp_path), per_device_eval_batch_size=3, report_to=[], use_cpu=True,
        batch_eval_metrics=batch_eval_metrics, dataloader_num_workers=0)
    trainer = transformers.Trainer(model=model, args=args, eval_dataset=rows,
                                   compute_metrics=retrieval_metrics(MEASURES))
    got = trainer.evaluate()
    with torch.no_grad():
        scores = model(torch.from_numpy(features))["logits"].numpy()
    want = qafast.RankingMetrics(MEASURES)
    want.update(scores, labels)
    for name, value in want.compute().items():
        assert got[f"eval_{name}"] == pytest.approx(value, abs=1e-12), name


def test_retrieval_metrics_passes_torchmetrics_nonpositive_on():
    # torchmetrics counts a relevant candidate scored <= 0 as not relevant for MRR; so does the
    # opt-in, and by default qafast ranks it as scored
    scores = np.array([[-0.5, -0.1, -2.0]])
    labels = np.array([[1, 0, 0]])
    assert retrieval_metrics(["mrr@10"])(EvalPrediction(scores, labels)) == {"mrr@10": 0.5}
    opted = retrieval_metrics(["mrr@10"], torchmetrics_nonpositive=True)
    assert opted(EvalPrediction(scores, labels)) == {"mrr@10": 0.0}
