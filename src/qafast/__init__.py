"""qafast: fast, exact evaluation of question answering and retrieval systems.

Ranking measures follow trec_eval 10.0 (:func:`evaluate`, :class:`Qrels`, :class:`Run`), with a
drop-in for pytrec_eval's ``RelevanceEvaluator``.
"""

from .ranking import Qrels, Run, evaluate, supported_measures

__version__ = "0.1.0.dev0"

__all__ = ["Qrels", "Run", "evaluate", "supported_measures", "__version__"]
