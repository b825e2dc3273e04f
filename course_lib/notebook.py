"""One setup call at the top of every notebook: ``from course_lib.notebook import setup; setup()``.

It seeds Python's and numpy's random generators, sets numpy's print precision, applies the
course's matplotlib style, and checks that the installed libraries are new enough (naming the
one that is too old). Every notebook (00-09) and every solution notebook calls it.
"""
from __future__ import annotations

import importlib
import importlib.metadata
import random

import numpy as np
from packaging.version import Version

SEED = 20240723  # the day the Llama 3 paper appeared (2024-07-23); any fixed seed would do

#: Minimum versions the notebooks are tested with (import name -> distribution, minimum).
MIN_VERSIONS = {
    "numpy": ("numpy", "1.26"),
    "scipy": ("scipy", "1.11"),
    "sympy": ("sympy", "1.12"),
    "matplotlib": ("matplotlib", "3.8"),
    "ipywidgets": ("ipywidgets", "8.1"),
}

STYLE = {
    "figure.figsize": (7.0, 4.0),
    "figure.dpi": 100,
    "savefig.dpi": 100,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": 12,
    "axes.labelsize": 11,
    "legend.frameon": False,
    "svg.hashsalt": "course",  # deterministic SVG ids
}


def check_versions(min_versions: dict | None = None) -> dict:
    """Return {distribution: installed version}; raise ImportError naming any that is too old."""
    found = {}
    for _module, (dist, minimum) in (min_versions or MIN_VERSIONS).items():
        try:
            installed = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError as exc:
            raise ImportError(f"{dist} is not installed; the course needs {dist}>={minimum} (run `make course`)") from exc
        if Version(installed) < Version(minimum):
            raise ImportError(f"{dist} {installed} is too old; the course needs {dist}>={minimum}")
        found[dist] = installed
    return found


def setup(seed: int = SEED, precision: int = 4) -> np.random.Generator:
    """Prepare a notebook: seeds, print precision, matplotlib style, version check.

    Returns a seeded ``numpy.random.Generator`` for the notebook's own draws.
    """
    check_versions()
    random.seed(seed)
    np.random.seed(seed % 2**32)
    np.set_printoptions(precision=precision, suppress=True, linewidth=100)
    import matplotlib

    matplotlib.rcParams.update(STYLE)
    return np.random.default_rng(seed)
