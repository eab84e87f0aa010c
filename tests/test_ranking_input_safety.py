"""Ranking inputs that used to fault or give silent wrong numbers: dicts whose lengths or
scores change while they are encoded, runs read from a pipe, unsigned 64-bit ids, and string
ids with trailing NUL characters. Each gives the right numbers or a clear error."""

import io
import os
import random
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import qafast
from qafast import _kernels
from qafast import _runfile
from _examples import examples

MEASURES = ["num_ret", "num_rel_ret", "map", "P_5", "ndcg_cut_10", "recip_rank"]


def run_lines(n_queries, docs_per_query, *, grouped, seed=0):
    rnd = random.Random(seed)
    rows = [(f"q{q}", f"d{rnd.randrange(10 * docs_per_query)}_{k}", rnd.random())
            for q in range(n_queries) for k in range(docs_per_query)]
    if not grouped:
        rnd.shuffle(rows)
    return "".join(f"{q} Q0 {d} 0 {s!r} r\n" for q, d, s in rows).encode()


def qrels_for(n_queries, docs_per_query, seed=0):
    rnd = random.Random(seed + 1)
    return {f"q{q}": {f"d{rnd.randrange(10 * docs_per_query)}_{k}": rnd.randrange(3)
                      for k in range(docs_per_query)} for q in range(n_queries)}


# --------------------------------------------------------------------------------------------
# a run read from a FIFO or another stream that gives its lines once


def evaluate_through_fifo(tmp_path, data, qrels, **kw):
    """evaluate(qrels, path of a FIFO a thread writes ``data`` to). Should the FIFO be
    opened a second time, a watchdog opens and closes its writing end, so the reader sees an
    empty stream instead of waiting forever."""
    path = tmp_path / "run.fifo"
    os.mkfifo(path)
    done = threading.Event()

    def writer():
        try:
            with open(path, "wb") as f:
                f.write(data)
        except BrokenPipeError:
            pass  # the reader closed early (the bug this guards against)
        while not done.is_set():  # unblock any second open()
            try:
                fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:  # no reader: nothing waits
                done.wait(0.05)
                continue
            os.close(fd)
            done.wait(0.05)

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    try:
        return qafast.evaluate(qrels, str(path), MEASURES, **kw)
    finally:
        done.set()
        thread.join(10)


@pytest.mark.parametrize("grouped", [False, True])
def test_run_from_a_fifo_is_read_once(tmp_path, grouped):
    data = run_lines(60, 50, grouped=grouped)
    qrels = qrels_for(60, 50)
    want = qafast.evaluate(qrels, data, MEASURES)
    assert want["num_ret"] == 3000
    assert evaluate_through_fifo(tmp_path, data, qrels) == want


def test_ungrouped_run_from_a_fifo_after_some_queries_were_measured(tmp_path, monkeypatch):
    # small chunks: queries are measured before the run is found ungrouped
    import qafast.io.trec as trec

    monkeypatch.setattr(trec, "CHUNK_BYTES", 4096)
    monkeypatch.setattr(_runfile, "FILE_CHUNK_ROWS", 64)
    lines = run_lines(80, 40, grouped=True, seed=3).splitlines(keepends=True)
    # grouped for 2000 lines, then the first query's first line comes back at the end
    data = b"".join(lines[1:] + lines[:1])
    qrels = qrels_for(80, 40, seed=3)
    want = qafast.evaluate(qrels, qafast.Run.from_file(data), MEASURES)
    assert want["num_ret"] == 3200
    assert evaluate_through_fifo(tmp_path, data, qrels) == want


class OneWayReader(io.RawIOBase):
    """A binary stream that cannot seek, and counts how often it is read to the end."""

    def __init__(self, data):
        self._inner = io.BytesIO(data)
        self.ends = 0

    def readable(self):
        return True

    def seekable(self):
        return False

    def readinto(self, b):
        n = self._inner.readinto(b)
        if n == 0:
            self.ends += 1
        return n


def test_run_from_a_non_seekable_file_object_is_read_once():
    data = run_lines(30, 40, grouped=False, seed=5)
    qrels = qrels_for(30, 40, seed=5)
    want = qafast.evaluate(qrels, data, MEASURES)
    f = OneWayReader(data)
    assert qafast.evaluate(qrels, f, MEASURES) == want
    assert f.ends == 1
    f = OneWayReader(data)
    assert qafast.evaluate(qrels, qafast.Run.from_file(f), MEASURES) == want


# --------------------------------------------------------------------------------------------
# dicts that disagree with themselves


class LyingDict(dict):
    """A dict whose len(), values() and items() say it is empty."""

    def __len__(self):
        return 0

    def values(self):
        return iter(())

    def items(self):
        return iter(())


def test_dicts_whose_length_lies_are_read_as_they_are():
    plain = {"q1": {"d1": 0.5, "d2": 0.9, "d3": 0.1}, "q2": {"d4": 1.0, "d5": 2.0}}
    qrels = {"q1": {"d1": 1, "d3": 2}, "q2": {"d5": 1}}
    lying = LyingDict({q: LyingDict(docs) for q, docs in plain.items()})
    want = qafast.evaluate(qrels, plain, MEASURES, per_query=True)
    assert qafast.evaluate(qrels, lying, MEASURES, per_query=True) == want
    assert qafast.evaluate(qrels, qafast.Run(lying), MEASURES, per_query=True) == want
    assert qafast.Run(lying).to_dict() == plain
    lying_qrels = LyingDict({q: LyingDict(d) for q, d in qrels.items()})
    assert qafast.evaluate(lying_qrels, plain, MEASURES, per_query=True) == want


class Sneaky:
    """A score whose conversion to float adds (or removes) documents of another query."""

    def __init__(self, victim, add):
        self.victim, self.add = victim, add

    def __float__(self):
        if self.add:
            self.victim.update({f"x{i}": 1.0 for i in range(5000)})
        else:
            self.victim.clear()
        return 0.5


@pytest.mark.parametrize("add", [True, False])
def test_a_score_that_changes_another_query_is_refused(add):
    victim = {"d1": 0.1, "d2": 0.2}
    run = {"q1": {"a": Sneaky(victim, add)}, "q2": victim}
    with pytest.raises((ValueError, RuntimeError), match="changed"):
        qafast.Run(run)
    victim.clear()
    victim.update({"d1": 0.1, "d2": 0.2})
    with pytest.raises((ValueError, RuntimeError), match="changed"):
        qafast.evaluate({"q1": {"a": 1}, "q2": {"d1": 1}}, run, ["map"])


def test_a_score_that_changes_its_own_query_is_refused():
    docs = {"d1": 0.1}
    docs["a"] = Sneaky(docs, True)
    with pytest.raises((ValueError, RuntimeError), match="changed"):
        qafast.Run({"q1": docs})


def test_encoders_refuse_arrays_of_the_wrong_size():
    data = {"q1": {"d1": 1.0, "d2": 2.0}}
    e = np.empty
    with pytest.raises(ValueError):
        _kernels.encode_run_dict(data, e(2, np.int64), e(2), e(1, np.int64), e(2, np.int64),
                                 e(3, np.int64), [])
    with pytest.raises(ValueError):
        _kernels.encode_nested_dict(data, False, e(2, np.int64), e(2), e(2, np.int64),
                                    e(2, np.int64), e(2, np.int64), [])
    # more or fewer strings than the arrays hold
    with pytest.raises(ValueError, match="more than"):
        _kernels.encode_str_column(iter(["a", "b", "c"]), e(2, np.int64), e(2, np.int64),
                                   e(3, np.int64))
    with pytest.raises(ValueError, match="promised"):
        _kernels.encode_str_column(iter(["a"]), e(2, np.int64), e(2, np.int64), e(3, np.int64))
    # the nested encoder names the mismatch instead of writing past its arrays
    blob, bad = _kernels.encode_nested_dict(data, False, e(2, np.int64), e(1), e(1, np.int64),
                                            e(1, np.int64), e(2, np.int64), [])
    assert bad[3] == "changed"


# --------------------------------------------------------------------------------------------
# unsigned 64-bit ids and string ids with trailing NUL characters

BIG = 2**64 - 1


def test_uint64_document_ids_keep_their_value_and_order():
    docs = np.array([3, 2**63 + 5, BIG], dtype=np.uint64)
    run = qafast.Run.from_arrays(np.array(["q"] * 3), docs, np.zeros(3))
    assert run.to_dict() == {"q": {3: 0.0, 2**63 + 5: 0.0, BIG: 0.0}}
    # equal scores: the larger id ranks first, as for any integer ids
    for top in (int(d) for d in docs):
        qrels = qafast.Qrels.from_arrays(["q"], np.array([top], dtype=np.uint64), [1])
        got = qafast.evaluate(qrels, run, ["recip_rank"])["recip_rank"]
        assert got == {BIG: 1.0, 2**63 + 5: 0.5, 3: 1 / 3}[top]
    qrels = qafast.Qrels.from_arrays(["q", "q"], np.array([BIG, 3], dtype=np.uint64), [1, 2])
    assert qrels.to_dict() == {"q": {BIG: 1, 3: 2}}


def test_uint64_ids_meet_int64_ids():
    run = qafast.Run.from_arrays(["q"] * 3, np.array([3, 7, 2**63], dtype=np.uint64),
                                 [0.5, 0.5, 0.1])
    qrels = qafast.Qrels.from_arrays(["q", "q"], np.array([7, 3], dtype=np.int64), [1, 0])
    assert qafast.evaluate(qrels, run, ["recip_rank", "num_rel_ret"]) == {
        "recip_rank": 1.0, "num_rel_ret": 1}
    # and the other way round
    run2 = qafast.Run.from_arrays(["q"] * 2, np.array([3, 7]), [0.5, 0.5])
    qrels2 = qafast.Qrels.from_arrays(["q", "q"], np.array([BIG, 7], dtype=np.uint64), [0, 1])
    assert qafast.evaluate(qrels2, run2, ["recip_rank"]) == {"recip_rank": 1.0}
    negative = qafast.Qrels.from_arrays(["q"], np.array([-4]), [1])
    with pytest.raises(ValueError, match="negative"):
        qafast.evaluate(negative, run, ["map"])


def test_uint64_query_ids_keep_their_value():
    qids = np.array([2**63, BIG, 5], dtype=np.uint64)
    run = qafast.Run.from_arrays(qids, ["d1", "d2", "d3"], [1.0, 2.0, 3.0])
    assert run.query_ids == [2**63, BIG, 5]
    qrels = {2**63: {"d1": 1}, BIG: {"d9": 1}, 5: {"d3": 1}}
    got = qafast.evaluate(qrels, run, ["recip_rank"], per_query=True)
    assert got == {5: {"recip_rank": 1.0}, 2**63: {"recip_rank": 1.0},
                   BIG: {"recip_rank": 0.0}}
    # Python ints beyond int64 in dicts, too
    assert qafast.evaluate({2**70: {"d": 1}}, {2**70: {"d": 1.0}}, ["P_1"]) == {"P_1": 1.0}


def test_string_ids_with_trailing_nul_characters_are_kept():
    run = qafast.Run.from_arrays(["q1", "q1"], ["d1\x00", "d2"], [2.0, 1.0])
    assert run.to_dict() == {"q1": {"d1\x00": 2.0, "d2": 1.0}}
    qrels = {"q1": {"d1": 1, "d2": 0}}
    assert qafast.evaluate(qrels, run, ["P_1", "num_rel_ret"]) == {"P_1": 0.0,
                                                                  "num_rel_ret": 0}
    qrels_nul = qafast.Qrels.from_arrays(("q1",), (b"d1\x00",), (1,))
    assert qrels_nul.to_dict() == {"q1": {"d1\x00": 1}}
    assert qafast.evaluate(qrels_nul, run, ["P_1"]) == {"P_1": 1.0}
    nul_query = qafast.Run.from_arrays(["q1\x00"], ["d1"], [1.0])
    assert nul_query.query_ids == ["q1\x00"]
    with pytest.raises(ValueError, match="no query in common"):
        qafast.evaluate(qrels, nul_query, ["map"])


def test_numpy_str_ids_in_object_arrays():
    qids = np.array([np.str_("q1"), np.str_("q1")], dtype=object)
    docs = np.array([np.str_("d1"), np.str_("d2")], dtype=object)
    run = qafast.Run.from_arrays(qids, docs, [1.0, 2.0])
    assert run.query_ids == ["q1"] and type(run.query_ids[0]) is str
    assert qafast.evaluate({"q1": {"d2": 1}}, run, ["P_1"]) == {"P_1": 1.0}


def test_column_that_lies_about_its_length():
    class Short(list):
        def __len__(self):
            return 1

    run = None
    try:
        run = qafast.Run.from_arrays(Short(["q1", "q1"]), Short(["d1", "d2"]), [1.0, 2.0])
    except ValueError:
        return  # a clear error is fine too
    assert run.to_dict() == {"q1": {"d1": 1.0, "d2": 2.0}}


@settings(max_examples=examples(60), deadline=None)
@given(st.data())
def test_uint64_ids_rank_as_their_zero_padded_decimal_strings(data):
    # zero-padded decimals sort as strings exactly as the numbers do, so the string path
    # (trec_eval's strcmp order) is the reference for integer ids over the whole uint64 range
    ids = st.one_of(st.integers(0, 2**64 - 1), st.integers(2**63 - 3, 2**63 + 3),
                    st.integers(0, 20))
    n_q = data.draw(st.integers(1, 3))
    qids, docs, scores, judged = [], [], [], {}
    for q in range(n_q):
        ds = data.draw(st.lists(ids, min_size=1, max_size=8, unique=True))
        for d in ds:
            qids.append(q)
            docs.append(d)
            scores.append(data.draw(st.sampled_from([0.0, 0.5, 1.0])))
            if data.draw(st.booleans()):
                judged[(q, d)] = data.draw(st.integers(0, 2))
    if not judged:
        judged[(qids[0], docs[0])] = 1
    udocs = np.array(docs, dtype=np.uint64)
    run = qafast.Run.from_arrays(np.array(qids), udocs, scores)
    jq, jd = zip(*judged)
    qrels = qafast.Qrels.from_arrays(np.array(jq), np.array(jd, dtype=np.uint64),
                                     list(judged.values()))
    as_str = [f"{d:020d}" for d in docs]
    run_s = qafast.Run.from_arrays(np.array(qids), as_str, scores)
    qrels_s = qafast.Qrels.from_arrays(np.array(jq), [f"{d:020d}" for d in jd],
                                       list(judged.values()))
    assert qafast.evaluate(qrels, run, MEASURES, per_query=True) == \
        qafast.evaluate(qrels_s, run_s, MEASURES, per_query=True)
    assert run.to_dict() == {q: {int(d): s for d, s in ds.items()}
                             for q, ds in run_s.to_dict().items()}


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["q1", "q2", "q\x00", "q1\x00"]),
                          st.text(alphabet="ab\x00", min_size=1, max_size=4),
                          st.sampled_from([0.0, 1.0])), min_size=1, max_size=12,
                unique_by=lambda r: r[:2]))
def test_string_ids_from_lists_equal_the_dict_path(rows):
    qids, docs, scores = map(list, zip(*rows))
    as_dict: dict = {}
    for q, d, s in rows:
        as_dict.setdefault(q, {})[d] = s
    run = qafast.Run.from_arrays(qids, docs, scores)
    assert run.to_dict() == as_dict
    qrels = {q: {d: 1 for d in list(ds)[::2]} for q, ds in as_dict.items()}
    assert qafast.evaluate(qrels, run, MEASURES, per_query=True) == \
        qafast.evaluate(qrels, as_dict, MEASURES, per_query=True)


@given(st.lists(st.integers(0, 6), max_size=60), st.integers(0, 3))
def test_group_offsets_are_the_summed_counts_of_each_query(qidx, extra):
    # a file's query index column (int32) measured where it is, not copied to int64
    nq = (max(qidx) + 1 if qidx else 0) + extra
    index = np.array(qidx, dtype=np.int32)
    offsets = np.full(nq + 1, -5, dtype=np.int64)
    grouped = _kernels.group_offsets(index, offsets)
    counts = np.bincount(index, minlength=nq) if qidx else np.zeros(nq, dtype=np.int64)
    assert offsets.tolist() == [0] + np.cumsum(counts).tolist()
    assert grouped == (qidx == sorted(qidx))


def test_group_offsets_refuse_an_index_outside_the_queries():
    offsets = np.zeros(3, dtype=np.int64)
    for bad in ([0, 2], [1, -1]):
        with pytest.raises(ValueError, match=r"query index -?\d of row 1 is outside 0\.\.1"):
            _kernels.group_offsets(np.array(bad, dtype=np.int32), offsets)
    with pytest.raises(ValueError, match="at least one entry"):
        _kernels.group_offsets(np.zeros(0, dtype=np.int32), offsets[:0])
