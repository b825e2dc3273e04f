"""Sphinx configuration of the course website (`make course` -> build/site/index.html).

scripts/build_site.py copies this folder, the executed notebooks, the exercises, the solutions,
ANSWER_SHEET.md and SOURCES.md into a staging folder, writes the home page (index.md) and
runs Sphinx on it. Nothing is executed here (``nb_execution_mode = "off"``): the pages show
the outputs the notebooks were committed (or `make course` ran them) with. Nothing is fetched
from the internet either: MathJax is served from the site itself (sphinx-mathjax-offline) and
the widget manager / require.js that myst-nb would load from a CDN are switched off.
"""
project = "Restarts at scale"
author = "the course authors"
copyright = "the course authors, MIT licence"

extensions = [
    "myst_nb",  # notebooks and MyST markdown pages
    "sphinx-mathjax-offline",  # MathJax 3 copied into _static/mathjax (no CDN)
]

root_doc = "index"
exclude_patterns = ["_build", "**/src/**", "**/.ipynb_checkpoints/**"]
suppress_warnings = ["misc.highlighting_failure"]

# --- notebooks: shown as committed, never executed for the site
nb_execution_mode = "off"
nb_ipywidgets_js = {}  # no require.js / widget manager from a CDN; interactive cells carry a note instead
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath", "html_image"]
myst_heading_anchors = 3
myst_dmath_double_inline = True

# --- theme: sphinx-book-theme (sidebar table of contents, previous/next at the foot of each page)
html_theme = "sphinx_book_theme"
html_title = "Restarts at scale"
html_static_path = ["_static"]
html_css_files = ["course.css"]
html_js_files = ["course.js"]  # the drill's answer-first reveal, figure enlargement (no library, no network)
html_show_sourcelink = False
html_copy_source = False
html_last_updated_fmt = None
html_theme_options = {
    "show_toc_level": 2,
    "show_navbar_depth": 1,
    "use_download_button": False,
    "use_fullscreen_button": False,
    "home_page_in_toc": True,
    "navigation_with_keys": False,
}
nb_render_markdown_format = "myst"  # markdown outputs (notebook 12's follow-ups) resolve their links to other pages
