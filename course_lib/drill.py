"""The interview drill: the follow-ups a senior interviewer asks, answered with the course's own numbers (notebook 12).

The first answer to *"a 4,096-GPU run loses 2 % a day to restarts; fix it, and say where the floor is"*
(:attr:`course_lib.answer.Answer.text`, ANSWER_SHEET.md) is followed by questions that probe it. Each
follow-up here is one function ``context -> (question, model answer)`` registered by :func:`follow_up`
with the notebook that derives it; every number in its text is computed by course_lib at the given
:class:`~course_lib.scenario.Scenario`, so the drill of notebook 12 and the "Follow-ups" section of
ANSWER_SHEET.md (scripts/render_docs.py) are one source and change with the fleet. The lever order and
the spare's verdict come from the one :func:`course_lib.answer.answer`, never from a list typed here.

:func:`follow_ups` renders them all (a list of :class:`FollowUpAnswer`, numbered in registry order);
:func:`markdown` joins them into one markdown section with links relative to a folder. The course's
choices that are not sourced (an assumed step-time spread, the what-if factors) are named constants
below, stated as choices in the answers they feed.

Units: minutes, like the rest of course_lib; the answers print seconds or percentages where a person
would say them.
"""
from __future__ import annotations

import dataclasses
import functools
import html
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from . import failures as fa
from . import floor as fl
from . import interval as iv
from . import levers as lv
from . import modes as md
from . import prose
from . import step as st
from . import uncertainty as un
from .scenario import Scenario
from .units import MINUTES_PER_DAY

__all__ = ["FollowUp", "FollowUpAnswer", "Reveal", "REGISTRY", "follow_up", "follow_ups", "ask", "reveal", "markdown", "notebooks_linked",
           "STEP_CV", "TIGHT_TIMEOUT_FACTOR", "FLEET_FACTOR", "BIGGER_FLEET_FACTOR", "RATE_FACTOR",
           "CHEAPER_SNAPSHOT_FACTOR", "TARGET_INTERVAL_MIN", "SDC_LATENCIES_MIN", "CONFIDENCE", "LOOP_RESTARTS_CAP",
           "NODES_PER_SWITCH", "HOURLY_INTERVAL_MIN"]

# The drill's what-ifs (course choices, stated in the answers; none is a measurement)
STEP_CV = 0.1  # assumed coefficient of variation of healthy step times (no sourced value: measure yours)
TIGHT_TIMEOUT_FACTOR = 1.5  # a too-short hang timeout: this x the longest legitimate gap
BIGGER_FLEET_FACTOR = 4  # follow-up 5's larger fleet (4,096 -> 16,384: Llama 3's "up to 16K")
FLEET_FACTOR = 2  # follow-up 6: the fleet doubles
RATE_FACTOR = 2  # follow-up 6: twice Llama 3's per-GPU rate
CHEAPER_SNAPSHOT_FACTOR = 10  # follow-up 7: a snapshot this much cheaper leaves the floor where it is
TARGET_INTERVAL_MIN = 1.0  # the interval an interviewer asks for
SDC_LATENCIES_MIN = (10.0, 60.0, 24 * 60.0)  # noticed by a loss-spike check, an hourly hash, a daily eval (the detectors)
CONFIDENCE = 0.95  # the confidence of a counted rate's exact Poisson interval
LOOP_RESTARTS_CAP = 3  # a restart-loop guard's cap (NVRx's max_no_progress_restarts default, data/restart_ranges.csv)
NODES_PER_SWITCH = 4  # the what-if's nodes behind one leaf switch (a course choice: the spare and two buddy pairs)
HOURLY_INTERVAL_MIN = 60.0  # the other reading of the 15 minutes: downtime only, hourly checkpoints

#: Table 5's components that stay broken on the node they failed (a restart onto it fails again): the
#: GPU and host hardware rows (the course's reading of the component names).
NODE_HARDWARE = ("Faulty GPU", "GPU HBM3 Memory", "GPU SRAM Memory", "GPU System Processor", "GPU Thermal Interface + Sensor",
                 "NIC", "SSD", "Power Supply", "Server Chassis", "IO Expansion Board", "CPU", "System Memory")
#: Table 5's components that a per-job fix removes: they do not scale with the GPUs.
PER_JOB = ("Software Bug", "Dependency")
#: Table 5's network components: a fault there can take several nodes at once.
NETWORK = ("Network Switch/Cable",)

ROOT = Path(__file__).resolve().parent.parent
PERCENT = 0.01  # "1 % of the day", in GPUs' worth


def _lab_scale() -> float:
    """The factor by which the torchft lab's CPU medians are scaled to the fleet (data/replica_lab.csv)."""
    from .data import load_table

    scales = {float(r["scale"]) for r in load_table("replica_lab.csv").rows if r["unit"] != "x"}
    (scale,) = scales
    return scale


def _central_hang_share(components) -> float:
    """The count-weighted central hang share of some Table 5 components (data/failure_modes.csv)."""
    from .data import failure_modes, llama3_table5

    t5 = llama3_table5()
    counts = dict(zip(t5["component"], t5["count"].tolist()))
    rows = [r for r in failure_modes().rows if r["component"] in components]
    return sum(counts[r["component"]] * float(r["hang_share_central"]) for r in rows) / sum(counts[r["component"]] for r in rows)


@dataclass(frozen=True)
class FollowUp:
    """One registered follow-up: a key, the notebook that derives it, and ``build(ctx) -> (question, answer)``."""

    key: str
    notebook: str  # file name in notebooks/, e.g. "03-anatomy-of-a-restart.ipynb"
    build: Callable[["_Context"], tuple[str, str]] = dataclasses.field(compare=False)


@dataclass(frozen=True)
class FollowUpAnswer:
    """A follow-up rendered at one scenario: number, question, model answer (markdown), its notebook."""

    number: int
    key: str
    question: str
    answer: str
    notebook: str
    answered: str | None = dataclasses.field(default=None, compare=False)  # the candidate's own answer, typed first

    def link(self, base: str = "") -> str:
        """Markdown link to the notebook that derives it, relative to ``base`` (a folder ending in '/', or '')."""
        return f"[notebook {self.notebook[:2]}]({base}{self.notebook})"

    def markdown(self, base: str = "") -> str:
        """The question and its model answer, open (the answer sheet's form)."""
        return (f"**Follow-up {self.number}.** *{self.question}*\n\n{self.answer}\n\n"
                f"Derived in {self.link(base)}.")

    def drill_markdown(self) -> str:
        """The follow-up as the drill shows it (notebook 12): the question, then the model answer folded until opened."""
        return Reveal(f"**Follow-up {self.number}.** *{self.question}*",
                      f"{self.answer}\n\nDerived in {self.link()}.", self.answered)._repr_markdown_()

    def _repr_markdown_(self) -> str:
        return self.drill_markdown()

    def __repr__(self) -> str:
        return f"Follow-up {self.number}. {self.question}\n{self.answer}\n(derived in notebook {self.notebook[:2]})"


#: The fold's label before the candidate has answered, and after.
ANSWER_FIRST = ("Model answer: open it once you have answered (aloud, within two minutes, or typed into "
                "<code>my_answer</code> in the cell above)")
COMPARE = "Model answer: compare it with yours"


@dataclass(frozen=True)
class Reveal:
    """A prompt, then a model answer that stays folded until the candidate opens it (notebook 12's drill).

    ``answered`` is what the candidate committed first (the ``my_answer`` string of the cell): when it is
    given, it is shown above the model answer, which is then open. Shown in JupyterLab and on the website
    alike as markdown with an HTML ``<details class="course-answer">`` (the website adds a box to type the
    answer into and a two-minute clock). Citations in the answer read as author and year, linked to the
    bibliography (:mod:`course_lib.citations`).
    """

    prompt: str
    answer: str
    answered: str | None = None
    sources_md: str = "../SOURCES.md"  # the bibliography, from notebooks/

    def _repr_markdown_(self) -> str:
        from . import citations

        body = citations.render(self.answer, citations.markdown_link(self.sources_md))
        mine = (self.answered or "").strip()
        if not mine:
            return (f"{self.prompt}\n\n<details class=\"course-answer\"><summary>{ANSWER_FIRST}</summary>\n\n"
                    f"{body}\n\n</details>")
        quoted = "\n".join("> " + html.escape(line) for line in mine.splitlines())
        return (f"{self.prompt}\n\n**Your answer** (committed before the reveal):\n\n{quoted}\n\n"
                f"<details class=\"course-answer\" open><summary>{COMPARE}</summary>\n\n{body}\n\n</details>")

    def __repr__(self) -> str:
        return f"{self.prompt}\n(model answer folded: display it in a notebook, or read .answer)"


def reveal(prompt: str, answer: str, answered: str | None = None) -> Reveal:
    """``answer`` folded under ``prompt`` until opened; ``answered``: the candidate's own answer, committed first."""
    return Reveal(prompt, answer, answered)


REGISTRY: dict[str, FollowUp] = {}
"""Every follow-up by key, in the order the drill asks them."""


def follow_up(key: str, notebook: str):
    """Register ``build(ctx) -> (question, answer markdown)`` as the follow-up ``key``, derived in ``notebook``."""
    def register(build):
        if key in REGISTRY:
            raise ValueError(f"follow-up key {key!r} is registered twice")
        REGISTRY[key] = FollowUp(key, notebook, build)
        return build
    return register


class _Context:
    """What the follow-ups read: the scenario, its answer, computed once."""

    def __init__(self, scenario: Scenario):
        self.s = scenario
        self.a = _answer(scenario, 4_000)
        self.m = scenario.modes
        self.b, self.f = self.a.baseline, self.a.after

    def other(self, **changes):
        """The answer (no Monte Carlo range) for the scenario with some inputs changed."""
        return _answer(self.s.replace(**changes), 0)


@functools.lru_cache(maxsize=32)
def _answer(scenario: Scenario, draws: int):
    from .answer import answer

    return answer(scenario, spread_draws=draws)


def _s(minutes: float) -> str:
    """Minutes read aloud: '110 s', '2.5 s', '22 ms' below a tenth of a second, 'x min' from ten minutes on, 'x h' from two hours."""
    sec = 60 * minutes
    if sec < 0.1:
        return f"{1000 * sec:.3g} ms"
    if minutes >= 120:
        return f"{minutes / 60:.3g} h"
    return f"{sec:.3g} s" if sec < 600 else f"{minutes:.3g} min"


def _pct(fraction: float, digits: int = 2) -> str:
    return format(fraction, f".{digits}%")


#: The window of the repeat-fault share the same-node follow-up quotes (a week, as notebook 13 measures it).
REPEAT_WINDOW_DAYS = 7.0


def _cite(*sources: str) -> str:
    """The citation (' [@key1; @key2]' form) of the keys found in sources' text (data/ rows' ``source`` column), each once; '' if none."""
    keys = []
    for text in sources:
        for group in re.findall(r"\[(@[^\[\]]*)\]", text):
            keys += [k for k in re.findall(r"@([A-Za-z0-9][\w-]*)", group) if k not in keys]
    return f" [{'; '.join('@' + k for k in keys)}]" if keys else ""


def _rr():
    from .data import sourced

    return sourced("restart_ranges.csv", "key")


def _llama3_source() -> str:
    from .data import failure_logs

    return failure_logs().where("run", "Llama 3 405B")["source"][0]


def _llama3_rate() -> tuple[float, int, int, float]:
    from .data import failure_logs

    row = failure_logs().where("run", "Llama 3 405B").rows[0]
    ev, gpus, days = int(row["events_low"]), int(row["gpus"]), float(row["period_days"])
    return fa.rate_per_gpu_day(ev, gpus, days), ev, gpus, days


def _order(a) -> str:
    return ", ".join(f"{x.lever.name} {x.saved_minutes_per_day:.2f}" for x in a.steps)


# ---------------------------------------------------------------- the follow-ups, in the order asked
@follow_up("largest_first", "03-anatomy-of-a-restart.ipynb")
def _largest_first(c: _Context):
    b, a = c.b, c.a
    parts = {k: v for k, v in b.breakdown().items() if v > 0}
    ranked = sorted(parts, key=parts.get, reverse=True)
    order = ", ".join(f"{k} {parts[k]:.1f}" for k in ranked)
    first = a.steps[0]
    left = "; ".join(f"{lever.name} would save {saving:+.2f}, so it is left out" for lever, saving in a.left_out)
    q = "Which stage would you attack first, and what does each lever buy in minutes a day?"
    ans = (f"Per day the baseline loses {b.minutes_per_day:.1f} min: {order} min by stage. Largest saving first, each measured "
           f"on what the previous lever left: **{_order(a)} min a day**. The first, {first.lever.name}, attacks two terms at "
           f"once: the rewind (half the interval) and today's blocking writes. Heartbeat detection is second, not first: at the "
           f"baseline a crash is already seen within the launcher's {_s(c.m.launcher_poll_min)} poll, so the lever moves only "
           f"the hangs (NCCL's {c.m.untuned_hang_timeout_min:g} min down to a tuned {_s(c.m.hang_timeout_min)}) and the lost "
           f"hosts (a {c.m.health_check_min:g}-minute health check down to a {_s(c.m.host_heartbeat_min)} heartbeat)."
           + (f" The hot spare: {left}." if left else ""))
    return q, ans


@follow_up("detection_and_hangs", "03-anatomy-of-a-restart.ipynb")
def _detection(c: _Context):
    s, m, f = c.s, c.m, c.f
    step = s.step_min
    gap = max(step, s.snapshot_cost_min)
    hang = m.share("hang")
    lam = f.failures_per_day
    per_timeout_min = lam * hang  # minutes a day per minute of timeout
    tight = TIGHT_TIMEOUT_FACTOR * gap
    kills = md.false_kills_per_day(tight, step, STEP_CV)
    crash = next(x for x in f.modes if x.mode == "crash")
    restart_min = crash.detect + crash.reschedule + crash.reload + f.rewind_by_mode()["crash"]
    rr = _rr()
    cite_nvrx = _cite(rr["nvrx_workload_check_interval"].source, rr["nvrx_safety_factor"].source)
    cite_torch = _cite(rr["torchrun_monitor_interval"].source)
    cite_host = _cite(rr["nvrx_inprocess_heartbeat_timeout"].source)
    after = s.detect_after_by_mode
    q = (f"What is your detection, per failure? What is the {_s(m.rank_monitor_poll_min)} poll? How do you set the hang "
         "timeout, and what does a too-short one cost?")
    ans = (f"A **crash** (the process exits) is seen by the launcher: torchrun polls its workers every "
           f"{_s(m.launcher_poll_min)}{cite_torch}, and the other nodes' launchers see the rendezvous round it opens at their "
           f"next poll: {_s(after['crash'])} in all, before any lever. The {_s(m.rank_monitor_poll_min)} is NVRx's "
           f"`workload_check_interval`{cite_nvrx}: the period at which each rank monitor evaluates its rank's heartbeat and "
           f"section *timeouts*; it is not a detection time and it never sees a crash. A **hang** exits nothing: it is seen "
           f"only when a timeout expires, and the timeout must exceed the longest legitimate gap between heartbeats, the "
           f"longer of the step ({_s(step)}) and the blocking snapshot ({_s(s.snapshot_cost_min)}). At {m.safety_factor:g} x "
           f"that gap it is **{_s(m.hang_timeout_min)}**, seen half a monitor period later: {_s(after['hang'])} (NCCL's "
           f"untuned {m.untuned_hang_timeout_min:g} min at the baseline). A **lost host** opens no rendezvous round and tells "
           f"nobody: its peers learn it from failing collectives, a cross-node heartbeat ({_s(m.host_heartbeat_min)}, NVRx "
           f"in-process restart{cite_host}), or at worst the hang timeout. {hang:.0%} of failures hang (the course's mapping of "
           f"Table 5, an assumption): each minute of hang timeout costs lambda x hang share = {per_timeout_min:.2f} min a day. "
           f"A too-short timeout kills healthy steps: at {TIGHT_TIMEOUT_FACTOR:g} x the gap ({_s(tight)}) and an assumed "
           f"step-time spread (coefficient of variation {STEP_CV:g}; measure yours), {kills:.2g} false kills a day, each a "
           f"crash's restart of about {restart_min:.2f} min: {kills * restart_min:.2g} min a day, against "
           f"{per_timeout_min * (m.hang_timeout_min - tight):.2f} min a day the shorter timeout saves on real hangs. Set it "
           "from measured gaps, not from a default collective timeout.")
    return q, ans


@follow_up("checkpoint_every_step", "06-square-root-pareto.ipynb")
def _every_step(c: _Context):
    s, f = c.s, c.f
    step = s.step_min
    persist = s.write_cost_min
    bound = st.interval_lower_bound_min(step, s.snapshot_cost_min, persist)
    binding = max((("the step", step), ("the snapshot copy", s.snapshot_cost_min), ("the persist copy", persist)),
                  key=lambda kv: kv[1])[0]
    every_snap = f.with_interval(bound)
    every_sync = f.with_write_cost(s.write_cost_min).with_interval(bound)
    q = "Why not checkpoint every step? What bounds the interval from below?"
    ans = (f"A checkpoint cannot be taken more often than once per step ({_s(step)}), and a new snapshot cannot start "
           f"before the previous copies are done: the snapshot to host memory ({_s(s.snapshot_cost_min)}) and the copy that "
           f"leaves the host for disk or a peer ({_s(persist)}). So the interval is at least {_s(bound)}; "
           f"{binding} is the longest bound" + (" and sets the interval." if f.interval_min <= bound * (1 + 1e-9) else
                                                ", but the optimum lies above it.")
           + f" With the in-memory snapshot the optimum is {f.interval_min:.2f} min, {f.interval_min / step:.1f} steps; every "
           f"step would lose {every_snap.minutes_per_day:.2f} min a day against {f.minutes_per_day:.2f} at the optimum: hardly "
           f"a difference, because the snapshot is cheap. With today's synchronous write ({_s(s.write_cost_min)} blocking) "
           f"every step would cost {every_sync.write_minutes_per_day:.0f} min a day in writes alone, "
           f"{every_sync.write_minutes_per_day / MINUTES_PER_DAY:.1%} of the day: the interval and the write cost trade "
           "against each other, and only a cheap write buys a short interval.")
    return q, ans


@follow_up("host_dies", "08-the-floor.ipynb")
def _host_dies(c: _Context):
    s, m = c.s, c.m
    # on the plan's after-levers day, the answer's floor (follow-up 7's by-mode list), not the day with every lever pulled
    with_peer, no_peer = (fl.per_mode(dataclasses.replace(c.other(peer_copy=p).after, idle_share=0.0))["host_loss"]
                          for p in (True, False))
    share = m.share("host_loss")
    q = "The snapshot is in host memory: what happens when the host dies?"
    gemini = _cite("[@gemini2023]")
    ans = (f"Its snapshot dies with it. A lost host is {share:.0%} of failures (the course's mapping of Table 5"
           f"{_cite(_llama3_source())}: host maintenance, power, chassis, CPU and memory rows; an assumption). If a peer holds "
           f"a copy (GEMINI's design{gemini}), the replacement reads the shard from the peer's memory in "
           f"{_s(s.reload_after_min)} and the host loss costs {with_peer:.2f} min a day of the floor, like a crash. Without "
           f"one it falls back to the last persisted checkpoint: read from storage ({s.reload_min:.2f} min) and a rewind of "
           f"half the persisted interval ({s.checkpoint_interval_min / 2:g} min): **{no_peer:.2f} min a day**, "
           f"{no_peer - with_peer:.2f} more. Either way the job still writes durable checkpoints: a silent corruption must "
           "rewind past the snapshot, and a whole rack can go at once.")
    return q, ans


@follow_up("hot_spare", "08-the-floor.ipynb")
def _hot_spare(c: _Context):
    s, m, a = c.s, c.m, c.a
    big = c.other(n_gpus=BIGGER_FLEET_FACTOR * s.n_gpus)
    rr = _rr()

    def line(x):
        v = x.spare
        return (f"at {x.n_gpus:,} GPUs its faster restart saves {v.gross:.2f} min a day and its idle {m.spare_gpus:g} GPUs cost "
                f"{v.cost:.2f}: net **{v.net_text} min a day**, " + ("kept" if v.pulled else "left out") +
                f" (it pays above a {v.break_even_min:.2f}-minute reschedule)")

    q = f"A hot spare is idle: is it worth it at {s.n_gpus:,} GPUs? At {BIGGER_FLEET_FACTOR * s.n_gpus:,}?"
    ans = (f"Charge the spare as lost capacity: a spare server of {m.spare_gpus:g} GPUs{_cite(_llama3_source())} is "
           f"{m.spare_gpus:g} / ({s.n_gpus:,} + {m.spare_gpus:g}) of the GPUs paid for. The restart it buys is an in-job "
           f"restart, FlashRecovery's {_s(s.restart_after_min)} end to end{_cite(rr['flashrecovery_restore_4800'].source)} "
           f"(detection, restart and a checkpoint-free recovery together, so the model takes out the crash's detection and the "
           f"reload inside it: a reschedule stage of {s.reschedule_after_min:.2f} min); DeadPool's hot swap in under "
           f"{_s(rr['deadpool_hot_swap_512'].minutes)}"
           f"{_cite(rr['deadpool_hot_swap_512'].source)} is the fast end, a re-queue ({rr['kokolis_u0_low'].minutes:.0f}-"
           f"{rr['kokolis_u0_high'].minutes:.0f} min{_cite(rr['kokolis_u0_low'].source)}) the slow one. {line(a)[0].upper() + line(a)[1:]}. "
           f"{line(big)[0].upper() + line(big)[1:]}. The verdict rests on the reschedule it replaces: here "
           f"{s.reschedule_min:.2f} min, the remainder of the question's {s.minutes_per_restart:.3g}, below every sourced re-queue; "
           f"with a {rr['kokolis_u0_low'].minutes:g}-minute re-queue the spare nets "
           f"{c.other(reschedule_min=rr['kokolis_u0_low'].minutes).spare.net:+.2f} min a day. The saving "
           "grows with the failures, so with the fleet, while one spare node's share of the fleet shrinks; a spare pooled "
           f"across jobs is free. The alternative is to continue elastically without the failed node's {m.replica_gpus:g}-GPU "
           f"replica until it is repaired: cheaper than a dedicated spare when repairs take less than "
           f"{m.spare_gpus * MINUTES_PER_DAY / (a.failures_per_day * m.replica_gpus):.0f} min at {a.failures_per_day:.2f} failures a day.")
    return q, ans


@follow_up("fleet_and_rate", "09-your-fleet.ipynb")
def _fleet_and_rate(c: _Context):
    s, a = c.s, c.a
    rate, *_ = _llama3_rate()
    doubled = c.other(n_gpus=FLEET_FACTOR * s.n_gpus)
    worse = c.other(rate_per_gpu_day=RATE_FACTOR * rate)
    per_job = lv.table5_share(PER_JOB)
    factor = FLEET_FACTOR * (1 - per_job) + per_job

    def row(x, name):
        return (f"{name}: {x.failures_per_day:.2f} failures a day, baseline {x.baseline.minutes_per_day:.0f} min a day "
                f"({_pct(x.baseline.loss_fraction)}), after the levers {x.after.minutes_per_day:.1f} "
                f"({_pct(x.after.loss_fraction)}; {', '.join(x.order)}), floor {x.after.floor_minutes_per_day:.1f}")

    q = "What if the fleet doubles? What if the failure rate is twice Llama 3's?"
    ans = (f"- {row(a, f'today, {s.n_gpus:,} GPUs')}.\n"
           f"- {row(doubled, f'{doubled.n_gpus:,} GPUs')}.\n"
           f"- {row(worse, f'{RATE_FACTOR:g} x Llama 3{_cite(_llama3_source())} ({RATE_FACTOR * rate:.2e} per GPU-day)')}.\n\n"
           "The restart terms and the floor grow in proportion to the failures; the checkpoint term only with the square "
           "root (the interval re-optimises), and a bigger fleet has a smaller shard, so a cheaper snapshot. Not every cause "
           f"scales with the GPUs: software bugs and dependencies ({per_job:.1%} of Table 5) are per job, so doubling the fleet "
           f"multiplies the failures by about {factor:.2f}, not {FLEET_FACTOR:g}; the model scales all of them (the cautious "
           "reading). The floor takes over as the job grows.")
    return q, ans


@follow_up("floor", "08-the-floor.ipynb")
def _floor(c: _Context):
    s, a, f = c.s, c.a, c.f
    per_mode = fl.per_mode(f)
    top = max(per_mode, key=per_mode.get)
    cheap = c.other(snapshot_cost_min=s.snapshot_cost_min / CHEAPER_SNAPSHOT_FACTOR)
    lemon = next((x for x, _ in a.fewer if x.name == "lemon-node removal"), None)
    terms = a.floor_terms
    line = prose.sum_line([t.minutes_per_day for t in terms], f.floor_minutes_per_day)
    rng = (f" Over the inputs' ranges it is {a.spread.floor.text()}; {un.SPOKEN[a.spread.floor_dominant]} moves it most."
           if a.spread else "")
    halved = per_mode["sdc"] - fl.per_mode(dataclasses.replace(f, persisted_interval_min=s.checkpoint_interval_min / 2))["sdc"]
    q = "Where is the floor, and what moves it? Why does no checkpoint trick move it?"
    ans = (f"The floor is the after-levers day with a free write and a checkpoint every step: "
           f"{' + '.join(t.symbol for t in terms)} = **{line} min a day ({_pct(f.floor_fraction, 3)})** of the "
           f"{f.minutes_per_day:.2f} left after the levers. The first term rests on the hang share and the tuned timeout "
           f"(assumptions) and on the restart{'' if a.spare and a.spare.pulled else ' without a spare'}; the second on "
           f"Llama 3's batch; the third on an assumed {c.m.sdc_latency_min:g}-minute SDC latency (no source measures it in "
           f"a training job) and on the "
           f"{s.checkpoint_interval_min:g}-minute persisted interval, which *is* a checkpoint setting (persisting every "
           f"{s.checkpoint_interval_min / 2:g} min would take {halved:.2f} min a day off it). By mode: " + ", ".join(f"{k} {v:.2f}" for k, v in per_mode.items())
           + f" min a day; the {top} costs most.{rng} A cheaper snapshot changes only the rewind and the writes: "
           f"{CHEAPER_SNAPSHOT_FACTOR:g} x cheaper leaves the floor at {cheap.after.floor_minutes_per_day:.2f} min a day. What "
           f"moves it: fewer failures ({a.lemon_words}{_cite(lemon.source) if lemon else ''}), a smaller D + R (bounded below by the hang timeout and the restart's "
           "start-up), faster SDC detection, or stopping fewer GPUs per failure.")
    return q, ans


@follow_up("silent_corruption", "08-the-floor.ipynb")
def _sdc(c: _Context):
    f, m = c.f, c.m
    share = m.share("sdc")
    table = ", ".join(f"{_s(lat)}: {fl.sdc_minutes_per_day(f, lat):.2f}" for lat in SDC_LATENCIES_MIN)
    now = fl.per_mode(f)["sdc"]
    d_r = sum(x.share * (x.detect + x.reschedule + x.reload) for x in f.modes)
    crossover = (1 - share) * d_r / share
    lo, _, hi = un.sdc_latency_range(c.s)
    q = "What does silent data corruption do to this picture, in minutes? Which detector buys which latency?"
    ans = (f"It breaks the snapshot's promise. A corruption is noticed only after a latency (the course assumes "
           f"{m.sdc_latency_min:g} min: no public source measures it in a training job, so the floor's range samples "
           f"{_s(lo)} to {_s(hi)}), and every snapshot since holds corrupt state: the job must rewind to a persisted "
           f"checkpoint older than the corruption (keep more than one) and reload it from storage. At {share:.1%} of failures"
           f"{_cite(_llama3_source())} it costs **{now:.2f} min a day** of the floor. The SDC term by latency, in minutes a "
           f"day: {table}. A loss-spike and NaN check catches gross corruption within a few steps (minutes); cross-replica "
           "parameter hashes every few hundred steps catch a replica that diverged (minutes to an hour); a subtle error is "
           f"found by a daily evaluation or a replay (a day). Silent corruption costs as much as every failure's D + R "
           f"together once its latency passes (1 - s)(D + R)/s = {crossover:.0f} min. The lever is detection, not the checkpoint.")
    return q, ans


@follow_up("per_step_ft", "10-dont-restart-the-world.ipynb")
def _per_step_ft(c: _Context):
    from . import replicas as rp

    s, m = c.s, c.m
    rr = _rr()
    g = fl.groups_for(s)
    by = fl.by_strategy(s)
    whole, spare = (sum(by[k].values()) for k in fl.STRATEGIES[:2])
    rep_ = s.replicas  # with groups, on the plan's after-levers day: the floor the answer's table prints
    ft_by = fl.per_mode_groups(dataclasses.replace(c.a.after, idle_share=0.0), g, rep_.stall_min, rep_.rejoin_min)
    ft = c.a.ft_floor_minutes_per_day
    v = c.a.spare  # the answer's spare verdict: a dedicated spare's idle GPUs are its cost (none when pooled)
    idle = f", plus {v.cost:.2f} for its idle GPUs" if v is not None and not v.pooled else " pooled across jobs"
    rep = s.replicas
    q = "Would you restart the whole job at all? What does per-step fault tolerance cost and save?"
    ans = (f"Not for every failure. With per-step fault tolerance (torchft{_cite('[@torchft-readme; @torchft-blog]')}) each of "
           f"the {g} data-parallel replicas of "
           f"{m.replica_gpus:g} GPUs is a replica group: a failure stops its group, which rejoins with weights from a healthy "
           f"peer in about {_s(rep.rejoin_min)}, while the others stall only for the quorum change ({_s(rep.stall_min)}); both "
           f"are the course's own CPU lab medians x {_lab_scale():g} (an assumption); on GPUs a group that dies holds its peers at "
           f"most torchft's Manager timeout, {_s(rr['torchft_manager_timeout'].minutes)}{_cite(rr['torchft_manager_timeout'].source)}. "
           f"The floor falls from {whole:.2f} min a day (whole-job restart; {spare:.2f} with an in-job restart on a dedicated "
           f"spare{idle}) to **{ft:.2f} min a day**. What stays: detection (a hang still stalls every group until its timeout, "
           f"{ft_by['hang']:.2f} min a day) and the rewind past a silent corruption "
           f"({ft_by['sdc']:.2f}): every replica averaged the corrupt gradient. The price: the groups are the "
           f"job's data-parallel replicas, so no GPU is added, but HSDP shards the optimizer state only inside a group: "
           f"{s.model_params:.3g} x {s.checkpoint_bytes_per_param:g} B / {m.replica_gpus:g} = {rp.replica_shard_gb(s):.0f} GB per "
           f"GPU, against the {s.shard_gb:.2g} GB of the fully sharded job; the global batch is smaller while a group is out; "
           "and the rejoin is a process restart of its own.")
    return q, ans


@follow_up("ettr_gap", "08-the-floor.ipynb")
def _ettr_gap(c: _Context):
    from .data import sourced

    s, a = c.s, c.a
    ts = sourced("training_step.csv", "key")
    reported = ts["llama3_effective_training_time"].value
    rate, ev, gpus, days = _llama3_rate()
    theirs = c.other(n_gpus=gpus, rate_per_gpu_day=rate)
    planned, _, per_day = fa.planned_interruptions()
    q = (f"Your restart-only ETTR is about {100 * a.after.ettr:.1f} %; Llama 3 reports over {reported:g} %. "
         "Where does the rest go?")
    ans = (f"Two things differ. First the fleet: Llama 3's log{_cite(_llama3_source())} is {ev} unexpected interruptions in "
           f"{days:g} days on up to {gpus:,} GPUs, {theirs.failures_per_day:.1f} a day, and at the question's minutes per "
           f"restart that alone is a restart-only ETTR of {100 * theirs.baseline.ettr:.1f} % ({100 * theirs.after.ettr:.1f} % "
           f"with the levers); your {s.n_gpus:,} GPUs fail {a.failures_per_day:.2f} times a day. Second, their figure counts "
           f"everything and is a lower bound{_cite(ts['llama3_effective_training_time'].source)}: {planned} planned "
           "interruptions in the same days, job start-up, slow or straggling ranks, data and evaluation stalls, and restarts "
           f"that need a person. The model counts restarts only: {100 * a.baseline.ettr:.1f} % before the levers, "
           f"{100 * a.after.ettr:.2f} % after them. Quote the restart-only number as a ceiling, not as the ETTR a team will see.")
    return q, ans


@follow_up("how_sure", "08-the-floor.ipynb")
def _how_sure(c: _Context):
    s, a, f = c.s, c.a, c.f
    k = s.observed_failures
    lo, hi = fa.poisson_ci(max(int(round(k)), 0), CONFIDENCE)
    llama, ev, gpus, days = _llama3_rate()
    llo, lhi = fa.rate_ci_per_gpu_day(ev, gpus, days, CONFIDENCE)
    bad = math.ceil(2 * a.failures_per_day)
    from .uncertainty import p_at_least

    p_bad = p_at_least(bad, a.failures_per_day)
    spread = (f"Over the inputs' ranges ({a.spread.inputs_text()}) the after-levers loss is "
              f"{a.spread.loss.text()} and the floor {a.spread.floor.text()}, the point values {_pct(f.loss_fraction, 3)} and "
              f"{_pct(f.floor_fraction, 3)} inside them; {a.spread.dominance_text}. ") if a.spread else ""
    q = "How sure are you of those numbers?"
    ans = (f"The rate is an observation of this fleet, so its uncertainty is the count it rests on: "
           f"{a.failures_per_day:.2f} a day over {s.observed_days:g} days (an assumed month) is {k:.0f} failures, whose exact "
           f"Poisson {CONFIDENCE:.0%} interval is {lo:.1f} to {hi:.1f}: {lo / k:.2f} to {hi / k:.2f} times the point rate. "
           f"Llama 3's {ev} interruptions{_cite(_llama3_source())} ({llama:.2e} per GPU-day, {CONFIDENCE:.0%} CI {llo:.2e} to "
           f"{lhi:.2e}; its 'up to' GPU count could make it up to twice as high) is a cross-check that the question's rate is "
           f"plausible, not its uncertainty. {spread}Days also vary: at {a.failures_per_day:.2f} failures a day, {p_bad:.0%} of "
           f"days have {bad} or more, so a daily average hides bad days.")
    return q, ans


@follow_up("write_cost_for_interval", "06-square-root-pareto.ipynb")
def _target_interval(c: _Context):
    s, a, b = c.s, c.a, c.b
    m = b.mtbf_min
    need = iv.write_cost_for_interval(TARGET_INTERVAL_MIN, m)
    ratio = a.write_cost_before_min / a.snapshot_cost_min
    measured = _cite(*(x.lever.source for x in a.steps if x.lever.stage == "rewind"))
    q = f"You want a {TARGET_INTERVAL_MIN:g}-minute interval. What write cost buys it, and which checkpoint gets there?"
    ans = (f"Invert Young: delta = tau^2 / (2 M). At an MTBF of {m / 60:.1f} h a {TARGET_INTERVAL_MIN:g}-minute interval "
           f"is optimal at a blocking cost of **{_s(need)}**. A synchronous torch.save of the {s.shard_gb:.2g} GB shard blocks "
           f"{_s(a.write_cost_before_min)} (optimum {a.interval_before_min:.1f} min); the in-memory snapshot{measured} blocks "
           f"{_s(a.snapshot_cost_min)} (optimum {a.interval_after_min:.2f} min). A {ratio:.0f} x cheaper write gives a "
           f"{a.interval_before_min / a.interval_after_min:.1f} x shorter interval, about the square root ({math.sqrt(ratio):.1f}). "
           "The asynchronous part of a save (the durable copy) does not count in delta, only what blocks training.")
    return q, ans


@follow_up("measure_stages", "07-fault-injection-lab.ipynb")
def _measure(c: _Context):
    bench = json.loads((ROOT / "benchmarks" / "results" / "faultlab_restart.json").read_text())
    rows = {(r["scenario"], r["setting"]): r for r in bench["summary"]}
    tuned, default = rows[("hang", "tuned")], rows[("hang", "default-like")]
    q = f"Before you split the {c.s.minutes_per_restart:.3g} minutes: how would you measure each stage?"
    ans = ("From the logs, one timestamp per event, per failure: the failure (the injected fault, or the last step a rank "
           "logged), **detected** (the launcher's or the watchdog's log line), **torn down** (the last worker gone), "
           "**rendezvous complete** (the new round's size reached), **first step**, and **progress regained** (the step of the "
           "failure reached again). Detect is failure -> detected, reschedule is detected -> first step less the reload "
           "inside it, reload is the checkpoint load's own span, rewind is first step -> progress regained. The course's "
           "lab logs exactly these events: the median stages of its hang under default-like settings are "
           + ", ".join(f"{k} {default[k]:.1f} s" for k in ("detect", "reschedule", "reload", "rewind"))
           + "; tuned, " + ", ".join(f"{k} {tuned[k]:.1f} s" for k in ("detect", "reschedule", "reload", "rewind"))
           + " (benchmarks/results/faultlab_restart.json, medians of three runs of a one-host toy: the split, not the "
           "times, carries over). "
           "Summed over failures they are the badput buckets (Google's goodput taxonomy: program start-up, checkpoint "
           f"restore, wasted progress, infrastructure recovery). Measure first: at {c.s.n_gpus:,} GPUs the {c.s.reschedule_min:.2f}-minute "
           f"reschedule the course infers is only what the other stages leave of the {c.s.minutes_per_restart:.3g} minutes, "
           f"and the hot spare's verdict turns on it ({c.a.spare.break_even_min:.2f} min).")
    return q, ans


@follow_up("same_bad_node", "07-fault-injection-lab.ipynb")
def _same_node(c: _Context):
    from .data import sourced

    f_in = sourced("floor_inputs.csv", "key")
    loops = f_in["kokolis_requeues_1024"].value
    per = c.b.per_failure_min
    hw = lv.table5_share(NODE_HARDWARE)
    rr = _rr()
    cap = rr["nvrx_max_no_progress_restarts"].value
    q = "Your job restarts onto the same node that failed. What happens, and how do you stop it?"
    a = c.a
    hw_day = a.failures_per_day * hw
    from .incidents import trace_repeat_fault_share  # measured on the InfiniteHBD trace (notebook 13)

    rep = trace_repeat_fault_share(within_days=REPEAT_WINDOW_DAYS)
    trace_src = sourced("infinitehbd_fleet.csv", "key")["servers"].source
    ans = (f"If the fault is the node's hardware ({hw:.0%} of Table 5's interruptions{_cite(_llama3_source())} are GPU and host "
           f"components that stay broken: {hw_day:.2f} of this fleet's {a.failures_per_day:.2f} failures a day), the restart fails "
           "again, and again: a crash loop. Kokolis et al. report a "
           f"large job re-queued {loops:.0f} times{_cite(f_in['kokolis_requeues_1024'].source)}; at this job's "
           f"{per:.1f} min a failure that is {round(loops * per / 60, 9):.1f} h lost. The fixes: quarantine (cordon) the node on its "
           "first hardware error and restart on a spare or without it; gate every restart on a pre-flight health check "
           "(DCGM diagnostics on the node's GPUs and a short NCCL all-reduce across the new ranks), which adds seconds to each "
           f"restart and removes the loop; and a restart-loop guard that stops after {cap:.0f} restarts without progress "
           f"(NVRx's max_no_progress_restarts{_cite(rr['nvrx_max_no_progress_restarts'].source)}) and pages a person: at most "
           f"{cap * per:.0f} min instead of hours. The fault-injection lab's guard does the same. A real fleet shows why the "
           f"node that just failed is the one to distrust: on the InfiniteHBD trace{_cite(trace_src)} {rep.share:.1%} of the job "
           f"interruptions (exact interval {rep.low:.0%}-{rep.high:.0%}) struck a server that had one within the "
           f"{rep.within_days:g} days before, against {rep.poisson_share:.1%} if the servers were identical: "
           f"{a.failures_per_day * rep.share:.2f} of this fleet's {a.failures_per_day:.2f} failures a day, if it behaves alike. "
           "So cordon a node after its fault and let it back only once a burn-in passes, rather than restarting onto it.")
    return q, ans


@follow_up("correlated_failures", "11-losing-a-node.ipynb")
def _correlated(c: _Context):
    s, _m = c.s, c.m
    f = c.f
    net = lv.table5_share(NETWORK)
    fb = f.floor_budget
    x = next(mode for mode in fb.modes if mode.mode == "host_loss")
    host = x.detect + x.reschedule + x.reload + fb.rewind_by_mode()["host_loss"]
    lost = s.detect_after_by_mode["host_loss"] + s.reschedule_min + s.reload_min + s.checkpoint_interval_min / 2
    rr = _rr()
    # the single lost host is read on the plan's day: restarted on the spare where the plan keeps one, else re-queued too
    kept = " and a spare" if c.a.spare is not None and c.a.spare.pulled else (
        ", re-queued like it, since the plan here keeps no dedicated spare")
    q = (f"A leaf switch dies and takes {NODES_PER_SWITCH} nodes with it: the spare and two buddy pairs. What does that "
         "failure cost, and how do you place spares and buddies?")
    ans = (f"Network switches and cables are {net:.1%} of Table 5's interruptions{_cite(_llama3_source())}, and one switch "
           f"carries several nodes. Here it takes both copies of two buddy pairs (each node's snapshot and its buddy's) and the "
           "spare: the job falls back to the persisted checkpoint (read from storage, half the persisted interval rewound) and, "
           f"with no spare left, re-queues (the course's {s.reschedule_min:.2f}-minute reschedule, what the question's "
           f"{s.minutes_per_restart:.3g} minutes leave; sourced re-queues take {rr['kokolis_u0_low'].minutes:.0f}-"
           f"{rr['kokolis_u0_high'].minutes:.0f} min). One such failure costs about {lost:.1f} min against {host:.2f} min for a "
           f"single lost host with its buddy{kept}. So: place buddies across failure domains (a "
           "buddy under another switch, another rack, another power feed), size the spare pool over the repair time of "
           "the failures that arrive while a node is out (failures a day x repair time, at least one), and keep the spare in "
           "another domain than the nodes it replaces; and keep persisting: the durable checkpoint is what survives a "
           f"correlated failure (DeadPool recovers in under {rr['deadpool_hot_swap_512'].value:g} s only while a copy survives).")
    return q, ans


@follow_up("eight_gpus_copy", "06-square-root-pareto.ipynb")
def _eight(c: _Context):
    from .data import sourced

    s, f = c.s, c.f
    host = sourced("h200_host.csv", "key")
    per_host = s.modes.spare_gpus  # GPUs per server (one spare server is one server)
    alone = s.snapshot_cost_min
    host_gb = per_host * s.shard_gb
    shared = host_gb / host["host_memcpy"].value / 60.0
    slow = c.other(snapshot_cost_min=max(shared, alone))
    q = (f"Your snapshot time is one GPU copying alone. What happens when all {per_host:g} GPUs of a host copy at once, while "
         "the persist and NCCL share PCIe and the NIC? And how does a new process read memory its dead predecessor pinned?")
    ans = (f"The {_s(alone)} is one GPU at {host['gpu_to_pinned'].value:g} GB/s{_cite(host['gpu_to_pinned'].source)}. "
           f"{per_host:g} GPUs copy {host_gb:.1f} GB into one host's memory at once; if host memory bandwidth binds (this "
           f"course measured a {host['host_memcpy'].value:g} GB/s host copy{_cite(host['host_memcpy'].source)}, a bound to "
           f"measure, not assume {per_host:g} x {host['gpu_to_pinned'].value:g}), the blocking snapshot is {_s(shared)}, "
           f"{shared / alone:.0f} x longer. The square-root law absorbs it: the interval grows to "
           f"{slow.after.interval_min:.2f} min and the loss after the levers from {f.minutes_per_day:.2f} to "
           f"{slow.after.minutes_per_day:.2f} min a day. The persist to disk and the all-reduces share the same PCIe switches "
           "and the NIC: schedule the persist off the step's communication, or measure its slowdown of the step. Pinned memory "
           "is the process's: when the process dies the operating system frees it, so a snapshot that must survive a crash "
           "lives in memory a surviving process owns: a holder process per node (the course's checkpoint holder) or shared "
           "memory (/dev/shm), which the restarted process maps again.")
    return q, ans


@follow_up("in_process_restart", "08-the-floor.ipynb")
def _in_process(c: _Context):
    s, f = c.s, c.f
    rr = _rr()
    from .data import sourced

    lev = sourced("levers.csv", "key")
    ts = sourced("training_step.csv", "key")
    software = lv.table5_share(("Software Bug", "NCCL Watchdog Timeouts", "Dependency"))
    r = sum(x.share * x.reschedule for x in f.modes)
    q = "What is the first lever on R, and what can it not recover?"
    ans = (f"In-process restart (NVRx{_cite(rr['nvrx_inprocess_heartbeat_timeout'].source)}): the healthy ranks restart the "
           "training function inside their running processes, so no scheduler, no container, no interpreter or CUDA-context "
           f"start-up, no `import torch`; what remains is the communicator rebuild and the reload. MegaScale's job "
           f"initialisation at more than {ts['megascale_ettr_gpus'].value:,.0f} GPUs, under {_s(lev['hot_spare_init'].minutes)}"
           f"{_cite(lev['hot_spare_init'].source)}, "
           f"bounds what a new process adds; NVRx publishes no speed-up, so the course gives none, against today's "
           f"{r:.2f}-minute reschedule. It cannot recover what the process cannot: a sticky CUDA error (an Xid that leaves the "
           "context unusable), a GPU that fell off the bus, a lost host: those need a new process or a new node. The failures "
           f"it can take are roughly the software ones: software bugs, NCCL watchdog timeouts and dependencies, {software:.0%} of "
           "Table 5 (the course's reading); the hardware ones still need a spare or a re-queue. Its own timeouts "
           f"(a {_s(s.modes.host_heartbeat_min)} heartbeat for a missing rank) are what detects a lost host after the levers.")
    return q, ans


@follow_up("planned_maintenance", "08-the-floor.ipynb")
def _planned(c: _Context):
    _s, f = c.s, c.f
    count, days, per_day = fa.planned_interruptions()
    restart = sum(x.share * (x.reschedule + x.reload) for x in f.modes)
    on_notice = per_day * restart
    unplanned_like = per_day * f.per_failure_min
    q = "What about planned maintenance? Is it inside the question's two a day?"
    ans = (f"Llama 3 had {count} planned interruptions in {days:g} days{_cite(_llama3_source())}, {per_day:.2f} a day, counted per "
           "job (a bigger fleet does not have more of them: an assumption). The question's two a day are failures, so planned "
           "stops come on top, unless its log counted them too: ask. A planned stop needs no detection and can checkpoint just "
           f"before it (checkpoint on notice), so it costs only the restart and the reload, {restart:.2f} min: "
           f"{on_notice:.2f} min a day, against {unplanned_like:.2f} if each were handled like a failure. Draining a node "
           "onto a spare before its maintenance costs nothing at all.")
    return q, ans


@follow_up("faster_detection", "03-anatomy-of-a-restart.ipynb")
def _faster(c: _Context):
    s, m, f = c.s, c.m, c.f
    hang_day = fl.per_mode(f)["hang"]
    lam = f.failures_per_day
    nic_like = lv.table5_share(("NIC", "Network Switch/Cable"))
    hang_share = m.share("hang")
    net_hang = _central_hang_share(("NIC", "Network Switch/Cable"))
    saved = lam * nic_like * net_hang * (s.detect_after_by_mode["hang"] - s.detect_after_by_mode["host_loss"])
    q = "Can you detect faster than the hang timeout?"
    ans = (f"Hangs cost {hang_day:.2f} min a day of the floor, most of it the {_s(m.hang_timeout_min)} timeout. A hang whose "
           "cause announces itself need not wait for it: NVRx's node health check (its `node_health_check_interval`) "
           "and GPU health checks catch a GPU that stopped answering; NIC link monitoring (NVRx's `enable_nic_monitor`) "
           "sees a link go down; a shorter InfiniBand timeout fails a transfer to a dead peer sooner; NCCL's flight recorder "
           f"dumps what every rank was doing when the watchdog fires, for the diagnosis. Network faults (NIC, switch, cable: "
           f"{nic_like:.1%} of Table 5{_cite(_llama3_source())}) are most of the course's mapped hangs there; if a link monitor saw "
           f"their {net_hang:.0%} that hang (the mapping's central share) at a {_s(m.host_heartbeat_min)} heartbeat instead of the timeout, "
           f"the floor would fall by {saved:.2f} min a day. Every minute of hang detection costs lambda x hang share = "
           f"{lam * hang_share:.2f} min a day.")
    return q, ans


@follow_up("cost_priority", "09-your-fleet.ipynb")
def _priority(c: _Context):
    from .data import sourced

    s, a, f = c.s, c.a, c.f
    ts = sourced("training_step.csv", "key")
    lo, hi = ts["llama3_diurnal_throughput_low"].value, ts["llama3_diurnal_throughput_high"].value
    q = "What is this worth, and where would the next engineer go?"
    ans = (f"At {s.n_gpus:,} GPUs, {PERCENT:.0%} of the day is {s.n_gpus * PERCENT:.0f} GPUs' worth of training. The baseline loses "
           f"{_pct(a.baseline.loss_fraction)}, {s.n_gpus * a.baseline.loss_fraction:.0f} GPUs; after the levers "
           f"{_pct(f.loss_fraction, 3)}, {a.gpus_lost:.0f} GPUs, and no checkpoint work goes below the floor "
           f"({s.n_gpus * f.floor_fraction:.0f} GPUs). Llama 3 reports a diurnal throughput variation of {lo:g}-{hi:g} %"
           f"{_cite(ts['llama3_diurnal_throughput_low'].source)} alone, and stragglers and slow steps cost more in reported runs "
           "than the restart loss left here: after the levers, the next engineering effort goes to the step time (straggler "
           "detection, a slow-rank report), then to fewer failures (burn-in, lemon nodes), and only then back to restarts.")
    return q, ans


@follow_up("fifteen_minutes_read_another_way", "00-the-question.ipynb")
def _other_reading(c: _Context):
    s, a = c.s, c.a
    rewind_more = HOURLY_INTERVAL_MIN / 2 - s.checkpoint_interval_min / 2
    other = c.other(checkpoint_interval_min=HOURLY_INTERVAL_MIN)
    q = f"What if the {s.minutes_per_restart:.3g} minutes are downtime only and the team checkpoints hourly?"
    ans = (f"Then the course's split is wrong: the {s.checkpoint_interval_min:g}-minute interval inside the "
           f"{s.minutes_per_restart:.3g} minutes is the "
           f"course's assumption. Hourly checkpoints rewind half an hour per failure, {rewind_more:g} min more than the "
           f"assumed {s.checkpoint_interval_min / 2:g}: each restart costs {other.baseline.per_failure_min:.1f} min, the baseline "
           f"loses {other.baseline.restart_minutes_per_day:.0f} min a day to restarts ({_pct(other.baseline_restart_fraction)}), "
           f"not {a.baseline.restart_minutes_per_day:.0f}, and the largest lever is still the in-memory checkpoint, now worth "
           f"{other.savings.get('in-memory checkpoint', 0.0):.1f} min a day. After the levers the two readings differ by only "
           f"{other.after.minutes_per_day - a.after.minutes_per_day:.2f} min a day ({other.after.minutes_per_day:.2f} against "
           f"{a.after.minutes_per_day:.2f}: the persisted checkpoint behind a silent corruption is hourly too): the levers "
           "remove most of the assumption's effect. Ask which reading the question means.")
    return q, ans


# ---------------------------------------------------------------- rendering
def follow_ups(scenario: Scenario | None = None) -> list[FollowUpAnswer]:
    """Every registered follow-up answered at ``scenario`` (None: the course's question), numbered in order."""
    s = Scenario() if scenario is None else scenario
    if not isinstance(s, Scenario):
        raise ValueError(f"scenario must be a Scenario (got {type(s).__name__})")
    ctx = _Context(s)
    out = []
    for i, fu in enumerate(REGISTRY.values(), start=1):
        q, a = fu.build(ctx)
        out.append(FollowUpAnswer(i, fu.key, q, a, fu.notebook))
    return out


def markdown(scenario: Scenario | None = None, base: str = "") -> str:
    """The follow-ups as one markdown block, links relative to ``base`` (ANSWER_SHEET.md uses 'notebooks/')."""
    return "\n\n".join(x.markdown(base) for x in follow_ups(scenario))


def notebooks_linked() -> list[str]:
    """The notebook file names the follow-ups link to (tests check that each exists)."""
    return sorted({fu.notebook for fu in REGISTRY.values()})


def ask(key: str, scenario: Scenario | None = None, answered: str | None = None) -> FollowUpAnswer:
    """One follow-up, by key, answered at ``scenario`` (notebook 12 shows them one cell each, the model answer
    folded); ``answered`` is the candidate's own answer, typed before the reveal and shown above it."""
    if key not in REGISTRY:
        raise ValueError(f"key must be one of {list(REGISTRY)} (got {key!r})")
    s = Scenario() if scenario is None else scenario
    i = list(REGISTRY).index(key) + 1
    q, a = REGISTRY[key].build(_Context(s))
    return FollowUpAnswer(i, key, q, a, REGISTRY[key].notebook, answered=answered)
