"""qafast: fast, exact evaluation of question answering and retrieval systems.

One module per metric family, each with its kernel parts (``_*.pxi``), its plain-Python
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
- fusing runs (RRF, CombSUM, ... as ranx fuses them): :func:`fuse`;
- comparing systems (significance tests, report tables, plots): :func:`compare`,
  :class:`Comparison`, :func:`to_frame`, :func:`plot_precision_recall`.
- errors: every bad input raises a :class:`QafastError` (``qafast.errors``), also a
  ``ValueError`` or ``TypeError``;
- in the training loop: :class:`RankingMetrics`, :class:`AnswerMetrics` (``update`` /
  ``compute`` / ``merge``), and ``qafast.integrations`` for torch.distributed, Hugging Face
  and torchmetrics.
"""

from __future__ import annotations

# underscored, so that a type checker, shown no __all__ (below), does not take them for names
# qafast exports
import sys as _sys
import typing as _typing

# The public names, by the module that defines them: the one list that __all__ is made from.
# Each name is imported from its family module on first use (PEP 562), so that
# ``import qafast`` costs little more than numpy and a caller of one family never loads the
# others, their readers or the plain-Python reference.
_LAZY = {
    "answers": ("exact_match", "exact_match_and_f1", "f1", "reader_metrics", "retriever_metrics"),
    "compat": ("RelevanceEvaluator", "compute_aggregated_measure", "parse_qrel", "parse_run",
               "supported_measures", "supported_nicknames"),
    "comparison": ("Comparison", "compare", "plot_precision_recall", "to_frame"),
    "concepts": ("evaluate_concepts", "hit_at_k", "recall_at_k"),
    "cwl_eval": ("cwl",),
    "curves": ("average_precision", "precision_recall_curve", "threshold_average_precision",
               "threshold_precision_recall"),
    "dbqa": ("evaluate_dbqa", "evaluate_dbqa_file"),
    "diversity": ("DiversityQrels",),
    "drop_eval": ("DropMetrics", "drop", "drop_metrics", "drop_per_question"),
    "coqa_eval": ("CoqaMetrics", "coqa", "coqa_human", "coqa_per_turn"),
    "dpr_eval": ("RetrievalAccuracy", "dpr_first_hits", "dpr_retrieval"),
    "errors": ("FormatError", "InputError", "InputTypeError", "MeasureError", "QafastError"),
    "events": ("event_mention_score", "tw_events_score", "tweet_score"),
    "factoid": ("evaluate_bioasq", "evaluate_factoid"),
    "fusion": ("fuse",),
    "gdeval_eval": ("gdeval",),
    "hotpot_eval": ("HotpotMetrics", "hotpot"),
    "kilt_eval": ("KiltMetrics", "kilt", "kilt_retrieval"),
    "msmarco_eval": ("MsmarcoMetrics", "MsmarcoWarning", "msmarco_passage",
                     "msmarco_passage_per_query"),
    "multilingual_eval": ("cmrc", "drcd", "mlqa"),
    "ndeval_eval": ("ndeval",),
    "nq_eval": ("NqMetrics", "nq", "nq_examples", "nq_f1"),
    "quac_eval": ("QuacMetrics", "quac"),
    "ranking": ("Qrels", "Run", "evaluate", "evaluate_runs"),
    "squad_eval": ("squad",),
    "stream": ("AnswerMetrics", "RankingMetrics"),
    "triviaqa_eval": ("TriviaqaMetrics", "triviaqa", "triviaqa_per_question"),
    "tydi_eval": ("tydi", "tydi_by_language", "tydi_questions"),
}
_MODULE_OF = {name: module for module, names in _LAZY.items() for name in names}

# What type checkers and IDEs read instead of _LAZY: the same names from the same modules
# (tests/test_imports.py checks), each as "name as name", the typing spec's mark of a
# re-export, since they are shown no __all__ (below).
if _typing.TYPE_CHECKING:
    from .answers import exact_match as exact_match
    from .answers import exact_match_and_f1 as exact_match_and_f1
    from .answers import f1 as f1
    from .answers import reader_metrics as reader_metrics
    from .answers import retriever_metrics as retriever_metrics
    from .comparison import Comparison as Comparison
    from .comparison import compare as compare
    from .comparison import plot_precision_recall as plot_precision_recall
    from .comparison import to_frame as to_frame
    from .compat import RelevanceEvaluator as RelevanceEvaluator
    from .compat import compute_aggregated_measure as compute_aggregated_measure
    from .compat import parse_qrel as parse_qrel
    from .compat import parse_run as parse_run
    from .compat import supported_measures as supported_measures
    from .compat import supported_nicknames as supported_nicknames
    from .concepts import evaluate_concepts as evaluate_concepts
    from .concepts import hit_at_k as hit_at_k
    from .concepts import recall_at_k as recall_at_k
    from .curves import average_precision as average_precision
    from .curves import precision_recall_curve as precision_recall_curve
    from .curves import threshold_average_precision as threshold_average_precision
    from .curves import threshold_precision_recall as threshold_precision_recall
    from .dbqa import evaluate_dbqa as evaluate_dbqa
    from .dbqa import evaluate_dbqa_file as evaluate_dbqa_file
    from .diversity import DiversityQrels as DiversityQrels
    from .drop_eval import DropMetrics as DropMetrics
    from .drop_eval import drop as drop
    from .drop_eval import drop_metrics as drop_metrics
    from .drop_eval import drop_per_question as drop_per_question
    from .coqa_eval import CoqaMetrics as CoqaMetrics
    from .coqa_eval import coqa as coqa
    from .coqa_eval import coqa_human as coqa_human
    from .coqa_eval import coqa_per_turn as coqa_per_turn
    from .dpr_eval import RetrievalAccuracy as RetrievalAccuracy
    from .dpr_eval import dpr_first_hits as dpr_first_hits
    from .dpr_eval import dpr_retrieval as dpr_retrieval
    from .cwl_eval import cwl as cwl
    from .errors import FormatError as FormatError
    from .errors import InputError as InputError
    from .errors import InputTypeError as InputTypeError
    from .errors import MeasureError as MeasureError
    from .errors import QafastError as QafastError
    from .events import event_mention_score as event_mention_score
    from .events import tw_events_score as tw_events_score
    from .events import tweet_score as tweet_score
    from .factoid import evaluate_bioasq as evaluate_bioasq
    from .factoid import evaluate_factoid as evaluate_factoid
    from .fusion import fuse as fuse
    from .gdeval_eval import gdeval as gdeval
    from .hotpot_eval import HotpotMetrics as HotpotMetrics
    from .hotpot_eval import hotpot as hotpot
    from .kilt_eval import KiltMetrics as KiltMetrics
    from .kilt_eval import kilt as kilt
    from .kilt_eval import kilt_retrieval as kilt_retrieval
    from .msmarco_eval import MsmarcoMetrics as MsmarcoMetrics
    from .msmarco_eval import MsmarcoWarning as MsmarcoWarning
    from .msmarco_eval import msmarco_passage as msmarco_passage
    from .msmarco_eval import msmarco_passage_per_query as msmarco_passage_per_query
    from .multilingual_eval import cmrc as cmrc
    from .multilingual_eval import drcd as drcd
    from .multilingual_eval import mlqa as mlqa
    from .ndeval_eval import ndeval as ndeval
    from .nq_eval import NqMetrics as NqMetrics
    from .nq_eval import nq as nq
    from .nq_eval import nq_examples as nq_examples
    from .nq_eval import nq_f1 as nq_f1
    from .quac_eval import QuacMetrics as QuacMetrics
    from .quac_eval import quac as quac
    from .ranking import Qrels as Qrels
    from .ranking import Run as Run
    from .ranking import evaluate as evaluate
    from .ranking import evaluate_runs as evaluate_runs
    from .squad_eval import squad as squad
    from .stream import AnswerMetrics as AnswerMetrics
    from .stream import RankingMetrics as RankingMetrics
    from .triviaqa_eval import TriviaqaMetrics as TriviaqaMetrics
    from .triviaqa_eval import triviaqa as triviaqa
    from .triviaqa_eval import triviaqa_per_question as triviaqa_per_question
    from .tydi_eval import tydi as tydi
    from .tydi_eval import tydi_by_language as tydi_by_language
    from .tydi_eval import tydi_questions as tydi_questions


def __getattr__(name: str) -> _typing.Any:
    import importlib

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
    return sorted(set(globals()) | set(_MODULE_OF))


__version__ = "0.1.0.dev0"

# Hidden from type checkers, which cannot read an __all__ that is computed: shown one, mypy
# takes every name for private (and `from qafast import *` gives none); shown none, they
# read the re-exports above.
if not _typing.TYPE_CHECKING:
    __all__ = sorted(["__version__", *_MODULE_OF])


class _RenamedModules:
    """Finds the modules that were renamed, under their old names (see ``_renamed.py``): a
    :class:`Comparison` pickled before ``qafast.compare`` became ``qafast.comparison`` names
    its class ``qafast.compare.Comparison``, and unpickling it imports that module. Here, not
    in ``_renamed.py``, so that ``import qafast`` loads no other module; last on
    ``sys.meta_path``, so that it is asked only about modules no other finder has."""

    OLD_NAMES = {f"{__name__}.compare": f"{__name__}.comparison"}

    def find_spec(self, name: str, path: object = None, target: object = None) -> _typing.Any:
        if name not in self.OLD_NAMES:
            return None
        from ._renamed import renamed_module_spec

        return renamed_module_spec(name, self.OLD_NAMES[name])


_sys.meta_path.append(_RenamedModules())
