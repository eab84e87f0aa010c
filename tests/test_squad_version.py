"""Which official script qafast.squad and `qafast squad` reproduce when the caller does not say:
the dataset's "version" field decides ("1.1" in SQuAD v1.1 files, "v2.0" in SQuAD v2.0's,
"1.0" in MLQA's), a file without one is scored as v2.0, and an explicit version that
contradicts the file is obeyed with a SquadWarning."""

import json
import warnings

import pytest

from qafast import cli
from qafast import squad_eval as fast
from qafast.io.squad import SquadWarning
from qafast.reference import squad as spec

QAS = [{"id": "a", "answers": [{"text": "Paris"}]},
       {"id": "b", "answers": [{"text": "big red dog"}]},
       {"id": "c", "answers": [{"text": "cat"}]}]
PREDS = {"a": "paris", "b": "red dog"}           # c has no prediction
F1_B = (2 * 1.0 * (2 / 3)) / (1.0 + 2 / 3)       # "red dog" vs "big red dog"
# v1.1: c scores 0 and counts; v2.0: c is left out
V1 = {"exact_match": 100.0 * 1 / 3, "f1": 100.0 * (1.0 + F1_B) / 3}
V2 = {"exact": 50.0, "f1": 100.0 * (1.0 + F1_B) / 2, "total": 2, "HasAns_exact": 50.0,
      "HasAns_f1": 100.0 * (1.0 + F1_B) / 2, "HasAns_total": 2}


def data(version=None):
    out = {"data": [{"paragraphs": [{"qas": QAS}]}]}
    return out if version is None else {"version": version, **out}


def quiet(fn, *args, **kw):
    """fn's result, failing on any warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return fn(*args, **kw)


@pytest.mark.parametrize("impl", [fast.squad, spec.squad], ids=["fast", "reference"])
@pytest.mark.parametrize("field, expected", [
    ("1.1", V1), ("1.0", V1), ("v1.1", V1), (1.1, V1),
    ("v2.0", V2), ("2.0", V2), (2.0, V2), (None, V2),
])
def test_the_version_field_picks_the_script(impl, field, expected):
    assert quiet(impl, data(field), PREDS) == expected


def test_a_v11_file_is_no_longer_scored_with_v20_rules():
    # Before, the default was version="2.0" whatever the file said: the missing prediction
    # was left out, which raised the score above the v1.1 script's.
    assert fast.squad(data("1.1"), PREDS) == V1 != V2


def test_another_version_field_is_scored_as_v20_with_a_warning():
    with pytest.warns(SquadWarning, match=r"version field says '3\.0'.*v2\.0 script's rules"):
        assert fast.squad(data("3.0"), PREDS) == V2
    assert fast.version_rules("squad") is None


def test_an_explicit_version_that_contradicts_the_file_is_obeyed_with_a_warning(recwarn):
    with pytest.warns(SquadWarning, match=r"says '1\.1', but version='2\.0'") as rec:
        assert fast.squad(data("1.1"), PREDS, version="2.0") == V2
    assert rec[0].filename == __file__            # points at the caller, not into qafast
    with pytest.warns(SquadWarning, match=r"says 'v2\.0', but version='1\.1'"):
        assert fast.squad(data("v2.0"), PREDS, version="1.1") == V1
    # agreeing with the file, or a file without the field: nothing to say
    assert quiet(fast.squad, data("1.1"), PREDS, version="1.1") == V1
    assert quiet(fast.squad, data(), PREDS, version="1.1") == V1


def test_v20_options_on_a_v11_file_need_an_explicit_version():
    with pytest.raises(ValueError, match=r"version field says '1\.1'.*version='2\.0'"):
        fast.squad(data("1.1"), PREDS, na_probs={"a": 0.1, "b": 0.2, "c": 0.3})
    with pytest.raises(ValueError, match="v2.0 options"):
        fast.squad(data("1.1"), PREDS, na_prob_thresh=0.5)
    with pytest.warns(SquadWarning):
        r = fast.squad(data("1.1"), PREDS, version="2.0", na_probs={"a": 0.1, "b": 0.2})
    assert r["best_exact"] == 50.0


# ------------------------------------------------------------------------------------------
# The command line
# ------------------------------------------------------------------------------------------

@pytest.fixture
def files(tmp_path):
    def write(field, preds=PREDS):
        paths = [str(tmp_path / "data.json"), str(tmp_path / "pred.json")]
        for path, obj in zip(paths, (data(field), preds)):
            with open(path, "w") as f:
                json.dump(obj, f)
        return paths
    return write


def run(capsys, *argv):
    code = cli.main(["squad", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_cli_takes_the_version_from_the_file(files, capsys):
    code, out, err = run(capsys, *files("1.1"))
    assert code == 0 and out == json.dumps(V1) + "\n"           # v1.1's one line
    assert err == "qafast squad: 1 question(s) have no prediction and are scored 0: c\n"
    code, out, err = run(capsys, *files("v2.0"))
    assert code == 0 and out == json.dumps(V2, indent=2) + "\n"
    assert "left out: c" in err


def test_cli_mlqa_version_gets_v11_rules_and_the_v11_scripts_note(files, capsys):
    code, out, err = run(capsys, *files("1.0"))
    assert code == 0 and json.loads(out) == V1
    assert err.startswith("Evaluation expects v-1.1, but got dataset with v-1.0\n")


def test_cli_explicit_version_against_the_file(files, capsys):
    code, out, err = run(capsys, *files("1.1"), "--version", "2.0")
    assert code == 0 and json.loads(out) == V2
    assert "qafast squad: " in err and "says '1.1', but version='2.0'" in err
    # v1.1 on a v2.0 file: the v1.1 script's own note, said once
    code, out, err = run(capsys, *files("v2.0"), "--version", "1.1")
    assert code == 0 and json.loads(out) == V1
    assert "Evaluation expects v-1.1, but got dataset with v-v2.0" in err
    assert "but version=" not in err


def test_cli_v20_options_on_a_v11_file(files, capsys, tmp_path):
    na = tmp_path / "na.json"
    na.write_text(json.dumps({"a": 0.1, "b": 0.2, "c": 0.3}))
    code, out, err = run(capsys, *files("1.1"), "-n", str(na))
    assert code == 2 and out == ""
    assert "version field says '1.1'" in err and "--version 2.0" in err
    code, out, err = run(capsys, *files("1.1"), "-n", str(na), "--version", "2.0")
    assert code == 0 and json.loads(out)["best_exact"] == 50.0
