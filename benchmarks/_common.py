"""Shared helpers for the qafast benchmarks: seeded synthetic data, timing, machine info.

Only numpy is imported at module level, so that child processes measuring peak memory do
not pay for peers they do not use (numba, ranx, pandas, ...).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import os
import platform
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
SRC = REPO / "src"

def compile_bytecode() -> None:
    """Writes the in-tree sources' bytecode, as ``pip install`` does for a wheel.

    A command timed as a process otherwise compiles every module it imports from source
    whenever ``PYTHONDONTWRITEBYTECODE`` is set (0.1-0.3 s a start on a 2-core machine), a
    cost no installed copy pays. Compiling an up-to-date tree again is a stat per file.
    """
    import compileall

    compileall.compile_dir(str(SRC / "qafast"), quiet=1)


compile_bytecode()


# --------------------------------------------------------------------------------------
# qafast import, guarded: the public API is written in parallel with this benchmark.
# --------------------------------------------------------------------------------------


def import_qafast():
    """Return (module, None) or (None, reason). Prefers the in-tree build under src/."""
    if str(SRC) not in sys.path:
        sys.path.insert(0, str(SRC))
    try:
        import qafast  # noqa: PLC0415
    except Exception as exc:  # pragma: no cover - depends on the state of the tree
        return None, f"import qafast failed: {type(exc).__name__}: {exc}"
    return qafast, None


def qafast_missing(qafast, *names: str) -> str | None:
    """Name the first missing public attribute (dotted names allowed), or None."""
    if qafast is None:
        return "qafast not importable"
    for name in names:
        obj = qafast
        for part in name.split("."):
            if not hasattr(obj, part):
                return (
                    f"qafast.{name} is missing (API not written yet, or compiled module not "
                    "built: run `python setup.py build_ext --inplace`)"
                )
            obj = getattr(obj, part)
    return None


def optional_import(name: str):
    """Return (module, None) or (None, reason) for a peer that may not be installed."""
    try:
        return importlib.import_module(name), None
    except Exception as exc:
        return None, f"{name} not available ({type(exc).__name__}: {exc})"


def dist_version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def load_average() -> str:
    if not hasattr(os, "getloadavg"):
        return "?"
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


def machine_info() -> list[str]:
    qafast, _ = import_qafast()
    qv = getattr(qafast, "__version__", "?") if qafast is not None else "not importable"
    try:
        import subprocess  # noqa: PLC0415

        rev = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--", "src"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        qv += f" (git {rev or '?'}{', src/ modified' if dirty else ''})"
    except Exception:
        pass
    lines = [
        f"machine: {platform.platform()}, {platform.processor() or platform.machine()}, "
        f"os.cpu_count()={os.cpu_count()}",
        f"load average (1/5/15 min) at start: {load_average()} (other work on the machine "
        "makes timings, threaded ones most, noisy)",
        f"python {platform.python_version()} ({platform.python_implementation()}), "
        f"numpy {np.__version__}",
        f"qafast {qv}; pytrec-eval-terrier {dist_version('pytrec-eval-terrier')}; "
        f"ranx {dist_version('ranx')}; ir-measures {dist_version('ir-measures')}; "
        f"numba {dist_version('numba')}; pandas {dist_version('pandas')}",
    ]
    return lines


# --------------------------------------------------------------------------------------
# Timing
# --------------------------------------------------------------------------------------


@dataclass
class Timing:
    seconds: float
    reps: int
    result: object = None
    planned: int = 1

    @property
    def label(self) -> str:
        """Seconds, with "(1 run)" when the > 20 s rule cut the repetitions short."""
        cut = self.reps < self.planned
        return f"{self.seconds:.3f} s (1 run)" if cut else f"{self.seconds:.3f} s"


REPS = 3  # bench_ranking.py --reps overrides this


def best_of(fn, repeat: int = 3) -> float:
    """The shortest wall time of ``repeat`` calls of ``fn()``."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def in_threads(fn, count: int):
    """A function that runs ``fn()`` in ``count`` threads at once and waits for them."""
    import threading

    def run() -> None:
        threads = [threading.Thread(target=fn) for _ in range(count)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    return run


def alternating_medians(calls, repeat: int) -> list[tuple[float, float]]:
    """``(median wall time, median process CPU time)`` of each function in ``calls``, run in
    turn ``repeat`` times (alternating, so that a change in the machine's load falls on all
    of them alike; CPU time, which such a change disturbs less, beside the wall time)."""
    walls: list[list[float]] = [[] for _ in calls]
    cpus: list[list[float]] = [[] for _ in calls]
    for _ in range(repeat):
        for fn, wall, cpu in zip(calls, walls, cpus):
            c, t = time.process_time(), time.perf_counter()
            fn()
            wall.append(time.perf_counter() - t)
            cpu.append(time.process_time() - c)
    return [(statistics.median(w), statistics.median(c)) for w, c in zip(walls, cpus)]


def load_script(path, name: str):
    """The official script at ``path``, unmodified, imported as module ``name``."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def time_call(fn, *, reps: int | None = None, single_if_over: float = 20.0, warmup=None) -> Timing:
    """Median of ``reps`` timed calls of ``fn()`` (time.perf_counter).

    ``warmup`` (a callable, typically the same work on a small subsample) runs first and is
    not timed: it pays for imports, JIT compilation and first-touch allocations. If the
    first timed call takes longer than ``single_if_over`` seconds, that one call is reported.
    """
    reps = REPS if reps is None else reps
    if warmup is not None:
        warmup()
    times = []
    result = None
    for _ in range(reps):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
        if times[0] > single_if_over:
            break
    return Timing(statistics.median(times), len(times), result, reps)


# --------------------------------------------------------------------------------------
# Synthetic data (seeded; nothing is downloaded)
# --------------------------------------------------------------------------------------

# Scores are k/100 for k in [SCORE_LO, SCORE_HI): 220 distinct 2-decimal values, so with 100
# retrieved docs per query about 100 * (1 - (219/220)**99) ~= 36 docs share their score with
# at least one other doc of the same query.
SCORE_LO, SCORE_HI = 500, 720
# Doc ids uniform in [1, 2_000_000): about half have 6 digits and half 7, so for about half
# of the pairs "d{id}" string order disagrees with numeric order (d999999 > d1000000).
DOC_ID_HI = 2_000_000
MAX_JUDGED = 8
GRADE_P = [0.3, 0.3, 0.25, 0.15]  # grades 0..3
P_JUDGED_NOT_RETRIEVED = 0.25

MEASURES_QAFAST = ["mrr@10", "map@100", "ndcg@10", "P@10", "recall@100"]
MEASURES_QAFAST_TREC = ["recip_rank", "map_cut_100", "ndcg_cut_10", "P_10", "recall_100"]
MEASURES_PYTREC = {"recip_rank", "map_cut.100", "ndcg_cut.10", "P.10", "recall.100"}
PYTREC_KEYS = ["recip_rank", "map_cut_100", "ndcg_cut_10", "P_10", "recall_100"]
MEASURES_RANX = ["mrr@10", "map@100", "ndcg@10", "precision@10", "recall@100"]


@dataclass
class Data:
    """One synthetic collection, as integer arrays (the dict/file forms are derived)."""

    n_queries: int
    n_docs: int
    run_ids: np.ndarray  # (n_q, n_docs) int64 doc ids, distinct within a row
    run_scores: np.ndarray  # (n_q, n_docs) float64, 2 decimals
    qrel_offsets: np.ndarray  # (n_q + 1,) int64, CSR offsets into qrel_ids / qrel_grades
    qrel_ids: np.ndarray  # int64
    qrel_grades: np.ndarray  # int64, 0..3

    # flat (long) form -------------------------------------------------------------
    def run_arrays(self):
        q = np.repeat(np.arange(self.n_queries, dtype=np.int64), self.n_docs)
        return q, self.run_ids.reshape(-1).copy(), self.run_scores.reshape(-1).copy()

    def qrels_arrays(self):
        counts = np.diff(self.qrel_offsets)
        q = np.repeat(np.arange(self.n_queries, dtype=np.int64), counts)
        return q, self.qrel_ids.copy(), self.qrel_grades.copy()

    # dict-of-dicts with string ids ------------------------------------------------
    def to_dicts(self, chunk: int = 10_000):
        """({qid: {docid: grade}}, {qid: {docid: score}}) with ids "q{i}" / "d{id}"."""
        qrels: dict[str, dict[str, int]] = {}
        run: dict[str, dict[str, float]] = {}
        off = self.qrel_offsets.tolist()
        for lo in range(0, self.n_queries, chunk):  # chunked to bound transient memory
            hi = min(lo + chunk, self.n_queries)
            ids = self.run_ids[lo:hi].tolist()
            scores = self.run_scores[lo:hi].tolist()
            j0, j1 = off[lo], off[hi]
            jid = self.qrel_ids[j0:j1].tolist()
            jgr = self.qrel_grades[j0:j1].tolist()
            for i in range(hi - lo):
                qid = f"q{lo + i}"
                run[qid] = {f"d{d}": s for d, s in zip(ids[i], scores[i])}
                a, b = off[lo + i] - j0, off[lo + i + 1] - j0
                qrels[qid] = {f"d{d}": g for d, g in zip(jid[a:b], jgr[a:b])}
        return qrels, run

    # TREC files ------------------------------------------------------------------
    def write_trec(self, qrels_path: Path, run_path: Path, chunk: int = 5_000) -> int:
        """Write the qrels and a run file (rows sorted by descending score); return #lines."""
        with open(qrels_path, "w") as f:
            off = self.qrel_offsets.tolist()
            ids = self.qrel_ids.tolist()
            grades = self.qrel_grades.tolist()
            buf = []
            for q in range(self.n_queries):
                buf.extend(
                    f"q{q} 0 d{ids[j]} {grades[j]}\n" for j in range(off[q], off[q + 1])
                )
                if len(buf) > 100_000:
                    f.write("".join(buf))
                    buf.clear()
            f.write("".join(buf))
        n_lines = 0
        with open(run_path, "w") as f:
            for lo in range(0, self.n_queries, chunk):
                hi = min(lo + chunk, self.n_queries)
                order = np.argsort(-self.run_scores[lo:hi], axis=1, kind="stable")
                ids = np.take_along_axis(self.run_ids[lo:hi], order, axis=1).tolist()
                scores = np.take_along_axis(self.run_scores[lo:hi], order, axis=1).tolist()
                lines = []
                for i in range(hi - lo):
                    qid = lo + i
                    lines.extend(
                        f"q{qid} Q0 d{d} {r} {s:.2f} bench\n"
                        for r, (d, s) in enumerate(zip(ids[i], scores[i]), start=1)
                    )
                n_lines += len(lines)
                f.write("".join(lines))
        return n_lines

    def subsample(self, n: int) -> "Data":
        n = min(n, self.n_queries)
        off = self.qrel_offsets[: n + 1].copy()
        return Data(
            n,
            self.n_docs,
            self.run_ids[:n].copy(),
            self.run_scores[:n].copy(),
            off,
            self.qrel_ids[: off[-1]].copy(),
            self.qrel_grades[: off[-1]].copy(),
        )


def make_data(n_queries: int, n_docs: int = 100, seed: int = 20240607) -> Data:
    rng = np.random.default_rng(seed)
    width = n_docs + MAX_JUDGED  # the extra columns are judged-but-not-retrieved docs
    ids = rng.integers(1, DOC_ID_HI, size=(n_queries, width), dtype=np.int64)
    while True:  # make ids distinct within each row (collisions are rare; redraw those rows)
        s = np.sort(ids, axis=1)
        bad = np.flatnonzero((s[:, 1:] == s[:, :-1]).any(axis=1))
        if bad.size == 0:
            break
        ids[bad] = rng.integers(1, DOC_ID_HI, size=(bad.size, width), dtype=np.int64)
    run_ids = np.ascontiguousarray(ids[:, :n_docs])
    run_scores = rng.integers(SCORE_LO, SCORE_HI, size=(n_queries, n_docs)) / 100.0

    n_judged = rng.integers(4, MAX_JUDGED + 1, size=n_queries)
    slot = np.arange(MAX_JUDGED)
    mask = slot[None, :] < n_judged[:, None]
    retrieved = rng.random((n_queries, MAX_JUDGED)) >= P_JUDGED_NOT_RETRIEVED
    # distinct random positions in the ranking for the judged docs that were retrieved
    pos = np.argsort(rng.random((n_queries, n_docs)), axis=1)[:, :MAX_JUDGED]
    judged = np.where(
        retrieved,
        np.take_along_axis(run_ids, pos, axis=1),
        ids[:, n_docs : n_docs + MAX_JUDGED],
    )
    grades = rng.choice(4, size=(n_queries, MAX_JUDGED), p=GRADE_P).astype(np.int64)
    qrel_offsets = np.zeros(n_queries + 1, dtype=np.int64)
    np.cumsum(n_judged, out=qrel_offsets[1:])
    return Data(
        n_queries,
        n_docs,
        run_ids,
        run_scores,
        qrel_offsets,
        np.ascontiguousarray(judged[mask]),
        np.ascontiguousarray(grades[mask]),
    )


def tie_stats(data: Data) -> tuple[float, float]:
    """(mean #docs per query sharing their score with another doc, share of tied pairs
    whose "d{id}" string order differs from their numeric order)."""
    s = np.sort(data.run_scores, axis=1)
    eq = s[:, 1:] == s[:, :-1]
    tied = np.zeros_like(s, dtype=bool)
    tied[:, 1:] |= eq
    tied[:, :-1] |= eq
    n_tied = tied.sum(axis=1).mean()
    k = min(data.n_queries, 2000)
    differ = total = 0
    for q in range(k):
        sc, ids = data.run_scores[q], data.run_ids[q]
        vals, counts = np.unique(sc, return_counts=True)
        for v in vals[counts > 1]:
            g = ids[sc == v]
            a, b = np.triu_indices(g.size, 1)
            num = g[a] > g[b]
            st = np.array([f"d{x}" for x in g])
            total += a.size
            differ += int(np.count_nonzero(num != (st[a] > st[b])))
    return float(n_tied), (differ / total if total else 0.0)
