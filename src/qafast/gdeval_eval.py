"""gdeval.pl, the TREC Web track's nDCG@k and ERR@k: :func:`gdeval` and ``qafast gdeval``.

``gdeval.pl`` (version 1.3, 2013) reads a qrels file and a run and prints, for each topic
of the run that has a relevant document, ``runid,topic,ndcg@k,err@k`` with five decimals, then
the mean (``amean``). Its nDCG has gain ``2**grade - 1``, its ERR takes grades 0 to 4, and its
options average over every judged topic (``-c``), set the depth (``-k``) and compare with a
baseline run (``-baseline``, ``-riskAlpha``: the TREC 2013-2014 risk-sensitive measures).
``qafast gdeval`` prints what it prints, byte for byte; the rules are written out in
:mod:`qafast.reference.gdeval`.

The same numbers, unrounded, are ir_measures' ``nDCG(dcg='exp-log2')@k`` and ``ERR@k`` in
:func:`qafast.evaluate` (whose nDCG takes log2 directly, so it may differ from gdeval.pl's in
the last bit).
"""

from __future__ import annotations

import sys

import numpy as np

from . import _kernels
from .errors import FormatError, InputError
from .io._text import read_bytes
from .reference import gdeval as _spec

__all__ = ["gdeval"]

_OK, _FORMAT, _SLOW = 0, 1, 2


class _Scanned:
    """One file's rows, as the kernel read them."""

    def __init__(self, data: bytes, is_run: bool, name: str):
        rows = data.count(b"\n") + 1
        self.data = data
        self.topic = np.empty(rows, np.int64)
        self.doc_start = np.empty(rows, np.int64)
        self.doc_end = np.empty(rows, np.int64)
        self.doc_hash = np.empty(rows, np.uint64)
        self.value = np.empty(rows, np.float64)
        token_start = np.empty(rows, np.int64)
        token_end = np.empty(rows, np.int64)
        info = np.zeros(4, np.int64)
        n = _kernels.gdeval_scan(data, is_run, self.topic, self.doc_start, self.doc_end,
                                 self.doc_hash, self.value, token_start, token_end, info)
        self.status, self.line = int(info[0]), int(info[1])
        if self.status == _FORMAT:
            raise FormatError(_spec.RUN_FORM if is_run else _spec.QRELS_FORM, path=name,
                              line=self.line)
        self.n = n
        for name_ in ("topic", "doc_start", "doc_end", "doc_hash", "value"):
            setattr(self, name_, getattr(self, name_)[:n])
        if is_run:
            self.runid = data[info[2]:info[3]] if n else b"?????"
            # tokens the kernel left to Python's correctly rounded float()
            for i in np.flatnonzero(np.isnan(self.value)):
                self.value[i] = float(data[token_start[i]:token_end[i]])


def _order(run: _Scanned) -> np.ndarray:
    """The run's rows in gdeval.pl's order: topic, then score (highest first), then docno
    (greatest first, in byte order)."""
    order = _grouped_order(run.topic, run.value)
    if order is None:
        order = np.lexsort((-run.value, run.topic)).astype(np.int64)
    topic, score = run.topic[order], run.value[order]
    tied = np.concatenate(([False], (topic[1:] == topic[:-1]) & (score[1:] == score[:-1]),
                           [False]))
    if tied.any():
        # groups of rows of one topic and one score: each sorted by docno, descending
        edge = np.diff(tied.view(np.int8))
        starts = np.flatnonzero(edge == 1)
        ends = np.flatnonzero(edge == -1) + 1
        _kernels.gdeval_sort_ties(run.data, run.doc_start, run.doc_end, order,
                                  starts.astype(np.int64), ends.astype(np.int64))
    return order


def _grouped_order(topic: np.ndarray, score: np.ndarray) -> np.ndarray | None:
    """The order without a sort when each topic's lines are together and ranked by score
    (as runs are written): the topics' blocks, by topic; None otherwise."""
    n = len(topic)
    if n == 0:
        return np.empty(0, np.int64)
    change = np.flatnonzero(topic[1:] != topic[:-1]) + 1
    starts = np.concatenate(([0], change))
    block_topics = topic[starts]
    if len(np.unique(block_topics)) != len(block_topics):
        return None  # a topic in two blocks
    falls = score[1:] <= score[:-1]
    falls[change - 1] = True
    if not falls.all():
        return None
    ends = np.append(starts[1:], n)
    blocks = np.argsort(block_topics, kind="stable")
    lengths = (ends - starts)[blocks]
    first = np.repeat(starts[blocks] - np.concatenate(([0], np.cumsum(lengths)[:-1])),
                      lengths)
    return (np.arange(n, dtype=np.int64) + first).astype(np.int64)


class _Judgments:
    """The qrels: each seen topic's ideal DCG, and the gain of each judged document."""

    def __init__(self, qrels: _Scanned, k: int):
        keep = qrels.value > 0
        rows = np.flatnonzero(keep)
        topic = qrels.topic[rows]
        grade = qrels.value[rows].astype(np.int64)
        # ideal: each topic's kept judgments, best first
        order = np.lexsort((-grade, topic))
        self.topics, starts = np.unique(topic[order], return_index=True)
        offsets = np.append(starts, len(order)).astype(np.int64)
        ideal = np.empty(len(self.topics))
        _kernels.gdeval_topics(offsets, grade[order], k, ideal, np.empty(len(self.topics)))
        self.ideal = ideal
        # lookup: one key per (topic, docno hash), sorted; a document judged twice takes its
        # lowest grade
        key = _key(topic, qrels.doc_hash[rows])
        key_order = np.lexsort((grade, key))
        sorted_key = key[key_order]
        first = np.ones(len(sorted_key), bool)
        first[1:] = sorted_key[1:] != sorted_key[:-1]
        self.key = sorted_key[first]
        self.rows = rows[key_order][first]
        self.key_topic = topic[key_order][first]
        self.grade = grade[key_order][first]
        self.qrels = qrels

    def gains(self, run: _Scanned, order: np.ndarray) -> np.ndarray | None:
        """The gain of each ranked row of ``run``; None when a key or a hash is shared by
        two different documents (then only the specification can tell)."""
        gains = np.zeros(len(order), np.int64)
        if not len(self.key) or not len(order):
            return gains
        key = _key(run.topic[order], run.doc_hash[order])
        pos = np.empty(len(key), np.int64)
        _kernels.gdeval_lookup(self.key, key, pos)
        hit = np.flatnonzero(pos >= 0)
        where = pos[hit]
        if (self.key_topic[where] != run.topic[order[hit]]).any():
            return None
        if _kernels.gdeval_same_bytes(run.data, run.doc_start, run.doc_end, self.qrels.data,
                                      self.qrels.doc_start, self.qrels.doc_end,
                                      order[hit].astype(np.int64),
                                      self.rows[where].astype(np.int64)) != -1:
            return None
        gains[hit] = self.grade[where]
        return gains


def _key(topic: np.ndarray, doc_hash: np.ndarray) -> np.ndarray:
    """One 64-bit key of a topic and a docno hash (a shared key is caught by the checks)."""
    with np.errstate(over="ignore"):
        return doc_hash ^ (topic.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15))


def _measure(run: _Scanned, judged: _Judgments, k: int):
    """``{topic: (ndcg, err)}`` of the run's seen topics, in topic order; None where only
    the specification can tell (two docnos with one hash)."""
    order = _order(run)
    gains = judged.gains(run, order)
    if gains is None:
        return None
    topic = run.topic[order]
    topics, starts = np.unique(topic, return_index=True)
    offsets = np.append(starts, len(order)).astype(np.int64)
    dcg, err = np.empty(len(topics)), np.empty(len(topics))
    _kernels.gdeval_topics(offsets, gains, k, dcg, err)
    seen = np.isin(topics, judged.topics)
    ideal = judged.ideal[np.searchsorted(judged.topics, topics[seen])]
    ndcg = dcg[seen] / ideal
    return dict(zip(topics[seen].tolist(), zip(ndcg.tolist(), err[seen].tolist())))


def _values(qrels: bytes, run: bytes, names: tuple[str, str, str], baseline: bytes | None,
            *, k: int, all_topics: bool, risk_alpha: str | None):
    """``(label, rows, amean)`` as the specification gives them: by the fast path, or by the
    specification itself for the spellings only it reads (a \\r inside a line, a topic with
    a leading zero, long numbers, NaN, a % in a run id, two docnos with one hash)."""
    def spec():
        try:
            return _spec.gdeval_values(qrels, run, k=k, all_topics=all_topics,
                                       baseline=baseline, risk_alpha=risk_alpha)
        except _spec.Rejected as e:
            path = names[("qrels", "run", "baseline").index(e.source)]
            raise FormatError(e.reason, path=path, line=e.line) from None

    q = _Scanned(qrels, False, names[0])
    b = _Scanned(baseline, True, names[2]) if baseline is not None else None
    r = _Scanned(run, True, names[1])
    if any(s.status == _SLOW for s in (q, r, b) if s is not None):
        return spec()
    if b"%" in r.runid or (b is not None and b"%" in b.runid):
        return spec()
    judged = _Judgments(q, k)
    base = _measure(b, judged, k) if b is not None else None
    values = _measure(r, judged, k)
    if values is None or (b is not None and base is None):
        return spec()
    label = r.runid.decode("utf-8", "surrogateescape")
    alpha = _spec.perl_number(risk_alpha.encode()) if risk_alpha is not None else 0.0
    if b is not None:
        label = (f"{label} (rel to. {b.runid.decode('utf-8', 'surrogateescape')}, rs=1+a, "
                 f"a={risk_alpha if risk_alpha is not None else '0'})")
    rows = []
    ndcg_total = err_total = 0.0
    for topic, (nd, er) in values.items():
        if base is not None:
            w = base.get(topic, (0.0, 0.0))
            nd, er = _weighted(nd, w[0], alpha), _weighted(er, w[1], alpha)
        ndcg_total += nd
        err_total += er
        rows.append((str(topic), nd, er))
    count = len(values)
    if all_topics:
        count = len(judged.topics)
        if base is not None:
            w = (0.0, 0.0)
            for topic in judged.topics.tolist():
                if topic in values:
                    continue
                w = base.get(topic, w)
                nd, er = _weighted(0.0, w[0], alpha), _weighted(0.0, w[1], alpha)
                ndcg_total += nd
                err_total += er
                rows.append((str(topic), nd, er))
    if count > 0:
        ndcg_total /= count
        err_total /= count
    return label, rows, (ndcg_total, err_total)


def _weighted(value: float, base: float, alpha: float) -> float:
    return (1 + alpha) * (value - base) if value < base else value - base


def _check_k(k) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= 2**53:
        raise InputError(f"k={k!r}: gdeval.pl's depth is a whole number from 1")
    return int(k)


def gdeval(qrels, run, *, k: int = 20, all_topics: bool = False, baseline=None,
           risk_alpha: float | str | None = None) -> dict[str, dict[str, float]]:
    """nDCG@k and ERR@k as the TREC Web track's ``gdeval.pl`` computes them.

    Parameters
    ----------
    qrels, run : path or bytes
        A qrels file (``topic 0 docno judgment``, judgments up to 4) and a TREC run, as
        gdeval.pl reads them (topics are numbers; ``WT10-51`` is topic 51).
    k : int, default 20
        The depth (``-k``).
    all_topics : bool, default False
        Average over every topic with a relevant document, a topic missing from the run
        counting 0 (``-c``), instead of over the topics the run and the qrels share.
    baseline : path or bytes, optional
        A baseline run: each value becomes the risk-sensitive difference from the baseline's
        (``-baseline``).
    risk_alpha : float or str, optional
        The risk sensitivity a (``-riskAlpha``, 0 by default): a loss against the baseline
        counts 1 + a times.

    Returns
    -------
    dict
        ``{topic: {"ndcg@k": value, "err@k": value}}`` for each topic gdeval.pl prints, in
        its order, then ``"amean"``: the values it prints with five decimals, unrounded.

    Raises
    ------
    FormatError
        A line gdeval.pl rejects (naming the file and line), and the inputs it mishandles
        (see :mod:`qafast.reference.gdeval`).

    Examples
    --------
    >>> import qafast
    >>> qrels = b"51 0 d1 2\\n51 0 d2 1\\n52 0 d9 4\\n"
    >>> run = b"51 Q0 d2 1 0.9 bm25\\n51 Q0 d1 2 0.8 bm25\\n52 Q0 d4 1 0.5 bm25\\n"
    >>> result = qafast.gdeval(qrels, run, k=10)
    >>> round(result["51"]["ndcg@10"], 5), result["52"]["err@10"]
    (0.79671, 0.0)
    >>> round(result["amean"]["ndcg@10"], 5)
    0.39835
    """
    k = _check_k(k)
    _label, rows, amean = _values(*_inputs(qrels, run, baseline), k=k,
                                  all_topics=bool(all_topics), risk_alpha=_alpha(risk_alpha))
    out = {topic: {f"ndcg@{k}": nd, f"err@{k}": er} for topic, nd, er in rows}
    out["amean"] = {f"ndcg@{k}": amean[0], f"err@{k}": amean[1]}
    return out


def _inputs(qrels, run, baseline):
    q, qname = read_bytes(qrels, "qrels")
    r, rname = read_bytes(run, "run")
    b, bname = read_bytes(baseline, "baseline") if baseline is not None else (None, "baseline")
    return q, r, (qname, rname, bname), b


def _alpha(risk_alpha) -> str | None:
    if risk_alpha is None:
        return None
    text = risk_alpha if isinstance(risk_alpha, str) else repr(float(risk_alpha))
    if _spec.perl_number(text.encode()) < 0:
        raise InputError(f"risk_alpha={risk_alpha!r}: gdeval.pl takes a sensitivity of 0 or "
                         "more")
    return text


def register_cli(subparsers) -> dict:
    """Add ``qafast gdeval`` to the ``qafast`` command; returns ``{"gdeval": handler}``."""
    p = subparsers.add_parser(
        "gdeval", help="nDCG@k and ERR@k of a run, printing what the TREC Web track's "
                       "gdeval.pl prints",
        description="Score a run as the TREC Web track's gdeval.pl (version 1.3) does, "
                    "printing the same CSV: runid,topic,ndcg@k,err@k for each topic with a "
                    "relevant document, then the mean (amean).")
    p.add_argument("-c", action="store_true", dest="all_topics",
                   help="average over every topic with a relevant document (a topic "
                        "missing from the run counts 0)")
    p.add_argument("-k", type=str, default="20", metavar="K",
                   help="the depth of the ranking to evaluate (default 20)")
    p.add_argument("-baseline", metavar="BASELINE_RUN",
                   help="a baseline run, for the risk-sensitive measures")
    p.add_argument("-riskAlpha", dest="risk_alpha", metavar="A",
                   help="the risk sensitivity: a loss against the baseline counts 1 + A times "
                        "(default 0)")
    p.add_argument("qrels", help="the qrels: topic 0 docno judgment (judgments up to 4)")
    p.add_argument("run", help="the run: topic Q0 docno rank score runid")
    return {"gdeval": _run_cli}


def _run_cli(args) -> int:
    # gdeval.pl reads -k as Perl's int() of a number: 20, 20.7 and "20abc" are 20
    k_value = _spec.perl_number(args.k.encode())
    if not 1 <= k_value <= 2**53:
        raise InputError(f"-k {args.k}: the depth is a whole number from 1")
    risk = args.risk_alpha
    if risk is not None and _spec.perl_number(risk.encode()) < 0:
        raise InputError(f"-riskAlpha {risk}: the sensitivity is 0 or more")
    q, r, names, b = _inputs(args.qrels, args.run, args.baseline)
    label, rows, amean = _values(q, r, names, b, k=int(k_value), all_topics=args.all_topics,
                                 risk_alpha=risk)
    sys.stdout.write(_spec.format_report(label, rows, amean, int(k_value)))
    return 0
