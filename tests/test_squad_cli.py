"""`qafast squad`: the official scripts' output format, the files it writes, its errors."""

import json
import sys

import pytest

from qafast import cli
from qafast.squad_eval import register_cli

DATA = {"version": "v2.0", "data": [{"title": "t", "paragraphs": [{"context": "c", "qas": [
    {"id": "a", "question": "?", "answers": [{"text": "Paris", "answer_start": 0}]},
    {"id": "b", "question": "?", "answers": []},
    {"id": "c", "question": "?", "answers": []},
    {"id": "d", "question": "?", "answers": [{"text": "big red dog", "answer_start": 0}]}]}]}]}
PREDS = {"a": "paris", "b": "dog", "c": "", "d": "red dog"}
PROBS = {"a": 0.5, "b": 0.5, "c": 0.1, "d": 0.9}


@pytest.fixture
def files(tmp_path):
    out = {}
    for name, obj in (("data", DATA), ("pred", PREDS), ("na", PROBS)):
        out[name] = str(tmp_path / f"{name}.json")
        with open(out[name], "w") as f:
            json.dump(obj, f)
    return out


def run(capsys, *argv):
    code = cli.main(["squad", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_registered():
    import argparse

    sub = argparse.ArgumentParser().add_subparsers()
    assert list(register_cli(sub)) == ["squad"]


def test_v2_prints_json_indented_by_two(files, capsys):
    code, out, err = run(capsys, files["data"], files["pred"])
    assert code == 0 and err == ""
    expected = {"exact": 50.0, "f1": 100.0 * (1.0 + 0.0 + 1.0 + 0.8) / 4, "total": 4,
                "HasAns_exact": 50.0, "HasAns_f1": 100.0 * (1.0 + 0.8) / 2, "HasAns_total": 2,
                "NoAns_exact": 50.0, "NoAns_f1": 50.0, "NoAns_total": 2}
    assert out == json.dumps(expected, indent=2) + "\n"


def test_v1_prints_json_on_one_line(files, capsys, tmp_path):
    data = {"version": "1.1", "data": [{"paragraphs": [{"qas": [
        {"id": "a", "answers": [{"text": "Paris"}]}, {"id": "d", "answers": [{"text": "dog"}]},
        {"id": "e", "answers": [{"text": "cat"}]}]}]}]}
    path = tmp_path / "v1.json"
    path.write_text(json.dumps(data))
    code, out, err = run(capsys, str(path), files["pred"], "--version", "1.1")
    assert code == 0
    f1_d = (2 * 0.5 * 1.0) / (0.5 + 1.0)
    assert out == json.dumps({"exact_match": 100.0 / 3, "f1": 100.0 * (1.0 + f1_d) / 3}) + "\n"
    assert "1 question(s) have no prediction and are scored 0: e" in err


def test_v1_warns_about_the_dataset_version_as_the_script_does(files, capsys):
    code, out, err = run(capsys, files["data"], files["pred"], "--version", "1.1")
    assert "Evaluation expects v-1.1, but got dataset with v-v2.0" in err
    assert code == 2 and "'b': no gold answer" in err      # v1.1 needs a gold per question


def test_na_prob_file_adds_best_thresholds_but_not_ap(files, capsys):
    code, out, _ = run(capsys, files["data"], files["pred"], "-n", files["na"])
    result = json.loads(out)
    assert list(result)[-4:] == ["best_exact", "best_exact_thresh", "best_f1", "best_f1_thresh"]
    assert (result["best_exact"], result["best_exact_thresh"]) == (75.0, 0.5)
    assert not any(k.startswith("pr_") for k in result)


def test_threshold_option(files, capsys):
    _, out, _ = run(capsys, files["data"], files["pred"], "-n", files["na"], "-t", "0.2")
    assert json.loads(out)["HasAns_exact"] == 0.0


def test_out_file_is_written_as_the_script_does_and_nothing_printed(files, capsys, tmp_path):
    target = tmp_path / "eval.json"
    code, out, _ = run(capsys, files["data"], files["pred"], "-n", files["na"], "-o", str(target))
    assert code == 0 and out == ""
    text = target.read_text()
    assert text == json.dumps(json.loads(text))          # json.dump: one line, no newline
    assert json.loads(text)["best_f1_thresh"] == 0.5


def test_image_dir_writes_the_plots_and_adds_ap(files, capsys, tmp_path):
    pytest.importorskip("matplotlib")
    images = tmp_path / "img"
    code, out, _ = run(capsys, files["data"], files["pred"], "-n", files["na"], "-p", str(images))
    assert code == 0
    assert list(json.loads(out))[-3:] == ["pr_exact_ap", "pr_f1_ap", "pr_oracle_ap"]
    assert sorted(p.name for p in images.iterdir()) == [
        "na_prob_hist_hasAns.png", "na_prob_hist_noAns.png", "pr_exact.png", "pr_f1.png",
        "pr_oracle.png"]
    assert (images / "pr_f1.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_image_dir_without_matplotlib_is_a_clear_error(files, capsys, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    code, out, err = run(capsys, files["data"], files["pred"], "-n", files["na"], "-p",
                         str(tmp_path / "img"))
    assert code == 2 and out == ""
    assert "matplotlib" in err and "qafast[plot]" in err


def test_missing_and_unknown_predictions_are_noted_on_stderr(files, capsys, tmp_path):
    pred = tmp_path / "p.json"
    pred.write_text(json.dumps({"a": "paris", "b": "", "zz": "?"}))
    code, out, err = run(capsys, files["data"], str(pred))
    assert code == 0 and json.loads(out)["total"] == 2
    assert "2 question(s) have no prediction and are left out: c, d" in err
    assert "1 predictions for question ids the dataset lacks, ignored: 'zz'" in err
    code, out, err = run(capsys, files["data"], str(pred), "--missing", "error")
    assert code == 2 and "'c'" in err


def test_errors_name_the_file(files, capsys, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    code, out, err = run(capsys, files["data"], str(bad))
    assert code == 2 and "bad.json, line 1" in err
    code, _, err = run(capsys, files["data"], files["pred"], "--version", "1.1", "-n",
                       files["na"])
    assert code == 2 and "v2.0 options" in err


def test_shipped_sample(capsys):
    from importlib import resources

    from qafast.reference import squad as spec

    data = resources.files("qafast") / "data"
    paths = [str(data / f"squad_sample{s}.json") for s in ("", "_pred", "_na")]
    with open(paths[0]) as f:
        dataset = json.load(f)
    with open(paths[1]) as f:
        preds = json.load(f)
    with open(paths[2]) as f:
        probs = json.load(f)
    code, out, err = run(capsys, paths[0], paths[1], "-n", paths[2])
    assert code == 0 and err == ""
    result = json.loads(out)
    expected = spec.squad(dataset, preds, na_probs=probs)
    assert result == {k: v for k, v in expected.items() if not k.startswith("pr_")}
    # 5 of 10 exact; rhone-3 and hangul-2 tie at 0.3, the best cut for EM and F1
    assert (result["exact"], result["total"], result["best_exact_thresh"]) == (50.0, 10, 0.3)
