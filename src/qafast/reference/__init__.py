"""The specification: every metric of qafast in plain Python, one module per family.

Each definition here is written to be read, not to be fast: the compiled kernels are tested
against it (``tests/test_*``). The modules are ``ranking`` (trec_eval), ``answers`` (SQuAD,
MLQA, CMRC, DRCD, PIAF), ``squad`` (the official scripts' aggregation), ``factoid`` (BioASQ),
``dbqa`` (NLPCC-DBQA), ``curves`` (average precision), ``concepts`` (OpenCSR), ``events``
(tweet event mentions) and ``fusion`` (fusing runs, as ranx does); ``multilingual`` is MLQA's,
CMRC 2018's and DRCD's evaluation. The ranking measures' names are also re-exported here, so
``qafast.reference.evaluate`` is trec_eval's ``evaluate``.
"""

from __future__ import annotations

import importlib
from typing import Any

# the family modules load on first use: ``qafast.answers`` needs only ``reference.answers``
_FAMILIES = ("answers", "concepts", "coqa", "curves", "dbqa", "drop", "events", "factoid",
             "fusion", "hotpot", "multilingual", "quac", "ranking", "squad",
             "nq", "tydi")


def __getattr__(name: str) -> Any:
    if name in _FAMILIES:
        return importlib.import_module(f"{__name__}.{name}")
    ranking = importlib.import_module(f"{__name__}.ranking")
    if name == "__all__":
        return list(ranking.__all__) + list(_FAMILIES)
    if name in ranking.__all__:
        return getattr(ranking, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__getattr__("__all__")))
