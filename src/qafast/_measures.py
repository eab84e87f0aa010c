"""The ranking-measure registry and the one parser for every way a user names a measure.

A request such as ``"P.5,10"``, ``"ndcg_cut_10"``, ``"ndcg@10"`` or ``"all_trec"`` becomes a
list of :class:`Column`: one output value per query, with the kernel code and parameters that
compute it and the rule that summarises it over queries.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .errors import InputError, InputTypeError, MeasureError

# Kernel measure codes (``_ranking_kernels.pxi``).
CODES = {
    "num_ret": 0, "num_rel": 1, "num_rel_ret": 2, "num_nonrel_judged_ret": 3, "map": 4,
    "Rprec": 5, "bpref": 6, "recip_rank": 7, "iprec_at_recall": 8, "P": 9, "recall": 10,
    "infAP": 11, "Rprec_mult": 12, "utility": 13, "11pt_avg": 14, "binG": 15, "G": 16,
    "dcg": 17, "ideal_dcg": 18, "ndcg": 19, "ndcg_rel": 20, "Rndcg": 21, "ndcg_cut": 22,
    "map_cut": 23, "relative_P": 24, "success": 25, "set_P": 26, "set_relative_P": 27,
    "set_recall": 28, "set_map": 29, "set_F": 30, "rbp": 31, "rbp_resid": 32, "unj": 33,
    "recip_rank_cut": 34, "ndcg_cut_exp": 35,
    # computed from other columns: gm_map from map, gm_bpref from bpref
    "gm_map": 4, "gm_bpref": 6,
    # ranx's and ir_measures' definitions that no trec_eval measure gives; reached only
    # through those tools' names (parse_measure), never as trec_eval names
    "hits": 36, "f1": 37, "graded_dcg": 38, "rbp_graded": 39, "judged": 40, "err": 41,
    "query_count": 42,
}

#: trec_eval 10.0's measure order (measures.c): the CLI prints measures in this order.
TREC_ORDER = (
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
    "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "infAP", "gm_bpref",
    "Rprec_mult", "utility", "11pt_avg", "binG", "G", "dcg", "ideal_dcg", "ndcg", "ndcg_rel",
    "Rndcg", "ndcg_cut", "map_cut", "relative_P", "success", "set_P", "set_relative_P",
    "set_recall", "set_map", "set_F", "num_nonrel_judged_ret", "rbp", "rbp_resid", "unj",
    # qafast's own, after trec_eval's
    "recip_rank_cut", "ndcg_cut_exp",
)

NICKNAMES = {
    "official": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec",
                 "bpref", "recip_rank", "iprec_at_recall", "P"),
    "set": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P",
            "set_recall", "set_relative_P", "set_map", "set_F"),
    "all_trec": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec",
                 "bpref", "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "infAP",
                 "gm_bpref", "Rprec_mult", "utility", "11pt_avg", "binG", "G", "ndcg",
                 "ndcg_rel", "Rndcg", "ndcg_cut", "map_cut", "relative_P", "success", "set_P",
                 "set_relative_P", "set_recall", "set_map", "set_F", "num_nonrel_judged_ret",
                 "rbp", "rbp_resid", "unj"),
}
#: trec_eval 9.0.8 (inside pytrec_eval) has no dcg, ideal_dcg, rbp, rbp_resid, unj.
NICKNAMES_V9 = {
    name: tuple(m for m in fams if m not in ("rbp", "rbp_resid", "unj", "dcg", "ideal_dcg"))
    for name, fams in NICKNAMES.items()
}
V10_ONLY = frozenset({"rbp", "rbp_resid", "unj", "dcg", "ideal_dcg"})

_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
# family -> (kind, default parameters)
#   cut: sorted positive integer cutoffs, one column each, named family_k
#   fcut: sorted float points, one column each, named family_%.2f
#   pairs: "level=gain" pairs (and p=... for rbp), one column
#   floats: a float list, one column
#   none: no parameter
FAMILIES: dict[str, tuple[str, Any]] = {
    "runid": ("none", None), "num_q": ("none", None), "num_ret": ("none", None),
    "num_rel": ("none", None), "num_rel_ret": ("none", None), "map": ("none", None),
    "gm_map": ("none", None), "Rprec": ("none", None), "bpref": ("none", None),
    "recip_rank": ("none", None),
    "iprec_at_recall": ("fcut", (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)),
    "P": ("cut", _CUTOFFS), "relstring": ("floats", (10.0,)), "recall": ("cut", _CUTOFFS),
    "infAP": ("none", None), "gm_bpref": ("none", None),
    "Rprec_mult": ("fcut", (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)),
    "utility": ("floats", (1.0, -1.0, 0.0, 0.0)),
    "11pt_avg": ("floats", (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)),
    "binG": ("none", None), "G": ("pairs", ()), "dcg": ("pairs", ()), "ideal_dcg": ("pairs", ()),
    "ndcg": ("pairs", ()), "ndcg_rel": ("pairs", ()), "Rndcg": ("pairs", ()),
    "ndcg_cut": ("cut", _CUTOFFS), "map_cut": ("cut", _CUTOFFS),
    "relative_P": ("cut", _CUTOFFS), "success": ("cut", (1, 5, 10)), "set_P": ("none", None),
    "set_relative_P": ("none", None), "set_recall": ("none", None), "set_map": ("none", None),
    "set_F": ("floats", (1.0,)), "num_nonrel_judged_ret": ("none", None),
    "rbp": ("pairs", ()), "rbp_resid": ("pairs", ()), "unj": ("cut", (5, 10, 20)),
    "recip_rank_cut": ("cut", (10,)), "ndcg_cut_exp": ("cut", (10,)),
}
SUMMED = frozenset({"num_q", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret",
                    "query_count"})
GEOMETRIC = frozenset({"gm_map", "gm_bpref"})
INTEGER_VALUED = SUMMED
#: Measures that read each query's whole ranked grade list; the others read only the ranks
#: and grades of its judged documents, or counts.
DENSE = frozenset({"iprec_at_recall", "11pt_avg", "Rprec_mult", "G", "dcg", "ideal_dcg", "ndcg",
                   "ndcg_rel", "Rndcg", "rbp", "rbp_resid"})
#: Not numbers, or not per query: the CLI prints them, evaluate() does not return them.
TEXT_MEASURES = frozenset({"runid", "num_q", "relstring"})

_NO_CUTOFF = 2**62  # "k = None": larger than any ranking


@dataclass(frozen=True)
class Column:
    """One per-query value: its output name, the family computing it and its parameters."""

    name: str
    family: str
    k: int = 0
    x: float = 0.0
    keys: tuple[int, ...] = ()
    values: tuple[float, ...] = ()
    order: tuple[int, float] = field(default=(0, 0.0), compare=False)
    #: relevance level of this column alone (ranx's ``-lN``, ir_measures' ``rel=``); None:
    #: the evaluation's
    rel: int | None = None
    #: trec_eval 9.0.8's recall cut points for iprec_at_recall (ir_measures' IPrec, which
    #: pytrec_eval computes)
    v9: bool = False
    #: whose definition the name asked for: "trec_eval", "ranx" or "ir_measures". For the
    #: last two a qrels query missing from the run scores 0 in every column, as those tools
    #: give it, where trec_eval -c ranks a placeholder document for it.
    tool: str = "trec_eval"

    @property
    def code(self) -> int:
        return CODES[self.family]

    @property
    def aggregate(self) -> str:
        if self.family in SUMMED:
            return "sum"
        if self.family in GEOMETRIC:
            return "gm"
        return "mean"

class UnknownMeasureError(MeasureError):
    """A measure name that no family, alias or nickname matches, or malformed parameters."""


def _leading_int(text: str, measure: str) -> int:
    m = re.match(r"\s*[+-]?\d+", text)
    if not m:
        raise UnknownMeasureError(f"measure {measure!r}: cutoff {text!r} is not an integer")
    value = int(m.group())
    if value > _NO_CUTOFF:
        raise UnknownMeasureError(f"measure {measure!r}: cutoff {value} is too large (at most "
                                  "2**62)")
    return value


def _float(text: str, measure: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise UnknownMeasureError(
            f"measure {measure!r}: parameter {text!r} is not a number") from None


def _columns_for(family: str, params: str | None, measure: str, *, explicit_name: str | None = None
                 ) -> list[Column]:
    kind, default = FAMILIES[family]
    rank = TREC_ORDER.index(family)
    if kind == "cut":
        if params is None:
            cuts = list(default)
        else:
            cuts = [_leading_int(p, measure) for p in params.split(",") if p != ""]
            if not cuts:
                raise UnknownMeasureError(f"measure {measure!r}: no cutoff given")
            if any(c <= 0 for c in cuts):
                raise UnknownMeasureError(f"measure {measure!r}: cutoffs must be positive")
            if len(set(cuts)) != len(cuts):
                raise UnknownMeasureError(f"measure {measure!r}: a cutoff is repeated")
            cuts.sort()
        return [Column(explicit_name or f"{family}_{c}", family, k=c, order=(rank, c))
                for c in cuts]
    if kind == "fcut":
        if params is None:
            points = list(default)
        else:
            points = sorted(_float(p, measure) for p in params.split(",") if p != "")
            if not points:
                raise UnknownMeasureError(f"measure {measure!r}: no parameter given")
        return [Column(explicit_name or f"{family}_{p:.2f}", family, x=p, order=(rank, p))
                for p in points]
    if kind == "floats":
        values = tuple(default) if params is None else tuple(
            _float(p, measure) for p in params.split(",") if p != "")
        if family == "utility" and len(values) != 4:
            raise UnknownMeasureError(f"measure {measure!r}: utility takes 4 coefficients")
        if family in ("set_F", "relstring") and len(values) != 1:
            raise UnknownMeasureError(f"measure {measure!r}: {family} takes one parameter")
        name = explicit_name or (family if params is None else f"{family}_{params}")
        x = values[0] if family in ("set_F", "relstring") else 0.0
        return [Column(name, family, x=x, values=values, order=(rank, 0))]
    if kind == "pairs":
        keys: list[int] = []
        gains: list[float] = []
        p = 0.9
        if params:
            for item in params.split(","):
                lhs, sep, rhs = item.partition("=")
                if not sep:
                    raise UnknownMeasureError(
                        f"measure {measure!r}: parameter {item!r} is not name=value")
                if family in ("rbp", "rbp_resid") and lhs == "p":
                    p = _float(rhs, measure)
                elif re.fullmatch(r"[+-]?\d+", lhs):
                    if family == "rbp_resid":
                        continue
                    keys.append(int(lhs))
                    gains.append(_float(rhs, measure))
                else:
                    raise UnknownMeasureError(
                        f"measure {measure!r}: {lhs!r} is not a relevance level")
        name = explicit_name or (family if not params else f"{family}_{params}")
        return [Column(name, family, x=p if family in ("rbp", "rbp_resid") else 0.0,
                       keys=tuple(keys), values=tuple(gains), order=(rank, 0))]
    if params:
        raise UnknownMeasureError(f"measure {measure!r}: {family} takes no parameter")
    return [Column(explicit_name or family, family, order=(rank, 0))]


# Names of the other tools. Each maps to a trec_eval column where the tool's definition is
# trec_eval's (on tie-free runs), and to one of qafast's own families where it is not.
# Names are matched exactly, case included, as each tool matches them.

#: qafast's own @k names (trec_eval definitions): name -> (family with k, family without k)
_AT_ALIASES = {
    "hit": ("success", "success"),
    "ndcg_exp": ("ndcg_cut_exp", "ndcg_cut_exp"),
    "recip_rank": ("recip_rank_cut", None),
    "r_precision": (None, "Rprec"),
}
#: families whose one cut-off is all there is: "family@k" is family_k (a trec_eval name)
_CUT_FAMILIES = tuple(f for f, (kind, _) in FAMILIES.items() if kind == "cut")

#: ranx 0.3.21's metric names (ranx.metrics.metric_switch), in its order
_RANX_NAMES = ("hits", "hit_rate", "precision", "recall", "f1", "r-precision", "mrr", "map",
               "dcg", "dcg_burges", "ndcg", "ndcg_burges", "bpref", "rbp")
_RANX = re.compile(r"(hits|hit_rate|precision|recall|f1|r-precision|mrr|map|dcg_burges|dcg|"
                   r"ndcg_burges|ndcg|bpref)(?:@(\d+))?(?:-l([+-]?\d+))?")
_RANX_RBP = re.compile(r"rbp[.@](\d+)(?:-l([+-]?\d+))?")
#: the flags of the graded_dcg family (its float parameter)
_DCG_EXP, _DCG_NORMALISED = 1, 2
#: ranx names whose gains are grades: like trec_eval's nDCG, they ignore the evaluation's
#: relevance level (ranx's default level, 1, applies unless the name has -lN)
_RANX_GRADED = frozenset({"dcg", "dcg_burges", "ndcg", "ndcg_burges", "rbp"})

#: ir_measures 0.4.3's measures qafast computes: name -> (the parameter @ sets,
#: {parameter: type}, required parameters)
# name: (the parameter @k sets, {parameter: type}, required parameters)
_IR_MEASURES: dict[str, tuple[str, dict[str, type], tuple[str, ...]]] = {
    "AP": ("cutoff", {"cutoff": int, "rel": int, "judged_only": bool}, ()),
    "P": ("cutoff", {"cutoff": int, "rel": int, "judged_only": bool}, ("cutoff",)),
    "R": ("cutoff", {"cutoff": int, "rel": int, "judged_only": bool}, ("cutoff",)),
    "RR": ("cutoff", {"cutoff": int, "rel": int, "judged_only": bool}, ()),
    "nDCG": ("cutoff", {"cutoff": int, "dcg": str, "gains": dict, "judged_only": bool}, ()),
    "Rprec": ("cutoff", {"rel": int, "judged_only": bool}, ()),
    "Bpref": ("cutoff", {"rel": int}, ()),
    "infAP": ("cutoff", {"rel": int}, ()),
    "IPrec": ("recall", {"recall": float, "rel": int, "judged_only": bool}, ("recall",)),
    "Judged": ("cutoff", {"cutoff": int}, ()),
    "NumQ": ("cutoff", {}, ()),
    "NumRel": ("cutoff", {"rel": int}, ()),
    "NumRet": ("cutoff", {"rel": int}, ()),
    "SetP": ("cutoff", {"rel": int, "relative": bool, "judged_only": bool}, ()),
    "SetR": ("cutoff", {"rel": int}, ()),
    "SetF": ("cutoff", {"rel": int, "beta": float, "judged_only": bool}, ()),
    "SetAP": ("cutoff", {"rel": int, "judged_only": bool}, ()),
    "Success": ("cutoff", {"cutoff": int, "rel": int, "judged_only": bool}, ("cutoff",)),
    "ERR": ("cutoff", {"cutoff": int}, ()),
}
#: ir_measures' other names for them: name -> (measure, preset parameters)
_IR_ALIASES: dict[str, tuple[str, dict[str, Any]]] = {
    "MAP": ("AP", {}), "Precision": ("P", {}), "Recall": ("R", {}), "MRR": ("RR", {}),
    "NDCG": ("nDCG", {}), "RPrec": ("Rprec", {}), "BPref": ("Bpref", {}),
    "NumRelRet": ("NumRet", {"rel": 1}), "SetRelP": ("SetP", {"relative": True}),
}
#: ir_measures measures qafast does not compute (diversity, user models, cwl_eval's RBP, ...)
_IR_OTHERS = frozenset({
    "Accuracy", "BPM", "Compat", "ERR_IA", "nERR_IA", "alpha_DCG", "α_DCG", "alpha_nDCG",
    "α_nDCG", "NRBP", "nNRBP", "AP_IA", "MAP_IA", "P_IA", "StRecall", "INST", "INSQ",
    "NERR8", "NERR9", "NERR10", "NERR11", "SDCG", "RBP",
})
_IR_SYNTAX = re.compile(r"([^\W\d]\w*)\s*(\(.*\))?\s*(@.*)?", re.DOTALL)

#: sort rank of the other tools' own families (after trec_eval's; the CLI never sees them)
_OTHER_RANK = len(TREC_ORDER)


def _column(name, family: str, *, k: int = 0, x: float = 0.0, rel: int | None = None,
            v9: bool = False, tool: str = "trec_eval") -> Column:
    rank = TREC_ORDER.index(family) if family in TREC_ORDER else _OTHER_RANK
    if k > _NO_CUTOFF:
        raise UnknownMeasureError(f"measure {name!r}: the cutoff {k} is too large (at most "
                                  f"2**62)")
    if rel is not None and isinstance(rel, int):
        # above every int32 grade, every level selects the same (no) documents
        rel = max(min(rel, 2**31), -(2**31))
    return Column(name, family, k=k, x=x, order=(rank, k or x), rel=rel, v9=v9, tool=tool)


def _is_ir_measure(obj) -> bool:
    """An ir_measures measure object, recognised without importing ir_measures."""
    return (type(obj).__module__.split(".")[0] == "ir_measures"
            and hasattr(obj, "NAME") and isinstance(getattr(obj, "params", None), dict))


def _ranx_columns(text: str, s: str) -> list[Column] | None:
    """ranx's ``name[@k][-lN]`` and ``rbp.p[-lN]`` with ranx's definitions, or None."""
    m = _RANX_RBP.fullmatch(s)
    if m:
        rel: int | None = int(m.group(2)) if m.group(2) is not None else 1
        return [_column(text, "rbp_graded", x=float("0." + m.group(1)), rel=rel, tool="ranx")]
    m = _RANX.fullmatch(s)
    if not m:
        return None
    base, at, level = m.groups()
    k = int(at) if at is not None and int(at) > 0 else None  # ranx: k = 0 is the whole list
    whole = _NO_CUTOFF if k is None else k
    rel = int(level) if level is not None else (1 if base in _RANX_GRADED else None)
    if base == "hits":
        spec = ("hits", whole, 0.0)
    elif base == "hit_rate":
        spec = ("success", whole, 0.0)
    elif base == "precision":
        spec = ("set_P", 0, 0.0) if k is None else ("P", k, 0.0)
    elif base == "recall":
        spec = ("set_recall", 0, 0.0) if k is None else ("recall", k, 0.0)
    elif base == "f1":
        spec = ("f1", whole, 0.0)
    elif base == "r-precision":
        spec = ("Rprec", 0, 0.0)  # ranx ignores k
    elif base == "mrr":
        spec = ("recip_rank", 0, 0.0) if k is None else ("recip_rank_cut", k, 0.0)
    elif base == "map":
        spec = ("map", 0, 0.0) if k is None else ("map_cut", k, 0.0)
    elif base == "bpref":
        spec = ("bpref", 0, 0.0)  # ranx ignores k
    elif base in ("dcg", "dcg_burges"):
        spec = ("graded_dcg", whole, float(_DCG_EXP if base == "dcg_burges" else 0))
    elif level is not None:
        # ranx's -lN drops the gains below N, which trec_eval's nDCG never does
        spec = ("graded_dcg", whole,
                float(_DCG_NORMALISED | (_DCG_EXP if base == "ndcg_burges" else 0)))
    elif base == "ndcg":
        spec = ("ndcg", 0, 0.0) if k is None else ("ndcg_cut", k, 0.0)
    else:
        spec = ("ndcg_cut_exp", whole, 0.0)
    family, k, x = spec
    return [_column(text, family, k=k, x=x, rel=rel, tool="ranx")]


def _ir_parse(s: str) -> tuple[str, dict[str, Any]] | None:
    """(measure name, parameters) of an ir_measures string such as ``P(rel=2)@5``, or None
    when it is not one."""
    m = _IR_SYNTAX.fullmatch(s)
    if not m or (m.group(1) not in _IR_MEASURES and m.group(1) not in _IR_ALIASES
                 and m.group(1) not in _IR_OTHERS):
        return None
    import ast

    try:
        node = ast.parse(s, mode="eval").body
        params: dict = {}
        at = None
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            at = ast.literal_eval(node.right)
            node = node.left
        if isinstance(node, ast.Call):
            if node.args or any(kw.arg is None for kw in node.keywords):
                raise InputError("parameters must be named")
            params = {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords}
            node = node.func
        if not isinstance(node, ast.Name):
            raise InputError("not a measure")
    except (SyntaxError, ValueError):
        # not ir_measures' Name(param=value, ...)@cutoff
        raise UnknownMeasureError(_unknown(s)) from None
    name = node.id
    if at is not None:
        base = _IR_ALIASES.get(name, (name, {}))[0]
        params[_IR_MEASURES[base][0] if base in _IR_MEASURES else "cutoff"] = at
    return name, params


def _ir_columns(name: str, params: dict, key: str) -> list[Column]:
    """The column of ir_measures' measure ``name`` with ``params``, output under ``key``."""
    base, preset = _IR_ALIASES.get(name, (name, {}))
    if base in _IR_OTHERS:
        raise UnknownMeasureError(
            f"measure {key!r}: ir_measures' {base} is not one qafast computes; it computes "
            f"{', '.join(_IR_MEASURES)}")
    _, types, required = _IR_MEASURES[base]
    params = {**preset, **params}
    for p, v in params.items():
        want = types.get(p)
        if want is None:
            raise UnknownMeasureError(
                f"measure {key!r}: {base} takes no parameter {p!r} (it takes "
                f"{', '.join(types) or 'none'})")
        ok = (isinstance(v, (int, float)) and not isinstance(v, bool) if want is float
              else isinstance(v, want) and (want is bool or not isinstance(v, bool)))
        if not ok:
            article = "an" if want is int else "a"
            raise UnknownMeasureError(
                f"measure {key!r}: {p}={v!r} is not {article} {want.__name__}")
    for p in required:
        if p not in params:
            raise UnknownMeasureError(
                f"measure {key!r}: {base} needs {'a cutoff' if p == 'cutoff' else p}, "
                f"e.g. {base}@{'10' if p == 'cutoff' else '0.5'}")
    if params.get("judged_only"):
        raise UnknownMeasureError(
            f"measure {key!r}: judged_only applies to the whole evaluation in qafast; pass "
            "judged_only=True to evaluate")
    if "gains" in params:
        raise UnknownMeasureError(
            f"measure {key!r}: custom gains are not supported here; trec_eval's "
            "ndcg.<grade>=<gain> sets them for nDCG without a cutoff")
    cutoff = params.get("cutoff")
    if cutoff is not None and cutoff <= 0:
        raise UnknownMeasureError(f"measure {key!r}: the cutoff must be positive")
    rel = params.get("rel")
    whole = _NO_CUTOFF if cutoff is None else cutoff

    def col(family, k=0, x=0.0, v9=False):
        return [_column(key, family, k=k, x=x, rel=rel, v9=v9, tool="ir_measures")]

    if base == "AP":
        return col("map") if cutoff is None else col("map_cut", cutoff)
    if base == "P":
        return col("P", cutoff)
    if base == "R":
        return col("recall", cutoff)
    if base == "RR":
        return col("recip_rank") if cutoff is None else col("recip_rank_cut", cutoff)
    if base == "nDCG":
        dcg = params.get("dcg", "log2")
        if dcg == "exp-log2":
            return col("ndcg_cut_exp", whole)
        if dcg != "log2":
            raise UnknownMeasureError(f"measure {key!r}: dcg must be 'log2' or 'exp-log2'")
        return col("ndcg") if cutoff is None else col("ndcg_cut", cutoff)
    if base == "Rprec":
        return col("Rprec")
    if base == "Bpref":
        return col("bpref")
    if base == "infAP":
        return col("infAP")
    if base == "IPrec":
        # pytrec_eval computes it: trec_eval 9.0.8's recall cut points
        return col("iprec_at_recall", x=float(params["recall"]), v9=True)
    if base == "Judged":
        return col("judged", whole)
    if base == "NumQ":
        return col("query_count")
    if base == "NumRel":
        return col("num_rel")
    if base == "NumRet":
        return col("num_ret") if rel is None else col("num_rel_ret")
    if base == "SetP":
        return col("set_relative_P" if params.get("relative") else "set_P")
    if base == "SetR":
        return col("set_recall")
    if base == "SetF":
        # ir_measures hands beta to trec_eval's set_F, whose parameter multiplies P
        return col("set_F", x=float(params.get("beta", 1.0)))
    if base == "SetAP":
        return col("set_map")
    if base == "Success":
        return col("success", cutoff)
    return col("err", whole)  # ERR


def _own_columns(text: str, s: str) -> list[Column] | None:
    """qafast's own @k names and ``family@k`` for trec_eval's cut-off families, or None."""
    name, at, k_text = s.partition("@")
    if at and not re.fullmatch(r"\d+", k_text):
        return None
    if name in _AT_ALIASES:
        family = _AT_ALIASES[name][0 if at else 1]
        if family is None:
            raise UnknownMeasureError(
                f"measure {text!r} needs a cutoff, e.g. {name}@10" if not at
                else f"measure {text!r}: {name} takes no cutoff")
    elif at and name in _CUT_FAMILIES:
        family = name
    else:
        return None
    if not at:
        k = _NO_CUTOFF if FAMILIES[family][0] == "cut" else 0
        return [_column(text, family, k=k)]
    k = int(k_text)
    if k <= 0:
        raise UnknownMeasureError(f"measure {text!r}: the cutoff must be positive")
    return [_column(text, family, k=k)]


def parse_measure(text, *, version: str = "10.0") -> list[Column]:
    """Columns for one measure request (see :func:`parse_measures`)."""
    if _is_ir_measure(text):
        return _ir_columns(text.NAME, dict(text.params), text)
    if not isinstance(text, str):
        raise InputTypeError(f"a measure name must be a str, not {type(text).__name__}: {text!r}")
    s = text.strip()
    nick = NICKNAMES_V9 if version == "9.0.8" else NICKNAMES
    if s in nick:
        cols: list[Column] = []
        for fam in nick[s]:
            cols.extend(_columns_for(fam, None, s))
        return cols
    if s in FAMILIES:  # trec_eval's names come first: "map", "recall", "ndcg" are theirs
        return _columns_for(s, None, text)
    parsed = _ir_parse(s)
    if parsed is not None:
        return _ir_columns(*parsed, text)
    for other in (_ranx_columns, _own_columns):
        found = other(text, s)
        if found is not None:
            return found
    # trec_eval -m style: family.params
    fam, dot, params = s.partition(".")
    if dot and fam in FAMILIES:
        return _columns_for(fam, params, text)
    # trec_eval printed names: P_5, iprec_at_recall_0.10, ndcg_1=3,2=9, utility_2,-1,0,0
    for fam in sorted(FAMILIES, key=len, reverse=True):
        if s.startswith(fam + "_") and len(s) > len(fam) + 1:
            cols = _columns_for(fam, s[len(fam) + 1:], text)
            if len(cols) == 1:
                return [Column(s, cols[0].family, cols[0].k, cols[0].x, cols[0].keys,
                               cols[0].values, cols[0].order)]
    raise UnknownMeasureError(_unknown(text))


def _known_names() -> dict[str, bool]:
    """Every measure name a user may type, without parameters: name -> takes a cutoff."""
    names: dict[str, bool] = {}
    for fam, (kind, _) in FAMILIES.items():
        names[fam] = kind == "cut"
    for nick in NICKNAMES:
        names[nick] = False
    for name in _RANX_NAMES:
        names[name] = name not in ("r-precision", "bpref", "rbp")
    for name, (family, _) in _AT_ALIASES.items():
        names[name] = family is not None
    for name in (*_IR_MEASURES, *_IR_ALIASES):
        base = _IR_ALIASES.get(name, (name, {}))[0]
        names[name] = "cutoff" in _IR_MEASURES[base][1] or base == "IPrec"
    return names


def _unknown(text) -> str:
    import difflib

    s = str(text).strip()
    base, at, k = s.partition("@")
    base = base.partition("(")[0].strip()
    names = _known_names()
    by_lower: dict[str, list[str]] = {}
    for name in names:
        by_lower.setdefault(name.lower(), []).append(name)
    close = difflib.get_close_matches(base.lower(), list(by_lower), n=4, cutoff=0.6)
    suggestions = []
    for low in close:
        for name in by_lower[low]:
            suggestions.append(f"{name}@{k if k.isdigit() else 10}" if at and names[name]
                               else name)
    hint = f" (did you mean {', '.join(suggestions)}?)" if suggestions else ""
    return (f"unknown measure {text!r}{hint}. Measures are named as trec_eval (P_10, "
            f"ndcg_cut.10, map), ranx (ndcg@10, hits@10, mrr@10, map@100, rbp.95) or "
            f"ir_measures (nDCG@10, P(rel=2)@5, RR@10, Judged@10) names them, or by a "
            f"nickname (all_trec, official, set)")


def parse_measures(measures, *, version: str = "10.0") -> list[Column]:
    """Columns for a measure request: one name or an iterable of names.

    A name is trec_eval's (``map``, ``P_5``, ``ndcg_cut.10,20``, ``all_trec``), ranx's
    (``ndcg@10``, ``hits@10``, ``map@100-l2``, ``rbp.95``), ir_measures' (``nDCG@10``,
    ``P(rel=2)@5``, ``RR@10``, or an ir_measures measure object) or qafast's own
    (``hit@10``, ``ndcg_exp@10``); each means what its tool computes. Duplicated output
    names keep their first occurrence. A family named twice in trec_eval form (``P.5`` then
    ``P.10``) yields both sets of columns.
    """
    if isinstance(measures, str) or _is_ir_measure(measures):
        measures = [measures]
    try:
        items = list(measures)
    except TypeError:
        raise InputTypeError("measures must be a str or an iterable of str, not "
                             f"{type(measures).__name__}") from None
    if not items:
        raise InputError("no measure requested")
    seen: dict = {}
    for item in items:
        for col in parse_measure(item, version=version):
            if version == "9.0.8" and col.family in V10_ONLY:
                raise UnknownMeasureError(
                    f"measure {item!r} does not exist in trec_eval 9.0.8 (pytrec_eval)")
            seen.setdefault(col.name, col)
    return list(seen.values())


def trec_columns(requests: list[str] | None, *, version: str = "10.0") -> list[Column]:
    """Columns for trec_eval's ``-m`` options, with trec_eval's own rules.

    Each request marks a family (or a nickname's families). ``family.params`` also gives that
    family parameters; as in trec_eval, the first parameters given for a family are the ones
    used (``-m P.5 -m P.10`` yields ``P_5`` alone), and a nickname's are ignored. Columns come
    out in trec_eval's measure order, so ``-m all_trec -m relstring.20`` yields one
    ``relstring_20`` column.

    A request that is not trec_eval's syntax (the name before its first ``.`` is neither a
    trec_eval measure nor a nickname), such as ``ndcg@10``, ``mrr@10`` or ``P_5``, is read as
    :func:`evaluate` reads it (:func:`parse_measure`); with ``version="10.0"`` those columns
    follow trec_eval's, in request order, a column whose name is already there left out.
    """
    marked: dict[str, str | None] = {}
    others: list[Column] = []
    nick = NICKNAMES_V9 if version == "9.0.8" else NICKNAMES
    trec_families = TREC_ORDER[:TREC_ORDER.index("unj") + 1]
    for req in requests or ["official"]:
        fam, dot, params = req.partition(".")
        if fam in nick or fam in trec_families:
            if dot and not params:
                raise UnknownMeasureError(f"measure {req!r}: empty parameter list")
            for f in nick.get(fam, (fam,)):
                marked.setdefault(f, None)
            if dot and fam not in nick and marked[fam] is None:
                marked[fam] = params
        elif version == "10.0":
            others.extend(parse_measure(req))
        else:
            raise UnknownMeasureError(f"illegal measure {req!r}: trec_eval measures are "
                                      f"{', '.join(trec_families)} "
                                      f"and the nicknames {', '.join(nick)}")
    cols: list[Column] = []
    for fam in TREC_ORDER:
        if fam in marked:
            cols.extend(_columns_for(fam, marked[fam], fam))
    names = {c.name for c in cols}
    for c in others:
        if c.name not in names:
            names.add(c.name)
            cols.append(c)
    return cols


def column_groups(columns: list[Column], relevance_level: int, v9: bool = False
                  ) -> dict[tuple[int, bool], list[int]]:
    """Column indices by the (relevance level, 9.0.8 recall rounding) they are measured at.

    A column may set its own level (ranx's ``-lN``, ir_measures' ``rel=``) or ask for
    trec_eval 9.0.8's recall cut points (ir_measures' ``IPrec``, computed by pytrec_eval):
    the measure kernels take one setting per call, so callers make one call per group.
    """
    groups: dict[tuple[int, bool], list[int]] = {}
    for j, c in enumerate(columns):
        setting = (relevance_level if c.rel is None else c.rel, v9 or c.v9)
        groups.setdefault(setting, []).append(j)
    return groups


def kernel_arrays(columns: list[Column]) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                  np.ndarray, np.ndarray, np.ndarray]:
    """The measure kernels' per-column arrays: codes, integer parameters, float parameters,
    and the CSR (offsets, keys, values) of gain maps and coefficient lists."""
    m = len(columns)
    codes = np.array([c.code for c in columns], dtype=np.int32)
    kparams = np.array([min(c.k, _NO_CUTOFF) for c in columns], dtype=np.int64)
    fparams = np.array([c.x for c in columns], dtype=np.float64)
    loffs = np.zeros(m + 1, dtype=np.int64)
    lkeys: list[int] = []
    lvals: list[float] = []
    for i, c in enumerate(columns):
        if c.family in ("utility", "11pt_avg"):
            lkeys.extend([0] * len(c.values))
            lvals.extend(c.values)
        elif c.keys:
            lkeys.extend(c.keys)
            lvals.extend(c.values)
        loffs[i + 1] = len(lkeys)
    return (codes, kparams, fparams, loffs, np.array(lkeys, dtype=np.int64),
            np.array(lvals, dtype=np.float64))
