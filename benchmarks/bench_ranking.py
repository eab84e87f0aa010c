#!/usr/bin/env python
"""Ranking benchmark: qafast beside pytrec_eval, ranx, ir_measures and a numba kernel.

    python benchmarks/bench_ranking.py                 # 100,000 queries x 100 docs
    python benchmarks/bench_ranking.py --quick         # 10,000 queries, < 1 minute
    python benchmarks/bench_ranking.py --queries 50000 --docs 200

Everything runs in this one process except the peak-memory rows, which re-run this script
with the hidden ``--child WHAT`` flag so each contender's ru_maxrss is its own. Data is
synthetic and seeded (see _common.make_data); nothing is downloaded. Missing peers are
skipped with a note. See benchmarks/README.md for what each row means.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common  # noqa: E402
import numpy as np  # noqa: E402
from _common import (  # noqa: E402
    MEASURES_PYTREC,
    MEASURES_QAFAST,
    MEASURES_QAFAST_TREC,
    MEASURES_RANX,
    PYTREC_KEYS,
    Data,
    Timing,
    dist_version,
    load_average,
    import_qafast,
    machine_info,
    make_data,
    optional_import,
    qafast_missing,
    tie_stats,
    time_call,
)

SHORT = ["MRR@10", "MAP@100", "nDCG@10", "P@10", "R@100"]
T_START = time.perf_counter()


def log(msg: str) -> None:
    print(f"[{time.perf_counter() - T_START:7.1f}s] {msg}", file=sys.stderr, flush=True)


def maxrss_mb() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return r / (1024 * 1024) if sys.platform == "darwin" else r / 1024  # bytes vs KiB


# --------------------------------------------------------------------------------------
# Contenders (each returns {measure: mean} in the order of SHORT, or a per-query form)
# --------------------------------------------------------------------------------------


def pytrec_means(pytrec_eval, per_query: dict) -> list[float]:
    vals = list(per_query.values())
    return [
        pytrec_eval.compute_aggregated_measure(k, [v[k] for v in vals]) for k in PYTREC_KEYS
    ]


def pytrec_dict(pytrec_eval, qrels, run):
    ev = pytrec_eval.RelevanceEvaluator(qrels, MEASURES_PYTREC)
    per_query = ev.evaluate(run)
    return pytrec_means(pytrec_eval, per_query), per_query


def pytrec_file(pytrec_eval, qrels_path, run_path):
    with open(qrels_path) as f:
        qrels = pytrec_eval.parse_qrel(f)
    with open(run_path) as f:
        run = pytrec_eval.parse_run(f)
    return pytrec_dict(pytrec_eval, qrels, run)[0]


def qafast_means(res: dict, names=MEASURES_QAFAST) -> list[float]:
    return [float(res[m]) for m in names]


def qafast_dict(qafast, qrels, run, **kw):
    return qafast_means(qafast.evaluate(qrels, run, MEASURES_QAFAST, **kw))


def qafast_file(qafast, qrels_path, run_path):
    # the paths themselves: evaluate() reads the qrels, then evaluates the run as it reads it
    return qafast_means(qafast.evaluate(str(qrels_path), str(run_path), MEASURES_QAFAST))


def ranx_dict(ranx, qrels, run):
    res = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), MEASURES_RANX, threads=1)
    return [float(res[m]) for m in MEASURES_RANX]


def ir_measures_dict(irm, qrels, run):
    from ir_measures import AP, RR, P, R, nDCG

    ms = [RR @ 10, AP @ 100, nDCG @ 10, P @ 10, R @ 100]
    res = irm.calc_aggregate(ms, qrels, run)
    return [float(res[m]) for m in ms]


def truncate_trec_order(run: dict, k: int) -> dict:
    """Top k docs per query in trec_eval order (score desc, then docno desc)."""
    out = {}
    for qid, docs in run.items():
        top = sorted(docs.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)[:k]
        out[qid] = dict(top)
    return out


# --------------------------------------------------------------------------------------
# Child process: peak memory of one contender
# --------------------------------------------------------------------------------------

MEM_KINDS = ["base-dict", "pytrec-dict", "qafast-dict", "base-file", "pytrec-file", "qafast-file"]
CHILD_KINDS = ["write-files", *MEM_KINDS]


def reset_peak_rss() -> bool:
    """Reset this process's RSS high-water mark (Linux >= 4.0: clear_refs "5"), which also
    resets ru_maxrss, so the peak measured next excludes transients of input preparation."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def vm_hwm_mb() -> float | None:
    """Linux VmHWM (peak RSS of this address space), as a cross-check of ru_maxrss."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def child_main(args) -> int:
    what = args.child
    means = None
    if what == "write-files":
        data = make_data(args.queries, args.docs, args.seed)
        n_lines = data.write_trec(Path(args.qrels_path), Path(args.run_path))
        print(json.dumps({"n_lines": n_lines}))
        return 0
    if what.endswith("-dict"):
        data = make_data(args.queries, args.docs, args.seed)
        qrels, run = data.to_dicts()
        del data
    gc.collect()
    # The peak that matters starts here: inputs ready (dicts built, or files on disk), the
    # contender not yet imported.
    reset = reset_peak_rss()
    if what == "pytrec-dict":
        import pytrec_eval

        means = pytrec_dict(pytrec_eval, qrels, run)[0]
    elif what == "qafast-dict":
        qafast, err = import_qafast()
        if err or qafast_missing(qafast, "evaluate"):
            raise SystemExit(err or qafast_missing(qafast, "evaluate"))
        means = qafast_dict(qafast, qrels, run)
    elif what == "pytrec-file":
        import pytrec_eval

        means = pytrec_file(pytrec_eval, args.qrels_path, args.run_path)
    elif what == "qafast-file":
        qafast, err = import_qafast()
        miss = err or qafast_missing(qafast, "evaluate", "Qrels.from_file", "Run.from_file")
        if miss:
            raise SystemExit(miss)
        means = qafast_file(qafast, args.qrels_path, args.run_path)
    print(json.dumps({"maxrss_mb": maxrss_mb(), "vmhwm_mb": vm_hwm_mb(), "reset": reset,
                      "means": means}))
    return 0


# On Linux a process's ru_maxrss starts from the RSS high-water mark of the address space it
# was forked from (it survives fork + exec), so a child of this (large) process would report
# at least this process's peak. A bare interpreter in between resets that floor to ~10 MB.
LAUNCHER = "import subprocess, sys; sys.exit(subprocess.run(sys.argv[1:]).returncode)"


def run_child(what: str, args, qrels_path=None, run_path=None):
    cmd = [
        sys.executable, "-c", LAUNCHER,
        sys.executable, str(Path(__file__).resolve()), "--child", what,
        "--queries", str(args.queries), "--docs", str(args.docs), "--seed", str(args.seed),
    ]
    if qrels_path is not None:
        cmd += ["--qrels-path", str(qrels_path), "--run-path", str(run_path)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        tail = (p.stderr.strip().splitlines() or ["?"])[-1]
        return None, f"child failed: {tail[:160]}"
    return json.loads(p.stdout.strip().splitlines()[-1]), None


# --------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------


class Report:
    def __init__(self):
        self.rows: list[tuple[str, str, str, str, str, str]] = []
        self.notes: list[str] = []
        self.targets: list[tuple[str, str, str]] = []
        self.means: dict[str, list[float]] = {}

    def note(self, text: str) -> str:
        self.notes.append(text)
        return f"[{len(self.notes)}]"

    def row(self, sec, path, who, value="-", ratio="-", note=""):
        self.rows.append((sec, path, who, value, ratio, note))

    def target(self, what: str, measured, ok: bool | None, fmt="{:.2f}x"):
        if measured is None:
            m = "n/a"
        else:
            m = measured if isinstance(measured, str) else fmt.format(measured)
        status = "n/a" if ok is None else ("PASS" if ok else "FAIL")
        self.targets.append((what, m, status))

    def print(self, header: list[str]):
        print("\n".join(header))
        print()
        cols = ["#", "path", "contender", "value", "vs qafast", "note"]
        widths = [max([len(c), *(len(r[i]) for r in self.rows)]) for i, c in enumerate(cols)]

        def line(cells):
            return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths)) + " |"

        print(line(cols))
        print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
        for r in self.rows:
            print(line(r))
        print()
        if self.means:
            print("Mean values (same data):")
            w = max(len(k) for k in self.means)
            print("  " + " " * w + "".join(f"{m:>11}" for m in SHORT))
            for k, v in self.means.items():
                print("  " + k.ljust(w) + "".join(f"{x:11.6f}" for x in v))
            print()
        print("Targets:")
        w = max(len(t[0]) for t in self.targets) if self.targets else 0
        for what, m, status in self.targets:
            print(f"  {status:<4}  {what.ljust(w)}  {m}")
        print()
        print("Notes:")
        for i, n in enumerate(self.notes, 1):
            print(f"  [{i}] {n}")


def ratio(t: Timing | None, ref: Timing | None) -> str:
    if t is None or ref is None or ref.seconds <= 0:
        return "-"
    return f"{t.seconds / ref.seconds:.2f}x"


def secs(t: Timing | None) -> str:
    return "-" if t is None else t.label


def attempt(rep: Report, label: str, fn):
    """Run fn(); on failure log the traceback and return (None, note)."""
    try:
        return fn(), None
    except Exception as exc:
        log(f"{label} failed:\n{traceback.format_exc()}")
        return None, rep.note(f"{label} failed: {type(exc).__name__}: {str(exc)[:200]}")


# --------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--queries", type=int, default=None, help="number of queries (default 100000)")
    ap.add_argument("--docs", type=int, default=100, help="retrieved docs per query (default 100)")
    ap.add_argument("--quick", action="store_true", help="10,000 queries (smoke test, < 1 min)")
    ap.add_argument("--seed", type=int, default=20240607)
    ap.add_argument("--reps", type=int, default=3, help="timed repetitions per row (median)")
    ap.add_argument("--no-memory", action="store_true", help="skip the peak-memory rows")
    ap.add_argument("--child", choices=CHILD_KINDS, help=argparse.SUPPRESS)
    ap.add_argument("--qrels-path", help=argparse.SUPPRESS)
    ap.add_argument("--run-path", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.queries is None:
        args.queries = 10_000 if args.quick else 100_000
    if args.child:
        return child_main(args)
    _common.REPS = max(1, args.reps)
    with tempfile.TemporaryDirectory(prefix="qafast-bench-") as tmp:
        return bench(args, Path(tmp))


def bench(args, tmp: Path) -> int:
    warnings.filterwarnings("ignore", module=r"numba(\..*)?")
    warnings.filterwarnings("ignore", module=r"ranx(\..*)?")
    try:
        from numba.core.errors import NumbaWarning

        warnings.simplefilter("ignore", NumbaWarning)
    except Exception:
        pass

    rep = Report()
    exit_code = 0
    n, d = args.queries, args.docs
    machine = machine_info()  # load average before this benchmark adds its own
    warm_n = max(1, min(1_000, n // 10))
    qafast, qerr = import_qafast()

    # The TREC files (row 3, written by a child: same seed, same data) and the peak-memory
    # children (row 4) come first, so they do not compete with this process's data for RAM.
    qp, rp = tmp / "qrels.txt", tmp / "run.txt"
    t0 = time.perf_counter()
    log(f"writing TREC files ({n:,} queries x {d} docs) in a child process")
    wrote, werr = run_child("write-files", args, qp, rp)
    if wrote is None:
        raise SystemExit(f"could not write the TREC files: {werr}")
    n_lines = wrote["n_lines"]
    log(f"wrote {n_lines:,} run lines in {time.perf_counter() - t0:.1f} s")
    mem_results = {}
    if not args.no_memory:
        log(f"row 4: peak memory (child processes; parent RSS now {vm_hwm_mb() or 0:.0f} MB)")
        have_pytrec = optional_import("pytrec_eval")[0] is not None
        for kind in MEM_KINDS:
            if kind.startswith("pytrec") and not have_pytrec:
                continue
            if kind.startswith("qafast") and (qerr or qafast_missing(qafast, "evaluate")):
                continue
            files = (qp, rp) if kind.endswith("-file") else (None, None)
            log(f"  child {kind}")
            mem_results[kind] = run_child(kind, args, *files)

    log(f"generating data: {n:,} queries x {d} docs")
    data = make_data(n, d, args.seed)
    small = data.subsample(warm_n)
    n_tied, differ = tie_stats(data)
    qrels, run = data.to_dicts()
    sq, sr = small.to_dicts()
    n_judged = int(data.qrel_ids.size)
    n_rel = int(np.count_nonzero(data.qrel_grades >= 1))

    header = [
        f"qafast ranking benchmark: {n:,} queries x {d} retrieved docs, "
        f"5 measures at once ({', '.join(SHORT)})",
        *machine,
        f"data: seed {args.seed}; {n_tied:.1f} tied docs/query on average (2-decimal scores); "
        f"{differ:.0%} of tied pairs order differently as 'd{{id}}' strings than as ints; "
        f"{n_judged:,} judged docs ({n_rel:,} with grade >= 1), 4-8 per query, grades 0-3, "
        f"~25% of them not retrieved",
        f"timing: time.perf_counter, median of {_common.REPS} warm repetition"
        f"{'s' if _common.REPS > 1 else ''} (1 run if the "
        "first takes > 20 s; warm-up on a subsample is not timed); vs qafast = contender / qafast "
        "(> 1: qafast is faster or smaller)",
    ]

    pytrec_eval, perr = optional_import("pytrec_eval")
    ranx, rerr = optional_import("ranx")
    irm, ierr = optional_import("ir_measures")

    # ---------------------------------------------------------------- 1. dict path
    path1 = "dict-of-dicts, build+evaluate"
    log("row 1: dict-of-dicts")
    q_dict = None
    miss = qerr or qafast_missing(qafast, "evaluate")
    if miss:
        rep.row("1", path1, "qafast", "-", "-", rep.note(miss))
    else:
        q_dict, note = attempt(rep, "qafast dict", lambda: time_call(
            lambda: qafast_dict(qafast, qrels, run),
            warmup=lambda: qafast_dict(qafast, sq, sr)))
        rep.row("1", path1, "qafast", secs(q_dict), "1.00x" if q_dict else "-", note or "")
        if q_dict:
            rep.means["qafast (dict)"] = q_dict.result

    p_dict = None
    pytrec_per_query = None
    if pytrec_eval is None:
        rep.row("1", path1, "pytrec_eval", "-", "-", rep.note(perr))
    else:
        p_dict, note = attempt(rep, "pytrec_eval dict", lambda: time_call(
            lambda: pytrec_dict(pytrec_eval, qrels, run),
            warmup=lambda: pytrec_dict(pytrec_eval, sq, sr)))
        n_rr = rep.note(
            "pytrec_eval has no cutoff for reciprocal rank: its row computes recip_rank over "
            "the whole ranking (same cost); its mean RR below is recip_rank, and row 5 checks "
            "qafast's mrr@10 against pytrec_eval run on the run truncated to the top 10 in "
            "trec_eval order. Its time includes compute_aggregated_measure for the means.")
        rep.row("1", path1, f"pytrec_eval {dist_version('pytrec-eval-terrier')}",
                secs(p_dict), ratio(p_dict, q_dict), note or n_rr)
        if p_dict:
            rep.means["pytrec_eval (RR uncut)"] = p_dict.result[0]
            pytrec_per_query = p_dict.result[1]
            p_dict.result = p_dict.result[0]

    if ranx is None:
        rep.row("1", path1, "ranx", "-", "-", rep.note(rerr))
    else:
        r_dict, note = attempt(rep, "ranx dict", lambda: time_call(
            lambda: ranx_dict(ranx, qrels, run),
            warmup=lambda: ranx_dict(ranx, sq, sr)))
        n_ranx = rep.note(
            "ranx: Qrels(dict) + Run(dict) + evaluate(..., threads=1); numba JIT compiled in "
            "the untimed warm-up. ranx orders tied scores arbitrarily (argsort), not by "
            "trec_eval's docno rule, so its means differ slightly on tied data.")
        rep.row("1", path1, f"ranx {dist_version('ranx')}", secs(r_dict),
                ratio(r_dict, q_dict), note or n_ranx)
        if r_dict:
            rep.means["ranx"] = r_dict.result

    if irm is None:
        rep.row("1", path1, "ir_measures", "-", "-", rep.note(ierr))
    else:
        def irm_row():
            sub = data.subsample(max(1, n // 10))
            sq10, sr10 = sub.to_dicts()
            t10 = time_call(lambda: ir_measures_dict(irm, sq10, sr10), reps=1,
                            warmup=lambda: ir_measures_dict(irm, sq, sr))
            est = t10.seconds * n / sub.n_queries
            if est > 60:
                return Timing(est, 1, t10.result), True
            return time_call(lambda: ir_measures_dict(irm, qrels, run)), False

        out, note = attempt(rep, "ir_measures dict", irm_row)
        i_dict, scaled = out if out else (None, False)
        if scaled:
            n_i = rep.note(
                f"ir_measures: estimated at > 60 s at full size, so it ran on a 10% subsample "
                f"and its time is scaled x10 (value marked ~).")
        else:
            n_i = rep.note("ir_measures: calc_aggregate([RR@10, AP@100, nDCG@10, P@10, R@100], "
                           "qrels_dict, run_dict); it picks a backend per measure: pytrec_eval "
                           "for all but RR@10, which pytrec_eval lacks, so that one goes to its "
                           "msmarco provider, whose order among tied scores is not trec_eval's "
                           "(hence its slightly different MRR@10).")
        val = secs(i_dict) if not scaled else f"~{i_dict.seconds:.1f} s (est.)"
        rep.row("1", path1, f"ir_measures {dist_version('ir-measures')}", val,
                ratio(i_dict, q_dict), note or n_i)
        if i_dict and not scaled:
            rep.means["ir_measures"] = i_dict.result
    if p_dict and q_dict:
        r = p_dict.seconds / q_dict.seconds
        rep.target("1. dict: qafast >= 5x faster than pytrec_eval", r, r >= 5)
    else:
        rep.target("1. dict: qafast >= 5x faster than pytrec_eval", None, None)

    # ---------------------------------------------------------------- 2. arrays
    path2 = "int numpy arrays, evaluate only"
    log("row 2: integer arrays")
    q_w1 = q_w2 = None
    q_arr_objs = None
    miss = qerr or qafast_missing(qafast, "evaluate", "Qrels.from_arrays", "Run.from_arrays")
    if miss:
        rep.row("2", path2, "qafast workers=1", "-", "-", rep.note(miss))
    else:
        def build_arrays(dd: Data):
            return (qafast.Qrels.from_arrays(*dd.qrels_arrays()),
                    qafast.Run.from_arrays(*dd.run_arrays()))

        def qa_build():
            t0 = time.perf_counter()
            objs = build_arrays(data)
            return objs, time.perf_counter() - t0

        built, note = attempt(rep, "qafast from_arrays", qa_build)
        if built:
            q_arr_objs, t_build = built
            small_objs = build_arrays(small)
            Qa, Ra = q_arr_objs
            q_w1, note = attempt(rep, "qafast arrays workers=1", lambda: time_call(
                lambda: qafast_means(qafast.evaluate(Qa, Ra, MEASURES_QAFAST, workers=1)),
                warmup=lambda: qafast.evaluate(*small_objs, MEASURES_QAFAST, workers=1)))
            n_b = rep.note(f"qafast Qrels.from_arrays + Run.from_arrays (not timed in the row) "
                           f"took {t_build:.3f} s; ties broken by larger int doc id.")
            rep.row("2", path2, "qafast workers=1", secs(q_w1), "1.00x" if q_w1 else "-",
                    note or n_b)
            q_w2, note = attempt(rep, "qafast arrays workers=2", lambda: time_call(
                lambda: qafast_means(qafast.evaluate(Qa, Ra, MEASURES_QAFAST, workers=2)),
                warmup=lambda: qafast.evaluate(*small_objs, MEASURES_QAFAST, workers=2)))
            rep.row("2", path2, "qafast workers=2", secs(q_w2), ratio(q_w2, q_w1), note or "")
            if q_w1:
                rep.means["qafast (arrays, int ids)"] = q_w1.result
        else:
            rep.row("2", path2, "qafast workers=1", "-", "-", note)

    rx_eval = None
    if ranx is None:
        rep.row("2", path2, "ranx evaluate", "-", "-", rep.note(rerr))
    else:
        def ranx_prebuilt():
            Q, R = ranx.Qrels(qrels), ranx.Run(run)
            ranx.evaluate(Q, R, MEASURES_RANX, threads=1)  # warm: JIT + ranx's sort flag
            t1 = time_call(lambda: ranx.evaluate(Q, R, MEASURES_RANX, threads=1))
            # threads=0 ("all") would keep numba's current thread count, so ask explicitly
            t0 = time_call(lambda: ranx.evaluate(Q, R, MEASURES_RANX, threads=os.cpu_count()))
            return t1, t0

        out, note = attempt(rep, "ranx evaluate", ranx_prebuilt)
        rx_eval, rx_all = out if out else (None, None)
        n_rx = rep.note("ranx evaluate only, on Qrels/Run prebuilt from the dicts (its own numba "
                        "typed dicts, already sorted); includes its per-call conversion to typed "
                        "lists and saving per-query scores in the Run (its defaults).")
        rep.row("2", path2, "ranx evaluate threads=1", secs(rx_eval), ratio(rx_eval, q_w1),
                note or n_rx)
        rep.row("2", path2, f"ranx evaluate threads={os.cpu_count()}", secs(rx_all),
                ratio(rx_all, q_w1), note or "")

    nb_1 = nb_2 = None
    nb_per_query = None
    K, kerr = optional_import("_numba_kernel")
    if K is None:
        rep.row("2", path2, "numba kernel", "-", "-", rep.note(
            f"numba kernel skipped ({kerr}); `pip install numba`"))
    else:
        def nb_row(fn):
            return time_call(lambda: fn(data).mean(axis=0).tolist(),
                             warmup=lambda: fn(small))

        nb_1, note = attempt(rep, "numba serial", lambda: nb_row(K.evaluate_serial))
        n_nb = rep.note("numba: hand-written @njit(nogil=True) loop in benchmarks/_numba_kernel.py "
                        "over dense (n_q, n_docs) id/score arrays + CSR qrels already in memory; "
                        "rank = 1 + #(higher score, or equal score and larger id); time includes "
                        "the mean over queries. 2-thread variant: parallel=True prange over "
                        "chunks.")
        rep.row("2", path2, f"numba kernel 1 thread ({dist_version('numba')})", secs(nb_1),
                ratio(nb_1, q_w1), note or n_nb)
        nb_2, note = attempt(rep, "numba prange", lambda: nb_row(
            lambda dd: K.evaluate_parallel(dd, 2)))
        rep.row("2", path2, "numba kernel prange 2 threads", secs(nb_2), ratio(nb_2, q_w1),
                note or "")
        if nb_1:
            rep.means["numba kernel (int ids)"] = nb_1.result
            nb_per_query = K.evaluate_serial(data)

    t = "2. arrays: qafast >= 10x faster than ranx evaluate (threads=1)"
    if rx_eval and q_w1:
        rep.target(t, rx_eval.seconds / q_w1.seconds, rx_eval.seconds / q_w1.seconds >= 10)
    else:
        rep.target(t, None, None)
    t = "2. arrays: qafast workers=1 within 2x of numba 1 thread (qafast/numba)"
    if nb_1 and q_w1:
        rep.target(t, q_w1.seconds / nb_1.seconds, q_w1.seconds / nb_1.seconds <= 2)
    else:
        rep.target(t, None, None)
    t = "2. arrays: workers=2 >= 1.6x faster than workers=1"
    if q_w1 and q_w2:
        sp = q_w1.seconds / q_w2.seconds
        measured = f"{sp:.2f}x"
        if nb_1 and nb_2:
            # control: if numba's own 2-thread kernel does not speed up either, the second
            # core was busy with other work and this target says nothing about qafast
            ctl = nb_1.seconds / nb_2.seconds
            measured += f" (numba prange control: {ctl:.2f}x)"
            if ctl < 1.3:
                rep.note(f"the numba prange control ran only {ctl:.2f}x faster on 2 threads "
                         f"than on 1: the second core was busy (see the load average in the "
                         f"header) or the run is too small for a second thread to pay off, so "
                         f"the workers=2 target says little about qafast in this run")
        rep.target(t, measured, sp >= 1.6)
    else:
        rep.target(t, None, None)

    # identical per-query results with workers=1 / 2, and against the numba kernel
    if q_arr_objs is not None and q_w1 and q_w2:
        def check_workers():
            Qa, Ra = q_arr_objs
            a = qafast.evaluate(Qa, Ra, MEASURES_QAFAST, workers=1, per_query=True)
            b = qafast.evaluate(Qa, Ra, MEASURES_QAFAST, workers=2, per_query=True)
            return a, b

        out, note = attempt(rep, "qafast per_query workers=1/2", check_workers)
        ok = None
        if out:
            a, b = out
            ok = a == b
            nq = len(a)
            rep.row("2", path2, "per-query workers=1 == workers=2", f"{ok} ({nq:,} queries)",
                    "-", "" if ok else rep.note("per-query values differ between workers=1 and 2"))
            if nb_per_query is not None:
                qa = np.zeros_like(nb_per_query)
                for qid, vals in a.items():
                    qa[int(qid)] = [vals[m] for m in MEASURES_QAFAST]
                diff = np.abs(qa - nb_per_query).max(axis=0) if len(a) == n else None
                txt = ("max |diff| " + " ".join(f"{x:.1e}" for x in diff)) if diff is not None \
                    else f"query count differs ({len(a)} vs {n})"
                rep.row("2", path2, "qafast arrays vs numba, per query", txt, "-",
                        rep.note("order of the 5 diffs: " + ", ".join(SHORT)))
        else:
            rep.row("2", path2, "per-query workers=1 == workers=2", "-", "-", note)
        rep.target("2. arrays: identical per-query values, workers=1 vs 2",
                   None if ok is None else str(ok), ok)
        if ok is False:
            log("ASSERTION FAILED: per-query values differ between workers=1 and workers=2")
            exit_code = 1

    # ---------------------------------------------------------------- 3. files
    path3 = "TREC files, parse+evaluate"
    log("row 3: TREC files")
    small_q, small_r = tmp / "qrels.small", tmp / "run.small"
    small.write_trec(small_q, small_r)
    mb = (qp.stat().st_size + rp.stat().st_size) / 1e6
    warm_cache = lambda: [p.read_bytes() and None for p in (qp, rp)]  # noqa: E731

    q_file = p_file = None
    miss = qerr or qafast_missing(qafast, "evaluate", "Qrels.from_file", "Run.from_file")
    if miss:
        rep.row("3", path3, "qafast", "-", "-", rep.note(miss))
    else:
        def qf():
            warm_cache()
            return time_call(lambda: qafast_file(qafast, qp, rp),
                             warmup=lambda: qafast_file(qafast, small_q, small_r))

        q_file, note = attempt(rep, "qafast file", qf)
        rep.row("3", path3, "qafast", secs(q_file), "1.00x" if q_file else "-",
                note or rep.note(f"files: {n_lines:,} run lines + {n_judged:,} qrels lines, "
                                 f"{mb:.0f} MB, in a temp dir deleted afterwards; OS page "
                                 f"cache warm for both contenders."))
        if q_file:
            rep.means["qafast (files)"] = q_file.result
    if pytrec_eval is None:
        rep.row("3", path3, "pytrec_eval", "-", "-", rep.note(perr))
    else:
        def pf():
            warm_cache()
            return time_call(lambda: pytrec_file(pytrec_eval, qp, rp),
                             warmup=lambda: pytrec_file(pytrec_eval, small_q, small_r))

        p_file, note = attempt(rep, "pytrec_eval file", pf)
        rep.row("3", path3, "pytrec_eval parse_qrel/parse_run+evaluate", secs(p_file),
                ratio(p_file, q_file), note or "")
    t = "3. files: qafast >= 10x faster than pytrec_eval"
    if p_file and q_file:
        rep.target(t, p_file.seconds / q_file.seconds, p_file.seconds / q_file.seconds >= 10)
    else:
        rep.target(t, None, None)

    # ---------------------------------------------------------------- 4. memory
    if not args.no_memory:
        n_mem = rep.note(
            "peak memory: resource.getrusage(RUSAGE_SELF).ru_maxrss at the end of a child "
            "process (`--child WHAT`) that imports and runs only that contender, started "
            "through a bare interpreter (Linux carries the parent's RSS high-water mark into "
            "a forked child's ru_maxrss). Once its inputs are ready the child resets the "
            "high-water mark (/proc/self/clear_refs 5), so the peak excludes the transient "
            "memory of generating the data; it includes the inputs themselves: the "
            "dict-of-dicts on the dict path ('data only' = that baseline), an interpreter "
            "with numpy on the file path ('interpreter only'). Linux VmHWM is shown where it "
            "differs from ru_maxrss by > 5%.")
        labels = {"base-dict": "data only (no evaluation)", "base-file": "interpreter only",
                  "pytrec-dict": "pytrec_eval", "qafast-dict": "qafast",
                  "pytrec-file": "pytrec_eval", "qafast-file": "qafast"}
        for path_kind, path4 in (("dict", "peak RSS, dict path"), ("file", "peak RSS, file path")):
            qres = mem_results.get(f"qafast-{path_kind}", (None, "qafast not available"))
            qmb = qres[0]["maxrss_mb"] if qres[0] else None
            for who in ("base", "qafast", "pytrec"):
                res, err = mem_results.get(f"{who}-{path_kind}", (None, "skipped"))
                name = labels[f"{who}-{path_kind}"]
                if res is None:
                    rep.row("4", path4, name, "-", "-", rep.note(err) if err != "skipped"
                            else "skipped")
                    continue
                mbv = res["maxrss_mb"]
                hwm = res.get("vmhwm_mb")
                extra = f" (VmHWM {hwm:,.0f})" if hwm and abs(hwm - mbv) > 0.05 * mbv else ""
                if not res.get("reset"):
                    extra += " (peak not reset: includes data generation)"
                rat = "-" if qmb is None or who == "base" else f"{mbv / qmb:.2f}x"
                rep.row("4", path4, name, f"{mbv:,.0f} MB{extra}", rat,
                        n_mem if who == "base" else "")
            pres = mem_results.get(f"pytrec-{path_kind}", (None, None))[0]
            t = f"4. memory ({path_kind}): qafast peak <= pytrec_eval peak"
            if pres and qmb is not None:
                rep.target(t, qmb / pres["maxrss_mb"], qmb <= pres["maxrss_mb"],
                           fmt="{:.2f}x")
            else:
                rep.target(t, None, None)

    # ---------------------------------------------------------------- 5. agreement
    log("row 5: agreement")
    path5 = "agreement, max |qafast - pytrec_eval|"
    miss = qerr or qafast_missing(qafast, "evaluate")
    if pytrec_per_query is None or miss:
        rep.row("5", path5, "-", "-", "-", rep.note(miss or "pytrec_eval results not available"))
    else:
        def agreement():
            pq = qafast.evaluate(qrels, run, MEASURES_QAFAST_TREC, per_query=True)
            pq10 = qafast.evaluate(qrels, run, ["mrr@10"], per_query=True)
            ev = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"})
            rr10 = ev.evaluate(truncate_trec_order(run, 10))
            return pq, pq10, rr10

        out, note = attempt(rep, "agreement", agreement)
        if out:
            pq, pq10, rr10 = out
            common = pytrec_per_query.keys() & pq.keys()
            if len(common) != len(pytrec_per_query) or len(common) != len(pq):
                rep.note(f"query sets differ: qafast {len(pq):,}, pytrec_eval "
                         f"{len(pytrec_per_query):,}, common {len(common):,}")
            worst = 0.0
            for qname, pkey in zip(MEASURES_QAFAST_TREC, PYTREC_KEYS):
                diff = max(abs(float(pq[q][qname]) - pytrec_per_query[q][pkey]) for q in common)
                worst = max(worst, diff)
                rep.row("5", path5, f"{qname} vs {pkey}", f"{diff:.2e}", "-",
                        f"{len(common):,} queries")
            diff = max(abs(float(pq10[q]["mrr@10"]) - rr10[q]["recip_rank"]) for q in common)
            worst = max(worst, diff)
            rep.row("5", path5, "mrr@10 vs recip_rank(top-10 run)", f"{diff:.2e}", "-",
                    rep.note("pytrec_eval stores scores as float32 (trec_eval's float sim); with "
                             "2-decimal scores in [5.00, 7.19] that creates no extra ties, so "
                             "both rank by the same trec_eval rule (score desc, docno desc)."))
            rep.target("5. agreement: max |qafast - pytrec_eval| over 5 measures <= 1e-12",
                       worst, worst <= 1e-12, fmt="{:.1e}")
        else:
            rep.row("5", path5, "-", "-", "-", note)

    log("done")
    header[2] += f"; at end: {load_average()}"
    rep.print(header)
    if exit_code:
        print("\nFAILED: qafast per-query values differ between workers=1 and workers=2")
    return exit_code


if __name__ == "__main__":
    raise SystemExit(main())
