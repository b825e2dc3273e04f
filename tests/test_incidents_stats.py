"""The log's estimators recover a known truth: synthetic logs (gamma node rates, bursts, lognormal repairs).

Every log here is drawn by course_lib.incidents.synthetic_log with a fixed seed, so the tests are
deterministic; the bounds are set from each estimator's own statistical error (binomial for a
coverage or a rejection rate), not tuned to one draw. The first section instead works small logs
by hand, incident by incident, field by field.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import sympy as sp
from scipy import stats

from course_lib.incidents import analysis as an
from course_lib.incidents import synthetic_log
from course_lib.incidents.schema import IncidentLog
from poisson_by_hand import poisson_cdf_by_sum, spares_by_search  # the spare pool's reference, by hand

FLEET = an.Fleet(400, 8)
TRACE_LIKE = dict(n_nodes=400, days=348.0, rate_per_node_day=3.4e-3)  # about the trace's size and rate


def binomial_band(p: float, n: int, sigmas: float = 3.0) -> tuple[float, float]:
    sd = math.sqrt(p * (1 - p) / n)
    return p - sigmas * sd, p + sigmas * sd


# ---------------------------------------------------------------- issue 29, fourth pass: every estimator on a log worked by hand
# (First in the file, so that a mutation run stops at them before the slower statistical tests below.)
# Small logs built incident by incident, so that each count, gap, day and repair can be read off the list; the
# expected numbers are worked out here (by hand, or by scipy through another closed form: Garwood as gamma
# quantiles, Clopper-Pearson as beta quantiles), never by the function under test.
NAN = float("nan")


def hand_log(events, window):
    """events: (node, start, end or NaN) in any order."""
    node, start, end = zip(*events) if events else ((), (), ())
    return IncidentLog.build(list(start), list(end), list(node), window=window)


def garwood(k, exposure, confidence=0.95):
    """The exact Poisson interval as gamma quantiles (the chi-square form's other face), per unit exposure."""
    a = 1 - confidence
    low = stats.gamma.ppf(a / 2, k) if k else 0.0
    return low / exposure, stats.gamma.ppf(1 - a / 2, k + 1) / exposure


def beta_ci(k, n, confidence=0.95):
    a = 1 - confidence
    low = stats.beta.ppf(a / 2, k, n - k + 1) if k else 0.0
    high = stats.beta.ppf(1 - a / 2, k + 1, n - k) if k < n else 1.0
    return low, high


def top_share_exact(sf, mean, f, xmax=200):
    """The top f of the quantile function integrated exactly: Q(u) = x on (1 - S(x - 1), 1 - S(x)], so the
    top f holds x over a length max(0, min(S(x - 1), f) - S(x)) of u (S(-1) = 1)."""
    xs = np.arange(xmax + 1)
    s = sf(xs)
    s_prev = np.r_[1.0, s[:-1]]
    return float(np.sum(xs * np.maximum(0.0, np.minimum(s_prev, f) - s)) / mean)


def test_records_are_frozen():
    recs = [
        an.Fleet(4, 2),
        an.RateEstimate(1, 10.0, 4, 2, 0.1, 0.0, 1.0, 0.95),
        an.Share("x", 1, 1.0, 0.0, 1.0),
        an.Dispersion(8, 1.0, 1.0, 7.0, 7, 0.5, 0, 1.0),
        an.NegBinFit(1.0, 2.0, 1.0, 3.0, -1.0, -2.0, 0.0, 5),
        an.WorstShares((0.1,), (1,), (0.5,), (0.4,), None),
        an.LemonRemoval(5.0, 2, 10, 2, 12, 6, 4.0, 0.5, 0.1, 0.9, (0, 1), 0.95),
        an.RepeatShare(1, 2, 0.5, 0.0, 1.0, 0.4, None),
    ]
    log = hand_log([("a", 1.0, 2.0), ("b", 2.0, 3.0), ("c", 2.5, 3.5), ("a", 40.0, 41.0)], (0.0, 70.0))
    recs += [an.bursts(log), an.monthly_rates(log, an.Fleet(3, 8)), an.repair_times(log)]
    for r in recs:
        name = dataclasses.fields(r)[0].name
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(r, name, getattr(r, name))


def test_fleet_and_rate_by_hand():
    assert an.Fleet(5).gpus_per_node == 8 and an.Fleet(5).gpus == 40  # 8 GPUs a node unless told
    assert an.Fleet(4, 2).gpus == 8
    # 6 incidents on 3 of 4 nodes of 2 GPUs over 10 days: 80 GPU-days
    log = hand_log([("a", 1.0, 2.0), ("a", 3.0, 4.0), ("b", 2.0, 2.5), ("b", 7.0, NAN), ("c", 5.0, 6.0), ("c", 9.0, 9.5)],
                   (0.0, 10.0))
    est = an.rate(log, an.Fleet(4, 2))
    assert (est.count, est.days, est.n_nodes, est.gpus_per_node, est.confidence) == (6, 10.0, 4, 2, 0.95)
    assert est.gpu_days == 80.0
    assert est.rate_per_gpu_day == pytest.approx(6 / 80, rel=1e-12)
    assert est.rate_per_node_day == pytest.approx(6 / 40, rel=1e-12)  # a node is 2 GPUs
    assert est.failures_per_day(16) == pytest.approx(16 * 6 / 80, rel=1e-12)
    assert (est.low, est.high) == pytest.approx(garwood(6, 80), rel=1e-9)
    assert (an.rate(log, an.Fleet(4, 2), 0.5).low, an.rate(log, an.Fleet(4, 2), 0.5).high) == pytest.approx(garwood(6, 80, 0.5), rel=1e-9)
    assert an.rate(log, an.Fleet(3, 2)).n_nodes == 3  # exactly the nodes seen is allowed
    # a log with no incident: a rate of 0, its upper bound -ln(0.025) over the exposure, no failures a day
    empty = hand_log([], (0.0, 10.0))
    e = an.rate(empty, an.Fleet(4, 2))
    assert (e.count, e.rate_per_gpu_day, e.low) == (0, 0.0, 0.0)
    assert e.high == pytest.approx(-math.log(0.025) / 80, rel=1e-9)
    assert e.failures_per_day(16) == 0.0


def test_the_overdispersed_interval_is_the_effective_counts_interval_times_phi():
    log = hand_log([("a", 1.0, 2.0), ("a", 3.0, 4.0), ("b", 2.0, 2.5), ("b", 7.0, NAN), ("c", 5.0, 6.0), ("c", 9.0, 9.5)],
                   (0.0, 10.0))
    est = an.rate(log, an.Fleet(4, 2))  # 6 incidents, 80 GPU-days
    for phi, k_eff in ((2.0, 3), (1.5, 4), (3.0, 2)):
        lo, hi = garwood(k_eff, 80)
        assert an.overdispersed_interval(est, phi) == pytest.approx((lo * phi, hi * phi), rel=1e-9), phi
    assert an.overdispersed_interval(est, 1.0) == pytest.approx(garwood(6, 80), rel=1e-9)
    with pytest.raises(ValueError, match="phi"):
        an.overdispersed_interval(est, 0.0)


def test_shares_are_sorted_by_count_then_name():
    got = an.shares(["b", "c", "c", "a", "b", "d", "c"])
    assert [(s.name, s.count) for s in got] == [("c", 3), ("b", 2), ("a", 1), ("d", 1)]
    assert got[0].share == pytest.approx(3 / 7) and (got[0].low, got[0].high) == pytest.approx(beta_ci(3, 7), rel=1e-9)
    lo, hi = an.shares(["x", "y"], confidence=0.5)[0].low, an.shares(["x", "y"], confidence=0.5)[0].high
    assert (lo, hi) == pytest.approx(beta_ci(1, 2, 0.5), rel=1e-9)


def test_node_counts_drop_the_logs_listed_nodes_without_an_incident():
    # four nodes listed (a synthetic or reader log lists every node), incidents on a (2) and c (1) only
    log = IncidentLog.from_codes([1.0, 2.0, 3.0], [1.5, 2.5, 3.5], [0, 2, 0], ("a", "b", "c", "d"), [0, 0, 0],
                                 (("x", "y", "z"),), window=(0.0, 5.0))
    assert sorted(an.node_counts(log, 3).tolist()) == [0, 1, 2]
    assert sorted(an.node_counts(log, 2).tolist()) == [1, 2]
    assert an.node_counts(hand_log([], (0.0, 5.0)), 3).tolist() == [0, 0, 0]
    with pytest.raises(ValueError, match="n_nodes"):
        an.node_counts(log, 0)


def test_dispersion_every_field_by_hand():
    got = an.dispersion_test([0, 1, 1, 2, 6, 0, 0, 3])  # mean 13/8; squared deviations add up to 29.875
    assert (got.n_nodes, got.dof, got.zero_nodes) == (8, 7, 3)
    assert got.mean == 1.625
    assert got.variance == pytest.approx(29.875 / 7, rel=1e-12)
    assert got.ratio == pytest.approx(29.875 / 7 / 1.625, rel=1e-12)
    assert got.statistic == pytest.approx(29.875 / 1.625, rel=1e-12)
    assert got.zero_expected == pytest.approx(8 * math.exp(-1.625), rel=1e-12)
    two = an.dispersion_test([0, 2])  # the smallest fleet, and a node with none: D = (1 + 1) / 1, chi2(1)
    assert (two.statistic, two.dof) == (2.0, 1)
    assert two.p_value == pytest.approx(math.erfc(1.0), rel=1e-9)  # P(chi2(1) > 2) = P(|Z| > sqrt 2)


def test_dispersion_rejects_below_its_level_five_percent_unless_told():
    def at(p):
        return an.Dispersion(8, 1.0, 1.0, 7.0, 7, p, 0, 1.0)
    assert at(0.0499).rejects() and not at(0.05).rejects() and not at(0.07).rejects()
    assert at(0.07).rejects(0.1) and not at(0.07).rejects(0.01)


def test_negative_binomial_records_cv_and_likelihood_ratio_by_hand():
    def fit(shape, ll, llp):
        return an.NegBinFit(1.0, shape, 1.0, 10.0, ll, llp, 0.0, 10)
    assert fit(4.0, 0.0, 0.0).rate_cv == 0.5 and fit(math.inf, 0.0, 0.0).rate_cv == 0.0
    # LR = 2.705543 is chi2(1)'s 90 % quantile: half its tail is 0.05
    assert fit(4.0, -10.0, -10.0 - 2.705543454095404 / 2).likelihood_ratio_p == pytest.approx(0.05, rel=1e-9)
    assert fit(4.0, -10.0, -9.0).likelihood_ratio_p == 0.5  # a fit worse than Poisson counts as LR 0
    assert fit(4.0, -10.0, -10.0).likelihood_ratio_p == 0.5


class _OffLattice:
    """A scipy distribution whose isf is off by ``shift`` (as an approximate isf may be on a lattice)."""

    def __init__(self, dist, shift):
        self.d, self.shift = dist, shift

    def isf(self, q):
        return self.d.isf(q) + (self.shift if q > 1e-9 else 0)

    def sf(self, x):
        return self.d.sf(x)

    def pmf(self, x):
        return self.d.pmf(x)


def test_top_share_limit_against_the_exact_quantile_integral():
    for m, f in ((2.0, 0.05), (2.0, 0.01), (2.0, 0.5), (0.3, 0.1), (6.0, 0.2)):
        d = stats.poisson(m)
        want = top_share_exact(d.sf, m, f)
        assert an.top_share_limit(d, m, f) == pytest.approx(want, rel=1e-9), (m, f)
        for shift in (-3, 3):  # an isf off the lattice's quantile is corrected both ways
            assert an.top_share_limit(_OffLattice(d, shift), m, f) == pytest.approx(want, rel=1e-9), (m, f, shift)
    # a nearly silent fleet: fewer than 5 % of nodes have any incident, so the top 5 % hold them all
    d = stats.poisson(0.01)
    assert an.top_share_limit(d, 0.01, 0.05) == pytest.approx(1.0, rel=1e-12)
    assert an.top_share_limit(_OffLattice(d, 3), 0.01, 0.05) == pytest.approx(1.0, rel=1e-12)
    nb = stats.nbinom(0.5, 0.5 / 1.5)  # mean 1, shape 0.5: a long tail
    assert an.top_share_limit(nb, 1.0, 0.05) == pytest.approx(top_share_exact(nb.sf, 1.0, 0.05, 2000), rel=1e-9)
    with pytest.raises(ValueError, match="fraction"):
        an.top_share_limit(d, 0.01, 0.0)


def test_worst_node_shares_by_hand():
    counts = [5, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1] + [0] * 18  # 30 nodes, 20 incidents
    w = an.worst_node_shares(np.random.default_rng(0).permutation(counts))
    assert w.fractions == (0.01, 0.05, 0.10)
    assert w.nodes == (1, 2, 3)  # ceil(0.3), ceil(1.5), ceil(3)
    assert w.observed == pytest.approx((5 / 20, 8 / 20, 10 / 20), rel=1e-12)
    m = 20 / 30
    assert w.poisson == pytest.approx(tuple(top_share_exact(stats.poisson(m).sf, m, f) for f in (0.01, 0.05, 0.10)), rel=1e-9)
    assert w.negbin is None
    assert an.worst_node_shares([1] * 200).nodes == (2, 10, 20)
    assert an.worst_node_shares([0] * 9 + [1]).nodes == (1, 1, 1)  # at least one node
    one = an.worst_node_shares([3])  # a fleet of one node holds all of it
    assert one.nodes == (1, 1, 1) and one.observed == (1.0, 1.0, 1.0)
    fit = an.NegBinFit(0.5, 2.0, 1.0, 3.0, 0.0, 0.0, 0.0, 30)  # gamma shape 2, mean 0.5: nbinom(2, 2 / 2.5)
    wn = an.worst_node_shares(counts, (0.1, 0.2), fit=fit)
    want = tuple(top_share_exact(stats.nbinom(2.0, 0.8).sf, 0.5, f) for f in (0.1, 0.2))
    assert wn.negbin == pytest.approx(want, rel=1e-9) and wn.nodes == (3, 6)
    assert an.worst_node_shares(counts, fit=an.NegBinFit(0.5, math.inf, 1.0, math.inf, 0.0, 0.0, 0.0, 30)).negbin is None


def test_lemon_removal_records_properties_by_hand():
    lem = an.LemonRemoval(5.0, 2, 10, 2, 12, 6, 4.0, 0.5, 0.1, 0.9, (0, 1), 0.95)
    assert lem.capacity_removed == 0.2
    assert lem.rate_all_per_node_day == pytest.approx(12 / 40)
    assert lem.rate_kept_per_node_day == pytest.approx(6 / 32)
    assert math.isnan(an.LemonRemoval(5.0, 2, 10, 10, 12, 0, 4.0, 0.0, 0.0, 0.0, (), 0.95).rate_kept_per_node_day)


def test_the_lemon_threshold_allows_a_flag_rate_exactly_at_its_bound():
    # the smallest k >= 2 with P(X >= k) <= false_flag: a false_flag equal to P(X >= 3) gives 3, a hair less 4
    at = float(stats.poisson.sf(2, 0.5))
    assert an.lemon_threshold(0.5, at) == 3 and an.lemon_threshold(0.5, at * (1 - 1e-9)) == 4
    with pytest.raises(ValueError, match="mean_per_node"):
        an.lemon_threshold(0.0)


def test_the_gamma_poisson_fit_of_a_quiet_fleet_by_hand():
    # mean 1/4 and under-dispersed (variance 3/16): no better than Poisson, whose log-likelihood is by hand
    # 3 log P(0) + log P(1) = 4 (-1/4) + log(1/4)
    fit = an.fit_negative_binomial([0, 0, 0, 1])
    assert fit.mean == 0.25 and math.isinf(fit.shape) and math.isinf(fit.shape_high) and fit.n_nodes == 4
    assert fit.loglik == fit.loglik_poisson == pytest.approx(-1.0 + math.log(0.25), rel=1e-12)
    assert fit.zero_expected == pytest.approx(4 * math.exp(-0.25), rel=1e-12)
    assert (fit.rate_cv, fit.likelihood_ratio_p) == (0.0, 0.5)


def test_the_gamma_poisson_interval_of_a_fleet_with_one_bad_node_reaches_down_to_0():
    # 1,999 nodes with none and one with 2,000: the fitted shape is tiny (5e-5) and the likelihood at the search's
    # lower end k = e^-12 is, by scipy's negative binomial, less than the 95 % drop of 1.92 below the maximum: the
    # interval's lower end is 0; its upper end is where the drop is reached
    counts = np.r_[np.zeros(1999, np.int64), 2000]
    fit = an.fit_negative_binomial(counts)

    def loglik(k):
        return float(stats.nbinom.logpmf(counts, k, k / (k + 1.0)).sum())
    drop = stats.chi2.ppf(0.95, 1) / 2
    assert fit.mean == 1.0 and fit.loglik == pytest.approx(loglik(fit.shape), abs=1e-9)
    assert fit.loglik - drop < loglik(math.exp(-12.0)) < fit.loglik - 1.0
    assert fit.shape_low == 0.0 and fit.shape_low < fit.shape < fit.shape_high < 1e-3
    assert loglik(fit.shape_high) == pytest.approx(fit.loglik - drop, abs=1e-6)
    # and the quiet fleet (no better than Poisson): the interval's lower end where the drop below Poisson is reached
    quiet = [0, 0, 0, 1]
    q = an.fit_negative_binomial(quiet)
    ll_q = float(stats.nbinom.logpmf(quiet, q.shape_low, q.shape_low / (q.shape_low + 0.25)).sum())
    assert ll_q == pytest.approx(q.loglik_poisson - drop, abs=1e-6)


def _lemon_log():
    # window 10 to 30: the default split is day 20. a: 2 before, 1 after; b: 1 before, one exactly at day 20
    # (after: the first part is start < split) and one after; c: 1 after; d: 1 before; e: none.
    return hand_log([("a", 12.0, 13.0), ("a", 14.0, 15.0), ("a", 25.0, 26.0), ("b", 15.0, 16.0), ("b", 20.0, 21.0),
                     ("b", 28.0, 29.0), ("c", 22.0, 23.0), ("d", 11.0, 12.0)], (10.0, 30.0))


def test_lemon_removal_by_hand_with_a_given_threshold():
    lem = an.lemon_removal(_lemon_log(), 5, threshold=2)
    assert (lem.split_day, lem.threshold, lem.n_nodes, lem.n_removed, lem.removed_nodes) == (20.0, 2, 5, 1, (0,))
    assert (lem.count_all, lem.count_kept, lem.days_after, lem.confidence) == (4, 3, 10.0, 0.95)
    scale = 5 / 4  # the fleet's exposure over the kept nodes'
    assert lem.factor == pytest.approx(3 / 4 * scale, rel=1e-12)
    assert (lem.factor_low, lem.factor_high) == pytest.approx(tuple(b * scale for b in beta_ci(3, 4)), rel=1e-9)
    half = an.lemon_removal(_lemon_log(), 5, threshold=2, confidence=0.5)
    assert (half.factor_low, half.factor_high) == pytest.approx(tuple(b * scale for b in beta_ci(3, 4, 0.5)), rel=1e-9)
    late = an.lemon_removal(_lemon_log(), 5, split=0.75, threshold=2)  # day 25: a (2) and b (2) before it
    assert (late.split_day, late.removed_nodes, late.count_all, late.count_kept) == (25.0, (0, 1), 2, 0)
    with pytest.raises(ValueError, match="threshold"):
        an.lemon_removal(_lemon_log(), 5, threshold=0)
    with pytest.raises(ValueError, match="n_nodes"):
        an.lemon_removal(_lemon_log(), 0, threshold=2)


def test_lemon_removal_by_hand_with_the_1_percent_rule():
    # 8 nodes, 4 incidents before day 20 (mean 0.5: the 1 % rule's threshold is 4, a 2 % rule's 3), a has 3 of them
    log = hand_log([("a", 11.0, 12.0), ("a", 12.0, 13.0), ("a", 13.0, 14.0), ("b", 14.0, 15.0), ("a", 25.0, 26.0),
                    ("c", 22.0, 23.0), ("c", 27.0, 28.0)], (10.0, 30.0))
    lem = an.lemon_removal(log, 8)
    assert (lem.threshold, lem.n_removed, lem.count_all, lem.count_kept, lem.factor) == (4, 0, 3, 3, 1.0)
    lem2 = an.lemon_removal(log, 8, false_flag=0.02)
    assert (lem2.threshold, lem2.removed_nodes, lem2.count_kept) == (3, (0,), 2)
    assert lem2.factor == pytest.approx(2 / 3 * 8 / 7, rel=1e-12)
    # mean 4/5 = 0.8: P(X >= 3) = 4.7 % > 1 % >= P(X >= 4) = 0.91 %, so 4; a has 4 before the split
    log5 = hand_log([("a", 11.0, 12.0), ("a", 12.0, 13.0), ("a", 13.0, 14.0), ("a", 14.0, 15.0), ("a", 25.0, 26.0),
                     ("b", 21.0, 22.0), ("c", 22.0, 23.0)], (10.0, 30.0))
    lem5 = an.lemon_removal(log5, 5)
    assert (lem5.threshold, lem5.removed_nodes, lem5.count_all, lem5.count_kept) == (4, (0,), 3, 2)
    assert lem5.factor == pytest.approx(2 / 3 * 5 / 4, rel=1e-12)


def test_lemon_removal_refuses_a_split_with_nothing_to_select_on_or_measure():
    after = hand_log([("a", 21.0, 22.0), ("b", 25.0, 26.0)], (10.0, 30.0))
    with pytest.raises(ValueError, match="first part of the log holds no incident"):
        an.lemon_removal(after, 4)
    before = hand_log([("a", 11.0, 12.0), ("a", 12.0, 13.0), ("b", 15.0, 16.0)], (10.0, 30.0))
    with pytest.raises(ValueError, match="later part of the log holds no incident"):
        an.lemon_removal(before, 4, threshold=2)
    both = hand_log([("a", 11.0, 12.0), ("b", 12.0, 13.0), ("a", 25.0, 26.0)], (10.0, 30.0))
    with pytest.raises(ValueError, match="threshold 1 removes every node"):
        an.lemon_removal(both, 2, threshold=1)
    assert an.lemon_removal(both, 3, threshold=1).n_removed == 2  # one node left: allowed


def test_repeat_fault_share_by_hand():
    # a at 1, 3, 10; b at 2; c at 5 and 5.5: over the log, a's 3 and 10 and c's 5.5 are repeats (3 of 6)
    log = hand_log([("a", 1.0, 1.5), ("b", 2.0, 2.5), ("a", 3.0, 3.5), ("c", 5.0, 5.2), ("c", 5.5, 6.0), ("a", 10.0, 11.0)],
                   (0.0, 20.0))
    r = an.repeat_fault_share(log, 4)
    assert (r.repeats, r.total, r.share, r.within_days) == (3, 6, 0.5, None)
    assert (r.low, r.high) == pytest.approx(beta_ci(3, 6), rel=1e-9)
    m = 6 / 4  # identical Poisson nodes: E[repeats] = E[N] - P(N > 0) per node
    assert r.poisson_share == pytest.approx((m - (1 - math.exp(-m))) / m, rel=1e-12)
    w = an.repeat_fault_share(log, 4, 2.0)  # within 2 days: a's 3 (exactly 2 after) and c's 5.5
    assert (w.repeats, w.within_days) == (2, 2.0)
    assert w.poisson_share == pytest.approx(1 - math.exp(-m * 2.0 / 20.0), rel=1e-12)
    assert (an.repeat_fault_share(log, 4, confidence=0.5).low,) == pytest.approx((beta_ci(3, 6, 0.5)[0],), rel=1e-9)
    with pytest.raises(ValueError, match="within_days"):
        an.repeat_fault_share(log, 4, 0.0)
    with pytest.raises(ValueError, match="the log holds no incident"):
        an.repeat_fault_share(hand_log([], (0.0, 20.0)), 4)
    with pytest.raises(ValueError, match="n_nodes"):
        an.repeat_fault_share(log, 0)


def _burst_log():
    # window 10 to 14.5: 4 whole days. Minutes after 10.5 and 12.5 written out; the last incident (day 4) is
    # outside the whole days.
    mn = 1 / 1440
    return hand_log([
        ("a", 10.5, 11.0), ("b", 10.5 + 3 * mn, 11.0),                 # 3 min apart, two nodes: both coincident
        ("a", 11.2, 11.3),                                            # day 1 alone
        ("c", 12.5, 12.6), ("c", 12.5 + 2 * mn, 12.6),                # the same node 2 min apart: not coincident
        ("d", 12.5 + 7.5 * mn, 12.6),                                 # 5.5 min after c's second: not within 5
        ("b", 12.9, 13.0),                                            # day 2 holds 4
        ("b", 13.6, 13.7),                                            # day 3
        ("e", 14.2, 14.3),                                            # day 4: not a whole day
    ], (10.0, 14.5))


def test_bursts_every_field_by_hand():
    log = _burst_log()
    b = an.bursts(log)
    t = np.array(sorted(log.start))
    gaps = np.diff(t)
    mean_gap = (t[-1] - t[0]) / 8
    sd_gap = math.sqrt(sum((g - mean_gap) ** 2 for g in gaps) / 7)
    assert b.n == 9 and b.gap_cv == pytest.approx(sd_gap / mean_gap, rel=1e-9)
    assert b.gap_cv_sd == pytest.approx(1 / math.sqrt(8), rel=1e-12)
    assert (b.window_min, b.coincident, b.coincident_share) == (5.0, 2, 2 / 9)
    assert (b.coincident_low, b.coincident_high) == pytest.approx(beta_ci(2, 9), rel=1e-9)
    other_per_day = (9 - 9 / 5) / 4.5  # 5 nodes: a fault sees the other nodes' 9 - 9/5 faults over 4.5 days
    assert b.chance_share == pytest.approx(1 - math.exp(-2 * (5 / 1440) * other_per_day), rel=1e-9)
    assert b.days == 4 and b.daily_counts.tolist() == [2, 1, 4, 1]
    assert (b.daily_mean, b.daily_variance) == (2.0, pytest.approx(6 / 3, rel=1e-12))
    assert b.at_least == 4 and b.p_at_least_observed == 0.25
    assert (b.p_at_least_low, b.p_at_least_high) == pytest.approx(beta_ci(1, 4), rel=1e-9)
    assert b.p_at_least_poisson == pytest.approx(1 - math.exp(-2) * (1 + 2 + 2 + 4 / 3), rel=1e-9)  # 14 %
    assert b.gaps_days == pytest.approx(gaps)
    six = an.bursts(log, window_min=6.0)  # now d is within 5.5 min of c's second
    assert (six.coincident, six.window_min) == (4, 6.0)
    assert an.bursts(log, at_least=5).p_at_least_observed == 0.0
    assert an.bursts(log, at_least=2).p_at_least_observed == 0.5
    half = an.bursts(log, confidence=0.5)
    assert (half.coincident_low, half.p_at_least_high) == pytest.approx((beta_ci(2, 9, 0.5)[0], beta_ci(1, 4, 0.5)[1]), rel=1e-9)


def test_bursts_edges_by_hand():
    one = hand_log([("a", 0.5, 0.6), ("a", 0.5 + 1 / 1440, 0.6), ("a", 1.5, 1.6)], (0.0, 2.0))  # 3 incidents, 2 days: the least
    b = an.bursts(one)
    assert (b.coincident, b.chance_share, b.days) == (0, 0.0, 2)  # one node: no other node to coincide with
    same = hand_log([("a", 1.0, 1.1), ("b", 1.0, 1.1), ("c", 1.0, 1.1)], (0.0, 3.0))
    s = an.bursts(same)
    assert math.isinf(s.gap_cv) and s.coincident == 3
    # a window as long as a day: a at 1.0 and b at 1.5 are within it of each other, a at 4.0 of nobody (its own
    # 1.0 is the same node)
    day = an.bursts(hand_log([("a", 1.0, 1.1), ("b", 1.5, 1.6), ("a", 4.0, 4.1)], (0.0, 5.0)), window_min=1440.0)
    assert day.coincident == 2
    # b and c 2.5 min apart are coincident, whatever a does elsewhere: a's faults at 0 and 3, b's at 1 - 10 min (the
    # times that a per-node bookkeeping with blocks 3 - 1 days apart would confuse with a's)
    w = 5 / 1440
    odd = an.bursts(hand_log([("a", 0.0, 0.1), ("b", 1 - 2 * w, 1.1), ("c", 1 - 1.5 * w, 1.1), ("a", 3.0, 3.1)], (0.0, 3.5)))
    assert odd.coincident == 2
    with pytest.raises(ValueError, match="at least 3 incidents"):
        an.bursts(hand_log([("a", 0.5, 0.6), ("b", 1.5, 1.6)], (0.0, 3.0)))
    with pytest.raises(ValueError, match="at least two whole days"):
        an.bursts(hand_log([("a", 0.5, 0.6), ("b", 1.0, 1.6), ("c", 1.5, 1.6)], (0.0, 1.99)))
    with pytest.raises(ValueError, match="window_min"):
        an.bursts(one, window_min=0.0)
    with pytest.raises(ValueError, match="at_least"):
        an.bursts(one, at_least=0)


def test_coincident_faults_against_every_pair():
    # a bursty log of ~600 faults on 400 nodes: "another node within the window" by brute force over all pairs
    log, _ = synthetic_log(9, n_nodes=400, days=60.0, rate_per_node_day=0.02, burst_share=0.3, burst_size=4.0)
    t, node = log.start, log.node
    for window_min in (5.0, 60.0):
        near = (np.abs(t[:, None] - t[None, :]) <= window_min / 1440) & (node[:, None] != node[None, :])
        assert an.bursts(log, window_min=window_min).coincident == int(near.any(axis=1).sum()), window_min


def _monthly_log(window=(0.0, 70.0)):
    # 6 incidents in days 0-30, 2 in 30-60, 2 in 60-70
    return hand_log([("a", d, d + 0.5) for d in (1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 35.0, 40.0, 61.0, 69.0)], window)


def test_monthly_rates_every_field_by_hand():
    m = an.monthly_rates(_monthly_log(), an.Fleet(2, 4))  # 8 GPUs
    assert m.edges.tolist() == [0.0, 30.0, 60.0, 70.0] and m.counts.tolist() == [6, 2, 2]
    assert m.rate == pytest.approx([6 / 240, 2 / 240, 2 / 80], rel=1e-12)
    for i, (c, gpu_days) in enumerate(((6, 240), (2, 240), (2, 80))):
        assert (m.low[i], m.high[i]) == pytest.approx(garwood(c, gpu_days), rel=1e-9)
    e = np.array([30, 30, 10]) * 10 / 70  # one rate: the 10 incidents spread by length
    chi2 = float(np.sum((np.array([6, 2, 2]) - e) ** 2 / e))
    assert chi2 == pytest.approx(2.1333333, rel=1e-6)
    assert (m.chi2, m.dof) == (pytest.approx(chi2, rel=1e-12), 2)
    assert m.p_value == pytest.approx(math.exp(-chi2 / 2), rel=1e-9)  # chi2(2)'s tail is exp(-x/2)
    assert m.first_ratio == pytest.approx((6 / 30) / (4 / 40), rel=1e-12)  # 2.0
    lo, hi = beta_ci(6, 10)  # month 1's share of the 10, as odds, times the lengths' ratio
    assert (m.first_low, m.first_high) == pytest.approx((lo / (1 - lo) * 40 / 30, hi / (1 - hi) * 40 / 30), rel=1e-9)
    m31 = an.monthly_rates(_monthly_log(), an.Fleet(2, 4), month_days=31.0)
    assert m31.edges.tolist() == [0.0, 31.0, 62.0, 70.0] and m31.counts.tolist() == [6, 3, 1]
    half = an.monthly_rates(_monthly_log(), an.Fleet(2, 4), confidence=0.5)
    assert (half.low[0], half.first_high) == pytest.approx((garwood(6, 240, 0.5)[0], (lambda h: h / (1 - h) * 4 / 3)(beta_ci(6, 10, 0.5)[1])), rel=1e-9)


def test_monthly_rates_edges_by_hand():
    two = an.monthly_rates(_monthly_log((0.0, 60.0)).where(np.arange(10) < 8), an.Fleet(2, 4))  # exactly two months
    assert two.edges.tolist() == [0.0, 30.0, 60.0] and two.dof == 1
    # a window a hair over two months does not get a third month of 1e-12 days
    tiny = an.monthly_rates(hand_log([("a", 1.0, 2.0), ("a", 35.0, 36.0)], (0.0, 60.0 + 1e-12)), an.Fleet(2, 4))
    assert tiny.edges.tolist() == [0.0, 30.0, 60.0] and tiny.counts.tolist() == [1, 1]
    first_only = an.monthly_rates(hand_log([("a", 1.0, 2.0), ("b", 2.0, 3.0)], (0.0, 60.0)), an.Fleet(2, 4))
    assert math.isinf(first_only.first_ratio) and math.isinf(first_only.first_high)
    assert first_only.first_low == pytest.approx(beta_ci(2, 2)[0] / (1 - beta_ci(2, 2)[0]), rel=1e-9)
    with pytest.raises(ValueError, match="month_days"):
        an.monthly_rates(hand_log([("a", 1.0, 2.0)], (0.0, 59.0)), an.Fleet(2, 4))
    with pytest.raises(ValueError, match="month_days"):
        an.monthly_rates(hand_log([("a", 101.0, 102.0)], (100.0, 159.0)), an.Fleet(2, 4))
    with pytest.raises(ValueError, match="month_days"):
        an.monthly_rates(_monthly_log(), an.Fleet(2, 4), month_days=0.0)
    with pytest.raises(ValueError, match="the log holds no incident"):
        an.monthly_rates(hand_log([], (0.0, 70.0)), an.Fleet(2, 4))


def test_kaplan_meier_by_hand():
    # 1, 2, 2+ (censored), 3, 4+: S = 4/5, then 4/5 x 3/4 (the censored 2 still at risk at 2), then x 1/2
    t, s = an.kaplan_meier([4.0, 2.0, 1.0, 3.0, 2.0], [False, True, True, True, False])
    assert t.tolist() == [1.0, 2.0, 3.0] and s == pytest.approx([0.8, 0.6, 0.3], rel=1e-12)
    t0, s0 = an.kaplan_meier([0.0, 1.0], [True, True])  # a zero duration is a duration
    assert t0.tolist() == [0.0, 1.0] and s0 == pytest.approx([0.5, 0.0])
    t1, s1 = an.kaplan_meier([1.0, 2.0], [True, False])  # one event: one step, to 1/2
    assert t1.tolist() == [1.0] and s1.tolist() == [0.5]
    te, se = an.kaplan_meier([1.0, 2.0], [False, False])  # all censored: no step
    assert te.size == 0 and se.size == 0
    for d, ev in (([[1.0]], [[True]]), ([1.0, 2.0], [True]), ([], []), ([-1.0, 1.0], [True, True]),
                  ([1.0, math.inf], [True, True]), ([1.0, NAN], [True, True])):
        with pytest.raises(ValueError, match="durations must be"):
            an.kaplan_meier(d, ev)


def test_repair_times_by_hand():
    # 10 closed repairs of 1..10 days: the KM cdf steps by 0.1, median 5, p90 9; the distribution-free 95 %
    # intervals are order statistics: median x(2)..x(9) (1-based), p90 x(7)..x(10) (binomial(10, q) quantiles)
    log = hand_log([(f"n{i}", float(i), float(i) + d) for i, d in enumerate(range(1, 11))], (0.0, 100.0))
    r = an.repair_times(log)
    assert (r.n, r.censored, r.zero_length) == (10, 0, 0)
    assert (r.median_days, r.median_low, r.median_high) == (5.0, 2.0, 9.0)
    assert (r.p90_days, r.p90_low, r.p90_high) == (9.0, 7.0, 10.0)
    assert r.mean_days == 5.5 and r.times.tolist() == [float(d) for d in range(1, 11)]
    assert r.cdf == pytest.approx(np.arange(1, 11) / 10)
    # 5 repairs: binomial(5, 1/2) puts 1/32 > 2.5 % on 0 and on 5, so the median's interval is x(1)..x(5) (93.75 %)
    five = an.repair_times(hand_log([(f"n{i}", float(i), float(i) + d) for i, d in enumerate(range(1, 6))], (0.0, 100.0)))
    assert (five.median_days, five.median_low, five.median_high) == (3.0, 1.0, 5.0)
    wide = an.repair_times(log, confidence=0.5)  # binomial(10, 0.5)'s 25 % and 75 % quantiles 4 and 6: x(4), x(7)
    assert (wide.median_low, wide.median_high) == (4.0, 7.0)
    # a zero-length repair, and the log's last repair still open at the window's end (censored at 100 - 40 = 60 days)
    z = an.repair_times(hand_log([("a", 1.0, 1.0), ("b", 2.0, 2.5), ("c", 3.0, 4.0), ("d", 40.0, NAN)], (0.0, 100.0)))
    assert (z.n, z.censored, z.zero_length) == (4, 1, 1)
    assert z.median_days == 0.5 and math.isinf(z.p90_days)  # KM: 0.25, 0.5, 0.75 at 0, 0.5, 1; the censored one never steps
    assert math.isnan(z.median_low) and math.isnan(z.p90_high)
    assert z.mean_days == pytest.approx(1.5 / 3)
    # an open repair censored at the window's end, 3 days after it started: at risk for 1 and 2, gone before 5
    mid = an.repair_times(hand_log([("a", 10.0, 11.0), ("b", 20.0, 22.0), ("c", 30.0, 35.0), ("d", 97.0, NAN)], (0.0, 100.0)))
    assert mid.times.tolist() == [1.0, 2.0, 5.0] and mid.cdf == pytest.approx([0.25, 0.5, 1.0])
    assert (mid.median_days, mid.p90_days, mid.censored) == (2.0, 5.0, 1)
    allopen = an.repair_times(hand_log([("a", 1.0, NAN), ("b", 2.0, NAN)], (0.0, 10.0)))
    assert math.isnan(allopen.mean_days) and math.isinf(allopen.median_days) and allopen.censored == 2
    # KM that stops below 0.9 (the longest repair censored): the p90 is not reached
    part = an.repair_times(hand_log([("a", 1.0, 2.0), ("b", 2.0, 4.0), ("c", 5.0, NAN)], (0.0, 10.0)))
    assert part.median_days == 2.0 and math.isinf(part.p90_days)
    with pytest.raises(ValueError, match="the log holds no incident"):
        an.repair_times(hand_log([], (0.0, 10.0)))
    with pytest.raises(ValueError, match="confidence"):
        an.repair_times(log, confidence=1.0)


def test_spare_pool_by_hand():
    # 2 failures a day, 1.5-day repairs: Poisson(3) in repair; P(N <= 7) = e^-3 (1 + 3 + 9/2 + 27/6 + 81/24 + 243/120
    # + 729/720 + 2187/5040) = 0.9881 < 0.99 <= P(N <= 8) = 0.9962: 9 spares
    assert an.spare_pool(2.0, 1.5) == 9
    assert poisson_cdf_by_sum(7, 3.0) == pytest.approx(math.exp(-3) * 16671 / 840, rel=1e-12)  # the sum above: 100,026 / 5,040
    for lam, r, q in ((2.0, 1.5, 0.99), (2.0, 1.5, 0.9), (0.5, 0.2, 0.99), (7.3, 2.1, 0.999), (1.0, 1.0, 0.5), (40.0, 0.5, 0.99)):
        assert an.spare_pool(lam, r, q) == spares_by_search(lam * r, q), (lam, r, q)
    assert an.spare_pool(2.0, 1.5, 0.9) == 6  # P(N <= 4) = 0.815 < 0.9 <= P(N <= 5) = 0.916
    for kw, name in ((dict(failures_per_day=0.0), "failures_per_day"), (dict(mean_repair_days=0.0), "mean_repair_days"),
                     (dict(quantile=0.0), "quantile")):
        with pytest.raises(ValueError, match=name):
            an.spare_pool(**{**dict(failures_per_day=2.0, mean_repair_days=1.5), **kw})


def _replay_log():
    # window 100 to 110 (10 days), three nodes. b's last repair runs past the window's end and wraps onto c's first
    # incident; d's repair of 0 days counts nobody, itself included; a's last is open (to 110).
    return hand_log([("c", 100.2, 100.3), ("a", 101.0, 104.0), ("b", 102.0, 103.0), ("c", 103.5, 103.5),
                     ("a", 108.0, NAN), ("b", 109.5, 110.5)], (100.0, 110.0))


def test_replay_spares_on_the_whole_fleet_by_hand():
    # at each incident, the other nodes in repair: c@0.2 sees b's wrapped tail, a@1 none, b@2 a, c@3.5 a,
    # a@8 none, b@9.5 a (open to the end)
    s, seen = an.replay_spares(_replay_log(), 3, 3)
    assert seen.tolist() == [1, 0, 1, 1, 0, 1]
    assert s == 2  # the 99 % of 6: the 6th smallest count, 1, plus one
    assert an.replay_spares(_replay_log(), 3, 3, quantile=0.3)[0] == 1   # ceil(1.8) = 2nd smallest: 0
    assert an.replay_spares(_replay_log(), 3, 3, quantile=0.34)[0] == 2  # ceil(2.04) = 3rd smallest: 1
    assert an.replay_spares(_replay_log(), 3, 3, draws=0)[1].size == 6  # the whole fleet is one replay, draws unused


def test_replay_spares_copies_and_draws():
    log = _replay_log()
    # a job of 6 nodes on a fleet of 3: two copies, every node chosen, in each of the 20 default draws
    s, seen = an.replay_spares(log, 6, 3)
    assert seen.size == 20 * 2 * 6
    # the first copy is the log itself, the second the log shifted at random: at each incident the count is the
    # log's own (a circular shift leaves a copy's counts alone) plus the other copy's nodes in repair then, at most 3
    # (no node's repairs overlap); over a uniform shift that adds on average the repair days over the window,
    # (0.1 + 3 + 1 + 0 + 2 + 1) / 10 = 0.71
    own = np.tile([1, 0, 1, 1, 0, 1], 2)
    excess = seen.reshape(20, 12) - own[np.newaxis, :]
    assert excess.min() >= 0 and excess.max() <= 3
    # a draw's mean excess is f(U), U the uniform shift: f worked here by brute force on a fine grid of shifts (the
    # other copy's repairs [t, t + d) covering each incident, circularly over the 10 days); the mean of 20 draws has
    # sd sd(f(U)) / sqrt(20)
    rel = np.array([0.2, 1.0, 2.0, 3.5, 8.0, 9.5])
    dur = np.array([0.1, 3.0, 1.0, 0.0, 2.0, 1.0])
    u = (np.arange(20_000) + 0.5) / 20_000 * 10.0
    shifted = (rel[None, :] + u[:, None]) % 10.0  # copy 1's incidents, per shift
    covers_0 = (rel[None, :, None] - shifted[:, None, :]) % 10.0 < dur[None, None, :]  # copy 1's repairs over copy 0's
    covers_1 = (shifted[:, :, None] - rel[None, None, :]) % 10.0 < dur[None, None, :]  # and copy 0's over copy 1's
    f = (covers_0.sum(axis=(1, 2)) + covers_1.sum(axis=(1, 2))) / 12
    assert f.mean() == pytest.approx(0.71, abs=1e-3)  # the brute force agrees with the repair days over the window
    se = f.std() / math.sqrt(20)  # 0.056
    assert abs(excess.mean() - 0.71) < 4 * se
    # the pool: the smallest s with P(count < s) >= 99 % over the counts seen
    assert np.mean(seen < s) >= 0.99 > np.mean(seen < s - 1)
    # the default stream is seed 0's, and another seed gives other offsets
    again = an.replay_spares(log, 6, 3, seed=0)[1]
    assert np.array_equal(seen, again) and not np.array_equal(seen, an.replay_spares(log, 6, 3, seed=1)[1])
    assert an.replay_spares(log, 6, 3, draws=3)[1].size == 3 * 12
    # a job of 2 of the 3 nodes: one copy, 2 nodes drawn each time, each with 2 of the 6 incidents, and at each
    # the one other job node in repair or not
    s2, seen2 = an.replay_spares(log, 2, 3, draws=40)
    assert seen2.size == 40 * 4 and seen2.max() <= 1 and s2 == 2
    for kw, name in ((dict(job_nodes=0), "job_nodes"), (dict(n_nodes=0), "n_nodes"), (dict(quantile=1.0), "quantile"),
                     (dict(draws=0), "draws")):
        with pytest.raises(ValueError, match=name):
            an.replay_spares(**{**dict(log=log, job_nodes=2, n_nodes=3), **kw})
    with pytest.raises(ValueError, match="the log holds no incident"):
        an.replay_spares(hand_log([], (0.0, 10.0)), 2, 3)


class _RecordingGenerator(np.random.Generator):
    """numpy's Generator on the same PCG64 stream, keeping each uniform and choice draw (default_rng passes it through)."""

    def __init__(self, seed):
        super().__init__(np.random.PCG64(seed))
        self.calls = []

    def uniform(self, *args, **kw):
        out = super().uniform(*args, **kw)
        self.calls.append(("uniform", args, out))
        return out

    def choice(self, *args, **kw):
        out = super().choice(*args, **kw)
        self.calls.append(("choice", args, out))
        return out


def test_replay_spares_against_a_brute_force_replay_of_its_own_draws():
    # a job of 5 nodes on a fleet of 3: copy 0 is the log, copy 1 the log shifted by a uniform offset in [0, T); the
    # job is 5 of the 6 node-copies (copy c's node k is c x 3 + k). Replayed by hand from the recorded draws: at each
    # fault of a job node-copy, the job's other repairs in progress, circularly over the 10-day window
    log = _replay_log()
    rng = _RecordingGenerator(3)
    s, seen = an.replay_spares(log, 5, 3, draws=4, seed=rng)
    slot = {name: k for k, name in enumerate(sorted(set(log.node_names.tolist())))}
    rel = log.start - 100.0
    dur = np.where(log.open, 110.0 - log.start, log.end - log.start)
    want = []
    assert [c[0] for c in rng.calls] == ["uniform", "choice"] * 4
    for (_, u_args, u), (_, c_args, chosen) in zip(rng.calls[::2], rng.calls[1::2]):
        assert u_args == (0, 10.0, 1) and c_args == (6, 5)  # one offset per copy after the first; 5 of 6 node-copies
        reps = [((rel[i] + off) % 10.0, dur[i], c * 3 + slot[nm])
                for c, off in enumerate((0.0, u[0])) for i, nm in enumerate(log.node_names.tolist()) if c * 3 + slot[nm] in chosen]
        want += [sum(1 for j, (t2, d2, _) in enumerate(reps) if j != i and (t - t2) % 10.0 < d2) for i, (t, d, _) in enumerate(reps)]
    assert seen.tolist() == want
    assert np.mean(seen < s) >= 0.99 > np.mean(seen < s - 1)


def test_replay_spares_with_one_largest_count():
    # three overlapping repairs: a's fault finds nobody out, b's finds a, c's finds a and b: 99 % needs 2 + 1 spares
    log = hand_log([("a", 1.0, 6.0), ("b", 2.0, 7.0), ("c", 3.0, 4.0)], (0.0, 10.0))
    s, seen = an.replay_spares(log, 3, 3)
    assert (s, seen.tolist()) == (3, [0, 1, 2])
    assert an.replay_spares(log, 3, 3, quantile=0.6)[0] == 2  # ceil(1.8) = the 2nd smallest, 1


def test_replay_spares_of_a_single_fault():
    log = hand_log([("a", 1.0, 2.0)], (0.0, 10.0))
    s, seen = an.replay_spares(log, 1, 1)  # the whole fleet: the one fault finds nobody else in repair
    assert (s, seen.tolist()) == (1, [0])
    s2, seen2 = an.replay_spares(log, 1, 2, draws=20)  # a one-node job on two nodes: a is drawn about half the time
    assert s2 == 1 and 0 < seen2.size < 20 and not seen2.any()


class _ChosenGenerator(np.random.Generator):
    """numpy's Generator whose choice() returns the node-copies the test names (the job is the test's, not the seed's)."""

    def __init__(self, chosen):
        super().__init__(np.random.PCG64(0))
        self.chosen = np.asarray(chosen)

    def choice(self, *args, **kw):
        return self.chosen.copy()


def test_replay_spares_of_a_job_that_draws_no_faulty_node():
    log = hand_log([("a", 1.0, 2.0), ("a", 5.0, 6.0)], (0.0, 10.0))  # one faulty node of 1,000: a is slot 0
    s, seen = an.replay_spares(log, 1, 1000, draws=1, seed=_ChosenGenerator([999]))  # a one-node job on a quiet node
    assert (s, seen.size) == (1, 0)
    s, seen = an.replay_spares(log, 1, 1000, draws=3, seed=_ChosenGenerator([7]))  # three draws, none holds a
    assert (s, seen.size) == (1, 0)
    # the job on node a: its two faults, each finding no other job node in repair
    s, seen = an.replay_spares(log, 1, 1000, draws=2, seed=_ChosenGenerator([0]))
    assert (s, seen.tolist()) == (1, [0, 0, 0, 0])
    # seed 0's own draw: seen holds a's two faults exactly when the drawn node-copy is a's (slot 0)
    rng = _RecordingGenerator(0)
    s, seen = an.replay_spares(log, 1, 1000, draws=1, seed=rng)
    (_, _, chosen), = [c for c in rng.calls if c[0] == "choice"]
    assert s == 1 and seen.tolist() == ([0, 0] if 0 in chosen else [])


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
    n, T, lam = 4000, 348.0, 3.4e-3
    log, _ = synthetic_log(5, n_nodes=n, days=T, rate_per_node_day=lam)
    m = lam * T  # 1.18 faults a node
    # over the whole log: a node with N faults has N - 1{N > 0} repeats; the share is sum g(N) / sum N over n iid
    # Poisson(m) nodes, expected E g / m = 1 - (1 - e^-m) / m, its sd by the delta method sqrt(Var(g - s N) / n) / m,
    # both summed over Poisson's pmf here
    x = np.arange(60)
    pmf = np.array([math.exp(-m) * m ** int(j) / math.factorial(int(j)) for j in x])
    g = x - (x > 0)
    share = float((g * pmf).sum()) / m
    assert share == pytest.approx(1 - (1 - math.exp(-m)) / m, rel=1e-12)
    se = math.sqrt(float(((g - share * x) ** 2 * pmf).sum()) / n) / m  # 0.0059
    r = an.repeat_fault_share(log, n, None)
    assert abs(r.share - share) < 4 * se
    assert r.poisson_share == pytest.approx(1 - (1 - math.exp(-len(log) / n)) / (len(log) / n), rel=1e-12)  # at the log's mean
    # within h = 30 days: a fault at t repeats when the node's previous one is within min(h, t) before it, probability
    # 1 - exp(-lam min(h, t)); over t uniform on (0, T): 1 - ((1 - e^-lam h) / lam + (T - h) e^-lam h) / T = 0.0929
    # (the course's 1 - e^-m h / T = 0.097 leaves out the first h days). The faults' repeat indicators are nearly
    # independent (lam h = 0.1): binomial sd over the faults, 0.0042
    h = 30.0
    p_h = 1 - ((1 - math.exp(-lam * h)) / lam + (T - h) * math.exp(-lam * h)) / T
    w = an.repeat_fault_share(log, n, h)
    assert abs(w.share - p_h) < 4 * math.sqrt(p_h * (1 - p_h) / len(log))
    assert w.poisson_share == pytest.approx(1 - math.exp(-len(log) / n * h / T), rel=1e-12)


def test_bursts_are_seen_and_independent_faults_look_poisson():
    n_nodes, T, lam = 2000, 348.0, 3.4e-3
    calm, _ = synthetic_log(31, n_nodes=n_nodes, days=T, rate_per_node_day=lam)
    n = len(calm)  # ~2,370
    b = an.bursts(calm)
    # the sample CV of n - 1 exponential gaps: by the delta method Var = (1/n)[(mu4 - s^4) / (4 s^2 mu^2) - mu3 / mu^3
    # + s^4 / mu^4] = (1/n)(8/4 - 2 + 1) = 1/n for the exponential (mu = s = 1, mu3 = 2, mu4 = 9): sd 1 / sqrt(n - 1)
    se_cv = 1 / math.sqrt(n - 1)
    assert b.gap_cv_sd == pytest.approx(se_cv, rel=1e-12)
    assert abs(b.gap_cv - 1) < 4 * se_cv
    # another node's fault within w = 5 min: chance 1 - exp(-2 w lam (nodes - 1)) = 4.6 %; a coincidence comes in pairs
    # (each member of a close pair is counted), so the count is about twice a Poisson number of pairs: Var = 2 n p
    w = 5 / 1440
    p_near = 1 - math.exp(-2 * w * lam * (n_nodes - 1))
    assert abs(b.coincident_share - p_near) < 4 * math.sqrt(2 * p_near / n)
    seen = len(np.unique(calm.node))  # the course's chance share: the other seen nodes' faults per day
    assert b.chance_share == pytest.approx(1 - math.exp(-2 * w * (n - n / seen) / T), rel=1e-12)
    # days with 4 or more: a day's count is Poisson(2000 lam = 6.8), days independent: binomial over the 348 days
    mu = n_nodes * lam
    p4 = 1 - math.exp(-mu) * (1 + mu + mu ** 2 / 2 + mu ** 3 / 6)  # 0.907
    assert abs(b.p_at_least_observed - p4) < 4 * math.sqrt(p4 * (1 - p4) / 348)
    d = n / 348  # every start is before day 348: the daily mean
    assert b.p_at_least_poisson == pytest.approx(1 - math.exp(-d) * (1 + d + d ** 2 / 2 + d ** 3 / 6), rel=1e-9)
    bursty, truth = synthetic_log(32, n_nodes=2000, days=348.0, rate_per_node_day=3.4e-3, burst_share=0.3, burst_size=4.0)
    bb = an.bursts(bursty)
    assert bb.gap_cv > 1 + 4 / math.sqrt(len(bursty) - 1)  # 4 of Poisson's sd above (the sd worked above)
    assert bb.coincident_low > 5 * bb.chance_share
    assert bb.coincident_share == pytest.approx(truth.in_burst.mean() + bb.chance_share, abs=0.05)


def garwood_coverage(mu, confidence=0.95):
    """The exact coverage of the Garwood interval at a Poisson mean mu: Poisson's pmf summed over the counts whose
    interval (gamma quantiles, as garwood above) holds mu."""
    k = np.arange(int(mu + 20 * math.sqrt(mu) + 20))
    a = 1 - confidence
    low = np.where(k > 0, stats.gamma.ppf(a / 2, np.maximum(k, 1)), 0.0)
    high = stats.gamma.ppf(1 - a / 2, k + 1)
    return float(stats.poisson.pmf(k, mu)[(low <= mu) & (mu <= high)].sum())


def test_monthly_rates_accept_one_rate_when_it_is_one_and_cover_it():
    log, truth = synthetic_log(41, **TRACE_LIKE)
    m = an.monthly_rates(log, FLEET)
    assert truth.rate_per_node_day == 3.4e-3  # identical nodes: the true rate is the stated one
    assert m.counts.sum() == len(log) and m.edges[0] == 0 and m.edges[-1] == 348.0
    assert m.edges.tolist() == [30.0 * i for i in range(12)] + [348.0]
    assert m.p_value > 0.001
    assert m.first_low <= 1.0 <= m.first_high
    # coverage over 25 logs x 12 periods (independent Poisson counts: disjoint periods, separate logs): each period's
    # interval covers with its exact Garwood coverage (mean 400 x 3.4e-3 x 30 = 40.8: 0.958; the last 18 days, 24.5:
    # 0.967, both above the nominal 95 %); the hits are a sum of Bernoullis, sd sqrt(sum p (1 - p)) = 3.5 of 300
    lengths = np.r_[np.full(11, 30.0), 18.0]
    p = np.array([garwood_coverage(400 * 3.4e-3 * d) for d in lengths])
    hits = 0
    seeds = range(41, 66)
    for seed in seeds:
        lg, tr = synthetic_log(seed, **TRACE_LIKE)
        mm = an.monthly_rates(lg, FLEET)
        hits += int(np.sum((mm.low <= tr.rate_per_node_day / 8) & (tr.rate_per_node_day / 8 <= mm.high)))
    expected, sd = len(seeds) * p.sum(), math.sqrt(len(seeds) * float((p * (1 - p)).sum()))
    assert abs(hits - expected) < 4 * sd, (hits, expected, sd)


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


def test_the_gain_over_poisson_is_exact_where_gammaln_rounds():
    # the gamma-Poisson's log-likelihood minus Poisson's, against 50-digit log-gammas (mpmath), from a shape
    # of 1e-3 to 1e7 (where gammaln(x + k) - gammaln(k) had lost all but two digits of a 4e-5 gain)
    import mpmath as mp
    xs, mult = np.array([0, 1, 2, 5, 12]), np.array([60.0, 20.0, 8.0, 6.0, 6.0])
    mu = float((xs * mult).sum() / mult.sum())
    with mp.workdps(50):
        for k in (1e-3, 0.5, 3.0, 1e4, 1e7):
            K, M = mp.mpf(k), mp.mpf(mu)
            exact = sum(int(m) * (mp.loggamma(int(x) + K) - mp.loggamma(K) + K * mp.log(K / (K + M)) + int(x) * mp.log(M / (K + M))
                                  - int(x) * mp.log(M) + M) for x, m in zip(xs, mult))
            assert an._nb_gain(xs, mult, k, mu) == pytest.approx(float(exact), rel=1e-9, abs=1e-15)


@pytest.mark.parametrize("counts, mean, slope, spread", [
    ([0, 2], 1.0, 0.0, False),           # variance 1 = mean 1: the likelihood's slope in 1/k is 0 at Poisson
    ([0, 0, 0, 1], 0.25, -0.125, False),  # variance 3/16 < mean 1/4: slope (3/4 - 1) / 2
    ([0, 0, 3], 1.0, 1.5, True),          # variance 2 > mean 1: slope (6 - 3) / 2
    ([1, 1, 1, 4], 1.75, -0.125, False),  # variance 27/16 < mean 28/16: slope (27/4 - 7) / 2
    ([0, 1, 1, 4], 1.5, 1.5, True),       # variance 9/4 > mean 3/2: slope (9 - 6) / 2
])
def test_a_finite_shape_exactly_when_the_variance_exceeds_the_mean(counts, mean, slope, spread):
    # mean and slope worked by hand (above): the slope of the gain over Poisson in 1/k at 1/k = 0 is half the sum
    # of (x - mean)^2 - x, positive exactly when the variance (over n) exceeds the mean
    fit = an.fit_negative_binomial(counts)
    assert fit.mean == mean and fit.n_nodes == len(counts)
    assert math.isfinite(fit.shape) == spread
    assert (fit.loglik > fit.loglik_poisson) == spread and (fit.loglik == fit.loglik_poisson) == (not spread)
    # Poisson's log-likelihood by hand: sum of x log(mean) - mean - log(x!)
    assert fit.loglik_poisson == pytest.approx(sum(x * math.log(mean) - mean - math.lgamma(x + 1) for x in counts), rel=1e-12)
    # the course's gain over Poisson at a large k is that slope over k (the next term is O(1/k^2): 1e-6 relative here)
    xs, mult = np.unique(counts, return_counts=True)
    k = 1e6
    assert an._nb_gain(xs, mult.astype(float), k, mean) * k == pytest.approx(slope, abs=1e-5)
    if spread:  # a finite maximum: scipy's negative binomial is no higher 5 % to either side of the fitted shape
        def ll(kk):
            return float(stats.nbinom.logpmf(counts, kk, kk / (kk + mean)).sum())
        assert fit.loglik == pytest.approx(ll(fit.shape), abs=1e-9)
        assert ll(fit.shape) >= max(ll(fit.shape * 1.05), ll(fit.shape / 1.05))


def test_an_interval_that_reaches_poisson_ends_at_inf():
    # [0, 0, 4]: a finite maximum 1.60 above Poisson, less than the 1.92 drop, so the likelihood never falls
    # far enough on the large-k side (at k = e^14 it is Poisson's, 1.60 below the maximum): shape_high = inf
    fit = an.fit_negative_binomial([0, 0, 4])
    assert 1.5 < fit.loglik - fit.loglik_poisson < stats.chi2.ppf(0.95, 1) / 2
    assert math.isfinite(fit.shape) and fit.shape_low < fit.shape and math.isinf(fit.shape_high)


def test_rounding_no_longer_makes_a_poisson_fleet_look_heterogeneous():
    # one incident on a million nodes (variance below the mean): Poisson. The gammaln form found a gain of 2.6e-7,
    # above its 1e-9 tolerance, and reported a shape of 2,597 (a rate CV of 2 %)
    sparse = np.zeros(10**6, np.int64)
    sparse[0] = 1
    fit = an.fit_negative_binomial(sparse)
    assert math.isinf(fit.shape) and fit.loglik == fit.loglik_poisson and fit.shape_low == 0.0 and math.isinf(fit.shape_high)
    # 1,617 zeros, 583 ones, 829 twos: variance above the mean by 2e-7, its likelihood still rising (though still
    # below Poisson's, by 1e-11) at the search's upper end k = e^14 (a maximum beyond it, a CV under 0.001): reported
    # as Poisson, its interval reaching to inf
    edge = np.r_[np.zeros(1617, np.int64), np.ones(583, np.int64), np.full(829, 2)]
    # by hand: n = 3,029, sum 583 + 2 x 829 = 2,241, sum of squares 583 + 4 x 829 = 3,899; variance (over n) - mean
    # = (3,899 x 3,029 - 2,241^2 - 2,241 x 3,029) / 3,029^2 = 1 / 3,029^2; so the index of dispersion D = n var / mean
    # is n + 1 / 2,241, a hair above n (over-dispersed, barely)
    disp = an.dispersion_test(edge)
    assert disp.mean == pytest.approx(2241 / 3029, rel=1e-15)
    assert disp.statistic - 3029 == pytest.approx(1 / 2241, rel=1e-6)
    xs, mult = np.unique(edge, return_counts=True)
    assert an._nb_gain(xs, mult, math.exp(14.0), edge.mean()) > an._nb_gain(xs, mult, math.exp(13.9), edge.mean())
    fit = an.fit_negative_binomial(edge)
    assert math.isinf(fit.shape) and fit.loglik == fit.loglik_poisson and math.isinf(fit.shape_high)
    assert 1.0 < fit.shape_low < math.exp(14.0)


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
