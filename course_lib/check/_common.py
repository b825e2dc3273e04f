"""Shared pieces of the per-notebook self-checks (``nb01.py``, ``nb02.py``, ...).

A :class:`NumberCheck` is one graded number (expected value, tolerance, unit, typical
mistakes); an :class:`ExprCheck` is one graded sympy expression. Both are plain data.

Each exercise is declared once, by :func:`exercise` on the function that builds its check:

    @exercise
    def shard_gib() -> NumberCheck:  # its docstring says the task, for help(nb05.shard_gib)
        return NumberCheck("05.1 shard per GPU", expected, rel_tol, "GiB", mistakes)

registers that builder as ``REGISTRY["nb05.shard_gib"]`` and binds ``nb05.shard_gib`` to the
learner's check, ``nb05.shard_gib(answer) -> Feedback`` (``nb05.shard_gib.spec()`` builds the
:class:`NumberCheck`). :func:`registry` imports every ``nbNN`` module and returns them all, so
the generic tests (tests/test_check_nb01_03.py) reach every exercise: none can escape them.
:func:`combine` merges the parts of a multi-part exercise (a rate and its interval) into one
:class:`Feedback`.
"""
from __future__ import annotations

import functools
import importlib
import inspect
import numbers
import pkgutil
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from tokenize import TokenError

from . import NO_ANSWER_YET, NO_TYPED_ANSWER, Feedback, Mistake, _gap, grade, grade_expr, separating_tolerance

__all__ = ["NumberCheck", "ExprCheck", "REGISTRY", "exercise", "registry", "combine", "pair"]


@dataclass(frozen=True)
class NumberCheck:
    """One graded number: ``check(answer)`` returns the :class:`Feedback` of :func:`grade`.

    ``mistakes`` are the anticipated wrong answers, the likeliest first. Two that give the same
    number (at some scenario a whole stage and another stage can coincide) become one whose hint
    names both, since no answer could tell them apart; one equal to the right answer is dropped
    (it is not a mistake there). ``tolerance`` is what the check applies: ``rel_tol`` narrowed so
    that no anticipated mistake is accepted (:func:`~course_lib.check.separating_tolerance`).
    """

    exercise: str
    expected: float
    rel_tol: float
    unit: str = ""
    mistakes: tuple[Mistake, ...] = field(default_factory=tuple)

    def __post_init__(self):
        merged: list[Mistake] = []
        for m in self.mistakes:
            if _gap(m.value, self.expected) < 1e-12:
                continue
            twin = next((i for i, k in enumerate(merged) if _gap(m.value, k.value) < 1e-9), None)
            if twin is None:
                merged.append(m)
            else:
                merged[twin] = Mistake(merged[twin].value, f"{merged[twin].hint}; or else {m.hint}", merged[twin].rel_tol)
        object.__setattr__(self, "mistakes", tuple(merged))

    @property
    def tolerance(self) -> float:
        """The relative tolerance applied: ``rel_tol``, or less where an anticipated mistake sits inside it."""
        return separating_tolerance(self.expected, self.rel_tol, self.mistakes)

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


Check = NumberCheck | ExprCheck
Spec = Check | Mapping[str, Check]  # one graded answer, or the parts of a multi-part one

REGISTRY: dict[str, Callable[[], Spec]] = {}
"""Every declared exercise's builder by ``"nbNN.name"``, filled as the modules are imported (see :func:`registry`)."""


def exercise(builder: Callable[[], Spec] | None = None, *, grade: Callable[..., Feedback] | None = None):
    """Declare an exercise: register ``builder`` under ``"nbNN.name"`` and return its public check.

    ``builder()`` takes nothing and returns the exercise's :class:`NumberCheck` or
    :class:`ExprCheck`; the returned function is ``name(answer) -> Feedback``. A builder with a
    ``scenario`` parameter (default None: the course's) is graded at the learner's scenario:
    ``name(answer, scenario)``, an answer typed into a notebook cell (notebook 12's drill). A multi-part
    exercise returns ``{part: check}`` and names a ``grade(parts, *answers) -> Feedback`` that
    combines them (``@exercise(grade=...)``); its public check takes the answers. Either way the
    check keeps the builder's name and docstring, and ``name.spec`` is the builder.
    """
    if builder is None:
        return functools.partial(exercise, grade=grade)
    key = f"{builder.__module__.rsplit('.', 1)[-1]}.{builder.__name__}"

    if grade is None and "scenario" in inspect.signature(builder).parameters:
        def check(answer, scenario=None) -> Feedback:  # graded at the learner's scenario (notebook 12)
            if answer is None or answer is Ellipsis:
                spec = builder(scenario)
                return Feedback(False, NO_TYPED_ANSWER, spec.exercise)
            return builder(scenario)(answer)
    elif grade is None:
        def check(answer) -> Feedback:
            return builder()(answer)
    else:
        def check(*answers) -> Feedback:
            return grade(builder(), *answers)

        params = list(inspect.signature(grade).parameters.values())[1:]
        check.__signature__ = inspect.Signature(params, return_annotation=Feedback)
    functools.update_wrapper(check, builder, assigned=("__module__", "__name__", "__qualname__", "__doc__"), updated=())
    del check.__wrapped__  # its signature is the learner's, not the builder's ()
    check.spec = builder
    check.key = key
    REGISTRY[key] = builder
    return check


def registry() -> dict[str, Callable[[], Spec]]:
    """{"nbNN.name": builder} of every exercise, after importing every ``course_lib/check/nbNN.py``."""
    package = __name__.rsplit(".", 1)[0]
    for m in pkgutil.iter_modules(importlib.import_module(package).__path__):
        if re.fullmatch(r"nb\d\d", m.name):
            importlib.import_module(f"{package}.{m.name}")
    return dict(sorted(REGISTRY.items()))
