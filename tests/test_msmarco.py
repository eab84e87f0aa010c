"""qafast.msmarco_passage against the specification (qafast.reference.msmarco) and the official
script's recorded output (tests/data/msmarco)."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import qafast
from qafast import cli
from qafast.errors import FormatError, InputError
from qafast.reference import msmarco as ref

DATA = Path(__file__).parent / "data" / "msmarco"


def _spec(qrels: bytes, candidate: bytes):
    relevant = ref.load_reference(io.StringIO(qrels.decode(), newline=None))
    ranked = ref.load_candidate(io.StringIO(candidate.decode(), newline=None))
    return ref.duplicate_message(ranked), ref.metrics(relevant, ranked)


def test_cli_prints_what_the_script_prints(capsys):
    rc = cli.main(["msmarco-passage", str(DATA / "qrels.tsv"), str(DATA / "candidate.tsv")])
    assert rc == 0
    assert capsys.readouterr().out == (DATA / "expected.out").read_text(encoding="utf-8")


def test_function_gives_the_scripts_numbers_and_warns_its_message():
    with pytest.warns(qafast.MsmarcoWarning, match="QID=6, PID=0"):
        got = qafast.msmarco_passage(DATA / "qrels.tsv", DATA / "candidate.tsv")
    assert got == {"MRR @10": 0.2, "QueriesRanked": 5}
    spec = _spec((DATA / "qrels.tsv").read_bytes(), (DATA / "candidate.tsv").read_bytes())
    assert spec == ("Cannot rank a passage multiple times for a single query. QID=6, PID=0",
                    got)


def test_slots_follow_python_list_indexing_and_pid_0_fills_empty_slots():
    qrels = b"1\t0\t4\t1\n2\t0\t0\t1\n3\t0\t9\t1\n"
    # rank 0 is slot 1000; query 2 lists pid 0, which every empty slot holds; a later line
    # for slot 1 of query 3 replaces the earlier
    cand = b"1\t4\t0\n1\t5\t1\n2\t3\t1\n3\t9\t1\n3\t8\t1\n"
    t = qafast.msmarco_passage_per_query(qrels, cand)
    assert t["reciprocal_rank"].tolist() == [0.0, 0.5, 0.0]
    assert _spec(qrels, cand)[1] == qafast.msmarco_passage(qrels, cand)


def test_a_query_whose_lines_are_apart_is_one_query():
    qrels = b"1\t0\t4\t1\n"
    cand = b"1\t5\t1\n2\t4\t1\n1\t4\t2\n"
    assert qafast.msmarco_passage(qrels, cand) == {"MRR @10": 0.5, "QueriesRanked": 2}


def test_odd_integers_are_read_as_pythons_int_reads_them():
    qrels = "+1\t0\t 4\t1\n".encode()
    cand = "1\t٤\t1\n0_1\t7\t2\n".encode()   # an Arabic-Indic 4; 0_1 is 1
    assert qafast.msmarco_passage(qrels, cand) == {"MRR @10": 1.0, "QueriesRanked": 1}


def test_ids_beyond_64_bits():
    big = 10 ** 20
    qrels = f"{big}\t0\t{big}\t1\n".encode()
    cand = f"{big}\t{big}\t3\n".encode()
    assert qafast.msmarco_passage(qrels, cand)["MRR @10"] == 1 / 3


@pytest.mark.parametrize("cand, line", [(b"1\t2\t1\n\n", 2), (b"1\t2\n", 1),
                                        (b"1\t2\t1001\n", 1), (b"1\tx\t1\n", 1),
                                        (b"1\t2\t-1000\n", 1)])
def test_a_line_the_script_stops_on_is_a_format_error_naming_it(cand, line):
    with pytest.raises(FormatError) as e:
        qafast.msmarco_passage(b"1\t0\t2\t1\n", cand)
    assert e.value.line == line and "is not valid format" in str(e.value)


def test_no_query_in_the_reference_is_an_error_after_the_check(capsys):
    with pytest.raises(InputError, match="No matching QIDs"):
        qafast.msmarco_passage(b"1\t0\t2\t1\n", b"2\t2\t1\n")
    with pytest.raises(InputError):
        qafast.msmarco_passage(b"1\t0\t2\t1\n", b"")


def test_order_score_ranks_a_trec_run_as_trec_eval():
    qrels = b"1\t0\t7\t1\n2\t0\t9\t1\n3\t0\t4\t1\n"
    run = b"1 Q0 5 1 2.0 r\n1 Q0 7 2 2.0 r\n2 Q0 9 9 1 r\n3 Q0 4 1 0.5 r\n3 Q0 44 2 0.6 r\n"
    got = qafast.msmarco_passage(qrels, run, order="score")
    assert got == {"MRR @10": 0.8333333333333334, "QueriesRanked": 3}
    # the rank column would give query 1 rank 2: the same file ranked by it differs
    assert qafast.evaluate(qrels.replace(b"\t", b" "), run, ["recip_rank@10"]) == \
        {"recip_rank@10": got["MRR @10"]}
    with pytest.raises(InputError, match="unknown order"):
        qafast.msmarco_passage(qrels, run, order="bogus")


# ---- hypothesis: the compiled pass == the specification ------------------------------------

@st.composite
def _files(draw):
    qids = draw(st.lists(st.integers(0, 30), min_size=1, max_size=6, unique=True))
    qrels = b"".join(f"{q}\t0\t{p}\t1\n".encode() for q in qids
                     for p in draw(st.lists(st.integers(0, 12), min_size=1, max_size=3)))
    lines = []
    for q in draw(st.lists(st.integers(0, 33), min_size=1, max_size=5, unique=True)):
        for _ in range(draw(st.integers(1, 14))):
            rank = draw(st.one_of(st.integers(1, 12), st.sampled_from([0, 999, 1000])))
            lines.append(f"{q}\t{draw(st.integers(0, 12))}\t{rank}")
    end = draw(st.sampled_from(["\n", "\r\n"]))
    return qrels, (end.join(lines) + draw(st.sampled_from([end, ""]))).encode()


def _assert_as_specified(qrels: bytes, cand: bytes):
    """qafast's message and numbers are the specification's, or both refuse the files; the
    per-query table where they are read."""
    try:
        message, want = _spec(qrels, cand)
    except ValueError:
        with pytest.raises(InputError):
            qafast.msmarco_passage(qrels, cand)
        return None
    t = qafast.msmarco_passage_per_query(qrels, cand)
    assert t["message"] == message
    assert qafast.msmarco_passage(qrels, cand) == want
    return t


@pytest.mark.filterwarnings("ignore::qafast.msmarco_eval.MsmarcoWarning")
@settings(max_examples=150, deadline=None)
@given(_files())
def test_matches_the_specification(files):
    t = _assert_as_specified(*files)
    if t is not None:
        assert np.isnan(t["reciprocal_rank"]).sum() <= len(t["qid"])


# --------------------------------------------------------------------------------------------
# MsmarcoMetrics: a loop's rankings, batch by batch, equal to one call on the candidate file
# --------------------------------------------------------------------------------------------

_pid = st.integers(0, 6)


@settings(max_examples=60, deadline=None)
@given(reference=st.dictionaries(st.integers(0, 8), st.lists(_pid, min_size=1, max_size=3),
                                 min_size=1, max_size=5),
       rankings=st.dictionaries(st.integers(0, 10), st.lists(_pid, min_size=1, max_size=14),
                                min_size=1, max_size=7),
       cuts=st.lists(st.integers(0, 7), max_size=3), data=st.data())
def test_streaming_equals_one_call_whatever_the_batches(reference, rankings, cuts, data):
    qrels = "".join(f"{q}\t0\t{p}\t1\n" for q, ps in reference.items() for p in ps).encode()
    order = data.draw(st.permutations(list(rankings)))
    cand = "".join(f"{q}\t{p}\t{r}\n" for q in order
                   for r, p in enumerate(rankings[q], 1)).encode()
    qids = list(order)
    rows = [rankings[q] for q in qids]
    bounds = [0, *sorted(c for c in cuts if c <= len(qids)), len(qids)]
    m = qafast.MsmarcoMetrics(reference if data.draw(st.booleans()) else qrels)
    for a, b in zip(bounds, bounds[1:]):
        m.update(qids[a:b], rows[a:b])
    message = ref.duplicate_message(ref.load_candidate(io.StringIO(cand.decode())))
    try:
        with pytest.warns(qafast.MsmarcoWarning) if message else _no_warning():
            expected = qafast.msmarco_passage(qrels, cand)
    except InputError:
        with pytest.raises(InputError, match="No matching QIDs"):
            m.compute()
        return
    with pytest.warns(qafast.MsmarcoWarning, match=message) if message else _no_warning():
        got = m.compute()
    assert got == expected
    assert repr(got["MRR @10"]) == repr(expected["MRR @10"])
    # a state carried to another worker and merged gives the same
    half = len(qids) // 2
    first = qafast.MsmarcoMetrics(reference)
    second = qafast.MsmarcoMetrics(reference)
    first.update(qids[:half], rows[:half])
    second.update(qids[half:], rows[half:])
    restored = qafast.MsmarcoMetrics(reference)
    restored.load_state_dict(first.state_dict())
    with pytest.warns(qafast.MsmarcoWarning) if message else _no_warning():
        assert restored.merge(second).compute() == expected


class _no_warning:
    def __enter__(self):
        import warnings
        self._catch = warnings.catch_warnings()
        self._catch.__enter__()
        warnings.simplefilter("error", qafast.MsmarcoWarning)

    def __exit__(self, *exc):
        return self._catch.__exit__(*exc)


def test_streaming_takes_numpy_rows_and_refuses_bad_input():
    m = qafast.MsmarcoMetrics({1: [7], 2: [9]})
    m.update(np.array([1, 2]), np.array([[5, 7], [9, 1]]))
    assert m.compute() == {"MRR @10": 0.75, "QueriesRanked": 2}
    with pytest.raises(InputError, match="query 1 is ranked twice"):
        m.update([1], [[7]])
    with pytest.raises(InputError, match="2 query ids but 1 rankings"):
        m.update([3, 4], [[1]])
    with pytest.raises(qafast.errors.InputTypeError, match="query 3: a passage id"):
        m.update([3], [["7"]])
    with pytest.raises(qafast.errors.InputTypeError, match="a query id is an integer"):
        m.update([True], [[7]])
    with pytest.raises(InputError, match="at most 1000"):
        m.update([5], [list(range(1, 1002))])
    assert len(m) == 2   # a refused batch adds nothing
    other = qafast.MsmarcoMetrics({1: [7]})
    with pytest.raises(InputError, match="another reference"):
        other.load_state_dict(m.state_dict())
    with pytest.raises(InputError, match="not a MsmarcoMetrics state"):
        m.load_state_dict({"format": "x"})


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["1", "01", "22", "", "9" * 25]),
                          st.sampled_from(["0", "Q0", ""]),
                          st.sampled_from(["7", "007", "", "18446744073709551616"]),
                          st.sampled_from(["", "\t1", "\t", "\t\t"])),
                max_size=6),
       st.sampled_from(["\n", "\r\n", "\t\n", "\n\n"]), st.booleans())
def test_the_plain_reference_reader_reads_as_the_specification(rows, newline, last_newline):
    # the bytes-level reader takes only what it reads as the script does, and leaves the
    # rest (with the script's error) to the specification's reader
    from qafast.msmarco_eval import _plain_reference, _text_lines

    text = newline.join("\t".join(r[:3]) + r[3] for r in rows)
    if last_newline and rows:
        text += newline
    data = text.encode()
    fast = _plain_reference(data, "<bytes>")
    try:
        want = ref.load_reference(_text_lines(data, "<bytes>"))
    except ref.LineError:
        assert fast is None
        return
    if fast is not None:
        assert fast == want and list(fast) == list(want)


@st.composite
def _digit_field(draw, value):
    # the digits of ``value`` with 0 to 12 leading zeros: fields of 1 to 30 bytes put the word
    # reader's eight-byte window across the tab, the line end and the end of the file
    return "0" * draw(st.integers(0, 12)) + str(value)


@st.composite
def _wide_files(draw):
    values = st.one_of(st.integers(0, 40), st.integers(10 ** 6, 10 ** 9),
                       st.integers(10 ** 15, 10 ** 19), st.sampled_from([99999999, 10 ** 8,
                                                                         12345678, 10 ** 18 - 1]))
    qids = draw(st.lists(values, min_size=1, max_size=4, unique=True))
    pids = draw(st.lists(values, min_size=1, max_size=5, unique=True))
    qrels = b"".join(f"{q}\t0\t{draw(st.sampled_from(pids))}\t1\n".encode() for q in qids)
    lines = []
    for q in draw(st.lists(st.sampled_from(qids + [7]), min_size=1, max_size=4, unique=True)):
        for _ in range(draw(st.integers(1, 5))):
            fields = (draw(_digit_field(q)), draw(_digit_field(draw(st.sampled_from(pids)))),
                      draw(_digit_field(draw(st.integers(0, 1000)))))
            lines.append("\t".join(fields))
    end = draw(st.sampled_from(["\n", "\r\n"]))
    return qrels, (end.join(lines) + draw(st.sampled_from([end, ""]))).encode()


@pytest.mark.filterwarnings("ignore::qafast.msmarco_eval.MsmarcoWarning")
@settings(max_examples=200, deadline=None)
@given(_wide_files())
def test_fields_of_any_width_read_as_pythons_int_reads_them(files):
    # the candidate reader takes eight digits at a time where the machine is little-endian;
    # leading zeros, 8, 9, 16 to 19 digit fields and a file ending inside the window must
    # all give the numbers int() gives
    _assert_as_specified(*files)
