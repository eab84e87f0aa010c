"""gdeval.pl (the TREC Web track's nDCG@k and ERR@k): its recorded output, the specification
against the compiled path on random files, and the inputs qafast refuses.

tests/fuzz_gdeval.py compares ``qafast gdeval`` with the Perl script itself, by hand.
"""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import qafast
from qafast import _kernels, gdeval_eval
from qafast.errors import FormatError, InputError
from qafast.reference import gdeval as spec

DATA = Path(__file__).parent / "data" / "gdeval"
GOLDEN = [
    ("out.default", []),
    ("out.c.k5", ["-c", "-k", "5"]),
    ("out.c.risk1", ["-c", "-baseline", "{baseline}", "-riskAlpha", "1"]),
    ("out.k10.risk0", ["-k", "10", "-baseline", "{baseline}"]),
]


@pytest.mark.parametrize("expected, options", GOLDEN)
def test_cli_prints_what_gdeval_pl_printed(expected, options):
    options = [o.format(baseline=DATA / "baseline.txt") for o in options]
    out = subprocess.run([sys.executable, "-m", "qafast", "gdeval", *options,
                          str(DATA / "qrels.txt"), str(DATA / "run.txt")],
                         capture_output=True, check=True)
    assert out.stdout == (DATA / expected).read_bytes()


def test_api_returns_the_printed_numbers_unrounded():
    result = qafast.gdeval(DATA / "qrels.txt", DATA / "run.txt", k=5, all_topics=True)
    printed = (DATA / "out.c.k5").read_text().splitlines()[1:]
    assert list(result) == [line.split(",")[1] for line in printed]
    for line in printed:
        _, topic, ndcg, err = line.split(",")
        assert f"{result[topic]['ndcg@5']:.5f}" == ndcg
        assert f"{result[topic]['err@5']:.5f}" == err


def _values(qrels, run, baseline=None, **options):
    names = ("qrels", "run", "baseline")
    return gdeval_eval._values(qrels, run, names, baseline, **options)


# -- the compiled path against the specification ----------------------------------------------

_TOPICS = st.sampled_from(["1", "2", "7", "51", "WT-51", "a-b-2", "0", "10"])
_DOCS = st.sampled_from(["d1", "d2", "d3", "D1", "doc-é", "x", "d1\x00", "\u4e2d"])
_SPACE = st.sampled_from([" ", "\t", "  ", " \x0b", "\x0c"])
_SCORES = st.sampled_from(["1", "0.5", ".5", "3.", "1e0", "2E-1", "-1", "abc", "12abc", "inf",
                           "-Infinity", "+2", "0.30000000000000004", "1_5", "1e", "-0", "0x10",
                           "0.1000000000000000055511151231257827"])


@st.composite
def _qrels(draw):
    lines = draw(st.lists(st.tuples(_TOPICS, st.sampled_from(["0", "Q0", "0.0", "abc"]), _DOCS,
                                    st.sampled_from(["-1", "0", "1", "2", "3", "4", "02"]),
                                    _SPACE, st.sampled_from(["", "\r"])), max_size=25))
    return "".join(f"{t}{s}{z} {d} {g}{cr}\n" for t, z, d, g, s, cr in lines).encode()


_TAGS = st.sampled_from(["r", "bm25", "r-1", "00"])


@st.composite
def _run(draw):
    lines = draw(st.lists(st.tuples(_TOPICS, _DOCS, st.integers(0, 99), _SCORES, _SPACE),
                          max_size=30))
    t = draw(_TAGS)
    return "".join(f"{q} Q0{s}{d} {r} {sc} {t}\n" for q, d, r, sc, s in lines).encode()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_qrels(), _run(), st.one_of(st.none(), _run()), st.sampled_from([1, 2, 3, 20]),
       st.booleans(), st.sampled_from([None, "0", "1", "0.5"]))
def test_compiled_path_equals_the_specification(qrels, run, baseline, k, all_topics, alpha):
    options = {"k": k, "all_topics": all_topics, "risk_alpha": alpha}
    try:
        want = spec.gdeval_values(qrels, run, baseline=baseline, **options)
    except ValueError:
        with pytest.raises(FormatError):
            _values(qrels, run, baseline, **options)
        return
    got = _values(qrels, run, baseline, **options)
    assert got[0] == want[0] and got[2] == want[2]
    assert got[1] == want[1]


def test_rare_spellings_take_the_specification():
    # a topic with a leading zero, written one way everywhere, is read by the specification
    qrels = b"007 0 d1 2\n"
    run = b"007 Q0 d1 1 1 r\n007 Q0 d2 2 2 r\n"
    assert gdeval_eval._Scanned(run, True, "run").status == gdeval_eval._SLOW
    assert _values(qrels, run, k=20, all_topics=False, risk_alpha=None)[1] == \
        spec.gdeval_values(qrels, run)[1]


# -- what gdeval.pl rejects, and what qafast refuses -------------------------------------------

@pytest.mark.parametrize("qrels, run, message", [
    (b"1 0 d1 5\n", b"1 Q0 d1 1 1 r\n", "qrels bytes>, line 1: gdeval.pl reads 'topic 0"),
    (b"1 1 d1 2\n", b"1 Q0 d1 1 1 r\n", "qrels bytes>, line 1: gdeval.pl reads 'topic 0"),
    (b"1 0 d1 2\n\n", b"1 Q0 d1 1 1 r\n", "qrels bytes>, line 2: gdeval.pl reads 'topic 0"),
    (b"x 0 d1 2\n", b"1 Q0 d1 1 1 r\n", "qrels bytes>, line 1: gdeval.pl reads 'topic 0"),
    (b"1 0 d1 2\n", b"1 Q0 d1 1 1 r\n1 Q0 d2 a 1 r\n", "run bytes>, line 2: gdeval.pl reads 'topic Q0"),
    (b"1 0 d1 2\n", b"1 Q0 d1 1 1 0\n", "run bytes>, line 1: gdeval.pl reads 'topic Q0"),
    (b"1 0 d1 2\n", b"1 Q0 d1 1 1\n", "run bytes>, line 1: gdeval.pl reads 'topic Q0"),
    (b"7 0 d1 2\n", b"07 Q0 d1 1 1 r\n", "topic '07' is topic '7' written another way"),
    (b"1 0 d1 2\n", b"1 Q0 d1 1 nan r\n", "is NaN"),
    (b"1 0 d1 2\n", b"1 Q0 d1 1 1 r%d\n", "holds a %"),
])
def test_bad_input_is_named(qrels, run, message):
    with pytest.raises(FormatError, match=message):
        qafast.gdeval(qrels, run)


def test_a_file_is_named_with_the_line(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_bytes(b"1 0 d1 2\n1 0 d2 9\n")
    with pytest.raises(FormatError, match=r"qrels.txt, line 2: gdeval.pl reads"):
        qafast.gdeval(qrels, b"1 Q0 d1 1 1 r\n")


def test_a_missing_file_and_bad_options_are_named(tmp_path):
    with pytest.raises(InputError, match="cannot read"):
        qafast.gdeval(tmp_path / "missing", b"")
    with pytest.raises(InputError, match="k=0"):
        qafast.gdeval(b"", b"", k=0)
    with pytest.raises(InputError, match="risk_alpha"):
        qafast.gdeval(b"", b"", risk_alpha=-1)


def test_empty_files_print_a_zero_mean():
    assert qafast.gdeval(b"", b"") == {"amean": {"ndcg@20": 0.0, "err@20": 0.0}}
    assert spec.gdeval_report(b"", b"") == "runid,topic,ndcg@20,err@20\n?????,amean,0.00000,0.00000\n"


def test_same_bytes_kernel_finds_two_docnos_with_one_hash():
    a, b = b"d1d2", b"d1d3"
    starts = np.array([0, 2], np.int64)
    ends = np.array([2, 4], np.int64)
    rows = np.array([0, 1], np.int64)
    assert _kernels.gdeval_same_bytes(a, starts, ends, b, starts, ends, rows, rows) == 1
    assert _kernels.gdeval_same_bytes(a, starts, ends, a, starts, ends, rows, rows) == -1
    with pytest.raises(ValueError):
        _kernels.gdeval_same_bytes(a, starts, ends, b, starts, ends, rows + 5, rows)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 4), st.sampled_from([0.0, -0.0, 0.5, 1.0, 2.0])),
                max_size=30), st.booleans())
def test_the_order_of_a_written_run_is_the_sorted_order(rows, write_sorted):
    if write_sorted:  # blocks of topics in any order, each by score
        blocks: dict = {}
        for t, s in rows:
            blocks.setdefault(t, []).append(s)
        rows = [(t, s) for t in blocks for s in sorted(blocks[t], reverse=True)]
    topic = np.array([t for t, _ in rows], np.int64)
    score = np.array([s for _, s in rows], np.float64)
    got = gdeval_eval._grouped_order(topic, score)
    if got is None:
        assert not write_sorted
        return
    assert got.tolist() == np.lexsort((-score, topic)).tolist()
