"""What a hot spare costs: idle GPUs charged as lost capacity, and the elastic alternative (notebooks 08, 09).

A spare node beside a job is capacity that does not train: ``spare_gpus / job_gpus`` of the job's
GPU-time every day, unless it is pooled across jobs (or runs preemptible work), when it is charged
nothing here. The hot-spare lever is shown **net** of that cost. The alternative: continue
elastically on fewer GPUs, dropping the failed node's data-parallel replica (``replica_gpus``,
TP x PP GPUs in a 3D-parallel job) until it is repaired: that costs ``replica_gpus / job_gpus`` of
throughput for the repair time of each failure. The repair time has no source in the course, so
this module reports the **break-even repair time** below which elastic continuation is cheaper
than keeping a spare. Units: minutes per day.
"""
from __future__ import annotations

from ._validate import check_non_negative, check_positive
from .units import MINUTES_PER_DAY

__all__ = ["spare_cost_minutes_per_day", "net_saving_minutes_per_day", "elastic_cost_minutes_per_day",
           "break_even_repair_min"]


def spare_cost_minutes_per_day(spare_gpus, job_gpus, pooled: bool = False) -> float:
    """Job-minutes a day lost to idle spares: ``spare_gpus / job_gpus x MINUTES_PER_DAY`` (0 if pooled)."""
    s = check_non_negative("spare_gpus", spare_gpus)
    g = check_positive("job_gpus", job_gpus)
    return 0.0 if pooled else s / g * MINUTES_PER_DAY


def net_saving_minutes_per_day(saving_minutes_per_day, spare_gpus, job_gpus, pooled: bool = False) -> float:
    """A hot-spare lever's saving minus the spares' cost (negative: the spare costs more than it saves)."""
    return float(saving_minutes_per_day) - spare_cost_minutes_per_day(spare_gpus, job_gpus, pooled)


def elastic_cost_minutes_per_day(failures_per_day, replica_gpus, job_gpus, repair_min) -> float:
    """Throughput lost running without one replica until repair: ``lambda x replica/job x repair``."""
    lam = check_non_negative("failures_per_day", failures_per_day)
    r = check_positive("replica_gpus", replica_gpus)
    g = check_positive("job_gpus", job_gpus)
    if r > g:
        raise ValueError(f"replica_gpus must be <= job_gpus = {g:g} (got {replica_gpus!r})")
    return lam * r / g * check_non_negative("repair_min", repair_min)


def break_even_repair_min(failures_per_day, replica_gpus, spare_gpus) -> float:
    """Repair time (minutes) at which elastic continuation costs as much as an idle spare.

    ``spare x MINUTES_PER_DAY / (lambda x replica)``: one 8-GPU spare against 128-GPU replicas at
    2 failures a day is 45 min. Shorter repairs favour elastic continuation (same restart either way).
    """
    lam = check_positive("failures_per_day", failures_per_day)
    r = check_positive("replica_gpus", replica_gpus)
    return check_non_negative("spare_gpus", spare_gpus) * MINUTES_PER_DAY / (lam * r)
