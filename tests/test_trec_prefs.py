"""Properties of the preference measures' specification (qafast.reference.prefs), which
``qafast trec -R prefs`` and ``-R qrels_prefs`` print; tests/test_trec_golden.py holds
trec_eval's own outputs and tests/fuzz_trec_prefs.py compares with the binary."""

from hypothesis import given, settings
from hypothesis import strategies as st

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
