"""qafast.integrations.torch.sync across two real processes on the gloo backend (CPU)."""

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import qafast

torch = pytest.importorskip("torch")

SRC = Path(qafast.__file__).resolve().parent.parent
MEASURES = ["mrr@10", "ndcg@10", "map", "recall@20", "gm_map", "bpref"]

WORKER = r'''
import json, os, sys
import numpy as np
import torch.distributed as dist
import qafast
from qafast.integrations.torch import sync, sync_and_compute

sys.path.insert(0, os.environ["QAFAST_TEST_DIR"])
from test_integrations_torch import data, MEASURES

rank = int(os.environ["RANK"])
dist.init_process_group("gloo", rank=rank, world_size=2)
batches, rows, answers = data()
out = {}

m = qafast.RankingMetrics(MEASURES)
for i, (s, r) in enumerate(batches):
    if i % 2 == rank:
        m.update(s, r)
before = m.state_dict()
out["batch"] = sync_and_compute(m)
out["batch_again"] = sync(m).compute()  # the local metric is unchanged: nothing doubles
assert np.array_equal(before["sums"], m.state_dict()["sums"])

# rows: rank 1 also gets rank 0's first rows, as a padded DistributedSampler gives them
q, d, s, g = rows
half = len(q) // 2
part = slice(0, half) if rank == 0 else slice(half, None)
for ids in (True, False):
    r = qafast.RankingMetrics(MEASURES)
    sel = [np.concatenate([a[part], a[:5]]) if rank == 1 and ids else a[part]
           for a in (q, d, s, g)]
    for k in range(0, len(sel[0]), 37):
        chunk = [a[k:k + 37] for a in sel]
        if ids:
            r.update(chunk[2], chunk[3], chunk[0], chunk[1])
        else:
            r.update(chunk[2], chunk[3], chunk[0])
    out["rows" if ids else "rows_no_ids"] = sync_and_compute(r)

preds, golds = answers
a = qafast.AnswerMetrics()
a.update(preds[rank::2], golds[rank::2])
out["answers"] = sync_and_compute(a)

# one rank saw only empty batches, then no rank saw anything
for kind in ("batch", "rows"):
    e = qafast.RankingMetrics(MEASURES)
    if rank == 0:
        e.update(np.zeros((0, 4)), np.zeros((0, 4)))
        e.update(np.zeros(0), np.zeros(0), np.zeros(0, dtype=np.int64))
    elif kind == "batch":
        e.update(*batches[0])
    else:
        e.update(s[:40], g[:40], q[:40], d[:40])
    out["one_empty_" + kind] = sync_and_compute(e)
try:
    sync_and_compute(qafast.RankingMetrics(MEASURES))
    out["all_empty"] = "no error"
except ValueError as e:
    out["all_empty"] = str(e)
ea = qafast.AnswerMetrics()
ea.update(preds[:3] if rank else [], golds[:3] if rank else [])
out["answers_one_empty"] = sync_and_compute(ea)

# a rank whose metric has other options is an error on every rank
bad = qafast.RankingMetrics(["mrr@10"] if rank == 0 else ["mrr@20"])
try:
    sync(bad)
    out["mismatch"] = "no error"
except ValueError as e:
    out["mismatch"] = str(e)
print(json.dumps(out))
dist.destroy_process_group()
'''


def data():
    rng = np.random.default_rng(7)
    batches = []
    for _ in range(9):
        nq = int(rng.integers(1, 6))
        s = rng.integers(0, 6, size=(nq, 12)).astype(np.float32) / 5  # ties
        r = (rng.random((nq, 12)) < 0.2).astype(np.int64) * rng.integers(1, 3, size=(nq, 12))
        batches.append((s, r))
    n = 300
    q = rng.integers(0, 25, size=n)
    d = rng.permutation(n)
    s = rng.integers(0, 8, size=n) / 7
    g = (rng.random(n) < 0.25).astype(np.int64)
    preds = ["Paris", "the tower", "", "1889", "b c"] * 7
    golds = [["paris"], ["Eiffel Tower"], [], ["1889", "in 1889"], ["a b c"]] * 7
    return batches, (q, d, s, g), (preds, golds)


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_two_gloo_processes_give_the_single_process_result(tmp_path):
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()),
               WORLD_SIZE="2", QAFAST_TEST_DIR=str(Path(__file__).parent),
               PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]))
    procs = [subprocess.Popen([sys.executable, str(script)], env=dict(env, RANK=str(r)),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for r in range(2)]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=240)
        assert p.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    assert results[0] == results[1]
    got = results[0]

    batches, (q, d, s, g), (preds, golds) = data()
    one = qafast.RankingMetrics(MEASURES)
    for sb, rb in batches:
        one.update(sb, rb)
    assert got["batch"] == got["batch_again"] == one.compute()

    rows = qafast.RankingMetrics(MEASURES)
    rows.update(s, g, q, d)
    assert got["rows"] == rows.compute()
    keep = np.isin(q, q[g >= 1])
    assert got["rows"] == qafast.evaluate(qafast.Qrels.from_arrays(q[keep], d[keep], g[keep]),
                                          qafast.Run.from_arrays(q, d, s), MEASURES)
    # without document ids ties follow arrival: rank 0's rows, then rank 1's
    no_ids = qafast.RankingMetrics(MEASURES)
    no_ids.update(s, g, q)
    assert got["rows_no_ids"] == no_ids.compute()

    answers = qafast.AnswerMetrics()
    answers.update(preds, golds)
    assert got["answers"] == answers.compute()
    one = qafast.RankingMetrics(MEASURES)
    one.update(*batches[0])
    assert got["one_empty_batch"] == one.compute()
    one = qafast.RankingMetrics(MEASURES)
    one.update(s[:40], g[:40], q[:40], d[:40])
    assert got["one_empty_rows"] == one.compute()
    assert got["all_empty"].startswith("no query measured yet")
    answers = qafast.AnswerMetrics()
    answers.update(preds[:3], golds[:3])
    assert got["answers_one_empty"] == answers.compute()
    assert "the ranks' metrics differ: rank 0 has" in got["mismatch"]
    assert "'measures': ['mrr@20']" in got["mismatch"]


def test_sync_needs_an_initialized_process_group():
    from qafast.integrations.torch import sync

    with pytest.raises(RuntimeError, match="init_process_group"):
        sync(qafast.RankingMetrics("map"))
    with pytest.raises(TypeError, match="RankingMetrics or an AnswerMetrics"):
        sync({"map": 1.0})
