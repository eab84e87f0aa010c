"""Arrow columns that point outside their own data: dictionary indices outside their
dictionary, string offsets outside their data buffer, bytes that are not UTF-8.

Arrow does not promise any of these: ``DictionaryArray.from_arrays(..., safe=False)`` and
``Array.from_buffers`` check little, IPC streams and Feather files are read without a full
validation, and a damaged Parquet file can carry dictionary indices that pyarrow hands over.
Each is refused, naming the source, the column and the row, before anything (a kernel or
pyarrow's own functions) reads where it points. A bad dictionary index used to be a heap
read past an array and a silently wrong number.
"""

import numpy as np
import pytest

import qafast
from qafast import _ranked

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
feather = pytest.importorskip("pyarrow.feather")

QRELS = qafast.Qrels.from_file(b"q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 1\n")
MEASURES = ["map", "P.2"]
WIDTHS = [pa.int8(), pa.int16(), pa.int32(), pa.int64(),
          pa.uint8(), pa.uint16(), pa.uint32(), pa.uint64()]


def dictionary(indices, values, index_type=None):
    return pa.DictionaryArray.from_arrays(pa.array(indices, index_type or pa.int32()),
                                          pa.array(values), safe=False)


def run_table(docs, queries=None, scores=None):
    return pa.table([queries if queries is not None else pa.array(["q1", "q1", "q2"]),
                     docs,
                     scores if scores is not None else pa.array([1.0, 0.5, 0.3])],
                    names=["query_id", "doc_id", "score"])


def test_a_valid_dictionary_gives_the_plain_columns_numbers():
    plain = qafast.evaluate(QRELS, run_table(pa.array(["d1", "d2", "d3"])), MEASURES)
    encoded = qafast.evaluate(QRELS, run_table(dictionary([0, 1, 2], ["d1", "d2", "d3"])),
                              MEASURES)
    assert encoded == plain == {"map": 1.0, "P_2": 0.5}


@pytest.mark.parametrize("width", WIDTHS, ids=str)
@pytest.mark.parametrize("column", ["query_id", "doc_id", "score"])
def test_an_index_outside_the_dictionary_is_refused_at_every_width(width, column):
    bad = 3 if pa.types.is_unsigned_integer(width) else -1
    for index in sorted({bad, 3, 62, int(np.iinfo(width.to_pandas_dtype()).max)}):
        if column == "query_id":
            table = run_table(pa.array(["d1", "d2", "d3"]),
                              queries=dictionary([0, 0, index], ["q1", "q2", "q3"], width))
        elif column == "doc_id":
            table = run_table(dictionary([0, 1, index], ["d1", "d2", "d3"], width))
        else:
            table = run_table(pa.array(["d1", "d2", "d3"]),
                              scores=dictionary([0, 1, index], [1.0, 0.5, 0.3], width))
        with pytest.raises(qafast.InputError) as e:
            qafast.evaluate(QRELS, table, MEASURES)
        assert str(e.value) == (f"run Arrow table: column {column!r}, row 2: dictionary index "
                                f"{index} is outside the column's dictionary of 3 entries")
        assert e.value.field == column


def test_qrels_dictionary_indices_are_checked_too():
    qrels = pa.table({"query_id": ["q1", "q1"],
                      "doc_id": dictionary([1, 7], ["d1", "d2"], pa.int16()),
                      "relevance": pa.array([1, 0], pa.int32())})
    with pytest.raises(qafast.InputError, match=r"^qrels Arrow table: column 'doc_id', row 1: "
                                                r"dictionary index 7 is outside"):
        qafast.Qrels.from_arrow(qrels)


def test_the_row_counts_every_chunk_before_the_bad_one():
    good = dictionary([0, 1], ["d1", "d2"])
    bad = dictionary([1, 0, 9], ["d3", "d1"])  # another dictionary: 9 is outside it
    table = pa.table({"query_id": ["q1", "q1", "q2", "q2", "q2"],
                      "doc_id": pa.chunked_array([good, bad]),
                      "score": [1.0, 0.5, 0.3, 0.2, 0.1]})
    with pytest.raises(qafast.InputError, match=r"column 'doc_id', row 4: dictionary index 9 is "
                                                r"outside the column's dictionary of 2 entries"):
        qafast.evaluate(QRELS, table, MEASURES)


def test_chunks_with_their_own_dictionaries_are_unified_when_valid():
    chunks = pa.chunked_array([dictionary([0, 1], ["d1", "d2"]), dictionary([0], ["d3"])])
    table = pa.table({"query_id": ["q1", "q1", "q2"], "doc_id": chunks,
                      "score": [1.0, 0.5, 0.3]})
    assert qafast.evaluate(QRELS, table, MEASURES) == {"map": 1.0, "P_2": 0.5}


def test_a_sliced_column_is_checked_from_its_offset():
    docs = dictionary([5, 0, 1, 2], ["d1", "d2", "d3"])  # the 5 lies before the slice
    table = run_table(docs.slice(1))
    assert qafast.evaluate(QRELS, table, MEASURES) == {"map": 1.0, "P_2": 0.5}


def test_a_null_beside_a_bad_index_is_named_first():
    docs = pa.DictionaryArray.from_arrays(pa.array([None, 1, 40], pa.int32()),
                                          pa.array(["d1", "d2", "d3"]), safe=False)
    with pytest.raises(qafast.InputError, match="column 'doc_id' is null at row 0"):
        qafast.evaluate(QRELS, run_table(docs), MEASURES)


def test_an_empty_dictionary_refuses_every_index():
    docs = dictionary([0, 0, 0], pa.array([], pa.string()))
    with pytest.raises(qafast.InputError, match="row 0: dictionary index 0 is outside the "
                                                "column's dictionary of 0 entries"):
        qafast.evaluate(QRELS, run_table(docs), MEASURES)


@pytest.mark.parametrize("workers", [1, 2])
def test_a_bad_index_in_a_later_batch_of_a_reader_names_its_row(workers):
    def batch(indices):
        return pa.record_batch([dictionary(indices, ["q1", "q2"], pa.int8()),
                                dictionary([0, 1, 2], ["d1", "d2", "d3"]),
                                pa.array([1.0, 0.5, 0.3])], names=["query_id", "doc_id", "score"])

    first, second = batch([0, 0, 1]), batch([1, 1, -3])
    reader = pa.RecordBatchReader.from_batches(first.schema, [first, second])
    with pytest.raises(qafast.InputError, match=r"^run Arrow RecordBatchReader: column "
                                                r"'query_id', row 5: dictionary index -3"):
        qafast.evaluate(QRELS, reader, MEASURES, workers=workers)


def _write_ipc(table, path):
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table)


def test_ipc_streams_and_feather_files_carry_bad_indices_and_are_refused(tmp_path):
    table = run_table(dictionary([0, 1, -1], ["d1", "d2", "d3"]))
    _write_ipc(table, tmp_path / "run.arrows")
    feather.write_feather(table, str(tmp_path / "run.feather"), compression="uncompressed")
    read_back = [pa.ipc.open_stream(str(tmp_path / "run.arrows")).read_all(),
                 feather.read_table(str(tmp_path / "run.feather"))]
    for t in read_back:
        assert t.column("doc_id").chunk(0).indices.to_pylist() == [0, 1, -1]
        with pytest.raises(qafast.InputError, match="column 'doc_id', row 2: dictionary index "
                                                    "-1 is outside"):
            qafast.evaluate(QRELS, t, MEASURES)
        with pytest.raises(qafast.InputError, match="dictionary index -1"):
            qafast.Run.from_arrow(t)


def _parquet_with_index_three(path, column):
    """A Parquet file of three rows whose dictionary-encoded ``column`` has index 3 in row 2,
    outside its dictionary of three: the file is written with the indices 0, 1, 2 (bit width
    2, a bit-packed run header 0x03, the packed byte 0b10_01_00 = 0x24) and that byte set to
    0b11_01_00 = 0x34."""
    table = pa.table({"query_id": ["q1", "q2", "q3"], "doc_id": ["d1", "d2", "d3"],
                      "score": [1.0, 0.5, 0.3]})
    pq.write_table(table, str(path), compression="none")
    data = bytearray(path.read_bytes())
    chunk = pq.ParquetFile(str(path)).metadata.row_group(0).column(
        table.column_names.index(column))
    at = data.find(bytes([2, 0x03, 0x24]), chunk.data_page_offset)
    assert 0 < at < chunk.data_page_offset + chunk.total_compressed_size
    data[at + 2] = 0x34
    path.write_bytes(bytes(data))


def test_a_parquet_query_index_outside_its_dictionary_is_refused_by_name(tmp_path):
    # qafast reads a Parquet file's string query ids as the file's dictionary and indices,
    # which pyarrow hands over unchecked
    path = tmp_path / "run.parquet"
    _parquet_with_index_three(path, "query_id")
    message = (f"run Parquet file {str(path)!r}: column 'query_id', row 2: dictionary index 3 "
               "is outside the column's dictionary of 3 entries")
    with pytest.raises(qafast.InputError) as e:
        qafast.evaluate(QRELS, str(path), MEASURES)
    assert str(e.value) == message
    with pytest.raises(qafast.InputError, match="dictionary index 3 is outside"):
        qafast.Run.from_arrow(path)
    # pyarrow's own reading with the same option, handed over as a table
    table = pq.read_table(str(path), read_dictionary=["query_id"])
    with pytest.raises(qafast.InputError, match="query_id', row 2: dictionary index 3"):
        qafast.evaluate(QRELS, table, MEASURES)


def test_a_parquet_document_index_outside_its_dictionary_names_the_column(tmp_path):
    # decoded to strings by pyarrow, which refuses the index itself: a qafast error that
    # says where
    path = tmp_path / "run.parquet"
    _parquet_with_index_three(path, "doc_id")
    with pytest.raises(qafast.io.ArrowFormatError,
                       match=r"^run Parquet file '.*run\.parquet', row group 0, column "
                             "'doc_id': .*dictionary") as e:
        qafast.evaluate(QRELS, str(path), MEASURES)
    assert (e.value.path, e.value.row_group, e.value.column) == (str(path), 0, "doc_id")
    assert isinstance(e.value, qafast.FormatError)


def test_the_engine_refuses_keys_outside_their_table_whatever_source_gives_them():
    # the last gate before the kernels: a source that let a bad key through fails here
    hashes = np.array([11, 22], dtype=np.int64)
    vocab = (hashes, hashes.copy(), np.array([0, 2, 4], dtype=np.int64),
             np.frombuffer(b"d1d2", dtype=np.uint8))
    for keys, qidx in ((np.array([0, 2]), np.array([0, 0])),
                       (np.array([-1, 0]), np.array([0, 0])),
                       (np.array([0, 1]), np.array([0, 1]))):
        with pytest.raises(qafast.InputError, match="is outside 0.."):
            _ranked.grouped(qafast.Run, ["q1"], qidx, keys, np.array([1.0, 2.0]), vocab,
                             "test source", None, False)


def strings(offsets, data: bytes, type_=None):
    """A string (or binary) array made from raw buffers: pyarrow checks only the buffers'
    sizes, not the offsets between the first and the last, nor the UTF-8."""
    type_ = type_ or pa.string()
    width = np.int64 if type_ in (pa.large_string(), pa.large_binary()) else np.int32
    return pa.Array.from_buffers(type_, len(offsets) - 1,
                                 [None, pa.py_buffer(np.array(offsets, width).tobytes()),
                                  pa.py_buffer(data)])


def through_ipc(table):
    """``table`` written as an IPC stream and opened again: what reading a file gives."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return pa.ipc.open_stream(sink.getvalue())


BROKEN = {
    "document offsets": (
        {"doc_id": strings([0, 2, 1000, 6], b"d1d2d3")},
        ("column 'doc_id', row 1: not valid Arrow data: the id's offsets 2..1000 are not "
         "within the column's 6 bytes of data")),
    "document UTF-8": (
        {"doc_id": strings([0, 2, 4, 6], b"d1\xff2d3")},
        "column 'doc_id', row 1: the id's bytes are not UTF-8 text"),
    "large string document offsets": (
        {"doc_id": strings([0, 2, 1000, 6], b"d1d2d3", pa.large_string())},
        "column 'doc_id', row 1: not valid Arrow data"),
    "binary document offsets": (
        {"doc_id": strings([0, 2, 1000, 6], b"d1d2d3", pa.binary())},
        "column 'doc_id' \\(document ids\\) is not valid Arrow data: .*1000 > 6"),
    "query offsets": (
        {"query_id": strings([0, 2, 1000, 6], b"q1q1q2")},
        "column 'query_id' \\(query ids\\) is not valid Arrow data: .*1000 > 6"),
    "query UTF-8": (
        {"query_id": strings([0, 2, 4, 6], b"q1\xc0q2q")},
        "column 'query_id' \\(query ids\\) is not valid Arrow data: .*UTF8"),
    "document dictionary offsets": (
        {"doc_id": pa.DictionaryArray.from_arrays(pa.array([0, 1, 2], pa.int32()),
                                                  strings([0, 2, 1000, 6], b"d1d2d3"))},
        "column 'doc_id' \\(its dictionary\\) is not valid Arrow data"),
    "query dictionary offsets": (
        {"query_id": pa.DictionaryArray.from_arrays(pa.array([0, 0, 1], pa.int32()),
                                                    strings([0, 2, 900, 6], b"q1q2q3"))},
        "column 'query_id' \\(its dictionary\\) is not valid Arrow data"),
}


@pytest.mark.parametrize("via", ["table", "IPC stream"])
@pytest.mark.parametrize("case", sorted(BROKEN))
def test_offsets_outside_the_data_and_bytes_that_are_not_utf8_are_refused(case, via):
    columns, message = BROKEN[case]
    base = {"query_id": pa.array(["q1", "q1", "q2"]), "doc_id": pa.array(["d1", "d2", "d3"]),
            "score": pa.array([1.0, 0.5, 0.3])}
    table = pa.table({**base, **columns})
    source = table if via == "table" else through_ipc(table)
    kind = "table" if via == "table" else "RecordBatchStreamReader"
    with pytest.raises(qafast.InputError, match=f"^run Arrow {kind}: {message}"):
        qafast.evaluate(QRELS, source, MEASURES)


def test_an_ipc_reader_is_a_record_batch_reader(tmp_path):
    table = run_table(dictionary([0, 1, 2], ["d1", "d2", "d3"]))
    expected = qafast.evaluate(QRELS, table, MEASURES)
    assert qafast.evaluate(QRELS, through_ipc(table), MEASURES) == expected
    assert qafast.Run.from_arrow(through_ipc(table)).to_dict() == qafast.Run.from_arrow(
        table).to_dict()
    feather.write_feather(table, str(tmp_path / "run.feather"))
    with pa.ipc.open_file(str(tmp_path / "run.feather")) as f:
        assert qafast.evaluate(QRELS, f.read_all(), MEASURES) == expected


def test_a_damaged_ipc_stream_is_a_qafast_error_naming_the_batch():
    table = run_table(pa.array(["d1", "d2", "d3"]))
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
        writer.write_table(table)
    data = sink.getvalue().to_pybytes()
    cut = data[: len(data) - 40]  # the second batch's body cut short
    with pytest.raises(qafast.io.ArrowFormatError,
                       match=r"^run Arrow RecordBatchStreamReader, record batch 1: ") as e:
        qafast.evaluate(QRELS, pa.ipc.open_stream(cut), MEASURES)
    assert e.value.path == "<arrow>"
