"""The synthetic incident generator (course_lib.incidents.synthetic): do its draws have the law it claims?

Each statistical check compares a draw with the generator's stated law by another route (a sample mean,
variance, median, share) and allows 5 standard errors, the standard error computed here from the sample
size (said in a comment beside each), so that a fixed seed is not a tuned one. The exact checks (names,
window, refusals, censoring at the window's end, burst structure) come first: they are quick and a mutation
run stops at the first failure.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from course_lib.incidents import synthetic_log
from course_lib.incidents.synthetic import SyntheticTruth

Z = 5.0  # standard errors allowed in every statistical check


def burst_groups(log, truth, gap_days):
    """The burst incidents' starts, sorted, split where two consecutive starts are more than gap_days apart."""
    s = np.sort(log.start[truth.in_burst])
    if s.size == 0:
        return []
    return np.split(s, np.flatnonzero(np.diff(s) > gap_days) + 1)


# ---------------------------------------------------------------- refusals: each names its parameter
@pytest.mark.parametrize("kw, name", [
    (dict(n_nodes=0), "n_nodes"),
    (dict(days=0.0), "days"),
    (dict(rate_per_node_day=0.0), "rate_per_node_day"),
    (dict(shape=0.0), "shape"),
    (dict(burst_share=1.0), "burst_share"),
    (dict(burst_share=-0.1), "burst_share"),
    (dict(burst_share=0.3, burst_size=0.5), "burst_size"),
    (dict(burst_size=0.5), "burst_size"),
    (dict(burst_spread_min=-1.0), "burst_spread_min"),
    (dict(repair_median_days=0.0), "repair_median_days"),
    (dict(repair_sigma=-1.0), "repair_sigma"),
])
def test_refusals_name_the_parameter(kw, name):
    with pytest.raises(ValueError, match=name):
        synthetic_log(0, **dict(dict(n_nodes=5, days=10.0), **kw))


def test_burst_size_one_is_accepted_and_every_burst_has_one_member():
    # spread 0: a burst's members share its time exactly, so equal starts are one burst
    log, truth = synthetic_log(3, n_nodes=50, days=200.0, rate_per_node_day=0.02, burst_share=0.5,
                               burst_size=1.0, burst_spread_min=0.0)
    s = log.start[truth.in_burst]
    assert s.size > 50
    assert np.unique(s).size == s.size


# ---------------------------------------------------------------- defaults
def test_defaults():
    log, truth = synthetic_log(1)
    assert log.nodes == tuple(f"n{i:05d}" for i in range(400))
    assert log.nodes[0] == "n00000" and log.nodes[-1] == "n00399"
    assert log.window == (0.0, 348.0)
    assert not truth.in_burst.any() and truth.in_burst.size == len(log)
    assert set(log.cause_part("class")) == {"independent"}
    mu = 400 * 348.0 * 3.4e-3  # 473.28; Poisson sd sqrt(mu) = 21.8
    assert abs(len(log) - mu) < Z * math.sqrt(mu)
    assert math.isinf(truth.shape) and truth.burst_share == 0.0
    assert truth.repair_median_days == 1.0 and truth.repair_sigma == 1.5
    np.testing.assert_array_equal(truth.node_rates, np.full(400, 3.4e-3))
    assert np.all(log.start < 348.0) and np.all(log.start >= 0.0)


def test_default_burst_size_and_spread():
    # defaults burst_size 4 and burst_spread_min 2 (minutes); a burst's members lie within 2 min of each other.
    # Groups: burst starts split at gaps over 6 min (3 spreads: a burst is never split; two of the ~60 bursts
    # fall within 6 min of each other with probability about C(60,2) * 2 * 6 / 1440 / 348 = 4 %).
    log, truth = synthetic_log(2, burst_share=0.5)
    groups = burst_groups(log, truth, 6.0 / 1440)
    spans = np.array([g[-1] - g[0] for g in groups])
    assert spans.max() <= 2.0 / 1440
    # the widest of ~60 bursts spans most of the 2 min (a 4-member burst spans over 1.5 min with p = 0.26)
    assert spans.max() > 1.5 / 1440
    sizes = np.array([g.size for g in groups])
    # a burst is 1 + Poisson(3) members: sd of the mean size = sqrt(3 / n_bursts)
    assert abs(sizes.mean() - 4.0) < Z * math.sqrt(3.0 / sizes.size)


# ---------------------------------------------------------------- the seed, the truth object
def test_generator_seed_gives_the_int_seeds_draws():
    a, ta = synthetic_log(np.random.default_rng(5), n_nodes=50, days=100.0, rate_per_node_day=0.02, burst_share=0.3)
    b, tb = synthetic_log(5, n_nodes=50, days=100.0, rate_per_node_day=0.02, burst_share=0.3)
    assert a.equals(b) and len(a) > 0
    np.testing.assert_array_equal(ta.in_burst, tb.in_burst)
    np.testing.assert_array_equal(ta.node_rates, tb.node_rates)
    c, _ = synthetic_log(6, n_nodes=50, days=100.0, rate_per_node_day=0.02, burst_share=0.3)
    assert not a.equals(c)


def test_truth_is_frozen_and_its_rate_is_the_mean_of_node_rates():
    _, truth = synthetic_log(0, n_nodes=30, days=10.0, shape=2.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        truth.shape = 3.0
    assert isinstance(truth, SyntheticTruth)
    # the fleet's rate is the mean of its nodes' rates, by hand on a truth written out: (0.25 + 0.5 + 1.5) / 3 = 0.75
    # (binary fractions: exact), not the gamma's mean nor the median (0.5) nor the sum (2.25)
    hand = SyntheticTruth(np.array([0.25, 1.5, 0.5]), 2.0, 0.0, np.zeros(0, bool), 1.0, 1.5)
    assert hand.rate_per_node_day == 0.75 and type(hand.rate_per_node_day) is float
    # the drawn truth against its stated law: 30 gamma(2) rates of mean 3.4e-3, each positive; the mean of 30 has
    # sd 3.4e-3 / sqrt(2 * 30) = 4.4e-4 (the default 3.4e-3 is the generator's stated mean)
    r = 3.4e-3
    assert truth.node_rates.shape == (30,) and np.all(truth.node_rates > 0)
    assert abs(truth.rate_per_node_day - r) < Z * r / math.sqrt(2.0 * 30)
    assert np.unique(truth.node_rates).size == 30  # gamma nodes differ (identical nodes would all be r)


def test_repair_quantiles_and_mean_by_hand():
    _, truth = synthetic_log(0, n_nodes=2, days=1.0, repair_median_days=2.0, repair_sigma=0.7)
    assert truth.repair_quantile(0.5) == pytest.approx(2.0, rel=1e-12)
    assert truth.repair_quantile(0.8413447460685429) == pytest.approx(2.0 * math.e ** 0.7, rel=1e-9)  # z = 1
    assert truth.repair_quantile(0.975) == pytest.approx(2.0 * math.exp(0.7 * 1.959963984540054), rel=1e-9)
    assert truth.repair_mean_days == pytest.approx(2.0 * math.exp(0.49 / 2), rel=1e-12)


# ---------------------------------------------------------------- repairs: censoring at the window's end
def test_sigma_zero_repairs_are_exactly_the_median_and_open_after_the_window():
    T, med = 10.0, 0.5
    log, _ = synthetic_log(4, n_nodes=20, days=T, rate_per_node_day=1.0, repair_median_days=med, repair_sigma=0.0)
    open_ = np.isnan(log.end)
    np.testing.assert_array_equal(open_, log.start + med > T)
    np.testing.assert_array_equal(log.end[~open_], log.start[~open_] + med)
    assert open_.sum() > 0 and (~open_).sum() > 100
    # the incidents that started in the last med / 2 are all open
    late = log.start > T - med / 2
    assert late.sum() > 0 and open_[late].all()


def test_repair_ending_exactly_at_the_window_end_is_closed_and_no_start_at_or_after_it():
    # a spread of 10 days in a 1-day window: most burst starts are capped just below T; a repair of
    # T - nextafter(T, 0) days then ends exactly at T, which is not after the window: closed
    T = 1.0
    below = np.nextafter(T, 0.0)
    med = T - below
    log, truth = synthetic_log(8, n_nodes=60, days=T, rate_per_node_day=2.0, burst_share=0.5, burst_size=3.0,
                               burst_spread_min=10 * 1440.0, repair_median_days=med, repair_sigma=0.0)
    assert np.all(log.start < T) and np.all(log.start >= 0.0)
    capped = log.start == below
    assert capped.sum() > 5 and truth.in_burst[capped].all()
    np.testing.assert_array_equal(log.end[capped], np.full(capped.sum(), T))
    closed = ~np.isnan(log.end)
    assert np.all(log.end[closed] <= T)


def test_lognormal_repairs_from_a_long_window():
    # 4 nodes over 20000 days: ~1600 incidents, only those in the last few days are open (censored)
    med, sig = 2.0, 0.8
    log, truth = synthetic_log(5, n_nodes=4, days=20000.0, rate_per_node_day=0.02, repair_median_days=med,
                               repair_sigma=sig)
    closed = ~np.isnan(log.end)
    assert closed.mean() > 0.99
    assert np.all(log.end[closed] <= 20000.0)
    x = np.log(log.end[closed] - log.start[closed])
    n = x.size
    # sample median of a normal: se = sqrt(pi / 2) * sig / sqrt(n); sample sd: se = sig / sqrt(2 n)
    assert abs(np.median(x) - math.log(med)) < Z * math.sqrt(math.pi / 2) * sig / math.sqrt(n)
    assert abs(x.std(ddof=1) - sig) < Z * sig / math.sqrt(2 * n)
    # the lognormal mean: se = mean * sqrt(exp(sig^2) - 1) / sqrt(n)
    se_mean = truth.repair_mean_days * math.sqrt(math.expm1(sig ** 2)) / math.sqrt(n)
    assert abs(np.exp(x).mean() - truth.repair_mean_days) < Z * se_mean


# ---------------------------------------------------------------- bursts
def test_burst_sizes_are_capped_at_the_fleet_and_hit_every_node():
    # spread 0: equal starts are one burst; 1 + Poisson(49) members capped at 3 nodes
    # (the bursts' count is set for 50 members: b r n T / 50 = 45 bursts here)
    log, truth = synthetic_log(6, n_nodes=3, days=3000.0, rate_per_node_day=0.5, burst_share=0.5, burst_size=50.0,
                               burst_spread_min=0.0)
    s = log.start[truth.in_burst]
    _, sizes = np.unique(s, return_counts=True)
    assert sizes.size > 20 and sizes.max() <= 3
    # members drawn uniformly among the 3 nodes: each node's count ~ Binomial(m, 1/3), sd sqrt(m * 2 / 9)
    m = s.size
    hits = np.bincount(log.node[truth.in_burst], minlength=3)
    assert np.all(np.abs(hits - m / 3) < Z * math.sqrt(m * 2 / 9))


def test_burst_share_sizes_causes_and_times():
    n, T, r, b, size = 500, 2000.0, 0.01, 0.3, 5.0
    log, truth = synthetic_log(7, n_nodes=n, days=T, rate_per_node_day=r, burst_share=b, burst_size=size,
                               burst_spread_min=0.0)
    ib = truth.in_burst
    assert ib.size == len(log)
    cls = log.cause_part("class")
    assert np.all(cls[ib] == "burst") and np.all(cls[~ib] == "independent")
    assert set(log.cause_part("level")) == {"Synthetic"}
    # share of burst incidents: independent I ~ Poisson((1-b) N), burst members M compound Poisson with
    # var = b N (s - 1 + s^2) / s; delta method: var(share) = ((1-b)^2 var M + b^2 var I) / N^2
    N = n * T * r
    var = ((1 - b) ** 2 * b * N * (size - 1 + size ** 2) / size + b ** 2 * (1 - b) * N) / N ** 2
    assert abs(ib.mean() - b) < Z * math.sqrt(var)
    # total count: var = (1-b) N + b N (s - 1 + s^2) / s
    assert abs(len(log) - N) < Z * math.sqrt((1 - b) * N + b * N * (size - 1 + size ** 2) / size)
    # bursts (spread 0: one start per burst): 1 + Poisson(s - 1) members, sd of the mean sqrt((s-1) / n_bursts)
    t_burst, sizes = np.unique(log.start[ib], return_counts=True)
    assert abs(sizes.mean() - size) < Z * math.sqrt((size - 1) / sizes.size)
    # burst times and independent starts uniform on (0, T): mean T/2, sd of the mean T / sqrt(12 k)
    assert abs(t_burst.mean() - T / 2) < Z * T / math.sqrt(12 * t_burst.size)
    assert abs(log.start[~ib].mean() - T / 2) < Z * T / math.sqrt(12 * (~ib).sum())
    assert np.all(log.start < T) and np.all(log.start >= 0.0)
    # members drawn uniformly over the nodes: the first tenth of the nodes holds a tenth of them
    # (per burst Binomial(size, 1/10): var = n_bursts * E[S * 0.09 + S^2 * 0.01])
    first = log.node[ib] < n // 10
    v = np.sum(sizes * 0.09 + sizes ** 2 * 0.01)
    assert abs(first.sum() - ib.sum() / 10) < Z * math.sqrt(v)
    # the truth's rates: every node the same r (its own (1-b) r plus its share b r of the bursts)
    np.testing.assert_allclose(truth.node_rates, r, rtol=1e-12)
    assert truth.burst_share == b


def test_starts_uniform_over_a_short_window():
    # a 2-day window: independent starts and burst times (spread 0: one start per burst) uniform on (0, 2);
    # the share below 1 day is binomial, sd sqrt(1/4 / k)
    T = 2.0
    log, truth = synthetic_log(12, n_nodes=1000, days=T, rate_per_node_day=1.0, burst_share=0.5, burst_size=4.0,
                               burst_spread_min=0.0)
    ib = truth.in_burst
    t_burst = np.unique(log.start[ib])
    for t in (t_burst, log.start[~ib]):
        assert t.size > 200
        assert abs(np.mean(t < T / 2) - 0.5) < Z * math.sqrt(0.25 / t.size)
        assert abs(t.mean() - T / 2) < Z * T / math.sqrt(12 * t.size)
    assert np.all(log.start >= 0.0) and np.all(log.start < T)


def test_burst_spread_in_minutes():
    # 40 nodes over 20000 days: ~270 bursts, far apart (two within an hour: p ~ C(270,2) * 2 / 24 / 20000 = 15 %,
    # so split at gaps over 20 min, p ~ 5 %; a burst spreads over 3 min at most, never split)
    log, truth = synthetic_log(9, n_nodes=40, days=20000.0, rate_per_node_day=3e-3, burst_share=0.5, burst_size=4.0,
                               burst_spread_min=3.0)
    groups = burst_groups(log, truth, 20.0 / 1440)
    spans = np.array([g[-1] - g[0] for g in groups])
    assert spans.size > 100
    assert spans.max() <= 3.0 / 1440
    assert spans.max() > 2.5 / 1440
    # a member's offset is uniform on (0, spread): the span of a k-member burst has mean spread (k-1)/(k+1)
    ks = np.array([g.size for g in groups])
    expect = 3.0 / 1440 * (ks - 1) / (ks + 1)
    # var of the range of k uniforms on (0, 1): 2 (k - 1) / ((k + 1)^2 (k + 2))
    se = 3.0 / 1440 * math.sqrt(np.sum(2 * (ks - 1) / ((ks + 1) ** 2 * (ks + 2)))) / ks.size
    assert abs(spans.mean() - expect.mean()) < Z * se


# ---------------------------------------------------------------- node rates: identical and gamma nodes
def test_identical_nodes_poisson_counts():
    n, T, r = 2000, 100.0, 0.01
    totals, ratios, means = [], [], []
    for seed in range(5):
        log, truth = synthetic_log(seed, n_nodes=n, days=T, rate_per_node_day=r)
        c = np.bincount(log.node, minlength=n)
        totals.append(c.sum())
        ratios.append(c.var(ddof=1) / c.mean())
        means.append(log.start.mean())
        assert truth.rate_per_node_day == pytest.approx(r, rel=1e-12)
    mu = n * T * r
    # mean of 5 Poisson(n T r) totals: sd sqrt(mu / 5)
    assert abs(np.mean(totals) - mu) < Z * math.sqrt(mu / 5)
    # index of dispersion of n Poisson counts: sd about sqrt(2 / (n - 1)) each, sqrt(2 / (5 (n - 1))) for the mean
    assert abs(np.mean(ratios) - 1.0) < Z * math.sqrt(2 / (5 * (n - 1)))
    # starts uniform on (0, T): each log's mean start has sd T / sqrt(12 * 2000)
    assert abs(np.mean(means) - T / 2) < Z * T / math.sqrt(12 * 5 * mu)


@pytest.mark.parametrize("k, b", [(2.5, 0.0), (0.5, 0.2)])
def test_gamma_node_rates(k, b):
    n, T, r = 4000, 348.0, 3.4e-3
    log, truth = synthetic_log(10, n_nodes=n, days=T, rate_per_node_day=r, shape=k, burst_share=b)
    assert truth.shape == k
    # the node's own rate, from the truth's effective rate: own (1 - b) + b r
    own = (truth.node_rates - b * r) / (1 - b)
    assert np.all(own > 0)
    # gamma of mean r and shape k: sd of the sample mean r / sqrt(k n)
    assert abs(own.mean() - r) < Z * r / math.sqrt(k * n)
    # its CV^2 = 1 / k; relative se of the sample variance sqrt((2 + 6/k) / n), of mean^2 2 / sqrt(k n)
    cv2 = own.var(ddof=1) / own.mean() ** 2
    assert abs(cv2 * k - 1) < Z * math.sqrt((2 + 6 / k) / n + 4 / (k * n))
    c = np.bincount(log.node, minlength=n)
    ci = np.bincount(log.node[~truth.in_burst], minlength=n)
    # independent counts ~ Poisson(own (1 - b) T) given the rates: per rate quartile, sd sqrt(sum of the means)
    lam = own * (1 - b) * T
    quart = np.argsort(lam).reshape(4, -1)
    for q in quart:
        assert abs(ci[q].sum() - lam[q].sum()) < Z * math.sqrt(lam[q].sum())
    if b == 0:
        # negative binomial counts: mean mu, variance mu + mu^2 / k; se of the sample variance from the
        # sample's fourth central moment, sqrt((m4 - s^4) / n)
        mu = r * T
        s2 = c.var(ddof=1)
        m4 = np.mean((c - c.mean()) ** 4)
        assert abs(s2 - (mu + mu ** 2 / k)) < Z * math.sqrt((m4 - s2 ** 2) / n)
    else:
        # bursts add b r T per node on average: total burst members vs n b r T (compound Poisson, size 4:
        # var = n b r T (s - 1 + s^2) / s)
        m = truth.in_burst.sum()
        assert abs(m - n * b * r * T) < Z * math.sqrt(n * b * r * T * (3 + 16) / 4)
    # the fleet's true rate: mean of (1 - b) gamma rates plus b r; sd (1 - b) r / sqrt(k n)
    assert abs(truth.rate_per_node_day - r) < Z * (1 - b) * r / math.sqrt(k * n)


def test_bursts_capped_at_the_fleet_keep_their_share_of_the_faults():
    # 3 nodes, bursts of 1 + Poisson(49) nodes capped at 3: a burst's mean size is E[min(1 + X, 3)] = 3 - P(X = 0) * 2
    # - P(X = 1) ~ 3, not 50 (the truth said 50 % in bursts while 6 % were: the count of bursts used the uncapped 50)
    log, truth = synthetic_log(6, n_nodes=3, days=3000.0, rate_per_node_day=0.5, burst_share=0.5, burst_size=50.0,
                               burst_spread_min=0.0)
    n = len(log)  # expected 4,500; the share's standard error is about sqrt(0.25 / 4,500) = 0.0075 (bursts of 3 make it ~1.7x)
    assert abs(truth.in_burst.mean() - 0.5) < 5 * 1.7 * math.sqrt(0.25 / n)
    per_node = np.bincount(log.node, minlength=3) / 3000.0
    np.testing.assert_allclose(per_node, truth.node_rates, rtol=5 * math.sqrt(1.5 / 1500))  # ~1,500 faults a node
