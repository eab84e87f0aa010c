"""Hostile Arrow and Parquet input: odd column types read exactly (half-float and decimal
scores, decimal grades, binary ids), ids that are not UTF-8 named by their row, IPC stream
and file readers taken as the docs say, and damaged Parquet files giving a result or a
qafast error, never pyarrow's own."""

from __future__ import annotations

import decimal
import random
import warnings

import numpy as np
import pytest

import qafast
from qafast.errors import InputError, QafastError

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

QIDS = ["q1", "q1", "q1", "q2", "q2"]
DOCS = ["d1", "d2", "d3", "d9", "d8"]
QRELS = {"q1": {"d1": 1, "d2": 0, "d3": 2}, "q2": {"d9": 1}}
MEASURES = ["map", "ndcg", "P@2", "recip_rank"]


def trec_text(scores) -> bytes:
    return b"".join(f"{q} Q0 {d} {i} {s} r\n".encode()
                    for i, (q, d, s) in enumerate(zip(QIDS, DOCS, scores)))


def parquet(tmp_path, table, name="run.parquet", **options) -> str:
    path = tmp_path / name
    pq.write_table(table, path, **options)
    return str(path)


def decimals_cast_misrounds(texts, typ) -> bool:
    """Whether pyarrow's own cast to float64 gives another double than float() for one of
    these decimals (what the test relies on to mean anything)."""
    arr = pa.array([decimal.Decimal(t) for t in texts], typ)
    return arr.cast(pa.float64()).to_pylist() != [float(t) for t in texts]


def test_decimal_scores_are_the_nearest_doubles(tmp_path):
    # the same run as decimals and as text: every score, every tie and every measure the
    # same. pyarrow's cast rounds a quarter of 4-digit decimals off by an ulp
    rng = random.Random(7)
    for typ, digits in ((pa.decimal128(18, 4), 14), (pa.decimal256(60, 40), 50),
                        (pa.decimal128(38, 0), 38), (pa.decimal128(12, -3), 12)):
        for _ in range(20):
            texts = []
            for _ in DOCS:
                unscaled = rng.randrange(10 ** rng.randint(1, digits))
                texts.append(str(decimal.Decimal(unscaled).scaleb(-typ.scale)))
            texts[1] = texts[0]  # a tie
            table = pa.table({"query_id": QIDS, "doc_id": DOCS,
                              "score": pa.array([decimal.Decimal(t) for t in texts], typ)})
            run = qafast.Run.from_arrow(table)
            assert run.to_dict() == qafast.Run.from_file(trec_text(texts)).to_dict()
            assert [run.to_dict()[q][d] for q, d in zip(QIDS, DOCS)] == [float(t) for t in
                                                                          texts]
            # Parquet stores no negative scale
            sources = [table] + ([parquet(tmp_path, table)] if typ.scale >= 0 else [])
            for source in sources:
                for workers in (1, 2):
                    assert qafast.evaluate(QRELS, source, MEASURES, workers=workers) == \
                        qafast.evaluate(QRELS, trec_text(texts), MEASURES)
    assert decimals_cast_misrounds(["0.0001", "0.3337", "12.3451", "0.0003", "7.1119"],
                                   pa.decimal128(18, 4))


def test_half_float_scores(tmp_path):
    halves = np.array([0.5, 1.0009765625, 1.0009765625, 65504.0, -2.0], dtype=np.float16)
    table = pa.table({"query_id": QIDS, "doc_id": DOCS, "score": pa.array(halves)})
    expected = qafast.evaluate(QRELS, trec_text([float(h) for h in halves]), MEASURES)
    for source in (table, parquet(tmp_path, table)):
        assert qafast.evaluate(QRELS, source, MEASURES) == expected


def test_decimal_grades(tmp_path):
    run = qafast.Run.from_file(trec_text([3, 2, 1, 2, 1]))
    whole = pa.array([decimal.Decimal(x) for x in ("1.0", "0", "2.00", "1", "-1")],
                     pa.decimal128(6, 2))
    table = pa.table({"query_id": QIDS, "doc_id": DOCS, "relevance": whole})
    as_ints = {"q1": {"d1": 1, "d2": 0, "d3": 2}, "q2": {"d9": 1, "d8": -1}}
    for source in (table, parquet(tmp_path, table, "qrels.parquet")):
        assert qafast.Qrels.from_arrow(source).to_dict() == as_ints
        assert qafast.evaluate(source, run, MEASURES) == qafast.evaluate(as_ints, run, MEASURES)
    for bad, words in (("0.5", "grade 0.50 is not an integer"),
                       ("99999999999999999999",
                        "grade 99999999999999999999.00 is outside the 32-bit range"),
                       ("3000000000", "grade 3000000000 is outside the 32-bit range")):
        values = [decimal.Decimal(x) for x in ("1", "0", "2", bad, "1")]
        table = pa.table({"query_id": QIDS, "doc_id": DOCS,
                          "relevance": pa.array(values, pa.decimal128(22, 2))})
        with pytest.raises(InputError, match=r"column 'relevance', row 3.*" + words):
            qafast.Qrels.from_arrow(parquet(tmp_path, table, "bad.parquet"))


@pytest.mark.parametrize("column", ["query_id", "doc_id"])
@pytest.mark.parametrize("kind", ["binary", "large_binary", "dictionary"])
def test_ids_that_are_not_utf8_name_their_row(tmp_path, column, kind):
    raw = [x.encode() for x in (QIDS if column == "query_id" else DOCS)]
    raw[3] = raw[3] + b"\xff\xfe"
    typ = pa.large_binary() if kind == "large_binary" else pa.binary()
    arr = pa.array(raw, typ)
    if kind == "dictionary":
        arr = arr.dictionary_encode()
    columns = {"query_id": QIDS, "doc_id": DOCS, "score": [5.0, 4.0, 3.0, 2.0, 1.0]}
    columns[column] = arr
    table = pa.table(columns)
    # evaluate streams a run a batch of whole queries at a time, and a dictionary is
    # checked whole: its entry is named where no row of the batch read uses it yet
    where = "(row 3|dictionary entry 3)" if kind == "dictionary" else "row 3"
    for source in (table, parquet(tmp_path, table, use_dictionary=kind == "dictionary")):
        for call, at in ((lambda s: qafast.Run.from_arrow(s), "row 3"),
                         (lambda s: qafast.evaluate(QRELS, s, "map"), where),
                         (lambda s: qafast.evaluate(QRELS, s, "map", queries="qrels"),
                          "row 3")):
            with pytest.raises(InputError, match=f"column '{column}', {at}: the id "
                                                 r"b'\w+\\xff\\xfe' is not UTF-8 text"):
                call(source)


def test_binary_dictionary_query_ids_are_text(tmp_path):
    # dictionary-encoded binary query ids were kept as bytes: no query matched the qrels'
    qids = pa.array([q.encode() for q in QIDS], pa.binary()).dictionary_encode()
    table = pa.table({"query_id": qids, "doc_id": DOCS, "score": [5.0, 4.0, 3.0, 2.0, 1.0]})
    expected = qafast.evaluate(QRELS, trec_text([5, 4, 3, 2, 1]), MEASURES)
    for source in (table, parquet(tmp_path, table)):
        assert qafast.evaluate(QRELS, source, MEASURES) == expected
        assert qafast.Run.from_arrow(source).query_ids == ["q1", "q2"]


def _ipc(tmp_path, table, *, stream: bool, chunk: int = 2) -> str:
    path = tmp_path / ("run.arrows" if stream else "run.arrow")
    with pa.OSFile(str(path), "wb") as f:
        new = pa.ipc.new_stream if stream else pa.ipc.new_file
        with new(f, table.schema) as writer:
            for batch in table.to_batches(max_chunksize=chunk):
                writer.write_batch(batch)
    return str(path)


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "file"])
def test_ipc_readers_are_sources(tmp_path, stream):
    open_ = pa.ipc.open_stream if stream else pa.ipc.open_file
    scores = [5.0, 4.0, 3.0, 2.0, 1.0]
    table = pa.table({"query_id": QIDS, "doc_id": DOCS, "score": scores})
    expected = qafast.evaluate(QRELS, trec_text(scores), MEASURES)
    path = _ipc(tmp_path, table, stream=stream)
    assert qafast.Run.from_arrow(open_(path)).to_dict() == qafast.Run.from_arrow(
        table).to_dict()
    for workers in (1, 2):
        assert qafast.evaluate(QRELS, open_(path), MEASURES, workers=workers) == expected
    # a run whose queries' rows are not together: read whole, from the batches read so far
    # and the rest (an IPC stream gives its batches once)
    order = [0, 3, 1, 4, 2]
    shuffled = table.take(order)
    path = _ipc(tmp_path, shuffled, stream=stream, chunk=1)
    for workers in (1, 2):
        assert qafast.evaluate(QRELS, open_(path), MEASURES, workers=workers) == expected
    grades = pa.table({"query_id": QIDS[:4], "doc_id": DOCS[:4],
                       "relevance": pa.array([1, 0, 2, 1], pa.int8())})
    qpath = _ipc(tmp_path, grades, stream=stream)
    assert qafast.Qrels.from_arrow(open_(qpath)).to_dict() == QRELS
    assert qafast.evaluate(open_(qpath), trec_text(scores), MEASURES) == expected


def _corruptions(data: bytes, rng: random.Random, n: int):
    """``n`` damaged copies of ``data``: bytes flipped in its pages and in its footer
    (the last 10% and the 8-byte trailer), or the file cut short."""
    for k in range(n):
        out = bytearray(data)
        how = k % 4
        if how == 3:
            yield bytes(out[:rng.randrange(len(out))])
            continue
        for _ in range(rng.randint(1, 3)):
            if how == 0:  # the pages
                at = rng.randrange(4, max(5, len(out) * 9 // 10))
            elif how == 1:  # the footer's metadata
                at = rng.randrange(len(out) * 9 // 10, len(out) - 8)
            else:  # anywhere
                at = rng.randrange(len(out))
            out[at] = rng.randrange(256)
        yield bytes(out)


def test_damaged_parquet_gives_a_result_or_a_qafast_error(tmp_path):
    # a deterministic sweep next to the fuzz targets: each damaged file of several column
    # types, through evaluate (one thread and two), Run.from_arrow and as qrels
    n = 60
    scores = np.linspace(0.0, 3.0, n)
    rows = {"query_id": [f"q{i // 6}" for i in range(n)],
            "doc_id": [f"d{i}" for i in range(n)]}
    tables = {
        "plain": pa.table({**rows, "score": scores}),
        "half": pa.table({**rows, "score": pa.array(scores.astype(np.float16))}),
        "decimal": pa.table({**rows, "score": pa.array(
            [decimal.Decimal(f"{s:.3f}") for s in scores], pa.decimal128(9, 3))}),
        "binary": pa.table({"query_id": pa.array([q.encode() for q in rows["query_id"]]),
                            "doc_id": pa.array([d.encode() for d in rows["doc_id"]],
                                               pa.large_binary()).dictionary_encode(),
                            "score": pa.array(scores, pa.float32())}),
    }
    qrels = {f"q{i}": {f"d{6 * i}": 1, f"d{6 * i + 1}": 2} for i in range(n // 6)}
    rng = random.Random(3)
    seen = 0
    for name, table in tables.items():
        good = tmp_path / f"{name}.parquet"
        pq.write_table(table, good, row_group_size=20,
                       compression="snappy" if name == "plain" else "none")
        for k, data in enumerate(_corruptions(good.read_bytes(), rng, 40)):
            path = tmp_path / f"damaged-{name}-{k}.parquet"
            path.write_bytes(data)
            for call in (lambda p: qafast.evaluate(qrels, p, "map"),
                         lambda p: qafast.evaluate(qrels, p, "map", workers=2),
                         qafast.Run.from_arrow,
                         lambda p: qafast.Qrels.from_arrow(p, relevance_col="score")):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    try:
                        call(str(path))
                    except QafastError as e:
                        seen += 1
                        assert str(path) in str(e), e
    assert seen  # some damage was found, and named


@pytest.mark.parametrize("column", ["score-float64", "score-decimal", "query-dictionary"])
def test_ipc_buffers_shorter_than_their_arrays(column):
    # an IPC stream whose record batch says a buffer is shorter than its array needs (as a
    # damaged stream may): numpy refused to read past it with a bare ValueError; it is an
    # InputError naming the column
    import struct

    n = 5
    scores = [1.5, 2.5, 0.5, 1.0, 2.0]
    table = pa.table({
        "query_id": (pa.array(QIDS).dictionary_encode().cast(pa.dictionary(pa.int64(),
                                                                          pa.string()))
                     if column == "query-dictionary" else QIDS),
        "doc_id": DOCS,
        "score": (pa.array([decimal.Decimal(str(s)) for s in scores], pa.decimal128(9, 2))
                  if column == "score-decimal" else scores)})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    data = sink.getvalue().to_pybytes()
    name = "score" if column.startswith("score") else "query_id"
    width = 16 if column == "score-decimal" else 8
    # the batch's Buffer entries are (offset, length) pairs of int64: halve each that
    # gives the column's data buffer length, and keep the copies pyarrow finds invalid
    needle = struct.pack("<q", n * width)
    damaged = []
    for at in range(len(data) - 8):
        if data[at:at + 8] == needle:
            copy = data[:at] + struct.pack("<q", n * width // 2) + data[at + 8:]
            try:
                batch = pa.ipc.open_stream(copy).read_all().column(name).chunk(0)
            except pa.ArrowInvalid:
                continue  # an offset, not a length: pyarrow itself refuses the stream
            try:
                batch.validate()
            except pa.ArrowInvalid:
                damaged.append(copy)
    assert damaged
    for copy in damaged:
        for call in (lambda s: qafast.evaluate(QRELS, s, "map"),
                     lambda s: qafast.evaluate(QRELS, s, "map", workers=2),
                     qafast.Run.from_arrow):
            with pytest.raises(InputError, match=f"column '{name}' is not valid Arrow data: "
                                                 r"its \d+ rows need \d+ bytes of values, the "
                                                 r"buffer holds \d+$"):
                call(pa.ipc.open_stream(copy))
