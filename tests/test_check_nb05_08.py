"""Self-checks of notebooks 05, 08 and 09: the expected values from their formulas, and the typical slips.

(The generic tests of tests/test_check_nb01_03.py already prove that every listed mistake of these
modules gets its own hint.)
"""
from __future__ import annotations

import math

import sympy

from course_lib import Scenario
from course_lib import projection as pj
from course_lib.check import nb05, nb08
from course_lib.data import load_table


def _params(model):
    t = load_table("model_sizes.csv")
    return dict(zip(t["model"], t["params"]))[model]


def test_shard_is_12_bytes_per_parameter_over_the_fleet_in_gib():
    n = Scenario().n_gpus
    right = _params(nb05.SHARD_MODEL) * 12 / n / 2**30  # checkpoint content, not ZeRO's 16 B of memory
    assert nb05.shard_gib(right).ok
    fb = nb05.shard_gib(right * 2**30 / 1e9)
    assert not fb.ok and "GB" in fb.message
    fb = nb05.shard_gib(right / 6)
    assert not fb.ok and "bf16" in fb.message
    fb = nb05.shard_gib(right * 16 / 12)
    assert not fb.ok and "training memory" in fb.message


def test_sync_save_interval_is_young_in_minutes():
    s = Scenario()
    h200 = {r["key"]: r["value"] for r in load_table("h200_host.csv").rows}
    delta_s = _params(nb05.INTERVAL_MODEL) * 12 / s.n_gpus / (h200["torch_save_fsync"] * 1e9)
    right = math.sqrt(2 * delta_s / 60 * s.fleet_mtbf_hours * 60)
    assert nb05.sync_save_interval(right).ok
    fb = nb05.sync_save_interval(math.sqrt(2 * delta_s * s.fleet_mtbf_hours * 60))
    assert not fb.ok and "seconds" in fb.message


def test_async_interval_depends_only_on_the_blocking_part():
    tau, db, dd, M, R = nb05.async_symbols()
    W = db / tau + (tau / 2 + dd + R) / M
    (root,) = sympy.solve(sympy.diff(W, tau), tau)
    assert nb05.async_interval(root).ok
    fb = nb05.async_interval(sympy.sqrt(2 * (db + dd) * M))
    assert not fb.ok and "does not block" in fb.message


def test_floor_share_grows_with_the_fleet():
    share = nb08.floor_share_at.spec()
    assert nb08.floor_share_at(share.expected).ok
    smaller = share.mistakes[0].value  # the question's fleet
    assert share.expected > smaller
    fb = nb08.floor_share_at(smaller)
    assert not fb.ok and f"{nb08.FLEET_GPUS:,}" in fb.message


def test_kokolis_ettr_from_the_formula_reproduces_the_course_function():
    k = pj.kokolis_projection()
    dt = nb08.ETTR_INTERVAL_MIN
    lam_min = k.n_gpus / k.gpus_per_node * k.rf_per_node_day / 1440
    right = (1 - lam_min * (k.restart_overhead_min + dt / 2)) / (1 + k.write_cost_min / dt)
    assert nb08.kokolis_ettr(right).ok
    fb = nb08.kokolis_ettr((1 - lam_min * (k.restart_overhead_min + dt)) / (1 + k.write_cost_min / dt))
    assert not fb.ok and "dt/2" in fb.message


def test_sdc_crossover_solves_the_balance_and_lambda_cancels():
    L, s, D, R, lam = nb08.sdc_symbols()
    (root,) = sympy.solve(sympy.Eq(s * lam * (L + D + R), lam * (D + R)), L)
    assert nb08.sdc_crossover(root).ok
    assert nb08.sdc_crossover("(1 - s)*(D + R)/s").ok
    fb = nb08.sdc_crossover((D + R) / s)
    assert not fb.ok and "D + R itself" in fb.message


# ---------------------------------------------------------------- notebook 09
def test_your_fleet_checks_follow_the_log():
    from course_lib import failures
    from course_lib import interval as iv
    from course_lib.answer import answer
    from course_lib.check import nb09

    rate = nb09.OBSERVED_FAILURES / (nb09.FLEET_GPUS * nb09.OBSERVED_DAYS)
    fleet = Scenario().replace(n_gpus=nb09.FLEET_GPUS)
    assert nb09.after_levers_loss(100 * answer(fleet.replace(rate_per_gpu_day=rate)).after.fraction_of_day).ok
    _, high = failures.poisson_ci(nb09.OBSERVED_FAILURES)
    after_high = answer(fleet.replace(rate_per_gpu_day=high / (nb09.FLEET_GPUS * nb09.OBSERVED_DAYS))).after
    assert nb09.floor_upper_bound(100 * after_high.floor_fraction).ok
    m = 1440 / (nb09.FLEET_GPUS * rate)
    tau = Scenario().checkpoint_interval_min
    assert nb09.break_even_write_cost(60 * tau**2 / (2 * m)).ok
    assert abs(60 * tau**2 / (2 * m) - 60 * iv.write_cost_for_interval(tau, m)) < 1e-9
    fb = nb09.break_even_write_cost(60 * tau**2 / m)
    assert not fb.ok and "dropped the 2" in fb.message
