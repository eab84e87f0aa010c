"""Adapters between qafast and other frameworks: training loops, and evaluation toolkits.

- :mod:`qafast.integrations.torch`: :func:`~qafast.integrations.torch.sync` gathers a
  :class:`~qafast.RankingMetrics` or :class:`~qafast.AnswerMetrics` across torch.distributed
  ranks;
- :mod:`qafast.integrations.hf`: ``compute_metrics`` factories for the Hugging Face
  ``Trainer`` (retrieval and SQuAD-style answers), ``batch_eval_metrics`` included;
- :mod:`qafast.integrations.torchmetrics`: a torchmetrics ``Metric`` for Lightning users.
- :mod:`qafast.integrations.pytrec_eval`: :func:`~qafast.integrations.pytrec_eval.patch`
  has BEIR's and MTEB's retrieval evaluations (and any code calling
  ``pytrec_eval.RelevanceEvaluator``) use qafast's drop-in for the duration of a block.
- :mod:`qafast.integrations.ir_measures`: qafast as an ir_measures provider, for
  ``ir_measures.calc_aggregate`` and PyTerrier's ``pt.Experiment``.

Each imports its framework only when used; qafast itself never imports torch (nor
pytrec_eval, BEIR, MTEB or ir_measures).
"""
