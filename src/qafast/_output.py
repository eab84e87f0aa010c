"""What every subcommand of the ``qafast`` command writes on stdout, in one form.

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
