"""Differential fuzzing of ``qafast trec -R qrels_jg`` and ``-Z`` against a trec_eval 10.0
binary (run by hand; CI has no trec_eval binary).

It writes random, tie-heavy judge-group qrels (several groups per query, groups missing for
some queries, zero and negative grades, queries with nothing relevant) and runs, random
z-score files (zero deviations, values equal to the mean), random options (-c, -l, -J, -M,
-q, -n, measure parameters), runs both tools and compares stdout byte for byte::

    python tests/fuzz_trec_prefs.py /path/to/trec_eval --cases 300 --seed 1 --keep /tmp/fz

Cases that trec_eval refuses or crashes on are counted, not compared: a qrels query missing
from the run (without -c), which trec_eval stops on and qafast skips, and a z-score file
without a line for an evaluated query or measure, which can crash trec_eval (its binary
search reads past the end); such files are not generated.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import random
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from qafast.cli import main  # noqa: E402

GRADES = (-1, 0, 0, 0, 1, 1, 1, 2, 2, 3)
SCORES = ("0", "0.5", "0.25", "1", "2", "-1", "3.5", ".5")


def random_jg_case(rng: random.Random):
    qids = sorted({f"q{rng.randint(1, 6)}" for _ in range(rng.randint(1, 4))})
    docs = [f"d{i}" for i in range(rng.randint(1, 25))] + ["D", "é"]
    groups = [str(g) for g in rng.sample(range(5), rng.randint(1, 4))]
    qrels, run = [], []
    for q in qids:
        for g in groups:
            if rng.random() < 0.2:
                continue  # this group did not judge this query
            for d in rng.sample(docs, rng.randint(1, len(docs))):
                qrels.append(f"{q} {g} {d} {rng.choice(GRADES)}")
        if rng.random() < 0.15:
            continue  # a query the run leaves out (trec_eval refuses it without -c)
        for d in rng.sample(docs, rng.randint(1, len(docs))):
            run.append(f"{q} Q0 {d} 1 {rng.choice(SCORES)} r")
    if not run:
        run.append(f"{qids[0]} Q0 {docs[0]} 1 1 r")
    if not qrels:
        qrels.append(f"{qids[0]} 0 {docs[0]} 1")
    rng.shuffle(qrels)
    rng.shuffle(run)
    opts = ["-R", "qrels_jg"]
    for flag in ("-q", "-c", "-J", "-n"):
        if rng.random() < (0.6 if flag == "-c" else 0.3):
            opts.append(flag)
    if rng.random() < 0.3:
        opts.append(f"-l{rng.randint(0, 3)}")
    if rng.random() < 0.2:
        opts.append(f"-M{rng.randint(1, 10)}")
    ms = rng.choice((["qrels_jg"], ["map_avgjg"], ["P_avgjg.1,3,7", "map_avgjg"],
                     ["Rprec_mult_avgjg.0.5,1.0,3"], ["qrels_jg", "P_avgjg.2"]))
    for m in ms:
        opts += ["-m", m]
    return "\n".join(qrels) + "\n", "\n".join(run) + "\n", opts, None


def random_prefs_case(rng: random.Random):
    qids = sorted({f"q{rng.randint(1, 5)}" for _ in range(rng.randint(1, 3))})
    docs = [f"d{i}" for i in range(rng.randint(1, 9))] + ["D", "é"]
    as_qrels = rng.random() < 0.4
    levels = ("0", "1", "2", "3.5", "-1", "0") if rng.random() < 0.5 else ("0", "1")
    prefs, run = [], []
    for q in qids:
        for g in rng.sample(("A", "B", "C"), rng.randint(1, 3)):
            subs = ["0"] if as_qrels else rng.sample(("s1", "s2", "s3"), rng.randint(1, 3))
            used = set()
            for sub in subs:
                pool = rng.sample(docs, rng.randint(1, min(len(docs), 5)))
                for d in pool:
                    if as_qrels and d in used:
                        continue
                    used.add(d)
                    lvl = rng.choice(levels)
                    prefs.append(f"{q} {g} {d} {lvl}" if as_qrels else f"{q} {g} {sub} {d} {lvl}")
        if rng.random() < 0.15:
            continue
        for d in rng.sample(docs, rng.randint(1, len(docs))):
            run.append(f"{q} Q0 {d} 1 {rng.choice(SCORES)} r")
    if not run:
        run.append(f"{qids[0]} Q0 {docs[0]} 1 1 r")
    rng.shuffle(prefs)
    rng.shuffle(run)
    opts = ["-R", "qrels_prefs" if as_qrels else "prefs", "-m", rng.choice(("all_prefs", "prefs"))]
    for flag in ("-q", "-c", "-n"):
        if rng.random() < 0.4:
            opts.append(flag)
    if rng.random() < 0.2:
        opts.append(f"-M{rng.randint(1, 6)}")
    return "\n".join(prefs) + "\n", "\n".join(run) + "\n", opts, None


def random_z_case(rng: random.Random):
    qids = [f"q{i}" for i in range(1, rng.randint(2, 5))]
    docs = [f"d{i}" for i in range(12)]
    qrels, run = [], []
    for q in qids:
        for d in rng.sample(docs, rng.randint(1, 8)):
            qrels.append(f"{q} 0 {d} {rng.choice(GRADES)}")
        for d in rng.sample(docs, rng.randint(1, 12)):
            run.append(f"{q} Q0 {d} 1 {rng.choice(SCORES)} r")
    measures = ("num_ret", "num_rel", "num_rel_ret", "map", "Rprec", "bpref", "recip_rank",
                "P_5", "P_10", "ndcg", "gm_map", "num_q", "runid")
    zs = []
    for q in qids:
        for m in measures:
            mean = rng.choice(("0", "1", "0.5", "3", "0.2500"))
            sd = rng.choice(("0", "0.1", "1", "0.3", "0"))
            zs.append(f"{q} {m} {mean} {sd}")
    rng.shuffle(zs)
    opts = ["-m", "official", "-m", "ndcg"]
    for flag in ("-q", "-n"):
        if rng.random() < 0.5:
            opts.append(flag)
    return "\n".join(qrels) + "\n", "\n".join(run) + "\n", opts, "\n".join(zs) + "\n"


def _reads_stale_memory(qp: Path, rp: Path, opts: list[str]) -> bool:
    """Whether trec_eval's prefs_avgjg_Rnonrel(_ret) would read past a query's judgments."""
    from qafast._trec_prefs import _read_run, read_prefs
    from qafast.reference.prefs import PrefsError, prefs_measures

    judgments = read_prefs(str(qp), opts[opts.index("-R") + 1])
    run, _ = _read_run(str(rp))
    m = [o for o in opts if o.startswith("-M")]
    notes: list = []
    for q, lines in judgments.lines.items():
        try:
            prefs_measures(lines, run.get(q, [("ceci_nest_pas_un_docno", 1.0)]),
                           max_docs=int(m[0][2:]) if m else None, notes=notes)
        except PrefsError:
            pass
    return bool(notes)


def ours(args: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(["trec", "--no-progress", *args])
        except SystemExit as e:
            code = int(e.code or 0)
    return code, out.getvalue()


def main_fuzz() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--cases", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keep", default=None)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    compared = refused = mismatches = stale = 0
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(a.cases):
            make = (random_jg_case, random_z_case, random_prefs_case, random_prefs_case)[i % 4]
            qrels, run, opts, zs = make(rng)
            qp, rp, zp = Path(tmp, "qrels"), Path(tmp, "run"), Path(tmp, "zs")
            qp.write_text(qrels)
            rp.write_text(run)
            if zs is not None:
                zp.write_text(zs)
                opts = [*opts, "-Z", str(zp)]
            if "-R" in opts and opts[opts.index("-R") + 1] in ("prefs", "qrels_prefs") \
                    and _reads_stale_memory(qp, rp, opts):
                stale += 1
                continue
            ref = subprocess.run([a.binary, *opts, str(qp), str(rp)], capture_output=True,
                                 text=True)
            if ref.returncode != 0:
                refused += 1
                continue
            compared += 1
            code, got = ours([*opts, str(qp), str(rp)])
            if code != 0 or got != ref.stdout:
                mismatches += 1
                if a.keep:
                    d = Path(a.keep, f"case{i}")
                    d.mkdir(parents=True, exist_ok=True)
                    for name, text in (("qrels", qrels), ("run", run), ("zs", zs or ""),
                                       ("options", " ".join(opts)),
                                       ("trec_eval.out", ref.stdout), ("qafast.out", got)):
                        (d / name).write_text(text)
    print(f"{compared} compared, {mismatches} mismatches, {refused} refused by trec_eval, "
          f"{stale} not compared (trec_eval's prefs_avgjg_Rnonrel reads stale memory)")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main_fuzz())
