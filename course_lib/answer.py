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

The input is one :class:`~course_lib.scenario.Scenario` (every number has its default there,
sourced from data/); the baseline is its day, the levers are
:func:`course_lib.restart.default_levers` of it, and every number below is a property of the
resulting :class:`~course_lib.restart.RestartBudget` records.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

from . import floor as fl
from . import interval as iv
from . import modes as md
from . import restart as rs
from . import spares as sp
from . import uncertainty as un
from .scenario import Scenario
from .units import MINUTES_PER_DAY

__all__ = ["Answer", "AnswerRow", "answer", "ReportedEttr", "reported_ettr", "REPORTED_RUNS"]


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


def _capped(fraction: float, budget) -> float:
    """A first-order share of the day, or the complete model's 1 - ETTR where the job cannot make
    progress or the first-order number would pass 100 % (so no row ever prints more than 100 %)."""
    return fraction if budget.makes_progress and fraction <= 1.0 else min(fraction, budget.loss_fraction)


def _lever_slug(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name.lower()).strip("_")


@dataclass(frozen=True)
class Answer:
    """Every number of the course's answer for one Scenario (all times in minutes)."""

    scenario: Scenario
    baseline: rs.RestartBudget
    steps: tuple  # of restart.WaterfallStep, largest saving first
    fewer: tuple  # of (floor.RateLever, RestartBudget): the day with fewer failures (alternatives)
    inputs: md.ModeInputs | None = None  # the per-mode inputs (failure modes, step, spares)
    spread: un.FloorRange | None = None  # the floor and the after-levers loss as ranges (Monte Carlo)

    @property
    def spare_cost_minutes_per_day(self) -> float:
        """The hot spare's idle GPUs as lost job-minutes a day (0 if pooled; :mod:`course_lib.spares`)."""
        inp = self.inputs or md.ModeInputs()
        return sp.spare_cost_minutes_per_day(inp.spare_gpus, self.n_gpus, inp.spares_pooled)

    @property
    def hot_spare_net_minutes_per_day(self) -> float:
        """The hot-spare lever's saving net of the spares' cost."""
        return self.savings.get("hot-spare restart", 0.0) - self.spare_cost_minutes_per_day

    @property
    def baseline_restart_fraction(self) -> float:
        """The question's number: restarts only, as a share of the day (2.08 %; writes excluded)."""
        return self.baseline.restart_minutes_per_day / MINUTES_PER_DAY

    # ----- derived -----
    @property
    def n_gpus(self) -> int:
        return self.scenario.n_gpus

    @property
    def rate_per_gpu_day(self) -> float:
        return self.scenario.rate_per_gpu_day

    @property
    def failures_per_day(self) -> float:
        return self.baseline.failures_per_day

    @property
    def fleet_mtbf_hours(self) -> float:
        return self.scenario.fleet_mtbf_hours

    @property
    def state_gb_per_gpu(self) -> float:
        return self.scenario.shard_bytes / 1e9

    @property
    def write_cost_before_min(self) -> float:
        return self.scenario.write_before_min

    @property
    def snapshot_cost_min(self) -> float:
        return self.scenario.snapshot_min

    @property
    def interval_before_min(self) -> float:
        """Young's optimum with the plain synchronous write: sqrt(2 delta_before M)."""
        return iv.young_interval(self.write_cost_before_min, self.baseline.mtbf_min)

    @property
    def after(self) -> rs.RestartBudget:
        """The day after every lever, at its best interval: its floor is lambda (D + R)."""
        return self.steps[-1].after

    @property
    def interval_after_min(self) -> float:
        """The interval after the levers (the in-memory snapshot's optimum)."""
        return self.after.interval_min

    @property
    def after_levers_minutes_per_day(self) -> float:
        return self.after.minutes_per_day

    @property
    def savings(self) -> dict[str, float]:
        """{lever name: minutes per day saved}, in the order applied."""
        return {s.lever.name: s.saved_minutes_per_day for s in self.steps}

    # ----- presentation -----
    def rows(self) -> list[AnswerRow]:
        """The answer as table rows (the ledger of notebook 09 and the CLI print these)."""
        b, f = self.baseline, self.after
        rows = [
            AnswerRow("gpus", "GPUs in the job", self.n_gpus, "GPUs", ",.0f"),
            AnswerRow("rate_per_gpu_day", "failure rate per GPU", self.rate_per_gpu_day, "per GPU-day", ".3e"),
            AnswerRow("failures_per_day", "failures per day", self.failures_per_day, "per day", ".3g"),
            AnswerRow("baseline_minutes_per_day", "baseline loss to restarts (the question's)", b.restart_minutes_per_day, "min/day", ".1f"),
            AnswerRow("baseline_loss_pct", "baseline loss to restarts (the question's)", 100 * _capped(self.baseline_restart_fraction, b), "% of the day", ".2f"),
            AnswerRow("baseline_write_minutes_per_day", "baseline blocking writes", b.write_minutes_per_day, "min/day", ".2f"),
            AnswerRow("baseline_total_minutes_per_day", "baseline loss, restarts + writes", b.minutes_per_day, "min/day", ".1f"),
            AnswerRow("baseline_total_pct", "baseline loss, restarts + writes", 100 * _capped(b.fraction_of_day, b), "% of the day", ".2f"),
            AnswerRow("baseline_ettr_pct", "baseline ETTR (complete model)", 100 * b.ettr_complete, "% of the day", ".3g"),
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
            AnswerRow("after_levers_minutes_per_day", "loss after the levers", f.minutes_per_day, "min/day", ".2f"),
            AnswerRow("after_levers_pct", "loss after the levers", 100 * _capped(f.fraction_of_day, f), "% of the day", ".3f"),
            AnswerRow("after_levers_complete_pct", "loss after the levers, 1 - ETTR (complete model)", 100 * f.loss_fraction, "% of the day", ".3f"),
            AnswerRow("floor_minutes_per_day", "floor lambda (D + R)", f.floor_minutes_per_day, "min/day", ".2f"),
            AnswerRow("floor_pct", "floor lambda (D + R)", 100 * _capped(f.floor_fraction, f), "% of the day", ".3f"),
        ]
        if self.spread is not None:
            r = self.spread
            rows += [AnswerRow("floor_central_pct", "floor, central (median of the inputs' range)", 100 * r.floor.central, "% of the day", ".2f"),
                     AnswerRow("floor_low_pct", "floor, 5th percentile", 100 * r.floor.low, "% of the day", ".2f"),
                     AnswerRow("floor_high_pct", "floor, 95th percentile", 100 * r.floor.high, "% of the day", ".2f"),
                     AnswerRow("after_levers_central_pct", "loss after the levers, central", 100 * r.loss.central, "% of the day", ".2f"),
                     AnswerRow("after_levers_low_pct", "loss after the levers, 5th percentile", 100 * r.loss.low, "% of the day", ".2f"),
                     AnswerRow("after_levers_high_pct", "loss after the levers, 95th percentile", 100 * r.loss.high, "% of the day", ".2f")]
        if self.inputs is not None:
            rows.append(AnswerRow("floor_per_step_ft_pct", f"floor with per-step fault tolerance ({self.ft_groups} groups)",
                                  100 * _capped(self.ft_floor_minutes_per_day / MINUTES_PER_DAY, self.after), "% of the day", ".3f"))
        if self.inputs is not None:
            rows += [AnswerRow("spare_cost_minutes_per_day", "idle hot spare, as lost capacity", self.spare_cost_minutes_per_day, "min/day", ".2f"),
                     AnswerRow("hot_spare_net_minutes_per_day", "hot-spare restart, net of the spare", self.hot_spare_net_minutes_per_day, "min/day", ".2f")]
        for lever, g in self.fewer:
            rows.append(AnswerRow(f"floor_{_lever_slug(lever.name)}_pct", f"floor with {lever.name}",
                                  100 * _capped(g.floor_fraction, g), "% of the day", ".3f"))
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
                 f"{'baseline (with writes)':24s} {'':13s} {b.minutes_per_day:12.2f} {b.fraction_of_day:8.3%}"]
        for step in self.steps:
            lines.append(f"+ {step.lever.name:22s} {step.saved_minutes_per_day:13.2f} {step.after.minutes_per_day:12.2f} "
                         f"{step.after.fraction_of_day:8.3%}")
        return "\n".join(lines)

    @property
    def ft_groups(self) -> int:
        """Replica groups of per-step fault tolerance: one per data-parallel replica (notebook 10)."""
        from . import replicas

        return replicas.groups_for(self.scenario, None, self.inputs)

    @property
    def ft_floor_minutes_per_day(self) -> float:
        """The floor with per-step fault tolerance across :attr:`ft_groups` groups (notebook 10), minutes per day."""
        from . import replicas

        return replicas.floor_minutes_per_day_groups(self.scenario, None, self.inputs)

    @property
    def text(self) -> str:
        """The written answer, one paragraph generated from the numbers."""
        b, f = self.baseline, self.after
        s = b.stages
        order = ", ".join(f"{st.lever.name} {st.saved_minutes_per_day:.1f}" for st in self.steps)
        fewer = ""
        if self.fewer:
            lever, g = min(self.fewer, key=lambda item: item[1].floor_minutes_per_day)
            fewer = (f" No checkpoint lever moves lambda (D + R); fewer failures, a smaller D + R (bounded below by the hang "
                     f"timeout and the restart's start-up) and stopping fewer GPUs per failure do: {lever.name} "
                     f"(failure rate x {lever.factor:.2f}) would bring it to {g.floor_minutes_per_day:.2f} min a day "
                     f"({g.floor_fraction:.3%}).")
        if self.fewer and self.inputs is not None and self.ft_groups > 1:
            ft = self.ft_floor_minutes_per_day
            fewer += (f" Per-step fault tolerance across {self.ft_groups} replica groups (torchft: a failure stops one group "
                      f"for its rejoin and the others for the quorum change) would bring it to {ft:.2f} min a day "
                      f"({ft / MINUTES_PER_DAY:.3%}); detection and the rewind past silent corruption stay.")
        if not b.makes_progress:
            return (f"{_article(f'{self.n_gpus:,}')} {self.n_gpus:,}-GPU job failing at {self.rate_per_gpu_day:.2e} per GPU-day stops "
                    f"{self.failures_per_day:.3g} times a day. " + b.progress_sentence
                    + (" After the levers: " + f.progress_sentence[0].lower() + f.progress_sentence[1:] if f is not b else ""))
        spread = ""
        if self.spread is not None:
            r = self.spread
            spread = (f" With the inputs' ranges the floor is {r.floor.text()} and the after-levers loss {r.loss.text()}; "
                      f"the {r.dominant} dominates the spread.")
            if r.shifts:
                up = sorted(((v, k) for k, v in r.shifts.items() if v > 0), reverse=True)[:2]
                spread += (f" The central value sits above the point value {f.floor_fraction:.3%} because the ranges reach further "
                           f"up than down (each alone: " + ", ".join(f"{k} {100 * v:+.2f} points" for v, k in up) + ").")
        spare = ""
        if self.inputs is not None and "hot-spare restart" in self.savings:
            net = self.hot_spare_net_minutes_per_day
            spare = (f" The hot spare saves {self.savings['hot-spare restart']:.2f} min a day and its idle GPUs cost "
                     f"{self.spare_cost_minutes_per_day:.2f}: net {net:+.2f} min a day, "
                     + ("worth keeping." if net > 0 else "so keep one only if it is pooled across jobs."))
        return (
            f"{_article(f'{self.n_gpus:,}')} {self.n_gpus:,}-GPU job failing at {self.rate_per_gpu_day:.2e} per GPU-day stops "
            f"{self.failures_per_day:.2f} times a day (fleet MTBF {self.fleet_mtbf_hours:.1f} h). At "
            f"{s.total:.1f} min per restart (detect {s.detect:.1f}, reschedule {s.reschedule:.1f}, reload {s.reload:.1f}, "
            f"rewind {s.rewind:.1f}) it loses {b.restart_minutes_per_day:.1f} min a day to restarts, {self.baseline_restart_fraction:.2%}, "
            f"and {b.write_minutes_per_day:.1f} min more to the {60 * b.write_cost_min:.3g} s blocking write of a synchronous checkpoint "
            f"every {b.interval_min:.3g} min: {b.minutes_per_day:.1f} min, {b.fraction_of_day:.2%}. "
            f"Largest saving first, in minutes a day: {order}. The in-memory snapshot "
            f"({60_000 * self.snapshot_cost_min:.3g} ms blocking instead of {60 * self.write_cost_before_min:.3g} s) moves "
            f"the optimal checkpoint interval from {self.interval_before_min:.1f} min to {self.interval_after_min:.2f} min. "
            f"After the levers the job loses {f.minutes_per_day:.2f} min a day ({f.loss_fraction:.3%}, 1 - ETTR); of that, "
            f"{f.floor_minutes_per_day:.2f} min ({f.floor_fraction:.3%}) is the floor, detection, restart, reload, half a step "
            f"and the rewind past silent corruption of every failure, which no checkpoint can remove." + spare + spread + fewer
        )


def answer(scenario: Scenario | None = None, data_dir=None, modes=None, spread_draws: int = 20_000) -> Answer:
    """The course's answer for one :class:`~course_lib.scenario.Scenario` (notebook 09).

    The baseline day (:func:`course_lib.restart.baseline_budget`), the four levers of
    :func:`course_lib.restart.default_levers` applied largest saving first, and the
    alternatives that cut the failure rate instead (:func:`course_lib.floor.rate_levers`),
    each applied to the after-levers day. ``answer()`` is the course's 4,096-GPU question.
    modes: the per-mode inputs (:class:`course_lib.modes.ModeInputs`; None: its defaults; False:
    the single-stage levers of before issue 12). spread_draws: Monte Carlo draws of the floor's
    range (:func:`course_lib.uncertainty.floor_range`; 0: none).
    """
    scenario = Scenario() if scenario is None else scenario
    if not isinstance(scenario, Scenario):
        raise ValueError(f"scenario must be a Scenario (got {type(scenario).__name__}); build one with Scenario.from_params(...)")
    inputs = md.ModeInputs() if modes is None or modes is True else (None if modes is False else modes)
    baseline = rs.baseline_budget(scenario)
    steps = tuple(rs.waterfall(baseline, rs.default_levers(scenario, data_dir, modes=False if inputs is None else inputs)))
    after = steps[-1].after
    fewer = tuple((lever, lever(after)) for lever in fl.rate_levers(data_dir))
    spread = un.floor_range(scenario, inputs, n=spread_draws, data_dir=data_dir) if inputs is not None and spread_draws else None
    return Answer(scenario, baseline, steps, fewer, inputs, spread)


#: The reported ETTRs of large runs (data/training_step.csv): (run, ETTR row, fleet-size row).
REPORTED_RUNS = (("Llama 3 405B", "llama3_effective_training_time", "llama3_405b_16k_gpus"),
                 ("MegaScale", "megascale_ettr", "megascale_ettr_gpus"),
                 ("ByteRobust", "byterobust_ettr", "byterobust_ettr_gpus"))


@dataclass(frozen=True)
class ReportedEttr:
    """A large run's reported effective training time beside the course's restart-only model at its fleet size.

    reported: the run's ETTR (a fraction; Llama 3's and MegaScale's are lower bounds, "higher than 90 %"),
    counting every cause. baseline, after_levers: the course's complete-model ETTR at ``gpus`` with the
    scenario's per-GPU rate, before and after the levers: restarts and checkpoints only.
    """

    run: str
    gpus: int
    reported: float
    baseline: float
    after_levers: float
    source: str

    @property
    def other_causes_at_most(self) -> float:
        """What the report leaves for every other cause (stragglers, slow steps, maintenance), at most, after the levers."""
        return max(self.after_levers - self.reported, 0.0)


def reported_ettr(scenario: Scenario | None = None, data_dir=None) -> list[ReportedEttr]:
    """The sanity check of notebook 08: the course's restart-only ETTR at each reported run's fleet size.

    A run's reported ETTR includes everything (planned maintenance, stragglers, slow steps, evaluation),
    so the course's restart-only ETTR must sit above it; the difference bounds what the other causes
    cost, which the course does not model and invents no number for.
    """
    from .data import sourced

    s = Scenario() if scenario is None else scenario
    t = sourced("training_step.csv", "key", data_dir)
    out = []
    for run, ettr_key, gpus_key in REPORTED_RUNS:
        gpus = int(t[gpus_key].value)
        a = answer(s.replace(n_gpus=gpus), data_dir, spread_draws=0)
        out.append(ReportedEttr(run, gpus, t[ettr_key].value / 100.0, a.baseline.ettr_complete, a.after.ettr_complete,
                                t[ettr_key].source))
    return out
