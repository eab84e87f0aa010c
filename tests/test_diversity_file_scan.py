"""DiversityQrels.from_file through the compiled scan (diversity_qrels_scan) against its
Python reading of the same bytes: the same ids, codes, grades and subtopic order, or the
same error; and the layouts the scan leaves to the Python reading."""
import re
from unittest import mock

import numpy as np
import pytest
from _examples import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import qafast
from qafast import _kernels, diversity
from qafast.diversity import DiversityQrels
from qafast.errors import FormatError, InputError

_tokens = st.one_of(st.sampled_from(["1", "2", "10", "02", "q1", "clueweb09-en-0001", "é",
                                     "日本", "d\x00", "x\x1cy", "²"]),
                    st.text(alphabet="ab1é\x1f", min_size=1, max_size=3))
_grades = st.one_of(st.integers(-3, 4).map(str), st.sampled_from(
    ["+1", "1_0", "-0", "007", "9" * 18, "9" * 19, "-" + "9" * 18, "1.5", "x", "٣"]))
_spaces = st.sampled_from([" ", " ", "  ", "\t", " \t"])
_ends = st.sampled_from(["\n", "\n", " \n", "\r\n", "\n\n", "\n  \n", "\x0b\n"])
_lines = st.lists(st.tuples(_tokens, _tokens, _tokens, _grades, _spaces, _ends,
                            st.sampled_from([0, 4, 4, 4, 3, 5])), max_size=12)

SLOW = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _python_reading(data: bytes):
    with mock.patch.object(diversity, "_scanned", lambda cls, data: None):
        return DiversityQrels.from_file(data)


def _render(lines, final_newline: bool) -> bytes:
    out = []
    for q, s, d, g, sep, end, fields in lines:
        out.append(sep.join([q, s, d, g, "extra"][:fields]) + end)
    text = "".join(out)
    if not final_newline:
        text = text.rstrip("\n")
    return text.encode()


def _same(a: DiversityQrels, b: DiversityQrels):
    assert a._ids == b._ids
    for x, y in zip(a._codes, b._codes):
        assert x.tolist() == y.tolist()
    assert a.grade.tolist() == b.grade.tolist()
    assert a._numeric == b._numeric


@settings(max_examples=examples(300), **SLOW)
@given(_lines, st.booleans(), st.booleans())
def test_scan_reads_as_the_python_reading(lines, final_newline, latin1):
    data = _render(lines, final_newline)
    if latin1:
        data = data.decode().encode("latin-1", "replace")  # bytes that are not UTF-8
    try:
        want = _python_reading(data)
    except (FormatError, ValueError) as e:
        with pytest.raises(type(e), match=re.escape(str(e))):
            DiversityQrels.from_file(data)
        return
    _same(DiversityQrels.from_file(data), want)


def test_scan_takes_files_as_written():
    data = b"1 1 clueweb09-en-0001 1\n1 2 clueweb09-en-0001 0\n2 1 d\t-2\n\n10 1 d 3"
    assert diversity._scanned(DiversityQrels, data) is not None
    _same(DiversityQrels.from_file(data), _python_reading(data))


@pytest.mark.parametrize("data", [b"1 1 d 1\r\n", b"1 1 d +1\n", b"1 1 d 1_0\n",
                                  b"1 1 d " + b"9" * 19 + b"\n", b"1 1 d\n", b"1 1 d 1 x\n",
                                  b"1 1 \xff 1\n", b"", b"\n \n"])
def test_other_layouts_are_left_to_the_python_reading(data):
    assert diversity._scanned(DiversityQrels, data) is None


def test_scan_checks_its_arrays():
    i64 = np.int64
    with pytest.raises(ValueError):
        _kernels.diversity_qrels_scan(b"1 1 d 1\n", np.empty((1, 2), i64), np.empty(1, i64),
                                      np.empty((3, 4), i64), np.empty(3, i64))
    with pytest.raises(ValueError):
        _kernels.diversity_qrels_scan(b"1 1 d 1\n", np.empty((1, 3), i64), np.empty(1, i64),
                                      np.empty((2, 4), i64), np.empty(3, i64))
    # more lines than rows: not read, nothing written past them
    code = np.full((1, 3), -7, i64)
    assert _kernels.diversity_qrels_scan(b"1 1 d 1\n2 1 d 1\n", code, np.empty(1, i64),
                                         np.empty((3, 4), i64), np.zeros(3, i64)) == -1


def test_a_grade_beyond_64_bits_is_named():
    with pytest.raises(FormatError, match="line 3.*outside the 64-bit"):
        DiversityQrels.from_file(b"1 1 a 1\n\n1 1 b " + b"9" * 19 + b"\n")
    with pytest.raises(InputError, match="query 'q', subtopic '1', document 'd'.*64-bit"):
        DiversityQrels({"q": {"1": {"d": 2**70}}})


def test_subtopics_other_than_ascii_digits_sum_in_order_of_appearance():
    dq = DiversityQrels.from_file("1 ² d 1\n1 2 e 1\n".encode())
    assert not dq._numeric
    got = qafast.evaluate(dq, {"1": {"d": 1.0, "e": 0.5}}, ["StRecall@1"])
    assert got["StRecall@1"] == 0.5
