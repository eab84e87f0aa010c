"""Ctrl-C: every long call stops soon after SIGINT, prints no partial result, and leaves no
thread or temporary file behind.

Each test runs a real process (a ``python -c`` script calling the API, or ``python -m
qafast``) on input made here that keeps it busy for as long as the test needs (resamples
without end, a pipe whose writer stalls or never stops, a file large enough to be read by
two threads), sends SIGINT once the work is under way, and checks how the process ended:
the API raises ``KeyboardInterrupt`` with no thread of qafast left; the command writes one
line on stderr and dies by SIGINT, as a shell expects of an interrupted program. The target
is 1 s from the signal to the end; the bound asserted, ``BOUND``, is a liveness bound for a
loaded 2-core box, not a speed test.
"""

import os
import signal
import stat
import subprocess
import sys
import threading
import time

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="SIGINT and /proc, as Linux has them")

#: seconds from SIGINT to the end of the process (or, on a Dask cluster, to the interrupt)
BOUND = 5.0
#: seconds a process is given to start and reach its work
START = 120.0

# a grouped run without end, or ``stall`` queries and then nothing (the writer keeps the pipe
# open, as a program that computes its next result would)
WRITER = """
import sys, time
lines = "".join(f"QID Q0 d{d} {d + 1} {100 - d}.5 w\\n" for d in range(100))
out = sys.stdout.buffer
stall = int(sys.argv[1])
q = 0
while not stall or q < stall:
    out.write("".join(lines.replace("QID", f"q{q + k}") for k in range(100)).encode())
    out.flush()
    q += 100
time.sleep(600)
"""

# after the interrupt: the threads still running, then the interrupt goes on as it came
THREADS = """
except KeyboardInterrupt:
    import threading
    print("threads:", *[t.name for t in threading.enumerate()], file=sys.stderr, flush=True)
    raise
"""


def _qrels(path, queries):
    with open(path, "w") as f:
        f.writelines(f"q{q} 0 d{d} {d % 3}\n" for q in range(queries) for d in range(0, 100, 10))
    return path


@pytest.fixture(scope="module")
def big_run(tmp_path_factory):
    """(qrels, run): a grouped run of 128 MB, which two threads read in ranges."""
    where = tmp_path_factory.mktemp("big")
    block = "".join(f"QID Q0 d{d} {d + 1} {100 - d}.5 w\n" for d in range(100))
    queries = -(-(128 << 20) // len(block))
    run = where / "run"
    with open(run, "w") as f:
        f.writelines("".join(block.replace("QID", f"q{q}") for q in range(lo, lo + 1000))
                     for lo in range(0, queries, 1000))
    yield _qrels(where / "qrels", queries), run
    run.unlink()


@pytest.fixture
def tmpdir_env(tmp_path):
    """The environment of a child whose temporary files go to a fresh folder, checked empty
    at the end."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = dict(os.environ, TMPDIR=str(temp))
    env.pop("PYTHONFAULTHANDLER", None)
    yield env
    assert not os.listdir(temp), f"temporary files left: {os.listdir(temp)}"


class Child:
    """A process whose stdout and stderr are read as they come."""

    def __init__(self, args, env, stdin=None):
        self.proc = subprocess.Popen(args, stdin=stdin, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=env)
        self.out: list[bytes] = []
        self.err: list[bytes] = []
        self._readers = [threading.Thread(target=self._read, args=(s, into), daemon=True)
                         for s, into in ((self.proc.stdout, self.out),
                                         (self.proc.stderr, self.err))]
        for t in self._readers:
            t.start()

    @staticmethod
    def _read(stream, into):
        for line in iter(stream.readline, b""):
            into.append(line)

    @property
    def stderr(self) -> str:
        return b"".join(self.err).decode("utf-8", "replace")

    @property
    def stdout(self) -> str:
        return b"".join(self.out).decode("utf-8", "replace")

    def wait_until(self, ready, what: str) -> None:
        end = time.monotonic() + START
        while not ready():
            if self.proc.poll() is not None:
                pytest.fail(f"the process ended before {what}: status {self.proc.returncode}\n"
                            f"{self.stderr}")
            if time.monotonic() > end:
                self.proc.kill()
                pytest.fail(f"no {what} after {START} s\n{self.stderr}")
            time.sleep(0.002)

    def says(self, text: str) -> bool:
        return text in self.stderr

    def has_open(self, path, count: int = 1) -> bool:
        """Whether the process holds ``path`` open ``count`` times (a thread each)."""
        target = os.path.realpath(path)
        fds = f"/proc/{self.proc.pid}/fd"
        held = 0
        try:
            for fd in os.listdir(fds):
                try:
                    held += os.readlink(f"{fds}/{fd}") == target
                except OSError:  # closed meanwhile
                    pass
        except OSError:
            return False
        return held >= count

    def waits_on_a_pipe(self) -> bool:
        """Whether the main thread sleeps in a read of a pipe. A SIGINT sent between the
        pipe's opening and that read is handled before the read starts, which then waits for
        data that never comes: CPython looks at signals again only when a call is
        interrupted, so a signal in that window is lost (the process hangs, as it would for
        a user's Ctrl-C pressed at that instant)."""
        try:
            with open(f"/proc/{self.proc.pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
            with open(f"/proc/{self.proc.pid}/wchan") as f:
                wchan = f.read()
        except OSError:
            return False
        if wchan.strip() in ("", "0"):  # a kernel hiding wait channels: asleep is the most known
            return state == "S"
        return state == "S" and "pipe" in wchan

    def has_kernels(self) -> bool:
        """Whether qafast's compiled module is loaded: the command is past its start."""
        try:
            with open(f"/proc/{self.proc.pid}/maps") as f:
                return "qafast/_kernels" in f.read()
        except OSError:
            return False

    def interrupt(self) -> float:
        """Send SIGINT; the seconds until the process ended."""
        assert self.proc.poll() is None, "the process ended before it was interrupted"
        self.proc.send_signal(signal.SIGINT)
        start = time.monotonic()
        try:
            self.proc.wait(timeout=2 * BOUND)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            pytest.fail(f"still running {2 * BOUND} s after SIGINT\n{self.stderr}")
        took = time.monotonic() - start
        for t in self._readers:
            t.join(timeout=10)
        return took


def _check_command(child, took):
    """``python -m qafast`` after SIGINT: one line, no result, death by SIGINT, in time."""
    assert child.proc.returncode == -signal.SIGINT, child.stderr
    assert child.stderr == "qafast: interrupted\n"
    assert child.stdout == ""
    assert took < BOUND, f"{took:.1f} s from SIGINT to the end"


def _check_api(child, took):
    """A script after SIGINT: KeyboardInterrupt out of the call, no thread of qafast, no
    result, in time."""
    assert child.proc.returncode == -signal.SIGINT, child.stderr
    assert child.stderr.rstrip().endswith("KeyboardInterrupt"), child.stderr
    threads = [line for line in child.stderr.splitlines() if line.startswith("threads:")]
    assert threads == ["threads: MainThread"], child.stderr
    assert child.stdout == ""
    assert took < BOUND, f"{took:.1f} s from SIGINT to the end"


def _script(body: str) -> list[str]:
    return [sys.executable, "-c", "import sys\nimport qafast\n" + body]


@pytest.mark.parametrize("workers", [1, 2])
def test_compare_stops_in_the_resampling(workers, tmpdir_env):
    # 10**9 resamples: hours of work, stopped within a piece of a few milliseconds
    body = f"""
qrels = {{f"q{{q}}": {{f"d{{d}}": d % 3 for d in range(5)}} for q in range(1000)}}
runs = {{name: {{q: {{f"d{{d}}": (d * k) % 7 + 0.5 for d in range(20)}} for q in qrels}}
        for k, name in enumerate(["a", "b", "c"], 1)}}
print("ready", file=sys.stderr, flush=True)
try:
    c = qafast.compare(qrels, runs, ["map", "P@5"], test="fisher", n_resamples=10**9,
                       baseline="a", workers={workers})
    print(c)
{THREADS}"""
    child = Child(_script(body), tmpdir_env)
    child.wait_until(lambda: child.says("ready"), "the call")
    time.sleep(0.5)  # the runs are measured in milliseconds: this is the resampling
    _check_api(child, child.interrupt())


def test_evaluate_stops_while_threads_read_a_file(big_run, tmpdir_env):
    qrels, run = big_run
    body = f"""
qrels = qafast.Qrels.from_file({str(qrels)!r})
print("ready", file=sys.stderr, flush=True)
try:
    print(qafast.evaluate(qrels, {str(run)!r}, ["map", "ndcg@10"], workers=2))
{THREADS}"""
    child = Child(_script(body), tmpdir_env)
    child.wait_until(lambda: child.says("ready") and child.has_open(run, _readers()),
                     "the run's ranges being read")
    _check_api(child, child.interrupt())


def _readers() -> int:
    """The threads reading a file's ranges at once, with workers 2 or -1."""
    return min(2, len(os.sched_getaffinity(0)))


def test_trec_stops_while_reading_a_file(big_run, tmpdir_env):
    qrels, run = big_run
    child = Child([sys.executable, "-m", "qafast", "trec", "-m", "map", str(qrels), str(run)],
                  tmpdir_env)
    child.wait_until(lambda: child.has_open(run, _readers()), "the run's ranges being read")
    _check_command(child, child.interrupt())


@pytest.mark.parametrize("writer", ["flowing", "stalled"])
@pytest.mark.parametrize("workers", ["1", "-1"])
def test_trec_stops_while_reading_a_pipe(writer, workers, tmp_path, tmpdir_env):
    # a stalled writer left a thread blocked in a read of the pipe, and the program waited
    # for it; a flowing one keeps the parser busy
    qrels = _qrels(tmp_path / "qrels", 1000)
    feed = subprocess.Popen([sys.executable, "-c", WRITER, "0" if writer == "flowing" else "300"],
                            stdout=subprocess.PIPE)
    try:
        child = Child([sys.executable, "-m", "qafast", "trec", "-w", workers, "-m", "map",
                       str(qrels), "-"], tmpdir_env, stdin=feed.stdout)
        feed.stdout.close()  # the child's now
        child.wait_until(child.has_kernels, "qafast's start")
        time.sleep(0.5)  # reading the pipe, or waiting for it
        _check_command(child, child.interrupt())
    finally:
        feed.kill()
        feed.wait()


def test_compare_command_stops(tmp_path, tmpdir_env):
    qrels = _qrels(tmp_path / "qrels", 300)
    runs = []
    for k in (1, 2):
        path = tmp_path / f"run{k}"
        path.write_text("".join(f"q{q} Q0 d{d} {d + 1} {(d * k) % 7 + 0.5} r{k}\n"
                                for q in range(300) for d in range(20)))
        runs.append(str(path))
    child = Child([sys.executable, "-m", "qafast", "compare", str(qrels), *runs, "--test",
                   "fisher", "--resamples", str(10**9)], tmpdir_env)
    child.wait_until(child.has_kernels, "qafast's start")
    time.sleep(0.5)
    _check_command(child, child.interrupt())


@pytest.fixture
def stalled_fifo(tmp_path):
    """A named pipe holding the start of a SQuAD dataset, whose writer never goes on."""
    fifo = tmp_path / "data.json"
    os.mkfifo(fifo)
    # read-write: opening does not wait for a reader, and the pipe never ends
    fd = os.open(fifo, os.O_RDWR)
    os.write(fd, b'{"version": "1.1", "data": [{"paragraphs": [')
    yield fifo
    os.close(fd)


def test_squad_stops_while_reading(stalled_fifo, tmp_path, tmpdir_env):
    preds = tmp_path / "pred.json"
    preds.write_text("{}")
    body = f"""
print("ready", file=sys.stderr, flush=True)
try:
    print(qafast.squad({str(stalled_fifo)!r}, {str(preds)!r}))
{THREADS}"""
    child = Child(_script(body), tmpdir_env)
    child.wait_until(lambda: (child.says("ready") and child.has_open(stalled_fifo)
                              and child.waits_on_a_pipe()), "the dataset being read")
    _check_api(child, child.interrupt())


def test_squad_command_stops_while_reading(stalled_fifo, tmp_path, tmpdir_env):
    preds = tmp_path / "pred.json"
    preds.write_text("{}")
    child = Child([sys.executable, "-m", "qafast", "squad", str(stalled_fifo), str(preds)],
                  tmpdir_env)
    child.wait_until(lambda: child.has_open(stalled_fifo) and child.waits_on_a_pipe(),
                     "the dataset being read")
    _check_command(child, child.interrupt())


def test_the_command_catches_the_interrupt_at_the_top_only(monkeypatch):
    # qafast.cli.main called from Python lets the interrupt go on; only the program's entry
    # points (qafast._program.main, python -m qafast.cli) end the process on it
    from qafast import cli

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_run_trec", interrupted)
    with pytest.raises(KeyboardInterrupt):
        cli.main(["trec", "qrels", "run"])


@pytest.mark.slow
def test_dask_client_stops_on_a_cluster(tmp_path):
    # the workers are Dask's processes: the call raises KeyboardInterrupt on the client at
    # once; the cluster then ends its tasks (here, once the pipe they read ends)
    pytest.importorskip("distributed")
    pytest.importorskip("pandas")
    fifo = tmp_path / "run"
    os.mkfifo(fifo)
    fd = os.open(fifo, os.O_RDWR)
    os.write(fd, b"q0 Q0 d0 1 1.0 r\n" * 1000)
    body = f"""
import time
import distributed
import qafast.dask
if __name__ == "__main__":
    cluster = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                       dashboard_address=None)
    client = distributed.Client(cluster)
    print("ready", file=sys.stderr, flush=True)
    try:
        print(qafast.dask.evaluate({{"q0": {{"d0": 1}}}}, {str(fifo)!r}, ["map"]))
    except KeyboardInterrupt:
        print("caught", file=sys.stderr, flush=True)
        sys.stdin.read()  # until the test has let the workers go
        client.close()
        cluster.close()
        raise
"""
    script = tmp_path / "cluster.py"  # the workers' processes import the main module
    script.write_text("import sys\nimport qafast\n" + body)
    # Dask's scratch space is its own: the folder is not checked here
    env = dict(os.environ, TMPDIR=str(tmp_path))
    child = Child([sys.executable, str(script)], env, stdin=subprocess.PIPE)
    try:
        child.wait_until(lambda: child.says("ready") and _reads_pipe(fifo), "the tasks")
        child.proc.send_signal(signal.SIGINT)
        start = time.monotonic()
        child.wait_until(lambda: child.says("caught"), "the interrupt on the client")
        took = time.monotonic() - start
    finally:
        os.close(fd)  # the pipe ends: the workers' tasks end
        child.proc.stdin.close()
    child.proc.wait(timeout=120)
    assert took < BOUND, f"{took:.1f} s from SIGINT to KeyboardInterrupt"
    assert child.proc.returncode == -signal.SIGINT, child.stderr
    assert child.stdout == ""


def _reads_pipe(fifo) -> bool:
    """Whether some process other than this one has ``fifo`` open (a Dask worker)."""
    target = str(fifo)
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                if os.readlink(f"/proc/{pid}/fd/{fd}") == target:
                    return True
        except OSError:
            continue
    return False


def test_a_pipe_is_read_polled_and_a_file_is_not(tmp_path):
    # the reading of stdin and of named pipes waits in steps (io.trec._PipeReader); regular
    # files are read as they were
    from qafast.io import trec

    path = tmp_path / "f"
    path.write_bytes(b"x")
    with open(path, "rb", buffering=0) as f:
        assert trec._polled(f) is f
    r, w = os.pipe()
    try:
        with os.fdopen(r, "rb") as f:
            os.write(w, b"abc")
            os.close(w)
            w = -1
            assert stat.S_ISFIFO(os.fstat(f.fileno()).st_mode)
            assert f.peek(1)  # bytes in the buffer are handed over, then the pipe's
            polled = trec._polled(f)
            assert type(polled) is trec._PipeReader
            assert polled.read() == b"abc"
    finally:
        if w >= 0:
            os.close(w)


@pytest.mark.parametrize("workers", [1, 3])
def test_pieces_change_no_number(workers, monkeypatch):
    # the kernels are called on pieces so that an interrupt is seen between two; pieces of
    # one query or one resample give every value and p-value of one call
    import numpy as np

    import qafast
    from qafast import _engine, comparison

    rng = np.random.default_rng(5)
    qrels = {f"q{q}": {f"d{d}": int(rng.integers(0, 3)) for d in range(8)} for q in range(40)}
    runs = {name: {q: {f"d{d}": float(rng.integers(0, 5)) for d in range(int(rng.integers(1, 15)))}
                   for q in qrels} for name in "abc"}
    measures = ["map", "ndcg@10", "P@5", "recall@10", "bpref", "recip_rank"]

    def everything():
        fisher = qafast.compare(qrels, runs, measures, test="fisher", n_resamples=500, seed=2,
                                workers=workers)
        boot = qafast.compare(qrels, runs, measures, test="bootstrap", n_resamples=300,
                              seed=2, ci="bootstrap", workers=workers)
        return (qafast.evaluate(qrels, runs["b"], measures, per_query=True, workers=workers),
                fisher.p_value.tobytes(), boot.p_value.tobytes(), boot.ci_low.tobytes(),
                boot.ci_high.tobytes())

    whole = everything()
    monkeypatch.setattr(_engine, "_PIECE", 5)
    monkeypatch.setattr(comparison, "_PIECE", 1)
    assert everything() == whole


def test_cuts_cover_the_range_in_order():
    import numpy as np

    from qafast._threads import cuts

    rng = np.random.default_rng(3)
    for _ in range(200):
        n = int(rng.integers(0, 30))
        weights = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(rng.integers(1, 20, n), out=weights[1:])
        lo = int(rng.integers(0, n + 1))
        hi = int(rng.integers(lo, n + 1))
        step = int(rng.integers(1, 40))
        pieces = cuts(weights, lo, hi, step)
        assert [a for a, _ in pieces] + [hi] == [lo] + [b for _, b in pieces] or (
            lo == hi and pieces == [])
        assert all(b > a for a, b in pieces)
        # a piece is under the step but for its last item
        assert all(weights[b - 1] - weights[a] < step for a, b in pieces)


def test_grouping_by_counting_is_numpys_stable_sort():
    # rows are grouped by query with a counting kernel, not np.argsort (seconds on a large
    # scattered run, with no point where Ctrl-C is seen); it is the same permutation
    import numpy as np
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from qafast import _kernels

    @settings(max_examples=300, deadline=None)
    @given(st.integers(1, 12).flatmap(
        lambda nq: st.tuples(st.just(nq), st.lists(st.integers(0, nq - 1), max_size=60))))
    def check(case):
        nq, rows = case
        q = np.array(rows, dtype=np.int32)
        offsets = np.empty(nq + 1, dtype=np.int64)
        _kernels.group_offsets(q, offsets)
        order = np.empty(len(q), dtype=np.int64)
        _kernels.group_order(q, offsets, order)
        assert order.tolist() == np.argsort(q, kind="stable").tolist()

    check()


@pytest.mark.parametrize("index, offsets, message", [
    ([1, 0, 1, 0], [0, 1, 3], "not 0 to 4"),    # fewer rows than the index has
    ([1, 0, 1, 0], [1, 4], "not 0 to 4"),
    ([1, 0, 1, 0], [0, 3, 2, 4], "decrease"),
    ([1, 1, 0, 1], [0, 3, 4], "does not fit"),  # query 1 has 3 rows, not 1
    ([1, 5, 0, 1], [0, 2, 4], "does not fit"),  # an index past the queries
])
def test_grouping_refuses_offsets_that_do_not_match(index, offsets, message):
    # the kernel writes each row where the offsets say; offsets that lie are refused before
    # a write lands past the output
    import numpy as np

    from qafast import _kernels

    with pytest.raises(ValueError, match=message):
        _kernels.group_order(np.array(index, dtype=np.int32), np.array(offsets, dtype=np.int64),
                             np.empty(4, dtype=np.int64))


def test_an_interrupt_while_submitting_stops_what_was_submitted():
    """Ctrl-C inside ``pool.submit`` (a worker thread starting): the parts already submitted
    are told to stop and waited for before the interrupt goes on."""
    from concurrent.futures import ThreadPoolExecutor

    from qafast._threads import submit_all

    cancel = threading.Event()
    started = threading.Event()

    def part(k):
        started.set()
        cancel.wait(10)
        return k

    class InterruptedPool(ThreadPoolExecutor):
        def submit(self, fn, /, *args, **kwargs):
            if started.wait(0) or (args and args[0] > 0 and started.wait(10)):
                raise KeyboardInterrupt  # once the first part runs
            return super().submit(fn, *args, **kwargs)

    with InterruptedPool(2) as pool:
        with pytest.raises(KeyboardInterrupt):
            submit_all(pool, part, [(0,), (1,)], cancel)
        assert cancel.is_set()


def test_closing_the_pools_waits_for_a_worker_the_pool_did_not_note():
    """A worker started but not yet noted by its pool when an interrupt came: closing the
    pools still waits for it, so no thread of qafast outlives the interrupted call."""
    from qafast._threads import close_pools

    stray = threading.Thread(target=time.sleep, args=(0.2,), name="qafast_stray")
    stray.start()
    close_pools()
    assert not stray.is_alive()
