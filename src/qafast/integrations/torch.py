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

from .. import _exactsum
from ..errors import InputError, InputTypeError
from ..stream import AnswerMetrics, RankingMetrics

__all__ = ["sync", "sync_and_compute"]

_ROW_KEYS = ("row_query_ids", "row_doc_ids", "row_scores", "row_grades")
_SUM_KEYS = ("count", "sums", "nonfinite_sums", "mode", "row_has_doc_ids", "rows_without_ids")


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
    world = dist.get_world_size(group)
    state = metric.state_dict()
    has_rows = "row_query_ids" in state
    header = {k: v for k, v in state.items() if not isinstance(v, np.ndarray)}
    header["rows"] = len(state["row_query_ids"]) if has_rows else 0
    headers: list = [None] * world
    dist.all_gather_object(headers, header, group=group)
    configs = [{k: v for k, v in h.items() if k not in _SUM_KEYS + ("rows",)}
               for h in headers]
    for rank, other in enumerate(configs):
        if other != configs[0]:
            raise InputError(f"the ranks' metrics differ: rank 0 has {configs[0]}, rank {rank} "
                             f"has {other}")
    modes = {h.get("mode") for h in headers} - {"", None}
    if len(modes) > 1:
        raise InputError("some ranks hold batches of whole queries and others rows; use one "
                         "input shape on every rank")
    device = _device(dist, group)
    m = state["sums"].shape[0]
    counts_and_limbs = np.concatenate(([state["count"]], state["sums"].ravel()))
    t = torch.from_numpy(counts_and_limbs).to(device)
    dist.all_reduce(t, group=group)
    special = torch.from_numpy(state["nonfinite_sums"].copy()).to(device)
    dist.all_reduce(special, group=group)
    total = t.cpu().numpy()
    limbs = np.ascontiguousarray(total[1:].reshape(m, _exactsum.LIMBS), dtype=np.int64)
    from .. import _kernels

    _kernels.exact_normalize(limbs)
    merged = dict(state)
    merged["count"] = int(total[0])
    merged["sums"] = limbs
    merged["nonfinite_sums"] = special.cpu().numpy().astype(np.float64)
    if has_rows:
        merged["mode"] = modes.pop() if modes else ""
        flags = {h["row_has_doc_ids"] for h in headers if h["rows"]} - {-1}
        if len(flags) > 1:
            raise InputError("some ranks give document ids and others do not; give them on "
                             "every rank")
        merged["row_has_doc_ids"] = flags.pop() if flags else state["row_has_doc_ids"]
        seqs = [int(h["rows_without_ids"]) for h in headers]
        merged["rows_without_ids"] = sum(seqs)
        sizes = [int(h["rows"]) for h in headers]
        gathered = {k: _gather_rows(dist, torch, state[k], sizes, device, group)
                    for k in _ROW_KEYS}
        if merged["row_has_doc_ids"] == 0:
            # tie keys of rows without ids: rank r's come after ranks 0..r-1's
            start = 0
            for r in range(world):
                gathered["row_doc_ids"][r] = gathered["row_doc_ids"][r] - start
                start += seqs[r]
        for k in _ROW_KEYS:
            merged[k] = np.concatenate(gathered[k]).astype(state[k].dtype)
    out = copy.deepcopy(metric)
    out.load_state_dict(merged)
    return out


def _gather_rows(dist, torch, array: np.ndarray, sizes: list[int], device, group):
    """Every rank's 1-d ``array`` (of ``sizes[r]`` entries), padded to one length to be
    gathered, then trimmed."""
    longest = max(sizes)
    wide = array.astype(np.float64 if array.dtype.kind == "f" else np.int64)
    padded = np.zeros(longest, dtype=wide.dtype)
    padded[:len(wide)] = wide
    mine = torch.from_numpy(padded).to(device)
    parts = [torch.empty_like(mine) for _ in sizes]
    dist.all_gather(parts, mine, group=group)
    return [p.cpu().numpy()[:n] for p, n in zip(parts, sizes)]


def sync_and_compute(metric: RankingMetrics | AnswerMetrics, group=None) -> dict[str, float]:
    """``sync(metric, group).compute()``: the values over every rank's data, on every rank."""
    return sync(metric, group).compute()
