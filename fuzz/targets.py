"""Fuzz targets: each takes bytes and feeds them to one reader or entry point of qafast.

The only accepted outcomes of a target are a result or a :class:`qafast.QafastError` (a
``ValueError`` or ``TypeError`` subclass naming what is wrong); anything else, a crash or a
bare ``EOFError``, ``RecursionError``, ``OverflowError``, ``UnicodeDecodeError`` or numpy
error from deep inside, is a finding. Warnings are ignored (they are documented outcomes).

Used by ``tests/test_fuzz_readers.py`` (hypothesis) and ``fuzz/fuzz_readers.py`` (atheris).
"""

from __future__ import annotations

import argparse
import contextlib
import decimal
import gzip
import io
import json
import os
import tempfile
import warnings
from importlib import resources

import numpy as np

import qafast
from qafast.errors import QafastError

DATA = resources.files("qafast") / "data"  # the installed package's, or the source tree's

QRELS_TEXT = (DATA / "sample.qrels").read_bytes()
RUN_TEXT = (DATA / "sample.run").read_bytes()
SQUAD_DATASET = (DATA / "squad_sample.json").read_bytes()
SQUAD_PREDICTIONS = (DATA / "squad_sample_pred.json").read_bytes()
SQUAD_NA = (DATA / "squad_sample_na.json").read_bytes()

SEEDS: dict[str, list[bytes]] = {
    "trec_run": [RUN_TEXT, gzip.compress(RUN_TEXT), b"q1 Q0 d1 1 2.5 r\n# c\nq1 Q0 d#2 2 -inf r\n"],
    "trec_qrels": [QRELS_TEXT, gzip.compress(QRELS_TEXT), b"q1 0 d1 1\nq1 0 d2 -1\n"],
    "squad_dataset": [SQUAD_DATASET],
    "squad_predictions": [SQUAD_NA],
    "bioasq": [json.dumps({"questions": [
        {"id": "q1", "type": "factoid", "exact_answer": [["a", "b"], ["c"]]},
        {"id": "q2", "type": "list", "exact_answer": [["x"], ["y"]]},
        {"id": "q3", "type": "yesno", "exact_answer": "yes"}]}).encode()],
    "drfact": [(b'{"qid": "q1", "predictions_K": {"100": [["tree", 0.9], ["sun", 0.5]]}}\n'
               b'{"qid": "q2", "predictions_K": {"100": [["leaf", 1]]}}\n'
               b'\x00{"_id": "q1", "all_answer_concepts": [{"name": "sun"}]}\n'
               b'{"_id": "q2", "all_answer_concepts": [{"name": "leaf"}, {"name": "x"}]}\n')],
    "dbqa": [b'q1\ta "quoted\t1\t0.9\nq1\tb\t0\t0.1\r\nq2\tc\t1\t0.5\n'],
    "conll": [b"go ep1 ep1\nray en1 en1\nrice en1 o\n\nwait ep ep\n"],
    "ap": [b"1 0.9\n0 0.8\n1 0.3\n0 1e999\n"],
    "arrays": [bytes(range(64)), np.array([0.5, 1.5, -2.0, 7.0]).tobytes() * 3],
    "dicts": [json.dumps({"q1": {"d1": 1.5, "d2": 0.5}, "q2": {"d9": -1}}).encode(),
              json.dumps({"q1": {"d1": 1e308}, "2": {"d": 10**30}}).encode()],
    "diversity_qrels": [b"1 1 clueweb09-en-0001 1\n1 2 clueweb09-en-0001 0\n1 2 d\t2\n"
                        b"10 1 d 0\n2 3 \xc3\xa9 1\n",
                        b"3 1 d1 1\n3 2 d2 1\n\n3 2 d3 0\r\n"],
    "answers": [json.dumps({"q1": ["Paris", "the city of Paris"],
                            "q2": ["", "42"]}).encode()],
}

_QRELS = qafast.Qrels.from_file(QRELS_TEXT)


def _arrow_seeds() -> dict[str, list[bytes]]:
    """Valid IPC streams, Feather files and Parquet files of the sample run (dictionary
    encoded and plain ids, several batches and row groups), when pyarrow is installed."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
        from pyarrow import feather
    except ImportError:
        return {}
    run = qafast.Run.from_file(RUN_TEXT).to_dict()
    rows = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    plain = pa.table({"query_id": [r[0] for r in rows], "doc_id": [r[1] for r in rows],
                      "score": [r[2] for r in rows]})
    encoded = pa.table({
        "query_id": plain.column("query_id").dictionary_encode().cast(
            pa.dictionary(pa.int8(), pa.string())),
        "doc_id": plain.column("doc_id").dictionary_encode(),
        "score": plain.column("score")})

    def ipc(table):
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, table.schema) as writer:
            for batch in table.to_batches(max_chunksize=7):
                writer.write_batch(batch)
        return sink.getvalue().to_pybytes()

    def feather_file(table):
        sink = pa.BufferOutputStream()
        feather.write_feather(table, sink, compression="uncompressed", chunksize=7)
        return sink.getvalue().to_pybytes()

    def parquet(table, **options):
        sink = pa.BufferOutputStream()
        options.setdefault("compression", "none")
        pq.write_table(table, sink, row_group_size=9, **options)
        return sink.getvalue().to_pybytes()

    def as_binary(column, typ=None):
        return pa.array([x.encode() for x in column.to_pylist()], typ or pa.binary())

    # the odd types a Parquet writer may give a run: half-float and decimal scores, large
    # strings, binary ids (dictionary-encoded too), a float32 column with nulls allowed
    scores = plain.column("score").to_pylist()
    odd = pa.table({
        "query_id": as_binary(plain.column("query_id")).dictionary_encode(),
        "doc_id": as_binary(plain.column("doc_id"), pa.large_binary()),
        "score": pa.array(np.array(scores, dtype=np.float16))})
    wide = pa.table({
        "query_id": plain.column("query_id").cast(pa.large_string()),
        "doc_id": as_binary(plain.column("doc_id")).dictionary_encode(),
        "score": pa.array([decimal.Decimal(f"{x:.4f}") for x in scores], pa.decimal128(12, 4))})
    nullable = pa.table({
        "query_id": plain.column("query_id"), "doc_id": plain.column("doc_id"),
        "score": pa.array(scores, pa.float32(), mask=np.zeros(len(scores), dtype=bool))})
    qrels = qafast.Qrels.from_file(QRELS_TEXT).to_dict()
    rows = [(q, d, g) for q, docs in qrels.items() for d, g in docs.items()]
    judged = pa.table({"query_id": [r[0] for r in rows], "doc_id": [r[1] for r in rows],
                       "relevance": pa.array([r[2] for r in rows], pa.int8())})
    judged_odd = pa.table({
        "query_id": pa.array([r[0].encode() for r in rows], pa.binary()),
        "doc_id": pa.array([r[1] for r in rows]).dictionary_encode(),
        "relevance": pa.array([decimal.Decimal(r[2]) for r in rows], pa.decimal128(4, 1))})
    return {"arrow_ipc": [ipc(encoded), ipc(plain), ipc(odd), ipc(wide)],
            "arrow_file": [feather_file(encoded), feather_file(plain), feather_file(odd),
                           feather_file(wide)],
            "parquet": [parquet(plain), parquet(plain, use_dictionary=False)],
            "parquet_types": [parquet(odd), parquet(wide, use_dictionary=False),
                              parquet(nullable, compression="snappy"),
                              parquet(wide, data_page_size=64, compression="snappy")],
            "parquet_qrels": [parquet(judged), parquet(judged_odd, use_dictionary=False)]}


SEEDS.update(_arrow_seeds())


@contextlib.contextmanager
def _tmpfile(data: bytes, suffix: str = ""):
    fd, path = tempfile.mkstemp(suffix=suffix, prefix="qafast-fuzz-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        yield path
    finally:
        os.unlink(path)


def trec_run(data: bytes):
    run = qafast.Run.from_file(data)
    for workers in (1, 2):
        qafast.evaluate(_QRELS, data, ["map", "ndcg@10", "P.5", "recip_rank"],
                        queries="qrels", workers=workers)
    with _tmpfile(data, ".gz" if data[:2] == b"\x1f\x8b" else "") as path:
        qafast.evaluate(_QRELS, path, "map", queries="qrels")
    return run


def trec_qrels(data: bytes):
    qrels = qafast.Qrels.from_file(data)
    run = qafast.Run.from_file(RUN_TEXT)
    qafast.evaluate(qrels, run, ["map", "ndcg", "bpref", "infAP"], queries="qrels")
    return qrels


def diversity_qrels(data: bytes):
    """A diversity qrels file, evaluated against a run dict of its own documents (ties
    included) as a DiversityQrels and as the dict it holds, and by qafast.ndeval."""
    qrels = qafast.DiversityQrels.from_file(data)
    measures = ["alpha_nDCG@10", "ERR_IA@5", "nNRBP", "AP_IA", "P_IA@3", "StRecall@5"]
    run: dict = {}
    nested: dict = {}
    for i, (q, s, d, g) in enumerate(zip(qrels.query, qrels.subtopic, qrels.doc,
                                         qrels.grade.tolist())):
        if i < 200:
            run.setdefault(q, {})[d] = float(i % 4)
        nested.setdefault(q, {}).setdefault(s, {})[d] = g
    for queries in ("run", "qrels"):
        qafast.evaluate(qrels, run, measures, queries=queries)
        qafast.evaluate(nested, run, measures, queries=queries)
    qafast.evaluate(qrels, RUN_TEXT, measures + ["P@5"], queries="qrels")
    text = "".join(f"{q} Q0 {d} {i} {score} r\n" for q, docs in run.items()
                   for i, (d, score) in enumerate(docs.items()))
    if text and all(q.isascii() and q.isdigit() for q in run):
        data_lines = b"".join(line + b"\n" for line in data.split(b"\n") if line.strip())
        qafast.ndeval(data_lines, text.encode())
    return qrels


def squad_dataset(data: bytes):
    with _tmpfile(data, ".json") as path:
        return qafast.squad(path, json.loads(SQUAD_PREDICTIONS))


def squad_predictions(data: bytes):
    # the bytes as predictions, then as no-answer probabilities
    results = []
    with _tmpfile(SQUAD_DATASET, ".json") as dataset, _tmpfile(data, ".json") as path:
        with contextlib.suppress(QafastError):
            results.append(qafast.squad(dataset, path))
        results.append(qafast.squad(dataset, json.loads(SQUAD_PREDICTIONS), na_probs=path,
                                    version="2.0"))
    return results


def bioasq(data: bytes):
    gold = io.BytesIO(SEEDS["bioasq"][0])
    qafast.io.read_bioasq(io.BytesIO(data))
    with _tmpfile(data, ".json") as path:
        return qafast.evaluate_bioasq(gold, path)


def drfact(data: bytes):
    # one input holds both files, split at the first NUL byte
    pred, _, truth = data.partition(b"\x00")
    with _tmpfile(pred) as p, _tmpfile(truth) as t:
        preds, gold = qafast.io.read_drfact(p, t)
        return qafast.evaluate_concepts(preds, gold, ["hit@1", "rec@3"])


def dbqa(data: bytes):
    with _tmpfile(data) as path:
        qafast.io.read_dbqa(io.BytesIO(data))
        return qafast.evaluate_dbqa_file(path)


def conll(data: bytes):
    with _tmpfile(data) as path:
        res, ann = qafast.io.read_conll(path)
        return qafast.tw_events_score(res, ann)


def ap(data: bytes):
    from qafast.curves import _run_ap

    with _tmpfile(data) as path, contextlib.redirect_stdout(io.StringIO()):
        return _run_ap(argparse.Namespace(file=path, thresholds="0.5,0.1", o="json"))


def arrays(data: bytes):
    """The array entry points, with arrays cut from the bytes: scores of a random float
    width, ids and grades as integers."""
    if len(data) < 3:
        return None
    n = data[0] % 16
    kind = data[1] % 4
    raw = data[2:]
    width = (2, 4, 8)[kind % 3]
    m = len(raw) // width
    scores = np.frombuffer(raw[: m * width], dtype={2: np.float16, 4: np.float32,
                                                    8: np.float64}[width])
    ints = np.frombuffer(raw[: len(raw) // 8 * 8], dtype=np.int64)
    small = np.frombuffer(raw, dtype=np.uint8).astype(np.int64) % 7 - 1
    k = min(len(scores), len(small), max(n, 1) * 4)
    q = small[:k] % max(n, 1)
    docs = ints[:k] if kind == 3 and len(ints) >= k else np.arange(k) + small[:k]
    results = []
    with contextlib.suppress(QafastError):
        run = qafast.Run.from_arrays(q, docs, scores[:k])
        qrels = qafast.Qrels.from_arrays(q, docs, small[:k])
        results.append(qafast.evaluate(qrels, run, ["map", "ndcg@5", "P@2"], queries="qrels"))
    with contextlib.suppress(QafastError):
        rows = max(n, 1)
        cols = k // rows
        m2 = qafast.RankingMetrics(["map", "ndcg@3", "mrr@2"], empty_queries="zero")
        m2.update(scores[: rows * cols].reshape(rows, cols),
                  small[: rows * cols].reshape(rows, cols))
        results.append(m2.compute())
    with contextlib.suppress(QafastError):
        results.append(qafast.average_precision(small[:k] % 2, scores[:k]))
    with contextlib.suppress(QafastError):
        results.append(qafast.precision_recall_curve(small[:k] % 2, scores[:k]))
    with contextlib.suppress(QafastError):
        results.append(qafast.evaluate_dbqa(small[:k] % 2, scores[:k], questions=q))
    return results


def _evaluate_arrow(source_of, workers=(1,)):
    """``qafast.evaluate`` and ``Run.from_arrow`` on the Arrow source ``source_of()`` gives
    (called anew for each, as a reader is read once); None when pyarrow itself refuses to
    open the bytes, which is the caller's call to pyarrow, not qafast's."""
    import pyarrow as pa

    results = []
    for w in workers:
        try:
            source = source_of()
        except (pa.ArrowException, OSError, EOFError):
            return None
        results.append(qafast.evaluate(_QRELS, source, ["map", "ndcg@10", "P.5"],
                                       queries="qrels", workers=w))
    try:
        source = source_of()
    except (pa.ArrowException, OSError, EOFError):
        return None
    results.append(qafast.Run.from_arrow(source))
    return results


def arrow_ipc(data: bytes):
    """The bytes as an IPC stream: its reader, then the table pyarrow reads from it."""
    import pyarrow as pa

    results = [_evaluate_arrow(lambda: pa.ipc.open_stream(data), workers=(1, 2))]
    with contextlib.suppress(QafastError):
        results.append(_evaluate_arrow(lambda: pa.ipc.open_stream(data).read_all()))
    return results


def arrow_file(data: bytes):
    """The bytes as an IPC file (Feather version 2): its reader, read a record batch at a
    time, then the table pyarrow reads from it."""
    import pyarrow as pa

    results = [_evaluate_arrow(lambda: pa.ipc.open_file(pa.BufferReader(data)), (1, 2))]
    with contextlib.suppress(QafastError):
        results.append(_evaluate_arrow(
            lambda: pa.ipc.open_file(pa.BufferReader(data)).read_all()))
    return results


def parquet(data: bytes):
    """The bytes as a Parquet file, read by qafast a row group at a time (and whole)."""
    with _tmpfile(data, ".parquet") as path:
        results = []
        for workers in (1, 2):
            results.append(qafast.evaluate(_QRELS, path, ["map", "ndcg@10", "P.5"],
                                           queries="qrels", workers=workers))
        with contextlib.suppress(QafastError):
            results.append(qafast.Run.from_arrow(path))
        return results


def parquet_types(data: bytes):
    """The bytes as a Parquet run of odd column types (seeds: half-float and decimal
    scores, large strings, binary ids plain and dictionary-encoded, nullable float32,
    small data pages), damaged anywhere: its pages, their headers, the footer."""
    return parquet(data)


def parquet_qrels(data: bytes):
    """The bytes as a Parquet qrels (int8 and decimal grades, binary query ids), read
    whole, then evaluated against the sample run."""
    with _tmpfile(data, ".parquet") as path:
        results = [qafast.Qrels.from_arrow(path)]
        run = qafast.Run.from_file(RUN_TEXT)
        results.append(qafast.evaluate(path, run, ["map", "ndcg", "bpref"], queries="qrels"))
        return results


def _arrow_column(pa, data: bytes, pick: int, n: int, kinds):
    """A column of ``n`` rows of the type ``kinds[pick]``, its buffers cut from ``data``,
    made with ``Array.from_buffers`` (which checks only the buffers' sizes) or, for
    dictionaries, ``DictionaryArray.from_arrays(..., safe=False)`` (which checks nothing)."""
    kind = kinds[pick % len(kinds)]
    if isinstance(kind, tuple):  # (index type, dictionary type)
        index_type, value_type = kind
        width = index_type.bit_width // 8
        size = data[0] % 5 if data else 0
        indices = _arrow_column(pa, data[1:], 0, n, [index_type])
        dictionary = _arrow_column(pa, data[1 + n * width:], 0, size, [value_type])
        return pa.DictionaryArray.from_arrays(indices, dictionary, safe=False)
    if pa.types.is_string(kind) or pa.types.is_binary(kind) or pa.types.is_large_string(
            kind) or pa.types.is_large_binary(kind):
        width = 8 if pa.types.is_large_string(kind) or pa.types.is_large_binary(kind) else 4
        offsets = np.frombuffer(data[: (n + 1) * width].ljust((n + 1) * width, b"\0"),
                                dtype=np.int32 if width == 4 else np.int64) % 64
        return pa.Array.from_buffers(kind, n, [None, pa.py_buffer(offsets.tobytes()),
                                               pa.py_buffer(data.ljust(64, b"d"))])
    width = max(kind.bit_width // 8, 1)
    raw = data[: n * width].ljust(n * width, b"\1")
    return pa.Array.from_buffers(kind, n, [None, pa.py_buffer(raw)])


def arrow_columns(data: bytes):
    """A run and qrels as Arrow tables whose column types are picked by the first bytes and
    whose buffers are cut from the rest: string, binary and view ids, integer ids of every
    width, dictionaries with any index, scores as float16, decimals, booleans..."""
    import pyarrow as pa

    if len(data) < 4:
        return None
    n = data[0] % 9
    ids = [pa.string(), pa.large_string(), pa.binary(), pa.int8(), pa.int64(), pa.uint64(),
           (pa.int8(), pa.string()), (pa.int16(), pa.large_string()), (pa.uint32(), pa.string()),
           (pa.int64(), pa.int32()), (pa.int8(), pa.binary())]
    values = [pa.float64(), pa.float32(), pa.float16(), pa.int32(), pa.uint64(), pa.bool_(),
              (pa.int8(), pa.float64()), (pa.uint8(), pa.int16()), pa.decimal128(10, 3),
              pa.decimal256(40, 30), (pa.int8(), pa.decimal128(5, 0))]
    rest = data[4:]
    third = len(rest) // 3
    try:
        columns = [_arrow_column(pa, rest[:third], data[1], n, ids),
                   _arrow_column(pa, rest[third:2 * third], data[2], n, ids),
                   _arrow_column(pa, rest[2 * third:], data[3], n, values)]
    except (pa.ArrowException, ValueError):
        return None  # pyarrow refused to make the arrays
    results = []
    run = pa.table(columns, names=["query_id", "doc_id", "score"])
    with contextlib.suppress(QafastError):
        results.append(qafast.evaluate(_QRELS, run, ["map", "P.5"], queries="qrels"))
    qrels = pa.table(columns, names=["query_id", "doc_id", "relevance"])
    with contextlib.suppress(QafastError):
        results.append(qafast.evaluate(qrels, run, ["map", "ndcg@10", "bpref"]))
    return results


def _json(data: bytes):
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        return None


def dicts(data: bytes):
    """The dict entry points, with what JSON gives (any shape: the checks must name it)."""
    obj = _json(data)
    results = []
    if isinstance(obj, str):
        # a str is a file's path to these entry points: one that does not exist raises the
        # OS's FileNotFoundError, as open() does (the reader targets fuzz the files)
        return results
    with contextlib.suppress(QafastError):
        results.append(qafast.evaluate(_QRELS, obj, ["map", "P@5"], queries="qrels"))
    with contextlib.suppress(QafastError):
        results.append(qafast.evaluate(obj, RUN_TEXT, ["map", "P@5"], queries="qrels"))
    with contextlib.suppress(QafastError):
        results.append(qafast.RelevanceEvaluator(obj, {"map", "ndcg"}).evaluate(obj))
    with contextlib.suppress(QafastError):
        results.append(qafast.evaluate_concepts(obj, obj, ["hit@1", "rec@2"]))
    return results


def answers(data: bytes):
    """The answer metrics and SQuAD, with predictions and references from JSON."""
    obj = _json(data)
    results = []
    if isinstance(obj, dict):
        preds = [v[0] if isinstance(v, list) and v else v for v in obj.values()]
        refs = list(obj.values())
    else:
        preds = refs = obj
    with contextlib.suppress(QafastError):
        results.append(qafast.exact_match_and_f1(preds, refs))
    with contextlib.suppress(QafastError):
        results.append(qafast.evaluate_factoid(refs, refs))
    with contextlib.suppress(QafastError):
        dataset = {"data": [{"paragraphs": [{"qas": [
            {"id": str(i), "answers": [{"text": r} for r in (ref if isinstance(ref, list)
                                                              else [ref])]}
            for i, ref in enumerate(refs if isinstance(refs, list) else [refs])]}]}]}
        results.append(qafast.squad(dataset, {str(i): p for i, p in enumerate(
            preds if isinstance(preds, list) else [preds])}))
    with contextlib.suppress(QafastError):
        results.append(qafast.tw_events_score(refs, refs))
    return results


TARGETS = {
    "trec_run": trec_run,
    "trec_qrels": trec_qrels,
    "diversity_qrels": diversity_qrels,
    "squad_dataset": squad_dataset,
    "squad_predictions": squad_predictions,
    "bioasq": bioasq,
    "drfact": drfact,
    "dbqa": dbqa,
    "conll": conll,
    "ap": ap,
    "arrays": arrays,
    "dicts": dicts,
    "answers": answers,
}
if "parquet" in SEEDS:  # pyarrow is installed
    TARGETS.update({"arrow_ipc": arrow_ipc, "arrow_file": arrow_file, "parquet": parquet,
                    "parquet_types": parquet_types, "parquet_qrels": parquet_qrels,
                    "arrow_columns": arrow_columns})
    SEEDS["arrow_columns"] = [bytes([8, 0, 1, 0]) + b"q1q1q1q2q3" * 4 + b"d1d2d3d4" * 6,
                              bytes([5, 6, 7, 6]) + bytes(range(40)) * 3]


def run_target(name: str, data: bytes):
    """Run one target; return its result, or the QafastError it raised. Any other
    exception propagates: that is a finding."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return TARGETS[name](data)
        except QafastError as e:
            return e
