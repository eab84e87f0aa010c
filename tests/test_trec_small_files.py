"""``qafast trec`` on small files: measured without numpy (``qafast._trec_text``), printing
what the numpy path prints, and handing every input that is not a plain case to that path.

The numpy path is the one trec_eval's golden files and the peers' numbers check
(tests/test_trec_golden.py runs those through both paths); here the two paths are compared
on random tie-heavy files, and each input the small-file path declines is shown to give the
numpy path's output or error.
"""

import gzip
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import qafast
import qafast._trec_text
from qafast.cli import main
from _examples import examples


#: the small-file path's limit (each call below sets it: a function-scoped monkeypatch is not
#: undone between one hypothesis example and the next)
SMALL = qafast._trec_text.QUICK_BYTES


def both_paths(tmp_path, monkeypatch, capsys, qrels: str | bytes, run: str | bytes,
               *options: str, run_name: str = "run", more_runs=()):
    """(exit code, stdout, stderr) of ``qafast trec`` through each path."""
    qrels_path, run_path = tmp_path / "qrels", tmp_path / run_name
    for path, text in ((qrels_path, qrels), (run_path, run)):
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
    args = ["trec", *options, str(qrels_path), str(run_path), *map(str, more_runs)]
    outcomes = []
    for limit in (SMALL, 0):
        monkeypatch.setattr(qafast._trec_text, "QUICK_BYTES", limit)
        code = main(args)
        captured = capsys.readouterr()
        outcomes.append((code, captured.out, captured.err))
    return outcomes


QIDS = ["q1", "q2", "q10", "Q3", "é", "q 4".replace(" ", "_"), "301"]
DOCS = ["d1", "d2", "d10", "D3", "doc-ü", "d9", "d99", "x"]


@st.composite
def trec_files(draw):
    """A qrels and a run over a few queries and documents: few distinct scores (ties decided
    by document id), negative and high grades, queries on one side only, the run's queries
    in any order (trec_eval adds their values in id order; the numpy path measures them in
    file order)."""
    qrels_lines, run_lines = [], []
    for q in sorted(draw(st.sets(st.sampled_from(QIDS), min_size=1, max_size=5))):
        for d in draw(st.sets(st.sampled_from(DOCS), min_size=1, max_size=6)):
            qrels_lines.append(f"{q} 0 {d} {draw(st.integers(-2, 4))}\n")
    run_queries = sorted(draw(st.sets(st.sampled_from(QIDS), min_size=1, max_size=5)))
    draw(st.randoms()).shuffle(run_queries)  # each query's lines together, in any order
    for q in run_queries:
        for d in draw(st.sets(st.sampled_from(DOCS), min_size=1, max_size=8)):
            score = draw(st.sampled_from(["1", "0.5", "2", "-1", "1e300", "0"]))
            run_lines.append(f"{q} Q0 {d} 1 {score} tag{len(run_lines) % 3}\n")
    if draw(st.integers(0, 9)) == 0:
        draw(st.randoms()).shuffle(qrels_lines)  # qrels not grouped: the numpy path reads them
    return "".join(qrels_lines), "".join(run_lines)


OPTIONS = st.tuples(
    st.sampled_from([[], ["-m", "all_trec"], ["-m", "all_trec", "-m", "relstring.5"],
                     ["-m", "official", "-m", "ndcg@3", "-m", "mrr@10", "-m", "P@2"],
                     ["-m", "map", "-m", "gm_map", "-m", "num_rel"]]),
    st.sampled_from([[], ["-q"]]), st.sampled_from([[], ["-c"]]),
    st.sampled_from([[], ["-J"]]), st.sampled_from([[], ["-M", "2"]]),
    st.sampled_from([[], ["-l", "0"], ["-l", "2"]]),
    st.sampled_from([[], ["-o", "json"], ["-o", "csv"]]),
).map(lambda parts: [x for part in parts for x in part])


@settings(max_examples=examples(100), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(files=trec_files(), options=OPTIONS)
def test_small_files_print_what_the_numpy_path_prints(tmp_path, monkeypatch, capsys, files,
                                                      options):
    small, numpy_path = both_paths(tmp_path, monkeypatch, capsys, *files, *options)
    assert small == numpy_path


def test_c_sums_in_query_id_order_with_the_missing_queries_among_the_others(
        tmp_path, monkeypatch, capsys):
    # gm_map under -c -o json was 0.014111045924448208 on the numpy path, which added the run's
    # queries in file order and those missing from it after them, and 0.01411104592444822 on
    # the small-file path, which adds them all in id order, as trec_eval does (trec_eval.c)
    grades = {"q0": "0", "q1": "1", "q2": "11", "q3": "01", "q4": "2121", "q5": "0", "q6": "212",
              "q7": "1111", "q8": "1"}
    qrels = "".join(f"{q} 0 d{j} {g}\n" for q, gs in grades.items() for j, g in enumerate(gs))
    scores = {"q2": "2233", "q8": "2322", "q4": "2123", "q6": "3233", "q7": "1222", "q1": "3323"}
    run = "".join(f"{q} Q0 d{j} 1 {x} r\n" for q, xs in scores.items() for j, x in enumerate(xs))
    small, numpy_path = both_paths(tmp_path, monkeypatch, capsys, qrels, run,
                                   "-c", "-o", "json", "-m", "gm_map", "-m", "map")
    assert small == numpy_path
    _, out, _ = both_paths(tmp_path, monkeypatch, capsys, qrels, run, "-c", "-q", "-o", "json",
                           "-m", "map")[0]
    per_query = json.loads(out)["per_query"]
    values = [per_query[q]["map"] for q in sorted(per_query)]  # in id order, as trec_eval adds
    total = 0.0
    for v in values:
        total += math.log(max(v, 1e-5))
    assert json.loads(small[1])["all"]["gm_map"] == math.exp(total / len(values))


def test_the_command_line_on_small_files_never_imports_numpy():
    data = Path(qafast.__file__).parent / "data"
    code = ("import sys; from qafast._program import main; main(sys.argv[1:]); "
            "print('numpy' in sys.modules)")
    for options in ([], ["-q", "-c", "-m", "all_trec", "-o", "json"]):
        got = subprocess.run([sys.executable, "-c", code, "trec", *options,
                              str(data / "sample.qrels"), str(data / "sample.run")],
                             capture_output=True, text=True, timeout=120, check=True)
        assert got.stdout.splitlines()[-1] == "False", got.stderr


GROUPED_QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d1 2\n"


@pytest.mark.parametrize("qrels,run,options", [
    # what the small-file path declines, each the numpy path's output or error
    (GROUPED_QRELS, "q1 Q0 d1 1 1 r\nq2 Q0 d1 1 1 r\nq1 Q0 d2 2 0 r\n", []),  # ungrouped run
    (GROUPED_QRELS, "q1 Q0 d1 1 1 r\nq1 Q0 d1 2 0 r\n", []),  # a document twice
    (GROUPED_QRELS + "q1 0 d1 0\n", "q1 Q0 d1 1 1 r\n", []),  # a judgment twice
    (GROUPED_QRELS, "q1 Q0 d1 1 one r\n", []),  # a malformed line
    ("q1 0 d1 1000001\n", "q1 Q0 d1 1 1 r\n", []),  # a grade above the supported range
    (GROUPED_QRELS, "q9 Q0 d1 1 1 r\n", []),  # no query in common: an error
    (GROUPED_QRELS, "q9 Q0 d1 1 1 r\n", ["-c"]),  # ... under -c, a warning
    (GROUPED_QRELS, "", []),  # an empty run
    ("", "q1 Q0 d1 1 1 r\n", []),  # empty qrels
    (GROUPED_QRELS, "q1 Q0 d1 1 1 r\n", ["-m", "runid", "-m", "relstring"]),  # no number
    (GROUPED_QRELS, b"q1 Q0 d\xff 1 1 r\n", []),  # not UTF-8
    ("q1 0 d1 7\n", "q1 Q0 d1 1 1 r\n", ["-m", "ERR@10"]),  # above ERR's grade scale
])
def test_what_small_files_decline_gives_the_numpy_path_outcome(tmp_path, monkeypatch, capsys,
                                                               qrels, run, options):
    small, numpy_path = both_paths(tmp_path, monkeypatch, capsys, qrels, run, *options)
    assert small == numpy_path


def test_a_grade_above_errs_scale_is_refused_as_evaluate_refuses_it(tmp_path, monkeypatch,
                                                                    capsys):
    # it printed ERR@10 = 7.9375 (ERR is at most 1), where qafast.evaluate refuses the grade
    small, _ = both_paths(tmp_path, monkeypatch, capsys, "q1 0 d1 7\nq1 0 d2 0\n",
                          "q1 Q0 d1 1 1 r\n", "-m", "ERR@10")
    assert small[0] == 2 and small[1] == ""
    assert "grade 7 is above 4" in small[2] and "qrels" in small[2]


def test_a_gzip_run_is_read_either_way(tmp_path, monkeypatch, capsys):
    run = gzip.compress(b"q1 Q0 d1 1 1 r\nq1 Q0 d2 2 0.5 r\nq2 Q0 d1 1 3 r\n")
    small, numpy_path = both_paths(tmp_path, monkeypatch, capsys, GROUPED_QRELS, run,
                                   "-q", "-o", "json", run_name="run.gz")
    assert small == numpy_path and json.loads(small[1])["all"]["map"] == 1.0


def test_several_runs_share_the_qrels(tmp_path, monkeypatch, capsys):
    (tmp_path / "second").write_text("q2 Q0 d1 1 1 s\n")
    small, numpy_path = both_paths(tmp_path, monkeypatch, capsys, GROUPED_QRELS,
                                   "q1 Q0 d2 1 1 r\nq1 Q0 d1 2 0.5 r\n", "-q",
                                   more_runs=[tmp_path / "second"])
    assert small == numpy_path and "==> " in small[1]


@settings(max_examples=examples(100), deadline=None)
@given(grades=st.lists(st.integers(-2**31, 2**31 - 1), max_size=40))
def test_grade_summary_is_the_largest_grade_and_the_count_above_0(grades):
    from array import array

    from qafast import _kernels

    assert _kernels.grade_summary(array("i", grades)) == (
        max(grades, default=0), sum(g > 0 for g in grades))
