"""Run.to_trec / Qrels.to_trec / save: TREC text that reads back as the same run, ranked as
trec_eval ranks it, and that trec_eval scores as qafast.evaluate scores the run."""

from __future__ import annotations

import gzip
import importlib.util
import io
import math
import shutil
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import qafast
from _examples import examples
from qafast.errors import InputError, InputTypeError

TREC_EVAL = Path("/work/tools/trec_eval/trec_eval")
needs_trec_eval = pytest.mark.skipif(not TREC_EVAL.exists() and shutil.which("trec_eval") is None,
                                     reason="no trec_eval binary")

# ids without ASCII whitespace (a TREC field cannot hold it), unicode and NUL included
IDS = st.text(st.characters(blacklist_characters=" \t\n\v\f\r", blacklist_categories=["Cs"]),
              min_size=1, max_size=6)
QIDS = IDS.filter(lambda q: not q.startswith("#"))
SCORES = st.one_of(st.sampled_from([0.0, -0.0, 1.0, 0.5, 1e-300, 5e-324, 1e300, -7.25]),
                   st.floats(allow_nan=False))


def _bits(x: float) -> bytes:
    return struct.pack("<d", x)


def _same(run: dict, back: dict) -> None:
    """The run read back: the same documents and the very same doubles (-0.0 included);
    queries without documents write no line."""
    assert set(back) == {q for q, docs in run.items() if docs}
    for q, docs in back.items():
        assert {d: _bits(s) for d, s in docs.items()} == {d: _bits(s) for d, s in run[q].items()}


@settings(max_examples=examples(150), deadline=None)
@given(run=st.dictionaries(QIDS, st.dictionaries(IDS, SCORES, max_size=6), max_size=4))
def test_a_written_run_reads_back_as_itself(run):
    text = qafast.Run(run).to_trec()
    _same(run, qafast.Run.from_file(text).to_dict())


@settings(max_examples=examples(60), deadline=None)
@given(run=st.dictionaries(QIDS, st.dictionaries(IDS, st.sampled_from([0.0, 1.0, 2.5]),
                                                 max_size=6), max_size=3))
def test_lines_are_ranked_as_trec_eval_ranks(run):
    text = qafast.Run(run).to_trec().decode()
    lines = [line.split(" ") for line in text.split("\n")[:-1]]
    for q, docs in run.items():
        mine = [fields for fields in lines if fields[0] == q]
        # score descending, then document id descending (strcmp: code point order)
        want = sorted(sorted(docs, reverse=True), key=docs.get, reverse=True)
        assert [f[2] for f in mine] == want
        assert [f[3] for f in mine] == [str(i) for i in range(1, len(want) + 1)]
        assert all(f[1] == "Q0" and f[5] == "qafast" for f in mine)


def test_depth_and_tag():
    run = qafast.Run({"q1": {"a": 1.0, "b": 3.0, "c": 2.0}, "q2": {"d": 0.1}, "q3": {}})
    assert run.to_trec(depth=2, tag="sys") == (b"q1 Q0 b 1 3.0 sys\nq1 Q0 c 2 2.0 sys\n"
                                               b"q2 Q0 d 1 0.1 sys\n")
    # a run read from a file keeps its tag
    assert qafast.Run.from_file(run.to_trec(tag="bm25")).to_trec().endswith(b" bm25\n")


def test_integer_ids_are_written_as_integers():
    ids = np.array([2**64 - 1, 7, 2**63], dtype=np.uint64)
    run = qafast.Run.from_arrays([1, 1, 2], ids, [0.5, 0.5, 1.0])
    assert run.to_trec() == (b"1 Q0 18446744073709551615 1 0.5 qafast\n1 Q0 7 2 0.5 qafast\n"
                             b"2 Q0 9223372036854775808 1 1.0 qafast\n")
    qrels = qafast.Qrels.from_arrays(["q"], np.array([-3]), [2])
    assert qrels.to_trec() == b"q 0 -3 2\n"


def test_targets(tmp_path):
    run = qafast.Run({"q": {"é": 1.5, "日本": 2.0}})
    text = run.to_trec()
    assert text.decode() == "q Q0 日本 1 2.0 qafast\nq Q0 é 2 1.5 qafast\n"
    buf = io.StringIO()
    assert run.to_trec(buf) is None and buf.getvalue().encode() == text
    raw = io.BytesIO()
    run.to_trec(raw)
    assert raw.getvalue() == text
    run.to_trec(tmp_path / "r.txt")
    assert (tmp_path / "r.txt").read_bytes() == text
    run.save(tmp_path / "r.run.gz")
    assert gzip.decompress((tmp_path / "r.run.gz").read_bytes()) == text
    assert qafast.Run.from_file(tmp_path / "r.run.gz").to_dict() == run.to_dict()
    for suffix in (".trec", ".txt", ".run", ".qrels", ".TREC"):
        run.save(str(tmp_path / f"x{suffix}"), tag="t")
        assert (tmp_path / f"x{suffix}").read_bytes() == run.to_trec(tag="t")


def test_qrels_write_and_read_back(tmp_path):
    data = {"q1": {"d1": 2, "d2": 0, "d3": -1}, "q2": {"é": 1}}
    qrels = qafast.Qrels(data)
    qrels.save(tmp_path / "a.qrels")
    assert qafast.Qrels.from_file(tmp_path / "a.qrels").to_dict() == data
    qrels.save(tmp_path / "a.qrels.gz")
    assert qafast.Qrels.from_file(tmp_path / "a.qrels.gz").to_dict() == data
    lines = qrels.to_trec().decode().splitlines()
    assert sorted(lines) == ["q1 0 d1 2", "q1 0 d2 0", "q1 0 d3 -1", "q2 0 é 1"]


@pytest.mark.parametrize("data, match", [
    ({"q": {"a b": 1.0}}, "document id 'a b' holds whitespace"),
    ({"q": {"a\tb": 1.0}}, "holds whitespace"),
    ({"q": {"": 1.0}}, "empty document id"),
    ({"q r": {"a": 1.0}}, "query id 'q r' holds whitespace"),
    ({"#q": {"a": 1.0}}, "starts with '#'"),
    ({"": {"a": 1.0}}, "query id '' is empty"),
])
def test_ids_a_trec_reader_would_split_or_skip_are_refused(data, match):
    with pytest.raises(InputError, match=match):
        qafast.Run(data).to_trec()
    grades = {q: {d: 1 for d in docs} for q, docs in data.items()}
    with pytest.raises(InputError, match=match):
        qafast.Qrels(grades).to_trec()


def test_whitespace_below_the_depth_is_not_written():
    run = qafast.Run({"q": {"a": 2.0, "b c": 1.0}})
    assert run.to_trec(depth=1) == b"q Q0 a 1 2.0 qafast\n"


@pytest.mark.parametrize("kwargs, error, match", [
    ({"tag": "a b"}, InputError, "tag"),
    ({"tag": ""}, InputError, "tag"),
    ({"tag": 3}, InputTypeError, "tag must be a str"),
    ({"depth": 0}, InputError, "depth"),
    ({"depth": True}, InputError, "depth"),
    ({"depth": 1.5}, InputError, "depth"),
])
def test_bad_options_are_refused(kwargs, error, match):
    with pytest.raises(error, match=match):
        qafast.Run({"q": {"a": 1.0}}).to_trec(**kwargs)


def test_save_refuses_what_it_cannot_write(tmp_path, monkeypatch):
    run = qafast.Run({"q": {"a": 1.0}})
    with pytest.raises(InputError, match="unknown suffix '.json'"):
        run.save(tmp_path / "r.json")
    with pytest.raises(InputError, match="unknown suffix"):
        run.save(tmp_path / "run")
    with pytest.raises(InputTypeError, match="save takes a path"):
        run.save(io.BytesIO())
    written = []
    monkeypatch.setattr(qafast.Run, "to_parquet", lambda self, path: written.append(path))
    run.save(tmp_path / "r.parquet")
    assert written == [str(tmp_path / "r.parquet")]
    monkeypatch.undo()
    if importlib.util.find_spec("pyarrow") is not None:
        run.save(tmp_path / "r.parquet")
        assert qafast.Run.from_arrow(str(tmp_path / "r.parquet")).to_dict() == run.to_dict()
    with pytest.raises(InputTypeError, match="cannot write to a int"):
        run.to_trec(3)


@needs_trec_eval
@settings(max_examples=examples(25), deadline=None)
@given(seed=st.integers(0, 2**32 - 1), depth=st.sampled_from([None, 3]))
def test_trec_eval_scores_the_written_file_as_evaluate_scores_the_run(tmp_path_factory, seed,
                                                                      depth):
    rng = np.random.default_rng(seed)
    tmp = tmp_path_factory.mktemp("w")
    run, qrels = {}, {}
    for q in range(int(rng.integers(1, 5))):
        docs = [f"d{int(d)}" for d in rng.choice(30, int(rng.integers(1, 12)), replace=False)]
        # tied scores, and scores that print with many digits
        run[f"q{q}"] = {d: float(rng.choice([0.5, 1.0, rng.random() * 10])) for d in docs}
        qrels[f"q{q}"] = {f"d{int(d)}": int(rng.integers(0, 3)) for d in rng.choice(30, 8)}
    written = qafast.Run(run)
    written.save(tmp / "run.trec", depth=depth)
    qafast.Qrels(qrels).save(tmp / "q.qrels")
    binary = str(TREC_EVAL) if TREC_EVAL.exists() else shutil.which("trec_eval")
    measures = ["map", "ndcg", "P_5", "recip_rank", "bpref"]
    options = ["-m", "map", "-m", "ndcg", "-m", "P.5", "-m", "recip_rank", "-m", "bpref"]
    out = subprocess.run([binary, "-q", *options,
                          str(tmp / "q.qrels"), str(tmp / "run.trec")],
                         capture_output=True, text=True, check=True).stdout
    theirs = {(m, q): v for m, q, v in (line.split() for line in out.splitlines())}
    ours = qafast.evaluate(qrels, run, measures, per_query=True, max_docs=depth)
    for q, values in ours.items():
        for m, v in values.items():
            assert theirs[(m, q)] == f"{v:.4f}", (m, q)
    summary = qafast.evaluate(qrels, run, measures, max_docs=depth)
    assert all(theirs[(m, "all")] == f"{v:.4f}" for m, v in summary.items() if not math.isnan(v))
