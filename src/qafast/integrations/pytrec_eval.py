"""qafast's ``RelevanceEvaluator`` where code calls pytrec_eval's: BEIR, MTEB and others.

BEIR (``beir.retrieval.evaluation.EvaluateRetrieval.evaluate``) and MTEB (its retrieval
evaluator, ``mteb._evaluators.retrieval_metrics.calculate_retrieval_scores``) measure
retrieval with ``pytrec_eval.RelevanceEvaluator``, looked up on the pytrec_eval module at
each call. Inside ``with patch():`` that name is :class:`qafast.compat.RelevanceEvaluator`,
whose numbers are pytrec-eval-terrier 0.5.11's, so their evaluations print the same numbers,
measured by qafast. On leaving the block pytrec_eval's own class is back.

Only ``RelevanceEvaluator`` is replaced; the rest of pytrec_eval (``parse_run``,
``compute_aggregated_measure``, ...) stays as it is. The swap is process-wide while the
block runs: other threads calling pytrec_eval meanwhile get qafast's evaluator too.
"""

from __future__ import annotations

import contextlib
import importlib
import types
from typing import Iterator

from ..errors import InputTypeError

__all__ = ["patch"]


def _pytrec_eval():
    try:
        import pytrec_eval
    except ImportError:
        raise ImportError("patch() replaces pytrec_eval's RelevanceEvaluator, and pytrec_eval "
                          "is not installed (BEIR and MTEB install it: "
                          "pip install pytrec-eval-terrier)") from None
    return pytrec_eval


@contextlib.contextmanager
def patch(*modules) -> Iterator[type]:
    """Have ``pytrec_eval.RelevanceEvaluator`` be qafast's drop-in inside a ``with`` block.

    Parameters
    ----------
    *modules : module or str, optional
        Modules (or their names) that imported the class itself, as ``from pytrec_eval
        import RelevanceEvaluator``: their names bound to pytrec_eval's class are swapped
        too. BEIR and MTEB need none: they call ``pytrec_eval.RelevanceEvaluator``.

    Yields
    ------
    type
        :class:`qafast.compat.RelevanceEvaluator`.

    Examples
    --------
    >>> import pytrec_eval
    >>> from qafast.integrations.pytrec_eval import patch
    >>> with patch():
    ...     evaluator = pytrec_eval.RelevanceEvaluator({"q1": {"d1": 1}}, {"map", "P.1"})
    >>> type(evaluator).__module__, evaluator.evaluate({"q1": {"d1": 0.5, "d2": 0.9}})
    ('qafast.compat', {'q1': {'map': 0.5, 'P_1': 0.0}})
    >>> pytrec_eval.RelevanceEvaluator.__module__
    'pytrec_eval'

    With BEIR (``pip install beir``) or MTEB, evaluate inside the block:

    .. code-block:: python

        from beir.retrieval.evaluation import EvaluateRetrieval

        with patch():
            ndcg, _map, recall, precision = EvaluateRetrieval.evaluate(qrels, results,
                                                                       [1, 10, 100])
    """
    pytrec_eval = _pytrec_eval()
    from ..compat import RelevanceEvaluator

    targets: list[types.ModuleType] = [pytrec_eval]
    for m in modules:
        if isinstance(m, str):
            m = importlib.import_module(m)
        if not isinstance(m, types.ModuleType):
            raise InputTypeError(f"patch() takes modules or module names, got "
                                 f"{type(m).__name__}")
        targets.append(m)
    original = pytrec_eval.RelevanceEvaluator
    swapped: list[tuple[types.ModuleType, str]] = []
    if original is not RelevanceEvaluator:  # not inside another patch()
        for m in targets:
            for name, value in list(vars(m).items()):
                if value is original:
                    setattr(m, name, RelevanceEvaluator)
                    swapped.append((m, name))
    try:
        yield RelevanceEvaluator
    finally:
        for m, name in reversed(swapped):
            if getattr(m, name, None) is RelevanceEvaluator:  # unless rebound meanwhile
                setattr(m, name, original)
