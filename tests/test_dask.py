"""qafast.dask on a real two-process LocalCluster: the numbers of the in-memory calls, bit
for bit, for any partitioning; split queries, lost workers and bad columns are errors."""

import os
import sys

import numpy as np
import pytest

import qafast

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")
pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

import qafast.dask  # noqa: E402 (after the skips)

MEASURES = ["map", "ndcg@10", "P@5", "recall@100", "mrr@10", "bpref", "gm_map",
            "num_rel_ret", "infAP", "Rprec"]


@pytest.fixture(scope="module")
def client():
    import cloudpickle

    # the partition functions below run in the worker processes
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    # one retry of a partition whose worker died: enough to show both outcomes, quickly
    with dask.config.set({"distributed.scheduler.allowed-failures": 1}):
        cluster = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                           dashboard_address=None)
        c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def make_data(n_queries=60, seed=0):
    rng = np.random.default_rng(seed)
    qrels, rows = {}, []
    for q in range(n_queries):
        qid = f"q{q:03d}"
        judged = rng.choice(80, size=rng.integers(1, 12), replace=False)
        qrels[qid] = {f"d{d}": int(rng.integers(-1, 4)) for d in judged}
        for d in rng.choice(80, size=rng.integers(1, 40), replace=False):
            rows.append((qid, f"d{d}", float(rng.integers(0, 6)) / 2))   # ties
    run = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    return qrels, run.iloc[rng.permutation(len(run))].reset_index(drop=True)


@pytest.fixture(scope="module")
def data():
    qrels, run = make_data()
    return qrels, run, qafast.evaluate(qrels, run, MEASURES)


@pytest.mark.parametrize("npartitions", [1, 2, 7])
def test_any_partitioning_gives_the_in_memory_numbers(client, data, npartitions):
    qrels, run, expected = data
    frame = dd.from_pandas(run, npartitions=npartitions)
    assert frame.npartitions == npartitions
    assert qafast.dask.evaluate(qrels, frame, MEASURES) == expected
    per_query = qafast.dask.evaluate(qrels, frame, MEASURES, per_query=True)
    assert per_query.set_index("query_id").to_dict(orient="index") == qafast.evaluate(
        qrels, run, MEASURES, per_query=True)


def test_progress_bar_counts_partitions_and_changes_nothing(client, data, capsys):
    pytest.importorskip("tqdm")
    qrels, run, expected = data
    frame = dd.from_pandas(run, npartitions=7)
    assert qafast.dask.evaluate(qrels, frame, MEASURES, progress=True) == expected
    err = capsys.readouterr().err
    assert "partitions" in err and "/7" in err
    assert qafast.dask.evaluate(qrels, frame, MEASURES, progress=False) == expected
    assert capsys.readouterr().err == ""


def test_every_qrels_query_and_shuffle_partitions(client, data):
    qrels, run, _ = data
    part = run[run.query_id != "q003"]
    frame = dd.from_pandas(part, npartitions=3)
    assert (qafast.dask.evaluate(qrels, frame, MEASURES, queries="qrels", npartitions=5)
            == qafast.evaluate(qrels, part, MEASURES, queries="qrels"))


def test_parquet_and_trec_globs(client, data, tmp_path):
    qrels, run, expected = data
    grouped = run.sort_values("query_id", kind="stable")
    queries = grouped.query_id.unique()
    with open(tmp_path / "all.run", "w") as whole:
        for i, chunk in enumerate(np.array_split(queries, 4)):
            rows = grouped[grouped.query_id.isin(chunk)]
            pq.write_table(pa.Table.from_pandas(rows, preserve_index=False),
                           tmp_path / f"part-{i}.parquet", row_group_size=50)
            with open(tmp_path / f"part-{i}.run", "w") as f:
                for q, d, s in rows.itertuples(index=False):
                    line = f"{q} Q0 {d} 0 {s!r} sys\n"
                    f.write(line)
                    whole.write(line)
    pq.write_table(pa.Table.from_pandas(grouped, preserve_index=False),
                   tmp_path / "all.parquet", row_group_size=100)
    one = qafast.evaluate(qrels, str(tmp_path / "all.parquet"), MEASURES)
    assert one == expected
    glob = str(tmp_path / "part-*.parquet")
    assert qafast.dask.evaluate(qrels, glob, MEASURES) == expected
    assert qafast.dask.evaluate(qrels, glob, MEASURES, assume_grouped=True) == expected
    trec = qafast.evaluate(qrels, str(tmp_path / "all.run"), MEASURES)
    assert qafast.dask.evaluate(qrels, str(tmp_path / "part-*.run"), MEASURES,
                                assume_grouped=True) == trec


def test_a_query_split_over_partitions_is_named(client):
    run = pd.DataFrame({"query_id": ["q1", "q2", "q3", "q4", "q2", "q5"],
                        "doc_id": ["a", "b", "c", "d", "e", "f"],
                        "score": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]})
    frame = dd.from_pandas(run, npartitions=2, sort=False)
    assert frame.npartitions == 2
    with pytest.raises(ValueError, match=r"query 'q2' has rows in partitions 0 and 1.*"
                                         "assume_grouped"):
        qafast.dask.evaluate({"q2": {"b": 1}}, frame, ["map"], assume_grouped=True)
    # shuffled, the same run is measured whole
    assert qafast.dask.evaluate({"q2": {"b": 1}}, frame, ["map"]) == {"map": 0.5}


def test_grouped_runs_cut_anywhere_need_no_shuffle(client, data, tmp_path):
    qrels, run, expected = data
    grouped = run.sort_values("query_id", kind="stable").reset_index(drop=True)
    for n in (2, 7):
        # partition boundaries fall inside queries: their rows are joined on the client
        frame = dd.from_pandas(grouped, npartitions=n, sort=False)
        assert qafast.dask.evaluate(qrels, frame, MEASURES, assume_grouped=True) == expected
    # one Parquet file of many row groups, split into partitions by row group
    path = tmp_path / "run.parquet"
    pq.write_table(pa.Table.from_pandas(grouped, preserve_index=False), path,
                   row_group_size=97)
    frame = dd.read_parquet(path, split_row_groups=3)
    assert frame.npartitions > 2
    assert qafast.dask.evaluate(qrels, frame, MEASURES, assume_grouped=True) == expected
    # files whose queries are spread over them are shuffled
    shuffled = run.iloc[::-1]
    for i, lo in enumerate(range(0, len(shuffled), 300)):
        pq.write_table(pa.Table.from_pandas(shuffled.iloc[lo:lo + 300], preserve_index=False),
                       tmp_path / f"spread-{i}.parquet")
    assert qafast.dask.evaluate(qrels, str(tmp_path / "spread-*.parquet"), MEASURES) == expected


def test_parquet_files_are_read_in_row_groups_by_the_workers(client, data, tmp_path,
                                                             monkeypatch):
    qrels, run, expected = data
    grouped = run.sort_values("query_id", kind="stable").reset_index(drop=True)
    path = tmp_path / "run.parquet"
    pq.write_table(pa.Table.from_pandas(grouped, preserve_index=False), path,
                   row_group_size=97)
    assert pq.ParquetFile(path).num_row_groups > 5
    frames = []
    real = dd.read_parquet
    monkeypatch.setattr(dd, "read_parquet", lambda *a, **k: frames.append(a) or real(*a, **k))
    # a task per row group, per few, or one for the file: queries cut between tasks are
    # joined on the client
    for rows in (1, 300, 1 << 20):
        monkeypatch.setattr(qafast.dask, "_TASK_ROWS", rows)
        assert qafast.dask.evaluate(qrels, str(path), MEASURES) == expected
        assert qafast.dask.evaluate(qrels, str(path), MEASURES, assume_grouped=True) == expected
    assert qafast.dask.compare(qrels, {"a": str(path), "b": grouped}, ["map"]).means.tolist()[0] \
        == qafast.compare(qrels, {"a": grouped, "b": grouped}, ["map"]).means.tolist()[0]
    assert not frames  # pyarrow read the files on the workers, no dask DataFrame
    # queries spread over files: those become a dask DataFrame, shuffled
    shuffled = run.iloc[::-1]
    for i, lo in enumerate(range(0, len(shuffled), 300)):
        pq.write_table(pa.Table.from_pandas(shuffled.iloc[lo:lo + 300], preserve_index=False),
                       tmp_path / f"spread-{i}.parquet")
    assert qafast.dask.evaluate(qrels, str(tmp_path / "spread-*.parquet"), MEASURES) == expected
    assert frames
    # a column missing (found on the client) or of the wrong type (by the worker)
    pq.write_table(pa.Table.from_pandas(grouped.rename(columns={"score": "s"}),
                                        preserve_index=False), tmp_path / "renamed.parquet")
    with pytest.raises(ValueError, match="Parquet file .*renamed.parquet.*no column 'score'"):
        qafast.dask.evaluate(qrels, str(tmp_path / "renamed.parquet"), MEASURES)
    bad = grouped.assign(score=grouped.score.astype(str))
    pq.write_table(pa.Table.from_pandas(bad, preserve_index=False), tmp_path / "bad.parquet")
    with pytest.raises(TypeError, match="'score'.*string"):
        qafast.dask.evaluate(qrels, str(tmp_path / "bad.parquet"), MEASURES)
    # a damaged page: a qafast error (pyarrow's words), saying which file, row group and
    # column (from the worker)
    start = pq.ParquetFile(path).metadata.row_group(4).column(1).data_page_offset
    damaged = bytearray(path.read_bytes())
    damaged[start + 20:start + 200] = b"\xab" * 180
    (tmp_path / "damaged.parquet").write_bytes(bytes(damaged))
    monkeypatch.setattr(qafast.dask, "_TASK_ROWS", 300)
    with pytest.raises(qafast.io.ArrowFormatError,
                       match=r"damaged\.parquet', row group 4, column 'doc_id': ") as e:
        qafast.dask.evaluate(qrels, str(tmp_path / "damaged.parquet"), MEASURES)
    assert (e.value.row_group, e.value.column) == (4, "doc_id")


def write_trec(path, rows, opener=open):
    with opener(path, "wt") as f:
        for q, d, s in rows.itertuples(index=False):
            f.write(f"{q} Q0 {d} 0 {s!r} sys\n")


def test_trec_files_are_read_in_byte_ranges_by_the_workers(client, data, tmp_path,
                                                           monkeypatch):
    import gzip

    qrels, run, _ = data
    grouped = run.sort_values("query_id", kind="stable").reset_index(drop=True)
    path = tmp_path / "run.txt"
    write_trec(path, grouped)
    expected = qafast.evaluate(qrels, str(path), MEASURES)
    expected_per_query = qafast.evaluate(qrels, str(path), MEASURES, per_query=True)
    frames = []
    real = dd.from_map
    monkeypatch.setattr(dd, "from_map", lambda *a, **k: frames.append(a) or real(*a, **k))
    monkeypatch.setattr(qafast._runfile, "_RANGE_MIN_BYTES", 1)
    tasks = []
    real_tasks = qafast.dask._trec_tasks
    monkeypatch.setattr(qafast.dask, "_trec_tasks",
                        lambda *a: tasks.append(real_tasks(*a)[1]) or real_tasks(*a))
    # a task per 2 KB, per 20 KB, or one for the file: ranges end where a query ends
    for size in (2000, 20000, 1 << 30):
        monkeypatch.setattr(qafast.dask, "_TASK_BYTES", size)
        assert qafast.dask.evaluate(qrels, str(path), MEASURES) == expected
        assert qafast.dask.evaluate(qrels, str(path), MEASURES, assume_grouped=True) == expected
    assert tasks[0][0] > 10 and tasks[-1][0] == 1
    monkeypatch.setattr(qafast.dask, "_TASK_BYTES", 2000)
    got = qafast.dask.evaluate(qrels, str(path), MEASURES, per_query=True)
    assert got.set_index("query_id").to_dict(orient="index") == expected_per_query
    # a run cut into files anywhere, queries going on from one file into the next; .gz too
    lines = path.read_bytes().splitlines(keepends=True)
    for i, lo in enumerate(range(0, len(lines), 97)):
        opener = gzip.open if i % 2 else open
        with opener(tmp_path / f"cut-{i:02d}.run{'.gz' if i % 2 else ''}", "wb") as f:
            f.write(b"".join(lines[lo:lo + 97]))
    cut = str(tmp_path / "cut-*")
    assert qafast.dask.evaluate(qrels, cut, MEASURES, assume_grouped=True) == expected
    assert qafast.dask.compare(qrels, {"a": cut, "b": str(path)}, ["map"]).means.tolist() \
        == qafast.compare(qrels, {"a": str(path), "b": str(path)}, ["map"]).means.tolist()
    assert not frames  # qafast's reader on the workers, no dask DataFrame
    # a file whose queries are not grouped is measured whole, by one task
    ungrouped = tmp_path / "ungrouped.txt"
    write_trec(ungrouped, run)
    assert qafast.dask.evaluate(qrels, str(ungrouped), MEASURES) == expected
    assert qafast.dask.evaluate(qrels, str(ungrouped), MEASURES, assume_grouped=True) \
        == expected
    assert not frames
    # queries spread over files (not where one ends and the next starts) are shuffled
    shuffled = run.iloc[::-1]
    for i, lo in enumerate(range(0, len(shuffled), 300)):
        write_trec(tmp_path / f"spread-{i}.txt", shuffled.iloc[lo:lo + 300])
    spread = str(tmp_path / "spread-*.txt")
    assert qafast.dask.evaluate(qrels, spread, MEASURES) == expected
    assert frames
    with pytest.raises(ValueError, match="has rows in partitions"):
        qafast.dask.evaluate(qrels, spread, MEASURES, assume_grouped=True)


def test_trec_file_errors_name_the_line(client, data, tmp_path, monkeypatch):
    qrels, run, _ = data
    grouped = run.sort_values("query_id", kind="stable").reset_index(drop=True)
    lines = [f"{q} Q0 {d} 0 {s!r} sys\n" for q, d, s in grouped.itertuples(index=False)]
    monkeypatch.setattr(qafast._runfile, "_RANGE_MIN_BYTES", 1)
    monkeypatch.setattr(qafast.dask, "_TASK_BYTES", 2000)
    bad = tmp_path / "bad.txt"
    bad.write_text("".join(lines[:700]) + "q500 Q0 dx 0 high sys\n" + "".join(lines[700:]))
    with pytest.raises(ValueError, match=r"bad\.txt, line 701: .*score"):
        qafast.dask.evaluate(qrels, str(bad), MEASURES)
    q, d = grouped.query_id[600], grouped.doc_id[600]
    twice = [line for line in lines[:601]] + [f"{q} Q0 {d} 0 0.5 sys\n"] + lines[601:]
    dup = tmp_path / "dup.txt"
    dup.write_text("".join(twice))
    with pytest.raises(ValueError, match=rf"dup\.txt, line 60[0-9].*{q!r} retrieves "
                                         rf"document {d!r} twice"):
        qafast.dask.evaluate(qrels, str(dup), MEASURES)


def test_compare_gives_the_in_memory_comparison(client, data):
    qrels, run, _ = data
    other = run.assign(score=run.score[::-1].to_numpy())
    expected = qafast.compare(qrels, {"a": run, "b": other}, ["map", "P@5"], test="fisher",
                              n_resamples=200)
    got = qafast.dask.compare(qrels, {"a": dd.from_pandas(run, npartitions=3),
                                      "b": dd.from_pandas(other, npartitions=2)},
                              ["map", "P@5"], test="fisher", n_resamples=200)
    assert got.means.tolist() == expected.means.tolist()
    assert got.p_value.tolist() == expected.p_value.tolist()
    assert got.query_ids == expected.query_ids


def test_answers_give_the_in_memory_scores(client, tmp_path):
    rng = np.random.default_rng(5)
    words = ["the", "Eiffel", "tower", "Paris", "a", "river", "Seine", ""]
    preds, refs = [], []
    for _ in range(300):
        preds.append(" ".join(rng.choice(words, size=rng.integers(0, 4))))
        refs.append([" ".join(rng.choice(words, size=rng.integers(0, 4)))
                     for _ in range(rng.integers(1, 3))])
    frame = pd.DataFrame({"id": [f"x{i}" for i in range(300)], "prediction": preds,
                          "references": refs})
    expected = {"exact_match": qafast.exact_match(preds, refs),
                "f1": qafast.f1(preds, refs)}
    # dask turns a pandas column of Python lists into strings (its convert-string option):
    # the lists are given as an Arrow list column, or as Parquet
    arrow_lists = frame.assign(references=pd.Series(refs, dtype=pd.ArrowDtype(
        pa.list_(pa.string()))))
    for n in (1, 2, 7):
        assert qafast.dask.answers(dd.from_pandas(arrow_lists, npartitions=n)) == expected
    for i, lo in enumerate(range(0, 300, 70)):
        pq.write_table(pa.Table.from_pandas(frame.iloc[lo:lo + 70], preserve_index=False),
                       tmp_path / f"answers-{i}.parquet")
    assert qafast.dask.answers(str(tmp_path / "answers-*.parquet")) == expected
    per = qafast.dask.answers(dd.from_pandas(arrow_lists, npartitions=3), id_col="id",
                              per_question=True)
    assert per.id.tolist() == frame.id.tolist()
    assert per.f1.tolist() == qafast.f1(preds, refs, per_question=True).tolist()


@pytest.mark.parametrize("column, values, error, words", [
    ("score", ["0.5"] * 4, TypeError, ["'score'", "string"]),
    ("doc_id", [None, "b", "c", "d"], ValueError, ["'doc_id'", "null"]),
])
def test_bad_columns_are_named(client, column, values, error, words):
    run = pd.DataFrame({"query_id": ["q1", "q1", "q2", "q2"], "doc_id": ["a", "b", "c", "d"],
                        "score": [1.0, 2.0, 3.0, 4.0]})
    run[column] = pd.Series(values, dtype=object)
    with pytest.raises(error) as e:
        qafast.dask.evaluate({"q1": {"a": 1}}, dd.from_pandas(run, npartitions=2), ["map"])
    for w in words:
        assert w in str(e.value)
    with pytest.raises(ValueError, match="no column 'score'"):
        qafast.dask.evaluate({"q1": {"a": 1}}, dd.from_pandas(run.rename(
            columns={"score": "s"}), npartitions=2), ["map"])


def _die_once(frame, marker):
    """Kill this worker process the first time a partition holding q007 comes here."""
    if (frame.query_id == "q007").any() and not os.path.exists(marker):
        open(marker, "w").close()
        os._exit(1)
    return frame


def _die_always(frame):
    if (frame.query_id == "q007").any():
        os._exit(1)
    return frame


def test_a_worker_lost_mid_evaluation_never_leaves_queries_out(client, data, tmp_path):
    qrels, run, expected = data
    frame = dd.from_pandas(run, npartitions=4)
    marker = str(tmp_path / "died")
    dying = frame.map_partitions(_die_once, marker, meta=frame._meta)
    try:
        got = qafast.dask.evaluate(qrels, dying, MEASURES)
    except RuntimeError as e:   # an error is allowed ...
        assert "worker was lost" in str(e)
    else:                   # ... and so is the full result, never a mean of fewer queries
        assert got == expected
    assert os.path.exists(marker)   # the worker did die
    dying = frame.map_partitions(_die_always, meta=frame._meta)
    with pytest.raises(RuntimeError, match="worker was lost.*nothing was averaged"):
        qafast.dask.evaluate(qrels, dying, MEASURES, assume_grouped=True)
    client.wait_for_workers(2, timeout=60)


def test_a_damaged_dictionary_index_is_named_by_the_worker_that_reads_it(client, tmp_path,
                                                                         monkeypatch):
    # a Parquet file's string query ids are read as the file's dictionary and indices, on
    # the workers, a task per row group here; an index outside the dictionary (index 3 of
    # 3, in the second row group's last row) is refused there, before any kernel, naming the
    # file, the column and the file's row
    path = tmp_path / "run.parquet"
    table = pa.table({"query_id": [f"q{i}" for i in range(6)],
                      "doc_id": [f"d{i}" for i in range(6)], "score": [1.0] * 6})
    pq.write_table(table, str(path), compression="none", row_group_size=3)
    data = bytearray(path.read_bytes())
    chunk = pq.ParquetFile(str(path)).metadata.row_group(1).column(0)
    at = data.find(bytes([2, 0x03, 0x24]), chunk.data_page_offset)  # bit width 2, indices 0 1 2
    data[at + 2] = 0x34  # indices 0 1 3
    path.write_bytes(bytes(data))
    monkeypatch.setattr(qafast.dask, "_TASK_ROWS", 3)
    with pytest.raises(qafast.InputError, match=r"run Parquet file '.*run\.parquet': column "
                                                r"'query_id', row 5: dictionary index 3 is"):
        qafast.dask.evaluate({"q1": {"d1": 1}}, str(path), ["map"])


def test_compare_refuses_a_list_of_runs_by_name():
    # qafast.compare reads a list as one system's seeds or folds; qafast.dask's lists are one
    # run's files, so a list of dicts is refused with that said, not a TypeError from os
    qrels = {"q1": {"a": 1}}
    with pytest.raises(qafast.InputTypeError, match="item 0 .* is a dict.*qafast.compare"):
        qafast.dask.compare(qrels, {"a": [{"q1": {"a": 1.0}}], "b": {"q1": {"a": 1.0}}},
                            "map")
