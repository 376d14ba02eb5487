"""Sphinx configuration of the qkforms docs (MyST Markdown, offline build).

Build: ``bash scripts/build-docs.sh`` (records a ``qkforms verify`` run, then runs
``sphinx-build``). Math is rendered by a MathJax copy bundled with the build
(``sphinx-mathjax-offline``), so the site needs no network.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))
sys.path.insert(0, str(HERE.parent / "python"))

project = "qkforms"
author = "qkforms developers"
copyright = "2026, qkforms developers"  # noqa: A001

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx-mathjax-offline",
    "qkresults",
]
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_generated/*.json", "README.md"]
autodoc_member_order = "bysource"
autodoc_typehints = "description"
napoleon_numpy_docstring = True
napoleon_google_docstring = False
html_theme = "alabaster"
html_title = "qkforms"
suppress_warnings = ["myst.header", "myst.xref_missing"]
