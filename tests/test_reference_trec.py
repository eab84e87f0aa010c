"""qafast.reference against trec_eval 10.0's own golden outputs.

Every per-query and ``all`` number in the golden files must equal what trec_eval printed when
formatted the same way (``%6.4f`` for values, ``%ld`` for counts). The golden files are trec_eval's
test suite (tag v10.0), kept with their NIST licence notice; see their README for the options that
produced each one. Also a few hand-made cases for behaviour the golden files do not reach.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


from qafast.reference import ranking as ref  # noqa: E402


def _golden_dir() -> Path | None:
    candidates = [
        os.environ.get("QAFAST_TREC_EVAL_GOLDEN", ""),
        HERE / "data" / "trec_eval-10.0",
        HERE / "data",
        "/work/shared/conformance/trec_eval-10.0",
    ]
    for candidate in candidates:
        if candidate and (Path(candidate) / "out.test.aq").is_file():
            return Path(candidate)
    return None


GOLDEN = _golden_dir()
needs_golden = pytest.mark.skipif(GOLDEN is None, reason="trec_eval 10.0 golden files not found")


# --------------------------------------------------------------------------------------------
# Tiny TREC readers (whitespace split; a line starting with '#' at column 0 is a comment)
# --------------------------------------------------------------------------------------------

def _lines(path: Path):
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if line.startswith("#"):
                continue
            fields = line.split()
            if fields:
                yield fields


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    for qid, _iter, docno, rel, *_ in _lines(path):
        qrels.setdefault(qid, {})[docno] = int(rel)
    return qrels


def read_run(path: Path) -> tuple[dict[str, dict[str, float]], str]:
    run: dict[str, dict[str, float]] = {}
    runid = ""
    for qid, _iter, docno, _rank, sim, runid, *_ in _lines(path):
        run.setdefault(qid, {})[docno] = float(sim)
    return run, runid  # trec_eval keeps the run id of the last line


def read_output(path: Path) -> list[tuple[str, str, str]]:
    rows = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                name, qid, value = line.rstrip("\n").split("\t")
                rows.append((name.strip(), qid, value))
    return rows


# --------------------------------------------------------------------------------------------
# Printed measure name -> (family, param)
# --------------------------------------------------------------------------------------------

_INT_CUTOFF = {"P", "recall", "map_cut", "ndcg_cut", "relative_P", "success", "unj", "relstring"}
_FLOAT_CUTOFF = {"iprec_at_recall", "Rprec_mult"}
_FLOAT_LIST = {"utility", "11pt_avg"}
_GAIN_MAP = {"ndcg", "ndcg_rel", "Rndcg", "G", "dcg", "ideal_dcg", "rbp", "rbp_resid"}
_FAMILIES = sorted(
    [f for f in ref.FAMILIES if f not in ("recip_rank_cut", "ndcg_cut_exp")] + ["runid"],
    key=len,
    reverse=True,
)
_COUNTS = {"num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret", "num_q"}


def _pairs(text: str):
    pairs = []
    for item in text.split(","):
        key, value = item.split("=")
        pairs.append((key if key == "p" else int(key), float(value)))
    return tuple(pairs)


def parse_name(name: str):
    """trec_eval's printed name (``P_5``, ``ndcg_1=3,2=9``, ``utility_2,-1,0,0``...) to
    (family, param) as reference.measure takes them."""
    for family in _FAMILIES:
        if name == family:
            return family, None
        if name.startswith(family + "_"):
            text = name[len(family) + 1:]
            if family in _INT_CUTOFF:
                return family, int(text)
            if family in _FLOAT_CUTOFF or family == "set_F":
                return family, float(text)
            if family in _FLOAT_LIST:
                return family, tuple(float(x) for x in text.split(","))
            if family in _GAIN_MAP:
                return family, _pairs(text)
    raise ValueError(f"unknown trec_eval measure name {name!r}")


def test_parse_name():
    assert parse_name("P_5") == ("P", 5)
    assert parse_name("relative_P_5") == ("relative_P", 5)
    assert parse_name("num_rel_ret") == ("num_rel_ret", None)
    assert parse_name("ndcg_cut_23") == ("ndcg_cut", 23)
    assert parse_name("ndcg_rel") == ("ndcg_rel", None)
    assert parse_name("rbp_resid") == ("rbp_resid", None)
    assert parse_name("iprec_at_recall_0.10") == ("iprec_at_recall", 0.1)
    assert parse_name("Rprec_mult_0.20") == ("Rprec_mult", 0.2)
    assert parse_name("utility_2,-1,0,0") == ("utility", (2.0, -1.0, 0.0, 0.0))
    assert parse_name("11pt_avg_.25,.5,.75") == ("11pt_avg", (0.25, 0.5, 0.75))
    assert parse_name("ndcg_1=3,2=9,4=4.5") == ("ndcg", ((1, 3.0), (2, 9.0), (4, 4.5)))
    assert parse_name("relstring_20") == ("relstring", 20)


# --------------------------------------------------------------------------------------------
# The golden comparisons
# --------------------------------------------------------------------------------------------

# expected output, qrels, run, options (README of the golden files)
CASES = {
    "out.test": ("out.test", "qrels.test", "results.test", {}),
    "out.test[with-comments]": ("out.test", "qrels.test.with-comments", "results.test", {}),
    "out.comment.test": ("out.comment.test", "qrels.comment.test", "results.comment.test", {}),
    "out.test.a": ("out.test.a", "qrels.test", "results.test", {}),
    "out.test.aq": ("out.test.aq", "qrels.test", "results.test", {}),
    "out.test.aqc": ("out.test.aqc", "qrels.test", "results.trunc", {"queries": "qrels"}),
    "out.test.aqcM": (
        "out.test.aqcM", "qrels.test", "results.trunc", {"queries": "qrels", "max_docs": 100}
    ),
    "out.test.aql": ("out.test.aql", "qrels.rel_level", "results.test", {"relevance_level": 2}),
    "out.test.meas_params": ("out.test.meas_params", "qrels.test", "results.test", {}),
}


def _printed(family: str, value) -> str:
    if family == "relstring":
        return value
    if family in _COUNTS:
        return "%d" % int(value)
    return "%6.4f" % value


def golden_mismatches(out_name, qrels_name, run_name, options):
    """Every golden line whose value qafast.reference does not reproduce."""
    rows = read_output(GOLDEN / out_name)
    qrels = read_qrels(GOLDEN / qrels_name)
    run, runid = read_run(GOLDEN / run_name)
    wanted = []
    for name, _qid, _value in rows:
        key = parse_name(name)
        if key[0] not in ("runid", "num_q") and key not in wanted:
            wanted.append(key)
    per_query = ref.evaluate(qrels, run, wanted, **options)
    num_queries = len(qrels) if options.get("queries") == "qrels" else None

    mismatches = []
    golden_qids = {qid for _name, qid, _value in rows if qid != "all"}
    if golden_qids and golden_qids != set(per_query):
        mismatches.append(("queries", sorted(golden_qids), sorted(per_query)))
    for name, qid, value in rows:
        family, param = parse_name(name)
        if family == "runid":
            got = runid
        elif qid == "all":
            if family == "num_q":
                got = _printed(family, ref.summarize("num_q", [1.0] * len(per_query),
                                                     num_queries=num_queries))
            else:
                values = [per_query[q][(family, param)] for q in per_query]
                got = _printed(family, ref.summarize(family, values, num_queries=num_queries))
        else:
            got = _printed(family, per_query[qid][(family, param)])
        if got != value:
            mismatches.append((name, qid, value, got))
    return len(rows), mismatches


@needs_golden
@pytest.mark.parametrize("case", list(CASES))
def test_golden_output(case):
    out_name, qrels_name, run_name, options = CASES[case]
    checked, mismatches = golden_mismatches(out_name, qrels_name, run_name, options)
    assert checked > 0
    assert not mismatches, f"{len(mismatches)} of {checked} lines differ, e.g. {mismatches[:20]}"


@needs_golden
def test_golden_covers_every_trec_eval_family():
    """The golden files exercise every all_trec family (so a failure above is a real check)."""
    seen = set()
    for out_name, *_ in CASES.values():
        for name, _qid, _value in read_output(GOLDEN / out_name):
            seen.add(parse_name(name)[0])
    all_trec = {
        "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
        "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "unj", "rbp", "rbp_resid",
        "infAP", "gm_bpref", "utility", "11pt_avg", "ndcg", "relative_P", "Rprec_mult", "success",
        "map_cut", "ndcg_cut", "ndcg_rel", "Rndcg", "binG", "G", "set_P", "set_recall",
        "set_relative_P", "set_map", "set_F", "num_nonrel_judged_ret",
    }
    assert all_trec <= seen


# --------------------------------------------------------------------------------------------
# Hand-made cases for behaviour the golden files do not reach
# --------------------------------------------------------------------------------------------

def _ranked(qrels_q, run_q, **kw):
    return ref.rank_query(qrels_q, run_q, **kw)


def test_ties_break_by_docno_descending():
    rq = _ranked({"a": 1}, {"a": 1.0, "b": 1.0, "c": 1.0, "B": 1.0})
    # c, b, a, B: strcmp descending, uppercase sorts before lowercase
    assert ref.measure("relstring", rq) == "'--1-'"
    assert ref.measure("recip_rank", rq) == pytest.approx(1 / 3)


def test_max_docs_cuts_before_judged_only():
    qrels_q = {"a": 1, "b": 0, "x": -1}
    run_q = {"a": 0.1, "b": 0.9, "x": 0.8, "n": 0.7}
    rq = _ranked(qrels_q, run_q)
    assert rq.grades == [0, ref.UNJUDGED, ref.NONPOOL, 1]
    rq = _ranked(qrels_q, run_q, max_docs=3, judged_only=True)
    assert rq.grades == [0]  # a (rank 4) was cut by -M before -J closed the gaps
    rq = _ranked(qrels_q, run_q, judged_only=True)
    assert rq.grades == [0, 1]
    assert ref.measure("P", rq, 2) == 0.5


def test_float32_scores_create_ties():
    qrels_q = {"dA": 1}
    run_q = {"dA": 0.1000000002, "dB": 0.1000000001}
    assert ref.measure("map", _ranked(qrels_q, run_q)) == 1.0
    assert ref.measure("map", _ranked(qrels_q, run_q, float32_scores=True)) == 0.5


def test_iprec_rounding_differs_between_versions():
    # R = 4, relevant at ranks 1, 4, 5: 0.3 * 4 = 1.2 -> lround 1 (10.0), (long)(2.1) = 2 (9.0.8)
    qrels_q = {f"r{i}": 1 for i in range(4)}
    run_q = {"r0": 9, "n1": 8, "n2": 7, "r1": 6, "r2": 5}
    rq = _ranked(qrels_q, run_q)
    assert ref.measure("iprec_at_recall", rq, 0.3) == 1.0
    assert ref.measure("iprec_at_recall", rq, 0.3, version="9.0.8") == 0.6
    assert "%6.4f" % ref.measure("11pt_avg", rq) == "0.6364"
    assert "%6.4f" % ref.measure("11pt_avg", rq, version="9.0.8") == "0.5455"


def test_lround_is_exact():
    assert ref._lround(0.49999999999999994) == 0
    assert ref._lround(2.5) == 3
    assert ref._lround(-2.5) == -3


def test_measures_absent_from_908_raise():
    rq = _ranked({"a": 1}, {"a": 1.0})
    for family, param in [("dcg", None), ("ideal_dcg", None), ("rbp", None),
                          ("rbp_resid", None), ("unj", 5)]:
        ref.measure(family, rq, param)
        with pytest.raises(ValueError):
            ref.measure(family, rq, param, version="9.0.8")


def test_cutoff_families_need_one_cutoff():
    rq = _ranked({"a": 1}, {"a": 1.0})
    with pytest.raises(ValueError):
        ref.measure("P", rq)
    with pytest.raises(ValueError):
        ref.measure("P", rq, 0)


def test_missing_query_under_c_in_10():
    qrels = {"q1": {"a": 1, "b": 2, "c": 0}, "q2": {"a": 1}}
    run = {"q2": {"a": 1.0}}
    measures = [("num_rel", None), ("num_ret", None), ("map", None), ("ndcg", None),
                ("ideal_dcg", None), ("dcg", None), ("utility", None), ("unj", 5),
                ("rbp_resid", None), ("relstring", None), ("gm_map", None),
                ("iprec_at_recall", 0.0), ("utility", (1.0, -1.0, 0.0, 0.0)),
                ("relstring", 3), ("rbp_resid", 0.9)]
    per_query = ref.evaluate(qrels, run, measures, queries="qrels")
    assert list(per_query) == ["q1", "q2"]
    q1 = per_query["q1"]
    nonzero = {k: v for k, v in q1.items() if v not in (0.0, "''")}
    assert set(nonzero) == {("num_rel", None), ("ideal_dcg", None), ("gm_map", None),
                            ("utility", (1.0, -1.0, 0.0, 0.0)), ("relstring", 3),
                            ("rbp_resid", 0.9)}
    assert q1[("num_rel", None)] == 2.0
    assert q1[("ideal_dcg", None)] == 2.0 + 1.0 / math.log2(3)
    assert q1[("gm_map", None)] == math.log(ref.MIN_GEO_MEAN)
    # names with explicit parameters escape trec_eval's reset of the bogus document
    assert q1[("utility", (1.0, -1.0, 0.0, 0.0))] == -1.0
    assert q1[("relstring", 3)] == "'-'"
    assert q1[("rbp_resid", 0.9)] == pytest.approx(1.0)
    assert ref.evaluate(qrels, run, [("map", None)]) == {"q2": {("map", None): 1.0}}


def test_missing_query_under_c_in_908():
    qrels = {"q1": {"a": 1, "b": 2, "c": 0}, "q2": {"a": 1}}
    run = {"q2": {"a": 1.0}}
    per_query = ref.evaluate(qrels, run, [("num_rel", None), ("gm_map", None)],
                             queries="qrels", version="9.0.8")
    assert per_query["q1"] == {("num_rel", None): 2.0, ("gm_map", None): math.log(1e-5)}
    gm = ref.summarize("gm_map", [per_query[q][("gm_map", None)] for q in per_query])
    assert gm == pytest.approx(math.sqrt(1e-5))


def test_summaries():
    assert ref.summarize("num_rel", [3.0, 4.0]) == 7.0
    assert ref.summarize("map", [0.5, 0.25]) == 0.375
    assert ref.summarize("map", [0.5, 0.25], num_queries=5) == 0.75 / 5
    assert ref.summarize("num_q", [1.0, 1.0], num_queries=3) == 3.0
    logs = [math.log(0.5), math.log(0.125)]
    assert ref.summarize("gm_map", logs) == pytest.approx(0.25)
    assert ref.summarize("gm_map", logs, num_queries=3) == pytest.approx(
        (0.5 * 0.125 * 1e-5) ** (1 / 3))


def test_bpref_without_judged_nonrelevant_is_one():
    rq = _ranked({"a": 1, "b": 1}, {"a": 2.0, "x": 1.5, "b": 1.0})
    assert ref.measure("bpref", rq) == 1.0


def test_ndcg_ignores_relevance_level():
    qrels_q = {"a": 1, "b": 2}
    run_q = {"a": 2.0, "b": 1.0}
    rq1 = _ranked(qrels_q, run_q)
    rq2 = _ranked(qrels_q, run_q, relevance_level=2)
    assert ref.measure("ndcg", rq1) == ref.measure("ndcg", rq2)
    expected = (1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3))
    assert ref.measure("ndcg", rq1) == pytest.approx(expected)
    assert ref.measure("ndcg_cut", rq2, 1) == 0.5
    rq3 = _ranked(qrels_q, {"b": 2.0, "a": 1.0})  # gain map: grade 1 is worth 4, grade 2 stays 2
    assert ref.measure("ndcg", rq3, ((1, 4.0),)) == pytest.approx(
        (2 + 4 / math.log2(3)) / (4 + 2 / math.log2(3)))


def test_extensions():
    rq = _ranked({"a": 2, "b": 1, "c": 3}, {"x": 3.0, "b": 2.0, "a": 1.0})
    assert ref.measure("recip_rank_cut", rq, 1) == 0.0
    assert ref.measure("recip_rank_cut", rq, 2) == 0.5
    dcg = 1 / math.log2(3) + 3 / math.log2(4)
    ideal = 7 + 3 / math.log2(3) + 1 / math.log2(4)
    assert ref.measure("ndcg_cut_exp", rq, 3) == pytest.approx(dcg / ideal)


def test_set_f_weights_precision_by_x():
    # 2 retrieved, 1 relevant of R = 4: P = 0.5, R = 0.25
    rq = _ranked({"a": 1, "b": 1, "c": 1, "d": 1}, {"a": 1.0, "x": 0.5})
    assert ref.measure("set_F", rq) == pytest.approx(2 * 0.5 * 0.25 / 0.75)
    assert ref.measure("set_F", rq, 4.0) == pytest.approx(5 * 0.5 * 0.25 / (4 * 0.5 + 0.25))
