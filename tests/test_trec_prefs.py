"""Properties of the preference measures' specification (qafast.reference.prefs), which
``qafast trec -R prefs`` and ``-R qrels_prefs`` print; tests/test_trec_golden.py holds
trec_eval's own outputs and tests/fuzz_trec_prefs.py compares with the binary."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qafast.errors import InputError
from qafast.reference.prefs import PREFS_MEASURES, prefs_measures

DOCS = ["a", "b", "c", "d", "é", "D"]
levels = st.dictionaries(st.sampled_from(DOCS), st.sampled_from([0.0, 1.0, 2.0, 3.5, -1.0]),
                         min_size=1)
ranking = st.lists(st.tuples(st.sampled_from(DOCS + ["x", "y"]),
                             st.sampled_from([0.0, 0.5, 1.0, 2.0])),
                   unique_by=lambda t: t[0], max_size=8)


@settings(max_examples=80, deadline=None)
@given(levels, ranking)
def test_one_group_counts_every_ordered_pair_once(judged, run):
    lines = [("g", "0", d, lvl) for d, lvl in judged.items()]
    got = prefs_measures(lines, run)
    assert list(got) == list(PREFS_MEASURES)
    pairs = sum(1 for a in judged.values() for b in judged.values() if a > b)
    assert got["prefs_num_prefs_poss"] == pairs
    ranked = [d for d, _ in sorted(run, key=lambda t: (-t[1], t[0].encode()))]
    pos = {d: i for i, d in enumerate(ranked)}
    big = len(ranked)
    ful = sum(1 for a, la in judged.items() for b, lb in judged.items()
              if la > lb and pos.get(a, big) < pos.get(b, big) and a in pos)
    assert got["prefs_num_prefs_ful"] == ful
    for name, v in got.items():
        if name not in ("prefs_num_prefs_poss", "prefs_num_prefs_ful",
                        "prefs_num_prefs_ful_ret"):
            assert 0.0 <= v <= 1.0 or name.startswith("prefs_avgjg_Rnonrel")


@settings(max_examples=60, deadline=None)
@given(levels, ranking)
def test_a_group_split_in_sub_groups_keeps_its_direct_preferences(judged, run):
    # the same levels given as one sub-group per pair of documents: the same preferences
    # (transitive closure adds none that the levels do not already give)
    one = prefs_measures([("g", "0", d, lvl) for d, lvl in judged.items()], run)
    docs = sorted(judged)
    split = [("g", f"{a}|{b}", d, judged[d]) for i, a in enumerate(docs) for b in docs[i + 1:]
             if judged[a] != judged[b] for d in (a, b)]
    if not split:
        return
    got = prefs_measures(split, run)
    for name in ("prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret",
                 "prefs_simp", "prefs_simp_ret", "prefs_simp_imp", "prefs_pair",
                 "prefs_pair_ret", "prefs_pair_imp", "prefs_avgjg"):
        assert got[name] == one[name], name


def test_empty_ranking_and_placeholder():
    got = prefs_measures([("g", "0", "a", 1.0), ("g", "0", "b", 0.0)],
                         [("ceci_nest_pas_un_docno", 1.0)])
    assert got["prefs_num_prefs_poss"] == 1 and got["prefs_num_prefs_ful"] == 0


# the kernel (qafast._kernels.prefs_measures, through qafast._trec_prefs) against the
# specification, on files written from random judgments and runs

QIDS = ["q1", "q2", "é3"]
judgment = st.tuples(st.sampled_from(QIDS), st.sampled_from(["A", "B", "é"]),
                     st.sampled_from(["s1", "s2", "0"]), st.sampled_from(DOCS),
                     st.sampled_from([0.0, 1.0, 2.0, 3.5, -1.0]))
run_lines = st.lists(st.tuples(st.sampled_from(QIDS), st.sampled_from(DOCS + ["x", "y"]),
                               st.sampled_from([0.0, 0.5, 1.0, 2.0])),
                     unique_by=lambda t: (t[0], t[1]), max_size=14)


def _files(tmp_path, judged, run, as_qrels):
    j = tmp_path / "judged"
    r = tmp_path / "run"
    if as_qrels:
        j.write_text("".join(f"{q} {g} {d} {lvl}\n" for q, g, _, d, lvl in judged),
                     encoding="utf-8")
    else:
        j.write_text("".join(f"{q} {g} {s} {d} {lvl}\n" for q, g, s, d, lvl in judged),
                     encoding="utf-8")
    r.write_text("".join(f"{q} Q0 {d} 1 {s} tag\n" for q, d, s in run), encoding="utf-8")
    return str(j), str(r)


def _expected(judged, run, as_qrels, queries, max_docs):
    by_q: dict = {}
    for q, g, s, d, lvl in judged:
        by_q.setdefault(q, []).append((g, "0" if as_qrels else s, d, lvl))
    ranked: dict = {}
    for q, d, s in run:
        ranked.setdefault(q, []).append((d, s))
    ids = sorted(q for q in by_q if queries == "qrels" or q in ranked)
    ids.sort(key=lambda q: q.encode())
    return ids, [prefs_measures(by_q[q], ranked.get(q, [("ceci_nest_pas_un_docno", 1.0)]),
                                max_docs=max_docs) for q in ids]


@settings(max_examples=150, deadline=None)
@given(st.lists(judgment, min_size=1, max_size=18), run_lines, st.booleans(),
       st.sampled_from(["run", "qrels"]), st.sampled_from([None, 1, 2, 5]))
def test_kernel_is_the_specification(tmp_path_factory, judged, run, as_qrels, queries,
                                     max_docs):
    import pytest

    from qafast._measure_parser import Column
    from qafast._trec_prefs import evaluate_prefs, read_prefs
    from qafast.errors import InputError
    from qafast.reference.prefs import PrefsError

    if as_qrels:  # a qrels file judges a document once per group
        seen: set = set()
        judged = [t for t in judged if (t[0], t[1], t[3]) not in seen
                  and not seen.add((t[0], t[1], t[3]))]
    if not run:
        run = [("q1", "x", 1.0)]
    tmp = tmp_path_factory.mktemp("prefs")
    jpath, rpath = _files(tmp, judged, run, as_qrels)
    columns = [Column(name, "map") for name in PREFS_MEASURES]
    judgments = read_prefs(jpath, "qrels_prefs" if as_qrels else "prefs")
    try:
        ids, expected = _expected(judged, run, as_qrels, queries, max_docs)
    except PrefsError:
        with pytest.raises(InputError):
            evaluate_prefs(judgments, rpath, columns, queries=queries, max_docs=max_docs)
        return
    got = evaluate_prefs(judgments, rpath, columns, queries=queries, max_docs=max_docs)
    assert got.ids == ids
    for p, want in enumerate(expected):
        assert got.values[p].tolist() == [want[m] for m in PREFS_MEASURES], ids[p]


def test_kernel_refuses_contradicting_preferences(tmp_path):
    import pytest

    from qafast._measure_parser import Column
    from qafast._trec_prefs import evaluate_prefs, read_prefs
    from qafast.errors import InputError

    j = tmp_path / "prefs"
    j.write_text("q A s1 a 2\nq A s1 b 1\nq A s2 b 2\nq A s2 a 1\n")
    r = tmp_path / "run"
    r.write_text("q Q0 a 1 1 t\n")
    with pytest.raises(InputError, match="judge group 'A' contradict"):
        evaluate_prefs(read_prefs(str(j), "prefs"), str(r), [Column("prefs_simp", "map")],
                       queries="run", max_docs=None)


def test_a_placeholder_docno_judged_for_a_query_missing_from_the_run(tmp_path):
    from qafast._measure_parser import Column
    from qafast._trec_prefs import evaluate_prefs, read_prefs

    j = tmp_path / "qrels"
    j.write_text("q 0 ceci_nest_pas_un_docno 1\nq 0 b 0\nr 0 a 1\n")
    r = tmp_path / "run"
    r.write_text("r Q0 a 1 1 t\n")
    got = evaluate_prefs(read_prefs(str(j), "qrels_prefs"), str(r),
                         [Column(name, "map") for name in PREFS_MEASURES], queries="qrels",
                         max_docs=None)
    want = prefs_measures([("0", "0", "ceci_nest_pas_un_docno", 1.0), ("0", "0", "b", 0.0)],
                          [("ceci_nest_pas_un_docno", 1.0)])
    assert want["prefs_num_prefs_ful"] == 1.0
    assert got.ids == ["q", "r"]
    assert got.values[0].tolist() == [want[m] for m in PREFS_MEASURES]


# qafast.evaluate(..., qrels_format=...): the numbers qafast trec -R prints

PREFS = (b"q1 A s1 a 2\nq1 A s1 b 1\nq1 A s2 c 3\nq1 A s2 b 2\nq1 B 0 a 1\nq1 B 0 c 0\n"
         b"q2 A 0 a 1\nq2 A 0 b 0\n")
RUN = b"q1 Q0 a 1 2 r\nq1 Q0 c 2 1 r\nq1 Q0 x 3 0.5 r\nq2 Q0 b 1 1 r\n"


def test_evaluate_gives_the_specification_s_values_and_their_mean():
    import qafast

    got = qafast.evaluate(PREFS, RUN, "all_prefs", qrels_format="prefs", per_query=True)
    q1 = prefs_measures([("A", "s1", "a", 2.0), ("A", "s1", "b", 1.0), ("A", "s2", "c", 3.0),
                         ("A", "s2", "b", 2.0), ("B", "0", "a", 1.0), ("B", "0", "c", 0.0)],
                        [("a", 2.0), ("c", 1.0), ("x", 0.5)])
    q2 = prefs_measures([("A", "0", "a", 1.0), ("A", "0", "b", 0.0)], [("b", 1.0)])
    assert got == {"q1": q1, "q2": q2}
    mean = qafast.evaluate(PREFS, RUN, ["prefs_simp", "prefs_num_prefs_poss"],
                           qrels_format="prefs")
    assert mean == {"prefs_simp": (q1["prefs_simp"] + q2["prefs_simp"]) / 2,
                    "prefs_num_prefs_poss": q1["prefs_num_prefs_poss"] + 1.0}


def test_evaluate_reads_a_qrels_file_as_preferences_and_judge_groups(tmp_path):
    import qafast

    qrels = tmp_path / "qrels"
    qrels.write_bytes(b"q1 A a 1\nq1 A b 0\nq1 B c 1\nq1 B a 0\n")
    got = qafast.evaluate(str(qrels), RUN, ["prefs_simp"], qrels_format="qrels_prefs",
                          per_query=True)
    want = prefs_measures([("A", "0", "a", 1.0), ("A", "0", "b", 0.0), ("B", "0", "c", 1.0),
                           ("B", "0", "a", 0.0)], [("a", 2.0), ("c", 1.0), ("x", 0.5)])
    assert got == {"q1": {"prefs_simp": want["prefs_simp"]}}
    # judge group A: a relevant at rank 1 (AP 1); B: c relevant at rank 2 (AP 0.5)
    jg = qafast.evaluate(qrels, {"q1": {"a": 2.0, "c": 1.0, "x": 0.5}},
                         ["map_avgjg", "P_avgjg.1,2"], qrels_format="qrels_jg")
    assert jg == {"map_avgjg": 0.75, "P_avgjg_1": 0.5, "P_avgjg_2": 0.5}


def test_evaluate_refuses_judgment_measures_with_qrels_and_others_with_judgments():
    import pytest

    import qafast
    from qafast.errors import InputError, InputTypeError

    with pytest.raises(InputError, match="qrels_format='prefs'"):
        qafast.evaluate({"q1": {"a": 1}}, RUN, ["map", "prefs_simp"])
    with pytest.raises(InputError, match="qrels_format='qrels_jg'"):
        qafast.evaluate({"q1": {"a": 1}}, RUN, "P_avgjg.5")
    with pytest.raises(InputError, match="'map' cannot be computed from preference"):
        qafast.evaluate(PREFS, RUN, ["map"], qrels_format="prefs")
    with pytest.raises(InputError, match="qrels_format must be"):
        qafast.evaluate(PREFS, RUN, ["prefs_simp"], qrels_format="pref")
    with pytest.raises(InputTypeError, match="a file"):
        qafast.evaluate({"q1": {"a": 1}}, RUN, ["prefs_simp"], qrels_format="prefs")
    with pytest.raises(InputError, match="query 'q1'.*contradict"):
        qafast.evaluate(b"q1 A s1 a 2\nq1 A s1 b 1\nq1 A s2 b 2\nq1 A s2 a 1\n", RUN,
                        ["prefs_simp"], qrels_format="prefs")


def test_a_malformed_line_of_judgments_given_as_bytes_is_named():
    import pytest

    import qafast
    from qafast.errors import FormatError

    with pytest.raises(FormatError, match=r"^<bytes>, line 2: a qrels_prefs line is"):
        qafast.evaluate(b"q1 A d1 2\nq1 A 0 d2 1\n", RUN, ["prefs_simp"],
                        qrels_format="qrels_prefs")


# qafast.evaluate_runs(..., qrels_format=...): each run's numbers are evaluate()'s


def test_evaluate_runs_takes_every_judgment_format(tmp_path):
    import qafast

    other = b"q1 Q0 c 1 3 s\nq1 Q0 b 2 2 s\nq1 Q0 a 3 1 s\nq2 Q0 a 1 1 s\n"
    runs = {"first": RUN, "second": other}
    prefs = tmp_path / "prefs"
    prefs.write_bytes(PREFS)
    qrels = tmp_path / "qrels"
    qrels.write_bytes(b"q1 A a 1\nq1 A b 0\nq1 B c 1\nq1 B a 0\nq2 A a 1\n")
    for judgments, fmt, measures in ((prefs, "prefs", "all_prefs"),
                                     (PREFS, "prefs", ["prefs_simp", "prefs_pair"]),
                                     (str(qrels), "qrels_prefs", ["prefs_simp"]),
                                     (qrels, "qrels_jg", ["map_avgjg", "P_avgjg.1,2"])):
        for per_query in (False, True):
            for queries in ("run", "qrels"):
                got = qafast.evaluate_runs(judgments, runs, measures, qrels_format=fmt,
                                           per_query=per_query, queries=queries)
                assert list(got) == ["first", "second"]
                for name, run in runs.items():
                    assert got[name] == qafast.evaluate(judgments, run, measures,
                                                        qrels_format=fmt, per_query=per_query,
                                                        queries=queries), (fmt, name)
    # run files given by path, and the prefs_* names with qrels refused as evaluate refuses
    paths = []
    for name, run in runs.items():
        path = tmp_path / f"{name}.run"
        path.write_bytes(run)
        paths.append(path)
    got = qafast.evaluate_runs(prefs, paths, ["prefs_simp"], qrels_format="prefs")
    assert got == {str(p): qafast.evaluate(PREFS, p.read_bytes(), ["prefs_simp"],
                                           qrels_format="prefs") for p in paths}
    with pytest.raises(InputError, match="qrels_format='prefs'"):
        qafast.evaluate_runs({"q1": {"a": 1}}, runs, ["prefs_simp"])
    with pytest.raises(InputError, match="qrels_format must be"):
        qafast.evaluate_runs(PREFS, runs, ["prefs_simp"], qrels_format="pref")
    with pytest.raises(OSError, match="missing"):
        qafast.evaluate_runs(tmp_path / "missing", runs, ["prefs_simp"], qrels_format="prefs")


def test_evaluate_runs_names_the_run_a_judgment_format_error_comes_from():
    import qafast

    with pytest.raises(InputError) as caught:
        qafast.evaluate_runs(PREFS, {"good": RUN, "bad": b"q1 Q0 a 1 2 r\nq1 Q0 a 2 1 r\n"},
                             ["prefs_simp"], qrels_format="prefs")
    assert "'bad'" in " ".join([str(caught.value), *getattr(caught.value, "__notes__", [])])
