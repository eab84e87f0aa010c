"""qafast.io.trec against a naive split-based parser, and every error case by line."""

from __future__ import annotations

import gzip
import io
import math
import pickle
import re
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from qafast.io import TrecColumns, TrecFormatError, read_trec_qrels, read_trec_run
from qafast.io import trec as trec_module

HERE = Path(__file__).parent
GOLDEN = next(
    (
        d
        for d in (HERE / "data" / "trec_eval-10.0", Path("/work/shared/conformance/trec_eval-10.0"))
        if d.is_dir()
    ),
    None,
)
needs_golden = pytest.mark.skipif(GOLDEN is None, reason="trec_eval golden files not found")


# ----------------------------------------------------------------------------------------------
# the specification: a deliberately naive parser


def naive(data: bytes, is_run: bool) -> dict:
    """Parse as the module docstring says, one Python object per field."""
    need = 6 if is_run else 4
    query_ids: dict[str, int] = {}
    doc_ids: dict[str, int] = {}
    rows = []
    run_id = None
    for number, line in enumerate(data.split(b"\n"), start=1):
        if line.startswith(b"#"):
            continue
        fields = line.split()  # bytes.split(): the ASCII whitespace of C isspace()
        if not fields:
            continue
        assert len(fields) >= need, (number, line)
        qid, docno = fields[0].decode("utf-8"), fields[2].decode("utf-8")
        value = float(fields[4]) if is_run else int(fields[3])
        if is_run:
            assert not math.isnan(value)
            run_id = fields[5].decode("utf-8")
        query_ids.setdefault(qid, len(query_ids))
        doc_ids.setdefault(docno, len(doc_ids))
        rows.append((query_ids[qid], doc_ids[docno], value, number))
    return {
        "query_ids": list(query_ids),
        "doc_ids": list(doc_ids),
        "rows": rows,
        "run_id": run_id,
    }


def as_plain(cols: TrecColumns) -> dict:
    rows = list(
        zip(
            cols.query_index.tolist(),
            cols.doc_index.tolist(),
            cols.values.tolist(),
            cols.line_numbers.tolist(),
        )
    )
    return {
        "query_ids": cols.query_ids,
        "doc_ids": cols.doc_ids,
        "rows": rows,
        "run_id": cols.run_id,
    }


def same_floats(a: list, b: list) -> bool:
    # bitwise equality of the scores (so -0.0 != 0.0 and inf == inf)
    return np.array_equal(
        np.array(a, dtype=np.float64).view(np.int64), np.array(b, dtype=np.float64).view(np.int64)
    )


def check_same(cols: TrecColumns, data: bytes, is_run: bool) -> None:
    got, want = as_plain(cols), naive(data, is_run)
    assert got["query_ids"] == want["query_ids"]
    assert got["doc_ids"] == want["doc_ids"]
    assert got["run_id"] == want["run_id"]
    assert len(got["rows"]) == len(want["rows"]) == len(cols)
    assert [r[:2] + r[3:] for r in got["rows"]] == [r[:2] + r[3:] for r in want["rows"]]
    assert same_floats([r[2] for r in got["rows"]], [r[2] for r in want["rows"]])
    assert cols.query_index.dtype == np.int32 and cols.doc_index.dtype == np.int32
    assert cols.line_numbers.dtype == np.int64
    assert cols.values.dtype == (np.float64 if is_run else np.int32)


def read(data: bytes, is_run: bool, chunk: int | None = None, workers: int = 1) -> TrecColumns:
    return trec_module._read(data, is_run=is_run, chunk_bytes=chunk, workers=workers)


def read_stream(
    data: bytes, is_run: bool, chunk: int | None = None, workers: int = 1
) -> TrecColumns:
    return trec_module._read(io.BytesIO(data), is_run=is_run, chunk_bytes=chunk, workers=workers)


both_modes = pytest.mark.parametrize("workers", [1, 2], ids=["one-thread", "two-threads"])


# ----------------------------------------------------------------------------------------------
# trec_eval's own test inputs


@needs_golden
@pytest.mark.parametrize(
    "name, is_run",
    [
        ("qrels.test", False),
        ("qrels.test.with-comments", False),
        ("qrels.comment.test", False),
        ("qrels.rel_level", False),
        ("results.test", True),
        ("results.comment.test", True),
        ("results.trunc", True),
    ],
)
@both_modes
def test_golden_files_match_naive_parser(name, is_run, workers):
    path = GOLDEN / name
    data = path.read_bytes()
    cols = (read_trec_run if is_run else read_trec_qrels)(path, workers=workers)
    check_same(cols, data, is_run)
    assert cols.path == str(path)
    for chunk in (1, 97, 4096):  # a chunk boundary inside many lines
        check_same(read(data, is_run, chunk, workers), data, is_run)
        check_same(read_stream(data, is_run, chunk, workers), data, is_run)


@needs_golden
def test_golden_qrels_with_comments_equals_plain_qrels():
    plain = read_trec_qrels(GOLDEN / "qrels.test")
    commented = read_trec_qrels(GOLDEN / "qrels.test.with-comments")
    # the commented copy adds three comment lines and renames one docno to CR#93E-1860
    assert len(commented) == len(plain) == 3681
    assert commented.line_numbers[:5].tolist() == [2, 3, 5, 6, 8]
    assert "CR#93E-1860" in commented.doc_ids
    assert commented.query_ids == plain.query_ids
    assert np.array_equal(commented.values, plain.values)


@needs_golden
def test_golden_msmarco_docnos_keep_their_hash():
    cols = read_trec_run(GOLDEN / "results.comment.test")
    assert cols.doc_ids[0] == "msmarco_v2.1_doc_50_2286987788#13_3087841662"
    assert cols.run_id == "comment.test"


# ----------------------------------------------------------------------------------------------
# sources


RUN = (
    b"q1 Q0 d1 1 2.5 runA\n"
    b"q1 Q0 d2 2 1.25 runA\n"
    b"q2 Q0 d1 1 -0.5 runB\n"
)
QRELS = b"q1 0 d1 1\nq1 0 d3 0\nq2 0 d1 2\n"


def test_run_columns():
    cols = read_trec_run(RUN)
    assert cols.query_ids == ["q1", "q2"]
    assert cols.doc_ids == ["d1", "d2"]
    assert cols.query_index.tolist() == [0, 0, 1]
    assert cols.doc_index.tolist() == [0, 1, 0]
    assert cols.values.tolist() == [2.5, 1.25, -0.5]
    assert cols.line_numbers.tolist() == [1, 2, 3]
    assert cols.run_id == "runB"  # the last line's, as trec_eval reports
    assert cols.path == "<bytes>"
    assert len(cols) == 3
    assert repr(cols) == (
        "TrecColumns(run, 3 lines, 2 queries, 2 documents, run_id='runB', path='<bytes>')"
    )


def test_qrels_columns():
    cols = read_trec_qrels(QRELS)
    assert cols.query_ids == ["q1", "q2"]
    assert cols.doc_ids == ["d1", "d3"]
    assert cols.values.tolist() == [1, 0, 2]
    assert cols.values.dtype == np.int32
    assert cols.run_id is None
    assert repr(cols).startswith("TrecColumns(qrels, 3 lines, 2 queries, 2 documents")


def test_path_str_pathlike_and_gzip(tmp_path):
    plain = tmp_path / "run.txt"
    plain.write_bytes(RUN)
    gz = tmp_path / "run.txt.gz"
    gz.write_bytes(gzip.compress(RUN))
    sneaky = tmp_path / "run-compressed.txt"  # gzip without the suffix: sniffed
    sneaky.write_bytes(gzip.compress(RUN))
    for source in (plain, str(plain), gz, str(gz), sneaky):
        cols = read_trec_run(source)
        check_same(cols, RUN, True)
        assert cols.path == str(source)
    check_same(read_trec_run(gzip.compress(RUN)), RUN, True)


@both_modes
def test_gzip_in_small_chunks(tmp_path, workers):
    data = b"".join(b"q%d Q0 d%d %d %d.5 r\n" % (i // 7, i, i, i) for i in range(2000))
    gz = tmp_path / "big.gz"
    gz.write_bytes(gzip.compress(data))
    check_same(trec_module._read(gz, is_run=True, chunk_bytes=100, workers=workers), data, True)


def test_file_objects():
    check_same(read_trec_run(io.BytesIO(RUN)), RUN, True)
    check_same(read_trec_run(io.BufferedReader(io.BytesIO(RUN))), RUN, True)
    # text mode: encoded back to UTF-8
    check_same(read_trec_run(io.StringIO(RUN.decode())), RUN, True)
    wrapper = io.TextIOWrapper(io.BytesIO(RUN), encoding="utf-8")
    check_same(read_trec_run(wrapper), RUN, True)

    class ReadOnly:  # only read(), no readinto()
        def __init__(self, data):
            self._f = io.BytesIO(data)

        def read(self, n=-1):
            return self._f.read(n)

    check_same(trec_module._read(ReadOnly(RUN), is_run=True, chunk_bytes=5), RUN, True)
    assert read_trec_run(io.BytesIO(RUN)).path == "<file>"


def test_open_file_names_its_path(tmp_path):
    p = tmp_path / "r.txt"
    p.write_bytes(RUN)
    with open(p, "rb") as f:
        cols = read_trec_run(f)
    assert cols.path == str(p)


def test_docstring_examples():
    import doctest

    assert doctest.testmod(trec_module, optionflags=doctest.NORMALIZE_WHITESPACE).failed == 0


def test_stdin(monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(RUN + b"q3 Q0 d9 1 1e400 r\n")))
    cols = read_trec_run("-")
    assert cols.path == "<stdin>"
    assert cols.query_ids == ["q1", "q2", "q3"]
    assert cols.values[-1] == math.inf
    monkeypatch.setattr(sys, "stdin", io.StringIO(RUN.decode()))  # no .buffer
    assert read_trec_run("-").query_ids == ["q1", "q2"]


def test_bytearray_and_memoryview():
    check_same(read_trec_qrels(bytearray(QRELS)), QRELS, False)
    check_same(read_trec_qrels(memoryview(QRELS)), QRELS, False)


def test_wrong_source_type():
    with pytest.raises(TypeError, match="source must be a path"):
        read_trec_run(12)


def test_workers_argument():
    assert read_trec_run(RUN, workers=-1).doc_ids == read_trec_run(RUN, workers=2).doc_ids
    with pytest.raises(ValueError, match="workers"):
        read_trec_run(RUN, workers=0)
    with pytest.raises(TypeError, match="workers must be an int"):
        read_trec_run(RUN, workers=1.5)


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_trec_run(tmp_path / "nope.txt")


def test_arrays_outlive_the_parser_and_are_writable():
    cols = read_trec_run(RUN * 1000)
    values = cols.values
    del cols
    assert values.flags.writeable and values.flags.c_contiguous
    values[0] = 7.0
    assert values.sum() > 0


# ----------------------------------------------------------------------------------------------
# line format


def test_empty_inputs():
    for data in (b"", b"\n", b"   \n\t\n", b"# only a comment\n", b"#"):
        for is_run in (True, False):
            cols = read(data, is_run)
            assert len(cols) == 0 and cols.query_ids == [] and cols.doc_ids == []
            assert cols.run_id is None
            assert cols.values.dtype == (np.float64 if is_run else np.int32)


def test_crlf_and_missing_final_newline():
    data = b"q1 Q0 d1 1 2.5 r1\r\nq1 Q0 d2 2 1.5 r2\r\n\r\nq2 Q0 d3 1 1 r3"
    cols = read_trec_run(data)
    assert cols.run_id == "r3"
    assert cols.doc_ids == ["d1", "d2", "d3"]
    assert cols.line_numbers.tolist() == [1, 2, 4]
    check_same(cols, data, True)


def test_tabs_and_runs_of_whitespace():
    data = b"  q1\t\tQ0 d1 \t 1\t2.5\truns \t\n"
    cols = read_trec_run(data)
    assert (cols.query_ids, cols.doc_ids, cols.run_id) == (["q1"], ["d1"], "runs")


def test_extra_fields_are_ignored():
    assert read_trec_run(b"q Q0 d 1 0.5 run extra more\n").run_id == "run"
    assert read_trec_qrels(b"q 0 d 3 extra\n").values.tolist() == [3]


def test_comments_only_in_column_zero():
    data = b"# header\nq1 0 d#1 1\n #x 0 d2 1\n#q1 0 d3 1\n"
    cols = read_trec_qrels(data)
    # ' #x' is data (qid '#x'): trec_eval only skips a '#' in the first column
    assert cols.query_ids == ["q1", "#x"]
    assert cols.doc_ids == ["d#1", "d2"]
    assert cols.line_numbers.tolist() == [2, 3]


def test_unicode_ids():
    data = "q\u00e9 Q0 \u6587\u66f8-1 1 1.0 r\u00fcn\nq\u00e9 Q0 \U0001f600 2 0.5 r\u00fcn\n"
    cols = read_trec_run(data.encode())
    assert cols.query_ids == ["q\u00e9"]
    assert cols.doc_ids == ["\u6587\u66f8-1", "\U0001f600"]
    assert cols.run_id == "r\u00fcn"


def test_non_ascii_whitespace_is_part_of_an_id():
    # U+00A0 and U+3000 are not C isspace(): trec_eval keeps them in the id
    data = "q 0 a\u00a0b 1\nq 0 c\u3000d 1\n".encode()
    assert read_trec_qrels(data).doc_ids == ["a\u00a0b", "c\u3000d"]


def test_ids_that_share_prefixes_lengths_and_nul_bytes():
    names = [b"d", b"d\x00", b"d\x00\x00", b"D1234567", b"D12345678", b"D123456789",
             b"D1234567\x00", b"12345678", b"1234567890123456", b"12345678901234567",
             b"x" * 100, b"x" * 101]
    data = b"".join(b"q 0 %s %d\n" % (n, i) for i, n in enumerate(names))
    data += b"".join(b"q 0 %s %d\n" % (n, i) for i, n in enumerate(reversed(names)))
    cols = read_trec_qrels(data)
    assert cols.doc_ids == [n.decode() for n in names]
    assert cols.doc_index.tolist() == list(range(len(names))) + list(range(len(names)))[::-1]


@both_modes
def test_many_distinct_ids_grow_the_tables(workers):
    rng = np.random.default_rng(1)
    n = 300_000
    docs = rng.integers(0, 200_000, n)
    qids = np.repeat(np.arange(n // 50), 50)
    lines = [f"q{q} Q0 doc-{d} 1 {i}.5 r\n" if i % 3 else f"q{q} Q0 D{d} 1 {i} r\n"
             for i, (q, d) in enumerate(zip(qids, docs))]
    data = "".join(lines).encode()
    check_same(read(data, True, 1 << 16, workers), data, True)


def test_large_gzip_input():
    # enough rows for columns of several megabytes (grown in place, with huge-page advice)
    # while the gzip reader allocates and frees its own buffers around them
    rng = np.random.default_rng(7)
    n = 700_000
    docs = rng.integers(0, 400_000, n)
    data = b"".join(b"q%d Q0 D%d 1 %d.%02d r\n" % (i // 100, d, i % 97, i % 100)
                    for i, d in enumerate(docs.tolist()))
    want = naive(data, True)
    compressed = gzip.compress(data, 1)
    for workers in (1, 2):
        got = as_plain(read_trec_run(compressed, workers=workers))
        assert got == want


@both_modes
def test_a_line_longer_than_the_chunk(workers):
    long_doc = b"d" * 5000
    data = b"q Q0 short 1 1 r\nq Q0 " + long_doc + b" 2 0.5 r\nq Q0 x 3 0.25 r\n"
    for chunk in (16, 100, 4999):
        cols = read(data, True, chunk, workers)
        assert cols.doc_ids == ["short", long_doc.decode(), "x"]
        cols = read_stream(data, True, chunk, workers)
        assert cols.doc_ids == ["short", long_doc.decode(), "x"]


# ----------------------------------------------------------------------------------------------
# scores: exactly float(token)

SCORE_TOKENS = [
    "0", "-0", "+0", "0.0", "-0.0", "0e0", "-0e-999", "1", "-1", "+1.5", ".5", "5.", "-.5e1",
    "1e5", "1E5", "1e+05", "1e-05", "0.1", "0.2", "0.3", "0.30000000000000004",
    "9007199254740992", "9007199254740993", "9007199254740993.0", "123456789012345678",
    "1234567890123456789", "12345678901234567890", "0.000001", "1e22", "1e23", "1e-22", "1e-23",
    "123.456e-20", "1.7976931348623157e308", "1.7976931348623159e308", "1e309", "-1e309",
    "4.9e-324", "2.4e-324", "2e-324", "1e-400", "2.2250738585072011e-308",
    "2.2250738585072012e-308", "0.1000000000000000055511151231257827021181583404541015625",
    "00000000000000000000000001.5", "1.50000000000000000000000000000", "inf", "-inf", "+inf",
    "Inf", "INFINITY", "-Infinity", "3.14159", "99.99", "-12.34", "1" * 400,
]


@pytest.mark.parametrize("chunk", [None, 7])
def test_scores_are_exactly_python_float(chunk):
    data = "".join(f"q Q0 d{i} {i} {tok} r\n" for i, tok in enumerate(SCORE_TOKENS)).encode()
    cols = read(data, True, chunk)
    assert same_floats(cols.values.tolist(), [float(t) for t in SCORE_TOKENS])


@given(st.floats(allow_nan=False))
@settings(max_examples=300, deadline=None)
def test_repr_and_fixed_scores_roundtrip(x):
    toks = [repr(x), "%.6f" % x, "%.2f" % x, "%.17g" % x, "%e" % x]
    data = "".join(f"q Q0 d{i} 1 {t} r\n" for i, t in enumerate(toks)).encode()
    assert same_floats(read(data, True).values.tolist(), [float(t) for t in toks])


decimal_tokens = st.builds(
    lambda sign, whole, frac, exp: sign + whole + frac + exp,
    st.sampled_from(["", "-", "+"]),
    st.text("0123456789", max_size=25),
    st.one_of(st.just(""), st.text("0123456789", max_size=25).map(lambda s: "." + s)),
    st.one_of(
        st.just(""),
        st.builds(lambda e, s, d: e + s + d, st.sampled_from("eE"), st.sampled_from(["", "-", "+"]),
                  st.text("0123456789", min_size=1, max_size=4)),
    ),
)


@given(decimal_tokens)
@settings(max_examples=500, deadline=None)
def test_decimal_syntax_matches_float(tok):
    assume(tok)  # an empty token is a missing field
    data = f"q Q0 d 1 {tok} r\n".encode()
    try:
        want = float(tok)
    except ValueError:
        with pytest.raises(TrecFormatError, match="is not a number") as e:
            read(data, True)
        assert e.value.line == 1
    else:
        assert same_floats(read(data, True).values.tolist(), [want])


# ----------------------------------------------------------------------------------------------
# errors, each naming path and line


def error(data: bytes, is_run: bool, chunk: int | None = None, workers: int = 1) -> TrecFormatError:
    with pytest.raises(TrecFormatError) as e:
        read(data, is_run, chunk, workers)
    return e.value


HEAD = b"# comment\n\nq1 Q0 d1 1 1.0 r\n"  # data on line 3; an error goes on line 4


@pytest.mark.parametrize(
    "line, pattern",
    [
        (b"q1 Q0 d2 2 0.5", r"expected at least 6 whitespace-separated fields .*found 5"),
        (b"q1", r"expected at least 6 .*found 1"),
        (b"q1 Q0 d2 2 abc r", r"score \(5th field\) 'abc' is not a number"),
        (b"q1 Q0 d2 2 1.5.2 r", r"'1.5.2' is not a number"),
        (b"q1 Q0 d2 2 1_0 r", r"'1_0' is not a number"),
        (b"q1 Q0 d2 2 0x10 r", r"'0x10' is not a number"),
        (b"q1 Q0 d2 2 1e r", r"'1e' is not a number"),
        (b"q1 Q0 d2 2 nan r", r"'nan' is NaN"),
        (b"q1 Q0 d2 2 -NaN r", r"'-NaN' is NaN"),
        (b"q1 Q0 d2 2 " + b"9" * 200 + b"x r", r"is not a number"),
        (b"q\xff Q0 d2 2 1 r", r"query id \(1st field\) is not valid UTF-8"),
        (b"q1 Q0 d\xc0\x80 2 1 r", r"document id \(3rd field\) is not valid UTF-8"),
        (b"q1 Q0 d2 2 1 r\xed\xa0\x80", r"run id \(6th field\) is not valid UTF-8"),
    ],
)
@pytest.mark.parametrize("chunk", [None, 5])
@pytest.mark.parametrize("eol", [b"\n", b"\r\n", b""])
@both_modes
def test_run_errors_name_the_line(line, pattern, chunk, eol, workers):
    data = HEAD + line + eol + (b"q1 Q0 d9 3 1.0 r\n" if eol else b"")
    e = error(data, True, chunk, workers)
    assert e.line == 4 and e.path == "<bytes>"
    assert str(e).startswith("<bytes>, line 4: ")
    assert e.message == str(e).split(": ", 1)[1]
    assert re.search(pattern, e.message), e.message


@pytest.mark.parametrize(
    "line, pattern",
    [
        (b"q1 0 d2", r"at least 4 whitespace-separated fields \(qid iter docno rel\), found 3"),
        (b"q1 0 d2 1.5", r"relevance grade \(4th field\) '1.5' is not an integer"),
        (b"q1 0 d2 1e2", r"'1e2' is not an integer"),
        (b"q1 0 d2 -", r"'-' is not an integer"),
        (b"q1 0 d2 2147483648", r"out of range"),
        (b"q1 0 d2 -2147483649", r"out of range"),
        (b"q1 0 d2 99999999999999999999999", r"out of range"),
        (b"q1 0 d\xf4\x90\x80\x80 1", r"document id \(3rd field\) is not valid UTF-8"),
    ],
)
def test_qrels_errors_name_the_line(line, pattern):
    data = b"# comment\n\nq1 0 d1 1\n" + line + b"\nq1 0 d9 1\n"
    e = error(data, False)
    assert e.line == 4
    assert re.search(pattern, e.message), e.message


@both_modes
def test_read_errors_propagate_and_no_thread_is_left(workers):
    class Broken(io.RawIOBase):
        data = b"".join(b"q Q0 d%d 1 1 r\n" % i for i in range(100))

        def __init__(self):
            self.sent = 0

        def readable(self):
            return True

        def readinto(self, b):
            if self.sent > 500:
                raise OSError("disk on fire")
            n = min(len(b), 7)
            b[:n] = self.data[self.sent : self.sent + n]
            self.sent += n
            return n

    before = threading.active_count()
    with pytest.raises(OSError, match="disk on fire"):
        trec_module._read(Broken(), is_run=True, chunk_bytes=8, workers=workers)
    bad = b"".join(b"q Q0 d%d 1 1 r\n" % i for i in range(5000)) + b"q Q0 \xff 1 1 r\n" * 9000
    with pytest.raises(TrecFormatError):
        trec_module._read(bad, is_run=True, chunk_bytes=1000, workers=workers)
    assert threading.active_count() == before


def test_grade_edges():
    cols = read_trec_qrels(b"q 0 a 2147483647\nq 0 b -2147483648\nq 0 c +3\nq 0 d 007\nq 0 e -0\n")
    assert cols.values.tolist() == [2147483647, -2147483648, 3, 7, 0]


def test_error_path_and_pickling(tmp_path):
    p = tmp_path / "bad.run"
    p.write_bytes(b"q Q0 d 1 0.5 r\nq Q0 d2 1 x r\n")
    with pytest.raises(TrecFormatError) as e:
        read_trec_run(p)
    assert e.value.path == str(p) and e.value.line == 2
    assert str(e.value).startswith(f"{p}, line 2: ")
    assert isinstance(e.value, ValueError)
    again = pickle.loads(pickle.dumps(e.value))
    assert (again.path, again.line, str(again)) == (e.value.path, e.value.line, str(e.value))
    gz = tmp_path / "bad.run.gz"
    gz.write_bytes(gzip.compress(p.read_bytes()))
    with pytest.raises(TrecFormatError, match=r"bad.run.gz, line 2: "):
        read_trec_run(gz)


@both_modes
@pytest.mark.parametrize("chunk", [None, 1, 20])
def test_first_error_wins(workers, chunk):
    # a bad score (checked late, on the slow path) before a short line: the score's line
    data = b"q Q0 d 1 1.0 r\nq Q0 d 1 bad r\nq Q0 d\n"
    assert error(data, True, chunk, workers).line == 2
    data = b"q Q0 d 1 1.0 r\nq Q0 d\xff 1 1e400 r\nq Q0 d 1 bad r\n"
    assert error(data, True, chunk, workers).line == 2
    # the invalid UTF-8 id (found when interning) comes before the bad score (found when
    # scanning, possibly a block ahead)
    data = b"q Q0 d 1 1.0 r\nq Q0 d\xff 1 1 r\nq Q0 d 1 bad r\n"
    assert "UTF-8" in error(data, True, chunk, workers).message
    data = b"q\xfe Q0 d 1 1.0 r\nq Q0 d 1 1 r\nq Q0 d 1\n"
    e = error(data, True, chunk, workers)
    assert e.line == 1 and "query id" in e.message


@both_modes
def test_error_lines_across_many_chunks(workers):
    good = b"".join(b"q%d Q0 d%d 1 %d.25 r\n" % (i, i, i) for i in range(1000))
    for bad, message in [(b"q Q0 d 1 nope r\n", "not a number"),
                         (b"q Q0 d\xff 1 1 r\n", "UTF-8"),
                         (b"q Q0 d 1 1\n", "fields")]:
        data = good + bad + good
        for chunk in (None, 1, 33, 1000):
            e = error(data, True, chunk, workers)
            assert e.line == 1001 and message in e.message
            with pytest.raises(TrecFormatError) as e:
                read_stream(data, True, chunk, workers)
            assert e.value.line == 1001 and e.value.path == "<file>"


def test_utf8_validation_matches_python():
    samples = [b"\xc2\x80", b"\xdf\xbf", b"\xe0\xa0\x80", b"\xe0\x9f\xbf", b"\xed\x9f\xbf",
               b"\xed\xa0\x80", b"\xee\x80\x80", b"\xef\xbf\xbf", b"\xf0\x90\x80\x80",
               b"\xf0\x8f\xbf\xbf", b"\xf4\x8f\xbf\xbf", b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80",
               b"\xc1\xbf", b"\x80", b"\xc2", b"\xe1\x80", b"\xf1\x80\x80", b"\xff", b"\xfe"]
    for raw in samples:
        tok = b"a" + raw + b"z"
        try:
            want = tok.decode("utf-8")
        except UnicodeDecodeError:
            with pytest.raises(TrecFormatError, match="not valid UTF-8"):
                read(b"q 0 " + tok + b" 1\n", False)
        else:
            assert read(b"q 0 " + tok + b" 1\n", False).doc_ids == [want]


@given(st.binary(min_size=1, max_size=12).filter(lambda b: not any(c in b" \t\n\r\v\f" for c in b)))
@settings(max_examples=300, deadline=None)
def test_random_bytes_ids_valid_iff_python_decodes(raw):
    data = b"q 0 " + raw + b" 1\n"
    try:
        want = raw.decode("utf-8")
    except UnicodeDecodeError:
        with pytest.raises(TrecFormatError, match="not valid UTF-8"):
            read(data, False)
    else:
        assert read(data, False).doc_ids == [want]


# ----------------------------------------------------------------------------------------------
# random files against the naive parser

id_text = st.text(
    alphabet=st.characters(
        blacklist_categories=("Cs",),
        blacklist_characters=" \t\n\r\x0b\x0c",
    ),
    min_size=1,
    max_size=14,
)
sep = st.sampled_from([" ", "\t", "  ", " \t "])


@st.composite
def trec_files(draw, is_run: bool):
    qids = draw(st.lists(id_text, min_size=1, max_size=4))
    docs = draw(st.lists(id_text, min_size=1, max_size=12))
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    lines = []
    for _ in range(draw(st.integers(0, 30))):
        kind = draw(st.sampled_from(["data"] * 6 + ["comment", "blank"]))
        if kind == "comment":
            lines.append("#" + draw(st.text(max_size=10).filter(lambda s: "\n" not in s)))
            continue
        if kind == "blank":
            lines.append(draw(st.sampled_from(["", " ", "\t \t"])))
            continue
        s = draw(sep)
        q, d = draw(st.sampled_from(qids)), draw(st.sampled_from(docs))
        if is_run:
            x = draw(st.floats(allow_nan=False, width=64))
            score = draw(st.sampled_from([repr(x), "%.6f" % x]))
            fields = [q, "Q0", d, str(draw(st.integers(0, 999))), score, draw(id_text)]
        else:
            fields = [q, "0", d, str(draw(st.integers(-(2**31), 2**31 - 1)))]
        if draw(st.booleans()):
            fields.append(draw(id_text))
        lead = draw(st.sampled_from(["", " ", "\t"]))
        lines.append(lead + s.join(fields) + draw(st.sampled_from(["", " ", "\t"])))
    text = eol.join(lines) + (eol if lines and draw(st.booleans()) else "")
    return text.encode("utf-8")


@given(trec_files(True), st.sampled_from([None, 1, 3, 17, 64]), st.sampled_from([1, 2]))
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_random_runs_match_naive_parser(data, chunk, workers):
    check_same(read(data, True, chunk, workers), data, True)
    check_same(read_stream(data, True, chunk, workers), data, True)


@given(trec_files(False), st.sampled_from([None, 1, 5, 64]), st.sampled_from([1, 2]))
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_random_qrels_match_naive_parser(data, chunk, workers):
    check_same(read(data, False, chunk, workers), data, False)
    check_same(read_stream(data, False, chunk, workers), data, False)


@given(trec_files(True))
@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_random_runs_from_gzip_and_stdin(data):
    assume(data)
    check_same(read_trec_run(gzip.compress(data)), data, True)
