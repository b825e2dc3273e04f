"""Figures of notebook 13 (your incident log): the model's three assumptions against a real log.

Pure drawing: every number comes from :mod:`course_lib.incidents.analysis`. Each builder takes an
optional ``ax`` and returns it; the notebook calls ``plt.show()``.
"""
from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
from scipy import stats

__all__ = ["faults_per_node", "interarrival_histogram", "monthly_rate", "repair_cdf"]


def _axes(ax, figsize=None):
    if ax is None:
        _, ax = plt.subplots(figsize=figsize)
    return ax


def faults_per_node(counts, fit=None, ax=None):
    """Nodes with 0, 1, 2, ... faults (bars) against identical Poisson nodes and the gamma-Poisson fit (log y)."""
    ax = _axes(ax)
    x = np.asarray(counts, dtype=np.int64)
    n, m = x.size, x.mean()
    k = np.arange(0, x.max() + 2)
    observed = np.bincount(x, minlength=k.size)[: k.size]
    ax.bar(k, observed, color="C0", alpha=0.75, label=f"observed ({n:,} nodes, mean {m:.2f})")
    ax.plot(k, n * stats.poisson.pmf(k, m), "o-", color="C3", label="identical nodes (Poisson)")
    if fit is not None and math.isfinite(fit.shape):
        p = fit.shape / (fit.shape + fit.mean)
        ax.plot(k, n * stats.nbinom.pmf(k, fit.shape, p), "s--", color="C2", label=f"gamma-distributed node rates (k = {fit.shape:.2f})")
    ax.set_yscale("log")
    ax.set_ylim(0.3, n * 1.5)
    ax.set_xlabel("interruptions on the node over the log")
    ax.set_ylabel("nodes (log scale)")
    ax.set_title("Faults per node, the nodes without a fault included")
    ax.legend(fontsize=9)
    return ax


def interarrival_histogram(gaps_days, ax=None, bins=40):
    """Time between consecutive faults across the fleet (log axes) against the exponential of the same mean."""
    ax = _axes(ax)
    g = np.asarray(gaps_days, dtype=float) * 1440.0  # minutes
    pos = g[g > 0]
    zero = int((g <= 0).sum())
    lo = max(pos.min(), 0.1)
    edges = np.geomspace(lo, pos.max() * 1.01, bins + 1)
    counts, _ = np.histogram(pos, bins=edges)
    centres = np.sqrt(edges[:-1] * edges[1:])
    ax.step(centres, counts, where="mid", color="C0", label=f"observed ({g.size:,} gaps; {zero} at the same instant, not drawn)")
    mean = g.mean()
    expected = g.size * (np.exp(-edges[:-1] / mean) - np.exp(-edges[1:] / mean))
    ax.plot(centres, expected, "--", color="C3", label=f"Poisson process, same mean ({mean:.0f} min)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(0.5, None)
    ax.set_xlabel("minutes from one fault to the next, anywhere in the fleet (log scale)")
    ax.set_ylabel("gaps per bin (log scale)")
    ax.set_title("Inter-arrival times: bursts show as an excess of short gaps")
    ax.legend(fontsize=9)
    return ax


def monthly_rate(monthly, overall=None, ax=None):
    """Rate per GPU-day in each 30-day period with its 95 % interval, and the log's overall rate."""
    ax = _axes(ax)
    mid = (monthly.edges[:-1] + monthly.edges[1:]) / 2
    width = np.diff(monthly.edges)
    ax.errorbar(mid, monthly.rate, yerr=[monthly.rate - monthly.low, monthly.high - monthly.rate], xerr=width / 2,
                fmt="o", color="C0", capsize=3, label="each 30-day period, 95 % interval")
    if overall is not None:
        ax.axhline(overall, color="C3", ls="--", label=f"the whole log, {overall:.2e}")
    ax.set_xlabel("days since the start of the log")
    ax.set_ylabel("interruptions per GPU-day")
    ax.set_title(f"Is the rate stationary? (one rate: p = {monthly.p_value:.1g})")
    ax.legend(fontsize=9)
    return ax


def repair_cdf(repairs, ax=None):
    """The repair-time distribution (Kaplan-Meier, log x) with its median and 90th percentile."""
    ax = _axes(ax)
    t = np.maximum(repairs.times * 24.0, 1e-2)  # hours
    ax.step(t, repairs.cdf, where="post", color="C0", label=f"{repairs.n:,} repairs ({repairs.censored} still open)")
    for q, v, ls in ((0.5, repairs.median_days, "--"), (0.9, repairs.p90_days, ":")):
        ax.axvline(24 * v, color="C3", ls=ls, label=f"{'median' if q == 0.5 else '90th percentile'} {24 * v:.0f} h")
    ax.set_xscale("log")
    ax.set_ylim(0, 1.01)
    ax.set_xlabel("repair time, fault to the node back in service (hours, log scale)")
    ax.set_ylabel("share of repairs done")
    ax.set_title(f"Repair times: median {24 * repairs.median_days:.0f} h, 90th percentile {repairs.p90_days:.1f} days")
    ax.legend(fontsize=9, loc="lower right")
    return ax
