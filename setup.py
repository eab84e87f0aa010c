"""Build the one compiled module, ``qafast._kernels``.

Everything else lives in pyproject.toml. Three switches, each for running the test suite
against code that a default build here does not run:

- ``QAFAST_CYTHON_DEBUG=1`` turns on bounds and wrap-around checks, builds without
  optimisation and without the multi-versioned loops, so the test suite can run against
  kernels that fault on an out-of-range index instead of reading garbage.
- ``QAFAST_PORTABLE=1`` compiles only the plain C twins of the fast paths (no SSE2, no
  multi-versioned loops, no GCC/clang builtins, no Linux-only memory calls): the code that
  aarch64, macOS and MSVC builds run, built and tested on x86-64 Linux.
- ``QAFAST_PUBLIC_API_ONLY=1`` never reads CPython's own structures (see ``_portable.h``).
- ``QAFAST_SANITIZE=address`` builds with AddressSanitizer, so a read or write past an
  allocation faults where it happens. Python itself is not instrumented: run it with the
  runtime preloaded, ``LD_PRELOAD=$(gcc -print-file-name=libasan.so)
  ASAN_OPTIONS=detect_leaks=0`` (and ``ARROW_DEFAULT_MEMORY_POOL=system``, so that Arrow's
  buffers come from malloc and are watched too); ``.ci/run`` runs the fuzz targets so.
"""

import importlib.util
import os
import sys
from pathlib import Path

from Cython.Build import cythonize
from setuptools import Extension, setup



def _switch(name):
    return os.environ.get(name, "") not in ("", "0")


debug = _switch("QAFAST_CYTHON_DEBUG")
sanitize = os.environ.get("QAFAST_SANITIZE", "")
if sanitize not in ("", "address"):
    raise SystemExit(f"QAFAST_SANITIZE={sanitize!r}: the one sanitizer built is 'address'")
portable = _switch("QAFAST_PORTABLE")
public_api_only = _switch("QAFAST_PUBLIC_API_ONLY")

# Cython regenerates the C only when a source is newer than it, and the directives are not a
# source: without this stamp, a release build after a debug one kept the bounds-checked C.
_stamp = Path("build") / "qafast-cython-mode"
_mode = "+".join(
    ["debug" if debug else "release"]
    + (["portable"] if portable else [])
    + (["public-api"] if public_api_only else [])
    + ([f"sanitize-{sanitize}"] if sanitize else [])
)
_mode_changed = not _stamp.exists() or _stamp.read_text() != _mode
if _mode_changed:
    _stamp.parent.mkdir(exist_ok=True)
    _stamp.write_text(_mode)



def _write_measure_codes() -> None:
    """``_measure_codes.pxi`` from the measure table, so that a family's kernel code is
    written in one place (the table's order). The table imports only the standard library;
    the file is rewritten only when it changes, so Cython does not recompile for nothing."""
    spec = importlib.util.spec_from_file_location("qafast_measure_table",
                                                  Path("src/qafast/_measures.py"))
    table = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = table  # dataclasses look their module up
    spec.loader.exec_module(table)
    target = Path("src/qafast/_measure_codes.pxi")
    text = table.kernel_constants()
    if not target.exists() or target.read_text() != text:
        target.write_text(text)


_write_measure_codes()

directives = {
    "language_level": 3,
    "boundscheck": debug,
    "wraparound": debug,
    "initializedcheck": debug,
    "cdivision": True,
    "nonecheck": False,
    "embedsignature": True,
}

compile_args = []
link_args = []
if os.name != "nt":
    compile_args = ["-O0", "-g"] if debug else ["-O3"]
else:
    compile_args = ["/Od"] if debug else ["/O2"]
if sanitize:
    compile_args = ["-O1", "-g", "-fno-omit-frame-pointer", f"-fsanitize={sanitize}"]
    link_args = [f"-fsanitize={sanitize}"]

extensions = [
    Extension(
        "qafast._kernels",
        ["src/qafast/_kernels.pyx"],
        include_dirs=["src/qafast"],
        depends=["src/qafast/_simd.h", "src/qafast/_portable.h"]
        + [str(p) for p in Path("src/qafast").glob("*.pxi")],
        extra_compile_args=compile_args,
        extra_link_args=link_args,
        # the debug build also compiles the plain (not multi-versioned) loops that macOS and
        # Windows get, so Linux CI exercises both
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")]
        + ([("QAFAST_NO_CLONES", "1")] if debug else [])
        + ([("QAFAST_PORTABLE", "1")] if portable else [])
        + ([("QAFAST_PUBLIC_API_ONLY", "1")] if public_api_only else []),
    )
]

setup(
    ext_modules=cythonize(
        extensions,
        compiler_directives=directives,
        force=debug or _mode_changed,
        annotate=False,
    )
)
