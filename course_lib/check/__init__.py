"""Self-checks for the exercises: one call per exercise, a specific hint for a wrong answer.

The solution notebooks (``solutions/NN-slug-sol.ipynb``) and the exercise notebooks generated
from them call e.g. ``from course_lib.check import nb01; nb01.llama3_rate(my_answer)``. A check
returns a :class:`Feedback`, shown in the notebook as a verdict in words and colour
(*Correct* in green, *Not yet* in red-orange: readable without an emoji font) above its
one-line message. A wrong answer is compared
with the *typical* wrong answers of that exercise (a factor of 60 for minutes vs hours, the
printed Table 5 percentage instead of the count, a rewind of the whole interval instead of
half of it, ...), each computed from the right inputs, so the hint names the mistake instead
of only saying "wrong". A mistake can sit close to the right answer (in notebook 12 the detection
stage's 10.0 min/day lies 0.3 % from the in-memory checkpoint's 9.97): the check then narrows its
tolerance to half that gap (:func:`separating_tolerance`), so the mistake is named, never accepted.

Framework here; one module per notebook (``nb01.py``, ``nb02.py``, ...) holds its exercises.
"""
from __future__ import annotations

import html
import math
import numbers
from dataclasses import dataclass, field

__all__ = ["Feedback", "Mistake", "grade", "grade_expr", "separating_tolerance", "NO_ANSWER_YET", "NO_TYPED_ANSWER"]

#: The message for an exercise whose stub has not been replaced yet (its ``answer`` is None).
NO_ANSWER_YET = "no answer yet: replace the `raise NotImplementedError(...)` line in the cell above with your code, then run this check again"

#: The message for a typed-in answer (notebook 12's drill) that is still None.
NO_TYPED_ANSWER = ("no answer yet: put your number in place of None in the cell above (or replace its "
                   "`raise NotImplementedError(...)` line with your code), then run this check again")

#: Verdict word, text colour and background of the HTML verdict (WCAG AA contrast on the background).
_VERDICTS = {True: ("Correct", "#1a7f37", "#e9f6ec"), False: ("Not yet", "#b8400b", "#fdf0e8")}


@dataclass(frozen=True)
class Feedback:
    """The verdict of a self-check: ``ok`` and a one-line message (a hint when not ok)."""

    ok: bool
    message: str
    exercise: str = ""

    def __bool__(self) -> bool:
        return self.ok

    def __repr__(self) -> str:
        mark = "Correct" if self.ok else "Not yet"
        prefix = f"[{self.exercise}] " if self.exercise else ""
        return f"{prefix}{mark}: {self.message}"

    @property
    def verdict(self) -> str:
        """The verdict in words: ``"Correct"`` or ``"Not yet"``."""
        return _VERDICTS[bool(self.ok)][0]

    def _repr_html_(self) -> str:
        """The verdict as JupyterLab and the course website show it: a word in colour, then the message."""
        word, colour, background = _VERDICTS[bool(self.ok)]
        state = "correct" if self.ok else "not-yet"
        name = f' <span style="color:#444;font-weight:normal">({html.escape(self.exercise)})</span>' if self.exercise else ""
        return (
            f'<div class="course-feedback course-feedback-{state}" role="status" '
            f'style="border-left:6px solid {colour};background:{background};color:#1f2328;padding:0.4em 0.8em;margin:0.2em 0">'
            f'<strong style="color:{colour}">{word}</strong>{name}: {html.escape(self.message)}</div>'
        )


@dataclass(frozen=True)
class Mistake:
    """A typical wrong answer: the value it produces and the hint that names it."""

    value: float
    hint: str
    rel_tol: float | None = None  # defaults to the exercise's tolerance


@dataclass(frozen=True)
class _Spec:
    exercise: str
    expected: float
    rel_tol: float
    unit: str
    mistakes: tuple = field(default_factory=tuple)


def _close(a: float, b: float, rel_tol: float) -> bool:
    if b == 0:
        return abs(a) <= rel_tol
    return math.isclose(a, b, rel_tol=rel_tol)


def _gap(value: float, expected: float) -> float:
    """Relative distance of ``value`` from ``expected`` (absolute when ``expected`` is 0)."""
    return abs(value - expected) / (abs(expected) if expected != 0 else 1.0)


def separating_tolerance(expected: float, rel_tol: float, mistakes=()) -> float:
    """The tolerance a check applies: ``rel_tol``, narrowed to half the relative gap to any anticipated
    mistake closer than twice it, so that no answer is both accepted and nearer to a mistake.

    A mistake equal to the right answer is not a mistake and narrows nothing."""
    tol = rel_tol
    for m in mistakes:
        gap = _gap(m.value, expected)
        if 0 < gap < 2 * tol:
            tol = gap / 2
    return tol


def grade(answer, expected: float, *, rel_tol: float = 0.01, unit: str = "", mistakes=(), exercise: str = "") -> Feedback:
    """Compare a numeric ``answer`` with ``expected`` (relative tolerance ``rel_tol``).

    Right: ``Feedback(ok=True)``. Wrong: the first matching :class:`Mistake` gives its hint;
    otherwise the hint says how far off the answer is (ratio and direction), which is still
    more than "wrong". A non-number gets a hint about the expected form. An anticipated mistake
    within ``rel_tol`` of the right answer narrows the tolerance (:func:`separating_tolerance`):
    it is named, not accepted, and its hint says how close the two are.
    """
    rel_tol = separating_tolerance(expected, rel_tol, mistakes)
    unit_txt = f" {unit}" if unit else ""
    in_unit = f" (in {unit})" if unit else ""
    if answer is None or answer is Ellipsis:
        return Feedback(False, NO_ANSWER_YET, exercise)
    if isinstance(answer, bool) or not isinstance(answer, numbers.Real):
        try:
            answer = float(answer)
        except (TypeError, ValueError):
            return Feedback(False, f"expected a number{in_unit}, got {type(answer).__name__} {answer!r}", exercise)
    answer = float(answer)
    if not math.isfinite(answer):
        return Feedback(False, f"expected a finite number{in_unit}, got {answer!r}: check for a division by zero or a missing value", exercise)
    if _close(answer, expected, rel_tol):
        return Feedback(True, f"{answer:.4g}{unit_txt} (expected {expected:.4g}{unit_txt} within {100 * rel_tol:.2g}%)", exercise)
    for m in mistakes:
        if _close(answer, m.value, m.rel_tol if m.rel_tol is not None else rel_tol):
            gap = _gap(m.value, expected)
            if 0 < gap < 0.01:  # so close that a rounded right answer looks like it
                return Feedback(False, f"{m.hint} (the right answer differs from {m.value:.4g}{unit_txt} by only "
                                f"{100 * gap:.2g} %: if you rounded yours, give more digits)", exercise)
            return Feedback(False, m.hint, exercise)
    if expected != 0 and answer != 0 and (answer > 0) == (expected > 0):
        ratio = answer / expected
        direction = "too high" if ratio > 1 else "too low"
        factor = ratio if ratio > 1 else 1 / ratio
        return Feedback(False, f"{answer:.4g}{unit_txt} is {direction} by a factor of {factor:.3g}: check the units and each input", exercise)
    return Feedback(False, f"{answer:.4g}{unit_txt} has the wrong sign or is zero: check the formula", exercise)


def grade_expr(answer, expected, *, symbols=(), mistakes=(), exercise: str = "",
               fallback: str = "is not the expected expression: redo the algebra step by step") -> Feedback:
    """Compare a sympy expression with ``expected`` symbolically (``simplify(a - b) == 0``).

    ``mistakes`` is a sequence of (wrong_expression, hint) pairs; ``fallback`` finishes the
    message for any other wrong expression (say what the learner should redo).
    """
    import sympy

    if answer is None or answer is Ellipsis:
        return Feedback(False, NO_ANSWER_YET.replace("your code", "your code (a sympy expression)"), exercise)
    try:
        a = sympy.sympify(answer)
    except (sympy.SympifyError, TypeError):
        return Feedback(False, f"expected a sympy expression, got {answer!r}", exercise)
    if sympy.simplify(a - expected) == 0:
        return Feedback(True, f"{sympy.sstr(a)} equals {sympy.sstr(expected)}", exercise)
    for wrong, hint in mistakes:
        if sympy.simplify(a - wrong) == 0:
            return Feedback(False, hint, exercise)
    return Feedback(False, f"{sympy.sstr(a)} {fallback}", exercise)


from ._common import registry  # noqa: E402  (after the names _common imports from here)

__all__ += ["registry"]
