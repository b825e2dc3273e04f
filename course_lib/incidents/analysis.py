"""What a fault log says about the course's model, each number with its uncertainty (notebook 13).

The course's model of failures (notebooks 01, 02, 08) is that nodes are **identical**, fail
**independently**, at a **stationary** rate: a Poisson process of rate N x lambda. A log lets
each assumption be tested instead of assumed:

- :func:`rate`: the per-GPU-day rate and its exact (Garwood) interval, the exposure being the
  *fleet* (every node, with a fault or not) x GPUs per node x the window;
- :func:`shares`: shares per cause with exact (Clopper-Pearson) intervals;
- identical? :func:`node_counts` (zeros included: the fleet size says how many nodes had none),
  :func:`dispersion_test` (index of dispersion against Poisson), :func:`fit_negative_binomial`
  (gamma-distributed node rates: the gamma-Poisson mixture), :func:`worst_node_shares` (share of
  faults on the worst 1 %, 5 %, 10 % of nodes, against what identical nodes would give);
- :func:`lemon_removal`: remove the nodes that failed most in the first part of the log, measure
  the rest's rate in the later part (out of sample: the nodes are chosen on data the factor is
  not measured on); :func:`repeat_fault_share`: faults on a node that had one before;
- independent? :func:`bursts`: inter-arrival coefficient of variation (1 for Poisson), the share of
  faults within minutes of a fault on another node against chance, days with 4 or more;
- stationary? :func:`monthly_rates`: the rate per 30 days with intervals, a test of one rate, and
  the first month against the rest (infant mortality);
- :func:`repair_times`: the repair (or restart) time distribution, censoring-aware (Kaplan-Meier),
  and :func:`spare_pool` / :func:`replay_spares`: the spares a job needs so that one is free with
  99 % probability, from the Poisson number in repair (M/G/infinity) and by replaying the log.

Pure numpy/scipy, vectorized (a log of a million faults is analysed in seconds:
benchmarks/incidents_bench.py). The formulas that already live elsewhere are called, not
copied: Garwood intervals (:mod:`course_lib.failures`), P(k or more in a day)
(:func:`course_lib.uncertainty.p_at_least`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats

from .. import failures
from .._validate import Validated, check_int_positive, check_open_unit, check_positive, checked
from .schema import IncidentLog

__all__ = [
    "Fleet", "RateEstimate", "rate", "overdispersed_interval", "Share", "shares", "node_counts", "Dispersion", "dispersion_test",
    "NegBinFit", "fit_negative_binomial", "WorstShares", "worst_node_shares", "top_share_limit",
    "LemonRemoval", "lemon_threshold", "lemon_removal", "RepeatShare", "repeat_fault_share",
    "Bursts", "bursts", "Monthly", "monthly_rates", "Repairs", "repair_times", "kaplan_meier",
    "spare_pool", "replay_spares", "clopper_pearson",
]


@dataclass(frozen=True)
class Fleet(Validated):
    """The fleet a log covers: every node, with a fault or not, and GPUs per node (inputs, not in the log)."""

    n_nodes: int = checked(check_int_positive)
    gpus_per_node: int = checked(check_int_positive, default=8)

    @property
    def gpus(self) -> int:
        return self.n_nodes * self.gpus_per_node


def clopper_pearson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Exact (Clopper-Pearson) interval of a binomial share k / n."""
    if n <= 0:
        raise ValueError(f"n must be an integer >= 1 (got {n!r})")
    ci = stats.binomtest(int(k), int(n)).proportion_ci(confidence_level=check_open_unit("confidence", confidence), method="exact")
    return float(ci.low), float(ci.high)


# ---------------------------------------------------------------------------------- the rate
@dataclass(frozen=True)
class RateEstimate:
    """A count over the fleet's exposure: per GPU-day (with its Garwood interval) and per node-day."""

    count: int
    days: float
    n_nodes: int
    gpus_per_node: int
    rate_per_gpu_day: float
    low: float
    high: float
    confidence: float

    @property
    def gpu_days(self) -> float:
        return self.n_nodes * self.gpus_per_node * self.days

    @property
    def rate_per_node_day(self) -> float:
        return self.rate_per_gpu_day * self.gpus_per_node

    def failures_per_day(self, n_gpus: int) -> float:
        return failures.failures_per_day(n_gpus, self.rate_per_gpu_day) if self.rate_per_gpu_day > 0 else 0.0

    def text(self) -> str:
        return (f"{self.count:,} in {self.days:.1f} days on {self.n_nodes:,} nodes x {self.gpus_per_node} GPUs: "
                f"{self.rate_per_gpu_day:.3e} per GPU-day ({100 * self.confidence:g} % CI {self.low:.3e} to {self.high:.3e})")


def rate(log: IncidentLog, fleet: Fleet, confidence: float = 0.95) -> RateEstimate:
    """Incidents per GPU-day of ``fleet`` over the log's window, with the exact Poisson interval.

    The exposure is every node of the fleet, not only those in the log: a trace that lists only
    the nodes with a fault (InfiniteHBD lists 231 of its 400) would otherwise overstate the rate.
    """
    if not isinstance(fleet, Fleet):
        raise ValueError(f"fleet must be a Fleet (got {type(fleet).__name__}); e.g. Fleet(n_nodes=400, gpus_per_node=8)")
    seen = len(np.unique(log.node)) if len(log) else 0
    if seen > fleet.n_nodes:
        raise ValueError(f"fleet.n_nodes must be >= the {seen} distinct nodes in the log (got {fleet.n_nodes})")
    k = len(log)
    gpus = fleet.gpus
    r = failures.rate_per_gpu_day(k, gpus, log.days)
    lo, hi = failures.rate_ci_per_gpu_day(k, gpus, log.days, confidence)
    return RateEstimate(k, log.days, fleet.n_nodes, fleet.gpus_per_node, r, lo, hi, confidence)


def overdispersed_interval(est: RateEstimate, phi: float) -> tuple[float, float]:
    """The rate's interval when the count is over-dispersed by ``phi`` (variance = phi x mean; quasi-Poisson).

    Bursts make the total count vary more than Poisson's: ``phi`` (the daily counts' variance /
    mean, :class:`Bursts`) times as much. The count then carries the information of about
    ``k / phi`` independent faults: the Garwood interval of that effective count, scaled by ``phi``
    (phi = 1 gives the Poisson interval back, up to rounding the effective count).
    """
    f = check_positive("phi", phi)
    if f < 1:
        f = 1.0  # under-dispersion is not credited: the Poisson interval stands
    k_eff = int(round(est.count / f))
    lo, hi = failures.rate_ci_per_gpu_day(k_eff, est.n_nodes * est.gpus_per_node, est.days, est.confidence)
    return lo * f, hi * f


@dataclass(frozen=True)
class Share:
    """One cause's count and share of the total, with its exact interval."""

    name: str
    count: int
    share: float
    low: float
    high: float


def shares(labels, confidence: float = 0.95) -> list[Share]:
    """Shares of each distinct label (a level, a class, a mode per incident), largest first, with intervals."""
    arr = np.asarray(labels)
    n = arr.size
    if n == 0:
        raise ValueError("labels must hold at least one incident")
    names, counts = np.unique(arr, return_counts=True)
    out = [Share(str(nm), int(c), c / n, *clopper_pearson(int(c), n, confidence)) for nm, c in zip(names, counts)]
    return sorted(out, key=lambda s: (-s.count, s.name))


# ---------------------------------------------------------------------------------- identical nodes?
def node_counts(log: IncidentLog, n_nodes: int) -> np.ndarray:
    """Incidents per node for every node of the fleet: the log's nodes, then zeros for the rest.

    The order of the nodes carries no meaning (the log's ids are anonymous); only the counts do.
    """
    n = check_int_positive("n_nodes", n_nodes)
    per = np.bincount(log.node, minlength=len(log.nodes)) if len(log) else np.zeros(0, np.int64)
    per = per[per > 0]
    if per.size > n:
        raise ValueError(f"n_nodes must be >= the {per.size} nodes with an incident in the log (got {n})")
    return np.concatenate([per, np.zeros(n - per.size, dtype=np.int64)])


@dataclass(frozen=True)
class Dispersion:
    """The index-of-dispersion test of node counts against identical Poisson nodes."""

    n_nodes: int
    mean: float
    variance: float
    statistic: float  # sum (x - mean)^2 / mean, chi-square with n - 1 dof under Poisson
    dof: int
    p_value: float
    zero_nodes: int
    zero_expected: float  # nodes with no incident if they were identical Poisson nodes

    @property
    def ratio(self) -> float:
        """variance / mean: 1 for Poisson counts; above 1, over-dispersed (some nodes fail more)."""
        return self.variance / self.mean

    def rejects(self, level: float = 0.05) -> bool:
        return self.p_value < level


def dispersion_test(counts) -> Dispersion:
    """Index of dispersion of equal-exposure counts: ``D = sum (x - xbar)^2 / xbar`` ~ chi2(n - 1) (Poisson).

    Every node of the fleet must be in ``counts`` (zeros too). The test is one-sided (over-dispersion).
    """
    x = np.asarray(counts, dtype=float)
    if x.ndim != 1 or x.size < 2 or np.any(x < 0) or not np.all(np.isfinite(x)):
        raise ValueError(f"counts must be a 1-D array of >= 2 counts >= 0 (got shape {x.shape})")
    m = x.mean()
    if m <= 0:
        raise ValueError("counts must not all be zero: a dispersion test needs at least one incident")
    d = float(((x - m) ** 2).sum() / m)
    dof = x.size - 1
    return Dispersion(x.size, float(m), float(x.var(ddof=1)), d, dof, float(stats.chi2.sf(d, dof)), int((x == 0).sum()),
                      float(x.size * math.exp(-m)))


@dataclass(frozen=True)
class NegBinFit:
    """Gamma-distributed node rates (shape k, mean mu) behind negative-binomial counts (notebook 13).

    Var = mu + mu^2 / k: k -> infinity is Poisson (identical nodes); the node rates' coefficient of
    variation is 1 / sqrt(k). ``shape_low``/``shape_high``: the profile-likelihood interval of k
    (``inf`` where the likelihood does not fall far enough: Poisson not excluded).
    """

    mean: float
    shape: float
    shape_low: float
    shape_high: float
    loglik: float
    loglik_poisson: float
    zero_expected: float  # nodes with no incident under the fit
    n_nodes: int

    @property
    def rate_cv(self) -> float:
        return 1.0 / math.sqrt(self.shape) if math.isfinite(self.shape) else 0.0

    @property
    def likelihood_ratio_p(self) -> float:
        """p-value of Poisson against the gamma-Poisson (boundary: half a chi2(1))."""
        lr = max(2.0 * (self.loglik - self.loglik_poisson), 0.0)
        return float(0.5 * stats.chi2.sf(lr, 1))


def _nb_gain(x, counts_of, k, mu):
    """Negative-binomial log-likelihood minus Poisson's at the same mean, for grouped counts (value x, multiplicity counts_of).

    Per count: log Gamma(x + k) / (Gamma(k) k^x) - (x + k) log(1 + mu / k) + mu, the first term summed as
    log(1 + j / k) over j < x. Exact as k grows (it tends to 0), where gammaln(x + k) - gammaln(k) loses
    about 1e-9 a count to rounding: enough, over thousands of nodes, to fake a better-than-Poisson fit.
    """
    x = np.asarray(x, dtype=np.int64)
    logs = np.concatenate(([0.0], np.cumsum(np.log1p(np.arange(int(x.max())) / k))))
    return float(np.sum(counts_of * (logs[x] - (x + k) * np.log1p(mu / k) + mu)))


def _nb_loglik(x, counts_of, k, mu):
    """Negative-binomial log-likelihood for counts (grouped: value x with multiplicity counts_of)."""
    return float(np.sum(counts_of * stats.poisson.logpmf(x, mu))) + _nb_gain(x, counts_of, k, mu)


LOG_SHAPE_RANGE = (-12.0, 14.0)  # where the fit looks for log k: k from 6e-6 (one node holds all) to 1.2e6 (Poisson)


def fit_negative_binomial(counts, confidence: float = 0.95) -> NegBinFit:
    """Maximum-likelihood gamma-Poisson fit of node counts (the mean's MLE is the sample mean).

    The likelihood has a finite maximum in k exactly when the counts' variance (divided by n) exceeds
    their mean (its slope in 1/k at 1/k = 0 is half the sum of (x - mean)^2 - x); otherwise no k beats
    identical Poisson nodes and the shape is ``inf``. A maximum beyond the search's upper end (k > e^14,
    a rate CV under 0.001) is reported as Poisson too.
    """
    x_all = np.asarray(counts, dtype=np.int64)
    if x_all.ndim != 1 or x_all.size < 2 or np.any(x_all < 0):
        raise ValueError("counts must be a 1-D array of >= 2 counts >= 0")
    mu = float(x_all.mean())
    if mu <= 0:
        raise ValueError("counts must not all be zero")
    lo, hi = LOG_SHAPE_RANGE
    x, mult = np.unique(x_all, return_counts=True)
    x, mult = x.astype(float), mult.astype(float)
    pois = float(np.sum(mult * stats.poisson.logpmf(x, mu)))
    gain = lambda lk: _nb_gain(x, mult, math.exp(lk), mu)  # noqa: E731
    lk_hat, best = math.inf, 0.0  # no better than Poisson: identical nodes
    if np.var(x_all) > mu:
        res = optimize.minimize_scalar(lambda lk: -gain(lk), bounds=LOG_SHAPE_RANGE, method="bounded", options={"xatol": 1e-9})
        if res.x < hi - 0.1:
            lk_hat, best = float(res.x), -float(res.fun)
    drop = stats.chi2.ppf(check_open_unit("confidence", confidence), 1) / 2.0
    g = lambda lk: gain(lk) - (best - drop)  # noqa: E731
    # the interval: where the profile likelihood is `drop` below its maximum, on either side of it
    # (0 or inf where it stays above at the search's end: not excluded)
    low = math.exp(optimize.brentq(g, lo, min(lk_hat, hi))) if g(lo) < 0 else 0.0
    high = math.exp(optimize.brentq(g, lk_hat, hi)) if g(hi) < 0 else math.inf
    k = math.exp(lk_hat)
    zero = x_all.size * (math.exp(-mu) if math.isinf(k) else (k / (k + mu)) ** k)
    return NegBinFit(mu, k, low, high, pois + best, pois, float(zero), int(x_all.size))


@dataclass(frozen=True)
class WorstShares:
    """Share of incidents on the worst ``fractions`` of nodes: observed, and for identical / fitted nodes."""

    fractions: tuple
    nodes: tuple          # how many nodes each fraction is
    observed: tuple
    poisson: tuple        # identical Poisson nodes (the large-fleet limit)
    negbin: tuple | None  # gamma-distributed nodes at the fit (the large-fleet limit)


def top_share_limit(dist, mean: float, fraction: float) -> float:
    """Share of the total held by the top ``fraction`` of a large fleet whose counts follow ``dist`` (scipy).

    The top fraction takes every node above the (1 - fraction) quantile c and part of those at c:
    ``(sum_{x > c} x p(x) + (fraction - P(X > c)) c) / mean``.
    """
    f = check_open_unit("fraction", fraction)
    c = float(dist.isf(f))
    while dist.sf(c) > f:  # isf is approximate on a lattice: the smallest c with P(X > c) <= f
        c += 1
    while c > 0 and dist.sf(c - 1) <= f:
        c -= 1
    upto = int(dist.isf(1e-12)) + 2
    xs = np.arange(int(c) + 1, max(upto, int(c) + 2))
    above = float(np.sum(xs * dist.pmf(xs)))
    return (above + (f - float(dist.sf(c))) * c) / mean


def worst_node_shares(counts, fractions=(0.01, 0.05, 0.10), fit: NegBinFit | None = None) -> WorstShares:
    """Share of all incidents on the worst 1 %, 5 % and 10 % of nodes (the zeros count as nodes)."""
    x = np.sort(np.asarray(counts, dtype=np.int64))[::-1]
    total = x.sum()
    if x.size == 0 or total == 0:
        raise ValueError("counts must hold at least one incident")
    m = x.mean()
    nodes = tuple(max(1, math.ceil(f * x.size)) for f in fractions)
    obs = tuple(float(x[:n].sum() / total) for n in nodes)
    pois = tuple(top_share_limit(stats.poisson(m), m, f) for f in fractions)
    nb = None
    if fit is not None and math.isfinite(fit.shape):
        p = fit.shape / (fit.shape + fit.mean)
        nb = tuple(top_share_limit(stats.nbinom(fit.shape, p), fit.mean, f) for f in fractions)
    return WorstShares(tuple(fractions), nodes, obs, pois, nb)


# ---------------------------------------------------------------------------------- lemon nodes
@dataclass(frozen=True)
class LemonRemoval:
    """Lemon-node removal measured out of sample (notebook 13).

    Nodes with ``threshold`` or more incidents before ``split_day`` are removed; the rate factor is
    the remaining nodes' rate after ``split_day`` over the whole fleet's rate after it (per
    node-day), with the exact conditional interval. ``capacity_removed``: the share of the fleet's
    nodes taken out (a cost, like an idle spare).
    """

    split_day: float
    threshold: int
    n_nodes: int
    n_removed: int
    count_all: int       # incidents after the split, whole fleet
    count_kept: int      # of which on the remaining nodes
    days_after: float
    factor: float
    factor_low: float
    factor_high: float
    removed_nodes: tuple  # indices into the log's nodes
    confidence: float

    @property
    def capacity_removed(self) -> float:
        return self.n_removed / self.n_nodes

    @property
    def rate_all_per_node_day(self) -> float:
        return self.count_all / (self.n_nodes * self.days_after)

    @property
    def rate_kept_per_node_day(self) -> float:
        kept = self.n_nodes - self.n_removed
        return self.count_kept / (kept * self.days_after) if kept else math.nan


def lemon_threshold(mean_per_node: float, false_flag: float = 0.01) -> int:
    """The smallest count k >= 2 that an identical Poisson node reaches with probability <= ``false_flag``.

    With the fleet's mean count per node in the selection period, a node at k or more is unlikely
    (1 %) to be an ordinary node that was unlucky: the course's rule for a lemon.
    """
    m = check_positive("mean_per_node", mean_per_node)
    ff = check_open_unit("false_flag", false_flag)
    k = 2
    while stats.poisson.sf(k - 1, m) > ff:
        k += 1
    return k


def lemon_removal(log: IncidentLog, n_nodes: int, split: float = 0.5, threshold: int | None = None,
                  false_flag: float = 0.01, confidence: float = 0.95) -> LemonRemoval:
    """Remove the nodes that failed ``threshold`` times or more in the first ``split`` of the window.

    threshold: None for :func:`lemon_threshold` of the first part's mean count per node. The
    factor is measured on the rest of the window only, so a node's own selecting faults never
    count in the factor that judges its removal (in sample the factor would look better than it is).
    """
    n = check_int_positive("n_nodes", n_nodes)
    s = check_open_unit("split", split)
    w0, w1 = log.window
    split_day = w0 + s * (w1 - w0)
    first = log.start < split_day
    per_first = np.bincount(log.node[first], minlength=len(log.nodes))
    if threshold is None:
        mean_first = first.sum() / n
        if mean_first <= 0:
            raise ValueError("the first part of the log holds no incident: nothing to select lemons on (choose another split)")
        threshold = lemon_threshold(mean_first, false_flag)
    k = check_int_positive("threshold", threshold)
    removed = np.flatnonzero(per_first >= k)
    later = ~first
    c_all = int(later.sum())
    if c_all == 0:
        raise ValueError("the later part of the log holds no incident: nothing to measure the factor on (choose another split)")
    kept_mask = later & ~np.isin(log.node, removed)
    c_kept = int(kept_mask.sum())
    kept_nodes = n - removed.size
    if kept_nodes <= 0:
        raise ValueError(f"threshold {k} removes every node")
    scale = n / kept_nodes  # exposure of the whole fleet over the remaining nodes' (same days)
    lo, hi = clopper_pearson(c_kept, c_all, confidence)
    return LemonRemoval(split_day, k, n, int(removed.size), c_all, c_kept, w1 - split_day, c_kept / c_all * scale,
                        lo * scale, hi * scale, tuple(int(i) for i in removed), confidence)


@dataclass(frozen=True)
class RepeatShare:
    """Share of incidents on a node that already had one earlier in the log (within ``within_days``)."""

    repeats: int
    total: int
    share: float
    low: float
    high: float
    poisson_share: float  # what identical Poisson nodes would give
    within_days: float | None


def repeat_fault_share(log: IncidentLog, n_nodes: int, within_days: float | None = None,
                       confidence: float = 0.95) -> RepeatShare:
    """Repeat faults: the quarantine question (does a node that failed once fail again?).

    For identical Poisson nodes with m incidents each on average, the expected share is
    ``1 - (1 - exp(-m)) / m`` over the whole log, and about ``1 - exp(-m h / T)`` within h days.
    """
    n = check_int_positive("n_nodes", n_nodes)
    if len(log) == 0:
        raise ValueError("the log holds no incident")
    order = np.lexsort((log.start, log.node))
    node, t = log.node[order], log.start[order]
    same = np.r_[False, node[1:] == node[:-1]]
    gap = np.r_[np.inf, np.diff(t)]
    rep = same if within_days is None else same & (gap <= check_positive("within_days", within_days))
    k, total = int(rep.sum()), len(log)
    m = total / n
    expected = 1.0 - (-math.expm1(-m)) / m if within_days is None else -math.expm1(-m * within_days / log.days)
    return RepeatShare(k, total, k / total, *clopper_pearson(k, total, confidence), expected, within_days)


# ---------------------------------------------------------------------------------- independent?
@dataclass(frozen=True)
class Bursts:
    """Clustering in time: inter-arrival CV, faults near another node's fault, days with many faults."""

    n: int
    gap_cv: float
    gap_cv_sd: float          # the CV's standard deviation for a Poisson process of n gaps (1 / sqrt(n))
    window_min: float
    coincident: int           # faults within window_min of a fault on another node
    coincident_share: float
    coincident_low: float
    coincident_high: float
    chance_share: float       # the same share for independent faults at the fleet's rate
    days: int                 # whole days of the window used for daily counts
    daily_mean: float
    daily_variance: float
    at_least: int             # the k of P(k or more in a day)
    p_at_least_observed: float
    p_at_least_low: float
    p_at_least_high: float
    p_at_least_poisson: float
    gaps_days: np.ndarray     # the inter-arrival times (for the histogram)
    daily_counts: np.ndarray


def _other_node_within(t: np.ndarray, node: np.ndarray, w: float) -> np.ndarray:
    """Per event (times sorted), whether another node has an event within +-w (vectorized)."""
    total = np.searchsorted(t, t + w, "right") - np.searchsorted(t, t - w, "left")
    span = float(t[-1] - t[0]) + 2 * w + 1.0
    shifted = (t - t[0]) + node.astype(np.float64) * span  # each node's events in a block of their own
    srt = np.sort(shifted)
    same = np.searchsorted(srt, shifted + w, "right") - np.searchsorted(srt, shifted - w, "left")
    return total > same


def bursts(log: IncidentLog, window_min: float = 5.0, at_least: int = 4, confidence: float = 0.95) -> Bursts:
    """Do faults come alone (Poisson) or together (a switch, a rack, a change)?"""
    from ..uncertainty import p_at_least

    w = check_positive("window_min", window_min) / 1440.0
    k = check_int_positive("at_least", at_least)
    n = len(log)
    if n < 3:
        raise ValueError(f"the log must hold at least 3 incidents to measure bursts (got {n})")
    t = log.start  # sorted
    gaps = np.diff(t)
    cv = float(gaps.std(ddof=1) / gaps.mean()) if gaps.mean() > 0 else math.inf
    near = _other_node_within(t, log.node, w)
    c = int(near.sum())
    per_node = n / max(len(np.unique(log.node)), 1)
    other_rate = (n - per_node) / log.days  # other nodes' faults per day
    chance = -math.expm1(-2 * w * other_rate)
    days = int(math.floor(log.days))
    if days < 2:
        raise ValueError("the window must cover at least two whole days for daily counts")
    day = np.floor(t - log.window[0]).astype(np.int64)
    daily = np.bincount(day[day < days], minlength=days)
    obs = int((daily >= k).sum())
    mean = float(daily.mean())
    return Bursts(n, cv, 1.0 / math.sqrt(gaps.size), window_min, c, c / n, *clopper_pearson(c, n, confidence), chance, days,
                  mean, float(daily.var(ddof=1)), k, obs / days, *clopper_pearson(obs, days, confidence),
                  p_at_least(k, mean), gaps, daily)


# ---------------------------------------------------------------------------------- stationary?
@dataclass(frozen=True)
class Monthly:
    """The rate per ``month_days`` with Garwood intervals, a test of one rate, and month 1 against the rest."""

    edges: np.ndarray        # days, len = bins + 1
    counts: np.ndarray
    rate: np.ndarray         # per GPU-day
    low: np.ndarray
    high: np.ndarray
    chi2: float
    dof: int
    p_value: float           # one constant rate (Poisson counts, exposure-weighted)
    first_ratio: float       # first month's rate / the rest's
    first_low: float
    first_high: float


def monthly_rates(log: IncidentLog, fleet: Fleet, month_days: float = 30.0, confidence: float = 0.95) -> Monthly:
    """The rate in consecutive periods of ``month_days`` (the last may be shorter), and two tests on it."""
    md = check_positive("month_days", month_days)
    w0, w1 = log.window
    if w1 - w0 < 2 * md:
        raise ValueError(f"the window ({w1 - w0:g} days) must cover at least two periods of month_days = {md:g}")
    edges = np.append(np.arange(w0, w1, md), w1)
    if edges[-1] - edges[-2] < 1e-9:
        edges = edges[:-1]
    counts = np.histogram(log.start, bins=edges)[0]
    lengths = np.diff(edges)
    gpus = fleet.gpus
    r = counts / (gpus * lengths)
    ci = np.array([failures.rate_ci_per_gpu_day(int(c), gpus, float(d), confidence) for c, d in zip(counts, lengths)])
    total = counts.sum()
    expected = total * lengths / lengths.sum()
    chi2 = float(np.sum((counts - expected) ** 2 / expected)) if total else 0.0
    dof = counts.size - 1
    c1, c_rest = int(counts[0]), int(total - counts[0])
    l1, l_rest = float(lengths[0]), float(lengths[1:].sum())
    if c1 + c_rest == 0:
        raise ValueError("the log holds no incident")
    lo, hi = clopper_pearson(c1, c1 + c_rest, confidence)
    odds = lambda p: (p / (1 - p) if p < 1 else math.inf) * l_rest / l1  # noqa: E731
    ratio = (c1 / l1) / (c_rest / l_rest) if c_rest else math.inf
    return Monthly(edges, counts, r, ci[:, 0], ci[:, 1], chi2, dof, float(stats.chi2.sf(chi2, dof)), ratio, odds(lo), odds(hi))


# ---------------------------------------------------------------------------------- repairs and spares
def kaplan_meier(durations, observed) -> tuple[np.ndarray, np.ndarray]:
    """Kaplan-Meier survival of durations (``observed`` False: censored, a lower bound): (times, S(t))."""
    d = np.asarray(durations, dtype=float)
    ev = np.asarray(observed, dtype=bool)
    if d.ndim != 1 or d.shape != ev.shape or d.size == 0 or np.any(d < 0) or not np.all(np.isfinite(d)):
        raise ValueError("durations must be a non-empty 1-D array of finite times >= 0, observed one bool each")
    order = np.lexsort((~ev, d))  # at a tie, events before censorings (the usual convention)
    d, ev = d[order], ev[order]
    times = np.unique(d[ev])
    if times.size == 0:
        return np.zeros(0), np.zeros(0)
    deaths = np.searchsorted(d[ev], times, "right") - np.searchsorted(d[ev], times, "left")
    at_risk = d.size - np.searchsorted(d, times, "left")
    return times, np.cumprod(1.0 - deaths / at_risk)


@dataclass(frozen=True)
class Repairs:
    """Repair (or restart) times: quantiles from Kaplan-Meier (censoring-aware), intervals when none is censored."""

    n: int
    censored: int
    zero_length: int
    median_days: float
    median_low: float
    median_high: float
    p90_days: float
    p90_low: float
    p90_high: float
    mean_days: float          # of the observed ones (a lower bound when some are censored)
    times: np.ndarray         # Kaplan-Meier step times (days)
    cdf: np.ndarray           # 1 - S(t)


def _km_quantile(times, cdf, q):
    i = np.searchsorted(cdf, q - 1e-12, "left")
    return float(times[i]) if i < times.size else math.inf


def repair_times(log: IncidentLog, confidence: float = 0.95) -> Repairs:
    """Median and p90 of ``end - start``; open incidents count as censored at the window's end."""
    if len(log) == 0:
        raise ValueError("the log holds no incident")
    obs = ~log.open
    d = np.where(obs, log.end - log.start, log.window[1] - log.start)
    d = np.maximum(d, 0.0)
    times, surv = kaplan_meier(d, obs)
    cdf = 1.0 - surv
    med, p90 = _km_quantile(times, cdf, 0.5), _km_quantile(times, cdf, 0.9)
    ci = {}
    for q in (0.5, 0.9):
        if obs.all():
            x = np.sort(d)
            n = x.size
            a = 1.0 - check_open_unit("confidence", confidence)
            lo_rank = int(stats.binom.ppf(a / 2, n, q))           # 0-based order statistics of the
            hi_rank = min(int(stats.binom.ppf(1 - a / 2, n, q)), n - 1)  # distribution-free interval
            ci[q] = (float(x[max(lo_rank - 1, 0)]), float(x[hi_rank]))
        else:
            ci[q] = (math.nan, math.nan)
    return Repairs(len(log), int((~obs).sum()), int((d[obs] == 0).sum()), med, *ci[0.5], p90, *ci[0.9],
                   float(d[obs].mean()) if obs.any() else math.nan, times, cdf)


def spare_pool(failures_per_day: float, mean_repair_days: float, quantile: float = 0.99) -> int:
    """Spares so that a failure finds one free with probability ``quantile`` (M/G/infinity, Poisson).

    Nodes in repair at a random time (and, Poisson arrivals seeing time averages, at a failure)
    number Poisson(lambda E[R]) whatever the repair-time distribution; a failure finds a spare when
    fewer than s are out: the smallest s with P(N <= s - 1) >= quantile.
    """
    lam = check_positive("failures_per_day", failures_per_day)
    r = check_positive("mean_repair_days", mean_repair_days)
    q = check_open_unit("quantile", quantile)
    return int(stats.poisson.ppf(q, lam * r)) + 1


def replay_spares(log: IncidentLog, job_nodes: int, n_nodes: int, quantile: float = 0.99, draws: int = 20,
                  seed: int = 0) -> tuple[int, np.ndarray]:
    """The spare pool by replaying the log's own faults and repair times on a job of ``job_nodes`` nodes.

    The job's nodes are drawn at random from copies of the fleet, each copy the log shifted in time
    by a random offset (circularly, so its repairs wrap around the window): more nodes than the
    fleet are covered by more copies, fewer by a subset. At each fault on a job node, the other job
    nodes in repair are counted; the pool is the smallest s with P(count < s) >= ``quantile``. A
    job as large as the fleet is the log itself (one draw, no shift). Open repairs last to the
    window's end. Returns (s, the counts seen at the faults).
    """
    j = check_int_positive("job_nodes", job_nodes)
    n = check_int_positive("n_nodes", n_nodes)
    q = check_open_unit("quantile", quantile)
    if len(log) == 0:
        raise ValueError("the log holds no incident")
    w0, w1 = log.window
    T = w1 - w0
    dur = np.where(log.open, w1 - log.start, log.end - log.start)
    slot = np.searchsorted(np.unique(log.node), log.node)  # 0..nodes-with-faults - 1
    copies = math.ceil(j / n)
    exact = j == n
    rng = np.random.default_rng(seed)
    seen = []
    for _ in range(1 if exact else check_int_positive("draws", draws)):
        offsets = np.zeros(copies) if exact else np.r_[0.0, rng.uniform(0, T, copies - 1)]
        chosen = np.ones(copies * n, bool) if exact else np.isin(np.arange(copies * n), rng.choice(copies * n, j, replace=False))
        s_all, d_all = [], []
        for c in range(copies):
            keep = chosen[c * n + slot]
            s = w0 + np.mod(log.start[keep] - w0 + offsets[c], T)
            s_all.append(s)
            d_all.append(dur[keep])
        s, d = np.concatenate(s_all), np.concatenate(d_all)
        if s.size == 0:
            continue
        starts = np.sort(np.concatenate([s, s - T]))  # each repair also shifted back a window: its tail wraps
        ends = np.sort(np.concatenate([s + d, s + d - T]))
        busy = np.searchsorted(starts, s, "right") - np.searchsorted(ends, s, "right") - (d > 0)
        seen.append(busy)
    counts = np.concatenate(seen) if seen else np.zeros(0, np.int64)
    if counts.size == 0:
        return 1, counts
    srt = np.sort(counts)
    s_needed = int(srt[min(int(math.ceil(q * srt.size)) - 1, srt.size - 1)]) + 1
    return s_needed, counts
