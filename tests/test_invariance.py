"""Invariance tests over a registry of every metric.

``METRICS`` holds one entry per metric (every trec_eval measure family, the ranx, ir_measures
and qafast names of ranking measures, the streaming ranking and answer metrics, and each
answer, SQuAD, factoid, BioASQ, DBQA, concept, event and curve metric). Each entry says how
to make its input, compute it, and which transformations of the input must leave every
number unchanged, bit for bit (means are exactly rounded sums):

- ``rows``: the order of rows (documents, candidates, samples) within the input;
- ``queries``: the order of queries or questions;
- ``rename``: ids renamed by an order-preserving map (ties are broken by id order);
- ``workers``: ``workers=1``, 2 and -1;
- ``batches``: the input split into batches or partitions and evaluated piecewise;
- ``readonly``: read-only and memory-mapped arrays.

And every value stays within its documented range.

Some families add per-question values left to right, in question order, as the official
tool or script they reproduce adds them (BioASQ factoid, DBQA, OpenCSR concepts, the reader
metrics): their means match that tool bit for bit, so a new question order may move them by
a rounding step. Their entries say ``sums_in_order=True``, and the ``queries`` transformation
compares them to 1e-12 relative instead of exactly. Everything split by ``workers``, batches
or partitions stays exact.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pytest

import qafast
from qafast._measures import FAMILIES, TEXT_MEASURES

SEED = 20261123


@dataclass
class Metric:
    make: Callable  # rng -> input
    compute: Callable  # input -> {name: value}
    transforms: dict = field(default_factory=dict)  # transformation -> (input, rng) -> value
    value_range: Callable = lambda name: (0.0, 1.0)
    sums_in_order: bool = False  # means add questions left to right, as the official tool


METRICS: dict[str, Metric] = {}


def same(a: dict, b: dict, rel: float = 0.0) -> None:
    assert a.keys() == b.keys()
    for k, x in a.items():
        y = b[k]
        if isinstance(x, float) and math.isnan(x):
            assert isinstance(y, float) and math.isnan(y), k
        elif rel:
            assert x == pytest.approx(y, rel=rel, abs=1e-15), (k, x, y)
        else:
            assert x == y, (k, x, y)


# ------------------------------------------------------------------------------------------
# ranking: data


def ranking_data(rng):
    """A run and qrels with ties in scores, grades 0-3 and some unjudged documents, as
    parallel arrays (one row per entry) in row order."""
    rq, rd, rs, qq, qd, qg = [], [], [], [], [], []
    for q in range(12):
        docs = rng.choice(60, size=int(rng.integers(3, 25)), replace=False)
        for d in docs:
            rq.append(f"q{q:02d}")
            rd.append(f"d{d:03d}")
            rs.append(float(rng.integers(0, 8)) / 4)  # ties
        judged = rng.choice(60, size=int(rng.integers(2, 20)), replace=False)
        for d in judged:
            qq.append(f"q{q:02d}")
            qd.append(f"d{d:03d}")
            qg.append(int(rng.integers(0, 4)))
    return (np.array(rq), np.array(rd), np.array(rs)), (np.array(qq), np.array(qd),
                                                        np.array(qg))


def as_dicts(run, qrels):
    rd: dict = {}
    for q, d, s in zip(*[c.tolist() for c in run]):
        rd.setdefault(q, {})[d] = s
    qd: dict = {}
    for q, d, g in zip(*[c.tolist() for c in qrels]):
        qd.setdefault(q, {})[d] = g
    return rd, qd


def ranking_metric(measure, *, counts=False):
    def compute(data, **options):
        run, qrels = data
        return qafast.evaluate(qafast.Qrels.from_arrays(*qrels), qafast.Run.from_arrays(*run),
                               measure, **options)

    def rows(data, rng):
        run, qrels = data
        p, r = rng.permutation(len(run[0])), rng.permutation(len(qrels[0]))
        return compute((tuple(c[p] for c in run), tuple(c[r] for c in qrels)))

    def queries(data, rng):
        rd, qd = as_dicts(*data)
        rd = {q: rd[q] for q in rng.permutation(list(rd)).tolist()}
        qd = {q: qd[q] for q in rng.permutation(list(qd)).tolist()}
        return qafast.evaluate(qd, rd, measure)

    def rename(data, rng):
        # "d017" -> "x017": the same order; query ids may change in any way
        run, qrels = data
        qmap = {f"q{i:02d}": f"query-{11 - i}" for i in range(12)}
        ren = lambda cols: (np.array([qmap[q] for q in cols[0].tolist()]),
                            np.char.replace(cols[1], "d", "x"), cols[2])
        return compute((ren(run), ren(qrels)))

    def workers(data, rng):
        out = [compute(data, workers=w) for w in (2, -1)]
        same(out[0], out[1])
        rd, qd = as_dicts(*data)
        same(out[0], qafast.evaluate(qd, rd, measure, workers=2))
        return out[0]

    def batches(data, rng):
        # per-query values of two halves of the queries are the whole's
        run, qrels = data
        whole = qafast.evaluate(qafast.Qrels.from_arrays(*qrels), qafast.Run.from_arrays(*run),
                                measure, per_query=True)
        parts: dict = {}
        for half in (("q00", "q01", "q02", "q03", "q04", "q05"),
                     ("q06", "q07", "q08", "q09", "q10", "q11")):
            keep_r, keep_q = np.isin(run[0], half), np.isin(qrels[0], half)
            parts.update(qafast.evaluate(
                qafast.Qrels.from_arrays(*(c[keep_q] for c in qrels)),
                qafast.Run.from_arrays(*(c[keep_r] for c in run)), measure, per_query=True))
        assert parts.keys() == whole.keys()
        for q in whole:
            same(whole[q], parts[q])
        return compute(data)

    def readonly(data, rng, tmp_path=None):
        run, qrels = data
        frozen = []
        for cols in (run, qrels):
            out = []
            for c in cols:
                c = c.copy()
                c.flags.writeable = False
                out.append(c)
            frozen.append(tuple(out))
        return compute(tuple(frozen))

    def value_range(name):
        base = name.split("_")[0] if "_" in name else name
        if counts or name.startswith(("num_", "hits@", "NumRel")):
            return (0.0, math.inf)
        if name.startswith(("G", "dcg", "ideal_dcg", "Rndcg")) or base in ("G",):
            return (0.0, math.inf)
        if name.startswith(("utility", "yaap")):   # yaap: a log of a ratio, any sign
            return (-math.inf, math.inf)
        return (0.0, 1.0)

    return Metric(
        make=lambda rng: ranking_data(rng),
        compute=compute,
        transforms={"rows": rows, "queries": queries, "rename": rename, "workers": workers,
                        "batches": batches, "readonly": readonly},
        value_range=value_range,
    )


for family in sorted(FAMILIES):
    if family in TEXT_MEASURES:
        continue
    METRICS[f"ranking:{family}"] = ranking_metric(family)
for name in ("ndcg@10", "mrr@10", "hits@10", "f1@10", "map@100", "ndcg@10-l2", "rbp.95",
             "precision@5", "recall@20", "r-precision", "bpref", "P(rel=2)@5", "nDCG@10",
             "RR@10", "AP", "Judged@10", "ERR@20", "nDCG(dcg='exp-log2')@10", "hit@10",
             "ndcg_exp@10", "IPrec@0.5", "Rprec", "SetF", "NumRelRet"):
    METRICS[f"ranking:{name}"] = ranking_metric(name)


# ------------------------------------------------------------------------------------------
# streaming ranking metrics (RankingMetrics): dense (queries, candidates) batches


def stream_metric(measures):
    def make(rng):
        scores = rng.permutation(40 * 9).reshape(40, 9).astype(np.float64) / 7  # tie-free
        grades = rng.integers(0, 4, size=(40, 9))
        return scores, grades

    def compute(data, batch_rows=None):
        scores, grades = data
        m = qafast.RankingMetrics(measures, empty_queries="zero")
        step = batch_rows or len(scores)
        for lo in range(0, len(scores), step):
            m.update(scores[lo:lo + step], grades[lo:lo + step])
        return m.compute()

    def rows(data, rng):
        scores, grades = data
        p = rng.permutation(scores.shape[1])
        return compute((scores[:, p], grades[:, p]))

    def queries(data, rng):
        scores, grades = data
        p = rng.permutation(len(scores))
        return compute((scores[p], grades[p]))

    def batches(data, rng):
        for step in (1, 7, 13):
            same(compute(data, batch_rows=step), compute(data))
        scores, grades = data
        parts = [qafast.RankingMetrics(measures, empty_queries="zero") for _ in range(3)]
        for i, m in enumerate(parts):
            m.update(scores[i::3], grades[i::3])
        parts[0].merge(parts[1])
        parts[0].merge(parts[2])
        same(parts[0].compute(), compute(data))
        return compute(data)

    def readonly(data, rng, tmp_path=None):
        scores, grades = data
        path = tmp_path / "scores.npy"
        np.save(path, scores)
        ro = grades.copy()
        ro.flags.writeable = False
        return compute((np.load(path, mmap_mode="r"), ro))

    return Metric(make=make, compute=compute,
                  transforms={"rows": rows, "queries": queries, "batches": batches,
                                  "readonly": readonly})


METRICS["stream:RankingMetrics"] = stream_metric(
    ["map", "ndcg@5", "mrr@3", "P@2", "recall@4", "hit@1", "ndcg", "bpref", "Rprec"])


# ------------------------------------------------------------------------------------------
# answers and SQuAD

WORDS = ["Paris", "the", "city", "of", "light", "42", "", "Lyon", "an", "river", "Seine",
         "rive gauche", "é", "東京"]


def answer_data(rng):
    preds, refs = [], []
    for _ in range(30):
        preds.append(" ".join(rng.choice(WORDS, size=int(rng.integers(0, 4))).tolist()))
        refs.append([" ".join(rng.choice(WORDS, size=int(rng.integers(0, 4))).tolist())
                     for _ in range(int(rng.integers(1, 4)))])
    return preds, refs


def answers_metric(fn, in_order=False):
    def compute(data):
        preds, refs = data
        return fn(preds, refs)

    def queries(data, rng):
        preds, refs = data
        p = rng.permutation(len(preds)).tolist()
        return compute(([preds[i] for i in p], [refs[i] for i in p]))

    def rows(data, rng):  # the order of each question's gold answers
        preds, refs = data
        return compute((preds, [[r[i] for i in rng.permutation(len(r)).tolist()]
                                for r in refs]))

    return Metric(make=answer_data, compute=compute,
                  transforms={"rows": rows, "queries": queries}, sums_in_order=in_order)


METRICS["answers:exact_match"] = answers_metric(
    lambda p, r: {"em": qafast.exact_match(p, r)})
METRICS["answers:f1"] = answers_metric(lambda p, r: {"f1": qafast.f1(p, r)})
METRICS["answers:f1_char"] = answers_metric(lambda p, r: {"f1": qafast.f1(p, r, unit="char")})
METRICS["answers:reader_metrics"] = answers_metric(
    lambda p, r: {k: v for k, v in qafast.reader_metrics([[x] for x in p], r).items()
                  if isinstance(v, float)}, in_order=True)


def _answer_stream(data, batch=None):
    preds, refs = data
    m = qafast.AnswerMetrics()
    step = batch or len(preds)
    for lo in range(0, len(preds), step):
        m.update(preds[lo:lo + step], refs[lo:lo + step])
    return m.compute()


def _answer_batches(data, rng):
    for step in (1, 4, 11):
        same(_answer_stream(data, step), _answer_stream(data))
    return _answer_stream(data)


METRICS["stream:AnswerMetrics"] = Metric(
    make=answer_data, compute=_answer_stream,
    transforms={"queries": lambda d, rng: _permuted(d, rng), "batches": _answer_batches})


def _permuted(data, rng):
    preds, refs = data
    p = rng.permutation(len(preds)).tolist()
    return _answer_stream(([preds[i] for i in p], [refs[i] for i in p]))


def squad_data(rng):
    preds, refs = answer_data(rng)
    ids = [f"id{i:02d}" for i in range(len(preds))]
    return ids, preds, refs


def squad_compute(data, version="2.0"):
    ids, preds, refs = data
    dataset = {"version": version, "data": [{"paragraphs": [{"qas": [
        {"id": i, "answers": [{"text": t} for t in r if t or version == "1.1"]}
        for i, r in zip(ids, refs)]}]}]}
    return {k: v for k, v in qafast.squad(dataset, dict(zip(ids, preds)), version=version).items()
            if not isinstance(v, dict)}


def squad_queries(data, rng):
    ids, preds, refs = data
    p = rng.permutation(len(ids)).tolist()
    return squad_compute(([ids[i] for i in p], [preds[i] for i in p], [refs[i] for i in p]))


def squad_rename(data, rng):
    ids, preds, refs = data
    return squad_compute(([f"renamed-{len(ids) - int(i[2:])}" for i in ids], preds, refs))


METRICS["squad:v2"] = Metric(
    make=squad_data, compute=squad_compute,
    transforms={"queries": squad_queries, "rename": squad_rename},
    value_range=lambda n: (0.0, math.inf) if "total" in n else (0.0, 100.0))


# ------------------------------------------------------------------------------------------
# factoid and BioASQ


def factoid_data(rng):
    pred = [rng.choice(WORDS[:8], size=int(rng.integers(0, 6)), replace=False).tolist()
            for _ in range(25)]
    gold = [rng.choice(WORDS[:8], size=int(rng.integers(1, 3)), replace=False).tolist()
            for _ in range(25)]
    return pred, gold


def factoid_queries(data, rng):
    pred, gold = data
    p = rng.permutation(len(pred)).tolist()
    return qafast.evaluate_factoid([pred[i] for i in p], [gold[i] for i in p])


METRICS["factoid:evaluate_factoid"] = Metric(
    make=factoid_data, compute=lambda d: qafast.evaluate_factoid(*d),
    transforms={"queries": factoid_queries}, sums_in_order=True)


def bioasq_data(rng):
    golden, submission = [], []
    for i in range(24):
        kind = ("factoid", "list", "yesno")[i % 3]
        if kind == "yesno":
            g, s = str(rng.choice(["yes", "no"])), str(rng.choice(["yes", "no"]))
        else:
            g = [[w] for w in rng.choice(WORDS[:8], size=2, replace=False).tolist()]
            s = [[w] for w in rng.choice(WORDS[:8], size=int(rng.integers(0, 4)),
                                         replace=False).tolist()]
        golden.append({"id": f"b{i:02d}", "type": kind, "exact_answer": g})
        submission.append({"id": f"b{i:02d}", "type": kind, "exact_answer": s})
    return golden, submission


def bioasq_compute(data):
    golden, submission = data
    return qafast.evaluate_bioasq({"questions": golden}, {"questions": submission})


def bioasq_queries(data, rng):
    golden, submission = data
    p, r = rng.permutation(len(golden)).tolist(), rng.permutation(len(golden)).tolist()
    return bioasq_compute(([golden[i] for i in p], [submission[i] for i in r]))


def bioasq_rename(data, rng):
    ren = lambda qs: [dict(q, id="x" + q["id"]) for q in qs]
    return bioasq_compute(tuple(ren(x) for x in data))


METRICS["factoid:evaluate_bioasq"] = Metric(
    make=bioasq_data, compute=bioasq_compute,
    transforms={"queries": bioasq_queries, "rename": bioasq_rename}, sums_in_order=True)


# ------------------------------------------------------------------------------------------
# DBQA


def dbqa_data(rng):
    labels, scores = [], []
    for _ in range(20):
        n = int(rng.integers(1, 8))
        y = rng.integers(0, 2, size=n)
        y[int(rng.integers(0, n))] = 1
        labels.append(y.tolist())
        scores.append((rng.permutation(n) / 3).tolist())  # tie-free within a question
    return labels, scores


def dbqa_compute(data, **kw):
    return qafast.evaluate_dbqa(*data, accuracy_at=[1, 3], **kw)


def dbqa_rows(data, rng):
    labels, scores = data
    out_l, out_s = [], []
    for y, s in zip(labels, scores):
        p = rng.permutation(len(y)).tolist()
        out_l.append([y[i] for i in p])
        out_s.append([s[i] for i in p])
    return dbqa_compute((out_l, out_s))


def dbqa_queries(data, rng):
    labels, scores = data
    p = rng.permutation(len(labels)).tolist()
    return dbqa_compute(([labels[i] for i in p], [scores[i] for i in p]))


def dbqa_readonly(data, rng, tmp_path=None):
    labels, scores = data
    flat_y = np.array([v for y in labels for v in y], dtype=np.int8)
    flat_s = np.array([v for s in scores for v in s])
    offsets = np.cumsum([0] + [len(y) for y in labels])
    path = tmp_path / "s.npy"
    np.save(path, flat_s)
    flat_y.flags.writeable = False
    offsets.flags.writeable = False
    return qafast.evaluate_dbqa(flat_y, np.load(path, mmap_mode="r"), offsets=offsets,
                                accuracy_at=[1, 3])


METRICS["dbqa:evaluate_dbqa"] = Metric(
    make=dbqa_data, compute=dbqa_compute,
    transforms={"rows": dbqa_rows, "queries": dbqa_queries, "readonly": dbqa_readonly},
    sums_in_order=True)


# ------------------------------------------------------------------------------------------
# concepts (OpenCSR)

CONCEPT_MEASURES = ["hit@1", "hit@3", "rec@2", "rec@5"]


def concept_data(rng):
    pred, gold = {}, {}
    for i in range(20):
        pred[f"c{i:02d}"] = rng.choice(WORDS, size=int(rng.integers(0, 6)),
                                       replace=False).tolist()
        gold[f"c{i:02d}"] = rng.choice(WORDS, size=int(rng.integers(1, 4)),
                                       replace=False).tolist()
    return pred, gold


def concept_queries(data, rng):
    pred, gold = data
    order = rng.permutation(list(pred)).tolist()
    return qafast.evaluate_concepts({q: pred[q] for q in order},
                                    {q: gold[q] for q in reversed(order)}, CONCEPT_MEASURES)


def concept_rename(data, rng):
    pred, gold = data
    return qafast.evaluate_concepts({"z" + q: v for q, v in pred.items()},
                                    {"z" + q: v for q, v in gold.items()}, CONCEPT_MEASURES)


METRICS["concepts:evaluate_concepts"] = Metric(
    make=concept_data, compute=lambda d: qafast.evaluate_concepts(*d, CONCEPT_MEASURES),
    transforms={"queries": concept_queries, "rename": concept_rename}, sums_in_order=True)


# ------------------------------------------------------------------------------------------
# events


def events_data(rng):
    labels = list(qafast.events.LABELS)
    res, ann = [], []
    for _ in range(25):
        n = int(rng.integers(1, 10))
        ann.append(rng.choice(labels, size=n).tolist())
        res.append(rng.choice(labels, size=n).tolist())
    return res, ann


def events_queries(data, rng):
    res, ann = data
    p = rng.permutation(len(res)).tolist()
    return {"tw": qafast.tw_events_score([res[i] for i in p], [ann[i] for i in p])}


METRICS["events:tw_events_score"] = Metric(
    make=events_data, compute=lambda d: {"tw": qafast.tw_events_score(*d)},
    transforms={"queries": events_queries})


# ------------------------------------------------------------------------------------------
# curves


def curve_data(rng):
    y = rng.integers(0, 2, size=200)
    y[0] = 1
    return y, rng.integers(0, 20, size=200) / 20  # ties


def curve_compute(data, methods=("step",)):
    y, s = data
    out = {m: qafast.average_precision(y, s, method=m) for m in methods}
    out["threshold"] = qafast.threshold_average_precision(y, s, thresholds=[0.1, 0.5, 0.9])
    precision, recall, _ = qafast.precision_recall_curve(y, s)
    out["curve"] = float(np.sum(precision) + np.sum(recall))  # a checksum of the curve
    return out


def curve_rows(data, rng):
    y, s = data
    p = rng.permutation(len(y))
    return curve_compute((y[p], s[p]))


def curve_readonly(data, rng, tmp_path=None):
    y, s = data
    path = tmp_path / "s.npy"
    np.save(path, s)
    y = y.copy()
    y.flags.writeable = False
    return curve_compute((y, np.load(path, mmap_mode="r")))


METRICS["curves:average_precision"] = Metric(
    make=curve_data, compute=curve_compute,
    transforms={"rows": curve_rows, "readonly": curve_readonly},
    value_range=lambda n: (0.0, math.inf) if n == "curve" else (0.0, 1.0))


# VOC and COCO AP rank tied scores in input order, as the devkit's and pycocotools' stable
# sorts do: tie-free scores here
def _voc(data):
    y, s = data
    return {m: qafast.average_precision(y, s, method=m) for m in ("voc", "voc11", "coco")}


def _voc_data(rng):
    y, _ = curve_data(rng)
    return y, rng.permutation(len(y)) / len(y)


METRICS["curves:average_precision_voc"] = Metric(
    make=_voc_data, compute=_voc,
    transforms={"rows": lambda d, rng: _voc(_permute_pair(d, rng))})


def _permute_pair(data, rng):
    p = rng.permutation(len(data[0]))
    return data[0][p], data[1][p]


# ------------------------------------------------------------------------------------------

CASES = [(name, t) for name in sorted(METRICS) for t in sorted(METRICS[name].transforms)]


@pytest.mark.parametrize(("name", "transform"), CASES, ids=[f"{n}-{t}" for n, t in CASES])
def test_invariant(name, transform, tmp_path):
    metric = METRICS[name]
    rng = np.random.default_rng(SEED)
    data = metric.make(rng)
    want = metric.compute(data)
    fn = metric.transforms[transform]
    got = fn(data, rng, tmp_path) if transform == "readonly" else fn(data, rng)
    same(want, got, rel=1e-12 if metric.sums_in_order and transform == "queries" else 0.0)


@pytest.mark.parametrize("name", sorted(METRICS))
def test_values_in_range(name):
    metric = METRICS[name]
    for seed in (SEED, SEED + 1):
        values = metric.compute(metric.make(np.random.default_rng(seed)))
        assert values
        for k, v in values.items():
            lo, hi = metric.value_range(k)
            assert isinstance(v, (float, int)), (k, v)
            assert math.isnan(v) or lo <= v <= hi, (k, v, lo, hi)


def test_registry_covers_every_family():
    names = {n.split(":", 1)[1] for n in METRICS if n.startswith("ranking:")}
    assert set(FAMILIES) - set(TEXT_MEASURES) <= names
    families = {n.split(":", 1)[0] for n in METRICS}
    assert families == {"ranking", "stream", "answers", "squad", "factoid", "dbqa", "concepts",
                        "events", "curves"}
