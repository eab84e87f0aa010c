"""Diversity qrels for :func:`qafast.evaluate`: a subtopic for each judgment.

ir_measures' diversity measures (``alpha_nDCG@20``, ``ERR_IA@20``, ``nERR_IA@20``,
``alpha_DCG@k``, ``NRBP``, ``nNRBP``, ``AP_IA``, ``P_IA@k``, ``StRecall@k``) read which
subtopic (intent) of a query a document is relevant to. Their qrels are
:class:`DiversityQrels`; :func:`qafast.evaluate` and :func:`qafast.evaluate_runs` compute
them with the TREC Web track's ndeval rules (the kernels :func:`qafast.ndeval` uses), as
ir_measures' pyndeval provider does, and the other measures of the same call from the same
qrels with each document's highest grade over its subtopics.
"""
from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from . import _kernels
from ._engine import check_max_grades
from ._measure_parser import Column, parse_measures
from ._measures import SUBTOPIC_FAMILIES
from ._ranked import Qrels, as_run
from ._run_sources import per_query_values
from .errors import FormatError, InputError, InputTypeError
from .io._text import read_bytes

__all__ = ["DiversityQrels"]

_FORMS = ("diversity qrels: a qafast.DiversityQrels, a dict {query: {subtopic: {doc: grade}}}, "
          "a DataFrame with an 'iteration' (or 'subtopic') column, or ir_measures' Qrel "
          "tuples (query_id, doc_id, relevance, iteration)")


class DiversityQrels:
    """Relevance judgments with a subtopic for each: ``(query, subtopic, doc, grade)``.

    Parameters
    ----------
    data : dict, DataFrame or iterable of tuples
        ``{query_id: {subtopic: {doc_id: grade}}}``; a pandas DataFrame with ``query_id``,
        ``doc_id``, ``relevance`` and ``iteration`` (ir_measures' name; ``subtopic`` also
        reads) columns; or ir_measures' ``Qrel`` named tuples ``(query_id, doc_id,
        relevance, iteration)``. A TREC file's second column is the subtopic: read it with
        :meth:`from_file`.

    Notes
    -----
    Ids are read as strings. Subtopics are numbered in order of first appearance, as
    ir_measures' pyndeval provider numbers them (:meth:`from_file`: in numeric order where
    every one is a whole number, as ndeval reads a file); the last bit of a sum over
    subtopics can depend on that order. A document judged twice for one subtopic takes the last
    judgment, as ndeval takes it. A grade of at least the relevance level (the measure's
    ``rel``, else ``evaluate``'s ``relevance_level``) is relevant to its subtopic; grades
    may be negative. The measures that read no subtopic see each document's highest grade.

    Examples
    --------
    >>> import qafast
    >>> qrels = qafast.DiversityQrels({"q1": {"1": {"d1": 1}, "2": {"d2": 1, "d3": 1}}})
    >>> run = {"q1": {"d2": 0.9, "d3": 0.8, "d1": 0.7}}
    >>> result = qafast.evaluate(qrels, run, ["alpha_nDCG@5", "StRecall@2", "P@1"])
    >>> round(result["alpha_nDCG@5"], 6), result["StRecall@2"], result["P@1"]
    (0.965195, 0.5, 1.0)
    """

    __slots__ = ("_numeric", "_plain", "doc", "grade", "query", "subtopic")

    def __init__(self, data: Any):
        if isinstance(data, DiversityQrels):
            rows = list(zip(data.query, data.subtopic, data.doc, data.grade.tolist()))
        elif isinstance(data, Mapping):
            rows = _from_dict(data)
        elif hasattr(data, "columns") and hasattr(data, "itertuples"):
            rows = _from_frame(data)
        elif isinstance(data, Iterable) and not isinstance(data, (str, bytes)):
            rows = _from_tuples(data)
        else:
            raise InputTypeError(f"expected {_FORMS}, not {type(data).__name__}")
        self._set(rows)

    def _set(self, rows: list[tuple[str, str, str, int]]) -> None:
        self.query = [r[0] for r in rows]
        self.subtopic = [r[1] for r in rows]
        self.doc = [r[2] for r in rows]
        self.grade = np.array([r[3] for r in rows], dtype=np.int64)
        self._plain: Qrels | None = None
        #: subtopics in numeric order (a file's, as ndeval reads them), else in order of
        #: first appearance (as pyndeval numbers them): the order ndeval's sums over
        #: subtopics take, which their last bit depends on
        self._numeric = False

    @classmethod
    def from_file(cls, source) -> DiversityQrels:
        """Read a TREC diversity qrels file (path or bytes): ``topic subtopic docno
        grade`` a line, as ndeval and ir_measures read it (ir_measures calls the second
        column ``iteration``)."""
        data, name = read_bytes(source, "qrels")
        rows = []
        for i, line in enumerate(data.split(b"\n")):
            f = line.split()
            if not f:
                continue
            try:
                if len(f) != 4:
                    raise ValueError
                rows.append((f[0].decode(), f[1].decode(), f[2].decode(), int(f[3])))
            except ValueError:  # UnicodeDecodeError included
                raise FormatError("expected 'query subtopic doc grade' (UTF-8, an integer "
                                  "grade)", path=name, line=i + 1) from None
        if not rows:
            raise FormatError("the qrels file has no judgment", path=name)
        out = cls.__new__(cls)
        out._set(rows)
        out._numeric = all(s.isdigit() for s in set(out.subtopic))
        return out

    def __len__(self) -> int:
        return len(self.query)

    def __repr__(self) -> str:
        return (f"DiversityQrels({len(set(self.query))} queries, {len(self.query)} "
                "judgments)")

    def plain(self) -> Qrels:
        """The judgments without subtopics: each document's highest grade (what the
        measures that read no subtopic see)."""
        if self._plain is None:
            best: dict[str, dict[str, int]] = {}
            for q, d, g in zip(self.query, self.doc, self.grade.tolist()):
                docs = best.setdefault(q, {})
                if d not in docs or g > docs[d]:
                    docs[d] = g
            self._plain = Qrels(best)
        return self._plain


def _from_dict(data: Mapping) -> list:
    rows = []
    for q, subtopics in data.items():
        if not isinstance(subtopics, Mapping):
            raise InputTypeError(f"query {q!r}: expected {{subtopic: {{doc: grade}}}}, not "
                                 f"{type(subtopics).__name__}")
        for s, docs in subtopics.items():
            if not isinstance(docs, Mapping):
                raise InputTypeError(f"query {q!r}, subtopic {s!r}: expected {{doc: grade}}, "
                                     f"not {type(docs).__name__}")
            for d, g in docs.items():
                rows.append((str(q), str(s), str(d), _grade(g, q, d)))
    return rows


def _grade(g, q, d) -> int:
    if isinstance(g, bool) or not isinstance(g, (int, np.integer)):
        raise InputTypeError(f"query {q!r}, document {d!r}: the grade {g!r} is not an integer")
    return int(g)


def _from_frame(df) -> list:
    cols = list(df.columns)
    sub = "iteration" if "iteration" in cols else "subtopic" if "subtopic" in cols else None
    need = ["query_id", "doc_id", "relevance"]
    missing = [c for c in need if c not in cols]
    if sub is None or missing:
        raise InputError("diversity qrels as a DataFrame need the columns query_id, doc_id, "
                         f"relevance and iteration (or subtopic); missing: "
                         f"{', '.join(missing + (['iteration'] if sub is None else []))}")
    return [(str(q), str(s), str(d), _grade(g, q, d)) for q, d, g, s in
            zip(df["query_id"], df["doc_id"], df["relevance"], df[sub])]


def _from_tuples(data: Iterable) -> list:
    rows = []
    for rec in data:
        fields = getattr(rec, "_fields", None)
        if fields is None or "iteration" not in fields and "subtopic_id" not in fields:
            raise InputTypeError(f"expected {_FORMS}; a record {rec!r} has no iteration "
                                 "(subtopic)")
        s = rec.iteration if "iteration" in fields else rec.subtopic_id
        rows.append((str(rec.query_id), str(s), str(rec.doc_id),
                     _grade(rec.relevance, rec.query_id, rec.doc_id)))
    return rows


def as_diversity_qrels(qrels: Any) -> DiversityQrels:
    """``qrels`` as DiversityQrels, or an error saying the measures need subtopics."""
    if isinstance(qrels, DiversityQrels):
        return qrels
    if isinstance(qrels, (str, bytes, os.PathLike)):
        # a file's second column is the subtopic, as ndeval and ir_measures read it
        return DiversityQrels.from_file(qrels)
    if isinstance(qrels, Mapping):
        first = next(iter(qrels.values()), None)
        if isinstance(first, Mapping) and all(isinstance(v, Mapping) for v in first.values()):
            return DiversityQrels(qrels)
    elif hasattr(qrels, "columns") and ("iteration" in qrels.columns
                                        or "subtopic" in qrels.columns) or isinstance(qrels, (list, tuple)) and qrels and hasattr(qrels[0], "_fields"):
        return DiversityQrels(qrels)
    raise InputTypeError(
        f"a diversity measure (ir_measures' {', '.join(sorted(SUBTOPIC_FAMILIES))}) needs "
        f"{_FORMS}, or a path to a qrels file whose second column is the subtopic")


def has_subtopic_columns(columns: list[Column]) -> bool:
    return any(c.family in SUBTOPIC_FAMILIES for c in columns)


def subtopic_values(qrels: Any, run: Any, columns: list[Column], queries: str,
                    options: dict) -> tuple[list, np.ndarray, Qrels]:
    """(query ids, values (queries, columns), the plain qrels) of a call that asks for
    diversity measures: the others through the engine, on each document's highest grade."""
    dq = as_diversity_qrels(qrels)
    plain = dq.plain()
    run = as_run(run, options["workers"])
    others = [i for i, c in enumerate(columns) if c.family not in SUBTOPIC_FAMILIES]
    probe = [columns[i] for i in others] or parse_measures(["num_ret"])
    check_max_grades(plain, probe)
    ids, vals = per_query_values(plain, run, probe, queries, options, ordered=True)
    out = np.zeros((len(ids), len(columns)))
    if others:
        out[:, others] = vals
    groups: dict[tuple, list[int]] = {}
    for i, c in enumerate(columns):
        if c.family in SUBTOPIC_FAMILIES:
            level = options["relevance_level"] if c.rel is None else c.rel
            groups.setdefault((level, *c.values), []).append(i)
    encoded = _Encoded(dq, run, ids, options["max_docs"], options["judged_only"])
    for (level, alpha, beta), where in groups.items():
        depth = max(1, max(columns[i].k for i in where))
        curves, scalars, ideal_c, ideal_s, topic_of = encoded.measure(level, alpha, beta, depth)
        for i in where:
            out[:, i] = _column(columns[i], curves, scalars, ideal_c, ideal_s, topic_of, depth)
    return ids, np.ascontiguousarray(out), plain


def _run_docs(run) -> np.ndarray:
    """The run's document ids as a str array, entry by entry (each distinct id decoded
    once)."""
    if run.key_off is None:  # integer ids
        bias = (1 << 63) if run.id_bias else 0
        return np.array([str(int(h) + bias) for h in run.hashes.tolist()], dtype=str)
    raw = run.blob.tobytes()
    off = run.key_off.tolist()
    text = np.array([raw[off[i]:off[i + 1]].decode("utf-8") for i in range(len(off) - 1)],
                    dtype=str)
    return text[run.keys] if run.keys is not None else text


def _starts(*keys: np.ndarray) -> np.ndarray:
    """Where a run of equal key tuples starts, in sorted arrays."""
    n = len(keys[0])
    start = np.ones(n, bool)
    if n:
        start[1:] = np.logical_or.reduce([k[1:] != k[:-1] for k in keys])
    return start


class _Encoded:
    """The qrels and the run as ndeval's kernels take them, documents as integer codes in
    id order: judged documents are CSR rows (per query, in document id order) of the
    subtopics they are relevant to; each evaluated query's ranking a list of rows (-1: not
    judged), ranked as pyndeval ranks (score descending, then document id ascending)."""

    def __init__(self, dq: DiversityQrels, run, ids: list, max_docs: int | None,
                 judged_only: bool):
        i64 = np.int64
        qdocs = np.array(dq.doc, dtype=str)
        rdocs = _run_docs(run)
        vocab, codes = np.unique(np.concatenate([qdocs, rdocs]), return_inverse=True)
        codes = codes.astype(i64).ravel()
        ncodes = max(len(vocab), 1)
        qcode, rcode = codes[:len(qdocs)], codes[len(qdocs):]
        # queries: the qrels' in id order
        self.topic_ids, topic = np.unique(np.array(dq.query, dtype=str), return_inverse=True)
        topic = topic.astype(i64).ravel()
        # subtopics: numeric order (a file's) or order of first appearance (pyndeval's)
        sub_text = np.array(dq.subtopic, dtype=str)
        if dq._numeric:
            _, sub = np.unique(sub_text.astype(i64), return_inverse=True)
        else:
            _, first, inv = np.unique(sub_text, return_index=True, return_inverse=True)
            sub = np.argsort(np.argsort(first))[inv.ravel()]
        sub = sub.astype(i64).ravel()
        n = len(topic)
        # a subtopic judged twice for one document takes its last judgment
        order = np.lexsort((np.arange(n), sub, qcode, topic))
        t, c, g_sub, grade = topic[order], qcode[order], sub[order], dq.grade[order]
        last = np.ones(n, bool)
        last[:-1] = _starts(t, c, g_sub)[1:]
        t, c, g_sub, grade = t[last], c[last], g_sub[last], grade[last]
        # each query's subtopics, numbered from 0 in the global order
        pairs = np.lexsort((g_sub, t))
        pt, ps = t[pairs], g_sub[pairs]
        pstart = _starts(pt, ps)
        self.subtopics = np.bincount(pt[pstart], minlength=len(self.topic_ids)).astype(i64)
        self.nrel_offsets = np.concatenate(([0], np.cumsum(self.subtopics))).astype(i64)
        pair_index = np.cumsum(pstart) - 1
        local = np.empty(len(t), i64)
        local[pairs] = pair_index - self.nrel_offsets[pt]
        # judged documents: a row per (query, document)
        doc_start = _starts(t, c)
        doc_row = np.cumsum(doc_start) - 1
        self.row_key = t[doc_start] * i64(ncodes) + c[doc_start]
        rows = len(self.row_key)
        self.doc_offsets = np.searchsorted(t[doc_start], np.arange(len(self.topic_ids) + 1)
                                           ).astype(i64)
        self.t, self.local, self.doc_row, self.grade, self.rows = t, local, doc_row, grade, rows
        # the rankings of the evaluated queries
        where = {q: i for i, q in enumerate(ids)}
        run_pos = np.array([where.get(q, -1) for q in run.query_ids], i64)
        entry_pos = np.repeat(run_pos, np.diff(run.offsets))
        keep = entry_pos >= 0
        pos, score, rc = entry_pos[keep], run.values[keep], rcode[keep]
        ranked = np.lexsort((rc, -score, pos))
        pos, rc = pos[ranked], rc[ranked]
        if max_docs is not None:
            begin = np.searchsorted(pos, pos)
            top = np.arange(len(pos)) - begin < max_docs
            pos, rc = pos[top], rc[top]
        self.topic_of = np.searchsorted(self.topic_ids, np.array([str(q) for q in ids], str)
                                        ).astype(i64)
        key = self.topic_of[pos] * i64(ncodes) + rc
        at = np.minimum(np.searchsorted(self.row_key, key), max(rows - 1, 0))
        row = np.where((self.row_key[at] == key) if rows else np.zeros(len(key), bool),
                       at, -1).astype(i64)
        if judged_only:
            pos, row = pos[row >= 0], row[row >= 0]
        self.ranked = row
        self.offsets = np.concatenate(([0], np.cumsum(np.bincount(pos, minlength=len(ids)))
                                       )).astype(i64)

    def measure(self, level: int, alpha: float, beta: float, depth: int):
        i64 = np.int64
        rel = self.grade >= level
        rel_sub = self.local[rel]  # in (query, document, subtopic) order
        rel_offsets = np.concatenate(([0], np.cumsum(np.bincount(
            self.doc_row[rel], minlength=self.rows)))).astype(i64)
        nrel_sub = np.bincount(self.nrel_offsets[self.t[rel]] + rel_sub,
                               minlength=int(self.nrel_offsets[-1])).astype(i64)
        n_topics = len(self.subtopics)
        order = np.empty(self.rows, i64)
        _kernels.ndeval_ideal(self.doc_offsets, rel_offsets, rel_sub, self.subtopics, alpha,
                              order)
        ideal_c = np.empty((n_topics, 4 * depth))
        ideal_s = np.empty((n_topics, 2))
        _kernels.ndeval_topics(self.doc_offsets, order, np.arange(n_topics, dtype=i64),
                               rel_offsets, rel_sub, self.subtopics, self.nrel_offsets,
                               nrel_sub, alpha, beta, ideal_c, ideal_s)
        groups = len(self.offsets) - 1
        curves = np.empty((groups, 4 * depth))
        scalars = np.empty((groups, 2))
        _kernels.ndeval_topics(self.offsets, self.ranked, self.topic_of, rel_offsets, rel_sub,
                               self.subtopics, self.nrel_offsets, nrel_sub, alpha, beta,
                               curves, scalars)
        return curves, scalars, ideal_c, ideal_s, self.topic_of


def _column(c: Column, curves, scalars, ideal_c, ideal_s, topic_of, depth: int) -> np.ndarray:
    """One column's per-query values from ndeval's curves (depths 1..depth: ERR-IA,
    alpha-DCG, P-IA, subtopic recall) and scalars (NRBP, MAP-IA)."""
    f, k = c.family, c.k - 1
    if f == "NRBP":
        return scalars[:, 0]
    if f == "AP_IA":
        return scalars[:, 1]
    if f == "nNRBP":
        with np.errstate(divide="ignore", invalid="ignore"):
            return scalars[:, 0] / ideal_s[topic_of, 0]
    part = {"ERR_IA": 0, "nERR_IA": 0, "alpha_DCG": 1, "alpha_nDCG": 1, "P_IA": 2,
            "StRecall": 3}[f]
    value = curves[:, part * depth + k]
    if f in ("nERR_IA", "alpha_nDCG"):
        dcg = curves[:, depth + k]
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(dcg != 0, value / ideal_c[topic_of, part * depth + k], 0.0)
    return value
