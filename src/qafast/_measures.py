"""The ranking-measure table: every family qafast computes, declared once.

Each :class:`Family` row says what a family is called in each tool, what parameters it
takes, how its per-query values are summarised, what the kernel reads, where trec_eval
prints it, which nicknames include it, which function of the plain-Python specification
defines it, and what the measure reference says of it. Everything else derives from the
table: the name parser (``_measure_parser``), the kernel's measure codes (``setup.py``
writes them into ``_measure_codes.pxi`` before Cython runs; :data:`CODES` gives the same
numbers here), the specification's registry (``qafast.reference.ranking``), the docs'
measure reference (``docs/_ext/measure_reference.py``), the command line's print order and
the tests (``tests/test_measure_table.py``).

This module imports nothing but the standard library: the build reads it without numpy.
Its rows are named tuples rather than dataclasses, as every command line reads this module
at start-up and a dataclass costs a millisecond and a half to define.

Adding a family is one row here, one branch of ``_one_measure`` in
``_ranking_kernels.pxi`` (testing the code ``M_<NAME>``), one function in
``qafast.reference.ranking`` and its tests; ``docs/adding-a-measure.md`` walks through it.

Name patterns use placeholders: ``k`` a positive integer cut-off, ``N`` a relevance level,
``r`` a recall point in [0, 1], ``p`` ranx's persistence digits (``rbp.95`` is p = 0.95).
Definitions are written for one query; R is the number of relevant documents in the qrels
(grade at least the relevance level), n the number of documents retrieved (after
``max_docs``), "relevant" means a grade at least the relevance level.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["AGREEMENT", "ANSWERS", "BY_NAME", "CODES", "DENSE", "FAMILIES", "GROUPS",
           "NICKNAMES", "NICKNAMES_V9", "NO_CUTOFF", "SUBTOPIC_FAMILIES", "TABLE",
           "TEXT_MEASURES", "TREC_ORDER", "V10_ONLY", "AnswerMetric", "Family", "Name",
           "kernel_constants"]

#: the tools whose names the parser reads (torchmetrics' classes are listed for the docs)
TOOLS = ("trec_eval", "qafast", "ranx", "ir_measures", "torchmetrics")


class Name(NamedTuple):
    """How one tool spells a family: a pattern in the tool's own syntax, with placeholders
    (``map@k``, ``AP(rel=N)@k``, ``rbp.p``, ``RetrievalMAP(top_k=k)``), and the parameters
    the spelling itself fixes."""

    tool: str
    text: str
    #: the family's float parameter, fixed by this spelling (ranx's DCG forms)
    x: float | None = None
    #: trec_eval 9.0.8's recall cut points (ir_measures' IPrec, which pytrec_eval computes)
    v9: bool = False


def _names(tool: str, texts: tuple[str, ...], **fixed) -> tuple[Name, ...]:
    return tuple(Name(tool, t, **fixed) for t in texts)


def qafast(*texts: str) -> tuple[Name, ...]:
    return _names("qafast", texts)


def ranx(*texts: str, x: float | None = None) -> tuple[Name, ...]:
    return _names("ranx", texts, x=x)


def ir(*texts: str, v9: bool = False) -> tuple[Name, ...]:
    return _names("ir_measures", texts, v9=v9)


def tm(*texts: str) -> tuple[Name, ...]:
    return _names("torchmetrics", texts)


class Family(NamedTuple):
    """One ranking-measure family.

    ``params`` is the kind of its parameters, ``defaults`` trec_eval's default for them:

    - ``"none"``: none;
    - ``"cut"``: sorted positive integer cut-offs, a column each, named ``family_k``
      (without one, the whole ranking);
    - ``"fcut"``: sorted float points, a column each, named ``family_%.2f``;
    - ``"floats"``: a list of floats, one column (``arity`` of them when it is fixed);
    - ``"pairs"``: ``level=gain`` pairs (and ``p=...`` where ``persistence``), one column.
    """

    name: str
    title: str
    group: str
    definition: str
    params: str = "none"
    defaults: tuple = ()
    #: how per-query values become one number: "mean", "sum" (counts) or "gm" (geometric)
    summary: str = "mean"
    #: reads each query's whole ranked grade list (else only its judged documents' ranks)
    dense: bool = False
    #: changes when a document judged non-relevant is treated as unjudged (the stream
    #: kernels skip non-relevant candidates unless a requested family reads them)
    reads_nonrelevant: bool = False
    #: "" for a branch of its own in the kernel; another family's name when that family's
    #: branch computes it (gm_map is map, logged); None: not a per-query number
    kernel: str | None = ""
    #: where the name comes from: trec_eval ("trec_eval"), qafast's own trec_eval-style
    #: family ("qafast"), or another tool's definition ("ranx", "ir_measures",
    #: "torchmetrics")
    origin: str = "trec_eval"
    #: the first trec_eval version that has it ("9.0.8" or "10.0")
    since: str = "9.0.8"
    #: trec_eval's nicknames that include it
    nicknames: tuple[str, ...] = ()
    #: the parameter count, where fixed (utility 4, set_F 1, relstring 1)
    arity: int | None = None
    #: ``p=...`` among its pairs (rbp, rbp_resid; its default is ``defaults[0]``)
    persistence: bool = False
    #: its pairs' gains are read (rbp_resid reads only p)
    gains: bool = True
    #: the relevance level it is measured at when its name sets none (ranx's graded names)
    level: int | None = None
    #: the highest grade it takes (ERR's gdeval.pl scale), else None
    max_grade: int | None = None
    #: what one query's value can be, whatever the input (saved states are checked against
    #: it): "count" (an int64 count), "ratio" (in [0, 1]: a ratio of counts, or c terms each
    #: at most 1 over a count of at least c), "rounded ratio" (at most 1 exactly, but a
    #: quotient of float sums: within [0, 2]), "log" (log(max(v, 1e-5)) of a ratio), "any";
    #: "... or nan" where an empty ranking or parameter list gives NaN
    values: str = "any"
    #: its function in ``qafast.reference.ranking``, the specification
    reference: str = ""
    #: its spellings in the other tools (trec_eval's is ``name`` itself)
    names: tuple[Name, ...] = ()
    #: keys of AGREEMENT: the checks its numbers pass
    agrees: tuple[str, ...] = ()
    note: str = ""
    #: what torchmetrics 1.9's class for it does with a relevant candidate scored 0 or less
    #: (Lightning-AI/torchmetrics PR #3104): "not relevant" (counted as grade 0, also in R)
    #: or "not retrieved" (ranked as grade 0, still counted in R); "" where it does nothing
    #: of the kind. ``RankingMetrics(torchmetrics_nonpositive=True)`` does the same
    torchmetrics_nonpositive: str = ""
    #: reads diversity qrels (a subtopic per judgment): computed with ndeval's rules by
    #: ``qafast.diversity`` from its own kernels, not by ``_one_measure`` (``kernel`` None)
    subtopics: bool = False

    def spelled(self, tool: str) -> tuple[str, ...]:
        """Its spellings in ``tool`` that the table lists (trec_eval's is its name)."""
        if tool == "trec_eval":
            return (self.name,) if self.origin in ("trec_eval", "qafast") else ()
        return tuple(n.text for n in self.names if n.tool == tool)


_DEPTHS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_RECALL_POINTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
_CUT = "trec_eval -m ``{0}.5,10`` gives ``{0}_5`` and ``{0}_10``; the default cut-offs are {1}."
_DEFAULT_CUTS = "5, 10, 15, 20, 30, 100, 200, 500, 1000"
_GAINS = ("The gain of a document is its grade unless ``family.grade=gain,...`` maps it "
          "(``ndcg.1=3,2=9``); the relevance level is ignored.")
_TREC = ("trec_eval", "pytrec_eval", "specification")
_OFFICIAL = ("official", "all_trec")
_SET = ("set", "all_trec")
_ALL = ("official", "set", "all_trec")
_DIV = ("pyndeval", "ndeval")
_DIV_CURVE = ("ndeval's value at k, in ndeval's collection-independent normalisation: the "
              "{}, divided by the same sum for a ranking whose every document is relevant to "
              "every subtopic with a relevant document; 0 for a query with none.")
_DIV_NOTE = ("Needs diversity qrels (``qafast.DiversityQrels``: a subtopic per judgment). "
             "Ties in score are ranked by document id ascending, as ir_measures' pyndeval "
             "provider ranks them; a document relevant to a subtopic has a grade of at "
             "least the relevance level.")

#: the C/W/L rows' shared text (ir_measures' cwl_eval provider)
_CWL_W = ("The expected utility per document of a C/W/L user model over ranks 1..1000 (the "
          "ranking cut or padded with gain 0 to 1000): the sum of W_i * gain_i, W_i being "
          "proportional to C_1 * ... * C_(i-1) and summing to 1. ")
_CWL_GAINS = ("A judged document's gain is (clip(max(grade, 0), min_rel, max_rel) - min_rel) "
              "/ (max_rel - min_rel), ``min_rel`` 0 by default and ``max_rel`` required; an "
              "unjudged one's is 0.")
_CWL_NOTE = "Computed as ir_measures' cwl_eval provider computes it, which requires max_rel."
_CWL_AGREES = ("cwl_eval", "specification")
#: the depth ir_measures' cwl_eval provider measures every ranking at (its rankings' max_n)
CWL_DEPTH = 1000

#: ranx's DCG forms, as the graded_dcg family's float parameter (flags)
DCG_EXP, DCG_NORMALISED = 1, 2
#: "no cut-off" (k = None) for the families that read k as the whole ranking: larger than
#: any ranking, and than any cut-off a name may give
NO_CUTOFF = 2**62
#: set in a column's kernel code: the column is measured with the unjudged documents dropped
#: from each ranking (ir_measures' ``judged_only=True`` on one measure); above every code
JUDGED_ONLY_FLAG = 1 << 16
#: the largest relevance grade qafast takes (the gain tables are sized by the largest grade)
MAX_GRADE = 1_000_000

#: The families, in trec_eval 10.0's measure order (measures.c: the order ``trec_eval``
#: prints them in), then qafast's own trec_eval-style families, then the other tools'
#: definitions that no trec_eval measure gives.
TABLE: tuple[Family, ...] = (
    # -- trec_eval ---------------------------------------------------------------------------
    Family("runid", "Run id", "Counts", "The run's tag (its sixth column); printed, not a "
           "number.", kernel=None, nicknames=_ALL),
    Family("num_q", "Queries evaluated", "Counts", "The number of queries evaluated; "
           "printed by ``qafast trec``, not returned per query.", summary="sum", kernel=None,
           nicknames=_ALL, reference="_num_q"),
    Family("num_ret", "Documents retrieved", "Counts",
           "n, the number of documents ranked for the query. Summed over queries.",
           summary="sum", nicknames=_ALL, values="count", reference="_num_ret", names=ir("NumRet"),
           agrees=_TREC + ("ir_measures",)),
    Family("num_rel", "Relevant documents", "Counts",
           "R, the number of judged documents whose grade is at least the relevance level, "
           "retrieved or not. Summed over queries.",
           summary="sum", nicknames=_ALL, values="count", reference="_num_rel", names=ir("NumRel"),
           agrees=_TREC + ("ir_measures",),
           note="ir_measures' ``NumRel`` scores a qrels query missing from the run 0, where "
                "trec_eval ``-c`` counts its R."),
    Family("num_rel_ret", "Relevant documents retrieved", "Counts",
           "The number of ranked documents that are relevant. Summed over queries.",
           summary="sum", nicknames=_ALL, values="count", reference="_num_rel_ret",
           names=ir("NumRelRet", "NumRet(rel=N)"), agrees=_TREC + ("ir_measures",)),
    Family("map", "Average precision", "Ranks",
           "The sum over relevant ranked documents of the precision at their rank, divided by "
           "R (unretrieved relevant documents add 0); its mean is MAP.",
           nicknames=_OFFICIAL, values="ratio", reference="_map",
           names=ranx("map") + ir("AP", "AP(rel=N)", "MAP") + tm("RetrievalMAP()"),
           agrees=_TREC + ("ranx", "ir_measures", "torchmetrics"),
           torchmetrics_nonpositive="not relevant"),
    Family("gm_map", "Geometric mean average precision", "Ranks",
           "AP per query; the summary is the geometric mean, each AP floored at 1e-5. The "
           "per-query value returned is log(max(AP, 1e-5)), as pytrec_eval returns it.",
           summary="gm", kernel="map", nicknames=_OFFICIAL, values="log", reference="_gm_map",
           agrees=_TREC),
    Family("Rprec", "R-precision", "Precision and recall",
           "(relevant documents in the top min(n, R)) / R: precision at rank R; 0 when n or R "
           "is 0.",
           nicknames=_OFFICIAL, values="ratio", reference="_rprec",
           names=(qafast("r_precision") + ranx("r-precision", "r-precision@k")
                  + ir("Rprec", "RPrec") + tm("RetrievalRPrecision()")),
           agrees=_TREC + ("ranx", "ir_measures", "torchmetrics"),
           note="ranx ignores a cut-off on ``r-precision``."),
    Family("bpref", "Binary preference", "Ranks",
           "(1/R) times the sum over judged relevant ranked documents of "
           "1 - min(N_above, R) / min(N, R), where N_above counts the judged non-relevant "
           "documents ranked above it and N those in the qrels; 0 when R = 0.",
           reads_nonrelevant=True, nicknames=_OFFICIAL, values="ratio", reference="_bpref",
           names=ranx("bpref", "bpref@k") + ir("Bpref", "BPref"),
           agrees=_TREC + ("ranx", "ir_measures"),
           note="ranx 0.3.21 agrees one query at a time; over several queries it scores 0 the "
                "queries after one without a relevant document."),
    Family("recip_rank", "Reciprocal rank", "Ranks",
           "1 / the rank of the first relevant document; 0 if none is ranked. Its mean is "
           "MRR.",
           nicknames=_OFFICIAL, values="ratio", reference="_recip_rank",
           names=ranx("mrr") + ir("RR", "RR(rel=N)", "MRR") + tm("RetrievalMRR()"),
           agrees=_TREC + ("ranx", "ir_measures", "torchmetrics"),
           torchmetrics_nonpositive="not relevant"),
    Family("iprec_at_recall", "Interpolated precision at recall points", "Ranks",
           "The best precision at any rank from the one where round(r * R) relevant documents "
           "are retrieved on; 0 when fewer are retrieved.",
           params="fcut", defaults=_RECALL_POINTS, dense=True, nicknames=_OFFICIAL,
           values="ratio or nan", reference="_iprec_at_recall", names=ir("IPrec@r", v9=True),
           agrees=_TREC + ("ir_measures",),
           note="trec_eval -m ``iprec_at_recall..25,.5`` gives ``iprec_at_recall_0.25`` and "
                "``iprec_at_recall_0.50``; the default points are 0, 0.1, ..., 1. ir_measures' "
                "``IPrec`` rounds the recall points as trec_eval 9.0.8 (pytrec_eval) does: "
                "floor(r * R + 0.9)."),
    Family("P", "Precision at k", "Precision and recall",
           "(relevant documents in the top k) / k, also when fewer than k documents are "
           "ranked.",
           params="cut", defaults=_DEPTHS, nicknames=_OFFICIAL,
           values="ratio", reference="_precision",
           names=(ranx("precision@k") + ir("P@k", "P(rel=N)@k", "Precision@k")
                  + tm("RetrievalPrecision(top_k=k)")),
           agrees=_TREC + ("ranx", "ir_measures", "torchmetrics"),
           note=_CUT.format("P", _DEFAULT_CUTS), torchmetrics_nonpositive="not relevant"),
    Family("relstring", "Relevance string", "Counts",
           "The grades of the top 10 (or the given number of) ranked documents as a string; "
           "printed, not a number.",
           params="floats", defaults=(10.0,), arity=1, kernel=None, nicknames=("all_trec",),
           reference="_relstring"),
    Family("recall", "Recall at k", "Precision and recall",
           "(relevant documents in the top k) / R; 0 when R = 0.",
           params="cut", defaults=_DEPTHS, nicknames=("all_trec",),
           values="ratio", reference="_recall",
           names=(ranx("recall@k") + ir("R@k", "R(rel=N)@k", "Recall@k")
                  + tm("RetrievalRecall(top_k=k)")),
           agrees=_TREC + ("ranx", "ir_measures", "torchmetrics"),
           note=_CUT.format("recall", _DEFAULT_CUTS), torchmetrics_nonpositive="not retrieved"),
    Family("infAP", "Inferred average precision", "Ranks",
           "AP estimated from a sampled judgment pool (Yilmaz and Aslam): documents with a "
           "negative grade count as pooled but unjudged; equals AP when every ranked document "
           "is judged.",
           reads_nonrelevant=True, nicknames=("all_trec",),
           values="rounded ratio", reference="_infap",
           names=ir("infAP"), agrees=_TREC + ("ir_measures",)),
    Family("gm_bpref", "Geometric mean bpref", "Ranks",
           "bpref per query, summarised by the geometric mean (floored at 1e-5) as gm_map is.",
           summary="gm", kernel="bpref", reads_nonrelevant=True, nicknames=("all_trec",),
           values="log", reference="_gm_bpref", agrees=_TREC),
    Family("Rprec_mult", "Precision at multiples of R", "Precision and recall",
           "Precision at rank floor(x * R + 0.9), missing ranks counting as non-relevant; 0 "
           "when that rank is 0.",
           params="fcut", defaults=(0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0),
           dense=True, nicknames=("all_trec",),
           values="ratio", reference="_rprec_mult", agrees=_TREC,
           note="trec_eval -m ``Rprec_mult.0.5,2`` gives ``Rprec_mult_0.50`` and "
                "``Rprec_mult_2.00``; the default multiples are 0.2, 0.4, ..., 2.0."),
    Family("utility", "Set utility", "Sets",
           "a * (relevant retrieved) + b * (non-relevant retrieved) + c * (relevant not "
           "retrieved) + d * (non-relevant not retrieved), coefficients (1, -1, 0, 0) by "
           "default.",
           params="floats", defaults=(1.0, -1.0, 0.0, 0.0), arity=4, nicknames=_SET,
           reference="_utility", agrees=_TREC,
           note="trec_eval -m ``utility.2,-1,0,0`` sets the four coefficients."),
    Family("11pt_avg", "11-point interpolated average precision", "Ranks",
           "The mean of the interpolated precision at the given recall points (0, 0.1, ..., 1 "
           "by default).",
           params="floats", defaults=_RECALL_POINTS, dense=True, nicknames=("all_trec",),
           values="ratio or nan", reference="_11pt_avg", agrees=_TREC),
    Family("binG", "Binary G", "Gains",
           "(1/R) times the sum over relevant ranked documents of "
           "1 / log2(2 + non-relevant documents ranked above it).",
           nicknames=("all_trec",), values="ratio", reference="_bin_g", agrees=_TREC),
    Family("G", "Normalised gain G", "Gains",
           "The sum over ranked documents of gain_i / log2(2 + C_i - S_i), S_i the gain "
           "gathered by rank i and C_i the ideal ranking's, divided by the total ideal gain. "
           + _GAINS,
           params="pairs", dense=True, nicknames=("all_trec",), reference="_g", agrees=_TREC),
    Family("dcg", "DCG", "Gains",
           "The DCG of ndcg, unnormalised. trec_eval 10.0 only. " + _GAINS,
           params="pairs", dense=True, since="10.0", reference="_dcg", names=ranx("dcg"),
           agrees=("ranx", "specification"),
           note="Checked against a trec_eval 10.0 binary by tests/fuzz_trec_eval.py, run by "
                "hand (CI has no binary)."),
    Family("ideal_dcg", "Ideal DCG", "Gains",
           "The ideal DCG of ndcg (it depends on the qrels alone). trec_eval 10.0 only.",
           params="pairs", dense=True, since="10.0", reference="_ideal_dcg",
           agrees=("specification",)),
    Family("ndcg", "nDCG", "Gains",
           "DCG / ideal DCG over the whole ranking, DCG = sum of gain_i / log2(i + 1); the "
           "ideal ranking sorts every judged document by gain. " + _GAINS,
           params="pairs", dense=True, nicknames=("all_trec",),
           values="rounded ratio", reference="_ndcg",
           names=ranx("ndcg") + ir("nDCG", "NDCG") + tm("RetrievalNormalizedDCG()"),
           agrees=_TREC + ("ranx", "ir_measures", "torchmetrics")),
    Family("ndcg_rel", "nDCG averaged over relevant documents", "Gains",
           "The mean of nDCG at each ideal relevant position: at the rank of each ranked "
           "document with a gain above 0, and at the end of the ranking for the others. "
           + _GAINS,
           params="pairs", dense=True, nicknames=("all_trec",),
           values="rounded ratio", reference="_ndcg_rel",
           agrees=_TREC),
    Family("Rndcg", "nDCG averaged at R levels", "Gains",
           "The mean of nDCG sampled where the ideal ranking moves to a lower gain or ends "
           "(and at the end of a longer ranking). " + _GAINS,
           params="pairs", dense=True, nicknames=("all_trec",), reference="_rndcg",
           agrees=_TREC),
    Family("ndcg_cut", "nDCG at k", "Gains",
           "nDCG with both the ranking and the ideal ranking cut at k; the gains are the "
           "grades above 0 (no gain map); the relevance level is ignored.",
           params="cut", defaults=_DEPTHS, nicknames=("all_trec",),
           values="rounded ratio", reference="_ndcg_cut",
           names=(ranx("ndcg@k") + ir("nDCG@k", "NDCG@k")
                  + tm("RetrievalNormalizedDCG(top_k=k)")),
           agrees=_TREC + ("ranx", "ir_measures", "torchmetrics"),
           note=_CUT.format("ndcg_cut", _DEFAULT_CUTS)),
    Family("map_cut", "Average precision at k", "Ranks",
           "The AP sum over the top k, divided by R (not by min(k, R)); 0 when R = 0.",
           params="cut", defaults=_DEPTHS, nicknames=("all_trec",),
           values="ratio", reference="_map_cut",
           names=ranx("map@k") + ir("AP@k", "MAP@k"),
           agrees=_TREC + ("ranx", "ir_measures"),
           note=_CUT.format("map_cut", _DEFAULT_CUTS) + " torchmetrics' "
                "``RetrievalMAP(top_k=k)`` divides by the relevant documents in the top k "
                "instead, so it is not this measure."),
    Family("relative_P", "Relative precision at k", "Precision and recall",
           "(relevant documents in the top k) / min(k, R): precision up to rank R, recall "
           "after it; 0 when R = 0.",
           params="cut", defaults=_DEPTHS, nicknames=("all_trec",),
           values="ratio", reference="_relative_p",
           agrees=_TREC,
           note=_CUT.format("relative_P", _DEFAULT_CUTS)),
    Family("success", "Success at k", "Precision and recall",
           "1 if a relevant document is in the top k, else 0.",
           params="cut", defaults=(1, 5, 10), nicknames=("all_trec",),
           values="ratio", reference="_success",
           names=(qafast("hit@k", "hit") + ranx("hit_rate", "hit_rate@k")
                  + ir("Success@k", "Success(rel=N)@k") + tm("RetrievalHitRate(top_k=k)")),
           agrees=_TREC + ("ranx", "ir_measures", "torchmetrics"),
           note=_CUT.format("success", "1, 5, 10")),
    Family("set_P", "Set precision", "Sets",
           "(relevant documents retrieved) / n; 0 when n = 0.",
           nicknames=_SET, values="ratio", reference="_set_p", names=ranx("precision") + ir("SetP"),
           agrees=_TREC + ("ranx", "ir_measures")),
    Family("set_relative_P", "Relative set precision", "Sets",
           "(relevant documents retrieved) / min(n, R); 0 when n or R is 0.",
           nicknames=_SET, values="ratio", reference="_set_relative_p",
           names=ir("SetRelP", "SetP(relative=True)"), agrees=_TREC + ("ir_measures",)),
    Family("set_recall", "Set recall", "Sets",
           "(relevant documents retrieved) / R; 0 when R = 0.",
           nicknames=_SET, values="ratio", reference="_set_recall",
           names=ranx("recall@0", "recall-lN") + ir("SetR"),
           agrees=_TREC + ("ranx", "ir_measures"),
           note="ranx's ``recall`` without a cut-off is written ``recall@0`` here: bare "
                "``recall`` is trec_eval's family."),
    Family("set_map", "Set average precision", "Sets",
           "set_P * set_recall = (relevant retrieved)^2 / (n * R); 0 when n or R is 0.",
           nicknames=_SET, values="ratio", reference="_set_map", names=ir("SetAP"),
           agrees=_TREC + ("ir_measures",)),
    Family("set_F", "Set F-measure", "Sets",
           "(x + 1) * P * R / (x * P + R) over the retrieved set, x = 1 by default; 0 when no "
           "relevant document is retrieved. x multiplies P directly (it is van Rijsbergen's "
           "beta squared).",
           params="floats", defaults=(1.0,), arity=1, nicknames=_SET, reference="_set_f",
           names=ir("SetF"), agrees=_TREC + ("ir_measures",),
           note="trec_eval -m ``set_F.0.5`` gives ``set_F_0.5``; ir_measures' "
                "``SetF(beta=x)`` hands its beta to trec_eval's x."),
    Family("num_nonrel_judged_ret", "Judged non-relevant documents retrieved", "Counts",
           "The number of ranked documents judged below the relevance level. Summed over "
           "queries.",
           summary="sum", reads_nonrelevant=True, nicknames=("all_trec",),
           values="count", reference="_num_nonrel_judged_ret", agrees=_TREC),
    Family("yaap", "Yet another average precision", "Ranks",
           "log((1 + s) / (1 + R - s)), s the sum over relevant ranked documents of the "
           "precision at their rank (AP's sum before it is divided by R): Robertson's "
           "smoothed AP (ECIR 2012), negative when s < R / 2. trec_eval 10.0 only; in no "
           "nickname.",
           since="10.0", reference="_yaap", agrees=("trec_eval", "specification"),
           note="trec_eval 10.0 only: pytrec_eval does not have it."),
    Family("rbp", "Rank-biased precision", "Gains",
           "(1 - p) * sum of gain_i * p^(i - 1), p = 0.9 by default; gains outside [0, 1] are "
           "rescaled to (gain - min) / (max - min), so grades 0-4 count as grade / 4.",
           params="pairs", defaults=(0.9,), persistence=True, dense=True, since="10.0",
           nicknames=("all_trec",), reference="_rbp", agrees=("trec_eval", "specification"),
           note="trec_eval -m ``rbp.p=0.8`` sets p. trec_eval 10.0 only."),
    Family("rbp_resid", "Rank-biased precision residual", "Gains",
           "p^n + (1 - p) * the sum of p^(i - 1) over unjudged ranks i: how much RBP could "
           "rise if every unjudged document were fully relevant; 0 when every ranked document "
           "is judged.",
           params="pairs", defaults=(0.9,), persistence=True, gains=False, dense=True,
           reads_nonrelevant=True,
           since="10.0", nicknames=("all_trec",), reference="_rbp_resid",
           agrees=("trec_eval", "specification"), note="trec_eval 10.0 only."),
    Family("unj", "Unjudged at k", "Ranks",
           "(documents in the top k that the qrels do not hold, or hold with a negative "
           "grade) / k, also when fewer than k are ranked.",
           params="cut", defaults=(5, 10, 20), reads_nonrelevant=True, since="10.0",
           nicknames=("all_trec",), values="ratio", reference="_unj",
           agrees=("trec_eval", "specification"),
           note=_CUT.format("unj", "5, 10, 20") + " trec_eval 10.0 only: pytrec_eval does "
                "not have it."),
    # -- qafast's own, named and parameterised as trec_eval's --------------------------------
    Family("recip_rank_cut", "Reciprocal rank at k", "Ranks",
           "1 / the rank of the first relevant document within the top k, else 0; "
           "trec_eval's recip_rank under ``-M k``. Not a trec_eval measure.",
           params="cut", defaults=(10,), origin="qafast",
           values="ratio", reference="_recip_rank_cut",
           names=(qafast("recip_rank@k") + ranx("mrr@k")
                  + ir("RR@k", "MRR@k") + tm("RetrievalMRR(top_k=k)")),
           agrees=("ranx", "ir_measures", "torchmetrics", "specification"),
           torchmetrics_nonpositive="not relevant"),
    Family("ndcg_cut_exp", "nDCG at k with exponential gain", "Gains",
           "ndcg_cut with the gain 2^grade - 1 (Burges et al.) in the DCG and the ideal DCG. "
           "Not a trec_eval measure.",
           params="cut", defaults=(10,), origin="qafast",
           values="rounded ratio or nan", reference="_ndcg_cut_exp",
           names=(qafast("ndcg_exp@k", "ndcg_exp")
                  + ranx("ndcg_burges", "ndcg_burges@k") + ir("nDCG(dcg='exp-log2')@k")),
           agrees=("ranx", "gdeval", "specification")),
    # -- the other tools' definitions that no trec_eval measure gives -------------------------
    Family("hits", "Relevant documents in the top k (a count)", "Precision and recall",
           "The number of relevant documents in the top k (the whole ranking without a "
           "cut-off), averaged over queries: ranx's ``hits``, not a hit rate.",
           params="cut", origin="ranx",
           values="count", reference="_hits", names=ranx("hits", "hits@k"),
           agrees=("ranx", "specification")),
    Family("f1", "F1 at k", "Precision and recall",
           "2PR / (P + R) with P = hits@k / k and R = hits@k / R (k = n without a cut-off); 0 "
           "when no relevant document is in the top k.",
           params="cut", origin="ranx",
           values="rounded ratio", reference="_f1", names=ranx("f1", "f1@k"),
           agrees=("ranx", "specification"),
           note="Without a cut-off it equals trec_eval's ``set_F``."),
    Family("graded_dcg", "DCG and nDCG with a relevance level", "Gains",
           "ranx's DCG: sum over the top k of gain / log2(rank + 1), the gain being the grade "
           "(``_burges``: 2^grade - 1) when the grade is at least the level given by ``-lN`` "
           "(1 by default), else 0; the normalised forms divide by the DCG of the qrels' gains "
           "sorted best first and cut at k.",
           params="cut", origin="ranx", level=1, reference="_graded_dcg",
           names=(ranx("dcg@k", "dcg-lN", x=0)
                  + ranx("dcg_burges", "dcg_burges@k", x=DCG_EXP)
                  + ranx("ndcg@k-lN", "ndcg-lN", x=DCG_NORMALISED)
                  + ranx("ndcg_burges@k-lN", "ndcg_burges-lN", x=DCG_NORMALISED | DCG_EXP)),
           agrees=("ranx", "specification"),
           note="Bare ``dcg`` is trec_eval's family; ``ndcg@k`` without ``-lN`` is trec_eval's "
                "ndcg_cut, which never drops gains below a level."),
    Family("rbp_graded", "Rank-biased precision on grades", "Gains",
           "(1 - p) * sum of grade_i * p^(i - 1) over ranked documents whose grade is at "
           "least the level (``-lN``, 1 by default): the raw grades, which trec_eval's rbp "
           "rescales.",
           origin="ranx", level=1, reference="_rbp_graded",
           names=ranx("rbp.p", "rbp.p-lN", "rbp@p"), agrees=("ranx", "specification")),
    Family("judged", "Judged share of the top k", "Ranks",
           "The share of the top min(k, n) ranked documents that the qrels hold, any grade; 0 "
           "when nothing is ranked.",
           params="cut", reads_nonrelevant=True, origin="ir_measures",
           values="ratio", reference="_judged",
           names=ir("Judged@k", "Judged"), agrees=("ir_measures", "specification"),
           note="trec_eval's ``unj`` is its complement over k instead of min(k, n)."),
    Family("err", "Expected reciprocal rank", "Ranks",
           "The sum over the top k of r_i / i times the probability that no document above "
           "rank i satisfied the user, where a grade g > 0 satisfies with probability "
           "r = (2^g - 1) / 16 (grades up to 4, as gdeval.pl of the TREC Web track).",
           params="cut", origin="ir_measures", max_grade=4, values="rounded ratio",
           reference="_err",
           names=ir("ERR@k", "ERR"), agrees=("gdeval", "specification")),
    Family("fallout", "Fall-out at k", "Precision and recall",
           "(non-relevant documents in the top k) / (non-relevant documents ranked), a "
           "document being non-relevant when it is unjudged or graded below the relevance "
           "level; 0 when every ranked document is relevant.",
           params="cut", origin="torchmetrics", values="ratio", reference="_fallout",
           names=qafast("fallout@k", "fallout") + tm("RetrievalFallOut(top_k=k)"),
           agrees=("torchmetrics", "specification"),
           note="torchmetrics' ``RetrievalFallOut`` class scores a query without a "
                "non-relevant candidate 1 by default (``empty_target_action='pos'``); qafast "
                "gives it 0, as torchmetrics' ``retrieval_fall_out`` function does."),
    Family("auroc", "Area under the ROC curve within the top k", "Ranks",
           "Among the top min(k, n) ranked documents, the share of (relevant, non-relevant) "
           "pairs that rank the relevant document higher, a document being non-relevant when "
           "it is unjudged or graded below the relevance level; 0 when the top k holds no "
           "relevant or no non-relevant document.",
           params="cut", origin="torchmetrics", values="ratio", reference="_auroc",
           names=qafast("auroc@k", "auroc") + tm("RetrievalAUROC(top_k=k)"),
           agrees=("torchmetrics", "specification"),
           note="Ties are broken as for every qafast measure (score, then document id), where "
                "torchmetrics' ``RetrievalAUROC`` gives a tied (relevant, non-relevant) pair "
                "half a pair; its ``max_fpr`` (partial AUC) is not offered."),
    Family("adaptive_P", "Precision at k, k at most the ranking's length", "Precision and recall",
           "(relevant documents in the top k) / min(k, n); 0 when nothing is ranked.",
           params="cut", origin="torchmetrics", values="ratio", reference="_adaptive_precision",
           names=(qafast("adaptive_P@k", "adaptive_P")
                  + tm("RetrievalPrecision(top_k=k, adaptive_k=True)")),
           agrees=("torchmetrics", "specification"),
           torchmetrics_nonpositive="not relevant",
           note="torchmetrics' ``adaptive_k=True``: a query with fewer than k documents is "
                "measured at its length, where ``P@k`` divides by k."),
    Family("accuracy", "Accuracy: relevant ranked above non-relevant", "Ranks",
           "Among the top min(k, n) ranked documents (the whole ranking without a cut-off), "
           "1 - (the (relevant, non-relevant) pairs ranked non-relevant first) / (pairs): the "
           "share of pairs ranked relevant first. A document is relevant when its grade is at "
           "least the relevance level, an unjudged document counting as grade 0 (so it is "
           "relevant at level 0). 0 when the top k holds no relevant document; 1 when it holds "
           "relevant documents and no non-relevant one.",
           params="cut", reads_nonrelevant=True, origin="ir_measures", values="ratio",
           reference="_accuracy",
           names=ir("Accuracy@k", "Accuracy", "Accuracy(rel=N)@k", "Accuracy(rel=N)"),
           agrees=("ir_measures_accuracy", "specification"),
           note="ir_measures' accuracy provider gives no value for a query without a relevant "
                "document in the top k, and averages over the queries it gives one; qafast "
                "scores such a query 0 and averages over every query, as for every other "
                "measure (its ir_measures provider gives ir_measures' values and mean). Where "
                "the top k holds no non-relevant document the provider divides by zero; qafast "
                "gives 1. Ties are ranked as for every qafast measure (score, then document id "
                "descending), where the provider keeps the run's order among equal scores. "
                "``rel`` below 0 is refused."),
    Family("compat", "Compatibility", "Ranks",
           "Clarke et al.'s compatibility: the rank-biased overlap (persistence p, 0.95 by "
           "default) of the ranking with the ideal one to depth max(n, G), G the documents "
           "graded above 0 (whatever the relevance level): sum over depths d of "
           "p^(d - 1) * (documents in both top-d lists) / d, over the sum of p^(d - 1); "
           "divided by the same overlap of the ideal ranking with itself. The ideal ranking "
           "sorts the documents graded above 0 by grade, equal grades in the ranking's order, "
           "unranked ones last; 0 when G = 0.",
           defaults=(0.95,), arity=1, origin="ir_measures", values="rounded ratio",
           reference="_compat", names=ir("Compat"), agrees=("ir_measures", "specification"),
           note="ir_measures breaks ties of grade in the ideal ranking by score, an unranked "
                "document counting as scored 0, where qafast ranks it after every ranked one; "
                "the two agree unless scores are 0 or less."),
    Family("compat_raw", "Compatibility, not normalised", "Ranks",
           "compat without the division by the ideal ranking's overlap with itself: below 1 "
           "even for the ideal ranking when it is finite.",
           defaults=(0.95,), arity=1, origin="ir_measures", values="rounded ratio",
           reference="_compat_raw", names=ir("Compat(normalize=False)"),
           agrees=("ir_measures", "specification")),
    Family("query_count", "Queries", "Counts",
           "1 for each query evaluated; the summary is the number of queries (0 for a qrels "
           "query missing from the run).",
           summary="sum", origin="ir_measures",
           values="count", reference="_query_count", names=ir("NumQ"),
           agrees=("ir_measures", "specification"),
           note="trec_eval's ``num_q`` is printed by ``qafast trec`` and not returned by "
                "``evaluate``."),
    # -- diversity (ir_measures' pyndeval names, computed with ndeval's rules) -------------
    Family("ERR_IA", "Intent-aware expected reciprocal rank at k", "Diversity",
           _DIV_CURVE.format("sum over ranks i <= k of (sum over subtopics s of the document's "
                             "relevance to s times (1 - alpha)^(documents above it relevant to "
                             "s)) / i, with alpha 0.5"),
           params="cut", origin="ir_measures", kernel=None, subtopics=True,
           names=ir("ERR_IA@k", "ERR_IA(rel=N)@k"), agrees=_DIV, note=_DIV_NOTE),
    Family("nERR_IA", "Normalised intent-aware expected reciprocal rank at k", "Diversity",
           "ERR_IA@k divided by the ERR_IA@k of ndeval's greedy ideal ranking of the judged "
           "documents; 0 when alpha-DCG@k is 0.",
           params="cut", origin="ir_measures", kernel=None, subtopics=True,
           names=ir("nERR_IA@k", "nERR_IA(rel=N)@k"), agrees=_DIV, note=_DIV_NOTE),
    Family("alpha_DCG", "alpha-DCG at k", "Diversity",
           _DIV_CURVE.format("sum over ranks i <= k of (sum over subtopics s of the document's "
                             "relevance to s times (1 - alpha)^(documents above it relevant to "
                             "s)) / log2(i + 1)"),
           params="cut", origin="ir_measures", kernel=None, subtopics=True,
           names=ir("alpha_DCG@k", "alpha_DCG(rel=N)@k", "α_DCG@k"),
           agrees=_DIV, note=_DIV_NOTE),
    Family("alpha_nDCG", "alpha-nDCG at k", "Diversity",
           "alpha_DCG@k divided by the alpha_DCG@k of ndeval's greedy ideal ranking of the "
           "judged documents; 0 when alpha_DCG@k is 0.",
           params="cut", origin="ir_measures", kernel=None, subtopics=True,
           names=ir("alpha_nDCG@k", "alpha_nDCG(rel=N)@k", "α_nDCG@k"), agrees=_DIV, note=_DIV_NOTE),
    Family("NRBP", "Novelty- and rank-biased precision", "Diversity",
           "(1 - (1 - alpha) beta) / S times the sum over the whole ranking of beta^(i - 1) "
           "times the document's alpha-discounted gain (as alpha_DCG's), S the number of "
           "subtopics with a relevant document; alpha and beta 0.5.",
           origin="ir_measures", kernel=None, subtopics=True,
           names=ir("NRBP", "NRBP(rel=N)"), agrees=_DIV,
           note=_DIV_NOTE),
    Family("nNRBP", "Normalised novelty- and rank-biased precision", "Diversity",
           "NRBP divided by the NRBP of ndeval's greedy ideal ranking (0 / 0 is NaN, as in "
           "ndeval).",
           origin="ir_measures", kernel=None, subtopics=True,
           names=ir("nNRBP", "nNRBP(rel=N)"), agrees=_DIV,
           note=_DIV_NOTE),
    Family("AP_IA", "Intent-aware average precision", "Diversity",
           "The mean over the subtopics with a relevant document of the average precision "
           "of the ranking for that subtopic alone (R: the subtopic's relevant documents).",
           origin="ir_measures", kernel=None, subtopics=True,
           names=ir("AP_IA", "MAP_IA", "AP_IA(rel=N)"), agrees=_DIV, note=_DIV_NOTE),
    Family("P_IA", "Intent-aware precision at k", "Diversity",
           "(the (document, subtopic) relevant pairs in the top k) / (k S), S the number of "
           "subtopics with a relevant document.",
           params="cut", origin="ir_measures", kernel=None, subtopics=True,
           names=ir("P_IA@k", "P_IA(rel=N)@k"), agrees=_DIV, note=_DIV_NOTE),
    Family("StRecall", "Subtopic recall at k", "Diversity",
           "(the subtopics with a relevant document in the top k) / S, S the number of "
           "subtopics with a relevant document.",
           params="cut", origin="ir_measures", kernel=None, subtopics=True,
           names=ir("StRecall@k", "StRecall(rel=N)@k"), agrees=_DIV, note=_DIV_NOTE),
    # -- the C/W/L user models ir_measures takes from cwl_eval (its cwl_eval provider) ------
    Family("cwl_rbp", "Rank-biased precision (C/W/L)", "Gains",
           _CWL_W + "C_i = p (0.8 by default); the gain is 1 for a document graded at least "
           "``rel`` (a negative grade counting 0), else 0.",
           defaults=(0.8,), reads_nonrelevant=True, origin="ir_measures",
           values="rounded ratio", reference="_cwl_rbp", names=ir("RBP(rel=N)"),
           agrees=_CWL_AGREES,
           note="ir_measures' cwl_eval provider requires ``rel``: ``RBP(rel=1, p=0.8)``. "
                "trec_eval's ``rbp`` (graded, over the ranking alone) is another measure."),
    Family("cwl_bpm", "Bejeweled player model (static)", "Gains",
           _CWL_W + "C_i = 1 while the gain summed to rank i is below T (1 by default) and "
           "i < K (the cut-off), then 0. " + _CWL_GAINS,
           params="cut", defaults=(1.0,), reads_nonrelevant=True, origin="ir_measures",
           values="rounded ratio", reference="_cwl_bpm", names=ir("BPM(max_rel=N)@k"),
           agrees=_CWL_AGREES, note=_CWL_NOTE),
    Family("cwl_sdcg", "Scaled DCG at k", "Gains",
           _CWL_W + "C_i = log2(i + 1) / log2(i + 2) for i < k, then 0: DCG@k divided by the "
           "DCG of k documents of gain 1. " + _CWL_GAINS,
           params="cut", reads_nonrelevant=True, origin="ir_measures",
           values="rounded ratio", reference="_cwl_sdcg", names=ir("SDCG(max_rel=N)@k"),
           agrees=_CWL_AGREES, note=_CWL_NOTE),
    Family("cwl_nerr8", "Nearly expected reciprocal rank, eq. 8", "Gains",
           _CWL_W + "C_i = 1 - gain_i for i < k, then 0. " + _CWL_GAINS,
           params="cut", reads_nonrelevant=True, origin="ir_measures",
           values="rounded ratio", reference="_cwl_nerr8", names=ir("NERR8(max_rel=N)@k"),
           agrees=_CWL_AGREES, note=_CWL_NOTE),
    Family("cwl_nerr9", "Nearly expected reciprocal rank, eq. 9", "Gains",
           _CWL_W + "C_i = i / (i + 1) * (1 - gain_i) for i < k, then 0. " + _CWL_GAINS,
           params="cut", reads_nonrelevant=True, origin="ir_measures",
           values="rounded ratio", reference="_cwl_nerr9", names=ir("NERR9(max_rel=N)@k"),
           agrees=_CWL_AGREES, note=_CWL_NOTE),
    Family("cwl_nerr10", "Nearly expected reciprocal rank, eq. 10", "Gains",
           _CWL_W + "C_i = p * (1 - gain_i), p = 0.9 by default. " + _CWL_GAINS,
           defaults=(0.9,), reads_nonrelevant=True, origin="ir_measures",
           values="rounded ratio", reference="_cwl_nerr10", names=ir("NERR10(max_rel=N)"),
           agrees=_CWL_AGREES, note=_CWL_NOTE),
    Family("cwl_nerr11", "Nearly expected reciprocal rank, eq. 11", "Gains",
           _CWL_W + "C_i = ((i + 2T - 1) / (i + 2T))^2 * (1 - gain_i), T = 1 by default. "
           + _CWL_GAINS,
           defaults=(1.0,), reads_nonrelevant=True, origin="ir_measures",
           values="rounded ratio", reference="_cwl_nerr11", names=ir("NERR11(max_rel=N)"),
           agrees=_CWL_AGREES, note=_CWL_NOTE),
    Family("cwl_inst", "INST", "Gains",
           _CWL_W + "C_i = ((i + T + T_i - 1) / (i + T + T_i))^2, T_i = T minus the gain "
           "summed to rank i, T = 1 by default. " + _CWL_GAINS,
           defaults=(1.0,), reads_nonrelevant=True, origin="ir_measures",
           values="rounded ratio", reference="_cwl_inst", names=ir("INST(max_rel=N)"),
           agrees=_CWL_AGREES, note=_CWL_NOTE),
    Family("cwl_insq", "INSQ", "Gains",
           _CWL_W + "C_i = ((i + 2T - 1) / (i + 2T))^2, T = 1 by default. " + _CWL_GAINS,
           defaults=(1.0,), reads_nonrelevant=True, origin="ir_measures",
           values="rounded ratio", reference="_cwl_insq", names=ir("INSQ(max_rel=N)"),
           agrees=_CWL_AGREES, note=_CWL_NOTE),
)

BY_NAME: dict[str, Family] = {f.name: f for f in TABLE}

#: the kernel's measure code of each family with a per-query number: the position of the
#: family whose branch computes it among those with a branch of their own
_BRANCHES = tuple(f.name for f in TABLE if f.kernel == "")
CODES: dict[str, int] = {f.name: _BRANCHES.index(f.kernel or f.name) for f in TABLE
                         if f.kernel is not None}

#: trec_eval's families, in the order it prints them
TREC_ORDER = tuple(f.name for f in TABLE if f.origin == "trec_eval")
#: the families named as trec_eval names them (``map``, ``P.5``, ``P_5``): trec_eval's and
#: qafast's own
FAMILIES: dict[str, Family] = {f.name: f for f in TABLE if f.origin in ("trec_eval", "qafast")}
#: trec_eval's nicknames and their families, in trec_eval's order
NICKNAMES: dict[str, tuple[str, ...]] = {
    nick: tuple(f.name for f in TABLE if nick in f.nicknames)
    for nick in ("official", "set", "all_trec")}

#: the families that are not per-query numbers: the command line prints them, evaluate()
#: does not return them
TEXT_MEASURES = frozenset(f.name for f in TABLE if f.kernel is None and not f.subtopics)
#: the families that read diversity qrels' subtopics (qafast.diversity computes them)
SUBTOPIC_FAMILIES = frozenset(f.name for f in TABLE if f.subtopics)
#: the families that read each query's whole ranked grade list
DENSE = frozenset(f.name for f in TABLE if f.dense)
#: trec_eval 10.0's families that 9.0.8 (pytrec_eval) lacks
V10_ONLY = frozenset(f.name for f in TABLE if f.origin == "trec_eval" and f.since == "10.0")
#: the nicknames as trec_eval 9.0.8 has them
NICKNAMES_V9 = {nick: tuple(f for f in fams if f not in V10_ONLY)
                for nick, fams in NICKNAMES.items()}

#: the measure reference's sections, in order
GROUPS = ("Counts", "Precision and recall", "Sets", "Ranks", "Gains", "Diversity")

#: what each nickname is, for the docs
NICKNAME_DOCS = {
    "official": "trec_eval's default set (what ``trec_eval`` prints without ``-m``).",
    "set": "The set measures: utility, set_P, set_recall, set_relative_P, set_map, set_F and "
           "the counts.",
    "all_trec": "Every trec_eval 10.0 measure except dcg and ideal_dcg.",
}

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
    "torchmetrics": ("torchmetrics 1.9.0", ("means on random tie-free batches of positive "
                     "scores, within its float32; on logits with ties too, with "
                     "``torchmetrics_nonpositive=True`` where its rule for scores of 0 or "
                     "less applies"),
                     "tests/test_docs_measures.py, tests/test_integrations_torchmetrics.py"),
    "specification": ("the specification", ("``qafast.reference``, the plain-Python "
                      "definitions, on random tie-heavy runs"),
                      "tests/test_ranking_reference.py, tests/test_measure_names.py"),
    "pyndeval": ("ir_measures 0.4.3's pyndeval provider (pyndeval 0.0.8, ndeval's C code)",
                 ("every value, query by query, to the last bit, on random tie-heavy "
                  "diversity qrels and runs"), "tests/test_diversity_measures.py"),
    "ndeval": ("qafast.ndeval (ndeval 4.5's output, byte for byte)",
               "every value, query by query, to the last bit", "tests/test_diversity_measures.py"),
    "ir_measures_accuracy": ("ir_measures 0.4.3's accuracy provider", ("every value it gives, "
                             "query by query, to the last bit, on random tie-heavy runs "
                             "listing tied documents in qafast's order"),
                             "tests/test_accuracy_measure.py"),
    "cwl_eval": ("ir_measures 0.4.3's cwl_eval provider (cwl-eval 1.0.12)", ("per-query values "
                 "on random tie-free graded runs, missing queries included, within 1e-12 (cwl "
                 "sums W . gains with numpy's BLAS dot, qafast in rank order)"),
                 "tests/test_cwl_measures.py"),
}


def kernel_constants() -> str:
    """The Cython source of what the kernel takes from the table (``setup.py`` writes it to
    ``_measure_codes.pxi``): a code ``M_<NAME>`` for each family with a branch of its own
    in ``_one_measure``, and the parameters' constants."""
    lines = ["# Generated by setup.py from the measure table (_measures.py): do not edit.",
             "", "# the families' codes, one per branch of _one_measure", "cdef enum:"]
    lines += [f"    M_{name.upper()} = {CODES[name]}" for name in _BRANCHES]
    lines += ["", "# k = None: the whole ranking",
              f"cdef int64_t NO_CUTOFF = {NO_CUTOFF}",
              "# the flags of graded_dcg, in its float parameter",
              f"cdef int DCG_EXP = {DCG_EXP}", f"cdef int DCG_NORMALISED = {DCG_NORMALISED}",
              "# ERR's grade scale: gdeval.pl's $MAX_JUDGMENT (the Python layer refuses higher)",
              f"cdef double ERR_MAX_GRADE = {float(BY_NAME['err'].max_grade or 0)}",
              "# a column measured with the unjudged documents dropped (its code has it set)",
              f"cdef int JUDGED_ONLY_FLAG = {JUDGED_ONLY_FLAG}"]
    lines += ["# the depth of ir_measures' cwl_eval provider's rankings (the C/W/L rows)",
              f"cdef enum:\n    CWL_DEPTH = {CWL_DEPTH}"]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------------
# Answer metrics, for the measure reference


class AnswerMetric(NamedTuple):
    """An answer metric (or a family of them) outside the ranking kernels."""

    name: str
    api: str
    definition: str
    reference: str
    checked: str


ANSWERS = (
    AnswerMetric(
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
    AnswerMetric(
        "F1", ":func:`qafast.f1`, :func:`qafast.exact_match_and_f1`, "
        ":class:`qafast.AnswerMetrics`",
        "The harmonic mean of token precision and recall between the normalised prediction and "
        "a gold answer, the best over the gold answers; ``unit='char'`` counts characters and "
        "``unit='cmrc'`` the longest common substring; ``empty_rule`` picks SQuAD v1.1's or "
        "v2.0's treatment of empty answers.",
        "As for exact match.",
        "As for exact match."),
    AnswerMetric(
        "SQuAD report", ":func:`qafast.squad`, ``qafast squad``",
        "The official scripts' output: ``exact_match`` and ``f1`` for v1.1; for v2.0 also "
        "``HasAns_*``/``NoAns_*``, the no-answer threshold search (``best_*``) and the "
        "precision-recall APs (``pr_*``), on a 0-100 scale.",
        "The official SQuAD v1.1 and v2.0 evaluation scripts; Hugging Face evaluate's "
        "``squad`` and ``squad_v2``.",
        "The v2.0 script's own output on test files (tests/test_squad_exact.py), Hugging Face "
        "evaluate's documented examples (tests/test_squad_hf.py), the specification on random "
        "datasets (tests/test_squad_reference.py)."),
    AnswerMetric(
        "Factoid QA and BioASQ Phase B", ":func:`qafast.evaluate_factoid`, "
        ":func:`qafast.evaluate_bioasq`, ``qafast bioasq``",
        "Factoid strict accuracy (first answer right), lenient accuracy (a right answer in "
        "the top k) and MRR; list precision, recall and F-measure; yes/no accuracy and macro "
        "F1.",
        "The BioASQ Evaluation-Measures tool (Java), Phase B.",
        "The tool's printed output on odd inputs (tests/test_factoid.py), the specification "
        "on random documents."),
    AnswerMetric(
        "Answer-sentence selection (NLPCC-DBQA)", ":func:`qafast.evaluate_dbqa`, "
        "``qafast dbqa``",
        "MRR and MAP of each question's candidate sentences ranked by score (ties keep the "
        "input order), Accuracy@N and averaged F1 at a score threshold.",
        "The NLPCC-DBQA task definition.",
        "Its worked example, the kernels against the specification (tests/test_dbqa.py)."),
    AnswerMetric(
        "Open-ended commonsense answers (OpenCSR)", ":func:`qafast.evaluate_concepts`, "
        ":func:`qafast.hit_at_k`, :func:`qafast.recall_at_k`, ``qafast opencsr``",
        "Hit@K (a gold concept among the top K predicted) and Rec@K (the share of gold "
        "concepts among them); ``drfact=True`` counts K + 1 concepts as the published script "
        "does.",
        "The published OpenCSR / DrFact evaluation script.",
        "Values by hand, a transcription of the script's logic and the specification "
        "(tests/test_concepts.py)."),
    AnswerMetric(
        "Event mentions in tweets", ":func:`qafast.event_mention_score`, "
        ":func:`qafast.tweet_score`, :func:`qafast.tw_events_score`, ``qafast events``",
        "The F1 of one label's tokens; a tweet's F1 over labels, each label counting its "
        "mention score as a true positive; the corpus mean of tweet scores.",
        "The definition's worked examples.",
        "Those examples and the specification (tests/test_events.py)."),
    AnswerMetric(
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
