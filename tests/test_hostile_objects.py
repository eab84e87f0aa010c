"""Caller objects that answer differently each time they are asked (a ``len()`` that
changes, an ``==`` that says yes to anything, an iterator shorter than its length), and
arrays edited in place after an evaluation. Each entry point reads the caller's object once
and sizes what it hands a kernel from that one read, so each of these gives the right
numbers or a clear error. Every case here used to write or read past an array."""

import numpy as np
import pytest

import qafast
from qafast.concepts import ConceptLists, evaluate_concepts
from qafast.events import LabelSequences, tweet_scores


class AlwaysEqual(list):
    """A list that says it equals anything."""

    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = None


class ShrinkingLen(list):
    """A list whose len() is true for its first ``honest`` calls, then says 1."""

    honest = 1

    def __len__(self):
        self.calls = getattr(self, "calls", 0) + 1
        return list.__len__(self) if self.calls <= self.honest else 1


class LongerThanItIs:
    """Says it has 4000 items and iterates the ones it has."""

    def __init__(self, items):
        self.items = items

    def __len__(self):
        return 4000

    def __iter__(self):
        return iter(self.items)


def test_concept_vocabularies_that_only_claim_to_be_equal_are_refused():
    big = AlwaysEqual(f"c{i}" for i in range(50000))
    pred = ConceptLists(["q"], np.array([0, 1], np.int64), np.array([0], np.int32), None, ["c0"])
    gold = ConceptLists(["q"], np.array([0, 3], np.int64),
                        np.array([49999, 30000, 40000], np.int32), None, big)
    with pytest.raises(qafast.InputError, match="different vocabularies"):
        evaluate_concepts(pred, gold, ["hit@1", "rec@5"])


def test_concept_question_ids_whose_length_shrinks_are_read_once():
    n = 4000
    off = np.arange(n + 1, dtype=np.int64)
    ids = np.zeros(n, np.int32)
    pred = ConceptLists(ShrinkingLen(range(n)), off, ids, None, ["c0"])
    gold = ConceptLists(list(range(n)), off.copy(), ids.copy(), None, pred.vocabulary)
    assert evaluate_concepts(pred, gold, ["hit@1", "rec@5"]) == {"hit@1": 1.0, "rec@5": 1.0}
    per_question = evaluate_concepts(pred, gold, ["hit@1"], per_question=True)
    assert len(per_question) == n


def test_concept_question_ids_that_only_claim_to_be_equal_are_lined_up_by_value():
    n = 4000
    pred = ConceptLists(AlwaysEqual(range(n)), np.arange(n + 1, dtype=np.int64),
                        np.zeros(n, np.int32), None, ["c0"])
    gold = ConceptLists([0], np.array([0, 1], np.int64), np.zeros(1, np.int32), None,
                        pred.vocabulary)
    with pytest.raises(qafast.InputError, match="question 1 of the predictions has no gold"):
        evaluate_concepts(pred, gold, ["hit@1", "rec@5"])


def test_tweet_ids_whose_length_shrinks_do_not_size_the_output():
    n = 5000
    off = np.arange(n + 1, dtype=np.int64)
    codes = np.ones(n, dtype=np.int32)
    tweets = ShrinkingLen(range(n))
    tweets.honest = 2
    res = LabelSequences(tweets, off, codes, "results")
    ann = LabelSequences(list(range(n)), off, codes.copy(), "annotations")
    out = tweet_scores(res, ann)
    assert out.shape == (n,) and (out == 1.0).all()


def test_dbqa_lists_longer_than_they_iterate_are_read_once():
    labels, scores = [LongerThanItIs([1])], [LongerThanItIs([0.5])]
    assert qafast.evaluate_dbqa(labels, scores, accuracy_at=[1, 3]) == qafast.evaluate_dbqa(
        [[1]], [[0.5]], accuracy_at=[1, 3])


def test_a_pos_label_whose_equality_answers_for_numpy_is_checked():
    class Label:
        __array_ufunc__ = None  # numpy hands `array == Label()` to Label.__eq__

        def __init__(self, answer):
            self.answer = answer

        def __eq__(self, other):
            return self.answer(other)

        __hash__ = object.__hash__

    y = np.array([0, 1] * 50)
    s = np.linspace(0, 1, len(y))
    with pytest.raises(qafast.InputError, match="pos_label .*gave shape \\(3,\\), not \\(100,\\)"):
        qafast.average_precision(y, s, pos_label=Label(lambda other: np.ones(3)))
    # values other than 0 and 1 are read as truth values, never as indices
    hundred = Label(lambda other: np.full(len(other), 100))
    assert qafast.average_precision(y, s, method="voc", pos_label=hundred) == 1.0
    precision, _recall = qafast.threshold_precision_recall(y, s, thresholds=[0.5, 0.9],
                                                          pos_label=hundred)
    assert precision.tolist() == [1.0, 1.0]


def test_qrels_and_runs_cannot_be_edited_in_place_once_evaluated():
    qrels = qafast.Qrels({"q": {f"d{i}": 1 for i in range(50)}})
    run = qafast.Run({"q": {f"d{i}": 1.0 - i / 100 for i in range(50)}})
    before = qafast.evaluate(qrels, run, ["ndcg"])
    for data in (qrels, run):
        for name in ("values", "offsets", "hashes"):
            with pytest.raises(ValueError, match="read-only"):
                getattr(data, name)[:] = 900_000
    assert qafast.evaluate(qrels, run, ["ndcg"]) == before


def test_the_ranking_kernel_refuses_grades_above_the_table_it_was_given():
    qrels = qafast.Qrels({"q": {"d1": 3}})
    ev = qafast._engine.Evaluation(qrels, qafast.Run({"q": {"d1": 1.0}}), relevance_level=1,
                                    judged_only=False, max_docs=None, queries="run", workers=1)
    qrels._max = 1  # a stale cache: the kernel must not trust it to size its table
    with pytest.raises(ValueError, match="grade above max_grade"):
        ev.values(qafast._measure_parser.parse_measures(["ndcg"]))


def test_num_relevant_is_bounded():
    metrics = qafast.RankingMetrics(["ndcg"])
    with pytest.raises(qafast.InputError, match=r"num_relevant: query \(row\) 1: 3000000000 is "
                                                r"outside 0\.\.2147483647"):
        metrics.update(np.array([[0.9, 0.1], [0.5, 0.4]]), np.array([[1, 0], [1, 1]]),
                       num_relevant=[1, 3_000_000_000])
    with pytest.raises(qafast.InputError, match="num_relevant: query \\(row\\) 0: -1 is outside"):
        metrics.update(np.array([[0.9]]), np.array([[0]]), num_relevant=[-1])


def test_a_grade_above_a_familys_scale_is_refused_in_the_stream_as_by_evaluate():
    # ERR takes grades 0-4 (gdeval.pl's scale): evaluate refused a 7, RankingMetrics scored
    # it 3.97, a value above 1
    with pytest.raises(qafast.InputError, match="grade 7 is above 4"):
        qafast.evaluate({"q": {"a": 7}}, {"q": {"a": 1.0}}, ["ERR@10"])
    with pytest.raises(qafast.InputError, match=r"query \(row\) 0, candidate 0: grade 7 is "
                                                r"above 4, the highest grade ERR@10 takes"):
        qafast.RankingMetrics(["ERR@10"]).update(np.array([[0.9, 0.1]]), np.array([[7, 0]]))
    with pytest.raises(qafast.InputError, match=r"query 1, document 4 \(row 1\): grade 5"):
        qafast.RankingMetrics(["map", "ERR@10"]).update(
            np.array([0.9, 0.1]), np.array([1, 5]), query_ids=[1, 1], doc_ids=[3, 4])
    padded = qafast.RankingMetrics(["ERR@10"])  # a masked-out grade is never read
    padded.update(np.array([[0.9, 0.1]]), np.array([[4, 9]]), mask=np.array([[True, False]]))
    assert padded.compute() == qafast.evaluate({"q": {"a": 4}}, {"q": {"a": 0.9}}, ["ERR@10"])
