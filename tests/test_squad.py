"""qafast.squad against numbers worked out by hand from the official scripts' definitions.

Each case is one of the edge cases the scripts are known for (qa-anchors §2): empty against
empty under v1.1 and v2.0, a gold of only "the", missing predictions, tied no-answer
probabilities, the Hugging Face answer layout. Every case runs through both qafast.squad and
the plain-Python specification qafast.reference.squad.
"""

import json
import math

import pytest

from qafast import squad_eval as fast
from qafast.io.squad import SquadWarning
from qafast.reference import squad as spec

IMPLEMENTATIONS = [pytest.param(fast.squad, id="fast"), pytest.param(spec.squad, id="reference")]


def dataset(*questions, hf=False, version=None):
    """A one-paragraph SQuAD dataset from (id, [gold texts]) pairs; without ``version``, the
    file has no version field (scored with v2.0 rules unless a test asks for v1.1)."""
    qas = []
    for qid, golds in questions:
        if hf:
            answers = {"text": list(golds), "answer_start": [0] * len(golds)}
        else:
            answers = [{"text": g, "answer_start": 0} for g in golds]
        qas.append({"id": qid, "question": "?", "answers": answers})
    out = {"data": [{"title": "t", "paragraphs": [{"context": "c", "qas": qas}]}]}
    return out if version is None else {"version": version, **out}


@pytest.fixture(params=IMPLEMENTATIONS)
def squad(request):
    return request.param


# ------------------------------------------------------------------------------------------
# Empty answers
# ------------------------------------------------------------------------------------------

def test_empty_against_empty_v1_scores_em_1_f1_0(squad):
    # v1.1: EM compares normalized strings ("" == ""), F1 is 0 when no token is shared.
    ds = dataset(("q", [""]))
    assert squad(ds, {"q": ""}, version="1.1") == {"exact_match": 100.0, "f1": 0.0}


def test_empty_against_empty_v2_scores_1_1(squad):
    # v2.0: an empty answer list makes a NoAns question; "" against [""] is EM 1 and F1 1.
    ds = dataset(("q", []))
    assert squad(ds, {"q": ""}) == {"exact": 100.0, "f1": 100.0, "total": 1,
                                    "NoAns_exact": 100.0, "NoAns_f1": 100.0, "NoAns_total": 1}


def test_gold_of_only_the_is_hasans_but_scored_as_no_answer(squad):
    # has_ans comes from the raw list; the golds that normalize to "" are dropped, leaving [""].
    ds = dataset(("q", ["the"]))
    for pred in ("", "a", "The."):
        assert squad(ds, {"q": pred}) == {"exact": 100.0, "f1": 100.0, "total": 1,
                                          "HasAns_exact": 100.0, "HasAns_f1": 100.0,
                                          "HasAns_total": 1}
    assert squad(ds, {"q": "cat"})["exact"] == 0.0
    # v1.1 keeps the gold: EM("a", "the") is 1 (both normalize to ""), F1 is 0.
    assert squad(ds, {"q": "a"}, version="1.1") == {"exact_match": 100.0, "f1": 0.0}


def test_v2_drops_empty_golds_beside_real_ones(squad):
    # golds "" and "Paris": only "Paris" is kept, so an empty prediction scores 0, not 1.
    ds = dataset(("q", ["", "Paris"]))
    r = squad(ds, {"q": ""})
    assert (r["exact"], r["f1"], r["HasAns_total"]) == (0.0, 0.0, 1)
    # v1.1 keeps both: EM 1 against "", F1 0 (empty against empty).
    assert squad(ds, {"q": ""}, version="1.1") == {"exact_match": 100.0, "f1": 0.0}


def test_duplicate_tokens_count_as_a_multiset(squad):
    # "paris paris" vs "paris": P = 1/2, R = 1, F1 = 2PR/(P+R).
    p, r = 1.0 * 1 / 2, 1.0 * 1 / 1
    f1 = (2 * p * r) / (p + r)
    ds = dataset(("q", ["Paris"]))
    assert squad(ds, {"q": "paris paris"}, version="1.1") == {"exact_match": 0.0,
                                                             "f1": 100.0 * f1 / 1}


def test_em_and_f1_take_their_max_over_golds_separately(squad):
    # EM is 1 against "the cat" (after normalization), F1 best against "a big cat sat".
    ds = dataset(("q", ["big cat sat down", "The cat"]), ("r", ["dog"]))
    r = squad(ds, {"q": "cat", "r": "cat dog"}, version="1.1")
    f1_r = (2 * 0.5 * 1.0) / (0.5 + 1.0)
    assert r == {"exact_match": 100.0 * 1 / 2, "f1": 100.0 * (1.0 + f1_r) / 2}


# ------------------------------------------------------------------------------------------
# Missing predictions and unknown ids
# ------------------------------------------------------------------------------------------

def test_missing_prediction_v1_scores_zero(squad):
    ds = dataset(("a", ["x"]), ("b", ["y"]))
    assert squad(ds, {"a": "x"}, version="1.1") == {"exact_match": 50.0, "f1": 50.0}
    assert squad(ds, {"a": "x"}, version="1.1", missing="skip") == {"exact_match": 100.0,
                                                                    "f1": 100.0}


def test_missing_prediction_v2_is_left_out_even_from_the_splits(squad):
    # The script skips it overall and crashes (KeyError) on the splits; qafast leaves it out.
    ds = dataset(("a", ["x"]), ("b", ["y"]), ("c", []))
    assert squad(ds, {"a": "x", "c": "z"}) == {
        "exact": 50.0, "f1": 50.0, "total": 2, "HasAns_exact": 100.0, "HasAns_f1": 100.0,
        "HasAns_total": 1, "NoAns_exact": 0.0, "NoAns_f1": 0.0, "NoAns_total": 1}
    # a split whose every question is missing disappears
    assert "NoAns_total" not in squad(ds, {"a": "x", "b": "y"})


def test_missing_prediction_v2_zero_counts_everywhere(squad):
    ds = dataset(("a", ["x"]), ("b", ["y"]), ("c", []))
    r = squad(ds, {"a": "x"}, missing="zero")
    assert r == {"exact": 100.0 / 3, "f1": 100.0 / 3, "total": 3, "HasAns_exact": 50.0,
                 "HasAns_f1": 50.0, "HasAns_total": 2, "NoAns_exact": 0.0, "NoAns_f1": 0.0,
                 "NoAns_total": 1}


def test_missing_zero_never_enters_the_threshold_walk(squad):
    # c (NoAns) has no prediction: it scores 0 at every threshold, so the walk starts at 0
    # NoAns credits; a (HasAns, right) at 0.3 raises it to 1 of 3 questions.
    ds = dataset(("a", ["x"]), ("b", ["y"]), ("c", []))
    r = squad(ds, {"a": "x", "b": "no"}, missing="zero",
              na_probs={"a": 0.3, "b": 0.1, "c": 0.0})
    assert (r["best_exact"], r["best_exact_thresh"]) == (100.0 * 1.0 / 3, 0.3)
    # PR: ranked b (0.1), a (0.3); positives a and b (c is NoAns): AP = 0 + 0.5 * 0.5
    assert r["pr_exact_ap"] == 100.0 * (0.0 + 0.5 * (0.5 - 0.0))


def test_missing_error(squad):
    ds = dataset(("a", ["x"]), ("b", ["y"]))
    for version in ("1.1", "2.0"):
        with pytest.raises(ValueError, match="'b'"):
            squad(ds, {"a": "x"}, version=version, missing="error")


def test_unknown_prediction_ids_are_ignored_with_a_warning():
    ds = dataset(("a", ["x"]))
    with pytest.warns(SquadWarning, match="'zzz'"):
        assert fast.squad(ds, {"a": "x", "zzz": "y"})["exact"] == 100.0
    with pytest.warns(SquadWarning, match="'zzz'"):
        fast.squad(ds, {"a": "x", "zzz": "y"}, version="1.1")


# ------------------------------------------------------------------------------------------
# Duplicated ids
# ------------------------------------------------------------------------------------------

def test_duplicate_ids_v1_count_each_time_v2_once_with_the_last_answers(squad):
    ds = dataset(("a", ["x"]), ("b", ["y"]), ("a", ["z"]))
    # v1.1: a scored against x (right) and against z (wrong), b right: 2 of 3
    assert squad(ds, {"a": "x", "b": "y"}, version="1.1")["exact_match"] == 100.0 * 2 / 3
    # v2.0: a is one question, in first place, with the last answers (z): 1 of 2
    r = squad(ds, {"a": "x", "b": "y"})
    assert (r["exact"], r["total"]) == (50.0, 2)


# ------------------------------------------------------------------------------------------
# No-answer threshold, best threshold, precision-recall
# ------------------------------------------------------------------------------------------

def tie_case(order):
    """qa-anchors §2.5: a (HasAns, right), b (NoAns, says "dog"), c (NoAns, says ""),
    d (HasAns, right); probabilities a .5, b .5, c .1, d .9 given in ``order``."""
    ds = dataset(("a", ["Paris"]), ("b", []), ("c", []), ("d", ["red dog"]))
    preds = {"a": "paris", "b": "dog", "c": "", "d": "the red dog"}
    probs = {"a": 0.5, "b": 0.5, "c": 0.1, "d": 0.9}
    return ds, preds, {k: probs[k] for k in order}


def test_best_threshold_ties_are_not_grouped_and_follow_na_probs_order(squad):
    # walk c(.1) a(.5) b(.5) d(.9) from 2 NoAns credits: 2, 3 (best, at .5), 2, 3 -> 75.0 at .5
    r = squad(*tie_case("abcd")[:2], na_probs=tie_case("abcd")[2])
    assert (r["best_exact"], r["best_exact_thresh"]) == (75.0, 0.5)
    assert (r["best_f1"], r["best_f1_thresh"]) == (75.0, 0.5)
    # b before a: 2, 1, 2, 3 (best, at .9) -> 75.0 at .9
    r2 = squad(*tie_case("bacd")[:2], na_probs=tie_case("bacd")[2])
    assert (r2["best_exact"], r2["best_exact_thresh"]) == (75.0, 0.9)
    # the PR curve groups ties: the same AP in both orders. Points after c (p 0, r 0),
    # after b (p 1/3, r 1/2), after d (p 1/2, r 1): AP = 0 + 1/3 * 1/2 + 1/2 * 1/2
    ap = 100.0 * (((0.0 + 0.0 * 0.0) + (1.0 / 3.0) * (0.5 - 0.0)) + (2.0 / 4.0) * (1.0 - 0.5))
    for res in (r, r2):
        assert res["pr_exact_ap"] == res["pr_f1_ap"] == res["pr_oracle_ap"] == ap
    # thresholds at the default 1.0 never fire: a, c, d right, b wrong
    assert (r["exact"], r["HasAns_exact"], r["NoAns_exact"]) == (75.0, 100.0, 50.0)
    assert list(r) == ["exact", "f1", "total", "HasAns_exact", "HasAns_f1", "HasAns_total",
                       "NoAns_exact", "NoAns_f1", "NoAns_total", "best_exact",
                       "best_exact_thresh", "best_f1", "best_f1_thresh", "pr_exact_ap",
                       "pr_f1_ap", "pr_oracle_ap"]


def test_threshold_is_strict_and_replaces_scores_by_not_has_ans(squad):
    ds, preds, probs = tie_case("abcd")
    # thresh .5: only d (.9 > .5) is predicted unanswerable -> 0 (HasAns); .5 is not > .5
    r = squad(ds, preds, na_probs=probs, na_prob_thresh=0.5)
    assert (r["exact"], r["HasAns_exact"], r["NoAns_exact"]) == (50.0, 50.0, 50.0)
    # thresh .2: a, b, d fire -> a 0, b 1, d 0; c keeps its 1
    r = squad(ds, preds, na_probs=probs, na_prob_thresh=0.2)
    assert (r["exact"], r["HasAns_exact"], r["NoAns_exact"]) == (50.0, 0.0, 100.0)
    # without na_probs every probability is 0.0; a negative threshold fires everywhere
    r = squad(ds, preds, na_prob_thresh=-0.5)
    assert (r["exact"], r["HasAns_exact"], r["NoAns_exact"]) == (50.0, 0.0, 100.0)
    assert "best_exact" not in r


def test_best_threshold_stays_zero_when_nothing_beats_all_no_answer(squad):
    ds = dataset(("a", ["x"]), ("b", []))
    r = squad(ds, {"a": "wrong", "b": ""}, na_probs={"a": 0.2, "b": 0.7})
    assert (r["best_exact"], r["best_exact_thresh"]) == (50.0, 0.0)
    assert (r["best_f1"], r["best_f1_thresh"]) == (50.0, 0.0)


def test_fractional_f1_in_the_walk_and_the_curve(squad):
    # a: "red dog" vs "big red dog": P 1, R 2/3, F1 0.8; b NoAns answered "": no cost
    ds = dataset(("a", ["big red dog"]), ("b", []))
    r = squad(ds, {"a": "red dog", "b": ""}, na_probs={"a": 0.25, "b": 0.75})
    p, rec = 1.0, 2.0 / 3.0
    f1 = (2 * p * rec) / (p + rec)
    assert (r["best_f1"], r["best_f1_thresh"]) == (100.0 * (1 + f1) / 2, 0.25)
    assert (r["best_exact"], r["best_exact_thresh"]) == (50.0, 0.0)
    # PR over F1: a (tp f1, p f1, r f1), b (p f1/2, r f1)
    assert r["pr_f1_ap"] == 100.0 * ((0.0 + f1 * (f1 - 0.0)) + (f1 / 2.0) * (f1 - f1))
    assert r["pr_oracle_ap"] == 100.0


def test_integer_probabilities_come_back_as_given(squad):
    ds = dataset(("a", ["x"]), ("b", []))
    r = squad(ds, {"a": "x", "b": "oops"}, na_probs={"a": 0, "b": 1})
    assert r["best_exact_thresh"] == 0 and type(r["best_exact_thresh"]) is int
    assert r["best_exact"] == 100.0


def test_only_no_answer_questions_have_no_pr_keys(squad):
    ds = dataset(("a", []), ("b", []))
    r = squad(ds, {"a": "", "b": "x"}, na_probs={"a": 0.1, "b": 0.2})
    assert list(r) == ["exact", "f1", "total", "NoAns_exact", "NoAns_f1", "NoAns_total",
                       "best_exact", "best_exact_thresh", "best_f1", "best_f1_thresh"]
    assert (r["best_exact"], r["best_exact_thresh"]) == (100.0, 0.0)


def test_only_answerable_questions_have_no_noans_keys(squad):
    ds = dataset(("a", ["x"]))
    assert list(squad(ds, {"a": "x"})) == ["exact", "f1", "total", "HasAns_exact",
                                           "HasAns_f1", "HasAns_total"]


def test_extra_probabilities_are_ignored(squad):
    ds = dataset(("a", ["x"]), ("b", []))
    base = squad(ds, {"a": "x", "b": ""}, na_probs={"a": 0.1, "b": 0.2})
    with pytest.warns(SquadWarning) if squad is fast.squad else _nothing():
        extra = squad(ds, {"a": "x", "b": ""}, na_probs={"zz": 0.0, "a": 0.1, "b": 0.2})
    assert extra == base


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_missing_probability_is_an_error(squad):
    ds = dataset(("a", ["x"]), ("b", []))
    with pytest.raises(ValueError, match="'b'"):
        squad(ds, {"a": "x", "b": ""}, na_probs={"a": 0.1})


# ------------------------------------------------------------------------------------------
# Input layouts and options
# ------------------------------------------------------------------------------------------

def test_hugging_face_answers_layout(squad):
    plain = dataset(("a", ["Paris", "Paris, France"]), ("b", []))
    hf = dataset(("a", ["Paris", "Paris, France"]), ("b", []), hf=True)
    preds = {"a": "France", "b": ""}
    for version in ("2.0",):
        assert squad(hf, preds, version=version) == squad(plain, preds, version=version)
    r = squad(hf, preds)
    assert (r["HasAns_total"], r["NoAns_total"]) == (1, 1)
    f1 = (2 * 1.0 * 0.5) / (1.0 + 0.5)      # "France" vs "Paris, France": P 1, R 1/2
    assert r["HasAns_f1"] == 100.0 * f1 / 1


def test_dataset_as_list_of_articles(squad):
    ds = dataset(("a", ["x"]))
    assert squad(ds["data"], {"a": "x"}) == squad(ds, {"a": "x"})


def test_v1_needs_a_gold_and_v11_has_no_probabilities(squad):
    with pytest.raises(ValueError, match="'b'"):
        squad(dataset(("a", ["x"]), ("b", [])), {"a": "x", "b": ""}, version="1.1")
    with pytest.raises(ValueError):
        squad(dataset(("a", ["x"])), {"a": "x"}, version="1.1", na_probs={"a": 0.0})


def test_nothing_to_score(squad):
    with pytest.raises(ValueError):
        squad({"data": []}, {})
    with pytest.raises(ValueError):
        squad(dataset(("a", ["x"])), {})      # v2.0 skips the only question


def test_bad_options():
    ds = dataset(("a", ["x"]))
    with pytest.raises(ValueError, match="version"):
        fast.squad(ds, {"a": "x"}, version="3")
    with pytest.raises(ValueError, match="missing"):
        fast.squad(ds, {"a": "x"}, missing="ignore")
    with pytest.raises(TypeError, match="na_prob_thresh"):
        fast.squad(ds, {"a": "x"}, na_prob_thresh="0.5")
    with pytest.raises(ValueError, match="version"):
        fast.squad(ds, {"a": "x"}, version="v2.0")


def test_result_is_plain_json_types():
    ds, preds, probs = tie_case("abcd")
    r = fast.squad(ds, preds, na_probs=probs)
    assert all(type(v) is (int if k.endswith("total") else float) for k, v in r.items())
    json.dumps(r)
