"""Diversity measures of a run dict against a qrels dict read straight into ndeval's layout
(qafast.diversity._dict_values, the kernel diversity_dict_rankings) against the general path
(the same judgments as a DiversityQrels, encoded and joined by the engine): value by value,
and the inputs the direct path hands over to the general one."""
import collections
import math
import re
import types
from unittest import mock

import numpy as np
import pytest
from _examples import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import qafast
from qafast import _kernels, diversity
from qafast.diversity import DiversityQrels
from qafast.errors import InputError, InputTypeError

MEASURES = ["alpha_nDCG@5", "ERR_IA@5", "nERR_IA@3", "NRBP", "nNRBP", "AP_IA", "P_IA@2",
            "StRecall@3", "alpha_DCG@20", "alpha_nDCG(alpha=0.25)@4", "nERR_IA(rel=2)@5",
            "nNRBP(alpha=0.9,beta=0.3)", "StRecall(rel=0)@10"]

# ids that sort differently by code point and by UTF-16 code unit, that share a prefix longer
# than 8 characters (or not), Latin-1 and wider, ending in NUL
_ids = st.builds(lambda prefix, rest: prefix + rest,
                 st.sampled_from(["", "", "clueweb09-en-", "clueweb09-en-\x00"]),
                 st.text(alphabet="ab1é日🙂\uff61\x00Z", max_size=3))
_queries = st.sampled_from(["q1", "q2", "q3", "10", "é"])
_subtopics = st.sampled_from(["1", "2", "3", "10", "x"])
qrels_dicts = st.dictionaries(_queries, st.dictionaries(
    _subtopics, st.dictionaries(_ids, st.integers(-2, 3), max_size=6), max_size=4),
    max_size=4)
_scores = st.sampled_from([0.0, -0.0, 1.0, 1.5, -2.0, float("inf"), -float("inf"), 3e300])
run_lists = st.dictionaries(_queries, st.lists(st.tuples(_ids, _scores), max_size=12,
                                               unique_by=lambda x: x[0]), max_size=5)

SLOW = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _general_evaluate(*args, **options):
    """evaluate with the direct path switched off."""
    with mock.patch.object(diversity, "_dict_values", lambda *a: None):
        return qafast.evaluate(*args, **options)


def _same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


def _agree(qrels, run, measures=MEASURES, general=None, **options):
    """evaluate's answer through the direct path and the general one (``general``, by
    default evaluate with the direct path switched off), the same or the same error."""
    try:
        want = (general or _general_evaluate)(qrels, run, measures, **options)
    except (InputError, InputTypeError) as e:
        with pytest.raises(type(e), match=re.escape(str(e))):
            qafast.evaluate(qrels, run, measures, **options)
        return None
    got = qafast.evaluate(qrels, run, measures, **options)
    if options.get("per_query"):
        assert list(got) == list(want)
        for q in want:
            for m in measures:
                assert _same(got[q][m], want[q][m]), (q, m, got[q][m], want[q][m])
    else:
        for m in measures:
            assert _same(got[m], want[m]), (m, got[m], want[m])
    return got


@settings(max_examples=examples(300), **SLOW)
@given(qrels_dicts, run_lists, st.booleans(), st.data())
def test_direct_path_is_the_general_path(qrels, ranked, in_order, draw):
    """Ties in score (0.0 and -0.0 among them) and grade, unjudged and unranked documents,
    subtopics with no relevant document, empty subtopics and queries, queries on one side
    only, runs written in score order or not."""
    run = {q: dict(sorted(docs, key=lambda x: -x[1]) if in_order else docs)
           for q, docs in ranked.items()}
    level = draw.draw(st.integers(-1, 3))
    measures = draw.draw(st.lists(st.sampled_from(MEASURES), min_size=1, max_size=5,
                                  unique=True))
    direct = diversity._dict_values(qrels, run, diversity.parse_measures(measures), "run",
                                    {"relevance_level": level, "max_docs": None,
                                     "judged_only": False, "workers": 1})
    common = {q for q, d in run.items() if d} & {
        q for q, s in qrels.items() if any(s.values())}
    assert (direct is not None) == bool(common)
    _agree(qrels, run, measures, relevance_level=level, per_query=True)
    _agree(qrels, run, measures, relevance_level=level)


def _bench_like(topics=3, docs=40, seed=0):
    rng = np.random.default_rng(seed)
    qrels: dict = {}
    run: dict = {}
    for t in range(topics):
        q = str(t + 1)
        for d in rng.choice(docs * 3, docs, replace=False):
            qrels.setdefault(q, {}).setdefault(str(rng.integers(1, 6)), {})[
                f"clueweb09-en-{d:06d}"] = int(rng.choice([0, 0, 1, 2]))
        ranked = rng.choice(docs * 3, docs * 2, replace=False)
        run[q] = {f"clueweb09-en-{d:06d}": float(rng.integers(0, 20)) for d in ranked}
    return qrels, run


@pytest.mark.parametrize("seed", range(4))
def test_many_documents_per_topic(seed):
    qrels, run = _bench_like(seed=seed)
    assert _agree(qrels, run, per_query=True)


@pytest.mark.parametrize("change", [
    lambda q, r: r["1"].update(x=1),  # an int score: the general path converts it
    lambda q, r: r["1"].update(x=float("nan")),  # the general path names it
    lambda q, r: r.update({"1": types.MappingProxyType(r["1"])}),
    lambda q, r: r["1"].update({Name("x"): 1.0}),  # a str subclass
    # beyond 32 bits (the general path decides)
    lambda q, r: q["1"].setdefault("1", {}).update(x=2**40),
    lambda q, r: q["1"].setdefault("1", {}).update(x=np.int64(1)),
    lambda q, r: q["1"].setdefault("1", {}).update(x=True),
    lambda q, r: r.update({1: {"x": 1.0}}),  # an int query id
    lambda q, r: q.update({"9": {"1": {"x": "1"}}}),  # a query the run lacks, still read
    lambda q, r: r.update({"9": {"x": "high"}}),  # a run query the qrels lack, still read
    lambda q, r: q.update({"9": {"1": {"x": 2**40, "y": 1}}}),  # outside 32 bits, unranked
])
def test_other_inputs_take_the_general_path(change):
    qrels, run = _bench_like(topics=2, docs=5)
    change(qrels, run)
    columns = diversity.parse_measures(MEASURES)
    options = {"relevance_level": 1, "max_docs": None, "judged_only": False, "workers": 1}
    assert diversity._dict_values(qrels, run, columns, "run", options) is None
    _agree(qrels, run, per_query=True)


class Name(str):
    pass


Qrel = collections.namedtuple("Qrel", "query_id doc_id relevance iteration")


@pytest.mark.parametrize("options", [{"queries": "qrels"}, {"max_docs": 3},
                                     {"judged_only": True}])
def test_other_options_take_the_general_path(options):
    qrels, run = _bench_like(topics=3, docs=6)
    run["4"] = {"x": 1.0}
    del run["2"]
    _agree(qrels, run, per_query=True, **options)
    _agree(qrels, run, MEASURES + ["P@5"], per_query=True)


def test_no_query_in_common_is_the_general_error():
    with pytest.raises(InputError, match="no query in common"):
        qafast.evaluate({"q": {"1": {"d": 1}}}, {"r": {"d": 1.0}}, ["alpha_nDCG@5"])


def _arrays(judgments, ranked):
    i64 = np.int64
    n = len(judgments)
    jo = np.zeros(n + 1, i64)
    jo[1:] = np.cumsum(judgments)
    ro = np.zeros(n + 1, i64)
    ro[1:] = np.cumsum(ranked)
    return (jo, ro, *(np.full(int(jo[-1]), -7, i64) for _ in range(4)),
            np.full(n + 1, -7, i64), np.full(n, -7, i64), np.full(int(ro[-1]), -7, i64))


def test_dicts_larger_than_their_offsets_are_never_written_past():
    qrels = [{"1": {"a": 1, "b": 2}, "2": {"c": 0}}]
    run = [{"a": 1.0, "b": 0.5, "c": 0.0}]
    code = {"1": 0, "2": 1}
    for judgments, ranked in ((2, 3), (3, 2), (4, 3), (3, 4)):
        arrays = _arrays([judgments], [ranked])
        assert _kernels.diversity_dict_rankings(qrels, run, code, *arrays) == -1
        assert (arrays[-1][ranked:] == -7).all() if ranked < 3 else True
    arrays = _arrays([3], [3])
    assert _kernels.diversity_dict_rankings(qrels, run, code, *arrays) == 3
    t, local, row, grade, doc_offsets, subtopics, ranked = arrays[2:]
    assert row.tolist() == [0, 1, 2] and local.tolist() == [0, 0, 1]
    assert grade.tolist() == [1, 2, 0] and subtopics.tolist() == [2]
    assert ranked.tolist() == [0, 1, 2] and doc_offsets.tolist() == [0, 3]
    # a subtopic without a code, or with one outside the codes, is not taken
    assert _kernels.diversity_dict_rankings(qrels, run, {"1": 0}, *_arrays([3], [3])) == -1
    assert _kernels.diversity_dict_rankings(qrels, run, {"1": 0, "2": 5},
                                            *_arrays([3], [3])) == -1


def test_mismatched_arrays_are_refused():
    jo, ro, *outs = _arrays([1], [1])
    with pytest.raises(InputError):
        _kernels.diversity_dict_rankings([{"1": {"a": 1}}], [], {"1": 0}, jo, ro, *outs)
    outs[0] = outs[0][:0]
    with pytest.raises(InputError):
        _kernels.diversity_dict_rankings([{"1": {"a": 1}}], [{"a": 1.0}], {"1": 0}, jo, ro,
                                         *outs)
    with pytest.raises(InputError):
        _kernels.diversity_dict_rankings([{"1": {"a": 1}}], [{"a": 1.0}], {"1": 0},
                                         np.array([1, 0], np.int64), ro, *_arrays([1], [1])[2:])


# -- a DiversityQrels evaluated against run dicts (diversity_rank_dicts) --------------------

def _general_reused(*args, **options):
    """evaluate with the run dict read as a Run (the ranking kernel switched off)."""
    with mock.patch.object(diversity, "_rank_run_dict", lambda *a: None):
        return qafast.evaluate(*args, **options)


@pytest.mark.filterwarnings("ignore:the run:UserWarning")  # (no query in common under "qrels")
@settings(max_examples=examples(200), **SLOW)
@given(qrels_dicts, run_lists, st.booleans(), st.sampled_from(["run", "qrels"]),
       st.one_of(st.none(), st.integers(0, 4)), st.booleans(), st.booleans(), st.data())
def test_reused_qrels_rank_run_dicts_as_the_general_path(qrels, ranked, in_order, queries,
                                                          max_docs, judged_only, from_file,
                                                          draw):
    """The same inputs as above, the qrels a DiversityQrels (made from the dict, or read from
    a file, whose subtopics sum in numeric order), with every option."""
    run = {q: dict(sorted(docs, key=lambda x: -x[1]) if in_order else docs)
           for q, docs in ranked.items()}
    judged = [(q, s, d, g) for q, subs in qrels.items() for s, docs in subs.items()
              for d, g in docs.items()]
    if from_file:
        judged = [j for j in judged if j[2].isprintable() and " " not in j[2]
                  and j[2] and "\x00" not in j[2]]
        if not judged:
            return
        dq = DiversityQrels.from_file("".join(f"{q} {s} {d} {g}\n" for q, s, d, g in
                                              judged).encode())
    else:
        dq = DiversityQrels(qrels)
    if not len(dq):
        return
    measures = draw.draw(st.lists(st.sampled_from(MEASURES), min_size=1, max_size=5,
                                  unique=True))
    options = dict(queries=queries, max_docs=max_docs, judged_only=judged_only,
                   relevance_level=draw.draw(st.integers(-1, 3)))
    for per_query in (True, False):
        if _agree(dq, run, measures, general=_general_reused, per_query=per_query,
                  **options) is None:
            return  # (an error, the same on both paths)


def test_reused_qrels_take_the_ranking_kernel():
    qrels, run = _bench_like()
    dq = DiversityQrels(qrels)
    encoded = dq._encode()
    options = {"relevance_level": 1, "max_docs": None, "judged_only": False, "workers": 1}
    assert diversity._rank_run_dict(encoded, run, "run", options) is not None
    for other in ({"1": {"x": 1}}, {"1": {Name("x"): 1.0}}, {1: {"x": 1.0}},
                  {"1": {"x": float("nan")}}, {"zz": {"x": "high"}}):
        assert diversity._rank_run_dict(encoded, {**run, **other}, "run", options) is None
        for queries in ("run", "qrels"):
            try:
                want = _general_reused(dq, {**run, **other}, MEASURES, per_query=True,
                                       queries=queries)
            except (InputError, InputTypeError) as e:
                with pytest.raises(type(e), match=re.escape(str(e))):
                    qafast.evaluate(dq, {**run, **other}, MEASURES, per_query=True,
                                    queries=queries)
                continue
            got = qafast.evaluate(dq, {**run, **other}, MEASURES, per_query=True,
                                  queries=queries)
            assert got == want


def test_reused_qrels_with_ids_other_than_exact_str_take_the_general_path():
    dq = DiversityQrels([Qrel("q", Name("d"), 1, "1"), Qrel("q", "e", 1, "2")])
    assert dq._encode().row_strs() == (None, None) or all(
        type(d) is str for d in dq._encode().row_strs()[0])
    run = {"q": {"d": 1.0, "e": 2.0}}
    assert qafast.evaluate(dq, run, ["StRecall@2"])["StRecall@2"] == 1.0


def test_ranking_kernel_checks_its_arrays():
    i64 = np.int64
    docs, hashes = ["a", "b"], np.array([hash("a"), hash("b")], i64)
    good = (docs, hashes, np.array([0, 2], i64), [{"b": 1.0, "z": 0.5}], np.array([0], i64),
            np.array([0, 2], i64), np.full(2, -7, i64))
    assert _kernels.diversity_rank_dicts(*good)
    assert good[-1].tolist() == [1, -1]
    for i, bad in ((1, hashes[:1]), (2, np.array([0, 3], i64)), (4, np.array([1], i64)),
                   (5, np.array([0, 3], i64)), (6, np.full(1, -7, i64)),
                   (2, np.array([1, 0, 2], i64))):
        args = list(good)
        args[i] = bad
        with pytest.raises(InputError):
            _kernels.diversity_rank_dicts(*args)
    # a run dict of another size than its offsets say is not taken, nor written past
    out = np.full(1, -7, i64)
    assert not _kernels.diversity_rank_dicts(docs, hashes, good[2], good[3], good[4],
                                             np.array([0, 1], i64), out)
    assert out.tolist() == [-7]
