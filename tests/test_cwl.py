"""qafast cwl: cwl-eval's C/W/L measures (golden outputs, the rules, the errors)."""

import math
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qafast import cli
from qafast.cwl_eval import cwl
from qafast.errors import FormatError, InputError, MeasureError
from qafast.reference import cwl as spec

DATA = os.path.join(os.path.dirname(__file__), "data", "cwl")


def _data(name):
    return os.path.join(DATA, name)


def _golden(name):
    with open(_data(name), encoding="utf-8") as f:
        return f.read()


@pytest.mark.parametrize("argv, golden", [
    ([], "default.out"),
    (["-n", "-r", "--max_depth", "20"], "residuals_depth20.out"),
    (["-r", "-c", _data("costs.txt"), "-m", _data("metrics.txt"), "--max_cost", "2",
      "--min_cost", "0.5"], "costs_metrics.out"),
])
def test_cli_prints_what_cwl_eval_prints(argv, golden, capsys):
    assert cli.main(["cwl", _data("qrels.txt"), _data("run.txt"), *argv]) == 0
    assert capsys.readouterr().out == _golden(golden)


def _write(tmp_path, **files):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return [str(tmp_path / name) for name in files]


def test_file_order_not_score_and_topics_again(tmp_path):
    # the run is read as written (scores ignored); a topic that comes back is a new ranking
    q, r, m = _write(tmp_path, q="1 0 a 1\n2 0 b 1\n",
                     r="1 Q0 z 1 9 x\n1 Q0 a 2 1 x\n2 Q0 b 1 1 x\n1 Q0 a 1 1 x\n",
                     m="RRCWLMetric()\n")
    lines = cwl(q, r, metrics=m, max_depth=5).splitlines()
    assert [line.split("\t")[:3] for line in lines] == [
        ["1", "RR", "0.5000"], ["2", "RR", "1.0000"], ["1", "RR", "1.0000"]]


def _independent(metric, gains, costs):
    """The C/W/L sums written directly, to check the numpy-faithful spec's arithmetic."""
    n = len(gains)
    if metric.kind == "AP":
        terms = [g / (i + 1) for i, g in enumerate(gains)]
        c = [sum(terms[i + 1:]) / sum(terms[i:]) if sum(terms[i + 1:]) > 0 else 0.0
             for i in range(n - 1)] + [0.0]
    elif metric.kind == "RR":
        first = next((i for i, g in enumerate(gains) if g > 0), n)
        c = [1.0 if i < first else 0.0 for i in range(n)]
    else:
        c = list(spec.c_vector(metric, np.array(gains)))
    reach = [math.prod(c[:i]) for i in range(n)]
    w = [x / sum(reach) for x in reach]
    stop = [reach[i] * (1 - c[i]) for i in range(n)]
    cum_g = np.cumsum(gains)
    cum_c = np.cumsum(costs)
    return (sum(a * b for a, b in zip(w, gains)), sum(a * b for a, b in zip(stop, cum_g)),
            sum(a * b for a, b in zip(w, costs)), sum(a * b for a, b in zip(stop, cum_c)),
            sum(reach))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([0.0, 0.0, 1.0, 0.5, 0.25]), min_size=1, max_size=30),
       st.sampled_from(spec.DEFAULT_METRICS + (spec.Metric("INSQ", 2), spec.Metric("P", 40))),
       st.data())
def test_spec_sums(gains, metric, data):
    costs = data.draw(st.lists(st.sampled_from([1.0, 0.5, 2.0]), min_size=len(gains),
                               max_size=len(gains)))
    got = spec.score(metric, np.array(gains), np.array(costs))
    assert got == pytest.approx(_independent(metric, gains, costs), rel=1e-9, abs=1e-12)


def test_unjudged_gain_zero_and_residual_bounds(tmp_path):
    # k beyond the ranking: the padded ranks gain 0 (worst) or --max_gain (best)
    q, r, m = _write(tmp_path, q="1 0 a 1\n", r="1 Q0 a 1 1 x\n1 Q0 u 2 1 x\n",
                     m="PrecisionCWLMetric(4)\n")
    (line,) = cwl(q, r, metrics=m, residuals=True, max_depth=10).splitlines()
    assert line.split("\t")[2:] == ["0.2500", "1.0000", "1.0000", "4.0000", "4.0000",
                                    "0.7500", "3.0000", "0.0000", "0.0000", "0.0000"]


def test_errors_name_the_place(tmp_path):
    q, r, short, bad_gain, m = _write(
        tmp_path, q="1 0 a 1\n", r="1 Q0 a 1 1 x\n", short="1 Q0 a 1 x\n",
        bad_gain="1 0 a 2\n", m="TBGCWLMetric(1)\n")
    with pytest.raises(FormatError, match="line 1"):
        cwl(q, short)
    with pytest.raises(InputError, match="gain 2.0 is outside"):
        cwl(bad_gain, r)
    with pytest.raises(MeasureError, match="line 1"):
        cwl(q, r, metrics=m)
    empty, = _write(tmp_path, empty="")
    with pytest.raises(FormatError, match="no lines"):
        cwl(q, empty)
    with pytest.raises(InputError, match="max_depth"):
        cwl(q, r, max_depth=0)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.sampled_from([0.0, 0.0, 1.0, 0.5, 0.25, 0.3333]), max_size=40),
                min_size=1, max_size=4),
       st.integers(1, 45), st.sampled_from([0.0, 1.0]), st.data())
def test_kernel_is_the_spec_bit_for_bit(rows, depth, missing_gain, data):
    # rankings shorter and longer than the depth, all-zero and tied gains, both cases
    from qafast.cwl_eval import _Case

    rankings = [(str(q), [(f"d{i}", "Q0") for i in range(len(row))])
                for q, row in enumerate(rows)]
    qrels = {str(q): {f"d{i}": g for i, g in enumerate(row) if g or i % 2}
             for q, row in enumerate(rows)}
    case = _Case(qrels, rankings, {"Q0": 0.5}, depth, missing_gain, 2.0)
    metric = data.draw(st.sampled_from(spec.DEFAULT_METRICS + (
        spec.Metric("INSQ", 0.3), spec.Metric("RBP", 1), spec.Metric("P", depth + 1))))
    got = case.measure(metric)
    for q in range(len(rows)):
        want = spec.score(metric, case.gains[q], case.costs[q])
        assert tuple(float(column[q]) for column in got) == want
