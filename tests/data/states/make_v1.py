"""Writes states_v1.pickle: RankingMetrics and AnswerMetrics states (``state_dict()``) and
whole pickled metrics as qafast wrote them when a state's arrays were numpy arrays (format
version 1, commit 2bcbcce), with the values ``compute()`` gave. tests/test_stream_state.py
loads them with today's code. Run at that commit only: today's code writes plain lists."""

import pickle
from pathlib import Path

import numpy as np

import qafast

MEASURES = ["mrr@10", "ndcg@10", "map", "num_rel", "gm_map"]


def main():
    rng = np.random.default_rng(37)
    batch = qafast.RankingMetrics(MEASURES)
    for _ in range(3):
        scores = rng.integers(-3, 4, size=(4, 6)).astype(np.float64)
        batch.update(scores, rng.integers(0, 3, size=(4, 6)))
    rows = qafast.RankingMetrics(MEASURES)
    rows.update(rng.normal(size=20), rng.integers(0, 3, size=20), rng.integers(0, 4, size=20),
                rng.permutation(20))
    no_ids = qafast.RankingMetrics(MEASURES, empty_queries="zero")
    no_ids.update(rng.integers(0, 3, size=15) / 2, rng.integers(0, 2, size=15),
                  rng.integers(0, 3, size=15))
    answers = qafast.AnswerMetrics()
    answers.update(["Paris", "the tower", "1889", ""], [["paris"], ["Eiffel Tower"], "1889", []])
    metrics = {"batch": batch, "rows": rows, "rows_without_ids": no_ids, "answers": answers}
    out = {name: {"state": m.state_dict(), "pickled": pickle.dumps(m, protocol=4),
                  "compute": m.compute()}
           for name, m in metrics.items()}
    path = Path(__file__).with_name("states_v1.pickle")
    path.write_bytes(pickle.dumps(out, protocol=4))


if __name__ == "__main__":
    main()
