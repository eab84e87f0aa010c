"""Arrow tables and Parquet files as qrels and runs: the same numbers as the dict input,
dictionary-encoded ids, a run read a row group at a time, and bad input named."""

import json
import subprocess
import sys
import threading

import numpy as np
import pytest

import qafast
from qafast import _engine

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

MEASURES = ["map", "ndcg@10", "P@5", "recall@100", "mrr@10", "bpref", "num_rel_ret",
            "gm_map", "Rprec", "infAP"]


def make_data(n_queries=30, docs=40, seed=0, grouped=True):
    """Qrels and run rows with tied scores; the run in query order when ``grouped``."""
    rng = np.random.default_rng(seed)
    qq, qd, qg, rq, rd, rs = [], [], [], [], [], []
    for q in range(n_queries):
        qid = f"q{q:03d}"
        judged = rng.choice(docs * 2, size=rng.integers(1, 15), replace=False)
        for d in judged:
            qq.append(qid)
            qd.append(f"d{d}")
            qg.append(int(rng.integers(-1, 4)))
        retrieved = rng.choice(docs * 2, size=rng.integers(1, docs), replace=False)
        for d in retrieved:
            rq.append(qid)
            rd.append(f"d{d}")
            rs.append(float(rng.integers(0, 8)) / 4)   # many ties
    qrels = pa.table({"query_id": qq, "doc_id": qd, "relevance": pa.array(qg, pa.int32())})
    run = pa.table({"query_id": rq, "doc_id": rd, "score": rs})
    if not grouped:
        run = run.take(rng.permutation(run.num_rows))
    return qrels, run


def as_dict(table, value):
    out = {}
    for q, d, v in zip(*(table.column(c).to_pylist() for c in ("query_id", "doc_id", value))):
        out.setdefault(q, {})[d] = v
    return out


@pytest.fixture(scope="module")
def data():
    qrels, run = make_data()
    expected = qafast.evaluate(as_dict(qrels, "relevance"), as_dict(run, "score"), MEASURES,
                               per_query=True)
    mean = qafast.evaluate(as_dict(qrels, "relevance"), as_dict(run, "score"), MEASURES)
    return qrels, run, expected, mean


@pytest.mark.parametrize("workers", [1, 2])  # 2: a thread reads the batches ahead
def test_table_reader_and_parquet_give_the_dict_numbers(data, tmp_path, workers):
    qrels, run, expected, mean = data
    pq.write_table(run, tmp_path / "run.parquet", row_group_size=100)
    pq.write_table(qrels, tmp_path / "qrels.parquet")
    (tmp_path / "ds").mkdir()
    for i, lo in enumerate(range(0, run.num_rows, 250)):
        pq.write_table(run.slice(lo, 250), tmp_path / "ds" / f"part-{i:03d}.parquet")
    sources = [run, run.to_batches()[0] if run.num_rows else run,
               pa.RecordBatchReader.from_batches(run.schema, run.to_batches(max_chunksize=77)),
               str(tmp_path / "run.parquet"), tmp_path / "run.parquet", str(tmp_path / "ds"),
               qafast.Run(run), qafast.Run.from_arrow(tmp_path / "run.parquet")]
    for src in sources:
        got = qafast.evaluate(str(tmp_path / "qrels.parquet"), src, MEASURES, per_query=True,
                              workers=workers)
        assert got == expected, type(src)
    assert qafast.evaluate(qrels, str(tmp_path / "run.parquet"), MEASURES,
                           workers=workers) == mean
    assert qafast.evaluate(qafast.Qrels(qrels), run, MEASURES) == mean
    assert qafast.evaluate(qafast.Qrels.from_df(qrels), qafast.Run.from_df(run),
                           MEASURES) == mean


@pytest.mark.parametrize("workers", [1, 2])
def test_ungrouped_runs_are_read_whole_and_give_the_same_numbers(data, tmp_path, workers):
    qrels, _, _, mean = data
    _, run = make_data(grouped=False)
    pq.write_table(run, tmp_path / "run.parquet", row_group_size=64)
    assert qafast.evaluate(qrels, str(tmp_path / "run.parquet"), MEASURES,
                           workers=workers) == mean
    # read once: the batches read ahead are kept with the others
    reader = pa.RecordBatchReader.from_batches(run.schema, run.to_batches(max_chunksize=50))
    assert qafast.evaluate(qrels, reader, MEASURES, workers=workers) == mean
    assert qafast.evaluate(qrels, run, MEASURES) == mean


def test_every_qrels_query_and_compare(data, tmp_path):
    qrels, run, _, _ = data
    pq.write_table(run, tmp_path / "run.parquet")
    dq, dr = as_dict(qrels, "relevance"), as_dict(run, "score")
    part = run.filter(pa.compute.not_equal(run["query_id"], "q001"))
    assert (qafast.evaluate(qrels, part, MEASURES, queries="qrels")
            == qafast.evaluate(dq, as_dict(part, "score"), MEASURES, queries="qrels"))
    c = qafast.compare(qrels, {"a": run, "b": str(tmp_path / "run.parquet"), "c": dr},
                       ["map", "P@5"])
    assert c.means.tolist()[0] == c.means.tolist()[1] == c.means.tolist()[2]


def dict_encoded(table, columns, chunks=3):
    """``table`` with ``columns`` dictionary-encoded, in ``chunks`` record batches whose
    dictionaries differ (and hold unused and repeated values)."""
    out = []
    size = -(-table.num_rows // chunks)
    for lo in range(0, table.num_rows, size):
        part = table.slice(lo, size)
        arrays = []
        for name in table.column_names:
            col = part.column(name).combine_chunks()
            if name in columns:
                values = col.to_pylist()
                # an unused value first, then a repeated one: neither may change a number
                dictionary = ["unused", values[0]] + sorted(set(values))
                index = {v: i + 2 for i, v in enumerate(sorted(set(values)))}
                indices = [index[v] for v in values]
                indices[0] = 1
                col = pa.DictionaryArray.from_arrays(pa.array(indices, pa.int32()),
                                                     pa.array(dictionary))
            arrays.append(col)
        out.append(pa.RecordBatch.from_arrays(arrays, names=table.column_names))
    return pa.Table.from_batches(out)


def test_dictionary_encoded_ids_are_used_through_their_indices(data, tmp_path):
    qrels, run, expected, mean = data
    drun = dict_encoded(run, ["query_id", "doc_id"])
    dqrels = dict_encoded(qrels, ["query_id", "doc_id"], chunks=2)
    assert pa.types.is_dictionary(drun.schema.field("doc_id").type)
    assert qafast.evaluate(dqrels, drun, MEASURES, per_query=True) == expected
    # the document table is the dictionaries' entries, not one entry per row
    r = qafast.Run(drun)
    dictionary_sizes = sum(len(c.dictionary) for c in drun.column("doc_id").chunks)
    assert len(r.key_off) - 1 <= dictionary_sizes < drun.num_rows
    # pandas categoricals and Parquet dictionary pages arrive the same way
    pq.write_table(run, tmp_path / "run.parquet", row_group_size=100)
    table = pq.read_table(tmp_path / "run.parquet", read_dictionary=["query_id", "doc_id"])
    assert pa.types.is_dictionary(table.schema.field("doc_id").type)
    assert qafast.evaluate(qrels, table, MEASURES) == mean
    frame = run.to_pandas()
    frame["doc_id"] = frame["doc_id"].astype("category")
    assert qafast.evaluate(qrels, pa.Table.from_pandas(frame), MEASURES) == mean


def test_integer_ids_and_renamed_columns(tmp_path):
    big = 2**63 + 5
    run = pa.table({"qid": pa.array([1, 1, 2], pa.int64()),
                    "docno": pa.array([big, 7, 3], pa.uint64()),
                    "logit": [0.5, 0.5, 1.0]})
    qrels = pa.table({"qid": [1, 2], "docno": pa.array([big, 3], pa.uint64()),
                      "grade": [1, 1]})
    q = qafast.Qrels.from_arrow(qrels, query_col="qid", doc_col="docno", relevance_col="grade")
    r = qafast.Run.from_arrow(run, query_col="qid", doc_col="docno", score_col="logit")
    assert qafast.evaluate(q, r, ["map", "P@1"], per_query=True) == qafast.evaluate(
        qafast.Qrels.from_arrays([1, 2], np.array([big, 3], dtype=np.uint64), [1, 1]),
        qafast.Run.from_arrays([1, 1, 2], np.array(
            [big, 7, 3], dtype=np.uint64), [0.5, 0.5, 1.0]), ["map", "P@1"], per_query=True)
    pq.write_table(run, tmp_path / "r.parquet")
    assert qafast.Run.from_arrow(tmp_path / "r.parquet", query_col="qid", doc_col="docno",
                                 score_col="logit").to_dict() == {1: {big: 0.5, 7: 0.5},
                                                                  2: {3: 1.0}}


@pytest.mark.parametrize("workers", [1, 2])
def test_a_parquet_run_is_read_a_row_group_at_a_time(tmp_path, monkeypatch, workers):
    qrels, run = make_data(n_queries=400, docs=60, seed=3)
    path = tmp_path / "run.parquet"
    row_groups = 40
    pq.write_table(run, path, row_group_size=-(-run.num_rows // row_groups))
    assert pq.ParquetFile(path).num_row_groups == row_groups
    expected = qafast.evaluate(qrels, run, MEASURES)
    read = []
    real_iter = pq.ParquetFile.iter_batches

    def counting(self, *args, **kwargs):
        read.append(kwargs.get("row_groups"))
        return real_iter(self, *args, **kwargs)

    seen = []   # (row groups read so far, bytes Arrow holds) at each batch of queries measured
    real_add = _engine.Chunked.add

    def add(self, chunk, first):
        seen.append((len(read), pa.total_allocated_bytes()))
        return real_add(self, chunk, first)

    monkeypatch.setattr(pq.ParquetFile, "iter_batches", counting)
    monkeypatch.setattr(_engine.Chunked, "add", add)
    del run
    base = pa.total_allocated_bytes()
    threads = threading.active_count()
    assert qafast.evaluate(qrels, str(path), MEASURES, workers=workers) == expected
    assert threading.active_count() == threads  # a reading thread is joined
    assert len(read) == row_groups and all(len(g) == 1 for g in read)
    # queries are measured as the row groups arrive, never after reading all of them; a
    # reading thread is a few batches ahead at most
    assert len(seen) >= row_groups - 1
    assert [n for n, _ in seen] == sorted(n for n, _ in seen)
    assert seen[0][0] <= (2 if workers == 1 else 5)
    whole = pq.read_table(path).nbytes
    assert max(b for _, b in seen) - base < whole / 4


def test_a_pyarrow_table_is_no_longer_refused_and_errors_never_print_data(data):
    secret = "SECRET-DOCUMENT-TEXT"
    table = pa.table({"qid": ["q1"], "doc": [secret], "s": [1.0]})
    for call in (lambda: qafast.Run.from_df(table), lambda: qafast.Run(table),
                 lambda: qafast.evaluate({"q1": {"d": 1}}, table, ["map"])):
        with pytest.raises(ValueError, match="no column 'query_id'") as e:
            call()
        assert secret not in str(e.value) and "'qid'" in str(e.value)
    # an unknown object with column objects: labels only in the message
    pd = pytest.importorskip("pandas")
    with pytest.raises(ValueError) as e:
        qafast.Run.from_df(pd.DataFrame({"x": [secret]}))
    assert secret not in str(e.value)


@pytest.mark.parametrize("bad, error, words", [
    ({"score": pa.array(["0.5", "0.1"])}, TypeError, ["'score'", "string"]),
    ({"doc_id": pa.array([0.5, 1.5])}, TypeError, ["'doc_id'", "double"]),
    ({"query_id": pa.array([None, "q1"], pa.string())}, ValueError, ["'query_id'", "null",
                                                                     "row 0"]),
    ({"doc_id": pa.array(["d1", None])}, ValueError, ["'doc_id'", "null", "row 1"]),
    ({"score": pa.array([0.1, None])}, ValueError, ["'score'", "null", "row 1"]),
    ({"score": pa.array([0.1, float("nan")])}, ValueError, ["'score'", "NaN", "row 1"]),
    ({"doc_id": pa.array(["d1", "d1"])}, ValueError, ["'q1'", "'d1'", "twice"]),
    ({"doc_id": pa.DictionaryArray.from_arrays(pa.array([0, 1], pa.int8()),
                                               pa.array(["d1", None]))},
     ValueError, ["'doc_id'", "null", "row 1"]),
])
def test_bad_run_columns_are_named(bad, error, words, tmp_path):
    columns = {"query_id": pa.array(["q1", "q1"]), "doc_id": pa.array(["d1", "d2"]),
               "score": pa.array([0.5, 0.25])}
    columns.update(bad)
    table = pa.table(columns)
    path = tmp_path / "bad.parquet"
    sources = [table]
    try:
        pq.write_table(table, path)
        sources.append(str(path))
    except pa.ArrowNotImplementedError:  # Parquet cannot hold a null dictionary entry
        pass
    for source in sources:
        with pytest.raises(error) as e:
            qafast.evaluate({"q1": {"d1": 1}}, source, ["map"])
        for w in words:
            assert w in str(e.value), (w, str(e.value))


def test_bad_qrels_columns_are_named(tmp_path):
    path = tmp_path / "qrels.parquet"
    pq.write_table(pa.table({"query_id": ["q1"], "doc_id": ["d1"], "relevance": [0.5]}), path)
    with pytest.raises(ValueError, match=r"'relevance', row 0 \(query 'q1'\): grade 0.5 is "
                                         "not an integer"):
        qafast.evaluate(str(path), {"q1": {"d1": 1.0}}, ["map"])
    pq.write_table(pa.table({"query_id": ["q1"], "doc": ["d1"], "relevance": [1]}), path)
    with pytest.raises(ValueError, match=r"qrels Parquet file .*no column 'doc_id' \(columns: "
                                         r"'query_id', 'doc', 'relevance'\)"):
        qafast.Qrels.from_arrow(path)
    pq.write_table(pa.table({"query_id": ["q1"], "doc_id": ["d1"], "relevance": ["1"]}), path)
    with pytest.raises(TypeError, match="'relevance'.*string.*integers"):
        qafast.Qrels(str(path))
    (tmp_path / "notparquet.parquet").write_bytes(b"q1 0 d1 1\n")
    with pytest.raises(ValueError, match="not a readable Parquet file"):
        qafast.Qrels.from_arrow(tmp_path / "notparquet.parquet")


@pytest.mark.parametrize("workers", [1, 2])
def test_a_damaged_row_group_is_an_error_whoever_reads_it(tmp_path, workers):
    n = 20000
    run = pa.table({"query_id": [f"q{i // 100}" for i in range(n)],
                    "doc_id": [f"d{i}" for i in range(n)], "score": np.arange(n, dtype=float)})
    path = tmp_path / "run.parquet"
    pq.write_table(run, path, row_group_size=2000)
    start = pq.ParquetFile(path).metadata.row_group(6).column(1).data_page_offset
    data = bytearray(path.read_bytes())
    data[start + 40:start + 400] = b"\xab" * 360
    path.write_bytes(bytes(data))
    threads = threading.active_count()
    # pyarrow's message names neither the file, the row group nor the column
    with pytest.raises(qafast.io.ArrowFormatError,
                       match=r"run\.parquet', row group 6, column 'doc_id': (?s:.*)page header") as e:
        qafast.evaluate({"q1": {"d101": 1}}, str(path), ["map"], workers=workers)
    assert (e.value.path, e.value.row_group, e.value.column) == (str(path), 6, "doc_id")
    assert threading.active_count() == threads


def test_a_parquet_run_is_read_without_pandas(data, tmp_path):
    # pyarrow's numpy conversion imports pandas where it is installed; qafast reads numbers
    # from the Arrow buffers, so a Parquet run costs no pandas import (0.2 s, 50 MB)
    qrels, run, _, mean = data
    pq.write_table(run, tmp_path / "run.parquet", row_group_size=100)
    pq.write_table(qrels, tmp_path / "qrels.parquet")
    dict_run = tmp_path / "dict.parquet"
    pq.write_table(dict_encoded(run, ["query_id", "doc_id"]), dict_run)
    script = (
        "import json, sys, qafast\n"
        "got = [qafast.evaluate(sys.argv[1], p, ['map', 'P@5'], workers=w)\n"
        "       for p in sys.argv[2:] for w in (1, 2)]\n"
        "print(json.dumps([got, 'pandas' in sys.modules]))\n")
    out = subprocess.run([sys.executable, "-c", script, str(tmp_path / "qrels.parquet"),
                          str(tmp_path / "run.parquet"), str(dict_run)],
                         capture_output=True, text=True, check=True).stdout
    got, pandas_loaded = json.loads(out)
    want = {k: mean[k] for k in ("map", "P@5")}
    assert got == [want] * 4
    assert not pandas_loaded
