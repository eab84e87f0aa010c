"""ndeval's one-pass file scanner (``_kernels.ndeval_scan``) against the layout rules it
replaced (numpy tokenising: lines of single-space separated tokens, whole-number columns of
up to 6 digits) on random bytes, and whole evaluations through it against the specification.
"""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qafast import ndeval_eval
from qafast.reference import diversity as spec

TOKEN = st.sampled_from([b"1", b"2", b"10", b"007", b"1234567", b"d1", b"d2", b"d\xff",
                         b"\xc3\xa9", b"Q0", b"-1", b"+3", b"1.5", b"x", b"123456"])
SEP = st.sampled_from([b" "] * 12 + [b"  ", b"\t", b"\r", b"\x00", b"\x0b", b"\x0c", b""])


def _expected(data: bytes, fields: int, int_cols):
    """The old rule, written plainly: every line is ``fields`` non-empty tokens joined by
    single spaces and ended by a newline, with no other whitespace or NUL; the columns
    ``int_cols`` are 1 to 6 ASCII digits."""
    if not data.endswith(b"\n"):
        return None
    rows = []
    for line in data[:-1].split(b"\n"):
        tokens = line.split(b" ")
        if len(tokens) != fields or any(
                not t or any(c in t for c in b"\t\r\x0b\x0c\x00") for t in tokens):
            return None
        for c in int_cols:
            if not (len(tokens[c]) <= 6 and tokens[c].isdigit()):
                return None
        rows.append(tokens)
    return rows


@st.composite
def files(draw, fields):
    lines = draw(st.lists(st.lists(st.tuples(TOKEN, SEP), min_size=fields - 1,
                                   max_size=fields + 1), min_size=0, max_size=8))
    out = b""
    for line in lines:
        out += b"".join(t + s for t, s in line[:-1]) + (line[-1][0] if line else b"")
        out += draw(st.sampled_from([b"\n"] * 8 + [b" \n", b"\r\n", b""]))
    return out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), st.sampled_from([(4, (0, 1, 3)), (6, (0, 3))]))
def test_scan_reads_what_the_token_rules_read(data, layout):
    fields, int_cols = layout
    raw = data.draw(files(fields))
    expected = _expected(raw, fields, int_cols)
    got = ndeval_eval._scan(raw, fields, int_cols)
    if expected is None or not raw:
        assert got is None or (not raw and got[0].shape[0] == 0)
        return
    assert got is not None
    ints, ids, names = got
    assert len(ids) == len(expected)
    assert [names[i] for i in ids.tolist()] == [row[2] for row in expected]
    assert len(set(names)) == len(names)
    assert names == list(dict.fromkeys(row[2] for row in expected))
    for c in int_cols:
        assert ints[:, c].tolist() == [int(row[c]) for row in expected]


def test_scan_interns_many_documents():
    docs = [f"doc-{i % 5000:05d}".encode() for i in range(20000)]
    raw = b"".join(b"%d Q0 %s %d 1.0 r\n" % (i // 1000 + 1, d, i % 1000 + 1)
                   for i, d in enumerate(docs))
    ints, ids, names = ndeval_eval._scan(raw, 6, (0, 3))
    assert [names[i] for i in ids.tolist()] == docs
    assert len(names) == 5000
    assert ints[:, 3].tolist() == [i % 1000 + 1 for i in range(20000)]


@st.composite
def evaluations(draw):
    docs = [b"d%d" % i for i in range(draw(st.integers(1, 12)))]
    qrels = b"".join(b"%d %d %s %d\n" % (draw(st.integers(1, 3)), draw(st.integers(0, 4)),
                                         draw(st.sampled_from(docs)), draw(st.integers(0, 2)))
                     for _ in range(draw(st.integers(1, 25))))
    run = b""
    for t in draw(st.lists(st.sampled_from([1, 2, 3, 4]), min_size=1, max_size=3,
                           unique=True)):
        ranked = draw(st.lists(st.sampled_from(docs), unique=True, min_size=1))
        run += b"".join(b"%d Q0 %s %d 1.0 run\n" % (t, d, i + 1) for i, d in enumerate(ranked))
    return qrels, run


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(evaluations(), st.booleans())
def test_scanned_evaluation_matches_the_specification(files_, all_topics):
    qrels, run = files_
    options = dict(alpha=0.5, beta=0.5, traditional=False, all_topics=all_topics, depth=0,
                   risk_alpha=0.0, risk_alpha_text="0")
    ours = ndeval_eval._values(qrels, run, ("qrels", "run", "baseline"), None, **options)
    theirs = spec.ndeval_values(qrels, run, baseline=None, **options)
    assert spec.format_report(*ours) == spec.format_report(*theirs)
    np.testing.assert_allclose(np.array(ours[2], float), np.array(theirs[2], float),
                               rtol=1e-12, atol=1e-15, equal_nan=True)
