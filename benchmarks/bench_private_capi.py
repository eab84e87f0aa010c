#!/usr/bin/env python
"""The kernels' reads of CPython's own structures against their public-C-API twins.

    python benchmarks/bench_private_capi.py                 # 1,000,000 questions, 8 rounds
    python benchmarks/bench_private_capi.py --questions 100000 --rounds 4

``answer_intern_flat`` reads a str's cached hash from CPython's ``PyASCIIObject`` to
prefetch table slots (``_portable.h``; the public twin calls ``PyObject_Hash``). Each round
times it with the private path on and off (``_kernels._set_private_capi``; which goes first
alternates), on the same seeded data (bench_answers' generator) and fresh str objects; the
medians are printed. ``squad_flatten_flat`` reads nothing private (its dict key-table
prefetch did not pay and is gone): its row is the control for the machine's noise. Times are
the thread's CPU time, which a shared machine disturbs less than wall-clock time. The
interned indices must be identical either way.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import import_qafast, load_average, machine_info  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=8)
    args = ap.parse_args()
    import_qafast()
    import numpy as np

    from bench_answers import make_squad
    from qafast import _kernels as K

    data = make_squad(args.questions, 2016, v2=False)
    articles, preds = data[0]["data"], data[1]

    def flatten():
        ids: list = []
        texts: list = []
        t = time.thread_time()
        _, off = K.squad_flatten_flat(articles, ids, texts)
        return time.thread_time() - t, ids, texts, np.asarray(off)

    _, ids, texts, off = flatten()
    plist = [preds[i] for i in ids]

    def intern():
        # fresh str objects, so that no hash is cached from an earlier round
        pl = [(p + ".")[:-1] for p in plist]
        tl = [(t + ".")[:-1] for t in texts]
        ps = np.empty(len(pl), np.int32)
        rs = np.empty(len(tl), np.int32)
        t = time.thread_time()
        K.answer_intern_flat(pl, tl, off, [], ps, rs)
        return time.thread_time() - t, ps, rs

    times: dict = {(on, what): [] for on in (True, False) for what in ("flatten", "intern")}
    outs = {}
    gc.disable()
    try:
        for r in range(args.rounds):
            for on in ((True, False) if r % 2 == 0 else (False, True)):
                K._set_private_capi(on)
                times[on, "flatten"].append(flatten()[0])
                t, ps, rs = intern()
                times[on, "intern"].append(t)
                outs[on] = (ps, rs)
    finally:
        K._set_private_capi(True)
        gc.enable()
    same = all((a == b).all() for a, b in zip(outs[True], outs[False]))
    print("\n".join(machine_info()))
    print(f"load average {load_average()}; {args.questions:,} questions, "
          f"{args.rounds} rounds; build {K._build_features()}")
    for what, name in (("flatten", "squad_flatten_flat"), ("intern", "answer_intern_flat")):
        a = statistics.median(times[True, what]) * 1e3
        b = statistics.median(times[False, what]) * 1e3
        print(f"{name:20s} private {a:8.1f} ms   public {b:8.1f} ms   public/private "
              f"{b / a:5.3f}")
    print("identical indices:", same)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
