"""A torchmetrics ``Metric`` over :class:`qafast.RankingMetrics`, for Lightning users.

``qafast.integrations.torchmetrics.RankingMetric(measures, ...)`` is a
``torchmetrics.Metric``: Lightning logs it, resets it and synchronises it across processes
through torchmetrics' own machinery. Its states are tensors: the exact sums (reduced by
``"sum"``) for batches of whole queries, and the rows (reduced by ``"cat"``) for the rows
form, which here needs document ids (``doc_ids``): rows gathered from several processes
are told apart, and a repeated row is counted once, by its ``(query, document)`` pair.

``compute()`` returns ``{measure: 0-d float64 tensor}``, equal to
:meth:`qafast.RankingMetrics.compute` on the same updates. The class is built on first
access, so importing this module does not import torch or torchmetrics.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _exactsum
from ..errors import InputError
from ..stream import RankingMetrics

__all__ = ["RankingMetric"]  # noqa: F822 - built on first access (module __getattr__)

_CLASS: Any = None
_ROWS = ("row_query_ids", "row_doc_ids", "row_scores", "row_grades")


def _build() -> type:
    import torch
    from torchmetrics import Metric
    from torchmetrics.utilities.data import dim_zero_cat

    class RankingMetric(Metric):
        """Ranking measures with trec_eval's definitions, as a torchmetrics ``Metric``.

        Parameters
        ----------
        measures, relevance_level, empty_queries, max_docs
            As for :class:`qafast.RankingMetrics`.
        **kwargs
            torchmetrics ``Metric`` options (``sync_on_compute``, ``process_group``, ...).

        ``update(preds, target, indexes=None, doc_ids=None, mask=None, num_relevant=None)``:
        2-d ``preds``/``target`` are batches of whole queries (``mask``, ``num_relevant``
        as for :meth:`qafast.RankingMetrics.update`); 1-d ones are rows of the queries
        ``indexes``, with their ``doc_ids``.
        """

        is_differentiable = False
        higher_is_better = True
        full_state_update = False
        # the states add_state registers (torch types them as Tensor | Module)
        sums: torch.Tensor
        nonfinite_sums: torch.Tensor
        count: torch.Tensor
        row_query_ids: list

        def __init__(self, measures, *, relevance_level: int = 1, empty_queries: str = "skip",
                     max_docs: int | None = None, **kwargs):
            super().__init__(**kwargs)
            self._options = {"measures": measures, "relevance_level": relevance_level,
                             "empty_queries": empty_queries, "max_docs": max_docs}
            m = len(self._fresh().measures)
            self.add_state("sums", default=torch.zeros(m, _exactsum.LIMBS, dtype=torch.int64),
                           dist_reduce_fx="sum")
            self.add_state("nonfinite_sums", default=torch.zeros(m, dtype=torch.float64),
                           dist_reduce_fx="sum")
            self.add_state("count", default=torch.zeros((), dtype=torch.int64),
                           dist_reduce_fx="sum")
            for name in _ROWS:
                self.add_state(name, default=[], dist_reduce_fx="cat")

        def _fresh(self) -> RankingMetrics:
            o = self._options
            return RankingMetrics(o["measures"], relevance_level=o["relevance_level"],
                                  empty_queries=o["empty_queries"], max_docs=o["max_docs"])

        def update(self, preds, target, indexes=None, doc_ids=None, mask=None,
                   num_relevant=None) -> None:
            if getattr(preds, "ndim", 2) == 1 and indexes is not None and doc_ids is None:
                raise InputError("the rows form of RankingMetric needs doc_ids beside indexes: "
                                 "rows gathered from several processes are told apart, and a "
                                 "repeated row counted once, by their (query, document) pair")
            local = self._fresh()
            local.update(preds, target, indexes, doc_ids, mask=mask, num_relevant=num_relevant)
            state = local.state_dict()
            has_rows = len(self.row_query_ids) > 0
            if state["mode"] == "batch":
                if has_rows:
                    raise InputError("this metric holds rows; use one input shape per metric")
                self.sums += torch.from_numpy(state["sums"]).to(self.sums.device)
                self.nonfinite_sums += torch.from_numpy(state["nonfinite_sums"]).to(
                    self.nonfinite_sums.device)
                self.count += state["count"]
            else:
                if int(self.count) or bool(self.sums.any()):
                    raise InputError("this metric holds batches of whole queries; use one input "
                                     "shape per metric")
                for name in _ROWS:
                    getattr(self, name).append(torch.from_numpy(state[name]).to(self.sums.device))

        def compute(self):
            metric = self._fresh()
            state = metric.state_dict()
            rows = [dim_zero_cat(getattr(self, name)) if len(getattr(self, name)) else None
                    for name in _ROWS]
            limbs = np.ascontiguousarray(self.sums.detach().cpu().numpy(), dtype=np.int64)
            from .. import _kernels

            _kernels.exact_normalize(limbs)
            state.update(sums=limbs, count=int(self.count),
                         nonfinite_sums=self.nonfinite_sums.detach().cpu().numpy().astype(
                             np.float64))
            if rows[0] is not None and len(rows[0]):
                state.update(mode="rows", row_has_doc_ids=1,
                             **{name: r.detach().cpu().numpy().astype(state[name].dtype)
                                for name, r in zip(_ROWS, rows)})
            elif int(self.count):
                state["mode"] = "batch"
            metric.load_state_dict(state)
            return {k: torch.tensor(v, dtype=torch.float64) for k, v in metric.compute().items()}

    RankingMetric.__module__ = __name__
    return RankingMetric


def __getattr__(name: str):
    global _CLASS
    if name == "RankingMetric":
        if _CLASS is None:
            _CLASS = _build()
        return _CLASS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
