"""Qrels and runs written out as DataFrames, Arrow tables and Parquet files read back as the
same data, in the same order, and give the same numbers; a query with no entries has no
row (a table cannot hold it)."""

import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import qafast
from _examples import examples
from qafast import _tables

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")

MEASURES = ["map", "ndcg@10", "P@2", "recall@5", "mrr@10", "bpref", "Rprec", "infAP",
            "num_ret", "success@1"]
SCORES = st.sampled_from([0.0, 0.5, 1.0, -1.0, -0.0, 2.5, 1e300, float("inf")])  # ties
TEXT = st.text(max_size=6)                 # unicode, the empty string and NUL included
BIG = st.integers(2**63, 2**64 - 1)        # uint64 ids, stored biased


def nonempty(d: dict) -> dict:
    return {q: v for q, v in d.items() if v}


def items(d: dict) -> list:
    """The data with its order: queries, and each query's entries."""
    return [(q, list(v.items())) for q, v in d.items()]


@st.composite
def data(draw):
    """(qrels, run): str or int query ids; str document ids given as dicts (so a query can
    be empty) or int ones given as arrays (int64, or uint64 with ids of 2**63 and above)."""
    int_queries = draw(st.booleans())
    qid = st.integers(-2**63, 2**63 - 1) if int_queries else TEXT
    queries = draw(st.lists(qid, max_size=5, unique=True))
    if draw(st.booleans()):
        docs = st.lists(TEXT, max_size=6, unique=True)
        run, qrels = {}, {}
        for q in queries:
            run[q] = {d: draw(SCORES) for d in draw(docs)}
            if draw(st.booleans()):
                qrels[q] = {d: draw(st.integers(-1, 3)) for d in draw(docs)}
        return qafast.Qrels.from_dict(qrels), qafast.Run.from_dict(run)
    big = draw(st.booleans())
    did = BIG | st.integers(0, 9) if big else st.integers(-2**63, 2**63 - 1) | st.integers(0, 9)
    dtype = np.uint64 if big else np.int64

    def rows(value):
        out = []
        for q in queries:
            out += [(q, d, draw(value)) for d in draw(st.lists(did, max_size=6, unique=True))]
        out = draw(st.permutations(out))     # any row order: queries not together
        q, d, v = zip(*out) if out else ((), (), ())
        return list(q), np.array(d, dtype=dtype), list(v)

    qq, qd, qg = rows(st.integers(-1, 3))
    rq, rd, rs = rows(SCORES)
    return qafast.Qrels.from_arrays(qq, qd, np.array(qg, dtype=np.int64)), \
        qafast.Run.from_arrays(rq, rd, np.array(rs, dtype=np.float64))


def numbers(qrels, run, **options):
    """evaluate's numbers, or the class of its error (with no query in common)."""
    try:
        with warnings.catch_warnings():  # no query in common under queries="qrels"
            warnings.simplefilter("ignore")
            return qafast.evaluate(qrels, run, MEASURES, **options)
    except qafast.errors.InputError as e:
        return type(e)


def assert_same(back, original):
    assert items(back.to_dict()) == items(nonempty(original.to_dict()))
    assert type(back) is type(original)


@settings(max_examples=examples(60), deadline=None)
@given(data())
def test_frame_arrow_and_parquet_round_trips_keep_the_data_and_the_numbers(pair):
    qrels, run = pair
    with tempfile.TemporaryDirectory() as tmp:
        qrels_path = qrels.to_parquet(Path(tmp) / "qrels.parquet")
        run_path = run.to_parquet(str(Path(tmp) / "run.parquet"), row_group_size=3)
        assert qrels_path == Path(tmp) / "qrels.parquet"  # returned as given
        copies = [(qafast.Qrels.from_df(qrels.to_frame()), qafast.Run.from_df(run.to_frame())),
                  (qafast.Qrels.from_arrow(qrels.to_arrow()),
                   qafast.Run.from_arrow(run.to_arrow())),
                  (qafast.Qrels.from_arrow(qrels_path), qafast.Run.from_arrow(run_path))]
        # a qrels query with no judgment counts (all zeros) where it is evaluated; a table
        # has no row for it, so the numbers to keep are those of the qrels without it (only
        # dicts hold such a query, and their document ids are str)
        judged = qrels
        if not all(qrels.to_dict().values()):
            judged = qafast.Qrels.from_dict(nonempty(qrels.to_dict()))
        expected = numbers(judged, run, per_query=True)
        expected_c = numbers(judged, run, queries="qrels")
        for q2, r2 in copies:
            assert_same(q2, qrels)
            assert_same(r2, run)
            assert numbers(q2, r2, per_query=True) == expected
            assert numbers(q2, r2, queries="qrels") == expected_c
        # evaluate reads the Parquet files itself (the run a row group at a time)
        assert numbers(qrels_path, run_path, per_query=True) == expected


def test_columns_are_named_and_typed_as_the_readers_default_to():
    qrels = qafast.Qrels({"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}})
    run = qafast.Run({"q1": {"d2": 0.5, "d1": 0.5}, "q2": {"d3": 1.0}, "q3": {}})
    frame = run.to_frame()
    assert list(frame.columns) == ["query_id", "doc_id", "score"]
    assert frame["score"].dtype == np.float64
    assert frame.values.tolist() == [["q1", "d2", 0.5], ["q1", "d1", 0.5], ["q2", "d3", 1.0]]
    assert list(qrels.to_frame().columns) == ["query_id", "doc_id", "relevance"]
    assert qrels.to_frame()["relevance"].dtype == np.int32
    assert run.to_arrow().schema == pa.schema([("query_id", pa.string()),
                                               ("doc_id", pa.string()),
                                               ("score", pa.float64())])
    assert qrels.to_arrow().schema.field("relevance").type == pa.int32()
    # the frames are copies: editing one leaves the run as it was
    frame.loc[0, "score"] = 9.0
    assert run.to_dict()["q1"]["d2"] == 0.5


def test_integer_ids_keep_their_width():
    run = qafast.Run.from_arrays(np.array([7, 7, 2**63 + 5], dtype=np.uint64),
                                 np.array([2**64 - 1, 3, 0], dtype=np.uint64), [1.0, 2.0, 3.0])
    table = run.to_arrow()
    assert table.schema.field("query_id").type == pa.uint64()
    assert table.schema.field("doc_id").type == pa.uint64()
    assert table.column("doc_id").to_pylist() == [2**64 - 1, 3, 0]
    assert run.to_frame()["doc_id"].tolist() == [2**64 - 1, 3, 0]
    assert qafast.Run.from_arrow(table).to_dict() == run.to_dict()
    small = qafast.Run.from_arrays([-1, 4], np.array([-5, 6]), [1.0, 2.0]).to_arrow()
    assert small.schema.field("query_id").type == pa.int64()
    assert small.schema.field("doc_id").type == pa.int64()


def test_files_with_ungrouped_queries_and_run_ids(tmp_path):
    (tmp_path / "run.txt").write_text("q2 Q0 b 1 2.0 sys\nq1 Q0 é 1 1.0 sys\n"
                                      "q2 Q0 a\x00 2 2.0 sys\n")
    (tmp_path / "qrels.txt").write_text("q2 0 a\x00 1\nq1 0 x 2\nq2 0 b 0\n")
    run = qafast.Run.from_file(tmp_path / "run.txt")
    qrels = qafast.Qrels.from_file(tmp_path / "qrels.txt")
    assert run.to_frame().values.tolist() == [["q2", "b", 2.0], ["q2", "a\x00", 2.0],
                                              ["q1", "é", 1.0]]
    for q2, r2 in [(qafast.Qrels.from_df(qrels.to_frame()), qafast.Run.from_df(run.to_frame())),
                   (qafast.Qrels(qrels.to_arrow()), qafast.Run(run.to_arrow()))]:
        # a file's judgments stay in file order; read back, each query's are sorted (the
        # order of judgments never matters), and the queries keep theirs
        assert list(q2.to_dict().items()) == list(qrels.to_dict().items())
        assert items(r2.to_dict()) == items(run.to_dict())
        assert qafast.evaluate(q2, r2, MEASURES) == qafast.evaluate(qrels, run, MEASURES)


def test_past_two_gigabytes_of_ids_the_columns_are_large_strings(monkeypatch):
    # the bound lowered: a table of over 2**31 - 1 bytes of ids would take minutes to build
    monkeypatch.setattr(_tables, "_STRING_MAX", 4)
    run = qafast.Run({"q1": {"dé": 1.0, "d2": 2.0}, "q22": {"d3": 0.5}})
    table = run.to_arrow()
    assert table.schema.field("query_id").type == pa.large_string()
    assert table.schema.field("doc_id").type == pa.large_string()
    assert items(qafast.Run.from_arrow(table).to_dict()) == items(run.to_dict())
    monkeypatch.setattr(_tables, "_STRING_MAX", 2**31 - 1)
    assert run.to_arrow().schema.field("doc_id").type == pa.string()


def test_integer_query_ids_no_64_bit_column_holds_are_refused():
    run = qafast.Run({-1: {"a": 1.0}, 2**64: {"b": 1.0}})
    with pytest.raises(qafast.errors.InputError, match="no 64-bit integer column"):
        run.to_arrow()
    # a DataFrame holds them as Python ints
    assert qafast.Run.from_df(run.to_frame()).to_dict() == run.to_dict()


def test_without_pyarrow_the_message_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(ImportError, match=r"qafast\[arrow\]"):
        qafast.Run({"q": {"d": 1.0}}).to_arrow()
    with pytest.raises(ImportError, match=r"qafast\[arrow\]"):
        qafast.Qrels({"q": {"d": 1}}).to_parquet("never-written.parquet")
