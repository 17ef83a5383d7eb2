"""Sphinx configuration of sparsetab's manual (``sphinx-build -W -b html docs docs/_build/html``).

The user guide and the benchmark pages are MyST Markdown, the API reference is generated from the
numpydoc docstrings, and the gallery is sphinx-gallery over ``examples/``. Only the examples named in
``EXECUTED_EXAMPLES`` run during the build (a few seconds each): the others fit models for minutes, so
their pages show the code and the figure committed under ``docs/images/``; tests/test_examples.py runs
them all on small inputs.
"""

import os
import re
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # the executed examples draw without a display

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the checkout's sparsetab, also without an editable install

# sphinx-gallery looks the names of every example up in sys.modules to link them, and
# sklearn.model_selection raises ImportError (not AttributeError) for HalvingGridSearchCV
# (examples/search_on_a_cluster.py) until its experimental flag has been imported.
from sklearn.experimental import enable_halving_search_cv  # noqa: E402, F401

from sparsetab import __version__  # noqa: E402

# The executed examples write their figure files here (their argument), not into examples/.
GALLERY_OUTPUT = Path(__file__).resolve().parent / "_build" / "gallery_output"

project = "sparsetab"
author = "sparsetab developers"
copyright = "2026, sparsetab developers"
version = release = __version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build"]
templates_path = ["_templates"]

# MyST: anchors for headings down to level 3, so that pages link to each other's sections.
myst_heading_anchors = 3
myst_enable_extensions = ["dollarmath"]

# The API reference: one page per public name, from the numpydoc docstrings.
autosummary_generate = True
# Inherited members, but not torch.nn.Module's, nor scikit-learn's metadata-routing setters and set_output,
# which scikit-learn documents (their docstrings refer to labels of its own manual), nor a named tuple's
# count and index. The class template (_templates/autosummary/class.rst) lists no inherited methods either.
autodoc_default_options = {"members": True, "inherited-members": "Module,_MetadataRequester,_SetOutputMixin,tuple"}
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
# Docstrings refer to parameters, shapes and scikit-learn terms in prose; only the sections are checked.
numpydoc_xref_param_type = False

# No network at build time: intersphinx inventories are read only where a local copy is given.
intersphinx_mapping = {}

EXECUTED_EXAMPLES = ["plot_entmax_maps.py"]
sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": "|".join(re.escape(os.sep + name) for name in EXECUTED_EXAMPLES),
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "matplotlib_animations": False,
    "show_memory": False,
    # The computation-times page loads its table scripts from a CDN; the manual stays readable offline.
    "write_computation_times": False,
    # Each example writes its figures to files (examples/output/); none is left open to capture.
    "image_scrapers": (),
    "reset_argv": lambda gallery_conf, script_vars: [str(GALLERY_OUTPUT)],
}

html_theme = "pydata_sphinx_theme"
html_title = f"sparsetab {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
# sparsetab.css: long API names wrap (see the file); _static/screenshots/ holds pictures of the built site.
html_static_path = ["_static"]
html_css_files = ["sparsetab.css"]
# The gallery's configuration holds a function (reset_argv), which Sphinx cannot pickle into its
# environment cache: every build re-reads the sources, which this small manual can afford.
suppress_warnings = ["config.cache"]
html_show_sourcelink = False
# The page contents list a class's members by their own names (fit, explain), not Class.fit, Class.explain.
toc_object_entries_show_parents = "hide"


def _skip_metadata_request_setters(app, what, name, obj, skip, options):
    """Leave out ``set_fit_request`` and its kin: scikit-learn makes them on every estimator class."""
    return True if re.fullmatch(r"set_\w+_request", name) else None


def setup(app):
    app.connect("autodoc-skip-member", _skip_metadata_request_setters)
