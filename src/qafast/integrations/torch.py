"""torch.distributed for qafast's streaming metrics.

:func:`sync` is a collective: every rank of the group calls it, and each gets a new metric
holding the state of all ranks, so that every rank's ``compute()`` gives what one process
fed with all the data gives. Sums (of the exact accumulators and the counts) are
all-reduced; the rows of a :class:`~qafast.RankingMetrics` in the rows form are
all-gathered, and ``compute()`` then counts a ``(query, document)`` row repeated across ranks
(the padding of ``DistributedSampler``) once. The metric passed in is left as it was, so
calling ``sync`` again never counts anything twice.

Tensors go through the process group's own device: CPU for gloo, the current CUDA device for
NCCL.
"""

from __future__ import annotations

import copy

import numpy as np

from .. import _kernels
from .._state import Field, StateSpec
from ..errors import InputError, InputTypeError
from ..stream import AnswerMetrics, RankingMetrics

__all__ = ["sync", "sync_and_compute"]


def _dist():
    import torch.distributed as dist

    if not dist.is_available() or not dist.is_initialized():
        raise RuntimeError("torch.distributed is not initialized: call "
                           "torch.distributed.init_process_group first (on one process, use "
                           "the metric as it is)")
    return dist


def _device(dist, group):
    import torch

    if dist.get_backend(group) == "nccl":
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def sync(metric: RankingMetrics | AnswerMetrics, group=None):
    """A new metric holding the state of every rank of ``group`` (default: the world).

    Parameters
    ----------
    metric : RankingMetrics or AnswerMetrics
        This rank's metric; it is not changed.
    group : torch.distributed.ProcessGroup, optional
        The ranks to gather from.

    Returns
    -------
    RankingMetrics or AnswerMetrics
        The same kind of metric, with every rank's updates.

    Raises
    ------
    ValueError
        Ranks whose metrics have different measures or options, or hold different input
        shapes (whole-query batches on one rank, rows on another).
    RuntimeError
        torch.distributed is not initialized.
    """
    if not isinstance(metric, (RankingMetrics, AnswerMetrics)):
        raise InputTypeError(f"sync takes a RankingMetrics or an AnswerMetrics, not "
                             f"{type(metric).__name__}")
    import torch

    dist = _dist()
    spec: StateSpec = metric._state_spec
    state = metric._state_arrays()
    # every rank's fields that are not arrays, and its number of rows
    header = {f.name: state[f.name] for f in spec.fields if f.kind != "array"}
    header["rows"] = next((len(state[f.name]) for f in spec.fields if f.reduce == "cat"), 0)
    headers: list = [None] * dist.get_world_size(group)
    dist.all_gather_object(headers, header, group=group)
    _check_ranks_agree(spec, headers)
    ranks = _Ranks(dist, torch, _device(dist, group), group, headers)
    merged = dict(state)
    for f in spec.fields:
        merged[f.name] = ranks.combine(f, state[f.name])
    _concatenate_rows(spec, merged, headers)
    out = copy.deepcopy(metric)
    out.load_state_dict(merged)  # the merged state is checked as any loaded state is
    return out


def _check_ranks_agree(spec: StateSpec, headers: list[dict]) -> None:
    """The same options on every rank, and one input shape."""
    configs = [{name: h[name] for name in spec.config} for h in headers]
    for rank, other in enumerate(configs):
        if other != configs[0]:
            raise InputError(f"the ranks' metrics differ: rank 0 has {configs[0]}, rank {rank} "
                             f"has {other}")
    if len({h.get("mode") for h in headers} - {"", None}) > 1:
        raise InputError("some ranks hold batches of whole queries and others rows; use one "
                         "input shape on every rank")
    if len({h.get("row_has_doc_ids") for h in headers if h.get("mode") == "rows"}
           - {-1, None}) > 1:
        raise InputError("some ranks give document ids and others do not; give them on "
                         "every rank")


class _Ranks:
    """Combines one field of every rank's state as the field's ``reduce`` says."""

    def __init__(self, dist, torch, device, group, headers: list[dict]):
        self.dist, self.torch, self.device, self.group = dist, torch, device, group
        self.headers = headers

    def combine(self, f: Field, mine):
        """Every rank's value of ``f`` as one (``mine``: this rank's)."""
        return getattr(self, f"_{f.reduce}")(f, mine)

    def _same(self, f: Field, mine):
        return mine  # checked equal on every rank

    def _sum(self, f: Field, mine):
        if f.kind == "array":
            return self._all_reduce(mine, exact=False)
        return sum(int(h[f.name]) for h in self.headers)  # ints, from the headers: exact

    def _exact_sum(self, f: Field, mine):
        return self._all_reduce(mine, exact=True)

    def _cat(self, f: Field, mine):
        return self._gather(mine)  # one array per rank: _concatenate_rows joins them

    def _mode(self, f: Field, mine):
        return next((h[f.name] for h in self.headers if h[f.name]), mine)

    def _flag(self, f: Field, mine):
        # from the ranks that hold rows; -1 when none does
        return next((h[f.name] for h in self.headers
                     if h.get("mode") == "rows" and h[f.name] != -1), -1)

    def _all_reduce(self, array: np.ndarray, *, exact: bool) -> np.ndarray:
        t = self.torch.from_numpy(array.copy()).to(self.device)
        self.dist.all_reduce(t, group=self.group)
        total = np.ascontiguousarray(t.cpu().numpy(), dtype=array.dtype)
        if exact:  # the limbs of exact sums were added one by one: carry them
            _kernels.exact_normalize(total)
        return total

    def _gather(self, array: np.ndarray) -> list[np.ndarray]:
        """Every rank's 1-d ``array``, padded to one length to be gathered, then trimmed."""
        sizes = [int(h["rows"]) for h in self.headers]
        wide = array.astype(np.float64 if array.dtype.kind == "f" else np.int64)
        padded = np.zeros(max(sizes), dtype=wide.dtype)
        padded[:len(wide)] = wide
        mine = self.torch.from_numpy(padded).to(self.device)
        parts = [self.torch.empty_like(mine) for _ in sizes]
        self.dist.all_gather(parts, mine, group=self.group)
        return [p.cpu().numpy()[:n].astype(array.dtype) for p, n in zip(parts, sizes)]


def _concatenate_rows(spec: StateSpec, merged: dict, headers: list[dict]) -> None:
    """Each row field's per-rank arrays as one; rows without document ids get tie keys
    after those of the ranks before (rank r's after ranks 0..r-1's, as a merge gives)."""
    if merged.get("row_has_doc_ids") == 0:
        start = 0
        for r, h in enumerate(headers):
            merged["row_doc_ids"][r] = merged["row_doc_ids"][r] - start
            start += int(h["rows_without_ids"])
    for f in spec.fields:
        if f.reduce == "cat":
            merged[f.name] = np.concatenate(merged[f.name])


def sync_and_compute(metric: RankingMetrics | AnswerMetrics, group=None) -> dict[str, float]:
    """``sync(metric, group).compute()``: the values over every rank's data, on every rank."""
    return sync(metric, group).compute()
