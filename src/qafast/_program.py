"""The ``qafast`` program: what is set up before numpy is first imported, and how it ends on
Ctrl-C."""

from __future__ import annotations

from ._blas import quiet_blas


def main(argv: list[str] | None = None) -> int:
    try:
        quiet_blas()
        from .cli import main as run

        return run(argv)
    except KeyboardInterrupt:
        from ._output import interrupted

        return interrupted()

