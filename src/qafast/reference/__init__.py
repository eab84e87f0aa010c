"""The specification: every metric of qafast in plain Python, one module per family.

Each definition here is written to be read, not to be fast: the compiled kernels are tested
against it (``tests/test_*_reference.py``). The ranking measures' names are re-exported, so
``qafast.reference.evaluate`` is trec_eval's ``evaluate``.
"""

from .ranking import *  # noqa: F401,F403
from .ranking import __all__ as _ranking_all

__all__ = list(_ranking_all)
