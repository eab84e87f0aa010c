"""ir_measures' diversity measures in qafast.evaluate (qafast.diversity): against pyndeval
(ndeval's C code, which ir_measures' pyndeval provider calls) and qafast.ndeval, value by
value to the last bit, on random tie-heavy diversity qrels and runs."""
import importlib
import math
import random

import pytest

import qafast
from qafast.errors import InputTypeError, MeasureError

pyndeval = pytest.importorskip("pyndeval")

CUT = ["ERR_IA", "nERR_IA", "alpha_DCG", "alpha_nDCG", "P_IA", "StRecall"]
ND_CUT = {"ERR_IA": "ERR-IA", "nERR_IA": "nERR-IA", "alpha_DCG": "alpha-DCG",
          "alpha_nDCG": "alpha-nDCG", "P_IA": "P-IA", "StRecall": "strec"}


def random_data(seed: int, low: int = -1, high: int = 4, integer_ids: bool = False):
    """Diversity qrels and a run: ties in score, unjudged documents, queries without a
    relevant document, subtopics without one, queries only in the run or the qrels, rankings
    shorter and longer than the cut-offs."""
    rng = random.Random(seed)
    qrels: dict = {}
    run: dict = {}
    docs = [f"d{i}" if not integer_ids else str(i) for i in range(14)]
    if seed % 3 == 0 and not integer_ids:  # ids whose order is by code point, not by byte
        docs = [f"{'aé日🙂Z'[i % 5]}{i}" for i in range(14)]
    for q in range(rng.randint(1, 6)):
        qid = str(q + 1)
        if rng.random() < 0.85:
            subs: dict = {}
            for s in rng.sample(range(1, 6), rng.randint(1, 4)):
                judged = rng.sample(docs, rng.randint(1, 7))
                subs[str(s)] = {d: rng.choice([low * 10**5, high * 10**5])
                                if rng.random() < 0.05 else rng.randint(low, high)
                                for d in judged}
            qrels[qid] = subs
        if rng.random() < 0.9 or qid not in qrels:
            n = rng.choice([1, 3, 8, 25])
            run[qid] = {d: float(rng.randint(0, 3)) for d in rng.sample(docs, min(n, 14))}
    if not set(qrels) & set(run):
        qrels.setdefault("1", {"1": {"d0": 1}})
        run.setdefault("1", {"d0": 1.0})
    return qrels, run


def pyndeval_values(qrels, run, measures, level=1, alpha=0.5, beta=0.5):
    rows = [(q, s, d, g) for q, subs in qrels.items() for s, docs in subs.items()
            for d, g in docs.items()]
    scored = [(q, d, sc) for q, docs in sorted(run.items()) for d, sc in docs.items()]
    ev = pyndeval.RelevanceEvaluator(rows, measures, relevance_level=level, alpha=alpha,
                                     beta=beta)
    return ev.evaluate(scored)


def same(a, b):
    return a == b or (math.isnan(a) and math.isnan(b))


@pytest.mark.parametrize("seed", range(40))
def test_equals_pyndeval_query_by_query(seed):
    qrels, run = random_data(seed)
    rng = random.Random(seed)
    level = rng.choice([1, 1, 2, 3])
    alpha = rng.choice([0.5, 0.5, 0.0, 0.3, 1.0])
    beta = rng.choice([0.5, 0.8, 1.0])
    ks = sorted({1, rng.randint(2, 20), 20})
    names = [f"{m}@{k}" for m in CUT for k in ks] + ["NRBP", "nNRBP", "MAP-IA"]
    nd_names = [f"{ND_CUT[m]}@{k}" for m in CUT for k in ks] + ["NRBP", "nNRBP", "MAP-IA"]
    ours = [f"{m}(rel={level})@{k}" if m not in ("alpha_DCG", "alpha_nDCG")
            else f"{m}(rel={level}, alpha={alpha})@{k}" for m in CUT for k in ks]
    ours += [f"NRBP(rel={level}, alpha={alpha}, beta={beta})",
             f"nNRBP(rel={level}, alpha={alpha}, beta={beta})", f"AP_IA(rel={level})"]
    # ir_measures passes alpha 0.5 to ERR_IA, nERR_IA, P_IA, StRecall and AP_IA: a second
    # pyndeval call gives those
    theirs = pyndeval_values(qrels, run, nd_names, level, alpha, beta)
    plain = pyndeval_values(qrels, run, nd_names, level, 0.5, 0.5)
    got = qafast.evaluate(qafast.DiversityQrels(qrels), run, ours, per_query=True)
    assert set(got) == set(theirs)
    for q, row in got.items():
        for name, nd, mine in zip(names, nd_names, ours):
            ref = theirs if name.startswith(("alpha", "NRBP", "nNRBP")) else plain
            assert same(row[mine], ref[q][nd]), (seed, q, mine, row[mine], ref[q][nd])


@pytest.mark.parametrize("seed", range(20))
def test_equals_qafast_ndeval_topic_by_topic(seed):
    qrels, run = random_data(seed, low=0, high=3, integer_ids=True)
    lines = [f"{q} {s} {d} {g}\n" for q, subs in qrels.items() for s, docs in subs.items()
             for d, g in docs.items()]
    run_lines = []
    for q, docs in run.items():
        ranked = sorted(docs, key=lambda d: (-docs[d], d))  # pyndeval's order
        run_lines += [f"{q} Q0 {d} {i + 1} {docs[d]} r\n" for i, d in enumerate(ranked)]
    nd = qafast.ndeval("".join(lines).encode(), "".join(run_lines).encode())
    names = [f"{m}@{k}" for m in CUT for k in (5, 10, 20)] + ["NRBP", "nNRBP", "MAP_IA"]
    got = qafast.evaluate(qafast.DiversityQrels.from_file("".join(lines).encode()), run,
                          names, per_query=True)
    for q, row in got.items():
        for name in names:
            m, _, k = name.partition("@")
            col = f"{ND_CUT[m]}@{k}" if k else name.replace("MAP_IA", "MAP-IA")
            assert same(row[name], nd[q][col]), (seed, q, name)


def test_forms_of_diversity_qrels_agree():
    pd = pytest.importorskip("pandas")
    import ir_measures

    qrels, run = random_data(3)
    rows = [ir_measures.Qrel(q, d, g, s) for q, subs in qrels.items()
            for s, docs in subs.items() for d, g in docs.items()]
    frame = pd.DataFrame(rows)
    text = "".join(f"{r.query_id} {r.iteration} {r.doc_id} {r.relevance}\n" for r in rows)
    names = ["alpha_nDCG@20", "ERR_IA@5", "NRBP", "P_IA@10", "StRecall@10", "MAP_IA", "P@5"]
    want = qafast.evaluate(qafast.DiversityQrels(qrels), run, names)
    for form in (qrels, rows, frame, qafast.DiversityQrels(frame),
                 qafast.DiversityQrels.from_file(text.encode()), text.encode()):
        assert qafast.evaluate(form, run, names) == want


def test_other_measures_see_each_documents_highest_grade():
    dq = qafast.DiversityQrels({"q": {"1": {"a": 0, "b": 2}, "2": {"a": 1, "b": 0}}})
    run = {"q": {"a": 2.0, "b": 1.0, "c": 3.0}}
    plain = {"q": {"a": 1, "b": 2}}
    names = ["map", "ndcg_cut_3", "P@2"]
    assert qafast.evaluate(dq, run, names) == qafast.evaluate(plain, run, names)


def test_queries_and_options():
    qrels, run = random_data(7)
    dq = qafast.DiversityQrels(qrels)
    names = ["alpha_nDCG@10", "NRBP", "P_IA@5"]
    every = qafast.evaluate(dq, run, names, queries="qrels", per_query=True)
    assert set(every) == set(qrels)
    for q in set(qrels) - set(run):
        assert every[q]["alpha_nDCG@10"] == 0.0 and every[q]["NRBP"] == 0.0
    # judged_only: unjudged documents dropped before ranking, as ir_measures' judged_only
    judged = {q: {d: s for d, s in docs.items()
                  if any(d in per for per in qrels.get(q, {}).values())}
              for q, docs in run.items()}
    judged = {q: docs for q, docs in judged.items() if docs}
    a = qafast.evaluate(dq, run, names, judged_only=True, per_query=True)
    b = qafast.evaluate(dq, judged, names, per_query=True)
    assert {q: a[q] for q in b} == b
    # max_docs: the top of the ranking
    top = {q: dict(sorted(docs.items(), key=lambda i: (-i[1], i[0]))[:2])
           for q, docs in run.items()}
    assert (qafast.evaluate(dq, run, ["alpha_nDCG@10"], max_docs=2)
            == qafast.evaluate(dq, top, ["alpha_nDCG@10"]))


@pytest.mark.parametrize("seed", range(12))
def test_max_docs_and_judged_only_equal_pyndeval_on_the_cut_run(seed):
    # ties straddle the cut-off: the documents kept are pyndeval's first max_docs (score
    # descending, then document id ascending), whatever trec_eval's tie order would keep
    qrels, run = random_data(seed)
    rng = random.Random(seed)
    names = ["alpha_nDCG@5", "nERR_IA@10", "NRBP", "nNRBP", "AP_IA", "P_IA@5", "StRecall@5"]
    nd_names = ["alpha-nDCG@5", "nERR-IA@10", "NRBP", "nNRBP", "MAP-IA", "P-IA@5", "strec@5"]
    max_docs = rng.randint(1, 6)
    top = {q: dict(sorted(docs.items(), key=lambda i: (-i[1], i[0]))[:max_docs])
           for q, docs in run.items()}
    judged = {q: {d: s for d, s in docs.items()
                  if any(d in per for per in qrels.get(q, {}).values())}
              for q, docs in run.items()}
    judged = {q: docs for q, docs in judged.items() if docs}
    dq = qafast.DiversityQrels(qrels)
    for options, cut in (({"max_docs": max_docs}, top), ({"judged_only": True}, judged)):
        got = qafast.evaluate(dq, run, names, per_query=True, **options)
        want = pyndeval_values(qrels, cut, nd_names)
        for q in want:
            for mine, nd in zip(names, nd_names):
                assert same(got[q][mine], want[q][nd]), (seed, options, q, mine)


def test_the_encoded_qrels_are_reused_and_refuse_grades_beyond_32_bits():
    qrels, run = random_data(3)
    dq = qafast.DiversityQrels(qrels)
    names = ["alpha_nDCG@10", "nNRBP", "P@5"]
    first = qafast.evaluate(dq, run, names, per_query=True)
    assert qafast.evaluate(dq, run, names, per_query=True) == first
    assert qafast.evaluate(qafast.DiversityQrels(dq), run, names, per_query=True) == first
    # a copy keeps a file's numeric subtopic order
    assert qafast.DiversityQrels(qafast.DiversityQrels.from_file(b"1 10 a 1\n1 9 b 1\n")
                                 )._numeric
    # the other measures read int32 grades: a larger highest grade is refused, not wrapped
    with pytest.raises(qafast.InputError, match="query 'q', document 'd'.*32-bit"):
        qafast.evaluate({"q": {"1": {"d": 2**40}}}, {"q": {"d": 1.0}}, names)


def test_evaluate_runs_gives_each_runs_evaluate():
    qrels, run = random_data(11)
    _, other = random_data(12)
    dq = qafast.DiversityQrels(qrels)
    names = ["alpha_nDCG@20", "nERR_IA@20", "map"]
    got = qafast.evaluate_runs(dq, {"a": run, "b": other}, names)
    assert got["a"] == qafast.evaluate(dq, run, names)


def test_ir_measures_agrees():
    ir_measures = pytest.importorskip("ir_measures")
    qrels, run = random_data(5)
    rows = [ir_measures.Qrel(q, d, g, s) for q, subs in qrels.items()
            for s, docs in subs.items() for d, g in docs.items()]
    scored = [ir_measures.ScoredDoc(q, d, s) for q, docs in run.items()
              for d, s in docs.items()]
    # one pyndeval invocation per call: ir_measures 0.4.3 scores a second one 0 (it hands
    # the run, an iterator, to the first invocation only)
    for group in ([ir_measures.alpha_nDCG @ 20, ir_measures.alpha_DCG @ 5],
                  [ir_measures.ERR_IA @ 20, ir_measures.nERR_IA @ 20, ir_measures.P_IA @ 10,
                   ir_measures.AP_IA], [ir_measures.NRBP, ir_measures.nNRBP],
                  [ir_measures.StRecall @ 10]):
        want = ir_measures.pyndeval.calc_aggregate(group, rows, scored)
        got = qafast.evaluate(rows, run, group, queries="qrels")
        for m in group:
            # the means: qafast's is exactly rounded, ir_measures' a running sum
            assert same(got[m], want[m]) or got[m] == pytest.approx(want[m], rel=1e-15), m


def test_errors_name_what_is_missing():
    with pytest.raises(InputTypeError, match="needs diversity qrels"):
        qafast.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["alpha_nDCG@20"])
    with pytest.raises(MeasureError, match="needs a cutoff"):
        qafast.evaluate({"q": {"1": {"a": 1}}}, {"q": {"a": 1.0}}, ["alpha_nDCG"])
    with pytest.raises(qafast.FormatError, match="line 2"):
        qafast.DiversityQrels.from_file(b"1 1 a 1\n1 a 1\n")


def test_the_ir_measures_provider_passes_the_iteration_through():
    ir_measures = pytest.importorskip("ir_measures")
    from qafast.integrations.ir_measures import QafastProvider

    for seed in range(6):
        qrels, run = random_data(seed)
        rows = [ir_measures.Qrel(q, d, g, s) for q, subs in qrels.items()
                for s, docs in subs.items() for d, g in docs.items()]
        scored = [ir_measures.ScoredDoc(q, d, s) for q, docs in run.items()
                  for d, s in docs.items()]
        # a pyndeval invocation (rel, alpha, beta) per group: see test_ir_measures_agrees
        for group in ([ir_measures.alpha_nDCG @ 20, ir_measures.StRecall @ 20],
                      [ir_measures.nERR_IA @ 10, ir_measures.P_IA @ 5],
                      [ir_measures.P_IA(rel=2) @ 5],
                      [ir_measures.nNRBP(alpha=0.25, beta=0.75)]):
            want = list(ir_measures.pyndeval.iter_calc(group, rows, scored))
            got = list(QafastProvider().iter_calc(group, rows, scored))
            key = lambda m: (m.query_id, str(m.measure))
            assert len(got) == len(want)
            for a, b in zip(sorted(got, key=key), sorted(want, key=key)):
                assert key(a) == key(b) and same(a.value, b.value), (seed, a, b)


def test_compare_gives_evaluates_means():
    qrels, run = random_data(27)  # six queries
    _, other = random_data(38)
    dq = qafast.DiversityQrels(qrels)
    names = ["alpha_nDCG@20", "NRBP", "map"]
    c = qafast.compare(dq, {"a": run, "b": other}, names, queries="qrels")
    for i, r in enumerate((run, other)):
        want = qafast.evaluate(dq, r, names, queries="qrels")
        assert c.means[i].tolist() == [want[m] for m in names]


def test_surfaces_without_subtopics_say_so():
    with pytest.raises(MeasureError, match="RankingMetrics"):
        qafast.RankingMetrics(["alpha_nDCG@20"])
    pytest.importorskip("dask")
    qdask = importlib.import_module("qafast.dask")
    with pytest.raises(MeasureError, match="qafast.dask"):
        qdask.evaluate({"q": {"1": {"a": 1}}}, {"q": {"a": 1.0}}, ["alpha_nDCG@20"])


def test_the_command_line_reads_diversity_qrels(tmp_path, capsys):
    from qafast.cli import main

    qrels, run = random_data(4, low=0, high=3, integer_ids=True)
    qpath, rpath = tmp_path / "qrels", tmp_path / "run"
    qpath.write_text("".join(f"{q} {s} {d} {g}\n" for q, subs in qrels.items()
                             for s, docs in subs.items() for d, g in docs.items()))
    rpath.write_text("".join(f"{q} Q0 {d} 0 {s} tag\n" for q, docs in run.items()
                             for d, s in docs.items()))
    assert main(["trec", "-R", "diversity", "-m", "alpha_nDCG@20", "-m", "P_IA@5", "-o",
                 "json", str(qpath), str(rpath)]) == 0
    import json

    got = json.loads(capsys.readouterr().out)["all"]
    want = qafast.evaluate(qafast.DiversityQrels.from_file(str(qpath)), str(rpath),
                           ["alpha_nDCG@20", "P_IA@5"])
    assert got == want


def test_calc_aggregate_through_the_qafast_provider():
    ir_measures = pytest.importorskip("ir_measures")
    pd = pytest.importorskip("pandas")
    from qafast.integrations.ir_measures import patch

    qrels, run = random_data(9)
    rows = [ir_measures.Qrel(q, d, g, s) for q, subs in qrels.items()
            for s, docs in subs.items() for d, g in docs.items()]
    scored = [ir_measures.ScoredDoc(q, d, s) for q, docs in run.items()
              for d, s in docs.items()]
    measures = [ir_measures.alpha_nDCG @ 20, ir_measures.ERR_IA @ 20]
    want = ir_measures.pyndeval.calc_aggregate(measures, rows, scored)
    with patch():
        for q, r in ((rows, scored), (pd.DataFrame(rows), pd.DataFrame(scored))):
            got = ir_measures.calc_aggregate(measures, q, r)
            for m in measures:
                assert same(got[m], want[m]) or got[m] == pytest.approx(want[m], rel=1e-15)


@pytest.mark.parametrize("seed", range(20))
def test_a_qrels_dict_equals_pyndeval_query_by_query(seed):
    """The dicts themselves (read straight into ndeval's layout), not a DiversityQrels."""
    qrels, run = random_data(seed)
    names = [f"{ND_CUT[m]}@{k}" for m in CUT for k in (5, 10, 20)] + ["NRBP", "nNRBP",
                                                                          "MAP-IA"]
    ours = [f"{m}@{k}" for m in CUT for k in (5, 10, 20)] + ["NRBP", "nNRBP", "AP_IA"]
    theirs = pyndeval_values(qrels, run, names, 1, 0.5, 0.5)
    got = qafast.evaluate(qrels, run, ours, per_query=True)
    assert set(got) == set(theirs)
    for q, row in got.items():
        for nd, mine in zip(names, ours):
            assert same(row[mine], theirs[q][nd]), (seed, q, mine, row[mine], theirs[q][nd])
