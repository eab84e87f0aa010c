"""Progress bars on stderr for long inputs, drawn by tqdm when it is installed.

``progress=None`` (the default everywhere) shows a bar only when stderr is a terminal, and
only once the work has taken ``_DELAY`` seconds, so short calls print nothing;
``progress=True`` shows it at once, wherever stderr goes; ``progress=False`` never. Without
tqdm (``pip install "qafast[progress]"``) there is no bar and no error.
"""

from __future__ import annotations

import sys
import threading

#: seconds before an automatic bar appears
_DELAY = 2.0


def _wanted(progress) -> bool:
    if progress is not None and not isinstance(progress, bool):
        raise TypeError(f"progress must be None, True or False, not {type(progress).__name__}")
    if progress is False:
        return False
    if progress is None:
        isatty = getattr(sys.stderr, "isatty", None)
        try:
            if isatty is None or not isatty():
                return False
        except ValueError:  # a closed stream
            return False
    try:
        import tqdm  # noqa: F401
    except ImportError:
        return False
    return True


class Progress:
    """A counter that draws a bar, or does nothing. ``update`` may be called from several
    threads."""

    def __init__(self, progress, *, total=None, unit: str = "B", desc: str | None = None):
        self._bar = None
        self._lock = threading.Lock()
        if not _wanted(progress):
            return
        from tqdm import tqdm

        self._bar = tqdm(total=total, unit=unit, unit_scale=unit == "B", unit_divisor=1024
                         if unit == "B" else 1000, desc=desc, file=sys.stderr, leave=False,
                         delay=0 if progress else _DELAY, dynamic_ncols=True)

    def __bool__(self) -> bool:
        return self._bar is not None

    def update(self, n: int) -> None:
        if self._bar is not None:
            with self._lock:
                self._bar.update(n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
