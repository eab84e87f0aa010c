"""Warnings that point at the caller's code, not at the qafast frame that noticed the input."""

from __future__ import annotations

import contextlib
import os
import sys
import warnings
from types import FrameType

_PACKAGE = os.path.dirname(os.path.abspath(__file__))


def warn(message: str, category: type[Warning]) -> None:
    """``warnings.warn`` with the stacklevel of the first frame outside the qafast package,
    so that filters by module and the printed location name the user's code."""
    frame: FrameType | None = sys._getframe(0)  # this function: stacklevel 1
    level = 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE):
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)


def shown(ids, limit: int = 5) -> str:
    """The first ``limit`` ids, repr'd and comma separated, with "..." when there are more."""
    ids = list(ids)
    return ", ".join(map(repr, ids[:limit])) + (", ..." if len(ids) > limit else "")


@contextlib.contextmanager
def on_stderr(command: str, category: type[Warning]):
    """The command line's form: each ``category`` warning raised inside is printed once as
    ``qafast COMMAND: message`` on stderr (others are shown as usual)."""
    caught: list = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", category)
            yield
    finally:
        for w in caught:
            if issubclass(w.category, category):
                print(f"qafast {command}: {w.message}", file=sys.stderr)
            else:
                warnings.showwarning(w.message, w.category, w.filename, w.lineno)
