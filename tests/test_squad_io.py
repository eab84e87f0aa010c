"""The SQuAD readers: what they accept and the errors they raise (file and question named)."""

import json
import math
import pickle

import pytest

from qafast import squad_eval as fast
from qafast.io.squad import (
    SquadDataset,
    SquadFormatError,
    SquadWarning,
    read_na_probs,
    read_squad_dataset,
    read_squad_predictions,
)

DATA = {"version": "1.1", "data": [
    {"title": "t", "paragraphs": [
        {"context": "c", "qas": [{"id": "q1", "answers": [{"text": "Paris", "answer_start": 0}]},
                                 {"id": "q2", "answers": [{"text": "x"}, {"text": "y"}]}]},
        {"context": "c", "qas": []}]},
    {"title": "u", "paragraphs": [
        {"context": "c", "qas": [{"id": "q3", "answers": {"text": [], "answer_start": []}}]}]}]}


def write(tmp_path, name, obj):
    path = tmp_path / name
    path.write_text(obj if isinstance(obj, str) else json.dumps(obj), encoding="utf-8")
    return str(path)


def test_dataset_from_file_dict_and_list(tmp_path):
    path = write(tmp_path, "d.json", DATA)
    for source in (path, DATA, DATA["data"]):
        ds = read_squad_dataset(source)
        assert ds.ids == ["q1", "q2", "q3"]
        assert ds.answers == [["Paris"], ["x", "y"], []]
    assert read_squad_dataset(path).version == "1.1"
    assert read_squad_dataset(path).source == path
    assert read_squad_dataset(DATA["data"]).version is None
    assert "3 questions" in repr(read_squad_dataset(DATA))
    ds = read_squad_dataset(DATA)
    assert read_squad_dataset(ds) is ds and isinstance(ds, SquadDataset)


def test_malformed_json_names_file_and_line(tmp_path):
    path = write(tmp_path, "bad.json", '{"data": [\n  {"paragraphs": [}\n]}')
    with pytest.raises(SquadFormatError, match=r"bad\.json, line 2") as e:
        read_squad_dataset(path)
    assert e.value.path == path and e.value.line == 2
    assert isinstance(e.value, ValueError)
    again = pickle.loads(pickle.dumps(e.value))
    assert str(again) == str(e.value)
    for reader in (read_squad_predictions, read_na_probs):
        with pytest.raises(SquadFormatError, match="not valid JSON"):
            reader(path)


@pytest.mark.parametrize("broken, match", [
    ({"version": "1.1"}, "'data'"),
    ({"data": {"paragraphs": []}}, "list of articles"),
    ({"data": [{"title": "no paragraphs"}]}, "article 0 has no 'paragraphs'"),
    ({"data": [{"paragraphs": [{"qas": [{"answers": []}]}]}]}, "question 0 has no 'id'"),
    ({"data": [{"paragraphs": [{"qas": [{"id": "q9"}]}]}]}, "'q9'.*no 'answers'"),
    ({"data": [{"paragraphs": [{"qas": [{"id": "q9", "answers": [{"t": 1}]}]}]}]},
     "'q9'.*answer 0 has no 'text'"),
    ({"data": [{"paragraphs": [{"qas": [{"id": "q9", "answers": [{"text": 5}]}]}]}]},
     "'q9'.*answer texts must be strings"),
    ({"data": [{"paragraphs": [{"qas": [{"id": 7, "answers": []}]}]}]},
     "question ids must be strings"),
    ({"data": [{"paragraphs": [{"qas": [{"id": "q9", "answers": "Paris"}]}]}]},
     "'q9'.*'answers' must be"),
])
def test_broken_dataset(tmp_path, broken, match):
    with pytest.raises(SquadFormatError, match=match):
        read_squad_dataset(write(tmp_path, "d.json", broken))
    with pytest.raises((TypeError, ValueError), match=match):
        read_squad_dataset(broken)


@pytest.mark.parametrize("preds", [
    {"q1": "Paris", "q2": 3},            # in the dataset's order: checked as looked up
    {"q2": 3, "q1": "Paris"},            # out of order
    {"q1": "Paris", "q2": "x", "zz": 3},  # for an unknown question, never looked up
])
def test_squad_names_a_prediction_that_is_not_a_string(preds):
    from qafast import squad

    data = [{"paragraphs": [{"qas": [{"id": "q1", "answers": [{"text": "Paris"}]},
                                     {"id": "q2", "answers": [{"text": "x"}]}]}]}]
    qid = "zz" if "zz" in preds else "q2"
    for version in ("1.1", "2.0"):
        with pytest.raises(TypeError, match=f"question '{qid}': the prediction must be a "
                                            "string, got int"):
            squad(data, preds, version=version)


def test_prediction_must_be_a_string(tmp_path):
    path = write(tmp_path, "p.json", {"q1": "Paris", "q2": ["x"]})
    with pytest.raises(SquadFormatError, match=r"p\.json, question 'q2': the prediction must "
                                               r"be a string, got list"):
        read_squad_predictions(path)
    with pytest.raises(TypeError, match="<predictions>, question 'q2'"):
        read_squad_predictions({"q1": "Paris", "q2": None})
    with pytest.raises(SquadFormatError, match="must map question ids"):
        read_squad_predictions(write(tmp_path, "l.json", ["Paris"]))


@pytest.mark.parametrize("value, error", [
    ("0.5", "must be a number, got str"), (None, "must be a number, got NoneType"),
    ([0.5], "must be a number, got list"),
])
def test_probability_must_be_a_number(tmp_path, value, error):
    probs = {"q1": 0.5, "q2": value}
    with pytest.raises(TypeError, match=f"<na_probs>, question 'q2'.*{error}"):
        read_na_probs(probs)
    path = write(tmp_path, "n.json", probs)
    with pytest.raises(SquadFormatError, match=rf"n\.json, question 'q2'.*{error}"):
        read_na_probs(path)


@pytest.mark.parametrize("value", [True, False, math.nan, math.inf, -math.inf, 2 ** 53 + 1,
                                   10 ** 400, -(10 ** 400)])
def test_probability_any_number_the_script_compares(tmp_path, value):
    # the v2.0 script compares whatever json.load gives: these come back unchanged, with their
    # type (json writes NaN and Infinity, and Python's json reads them back)
    probs = {"q1": 0.5, "q2": value}
    got = read_na_probs(probs)
    assert got is probs
    path = write(tmp_path, "n.json", probs)
    got = read_na_probs(path)
    assert type(got["q2"]) is type(value)
    assert got["q2"] == value or (value != value and got["q2"] != got["q2"])


def test_missing_probability_names_the_file_and_question(tmp_path):
    data = write(tmp_path, "d.json", {"data": [{"paragraphs": [{"qas": [
        {"id": "a", "answers": []}, {"id": "b", "answers": []}]}]}]})
    probs = write(tmp_path, "na.json", {"a": 0.5})
    with pytest.raises(SquadFormatError, match=r"na\.json, question 'b': no no-answer"):
        fast.squad(data, {"a": "", "b": ""}, na_probs=probs)


def test_unknown_ids_warn_with_the_file_name(tmp_path):
    data = write(tmp_path, "d.json", {**DATA, "version": "v2.0"})   # q3 has no answer
    preds = write(tmp_path, "p.json", {"q1": "Paris", "q2": "x", "q3": "", "nope": "?"})
    with pytest.warns(SquadWarning, match=r"p\.json: 1 predictions.*'nope'") as rec:
        fast.squad(data, preds)
    assert rec[0].filename == __file__         # points at the caller, not into qafast
    probs = write(tmp_path, "n.json", {"q1": 0.1, "q2": 0.2, "q3": 0.3, "gone": 0.4})
    with pytest.warns(SquadWarning, match=r"n\.json: 1 no-answer probabilities.*'gone'"):
        fast.squad(data, preds, na_probs=probs)


def test_utf8_file_with_non_ascii(tmp_path):
    data = write(tmp_path, "d.json", {"data": [{"paragraphs": [{"qas": [
        {"id": "北京", "answers": [{"text": "北京大学"}]}]}]}]})
    preds = write(tmp_path, "p.json", {"北京": "北京大学"})
    assert fast.squad(data, preds, version="1.1") == {"exact_match": 100.0, "f1": 100.0}
