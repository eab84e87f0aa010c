"""qafast.coqa against the specification (qafast.reference.coqa) and the official script's
recorded output (tests/data/coqa: its stdout for ``--pred-file pred.json --human``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import qafast
from qafast import cli
from qafast.errors import InputError, InputTypeError
from qafast.reference import coqa as ref

DATA = Path(__file__).parent / "data" / "coqa"


def _blocks(text: str) -> list:
    """The JSON objects the script printed, in order."""
    out, pos, dec = [], 0, json.JSONDecoder()
    while pos < len(text):
        obj, end = dec.raw_decode(text, pos)
        out.append(obj)
        pos = end + 1
    return out


def test_cli_prints_what_the_script_prints(capsys):
    rc = cli.main(["coqa", "--data-file", str(DATA / "data.json"), "--pred-file",
                   str(DATA / "pred.json"), "--human"])
    captured = capsys.readouterr()
    assert rc == 0
    assert captured.out == (DATA / "expected.txt").read_text(encoding="utf-8")
    assert captured.err == "Missing prediction for s1 and turn_id: 4\n"


def test_functions_give_the_scripts_numbers_and_key_order():
    human, model = _blocks((DATA / "expected.txt").read_text(encoding="utf-8"))
    got = qafast.coqa(DATA / "data.json", DATA / "pred.json")
    assert got == model and list(got) == list(model)
    assert list(got["overall"]) == ["em", "f1", "turns"]
    assert qafast.coqa_human(DATA / "data.json") == human
    data = json.loads((DATA / "data.json").read_text(encoding="utf-8"))
    preds = json.loads((DATA / "pred.json").read_text(encoding="utf-8"))
    assert ref.coqa(data, preds) == model
    assert ref.coqa_human(data) == human


def test_per_turn_keeps_the_first_place_of_a_duplicated_turn_and_its_last_answers():
    t = qafast.coqa_per_turn(DATA / "data.json", DATA / "pred.json")
    assert list(zip(t["id"], t["turn_id"])) == [("s1", 1), ("s1", 2), ("s1", 3), ("s2", 1),
                                                ("s2", 2), ("s3", 1), ("s1", 4)]
    # the later story's source holds for every turn of the id
    assert t["source"] == ["cnn", "cnn", "cnn", "reddit", "reddit", "science", "cnn"]
    assert t["predicted"].tolist() == [True] * 6 + [False]
    # turn 3 now has the answers "no", "No", "nope": against "no" each leave-one-out max is 1
    assert t["exact_match"][2] == 1.0 and t["f1"][2] == 1.0
    assert t["exact_match"][6] == 0.0


def test_out_file_and_without_predictions(tmp_path, capsys):
    out = tmp_path / "eval.json"
    assert cli.main(["coqa", "--data-file", str(DATA / "data.json"), "--human", "-o",
                     str(out)]) == 0
    printed = capsys.readouterr().out
    assert json.loads(out.read_text()) == json.loads(printed)


_TEXT = st.one_of(st.sampled_from(["", "unknown", "yes", "No.", "the", "a cat", "The Cat!",
                                   "café", "CAFÉ", "1,000", "1000", "İ", "ß", "\u00a0x"]),
                  st.text(alphabet="ab ,.!-'AÉé\t", max_size=8))


@st.composite
def _cases(draw):
    n_extra = draw(st.integers(0, 3))
    stories = []
    for n in range(draw(st.integers(1, 4))):
        n_turns = draw(st.integers(0, 4))
        extra = draw(st.sampled_from([n_extra, n_extra, 0, 1]))
        stories.append({
            "id": draw(st.sampled_from(["s0", "s1", "s2"])),
            "source": draw(st.sampled_from(list(ref.DOMAINS))),
            "questions": [{"turn_id": draw(st.integers(1, 4))} for _ in range(n_turns)],
            "answers": [{"input_text": draw(_TEXT)} for _ in range(n_turns)],
            "additional_answers": {str(m): [{"input_text": draw(_TEXT)} for _ in range(n_turns)]
                                   for m in range(extra)}})
    preds = [{"id": s["id"], "turn_id": q["turn_id"], "answer": draw(_TEXT)}
             for s in stories for q in s["questions"] if draw(st.booleans())]
    return {"data": stories}, preds


@settings(max_examples=150, deadline=None)
@given(_cases())
def test_matches_the_specification(case):
    data, preds = case
    assert qafast.coqa(data, preds) == ref.coqa(data, preds)
    turns, _, em, f1 = ref.per_turn(data, preds)
    t = qafast.coqa_per_turn(data, preds)
    assert list(zip(t["id"], t["turn_id"])) == list(turns)
    assert t["exact_match"].tolist() == [float(em.get(k, 0)) for k in turns]
    assert t["f1"].tolist() == [float(f1.get(k, 0)) for k in turns]
    assert t["predicted"].tolist() == [k in em for k in turns]
    turns_golds, source_of = ref.read_gold(data)
    if all(len(g) > 1 for g in turns_golds.values()):
        assert qafast.coqa_human(data) == ref.coqa_human(data)
        m = qafast.CoqaMetrics()
        keys = list(turns_golds)
        for lo in range(0, len(keys), 2):
            m.update_human([list(turns_golds[k]) for k in keys[lo:lo + 2]],
                           [source_of[k[0]] for k in keys[lo:lo + 2]])
        if keys:
            assert m.compute() == ref.coqa_human(data)
    else:
        with pytest.raises(InputError, match="one gold answer"):
            qafast.coqa_human(data)


def _story(**kw):
    story = {"id": "s", "source": "cnn", "questions": [{"turn_id": 1}],
             "answers": [{"input_text": "x"}], "additional_answers": {"0": [{"input_text": "y"}]}}
    story.update(kw)
    return {"data": [story]}


@pytest.mark.parametrize(("data", "preds", "message"), [
    (_story(source="blogs"), [], "unknown source 'blogs'"),
    (_story(additional_answers={"0": []}), [], "additional answer list 1 has no entry 0"),
    (_story(answers=[{"text": "x"}]), [], "no input_text"),
    (_story(answers=[{"input_text": 5}]), [{"id": "s", "turn_id": 1, "answer": "x"}],
     "input_text must be a string, got int"),
    (_story(source=["cnn"]), [], "unknown source"),
    (_story(questions=[{"id": 1}]), [], "no usable turn_id"),
    ({"stories": []}, [], "\"data\" list"),
    (_story(), [{"id": "s", "turn_id": 1, "answer": None}], "got None"),
    (_story(), [{"id": "s", "turn_id": 1, "answer": 3}], "must be a string, got int"),
    (_story(), [{"id": "s", "turn_id": 1}], "prediction 0 needs"),
])
def test_inputs_the_script_crashes_on_raise_a_qafast_error(data, preds, message):
    with pytest.raises(InputError, match=message):
        qafast.coqa(data, preds)


def _tolerated():
    """A file the script reads to the end though parts of it are malformed."""
    def turn(text):
        return {"input_text": text, "turn_id": 1}
    return {"data": [
        # turn 2's gold answers are not strings, but nothing predicts it: never normalized
        {"id": "s1", "source": "cnn", "questions": [{"turn_id": 1}, {"turn_id": 2}],
         "answers": [turn("the white cat"), {"input_text": 5, "turn_id": 2}],
         "additional_answers": {"0": [turn("white"), {"input_text": None, "turn_id": 2}]}},
        # a story without questions: its source and answer lists are never looked at
        {"id": "z", "source": "bogus", "questions": [], "answers": "xx",
         "additional_answers": {"0": 3}},
        # an unknown source replaced by the later story of the same id
        {"id": "r", "source": ["x"], "questions": [{"turn_id": 1}], "answers": [turn("no")],
         "additional_answers": {}},
        {"id": "r", "source": "reddit", "questions": [{"turn_id": 1}], "answers": [turn("No!")],
         "additional_answers": {"a": [turn("nope")]}},
    ]}, [{"id": "s1", "turn_id": 1, "answer": "White cat"}, {"id": "r", "turn_id": 1,
         "answer": "no"}, {"id": "elsewhere", "turn_id": 1, "answer": None}]


def test_what_the_script_reads_without_failing_gives_its_numbers(tmp_path, capsys):
    data, preds = _tolerated()
    got = qafast.coqa(data, preds)
    # the official script's output on these files
    assert got["news"] == {"em": 25.0, "f1": 41.7, "turns": 2}
    assert got["reddit"] == {"em": 50.0, "f1": 50.0, "turns": 1}
    assert got["overall"] == {"em": 33.3, "f1": 44.4, "turns": 3}
    assert got == ref.coqa(data, preds)
    assert qafast.coqa_per_turn(data, preds)["source"] == ["cnn", "cnn", "reddit"]
    (tmp_path / "d.json").write_text(json.dumps(data))
    (tmp_path / "p.json").write_text(json.dumps(preds))
    assert cli.main(["coqa", "--data-file", str(tmp_path / "d.json"), "--pred-file",
                     str(tmp_path / "p.json")]) == 0
    assert json.loads(capsys.readouterr().out) == got
    # predicting the turn with non-string answers, or human performance, normalizes them
    with pytest.raises(InputError, match="'s1', turn 2: an input_text must be a string"):
        qafast.coqa(data, [*preds, {"id": "s1", "turn_id": 2, "answer": "x"}])
    with pytest.raises(InputError, match="'s1', turn 2: an input_text must be a string"):
        qafast.coqa_human(data)


def test_predictions_must_be_a_list():
    with pytest.raises(InputTypeError):
        qafast.coqa(_story(), {"s": "x"})


def test_human_with_one_answer_stops_as_the_script_does(tmp_path, capsys):
    path = tmp_path / "d.json"
    path.write_text(json.dumps(_story(additional_answers={})))
    assert cli.main(["coqa", "--data-file", str(path), "--human"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == "Gold answers should be multiple: ('s', 1)=['x']\n"
    path.write_text(json.dumps(_story(answers=[{"input_text": None}], additional_answers={})))
    assert cli.main(["coqa", "--data-file", str(path), "--human"]) == 1
    assert capsys.readouterr().err == "Gold answers should be multiple: ('s', 1)=[None]\n"


def test_no_turn_gives_zeros():
    got = qafast.coqa({"data": []}, [])
    assert got["overall"] == {"em": 0.0, "f1": 0.0, "turns": 0}
    assert np.asarray(qafast.coqa_per_turn({"data": []}, [])["f1"]).shape == (0,)


@settings(max_examples=60, deadline=None)
@given(_cases(), st.integers(1, 4))
def test_streaming_gives_the_functions_result_whatever_the_batches(case, parts):
    data, preds = case
    turns, source_of = ref.read_gold(data)
    pred = ref.read_predictions(preds)
    rows = [(pred.get(k), list(g), source_of[k[0]]) for k, g in turns.items()]
    metrics = [qafast.CoqaMetrics() for _ in range(parts)]
    for i, m in enumerate(metrics):
        chunk = rows[len(rows) * i // parts:
                     len(rows) * (i + 1) // parts]
        m.update([r[0] for r in chunk], [r[1] for r in chunk], [r[2] for r in chunk])
    whole = metrics[0].merge(*metrics[1:])
    assert whole.compute() == qafast.coqa(data, preds)
    again = qafast.CoqaMetrics()
    again.load_state_dict(whole.state_dict())
    assert again.compute() == qafast.coqa(data, preds)


def test_streaming_rejects_bad_turns():
    m = qafast.CoqaMetrics()
    with pytest.raises(InputError, match="unknown source"):
        m.update(["x"], [["x", "y"]], "blogs")
    with pytest.raises(InputError, match="non-empty list"):
        m.update(["x"], [[]], "cnn")
    with pytest.raises(InputError, match="string or None"):
        m.update([3], [["x"]], "cnn")
    with pytest.raises(InputError, match="not a CoqaMetrics state"):
        m.load_state_dict({})
    with pytest.raises(InputError, match="one gold answer"):
        m.update_human([["x", "y"], ["x"]], "cnn")
    assert len(m) == 0
