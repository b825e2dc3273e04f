"""Shared pieces of the per-notebook self-checks (``nb01.py``, ``nb02.py``, ...).

A :class:`NumberCheck` is one graded number (expected value, tolerance, unit, typical
mistakes); an :class:`ExprCheck` is one graded sympy expression. Both are plain data, so
``tests/test_check_nb01_03.py`` can iterate over every exercise's expected value and
mistakes and prove that each mistake gets its own hint. :func:`combine` merges the parts of
a multi-part exercise (a rate and its interval) into one :class:`Feedback`.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from tokenize import TokenError

from . import NO_ANSWER_YET, Feedback, Mistake, grade, grade_expr

__all__ = ["NumberCheck", "ExprCheck", "combine", "pair"]


@dataclass(frozen=True)
class NumberCheck:
    """One graded number: ``check(answer)`` returns the :class:`Feedback` of :func:`grade`."""

    exercise: str
    expected: float
    rel_tol: float
    unit: str = ""
    mistakes: tuple[Mistake, ...] = field(default_factory=tuple)

    def __call__(self, answer) -> Feedback:
        return grade(answer, self.expected, rel_tol=self.rel_tol, unit=self.unit, mistakes=self.mistakes, exercise=self.exercise)


@dataclass(frozen=True)
class ExprCheck:
    """One graded sympy expression, compared symbolically with ``expected``.

    The learner's symbols are matched to the expected ones *by name* first (a ``Symbol('N')``
    without assumptions counts as the expected ``Symbol('N', positive=True)``), so only the
    names in the task matter. ``mistakes`` are (wrong expression, hint) pairs; ``fallback`` is
    the hint for any other wrong expression.
    """

    exercise: str
    expected: object
    mistakes: tuple = field(default_factory=tuple)
    fallback: str = "not yet: write the model step by step in sympy and simplify"

    def _by_name(self, answer):
        import sympy

        named = {s.name: s for s in self.expected.free_symbols}
        try:
            if isinstance(answer, str):  # a string may name "lambda", a Python keyword for sympify
                from sympy.parsing.sympy_parser import parse_expr

                expr = parse_expr(answer.replace("lambda", "lambda_"), local_dict={k.replace("lambda", "lambda_"): v for k, v in named.items()})
            else:
                expr = sympy.sympify(answer)
        except (sympy.SympifyError, TypeError, AttributeError, SyntaxError, ValueError, TokenError):
            return answer
        if not isinstance(expr, sympy.Basic):
            return answer
        return expr.xreplace({s: named[s.name] for s in expr.free_symbols if getattr(s, "name", None) in named})

    def __call__(self, answer) -> Feedback:
        if answer is None or answer is Ellipsis:
            return grade_expr(answer, self.expected, exercise=self.exercise)
        if isinstance(answer, numbers.Number) or (getattr(answer, "is_number", False) and self.expected.free_symbols):
            names = ", ".join(sorted(s.name for s in self.expected.free_symbols))
            return Feedback(False, f"expected a sympy expression in the symbols {names}, got the number {answer}: "
                            "keep the symbols, do not put numbers in", self.exercise)
        if isinstance(answer, (list, tuple, set, dict)):
            return Feedback(False, f"expected one sympy expression, got a {type(answer).__name__} of {len(answer)}: "
                            "sp.solve returns a list, so take the root you want, e.g. sp.solve(...)[0]", self.exercise)
        fb = grade_expr(self._by_name(answer), self.expected, mistakes=self.mistakes, exercise=self.exercise)
        if fb.ok or fb.message in {hint for _, hint in self.mistakes} or fb.message.startswith("expected a sympy"):
            return fb
        import sympy

        return Feedback(False, f"{sympy.sstr(self._by_name(answer))}: {self.fallback}", self.exercise)


def pair(answer, name: str):
    """``answer`` as a (low, high) pair of floats, or a Feedback-ready hint string when it is not one."""
    if answer is None or answer is Ellipsis:
        return f"{name}: {NO_ANSWER_YET} (it sets {name} to a pair (low, high))"
    try:
        low, high = answer
        low, high = float(low), float(high)
    except (TypeError, ValueError):
        return f"{name} must be a pair (low, high) of numbers, got {answer!r}"
    if not low < high:
        return f"{name} must have low < high, got ({low:.4g}, {high:.4g})"
    return low, high


def combine(exercise: str, parts) -> Feedback:
    """One verdict for a multi-part answer: the first wrong part's hint, named; or all correct.

    ``parts`` is a sequence of (part name, Feedback).
    """
    for name, fb in parts:
        if not fb.ok:
            return Feedback(False, f"{name}: {fb.message}", exercise)
    return Feedback(True, "; ".join(f"{name} {fb.message}" for name, fb in parts), exercise)
