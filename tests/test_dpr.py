"""qafast.dpr_eval against the specification (qafast.reference.dpr) and Pyserini's
evaluate_dpr_retrieval.py's recorded output (tests/data/dpr: its stdout for
``--topk 1 5 20 100 1`` on retrieval.json and ``--topk 1 2 --regex`` on
retrieval_regex.json)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import qafast
from qafast import cli
from qafast.dpr_eval import RetrievalAccuracy
from qafast.errors import InputError, InputTypeError
from qafast.reference import dpr as ref

DATA = Path(__file__).parent / "data" / "dpr"


@pytest.mark.parametrize("name, args", [
    ("retrieval", ["--topk", "1", "5", "20", "100", "1"]),
    ("retrieval_regex", ["--topk", "1", "2", "--regex"]),
])
def test_cli_prints_what_the_script_prints(capsys, name, args):
    rc = cli.main(["dpr-retrieval", "--retrieval", str(DATA / f"{name}.json"), *args])
    assert rc == 0
    assert capsys.readouterr().out == (DATA / f"{name}.stdout").read_text(encoding="utf-8")


def test_first_hits_and_rules_of_the_golden_file():
    hits = qafast.dpr_first_hits(DATA / "retrieval.json")
    # NFD accents, a final sigma lowercased per token, İ's two code points, punctuation
    # tokens, an empty answer list (no hit), an answer of no tokens (a hit everywhere)
    assert hits == {"1": 2, "2": 1, "3": 2, "4": None, "5": 1, "6": 1, "7": 1, "8": 2,
                    "9": 7, "10": 1}
    assert qafast.dpr_first_hits(DATA / "retrieval.json", max_k=5)["9"] is None


_ALPHABET = st.sampled_from(list("aAbB  .,!?'-\t") + ["é", "e\u0301", "Σ", "σ", "ς", "İ",
                                                     "i\u0307", "ß", "\u200b", "\x00", "1",
                                                     "٣", "中", "\ud800", "€", "\u0301",
                                                     "ﬁ", "K", "k"])
_TEXT = st.lists(_ALPHABET, max_size=12).map("".join)


def _context():
    return st.one_of(
        _TEXT.map(lambda t: {"text": "title\n" + t}),
        st.booleans().map(lambda b: {"has_answer": b, "text": "t\nignored"}),
    )


_RETRIEVAL = st.dictionaries(
    st.text(max_size=3),
    st.fixed_dictionaries({"answers": st.lists(_TEXT, max_size=3),
                           "contexts": st.lists(_context(), max_size=8)}),
    max_size=6)


@settings(max_examples=150, deadline=None)
@given(_RETRIEVAL, st.lists(st.integers(-1, 9), min_size=1, max_size=4))
def test_token_mode_equals_the_specification(retrieval, topk):
    got = qafast.dpr_retrieval(retrieval, topk=topk)
    want = ref.accuracies(retrieval, topk)
    assert list(got) == [f"Top{k}" for k in dict.fromkeys(topk)]
    for k in topk:
        assert (math.isnan(got[f"Top{k}"]) and math.isnan(want[k])) or got[f"Top{k}"] == want[k]
    hits = qafast.dpr_first_hits(retrieval, max_k=8)
    for qid, entry in retrieval.items():
        h = ref.first_hit(entry, 8)
        assert hits[qid] == (h + 1 if h < 8 else None)


_REGEX_TEXT = st.lists(st.sampled_from(list("ab.*()[]^$|\\?+ \n") + ["é", "e\u0301"]),
                       max_size=6).map("".join)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.lists(_REGEX_TEXT, max_size=3),
                          st.lists(_REGEX_TEXT, max_size=5)), max_size=5))
def test_regex_mode_equals_the_specification(questions):
    retrieval = {str(i): {"answers": a, "contexts": [{"text": "t\n" + p} for p in ps]}
                 for i, (a, ps) in enumerate(questions)}
    got = qafast.dpr_first_hits(retrieval, max_k=5, regex=True)
    for qid, entry in retrieval.items():
        h = ref.first_hit(entry, 5, regex=True)
        assert got[qid] == (h + 1 if h < 5 else None)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.lists(_TEXT, max_size=3), st.lists(_TEXT, max_size=6)),
                max_size=8), st.integers(1, 3), st.booleans())
def test_streaming_equals_one_call(questions, cut, regex):
    m = RetrievalAccuracy(topk=(1, 2, 5), regex=regex)
    for start in range(0, len(questions), cut):
        batch = questions[start:start + cut]
        m.update([a for a, _ in batch], [p for _, p in batch])
    retrieval = {str(i): {"answers": a, "contexts": [{"text": "t\n" + p.replace("\n", " ")}
                                                      for p in ps]}
                 for i, (a, ps) in enumerate(questions)}
    want = ref.accuracies(retrieval, [1, 2, 5], regex=regex)
    got = m.compute()
    for k in (1, 2, 5):
        assert (math.isnan(got[f"Top{k}"]) and math.isnan(want[k])) or got[f"Top{k}"] == want[k]
    m2 = RetrievalAccuracy(topk=(1, 2, 5), regex=regex)
    m2.load_state_dict(json.loads(json.dumps(m.state_dict())))
    assert str(m2.compute()) == str(got)


def test_the_tokenizer_keeps_its_vocabulary_across_batches():
    m = RetrievalAccuracy(topk=(1,))
    m.update([["Σίσυφος"]], [["ΣΊΣΥΦΟΣ is here"]])
    m.update([["ΣΊΣΥΦΟΣ"]], [["no"]])
    m.update([["σίσυφος"]], [["Σίσυφος"]])
    assert m.compute() == {"Top1": 2 / 3}


def test_a_context_after_the_first_hit_is_not_read():
    # the script stops at the first hit: a malformed context after it does not count
    run = {"q": {"answers": ["a"], "contexts": [{"text": "t\na"}, {"text": "no newline"}, 5]}}
    assert qafast.dpr_retrieval(run, topk=[3]) == {"Top3": 1.0}


@pytest.mark.parametrize("run, match", [
    ({"q": {"answers": ["a"], "contexts": [{"text": "no newline"}]}}, "context 1.*newline"),
    ({"q": {"answers": ["a"], "contexts": [{"text": "t\nb"}, {"docid": 1}]}},
     "context 2.*no \"has_answer\" and no \"text\""),
    ({"q": {"answers": ["a"], "contexts": ["t\na"]}}, "context 1.*must be an object"),
    ({"q": {"answers": "a", "contexts": [{"text": "t\na"}]}}, "'q'.*list of strings"),
    ({"q": {"answers": [1], "contexts": [{"text": "t\na"}]}}, "'q'.*not a string"),
    ({"q": {"contexts": []}}, "'q'.*\"answers\""),
    ([1, 2], "must be an object"),
])
def test_bad_input_is_a_qafast_error_naming_the_question(run, match):
    with pytest.raises((InputError, InputTypeError), match=match):
        qafast.dpr_retrieval(run, topk=[5])


def test_empty_retrieval_is_nan_as_numpys_mean_of_nothing(tmp_path, capsys):
    assert math.isnan(qafast.dpr_retrieval({}, topk=[1])["Top1"])
    path = tmp_path / "empty.json"
    path.write_text("{}")
    assert cli.main(["dpr-retrieval", "--retrieval", str(path), "--topk", "1"]) == 0
    assert capsys.readouterr().out == "Top1\taccuracy: nan\n"


def test_bad_files_and_options():
    with pytest.raises(InputError, match="cannot read"):
        qafast.dpr_retrieval(DATA / "no-such-file.json")
    with pytest.raises(InputError, match="at least one"):
        qafast.dpr_retrieval({}, topk=[])
    with pytest.raises(InputTypeError):
        qafast.dpr_retrieval({}, topk=["1"])
    with pytest.raises(InputError, match="other settings"):
        RetrievalAccuracy(topk=(1,)).load_state_dict(RetrievalAccuracy(topk=(2,)).state_dict())


def test_a_huge_k_costs_no_memory():
    m = RetrievalAccuracy(topk=(1, 10**12))
    m.update([["a"], ["b"]], [["x", "a"], ["x"]])
    assert m.compute() == {"Top1": 0.0, "Top1000000000000": 0.5}
    assert qafast.dpr_retrieval({"q": {"answers": ["a"], "contexts": [{"text": "t\na"}]}},
                                topk=[10**12]) == {"Top1000000000000": 1.0}


def test_words_tokenized_in_python_keep_their_place_among_the_others():
    # one batch of new words where words the tables cannot lowercase or decompose (a
    # precomposed accent, a capital sigma, İ, a combining mark) sit between plain ones:
    # each word's tokens must stay in their place
    passage = "alpha café, beta ΟΔΟΣ. gamma İx delta e\u0301 epsilon ﬁ zeta"
    answers = [["café, beta"], ["beta οδος"], ["beta οδος."], ["gamma i\u0307x delta"],
               ["delta é epsilon"], ["ﬁ zeta"], ["alpha cafe"], ["gamma ix"]]
    run = {str(i): {"answers": a, "contexts": [{"text": "t\nnothing here"},
                                              {"text": "t\n" + passage}]}
           for i, a in enumerate(answers)}
    got = qafast.dpr_first_hits(run, max_k=5)
    want = {qid: (lambda h: h + 1 if h < 5 else None)(ref.first_hit(e, 5))
            for qid, e in run.items()}
    assert got == want
    assert got["0"] == 2 and got["6"] is None


class _Dict(dict):
    pass


class _Str(str):
    pass


def test_contexts_of_other_container_types_read_as_the_script_reads_them():
    run = {"a": {"answers": ("x",), "contexts": ({"text": "t\ny"}, _Dict(text="t\nx"))},
           "b": {"answers": [_Str("x y")], "contexts": [_Dict(has_answer=0, text="t\nx y"),
                                                          {"text": _Str("t\nx y\nignored")}]},
           "c": {"answers": ["ignored"], "contexts": [{"text": "t\n", "has_answer": 1}]}}
    assert qafast.dpr_first_hits(run) == {"a": 2, "b": 2, "c": 1}


def test_the_passage_is_the_second_line_only():
    run = {"q": {"answers": ["b"], "contexts": [{"text": "b\na\nb"}, {"text": "a\n\nb"},
                                               {"text": "a\nb\n"}]}}
    assert qafast.dpr_first_hits(run) == {"q": 3}
    assert qafast.dpr_first_hits(run, regex=True) == {"q": 3}
