"""The kernels against qafast.reference, the plain-Python specification, on random input.

Scores come from a handful of values so that ties are the rule; document ids mix case,
digits whose string and numeric orders differ, accents, CJK, emoji and the empty string;
grades include negatives (judged but unjudged) and values above 9.
"""

import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import qafast
from qafast import reference
from qafast._measure_parser import Column, parse_measures
from _examples import examples

DOC_IDS = ["a", "b", "B", "ab", "d9", "d10", "d100", "é", "e", "Ω", "中文", "😀", "#x", "", "z z"]
SCORES = [0.0, -0.0, 0.5, 1.0, -1.0, 0.25, 1e-300, 3.0]
GRADES = [-1, 0, 0, 1, 1, 2, 3, 12]

MEASURES = [
    "all_trec", "dcg", "ideal_dcg", "ndcg.1=3,2=9,4=4.5", "ndcg.0=0.5,1=0.7,2=1.2",
    "G.1=2.5", "Rndcg.2=0.3", "ndcg_rel.1=-1", "rbp.p=0.5", "rbp.p=0.8,2=3", "rbp_resid.p=0.7",
    "utility.2,-1,0.5,0", "11pt_avg..25,.5,.75", "11pt_avg.0.9,0.1,0.5", "set_F.0.25",
    "Rprec_mult.0.35,5", "iprec_at_recall..33", "P.1,2,7,50", "recall.3", "success.2",
    "map_cut.2", "ndcg_cut.1,3", "relative_P.2", "unj.1,3", "mrr@2", "ndcg_exp@3", "ndcg_exp",
    "hit@1", "yaap",
]
COLUMNS = [c for c in parse_measures(MEASURES) if c.family not in ("runid", "num_q", "relstring")]


def reference_param(c: Column):
    fam = c.family
    if fam in ("P", "recall", "map_cut", "ndcg_cut", "relative_P", "success", "unj",
               "recip_rank_cut", "ndcg_cut_exp"):
        return c.k
    if c.name == fam:
        return None  # trec_eval's default parameters (and its printed name)
    if fam in ("iprec_at_recall", "Rprec_mult", "set_F"):
        return c.x
    if fam in ("utility", "11pt_avg"):
        return tuple(c.values)
    if fam in ("ndcg", "G", "dcg", "ideal_dcg", "ndcg_rel", "Rndcg"):
        return tuple(zip(c.keys, c.values)) or None
    if fam == "rbp":
        return tuple(zip(c.keys, c.values)) + (("p", c.x),) if c.keys else c.x
    if fam == "rbp_resid":
        return c.x
    return None


@st.composite
def cases(draw):
    n_queries = draw(st.integers(1, 4))
    qrels, run = {}, {}
    for q in range(n_queries):
        qid = draw(st.sampled_from(["q1", "q2", "q10", "Q", "é", "q 3"]))
        judged = draw(st.lists(st.sampled_from(DOC_IDS), unique=True, max_size=8))
        qrels[qid] = {d: draw(st.sampled_from(GRADES)) for d in judged}
        if draw(st.integers(0, 5)):
            retrieved = draw(st.lists(st.sampled_from(DOC_IDS), unique=True, max_size=12))
            run[qid] = {d: draw(st.sampled_from(SCORES)) for d in retrieved}
    extra = draw(st.lists(st.sampled_from(DOC_IDS), unique=True, max_size=3))
    run.setdefault("only-in-run", {d: 1.0 for d in extra})
    qrels = {q: v for q, v in qrels.items() if v}
    return qrels, run


def close(a, b):
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    return a == b or abs(a - b) <= 1e-12 * max(1.0, abs(b))


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases(), level=st.sampled_from([1, 1, 2, 3]), judged_only=st.booleans(),
       max_docs=st.sampled_from([None, None, 1, 3]), queries=st.sampled_from(["run", "qrels"]))
def test_kernels_equal_the_reference(case, level, judged_only, max_docs, queries):
    qrels, run = case
    common = {q for q in qrels if run.get(q)}  # a query without documents is absent
    if not common:
        if queries == "run" or not qrels:
            with pytest.raises(ValueError, match="no query in common"):
                qafast.evaluate(qrels, run, "map", queries=queries)
            return
        # trec_eval -c: every qrels query on an empty ranking, with a warning
        warnings.simplefilter("ignore", UserWarning)
    got = qafast.evaluate(qrels, run, [c.name for c in COLUMNS], relevance_level=level,
                          judged_only=judged_only, max_docs=max_docs, queries=queries,
                          per_query=True)
    specs = [(c.family, reference_param(c)) for c in COLUMNS]
    want = reference.evaluate(qrels, run, specs, relevance_level=level, judged_only=judged_only,
                              max_docs=max_docs, queries=queries)
    assert set(got) == set(want)
    for q in want:
        for c, spec in zip(COLUMNS, specs):
            assert close(got[q][c.name], want[q][spec]), (q, c.name, got[q][c.name], want[q][spec])
    summary = qafast.evaluate(qrels, run, [c.name for c in COLUMNS], relevance_level=level,
                              judged_only=judged_only, max_docs=max_docs, queries=queries)
    for c, spec in zip(COLUMNS, specs):
        expected = reference.summarize(c.family, [want[q][spec] for q in sorted(want)],
                                       qrels=qrels if queries == "qrels" else None)
        assert close(summary[c.name], expected), (c.name, summary[c.name], expected)


@settings(max_examples=examples(100), deadline=None)
@given(case=cases())
def test_relstring_equals_the_reference(case):
    from qafast._engine import Evaluation as _Evaluation
    from qafast._ranked import as_qrels as _as_qrels
    from qafast._ranked import as_run as _as_run

    qrels, run = case
    if not any(run.get(q) for q in qrels):
        return
    ev = _Evaluation(_as_qrels(qrels), _as_run(run), relevance_level=1, judged_only=False,
                     max_docs=None, queries="run", workers=1)
    want = reference.evaluate(qrels, run, [("relstring", 10)])
    for p, q in enumerate(ev.ids):
        assert f"'{ev.relstring(p, 10)}'" == want[q][("relstring", 10)]


@settings(max_examples=examples(100), deadline=None)
@given(case=cases(), workers=st.integers(2, 4))
def test_workers_change_nothing(case, workers):
    qrels, run = case
    if not any(run.get(q) for q in qrels):
        return
    names = [c.name for c in COLUMNS]
    one = qafast.evaluate(qrels, run, names, per_query=True)
    other = qafast.evaluate(qrels, run, names, per_query=True, workers=workers)
    # repr: NaN (trec_eval's 0/0, e.g. Rndcg) must match NaN, and 0.0 must not match -0.0
    assert repr(other) == repr(one)


# Large queries take the kernels' other paths: a table of the judged hashes past 32
# judgments, ranks read off the positions of a run already in score order, and a sort of the
# whole query past 24 judged retrieved documents. Ids share their first 8 bytes
# ("document-..."), so that ties in score are settled by the bytes after them.
LARGE_IDS = ([f"d{i}" for i in range(120)] + [f"document-{i}" for i in range(80)]
             + [f"é{i}" for i in range(30)] + [f"中文{i}" for i in range(30)] + ["", "z z"])
LARGE_MEASURES = ["map", "P.5,30,100", "ndcg_cut.10,50", "recip_rank", "recall.20,100",
                  "bpref", "Rprec", "num_rel_ret", "infAP"]
LARGE_COLUMNS = parse_measures(LARGE_MEASURES)


@st.composite
def large_cases(draw):
    ints = draw(st.booleans())
    pool = list(range(260)) if ints else LARGE_IDS
    # ties everywhere, in small groups, or rare
    scores = draw(st.sampled_from([SCORES, SCORES[:3], [float(x) for x in range(30)],
                                   [float(x) for x in range(200)]]))
    qrels, run = {}, {}
    for q in range(draw(st.integers(1, 3))):
        qid = f"q{q}"
        # sizes on both sides of the kernels' thresholds (32 judgments; 8 and 24 judged
        # retrieved documents), from permutations: hypothesis keeps unique lists short
        judged = draw(st.permutations(pool))[:draw(st.sampled_from([0, 6, 30, 33, 60, 150]))]
        grades = draw(st.lists(st.sampled_from(GRADES), min_size=len(judged),
                               max_size=len(judged)))
        qrels[qid] = dict(zip(judged, grades))
        retrieved = draw(st.permutations(pool))[:draw(st.sampled_from([1, 12, 40, 100, 200]))]
        values = draw(st.lists(st.sampled_from(scores), min_size=len(retrieved),
                               max_size=len(retrieved)))
        docs = dict(zip(retrieved, values))
        order = draw(st.sampled_from(["rank", "rank", "shuffled", "one swap"]))
        if order != "shuffled":
            # trec_eval's order: score descending, then docno descending (bytes, or value)
            items = sorted(docs.items(), reverse=True, key=lambda kv: (
                kv[1], kv[0] if ints else kv[0].encode()))
            if order == "one swap" and len(items) > 1:
                i = draw(st.integers(0, len(items) - 2))
                items[i], items[i + 1] = items[i + 1], items[i]
            docs = dict(items)
        run[qid] = docs
    return {q: v for q, v in qrels.items() if v}, run, ints


def _as_arrays(cls, data):
    rows = [(q, d, v) for q, docs in data.items() for d, v in docs.items()]
    q, d, v = zip(*rows)
    return cls.from_arrays(np.array(q), np.array(d, dtype=np.int64), np.array(v))


@settings(max_examples=examples(75), deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.data_too_large])
@given(case=large_cases(), judged_only=st.booleans(), max_docs=st.sampled_from([None, 7, 60]))
def test_large_queries_equal_the_reference(case, judged_only, max_docs):
    qrels, run, ints = case
    if not any(q in run for q in qrels):
        return
    for q, docs in run.items():
        judged = [d for d in docs if d in qrels.get(q, {})]
        event(f"judgments > 32: {len(qrels.get(q, {})) > 32}; judged retrieved: "
              f"{'>24' if len(judged) > 24 else '9-24' if len(judged) > 8 else '<=8'}")
    if ints:
        # integer ids rank by value; the reference gets them as zero-padded str, whose
        # order is the same
        got = qafast.evaluate(_as_arrays(qafast.Qrels, qrels), _as_arrays(qafast.Run, run),
                              LARGE_MEASURES, judged_only=judged_only, max_docs=max_docs,
                              per_query=True)
        qrels, run = ({q: {f"{d:03d}": v for d, v in docs.items()} for q, docs in x.items()}
                      for x in (qrels, run))
    else:
        got = qafast.evaluate(qrels, run, LARGE_MEASURES, judged_only=judged_only,
                              max_docs=max_docs, per_query=True)
    specs = [(c.family, reference_param(c)) for c in LARGE_COLUMNS]
    want = reference.evaluate(qrels, run, specs, judged_only=judged_only, max_docs=max_docs)
    assert set(got) == set(want)
    for q in want:
        for c, spec in zip(LARGE_COLUMNS, specs):
            assert close(got[q][c.name], want[q][spec]), (q, c.name, got[q][c.name], want[q][spec])
