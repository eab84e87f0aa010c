"""qafast.tydi: the TyDi QA primary tasks, against the plain-Python specification and the
official script's recorded output (tests/data/tydi, written by tydi_eval.py)."""

import contextlib
import io
import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import qafast
from qafast import tydi_eval as ty
from qafast.cli import main
from qafast.errors import FormatError, InputError, InputTypeError, QafastError
from qafast.reference import tydi as spec

DATA = Path(__file__).parent / "data" / "tydi"


def ann(index=0, start=-1, end=-1, yes_no="NONE"):
    return {"passage_answer": {"candidate_index": index},
            "minimal_answer": {"plaintext_start_byte": start, "plaintext_end_byte": end},
            "yes_no_answer": yes_no}


def example(eid, anns, lang="arabic"):
    return {"example_id": eid, "language": lang, "question_text": "?",
            "document_plaintext": "نص", "annotations": anns}


def pred(eid, lang="arabic", index=0, span=(-1, -1), yes_no=None, pscore=1.0, mscore=1.0):
    p = {"example_id": eid, "language": lang, "passage_answer_index": index,
         "minimal_answer": {"start_byte_offset": span[0], "end_byte_offset": span[1]},
         "passage_answer_score": pscore, "minimal_answer_score": mscore}
    if yes_no is not None:
        p["yes_no_answer"] = yes_no
    return p


def run_cli(*args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["tydi", *args])
    return rc, out.getvalue(), err.getvalue()


# ------------------------------------------------------------------------------------------
# the official script's output, recorded
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("gold, preds, expected, extra", [
    ("gold.jsonl.gz", "pred.jsonl", "expected.txt", []),
    ("small_gold.jsonl", "small_pred.jsonl", "small_expected.txt", []),
    ("small_gold.jsonl", "small_pred.jsonl", "small_expected_pretty.txt", ["--pretty_print"]),
])
def test_cli_prints_what_the_script_prints(gold, preds, expected, extra):
    rc, out, _ = run_cli(f"--gold_path={DATA / gold}", "--predictions_path", str(DATA / preds),
                         *extra)
    assert rc == 0
    assert out == (DATA / expected).read_text(encoding="utf-8")


def test_api_returns_the_printed_numbers():
    lines = (DATA / "expected.txt").read_text(encoding="utf-8").splitlines()
    gold, preds = DATA / "gold.jsonl.gz", DATA / "pred.jsonl"
    assert qafast.tydi(gold, preds) == json.loads(lines[-1])
    printed = [json.loads(x) for x in lines if x.startswith('{"passage-')]
    by_lang = qafast.tydi_by_language(gold, preds)
    assert list(by_lang.values()) == printed
    names = [x.split(" & ")[1] for x in lines if x.startswith("Passage & ")]
    assert list(by_lang) == names


def test_pretty_tables_print_thresholds_the_script_cannot_format():
    # no prediction reaches precision 0.9: the script fails formatting None; qafast prints it
    gold = [example(1, [ann(0)] * 3, "thai")]
    preds = [pred(1, "thai", index=1)]
    rows = ty.tydi_by_language(gold, preds)["thai"]
    assert rows["passage-recall-at-precision>=0.9"] == 0
    lines = ty.report_lines(ty._Evaluation(gold, preds, 2, 2), pretty=True)
    assert "R@P=0.9: 0.00% (actual p=0.00%, score threshold=None)" in lines


# ------------------------------------------------------------------------------------------
# rules, worked by hand
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("gold, predicted, expected", [
    ((0, 10), (0, 10), (1.0, 1.0, 1.0)),
    ((0, 10), (5, 15), (0.5, 0.5, 0.5)),
    ((0, 10), (10, 20), (0.0, 0.0, 0)),   # touching spans share no byte
    ((4, 8), (0, 16), (0.25, 1.0, 0.4)),
    ((3, 3), (3, 3), (0.0, 0.0, 0)),
])
def test_span_scores(gold, predicted, expected):
    assert spec.span_scores(gold, predicted) == expected


def test_empty_span_inside_another_is_an_error_as_in_the_script():
    with pytest.raises(spec.SpanError):
        spec.span_scores((0, 10), (5, 5))
    gold = [example("e", [ann(0, 0, 10)] * 2)]
    with pytest.raises(InputError, match="'e'.*overlap"):
        qafast.tydi(gold, [pred("e", span=(5, 5))])


def test_offsets_count_bytes_not_characters():
    # "日本" is 6 bytes; a prediction of its first byte-half shares 3 of the gold's 6 bytes,
    # whether or not the offsets fall inside a character
    gold = [example(1, [ann(0, 0, 6)] * 3, "japanese")]
    q = qafast.tydi_questions(gold, [pred(1, "japanese", span=(1, 4))])
    assert q["minimal_precision"].tolist() == [1.0] and q["minimal_recall"].tolist() == [0.5]


def test_non_null_thresholds_count_annotators():
    anns = [ann(0, 0, 4), ann(-1), ann(-1)]
    gold = [example(1, anns)]
    one = qafast.tydi_questions(gold, [pred(1, index=0, span=(0, 4))],
                                passage_non_null_threshold=1, minimal_non_null_threshold=1)
    two = qafast.tydi_questions(gold, [pred(1, index=0, span=(0, 4))])
    assert one["passage_has_gold"].tolist() == [True] and one["minimal_f1"].tolist() == [1.0]
    assert two["passage_has_gold"].tolist() == [False] and two["minimal_f1"].tolist() == [0.0]


def test_yes_no_answers_match_any_annotator():
    gold = [example(1, [ann(0, yes_no="NO"), ann(0, yes_no="YES"), ann(0)])]
    q = qafast.tydi_questions(gold, [pred(1, yes_no="yes")])
    assert q["minimal_has_gold"].tolist() == [True]
    assert q["minimal_f1"].tolist() == [1.0]
    q = qafast.tydi_questions(gold, [pred(1, yes_no="none", span=(0, 2))])
    assert q["minimal_f1"].tolist() == [0.0]


def test_missing_prediction_counts_as_predicted_when_gold_has_no_answer():
    gold = [example(1, [ann(-1)] * 3), example(2, [ann(0, 0, 3)] * 3)]
    q = qafast.tydi_questions(gold, [pred(2, index=0, span=(0, 3))])
    assert q["passage_has_prediction"].tolist() == [True, True]
    # the unpredicted example's score 0 sorts before the prediction's -1
    m = qafast.tydi_by_language(gold, [pred(2, index=0, span=(0, 3), pscore=-1)])["arabic"]
    assert m["passage-best-threshold-precision"] == 0.5
    assert m["passage-best-threshold"] == -1.0


def test_english_is_left_out_of_the_macro_average_and_unpredicted_languages_too():
    gold = [example(1, [ann(0)] * 3, "english"), example(2, [ann(0)] * 3, "thai"),
            example(3, [ann(0)] * 3, "korean")]
    preds = [pred(1, "english", index=0), pred(2, "thai", index=1)]
    assert list(qafast.tydi_by_language(gold, preds)) == ["english", "thai"]
    assert qafast.tydi(gold, preds)["avg_passage_f1"] == 0.0
    preds[1]["passage_answer_index"] = 0
    assert qafast.tydi(gold, preds)["avg_passage_f1"] == 1.0


def test_tied_scores_share_a_threshold_keyed_by_the_first_example():
    gold = [example(i, [ann(0)] * 3) for i in range(3)]
    preds = [pred(0, index=0, pscore=2.0), pred(1, index=5, pscore=2.0)]
    m = qafast.tydi_by_language(gold, preds)["arabic"]
    assert m["passage-best-threshold-precision"] == 0.5
    # the unpredicted example's score is the int 0, a key json prints as 0
    gold = [example(i, [ann(-1)] * 3) for i in range(2)]
    m = qafast.tydi_by_language(gold, [pred(0, index=-1, pscore=0.0)])["arabic"]
    assert m["passage-best-threshold"] == 0.0


def test_repeated_ids_keep_the_last_record():
    gold = [example(1, [ann(3)] * 3), example(1, [ann(0)] * 3)]
    preds = [pred(1, index=3), pred(1, index=0)]
    q = qafast.tydi_questions(gold, preds)
    assert q["example_id"] == [1] and q["passage_correct"].tolist() == [True]


def test_a_prediction_without_minimal_answer_reuses_the_previous_one():
    gold = [example(1, [ann(0, 0, 4)] * 3), example(2, [ann(0, 0, 4)] * 3)]
    second = pred(2)
    del second["minimal_answer"]
    q = qafast.tydi_questions(gold, [pred(1, span=(0, 4)), second])
    assert q["minimal_f1"].tolist() == [1.0, 1.0]


# ------------------------------------------------------------------------------------------
# bad input: a qafast error where the script fails
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("gold, preds, match", [
    ([example(1, [])], [pred(1)], "annotations is empty"),
    ([example(1, [ann(0, 5, -1)])], [pred(1)], "one offset negative"),
    ([example(1, [ann(0, 5, 2)])], [pred(1)], "starts after it ends"),
    ([example(1, [ann(0)])], [pred(1, yes_no="maybe")], "is not yes, no or none"),
    ([example(1, [ann(0)])], [pred(1, yes_no="yes", span=(0, 2))], "yes/no answer with"),
    ([example(1, [ann("0")])], [pred(1)], "candidate_index must be a number"),
    ([example(1, [ann(0)])], [{"example_id": 1, "language": "arabic",
                               "passage_answer_score": 1, "minimal_answer_score": 1}],
     "no earlier prediction"),
    ([example(1, [ann(0)])], [pred(1, pscore="high")], "passage_answer_score 'high'"),
    ([example([1], [ann(0)])], [pred(1)], "example_id must be a string or number"),
    ([{"example_id": 1, "annotations": [ann(0)]}], [pred(1)], "no 'language' field"),
    ([example(1, [ann(0)]), example("a", [ann(0)])], [pred(2)], "mix types"),
])
def test_bad_input_names_the_record(gold, preds, match):
    with pytest.raises(QafastError, match=match):
        qafast.tydi(gold, preds)


def test_bad_files_name_path_and_line(tmp_path):
    g = tmp_path / "g.jsonl"
    g.write_text(json.dumps(example(1, [ann(0)])) + "\n\n", encoding="utf-8")
    p = tmp_path / "p.jsonl"
    p.write_text(json.dumps(pred(1)) + "\n", encoding="utf-8")
    with pytest.raises(FormatError) as e:
        qafast.tydi(g, p)
    assert e.value.line == 2 and e.value.path == str(g)
    rc, out, err = run_cli("--gold_path", str(g), "--predictions_path", str(p))
    assert rc == 2 and out == "" and err.startswith("qafast tydi:")


def test_options_are_checked():
    with pytest.raises(InputTypeError):
        qafast.tydi([], [], passage_non_null_threshold=1.5)
    with pytest.raises(InputTypeError):
        qafast.tydi({"example_id": 1}, [])
    rc, _, err = run_cli("--gold_path", "g", "--predictions_path", "p", "--cache_gold_data")
    assert rc == 2 and "cache_gold_data" in err


# ------------------------------------------------------------------------------------------
# the compiled path against the specification
# ------------------------------------------------------------------------------------------

SCORES = st.sampled_from([0, 0.0, -0.0, 1.0, 1.0, 2.5, -3, 1e308, math.inf, 0.1, 1 / 3,
                          float("nan")])
OFFSET = st.integers(0, 12)


@st.composite
def spans(draw, null=0.3):
    if draw(st.floats(0, 1)) < null:
        return (-1, -1)
    s = draw(OFFSET)
    return (s, s + draw(st.integers(1, 6)))


@st.composite
def cases(draw):
    n = draw(st.integers(0, 12))
    langs = draw(st.lists(st.sampled_from(["english", "thai", "korean", "klingon", "arabic",
                                           "swahili", "telugu"]),
                          min_size=1, max_size=5))
    ids = draw(st.lists(st.one_of(st.integers(-3, 40), st.text(max_size=3)), min_size=n,
                        max_size=n, unique=True).filter(
        lambda xs: len({type(x) for x in xs}) <= 1))
    gold, preds = [], []
    for eid in ids:
        lang = draw(st.sampled_from(langs))
        anns = []
        for _ in range(draw(st.integers(1, 4))):
            s = draw(spans())
            yn = draw(st.sampled_from(["NONE", "NONE", "YES", "no", "Maybe"]))
            anns.append(ann(draw(st.integers(-1, 3)), *s, yn))
        gold.append(example(eid, anns, lang))
        if draw(st.booleans()) or draw(st.booleans()):
            s = draw(spans(null=0.4))
            yn = draw(st.sampled_from(["yes", "NO"])) if s == (-1, -1) and draw(
                st.booleans()) else None
            plang = lang if draw(st.integers(0, 5)) else draw(st.sampled_from(langs))
            preds.append(pred(eid, plang, draw(st.integers(-1, 3)), s, yn, draw(SCORES),
                              draw(SCORES)))
    return gold, preds


def _spec_inputs(gold, preds):
    g = {x["example_id"]: (x["language"], [
        (a["passage_answer"]["candidate_index"], a["minimal_answer"]["plaintext_start_byte"],
         a["minimal_answer"]["plaintext_end_byte"], a["yes_no_answer"].lower())
        for a in x["annotations"]]) for x in gold}
    p = {x["example_id"]: (x["language"], x["passage_answer_index"],
                           x["minimal_answer"]["start_byte_offset"],
                           x["minimal_answer"]["end_byte_offset"],
                           x.get("yes_no_answer", "none").lower(),
                           float(x["passage_answer_score"]), float(x["minimal_answer_score"]))
         for x in preds}
    return g, p


def _same(a, b):
    """Equal values of equal types, NaN equal to NaN (json.dumps prints them alike)."""
    return json.dumps(a) == json.dumps(b)


@settings(max_examples=150, deadline=None)
@given(cases(), st.integers(0, 3), st.integers(0, 3))
def test_compiled_path_equals_the_specification(case, pt, mt):
    gold, preds = case
    g, p = _spec_inputs(gold, preds)
    try:
        stats = spec.by_language(g, p, pt, mt)
    except spec.SpanError:
        with pytest.raises(InputError):
            ty.tydi_by_language(gold, preds, passage_non_null_threshold=pt,
                                minimal_non_null_threshold=mt)
        return
    expected = {lang: spec.metrics(*s) for lang, s in stats.items()}
    got = ty.tydi_by_language(gold, preds, passage_non_null_threshold=pt,
                              minimal_non_null_threshold=mt)
    assert _same(got, expected)
    assert _same(ty.tydi(gold, preds, passage_non_null_threshold=pt,
                         minimal_non_null_threshold=mt), spec.aggregate(stats))


SWEEP_SCORES = st.sampled_from([0.0, -0.0, 1.0, 2.5, -3.0, 1e308, -math.inf, math.inf,
                                0.1, 1 / 3, 5e-324])


@st.composite
def sweep_cases(draw):
    """Examples of one language as the sweep sees them: flags and minimal F1 per gold row,
    scores per prediction row (many ties, zeros of both signs, rows without a prediction)."""
    n = draw(st.integers(0, 40))
    flags = np.array([[draw(st.booleans()) for _ in range(5)] for _ in range(n)],
                     dtype=np.uint8).reshape(n, 5)
    f1 = [draw(st.sampled_from([0.0, 1.0, 0.5, 1 / 3, 2 / 3, 0.1, 0.7])) for _ in range(n)]
    prf = np.zeros((n, 3))
    prf[:, 2] = f1
    gold_row = np.array(draw(st.permutations(range(n))), dtype=np.int64)
    m = draw(st.integers(0, n))
    pred_row = np.array([draw(st.integers(-1, m - 1)) if m else -1 for _ in range(n)],
                        dtype=np.int64)
    pscore = np.array([draw(SWEEP_SCORES) for _ in range(m)])
    mscore = np.array([draw(SWEEP_SCORES) for _ in range(m)])
    return flags, prf, gold_row, pred_row, pscore, mscore


@settings(max_examples=300, deadline=None)
@given(sweep_cases())
def test_the_language_sweep_kernel_equals_the_specification(case):
    from types import SimpleNamespace

    flags, prf, gold_row, pred_row, pscore, mscore = case
    scored = SimpleNamespace(gold_row=gold_row, pred_row=pred_row)
    preds = SimpleNamespace(pscore=pscore, mscore=mscore)
    assert ty._Scored._sweep_in_c(scored, (flags, prf, -1), preds)
    for name, cols, value, scores in (("passage", 0, flags[:, 2].tolist(), pscore),
                                      ("minimal", 3, prf[:, 2].tolist(), mscore)):
        stats = [(bool(flags[g, cols]), bool(flags[g, cols + 1]), value[g],
                  0 if q < 0 else float(scores[q]))
                 for g, q in zip(gold_row.tolist(), pred_row.tolist())]
        stats.sort(key=lambda x: x[-1], reverse=True)
        assert _same(getattr(scored, name), spec.pr_curve(stats)), name


def test_the_language_sweep_kernel_refuses_nan_and_bad_rows():
    one = np.zeros(1, dtype=np.int64)
    args = [one, one, np.zeros((1, 5), np.uint8), np.zeros((1, 3)), np.array([np.nan]),
            np.zeros(1), np.array([0.5]), np.zeros((2, 1), np.int64), np.zeros((2, 1), np.int64),
            np.zeros(1, np.int64), np.zeros((2, 3)), np.zeros(2, np.int64),
            np.zeros((2, 1, 2)), np.zeros((2, 1), np.int64)]
    assert qafast._kernels.tydi_language_sweeps(*args) == -1
    args[1] = np.array([1], dtype=np.int64)  # a prediction row past the scores
    assert qafast._kernels.tydi_language_sweeps(*args) == -2
    args[7] = np.zeros((2, 2), np.int64)
    with pytest.raises(ValueError):
        qafast._kernels.tydi_language_sweeps(*args)


def test_id_kinds():
    kinds = qafast._kernels.tydi_id_kinds
    assert kinds([1, "a", 1.5, True, None]) == 31
    assert kinds({1: 0, 2: 1}) == 1 and kinds([]) == 0
    with pytest.raises(TypeError):
        kinds((1,))


@settings(max_examples=100, deadline=None)
@given(cases())
def test_questions_equal_the_specification(case):
    gold, preds = case
    g, p = _spec_inputs(gold, preds)
    try:
        q = ty.tydi_questions(gold, preds)
    except InputError:
        return
    for k, eid in enumerate(q["example_id"]):
        lang, anns = g[eid]
        mine = p.get(eid)
        if mine is not None and mine[0] != lang:
            mine = None
        hg, hp, correct, _ = spec.passage_stat(anns, mine, 2)
        mg, mp, prf, _ = spec.minimal_stat(anns, mine, 2)
        assert (q["passage_has_gold"][k], q["passage_has_prediction"][k],
                q["passage_correct"][k]) == (hg, hp, correct)
        assert (q["minimal_has_gold"][k], q["minimal_has_prediction"][k]) == (mg, mp)
        assert tuple(float(q[f"minimal_{x}"][k]) for x in ("precision", "recall", "f1")) == \
            tuple(float(x) for x in prf)


def test_questions_arrays_line_up():
    q = qafast.tydi_questions(DATA / "gold.jsonl.gz", DATA / "pred.jsonl")
    n = len(q["example_id"])
    assert all(len(v) == n for v in q.values())
    assert isinstance(q["minimal_f1"], np.ndarray)


def test_constants_agree_with_the_specification():
    assert ty.LANGUAGES == spec.LANGUAGES and ty._TARGET_VALUES == spec.TARGETS


@settings(max_examples=100, deadline=None)
@given(cases())
def test_the_c_readers_equal_the_python_readers(case):
    gold, preds = case
    fast_g, fast_p = ty._Gold(gold), ty._Predictions(preds)
    slow_g, slow_p = object.__new__(ty._Gold), object.__new__(ty._Predictions)
    slow_g._read(None, gold)
    slow_p._read(None, preds)
    for a, b in ((fast_g, slow_g), (fast_p, slow_p)):
        for name in ("index", "start", "end", "yes_no", "lang_code"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert fast_g.ids == slow_g.ids and fast_g.languages == slow_g.languages
    np.testing.assert_array_equal(fast_g.ptr, slow_g.ptr)
    assert fast_p.row_of == slow_p.row_of and fast_p.languages == slow_p.languages
    assert json.dumps(fast_p.passage_scores) == json.dumps(slow_p.passage_scores)
    np.testing.assert_array_equal(fast_p.pscore, slow_p.pscore)


def _gold_both_ways(data: bytes):
    """_Gold read by the scanner and by json.loads line by line (the script's reader)."""
    def read(fn):
        try:
            return fn()
        except (QafastError, ValueError) as e:
            return type(e)
    lines = data.split(b"\n")
    if lines and not lines[-1]:
        lines.pop()
    scanned = read(lambda: ty._Gold._from_lines(data))
    loaded = read(lambda: ty._Gold([json.loads(x) for x in lines]))
    return scanned, loaded


def _same_gold(a, b):
    if isinstance(a, type) or isinstance(b, type):
        return isinstance(a, type) and isinstance(b, type)
    return (a.ids == b.ids and a.languages == b.languages
            and all(np.array_equal(getattr(a, k), getattr(b, k))
                    for k in ("ptr", "index", "start", "end", "yes_no", "lang_code")))


JSON_LEAF = st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20),
                      st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=5))
JSON = st.recursive(JSON_LEAF, lambda kids: st.one_of(
    st.lists(kids, max_size=3), st.dictionaries(st.text(max_size=4), kids, max_size=3)),
    max_leaves=6)


@settings(max_examples=200, deadline=None)
@given(cases(), JSON, st.booleans(), st.integers(0, 10**6), st.integers(0, 255),
       st.sampled_from(["keep", "mutate", "insert", "delete"]))
def test_the_gold_scanner_reads_as_json_loads(case, extra, ascii_, where, byte, how):
    gold, _ = case
    lines = []
    for k, g in enumerate(gold):
        g = dict(g, extra=extra) if k % 2 else g
        lines.append(json.dumps(g, ensure_ascii=ascii_).encode())
    data = b"\n".join(lines) + b"\n"
    if data.strip() and how != "keep":
        i = where % len(data)
        if how == "mutate":
            data = data[:i] + bytes([byte]) + data[i + 1:]
        elif how == "insert":
            data = data[:i] + bytes([byte]) + data[i:]
        else:
            data = data[:i] + data[i + 1:]
    scanned, loaded = _gold_both_ways(data)
    assert _same_gold(scanned, loaded)


@settings(max_examples=200, deadline=None)
@given(cases(), JSON, st.booleans(), st.integers(0, 10**6), st.integers(0, 255),
       st.sampled_from(["keep", "keep", "mutate", "insert", "delete"]))
def test_the_prediction_scanner_reads_as_json_loads(case, extra, ascii_, where, byte, how):
    _, preds = case
    lines = []
    for k, p in enumerate(preds):
        p = dict(p, extra=extra) if k % 2 else dict(p)
        if k % 3 == 1:
            del p["minimal_answer"]  # takes the previous line's span
            p.pop("yes_no_answer", None)
        lines.append(json.dumps(p, ensure_ascii=ascii_).encode())
    data = b"\n".join(lines) + b"\n"
    if data.strip() and how != "keep":
        i = where % len(data)
        if how == "mutate":
            data = data[:i] + bytes([byte]) + data[i + 1:]
        elif how == "insert":
            data = data[:i] + bytes([byte]) + data[i:]
        else:
            data = data[:i] + data[i + 1:]

    def read(fn):
        try:
            return fn()
        except (QafastError, ValueError) as e:
            return type(e)

    def plain():
        text = data.decode("utf-8")
        records = [json.loads(x) for x in io.StringIO(text, newline=None)]
        p = object.__new__(ty._Predictions)
        p._read(None, records)
        return p

    scanned = read(lambda: ty._Predictions._from_lines(data))
    loaded = read(plain)
    if isinstance(scanned, type) or isinstance(loaded, type):
        assert isinstance(scanned, type) and isinstance(loaded, type)
        return
    assert scanned.row_of == loaded.row_of and scanned.languages == loaded.languages
    for name in ("index", "start", "end", "yes_no", "pscore", "mscore", "lang_code"):
        np.testing.assert_array_equal(getattr(scanned, name), getattr(loaded, name))
    assert json.dumps(scanned.passage_scores) == json.dumps(loaded.passage_scores)
