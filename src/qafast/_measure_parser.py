"""The one parser for every way a user names a ranking measure, read off the measure table.

A request such as ``"P.5,10"``, ``"ndcg_cut_10"``, ``"ndcg@10"``, ``"nDCG(dcg='exp-log2')@10"``
or ``"all_trec"`` becomes a list of :class:`Column`: one output value per query, with the
kernel code and parameters that compute it and the rule that summarises it over queries.

A name means what its tool computes, and the tools are tried in this order: an ir_measures
measure object; a nickname; a trec_eval family name; ir_measures' syntax; ranx's; qafast's
own ``@k`` names; trec_eval's ``family.params``; trec_eval's printed names (``P_5``). Which
family each tool's spelling selects is not written here: the spellings are rows' data in
``_measures.py`` (``Family.names``), indexed below at import.
"""

from __future__ import annotations

import functools
import math
import operator
import re
from array import array
from typing import Any, NamedTuple

from ._measures import (
    BY_NAME,
    CODES,
    FAMILIES,
    JUDGED_ONLY_FLAG,
    NICKNAMES,
    NICKNAMES_V9,
    NO_CUTOFF,
    SUBTOPIC_FAMILIES,
    TABLE,
    TOOLS,
    TREC_ORDER,
    V10_ONLY,
    Family,
    Name,
)
from .errors import InputError, InputTypeError, MeasureError

__all__ = ["MAX_COLLECTION_SIZE", "Column", "UnknownMeasureError", "column_groups",
           "columns_for", "kernel_arrays", "known_names", "listed_names", "parse_measure",
           "parse_measures", "trec_columns", "with_collection_size"]


class Column(NamedTuple):
    """One per-query value: its output name, the family computing it and its parameters."""

    name: str
    family: str
    k: int = 0
    x: float = 0.0
    keys: tuple[int, ...] = ()
    values: tuple[float, ...] = ()
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
    #: measured with the unjudged documents dropped from the ranking, for this column alone
    #: (ir_measures' ``judged_only=True`` on one measure; ``evaluate(judged_only=True)`` drops
    #: them for every column)
    judged_only: bool = False

    @property
    def code(self) -> int:
        return CODES[self.family]

    @property
    def aggregate(self) -> str:
        """"mean", "sum" (counts) or "gm" (the geometric mean)."""
        return BY_NAME[self.family].summary


class UnknownMeasureError(MeasureError):
    """A measure name that no family, alias or nickname matches, or malformed parameters."""


def _column(name, family: str, *, k: int = 0, x: float = 0.0, rel: int | None = None,
            v9: bool = False, tool: str = "trec_eval") -> Column:
    if k > NO_CUTOFF:
        raise UnknownMeasureError(f"measure {name!r}: the cutoff {k} is too large (at most "
                                  f"2**62)")
    if rel is not None and isinstance(rel, int):
        # above every int32 grade, every level selects the same (no) documents
        rel = max(min(rel, 2**31), -(2**31))
    return Column(name, family, k=k, x=x, rel=rel, v9=v9, tool=tool)


def _depth(family: Family, k: int | None) -> int:
    """The cut-off a column of ``family`` holds: k, or the whole ranking for a family of
    cut-offs given none; 0 for a family that takes none (ranx's ``r-precision@k``)."""
    if family.params != "cut":
        return 0
    return NO_CUTOFF if k is None else k


# --------------------------------------------------------------------------------------------
# trec_eval's syntax: family, family.params, family_params

def _leading_int(text: str, measure: str) -> int:
    m = re.match(r"\s*[+-]?\d+", text)
    if not m:
        raise UnknownMeasureError(f"measure {measure!r}: cutoff {text!r} is not an integer")
    value = int(m.group())
    if value > NO_CUTOFF:
        raise UnknownMeasureError(f"measure {measure!r}: cutoff {value} is too large (at most "
                                  "2**62)")
    return value


def _float(text: str, measure: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise UnknownMeasureError(
            f"measure {measure!r}: parameter {text!r} is not a number") from None


def _cut_columns(row: Family, params: str | None, measure: str, name: str | None):
    if params is None:
        cuts = list(row.defaults)
    else:
        cuts = [_leading_int(p, measure) for p in params.split(",") if p != ""]
        if not cuts:
            raise UnknownMeasureError(f"measure {measure!r}: no cutoff given")
        if any(c <= 0 for c in cuts):
            raise UnknownMeasureError(f"measure {measure!r}: cutoffs must be positive")
        if len(set(cuts)) != len(cuts):
            raise UnknownMeasureError(f"measure {measure!r}: a cutoff is repeated")
        cuts.sort()
    return [Column(name or f"{row.name}_{c}", row.name, k=c) for c in cuts]


def _point_columns(row: Family, params: str | None, measure: str, name: str | None):
    if params is None:
        points = list(row.defaults)
    else:
        points = sorted(_float(p, measure) for p in params.split(",") if p != "")
        if not points:
            raise UnknownMeasureError(f"measure {measure!r}: no parameter given")
    return [Column(name or f"{row.name}_{p:.2f}", row.name, x=p) for p in points]


def _float_columns(row: Family, params: str | None, measure: str, name: str | None):
    values = tuple(row.defaults) if params is None else tuple(
        _float(p, measure) for p in params.split(",") if p != "")
    if row.arity is not None and len(values) != row.arity:
        takes = "one parameter" if row.arity == 1 else f"{row.arity} coefficients"
        raise UnknownMeasureError(f"measure {measure!r}: {row.name} takes {takes}")
    name = name or (row.name if params is None else f"{row.name}_{params}")
    return [Column(name, row.name, x=values[0] if row.arity == 1 else 0.0, values=values)]


def _pair_columns(row: Family, params: str | None, measure: str, name: str | None):
    keys: list[int] = []
    gains: list[float] = []
    p = row.defaults[0] if row.persistence else 0.0
    for item in params.split(",") if params else ():
        lhs, sep, rhs = item.partition("=")
        if not sep:
            raise UnknownMeasureError(f"measure {measure!r}: parameter {item!r} is not "
                                      "name=value")
        if row.persistence and lhs == "p":
            p = _float(rhs, measure)
        elif re.fullmatch(r"[+-]?\d+", lhs):
            if row.gains:
                keys.append(int(lhs))
                gains.append(_float(rhs, measure))
        else:
            raise UnknownMeasureError(f"measure {measure!r}: {lhs!r} is not a relevance level")
    name = name or (row.name if not params else f"{row.name}_{params}")
    return [Column(name, row.name, x=p, keys=tuple(keys), values=tuple(gains))]


def _plain_columns(row: Family, params: str | None, measure: str, name: str | None):
    if params:
        raise UnknownMeasureError(f"measure {measure!r}: {row.name} takes no parameter")
    return [Column(name or row.name, row.name)]


_COLUMNS_OF_KIND = {"cut": _cut_columns, "fcut": _point_columns, "floats": _float_columns,
                    "pairs": _pair_columns, "none": _plain_columns}


def columns_for(family: str, params: str | None, measure: str, *,
                name: str | None = None) -> list[Column]:
    """The columns of a trec_eval-style family with ``params`` as trec_eval reads them
    (``"5,10"``, ``"1=3,2=9"``, None for the defaults); ``name`` names a single column."""
    row = FAMILIES[family]
    return _COLUMNS_OF_KIND[row.params](row, params, measure, name)


# --------------------------------------------------------------------------------------------
# The spellings of the table, indexed per tool


def _spellings(tool: str):
    for row in TABLE:
        for spelled in row.names:
            if spelled.tool == tool:
                yield row, spelled


#: the trec_eval-style families that take cut-offs: "family@k" is family_k
CUT_FAMILIES = tuple(f for f, row in FAMILIES.items() if row.params == "cut")


class _Spellings(NamedTuple):
    """The table's spellings, indexed per tool. Built on the first name that is not a
    trec_eval family: the command line's ``-m map`` never needs it, and it costs a few
    milliseconds of every start-up."""

    #: qafast's own ("hit@k", "ndcg_exp", "r_precision"): base -> {has @k: family}
    own: dict
    #: ranx's ("map@k", "ndcg@k-lN", "recall@0"): (base, has k, has -lN) -> (family, spelling)
    ranx: dict
    #: ranx's rbp.p: has -lN -> (family, spelling)
    ranx_rbp: dict
    #: ranx's metric names (ranx.metrics.metric_switch), as a user writes them
    ranx_bases: tuple
    ranx_name: re.Pattern
    ranx_rbp_name: re.Pattern
    #: ir_measures' syntax: Name(param=value, ...)@cutoff
    ir_syntax: re.Pattern
    #: ir_measures' measures: measure -> its spellings, read (_IrSpelling)
    ir: dict
    #: every spelling any row lists
    claimed: frozenset


@functools.cache
def _spelling_index() -> _Spellings:
    own: dict = {}
    for row, spelled in _spellings("qafast"):
        base, at, _ = spelled.text.partition("@")
        own.setdefault(base, {})[bool(at)] = row
    ranx_spelling = re.compile(r"(?P<base>[a-z][a-z0-9_-]*?)(?:@(?P<at>k|0))?(?P<level>-lN)?")
    rbp_spelling = re.compile(r"rbp[.@]p(?P<level>-lN)?")
    ranx: dict = {}
    ranx_rbp: dict = {}
    for row, spelled in _spellings("ranx"):
        m = rbp_spelling.fullmatch(spelled.text)
        if m:
            ranx_rbp[bool(m.group("level"))] = (row, spelled)
            continue
        m = ranx_spelling.fullmatch(spelled.text)
        assert m is not None, spelled  # the table's spellings are checked by its tests
        # ranx reads @0 as the whole ranking: "recall@0" is "recall" without a cut-off
        ranx[(m.group("base"), m.group("at") == "k", bool(m.group("level")))] = (row, spelled)
    bases = tuple(dict.fromkeys(base for base, _, _ in ranx))
    alternatives = "|".join(re.escape(b) for b in sorted(bases, key=len, reverse=True))
    ranx_name = re.compile(f"({alternatives})" + r"(?:@(\d+))?(?:-l([+-]?\d+))?")
    ir_syntax = re.compile(r"([^\W\d]\w*)\s*(\(.*\))?\s*(@.*)?", re.DOTALL)
    ir: dict = {}
    for row, spelled in _spellings("ir_measures"):
        base, reading = _read_ir_spelling(row, spelled)
        ir.setdefault(base, []).append(reading)
    claimed = frozenset(n.text for row in TABLE for n in row.names)
    return _Spellings(own, ranx, ranx_rbp, bases + ("rbp",), ranx_name,
                      re.compile(r"rbp[.@](\d+)(?:-l([+-]?\d+))?"), ir_syntax, ir, claimed)


def __getattr__(name: str):
    # qafast's own names and ranx's, for the tests and the docs, from the index
    if name == "OWN_NAMES":
        return tuple(_spelling_index().own)
    if name == "RANX_BASES":
        return _spelling_index().ranx_bases
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def listed_names(row: Family) -> dict[str, tuple[str, ...]]:
    """What the measure reference lists for ``row``: its spellings in each tool, with
    qafast's ``family@k`` for a trec_eval-style family of cut-offs where no other tool's
    name is spelled so (``P@k`` is ir_measures', ``recall@k`` ranx's)."""
    listed = {tool: row.spelled(tool) for tool in TOOLS}
    generic = f"{row.name}@k"
    if row.name in CUT_FAMILIES and generic not in _spelling_index().claimed:
        listed["qafast"] += (generic,)
    return listed


def _ranx_columns(text: str, s: str) -> list[Column] | None:
    """ranx's ``name[@k][-lN]`` and ``rbp.p[-lN]`` with ranx's definitions, or None."""
    index = _spelling_index()
    m = index.ranx_rbp_name.fullmatch(s)
    if m:
        digits, level = m.groups()
        row, _ = index.ranx_rbp.get(level is not None) or index.ranx_rbp[False]
        rel = int(level) if level is not None else row.level
        return [_column(text, row.name, x=float("0." + digits), rel=rel, tool="ranx")]
    m = index.ranx_name.fullmatch(s)
    if not m:
        return None
    base, at, level = m.groups()
    k = int(at) if at is not None and int(at) > 0 else None  # ranx: k = 0 is the whole list
    found = index.ranx.get((base, k is not None, level is not None))
    if found is None:  # -lN sets the level of any name whose family it does not change
        found = index.ranx.get((base, k is not None, False))
    if found is None:
        return None
    row, spelled = found
    rel = int(level) if level is not None else row.level
    return [_column(text, row.name, k=_depth(row, k), x=float(spelled.x or 0), rel=rel,
                    tool="ranx")]


# ir_measures: its measures' parameters are its own syntax (data of ir_measures 0.4.3, not of
# the families); which family a name with parameters selects is the table's spellings'.

#: ir_measures 0.4.3's measures qafast computes: name -> (the parameter @ sets,
#: {parameter: type}, required parameters)
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
    # diversity (qafast.diversity computes them from diversity qrels, with ndeval's rules)
    "ERR_IA": ("cutoff", {"cutoff": int, "rel": int, "judged_only": bool}, ("cutoff",)),
    "nERR_IA": ("cutoff", {"cutoff": int, "rel": int, "judged_only": bool}, ("cutoff",)),
    "alpha_DCG": ("cutoff", {"cutoff": int, "alpha": float, "rel": int, "judged_only": bool},
                  ("cutoff",)),
    "alpha_nDCG": ("cutoff", {"cutoff": int, "alpha": float, "rel": int, "judged_only": bool},
                   ("cutoff",)),
    "NRBP": ("cutoff", {"alpha": float, "beta": float, "rel": int}, ()),
    "nNRBP": ("cutoff", {"alpha": float, "beta": float, "rel": int}, ()),
    "AP_IA": ("cutoff", {"rel": int, "judged_only": bool}, ()),
    "P_IA": ("cutoff", {"cutoff": int, "rel": int, "judged_only": bool}, ("cutoff",)),
    "StRecall": ("cutoff", {"cutoff": int, "rel": int}, ("cutoff",)),
    # cwl_eval's user models, with the parameters ir_measures' cwl_eval provider takes
    "RBP": ("cutoff", {"rel": int, "p": float}, ("rel",)),
    "BPM": ("cutoff", {"cutoff": int, "T": float, "min_rel": int, "max_rel": int},
            ("cutoff", "max_rel")),
    "SDCG": ("cutoff", {"cutoff": int, "dcg": str, "min_rel": int, "max_rel": int},
             ("cutoff", "max_rel")),
    "NERR8": ("cutoff", {"cutoff": int, "min_rel": int, "max_rel": int}, ("cutoff", "max_rel")),
    "NERR9": ("cutoff", {"cutoff": int, "min_rel": int, "max_rel": int}, ("cutoff", "max_rel")),
    "NERR10": ("cutoff", {"p": float, "min_rel": int, "max_rel": int}, ("max_rel",)),
    "NERR11": ("cutoff", {"T": float, "min_rel": int, "max_rel": int}, ("max_rel",)),
    "INST": ("cutoff", {"T": float, "min_rel": int, "max_rel": int}, ("max_rel",)),
    "INSQ": ("cutoff", {"T": float, "min_rel": int, "max_rel": int}, ("max_rel",)),
    "Compat": ("cutoff", {"p": float, "normalize": bool}, ()),
    # its accuracy provider's
    "Accuracy": ("cutoff", {"cutoff": int, "rel": int}, ()),
}
#: ir_measures' other names for them: name -> (measure, preset parameters)
_IR_ALIASES: dict[str, tuple[str, dict[str, Any]]] = {
    "MAP": ("AP", {}), "Precision": ("P", {}), "Recall": ("R", {}), "MRR": ("RR", {}),
    "NDCG": ("nDCG", {}), "RPrec": ("Rprec", {}), "BPref": ("Bpref", {}),
    "NumRelRet": ("NumRet", {"rel": 1}), "SetRelP": ("SetP", {"relative": True}),
    "MAP_IA": ("AP_IA", {}), "α_DCG": ("alpha_DCG", {}), "α_nDCG": ("alpha_nDCG", {}),
}
#: the defaults of the parameters that choose between families (nDCG's dcg, SetP's
#: relative): a spelling that does not name one asks for its default
_IR_DEFAULTS: dict[str, Any] = {"dcg": "log2", "relative": False, "normalize": True}
#: ir_measures measures qafast does not compute (none in ir_measures 0.4.3)
_IR_OTHERS: frozenset[str] = frozenset()
#: ir_measures' diversity measures: rows of the table read from diversity qrels (a subtopic
#: per judgment), computed with ndeval's rules by qafast.diversity
_IR_DIVERSITY = SUBTOPIC_FAMILIES
#: ir_measures' parameters as a Column holds them (rel is the column's level)
_IR_FLOAT_PARAMS = ("recall", "beta", "p")


class _IrSpelling(NamedTuple):
    """A table spelling in ir_measures' syntax, read: the measure it names (aliases
    resolved), the parameters it fixes, those it requires (``N``) and whether it has ``@``."""

    family: Family
    spelled: Name
    fixed: dict
    required: frozenset
    at: bool

    @property
    def specificity(self) -> int:
        return len(self.fixed) + len(self.required)


def _read_ir_spelling(row: Family, spelled: Name) -> tuple[str, _IrSpelling]:
    m = re.fullmatch(r"(\w+)(?:\((.*)\))?(@[kr])?", spelled.text)
    assert m is not None, spelled  # the table's spellings are checked by its tests
    name, args, at = m.groups()
    base, preset = _IR_ALIASES.get(name, (name, {}))
    fixed, required = dict(preset), set()
    for item in args.split(",") if args else ():
        key, _, value = (part.strip() for part in item.partition("="))
        if value == "N":
            required.add(key)
        else:
            fixed[key] = _literal(value)
    return base, _IrSpelling(row, spelled, fixed, frozenset(required), at is not None)



def _literal(text: str) -> Any:
    """A Python literal (a number, a string): ast.literal_eval, imported when first used."""
    import ast

    return ast.literal_eval(text)


def _is_ir_measure(obj) -> bool:
    """An ir_measures measure object, recognised without importing ir_measures."""
    return (type(obj).__module__.split(".")[0] == "ir_measures"
            and hasattr(obj, "NAME") and isinstance(getattr(obj, "params", None), dict))


def _ir_parse(s: str) -> tuple[str, dict[str, Any]] | None:
    """(measure name, parameters) of an ir_measures string such as ``P(rel=2)@5``, or None
    when it is not one."""
    m = _spelling_index().ir_syntax.fullmatch(s)
    if not m or (m.group(1) not in _IR_MEASURES and m.group(1) not in _IR_ALIASES
                 and m.group(1) not in _IR_OTHERS):
        return None
    import ast  # here: 2 ms of every command line's start, for ir_measures' syntax only

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


def _check_ir_params(base: str, params: dict, key) -> None:
    """ir_measures' own rules for ``base``'s parameters, and what qafast does not take."""
    _, types, required = _IR_MEASURES[base]
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
    cutoff = params.get("cutoff")
    if cutoff is not None and cutoff <= 0:
        raise UnknownMeasureError(f"measure {key!r}: the cutoff must be positive")


def _ir_spelling(base: str, params: dict, key) -> _IrSpelling:
    """The table's most specific spelling of ``base`` that ``params`` fit: the parameters
    it fixes have those values, those it requires are given, its ``@`` is given (a family
    of cut-offs also takes a name without one: the whole ranking)."""
    at_param = _IR_MEASURES[base][0]
    given_at = at_param in params

    def fits(s: _IrSpelling) -> bool:
        chooser = {p: d for p, d in _IR_DEFAULTS.items() if p in _IR_MEASURES[base][1]}
        return (all(params.get(p, chooser.get(p)) == v for p, v in s.fixed.items())
                and all(params.get(p, d) == d for p, d in chooser.items() if p not in s.fixed)
                and s.required <= params.keys())

    fitting = [s for s in _spelling_index().ir.get(base, ()) if fits(s)]
    chosen = [s for s in fitting if s.at == given_at] or (
        [] if given_at else [s for s in fitting if s.at and s.family.params == "cut"])
    if not chosen:
        for p, default in _IR_DEFAULTS.items():
            values = [default] + [s.fixed[p] for s in _spelling_index().ir.get(base, ())
                                  if p in s.fixed and s.fixed[p] != default]
            if p in params and params[p] not in values:
                raise UnknownMeasureError(f"measure {key!r}: {p} must be "
                                          f"{' or '.join(map(repr, values))}")
        raise UnknownMeasureError(f"measure {key!r}: qafast computes no {base} with these "
                                  "parameters")
    return max(chosen, key=lambda s: s.specificity)


def _ir_columns(name: str, params: dict, key) -> list[Column]:
    """The column of ir_measures' measure ``name`` with ``params``, output under ``key``."""
    base, preset = _IR_ALIASES.get(name, (name, {}))
    if base in _IR_DIVERSITY:
        return [_diversity_column(base, {**preset, **params}, key)]
    if base in _IR_OTHERS:
        raise UnknownMeasureError(
            f"measure {key!r}: ir_measures' {base} is not one qafast computes; it computes "
            f"{', '.join(_IR_MEASURES)}")
    params = {**preset, **params}
    if base in _IR_CWL:
        return [_cwl_column(base, params, key)]
    _check_ir_params(base, params, key)
    if base == "Accuracy" and params.get("rel", 0) < 0:
        # qafast keeps no negative grade (one is "in the pool, not judged"), where
        # ir_measures' accuracy provider compares each with rel
        raise UnknownMeasureError(f"measure {key!r}: Accuracy's rel must be 0 or more")
    gains = _ir_gains(params.pop("gains", None), params, key)
    spelling = _ir_spelling(base, params, key)
    row = spelling.family
    x = spelling.spelled.x
    for p in _IR_FLOAT_PARAMS:
        if p in params:
            x = float(params[p])
    if x is None:
        x = row.defaults[0] if row.arity == 1 else 0.0
    if base == "Compat" and not 0.0 <= x <= 1.0:
        raise UnknownMeasureError(f"measure {key!r}: the persistence p must be in [0, 1]")
    column = _column(key, row.name, k=_depth(row, params.get("cutoff")), x=x,
                     rel=params.get("rel"), v9=spelling.spelled.v9, tool="ir_measures")
    if gains:
        column = column._replace(keys=tuple(gains), values=tuple(gains.values()))
    return [column._replace(judged_only=bool(params.get("judged_only")))]


def _ir_gains(gains: dict | None, params: dict, key) -> dict[int, float] | None:
    """nDCG's ``gains=``, as the gain map of the ndcg and ndcg_cut columns.

    ir_measures hands pytrec_eval the qrels with each grade g replaced by ``gains.get(g, g)``
    (an integer: pytrec_eval takes no other). Read as a gain map: a grade the map does not
    name keeps its own gain, and a gain below 0 is a grade below 0, which trec_eval reads as
    unjudged: it adds nothing to the DCG nor to the ideal one, as a gain of 0. A negative
    grade is unjudged whatever its gain, so a map that makes one judged, and one that makes
    a judged grade unjudged where the unjudged documents are dropped, are refused.
    """
    if gains is None:
        return None
    if params.get("dcg", "log2") != "log2":
        raise UnknownMeasureError(
            f"measure {key!r}: gains= is read only with nDCG's default dcg='log2' (ir_measures "
            "computes it with pytrec_eval, which has no other)")
    out: dict[int, float] = {}
    for grade, gain in gains.items():
        for what, v in (("grade", grade), ("gain", gain)):
            if not isinstance(v, int) or isinstance(v, bool):
                raise UnknownMeasureError(
                    f"measure {key!r}: gains maps integer grades to integer gains (ir_measures "
                    f"hands them to pytrec_eval as grades); {what} {v!r} is not an integer")
        if grade < 0:
            if gain >= 0:
                raise UnknownMeasureError(
                    f"measure {key!r}: gains gives the negative (unjudged) grade {grade} the "
                    f"gain {gain}; qafast does not judge unjudged documents")
            continue
        if gain < 0 and params.get("judged_only"):
            raise UnknownMeasureError(
                f"measure {key!r}: gains makes grade {grade} unjudged (gain {gain}) and "
                "judged_only drops the unjudged documents; qafast does not drop judged ones")
        out[grade] = float(max(gain, 0))
    return out


def _diversity_column(base: str, params: dict, key) -> Column:
    """The column of ir_measures' diversity measure ``base``: ``k`` its cutoff (0 for NRBP,
    nNRBP, AP_IA), ``values`` (alpha, beta) as ir_measures' pyndeval provider passes them
    (alpha 0.5 but where alpha_DCG, alpha_nDCG, NRBP and nNRBP set it; beta 0.5 but where
    NRBP and nNRBP set it)."""
    _check_ir_params(base, params, key)
    if params.get("judged_only"):
        raise UnknownMeasureError(
            f"measure {key!r}: judged_only on one diversity measure is not supported; pass "
            "judged_only=True to evaluate, which drops the unjudged documents for every measure")
    unit = {}
    for p in ("alpha", "beta"):
        v = float(params.get(p, 0.5))
        if not 0.0 <= v <= 1.0:
            raise UnknownMeasureError(f"measure {key!r}: {p}={params[p]!r} is not from 0 to 1 "
                                      "(ndeval's range)")
        unit[p] = v
    k = int(params.get("cutoff", 0))
    if k > _DIVERSITY_MAX_CUTOFF:
        raise UnknownMeasureError(f"measure {key!r}: the cutoff {k} is too large for a "
                                  f"diversity measure (at most {_DIVERSITY_MAX_CUTOFF})")
    return _column(key, base, k=k, x=unit["alpha"], rel=params.get("rel"),
                   tool="ir_measures")._replace(values=(unit["alpha"], unit["beta"]))


#: ndeval's values are curves over depths 1..k held for every query at once
_DIVERSITY_MAX_CUTOFF = 100_000
#: cwl_eval's user models (ir_measures' cwl_eval provider): measure -> (the parameter x
#: holds, its default). Gains come from rel (RBP: 1 at a grade >= rel, else 0) or from
#: min_rel and max_rel (the others), which the column holds as its keys.
_IR_CWL: dict[str, tuple[str, float]] = {
    "RBP": ("p", 0.8), "BPM": ("T", 1.0), "SDCG": ("", 0.0), "NERR8": ("", 0.0),
    "NERR9": ("", 0.0), "NERR10": ("p", 0.9), "NERR11": ("T", 1.0), "INST": ("T", 1.0),
    "INSQ": ("T", 1.0),
}
#: the grades min_rel and max_rel may be: qafast's grades are int32
_CWL_REL_BOUND = 2**31


def _cwl_column(base: str, params: dict, key) -> Column:
    """The column of one of cwl_eval's user models, with the provider's rules for its
    parameters."""
    example = "RBP(rel=1)" if base == "RBP" else f"{base}(max_rel=3)"
    if "cutoff" in _IR_MEASURES[base][2]:
        example += "@10"
    for p in _IR_MEASURES[base][2]:
        if p not in params:
            raise UnknownMeasureError(
                f"measure {key!r}: {base} needs {'a cutoff' if p == 'cutoff' else p}, as "
                f"ir_measures' cwl_eval provider does, e.g. {example}")
    _check_ir_params(base, params, key)
    spelling = _ir_spelling(base, params, key)
    row = spelling.family
    name, default = _IR_CWL[base]
    x = float(params.get(name, default)) if name else 0.0
    if not math.isfinite(x):
        raise UnknownMeasureError(f"measure {key!r}: {name}={params[name]!r} is not finite")
    keys: tuple[int, ...] = ()
    if base != "RBP":
        low, high = params.get("min_rel", 0), params["max_rel"]
        for p, v in (("min_rel", low), ("max_rel", high)):
            if abs(v) > _CWL_REL_BOUND:
                raise UnknownMeasureError(f"measure {key!r}: {p}={v} is outside "
                                          f"[-2**31, 2**31]")
        if low >= high:
            raise UnknownMeasureError(f"measure {key!r}: min_rel must be less than max_rel "
                                      f"(min_rel={low}, max_rel={high})")
        keys = (low, high)
    col = _column(key, row.name, k=_depth(row, params.get("cutoff")), x=x,
                  rel=params.get("rel"), tool="ir_measures")
    return col._replace(keys=keys, values=tuple(float(v) for v in keys))


def _own_columns(text: str, s: str) -> list[Column] | None:
    """qafast's own @k names and ``family@k`` for trec_eval's cut-off families, or None."""
    name, at, k_text = s.partition("@")
    if at and not re.fullmatch(r"\d+", k_text):
        return None
    own = _spelling_index().own
    if name in own:
        row = own[name].get(bool(at))
        if row is None:
            raise UnknownMeasureError(
                f"measure {text!r} needs a cutoff, e.g. {name}@10" if not at
                else f"measure {text!r}: {name} takes no cutoff")
    elif at and name in CUT_FAMILIES:
        row = FAMILIES[name]
    else:
        return None
    if not at:
        return [_column(text, row.name, k=_depth(row, None))]
    k = int(k_text)
    if k <= 0:
        raise UnknownMeasureError(f"measure {text!r}: the cutoff must be positive")
    return [_column(text, row.name, k=k)]


# --------------------------------------------------------------------------------------------
# Requests


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
            cols.extend(columns_for(fam, None, s))
        return cols
    if s in FAMILIES:  # trec_eval's names come first: "map", "recall", "ndcg" are theirs
        return columns_for(s, None, text)
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
        return columns_for(fam, params, text)
    # trec_eval printed names: P_5, iprec_at_recall_0.10, ndcg_1=3,2=9, utility_2,-1,0,0
    for fam in sorted(FAMILIES, key=len, reverse=True):
        if s.startswith(fam + "_") and len(s) > len(fam) + 1:
            cols = columns_for(fam, s[len(fam) + 1:], text)
            if len(cols) == 1:
                return [Column(s, cols[0].family, cols[0].k, cols[0].x, cols[0].keys,
                               cols[0].values)]
    raise UnknownMeasureError(_unknown(text))


def known_names() -> dict[str, bool]:
    """Every measure name a user may type, without parameters: name -> takes a cutoff."""
    names: dict[str, bool] = {}
    for fam, row in FAMILIES.items():
        names[fam] = row.params == "cut"
    for nick in NICKNAMES:
        names[nick] = False
    index = _spelling_index()
    for base in index.ranx_bases:
        names[base] = any(has_k and row.params == "cut"
                          for (b, has_k, _), (row, _) in index.ranx.items() if b == base)
    for name, forms in index.own.items():
        names[name] = True in forms
    for name in (*_IR_MEASURES, *_IR_ALIASES):
        base = _IR_ALIASES.get(name, (name, {}))[0]
        names[name] = "cutoff" in _IR_MEASURES[base][1] or base == "IPrec"
    return names



def _unknown(text) -> str:
    s = str(text).strip()
    base, at, k = s.partition("@")
    base = base.partition("(")[0].strip()
    names = known_names()
    by_lower: dict[str, list[str]] = {}
    for name in names:
        by_lower.setdefault(name.lower(), []).append(name)
    import difflib  # here: only a name that is not known needs it

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


def split_requests(text: str) -> list[str]:
    """The measure names in ``text``, split at whitespace outside parentheses and quotes:
    ir_measures' command line takes ``'nDCG@10 P@5 AP'`` as three measures, and a parameter
    list such as ``nDCG(dcg='exp-log2', judged_only=True)@10`` stays one."""
    names: list[str] = []
    start = depth = 0
    quote = ""
    for i, ch in enumerate(text):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(depth - 1, 0)
        elif ch.isspace() and depth == 0:
            if i > start:
                names.append(text[start:i])
            start = i + 1
    if len(text) > start:
        names.append(text[start:])
    return names


def parse_measures(measures, *, version: str = "10.0") -> list[Column]:
    """Columns for a measure request: one name or an iterable of names.

    A name is trec_eval's (``map``, ``P_5``, ``ndcg_cut.10,20``, ``all_trec``), ranx's
    (``ndcg@10``, ``hits@10``, ``map@100-l2``, ``rbp.95``), ir_measures' (``nDCG@10``,
    ``P(rel=2)@5``, ``RR@10``, or an ir_measures measure object) or qafast's own
    (``hit@10``, ``ndcg_exp@10``); each means what its tool computes. Duplicated output
    names keep their first occurrence. A family named twice in trec_eval form (``P.5`` then
    ``P.10``) yields both sets of columns. One str naming several measures, separated by
    spaces (``"nDCG@10 P@5 AP"``, as ir_measures' command line takes them), is that list.
    """
    if isinstance(measures, str):
        measures = split_requests(measures) or [measures]
    elif _is_ir_measure(measures):
        measures = [measures]
    try:
        items = list(measures)
    except TypeError:
        raise InputTypeError("measures must be a str or an iterable of str, not "
                             f"{type(measures).__name__}") from None
    if not items:
        raise InputError("no measure requested")
    if all(type(item) is str for item in items):
        # a program evaluating many runs names the same measures each call: their columns
        # are immutable, so the parse is kept (a new list each call, which callers may edit)
        return list(_parse_names(tuple(items), version))
    return _parse_items(items, version)


@functools.lru_cache(maxsize=256)
def _parse_names(names: tuple[str, ...], version: str) -> tuple[Column, ...]:
    """parse_measures of a tuple of names, kept for the next call with the same names."""
    return tuple(_parse_items(names, version))


def _parse_items(items, version: str) -> list[Column]:
    """The columns of ``items`` (names or ir_measures objects), duplicates dropped."""
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
    split = [name for req in requests or () for name in split_requests(req) or [req]]
    for req in split or ["official"]:
        fam, dot, params = req.partition(".")
        if fam in nick or fam in TREC_ORDER:
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
                                      f"{', '.join(TREC_ORDER)} "
                                      f"and the nicknames {', '.join(nick)}")
    cols: list[Column] = []
    for fam in TREC_ORDER:
        if fam in marked:
            cols.extend(columns_for(fam, marked[fam], fam))
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


def kernel_arrays(columns: list[Column]) -> tuple[array, array, array, array, array, array]:
    """The measure kernels' per-column arrays: codes, integer parameters, float parameters,
    and the CSR (offsets, keys, values) of gain maps and coefficient lists (``array.array``
    buffers, which the kernels take as they take numpy arrays)."""
    loffs = [0]
    lkeys: list[int] = []
    lvals: list[float] = []
    for c in columns:
        row = BY_NAME[c.family]
        if row.params == "floats" and row.arity != 1:  # utility's coefficients, 11pt_avg's points
            lkeys.extend([0] * len(c.values))
            lvals.extend(c.values)
        elif c.keys:
            lkeys.extend(c.keys)
            lvals.extend(c.values)
        loffs.append(len(lkeys))
    return (array("i", [c.code | (JUDGED_ONLY_FLAG if c.judged_only else 0) for c in columns]),
            array("q", [min(c.k, NO_CUTOFF) for c in columns]),
            array("d", [c.x for c in columns]), array("q", loffs), array("q", lkeys),
            array("d", lvals))


#: the largest collection size utility takes: the kernel holds it in a double, exact up to
#: here (trec_eval holds a long)
MAX_COLLECTION_SIZE = 2**53


def with_collection_size(columns: list[Column], size: int) -> list[Column]:
    """``columns`` with utility's measured for a collection of ``size`` documents
    (trec_eval's ``-N``): its fourth coefficient multiplies the non-relevant documents not
    retrieved, N + (relevant retrieved) - n - R, which is negative for a collection smaller
    than the documents counted, as trec_eval computes it. The kernel reads N as the column's
    fifth value; 0 (trec_eval's default) leaves the columns as they are."""
    try:
        if isinstance(size, bool):
            raise TypeError
        size = operator.index(size)  # an int, or numpy's; without importing numpy
    except TypeError:
        raise InputTypeError(f"the collection size must be an int, not "
                             f"{type(size).__name__}") from None
    if abs(size) > MAX_COLLECTION_SIZE:
        raise InputError(f"the collection size {size} is too large (at most 2**53 documents)")
    if size == 0:
        return columns
    return [c._replace(values=c.values[:4] + (float(size),)) if c.family == "utility" else c
            for c in columns]


def reads_subtopics(columns: list[Column], qrels: Any = None) -> bool:
    """Whether a call reads diversity qrels: it asks for a diversity measure (a row with
    ``subtopics``), or its qrels are a ``qafast.DiversityQrels`` (recognised without
    loading its module)."""
    return (any(c.family in SUBTOPIC_FAMILIES for c in columns)
            or type(qrels).__module__ == "qafast.diversity")
