"""Stress: many Python threads calling every family's kernels at once on shared inputs.

Each thread runs every workload (ranking from shared ``Qrels``/``Run`` objects, dicts and
files, the streaming metrics, answers, SQuAD, factoid, BioASQ, DBQA, concepts, events and
curves), each thread starting at a different one so that different kernels overlap; every
result must equal the single-threaded one, exactly. The kernels that release the GIL really
run at once here. This is an ordinary test, so it also runs on a free-threaded build
(``python3.14t``), where every workload runs in parallel, with more threads.
"""

from __future__ import annotations

import math
import sys
import sysconfig
import threading

import numpy as np

import qafast

FREE_THREADED = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
THREADS = 16 if FREE_THREADED else 8
ROUNDS = 6

rng = np.random.default_rng(7)

# ---- shared inputs (never copied per thread) ---------------------------------------------
_n_q, _n_d = 60, 40
_rq = np.repeat([f"q{i}" for i in range(_n_q)], _n_d)
_rd = np.tile([f"d{j}" for j in range(_n_d)], _n_q)
_rs = rng.integers(0, 50, size=len(_rq)) / 7
_keep = rng.random(len(_rq)) < 0.5
_qg = rng.integers(0, 4, size=len(_rq))
RUN = qafast.Run.from_arrays(_rq, _rd, _rs)
QRELS = qafast.Qrels.from_arrays(_rq[_keep], _rd[_keep], _qg[_keep])
RUN_DICT = {}
for q, d, s in zip(_rq.tolist(), _rd.tolist(), _rs.tolist()):
    RUN_DICT.setdefault(q, {})[d] = s
RUN_TEXT = "".join(f"{q} Q0 {d} 0 {s!r} r\n" for q, d, s in zip(
    _rq.tolist(), _rd.tolist(), _rs.tolist())).encode()
MEASURES = ["map", "ndcg@10", "P.5,10", "recip_rank", "bpref", "Rprec", "infAP", "recall@20"]

SCORES = rng.random((200, 30))
GRADES = rng.integers(0, 3, size=(200, 30))

WORDS = np.array(["Paris", "the", "city", "of", "light", "42", "Lyon", "an", "river", "é"])
PREDS = [" ".join(rng.choice(WORDS, size=int(rng.integers(0, 5))).tolist()) for _ in range(400)]
REFS = [[" ".join(rng.choice(WORDS, size=int(rng.integers(1, 4))).tolist())
         for _ in range(int(rng.integers(1, 4)))] for _ in range(400)]
SQUAD_DATA = {"version": "v2.0", "data": [{"paragraphs": [{"qas": [
    {"id": f"s{i}", "answers": [{"text": t} for t in r]} for i, r in enumerate(REFS)]}]}]}
SQUAD_PREDS = {f"s{i}": p for i, p in enumerate(PREDS)}
FACTOID_PRED = [rng.choice(WORDS, size=int(rng.integers(0, 6)), replace=False).tolist()
                for _ in range(300)]
FACTOID_GOLD = [rng.choice(WORDS, size=2, replace=False).tolist() for _ in range(300)]
BIOASQ_GOLD = {"questions": [{"id": f"b{i}", "type": "factoid",
                              "exact_answer": [[w] for w in g]}
                             for i, g in enumerate(FACTOID_GOLD)]}
BIOASQ_SUB = {"questions": [{"id": f"b{i}", "type": "factoid",
                             "exact_answer": [[w] for w in p]}
                            for i, p in enumerate(FACTOID_PRED)]}
DBQA_Y = [rng.integers(0, 2, size=8).tolist() for _ in range(200)]
DBQA_S = [rng.random(8).tolist() for _ in range(200)]
CONCEPT_P = {f"c{i}": p for i, p in enumerate(FACTOID_PRED)}
CONCEPT_G = {f"c{i}": g for i, g in enumerate(FACTOID_GOLD)}
LABELS = list(qafast.events.LABELS)
EV_RES = [rng.choice(LABELS, size=12).tolist() for _ in range(300)]
EV_ANN = [rng.choice(LABELS, size=12).tolist() for _ in range(300)]
AP_Y = rng.integers(0, 2, size=5000)
AP_S = rng.random(5000)


def _stream_ranking():
    m = qafast.RankingMetrics(["map", "ndcg@10", "mrr@5"])
    for lo in range(0, len(SCORES), 50):
        m.update(SCORES[lo:lo + 50], GRADES[lo:lo + 50])
    return m.compute()


def _stream_answers():
    m = qafast.AnswerMetrics()
    for lo in range(0, len(PREDS), 100):
        m.update(PREDS[lo:lo + 100], REFS[lo:lo + 100])
    return m.compute()


WORKLOADS = {
    "evaluate Run": lambda: qafast.evaluate(QRELS, RUN, MEASURES, per_query=True),
    "evaluate Run workers": lambda: qafast.evaluate(QRELS, RUN, MEASURES, workers=2),
    "evaluate dict": lambda: qafast.evaluate(QRELS, RUN_DICT, MEASURES),
    "evaluate bytes": lambda: qafast.evaluate(QRELS, RUN_TEXT, MEASURES),
    "pytrec_eval drop-in": lambda: qafast.RelevanceEvaluator(
        {q: {d: 1} for q, d in zip(_rq[_keep][:200].tolist(), _rd[_keep][:200].tolist())},
        {"map", "ndcg"}).evaluate(RUN_DICT),
    "RankingMetrics": _stream_ranking,
    "AnswerMetrics": _stream_answers,
    "exact_match_and_f1": lambda: tuple(a.tolist() for a in qafast.exact_match_and_f1(
        PREDS, REFS)),
    "f1 char": lambda: qafast.f1(PREDS, REFS, unit="char"),
    "squad": lambda: qafast.squad(SQUAD_DATA, SQUAD_PREDS),
    "factoid": lambda: qafast.evaluate_factoid(FACTOID_PRED, FACTOID_GOLD),
    "bioasq": lambda: qafast.evaluate_bioasq(BIOASQ_GOLD, BIOASQ_SUB),
    "dbqa": lambda: qafast.evaluate_dbqa(DBQA_Y, DBQA_S, accuracy_at=[1, 3]),
    "concepts": lambda: qafast.evaluate_concepts(CONCEPT_P, CONCEPT_G, ["hit@1", "rec@3"]),
    "events": lambda: qafast.tw_events_score(EV_RES, EV_ANN, per_tweet=True),
    "curves": lambda: (qafast.average_precision(AP_Y, AP_S),
                       [a.tolist() for a in qafast.precision_recall_curve(AP_Y, AP_S)]),
}


def _eq(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True)
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_eq(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_eq(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    return a == b


def test_many_threads_give_the_single_thread_results():
    names = sorted(WORKLOADS)
    want = {name: WORKLOADS[name]() for name in names}
    start = threading.Barrier(THREADS)
    errors: list = []
    mismatches: list = []

    def worker(k: int) -> None:
        try:
            start.wait()
            for r in range(ROUNDS):
                for i in range(len(names)):
                    name = names[(i + k + r) % len(names)]  # threads overlap different kernels
                    got = WORKLOADS[name]()
                    if not _eq(got, want[name]):
                        mismatches.append((k, name))
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append((k, e))

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # switch threads often, to interleave the Python layer too
    try:
        threads = [threading.Thread(target=worker, args=(k,)) for k in range(THREADS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    assert not errors, errors
    assert not mismatches, mismatches
