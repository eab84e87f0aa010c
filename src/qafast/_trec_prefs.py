"""trec_eval's ``-R prefs`` and ``-R qrels_prefs`` for ``qafast trec``: preference judgments
and the ``prefs_*`` measures (nicknames ``all_prefs`` and ``prefs``).

A prefs line is ``qid jg jsg docno level`` (judge group, sub-group); ``-R qrels_prefs`` reads
an ordinary qrels file ``qid jg docno grade`` as preferences, each group one sub-group. The
values come from the plain-Python specification (:mod:`qafast.reference.prefs`).
"""

from __future__ import annotations

from array import array
from typing import Any

from ._measure_parser import Column, UnknownMeasureError
from .reference.prefs import PREFS_COUNTS, PREFS_MEASURES, PrefsError, prefs_measures

__all__ = ["PrefsJudgments", "PrefsResult", "evaluate_prefs", "prefs_columns", "read_prefs"]

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
    """Judgments per query: ``lines`` {qid: [(jg, jsg, docno, level)]}; ``query_ids``
    sorted; ``values`` (int32, empty) for the command line's summaries."""

    def __init__(self, lines: dict) -> None:
        self.lines = lines
        self.query_ids = sorted(lines, key=lambda q: q.encode("utf-8", "surrogateescape"))
        self.values = array("i")


def _read(path: str) -> bytes:
    from .errors import FormatError

    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise FormatError(f"cannot read the file: {e.strerror}", path=path) from None


def _text(b: bytes) -> str:
    return b.decode("utf-8", "surrogateescape")


def read_prefs(path: str, fmt: str) -> PrefsJudgments:
    """Reads a prefs file (``fmt`` "prefs": ``qid jg jsg docno level``) or a qrels file read
    as preferences ("qrels_prefs": ``qid jg docno level``, sub-group "0")."""
    from .errors import FormatError

    width = 5 if fmt == "prefs" else 4
    lines: dict[str, list] = {}
    for k, line in enumerate(_read(path).splitlines(), 1):
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
        jsg = _text(fields[2]) if width == 5 else "0"
        lines.setdefault(_text(fields[0]), []).append(
            (_text(fields[1]), jsg, _text(fields[width - 2]), level))
    return PrefsJudgments(lines)


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


def evaluate_prefs(judgments: PrefsJudgments, run_path: str, columns: list[Column], *,
                   queries: str, max_docs: int | None) -> PrefsResult:
    """Per-query values of the run at ``run_path`` (``queries``: "run", the queries of
    both; "qrels", every judged query, one missing from the run ranking one placeholder
    document, as trec_eval -c does)."""
    from .errors import InputError

    run, run_id = _read_run(run_path)
    if queries == "qrels":
        ids = judgments.query_ids
    else:
        ids = [q for q in judgments.query_ids if q in run]
    m = len(columns)
    out = array("d", bytes(8 * len(ids) * m))
    for p, q in enumerate(ids):
        try:
            got = prefs_measures(judgments.lines[q], run.get(q, [(_PLACEHOLDER, 1.0)]),
                                 max_docs=max_docs)
        except PrefsError as e:
            raise InputError(f"{run_path}: query {q!r}: {e}") from None
        for j, c in enumerate(columns):
            out[p * m + j] = got.get(c.name, 0.0)
    values = memoryview(out).cast("B").cast("d", (len(ids), m))
    return PrefsResult(ids, values, run_id, sorted(run))
