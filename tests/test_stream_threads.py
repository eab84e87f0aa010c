"""Many Python threads on shared inputs: every result is the single-thread one.

The ranking kernels run without the GIL (the streaming kernel included), so these threads
really run at once; the answer kernels hold it for part of their work, and must still be
correct."""

import threading

import numpy as np

import qafast


def run_threads(work, n=8):
    results = [None] * n
    errors = []

    def target(k):
        try:
            results[k] = work(k)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=target, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    return results


def test_shared_inputs_give_every_thread_the_single_thread_result():
    rng = np.random.default_rng(5)
    scores = rng.normal(size=(300, 50)).astype(np.float32)
    scores.flags.writeable = False  # shared, read-only
    rel = (rng.random((300, 50)) < 0.1).astype(np.int64) * rng.integers(1, 4, size=(300, 50))
    measures = ["mrr@10", "ndcg@10", "map", "recall@20", "bpref"]
    qrels = qafast.Qrels.from_arrays(np.repeat(np.arange(300), 50), np.tile(np.arange(50), 300),
                                     rel.ravel())
    run = qafast.Run.from_arrays(np.repeat(np.arange(300), 50), np.tile(np.arange(50), 300),
                                 scores.ravel())
    preds = ["Paris", "the tower", "", "1889", "b c", "北京大学"] * 200
    golds = [["paris"], ["Eiffel Tower"], [], ["1889", "in 1889"], ["a b c"], ["北京"]] * 200

    def once(_):
        m = qafast.RankingMetrics(measures)  # metric objects are per thread
        for lo in range(0, 300, 64):
            m.update(scores[lo:lo + 64], rel[lo:lo + 64])
        return (m.compute(), qafast.evaluate(qrels, run, measures),
                qafast.f1(preds, golds), qafast.exact_match(preds, golds),
                qafast.f1(preds, golds, unit="char"))

    want = once(None)
    for got in run_threads(once, 8):
        assert got == want
