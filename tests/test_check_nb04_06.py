"""Self-checks of notebooks 04 and 06: the expected values from their formulas, and the typical slips.

(The generic tests of tests/test_check_nb01_03.py already prove that every listed mistake of these
modules gets its own hint.)
"""
from __future__ import annotations

import math

import sympy

from course_lib import Scenario
from course_lib import interval as iv
from course_lib.check import nb04, nb06
from course_lib.data import load_table
from course_lib.simulate import simulate_job


def test_pfs_interval_is_the_lambert_w_root_and_young_overshoots():
    m, _ = nb04.job_inputs()
    delta = load_table("write_costs.csv").where("regime", "pfs_sync").rows[0]["blocking_s"] / 60
    exact = iv.optimal_interval_exact(delta, m)
    x = exact / m
    assert math.isclose((1 - x) * math.exp(x + delta / m), 1.0, rel_tol=1e-9)  # Daly's optimality condition
    assert nb04.pfs_interval(exact).ok
    fb = nb04.pfs_interval(math.sqrt(2 * delta * m))
    assert not fb.ok and "Young" in fb.message


def test_planned_stops_do_not_move_the_optimum():
    tau, delta, M, R, P = nb04.planned_symbols()
    W = delta / tau + (tau / 2 + R) / M + R / P
    (root,) = sympy.solve(sympy.diff(W, tau), tau)
    assert nb04.planned_stops_interval(root).ok
    as_failures = sympy.sqrt(2 * delta / (1 / M + 1 / P))
    fb = nb04.planned_stops_interval(as_failures)
    assert not fb.ok and "rewinds nothing" in fb.message


def test_simulated_waste_at_twice_the_optimum_is_accepted():
    m, r = nb04.job_inputs()
    delta = nb04.baseline_write_min()
    assert delta == Scenario().write_cost_min  # the course's one baseline write
    tau = iv.optimal_interval_exact(delta, m)
    sim = simulate_job(30 * 24 * 60.0, 2 * tau, delta, m, r, n_runs=2000, seed=11)
    assert nb04.waste_at_twice_optimum(sim.mean("waste")).ok  # the tolerance covers the Monte Carlo error
    fb = nb04.waste_at_twice_optimum(iv.expected_waste(tau, delta, m, r))
    assert not fb.ok and "at the optimum" in fb.message


def test_fleet_scaling_interval_falls_as_one_over_n():
    tau, S, B, r, N = nb06.fleet_scaling_symbols()
    right = sympy.sqrt(2 * S / (N * B) / (N * r))
    assert nb06.fleet_scaling(right).ok
    assert sympy.simplify(nb06.fleet_scaling.spec().expected.subs(N, 4 * N) / nb06.fleet_scaling.spec().expected) == sympy.Rational(1, 4)
    fb = nb06.fleet_scaling(sympy.sqrt(2 * S / (B * N * r)))
    assert not fb.ok and "only one" in fb.message


def test_snapshot_interval_at_the_bigger_fleet_is_a_quarter():
    s = Scenario()
    small = nb06.snapshot_interval_at.spec().mistakes[0].value
    assert math.isclose(nb06.snapshot_interval_at.spec().expected * nb06.FLEET_GPUS / s.n_gpus, small, rel_tol=1e-6)
    assert not nb06.snapshot_interval_at(small).ok


def test_bandwidth_for_a_ten_second_interval():
    s = Scenario()
    m = s.fleet_mtbf_hours * 60
    delta_s = 60 * (nb06.TARGET_INTERVAL_S / 60) ** 2 / (2 * m)
    right = nb06.shard_gb(s.n_gpus) / delta_s
    assert nb06.bandwidth_for_interval(right).ok
    fb = nb06.bandwidth_for_interval(right / 2)
    assert not fb.ok and "dropped the 2" in fb.message
