"""Notebook 12's scoring points: a wrong answer that sits next to the right one is named, not accepted.

The walk-through typed 10 for scoring point 2 (the detection stage's 10.0 min/day, also the whole
rewind stage) and was told "Correct", because it lies within 1 % of the in-memory checkpoint's 9.97.
"""
from __future__ import annotations

import pytest

from course_lib import Scenario
from course_lib.answer import answer
from course_lib.check import Mistake, grade, nb12, separating_tolerance


def test_scoring_point_2_rejects_the_wrong_lever_next_to_the_right_one():
    a = answer(spread_draws=0)
    right = a.steps[0].saved_minutes_per_day
    parts = a.baseline.breakdown()
    # the walk-through's mistake: a whole stage typed as the first lever's saving (at the numbers of the time,
    # the detection stage's 10.0 min/day, within 1 % of the right 9.97: the narrowed tolerance is tested below)
    for stage in {st.lever.stage for st in a.steps}:
        fb = nb12.first_lever_saving(parts[stage])
        assert not fb.ok and "whole" in fb.message and stage in fb.message, (stage, fb.message)
        if abs(parts[stage] / right - 1) < 0.01:
            assert "give more digits" in fb.message
    assert not nb12.first_lever_saving(10).ok
    assert nb12.first_lever_saving(round(right, 2)).ok and nb12.first_lever_saving(round(right, 3)).ok
    # every other lever, picked first, is named as the wrong lever
    base = a.steps[0].before
    for step in a.steps[1:]:
        wrong = nb12.first_lever_saving(step.lever.saving(base))
        assert not wrong.ok and step.lever.name in wrong.message and a.steps[0].lever.name in wrong.message


@pytest.mark.parametrize("n_gpus", [4096, 16384])
def test_each_scoring_point_names_at_least_three_likely_mistakes_at_any_fleet(n_gpus):
    s = Scenario().replace(n_gpus=n_gpus)
    for name in nb12.__all__:
        check = getattr(nb12, name).spec(s)
        assert len(check.mistakes) >= 3, name
        for m in check.mistakes:
            fb = getattr(nb12, name)(m.value, s)
            assert not fb.ok and fb.message.startswith(m.hint), (name, m.value, fb.message)
        assert getattr(nb12, name)(check.expected, s).ok


def test_a_mistake_inside_the_tolerance_narrows_it_to_half_the_gap():
    near = Mistake(10.0, "the detection stage")
    assert separating_tolerance(9.97, 0.01, [near]) == pytest.approx(abs(10.0 - 9.97) / 9.97 / 2)
    assert separating_tolerance(9.97, 0.01, [Mistake(12.0, "far")]) == 0.01
    assert separating_tolerance(9.97, 0.01, [Mistake(9.97, "equal: not a mistake")]) == 0.01
    assert not grade(10.0, 9.97, mistakes=[near]).ok
    assert grade(9.975, 9.97, mistakes=[near]).ok
    assert grade(9.98, 9.97).ok  # without the anticipated mistake the 1 % stands


def test_two_mistakes_with_one_value_become_one_naming_both():
    from course_lib.check._common import NumberCheck

    c = NumberCheck("x", 9.97, 0.01, "min/day", (Mistake(10.0, "the detect stage"), Mistake(10.0, "the rewind stage"),
                                                  Mistake(9.97, "not a mistake")))
    assert len(c.mistakes) == 1 and "the detect stage" in c.mistakes[0].hint and "the rewind stage" in c.mistakes[0].hint
