"""Sphinx + MyST-NB configuration of the course site (issue 13).

Build (from the repository root; every lesson notebook is executed at build time, in smoke mode):

    python -m sphinx -b html -c docs/site . site

The site is made of docs/site/*.md (landing page, glossary, references), the guide's pages docs/guide/*.md (the
toolkit: what the README links) and notebooks/*.ipynb.
"""

project = "grpo-lab"
author = "the grpo-lab maintainers"
copyright = "2026, the grpo-lab maintainers"

# MathJax 3 from a Python package (sphinx-mathjax-offline), copied into the site: formulas render with no
# network. Only the Jupyter widget manager still comes from a CDN (a widget then shows its static figure).
extensions = ["myst_nb", "sphinx-mathjax-offline"]
root_doc = "docs/site/index"
# docs/*.md and the studies' plans and reports (docs/results/**/*.md) are pages too: the guide links them.
include_patterns = ["docs/site/*.md", "docs/guide/*.md", "docs/*.md", "docs/results/*.md", "docs/results/**/*.md",
                    "notebooks/*.ipynb"]
# The widget manager comes from a public CDN when the site is read online; tests/test_site.py blocks the
# network and allows exactly that script (and require.js for it) to fail to load.
exclude_patterns = ["site", ".venv", "**/.ipynb_checkpoints"]

myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3

# The lessons in notebooks/ are committed executed (scripts/build_notebooks.py --execute, smoke mode, CPU) with a
# hash of what produced their outputs, and a test fails when that hash is stale; CI executes every lesson with its
# exercises solved (nbval on solutions/). So the site renders the committed outputs instead of executing each
# lesson a third time (issue 29).
nb_execution_mode = "off"
nb_execution_timeout = 900
nb_execution_raise_on_error = True  # a failing assertion in a lesson fails the build
nb_merge_streams = True

html_theme = "sphinx_book_theme"
html_title = "grpo-lab: gradient starvation in GRPO"
html_theme_options = {"show_toc_level": 2, "use_download_button": True}
html_static_path = ["_static"]  # relative to this directory
html_css_files = ["grpo-lab.css"]
html_favicon = "favicon.png"  # relative to this directory; without one the browser asks for /favicon.ico
html_context = {"default_mode": "light"}
suppress_warnings = ["mystnb.unknown_mime_type"]
