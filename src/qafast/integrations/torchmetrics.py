"""A torchmetrics ``Metric`` over :class:`qafast.RankingMetrics`, for Lightning users.

``qafast.integrations.torchmetrics.RankingMetric(measures, ...)`` is a
``torchmetrics.Metric``: Lightning logs it, resets it and synchronises it across processes
through torchmetrics' own machinery. Its states are tensors: the exact sums (reduced by
``"sum"``) for batches of whole queries, and the rows (reduced by ``"cat"``) for the rows
form, which here needs document ids (``doc_ids``): rows gathered from several processes
are told apart, and a repeated row is counted once, by its ``(query, document)`` pair.

``compute()`` returns ``{measure: 0-d float64 tensor}``, equal to
:meth:`qafast.RankingMetrics.compute` on the same updates.

``RetrievalPrecisionRecallCurve`` and ``RetrievalRecallAtFixedPrecision`` are torchmetrics'
classes of those names over the same sums: the mean precision and recall at each k up to
``max_k``, and the best recall at a precision. The classes are built on first access, so
importing this module does not import torch or torchmetrics.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _exactsum, _kernels
from ..errors import InputError
from ..stream import RankingMetrics

__all__ = ["RankingMetric", "RetrievalPrecisionRecallCurve",  # noqa: F822 - built on first
           "RetrievalRecallAtFixedPrecision"]  # access (module __getattr__)

_CLASSES: Any = None
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


def _build() -> dict[str, type]:
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

    _EMPTY = {"neg": "zero", "skip": "skip", "error": "error"}

    class RetrievalPrecisionRecallCurve(RankingMetric):
        """torchmetrics' ``RetrievalPrecisionRecallCurve``: the mean precision and recall at
        each k from 1 to ``max_k``, from qafast's exact sums.

        Parameters
        ----------
        max_k : int
            The largest k (torchmetrics' default, the largest query seen, is not known before
            ``compute``: here it is required).
        adaptive_k : bool, default False
            Measure a query with fewer than k candidates at its length (``adaptive_P@k``)
            instead of dividing by k (``P@k``).
        empty_target_action : {"neg", "skip", "error"}, default "neg"
            A query without a relevant candidate counts 0 (``"neg"``), is left out
            (``"skip"``), or raises (``"error"``). torchmetrics' ``"pos"`` is not offered.
        relevance_level, max_docs, **kwargs
            As for :class:`RankingMetric`.

        ``compute()`` returns ``(precision, recall, top_k)``: two float64 tensors of
        ``max_k`` values and the k's, ``1 ... max_k``.
        """

        def __init__(self, max_k: int, *, adaptive_k: bool = False,
                     empty_target_action: str = "neg", relevance_level: int = 1,
                     max_docs: int | None = None, **kwargs):
            if isinstance(max_k, bool) or not isinstance(max_k, int) or max_k < 1:
                raise InputError(f"max_k must be a positive int, not {max_k!r}")
            if empty_target_action not in _EMPTY:
                raise InputError(f"empty_target_action must be 'neg', 'skip' or 'error', not "
                                 f"{empty_target_action!r} (a query without a relevant "
                                 "candidate scoring 1 is not offered)")
            precision = "adaptive_P" if adaptive_k else "P"
            self._curve = ([f"{precision}@{k}" for k in range(1, max_k + 1)],
                           [f"recall@{k}" for k in range(1, max_k + 1)])
            super().__init__(self._curve[0] + self._curve[1], relevance_level=relevance_level,
                             empty_queries=_EMPTY[empty_target_action], max_docs=max_docs,
                             **kwargs)

        def compute(self):
            values = super().compute()
            precision = torch.stack([values[name] for name in self._curve[0]])
            recall = torch.stack([values[name] for name in self._curve[1]])
            return precision, recall, torch.arange(1, len(self._curve[0]) + 1)

    class RetrievalRecallAtFixedPrecision(RetrievalPrecisionRecallCurve):
        """torchmetrics' ``RetrievalRecallAtFixedPrecision``: the highest mean recall at a k
        whose mean precision is at least ``min_precision``, and that k (the largest such k
        on a tie; ``max_k`` when the recall is 0).

        Parameters
        ----------
        min_precision : float, default 0.0
            The precision to reach.
        max_k, adaptive_k, empty_target_action, relevance_level, max_docs, **kwargs
            As for :class:`RetrievalPrecisionRecallCurve`.

        ``compute()`` returns ``(recall, k)``: a 0-d float64 tensor and a 0-d int64 one.
        """

        def __init__(self, min_precision: float = 0.0, max_k: int | None = None, **kwargs):
            if not isinstance(min_precision, (int, float)) or not 0.0 <= min_precision <= 1.0:
                raise InputError(f"min_precision must be a float in [0, 1], not "
                                 f"{min_precision!r}")
            if max_k is None:
                raise InputError("max_k is required: the largest k to consider")
            super().__init__(max_k, **kwargs)
            self.min_precision = float(min_precision)

        def compute(self):
            precision, recall, top_k = super().compute()
            reached = [(float(r), int(k)) for p, r, k in zip(precision, recall, top_k)
                       if float(p) >= self.min_precision]
            best, k = max(reached) if reached else (0.0, len(top_k))
            if best == 0.0:
                k = len(top_k)
            return torch.tensor(best, dtype=torch.float64), torch.tensor(k)

    for cls in (RankingMetric, RetrievalPrecisionRecallCurve, RetrievalRecallAtFixedPrecision):
        cls.__module__ = __name__
    return {"RankingMetric": RankingMetric,
            "RetrievalPrecisionRecallCurve": RetrievalPrecisionRecallCurve,
            "RetrievalRecallAtFixedPrecision": RetrievalRecallAtFixedPrecision}


def __getattr__(name: str):
    global _CLASSES
    if name in __all__:
        if _CLASSES is None:
            _CLASSES = _build()
        return _CLASSES[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
