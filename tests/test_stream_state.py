"""The saved state of RankingMetrics and AnswerMetrics: one record, one validator.

Hostile states (each one seen by a user) are refused with an error naming the field; every
state that honest updates and merges make is accepted, and loads back to the same bits.
"""

import io
import math
import pickle
import struct
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import qafast
from qafast import _exactsum
from qafast._measure_parser import parse_measures
from qafast.errors import InputError, InputTypeError
from test_measure_names import IR_NAMES, RANX_NAMES
from _examples import examples

try:
    import torch
except ImportError:
    torch = None

MEASURES = ["mrr@10", "map"]


def batch_state():
    """A state with numpy arrays, to tamper with (loads as state_dict()'s lists do)."""
    m = qafast.RankingMetrics(MEASURES)
    m.update([[0.1, 0.5]], [[0, 1]])
    return m._state_arrays()


def bits(result):
    """compute()'s values as their bytes: NaN included, compared bit for bit."""
    return None if result is None else {k: struct.pack("<d", v) for k, v in result.items()}


def compute_or_none(metric):
    try:
        return metric.compute()
    except ValueError as e:
        assert "no query measured" in str(e) or "no question scored" in str(e)
        return None


# ---------------------------------------------------------------------------- hostile states


def test_sums_beyond_what_the_count_allows_are_refused():
    # a crafted state made compute() return mrr@10 = 6.5e32
    state = batch_state()
    sums = state["sums"].copy()
    sums[0] = 0
    sums[0, 36] = 2**31  # 2**109 in all, for one query whose value is at most 1
    with pytest.raises(InputError, match=r"sums out of range: column 0 \('mrr@10'\) adds up "
                                         r"to 6.49037e\+32 over 1 query.*in \[0, 1\]") as e:
        qafast.RankingMetrics(MEASURES).load_state_dict(dict(state, sums=sums))
    assert e.value.field == "sums"
    negative = state["sums"].copy()
    negative[1, :-1] = 2**32 - 1
    negative[1, -1] = -1  # -2**-1074: the least negative sum
    with pytest.raises(InputError, match=r"column 1 \('map'\) adds up to -4.94066e-324"):
        qafast.RankingMetrics(MEASURES).load_state_dict(dict(state, sums=negative))


def test_a_finite_nonfinite_sum_is_refused():
    # a crafted state made AnswerMetrics.compute() return exact_match = -0.33
    a = qafast.AnswerMetrics()
    a.update(["x", "y", "z"], ["x", "q", "r"])
    state = a.state_dict()
    with pytest.raises(InputError, match=r"nonfinite_sums holds -1.0 for column 0 "
                                         r"\('exact_match'\)") as e:
        qafast.AnswerMetrics().load_state_dict(dict(state, nonfinite_sums=np.array([-1.0, 0])))
    assert e.value.field == "nonfinite_sums"
    # an infinity where the measure is always finite
    with pytest.raises(InputError, match="where the measure is finite"):
        qafast.AnswerMetrics().load_state_dict(dict(state, nonfinite_sums=np.array([0, np.inf])))


def test_measures_that_are_not_a_list_are_a_type_error():
    # was "TypeError: 'int' object is not iterable"
    with pytest.raises(InputTypeError, match="measures must be a list of str, not int") as e:
        qafast.RankingMetrics(MEASURES).load_state_dict(dict(batch_state(), measures=5))
    assert e.value.field == "measures"
    with pytest.raises(InputTypeError, match=r"measures\[1\] must be a str, not int"):
        qafast.RankingMetrics(MEASURES).load_state_dict(dict(batch_state(), measures=["map", 3]))


def test_a_huge_count_is_refused_when_loaded():
    # was an OverflowError in compute()
    with pytest.raises(InputError, match=r"count 100000000000\.\.\. \(a 1329-bit number\) is "
                                         r"outside 0\.\.") as e:
        qafast.RankingMetrics(MEASURES).load_state_dict(dict(batch_state(), count=10**400))
    assert e.value.field == "count"
    with pytest.raises(InputTypeError, match="count must be an int, not float"):
        qafast.RankingMetrics(MEASURES).load_state_dict(dict(batch_state(), count=1.0))
    with pytest.raises(InputTypeError, match="count must be an int, not bool"):
        qafast.RankingMetrics(MEASURES).load_state_dict(dict(batch_state(), count=True))


def test_fortran_ordered_sums_load_as_c_contiguous():
    # loaded, then failed at the next update with "ndarray is not C-contiguous"
    state = batch_state()
    m = qafast.RankingMetrics(MEASURES)
    m.load_state_dict(dict(state, sums=np.asfortranarray(state["sums"])))
    m.update([[0.1, 0.5]], [[1, 0]])
    again = qafast.RankingMetrics(MEASURES)
    again.update([[0.1, 0.5]], [[0, 1]])
    again.update([[0.1, 0.5]], [[1, 0]])
    assert m.compute() == again.compute()
    a = qafast.AnswerMetrics()
    a.update(["x"], ["x"])
    b = qafast.AnswerMetrics()
    b.load_state_dict(dict(a.state_dict(), sums=np.asfortranarray(a.state_dict()["sums"])))
    b.update(["y"], ["x"])
    assert b.compute() == {"exact_match": 0.5, "f1": 0.5}


def test_the_top_limb_cannot_make_a_merge_wrap():
    # a top limb of 2**62 loaded, then a merge into itself wrapped it to -2**63: -inf
    state = batch_state()
    sums = state["sums"].copy()
    sums[:, -1] = 2**62
    with pytest.raises(InputError, match="sums out of range: column 0 .* more than the "
                                         "largest double"):
        qafast.RankingMetrics(MEASURES).load_state_dict(dict(state, sums=sums))
    # the same limbs put in a metric's accumulator by hand are refused by merge
    m = qafast.RankingMetrics(MEASURES)
    m.update([[0.1, 0.5]], [[0, 1]])
    m._limbs[:, -1] = 2**62
    with pytest.raises(InputError, match="sums out of range"):
        qafast.RankingMetrics(MEASURES).merge(m)
    with pytest.raises(InputError, match="sums out of range"):
        m.merge(m)


def test_a_merge_past_the_largest_count_is_refused_and_changes_nothing():
    m = qafast.RankingMetrics(MEASURES)
    m.load_state_dict(dict(batch_state(), count=2**52, sums=batch_state()["sums"]))
    m.merge(m)  # 2**53: the largest count a state holds
    before = m.state_dict()
    with pytest.raises(InputError, match="merging would make count 18014398509481984"):
        m.merge(m)
    assert m.state_dict()["count"] == before["count"] == 2**53


def test_rules_between_fields_name_the_field():
    state = batch_state()
    rows = {"row_query_ids": [1], "row_doc_ids": [1], "row_scores": [0.5], "row_grades": [1]}
    cases = [
        ({"mode": "rows"}, "count", "count 1 in a state of mode 'rows'"),
        ({"mode": "", "count": 0}, "sums", "adds up to 1 over 0 queries"),
        (rows, "row_query_ids", "holds 1 rows in a state of mode 'batch'"),
        ({"row_has_doc_ids": 1}, "row_has_doc_ids", "1 in a state of mode 'batch'"),
        ({"rows_without_ids": 4}, "rows_without_ids", "4 where row_has_doc_ids is -1"),
        ({**rows, "row_scores": [np.nan]}, "row_scores", r"holds NaN \(at 0\)"),
        ({**rows, "row_grades": [1_000_001]}, "row_grades",
         r"holds 1000001 \(at 0\), outside 0\.\.1000000"),
        ({**rows, "row_doc_ids": [1, 2]}, "row_doc_ids", r"shape \(2,\); expected shape \(1,\)"),
        ({"nonfinite_sums": np.array([np.nan, 0.0])}, "nonfinite_sums",
         "where the measure is finite"),
        ({"empty_queries": "sometimes"}, "empty_queries", "expected one of 'skip'"),
        ({"relevance_level": 0}, "relevance_level", "0 is outside 1..1000001"),
        ({"mode": 3}, "mode", "mode must be a str, not int"),
        ({"sums": {"a": 1}}, "sums", "sums of dtype object"),
    ]
    for change, field, message in cases:
        with pytest.raises((InputError, InputTypeError), match=message) as e:
            qafast.RankingMetrics(MEASURES).load_state_dict({**state, **change})
        assert e.value.field == field, (change, e.value)
    # rows without document ids: tie keys 0, -1, ... numbered by rows_without_ids
    r = qafast.RankingMetrics(MEASURES)
    r.update([0.5, 0.25], [1, 0], [7, 7])
    good = r.state_dict()
    with pytest.raises(InputError, match="tie keys from 0 down to .* = -1, not -5..0") as e:
        qafast.RankingMetrics(MEASURES).load_state_dict(dict(good, row_doc_ids=[0, -5]))
    assert e.value.field == "row_doc_ids"


def test_grades_above_what_the_measures_take_are_refused():
    # rows graded 6 for ERR (grades 0-4) loaded, and compute() gave ERR@10 = -0.09 or NaN
    r = qafast.RankingMetrics(["ERR@10", "map"])
    r.update([0.5, 0.25, 0.75], [1, 0, 4], [7, 7, 8], [1, 2, 3])
    state = r.state_dict()
    with pytest.raises(InputError, match=r"row_grades holds 6 \(at 2\), outside 0\.\.4 \(4 is "
                                         r"the highest grade ERR@10 takes\)") as e:
        qafast.RankingMetrics(["ERR@10", "map"]).load_state_dict(
            dict(state, row_grades=[1, 0, 6]))
    assert e.value.field == "row_grades"
    # without ERR, any grade qafast takes
    m = qafast.RankingMetrics(["map"])
    m.load_state_dict(dict(state, measures=["map"], sums=[[0] * 68],
                           nonfinite_sums=[0.0], row_grades=[1, 0, 1_000_000]))
    assert m.compute() == {"map": 1.0}


def test_header_and_keys_are_checked():
    state = batch_state()
    cases = [
        (dict(state, format=np.array([1.0, 2.0])), InputTypeError, "format",
         "not a qafast.RankingMetrics state"),  # was numpy's "truth value ... is ambiguous"
        (dict(state, version=np.array([1, 1])), InputError, "version", "version ndarray"),
        (dict(state, version="1"), InputError, "version", "version str"),
        (dict(state, version=True), InputError, "version", "version bool"),
        (dict(state, extra=[1]), InputError, "extra", "'extra' is not a field of it"),
        ({**state, 3: "x"}, InputError, "3", "3 is not a field of it"),
    ]
    for bad, error, field, message in cases:
        with pytest.raises(error, match=message) as e:
            qafast.RankingMetrics(MEASURES).load_state_dict(bad)
        assert e.value.field == field, (field, e.value)
    m = qafast.RankingMetrics(MEASURES)
    m.load_state_dict(dict(state, version=np.int64(1), count=np.int32(1)))
    assert m.compute() == {"mrr@10": 1.0, "map": 1.0}


def test_an_infinity_where_only_nan_can_be_is_refused():
    m = qafast.RankingMetrics(["iprec_at_recall.0.5"])
    m.update([0.5, 0.25], [1, 0], [7, 7], [1, 2])  # rows: iprec can be NaN, never infinite
    b = qafast.RankingMetrics(["iprec_at_recall.0.5"])
    b.update([[0.5, 0.25]], [[1, 0]])
    state = b.state_dict()
    with pytest.raises(InputError, match=r"nonfinite_sums holds inf for column 0 "
                                         r"\('iprec_at_recall_0.50'\), whose values are in "
                                         r"\[0, 1\], or NaN"):
        qafast.RankingMetrics(["iprec_at_recall.0.5"]).load_state_dict(
            dict(state, nonfinite_sums=[np.inf]))
    again = qafast.RankingMetrics(["iprec_at_recall.0.5"])
    again.load_state_dict(dict(state, nonfinite_sums=[np.nan]))
    assert math.isnan(again.compute()["iprec_at_recall_0.50"])


def test_tie_keys_of_rows_without_document_ids_are_each_given_once():
    r = qafast.RankingMetrics(["mrr@10"])
    r.update([0.5, 0.25, 0.75], [1, 0, 1], [7, 7, 7])
    with pytest.raises(InputError, match="each given once; -1 is repeated") as e:
        qafast.RankingMetrics(["mrr@10"]).load_state_dict(
            dict(r.state_dict(), row_doc_ids=[0, -1, -1]))
    assert e.value.field == "row_doc_ids"


def test_unpickling_goes_through_the_validator():
    m = qafast.RankingMetrics(MEASURES)
    m.update([[0.1, 0.5]], [[0, 1]])
    data = m.__getstate__()
    sums = data["state"]["sums"].copy()
    sums[0, 36] = 2**31
    evil = pickle.dumps(m)
    fresh = qafast.RankingMetrics.__new__(qafast.RankingMetrics)
    with pytest.raises(InputError, match="sums out of range"):
        fresh.__setstate__({"config": data["config"], "state": dict(data["state"], sums=sums)})
    with pytest.raises(InputTypeError, match="measures must be a list of str"):
        fresh.__setstate__({"config": data["config"], "state": dict(data["state"], measures=5)})
    with pytest.raises(InputTypeError, match="not a qafast.RankingMetrics state"):
        fresh.__setstate__({"config": data["config"]})
    assert pickle.loads(evil).compute() == m.compute()
    a = qafast.AnswerMetrics()
    a.update(["x", "y", "z"], ["x", "q", "r"])
    got = a.__getstate__()
    with pytest.raises(InputError, match="nonfinite_sums holds -1.0"):
        qafast.AnswerMetrics.__new__(qafast.AnswerMetrics).__setstate__(
            dict(got, state=dict(got["state"], nonfinite_sums=np.array([-1.0, 0.0]))))
    assert pickle.loads(pickle.dumps(a)).compute() == a.compute()


# ----------------------------------------------------------------- states saved by qafast 0.x


def test_a_state_written_by_earlier_code_loads():
    """States as the code before the state record wrote them (format and version 1)."""
    sums = np.zeros((3, 68), dtype=np.int64)
    for (i, j), limb in {(0, 33): 262144, (1, 31): 1073741824, (1, 32): 639684931,
                         (1, 33): 327899, (2, 33): 786432}.items():
        sums[i, j] = limb
    batch = {
        "format": "qafast.RankingMetrics", "version": 1,
        "measures": ["mrr@10", "ndcg@10", "num_rel"], "relevance_level": 1,
        "empty_queries": "skip", "max_docs": 0, "mode": "batch", "count": 2, "sums": sums,
        "nonfinite_sums": np.array([0.0, 0.0, 0.0]),
        "row_query_ids": np.array([], dtype=np.int64),
        "row_doc_ids": np.array([], dtype=np.int64), "row_scores": np.array([], dtype=np.float64),
        "row_grades": np.array([], dtype=np.int32), "row_has_doc_ids": -1,
        "rows_without_ids": 0,
    }
    m = qafast.RankingMetrics(["mrr@10", "ndcg@10", "num_rel"])
    m.load_state_dict(batch)
    assert m.compute() == {"mrr@10": 0.5, "ndcg@10": 0.6254179934277616, "num_rel": 3.0}
    m.update([[0.9, 0.5, 0.3], [0.2, 0.8, 0.1]], [[0, 1, 2], [1, 0, 0]])
    assert m.compute() == {"mrr@10": 0.5, "ndcg@10": 0.6254179934277616, "num_rel": 6.0}
    rows = {
        "format": "qafast.RankingMetrics", "version": 1, "measures": ["mrr@10"],
        "relevance_level": 1, "empty_queries": "skip", "max_docs": 0, "mode": "rows",
        "count": 0, "sums": np.zeros((1, 68), dtype=np.int64), "nonfinite_sums": np.array([0.]),
        "row_query_ids": np.array([7, 7, 8]), "row_doc_ids": np.array([0, -1, -2]),
        "row_scores": np.array([0.5, 0.25, 0.75]),
        "row_grades": np.array([1, 0, 2], dtype=np.int32), "row_has_doc_ids": 0,
        "rows_without_ids": 3,
    }
    r = qafast.RankingMetrics(["mrr@10"])
    r.load_state_dict(rows)
    assert r.compute() == {"mrr@10": 1.0}
    answer_sums = np.zeros((2, 68), dtype=np.int64)
    for (i, j), limb in {(0, 33): 262144, (1, 31): 2684354560, (1, 32): 2863311530,
                         (1, 33): 436906}.items():
        answer_sums[i, j] = limb
    answers = {
        "format": "qafast.AnswerMetrics", "version": 1, "normalizer": "squad", "unit": "token",
        "empty_rule": "v2", "count": 2, "sums": answer_sums,
        "nonfinite_sums": np.array([0.0, 0.0]),
    }
    a = qafast.AnswerMetrics()
    a.load_state_dict(answers)
    assert a.compute() == {"exact_match": 0.5, "f1": 0.8333333333333333}
    # and today's state_dict() writes the same dict, its arrays as plain lists
    again = qafast.RankingMetrics(["mrr@10", "ndcg@10", "num_rel"])
    again.update([[0.9, 0.5, 0.3], [0.2, 0.8, 0.1]], [[0, 1, 2], [1, 0, 0]])
    written = again.state_dict()
    # one key more: an option added since (its default where it is absent)
    assert [k for k in written if k != "torchmetrics_nonpositive"] == list(batch)
    assert written["torchmetrics_nonpositive"] is False
    for k, v in batch.items():
        assert written[k] == (v.tolist() if isinstance(v, np.ndarray) else v), k
        assert type(written[k]) is (list if isinstance(v, np.ndarray) else type(v)), k


V1 = Path(__file__).parent / "data" / "states" / "states_v1.pickle"


def test_states_and_pickles_written_with_numpy_arrays_load():
    """States, and whole pickled metrics, that qafast wrote when a state's arrays were numpy
    arrays (tests/data/states/make_v1.py), load with their compute() bits."""
    saved = pickle.loads(V1.read_bytes())
    for name, entry in saved.items():
        state = entry["state"]
        assert isinstance(state["sums"], np.ndarray)
        metric = (qafast.AnswerMetrics() if name == "answers" else qafast.RankingMetrics(
            state["measures"], empty_queries=state["empty_queries"]))
        metric.load_state_dict(state)
        assert bits(metric.compute()) == bits(entry["compute"]), name
        assert bits(pickle.loads(entry["pickled"]).compute()) == bits(entry["compute"]), name
        # written again as plain lists, the state loads to the same bits
        again = type(metric).__new__(type(metric))
        again.__setstate__(pickle.loads(pickle.dumps(metric)).__getstate__())
        assert bits(again.compute()) == bits(entry["compute"]), name
        plain = metric.state_dict()
        assert all(v.tolist() == plain[k] if isinstance(v, np.ndarray) else v == plain[k]
                   for k, v in state.items()), name


# -------------------------------------------------------------------- tensors and lists


def test_arrays_may_be_lists_or_tensors():
    r = qafast.RankingMetrics(MEASURES)
    r.update([0.5, 0.25, 0.75], [1, 0, 2], [7, 7, 8], [3, 4, 5])
    for state in (batch_state(), r.state_dict()):
        want = qafast.RankingMetrics(MEASURES)
        want.load_state_dict(state)
        as_lists = {k: v.tolist() if isinstance(v, np.ndarray) else v for k, v in state.items()}
        versions = [as_lists]
        if torch is not None:
            versions.append({k: torch.from_numpy(v) if isinstance(v, np.ndarray) else v
                             for k, v in state.items()})
        for version in versions:
            got = qafast.RankingMetrics(MEASURES)
            got.load_state_dict(version)
            assert bits(got.compute()) == bits(want.compute())
    # float32 scores, int64 grades: read as the dtype the state holds
    narrow = dict(r.state_dict(), row_scores=np.array([0.5, 0.25, 0.75], dtype=np.float32),
                  row_grades=np.array([1, 0, 2], dtype=np.uint8))
    got = qafast.RankingMetrics(MEASURES)
    got.load_state_dict(narrow)
    assert got.compute() == r.compute()
    assert got._state_arrays()["row_grades"].dtype == np.int32


PLAIN = (list, int, float, str, bool)


def assert_plain(value, where=""):
    """Only what torch's weights_only unpickler reads without a tensor: dicts, lists, ints,
    floats, strs and bools (no numpy array or scalar, no class of qafast's)."""
    if isinstance(value, dict):
        for k, v in value.items():
            assert type(k) is str, (where, k)
            assert_plain(v, f"{where}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            assert_plain(v, f"{where}[{i}]")
    else:
        assert type(value) in PLAIN, (where, type(value))


def checkpoint_metrics():
    m = qafast.RankingMetrics(["mrr@10", "ndcg@10", "gm_map", "P@2"])
    m.update([[0.9, 0.5, 0.3], [0.2, 0.8, 0.1]], [[0, 1, 2], [1, 0, 0]])
    m.update([[-np.inf, 0.5, 0.5]], [[1, 1, 0]], mask=[[True, True, True]])
    r = qafast.RankingMetrics(["mrr@10", "ndcg@10", "gm_map", "P@2"])
    r.update([0.5, 0.25, 0.75, -np.inf], [1, 0, 2, 1], [7, 7, 8, 8], [2**40, -3, 5, 6])
    n = qafast.RankingMetrics(["mrr@10", "ndcg@10", "gm_map", "P@2"], empty_queries="zero")
    n.update([0.5, 0.25, 0.75], [1, 0, 2], [7, 7, 2**62])
    a = qafast.AnswerMetrics(unit="char", empty_rule="v1")
    a.update(["Paris", "the tower"], [["paris"], ["Eiffel Tower"]])
    return {"batch": m, "rows": r, "rows_without_ids": n, "answers": a}


def same_kind(metric):
    if isinstance(metric, qafast.AnswerMetrics):
        return qafast.AnswerMetrics(unit=metric._unit, empty_rule=metric._empty_rule)
    names, level, empty, max_docs, nonpositive = metric._config
    return qafast.RankingMetrics(list(names), relevance_level=level, empty_queries=empty,
                                 max_docs=max_docs, torchmetrics_nonpositive=nonpositive)


def test_state_dict_is_plain_data_that_pickle_writes():
    for name, metric in checkpoint_metrics().items():
        state = metric.state_dict()
        assert_plain(state, name)
        again = same_kind(metric)
        again.load_state_dict(pickle.loads(pickle.dumps(state)))
        assert bits(again.compute()) == bits(metric.compute())
        assert again.state_dict() == state


@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_a_checkpoint_of_state_dicts_loads_with_weights_only():
    """torch.save, then torch.load(weights_only=True) (torch's default since 2.6), of a
    checkpoint holding states beside a model's, as Lightning and HF write them."""
    metrics = checkpoint_metrics()
    checkpoint = {"epoch": 3, "state_dict": {"layer.weight": torch.ones(2, 2)},
                  "callbacks": {"qafast": {name: m.state_dict() for name, m in metrics.items()}},
                  **{name: m.state_dict() for name, m in metrics.items()}}
    buffer = io.BytesIO()
    torch.save(checkpoint, buffer)
    buffer.seek(0)
    loaded = torch.load(buffer, weights_only=True)
    for name, metric in metrics.items():
        for state in (loaded[name], loaded["callbacks"]["qafast"][name]):
            again = same_kind(metric)
            again.load_state_dict(state)
            assert bits(again.compute()) == bits(metric.compute()), name
            assert again.state_dict() == metric.state_dict(), name


@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_tensors_checkpoint_loads_with_weights_only():
    m = qafast.RankingMetrics(["mrr@10", "ndcg@10", "gm_map"])
    m.update([[0.9, 0.5, 0.3], [0.2, 0.8, 0.1]], [[0, 1, 2], [1, 0, 0]])
    r = qafast.RankingMetrics(["mrr@10", "ndcg@10", "gm_map"])
    r.update([0.5, 0.25, 0.75], [1, 0, 2], [7, 7, 8])
    a = qafast.AnswerMetrics()
    a.update(["Paris", "the tower"], [["paris"], ["Eiffel Tower"]])
    saved = {"model": {"w": torch.ones(2)}, "batch": m.state_dict(tensors=True),
             "rows": r.state_dict(tensors=True), "answers": a.state_dict(tensors=True)}
    buffer = io.BytesIO()
    torch.save(saved, buffer)
    buffer.seek(0)
    loaded = torch.load(buffer, weights_only=True)
    assert isinstance(loaded["batch"]["sums"], torch.Tensor)
    for key, metric in (("batch", m), ("rows", r), ("answers", a)):
        fresh = type(metric)(["mrr@10", "ndcg@10", "gm_map"]) if key != "answers" \
            else qafast.AnswerMetrics()
        fresh.load_state_dict(loaded[key])
        assert bits(fresh.compute()) == bits(metric.compute())
        assert all(np.array_equal(fresh.state_dict()[k], v)
                   for k, v in metric.state_dict().items())
    # numpy arrays, what state_dict() gave before, are what torch's default refuses
    buffer = io.BytesIO()
    torch.save(m._state_arrays(), buffer)
    buffer.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="numpy"):
        torch.load(buffer, weights_only=True)


# ------------------------------------------------------------------ honest states pass

SPECIAL = ["11pt_avg.", "11pt_avg.0.5,0.2", "ndcg_exp@5", "ndcg.1=3,2=7", "ndcg.1=-2",
           "utility.1,-1,0,0", "gm_map", "gm_bpref", "iprec_at_recall.0,1.5,-1",
           "Rprec_mult.0.5,3,-1", "set_F.0.5", "set_F.-0.5", "rbp.p=0.9", "rbp_resid.p=0.5",
           "Rndcg", "ndcg_rel", "G", "dcg", "ideal_dcg", "binG", "relative_P", "success", "unj",
           "infAP", "bpref", "num_nonrel_judged_ret", "ndcg@10-l2", "map@5-l3", "mrr@10-l0",
           "yaap"]
EVERY = ["all_trec", "ndcg_cut_exp.3", "recip_rank_cut.3"] + IR_NAMES + RANX_NAMES


def _parsing(names):
    kept = []
    for name in names:
        try:
            parse_measures([name])
        except ValueError:
            continue
        kept.append(name)
    return kept


MEASURE_SETS = [["mrr@10", "ndcg@10", "map", "num_rel"], _parsing(SPECIAL), _parsing(EVERY)]
# grades past what exponential gains hold (2**1100 overflows) and ERR takes (4); not up to
# 1,000,000, which costs some measures a second a query (their gain tables)
GRADES = [0, 0, 0, 1, 1, 2, 3, 5, 1100]
SCORES = [0.0, 0.25, 0.5, 1.0, -3.5, np.inf, -np.inf, 1e300]


@st.composite
def row_batches(draw, doc_ids):
    out = []
    for _ in range(draw(st.integers(1, 4))):
        n = draw(st.integers(0, 12))
        q = draw(st.lists(st.integers(0, 4), min_size=n, max_size=n))
        s = draw(st.lists(st.sampled_from(SCORES), min_size=n, max_size=n))
        g = draw(st.lists(st.sampled_from(GRADES), min_size=n, max_size=n))
        d = draw(st.lists(st.integers(0, 30), min_size=n, max_size=n, unique=True)) \
            if doc_ids else None
        mask = draw(st.one_of(st.none(), st.lists(st.booleans(), min_size=n, max_size=n)))
        out.append((np.array(s, dtype=np.float64), np.array(g), np.array(q, dtype=np.int64),
                    None if d is None else np.array(d, dtype=np.int64), mask))
    return out


@st.composite
def dense_batches(draw):
    out = []
    for _ in range(draw(st.integers(1, 4))):
        nq, nc = draw(st.integers(1, 4)), draw(st.integers(1, 9))
        s = np.array(draw(st.lists(st.sampled_from(SCORES), min_size=nq * nc,
                                   max_size=nq * nc))).reshape(nq, nc)
        g = np.array(draw(st.lists(st.sampled_from(GRADES), min_size=nq * nc,
                                   max_size=nq * nc))).reshape(nq, nc)
        num_rel = None
        if draw(st.booleans()):
            have = (g >= 1).sum(axis=1)
            num_rel = have + np.array(draw(st.lists(st.integers(0, 40), min_size=nq,
                                                    max_size=nq)))
        out.append((s, g, num_rel))
    return out


SETTINGS = settings(max_examples=examples(60), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
OPTIONS = st.tuples(st.sampled_from([1, 2, 5]), st.sampled_from(["skip", "zero"]),
                    st.sampled_from([None, 1, 3]))


def fresh(measures, options):
    level, empty, max_docs = options
    return qafast.RankingMetrics(measures, relevance_level=level, empty_queries=empty,
                                 max_docs=max_docs)


def feed(metric, batch):
    if len(batch) == 3:
        s, g, num_rel = batch
        metric.update(s, g, num_relevant=num_rel)
    else:
        s, g, q, d, mask = batch
        metric.update(s, g, q, d, mask=mask)


def round_trip(metric, measures, options, tensors=False):
    """The metric through state_dict -> load_state_dict: the state must be accepted, and
    give back the same state and the same bits."""
    state = metric.state_dict(tensors=tensors and torch is not None)
    again = fresh(measures, options)
    again.load_state_dict(state)
    back = again._state_arrays()
    assert all(np.array_equal(v, back[k], equal_nan=True) if isinstance(v, np.ndarray)
               else v == back[k] for k, v in metric._state_arrays().items())
    assert outcome(again) == outcome(metric)
    return again


def outcome(metric):
    """compute()'s bits, or the error it raises (rows repeated with other values, no query
    measured, ...)."""
    try:
        return bits(metric.compute())
    except ValueError as e:
        return str(e)


@SETTINGS
@given(st.one_of(dense_batches(), row_batches(True), row_batches(False)),
       st.sampled_from(MEASURE_SETS), OPTIONS, st.integers(1, 3), st.randoms(use_true_random=False))
def test_honest_updates_and_merges_make_states_the_validator_accepts(data, measures, options,
                                                                     parts, rnd):
    accs = [fresh(measures, options) for _ in range(parts)]
    for batch in data:
        feed(accs[rnd.randrange(parts)], batch)
    for acc in accs:
        round_trip(acc, measures, options)
    merged = accs[0]
    for other in accs[1:]:
        how = rnd.choice(["merge", "state", "pickle"])
        if how == "state":
            other = round_trip(other, measures, options, tensors=rnd.random() < 0.3)
        elif how == "pickle" and "11pt_avg." not in measures:
            # (its column is named 11pt_avg_, which names no measure: such a metric does not
            # unpickle, before the state record as after)
            other = pickle.loads(pickle.dumps(other))
        merged.merge(other)
    if rnd.random() < 0.3:
        merged.merge(merged)
    round_trip(merged, measures, options)


@SETTINGS
@given(row_batches(True), st.sampled_from(MEASURE_SETS[1:]), OPTIONS)
def test_each_query_value_is_in_its_measures_range(data, measures, options):
    """The ranges the sums are held to, checked on every query's own value."""
    m = fresh(measures, options)
    for batch in data:
        feed(m, batch)
    try:
        values = m._rows_values()
    except ValueError:
        return
    for j, (name, allowed) in enumerate(m._allowed):
        v = values[:, j]
        finite = np.isfinite(v)
        assert allowed.nonfinite or finite.all(), (name, v)
        assert ((v[finite] >= allowed.low) & (v[finite] <= allowed.high)).all(), (name, v)


@SETTINGS
@given(st.lists(st.tuples(st.sampled_from(["Paris", "the Eiffel tower", "", "a b c", "b c d"]),
                          st.lists(st.sampled_from(["paris", "Eiffel Tower", "b c", "c d e"]),
                                   max_size=3)), min_size=1, max_size=20),
       st.integers(1, 3), st.randoms(use_true_random=False))
def test_honest_answer_states_are_accepted(data, parts, rnd):
    accs = [qafast.AnswerMetrics(unit=rnd.choice(["token", "char"])) for _ in range(1)]
    accs += [qafast.AnswerMetrics(unit=accs[0]._unit) for _ in range(parts - 1)]
    for p, g in data:
        rnd.choice(accs).update([p], [g])
    for acc in accs:
        again = qafast.AnswerMetrics(unit=acc._unit)
        again.load_state_dict(acc.state_dict())
        assert bits(compute_or_none(again)) == bits(compute_or_none(acc))
    merged = accs[0].merge(*accs[1:])
    merged.merge(merged)
    again = qafast.AnswerMetrics(unit=merged._unit)
    again.load_state_dict(merged.state_dict())
    assert bits(compute_or_none(again)) == bits(compute_or_none(merged))


def test_the_bounds_leave_the_top_limb_far_from_int64():
    """The widest bound, count 2**53 times the largest double, is far below what the top
    limb can hold, so adding any two accepted states never wraps."""
    widest = (2**53) * _exactsum.units(1.7976931348623157e308)
    top = widest >> (32 * (_exactsum.LIMBS - 1))
    assert top < 2**8
    assert not math.isinf(float(2**53))
