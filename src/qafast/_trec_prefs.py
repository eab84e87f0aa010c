"""trec_eval's ``-R prefs`` and ``-R qrels_prefs`` for ``qafast trec``: preference judgments
and the ``prefs_*`` measures (nicknames ``all_prefs`` and ``prefs``).

A prefs line is ``qid jg jsg docno level`` (judge group, sub-group); ``-R qrels_prefs`` reads
an ordinary qrels file ``qid jg docno grade`` as preferences, each group one sub-group. The
judgments are encoded once (names numbered in byte order); the run is read by the compiled
run reader; the values come from ``_kernels.prefs_measures``, held by the tests to the
plain-Python specification (:mod:`qafast.reference.prefs`). ``qafast.evaluate`` takes these
files with ``qrels_format`` (:func:`evaluate_judgments`), and ``qrels_jg`` files too.
"""

from __future__ import annotations

from array import array
from typing import Any

from ._measure_parser import Column, UnknownMeasureError
from .reference.prefs import PREFS_COUNTS, PREFS_MEASURES, PrefsError, prefs_measures

__all__ = ["JUDGMENT_FORMATS", "PrefsJudgments", "PrefsResult", "evaluate_judgments",
           "evaluate_prefs", "judgment_measure", "prefs_columns", "read_prefs"]

#: the judgment formats besides qrels, as trec_eval's -R names them
JUDGMENT_FORMATS = ("prefs", "qrels_prefs", "qrels_jg")

_NICKNAMES = {"all_prefs": ("runid", "num_q", *PREFS_MEASURES),
              "prefs": ("runid", "num_q", *PREFS_MEASURES[:6])}
#: trec_eval's placeholder for a query missing from the run under -c
_PLACEHOLDER = "ceci_nest_pas_un_docno"


def prefs_columns(requests: list[str] | None) -> list[Column]:
    """The columns of ``-m`` requests under ``-R prefs`` or ``qrels_prefs`` (default: the
    nickname ``prefs``), in trec_eval's order. A count's column has the family ``num_ret``
    and a ratio's ``map``: what the command line reads of a family is how the value is
    summarised (a sum or a mean) and printed (an integer or %6.4f)."""
    wanted: set[str] = set()
    for req in requests or ["prefs"]:
        if req in _NICKNAMES:
            wanted.update(_NICKNAMES[req])
        elif req in PREFS_MEASURES or req in ("runid", "num_q"):
            wanted.add(req)
        else:
            raise UnknownMeasureError(
                f"measure {req!r} cannot be computed from preference judgments (-R prefs, "
                f"-R qrels_prefs): the measures are {', '.join(PREFS_MEASURES)}, runid, "
                f"num_q and the nicknames all_prefs and prefs")
    out = []
    for name in ("runid", "num_q", *PREFS_MEASURES):
        if name in wanted:
            family = name if name in ("runid", "num_q") else (
                "num_ret" if name in PREFS_COUNTS else "map")
            out.append(Column(name, family))
    return out


class PrefsJudgments:
    """Judgments encoded for the kernel (``_kernels.prefs_measures``): ``query_ids``
    sorted (in byte order); per query, its documents ``doc_ids[doc_off[j]:doc_off[j + 1]]``
    (indices of ``names``, in byte order) and its lines ``line_off[j]:line_off[j + 1]``
    (``line_jg``, ``line_jsg`` numbered in byte order, ``line_level``, ``line_doc`` the
    document's position among the query's), sorted by group, sub-group, level descending;
    ``values`` (int32, empty) for the command line's summaries."""

    def __init__(self, qids: list, jgs: list, jsgs: list, docs: list, levels: Any) -> None:
        import numpy as np

        def codes(col: list) -> tuple[list, Any]:
            """(the distinct values in byte order, each row's position among them); a
            column's runs of equal values (a query's lines, a group's) are looked up once."""
            a = np.array(col, dtype=object)
            heads = np.ones(len(a), dtype=bool)
            if len(a) > 1:
                np.not_equal(a[1:], a[:-1], out=heads[1:])
            starts = np.flatnonzero(heads)
            head_values = a[starts].tolist()
            names = sorted(set(head_values))
            index = {v: k for k, v in enumerate(names)}
            run_codes = np.fromiter(map(index.__getitem__, head_values), dtype=np.int64,
                                    count=len(head_values))
            return names, np.repeat(run_codes, np.diff(np.append(starts, len(a))))

        qnames, qi = codes(qids)
        jg_names, jg = codes(jgs)
        jsg_names, jsg = codes(jsgs)
        names, di = codes(docs)
        level = np.array(levels, dtype=np.float64)
        self.query_ids = [q.decode("utf-8", "surrogateescape") for q in qnames]
        self.jg_names = [g.decode("utf-8", "surrogateescape") for g in jg_names]
        self.jsg_names = jsg_names
        self.names = names
        self.name_off = np.zeros(len(names) + 1, dtype=np.int64)
        np.cumsum([len(d) for d in names], out=self.name_off[1:])
        self.name_blob = np.frombuffer(b"".join(names), dtype=np.uint8)
        nq = len(qnames)
        # each query's documents, in byte order (names are numbered in byte order)
        pairs = np.sort(qi * max(len(names), 1) + di)
        if len(pairs) > 1:
            pairs = pairs[np.append(True, pairs[1:] != pairs[:-1])]
        self.doc_ids = pairs % max(len(names), 1)
        self.doc_off = np.searchsorted(pairs // max(len(names), 1), np.arange(nq + 1))
        local = np.searchsorted(pairs, qi * max(len(names), 1) + di) - self.doc_off[qi]
        group = (qi * len(jg_names) + jg) * len(jsg_names) + jsg
        order = np.lexsort((local, -level, group))
        self.line_off = np.searchsorted(qi[order], np.arange(nq + 1)).astype(np.int64)
        self.line_jg = jg[order].astype(np.int32)
        self.line_jsg = jsg[order].astype(np.int32)
        self.line_level = level[order]
        self.line_doc = local[order].astype(np.int32)
        self.doc_off = self.doc_off.astype(np.int64)
        self.values = array("i")

    def document(self, query: int, doc: int) -> str:
        """The name of the query's ``doc``-th document."""
        k = int(self.doc_ids[int(self.doc_off[query]) + doc])
        return self.names[k].decode("utf-8", "surrogateescape")

    def local(self, query: int, name: bytes) -> int:
        """The position of document ``name`` among the query's, or -1."""
        lo, hi = int(self.doc_off[query]), int(self.doc_off[query + 1])
        for k in range(lo, hi):
            if self.names[int(self.doc_ids[k])] == name:
                return k - lo
        return -1

    @property
    def lines(self) -> dict:
        """{qid: [(jg, jsg, docno, level)]}, as the specification takes them."""
        out: dict = {}
        for j, q in enumerate(self.query_ids):
            rows = out[q] = []
            for i in range(int(self.line_off[j]), int(self.line_off[j + 1])):
                rows.append((self.jg_names[self.line_jg[i]], str(self._jsg(i)),
                             self.document(j, int(self.line_doc[i])),
                             float(self.line_level[i])))
        return out

    def _jsg(self, i: int) -> str:
        return self.jsg_names[self.line_jsg[i]].decode("utf-8", "surrogateescape")


def _read(path: Any) -> bytes:
    from .errors import FormatError

    if isinstance(path, (bytes, bytearray, memoryview)):
        return bytes(path)
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise FormatError(f"cannot read the file: {e.strerror}", path=path) from None


def _text(b: bytes) -> str:
    return b.decode("utf-8", "surrogateescape")


def read_prefs(path: Any, fmt: str) -> PrefsJudgments:
    """Reads a prefs file (``fmt`` "prefs": ``qid jg jsg docno level``) or a qrels file read
    as preferences ("qrels_prefs": ``qid jg docno level``, sub-group "0"), a path or the
    file's bytes."""
    from .errors import FormatError

    raw = _read(path if isinstance(path, (bytes, bytearray, memoryview)) else str(path))
    path = str(path) if not isinstance(path, (bytes, bytearray, memoryview)) else "<bytes>"

    width = 5 if fmt == "prefs" else 4
    fast = _columns(raw, width)
    if fast is not None:
        return PrefsJudgments(*fast)
    qids: list[bytes] = []
    jgs: list[bytes] = []
    jsgs: list[bytes] = []
    docs: list[bytes] = []
    levels: list[float] = []
    for k, line in enumerate(raw.splitlines(), 1):
        fields = line.split()
        if not fields or fields[0].startswith(b"#"):
            continue
        if len(fields) != width:
            shape = "qid jg jsg docno level" if width == 5 else "qid jg docno level"
            raise FormatError(f"a {fmt} line is '{shape}', got {line[:80]!r}", path=path,
                              line=k)
        try:
            level = float(fields[-1])
        except ValueError:
            raise FormatError(f"the level {fields[-1][:40]!r} is not a number", path=path,
                              line=k, field="level") from None
        if level != level:
            raise FormatError("the level is NaN", path=path, line=k, field="level")
        qids.append(fields[0])
        jgs.append(fields[1])
        jsgs.append(fields[2] if width == 5 else b"0")
        docs.append(fields[width - 2])
        levels.append(level)
    return PrefsJudgments(qids, jgs, jsgs, docs, levels)


#: the bytes bytes.split() splits at
_SPACE = frozenset(b" \t\n\r\x0b\x0c")


def _columns(raw: bytes, width: int) -> tuple | None:
    """The columns of a judgments file whose every line is blank or has ``width`` fields
    with a level that is a number (not NaN), split at once; None for any other file (no
    comments either), which the line by line reader then reads or names the fault of."""
    import numpy as np

    if b"#" in raw or len(raw) > 1 << 28:
        return None
    space = np.zeros(256, dtype=bool)
    space[list(_SPACE)] = True
    a = np.frombuffer(raw, dtype=np.uint8)
    blank = space[a]
    starts = ~blank
    starts[1:] &= blank[:-1]
    line = np.cumsum((a == 10) | (a == 13), dtype=np.int32)
    fields = np.bincount(line[starts])
    if not ((fields == 0) | (fields == width)).all():
        return None
    toks = raw.split()
    try:
        levels = np.array(list(map(float, toks[width - 1::width])), dtype=np.float64)
    except ValueError:
        return None
    if np.isnan(levels).any():
        return None
    jsgs = toks[2::width] if width == 5 else [b"0"] * len(levels)
    return toks[0::width], toks[1::width], jsgs, toks[width - 2::width], levels


def _read_run(path: str) -> tuple[dict, str | None]:
    from .errors import FormatError

    run: dict[str, list] = {}
    run_id = None
    for k, line in enumerate(_read(path).splitlines(), 1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 6:
            raise FormatError(f"a run line is 'qid iter docno rank score run_id', got "
                              f"{line[:80]!r}", path=path, line=k)
        try:
            score = float(fields[4])
        except ValueError:
            raise FormatError(f"the score {fields[4][:40]!r} is not a number", path=path,
                              line=k, field="score") from None
        run.setdefault(_text(fields[0]), []).append((_text(fields[2]), score))
        run_id = _text(fields[5])
    return run, run_id


class PrefsResult:
    """One run's values, shaped as ``_runfile.RunResult``."""

    def __init__(self, ids: list, values: Any, run_id: str | None, run_query_ids: list):
        self.ids, self.values, self.run_id = ids, values, run_id
        self.run_query_ids = run_query_ids
        self.relstrings: dict = {}


def evaluate_prefs(judgments: PrefsJudgments, run_path: Any, columns: list[Column], *,
                   queries: str, max_docs: int | None) -> PrefsResult:
    """Per-query values of the run at ``run_path`` (a TREC run file, or anything
    ``qafast.evaluate`` takes as a run; ``queries``: "run", the queries of both; "qrels",
    every judged query, one missing from the run ranking one placeholder document, as
    trec_eval -c does)."""
    import numpy as np

    from . import _kernels
    from ._ranked import Run, as_run
    from .errors import InputError, InputTypeError

    run = as_run(run_path) if not isinstance(run_path, str) else Run.from_file(run_path)
    if run.key_off is None and run.num_entries:
        raise InputTypeError("the preference measures take string document ids (as a TREC "
                             "run file has), not integers")
    run_path = run.source if not isinstance(run_path, str) else run_path
    # a query without documents counts as absent, as in a TREC file
    sizes = np.diff(run.offsets).tolist()
    rindex = {str(q): k for k, q in enumerate(run.query_ids) if sizes[k]}
    if queries == "qrels":
        ids = judgments.query_ids
    else:
        ids = [q for q in judgments.query_ids if q in rindex]
    jindex = {q: j for j, q in enumerate(judgments.query_ids)}
    pair_judged = np.array([jindex[q] for q in ids], dtype=np.int64)
    pair_run = np.array([rindex.get(q, -1) for q in ids], dtype=np.int64)
    missing = np.full(len(ids), -1, dtype=np.int64)
    for p in np.flatnonzero(pair_run < 0).tolist():
        missing[p] = judgments.local(int(pair_judged[p]), _PLACEHOLDER.encode())
    every = np.empty((len(ids), len(PREFS_MEASURES)), dtype=np.float64)
    error = np.zeros(3, dtype=np.int64)
    hashes, keys, key_off, blob = run.kernel_args()
    failed = _kernels.prefs_measures(
        run.offsets, hashes, keys, key_off, blob, run.values, pair_run, pair_judged, missing,
        judgments.doc_off, judgments.doc_ids, judgments.name_off, judgments.name_blob,
        judgments.line_off, judgments.line_jg, judgments.line_jsg, judgments.line_level,
        judgments.line_doc, 0 if max_docs is None else max_docs, every, error)
    if failed >= 0:
        raise InputError(f"{run_path}: query {ids[failed]!r}: "
                         f"{_why(judgments, int(pair_judged[failed]), error)}")
    where = {name: k for k, name in enumerate(PREFS_MEASURES)}
    values = np.zeros((len(ids), len(columns)), dtype=np.float64)
    for j, c in enumerate(columns):
        if c.name in where:  # num_q's column is the command line's
            values[:, j] = every[:, where[c.name]]
    return PrefsResult(list(ids), values, run.run_id,
                       sorted(rindex))


def _why(judgments: PrefsJudgments, query: int, error) -> str:
    code, doc, jg = (int(v) for v in error)
    group = judgments.jg_names[jg]
    if code == 1:
        return (f"judge group {group!r}: document {judgments.document(query, doc)!r} has "
                f"two levels in one sub-group")
    if code == 2:
        return (f"judge group {group!r}: document {judgments.document(query, doc)!r} has "
                f"both level 0 and a level above 0")
    return f"the preferences of judge group {group!r} contradict each other"


def judgment_measure(name: str) -> bool:
    """Whether ``name`` is a measure of preference or judge-group judgments, which ordinary
    qrels cannot give."""
    from ._trec_jg import JG_FAMILIES

    return (name.startswith("prefs_") or name in ("all_prefs", "prefs", "qrels_jg")
            or name.partition(".")[0] in JG_FAMILIES)


def evaluate_judgments(judgments: Any, run: Any, measures: Any, *, qrels_format: str,
                       queries: str, max_docs: int | None, per_query: bool,
                       options: dict) -> dict:
    """``qafast.evaluate`` of judgments in trec_eval's other formats (``qrels_format``:
    "prefs", "qrels_prefs" or "qrels_jg", as ``-R``): the values ``qafast trec -R ...``
    prints, as a dict."""
    from ._summaries import column_summaries
    from ._trec_jg import evaluate_judge_groups, jg_columns, read_judge_groups
    from .errors import InputError, InputTypeError

    if isinstance(measures, str):
        measures = [measures]
    measures = list(measures)
    if not all(isinstance(m, str) for m in measures):
        raise InputTypeError(f"with qrels_format={qrels_format!r}, measures are names (str)")
    if isinstance(judgments, (str, bytes, bytearray, memoryview)) or hasattr(judgments,
                                                                             "__fspath__"):
        source = judgments if isinstance(judgments, (bytes, bytearray, memoryview)) \
            else str(judgments)
    else:
        raise InputTypeError(f"with qrels_format={qrels_format!r}, the judgments are a file "
                             f"(a path) or its bytes, not {type(judgments).__name__}")
    try:
        if qrels_format == "qrels_jg":
            columns = jg_columns(measures)
        else:
            columns = prefs_columns(measures)
    except Exception as e:
        raise InputError(str(e)) from None
    columns = [c for c in columns if c.family not in ("runid", "num_q")]
    if not columns:
        raise InputError(f"measures {measures!r}: none of them is a per-query number "
                         "(runid and num_q are printed by the qafast trec command)")
    if qrels_format == "qrels_jg":
        from ._ranked import as_run

        jgs = read_judge_groups(source)
        result: Any = evaluate_judge_groups(jgs, as_run(run), columns, queries=queries,
                                            options=dict(options, max_docs=max_docs))
    else:
        result = evaluate_prefs(read_prefs(source, qrels_format), run, columns,
                                queries=queries, max_docs=max_docs)
    import numpy as np

    values = np.ascontiguousarray(result.values, dtype=np.float64)
    names = [c.name for c in columns]
    if per_query:
        return {q: dict(zip(names, row)) for q, row in zip(result.ids, values.tolist())}
    if not len(result.ids):
        raise InputError("the run and the judgments have no query in common")
    return dict(zip(names, column_summaries(columns, values, exact=True)))
