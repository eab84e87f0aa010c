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


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_page_examples(page):
    text = examples(page)
    if not text:
        pytest.skip("no examples on this page")
    test = doctest.DocTestParser().get_doctest(text, {}, page.name, str(page), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
