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
with ``M = MINUTES_PER_DAY / lambda``. The question's 2 % counts restarts only (the first
line); the baseline budget also counts today's synchronous write (the second), because the
after-levers day counts its writes: a shorter interval is only worth what it saves in rewind
minus what it adds in writes, and :func:`checkpoint_at_optimum` makes that write term explicit.

One day, one record
-------------------
:class:`RestartBudget` is the course's only encoding of a day's loss. The floor
``lambda (D + R)`` (notebook 08: what no checkpoint removes), the checkpoint terms (rewind +
writes), the first-order ETTR and the waterfall are properties or functions of it.
:func:`default_levers` is the one constructor of the four levers; it receives every number
from the :class:`~course_lib.scenario.Scenario` it is given.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import partial
from typing import Callable, Iterable, Sequence

from . import failures
from . import interval as iv
from ._validate import Validated, check_choice, check_non_negative, check_positive, checked
from .scenario import Scenario
from .units import MINUTES_PER_DAY

__all__ = [
    "STAGES",
    "RestartStages",
    "RestartBudget",
    "baseline_stages",
    "baseline_budget",
    "Lever",
    "heartbeat_detection",
    "hot_spare_restart",
    "reload_from_memory",
    "checkpoint_at_optimum",
    "snapshot_checkpoint",
    "default_levers",
    "apply_levers",
    "order_by_saving",
    "WaterfallStep",
    "waterfall",
]

#: The four stages of one restart, in the order they happen.
STAGES = ("detect", "reschedule", "reload", "rewind")


# --------------------------------------------------------------------------------------
# One restart and one day
# --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RestartStages(Validated):
    """Minutes one restart costs, stage by stage (all four fields in **minutes**, >= 0).

    detect: from the failure until the job knows it failed.
    reschedule: teardown, node replacement, process start, communicator re-initialisation.
    reload: reading the last checkpoint back into GPU memory.
    rewind: work since that checkpoint, recomputed (on average half the interval).
    """

    detect: float = checked(check_non_negative)
    reschedule: float = checked(check_non_negative)
    reload: float = checked(check_non_negative)
    rewind: float = checked(check_non_negative)

    @property
    def total(self) -> float:
        """Minutes per restart, all four stages."""
        return self.detect + self.reschedule + self.reload + self.rewind

    @property
    def restart_cost(self) -> float:
        """detect + reschedule + reload: the ``D + R`` of the floor (minutes)."""
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


def _stages(name, value):
    if not isinstance(value, RestartStages):
        raise ValueError(f"{name} must be a RestartStages (got {type(value).__name__})")
    return value


@dataclass(frozen=True)
class RestartBudget(Validated):
    """The minutes a job loses per day: failures per day x one restart, plus checkpoint writes.

    failures_per_day: unplanned restarts per day (> 0).
    stages: :class:`RestartStages` of one restart (minutes).
    write_cost_min: blocking minutes per checkpoint write (>= 0; the baseline has today's
        synchronous write, :func:`baseline_budget`). The checkpoint interval is
        ``2 * stages.rewind`` (the mean rewind is half the interval), so the write term is
        ``write_cost_min * MINUTES_PER_DAY / interval_min`` minutes per day.
    step_min: the training step (minutes, >= 0; 0: not modelled). A checkpoint cannot be taken
        more often than once per step, so ``stages.rewind >= step_min / 2`` and the floor
        includes half a step per failure (notebook 06, :mod:`course_lib.step`).
    latency_rewind_min: mean extra work per failure that no checkpoint can save (minutes,
        >= 0): the work done between a silent data corruption and its detection, which the job
        must rewind past (share-weighted over the failure modes, :mod:`course_lib.modes`).
    """

    failures_per_day: float = checked(check_positive)
    stages: RestartStages = checked(_stages)
    write_cost_min: float = checked(check_non_negative, default=0.0)
    step_min: float = checked(check_non_negative, default=0.0)
    latency_rewind_min: float = checked(check_non_negative, default=0.0)

    def _validate_fields(self) -> None:
        if self.write_cost_min > 0 and self.stages.rewind == 0:
            raise ValueError(
                "write_cost_min must be 0 when stages.rewind is 0 (a zero rewind means a zero "
                "checkpoint interval, which would write continuously)"
            )
        if self.stages.rewind < self.step_min / 2.0 - 1e-12:
            raise ValueError(
                f"stages.rewind must be >= step_min / 2 = {self.step_min / 2:g} min (got {self.stages.rewind:g}): "
                "a checkpoint cannot be taken more often than once per training step"
            )

    # ----- the model -----
    @property
    def interval_min(self) -> float:
        """Checkpoint interval implied by the mean rewind: 2 x rewind (minutes)."""
        return 2.0 * self.stages.rewind

    @property
    def mtbf_min(self) -> float:
        """Job MTBF (minutes), :func:`course_lib.failures.mtbf_min`."""
        return failures.mtbf_min(self.failures_per_day)

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
    def latency_minutes_per_day(self) -> float:
        """lambda x latency_rewind_min: work past a silent corruption, rewound (minutes per day)."""
        return self.failures_per_day * self.latency_rewind_min

    @property
    def minutes_per_day(self) -> float:
        """Total minutes lost per day (first order): restarts, corruption latency, checkpoint writes."""
        return self.restart_minutes_per_day + self.latency_minutes_per_day + self.write_minutes_per_day

    # ----- the complete model (valid at any scale; notebooks 08, 09) -----
    @property
    def per_failure_restart_min(self) -> float:
        """Minutes per failure outside the checkpoint interval: D + R + corruption latency."""
        return self.stages.restart_cost + self.latency_rewind_min

    @property
    def loss_fraction(self) -> float:
        """1 - ETTR of Daly's complete model (:func:`course_lib.interval.complete_loss_fraction`).

        The loss the course reports: never above 1, at any scale. To first order it equals
        :attr:`fraction_of_day` (within 1 % at the question's 2 %), which can exceed 1 when
        failures come faster than restarts finish.
        """
        return iv.complete_loss_fraction(self.interval_min, self.write_cost_min, self.mtbf_min, self.per_failure_restart_min)

    @property
    def ettr_complete(self) -> float:
        """ETTR of Daly's complete model: 1 - :attr:`loss_fraction`."""
        return 1.0 - self.loss_fraction

    @property
    def makes_progress(self) -> bool:
        """False when a restart does not fit between failures: D + R (+ latency) >= the MTBF."""
        return self.per_failure_restart_min < self.mtbf_min

    @property
    def progress_sentence(self) -> str:
        """One plain sentence on whether the job can make progress (the CLI prints it)."""
        if self.makes_progress:
            return f"The job makes progress: effective training time {self.ettr_complete:.2%} of the day (complete model)."
        stalled = " (in effect the job cannot make progress)" if self.ettr_complete < 0.01 else ""
        return (f"Failures come faster than the job restarts: a restart takes {self.per_failure_restart_min:.3g} min, longer "
                f"than the {self.mtbf_min:.3g} min between failures, so most restarts are cut short by the next failure; "
                f"the complete model puts its effective training time at {100 * self.ettr_complete:.2g} % of the day{stalled}.")

    @property
    def fraction_of_day(self) -> float:
        """minutes_per_day / MINUTES_PER_DAY (the question's 2.08 %, as a fraction)."""
        return self.minutes_per_day / MINUTES_PER_DAY

    @property
    def ettr(self) -> float:
        """First-order effective training time ratio: 1 - fraction_of_day (notebook 08)."""
        return 1.0 - self.fraction_of_day

    # ----- the floor (notebook 08) -----
    @property
    def floor_minutes_per_day(self) -> float:
        """lambda (D + R + T_iter / 2 + corruption latency): what no checkpoint lever removes.

        With ``step_min = latency_rewind_min = 0`` (the default) exactly lambda (D + R). Over failure
        modes it is sum_k lambda_k (D_k + R_k + T_iter / 2 + latency_k) (:mod:`course_lib.modes`).
        """
        return self.failures_per_day * (self.stages.restart_cost + self.step_min / 2.0 + self.latency_rewind_min)

    @property
    def floor_fraction(self) -> float:
        """The floor as a fraction of the day."""
        return self.floor_minutes_per_day / MINUTES_PER_DAY

    @property
    def rewind_minutes_per_day(self) -> float:
        """lambda tau / 2 (minutes per day)."""
        return self.failures_per_day * self.stages.rewind

    @property
    def checkpoint_minutes_per_day(self) -> float:
        """Rewind + writes: what checkpointing costs; sqrt(2 delta lambda T) at Young's optimum."""
        return self.rewind_minutes_per_day + self.write_minutes_per_day

    def breakdown(self) -> dict[str, float]:
        """Minutes per day by stage, plus ``write``; the values sum to :attr:`minutes_per_day`."""
        out = {name: self.failures_per_day * minutes for name, minutes in self.stages.as_dict().items()}
        if self.latency_rewind_min > 0:
            out["latency"] = self.latency_minutes_per_day
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


def baseline_stages(scenario: Scenario) -> RestartStages:
    """The scenario's minutes per restart split into four stages (notebook 03).

    detect and reload are the scenario's (sourced by default: data/restart_stages.csv);
    rewind is half its checkpoint interval; reschedule is given or the remainder, so that
    by default the four sum to ``scenario.minutes_per_restart``.
    """
    return RestartStages(detect=scenario.detect_min, reschedule=scenario.baseline_reschedule_min,
                         reload=scenario.reload_min, rewind=scenario.mean_rewind_min)


def baseline_budget(scenario: Scenario) -> RestartBudget:
    """The scenario's day: failures per day x :func:`baseline_stages`, plus today's blocking
    synchronous write (``scenario.write_before_min``) every checkpoint interval.

    The question's 2 % counts restarts only (:attr:`RestartBudget.restart_minutes_per_day`: with the
    course's Scenario 30 min/day, 2.08 %); the writes that make those restarts cheap are counted
    beside them (:attr:`RestartBudget.write_minutes_per_day`), because the after-levers day counts
    its writes too: levers are compared like with like (notebooks 03 and 04)."""
    return RestartBudget(failures_per_day=scenario.failures_per_day, stages=baseline_stages(scenario),
                         write_cost_min=scenario.write_before_min)


def checkpoint_at_optimum(budget: RestartBudget, write_cost_min: float, min_interval_min: float = 0.0) -> RestartBudget:
    """The budget checkpointing with blocking cost ``write_cost_min`` at its best interval.

    The interval becomes ``max(young_interval(delta, M), min_interval_min)`` (Young's optimum,
    :func:`course_lib.interval.young_interval`; the bound: a checkpoint cannot start before the
    previous copy has finished; and never below the budget's ``step_min``: at most one
    checkpoint per step), the rewind half of it. With no write cost and no bound the
    job checkpoints continuously: rewind 0. It may lengthen the interval as well as shorten it
    (the lever "in-memory checkpoint" of notebooks 03 and 08). Attacks ``rewind`` and sets the
    write cost.
    """
    delta = check_non_negative("write_cost_min", write_cost_min)
    bound = check_non_negative("min_interval_min", min_interval_min)
    tau = iv.young_interval(delta, budget.mtbf_min) if delta > 0 else 0.0
    tau = max(tau, bound, budget.step_min)
    return dataclasses.replace(budget, stages=budget.stages.replace(rewind=tau / 2.0), write_cost_min=delta)


# --------------------------------------------------------------------------------------
# Levers: named budget -> budget functions
# --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Lever:
    """A named transformation of a budget that attacks one stage.

    name: short label (the waterfall's bar label, the same in code, plots and prose).
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


def heartbeat_detection(budget: RestartBudget, detect_min: float) -> RestartBudget:
    """Detect failures with a per-rank monitor instead of a slow health check or timeout.

    detect_min: minutes from failure to detection. Never lengthens detection: the result is
    ``min(current, detect_min)``. Attacks ``detect`` only.
    """
    detect_min = check_non_negative("detect_min", detect_min)
    return budget.with_stages(detect=min(budget.stages.detect, detect_min))


def hot_spare_restart(budget: RestartBudget, reschedule_min: float) -> RestartBudget:
    """Restart in-job on a hot spare node instead of re-queueing the job through the scheduler.

    reschedule_min: minutes of teardown + re-initialisation. ``min(current, reschedule_min)``;
    attacks ``reschedule`` only.
    """
    reschedule_min = check_non_negative("reschedule_min", reschedule_min)
    return budget.with_stages(reschedule=min(budget.stages.reschedule, reschedule_min))


def reload_from_memory(budget: RestartBudget, reload_min: float) -> RestartBudget:
    """Reload the checkpoint from host (or peer) memory instead of the parallel file system.

    reload_min: minutes to load one GPU's shard (``Scenario.reload_from_memory_min``). GEMINI
    (SOSP 2023) keeps checkpoints in local and remote host memory for this.
    ``min(current, reload_min)``; attacks ``reload`` only.
    """
    reload_min = check_non_negative("reload_min", reload_min)
    return budget.with_stages(reload=min(budget.stages.reload, reload_min))


def snapshot_checkpoint(budget: RestartBudget, write_cost_min: float, min_interval_min: float, step_min: float,
                        latency_rewind_min: float, snapshot_share: float = 1.0) -> RestartBudget:
    """The in-memory checkpoint lever of the per-mode model (notebooks 06 and 08).

    Sets the step (``step_min``: the interval is at least one step) and the rewind that no
    snapshot saves (``latency_rewind_min``, :mod:`course_lib.modes`), then checkpoints at
    Young's optimum for the failures that restore from the snapshot (``snapshot_share`` of them:
    ``tau* = sqrt(2 delta M / share)``), bounded below by ``max(min_interval_min, step_min)``.
    """
    share = check_positive("snapshot_share", snapshot_share)
    delta = check_non_negative("write_cost_min", write_cost_min)
    step = check_non_negative("step_min", step_min)
    tau = iv.young_interval(delta, budget.mtbf_min / share) if delta > 0 else 0.0
    tau = max(tau, check_non_negative("min_interval_min", min_interval_min), step)
    return dataclasses.replace(budget, step_min=step, write_cost_min=delta if tau > 0 else 0.0,
                               latency_rewind_min=check_non_negative("latency_rewind_min", latency_rewind_min),
                               stages=budget.stages.replace(rewind=tau / 2.0))


def default_levers(scenario: Scenario, data_dir=None, modes=None) -> list[Lever]:
    """The four levers of notebooks 03 and 08, in stage order, with the scenario's numbers.

    Every number comes from ``scenario`` (its targets and its shard, so another fleet gets its
    own reload and snapshot times); only the citation strings are read from data/.
    modes: a :class:`course_lib.modes.ModeInputs` (None or True: its defaults; False: the
        single-stage levers, one detection and one restart for every failure): the targets become
    the share-weighted means over failure modes (a hang is seen only at its timeout, an SDC or a
    host loss without a peer copy reloads from storage), and the in-memory checkpoint is bounded
    below by the step, the snapshot and the persist copy, with the step and the rewind no
    snapshot saves carried into the day (its floor).
    """
    if modes is not False:
        return _modal_levers(scenario, data_dir, None if modes is None or modes is True else modes)
    from .data import sourced

    lev = sourced("levers.csv", "key", data_dir)
    ranges = sourced("restart_ranges.csv", "key", data_dir)
    wc = sourced("write_costs.csv", "regime", data_dir, value="bandwidth_gb_per_s")
    detect, resched = scenario.detect_after_min, scenario.reschedule_after_min
    reload, snapshot = scenario.reload_from_memory_min, scenario.snapshot_min
    shard_gb = scenario.shard_bytes / 1e9
    mem_src = "; ".join(dict.fromkeys((lev["model_params"].source, sourced("training_step.csv", "key", data_dir)["ckpt_bytes_per_param"].source, lev["host_to_gpu_pinned"].source)))
    return [
        Lever("heartbeat detection", "detect",
              f"a rank monitor checks every {60 * detect:.3g} s instead of waiting for the next health check or collective timeout",
              lev["heartbeat_check_interval"].source, partial(heartbeat_detection, detect_min=detect)),
        Lever("hot-spare restart", "reschedule",
              f"in-job restart on a hot spare, back to training in {60 * resched:.3g} s end to end, instead of a re-queue",
              ranges["flashrecovery_restore_4800"].source, partial(hot_spare_restart, reschedule_min=resched)),
        Lever("reload from memory", "reload",
              f"read the {shard_gb:.2g} GB shard per GPU back from pinned host memory in {60_000 * reload:.3g} ms",
              mem_src, partial(reload_from_memory, reload_min=reload)),
        Lever("in-memory checkpoint", "rewind",
              f"snapshot to pinned host memory ({60_000 * snapshot:.3g} ms blocking) at the optimal interval",
              wc["snapshot_pinned_host"].source + "; Young, CACM 1974 (interval sqrt(2 delta M))",
              partial(checkpoint_at_optimum, write_cost_min=snapshot)),
    ]


def _modal_levers(scenario: Scenario, data_dir, inputs) -> list[Lever]:
    from . import modes as md
    from . import step as st

    inp = md.ModeInputs() if inputs is None else inputs
    plain = default_levers(scenario, data_dir, modes=False)
    after = md.after_levers_stages(scenario, inp)
    step_min = inp.step_min(scenario)
    persist_min = scenario.write_before_min  # the copy that leaves the host (disk or peer) at the persist bandwidth
    bound = st.interval_lower_bound_min(step_min, scenario.snapshot_min, persist_min)
    timeout = inp.timeout_min(scenario)
    return [
        dataclasses.replace(plain[0], description=(
            f"crashes seen within half a {60 * inp.poll_min:.3g} s poll, hangs at a {60 * timeout:.3g} s timeout "
            f"({inp.safety_factor:g} x the longest gap); {inp.share('hang'):.0%} of failures hang"),
            function=partial(heartbeat_detection, detect_min=after["detect"])),
        dataclasses.replace(plain[1], function=partial(hot_spare_restart, reschedule_min=after["reschedule"])),
        dataclasses.replace(plain[2], description=plain[2].description + (
            "; an SDC (and a host loss without a peer copy) reads the persisted checkpoint instead"),
            function=partial(reload_from_memory, reload_min=after["reload"])),
        dataclasses.replace(plain[3], description=(
            f"{plain[3].description}, never below max(step {60 * step_min:.3g} s, snapshot, persist {60 * persist_min:.3g} s)"),
            function=partial(snapshot_checkpoint, write_cost_min=scenario.snapshot_min, min_interval_min=bound,
                             step_min=step_min, latency_rewind_min=after["latency"], snapshot_share=after["snapshot_share"])),
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
