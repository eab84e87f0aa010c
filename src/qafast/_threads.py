"""The threads qafast computes on: how many a ``workers=`` option asks for, a pool kept from
call to call, and work cut into one contiguous part per thread. The kernels release the GIL,
so a thread per core shares the data and runs at once.

An interrupt (Ctrl-C, SIGINT) reaches only the main thread, and only between two Python
operations: a kernel running for seconds without the GIL, or a wait for other threads that
cannot be broken, would hold it up, and threads left computing would keep the process
running after the call had ended. So a long kernel call is cut into pieces of a few
milliseconds (:func:`run_parts`), the calling thread waits for the others in a way an
interrupt breaks (:func:`wait_all`), and then every thread stops at its next piece and is
waited for (:func:`settle`) before the ``KeyboardInterrupt`` goes on; the public calls that
start threads close the kept pools then too (:func:`closes_pools_on_interrupt`), so that none
of qafast's threads is left.
"""

from __future__ import annotations

import functools
import itertools
import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, cast

from .errors import InputError, InputTypeError

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

__all__ = ["beside", "closes_pools_on_interrupt", "cuts", "parts", "resolve_workers", "run_parts",
           "settle", "steps", "submit_all", "thread_pool", "wait_all"]

#: How often a thread waiting for others looks for an interrupt, in seconds (a wait returns
#: as soon as the others are done, whatever this is)
_POLL = 0.1


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


def close_pools() -> None:
    """Shut the kept pools down, their threads ended (the next call starts new ones)."""
    while _POOLS:
        _, pool = _POOLS.popitem()
        pool.shutdown(wait=True, cancel_futures=True)
    # an interrupt inside ``submit`` can land between a worker's start and the pool noting
    # it: that worker is not joined by ``shutdown`` but does take its stop sentinel, so it
    # is waited for here by name
    current = threading.current_thread()
    for thread in threading.enumerate():
        if thread is not current and thread.name.startswith("qafast"):
            thread.join()


_F = TypeVar("_F", bound=Callable[..., Any])
_T = TypeVar("_T")
_U = TypeVar("_U")


def closes_pools_on_interrupt(function: _F) -> _F:
    """``function``, which may start threads, closing the kept pools when it is interrupted
    (``KeyboardInterrupt``), so that no thread of qafast is left once the interrupt is out."""

    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except KeyboardInterrupt:
            close_pools()
            raise

    return cast(_F, call)


def settle(futures: list, cancel: threading.Event | None = None) -> None:
    """After an error or an interrupt in the thread that started ``futures``: set ``cancel``
    (the running ones stop at their next piece of work), drop those not started and wait for
    the others, so that no thread goes on computing for a call that has ended."""
    from concurrent.futures import wait

    if cancel is not None:
        cancel.set()
    for f in futures:
        f.cancel()
    wait(futures)


def submit_all(pool: ThreadPoolExecutor, function: Callable[..., Any],
               arguments: list[tuple], cancel: threading.Event | None = None) -> list:
    """``pool.submit(function, *args)`` for each of ``arguments``, in order; an interrupt
    while submitting stops those submitted (:func:`settle`) (and sets ``cancel``, which the one
    being submitted also sees) before it goes on."""
    futures: list = []
    try:
        for args in arguments:
            futures.append(pool.submit(function, *args))
    except BaseException:
        settle(futures, cancel)
        raise
    return futures


def wait_all(futures: list, cancel: threading.Event | None = None) -> None:
    """Wait until every one of ``futures`` is done, in a way an interrupt breaks; on an
    interrupt (or any error raised while waiting), :func:`settle` them, then raise it."""
    from concurrent.futures import wait

    try:
        pending = set(futures)
        while pending:
            _, pending = wait(pending, timeout=_POLL)
    except BaseException:
        settle(futures, cancel)
        raise


def run_parts(work: Callable[[int, int], Any], chunks: list[tuple[int, int]],
              pieces: Callable[[int, int], list[tuple[int, int]]]) -> None:
    """``work(lo, hi)`` over every piece of every chunk: the pieces of one chunk (``pieces(lo,
    hi)`` cuts it, in order) on one thread, a thread per chunk (the calling thread when
    there is one). Between pieces the calling thread sees an interrupt and the others a
    cancel, so a piece is the longest that an interrupt waits; the pieces of a chunk, done in
    order, write what the chunk done in one call writes."""
    if len(chunks) <= 1:
        for lo, hi in chunks:
            for a, b in pieces(lo, hi):
                work(a, b)
        return
    cancel = threading.Event()

    def chunk(lo: int, hi: int) -> None:
        for a, b in pieces(lo, hi):
            if cancel.is_set():
                return
            work(a, b)

    def failed(f) -> None:  # the others stop at their next piece: the call fails anyway
        if not f.cancelled() and f.exception() is not None:
            cancel.set()

    futures = submit_all(thread_pool(len(chunks)), chunk, chunks, cancel)
    for f in futures:
        f.add_done_callback(failed)
    wait_all(futures, cancel)
    for f in futures:
        f.result()  # done: raises a thread's error


def cuts(weights, lo: int, hi: int, step: int) -> list[tuple[int, int]]:
    """``range(lo, hi)`` cut into ``(a, b)`` pieces of about ``step`` weight each, where
    ``weights`` is the running total (length n + 1, ``weights[i]`` before item i); a piece
    holds at least one item."""
    import numpy as np

    if hi - lo <= 1:
        return [(lo, hi)] if hi > lo else []
    start = int(weights[lo])
    total = int(weights[hi]) - start
    if total <= step:
        return [(lo, hi)]
    targets = start + np.arange(step, total, step, dtype=np.int64)
    inner = np.searchsorted(weights[lo:hi + 1], targets, side="left") + lo
    bounds = np.unique(np.clip(inner, lo + 1, hi - 1))
    edges = [lo, *bounds.tolist(), hi]
    return [(a, b) for a, b in itertools.pairwise(edges) if b > a]


def beside(background: Callable[[], _T], foreground: Callable[[], _U],
           name: str) -> tuple[_T, _U]:
    """``(background(), foreground())``, the first run on a new thread called ``name`` while
    this one runs the second. Both are short kernel calls that release the GIL, so the wait
    for the thread is not worth making interruptible. The thread's exception is raised here
    once it has ended, unless this thread's own call raised first."""
    outcome: list = []

    def run() -> None:
        try:
            outcome.append(background())
        except BaseException as e:  # noqa: BLE001 (raised again on the calling thread)
            outcome.append(e)

    worker = threading.Thread(target=run, name=name, daemon=True)
    worker.start()
    try:
        here = foreground()
    finally:
        worker.join()
    if isinstance(outcome[0], BaseException):
        raise outcome[0]
    return outcome[0], here


def steps(lo: int, hi: int, step: int) -> list[tuple[int, int]]:
    """``range(lo, hi)`` in pieces of ``step`` items (the last may be shorter)."""
    return [(a, min(hi, a + step)) for a in range(lo, hi, step)]


def parts(n: int, count: int) -> list[tuple[int, int]]:
    """``range(n)`` cut into at most ``count`` contiguous ``(lo, hi)`` parts of equal size."""
    count = max(1, min(count, n))
    step = -(-n // count)
    return [(lo, min(n, lo + step)) for lo in range(0, n, step)]
