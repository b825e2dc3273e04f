"""Anatomy of a restart: the four stages of one failure, the daily budget, and the levers.

Notebook 03 explains this module (notebook 08 reuses it for the floor). Every unplanned
restart costs, in order, **detection** (the job notices), **rescheduling** (tear down,
replace the node, restart processes, rebuild communicators), **reload** (read the last
checkpoint back) and **rewound work** (the steps since that checkpoint, on average half
the checkpoint interval). A :class:`RestartBudget` multiplies one restart by the failures
per day; a *lever* is a named function that takes a budget and returns a new one with one
stage made cheaper, carrying the source of its number.

Units: **every time in this module is in minutes** (fields, arguments, results), except
where a name says otherwise (``*_per_day`` is minutes per day). The numbers of the
outside world come from ``data/restart_stages.csv`` and ``data/levers.csv`` (sources per
row), never from literals here.

The first-order waste model
---------------------------
With failures at rate ``lambda`` per day, a restart cost ``R = detect + reschedule +
reload``, a checkpoint interval ``tau`` (mean rewind ``tau / 2``) and a blocking write
cost ``delta`` per checkpoint, the minutes lost per day are::

    lambda * (R + tau / 2)           restarts (the question's 2 %: two restarts x 15 min)
  + delta * MINUTES_PER_DAY / tau    checkpoint writes (reported separately as "write")

and the fraction of the day equals ``course_lib.interval.waste_fraction(tau, delta, M, R)``
with ``M = MINUTES_PER_DAY / lambda``. The question's 2 % counts restarts only, so the
baseline budget has ``write_cost_min = 0``; a shorter interval is only worth what it
saves in rewind minus what it adds in writes, and :func:`shorter_interval` makes that
write term explicit.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from functools import partial
from typing import Callable, Iterable, Sequence

from ._validate import check_choice, check_int_positive, check_non_negative, check_positive
from .scenario import MINUTES_PER_DAY, Scenario

__all__ = [
    "STAGES",
    "RestartStages",
    "RestartBudget",
    "SourcedValue",
    "stage_sources",
    "lever_inputs",
    "baseline_stages",
    "baseline_budget",
    "shard_gb",
    "memory_copy_min",
    "young_interval_min",
    "Lever",
    "heartbeat_detection",
    "hot_spare_restart",
    "reload_from_memory",
    "shorter_interval",
    "default_levers",
    "apply_levers",
    "order_by_saving",
    "WaterfallStep",
    "waterfall",
]

#: The four stages of one restart, in the order they happen.
STAGES = ("detect", "reschedule", "reload", "rewind")

_MINUTES_PER_UNIT = {"ms": 1.0 / 60_000.0, "s": 1.0 / 60.0, "min": 1.0, "h": 60.0}


def _to_minutes(value: float, unit: str) -> float:
    check_choice("unit", unit, _MINUTES_PER_UNIT)
    return float(value) * _MINUTES_PER_UNIT[unit]


# --------------------------------------------------------------------------------------
# One restart and one day
# --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RestartStages:
    """Minutes one restart costs, stage by stage (all four fields in **minutes**, >= 0).

    detect: from the failure until the job knows it failed.
    reschedule: teardown, node replacement, process start, communicator re-initialisation.
    reload: reading the last checkpoint back into GPU memory.
    rewind: work since that checkpoint, recomputed (on average half the interval).
    """

    detect: float
    reschedule: float
    reload: float
    rewind: float

    def __post_init__(self):
        for name in STAGES:
            object.__setattr__(self, name, check_non_negative(name, getattr(self, name)))

    @property
    def total(self) -> float:
        """Minutes per restart, all four stages."""
        return self.detect + self.reschedule + self.reload + self.rewind

    @property
    def restart_cost(self) -> float:
        """detect + reschedule + reload: the ``R`` of the interval model (minutes)."""
        return self.detect + self.reschedule + self.reload

    def as_dict(self) -> dict[str, float]:
        """{stage: minutes} in the order of :data:`STAGES`."""
        return {name: getattr(self, name) for name in STAGES}

    def replace(self, **changes) -> "RestartStages":
        """A copy with some stages changed (validated)."""
        unknown = set(changes) - set(STAGES)
        if unknown:
            raise ValueError(f"stage must be one of {list(STAGES)} (got {sorted(unknown)})")
        return dataclasses.replace(self, **changes)


@dataclass(frozen=True)
class RestartBudget:
    """The minutes a job loses per day: failures per day x one restart, plus checkpoint writes.

    failures_per_day: unplanned restarts per day (> 0).
    stages: :class:`RestartStages` of one restart (minutes).
    write_cost_min: blocking minutes per checkpoint write (>= 0; 0 in the baseline, because
        the question's 2 % counts restarts only). The checkpoint interval is
        ``2 * stages.rewind`` (the mean rewind is half the interval), so the write term is
        ``write_cost_min * MINUTES_PER_DAY / interval_min`` minutes per day.
    """

    failures_per_day: float
    stages: RestartStages
    write_cost_min: float = 0.0

    def __post_init__(self):
        object.__setattr__(self, "failures_per_day", check_positive("failures_per_day", self.failures_per_day))
        if not isinstance(self.stages, RestartStages):
            raise ValueError(f"stages must be a RestartStages (got {type(self.stages).__name__})")
        object.__setattr__(self, "write_cost_min", check_non_negative("write_cost_min", self.write_cost_min))
        if self.write_cost_min > 0 and self.stages.rewind == 0:
            raise ValueError(
                "write_cost_min must be 0 when stages.rewind is 0 (a zero rewind means a zero "
                "checkpoint interval, which would write continuously)"
            )

    # ----- the model -----
    @property
    def interval_min(self) -> float:
        """Checkpoint interval implied by the mean rewind: 2 x rewind (minutes)."""
        return 2.0 * self.stages.rewind

    @property
    def mtbf_min(self) -> float:
        """Job MTBF: MINUTES_PER_DAY / failures_per_day (minutes)."""
        return MINUTES_PER_DAY / self.failures_per_day

    @property
    def restart_minutes_per_day(self) -> float:
        """failures/day x minutes per restart (the question's 30 min/day)."""
        return self.failures_per_day * self.stages.total

    @property
    def write_minutes_per_day(self) -> float:
        """Blocking checkpoint writes: write_cost_min x MINUTES_PER_DAY / interval_min."""
        if self.write_cost_min == 0.0:
            return 0.0
        return self.write_cost_min * MINUTES_PER_DAY / self.interval_min

    @property
    def minutes_per_day(self) -> float:
        """Total minutes lost per day: restarts plus checkpoint writes."""
        return self.restart_minutes_per_day + self.write_minutes_per_day

    @property
    def fraction_of_day(self) -> float:
        """minutes_per_day / MINUTES_PER_DAY (the question's 2.08 %, as a fraction)."""
        return self.minutes_per_day / MINUTES_PER_DAY

    def breakdown(self) -> dict[str, float]:
        """Minutes per day by stage, plus ``write``; the values sum to :attr:`minutes_per_day`."""
        out = {name: self.failures_per_day * minutes for name, minutes in self.stages.as_dict().items()}
        out["write"] = self.write_minutes_per_day
        return out

    # ----- copies -----
    def with_stages(self, **changes) -> "RestartBudget":
        """A copy with some stages changed, e.g. ``budget.with_stages(detect=0.1)``."""
        return dataclasses.replace(self, stages=self.stages.replace(**changes))

    def with_failures_per_day(self, failures_per_day: float) -> "RestartBudget":
        """A copy with another failure rate (stages and write cost unchanged)."""
        return dataclasses.replace(self, failures_per_day=failures_per_day)

    def with_write_cost(self, write_cost_min: float) -> "RestartBudget":
        """A copy with another blocking write cost per checkpoint (minutes)."""
        return dataclasses.replace(self, write_cost_min=write_cost_min)


# --------------------------------------------------------------------------------------
# Sourced numbers (data/)
# --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SourcedValue:
    """One number from data/: value in ``unit``, what it means (basis), where it comes from."""

    key: str
    value: float
    unit: str
    basis: str
    source: str
    label: str

    @property
    def minutes(self) -> float:
        """The value converted to minutes (only for time units: ms, s, min, h)."""
        return _to_minutes(self.value, self.unit)


def stage_sources(data_dir=None) -> dict[str, SourcedValue]:
    """The sourced stage durations of ``data/restart_stages.csv`` (detect, reload), by stage."""
    from .data import load_table

    table = load_table("restart_stages.csv", data_dir)
    return {
        r["stage"]: SourcedValue(r["stage"], float(r["value"]), r["unit"], r["basis"], r["source"], r["label"])
        for r in table.rows
    }


def lever_inputs(data_dir=None) -> dict[str, SourcedValue]:
    """The sourced inputs of the levers, ``data/levers.csv``, by key."""
    from .data import load_table

    table = load_table("levers.csv", data_dir)
    return {
        r["key"]: SourcedValue(r["key"], float(r["value"]), r["unit"], r["basis"], r["source"], r["label"])
        for r in table.rows
    }


def baseline_stages(scenario: Scenario | None = None, data_dir=None) -> RestartStages:
    """The question's 15 minutes split into four stages (notebook 03).

    detect and reload come from data/restart_stages.csv; rewind is half the scenario's
    checkpoint interval; reschedule is the remainder, so the four sum to
    ``scenario.minutes_per_restart``. Raises ValueError when the sourced stages and the
    rewind already exceed the minutes per restart.
    """
    scenario = Scenario() if scenario is None else scenario
    src = stage_sources(data_dir)
    detect = src["detect"].minutes
    reload = src["reload"].minutes
    rewind = scenario.mean_rewind_min
    reschedule = scenario.minutes_per_restart - detect - reload - rewind
    if reschedule < 0:
        raise ValueError(
            f"minutes_per_restart must be >= detect + reload + rewind = {detect:g} + {reload:g} + {rewind:g} "
            f"= {detect + reload + rewind:g} min (got {scenario.minutes_per_restart!r}); shorten "
            "checkpoint_interval_min or lengthen minutes_per_restart"
        )
    return RestartStages(detect=detect, reschedule=reschedule, reload=reload, rewind=rewind)


def baseline_budget(scenario: Scenario | None = None, data_dir=None) -> RestartBudget:
    """The question's daily budget: ``scenario.restarts_per_day`` x :func:`baseline_stages`.

    With the default Scenario this is 30 min/day, 2.08 % of the day (write cost 0: the
    question counts restarts only).
    """
    scenario = Scenario() if scenario is None else scenario
    return RestartBudget(failures_per_day=scenario.restarts_per_day, stages=baseline_stages(scenario, data_dir))


def shard_gb(n_gpus: int, data_dir=None) -> float:
    """Training state per GPU in GB (1e9 bytes): parameters x bytes/parameter / n_gpus.

    With the course's example (405B parameters, 16 B/parameter, data/levers.csv) and
    4,096 GPUs this is 1.6 GB (facts.md section 7).
    """
    n = check_int_positive("n_gpus", n_gpus)
    inp = lever_inputs(data_dir)
    return inp["model_params"].value * inp["state_bytes_per_param"].value / n / 1e9


def memory_copy_min(n_gpus: int, direction: str = "host_to_gpu_pinned", data_dir=None) -> float:
    """Minutes to copy one GPU's shard over a measured host<->GPU path (data/levers.csv).

    direction: ``"host_to_gpu_pinned"`` (a reload from host memory) or
    ``"gpu_to_host_pinned"`` (an in-memory snapshot, the blocking write cost).
    """
    check_choice("direction", direction, ("host_to_gpu_pinned", "gpu_to_host_pinned"))
    bandwidth = lever_inputs(data_dir)[direction]
    if bandwidth.unit != "GB/s":
        raise ValueError(f"{direction} must be in GB/s in data/levers.csv (got {bandwidth.unit!r})")
    return shard_gb(n_gpus, data_dir) / bandwidth.value / 60.0


def young_interval_min(write_cost_min: float, mtbf_min: float) -> float:
    """Young's first-order optimum sqrt(2 delta M) in minutes (notebook 04 derives it).

    The same formula as ``course_lib.interval.young_interval``; kept here so that this
    module stays independent of it (a test checks that the two agree).
    """
    delta = check_positive("write_cost_min", write_cost_min)
    m = check_positive("mtbf_min", mtbf_min)
    return math.sqrt(2.0 * delta * m)


# --------------------------------------------------------------------------------------
# Levers: named budget -> budget functions
# --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Lever:
    """A named transformation of a budget that attacks one stage.

    name: short label (the waterfall's bar label).
    stage: the stage it attacks (one of :data:`STAGES`).
    description: what changes, with its number.
    source: where the number comes from (a citation string).
    function: ``RestartBudget -> RestartBudget``.
    """

    name: str
    stage: str
    description: str
    source: str
    function: Callable[[RestartBudget], RestartBudget] = dataclasses.field(compare=False)

    def __post_init__(self):
        check_choice("stage", self.stage, STAGES)
        if not callable(self.function):
            raise ValueError(f"function must be callable (got {self.function!r})")

    def __call__(self, budget: RestartBudget) -> RestartBudget:
        return self.function(budget)

    def saving(self, budget: RestartBudget) -> float:
        """Minutes per day this lever saves when applied to ``budget``."""
        return budget.minutes_per_day - self(budget).minutes_per_day



def heartbeat_detection(budget: RestartBudget, detect_min: float | None = None) -> RestartBudget:
    """Detect failures with a per-rank heartbeat/health check instead of a slow timeout.

    detect_min: minutes from failure to detection; default one check period of the NVIDIA
    Resiliency Extension's rank monitor (5 s, data/levers.csv). Never lengthens detection:
    the result is ``min(current, detect_min)``. Attacks ``detect`` only.
    """
    if detect_min is None:
        detect_min = lever_inputs()["heartbeat_check_interval"].minutes
    detect_min = check_non_negative("detect_min", detect_min)
    return budget.with_stages(detect=min(budget.stages.detect, detect_min))


def hot_spare_restart(budget: RestartBudget, reschedule_min: float | None = None) -> RestartBudget:
    """Restart in-job on a hot spare node instead of re-queueing the job through the scheduler.

    reschedule_min: minutes of teardown + re-initialisation; default MegaScale's job
    initialisation bound at > 10k GPUs (30 s, data/levers.csv). Never lengthens the stage:
    ``min(current, reschedule_min)``. Attacks ``reschedule`` only.
    """
    if reschedule_min is None:
        reschedule_min = lever_inputs()["hot_spare_init"].minutes
    reschedule_min = check_non_negative("reschedule_min", reschedule_min)
    return budget.with_stages(reschedule=min(budget.stages.reschedule, reschedule_min))


def reload_from_memory(budget: RestartBudget, reload_min: float | None = None) -> RestartBudget:
    """Reload the checkpoint from host (or peer) memory instead of the parallel file system.

    reload_min: minutes to load one GPU's shard; default :func:`memory_copy_min` for the
    baseline Scenario's GPU count (1.6 GB at 55 GB/s pinned, about 30 ms; pass
    ``memory_copy_min(scenario.n_gpus)`` for another fleet). GEMINI (SOSP 2023) keeps
    checkpoints in local and remote host memory for this. ``min(current, reload_min)``;
    attacks ``reload`` only.
    """
    if reload_min is None:
        reload_min = memory_copy_min(Scenario().n_gpus, "host_to_gpu_pinned")
    reload_min = check_non_negative("reload_min", reload_min)
    return budget.with_stages(reload=min(budget.stages.reload, reload_min))


def shorter_interval(
    budget: RestartBudget, interval_min: float | None = None, write_cost_min: float | None = None
) -> RestartBudget:
    """Checkpoint more often: the mean rewind becomes ``interval_min / 2``.

    write_cost_min: blocking minutes per checkpoint write; None keeps the budget's. The
    write term ``write_cost_min * MINUTES_PER_DAY / interval_min`` is reported separately
    in ``breakdown()["write"]`` and counted in ``minutes_per_day``, so a shorter interval
    with an expensive write can *increase* the loss (notebooks 04-06).
    interval_min: minutes between checkpoints; None takes Young's optimum
    ``sqrt(2 * write_cost_min * mtbf_min)`` (needs write_cost_min > 0). Never lengthens
    the interval: the rewind becomes ``min(current, interval_min / 2)``. Attacks
    ``rewind`` (and sets the write cost).
    """
    delta = budget.write_cost_min if write_cost_min is None else check_non_negative("write_cost_min", write_cost_min)
    if interval_min is None:
        if delta == 0:
            raise ValueError("write_cost_min must be > 0 when interval_min is None (Young's optimum needs a write cost)")
        interval_min = young_interval_min(delta, budget.mtbf_min)
    interval_min = check_positive("interval_min", interval_min)
    rewind = min(budget.stages.rewind, interval_min / 2.0)
    if rewind == 0 and delta > 0:
        raise ValueError("interval_min cannot apply: the budget's rewind is already 0, so no write cost can be paid")
    return dataclasses.replace(budget, stages=budget.stages.replace(rewind=rewind), write_cost_min=delta)


def default_levers(scenario: Scenario | None = None, data_dir=None) -> list[Lever]:
    """The four levers of notebook 03 with their sourced numbers, in stage order.

    The memory numbers depend on the fleet: the shard per GPU is parameters x 16 B /
    ``scenario.n_gpus``. The shorter interval uses an in-memory snapshot (GPU -> pinned
    host) as its write cost and Young's optimum for the interval.
    """
    scenario = Scenario() if scenario is None else scenario
    inp = lever_inputs(data_dir)
    detect = inp["heartbeat_check_interval"].minutes
    resched = inp["hot_spare_init"].minutes
    reload = memory_copy_min(scenario.n_gpus, "host_to_gpu_pinned", data_dir)
    snapshot = memory_copy_min(scenario.n_gpus, "gpu_to_host_pinned", data_dir)
    shard = shard_gb(scenario.n_gpus, data_dir)
    mem_src = "; ".join(dict.fromkeys(inp[k].source for k in ("model_params", "state_bytes_per_param", "host_to_gpu_pinned")))
    return [
        Lever(
            "heartbeat detection", "detect",
            f"a rank monitor checks every {detect * 60:g} s instead of waiting for the next health check or collective timeout",
            inp["heartbeat_check_interval"].source,
            partial(heartbeat_detection, detect_min=detect),
        ),
        Lever(
            "hot-spare restart", "reschedule",
            f"in-job restart on a hot spare, re-initialised in {resched * 60:g} s, instead of a re-queue",
            inp["hot_spare_init"].source,
            partial(hot_spare_restart, reschedule_min=resched),
        ),
        Lever(
            "reload from memory", "reload",
            f"read the {shard:.2g} GB shard per GPU back from pinned host memory in {reload * 60_000:.0f} ms",
            mem_src,
            partial(reload_from_memory, reload_min=reload),
        ),
        Lever(
            "shorter interval", "rewind",
            f"in-memory snapshot ({snapshot * 60_000:.0f} ms blocking) at Young's optimum interval",
            inp["gpu_to_host_pinned"].source + "; Young, CACM 1974 (interval sqrt(2 delta M))",
            partial(shorter_interval, write_cost_min=snapshot),
        ),
    ]


def apply_levers(budget: RestartBudget, levers: Iterable[Callable[[RestartBudget], RestartBudget]]) -> list[RestartBudget]:
    """The budgets after each lever in turn: ``[budget, after 1st, after 1st+2nd, ...]``."""
    budgets = [budget]
    for lever in levers:
        budgets.append(lever(budgets[-1]))
    return budgets


def order_by_saving(budget: RestartBudget, levers: Sequence[Lever]) -> list[Lever]:
    """Greedy "largest first": repeatedly pick the lever that saves most from the current budget.

    Ties keep the input order. Returns the levers in the order they should be applied.
    """
    remaining = list(levers)
    ordered = []
    current = budget
    while remaining:
        savings = [lever.saving(current) for lever in remaining]
        best = max(range(len(remaining)), key=lambda i: (savings[i], -i))
        lever = remaining.pop(best)
        ordered.append(lever)
        current = lever(current)
    return ordered


@dataclass(frozen=True)
class WaterfallStep:
    """One bar of the waterfall: a lever, the budget before and after, minutes/day saved."""

    lever: Lever
    before: RestartBudget
    after: RestartBudget

    @property
    def saved_minutes_per_day(self) -> float:
        return self.before.minutes_per_day - self.after.minutes_per_day

    @property
    def saved_fraction_of_day(self) -> float:
        return self.before.fraction_of_day - self.after.fraction_of_day


def waterfall(budget: RestartBudget, levers: Sequence[Lever], largest_first: bool = True) -> list[WaterfallStep]:
    """The steps of a waterfall chart from ``budget`` (notebook 03's figure, notebook 08's too).

    largest_first: order the levers with :func:`order_by_saving` (else keep the given order).
    """
    ordered = order_by_saving(budget, levers) if largest_first else list(levers)
    budgets = apply_levers(budget, ordered)
    return [WaterfallStep(lever, before, after) for lever, before, after in zip(ordered, budgets, budgets[1:])]
