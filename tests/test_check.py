"""The self-check framework: right answers pass, typical mistakes get their specific hint."""
from __future__ import annotations

import math
import re

import sympy
from hypothesis import given
from hypothesis import strategies as st

from course_lib.check import Feedback, Mistake, grade, grade_expr


def test_right_answer_passes_within_tolerance():
    fb = grade(12.3, 12.0, rel_tol=0.05, unit="h", exercise="MTBF")
    assert fb.ok and bool(fb) and "Correct" in repr(fb)


def test_typical_mistake_gets_its_hint():
    fb = grade(720, 12.0, rel_tol=0.01, unit="h", mistakes=[Mistake(720, "that is minutes, the question asks for hours")])
    assert not fb.ok and "minutes" in fb.message


def test_unknown_wrong_answer_says_direction_and_factor():
    fb = grade(30.0, 10.0, rel_tol=0.01)
    assert not fb.ok and "too high by a factor of 3" in fb.message


def test_non_numbers_and_placeholders_get_form_hints():
    assert "no answer yet" in grade(..., 1.0).message
    assert "expected a number" in grade("twelve", 1.0).message
    assert "finite" in grade(float("nan"), 1.0).message


# The rule grade() states (course_lib/check/__init__.py, _close): math.isclose, |a - b| <= tol x max(|a|, |b|).
# For an answer a = x f or a = x / f (f > 1) that is the same condition on the ratio: f <= 1 / (1 - tol).
# So the first factor outside is 1 / (1 - tol) = 1 + tol + tol^2 + ..., just above 1 + tol (1.0101 at 1 %).
def _edge(tol):
    return 1.0 / (1.0 - tol)


@st.composite
def outside(draw):
    """A tolerance and a factor outside it: the learner's near-misses (just past the edge, up to 1.5) or far off."""
    tol = draw(st.floats(1e-4, 0.2))
    near = st.floats(_edge(tol) * (1 + 1e-9), 1.5)  # 1e-9: far above the ~1e-16 rounding of x * f
    return tol, draw(st.one_of(near, st.floats(1.5, 100.0)))


def _factor_said(message, direction):
    m = re.search(rf"is {direction} by a factor of ([0-9.e+]+):", message)
    assert m, message
    return float(m.group(1))


@given(st.floats(1e-6, 1e6), outside())
def test_scaled_answers_are_never_accepted(x, tol_factor):
    tol, factor = tol_factor
    for answer, direction in ((x * factor, "too high"), (x / factor, "too low")):
        fb = grade(answer, x, rel_tol=tol)
        assert not fb.ok and fb.verdict == "Not yet"
        # the factor is said to 3 significant digits: within half a unit of its third digit
        said = _factor_said(fb.message, direction)
        assert abs(said - factor) <= 0.5 * 10 ** (math.floor(math.log10(factor)) - 2) * (1 + 1e-9), (said, factor)
    assert grade(x * (1 + 0.001), x, rel_tol=0.01).ok


@given(st.floats(1e-6, 1e6), st.floats(1e-4, 0.2), st.floats(0.0, 0.99))
def test_answers_inside_the_tolerance_are_accepted_from_either_side(x, tol, share):
    factor = 1 + share * tol  # inside under either reading of "within tol": |a - x| <= tol x or <= tol max(a, x)
    for answer in (x * factor, x / factor):
        fb = grade(answer, x, rel_tol=tol)
        assert fb.ok and fb.verdict == "Correct" and f"within {100 * tol:.2g}%" in fb.message


def test_the_tolerance_edge_by_hand():
    """At 1 % of 100, by math.isclose's rule (the tolerance times the larger of the two): 99 and 101.01 pass,
    98.99 and 101.02 do not. A high answer may be tol / (1 - tol) = 1.0101 % above the right one, a low one 1 % below."""
    for answer, ok in ((99.0, True), (98.99, False), (101.0, True), (101.01, True), (101.02, False)):
        assert grade(answer, 100.0, rel_tol=0.01).ok is ok, answer
    # the near-misses are told their direction and factor (1.0102 to 3 digits)
    assert "98.99 is too low by a factor of 1.01:" in grade(98.99, 100.0, rel_tol=0.01).message
    assert "101 is too high by a factor of 1.01:" in grade(101.02, 100.0, rel_tol=0.01).message
    # a right answer of 0: the tolerance is absolute
    assert grade(0.01, 0.0, rel_tol=0.01).ok and grade(-0.01, 0.0, rel_tol=0.01).ok
    assert not grade(0.0101, 0.0, rel_tol=0.01).ok and not grade(-0.0101, 0.0, rel_tol=0.01).ok


def test_a_mistake_inside_the_tolerance_narrows_it_to_half_the_gap():
    """A mistake 0.4 % above the right answer, at 1 %: the tolerance becomes 0.2 % (separating_tolerance), so
    100.19 passes, 100.21 is named as the mistake (within 0.2 % of 100.4, and only 0.4 % from the right answer),
    99.79 is too low; the mistake itself is never accepted."""
    m = Mistake(100.4, "you rounded the step")
    for answer, ok in ((100.0, True), (100.19, True), (99.81, True), (100.21, False), (99.79, False), (100.4, False)):
        assert grade(answer, 100.0, rel_tol=0.01, mistakes=[m]).ok is ok, answer
    fb = grade(100.21, 100.0, rel_tol=0.01, mistakes=[m])
    assert fb.message.startswith("you rounded the step") and "by only 0.4 %" in fb.message
    assert "within 0.2%" in grade(100.19, 100.0, rel_tol=0.01, mistakes=[m]).message
    assert "too low by a factor of 1" in grade(99.79, 100.0, rel_tol=0.01, mistakes=[m]).message
    far = Mistake(103.0, "far")  # 3 % away: outside twice the tolerance, nothing narrowed
    assert grade(100.9, 100.0, rel_tol=0.01, mistakes=[far]).ok and grade(99.1, 100.0, rel_tol=0.01, mistakes=[far]).ok


def test_symbolic_grading():
    d, M = sympy.symbols("delta M", positive=True)
    right = sympy.sqrt(2 * d * M)
    assert grade_expr(sympy.sqrt(2) * sympy.sqrt(d) * sympy.sqrt(M), right).ok
    fb = grade_expr(sympy.sqrt(d * M), right, mistakes=[(sympy.sqrt(d * M), "lost the factor 2 from the mean rewind tau/2")])
    assert not fb.ok and "factor 2" in fb.message
    for placeholder in (None, ...):  # not yet answered: not accepted, and told so
        fb = grade_expr(placeholder, right, exercise="Young")
        assert isinstance(fb, Feedback) and not fb.ok and "no answer yet" in fb.message and fb.exercise == "Young"
    fb = grade_expr(object(), right)
    assert not fb.ok and "expected a sympy expression" in fb.message
    fb = grade_expr(2 * d * M, right, fallback="redo the square root")  # a wrong answer no hint foresaw
    assert not fb.ok and "redo the square root" in fb.message



def test_verdict_is_a_word_in_colour_not_an_emoji():
    right, wrong = grade(12.0, 12.0, unit="h", exercise="02.2"), grade(720.0, 12.0, unit="h", exercise="02.2")
    assert right.verdict == "Correct" and wrong.verdict == "Not yet"
    r, w = right._repr_html_(), wrong._repr_html_()
    assert ">Correct</strong>" in r and ">Not yet</strong>" in w
    assert "#1a7f37" in r and "#b8400b" in w  # green, red-orange
    assert "course-feedback-correct" in r and "course-feedback-not-yet" in w
    assert not any(ord(ch) > 0x2FFF for ch in r + w), "no emoji: a machine without an emoji font shows a box"
    assert "&lt;" in Feedback(False, "a < b")._repr_html_()  # the message is escaped


def test_form_messages_name_the_stub_and_the_unit():
    assert "raise NotImplementedError" in grade(None, 1.0).message
    assert "`...`" not in grade(None, 1.0).message
    assert "expected a finite number (in min), got nan" in grade(float("nan"), 1.0, unit="min").message
