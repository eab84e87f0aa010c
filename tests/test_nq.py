"""qafast.nq: Natural Questions long and short answers, against the plain-Python specification
and the official script's recorded output (tests/data/nq, written by nq_eval.py)."""

import contextlib
import gzip
import io
import json
import threading
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import qafast
from qafast import nq_eval
from qafast.cli import main
from qafast.errors import FormatError, InputError, InputTypeError, QafastError
from qafast.reference import nq as spec

DATA = Path(__file__).parent / "data" / "nq"
NULL = (-1, -1, -1, -1)


def span(sb=-1, eb=-1, st=-1, et=-1):
    return {"start_byte": sb, "end_byte": eb, "start_token": st, "end_token": et}


def ann(long=None, shorts=(), yes_no="NONE"):
    return {"long_answer": long or span(), "short_answers": list(shorts), "yes_no_answer": yes_no}


def pred(eid, long=None, shorts=None, yes_no=None, ls=1.0, ss=1.0):
    p = {"example_id": eid, "long_answer_score": ls, "short_answers_score": ss}
    if long is not None:
        p["long_answer"] = long
    if shorts is not None:
        p["short_answers"] = list(shorts)
    if yes_no is not None:
        p["yes_no_answer"] = yes_no
    return p


def run_cli(*args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["nq", *args])
    return rc, out.getvalue(), err.getvalue()


# --------------------------------------------------------------------------------------------
# The official script's recorded output
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("flags", "expected"), [((), "expected.txt"),
                                                 (("--pretty_print",), "expected_pretty.txt")])
def test_cli_prints_what_the_script_prints(flags, expected):
    rc, out, _ = run_cli(f"--gold_path={DATA / 'gold.jsonl.gz'}",
                         f"--predictions_path={DATA / 'predictions.json'}", *flags)
    assert rc == 0
    assert out == (DATA / expected).read_text()


def test_function_returns_the_scripts_json_as_floats():
    got = qafast.nq(DATA / "gold.jsonl.gz", DATA / "predictions.json")
    assert got == json.loads((DATA / "expected.txt").read_text())
    assert all(type(v) is float for v in got.values())


def test_glob_of_shards_and_plain_jsonl(tmp_path):
    lines = gzip.decompress((DATA / "gold.jsonl.gz").read_bytes()).splitlines(keepends=True)
    (tmp_path / "a.jsonl.gz").write_bytes(gzip.compress(b"".join(lines[:25])))
    (tmp_path / "b.jsonl").write_bytes(b"".join(lines[25:]))
    want = qafast.nq(DATA / "gold.jsonl.gz", DATA / "predictions.json")
    assert qafast.nq(str(tmp_path / "*"), DATA / "predictions.json") == want


# --------------------------------------------------------------------------------------------
# qafast == the specification, bit for bit
# --------------------------------------------------------------------------------------------

def _spans(draw, n_max):
    out = []
    for _ in range(draw(st.integers(0, n_max))):
        kind = draw(st.sampled_from(["null", "byte", "token", "both", "both"]))
        sb, st_ = draw(st.integers(0, 4)), draw(st.integers(0, 3))
        eb, et = sb + draw(st.integers(1, 2)), st_ + draw(st.integers(1, 2))
        out.append((sb if kind in ("byte", "both") else -1, eb if kind in ("byte", "both") else -1,
                    st_ if kind in ("token", "both") else -1, et if kind in ("token", "both")
                    else -1))
    return out


def _as_dict(s):
    return span(*s)


SCORES = st.sampled_from([0, 0.0, -0.0, 1, 1.0, 2.5, -1, 1 / 3, 0.1, float("inf"),
                          -float("inf"), 7])


@st.composite
def cases(draw):
    ids = draw(st.lists(st.one_of(st.integers(-3, 30), st.text(max_size=3)), max_size=14,
                        unique=True))
    gold, preds = [], []
    for i in ids:
        anns = []
        for _ in range(draw(st.sampled_from([0, 1, 2, 3, 5, 5]))):
            yn = draw(st.sampled_from(["NONE", "YES", "NO", "none", "Yes"]))
            anns.append(ann(_as_dict((_spans(draw, 1) or [NULL])[0]),
                            [_as_dict(s) for s in _spans(draw, 3)], yn))
        gold.append({"example_id": i, "annotations": anns})
        if anns and draw(st.booleans()):
            a = draw(st.sampled_from(anns))
            yn = a["yes_no_answer"]
            shorts = [] if yn.lower() != "none" else a["short_answers"]
            preds.append(pred(i, a["long_answer"], shorts, yn, draw(SCORES), draw(SCORES)))
        else:
            shorts = [_as_dict(s) for s in _spans(draw, 2)]
            yn = draw(st.sampled_from([None, "NONE", "YES", "no"]))
            if yn not in (None, "NONE"):
                shorts = []
            preds.append(pred(i, _as_dict((_spans(draw, 1) or [NULL])[0])
                              if draw(st.booleans()) else None,
                              shorts if draw(st.booleans()) else None, yn,
                              draw(SCORES), draw(SCORES)))
    draw(st.randoms()).shuffle(preds)
    return gold, preds, draw(st.integers(0, 3)), draw(st.integers(0, 3))


def _spec_input(gold, preds):
    def t(d):
        return (d["start_byte"], d["end_byte"], d["start_token"], d["end_token"])

    g = {e["example_id"]: [(t(a["long_answer"]), tuple(t(s) for s in a["short_answers"]),
                            a["yes_no_answer"].lower()) for a in e["annotations"]] for e in gold}
    p = {x["example_id"]: (t(x["long_answer"]) if "long_answer" in x else NULL,
                           tuple(t(s) for s in x.get("short_answers", ())),
                           x.get("yes_no_answer", "none").lower(),
                           x["long_answer_score"], x["short_answers_score"]) for x in preds}
    return g, p


def _typed(d):
    return {k: (type(v).__name__, repr(v)) for k, v in d.items()}


@settings(max_examples=80, deadline=None)
@given(cases())
def test_qafast_is_the_specification(case):
    gold, preds, lt, st_ = case
    g, p = _spec_input(gold, preds)
    long_stats, short_stats = spec.score_examples(g, p, lt, st_)
    scored = nq_eval._evaluate(gold, preds, lt, st_)
    assert _typed(scored.metrics()) == _typed(spec.metrics(long_stats, short_stats))
    assert _typed(scored.final_f1()) == _typed(spec.final_f1(long_stats, short_stats))
    per = qafast.nq_examples(gold, preds, long_non_null_threshold=lt,
                             short_non_null_threshold=st_)
    for example_id, d in per.items():
        assert (d["long-has-gold"], d["long-has-prediction"], d["long-correct"],
                d["long-score"]) == spec.long_stat(g[example_id], p[example_id], lt)
        assert (d["short-has-gold"], d["short-has-prediction"], d["short-correct"],
                d["short-score"]) == spec.short_stat(g[example_id], p[example_id], st_)


# --------------------------------------------------------------------------------------------
# Rules, each as a small case
# --------------------------------------------------------------------------------------------

def test_two_annotators_make_a_gold_answer_and_any_one_matches():
    a, b = span(0, 5, 0, 1), span(5, 9, 1, 2)
    gold = [{"example_id": 1, "annotations": [ann(a), ann(b), ann()]},
            {"example_id": 2, "annotations": [ann(a), ann(), ann()]}]
    per = qafast.nq_examples(gold, [pred(1, b), pred(2, a)])
    assert per[1]["long-has-gold"] and per[1]["long-correct"]
    assert not per[2]["long-has-gold"] and not per[2]["long-correct"]
    assert per[2]["long-has-prediction"]


def test_bytes_or_tokens_either_make_spans_equal():
    g = span(0, 5, 0, 1)
    gold = [{"example_id": i, "annotations": [ann(g)] * 2} for i in range(3)]
    per = qafast.nq_examples(gold, [pred(0, span(0, 5, 7, 8)), pred(1, span(-1, -1, 0, 1)),
                                    pred(2, span(0, 6, 0, 2))])
    assert [per[i]["long-correct"] for i in range(3)] == [True, True, False]


def test_short_answers_compare_as_sets_and_yes_no_by_label():
    s1, s2 = span(1, 2, 1, 2), span(3, 4, 3, 4)
    gold = [{"example_id": 0, "annotations": [ann(shorts=[s1, s2]), ann(yes_no="YES")]},
            {"example_id": 1, "annotations": [ann(shorts=[s1, s2]), ann(yes_no="YES")]},
            {"example_id": 2, "annotations": [ann(shorts=[s1, s2]), ann(yes_no="YES")]}]
    per = qafast.nq_examples(gold, [pred(0, shorts=[s2, s1, s2]), pred(1, shorts=[s1]),
                                    pred(2, yes_no="yes")])
    assert [per[i]["short-correct"] for i in range(3)] == [True, False, True]


def test_example_without_annotations_has_no_gold_answer():
    # the official script fails on one (docs/known-differences.md)
    per = qafast.nq_examples([{"example_id": 5, "annotations": []}], [pred(5, span(0, 1))])
    assert not per[5]["long-has-gold"] and not per[5]["short-has-gold"]


def test_ties_take_the_last_point_and_the_first_score_object():
    a = span(0, 5)
    gold = [{"example_id": i, "annotations": [ann(a)] * 2} for i in range(4)]
    preds = [pred(0, a, ls=3), pred(1, a, ls=3.0), pred(2, span(6, 7), ls=1),
             pred(3, span(6, 7), ls=0)]
    m = qafast.nq(gold, preds)
    assert m["long-best-threshold"] == 3.0 and m["long-best-threshold-f1"] == 2 * 0.5 / 1.5
    assert m["long-recall-at-precision>=0.9"] == 0.5
    _, out, _ = run_cli_data(gold, preds)
    assert '"long-best-threshold": 3,' in out  # ids 0, 1 in set order: the int 3 is seen first
    worse = [pred(0, span(6, 7), ls=5), *preds[1:]]
    assert qafast.nq(gold, worse)["long-precision-at-precision>=0.9"] == 0.0  # the script's 0


def test_pretty_print_formats_int_and_missing_thresholds_with_str():
    gold = [{"example_id": 1, "annotations": [ann(span(0, 1))] * 2}]
    rc, out, _ = run_cli_data(gold, [pred(1, span(0, 1), ls=3, ss=0)], "--pretty_print")
    assert rc == 0
    assert "Optimal threshold: 3\n" in out
    assert "R@P=0.9: 0.00% (actual p=0.00%, score threshold=None)" in out


def run_cli_data(gold, preds, *flags):
    import tempfile

    d = Path(tempfile.mkdtemp())
    (d / "g.jsonl.gz").write_bytes(gzip.compress(
        "".join(json.dumps(g) + "\n" for g in gold).encode()))
    (d / "p.json").write_text(json.dumps({"predictions": preds}))
    return run_cli(f"--gold_path={d / 'g.jsonl.gz'}", f"--predictions_path={d / 'p.json'}",
                   *flags)


def test_thresholds_flags():
    gold = [{"example_id": 1, "annotations": [ann(span(0, 1)), ann(), ann()]}]
    _, out, _ = run_cli_data(gold, [pred(1, span(0, 1))], "--long_non_null_threshold=1")
    assert json.loads(out)["long-best-threshold-f1"] == 1.0
    assert qafast.nq(gold, [pred(1, span(0, 1))])["long-best-threshold-f1"] == 0.0


def test_cache_gold_data_is_refused():
    rc, out, err = run_cli_data([], [], "--cache_gold_data")
    assert rc == 2 and out == "" and "cache_gold_data" in err


def test_no_examples_prints_zeros():
    rc, out, _ = run_cli_data([], [])
    assert rc == 0 and json.loads(out)["long-recall-at-precision>=0.5"] == 0
    assert '"long-recall-at-precision>=0.5": 0,' in out  # the script's int 0


# --------------------------------------------------------------------------------------------
# Bad input: a qafast error naming where
# --------------------------------------------------------------------------------------------

GOLD = [{"example_id": 1, "annotations": [ann()]}]


@pytest.mark.parametrize(("bad", "match"), [
    ({"yes_no_answer": "maybe"}, "yes_no_answer 'maybe'"),
    ({"yes_no_answer": "YES", "short_answers": [span(0, 1)]}, "cannot both"),
    ({"long_answer": span(3, 3)}, "does not end after it starts"),
    ({"long_answer": span(3, -1, 0, 1)}, "one byte offset negative"),
    ({"long_answer": span(1.0, 3.0)}, "must be an integer"),
    ({"long_answer_score": float("nan")}, "NaN"),
    ({"long_answer_score": "3"}, "must be a number"),
    ({"long_answer_score": None}, "must be a number"),
])
def test_bad_prediction(bad, match):
    p = pred(1)
    p.update(bad)
    with pytest.raises(InputError, match=match):
        qafast.nq(GOLD, [p])


def test_missing_field_and_ids():
    with pytest.raises(InputError, match="short_answers_score"):
        qafast.nq(GOLD, [{"example_id": 1, "long_answer_score": 1}])
    with pytest.raises(InputError, match="have no prediction") as e:
        qafast.nq(GOLD, [pred(2)])
    assert e.value.query == 1


def test_malformed_gold_line_names_file_and_line(tmp_path):
    path = tmp_path / "g.jsonl.gz"
    path.write_bytes(gzip.compress(json.dumps(GOLD[0]).encode() + b"\n{oops\n"))
    with pytest.raises(FormatError) as e:
        qafast.nq(path, [pred(1)])
    assert e.value.line == 2 and str(path) in str(e.value)
    path.write_bytes(gzip.compress(b'{"example_id": 1, "annotations": [{"long_answer": {}}]}'))
    with pytest.raises(FormatError, match="start_byte"):
        qafast.nq(path, [pred(1)])
    with pytest.raises(InputError, match="no gold file"):
        qafast.nq(tmp_path / "nothing*.gz", [pred(1)])


def _canonical(records):
    """Records read as ``{id: [(long span, short spans, yes/no code), ...]}``."""
    a = records.arrays()
    out = {}
    for r, example_id in enumerate(records.ids):
        out[example_id] = [(tuple(a["ann"][k].tolist()),
                            [tuple(x) for x in a["spans"][a["slo"][k]:a["shi"][k]].tolist()],
                            int(a["yn"][k])) for k in range(a["lo"][r], a["hi"][r])]
    return out


@pytest.mark.parametrize("first", [True, False])
def test_a_long_line_with_its_document_reads_as_json_loads_reads_it(tmp_path, first):
    doc = {"document_html": "<p>naïve \"日本語\" a\\b 🎉</p> " * 400,
           "document_tokens": [{"token": "t", "start_byte": i, "end_byte": i + 1}
                               for i in range(300)],
           "question_text": "q"}
    record = {"example_id": 9, "annotations": [ann(span(0, 4, 0, 1))] * 2}
    record = {**doc, **record} if first else {**record, **doc}
    path = tmp_path / "g.jsonl.gz"
    path.write_bytes(gzip.compress(json.dumps(record, ensure_ascii=False).encode() + b"\n"))
    assert len(gzip.decompress(path.read_bytes())) > nq_eval._SCAN_FROM
    assert _canonical(nq_eval._read_gold(path)) == _canonical(nq_eval._read_gold([record]))
    bad = json.dumps(record).replace('"annotations"', '"annotationz"', 1)
    path.write_bytes(gzip.compress(bad.encode()))
    with pytest.raises(FormatError, match="annotations"):
        nq_eval._read_gold(path)


@pytest.mark.parametrize("cores", [1, 2])  # decompressed in the reading thread, or another
def test_gzip_read_piece_by_piece_reads_what_the_whole_file_gives(tmp_path, monkeypatch, cores):
    monkeypatch.setattr(nq_eval, "_usable_cores", lambda: cores)
    records = [{"example_id": i * 7919 - 50, "annotations": [ann(span(i, i + 3, 0, 2),
                                                                 [span(-1, -1, i, i + 1)])] * 3,
                "document_html": "<p>naïve 日本語</p>" * (i % 4)} for i in range(40)]
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode()
    plain = tmp_path / "g.jsonl"
    plain.write_bytes(text)
    want = _canonical(nq_eval._read_gold(plain))
    assert want == _canonical(nq_eval._read_gold(records))
    monkeypatch.setattr(nq_eval, "_PIECE", 37)  # pieces end inside lines and gzip headers
    cut = len(text) // 3
    for name, data in (("one", gzip.compress(text)),
                       ("members", gzip.compress(text[:cut]) + gzip.compress(text[cut:])),
                       ("no last newline", gzip.compress(text[:-1]))):
        path = tmp_path / f"{name}.jsonl.gz"
        path.write_bytes(data)
        assert _canonical(nq_eval._read_gold(path)) == want, name
    whole = gzip.compress(text)
    for name, data in (("truncated", whole[:-20]),
                       ("corrupt", whole[:60] + b"\0" * 40 + whole[100:]),
                       ("checksum", whole[:-8] + bytes([whole[-8] ^ 1]) + whole[-7:])):
        path = tmp_path / f"{name}.jsonl.gz"
        path.write_bytes(data)
        with pytest.raises(FormatError, match="gzip"):
            nq_eval._read_gold(path)


def test_an_interrupt_while_scanning_leaves_no_decompressing_thread(tmp_path, monkeypatch):
    text = "".join(json.dumps({"example_id": i, "annotations": []}) + "\n"
                   for i in range(3000)).encode()
    path = tmp_path / "g.jsonl.gz"
    path.write_bytes(gzip.compress(text))
    monkeypatch.setattr(nq_eval, "_PIECE", 64)
    monkeypatch.setattr(nq_eval, "_usable_cores", lambda: 2)
    feed, calls = nq_eval._GoldScan.feed, []

    def interrupted(self, *args):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return feed(self, *args)

    monkeypatch.setattr(nq_eval._GoldScan, "feed", interrupted)
    before = set(threading.enumerate())
    with pytest.raises(KeyboardInterrupt):
        nq_eval._read_gold(path)
    assert set(threading.enumerate()) == before


def test_many_short_lines_fill_and_grow_the_line_arrays(tmp_path):
    records = [{"example_id": i, "annotations": []} for i in range(5000)]
    text = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records).encode()
    want = _canonical(nq_eval._read_gold(records))
    for name, data in (("g.jsonl", text), ("g.jsonl.gz", gzip.compress(text, 9))):
        (tmp_path / name).write_bytes(data)
        assert _canonical(nq_eval._read_gold(tmp_path / name)) == want


@pytest.mark.parametrize("ids", [
    [3, -2 ** 63, 2 ** 63 - 1, 0, 10 ** 18, -7],
    [3, 2 ** 63, -5],  # beyond int64: json.loads's ids, matched through dicts
    [3, "3", 4.0, -1],
])
def test_integer_ids_are_matched_as_the_dicts_match_them(tmp_path, ids):
    gold = [{"example_id": i, "annotations": [ann(span(k, k + 1, 0, 1))] * 2}
            for k, i in enumerate(ids)]
    preds = [pred(i, span(k, k + 1, 0, 1), ls=float(k), ss=k) for k, i in enumerate(ids)]
    g, p = tmp_path / "g.jsonl.gz", tmp_path / "p.json"
    g.write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in gold).encode()))
    p.write_text(json.dumps({"predictions": preds[::-1]}))
    gold_records, pred_records = nq_eval._read_gold(g), nq_eval._read_predictions(p)
    assert gold_records.ids == ids
    assert [type(i) for i in gold_records.ids] == [type(i) for i in ids]
    by_sorting = nq_eval._int_join(gold_records, pred_records)
    assert (by_sorting is not None) == all(type(i) is int and -2 ** 63 <= i < 2 ** 63
                                           for i in ids)
    ordered, g_rows, p_rows = nq_eval._join_rows(gold_records, pred_records)
    if by_sorting is not None:
        assert by_sorting[0] == ordered
        assert by_sorting[1].tolist() == g_rows.tolist()
        assert by_sorting[2].tolist() == p_rows.tolist()
    assert qafast.nq(g, p) == qafast.nq(gold, preds)
    assert list(qafast.nq_examples(g, p)) == list(qafast.nq_examples(gold, preds))


def test_cli_reports_errors_without_a_traceback(tmp_path):
    rc, out, err = run_cli_data(GOLD, [pred(1, yes_no="perhaps")])
    assert rc != 0 and out == "" and "perhaps" in err and "Traceback" not in err


def test_wrong_types():
    with pytest.raises(InputTypeError):
        qafast.nq({"a": 1}, [])
    with pytest.raises(InputTypeError):
        qafast.nq(GOLD, [pred(1)], long_non_null_threshold=2.0)
    assert issubclass(InputTypeError, QafastError)


def test_duplicate_ids_warn_and_the_later_counts():
    with pytest.warns(UserWarning, match="given again"):
        m = qafast.nq(GOLD, [pred(1, span(0, 1)), pred(1)])
    assert m["long-best-threshold-f1"] == 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        qafast.nq(GOLD, [pred(1)])


# --------------------------------------------------------------------------------------------
# Files read by the compiled scanners == the same records read through json.loads
# --------------------------------------------------------------------------------------------

def _pred_canonical(records):
    a = records.arrays()
    return [(example_id, tuple(a["long"][r].tolist()),
             [tuple(x) for x in a["spans"][a["slo"][r]:a["shi"][r]].tolist()], int(a["yn"][r]),
             [(type(v).__name__, repr(v)) for v in
              (nq_eval._score_object(a["score"][r, k], a["score_int"][r, k]) for k in (0, 1))])
            for r, example_id in enumerate(records.ids)]


def _dumps(record, style, gold=True):
    text = json.dumps(record, ensure_ascii=style % 2 == 0,
                      separators=(",", ":") if style % 3 == 0 else None)
    if style == 4:  # an escaped key: json.loads reads it as example_id, the scanner leaves it
        text = text.replace('"example_id"', '"example\\u005fid"', 1)
    if style == 5:
        text = text.replace('"NONE"', '"NON\\u0045"')
        if gold:  # (a yes/no the script reads as neither yes, no nor none)
            text = text.replace('"YES"', '"Y\u00c9S"')
    if style == 7:  # escaped span and annotation keys: json.loads reads them, the scanner leaves
        text = text.replace('"start_byte"', '"start\\u005fbyte"', 1)
        text = text.replace('"short_answers"', '"short\\u005fanswers"', 1)
    if style == 8:  # keys one byte longer or shorter than those read, which nothing reads
        text = text.replace('"end_token"', '"end_tokens": 0, "end_token"', 1)
        text = text.replace('"start_byte"', '"start_byt": [1], "start_byte"', 1)
        text = text.replace('"long_answer"', '"long_answe": {}, "long_answer"', 1)
        text = text.replace('"yes_no_answer"', '"yes_no_answers": "NO", "yes_no_answer"', 1)
    return text


@settings(max_examples=40, deadline=None)
@given(cases(), st.lists(st.integers(0, 8), min_size=30, max_size=30))
def test_files_read_as_their_records_do(tmp_path_factory, case, styles):
    gold, preds, lt, st_ = case
    d = tmp_path_factory.mktemp("nq")
    lines = []
    for k, g in enumerate(gold):
        if styles[k] == 6:
            g = {"document_html": "<p>naïve \"日本語\" 🎉</p>" * 20, **g, "question_text": "q"}
        lines.append(_dumps(g, styles[k]))
    (d / "g.jsonl.gz").write_bytes(gzip.compress("".join(x + "\n" for x in lines).encode()))
    text = ", ".join(_dumps(p, styles[-1 - k], False) for k, p in enumerate(preds))
    (d / "p.json").write_text('{"version": 1, "predictions": [' + text + "]}", encoding="utf-8")
    want_gold = json.loads("[" + ",".join(lines) + "]")  # (style 5's yes/no as json reads it)
    assert _canonical(nq_eval._read_gold(d / "g.jsonl.gz")) == _canonical(
        nq_eval._read_gold(want_gold))
    want_preds = json.loads("[" + text + "]")
    assert _pred_canonical(nq_eval._read_predictions(d / "p.json")) == _pred_canonical(
        nq_eval._read_predictions(want_preds))
    if gold:
        assert _typed(qafast.nq(d / "g.jsonl.gz", d / "p.json", long_non_null_threshold=lt,
                                short_non_null_threshold=st_)) == _typed(
            qafast.nq(want_gold, want_preds, long_non_null_threshold=lt,
                      short_non_null_threshold=st_))


def test_a_bad_line_among_scanned_lines_is_named(tmp_path):
    good = json.dumps({"example_id": 1, "annotations": [ann(span(0, 4, 0, 1))]})
    bad = good.replace('"start_byte": 0', '"start_byte": "0"').replace('"example_id": 1',
                                                                       '"example_id": 2')
    path = tmp_path / "g.jsonl.gz"
    path.write_bytes(gzip.compress((good + "\n" + bad + "\n").encode()))
    with pytest.raises(FormatError, match="line 2") as e:
        nq_eval._read_gold(path)
    assert "start_byte" in str(e.value)
    p = tmp_path / "p.json"
    p.write_text(json.dumps({"predictions": [pred(1), pred(2, yes_no="perhaps")]}))
    with pytest.raises(InputError, match="prediction 1: .*perhaps"):
        nq_eval._read_predictions(p)
    p.write_text('{"predictions": [' + json.dumps(pred(1)) + ", NaN]}")
    with pytest.raises(InputError, match="prediction 1"):
        nq_eval._read_predictions(p)


# --------------------------------------------------------------------------------------------
# NqMetrics: any split into batches gives the one call's numbers
# --------------------------------------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(cases(), st.lists(st.integers(0, 14), max_size=3), st.lists(st.integers(0, 14),
                                                                   max_size=3))
def test_streaming_any_split_is_one_call(case, gold_cuts, pred_cuts):
    gold, preds, lt, st_ = case
    if not gold:
        return
    batches = max(len(gold_cuts), len(pred_cuts)) + 1

    def split(items, cuts):
        cuts = sorted(min(c, len(items)) for c in cuts)
        cuts += [len(items)] * (batches - 1 - len(cuts))
        bounds = [0, *cuts, len(items)]
        return [items[a:b] for a, b in zip(bounds, bounds[1:])]

    m = qafast.NqMetrics(long_non_null_threshold=lt, short_non_null_threshold=st_)
    for p, g in zip(split(preds, pred_cuts), split(gold, gold_cuts)):
        m.update(p, g)
    kw = {"long_non_null_threshold": lt, "short_non_null_threshold": st_}
    want = _typed(qafast.nq(gold, preds, **kw))
    assert _typed(m.compute()) == want
    assert m.compute_f1() == qafast.nq_f1(gold, preds, **kw)
    restored = qafast.NqMetrics()
    restored.load_state_dict(json.loads(json.dumps(m.state_dict())))
    assert _typed(restored.compute()) == want
    a, b = (qafast.NqMetrics(**kw) for _ in range(2))
    half = len(gold) // 2
    a.update(preds[:half], gold[:half])
    b.update(preds[half:], gold[half:])
    assert _typed(a.merge(b).compute()) == want


def test_streaming_errors_leave_the_state():
    m = qafast.NqMetrics()
    m.update([pred(1)], [{"example_id": 1, "annotations": [ann()]}])
    with pytest.raises(InputError, match="prediction 0"):
        m.update([pred(2, yes_no="perhaps")], [{"example_id": 2, "annotations": [ann()]}])
    assert len(m) == 1 and m.compute()["long-best-threshold-f1"] == 0.0
    with pytest.raises(InputError, match="no prediction"):
        m.update([], [{"example_id": 3, "annotations": [ann()]}]) or m.compute()
    with pytest.raises(InputError):
        m.load_state_dict({"format": "qafast.NqMetrics", "version": 1})
    with pytest.raises(InputTypeError):
        m.update([], "gold.jsonl.gz")
