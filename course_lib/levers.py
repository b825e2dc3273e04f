"""The levers: named changes of one day, on its stages and on its failure rate, and the waterfall (notebooks 03, 08, 09).

A :class:`Lever` takes a :class:`~course_lib.restart.RestartBudget` and returns a new one with one
stage made cheaper, carrying the source of its number. :func:`default_levers` is the one
constructor of the four stage levers; it receives every number from the
:class:`~course_lib.scenario.Scenario` it is given (so another fleet gets its own reload, snapshot
and step), and only the citations come from data/.

- **heartbeat detection** (detect): a hang is seen at a tuned timeout (NVRx's safety factor 5 x the
  longest legitimate gap between heartbeats, evaluated by the rank monitor every 5 s) instead of NCCL's
  untuned 10-minute collective timeout; a lost host by a cross-node heartbeat (NVRx in-process
  restart's 30 s) instead of the next cluster health check. A crash is already seen within the
  launcher's 0.1 s poll: this lever does not touch it.
- **hot-spare restart** (reschedule): an in-job restart on a spare node (FlashRecovery's 150 s end to
  end, its reschedule stage what remains once the crash's detection and reload are taken out)
  instead of a re-queue; the spare's idle GPUs are charged to the day.
- **reload from memory** (reload): the failures that restore the latest checkpoint read it from host
  (or a peer's) memory; an SDC, and a lost host whose snapshot no peer holds, still read storage.
- **in-memory checkpoint** (rewind): a snapshot to pinned host memory costs milliseconds, so the
  interval falls to the day model's optimum (:func:`course_lib.interval.best_interval`), never below
  a step, the snapshot copy or the copy that leaves the host; the persisted checkpoint stays
  every ``checkpoint_interval_min``, written off the critical path.

:func:`waterfall` applies them largest saving first and **pulls a lever only while it saves**: at
4,096 GPUs the hot spare's idle server costs more than its restart saves, so it is listed with its
net saving and left out (its break-even reschedule: :func:`course_lib.floor.spare_break_even_reschedule_min`).

Fewer failures: :class:`RateLever` multiplies the rate. :func:`rate_levers` gives the two the course
can bound: lemon-node removal (its factor is the Scenario's ``lemon_factor``, one place, so a factor
measured on your own fault log replaces the course's with one line) and the bound itself, no
faulty-GPU and no HBM3 failures (Llama 3's Table 5 from the raw counts). The course's lemon factor is
*measured*, out of sample, on a real fleet (:func:`measured_lemon_removal`: the InfiniteHBD trace,
notebook 13): removing the 16 servers with 4+ interruptions in the first half does not lower the
second half's rate (x 1.02; x 0.63 in sample, where the faults that chose the lemons count as the
gain). A factor above 1 means removal bought nothing, so the lever's factor is clamped at 1
(:func:`clamp_lemon_factor`) and every place that speaks the lever says so. Lemon nodes are drawn from
the faulty-GPU and HBM3 population, so no removal can buy more than the bound (x 0.47): Kokolis et
al.'s large-job failure share, 14 % -> 4 % on one cluster, read as a rate would be x 0.27, more than
removing every faulty GPU and every HBM3 failure could give.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import partial
from typing import Callable, Iterable, Sequence

import numpy as np

from . import interval as iv
# The rate factors (Table 5's shares, lemon-node removal measured on a trace) live in course_lib.failures with the rates
# they scale, and are re-exported here for the levers on the rate; the Scenario reads its lemon default there, so the
# input wing never imports this module (no cycle: tests/test_architecture.py).
from .failures import (TOP_TABLE5_CAUSES, MeasuredLemonRemoval, clamp_lemon_factor, kokolis_lemon_rate_factor, lemon_bound,
                       lemon_node_factor, measured_lemon_removal, rate_without_causes, table5_share)
from ._validate import check_choice, check_non_negative, check_positive
from .restart import STAGES, RestartBudget
from .scenario import Scenario

__all__ = ["Lever", "heartbeat_detection", "hot_spare_restart", "reload_from_memory", "checkpoint_at_optimum",
           "in_memory_checkpoint", "default_levers", "idle_share", "all_levers_day", "apply_levers", "order_by_saving",
           "WaterfallStep", "waterfall", "table5_share", "rate_without_causes", "kokolis_lemon_rate_factor",
           "lemon_node_factor", "MeasuredLemonRemoval", "measured_lemon_removal", "clamp_lemon_factor", "lemon_bound",
           "TOP_TABLE5_CAUSES", "RateLever", "rate_levers", "fewer_failures"]


# --------------------------------------------------------------------------------------
# The stage levers
# --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Lever:
    """A named change of a day that attacks one stage.

    name: short label (the waterfall's bar label, the same in code, plots and prose).
    stage: the stage it attacks (one of :data:`course_lib.restart.STAGES`).
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
        check_choice("stage", self.stage, STAGES + ("rate",))
        if not callable(self.function):
            raise ValueError(f"function must be callable (got {self.function!r})")

    def __call__(self, budget: RestartBudget) -> RestartBudget:
        return self.function(budget)

    def saving(self, budget: RestartBudget) -> float:
        """Minutes per day this lever saves when applied to ``budget`` (negative: it costs more than it saves)."""
        return budget.minutes_per_day - self(budget).minutes_per_day


def _min(a, b):
    out = np.minimum(a, b)
    return float(out) if np.ndim(out) == 0 else out


def _reoptimised(day: RestartBudget) -> RestartBudget:
    """An interval chosen at its optimum (``interval_bound_min`` set) chosen again for the day as it now is."""
    if day.interval_bound_min is None:
        return day
    fixed = day.per_failure_min - day.latest_share * day.interval_min / 2.0
    tau = iv.best_interval(day.write_cost_min, day.mtbf_min, fixed, day.latest_share, day.interval_bound_min)
    return day._evolve(interval_min=tau)


def heartbeat_detection(budget: RestartBudget, detect_by_mode: dict) -> RestartBudget:
    """Detect the modes in ``detect_by_mode`` ({mode: minutes}) that fast, never slower than now. Attacks ``detect``."""
    targets = {m.mode: _min(m.detect, detect_by_mode[m.mode]) for m in budget.modes if m.mode in detect_by_mode}
    return _reoptimised(budget.with_modes(detect=targets))


def hot_spare_restart(budget: RestartBudget, reschedule_min, idle_share=0.0) -> RestartBudget:
    """Restart in-job on a hot spare: every mode's reschedule at most ``reschedule_min``; the spare's idle share is charged.

    Every stage lever chooses an optimised interval again for the day it leaves (``interval_bound_min``)."""
    out = budget.with_modes(reschedule={m.mode: _min(m.reschedule, reschedule_min) for m in budget.modes})
    return _reoptimised(out._evolve(idle_share=np.maximum(budget.idle_share, idle_share) * 1.0
                                            if np.ndim(idle_share) else max(budget.idle_share, idle_share)))


def reload_from_memory(budget: RestartBudget, reload_min) -> RestartBudget:
    """Reload from host (or a peer's) memory: the modes that restore the latest checkpoint, at most ``reload_min``.

    An SDC (its snapshot postdates the corruption) and a lost host without a peer copy keep reading the
    persisted checkpoint from storage. GEMINI (SOSP 2023) keeps checkpoints in local and remote host memory.
    """
    return _reoptimised(budget.with_modes(reload={m.mode: _min(m.reload, reload_min) for m in budget.modes if not m.persisted}))


def checkpoint_at_optimum(budget: RestartBudget, write_cost_min, min_interval_min=0.0, in_memory: bool = False) -> RestartBudget:
    """The day checkpointing with blocking cost ``write_cost_min`` at its best interval (:func:`course_lib.interval.best_interval`).

    in_memory: the checkpoint is a snapshot in host memory, so the persisted checkpoint stays at
    today's interval (written off the critical path) and the SDC (and a host loss without a peer copy)
    still rewind to it; otherwise the new checkpoint is the persisted one. The interval is never below
    ``min_interval_min`` nor the step. It may lengthen the interval as well as shorten it.
    """
    delta = np.asarray(write_cost_min, dtype=float) if np.ndim(write_cost_min) else check_non_negative("write_cost_min", write_cost_min)
    bound = np.maximum(min_interval_min, budget.step_min)
    day = budget
    if in_memory and budget.persisted_interval_min is None:
        day = budget._evolve(persisted_interval_min=budget.interval_min)
    # the minutes per failure that the interval does not move, at the interval's own accounting
    fixed = day.per_failure_min - day.latest_share * day.interval_min / 2.0
    tau = iv.best_interval(delta, day.mtbf_min, fixed, day.latest_share, bound)
    return day._evolve(interval_min=tau, write_cost_min=delta, interval_bound_min=bound)


in_memory_checkpoint = partial(checkpoint_at_optimum, in_memory=True)


def idle_share(spare_gpus, job_gpus, pooled: bool = False) -> float:
    """The share of the GPUs paid for that wait as spares: ``spare / (job + spare)`` (0 if pooled across jobs)."""
    s = check_non_negative("spare_gpus", spare_gpus)
    g = check_positive("job_gpus", job_gpus)
    return 0.0 if pooled or s == 0 else s / (g + s)


def default_levers(scenario: Scenario, data_dir=None, targets: dict | None = None) -> list[Lever]:
    """The four stage levers of notebooks 03 and 08, in stage order, with the scenario's numbers.

    targets: Monte Carlo draws that replace some numbers (:mod:`course_lib.uncertainty`): ``detect``
    ({mode: minutes}), ``reschedule`` (minutes), ``reload`` (minutes); the descriptions keep the
    scenario's point values.
    """
    from .data import sourced

    s, m = scenario, scenario.modes
    t = targets or {}
    lev = sourced("levers.csv", "key", data_dir)
    rr = sourced("restart_ranges.csv", "key", data_dir)
    wc = sourced("write_costs.csv", "regime", data_dir, value="bandwidth_gb_per_s")
    ts = sourced("training_step.csv", "key", data_dir)
    after = s.detect_after_by_mode
    detect = {k: after[k] for k in ("hang", "host_loss")} | t.get("detect", {})
    gap = max(s.step_min, s.snapshot_cost_min)
    mem_src = "; ".join(dict.fromkeys((lev["model_params"].source, ts["ckpt_bytes_per_param"].source, lev["host_to_gpu_pinned"].source)))
    share = idle_share(m.spare_gpus, s.n_gpus, m.spares_pooled)
    bound = max(s.step_min, s.snapshot_cost_min, s.write_cost_min)
    binding = max((("a step", s.step_min), ("the snapshot copy", s.snapshot_cost_min), ("the persist copy", s.write_cost_min)),
                  key=lambda kv: kv[1])[0]
    return [
        Lever("heartbeat detection", "detect",
              f"a hang seen at a {60 * m.hang_timeout_min:.3g} s tuned timeout ({m.safety_factor:g} x the longest gap, "
              f"{_s(gap)}; the rank monitor checks it every {60 * m.rank_monitor_poll_min:.3g} s) instead of NCCL's untuned "
              f"{m.untuned_hang_timeout_min:g}-minute collective timeout, a lost host by a {60 * m.host_heartbeat_min:.3g} s "
              f"cross-node heartbeat instead of half a {m.health_check_min:g}-minute health check; a crash is already seen "
              f"within the launcher's {60 * m.launcher_poll_min:.2g} s poll",
              "; ".join(dict.fromkeys((rr["nvrx_safety_factor"].source, rr["nvrx_inprocess_heartbeat_timeout"].source,
                                       rr["torchrun_monitor_interval"].source))),
              partial(heartbeat_detection, detect_by_mode=detect)),
        Lever("hot-spare restart", "reschedule",
              f"in-job restart on a hot spare, {60 * s.restart_after_min:.3g} s end to end for a crash (its reschedule stage "
              f"{s.reschedule_after_min:.2f} min once the detection and the reload inside it are taken out), instead of a re-queue; "
              + (f"the spare's {m.spare_gpus:g} idle GPUs are charged ({share:.2%} of the GPUs paid for)" if share else
                 "the spare is pooled with other jobs and charged nothing"),
              rr["flashrecovery_restore_4800"].source,
              partial(hot_spare_restart, reschedule_min=t.get("reschedule", s.reschedule_after_min), idle_share=share)),
        Lever("reload from memory", "reload",
              f"read the {s.shard_gb:.2g} GB shard per GPU back from pinned host memory in {60_000 * s.reload_after_min:.3g} ms "
              "(a lost host from its buddy's copy" + ("" if m.peer_copy else ": none here, so from storage") +
              "); an SDC still reads the persisted checkpoint older than the corruption",
              mem_src, partial(reload_from_memory, reload_min=t.get("reload", s.reload_after_min))),
        Lever("in-memory checkpoint", "rewind",
              f"snapshot to pinned host memory ({60_000 * s.snapshot_cost_min:.3g} ms blocking) at the optimal interval, never "
              f"below {_s(bound)} ({binding}); the persisted checkpoint stays every {s.checkpoint_interval_min:g} min, "
              "written off the critical path",
              wc["snapshot_pinned_host"].source + "; Young, CACM 1974 (interval sqrt(2 delta M))",
              partial(in_memory_checkpoint, write_cost_min=s.snapshot_cost_min, min_interval_min=bound)),
    ]


def _s(minutes: float) -> str:
    sec = 60 * minutes
    return f"{1000 * sec:.3g} ms" if sec < 0.1 else f"{sec:.3g} s"


def apply_levers(budget: RestartBudget, levers: Iterable[Callable[[RestartBudget], RestartBudget]]) -> list[RestartBudget]:
    """The days after each lever in turn: ``[budget, after 1st, after 1st+2nd, ...]``."""
    days = [budget]
    for lever in levers:
        days.append(lever(days[-1]))
    return days


def all_levers_day(scenario: Scenario, data_dir=None) -> RestartBudget:
    """The scenario's day with all four stage levers pulled, whether each saves or not (notebooks 10, 11)."""
    from .restart import baseline_budget

    return apply_levers(baseline_budget(scenario), default_levers(scenario, data_dir))[-1]


def order_by_saving(budget: RestartBudget, levers: Sequence[Lever]) -> tuple[list[Lever], list[tuple[Lever, float]]]:
    """Largest saving first, pulling a lever only while it saves: ``(pulled, [(left out, its saving), ...])``.

    At each step the lever that saves most from the day as it then is comes next (ties keep the input
    order); a lever whose saving is not positive (a spare whose idle GPUs cost more than it saves) is
    left out with the (net) saving it would have had.
    """
    remaining = list(levers)
    pulled = []
    current = budget
    while remaining:
        days = [lever(current) for lever in remaining]
        savings = [current.minutes_per_day - d.minutes_per_day for d in days]
        best = max(range(len(remaining)), key=lambda i: (savings[i], -i))
        if not savings[best] > 1e-12:
            return pulled, list(zip(remaining, savings))
        pulled.append(remaining.pop(best))
        current = days[best]
    return pulled, []


@dataclass(frozen=True)
class WaterfallStep:
    """One bar of the waterfall: a lever, the day before and after, minutes a day saved."""

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

    largest_first: :func:`order_by_saving` (the levers that save, largest first); else every lever in
    the given order, whether it saves or not.
    """
    ordered = order_by_saving(budget, levers)[0] if largest_first else list(levers)
    days = apply_levers(budget, ordered)
    return [WaterfallStep(lever, before, after) for lever, before, after in zip(ordered, days, days[1:])]


# --------------------------------------------------------------------------------------
# Fewer failures: levers on the rate
# --------------------------------------------------------------------------------------
# (the rate factors they use, Table 5's shares and the measured lemon-node removal, live in course_lib.failures)


def fewer_failures(budget: RestartBudget, factor) -> RestartBudget:
    """The day with ``factor`` x its failures per day (0 < factor <= 1).

    An interval chosen at its optimum (``interval_bound_min`` set) is chosen again for the longer MTBF;
    a given interval is kept.
    """
    f = check_positive("factor", factor)
    if f > 1:
        raise ValueError(f"factor must be a finite number in (0, 1] (got {factor!r})")
    return _reoptimised(budget.with_failures_per_day(budget.failures_per_day * f))


@dataclass(frozen=True)
class RateLever:
    """A lever on the failure rate: ``factor`` x failures per day, with its evidence (``stage = "rate"``)."""

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


def rate_levers(scenario: Scenario | None = None, data_dir=None) -> list[RateLever]:
    """Fewer failures: lemon-node removal at the scenario's ``lemon_factor``, and the no faulty GPU / HBM3 bound.

    Alternatives, not a chain: lemon nodes are largely made of the same bad GPUs, so the factors must
    not be multiplied together.
    """
    from .data import llama3_table5, sourced

    s = Scenario() if scenario is None else scenario
    f = sourced("floor_inputs.csv", "key", data_dir)
    share = table5_share(TOP_TABLE5_CAUSES, data_dir)
    kok = kokolis_lemon_rate_factor(data_dir)
    bound = 1.0 - share
    if "lemon_factor" in s.given:
        lemon_text = f"the factor given for this fleet (a fault log's, or yours), rate x {s.lemon_factor:.2f}"
        lemon_source = "the scenario's lemon_factor"
    else:
        m = measured_lemon_removal(data_dir)
        lemon_text = (f"measured out of sample on a real fleet (the InfiniteHBD trace, notebook 13): removing the "
                      f"{m.nodes_removed} servers with {m.threshold}+ interruptions in the first half "
                      f"({m.capacity_removed:.0%} of the capacity) changed the second half's rate by x {m.factor:.2f} "
                      f"(95 % interval {m.factor_low:.2f}-{m.factor_high:.2f}; in sample it looks like x {m.in_sample:.2f}), "
                      + ("so removal bought nothing and the lever's factor is clamped at x 1.00" if not m.gained
                         else f"so the lever's factor is x {s.lemon_factor:.2f}")
                      + f"; no removal can buy more than every faulty-GPU and HBM3 failure, x {bound:.2f} (one research "
                      f"cluster's large jobs that fail, {f['lemon_job_failure_before'].value:g} % -> "
                      f"{f['lemon_job_failure_after'].value:g} %, read as a rate would be x {kok:.2f}, beyond that bound)")
        lemon_source = m.source
    return [
        RateLever("lemon-node removal", s.lemon_factor, lemon_text, lemon_source),
        RateLever("no faulty GPU / HBM3", bound,
                  f"a bound, not a lever: if {' and '.join(TOP_TABLE5_CAUSES)} never failed ({share:.1%} of Table 5's "
                  f"interruptions), rate x {bound:.2f}", llama3_table5(data_dir).meta["source"]),
    ]
