"""Self-checks for the exercises of notebook 01 (per-GPU failure rate): solutions/01-per-gpu-failure-rate-sol.ipynb.

Every expected value is computed here from ``course_lib.failures`` and ``data/``; every
typical mistake is the value that mistake produces, computed from the same inputs.

- :func:`opt_rate`: OPT-175B's per-GPU-day rate and its exact 99 % Poisson interval.
- :func:`gpu_category_rate`: the per-GPU-day rate of Llama 3's GPU-category interruptions.
- :func:`normal_interval_coverage`: simulated coverage of the normal-approximation interval
  for a small count (BLOOM's one-to-two failures a week).
"""
from __future__ import annotations

import math
import re

import numpy as np
from scipy import stats

from .. import data, failures
from . import Feedback, Mistake
from ._common import NumberCheck, combine, exercise, pair

__all__ = [
    "OPT_RUN",
    "OPT_CONFIDENCE",
    "opt_rate",
    "gpu_category_rate",
    "bloom_mean_count",
    "normal_interval_coverage",
]

OPT_RUN = "OPT-175B"
OPT_CONFIDENCE = 0.99  # the exercise's confidence level (a course choice; notebook 01 used 0.95)
GPU_CATEGORY = "GPU"
RATE_UNIT = "failures/GPU-day"


def _row(run: str) -> dict:
    return data.failure_logs().where("run", run).rows[0]


# ---------------------------------------------------------------- exercise 1
def _grade_opt_rate(parts: dict[str, NumberCheck], rate, ci) -> Feedback:
    """The rate first (a slip there is named before the interval is looked at), then both bounds."""
    ex = parts["rate"].exercise
    fb_rate = parts["rate"](rate)
    if not fb_rate.ok:
        return combine(ex, [("rate", fb_rate)])
    bounds = pair(ci, "ci")
    if isinstance(bounds, str):
        return Feedback(False, bounds, ex)
    conf = f"{OPT_CONFIDENCE:.0%}"
    return combine(ex, [
        ("rate", fb_rate),
        (f"{conf} low", parts["ci_low"](bounds[0])),
        (f"{conf} high", parts["ci_high"](bounds[1])),
    ])


@exercise(grade=_grade_opt_rate)
def opt_rate() -> dict[str, NumberCheck]:
    """Exercise 1: OPT-175B's failures per GPU-day ``rate`` and its exact 99 % interval ``ci = (low, high)``."""
    row = _row(OPT_RUN)
    k, gpus, days, per_node = int(row["events_low"]), row["gpus"], row["period_days"], row["gpus_per_node"]
    exposure = gpus * days
    rate = failures.rate_per_gpu_day(k, gpus, days)
    low, high = failures.rate_ci_per_gpu_day(k, gpus, days, OPT_CONFIDENCE)
    ex = "01.1 OPT-175B"
    rate_check = NumberCheck(ex, rate, 0.005, RATE_UNIT, (
        Mistake(rate * per_node, f"that is per node-day ({per_node:.0f} GPUs per node): divide the exposure by GPUs x days, not nodes x days"),
        Mistake(rate / 24, "that is per GPU-hour: the period is in days, so do not convert it to hours"),
        Mistake(rate * 1000, "that is per 1,000 GPU-days: the task asks per GPU-day"),
        Mistake(rate * 365.25, "that is per GPU-year: the task asks per GPU-day"),
        *(Mistake(int(n) / exposure, f"you counted only the {n} {kind} restarts: the log's count is manual + automatic (events_low)")
          for n, kind in re.findall(r"(\d+) (manual|automatic)", row["counted"])),
        Mistake(1 / rate, "that is GPU-days per failure (the per-GPU MTBF), not failures per GPU-day"),
    ))
    z = stats.norm.ppf(0.5 + OPT_CONFIDENCE / 2)
    g95 = failures.rate_ci_per_gpu_day(k, gpus, days, 0.95)
    g90 = failures.rate_ci_per_gpu_day(k, gpus, days, 0.90)
    alpha = 1 - OPT_CONFIDENCE
    normal = ((k - z * math.sqrt(k)) / exposure, (k + z * math.sqrt(k)) / exposure)
    no_plus_two = stats.chi2.ppf(1 - alpha / 2, 2 * k) / 2 / exposure
    one_sided_low = stats.chi2.ppf(alpha, 2 * k) / 2 / exposure  # (its upper twin is close to the normal bound)
    conf = f"{OPT_CONFIDENCE:.0%}"
    low_check = NumberCheck(ex, low, 0.002, RATE_UNIT, (
        Mistake(g95[0], f"that is the 95 % interval's bound: the task asks for {conf} (confidence={OPT_CONFIDENCE})"),
        Mistake(g90[0], f"that is the 90 % interval's bound: the task asks for {conf}"),
        Mistake(normal[0], "that is the normal approximation k - z sqrt(k): use the exact (Garwood) interval, failures.rate_ci_per_gpu_day"),
        Mistake(one_sided_low, "that is a one-sided bound (alpha, not alpha/2): the interval is two-sided"),
        Mistake(low * per_node, "that bound is per node-day: divide by GPUs x days"),
    ))
    high_check = NumberCheck(ex, high, 0.002, RATE_UNIT, (
        Mistake(g95[1], f"that is the 95 % interval's bound: the task asks for {conf} (confidence={OPT_CONFIDENCE})"),
        Mistake(g90[1], f"that is the 90 % interval's bound: the task asks for {conf}"),
        Mistake(normal[1], "that is the normal approximation k + z sqrt(k): use the exact (Garwood) interval, failures.rate_ci_per_gpu_day"),
        Mistake(no_plus_two, "the upper Garwood bound uses 2k + 2 degrees of freedom, not 2k: chi2.ppf(1 - alpha/2, 2k + 2) / 2"),
        Mistake(high * per_node, "that bound is per node-day: divide by GPUs x days"),
    ))
    return {"rate": rate_check, "ci_low": low_check, "ci_high": high_check}


# ---------------------------------------------------------------- exercise 2
@exercise
def gpu_category_rate() -> NumberCheck:
    """Exercise 2: failures per GPU-day of Llama 3's GPU-category interruptions (counts of Table 5)."""
    table = data.llama3_table5()
    row = _row("Llama 3 405B")
    gpus, days = row["gpus"], row["period_days"]
    exposure = gpus * days
    gpu_rows = np.array([c == GPU_CATEGORY for c in table["category"]])
    count = int(np.asarray(table["count"])[gpu_rows].sum())
    total = int(np.asarray(table["count"]).sum())
    printed_share = float(np.asarray(table["printed_percent"])[gpu_rows].sum()) / 100
    top = int(np.argmax(table["count"]))
    rate = failures.rate_per_gpu_day(count, gpus, days)
    with_planned = _row("Llama 3 405B (with planned)")["events_low"]
    return NumberCheck("01.2 GPU-category rate", rate, 0.005, RATE_UNIT, (
        Mistake(printed_share * total / exposure, f"you used the printed Table 5 percentages (the GPU rows' printed shares sum to {100 * printed_share:.1f} %): use the counts, which sum to {total}"),
        Mistake(table["count"][top] / exposure, f"that is only the '{table['component'][top]}' row: the GPU category has {int(gpu_rows.sum())} rows (HBM3, SRAM, ...)"),
        Mistake(rate * 2, f"that assumes {gpus / 2:,.0f} GPUs (the caveat's lower bound): use the log's {gpus:,.0f} GPUs"),
        Mistake(rate * row["gpus_per_node"], "that is per node-day: divide by GPUs x days"),
        Mistake(count / total, "that is the GPU share of the interruptions (a fraction), not a rate: divide the count by GPUs x days"),
        Mistake(count / total * with_planned / exposure, f"you applied the GPU share to all {with_planned:.0f} interruptions: Table 5 counts the {total} unexpected ones"),
        Mistake(rate / 24, "that is per GPU-hour: the task asks per GPU-day"),
    ))


# ---------------------------------------------------------------- exercise 3
def bloom_mean_count() -> float:
    """The exercise's true mean count: the middle of BLOOM's 'one to two GPU failures a week'."""
    row = _row("BLOOM-176B")
    return (row["events_low"] + row["events_high"]) / 2


def _coverage(mean: float, covers) -> float:
    k = np.arange(0, int(mean + 20 * math.sqrt(mean) + 30))
    pmf = stats.poisson.pmf(k, mean)
    return float(pmf[np.array([covers(int(x)) for x in k])].sum())


def normal_interval_coverage_exact(mean: float | None = None, confidence: float = 0.95) -> float:
    """P(k - z sqrt(k) <= mean <= k + z sqrt(k)) for k ~ Poisson(mean), summed exactly."""
    mean = bloom_mean_count() if mean is None else mean
    z = stats.norm.ppf(0.5 + confidence / 2)
    return _coverage(mean, lambda k: abs(k - mean) <= z * math.sqrt(k))


@exercise
def normal_interval_coverage() -> NumberCheck:
    """Exercise 3: the simulated coverage (a fraction) of k +- 1.96 sqrt(k) when the true mean is BLOOM's 1.5."""
    mean = bloom_mean_count()
    right = normal_interval_coverage_exact(mean)
    garwood = _coverage(mean, lambda k: failures.poisson_ci(k)[0] <= mean <= failures.poisson_ci(k)[1])
    one_sd = _coverage(mean, lambda k: abs(k - mean) <= math.sqrt(k))
    return NumberCheck("01.3 normal-interval coverage", right, 0.02, "", (
        Mistake(garwood, "that is the coverage of the exact Garwood interval (failures.poisson_ci): the task asks for the normal approximation k +- 1.96 sqrt(k)"),
        Mistake(1 - right, "that is the miss rate (truth outside the interval): coverage is the fraction of intervals that contain the truth"),
        Mistake(100 * right, "that is a percentage: give the coverage as a fraction between 0 and 1"),
        Mistake(one_sd, "that interval is +- 1 sqrt(k) (68 %): a 95 % normal interval is +- 1.96 sqrt(k)"),
    ))
