"""``qafast trec`` against trec_eval 10.0 on small inputs that each show one of its rules.

Every expected output below was printed by the trec_eval 10.0 binary (x86-64 Linux) on the
qrels and run beside it.
"""

import pytest

from qafast.cli import main


def trec(tmp_path, capsys, qrels: str, run: str, *options: str):
    """Run ``qafast trec`` on qrels and run text; (exit code, stdout, stderr)."""
    qrels_path = tmp_path / "qrels"
    run_path = tmp_path / "run"
    qrels_path.write_text(qrels)
    run_path.write_text(run)
    code = main(["trec", *options, str(qrels_path), str(run_path)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def lines(*rows: tuple) -> str:
    """trec_eval's output lines: name padded to 22, query, value."""
    return "".join(f"{name:<22}\t{qid}\t{value}\n" for name, qid, value in rows)


def test_run_line_of_blanks_then_hash_is_a_comment(tmp_path, capsys):
    run = ("q1 Q0 a 1 0.5 r\n"
           "   # a comment line\n"
           "\t#x y\n"
           "  #q1 Q0 b 2 0.9 r\n"
           "q1 Q0 b 2 0.4 r\n")
    code, out, err = trec(tmp_path, capsys, "q1 0 a 1\nq1 0 b 0\n", run,
                          "-q", "-m", "num_ret", "-m", "P.1", "-m", "map")
    assert code == 0, err
    assert out == lines(("num_ret", "q1", 2), ("map", "q1", "1.0000"), ("P_1", "q1", "1.0000"),
                        ("num_ret", "all", 2), ("map", "all", "1.0000"),
                        ("P_1", "all", "1.0000"))


# --- 0 / 0: trec_eval prints the x86-64 NaN, sign bit set, as "-nan" -----------------------

QRELS_A = "q1 0 a 1\nq1 0 b 0\nq2 0 x 1\n"
RUN_A = "q1 Q0 a 1 0.5 r\nq2 Q0 w 2 0.4 r\n"


def test_interpolated_precision_of_a_query_left_empty_by_J_is_minus_nan(tmp_path, capsys):
    code, out, err = trec(tmp_path, capsys, QRELS_A, RUN_A, "-J", "-q",
                          "-m", "iprec_at_recall.0,.5", "-m", "11pt_avg.0,1")
    assert code == 0, err
    assert out == lines(
        ("iprec_at_recall_0.00", "q1", "1.0000"), ("iprec_at_recall_0.50", "q1", "1.0000"),
        ("11pt_avg_0,1", "q1", "1.0000"),
        ("iprec_at_recall_0.00", "q2", "  -nan"), ("iprec_at_recall_0.50", "q2", "0.0000"),
        ("11pt_avg_0,1", "q2", "  -nan"),
        ("iprec_at_recall_0.00", "all", "  -nan"), ("iprec_at_recall_0.50", "all", "0.5000"),
        ("11pt_avg_0,1", "all", "  -nan"))


def test_json_output_writes_an_undefined_value_as_null(tmp_path, capsys):
    import json

    code, out, err = trec(tmp_path, capsys, QRELS_A, RUN_A, "-J", "-q", "-o", "json",
                          "-m", "iprec_at_recall.0,.5")

    def strict(token):
        raise ValueError(f"not JSON: {token}")

    doc = json.loads(out, parse_constant=strict)  # a bare NaN is refused by strict parsers
    assert code == 0, err
    assert doc["per_query"]["q2"]["iprec_at_recall_0.00"] is None
    assert doc["per_query"]["q2"]["iprec_at_recall_0.50"] == 0.0
    assert doc["all"]["iprec_at_recall_0.00"] is None


def test_query_missing_from_the_run_under_c_and_J_is_minus_nan(tmp_path, capsys):
    # -c ranks one unjudged document for the missing query, which -J then drops
    code, out, err = trec(tmp_path, capsys, QRELS_A, "q1 Q0 a 1 0.5 r\n", "-c", "-J", "-q",
                          "-m", "iprec_at_recall.0", "-m", "num_q")
    assert code == 0, err
    assert out == lines(("iprec_at_recall_0.00", "q1", "1.0000"),
                        ("iprec_at_recall_0.00", "q2", "  -nan"), ("num_q", "all", 2),
                        ("iprec_at_recall_0.00", "all", "  -nan"))


def test_Rndcg_with_no_positive_gain_is_minus_nan(tmp_path, capsys):
    code, out, err = trec(tmp_path, capsys, "q1 0 a 1\nq1 0 b 0\nq2 0 c 2\n",
                          "q1 Q0 a 1 0.5 r\nq1 Q0 b 2 0.9 r\nq2 Q0 c 1 0.3 r\n",
                          "-q", "-m", "Rndcg.1=-1")
    assert code == 0, err
    assert out == lines(("Rndcg_1=-1", "q1", "  -nan"), ("Rndcg_1=-1", "q2", "1.0000"),
                        ("Rndcg_1=-1", "all", "  -nan"))


def test_G_over_log2_of_a_negative_number_is_minus_nan(tmp_path, capsys):
    # documents outside the qrels given gain 3 push G's log2 argument below 0; an extension
    # bound to glibc's old log2 wrapper got a NaN with the sign bit clear, printed "nan"
    code, out, err = trec(tmp_path, capsys, "q 0 a 1\n", "q Q0 x 1 1 r\nq Q0 y 2 0.5 r\n",
                          "-q", "-m", "G.-1=3")
    assert code == 0, err
    assert out == lines(("G_-1=3", "q", "  -nan"), ("G_-1=3", "all", "  -nan"))


def test_a_nan_parameter_keeps_its_sign(tmp_path, capsys):
    # atof("nan") is a NaN with the sign bit clear: trec_eval prints "nan"
    code, out, err = trec(tmp_path, capsys, QRELS_A, RUN_A, "-m", "utility.nan,1,1,1",
                          "-m", "set_F.-nan")
    assert code == 0, err
    assert out == lines(("utility_nan,1,1,1", "all", "   nan"), ("set_F_-nan", "all", "  -nan"))


def test_evaluate_returns_nan_where_trec_eval_prints_it(tmp_path):
    import math

    import qafast

    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"x": 1}}
    run = {"q1": {"a": 0.5}, "q2": {"w": 0.4}}
    per_query = qafast.evaluate(qrels, run, ["iprec_at_recall.0", "11pt_avg", "P.1"],
                                judged_only=True, per_query=True)
    assert per_query["q1"] == {"iprec_at_recall_0.00": 1.0, "11pt_avg": 1.0, "P_1": 1.0}
    assert math.isnan(per_query["q2"]["iprec_at_recall_0.00"])
    assert math.isnan(per_query["q2"]["11pt_avg"])
    summary = qafast.evaluate(qrels, run, ["iprec_at_recall.0", "P.1"], judged_only=True)
    assert math.isnan(summary["iprec_at_recall_0.00"]) and summary["P_1"] == 0.5
    assert type(summary["iprec_at_recall_0.00"]) is float


# --- measures named on the command line -----------------------------------------------------

def test_a_family_given_parameters_twice_keeps_the_first(tmp_path, capsys):
    code, out, err = trec(tmp_path, capsys, QRELS_A, RUN_A, "-m", "P.5", "-m", "P.10",
                          "-m", "P", "-m", "recall", "-m", "recall.3")
    assert code == 0, err
    assert out == lines(("P_5", "all", "0.1000"), ("recall_3", "all", "0.5000"))


def test_a_nickname_with_parameters_is_the_nickname(tmp_path, capsys):
    code, out, err = trec(tmp_path, capsys, QRELS_A, RUN_A, "-m", "official.5")
    code2, out2, _ = trec(tmp_path, capsys, QRELS_A, RUN_A, "-m", "official")
    assert code == code2 == 0, err
    assert out == out2


def test_names_of_the_python_api_follow_trec_eval_measures_in_request_order(tmp_path, capsys):
    import qafast

    qrels = "q1 0 a 1\nq1 0 b 2\nq1 0 c 0\nq2 0 x 1\n"
    run = "q1 Q0 c 1 0.9 r\nq1 Q0 a 2 0.5 r\nq1 Q0 b 3 0.1 r\nq2 Q0 y 1 0.4 r\nq2 Q0 x 2 0.3 r\n"
    code, out, err = trec(tmp_path, capsys, qrels, run, "-q", "-m", "ndcg@10", "-m", "mrr@1",
                          "-m", "P.2", "-m", "P_2", "-m", "ndcg_cut_10")
    assert code == 0, err
    rows = [line.split("\t") for line in out.splitlines()]
    assert [(name.strip(), q) for name, q, _ in rows] == [
        (name, q) for q in ("q1", "q2", "all")
        for name in ("P_2", "ndcg@10", "mrr@1", "ndcg_cut_10")]
    got = {(name.strip(), q): value for name, q, value in rows}
    expected = qafast.evaluate(str(tmp_path / "qrels"), str(tmp_path / "run"),
                               ["ndcg_cut.10", "mrr@1"], per_query=True)
    for q in ("q1", "q2"):
        assert got["ndcg@10", q] == got["ndcg_cut_10", q] == f"{expected[q]['ndcg_cut_10']:6.4f}"
        assert got["mrr@1", q] == f"{expected[q]['mrr@1']:6.4f}"
    assert got["mrr@1", "all"] == "0.0000"


def test_an_unknown_name_is_still_refused(tmp_path, capsys):
    code, out, err = trec(tmp_path, capsys, QRELS_A, RUN_A, "-m", "ndcg@", "-m", "map")
    assert code == 1 and out == ""
    assert "ndcg@" in err


# --- -c ---------------------------------------------------------------------------------------

QRELS_C = "q1 0 a 1\nq1 0 b 2\nq1 0 c 3\nq1 0 d 0\nq2 0 e 1\nq3 0 f 2\nq3 0 g -1\n"
RUN_C = "q1 Q0 a 1 0.5 r\nq1 Q0 b 2 0.9 r\nq1 Q0 z 3 0.2 r\nq3 Q0 f 1 0.3 r\n"


@pytest.mark.parametrize("level,per_query,summary", [
    ("2", [(2, 1, "0.5000"), (0, 0, "0.0000"), (1, 1, "1.0000")], (5, 2, "0.5000")),
    ("0", [(4, 2, "0.5000"), (1, 0, "0.0000"), (1, 1, "1.0000")], (5, 3, "0.5000")),
])
def test_c_sums_num_rel_over_the_qrels_grades_above_0_whatever_l(tmp_path, capsys, level,
                                                                 per_query, summary):
    code, out, err = trec(tmp_path, capsys, QRELS_C, RUN_C, "-c", f"-l{level}", "-q",
                          "-m", "num_rel", "-m", "num_rel_ret", "-m", "map")
    assert code == 0, err
    rows = []
    for q, (rel, rel_ret, ap) in zip(("q1", "q2", "q3", "all"), per_query + [summary]):
        rows += [("num_rel", q, rel), ("num_rel_ret", q, rel_ret), ("map", q, ap)]
    assert out == lines(*rows)


def test_evaluate_over_every_qrels_query_sums_num_rel_as_trec_eval_c():
    import qafast

    qrels = {"q1": {"a": 1, "b": 2, "c": 3, "d": 0}, "q2": {"e": 1}, "q3": {"f": 2, "g": -1}}
    run = {"q1": {"a": 0.5, "b": 0.9, "z": 0.2}, "q3": {"f": 0.3}}
    both = qafast.evaluate(qrels, run, ["num_rel", "map"], relevance_level=2, queries="qrels")
    assert both == {"num_rel": 5.0, "map": 0.5}
    common = qafast.evaluate(qrels, run, ["num_rel"], relevance_level=2)
    assert common == {"num_rel": 3.0}  # the run's queries: the per-query counts' sum


QRELS_N = "q1 0 a 1\nq1 0 b 0\nq2 0 x 2\n"
RUN_N = "q9 Q0 a 1 0.5 runA\nq8 Q0 b 1 0.5 runB\n"


def test_c_with_no_query_in_common_scores_every_qrels_query_empty(tmp_path, capsys):
    code, out, err = trec(tmp_path, capsys, QRELS_N, RUN_N, "-c", "-q", "-m", "runid",
                          "-m", "num_q", "-m", "num_ret", "-m", "num_rel", "-m", "map",
                          "-m", "P.5", "-m", "relstring")
    assert code == 0, err
    assert out == lines(
        ("num_ret", "q1", 0), ("num_rel", "q1", 1), ("map", "q1", "0.0000"),
        ("P_5", "q1", "0.0000"), ("relstring", "q1", "''"),
        ("num_ret", "q2", 0), ("num_rel", "q2", 1), ("map", "q2", "0.0000"),
        ("P_5", "q2", "0.0000"), ("relstring", "q2", "''"),
        ("runid", "all", "runB"), ("num_q", "all", 2), ("num_ret", "all", 0),
        ("num_rel", "all", 2), ("map", "all", "0.0000"), ("P_5", "all", "0.0000"))
    assert "no query in common" in err and "-c" in err


def test_no_query_in_common_without_c_is_an_error(tmp_path, capsys):
    code, out, err = trec(tmp_path, capsys, QRELS_N, RUN_N, "-m", "map")
    assert code == 2 and out == ""
    assert "no query in common" in err


def test_evaluate_over_every_qrels_query_with_no_query_in_common_warns():
    import qafast

    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"x": 2}}
    run = {"q9": {"a": 0.5}, "q8": {"b": 0.5}}
    with pytest.warns(UserWarning, match="no query in common") as caught:
        got = qafast.evaluate(qrels, run, ["num_ret", "num_rel", "map", "P.5"],
                              queries="qrels")
    assert caught[0].filename == __file__
    assert got == {"num_ret": 0.0, "num_rel": 2.0, "map": 0.0, "P_5": 0.0}
    with pytest.warns(UserWarning, match="no query in common"):
        per_query = qafast.evaluate(qrels, run, ["map"], queries="qrels", per_query=True)
    assert per_query == {"q1": {"map": 0.0}, "q2": {"map": 0.0}}
    with pytest.raises(ValueError, match="no query in common"):
        qafast.evaluate(qrels, run, ["map"])
    with pytest.warns(UserWarning, match="no query in common"):  # integer query ids
        assert qafast.evaluate({1: {"a": 1}}, {2: {"a": 1.0}}, "map", queries="qrels") == {
            "map": 0.0}


# --- -l below 0 -------------------------------------------------------------------------------

def test_a_negative_relevance_level_is_refused(tmp_path, capsys):
    # trec_eval -l-1 counts documents outside the qrels as relevant and prints map 2.0000
    import qafast

    code, out, err = trec(tmp_path, capsys, QRELS_A, RUN_A, "-l-1", "-m", "map")
    assert code == 1 and out == "" and "-l" in err
    with pytest.raises(ValueError, match="relevance_level"):
        qafast.evaluate({"q1": {"a": 1}}, {"q1": {"a": 1.0}}, "map", relevance_level=-1)


API_NAMES = ["P@10", "recall@100", "map@100", "ndcg@10", "mrr@10", "hit@10", "r-precision",
             "ndcg_exp@10", "MRR", "bpref", "P_5", "ndcg_cut_10", "iprec_at_recall_0.10",
             "utility_2,-1,0,0", "recip_rank_cut.10", "success_1"]


@pytest.mark.parametrize("name", API_NAMES)
def test_every_name_evaluate_takes_is_a_command_line_measure(name):
    from qafast._measure_parser import parse_measure, trec_columns

    api = parse_measure(name)
    cli = trec_columns([name])
    assert [(c.family, c.k, c.x, c.keys, c.values) for c in cli] == [
        (c.family, c.k, c.x, c.keys, c.values) for c in api]


def test_every_at_alias_is_a_command_line_measure():
    from qafast._measure_parser import OWN_NAMES, UnknownMeasureError, parse_measure, trec_columns

    for alias in OWN_NAMES:
        for name in (alias, f"{alias}@10"):
            try:
                api = parse_measure(name)
            except UnknownMeasureError:
                continue
            # after trec_eval's map (unless it is map), the API's columns
            assert [c.name for c in trec_columns(["map", name])][-len(api):] == [
                c.name for c in api], name


@pytest.mark.parametrize("entry", ["qafast.cli", "qafast._program"])
def test_a_reader_that_stops_early_is_no_error(entry):
    # `qafast trec ... | head`: the pipe closes before the output is written; Python then
    # raises BrokenPipeError, an OSError, which was reported as a failure with exit code 2
    import subprocess
    import sys
    from pathlib import Path

    import qafast

    data = Path(qafast.__file__).parent / "data"
    code = (f"import sys; from {entry} import main; sys.exit(main())" if entry != "qafast.cli"
            else None)
    args = ["trec", "-q", "-m", "all_trec", str(data / "sample.qrels"), str(data / "sample.run")]
    cmd = ([sys.executable, "-m", entry, *args] if code is None
           else [sys.executable, "-c", code, *args])
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # nothing will be read
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 0, err
    assert err == b""


def test_python_dash_m_qafast_is_the_qafast_command():
    import subprocess
    import sys
    from pathlib import Path

    import qafast

    data = Path(qafast.__file__).parent / "data"
    args = ["trec", "-m", "map", str(data / "sample.qrels"), str(data / "sample.run")]
    got = subprocess.run([sys.executable, "-m", "qafast", *args], capture_output=True,
                         timeout=120, check=False)
    want = subprocess.run([sys.executable, "-m", "qafast.cli", *args], capture_output=True,
                          timeout=120, check=True)
    assert got.returncode == 0, got.stderr
    assert got.stdout == want.stdout and got.stdout.startswith(b"map")


def test_trec_loads_no_other_family_and_help_lists_them_all():
    # `qafast trec` registers only its own subcommand (the others' modules cost a tenth of
    # its start-up); the top-level help and every other subcommand still see them all
    import subprocess
    import sys
    from pathlib import Path

    import qafast
    from qafast.cli import FAMILY_MODULES

    data = Path(qafast.__file__).parent / "data"
    code = ("import sys; from qafast.cli import main; main(sys.argv[1:]); "
            "print(sorted(m for m in sys.modules if m.startswith('qafast.')))")
    args = ["trec", "-m", "map", str(data / "sample.qrels"), str(data / "sample.run")]
    got = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                         timeout=120, check=True)
    loaded = got.stdout.splitlines()[-1]
    assert got.stdout.startswith("map") and "'qafast._trec_text'" in loaded
    assert not [m for m in FAMILY_MODULES if f"'qafast.{m}'" in loaded]
    helped = subprocess.run([sys.executable, "-m", "qafast", "--help"], capture_output=True,
                            text=True, timeout=120, check=True).stdout
    for name in ("trec", "example", "squad", "bioasq", "dbqa", "ap", "opencsr", "events",
                 "compare", "fuse"):
        assert name in helped


def test_each_command_loads_its_own_family_only():
    # SUBCOMMANDS says which module registers each command, so that `qafast drop` imports the
    # DROP module alone; it must say what the modules really register
    import argparse
    import subprocess
    import sys

    from qafast.cli import FAMILY_MODULES, SUBCOMMANDS, _family_modules

    registered = {}
    for module in _family_modules():
        sub = argparse.ArgumentParser().add_subparsers()
        for command in module.register_cli(sub):
            registered[command] = module.__name__.removeprefix("qafast.")
    assert registered == SUBCOMMANDS
    code = ("import sys; from qafast.cli import main\n"
            "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith('qafast.')))")
    for command in ("drop", "squad", "compare"):
        got = subprocess.run([sys.executable, "-c", code, command, "--help"],
                             capture_output=True, text=True, timeout=120, check=True)
        loaded = got.stdout.splitlines()[-1]
        assert f"'qafast.{SUBCOMMANDS[command]}'" in loaded
        others = [m for m in FAMILY_MODULES if m != SUBCOMMANDS[command]
                  and f"'qafast.{m}'" in loaded]
        # a family may use another's code (compare runs the ranking family)
        assert "hotpot_eval" not in others or command == "hotpot", (command, others)
        assert "fusion" not in others, (command, others)


# --- ir_measures' one-string measure list, --version, --no-progress ------------------------


def test_one_m_naming_several_measures_is_ir_measures_list(tmp_path, capsys):
    # `ir_measures QRELS RUN 'nDCG@10 P@5 AP'` splits the string at spaces; so does -m, and a
    # parameter list keeps its spaces
    qrels = "q1 0 a 1\nq1 0 b 2\nq1 0 c 0\nq2 0 x 1\n"
    run = "q1 Q0 c 1 0.9 r\nq1 Q0 a 2 0.5 r\nq1 Q0 b 3 0.1 r\nq2 Q0 y 1 0.4 r\nq2 Q0 x 2 0.3 r\n"
    code, out, err = trec(tmp_path, capsys, qrels, run, "-m", " nDCG@10  P@5\tAP ",
                          "-m", "nDCG(dcg='exp-log2', cutoff=3) map")
    assert code == 0, err
    names = [line.split("\t")[0].strip() for line in out.splitlines()]
    assert names == ["map", "nDCG@10", "P@5", "AP", "nDCG(dcg='exp-log2', cutoff=3)"]
    code, one_by_one, err = trec(tmp_path, capsys, qrels, run, "-m", "map", "-m", "nDCG@10",
                                 "-m", "P@5", "-m", "AP", "-m", "nDCG(dcg='exp-log2')@3")
    assert code == 0, err
    assert [line.split("\t")[2] for line in out.splitlines()] == [
        line.split("\t")[2] for line in one_by_one.splitlines()]


def test_evaluate_takes_one_string_naming_several_measures():
    import qafast

    qrels = {"q1": {"a": 1, "b": 2}, "q2": {"x": 1}}
    run = {"q1": {"a": 0.5, "b": 0.9, "c": 0.1}, "q2": {"x": 0.2, "y": 0.3}}
    assert (qafast.evaluate(qrels, run, "nDCG@10 P@5  map")
            == qafast.evaluate(qrels, run, ["nDCG@10", "P@5", "map"]))


def test_version(capsys):
    import qafast

    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out == f"qafast {qafast.__version__}\n"


def test_every_subcommand_takes_no_progress(capsys):
    from qafast.cli import build_parser

    _, handlers = build_parser()
    assert len(handlers) > 8
    for name in handlers:
        with pytest.raises(SystemExit) as e:
            main([name, "--no-progress", "--help"])
        assert e.value.code == 0
        assert "--no-progress" in capsys.readouterr().out, name
    code = main(["example", "--no-progress"])
    assert code == 0 and capsys.readouterr().out.startswith("qafast ")


@pytest.mark.parametrize("zscored", [False, True])
def test_the_per_query_lines_are_those_of_the_output_data(zscored):
    # the text output prints -q lines from the values directly; they must be the lines the
    # output's data (what -o json writes) gives, NaNs' signs, counts, relstrings and -Z alike
    import argparse
    import math
    import random

    import numpy as np

    from qafast._measure_parser import trec_columns
    from qafast._measures import TEXT_MEASURES
    from qafast.cli import _per_query_text, _text_lines, _trec_block

    columns = trec_columns(["runid", "num_q", "num_ret", "map", "gm_map", "P.5,10",
                            "relstring.5", "bpref"])
    numeric = [c for c in columns if c.family not in TEXT_MEASURES]
    rng = random.Random(7)
    ids = ["q%", "1", "10", "2", "é"]
    specials = [math.nan, -math.nan, -0.0, math.inf, 0.5, 1e-5, 0.00005, 0.99995]
    values = np.array([[rng.choice(specials) if rng.random() < 0.4 else rng.random()
                        for _ in numeric] for _ in ids])
    values[:, [c.name for c in numeric].index("num_ret")] = [3, 0, 12, 7, 1]
    rel = next(j for j, c in enumerate(columns) if c.family == "relstring")

    class Result:
        pass

    r = Result()
    r.ids, r.values, r.run_id = ids, values, "tag"
    r.relstrings = {rel: ["1-0-", "", "R%s", "00", "'"][:len(ids)]}
    zscores = None
    if zscored:
        zscores = {(q, c.name): (0.25, rng.choice([0.0, 0.5, 2.0]))
                   for q in ids[1:] for c in numeric}
    args = argparse.Namespace(q=True, n=False, c=False, zscores=zscores)
    block = _trec_block(args, columns, numeric, None, r)
    want = "".join(_text_lines(args, columns, {"per_query": block["per_query"]}))
    assert _per_query_text(args, columns, numeric, r) == want
