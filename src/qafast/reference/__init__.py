"""The specification: every metric of qafast in plain Python, one module per family.

Each definition here is written to be read, not to be fast: the compiled kernels are tested
against it (``tests/test_*``). The modules are ``ranking`` (trec_eval), ``answers`` (SQuAD,
MLQA, CMRC, DRCD, PIAF), ``squad`` (the official scripts' aggregation), ``factoid`` (BioASQ),
``dbqa`` (NLPCC-DBQA), ``curves`` (average precision), ``concepts`` (OpenCSR) and ``events``
(tweet event mentions). The ranking measures' names are also re-exported here, so
``qafast.reference.evaluate`` is trec_eval's ``evaluate``.
"""

from . import answers, concepts, curves, dbqa, events, factoid, ranking, squad  # noqa: F401
from .ranking import *  # noqa: F401,F403
from .ranking import __all__ as _ranking_all

__all__ = list(_ranking_all) + [
    "answers", "concepts", "curves", "dbqa", "events", "factoid", "ranking", "squad",
]
