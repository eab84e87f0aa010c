"""The ``qafast`` program: what is set up before numpy is first imported."""

from __future__ import annotations

from ._blas import quiet_blas


def main(argv: list[str] | None = None) -> int:
    quiet_blas()
    from .cli import main as run

    return run(argv)
