"""One setup call at the top of every notebook: ``from course_lib.notebook import setup; setup()``.

It seeds Python's and numpy's random generators, sets numpy's print precision, applies the
course's matplotlib style, and checks that the installed libraries are new enough (naming the
one that is too old). Every notebook (00-09) and every solution notebook calls it.

:func:`predict` locks a learner's guess before a result is revealed (notebooks 00, 03, 04, 08);
with no guess typed the notebook runs as before.
"""
from __future__ import annotations

import importlib
import importlib.metadata
import math
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


# --------------------------------------------------------------------------------------
# A prediction locked before the reveal (notebooks 00, 03, 04, 08)
# --------------------------------------------------------------------------------------
#: No guess typed: the notebook runs as it always did (papermill, nbval) and the reveal says so.
NO_GUESS = ("No guess locked: type yours into `my_guess` in the prediction cell above and run it before this cell "
            "(the result is shown here either way).")

_LOCKED: dict = {}  # {key: Prediction} of this kernel: a guess made before its reveal


class Prediction:
    """A guess locked before its reveal (made by :func:`predict`; shown by :meth:`reveal`).

    Before the reveal a new :func:`predict` call may change the guess (you may change your mind);
    after it the first guess stays: a value typed once the result is on screen is not counted.
    """

    def __init__(self, key: str, guess=None, unit: str = ""):
        self.key, self.guess, self.unit = key, guess, unit
        self.revealed = False
        self.refused = None  # a guess typed after the reveal, kept out

    def reveal(self, result, ranking=None) -> "Reveal":
        """Guess against ``result`` and how far off it was; locks the guess for good.

        ``result`` is a number (compared by difference and factor) or a choice (a string;
        ``ranking``, the choices best first, says where the guess ranks).
        """
        self.revealed = True
        return Reveal(self.guess, result, self.unit, tuple(ranking) if ranking is not None else None, self.refused)


def predict(key: str, guess=None, unit: str = "") -> Prediction:
    """Lock ``guess`` (a number, a string choice, or None for no guess) under ``key`` before the reveal.

    In a notebook: a cell ``my_guess = None`` (the learner types a value) and
    ``guess = predict("00.loss", my_guess, "% of the day")``, then, after the result,
    ``guess.reveal(result)``. With no guess the reveal prints :data:`NO_GUESS` and the result.
    """
    if guess is not None and not isinstance(guess, str):
        try:
            guess = float(guess)
        except (TypeError, ValueError):
            raise ValueError(f"guess must be a number, a string or None (got {guess!r})") from None
    p = _LOCKED.get(key)
    if p is not None and p.revealed:
        if guess is not None and guess != p.guess:
            p.refused = guess
        return p
    p = Prediction(key, guess, unit)
    _LOCKED[key] = p
    return p


class Reveal:
    """The reveal's line: the guess against the result (its ``repr`` is what the notebook prints)."""

    def __init__(self, guess, result, unit="", ranking=None, refused=None):
        self.guess, self.result, self.unit, self.ranking, self.refused = guess, result, unit, ranking, refused

    def _num(self, x) -> str:
        return f"{x:.3g}" + (f" {self.unit}" if self.unit else "")

    @property
    def off(self):
        """(difference, factor) of a numeric guess against the result; None for a choice or no guess."""
        if self.guess is None or isinstance(self.result, str) or isinstance(self.guess, str):
            return None
        g, r = float(self.guess), float(self.result)
        factor = max(g, r) / min(g, r) if g > 0 and r > 0 else float("nan")
        return g - r, factor

    def __repr__(self) -> str:
        if isinstance(self.result, str):
            shown = f"The result: {self.result}."
        else:
            shown = f"The result: {self._num(float(self.result))}."
        if self.guess is None:
            text = f"{NO_GUESS} {shown}"
        elif isinstance(self.result, str):
            g = str(self.guess).strip().lower()
            if g == self.result.strip().lower():
                text = f"Your guess: {self.guess}. {shown} Right."
            else:
                rank = ""
                if self.ranking:
                    lowered = [c.strip().lower() for c in self.ranking]
                    rank = (f" Your pick ranks {lowered.index(g) + 1} of {len(lowered)}." if g in lowered
                            else f" Your pick is not one of: {', '.join(self.ranking)}.")
                text = f"Your guess: {self.guess}. {shown} Not it.{rank}"
        else:
            diff, factor = self.off
            if abs(diff) <= 0.005 * abs(float(self.result)):
                how = "spot on (within 0.5 %)"
            else:
                how = f"{self._num(abs(diff))} too {'high' if diff > 0 else 'low'}"
                if math.isfinite(factor):
                    how += f", off by a factor {factor:.2g}"
            text = f"Your guess: {self._num(float(self.guess))}. {shown} You were {how}."
        if self.refused is not None:
            text += f" (Locked before the reveal: {self.refused!r}, typed afterwards, is not counted.)"
        return text
