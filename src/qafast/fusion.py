"""Fusing runs: ranx's unsupervised fusion methods and score normalisations.

:func:`fuse` combines several runs of the same queries into one :class:`~qafast.Run`, with
ranx 0.3.21's formulas and defaults; on runs without tied scores its output is ranx's (the
same documents, the same scores to float rounding, the same order). It works on the encoded
runs, in one compiled pass over each query; ``qafast fuse`` does the same on TREC files.

Methods (``method=``; ranx's names, and the aliases in parentheses):

==================  ==================================================================
``rrf``             Reciprocal Rank Fusion: ``sum 1 / (k + rank)``, ``k=60``
``sum``             CombSUM (``combsum``, ``comb_sum``)
``mnz``             CombMNZ: the sum times the number of runs that retrieved the document
``anz``             CombANZ: the sum over that number
``max``, ``min``    CombMAX, CombMIN
``med``             CombMED: the median
``gmnz``            CombGMNZ: the sum times that number to the power ``gamma``
``wsum``            weighted sum (``weighted_sum``); needs ``weights``
``wmnz``            weighted MNZ
``mixed``           Mixed (Wu et al.): the weighted sum times the number's square root
``isr``             Inverse Square Rank: ``sum 1 / rank**2`` times the number
``log_isr``         the ISR sum times ``log(number)``
``logn_isr``        the ISR sum times ``log(number + sigma)``, ``sigma=0.01``
``rbc``             Rank-Biased Centroid: ``sum (1 - phi) * phi**(rank - 1)``; needs ``phi``
``bordafuse``       BordaFuse (``borda_fuse``)
``w_bordafuse``     weighted BordaFuse (``weighted_bordafuse``)
``condorcet``       CondorcetFuse
``w_condorcet``     weighted CondorcetFuse (``weighted_condorcet``)
==================  ==================================================================

The weighted methods take one weight per run (``weights=``, 1 each by default).
ranx's supervised methods (probfuse, segfuse, slidefuse, bayesfuse, posfuse, mapfuse) and its
weight search (``optimize_fusion``) are not offered.

Normalisations (``norm=``, applied to each run and query before fusing; default
``"min-max"``, as ranx's ``fuse``): ``"min-max"``, ``"min-max-inverted"``, ``"max"``,
``"sum"``, ``"zmuv"`` (zero mean, unit variance), ``"rank"``, ``"borda"``, or ``None``.
Rank-based methods (rrf, isr, log_isr, logn_isr, rbc, the Borda and Condorcet methods) read
only each run's order, which no normalisation changes, except that ``min-max-inverted``
reverses it and ``borda`` adds the candidates a run missed at its end.

``qafast.reference.fusion`` defines every formula, and the rules where ranx leaves the
result to chance: tied scores rank by document id descending (as trec_eval ranks them), and
a query missing from a run counts as an empty query of that run. ``docs/known-differences.md``
lists where qafast's answer differs from ranx's.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from numbers import Real
from typing import Any

import numpy as np

from . import _kernels
from ._ranked import EMPTY_U8, Run, as_run, from_encoded
from ._threads import parts, resolve_workers, thread_pool
from .errors import InputError, InputTypeError

__all__ = ["FUSION_METHODS", "FUSION_NORMS", "fuse"]

#: Each method's name (ranx's) and what it takes: ``(weights, parameters)``.
FUSION_METHODS: dict[str, tuple[bool, tuple[str, ...]]] = {
    "sum": (False, ()), "mnz": (False, ()), "anz": (False, ()), "max": (False, ()),
    "min": (False, ()), "med": (False, ()), "gmnz": (False, ("gamma",)),
    "wsum": (True, ()), "wmnz": (True, ()), "mixed": (True, ()),
    "rrf": (False, ("k",)), "isr": (False, ()), "log_isr": (False, ()),
    "logn_isr": (False, ("sigma",)), "rbc": (False, ("phi",)),
    "bordafuse": (False, ()), "w_bordafuse": (True, ()),
    "condorcet": (False, ()), "w_condorcet": (True, ()),
}

#: The normalisations (ranx's names; ``None``: none).
FUSION_NORMS = ("min-max", "min-max-inverted", "max", "sum", "zmuv", "rank", "borda", None)

_ALIASES = {
    "combsum": "sum", "comb_sum": "sum", "combmnz": "mnz", "comb_mnz": "mnz",
    "combanz": "anz", "comb_anz": "anz", "combmax": "max", "comb_max": "max",
    "combmin": "min", "comb_min": "min", "combmed": "med", "comb_med": "med",
    "combgmnz": "gmnz", "comb_gmnz": "gmnz", "weighted_sum": "wsum",
    "borda_fuse": "bordafuse", "weighted_bordafuse": "w_bordafuse",
    "weighted_condorcet": "w_condorcet",
}
_NORM_ALIASES = {"min_max": "min-max", "min_max_inverted": "min-max-inverted", "none": None}
# fewer entries than this are fused on the calling thread: a thread's start costs more
_PARALLEL_ROWS = 100_000
# defaults of the parameters that have one (ranx's); gamma and phi have none
_DEFAULTS = {"k": 60.0, "sigma": 0.01}


def _method(method) -> str:
    if not isinstance(method, str):
        raise InputTypeError(f"method must be a str, not {type(method).__name__}")
    name = _ALIASES.get(method.lower(), method.lower())
    if name not in FUSION_METHODS:
        raise InputError(f"unknown fusion method {method!r}; the methods are "
                         f"{', '.join(FUSION_METHODS)}")
    return name


def _norm(norm):
    if norm is not None and not isinstance(norm, str):
        raise InputTypeError(f"norm must be a str or None, not {type(norm).__name__}")
    name = _NORM_ALIASES.get(norm.lower(), norm.lower()) if norm is not None else None
    if name not in FUSION_NORMS:
        raise InputError(f"unknown normalisation {norm!r}; the normalisations are "
                         f"{', '.join(str(n) for n in FUSION_NORMS)}")
    return name


def _number(name: str, value, method: str) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise InputTypeError(f"{name} of method {method!r} must be a number, not "
                             f"{type(value).__name__}")
    value = float(value)
    if not math.isfinite(value):
        raise InputError(f"{name} of method {method!r} must be finite, not {value}")
    return value


def _params(method: str, given: dict) -> dict:
    takes = FUSION_METHODS[method][1]
    out = {}
    for name, value in given.items():
        if value is None:
            continue
        if name not in takes:
            raise InputError(f"method {method!r} takes no parameter {name!r}"
                             + (f" (it takes {', '.join(takes)})" if takes else ""))
        out[name] = _number(name, value, method)
    for name in takes:
        if name not in out:
            if name not in _DEFAULTS:
                raise InputError(f"method {method!r} needs {name}=")
            out[name] = _DEFAULTS[name]
    if "phi" in out and not 0.0 <= out["phi"] <= 1.0:
        raise InputError(f"phi of method 'rbc' must be in [0, 1], not {out['phi']}")
    if "sigma" in out and not 0.0 <= out["sigma"] <= 1.0:
        raise InputError(f"sigma of method 'logn_isr' must be in [0, 1], not {out['sigma']}")
    if "k" in out and out["k"] < 0:
        raise InputError(f"k of method 'rrf' must be 0 or more, not {out['k']}")
    return out


def _weights(method: str, weights, n_runs: int) -> np.ndarray:
    if weights is None:
        return np.ones(n_runs, dtype=np.float64)
    if not FUSION_METHODS[method][0]:
        weighted = ", ".join(m for m, (w, _) in FUSION_METHODS.items() if w)
        raise InputError(f"method {method!r} takes no weights (the weighted methods are "
                         f"{weighted})")
    if isinstance(weights, (str, bytes, Mapping)) or not isinstance(weights, Sequence | np.ndarray):
        raise InputTypeError(f"weights must be a list of numbers, one per run, not "
                             f"{type(weights).__name__}")
    if len(weights) != n_runs:
        raise InputError(f"{len(weights)} weights for {n_runs} runs; give one per run")
    return np.array([_number("a weight", w, method) for w in weights], dtype=np.float64)


def _runs(runs, workers: int) -> list[Run]:
    if isinstance(runs, (Mapping, str, bytes, os.PathLike, Run)) or not hasattr(runs,
                                                                                 "__iter__"):
        raise InputTypeError("runs must be a list of runs (dicts, qafast.Run, files, ...), not "
                             f"a {type(runs).__name__}")
    out = [as_run(r, workers) for r in runs]
    if not out:
        raise InputError("fuse needs at least one run")
    filled = [i for i, r in enumerate(out) if r.num_entries]   # an empty run has no id kind
    if filled and any(out[i].string_ids != out[filled[0]].string_ids for i in filled):
        i = next(i for i in filled if out[i].string_ids != out[filled[0]].string_ids)
        j = filled[0]
        raise InputTypeError(f"run {i} ({out[i].source}) has "
                             f"{'str' if out[i].string_ids else 'integer'} document ids, run {j} "
                             f"{'str' if out[j].string_ids else 'integer'} ones; use one kind")
    qkinds = {type(q) for r in out for q in r.query_ids[:1]}
    if len(qkinds) > 1:
        raise InputTypeError("the runs' query ids mix str and int; use one type")
    if filled and not out[filled[0]].string_ids and len({out[i].id_bias for i in filled}) > 1:
        out = [_biased(r) if r.num_entries else r for r in out]
    return out


def _biased(run: Run) -> Run:
    """An integer-id run stored as id - 2**63 (as runs with ids of 2**63 and above are)."""
    if run.id_bias:
        return run
    if run.num_entries and int(run.hashes.min()) < 0:
        i = int(np.argmin(run.hashes))
        raise InputError(f"{run.where(i)}: document id {run.doc_id(i)} is negative while "
                         "another run has ids of 2**63 and above; integer document ids must "
                         "fit in int64 or in uint64")
    hashes = run.hashes ^ np.int64(-2**63)
    return from_encoded(Run, run.query_ids, run.offsets, run.values, hashes, tiekeys=hashes,
                        id_bias=True, source=run.source)


def _layout(runs: list[Run]):
    """The runs as one table of entries, query-major and run-minor (see
    ``_fusion_kernels.pxi``): ``(query_ids, seg_off, scores, hashes, tiekeys, bstart, bend,
    blob, string_ids, id_bias)``; a run without entries takes no part in the id kind."""
    R = len(runs)
    qindex: dict = {}
    for run in runs:
        for q in run.query_ids:
            qindex.setdefault(q, len(qindex))
    nq = len(qindex)
    counts = np.zeros((nq, R), dtype=np.int64)
    qmaps = []
    for j, run in enumerate(runs):
        qmap = np.fromiter((qindex[q] for q in run.query_ids), dtype=np.int64,
                           count=len(run.query_ids))
        counts[qmap, j] = np.diff(run.offsets)
        qmaps.append(qmap)
    seg_off = np.zeros(nq * R + 1, dtype=np.int64)
    np.cumsum(counts.ravel(), out=seg_off[1:])
    total = int(seg_off[-1])
    scores = np.empty(total, dtype=np.float64)
    hashes = np.empty(total, dtype=np.int64)
    tiekeys = np.empty(total, dtype=np.int64)
    filled = [run for run in runs if run.num_entries]
    strings = filled[0].string_ids if filled else True
    id_bias = filled[0].id_bias if filled else False
    bstart = np.empty(total if strings else 0, dtype=np.int64)
    bend = np.empty(total if strings else 0, dtype=np.int64)
    blobs = []
    blob_base = 0
    for j, (run, qmap) in enumerate(zip(runs, qmaps)):
        n = run.num_entries
        if n == 0:
            continue
        lens = np.diff(run.offsets)
        dest = np.repeat(seg_off[qmap * R + j] - run.offsets[:-1], lens)
        dest += np.arange(n, dtype=np.int64)
        scores[dest] = run.values
        hashes[dest] = run.hashes
        if not strings:
            tiekeys[dest] = run.hashes
            continue
        keys = run.keys if run.keys is not None else np.arange(n, dtype=np.int64)
        bstart[dest] = run.key_off[keys] + blob_base
        bend[dest] = run.key_off[keys + 1] + blob_base
        if run.tiekeys is not None:
            tiekeys[dest] = run.tiekeys
        else:   # a run built without tie keys: the kernel's, from the bytes
            hk = np.empty(len(run.key_off) - 1, dtype=np.int64)
            tk = np.empty(len(run.key_off) - 1, dtype=np.int64)
            _kernels.hash_keys(run.key_off, run.blob, hk, tk)
            tiekeys[dest] = tk[keys]
        blobs.append(run.blob)
        blob_base += len(run.blob)
    blob = np.concatenate(blobs) if blobs else EMPTY_U8
    return list(qindex), seg_off, scores, hashes, tiekeys, bstart, bend, blob, strings, id_bias


def fuse(runs: Sequence[Any], *, method: str = "rrf", norm: str | None = "min-max",
         weights: Sequence[float] | None = None, k: float | None = None,
         gamma: float | None = None, phi: float | None = None, sigma: float | None = None,
         params: Mapping[str, Any] | None = None, workers: int = 1) -> Run:
    """Fuse several runs of the same queries into one, as ranx's ``fuse`` does.

    Parameters
    ----------
    runs : list of runs
        Two or more runs (one is allowed), each anything :func:`qafast.evaluate` takes as a
        run: ``{query_id: {doc_id: score}}`` dicts, :class:`qafast.Run` objects, TREC run
        files, DataFrames, Arrow tables or Parquet files. Document ids must be of one kind
        (all str or all integer) across the runs.
    method : str, default="rrf"
        The fusion method, by ranx's name (see the module's table): ``"rrf"``, ``"sum"``,
        ``"mnz"``, ``"anz"``, ``"max"``, ``"min"``, ``"med"``, ``"gmnz"``, ``"wsum"``,
        ``"wmnz"``, ``"mixed"``, ``"isr"``, ``"log_isr"``, ``"logn_isr"``, ``"rbc"``,
        ``"bordafuse"``, ``"w_bordafuse"``, ``"condorcet"``, ``"w_condorcet"``.
    norm : str or None, default="min-max"
        The normalisation of each run's scores, per query, before fusing: ``"min-max"``,
        ``"min-max-inverted"``, ``"max"``, ``"sum"``, ``"zmuv"``, ``"rank"``, ``"borda"`` or
        ``None``. The default is ranx's.
    weights : list of float, default=None
        One weight per run, for the weighted methods (``wsum``, ``wmnz``, ``mixed``,
        ``w_bordafuse``, ``w_condorcet``); ``None`` weighs each run 1.
    k : float, default=None
        RRF's constant (``None``: 60).
    gamma : float, default=None
        CombGMNZ's exponent (required by ``gmnz``).
    phi : float, default=None
        RBC's persistence, in [0, 1] (required by ``rbc``).
    sigma : float, default=None
        logn_ISR's constant, in [0, 1] (``None``: 0.01).
    params : dict, default=None
        The parameters (and ``weights``) as ranx's ``fuse`` takes them, e.g.
        ``{"weights": [0.3, 0.7]}``; the keyword arguments above win.
    workers : int, default=1
        Threads (-1: every core); the result does not depend on it.

    Returns
    -------
    Run
        The fused run: every query of any run (in the order first seen, run by run), its
        documents in rank order (fused score descending, ties by document id descending),
        named after the method (``run.run_id``).

    Notes
    -----
    A query missing from some runs is fused from the runs that have it (ranx refuses such
    runs). A document a run did not retrieve takes no part in that run's normalisation and
    adds nothing to a sum; ``max``/``min`` count it as -1e9/1e9, as ranx does. Tied scores
    within a run rank by document id descending (ranx's order among them is its sort's).
    ``qafast.reference.fusion`` is the full definition.

    Examples
    --------
    >>> import qafast
    >>> bm25 = {"q1": {"d1": 12.0, "d2": 9.5, "d3": 7.1}}
    >>> dense = {"q1": {"d2": 0.91, "d4": 0.84, "d1": 0.32}}
    >>> fused = qafast.fuse([bm25, dense], method="rrf")
    >>> fused.to_dict()
    {'q1': {'d2': 0.03252247488101534, 'd1': 0.032266458495966696, 'd4': 0.016129032258064516, 'd3': 0.015873015873015872}}
    >>> qafast.fuse([bm25, dense], method="wsum", weights=[0.3, 0.7]).to_dict()["q1"]["d2"]
    0.846938775510204
    >>> qafast.evaluate({"q1": {"d4": 1}}, fused, "recip_rank")
    {'recip_rank': 0.3333333333333333}
    """
    name = _method(method)
    norm_name = _norm(norm)
    given = {"k": k, "gamma": gamma, "phi": phi, "sigma": sigma}
    if params is not None:
        if not isinstance(params, Mapping):
            raise InputTypeError(f"params must be a dict, not {type(params).__name__}")
        for key, value in params.items():
            if key == "weights":
                weights = value if weights is None else weights
            elif key not in given:
                raise InputError(f"unknown fusion parameter {key!r} (the parameters are "
                                 "k, gamma, phi, sigma and weights)")
            elif given[key] is None:
                given[key] = value
    values = _params(name, given)
    n_threads = resolve_workers(workers)
    encoded = _runs(runs, n_threads)
    w = _weights(name, weights, len(encoded))
    (query_ids, seg_off, scores, hashes, tiekeys, bstart, bend, blob, strings,
     id_bias) = _layout(encoded)
    R = len(encoded)
    nq = len(query_ids)
    total = int(seg_off[-1])
    out_count = np.zeros(nq, dtype=np.int64)
    out_entry = np.empty(total, dtype=np.int64)
    out_score = np.empty(total, dtype=np.float64)
    args = (seg_off, scores, hashes, tiekeys, bstart, bend, blob, w,
            _kernels.FUSION_METHODS.index(name), _kernels.FUSION_NORMS.index(norm_name),
            values.get("k", 0.0), values.get("gamma", 0.0), values.get("phi", 0.0),
            values.get("sigma", 0.0))
    chunks = parts(nq, n_threads if total > _PARALLEL_ROWS else 1) if nq else []
    if len(chunks) > 1:
        done = list(thread_pool(len(chunks)).map(
            lambda lh: _kernels.fuse_queries(*args, lh[0], lh[1], out_count, out_entry,
                                             out_score), chunks))
    else:
        done = [_kernels.fuse_queries(*args, lo, hi, out_count, out_entry, out_score)
                for lo, hi in chunks]
    if any(rc != 0 for rc in done):
        raise MemoryError("fuse: out of memory for the largest query's tables")
    offsets = np.zeros(nq + 1, dtype=np.int64)
    np.cumsum(out_count, out=offsets[1:])
    rows = np.repeat(seg_off[0:nq * R:R] - offsets[:-1], out_count)
    rows += np.arange(int(offsets[-1]), dtype=np.int64)
    entries = out_entry[rows]
    fused = out_score[rows]
    source = f"fused run ({name})"
    key_off = out_blob = None
    if strings:
        start, end = bstart[entries], bend[entries]
        key_off = np.zeros(len(entries) + 1, dtype=np.int64)
        np.cumsum(end - start, out=key_off[1:])
        out_blob = np.empty(int(key_off[-1]), dtype=np.uint8)
        _kernels.gather_bytes(start, end, blob, key_off, out_blob)
    out = from_encoded(Run, query_ids, offsets, fused, hashes[entries], tiekeys=tiekeys[entries],
                       key_off=key_off, blob=out_blob, id_bias=id_bias,
                       source=source)
    out.run_id = name
    bad = np.isnan(fused)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        q = query_ids[int(np.searchsorted(offsets, i, side="right")) - 1]
        raise InputError(f"fuse: query {q!r}, document {out.doc_id(i)!r}: the fused score is "
                         f"NaN; a run's scores include infinities, which norm={norm_name!r} "
                         "cannot scale (use finite scores, or norm=None)")
    return out


# -- command line -------------------------------------------------------------------------

def register_cli(subparsers) -> dict:
    p = subparsers.add_parser(
        "fuse", help="fuse TREC runs into one (RRF, CombSUM, ... as ranx fuses them)",
        description="Fuse several TREC run files into one TREC run (qid Q0 doc rank score "
                    "tag), with ranx's fusion methods and normalisations. The result is "
                    "written to stdout, or to OUT (.gz: compressed).")
    p.add_argument("runs", nargs="+", metavar="RUN", help="run files ('-' for stdin, once)")
    p.add_argument("--method", default="rrf", metavar="NAME",
                   help=f"fusion method (default rrf): {', '.join(FUSION_METHODS)}")
    p.add_argument("--norm", default="min-max", metavar="NAME",
                   help="score normalisation (default min-max): "
                        f"{', '.join(str(n).lower() for n in FUSION_NORMS)}")
    p.add_argument("--weights", metavar="W,W,...",
                   help="one weight per run, comma-separated (weighted methods)")
    p.add_argument("--k", type=float, help="RRF's k (default 60)")
    p.add_argument("--gamma", type=float, help="gmnz's gamma")
    p.add_argument("--phi", type=float, help="rbc's phi")
    p.add_argument("--sigma", type=float, help="logn_isr's sigma (default 0.01)")
    p.add_argument("--depth", type=int, metavar="N",
                   help="write only the top N documents of each query")
    p.add_argument("--tag", default=None,
                   help="the run tag, the last column (default: the method's name)")
    p.add_argument("-o", "--output", default="-", metavar="OUT",
                   help="output file (default '-': stdout)")
    p.add_argument("-w", "--workers", type=int, default=1, metavar="N",
                   help="threads (-1: all cores)")
    p.add_argument("--no-progress", action="store_true",
                   help="no progress bar (fusing draws none; accepted as every subcommand "
                        "accepts it)")
    return {"fuse": _run_fuse}


def _run_fuse(args) -> int:
    import sys

    if args.runs.count("-") > 1:
        raise InputError("standard input ('-') can be read only once")
    runs = [Run.from_file(sys.stdin.buffer if r == "-" else r, workers=args.workers)
            for r in args.runs]
    weights = None
    if args.weights is not None:
        try:
            weights = [float(x) for x in args.weights.replace(",", " ").split()]
        except ValueError:
            raise InputError(f"--weights takes numbers separated by commas, not "
                             f"{args.weights!r}") from None
    fused = fuse(runs, method=args.method, norm=args.norm, weights=weights, k=args.k,
                 gamma=args.gamma, phi=args.phi, sigma=args.sigma, workers=args.workers)
    if args.output == "-":
        fused.to_trec(sys.stdout.buffer, tag=args.tag, depth=args.depth)
        sys.stdout.buffer.flush()
    else:
        fused.save(args.output, tag=args.tag, depth=args.depth)
    return 0
