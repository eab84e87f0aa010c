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

from .. import _exactsum, _kernels
from ..errors import InputError
from ..stream import RankingMetrics

__all__ = ["RankingMetric"]  # noqa: F822 - built on first access (module __getattr__)

_CLASS: Any = None
#: the fields of RankingMetrics' state kept as torchmetrics states, each reduced across
#: processes as the field says (sums added, rows concatenated); the others (mode, document
#: id flag) follow from these, as the rows form here always has document ids
_KEPT = ("sums", "nonfinite_sums", "count", "row_query_ids", "row_doc_ids", "row_scores",
         "row_grades")
_SPEC = RankingMetrics._state_spec
_ROWS = tuple(name for name in _KEPT if _SPEC.field(name).reduce == "cat")
_SUMS = tuple(name for name in _KEPT if _SPEC.field(name).reduce != "cat")


def _default(torch, name: str, columns: int):
    """A state's empty value: zeros of the field's dtype and shape, or a list of rows."""
    f = _SPEC.field(name)
    if f.reduce == "cat":
        return []
    sizes = {"columns": columns, "limbs": _exactsum.LIMBS}
    return torch.zeros(tuple(sizes[d] for d in f.shape), dtype=getattr(torch, f.dtype or "int64"))


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
        torchmetrics_nonpositive : bool, default False
            As for :class:`qafast.RankingMetrics`: True gives the numbers of torchmetrics'
            own ``RetrievalMAP``, ``RetrievalMRR``, ``RetrievalPrecision`` and
            ``RetrievalRecall`` on logits, which count a relevant candidate scored 0 or less
            as not relevant (recall: as not retrieved).
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
                     max_docs: int | None = None, torchmetrics_nonpositive: bool = False,
                     **kwargs):
            super().__init__(**kwargs)
            self._options = {"measures": measures, "relevance_level": relevance_level,
                             "empty_queries": empty_queries, "max_docs": max_docs,
                             "torchmetrics_nonpositive": torchmetrics_nonpositive}
            m = len(self._fresh().measures)
            for name in _KEPT:
                self.add_state(name, default=_default(torch, name, m),
                               dist_reduce_fx="cat" if name in _ROWS else "sum")

        def _fresh(self) -> RankingMetrics:
            return RankingMetrics(**self._options)

        def update(self, preds, target, indexes=None, doc_ids=None, mask=None,
                   num_relevant=None) -> None:
            if getattr(preds, "ndim", 2) == 1 and indexes is not None and doc_ids is None:
                raise InputError("the rows form of RankingMetric needs doc_ids beside indexes: "
                                 "rows gathered from several processes are told apart, and a "
                                 "repeated row counted once, by their (query, document) pair")
            local = self._fresh()
            local.update(preds, target, indexes, doc_ids, mask=mask, num_relevant=num_relevant)
            state = local._state_arrays()
            if not state["mode"]:
                return  # an empty batch (or rows): nothing to add
            has_rows = len(self.row_query_ids) > 0
            if state["mode"] == "batch":
                if has_rows:
                    raise InputError("this metric holds rows; use one input shape per metric")
                for name in _SUMS:  # exact sums added limb by limb: compute() carries them
                    total = getattr(self, name)
                    total += torch.as_tensor(state[name]).to(total.device)
            else:
                if int(self.count) or bool(self.sums.any()):
                    raise InputError("this metric holds batches of whole queries; use one input "
                                     "shape per metric")
                for name in _ROWS:
                    getattr(self, name).append(torch.from_numpy(state[name]).to(self.sums.device))

        def compute(self):
            metric = self._fresh()
            metric.load_state_dict(self._state())  # checked as any state loaded
            return {k: torch.tensor(v, dtype=torch.float64) for k, v in metric.compute().items()}

        def _state(self) -> dict:
            """The kept states (synchronised, when torchmetrics synchronises) as a
            RankingMetrics state dict."""
            state = self._fresh()._state_arrays()
            for name in _SUMS:
                f, value = _SPEC.field(name), getattr(self, name).detach().cpu().numpy()
                # an int as the 0-d array it is (the state reader refuses a float count)
                state[name] = value[()] if f.kind == "int" else np.array(value, dtype=f.dtype)
            _kernels.exact_normalize(state["sums"])  # limbs were added one by one
            rows = {name: dim_zero_cat(getattr(self, name)) for name in _ROWS
                    if len(getattr(self, name))}
            if rows and len(rows["row_query_ids"]):
                state.update(mode="rows", row_has_doc_ids=1,
                             **{name: r.detach().cpu().numpy().astype(state[name].dtype)
                                for name, r in rows.items()})
            elif state["count"]:
                state["mode"] = "batch"
            return state

    RankingMetric.__module__ = __name__
    return RankingMetric


def __getattr__(name: str):
    global _CLASS
    if name == "RankingMetric":
        if _CLASS is None:
            _CLASS = _build()
        return _CLASS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
