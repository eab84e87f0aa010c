"""DiversityQrels read from a dict {query: {subtopic: {doc: grade}}}: the compiled walk of the
dicts (qafast.diversity._set_from_dict) against the general reading of the same judgments
(a read-only view of the dict, which that walk does not take), judgment by judgment and
measure by measure; and the inputs the walk hands over to the general reading."""
import math
import re
import types

import numpy as np
import pytest
from _examples import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import qafast
from qafast import _kernels
from qafast.diversity import DiversityQrels
from qafast.errors import InputTypeError

MEASURES = ["alpha_nDCG@5", "ERR_IA@5", "nERR_IA@3", "NRBP", "nNRBP", "AP_IA", "P_IA@2",
            "StRecall@3", "P@2", "nDCG@5"]

# ids that sort differently by code point and by UTF-8 byte, and that look alike
ids = st.text(alphabet="a1é日🙂Z \u00a0", min_size=0, max_size=3)
grades = st.one_of(st.integers(-2, 3), st.sampled_from([-2**63, 2**63 - 1, 10**6]))
qrels_dicts = st.dictionaries(
    ids, st.dictionaries(ids, st.dictionaries(ids, grades, max_size=6), max_size=4),
    max_size=4)


def general(data: dict) -> DiversityQrels:
    """The same judgments read the general way (the walk takes only a plain dict)."""
    return DiversityQrels(types.MappingProxyType(data))


def columns(dq: DiversityQrels) -> tuple:
    return dq.query, dq.subtopic, dq.doc, dq.grade.tolist()


def same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


@settings(max_examples=examples(150), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(qrels_dicts)
def test_walk_reads_as_the_general_path(data):
    fast, slow = DiversityQrels(data), general(data)
    assert fast._ids[0] is not slow._ids[0]
    assert columns(fast) == columns(slow)
    assert len(fast) == len(slow) == sum(len(d) for s in data.values() for d in s.values())
    if not len(fast):
        return
    try:
        b = slow._encode()
    except qafast.errors.InputError as e:  # a highest grade beyond int32
        with pytest.raises(qafast.errors.InputError, match=re.escape(str(e))):
            fast._encode()
        return
    a = fast._encode()
    assert a.topic_index == b.topic_index
    for name in ("subtopics", "nrel_offsets", "doc_offsets", "t", "local", "doc_row",
                 "grade"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert a.plain.query_ids == b.plain.query_ids
    assert np.array_equal(a.plain.values, b.plain.values)


@settings(max_examples=examples(60), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(qrels_dicts, st.data())
def test_walk_evaluates_as_the_general_path(data, draw):
    """Ties in score and grade, unjudged and unranked documents, empty queries."""
    judged = [(q, d) for q, s in data.items() for docs in s.values() for d in docs]
    run: dict = {}
    for q, d in judged + draw.draw(st.lists(st.tuples(ids, ids), max_size=4)):
        run.setdefault(q, {})[d] = float(draw.draw(st.integers(0, 2)))
    if not run or not len(general(data)):
        return
    small = {q: {s: {d: max(-2, min(g, 3)) for d, g in docs.items()}
                 for s, docs in subs.items()} for q, subs in data.items()}
    want = qafast.evaluate(general(small), run, MEASURES, per_query=True)
    got = qafast.evaluate(DiversityQrels(small), run, MEASURES, per_query=True)
    assert got.keys() == want.keys()
    for q in want:
        for m in MEASURES:
            assert same(got[q][m], want[q][m]), (q, m)


class Name(str):
    pass


@pytest.mark.parametrize("data", [
    {Name("q"): {"1": {"d": 1}}},  # a str subclass: read as its str() by the general path
    {"q": {Name("1"): {"d": 1}}},
    {"q": {"1": {Name("d"): 1}}},
    {1: {"1": {"d": 1}}},  # an int id, read as its str()
    {"q": {1: {"d": 1}}},
    {"q": {"1": {"d": np.int64(2)}}},  # numpy's integers
    {"q": types.MappingProxyType({"1": {"d": 1}})},  # another mapping at each level
    {"q": {"1": types.MappingProxyType({"d": 1})}},
])
def test_other_inputs_take_the_general_path(data):
    assert _kernels.diversity_dict_total(data) < 0 or _kernels.encode_diversity_dict(
        data, [], [], [], *(np.empty(1, np.int64) for _ in range(4))) < 0
    dq = DiversityQrels(data)
    assert (dq.query, dq.subtopic, dq.doc) == (["q" if "q" in map(str, data) else "1"],
                                               ["1"], ["d"])


@pytest.mark.parametrize("grade", [True, 1.0, "1", None])
def test_a_grade_other_than_an_integer_is_named(grade):
    with pytest.raises(InputTypeError, match="query 'q', document 'd'"):
        DiversityQrels({"q": {"1": {"d": grade}}})


def test_a_grade_beyond_int64_is_not_taken_by_the_walk():
    data = {"q": {"1": {"d": 2**70}}}
    assert _kernels.encode_diversity_dict(
        data, [], [], [], *(np.empty(1, np.int64) for _ in range(4))) == -1


def test_a_dict_larger_than_counted_is_never_written_past():
    data = {"q": {"1": {"a": 1, "b": 2}, "2": {"c": 0}}}
    cols = [np.full(2, -7, np.int64) for _ in range(4)]  # room for 2 of its 3 judgments
    assert _kernels.encode_diversity_dict(data, [], [], [], *cols) == -1
    with pytest.raises(qafast.errors.InputError):
        _kernels.encode_diversity_dict(data, [], [], [], np.empty(3, np.int64),
                                       *(np.empty(2, np.int64) for _ in range(3)))


def test_a_mapping_whose_len_lies_reads_as_its_items():
    """The general reading counts a subtopic's judgments by reading them, not by len()."""

    class LyingDict(dict):
        def __len__(self):
            return 10**6

    plain = {"q1": {"1": {"d1": 1, "d2": 0}, "2": {"d2": 1, "dé": 1}}, "q2": {"1": {"x": 1}}}
    lying = {"q1": {"1": {"d1": 1, "d2": 0}, "2": LyingDict({"d2": 1, "dé": 1})},
             "q2": {"1": {"x": 1}}}
    run = {"q1": {"d2": 2.0, "d1": 1.0, "dé": 1.0}, "q2": {"x": 1.0}}
    assert columns(DiversityQrels(lying)) == columns(DiversityQrels(plain))
    assert (qafast.evaluate(lying, run, MEASURES, per_query=True)
            == qafast.evaluate(plain, run, MEASURES, per_query=True))
