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
