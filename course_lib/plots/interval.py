"""Figures of notebooks 04 (optimal interval) and 06 (the square-root Pareto).

Pure drawing: every number comes from :mod:`course_lib.interval` and :mod:`course_lib.simulate`.
Each builder takes an optional ``ax`` (or creates a figure) and returns the axes; the notebook
calls ``plt.show()``. Times are in minutes unless an argument says otherwise.
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from .. import interval as iv

__all__ = ["waste_curve", "restart_shift", "square_root_law", "snapshot_bound", "snapshot_waste"]


def _axes(ax, figsize=None):
    if ax is None:
        _, ax = plt.subplots(figsize=figsize)
    return ax


def waste_curve(taus, write_cost, mtbf, restart=0.0, sim_mean=None, sim_se=None, exact=None, ax=None):
    """Waste (% of useful work) against the interval: first order, Daly's complete model, the simulation.

    ``exact`` (optional) is the complete model's waste at ``taus`` for the simulated work (remainder
    segments included); by default :func:`course_lib.interval.expected_waste`. ``sim_mean`` and
    ``sim_se`` draw the simulated means with a band of two standard errors.
    """
    ax = _axes(ax)
    taus = np.asarray(taus, dtype=float)
    fine = np.linspace(taus.min(), taus.max(), 400)
    ax.plot(fine, 100 * iv.waste_fraction(fine, write_cost, mtbf, restart), "C1--", label="first order: $\\delta/\\tau + (\\tau/2 + R)/M$")
    ax.plot(fine, 100 * iv.expected_waste(fine, write_cost, mtbf, restart), "C0-", label="Daly's complete model")
    if exact is not None:
        ax.plot(taus, 100 * np.asarray(exact), "C0.", ms=4)
    if sim_mean is not None:
        m = 100 * np.asarray(sim_mean)
        ax.plot(taus, m, "C3o", ms=3, label="simulation (mean)")
        if sim_se is not None:
            se = 100 * np.asarray(sim_se)
            ax.fill_between(taus, m - 2 * se, m + 2 * se, color="C3", alpha=0.25, lw=0, label="simulation $\\pm$ 2 s.e.")
    t_exact = iv.optimal_interval_exact(write_cost, mtbf)
    ax.axvline(t_exact, color="0.4", lw=0.8, ls=":")
    ax.text(t_exact, ax.get_ylim()[1], f" exact optimum {t_exact:.1f} min", va="top", fontsize=9)
    ax.set_xlabel("checkpoint interval $\\tau$ (min)")
    ax.set_ylabel("waste (% of useful work)")
    ax.legend(fontsize=9, loc="lower right")
    return ax


def restart_shift(taus, write_cost, mtbf, restarts, ax=None):
    """Complete-model waste curves for several restart costs: shifted up, same minimum."""
    ax = _axes(ax)
    taus = np.asarray(taus, dtype=float)
    t_exact = iv.optimal_interval_exact(write_cost, mtbf)
    for i, r in enumerate(restarts):
        w = 100 * iv.expected_waste(taus, write_cost, mtbf, r)
        ax.plot(taus, w, color=f"C{i}", label=f"R = {r:g} min")
        ax.plot(t_exact, 100 * iv.expected_waste(t_exact, write_cost, mtbf, r), "o", color=f"C{i}")
    ax.axvline(t_exact, color="0.4", lw=0.8, ls=":")
    ax.set_xlabel("checkpoint interval $\\tau$ (min)")
    ax.set_ylabel("waste (% of useful work)")
    ax.set_title("The restart cost moves the waste, not the best interval")
    ax.legend(fontsize=9)
    return ax


def square_root_law(write_costs_min, mtbf, points=(), axes=None, reference_interval=None):
    """Two log-log panels against the write cost (minutes): the optimal interval and its waste.

    ``points`` is a sequence of (label, write_cost_min) drawn on both curves (the regimes of
    data/write_costs.csv). ``reference_interval`` marks an interval (e.g. one minute) and the
    write cost that makes it optimal.
    """
    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    ax1, ax2 = axes
    d = np.asarray(write_costs_min, dtype=float)
    tau = iv.optimal_interval_exact(d, mtbf)
    waste = iv.expected_waste(tau, d, mtbf, 0.0)
    ax1.loglog(d * 60, tau, "C0-", label="exact optimum (Daly)")
    ax1.loglog(d * 60, iv.young_interval(d, mtbf), "C1--", lw=1, label="Young: $\\sqrt{2\\delta M}$")
    ax2.loglog(d * 60, 100 * waste, "C0-", label="waste at the optimum (R = 0)")
    for i, (label, dm) in enumerate(points):
        t = iv.optimal_interval_exact(dm, mtbf)
        w = iv.expected_waste(t, dm, mtbf, 0.0)
        for ax, y in ((ax1, t), (ax2, 100 * w)):
            ax.plot(dm * 60, y, "o", color=f"C{(i % 7) + 2}", label=label if ax is ax1 else None)
    if reference_interval is not None:
        dref = iv.write_cost_for_interval(reference_interval, mtbf)
        ax1.axhline(reference_interval, color="0.5", lw=0.8, ls=":")
        ax1.axvline(dref * 60, color="0.5", lw=0.8, ls=":")
        ax1.text(dref * 60, reference_interval, f" {dref * 60e3:.0f} ms buys a {reference_interval:g}-min interval", fontsize=8, va="bottom")
    ax1.set_xlabel("blocking write cost $\\delta$ (s)")
    ax1.set_ylabel("optimal interval $\\tau^*$ (min)")
    ax2.set_xlabel("blocking write cost $\\delta$ (s)")
    ax2.set_ylabel("waste at the optimum (% of useful work)")
    ax1.set_title(f"Slope 1/2: 100x cheaper writes, 10x shorter interval (M = {mtbf:g} min)", fontsize=10)
    ax2.set_title("and 10x less waste", fontsize=10)
    ax1.legend(fontsize=7, loc="upper left")
    ax2.legend(fontsize=8, loc="upper left")
    return axes


def snapshot_waste(taus_min, write_cost_min, mtbf, copy_min):
    """First-order waste (R = 0) when each snapshot stalls ``write_cost_min`` and its copy takes ``copy_min``.

    The copy starts with the stall, and the next snapshot cannot start before it ends, so each
    interval stalls ``max(delta, copy - tau)``: :func:`course_lib.interval.stalled_waste` with R = 0.
    """
    return iv.stalled_waste(np.asarray(taus_min, dtype=float), write_cost_min, mtbf, copy_min)


def snapshot_bound(taus_min, write_cost_min, copy_min, mtbf, ax=None):
    """Waste against the interval when the snapshot copy takes ``copy_min`` and runs off the critical path.

    The copy starts with the stall ``write_cost_min`` and the next snapshot waits for it, so each
    interval stalls ``max(delta, copy - tau)``: below ``copy_min`` a wall that rises as 1/tau. When
    the stall is the copy (``write_cost_min == copy_min``) there is no wait on top of it.
    """
    ax = _axes(ax)
    t = np.asarray(taus_min, dtype=float)
    ax.loglog(t * 60, 100 * snapshot_waste(t, write_cost_min, mtbf, copy_min), "C0-", label="waste with the copy bound")
    ax.loglog(t * 60, 100 * iv.waste_fraction(t, write_cost_min, mtbf), "C1--", lw=1, label="first order, no bound")
    ax.axvline(copy_min * 60, color="C3", lw=0.8, ls=":")
    ax.text(copy_min * 60, ax.get_ylim()[1], " snapshot copy time", color="C3", fontsize=8, va="top")
    best = iv.bounded_interval(write_cost_min, mtbf, copy_min)
    ax.plot(best * 60, 100 * snapshot_waste(best, write_cost_min, mtbf, copy_min), "ko", ms=5, label=f"best: {best * 60:.3g} s")
    ax.set_xlabel("checkpoint interval $\\tau$ (s)")
    ax.set_ylabel("waste (% of useful work)")
    ax.legend(fontsize=8)
    return ax
