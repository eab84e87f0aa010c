"""One test per row of docs/bad-input.md: what qafast does with each kind of bad input.

Rows are found by their id (`bad-...` in the table's first column); ``test_every_row_has_a_test``
keeps the table and the tests in step.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import pickle
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import qafast
from qafast.errors import FormatError, InputError, InputTypeError, MeasureError, QafastError
from qafast.io import (
    BioasqFormatError,
    ConllFormatError,
    DbqaFormatError,
    DrFactFormatError,
    SquadFormatError,
    TrecFormatError,
    read_bioasq,
    read_conll,
    read_dbqa,
    read_drfact,
)

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "docs" / "bad-input.md"

QRELS = {"q1": {"d1": 1, "d2": 0, "d3": 2}, "q2": {"d9": 1}}
RUN = {"q1": {"d1": 0.5, "d2": 0.9, "d3": 0.4}, "q2": {"d9": 0.1, "d8": 0.4}}
RUN_TEXT = b"q1 Q0 d1 1 2.5 r\nq1 Q0 d2 2 1.5 r\nq2 Q0 d9 1 0.5 r\n"
QRELS_TEXT = b"q1 0 d1 1\nq2 0 d9 1\n"
SQUAD_V1 = {"version": "1.1", "data": [{"paragraphs": [{"qas": [
    {"id": "q1", "answers": [{"text": "Paris"}]}]}]}]}

CASES = {}


def case(row_id):
    def register(fn):
        assert row_id not in CASES, row_id
        CASES[row_id] = fn
        return fn
    return register


def write(tmp: Path, name: str, data) -> str:
    path = tmp / name
    if isinstance(data, str):
        path.write_text(data, encoding="utf-8", newline="")
    else:
        path.write_bytes(data)
    return str(path)


def qafast_cli(*args, stdin: bytes | None = None):
    # the qafast under test, from a checkout or installed
    env = dict(os.environ, PYTHONPATH=str(Path(qafast.__file__).resolve().parents[1]))
    return subprocess.run([sys.executable, "-m", "qafast.cli", *args], input=stdin, check=False,
                          capture_output=True, env=env, timeout=120)


# ------------------------------------------------------------------------------------------
# scores, grades and documents

@case("bad-nan-score")
def _(tmp):
    with pytest.raises(InputError, match=r"query 'q1', document 'd1': score is NaN"):
        qafast.evaluate(QRELS, {"q1": {"d1": float("nan")}}, "map")
    with pytest.raises(InputError, match="score is NaN"):
        qafast.Run.from_arrays(["q1"], ["d1"], [np.nan])
    with pytest.raises(TrecFormatError) as e:
        qafast.Run.from_file(b"q1 Q0 d1 1 1 r\nq1 Q0 d2 2 nan r\n")
    assert e.value.line == 2 and e.value.path == "<bytes>"


@case("bad-inf-score")
def _(tmp):
    run = {"q1": {"d1": -np.inf, "d3": np.inf, "d2": 0.0}}
    assert qafast.evaluate(QRELS, run, "P@1") == qafast.evaluate(
        QRELS, {"q1": {"d1": 0.0, "d3": 2.0, "d2": 1.0}}, "P@1")
    from_file = qafast.evaluate(QRELS, b"q1 Q0 d3 1 1e999 r\nq1 Q0 d1 2 -inf r\n", "P@1")
    assert from_file == {"P@1": 1.0}


@case("bad-huge-score")
def _(tmp):
    with pytest.raises(InputError, match=r"query 'q1', document 'd1': score .* too large"):
        qafast.evaluate(QRELS, {"q1": {"d1": 10**400}}, "map")
    with pytest.raises(InputError, match="too large"):
        qafast.Run.from_dict({"q1": {"d1": -(10**400)}})


@case("bad-duplicate-doc")
def _(tmp):
    with pytest.raises(InputError, match=r"line 2: query 'q1' retrieves document 'd1' twice"):
        qafast.evaluate(QRELS, b"q1 Q0 d1 1 1 r\nq1 Q0 d1 2 2 r\n", "map")
    with pytest.raises(InputError, match=r"line 2: query 'q1' judges document 'd1' twice"):
        qafast.evaluate(b"q1 0 d1 1\nq1 0 d1 0\n", RUN, "map")
    with pytest.raises(InputError, match="'d1'"):
        qafast.Run.from_arrays(["q1", "q1"], ["d1", "d1"], [1.0, 2.0])


@case("bad-grade")
def _(tmp):
    with pytest.raises(TrecFormatError, match="'1.5' is not an integer"):
        qafast.Qrels.from_file(b"q1 0 d1 1\nq1 0 d2 1.5\n")
    with pytest.raises(InputError, match="outside the 32-bit"):
        qafast.evaluate({"q1": {"d1": 2**40}}, RUN, "map")
    with pytest.raises(InputError, match="not an integer"):
        qafast.Qrels.from_arrays(["q1"], ["d1"], [0.5])


@case("bad-empty")
def _(tmp):
    for qrels, run in ((QRELS, {}), (QRELS, b""), ({}, RUN), (QRELS, {"zz": {"d1": 1.0}})):
        with pytest.raises(InputError, match="no query in common"):
            qafast.evaluate(qrels, run, "map")
    with pytest.warns(qafast.ranking.NoCommonQueryWarning if hasattr(
            qafast.ranking, "NoCommonQueryWarning") else Warning):
        assert qafast.evaluate(QRELS, {"zz": {"d1": 1.0}}, "map", queries="qrels") == {
            "map": 0.0}


@case("bad-no-relevant")
def _(tmp):
    qrels = {"q1": {"d1": 1}, "q2": {"d9": 0}}
    per = qafast.evaluate(qrels, RUN, ["map", "ndcg"], per_query=True)
    assert per["q2"] == {"map": 0.0, "ndcg": 0.0}
    assert qafast.evaluate(qrels, RUN, "map")["map"] == pytest.approx(
        (per["q1"]["map"] + 0.0) / 2)


# ------------------------------------------------------------------------------------------
# ids

@case("bad-huge-id")
def _(tmp):
    big = np.array([2**64 - 1, 2**63], dtype=np.uint64)
    qrels = qafast.Qrels.from_arrays(np.array([1, 1], np.uint64), big, [1, 0])
    run = qafast.Run.from_arrays(np.array([1, 1], np.uint64), big, [0.1, 0.9])
    assert qafast.evaluate(qrels, run, "P@1") == {"P@1": 0.0}
    assert qafast.evaluate({2**70: {"d1": 1}}, {2**70: {"d1": 1.0}}, "map") == {"map": 1.0}


@case("bad-negative-id")
def _(tmp):
    qrels = qafast.Qrels.from_arrays([-5, -5], [-1, -2], [1, 0])
    run = qafast.Run.from_arrays([-5, -5], [-1, -2], [0.1, 0.9])
    assert qafast.evaluate(qrels, run, "P@1") == {"P@1": 0.0}
    assert qafast.evaluate({-5: {"d1": 1}}, {-5: {"d1": 1.0}}, "map") == {"map": 1.0}


@case("bad-id-space-hash")
def _(tmp):
    qrels = {"q 1": {"d 1": 1, "d#2": 0}}
    run = {"q 1": {"d 1": 0.1, "d#2": 0.9}}
    assert qafast.evaluate(qrels, run, "P@1", per_query=True) == {"q 1": {"P@1": 0.0}}
    text = b"# a comment\n  # also one in a run\nq1 Q0 d#1 1 2 r\n"
    run = qafast.Run.from_file(text)
    assert run.num_entries == 1
    assert qafast.evaluate({"q1": {"d#1": 1}}, text, "map") == {"map": 1.0}


@case("bad-mixed-ids")
def _(tmp):
    with pytest.raises(InputTypeError, match="query ids"):
        qafast.evaluate(QRELS, {"q1": {"d1": 1.0}, 2: {"d1": 1.0}}, "map")
    with pytest.raises(InputTypeError, match="is a bytes"):
        qafast.evaluate(QRELS, {b"q1": {b"d1": 1.0}}, "map")


# ------------------------------------------------------------------------------------------
# measures and options

@case("bad-unknown-measure")
def _(tmp):
    with pytest.raises(MeasureError, match="did you mean map"):
        qafast.evaluate(QRELS, RUN, "mapp")
    r = qafast_cli("trec", "-m", "mapp", write(tmp, "q", QRELS_TEXT), write(tmp, "r", RUN_TEXT))
    assert r.returncode == 1 and b"unknown measure 'mapp'" in r.stderr


@case("bad-repeated-measure")
def _(tmp):
    assert qafast.evaluate(QRELS, RUN, ["map", "map"]) == qafast.evaluate(QRELS, RUN, "map")
    both = qafast.evaluate(QRELS, RUN, ["P@5", "P_5"])
    assert both["P@5"] == both["P_5"]


@case("bad-measure-params")
def _(tmp):
    for name in ("P.x", "P@0", "P_0", "utility.1", "ndcg.1", "ndcg_cut.10,10",
                 "nDCG(dcg='x')@10", "P(rel=1"):
        with pytest.raises(MeasureError):
            qafast.evaluate(QRELS, RUN, name)
    with pytest.raises(InputError, match="no measure"):
        qafast.evaluate(QRELS, RUN, [])
    with pytest.raises(InputTypeError):
        qafast.evaluate(QRELS, RUN, [5])


@case("bad-huge-cutoff")
def _(tmp):
    for name in ("P@" + "9" * 30, "P_" + "9" * 30, "P." + "9" * 30, "nDCG@" + "9" * 30):
        with pytest.raises(MeasureError, match="too large"):
            qafast.evaluate(QRELS, RUN, name)


@case("bad-huge-option")
def _(tmp):
    huge = 10**30
    none_relevant = qafast.evaluate(QRELS, RUN, "map", relevance_level=3)
    assert qafast.evaluate(QRELS, RUN, "map", relevance_level=huge) == none_relevant
    assert qafast.evaluate(QRELS, qafast.Run.from_dict(RUN), "map",
                           relevance_level=huge) == none_relevant
    assert qafast.evaluate(QRELS, RUN, "map", max_docs=huge) == qafast.evaluate(
        QRELS, RUN, "map")
    assert qafast.evaluate(QRELS, RUN, f"ndcg@10-l{huge}") == {f"ndcg@10-l{huge}": 0.0}
    assert qafast.evaluate_dbqa([[1, 0]], [[0.1, 0.5]], accuracy_at=huge)[
        f"accuracy@{huge}"] == 1.0
    assert qafast.evaluate_factoid([["x", "a"]], [["a"]], k=huge)["mean_reciprocal_rank"] == 0.5
    assert qafast.hit_at_k({"q": ["x", "a"]}, {"q": ["a"]}, k=huge) == 1.0
    m = qafast.RankingMetrics(["map", f"ndcg@10-l{huge}"], relevance_level=huge,
                              max_docs=huge, empty_queries="zero")
    m.update(np.array([[0.5, 0.1]]), np.array([[1, 0]]))
    assert m.compute() == {"map": 0.0, f"ndcg@10-l{huge}": 0.0}
    q, r = write(tmp, "q", QRELS_TEXT), write(tmp, "r", RUN_TEXT)
    for opt in ("-l", "-M"):
        res = qafast_cli("trec", opt, str(huge), "-m", "map", q, r)
        assert res.returncode == 0, res.stderr
        assert res.stdout.startswith(b"map")


@case("bad-option-range")
def _(tmp):
    with pytest.raises(InputError, match="relevance_level"):
        qafast.evaluate(QRELS, RUN, "map", relevance_level=-1)
    with pytest.raises(InputError, match="max_docs"):
        qafast.evaluate(QRELS, RUN, "map", max_docs=0)
    with pytest.raises(InputError, match="workers"):
        qafast.evaluate(QRELS, RUN, "map", workers=0)
    with pytest.raises(InputTypeError, match="relevance_level"):
        qafast.evaluate(QRELS, RUN, "map", relevance_level=1.5)
    with pytest.raises(InputError, match="accuracy_at"):
        qafast.evaluate_dbqa([[1, 0]], [[0.1, 0.5]], accuracy_at=0)


# ------------------------------------------------------------------------------------------
# arrays and types

@case("bad-ragged")
def _(tmp):
    with pytest.raises(InputError, match="scores: not a rectangular array"):
        qafast.RankingMetrics("map").update([[0.1, 0.2], [0.3]], [[1, 0], [1]])
    with pytest.raises(InputError):
        qafast.Run.from_arrays([["q1"], ["q1", "q2"]], ["d1", "d2"], [1.0, 2.0])


@case("bad-mismatched")
def _(tmp):
    with pytest.raises(InputError, match=r"differ in length \(2, 1, 2\)"):
        qafast.Run.from_arrays(["q1", "q1"], ["d1"], [1.0, 2.0])
    with pytest.raises(InputError, match="2 predictions but 1 references"):
        qafast.exact_match(["a", "b"], [["a"]])
    with pytest.raises(InputError, match="2 samples"):
        qafast.average_precision([1, 0], [0.5])
    with pytest.raises(InputError, match="2 questions but target has 1"):
        qafast.evaluate_factoid([["a"], ["b"]], [["a"]])


@case("bad-0d-empty")
def _(tmp):
    for cls in (qafast.Run, qafast.Qrels):
        with pytest.raises(InputError, match=r"must be 1-d, got shapes \(\), \(\) and \(\)"):
            cls.from_arrays(np.array("q"), np.array("d"), np.array(1))
        with pytest.raises(InputError, match="1-d"):
            cls.from_arrays(np.array(1), np.array(2), np.array(1))
        empty = cls.from_arrays([], [], [])
        assert len(empty) == 0 and empty.num_entries == 0
        assert len(cls.from_arrays(np.array([]), np.array([]), np.array([]))) == 0


SCORE_DTYPES_OK = ["float16", "float32", "float64", "longdouble", "int8", "int16", "int32",
                   "int64", "uint8", "uint16", "uint32", "uint64"]
SCORE_DTYPES_BAD = ["bool", "complex64", "complex128", "U3", "S3", "datetime64[s]",
                    "timedelta64[s]", "object"]


@case("bad-dtype")
def _(tmp):
    want = qafast.evaluate(QRELS, RUN, "map")
    for dt in SCORE_DTYPES_OK:
        run = qafast.Run.from_arrays(["q1", "q1", "q1"], ["d1", "d2", "d3"],
                                     np.array([2, 3, 1]).astype(dt))
        assert qafast.evaluate({"q1": QRELS["q1"]}, run, "map") == qafast.evaluate(
            {"q1": QRELS["q1"]}, {"q1": {"d1": 2.0, "d2": 3.0, "d3": 1.0}}, "map"), dt
    for dt in SCORE_DTYPES_BAD:
        values = np.array([2, 3, 1]).astype(dt) if dt != "object" else np.array(
            ["a", None, 1], dtype=object)
        with pytest.raises(InputTypeError, match="scores of dtype"):
            qafast.Run.from_arrays(["q1"] * 3, ["d1", "d2", "d3"], values)
    for dt in ("int8", "int64", "uint64", "bool", "float16", "float32", "float64"):
        q = qafast.Qrels.from_arrays(["q1", "q1"], ["d1", "d2"], np.array([1, 0]).astype(dt))
        assert q.num_entries == 2
    for dt in ("complex128", "U3", "datetime64[s]"):
        with pytest.raises(InputTypeError, match="grades of dtype"):
            qafast.Qrels.from_arrays(["q1"], ["d1"], np.array([1]).astype(dt))
    for dt in ("int32", "uint8", "int64", "uint64", "U3", "S3"):
        ids = np.array([1, 2]).astype(dt)
        assert qafast.Run.from_arrays(ids, ids, [1.0, 0.5]).num_entries == 2
    for dt in ("float64", "bool", "complex64"):
        with pytest.raises(InputTypeError, match="document ids of dtype"):
            qafast.Run.from_arrays(["q1", "q1"], np.array([1, 2]).astype(dt), [1.0, 0.5])
    assert want  # the dict form still gives its numbers


@case("bad-readonly")
def _(tmp):
    scores = np.array([[0.5, 0.9, 0.4]])
    grades = np.array([[1, 0, 2]])
    def mean_ap(s, g):
        m = qafast.RankingMetrics("map")
        m.update(s, g)
        return m.compute()

    want = mean_ap(scores, grades)
    path = tmp / "s.npy"
    np.save(path, scores)
    mapped = np.load(path, mmap_mode="r")
    ro = grades.copy()
    ro.flags.writeable = False
    assert mean_ap(mapped, ro) == want
    wide = np.zeros((1, 6))
    wide[:, ::2] = scores
    assert mean_ap(wide[:, ::2], grades) == want


# ------------------------------------------------------------------------------------------
# saved metric state

@case("bad-state")
def _(tmp):
    m = qafast.RankingMetrics(["mrr@10", "map"])
    m.update([[0.1, 0.5]], [[0, 1]])
    good = {k: np.array(v) if k == "sums" else v for k, v in m.state_dict().items()}
    huge = good["sums"].copy()
    huge[0, 36] = 2**31  # mrr@10 of 6.5e32 for one query
    wrapping = good["sums"].copy()
    wrapping[:, -1] = 2**62  # a merge into itself wrapped it to -inf
    rows = {"row_query_ids": [1], "row_doc_ids": [1], "row_scores": [0.5], "row_grades": [1]}
    for change, error, field in [
        ({"sums": huge}, InputError, "sums"),
        ({"sums": wrapping}, InputError, "sums"),
        ({"count": 10**400}, InputError, "count"),
        ({"measures": 5}, InputTypeError, "measures"),
        (rows, InputError, "row_query_ids"),
        ({**rows, "mode": "rows", "count": 0, "sums": good["sums"] * 0, "row_has_doc_ids": 1,
          "row_scores": [float("nan")]}, InputError, "row_scores"),
        ({"sums": good["sums"].astype(float)}, InputError, "sums"),
    ]:
        fresh = qafast.RankingMetrics(["mrr@10", "map"])
        with pytest.raises(error) as e:
            fresh.load_state_dict({**good, **change})
        assert e.value.field == field, (field, e.value)
        assert fresh.state_dict()["count"] == 0  # unchanged
        twin = qafast.RankingMetrics(["mrr@10", "map"])
        state = {**good, **change}
        with pytest.raises(error):  # unpickling reads the state the same way
            pickle.loads(pickle.dumps(twin)).__setstate__({"config": None, "state": state})
    a = qafast.AnswerMetrics()
    a.update(["x", "y", "z"], ["x", "q", "r"])
    with pytest.raises(InputError, match="nonfinite_sums holds -1.0"):  # exact_match -0.33
        qafast.AnswerMetrics().load_state_dict({**a.state_dict(),
                                                "nonfinite_sums": np.array([-1.0, 0.0])})
    fortran = qafast.RankingMetrics(["mrr@10", "map"])
    fortran.load_state_dict({**good, "sums": np.asfortranarray(good["sums"])})
    fortran.update([[0.1, 0.5]], [[0, 1]])  # was "ndarray is not C-contiguous"
    assert fortran.compute() == {"mrr@10": 1.0, "map": 1.0}


# ------------------------------------------------------------------------------------------
# files

@case("bad-trec-line")
def _(tmp):
    bad = [(qafast.Run, b"q1 Q0 d1 1 2.5\n", 1, "at least 6"),
           (qafast.Run, b"q1 Q0 d1 1 2.5 r\nq1 Q0 d2 2 abc r\n", 2, "score"),
           (qafast.Qrels, b"q1 0 d1\n", 1, "at least 4"),
           (qafast.Qrels, b"q1 0 d1 1\n\nq1 0 d2 x\n", 3, "not an integer")]
    for cls, text, line, what in bad:
        with pytest.raises(TrecFormatError, match=what) as e:
            cls.from_file(text)
        assert e.value.line == line
        path = write(tmp, "f.txt", text)
        with pytest.raises(TrecFormatError, match=re.escape(f"{path}, line {line}")):
            cls.from_file(path)


@case("bad-squad-json")
def _(tmp):
    with pytest.raises(SquadFormatError, match=r"line 2, column \d+: not valid JSON") as e:
        qafast.squad(write(tmp, "d.json", '{"data":\n [,]}'), {"q1": "Paris"})
    assert e.value.line == 2
    with pytest.raises(SquadFormatError):
        qafast.squad(write(tmp, "d2.json", json.dumps({"data": 5})), {"q1": "Paris"})
    with pytest.raises(SquadFormatError, match="question 'q1'"):
        qafast.squad(SQUAD_V1, write(tmp, "p.json", json.dumps({"q1": 5})))


@case("bad-deep-json")
def _(tmp):
    deep = "[" * 200_000 + "]" * 200_000
    with pytest.raises(SquadFormatError, match="nested too deeply"):
        qafast.squad(write(tmp, "d.json", deep), {})
    with pytest.raises(SquadFormatError, match="nested too deeply"):
        qafast.squad(SQUAD_V1, write(tmp, "p.json", deep))
    with pytest.raises(BioasqFormatError, match="nested too deeply"):
        qafast.evaluate_bioasq(write(tmp, "b.json", deep), write(tmp, "b2.json", deep))
    truth = write(tmp, "t.jsonl", '{"_id": "q1", "all_answer_concepts": [{"name": "a"}]}\n')
    with pytest.raises(DrFactFormatError, match="line 2: JSON nested too deeply") as e:
        read_drfact(write(tmp, "p.jsonl", '{"qid": "q1", "predictions_K": {"1": []}}\n'
                          + deep + "\n"), truth)
    assert isinstance(e.value, FormatError)


@case("bad-bioasq-json")
def _(tmp):
    with pytest.raises(BioasqFormatError, match="questions"):
        read_bioasq({"x": []})
    with pytest.raises(BioasqFormatError, match="string 'id'"):
        read_bioasq({"questions": [{"id": 5}]})
    with pytest.raises(BioasqFormatError, match="not JSON"):
        read_bioasq(write(tmp, "b.json", "{"))


@case("bad-drfact-line")
def _(tmp):
    pred = write(tmp, "p.jsonl", '{"qid": "q1", "predictions_K": {"1": [["a", 1.0]]}}\n')
    truth = write(tmp, "t.jsonl", '{"_id": "q1", "all_answer_concepts": [{"name": "a"}]}\n')
    assert read_drfact(pred, truth)
    for bad_id in ([1], {"a": 1}, True, None, 1.5):
        t = write(tmp, "t2.jsonl", "\n" + json.dumps({"_id": bad_id,
                                                       "all_answer_concepts": []}) + "\n")
        with pytest.raises(DrFactFormatError, match="line 2: _id .* is not a string"):
            read_drfact(pred, t)
        p = write(tmp, "p2.jsonl", json.dumps({"qid": bad_id, "predictions_K": {"1": []}}))
        with pytest.raises(DrFactFormatError, match="line 1: qid .* is not a string"):
            read_drfact(p, truth)
    with pytest.raises(DrFactFormatError, match="line 1: not JSON"):
        read_drfact(write(tmp, "p3.jsonl", "{x"), truth)
    with pytest.raises(DrFactFormatError, match="line 1: no 'all_answer_concepts'"):
        read_drfact(pred, write(tmp, "t3.jsonl", '{"_id": "q1"}'))


@case("bad-dbqa-line")
def _(tmp):
    for text, what in (("q\ts\n", "3 or 4"), ("q\ts\t2\t0.1\n", "not 0 or 1"),
                       ("q\ts\t1\tx\n", "not a number"), ("q\ts\t1\tnan\n", "NaN")):
        with pytest.raises(DbqaFormatError, match=what) as e:
            read_dbqa(write(tmp, "d.txt", "q\tok\t0\t0.5\n" + text))
        assert e.value.line == 2
    # a lone CR inside a sentence is data: the same from a path and a file object
    text = "q1\ta\rb\t1\t0.5\r\nq1\tc\t0\t0.1\n"
    from_path = qafast.evaluate_dbqa_file(write(tmp, "cr.txt", text))
    assert from_path == qafast.evaluate_dbqa_file(io.StringIO(text))
    assert read_dbqa(write(tmp, "cr.txt", text)).labels.tolist() == [1, 0]


@case("bad-conll-line")
def _(tmp):
    with pytest.raises(ConllFormatError, match="line 2: expected 'token gold_label"):
        read_conll(write(tmp, "c.txt", "go o o\nx o\n"))
    with pytest.raises(ConllFormatError, match="line 3: .*label 'EX'"):
        read_conll(write(tmp, "c.txt", "go o o\n\nx o EX\n"))


@case("bad-ap-line")
def _(tmp):
    for text in (b"1 0.5\n1\n", b"1 0.5\nyes 0.3\n", b"1 0.5\n" + b"9" * 5000 + b" 0.3\n"):
        r = qafast_cli("ap", write(tmp, "a.txt", text))
        assert r.returncode == 2 and b"a.txt, line 2:" in r.stderr, r.stderr


@case("bad-non-utf8")
def _(tmp):
    with pytest.raises(TrecFormatError, match="UTF-8") as e:
        qafast.Run.from_file(b"q1 Q0 d1 1 1 r\nq1 Q0 d\xff 2 0 r\n")
    assert e.value.line == 2
    with pytest.raises(SquadFormatError, match="not UTF-8"):
        qafast.squad(write(tmp, "d.json", b'{"data": "\xff"}'), {})
    cases = [(read_dbqa, "q\ts\t1\nq\t\xff\t0\n", DbqaFormatError),
             (read_conll, "go o o\n\n\xff o o\n", ConllFormatError)]
    for reader, text, error in cases:
        data = text.encode("latin-1")
        with pytest.raises(error, match="not UTF-8") as e:
            reader(write(tmp, "x.txt", data))
        assert e.value.line == data.count(b"\n", 0, data.index(b"\xff")) + 1
        with pytest.raises(error, match="not UTF-8"):
            reader(io.BytesIO(data))
    truth = write(tmp, "t.jsonl", b'{"_id": "q1", "all_answer_concepts": []}\n{"\xff": 1}\n')
    pred = write(tmp, "p.jsonl", '{"qid": "q1", "predictions_K": {"1": []}}\n')
    with pytest.raises(DrFactFormatError, match="line 2: not UTF-8"):
        read_drfact(pred, truth)
    for command, text in (("events", b"go ep1 ep1\n\xfe o o\n"), ("ap", b"1 0.5\n\xff 0.3\n")):
        r = qafast_cli(command, write(tmp, "u.txt", text))
        assert r.returncode == 2 and b"u.txt, line 2: not UTF-8" in r.stderr, r.stderr


@case("bad-gzip")
def _(tmp):
    whole = gzip.compress(RUN_TEXT)
    crc = bytearray(whole)
    crc[-8] ^= 0xFF  # the stored CRC-32
    sources = {"truncated": whole[:-5], "magic only": b"\x1f\x8b" + b"x" * 20,
               "crc": bytes(crc), "empty after magic": b"\x1f\x8b"}
    for label, data in sources.items():
        with pytest.raises(TrecFormatError, match="(truncated|corrupt) gzip data") as e:
            qafast.Run.from_file(data)
        assert e.value.path == "<bytes>", label
        path = write(tmp, "run.gz", data)
        for workers in (1, 2):
            with pytest.raises(TrecFormatError, match=re.escape(path)):
                qafast.evaluate(QRELS_TEXT, path, "map", workers=workers)
        with pytest.raises(TrecFormatError, match="gzip"):
            qafast.Qrels.from_file(write(tmp, "qrels.gz", data))
    r = qafast_cli("trec", write(tmp, "q", QRELS_TEXT), write(tmp, "r.gz", whole[:-5]))
    assert r.returncode == 2 and b"r.gz: truncated gzip data" in r.stderr, r.stderr


@case("bad-file-changed")
def _(tmp):
    from qafast import _runfile

    qrels = write(tmp, "qrels", b"".join(b"q%d 0 d%d 1\n" % (i // 20, i) for i in range(4000)))
    text = b"".join(b"q%d Q0 d%d %d 1.5 r\n" % (i // 20, i, i % 20) for i in range(40000))
    real = _runfile._range_blocks

    def truncating(raw, start, end, chunk, *args):
        for k, block in enumerate(real(raw, start, end, 4096, *args)):
            yield block
            if k == 0:
                os.truncate(raw.name, min(os.path.getsize(raw.name), 5000))

    for workers in (1, 2):
        path = write(tmp, "run", text)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(_runfile, "_range_blocks", truncating)
            with pytest.raises(TrecFormatError, match=re.escape(path) + ": the file is now 5000 "
                               r"bytes long, but it had at least \d+ when its reading began: it "
                               r"was truncated or rewritten while being read"):
                qafast.evaluate(qrels, path, "map", workers=workers)


@case("bad-long-line")
def _(tmp):
    from qafast.io.trec import MAX_LINE_BYTES

    long = b"q1 Q0 d7 2 1.5 r " + b"x" * MAX_LINE_BYTES + b"\n"
    text = RUN_TEXT[:17] + long + RUN_TEXT[17:]
    path = tmp / "run.gz"
    path.write_bytes(gzip.compress(text, compresslevel=1))
    for source, name in ((text, "<bytes>"), (str(path), str(path))):
        with pytest.raises(TrecFormatError, match=re.escape(name) + ", line 2: a line longer "
                           f"than {MAX_LINE_BYTES} bytes"):
            qafast.evaluate(QRELS, source, "map")
    assert qafast.Run.from_file(text.replace(b" x", b"\n#", 1)).num_entries == 4


@case("bad-out-of-memory")
def _(tmp):
    from qafast.io import trec

    def starved(*args, **kwargs):
        np.empty(1 << 62, dtype=np.uint8)  # numpy's MemoryError

    path = write(tmp, "run", RUN_TEXT)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(trec, "parse_blocks", starved)
        with pytest.raises(MemoryError, match=re.escape(path) + ": out of memory reading it as "
                           "a TREC run: Unable to allocate"):
            qafast.Run.from_file(path)


@case("bad-gzip-stdin")
def _(tmp):
    q = write(tmp, "q", QRELS_TEXT)
    plain = qafast_cli("trec", "-m", "map", q, "-", stdin=RUN_TEXT)
    packed = qafast_cli("trec", "-m", "map", q, "-", stdin=gzip.compress(RUN_TEXT))
    assert packed.returncode == 0, packed.stderr
    assert packed.stdout == plain.stdout
    cut = qafast_cli("trec", "-m", "map", q, "-", stdin=gzip.compress(RUN_TEXT)[:-4])
    assert cut.returncode == 2 and b"<stdin>: truncated gzip data" in cut.stderr


@case("bad-bytes-source")
def _(tmp):
    blob = b'{"questions": []}'
    for reader in (read_bioasq, read_dbqa, read_conll, lambda b: read_drfact(b, b)):
        with pytest.raises(InputTypeError):
            reader(blob)
    with pytest.raises(InputTypeError):
        read_drfact(io.StringIO("{}"), io.StringIO("{}"))
    assert read_dbqa(io.BytesIO(b"q\ts\t1\t0.5\n")).labels.tolist() == [1]
    res, _ann = read_conll(io.BytesIO(b"go o o\n"))
    assert len(res) == 1
    assert qafast.Run.from_file(RUN_TEXT).num_entries == 3  # TREC readers: bytes are content


@case("bad-parquet")
def _(tmp):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    good = {"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "score": [1.0, 2.0]}
    cases = {
        "renamed": ({**good, "s": good["score"]}, "score", InputError, "no column 'score'"),
        "text": ({**good, "score": ["x", "y"]}, None, InputTypeError,
                 "column 'score' .*string"),
        "null": ({**good, "query_id": ["q1", None]}, None, InputError,
                 "column 'query_id' is null at row 1"),
    }
    for name, (columns, drop, error, words) in cases.items():
        table = pa.table({k: v for k, v in columns.items() if k != drop})
        path = tmp / f"{name}.parquet"
        pq.write_table(table, path)
        with pytest.raises(error, match=f"{name}\\.parquet'.*{words}"):
            qafast.evaluate(QRELS, str(path), "map")
    with pytest.raises(InputError, match="not a readable Parquet file"):
        qafast.evaluate(QRELS, write(tmp, "fake.parquet", b"PAR1 and nothing else"), "map")
    n = 6000
    path = tmp / "damaged.parquet"
    pq.write_table(pa.table({"query_id": [f"q{i // 100}" for i in range(n)],
                             "doc_id": [f"d{i}" for i in range(n)],
                             "score": np.arange(n, dtype=float)}), path, row_group_size=1000)
    start = pq.ParquetFile(path).metadata.row_group(3).column(1).data_page_offset
    data = bytearray(path.read_bytes())
    data[start + 40:start + 400] = b"\xab" * 360
    path.write_bytes(bytes(data))
    for workers in (1, 2):
        with pytest.raises(qafast.io.ArrowFormatError,
                           match="damaged\\.parquet', row group 3, column 'doc_id': "):
            qafast.evaluate({"q1": {"d101": 1}}, str(path), "map", workers=workers)


@case("bad-arrow-data")
def _(tmp):
    pa = pytest.importorskip("pyarrow")
    docs = pa.DictionaryArray.from_arrays(pa.array([0, 1, -1], pa.int32()),
                                          pa.array(["d1", "d2", "d3"]), safe=False)
    table = pa.table({"query_id": ["q1", "q1", "q2"], "doc_id": docs, "score": [1.0, 0.5, 0.3]})
    with pytest.raises(InputError, match="column 'doc_id', row 2: dictionary index -1 is "
                                         "outside the column's dictionary of 3 entries"):
        qafast.evaluate(QRELS, table, "map")
    offsets = pa.py_buffer(np.array([0, 2, 1000, 6], np.int32).tobytes())
    broken = pa.Array.from_buffers(pa.string(), 3, [None, offsets, pa.py_buffer(b"d1d2d3")])
    with pytest.raises(InputError, match="column 'doc_id', row 1: not valid Arrow data"):
        qafast.evaluate(QRELS, table.set_column(1, "doc_id", broken), "map")


@case("bad-arrow-types")
def _(tmp):
    import decimal

    pa = pytest.importorskip("pyarrow")
    scores = [decimal.Decimal(x) for x in ("0.3337", "0.0003", "7.1119")]
    table = pa.table({"query_id": ["q1", "q1", "q2"], "doc_id": ["d1", "d2", "d9"],
                      "score": pa.array(scores, pa.decimal128(12, 4))})
    assert qafast.Run.from_arrow(table).to_dict() == {
        "q1": {"d1": 0.3337, "d2": 0.0003}, "q2": {"d9": 7.1119}}
    grades = table.set_column(2, "relevance", pa.array(
        [decimal.Decimal(x) for x in ("1.0", "0.5", "2")], pa.decimal128(4, 1)))
    with pytest.raises(InputError, match="column 'relevance', row 1 \\(query 'q1'\\): grade "
                                         "0.5 is not an integer"):
        qafast.Qrels.from_arrow(grades)
    ids = table.set_column(1, "doc_id", pa.array([b"d1", b"d\xff", b"d9"], pa.binary()))
    with pytest.raises(InputError, match="column 'doc_id', row 1: the id b'd\\\\xff' is not "
                                         "UTF-8 text"):
        qafast.Run.from_arrow(ids)


@case("bad-lying-object")
def _(tmp):
    class Longer(list):  # a list whose len() says more than it holds
        def __len__(self):
            return 4000

    assert qafast.evaluate_dbqa([Longer([1])], [Longer([0.5])]) == qafast.evaluate_dbqa(
        [[1]], [[0.5]])
    qrels = qafast.Qrels.from_file(QRELS_TEXT)
    qafast.evaluate(qrels, RUN_TEXT, "ndcg")
    with pytest.raises(ValueError, match="read-only"):
        qrels.values[:] = 900_000


@case("bad-text-as-path")
def _(tmp):
    text = RUN_TEXT.decode()
    for call in (lambda: qafast.Run.from_file(text),
                 lambda: qafast.Qrels.from_file(QRELS_TEXT.decode()),
                 lambda: qafast.evaluate(QRELS, text, "map"),
                 lambda: qafast.evaluate_runs(QRELS, {"a": text}, "map")):
        with pytest.raises(FileNotFoundError, match="pass bytes: text.encode"):
            call()
    with pytest.raises(FileNotFoundError) as e:  # a path: the OS's message alone
        qafast.evaluate(QRELS, str(tmp / "missing.run"), "map")
    assert "bytes" not in str(e.value)


# ------------------------------------------------------------------------------------------

def _table_ids() -> list[str]:
    text = TABLE.read_text(encoding="utf-8")
    return re.findall(r"^\| `(bad-[a-z0-9-]+)` \|", text, flags=re.MULTILINE)


def test_every_row_has_a_test():
    if not TABLE.exists():
        pytest.skip("run from a checkout: the docs are not installed")
    ids = _table_ids()
    assert len(ids) == len(set(ids)), "a row id is repeated"
    assert sorted(ids) == sorted(CASES), (set(ids) ^ set(CASES))


@pytest.mark.parametrize("row_id", sorted(CASES))
def test_row(row_id, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        CASES[row_id](tmp_path)


def test_errors_are_qafast_classes_and_pickle():
    for cls, base in ((InputError, ValueError), (FormatError, ValueError),
                      (MeasureError, ValueError), (InputTypeError, TypeError)):
        assert issubclass(cls, QafastError) and issubclass(cls, base)
    for error_cls in (TrecFormatError, SquadFormatError, BioasqFormatError, DbqaFormatError,
                      DrFactFormatError, ConllFormatError):
        assert issubclass(error_cls, FormatError)
    assert issubclass(qafast._measure_parser.UnknownMeasureError, MeasureError)
    errors = []
    for fn in (lambda: qafast.Run.from_file(b"q1\n"),
               lambda: qafast.evaluate(QRELS, RUN, "mapp"),
               lambda: qafast.Run.from_file(gzip.compress(RUN_TEXT)[:-3]),
               lambda: qafast.evaluate(QRELS, {"q1": {"d1": float("nan")}}, "map"),
               lambda: qafast.evaluate(QRELS, RUN, "map", relevance_level="x")):
        with pytest.raises(QafastError) as e:
            fn()
        errors.append(e.value)
    for e in errors:
        again = pickle.loads(pickle.dumps(e))
        assert type(again) is type(e) and str(again) == str(e)
        assert again.path == e.path and again.line == e.line
