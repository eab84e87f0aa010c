"""qafast: fast, exact evaluation of question answering and retrieval systems.

One module per metric family, each with its kernels (``_*_kernels.pxi``), its plain-Python
specification (``qafast.reference.<family>``), its readers (``qafast.io``) and its tests:

- ranking (trec_eval 10.0): :func:`evaluate`, :func:`evaluate_runs` (many runs, one qrels),
  :class:`Qrels`, :class:`Run`, and a drop-in for
  pytrec_eval's :class:`RelevanceEvaluator`;
- answers (SQuAD, MLQA, CMRC, DRCD, PIAF): :func:`exact_match`, :func:`f1`, :func:`squad`,
  :func:`reader_metrics`, :func:`retriever_metrics`;
- factoid QA and BioASQ: :func:`evaluate_factoid`, :func:`evaluate_bioasq`;
- answer-sentence selection (NLPCC-DBQA): :func:`evaluate_dbqa`;
- average precision from curves: :func:`average_precision`, :func:`precision_recall_curve`;
- open-ended commonsense answers (OpenCSR): :func:`evaluate_concepts`, :func:`hit_at_k`,
  :func:`recall_at_k`;
- event mentions in tweets: :func:`event_mention_score`, :func:`tweet_score`,
  :func:`tw_events_score`;
- comparing systems (significance tests, report tables, plots): :func:`compare`,
  :class:`Comparison`, :func:`to_frame`, :func:`plot_precision_recall`.
- errors: every bad input raises a :class:`QafastError` (``qafast.errors``), also a
  ``ValueError`` or ``TypeError``;
- in the training loop: :class:`RankingMetrics`, :class:`AnswerMetrics` (``update`` /
  ``compute`` / ``merge``), and ``qafast.integrations`` for torch.distributed, Hugging Face
  and torchmetrics.
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Any

# Each public name is imported from its family module on first use (PEP 562), so that
# ``import qafast`` costs little more than numpy and a caller of one family never loads the
# others, their readers or the plain-Python reference.
_LAZY = {
    "answers": ("exact_match", "exact_match_and_f1", "f1", "reader_metrics", "retriever_metrics"),
    "compat": ("RelevanceEvaluator", "compute_aggregated_measure", "parse_qrel", "parse_run",
               "supported_measures", "supported_nicknames"),
    "comparison": ("Comparison", "compare", "plot_precision_recall", "to_frame"),
    "concepts": ("evaluate_concepts", "hit_at_k", "recall_at_k"),
    "curves": ("average_precision", "precision_recall_curve", "threshold_average_precision",
               "threshold_precision_recall"),
    "dbqa": ("evaluate_dbqa", "evaluate_dbqa_file"),
    "errors": ("FormatError", "InputError", "InputTypeError", "MeasureError", "QafastError"),
    "events": ("event_mention_score", "tw_events_score", "tweet_score"),
    "factoid": ("evaluate_bioasq", "evaluate_factoid"),
    "ranking": ("Qrels", "Run", "evaluate", "evaluate_runs"),
    "squad_eval": ("squad",),
    "stream": ("AnswerMetrics", "RankingMetrics"),
}
_MODULE_OF = {name: module for module, names in _LAZY.items() for name in names}

if TYPE_CHECKING:  # what type checkers and IDEs see: the names themselves
    from .answers import exact_match, exact_match_and_f1, f1, reader_metrics, retriever_metrics
    from .comparison import Comparison, compare, plot_precision_recall, to_frame
    from .compat import (
        RelevanceEvaluator,
        compute_aggregated_measure,
        parse_qrel,
        parse_run,
        supported_measures,
        supported_nicknames,
    )
    from .concepts import evaluate_concepts, hit_at_k, recall_at_k
    from .curves import (
        average_precision,
        precision_recall_curve,
        threshold_average_precision,
        threshold_precision_recall,
    )
    from .dbqa import evaluate_dbqa, evaluate_dbqa_file
    from .errors import FormatError, InputError, InputTypeError, MeasureError, QafastError
    from .events import event_mention_score, tw_events_score, tweet_score
    from .factoid import evaluate_bioasq, evaluate_factoid
    from .ranking import Qrels, Run, evaluate, evaluate_runs
    from .squad_eval import squad
    from .stream import AnswerMetrics, RankingMetrics


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is not None:
        value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
        globals()[name] = value  # found once; later lookups do not come here
        return value
    if not name.startswith("__"):
        # a submodule used as an attribute (``qafast.io.read_trec_run`` after ``import qafast``)
        try:
            return importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as e:
            if e.name != f"{__name__}.{name}":
                raise
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__version__ = "0.1.0.dev0"

__all__ = [
    "AnswerMetrics",
    "Comparison",
    "FormatError",
    "InputError",
    "InputTypeError",
    "MeasureError",
    "QafastError",
    "Qrels",
    "RankingMetrics",
    "RelevanceEvaluator",
    "Run",
    "__version__",
    "average_precision",
    "compare",
    "compute_aggregated_measure",
    "evaluate",
    "evaluate_bioasq",
    "evaluate_concepts",
    "evaluate_dbqa",
    "evaluate_dbqa_file",
    "evaluate_factoid",
    "evaluate_runs",
    "event_mention_score",
    "exact_match",
    "exact_match_and_f1",
    "f1",
    "hit_at_k",
    "parse_qrel",
    "parse_run",
    "plot_precision_recall",
    "precision_recall_curve",
    "reader_metrics",
    "recall_at_k",
    "retriever_metrics",
    "squad",
    "supported_measures",
    "supported_nicknames",
    "threshold_average_precision",
    "threshold_precision_recall",
    "to_frame",
    "tw_events_score",
    "tweet_score",
]


class _RenamedModules:
    """Finds the modules that were renamed, under their old names (see ``_renamed.py``): a
    :class:`Comparison` pickled before ``qafast.compare`` became ``qafast.comparison`` names
    its class ``qafast.compare.Comparison``, and unpickling it imports that module. Here, not
    in ``_renamed.py``, so that ``import qafast`` loads no other module; last on
    ``sys.meta_path``, so that it is asked only about modules no other finder has."""

    OLD_NAMES = {f"{__name__}.compare": f"{__name__}.comparison"}

    def find_spec(self, name: str, path: object = None, target: object = None) -> Any:
        if name not in self.OLD_NAMES:
            return None
        from ._renamed import renamed_module_spec

        return renamed_module_spec(name, self.OLD_NAMES[name])


sys.meta_path.append(_RenamedModules())
