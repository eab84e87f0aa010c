"""Readers of the file formats qafast evaluates, one module per format."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._errors import LineFormatError

# one reader module loads only when used: reading a DBQA file needs none of the others
_LAZY = {
    "arrow": ("ArrowFormatError",),
    "bioasq": ("BioasqFormatError", "BioasqWarning", "read_bioasq"),
    "conll": ("ConllFormatError", "read_conll"),
    "dbqa": ("DbqaData", "DbqaFormatError", "read_dbqa"),
    "drfact": ("DrFactFormatError", "DrFactWarning", "read_drfact"),
    "squad": ("SquadDataset", "SquadFormatError", "SquadWarning", "read_na_probs",
              "read_squad_dataset", "read_squad_predictions"),
    "trec": ("TrecColumns", "TrecFormatError", "read_trec_qrels", "read_trec_run"),
}
_MODULE_OF = {name: module for module, names in _LAZY.items() for name in names}

if TYPE_CHECKING:
    from .arrow import ArrowFormatError
    from .bioasq import BioasqFormatError, BioasqWarning, read_bioasq
    from .conll import ConllFormatError, read_conll
    from .dbqa import DbqaData, DbqaFormatError, read_dbqa
    from .drfact import DrFactFormatError, DrFactWarning, read_drfact
    from .squad import (
        SquadDataset,
        SquadFormatError,
        SquadWarning,
        read_na_probs,
        read_squad_dataset,
        read_squad_predictions,
    )
    from .trec import TrecColumns, TrecFormatError, read_trec_qrels, read_trec_run


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "ArrowFormatError",
    "BioasqFormatError",
    "BioasqWarning",
    "ConllFormatError",
    "DbqaData",
    "DbqaFormatError",
    "DrFactFormatError",
    "DrFactWarning",
    "LineFormatError",
    "SquadDataset",
    "SquadFormatError",
    "SquadWarning",
    "TrecColumns",
    "TrecFormatError",
    "read_bioasq",
    "read_conll",
    "read_dbqa",
    "read_drfact",
    "read_na_probs",
    "read_squad_dataset",
    "read_squad_predictions",
    "read_trec_qrels",
    "read_trec_run",
]
