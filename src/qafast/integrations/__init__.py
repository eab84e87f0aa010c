"""Adapters between qafast's streaming metrics and training frameworks.

- :mod:`qafast.integrations.torch`: :func:`~qafast.integrations.torch.sync` gathers a
  :class:`~qafast.RankingMetrics` or :class:`~qafast.AnswerMetrics` across torch.distributed
  ranks;
- :mod:`qafast.integrations.hf`: ``compute_metrics`` factories for the Hugging Face
  ``Trainer`` (retrieval and SQuAD-style answers), ``batch_eval_metrics`` included;
- :mod:`qafast.integrations.torchmetrics`: a torchmetrics ``Metric`` for Lightning users.

Each imports its framework only when used; qafast itself never imports torch.
"""
