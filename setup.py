"""Build the one compiled module, ``qafast._kernels``.

Everything else lives in pyproject.toml. ``QAFAST_CYTHON_DEBUG=1`` turns on bounds and
wrap-around checks, builds without optimisation and without the multi-versioned loops, so
the test suite can run against kernels that fault on an out-of-range index instead of
reading garbage.
"""

import os
from pathlib import Path

from Cython.Build import cythonize
from setuptools import Extension, setup

debug = os.environ.get("QAFAST_CYTHON_DEBUG", "") not in ("", "0")

# Cython regenerates the C only when a source is newer than it, and the directives are not a
# source: without this stamp, a release build after a debug one kept the bounds-checked C.
_stamp = Path("build") / "qafast-cython-mode"
_mode = "debug" if debug else "release"
_mode_changed = not _stamp.exists() or _stamp.read_text() != _mode
if _mode_changed:
    _stamp.parent.mkdir(exist_ok=True)
    _stamp.write_text(_mode)

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
if os.name != "nt":
    compile_args = ["-O0", "-g"] if debug else ["-O3"]
else:
    compile_args = ["/Od"] if debug else ["/O2"]

extensions = [
    Extension(
        "qafast._kernels",
        ["src/qafast/_kernels.pyx"],
        include_dirs=["src/qafast"],
        depends=["src/qafast/_simd.h"] + [str(p) for p in Path("src/qafast").glob("*.pxi")],
        extra_compile_args=compile_args,
        # the debug build also compiles the plain (not multi-versioned) loops that macOS and
        # Windows get, so Linux CI exercises both
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")]
        + ([("QAFAST_NO_CLONES", "1")] if debug else []),
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
