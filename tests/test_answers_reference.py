"""qafast.reference.answers against numbers worked out by hand from the official scripts' rules
(SQuAD v1.1/v2.0, MLQA, CMRC 2018, DRCD, PIAF); each case names the rule it pins down."""

import math

import pytest

from qafast.reference import answers as R


@pytest.mark.parametrize("text, expected", [
    ("The Eiffel–Tower!", "eiffel–tower"),          # en dash is not ASCII punctuation
    ("the-end", "theend"),                           # removal joins neighbours
    ("don't", "dont"),
    ("A.B.C.", "abc"),
    ("a\u00a0b", "b"),                               # NBSP splits; "a" is an article
    ("ＴＨＥ end", "ｔｈｅ end"),                    # full-width is not an article
    ("İ", "i\u0307"),                                # str.lower gives two code points
    ("“Quoted”  text", "“quoted” text"),           # curly quotes stay
    ("An apple, a day; the end.", "apple day end"),
    ("theater anthem", "theater anthem"),            # whole words only
    ("the", ""),
    ("", ""),
    ("Straße", "straße"),                            # lower, not casefold
])
def test_normalize_squad(text, expected):
    assert R.normalize_squad(text) == expected


def test_normalizers_by_name():
    assert R.get_normalizer("bioasq")("EGFR ") == "egfr "
    assert R.get_normalizer("none")("A.") == "A."
    assert R.normalize_drcd("北京，大學。") == "北京大學"
    assert R.normalize_mlqa("Eiffel–Tower $5 €5 ©", "en") == "eiffeltower 5 €5 ©"
    assert R.normalize_mlqa("الكتاب الجديد", "ar") == "كتاب جديد"
    assert R.normalize_mlqa("Der Hund, die Katze", "de") == "hund katze"
    assert R.normalize_mlqa("北京大学2018年", "zh") == "北 京 大 学 2018 年"
    assert R.normalize_cmrc(" 北京，大学. ") == "北京大学."
    assert len(R.MLQA_PUNCTUATION) == 828
    with pytest.raises(ValueError, match="unknown normalizer 'spam'"):
        R.get_normalizer("spam")
    with pytest.raises(ValueError, match="unknown MLQA language"):
        R.normalize_mlqa("x", "fr")
    with pytest.raises(TypeError):
        R.get_normalizer(3)


def test_squad_f1_rules():
    # v1.1: bag overlap, duplicates count, 0 when nothing is shared (empty vs empty too).
    assert R.f1_score("paris paris", "paris", empty_rule="v1") == pytest.approx(2 / 3)
    assert R.f1_score("", "", empty_rule="v1") == 0.0
    assert R.f1_score("the", "a", empty_rule="v1") == 0.0
    assert R.exact_match_score("the", "a") == 1.0          # v1.1's inconsistency
    # v2.0: an empty side gives equality of the token lists.
    assert R.f1_score("", "", empty_rule="v2") == 1.0
    assert R.f1_score("the", "", empty_rule="v2") == 1.0
    assert R.f1_score("paris", "", empty_rule="v2") == 0.0
    # P = 1/2, R = 1/3 -> 2PR/(P+R) = 0.4
    assert R.f1_score("big cat", "the black cat sat", empty_rule="v1") == 0.4
    with pytest.raises(ValueError, match="empty_rule"):
        R.f1_score("a", "b", empty_rule="v3")


def test_v2_reference_dropping():
    assert R.v2_references(["the", "Paris"]) == ["Paris"]
    assert R.v2_references(["the", "a"]) == [""]
    assert R.v2_references([]) == [""]
    # only gold "the": a no-answer question under v2 (EM = F1 = 1 for ""), but under v1 the
    # empty prediction matches "the" for EM while F1 stays 0.
    assert R.exact_match([""], [["the"]], per_question=True) == [1.0]
    assert R.f1([""], [["the"]], per_question=True) == [1.0]
    assert R.f1([""], [["the"]], empty_rule="v1", per_question=True) == [0.0]
    assert R.exact_match([""], [["the", "Paris"]], per_question=True) == [0.0]
    assert R.exact_match([""], [["the", "Paris"]], empty_rule="v1", per_question=True) == [1.0]
    assert R.f1(["x"], [[]], per_question=True) == [0.0]
    with pytest.raises(ValueError, match="question 0"):
        R.f1(["x"], [[]], empty_rule="v1")


def test_max_over_references_separately():
    # the best EM reference and the best F1 reference differ
    assert R.exact_match(["paris"], [["Paris!", "paris france"]]) == 1.0
    assert R.f1(["paris france x"], [["Paris", "paris france"]]) == 0.8
    assert R.max_over_references(lambda p, g: len(g), "", ["a", "abc"]) == 3
    with pytest.raises(ValueError):
        R.max_over_references(lambda p, g: 0, "", [])


def test_char_and_cmrc_units():
    # DRCD/PIAF: a bag of characters, spaces included: "ab" vs "abc": P=1, R=2/3 -> 0.8
    assert R.f1_score("ab", "abc", unit="char", empty_rule="v1") == 0.8
    assert R.f1_score("a b", "b", normalizer="none", unit="char") == 0.5
    # CMRC: longest common substring 大学 (L=2) of 4 tokens each -> 0.5; MLQA's bag gives 1.
    assert R.f1_score("大学北京", "北京大学", normalizer="cmrc", unit="cmrc",
                      empty_rule="v1") == 0.5
    assert R.f1_score("大学北京", "北京大学", normalizer="mlqa:zh", empty_rule="v1") == 1.0
    # CMRC EM keeps inner spaces and ASCII "."; its F1 ignores spaces
    assert R.exact_match_score("北京 大学", "北京大学", normalizer="cmrc") == 0.0
    assert R.f1_score("北京 大学", "北京大学", normalizer="cmrc", unit="cmrc") == 1.0
    assert R.exact_match_score("北京.", "北京", normalizer="cmrc") == 0.0
    assert R.f1_score("", "", normalizer="cmrc", unit="cmrc", empty_rule="v1") == 0.0
    assert R.lcs_length("abcde", "xbcdy") == 3


def test_means_and_errors():
    assert R.f1(["a b", "c"], ["a b", "d"]) == 0.5
    assert R.f1([], [], per_question=True) == []
    with pytest.raises(ValueError, match="no questions"):
        R.f1([], [])
    with pytest.raises(ValueError, match="2 predictions but 1 references"):
        R.exact_match(["a", "b"], ["a"])
    with pytest.raises(TypeError, match="question 1"):
        R.exact_match(["a", None], ["a", "b"])
    with pytest.raises(ValueError, match="unknown unit"):
        R.f1(["a"], ["a"], unit="word")


def test_reader_metrics_by_hand():
    m = R.reader_metrics(
        [["Paris", "Lyon"], ["Lyon", "paris"], [None, "x"], ["x", None], []],
        [["paris"], ["Paris"], [], [], ["y"]], normalizer="squad", unit="token")
    n, n_has, n_no = 5, 3, 2
    assert (m["number_of_questions"], m["number_of_has_answer"], m["number_of_no_answer"]) == (
        n, n_has, n_no)
    # top1 EM: q0 yes, q1 no, q2 yes (None first), q3 no, q4 no answers -> 2/5
    assert m["reader_top1_em"] == 2 / 5
    assert m["reader_top1_em_has_answer"] == 1 / 3
    # topk EM: q0, q1, q2, q3 (None among the answers) -> 4/5
    assert m["reader_topk_em"] == 4 / 5
    assert m["reader_topk_em_has_answer"] == 2 / 3
    assert m["reader_top1_no_answer_accuracy"] == 0.5
    assert m["reader_topk_no_answer_accuracy"] == 1.0
    m = R.reader_metrics([["Paris", "Lyon"]], [["paris"]], k=1)
    assert m["reader_topk_em"] == 1.0 and m["reader_top1_no_answer_accuracy"] is None
    # PIAF's char F1: "pari" vs "paris" -> P=1, R=4/5 -> 8/9
    m = R.reader_metrics([["pari"]], [["paris"]])
    assert m["reader_top1_f1"] == pytest.approx(8 / 9) and m["reader_top1_accuracy"] == 1.0


def test_retriever_metrics_seed_examples():
    # seed 002: first relevant documents at ranks 1, 2 and 4 -> MRR = (1 + 1/2 + 1/4)/3
    m = R.retriever_metrics([["d1", "x"], ["x", "d2"], ["x", "y", "z", "d3"]],
                            [["d1"], ["d2"], ["d3"]])
    assert m["mrr"] == (1 + 0.5 + 0.25) / 3 and round(m["mrr"], 2) == 0.58
    assert m["recall"] == 1.0
    # seed 002: two relevant documents at ranks 2 and 4 -> AP = 1/2 (1/2 + 2/4)
    m = R.retriever_metrics([["x", "a", "y", "b", "z"]], [["a", "b"]])
    assert m["map"] == 0.5 * (0.5 + 2 / 4)
    # a repeated document counts once; a question without gold scores 0 and counts
    m = R.retriever_metrics([["a", "a", "b"], ["c"]], [["a", "b"], []], per_question=True)
    assert m["map"] == [(1 + 2 / 3) / 2, 0.0] and m["recall"] == [1.0, 0.0]
    assert math.isclose(R.retriever_metrics([["x"]], [["a"]], k=1)["recall"], 0.0)
