"""What ``import qafast`` and its readers load: modules, not timings.

``import qafast`` loads no family module, reader or the plain-Python reference; a public name
loads its own family on first use; the readers in ``qafast.io`` never import a family module,
so the imports run one way (families use readers, never the reverse); and no module of the
package imports, even inside a function, a module that imports it back.
"""

import ast
import fnmatch
import functools
import importlib.machinery
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import qafast
import qafast.io

IO_DIR = Path(qafast.io.__file__).parent
PACKAGE_DIR = Path(qafast.__file__).parent


def _loaded_after(code: str) -> set:
    """The ``qafast.*`` modules loaded by ``code`` in a fresh interpreter."""
    script = (code + "\nimport sys, json\n"
              "print(json.dumps(sorted(m for m in sys.modules if m.startswith('qafast'))))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env=os.environ.copy(), check=True).stdout
    return set(json.loads(out.splitlines()[-1]))


#: public modules that are the layer below the families, as the private ones are: the
#: exception classes every family and reader raises
BELOW_FAMILIES = {"errors"}


def _families() -> set:
    """Every public module of the package (a family, a surface on top of them, or the
    reference) other than the readers."""
    names = {p.stem for p in PACKAGE_DIR.glob("*.py")
             if not p.stem.startswith("_") and p.stem not in BELOW_FAMILIES}
    names |= {p.name for p in PACKAGE_DIR.iterdir()
              if (p / "__init__.py").exists() and p.name != "io"}
    return {f"qafast.{n}" for n in names}


def test_import_qafast_loads_nothing_else():
    assert _loaded_after("import qafast") == {"qafast"}


@pytest.mark.parametrize(("name", "module"), [
    ("evaluate", "qafast.ranking"),
    ("exact_match", "qafast.answers"),
    ("squad", "qafast.squad_eval"),
    ("evaluate_concepts", "qafast.concepts"),
    ("tw_events_score", "qafast.events"),
    ("evaluate_dbqa", "qafast.dbqa"),
    ("average_precision", "qafast.curves"),
    ("hotpot", "qafast.hotpot_eval"),
    ("mlqa", "qafast.multilingual_eval"),
    ("cmrc", "qafast.multilingual_eval"),
    ("drcd", "qafast.multilingual_eval"),
    ("drop", "qafast.drop_eval"),
    ("tydi", "qafast.tydi_eval"),
    ("quac", "qafast.quac_eval"),
    ("coqa", "qafast.coqa_eval"),
    ("nq", "qafast.nq_eval"),
    ("CoqaMetrics", "qafast.coqa_eval"),
    ("dpr_retrieval", "qafast.dpr_eval"),
])
def test_a_public_name_loads_its_own_family_only(name, module):
    loaded = _loaded_after(f"import qafast\nqafast.{name}")
    assert module in loaded
    others = (_families() - {module}) & loaded
    if module == "qafast.answers":  # its normalizers are the reference's own functions
        others -= {"qafast.reference", "qafast.reference.answers", "qafast.reference.triviaqa"}
    if module == "qafast.drop_eval":  # the same for non-ASCII spans
        others -= {"qafast.reference", "qafast.reference.drop"}
    if module == "qafast.coqa_eval":  # its source and domain tables are the reference's
        others -= {"qafast.reference", "qafast.reference.coqa"}
    assert not others, f"qafast.{name} also loaded {sorted(others)}"
    assert not {m for m in loaded if m.startswith("qafast.reference.")} - {
        "qafast.reference.answers", "qafast.reference.drop", "qafast.reference.coqa",
        "qafast.reference.triviaqa"}


def test_every_public_name_resolves_and_is_listed():
    for name in qafast.__all__:
        assert getattr(qafast, name) is not None
    assert set(qafast.__all__) <= set(dir(qafast))
    namespace: dict = {}
    exec("from qafast import *", namespace)  # noqa: S102
    assert set(qafast.__all__) <= set(namespace)
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        qafast.no_such_name  # noqa: B018


def _type_checking_imports(tree: ast.Module) -> list:
    """``(module, name, alias)`` of each import under ``if TYPE_CHECKING:``."""
    found = []
    for node in tree.body:
        test = node.test if isinstance(node, ast.If) else None
        if (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING"
                or isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"):
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom) and imp.level == 1, ast.unparse(imp)
                found += [(imp.module, a.name, a.asname) for a in imp.names]
    return found


def test_public_names_are_one_list():
    # __all__ is made from _LAZY; the TYPE_CHECKING imports, which type checkers read
    # instead, must name the same names from the same modules, each as "name as name" (the
    # form that marks a re-export)
    tree = ast.parse((PACKAGE_DIR / "__init__.py").read_text(encoding="utf-8"))
    lazy = next(ast.literal_eval(node.value) for node in tree.body
                if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "_LAZY")
    from_lazy = sorted((module, name) for module, names in lazy.items() for name in names)
    imported = _type_checking_imports(tree)
    assert [(m, n) for m, n, alias in imported if alias != n] == [], "write 'name as name'"
    assert sorted((m, n) for m, n, _ in imported) == from_lazy
    assert sorted(qafast.__all__) == qafast.__all__
    assert set(qafast.__all__) == {n for _, n in from_lazy} | {"__version__"}
    assert len(qafast.__all__) == len(from_lazy) + 1  # no name in two modules


@pytest.mark.parametrize("code", [
    # the module first, then the function
    "from qafast.comparison import Comparison\nimport qafast\n",
    "import qafast.comparison\nimport qafast\n",
    # the function first, then the module
    "import qafast\nqafast.compare\nfrom qafast.comparison import Comparison\n",
])
def test_compare_is_the_function_whatever_was_imported_first(code):
    script = code + (
        "import types\n"
        "from qafast.comparison import Comparison\n"
        "assert callable(qafast.compare) and not isinstance(qafast.compare, types.ModuleType)\n"
        "assert qafast.compare is __import__('sys').modules['qafast.comparison'].compare\n"
        "assert Comparison.__name__ == 'Comparison'\n"
        "from qafast.squad_eval import squad\n"
        "assert qafast.squad is squad\n"
    )
    subprocess.run([sys.executable, "-c", script], env=os.environ.copy(), check=True)


# A Comparison as qafast pickled it while the module was qafast.compare (protocol 2 names the
# class in plain text: GLOBAL "qafast.compare\nComparison")
_OLD_PICKLE = """
import pickle, warnings
import numpy as np
import qafast
from qafast.comparison import Comparison
c = Comparison.from_per_query({"a": {"q1": {"m": 0.5}, "q2": {"m": 0.25}},
                               "b": {"q1": {"m": 1.0}, "q2": {"m": 0.5}}})
new = pickle.dumps(c, protocol=2)
old = new.replace(b"cqafast.comparison\\nComparison\\n", b"cqafast.compare\\nComparison\\n")
assert old != new and b"qafast.comparison" not in old
"""


@pytest.mark.parametrize("first", ["", "import qafast\nqafast.compare\n"])
def test_a_comparison_pickled_as_qafast_compare_loads(first):
    script = first + _OLD_PICKLE + (
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    again = pickle.loads(old)\n"
        "assert type(again) is qafast.Comparison and np.array_equal(again.means, c.means)\n"
        "assert [w.category for w in caught] == [DeprecationWarning], caught\n"
        "assert b'qafast.comparison' in pickle.dumps(again, protocol=2)\n"
        # importing the old name bound it in the package, where the function was: it calls
        # the function still
        "qrels = {'q1': {'d1': 1}, 'q2': {'d1': 1}}\n"
        "runs = {'a': {'q1': {'d1': 1.0}, 'q2': {'d1': 1.0}},\n"
        "        'b': {'q1': {'d2': 1.0}, 'q2': {'d1': 1.0}}}\n"
        "got = qafast.compare(qrels, runs, ['map'])\n"
        "assert got.means.tolist() == [[1.0], [0.5]]\n"
        "from qafast.compare import Comparison as Old, adjust_p_values\n"
        "assert Old is Comparison and adjust_p_values([0.5]).tolist() == [0.5]\n"
    )
    subprocess.run([sys.executable, "-c", script], env=os.environ.copy(), check=True)


def test_an_old_pickle_loads_where_qafast_was_not_imported():
    script = _OLD_PICKLE + (
        "import subprocess, sys\n"
        "code = 'import pickle, sys; c = pickle.loads(sys.stdin.buffer.read()); print(c.runs)'\n"
        "out = subprocess.run([sys.executable, '-W', 'ignore', '-c', code], input=old,\n"
        "                     capture_output=True, check=True).stdout\n"
        "assert out == b\"['a', 'b']\\n\", out\n"
    )
    subprocess.run([sys.executable, "-c", script], env=os.environ.copy(), check=True)


def test_submodules_are_attributes_after_import_qafast():
    loaded = _loaded_after("import qafast\nqafast.io.read_trec_run\nqafast.reference.evaluate")
    assert {"qafast.io.trec", "qafast.reference.ranking"} <= loaded
    assert "qafast.reference.squad" not in loaded  # the reference's families load one by one


@pytest.mark.parametrize("module", sorted(p.stem for p in IO_DIR.glob("*.py")
                                          if p.stem != "__init__"))
def test_reading_loads_no_family_module(module):
    loaded = _loaded_after(f"import qafast.io.{module}")
    assert not loaded & _families(), sorted(loaded & _families())


def _imported_modules(path: Path):
    """``(line, absolute module)`` of every import in a module of ``qafast.io``, at any depth
    (a family imported inside a function is still an import back)."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                base = node.module or ""
            else:
                parts = ["qafast", "io"][: 3 - node.level]  # the package of qafast.io.<x>
                base = ".".join(parts + ([node.module] if node.module else []))
            if node.module is None:  # from .. import x: each name may be a module
                for alias in node.names:
                    yield node.lineno, f"{base}.{alias.name}"
            else:
                yield node.lineno, base


@pytest.mark.parametrize("path", sorted(IO_DIR.glob("*.py")), ids=lambda p: p.name)
def test_readers_import_no_family_module_anywhere(path):
    bad = []
    for line, module in _imported_modules(path):
        if not module.startswith("qafast.") or module.startswith("qafast.io"):
            continue
        top = module.split(".")[1]
        # private modules (_kernels, _warn, ...) and qafast.errors are the layer below the
        # families
        if not top.startswith("_") and top not in BELOW_FAMILIES:
            bad.append(f"line {line}: {module}")
    assert not bad, f"{path.name} imports a family module: {bad}"


#: Each module's layer, by pattern (the first that matches). The imports run one way, from
#: the bottom of this list to its top (docs/adding-a-measure.md describes the layers).
LAYERS = [
    ("base", ["qafast.errors", "qafast._warn", "qafast._lines", "qafast._progress",
              "qafast._convert", "qafast._exactsum", "qafast._distributions", "qafast._output",
              "qafast._blas", "qafast._state", "qafast._measures", "qafast._measure_parser",
              "qafast._threads", "qafast._gc", "qafast._kept_scores", "qafast._json_scan",
              "qafast._triviaqa_text",
              "qafast.io._errors", "qafast.io._text", "qafast.io._encoded",
              "qafast.reference", "qafast.reference.*"]),
    ("sources", ["qafast.io", "qafast.io.*", "qafast._ranked", "qafast._tables"]),
    ("engine", ["qafast._engine", "qafast._summaries", "qafast._trec_text"]),
    ("families", ["qafast.ranking", "qafast._runfile", "qafast._trec_jg", "qafast._trec_prefs", "qafast._arrow_input",
                  "qafast._run_sources", "qafast.answers", "qafast.squad_eval", "qafast.factoid",
                  "qafast.dbqa", "qafast.curves", "qafast.concepts", "qafast.events",
                  "qafast.fusion", "qafast.hotpot_eval", "qafast.drop_eval",
                  "qafast.tydi_eval", "qafast.quac_eval", "qafast.coqa_eval",
                  "qafast.multilingual_eval", "qafast.gdeval_eval", "qafast.dpr_eval",
                  "qafast.triviaqa_eval", "qafast.msmarco_eval", "qafast.nq_eval",
                  "qafast.kilt_eval", "qafast.cwl_eval", "qafast.ndeval_eval",
                  "qafast.diversity"]),
    ("surfaces", ["qafast", "qafast.__main__", "qafast._program", "qafast._renamed", "qafast.cli",
                  "qafast.stream", "qafast.comparison", "qafast.compat", "qafast.dask",
                  "qafast.integrations", "qafast.integrations.*"]),
]
_ORDER = [name for name, _ in LAYERS]


def _package_modules() -> dict:
    """``{module name: path}`` of every Python module of the package."""
    modules = {}
    for path in PACKAGE_DIR.rglob("*.py"):
        parts = path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


MODULES = _package_modules()


def _layer(module: str) -> str:
    for name, patterns in LAYERS:
        if any(fnmatch.fnmatchcase(module, p) for p in patterns):
            return name
    raise AssertionError(f"{module} is in no layer: add it to LAYERS in {__file__}")


def _is_compiled(package_dir: Path, name: str) -> bool:
    # qafast._kernels: an extension module (its .pyx is not in a wheel, the built file is)
    return any((package_dir / (name + suffix)).exists()
               for suffix in (".pyx", *importlib.machinery.EXTENSION_SUFFIXES))


@functools.cache
def _parsed(path: Path) -> ast.Module:
    # each module parsed once per session: the layer tests below walk every module's tree
    # for each of the 60-odd modules they are parametrized over
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


@functools.cache
def _imports(name: str) -> tuple:
    """``(line, module, imported name or None)`` of every import statement of package module
    ``name`` at any depth (inside functions and ``if TYPE_CHECKING:`` too): ``from m import
    x`` gives ``(line, m, "x")``, or ``(line, "m.x", None)`` when ``m.x`` is a module."""
    return tuple(_find_imports(name))


def _find_imports(name: str):
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(_parsed(path)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, None
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(package.split(".")[:len(package.split(".")) - node.level + 1])
                base = ".".join(filter(None, [base, node.module]))
            else:
                base = node.module or ""
            base_dir = MODULES[base].parent if base in MODULES else None
            for alias in node.names:
                if f"{base}.{alias.name}" in MODULES:  # from . import answers: a module
                    yield node.lineno, f"{base}.{alias.name}", None
                elif not (base_dir and MODULES[base].name == "__init__.py"
                          and _is_compiled(base_dir, alias.name)):
                    # a name defined in (or lazily exported by) base
                    yield node.lineno, base, alias.name


@functools.cache
def _import_graph() -> dict:
    """``{module: set of package modules it imports}``, built once per session (the caller
    must not change it)."""
    graph = {name: {m for _, m, _ in _imports(name) if m in MODULES and m != name}
             for name in MODULES}
    # the command line imports the families by name (importlib), which no import statement
    # shows: the modules of its SUBCOMMANDS are its imports too
    cli = ast.parse(MODULES["qafast.cli"].read_text(encoding="utf-8"))
    families = next(ast.literal_eval(node.value).values() for node in cli.body
                    if isinstance(node, ast.Assign)
                    and ast.unparse(node.targets[0]) == "SUBCOMMANDS")
    graph["qafast.cli"] |= {f"qafast.{m}" for m in families}
    return graph


def _cycles(graph: dict) -> list:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict = {}
    low: dict = {}
    stack: list = []
    on_stack: set = set()
    found = []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(component)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_import_graph_has_no_cycle():
    # the imports run one way: base modules, readers (io), the engine, the families, then the
    # surfaces (stream, comparison, dask, integrations, cli, the program); a module that
    # imports one above it, even inside a function, makes a cycle
    cycles = _cycles(_import_graph())
    assert not cycles, f"import cycles: {[sorted(c) for c in cycles]}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_every_module_imports_only_its_layer_and_below(module):
    mine = _ORDER.index(_layer(module))
    up = sorted({target for target in _import_graph()[module]
                 if _ORDER.index(_layer(target)) > mine})
    assert not up, f"{module} ({_layer(module)}) imports a higher layer: {up}"


def _private_uses(module: str):
    """``(line, module, name)`` of every private name ``module`` takes from another module:
    by ``from m import _name``, or as ``m._name`` where ``m`` names a module it imported."""
    bound: dict = {}  # local name -> the modules it is bound to, in any scope
    tree = _parsed(MODULES[module])
    for line, target, name in _imports(module):
        if name is not None and name.startswith("_") and not name.startswith("__"):
            yield line, target, name
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                local = alias.asname or alias.name.split(".")[0]
                full = alias.name
                if isinstance(node, ast.ImportFrom):
                    for _, target, name in _imports(module):
                        if name is None and target.endswith("." + alias.name):
                            full = target
                            break
                if full in MODULES:
                    bound.setdefault(local, set()).add(full)
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in bound and node.attr.startswith("_")
                and not node.attr.startswith("__")):
            # a name bound to several modules in different scopes: the nearest layer's
            targets = sorted(bound[node.value.id], key=lambda t: _layer(t) != _layer(module))
            yield node.lineno, targets[0], node.attr


@pytest.mark.parametrize("module", sorted(MODULES))
def test_private_names_stay_within_a_layer(module):
    # the compiled _kernels aside (every name of it is internal), a module takes another's
    # private names only in its own layer
    crossing = [(line, f"{target}.{name}") for line, target, name in _private_uses(module)
                if target in MODULES and _layer(target) != _layer(module)]
    assert not crossing, f"{module} takes private names across layers: {crossing}"


def test_the_import_graph_sees_imports_inside_functions():
    graph = _import_graph()
    assert "qafast._output" in graph["qafast.dbqa"]  # imported inside _run_dbqa
    assert "qafast.cli" in graph["qafast._program"]  # inside main
    assert "qafast.events" in graph["qafast.cli"]  # SUBCOMMANDS
    assert "qafast" not in graph["qafast.comparison"]  # from . import _kernels: compiled
    assert {"qafast.comparison", "qafast.squad_eval"} <= graph["qafast"]  # TYPE_CHECKING
