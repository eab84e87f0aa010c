"""qafast: fast, exact evaluation of question answering and retrieval systems.

Ranking measures follow trec_eval 10.0 (:func:`evaluate`, :class:`Qrels`, :class:`Run`), with a
drop-in for pytrec_eval's ``RelevanceEvaluator``.
"""

from .compat import (
    RelevanceEvaluator,
    compute_aggregated_measure,
    parse_qrel,
    parse_run,
    supported_measures,
    supported_nicknames,
)
from .ranking import Qrels, Run, evaluate

__version__ = "0.1.0.dev0"

__all__ = [
    "Qrels",
    "RelevanceEvaluator",
    "Run",
    "__version__",
    "compute_aggregated_measure",
    "evaluate",
    "parse_qrel",
    "parse_run",
    "supported_measures",
    "supported_nicknames",
]
