"""The examples in docstrings and in the README run and print what they say."""

import doctest
import re
from pathlib import Path

import pytest

import qafast
import qafast.compat
import qafast.ranking
import qafast.reference
import qafast.reference.ranking

README = Path(__file__).resolve().parent.parent / "README.md"


@pytest.mark.parametrize("module", [qafast.ranking, qafast.compat, qafast.reference.ranking],
                         ids=lambda m: m.__name__)
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


@pytest.mark.skipif(not README.exists(), reason="README not next to the tests")
def test_readme_python_example_prints_what_it_claims():
    text = README.read_text()
    block = re.search(r"```python\n(import qafast\n.*?)```", text, re.S).group(1)
    lines = block.splitlines()
    namespace: dict = {}
    source: list[str] = []
    for line in lines:
        if line.startswith("# {"):
            expected = eval(line[2:])
            got = eval(source.pop(), namespace)
            exec("\n".join(source), namespace)
            source.clear()
            assert got == expected
        else:
            if source and not line.startswith((" ", "#")) and line.strip():
                exec("\n".join(source), namespace)
                source.clear()
            source.append(line)
