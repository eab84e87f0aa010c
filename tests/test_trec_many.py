"""Run files at scale: ``qafast trec`` streaming its runs, many runs in one call (command line
and ``qafast.evaluate_runs``), ``workers`` cutting a file into ranges at query boundaries,
ungrouped runs, and files that end mid-line or cannot be read."""

import csv
import gzip
import io
import json
import os
import random
import re
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import qafast
from qafast import _ranked, _runfile
from qafast.cli import main
from qafast.io import TrecFormatError

MEASURES = ["num_ret", "num_rel_ret", "map", "P_5", "ndcg_cut_10", "recip_rank", "bpref"]


def run_text(n_queries, docs, *, seed=0, comment_every=0, tag="r"):
    rnd = random.Random(seed)
    lines = []
    for q in range(n_queries):
        for k in range(docs):
            if comment_every and len(lines) % comment_every == 0:
                lines.append("# a comment\n")
            # ties on purpose: scores from a small set
            lines.append(f"q{q:04d} Q0 d{rnd.randrange(5 * docs)}_{k} {k + 1} "
                         f"{rnd.randrange(20) / 4} {tag}\n")
    return "".join(lines)


def qrels_text(n_queries, docs, *, seed=0):
    rnd = random.Random(seed + 1)
    return "".join(f"q{q:04d} 0 d{rnd.randrange(5 * docs)}_{k} {rnd.randrange(4)}\n"
                   for q in range(n_queries) for k in range(docs) if rnd.random() < 0.6)


@pytest.fixture
def files(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(qrels_text(60, 20))
    runs = []
    for i in range(3):
        p = tmp_path / f"run{i}.txt"
        p.write_text(run_text(60, 20, seed=i, comment_every=37 if i == 1 else 0, tag=f"sys{i}"))
        runs.append(p)
    return qrels, runs


def cli(capsys, *args):
    code = main(["trec", *map(str, args)])
    out = capsys.readouterr()
    return code, out.out, out.err


def no_whole_run(monkeypatch):
    """Make building a whole Run from a file fail: what is streamed never needs one."""
    real = _ranked.from_trec_columns

    def refuse(cls, *a, **k):
        if cls is _ranked.Run:
            raise AssertionError("the run was read whole")
        return real(cls, *a, **k)
    monkeypatch.setattr(_ranked.Run, "from_file", classmethod(refuse))
    monkeypatch.setattr(_runfile, "from_trec_columns", refuse)


# ------------------------------------------------------------------------------ streaming


def test_cli_streams_a_grouped_run_without_building_it(files, capsys, monkeypatch):
    qrels, runs = files
    code, want, err = cli(capsys, "-q", "-m", "all_trec", qrels, runs[0])
    assert code == 0, err
    monkeypatch.setattr(_runfile, "FILE_CHUNK_ROWS", 50)  # many batches
    no_whole_run(monkeypatch)
    for workers in ("1", "2"):
        code, out, err = cli(capsys, "-q", "-m", "all_trec", "-w", workers, qrels, runs[0])
        assert code == 0, err
        assert out == want


@pytest.mark.parametrize("workers", [-1, 2])
def test_evaluate_with_workers_streams_a_path(files, monkeypatch, workers):
    # workers other than 1 used to read the whole run first: no faster, several times the
    # memory
    qrels, runs = files
    want = qafast.evaluate(str(qrels), str(runs[1]), MEASURES, per_query=True)
    no_whole_run(monkeypatch)
    monkeypatch.setattr(_runfile, "_RANGE_MIN_BYTES", 1000)
    assert qafast.evaluate(str(qrels), str(runs[1]), MEASURES, per_query=True,
                           workers=workers) == want


@pytest.mark.parametrize("parts", [2, 3, 7, 40])
def test_ranges_give_bitwise_identical_results(files, monkeypatch, parts):
    qrels, runs = files
    q = qafast.Qrels.from_file(qrels)
    whole = qafast.Run.from_file(runs[1])
    want_q = qafast.evaluate(q, whole, "all_trec", per_query=True)
    want = qafast.evaluate(q, whole, "all_trec")
    monkeypatch.setattr(_runfile, "_RANGE_MIN_BYTES", 100)
    monkeypatch.setattr(_runfile, "FILE_CHUNK_ROWS", 30)
    ranges = _runfile._ranges(str(runs[1]), parts)
    assert len(ranges) > 1 and ranges[0][0] == 0 and ranges[-1][1] == runs[1].stat().st_size
    text = runs[1].read_bytes()
    for a, b in ranges:  # each range starts a query
        first = text[a:].split(b"\n", 1)[0]
        assert a == 0 or text[:a].rstrip(b"\n").rsplit(b"\n", 1)[-1].split()[0] != \
            first.split()[0]
    assert qafast.evaluate(q, str(runs[1]), "all_trec", per_query=True,
                           workers=parts) == want_q
    assert qafast.evaluate(q, str(runs[1]), "all_trec", workers=parts) == want


@pytest.mark.parametrize("dropped", [0, 7])
def test_ranges_report_every_run_query_in_file_order(files, monkeypatch, dropped):
    # the run's query ids (for the "not in the run" notes) are every query of the file in
    # its order, whether or not each was measured; with all measured, the measured ids
    # are the same list
    from qafast._measure_parser import parse_measures

    qrels, runs = files
    q = qafast.Qrels.from_file(qrels)
    if dropped:  # qrels without some of the run's queries
        keep = [i for i in range(len(q.query_ids)) if i % dropped]
        q = _runfile._subset(q, np.asarray(keep, dtype=np.int64))
    text = runs[0].read_text()
    file_order = list(dict.fromkeys(line.split()[0] for line in text.splitlines()))
    monkeypatch.setattr(_runfile, "_RANGE_MIN_BYTES", 100)
    monkeypatch.setattr(_runfile, "FILE_CHUNK_ROWS", 30)
    options = {"relevance_level": 1, "judged_only": False, "max_docs": None, "workers": 3}
    for ordered in (False, True):
        got = _runfile.evaluate_run_source(q, str(runs[0]), parse_measures(["map"]),
                                           queries="run", options=options, ordered=ordered)
        assert got.run_query_ids == file_order
        assert sorted(got.ids) == sorted(set(file_order) & set(q.query_ids))
        assert (got.run_query_ids is got.ids) == (not dropped and not ordered)


@pytest.mark.parametrize("gathered", [0, 1, 1000])
def test_parts_gathered_while_waiting_give_the_same_numbers(files, monkeypatch, gathered):
    # the waiting thread copies the first parts' values into one array as they arrive; the
    # parts it has not gathered (after one that did not fit: a query measured twice) are
    # joined to them at the end
    qrels, runs = files
    want = qafast.evaluate(str(qrels), str(runs[2]), MEASURES, per_query=True)
    want_mean = qafast.evaluate(str(qrels), str(runs[2]), MEASURES)
    real_add, real_finish = _runfile._Assembled.add, _runfile._finish
    finished = []

    def add(self, part):
        if self.parts < gathered:  # as if the later parts did not fit
            real_add(self, part)

    def finish(qrels, parts, *args):
        finished.append([not p.blocks for p in parts])
        return real_finish(qrels, parts, *args)

    monkeypatch.setattr(_runfile._Assembled, "add", add)
    monkeypatch.setattr(_runfile, "_finish", finish)
    monkeypatch.setattr(_runfile, "_RANGE_MIN_BYTES", 100)
    monkeypatch.setattr(_runfile, "FILE_CHUNK_ROWS", 30)
    for ordered in (True, False):
        got = qafast.evaluate(str(qrels), str(runs[2]), MEASURES, per_query=ordered,
                              workers=3)
        assert got == (want if ordered else want_mean)
        dropped = finished.pop()
        assert len(dropped) > 2  # the file was read in ranges
        k = min(gathered, len(dropped))  # the first k parts were gathered
        assert dropped == [True] * k + [False] * (len(dropped) - k)


def test_thread_ranges_start_queries_cover_the_file_and_shrink(files, monkeypatch):
    # threads take the ranges in turn; the last ones are small, so that the threads end
    # close together, and each thread reads several with one parser
    qrels, runs = files
    monkeypatch.setattr(_runfile, "_RANGE_MIN_BYTES", 100)
    ranges = _runfile._thread_ranges(str(runs[2]), 2)
    text = runs[2].read_bytes()
    assert ranges[0][0] == 0 and ranges[-1][1] == len(text) and len(ranges) > 4
    assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:]))
    for a, _ in ranges[1:]:
        before = text[:a].rstrip(b"\n").rsplit(b"\n", 1)[-1].split()[0]
        assert text[a:].split()[0] != before
    sizes = [b - a for a, b in ranges]
    assert sizes[0] > 2 * sizes[-2]
    seen = []
    real = _runfile._stream

    def parsers(*args, reused=None, **kwargs):
        seen.append(id(reused.parser) if reused.parser is not None else None)
        return real(*args, reused=reused, **kwargs)
    monkeypatch.setattr(_runfile, "_stream", parsers)
    q = qafast.Qrels.from_file(qrels)
    want = qafast.evaluate(q, qafast.Run.from_file(runs[2]), MEASURES, per_query=True)
    assert qafast.evaluate(q, str(runs[2]), MEASURES, per_query=True, workers=2) == want
    assert len(seen) == len(ranges) and sum(s is not None for s in seen) >= len(ranges) - 2


def test_a_restarted_parser_reads_as_a_new_one():
    from qafast import _kernels

    first = run_text(7, 30, seed=1, tag="a").encode()
    second = run_text(5, 20, seed=2, comment_every=9, tag="b").encode()

    def read(parser, text):
        batch = parser.scan_intern(text)
        assert not batch.error_line
        batch.release()
        n, arrays = parser.complete_rows(True, 0)
        got = (list(parser.query_ids), parser.run_id, parser.lines, n,
               [a.tolist() for a in arrays])
        parser.drop_rows(n)
        return got

    used = _kernels._trec_Parser(True, False)
    read(used, first)
    used.restart()
    assert read(used, second) == read(_kernels._trec_Parser(True, False), second)


@given(st.lists(st.integers(0, 5000), unique=True, max_size=3000).map(
           lambda ids: [str(i) for i in ids]),
       st.integers(-1, 5001), st.floats(-0.5, 1.5))
def test_the_first_query_of_a_range_is_found_among_the_qrels_from_anywhere(ids, qid, near):
    qrels = qafast.Qrels({q: {"d": 1} for q in ids})
    want = qrels.query_ids.index(str(qid)) if str(qid) in qrels.query_ids else 0
    assert _runfile._qrels_position(qrels, str(qid), False, near) == want


@pytest.mark.parametrize("workers", [1, 3])
def test_a_run_in_another_query_order_than_the_qrels_streams_the_same(files, tmp_path,
                                                                     monkeypatch, workers):
    # chunks whose queries follow the qrels are paired by position and left in file order
    # until the end; the others are looked up: both give the queries in id order
    qrels, runs = files
    blocks = runs[2].read_text().splitlines(keepends=True)
    by_query: dict = {}
    for line in blocks:
        by_query.setdefault(line.split()[0], []).append(line)
    order = sorted(by_query, reverse=True)
    order = order[10:] + order[:10][::-1]  # reversed, then a run of the qrels' own order
    del order[5]
    other = tmp_path / "other.txt"
    other.write_text("".join(line for q in order for line in by_query[q]))
    q = qafast.Qrels.from_file(qrels)
    whole = qafast.Run.from_file(other)
    want_q = qafast.evaluate(q, whole, MEASURES, per_query=True)
    want = qafast.evaluate(q, whole, MEASURES)
    monkeypatch.setattr(_runfile, "_RANGE_MIN_BYTES", 100)
    monkeypatch.setattr(_runfile, "FILE_CHUNK_ROWS", 30)
    no_whole_run(monkeypatch)
    got_q = qafast.evaluate(q, str(other), MEASURES, per_query=True, workers=workers)
    assert list(got_q) == sorted(got_q) == list(want_q)
    assert got_q == want_q
    assert qafast.evaluate(q, str(other), MEASURES, workers=workers) == want


def test_a_query_split_by_a_range_is_still_evaluated_whole(tmp_path, monkeypatch):
    # a comment line inside a query lets a range start there: the query then comes out of
    # two ranges, and the run is read whole instead
    lines = run_text(10, 30, seed=4).splitlines(keepends=True)
    lines.insert(45, "# in the middle of q0001\n")
    run = tmp_path / "run"
    run.write_text("".join(lines))
    qrels = qrels_text(10, 30, seed=4).encode()
    want = qafast.evaluate(qrels, qafast.Run.from_file(run), MEASURES, per_query=True)
    cut, size = sum(len(x) for x in lines[:45]), run.stat().st_size
    monkeypatch.setattr(_runfile, "_thread_ranges",
                        lambda path, workers: [(0, cut), (cut, size)])
    read_whole = []
    real = _ranked.Run.from_file.__func__
    monkeypatch.setattr(_ranked.Run, "from_file", classmethod(
        lambda cls, *a, **k: read_whole.append(1) or real(cls, *a, **k)))
    assert qafast.evaluate(qrels, str(run), MEASURES, per_query=True, workers=2) == want
    assert read_whole


@given(st.lists(st.lists(st.integers(0, 30), unique=True, max_size=12), max_size=5))
def test_ranges_are_disjoint_exactly_when_no_query_is_in_two(parts):
    # each range's parser gives its queries once; a query in two ranges means the run is
    # read whole
    everything = [q for ids in parts for q in ids]
    assert _runfile.disjoint(parts) == (len(set(everything)) == len(everything))


@given(st.lists(st.tuples(st.lists(st.integers(0, 30), unique=True, max_size=12),
                          st.booleans()), max_size=5))
def test_ranges_told_apart_by_qrels_positions_share_no_query(parts):
    # a range paired with the qrels by position knows the span of positions of its
    # queries: spans that do not overlap prove the ranges disjoint without a set of ids
    made = []
    for positions, paired in parts:
        made.append(_runfile._Part(span=(min(positions), max(positions) + 1) if positions
                                   else None, paired=paired))
    if _runfile._spans_disjoint(made):
        everything = [q for positions, _ in parts for q in positions]
        assert len(set(everything)) == len(everything)
        assert all(paired for _, paired in parts)


def test_errors_in_a_later_range_name_the_line_in_the_file(tmp_path, monkeypatch):
    monkeypatch.setattr(_runfile, "_RANGE_MIN_BYTES", 100)
    lines = run_text(20, 10).splitlines(keepends=True)
    qrels = qrels_text(20, 10).encode()
    bad = list(lines)
    bad[170] = "q0017 Q0 dx 1 not-a-number r\n"
    run = tmp_path / "run"
    run.write_text("".join(bad))
    for workers in (1, 4):
        with pytest.raises(ValueError, match=r"run, line 171: .*'not-a-number'"):
            qafast.evaluate(qrels, str(run), MEASURES, workers=workers)
    dup = list(lines)
    dup[181] = dup[180]  # q0018 retrieves a document twice
    run.write_text("".join(dup))
    doc = dup[180].split()[2]
    for workers in (1, 4):
        with pytest.raises(ValueError, match=rf"run, line 182: query 'q0018' retrieves "
                                             rf"document '{doc}' twice"):
            qafast.evaluate(qrels, str(run), MEASURES, workers=workers)


def test_compressed_run_and_stdin_with_a_reading_thread(files, capsys, monkeypatch):
    qrels, runs = files
    code, want, _ = cli(capsys, "-m", "all_trec", "-w", "1", qrels, runs[2])
    gz = runs[2].with_suffix(".gz")
    gz.write_bytes(gzip.compress(runs[2].read_bytes()))
    monkeypatch.setattr("qafast.io.trec.CHUNK_BYTES", 512)
    code, out, err = cli(capsys, "-m", "all_trec", "-w", "2", qrels, gz)
    assert code == 0, err
    assert out == want
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(runs[2].read_bytes())))
    code, out, err = cli(capsys, "-m", "all_trec", "-w", "2", qrels, "-")
    assert code == 0, err
    assert out == want


# ------------------------------------------------------------------------------ segments
# text in memory (bytes) is cut into segments of whole queries, each parsed and measured by
# a thread


def small_segments(monkeypatch, size):
    monkeypatch.setattr("qafast.io.trec.CHUNK_BYTES", 256)
    monkeypatch.setattr(_runfile, "_SEGMENT_BYTES", size)
    monkeypatch.setattr(_runfile, "FILE_CHUNK_ROWS", 30)


@pytest.mark.parametrize("size", [300, 2000, 1 << 20])
def test_segments_of_text_in_memory_give_the_file_numbers_bitwise(files, monkeypatch, size):
    qrels, runs = files  # runs[1] has comment lines inside queries
    q = qafast.Qrels.from_file(qrels)
    want_q = qafast.evaluate(q, str(runs[1]), "all_trec", per_query=True, workers=1)
    want = qafast.evaluate(q, str(runs[1]), "all_trec", workers=1)
    text = runs[1].read_bytes()
    small_segments(monkeypatch, size)
    no_whole_run(monkeypatch)
    parts = []
    real = _runfile._finish
    monkeypatch.setattr(_runfile, "_finish", lambda qrels, p, *a, **k: parts.append(len(p))
                        or real(qrels, p, *a, **k))
    assert qafast.evaluate(q, text, "all_trec", per_query=True, workers=2) == want_q
    assert qafast.evaluate(q, bytearray(text), "all_trec", workers=3) == want
    # compressed text keeps one parsing thread (decompressing takes the other core)
    assert qafast.evaluate(q, gzip.compress(text), "all_trec", workers=3) == want
    assert (min(parts[:2]) > 1) if size < 10_000 else (parts[:2] == [1, 1])
    assert parts[2] == 1


def test_threads_reading_segments_keep_one_parser_each(files, monkeypatch):
    qrels, runs = files
    q = qafast.Qrels.from_file(qrels)
    want = qafast.evaluate(q, str(runs[2]), MEASURES, per_query=True, workers=1)
    small_segments(monkeypatch, 2000)
    parsers = []
    real = _runfile._stream

    def recorded(*args, reused=None, **kwargs):
        part = real(*args, reused=reused, **kwargs)
        parsers.append(id(reused.parser))
        return part
    monkeypatch.setattr(_runfile, "_stream", recorded)
    assert qafast.evaluate(q, runs[2].read_bytes(), MEASURES, per_query=True,
                           workers=2) == want
    assert len(parsers) > 4 and len(set(parsers)) <= 2


def test_a_segment_ends_where_its_last_query_ends():
    text = run_text(6, 40, seed=2, comment_every=7).encode()
    blocks = list(_runfile._segments(iter(_whole_lines(text, 90)), 500))
    assert b"".join(b"".join(bytes(b) for b in s) for s in blocks) == text
    seen = set()
    for segment in blocks:
        ids = {_runfile._first_field(line)
               for line in b"".join(bytes(b) for b in segment).splitlines()} - {None}
        assert not ids & seen  # no query in two segments
        seen |= ids
    assert len(blocks) > 2


def _whole_lines(text: bytes, size: int):
    """Blocks of about ``size`` bytes, each ending at a line end, as the readers give them."""
    out, start = [], 0
    while start < len(text):
        cut = text.find(b"\n", start + size)
        end = len(text) if cut < 0 else cut + 1
        out.append(memoryview(text)[start:end])
        start = end
    return out


def test_segments_in_memory_stay_bounded(files, monkeypatch):
    qrels, runs = files
    small_segments(monkeypatch, 300)
    made, done, most = [0], [0], [0]
    real_segments, real_stream = _runfile._segments, _runfile._stream

    def segments(blocks, size):
        for s in real_segments(blocks, size):
            made[0] += 1
            most[0] = max(most[0], made[0] - done[0])
            yield s

    def stream(*args, **kwargs):
        try:
            return real_stream(*args, **kwargs)
        finally:
            done[0] += 1
    monkeypatch.setattr(_runfile, "_segments", segments)
    monkeypatch.setattr(_runfile, "_stream", stream)
    want = qafast.evaluate(str(qrels), str(runs[0]), MEASURES, workers=1)
    assert qafast.evaluate(str(qrels), runs[0].read_bytes(), MEASURES, workers=2) == want
    assert made[0] > 10
    assert most[0] <= 2 + 1 + 1  # the threads' segments, one waiting, one being made


def test_errors_in_a_later_segment_name_the_line_in_the_text(tmp_path, monkeypatch):
    small_segments(monkeypatch, 300)
    lines = run_text(20, 10).splitlines(keepends=True)
    qrels = qrels_text(20, 10).encode()
    bad = list(lines)
    bad[170] = "q0017 Q0 dx 1 not-a-number r\n"
    dup = list(lines)
    dup[181] = dup[180]  # q0018 retrieves a document twice
    doc = dup[180].split()[2]
    for text, pattern in ((bad, r"<bytes>, line 171: .*'not-a-number'"),
                          (dup, rf"<bytes>, line 182: query 'q0018' retrieves document "
                                rf"'{doc}' twice")):
        for workers in (1, 3):
            with pytest.raises(ValueError, match=pattern):
                qafast.evaluate(qrels, "".join(text).encode(), MEASURES, workers=workers)


def test_of_errors_in_several_segments_the_first_in_the_text_is_raised(monkeypatch):
    import time

    small_segments(monkeypatch, 300)
    lines = run_text(20, 10).splitlines(keepends=True)
    lines[15] = "q0001 Q0 dx 1 first-error r\n"
    lines[185] = "q0018 Q0 dy 1 second-error r\n"
    real = _runfile._stream

    def slow_first(*args, **kwargs):
        if not kwargs.get("searched"):  # the first segment takes longer
            time.sleep(0.3)
        return real(*args, **kwargs)
    monkeypatch.setattr(_runfile, "_stream", slow_first)
    with pytest.raises(ValueError, match=r"line 16: .*'first-error'"):
        qafast.evaluate(qrels_text(20, 10).encode(), "".join(lines).encode(), MEASURES,
                        workers=3)


def test_a_query_in_two_segments_is_still_evaluated_whole(files, monkeypatch):
    # were a query's lines cut apart, its id would come out of two segments: the run is
    # then read whole
    qrels, runs = files
    want = qafast.evaluate(str(qrels), str(runs[2]), MEASURES, per_query=True, workers=1)
    small_segments(monkeypatch, 300)
    never = re.compile(rb"(?!)")
    monkeypatch.setattr(_runfile, "_query_lines", lambda query: (never, re.compile(rb"\n")))
    read_whole = []
    real = _ranked.from_trec_columns
    monkeypatch.setattr(_runfile, "from_trec_columns",
                        lambda cls, *a, **k: read_whole.append(cls) or real(cls, *a, **k))
    assert qafast.evaluate(str(qrels), runs[2].read_bytes(), MEASURES, per_query=True,
                           workers=2) == want
    assert _ranked.Run in read_whole


# ------------------------------------------------------------------------------ ungrouped


@pytest.mark.parametrize("workers", [1, 2])
def test_ungrouped_run_file_evaluates_as_its_grouped_self(files, capsys, monkeypatch, workers):
    qrels, runs = files
    code, want, _ = cli(capsys, "-q", "-m", "all_trec", qrels, runs[0])
    lines = runs[0].read_text().splitlines(keepends=True)
    random.Random(7).shuffle(lines)
    ungrouped = runs[0].with_name("ungrouped")
    ungrouped.write_text("".join(lines))
    q = qafast.Qrels.from_file(qrels)
    want_q = qafast.evaluate(q, qafast.Run.from_file(runs[0]), MEASURES, per_query=True)
    monkeypatch.setattr(_runfile, "_RANGE_MIN_BYTES", 100)
    monkeypatch.setattr(_runfile, "FILE_CHUNK_ROWS", 40)
    assert qafast.evaluate(q, str(ungrouped), MEASURES, per_query=True,
                           workers=workers) == want_q
    code, out, err = cli(capsys, "-q", "-m", "all_trec", "-w", str(workers), qrels, ungrouped)
    assert code == 0, err
    assert out == want


def test_ungrouped_run_from_stdin_is_kept_in_a_temporary_file(files, capsys, monkeypatch):
    qrels, runs = files
    code, want, _ = cli(capsys, "-q", "-m", "all_trec", qrels, runs[1])
    text = runs[1].read_bytes().splitlines(keepends=True)
    data = b"".join(text[2:] + text[:2])  # the first query's first lines come last
    monkeypatch.setattr("qafast.io.trec.CHUNK_BYTES", 256)
    monkeypatch.setattr(_runfile, "FILE_CHUNK_ROWS", 20)
    monkeypatch.setattr(_runfile, "_SPILL_BYTES", 1000)
    spilled = []
    real = _runfile._Spill.replay

    def replay(self):
        spilled.append(self.file is not None)
        return real(self)
    monkeypatch.setattr(_runfile._Spill, "replay", replay)
    for workers in ("1", "2"):
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
        code, out, err = cli(capsys, "-q", "-m", "all_trec", "-w", workers, qrels, "-")
        assert code == 0, err
        assert out == want
    assert spilled == [True, True]  # the text was read again from a temporary file


def test_ungrouped_gzip_file_is_read_again_not_kept(files, capsys, monkeypatch):
    # a regular file can be read a second time: no temporary copy of its text
    qrels, runs = files
    code, want, _ = cli(capsys, "-q", "-m", "all_trec", qrels, runs[1])
    text = runs[1].read_bytes().splitlines(keepends=True)
    packed = runs[1].with_name("ungrouped.gz")
    packed.write_bytes(gzip.compress(b"".join(text[2:] + text[:2])))
    monkeypatch.setattr(_runfile, "FILE_CHUNK_ROWS", 20)
    monkeypatch.setattr(_runfile, "_SPILL_BYTES", 0)

    def no_copy(*args, **kwargs):
        raise AssertionError("a regular file's text was copied")
    monkeypatch.setattr(_runfile.tempfile, "TemporaryFile", no_copy)
    for workers in ("1", "2"):
        code, out, err = cli(capsys, "-q", "-m", "all_trec", "-w", workers, qrels, packed)
        assert code == 0, err
        assert out == want


class _FullDisk(io.BytesIO):
    def write(self, b):
        raise OSError(28, "No space left on device")


def test_a_failed_copy_of_piped_text_matters_only_when_it_is_read_back(files, capsys,
                                                                        monkeypatch):
    qrels, runs = files
    code, want, _ = cli(capsys, "-q", "-m", "all_trec", qrels, runs[1])
    grouped = runs[1].read_bytes()
    text = grouped.splitlines(keepends=True)
    monkeypatch.setattr("qafast.io.trec.CHUNK_BYTES", 256)
    monkeypatch.setattr(_runfile, "FILE_CHUNK_ROWS", 20)
    monkeypatch.setattr(_runfile, "_SPILL_BYTES", 0)
    monkeypatch.setattr(_runfile.tempfile, "TemporaryFile", lambda **kw: _FullDisk())
    for workers in ("1", "2"):
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(grouped)))
        code, out, err = cli(capsys, "-q", "-m", "all_trec", "-w", workers, qrels, "-")
        assert code == 0, err  # grouped: the copy is never needed
        assert out == want
        run = io.BytesIO(b"".join(text[2:] + text[:2]))
        with pytest.raises(OSError, match="not grouped by query.*No space left on device") as e:
            qafast.evaluate(str(qrels), run, ["map"], workers=int(workers))
        assert e.value.filename == "<file>"  # named as a format error in it would be


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="F_SETPIPE_SZ is Linux's")
def test_a_piped_run_gets_a_wider_pipe(files):
    import fcntl
    import os
    import threading

    qrels, runs = files
    want = qafast.evaluate(str(qrels), str(runs[1]), ["map", "P_5"], per_query=True)
    r, w = os.pipe()
    data = runs[1].read_bytes()

    def feed():
        with os.fdopen(w, "wb") as out:
            out.write(data)
    writer = threading.Thread(target=feed)
    writer.start()
    with os.fdopen(r, "rb", buffering=0) as source:
        got = qafast.evaluate(str(qrels), source, ["map", "P_5"], per_query=True)
        size = fcntl.fcntl(source.fileno(), fcntl.F_GETPIPE_SZ)
    writer.join()
    assert got == want
    # the kernel may refuse (a lower pipe-max-size, the user's pipe quota): never narrower
    assert size >= 65536
    with open("/proc/sys/fs/pipe-max-size") as f:
        if int(f.read()) >= (1 << 20):
            assert size == 1 << 20


# ------------------------------------------------------------------------------ many runs


def test_many_runs_in_text_each_block_headed_by_its_run(files, capsys):
    qrels, runs = files
    singles = []
    for r in runs:
        code, out, err = cli(capsys, "-q", "-m", "official", qrels, r)
        assert code == 0, err
        singles.append(out)
    for workers in ("1", "2", "-1"):
        code, out, err = cli(capsys, "-q", "-m", "official", "-w", workers, qrels, *runs)
        assert code == 0, err
        assert out == "\n".join(f"==> {r} <==\n{s}" for r, s in zip(runs, singles))


def test_many_runs_json_and_csv_are_one_table(files, capsys):
    qrels, runs = files
    code, out, err = cli(capsys, "-q", "-m", "map", "-m", "P.5", "-m", "runid", "-o", "json",
                         qrels, *runs)
    assert code == 0, err
    doc = json.loads(out)
    assert list(doc) == [str(r) for r in runs]
    for r in runs:
        code, one, err = cli(capsys, "-q", "-m", "map", "-m", "P.5", "-m", "runid", "-o",
                             "json", qrels, r)
        assert doc[str(r)] == json.loads(one)
    code, out, err = cli(capsys, "-q", "-m", "map", "-m", "P.5", "-m", "runid", "-m",
                         "gm_map", "-o", "csv", qrels, *runs)
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert list(rows[0]) == ["run", "query", "runid", "map", "gm_map", "P_5"]
    assert len(rows) == 3 * (60 + 1)
    for r in runs:
        mine = {row["query"]: row for row in rows if row["run"] == str(r)}
        per_query = doc[str(r)]["per_query"]
        for qid, vals in per_query.items():
            assert float(mine[qid]["map"]) == vals["map"]  # full precision
            assert mine[qid]["gm_map"] == "" and mine[qid]["runid"] == ""
        assert mine["all"]["runid"] == f"sys{runs.index(r)}"
        assert float(mine["all"]["P_5"]) == doc[str(r)]["all"]["P_5"]


def test_csv_writes_an_undefined_value_as_nan(tmp_path, capsys):
    (tmp_path / "q").write_text("q1 0 a 1\nq2 0 x 1\n")
    (tmp_path / "r").write_text("q1 Q0 a 1 0.5 r\nq2 Q0 w 2 0.4 r\n")
    code, out, err = cli(capsys, "-J", "-q", "-o", "csv", "-m", "iprec_at_recall.0",
                         tmp_path / "q", tmp_path / "r")
    assert code == 0, err
    assert out.splitlines()[1:] == [f"{tmp_path / 'r'},q1,1.0", f"{tmp_path / 'r'},q2,nan",
                                    f"{tmp_path / 'r'},all,nan"]


@pytest.mark.parametrize("workers", [1, 2, 3, -1])
def test_evaluate_runs_equals_evaluate_per_run(files, workers):
    qrels, runs = files
    want = {str(r): qafast.evaluate(str(qrels), str(r), MEASURES) for r in runs}
    assert qafast.evaluate_runs(str(qrels), [str(r) for r in runs], MEASURES,
                                workers=workers) == want
    per_q = qafast.evaluate_runs(qrels, runs, MEASURES, per_query=True, queries="qrels",
                                 workers=workers)
    for r in runs:
        assert per_q[str(r)] == qafast.evaluate(qrels, r, MEASURES, per_query=True,
                                                queries="qrels")


def test_evaluate_runs_takes_a_mapping_of_any_runs(files):
    qrels, runs = files
    q = qafast.Qrels.from_file(qrels)
    run_dict = qafast.Run.from_file(runs[0]).to_dict()
    got = qafast.evaluate_runs(q, {"file": runs[0], "dict": run_dict,
                                   "Run": qafast.Run.from_file(runs[0]),
                                   "bytes": runs[0].read_bytes()}, ["map", "ndcg@10"],
                               workers=2)
    assert list(got) == ["file", "dict", "Run", "bytes"]
    assert got["file"] == got["dict"] == got["Run"] == got["bytes"]


def test_evaluate_runs_refuses_bad_runs_before_evaluating_any(files, tmp_path, monkeypatch):
    qrels, runs = files
    evaluated = []
    real = _runfile.evaluate_run_source
    monkeypatch.setattr(_runfile, "evaluate_run_source",
                        lambda *a, **k: evaluated.append(1) or real(*a, **k))
    with pytest.raises(FileNotFoundError, match=r"run file '.*nope.txt' cannot be read"):
        qafast.evaluate_runs(qrels, [runs[0], tmp_path / "nope.txt"], "map")
    with pytest.raises(IsADirectoryError, match=r"run 'b' \('.*'\) cannot be read"):
        qafast.evaluate_runs(qrels, {"a": runs[0], "b": str(tmp_path)}, "map")
    assert not evaluated
    with pytest.raises(ValueError, match="given twice"):
        qafast.evaluate_runs(qrels, [runs[0], runs[0]], "map")
    with pytest.raises(TypeError, match="mapping"):
        qafast.evaluate_runs(qrels, str(runs[0]), "map")
    with pytest.raises(TypeError, match="must be paths"):
        qafast.evaluate_runs(qrels, [{"q": {"d": 1.0}}], "map")


def test_cli_names_a_missing_or_unreadable_run(files, tmp_path, capsys):
    qrels, runs = files
    code, out, err = cli(capsys, qrels, runs[0], tmp_path / "missing.run")
    assert code == 2 and out == ""
    assert err == (f"qafast trec: run file '{tmp_path / 'missing.run'}' cannot be read: "
                   "No such file or directory\n")
    code, out, err = cli(capsys, qrels, runs[0], tmp_path)
    assert code == 2 and "Is a directory" in err and str(tmp_path) in err
    code, out, err = cli(capsys, qrels, "-", "-")
    assert code == 1 and "only once" in err
    code, out, err = cli(capsys, qrels, runs[0], runs[0])
    assert code == 1 and "twice" in err


def test_an_error_in_one_of_many_runs_names_that_run(files, capsys):
    qrels, runs = files
    runs[1].write_text(runs[1].read_text() + "q9 Q0 d1 1 0.5\n")
    code, out, err = cli(capsys, "-w", "2", qrels, *runs)
    assert code == 2 and out == ""
    n = len(runs[1].read_text().splitlines())
    assert err.startswith(f"qafast trec: {runs[1]}, line {n}: expected at least 6")


# ------------------------------------------------------------------------------ line ends


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_complete_last_line_without_newline_is_read(files, capsys, workers):
    qrels, runs = files
    code, want, _ = cli(capsys, "-q", "-m", "all_trec", qrels, runs[0])
    runs[0].write_text(runs[0].read_text().rstrip("\n"))
    code, out, err = cli(capsys, "-q", "-m", "all_trec", "-w", workers, qrels, runs[0])
    assert code == 0, err
    assert out == want


@pytest.mark.parametrize("cut", ["q0059 Q0 d3_1 2 1.5", "q0059 Q0 d3_1 2", "q0059 Q0"])
def test_a_file_that_ends_mid_line_names_file_and_line(files, capsys, cut):
    qrels, runs = files
    text = runs[0].read_text()
    runs[0].write_text(text + cut)
    n = len(text.splitlines()) + 1
    code, out, err = cli(capsys, qrels, runs[0])
    assert code == 2 and out == ""
    assert err.startswith(f"qafast trec: {runs[0]}, line {n}: expected at least 6 "
                          "whitespace-separated fields")
    with pytest.raises(ValueError, match=rf"{runs[0].name}, line {n}: expected at least 6"):
        qafast.evaluate(qrels, runs[0], "map", workers=2)
    with pytest.raises(ValueError, match=rf"{runs[0].name}, line {n}: expected at least 6"):
        qafast.evaluate_runs(qrels, [runs[1], runs[0]], "map", workers=2)


def test_queries_must_be_run_or_qrels_for_a_file_too(files):
    qrels, runs = files
    with pytest.raises(ValueError, match="queries must be 'run'"):
        qafast.evaluate(qrels, runs[0], "map", queries="all")
    with pytest.raises(ValueError, match="queries must be 'run'"):
        qafast.evaluate_runs(qrels, runs, "map", queries="all", workers=2)


def test_many_runs_from_fifos(files, tmp_path, capsys):
    # as `qafast trec qrels <(zcat a.gz) <(zcat b.gz)` gives them: pipes, each read once
    import os
    import threading

    qrels, runs = files
    code, want, _ = cli(capsys, "-m", "official", qrels, runs[0], runs[1])
    fifos = []
    def write(path, data):
        with open(path, "wb") as f:
            f.write(data)

    for k, r in enumerate(runs[:2]):
        p = tmp_path / f"fifo{k}"
        os.mkfifo(p)
        fifos.append(p)
        threading.Thread(target=write, args=(p, r.read_bytes()), daemon=True).start()
    code, out, err = cli(capsys, "-m", "official", "-w", "2", qrels, *fifos)
    assert code == 0, err
    assert out == want.replace(str(runs[0]), str(fifos[0])).replace(str(runs[1]),
                                                                     str(fifos[1]))


def test_of_errors_in_several_ranges_the_first_in_the_file_is_raised(tmp_path, monkeypatch):
    monkeypatch.setattr(_runfile, "_RANGE_MIN_BYTES", 100)
    lines = run_text(20, 10).splitlines(keepends=True)
    lines[15] = "q0001 Q0 dx 1 first-error r\n"
    lines[185] = "q0018 Q0 dy 1 second-error r\n"
    run = tmp_path / "run"
    run.write_text("".join(lines))
    # the first range takes longer, so the second fails first
    real = _runfile._stream

    def slow_first(qrels, path, blocks, columns, options, relcols, on_bytes, line_base,
                   cancel=None, **kwargs):
        if line_base() == 0:
            import time
            time.sleep(0.3)
        return real(qrels, path, blocks, columns, options, relcols, on_bytes, line_base,
                    cancel, **kwargs)
    monkeypatch.setattr(_runfile, "_stream", slow_first)
    with pytest.raises(ValueError, match=r"run, line 16: .*'first-error'"):
        qafast.evaluate(qrels_text(20, 10).encode(), str(run), MEASURES, workers=4)


def test_ranges_after_a_failed_one_are_not_read(tmp_path, monkeypatch):
    # their errors would come later in the file than the one raised
    monkeypatch.setattr(_runfile, "_RANGE_MIN_BYTES", 100)
    lines = run_text(40, 10).splitlines(keepends=True)
    lines[5] = "q0000 Q0 dx 1 not-a-score r\n"
    run = tmp_path / "run"
    run.write_text("".join(lines))
    ranges = _runfile._thread_ranges(str(run), 1)
    assert len(ranges) > 4
    started = []
    real = _runfile._stream_range

    def counted(qrels, path, start, *args, **kwargs):
        started.append(start)
        if start:  # the failing first range ends first
            import time
            time.sleep(0.2)
        return real(qrels, path, start, *args, **kwargs)
    monkeypatch.setattr(_runfile, "_stream_range", counted)
    monkeypatch.setattr(_runfile, "_thread_ranges", lambda path, workers: ranges)
    with pytest.raises(ValueError, match=r"run, line 6: .*'not-a-score'"):
        qafast.evaluate(qrels_text(40, 10).encode(), str(run), MEASURES, workers=2)
    assert 0 in started and len(started) <= 2


def test_an_error_in_one_run_stops_the_others_being_read(files, monkeypatch):
    import time

    from qafast.io import trec

    qrels, runs = files
    monkeypatch.setattr(trec, "CHUNK_BYTES", 256)
    yielded = []
    real = trec._buffer_blocks

    def slow(data, chunk):
        for block in real(data, chunk):
            time.sleep(0.005)
            yielded.append(1)
            yield block
    monkeypatch.setattr(trec, "_buffer_blocks", slow)
    slow_run = runs[1].read_bytes()
    total = sum(1 for _ in real(memoryview(slow_run), 256))
    bad = runs[0].read_text().replace("sys0\n", "sys0 \n", 1).replace(" Q0 ", " ", 1)
    with pytest.raises(ValueError, match=r"<bytes>, line 1: expected at least 6") as e:
        qafast.evaluate_runs(qrels, {"bad": bad.encode(), "slow": slow_run}, "map",
                             workers=2)
    assert e.value.__notes__ == ["while evaluating run 'bad'"]
    assert len(yielded) < total


@pytest.mark.parametrize("chunk", [8, 64, 4096])
def test_range_blocks_give_the_range_in_whole_lines(tmp_path, chunk):
    rnd = random.Random(chunk)
    text = "".join("x" * rnd.randrange(0, 200) + "\n" for _ in range(300)) + "tail"
    p = tmp_path / "f"
    p.write_text(text)
    data = text.encode()
    starts = [0] + sorted(rnd.sample([i + 1 for i, c in enumerate(data) if c == 10], 5))
    for a, b in zip(starts, starts[1:] + [len(data)]):
        with open(p, "rb", buffering=0) as raw:
            got = [bytes(block) for block in _runfile._range_blocks(raw, a, b, chunk)]
        assert b"".join(got) == data[a:b]
        assert all(g.endswith(b"\n") for g in got[:-1])


def test_range_blocks_of_a_file_truncated_while_read_raise(tmp_path):
    # the unfinished line was taken for one longer than the buffers, which doubled until
    # memory ran out
    p = tmp_path / "run.txt"
    p.write_text(run_text(50, 20))
    size = p.stat().st_size
    with open(p, "rb", buffering=0) as raw:
        blocks = _runfile._range_blocks(raw, 0, size, 4096)
        next(blocks)
        os.truncate(p, 5000)
        with pytest.raises(TrecFormatError, match=rf"run\.txt: the file is now 5000 bytes long, "
                           rf"but it had at least {size} when its reading began: it was "
                           rf"truncated or rewritten while being read"):
            list(blocks)


@pytest.mark.parametrize("workers", [1, 2])
def test_a_run_truncated_while_evaluated_is_an_error_not_a_shorter_mean(files, monkeypatch,
                                                                        workers):
    qrels, runs = files
    size = runs[0].stat().st_size
    real = _runfile._range_blocks

    def truncating(raw, start, end, chunk, reused=None):
        for k, block in enumerate(real(raw, start, end, 256, reused)):
            yield block
            if k == 0:
                os.truncate(raw.name, min(os.path.getsize(raw.name), size // 4))

    monkeypatch.setattr(_runfile, "_range_blocks", truncating)
    with pytest.raises(TrecFormatError, match="truncated or rewritten while being read"):
        qafast.evaluate(str(qrels), str(runs[0]), "map", workers=workers)


def test_an_error_in_a_segment_of_one_of_many_runs_is_that_error(files, monkeypatch):
    # each run's segments stop at its own error; the other runs stop as any error stops
    # them, and the error raised is the failing run's, named
    qrels, runs = files
    small_segments(monkeypatch, 300)
    good = runs[0].read_bytes()
    lines = runs[1].read_text().splitlines(keepends=True)
    lines[700] = "q0033 Q0 dx 1 not-a-number sys1\n"
    real = _runfile._stream

    def good_is_slow(qrels, path, blocks, *args, **kwargs):
        import time

        blocks = list(blocks)
        first = bytes(blocks[0])
        if first.startswith(b"q0000 ") and b"sys0" in first:
            time.sleep(0.3)  # the good run's first segment is read when the bad one fails
        return real(qrels, path, iter(blocks), *args, **kwargs)
    monkeypatch.setattr(_runfile, "_stream", good_is_slow)
    for order in (("good", "bad"), ("bad", "good")):
        given = {"good": good, "bad": "".join(lines).encode()}
        with pytest.raises(ValueError, match=r"<bytes>, line 701: .*'not-a-number'") as e:
            qafast.evaluate_runs(qrels, {k: given[k] for k in order}, "map", workers=4)
        assert e.value.__notes__ == ["while evaluating run 'bad'"]
