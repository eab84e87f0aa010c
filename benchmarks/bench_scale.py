#!/usr/bin/env python
"""Benchmarks at scale: TREC run files of 20 to 100 million lines, many runs in one call.

    python benchmarks/bench_scale.py            # everything, 100M lines included (~15 min)
    python benchmarks/bench_scale.py --quick    # a tenth of the sizes, no 100M case (~1 min)

Not a test: one run prints one table, with the ratios the targets are stated in. Every
contender runs in a child process started through ``/usr/bin/time``, which reports the
child's own peak resident memory (a child forked from this process would inherit its
high-water mark); the wall time is this process's clock around the child. ``wc -l`` and
qafast's rows 1 and 5 take the best time (and the highest peak) of 3 runs; pytrec_eval's
25-second row runs once. The page cache is warmed (each file read once) before timing, so
the floor is ``wc -l`` on the same file.

Data (generated with numpy into a temporary directory, deleted at the end; ``--keep`` keeps
it): a grouped TREC run of 20,000 queries x 1,000 documents (20M lines, ``--quick``: 2,000
queries), ranked by score with 4-decimal scores; graded qrels, 50 judgments per query
(grades 0-3), about half of them on retrieved documents. The run doubled (the same queries
with 2,000 documents each, every judged document retrieved) for the memory check; 8 copies
of the run for the many-runs rows (copies, not links, so each is read from its own pages);
and the 100M-line case of 1,000,000 queries x 100 documents with 6 judgments per query (6M
qrels lines).

Rows:

1. ``qafast trec`` with its default measures (trec_eval's ``official`` set) against
   pytrec_eval's ``parse_qrel`` + ``parse_run`` + ``RelevanceEvaluator(official)``:
   targets >= 20x faster and >= 10x less peak memory.
2. ``qafast trec`` on the doubled run: peak memory within 20% of row 1's (it streams).
3. 8 runs in one call, ``qafast.evaluate_runs(..., workers=2)`` (threads), against one
   ``qafast.evaluate(..., workers=1)`` after another in one process: target >= 1.6x; also
   the same 8 runs spread over 2 forked processes, to compare threads with processes.
4. Arrow/Parquet and Dask: the run as Parquet (string ids, row groups of 260,000 rows)
   through ``qafast.evaluate`` and through ``qafast.dask.evaluate`` on a two-worker
   ``distributed.LocalCluster``, the same run as TREC text through ``qafast.evaluate`` (target:
   Parquet at least as fast, at each ``workers``) and through ``qafast.dask.evaluate``:
   identical numbers, times. Runs when ``qafast.dask`` is importable, else "n/a".
5. The 100M-line run: ``wc -l``, ``qafast trec`` and ``qafast.evaluate`` with five measures
   (map, ndcg_cut_10, P_10, recall_100, recip_rank), time and peak memory; million lines per
   second for the run and for the qrels. Targets: within 6x of ``wc -l``, at most 1 GB.
   The three are run in turn, three rounds, each one's best kept (``measure_together``).

The machine is named in the header with its load average: timings on a shared machine move
by 2x or more under other work, and a ratio of two timings taken at different moments
inherits that noise.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
SRC = REPO / "src"
FIVE = ["map", "ndcg_cut.10", "P.10", "recall.100", "recip_rank"]
FIVE_API = ["map", "ndcg_cut_10", "P_10", "recall_100", "recip_rank"]


# ------------------------------------------------------------------------------------------
# data


def _digits(values, width: int):
    """(n, width) ASCII digits of ``values``, right-aligned, and a mask without the leading
    zeros (0 keeps one digit)."""
    values = np.asarray(values, dtype=np.int64)
    powers = 10 ** np.arange(width - 1, -1, -1, dtype=np.int64)
    digits = ((values[:, None] // powers) % 10 + 48).astype(np.uint8)
    count = np.maximum(1, np.floor(np.log10(np.maximum(values, 1))).astype(np.int64) + 1)
    return digits, np.arange(width)[None, :] >= (width - count)[:, None]


def _text(n: int, text: str):
    b = np.frombuffer(text.encode(), dtype=np.uint8)
    return np.broadcast_to(b, (n, len(b))), np.ones((n, len(b)), dtype=bool)


def _lines(fields) -> bytes:
    chars = np.concatenate([f[0] for f in fields], axis=1)
    keep = np.concatenate([f[1] for f in fields], axis=1)
    return chars[keep].tobytes()


def _base(first: int, nq: int):
    """Per query a base document id, a function of the query number alone: a query's k-th
    candidate is base + 7919 k (distinct ids), whatever the run's length or chunking."""
    q = np.arange(first, first + nq, dtype=np.int64) + 1
    return (q * 2654435761) % 8_000_000


def write_run(path: Path, n_queries: int, n_docs: int, *, seed: int = 0, tag: str = "bench"):
    rng = np.random.default_rng(seed)
    step = max(1, 2_000_000 // n_docs)
    with open(path, "wb") as f:
        for q0 in range(0, n_queries, step):
            nq = min(n_queries, q0 + step) - q0
            n = nq * n_docs
            qid = np.repeat(np.arange(q0, q0 + nq, dtype=np.int64) + 1, n_docs)
            doc = (np.repeat(_base(q0, nq), n_docs) + np.tile(np.arange(n_docs) * 7919, nq)) \
                % 8_999_999 + 1_000_000
            rank = np.tile(np.arange(1, n_docs + 1), nq)
            score = np.sort(rng.integers(0, 1_000_000, size=(nq, n_docs)), axis=1)[:, ::-1]
            score = score.ravel()
            frac = _digits(score % 10000, 4)
            f.write(_lines([_digits(qid, 8), _text(n, " Q0 D"), _digits(doc, 7), _text(n, " "),
                            _digits(rank, 5), _text(n, " "), _digits(score // 10000, 3),
                            _text(n, "."), (frac[0], np.ones_like(frac[1])),
                            _text(n, f" {tag}\n")]))


def write_qrels(path: Path, n_queries: int, n_docs: int, per_query: int, *, seed: int = 0):
    """Judgments for a run of ``n_docs`` documents per query: positions in [0, 2 n_docs) of
    each query's candidate list, so about half are retrieved; grades 0-3 (30/30/25/15 %)."""
    judge = np.random.default_rng(seed + 1)
    step = max(1, 2_000_000 // n_docs)
    with open(path, "wb") as f:
        for q0 in range(0, n_queries, step):
            nq = min(n_queries, q0 + step) - q0
            k = per_query
            pos = np.sort(judge.integers(0, 2 * n_docs - k + 1, size=(nq, k)), axis=1)
            pos = pos + np.arange(k)[None, :]
            doc = ((_base(q0, nq)[:, None] + pos * 7919) % 8_999_999 + 1_000_000).ravel()
            m = nq * k
            qid = np.repeat(np.arange(q0, q0 + nq, dtype=np.int64) + 1, k)
            grade = judge.choice(4, size=m, p=[0.3, 0.3, 0.25, 0.15])
            f.write(_lines([_digits(qid, 8), _text(m, " 0 D"), _digits(doc, 7), _text(m, " "),
                            _digits(grade, 1), _text(m, "\n")]))


def warm(*paths: Path) -> None:
    """Write the generated files out and read them once: the kernel's writeback of
    gigabytes just written otherwise competes with the first timed rows (1.35 s against
    1.02 s for row 1, measured)."""
    os.sync()
    for p in paths:
        with open(p, "rb") as f:
            while f.read(1 << 24):
                pass


# ------------------------------------------------------------------------------------------
# children


TIME = shutil.which("time") or "/usr/bin/time"


def measure(cmd: list[str], *, env=None, repeat: int = 1) -> dict:
    """Run ``cmd`` under /usr/bin/time: wall seconds, peak RSS (MB), stdout. With
    ``repeat``, the best wall time and the highest peak of that many runs: on a virtual
    machine a child's first touch of memory the host took back costs more, and one run of a
    one-second command moved by a third between otherwise equal runs."""
    if repeat > 1:
        return _best([measure(cmd, env=env) for _ in range(repeat)])
    with tempfile.NamedTemporaryFile("r", suffix=".time") as t:
        full = [TIME, "-f", "%M", "-o", t.name, *cmd] if os.path.exists(TIME) else cmd
        start = time.perf_counter()
        proc = subprocess.run(full, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        wall = time.perf_counter() - start
        if proc.returncode != 0:
            raise RuntimeError(f"{cmd[:4]}... failed ({proc.returncode}):\n"
                               f"{proc.stderr.decode(errors='replace')[-2000:]}")
        lines = [x for x in open(t.name).read().split() if x.isdigit()]
        peak = int(lines[-1]) / 1024 if lines else float("nan")
    return {"s": wall, "mb": peak, "out": proc.stdout.decode()}


def measure_together(cmds: dict, *, repeat: int = 3) -> dict:
    """``measure`` for several commands ({name: (cmd, env)}), taken in turn, ``repeat``
    rounds: each one's best wall time and highest peak. A ratio between two of them then
    compares runs made minutes apart at most, under the same load: on a shared machine the
    speed drifts by a fifth from minute to minute, and measuring one command three times
    and then the other three times let that drift into the ratio."""
    runs: dict = {name: [] for name in cmds}
    for _ in range(repeat):
        for name, (cmd, env) in cmds.items():
            runs[name].append(measure(cmd, env=env))
    return {name: _best(got) for name, got in runs.items()}


def _best(runs: list[dict]) -> dict:
    """The fastest of several ``measure`` results, with the highest peak among them;
    ``rounds``: every run's wall time, in the order they ran."""
    best = min(runs, key=lambda r: r["s"])
    return {"s": best["s"], "mb": max(r["mb"] for r in runs), "out": best["out"],
            "rounds": [r["s"] for r in runs]}


def env(tmp: Path) -> dict:
    """The children's environment: the tree's qafast first on the path, and its bytecode
    cached (under ``tmp``, not in the tree) as an installed package's is, so that no timing
    includes compiling the modules (PYTHONDONTWRITEBYTECODE would make every child do it)."""
    e = dict(os.environ)
    e["PYTHONPATH"] = str(SRC) + (os.pathsep + e["PYTHONPATH"] if e.get("PYTHONPATH") else "")
    e.pop("PYTHONDONTWRITEBYTECODE", None)
    e["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(SRC / "qafast")], env=e,
                   check=True)
    return e


def py(code: str, *args) -> list[str]:
    return [sys.executable, "-c", code, *map(str, args)]


PYTREC = """
import json, sys, time, pytrec_eval
t = time.perf_counter()
with open(sys.argv[1]) as f:
    qrels = pytrec_eval.parse_qrel(f)
with open(sys.argv[2]) as f:
    run = pytrec_eval.parse_run(f)
measures = pytrec_eval.supported_nicknames["official"] - {"runid", "num_q"}
per_query = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
names = sorted(next(iter(per_query.values())))
means = {m: pytrec_eval.compute_aggregated_measure(m, [v[m] for v in per_query.values()])
         for m in names}
print(json.dumps(means))
"""

EVALUATE = """
import json, sys, time, qafast
t = time.perf_counter()
qrels = qafast.Qrels.from_file(sys.argv[1], workers=2)
t1 = time.perf_counter()
means = qafast.evaluate(qrels, sys.argv[2], sys.argv[3].split(","), workers=-1, progress=False)
t2 = time.perf_counter()
print(json.dumps({"qrels_s": t1 - t, "run_s": t2 - t1, "means": means}))
"""

MANY_THREADS = """
import json, sys, qafast
runs = sys.argv[3:]
got = qafast.evaluate_runs(sys.argv[1], runs, sys.argv[2].split(","), workers=2,
                           progress=False)
print(json.dumps(got))
"""

MANY_ONE_BY_ONE = """
import json, sys, qafast
qrels = qafast.Qrels.from_file(sys.argv[1])
runs = sys.argv[3:]
got = {r: qafast.evaluate(qrels, r, sys.argv[2].split(","), workers=1, progress=False)
       for r in runs}
print(json.dumps(got))
"""

MANY_PROCESSES = """
import json, multiprocessing, sys, qafast
QRELS = qafast.Qrels.from_file(sys.argv[1])  # before the fork: shared by both processes
MEASURES = sys.argv[2].split(",")

def one(path):
    return path, qafast.evaluate(QRELS, path, MEASURES, workers=1, progress=False)

if __name__ == "__main__":
    with multiprocessing.get_context("fork").Pool(2) as pool:
        got = dict(pool.map(one, sys.argv[3:], chunksize=1))
    print(json.dumps(got))
"""

# a run's text already in memory (bytes), cut into segments of whole queries for the threads
IN_MEMORY = """
import json, sys, time, qafast
qrels = qafast.Qrels.from_file(sys.argv[1])
with open(sys.argv[2], "rb") as f:
    text = f.read()
t = time.perf_counter()
means = qafast.evaluate(qrels, text, sys.argv[3].split(","), workers=int(sys.argv[4]))
print(json.dumps({"s": time.perf_counter() - t, "means": means}))
"""

# Arrow/Parquet and Dask: ``qafast.evaluate`` taking a Parquet path, ``qafast.dask.evaluate``
# a Parquet path or glob with query_id, doc_id, score columns, or a TREC run file; run only
# when ``qafast.dask`` imports.
PARQUET = """
import json, sys, time, qafast
import pyarrow.compute, pyarrow.parquet  # loaded before the clock starts, as dask is below
kind, qrels_path, parquet_path = sys.argv[1:4]
measures = sys.argv[4].split(",")
qrels = qafast.Qrels.from_file(qrels_path)
t = time.perf_counter()
if kind.startswith(("evaluate", "text")):
    workers = 2 if kind.endswith("2") else 1
    means = qafast.evaluate(qrels, parquet_path, measures, workers=workers)
else:
    import qafast.dask
    from distributed import Client, LocalCluster
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True) as cluster, \\
            Client(cluster):
        t = time.perf_counter()
        means = qafast.dask.evaluate(qrels, parquet_path, measures)
print(json.dumps({"s": time.perf_counter() - t, "means": means}))
"""


PARQUET_ROW_GROUP = 260_000


def to_parquet(run: Path, out: Path) -> None:
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    names = ["query_id", "iter", "doc_id", "rank", "score", "tag"]
    reader = pacsv.open_csv(run, read_options=pacsv.ReadOptions(column_names=names),
                            parse_options=pacsv.ParseOptions(delimiter=" "),
                            convert_options=pacsv.ConvertOptions(
                                column_types={"query_id": pa.string(), "doc_id": pa.string(),
                                              "score": pa.float64()},
                                include_columns=["query_id", "doc_id", "score"]))
    # row groups of 260,000 rows, as a user's file had them (the CSV reader's batches are
    # about a tenth of that)
    pending: list = []
    with pq.ParquetWriter(out, reader.schema) as w:
        for batch in reader:
            pending.append(batch)
            if sum(len(b) for b in pending) >= PARQUET_ROW_GROUP:
                w.write_table(pa.Table.from_batches(pending), row_group_size=PARQUET_ROW_GROUP)
                pending = []
        if pending:
            w.write_table(pa.Table.from_batches(pending), row_group_size=PARQUET_ROW_GROUP)


# ------------------------------------------------------------------------------------------
# the report


class Table:
    def __init__(self):
        self.rows: list[tuple] = []

    def add(self, what, seconds=None, mb=None, note=""):
        self.rows.append((what, seconds, mb, note))
        s = "" if seconds is None else f"{seconds:9.2f} s"
        m = "" if mb is None else f"{mb:9.0f} MB"
        print(f"  {what:<58}{s:>12}{m:>13}  {note}", flush=True)

    def section(self, title):
        print(f"\n{title}", flush=True)


def ratio(a, b) -> str:
    return f"{a / b:.1f}x" if b else "?"


def verdict(ok: bool) -> str:
    return "met" if ok else "NOT met"


def _reports_free_pages() -> bool:
    """Whether this Linux guest hands the pages it frees back to its host: their next first
    touch is then faulted in by the host too, a cost that depends on the moments before."""
    return (os.path.isdir("/sys/bus/virtio/drivers/virtio_balloon")
            and os.path.isdir("/sys/module/page_reporting"))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="a tenth of the sizes, no 100M case")
    ap.add_argument("--skip-100m", action="store_true", help="leave out the 100M-line case")
    ap.add_argument("--skip-pytrec", action="store_true", help="leave out pytrec_eval")
    ap.add_argument("--tmp", default=None, help="directory for the generated files")
    ap.add_argument("--keep", action="store_true", help="keep the generated files")
    args = ap.parse_args(argv)
    n_q = 2_000 if args.quick else 20_000
    big = not (args.quick or args.skip_100m)
    print(f"qafast bench_scale: {os.uname().nodename}, {os.cpu_count()} cores "
          f"(affinity {len(os.sched_getaffinity(0))}), load average "
          f"{'/'.join(f'{x:.2f}' for x in os.getloadavg())}; timings on a shared machine "
          "vary by 2x or more", flush=True)
    if _reports_free_pages():
        print("  this VM returns freed memory to its host (virtio-balloon free page reporting): "
              "fresh memory costs more after idle moments (benchmarks/README.md)", flush=True)
    tmp = Path(tempfile.mkdtemp(prefix="qafast-bench-scale-", dir=args.tmp))
    e = env(tmp)
    table = Table()
    try:
        qrels, run, run2 = tmp / "qrels", tmp / "run", tmp / "run2x"
        t = time.perf_counter()
        write_run(run, n_q, 1000)
        write_run(run2, n_q, 2000, seed=1)  # the same queries, twice the documents
        write_qrels(qrels, n_q, 1000, 50)
        copies = []
        for k in range(8):
            p = tmp / f"run{k}"
            shutil.copyfile(run, p)
            copies.append(p)
        print(f"  (generated {n_q * 1000 / 1e6:.0f}M + {2 * n_q * 1000 / 1e6:.0f}M lines, "
              f"{n_q * 50 / 1e6:.1f}M qrels lines and 8 copies in "
              f"{time.perf_counter() - t:.0f} s)", flush=True)
        warm(qrels, run, run2, *copies)
        lines = n_q * 1000

        table.section(f"1. one run, {lines / 1e6:.0f}M lines, default measures "
                      "(trec_eval's official set)")
        wc = measure(["wc", "-l", str(run)], repeat=3)
        table.add("wc -l (floor)", wc["s"], wc["mb"])
        trec = measure([sys.executable, "-m", "qafast.cli", "trec", "--no-progress", "-o",
                        "json", str(qrels), str(run)], env=e, repeat=3)
        table.add("qafast trec", trec["s"], trec["mb"], f"{ratio(trec['s'], wc['s'])} wc -l")
        trec1 = measure([sys.executable, "-m", "qafast.cli", "trec", "--no-progress", "-w",
                         "1", str(qrels), str(run)], env=e)
        table.add("qafast trec -w 1 (one thread)", trec1["s"], trec1["mb"])
        # the same text compressed, and through a pipe: read once, as it arrives
        packed = tmp / "run.gz"
        subprocess.run(["gzip", "-1", "-k", "-c", str(run)], stdout=packed.open("wb"),
                       check=True)
        zcat = measure(["gzip", "-d", "-c", str(packed)], repeat=3)
        table.add("gzip -d -c run.gz (GNU gzip alone)", zcat["s"], zcat["mb"])
        gz = measure([sys.executable, "-m", "qafast.cli", "trec", "--no-progress", "-o",
                      "json", str(qrels), str(packed)], env=e, repeat=3)
        isal = "with python-isal" if importlib.util.find_spec("isal") else "standard gzip"
        table.add("qafast trec run.gz", gz["s"], gz["mb"],
                  f"{isal}; identical numbers: {json.loads(gz['out']) == json.loads(trec['out'])}")
        piped = measure(["sh", "-c", f'cat "{run}" | "{sys.executable}" -m qafast.cli trec '
                         f'--no-progress -o json "{qrels}" -'], env=e, repeat=3)
        table.add("cat run | qafast trec QRELS -", piped["s"], piped["mb"],
                  f"identical numbers: {json.loads(piped['out']) == json.loads(trec['out'])}")
        packed.unlink()
        five = ",".join(FIVE_API)
        mem1 = measure(py(IN_MEMORY, qrels, run, five, 1), env=e)
        mem2 = measure(py(IN_MEMORY, qrels, run, five, 2), env=e)
        r1, r2 = json.loads(mem1["out"]), json.loads(mem2["out"])
        table.add("evaluate(bytes of the run), workers=1", r1["s"], mem1["mb"],
                  "five measures, reading the file not timed")
        table.add("evaluate(bytes of the run), workers=2: segments", r2["s"], mem2["mb"],
                  f"{r1['s'] / r2['s']:.2f}x faster; identical numbers: "
                  f"{r1['means'] == r2['means']}")
        if not args.skip_pytrec and importlib.util.find_spec("pytrec_eval"):
            pt = measure(py(PYTREC, qrels, run), env=e)
            ok_t, ok_m = pt["s"] >= 20 * trec["s"], pt["mb"] >= 10 * trec["mb"]
            table.add("pytrec_eval parse_qrel + parse_run + evaluate", pt["s"], pt["mb"],
                      f"qafast {ratio(pt['s'], trec['s'])} faster (target 20x: "
                      f"{verdict(ok_t)}), {ratio(pt['mb'], trec['mb'])} less memory "
                      f"(target 10x: {verdict(ok_m)})")
            ours = json.loads(trec["out"])["all"]
            theirs = json.loads(pt["out"])
            diff = max(abs(ours[m] - theirs[m]) for m in ("map", "P_10", "recip_rank", "bpref"))
            table.add("  agreement, max |difference| of map, P_10, recip_rank, bpref", None,
                      None, f"{diff:.1e} (pytrec_eval keeps scores as float32)")
        else:
            table.add("pytrec_eval", None, None, "n/a (not installed or --skip-pytrec)")

        table.section(f"2. memory when the run doubles ({2 * lines / 1e6:.0f}M lines: the same "
                      "queries, 2,000 documents each)")
        trec2 = measure([sys.executable, "-m", "qafast.cli", "trec", "--no-progress",
                         str(qrels), str(run2)], env=e)
        grow = trec2["mb"] / trec["mb"]
        table.add("qafast trec, run doubled", trec2["s"], trec2["mb"],
                  f"peak {grow:.2f}x the single run's (target within 1.2x: "
                  f"{verdict(grow <= 1.2)})")

        table.section(f"3. 8 runs of {lines / 1e6:.0f}M lines against one qrels")
        names = ",".join(FIVE_API)
        seq = measure(py(MANY_ONE_BY_ONE, qrels, names, *copies), env=e)
        table.add("evaluate(workers=1), one run after another", seq["s"], seq["mb"])
        thr = measure(py(MANY_THREADS, qrels, names, *copies), env=e)
        sp = seq["s"] / thr["s"]
        table.add("evaluate_runs(workers=2), threads", thr["s"], thr["mb"],
                  f"{sp:.2f}x faster (target 1.6x: {verdict(sp >= 1.6)})")
        prc = measure(py(MANY_PROCESSES, qrels, names, *copies), env=e)
        table.add("2 forked processes, 4 runs each", prc["s"], prc["mb"],
                  f"{seq['s'] / prc['s']:.2f}x faster; peak of the largest process")
        same = (json.loads(seq["out"]) == json.loads(thr["out"]) == json.loads(prc["out"]))
        table.add("  numbers identical in the three", None, None, str(same))

        table.section("4. Parquet through qafast.evaluate and qafast.dask.evaluate")
        sys.path.insert(0, str(SRC))
        if importlib.util.find_spec("qafast.dask") is not None:
            pq_path = tmp / "run.parquet"
            to_parquet(run, pq_path)
            a = measure(py(PARQUET, "evaluate", qrels, pq_path, names), env=e)
            a2 = measure(py(PARQUET, "evaluate2", qrels, pq_path, names), env=e)
            b = measure(py(PARQUET, "dask", qrels, pq_path, names), env=e)
            ra, ra2, rb = (json.loads(x["out"]) for x in (a, a2, b))
            table.add("Parquet, qafast.evaluate", ra["s"], a["mb"])
            table.add("Parquet, qafast.evaluate(workers=2): read ahead", ra2["s"], a2["mb"],
                      f"{ra['s'] / ra2['s']:.2f}x faster; identical numbers: "
                      f"{ra['means'] == ra2['means']}")
            table.add("Parquet, qafast.dask.evaluate (LocalCluster, 2 workers)", rb["s"],
                      b["mb"], f"identical numbers: {ra['means'] == rb['means']}")
            for workers in (1, 2):
                parquet_s = (ra if workers == 1 else ra2)["s"]
                t = measure(py(PARQUET, f"text{workers}", qrels, run, names), env=e)
                rt = json.loads(t["out"])
                sp = rt["s"] / parquet_s
                table.add(f"TREC text, qafast.evaluate(workers={workers})", rt["s"], t["mb"],
                          f"Parquet {sp:.2f}x its speed (target >= 1: {verdict(sp >= 1)}); "
                          f"identical numbers: {rt['means'] == ra['means']}")
            c = measure(py(PARQUET, "dask", qrels, run, names), env=e)
            rc = json.loads(c["out"])
            table.add("TREC file, qafast.dask.evaluate (LocalCluster, 2 workers)", rc["s"],
                      c["mb"], f"identical numbers: {ra['means'] == rc['means']}")
        else:
            table.add("Parquet, qafast.evaluate", None, None, "n/a (qafast.dask not importable)")
            table.add("Parquet, qafast.dask.evaluate", None, None,
                      "n/a (qafast.dask not importable)")

        if big:
            for p in (run2, *copies):
                p.unlink()
            table.section("5. 100M lines: 1,000,000 queries x 100 documents, 6M qrels lines, "
                          "five measures")
            q100, r100 = tmp / "qrels100", tmp / "run100"
            t = time.perf_counter()
            write_run(r100, 1_000_000, 100)
            write_qrels(q100, 1_000_000, 100, 6)
            print(f"  (generated in {time.perf_counter() - t:.0f} s, "
                  f"{r100.stat().st_size / 1e9:.1f} GB)", flush=True)
            warm(q100, r100)
            five = [x for m in FIVE for x in ("-m", m)]
            got = measure_together({
                "wc": (["wc", "-l", str(r100)], None),
                "trec": ([sys.executable, "-m", "qafast.cli", "trec", "--no-progress", *five,
                          str(q100), str(r100)], e),
                "evaluate": (py(EVALUATE, q100, r100, names), e)})
            wc, tr, ev = got["wc"], got["trec"], got["evaluate"]

            def targets(r: dict) -> str:
                return (f"{ratio(r['s'], wc['s'])} wc -l (target 6x: "
                        f"{verdict(r['s'] <= 6 * wc['s'])}); <= 1 GB: "
                        f"{verdict(r['mb'] <= 1024)}")

            def each_round(r: dict) -> str:
                return " ".join(ratio(a, b) for a, b in zip(r["rounds"], wc["rounds"]))

            table.add("wc -l (floor)", wc["s"], wc["mb"])
            table.add("qafast trec", tr["s"], tr["mb"], targets(tr))
            inner = json.loads(ev["out"])
            table.add("qafast.evaluate(workers=-1)", ev["s"], ev["mb"], targets(ev))
            # the best-of-three ratio above hides how far the host moved between rounds
            table.add("  each round, against that round's wc -l", None, None,
                      f"trec {each_round(tr)}; evaluate {each_round(ev)}")
            table.add("  run: million lines per second", None, None,
                      f"{100 / inner['run_s']:.1f} (wc -l: {100 / wc['s']:.0f})")
            table.add("  qrels: million lines per second", None, None,
                      f"{6 / inner['qrels_s']:.1f}")
        else:
            table.section("5. 100M lines: skipped (--quick or --skip-100m)")
        print(f"\nload average at the end: {'/'.join(f'{x:.2f}' for x in os.getloadavg())}")
    finally:
        if args.keep:
            print(f"files kept in {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
