"""The ranking-measure registry and the one parser for every way a user names a measure.

A request such as ``"P.5,10"``, ``"ndcg_cut_10"``, ``"ndcg@10"`` or ``"all_trec"`` becomes a
list of :class:`Column`: one output value per query, with the kernel code and parameters that
compute it and the rule that summarises it over queries.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

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
FAMILIES: dict[str, tuple[str, object]] = {
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
SUMMED = frozenset({"num_q", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"})
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

class UnknownMeasureError(ValueError):
    """A measure name that no family, alias or nickname matches."""


def _leading_int(text: str, measure: str) -> int:
    m = re.match(r"\s*[+-]?\d+", text)
    if not m:
        raise UnknownMeasureError(f"measure {measure!r}: cutoff {text!r} is not an integer")
    return int(m.group())


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


# @k aliases of ranx / ir_measures (lower case) -> (family with k, family without k)
_AT_ALIASES = {
    "p": ("P", None), "precision": ("P", None),
    "recall": ("recall", None), "r": ("recall", None),
    "map": ("map_cut", "map"), "ap": ("map_cut", "map"),
    "ndcg": ("ndcg_cut", "ndcg"),
    "ndcg_exp": ("ndcg_cut_exp", "ndcg_cut_exp"), "ndcg_burges": ("ndcg_cut_exp", "ndcg_cut_exp"),
    "mrr": ("recip_rank_cut", "recip_rank"), "rr": ("recip_rank_cut", "recip_rank"),
    "recip_rank": ("recip_rank_cut", "recip_rank"),
    "hit": ("success", "success"), "hits": ("success", "success"),
    "hit_rate": ("success", "success"), "success": ("success", "success"),
    "r-precision": (None, "Rprec"), "r_precision": (None, "Rprec"), "rprec": (None, "Rprec"),
    "bpref": (None, "bpref"), "infap": (None, "infAP"),
    "f1": (None, "set_F"), "set_f": (None, "set_F"),
}
_FAMILY_BY_LOWER = {f.lower(): f for f in FAMILIES}


def parse_measure(text: str, *, version: str = "10.0") -> list[Column]:
    """Columns for one measure request (see :func:`parse_measures`)."""
    if not isinstance(text, str):
        raise TypeError(f"a measure name must be a str, not {type(text).__name__}: {text!r}")
    s = text.strip()
    nick = NICKNAMES_V9 if version == "9.0.8" else NICKNAMES
    if s in nick:
        cols: list[Column] = []
        for fam in nick[s]:
            cols.extend(_columns_for(fam, None, s))
        return cols
    # ranx / ir_measures style: name@k
    m = re.fullmatch(r"([A-Za-z_\-0-9]+?)@(\d+)", s)
    if m:
        alias, k = m.group(1).lower(), int(m.group(2))
        fam = _AT_ALIASES.get(alias, (None, None))[0]
        if fam is None and alias in _FAMILY_BY_LOWER and FAMILIES[_FAMILY_BY_LOWER[alias]][0] == "cut":
            fam = _FAMILY_BY_LOWER[alias]
        if fam is None:
            raise UnknownMeasureError(_unknown(text))
        if k <= 0:
            raise UnknownMeasureError(f"measure {text!r}: the cutoff must be positive")
        return [Column(text, fam, k=k, order=(TREC_ORDER.index(fam), k))]
    low = s.lower()
    if low in _AT_ALIASES and s not in FAMILIES:
        fam = _AT_ALIASES[low][1]
        if fam is None:
            raise UnknownMeasureError(f"measure {text!r} needs a cutoff, e.g. {text}@10")
        if fam in ("success", "ndcg_cut_exp"):
            return [Column(text, fam, k=_NO_CUTOFF, order=(TREC_ORDER.index(fam), _NO_CUTOFF))]
        return [Column(text, fam, order=(TREC_ORDER.index(fam), 0))]
    # trec_eval -m style: family or family.params
    if s in FAMILIES:
        return _columns_for(s, None, text)
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


def _unknown(text: str) -> str:
    return (f"unknown measure {text!r}: use a trec_eval name (P_10, ndcg_cut.10, map), "
            f"an @k name (P@10, ndcg@10, mrr@10, map@100, recall@100, hit@10), or a nickname "
            f"(all_trec, official, set); qafast.ranking.MEASURE_FAMILIES lists the families")


def parse_measures(measures, *, version: str = "10.0") -> list[Column]:
    """Columns for a measure request: one name or an iterable of names.

    Duplicated output names keep their first occurrence. A family named twice in trec_eval
    form (``P.5`` then ``P.10``) yields both sets of columns.
    """
    if isinstance(measures, str):
        measures = [measures]
    try:
        items = list(measures)
    except TypeError:
        raise TypeError("measures must be a str or an iterable of str, not "
                        f"{type(measures).__name__}") from None
    if not items:
        raise ValueError("no measure requested")
    seen: dict[str, Column] = {}
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
