"""What each measure family means and what the other tools call it: the data behind the docs'
measure reference.

Data only. The docs build (``docs/conf.py``) renders it; ``tests/test_docs_measures.py`` checks
that every name :func:`qafast.evaluate` accepts is listed under the family it computes, and that
every name listed here parses to that family, so the page cannot fall behind the parser
(``_measures.py``).

Name patterns use placeholders: ``k`` a positive integer cut-off, ``N`` a relevance level,
``r`` a recall point in [0, 1], ``p`` ranx's persistence digits (``rbp.95`` is p = 0.95).
Definitions are written for one query; R is the number of relevant documents in the qrels
(grade at least the relevance level), n the number of documents retrieved (after
``max_docs``), "relevant" means a grade at least the relevance level.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MeasureDoc:
    """One ranking-measure family of the kernels (a key of ``_measures.CODES``)."""

    family: str
    title: str
    group: str
    definition: str
    #: trec_eval's names: the family and, where it takes parameters, an example of them
    trec_eval: tuple[str, ...] = ()
    #: qafast's own spellings (``family@k``, ``hit@k``, ...)
    qafast: tuple[str, ...] = ()
    ranx: tuple[str, ...] = ()
    ir_measures: tuple[str, ...] = ()
    #: torchmetrics classes (``torchmetrics.retrieval``) that compute the same value
    torchmetrics: tuple[str, ...] = ()
    #: keys of AGREEMENT: the checks this family's numbers pass
    agrees: tuple[str, ...] = ()
    note: str = ""


#: How agreement is checked: key -> (tool, what is compared, where)
AGREEMENT = {
    "trec_eval": ("trec_eval 10.0", ("its own golden outputs reproduced byte for byte by "
                  "``qafast trec``"), "tests/test_trec_golden.py"),
    "pytrec_eval": ("pytrec_eval 0.5.11 (trec_eval 9.0.8)", ("every value, query by query, on "
                    "random tie-heavy runs"), "tests/test_ranking.py"),
    "ranx": ("ranx 0.3.21", "means on random tie-free graded runs", "tests/test_measure_names.py"),
    "ir_measures": ("ir_measures 0.4.3", ("means on random tie-free graded runs, missing queries "
                    "included"), "tests/test_measure_names.py"),
    "gdeval": ("ir_measures 0.4.3 (gdeval.pl)", ("per-query values to gdeval.pl's 5 printed "
               "decimals"), "tests/test_measure_names.py"),
    "torchmetrics": ("torchmetrics 1.9.0", ("means on random tie-free batches, within its "
                     "float32"), "tests/test_docs_measures.py"),
    "specification": ("the specification", ("``qafast.reference``, the plain-Python "
                      "definitions, on random tie-heavy runs"),
                      "tests/test_ranking_reference.py, tests/test_measure_names.py"),
}

_CUT = "trec_eval -m ``{0}.5,10`` gives ``{0}_5`` and ``{0}_10``; the default cut-offs are {1}."
_DEFAULT_CUTS = "5, 10, 15, 20, 30, 100, 200, 500, 1000"
_GAINS = ("The gain of a document is its grade unless ``family.grade=gain,...`` maps it "
          "(``ndcg.1=3,2=9``); the relevance level is ignored.")
_TREC = ("trec_eval", "pytrec_eval", "specification")

RANKING = (
    # -- counts ------------------------------------------------------------------------------
    MeasureDoc("num_ret", "Documents retrieved", "Counts",
               "n, the number of documents ranked for the query. Summed over queries.",
               trec_eval=("num_ret",), ir_measures=("NumRet",), agrees=_TREC + ("ir_measures",)),
    MeasureDoc("num_rel", "Relevant documents", "Counts",
               "R, the number of judged documents whose grade is at least the relevance "
               "level, retrieved or not. Summed over queries.",
               trec_eval=("num_rel",), ir_measures=("NumRel",),
               agrees=_TREC + ("ir_measures",),
               note="ir_measures' ``NumRel`` scores a qrels query missing from the run 0, "
                    "where trec_eval ``-c`` counts its R."),
    MeasureDoc("num_rel_ret", "Relevant documents retrieved", "Counts",
               "The number of ranked documents that are relevant. Summed over queries.",
               trec_eval=("num_rel_ret",),
               ir_measures=("NumRelRet", "NumRet(rel=N)"),
               agrees=_TREC + ("ir_measures",)),
    MeasureDoc("num_nonrel_judged_ret", "Judged non-relevant documents retrieved", "Counts",
               "The number of ranked documents judged below the relevance level. Summed "
               "over queries.",
               trec_eval=("num_nonrel_judged_ret",), agrees=_TREC),
    MeasureDoc("query_count", "Queries", "Counts",
               "1 for each query evaluated; the summary is the number of queries (0 for a "
               "qrels query missing from the run).",
               ir_measures=("NumQ",), agrees=("ir_measures", "specification"),
               note="trec_eval's ``num_q`` is printed by ``qafast trec`` and not returned by "
                    "``evaluate``."),
    # -- precision and recall ----------------------------------------------------------------
    MeasureDoc("P", "Precision at k", "Precision and recall",
               "(relevant documents in the top k) / k, also when fewer than k documents are "
               "ranked.",
               trec_eval=("P",), qafast=(),
               ranx=("precision@k",), ir_measures=("P@k", "P(rel=N)@k", "Precision@k"),
               torchmetrics=("RetrievalPrecision(top_k=k)",),
               agrees=_TREC + ("ranx", "ir_measures", "torchmetrics"),
               note=_CUT.format("P", _DEFAULT_CUTS)),
    MeasureDoc("recall", "Recall at k", "Precision and recall",
               "(relevant documents in the top k) / R; 0 when R = 0.",
               trec_eval=("recall",), qafast=(),
               ranx=("recall@k",), ir_measures=("R@k", "R(rel=N)@k", "Recall@k"),
               torchmetrics=("RetrievalRecall(top_k=k)",),
               agrees=_TREC + ("ranx", "ir_measures", "torchmetrics"),
               note=_CUT.format("recall", _DEFAULT_CUTS)),
    MeasureDoc("relative_P", "Relative precision at k", "Precision and recall",
               "(relevant documents in the top k) / min(k, R): precision up to rank R, recall "
               "after it; 0 when R = 0.",
               trec_eval=("relative_P",), qafast=("relative_P@k",),
               agrees=_TREC, note=_CUT.format("relative_P", _DEFAULT_CUTS)),
    MeasureDoc("Rprec", "R-precision", "Precision and recall",
               "(relevant documents in the top min(n, R)) / R: precision at rank R; 0 when n "
               "or R is 0.",
               trec_eval=("Rprec",), qafast=("r_precision",), ranx=("r-precision", "r-precision@k"),
               ir_measures=("Rprec", "RPrec"), torchmetrics=("RetrievalRPrecision()",),
               agrees=_TREC + ("ranx", "ir_measures", "torchmetrics"),
               note="ranx ignores a cut-off on ``r-precision``."),
    MeasureDoc("Rprec_mult", "Precision at multiples of R", "Precision and recall",
               "Precision at rank floor(x * R + 0.9), missing ranks counting as non-relevant; "
               "0 when that rank is 0.",
               trec_eval=("Rprec_mult",), agrees=_TREC,
               note="trec_eval -m ``Rprec_mult.0.5,2`` gives ``Rprec_mult_0.50`` and "
                    "``Rprec_mult_2.00``; the default multiples are 0.2, 0.4, ..., 2.0."),
    MeasureDoc("success", "Success at k", "Precision and recall",
               "1 if a relevant document is in the top k, else 0.",
               trec_eval=("success",), qafast=("hit@k", "hit", "success@k"),
               ranx=("hit_rate", "hit_rate@k"), ir_measures=("Success@k", "Success(rel=N)@k"),
               torchmetrics=("RetrievalHitRate(top_k=k)",),
               agrees=_TREC + ("ranx", "ir_measures", "torchmetrics"),
               note=_CUT.format("success", "1, 5, 10")),
    MeasureDoc("hits", "Relevant documents in the top k (a count)", "Precision and recall",
               "The number of relevant documents in the top k (the whole ranking without a "
               "cut-off), averaged over queries: ranx's ``hits``, not a hit rate.",
               ranx=("hits", "hits@k"), agrees=("ranx", "specification")),
    MeasureDoc("f1", "F1 at k", "Precision and recall",
               "2PR / (P + R) with P = hits@k / k and R = hits@k / R (k = n without a "
               "cut-off); 0 when no relevant document is in the top k.",
               ranx=("f1", "f1@k"), agrees=("ranx", "specification"),
               note="Without a cut-off it equals trec_eval's ``set_F``."),
    MeasureDoc("set_P", "Set precision", "Sets",
               "(relevant documents retrieved) / n; 0 when n = 0.",
               trec_eval=("set_P",), ranx=("precision",), ir_measures=("SetP",),
               agrees=_TREC + ("ranx", "ir_measures")),
    MeasureDoc("set_recall", "Set recall", "Sets",
               "(relevant documents retrieved) / R; 0 when R = 0.",
               trec_eval=("set_recall",), ranx=("recall@0", "recall-lN"), ir_measures=("SetR",),
               agrees=_TREC + ("ranx", "ir_measures"),
               note="ranx's ``recall`` without a cut-off is written ``recall@0`` here: bare "
                    "``recall`` is trec_eval's family."),
    MeasureDoc("set_relative_P", "Relative set precision", "Sets",
               "(relevant documents retrieved) / min(n, R); 0 when n or R is 0.",
               trec_eval=("set_relative_P",),
               ir_measures=("SetRelP", "SetP(relative=True)"),
               agrees=_TREC + ("ir_measures",)),
    MeasureDoc("set_map", "Set average precision", "Sets",
               "set_P * set_recall = (relevant retrieved)^2 / (n * R); 0 when n or R is 0.",
               trec_eval=("set_map",), ir_measures=("SetAP",),
               agrees=_TREC + ("ir_measures",)),
    MeasureDoc("set_F", "Set F-measure", "Sets",
               "(x + 1) * P * R / (x * P + R) over the retrieved set, x = 1 by default; 0 when "
               "no relevant document is retrieved. x multiplies P directly (it is van "
               "Rijsbergen's beta squared).",
               trec_eval=("set_F",), ir_measures=("SetF",),
               agrees=_TREC + ("ir_measures",),
               note="trec_eval -m ``set_F.0.5`` gives ``set_F_0.5``; ir_measures' "
                    "``SetF(beta=x)`` hands its beta to trec_eval's x."),
    MeasureDoc("utility", "Set utility", "Sets",
               "a * (relevant retrieved) + b * (non-relevant retrieved) + c * (relevant not "
               "retrieved) + d * (non-relevant not retrieved), coefficients (1, -1, 0, 0) by "
               "default.",
               trec_eval=("utility",), agrees=_TREC,
               note="trec_eval -m ``utility.2,-1,0,0`` sets the four coefficients."),
    # -- rank-based --------------------------------------------------------------------------
    MeasureDoc("map", "Average precision", "Ranks",
               "The sum over relevant ranked documents of the precision at their rank, divided "
               "by R (unretrieved relevant documents add 0); its mean is MAP.",
               trec_eval=("map",), ranx=("map",), ir_measures=("AP", "AP(rel=N)", "MAP"),
               torchmetrics=("RetrievalMAP()",),
               agrees=_TREC + ("ranx", "ir_measures", "torchmetrics")),
    MeasureDoc("map_cut", "Average precision at k", "Ranks",
               "The AP sum over the top k, divided by R (not by min(k, R)); 0 when R = 0.",
               trec_eval=("map_cut",), qafast=("map_cut@k",), ranx=("map@k",),
               ir_measures=("AP@k", "MAP@k"),
               agrees=_TREC + ("ranx", "ir_measures"),
               note=_CUT.format("map_cut", _DEFAULT_CUTS) + " torchmetrics' "
                    "``RetrievalMAP(top_k=k)`` divides by the relevant documents in the top k "
                    "instead, so it is not this measure."),
    MeasureDoc("gm_map", "Geometric mean average precision", "Ranks",
               "AP per query; the summary is the geometric mean, each AP floored at 1e-5. "
               "The per-query value returned is log(max(AP, 1e-5)), as pytrec_eval returns it.",
               trec_eval=("gm_map",), agrees=_TREC),
    MeasureDoc("recip_rank", "Reciprocal rank", "Ranks",
               "1 / the rank of the first relevant document; 0 if none is ranked. Its mean is "
               "MRR.",
               trec_eval=("recip_rank",), ranx=("mrr",), ir_measures=("RR", "RR(rel=N)", "MRR"),
               torchmetrics=("RetrievalMRR()",),
               agrees=_TREC + ("ranx", "ir_measures", "torchmetrics")),
    MeasureDoc("recip_rank_cut", "Reciprocal rank at k", "Ranks",
               "1 / the rank of the first relevant document within the top k, else 0; "
               "trec_eval's recip_rank under ``-M k``. Not a trec_eval measure.",
               trec_eval=("recip_rank_cut",), qafast=("recip_rank@k", "recip_rank_cut@k"),
               ranx=("mrr@k",), ir_measures=("RR@k", "MRR@k"),
               torchmetrics=("RetrievalMRR(top_k=k)",),
               agrees=("ranx", "ir_measures", "torchmetrics", "specification")),
    MeasureDoc("bpref", "Binary preference", "Ranks",
               "(1/R) times the sum over judged relevant ranked documents of "
               "1 - min(N_above, R) / min(N, R), where N_above counts the judged non-relevant "
               "documents ranked above it and N those in the qrels; 0 when R = 0.",
               trec_eval=("bpref",), ranx=("bpref", "bpref@k"), ir_measures=("Bpref", "BPref"),
               agrees=_TREC + ("ranx", "ir_measures"),
               note="ranx 0.3.21 agrees one query at a time; over several queries it scores 0 "
                    "the queries after one without a relevant document."),
    MeasureDoc("gm_bpref", "Geometric mean bpref", "Ranks",
               "bpref per query, summarised by the geometric mean (floored at 1e-5) as "
               "gm_map is.",
               trec_eval=("gm_bpref",), agrees=_TREC),
    MeasureDoc("infAP", "Inferred average precision", "Ranks",
               "AP estimated from a sampled judgment pool (Yilmaz and Aslam): documents with a "
               "negative grade count as pooled but unjudged; equals AP when every ranked "
               "document is judged.",
               trec_eval=("infAP",), ir_measures=("infAP",),
               agrees=_TREC + ("ir_measures",)),
    MeasureDoc("iprec_at_recall", "Interpolated precision at recall points", "Ranks",
               "The best precision at any rank from the one where round(r * R) relevant "
               "documents are retrieved on; 0 when fewer are retrieved.",
               trec_eval=("iprec_at_recall",), ir_measures=("IPrec@r",),
               agrees=_TREC + ("ir_measures",),
               note="trec_eval -m ``iprec_at_recall..25,.5`` gives ``iprec_at_recall_0.25`` "
                    "and ``iprec_at_recall_0.50``; the default points are 0, 0.1, ..., 1. "
                    "ir_measures' ``IPrec`` rounds the recall points as trec_eval 9.0.8 "
                    "(pytrec_eval) does: floor(r * R + 0.9)."),
    MeasureDoc("11pt_avg", "11-point interpolated average precision", "Ranks",
               "The mean of the interpolated precision at the given recall points (0, 0.1, "
               "..., 1 by default).",
               trec_eval=("11pt_avg",), agrees=_TREC),
    MeasureDoc("err", "Expected reciprocal rank", "Ranks",
               "The sum over the top k of r_i / i times the probability that no document above "
               "rank i satisfied the user, where a grade g > 0 satisfies with probability "
               "r = (2^g - 1) / 16 (grades up to 4, as gdeval.pl of the TREC Web track).",
               ir_measures=("ERR@k", "ERR"), agrees=("gdeval", "specification")),
    MeasureDoc("judged", "Judged share of the top k", "Ranks",
               "The share of the top min(k, n) ranked documents that the qrels hold, any "
               "grade; 0 when nothing is ranked.",
               ir_measures=("Judged@k", "Judged"), agrees=("ir_measures", "specification"),
               note="trec_eval's ``unj`` is its complement over k instead of min(k, n)."),
    MeasureDoc("unj", "Unjudged at k", "Ranks",
               "(documents in the top k that the qrels do not hold, or hold with a negative "
               "grade) / k, also when fewer than k are ranked.",
               trec_eval=("unj",), qafast=("unj@k",), agrees=("trec_eval", "specification"),
               note=_CUT.format("unj", "5, 10, 20") + " trec_eval 10.0 only: pytrec_eval "
                    "does not have it."),
    # -- gains -------------------------------------------------------------------------------
    MeasureDoc("ndcg", "nDCG", "Gains",
               "DCG / ideal DCG over the whole ranking, DCG = sum of gain_i / log2(i + 1); "
               "the ideal ranking sorts every judged document by gain. " + _GAINS,
               trec_eval=("ndcg",), ranx=("ndcg",), ir_measures=("nDCG", "NDCG"),
               torchmetrics=("RetrievalNormalizedDCG()",),
               agrees=_TREC + ("ranx", "ir_measures", "torchmetrics")),
    MeasureDoc("ndcg_cut", "nDCG at k", "Gains",
               "nDCG with both the ranking and the ideal ranking cut at k; the gains are the "
               "grades above 0 (no gain map); the relevance level is ignored.",
               trec_eval=("ndcg_cut",), qafast=("ndcg_cut@k",), ranx=("ndcg@k",),
               ir_measures=("nDCG@k", "NDCG@k"),
               torchmetrics=("RetrievalNormalizedDCG(top_k=k)",),
               agrees=_TREC + ("ranx", "ir_measures", "torchmetrics"),
               note=_CUT.format("ndcg_cut", _DEFAULT_CUTS)),
    MeasureDoc("ndcg_cut_exp", "nDCG at k with exponential gain", "Gains",
               "ndcg_cut with the gain 2^grade - 1 (Burges et al.) in the DCG and the ideal "
               "DCG. Not a trec_eval measure.",
               trec_eval=("ndcg_cut_exp",),
               qafast=("ndcg_exp@k", "ndcg_exp", "ndcg_cut_exp@k"),
               ranx=("ndcg_burges", "ndcg_burges@k"),
               ir_measures=("nDCG(dcg='exp-log2')@k",),
               agrees=("ranx", "gdeval", "specification")),
    MeasureDoc("graded_dcg", "DCG and nDCG with a relevance level", "Gains",
               "ranx's DCG: sum over the top k of gain / log2(rank + 1), the gain being the "
               "grade (``_burges``: 2^grade - 1) when the grade is at least the level given by "
               "``-lN`` (1 by default), else 0; the normalised forms divide by the DCG of the "
               "qrels' gains sorted best first and cut at k.",
               ranx=("dcg@k", "dcg-lN", "dcg_burges", "dcg_burges@k", "ndcg@k-lN", "ndcg-lN",
                     "ndcg_burges@k-lN", "ndcg_burges-lN"),
               agrees=("ranx", "specification"),
               note="Bare ``dcg`` is trec_eval's family; ``ndcg@k`` without ``-lN`` is "
                    "trec_eval's ndcg_cut, which never drops gains below a level."),
    MeasureDoc("dcg", "DCG", "Gains",
               "The DCG of ndcg, unnormalised. trec_eval 10.0 only. " + _GAINS,
               trec_eval=("dcg",), ranx=("dcg",), agrees=("ranx", "specification"),
               note="Checked against a trec_eval 10.0 binary by tests/fuzz_trec_eval.py, run "
                    "by hand (CI has no binary)."),
    MeasureDoc("ideal_dcg", "Ideal DCG", "Gains",
               "The ideal DCG of ndcg (it depends on the qrels alone). trec_eval 10.0 only.",
               trec_eval=("ideal_dcg",), agrees=("specification",)),
    MeasureDoc("ndcg_rel", "nDCG averaged over relevant documents", "Gains",
               "The mean of nDCG at each ideal relevant position: at the rank of each ranked "
               "document with a gain above 0, and at the end of the ranking for the others. "
               + _GAINS,
               trec_eval=("ndcg_rel",), agrees=_TREC),
    MeasureDoc("Rndcg", "nDCG averaged at R levels", "Gains",
               "The mean of nDCG sampled where the ideal ranking moves to a lower gain or ends "
               "(and at the end of a longer ranking). " + _GAINS,
               trec_eval=("Rndcg",), agrees=_TREC),
    MeasureDoc("G", "Normalised gain G", "Gains",
               "The sum over ranked documents of gain_i / log2(2 + C_i - S_i), S_i the gain "
               "gathered by rank i and C_i the ideal ranking's, divided by the total ideal "
               "gain. " + _GAINS,
               trec_eval=("G",), agrees=_TREC),
    MeasureDoc("binG", "Binary G", "Gains",
               "(1/R) times the sum over relevant ranked documents of "
               "1 / log2(2 + non-relevant documents ranked above it).",
               trec_eval=("binG",), agrees=_TREC),
    MeasureDoc("rbp", "Rank-biased precision", "Gains",
               "(1 - p) * sum of gain_i * p^(i - 1), p = 0.9 by default; gains outside [0, 1] "
               "are rescaled to (gain - min) / (max - min), so grades 0-4 count as grade / 4.",
               trec_eval=("rbp",), agrees=("trec_eval", "specification"),
               note="trec_eval -m ``rbp.p=0.8`` sets p. trec_eval 10.0 only."),
    MeasureDoc("rbp_resid", "Rank-biased precision residual", "Gains",
               "p^n + (1 - p) * the sum of p^(i - 1) over unjudged ranks i: how much RBP could "
               "rise if every unjudged document were fully relevant; 0 when every ranked "
               "document is judged.",
               trec_eval=("rbp_resid",), agrees=("trec_eval", "specification"),
               note="trec_eval 10.0 only."),
    MeasureDoc("rbp_graded", "Rank-biased precision on grades", "Gains",
               "(1 - p) * sum of grade_i * p^(i - 1) over ranked documents whose grade is at "
               "least the level (``-lN``, 1 by default): the raw grades, which trec_eval's rbp "
               "rescales.",
               ranx=("rbp.p", "rbp.p-lN", "rbp@p"), agrees=("ranx", "specification")),
)

#: Nicknames: several families at once, as trec_eval names them
NICKNAMES = {
    "official": "trec_eval's default set (what ``trec_eval`` prints without ``-m``).",
    "set": "The set measures: utility, set_P, set_recall, set_relative_P, set_map, set_F and "
           "the counts.",
    "all_trec": "Every trec_eval 10.0 measure except dcg and ideal_dcg.",
}


@dataclass(frozen=True)
class AnswerMetricDoc:
    """An answer metric (or a family of them) outside the ranking kernels."""

    name: str
    api: str
    definition: str
    reference: str
    checked: str


ANSWERS = (
    AnswerMetricDoc(
        "Exact match", ":func:`qafast.exact_match`, :class:`qafast.AnswerMetrics`",
        "1 when the normalised prediction equals a normalised gold answer, the best over the "
        "gold answers; SQuAD's normaliser lowercases and drops punctuation, articles and extra "
        "whitespace.",
        "The official SQuAD v1.1 and v2.0 scripts; MLQA's per-language, CMRC 2018's and DRCD's "
        "normalisers; PIAF's.",
        "The plain-Python specification against values worked out from the scripts' rules "
        "(tests/test_answers_reference.py); the kernels against the specification on random "
        "Unicode text and every code point (tests/test_answers.py, "
        "tests/test_answers_unicode.py)."),
    AnswerMetricDoc(
        "F1", ":func:`qafast.f1`, :func:`qafast.exact_match_and_f1`, "
        ":class:`qafast.AnswerMetrics`",
        "The harmonic mean of token precision and recall between the normalised prediction and "
        "a gold answer, the best over the gold answers; ``unit='char'`` counts characters and "
        "``unit='cmrc'`` the longest common substring; ``empty_rule`` picks SQuAD v1.1's or "
        "v2.0's treatment of empty answers.",
        "As for exact match.",
        "As for exact match."),
    AnswerMetricDoc(
        "SQuAD report", ":func:`qafast.squad`, ``qafast squad``",
        "The official scripts' output: ``exact_match`` and ``f1`` for v1.1; for v2.0 also "
        "``HasAns_*``/``NoAns_*``, the no-answer threshold search (``best_*``) and the "
        "precision-recall APs (``pr_*``), on a 0-100 scale.",
        "The official SQuAD v1.1 and v2.0 evaluation scripts; Hugging Face evaluate's "
        "``squad`` and ``squad_v2``.",
        "The v2.0 script's own output on test files (tests/test_squad_exact.py), Hugging Face "
        "evaluate's documented examples (tests/test_squad_hf.py), the specification on random "
        "datasets (tests/test_squad_reference.py)."),
    AnswerMetricDoc(
        "Factoid QA and BioASQ Phase B", ":func:`qafast.evaluate_factoid`, "
        ":func:`qafast.evaluate_bioasq`, ``qafast bioasq``",
        "Factoid strict accuracy (first answer right), lenient accuracy (a right answer in "
        "the top k) and MRR; list precision, recall and F-measure; yes/no accuracy and macro "
        "F1.",
        "The BioASQ Evaluation-Measures tool (Java), Phase B.",
        "The tool's printed output on odd inputs (tests/test_factoid.py), the specification "
        "on random documents."),
    AnswerMetricDoc(
        "Answer-sentence selection (NLPCC-DBQA)", ":func:`qafast.evaluate_dbqa`, "
        "``qafast dbqa``",
        "MRR and MAP of each question's candidate sentences ranked by score (ties keep the "
        "input order), Accuracy@N and averaged F1 at a score threshold.",
        "The NLPCC-DBQA task definition.",
        "Its worked example, the kernels against the specification (tests/test_dbqa.py)."),
    AnswerMetricDoc(
        "Open-ended commonsense answers (OpenCSR)", ":func:`qafast.evaluate_concepts`, "
        ":func:`qafast.hit_at_k`, :func:`qafast.recall_at_k`, ``qafast opencsr``",
        "Hit@K (a gold concept among the top K predicted) and Rec@K (the share of gold "
        "concepts among them); ``drfact=True`` counts K + 1 concepts as the published script "
        "does.",
        "The published OpenCSR / DrFact evaluation script.",
        "Values by hand, a transcription of the script's logic and the specification "
        "(tests/test_concepts.py)."),
    AnswerMetricDoc(
        "Event mentions in tweets", ":func:`qafast.event_mention_score`, "
        ":func:`qafast.tweet_score`, :func:`qafast.tw_events_score`, ``qafast events``",
        "The F1 of one label's tokens; a tweet's F1 over labels, each label counting its "
        "mention score as a true positive; the corpus mean of tweet scores.",
        "The definition's worked examples.",
        "Those examples and the specification (tests/test_events.py)."),
    AnswerMetricDoc(
        "Average precision from curves", ":func:`qafast.average_precision`, "
        ":func:`qafast.threshold_average_precision`, :func:`qafast.precision_recall_curve`, "
        "``qafast ap``",
        "``step``: the sum of precision times the recall increase at each distinct score; "
        "``voc``: PASCAL VOC's all-point interpolated AP (VOC2010 on); ``voc11``: VOC2007's "
        "mean interpolated precision at 11 recall points; ``coco``: COCO's, at 101 points.",
        "scikit-learn's ``average_precision_score`` (``step``); PASCAL VOC's and pycocotools' "
        "evaluation code.",
        "scikit-learn to the last bit; VOC and COCO against their steps transcribed in numpy "
        "(tests/test_curves.py)."),
)
