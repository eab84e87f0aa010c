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
from ._engine import Evaluation, check_max_grades
from ._measure_parser import Column, parse_measures
from ._measures import SUBTOPIC_FAMILIES
from ._ranked import EMPTY_I64, EMPTY_U8, Qrels, as_run, from_encoded
from ._run_sources import per_query_values
from ._summaries import pair_queries
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
    The judgments are encoded for the measures on first use and the encoding kept (with the
    ideal rankings), so evaluating many runs against one DiversityQrels encodes them once;
    treat its attributes as read-only.

    Examples
    --------
    >>> import qafast
    >>> qrels = qafast.DiversityQrels({"q1": {"1": {"d1": 1}, "2": {"d2": 1, "d3": 1}}})
    >>> run = {"q1": {"d2": 0.9, "d3": 0.8, "d1": 0.7}}
    >>> result = qafast.evaluate(qrels, run, ["alpha_nDCG@5", "StRecall@2", "P@1"])
    >>> round(result["alpha_nDCG@5"], 6), result["StRecall@2"], result["P@1"]
    (0.965195, 0.5, 1.0)
    """

    __slots__ = ("_codes", "_encoded", "_ids", "_numeric", "grade")
    grade: np.ndarray
    #: each column's distinct ids (query, subtopic, document), in order of first appearance
    _ids: tuple[list[str], list[str], list[str]]
    #: each judgment's (query, subtopic, document) as indexes into ``_ids``
    _codes: tuple[np.ndarray, np.ndarray, np.ndarray]
    _numeric: bool
    _encoded: _EncodedQrels | None

    def __init__(self, data: Any):
        numeric = False
        if isinstance(data, DiversityQrels):
            self._ids = data._ids
            self._codes = data._codes
            self.grade = data.grade.copy()  # (the id lists and codes are never written)
            self._encoded = None
            self._numeric = data._numeric
            return
        if type(data) is dict and _set_from_dict(self, data):
            return
        if isinstance(data, Mapping):
            columns = _from_dict(data)
        elif hasattr(data, "columns") and hasattr(data, "itertuples"):
            columns = _from_frame(data)
        elif isinstance(data, Iterable) and not isinstance(data, (str, bytes)):
            columns = _from_tuples(data)
        else:
            raise InputTypeError(f"expected {_FORMS}, not {type(data).__name__}")
        self._set(*columns)
        self._numeric = numeric

    def _set(self, query: list[str], subtopic: list[str], doc: list[str],
             grade: list[int]) -> None:
        columns = [_first_codes(column) for column in (query, subtopic, doc)]
        self._ids = (columns[0][0], columns[1][0], columns[2][0])
        self._codes = (columns[0][1], columns[1][1], columns[2][1])
        try:
            self.grade = np.array(grade, dtype=np.int64)
        except OverflowError:
            i = next(i for i, g in enumerate(grade) if not -2**63 <= g < 2**63)
            raise InputError(f"diversity qrels: query {query[i]!r}, subtopic {subtopic[i]!r}, "
                             f"document {doc[i]!r}: the grade {grade[i]} is outside the 64-bit "
                             "integer range") from None
        self._encoded = None
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
        scanned = _scanned(cls, data)
        if scanned is not None:
            return scanned
        try:
            # the whole file column by column; a line it refuses is found below
            fields = _ascii_fields(data)
            if fields is not None:
                query, subtopic, doc, grades = (fields[i::4] for i in range(4))
            else:
                # (the grade stays bytes: int() of bytes takes ASCII digits only)
                lines = [[f[0].decode(), f[1].decode(), f[2].decode(), f[3]] if len(f) == 4
                         else f for f in map(bytes.split, data.split(b"\n")) if f]
                if set(map(len, lines)) - {4}:
                    raise ValueError
                columns = [[f[i] for f in lines] for i in range(4)]
                query, subtopic, doc, grades = columns  # type: ignore[assignment]
            grade = list(map(int, grades))
        except ValueError:  # UnicodeDecodeError included
            for i, line in enumerate(data.split(b"\n")):
                f = line.split()
                try:
                    if f:
                        _judgment(f)
                except ValueError:
                    raise FormatError("expected 'query subtopic doc grade' (UTF-8, an "
                                      "integer grade)", path=name, line=i + 1) from None
            raise  # pragma: no cover - every refused line is found above
        if not query:
            raise FormatError("the qrels file has no judgment", path=name)
        if max(grade) >= 2**63 or min(grade) < -2**63:
            outside = next(i for i, g in enumerate(grade) if not -2**63 <= g < 2**63)
            at = [i for i, text in enumerate(data.split(b"\n")) if text.split()][outside]
            raise FormatError(f"the grade {grade[outside]} is outside the 64-bit integer "
                              "range", path=name, line=at + 1)
        out = cls.__new__(cls)
        out._set(query, subtopic, doc, grade)
        out._numeric = _whole_numbers(out._ids[1])
        return out

    @property
    def query(self) -> list[str]:
        """Each judgment's query id."""
        return self._column(0)

    @property
    def subtopic(self) -> list[str]:
        """Each judgment's subtopic."""
        return self._column(1)

    @property
    def doc(self) -> list[str]:
        """Each judgment's document id."""
        return self._column(2)

    def _column(self, i: int) -> list[str]:
        names = self._ids[i]
        return [names[c] for c in self._codes[i].tolist()]

    def __len__(self) -> int:
        return len(self.grade)

    def __repr__(self) -> str:
        return f"DiversityQrels({len(self._ids[0])} queries, {len(self)} judgments)"

    def plain(self) -> Qrels:
        """The judgments without subtopics: each document's highest grade (what the
        measures that read no subtopic see)."""
        return self._encode().plain

    def _encode(self) -> _EncodedQrels:
        # encoded once: a DiversityQrels is typically evaluated against many runs
        if self._encoded is None:
            self._encoded = _EncodedQrels(self)
        return self._encoded


def _whole_numbers(subtopics: list[str]) -> bool:
    """Whether every subtopic is written in ASCII digits (then summed in numeric order, as
    ndeval reads them; '²' is a digit to str.isdigit but not to int())."""
    return all(s.isascii() and s.isdigit() for s in subtopics)


def _scanned(cls: type[DiversityQrels], data: bytes) -> DiversityQrels | None:
    """A qrels file read by the compiled scan (``diversity_qrels_scan``): what
    ``from_file``'s Python reading gives for a file of lines of four fields split by spaces
    or tabs, in UTF-8, an integer grade of up to 18 digits; None for any other file (that
    reading then applies every rule and names a bad line)."""
    lines = data.count(b"\n") + 1
    code = np.empty((lines, 3), np.int64)
    grade = np.empty(lines, np.int64)
    tokens = np.empty((3 * lines, 4), np.int64)
    counts = np.zeros(3, np.int64)
    n = _kernels.diversity_qrels_scan(data, code, grade, tokens, counts)
    if n <= 0:
        return None  # (no judgment: the Python reading says so)
    used = tokens[:int(counts.sum())]
    try:
        names = [data[a:a + b].decode() for a, b in zip(used[:, 1].tolist(),
                                                         used[:, 2].tolist())]
    except UnicodeDecodeError:
        return None
    column = used[:, 0]
    out = cls.__new__(cls)
    query_ids, subtopic_ids, doc_ids = ([names[i] for i in np.flatnonzero(column == c).tolist()]
                                        for c in range(3))
    out._ids = (query_ids, subtopic_ids, doc_ids)
    out._codes = (code[:n, 0].copy(), code[:n, 1].copy(), code[:n, 2].copy())
    out.grade = grade[:n].copy()
    out._encoded = None
    out._numeric = _whole_numbers(out._ids[1])
    return out


def _ascii_fields(data: bytes) -> list[str] | None:
    """The fields of an ASCII qrels file whose every non-blank line holds four, in order;
    None for any other file (read line by line). One split of the whole text instead of one
    per line: where the lines start and end is checked on the bytes, vectorised."""
    if not data.isascii() or any(c in data for c in b"\x1c\x1d\x1e\x1f"):
        return None  # str.split() would split at 0x1c-0x1f, where bytes.split() does not
    raw = np.frombuffer(data, np.uint8)
    space = (raw == 32) | ((raw >= 9) & (raw <= 13))  # bytes.split()'s whitespace
    first = ~space  # the first byte of each field
    first[1:] &= space[:-1]
    line = np.searchsorted(np.flatnonzero(raw == 10), np.flatnonzero(first), side="right")
    per_line = np.bincount(line) if len(line) else np.zeros(0, np.int64)
    if ((per_line != 0) & (per_line != 4)).any():
        return None
    return data.decode("ascii").split()


def _judgment(f: list[bytes]) -> tuple[str, str, str, int]:
    """A qrels line's fields as ``(query, subtopic, doc, grade)``; ValueError if not."""
    if len(f) != 4:
        raise ValueError
    return f[0].decode(), f[1].decode(), f[2].decode(), int(f[3])


def _first_codes(values: list[str]) -> tuple[list[str], np.ndarray]:
    """(the distinct values in order of first appearance, each value's index among them)."""
    index: dict = dict.fromkeys(values)
    for i, v in enumerate(index):
        index[v] = i
    return list(index), np.fromiter(map(index.__getitem__, values), np.int64, len(values))


def _set_from_dict(out: DiversityQrels, data: dict) -> bool:
    """Fill ``out`` from ``{query: {subtopic: {doc: grade}}}`` in one compiled walk of the
    dicts, without a Python object per judgment; False (``out`` untouched) for a dict the
    walk does not take (ids other than str, other mappings, grades other than int in the
    int64 range, or a dict changed while read): ``_from_dict`` reads those."""
    total = _kernels.diversity_dict_total(data)
    if total < 0:
        return False
    ids: tuple[list[str], list[str], list[str]] = ([], [], [])
    codes = (np.empty(total, np.int64), np.empty(total, np.int64), np.empty(total, np.int64))
    grade = np.empty(total, np.int64)
    if _kernels.encode_diversity_dict(data, *ids, *codes, grade) != total:
        return False
    out._ids, out._codes, out.grade = ids, codes, grade
    out._encoded = None
    out._numeric = False
    return True


def _from_dict(data: Mapping) -> tuple[list, list, list, list]:
    query: list[str] = []
    subtopic: list[str] = []
    doc: list[str] = []
    grade: list[int] = []
    for q, subtopics in data.items():
        if not isinstance(subtopics, Mapping):
            raise InputTypeError(f"query {q!r}: expected {{subtopic: {{doc: grade}}}}, not "
                                 f"{type(subtopics).__name__}")
        q_text = str(q)
        for s, docs in subtopics.items():
            if not isinstance(docs, Mapping):
                raise InputTypeError(f"query {q!r}, subtopic {s!r}: expected {{doc: grade}}, "
                                     f"not {type(docs).__name__}")
            # a subtopic's judgments a list at a time: per-judgment Python work was most
            # of the cost of a large dict; read once, so that every column has one entry
            # per judgment whatever the mapping's len() says
            items = list(docs.items())
            n = len(items)
            query.extend([q_text] * n)
            subtopic.extend([str(s)] * n)
            names = [d for d, _ in items]
            doc.extend(names if set(map(type, names)) <= {str} else map(str, names))
            values = [g for _, g in items]
            if not set(map(type, values)) <= {int}:
                values = [_grade(g, q, d) for d, g in items]
            grade.extend(values)
    return query, subtopic, doc, grade


def _grade(g, q, d) -> int:
    if isinstance(g, bool) or not isinstance(g, (int, np.integer)):
        raise InputTypeError(f"query {q!r}, document {d!r}: the grade {g!r} is not an integer")
    return int(g)


def _from_frame(df) -> tuple[list, list, list, list]:
    cols = list(df.columns)
    sub = "iteration" if "iteration" in cols else "subtopic" if "subtopic" in cols else None
    need = ["query_id", "doc_id", "relevance"]
    missing = [c for c in need if c not in cols]
    if sub is None or missing:
        raise InputError("diversity qrels as a DataFrame need the columns query_id, doc_id, "
                         f"relevance and iteration (or subtopic); missing: "
                         f"{', '.join(missing + (['iteration'] if sub is None else []))}")
    rows = [(str(q), str(s), str(d), _grade(g, q, d)) for q, d, g, s in
            zip(df["query_id"], df["doc_id"], df["relevance"], df[sub])]
    return _columns(rows)


def _columns(rows: list) -> tuple[list, list, list, list]:
    """(query, subtopic, doc, grade) columns of ``(query, subtopic, doc, grade)`` rows."""
    return ([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows],
            [r[3] for r in rows])


def _from_tuples(data: Iterable) -> tuple[list, list, list, list]:
    rows = []
    for rec in data:
        fields = getattr(rec, "_fields", None)
        if fields is None or "iteration" not in fields and "subtopic_id" not in fields:
            raise InputTypeError(f"expected {_FORMS}; a record {rec!r} has no iteration "
                                 "(subtopic)")
        s = rec.iteration if "iteration" in fields else rec.subtopic_id
        rows.append((str(rec.query_id), str(s), str(rec.doc_id),
                     _grade(rec.relevance, rec.query_id, rec.doc_id)))
    return _columns(rows)


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
                    options: dict) -> tuple[list, np.ndarray, Qrels | None]:
    """(query ids, values (queries, columns), the plain qrels) of a call that asks for
    diversity measures: the others through the engine, on each document's highest grade.
    The plain qrels are None where a run dict was measured against a qrels dict directly
    (callers read them only for ``queries="qrels"``, which that path does not take)."""
    direct = _dict_values(qrels, run, columns, queries, options)
    if direct is not None:
        return direct
    dq = as_diversity_qrels(qrels)
    encoded = dq._encode()
    plain = encoded.plain
    others = [i for i, c in enumerate(columns) if c.family not in SUBTOPIC_FAMILIES]
    probe = [columns[i] for i in others] or parse_measures(["num_ret"])
    check_max_grades(plain, probe)
    if not others:
        found = _rank_run_dict(encoded, run, queries, options)
        if found is not None:
            ids, topic_of, offsets, ranked = found
            out = np.zeros((len(ids), len(columns)))
            _fill(out, encoded, columns, options, topic_of, offsets, ranked)
            return ids, out, plain
    run = as_run(run, options["workers"])
    if others:
        ids, vals = per_query_values(plain, run, probe, queries, options, ordered=True)
    else:
        # only the evaluated queries are wanted: the engine picks them (and warns as it
        # does) when it is set up, and ranks nothing until a measure is asked of it
        ids = Evaluation(plain, run, queries=queries, **options).ids
    out = np.zeros((len(ids), len(columns)))
    if others:
        out[:, others] = vals
    if len(others) < len(columns):
        topic_of, offsets, ranked = encoded.rankings(run, ids, options["max_docs"],
                                                     options["judged_only"])
        _fill(out, encoded, columns, options, topic_of, offsets, ranked)
    return ids, np.ascontiguousarray(out), plain


def _fill(out: np.ndarray, encoded: _EncodedQrels, columns: list[Column], options: dict,
          topic_of: np.ndarray, offsets: np.ndarray, ranked: np.ndarray) -> None:
    """``out``'s diversity columns from the rankings (``offsets``, ``ranked`` rows, query i
    judged as topic ``topic_of[i]``): ndeval's kernels run once per (relevance level, alpha,
    beta), at the largest cut-off asked with them."""
    groups: dict[tuple, list[int]] = {}
    for i, c in enumerate(columns):
        if c.family in SUBTOPIC_FAMILIES:
            level = options["relevance_level"] if c.rel is None else c.rel
            groups.setdefault((level, *c.values), []).append(i)
    for (level, alpha, beta), where in groups.items():
        depth = max(1, max(columns[i].k for i in where))
        curves, scalars = encoded.measure(level, alpha, beta, depth, topic_of, offsets,
                                          ranked)
        ideal_c, ideal_s = encoded.ideal(level, alpha, beta, depth)
        for i in where:
            out[:, i] = _column(columns[i], curves, scalars, ideal_c, ideal_s, topic_of, depth)


def _ranked_queries(run: dict) -> list[str] | None:
    """The queries of a run dict with a document, as the general path pairs them; None where
    a query id is not an exact str or a query's documents not a dict (the general path
    converts or refuses them)."""
    ranked: list[str] = []
    for q, docs in run.items():
        if type(q) is not str or type(docs) is not dict:
            return None
        if docs:
            ranked.append(q)
    return ranked


def _rank_run_dict(encoded: _EncodedQrels, run: Any, queries: str,
                   options: dict) -> tuple[list, np.ndarray, np.ndarray, np.ndarray] | None:
    """(query ids, topic of each, offsets, rows) of a run dict ranked against encoded qrels
    by ``diversity_rank_dicts``, each run document looked up by its str's own hash among
    its topic's judged ones (as when a DiversityQrels is evaluated against many runs);
    None where that does not apply, and the run is read as a Run."""
    if type(run) is not dict or queries not in ("run", "qrels"):
        return None
    row_docs, row_hash = encoded.row_strs()
    if row_docs is None:
        return None
    ranked = _ranked_queries(run)
    if ranked is None:
        return None
    ids, pair_run, pair_qrels = pair_queries(
        ranked, encoded.query_ids, every_qrels_query=queries == "qrels",
        qrels_index=encoded.topic_index)
    if not any(r >= 0 for r in pair_run):
        return None  # (the general path says so, or warns)
    if len(ranked) > len(ids) or queries == "qrels":
        chosen = {ranked[r] for r in pair_run if r >= 0}
        if not _kernels.diversity_dicts_valid([run[q] for q in ranked if q not in chosen],
                                              True):
            return None
    run_topics = [run[ranked[r]] if r >= 0 else {} for r in pair_run]
    i64 = np.int64
    offsets = np.zeros(len(ids) + 1, i64)
    np.cumsum([len(docs) for docs in run_topics], out=offsets[1:])
    rows = np.empty(int(offsets[-1]), i64)
    topic_of = np.array(pair_qrels, i64)
    if not _kernels.diversity_rank_dicts(row_docs, row_hash, encoded.doc_offsets, run_topics,
                                         topic_of, offsets, rows):
        return None
    max_docs, judged_only = options["max_docs"], options["judged_only"]
    if max_docs is not None or judged_only:
        keep = np.ones(len(rows), bool)
        if max_docs is not None:
            keep = np.arange(len(rows), dtype=i64) - np.repeat(offsets[:-1],
                                                               np.diff(offsets)) < max_docs
        if judged_only:
            keep &= rows >= 0
        offsets, rows = _kept(offsets, rows, keep)
    return ids, topic_of, offsets, rows


def _kept(offsets: np.ndarray, rows: np.ndarray, keep: np.ndarray) -> tuple:
    """(offsets, rows) of the rankings with only the entries where ``keep`` holds."""
    n = len(offsets) - 1
    query = np.repeat(np.arange(n, dtype=np.int64), np.diff(offsets))
    out = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(query[keep], minlength=n), out=out[1:])
    return out, rows[keep]


def _dict_values(qrels: Any, run: Any, columns: list[Column], queries: str,
                 options: dict) -> tuple[list, np.ndarray, None] | None:
    """``subtopic_values`` of a run dict against a qrels dict, every measure a diversity
    measure, read straight into ndeval's layout (``diversity_dict_rankings``) rather than
    encoded into a DiversityQrels, a Run and the engine's qrels first; None where this path
    does not apply (other inputs, options or measures, or entries the kernel does not take),
    and the general path reads the input, with its conversions and errors."""
    if (type(qrels) is not dict or type(run) is not dict or queries != "run"
            or options["max_docs"] is not None or options["judged_only"]
            or not all(c.family in SUBTOPIC_FAMILIES for c in columns)
            or _kernels.diversity_dict_total(qrels) < 0):
        return None
    # subtopics numbered at their first judgment, over every query, as DiversityQrels numbers
    # them; queries with a judgment and (run) with a document, as the general path pairs them
    code: dict[str, int] = {}
    judged: list[str] = []
    sizes: dict[str, int] = {}
    for q, subtopics in qrels.items():
        size = 0
        for s, docs in subtopics.items():
            if docs:
                code.setdefault(s, len(code))
                size += len(docs)
        if size:
            judged.append(q)
            sizes[q] = size
    ranked = _ranked_queries(run)
    if ranked is None:
        return None
    ids = pair_queries(ranked, judged, every_qrels_query=False)[0]
    if not ids:
        return None  # (the general path says why there is nothing to evaluate)
    if len(ids) < len(judged) or len(ids) < len(ranked):
        # the queries left out are not measured, but the general path would read them
        chosen = set(ids)
        if not (_kernels.diversity_dicts_valid([qrels[q] for q in judged if q not in chosen],
                                               False)
                and _kernels.diversity_dicts_valid([run[q] for q in ranked
                                                    if q not in chosen], True)):
            return None
    i64 = np.int64
    n = len(ids)
    judgment_offsets = np.zeros(n + 1, i64)
    np.cumsum([sizes[q] for q in ids], out=judgment_offsets[1:])
    run_offsets = np.zeros(n + 1, i64)
    np.cumsum([len(run[q]) for q in ids], out=run_offsets[1:])
    total = int(judgment_offsets[-1])
    t, local, doc_row, grade = (np.empty(total, i64) for _ in range(4))
    doc_offsets = np.empty(n + 1, i64)
    subtopics = np.empty(n, i64)
    rows = np.empty(int(run_offsets[-1]), i64)
    if _kernels.diversity_dict_rankings([qrels[q] for q in ids], [run[q] for q in ids], code,
                                        judgment_offsets, run_offsets, t, local, doc_row,
                                        grade, doc_offsets, subtopics, rows) != total:
        return None
    encoded = _EncodedQrels.from_rows(t, local, doc_row, grade, doc_offsets, subtopics)
    out = np.zeros((n, len(columns)))
    _fill(out, encoded, columns, options, np.arange(n, dtype=i64), run_offsets, rows)
    return ids, out, None


class _EncodedQrels:
    """Diversity qrels as ndeval's kernels take them: judged documents are CSR rows (per
    query, in document id order) of the subtopics they are relevant to. ``row_qrels`` holds
    the same (query, document) rows as engine qrels whose grade is the row number, so that
    the engine's hashed join (``rank_judged``) finds each ranked document's row without
    decoding the run's ids; ``plain`` is the same with each document's highest grade."""

    def __init__(self, dq: DiversityQrels):
        i64 = np.int64
        n = len(dq.grade)
        (query_ids, subtopic_ids, doc_ids), (query_code, subtopic_code, doc_code) = (
            dq._ids, dq._codes)
        # queries numbered in order of first appearance (as the engine's qrels list them)
        self.query_ids = query_ids
        self.topic_index = {q: i for i, q in enumerate(query_ids)}
        self._doc_ids = doc_ids
        self._row_strs: tuple = ()
        # subtopics: numeric order (a file's) or order of first appearance (pyndeval's)
        if dq._numeric:
            number = [int(v) for v in subtopic_ids]
            place = {x: i for i, x in enumerate(sorted(set(number)))}
            sub = np.array([place[x] for x in number], i64)[subtopic_code]
            n_subtopics = len(place)
        else:
            sub = subtopic_code
            n_subtopics = len(subtopic_ids)
        topics = len(query_ids)
        t, local, doc_row, grade = (np.empty(n, i64) for _ in range(4))
        row_doc, best, hashes = (np.empty(n, i64) for _ in range(3))
        key_off = np.empty(n + 1, i64)
        self.doc_offsets = np.empty(topics + 1, i64)
        self.subtopics = np.empty(topics, i64)
        # sorted by (query, document id, subtopic), a row per (query, document), a
        # subtopic judged twice for one document taking its last judgment
        kept, rows, utf8 = _kernels.diversity_qrels_rows(
            query_code, np.ascontiguousarray(sub, i64), doc_code, dq.grade, doc_ids, topics,
            n_subtopics, t, local, doc_row, grade, self.doc_offsets, self.subtopics, row_doc,
            best, hashes, key_off)
        self.t, self.local, self.doc_row, self.grade = (t[:kept], local[:kept],
                                                        doc_row[:kept], grade[:kept])
        self.rows = rows
        self.row_doc = row_doc[:rows]
        best = best[:rows]
        # the plain qrels' grades are int32 (two reductions: cheaper than a mask to search)
        if rows and (int(best.min()) < -2**31 or int(best.max()) >= 2**31):
            outside = (best < -2**31) | (best >= 2**31)
            i = int(np.argmax(outside))
            q = int(np.searchsorted(self.doc_offsets, i, side="right")) - 1
            raise InputError(f"diversity qrels: query {query_ids[q]!r}, document "
                             f"{doc_ids[row_doc[i]]!r}: grade {int(best[i])} is "
                             "outside the 32-bit integer range")
        self.nrel_offsets = np.concatenate(([0], np.cumsum(self.subtopics))).astype(i64)
        # the rows as engine qrels
        hashes, key_off = hashes[:rows], key_off[:rows + 1]
        blob = np.frombuffer(utf8, np.uint8) if utf8 else EMPTY_U8
        self.row_qrels = from_encoded(Qrels, query_ids, self.doc_offsets,
                                      np.arange(rows, dtype=np.int32), hashes,
                                      key_off=key_off, blob=blob, source="diversity qrels")
        self.plain = from_encoded(Qrels, query_ids, self.doc_offsets, best.astype(np.int32),
                                  hashes, key_off=key_off, blob=blob, source="diversity qrels")
        self._levels: dict[int, tuple] = {}
        self._ideal: dict[tuple, tuple] = {}

    @classmethod
    def from_rows(cls, t, local, doc_row, grade, doc_offsets, subtopics) -> _EncodedQrels:
        """The tables the measures read, from ``diversity_dict_rankings``' judgments (no
        engine qrels: that path looks the run's documents up itself)."""
        out = cls.__new__(cls)
        out.t, out.local, out.doc_row, out.grade = t, local, doc_row, grade
        out.doc_offsets, out.subtopics = doc_offsets, subtopics
        out.rows = int(doc_offsets[-1])
        out.nrel_offsets = np.concatenate(([0], np.cumsum(subtopics))).astype(np.int64)
        out._levels = {}
        out._ideal = {}
        return out

    def row_strs(self) -> tuple:
        """(each row's document id, as the exact str the judgments gave, and its Python
        hash), made once, for ``diversity_rank_dicts``; (None, None) where an id is not an
        exact str (that kernel compares exact strs only)."""
        if not self._row_strs:
            docs = [self._doc_ids[c] for c in self.row_doc.tolist()]
            if set(map(type, docs)) <= {str}:
                self._row_strs = (docs, np.fromiter(map(hash, docs), np.int64, len(docs)))
            else:
                self._row_strs = (None, None)
        return self._row_strs

    def relevant(self, level: int) -> tuple:
        """(rel_offsets, rel_sub, nrel_sub) of the judgments of at least ``level``."""
        if level not in self._levels and -2**63 <= level < 2**63:
            n = len(self.grade)
            rel_offsets = np.empty(self.rows + 1, np.int64)
            rel_sub = np.empty(n, np.int64)
            nrel_sub = np.empty(int(self.nrel_offsets[-1]), np.int64)
            m = _kernels.diversity_relevant(self.grade, self.local, self.doc_row, self.t,
                                            self.nrel_offsets, level, rel_offsets, rel_sub,
                                            nrel_sub)
            self._levels[level] = (rel_offsets, rel_sub[:m], nrel_sub)
        elif level not in self._levels:  # (a level no int64 grade reaches, or all do)
            i64 = np.int64
            rel = self.grade >= level
            rel_sub = self.local[rel]  # in (query, document, subtopic) order
            rel_offsets = np.concatenate(([0], np.cumsum(np.bincount(
                self.doc_row[rel], minlength=self.rows)))).astype(i64)
            nrel_sub = np.bincount(self.nrel_offsets[self.t[rel]] + rel_sub,
                                   minlength=int(self.nrel_offsets[-1])).astype(i64)
            self._levels[level] = (rel_offsets, rel_sub, nrel_sub)
        return self._levels[level]

    def ideal(self, level: int, alpha: float, beta: float, depth: int) -> tuple:
        """(curves, scalars) of each query's ideal ranking, computed once per parameters:
        only their ERR-IA, alpha-DCG and NRBP are read (the normalisers)."""
        key = (level, alpha, beta, depth)
        if key not in self._ideal:
            i64 = np.int64
            rel_offsets, rel_sub, nrel_sub = self.relevant(level)
            n_topics = len(self.subtopics)
            doc_offsets = self.doc_offsets
            if 0 <= alpha <= 1 and 0 <= beta <= 1:
                # Only the documents relevant to some subtopic: the others have no gain, so
                # the greedy ideal takes every document of positive gain before any of them,
                # and what comes after adds exact zeros to the values normalised by the
                # ideal (ERR-IA, alpha-DCG, NRBP); the greedy choice is quadratic in a
                # topic's documents, and most judged documents are usually not relevant.
                # (An alpha or beta outside [0, 1] can make gains negative or infinite.)
                kept_offsets = np.empty(len(rel_offsets), i64)
                doc_offsets = np.empty(len(doc_offsets), i64)
                kept = _kernels.diversity_relevant_rows(self.doc_offsets, rel_offsets,
                                                        doc_offsets, kept_offsets)
                rel_offsets = kept_offsets[:kept + 1]
            order = np.empty(len(rel_offsets) - 1, i64)
            _kernels.ndeval_ideal(doc_offsets, rel_offsets, rel_sub, self.subtopics, alpha,
                                  order)
            ideal_c = np.empty((n_topics, 4 * depth))
            ideal_s = np.empty((n_topics, 2))
            _kernels.ndeval_topics(doc_offsets, order, np.arange(n_topics, dtype=i64),
                                   rel_offsets, rel_sub, self.subtopics, self.nrel_offsets,
                                   nrel_sub, alpha, beta, ideal_c, ideal_s)
            self._ideal[key] = (ideal_c, ideal_s)
        return self._ideal[key]

    def rankings(self, run, ids: list, max_docs: int | None, judged_only: bool) -> tuple:
        """(topic of each evaluated query, offsets, rows): each query of ``ids`` ranked as
        pyndeval ranks (score descending, then document id ascending), a judged document as
        its row, any other as -1.

        The engine's ``rank_judged`` ranks the judged documents in trec_eval's order, whose
        ties go the other way (document id descending); within a group of equal scores
        pyndeval's order is that order reversed, so a rank r in a group spanning positions
        lo..hi-1 is position lo + hi - r."""
        i64 = np.int64
        rq = self.row_qrels
        n = len(ids)
        where = run.query_index()
        qpos = np.array([where.get(q, -1) for q in ids], i64)
        # the row qrels list the queries as topic_index numbers them
        pair_qrels = np.array([self.topic_index.get(str(q), -1) for q in ids], i64)
        # a query without judgments has no judged document to look up
        pair_run = np.where(pair_qrels >= 0, qpos, -1)
        pair_qrels = np.maximum(pair_qrels, 0)
        # (a query without judgments has no ranked judged document: any topic does)
        topic_of = pair_qrels
        run_len = np.diff(run.offsets)
        seg_len = (np.where(qpos >= 0, run_len[np.maximum(qpos, 0)], 0) if len(run_len)
                   else np.zeros(n, i64))
        judged_len = rq.offsets[pair_qrels + 1] - rq.offsets[pair_qrels]
        room = np.where(pair_run >= 0, np.minimum(seg_len, judged_len), 0)
        out_off = np.zeros(n + 1, i64)
        np.cumsum(room, out=out_off[1:])
        total = int(out_off[-1])
        out_rank = np.empty(total, np.int32)
        out_row = np.empty(total, np.int32)
        count = np.empty(n, i64)
        num_ret = np.empty(n, i64)
        hashes, keys, key_off, blob = run.kernel_args()
        tiekeys = run.tiekeys if run.tiekeys is not None else EMPTY_I64
        rq_hashes, rq_keys, rq_key_off, rq_blob = rq.kernel_args()
        _kernels.rank_judged(run.offsets, hashes, tiekeys, keys, key_off, blob, run.values,
                             rq.offsets, rq_hashes, rq_keys, rq_key_off, rq_blob, rq.values,
                             pair_run, pair_qrels,
                             0, False, out_off, out_rank, out_row, count, num_ret)
        length = seg_len if max_docs is None else np.minimum(seg_len, max_docs)
        offsets = np.zeros(n + 1, i64)
        np.cumsum(length, out=offsets[1:])
        ranked = np.empty(int(offsets[-1]), i64)
        if not _kernels.ndeval_place_judged(run.offsets, run.values, qpos, out_off, out_rank,
                                            out_row, count, offsets, ranked):
            ranked = _place_sorted(run, qpos, seg_len, out_off, out_rank, out_row, count, room,
                                   offsets, length)
        if judged_only:
            offsets, ranked = _kept(offsets, ranked, ranked >= 0)
        return topic_of, offsets, np.ascontiguousarray(ranked)

    def measure(self, level: int, alpha: float, beta: float, depth: int, topic_of,
                offsets, ranked) -> tuple:
        """(curves, scalars) of the rankings for ndeval's parameters."""
        rel_offsets, rel_sub, nrel_sub = self.relevant(level)
        groups = len(offsets) - 1
        curves = np.empty((groups, 4 * depth))
        scalars = np.empty((groups, 2))
        _kernels.ndeval_topics(offsets, ranked, topic_of, rel_offsets, rel_sub,
                               self.subtopics, self.nrel_offsets, nrel_sub, alpha, beta,
                               curves, scalars)
        return curves, scalars


def _place_sorted(run, qpos, seg_len, out_off, out_rank, out_row, count, room, offsets,
              length) -> np.ndarray:
    """``ndeval_place_judged``'s rankings where a query's scores are not written in
    descending order: its scores sorted first."""
    i64 = np.int64
    n = len(qpos)
    total = int(out_off[-1])
    # each evaluated query's scores in descending order, to find the groups of ties
    seg_off = np.zeros(n + 1, i64)
    np.cumsum(seg_len, out=seg_off[1:])
    entries = int(seg_off[-1])
    entry = np.arange(entries, dtype=i64) + np.repeat(
        run.offsets[np.maximum(qpos, 0)] - seg_off[:-1], seg_len)
    scores = run.values[entry]
    # where each query's entries start, but at the first (a boundary within the array)
    inner = seg_off[1:-1][seg_off[1:-1] < entries]
    descending = scores[1:] <= scores[:-1]
    descending[inner[inner > 0] - 1] = True  # a query's first entry may exceed the last
    if not bool(np.all(descending)):  # not written in score order
        entry_query = np.repeat(np.arange(n, dtype=i64), seg_len)
        scores = scores[np.lexsort((-scores, entry_query))]
    # the groups of tied scores: each entry's group, and where each group starts and ends
    starts = np.ones(entries, bool)
    starts[1:] = scores[1:] != scores[:-1]
    starts[inner] = True
    group_of = np.cumsum(starts) - 1
    bounds = np.append(np.flatnonzero(starts), entries)
    # the judged documents found: their positions in pyndeval's order
    found_query = np.repeat(np.arange(n, dtype=i64), count)
    keep = np.arange(total, dtype=i64) - out_off[:-1].repeat(room) < count.repeat(room)
    rank = out_rank[keep].astype(i64)
    row = out_row[keep].astype(i64)
    g = seg_off[found_query] + rank - 1
    group = group_of[g]
    position = bounds[group] + bounds[group + 1] - 1 - g - seg_off[found_query]
    # the rankings, cut at max_docs, unjudged documents as -1
    ranked = np.full(int(offsets[-1]), -1, i64)
    inside = position < length[found_query]
    ranked[offsets[found_query[inside]] + position[inside]] = row[inside]
    return ranked


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
