"""qafast.io.trec against a naive split-based parser, and every error case by line."""

from __future__ import annotations

import gzip
import io
import itertools
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

import qafast
from qafast import _kernels
from qafast._kernels import _trec_hash_bytes
from qafast.io import TrecColumns, TrecFormatError, read_trec_qrels, read_trec_run
from qafast.io import trec as trec_module
from _examples import examples

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
        if is_run and fields[0].startswith(b"#"):
            continue  # trec_eval's run reader skips blanks, then takes '#' as a comment
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


def read(
    data: bytes, is_run: bool, chunk: int | None = None, workers: int = 1, intern_docs: bool = True
) -> TrecColumns:
    return trec_module.read_columns(
        data, is_run=is_run, chunk_bytes=chunk, workers=workers, intern_docs=intern_docs
    )


def read_stream(
    data: bytes, is_run: bool, chunk: int | None = None, workers: int = 1, intern_docs: bool = True
) -> TrecColumns:
    return trec_module.read_columns(
        io.BytesIO(data), is_run=is_run, chunk_bytes=chunk, workers=workers,
        intern_docs=intern_docs,
    )


both_modes = pytest.mark.parametrize("workers", [1, 2], ids=["one-thread", "two-threads"])
docs_modes = pytest.mark.parametrize("intern_docs", [True, False], ids=["interned", "flat"])


# ----------------------------------------------------------------------------------------------
# intern_docs=False: each line's document id as hash, tie key and bytes


def tie_key(raw: bytes) -> int:
    """qafast_tie_key in Python: the first 8 bytes big-endian, zero-padded, top bit flipped."""
    key = int.from_bytes(raw[:8].ljust(8, b"\0"), "big") ^ (1 << 63)
    return key - (1 << 64) if key >= 1 << 63 else key


def check_flat(flat: TrecColumns, interned: TrecColumns) -> None:
    """flat (intern_docs=False) describes the same lines as interned (the default)."""
    n = len(interned)
    assert len(flat) == n
    assert flat.doc_ids is None and flat.doc_index is None
    assert interned.doc_hashes is None and interned.doc_tiekeys is None
    assert interned.doc_offsets is None and interned.doc_blob is None
    assert flat.query_ids == interned.query_ids
    assert np.array_equal(flat.query_index, interned.query_index)
    assert flat.query_index.dtype == np.int32
    assert flat.values.dtype == interned.values.dtype
    assert np.array_equal(flat.values.view(np.uint8), interned.values.view(np.uint8))
    assert np.array_equal(flat.line_numbers, interned.line_numbers)
    assert (flat.run_id, flat.path) == (interned.run_id, interned.path)
    for column in (flat.doc_hashes, flat.doc_tiekeys, flat.doc_offsets):
        assert column.dtype == np.int64 and column.flags.c_contiguous
    assert flat.doc_blob.dtype == np.uint8 and flat.doc_blob.ndim == 1
    assert flat.doc_hashes.shape == flat.doc_tiekeys.shape == (n,)
    assert flat.doc_offsets.shape == (n + 1,) and flat.doc_offsets[0] == 0
    assert flat.doc_offsets[-1] == len(flat.doc_blob)
    assert np.all(np.diff(flat.doc_offsets) > 0)  # a docno is never empty
    blob = flat.doc_blob.tobytes()
    offsets = flat.doc_offsets.tolist()
    hashes, tiekeys = flat.doc_hashes.tolist(), flat.doc_tiekeys.tolist()
    want_bytes = [d.encode("utf-8") for d in interned.doc_ids]
    want_hash = [_trec_hash_bytes(b) for b in want_bytes]
    for i, d in enumerate(interned.doc_index.tolist()):
        raw = blob[offsets[i] : offsets[i + 1]]
        assert raw == want_bytes[d] == flat.doc_id_bytes(i) == interned.doc_id_bytes(i)
        assert hashes[i] == want_hash[d]
        assert tiekeys[i] == tie_key(raw)


def check_both(data: bytes, is_run: bool, chunk: int | None = None, workers: int = 1,
               stream: bool = False) -> None:
    """Both modes against the naive parser."""
    reader = read_stream if stream else read
    interned = reader(data, is_run, chunk, workers)
    check_same(interned, data, is_run)
    check_flat(reader(data, is_run, chunk, workers, intern_docs=False), interned)


def test_flat_run_columns():
    cols = read_trec_run(RUN, intern_docs=False)
    assert cols.doc_ids is None and cols.doc_index is None
    assert cols.query_ids == ["q1", "q2"]
    assert cols.query_index.tolist() == [0, 0, 1]
    assert cols.doc_blob.tobytes() == b"d1d2d1"
    assert cols.doc_offsets.tolist() == [0, 2, 4, 6]
    assert cols.doc_hashes[0] == cols.doc_hashes[2] != cols.doc_hashes[1]
    assert cols.doc_hashes[0] == _trec_hash_bytes(b"d1")
    assert cols.doc_tiekeys.tolist() == [tie_key(b"d1"), tie_key(b"d2"), tie_key(b"d1")]
    assert cols.values.tolist() == [2.5, 1.25, -0.5]
    assert cols.line_numbers.tolist() == [1, 2, 3]
    assert cols.run_id == "runB"
    assert repr(cols) == (
        "TrecColumns(run, 3 lines, 2 queries, documents not interned, run_id='runB', "
        "path='<bytes>')"
    )
    check_flat(cols, read_trec_run(RUN))
    flat_qrels = read_trec_qrels(QRELS, intern_docs=False)
    check_flat(flat_qrels, read_trec_qrels(QRELS))
    assert flat_qrels.doc_blob.tobytes() == b"d1d3d1"


def test_qrels_read_for_a_qrels_object_keep_no_tie_keys():
    from qafast.io import trec

    flat = trec.read_columns(QRELS, is_run=False, intern_docs=False, tie_keys=False)
    full = read_trec_qrels(QRELS, intern_docs=False)
    assert flat.doc_tiekeys is None and full.doc_tiekeys is not None
    for name in ("query_ids", "query_index", "values", "line_numbers", "doc_hashes",
                 "doc_offsets", "doc_blob"):
        assert np.array_equal(np.asarray(getattr(flat, name)), np.asarray(getattr(full, name)))
    for workers in (1, 2):  # the threaded reader interns in its own loop
        got = trec.read_columns(QRELS * 3000, is_run=False, workers=workers, intern_docs=False,
                         tie_keys=False, chunk_bytes=4096)
        assert got.doc_tiekeys is None and len(got) == 3000 * len(full)


def test_flat_empty_inputs():
    for data in (b"", b"\n", b"# only a comment\n"):
        for reader in (read_trec_run, read_trec_qrels):
            cols = reader(data, intern_docs=False)
            assert len(cols) == 0 and cols.query_ids == []
            assert cols.doc_offsets.tolist() == [0]
            assert cols.doc_blob.dtype == np.uint8 and len(cols.doc_blob) == 0
            assert cols.doc_hashes.dtype == cols.doc_tiekeys.dtype == np.int64
            assert len(cols.doc_hashes) == len(cols.doc_tiekeys) == 0


def test_flat_arrays_outlive_the_parser_and_are_writable():
    cols = read_trec_run(RUN * 1000, intern_docs=False)
    blob, offsets = cols.doc_blob, cols.doc_offsets
    del cols
    assert blob.flags.writeable and offsets.flags.writeable
    assert blob[offsets[2] : offsets[3]].tobytes() == b"d1"


def test_intern_docs_must_be_a_bool():
    with pytest.raises(TypeError, match="intern_docs must be a bool"):
        read_trec_run(RUN, intern_docs=0)


def test_hash_bytes_and_tie_key_helpers():
    assert _trec_hash_bytes(b"") == _trec_hash_bytes(bytearray())
    assert _trec_hash_bytes(b"abc") != _trec_hash_bytes(b"abd")
    assert -(2**63) <= _trec_hash_bytes(b"x" * 100) < 2**63
    assert tie_key(b"") == -(2**63)
    assert tie_key(b"\xff" * 9) == 2**63 - 1
    # signed order of the keys is the byte order of the first 8 bytes
    ids = sorted([b"", b"\x00", b"a", b"ab", b"b", b"\x7f", b"\x80", b"\xc3\xa9", b"z" * 8])
    assert [tie_key(b) for b in ids] == sorted(tie_key(b) for b in ids)


# ids of every length around the 8- and 16-byte loads, ASCII and not, with NUL bytes
AWKWARD_IDS = [
    b"d", b"d\x00", b"D1234567", b"D12345678", b"D123456789", b"1234567890123456",
    b"12345678901234567", b"x" * 64, b"y" * 100, "\u00e9".encode(), "\u00e9t\u00e9".encode(),
    "\U0001f600abcd".encode(), ("\u6587" * 5).encode(), ("\u6587" * 6).encode(),
    "caf\u00e9-\u00e9\u00e9\u00e9\u00e9".encode(), b"\x00" * 3, b"#x",
]


@both_modes
@pytest.mark.parametrize("chunk", [None, 1, 40, 200])
def test_flat_awkward_ids(workers, chunk):
    lines = [b"q%d Q0 %s %d %d.5 r\n" % (i % 3, d, i, i) for i, d in enumerate(AWKWARD_IDS)]
    lines += [b"q Q0 %s 1 1 r" % d for d in AWKWARD_IDS[::-1]]  # the last, ending the data
    data = b"".join(lines[:-1]) + lines[-1]
    check_both(data, True, chunk, workers)
    check_both(data, True, chunk, workers, stream=True)
    qrels = b"".join(b"q 0 %s %d\n" % (d, i) for i, d in enumerate(AWKWARD_IDS))
    check_both(qrels, False, chunk, workers)


def test_flat_hashes_match_the_other_hashing_code():
    # qafast hashes ids elsewhere (dict keys) with the same _trec_hash and qafast_tie_key
    hash_keys = getattr(_kernels, "hash_keys", None)
    if hash_keys is None:
        pytest.skip("qafast._kernels.hash_keys not available")
    data = b"".join(b"q Q0 %s 1 1 r\n" % d for d in AWKWARD_IDS)
    cols = read_trec_run(data, intern_docs=False)
    hashes = np.empty(len(cols), dtype=np.int64)
    tiekeys = np.empty(len(cols), dtype=np.int64)
    hash_keys(cols.doc_offsets, cols.doc_blob, hashes, tiekeys)
    assert np.array_equal(hashes, cols.doc_hashes)
    assert np.array_equal(tiekeys, cols.doc_tiekeys)


# ----------------------------------------------------------------------------------------------
# trec_eval's own test inputs


def golden_cases():
    for workers, mode in ((1, "one-thread"), (2, "two-threads")):
        for name, is_run in [
            ("qrels.test", False),
            ("qrels.test.with-comments", False),
            ("qrels.comment.test", False),
            ("qrels.rel_level", False),
            ("results.test", True),
            ("results.comment.test", True),
            ("results.trunc", True),
        ]:
            # two threads hand results.comment.test's 2.8 MB across in about 180,000 chunks
            # of 1 and 97 bytes (6 to 8 s); one thread reads it in every default run
            slow = workers == 2 and name == "results.comment.test"
            yield pytest.param(name, is_run, workers, id=f"{mode}-{name}-{is_run}",
                               marks=[pytest.mark.slow] if slow else [])


@needs_golden
@pytest.mark.parametrize("name, is_run, workers", golden_cases())
def test_golden_files_match_naive_parser(name, is_run, workers):
    path = GOLDEN / name
    data = path.read_bytes()
    reader = read_trec_run if is_run else read_trec_qrels
    cols = reader(path, workers=workers)
    check_same(cols, data, is_run)
    assert cols.path == str(path)
    check_flat(reader(path, workers=workers, intern_docs=False), cols)
    for chunk in (1, 97, 4096):  # a chunk boundary inside many lines
        check_both(data, is_run, chunk, workers)
        check_both(data, is_run, chunk, workers, stream=True)


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
    cols = trec_module.read_columns(gz, is_run=True, chunk_bytes=100, workers=workers)
    check_same(cols, data, True)
    flat = trec_module.read_columns(gz, is_run=True, chunk_bytes=100, workers=workers, intern_docs=False)
    check_flat(flat, cols)


GZIP_READERS = ["standard-library",
                pytest.param("isal", marks=pytest.mark.skipif(
                    __import__("importlib").util.find_spec("isal") is None,
                    reason="python-isal (the gzip extra) is not installed"))]


@pytest.mark.parametrize("reader", GZIP_READERS)
@both_modes
def test_gzip_readers_read_the_same_and_refuse_the_same(tmp_path, monkeypatch, reader,
                                                         workers):
    monkeypatch.setattr(trec_module, "_USE_ISAL", reader == "isal")
    kind = type(trec_module._gzip_reader(io.BytesIO(b""))[0]).__module__
    assert kind.startswith("isal") == (reader == "isal")
    data = b"".join(b"q%d Q0 d%d %d %d.5 r\n" % (i // 7, i, i, i) for i in range(3000))
    whole = gzip.compress(data, compresslevel=1)
    half = len(data) // 2
    members = gzip.compress(data[:half]) + gzip.compress(data[half:])  # as `cat a.gz b.gz`
    for packed in (whole, members):
        path = tmp_path / "run.gz"
        path.write_bytes(packed)
        check_same(trec_module.read_columns(path, is_run=True, chunk_bytes=333, workers=workers),
                   data, True)
    crc = bytearray(whole)
    crc[-8] ^= 0xFF
    bad = {"truncated": whole[:-5], "cut in the middle": whole[:len(whole) // 2],
           "a wrong CRC": bytes(crc), "not deflate": b"\x1f\x8b" + b"x" * 20}
    for label, packed in bad.items():
        path = tmp_path / "bad.gz"
        path.write_bytes(packed)
        with pytest.raises(TrecFormatError, match="(truncated|corrupt) gzip data") as e:
            trec_module.read_columns(path, is_run=True, chunk_bytes=333, workers=workers)
        assert e.value.path == str(path), label


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

    check_same(trec_module.read_columns(ReadOnly(RUN), is_run=True, chunk_bytes=5), RUN, True)
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
    check_both(data, True, 1 << 16, workers)


@pytest.mark.slow  # a size test: 700,000 lines, 6 to 11 s
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
        cols = read_trec_run(compressed, workers=workers)
        assert as_plain(cols) == want
        check_flat(read_trec_run(compressed, workers=workers, intern_docs=False), cols)


@both_modes
def test_a_line_longer_than_the_chunk(workers):
    long_doc = b"d" * 5000
    data = b"q Q0 short 1 1 r\nq Q0 " + long_doc + b" 2 0.5 r\nq Q0 x 3 0.25 r\n"
    for chunk in (16, 100, 4999):
        cols = read(data, True, chunk, workers)
        assert cols.doc_ids == ["short", long_doc.decode(), "x"]
        cols = read_stream(data, True, chunk, workers)
        assert cols.doc_ids == ["short", long_doc.decode(), "x"]
        flat = read_stream(data, True, chunk, workers, intern_docs=False)
        assert flat.doc_blob.tobytes() == b"short" + long_doc + b"x"
        check_flat(flat, cols)
        check_both(data, True, chunk, workers)


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
@settings(max_examples=examples(300), deadline=None)
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


@given(decimal_tokens, st.sampled_from([" ", "\t", "\x0b", "\x0c", "\r", "  "]))
@settings(max_examples=examples(500), deadline=None)
def test_decimal_syntax_matches_float(tok, after):
    # the converter stops at the whitespace after the score instead of checking its bound
    assume(tok)  # an empty token is a missing field
    data = f"q Q0 d 1 {tok}{after}r\n".encode()
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


def error(
    data: bytes, is_run: bool, chunk: int | None = None, workers: int = 1, intern_docs: bool = True
) -> TrecFormatError:
    with pytest.raises(TrecFormatError) as e:
        read(data, is_run, chunk, workers, intern_docs)
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
@pytest.mark.parametrize("tail", [b"", b"# a long comment after, so every line has 64 bytes\n" * 3])
@both_modes
@docs_modes
def test_run_errors_name_the_line(line, pattern, chunk, eol, tail, workers, intern_docs):
    data = HEAD + line + eol + (b"q1 Q0 d9 3 1.0 r\n" + tail if eol else b"")
    e = error(data, True, chunk, workers, intern_docs)
    assert e.line == 4 and e.path == "<bytes>"
    assert str(e).startswith("<bytes>, line 4: ")
    assert e.message == str(e).split(": ", 1)[1]
    assert re.search(pattern, e.message), e.message


@pytest.mark.parametrize(
    "lines, line, pattern",
    [
        # a score left to the exact parser fails after the scan: still the first error
        ([b"q1 Q0 d2 2 1_0 r", b"q\xff Q0 d3 3 1 r"], 4, r"'1_0' is not a number"),
        ([b"q\xff Q0 d2 2 1_0 r"], 4, r"'1_0' is not a number"),
        ([b"q1 Q0 d2 2 1_0 r", b"q1 Q0 d\xc0\x80 3 1 r"], 4, r"'1_0' is not a number"),
        # an invalid id before a malformed line, and after one
        ([b"q\xff Q0 d2 2 1 r", b"q1 Q0 d3"], 4, r"query id \(1st field\) is not valid"),
        ([b"q1 Q0 d3", b"q\xff Q0 d2 2 1 r"], 4, r"expected at least 6"),
        ([b"q1 Q0 d\xc0\x80 2 1e400x r"], 4, r"'1e400x' is not a number"),
    ],
)
@both_modes
@docs_modes
def test_run_errors_come_in_file_order_whichever_stage_finds_them(lines, line, pattern,
                                                                  workers, intern_docs):
    # with intern_docs=False one thread checks ids during the scan, otherwise a second
    # stage does: the error named is the first in the file either way
    data = HEAD + b"\n".join(lines) + b"\nq1 Q0 d9 3 1.0 r\n"
    e = error(data, True, None, workers, intern_docs)
    assert e.line == line and re.search(pattern, e.message), e.message
    qrels = qafast.Qrels.from_file(b"q1 0 d1 1\n")
    with pytest.raises(TrecFormatError) as streamed:
        qafast.evaluate(qrels, data, ["map"], workers=workers, progress=False)
    assert streamed.value.line == line and re.search(pattern, streamed.value.message)


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
@docs_modes
def test_qrels_errors_name_the_line(line, pattern, intern_docs):
    data = b"# comment\n\nq1 0 d1 1\n" + line + b"\nq1 0 d9 1\n"
    e = error(data, False, intern_docs=intern_docs)
    assert e.line == 4
    assert re.search(pattern, e.message), e.message


@both_modes
@docs_modes
def test_read_errors_propagate_and_no_thread_is_left(workers, intern_docs):
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
        trec_module.read_columns(
            Broken(), is_run=True, chunk_bytes=8, workers=workers, intern_docs=intern_docs
        )
    bad = b"".join(b"q Q0 d%d 1 1 r\n" % i for i in range(5000)) + b"q Q0 \xff 1 1 r\n" * 9000
    with pytest.raises(TrecFormatError):
        trec_module.read_columns(
            bad, is_run=True, chunk_bytes=1000, workers=workers, intern_docs=intern_docs
        )
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
@docs_modes
@pytest.mark.parametrize("chunk", [None, 1, 20])
def test_first_error_wins(workers, chunk, intern_docs):
    def err(data):
        return error(data, True, chunk, workers, intern_docs)

    # a bad score (checked late, on the slow path) before a short line: the score's line
    data = b"q Q0 d 1 1.0 r\nq Q0 d 1 bad r\nq Q0 d\n"
    assert err(data).line == 2
    data = b"q Q0 d 1 1.0 r\nq Q0 d\xff 1 1e400 r\nq Q0 d 1 bad r\n"
    assert err(data).line == 2
    # the invalid UTF-8 id (found when interning) comes before the bad score (found when
    # scanning, possibly a block ahead)
    data = b"q Q0 d 1 1.0 r\nq Q0 d\xff 1 1 r\nq Q0 d 1 bad r\n"
    assert "UTF-8" in err(data).message
    data = b"q\xfe Q0 d 1 1.0 r\nq Q0 d 1 1 r\nq Q0 d 1\n"
    e = err(data)
    assert e.line == 1 and "query id" in e.message
    # on one line, an invalid query id is named before an invalid document id
    data = b"q Q0 d 1 1.0 r\nq\xfe Q0 d\xff 1 1 r\n"
    e = err(data)
    assert e.line == 2 and "query id" in e.message
    # an invalid document id of more than 16 bytes, and one at the very end of the text
    data = b"q Q0 d 1 1.0 r\nq Q0 " + b"d" * 20 + b"\xc0\x80 1 1 r\n"
    e = err(data)
    assert e.line == 2 and "document id" in e.message
    data = b"q Q0 d 1 1.0 r\nq Q0 d\xff 1 1 r"
    assert err(data).line == 2


@both_modes
@docs_modes
def test_error_lines_across_many_chunks(workers, intern_docs):
    good = b"".join(b"q%d Q0 d%d 1 %d.25 r\n" % (i, i, i) for i in range(1000))
    for bad, message in [(b"q Q0 d 1 nope r\n", "not a number"),
                         (b"q Q0 d\xff 1 1 r\n", "UTF-8"),
                         (b"q Q0 d 1 1\n", "fields")]:
        data = good + bad + good
        for chunk in (None, 1, 33, 1000):
            e = error(data, True, chunk, workers, intern_docs)
            assert e.line == 1001 and message in e.message
            with pytest.raises(TrecFormatError) as e:
                read_stream(data, True, chunk, workers, intern_docs)
            assert e.value.line == 1001 and e.value.path == "<file>"


def test_utf8_validation_matches_python():
    samples = [b"\xc2\x80", b"\xdf\xbf", b"\xe0\xa0\x80", b"\xe0\x9f\xbf", b"\xed\x9f\xbf",
               b"\xed\xa0\x80", b"\xee\x80\x80", b"\xef\xbf\xbf", b"\xf0\x90\x80\x80",
               b"\xf0\x8f\xbf\xbf", b"\xf4\x8f\xbf\xbf", b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80",
               b"\xc1\xbf", b"\x80", b"\xc2", b"\xe1\x80", b"\xf1\x80\x80", b"\xff", b"\xfe"]
    for raw in samples:
        for tok in (b"a" + raw + b"z", b"abcdefghijklmnop" + raw):  # short, and > 16 bytes
            try:
                want = tok.decode("utf-8")
            except UnicodeDecodeError:
                for intern_docs in (True, False):
                    with pytest.raises(TrecFormatError, match="not valid UTF-8"):
                        read(b"q 0 " + tok + b" 1\n", False, intern_docs=intern_docs)
            else:
                assert read(b"q 0 " + tok + b" 1\n", False).doc_ids == [want]
                flat = read(b"q 0 " + tok + b" 1\n", False, intern_docs=False)
                assert flat.doc_blob.tobytes() == tok


@given(st.binary(min_size=1, max_size=12).filter(lambda b: not any(c in b" \t\n\r\v\f" for c in b)))
@settings(max_examples=examples(300), deadline=None)
def test_random_bytes_ids_valid_iff_python_decodes(raw):
    data = b"q 0 " + raw + b" 1\n"
    padded = data + b"#" * 80  # with 16 readable bytes after the id, and without
    try:
        want = raw.decode("utf-8")
    except UnicodeDecodeError:
        for text in (data, padded):
            for intern_docs in (True, False):
                with pytest.raises(TrecFormatError, match="not valid UTF-8"):
                    read(text, False, intern_docs=intern_docs)
    else:
        assert read(data, False).doc_ids == [want]
        for text in (data, padded):
            flat = read(text, False, intern_docs=False)
            assert flat.doc_blob.tobytes() == raw
            assert flat.doc_tiekeys.tolist() == [tie_key(raw)]
            assert flat.doc_hashes.tolist() == [_trec_hash_bytes(raw)]


# ----------------------------------------------------------------------------------------------
# random files against the naive parser

id_chars = st.characters(
    blacklist_categories=("Cs",),
    blacklist_characters=" \t\n\r\x0b\x0c",
)
id_text = st.text(alphabet=id_chars, min_size=1, max_size=14)
# also ids long enough to push a line's fields past 64 bytes (the splitter's window)
long_id_text = st.one_of(id_text, st.text(alphabet=id_chars, min_size=15, max_size=40))
sep = st.sampled_from([" ", "\t", "  ", " \t "])


@st.composite
def trec_files(draw, is_run: bool):
    qids = draw(st.lists(id_text, min_size=1, max_size=4))
    docs = draw(st.lists(long_id_text, min_size=1, max_size=12))
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
        lead = draw(st.sampled_from(["", " ", "\t", " " * 30]))
        lines.append(lead + s.join(fields) + draw(st.sampled_from(["", " ", "\t"])))
    if draw(st.booleans()):  # so that 64 bytes follow even the last data line
        lines.append("#" + "-" * 80)
    text = eol.join(lines) + (eol if lines and draw(st.booleans()) else "")
    return text.encode("utf-8")


@given(trec_files(True), st.sampled_from([None, 1, 3, 17, 64]), st.sampled_from([1, 2]))
@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_random_runs_match_naive_parser(data, chunk, workers):
    check_both(data, True, chunk, workers)
    check_both(data, True, chunk, workers, stream=True)


@given(trec_files(False), st.sampled_from([None, 1, 5, 64]), st.sampled_from([1, 2]))
@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_random_qrels_match_naive_parser(data, chunk, workers):
    check_both(data, False, chunk, workers)
    check_both(data, False, chunk, workers, stream=True)


# A run's line after another of its query goes through a lane of its own in the scan
# (_trec_run_lane): the six fields and the newline within 64 bytes, a score of up to 8 bytes
# converted eight digits at a time. The same line with 64 blanks before its newline is taken
# by the general loop; both must store the same bits, and the naive parser's rows. The lane
# leaves a block's last 80 bytes to the general loop, so a comment follows the lines.
lane_scores = st.one_of(
    st.text("0123456789", min_size=1, max_size=8),
    st.builds(lambda a, b: a + "." + b, st.text("0123456789", max_size=7),
              st.text("0123456789", max_size=7)).filter(lambda t: 1 < len(t) <= 8),
    decimal_tokens,
).filter(lambda t: t not in ("", ".", "+", "-", "+.", "-.") and not t.endswith(("e", "E")))


@st.composite
def run_of_grouped_lines(draw):
    lines = []
    for q in draw(st.lists(id_text, min_size=1, max_size=3, unique=True)):
        for _ in range(draw(st.integers(1, 12))):
            score = draw(lane_scores)
            try:
                float(score)
            except ValueError:
                score = "1"
            fields = [q, "Q0", draw(long_id_text), "1", score, draw(st.sampled_from(
                ["r", "run", "bm25\u00e9"]))]
            lines.append(draw(sep).join(fields))
    return lines


@given(run_of_grouped_lines(), st.sampled_from([None, 64, 400]))
@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_the_run_lane_stores_what_the_general_loop_stores(lines, chunk):
    tail = "#" + "-" * 90 + "\n"
    text = ("\n".join(lines) + "\n" + tail).encode("utf-8")
    padded = ("".join(line + " " * 64 + "\n" for line in lines) + tail).encode("utf-8")
    lane, general = (read(t, True, chunk, intern_docs=False) for t in (text, padded))
    check_same(read(text, True, chunk), text, True)
    check_flat(lane, read(text, True, chunk))
    for column in ("values", "query_index", "line_numbers", "doc_hashes", "doc_tiekeys",
                   "doc_offsets", "doc_blob"):
        a, b = getattr(lane, column), getattr(general, column)
        assert a.dtype == b.dtype and np.array_equal(a.view(np.uint8), b.view(np.uint8)), column
    assert (lane.query_ids, lane.run_id) == (general.query_ids, general.run_id)


@pytest.mark.parametrize("byte", range(256))
def test_every_byte_in_an_id_is_split_as_c_isspace_says(byte):
    # the scan's index of spaces and newlines (16 bytes a step, or 32 with AVX2) against
    # bytes.split(), for every byte value: inside a document id, at each of the 64 offsets
    # of an index word, in lines the run lane takes; bytes of 128 and above as UTF-8
    if byte == 10:
        return
    char = bytes([byte]) if byte < 0x80 else chr(byte).encode("utf-8")
    lines = [b"q%d Q0 %sd%s%d 1 %d.5 run" % (k // 40, b"x" * (k % 11), char, k, k)
             for k in range(200)]
    text = b"\n".join(lines) + b"\n"
    check_both(text, True)
    check_both(text, True, chunk=300)


@st.composite
def mostly_sorted_query_ids(draw):
    """Query ids in increasing order (as numbers, or as bytes), then maybe some out of
    order: an id seen before, or one that sorts before its predecessor."""
    kind = draw(st.sampled_from(["numbers", "padded", "text"]))
    if kind == "text":
        ids = sorted(set(draw(st.lists(id_text, min_size=1, max_size=30))),
                     key=lambda q: q.encode("utf-8"))
    else:
        numbers = sorted(set(draw(st.lists(st.integers(0, 10**7), min_size=1, max_size=30))))
        ids = [f"{n:08d}" if kind == "padded" else str(n) for n in numbers]
    order = list(ids)
    for _ in range(draw(st.integers(0, 3))):
        order.insert(draw(st.integers(0, len(order))), draw(st.sampled_from(ids)))
    return order


@given(mostly_sorted_query_ids(), st.booleans(), st.sampled_from([None, 7, 64]),
       st.sampled_from([1, 2]))
@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_sorted_query_ids_then_disorder_match_naive_parser(order, is_run, chunk, workers):
    # sorted query ids are numbered without a table look-up until one comes out of order
    lines = []
    for k, q in enumerate(order):
        for j in range(1 + k % 3):
            lines.append(f"{q} Q0 d{j} {j} {0.5 - j} tag" if is_run else f"{q} 0 d{j} {k % 3}")
    data = ("\n".join(lines) + "\n").encode("utf-8")
    check_both(data, is_run, chunk, workers)
    check_both(data, is_run, chunk, workers, stream=True)


@given(trec_files(True))
@settings(max_examples=examples(50), deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_random_runs_from_gzip_and_stdin(data):
    assume(data)
    check_same(read_trec_run(gzip.compress(data)), data, True)


# ----------------------------------------------------------------------------------------------
# the line splitter: fields found 64 bytes at a time from bit masks, the rest byte by byte

space_run = st.text(alphabet=" \t\x0b\x0c\r", min_size=1, max_size=40)
plain_token = st.text(alphabet="abcXYZ019#.-\x00", min_size=1, max_size=30)


@st.composite
def split_files(draw, is_run: bool):
    need = 6 if is_run else 4
    lines = []
    for _ in range(draw(st.integers(1, 12))):
        kind = draw(st.sampled_from(["data"] * 8 + ["short", "comment", "blank"]))
        if kind == "comment":
            lines.append(b"#" + draw(plain_token).encode())
            continue
        if kind == "blank":
            lines.append(draw(st.one_of(st.just(""), space_run)).encode())
            continue
        n = need - draw(st.integers(1, need)) if kind == "short" else need + draw(st.integers(0, 2))
        fields = [draw(plain_token) for _ in range(n)]
        if is_run and n > 4:
            fields[4] = draw(st.sampled_from(["1", "2.5", "-3e2", ".25", "7"]))
        if not is_run and n > 3:
            fields[3] = str(draw(st.integers(-5, 5)))
        if n > 0 and fields[0].startswith("#"):
            fields[0] = "q" + fields[0]
        text = draw(st.sampled_from(["", " ", "\t"]) | space_run)
        for f in fields:
            text += f + draw(space_run)
        if draw(st.booleans()):
            text = text.rstrip(" \t\x0b\x0c\r")
        lines.append(text.encode())
    eol = draw(st.sampled_from([b"\n", b"\r\n"]))
    data = eol.join(lines) + draw(st.sampled_from([b"", eol, eol + b"#" + b"=" * 100]))
    return data


def first_short_line(data: bytes, is_run: bool) -> int:
    need = 6 if is_run else 4
    for number, line in enumerate(data.split(b"\n"), start=1):
        if line.startswith(b"#"):
            continue
        fields = line.split()
        if 0 < len(fields) < need:
            return number
    return 0


@given(st.booleans().flatmap(lambda r: st.tuples(st.just(r), split_files(r))),
       st.sampled_from([None, 1, 50]), st.sampled_from([1, 2]))
@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_random_whitespace_and_field_counts(case, chunk, workers):
    is_run, data = case
    bad = first_short_line(data, is_run)
    if bad:
        for intern_docs in (True, False):
            e = error(data, is_run, chunk, workers, intern_docs)
            assert e.line == bad and "whitespace-separated fields" in e.message
    else:
        check_both(data, is_run, chunk, workers)


def test_fields_at_the_edges_of_the_64_byte_window():
    # a line whose sixth field ends at byte 62..66 from its start, with and without a newline
    # in the window, and whose newline comes late after trailing spaces
    lines = []
    for width in range(50, 80):
        docno = b"d" * (width - len(b"q Q0  1 1 r"))
        lines.append(b"q Q0 " + docno + b" 1 1 r")
        lines.append(b"q Q0 " + docno + b" 1 1 r" + b" " * 70)
        lines.append(b"q\tQ0\t" + docno + b"\t1\t1\trun extra fields here " + b"x" * width)
    data = b"\n".join(lines)
    for tail in (b"", b"\n", b"\n#" + b" " * 100):
        for chunk in (None, 64, 100):
            check_both(data + tail, True, chunk)
            check_both(data + tail, True, chunk, stream=True)


# line numbers kept where they jump (qafast._lines), not as a column


@given(st.lists(st.integers(0, 3), max_size=40))
def test_line_numbers_are_the_column_they_stand_for(gaps):
    from qafast._lines import LineNumbers

    # each row's line is the previous one's + 1 + a gap (skipped comment or blank lines)
    column, line = [], 0
    for gap in gaps:
        line += 1 + gap
        column.append(line)
    jumps = [r for r in range(len(column)) if r == 0 or column[r] != column[r - 1] + 1]
    lines = LineNumbers(np.array(jumps, dtype=np.int64),
                        np.array([column[r] for r in jumps], dtype=np.int64), len(column))
    assert np.asarray(lines).tolist() == lines.tolist() == column
    assert np.asarray(lines).dtype == np.int64 and len(lines) == len(column)
    assert [lines[r] for r in range(len(column))] == column
    assert [lines[np.int32(r)] for r in range(len(column))] == column
    if column:
        assert lines[-1] == column[-1]
        assert lines[1:].tolist() == column[1:]
    for outside in (len(column), -len(column) - 1):
        with pytest.raises(IndexError):
            lines[outside]
    assert pickle.loads(pickle.dumps(lines)).tolist() == column


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.sampled_from(["data", "data", "data", "comment", "blank"]), max_size=80),
       st.lists(st.integers(1, 25), min_size=1, max_size=12))
def test_a_streamed_run_numbers_its_lines_across_batches_and_drops(kinds, block_lines):
    # the parser hands out the rows of complete queries and forgets them (drop_rows): the
    # line numbers of the rows it keeps are renumbered from the jumps, not from a column
    text, want, row = [], [], 0
    for number, kind in enumerate(kinds, 1):
        if kind == "data":
            text.append(f"q{row // 3} Q0 d{row} 1 {100 - row} r")
            want.append(number)
            row += 1
        else:
            text.append("# a comment" if kind == "comment" else "")
    lines = [(t + "\n").encode() for t in text]
    blocks, k = [], 0
    while k < len(lines):
        size = block_lines[len(blocks) % len(block_lines)]
        blocks.append(b"".join(lines[k:k + size]))
        k += size
    parser = _kernels._trec_Parser(True, False)
    got, first = [], 0
    for i, block in enumerate(blocks + [None]):
        if block is not None:
            batch = parser.scan_intern(block)
            assert not batch.error_line
            batch.release()
        n, arrays = parser.complete_rows(block is None, first)
        if n:
            got += arrays[4].tolist()
            assert [arrays[4][r] for r in range(n)] == arrays[4].tolist()
            first = int(arrays[0][n - 1]) + 1
            parser.drop_rows(n)
    assert got == want


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.integers(0, 4), min_size=1, max_size=40),
       st.lists(st.integers(1, 9), min_size=1, max_size=6), st.booleans(),
       st.lists(st.floats(0, 1), min_size=1, max_size=5))
def test_a_streamed_run_is_grouped_exactly_when_each_querys_lines_are_together(
        queries, block_lines, restarted, keep):
    # a query's lines in two places, within a block or across blocks and dropped batches:
    # complete_rows() says so (None) whichever rows it still holds; a restarted parser
    # forgets what an earlier text was. Each query's first row comes with the rows, also
    # after the caller drops fewer rows than it was handed (a cut within a query)
    lines = [f"q{q} Q0 d{i} 1 {-i} r\n".encode() for i, q in enumerate(queries)]
    starts = [q for q, _ in itertools.groupby(queries)]
    grouped = len(starts) == len(set(starts))
    parser = _kernels._trec_Parser(True, False)
    if restarted:
        parser.scan_intern(b"a Q0 d 1 1 r\nb Q0 d 1 1 r\na Q0 e 1 1 r\n").release()
        assert parser.complete_rows(True, 0) is None
        parser.restart()
    first, k, said_scattered, dropped = 0, 0, False, 0
    for i, size in enumerate(itertools.cycle(block_lines)):
        batch = parser.scan_intern(b"".join(lines[k:k + size]))
        assert not batch.error_line
        batch.release()
        k += size
        got = parser.complete_rows(k >= len(lines), first)
        if got is None:
            said_scattered = True
            break
        n, arrays = got
        if n:
            qidx = arrays[0].tolist()
            assert qidx == [starts.index(q) for q in queries[dropped:dropped + n]]
            want = [0] + [r for r in range(1, n) if qidx[r] != qidx[r - 1]] + [n]
            assert arrays[7].tolist() == want
            cut = max(1, round(n * keep[i % len(keep)]))
            first = qidx[cut] if cut < n else qidx[-1] + 1
            parser.drop_rows(cut)
            dropped += cut
        if k >= len(lines):
            break
    assert said_scattered is not grouped
