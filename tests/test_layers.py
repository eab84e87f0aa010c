"""The package's imports run one way: base -> sources -> engine -> families -> surfaces.

Every import counts, inside functions too. A module imports only modules of its own layer or
of the layers below it, and takes another module's private names (``_name``) only within
its own layer (the compiled ``_kernels`` aside, whose names are all internal); no import
cycle anywhere. ``docs/adding-a-measure.md`` describes the layers.
"""

import ast
import fnmatch
from pathlib import Path

import pytest

import qafast

PACKAGE = Path(qafast.__file__).parent

#: each module's layer, by pattern (the first that matches)
LAYERS = [
    ("base", ["qafast.errors", "qafast._warn", "qafast._lines", "qafast._progress",
              "qafast._convert", "qafast._exactsum", "qafast._distributions", "qafast._output",
              "qafast._measures", "qafast._measure_parser", "qafast._threads",
              "qafast.io._errors", "qafast.io._text", "qafast.io._encoded",
              "qafast.reference", "qafast.reference.*"]),
    ("sources", ["qafast.io", "qafast.io.*", "qafast._ranked"]),
    ("engine", ["qafast._engine"]),
    ("families", ["qafast.ranking", "qafast._runfile", "qafast._arrow_input",
                  "qafast._run_sources", "qafast.answers", "qafast.squad", "qafast.factoid",
                  "qafast.dbqa", "qafast.curves", "qafast.concepts", "qafast.events"]),
    ("surfaces", ["qafast", "qafast.__main__", "qafast._program", "qafast.cli", "qafast.stream",
                  "qafast.compare", "qafast.compat", "qafast.dask", "qafast.integrations",
                  "qafast.integrations.*"]),
]
ORDER = [name for name, _ in LAYERS]


def module_names() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


MODULES = module_names()


def layer(module: str) -> str:
    for name, patterns in LAYERS:
        if any(fnmatch.fnmatchcase(module, p) for p in patterns):
            return name
    raise AssertionError(f"{module} is in no layer: add it to LAYERS in {__file__}")


def imports(module: str):
    """(line, imported module, imported name or None) of every import of ``module``."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("qafast"):
                    yield node.lineno, alias.name, None
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("qafast"):
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                if sub in MODULES or sub == "qafast._kernels":
                    yield node.lineno, sub, None
                else:
                    yield node.lineno, target, alias.name


def graph() -> dict[str, set[str]]:
    return {m: {t for _, t, _ in imports(m) if t in MODULES and t != m} for m in MODULES}


@pytest.mark.parametrize("module", sorted(MODULES))
def test_every_module_imports_only_its_layer_and_below(module):
    mine = ORDER.index(layer(module))
    up = [(line, target) for line, target, _ in imports(module)
          if target in MODULES and ORDER.index(layer(target)) > mine]
    assert not up, f"{module} ({layer(module)}) imports a higher layer: {up}"


def private_uses(module: str):
    """(line, module.name) of every private name ``module`` takes from another module: by
    ``from m import _name``, or as ``m._name`` where ``m`` is a module it imported."""
    bound: dict = {}  # local name -> the qafast modules it is bound to, in any scope
    for line, target, name in imports(module):
        if name is None:
            continue
        if name.startswith("_") and not name.startswith("__"):
            yield line, target, name
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                for _, target, name in imports_of_node(module, node, alias):
                    if name is None:
                        bound.setdefault(alias.asname or alias.name, set()).add(target)
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in bound and node.attr.startswith("_")
                and not node.attr.startswith("__")):
            # a name bound to several modules in different scopes: the nearest layer's
            targets = sorted(bound[node.value.id], key=lambda t: t != module and (
                layer(t) != layer(module)))
            yield node.lineno, targets[0], node.attr


def imports_of_node(module: str, node: ast.ImportFrom, alias):
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
    target = ".".join(base + ([node.module] if node.module else [])) if node.level else (
        node.module or "")
    sub = f"{target}.{alias.name}"
    if sub in MODULES:
        yield node.lineno, sub, None
    else:
        yield node.lineno, target, alias.name


@pytest.mark.parametrize("module", sorted(MODULES))
def test_private_names_stay_within_a_layer(module):
    crossing = [(line, f"{target}.{name}") for line, target, name in private_uses(module)
                if target in MODULES and layer(target) != layer(module)]
    assert not crossing, f"{module} takes private names across layers: {crossing}"


def test_no_import_cycle():
    edges = graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles = []

    def visit(v):  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in edges:
        if v not in index:
            visit(v)
    assert not cycles, f"import cycles: {cycles}"
