"""``compute_metrics`` factories for the Hugging Face ``Trainer``.

Each factory returns a function the Trainer calls as it calls any ``compute_metrics``:

- once with an ``EvalPrediction`` holding every evaluation example (the default), or
- with ``TrainingArguments(batch_eval_metrics=True)``, once per batch with
  ``compute_result=False`` and, on the last batch, ``compute_result=True``: the function
  then keeps only qafast's running sums instead of every logit.

Values come back as plain Python floats with unprefixed keys (the Trainer adds ``eval_``).
transformers is not imported: an ``EvalPrediction`` is anything with ``predictions`` and
``label_ids``. Tensors the Trainer passes in batch mode (on any device) are moved to the
host with their own ``.detach().cpu()``.

Examples
--------
>>> import numpy as np
>>> from types import SimpleNamespace
>>> from qafast.integrations.hf import retrieval_metrics
>>> compute_metrics = retrieval_metrics(["mrr@10", "ndcg@10"])
>>> scores = np.array([[0.9, 0.2, 0.5], [0.1, 0.8, -100.0]])
>>> labels = np.array([[0, 0, 1], [1, 0, -100]])       # -100: the Trainer's padding
>>> compute_metrics(SimpleNamespace(predictions=scores, label_ids=labels))
{'mrr@10': 0.5, 'ndcg@10': 0.6309297535714575}
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from .._convert import as_array
from ..errors import InputError, InputTypeError
from ..stream import AnswerMetrics, RankingMetrics

__all__ = ["retrieval_metrics", "squad_metrics"]


def _host(x):
    """A tensor's values on the host (duck-typed torch: qafast does not import it)."""
    if callable(getattr(x, "detach", None)) and callable(getattr(x, "cpu", None)):
        x = x.detach().cpu()
    return x


def _first(x):
    """A model returning several outputs: the first holds the scores."""
    if isinstance(x, tuple):
        return x[0]
    return x


def retrieval_metrics(measures: str | Iterable[str] = ("mrr@10", "ndcg@10", "recall@100"), *,
                      relevance_level: int = 1, empty_queries: str = "skip",
                      max_docs: int | None = None, pad_label: int = -100,
                      torchmetrics_nonpositive: bool = False
                      ) -> Callable[..., dict[str, float]]:
    """A ``compute_metrics`` for reranking and retrieval models.

    ``predictions`` are scores of shape ``(queries, candidates)`` (the first element if the
    model returns a tuple); ``label_ids`` are grades of the same shape, where ``pad_label``
    (the Trainer's padding, -100) marks candidates that are not there, or one integer per
    query naming its single relevant candidate (a column index; ``pad_label`` for none).

    Parameters
    ----------
    measures, relevance_level, empty_queries, max_docs, torchmetrics_nonpositive
        As for :class:`qafast.RankingMetrics`.
    pad_label : int, default -100
        The label of padding.

    Returns
    -------
    callable
        ``compute_metrics(eval_prediction, compute_result=None) -> dict[str, float]``; its
        attribute ``metric`` is the :class:`qafast.RankingMetrics` it fills.
    """
    metric = RankingMetrics(measures, relevance_level=relevance_level,
                            empty_queries=empty_queries, max_docs=max_docs,
                            torchmetrics_nonpositive=torchmetrics_nonpositive)

    def compute_metrics(eval_prediction, compute_result: bool | None = None) -> dict[str, float]:
        scores = as_array(_host(_first(eval_prediction.predictions)), "predictions")
        labels = as_array(_host(_first(eval_prediction.label_ids)), "label_ids")
        if scores.ndim != 2:
            metric.reset()
            raise InputError(f"predictions must be (queries, candidates) scores, not shape "
                             f"{scores.shape}")
        if labels.ndim == 1 and len(labels) == len(scores):
            # one relevant candidate per query, by column
            if labels.dtype.kind not in "iu":
                metric.reset()
                raise InputTypeError(f"label_ids of shape (queries,) must be column indices, not "
                                     f"{labels.dtype}")
            cols = np.arange(scores.shape[1])
            grades = (cols[None, :] == labels[:, None]).astype(np.int64)
            bad = (labels != pad_label) & ((labels < 0) | (labels >= scores.shape[1]))
            if bad.any():
                metric.reset()
                i = int(np.flatnonzero(bad)[0])
                raise InputError(f"label_ids: query {i} names candidate {int(labels[i])}, "
                                 f"outside 0..{scores.shape[1] - 1}")
            mask = None
        else:
            grades = labels
            mask = labels != pad_label
        try:
            metric.update(scores, grades, mask=mask)
        except (TypeError, ValueError):
            metric.reset()  # the next evaluation starts clean
            raise
        if compute_result is False:
            return {}
        try:
            return metric.compute()
        finally:
            metric.reset()

    compute_metrics.metric = metric  # type: ignore[attr-defined]  # the caller may read it
    return compute_metrics


def _answer_texts(predictions, label_ids) -> tuple[list[str], list[Any]]:
    """(prediction strings, gold alternatives) from plain lists or from the SQuAD format that
    ``evaluate``'s squad metric and the Trainer's QA post-processing use."""
    preds = list(predictions)
    golds = list(label_ids)
    if preds and isinstance(preds[0], dict):
        if not golds or not isinstance(golds[0], dict):
            raise InputTypeError("predictions in the SQuAD format ({'id', 'prediction_text'}) need "
                                 "label_ids in it too ({'id', 'answers': {'text': [...]}})")
        by_id = {}
        for p in preds:
            try:
                by_id[p["id"]] = p["prediction_text"]
            except KeyError as e:
                raise InputError(f"a prediction has no {e.args[0]!r}: {p!r:.80}") from None
        texts, alternatives = [], []
        for g in golds:
            try:
                qid, answers = g["id"], g["answers"]
            except KeyError as e:
                raise InputError(f"a reference has no {e.args[0]!r}: {g!r:.80}") from None
            if qid not in by_id:
                raise InputError(f"question {qid!r} has no prediction")
            texts.append(by_id[qid])
            alternatives.append(list(answers["text"]) if isinstance(answers, dict)
                                else list(answers))
        return texts, alternatives
    return preds, golds


def squad_metrics(*, normalizer: str | Callable[[str], str] = "squad", unit: str = "token",
                  empty_rule: str = "v2", percent: bool = False
                  ) -> Callable[..., dict[str, float]]:
    """A ``compute_metrics`` for extractive question answering (SQuAD-style).

    ``predictions`` are the answer strings (one per question) and ``label_ids`` the gold
    answers (a string or a list of alternatives per question), or both in the SQuAD format
    of the Trainer's QA post-processing and ``evaluate``'s squad metric: predictions
    ``{"id", "prediction_text"}`` and references ``{"id", "answers": {"text": [...]}}``.

    Parameters
    ----------
    normalizer, unit, empty_rule
        As for :class:`qafast.AnswerMetrics`.
    percent : bool, default False
        Scale to 0-100, as the SQuAD scripts and ``evaluate``'s squad metric print.

    Returns
    -------
    callable
        ``compute_metrics(eval_prediction, compute_result=None) -> {"exact_match", "f1"}``;
        its attribute ``metric`` is the :class:`qafast.AnswerMetrics` it fills.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> from qafast.integrations.hf import squad_metrics
    >>> compute_metrics = squad_metrics(percent=True)
    >>> compute_metrics(SimpleNamespace(
    ...     predictions=[{"id": "a", "prediction_text": "Paris"}],
    ...     label_ids=[{"id": "a", "answers": {"text": ["paris", "Paris, France"]}}]))
    {'exact_match': 100.0, 'f1': 100.0}
    """
    metric = AnswerMetrics(normalizer=normalizer, unit=unit, empty_rule=empty_rule)
    scale = 100.0 if percent else 1.0

    def compute_metrics(eval_prediction, compute_result: bool | None = None) -> dict[str, float]:
        try:
            texts, golds = _answer_texts(eval_prediction.predictions, eval_prediction.label_ids)
            metric.update(texts, golds)
        except (TypeError, ValueError):
            metric.reset()
            raise
        if compute_result is False:
            return {}
        try:
            return {k: v * scale for k, v in metric.compute().items()}
        finally:
            metric.reset()

    compute_metrics.metric = metric  # type: ignore[attr-defined]  # the caller may read it
    return compute_metrics
