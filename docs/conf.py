"""Sphinx configuration of qafast's documentation.

Build (warnings are errors)::

    pip install -r docs/requirements.txt     # beside an installed qafast
    python -m sphinx -W --keep-going -b html docs docs/_build/html

The measure reference (``measures.rst``) and the API pages (``api/``) are generated at build
time by the extensions in ``_ext/``: from the measure registry and from each module's
``__all__``.
"""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))
try:
    import qafast
except ImportError:  # building from a source tree where qafast is not installed
    sys.path.insert(0, str(HERE.parent / "src"))
    import qafast

project = "qafast"
author = "qafast developers"
copyright = "qafast developers"
release = qafast.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.doctest",
    "sphinx.ext.intersphinx",
    "numpydoc",
    "myst_parser",
    "measure_reference",
    "api_pages",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_ext"]
# the README's anchors and in-page links
myst_heading_anchors = 3

autodoc_member_order = "bysource"
autodoc_typehints = "none"  # numpydoc's Parameters sections say the types
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

intersphinx_mapping = {}

html_theme = "alabaster"
# the measure reference's summary table has six columns: the page takes the window's width
html_theme_options = {"page_width": "min(1200px, 96vw)"}
html_title = f"qafast {release}"
html_static_path = ["_static"]
html_css_files = ["qafast.css"]
