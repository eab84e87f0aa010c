"""qafast.mlqa, qafast.cmrc and qafast.drcd: the official MLQA and CMRC 2018 scripts' recorded
output, the plain-Python specification (qafast.reference.answers), AnswerMetrics with the same
normalizers, and bad input."""

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import qafast
import qafast.multilingual_eval
from qafast.cli import main as cli_main
from qafast.errors import InputError, InputTypeError
from qafast.reference import answers as spec

DATA = Path(__file__).resolve().parent / "data" / "multilingual"
LANGS = ("en", "zh", "ar", "de", "es", "vi", "hi")


def _nltk_ready() -> bool:
    try:
        import nltk

        nltk.word_tokenize("ok")
    except Exception:  # noqa: BLE001 - nltk or its punkt_tab data missing
        return False
    return True


needs_punkt = pytest.mark.skipif(not _nltk_ready(),
                                 reason="non-Chinese CMRC text needs nltk and its punkt_tab data")


def squad_data(questions, version="1.0"):
    return {"version": version, "data": [{"paragraphs": [{"qas": [
        {"id": q, "answers": [{"text": t} for t in golds]} for q, golds in questions]}]}]}


# --------------------------------------------------------------------------------------------
# The official scripts' output, recorded on small adversarial files
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("lang", LANGS)
def test_mlqa_cli_prints_what_the_script_printed(lang, capsys):
    rc = cli_main(["mlqa", str(DATA / f"mlqa_{lang}_data.json"),
                   str(DATA / f"mlqa_{lang}_pred.json"), lang])
    captured = capsys.readouterr()
    assert rc == 0
    assert captured.out == (DATA / f"mlqa_{lang}_stdout.txt").read_text(encoding="utf-8")


def test_mlqa_cli_notes_on_stderr_as_the_script(capsys):
    cli_main(["mlqa", str(DATA / "mlqa_de_data.json"), str(DATA / "mlqa_de_pred.json"), "de"])
    assert capsys.readouterr().err == "Evaluation expects v-1.0, but got dataset with v-1.1\n"


@pytest.mark.parametrize("case", [
    "cmrc", pytest.param("cmrc_ascii", marks=needs_punkt)])
def test_cmrc_cli_prints_what_the_script_printed(case, capsys, monkeypatch):
    monkeypatch.chdir(DATA)   # the script prints the prediction file's name as given
    rc = cli_main(["cmrc", f"{case}_data.json", f"{case}_pred.json"])
    captured = capsys.readouterr()
    assert rc == 0
    assert captured.out == (DATA / f"{case}_stdout.txt").read_text(encoding="utf-8")
    if case == "cmrc":
        assert captured.err == "Unanswered question: c2\n"


def test_api_gives_the_printed_numbers():
    data = json.loads((DATA / "mlqa_en_data.json").read_text(encoding="utf-8"))
    preds = json.loads((DATA / "mlqa_en_pred.json").read_text(encoding="utf-8"))
    assert qafast.mlqa(data, preds, "en") == json.loads(
        (DATA / "mlqa_en_stdout.txt").read_text(encoding="utf-8"))
    got = qafast.cmrc(DATA / "cmrc_data.json", DATA / "cmrc_pred.json")
    printed = json.loads((DATA / "cmrc_stdout.txt").read_text(encoding="utf-8"))
    assert {k: f"{got[k]:.3f}" for k in ("AVERAGE", "F1", "EM")} == {
        k: printed[k] for k in ("AVERAGE", "F1", "EM")}
    assert (got["TOTAL"], got["SKIP"]) == (6, 1)


# --------------------------------------------------------------------------------------------
# The scripts' rules
# --------------------------------------------------------------------------------------------

def test_mlqa_rules_per_language():
    def f1(pred, gold, lang):
        return qafast.mlqa(squad_data([("q", [gold])]), {"q": pred}, lang, per_question=True)

    assert f1("大学北京", "北京大学", "zh")["f1"][0] == 1.0          # a bag of characters
    assert f1("大学北京", "北京大学", "zh")["exact_match"][0] == 0.0
    assert f1("كتاب جديد", "الكتاب الجديد", "ar")["exact_match"][0] == 1.0
    assert f1("قال", "ق", "ar")["exact_match"][0] == 1.0            # "ال" inside a word goes
    assert f1("hund", "Der Hund", "de")["exact_match"][0] == 1.0
    assert f1("hund", "Der Hund", "en")["exact_match"][0] == 0.0
    assert f1("eiffeltower €5", "Eiffel–Tower, €5!", "en")["exact_match"][0] == 1.0
    assert f1("", "the", "en")["exact_match"][0] == 1.0              # both empty: EM 1, F1 0
    assert f1("", "the", "en")["f1"][0] == 0.0


def test_mlqa_missing_and_repeated_ids():
    data = squad_data([("q1", ["Paris"]), ("q2", ["Rome"]), ("q1", ["paris france"])])
    rows = qafast.mlqa(data, {"q1": "Paris", "unknown": "x"}, "en", per_question=True)
    assert rows["id"] == ["q1", "q2", "q1"]
    assert rows["exact_match"][[0, 2]].tolist() == [1.0, 0.0] and math.isnan(rows["f1"][1])
    assert qafast.mlqa(data, {"q1": "Paris"}, "en") == {
        "exact_match": 100.0 / 3, "f1": 100.0 * (1.0 + 2 / 3) / 3}


def test_cmrc_rules():
    data = [{"qas": [{"query_id": "a", "answers": ["北京 大学"]},
                     {"query_id": "b", "answers": ["北京。"]},
                     {"query_id": "c", "answers": [""]}]}]
    rows = qafast.cmrc(data, {"a": "北京大学", "b": "北京", "c": ""}, per_question=True)
    assert rows["EM"].tolist() == [0.0, 1.0, 1.0]      # inner space kept, "。" dropped
    assert rows["F1"].tolist() == [1.0, 1.0, 0.0]      # empty vs empty: F1 0
    assert qafast.cmrc(data, {"a": "大学北京"}, per_question=True)["F1"][0] == 0.5  # LCS


@needs_punkt
def test_cmrc_scores_str_of_other_values():
    data = {"data": [{"paragraphs": [{"qas": [{"id": "a", "answers": [{"text": 2018}]}]}]}]}
    # str(2018) == "2018" (needs no punkt only where tokens are Chinese: compare EM)
    assert qafast.cmrc(data, {"a": 2018}, per_question=True)["EM"][0] == 1.0


def test_drcd_is_squad_over_characters():
    data = squad_data([("q", ["臺北市。"]), ("r", ["the 101 大樓"])], version="1.1")
    assert qafast.drcd(data, {"q": "臺北", "r": "101大樓"}) == {
        "exact_match": 0.0, "f1": 100.0 * (0.8 + 2 * (5 / 5) * (5 / 6) / (1 + 5 / 6)) / 2}


# --------------------------------------------------------------------------------------------
# Against the specification (qafast.reference.answers), and AnswerMetrics
# --------------------------------------------------------------------------------------------

TEXT = st.text(alphabet=st.sampled_from(list(
    "abc ABC the an der die el la ال北京大学中国年，。《》「」！？、·－…—–“”'\".,!?-€©° \u00a0\u3000\t"
    "㐀豈0123456789İßﬁ")), max_size=12)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.lists(TEXT, min_size=1, max_size=3), st.none() | TEXT),
                min_size=1, max_size=8),
       st.sampled_from(LANGS))
def test_mlqa_matches_the_specification(questions, lang):
    data = squad_data([(f"q{i}", golds) for i, (golds, _) in enumerate(questions)])
    preds = {f"q{i}": p for i, (_, p) in enumerate(questions) if p is not None}
    rows = qafast.mlqa(data, preds, lang, per_question=True)
    norm = spec.get_normalizer(f"mlqa:{lang}")
    em_sum, f1_sum = 0, 0
    for i, (golds, p) in enumerate(questions):
        if p is None:
            assert math.isnan(rows["exact_match"][i]) and math.isnan(rows["f1"][i])
            continue
        em = max(float(norm(p) == norm(g)) for g in golds)
        f1 = max(spec.bag_f1(norm(p).split(), norm(g).split(), empty_rule="v1") for g in golds)
        assert rows["exact_match"][i] == em and rows["f1"][i] == f1
        em_sum += em
        f1_sum += f1
    n = len(questions)
    assert qafast.mlqa(data, preds, lang) == {"exact_match": 100.0 * em_sum / n,
                                              "f1": 100.0 * f1_sum / n}


#: Text for MLQA's kernel: final sigma, underscores and numeric letters (word characters for
#: the articles' \\b), combining marks, Vietnamese articles, surrogates and NUL (its batch
#: separator, whose answers go the answers module's way).
KERNEL_TEXT = st.text(alphabet=st.sampled_from(list(
    "a an the ΣΑσ_ⅰ²\u0301 của là cái des der ال فال_ال 北京㐀 ，。!?-‿＿\u00a0\u2028 \ud800\x00")),
    max_size=10)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.lists(KERNEL_TEXT, min_size=1, max_size=3), KERNEL_TEXT),
                min_size=1, max_size=6),
       st.sampled_from(LANGS))
def test_mlqa_kernel_matches_the_specification(questions, lang):
    data = squad_data([(f"q{i}", golds) for i, (golds, _) in enumerate(questions)])
    preds = {f"q{i}": p for i, (_, p) in enumerate(questions)}
    rows = qafast.mlqa(data, preds, lang, per_question=True)
    norm = spec.get_normalizer(f"mlqa:{lang}")
    for i, (golds, p) in enumerate(questions):
        assert rows["exact_match"][i] == max(float(norm(p) == norm(g)) for g in golds)
        assert rows["f1"][i] == max(spec.bag_f1(norm(p).split(), norm(g).split(),
                                                empty_rule="v1") for g in golds)


CJK = st.text(alphabet=st.sampled_from(list("北京大学中国年 ，。《》「」－～、·")), max_size=8)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.lists(CJK, min_size=1, max_size=3), CJK), min_size=1, max_size=6))
def test_cmrc_matches_the_specification(questions):
    data = [{"qas": [{"query_id": f"q{i}", "answers": g} for i, (g, _) in enumerate(questions)]}]
    rows = qafast.cmrc(data, {f"q{i}": p for i, (_, p) in enumerate(questions)},
                       per_question=True)
    for i, (golds, p) in enumerate(questions):
        assert rows["EM"][i] == max(spec.exact_match_score(p, g, normalizer="cmrc")
                                    for g in golds)
        assert rows["F1"][i] == max(spec.f1_score(p, g, normalizer="cmrc", unit="cmrc",
                                                  empty_rule="v1") for g in golds)


@pytest.mark.parametrize(("normalizer", "unit", "call"), [
    ("mlqa:zh", "token", lambda d, p: qafast.mlqa(d, p, "zh", per_question=True)),
    ("mlqa:ar", "token", lambda d, p: qafast.mlqa(d, p, "ar", per_question=True)),
    ("drcd", "char", lambda d, p: qafast.drcd(d, p, per_question=True)),
])
def test_answer_metrics_takes_these_normalizers(normalizer, unit, call):
    golds = [["北京大学", "北大"], ["الكتاب الجديد"], ["2018年，中国"], ["the"]]
    preds = ["大学北京", "كتاب", "2018 中国", ""]
    data = squad_data([(f"q{i}", g) for i, g in enumerate(golds)])
    rows = call(data, {f"q{i}": p for i, p in enumerate(preds)})
    m = qafast.AnswerMetrics(normalizer=normalizer, unit=unit, empty_rule="v1")
    m.update(preds[:2], golds[:2])
    m.update(preds[2:], golds[2:])
    got = m.compute()
    np.testing.assert_allclose([got["exact_match"], got["f1"]],
                               [rows[k].mean() for k in rows if k != "id"], rtol=1e-15)


def test_answer_metrics_takes_cmrc():
    golds, preds = [["北京大学"], ["三国。"]], ["大学北京", "三国"]
    m = qafast.AnswerMetrics(normalizer="cmrc", unit="cmrc", empty_rule="v1")
    m.update(preds, golds)
    data = [{"qas": [{"query_id": f"q{i}", "answers": g} for i, g in enumerate(golds)]}]
    got = qafast.cmrc(data, {f"q{i}": p for i, p in enumerate(preds)})
    assert m.compute()["f1"] * 100 == pytest.approx(got["F1"], rel=1e-15)
    assert m.compute()["exact_match"] * 100 == got["EM"]


# --------------------------------------------------------------------------------------------
# Bad input: a qafast error naming it, where the scripts crash
# --------------------------------------------------------------------------------------------

def test_languages_are_the_specifications():
    assert qafast.multilingual_eval.MLQA_LANGUAGES == spec.MLQA_LANGUAGES


def test_bad_input():
    data = squad_data([("q1", ["Paris"]), ("q2", [])])
    with pytest.raises(InputError, match="language 'fr'"):
        qafast.mlqa(data, {}, "fr")
    with pytest.raises(InputError, match="'q2': no gold answer"):
        qafast.mlqa(data, {"q2": "x"}, "en")
    assert qafast.mlqa(data, {"q1": "Paris"}, "en")["exact_match"] == 50.0  # q2 not read
    with pytest.raises(InputTypeError, match="'q1': the prediction must be a string"):
        qafast.mlqa(data, {"q1": 3}, "en")
    with pytest.raises(InputTypeError, match="'q1': the prediction must be a string"):
        qafast.mlqa(data, {"q1": None}, "en")
    with pytest.raises(InputError, match="no question"):
        qafast.mlqa(squad_data([]), {}, "en")
    with pytest.raises(InputTypeError, match="a question id must be a string"):
        qafast.mlqa({"data": [{"paragraphs": [{"qas": [{"id": ["x"], "answers": []}]}]}]},
                    {}, "en")
    bad = {"data": [{"paragraphs": [{"qas": [{"id": "a", "answers": [{"text": 1.5}]},
                                            {"id": "b", "answers": [{"text": "x"}]}]}]}]}
    assert qafast.mlqa(bad, {"b": "x"}, "en")["exact_match"] == 50.0       # a not read
    with pytest.raises(InputTypeError, match="'a': a gold answer must be a string"):
        qafast.mlqa(bad, {"a": "x"}, "en")
    with pytest.raises(InputTypeError, match="per_question"):
        qafast.mlqa(data, {}, "en", per_question="yes")
    with pytest.raises(InputError, match="'x': no gold answer"):
        qafast.cmrc([{"qas": [{"query_id": "x", "answers": []}]}], {"x": "y"})
    with pytest.raises(InputTypeError, match="predictions must map"):
        qafast.cmrc([{"qas": []}], ["x"])
    with pytest.raises(InputError, match="has no 'qas'"):
        qafast.cmrc([{"paragraphs": [{}]}], {})


def test_cli_errors(tmp_path, capsys):
    data = tmp_path / "d.json"
    data.write_text(json.dumps(squad_data([("q", [])])), encoding="utf-8")
    pred = tmp_path / "p.json"
    pred.write_text('{"q": "x"}', encoding="utf-8")
    assert cli_main(["mlqa", str(data), str(pred), "xx"]) == 2
    assert "unknown MLQA answer language 'xx'" in capsys.readouterr().err
    assert cli_main(["mlqa", str(data), str(pred), "en"]) == 2
    assert "no gold answer" in capsys.readouterr().err
    pred.write_text("{", encoding="utf-8")
    assert cli_main(["cmrc", str(data), str(pred)]) == 2
    assert "not valid JSON" in capsys.readouterr().err




# --------------------------------------------------------------------------------------------
# Against the whole-evaluation specification (qafast.reference.multilingual), bit for bit
# --------------------------------------------------------------------------------------------

from qafast.reference import multilingual as ml_spec

# CJK, Arabic (with its article), Greek capital sigma (lowercased by position), combining
# marks, NUL, per-language articles, Unicode and CMRC punctuation, Unicode whitespace
ML_TEXT = st.lists(st.sampled_from([
    *"ab ", "the", "an", "der", "die", "el", "los", "của", "là", "ال", "كتاب", "北京", "大学",
    *"臺灣年", "ΟΔΟΣ", "Σ", "ς", "e\u0301", "\u0308", "\x00", *"，。《》「」！？、·－…—“”'\".,!?-€°",
    "\u00a0", "\u3000", "\t", "İ", "ß", "0", "9"]), max_size=6).map("".join)

ML_QUESTIONS = st.lists(
    st.tuples(st.sampled_from(["q0", "q1", "q2", "q3", "q4", "q5"]),   # ids repeat
              st.lists(ML_TEXT, min_size=1, max_size=3).map(lambda g: g + g[:1]),  # dup gold
              st.none() | ML_TEXT),
    min_size=1, max_size=7)


def _ml_case(questions):
    data = squad_data([(q, golds) for q, golds, _ in questions])
    preds = {}
    for q, _, p in questions:
        if p is not None:
            preds.setdefault(q, p)   # one prediction per id; a later None leaves it
    return data, preds


def _same_bits(got: dict, want: dict) -> None:
    assert list(got) == list(want)
    for k, value in want.items():
        assert type(got[k]) is type(value) and got[k] == value, k


@settings(max_examples=150, deadline=None)
@given(ML_QUESTIONS)
def test_mlqa_is_the_whole_specification(questions):
    data, preds = _ml_case(questions)
    for lang in LANGS:
        _same_bits(qafast.mlqa(data, preds, lang), ml_spec.mlqa(data, preds, lang))


@settings(max_examples=200, deadline=None)
@given(ML_QUESTIONS)
def test_drcd_is_the_whole_specification(questions):
    data, preds = _ml_case(questions)
    _same_bits(qafast.drcd(data, preds), ml_spec.drcd(data, preds))


# without nltk's data only Chinese, marks and whitespace: the runs between them give no token
CMRC_NO_NLTK = st.text(alphabet=st.sampled_from([
    *"北京大学臺灣年 ，。《》「」－～、·：“”（）\u3000\t"]), max_size=8)


def _cmrc_case(questions, squad_form: bool):
    if squad_form:
        data = {"data": [{"paragraphs": [{"qas": [
            {"id": q, "answers": [{"text": t} for t in golds]} for q, golds, _ in questions]}]}]}
    else:
        data = [{"qas": [{"query_id": q, "answers": golds} for q, golds, _ in questions]}]
    preds = {}
    for q, _, p in questions:
        if p is not None:
            preds.setdefault(q, p)
    return data, preds


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["c0", "c1", "c2", "c3"]),
                          st.lists(CMRC_NO_NLTK, min_size=1, max_size=3),
                          st.none() | CMRC_NO_NLTK), min_size=1, max_size=6),
       st.booleans())
def test_cmrc_is_the_whole_specification(questions, squad_form):
    data, preds = _cmrc_case(questions, squad_form)
    _same_bits(qafast.cmrc(data, preds), ml_spec.cmrc(data, preds))


@needs_punkt
@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["c0", "c1", "c2"]),
                          st.lists(ML_TEXT, min_size=1, max_size=2),
                          st.none() | ML_TEXT | st.integers(-5, 5)), min_size=1, max_size=5))
def test_cmrc_is_the_whole_specification_with_nltk(questions):
    data, preds = _cmrc_case(questions, False)
    _same_bits(qafast.cmrc(data, preds), ml_spec.cmrc(data, preds))


_ABSENT = object()


@settings(max_examples=120, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["c0", "c1", "c2", "c3"]),
                          st.lists(CMRC_NO_NLTK, max_size=3),
                          st.sampled_from([_ABSENT, None, 7]) | CMRC_NO_NLTK),
                min_size=1, max_size=6))
def test_cmrc_squad_files_score_as_their_json(questions):
    """A SQuAD-form file (DRCD's) is read by the compiled scan and scored from its flat
    answers: the same rows and means as the JSON value scored question by question, and the
    same error where a predicted question has no answer (a null or number prediction is
    scored as str() of it)."""
    import tempfile

    data = squad_data([(q, golds) for q, golds, _ in questions])
    preds = {q: p for q, _, p in questions if p is not _ABSENT}
    with tempfile.TemporaryDirectory() as tmp:
        d, p = Path(tmp) / "d.json", Path(tmp) / "p.json"
        d.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
        p.write_text(json.dumps(preds, ensure_ascii=False), encoding="utf-8")
        for per_question in (False, True):
            try:
                want = qafast.cmrc(data, preds, per_question=per_question)
            except InputError as e:
                with pytest.raises(type(e)):
                    qafast.cmrc(str(d), str(p), per_question=per_question)
                continue
            got = qafast.cmrc(str(d), str(p), per_question=per_question)
            if per_question:
                assert got["id"] == want["id"]
                np.testing.assert_array_equal(np.asarray(got["EM"]), want["EM"])
                np.testing.assert_array_equal(np.asarray(got["F1"]), want["F1"])
            else:
                assert got == want


def test_the_specification_on_the_recorded_files():
    for lang in LANGS:
        data = json.loads((DATA / f"mlqa_{lang}_data.json").read_text(encoding="utf-8"))
        preds = json.loads((DATA / f"mlqa_{lang}_pred.json").read_text(encoding="utf-8"))
        assert ml_spec.mlqa(data, preds, lang) == json.loads(
            (DATA / f"mlqa_{lang}_stdout.txt").read_text(encoding="utf-8"))
    for case in ("cmrc", "drcd"):   # CMRC 2018's script on its own and on DRCD's files
        data = json.loads((DATA / f"{case}_data.json").read_text(encoding="utf-8"))
        preds = json.loads((DATA / f"{case}_pred.json").read_text(encoding="utf-8"))
        got = ml_spec.cmrc(data, preds)
        printed = json.loads((DATA / f"{case}_stdout.txt").read_text(encoding="utf-8"))
        assert {k: f"{got[k]:.3f}" for k in ("AVERAGE", "F1", "EM")} == {
            k: printed[k] for k in ("AVERAGE", "F1", "EM")}
        assert (got["TOTAL"], got["SKIP"]) == (printed["TOTAL"], printed["SKIP"])


# --------------------------------------------------------------------------------------------
# qafast drcd: CMRC 2018's script on DRCD files (recorded), or DRCD's own rules
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("case", ["drcd", pytest.param("drcd_ascii", marks=needs_punkt)])
def test_drcd_cli_prints_what_the_cmrc_script_printed(case, capsys, monkeypatch):
    monkeypatch.chdir(DATA)   # the script prints the prediction file's name as given
    rc = cli_main(["drcd", f"{case}_data.json", f"{case}_pred.json"])
    captured = capsys.readouterr()
    assert rc == 0
    assert captured.out == (DATA / f"{case}_stdout.txt").read_text(encoding="utf-8")
    assert captured.err == ("Unanswered question: 1001-1-4\n" if case == "drcd" else "")
    assert cli_main(["drcd", f"{case}_data.json", f"{case}_pred.json", "--rules", "cmrc"]) == 0
    assert capsys.readouterr().out == captured.out


def test_drcd_cli_with_drcd_rules(capsys, monkeypatch):
    monkeypatch.chdir(DATA)
    assert cli_main(["drcd", "drcd_data.json", "drcd_pred.json", "--rules", "drcd"]) == 0
    captured = capsys.readouterr()
    got = qafast.drcd("drcd_data.json", "drcd_pred.json")
    em, f1 = got["exact_match"], got["f1"]
    assert json.loads(captured.out) == {
        "AVERAGE": f"{(em + f1) * 0.5:.3f}", "F1": f"{f1:.3f}", "EM": f"{em:.3f}",
        "TOTAL": 9, "SKIP": 1, "FILE": "drcd_pred.json"}
    assert captured.err == "Unanswered question: 1001-1-4\n"
    data = json.loads((DATA / "drcd_data.json").read_text(encoding="utf-8"))
    preds = json.loads((DATA / "drcd_pred.json").read_text(encoding="utf-8"))
    assert ml_spec.drcd(data, preds) == got
    # the rules differ here: DRCD keeps 「」 (an exact match for CMRC), and its F1 is a bag
    assert captured.out != (DATA / "drcd_stdout.txt").read_text(encoding="utf-8")


def test_drcd_cli_errors(tmp_path, capsys):
    pred = tmp_path / "p.json"
    pred.write_text("{", encoding="utf-8")
    for rules in ("cmrc", "drcd"):
        assert cli_main(["drcd", str(DATA / "drcd_data.json"), str(pred), "--rules", rules]) == 2
        assert "not valid JSON" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:
        cli_main(["drcd", str(DATA / "drcd_data.json"), str(pred), "--rules", "squad"])
    assert exit_.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


_CMRC_CHARS = [*"，。：:-_*/\\~`+=「」《》 \t\u3000\n北京大学", "\u4e00", "\u9fa5"]


def _cmrc_units_hold(s):
    from qafast import answers

    assert answers.normalize_cmrc(s) == spec.normalize_cmrc(s)
    assert answers._cmrc_units(s) == [t.encode("utf-8", "surrogatepass")
                                      for t in spec.cmrc_split(s)]
    # the script's segmentation of the original string: the normalized string's tokens
    assert spec.cmrc_split(spec.normalize_cmrc(s)) == spec.cmrc_segments(s)
    # (no Latin letters added: this half runs where nltk's data is missing; U+0000 is the
    # one-pass encoding's separator, and it declines such strings)
    if "\0" not in s:
        _cmrc_encoding_holds([s, s.upper(), "北京" + s, s + " 北", "", s])


def _cmrc_encoding_holds(strings):
    """The one-pass encoding of many strings (answers._cmrc_encode) gives each string its
    normalized text as code points and its units as ids, one id per distinct unit."""
    from qafast import answers

    tok_off, toks, key_off, keys = answers._cmrc_encode(strings)
    unit_of: dict = {}
    for i, s in enumerate(strings):
        assert "".join(map(chr, keys[key_off[i]:key_off[i + 1]])) == spec.normalize_cmrc(s)
        units = [t.encode("utf-8", "surrogatepass") for t in spec.cmrc_segments(s)]
        ids = toks[tok_off[i]:tok_off[i + 1]].tolist()
        assert len(ids) == len(units)
        for t, u in zip(ids, units):
            assert unit_of.setdefault(t, u) == u
    assert len(set(unit_of.values())) == len(unit_of)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_CMRC_CHARS), max_size=30).map("".join))
def test_cmrc_units_are_the_specifications(s):
    """The fast CMRC segmentation (punctuation by translate, one regex split at Chinese
    characters, each run's tokens kept) gives the specification's tokens; here the text
    between Chinese characters is whitespace once the punctuation is dropped, which needs no
    nltk data."""
    _cmrc_units_hold(s)


@needs_punkt
@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([*_CMRC_CHARS, *"ab1.2'\"?!NBA……·", "\u9fa6", "\ud800", "İ",
                                 "Σ"]), max_size=30).map("".join)
       | st.text(max_size=20))
def test_cmrc_units_are_the_specifications_with_nltk(s):
    """The same with text nltk splits, "……" (which the script's list holds but never
    matches), a character just past the Chinese block, a lone surrogate, and letters that
    lowering changes."""
    _cmrc_units_hold(s)
    if "\0" not in s:  # U+0000 is the one-pass encoding's separator: it declines those
        _cmrc_encoding_holds([s + " ab", "ab " + s])


@needs_punkt  # nltk splits the "\0" run on the other way
def test_cmrc_encoding_takes_a_separator_elsewhere():
    """A string holding U+0000 (the one-pass kernel's separator) is scored the other way."""
    from qafast import answers

    assert answers._cmrc_encode(["北\0京", "北京"]) is None
    data = [{"qas": [{"query_id": "1", "answers": ["北\0京", "北京"]}]}]
    got = qafast.cmrc(data, {"1": "北\0京"}, per_question=True)
    assert (got["EM"][0], got["F1"][0]) == (1.0, 1.0)
    _cmrc_encoding_holds(["", " ", "《》", "北京 大学", "北京  大学"])


@needs_punkt
def test_cmrc_whitespace_uncovered_by_punctuation_stays():
    """The script strips, then drops punctuation: in "－\u2003\"\u2003NBA球员" the em space the
    dash uncovers stays, and nltk reads the quote after it as a closing one (''), where the
    answer's leading quote is an opening one (``): F1 0.75, as cmrc2018_evaluate.py's
    calc_f1_score gives (qafast gave 1.0 when it stripped the normalized string again)."""
    data = [{"qas": [{"query_id": "1", "answers": ['"\u2003NBA球员']}]}]
    got = qafast.cmrc(data, {"1": '－\u2003"\u2003NBA球员'}, per_question=True)
    assert got["F1"][0] == 0.75 and got["EM"][0] == 0.0


# --------------------------------------------------------------------------------------------
# MLQA's kernels on their own, and the command without numpy
# --------------------------------------------------------------------------------------------

@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(KERNEL_TEXT, ML_TEXT, st.text(max_size=12)), min_size=1, max_size=8),
       st.sampled_from(LANGS))
def test_mlqa_token_kernels_are_the_normalizer(strings, lang):
    """ml_lower and ml_tokens give, for each string, the tokens of the specification's
    normalize_mlqa (the words it joins with spaces), ids following first appearance: capitals (ASCII folded in the kernel, the rest by str.lower), NUL, lone
    surrogates and every code point hypothesis draws."""
    from qafast import _kernels
    from qafast.multilingual_eval import _mlqa_articles, _mlqa_drop, _zeros

    lowered, wide, length = _kernels.ml_lower(strings)
    assert [s.lower() for s in lowered] == [s.lower() for s in strings]
    assert length == sum(map(len, lowered))
    assert wide == sorted({ord(c) for s in lowered for c in s if ord(c) >= 128})
    word_off, words, mode = _mlqa_articles(lang)
    tok_off = _zeros("q", len(strings) + 1)
    ids = _zeros("i", length)
    ntok = _kernels.ml_tokens(lowered, _mlqa_drop(wide), word_off, words, mode, tok_off, ids)
    norm = spec.get_normalizer(f"mlqa:{lang}")
    seen: dict = {}
    want = []
    for s in strings:
        want.append([seen.setdefault(t, len(seen)) for t in norm(s).split()])
    assert ntok == sum(map(len, want))
    assert [ids[tok_off[i]:tok_off[i + 1]].tolist() for i in range(len(strings))] == want


def test_mlqa_predicted_rows_kernel():
    from qafast import _kernels
    from qafast.multilingual_eval import _zeros

    pred = memoryview(bytearray(b"".join(x.to_bytes(4, "little", signed=True)
                                         for x in (3, -1, 0, 5)))).cast("i")
    off = memoryview(bytearray(b"".join(x.to_bytes(8, "little") for x in (0, 1, 1, 3, 4)))
                     ).cast("q")
    rows, sids = _zeros("q", 4), _zeros("i", 4)
    assert _kernels.ml_predicted_rows(pred, off, rows, sids) == 3
    assert rows.tolist()[:3] == [0, 2, 3] and sids.tolist()[:3] == [3, 0, 5]
    gap = memoryview(bytearray(b"".join(x.to_bytes(8, "little") for x in (0, 1, 1, 1, 4)))
                     ).cast("q")
    assert _kernels.ml_predicted_rows(pred, gap, rows, sids) == -3   # question 2: no gold
    with pytest.raises(InputError):
        _kernels.ml_predicted_rows(pred, off, _zeros("q", 3), sids)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_mlqa_cli_does_not_import_numpy(lang):
    """`qafast mlqa` reads, scores and prints without numpy, whose import took a third of
    the time the command may take."""
    import subprocess
    import sys

    code = ("import sys; from qafast.cli import main; main(sys.argv[1:]); "
            "print('numpy' in sys.modules, file=sys.stderr)")
    ran = subprocess.run([sys.executable, "-c", code, "mlqa",
                          str(DATA / f"mlqa_{lang}_data.json"),
                          str(DATA / f"mlqa_{lang}_pred.json"), lang],
                         capture_output=True, text=True, check=True)
    assert ran.stdout == (DATA / f"mlqa_{lang}_stdout.txt").read_text(encoding="utf-8")
    assert ran.stderr.strip().splitlines()[-1] == "False"


# --------------------------------------------------------------------------------------------
# The files read from their bytes (MlqaFiles): no str per answer or id
# --------------------------------------------------------------------------------------------

FILE_TEXT = st.one_of(ML_TEXT, KERNEL_TEXT, TEXT, st.text(max_size=8))


def _write_case(tmp: Path, questions, escaped: bool, extra_preds: str = "") -> tuple[Path, Path]:
    """The dataset and the predictions as files (``escaped``: non-ASCII as \\u escapes, as
    json.dump writes by default; a lone surrogate can only be written so)."""
    data, preds = _ml_case(questions)
    d, p = tmp / "data.json", tmp / "pred.json"
    d.write_text(json.dumps(data, ensure_ascii=escaped), encoding="utf-8", errors="strict")
    p.write_text(json.dumps(preds, ensure_ascii=escaped)[:-1] + extra_preds + "}",
                 encoding="utf-8")
    return d, p


def _encodable(questions) -> bool:
    return not any("\ud800" <= ch <= "\udfff" for q, golds, p in questions
                   for s in (q, *golds, p or "") for ch in s)


FILE_QUESTIONS = st.lists(
    st.tuples(st.sampled_from(["q0", "q1", "q2", "q3", "é4", "北5", "q\u20ac"]),
              st.lists(FILE_TEXT, min_size=1, max_size=3),
              st.none() | FILE_TEXT),
    min_size=1, max_size=7)


@settings(max_examples=150, deadline=None)
@given(FILE_QUESTIONS, st.sampled_from(LANGS), st.booleans())
def test_mlqa_files_are_the_whole_specification(tmp_path_factory, questions, lang, escaped):
    """``qafast.mlqa`` and ``qafast mlqa`` on files (read from their bytes, without a str per
    answer) give the specification's numbers on the loaded objects, to the last bit, and
    list the unanswered questions in order; raw UTF-8 and \\u escapes alike."""
    if not escaped and not _encodable(questions):
        escaped = True
    tmp = tmp_path_factory.mktemp("mlqa_files")
    d, p = _write_case(tmp, questions, escaped)
    data, preds = _ml_case(questions)
    want = ml_spec.mlqa(data, preds, lang)
    _same_bits(qafast.mlqa(str(d), p, lang), want)
    read = qafast.multilingual_eval._mlqa_files(d, p, lang)
    if read is not None:   # (None: an answer holds U+03A3, for the general path)
        version, missing, means = read
        _same_bits(means, want)
        assert version == "1.0"
        assert missing == [q for q, _, _ in questions if q not in preds]


#: Text for MlqaFiles.tokens' one-lookup table: ASCII and wider code points mixed, every kind
#: of whitespace str.split knows (the table makes each a space), lowerings to several code
#: points, Devanagari with its combining marks (Mn, Mc: kept, not punctuation), punctuation of
#: every width, articles, "ال", characters no table lists ahead of them.
TOKENS_TEXT = st.text(alphabet=st.sampled_from(list(
    "aZ_ the an der el của ال北京中ⅰ²\u0301 İßﬁẞ हिन्दी क्षि \u093c\u0903 ।॥,.!?-，。《》‿＿"
    " \t\n\x0b\x0c\r\x1c\x1f\x85\u00a0\u1680\u2000\u2028\u2029\u202f\u3000\x00\ud800")),
    max_size=12)


@settings(max_examples=200, deadline=None)
@given(st.lists(TOKENS_TEXT, min_size=1, max_size=8), st.sampled_from(LANGS), st.booleans())
def test_mlqa_files_tokens_are_the_normalizer(tmp_path_factory, strings, lang, escaped):
    """MlqaFiles.tokens gives, for each interned string, the tokens of the specification's
    normalize_mlqa, ids following first appearance."""
    from qafast import _kernels
    from qafast.multilingual_eval import _mlqa_articles, _mlqa_drop, _mlqa_lowering, _zeros

    questions = [(f"q{i}", [t], t) for i, t in enumerate(strings)]
    if not escaped and not _encodable(questions):
        escaped = True
    d, p = _write_case(tmp_path_factory.mktemp("mlqa_tokens"), questions, escaped)
    files = _kernels.MlqaFiles(d.read_bytes(), p.read_bytes(), json.decoder.scanstring)
    assert files.plain
    n = len(strings)
    pred_sid, ref_off, ref_sid = _zeros("i", n), _zeros("q", n + 1), _zeros("i", n)
    wide = files.intern(pred_sid, ref_off, ref_sid)
    distinct = list(dict.fromkeys(strings))   # the interned strings, in order
    assert files.nstrings == len(distinct)
    low_at, low_off, low_cp, grow, lowered_wide = _mlqa_lowering(wide)
    word_off, words, mode = _mlqa_articles(lang)
    tok_off = _zeros("q", len(distinct) + 1)
    ids = _zeros("i", files.string_cps * grow)
    ntok = files.tokens(low_at, low_off, low_cp, _mlqa_drop(lowered_wide), word_off, words,
                        mode, tok_off, ids)
    norm = spec.get_normalizer(f"mlqa:{lang}")
    seen: dict = {}
    want = []
    for s in distinct:
        want.append([seen.setdefault(t, len(seen)) for t in norm(s).split()])
    assert ntok == sum(map(len, want))
    assert [ids[tok_off[i]:tok_off[i + 1]].tolist() for i in range(len(distinct))] == want


def test_mlqa_files_take_the_last_of_a_repeated_prediction(tmp_path, capsys):
    questions = [("q0", ["the Paris"], "x"), ("q1", ["Berlin"], None), ("q\u00e9", ["Rom"], "Rom")]
    d, p = _write_case(tmp_path, questions, False,
                       extra_preds=', "q0": "paris", "q\\u00e9": "nope", "zz": "Paris"')
    read = qafast.multilingual_eval._mlqa_files(d, p, "en")
    assert read is not None
    version, missing, means = read
    assert missing == ["q1"]
    assert means == {"exact_match": 100.0 / 3, "f1": 100.0 / 3}
    assert cli_main(["mlqa", str(d), str(p), "en"]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out) == means
    assert out.err == "Unanswered question q1 will receive score 0.\n"


def test_mlqa_files_leave_the_rest_to_the_general_path(tmp_path):
    """Files the scans do not take, U+03A3 (whose lowering depends on its neighbours) and a
    predicted question without a gold answer give None: the general path scores or names
    them."""
    mf = qafast.multilingual_eval._mlqa_files
    d, p = _write_case(tmp_path, [("q0", ["ΟΔΟΣ"], "οδος")], False)
    assert mf(d, p, "en") is None
    assert qafast.mlqa(d, p, "en") == ml_spec.mlqa(*_ml_case([("q0", ["ΟΔΟΣ"], "οδος")]), "en")
    d.write_text(json.dumps(squad_data([("q0", [])])), encoding="utf-8")
    p.write_text(json.dumps({"q0": "a"}), encoding="utf-8")
    assert mf(d, p, "en") is None
    with pytest.raises(InputError, match="q0"):
        qafast.mlqa(d, p, "en")
    p.write_text(json.dumps({"q0": 3}), encoding="utf-8")
    assert mf(d, p, "en") is None
    assert mf(tmp_path / "absent.json", p, "en") is None
    d.write_text(json.dumps({"version": "1.0", "data": []}), encoding="utf-8")
    assert mf(d, p, "en") is None


def test_mlqa_files_kernel_checks_its_arguments(tmp_path):
    from qafast import _kernels
    from qafast.io.squad import _SCANSTRING
    from qafast.multilingual_eval import _zeros

    d, p = _write_case(tmp_path, [("q0", ["é b"], "É"), ("q1", ["c"], None)], False)
    files = _kernels.MlqaFiles(d.read_bytes(), p.read_bytes(), _SCANSTRING)
    assert files.plain and files.nquestions == 2 and files.ngold == 2
    assert files.version == "1.0" and files.has_version
    with pytest.raises(InputError):
        files.tokens(_zeros("i", 0), _zeros("q", 1), _zeros("I", 0), b"", _zeros("q", 1),
                     _zeros("I", 0), 0, _zeros("q", 1), _zeros("i", 0))   # not interned
    with pytest.raises(InputError):
        files.intern(_zeros("i", 1), _zeros("q", 3), _zeros("i", 2))
    pred_sid, ref_off, ref_sid = _zeros("i", 2), _zeros("q", 3), _zeros("i", 2)
    assert files.intern(pred_sid, ref_off, ref_sid) == [0xC9, 0xE9]
    assert pred_sid.tolist() == [0, -1] and ref_sid.tolist() == [1, -1]
    assert files.nstrings == 2 and files.string_cps == 4
    with pytest.raises(InputError):
        files.intern(pred_sid, ref_off, ref_sid)   # once
    tok_off = _zeros("q", 3)
    words = memoryview(bytearray(0)).cast("I")
    with pytest.raises(InputError, match="lowering"):   # É has no entry
        files.tokens(_zeros("i", 0), _zeros("q", 1), _zeros("I", 0), b"", _zeros("q", 1),
                     words, 0, tok_off, _zeros("i", 4))
    low_at = _zeros("i", 0xEA)
    for c in range(0xEA):
        low_at[c] = -1
    low_at[0xC9], low_at[0xE9] = 0, 1
    low_off, low_cp = _zeros("q", 3), _zeros("I", 2)
    low_off[1], low_off[2] = 1, 2
    low_cp[0] = low_cp[1] = 0xE9
    low_at[0] = 5
    with pytest.raises(InputError, match="out of range"):
        files.tokens(low_at, low_off, low_cp, b"", _zeros("q", 1), words, 0, tok_off,
                     _zeros("i", 4))
    low_at[0] = -1
    assert files.tokens(low_at, low_off, low_cp, b"", _zeros("q", 1), words, 0, tok_off,
                        _zeros("i", 1)) == -1   # no room
    ids = _zeros("i", 4)
    assert files.tokens(low_at, low_off, low_cp, b"", _zeros("q", 1), words, 0, tok_off,
                        ids) == 3
    assert tok_off.tolist() == [0, 1, 3] and ids.tolist()[:3] == [0, 0, 1]
    assert files.missing_ids() == ["q1"]
    bad = _kernels.MlqaFiles(b"[1]", p.read_bytes(), _SCANSTRING)
    assert not bad.plain
