"""Self-checks of notebook 07: computed from the committed restart benchmark, typical slips named.

(The generic tests of tests/test_check_nb01_03.py already prove that every listed mistake gets its own hint.)
"""
from __future__ import annotations

import sympy

from course_lib.check import nb07
from course_lib.faultlab import load_benchmark


def test_best_single_lever_is_the_largest_one_lever_saving():
    bench = load_benchmark()
    base = bench.medians[("hang", "default-like")]["total_s"]
    rows = nb07.single_lever_rows(bench)
    assert rows, "the benchmark has one-lever rows for the hang"
    best = base - min(rows.values())
    assert nb07.best_single_lever(best).ok
    fb = nb07.best_single_lever(base - bench.medians[("hang", "tuned")]["total_s"])
    assert not fb.ok and "all levers together" in fb.message


def test_in_process_ceiling_is_the_limit_of_the_ratio():
    T, m, P, Q, L, tau, k = nb07.ceiling_symbols()
    default = T + m / 2 + P + Q + L + tau / 2
    assert nb07.in_process_ceiling(sympy.limit(default / (k * (T + m / 2 + L + tau / 2) + Q), k, 0)).ok
    fb = nb07.in_process_ceiling(default / (P + Q))
    assert not fb.ok and "process start P" in fb.message


def test_tuned_reschedule_share_divides_by_the_whole_restart():
    stages = load_benchmark().stages("hang", "tuned")
    right = 100 * stages["reschedule"] / sum(stages.values())
    assert nb07.tuned_reschedule_share(right).ok
    fb = nb07.tuned_reschedule_share(right / 100)
    assert not fb.ok and "fraction" in fb.message
    fb = nb07.tuned_reschedule_share(100 * stages["reschedule"] / (sum(stages.values()) - stages["reschedule"]))
    assert not fb.ok and "whole restart" in fb.message
