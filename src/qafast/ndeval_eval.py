"""ndeval, the TREC Web track's diversity measures: :func:`ndeval` and ``qafast ndeval``.

``ndeval`` (version 4.5, 2013) reads diversity qrels (``topic subtopic docno judgment``) and
a TREC run and prints, for each topic of the run, ERR-IA, nERR-IA, alpha-DCG and alpha-nDCG
at 5, 10 and 20, NRBP, nNRBP, MAP-IA, P-IA and subtopic recall (strec) at 5, 10 and 20, then
their mean (``amean``). ``qafast ndeval`` prints what it prints, byte for byte; the rules are
written out in :mod:`qafast.reference.diversity`.
"""
from __future__ import annotations

import re
import sys

import numpy as np

from . import _kernels
from .errors import FormatError, InputError
from .io._text import read_bytes
from .reference import diversity as _spec

__all__ = ["ndeval"]

#: The depth ndeval prints at most.
_DEPTH = 20


def _lines(data: bytes) -> list[bytes]:
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return lines


def _whole(token: bytes) -> int:
    if len(token) <= 6 and token.isdigit():
        return int(token)
    return _spec.natural_number(token)


def _columns_fast(data: bytes, fields: int) -> list[np.ndarray] | None:
    """The columns of a file whose lines are ``fields`` tokens split by single spaces (as
    files are written), as byte-string arrays; None for any other layout (the line-by-line
    path then reads it)."""
    if not data.endswith(b"\n") or any(c in data for c in (b"\t", b"\r", b"\x0b", b"\x0c",
                                                            b"  ", b"\n ", b" \n", b"\x00")):
        return None
    if data.startswith(b" "):
        return None
    buf = np.frombuffer(data, np.uint8)
    ends = np.flatnonzero(buf == 10)
    spaces = np.flatnonzero(buf == 32)
    per_line = np.bincount(np.searchsorted(ends, spaces), minlength=len(ends))
    if len(per_line) != len(ends) or (per_line != fields - 1).any():
        return None
    tokens = np.array(data.split(), dtype=bytes)
    if len(tokens) != fields * len(ends):
        return None
    return [tokens[i::fields] for i in range(fields)]


def _whole_fast(column: np.ndarray) -> np.ndarray | None:
    """Whole numbers of up to 6 digits (all of which ndeval reads as written); None if any
    token is another spelling."""
    if np.char.str_len(column).max() > 6 or not np.char.isdigit(column).all():
        return None
    return column.astype(np.int64)


def _scan(data: bytes, fields: int, int_cols: tuple[int, ...]):
    """``(whole numbers, docno ids, docnos)`` of a file whose lines are ``fields`` tokens split
    by single spaces (as files are written), its columns ``int_cols`` whole numbers of up to
    6 digits (which ndeval reads as written) and its docnos (column 3) interned in order of
    first appearance; None for any other layout (the line-by-line path then reads it)."""
    if not data.endswith(b"\n"):
        return None
    # numpy's vectorised compare counts the lines several times faster than bytes.count
    n = int(np.count_nonzero(np.frombuffer(data, np.uint8) == 10))
    ints = np.empty((n, fields), np.int64)
    ids, first, length = np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n, np.int64)
    k = _kernels.ndeval_scan(data, fields, 2, sum(1 << c for c in int_cols), ints, ids, first,
                             length)
    if k < 0:
        return None
    names = [data[a:a + b] for a, b in zip(first[:k].tolist(), length[:k].tolist())]
    return ints, ids, names


class _Qrels:
    """The qrels, integer-encoded: judged documents as CSR rows of relevant subtopics; line
    ``i``'s docno is ``names[ids[i]]``."""

    def __init__(self, data: bytes, name: str):
        if not data:
            raise FormatError("the qrels file is empty", path=name)
        scanned = _scan(data, 4, (0, 1, 3))
        if scanned is not None:
            ints, self.ids, self.names = scanned
            self.topic, self.subtopic = ints[:, 0].copy(), ints[:, 1].copy()
            self.judgment = np.minimum(ints[:, 3], 1)
            return
        lines = _lines(data)
        topic = np.empty(len(lines), np.int64)
        subtopic = np.empty(len(lines), np.int64)
        judgment = np.empty(len(lines), np.int64)
        docs = []
        for i, line in enumerate(lines):
            f = line.split()
            if len(f) < 4:
                raise FormatError(_spec.QRELS_FORM, path=name, line=i + 1)
            t, s, j = _whole(f[0]), _whole(f[1]), _whole(f[3])
            if t < 0 or s < 0 or j < 0:
                raise FormatError(_spec.QRELS_FORM, path=name, line=i + 1)
            topic[i], subtopic[i], judgment[i] = t, s, min(j, 1)
            docs.append(f[2])
        self.names, self.ids = docs, np.arange(len(docs), dtype=np.int64)
        self.topic, self.subtopic, self.judgment = topic, subtopic, judgment

    def encode(self, code: np.ndarray, ncodes: int) -> None:
        """Build the tables once the docnos have their codes (in byte order, below
        ``ncodes``)."""
        topic, subtopic, judgment = self.topic, self.subtopic, self.judgment
        n = len(topic)
        # a subtopic judged twice for one document takes its last judgment: rows sorted by
        # topic, docno, subtopic, then line (one stable radix sort of a combined key where it
        # fits in 62 bits; every part is a whole number)
        spread = (int(topic.max()) + 1) * ncodes * (int(subtopic.max()) + 1) if n else 0
        if spread < 1 << 62:
            key = (topic * np.int64(ncodes) + code) * np.int64(int(subtopic.max()) + 1)
            order = np.empty(n, np.int64)
            _kernels.stable_key_order(key + subtopic, order)
        else:
            order = np.lexsort((np.arange(n), subtopic, code, topic))
        t, s, c, j = topic[order], subtopic[order], code[order], judgment[order]
        new_topic = np.ones(n, bool)
        new_topic[1:] = t[1:] != t[:-1]
        doc_start = new_topic.copy()
        doc_start[1:] |= c[1:] != c[:-1]
        last = np.ones(n, bool)
        last[:-1] = doc_start[1:] | (s[1:] != s[:-1])
        # judged documents: one row per (topic, docno), in that order
        doc_row = np.cumsum(doc_start) - 1
        self.doc_topic = t[doc_start]
        self.doc_code = c[doc_start]
        rows = len(self.doc_topic)
        keep = last & (j > 0)
        self.rel_sub = s[keep].astype(np.int64)
        counts = np.bincount(doc_row[keep], minlength=rows)
        self.rel_offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        # topics: subtopic counts, and each subtopic's count of relevant judgments
        first_line = np.flatnonzero(new_topic)
        self.topics = t[first_line]
        self.doc_offsets = np.append(np.flatnonzero(new_topic[doc_start]), rows).astype(np.int64)
        self.subtopics = (np.maximum.reduceat(s + 1, first_line) if n
                          else np.zeros(0, np.int64)).astype(np.int64)
        self.nrel_offsets = np.concatenate(([0], np.cumsum(self.subtopics))).astype(np.int64)
        q = np.cumsum(new_topic) - 1
        self.nrel_sub = np.bincount(self.nrel_offsets[q] + s, weights=j,
                                    minlength=int(self.nrel_offsets[-1])).astype(np.int64)


_NUMBER = re.compile(rb"[+-]?(?:inf(?:inity)?|nan|(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?)",
                     re.IGNORECASE)


def _c_double(text: bytes) -> float | None:
    """The number C's ``sscanf("%lf")`` reads at the start of ``text`` (None: none)."""
    m = _NUMBER.match(text.lstrip())
    return float(m.group()) if m else None


class _Run:
    """A run: its rows ranked (by rank, or by score then docno with ``traditional``); line
    ``i``'s docno is ``names[ids[i]]``."""

    def __init__(self, data: bytes, name: str, source: str, traditional: bool):
        if not data:
            raise FormatError(f"the {source} file is empty", path=name)
        self.name, self.traditional = name, traditional
        scanned = None if traditional else _scan(data, 6, (0, 3))
        if scanned is not None:
            ints, self.ids, self.names = scanned
            self.topic, self.rank = ints[:, 0].copy(), ints[:, 3].copy()
            self.score = np.zeros(len(self.topic))
            self.runid = data[:data.index(b"\n")].split(b" ")[5]
            return
        lines = _lines(data)
        cols = _columns_fast(data, 6) if traditional else None
        if cols is not None:
            topic_, rank_ = _whole_fast(cols[0]), _whole_fast(cols[3])
            score_ = None
            if traditional:
                try:
                    score_ = cols[4].astype(np.float64)
                except ValueError:
                    topic_ = None
            if topic_ is not None and rank_ is not None:
                self.topic, self.rank = topic_, rank_
                self.score = score_ if score_ is not None else np.zeros(len(topic_))
                self.names = cols[2].tolist()
                self.ids = np.arange(len(self.names), dtype=np.int64)
                self.runid = bytes(cols[5][0])
                return
        n = len(lines)
        topic = np.empty(n, np.int64)
        rank = np.empty(n, np.int64)
        score = np.empty(n, np.float64)
        docs = []
        self.runid = b""
        for i, line in enumerate(lines):
            f = line.split(None, 6)
            if len(f) < 6:
                raise FormatError(_spec.RUN_FORM, path=name, line=i + 1)
            t = _whole(f[0]) if f[0][:1].isdigit() else _prefixed(line, f[0])
            r = _whole(f[3]) if t >= 0 else -1
            if r < 0:
                raise FormatError(_spec.RUN_FORM, path=name, line=i + 1)
            if traditional:
                v = _c_double(f[4])
                if v is None:
                    raise FormatError("the score is not a number (-traditional ranks by "
                                      "score)", path=name, line=i + 1)
                score[i] = v
            topic[i], rank[i] = t, r
            docs.append(f[2])
            if i == 0:
                self.runid = f[5]
        self.names, self.ids = docs, np.arange(len(docs), dtype=np.int64)
        self.topic, self.rank, self.score = topic, rank, score
        self.name, self.traditional = name, traditional

    def rank_rows(self, code: np.ndarray, depth: int, ncodes: int) -> None:
        """Order the rows (topic, then rank), check ndeval's rules, cut at ``depth``
        (``code``: each row's docno code, below ``ncodes``)."""
        topic, rank = self.topic, self.rank
        if self.traditional:
            order = np.lexsort((-code, -self.score, topic))
            t = topic[order]
            start = np.ones(len(t), bool)
            start[1:] = t[1:] != t[:-1]
            first = np.maximum.accumulate(np.where(start, np.arange(len(t)), 0))
            rank = np.empty_like(rank)
            rank[order] = np.arange(len(t)) - first + 1
        later = topic[1:] > topic[:-1]
        if (later | ((topic[1:] == topic[:-1]) & (rank[1:] > rank[:-1]))).all():
            # rows already in (topic, rank) order, as runs are mostly written: no sort, and
            # no rank can repeat within a topic
            order = np.arange(len(topic))
            t = topic
            start = np.ones(len(t), bool)
            start[1:] = later
        else:
            order = np.lexsort((rank, topic))
            t, r = topic[order], rank[order]
            dup = np.flatnonzero((t[1:] == t[:-1]) & (r[1:] == r[:-1]))
            if len(dup):
                raise FormatError(f"duplicate rank ({r[dup[0]]}) for topic {t[dup[0]]}",
                                  path=self.name)
            start = np.ones(len(t), bool)
            start[1:] = t[1:] != t[:-1]
        if depth > 0:
            first = np.maximum.accumulate(np.where(start, np.arange(len(t)), 0))
            keep = np.arange(len(t)) - first < depth
            if not keep.all():
                order, t, start = order[keep], t[keep], start[keep]
        c = code[order]
        if _kernels.ndeval_has_duplicate(t, c, ncodes):
            # the one reported is the first in (topic, docno) order
            by_doc = np.lexsort((c, t))
            tc, cc = t[by_doc], c[by_doc]
            dup = np.flatnonzero((tc[1:] == tc[:-1]) & (cc[1:] == cc[:-1]))
            docno = self.names[int(self.ids[order[by_doc[dup[0]]]])]
            raise FormatError(f"duplicate docno ({docno.decode('utf-8', 'replace')}) for "
                              f"topic {tc[dup[0]]}", path=self.name)
        self.order = order
        first_row = np.flatnonzero(start)
        self.topics = t[first_row]
        self.offsets = np.append(first_row, len(t)).astype(np.int64)
        self.code = c


def _prefixed(line: bytes, token: bytes) -> int:
    """A run topic that does not start with a digit: the specification's rules."""
    start = line.index(token)
    return _spec.run_topic(line, start, start + len(token))


def _measure(run: _Run, qrels: _Qrels, ncodes: int, alpha: float, beta: float,
             depth: int):
    """``(topics, curves, scalars)`` of the run's topics that have judgments."""
    judged = np.isin(run.topics, qrels.topics)
    rows = np.repeat(judged, np.diff(run.offsets))
    topics = run.topics[judged]
    lengths = np.diff(run.offsets)[judged]
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    topic_of = np.searchsorted(qrels.topics, topics).astype(np.int64)
    ranked = np.empty(int(offsets[-1]), np.int64)
    _kernels.ndeval_judged_rows(offsets, run.code if judged.all() else run.code[rows],
                                topic_of, qrels.doc_offsets, qrels.doc_code, ncodes, ranked)
    curves = np.empty((len(topics), 4 * depth))
    scalars = np.empty((len(topics), 2))
    _kernels.ndeval_topics(offsets, ranked, topic_of, qrels.rel_offsets, qrels.rel_sub,
                           qrels.subtopics, qrels.nrel_offsets, qrels.nrel_sub, alpha, beta,
                           curves, scalars)
    return topics, curves, scalars, topic_of


def _ideal(qrels: _Qrels, alpha: float, beta: float, depth: int):
    order = np.empty(len(qrels.doc_topic), np.int64)
    _kernels.ndeval_ideal(qrels.doc_offsets, qrels.rel_offsets, qrels.rel_sub,
                          qrels.subtopics, alpha, order)
    curves = np.empty((len(qrels.topics), 4 * depth))
    scalars = np.empty((len(qrels.topics), 2))
    _kernels.ndeval_topics(qrels.doc_offsets, order, np.arange(len(qrels.topics)),
                           qrels.rel_offsets, qrels.rel_sub, qrels.subtopics,
                           qrels.nrel_offsets, qrels.nrel_sub, alpha, beta, curves, scalars)
    return curves, scalars


def _normalised(curves, scalars, ideal_curves, ideal_scalars, topic_of, depth):
    """nERR-IA, alpha-nDCG (where alpha-DCG is not 0) and nNRBP (0/0 is NaN, as in C)."""
    err, dcg = curves[:, :depth], curves[:, depth:2 * depth]
    with np.errstate(divide="ignore", invalid="ignore"):
        nerr = np.where(dcg != 0, err / ideal_curves[topic_of, :depth], 0.0)
        ndcg = np.where(dcg != 0, dcg / ideal_curves[topic_of, depth:2 * depth], 0.0)
        nnrbp = scalars[:, 0] / ideal_scalars[topic_of, 0]
    return nerr, ndcg, nnrbp


def _columns(curves, scalars, nerr, ndcg, nnrbp) -> np.ndarray:
    d = curves.shape[1] // 4
    at = np.array([4, 9, 19])
    return np.column_stack([curves[:, at], nerr[:, at], curves[:, d + at], ndcg[:, at],
                            scalars[:, 0], nnrbp, scalars[:, 1], curves[:, 2 * d + at],
                            curves[:, 3 * d + at]])


def _values(qrels: bytes, run: bytes, names: tuple[str, str, str], baseline: bytes | None, *,
            alpha: float, beta: float, traditional: bool, all_topics: bool, depth: int,
            risk_alpha: float, risk_alpha_text: str):
    q = _Qrels(qrels, names[0])
    r = _Run(run, names[1], "run", traditional)
    b = _Run(baseline, names[2], "baseline", traditional) if baseline is not None else None
    docs = q.names + r.names + (b.names if b is not None else [])
    _codes, code = np.unique(np.array(docs, dtype=object).astype(bytes), return_inverse=True)
    code = code.astype(np.int64).ravel()
    ncodes = len(_codes)
    nq, nr = len(q.names), len(r.names)
    q.encode(code[:nq][q.ids], ncodes)
    ideal_curves, ideal_scalars = _ideal(q, alpha, beta, _DEPTH)

    def measured(run_: _Run, codes: np.ndarray):
        run_.rank_rows(codes, depth, ncodes)
        topics, curves, scalars, topic_of = _measure(run_, q, ncodes, alpha, beta, _DEPTH)
        cols = _columns(curves, scalars,
                        *_normalised(curves, scalars, ideal_curves, ideal_scalars, topic_of,
                                     _DEPTH))
        return dict(zip(topics.tolist(), cols.tolist()))

    values = measured(r, code[nq:nq + nr][r.ids])
    base = measured(b, code[nq + nr:][b.ids]) if b is not None else None
    label = r.runid
    if b is not None:
        label = (r.runid + b" (rel to. " + b.runid + b"; rs=1+a; a="
                 + risk_alpha_text.encode("utf-8", "surrogateescape") + b")")
    rows, amean = _spec.combine(r.topics.tolist(), values,
                                b.topics.tolist() if b is not None else [], base,
                                len(values), len(q.topics), all_topics=all_topics,
                                risk_alpha=risk_alpha)
    return label, rows, amean


def _check_unit(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)) or not (
            0.0 <= float(value) <= 1.0):
        raise InputError(f"{name}={value!r}: ndeval takes a value from 0 to 1")
    return float(value)


def ndeval(qrels, run, *, alpha: float = 0.5, beta: float = 0.5, traditional: bool = False,
           all_topics: bool = False, depth: int | None = None, baseline=None,
           risk_alpha: float = 0.0) -> dict[str, dict[str, float]]:
    """The TREC diversity measures as the TREC Web track's ``ndeval`` computes them.

    Parameters
    ----------
    qrels, run : path or bytes
        Diversity qrels (``topic subtopic docno judgment``; a judgment above 1 counts 1) and
        a TREC run (``topic Q0 docno rank score runid``, ranked by its rank column).
    alpha : float, default 0.5
        Redundancy intolerance of alpha-nDCG and NRBP (``-alpha``).
    beta : float, default 0.5
        Patience of NRBP (``-beta``).
    traditional : bool, default False
        Rank by score (highest first), then docno (greatest first), instead of by rank
        (``-traditional``).
    all_topics : bool, default False
        Average over every topic of the qrels (``-c``).
    depth : int, optional
        Keep only the first ``depth`` documents of each topic (``-M``).
    baseline : path or bytes, optional
        A baseline run: each value becomes the difference from the baseline's
        (``-baseline``).
    risk_alpha : float, default 0
        A loss against the baseline counts ``1 + risk_alpha`` times (``-riskAlpha``).

    Returns
    -------
    dict
        ``{topic: {measure: value}}`` for each topic ndeval prints, in its order, then
        ``"amean"``; the measures are ndeval's column names (``"alpha-nDCG@20"`` ...).

    Raises
    ------
    qafast.errors.FormatError
        A line ndeval rejects, naming the file and line, or a duplicate rank or docno.
    qafast.errors.InputError
        An option out of range.

    Examples
    --------
    >>> import qafast
    >>> qrels = b"1 1 d1 1\\n1 2 d2 1\\n1 2 d3 1\\n"
    >>> run = b"1 Q0 d2 1 0.9 bm25\\n1 Q0 d3 2 0.8 bm25\\n1 Q0 d1 3 0.7 bm25\\n"
    >>> result = qafast.ndeval(qrels, run)
    >>> round(result["1"]["alpha-nDCG@5"], 6), result["1"]["strec@5"]
    (0.965195, 1.0)
    """
    alpha = _check_unit("alpha", alpha)
    beta = _check_unit("beta", beta)
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int)
                              or depth < 1):
        raise InputError(f"depth={depth!r}: a whole number from 1")
    if isinstance(risk_alpha, bool) or not isinstance(risk_alpha, (int, float)) or not (
            risk_alpha >= 0):
        raise InputError(f"risk_alpha={risk_alpha!r}: ndeval takes 0 or more")
    q, r, names, b = _inputs(qrels, run, baseline)
    _label, rows, amean = _values(q, r, names, b, alpha=alpha, beta=beta,
                                  traditional=bool(traditional), all_topics=bool(all_topics),
                                  depth=depth or 0, risk_alpha=float(risk_alpha),
                                  risk_alpha_text=repr(float(risk_alpha)))
    out = {str(topic): dict(zip(_spec.COLUMNS, row)) for topic, row in rows}
    out["amean"] = dict(zip(_spec.COLUMNS, amean))
    return out


def _inputs(qrels, run, baseline):
    q, qname = read_bytes(qrels, "qrels")
    r, rname = read_bytes(run, "run")
    b, bname = read_bytes(baseline, "baseline") if baseline is not None else (None, "baseline")
    return q, r, (qname, rname, bname), b


def register_cli(subparsers) -> dict:
    """Add ``qafast ndeval`` to the ``qafast`` command; returns ``{"ndeval": handler}``."""
    p = subparsers.add_parser(
        "ndeval", help="the TREC diversity measures of a run, printing what the TREC Web "
                       "track's ndeval prints",
        description="Score a run as the TREC Web track's ndeval (version 4.5) does, printing "
                    "the same CSV: ERR-IA, nERR-IA, alpha-DCG, alpha-nDCG, NRBP, nNRBP, "
                    "MAP-IA, P-IA and subtopic recall for each topic of the run, then the "
                    "mean (amean).")
    p.add_argument("-alpha", metavar="VALUE", help="redundancy intolerance (default 0.5)")
    p.add_argument("-beta", metavar="VALUE", help="patience of NRBP (default 0.5)")
    p.add_argument("-traditional", action="store_true",
                   help="rank by score, then docno, instead of by rank")
    p.add_argument("-baseline", metavar="BASELINE_RUN",
                   help="a baseline run, for the risk-sensitive measures")
    p.add_argument("-riskAlpha", dest="risk_alpha", metavar="VALUE",
                   help="a loss against the baseline counts 1 + VALUE times (default 0)")
    p.add_argument("-c", action="store_true", dest="all_topics",
                   help="average over every topic of the qrels")
    p.add_argument("-a", action="store_true", dest="all_measures",
                   help="accepted, as ndeval accepts it (it prints every measure anyway)")
    p.add_argument("-M", metavar="DEPTH", dest="depth",
                   help="keep only the first DEPTH documents of each topic")
    p.add_argument("qrels", help="diversity qrels: topic subtopic docno judgment")
    p.add_argument("run", help="the run: topic Q0 docno rank score runid")
    return {"ndeval": _run_cli}


def _option(text: str | None, default: float, name: str, low: float, high: float) -> float:
    if text is None:
        return default
    value = _c_double(text.encode("utf-8", "surrogateescape"))
    if value is None:
        return default  # ndeval keeps its default when sscanf reads nothing
    if not low <= value <= high:
        raise InputError(f"{name} {text}: the value is from {low:g} to {high:g}")
    return value


def _run_cli(args) -> int:
    alpha = _option(args.alpha, 0.5, "-alpha", 0.0, 1.0)
    beta = _option(args.beta, 0.5, "-beta", 0.0, 1.0)
    risk = _option(args.risk_alpha, 0.0, "-riskAlpha", 0.0, float("inf"))
    depth = 0
    if args.depth is not None:
        m = re.match(r"\s*[+-]?\d+", args.depth)
        depth = int(m.group()) if m else 0
        if depth <= 0:
            raise InputError(f"-M {args.depth}: the depth is a whole number from 1")
    q, r, names, b = _inputs(args.qrels, args.run, args.baseline)
    label, rows, amean = _values(q, r, names, b, alpha=alpha, beta=beta,
                                 traditional=args.traditional, all_topics=args.all_topics,
                                 depth=depth, risk_alpha=risk,
                                 risk_alpha_text=args.risk_alpha if args.risk_alpha is not None
                                 else "0")
    sys.stdout.buffer.write(_spec.format_report(label, rows, amean))
    sys.stdout.flush()
    return 0
