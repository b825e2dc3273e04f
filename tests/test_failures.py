"""Properties of course_lib.failures: rates, exact Poisson intervals, fleet MTBF, Weibull minima."""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from course_lib import failures as f

SEED = 20240723
finite_pos = st.floats(min_value=1e-3, max_value=1e6, allow_nan=False, allow_infinity=False)
gpus_st = st.integers(min_value=1, max_value=200_000)
rates_st = st.floats(min_value=1e-6, max_value=1.0, allow_nan=False)
shapes_st = st.floats(min_value=0.2, max_value=5.0, allow_nan=False)


# ---------------------------------------------------------------- rates and intervals
@given(events=st.integers(0, 10**6), gpus=finite_pos, days=finite_pos)
def test_rate_times_exposure_is_events(events, gpus, days):
    assert f.rate_per_gpu_day(events, gpus, days) * gpus * days == pytest.approx(events, rel=1e-12, abs=1e-12)


@given(events=st.integers(0, 10**5), conf=st.floats(0.5, 0.999))
def test_ci_contains_count_and_orders(events, conf):
    low, high = f.poisson_ci(events, conf)
    assert 0.0 <= low <= events <= high
    if events == 0:
        assert low == 0.0


@given(events=st.integers(1, 20_000))
def test_ci_relative_width_shrinks_with_more_events(events):
    lo1, hi1 = f.poisson_ci(events)
    lo4, hi4 = f.poisson_ci(4 * events)
    assert (hi4 - lo4) / (4 * events) < (hi1 - lo1) / events


@given(conf1=st.floats(0.5, 0.9), extra=st.floats(0.01, 0.09), events=st.integers(0, 1000))
def test_higher_confidence_is_wider(conf1, extra, events):
    lo1, hi1 = f.poisson_ci(events, conf1)
    lo2, hi2 = f.poisson_ci(events, conf1 + extra)
    assert lo2 <= lo1 and hi2 > hi1


@pytest.mark.parametrize("events", [1, 2, 10, 419])
@pytest.mark.parametrize("conf", [0.8, 0.95, 0.99])
def test_garwood_bounds_are_the_means_that_make_the_count_just_unlikely(events, conf):
    """Garwood's definition: the low bound is the mean under which a count >= k has probability alpha/2,
    the high bound the mean under which a count <= k has probability alpha/2."""
    low, high = f.poisson_ci(events, conf)
    alpha = 1 - conf
    assert stats.poisson.sf(events - 1, low) == pytest.approx(alpha / 2, rel=1e-9)
    assert stats.poisson.cdf(events, high) == pytest.approx(alpha / 2, rel=1e-9)


def test_zero_events_upper_bound_closed_form():
    # For k = 0 the Garwood upper bound solves exp(-mu) = alpha/2: mu = -ln(alpha/2).
    assert f.poisson_ci(0, 0.95)[1] == pytest.approx(-math.log(0.025), rel=1e-10)


@pytest.mark.parametrize("mean", [0.5, 3.0, 10.0, 50.0, 400.0])
def test_poisson_ci_coverage_by_simulation(mean):
    """Garwood is conservative: coverage >= 95 %. With 2000 draws the binomial standard error of a
    coverage near 0.95 is sqrt(0.95 * 0.05 / 2000) = 0.0049; allow 4 of them."""
    rng = np.random.default_rng(SEED)
    draws = rng.poisson(mean, size=2000)
    cis = {int(k): f.poisson_ci(int(k)) for k in np.unique(draws)}
    covered = np.mean([cis[int(k)][0] <= mean <= cis[int(k)][1] for k in draws])
    tol = 4 * math.sqrt(0.95 * 0.05 / draws.size)
    assert covered >= 0.95 - tol


@given(events=st.integers(0, 10**5), gpus=finite_pos, days=finite_pos)
def test_rate_ci_is_count_ci_over_exposure(events, gpus, days):
    lo, hi = f.rate_ci_per_gpu_day(events, gpus, days)
    clo, chi = f.poisson_ci(events)
    assert lo * gpus * days == pytest.approx(clo, rel=1e-9, abs=1e-12)
    assert hi * gpus * days == pytest.approx(chi, rel=1e-9)
    assert lo <= f.rate_per_gpu_day(events, gpus, days) <= hi


# ---------------------------------------------------------------- fleet
@given(n=gpus_st, rate=rates_st)
def test_mtbf_times_failures_per_day_is_24(n, rate):
    assert f.fleet_mtbf_hours(n, rate) * f.failures_per_day(n, rate) == pytest.approx(24.0, rel=1e-12)


@given(n=gpus_st, rate=rates_st)
def test_failures_scale_linearly_with_fleet(n, rate):
    assert f.failures_per_day(2 * n, rate) == pytest.approx(2 * f.failures_per_day(n, rate), rel=1e-12)


def test_llama3_numbers_from_data():
    r = f.rate_per_gpu_day(419, 16384, 54)
    assert r == pytest.approx(4.74e-4, rel=1e-3)
    assert f.failures_per_day(4096, r) == pytest.approx(1.94, abs=0.005)
    assert f.fleet_mtbf_hours(4096, r) == pytest.approx(12.4, abs=0.05)


# ---------------------------------------------------------------- Weibull
@given(n=gpus_st, k=shapes_st, s=finite_pos)
def test_weibull_min_survival_matches_product(n, k, s):
    kn, sn = f.fleet_first_failure_weibull(n, k, s)
    assert kn == k
    t = s * n ** (-1.0 / k)  # a time where both survivals are comfortably representable
    log_product = n * stats.weibull_min.logsf(t, k, scale=s)
    assert stats.weibull_min.logsf(t, kn, scale=sn) == pytest.approx(log_product, rel=1e-9)


@given(n=gpus_st, rate=rates_st)
def test_shape_one_weibull_is_exponential(n, rate):
    mean_days = f.fleet_mean_time_to_first_failure(n, 1.0, 1.0 / rate)
    assert 24.0 * mean_days == pytest.approx(f.fleet_mtbf_hours(n, rate), rel=1e-12)
    assert f.weibull_hazard(3.0, 1.0, 1.0 / rate) == pytest.approx(rate, rel=1e-12)


@given(k=shapes_st, mean=finite_pos)
def test_scale_for_mean_round_trip(k, mean):
    assert f.weibull_mean(k, f.weibull_scale_for_mean(k, mean)) == pytest.approx(mean, rel=1e-12)


@given(k=shapes_st, s=finite_pos)
def test_weibull_mean_matches_scipy(k, s):
    assert f.weibull_mean(k, s) == pytest.approx(stats.weibull_min.mean(k, scale=s), rel=1e-9)


@given(k=shapes_st, s=finite_pos, x=st.floats(0.01, 10.0))
def test_weibull_cdf_pdf_match_scipy(k, s, x):
    t = x * s
    assert f.weibull_cdf(t, k, s) == pytest.approx(stats.weibull_min.cdf(t, k, scale=s), rel=1e-9, abs=1e-300)
    assert f.weibull_pdf(t, k, s) == pytest.approx(stats.weibull_min.pdf(t, k, scale=s), rel=1e-9, abs=1e-300)
    assert f.weibull_pdf(t, k, s) == pytest.approx(f.weibull_hazard(t, k, s) * stats.weibull_min.sf(t, k, scale=s), rel=1e-9, abs=1e-300)


@pytest.mark.parametrize("k", [0.5, 1.0, 2.5])
def test_weibull_cdf_at_zero_and_on_arrays(k):
    s = 3.0
    assert f.weibull_cdf(0.0, k, s) == 0.0 and f.weibull_cdf(0, k, s) == 0.0  # nothing has failed at age 0
    t = np.array([0.0, 0.3, 3.0, 30.0])
    cdf = f.weibull_cdf(t, k, s)
    assert isinstance(cdf, np.ndarray) and cdf.shape == t.shape
    np.testing.assert_allclose(cdf, stats.weibull_min.cdf(t, k, scale=s), rtol=1e-12, atol=0)
    np.testing.assert_allclose(cdf, [f.weibull_cdf(float(x), k, s) for x in t], rtol=1e-12, atol=0)  # = the scalar calls
    assert f.weibull_cdf(s, k, s) == pytest.approx(1 - math.exp(-1), rel=1e-15)  # at the scale, whatever the shape
    ages = t[1:]
    pdf, hazard = f.weibull_pdf(ages, k, s), f.weibull_hazard(ages, k, s)
    assert isinstance(pdf, np.ndarray) and isinstance(hazard, np.ndarray)
    np.testing.assert_allclose(pdf, stats.weibull_min.pdf(ages, k, scale=s), rtol=1e-12, atol=0)
    np.testing.assert_allclose(hazard, pdf / stats.weibull_min.sf(ages, k, scale=s), rtol=1e-12, atol=0)
    np.testing.assert_allclose(pdf, [f.weibull_pdf(float(x), k, s) for x in ages], rtol=1e-12, atol=0)
    assert isinstance(f.weibull_pdf(1.0, k, s), float) and isinstance(f.weibull_hazard(1.0, k, s), float)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: f.weibull_pdf(0.0, 0.7, 1.0), "t must be finite times > 0 (got 0.0)"),  # the density is infinite there for k < 1
        (lambda: f.weibull_hazard([1.0, 0.0], 0.7, 1.0), "t must be finite times > 0 (got [1.0, 0.0])"),
        (lambda: f.weibull_cdf([0.0, -1.0], 0.7, 1.0), "t must be finite times >= 0 (got [0.0, -1.0])"),
        (lambda: f.weibull_cdf([], 0.7, 1.0), "t must be finite times >= 0 (got [])"),
        (lambda: f.weibull_pdf([2.0, math.inf], 0.7, 1.0), "t must be finite times > 0 (got [2.0, inf])"),
    ],
)
def test_weibull_ages_are_checked_with_their_allowed_range(call, message):
    with pytest.raises(ValueError) as err:
        call()
    assert str(err.value) == message


def test_infant_mortality_fleet_fails_sooner():
    rate = 5e-4
    s = f.weibull_scale_for_mean(0.7, 1 / rate)
    assert f.fleet_mean_time_to_first_failure(4096, 0.7, s) < 0.1 * f.fleet_mean_time_to_first_failure(4096, 1.0, 1 / rate)
    h = f.weibull_hazard(np.array([1.0, 10.0, 100.0]), 0.7, s)
    assert np.all(np.diff(h) < 0)


@pytest.mark.parametrize("n, shape, scale", [(4096, 1.0, 2000.0), (1000, 0.7, 1668.0), (64, 2.5, 10.0)])
def test_min_of_weibulls_monte_carlo(n, shape, scale):
    rng = np.random.default_rng(SEED)
    draws = f.sample_fleet_first_failure(rng, n, 3000, shape, scale, chunk_elements=2**20)
    assert draws.shape == (3000,)
    se = draws.std(ddof=1) / math.sqrt(draws.size)
    assert abs(draws.mean() - f.fleet_mean_time_to_first_failure(n, shape, scale)) < 4 * se


def test_sampler_is_reproducible_and_chunk_independent():
    """The same seed gives the same draws whatever the chunk size: one row per chunk, 3 rows, 7 rows
    (the last chunk short), everything in one chunk."""
    draws = [f.sample_fleet_first_failure(np.random.default_rng(1), 100, 50, 0.7, 2.0, chunk_elements=c)
             for c in (100, 300, 799, 2**22)]
    for other in draws[1:]:
        np.testing.assert_array_equal(other, draws[0])
    assert np.array_equal(draws[0], f.sample_fleet_first_failure(np.random.default_rng(1), 100, 50, 0.7, 2.0))
    assert not np.array_equal(draws[0], f.sample_fleet_first_failure(np.random.default_rng(2), 100, 50, 0.7, 2.0))
    # each draw is the minimum of its row of per-GPU lifetimes, times the scale
    rng = np.random.default_rng(1)
    np.testing.assert_array_equal(draws[0], 2.0 * rng.weibull(0.7, size=(50, 100)).min(axis=1))


# ---------------------------------------------------------------- Table 5 and logs
def test_sampler_defaults_to_unit_exponential_lifetimes():
    a = f.sample_fleet_first_failure(np.random.default_rng(4), 8, 20)
    b = f.sample_fleet_first_failure(np.random.default_rng(4), 8, 20, shape=1.0, scale=1.0)
    np.testing.assert_array_equal(a, b)


def test_table5_erratum_from_counts():
    e = f.table5_erratum()
    assert e.total_count == 419
    assert e.printed_percent_sum == pytest.approx(94.9)
    assert (e.top_component, e.top_count) == ("Faulty GPU", 148)
    assert round(e.top_share_percent, 1) == 35.3 and e.top_printed_percent == pytest.approx(30.1)
    assert (e.gpu_count, e.gpu_rows) == (268, 6)
    assert round(e.gpu_share_percent, 1) == 64.0 and e.gpu_printed_percent == pytest.approx(58.7)


@given(st.lists(st.integers(0, 1000), min_size=1, max_size=30).filter(lambda c: sum(c) > 0))
def test_shares_sum_to_one(counts):
    shares = f.shares_from_counts(counts)
    assert shares.sum() == pytest.approx(1.0)
    assert np.all(shares >= 0)


def test_shares_closed_form():
    np.testing.assert_array_equal(f.shares_from_counts([1, 3]), [0.25, 0.75])
    np.testing.assert_array_equal(f.shares_from_counts([0, 1, 0]), [0.0, 1.0, 0.0])  # a total of one count


def test_category_counts_sorted_and_total():
    got = f.category_counts(["a", "b", "a", "c"], [1, 5, 2, 3])
    assert got == [("b", 5), ("a", 3), ("c", 3)]
    assert f.category_counts(["c", "a", "b"], [3, 3, 1]) == [("a", 3), ("c", 3), ("b", 1)]  # ties by name


def test_results_are_immutable_values():
    import dataclasses

    e = f.table5_erratum()
    r = f.log_rates()[0]
    for obj, name in ((e, "total_count"), (r, "rate_low")):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(obj, name, 0)


def test_table5_erratum_needs_a_gpu_category_of_the_table():
    with pytest.raises(ValueError, match=r"^gpu_category must name a category of the table \(got 'TPU'"):
        f.table5_erratum(gpu_category="TPU")


def test_log_rates_reject_a_high_count_below_the_low_one():
    from types import SimpleNamespace

    row = {"run": "X", "published_per_1000_node_days": math.nan, "gpus": 100, "period_days": 10, "events_low": 5,
           "events_high": 4, "gpus_per_node": 8, "counted": "", "assumption": "", "source": "", "label": "X"}
    with pytest.raises(ValueError, match=r"^events_high \(X\) must be >= events_low \(got 4 < 5\)"):
        f.log_rates(SimpleNamespace(rows=[row]))
    (ok,) = f.log_rates(SimpleNamespace(rows=[{**row, "events_high": 5}]))
    assert ok.rate_low == ok.rate_high == pytest.approx(5 / 1000)


def test_log_rates():
    rates = {r.run: r for r in f.log_rates()}
    llama = rates["Llama 3 405B"]
    assert llama.rate_low == pytest.approx(f.rate_per_gpu_day(419, 16384, 54))
    assert llama.ci_low < llama.rate_low < llama.ci_high
    assert rates["Meta RSC-1"].rate_low == pytest.approx(6.5e-3 / 8) and not rates["Meta RSC-1"].has_ci
    assert rates["BLOOM-176B"].rate_high == pytest.approx(2 * rates["BLOOM-176B"].rate_low)
    for r in rates.values():
        assert r.rate_low <= r.rate_high
        if r.has_ci:
            assert r.ci_low <= r.rate_low and r.rate_high <= r.ci_high


# ---------------------------------------------------------------- rejections
BAD = [
    (f.rate_per_gpu_day, dict(events=-1, gpus=10, days=1), "events"),
    (f.rate_per_gpu_day, dict(events=1, gpus=0, days=1), "gpus"),
    (f.rate_per_gpu_day, dict(events=1, gpus=-5, days=1), "gpus"),
    (f.rate_per_gpu_day, dict(events=1, gpus=10, days=0), "days"),
    (f.rate_per_gpu_day, dict(events=math.nan, gpus=10, days=1), "events"),
    (f.rate_per_gpu_day, dict(events=1, gpus=math.inf, days=1), "gpus"),
    (f.poisson_ci, dict(events=-1), "events"),
    (f.poisson_ci, dict(events=2.5), "events"),
    (f.poisson_ci, dict(events=3, confidence=0.0), "confidence"),
    (f.poisson_ci, dict(events=3, confidence=1.0), "confidence"),
    (f.poisson_ci, dict(events=3, confidence=math.nan), "confidence"),
    (f.rate_ci_per_gpu_day, dict(events=3, gpus=0, days=1), "gpus"),
    (f.rate_ci_per_gpu_day, dict(events=3, gpus=1, days=-1), "days"),
    (f.rate_ci_per_gpu_day, dict(events=3, gpus=1, days=1, confidence=1.5), "confidence"),
    (f.failures_per_day, dict(n_gpus=0, rate_per_gpu_day=1e-4), "n_gpus"),
    (f.failures_per_day, dict(n_gpus=10, rate_per_gpu_day=-1e-4), "rate_per_gpu_day"),
    (f.fleet_mtbf_hours, dict(n_gpus=-3, rate_per_gpu_day=1e-4), "n_gpus"),
    (f.fleet_mtbf_hours, dict(n_gpus=10, rate_per_gpu_day=0), "rate_per_gpu_day"),
    (f.fleet_mtbf_hours, dict(n_gpus=10, rate_per_gpu_day=math.inf), "rate_per_gpu_day"),
    (f.fleet_first_failure_weibull, dict(n_gpus=10, shape=0, scale=1), "shape"),
    (f.fleet_first_failure_weibull, dict(n_gpus=10, shape=-1, scale=1), "shape"),
    (f.fleet_first_failure_weibull, dict(n_gpus=0, shape=1, scale=1), "n_gpus"),
    (f.fleet_first_failure_weibull, dict(n_gpus=10, shape=1, scale=0), "scale"),
    (f.weibull_mean, dict(shape=0, scale=1), "shape"),
    (f.weibull_mean, dict(shape=1, scale=math.nan), "scale"),
    (f.weibull_scale_for_mean, dict(shape=-0.5, mean=1), "shape"),
    (f.weibull_scale_for_mean, dict(shape=0.7, mean=0), "mean"),
    (f.weibull_hazard, dict(t=0.0, shape=0.7, scale=1), "t"),
    (f.weibull_hazard, dict(t=1.0, shape=0, scale=1), "shape"),
    (f.weibull_cdf, dict(t=-1.0, shape=1, scale=1), "t"),
    (f.weibull_cdf, dict(t=[1.0, math.nan], shape=1, scale=1), "t"),
    (f.weibull_pdf, dict(t=1.0, shape=1, scale=-1), "scale"),
    (f.fleet_mean_time_to_first_failure, dict(n_gpus=10, shape=0, scale=1), "shape"),
    (f.fleet_mean_time_to_first_failure, dict(n_gpus=1.5, shape=1, scale=1), "n_gpus"),
    (f.sample_fleet_first_failure, dict(rng=np.random.default_rng(0), n_gpus=0, size=3), "n_gpus"),
    (f.sample_fleet_first_failure, dict(rng=np.random.default_rng(0), n_gpus=3, size=0), "size"),
    (f.sample_fleet_first_failure, dict(rng=np.random.default_rng(0), n_gpus=3, size=3, shape=-1), "shape"),
    (f.sample_fleet_first_failure, dict(rng=0, n_gpus=3, size=3), "rng"),
    (f.category_counts, dict(categories=["a"], counts=[-1]), "counts"),
    (f.log_rates, dict(confidence=1.0), "confidence"),
]


@pytest.mark.parametrize("func, kwargs, name", BAD, ids=[f"{b[0].__name__}-{b[2]}-{i}" for i, b in enumerate(BAD)])
def test_bad_input_names_parameter(func, kwargs, name):
    with pytest.raises(ValueError, match=rf"^{name}\b"):
        func(**kwargs)


@pytest.mark.parametrize(
    "func, kwargs, check",
    [
        # each input fails only the check it is for: [2, -1] has a positive total, so only the
        # negative-count check can reject it; [] and [[1, 2]] are caught by the shape check
        (f.shares_from_counts, dict(counts=[]), "counts must be a non-empty 1-D sequence of counts >= 0 (got [])"),
        (f.shares_from_counts, dict(counts=[[1, 2]]), "counts must be a non-empty 1-D sequence of counts >= 0 (got [[1, 2]])"),
        (f.shares_from_counts, dict(counts=[2, -1]), "counts must be finite counts >= 0 (got [2, -1])"),
        (f.shares_from_counts, dict(counts=[2, math.nan]), "counts must be finite counts >= 0 (got [2, nan])"),
        (f.shares_from_counts, dict(counts=[0, 0]), "counts must have a total > 0 (got [0, 0])"),
        (f.category_counts, dict(categories=["a"], counts=[-1]), "counts must be an integer >= 0 (got -1)"),
        (f.category_counts, dict(categories=["a", "b"], counts=[1]), "categories and counts must be non-empty and of equal length (got 2 and 1)"),
        (f.category_counts, dict(categories=[], counts=[]), "categories and counts must be non-empty and of equal length (got 0 and 0)"),
    ],
)
def test_each_bad_count_input_hits_the_check_it_names(func, kwargs, check):
    with pytest.raises(ValueError) as err:
        func(**kwargs)
    assert str(err.value) == check


@settings(max_examples=50)
@given(bad=st.one_of(st.floats(max_value=0.0, allow_nan=False), st.just(math.nan), st.just(-math.inf), st.just(math.inf)))
def test_non_positive_or_non_finite_fleet_inputs_rejected(bad):
    for call, name in [
        (lambda: f.rate_per_gpu_day(1, bad, 1), "gpus"),
        (lambda: f.rate_per_gpu_day(1, 1, bad), "days"),
        (lambda: f.failures_per_day(10, bad), "rate_per_gpu_day"),
        (lambda: f.weibull_mean(bad, 1.0), "shape"),
        (lambda: f.fleet_first_failure_weibull(4, 1.0, bad), "scale"),
    ]:
        with pytest.raises(ValueError, match=rf"^{name}\b"):
            call()


# ---------------------------------------------------------------- notebook 02's dashboard
def test_fleet_widget_shows_the_tested_summary():
    from course_lib.widgets import fleet

    text = fleet.fleet_summary(4096, 5e-4)
    assert text == "4,096 GPUs at 5.00e-04 failures per GPU-day: 2.05 failures per day, fleet MTBF 11.7 h"
    w = fleet.fleet_result_widget(4096, 5e-4)
    assert "course-result" in w._dom_classes and text in w.value
    controls = fleet.fleet_controls(4096, 5e-4)
    assert all(not c.continuous_update for c in controls.values())
    with pytest.raises(ValueError, match="^n_gpus"):
        fleet.fleet_summary(0, 5e-4)


@pytest.mark.parametrize("shape", [0.5, 0.7, 1.0, 1.5])
def test_weibull_scale_for_hazard_matches_the_rate_at_that_age(shape):
    rate, age = 4.7e-4, 180.0
    s = f.weibull_scale_for_hazard(shape, rate, age)
    assert f.weibull_hazard(age, shape, s) == pytest.approx(rate, rel=1e-12)
    if shape == 1.0:
        assert s == pytest.approx(1 / rate, rel=1e-12)


def test_weibull_scale_for_hazard_names_a_bad_argument():
    with pytest.raises(ValueError, match="age"):
        f.weibull_scale_for_hazard(0.7, 1e-3, 0.0)


# ----- the rate factors (Table 5's shares, lemon-node removal), by hand from the sources' numbers --------------------
def test_planned_interruptions_are_all_less_the_unexpected():
    # Llama 3 (section 3.3.4): 466 job interruptions in 54 days, 419 of them unexpected -> 47 planned
    assert f.planned_interruptions() == (47, 54.0, pytest.approx(47 / 54, rel=1e-15))


def test_table5_share_counts_each_named_cause_once():
    # Table 5: 419 interruptions; Faulty GPU 148, GPU HBM3 Memory 72, NIC 7
    assert f.table5_share(["Faulty GPU"]) == 148 / 419
    assert f.table5_share(["Faulty GPU", "GPU HBM3 Memory"]) == 220 / 419
    assert f.table5_share(("Faulty GPU", "Faulty GPU")) == 148 / 419  # named twice, counted once
    assert f.table5_share(iter(["NIC"])) == 7 / 419  # any iterable
    for bad in ([], ["Faulty CPU"], ["Faulty GPU", "Faulty CPU"]):
        with pytest.raises(ValueError, match="components must be names from Table 5"):
            f.table5_share(bad)


def test_rate_without_causes_scales_by_the_rest():
    assert f.rate_without_causes(1e-3, ["NIC"]) == pytest.approx(1e-3 * 412 / 419, rel=1e-15)
    assert f.rate_without_causes(2.0, f.TOP_TABLE5_CAUSES) == pytest.approx(2.0 * 199 / 419, rel=1e-15)
    for bad in (0.0, -1e-3):
        with pytest.raises(ValueError, match="rate_per_gpu_day"):
            f.rate_without_causes(bad, ["NIC"])


def test_the_lemon_bound_is_the_rate_without_the_two_largest_causes():
    assert f.TOP_TABLE5_CAUSES == ("Faulty GPU", "GPU HBM3 Memory")
    assert f.lemon_bound() == pytest.approx(199 / 419, rel=1e-15)  # x 0.475


def test_kokolis_job_shares_read_as_a_rate_factor():
    # 14 % of large jobs failed before removal, 4 % after: ln(1 - 0.04) / ln(1 - 0.14) = -0.040822 / -0.150823
    assert f.kokolis_lemon_rate_factor() == pytest.approx(0.0408219945 / 0.1508228897, rel=1e-9)  # x 0.2707


def test_the_measured_lemon_removal_as_recorded():
    m = f.measured_lemon_removal()
    assert (m.factor, m.factor_low, m.factor_high, m.in_sample) == (1.0182, 0.9877, 1.0340, 0.6296)
    assert (m.threshold, m.nodes_removed) == (4, 16) and type(m.threshold) is int and type(m.nodes_removed) is int
    assert m.capacity_removed == pytest.approx(0.04, rel=1e-15)  # 16 of 400 servers
    assert "InfiniteHBD" in m.source
    assert (m.lever_factor, m.gained) == (1.0, False)  # above 1: removal bought nothing
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.factor = 0.5


@pytest.mark.parametrize("factor, lever, gained", [(0.8, 0.8, True), (1.0, 1.0, False), (0.999, 0.999, True), (1.3, 1.0, False)])
def test_a_lemon_removal_gains_only_below_one(factor, lever, gained):
    m = f.MeasuredLemonRemoval(factor, factor, factor, factor, 3, 5, 0.01, "by hand")
    assert (m.lever_factor, m.gained) == (lever, gained)


def test_clamp_lemon_factor_and_the_courses_default():
    assert f.clamp_lemon_factor(1.02) == 1.0 and f.clamp_lemon_factor(1.0) == 1.0
    assert f.clamp_lemon_factor(0.3) == 0.3  # default bound 0: no floor
    assert f.clamp_lemon_factor(0.3, 0.47) == 0.47 and f.clamp_lemon_factor(0.6, 0.47) == 0.6
    for bad in (0.0, -0.5):
        with pytest.raises(ValueError, match="factor"):
            f.clamp_lemon_factor(bad)
    assert f.lemon_node_factor() == 1.0  # the trace's x 1.0182, clamped at 1
