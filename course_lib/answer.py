"""The course's whole answer for one fleet, in one call (notebook 09, the budget CLI, notebook 08).

:func:`answer` takes a fleet's numbers (or nothing: the course's 4,096-GPU question) and
returns an :class:`Answer` holding every figure the course derives, each computed by the
tested modules:

1. the baseline: failures per day x (detect + reschedule + reload + rewind), as a share of
   the day (the question's 2.08 %; :mod:`course_lib.restart`);
2. the optimal checkpoint interval *before* (with the blocking write of a plain synchronous
   checkpoint) and *after* the in-memory snapshot (Young's first-order optimum
   ``sqrt(2 delta M)``, notebooks 04 and 06);
3. the four levers applied largest saving first, with what each saves (heartbeat
   detection, hot-spare restart, reload from host memory, in-memory checkpoint at the
   optimal interval; sources in data/levers.csv and data/write_costs.csv);
4. the after-levers loss and the floor ``lambda (D + R)`` (:mod:`course_lib.floor`), and what
   fewer failures would make of the floor;
5. :attr:`Answer.text`, a one-paragraph written answer generated from those numbers.

Inputs left as ``None`` take the course's values: the per-GPU rate implied by the question
(2 failures a day on 4,096 GPUs), the sourced stage minutes of notebook 03, the 10-minute
baseline interval, the per-GPU shard of the course's 405B example (parameters x 16 B /
GPUs), the torch.save + fsync bandwidth measured for the course (the write *before*) and the
pinned-host copy bandwidth (the snapshot and the reload *after*). Changing only ``n_gpus``
keeps the per-GPU rate, so failures per day scale with the fleet.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import partial

from . import floor as fl
from . import restart as rs
from ._validate import check_int_positive, check_non_negative, check_positive
from .scenario import Scenario

__all__ = ["Answer", "AnswerRow", "answer", "answer_levers"]


@dataclass(frozen=True)
class AnswerRow:
    """One line of the answer table: a stable key, a label, the value, its unit and format."""

    key: str
    label: str
    value: float
    unit: str
    fmt: str = ".3g"

    def formatted(self) -> str:
        return format(self.value, self.fmt)


def _article(number_text: str) -> str:
    """'A' or 'An' before a number read aloud: an 8,192, an 11,000, an 18,432; a 4,096."""
    head = number_text.split(",")[0]
    return "An" if head.startswith("8") or head in ("11", "18") else "A"


def _lever_slug(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name.lower()).strip("_")


@dataclass(frozen=True)
class Answer:
    """Every number of the course's answer for one fleet (all times in minutes)."""

    n_gpus: int
    rate_per_gpu_day: float
    state_gb_per_gpu: float
    baseline: rs.RestartBudget
    write_cost_before_min: float
    snapshot_cost_min: float
    steps: tuple  # of restart.WaterfallStep, largest saving first
    floor: fl.Floor  # after the levers
    fewer: tuple  # of (RateLever, Floor): the floor with fewer failures (alternatives)

    # ----- derived -----
    @property
    def failures_per_day(self) -> float:
        return self.baseline.failures_per_day

    @property
    def fleet_mtbf_hours(self) -> float:
        return 24.0 / self.failures_per_day

    @property
    def interval_before_min(self) -> float:
        """Young's optimum with the plain synchronous write: sqrt(2 delta_before M)."""
        return math.sqrt(2.0 * self.write_cost_before_min * self.baseline.mtbf_min)

    @property
    def interval_after_min(self) -> float:
        """The interval after the levers (the in-memory snapshot's optimum)."""
        return self.floor.interval_min

    @property
    def after(self) -> rs.RestartBudget:
        """The budget after every lever (equals ``floor.budget()``)."""
        return self.steps[-1].after

    @property
    def after_levers_minutes_per_day(self) -> float:
        return self.floor.loss_minutes_per_day

    @property
    def savings(self) -> dict[str, float]:
        """{lever name: minutes per day saved}, in the order applied."""
        return {s.lever.name: s.saved_minutes_per_day for s in self.steps}

    # ----- presentation -----
    def rows(self) -> list[AnswerRow]:
        """The answer as table rows (the ledger of notebook 09 and the CLI print these)."""
        b, f = self.baseline, self.floor
        rows = [
            AnswerRow("gpus", "GPUs in the job", self.n_gpus, "GPUs", ",.0f"),
            AnswerRow("rate_per_gpu_day", "failure rate per GPU", self.rate_per_gpu_day, "per GPU-day", ".3e"),
            AnswerRow("failures_per_day", "failures per day", self.failures_per_day, "per day", ".3g"),
            AnswerRow("baseline_minutes_per_day", "baseline loss", b.minutes_per_day, "min/day", ".1f"),
            AnswerRow("baseline_loss_pct", "baseline loss", 100 * b.fraction_of_day, "% of the day", ".2f"),
        ]
        for stage in rs.STAGES:
            rows.append(AnswerRow(f"stage_{stage}_min", f"{stage} per restart (baseline)", getattr(b.stages, stage), "min", ".2f"))
        rows += [
            AnswerRow("write_cost_before_s", "blocking write, synchronous checkpoint", 60 * self.write_cost_before_min, "s", ".3g"),
            AnswerRow("interval_before_min", "optimal interval before the in-memory checkpoint", self.interval_before_min, "min", ".2f"),
            AnswerRow("snapshot_cost_ms", "blocking in-memory snapshot", 60_000 * self.snapshot_cost_min, "ms", ".3g"),
            AnswerRow("interval_after_min", "optimal interval after the in-memory checkpoint", self.interval_after_min, "min", ".2f"),
        ]
        for step in self.steps:
            rows.append(AnswerRow(f"saving_{_lever_slug(step.lever.name)}", f"saved by {step.lever.name}",
                                  step.saved_minutes_per_day, "min/day", ".2f"))
        rows += [
            AnswerRow("after_levers_minutes_per_day", "loss after the levers", f.loss_minutes_per_day, "min/day", ".2f"),
            AnswerRow("after_levers_pct", "loss after the levers", 100 * f.loss_fraction, "% of the day", ".3f"),
            AnswerRow("floor_minutes_per_day", "floor lambda (D + R)", f.floor_minutes_per_day, "min/day", ".2f"),
            AnswerRow("floor_pct", "floor lambda (D + R)", 100 * f.floor_fraction, "% of the day", ".3f"),
        ]
        for lever, g in self.fewer:
            rows.append(AnswerRow(f"floor_{_lever_slug(lever.name)}_pct", f"floor with {lever.name}",
                                  100 * g.floor_fraction, "% of the day", ".3f"))
        return rows

    def as_dict(self) -> dict:
        """JSON-ready: {key: {label, value, unit}} plus ``text``."""
        out = {r.key: {"label": r.label, "value": r.value, "unit": r.unit} for r in self.rows()}
        out["text"] = self.text
        return out

    def to_json(self) -> str:
        return json.dumps(self.as_dict(), indent=1)

    def table(self) -> str:
        """Aligned plain-text table of :meth:`rows`."""
        rows = [(r.label, r.formatted(), r.unit) for r in self.rows()]
        w0 = max(len(r[0]) for r in rows)
        w1 = max(len(r[1]) for r in rows)
        return "\n".join(f"{a.ljust(w0)}  {b.rjust(w1)}  {c}".rstrip() for a, b, c in rows)

    def lever_table(self) -> str:
        """The levers in the order applied: minutes a day each saves, what is left, the loss (notebooks 08, 09)."""
        b = self.baseline
        lines = [f"{'':24s} {'saves min/day':>13s} {'left min/day':>12s} {'loss':>8s}",
                 f"{'baseline':24s} {'':13s} {b.minutes_per_day:12.2f} {b.fraction_of_day:8.3%}"]
        for step in self.steps:
            lines.append(f"+ {step.lever.name:22s} {step.saved_minutes_per_day:13.2f} {step.after.minutes_per_day:12.2f} "
                         f"{step.after.fraction_of_day:8.3%}")
        return "\n".join(lines)

    @property
    def text(self) -> str:
        """The written answer, one paragraph generated from the numbers."""
        b, f = self.baseline, self.floor
        s = b.stages
        order = ", ".join(f"{st.lever.name} {st.saved_minutes_per_day:.1f}" for st in self.steps)
        fewer = ""
        if self.fewer:
            lever, g = min(self.fewer, key=lambda item: item[1].floor_minutes_per_day)
            fewer = (f" Only fewer failures, or not restarting the whole job, move it: {lever.name} "
                     f"(failure rate x {lever.factor:.2f}) would bring it to {g.floor_minutes_per_day:.2f} min a day "
                     f"({g.floor_fraction:.3%}).")
        return (
            f"{_article(f'{self.n_gpus:,}')} {self.n_gpus:,}-GPU job failing at {self.rate_per_gpu_day:.2e} per GPU-day stops "
            f"{self.failures_per_day:.2f} times a day (fleet MTBF {self.fleet_mtbf_hours:.1f} h). At "
            f"{s.total:.1f} min per restart (detect {s.detect:.1f}, reschedule {s.reschedule:.1f}, reload {s.reload:.1f}, "
            f"rewind {s.rewind:.1f}) it loses {b.minutes_per_day:.1f} min a day, {b.fraction_of_day:.2%}. "
            f"Largest saving first, in minutes a day: {order}. The in-memory snapshot "
            f"({60_000 * self.snapshot_cost_min:.3g} ms blocking instead of {60 * self.write_cost_before_min:.3g} s) moves "
            f"the optimal checkpoint interval from {self.interval_before_min:.1f} min to {self.interval_after_min:.2f} min. "
            f"After the levers the job loses {f.loss_minutes_per_day:.2f} min a day ({f.loss_fraction:.3%}); of that, "
            f"{f.floor_minutes_per_day:.2f} min ({f.floor_fraction:.3%}) is the floor lambda (D + R) = "
            f"{f.failures_per_day:.2f} x {f.detect_min + f.restart_min:.2f} min, which no checkpoint can remove." + fewer
        )


def answer_levers(detect_min: float, reschedule_min: float, reload_min: float, snapshot_cost_min: float,
                  data_dir=None) -> list[rs.Lever]:
    """The four levers of the answer with these target minutes (sources from data/)."""
    inp = rs.lever_inputs(data_dir)
    wc = fl.write_costs(data_dir)
    return [
        rs.Lever("heartbeat detection", "detect", f"detection in {60 * detect_min:.3g} s by a per-rank heartbeat",
                 inp["heartbeat_check_interval"].source, partial(rs.heartbeat_detection, detect_min=detect_min)),
        rs.Lever("hot-spare restart", "reschedule", f"in-job restart on a hot spare in {60 * reschedule_min:.3g} s",
                 inp["hot_spare_init"].source, partial(rs.hot_spare_restart, reschedule_min=reschedule_min)),
        rs.Lever("reload from memory", "reload", f"reload the shard from host memory in {60_000 * reload_min:.3g} ms",
                 inp["host_to_gpu_pinned"].source, partial(rs.reload_from_memory, reload_min=reload_min)),
        rs.Lever("in-memory checkpoint", "rewind",
                 f"snapshot to pinned host memory ({60_000 * snapshot_cost_min:.3g} ms blocking) at the optimal interval",
                 wc["snapshot_pinned_host"]["source"] + "; Young, CACM 1974",
                 partial(fl.at_optimal_interval, write_cost_min=snapshot_cost_min)),
    ]


def answer(
    n_gpus: int | None = None,
    rate_per_gpu_day: float | None = None,
    failures_per_day: float | None = None,
    detect_min: float | None = None,
    reschedule_min: float | None = None,
    reload_min: float | None = None,
    interval_min: float | None = None,
    write_cost_min: float | None = None,
    state_gb_per_gpu: float | None = None,
    *,
    detect_after_min: float | None = None,
    reschedule_after_min: float | None = None,
    reload_after_min: float | None = None,
    snapshot_cost_min: float | None = None,
    scenario: Scenario | None = None,
    data_dir=None,
) -> Answer:
    """The course's answer for one fleet (notebook 09). ``None`` keeps the course's value.

    n_gpus: GPUs in the job.
    rate_per_gpu_day / failures_per_day: the failure rate, one or the other (not both);
        default the question's per-GPU rate (scenario.rate_per_gpu_day) x n_gpus.
    detect_min, reschedule_min, reload_min: minutes per restart of the baseline stages.
    interval_min: baseline checkpoint interval (the rewind is half of it).
    write_cost_min: blocking minutes of the current, synchronous checkpoint (measured in
        notebook 05, or yours); default the shard at the torch.save + fsync bandwidth.
    state_gb_per_gpu: training state per GPU (GB); sets the in-memory reload and snapshot.
    detect_after_min, reschedule_after_min, reload_after_min, snapshot_cost_min: what the
        levers bring each stage to (defaults: the sourced lever numbers, the shard over the
        pinned-host bandwidths).
    """
    scenario = Scenario() if scenario is None else scenario
    n = scenario.n_gpus if n_gpus is None else check_int_positive("n_gpus", n_gpus)
    if rate_per_gpu_day is not None and failures_per_day is not None:
        raise ValueError("rate_per_gpu_day and failures_per_day: give one of them, not both")
    if failures_per_day is not None:
        lam = check_positive("failures_per_day", failures_per_day)
        rate = lam / n
    else:
        rate = scenario.rate_per_gpu_day if rate_per_gpu_day is None else check_positive("rate_per_gpu_day", rate_per_gpu_day)
        lam = n * rate

    base = rs.baseline_stages(scenario, data_dir)
    interval = scenario.checkpoint_interval_min if interval_min is None else check_positive("interval_min", interval_min)
    stages = rs.RestartStages(
        detect=base.detect if detect_min is None else check_non_negative("detect_min", detect_min),
        reschedule=base.reschedule if reschedule_min is None else check_non_negative("reschedule_min", reschedule_min),
        reload=base.reload if reload_min is None else check_non_negative("reload_min", reload_min),
        rewind=interval / 2.0,
    )
    baseline = rs.RestartBudget(lam, stages)

    shard = rs.shard_gb(n, data_dir) if state_gb_per_gpu is None else check_positive("state_gb_per_gpu", state_gb_per_gpu)
    inp = rs.lever_inputs(data_dir)
    if write_cost_min is None:
        write_before = fl.blocking_write_min("torch_save_local", shard, data_dir)
    else:
        write_before = check_positive("write_cost_min", write_cost_min)
    snap = (fl.blocking_write_min("snapshot_pinned_host", shard, data_dir) if snapshot_cost_min is None
            else check_positive("snapshot_cost_min", snapshot_cost_min))
    detect_after = inp["heartbeat_check_interval"].minutes if detect_after_min is None else check_non_negative("detect_after_min", detect_after_min)
    resched_after = inp["hot_spare_init"].minutes if reschedule_after_min is None else check_non_negative("reschedule_after_min", reschedule_after_min)
    reload_after = (shard / inp["host_to_gpu_pinned"].value / 60.0 if reload_after_min is None
                    else check_non_negative("reload_after_min", reload_after_min))

    levers = answer_levers(detect_after, resched_after, reload_after, snap, data_dir)
    steps = tuple(rs.waterfall(baseline, levers))
    after = steps[-1].after
    result_floor = fl.floor(after, snap)
    fewer = tuple((lever, fl.floor(lever(after), snap)) for lever in fl.rate_levers(data_dir))
    return Answer(n, rate, shard, baseline, write_before, snap, steps, result_floor, fewer)
