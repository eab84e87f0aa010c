"""Pausing Python's cyclic garbage collector while an evaluation builds millions of objects."""

from __future__ import annotations

import contextlib
import gc
import threading

_gc_lock = threading.Lock()
_gc_pauses = 0           # evaluations running with the collector paused, on any thread
_gc_was_enabled = False  # the collector's state before the first of them


@contextlib.contextmanager
def gc_paused():
    """No cyclic garbage collection while millions of small lists and strings are made: each
    collection would walk the caller's whole dataset, for nothing (the inputs hold no cycles
    we create). The collector is process-wide: with calls on several threads, the state
    before the first is restored after the last, so that one call's end does not resume
    collection under another still running."""
    global _gc_pauses, _gc_was_enabled
    with _gc_lock:
        if _gc_pauses == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_pauses += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_pauses -= 1
            if _gc_pauses == 0 and _gc_was_enabled:
                gc.enable()
