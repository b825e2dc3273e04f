"""Figures of notebooks 01 (per-GPU failure rate) and 02 (fleet MTBF).

Pure drawing: every number comes from :mod:`course_lib.failures`. Each builder takes an
optional ``ax`` (or creates a figure) and returns the axes; the notebook calls ``plt.show()``.
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import matplotlib.ticker as mticker
import numpy as np

from .. import failures

__all__ = [
    "root_causes_by_category",
    "public_log_rates",
    "fleet_mtbf_vs_size",
    "first_failure_check",
    "weibull_vs_exponential",
]


def _axes(ax, figsize=None):
    if ax is None:
        _, ax = plt.subplots(figsize=figsize)
    return ax


def root_causes_by_category(category_counts, ax=None, title="Llama 3: unexpected interruptions by root-cause category"):
    """Horizontal bars: count per category with its share of the total (computed from counts)."""
    ax = _axes(ax)
    names = [c for c, _ in category_counts]
    counts = np.array([n for _, n in category_counts], dtype=float)
    shares = failures.shares_from_counts(counts)
    y = np.arange(len(names))[::-1]
    ax.barh(y, counts, color="C0")
    for yi, n, s in zip(y, counts, shares):
        ax.text(n, yi, f"  {n:.0f} ({s:.1%})", va="center", fontsize=9)
    ax.set_yticks(y, names)
    ax.set_xlabel(f"interruptions (count, total {counts.sum():.0f})")
    ax.set_xlim(0, counts.max() * 1.3)
    ax.set_title(title)
    ax.grid(axis="y", visible=False)
    return ax


def public_log_rates(log_rates, band=None, question_rate=None, ax=None):
    """Per-GPU-day rate of each public log: range (thick), 95 % Poisson interval (whiskers), band shaded.

    ``band`` is (low, high) in failures per GPU-day; ``question_rate`` draws the question's
    implied rate as a vertical line.
    """
    ax = _axes(ax, figsize=(8.0, 5.0))
    y = np.arange(len(log_rates))[::-1]
    if band is not None:
        ax.axvspan(band[0], band[1], color="C2", alpha=0.15, label=f"band of recent fleets {band[0]:.1e} to {band[1]:.1e}")
    for yi, r in zip(y, log_rates):
        if r.has_ci:
            ax.plot([r.ci_low, r.ci_high], [yi, yi], color="0.3", lw=1, marker="|", ms=10)
        ax.plot([r.rate_low, r.rate_high], [yi, yi], color="C0", lw=5, solid_capstyle="round")
        ax.plot([(r.rate_low + r.rate_high) / 2], [yi], "o", color="C0" if r.has_ci else "C1", ms=6)
    ax.plot([], [], color="C0", lw=5, label="rate (thick: published range)")
    ax.plot([], [], color="0.3", lw=1, marker="|", label="95 % exact Poisson interval")
    ax.plot([], [], "o", color="C1", label="published as a rate (no count, no interval)")
    if question_rate is not None:
        ax.axvline(question_rate, color="C3", ls="--", label=f"the question's implied rate {question_rate:.2e}")
    ax.set_xscale("log")
    ax.set_yticks(y, [r.run for r in log_rates])
    ax.set_xlabel("failures per GPU-day (log scale)")
    ax.set_title("Public failure logs as per-GPU-day rates")
    ax.legend(loc="upper center", bbox_to_anchor=(0.4, -0.16), ncol=2, fontsize=8)
    ax.grid(axis="y", visible=False)
    ax.figure.tight_layout()
    return ax


def fleet_mtbf_vs_size(sizes, rate, rate_ci=None, reference_rates=None, points=None, ax=None, rate_label="Llama 3 rate"):
    """Log-log fleet MTBF (hours) against fleet size for a per-GPU-day ``rate``.

    ``rate_ci`` (low, high) shades the band; ``reference_rates`` {label: rate} adds dashed lines;
    ``points`` is a list of (label, n_gpus, mtbf_hours) marked on the plot.
    """
    ax = _axes(ax, figsize=(7.5, 4.5))
    sizes = np.asarray(sizes, dtype=float)
    grid = np.geomspace(1, sizes.max() * 1.5, 200)
    ax.loglog(grid, failures.HOURS_PER_DAY / (grid * rate), color="C0", label=f"{rate_label} {rate:.2e} per GPU-day")
    if rate_ci is not None:
        ax.fill_between(grid, failures.HOURS_PER_DAY / (grid * rate_ci[1]), failures.HOURS_PER_DAY / (grid * rate_ci[0]), color="C0", alpha=0.2, label="95 % interval of that rate")
    ax.loglog(sizes, [failures.fleet_mtbf_hours(int(n), rate) for n in sizes], "o", color="C0")
    for i, (label, r) in enumerate((reference_rates or {}).items()):
        ax.loglog(grid, failures.HOURS_PER_DAY / (grid * r), ls="--", color=f"C{i + 4}", label=f"{label} {r:.2e} per GPU-day")
    markers = ["s", "D", "^", "v", "P"]
    for i, (label, n, mtbf) in enumerate(points or []):
        ax.loglog([n], [mtbf], markers[i % len(markers)], ms=9, color=f"C{i + 1}", label=label, zorder=5)
    for ref, text in [(24.0, "1 day"), (1.0, "1 hour")]:
        ax.axhline(ref, color="0.5", lw=0.8, ls=":")
        ax.text(1.2, ref * 1.1, text, color="0.4", fontsize=8)
    ax.set_xlabel("GPUs in one synchronous job (log scale)")
    ax.set_ylabel("fleet MTBF (hours, log scale)")
    ax.set_title("A job fails when any GPU fails: MTBF falls as 1/N")
    ax.legend(fontsize=8, loc="upper right")
    return ax


def first_failure_check(draws_hours, mtbf_hours, ax=None):
    """Histogram of simulated times to first failure against the exponential density 1/M e^(-t/M)."""
    ax = _axes(ax)
    draws_hours = np.asarray(draws_hours, dtype=float)
    ax.hist(draws_hours, bins=50, density=True, color="C0", alpha=0.5, label=f"Monte Carlo ({draws_hours.size} fleets)")
    t = np.linspace(max(draws_hours.max(), 1e-9) / 500, draws_hours.max(), 300)
    ax.plot(t, failures.weibull_pdf(t, 1.0, mtbf_hours), color="C3", label=f"exponential, mean {mtbf_hours:.1f} h")
    ax.set_xlabel("time to the fleet's first failure (hours)")
    ax.set_ylabel("density (1/hour)")
    ax.set_title("Minimum of N exponential lifetimes: simulated vs formula")
    ax.legend()
    return ax


def weibull_vs_exponential(n_gpus, rate, shape, axes=None, horizon_hours=48.0, age_days=(1.0, 3650.0), scale=None,
                           weibull_label=None):
    """Two panels for a fleet of ``n_gpus`` GPUs failing at ``rate`` per GPU-day (exponential).

    The Weibull(``shape``) lifetime has scale ``scale`` (days); None keeps the same mean
    lifetime as the exponential, 1/``rate`` (notebook 02 passes the scale whose hazard equals
    ``rate`` at the fleet's age instead: :func:`course_lib.failures.weibull_scale_for_hazard`).
    Left: P(first failure within t hours) for Weibull vs exponential lifetimes.
    Right: fleet failure intensity N x h(age) (failures/day) against the age of the fleet,
    with no replacement (a fair picture while few GPUs have failed).
    """
    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(11.0, 4.0))
    mean_days = 1.0 / rate
    if scale is None:
        scale = failures.weibull_scale_for_mean(shape, mean_days)
        weibull_label = weibull_label or f"Weibull shape {shape:g}, same mean"
    weibull_label = weibull_label or f"Weibull shape {shape:g}"
    _, s_n = failures.fleet_first_failure_weibull(n_gpus, shape, scale)
    _, e_n = failures.fleet_first_failure_weibull(n_gpus, 1.0, mean_days)
    t_h = np.linspace(0.0, horizon_hours, 400)
    ax = axes[0]
    ax.plot(t_h, failures.weibull_cdf(t_h / 24.0, 1.0, e_n), color="C0", label="exponential (shape 1)")
    ax.plot(t_h, failures.weibull_cdf(t_h / 24.0, shape, s_n), color="C3", label=weibull_label)
    ax.set_xlabel("hours since the fleet was racked")
    ax.set_ylabel("P(first failure by then)")
    ax.set_title(f"{n_gpus:,} new GPUs: time to the first failure")
    ax.legend(loc="lower right")
    ax = axes[1]
    age = np.geomspace(age_days[0], age_days[1], 300)
    ax.loglog(age, np.full_like(age, failures.failures_per_day(n_gpus, rate)), color="C0", label="exponential: constant")
    ax.loglog(age, n_gpus * failures.weibull_hazard(age, shape, scale), color="C3", label=f"Weibull shape {shape:g}: falls with age")
    ax.set_xlabel("age of the fleet (days, log scale)")
    ax.set_ylabel("failures per day (log scale)")
    ax.yaxis.set_major_locator(mticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(mticker.FormatStrFormatter("%g"))
    ax.yaxis.set_minor_formatter(mticker.NullFormatter())
    ax.set_title("Fleet failure intensity N x h(age)")
    ax.legend(loc="upper right")
    return axes
