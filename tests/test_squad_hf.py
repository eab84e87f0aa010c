"""Hugging Face evaluate's input form for its `squad` and `squad_v2` metrics.

references=[{"id", "answers": {"text": [...], "answer_start": [...]}}], predictions=[{"id",
"prediction_text"}] (+ "no_answer_probability" for squad_v2). The metrics wrap the references
as one paragraph and run the official scripts; squad returns v1.1's two keys, squad_v2 the
v2.0 keys with the four best_* ones always (it always searches) and no pr_* ones, its
probabilities stored as float32 by its input features. The expected values come from the
metrics' own docstring examples and from the behaviour read in their source.
"""

import random
import warnings

import pytest

from qafast import squad_eval as fast
from qafast.io.squad import SquadWarning
from qafast.reference import squad as spec


def refs(*questions):
    return [{"id": q, "answers": {"text": list(golds), "answer_start": [0] * len(golds)}}
            for q, golds in questions]


def preds(*items):
    out = []
    for q, text, *p in items:
        item = {"id": q, "prediction_text": text}
        if p:
            item["no_answer_probability"] = p[0]
        out.append(item)
    return out


@pytest.fixture(params=[fast.squad, spec.squad], ids=["fast", "reference"])
def squad(request):
    return request.param


def test_squad_metric_docstring_example(squad):
    references = [{"answers": {"answer_start": [97], "text": ["1976"]},
                   "id": "56e10a3be3433e1400422b22"}]
    predictions = [{"prediction_text": "1976", "id": "56e10a3be3433e1400422b22"}]
    assert squad(references, predictions) == {"exact_match": 100.0, "f1": 100.0}


def test_squad_v2_metric_docstring_example(squad):
    references = [{"answers": {"answer_start": [97], "text": ["1976"]},
                   "id": "56e10a3be3433e1400422b22"}]
    predictions = [{"prediction_text": "1976", "id": "56e10a3be3433e1400422b22",
                    "no_answer_probability": 0.}]
    assert squad(references, predictions) == {
        "exact": 100.0, "f1": 100.0, "total": 1, "HasAns_exact": 100.0, "HasAns_f1": 100.0,
        "HasAns_total": 1, "best_exact": 100.0, "best_exact_thresh": 0.0, "best_f1": 100.0,
        "best_f1_thresh": 0.0}


def test_squad_v2_stores_probabilities_as_float32(squad):
    # a (HasAns, right) at 0.3 lifts the walk above "all unanswerable": the threshold comes
    # back as float32(0.3) widened to double
    r = squad(refs(("a", ["x"]), ("b", [])), preds(("a", "x", 0.3), ("b", "dog", 0.7)))
    assert r["best_exact_thresh"] == 0.30000001192092896
    assert list(r) == ["exact", "f1", "total", "HasAns_exact", "HasAns_f1", "HasAns_total",
                       "NoAns_exact", "NoAns_f1", "NoAns_total", "best_exact",
                       "best_exact_thresh", "best_f1", "best_f1_thresh"]
    # two float64 probabilities one float32 apart no more: they tie, in list order
    tie = squad(refs(("a", ["x"]), ("b", [])),
                preds(("b", "dog", 0.1 + 1e-12), ("a", "x", 0.1)))
    assert (tie["best_exact"], tie["best_exact_thresh"]) == (50.0, 0.0)


def test_squad_v2_threshold_is_the_scripts(squad):
    # 0.6 > 0.5 fires on b (NoAns: 1); 0.4 does not on a (right: 1)
    r = squad(refs(("a", ["x"]), ("b", [])), preds(("a", "x", 0.4), ("b", "dog", 0.6)),
              na_prob_thresh=0.5)
    assert (r["exact"], r["NoAns_exact"]) == (100.0, 100.0)


def test_scores_equal_the_script_form(squad):
    rng = random.Random(7)
    words = ["paris", "the", "dog", "red", "", "cat", "a"]
    questions = [(f"q{i}", [" ".join(rng.choices(words, k=2)) for _ in range(rng.randint(0, 2))])
                 for i in range(40)]
    texts = {q: " ".join(rng.choices(words, k=rng.randint(0, 2))) for q, _ in questions}
    probs = {q: rng.choice([0.125, 0.25, 0.5, 0.75]) for q, _ in questions}  # float32-exact
    dataset = {"data": [{"paragraphs": [{"qas": [
        {"id": q, "answers": [{"text": t} for t in golds]} for q, golds in questions]}]}]}
    with_probs = preds(*((q, texts[q], probs[q]) for q, _ in questions))
    expected = spec.squad(dataset, texts, na_probs=probs)
    assert squad(refs(*questions), with_probs) == {
        k: v for k, v in expected.items() if not k.startswith("pr_")}
    answered = [(q, g) for q, g in questions if g]
    without = preds(*((q, texts[q]) for q, _ in answered))
    assert squad(refs(*answered), without) == spec.squad(
        {"data": [{"paragraphs": [{"qas": [{"id": q, "answers": [{"text": t} for t in g]}
                                           for q, g in answered]}]}]}, texts, version="1.1")


def test_references_alone_are_a_dataset_too(squad):
    # a list of questions with script-form predictions: the script's keys
    r = squad(refs(("a", ["x"]), ("b", [])), {"a": "x", "b": ""})
    assert r == {"exact": 100.0, "f1": 100.0, "total": 2, "HasAns_exact": 100.0,
                 "HasAns_f1": 100.0, "HasAns_total": 1, "NoAns_exact": 100.0,
                 "NoAns_f1": 100.0, "NoAns_total": 1}


def test_an_explicit_version_against_the_form_is_obeyed_with_a_warning():
    references = refs(("a", ["x"]), ("b", ["y"]))
    with pytest.warns(SquadWarning, match="squad_v2 metric.*version='1.1'"):
        r = fast.squad(references, preds(("a", "x", 0.2), ("b", "z", 0.9)), version="1.1")
    assert r == {"exact_match": 50.0, "f1": 50.0}
    with pytest.warns(SquadWarning, match="squad metric.*version='2.0'"):
        r = fast.squad(references, preds(("a", "x"), ("b", "z")), version="2.0")
    assert (r["exact"], r["best_exact"], r["best_exact_thresh"]) == (50.0, 50.0, 0.0)


def test_missing_predictions_follow_the_script_of_the_form():
    references = refs(("a", ["x"]), ("b", ["y"]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert fast.squad(references, preds(("a", "x"))) == {"exact_match": 50.0, "f1": 50.0}
        assert fast.squad(references, preds(("a", "x", 0.5)))["total"] == 1


@pytest.mark.parametrize("bad, error, match", [
    ([{"id": "a", "prediction_text": "x", "no_answer_probability": 0.1},
      {"id": "b", "prediction_text": "y"}], ValueError,
     r"item 1, question 'b': no 'no_answer_probability'"),
    ([{"id": "a", "prediction_text": "x"},
      {"id": "b", "prediction_text": "y", "no_answer_probability": 0.1}], ValueError,
     "item 1, question 'b': a 'no_answer_probability', which the earlier items lack"),
    ([{"id": "a", "prediction_text": "x"}, {"prediction_text": "y"}], ValueError,
     "item 1: the prediction has no 'id'"),
    ([{"id": 3, "prediction_text": "x"}], TypeError, "item 0: the question id must be a string"),
    ([{"id": "a", "prediction_text": None}], TypeError, "'a': the prediction_text must be"),
    ([{"id": "a", "prediction_text": "x", "no_answer_probability": "0.5"}], TypeError,
     "'a': the no_answer_probability must be a number"),
    ([{"id": "a", "prediction_text": "x"}, "y"], TypeError, "item 1: a prediction is a dict"),
])
def test_bad_predictions_are_named(bad, error, match):
    with pytest.raises(error, match=match):
        fast.squad(refs(("a", ["x"]), ("b", ["y"])), bad)


def test_na_probs_beside_hf_predictions_is_an_error():
    with pytest.raises(ValueError, match="no_answer_probability"):
        fast.squad(refs(("a", ["x"])), preds(("a", "x", 0.1)), na_probs={"a": 0.1})
