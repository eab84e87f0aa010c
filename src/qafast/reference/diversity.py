"""The TREC diversity measures as ``ndeval`` (TREC Web track, version 4.5) computes them.

This plain-Python module is the specification that the kernel ``ndeval_topics`` and
:mod:`qafast.ndeval_eval` are tested against. It states the rules; it is not fast.

Diversity qrels have four columns, ``topic subtopic docno judgment``: topic and subtopic are
whole numbers, a judgment above 1 counts 1 (the measures are binary), and a document judged
more than once for one subtopic takes its last judgment while every judgment adds to the
subtopic's count of relevant documents (ndeval's own bookkeeping). A subtopic that no
judgment marks relevant is not counted; a topic with no such subtopic scores 0, except its
nNRBP, which is 0/0 (``-nan``).

The run is ranked by its rank column (or, with ``traditional``, by score, highest first, then
docno, greatest first). A topic of the run may carry a prefix ending in ``-`` (``wt09-12`` is
topic 12).

Per topic, with ``S`` the number of subtopics with a relevant document, ``g_j`` a subtopic's
gain (1, times ``1 - alpha`` for each earlier document relevant to it) and ``score_i`` the sum
of ``g_j`` over the subtopics the document at rank ``i`` (from 0) is relevant to:

* alpha-DCG@k: ``sum score_i * log(2)/log(i + 2)`` (rank 0 discount 1) over ranks below k,
  divided by the same sum for ``S * (1 - alpha)**i`` (the "ideal ideal"); alpha-nDCG@k
  divides alpha-DCG@k by that of the greedy ideal ranking of the judged documents (at each
  rank the document of highest score, ties to the greatest docno).
* ERR-IA@k: the same with discount ``1/(i + 1)``; nERR-IA@k likewise normalised.
* NRBP: ``sum score_i * beta**i * (1 - (1 - alpha) * beta) / S`` over the whole ranking;
  nNRBP divides by the ideal ranking's.
* MAP-IA: the mean over the ``S`` subtopics of the average precision for each subtopic.
* P-IA@k: relevant (document, subtopic) pairs in the top k over ``k * S``.
* strec@k: the share of the ``S`` subtopics with a relevant document in the top k.

ndeval prints ``@5``, ``@10`` and ``@20``; the functions here take any depth.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

__all__ = ["COLUMNS", "Rejected", "Topic", "read_qrels", "read_run", "topic_values",
           "ideal_order", "ndeval_values", "combine", "format_report", "natural_number",
           "run_topic", "judgment_rows"]

#: The measures ndeval prints, in its order.
COLUMNS = ("ERR-IA@5", "ERR-IA@10", "ERR-IA@20", "nERR-IA@5", "nERR-IA@10", "nERR-IA@20",
           "alpha-DCG@5", "alpha-DCG@10", "alpha-DCG@20",
           "alpha-nDCG@5", "alpha-nDCG@10", "alpha-nDCG@20", "NRBP", "nNRBP", "MAP-IA",
           "P-IA@5", "P-IA@10", "P-IA@20", "strec@5", "strec@10", "strec@20")

_LARGE_ENOUGH = 100000
_SPACE = b" \t\n\v\f\r"
QRELS_FORM = "expected 'topic subtopic docno judgment' with whole numbers"
RUN_FORM = "expected 'topic Q0 docno rank score runid' with a whole-number rank"


class Rejected(Exception):
    """An input ndeval refuses: ``source`` is "qrels", "run" or "baseline"."""

    def __init__(self, source: str, reason: str, line: int | None = None):
        super().__init__(reason)
        self.source, self.reason, self.line = source, reason, line


def natural_number(token: bytes) -> int:
    """A whole number as ndeval reads it; -1 when it is not one (empty, a sign, a non-digit,
    or more than 1000009 or so: ndeval stops past 100000 before the next digit)."""
    if not token:
        return -1
    value = 0
    for c in token:
        if 48 <= c <= 57:
            if value > _LARGE_ENOUGH:
                return -1
            value = 10 * value + (c - 48)
        else:
            return -1
    return value


def _lines(data: bytes) -> list[bytes]:
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return lines


def _fields(line: bytes, m: int) -> list[tuple[int, int]]:
    """The (start, end) of up to ``m`` whitespace-separated fields of ``line``."""
    out: list[tuple[int, int]] = []
    i, n = 0, len(line)
    while len(out) < m:
        while i < n and line[i] in _SPACE:
            i += 1
        if i >= n:
            break
        start = i
        while i < n and line[i] not in _SPACE:
            i += 1
        out.append((start, i))
    return out


def run_topic(line: bytes, start: int, end: int) -> int:
    """ndeval's topic of a run line: digits, or the digits after a prefix ending in '-'.
    Without a '-', ndeval reads past the field: the next field when one character apart."""
    token = line[start:end]
    if token[:1].isdigit():
        return natural_number(token)
    dash = token.find(b"-")
    if dash >= 0:
        return natural_number(token[dash + 1:])
    rest = end + 1
    stop = rest
    while stop < len(line) and line[stop] not in _SPACE:
        stop += 1
    return natural_number(line[rest:stop])


def _score(token: bytes) -> float | None:
    try:
        return float(token)
    except ValueError:
        return None


@dataclass
class Topic:
    """One topic's judgments: the judged docnos (sorted), each one's relevance per subtopic,
    and each subtopic's count of relevant judgments."""
    subtopics: int = 0
    rel: dict[bytes, list[int]] = field(default_factory=dict)
    nrel_sub: list[int] = field(default_factory=list)

    @property
    def actual(self) -> int:
        return sum(1 for c in self.nrel_sub if c)


def read_qrels(data: bytes) -> dict[int, Topic]:
    """``{topic: Topic}`` in topic order."""
    rows = []
    lines = _lines(data)
    if not lines:
        raise Rejected("qrels", "the qrels file is empty")
    for number, line in enumerate(lines, 1):
        f = _fields(line, 4)
        if len(f) != 4:
            raise Rejected("qrels", QRELS_FORM, number)
        topic = natural_number(line[f[0][0]:f[0][1]])
        subtopic = natural_number(line[f[1][0]:f[1][1]]) if topic >= 0 else -1
        judgment = natural_number(line[f[3][0]:f[3][1]]) if subtopic >= 0 else -1
        if judgment < 0:
            raise Rejected("qrels", QRELS_FORM, number)
        rows.append((topic, line[f[2][0]:f[2][1]], subtopic, min(judgment, 1)))
    rows.sort(key=lambda r: (r[0], r[1]))  # stable, as glibc's qsort is here
    topics: dict[int, Topic] = {}
    for topic, _docno, subtopic, _j in rows:
        t = topics.setdefault(topic, Topic())
        t.subtopics = max(t.subtopics, subtopic + 1)
    for t in topics.values():
        t.nrel_sub = [0] * t.subtopics
    for topic, docno, subtopic, judgment in rows:
        t = topics[topic]
        rel = t.rel.setdefault(docno, [0] * t.subtopics)
        rel[subtopic] = judgment
        t.nrel_sub[subtopic] += judgment
    return topics


def read_run(data: bytes, *, traditional: bool = False, depth: int = 0,
             source: str = "run") -> tuple[bytes, dict[int, list[bytes]]]:
    """``(runid, {topic: docnos in rank order})`` in topic order."""
    lines = _lines(data)
    if not lines:
        raise Rejected(source, f"the {source} file is empty")
    rows = []
    runid = b""
    for number, line in enumerate(lines, 1):
        f = _fields(line, 6)
        if len(f) != 6:
            raise Rejected(source, RUN_FORM, number)
        topic = run_topic(line, *f[0])
        rank = natural_number(line[f[3][0]:f[3][1]]) if topic >= 0 else -1
        if rank < 0:
            raise Rejected(source, RUN_FORM, number)
        if number == 1:
            runid = line[f[5][0]:f[5][1]]
        score = _score(line[f[4][0]:f[4][1]])
        if traditional and score is None:
            raise Rejected(source, "the score is not a number (-traditional ranks by score)",
                           number)
        rows.append((topic, rank, line[f[2][0]:f[2][1]], score))
    if traditional:
        rows.sort(key=lambda r: r[2], reverse=True)
        rows.sort(key=lambda r: -r[3])  # type: ignore[operator]
        rows.sort(key=lambda r: r[0])
        ranked, last, rank = [], None, 0
        for topic, _r, docno, score in rows:
            rank = rank + 1 if topic == last else 1
            last = topic
            ranked.append((topic, rank, docno, score))
        rows = ranked
    rows.sort(key=lambda r: (r[0], r[1]))
    for a, b in zip(rows, rows[1:]):
        if a[0] == b[0] and a[1] == b[1]:
            raise Rejected(source, f"duplicate rank ({b[1]}) for topic {b[0]}")
    out: dict[int, list[bytes]] = {}
    for topic, _rank, docno, _s in rows:
        docs = out.setdefault(topic, [])
        if not depth or len(docs) < depth:
            docs.append(docno)
    for topic, docs in out.items():
        ordered = sorted(docs)
        for x, y in zip(ordered, ordered[1:]):
            if x == y:
                raise Rejected(source, "duplicate docno "
                               f"({x.decode('utf-8', 'replace')}) for topic {topic}")
    return runid, out


def ideal_order(topic: Topic, alpha: float) -> list[bytes]:
    """ndeval's greedy ideal ranking of the judged documents: at each rank the document of
    highest gain, ties to the greatest docno."""
    gain = [1.0] * topic.subtopics
    left = sorted(topic.rel)
    order = []
    while left:
        best, best_score = -1, 0.0
        for i, docno in enumerate(left):
            score = 0.0
            for j, r in enumerate(topic.rel[docno]):
                if r:
                    score += gain[j]
            if best == -1 or score >= best_score:
                best, best_score = i, score
        docno = left.pop(best)
        order.append(docno)
        for j, r in enumerate(topic.rel[docno]):
            if r:
                gain[j] *= 1.0 - alpha
    return order


def _discount(i: int) -> float:
    return 1.0 if i <= 0 else math.log(2.0) / math.log(i + 2.0)


def topic_values(rels: list[list[int] | None], topic: Topic, alpha: float, beta: float,
                 depth: int = 20) -> dict:
    """A ranking's values before normalisation by the ideal: ``err``, ``dcg``,
    ``precision``, ``strec`` (lists over depths 1..depth) and ``nrbp``, ``map_ia``.
    ``rels[i]`` is the relevance per subtopic of the document at rank i (None: unjudged)."""
    s = topic.subtopics
    actual = topic.actual
    zero = [0.0] * depth
    out: dict[str, Any] = {"err": list(zero), "dcg": list(zero), "precision": list(zero),
           "strec": list(zero), "nrbp": 0.0, "map_ia": 0.0}
    if actual == 0:
        return out
    n = len(rels)
    for name, disc in (("dcg", _discount), ("err", lambda i: 1.0 / (i + 1))):
        gain = [1.0] * s
        values = out[name]
        for i in range(min(depth, n)):
            score = 0.0
            rel = rels[i]
            if rel:
                for j in range(s):
                    if rel[j]:
                        score += gain[j]
                        gain[j] *= 1.0 - alpha
            values[i] = score * _discount(i) if name == "dcg" else score / float(i + 1)
        ideal, ideal_gain = [0.0] * depth, float(actual)
        for i in range(depth):
            ideal[i] = ideal_gain * _discount(i) if name == "dcg" else ideal_gain / float(i + 1)
            ideal_gain *= 1.0 - alpha
        for i in range(1, depth):
            values[i] += values[i - 1]
            ideal[i] += ideal[i - 1]
        for i in range(1, depth):
            values[i] /= ideal[i]
    gain, decay, nrbp = [1.0] * s, 1.0, 0.0
    for rel in rels:
        score = 0.0
        if rel:
            for j in range(s):
                if rel[j]:
                    score += gain[j]
                    gain[j] *= 1.0 - alpha
        nrbp += score * decay
        decay *= beta
    out["nrbp"] = nrbp * ((1 - (1 - alpha) * beta) / actual)
    seen, count = [False] * s, 0
    pairs = 0
    for i in range(depth):
        rel = rels[i] if i < n else None
        if rel:
            for j in range(s):
                if rel[j]:
                    pairs += 1
                    if not seen[j]:
                        seen[j] = True
                        count += 1
        out["strec"][i] = count / actual
        out["precision"][i] = pairs / float((i + 1) * actual)
    sub_count, sub_total = [0] * s, [0.0] * s
    for i, rel in enumerate(rels):
        if rel:
            for j in range(s):
                if rel[j]:
                    sub_count[j] += 1
                    sub_total[j] += sub_count[j] / float(i + 1)
    map_ia = 0.0
    for j in range(s):
        if topic.nrel_sub[j]:
            map_ia += sub_total[j] / topic.nrel_sub[j]
    out["map_ia"] = map_ia / actual
    return out


def _div(a: float, b: float) -> float:
    """C's division of doubles: x/0 is inf, 0/0 is NaN."""
    if b == 0.0:
        return math.nan if a == 0.0 or math.isnan(a) else math.copysign(math.inf, a)
    return a / b


def _row(run_docs: list[bytes], topic: Topic, ideal: dict, alpha: float, beta: float,
         depth: int) -> dict:
    rels = [topic.rel.get(d) for d in run_docs]
    v = topic_values(rels, topic, alpha, beta, depth)
    v["nerr"], v["ndcg"] = [0.0] * depth, [0.0] * depth
    for i in range(depth):
        if v["dcg"][i]:
            v["ndcg"][i] = _div(v["dcg"][i], ideal["dcg"][i])
            v["nerr"][i] = _div(v["err"][i], ideal["err"][i])
    v["nnrbp"] = _div(v["nrbp"], ideal["nrbp"])
    return v


def _columns(v: dict | None) -> list[float]:
    if v is None:
        return [0.0] * len(COLUMNS)
    at = (4, 9, 19)
    return ([v["err"][i] for i in at] + [v["nerr"][i] for i in at]
            + [v["dcg"][i] for i in at] + [v["ndcg"][i] for i in at]
            + [v["nrbp"], v["nnrbp"], v["map_ia"]]
            + [v["precision"][i] for i in at] + [v["strec"][i] for i in at])


def _risk(r: float, b: float, a: float) -> float:
    return r - b if r >= b else (a + 1) * (r - b)


def ndeval_values(qrels: bytes, run: bytes, *, alpha: float = 0.5, beta: float = 0.5,
                  traditional: bool = False, all_topics: bool = False, depth: int = 0,
                  baseline: bytes | None = None, risk_alpha: float = 0.0,
                  risk_alpha_text: str = "0"):
    """``(label, rows, amean)``: what ndeval prints, unrounded. ``rows`` are
    ``(topic, [21 values])`` in its order; ``depth`` is its ``-M`` (0: whole run)."""
    judged = read_qrels(qrels)
    ideals = {}
    for t, topic in judged.items():
        order = ideal_order(topic, alpha)
        ideals[t] = topic_values([topic.rel[d] for d in order], topic, alpha, beta, 20)
    runid, ranked = read_run(run, traditional=traditional, depth=depth)
    values = {t: _row(docs, judged[t], ideals[t], alpha, beta, 20)
              for t, docs in ranked.items() if t in judged}
    actual = len(values)
    base = None
    label = runid
    if baseline is not None:
        brunid, branked = read_run(baseline, traditional=traditional, depth=depth,
                                   source="baseline")
        base = {t: _row(docs, judged[t], ideals[t], alpha, beta, 20)
                for t, docs in branked.items() if t in judged}
        label = (runid + b" (rel to. " + brunid + b"; rs=1+a; a="
                 + risk_alpha_text.encode("utf-8", "surrogateescape") + b")")
    run_cols = {t: _columns(v) for t, v in values.items()}
    base_cols = None if base is None else {t: _columns(v) for t, v in base.items()}
    rows, amean = combine(list(ranked), run_cols, list(branked) if baseline is not None else [],
                          base_cols, actual, len(judged), all_topics=all_topics,
                          risk_alpha=risk_alpha)
    return label, rows, amean


def combine(run_topics: list[int], run_cols: dict, base_topics: list[int],
            base_cols: dict | None, actual: int, judged: int, *, all_topics: bool,
            risk_alpha: float):
    """ndeval's rows and mean from each topic's 21 values (``run_cols``: the run's judged
    topics; a topic of the run without judgments scores 0): the run's topics, in order, each
    less the baseline's value when there is a baseline (a loss counting ``1 + risk_alpha``
    times); with ``all_topics`` the baseline's topics missing from the run too, and the mean
    over the ``judged`` topics instead of the ``actual`` ones the run and qrels share."""
    if all_topics:
        actual = judged
    zeros = [0.0] * len(COLUMNS)
    rows = []
    i = j = 0
    while i < len(run_topics) or (j < len(base_topics) and all_topics):
        zero_run = i >= len(run_topics)
        zero_base = j >= len(base_topics)
        if not zero_run and not zero_base:
            rt, bt = run_topics[i], base_topics[j]
            if rt == bt:
                topic, i, j = rt, i + 1, j + 1
            elif rt > bt:
                zero_run, topic, j = True, bt, j + 1
                if not all_topics:
                    continue
            else:
                zero_base, topic, i = True, rt, i + 1
        elif zero_run:
            topic, j = base_topics[j], j + 1
        else:
            topic, i = run_topics[i], i + 1
        r = zeros if zero_run else run_cols.get(topic, zeros)
        b = zeros if zero_base or base_cols is None else base_cols.get(topic, zeros)
        rows.append((topic, [_risk(x, y, risk_alpha) for x, y in zip(r, b)]))
    if base_cols is not None and len(rows) > actual:
        actual = len(rows)
    totals = [0.0] * len(COLUMNS)
    for _t, row in rows:
        totals = [a + b for a, b in zip(totals, row)]
    return rows, [_div(t, float(actual)) for t in totals]


def _fmt(x: float) -> str:
    # glibc prints x86's 0/0 as -nan
    if math.isnan(x):
        return "-nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return "%.6f" % x


def format_report(label: bytes, rows, amean) -> bytes:
    """ndeval's CSV: a header, one line per topic, then ``amean``."""
    out = [b"runid,topic," + ",".join(COLUMNS).encode()]
    for topic, row in rows:
        out.append(label + b"," + f"{topic}," .encode() + ",".join(map(_fmt, row)).encode())
    out.append(label + b",amean," + ",".join(map(_fmt, amean)).encode())
    return b"\n".join(out) + b"\n"


def judgment_rows(query: list[int], subtopic: list[int], doc: list[str], grade: list[int],
                  n_queries: int) -> dict[str, list]:
    """Judgments ``(query, subtopic, doc, grade)`` (query and subtopic as whole-number codes,
    subtopic codes in the order sums over subtopics take) in the layout the diversity
    measures read, as :func:`qafast.evaluate` builds it from ``DiversityQrels``.

    The judgments are sorted by (query, document id in code point order, subtopic),
    stably; of the judgments of one (query, document, subtopic) only the last is kept.
    Each (query, document) is a row, rows numbered from 0 in that order. Returns:

    * ``t``, ``local``, ``row``, ``grade``: each kept judgment's query, its subtopic's
      number among its query's subtopics (from 0, in subtopic code order), its row, its grade;
    * ``doc_offsets``: query q's rows are ``doc_offsets[q]`` to ``doc_offsets[q + 1]``;
    * ``subtopics``: each query's number of distinct subtopics;
    * ``row_doc``, ``best``: each row's document id, and its highest grade over all the
      row's judgments, the ones not kept included.
    """
    n = len(grade)
    order = sorted(range(n), key=lambda i: (query[i], doc[i], subtopic[i]))
    out: dict[str, list] = {k: [] for k in ("t", "local", "row", "grade", "row_doc", "best")}
    numbering = {q: {s: i for i, s in enumerate(sorted({subtopic[j] for j in range(n)
                                                          if query[j] == q}))}
                 for q in range(n_queries)}
    row_of: dict[tuple[int, str], int] = {}
    for pos, i in enumerate(order):
        key = (query[i], doc[i])
        if key not in row_of:
            row_of[key] = len(row_of)
            out["row_doc"].append(doc[i])
            out["best"].append(grade[i])
        r = row_of[key]
        out["best"][r] = max(out["best"][r], grade[i])
        nxt = order[pos + 1] if pos + 1 < n else None
        if nxt is not None and (query[nxt], doc[nxt], subtopic[nxt]) == (
                query[i], doc[i], subtopic[i]):
            continue  # a later judgment of the same subtopic replaces this one
        out["t"].append(query[i])
        out["local"].append(numbering[query[i]][subtopic[i]])
        out["row"].append(r)
        out["grade"].append(grade[i])
    rows_of_query = [0] * n_queries
    for q, _d in row_of:
        rows_of_query[q] += 1
    out["doc_offsets"] = [sum(rows_of_query[:q]) for q in range(n_queries + 1)]
    out["subtopics"] = [len(numbering[q]) for q in range(n_queries)]
    return out
