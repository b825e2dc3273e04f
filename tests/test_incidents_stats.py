"""The log's estimators recover a known truth: synthetic logs (gamma node rates, bursts, lognormal repairs).

Every log here is drawn by course_lib.incidents.synthetic_log with a fixed seed, so the tests are
deterministic; the bounds are set from each estimator's own statistical error (binomial for a
coverage or a rejection rate), not tuned to one draw.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
from scipy import stats

from course_lib.incidents import analysis as an
from course_lib.incidents import synthetic_log

FLEET = an.Fleet(400, 8)
TRACE_LIKE = dict(n_nodes=400, days=348.0, rate_per_node_day=3.4e-3)  # about the trace's size and rate


def binomial_band(p: float, n: int, sigmas: float = 3.0) -> tuple[float, float]:
    sd = math.sqrt(p * (1 - p) / n)
    return p - sigmas * sd, p + sigmas * sd


def test_the_rates_interval_covers_the_true_rate_in_at_least_90_percent_of_200_logs():
    hits = 0
    for seed in range(200):
        log, truth = synthetic_log(seed, shape=0.8, **TRACE_LIKE)
        est = an.rate(log, FLEET)
        true_per_gpu_day = truth.rate_per_node_day / FLEET.gpus_per_node  # the fleet that was drawn
        hits += est.low <= true_per_gpu_day <= est.high
    assert hits / 200 >= 0.90
    assert hits / 200 >= binomial_band(0.95, 200)[0]  # and not worse than a 95 % interval's own error allows


def test_bursts_make_the_count_overdispersed_so_the_poisson_interval_undercovers():
    # the interval's promise rests on independent faults: with bursts of ~6 nodes it covers far less often
    hits = 0
    for seed in range(100):
        log, truth = synthetic_log(seed, burst_share=0.6, burst_size=6.0, **TRACE_LIKE)
        est = an.rate(log, FLEET)
        hits += est.low <= truth.rate_per_node_day / 8 <= est.high
    assert hits / 100 < 0.85


def test_the_dispersion_test_holds_its_level_for_identical_nodes_and_rejects_heterogeneous_ones():
    level, n = 0.05, 200
    rejected = sum(an.dispersion_test(an.node_counts(synthetic_log(s, **TRACE_LIKE)[0], 400)).rejects(level) for s in range(n))
    lo, hi = binomial_band(level, n)
    assert lo <= rejected / n <= hi, rejected
    power = sum(an.dispersion_test(an.node_counts(synthetic_log(1000 + s, shape=0.8, **TRACE_LIKE)[0], 400)).rejects(level)
                for s in range(50))
    assert power == 50


def test_the_gamma_poisson_fit_recovers_the_shape_and_finds_none_for_identical_nodes():
    log, truth = synthetic_log(7, n_nodes=3000, days=348.0, rate_per_node_day=3.4e-3, shape=0.8)
    fit = an.fit_negative_binomial(an.node_counts(log, 3000))
    assert fit.shape_low < 0.8 < fit.shape_high
    assert fit.mean == pytest.approx(len(log) / 3000)
    assert fit.likelihood_ratio_p < 1e-6
    ident = an.fit_negative_binomial(an.node_counts(synthetic_log(8, n_nodes=3000, days=348.0, rate_per_node_day=3.4e-3)[0], 3000))
    assert ident.shape_high == math.inf and ident.shape_low > 1.0  # heterogeneity as strong as k = 1 is excluded


def test_the_gamma_poisson_variance_is_mu_plus_mu_squared_over_k():
    """The over-dispersion the fit measures, derived: Var N = E[Var(N | lambda)] + Var(E[N | lambda])."""
    k, theta, t = sp.symbols("k theta t", positive=True)
    lam = sp.Symbol("lambda", positive=True)
    gamma_pdf = lam ** (k - 1) * sp.exp(-lam / theta) / (sp.gamma(k) * theta ** k)
    e_lam = sp.simplify(sp.integrate(lam * gamma_pdf, (lam, 0, sp.oo)))
    e_lam2 = sp.simplify(sp.integrate(lam ** 2 * gamma_pdf, (lam, 0, sp.oo)))
    mu = e_lam * t
    var = e_lam * t + (e_lam2 - e_lam ** 2) * t ** 2  # Poisson given lambda: mean = var = lambda t
    assert sp.simplify(var - (mu + mu ** 2 / k)) == 0
    # and the fit's mean and shape give that variance on a large synthetic fleet
    log, _ = synthetic_log(11, n_nodes=5000, days=348.0, rate_per_node_day=3.4e-3, shape=1.5)
    x = an.node_counts(log, 5000)
    fit = an.fit_negative_binomial(x)
    assert x.var(ddof=1) == pytest.approx(fit.mean + fit.mean ** 2 / fit.shape, rel=0.15)


def test_worst_node_shares_match_identical_nodes_in_the_large_fleet_limit():
    log, _ = synthetic_log(3, n_nodes=20000, days=348.0, rate_per_node_day=3.4e-3)
    w = an.worst_node_shares(an.node_counts(log, 20000))
    assert w.nodes == (200, 1000, 2000)
    for o, p in zip(w.observed, w.poisson):
        assert o == pytest.approx(p, rel=0.05)
    het, _ = synthetic_log(4, n_nodes=20000, days=348.0, rate_per_node_day=3.4e-3, shape=0.8)
    c = an.node_counts(het, 20000)
    wh = an.worst_node_shares(c, fit=an.fit_negative_binomial(c))
    assert all(o > p for o, p in zip(wh.observed, wh.poisson))
    for o, p in zip(wh.observed, wh.negbin):
        assert o == pytest.approx(p, rel=0.05)


def test_out_of_sample_lemon_removal_has_the_right_sign_and_size():
    n = 4000
    log, truth = synthetic_log(21, n_nodes=n, days=348.0, rate_per_node_day=3.4e-3, shape=0.5)
    lem = an.lemon_removal(log, n)
    slots = np.array([int(s[1:]) for s in log.nodes])  # node ids n00000... -> the generator's node index
    removed = np.zeros(n, bool)
    removed[slots[list(lem.removed_nodes)]] = True
    true_factor = truth.node_rates[~removed].mean() / truth.node_rates.mean()
    assert lem.factor < 1 and lem.factor_high < 1  # removing the worst nodes lowers the rate
    assert lem.factor_low <= true_factor <= lem.factor_high  # by as much as the truth says
    assert lem.n_removed > 0 and lem.capacity_removed == lem.n_removed / n
    ident, _ = synthetic_log(22, n_nodes=n, days=348.0, rate_per_node_day=3.4e-3)
    li = an.lemon_removal(ident, n, threshold=2)
    assert li.factor_low <= 1.0 <= li.factor_high  # identical nodes: nothing to gain


def test_the_lemon_threshold_is_the_1_percent_rule():
    m = 0.6
    k = an.lemon_threshold(m, 0.01)
    assert stats.poisson.sf(k - 1, m) <= 0.01 < stats.poisson.sf(k - 2, m)
    with pytest.raises(ValueError, match="false_flag"):
        an.lemon_threshold(m, 1.5)


def test_repeat_faults_of_identical_nodes_match_the_poisson_share():
    log, _ = synthetic_log(5, n_nodes=4000, days=348.0, rate_per_node_day=3.4e-3)
    for within in (None, 30.0):
        r = an.repeat_fault_share(log, 4000, within)
        assert r.low <= r.poisson_share <= r.high, within


def test_bursts_are_seen_and_independent_faults_look_poisson():
    calm, _ = synthetic_log(31, n_nodes=2000, days=348.0, rate_per_node_day=3.4e-3)
    b = an.bursts(calm)
    assert abs(b.gap_cv - 1) < 4 * b.gap_cv_sd
    assert b.coincident_low <= b.chance_share <= b.coincident_high
    assert b.p_at_least_low <= b.p_at_least_poisson <= b.p_at_least_high
    bursty, truth = synthetic_log(32, n_nodes=2000, days=348.0, rate_per_node_day=3.4e-3, burst_share=0.3, burst_size=4.0)
    bb = an.bursts(bursty)
    assert bb.gap_cv > 1 + 4 * bb.gap_cv_sd
    assert bb.coincident_low > 5 * bb.chance_share
    assert bb.coincident_share == pytest.approx(truth.in_burst.mean() + bb.chance_share, abs=0.05)


def test_monthly_rates_accept_one_rate_when_it_is_one_and_cover_it():
    log, truth = synthetic_log(41, **TRACE_LIKE)
    m = an.monthly_rates(log, FLEET)
    true = truth.rate_per_node_day / 8
    assert m.counts.sum() == len(log) and m.edges[0] == 0 and m.edges[-1] == 348.0
    assert m.p_value > 0.001
    assert np.mean((m.low <= true) & (true <= m.high)) >= 0.75
    assert m.first_low <= 1.0 <= m.first_high


def test_repair_quantiles_recover_the_lognormal_and_handle_censoring():
    log, truth = synthetic_log(51, n_nodes=2000, days=348.0, rate_per_node_day=3.4e-3, repair_median_days=1.0, repair_sigma=1.5)
    r = an.repair_times(log)
    assert r.censored > 0  # repairs that outlast the window stay open
    assert r.median_days == pytest.approx(truth.repair_quantile(0.5), rel=0.1)
    assert r.p90_days == pytest.approx(truth.repair_quantile(0.9), rel=0.15)
    closed = log.where(~log.open)
    rc = an.repair_times(closed)
    d = np.sort(closed.duration_days)
    assert rc.median_days == d[math.ceil(0.5 * d.size) - 1]  # uncensored: the empirical quantile
    assert rc.median_low <= truth.repair_quantile(0.5) <= rc.median_high


def test_the_spare_pool_from_poisson_matches_a_replay_of_a_poisson_log():
    # M/G/infinity: the number in repair is Poisson(lambda E[R]) for any repair distribution
    log, truth = synthetic_log(61, n_nodes=400, days=2000.0, rate_per_node_day=3.4e-3, repair_median_days=1.0, repair_sigma=1.0)
    lam = len(log) / log.days
    s = an.spare_pool(lam, truth.repair_mean_days, 0.99)
    assert stats.poisson.cdf(s - 1, lam * truth.repair_mean_days) >= 0.99 > stats.poisson.cdf(s - 2, lam * truth.repair_mean_days)
    replay, seen = an.replay_spares(log, 400, 400, 0.99)
    assert abs(replay - s) <= 1
    assert seen.mean() == pytest.approx(lam * truth.repair_mean_days, rel=0.15)


def test_bad_inputs_to_the_estimators_name_the_parameter():
    log, _ = synthetic_log(1, **TRACE_LIKE)
    with pytest.raises(ValueError, match="fleet.n_nodes must be >="):
        an.rate(log, an.Fleet(10, 8))
    with pytest.raises(ValueError, match="fleet must be a Fleet"):
        an.rate(log, 400)
    with pytest.raises(ValueError, match="n_nodes must be an integer >= 1"):
        an.Fleet(0)
    with pytest.raises(ValueError, match="counts must not all be zero"):
        an.dispersion_test(np.zeros(10))
    with pytest.raises(ValueError, match="split must be"):
        an.lemon_removal(log, 400, split=1.0)
    with pytest.raises(ValueError, match="quantile must be"):
        an.spare_pool(1.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="burst_share must be"):
        synthetic_log(1, burst_share=1.0)


def test_the_interval_widened_for_overdispersion_covers_bursty_logs():
    hits_poisson = hits_wide = 0
    for seed in range(100):
        log, truth = synthetic_log(seed, burst_share=0.6, burst_size=6.0, **TRACE_LIKE)
        est = an.rate(log, FLEET)
        b = an.bursts(log)
        lo, hi = an.overdispersed_interval(est, b.daily_variance / b.daily_mean)
        true = truth.rate_per_node_day / 8
        hits_poisson += est.low <= true <= est.high
        hits_wide += lo <= true <= hi
    assert hits_wide >= 88 and hits_wide > hits_poisson
    calm, _ = synthetic_log(1, **TRACE_LIKE)
    est = an.rate(calm, FLEET)
    assert an.overdispersed_interval(est, 1.0) == pytest.approx((est.low, est.high))
    assert an.overdispersed_interval(est, 0.5) == pytest.approx((est.low, est.high))  # no credit for under-dispersion


# ---------------------------------------------------------------- issue 29: the estimators' edges and defaults by hand
def test_exact_intervals_are_the_beta_quantiles_at_95_percent():
    lo, hi = an.clopper_pearson(3, 20)
    assert (lo, hi) == pytest.approx((stats.beta.ppf(0.025, 3, 18), stats.beta.ppf(0.975, 4, 17)), rel=1e-9)
    assert an.clopper_pearson(1, 1)[1] == 1.0
    with pytest.raises(ValueError, match="n must be an integer >= 1"):
        an.clopper_pearson(0, 0)
    (a, b) = an.shares(["x", "x", "y"])
    assert (a.name, a.count, a.share) == ("x", 2, pytest.approx(2 / 3)) and (a.low, a.high) == pytest.approx(an.clopper_pearson(2, 3))
    assert b.name == "y"
    with pytest.raises(ValueError, match="labels must hold at least one"):
        an.shares([])


def test_node_counts_and_rate_take_exactly_the_fleet():
    log, _truth = synthetic_log(1, n_nodes=20, days=30.0, rate_per_node_day=0.2)
    seen = len(np.unique(log.node))
    assert an.node_counts(log, seen).size == seen and an.node_counts(log, seen).sum() == len(log)
    with pytest.raises(ValueError, match="n_nodes must be >="):
        an.node_counts(log, seen - 1)
    assert an.rate(log, an.Fleet(seen, 8)).count == len(log)
    with pytest.raises(ValueError, match="fleet.n_nodes must be >="):
        an.rate(log, an.Fleet(seen - 1, 8))


def test_dispersion_by_hand_and_its_bad_inputs():
    x = np.array([0, 1, 1, 2, 6, 0, 0, 3])
    m = x.mean()
    d = ((x - m) ** 2).sum() / m
    got = an.dispersion_test(x)
    assert got.statistic == pytest.approx(d) and got.p_value == pytest.approx(stats.chi2.sf(d, x.size - 1), rel=1e-12)
    for bad in ([[1, 2], [3, 4]], [1], [1, -1], [1, float("nan")]):
        with pytest.raises(ValueError, match="counts must be a 1-D array"):
            an.dispersion_test(bad)
    with pytest.raises(ValueError, match="counts must not all be zero"):
        an.dispersion_test([0, 0, 0])


def test_negative_binomial_fit_edges_by_hand():
    equal = an.fit_negative_binomial([2, 2, 2, 2, 2])  # no spread at all: no better than Poisson, identical nodes
    assert math.isinf(equal.shape) and equal.zero_expected == pytest.approx(5 * math.exp(-2.0))
    counts = np.array([0] * 60 + [1] * 20 + [2] * 8 + [6] * 6 + [12] * 6)
    fit = an.fit_negative_binomial(counts)
    assert math.isfinite(fit.shape) and fit.shape_low < fit.shape < fit.shape_high
    x, mult = np.unique(counts, return_counts=True)
    drop = stats.chi2.ppf(0.95, 1) / 2  # the profile likelihood's 95 % drop: 1.92
    for k in (fit.shape_low, fit.shape_high):
        assert an._nb_loglik(x.astype(float), mult.astype(float), k, fit.mean) == pytest.approx(fit.loglik - drop, abs=1e-6)
    p0 = (fit.shape / (fit.shape + fit.mean)) ** fit.shape  # the gamma-Poisson's P(0)
    assert fit.zero_expected == pytest.approx(counts.size * p0, rel=1e-9)
    for bad in ([[1, 2]], [3], [1, -1]):
        with pytest.raises(ValueError, match="counts must be a 1-D array"):
            an.fit_negative_binomial(bad)
    with pytest.raises(ValueError, match="counts must not all be zero"):
        an.fit_negative_binomial([0, 0])


def test_worst_shares_need_an_incident_and_the_lemon_threshold_by_hand():
    with pytest.raises(ValueError, match="counts must hold at least one incident"):
        an.worst_node_shares([0, 0, 0])
    with pytest.raises(ValueError, match="counts must hold at least one incident"):
        an.worst_node_shares([])
    # P(X >= k) for Poisson(0.5): k=3 1.4 %, k=4 0.18 %: the 1 % rule gives 4; a 2 % rule would give 3
    assert an.lemon_threshold(0.5) == 4 and an.lemon_threshold(0.5, 0.02) == 3
    assert an.lemon_threshold(0.01) == 2  # never below 2: one incident is not a lemon


def test_top_share_of_a_large_poisson_fleet_by_quadrature():
    m, f = 2.0, 0.05
    u = (np.arange(200_000) + 0.5) / 200_000  # the top f of the quantile function, integrated
    top = stats.poisson.ppf(u[u > 1 - f], m).sum() / u.size
    assert an.top_share_limit(stats.poisson(m), m, f) == pytest.approx(top / m, abs=2e-4)
