"""trec_eval 10.0's own golden outputs, reproduced byte for byte by ``qafast trec``.

The files in tests/data/trec_eval-10.0 come from trec_eval's test suite (NIST; see the
LICENSE.md beside them); the cases are those its README lists, and the outputs it lists as
recorded with a trec_eval 10.0 binary for the measures that suite does not print.
"""

import io
import json
import sys
from pathlib import Path

import pytest

from qafast.cli import main

DATA = Path(__file__).parent / "data" / "trec_eval-10.0"

CASES = [
    ("out.test", [], "qrels.test", "results.test"),
    ("out.test", [], "qrels.test.with-comments", "results.test"),
    ("out.comment.test", [], "qrels.comment.test", "results.comment.test"),
    ("out.test.a", ["-m", "all_trec"], "qrels.test", "results.test"),
    ("out.test.aq", ["-m", "all_trec", "-q"], "qrels.test", "results.test"),
    ("out.test.aqc", ["-m", "all_trec", "-q", "-c"], "qrels.test", "results.trunc"),
    ("out.test.aqcM", ["-m", "all_trec", "-q", "-c", "-M100"], "qrels.test", "results.trunc"),
    ("out.test.aql", ["-m", "all_trec", "-m", "relstring.20", "-q", "-l2"],
     "qrels.rel_level", "results.test"),
    ("out.test.meas_params",
     ["-q", "-m", "iprec_at_recall..10,.20,.25,.75,.50", "-m", "P.5,7,3", "-m", "recall.20,2000",
      "-m", "Rprec_mult.5.0,0.2,0.35", "-m", "utility.2,-1,0,0", "-m", "11pt_avg..25,.5,.75",
      "-m", "ndcg.1=3,2=9,4=4.5", "-m", "ndcg_cut.10,20,23.4", "-m", "success.2,5,20"],
     "qrels.test", "results.test"),
    ("out.test.aqZ", ["-q", "-m", "all_trec", "-Z", str(DATA / "zscores_file")],
     "qrels.test", "results.test"),
    ("out.test.qrels_jg", ["-m", "qrels_jg", "-q", "-R", "qrels_jg"], "qrels.123", "results.test"),
    ("out.test.qrels_jg", ["-m", "qrels_jg", "-q", "-R", "qrels_jg"], "qrels.comments.123",
     "results.test"),
    ("out.test.prefs", ["-m", "all_prefs", "-q", "-R", "prefs"], "prefs.test",
     "prefs.results.test"),
    ("out.test.prefs", ["-m", "all_prefs", "-q", "-R", "prefs"], "prefs.comment.test",
     "prefs.results.test"),
    ("out.test.qrels_prefs", ["-m", "all_prefs", "-q", "-R", "qrels_prefs"], "qrels.test",
     "results.test"),
    # recorded with the trec_eval 10.0 binary (the README's second table)
    ("recorded.yaap.qc", ["-q", "-c", "-m", "yaap"], "qrels.test", "results.trunc"),
    ("recorded.yaap.qlM", ["-q", "-l2", "-M100", "-m", "yaap"], "qrels.rel_level",
     "results.test"),
]


@pytest.fixture(params=["small-files", "numpy"])
def engine(request, monkeypatch):
    """Both of the command line's paths: small files measured without numpy (the default
    for these), and the numpy path every other input takes."""
    if request.param == "numpy":
        import qafast._trec_text

        monkeypatch.setattr(qafast._trec_text, "QUICK_BYTES", 0)
    return request.param


def run_cli(args, capsys):
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("expected,options,qrels,run", CASES,
                         ids=[f"{c[0]}-{c[2]}" for c in CASES])
def test_golden_output_byte_for_byte(expected, options, qrels, run, capsys, engine):
    code, out, err = run_cli(["trec", *options, str(DATA / qrels), str(DATA / run)], capsys)
    assert code == 0, err
    assert out == (DATA / expected).read_text()


def test_run_from_stdin(capsys, monkeypatch):
    raw = (DATA / "results.test").read_bytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(raw)))
    code, out, err = run_cli(["trec", str(DATA / "qrels.test"), "-"], capsys)
    assert code == 0, err
    assert out == (DATA / "out.test").read_text()


def test_json_output_carries_the_same_numbers(capsys):
    code, out, err = run_cli(["trec", "-q", "-m", "all_trec", "-o", "json",
                              str(DATA / "qrels.test"), str(DATA / "results.test")], capsys)
    assert code == 0, err
    doc = json.loads(out)
    text = (DATA / "out.test.aq").read_text().splitlines()
    for line in text:
        name, qid, value = (part.strip() for part in line.split("\t"))
        got = doc["all"][name] if qid == "all" else doc["per_query"][qid][name]
        if isinstance(got, str):
            assert value == (got if qid == "all" else f"'{got}'")
        elif isinstance(got, int):
            assert str(got) == value
        else:
            assert f"{got:6.4f}".strip() == value


def test_qrels_query_missing_from_run_is_skipped_with_a_note(tmp_path, capsys):
    qrels = tmp_path / "qrels"
    run = tmp_path / "run"
    qrels.write_text("q1 0 a 1\nq2 0 b 1\n")
    run.write_text("q1 Q0 a 1 1.0 r\n")
    code, out, err = run_cli(["trec", "-m", "num_q", "-m", "map", str(qrels), str(run)], capsys)
    assert code == 0
    assert "q2" in err and "skipped" in err
    assert out == "num_q                 \tall\t1\nmap                   \tall\t1.0000\n"
    code, out, err = run_cli(["trec", "-c", "-m", "num_q", "-m", "map", str(qrels), str(run)],
                             capsys)
    assert out == "num_q                 \tall\t2\nmap                   \tall\t0.5000\n"
    assert err == ""


@pytest.mark.parametrize("measure", ["nonsense", "P.", "P.0", "P.5,5", "utility.1,2"])
def test_bad_measure_is_a_clear_error(measure, capsys):
    code, out, err = run_cli(["trec", "-m", measure, str(DATA / "qrels.test"),
                              str(DATA / "results.test")], capsys)
    assert code != 0 and out == ""
    assert measure.split(".")[0] in err


def test_malformed_run_line_names_file_and_line(tmp_path, capsys):
    run = tmp_path / "bad.run"
    run.write_text("301 Q0 a 1 1.0 r\n301 Q0 b 2 notanumber r\n")
    code, out, err = run_cli(["trec", str(DATA / "qrels.test"), str(run)], capsys)
    assert code == 2
    assert "bad.run" in err and "line 2" in err


def test_zscores_missing_measure_and_zero_deviation(tmp_path, capsys):
    qrels = tmp_path / "qrels"
    run = tmp_path / "run"
    zs = tmp_path / "zs"
    qrels.write_text("q1 0 a 1\nq2 0 b 1\n")
    run.write_text("q1 Q0 a 1 1.0 r\nq2 Q0 c 1 1.0 r\n")
    # q1: map 1 against mean 0.5, deviation 0.25 => 2; q2: map 0 equals the mean with
    # deviation 0 => 0; q2's num_ret has no line => -1000000; q1's num_ret differs from
    # its mean with deviation 0 => -1000000
    zs.write_text("q1 map 0.5 0.25\nq2 map 0 0\nq1 num_ret 2 0\n")
    code, out, err = run_cli(["trec", "-q", "-m", "map", "-m", "num_ret", "-Z", str(zs),
                              str(qrels), str(run)], capsys)
    assert code == 0, err
    assert out == ("Znum_ret               \tq1\t-1000000.0000\n"
                   "Zmap                   \tq1\t2.0000\n"
                   "Znum_ret               \tq2\t-1000000.0000\n"
                   "Zmap                   \tq2\t0.0000\n"
                   "Znum_ret               \tall\t-2000000.0000\n"
                   "Zmap                   \tall\t1.0000\n")


@pytest.mark.parametrize("text,where", [("q1 map 0.5\n", "line 1"),
                                        ("q1 map 0.5 0.1\nq1 map x 0.1\n", "line 2"),
                                        ("q1 map 0.5 0.1\nq1 map 0.5 0.2\n", "twice"),
                                        ("", "empty")])
def test_bad_zscores_file_is_a_clear_error(tmp_path, capsys, text, where):
    zs = tmp_path / "zs"
    zs.write_text(text)
    code, out, err = run_cli(["trec", "-Z", str(zs), str(DATA / "qrels.test"),
                              str(DATA / "results.test")], capsys)
    assert code == 1 and out == ""
    assert where in err and "zs" in err


def test_judge_group_measures_average_over_each_querys_groups(tmp_path, capsys):
    qrels = tmp_path / "qrels"
    run = tmp_path / "run"
    # q1: group A finds a relevant at rank 1 (AP 1), group B at rank 2 (AP 0.5); q2 is
    # judged by group B only (AP 1)
    qrels.write_text("q1 A a 1\nq1 B b 1\nq1 B a 0\nq2 B c 2\n")
    run.write_text("q1 Q0 a 1 2 r\nq1 Q0 b 2 1 r\nq2 Q0 c 1 1 r\n")
    code, out, err = run_cli(["trec", "-R", "qrels_jg", "-q", "-m", "map_avgjg",
                              "-m", "P_avgjg.1", str(qrels), str(run)], capsys)
    assert code == 0, err
    assert out == ("map_avgjg             \tq1\t0.7500\n"
                   "P_avgjg_1             \tq1\t0.5000\n"
                   "map_avgjg             \tq2\t1.0000\n"
                   "P_avgjg_1             \tq2\t1.0000\n"
                   "map_avgjg             \tall\t0.8750\n"
                   "P_avgjg_1             \tall\t0.7500\n")


@pytest.mark.parametrize("text,measure,where", [("q1 A a\n", "map_avgjg", "line 1"),
                                                ("q1 A a 1\nq1 A b x\n", "map_avgjg", "line 2"),
                                                ("q1 A a 1\n", "map", "map")])
def test_bad_judge_group_input_is_a_clear_error(tmp_path, capsys, text, measure, where):
    qrels = tmp_path / "jg"
    qrels.write_text(text)
    try:
        code, out, err = run_cli(["trec", "-R", "qrels_jg", "-m", measure, str(qrels),
                                  str(DATA / "results.test")], capsys)
    except SystemExit as e:  # the command line's handler of qafast errors
        code, err = e.code, capsys.readouterr().err
    assert code != 0
    assert where in err


def test_preferences_counted_by_hand(tmp_path, capsys):
    prefs = tmp_path / "prefs"
    run = tmp_path / "run"
    # one group, one sub-group: a > b > c. The run ranks b, a (c not retrieved): of the 3
    # preferences a > b fails (both retrieved), a > c and b > c are fulfilled (implied)
    prefs.write_text("q1 g s a 3\nq1 g s b 2\nq1 g s c 1\n")
    run.write_text("q1 Q0 b 1 2 r\nq1 Q0 a 2 1 r\n")
    code, out, err = run_cli(["trec", "-R", "prefs", "-q", "-m", "prefs_num_prefs_poss",
                              "-m", "prefs_num_prefs_ful", "-m", "prefs_simp",
                              "-m", "prefs_simp_ret", str(prefs), str(run)], capsys)
    assert code == 0, err
    assert out.splitlines()[:4] == ["prefs_num_prefs_poss  \tq1\t3",
                                    "prefs_num_prefs_ful   \tq1\t2",
                                    "prefs_simp            \tq1\t0.6667",
                                    "prefs_simp_ret        \tq1\t0.0000"]


def test_contradicting_preferences_are_a_clear_error(tmp_path, capsys):
    prefs = tmp_path / "prefs"
    prefs.write_text("q1 g s1 a 2\nq1 g s1 b 1\nq1 g s2 b 2\nq1 g s2 a 1\n")
    run = tmp_path / "run"
    run.write_text("q1 Q0 a 1 1 r\n")
    try:
        code, out, err = run_cli(["trec", "-R", "prefs", str(prefs), str(run)], capsys)
    except SystemExit as e:
        code, err = e.code, capsys.readouterr().err
    assert code != 0
    assert "q1" in err and "contradict" in err
