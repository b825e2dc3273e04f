"""The course's whole answer for one fleet, in one call (notebook 09, the budget CLI, notebook 08, the drill, the answer sheet).

:func:`answer` takes a :class:`~course_lib.scenario.Scenario` (or nothing: the course's 4,096-GPU
question) and returns an :class:`Answer` holding every figure the course derives, each computed by
the one day model (:mod:`course_lib.restart`) and its levers (:mod:`course_lib.levers`):

1. the baseline: failures per day x the minutes per restart (the question's 2 x 15 = 30 min, 2.08 %),
   plus the blocking writes of today's synchronous checkpoint;
2. the optimal checkpoint interval *before* (with the synchronous write) and *after* the in-memory
   snapshot (:func:`course_lib.interval.best_interval`, Young's ``sqrt(2 delta M)`` to first order);
3. the stage levers applied largest saving first, each only while it saves (a dedicated spare whose idle
   GPUs cost more than its faster restart saves is left out, with its break-even reschedule:
   :class:`SpareVerdict`);
4. the after-levers loss and the floor as named terms (:func:`course_lib.floor.terms`), both as ranges
   over the inputs' uncertainty (:mod:`course_lib.uncertainty`), and what fewer failures or per-step
   fault tolerance would make of the floor;
5. :attr:`Answer.spoken`, the 2-minute answer a candidate says (four moves, about a dozen numbers at two
   significant figures, stages and levers largest first), and :attr:`Answer.written` (also ``text``), the
   written answer with every stage, lever and floor term: the CLI, the README, the answer sheet, notebooks 09
   and 12 print both, the spoken one first.

Every number in the table, the sentence, the chart and the JSON is a property of the same day
records, so they cannot disagree, at any scale.
"""
from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass

from . import floor as fl
from . import levers as lv
from . import prose
from . import restart as rs
from . import uncertainty as un
from .scenario import Scenario
from .units import MINUTES_PER_DAY

__all__ = ["Answer", "AnswerRow", "SpareVerdict", "answer", "spoken_answer", "TOOLS", "ReportedEttr", "reported_ettr", "REPORTED_RUNS"]


@dataclass(frozen=True)
class AnswerRow:
    """One line of the answer table: a stable key, a label, the value, its unit and format."""

    key: str
    label: str
    value: float
    unit: str
    fmt: str = ".3g"
    text: str | None = None  # the printed value where it is not the value in fmt; every number is its value correctly rounded

    def formatted(self) -> str:
        return self.text if self.text is not None else format(self.value, self.fmt)


def _article(number_text: str) -> str:
    """'A' or 'An' before a number read aloud: an 8,192, an 11,000, an 18,432; a 4,096."""
    head = number_text.split(",")[0]
    return "An" if head.startswith("8") or head in ("11", "18") else "A"


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name.lower()).strip("_")


@dataclass(frozen=True)
class SpareVerdict:
    """Whether a dedicated hot spare pays at this fleet, from the course's own numbers (minutes per day).

    gross: what its faster restart saves; cost: its idle GPUs; net = gross - cost. break_even_min: the
    reschedule without a spare above which it pays (:func:`course_lib.floor.spare_break_even_reschedule_min`);
    reschedule_min: the reschedule it would replace (the question's remainder); requeue_low_min: the low
    end of a sourced re-queue (Kokolis et al.'s 5-20 min). pulled: whether the answer keeps it.
    """

    gross: float
    cost: float
    net: float
    break_even_min: float
    reschedule_min: float
    requeue_low_min: float
    pulled: bool
    pooled: bool

    @property
    def difference(self) -> prose.Added:
        """gross - cost = net as printed, each correctly rounded (``exact``: it subtracts as printed, else say "about")."""
        return prose.added([self.gross, -self.cost], self.net)

    @property
    def net_text(self) -> str:
        """The net as printed beside the gross and the cost: signed, and "about" where they do not subtract as printed."""
        d = self.difference
        return ("" if d.exact else "about ") + (d.total if d.total.startswith("-") else "+" + d.total)

    @property
    def sentence(self) -> str:
        """The recommendation, with the break-even reschedule that flips it."""
        if self.pooled:
            return (f"A spare pooled with other jobs costs this job nothing, so it is kept: it saves {self.gross:.2f} min a day.")
        gross_t, cost_t = self.difference.terms
        head = f"A dedicated hot spare saves {gross_t} min a day and its idle GPUs cost {cost_t.lstrip('-')}: net {self.net_text}"
        if self.pulled:
            return head + (f", so keep it; it pays while the reschedule it replaces ({self.reschedule_min:.2f} min) exceeds "
                           f"{self.break_even_min:.2f} min.")
        return head + (f", so do not keep one here: it pays only once the reschedule it replaces exceeds "
                       f"{self.break_even_min:.2f} min, and the question's {self.reschedule_min:.2f} min (what the 15 leave) is "
                       f"below that while every sourced re-queue ({self.requeue_low_min:.0f}-20 min) is above it: measure the "
                       "reschedule first, or pool the spare.")


@dataclass(frozen=True)
class Answer:
    """Every number of the course's answer for one Scenario (all times in minutes)."""

    scenario: Scenario
    baseline: rs.RestartBudget
    steps: tuple  # of levers.WaterfallStep, largest saving first, each pulled because it saves
    left_out: tuple  # of (levers.Lever, saving in minutes per day): levers that would not save
    fewer: tuple  # of (levers.RateLever, RestartBudget): the day with fewer failures (alternatives)
    spread: un.FloorRange | None = None  # the floor and the after-levers loss as ranges (Monte Carlo)
    spare: SpareVerdict | None = None

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
    def shard_gb(self) -> float:
        return self.scenario.shard_gb

    @property
    def write_cost_before_min(self) -> float:
        return self.scenario.write_cost_min

    @property
    def snapshot_cost_min(self) -> float:
        return self.scenario.snapshot_cost_min

    @property
    def baseline_restart_fraction(self) -> float:
        """The question's number: the share of the day spent restarting (2.08 %; writes excluded)."""
        return self.baseline.restart_minutes_per_day / MINUTES_PER_DAY

    @property
    def interval_before_min(self) -> float:
        """The best interval with today's synchronous write (the durable checkpoint itself)."""
        return lv.checkpoint_at_optimum(self.baseline, self.write_cost_before_min).interval_min

    @property
    def after(self) -> rs.RestartBudget:
        """The day after every lever that saves."""
        return self.steps[-1].after if self.steps else self.baseline

    @property
    def interval_after_min(self) -> float:
        return self.after.interval_min

    @property
    def after_levers_minutes_per_day(self) -> float:
        return self.after.minutes_per_day

    @property
    def savings(self) -> dict[str, float]:
        """{lever name: minutes per day saved}, in the order applied."""
        return {s.lever.name: s.saved_minutes_per_day for s in self.steps}

    @property
    def order(self) -> tuple[str, ...]:
        """The lever order: the pulled levers, largest saving first (the one source of every printed order)."""
        return tuple(s.lever.name for s in self.steps)

    @property
    def floor_terms(self) -> list:
        """The floor's named terms (:func:`course_lib.floor.terms`)."""
        return fl.terms(self.after)

    @property
    def ft_groups(self) -> int:
        """Replica groups of per-step fault tolerance (notebook 10)."""
        return fl.groups_for(self.scenario)

    @property
    def ft_floor_minutes_per_day(self) -> float:
        """The floor with per-step fault tolerance across :attr:`ft_groups` groups, on the after-levers day."""
        day = dataclasses.replace(self.after, idle_share=0.0)
        r = self.scenario.replicas
        return sum(fl.per_mode_groups(day, self.ft_groups, r.stall_min, r.rejoin_min).values())

    @property
    def gpus_lost(self) -> float:
        """The after-levers loss as GPUs' worth of the job (n_gpus x the share of the day lost)."""
        return self.n_gpus * self.after.loss_fraction

    # ----- presentation -----
    def rows(self) -> list[AnswerRow]:
        """The answer as table rows (the ledger of notebook 09 and the CLI print these)."""
        b, f = self.baseline, self.after
        rows = [
            AnswerRow("gpus", "GPUs in the job", self.n_gpus, "GPUs", ",.0f"),
            AnswerRow("rate_per_gpu_day", "failure rate per GPU", self.rate_per_gpu_day, "per GPU-day", ".3e"),
            AnswerRow("failures_per_day", "failures per day", self.failures_per_day, "per day", ".3g"),
            AnswerRow("baseline_minutes_per_day", "baseline: restarts (the question's)", b.restart_minutes_per_day, "min/day", ".1f"),
            AnswerRow("baseline_loss_pct", "baseline: restarts (the question's)", 100 * self.baseline_restart_fraction, "% of the day", ".2f"),
            AnswerRow("baseline_write_minutes_per_day", "baseline: blocking synchronous writes", b.write_minutes_per_day, "min/day", ".2f"),
            AnswerRow("baseline_total_minutes_per_day", "baseline: restarts + writes", b.minutes_per_day, "min/day", ".1f"),
            AnswerRow("baseline_total_pct", "baseline: restarts + writes", 100 * b.loss_fraction, "% of the day", ".2f"),
            AnswerRow("baseline_ettr_pct", "baseline ETTR", 100 * b.ettr, "% of the day", ".3g"),
        ]
        for stage, minutes in b.stages.as_dict().items():
            rows.append(AnswerRow(f"stage_{stage}_min", f"{stage} per restart (baseline)", minutes, "min", ".2f"))
        rows += [
            AnswerRow("write_cost_before_s", "blocking write, synchronous checkpoint", 60 * self.write_cost_before_min, "s", ".3g"),
            AnswerRow("interval_before_min", "optimal interval with the synchronous write", self.interval_before_min, "min", ".2f"),
            AnswerRow("snapshot_cost_ms", "blocking in-memory snapshot", 60_000 * self.snapshot_cost_min, "ms", ".3g"),
            AnswerRow("interval_after_min", "optimal interval after the in-memory checkpoint", self.interval_after_min, "min", ".2f"),
        ]
        for step in self.steps:
            rows.append(AnswerRow(f"saving_{_slug(step.lever.name)}", f"saved by {step.lever.name}",
                                  step.saved_minutes_per_day, "min/day", ".2f"))
        for lever, saving in self.left_out:
            rows.append(AnswerRow(f"left_out_{_slug(lever.name)}", f"{lever.name}, left out (it would save)",
                                  saving, "min/day", ".2f"))
        rows += [
            AnswerRow("after_levers_minutes_per_day", "loss after the levers", f.minutes_per_day, "min/day", ".2f"),
            AnswerRow("after_levers_pct", "loss after the levers", 100 * f.loss_fraction, "% of the day", ".3f"),
            AnswerRow("after_levers_ettr_pct", "ETTR after the levers", 100 * f.ettr, "% of the day", ".3g"),
            AnswerRow("floor_minutes_per_day", "floor", f.floor_minutes_per_day, "min/day", ".2f"),
            AnswerRow("floor_pct", "floor", 100 * f.floor_fraction, "% of the day", ".3f"),
        ]
        for t in self.floor_terms:
            rows.append(AnswerRow(f"floor_term_{_slug(t.name)}", f"floor term: {t.symbol}", t.minutes_per_day, "min/day", ".2f"))
        if self.spread is not None:
            r = self.spread
            rows += [AnswerRow("floor_central_pct", "floor, central (median of the inputs' range)", 100 * r.floor.central, "% of the day", ".3f"),
                     AnswerRow("floor_low_pct", "floor, 5th percentile", 100 * r.floor.low, "% of the day", ".3f"),
                     AnswerRow("floor_high_pct", "floor, 95th percentile", 100 * r.floor.high, "% of the day", ".3f"),
                     AnswerRow("after_levers_central_pct", "loss after the levers, central", 100 * r.loss.central, "% of the day", ".3f"),
                     AnswerRow("after_levers_low_pct", "loss after the levers, 5th percentile", 100 * r.loss.low, "% of the day", ".3f"),
                     AnswerRow("after_levers_high_pct", "loss after the levers, 95th percentile", 100 * r.loss.high, "% of the day", ".3f")]
        if self.spare is not None:
            v = self.spare
            rows += [AnswerRow("spare_gross_minutes_per_day", "hot spare: what its faster restart saves", v.gross, "min/day", ".2f"),
                     AnswerRow("spare_cost_minutes_per_day", "hot spare: its idle GPUs", v.cost, "min/day", ".2f"),
                     AnswerRow("hot_spare_net_minutes_per_day", "hot spare, net", v.net, "min/day", ".2f"),
                     AnswerRow("spare_break_even_reschedule_min", "hot spare pays above this reschedule", v.break_even_min, "min", ".2f")]
        rows.append(AnswerRow("floor_per_step_ft_pct", f"floor with per-step fault tolerance ({self.ft_groups} groups)",
                              min(100 * self.ft_floor_minutes_per_day / MINUTES_PER_DAY, 100.0), "% of the day", ".3f"))
        for lever, g in self.fewer:
            rows.append(AnswerRow(f"floor_{_slug(lever.name)}_pct", f"floor with {lever.name}", 100 * g.floor_fraction,
                                  "% of the day", ".3f"))
        rows.append(AnswerRow("gpus_lost_after_levers", "loss after the levers, in GPUs' worth", self.gpus_lost, "GPUs", ".3g"))
        return rows

    def as_dict(self) -> dict:
        """JSON-ready: {key: {label, value, unit}} plus ``text``."""
        out = {r.key: {"label": r.label, "value": r.value, "unit": r.unit} for r in self.rows()}
        out["spoken"] = self.spoken
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
        names = ["baseline (with writes)"] + [f"+ {st.lever.name}" for st in self.steps] + [
            f"  {lever.name} (left out)" for lever, _ in self.left_out]
        w = max(24, *(len(n) for n in names))  # every row's numbers under their header, however long a name
        lines = [f"{'':{w}s} {'saves min/day':>13s} {'left min/day':>12s} {'loss':>8s}",
                 f"{names[0]:{w}s} {'':13s} {b.minutes_per_day:12.2f} {b.loss_fraction:8.3%}"]
        for name, step in zip(names[1:], self.steps):
            lines.append(f"{name:{w}s} {step.saved_minutes_per_day:13.2f} {step.after.minutes_per_day:12.2f} "
                         f"{step.after.loss_fraction:8.3%}")
        for name, (lever, saving) in zip(names[1 + len(self.steps):], self.left_out):
            lines.append(f"{name:{w}s} {saving:13.2f}")
        return "\n".join(lines)

    @property
    def stage_texts(self) -> prose.Added:
        """The baseline's four stages and their total as printed, each correctly rounded (``exact``: they add up as printed)."""
        st = self.baseline.stages
        return prose.added([st.detect, st.reschedule, st.reload, st.rewind], st.total)

    @property
    def lemon_words(self) -> str:
        """What lemon-node removal buys, in words: the lever's factor (clamped at 1 where it bought nothing) and the bound.

        The one phrasing of the lever (the 2-minute answer, the answer sheet, the drill, notebook 08); empty
        when the answer has no rate levers.
        """
        fewer = {lever.name: (lever, g) for lever, g in self.fewer}
        if "lemon-node removal" not in fewer:
            return ""
        lever, g = fewer["lemon-node removal"]
        bound = fewer.get("no faulty GPU / HBM3")
        cap = (f"; no removal can buy more than every faulty-GPU and HBM3 failure, x {bound[0].factor:.2f}: "
               f"{bound[1].floor_minutes_per_day:.2f} min a day") if bound else ""
        if "lemon_factor" in self.scenario.given:
            return f"lemon-node removal at the factor given, x {lever.factor:.2f}: {g.floor_minutes_per_day:.2f} min a day" + cap
        m = lv.measured_lemon_removal()
        if not m.gained:
            return (f"lemon-node removal bought nothing out of sample on a real fleet: x {m.factor:.2f} on the InfiniteHBD "
                    f"trace, against x {m.in_sample:.2f} in sample, so x {lever.factor:.2f} here" + cap)
        return (f"lemon-node removal, measured out of sample on the InfiniteHBD trace, x {lever.factor:.2f}: "
                f"{g.floor_minutes_per_day:.2f} min a day" + cap)

    @property
    def spoken(self) -> str:
        """The 2-minute answer, as a candidate says it (:func:`spoken_answer`): printed first on every face."""
        return spoken_answer(self)

    @property
    def text(self) -> str:
        """The written answer (:attr:`written`); the JSON's ``text``."""
        return self.written

    @property
    def written(self) -> str:
        """The written answer, one paragraph generated from the numbers, with every stage, lever and term (the 2-minute
        answer, :attr:`spoken`, says a dozen of them)."""
        s, b, f = self.scenario, self.baseline, self.after
        st = b.stages
        m = s.modes
        lead = (f"{_article(f'{self.n_gpus:,}')} {self.n_gpus:,}-GPU job failing at {self.rate_per_gpu_day:.2e} per GPU-day "
                f"stops {self.failures_per_day:,.2f} times a day (MTBF {self.fleet_mtbf_hours:.3g} h).")
        if not b.makes_progress:
            after = (f" After every lever that saves ({', '.join(self.order)}) a failure costs {f.per_failure_min:.3g} min: "
                     + ("the job still never catches up." if not f.makes_progress else
                        f"the job trains {f.ettr:.2%} of the day.")) if self.steps else ""
            return (lead + f" Each failure costs {st.total:.3g} min to recover from and the next comes "
                    f"{b.mtbf_min:.3g} min later on average: the job spends the whole day recovering and never trains "
                    f"(the day model caps the loss at 100 %)." + after
                    + f" Loss after the levers: {f.loss_fraction:.2%} of the day ({f.minutes_per_day:.0f} of 1,440 min); "
                    f"floor {f.floor_fraction:.2%}.")
        rng = ""
        if self.spread is not None:
            rate = f" from {self.spread.count:.0f} failures counted over {self.spread.days:g} days"
            rng = (f" Over the inputs' ranges ({self.spread.inputs_text(rate)}) the loss after the levers is {self.spread.loss.text()} and the floor "
                   f"{self.spread.floor.text()}; " + self.spread.dominance_text + ".")
        order = ", ".join(f"{x.lever.name} {x.saved_minutes_per_day:.2f}" for x in self.steps)
        terms = self.floor_terms
        term_text = prose.sum_line([t.minutes_per_day for t in terms], f.floor_minutes_per_day)
        split = self.stage_texts
        lam_t, x_t, restart_t = prose.times(self.failures_per_day, st.total, b.restart_minutes_per_day, digits=(2, 1, 1))
        writes = prose.added([b.restart_minutes_per_day, b.write_minutes_per_day], b.minutes_per_day, digits=1)
        spare = (" " + self.spare.sentence) if self.spare is not None else ""
        return (
            lead + f" First I would measure each stage from the logs (failure, detected, torn down, rendezvous complete, first "
            f"step, progress regained); until then the course splits the {st.total:.3g} minutes per restart as detection "
            f"{split.terms[0]} (a crash is seen within the launcher's {60 * m.launcher_poll_min:.2g} s poll, a hang only at NCCL's "
            f"untuned {m.untuned_hang_timeout_min:g}-minute timeout, {m.share('hang'):.0%} of failures by the course's mapping of "
            f"Table 5, a lost host at half a {m.health_check_min:g}-minute health check), reschedule {split.terms[1]}"
            + (" (what the observed minutes leave)" if "reschedule_min" not in s.given else "") + f", reload {split.terms[2]} and rewind {split.terms[3]} (half the assumed {s.checkpoint_interval_min:g}-minute "
            f"interval, plus an assumed {m.sdc_latency_min:g} min past each silent corruption)"
            + ("" if split.exact else ", each rounded on its own") + f". That is {lam_t} "
            f"a day x {x_t} min = {restart_t} min a day ({self.baseline_restart_fraction:.2%}); with the blocking synchronous "
            f"writes, {writes.terms[0]} + {writes.terms[1]} {writes.eq} {writes.total} min ({b.loss_fraction:.2%}). "
            f"Largest saving first, in minutes a day: {order}; the {60_000 * self.snapshot_cost_min:.3g} ms snapshot moves the "
            f"best interval from {self.interval_before_min:.2f} to {self.interval_after_min:.2f} min.{spare} That leaves "
            f"{f.minutes_per_day:.2f} min a day ({f.loss_fraction:.3%}), {self.gpus_lost:.3g} GPUs' worth.{rng} "
            f"The floor is {' + '.join(t.symbol for t in terms)} = {term_text} min a day "
            f"({f.floor_fraction:.3%}): detection, restart and reload of every failure, half a {60 * s.step_min:.3g} s step, and "
            f"the silent corruptions' latency with the rewind to the {s.checkpoint_interval_min:g}-minute persisted checkpoint "
            "(a checkpoint setting). It moves with fewer failures" + (f" ({self.lemon_words})" if self.lemon_words else "")
            + f", a shorter restart (in-process restart skips the scheduler, container and CUDA start-up), faster SDC "
            f"detection, or stopping fewer GPUs per failure (per-step fault tolerance across {self.ft_groups} replica groups: "
            f"{self.ft_floor_minutes_per_day:.2f} min a day). Below about 1 % of the day the next engineering minute goes to "
            "what the restart model leaves out: stragglers and slow steps."
        )



#: The ready-made tool that does each lever, as the spoken answer names it: (words, verb, citation keys, the tool in
#: full). The verb agrees with the words ("saves" / "save"); the keys are SOURCES.md's, cited where the answer sheet
#: lists the tools.
TOOLS = {
    "in-memory checkpoint": ("an in-memory checkpoint {every}, with NVRx's local checkpointing", "saves", ("nvrx-local-ckpt",),
                             "the NVIDIA Resiliency Extension's (NVRx) local checkpointing"),
    "heartbeat detection": ("heartbeats and a tuned hang timeout, with NVRx's fault-tolerance launcher", "save",
                            ("nvrx-docs",), "NVRx's fault-tolerance launcher (heartbeats and section timeouts)"),
    "reload from memory": ("reloading from host memory{peer}", "saves", ("nvrx-local-ckpt",),
                           "NVRx's local checkpoints replicated to a peer"),
    "hot-spare restart": ("a hot spare, with NVRx's in-job restart", "saves", ("nvrx-source",), "NVRx's in-job restart"),
}
#: Per-step fault tolerance, the lever on the GPUs stopped per failure (notebook 10): (name, citation keys).
PER_STEP_TOOL = ("torchft", ("torchft-readme",))

#: A number as the spoken answer writes it (digits, thousands separators, decimals), and how many it may hold.
NUMERAL = re.compile(r"\d[\d,]*(?:\.\d+)?")
MAX_SPOKEN_NUMERALS = 15
#: The speaking rate the 2-minute answer is timed at (words a minute): a measured, unhurried explanation.
SPEAKING_WORDS_PER_MIN = 150


def spoken_length(text: str) -> tuple[int, int, float]:
    """``(words, numerals, minutes)`` of an answer said aloud at :data:`SPEAKING_WORDS_PER_MIN` (notebook 12)."""
    if not isinstance(text, str):
        raise ValueError(f"text must be a str (got {type(text).__name__})")
    words = len(text.split())
    return words, len(NUMERAL.findall(text)), words / SPEAKING_WORDS_PER_MIN

#: The stage names as spoken.
STAGE_WORDS = {"detect": "detection", "reschedule": "rescheduling", "reload": "reload", "rewind": "rewound work"}


def _as_given(x: float) -> str:
    """A number of the question as given (2, 15), else correctly rounded to two significant figures."""
    return f"{round(x):,d}" if round(x) != 0 and abs(x - round(x)) < 1e-9 else prose.sig(x)


def spoken_answer(a: "Answer") -> str:
    """The 2-minute answer: four moves, first person, at most about a dozen numbers at two significant figures.

    1. what the loss is (the question's failures a day x minutes per restart, as a share of the day);
    2. the four stages of a restart, largest first, labelled as the course's assumed split until measured;
    3. the levers, largest saving first, each with the ready-made tool that does it (:data:`TOOLS`), the spare's
       verdict without its arithmetic, and what is left;
    4. the floor as one number with its range over the assumed inputs, what dominates the range, and what moves it.
    Every number is read off the answer's own records (:class:`Answer`); the written answer (:attr:`Answer.written`)
    carries the rest. tests/test_spoken.py counts its words and numbers and checks both orders.
    """
    s, b, f = a.scenario, a.baseline, a.after
    st = b.stages
    sig = prose.sig
    pct = lambda x: sig(100 * x) + " %"  # noqa: E731
    fpd, per = _as_given(a.failures_per_day), _as_given(st.total)
    if not b.makes_progress:
        first = (f"{fpd} failures a day at {per} minutes each means a failure every {sig(b.mtbf_min)} minutes, sooner than "
                 "one restart ends: the job never trains.")
    else:
        first = f"{fpd} failures a day at {per} minutes each is {pct(a.baseline_restart_fraction)} of the day."
    stages = sorted(st.as_dict().items(), key=lambda kv: -kv[1])
    m = s.modes
    hang_part = m.share("hang") * s.detect_by_mode["hang"] / st.detect if st.detect > 0 else 0.0
    said = []
    for i, (name, minutes) in enumerate(stages):
        words = f"{STAGE_WORDS[name]} {sig(minutes)}" + (" minutes" if i == 0 else "")
        if name == "detect" and hang_part > 0.5:
            words += ", mostly hangs waiting out NCCL's untuned timeout"
        if name == "reschedule" and "reschedule_min" not in s.given:
            words += ", the remainder"
        said.append(words)
    second = ("I would measure each stage from the logs first; until then I assume the course's split, largest first: "
              + "; ".join(said[:-1]) + "; and " + said[-1] + ".")
    v = a.spare
    spare = (" A dedicated hot spare would cost more in idle GPUs than it saves, so I would pool spares across jobs."
             if v is not None and not v.pulled and not v.pooled and v.net < 0 else "")
    near_floor = f.makes_progress and f.loss_fraction - f.floor_fraction < 0.1 * f.loss_fraction
    left = (" That leaves little more than the floor." if near_floor else
            f" That leaves {pct(f.loss_fraction)} of the day, checkpoint writes included." if f.makes_progress else
            " The job still never trains.")

    def levers(interval: bool) -> str:
        if not a.steps:
            return "No lever brings a restart under the time between failures."
        parts = []
        for i, step in enumerate(sorted(a.steps, key=lambda x: -x.saved_minutes_per_day)):
            words, verb, _, _ = TOOLS[step.lever.name]
            every = f"every {sig(a.interval_after_min)} minutes" if interval else "at its optimal interval"
            words = words.format(every=every, peer=", a peer's copy when a host dies" if m.peer_copy else "")
            parts.append(f"{words}, {verb} {sig(step.saved_minutes_per_day)}" + (" minutes a day" if i == 0 else ""))
        return "The levers, largest saving first: " + "; then ".join(parts) + "."

    tool = PER_STEP_TOOL[0]
    terms = a.floor_terms
    if f.floor_fraction >= 1.0:
        fourth = "The floor is the whole day: no checkpoint helps."
    else:
        fourth = f"The floor is {pct(f.floor_fraction)} of the day"
        if a.spread is not None:
            r = a.spread
            fourth += (f", between {sig(100 * r.floor.low)} and {pct(r.floor.high)} over the assumed inputs' ranges, most "
                       f"of all {un.SPOKEN.get(r.floor_dominant, r.floor_dominant)}, which I would measure next")
        fourth += "."
        if terms and terms[0].minutes_per_day > 0.5 * f.floor_minutes_per_day:
            fourth += " Most of it is detecting, restarting and reloading after every failure, which no checkpoint removes."
    fourth += (" Only fewer failures, a faster detection and restart, or stopping fewer GPUs per failure, with "
               f"{tool}'s per-step fault tolerance, move it.")
    text = " ".join((first, second, levers(True) + spare + left, fourth))
    if len(NUMERAL.findall(text)) > MAX_SPOKEN_NUMERALS:  # four levers and a gap to the floor: the interval goes unsaid
        text = " ".join((first, second, levers(False) + spare + left, fourth))
    return text


def _spare_verdict(s: Scenario, baseline: rs.RestartBudget, steps, left_out, levers) -> SpareVerdict | None:
    from .data import sourced

    spare = next((x for x in levers if x.stage == "reschedule"), None)
    if spare is None:
        return None
    others = [x.lever for x in steps if x.lever.stage != "reschedule"]
    without = lv.apply_levers(baseline, others)[-1]
    with_spare = spare(without)
    w = with_spare.interval_min / (with_spare.interval_min + with_spare.write_cost_min) if with_spare.interval_min + with_spare.write_cost_min > 0 else 1.0
    rho0, rho1, i = without.busy_share, with_spare.busy_share, with_spare.idle_share
    gross = MINUTES_PER_DAY * w * (rho0 - rho1)
    cost = MINUTES_PER_DAY * w * i * (1.0 - rho1)
    pulled = any(x.lever.stage == "reschedule" for x in steps)
    requeue = sourced("restart_ranges.csv", "key")["kokolis_u0_low"].minutes
    return SpareVerdict(gross, cost, gross - cost, fl.spare_break_even_reschedule_min(with_spare), s.reschedule_min, requeue,
                        pulled, s.modes.spares_pooled)


def answer(scenario: Scenario | None = None, data_dir=None, spread_draws: int = 4_000) -> Answer:
    """The course's answer for one :class:`~course_lib.scenario.Scenario` (notebook 09).

    The baseline day (:func:`course_lib.restart.baseline_budget`), the four levers of
    :func:`course_lib.levers.default_levers` applied largest saving first while each saves, the
    alternatives that cut the failure rate instead (:func:`course_lib.levers.rate_levers`), and the
    floor's and the loss's range (:func:`course_lib.uncertainty.floor_range`, ``spread_draws`` draws;
    0: none). ``answer()`` is the course's 4,096-GPU question.
    """
    scenario = Scenario() if scenario is None else scenario
    if not isinstance(scenario, Scenario):
        raise ValueError(f"scenario must be a Scenario (got {type(scenario).__name__}); build one with Scenario.from_params(...)")
    baseline = rs.baseline_budget(scenario)
    levers = lv.default_levers(scenario, data_dir)
    pulled, left_out = lv.order_by_saving(baseline, levers)
    steps = tuple(lv.waterfall(baseline, pulled, largest_first=False))
    after = steps[-1].after if steps else baseline
    fewer = tuple((lever, lever(after)) for lever in lv.rate_levers(scenario, data_dir))
    spread = (un.floor_range(scenario, n=spread_draws, data_dir=data_dir, pulled=[x.name for x in pulled])
              if spread_draws else None)
    spare = _spare_verdict(scenario, baseline, steps, left_out, levers)
    return Answer(scenario, baseline, steps, tuple(left_out), fewer, spread, spare)


#: The reported ETTRs of large runs (data/training_step.csv): (run, ETTR row, fleet-size row).
REPORTED_RUNS = (("Llama 3 405B", "llama3_effective_training_time", "llama3_405b_16k_gpus"),
                 ("MegaScale", "megascale_ettr", "megascale_ettr_gpus"),
                 ("ByteRobust", "byterobust_ettr", "byterobust_ettr_gpus"))


@dataclass(frozen=True)
class ReportedEttr:
    """A large run's reported effective training time beside the course's restart-only model at its fleet size.

    reported: the run's ETTR (a fraction; Llama 3's and MegaScale's are lower bounds, "higher than 90 %"),
    counting every cause. baseline, after_levers: the course's ETTR at ``gpus`` with the scenario's
    per-GPU rate, before and after the levers: restarts and checkpoints only.
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
    """The sanity check of notebook 08: the course's restart-only ETTR at each reported run's fleet size."""
    from .data import sourced

    s = Scenario() if scenario is None else scenario
    t = sourced("training_step.csv", "key", data_dir)
    out = []
    for run, ettr_key, gpus_key in REPORTED_RUNS:
        gpus = int(t[gpus_key].value)
        a = answer(s.replace(n_gpus=gpus), data_dir, spread_draws=0)
        out.append(ReportedEttr(run, gpus, t[ettr_key].value / 100.0, a.baseline.ettr, a.after.ettr, t[ettr_key].source))
    return out
