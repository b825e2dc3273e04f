"""The self-check framework: right answers pass, typical mistakes get their specific hint."""
from __future__ import annotations

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


@given(st.floats(1e-6, 1e6), st.floats(1.5, 100))
def test_scaled_answers_are_never_accepted(x, factor):
    assert not grade(x * factor, x, rel_tol=0.01).ok
    assert grade(x * (1 + 0.001), x, rel_tol=0.01).ok


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
