"""course_lib.interval: the first-order derivation symbolically, the exact optimum against Daly's
optimality condition and numerical minimisation, the estimates against the exact optimum, validation."""
from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize_scalar

from course_lib import interval as iv

ratios = st.floats(min_value=1e-7, max_value=20.0, allow_nan=False, allow_infinity=False)
mtbfs = st.floats(min_value=1e-2, max_value=1e5, allow_nan=False, allow_infinity=False)


# ----- the sympy derivation -----------------------------------------------------------------
def test_derive_young_symbolically():
    d = iv.derive_young()
    tau, delta, M, R = d.tau, d.delta, d.M, d.R
    assert sp.simplify(d.waste - (delta / tau + (tau / 2 + R) / M)) == 0
    assert sp.simplify(d.derivative - (-delta / tau**2 + 1 / (2 * M))) == 0
    assert sp.simplify(d.tau_star - sp.sqrt(2 * delta * M)) == 0
    assert sp.simplify(d.waste_star - (sp.sqrt(2 * delta / M) + R / M)) == 0
    assert sp.simplify(d.derivative.subs(tau, d.tau_star)) == 0
    assert d.second_derivative.is_positive  # a minimum, for every positive delta and M
    assert d.waste_star.is_positive  # for every admissible input: delta, M > 0 and a restart cost R >= 0
    assert R not in d.tau_star.free_symbols  # R drops out of the optimum ...
    assert R in d.waste_star.free_symbols  # ... but not out of the waste


@given(ratio=ratios, m=mtbfs, r=st.floats(0, 0.5))
def test_young_matches_the_derivation_numerically(ratio, m, r):
    delta = ratio * m
    tau = iv.young_interval(delta, m)
    assert tau == pytest.approx(math.sqrt(2 * delta * m))
    w = iv.waste_fraction(tau, delta, m, r * m)
    assert w == pytest.approx(math.sqrt(2 * delta / m) + r, rel=1e-12)
    for f in (0.9, 1.1):  # a minimum of the first-order waste
        assert iv.waste_fraction(f * tau, delta, m, r * m) >= w


# ----- the exact optimum ----------------------------------------------------------------------
@given(ratio=ratios, m=mtbfs)
def test_exact_optimum_solves_dalys_condition(ratio, m):
    """e^{-eta} + eta = 2 xi^2 + 1 with eta = (tau + delta)/M and xi^2 = delta/(2M)."""
    delta = ratio * m
    tau = iv.optimal_interval_exact(delta, m)
    assert 0 < tau < m
    eta = (tau + delta) / m
    # written as e^{-eta} - 1 + eta = delta/M to keep the digits at small delta/M
    assert math.expm1(-eta) + eta == pytest.approx(delta / m, rel=1e-8, abs=1e-15)


@pytest.mark.parametrize("ratio", [1e-6, 1e-4, 1e-3, 1e-2, 0.1, 0.5, 2.0, 10.0])
@pytest.mark.parametrize("restart", [0.0, 0.2])
def test_exact_optimum_minimises_expected_wall_time(ratio, restart):
    m = 1.0
    delta = ratio * m

    def per_work(t):  # expected wall time per unit of work for whole intervals (Daly's form)
        return m * math.exp(restart / m) * math.expm1((t + delta) / m) / t

    tau = iv.optimal_interval_exact(delta, m)
    best = minimize_scalar(per_work, bounds=(tau / 4, min(4 * tau, 10 * m)), method="bounded", options={"xatol": 1e-12 * tau})
    assert best.x == pytest.approx(tau, rel=2e-5)
    assert per_work(tau) <= best.fun * (1 + 1e-12)
    # and expected_wall_time is Daly's form for whole intervals
    n = 7
    assert iv.expected_wall_time(n * tau, tau, delta, m, restart) == pytest.approx(n * tau * per_work(tau), rel=1e-12)


def test_exact_optimum_limits():
    m = 720.0
    for ratio in (1e-9, 1e-7, 1e-5):  # small delta/M: Young's law
        assert iv.optimal_interval_exact(ratio * m, m) == pytest.approx(iv.young_interval(ratio * m, m), rel=2 * math.sqrt(ratio))
    assert iv.optimal_interval_exact(50 * m, m) == pytest.approx(m, rel=1e-12)  # large: tends to M


SERIES_SWITCH = 1e-5  # below this delta/M the branch-point series is used (relative error < 1e-13)


@pytest.mark.parametrize("m", [3.0, 0.7, 1e4])
@pytest.mark.parametrize("ratio", [1e-12, 1e-9, 3e-6, 1e-5 * (1 - 1e-9), 1e-5 * (1 + 1e-9), 1e-4, 0.3, 3.0])
def test_exact_optimum_to_full_precision(ratio, m):
    """Against 50-digit Lambert W, on both sides of the switch to the branch-point series, at several M.

    abs=0: pytest's default abs=1e-12 would dominate at these magnitudes (tau ~ 1e-6 M). The series
    is held to its documented 1e-13; Lambert W just above the branch point loses digits
    (the argument -e^{-1-a} is rounded next to -1/e), 5e-12 there."""
    import mpmath

    mpmath.mp.dps = 50
    ref = m * (1 + mpmath.lambertw(-mpmath.exp(-mpmath.mpf(ratio) - 1)).real)
    rel = 1e-13 if ratio < SERIES_SWITCH else 5e-12
    assert iv.optimal_interval_exact(ratio * m, m) == pytest.approx(float(ref), rel=rel, abs=0)


def test_daly_estimate_between_young_and_exact():
    m = 1.0
    ratios_ = np.array([1e-4, 1e-3, 1e-2, 0.1, 0.5])
    exact = iv.optimal_interval_exact(ratios_ * m, m)
    daly = iv.daly_interval(ratios_ * m, m)
    young = iv.young_interval(ratios_ * m, m)
    assert np.all(np.abs(daly - exact) < np.abs(young - exact))
    assert np.all(np.abs(daly / exact - 1) < 0.01)  # within 1 % up to delta/M = 0.5
    assert iv.daly_interval(2.0, 1.0) == 1.0 and iv.daly_interval(5.0, 1.0) == 1.0  # delta >= 2M -> M


@pytest.mark.parametrize("m", [0.5, 10.0, 720.0])
@pytest.mark.parametrize("ratio", [1e-4, 0.02, 0.5, 1.9])
def test_daly_estimate_closed_form_at_several_mtbfs(ratio, m):
    """Daly (2006): tau = sqrt(2 delta M) [1 + xi/3 + xi^2/9] - delta with xi = sqrt(delta / (2M))."""
    delta = ratio * m
    xi = math.sqrt(delta / (2 * m))
    expected = math.sqrt(2 * delta * m) * (1 + xi / 3 + xi**2 / 9) - delta
    assert iv.daly_interval(delta, m) == pytest.approx(expected, rel=1e-12, abs=0)


@pytest.mark.parametrize("m", [0.5, 10.0, 720.0])
def test_daly_estimate_is_the_mtbf_from_delta_2m_on(m):
    assert iv.daly_interval(2 * m, m) == m and iv.daly_interval(7 * m, m) == m
    below = iv.daly_interval(1.99 * m, m)
    assert below != m and below == pytest.approx(m * (math.sqrt(3.98) * (1 + math.sqrt(0.995) / 3 + 0.995 / 9) - 1.99), rel=1e-12)
    np.testing.assert_array_equal(iv.daly_interval(np.array([2.0, 3.0]) * m, m), [m, m])


# ----- every time scales with M: a change of time unit changes no answer -------------------------------
SCALES = [0.01, 7.0, 1e3]


@pytest.mark.parametrize("c", SCALES)
@pytest.mark.parametrize("delta, m", [(1e-4, 1.0), (0.05, 2.0), (0.6, 1.0)])
def test_optimal_intervals_scale_with_the_mtbf(c, delta, m):
    for f in (iv.young_interval, iv.daly_interval, iv.optimal_interval_exact):
        assert f(c * delta, c * m) == pytest.approx(c * f(delta, m), rel=1e-12, abs=0), f.__name__
    tau = iv.optimal_interval_exact(delta, m)
    assert iv.bounded_interval(c * delta, c * m, c * 2 * tau) == pytest.approx(c * 2 * tau, rel=1e-12, abs=0)
    assert iv.write_cost_for_interval(c * tau, c * m) == pytest.approx(c * iv.write_cost_for_interval(tau, m), rel=1e-12, abs=0)


@pytest.mark.parametrize("c", SCALES)
@pytest.mark.parametrize("work, tau, delta, m, r", [(10.0, 0.3, 0.01, 1.0, 0.1), (5.25, 1.0, 0.1, 10.0, 0.5), (3.0, 2.0, 0.5, 0.8, 0.0)])
def test_wall_time_scales_and_waste_is_dimensionless(c, work, tau, delta, m, r):
    t = iv.expected_wall_time(work, tau, delta, m, r)
    assert iv.expected_wall_time(c * work, c * tau, c * delta, c * m, c * r) == pytest.approx(c * t, rel=1e-12, abs=0)
    for f in (iv.expected_waste, iv.waste_fraction):
        assert f(c * tau, c * delta, c * m, c * r) == pytest.approx(f(tau, delta, m, r), rel=1e-12, abs=0), f.__name__
    assert iv.stalled_waste(c * tau, c * delta, c * m, c * 2 * tau, c * r) == pytest.approx(
        iv.stalled_waste(tau, delta, m, 2 * tau, r), rel=1e-12, abs=0)


@pytest.mark.parametrize("m", [0.25, 1.0, 40.0])
@pytest.mark.parametrize("r", [0.0, 0.3])
def test_wall_time_closed_form_at_several_mtbfs(m, r):
    """Daly's complete model for whole intervals, T = M e^{R/M} (e^{(tau+delta)/M} - 1) work/tau, and its waste T/work - 1."""
    tau, delta, n = 0.4 * m, 0.01 * m, 6
    expected = m * math.exp(r) * math.expm1((tau + delta) / m) * n  # R = r M
    assert iv.expected_wall_time(n * tau, tau, delta, m, r * m) == pytest.approx(expected, rel=1e-12, abs=0)
    assert iv.expected_waste(tau, delta, m, r * m) == pytest.approx(expected / (n * tau) - 1, rel=1e-12, abs=0)
    # the default is no restart cost
    assert iv.expected_wall_time(n * tau, tau, delta, m) == iv.expected_wall_time(n * tau, tau, delta, m, 0.0)
    assert iv.expected_waste(tau, delta, m) == iv.expected_waste(tau, delta, m, 0.0)
    assert iv.waste_fraction(tau, delta, m) == iv.waste_fraction(tau, delta, m, 0.0)


@given(ratio=st.floats(1e-6, 0.01), r=st.floats(0, 0.01))
@settings(max_examples=50)
def test_first_order_is_the_expansion_of_the_complete_model(ratio, r):
    m = 1.0
    tau = iv.young_interval(ratio, m)
    exact = iv.expected_waste(tau, ratio, m, r)
    first = iv.waste_fraction(tau, ratio, m, r)
    # the first-order waste drops terms of order (tau/M)^2, delta/M and R/M times the waste
    assert abs(exact - first) <= 2 * (tau / m) ** 2 + 2 * (ratio + r) * first


# ----- expected wall time and the remainder segment ----------------------------------------------
def test_expected_wall_time_remainder_segment():
    m, delta, r, tau = 10.0, 0.1, 0.5, 1.0
    full = iv.expected_wall_time(5.0, tau, delta, m, r)
    with_rem = iv.expected_wall_time(5.25, tau, delta, m, r)
    assert with_rem - full == pytest.approx(m * math.exp(r / m) * math.expm1((0.25 + delta) / m))
    assert iv.split_work(5.25, 1.0) == (5, pytest.approx(0.25))
    assert iv.split_work(10.0, 0.1) == (100, 0.0)  # floating point does not invent a remainder
    assert iv.split_work(0.3, 0.1) == (3, 0.0)
    # no failures at all would take work + writes; failures only add
    assert with_rem > 5.25 + 6 * delta


def test_restart_drops_out_of_the_optimum_but_not_the_waste():
    m, delta = 1.0, 0.02
    taus = np.linspace(0.05, 0.6, 2001)
    for r in (0.0, 0.1, 0.3):
        w = iv.expected_waste(taus, delta, m, r)
        assert taus[np.argmin(w)] == pytest.approx(iv.optimal_interval_exact(delta, m), abs=taus[1] - taus[0])
    assert iv.expected_waste(0.2, delta, m, 0.3) > iv.expected_waste(0.2, delta, m, 0.0)


def test_split_work_rounds_away_only_what_is_within_1e9_relative():
    # of zero: a remainder up to 1e-9 x work is floating-point noise, a larger one is work
    assert iv.split_work(1 + 0.5e-9, 1.0) == (1, 0.0)
    n, r = iv.split_work(1 + 1.5e-9, 1.0)
    assert n == 1 and r == pytest.approx(1.5e-9, rel=1e-6)
    assert iv.split_work(1000 + 5e-7, 1.0) == (1000, 0.0)  # relative to the work, not absolute
    # of a whole interval: a quotient within 1e-9 below a whole number is that number
    assert iv.split_work(3 - 0.5e-9, 1.0) == (3, 0.0)
    n, r = iv.split_work(3 - 1.5e-9, 1.0)
    assert n == 2 and r == pytest.approx(1 - 1.5e-9, rel=1e-15)
    for work, tau in [(7.3, 0.6), (1e4, 3.0), (0.05, 0.011)]:
        n, r = iv.split_work(work, tau)
        assert 0 <= r < tau and n * tau + r == pytest.approx(work, rel=1e-12)


@pytest.mark.parametrize("m", [0.5, 720.0])
@pytest.mark.parametrize("tau", [0.3, 1.0, 17.0])
def test_write_cost_for_interval_makes_it_young_optimal(tau, m):
    delta = iv.write_cost_for_interval(tau, m)
    assert delta == pytest.approx(tau**2 / (2 * m), rel=1e-12, abs=0)
    assert iv.young_interval(delta, m) == pytest.approx(tau, rel=1e-12, abs=0)


def test_bounded_interval_and_write_cost_for_interval():
    m = 720.0
    delta = iv.write_cost_for_interval(1.0, m)
    assert delta == pytest.approx(1 / 1440)
    assert iv.young_interval(delta, m) == pytest.approx(1.0)
    tau = iv.optimal_interval_exact(delta, m)
    assert iv.bounded_interval(delta, m, tau / 2) == tau
    assert iv.bounded_interval(delta, m, 2 * tau) == 2 * tau


def test_arrays_broadcast():
    w = iv.waste_fraction(np.array([1.0, 2.0]), 0.1, 10.0)
    assert isinstance(w, np.ndarray) and w.shape == (2,)
    assert isinstance(iv.waste_fraction(1.0, 0.1, 10.0), float)
    # arrays hold the same values as the scalar calls, small values and a zero restart included
    taus, restarts = np.array([0.05, 0.5, 3.0]), np.array([0.0, 0.2, 0.7])
    for f in (iv.waste_fraction, iv.expected_waste):
        got = f(taus, 0.01, 4.0, restarts)
        assert got.tolist() == [f(float(t), 0.01, 4.0, float(r)) for t, r in zip(taus, restarts)]
    assert iv.young_interval([0.5, 0.02], 0.3).tolist() == [iv.young_interval(0.5, 0.3), iv.young_interval(0.02, 0.3)]


# ----- validation -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: iv.waste_fraction(0, 1, 1), "interval"),
        (lambda: iv.waste_fraction(1, -1, 1), "write_cost"),
        (lambda: iv.waste_fraction(1, 1, math.nan), "mtbf"),
        (lambda: iv.waste_fraction(1, 1, 1, -0.1), "restart"),
        (lambda: iv.waste_fraction(np.array([1.0, 0.0]), 1, 1), "interval"),
        (lambda: iv.waste_fraction(1, True, 1), "write_cost"),
        (lambda: iv.young_interval(0, 1), "write_cost"),
        (lambda: iv.young_interval(1, math.inf), "mtbf"),
        (lambda: iv.daly_interval(-1, 1), "write_cost"),
        (lambda: iv.optimal_interval_exact(1, 0), "mtbf"),
        (lambda: iv.optimal_interval_exact("1", 1), "write_cost"),
        (lambda: iv.expected_wall_time(0, 1, 1, 1), "work"),
        (lambda: iv.expected_wall_time(1, 0, 1, 1), "interval"),
        (lambda: iv.expected_wall_time(1, 1, 0, 1), "write_cost"),
        (lambda: iv.expected_wall_time(1, 1, 1, -1), "mtbf"),
        (lambda: iv.expected_wall_time(1, 1, 1, 1, -1), "restart"),
        (lambda: iv.expected_waste(1, 1, 1, math.nan), "restart"),
        (lambda: iv.bounded_interval(1, 1, 0), "min_interval"),
        (lambda: iv.write_cost_for_interval(-2, 1), "interval"),
        (lambda: iv.split_work(1, 0), "interval"),
    ],
)
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: iv.waste_fraction(np.array([1.0, 0.0]), 1, 1), "interval must be a finite number > 0 (got 0.0)"),
        (lambda: iv.waste_fraction([1.0, math.inf], 1, 1), "interval must be a finite number > 0 (got inf)"),
        (lambda: iv.waste_fraction(np.array([]), 1, 1), "interval must be a finite number > 0 (got 'an empty array')"),
        (lambda: iv.waste_fraction(1, 1, 1, [0.0, -0.5]), "restart must be a finite number >= 0 (got -0.5)"),
        (lambda: iv.expected_waste(1, 1, 1, np.array([math.nan])), "restart must be a finite number >= 0 (got nan)"),
        (lambda: iv.young_interval(np.float64(-1.0), 1), "write_cost must be a finite number > 0 (got -1.0)"),
    ],
)
def test_bad_arrays_name_the_parameter_and_the_allowed_range(call, message):
    with pytest.raises(ValueError) as err:
        call()
    assert str(err.value) == message


# ----- the dashboard's text comes from the tested functions ---------------------------------------
def test_interval_dashboard_numbers():
    from course_lib.widgets import interval as wi

    n = wi.interval_numbers(6.3, 12, 10)
    assert n["exact_min"] == pytest.approx(iv.optimal_interval_exact(6.3 / 60, 720))
    assert n["young_min"] == pytest.approx(math.sqrt(2 * 6.3 / 60 * 720))
    assert n["waste"] == pytest.approx(iv.expected_waste(n["exact_min"], 6.3 / 60, 720, 10))
    text = wi.interval_summary(6.3, 12, 10)
    assert f"optimal interval {n['exact_min']:.3g} min" in text
    w = wi.interval_result_widget(6.3, 12, 10)
    assert "course-result" in w._dom_classes
    with pytest.raises(ValueError, match="write_cost_s"):
        wi.interval_summary(0, 12, 10)
    with pytest.raises(ValueError, match="restart_min"):
        wi.interval_summary(1, 12, -1)


def test_stalled_waste():
    m, d, c = 720.0, 1e-4, 0.01
    taus = np.array([0.002, 0.005, 0.02, 0.5])
    w = iv.stalled_waste(taus, d, m, c)
    np.testing.assert_allclose(w[2:], iv.waste_fraction(taus[2:], d, m))  # above the copy time: no stall
    assert w[0] > w[1] > iv.waste_fraction(c, d, m)  # below it the stall wall rises as 1/tau
    with pytest.raises(ValueError, match="copy_time"):
        iv.stalled_waste(1, 1, 1, 0)


@pytest.mark.parametrize("r", [0.05, 2.0])
def test_stalled_waste_with_a_restart_cost(r):
    """The restart cost adds R/M per unit of work, stalled or not."""
    m, d, c = 720.0, 1e-4, 0.01
    taus = np.array([0.002, 0.005, 0.02, 0.5])
    with_r = iv.stalled_waste(taus, d, m, c, r)
    np.testing.assert_allclose(with_r - iv.stalled_waste(taus, d, m, c), r / m, rtol=1e-9)
    np.testing.assert_allclose(with_r[2:], iv.waste_fraction(taus[2:], d, m, r), rtol=1e-15)
    assert iv.stalled_waste(taus, d, m, c).tolist() == iv.stalled_waste(taus, d, m, c, 0.0).tolist()


def test_snapshot_plot_counts_the_copy_once():
    """plots.interval.snapshot_waste: when the stall is the copy, a tenth of the copy time costs 10x, not 19x."""
    from course_lib.plots.interval import snapshot_waste

    c, m = 0.5e-3, 720.0
    assert snapshot_waste(c / 10, c, m, c) == pytest.approx(10 + c / 20 / m, rel=1e-12)
    taus = np.array([2 * c, 10 * c, 1.0])  # at or above the copy time: the plain first-order waste
    np.testing.assert_allclose(snapshot_waste(taus, c, m, c), iv.waste_fraction(taus, c, m), rtol=1e-12)
    # a stall shorter than the copy: the wait copy - tau binds below the copy time
    assert snapshot_waste(c / 10, c / 100, m, c) == pytest.approx(9 + c / 20 / m, rel=1e-12)


def test_complete_loss_fraction_is_one_minus_daly_ettr():
    """1 - tau / (e^{R/M} M (e^{(tau+delta)/M} - 1)), recomputed here with math (issue 29: it had no test)."""
    import math

    from course_lib.interval import complete_loss_fraction

    for tau, delta, m, r in ((30.0, 1.0, 720.0, 10.0), (0.5, 0.01, 720.0, 0.0), (5.0, 0.2, 60.0, 3.0), (0.9, 0.0, 10.0, 1.0)):
        want = 1.0 - tau / (math.exp(r / m) * m * math.expm1((tau + delta) / m))
        assert complete_loss_fraction(tau, delta, m, r) == pytest.approx(want, rel=1e-12)
    # the limits: no interval and no write cost leaves only the restart, 1 - e^{-R/M}; nothing at all loses nothing
    assert complete_loss_fraction(0.0, 0.0, 720.0, 15.0) == pytest.approx(-math.expm1(-15.0 / 720.0), rel=1e-12)
    assert complete_loss_fraction(0.0, 0.0, 720.0) == 0.0
    # continuous in tau at 0 when delta = 0 (the e^{tau/M} - 1 ~ tau/M limit)
    assert complete_loss_fraction(1e-9, 0.0, 720.0, 15.0) == pytest.approx(-math.expm1(-15.0 / 720.0), rel=1e-9)
    # no interval but a write cost: writes without work between lose the whole day (the limit tau -> 0)
    assert complete_loss_fraction(0.0, 1.0, 720.0, 15.0) == 1.0
    assert complete_loss_fraction(1e-9, 1.0, 720.0) == pytest.approx(1.0, abs=1e-8)
    # at any scale it stays in [0, 1) and never overflows (the day of a huge fleet)
    big = complete_loss_fraction(100.0, 10.0, 1.0, 5.0)
    assert 0.999 < big <= 1.0 and math.isfinite(big)
    arr = complete_loss_fraction(np.array([0.5, 30.0]), 1.0, 720.0, 10.0)
    assert arr.shape == (2,) and arr[0] > arr[1] > 0  # a half-minute interval pays its write cost 60 times as often
    for args, name in (((-1.0, 1.0, 720.0), "interval"), ((1.0, -1.0, 720.0), "write_cost"), ((1.0, 1.0, 0.0), "mtbf"),
                       ((1.0, 1.0, 720.0, -1.0), "restart")):
        with pytest.raises(ValueError, match=name):
            complete_loss_fraction(*args)


# ----- best_interval: the day model's bounded optimum ---------------------------------------
def _day_loss(tau, delta, m, r, s):
    """The day model's loss, 1 - (1 - (R + s tau/2)/M) tau / (tau + delta) (course_lib.restart), by hand."""
    return 1.0 - (1.0 - (r + s * tau / 2.0) / m) * tau / (tau + delta)


def test_best_interval_by_hand():
    # tau* = -delta + sqrt(delta^2 + 2 delta (M - R) / s)
    assert iv.best_interval(2.0, 100.0) == pytest.approx(-2.0 + math.sqrt(404.0), rel=1e-15)  # 18.0998
    assert iv.best_interval(2.0, 100.0, 20.0, 0.5) == pytest.approx(-2.0 + math.sqrt(644.0), rel=1e-15)  # 23.377
    assert iv.best_interval(0.5, 60.0, 0.0, 0.25) == pytest.approx(-0.5 + math.sqrt(0.25 + 240.0), rel=1e-15)
    # the bound binds when the optimum is below it, not when it is above
    assert iv.best_interval(2.0, 100.0, min_interval=30.0) == 30.0
    assert iv.best_interval(2.0, 100.0, min_interval=10.0) == pytest.approx(-2.0 + math.sqrt(404.0), rel=1e-15)


@pytest.mark.parametrize("delta, m, r, s", [(2.0, 100.0, 0.0, 1.0), (2.0, 100.0, 20.0, 0.5), (0.1, 1440.0, 15.0, 0.9),
                                            (5.0, 30.0, 10.0, 0.2), (0.01, 5.0, 4.0, 1.0)])
def test_best_interval_minimises_the_day_models_loss(delta, m, r, s):
    found = minimize_scalar(lambda t: _day_loss(t, delta, m, r, s), bounds=(1e-9, 10 * m), method="bounded",
                            options={"xatol": 1e-10})
    tau = iv.best_interval(delta, m, r, s)
    assert tau == pytest.approx(found.x, rel=1e-5)
    assert _day_loss(tau, delta, m, r, s) <= found.fun + 1e-15


def test_best_interval_edges():
    # no write cost: nothing to trade, the bound itself (0 or a step)
    assert iv.best_interval(0.0, 100.0) == 0.0
    assert iv.best_interval(0.0, 100.0, 5.0, 0.5, 3.0) == 3.0
    # failures as frequent as the restart (M <= R): every interval loses the whole day; the bound
    assert iv.best_interval(2.0, 10.0, 10.0) == 0.0
    assert iv.best_interval(2.0, 10.0, 12.0, 1.0, 4.0) == 4.0
    assert iv.best_interval(2.0, 10.0, 9.0) == pytest.approx(-2.0 + math.sqrt(8.0), rel=1e-15)  # just above R
    # no failure rewinds (s = 0): only writes cost, one per MTBF, or the bound if longer
    assert iv.best_interval(2.0, 100.0, 0.0, 0.0) == 100.0
    assert iv.best_interval(2.0, 100.0, 0.0, 0.0, 250.0) == 250.0
    # s = 1 exactly is allowed; above 1 refused, naming share
    assert iv.best_interval(2.0, 100.0, 0.0, 1.0) == iv.best_interval(2.0, 100.0)
    for bad in (1.0 + 1e-12, 2.0):
        with pytest.raises(ValueError, match="share"):
            iv.best_interval(2.0, 100.0, 0.0, bad)
    with pytest.raises(ValueError, match="share"):
        iv.best_interval(2.0, 100.0, 0.0, np.array([0.5, 1.5]))
    for args, name in (((-1.0, 100.0), "write_cost"), ((1.0, 0.0), "mtbf"), ((1.0, 100.0, -1.0), "fixed"),
                       ((1.0, 100.0, 0.0, -0.1), "share"), ((1.0, 100.0, 0.0, 1.0, -1.0), "min_interval")):
        with pytest.raises(ValueError, match=name):
            iv.best_interval(*args)


def test_best_interval_broadcasts_each_case_as_alone():
    delta = np.array([2.0, 0.0, 2.0, 2.0, 2.0])
    m = np.array([100.0, 100.0, 10.0, 100.0, 100.0])
    r = np.array([20.0, 0.0, 12.0, 0.0, 0.0])
    s = np.array([0.5, 1.0, 1.0, 0.0, 1.0])
    bound = np.array([0.0, 3.0, 4.0, 0.0, 30.0])
    got = iv.best_interval(delta, m, r, s, bound)
    want = [iv.best_interval(*args) for args in zip(delta, m, r, s, bound)]
    np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(got, [-2.0 + math.sqrt(644.0), 3.0, 4.0, 100.0, 30.0], rtol=1e-15)
