"""RankingMetrics and AnswerMetrics: streamed, split and merged, they give the bits of one
qafast.evaluate / qafast.exact_match / qafast.f1 call on all the data."""

import math
import pickle
import random

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import qafast
from qafast import _exactsum
from qafast._measure_parser import parse_measures
from qafast._measures import BY_NAME
from test_measure_names import IR_GDEVAL, IR_NAMES, RANX_NAMES
from _examples import examples

FAST = ["mrr@10", "ndcg@10", "map", "recall@5", "P@3", "hit@2", "recip_rank", "ndcg_exp@5",
        "map@3", "Rprec", "num_rel", "num_rel_ret", "num_ret"]
# every trec_eval measure, with the ones that see judged-nonrelevant documents (bpref,
# infAP, unj, ...) and gain maps: the kernels then rank every candidate
ALL = ["all_trec", "ndcg.1=3,2=7", "recip_rank_cut.3", "ndcg_cut_exp.3"]


def doc(c, j):
    return f"d{c - 1 - j:05d}"  # column j's id: earlier columns have larger ids


def as_dicts(batches, empty="skip", level=1):
    """The qrels and run that a list of (scores, relevance, mask, num_relevant) batches
    stand for: every candidate judged, missing relevant documents at grade ``level``."""
    qrels, run = {}, {}
    n = 0
    for scores, rel, mask, num_rel in batches:
        nq, nc = scores.shape
        for i in range(nq):
            qid = f"q{n:06d}"
            n += 1
            valid = [j for j in range(nc)
                     if (mask[i, j] if mask is not None else scores[i, j] != -np.inf)]
            if not valid:
                continue
            judged = {doc(nc, j): int(rel[i, j]) for j in valid}
            relevant = sum(g >= level for g in judged.values())
            extra = 0 if num_rel is None else int(num_rel[i]) - relevant
            for k in range(extra):
                judged[f"x{k:05d}"] = level
            if relevant + extra == 0 and empty == "skip":
                continue
            qrels[qid] = judged
            run[qid] = {doc(nc, j): float(scores[i, j]) for j in valid}
    return qrels, run


@st.composite
def batches(draw, max_batches=4, pad=True, with_num_rel=True):
    out = []
    for _ in range(draw(st.integers(1, max_batches))):
        nq = draw(st.integers(1, 5))
        nc = draw(st.integers(1, 30))
        levels = draw(st.sampled_from([3, 5, 100]))  # few levels: many ties
        scores = np.array(draw(st.lists(st.integers(0, levels), min_size=nq * nc,
                                        max_size=nq * nc)), dtype=np.float64).reshape(nq, nc)
        scores /= levels
        rel = np.array(draw(st.lists(st.sampled_from([0, 0, 0, 1, 2, 3]), min_size=nq * nc,
                                     max_size=nq * nc)), dtype=np.int64).reshape(nq, nc)
        mask = None
        if pad and draw(st.booleans()):
            mask = np.array(draw(st.lists(st.booleans(), min_size=nq * nc, max_size=nq * nc)),
                            dtype=bool).reshape(nq, nc)
        num_rel = None
        if with_num_rel and draw(st.booleans()):
            have = ((rel >= 1) & (mask if mask is not None else True)).sum(axis=1)
            num_rel = have + np.array(draw(st.lists(st.integers(0, 3), min_size=nq,
                                                    max_size=nq)))
        out.append((scores, rel, mask, num_rel))
    return out


def feed(metric, data):
    for scores, rel, mask, num_rel in data:
        metric.update(scores, rel, mask=mask, num_relevant=num_rel)
    return metric


def evaluate_or_none(qrels, run, measures, **kw):
    try:
        return qafast.evaluate(qrels, run, measures, **kw)
    except ValueError as e:
        assert "no query in common" in str(e)
        return None


def compute_or_none(metric):
    try:
        return metric.compute()
    except ValueError as e:
        assert "no query measured" in str(e)
        return None


def same(a, b):
    assert a is None and b is None or a.keys() == b.keys()
    if a is None:
        return
    for k in a:
        assert a[k] == b[k] or (math.isnan(a[k]) and math.isnan(b[k])), (k, a[k], b[k])


SETTINGS = settings(max_examples=examples(75), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@SETTINGS
@given(batches(), st.sampled_from(["skip", "zero"]), st.sampled_from([FAST, ALL]),
       st.sampled_from([1, 2]), st.sampled_from([None, 3]))
def test_batches_equal_evaluate_bit_for_bit(data, empty, measures, level, max_docs):
    m = feed(qafast.RankingMetrics(measures, empty_queries=empty, relevance_level=level,
                                   max_docs=max_docs), data)
    qrels, run = as_dicts(data, empty, level)
    same(compute_or_none(m), evaluate_or_none(qrels, run, measures, relevance_level=level,
                                              max_docs=max_docs))


@SETTINGS
@given(batches(max_batches=6), st.integers(1, 4), st.randoms(use_true_random=False))
def test_any_split_and_merge_order_gives_the_same_bits(data, parts, rnd):
    one = feed(qafast.RankingMetrics(ALL), data)
    accs = [qafast.RankingMetrics(ALL) for _ in range(parts)]
    for b in data:
        feed(accs[rnd.randrange(parts)], [b])
    rnd.shuffle(accs)
    merged = accs[0]
    if parts > 1:
        rest = accs[1:]
        # merge some through a saved state and a pickle, as ranks and checkpoints do
        state = pickle.loads(pickle.dumps(rest[0].state_dict()))
        loaded = qafast.RankingMetrics(ALL)
        loaded.load_state_dict(state)
        merged.merge(loaded, *rest[1:])
    same(compute_or_none(merged), compute_or_none(one))


def rows_of(data):
    """The batches as rows: (query, document, score, grade) with integer ids."""
    rows = []
    n = 0
    for scores, rel, mask, _ in data:
        nq, nc = scores.shape
        for i in range(nq):
            for j in range(nc):
                if mask is None or mask[i, j]:
                    rows.append((n, nc - 1 - j, float(scores[i, j]), int(rel[i, j])))
            n += 1
    return rows


@SETTINGS
@given(batches(with_num_rel=False), st.integers(1, 3), st.randoms(use_true_random=False),
       st.sampled_from(["skip", "zero"]), st.sampled_from([FAST, ALL]))
def test_rows_in_any_split_with_repeats_equal_evaluate(data, parts, rnd, empty, measures):
    rows = rows_of(data)
    assume(rows)
    # a padded distributed sampler repeats some rows
    stream = rows + [rnd.choice(rows) for _ in range(rnd.randrange(4))]
    rnd.shuffle(stream)
    accs = [qafast.RankingMetrics(measures, empty_queries=empty) for _ in range(parts)]
    i = 0
    while i < len(stream):
        k = rnd.randrange(1, 8)
        chunk = stream[i:i + k]
        q, d, s, g = (np.array(c) for c in zip(*chunk))
        accs[rnd.randrange(parts)].update(s, g, q, d)
        i += k
    rnd.shuffle(accs)
    got = compute_or_none(accs[0].merge(*accs[1:]))
    q, d, s, g = (np.array(c) for c in zip(*rows))
    has_rel = {qq for qq, gg in zip(q.tolist(), g.tolist()) if gg >= 1}
    keep = np.array([empty == "zero" or qq in has_rel for qq in q.tolist()])
    want = None
    if keep.any():
        want = qafast.evaluate(qafast.Qrels.from_arrays(q[keep], d[keep], g[keep]),
                               qafast.Run.from_arrays(q, d, s), measures)
    same(got, want)


@SETTINGS
@given(batches(with_num_rel=False, max_batches=3))
def test_rows_without_doc_ids_break_ties_by_arrival(data):
    rows = rows_of(data)
    assume(rows)
    m = qafast.RankingMetrics(FAST)
    for k in range(0, len(rows), 5):
        q, _, s, g = (np.array(c) for c in zip(*rows[k:k + 5]))
        m.update(s, g, q)
    # the batch form breaks ties by column, which is arrival order here
    same(compute_or_none(m), compute_or_none(feed(qafast.RankingMetrics(FAST), data)))


# every measure name family the parser knows: ranx's and ir_measures' names (columns with
# their own relevance level, ir_measures' IPrec with trec_eval 9.0.8's recall cut points,
# Judged, ERR, NumQ, ...) next to every trec_eval measure
EVERY_NAME = RANX_NAMES + IR_NAMES + IR_GDEVAL + ALL
# at a level of 0 or below, a candidate graded 0 is relevant too
LEVEL_ZERO = ["precision@5-l0", "map-l0", "ndcg@10-l0", "mrr-l0", "hits@5-l-1",
              "P(rel=0)@5", "Success(rel=0)@3", "R(rel=0)@4"]


def rows_equal_evaluate(rows, parts, rnd, empty, measures, level=1):
    """Feed ``rows`` (query, document, score, grade) in random chunks to ``parts``
    accumulators, merge them, and compare with evaluate on the same rows."""
    accs = [qafast.RankingMetrics(measures, empty_queries=empty, relevance_level=level)
            for _ in range(parts)]
    i = 0
    while i < len(rows):
        k = rnd.randrange(1, 8)
        q, d, s, g = (np.array(c) for c in zip(*rows[i:i + k]))
        accs[rnd.randrange(parts)].update(s, g, q, d)
        i += k
    rnd.shuffle(accs)
    got = compute_or_none(accs[0].merge(*accs[1:]))
    q, d, s, g = (np.array(c) for c in zip(*rows))
    has_rel = {qq for qq, gg in zip(q.tolist(), g.tolist()) if gg >= level}
    keep = np.array([empty == "zero" or qq in has_rel for qq in q.tolist()])
    want = None
    if keep.any():
        want = qafast.evaluate(qafast.Qrels.from_arrays(q[keep], d[keep], g[keep]),
                               qafast.Run.from_arrays(q, d, s), measures,
                               relevance_level=level)
    same(got, want)


@settings(max_examples=examples(50), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(batches(), st.sampled_from(["skip", "zero"]), st.sampled_from([1, 2]),
       st.randoms(use_true_random=False))
def test_every_measure_name_equals_evaluate_on_ties(data, empty, level, rnd):
    m = feed(qafast.RankingMetrics(EVERY_NAME, empty_queries=empty, relevance_level=level),
             data)
    qrels, run = as_dicts(data, empty, level)
    same(compute_or_none(m), evaluate_or_none(qrels, run, EVERY_NAME, relevance_level=level))
    rows = rows_of(data)
    assume(rows)
    rnd.shuffle(rows)
    rows_equal_evaluate(rows, rnd.randrange(1, 4), rnd, empty, EVERY_NAME, level)


@pytest.mark.parametrize("empty", ["skip", "zero"])
@pytest.mark.parametrize("level", [1, 2])
def test_every_measure_name_equals_evaluate_without_ties(empty, level):
    rng = np.random.default_rng(level)
    data = []
    for nq, nc in [(20, 12), (1, 30), (15, 5)]:
        scores = rng.random((nq, nc))
        rel = rng.integers(0, 4, (nq, nc))
        rel[::4] = 0  # queries without a relevant document
        rel[1::4] = np.minimum(rel[1::4], 1)  # nothing graded 2 or more
        data.append((scores, rel, None, None))
    num_rel = (data[0][1] >= level).sum(axis=1) + rng.integers(0, 3, 20)
    data[0] = data[0][:3] + (num_rel,)
    m = feed(qafast.RankingMetrics(EVERY_NAME, empty_queries=empty, relevance_level=level),
             data)
    qrels, run = as_dicts(data, empty, level)
    want = qafast.evaluate(qrels, run, EVERY_NAME, relevance_level=level)
    same(m.compute(), want)
    assert want["Judged@10"] == 1.0 and want["R(rel=3)@10"] != want["recall_10"]
    zero = feed(qafast.RankingMetrics(LEVEL_ZERO, empty_queries=empty,
                                      relevance_level=level), data)
    same(zero.compute(), qafast.evaluate(qrels, run, LEVEL_ZERO, relevance_level=level))
    rows = rows_of(data[1:])
    random.Random(level).shuffle(rows)
    rows_equal_evaluate(rows, 3, random.Random(0), empty, EVERY_NAME + LEVEL_ZERO, level)


def test_empty_queries_are_decided_at_the_metric_level_for_every_column():
    # grade 1 is relevant at relevance_level=1: no error, even for the columns at level 2
    for shape in ("batch", "rows"):
        m = qafast.RankingMetrics(["P(rel=2)@2", "P@2"], empty_queries="error")
        if shape == "batch":
            m.update([[0.9, 0.1], [0.5, 0.4]], [[1, 0], [0, 2]])
        else:
            m.update([0.9, 0.1, 0.5, 0.4], [1, 0, 0, 2], [0, 0, 1, 1], [1, 0, 1, 0])
        assert m.compute() == {"P(rel=2)@2": 0.25, "P@2": 0.5}
        m = qafast.RankingMetrics(["P(rel=2)@2", "P@2"], empty_queries="error",
                                  relevance_level=2)
        with pytest.raises(ValueError, match="has no relevant"):
            m.update([[0.9, 0.1], [0.5, 0.4]], [[1, 0], [0, 2]])
            m.compute()


def test_ties_go_to_the_earlier_candidate():
    m = qafast.RankingMetrics(["mrr@10", "P@1"])
    m.update([[0.5, 0.5, 0.1]], [[0, 1, 0]])
    assert m.compute() == {"mrr@10": 0.5, "P@1": 0.0}
    m.reset()
    m.update([[0.5, 0.5, 0.1]], [[1, 0, 0]])
    assert m.compute() == {"mrr@10": 1.0, "P@1": 1.0}
    # with document ids, as trec_eval: the larger id first
    r = qafast.RankingMetrics(["mrr@10"])
    r.update([0.5, 0.5], [1, 0], [1, 1], [10, 20])
    assert r.compute() == {"mrr@10": 0.5}


def test_num_relevant_counts_missing_relevant_documents():
    m = qafast.RankingMetrics(["recall@2", "ndcg@2", "map"])
    m.update([[0.9, 0.1]], [[1, 0]], num_relevant=[3])
    qrels = {"q": {"d1": 1, "d0": 0, "x0": 1, "x1": 1}}
    assert m.compute() == qafast.evaluate(qrels, {"q": {"d1": 0.9, "d0": 0.1}},
                                          ["recall@2", "ndcg@2", "map"])
    assert m.compute()["recall@2"] == 1 / 3


def test_empty_queries_policies():
    scores, rel = [[0.3, 0.2], [0.9, 0.1]], [[0, 0], [0, 1]]
    skip = qafast.RankingMetrics(["mrr@10"])
    skip.update(scores, rel)
    assert skip.compute() == {"mrr@10": 0.5}
    zero = qafast.RankingMetrics(["mrr@10"], empty_queries="zero")
    zero.update(scores, rel)
    assert zero.compute() == {"mrr@10": 0.25}
    err = qafast.RankingMetrics(["mrr@10"], empty_queries="error")
    with pytest.raises(ValueError, match=r"query \(row\) 0 has no relevant"):
        err.update(scores, rel)
    with pytest.raises(ValueError, match="query 'a' has no relevant"):
        err.update(scores, rel, query_ids=["a", "b"])
    rows = qafast.RankingMetrics(["mrr@10"], empty_queries="error")
    rows.update([0.3, 0.2], [0, 0], [5, 5])
    with pytest.raises(ValueError, match="query 5 has no relevant"):
        rows.compute()


def test_padding_rows_and_gm_map():
    m = qafast.RankingMetrics(["gm_map", "map", "num_ret"])
    m.update(np.array([[0.3, 0.2, -np.inf], [-np.inf] * 3]), [[1, 0, 0], [1, 1, 1]])
    m.update([[0.3, 0.2, 0.1]], [[0, 0, 1]], mask=[[True, True, False]], num_relevant=[1])
    qrels = {"a": {"d2": 1, "d1": 0}, "b": {"d2": 0, "d1": 0, "x": 1}}
    run = {"a": {"d2": 0.3, "d1": 0.2}, "b": {"d2": 0.3, "d1": 0.2}}
    assert m.compute() == qafast.evaluate(qrels, run, ["gm_map", "map", "num_ret"])


def same_state(a, b):
    sa, sb = a.state_dict(), b.state_dict()
    return list(sa) == list(sb) and all(np.array_equal(sa[k], sb[k]) for k in sa)


@pytest.mark.parametrize("shape", [(0, 4), (3, 0), (0, 0)])
@pytest.mark.parametrize("dtypes", [("float64", "int64"), ("float64", "float64"),
                                    ("float32", "float32"), ("float64", "bool")])
def test_an_empty_batch_changes_nothing(shape, dtypes):
    # (0, k): no query; (k, 0): k queries without candidates, which are not queries, as a row
    # of padding is not (trec_eval measures only the queries a run retrieves for); float
    # grades with float64 scores raised numpy's "operands could not be broadcast"
    scores, grades = np.zeros(shape, dtype=dtypes[0]), np.zeros(shape, dtype=dtypes[1])
    for extra in ({}, {"mask": np.ones(shape, dtype=bool)},
                  {"num_relevant": np.ones(shape[0], dtype=np.int64)}):
        m = qafast.RankingMetrics(["map", "ndcg@10"])
        m.update(scores, grades, **extra)
        assert same_state(m, qafast.RankingMetrics(["map", "ndcg@10"]))
        # no input shape is fixed by it: rows may follow, and batches
        m.update([0.5, 0.2], [1, 0], [1, 1], [3, 4])
        m.update(scores, grades, **extra)
        assert m.compute() == {"map": 1.0, "ndcg@10": 1.0}
    with pytest.raises(ValueError, match=r"relevance has shape \(0, 5\)"):
        qafast.RankingMetrics("map").update(np.zeros((0, 4)), np.zeros((0, 5)))


def test_empty_rows_change_nothing():
    m = qafast.RankingMetrics(["map"])
    m.update([[0.5, 0.2]], [[1, 0]])
    empty = np.zeros(0)
    m.update(empty, empty, empty.astype(np.int64))  # rows after batches: nothing to mix
    m.update(empty, empty, empty.astype(np.int64), empty.astype(np.int64))
    assert m.compute() == {"map": 1.0}
    r = qafast.RankingMetrics(["map"])
    r.update(empty, empty, empty.astype(np.int64), empty.astype(np.int64))
    r.update([0.5, 0.2], [1, 0], [1, 1])  # no doc ids were given with a row yet
    assert r.compute() == {"map": 1.0}
    fresh = qafast.RankingMetrics(["map"])
    fresh.update(empty, empty, empty.astype(np.int64))
    assert same_state(fresh, qafast.RankingMetrics(["map"]))
    with pytest.raises(ValueError, match="pass query_ids"):
        fresh.update(empty, empty)


def test_empty_answer_batch_changes_nothing():
    a = qafast.AnswerMetrics()
    a.update([], [])
    a.update(np.array([], dtype=str), ())
    assert same_state(a, qafast.AnswerMetrics())
    a.update(["Paris"], [["paris"]])
    a.update([], [])
    assert a.compute() == {"exact_match": 1.0, "f1": 1.0}


# torchmetrics' rule for relevant candidates scored 0 or less, as trec_eval on rewritten input
NONPOSITIVE = ["map", "recip_rank", "mrr@3", "P@3", "recall@3", "ndcg@3", "success@2",
               "map@5-l2", "P(rel=2)@2", "gm_map"]


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.sampled_from([-1.0, -0.5, 0.0, 0.5, 1.0]),
                          st.integers(0, 2)), min_size=1, max_size=30),
       st.randoms(use_true_random=False))
def test_torchmetrics_nonpositive_is_trec_eval_on_rewritten_input(rows, rnd):
    """With ties and graded relevance too: a family whose torchmetrics class counts such a
    candidate as not relevant gives what evaluate gives with it graded 0; one that counts it
    as not retrieved, what evaluate gives with it ranked under an id the qrels lack (the
    same tie position); every other family what it gives without the option. Which queries
    are measured (those with a relevant candidate) is decided on the grades as given."""
    q = np.array([r[0] for r in rows], dtype=np.int64)
    s = np.array([r[1] for r in rows])
    g = np.array([r[2] for r in rows])
    d = 2 * np.arange(len(rows), dtype=np.int64)
    rnd.shuffle(d)
    m = qafast.RankingMetrics(NONPOSITIVE, torchmetrics_nonpositive=True)
    split = rnd.randrange(len(rows) + 1)
    m.update(s[:split], g[:split], q[:split], d[:split])
    m.update(s[split:], g[split:], q[split:], d[split:])
    keep = np.isin(q, q[g >= 1])
    if not keep.any():
        with pytest.raises(ValueError, match="no query measured"):
            m.compute()
        return
    q, d, s, g = q[keep], d[keep], s[keep], g[keep]
    got = m.compute()
    for name in NONPOSITIVE:
        rule = BY_NAME[parse_measures([name])[0].family].torchmetrics_nonpositive
        level = 2 if "2" in name.split("@")[0] or name.endswith("-l2") else 1
        hidden = (g >= level) & (s <= 0) if rule else np.zeros(len(g), dtype=bool)
        grades = np.where(hidden, 0, g) if rule == "not relevant" else g
        docs = np.where(hidden, d + 1, d) if rule == "not retrieved" else d
        want = qafast.evaluate(qafast.Qrels.from_arrays(q, d, grades),
                               qafast.Run.from_arrays(q, docs, s), [name])
        assert got[name] == want[name], (name, got[name], want[name])


def test_compute_is_repeatable_and_reset_forgets():
    m = qafast.RankingMetrics(["ndcg@10"])
    m.update([[0.2, 0.9]], [[1, 0]])
    assert m.compute() == m.compute()
    m.reset()
    with pytest.raises(ValueError, match="no query measured"):
        m.compute()


# ---------------------------------------------------------------- inputs


def _torch():
    return pytest.importorskip("torch")


def test_torch_tensors_in_without_copies_and_without_autograd():
    torch = _torch()
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(8, 20, generator=g, requires_grad=True)
    scores = logits * 2  # part of an autograd graph
    labels = (torch.rand(8, 20, generator=g) < 0.2).long()
    want = qafast.RankingMetrics(FAST)
    want.update(scores.detach().numpy().astype(np.float64), labels.numpy())
    m = qafast.RankingMetrics(FAST)
    m.update(scores, labels)
    assert m.compute() == want.compute()
    assert scores.grad_fn is not None and logits.grad is None
    # transposed (strided), float16 and bfloat16 (widened), bool labels
    for s in (scores.detach().T.contiguous().T, scores.detach().to(torch.float16),
              scores.detach().to(torch.bfloat16)):
        m = qafast.RankingMetrics(FAST)
        m.update(s, labels.bool())
        w = qafast.RankingMetrics(FAST)
        w.update(s.float().numpy(), labels.numpy())
        assert m.compute() == w.compute()


def test_conversion_shares_memory_where_the_dtype_allows():
    torch = _torch()
    from qafast._convert import as_array

    t = torch.arange(12, dtype=torch.float64).reshape(3, 4)
    a = as_array(t.T, "scores")
    assert np.shares_memory(a, t.numpy()) and not a.flags.c_contiguous
    r = torch.ones(3, requires_grad=True, dtype=torch.float64)
    assert np.shares_memory(as_array(r, "x"), r.detach().numpy())
    ro = np.arange(4.0)
    ro.flags.writeable = False
    assert as_array(ro, "x") is ro
    buf = bytearray(np.arange(4.0).tobytes())
    assert np.shares_memory(as_array(memoryview(buf).cast("d"), "x"),
                            np.frombuffer(buf, dtype=np.float64))


def test_read_only_and_buffer_inputs_update():
    s = np.array([[0.1, 0.9, 0.5]])
    s.flags.writeable = False
    m = qafast.RankingMetrics(["mrr@10"])
    m.update(s, memoryview(np.array([[0, 0, 1]], dtype=np.int32)))
    assert m.compute() == {"mrr@10": 0.5}


class _Accelerator:
    """A tensor on a GPU whose producer cannot copy it to the host through DLPack."""

    def __dlpack_device__(self):
        return (2, 0)

    def __dlpack__(self, **kw):
        raise BufferError("cannot export a CUDA tensor to the CPU")


class _CopyingAccelerator:
    """A tensor on a GPU whose producer copies it to the host when DLPack asks for the CPU."""

    def __init__(self, host):
        self.host = host
        self.copies = 0

    def __dlpack_device__(self):
        return (2, 0)

    def __dlpack__(self, *, dl_device=None, copy=None, **kw):
        if dl_device is None or int(dl_device[0]) != 1:
            raise BufferError("a CUDA tensor")
        self.copies += 1
        return self.host.copy().__dlpack__(**kw)


def test_accelerator_tensor_is_copied_to_the_host_once_when_its_producer_can():
    scores = _CopyingAccelerator(np.array([[0.2, 0.9]]))
    m = qafast.RankingMetrics(["mrr@10"])
    m.update(scores, [[1, 0]])
    assert scores.copies == 1 and m.compute() == {"mrr@10": 0.5}


def test_accelerator_tensor_error_says_how_to_move_it():
    m = qafast.RankingMetrics(["mrr@10"])
    with pytest.raises(ValueError, match=r"scores: .*cuda:0.*tensor\.detach\(\)\.cpu\(\)"):
        m.update(_Accelerator(), [[1]])


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize("shape, call, error, message", [
    ("batch", lambda m: m.update([[0.1, 0.2]], [[1, 0, 0]]), ValueError, "relevance has shape"),
    ("batch", lambda m: m.update([[0.1, 0.2]], [[1, 0]], mask=[[True]]), ValueError, "mask has shape"),
    ("batch", lambda m: m.update([[0.1, np.nan]], [[1, 0]]), ValueError,
     r"query \(row\) 0, candidate 1: score is NaN"),
    ("batch", lambda m: m.update([[0.1, 0.2]], [[1, 0.5]]), ValueError, "grade 0.5 is not an integer"),
    ("batch", lambda m: m.update([[0.1, 0.2]], [[1, -1]]), ValueError, "grade -1 is negative"),
    ("batch", lambda m: m.update([[0.1, 0.2]], [[1, 10**7]]), ValueError, "above 1000000"),
    ("batch", lambda m: m.update([[0.1, 0.2]], [["a", "b"]]), TypeError, "integer grades"),
    ("batch", lambda m: m.update([[0.1, 0.2]], [[1, 1]], num_relevant=[1]), ValueError,
     "2 candidates are relevant"),
    ("batch", lambda m: m.update([[0.1, 0.2]], [[1, 1]], num_relevant=[1, 2]), ValueError,
     "one entry per query"),
    ("batch", lambda m: m.update([0.1, 0.2], [1, 1]), ValueError, "pass query_ids"),
    ("rows", lambda m: m.update([0.1, 0.2], [1, 1], [1]), ValueError, "query_ids must be 1-d with 2"),
    ("rows", lambda m: m.update([0.1, np.nan], [1, 1], [1, 1], [1, 2]), ValueError,
     "query 1, document 2 .row 1.: score is NaN"),
    ("rows", lambda m: m.update([0.1, 0.2], [1, 1.5], [1, 1], [2, 3]), ValueError, "not an integer"),
    ("rows", lambda m: m.update([0.1, 0.2], [1, 1], ["a", "b"]), TypeError, "must be integers"),
    ("rows", lambda m: m.update([[[0.1]]], [[[1]]]), ValueError, "2-d .* or 1-d"),
    ("rows", lambda m: m.update(["x"], [1], [1], [1]), TypeError, "scores must hold numbers"),
])
def test_bad_input_raises_and_leaves_the_state_unchanged(shape, call, error, message):
    rows = shape == "rows"
    m = qafast.RankingMetrics(["mrr@10", "gm_map"])
    if rows:
        m.update([0.3, 0.9], [1, 0], [1, 1], [0, 1])
    else:
        m.update([[0.3, 0.9]], [[1, 0]])
    before = m.state_dict()
    with pytest.raises(error, match=message):
        call(m)
    after = m.state_dict()
    assert all(np.array_equal(before[k], after[k]) for k in before)
    if rows:  # an update after a failed one
        m.update([0.3, 0.9], [0, 1], [2, 2], [0, 1])
    else:
        m.update([[0.3, 0.9]], [[0, 1]])
    assert m.compute()["mrr@10"] == 0.75


def test_padding_may_hold_anything():
    m = qafast.RankingMetrics(["mrr@10"])
    m.update(np.array([[0.3, np.nan]]), np.array([[1.0, np.nan]]),
             mask=np.array([[True, False]]))
    m.update([[0.3, -np.inf]], [[1, -100]])  # -100: Hugging Face's label padding
    m.update(np.array([[0.3, 0.9]], dtype=np.float32), [[1, 7]], mask=[[True, False]])
    assert m.compute() == {"mrr@10": 1.0}


def test_rows_repeated_with_other_values_are_an_error():
    m = qafast.RankingMetrics(["mrr@10"])
    m.update([0.1, 0.2], [1, 0], [1, 1], [5, 6])
    m.update([0.3], [1], [1], [5])
    with pytest.raises(ValueError, match="query 1, document 5 arrived twice"):
        m.compute()


def test_one_input_shape_per_metric():
    m = qafast.RankingMetrics(["mrr@10"])
    m.update([[0.1]], [[1]])
    with pytest.raises(ValueError, match="one input shape"):
        m.update([0.1], [1], [3])
    r = qafast.RankingMetrics(["mrr@10"])
    r.update([0.1], [1], [3])
    with pytest.raises(ValueError, match="cannot merge .* batches with one of rows"):
        m.merge(r)
    with pytest.raises(ValueError, match="doc_ids in every update or in none"):
        r.update([0.1], [1], [3], [4])


def test_merge_into_itself_doubles():
    m = qafast.RankingMetrics(["num_rel", "mrr@10"])
    m.update([[0.3, 0.9]], [[1, 0]])
    assert m.merge(m).compute() == {"num_rel": 2.0, "mrr@10": 0.5}
    r = qafast.RankingMetrics(["num_ret"])
    r.update([0.3, 0.9], [1, 0], [1, 1])
    assert r.merge(r).compute() == {"num_ret": 4.0}  # no doc ids: four distinct rows


def test_merge_of_different_measures_or_options_is_an_error():
    m = qafast.RankingMetrics(["mrr@10"])
    for other in (qafast.RankingMetrics(["mrr@20"]),
                  qafast.RankingMetrics(["mrr@10"], relevance_level=2),
                  qafast.RankingMetrics(["mrr@10"], empty_queries="zero"),
                  qafast.RankingMetrics(["mrr@10"], max_docs=5)):
        with pytest.raises(ValueError, match="different measures or options"):
            m.merge(other)
    with pytest.raises(TypeError, match="cannot merge a AnswerMetrics"):
        m.merge(qafast.AnswerMetrics())


def test_load_state_dict_rejects_foreign_and_corrupted_states():
    m = qafast.RankingMetrics(["mrr@10", "map"])
    m.update([[0.3, 0.9]], [[1, 0]])
    good = m._state_arrays()  # numpy arrays, to tamper with
    other = qafast.RankingMetrics(["mrr@10"])
    with pytest.raises(ValueError, match=r"the state is for measures \['mrr@10', 'map'\]"):
        other.load_state_dict(good)
    with pytest.raises(TypeError, match="not a qafast.RankingMetrics state"):
        other.load_state_dict(qafast.AnswerMetrics().state_dict())
    with pytest.raises(TypeError, match="not a qafast.RankingMetrics state"):
        other.load_state_dict([1, 2])
    fresh = qafast.RankingMetrics(["mrr@10", "map"])
    for key, value, message in [
        ("sums", good["sums"][:1], "sums of dtype int64 and shape"),
        ("sums", good["sums"].astype(np.float64), "sums of dtype float64"),
        ("sums", good["sums"] + (1 << 40), "sums out of range"),
        ("count", -1, "count -1"),
        ("mode", "nonsense", "mode 'nonsense'"),
        ("row_scores", np.zeros(2), "row_scores of dtype float64 and shape"),
        ("version", 99, "version 99"),
    ]:
        bad = dict(good, **{key: value})
        with pytest.raises(ValueError, match=message):
            fresh.load_state_dict(bad)
        assert fresh.state_dict()["count"] == 0  # unchanged
    broken = dict(good)
    del broken["sums"]
    with pytest.raises(ValueError, match="no 'sums'"):
        fresh.load_state_dict(broken)
    fresh.load_state_dict(good)
    assert fresh.compute() == m.compute()
    assert pickle.loads(pickle.dumps(m)).compute() == m.compute()


# ---------------------------------------------------------------- exact sums


def test_exact_sums_are_fsum():
    rng = np.random.default_rng(1)
    for scale in (1.0, 1e-300, 1e300):
        v = rng.normal(size=(1000, 3)) * scale
        assert _exactsum.column_sums(v) == [math.fsum(v[:, j]) for j in range(3)]
    assert _exactsum.column_sums(np.array([[1e308], [1e308]])) == [math.inf]
    assert math.isnan(_exactsum.column_sums(np.array([[math.inf], [-math.inf]]))[0])


def test_evaluate_means_are_exactly_rounded():
    rng = random.Random(3)
    qrels = {f"q{i}": {f"d{j}": rng.randrange(3) for j in range(9)} for i in range(40)}
    run = {q: {d: rng.random() for d in docs} for q, docs in qrels.items()}
    per = qafast.evaluate(qrels, run, ["ndcg@5", "map"], per_query=True)
    got = qafast.evaluate(qrels, run, ["ndcg@5", "map"])
    for name in ("ndcg@5", "map"):
        assert got[name] == math.fsum(v[name] for v in per.values()) / len(per)


# ---------------------------------------------------------------- answers


def answers_data():
    return st.lists(st.tuples(
        st.sampled_from(["Paris", "the Eiffel tower", "", "tower", "1889", "a b c", "b c d"]),
        st.lists(st.sampled_from(["paris", "Eiffel Tower", "the", "1889", "b c", "c d e f"]),
                 max_size=3)), min_size=1, max_size=40)


@SETTINGS
@given(answers_data(), st.integers(1, 4), st.randoms(use_true_random=False),
       st.sampled_from([("squad", "token"), ("squad", "char"), ("none", "token")]))
def test_answer_metrics_in_any_split_equal_one_call(data, parts, rnd, options):
    normalizer, unit = options
    preds = [p for p, _ in data]
    golds = [g for _, g in data]
    accs = [qafast.AnswerMetrics(normalizer=normalizer, unit=unit) for _ in range(parts)]
    i = 0
    while i < len(data):
        k = rnd.randrange(1, 9)
        accs[rnd.randrange(parts)].update(preds[i:i + k], golds[i:i + k])
        i += k
    rnd.shuffle(accs)
    got = accs[0].merge(*accs[1:]).compute()
    em = qafast.exact_match(preds, golds, normalizer=normalizer)
    f1_per = qafast.f1(preds, golds, normalizer=normalizer, unit=unit, per_question=True)
    assert got["exact_match"] == em  # sums of 0 and 1 are exact in any order
    # the exactly rounded mean of the per-question values, which qafast.f1 gives too
    assert got["f1"] == math.fsum(f1_per) / len(preds)
    assert got["f1"] == qafast.f1(preds, golds, normalizer=normalizer, unit=unit)


def test_answer_metrics_errors_and_state():
    m = qafast.AnswerMetrics()
    m.update(["Paris"], [["paris"]])
    before = m.state_dict()
    with pytest.raises(ValueError, match="1 predictions but 2 references"):
        m.update(["x"], ["a", "b"])
    with pytest.raises(TypeError, match="question 0: the prediction must be a str"):
        m.update([3], ["a"])
    assert m.state_dict()["count"] == before["count"]
    with pytest.raises(ValueError, match="different options"):
        m.merge(qafast.AnswerMetrics(unit="char"))
    with pytest.raises(ValueError, match="the state is for"):
        qafast.AnswerMetrics(empty_rule="v1").load_state_dict(before)
    with pytest.raises(ValueError, match="corrupted"):
        qafast.AnswerMetrics().load_state_dict(dict(before, count=-3))
    with pytest.raises(TypeError, match="not a qafast.AnswerMetrics state"):
        qafast.AnswerMetrics().load_state_dict(qafast.RankingMetrics("map").state_dict())
    copy = qafast.AnswerMetrics()
    copy.load_state_dict(pickle.loads(pickle.dumps(before)))
    assert copy.compute() == m.compute() == {"exact_match": 1.0, "f1": 1.0}
    with pytest.raises(ValueError, match="no question scored yet"):
        qafast.AnswerMetrics().compute()
