"""What every subcommand of the ``qafast`` command writes on stdout, in one form, and on
stderr when it is interrupted.

Here, below the families, so that a family's ``register_cli`` handlers can write their output
without importing :mod:`qafast.cli`, which imports the families.
"""

from __future__ import annotations

import math
import sys


def json_safe(doc):
    """``doc`` with every NaN or infinite float as None: JSON has no such numbers, and a
    bare ``NaN`` is refused by strict parsers (trec_eval's text output prints ``-nan``)."""
    if isinstance(doc, float):
        return doc if math.isfinite(doc) else None
    if isinstance(doc, dict):
        return {k: json_safe(v) for k, v in doc.items()}
    if isinstance(doc, (list, tuple)):
        return [json_safe(v) for v in doc]
    return doc


def write_json(doc) -> int:
    """The ``-o json`` output of every subcommand: indented JSON and a newline on stdout; a
    NaN or infinite value is ``null``."""
    import json  # here: 3 ms of every command's start otherwise

    json.dump(json_safe(doc), sys.stdout, indent=1, allow_nan=False)
    sys.stdout.write("\n")
    return 0


def write_values(values: dict, *, width: int) -> int:
    """The text output of a subcommand's summary: ``name<TAB>value`` with 4 decimals."""
    sys.stdout.write("".join(f"{k:<{width}}\t{v:.4f}\n" for k, v in values.items()))
    return 0


def interrupted() -> int:
    """End the program after Ctrl-C (SIGINT): one line on stderr instead of a traceback, then
    the death by SIGINT that the interrupt would have been without Python's handler, so that
    a shell or a script running qafast sees an interrupt (bash prints nothing, reports status
    130, and stops a loop that runs qafast) and not an ordinary failure. Nothing is flushed
    to stdout: a result not yet written stays unwritten. Where a process cannot send itself
    a signal (Windows), the status is 130, a shell's for an interrupt."""
    import os
    import signal

    try:
        sys.stderr.write("qafast: interrupted\n")
        sys.stderr.flush()
    except (OSError, ValueError):  # stderr closed
        pass
    if os.name == "posix":
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    return 130
