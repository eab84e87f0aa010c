"""Packaging: what the installed package ships, and the build configuration beside the tests.

The configuration checks read ``pyproject.toml`` and ``.github/workflows`` next to ``tests/``
and skip where they are absent (a copy of the tests run against an installed wheel).
"""

import tomllib
from importlib import resources
from pathlib import Path

import pytest

import qafast

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = ROOT / "pyproject.toml"
WHEELS_YML = ROOT / ".github" / "workflows" / "wheels.yml"


def _pyproject() -> dict:
    if not PYPROJECT.exists():
        pytest.skip("pyproject.toml not next to the tests")
    return tomllib.loads(PYPROJECT.read_text())


def test_the_package_ships_its_types():
    package = resources.files(qafast)
    assert (package / "py.typed").is_file()
    assert (package / "_kernels.pyi").is_file()


def test_the_package_ships_no_cython_source():
    package = Path(qafast.__file__).parent
    if (package.parent.parent / "setup.py").exists():
        pytest.skip("qafast is imported from the source tree, not installed")
    assert not [p.name for p in package.iterdir() if p.suffix in (".pyx", ".pxi", ".c")]


def test_test_extra_group_and_requirements_file_list_the_same_requirements():
    # the README's second command installs tests/requirements.txt; `pip install --group test`
    # the group; pip install "qafast[test]" the extra
    config = _pyproject()
    extra = config["project"]["optional-dependencies"]["test"]
    assert config["dependency-groups"]["test"] == extra
    listed = (Path(__file__).parent / "requirements.txt").read_text().splitlines()
    assert [r for r in listed if r and not r.startswith("#")] == extra


def test_docs_extra_group_and_requirements_file_list_the_same_requirements():
    # the README builds the site with docs/requirements.txt, beside the installed qafast
    if not (ROOT / "docs").is_dir():
        pytest.skip("docs/ not next to the tests")
    config = _pyproject()
    extra = config["project"]["optional-dependencies"]["docs"]
    assert config["dependency-groups"]["docs"] == extra
    listed = (ROOT / "docs" / "requirements.txt").read_text().splitlines()
    assert [r for r in listed if r and not r.startswith("#")] == extra


def test_wheels_skip_free_threaded_builds_and_claim_nothing_for_them():
    cibw = _pyproject()["tool"]["cibuildwheel"]
    assert "cp3??t-*" in cibw["skip"]
    assert not cibw.get("enable")
    # the reason is written beside the setting
    text = PYPROJECT.read_text()
    assert "free-threaded" in text[text.index("[tool.cibuildwheel]"):]
    setup = ROOT / "setup.py"
    if setup.exists():
        assert "freethreading_compatible" not in setup.read_text()


def test_wheels_are_built_from_the_sdist_and_published_by_trusted_publishing():
    yaml = pytest.importorskip("yaml")
    if not WHEELS_YML.exists():
        pytest.skip("the workflows are not next to the tests")
    jobs = yaml.safe_load(WHEELS_YML.read_text())["jobs"]
    assert jobs["wheels"]["needs"] == "sdist"
    build = next(s for s in jobs["wheels"]["steps"] if "cibuildwheel" in s.get("uses", ""))
    assert build["with"]["package-dir"].startswith("${{ steps.sdist")
    publish = jobs["publish"]
    assert publish["permissions"] == {"id-token": "write"}
    assert any("gh-action-pypi-publish" in s.get("uses", "") for s in publish["steps"])
    assert "refs/tags/" in publish["if"]
