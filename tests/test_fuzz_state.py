"""Hypothesis-driven fuzzing of saved streaming state: valid states of RankingMetrics and
AnswerMetrics, mutated (values, types, dtypes, shapes, keys removed, added or swapped), are
loaded, computed, merged and unpickled.

The only accepted outcomes are a :class:`qafast.QafastError`, or values within the range
each measure can have (``ValueRange``: what one query's value can be, times the number of
queries for a summed count). ``QAFAST_FUZZ_EXAMPLES`` sets the number of examples (50 by
default; .ci/run's hardening block runs more, against the bounds-checked build).
"""

from __future__ import annotations

import math
import os
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import qafast
from _examples import examples
from qafast.errors import QafastError

try:
    import torch
except ImportError:
    torch = None

EXAMPLES = int(os.environ.get("QAFAST_FUZZ_EXAMPLES") or examples(50))

RANKING_SETS = [
    ["mrr@10", "ndcg@10", "map", "P@2", "recall@5"],
    ["num_rel", "num_ret", "gm_map", "ERR@10", "ndcg.1=3,2=7"],
    ["bpref", "infAP", "iprec_at_recall.0,0.5", "Rndcg", "success@1", "G"],
]


def _metrics():
    """Honest metrics of every kind of state: batches, rows with and without document ids,
    answers; each with queries measured, and one without any."""
    out = []
    rng = np.random.default_rng(0)
    for measures in RANKING_SETS:
        batch = qafast.RankingMetrics(measures, empty_queries="zero", max_docs=4,
                                      torchmetrics_nonpositive=True)
        batch.update(rng.integers(-2, 3, size=(3, 5)) / 2, rng.integers(0, 4, size=(3, 5)),
                     num_relevant=[5, 6, 7])
        rows = qafast.RankingMetrics(measures, relevance_level=2)
        rows.update(rng.normal(size=12), rng.integers(0, 4, size=12),
                    rng.integers(0, 3, size=12), rng.permutation(12))
        no_ids = qafast.RankingMetrics(measures)
        no_ids.update(rng.integers(0, 3, size=9) / 2, rng.integers(0, 3, size=9),
                      rng.integers(0, 3, size=9))
        out += [batch, rows, no_ids, qafast.RankingMetrics(measures)]
    answers = qafast.AnswerMetrics(unit="char")
    answers.update(["Paris", "the tower", ""], [["paris"], ["Eiffel Tower"], []])
    out += [answers, qafast.AnswerMetrics(unit="char")]
    return out


METRICS = _metrics()


def fresh(metric):
    if isinstance(metric, qafast.AnswerMetrics):
        return qafast.AnswerMetrics(unit=metric._unit, empty_rule=metric._empty_rule)
    names, level, empty, max_docs, nonpositive = metric._config
    return qafast.RankingMetrics(list(names), relevance_level=level, empty_queries=empty,
                                 max_docs=max_docs, torchmetrics_nonpositive=nonpositive)


# ---------------------------------------------------------------------------- values

_EDGE_INTS = [0, 1, -1, 2, 3, 4, 5, 7, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**53, 2**53 + 1,
              2**62, 2**63 - 1, -2**63, 2**63, 2**64 - 1, 2**64, 10**400, -10**400]
_EDGE_FLOATS = [0.0, -0.0, 0.5, 1.0, 1.0000000000000002, 2.0, -1.0, 1e308, -1e308, 5e-324,
                math.inf, -math.inf, math.nan]
_DTYPES = ["int8", "uint8", "int32", "uint32", "int64", "uint64", "float16", "float32",
           "float64", "bool", "complex128", "object", "U3", "datetime64[s]"]
ints = st.one_of(st.sampled_from(_EDGE_INTS), st.integers(-2**70, 2**70))
floats = st.one_of(st.sampled_from(_EDGE_FLOATS), st.floats())
scalars = st.one_of(ints, floats, st.booleans(), st.none(), st.text(max_size=6),
                    st.binary(max_size=12), st.sampled_from(["", "batch", "rows", "squad",
                                                             "token", "v1", "map", "zero"]))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.tuples(inner, inner),
    st.dictionaries(st.text(max_size=4), inner, max_size=3)), max_leaves=12)


def _as_array(value):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return np.array(value)
    except (ValueError, TypeError, OverflowError):
        return None


@st.composite
def mutations(draw, state):
    """``state`` (a copy) with 1 to 4 mutations."""
    state = dict(state)
    for _ in range(draw(st.integers(1, 4))):
        keys = sorted(state, key=str)
        op = draw(st.integers(0, 9))
        # the element, shape, dtype and tensor mutations pick an array, the last an int
        of_kind = [k for k in keys if isinstance(state[k], (list, np.ndarray)) == (op < 9)]
        key = draw(st.sampled_from(of_kind if 4 <= op and of_kind else keys or ["format"]))
        value = state.get(key)
        array = _as_array(value) if isinstance(value, (list, np.ndarray)) else None
        if op == 0:  # a field removed
            state.pop(key, None)
        elif op == 1:  # a field added
            state[draw(st.sampled_from(["extra", "sums ", "Count", "limbs"]))] = draw(values)
        elif op == 2:  # any value in place of the field's
            state[key] = draw(values)
        elif op == 3:  # two fields swapped
            other = draw(st.sampled_from(keys))
            state[key], state[other] = state[other], value
        elif op in (4, 5) and array is not None and array.size and array.dtype.kind in "biuf":
            # one element changed (the rest stay plausible)
            flat = array.astype(object).ravel()
            i = draw(st.integers(0, flat.size - 1))
            x = int(flat[i]) if array.dtype.kind in "biu" else float(flat[i])
            near = st.sampled_from([x + 1, x - 1, x * 2, -x])
            flat[i] = draw(st.one_of(near, st.integers(-2, 12), ints) if op == 4 else
                           st.one_of(near, ints, floats))
            changed = flat.reshape(array.shape)
            state[key] = (changed.tolist() if draw(st.booleans()) else
                          _as_array(changed.tolist()))
        elif op == 6 and array is not None:  # another shape
            how = draw(st.integers(0, 3))
            if how == 0 and array.ndim:
                array = array[:-1] if array.shape[0] else array
            elif how == 1:
                array = np.concatenate([array.ravel(), array.ravel()[:1]]) if array.size else \
                    np.zeros(3)
            elif how == 2:
                array = array.T if array.ndim > 1 else array.reshape(-1, 1)
            else:
                array = array.reshape(-1)[:0].reshape(0, 0) if array.ndim else array
            state[key] = array
        elif op == 7 and array is not None:  # another dtype
            dtype = draw(st.sampled_from(_DTYPES))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    state[key] = array.astype(dtype)
                except (TypeError, ValueError, OverflowError, RuntimeError):
                    # RuntimeError: numpy's for a string too short to be a date
                    state[key] = np.zeros(array.shape, dtype=dtype)
        elif op == 8 and array is not None and torch is not None and array.dtype != object:
            try:  # as a tensor (a 0-d or non-contiguous one too)
                t = torch.from_numpy(np.ascontiguousarray(array))
                state[key] = t.t() if t.ndim == 2 and draw(st.booleans()) else t
            except TypeError:
                pass
        elif op == 9 and isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            # an int nearby, or as another int type
            state[key] = draw(st.sampled_from([value + 1, value - 1, -value, value * 2**32,
                                               np.int64(value) if -2**63 <= value < 2**63
                                               else value, value + 2**53]))
    return state


# ------------------------------------------------------------------------- what it can be

def allowed_ranges(metric, count: int) -> dict[str, tuple[float, float, str]]:
    """Each value compute() may give after ``count`` queries at most: (low, high, and what
    else: "" nothing, "nan" NaN, "any" NaN or an infinity)."""
    if isinstance(metric, qafast.AnswerMetrics):
        return {"exact_match": (0.0, 1.0, ""), "f1": (0.0, 1.0, "")}
    out = {}
    for column, (name, allowed) in zip(metric._columns, metric._allowed):
        low, high = allowed.low, allowed.high
        if column.aggregate == "sum":
            low, high = min(0.0, low * count), high * count
        elif column.aggregate == "gm":
            low, high = math.exp(low), math.exp(high)
        out[name] = (low, high, "" if not allowed.nonfinite else
                     "any" if allowed.infinite else "nan")
    return out


def check_values(metric, result: dict[str, float], count: int) -> None:
    ranges = allowed_ranges(metric, count)
    assert list(result) == list(ranges)
    for name, value in result.items():
        low, high, nonfinite = ranges[name]
        assert type(value) is float, (name, value)
        if not math.isfinite(value):
            assert nonfinite == "any" or nonfinite == "nan" and math.isnan(value), (name, value)
            continue
        assert low <= value <= high, (name, value, low, high)


def most_queries(state) -> int:
    """An upper bound on the queries a loaded state holds: its count, or its rows."""
    rows = state.get("row_query_ids")
    try:
        n = len(rows) if rows is not None else 0
    except TypeError:
        n = 0
    count = state.get("count")
    return max(n, count if isinstance(count, int) else 0, 1)


def exercise(metric, state) -> None:
    """Load ``state`` into a metric like ``metric``; then compute, merge and unpickle it.
    Each step may refuse with a QafastError and nothing else; values are in range."""
    target = fresh(metric)
    before = target._state_arrays()
    try:
        target.load_state_dict(state)
    except QafastError:
        after = target._state_arrays()  # a refused state leaves the metric as it was
        assert list(after) == list(before)
        assert all(np.array_equal(after[k], v, equal_nan=True) if isinstance(v, np.ndarray)
                   else after[k] == v for k, v in before.items())
        return
    bound = most_queries(state)
    try:
        check_values(target, target.compute(), bound)
    except QafastError:
        pass
    try:
        target.merge(target)
        check_values(target, target.compute(), 2 * bound)
    except QafastError:
        pass
    if not isinstance(target, qafast.AnswerMetrics) or isinstance(target._normalizer, str):
        again = pickle.loads(pickle.dumps(target))
        assert again._state_arrays().keys() == target._state_arrays().keys()


@pytest.mark.parametrize("index", range(len(METRICS)))
def test_mutated_states_are_refused_or_give_values_in_range(index):
    metric = METRICS[index]
    base = metric.state_dict() if index % 2 else metric._state_arrays()

    @settings(max_examples=EXAMPLES, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(state=mutations(base))
    def run(state):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exercise(metric, state)

    run()


@pytest.mark.parametrize("index", range(len(METRICS)))
def test_the_unmutated_states_load(index):
    metric = METRICS[index]
    for base in (metric.state_dict(), metric._state_arrays()):
        again = fresh(metric)
        again.load_state_dict(base)
        assert again.state_dict() == metric.state_dict()
