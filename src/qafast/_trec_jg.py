"""trec_eval's ``-R qrels_jg``: qrels from several judge groups, and the measures averaged
over them (``map_avgjg``, ``P_avgjg``, ``Rprec_mult_avgjg``; the nickname ``qrels_jg``).

A qrels_jg line is ``qid jg docno rel``: the second column, which an ordinary qrels file
ignores, names the judge group (a user) that made the judgment. For each query, each of its
judge groups is an ordinary qrels on its own; ``map_avgjg`` is ``map`` computed against each
and averaged over the query's groups (form_res_rels_jg.c, m_map_avgjg.c), ``P_avgjg`` and
``Rprec_mult_avgjg`` likewise. So the kernels are the ordinary ones, run once per group; the
groups' values are added in the order of their names, then divided by their number, as
trec_eval adds them.
"""

from __future__ import annotations

from array import array
from typing import Any

from ._measure_parser import Column, UnknownMeasureError, trec_columns

__all__ = ["JG_NICKNAME", "JudgeGroupResult", "JudgeGroups", "evaluate_judge_groups",
           "jg_columns", "read_judge_groups"]

#: each judge-group measure and the ordinary family it averages
JG_FAMILIES = {"map_avgjg": "map", "P_avgjg": "P", "Rprec_mult_avgjg": "Rprec_mult"}
#: trec_eval's nickname ``qrels_jg``
JG_NICKNAME = ("runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg")


def jg_columns(requests: list[str] | None) -> list[Column]:
    """The columns of ``-m`` requests under ``-R qrels_jg`` (default: the nickname
    ``qrels_jg``), each computed by its ordinary family and named as trec_eval names it."""
    base: list[str] = []
    for req in requests or ["qrels_jg"]:
        fam, dot, params = req.partition(".")
        if fam == "qrels_jg" and not dot:
            names = list(JG_NICKNAME)
        elif fam in JG_FAMILIES or (fam in ("runid", "num_q") and not dot):
            names = [req]
        else:
            raise UnknownMeasureError(
                f"measure {req!r} cannot be computed from judge-group qrels (-R qrels_jg): "
                f"the measures are {', '.join(JG_FAMILIES)}, runid, num_q and the nickname "
                f"qrels_jg")
        for name in names:
            fam, dot, params = name.partition(".")
            base.append(JG_FAMILIES.get(fam, fam) + dot + params)
    out = []
    plain = {v: k for k, v in JG_FAMILIES.items()}
    for c in trec_columns(base):
        jg = plain.get(c.family)
        if jg is not None:
            c = c._replace(name=jg + c.name[len(c.family):])
        out.append(c)
    return out


class JudgeGroups:
    """A qrels_jg file split by judge group: ``groups`` [(jg, qrels)] in the order of the
    groups' names, ``query_ids`` every query judged, ``values`` every grade (int32)."""

    def __init__(self, groups: list, query_ids: list[str], values: Any) -> None:
        self.groups, self.query_ids, self.values = groups, query_ids, values


def read_judge_groups(path: Any) -> JudgeGroups:
    """Reads ``qid jg docno rel`` lines (comments as in a qrels file: a line whose first
    field starts with ``#``) from a path or the file's bytes; each group's lines become an
    ordinary qrels."""
    from .errors import FormatError, InputError
    from ._ranked import Qrels

    if isinstance(path, (bytes, bytearray, memoryview)):
        raw, path = bytes(path), "<bytes>"
    else:
        try:
            with open(path, "rb") as f:
                raw = f.read()
        except OSError as e:
            raise FormatError(f"cannot read the qrels file: {e.strerror}",
                              path=path) from None
    lines: dict[bytes, list[bytes]] = {}
    grades = array("i")
    queries = set()
    for k, line in enumerate(raw.splitlines(), 1):
        fields = line.split()
        if not fields or fields[0].startswith(b"#"):
            continue
        if len(fields) != 4:
            raise FormatError(f"a judge-group qrels line is 'qid jg docno rel', got "
                              f"{line[:80]!r}", path=path, line=k)
        try:
            grades.append(int(fields[3]))
        except (ValueError, OverflowError):
            raise FormatError(f"the grade {fields[3][:40]!r} is not an integer", path=path,
                              line=k, field="rel") from None
        queries.add(fields[0].decode("utf-8", "surrogateescape"))
        lines.setdefault(fields[1], []).append(
            b" ".join((fields[0], b"0", fields[2], fields[3])) + b"\n")
    groups = []
    for jg in sorted(lines):
        name = jg.decode("utf-8", "surrogateescape")
        try:
            groups.append((name, Qrels.from_file(b"".join(lines[jg]))))
        except InputError as e:  # the group's lines are ours, not the file's: no line number
            text = str(e)
            if text.startswith("<bytes>"):
                text = text.partition(": ")[2]
            raise FormatError(f"judge group {name!r}: {text}", path=path,
                              query=getattr(e, "query", None)) from None
    return JudgeGroups(groups, sorted(queries), grades)


class JudgeGroupResult:
    """One run's values averaged over judge groups, shaped as ``_runfile.RunResult``."""

    def __init__(self, ids: list, values: Any, run_id: str | None,
                 run_query_ids: list) -> None:
        self.ids, self.values, self.run_id = ids, values, run_id
        self.run_query_ids = run_query_ids
        self.relstrings: dict = {}


def evaluate_judge_groups(jgs: JudgeGroups, run: Any, columns: list[Column], *,
                          queries: str, options: dict) -> JudgeGroupResult:
    """Each column's value per query, averaged over the query's judge groups."""
    import numpy as np

    from ._runfile import evaluate_run_source

    sums: dict[str, Any] = {}
    counts: dict[str, int] = {}
    run_id = None
    run_query_ids: list = []
    for _, qrels in jgs.groups:
        r = evaluate_run_source(qrels, run, columns, queries=queries, options=options)
        run_id = r.run_id if r.run_id is not None else run_id
        run_query_ids = r.run_query_ids
        for p, q in enumerate(r.ids):
            if q in sums:
                sums[q] = sums[q] + r.values[p]
                counts[q] += 1
            else:
                sums[q] = np.array(r.values[p], dtype=np.float64)
                counts[q] = 1
    ids = sorted(sums)
    values = np.zeros((len(ids), len(columns)), dtype=np.float64)
    for p, q in enumerate(ids):
        values[p] = sums[q] / counts[q] if counts[q] > 1 else sums[q]
    return JudgeGroupResult(ids, values, run_id, list(run_query_ids))
