"""The floor: what is left of the loss once every checkpoint lever is pulled, and ETTR at scale.

Notebook 08 explains this module; the capstone (notebook 09), ``course_lib.answer`` and the
budget CLI use it. Units: **minutes** for every time, **per day** for every loss
(``*_minutes_per_day``), failures per **GPU-day** for every rate, like the rest of course_lib.

The floor
---------
With failures at ``lambda`` per day, detection ``D`` and a restart ``R = reschedule + reload``
per failure, a checkpoint every ``tau`` minutes that blocks training for ``delta`` minutes, a
day of ``T = MINUTES_PER_DAY`` minutes loses (first order, :mod:`course_lib.restart`)::

    lambda (D + R)  +  lambda tau / 2  +  delta T / tau
    `-- the floor --'  `--- rewind ---'   `-- writes --'

At Young's optimum ``tau* = sqrt(2 delta M)`` (``M = T / lambda``) the last two terms are
equal and sum to ``sqrt(2 delta lambda T)``, so the after-levers loss is
``lambda (D + R) + sqrt(2 delta lambda T)``. As ``delta -> 0`` the square root vanishes and
``lambda (D + R)`` remains: no checkpoint lever, however cheap the write, removes it. What
moves it: fewer failures (a smaller ``lambda``), a faster detection and restart (a smaller
``D + R``), or stopping fewer GPUs per failure. The floor and the loss are properties of the
one day model, :class:`~course_lib.restart.RestartBudget` (``floor_minutes_per_day``,
``minutes_per_day``), taken at the best interval by
:func:`course_lib.restart.checkpoint_at_optimum`; divided by ``T`` the loss is exactly
``course_lib.interval.waste_fraction(tau*, delta, M, D + R)``.

ETTR (Kokolis et al., HPCA 2025)
--------------------------------
The expected effective training time ratio is projected as::

    E[ETTR] ~ [1 - N_nodes r_f (u0 + dt / 2)] / (1 + w_cp / dt)

with ``r_f`` failures per **node-day**, ``u0`` the restart overhead, ``dt`` the checkpoint
interval and ``w_cp`` the blocking write. :func:`ettr` takes the course's units: ``N_nodes r_f``
is the job's failures per day, which equals ``n_gpus x rate_per_gpu_day`` whatever the GPUs
per node (``N_nodes = n_gpus / g`` and ``r_f = g x rate_per_gpu_day``: ``g`` cancels), and it is
divided by ``MINUTES_PER_DAY`` to be per minute like ``u0`` and ``dt``. Only the paper's inputs
need ``g``: its ``r_f = 6.5e-3`` per node-day is ``6.5e-3 / 8 = 8.1e-4`` per GPU-day
(:func:`kokolis_projection`). To first order ``ETTR = 1 - waste_fraction``.

Fewer failures
--------------
:func:`rate_levers` turns sourced evidence into factors on the rate: removing causes of Llama
3's Table 5 (computed from the raw counts, data/llama3_table5.csv) and lemon-node removal
(14 % -> 4 % of large jobs failed, Kokolis et al., data/floor_inputs.csv). The numbers of
the outside world come from data/ (floor_inputs.csv, write_costs.csv, levers.csv), never
from literals here.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Iterable

from scipy.optimize import brentq

from . import failures, sizing
from . import interval as iv
from ._validate import check_non_negative, check_open_unit, check_positive
from .data import SourcedValue, sourced
from .restart import RestartBudget, checkpoint_at_optimum
from .scenario import Scenario

__all__ = [
    "floor_inputs",
    "ettr",
    "KokolisProjection",
    "kokolis_projection",
    "table5_share",
    "rate_without_causes",
    "lemon_node_factor",
    "RateLever",
    "rate_levers",
    "fewer_failures",
    "CheckpointRegime",
    "default_regimes",
    "fleet_size_at_ettr",
]


def floor_inputs(data_dir=None) -> dict[str, SourcedValue]:
    """The rows of data/floor_inputs.csv (Kokolis et al., ByteCheckpoint), by key."""
    return sourced("floor_inputs.csv", "key", data_dir)


# --------------------------------------------------------------------------------------
# ETTR
# --------------------------------------------------------------------------------------
def ettr(n_gpus, rate_per_gpu_day, restart_overhead, interval, write_cost) -> float:
    """Expected ETTR in the form of Kokolis et al. (notebook 08), course units.

    ``[1 - lambda (u0 + dt/2)] / (1 + w_cp/dt)`` with ``lambda = n_gpus x rate_per_gpu_day /
    MINUTES_PER_DAY`` failures per minute (the paper's ``N_nodes r_f`` per node-day is the
    same number per day: the GPUs per node cancel). restart_overhead (u0), interval (dt) and
    write_cost (w_cp) are in minutes. n_gpus may be fractional (sweeps, root finding).
    The numerator is clipped at 0: when ``lambda (u0 + dt/2) >= 1`` the job makes no progress
    in this first-order model.
    """
    n = check_positive("n_gpus", n_gpus)
    rate = check_positive("rate_per_gpu_day", rate_per_gpu_day)
    u0 = check_non_negative("restart_overhead", restart_overhead)
    dt = check_positive("interval", interval)
    w = check_non_negative("write_cost", write_cost)
    lam = 1.0 / failures.mtbf_min(n * rate)  # failures per minute
    return max(0.0, 1.0 - lam * (u0 + dt / 2.0)) / (1.0 + w / dt)


@dataclass(frozen=True)
class KokolisProjection:
    """The inputs and printed results of Kokolis et al.'s ETTR and MTTF projections (data/)."""

    n_gpus: float
    gpus_per_node: float
    rf_per_node_day: float
    restart_overhead_min: float
    write_cost_min: float
    interval_hourly_min: float
    ettr_hourly: float
    interval_short_min: float
    ettr_short: float
    mttf_hours: float
    large_n_gpus: float
    large_mttf_hours: float

    @property
    def rate_per_gpu_day(self) -> float:
        """r_f / GPUs per node: the paper's per-node-day rate in failures per GPU-day."""
        return self.rf_per_node_day / self.gpus_per_node

    def ettr(self, interval_min: float) -> float:
        """:func:`ettr` at the paper's inputs and the given interval."""
        return ettr(self.n_gpus, self.rate_per_gpu_day, self.restart_overhead_min, interval_min, self.write_cost_min)

    def mttf_hours_at(self, n_gpus: float) -> float:
        """Job MTTF in hours at the paper's rate (:func:`course_lib.failures.mtbf_min`; n_gpus may be fractional)."""
        return failures.mtbf_min(check_positive("n_gpus", n_gpus) * self.rate_per_gpu_day) / 60.0


def kokolis_projection(data_dir=None) -> KokolisProjection:
    """Kokolis et al.'s projection inputs from data/floor_inputs.csv (times in minutes)."""
    f = floor_inputs(data_dir)
    return KokolisProjection(
        n_gpus=f["kokolis_projection_gpus"].value,
        gpus_per_node=f["kokolis_gpus_per_node"].value,
        rf_per_node_day=f["kokolis_rf"].value / 1000.0,  # published per 1,000 node-days
        restart_overhead_min=f["kokolis_u0"].minutes,
        write_cost_min=f["kokolis_wcp"].minutes,
        interval_hourly_min=f["kokolis_dt_hourly"].minutes,
        ettr_hourly=f["kokolis_ettr_hourly"].value,
        interval_short_min=f["kokolis_dt_short"].minutes,
        ettr_short=f["kokolis_ettr_short"].value,
        mttf_hours=f["kokolis_mttf_16k"].value,
        large_n_gpus=f["kokolis_large_gpus"].value,
        large_mttf_hours=f["kokolis_mttf_131k"].value,
    )


# --------------------------------------------------------------------------------------
# Fewer failures: levers on the rate
# --------------------------------------------------------------------------------------
def table5_share(components: Iterable[str], data_dir=None) -> float:
    """Share of Llama 3's 419 unexpected interruptions caused by ``components`` (from the counts).

    Component names as in data/llama3_table5.csv (e.g. "Faulty GPU", "GPU HBM3 Memory").
    """
    from .data import llama3_table5

    table = llama3_table5(data_dir)
    counts = dict(zip(table["component"], (int(c) for c in table["count"])))
    chosen = list(components)
    unknown = [c for c in chosen if c not in counts]
    if unknown or not chosen:
        raise ValueError(f"components must be names from Table 5, one or more of {list(counts)} (got {chosen!r})")
    return sum(counts[c] for c in set(chosen)) / sum(counts.values())


def rate_without_causes(rate_per_gpu_day: float, components: Iterable[str], data_dir=None) -> float:
    """The per-GPU rate once ``components`` never fail: rate x (1 - their Table 5 share)."""
    rate = check_positive("rate_per_gpu_day", rate_per_gpu_day)
    return rate * (1.0 - table5_share(components, data_dir))


def lemon_node_factor(data_dir=None) -> float:
    """Factor on the failure rate from lemon-node removal (Kokolis et al.; notebook 08).

    The paper reports the share of large jobs (512+ GPUs) that failed: 14 % before, 4 % after.
    For Poisson failures over the same job lengths ``p = 1 - exp(-lambda t)``, so the rate
    scales as ``ln(1 - p_after) / ln(1 - p_before)`` (0.27; the naive ratio 4/14 is 0.29).
    """
    f = floor_inputs(data_dir)
    before = check_open_unit("lemon_job_failure_before", f["lemon_job_failure_before"].value / 100.0)
    after = check_open_unit("lemon_job_failure_after", f["lemon_job_failure_after"].value / 100.0)
    return math.log1p(-after) / math.log1p(-before)


def fewer_failures(budget: RestartBudget, factor: float) -> RestartBudget:
    """The budget with ``factor`` x its failures per day (0 < factor <= 1).

    With a write cost the interval is re-optimised for the longer MTBF (fewer failures make a
    longer interval worth it); without one the stages are kept.
    """
    f = check_positive("factor", factor)
    if f > 1:
        raise ValueError(f"factor must be a finite number in (0, 1] (got {factor!r})")
    out = budget.with_failures_per_day(budget.failures_per_day * f)
    if out.write_cost_min > 0:
        out = checkpoint_at_optimum(out, out.write_cost_min)
    return out


@dataclass(frozen=True)
class RateLever:
    """A lever on the failure rate: ``factor`` x failures per day, with its evidence.

    Same call interface as :class:`course_lib.restart.Lever` (``lever(budget)``,
    ``lever.saving(budget)``), with ``stage = "rate"``.
    """

    name: str
    factor: float
    description: str
    source: str
    stage: str = "rate"

    def __post_init__(self):
        f = check_positive("factor", self.factor)
        if f > 1:
            raise ValueError(f"factor must be a finite number in (0, 1] (got {self.factor!r})")

    def __call__(self, budget: RestartBudget) -> RestartBudget:
        return fewer_failures(budget, self.factor)

    def saving(self, budget: RestartBudget) -> float:
        """Minutes per day saved when applied to ``budget``."""
        return budget.minutes_per_day - self(budget).minutes_per_day


#: The two largest causes of Llama 3's Table 5 (by count): the "fix the GPUs" lever.
TOP_TABLE5_CAUSES = ("Faulty GPU", "GPU HBM3 Memory")


def rate_levers(data_dir=None) -> list[RateLever]:
    """Fewer failures, sourced: lemon-node removal, and no faulty-GPU or HBM3 failures.

    They are alternatives, not a chain: lemon nodes are largely made of the same bad GPUs, so
    the factors must not be multiplied together.
    """
    from .data import llama3_table5

    lemon = lemon_node_factor(data_dir)
    f = floor_inputs(data_dir)
    share = table5_share(TOP_TABLE5_CAUSES, data_dir)
    return [
        RateLever(
            "lemon-node removal", lemon,
            f"illustrative: one research cluster's large jobs that fail, {f['lemon_job_failure_before'].value:g} % -> "
            f"{f['lemon_job_failure_after'].value:g} %, read as a rate factor x {lemon:.2f} (another fleet may gain anything from "
            f"that to nothing)",
            f["lemon_job_failure_before"].source,
        ),
        RateLever(
            "no faulty GPU / HBM3", 1.0 - share,
            f"a bound, not a lever: if {' and '.join(TOP_TABLE5_CAUSES)} never failed ({share:.1%} of Table 5's interruptions), "
            f"rate x {1 - share:.2f}",
            llama3_table5(data_dir).meta["source"],
        ),
    ]


# --------------------------------------------------------------------------------------
# Checkpoint regimes at scale
# --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CheckpointRegime:
    """How a job checkpoints, for ETTR against fleet size (notebook 08).

    name: label.
    restart_overhead_min: u0 (minutes per failure, detection included).
    write_cost_min: fixed blocking minutes per checkpoint, or
    write_bandwidth_gb_s with state_bytes: the blocking cost is the shard
        ``state_bytes / n_gpus`` copied at that bandwidth.
    interval_min: a fixed interval (e.g. hourly), or None for the first-order optimum
        ``max(sqrt(2 delta M), min_interval_min)``.
    min_interval_min: lower bound on the optimised interval (a save must finish first).
    """

    name: str
    restart_overhead_min: float
    write_cost_min: float = 0.0
    write_bandwidth_gb_s: float | None = None
    state_bytes: float = 0.0
    interval_min: float | None = None
    min_interval_min: float = 0.0

    def __post_init__(self):
        check_non_negative("restart_overhead_min", self.restart_overhead_min)
        check_non_negative("write_cost_min", self.write_cost_min)
        check_non_negative("min_interval_min", self.min_interval_min)
        if self.write_bandwidth_gb_s is not None:
            check_positive("write_bandwidth_gb_s", self.write_bandwidth_gb_s)
            check_positive("state_bytes", self.state_bytes)
        if self.interval_min is not None:
            check_positive("interval_min", self.interval_min)

    def write_cost(self, n_gpus: float) -> float:
        """Blocking minutes per checkpoint at this fleet size (the shard over the bandwidth)."""
        n = check_positive("n_gpus", n_gpus)
        if self.write_bandwidth_gb_s is None:
            return self.write_cost_min
        return sizing.copy_min(self.state_bytes / n, self.write_bandwidth_gb_s)

    def interval(self, n_gpus: float, rate_per_gpu_day: float) -> float:
        """The checkpoint interval at this fleet size (minutes): fixed, or Young's optimum
        bounded below by ``min_interval_min`` and by the write itself."""
        if self.interval_min is not None:
            return self.interval_min
        mtbf = failures.mtbf_min(check_positive("n_gpus", n_gpus) * check_positive("rate_per_gpu_day", rate_per_gpu_day))
        delta = self.write_cost(n_gpus)
        young = iv.young_interval(delta, mtbf) if delta > 0 else 0.0
        return max(young, self.min_interval_min, delta)

    def ettr(self, n_gpus: float, rate_per_gpu_day: float) -> float:
        """:func:`ettr` of this regime."""
        return ettr(n_gpus, rate_per_gpu_day, self.restart_overhead_min,
                    self.interval(n_gpus, rate_per_gpu_day), self.write_cost(n_gpus))

    def with_restart_overhead(self, minutes: float, name: str | None = None) -> "CheckpointRegime":
        """A copy with another u0 (e.g. the after-levers D + R)."""
        return dataclasses.replace(self, restart_overhead_min=minutes, name=name or self.name)


def default_regimes(scenario: Scenario | None = None, restart_overhead_min: float | None = None,
                    data_dir=None) -> list[CheckpointRegime]:
    """Three ways to checkpoint, sourced (notebook 08):

    - hourly blocking checkpoints to a parallel file system (Kokolis et al.: hourly is
      typical, w_cp about 5 min; data/write_costs.csv ``pfs_sync``);
    - asynchronous writes (ByteCheckpoint, 405B on 8,960 GPUs: blocking 0.59 s; the next save
      cannot start before the 51 s save ends) at the optimal interval;
    - in-memory snapshots of the shard to pinned host memory (55 GB/s, this course's
      measurement) at the optimal interval.

    scenario: the model state and the snapshot bandwidth (default: the course's Scenario).
    restart_overhead_min: u0 for all three; default Kokolis et al.'s 5 minutes.
    """
    scenario = Scenario() if scenario is None else scenario
    f = floor_inputs(data_dir)
    u0 = f["kokolis_u0"].minutes if restart_overhead_min is None else check_non_negative("restart_overhead_min", restart_overhead_min)
    blocking = sourced("write_costs.csv", "regime", data_dir, value="blocking_s")
    state = scenario.model_params * scenario.checkpoint_bytes_per_param
    return [
        CheckpointRegime("hourly, blocking", u0, write_cost_min=blocking["pfs_sync"].minutes,
                         interval_min=f["kokolis_dt_hourly"].minutes),
        CheckpointRegime("async writes", u0, write_cost_min=blocking["bytecheckpoint_405b"].minutes,
                         min_interval_min=f["bytecheckpoint_save"].minutes),
        CheckpointRegime("in-memory snapshots", u0, write_bandwidth_gb_s=scenario.snapshot_gb_per_s, state_bytes=state),
    ]


def fleet_size_at_ettr(regime: CheckpointRegime, rate_per_gpu_day: float, target: float = 0.9,
                       lo: float = 8.0, hi: float = float(2**20)) -> float | None:
    """The fleet size (GPUs) where ``regime``'s ETTR falls to ``target``; None if not in [lo, hi].

    Returns ``lo`` when the regime is already below target at ``lo`` (ETTR falls with size).
    """
    t = check_open_unit("target", target)
    rate = check_positive("rate_per_gpu_day", rate_per_gpu_day)
    lo = check_positive("lo", lo)
    hi = check_positive("hi", hi)
    if hi <= lo:
        raise ValueError(f"hi must be > lo (got lo={lo!r}, hi={hi!r})")
    g = lambda n: regime.ettr(n, rate) - t  # noqa: E731
    if g(lo) <= 0:
        return lo
    if g(hi) > 0:
        return None
    return float(brentq(g, lo, hi, xtol=1e-6, rtol=1e-10))

