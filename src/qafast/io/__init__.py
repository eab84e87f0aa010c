"""Readers of the file formats qafast evaluates, one module per format."""

from ._errors import LineFormatError
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

__all__ = [
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
