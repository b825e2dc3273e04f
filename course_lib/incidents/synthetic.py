"""Synthetic fault logs with a known truth, to check that the estimators recover it (notebook 13, tests).

:func:`synthetic_log` draws, vectorized, a fleet of ``n_nodes`` nodes over ``days``:

- each node's rate from a gamma distribution of mean ``rate_per_node_day`` and shape ``shape``
  (``inf``: identical nodes; small shapes: a few lemons and many quiet nodes);
- a share ``burst_share`` of the faults in bursts: a burst hits about ``burst_size`` nodes at once
  (drawn uniformly: a switch or a rack does not pick its nodes by their history), spread over
  ``burst_spread_min`` minutes; the rest fail independently, each at its own rate;
- repairs lognormal with median ``repair_median_days`` and log-sd ``repair_sigma``; a repair that
  would end after the window stays open (censored), as in a real log.

The truth comes back beside the log (:class:`SyntheticTruth`): every node's effective rate, which
faults were in bursts, the repair quantiles. Units: days, per node-day.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._validate import check_int_positive, check_non_negative, check_positive
from .schema import UNKNOWN, IncidentLog

__all__ = ["SyntheticTruth", "synthetic_log"]


@dataclass(frozen=True)
class SyntheticTruth:
    """What the generator put in: per-node effective rates (per node-day), bursts, repair distribution."""

    node_rates: np.ndarray      # per node-day, independent part + the node's expected burst faults
    shape: float
    burst_share: float
    in_burst: np.ndarray        # per incident of the log (its order)
    repair_median_days: float
    repair_sigma: float

    @property
    def rate_per_node_day(self) -> float:
        """The fleet's true rate: the mean of its nodes' rates (the fleet that was drawn, not the gamma's mean)."""
        return float(self.node_rates.mean())

    def repair_quantile(self, q: float) -> float:
        """The true repair-time quantile (days) of the lognormal."""
        from scipy.stats import norm

        return self.repair_median_days * math.exp(self.repair_sigma * float(norm.ppf(q)))

    @property
    def repair_mean_days(self) -> float:
        return self.repair_median_days * math.exp(self.repair_sigma ** 2 / 2)


def synthetic_log(seed, n_nodes: int = 400, days: float = 348.0, rate_per_node_day: float = 3.4e-3,
                  shape: float = math.inf, burst_share: float = 0.0, burst_size: float = 4.0,
                  burst_spread_min: float = 2.0, repair_median_days: float = 1.0,
                  repair_sigma: float = 1.5) -> tuple[IncidentLog, SyntheticTruth]:
    """A synthetic :class:`~course_lib.incidents.schema.IncidentLog` and its truth (see the module doc).

    seed: an int or a ``numpy.random.Generator``. Every node id is ``n00000``...; causes are
    ("Synthetic", "independent" | "burst", "Unknown").
    """
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    n = check_int_positive("n_nodes", n_nodes)
    T = check_positive("days", days)
    r = check_positive("rate_per_node_day", rate_per_node_day)
    k = check_positive("shape", shape) if not (isinstance(shape, float) and math.isinf(shape)) else math.inf
    b = check_non_negative("burst_share", burst_share)
    if b >= 1:
        raise ValueError(f"burst_share must be a finite number in [0, 1) (got {burst_share!r})")
    size = check_positive("burst_size", burst_size)
    if size < 1:
        raise ValueError(f"burst_size must be a finite number >= 1 (got {burst_size!r})")
    spread = check_non_negative("burst_spread_min", burst_spread_min) / 1440.0
    med = check_positive("repair_median_days", repair_median_days)
    sig = check_non_negative("repair_sigma", repair_sigma)

    own = np.full(n, r) if math.isinf(k) else r * rng.gamma(k, 1.0 / k, n)
    counts = rng.poisson(own * (1.0 - b) * T)
    node = np.repeat(np.arange(n), counts)
    start = rng.uniform(0.0, T, node.size)
    in_burst = np.zeros(node.size, bool)
    if b > 0:
        from scipy.stats import poisson

        # a burst hits 1 + Poisson(size - 1) nodes, capped at the fleet: its mean size is E[min(1 + X, n)],
        # the sum of P(X >= i) for i < n (the number of bursts keeps the share b of the faults in bursts)
        mean_size = float(np.sum(poisson.sf(np.arange(n) - 1, size - 1.0)))
        n_bursts = rng.poisson(b * r * n * T / mean_size)
        sizes = np.minimum(1 + rng.poisson(size - 1.0, n_bursts), n)
        t_burst = rng.uniform(0.0, T, n_bursts)
        members = int(sizes.sum())
        b_node = rng.integers(0, n, members)
        b_start = np.minimum(np.repeat(t_burst, sizes) + rng.uniform(0.0, spread, members), np.nextafter(T, 0))
        node = np.concatenate([node, b_node])
        start = np.concatenate([start, b_start])
        in_burst = np.concatenate([in_burst, np.ones(members, bool)])
    repair = med * np.exp(sig * rng.standard_normal(node.size))
    end = start + repair
    end[end > T] = np.nan  # still in repair when the log ends
    cause = in_burst.astype(np.int64)
    order = np.argsort(start, kind="stable")
    log = IncidentLog.from_codes(start, end, node, tuple(f"n{i:05d}" for i in range(n)), cause,
                                 (("Synthetic", "independent", UNKNOWN), ("Synthetic", "burst", UNKNOWN)), window=(0.0, T),
                                 source="synthetic", format="synthetic")
    rates = own * (1.0 - b) + b * r  # each node's expected faults per day: its own, plus its share of the bursts
    return log, SyntheticTruth(rates, k, b, in_burst[order], med, sig)
