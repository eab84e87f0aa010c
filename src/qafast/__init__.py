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
- in the training loop: :class:`RankingMetrics`, :class:`AnswerMetrics` (``update`` /
  ``compute`` / ``merge``), and ``qafast.integrations`` for torch.distributed, Hugging Face
  and torchmetrics.
"""

from .answers import exact_match, exact_match_and_f1, f1, reader_metrics, retriever_metrics
from .compat import (
    RelevanceEvaluator,
    compute_aggregated_measure,
    parse_qrel,
    parse_run,
    supported_measures,
    supported_nicknames,
)
from .compare import Comparison, compare, plot_precision_recall, to_frame
from .concepts import evaluate_concepts, hit_at_k, recall_at_k
from .curves import (
    average_precision,
    precision_recall_curve,
    threshold_average_precision,
    threshold_precision_recall,
)
from .dbqa import evaluate_dbqa, evaluate_dbqa_file
from .events import event_mention_score, tw_events_score, tweet_score
from .factoid import evaluate_bioasq, evaluate_factoid
from .ranking import Qrels, Run, evaluate, evaluate_runs
from .squad import squad
from .stream import AnswerMetrics, RankingMetrics

__version__ = "0.1.0.dev0"

__all__ = [
    "AnswerMetrics",
    "Comparison",
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
