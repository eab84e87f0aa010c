"""qafast.evaluate and RelevanceEvaluator against pytrec_eval, across input forms and options."""

import gzip
import math
import random

import numpy as np
import pytest

import qafast
from qafast._measure_parser import parse_measures

pytrec_eval = pytest.importorskip("pytrec_eval")


def random_case(seed, n_queries=120, n_docs=40, n_judged=15, score_decimals=1,
                grades=(-1, 0, 0, 1, 2, 3)):
    """Tie-heavy scores; docnos whose string and numeric orders differ; some unicode ids."""
    rng = random.Random(seed)
    names = [f"d{i}" for i in range(60)] + ["é", "Ω9", "d٣", "D", "doc#1"]
    qrels, run = {}, {}
    for q in range(n_queries):
        qid = f"q{q}"
        docs = rng.sample(names, rng.randrange(0, n_docs))
        run[qid] = {d: round(rng.random(), score_decimals) for d in docs}
        judged = rng.sample(names, rng.randrange(0, n_judged))
        qrels[qid] = {d: rng.choice(grades) for d in judged}
    qrels = {q: v for q, v in qrels.items() if v}
    run = {q: v for q, v in run.items() if v}
    return qrels, run


def same(a, b):
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-12


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("level,judged_only", [(1, False), (2, False), (1, True), (3, True)])
def test_relevance_evaluator_equals_pytrec_eval_key_for_key(seed, level, judged_only):
    qrels, run = random_case(seed)
    ours = qafast.RelevanceEvaluator(qrels, qafast.supported_measures, relevance_level=level,
                                     judged_docs_only_flag=judged_only).evaluate(run)
    theirs = pytrec_eval.RelevanceEvaluator(qrels, pytrec_eval.supported_measures,
                                            relevance_level=level,
                                            judged_docs_only_flag=judged_only).evaluate(run)
    assert list(ours) == list(theirs)
    for q in theirs:
        assert list(ours[q]) == list(theirs[q])
        for m, v in theirs[q].items():
            assert same(ours[q][m], v), (q, m, ours[q][m], v)


def test_relevance_evaluator_float32_ties_like_pytrec_eval():
    # two doubles that round to one float32 tie in trec_eval 9.0.8; the larger docno wins
    qrels = {"q": {"dA": 1, "dB": 0}}
    run = {"q": {"dA": 0.1000000002, "dB": 0.1000000001}}
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"map"}).evaluate(run)
    assert qafast.RelevanceEvaluator(qrels, {"map"}).evaluate(run) == theirs == {"q": {"map": 0.5}}
    assert qafast.evaluate(qrels, run, "map") == {"map": 1.0}  # trec_eval 10.0 keeps doubles


def test_relevance_evaluator_measure_spellings_and_errors():
    qrels = {"q1": {"a": 1}, "q2": {}}
    run = {"q1": {"a": 1.0, "b": 2.0}, "q3": {"x": 1.0}}
    spellings = {"P.5", "P_10", "ndcg_cut.3,5", "recip_rank", "official"}
    ours = qafast.RelevanceEvaluator(qrels, spellings).evaluate(run)
    theirs = pytrec_eval.RelevanceEvaluator(qrels, spellings).evaluate(run)
    assert ours == theirs
    assert qafast.RelevanceEvaluator(qrels, {"map"}).evaluate({}) == {}
    with pytest.raises(ValueError, match="unsupported measure"):
        qafast.RelevanceEvaluator(qrels, {"nonsense"})
    with pytest.raises(ValueError, match="relevance_level"):
        qafast.RelevanceEvaluator(qrels, {"map"}, relevance_level=0)


STANDARD = ["map", "recip_rank", "P_5", "P_10", "recall_10", "ndcg", "ndcg_cut_10", "Rprec",
            "bpref", "map_cut_10", "success_5", "set_F", "infAP", "num_rel_ret"]


@pytest.mark.parametrize("seed", range(3))
def test_evaluate_per_query_equals_pytrec_eval(seed):
    # two decimals of score: no two doubles collapse to one float32, so 9.0.8 and 10.0 agree
    qrels, run = random_case(seed, score_decimals=2)
    theirs = pytrec_eval.RelevanceEvaluator(qrels, set(STANDARD)).evaluate(run)
    ours = qafast.evaluate(qrels, run, STANDARD, per_query=True)
    assert set(ours) == set(theirs)
    for q in theirs:
        for m in STANDARD:
            assert same(ours[q][m], theirs[q][m]), (q, m)
    summary = qafast.evaluate(qrels, run, STANDARD)
    for m in STANDARD:
        agg = pytrec_eval.compute_aggregated_measure(m, [theirs[q][m] for q in sorted(theirs)])
        assert abs(summary[m] - agg) < 1e-12


def test_at_k_names_mean_what_they_say():
    qrels, run = random_case(7, score_decimals=2)
    ours = qafast.evaluate(qrels, run, ["P@10", "recall@100", "map@100", "ndcg@10", "hit@10",
                                        "r-precision", "mrr", "map", "ndcg"], per_query=True)
    trec = qafast.evaluate(qrels, run, ["P_10", "recall_100", "map_cut_100", "ndcg_cut_10",
                                        "success_10", "Rprec", "recip_rank", "map", "ndcg"],
                           per_query=True)
    for q in ours:
        assert list(ours[q].values()) == list(trec[q].values())


def test_mrr_at_k_is_reciprocal_rank_within_k():
    qrels = {"q": {"a": 1}}
    run = {"q": {f"x{i}": 1.0 - i / 100 for i in range(12)} | {"a": 0.5}}
    assert qafast.evaluate(qrels, run, ["mrr@10", "mrr@20", "recip_rank"]) == {
        "mrr@10": 0.0, "mrr@20": 1 / 13, "recip_rank": 1 / 13}


def test_ndcg_exp_gain():
    qrels = {"q": {"a": 3, "b": 1}}
    run = {"q": {"b": 2.0, "a": 1.0}}
    dcg = 1 / math.log2(2) + 7 / math.log2(3)
    ideal = 7 / math.log2(2) + 1 / math.log2(3)
    assert qafast.evaluate(qrels, run, "ndcg_exp@10")["ndcg_exp@10"] == pytest.approx(dcg / ideal)


def test_ties_follow_docno_descending_whatever_the_row_order():
    qrels = {"q": {"a": 1, "c": 0, "B": 1}}
    rows = [("q", d, 1.0) for d in ["a", "b", "c", "B"]]
    expected = None
    for perm in range(6):
        random.Random(perm).shuffle(rows)
        run = qafast.Run.from_arrays([r[0] for r in rows], [r[1] for r in rows],
                                     [r[2] for r in rows])
        got = qafast.evaluate(qrels, run, ["map", "P@1", "recip_rank"])
        expected = expected or got
        assert got == expected
    # order c, b, a, B: relevant at ranks 3 and 4
    assert expected["map"] == pytest.approx((1 / 3 + 2 / 4) / 2)


def test_every_input_form_gives_the_same_numbers(tmp_path):
    pd = pytest.importorskip("pandas")
    qrels, run = random_case(11, score_decimals=2)
    reference = qafast.evaluate(qrels, run, "all_trec", per_query=True)
    qrels_path, run_path = tmp_path / "qrels", tmp_path / "run.gz"
    qrels_path.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items()
                                  for d, g in docs.items()))
    with gzip.open(run_path, "wt") as f:
        for q, docs in run.items():
            for d, s in docs.items():
                f.write(f"{q} Q0 {d} 0 {s!r} tag\n")
    rows = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    random.Random(0).shuffle(rows)
    qrows = [(q, d, g) for q, docs in qrels.items() for d, g in docs.items()]
    forms = [
        (qafast.Qrels.from_file(qrels_path), qafast.Run.from_file(run_path)),
        (str(qrels_path), str(run_path)),
        (qafast.Qrels.from_df(pd.DataFrame(qrows, columns=["query_id", "doc_id", "relevance"])),
         qafast.Run.from_df(pd.DataFrame(rows, columns=["qid", "docno", "sim"]),
                            query_col="qid", doc_col="docno", score_col="sim")),
        (qafast.Qrels.from_arrays(*map(np.array, zip(*qrows))),
         qafast.Run.from_arrays(*map(np.array, zip(*rows)))),
    ]
    for q_in, r_in in forms:
        assert qafast.evaluate(q_in, r_in, "all_trec", per_query=True) == reference


def test_integer_ids_break_ties_numerically():
    qids = np.array([1, 1, 1, 2, 2])
    docs = np.array([9, 10, 100, 5, 7])
    scores = np.array([1.0, 1.0, 1.0, 0.3, 0.3])
    run = qafast.Run.from_arrays(qids, docs, scores)
    qrels = qafast.Qrels.from_arrays(np.array([1, 2]), np.array([9, 7]), np.array([1, 1]))
    got = qafast.evaluate(qrels, run, "recip_rank", per_query=True)
    assert got == {1: {"recip_rank": 1 / 3}, 2: {"recip_rank": 1.0}}


def test_workers_give_bitwise_identical_results():
    qrels, run = random_case(3, n_queries=400)
    one = qafast.evaluate(qrels, run, "all_trec", per_query=True, workers=1)
    for w in (2, 3, -1):
        assert qafast.evaluate(qrels, run, "all_trec", per_query=True, workers=w) == one
        assert qafast.evaluate(qrels, run, "all_trec", workers=w) == \
            qafast.evaluate(qrels, run, "all_trec")


@pytest.mark.parametrize("chunk", [1, 7, 64])
@pytest.mark.parametrize("seed", range(3))
def test_run_dict_in_chunks_gives_bitwise_identical_results(monkeypatch, seed, chunk):
    # evaluate() encodes a run dict a chunk of queries at a time; tiny chunks make queries
    # larger than a chunk (the buffers grow), chunks with no qrels query, and many chunks
    qrels, run = random_case(seed, n_queries=150)
    run["q-only-in-run"] = {"d1": 0.5}
    run["q-empty"] = {}
    run = dict(sorted(run.items(), key=lambda kv: hash(kv[0])))  # not the qrels' order
    whole = qafast.Run.from_dict(run)
    want_q = qafast.evaluate(qrels, whole, "all_trec", per_query=True)
    want = qafast.evaluate(qrels, whole, "all_trec")
    monkeypatch.setattr(qafast._run_sources, "_CHUNK_ENTRIES", chunk)
    assert qafast.evaluate(qrels, run, "all_trec", per_query=True) == want_q
    assert qafast.evaluate(qrels, run, "all_trec") == want
    assert qafast.evaluate(qrels, run, "all_trec", workers=2) == want
    int_qrels = {int(q[1:]): v for q, v in qrels.items()}
    int_run = {int(q[1:]): v for q, v in run.items() if q[1:].isdigit()}
    assert qafast.evaluate(int_qrels, int_run, ["map", "P_5"]) == \
        qafast.evaluate(int_qrels, qafast.Run.from_dict(int_run), ["map", "P_5"])


def test_run_dict_in_chunks_falls_back_to_name_bad_entries(monkeypatch):
    monkeypatch.setattr(qafast._run_sources, "_CHUNK_ENTRIES", 2)
    qrels = {f"q{i}": {"d1": 1} for i in range(10)}
    run = {f"q{i}": {"d1": 0.5, "d2": 0.25} for i in range(10)}
    run["q7"] = {"d1": 1, "d2": np.float64(0.5)}  # int and numpy scores: converted
    assert qafast.evaluate(qrels, run, ["map"]) == {"map": 1.0}
    run["q8"] = {"d1": float("nan")}
    with pytest.raises(ValueError, match="q8.*d1.*NaN"):
        qafast.evaluate(qrels, run, ["map"])
    with pytest.raises(ValueError, match="no query in common"):
        qafast.evaluate({"x": {"d1": 1}}, {f"q{i}": {"d1": 0.5} for i in range(9)}, ["map"])
    with pytest.raises(TypeError, match="mix str and int"):
        qafast.evaluate(qrels, {"q1": {"d1": 0.5}, 2: {"d1": 0.5}}, ["map"])


def _write_run(path, run, order=None, comment_every=0):
    lines = []
    for q in (order or list(run)):
        ranked = sorted(run[q].items(), key=lambda kv: -kv[1])
        for r, (d, sc) in enumerate(ranked):
            if comment_every and len(lines) % comment_every == 0:
                lines.append("# a comment line\n")
            lines.append(f"{q} Q0 {d} {r + 1} {sc} tag\n")
    path.write_text("".join(lines), encoding="utf-8")


@pytest.mark.parametrize("chunk", [1, 5, 64, 1 << 18])
@pytest.mark.parametrize("seed", range(2))
def test_run_file_in_chunks_gives_bitwise_identical_results(monkeypatch, tmp_path, seed,
                                                              chunk):
    qrels, run = random_case(seed, n_queries=150)
    run["q-only-in-run"] = {"d1": 0.5}
    p = tmp_path / "run.txt"
    _write_run(p, run, order=sorted(run, key=hash), comment_every=17)
    whole = qafast.Run.from_file(p)
    want_q = qafast.evaluate(qrels, whole, "all_trec", per_query=True)
    want = qafast.evaluate(qrels, whole, "all_trec")
    monkeypatch.setattr(qafast._runfile, "FILE_CHUNK_ROWS", chunk)
    assert qafast.evaluate(qrels, str(p), "all_trec", per_query=True) == want_q
    assert qafast.evaluate(qrels, p, "all_trec") == want
    assert qafast.evaluate(qrels, p.read_bytes(), "all_trec") == want
    # a query whose lines are not together: read whole, same numbers
    text = p.read_text(encoding="utf-8").splitlines(keepends=True)
    data = [t for t in text if not t.startswith("#")]
    p.write_text("".join(data[1:] + data[:1]), encoding="utf-8")
    assert qafast.evaluate(qrels, p, "all_trec") == want


@pytest.mark.parametrize("workers", [1, 2])
def test_a_run_file_evaluated_in_batches_leaves_no_reference_cycles(monkeypatch, tmp_path,
                                                                   workers):
    # each batch's arrays are freed when it has been measured, not when the garbage
    # collector next comes by: a 100M-line run peaked 100 MB higher with the collector off
    import gc

    qrels, run = random_case(3, n_queries=60)
    p = tmp_path / "run.txt"
    _write_run(p, run, order=sorted(run))
    monkeypatch.setattr(qafast._runfile, "FILE_CHUNK_ROWS", 16)
    gc.collect()
    gc.disable()
    try:
        got = qafast.evaluate(qrels, p, "all_trec", workers=workers)
        assert gc.collect() == 0
    finally:
        gc.enable()
    assert got == qafast.evaluate(qrels, qafast.Run.from_file(p), "all_trec")


def test_run_file_in_chunks_names_bad_lines(monkeypatch, tmp_path):
    monkeypatch.setattr(qafast._runfile, "FILE_CHUNK_ROWS", 2)
    qrels = {f"q{i}": {"d1": 1} for i in range(5)}
    p = tmp_path / "run.txt"
    body = "".join(f"q{i} Q0 d{j} {j} {1 - j / 10} t\n" for i in range(5) for j in range(3))
    p.write_text(body + "q9 Q0 d1 1 0.5 t\nq9 Q0 d1 2 0.4 t\n")
    with pytest.raises(ValueError, match=r"run.txt, line 17: query 'q9' retrieves document "
                                         r"'d1' twice"):
        qafast.evaluate(qrels, p, ["map"])
    p.write_text(body + "q9 Q0 d1 1 zero t\n")
    with pytest.raises(ValueError, match="line 16"):
        qafast.evaluate(qrels, p, ["map"])
    p.write_text(body)
    with pytest.raises(ValueError, match="no query in common"):
        qafast.evaluate({"x": {"d1": 1}}, p, ["map"])


def test_queries_qrels_averages_over_every_qrels_query():
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}}
    run = {"q1": {"a": 1.0}, "q4": {"z": 1.0}}
    assert qafast.evaluate(qrels, run, ["map", "num_q" if False else "num_rel"]) == {
        "map": 1.0, "num_rel": 1.0}
    got = qafast.evaluate(qrels, run, ["map", "num_rel", "num_ret", "gm_map"], queries="qrels")
    assert got["map"] == pytest.approx(1 / 3)
    assert got["num_rel"] == 3 and got["num_ret"] == 1
    assert got["gm_map"] == pytest.approx(math.exp((0 + 2 * math.log(1e-5)) / 3))


def test_max_docs_and_judged_only():
    qrels = {"q": {"a": 1, "b": 0, "c": 1}}
    run = {"q": {"x": 4.0, "a": 3.0, "y": 2.0, "c": 1.0}}
    assert qafast.evaluate(qrels, run, ["P@2", "num_ret"], judged_only=True) == {
        "P@2": 1.0, "num_ret": 2.0}
    assert qafast.evaluate(qrels, run, ["map", "num_ret"], max_docs=2) == {
        "map": 0.25, "num_ret": 2.0}


def test_one_qrels_serves_many_runs():
    qrels_d, run_d = random_case(5)
    qrels = qafast.Qrels(qrels_d)
    first = qafast.evaluate(qrels, run_d, "map")
    qafast.evaluate(qrels, {"q0": {"zzz": 1.0}}, "map")
    assert qafast.evaluate(qrels, qafast.Run(run_d), "map") == first


# ----------------------------------------------------------------------------- bad input

def test_nan_score_names_query_and_document():
    with pytest.raises(ValueError, match=r"'q1'.*'d2'.*NaN"):
        qafast.evaluate({"q1": {"d1": 1}}, {"q1": {"d1": 1.0, "d2": float("nan")}}, "map")
    with pytest.raises(ValueError, match="NaN"):
        qafast.Run.from_arrays(["q"], ["d"], [np.nan])


def test_duplicate_document_names_query_document_and_line(tmp_path):
    path = tmp_path / "dup.run"
    path.write_text("q1 Q0 a 1 1.0 r\nq1 Q0 b 2 0.5 r\nq1 Q0 a 3 0.2 r\n")
    with pytest.raises(ValueError, match=r"dup.run, line 3: query 'q1' retrieves document 'a' twice"):
        qafast.Run.from_file(path)
    with pytest.raises(ValueError, match="twice"):
        qafast.Run.from_arrays(["q", "q"], [3, 3], [1.0, 2.0])
    qpath = tmp_path / "dup.qrels"
    qpath.write_text("q1 0 a 1\nq1 0 a 0\n")
    with pytest.raises(ValueError, match=r"dup.qrels, line 2: query 'q1' judges document 'a' twice"):
        qafast.Qrels.from_file(qpath)


def test_non_integer_grade():
    with pytest.raises(TypeError, match=r"'q1'.*'d1'.*grade 1.5"):
        qafast.Qrels({"q1": {"d1": 1.5}})
    with pytest.raises(ValueError, match="not an integer"):
        qafast.Qrels.from_arrays(["q"], ["d"], [1.5])


def test_non_numeric_score_and_wrong_types():
    with pytest.raises(TypeError, match=r"'q1'.*'d1'.*score 'high'"):
        qafast.Run({"q1": {"d1": "high"}})
    with pytest.raises(TypeError, match="dict of dicts"):
        qafast.evaluate([1, 2], {"q": {"d": 1.0}}, "map")
    with pytest.raises(TypeError, match="maps to a list"):
        qafast.Run({"q1": [1, 2]})
    with pytest.raises(TypeError, match="document id 5"):
        qafast.Run({"q1": {5: 1.0}})


def test_mismatched_array_lengths():
    with pytest.raises(ValueError, match="differ in length"):
        qafast.Run.from_arrays([1, 1], [1, 2, 3], [0.1, 0.2])


def test_unknown_measure_names_it():
    with pytest.raises(ValueError, match="unknown measure 'nDCG@ten'"):
        qafast.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, "nDCG@ten")
    with pytest.raises(ValueError, match="repeated"):
        qafast.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, "P.5,5")


def test_no_query_in_common():
    with pytest.raises(ValueError, match="no query in common"):
        qafast.evaluate({"1": {"a": 1}}, {1: {"a": 1.0}} if False else {"2": {"a": 1.0}}, "map")


def test_bad_options():
    q, r = {"q": {"a": 1}}, {"q": {"a": 1.0}}
    with pytest.raises(ValueError, match="queries"):
        qafast.evaluate(q, r, "map", queries="all")
    with pytest.raises(ValueError, match="max_docs"):
        qafast.evaluate(q, r, "map", max_docs=0)
    with pytest.raises(ValueError, match="workers"):
        qafast.evaluate(q, r, "map", workers=0)


# ----------------------------------------------------------------- registry-wide invariants

ALL = [c.name for c in parse_measures("all_trec") if c.family not in ("runid", "num_q",
                                                                      "relstring")]
BOUNDED = [m for m in ALL if not m.startswith(("num_", "utility", "gm_"))]


@pytest.mark.parametrize("seed", range(3))
def test_every_measure_is_bounded_and_order_invariant(seed):
    qrels, run = random_case(seed)
    base = qafast.evaluate(qrels, run, ALL, per_query=True)
    for q, row in base.items():
        for m in BOUNDED:
            v = row[m]
            assert math.isnan(v) or -1e-12 <= v <= 1 + 1e-12, (q, m, v)
    rows = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    random.Random(seed).shuffle(rows)
    shuffled = qafast.Run.from_arrays(*map(np.array, zip(*rows)))
    assert qafast.evaluate(qrels, shuffled, ALL, per_query=True) == base


def test_integer_query_ids_match_string_query_ids():
    qrels_s, run_s = random_case(21, n_queries=60)
    to_int = {q: int(q[1:]) for q in qrels_s.keys() | run_s.keys()}
    qrels_i = {to_int[q]: v for q, v in qrels_s.items()}
    run_i = {to_int[q]: v for q, v in run_s.items()}
    rows = [(q, d, s) for q, docs in run_i.items() for d, s in docs.items()]
    qrows = [(q, d, g) for q, docs in qrels_i.items() for d, g in docs.items()]
    run = qafast.Run.from_arrays(*map(np.array, zip(*rows)))
    qrels = qafast.Qrels.from_arrays(*map(np.array, zip(*qrows)))
    for queries in ("run", "qrels"):
        got = qafast.evaluate(qrels, run, "all_trec", per_query=True, queries=queries)
        want = qafast.evaluate(qrels_s, run_s, "all_trec", per_query=True, queries=queries)
        assert list(got) == sorted(got)
        assert {f"q{q}": v for q, v in got.items()} == want
