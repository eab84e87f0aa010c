"""Hostile TREC files: a line longer than ``qafast.io.trec.MAX_LINE_BYTES`` is a
TrecFormatError naming the file and the line, whatever reads it (qrels and run readers, text
and gzip, paths, bytes, file objects and pipes, one thread or several, the numpy path and
the command line's small-file path), and no reader holds more than the bound and a block of
such a line, or rescans it: a gzip file of gigabytes of one line and a plain file of a
gigabyte without a line break are refused at once, under a cap on the address space."""

from __future__ import annotations

import gzip
import io
import os
import resource
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

import qafast
from qafast.io import TrecFormatError, read_trec_qrels, read_trec_run
from qafast.io.trec import MAX_LINE_BYTES

ROOT = Path(qafast.__file__).resolve().parents[1]
RUN_LINE = b"q1 Q0 d%d %d 1.5 r\n"
QRELS_LINE = b"q1 0 d%d 1\n"


def lines(template: bytes, n: int, start: int = 0) -> bytes:
    return b"".join(template % ((i, i) if template.count(b"%d") == 2 else (i,))
                    for i in range(start, start + n))


def padded(line: bytes, size: int) -> bytes:
    """``line`` (ending in a line break) made ``size`` bytes long before its break, with
    a field after the last one read (ignored)."""
    body = line.rstrip(b"\n") + b" "
    return body + b"x" * (size - len(body)) + b"\n"


def text_with(template: bytes, long: bytes, before: int = 2, after: int = 3) -> bytes:
    """``before`` good lines, ``long``, then ``after`` good lines: the long one is line
    ``before + 1``."""
    return lines(template, before) + long + lines(template, after, start=before)


def gz(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=1)


class ReadOnly:
    """A file object with read() alone (no readinto)."""

    def __init__(self, data: bytes) -> None:
        self._f = io.BytesIO(data)

    def read(self, n: int = -1) -> bytes:
        return self._f.read(n)


def sources(tmp: Path, data: bytes):
    """(name, source) of ``data`` in every form a TREC reader takes, and the ``path`` a
    message names."""
    plain = tmp / "plain.txt"
    plain.write_bytes(data)
    packed = tmp / "packed.gz"
    packed.write_bytes(gz(data))
    sniffed = tmp / "sniffed"  # gzip data without the suffix: told by its magic bytes
    sniffed.write_bytes(gz(data))
    return [
        ("path", str(plain), str(plain)),
        ("gz", str(packed), str(packed)),
        ("sniffed-gz", str(sniffed), str(sniffed)),
        ("bytes", data, "<bytes>"),
        ("gz-bytes", gz(data), "<bytes>"),
        ("file", io.BytesIO(data), "<file>"),
        ("read-only", ReadOnly(data), "<file>"),
        ("opened", open(plain, "rb"), str(plain)),  # closed by the test
    ]


@pytest.mark.parametrize("is_run", [True, False], ids=["run", "qrels"])
@pytest.mark.parametrize("workers", [1, 2])
def test_a_line_past_the_bound_names_its_file_and_line(tmp_path, is_run, workers):
    template = RUN_LINE if is_run else QRELS_LINE
    data = text_with(template, padded(template % ((7, 7) if is_run else (7,)),
                                      MAX_LINE_BYTES + 1))
    read = read_trec_run if is_run else read_trec_qrels
    from_file = qafast.Run.from_file if is_run else qafast.Qrels.from_file
    for name, source, shown in sources(tmp_path, data):
        for call in (lambda s: read(s, workers=workers),
                     lambda s: read(s, workers=workers, intern_docs=False),
                     lambda s: from_file(s, workers=workers)):
            if hasattr(source, "seek"):
                source.seek(0)
            elif isinstance(source, ReadOnly):
                source._f.seek(0)
            with pytest.raises(TrecFormatError) as e:
                call(source)
            assert (e.value.path, e.value.line) == (shown, 3), name
            assert f"longer than {MAX_LINE_BYTES} bytes" in e.value.message, name
        if hasattr(source, "close"):
            source.close()


@pytest.mark.parametrize("is_run", [True, False], ids=["run", "qrels"])
def test_a_line_at_the_bound_is_read(is_run):
    template = RUN_LINE if is_run else QRELS_LINE
    at_bound = padded(template % ((7, 7) if is_run else (7,)), MAX_LINE_BYTES)
    comment = b"#" + b"c" * (MAX_LINE_BYTES - 1) + b"\n"
    read = read_trec_run if is_run else read_trec_qrels
    for data, rows in ((text_with(template, at_bound), 6), (text_with(template, comment), 5),
                       (text_with(template, at_bound, after=0).rstrip(b"\n"), 3)):
        for source in (data, gz(data), io.BytesIO(data), ReadOnly(data)):
            assert len(read(source)) == rows
            assert len(read(gz(data), workers=2, intern_docs=False)) == rows
    # a comment and a blank line past the bound are refused too: nothing is that long
    for long in (b"#" + b"c" * MAX_LINE_BYTES + b"\n", b" " * (MAX_LINE_BYTES + 1) + b"\n"):
        with pytest.raises(TrecFormatError, match="line 3: a line longer than"):
            read(text_with(template, long))


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("where", ["path", "gz", "bytes", "file"])
def test_evaluate_refuses_a_long_run_line(tmp_path, monkeypatch, workers, where):
    # a long run: the endless line after a megabyte and a half of good lines, so that it
    # starts in a later block; with 2 workers a plain file is cut into several ranges
    from qafast import _runfile

    monkeypatch.setattr(_runfile, "_RANGE_MIN_BYTES", 1 << 18)
    monkeypatch.setattr(_runfile, "_TAIL_RANGE_BYTES", 1 << 18)
    monkeypatch.setattr(_runfile, "_SEGMENT_BYTES", 1 << 18)
    n = 60_000
    good = b"".join(b"q%d Q0 d%d %d 1.5 r\n" % (i // 50, i, i % 50) for i in range(n))
    data = good + b"q9999 Q0 " + b"a" * (3 * MAX_LINE_BYTES) + b"\n" + good[:100]
    qrels = qafast.Qrels.from_file(b"q1 0 d51 1\nq2 0 d100 1\n")
    source = {"path": str(tmp_path / "run"), "gz": str(tmp_path / "run.gz"),
              "bytes": data, "file": io.BytesIO(data)}[where]
    if where == "path":
        Path(source).write_bytes(data)
    elif where == "gz":
        Path(source).write_bytes(gz(data))
    with pytest.raises(TrecFormatError) as e:
        qafast.evaluate(qrels, source, "map", workers=workers)
    assert e.value.line == n + 1
    assert "a line longer than" in e.value.message


def test_long_line_reaches_the_command_line(tmp_path):
    qrels = tmp_path / "qrels"
    qrels.write_bytes(b"q1 0 d1 1\n")
    run = tmp_path / "run"
    run.write_bytes(text_with(RUN_LINE, b"q1 Q0 " + b"a" * MAX_LINE_BYTES + b"\n"))
    for args, stdin in (([str(qrels), str(run)], None),
                        ([str(qrels), "-"], run.read_bytes()),
                        ([str(qrels), "-"], gz(run.read_bytes())),
                        ([str(run), str(run)], None)):
        r = _cli("trec", "-m", "map", *args, stdin=stdin)
        assert r.returncode == 2, r.stderr
        assert b", line 3: a line longer than" in r.stderr, r.stderr
        assert b"Traceback" not in r.stderr


# ------------------------------------------------------------------------------------------
# an endless line: bounded memory, linear time


def _cli(*args, stdin: bytes | None = None, limit: int | None = None, timeout: float = 120):
    """``python -m qafast.cli`` under test, with its address space capped at ``limit``."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1",
               OMP_NUM_THREADS="1")

    def cap():
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return subprocess.run([sys.executable, "-m", "qafast.cli", *args], input=stdin,
                          capture_output=True, env=env, timeout=timeout, check=False,
                          preexec_fn=cap)


def _endless_gz(path: Path, gib: int) -> None:
    """A gzip file of ``gib`` GiB of ``a`` (no line break) in about 3 MB: one 64 MiB member,
    written again and again (gzip data may hold several members, read as one text)."""
    member = zlib.compressobj(6, zlib.DEFLATED, 31)
    block = b"a" * (1 << 20)
    data = b"".join(member.compress(block) for _ in range(64)) + member.flush()
    with open(path, "wb") as f:
        f.writelines(data for _ in range(16 * gib))


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS as Linux counts it")
def test_endless_gzip_line_in_bounded_memory(tmp_path):
    # 3 GiB of one line, read with the address space capped at 1.5 GB: the qrels and the
    # run, as files (the small-file path looks first: the .gz is under 6 MB), piped to
    # stdin, and through evaluate
    endless = tmp_path / "endless.gz"
    _endless_gz(endless, 3)
    assert endless.stat().st_size < 6 << 20
    good = tmp_path / "good"
    good.write_bytes(b"q1 0 d1 1\n")
    limit = 1500 << 20
    for args, stdin in (([str(good), str(endless)], None),
                        ([str(endless), str(good)], None),
                        ([str(good), "-"], endless.read_bytes()),
                        (["-w", "1", str(good), str(endless)], None)):
        r = _cli("trec", "-m", "map", *args, stdin=stdin, limit=limit)
        assert r.returncode == 2, r.stderr[-2000:]
        assert b", line 1: a line longer than 1048576 bytes" in r.stderr, r.stderr[-2000:]
        assert b"Traceback" not in r.stderr
    code = ("import sys, qafast\n"
            "for call in (lambda: qafast.Run.from_file(sys.argv[1]),\n"
            "             lambda: qafast.Qrels.from_file(sys.argv[1], workers=2),\n"
            "             lambda: qafast.evaluate(b'q1 0 d1 1\\n', sys.argv[1], 'map'),\n"
            "             lambda: qafast.evaluate({'q1': {'d1': 1}}, sys.argv[1], 'map',\n"
            "                                     workers=2)):\n"
            "    try:\n"
            "        call()\n"
            "    except qafast.io.TrecFormatError as e:\n"
            "        assert e.line == 1 and 'longer than' in e.message, e\n"
            "    else:\n"
            "        raise AssertionError('read')\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1")
    r = subprocess.run([sys.executable, "-c", code, str(endless)], capture_output=True,
                       env=env, timeout=120, check=False,
                       preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS,
                                                             (limit, limit)))
    assert r.returncode == 0, r.stderr[-2000:]


def test_endless_plain_line_is_read_once(tmp_path):
    # a gigabyte without a line break (a sparse file: nothing is written to disk), after a
    # few good lines: the run cut into ranges for two threads (or dask's tasks), the qrels,
    # one thread. Rescanning it per block took hours; reading it once, a fraction of a
    # second (each call here must end within the subprocess's timeout)
    endless, other = tmp_path / "endless", tmp_path / "other"
    for path in (endless, other):
        with open(path, "wb") as f:
            f.write(lines(RUN_LINE, 3) + b"q1 Q0 ")
            f.truncate(1 << 30)
    good = tmp_path / "good"
    good.write_bytes(b"q1 0 d1 1\n")
    for args in (["-w", "2", str(good), str(endless)], ["-w", "1", str(good), str(endless)],
                 [str(endless), str(good)], ["-w", "2", str(good), str(endless), str(other)]):
        r = _cli("trec", "-m", "map", *args, timeout=60)
        assert r.returncode == 2, r.stderr[-2000:]
        assert b", line 4: a line longer than" in r.stderr, r.stderr
    code = ("import sys\n"
            "from qafast._runfile import task_ranges\n"
            "print(task_ranges(sys.argv[1], 32 << 20))\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    r = subprocess.run([sys.executable, "-c", code, str(endless)], capture_output=True,
                       env=env, timeout=60, check=False)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip() == f"[(0, {1 << 30})]".encode()


# ------------------------------------------------------------------------------------------
# out of memory: a MemoryError that says which file and what allocation


@pytest.mark.parametrize("is_run", [True, False], ids=["run", "qrels"])
def test_memory_error_names_the_file_and_the_allocation(tmp_path, monkeypatch, is_run):
    import numpy as np

    from qafast import _runfile
    from qafast.io import trec

    path = tmp_path / "some.run"
    path.write_bytes(lines(RUN_LINE if is_run else QRELS_LINE, 10))
    kind = "run" if is_run else "qrels"
    from_file = qafast.Run.from_file if is_run else qafast.Qrels.from_file

    def numpy_fails(*args, **kwargs):
        np.empty(1 << 62, dtype=np.uint8)  # numpy's own MemoryError, with its words

    def bare(*args, **kwargs):
        raise MemoryError

    with monkeypatch.context() as m:
        m.setattr(trec, "parse_blocks", numpy_fails)
        with pytest.raises(MemoryError) as e:
            from_file(str(path))
        assert str(e.value).startswith(f"{path}: out of memory reading it as a TREC {kind}: "
                                       "Unable to allocate 4.00 EiB"), e.value
    with monkeypatch.context() as m:
        m.setattr(trec, "parse_blocks", bare)
        for source, name in ((str(path), str(path)), (path.read_bytes(), "<bytes>")):
            with pytest.raises(MemoryError, match=f"^{name}: out of memory reading it as a "
                               f"TREC {kind}: an allocation failed$"):
                from_file(source)
    import qafast._ranked as ranked

    with monkeypatch.context() as m:
        m.setattr(ranked, "from_trec_columns", bare)
        with pytest.raises(MemoryError, match=f"^{path}: out of memory building a "
                           f"{'Run' if is_run else 'Qrels'} of its 10 lines: an allocation "
                           "failed$"):
            from_file(str(path))
    if is_run:  # evaluate streams a run file through a parser of its own
        with monkeypatch.context() as m:
            m.setattr(_runfile, "_stream", bare)
            with pytest.raises(MemoryError, match=f"^{path}: out of memory evaluating it as "
                               "a TREC run: an allocation failed$"):
                qafast.evaluate(b"q1 0 d1 1\n", str(path), "map")


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS as Linux counts it")
def test_memory_error_under_a_memory_cap():
    # a run that never ends, read whole under a cap of 192 MB more than the interpreter
    # holds: the parser's arrays or a block of text cannot grow, and the MemoryError says
    # which file was read and what failed
    code = r"""
import re, resource, qafast

class Endless:
    name = "endless.run"
    def __init__(self):
        self.text = b"".join(b"q%d Q0 d%d 1 1.5 r\n" % (i % 1000, i) for i in range(50000))
        self.pos = 0
    def readinto(self, b):
        n = min(len(b), len(self.text) - self.pos)
        b[:n] = self.text[self.pos:self.pos + n]
        self.pos = (self.pos + n) % len(self.text)
        return n
    def read(self, n):
        b = bytearray(n)
        return bytes(b[:self.readinto(memoryview(b))])

vm = int(re.search(r"VmSize:\s+(\d+) kB", open("/proc/self/status").read()).group(1))
cap = vm * 1024 + (192 << 20)
resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
try:
    qafast.Run.from_file(Endless())
except MemoryError as e:
    print(e)
"""
    env = dict(os.environ, PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, env=env,
                       timeout=120, check=False)
    assert r.returncode == 0, r.stderr[-2000:]
    message = r.stdout.decode().strip()
    assert message.startswith("endless.run: out of memory reading it as a TREC run: "), message
    assert message.split(": ", 2)[2] not in ("", "an allocation failed"), message
