"""qafast.triviaqa against the specification (qafast.reference.triviaqa) and the official
script's recorded output (tests/data/triviaqa)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import qafast
from qafast import cli
from qafast.errors import InputError, InputTypeError
from qafast.reference import triviaqa as ref
from qafast.answers import normalize_triviaqa

DATA = Path(__file__).parent / "data" / "triviaqa"


def _json(name: str):
    return json.loads((DATA / name).read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", ["wiki", "web"])
def test_cli_prints_what_the_script_prints(case, capsys):
    rc = cli.main(["triviaqa", "--dataset_file", str(DATA / f"{case}.json"),
                   "--prediction_file", str(DATA / f"{case}_pred.json")])
    captured = capsys.readouterr()
    assert rc == 0
    assert captured.out == (DATA / f"{case}_expected.out").read_text(encoding="utf-8")
    assert captured.err == (DATA / f"{case}_expected.err").read_text(encoding="utf-8")


@pytest.mark.parametrize("case", ["wiki", "web"])
def test_function_gives_the_scripts_dict_in_its_key_order(case):
    printed = (DATA / f"{case}_expected.out").read_text(encoding="utf-8").splitlines()[-1]
    got = qafast.triviaqa(DATA / f"{case}.json", DATA / f"{case}_pred.json")
    assert repr(got) == printed
    assert ref.triviaqa(_json(f"{case}.json"), _json(f"{case}_pred.json")) == got


def test_per_question_keeps_a_repeated_keys_first_place_and_its_last_answer():
    t = qafast.triviaqa_per_question(DATA / "wiki.json", DATA / "wiki_pred.json")
    assert t["id"] == ["q1", "q2", "q3", "q4", "q5"]
    assert t["exact_match"].tolist() == [0.0, 1.0, 0.0, 1.0, 0.0]
    assert t["predicted"].tolist() == [True, True, True, True, False]
    # q1's later answer "paris" against "Paris, France"
    assert t["f1"][0] == 2 / 3


def test_web_keys_are_question_and_file_and_the_verified_set_drops_pages():
    t = qafast.triviaqa_per_question(DATA / "web.json", DATA / "web_pred.json")
    assert t["id"] == ["w1--Andrew_Lloyd_Webber.txt", "w1--b.txt"]


def test_normalizer_turns_punctuation_and_underscores_into_spaces():
    assert normalize_triviaqa("Rock_n-Roll") == "rock n roll"
    assert normalize_triviaqa("‘The’ A´b`c") == "b c"
    assert normalize_triviaqa("the_end") == "end"   # "_" splits, then "the" is a word
    assert qafast.answers.normalize_squad("the_end") == "theend"   # SQuAD deletes "_"


def test_empty_answers_score_exact_match_but_no_f1():
    m = qafast.TriviaqaMetrics()
    m.update(["!!", "the"], [["..."], ["a"]])
    assert m.compute() == {"exact_match": 100.0, "f1": 0.0, "common": 2, "denominator": 2}


def test_human_answers_are_normalized_before_the_aliases_compare():
    data = {"Version": 1.0, "Domain": "Wikipedia", "VerifiedEval": False, "Data": [
        {"QuestionId": "q", "Answer": {"NormalizedAliases": [], "HumanAnswers": ["The_Who!"]}}]}
    assert qafast.triviaqa(data, {"q": "who"})["exact_match"] == 100.0


# ---- hypothesis: qafast == the specification ------------------------------------------------

_PIECES = st.sampled_from(["the", "a", "An", "THE", "_", "-", "‘", "’", "´", "`", "'", ".",
                           " ", "\u00a0", "\t", "x", "cat", "café", "İ", "ß", "東", "1,000",
                           "5", "a\u0301", "ǅ", ""])
_TEXT = st.one_of(st.lists(_PIECES, max_size=6).map("".join), st.text(max_size=8))


@st.composite
def _cases(draw):
    domain = draw(st.sampled_from(["Wikipedia", "Web"]))
    verified = draw(st.booleans())
    qids = draw(st.lists(st.sampled_from(["q1", "q2", "q3", "ü", "q 4"]), min_size=1,
                         max_size=6))
    data = []
    for qid in qids:
        answer = {"NormalizedAliases": draw(st.lists(_TEXT, min_size=1, max_size=3))}
        if draw(st.booleans()):
            answer["HumanAnswers"] = draw(st.lists(_TEXT, max_size=2))
        pages = draw(st.lists(st.sampled_from(["a.txt", "b.txt"]), max_size=2))
        data.append({"QuestionId": qid, "Answer": answer, "QuestionPartOfVerifiedEval":
                     draw(st.booleans()), "SearchResults": [
                         {"Filename": f, "DocPartOfVerifiedEval": True} for f in pages]
                     or [{"Filename": "v.txt", "DocPartOfVerifiedEval": True}]})
    dataset = {"Version": 1.0, "Domain": domain, "VerifiedEval": verified, "Data": data}
    keys = list(ref.key_answers(dataset))
    preds = {k: draw(_TEXT) for k in keys if draw(st.integers(0, 4))}
    if draw(st.booleans()):
        preds["other"] = draw(_TEXT)
    return dataset, preds


@settings(max_examples=150, deadline=None)
@given(_cases())
def test_matches_the_specification(case):
    dataset, preds = case
    try:
        want = ref.triviaqa(dataset, preds)
    except ZeroDivisionError:
        with pytest.raises(InputError, match="no question"):
            qafast.triviaqa(dataset, preds)
        return
    assert qafast.triviaqa(dataset, preds) == want
    rows = ref.question_scores(dataset, preds)
    t = qafast.triviaqa_per_question(dataset, preds)
    assert t["exact_match"].tolist() == [float(em) for _, _, em, _ in rows]
    assert t["f1"].tolist() == [float(f) for _, _, _, f in rows]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.one_of(st.none(), _TEXT), st.lists(_TEXT, min_size=1,
                                                                  max_size=3)), max_size=12),
       st.integers(0, 12))
def test_streaming_gives_the_function_bit_for_bit_whatever_the_batches(qs, cut):
    if not qs:
        return
    data = {"Version": 1.0, "Domain": "Wikipedia", "VerifiedEval": False, "Data": [
        {"QuestionId": str(i), "Answer": {"NormalizedAliases": g}} for i, (_, g) in
        enumerate(qs)]}
    preds = {str(i): p for i, (p, _) in enumerate(qs) if p is not None}
    want = qafast.triviaqa(data, preds)
    m = qafast.TriviaqaMetrics()
    m.update([p for p, _ in qs[:cut]], [g for _, g in qs[:cut]])
    other = qafast.TriviaqaMetrics()
    other.update([p for p, _ in qs[cut:]], [g for _, g in qs[cut:]])
    m.merge(other)
    got = m.compute()
    assert got == {k: want[k] for k in ("exact_match", "f1", "common", "denominator")}


def test_normalizer_is_the_specifications():
    for s in ["The Rock_n-Roll’s", "a\u00a0b", "İstanbul", "ﬁ_an", "x.the.y", ""]:
        assert normalize_triviaqa(s) == ref.normalize(s)


# ---- bad input -----------------------------------------------------------------------------

def _wiki(answer):
    return {"Version": 1.0, "Domain": "Wikipedia", "VerifiedEval": False,
            "Data": [{"QuestionId": "q", "Answer": answer}]}


def test_bad_input_is_a_qafast_error_naming_the_question():
    with pytest.raises(InputError, match="'q'.*string"):
        qafast.triviaqa(_wiki({"NormalizedAliases": ["x", 3]}), {"q": "x"})
    with pytest.raises(InputError, match="'q' has no gold answer"):
        qafast.triviaqa(_wiki({"NormalizedAliases": []}), {"q": "x"})
    with pytest.raises(InputError, match="'q'.*the answer must be a string"):
        qafast.triviaqa(_wiki({"NormalizedAliases": ["x"]}), {"q": 1})
    with pytest.raises(InputTypeError):
        qafast.triviaqa(_wiki({"NormalizedAliases": ["x"]}), ["x"])
    with pytest.raises(InputError, match="Domain"):
        qafast.triviaqa({"Version": 1.0, "VerifiedEval": False, "Data": []}, {})
    with pytest.raises(InputError, match="no question to score"):
        qafast.triviaqa({"Version": 1.0, "Domain": "Web", "VerifiedEval": False,
                         "Data": []}, {})
    web = {"Version": 1.0, "Domain": "Web", "VerifiedEval": True, "Data": [
        {"QuestionId": "w", "QuestionPartOfVerifiedEval": True, "Answer": {},
         "SearchResults": [{"Filename": "a", "DocPartOfVerifiedEval": False}]}]}
    with pytest.raises(InputError, match="none of its pages"):
        qafast.triviaqa(web, {})


def test_a_question_without_prediction_is_not_read_as_the_script_does_not():
    # the script never normalizes the answers of a question it has no prediction for
    data = _wiki({"NormalizedAliases": [None]})
    data["Data"].append({"QuestionId": "r", "Answer": {"NormalizedAliases": ["y"]}})
    assert qafast.triviaqa(data, {"r": "y"})["exact_match"] == 50.0


def test_missing_file_and_bad_json_are_qafast_errors(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{", encoding="utf-8")
    with pytest.raises(qafast.QafastError):
        qafast.triviaqa(tmp_path / "none.json", {})
    with pytest.raises(qafast.QafastError):
        qafast.triviaqa(bad, {})


@settings(max_examples=300, deadline=None)
@given(st.text() | st.sampled_from(["ΑΣ.Β", "İ", "the_a-an", "‘The’", "a\x01the", "ẞ"]))
def test_the_normalizer_is_idempotent(s):
    # qafast scores the human answers unnormalized (the scorer normalizes every gold answer
    # again, as the script does): that is the script's numbers only because of this
    once = ref.normalize(s)
    assert ref.normalize(once) == once


# ---- reading the dataset file --------------------------------------------------------------

_SCAN_DATA = {"Version": 1.0, "Domain": "Wikipedia", "VerifiedEval": False, "Data": [
    {"QuestionId": "q1", "Question": "Which?", "Answer": {
        "Aliases": ["Paris"], "NormalizedAliases": ["paris", "île de france", "😀 \ud83d x"],
        "HumanAnswers": ["The Paris!"], "Type": "WikipediaEntity"},
     "EntityPages": [{"Filename": "Paris.txt", "Title": "Paris",
                      "DocPartOfVerifiedEval": True}],
     "QuestionPartOfVerifiedEval": True},
    {"QuestionId": "q2", "Answer": {"NormalizedAliases": ["rock n roll"]},
     "QuestionPartOfVerifiedEval": False, "SearchResults": []},
    {"QuestionId": "q1", "Answer": {"NormalizedAliases": ["london"], "HumanAnswers": []},
     "QuestionPartOfVerifiedEval": True, "SearchResults": [
         {"Filename": "London.txt", "DocPartOfVerifiedEval": True, "Description": "x" * 80},
         {"Filename": "b.txt", "DocPartOfVerifiedEval": False}]}]}
_SCAN_PREDS = {"q1": "London", "q2": "Rock-n-Roll", "q1--Paris.txt": "the paris",
               "q1--London.txt": "London", "x": "y"}


@pytest.mark.parametrize("domain", ["Wikipedia", "Web"])
@pytest.mark.parametrize("verified", [False, True])
@pytest.mark.parametrize("style", [
    {}, {"ensure_ascii": False}, {"indent": 2}, {"separators": (",", ":")},
    {"separators": (" , ", " : "), "indent": "\t", "ensure_ascii": False}])
@pytest.mark.parametrize("mutate", [
    None,
    ('"QuestionId"', '"Question\\u0049d"'),   # a key written with an escape
    ('"NormalizedAliases": ', '"NormalizedAliases": ["dup"], "NormalizedAliases": '),
    ('"Answer": ', '"Answer": {"NormalizedAliases": ["dup"]}, "Answer": '),
    ('"Data": ', '"Data": [], "Data": '),
    ('"Filename": ', '"Filename": 1, "Filename": '),
    ('"Question": "Which?"', '"Question": [[[{"a": "\\u00e9\\n"}]], 1e5, -0.5, null]')])
def test_a_file_is_read_as_json_loads_reads_it(tmp_path, domain, verified, style, mutate):
    # the scans read a file in any layout, an escaped or repeated key included, as the data
    # json.loads makes of it
    data = dict(_SCAN_DATA, Domain=domain, VerifiedEval=verified)
    text = json.dumps(data, **style)
    if mutate and style.get("separators") is None:
        text = text.replace(*mutate)
    path = tmp_path / "data.json"
    # (a lone surrogate is written as the escape it is read from)
    path.write_bytes(text.encode("utf-8", "backslashreplace"))
    loaded = json.loads(path.read_text(encoding="utf-8"))
    try:
        want = ref.triviaqa(loaded, _SCAN_PREDS)
    except Exception:
        with pytest.raises(qafast.QafastError):
            qafast.triviaqa(path, _SCAN_PREDS)
        return
    assert qafast.triviaqa(path, _SCAN_PREDS) == want
    assert qafast.triviaqa_per_question(path, _SCAN_PREDS)["id"] == \
        qafast.triviaqa_per_question(loaded, _SCAN_PREDS)["id"]


@pytest.mark.parametrize("text", [
    '\ufeff{"Version": 1.0, "Domain": "Wikipedia", "VerifiedEval": false, "Data": []}',
    '{"Version": NaN, "Domain": "Wikipedia", "VerifiedEval": false, "Data": [{"QuestionId": '
    '"q", "Answer": {"NormalizedAliases": ["a"], "x": -Infinity}}]}',
    '{"Version": 1.0, "Domain": "Wikipedia", "VerifiedEval": false, "Data": [] } x',
    '{"Version": 1.0, "Domain": "Wikipedia", "VerifiedEval": false, "Data": [{"QuestionId": '
    '"q", "Answer": {"NormalizedAliases": ["a\x01"]}}]}',
    '{"Version": 1.0, "Domain": "Wikipedia", "VerifiedEval": false, "Data": [{"QuestionId": '
    '"q", "Question": ' + "1" * 5000 + ', "Answer": {"NormalizedAliases": ["a"]}}]}',
    '{"Version": 1.0, "Domain": "Wikipedia", "VerifiedEval": false, "Data": [{"QuestionId": '
    '"q", "Question": ' + "[" * 3000 + "]" * 3000 + ', "Answer": {"NormalizedAliases": []}}]}'])
def test_a_file_json_loads_refuses_or_reads_otherwise_is_left_to_it(tmp_path, text):
    # (a BOM, NaN, trailing text, a raw control character, an int json.loads will not
    # convert, nesting beyond its recursion limit: the scans must not read these)
    path = tmp_path / "data.json"
    path.write_text(text, encoding="utf-8")
    try:
        want = ref.triviaqa(json.loads(text), {"q": "a"})
    except Exception:   # not JSON, or not a dataset the script reads
        with pytest.raises(qafast.QafastError):
            qafast.triviaqa(path, {"q": "a"})
    else:
        assert qafast.triviaqa(path, {"q": "a"}) == want


def test_bytes_that_are_not_utf8_are_a_format_error(tmp_path):
    path = tmp_path / "data.json"
    path.write_bytes(b'{"Version": 1.0, "Domain": "Wikipedia", "VerifiedEval": false, "Data": '
                     b'[{"QuestionId": "q", "Question": "\xff", "Answer": '
                     b'{"NormalizedAliases": ["a"]}}]}')
    with pytest.raises(qafast.QafastError, match="JSON"):
        qafast.triviaqa(path, {"q": "a"})


def test_a_verified_question_without_its_flag_is_named_when_read_from_a_file(tmp_path):
    path = tmp_path / "data.json"
    path.write_text(json.dumps({"Version": 1.0, "Domain": "Wikipedia", "VerifiedEval": True,
                                "Data": [{"QuestionId": "q", "Answer": {
                                    "NormalizedAliases": ["a"]}}]}), encoding="utf-8")
    with pytest.raises(InputError, match="question 0 has no 'QuestionPartOfVerifiedEval'"):
        qafast.triviaqa(path, {"q": "a"})


def test_cli_does_not_import_numpy():
    # `qafast triviaqa` on a plain Wikipedia dataset scores it without numpy (or
    # qafast.answers, which imports it): its import was a third of the command's CPU time.
    # The subprocess runs the qafast under test, not the checkout's src/.
    import os
    import subprocess
    import sys

    code = ("import sys; from qafast.cli import main; rc = main(sys.argv[1:]); "
            "print('numpy' in sys.modules, file=sys.stderr); sys.exit(rc)")
    env = dict(os.environ, PYTHONPATH=str(Path(qafast.__file__).resolve().parents[1]),
               PYTHONIOENCODING="utf-8")
    ran = subprocess.run([sys.executable, "-c", code, "triviaqa", "--dataset_file",
                          str(DATA / "wiki.json"), "--prediction_file",
                          str(DATA / "wiki_pred.json")], capture_output=True, text=True,
                         encoding="utf-8", env=env, timeout=120, check=True)
    assert ran.stdout == (DATA / "wiki_expected.out").read_text(encoding="utf-8")
    err = ran.stderr.splitlines()
    assert err[-1] == "False"
    assert "\n".join(err[:-1] + [""]) == (DATA / "wiki_expected.err").read_text(
        encoding="utf-8")


# ---- a dataset object's strings, normalized and scored without the interpreter lock --------

# Latin-1, two-byte text of every kind the kernel lowers itself (General Punctuation, CJK)
# and of kinds it leaves to str.lower (Greek with its final sigma, Cyrillic, dotted I), and
# four-byte text
_KERNEL_PIECES = st.sampled_from(
    ["The", "a", "AN", "x", " ", "_", "-", "‘", "’", "´", "`", "\u00a0", "\u00b5", "É", "ß",
     "Ÿ", "\u00d7", "\u2003", "\u2013", "\u201c", "\u200b", "\u2028", "東京", "\u9fff",
     "ΑΣ", "Σ", "İ", "Ж", "ǅ", "\U0001f600", "\U00010400", "1,000", "\x1c", "a\u0301"])
_KERNEL_TEXT = st.one_of(st.lists(_KERNEL_PIECES, max_size=6).map("".join),
                         st.text(max_size=8),
                         st.text(st.characters(max_codepoint=0xFFFF), max_size=8))


@settings(max_examples=300, deadline=None)
def _specified_token_ids(strings):
    """(ids, offsets, vocabulary size) of the specification's tokens of ``strings``, ids
    numbered by each token's first appearance, as the token kernels number them."""
    vocabulary: dict = {}
    ids, off = [], [0]
    for s in strings:
        for token in ref.normalize(s).split():
            ids.append(vocabulary.setdefault(token, len(vocabulary)))
        off.append(len(ids))
    return ids, off, len(vocabulary)


@given(st.lists(_KERNEL_TEXT, max_size=8))
def test_the_token_kernel_is_the_specifications_normalizer(strings):
    import numpy as np
    from qafast import _kernels

    tok_off = np.empty(len(strings) + 1, dtype=np.int64)
    ids, size = _kernels.answer_tokens(strings, None, 2, tok_off)
    got = np.frombuffer(ids, dtype=np.int32).tolist()
    want, off, size_wanted = _specified_token_ids(strings)
    assert (got, tok_off.tolist(), size) == (want, off, size_wanted)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.one_of(st.none(), _KERNEL_TEXT),
                          st.lists(_KERNEL_TEXT, min_size=1, max_size=3),
                          st.one_of(st.none(), st.lists(_KERNEL_TEXT, max_size=2))),
                min_size=1, max_size=10))
def test_a_dataset_object_scores_as_the_specification(qs):
    data = {"Version": 1.0, "Domain": "Wikipedia", "VerifiedEval": False, "Data": []}
    for i, (_, aliases, human) in enumerate(qs):
        answer = {"NormalizedAliases": aliases}
        if human is not None:
            answer["HumanAnswers"] = human
        data["Data"].append({"QuestionId": str(i), "Answer": answer})
    preds = {str(i): p for i, (p, _, _) in enumerate(qs) if p is not None}
    if not preds:
        return
    assert qafast.triviaqa(data, preds) == ref.triviaqa(data, preds)
    t = qafast.triviaqa_per_question(data, preds)
    rows = ref.question_scores(data, preds)
    assert t["f1"].tolist() == [float(f) for _, _, _, f in rows]
    assert t["exact_match"].tolist() == [float(em) for _, _, em, _ in rows]


def test_gathering_stops_at_the_first_key_the_script_would_not_take():
    import numpy as np
    from qafast import _kernels

    class Text(str):
        pass

    good = {"NormalizedAliases": ["x", "y"], "HumanAnswers": ["Z"]}
    for bad in [{"NormalizedAliases": ("x",)}, {"NormalizedAliases": ["x", Text("y")]},
                {"NormalizedAliases": ["x"], "HumanAnswers": None}, {"Aliases": ["x"]},
                {"NormalizedAliases": [], "HumanAnswers": []}, [["x"]]]:
        ref_off = np.empty(3, dtype=np.int64)
        texts: list = []
        golds: list = []
        got = _kernels.triviaqa_gold_strings([good, None, bad], ["a", None, "b"], texts, golds,
                                             ref_off)
        assert got == 2
    ref_off = np.empty(3, dtype=np.int64)
    texts, golds = [], []
    assert _kernels.triviaqa_gold_strings([good, {"x": 1}, good], ["a", None, "b"], texts,
                                          golds, ref_off) == _kernels.TRIVIAQA_EVERY_KEY_TAKEN
    assert (texts, golds, ref_off.tolist()) == (["a", "b"], ["x", "y", "Z"] * 2, [0, 3, 6])
    # ref_off measured for another number of predictions
    with pytest.raises(InputError):
        _kernels.triviaqa_gold_strings([good], ["a"], [], [], np.empty(3, dtype=np.int64))
    with pytest.raises(InputError):
        _kernels.triviaqa_gold_strings([good, good], ["a", "b"], [], [],
                                       np.empty(2, dtype=np.int64))


def test_answers_the_scorer_does_not_take_keep_their_errors_and_subclasses():
    class Text(str):
        pass

    with pytest.raises(InputError, match="'q'.*must be a string, got int"):
        qafast.triviaqa(_wiki({"NormalizedAliases": ["x"], "HumanAnswers": [3]}), {"q": "x"})
    with pytest.raises(InputError, match="'q'.*NormalizedAliases list"):
        qafast.triviaqa(_wiki({"NormalizedAliases": ["x"], "HumanAnswers": None}), {"q": "x"})
    with pytest.raises(InputError, match="'q': Answer must be an object"):
        qafast.triviaqa(_wiki(["x"]), {"q": "x"})
    # a str subclass as prediction is read as its text
    assert qafast.triviaqa(_wiki({"NormalizedAliases": ["x y"]}), {"q": Text("X_y")}) == \
        ref.triviaqa(_wiki({"NormalizedAliases": ["x y"]}), {"q": "X_y"})


def test_threads_scoring_at_once_give_one_calls_numbers():
    import threading

    data = {"Version": 1.0, "Domain": "Wikipedia", "VerifiedEval": False, "Data": [
        {"QuestionId": f"q{i}", "Answer": {"NormalizedAliases": [f"café {i}", "the ´x’",
                                                                 "ΑΣ" * (i % 3)]}}
        for i in range(9000)]}
    preds = {f"q{i}": ["Café " + str(i), "X", "ας", "y"][i % 4] for i in range(0, 9000, 3)}
    want = ref.triviaqa(data, preds)
    got: list = []
    threads = [threading.Thread(target=lambda: got.append(qafast.triviaqa(data, preds)))
               for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == [want] * 4


# ---- a dataset object and its predictions dict read in one walk ------------------------------

@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.one_of(st.none(), _KERNEL_TEXT),
                          st.lists(_KERNEL_TEXT, min_size=1, max_size=3),
                          st.one_of(st.none(), st.lists(_KERNEL_TEXT, max_size=2)),
                          st.booleans()),
                min_size=1, max_size=10),
       st.booleans(), st.booleans())
def test_the_one_walk_tokens_and_scores_are_the_specifications(qs, verified, extra):
    import numpy as np
    from qafast import _kernels
    from qafast.triviaqa_eval import _walked_result

    data = {"Version": 1.0, "Domain": "Wikipedia", "VerifiedEval": verified, "Data": []}
    for i, (_, aliases, human, kept) in enumerate(qs):
        answer = {"NormalizedAliases": aliases}
        if human is not None:
            answer["HumanAnswers"] = human
        data["Data"].append({"QuestionId": f"q{i}é" if i % 2 else str(i), "Answer": answer,
                             "QuestionPartOfVerifiedEval": kept})
    preds = {q["QuestionId"]: p for q, (p, _, _, _) in zip(data["Data"], qs) if p is not None}
    if extra:
        preds["not a key"] = "x"
    ref_off = np.empty(len(qs) + 1, dtype=np.int64)
    keys, rows, ids, tok_off = _kernels.triviaqa_object_tokens(data["Data"], preds, verified,
                                                               ref_off)
    # the strings the script compares, as the walk orders them: every row's prediction, then
    # every row's gold strings (the human answers as they are), row by row
    kept = list(ref.key_answers(data).items())
    scored = [(preds[k], a["NormalizedAliases"] + a.get("HumanAnswers", []))
              for k, a in kept if k in preds]
    strings = [p for p, _ in scored] + [g for _, golds in scored for g in golds]
    want, off, _ = _specified_token_ids(strings)
    assert (keys, rows) == (len(kept), len(scored))
    assert np.frombuffer(ids, dtype=np.int32).tolist() == want
    assert np.frombuffer(tok_off, dtype=np.int64).tolist() == off
    assert ref_off[:rows + 1].tolist() == np.cumsum([0] + [len(g) for _, g in scored]).tolist()
    if kept:
        assert _walked_result(data, preds) == ref.triviaqa(data, preds)


def test_the_one_walk_leaves_what_the_script_would_not_take_to_the_general_way():
    import numpy as np
    from qafast import _kernels

    class Text(str):
        pass

    def question(qid="q", **answer):
        return {"QuestionId": qid, "Answer": answer or {"NormalizedAliases": ["x"]},
                "QuestionPartOfVerifiedEval": True}

    good = question()
    for questions, preds, verified in [
            ([good, ["x"]], {"q": "x"}, False),                          # a question no dict
            ([good, good], {"q": "x"}, False),                           # a QuestionId twice
            ([{"QuestionId": "q"}], {}, False),                          # no Answer
            ([{"Answer": {}}], {}, False),                               # no QuestionId
            ([question(Text("q"))], {"q": "x"}, False),                  # a str subclass key
            ([question(1)], {1: "x"}, False),
            ([good], {"q": None}, False),                                # a None prediction
            ([good], {"q": Text("x")}, False),
            ([good], {"q": 1}, False),
            ([question(NormalizedAliases=("x",))], {"q": "x"}, False),
            ([question(NormalizedAliases=["x", Text("y")])], {"q": "x"}, False),
            ([question(NormalizedAliases=["x"], HumanAnswers=None)], {"q": "x"}, False),
            ([question(NormalizedAliases=[], HumanAnswers=[])], {"q": "x"}, False),
            ([{"QuestionId": "q", "Answer": ["x"]}], {"q": "x"}, False),
            ([{"QuestionId": "q", "Answer": {"NormalizedAliases": ["x"]}}], {"q": "x"}, True),
            ([{"QuestionId": "q", "Answer": {"NormalizedAliases": ["x"]},
               "QuestionPartOfVerifiedEval": 1}], {"q": "x"}, True)]:
        ref_off = np.empty(len(questions) + 1, dtype=np.int64)
        assert _kernels.triviaqa_object_tokens(questions, preds, verified, ref_off) is None
    # a question without a prediction is not read further, as the script does not read it
    got = _kernels.triviaqa_object_tokens([{"QuestionId": "q", "Answer": None}, good],
                                          {"q": "x"}, False, np.empty(3, dtype=np.int64))
    assert got is None   # (the first question's Answer: a key with a None Answer)
    got = _kernels.triviaqa_object_tokens([{"QuestionId": "p", "Answer": ["?"]}, good],
                                          {"q": "x"}, False, np.empty(3, dtype=np.int64))
    assert got[:2] == (2, 1)
    with pytest.raises(InputError):
        _kernels.triviaqa_object_tokens([good, good], {}, False, np.empty(2, dtype=np.int64))


def test_the_one_walk_survives_a_key_whose_eq_empties_the_dataset():
    import numpy as np
    from qafast import _kernels

    questions = [{"QuestionId": f"q{i}", "Answer": {"NormalizedAliases": [f"x {i}" * 3]}}
                 for i in range(50)]
    called = []

    class Collides:
        # a predictions key that shares q7's hash (q7 has no prediction): looking q7 up
        # calls its __eq__, Python code in the middle of the walk
        def __hash__(self):
            return hash("q7")

        def __eq__(self, other):
            called.append(other)
            for q in questions:
                q["Answer"]["NormalizedAliases"].clear()
                q.clear()
            questions.clear()
            return False

    preds = {f"q{i}": f"X {i}" for i in range(50) if i != 7}
    preds[Collides()] = "y"
    got = _kernels.triviaqa_object_tokens(questions, preds, False,
                                          np.empty(51, dtype=np.int64))
    assert called
    # the walk ends where the list did; the strings it read before are still there to score
    keys, rows, ids, tok_off = got
    assert (keys, rows) == (8, 7)
    assert len(np.frombuffer(tok_off, dtype=np.int64)) == 2 * 7 + 1
