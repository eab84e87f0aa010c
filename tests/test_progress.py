"""Progress bars on stderr: drawn by tqdm for a run file (by bytes) and for many runs (by
run) when stderr is a terminal or when asked; never with ``progress=False`` or
``--no-progress``; and no bar and no error without tqdm."""

import io
import sys

import pytest

import qafast
from qafast import _progress
from qafast.cli import main

pytest.importorskip("tqdm")

QRELS = "".join(f"q{q} 0 d{d} {d // 3 % 3}\n" for q in range(40) for d in range(0, 30, 3))
RUN = "".join(f"q{q} Q0 d{d} {d + 1} {1 - d / 100} tag\n" for q in range(40) for d in range(30))


class Terminal(io.StringIO):
    """A stderr that says it is a terminal."""

    def isatty(self):
        return True


@pytest.fixture
def files(tmp_path):
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text(QRELS)
    run.write_text(RUN)
    return qrels, run


@pytest.fixture
def terminal(monkeypatch):
    """Call it in the test: pytest sets its own stderr again between setup and the test."""
    def install():
        err = Terminal()
        monkeypatch.setattr(sys, "stderr", err)
        monkeypatch.setattr(_progress, "_DELAY", 0)  # the bar at once, not after 2 seconds
        return err
    return install


def test_forced_bar_counts_the_bytes_of_the_run(files, capsys):
    qrels, run = files
    want = qafast.evaluate(str(qrels), str(run), "map", progress=False)
    assert capsys.readouterr().err == ""
    assert qafast.evaluate(str(qrels), str(run), "map", progress=True) == want
    err = capsys.readouterr().err
    # the bar is drawn with the file's size as its total, and cleared at the end
    assert err.startswith("\rrun:") and f"/{run.stat().st_size / 1024:.1f}k" in err


def test_bar_only_when_stderr_is_a_terminal(files, capsys, monkeypatch):
    qrels, run = files
    monkeypatch.setattr(_progress, "_DELAY", 0)
    qafast.evaluate(str(qrels), str(run), "map")  # capsys' stderr is not a terminal
    assert capsys.readouterr().err == ""


def test_bar_on_a_terminal_and_silenced_by_progress_false(files, terminal):
    qrels, run = files
    terminal = terminal()
    qafast.evaluate(str(qrels), str(run), "map")
    assert "run:" in terminal.getvalue() and "%" in terminal.getvalue()
    terminal.seek(0)
    terminal.truncate()
    qafast.evaluate(str(qrels), str(run), "map", progress=False)
    assert terminal.getvalue() == ""


def test_many_runs_are_counted_by_run(files, tmp_path, terminal):
    qrels, run = files
    terminal = terminal()
    other = tmp_path / "other"
    other.write_text(RUN)
    got = qafast.evaluate_runs(qrels, [run, other], "map", workers=2)
    assert got[str(run)] == got[str(other)]
    assert "runs:" in terminal.getvalue() and "/2 " in terminal.getvalue()


def test_cli_bar_and_no_progress(files, terminal, capsys, monkeypatch):
    # the numpy path, which draws the bar: files small enough for the numpy-free path (48 MB)
    # are measured in well under the bar's 2 seconds, and it draws none
    import qafast._trec_text

    monkeypatch.setattr(qafast._trec_text, "QUICK_BYTES", 0)
    qrels, run = files
    terminal = terminal()
    assert main(["trec", "-m", "map", str(qrels), str(run), str(run) + "2"]) == 2
    terminal.seek(0)
    terminal.truncate()
    (run.parent / "run2").write_text(RUN)
    assert main(["trec", "-m", "map", str(qrels), str(run), str(run) + "2"]) == 0
    assert "runs:" in terminal.getvalue() and "/2 " in terminal.getvalue()
    terminal.seek(0)
    terminal.truncate()
    assert main(["trec", "--no-progress", "-m", "map", str(qrels), str(run)]) == 0
    assert main(["trec", "--no-progress", "-m", "map", str(qrels), str(run),
                 str(run) + "2"]) == 0
    assert terminal.getvalue() == ""
    assert main(["trec", "-m", "map", str(qrels), str(run)]) == 0
    assert "run:" in terminal.getvalue()


def test_without_tqdm_no_bar_and_no_error(files, terminal, monkeypatch):
    qrels, run = files
    terminal = terminal()
    monkeypatch.setitem(sys.modules, "tqdm", None)  # import tqdm raises ImportError
    want = qafast.evaluate(str(qrels), str(run), "map", progress=False)
    assert qafast.evaluate(str(qrels), str(run), "map", progress=True) == want
    assert qafast.evaluate_runs(qrels, [run], "map", progress=True)[str(run)] == want
    assert terminal.getvalue() == ""


def test_progress_takes_only_none_true_or_false(files):
    qrels, run = files
    with pytest.raises(TypeError, match="progress must be None, True or False"):
        qafast.evaluate(str(qrels), str(run), "map", progress="yes")
