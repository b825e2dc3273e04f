"""ETTR at scale: Kokolis et al.'s projection shown as theirs, and checkpoint regimes in the course's day model (notebook 08).

Kokolis et al. (HPCA 2025 [@kokolis2025]) project the expected effective training time ratio as::

    E[ETTR] ~ [1 - N_nodes r_f (u0 + dt / 2)] / (1 + w_cp / dt)

with ``r_f`` failures per node-day, ``u0`` the restart overhead, ``dt`` the checkpoint interval and
``w_cp`` the blocking write. :func:`kokolis_ettr` is that formula, in the course's units
(``N_nodes r_f`` is the job's failures per day, ``n_gpus x rate_per_gpu_day``: the GPUs per node
cancel), and it reproduces their printed 0.7 (hourly) and 0.93 (5-minute interval) at their inputs
(:func:`kokolis_projection`). It is theirs, shown and compared, never the course's model: the
course's ETTR is its day model (:mod:`course_lib.restart`), which for the same inputs is
``(1 - lambda (u0 + dt/2) / T) dt / (dt + w_cp)``, the same numerator and a slightly smaller write
term, and which never goes below zero or above one.

:class:`CheckpointRegime` is a way to checkpoint (hourly blocking writes, asynchronous writes,
in-memory snapshots) as a day of the course's model at any fleet size (:meth:`CheckpointRegime.budget`),
its interval chosen by the one bounded optimum (:func:`course_lib.interval.best_interval`);
:func:`fleet_size_at_ettr` finds where its ETTR falls to 90 %.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from scipy.optimize import brentq

from . import failures, sizing
from . import interval as iv
from ._validate import check_non_negative, check_open_unit, check_positive
from .restart import ModeCost, RestartBudget
from .scenario import Scenario

__all__ = ["kokolis_ettr", "KokolisProjection", "kokolis_projection", "CheckpointRegime", "default_regimes",
           "fleet_size_at_ettr"]


def kokolis_ettr(n_gpus, rate_per_gpu_day, restart_overhead, interval, write_cost) -> float:
    """Kokolis et al.'s expected ETTR, ``[1 - lambda (u0 + dt/2)] / (1 + w_cp/dt)``, in course units (theirs, not the course's model).

    ``lambda = n_gpus x rate_per_gpu_day`` failures per day, per minute here; restart_overhead (u0),
    interval (dt) and write_cost (w_cp) in minutes; n_gpus may be fractional. The numerator is clipped
    at 0 (the formula would go negative when failures come faster than ``u0 + dt/2``).
    """
    n = check_positive("n_gpus", n_gpus)
    rate = check_positive("rate_per_gpu_day", rate_per_gpu_day)
    u0 = check_non_negative("restart_overhead", restart_overhead)
    dt = check_positive("interval", interval)
    w = check_non_negative("write_cost", write_cost)
    lam = 1.0 / failures.mtbf_min(n * rate)
    return max(0.0, 1.0 - lam * (u0 + dt / 2.0)) / (1.0 + w / dt)


@dataclass(frozen=True)
class KokolisProjection:
    """The inputs and printed results of Kokolis et al.'s ETTR and MTTF projections (data/floor_inputs.csv)."""

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
        """:func:`kokolis_ettr` at the paper's inputs and the given interval (their formula)."""
        return kokolis_ettr(self.n_gpus, self.rate_per_gpu_day, self.restart_overhead_min, interval_min, self.write_cost_min)

    def course_ettr(self, interval_min: float) -> float:
        """The course's day model at the paper's inputs and the given interval (to compare with :meth:`ettr`)."""
        regime = CheckpointRegime("theirs", self.restart_overhead_min, write_cost_min=self.write_cost_min,
                                  interval_min=interval_min)
        return regime.ettr(self.n_gpus, self.rate_per_gpu_day)

    def mttf_hours_at(self, n_gpus: float) -> float:
        """Job MTTF in hours at the paper's rate (n_gpus may be fractional)."""
        return failures.mtbf_min(check_positive("n_gpus", n_gpus) * self.rate_per_gpu_day) / 60.0


def kokolis_projection(data_dir=None) -> KokolisProjection:
    """Kokolis et al.'s projection inputs from data/floor_inputs.csv (times in minutes)."""
    from .data import sourced

    f = sourced("floor_inputs.csv", "key", data_dir)
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


@dataclass(frozen=True)
class CheckpointRegime:
    """A way to checkpoint, as a day of the course's model at any fleet size (notebook 08).

    name: label.
    restart_overhead_min: u0, minutes per failure outside the rewind (detection included).
    write_cost_min: fixed blocking minutes per checkpoint, or
    write_bandwidth_gb_s with state_bytes: the blocking cost is the shard ``state_bytes / n_gpus``
        copied at that bandwidth.
    interval_min: a fixed interval (e.g. hourly), or None: the day model's optimum above ``min_interval_min``.
    min_interval_min: the bound on the optimised interval (a save must finish before the next starts).
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

    def budget(self, n_gpus: float, rate_per_gpu_day: float) -> RestartBudget:
        """This regime's day on ``n_gpus`` GPUs: one failure mode costing ``u0`` plus half the interval."""
        lam = check_positive("n_gpus", n_gpus) * check_positive("rate_per_gpu_day", rate_per_gpu_day)
        delta = self.write_cost(n_gpus)
        mode = (ModeCost("any", 1.0, 0.0, self.restart_overhead_min, 0.0),)
        if self.interval_min is not None:
            return RestartBudget(lam, mode, self.interval_min, delta)
        bound = max(self.min_interval_min, delta)
        tau = iv.best_interval(delta, failures.mtbf_min(lam), self.restart_overhead_min, 1.0, bound)
        return RestartBudget(lam, mode, tau, delta, interval_bound_min=bound)

    def interval(self, n_gpus: float, rate_per_gpu_day: float) -> float:
        """The checkpoint interval at this fleet size (minutes)."""
        return self.budget(n_gpus, rate_per_gpu_day).interval_min

    def ettr(self, n_gpus: float, rate_per_gpu_day: float) -> float:
        """The course's ETTR of this regime's day (:attr:`course_lib.restart.RestartBudget.ettr`)."""
        return self.budget(n_gpus, rate_per_gpu_day).ettr

    def with_restart_overhead(self, minutes: float, name: str | None = None) -> "CheckpointRegime":
        """A copy with another u0 (e.g. the after-levers D + R)."""
        return dataclasses.replace(self, restart_overhead_min=minutes, name=name or self.name)


def default_regimes(scenario: Scenario | None = None, restart_overhead_min: float | None = None,
                    data_dir=None) -> list[CheckpointRegime]:
    """Three ways to checkpoint, sourced (notebook 08):

    - hourly blocking checkpoints to a parallel file system (Kokolis et al.: hourly is typical, w_cp
      about 5 min; data/write_costs.csv ``pfs_sync``);
    - asynchronous writes (ByteCheckpoint, 405B on 8,960 GPUs: blocking 0.59 s; the next save cannot
      start before the 51 s save ends) at the optimal interval;
    - in-memory snapshots of the shard to pinned host memory (55 GB/s, this course's measurement).

    scenario: the model state and the snapshot bandwidth (default: the course's Scenario).
    restart_overhead_min: u0 for all three; default Kokolis et al.'s 5 minutes.
    """
    from .data import sourced

    scenario = Scenario() if scenario is None else scenario
    f = sourced("floor_inputs.csv", "key", data_dir)
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
