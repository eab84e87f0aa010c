"""The examples on the docs site's pages (``docs/*.md``) run and print what they say.

Each page's ``pycon`` blocks run in order in one namespace, as a reader would type them.
"""

import doctest
import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"
PAGES = sorted(DOCS.glob("*.md")) if DOCS.is_dir() else []
BLOCK = re.compile(r"^```pycon\n(.*?)^```", re.DOTALL | re.MULTILINE)


def examples(page: Path) -> str:
    return "\n".join(BLOCK.findall(page.read_text(encoding="utf-8")))


def test_the_getting_started_page_has_examples():
    if not DOCS.is_dir():
        pytest.skip("docs/ not next to the tests")
    assert examples(DOCS / "getting-started.md").count(">>>") >= 10


def test_readme_and_getting_started_give_the_same_commands():
    # the set-up commands, and the one that builds this site, are the README's word for word
    if not DOCS.is_dir():
        pytest.skip("docs/ not next to the tests")
    readme = (DOCS.parent / "README.md").read_text(encoding="utf-8")
    page = (DOCS / "getting-started.md").read_text(encoding="utf-8")
    first_block = re.compile(r"^```bash\n(.*?)^```", re.DOTALL | re.MULTILINE)
    assert first_block.search(readme)[1] == first_block.search(page)[1]
    build = "pip install -r docs/requirements.txt && python -m sphinx -b html docs docs/_build/html"
    assert build in readme.replace("\n", " ") and build in page.replace("\n", " ")


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_page_examples(page):
    text = examples(page)
    if not text:
        pytest.skip("no examples on this page")
    test = doctest.DocTestParser().get_doctest(text, {}, page.name, str(page), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


def test_tables_are_made_to_fit_the_page():
    # the measure reference's six-column summary ran past a 1280 px window (alabaster sizes a
    # table by its longest unbroken cell, and Sphinx keeps literals on one line); the site's
    # stylesheet fixes the table to the text width and lets literals wrap
    if not DOCS.is_dir():
        pytest.skip("docs/ not next to the tests")
    conf = (DOCS / "conf.py").read_text(encoding="utf-8")
    assert 'html_css_files = ["qafast.css"]' in conf and '"_static"' in conf
    css = (DOCS / "_static" / "qafast.css").read_text(encoding="utf-8")
    assert "table-layout: fixed" in css and "span.pre" in css
