"""The examples in docstrings and in the README run and print what they say."""

import doctest
import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import qafast

README = Path(__file__).resolve().parent.parent / "README.md"


MODULES = sorted(
    name for _, name, _ in pkgutil.walk_packages(qafast.__path__, "qafast.")
    if name != "qafast._kernels"
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
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
