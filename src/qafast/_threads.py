"""The threads qafast computes on: how many a ``workers=`` option asks for, a pool kept from
call to call, and work cut into one contiguous part per thread. The kernels release the GIL,
so a thread per core shares the data and runs at once."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from .errors import InputError, InputTypeError

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

__all__ = ["parts", "resolve_workers", "thread_pool"]


def resolve_workers(workers: int) -> int:
    """The number of threads ``workers`` asks for (-1: every core this process may use)."""
    if not isinstance(workers, int) or isinstance(workers, bool):
        raise InputTypeError(f"workers must be an int, not {type(workers).__name__}")
    if workers == -1:
        return _cores()
    if workers < 1:
        raise InputError(f"workers must be a positive int or -1 (all cores), not {workers}")
    return workers


def _cores() -> int:
    """The cores this process may run on (its affinity, not the machine's count)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


_POOLS: dict[int, "ThreadPoolExecutor"] = {}


def thread_pool(size: int) -> ThreadPoolExecutor:
    """A thread pool of ``size`` threads, kept for the next call (threads idle in between)."""
    pool = _POOLS.get(size)
    if pool is None:
        # imported here: the command line on a small file starts no thread, and
        # concurrent.futures took 6 ms of its start-up
        from concurrent.futures import ThreadPoolExecutor

        pool = _POOLS[size] = ThreadPoolExecutor(size, thread_name_prefix="qafast")
    return pool


def parts(n: int, count: int) -> list[tuple[int, int]]:
    """``range(n)`` cut into at most ``count`` contiguous ``(lo, hi)`` parts of equal size."""
    count = max(1, min(count, n))
    step = -(-n // count)
    return [(lo, min(n, lo + step)) for lo in range(0, n, step)]
