"""Failure rates: from public counts to a per-GPU rate, and from a per-GPU rate to a fleet.

Notebook 01 (per-GPU failure rate) explains the first half: a count of failures over
GPUs x days of exposure is a per-GPU-day rate, and because the count is Poisson its exact
(Garwood) confidence interval comes from the chi-square distribution. It also reads
Llama 3's Table 5 and shows why shares must be computed from the counts (the printed
percentages do not add up).

Notebook 02 (fleet MTBF) explains the second half: a synchronous job stops when *any* of
its N GPUs fails, so with exponential lifetimes the fleet fails N times as often as one
GPU. With Weibull lifetimes of shape k the minimum of N lifetimes is again Weibull, with
the scale shrunk by N**(-1/k); for k < 1 (infant mortality) a freshly racked fleet meets
its first failure far sooner than the exponential with the same per-GPU mean.

Units: rates are failures per GPU-day, fleet MTBF is in hours, Weibull scales and times
are in whatever unit the caller uses (the notebooks use days). No plotting here.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from ._validate import (
    check_int_non_negative,
    check_int_positive,
    check_non_negative,
    check_open_unit,
    check_positive,
)

__all__ = [
    "HOURS_PER_DAY",
    "rate_per_gpu_day",
    "poisson_ci",
    "rate_ci_per_gpu_day",
    "failures_per_day",
    "fleet_mtbf_hours",
    "mtbf_min",
    "fleet_first_failure_weibull",
    "weibull_mean",
    "weibull_scale_for_mean",
    "weibull_scale_for_hazard",
    "weibull_hazard",
    "weibull_cdf",
    "weibull_pdf",
    "fleet_mean_time_to_first_failure",
    "sample_fleet_first_failure",
    "shares_from_counts",
    "category_counts",
    "Table5Erratum",
    "table5_erratum",
    "LogRate",
    "log_rates",
    "planned_interruptions",
]

from .units import HOURS_PER_DAY, MINUTES_PER_DAY  # noqa: E402  (re-exported: HOURS_PER_DAY)


# ---------------------------------------------------------------- rates and intervals
def rate_per_gpu_day(events, gpus, days) -> float:
    """Failures per GPU-day: ``events / (gpus * days)`` (notebook 01).

    ``gpus`` may be an average fleet size (not necessarily whole); ``events`` >= 0.
    """
    e = check_non_negative("events", events)
    g = check_positive("gpus", gpus)
    d = check_positive("days", days)
    return e / (g * d)


def poisson_ci(events, confidence: float = 0.95) -> tuple[float, float]:
    """Exact (Garwood) two-sided interval on the mean of a Poisson count (notebook 01).

    For an observed count k and alpha = 1 - confidence:
    low = chi2.ppf(alpha/2, 2k) / 2 (0 when k = 0), high = chi2.ppf(1 - alpha/2, 2k + 2) / 2.
    Returns (low, high) in counts; the interval is conservative (coverage >= confidence).
    """
    k = check_int_non_negative("events", events)
    c = check_open_unit("confidence", confidence)
    alpha = 1.0 - c
    low = 0.0 if k == 0 else float(stats.chi2.ppf(alpha / 2.0, 2 * k) / 2.0)
    high = float(stats.chi2.ppf(1.0 - alpha / 2.0, 2 * k + 2) / 2.0)
    return low, high


def rate_ci_per_gpu_day(events, gpus, days, confidence: float = 0.95) -> tuple[float, float]:
    """The Garwood interval of ``events`` divided by the exposure ``gpus * days`` (notebook 01)."""
    g = check_positive("gpus", gpus)
    d = check_positive("days", days)
    low, high = poisson_ci(events, confidence)
    return low / (g * d), high / (g * d)


# ---------------------------------------------------------------- exponential fleet
def failures_per_day(n_gpus, rate_per_gpu_day) -> float:
    """Expected failures per day of a job on ``n_gpus`` GPUs: N x lambda (notebook 02)."""
    n = check_int_positive("n_gpus", n_gpus)
    r = check_positive("rate_per_gpu_day", rate_per_gpu_day)
    return n * r


def mtbf_min(failures_per_day) -> float:
    """Mean time between failures in minutes of a job failing ``failures_per_day`` times a day.

    ``MINUTES_PER_DAY / failures_per_day`` (notebook 02); the one place the course turns a
    daily failure count into an MTBF (the budget, the interval and the floor all call it).
    """
    return MINUTES_PER_DAY / check_positive("failures_per_day", failures_per_day)


def fleet_mtbf_hours(n_gpus, rate_per_gpu_day) -> float:
    """Mean time between failures of the whole job in hours: 24 / (N x lambda) (notebook 02)."""
    return mtbf_min(failures_per_day(n_gpus, rate_per_gpu_day)) / 60.0


# ---------------------------------------------------------------- Weibull lifetimes
def fleet_first_failure_weibull(n_gpus, shape, scale) -> tuple[float, float]:
    """(shape, scale) of the time to the first failure among N iid Weibull(shape, scale) GPUs.

    S_N(t) = S(t)**N = exp(-N (t/scale)**k) = exp(-(t / (scale N**(-1/k)))**k): the minimum is
    Weibull with the same shape and scale x N**(-1/k) (notebook 02 derives it in sympy).
    """
    n = check_int_positive("n_gpus", n_gpus)
    k = check_positive("shape", shape)
    s = check_positive("scale", scale)
    return k, s * n ** (-1.0 / k)


def weibull_mean(shape, scale) -> float:
    """Mean of Weibull(shape k, scale s): s x Gamma(1 + 1/k) (notebook 02)."""
    k = check_positive("shape", shape)
    s = check_positive("scale", scale)
    return s * math.gamma(1.0 + 1.0 / k)


def weibull_scale_for_mean(shape, mean) -> float:
    """The Weibull scale whose mean is ``mean``: mean / Gamma(1 + 1/k) (notebook 02).

    Used to compare a Weibull per-GPU lifetime with the exponential of the same mean.
    """
    k = check_positive("shape", shape)
    m = check_positive("mean", mean)
    return m / math.gamma(1.0 + 1.0 / k)


def weibull_scale_for_hazard(shape, rate, age) -> float:
    """The Weibull scale whose hazard at ``age`` is ``rate`` (notebook 02).

    Solves (k/s) (age/s)**(k-1) = rate for s: ``s = (k age**(k-1) / rate)**(1/k)``. A rate
    observed on a fleet that has run for ``age`` is the hazard at that age, not 1 / the mean
    lifetime; this calibration makes the Weibull fleet fail at the observed rate at that age.
    """
    k = check_positive("shape", shape)
    r = check_positive("rate", rate)
    a = check_positive("age", age)
    return (k * a ** (k - 1.0) / r) ** (1.0 / k)


def weibull_hazard(t, shape, scale):
    """Hazard (failure rate at age t) of Weibull(k, s): (k/s) (t/s)**(k-1) (notebook 02).

    ``t`` is a number or an array of ages > 0; for k < 1 the hazard falls with age
    (infant mortality), for k = 1 it is the constant 1/s, for k > 1 it rises (wear-out).
    """
    k = check_positive("shape", shape)
    s = check_positive("scale", scale)
    arr = _ages("t", t, allow_zero=False)
    h = (k / s) * (arr / s) ** (k - 1.0)
    return float(h) if h.ndim == 0 else h


def _ages(name, t, allow_zero):
    arr = np.asarray(t, dtype=float)
    bad = np.any(arr < 0) if allow_zero else np.any(arr <= 0)
    if arr.size == 0 or not np.all(np.isfinite(arr)) or bad:
        raise ValueError(f"{name} must be finite times {'>= 0' if allow_zero else '> 0'} (got {t!r})")
    return arr


def weibull_cdf(t, shape, scale):
    """P(lifetime <= t) for Weibull(k, s): 1 - exp(-(t/s)**k); ``t`` >= 0, number or array (notebook 02)."""
    k = check_positive("shape", shape)
    s = check_positive("scale", scale)
    arr = _ages("t", t, allow_zero=True)
    out = -np.expm1(-((arr / s) ** k))
    return float(out) if out.ndim == 0 else out


def weibull_pdf(t, shape, scale):
    """Density of Weibull(k, s) at ages ``t`` > 0: hazard x survival (notebook 02)."""
    k = check_positive("shape", shape)
    s = check_positive("scale", scale)
    arr = _ages("t", t, allow_zero=False)
    out = (k / s) * (arr / s) ** (k - 1.0) * np.exp(-((arr / s) ** k))
    return float(out) if out.ndim == 0 else out


def fleet_mean_time_to_first_failure(n_gpus, shape, scale) -> float:
    """Mean time until the first of N iid Weibull(shape, scale) GPUs fails (notebook 02).

    Equals scale x N**(-1/k) x Gamma(1 + 1/k); for k = 1 it is scale / N (the exponential MTBF).
    """
    k, s_n = fleet_first_failure_weibull(n_gpus, shape, scale)
    return weibull_mean(k, s_n)


def sample_fleet_first_failure(rng, n_gpus, size, shape=1.0, scale=1.0, chunk_elements: int = 2**22) -> np.ndarray:
    """Monte Carlo: ``size`` draws of the fleet's time to first failure (notebook 02).

    Each draw samples all ``n_gpus`` per-GPU Weibull(shape, scale) lifetimes and keeps their
    minimum, so it checks the closed form instead of assuming it. The exponential with rate
    lambda is shape=1, scale=1/lambda. Work is done in chunks of about ``chunk_elements``
    lifetimes to bound memory. ``rng`` is a ``numpy.random.Generator``.
    """
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator (got {type(rng).__name__})")
    n = check_int_positive("n_gpus", n_gpus)
    m = check_int_positive("size", size)
    k = check_positive("shape", shape)
    s = check_positive("scale", scale)
    chunk_elements = check_int_positive("chunk_elements", chunk_elements)
    rows = max(1, chunk_elements // n)
    out = np.empty(m, dtype=float)
    for start in range(0, m, rows):
        stop = min(m, start + rows)
        lifetimes = rng.weibull(k, size=(stop - start, n))
        out[start:stop] = s * lifetimes.min(axis=1)
    return out


# ---------------------------------------------------------------- Llama 3 Table 5
def shares_from_counts(counts) -> np.ndarray:
    """Each count's share of the total (fractions summing to 1) (notebook 01)."""
    arr = np.asarray(counts, dtype=float)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"counts must be a non-empty 1-D sequence of counts >= 0 (got {counts!r})")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError(f"counts must be finite counts >= 0 (got {counts!r})")
    total = arr.sum()
    if total <= 0:
        raise ValueError(f"counts must have a total > 0 (got {counts!r})")
    return arr / total


def category_counts(categories, counts) -> list[tuple[str, int]]:
    """Counts summed per category, largest first (ties by name) (notebook 01)."""
    cats = list(categories)
    vals = [check_int_non_negative("counts", c) for c in counts]
    if len(cats) != len(vals) or not cats:
        raise ValueError(f"categories and counts must be non-empty and of equal length (got {len(cats)} and {len(vals)})")
    sums: dict[str, int] = {}
    for c, v in zip(cats, vals):
        sums[c] = sums.get(c, 0) + v
    return sorted(sums.items(), key=lambda kv: (-kv[1], kv[0]))


@dataclass(frozen=True)
class Table5Erratum:
    """What Llama 3's Table 5 prints versus what its counts give (notebook 01).

    Percentages are in percent. ``gpu_printed_percent`` is the sum of the GPU rows' printed
    shares, which is the paper's "58.7 %" in section 3.3.4.
    """

    total_count: int
    printed_percent_sum: float
    top_component: str
    top_count: int
    top_share_percent: float
    top_printed_percent: float
    gpu_count: int
    gpu_rows: int
    gpu_share_percent: float
    gpu_printed_percent: float


def table5_erratum(table=None, gpu_category: str = "GPU") -> Table5Erratum:
    """Compute Table 5's erratum from its counts (default: data/llama3_table5.csv)."""
    if table is None:
        from . import data

        table = data.llama3_table5()
    components = list(table["component"])
    categories = list(table["category"])
    counts = np.asarray(table["count"], dtype=np.int64)
    printed = np.asarray(table["printed_percent"], dtype=float)
    shares = 100.0 * shares_from_counts(counts)
    top = int(np.argmax(counts))
    gpu = np.array([c == gpu_category for c in categories])
    if not gpu.any():
        raise ValueError(f"gpu_category must name a category of the table (got {gpu_category!r}; have {sorted(set(categories))})")
    return Table5Erratum(
        total_count=int(counts.sum()),
        printed_percent_sum=round(float(printed.sum()), 6),
        top_component=components[top],
        top_count=int(counts[top]),
        top_share_percent=float(shares[top]),
        top_printed_percent=float(printed[top]),
        gpu_count=int(counts[gpu].sum()),
        gpu_rows=int(gpu.sum()),
        gpu_share_percent=float(shares[gpu].sum()),
        gpu_printed_percent=round(float(printed[gpu].sum()), 6),
    )


# ---------------------------------------------------------------- other public logs
@dataclass(frozen=True)
class LogRate:
    """One public failure log as a per-GPU-day rate (notebook 01).

    ``rate_low``/``rate_high`` span the published range (equal when one count is given);
    ``ci_low``/``ci_high`` are the Garwood bounds (low bound of the low count, high bound of
    the high count), NaN when the source publishes only a rate (no count, no exposure).
    """

    run: str
    rate_low: float
    rate_high: float
    ci_low: float
    ci_high: float
    counted: str
    assumption: str
    source: str
    label: str

    @property
    def has_ci(self) -> bool:
        return not math.isnan(self.ci_low)


def log_rates(table=None, confidence: float = 0.95) -> list[LogRate]:
    """Per-GPU-day rates of the public failure logs (default: data/failure_logs.csv).

    Rows with counts (events_low/events_high over gpus x period_days) get their rate range
    and exact Poisson interval; rows published per 1000 node-days are divided by
    gpus_per_node x 1000 and get no interval.
    """
    check_open_unit("confidence", confidence)
    if table is None:
        from . import data

        table = data.failure_logs()
    out = []
    for row in table.rows:
        run = row["run"]
        published = row.get("published_per_1000_node_days")
        if published is not None and not (isinstance(published, float) and math.isnan(published)):
            per_node_day = check_positive(f"published_per_1000_node_days ({run})", published) / 1000.0
            rate = per_node_day / check_positive(f"gpus_per_node ({run})", row["gpus_per_node"])
            out.append(LogRate(run, rate, rate, math.nan, math.nan, row["counted"], row["assumption"], row["source"], row["label"]))
            continue
        gpus, days = row["gpus"], row["period_days"]
        lo_e, hi_e = row["events_low"], row["events_high"]
        if check_non_negative(f"events_high ({run})", hi_e) < check_non_negative(f"events_low ({run})", lo_e):
            raise ValueError(f"events_high ({run}) must be >= events_low (got {hi_e} < {lo_e})")
        r_lo = rate_per_gpu_day(lo_e, gpus, days)
        r_hi = rate_per_gpu_day(hi_e, gpus, days)
        ci_lo, _ = rate_ci_per_gpu_day(lo_e, gpus, days, confidence)
        _, ci_hi = rate_ci_per_gpu_day(hi_e, gpus, days, confidence)
        out.append(LogRate(run, r_lo, r_hi, ci_lo, ci_hi, row["counted"], row["assumption"], row["source"], row["label"]))
    return out


def planned_interruptions(data_dir=None) -> tuple[int, float, float]:
    """Llama 3's planned interruptions: ``(count, days, per day)``, 47 in 54 days, about 0.87 a day (notebook 08, the drill).

    All job interruptions less the unexpected ones over the same snapshot (data/failure_logs.csv). They
    are counted per job, not per GPU, so a bigger fleet does not have more of them (an assumption).
    """
    from . import data

    logs = data.failure_logs(data_dir)
    rows = {r["run"]: r for r in logs.rows}
    unexpected, every = rows["Llama 3 405B"], rows["Llama 3 405B (with planned)"]
    count = int(every["events_high"]) - int(unexpected["events_high"])
    days = float(unexpected["period_days"])
    return count, days, count / days
