"""What every subcommand of the ``qafast`` command writes on stdout, in one form, and on
stderr when it is interrupted.

Here, below the families, so that a family's ``register_cli`` handlers can write their output
without importing :mod:`qafast.cli`, which imports the families; and the argparse action of
the absl boolean flags that Google's evaluation scripts take, for the commands that take
their arguments.
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


def absl_bool_action() -> type:
    """An argparse action for an absl boolean flag, as Google's evaluation scripts take
    them: ``--flag``, or ``--flag=true`` / ``--flag=false`` (``t``, ``f``, ``1``, ``0``)."""
    import argparse

    class AbslBool(argparse.Action):
        def __init__(self, option_strings, dest, **kwargs):
            super().__init__(option_strings, dest, nargs="?", const=True, **kwargs)

        def __call__(self, parser, namespace, values, option_string=None):
            if isinstance(values, str):
                v = values.lower()
                if v not in ("true", "false", "t", "f", "1", "0"):
                    parser.error(f"{option_string}: expected true or false, got {values!r}")
                values = v in ("true", "t", "1")
            setattr(namespace, self.dest, values)

    return AbslBool
