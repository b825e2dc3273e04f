"""The interview drill: the follow-ups a senior interviewer asks, answered with the course's own numbers (notebook 12).

The first answer to *"a 4,096-GPU run loses 2 % a day to restarts; fix it, and say where the floor is"*
(ANSWER_SHEET.md, :mod:`course_lib.answer`) is followed by questions that probe it. Each follow-up here
is one function ``scenario -> (question, model answer)`` registered by :func:`follow_up` with the
notebook that derives it; every number in its text is computed by course_lib at the given
:class:`~course_lib.scenario.Scenario`, so the drill of notebook 12 and the "Follow-ups" section of
ANSWER_SHEET.md (scripts/render_docs.py) are one source and change with the fleet.

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
import math
import re
from dataclasses import dataclass
from typing import Callable

from . import failures as fa
from . import interval as iv
from . import modes as md
from . import spares as sp
from . import step as st
from . import uncertainty as un
from .scenario import Scenario
from .units import MINUTES_PER_DAY

__all__ = ["FollowUp", "FollowUpAnswer", "Reveal", "REGISTRY", "follow_up", "follow_ups", "ask", "reveal", "markdown", "notebooks_linked",
           "STEP_CV", "TIGHT_TIMEOUT_FACTOR", "FLEET_FACTOR", "BIGGER_FLEET_FACTOR", "RATE_FACTOR",
           "CHEAPER_SNAPSHOT_FACTOR", "TARGET_INTERVAL_MIN", "LATENCY_FACTOR", "CONFIDENCE"]

# The drill's what-ifs (course choices, stated in the answers; none is a measurement)
STEP_CV = 0.1  # assumed coefficient of variation of healthy step times (no sourced value: measure yours)
TIGHT_TIMEOUT_FACTOR = 1.5  # a too-short hang timeout: this x the longest legitimate gap
BIGGER_FLEET_FACTOR = 4  # follow-up 5's larger fleet (4,096 -> 16,384: Llama 3's "up to 16K")
FLEET_FACTOR = 2  # follow-up 6: the fleet doubles
RATE_FACTOR = 2  # follow-up 6: twice Llama 3's per-GPU rate
CHEAPER_SNAPSHOT_FACTOR = 10  # follow-up 7: a snapshot this much cheaper leaves the floor where it is
TARGET_INTERVAL_MIN = 1.0  # follow-up 11: the interval an interviewer asks for
LATENCY_FACTOR = 2  # follow-up 8: a corruption noticed this much later
CONFIDENCE = 0.95  # follow-up 10: the confidence of the counted rate's exact Poisson interval


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
    """What the follow-ups read: the scenario, its answer and per-mode inputs, computed once."""

    def __init__(self, scenario: Scenario):
        self.s = scenario
        self.a = _answer(scenario, 20_000)
        self.inp = self.a.inputs or md.ModeInputs()
        self.b, self.f = self.a.baseline, self.a.after

    def other(self, **changes):
        """The answer (no Monte Carlo range) for the scenario with some fields changed."""
        return _answer(self.s.replace(**changes), 0)


@functools.lru_cache(maxsize=32)
def _answer(scenario: Scenario, draws: int):
    from .answer import answer

    return answer(scenario, spread_draws=draws)


def _s(minutes: float) -> str:
    """Minutes read aloud in seconds: '110 s', '2.5 s', '22 ms' below a tenth of a second."""
    sec = 60 * minutes
    return f"{1000 * sec:.3g} ms" if sec < 0.1 else f"{sec:.3g} s"


def _capped(fraction, budget):
    from .answer import _capped as capped

    return capped(fraction, budget)


def _pct(fraction: float, digits: int = 2) -> str:
    return format(fraction, f".{digits}%")


def _cite(*sources: str) -> str:
    """The citation (' [@key1; @key2]' form) of the keys found in sources' text (data/ rows' ``source`` column), each once; '' if none."""
    keys = []
    for text in sources:
        for group in re.findall(r"\[(@[^\[\]]*)\]", text):
            keys += [k for k in re.findall(r"@([A-Za-z0-9][\w-]*)", group) if k not in keys]
    return f" [{'; '.join('@' + k for k in keys)}]" if keys else ""


def _llama3_source() -> str:
    from .data import failure_logs

    return failure_logs().where("run", "Llama 3 405B")["source"][0]


def _llama3_rate() -> tuple[float, int, int, float]:
    from .data import failure_logs

    row = failure_logs().where("run", "Llama 3 405B").rows[0]
    ev, gpus, days = int(row["events_low"]), int(row["gpus"]), float(row["period_days"])
    return fa.rate_per_gpu_day(ev, gpus, days), ev, gpus, days


# ---------------------------------------------------------------- the follow-ups, in the order asked
@follow_up("largest_first", "03-anatomy-of-a-restart.ipynb")
def _largest_first(c: _Context):
    b, first = c.b, c.a.steps[0]
    parts = {k: v for k, v in b.breakdown().items() if v > 0}
    ranked = sorted(parts, key=parts.get, reverse=True)
    order = ", ".join(f"{k} {parts[k]:.1f}" for k in ranked)
    rest = "; ".join(f"{st_.lever.name} {st_.saved_minutes_per_day:.2f}" for st_ in c.a.steps[1:])
    q = "Which of the four stages would you attack first, and what does it buy in minutes a day?"
    a = (f"Per day the baseline loses {b.minutes_per_day:.1f} min: {order} min by stage. The lever that saves most comes "
         f"first: **{first.lever.name}** ({first.lever.stage}) saves **{first.saved_minutes_per_day:.2f} min a day**, "
         f"not the whole {parts[first.lever.stage]:.1f}, because it shortens the stage without removing it. Then, each "
         f"measured on what the previous lever left: {rest} min a day. Each minute of a stage costs lambda = "
         f"{b.failures_per_day:.2f} minutes a day, whatever the other stages are, so the order is the order of the minutes.")
    return q, a


@follow_up("detection_and_hangs", "03-anatomy-of-a-restart.ipynb")
def _detection(c: _Context):
    s, inp, f = c.s, c.inp, c.f
    poll, timeout, step = inp.poll_min, inp.timeout_min(s), inp.step_min(s)
    gap = max(step, s.snapshot_min)
    hang = inp.share("hang")
    lam = f.failures_per_day
    per_timeout_min = lam * hang  # minutes a day per minute of timeout
    tight = TIGHT_TIMEOUT_FACTOR * gap
    kills = md.false_kills_per_day(tight, step, STEP_CV)
    restart_min = f.stages.restart_cost + f.stages.rewind
    from .data import sourced

    rr = sourced("restart_ranges.csv", "key")
    cite = _cite(rr["nvrx_workload_check_interval"].source, rr["nvrx_safety_factor"].source)
    q = (f"Your detection is {_s(s.detect_after_min)}: for which failures? What about a hang? How do you set the hang "
         "timeout, and what does a too-short one cost?")
    a = (f"The {_s(poll)} is the rank monitor's poll{cite}: a **crash** (the process exits) is seen half a poll later, "
         f"{_s(md.half_period(poll))}, and so is a lost host. A **hang** exits nothing: it is seen only when a timeout "
         f"expires, and the timeout must exceed the longest legitimate gap between heartbeats, the longer of the "
         f"step ({_s(step)}) and the blocking snapshot ({_s(s.snapshot_min)}). At {inp.safety_factor:g} x that gap it is "
         f"**{_s(timeout)}**, and {hang:.0%} of failures hang, so the mean detection after the lever is "
         f"{_s(f.stages.detect)}, not {_s(s.detect_after_min)}. Each minute of timeout costs lambda x hang share = "
         f"{per_timeout_min:.2f} min a day. A too-short timeout kills healthy steps: at {TIGHT_TIMEOUT_FACTOR:g} x the "
         f"gap ({_s(tight)}) and an assumed step-time spread (coefficient of variation {STEP_CV:g}; measure yours), "
         f"{kills:.2g} false kills a day, each a full restart of about {restart_min:.2f} min: "
         f"{kills * restart_min:.2g} min a day, against {per_timeout_min * (timeout - tight):.2f} min a day the shorter "
         "timeout saves on real hangs. Set it from measured gaps, not from a default collective timeout.")
    return q, a


@follow_up("checkpoint_every_step", "06-square-root-pareto.ipynb")
def _every_step(c: _Context):
    s, inp, f = c.s, c.inp, c.f
    step = inp.step_min(s)
    persist = s.write_before_min
    bound = st.interval_lower_bound_min(step, s.snapshot_min, persist)
    binding = max((("the step", step), ("the snapshot copy", s.snapshot_min), ("the persist copy", persist)),
                  key=lambda kv: kv[1])[0]
    every_snap = f.with_stages(rewind=bound / 2)
    every_sync = f.with_write_cost(s.write_before_min).with_stages(rewind=bound / 2)
    q = "Why not checkpoint every step? What bounds the interval from below?"
    a = (f"A checkpoint cannot be taken more often than once per step ({_s(step)}), and a new snapshot cannot start "
         f"before the previous copies are done: the snapshot to host memory ({_s(s.snapshot_min)}) and the copy that "
         f"leaves the host for disk or a peer ({_s(persist)}). So the interval is at least {_s(bound)}; "
         f"{binding} is the longest bound" + (" and sets the interval." if f.interval_min <= bound * (1 + 1e-9) else
         ", but the optimum lies above it.") + f" With the in-memory snapshot the optimum sqrt(2 delta M) is {f.interval_min:.2f} min, "
         f"{f.interval_min / step:.1f} steps; every step would lose {every_snap.minutes_per_day:.2f} min a day against "
         f"{f.minutes_per_day:.2f} at the optimum: hardly a difference, because the snapshot is cheap. With today's "
         f"synchronous write ({_s(s.write_before_min)} blocking) every step would cost "
         f"{every_sync.write_minutes_per_day:.0f} min a day in writes alone, {every_sync.write_minutes_per_day / MINUTES_PER_DAY:.1%} "
         "of the day: the interval and the write cost trade against each other, and only a cheap write buys a short interval.")
    return q, a


@follow_up("host_dies", "08-the-floor.ipynb")
def _host_dies(c: _Context):
    s, inp = c.s, c.inp
    with_peer = md.per_mode_floor(s, dataclasses.replace(inp, peer_copy=True))["host_loss"]
    no_peer = md.per_mode_floor(s, dataclasses.replace(inp, peer_copy=False))["host_loss"]
    share = inp.share("host_loss")
    q = "The snapshot is in host memory: what happens when the host dies?"
    gemini = _cite("[@gemini2023]")
    a = (f"Its snapshot dies with it. A lost host is {share:.0%} of failures{_cite(_llama3_source())}. If a peer holds a "
         f"copy (GEMINI's design{gemini}), the replacement reads the shard from the peer's memory in {_s(s.reload_from_memory_min)} and the host loss "
         f"costs {with_peer:.2f} min a day, like a crash. Without one it falls back to the last persisted checkpoint: "
         f"read from storage ({s.reload_min:.2f} min) and a rewind of half the persisted interval "
         f"({s.checkpoint_interval_min / 2:g} min): **{no_peer:.2f} min a day**, {no_peer - with_peer:.2f} more. Either way "
         "the job still writes durable checkpoints: a silent corruption must rewind past the snapshot, and a whole "
         "rack can go at once.")
    return q, a


@follow_up("hot_spare", "08-the-floor.ipynb")
def _hot_spare(c: _Context):
    s, inp, a = c.s, c.inp, c.a
    big = c.other(n_gpus=BIGGER_FLEET_FACTOR * s.n_gpus)
    be = sp.break_even_repair_min(a.failures_per_day, inp.replica_gpus, inp.spare_gpus)
    lever = next(x.lever for x in a.steps if x.lever.stage == "reschedule")

    def line(x):
        saved = x.savings.get("hot-spare restart", 0.0)
        return (f"at {x.n_gpus:,} GPUs it saves {saved:.2f} min a day and the idle {inp.spare_gpus:g}-GPU spare costs "
                f"{x.spare_cost_minutes_per_day:.2f} ({inp.spare_gpus:g} / {x.n_gpus:,} of the day): net "
                f"**{x.hot_spare_net_minutes_per_day:+.2f} min a day**")

    verdict = "not worth it" if a.hot_spare_net_minutes_per_day < 0 else "worth it"
    big_verdict = "not worth it" if big.hot_spare_net_minutes_per_day < 0 else "worth it"
    q = f"A hot spare is idle: is it worth it at {s.n_gpus:,} GPUs? At {BIGGER_FLEET_FACTOR * s.n_gpus:,}?"
    ans = (f"Charge the spare as lost capacity (the restart target{_cite(lever.source)}, a spare server of "
           f"{inp.spare_gpus:g} GPUs{_cite(_llama3_source())}). {line(a)[0].upper() + line(a)[1:]}: {verdict}. {line(big)[0].upper() + line(big)[1:]}: "
           f"{big_verdict}. The saving grows with the failures, so with the fleet, while one spare node's share of the fleet "
           "shrinks. The spare is free if it is "
           f"pooled across jobs or runs preemptible work. The alternative is to continue elastically without the "
           f"failed node's {inp.replica_gpus:g}-GPU replica until it is repaired: cheaper than the spare when repairs take "
           f"less than {be:.0f} min at {a.failures_per_day:.2f} failures a day.")
    return q, ans


@follow_up("fleet_and_rate", "09-your-fleet.ipynb")
def _fleet_and_rate(c: _Context):
    s, a = c.s, c.a
    rate, *_ = _llama3_rate()
    doubled = c.other(n_gpus=FLEET_FACTOR * s.n_gpus)
    worse = c.other(rate_per_gpu_day=RATE_FACTOR * rate)

    def row(x, name):
        return (f"{name}: {x.failures_per_day:.2f} failures a day, baseline {x.baseline.minutes_per_day:.0f} min a day "
                f"({_pct(_capped(x.baseline.fraction_of_day, x.baseline))}), after the levers {x.after.minutes_per_day:.1f} "
                f"({_pct(_capped(x.after.fraction_of_day, x.after))}), floor {x.after.floor_minutes_per_day:.1f}")

    q = "What if the fleet doubles? What if the failure rate is twice Llama 3's?"
    ans = (f"- {row(a, f'today, {s.n_gpus:,} GPUs')}.\n"
           f"- {row(doubled, f'{doubled.n_gpus:,} GPUs')}.\n"
           f"- {row(worse, f'{RATE_FACTOR:g} x Llama 3{_cite(_llama3_source())} ({RATE_FACTOR * rate:.2e} per GPU-day)')}.\n\n"
           "The restart terms and the floor grow in proportion to the failures; the checkpoint term only with the square "
           "root (the interval re-optimises), and a bigger fleet also has a smaller shard, so a cheaper snapshot. "
           "The floor takes over as the job grows.")
    return q, ans


@follow_up("floor", "08-the-floor.ipynb")
def _floor(c: _Context):
    s, a, f, inp = c.s, c.a, c.f, c.inp
    per_mode = md.per_mode_floor(s, inp)
    top = max(per_mode, key=per_mode.get)
    cheap = c.other(snapshot_cost_min=s.snapshot_min / CHEAPER_SNAPSHOT_FACTOR)
    lever, g = min(a.fewer, key=lambda item: item[1].floor_minutes_per_day)
    rng = f" With the inputs' ranges it is {a.spread.floor.text()}; the {a.spread.dominant} dominates." if a.spread else ""
    q = "Where is the floor, and what moves it? Why does no checkpoint trick move it?"
    ans = (f"The floor is what every failure costs outside the checkpoint interval: lambda (D + R), plus half a step and "
           f"the rewind past a silent corruption: **{f.floor_minutes_per_day:.2f} min a day ({_pct(f.floor_fraction, 3)})** "
           f"of the {f.minutes_per_day:.2f} left after the levers. By mode: "
           + ", ".join(f"{m} {v:.2f}" for m, v in per_mode.items()) + f" min a day; the {top} costs most." + rng
           + f" A checkpoint trick changes only the rewind and the writes: a {CHEAPER_SNAPSHOT_FACTOR:g} x cheaper snapshot "
           f"leaves the floor at {cheap.after.floor_minutes_per_day:.2f} min a day. What moves it: fewer failures "
           f"({lever.name}{_cite(lever.source)}, failure rate x {lever.factor:.2f}: {g.floor_minutes_per_day:.2f} min a day), a smaller D + R "
           f"(bounded below by the hang timeout and the restart's start-up), or stopping fewer GPUs per failure.")
    return q, ans


@follow_up("silent_corruption", "08-the-floor.ipynb")
def _sdc(c: _Context):
    s, inp, f = c.s, c.inp, c.f
    per_mode = md.per_mode_floor(s, inp)
    share = inp.share("sdc")
    later = md.per_mode_floor(s, dataclasses.replace(inp, sdc_latency_min=LATENCY_FACTOR * inp.sdc_latency_min))["sdc"]
    d_r = f.stages.restart_cost
    crossover = (1 - share) * d_r / share
    q = "What does silent data corruption do to this picture?"
    ans = (f"It breaks the snapshot's promise. A corruption is noticed only after a latency (the course takes "
           f"{inp.sdc_latency_min:g} min, a judgement), and every snapshot since then holds corrupt state: the job must "
           f"rewind to a persisted checkpoint older than the corruption (keep more than one) and reload it from storage. "
           f"At a share of {share:.1%} of failures{_cite(_llama3_source())} it costs **{per_mode['sdc']:.2f} min a day**, "
           f"{per_mode['sdc'] / f.floor_minutes_per_day:.0%} of the floor, almost all of it the latency; noticed "
           f"{LATENCY_FACTOR:g} x later it would cost {later:.2f}. Silent corruption costs as much as every failure's "
           f"D + R together once its latency passes (1 - s) (D + R) / s = {crossover:.0f} min. The lever is detection "
           "(checksums, loss-spike and gradient checks), not the checkpoint.")
    return q, ans


@follow_up("per_step_ft", "10-dont-restart-the-world.ipynb")
def _per_step_ft(c: _Context):
    from . import replicas as rp
    from .ftlab.results import load_comparison

    s, inp = c.s, c.inp
    rep = rp.ReplicaInputs()
    g = rp.groups_for(s, rep, inp)
    by = rp.floor_by_strategy(s, rep, inp)
    whole, spare, ft = (sum(by[k].values()) for k in rp.STRATEGIES)
    lab = load_comparison()
    q = "Would you restart the whole job at all? What does per-step fault tolerance cost and save?"
    a = (f"Not for every failure. With per-step fault tolerance (torchft) each of the {g} data-parallel replicas of "
         f"{inp.replica_gpus:g} GPUs is a replica group: a failure stops its group, which rejoins with weights from a healthy "
         f"peer in about {_s(rep.rejoin_min)}, while the others stall only for the quorum change ({_s(rep.stall_min)}; both the "
         f"course's own lab measurement, scaled the way the fault-injection lab scales its timeouts). The floor falls from {whole:.2f} min a day "
         f"(whole-job restart) and {spare:.2f} (in-job restart on a hot spare) to **{ft:.2f} min a day**. What stays: detection "
         f"(a hang still stalls every group until its timeout, {by[rp.STRATEGIES[2]]['hang']:.2f} min a day) and the rewind past "
         f"a silent corruption ({by[rp.STRATEGIES[2]]['sdc']:.2f}): every replica averaged the corrupt gradient, so the whole job "
         f"rewinds. The price: every group must hold a whole replica (here the groups are the job's data-parallel replicas, so no GPU is added), the global batch is smaller while a group is out, and the "
         f"rejoin is a process restart of its own, so with few groups the gain is small: on this course's lab, with "
         f"{lab.groups} groups, {lab.ratio('kill'):.1f}x fewer GPU-seconds lost per killed process than the tuned whole-job restart.")
    return q, a


@follow_up("ettr_gap", "08-the-floor.ipynb")
def _ettr_gap(c: _Context):
    from .data import failure_logs, sourced

    s, a = c.s, c.a
    ts = sourced("training_step.csv", "key")
    reported = ts["llama3_effective_training_time"].value
    rate, ev, gpus, days = _llama3_rate()
    theirs = c.other(n_gpus=gpus, rate_per_gpu_day=rate)
    logs = failure_logs()
    planned = int(logs.where("run", "Llama 3 405B (with planned)")["events_low"][0]) - ev
    q = (f"Your restart-only ETTR is about {100 * a.after.ettr_complete:.1f} %; Llama 3 reports over {reported:g} %. "
         "Where does the rest go?")
    ans = (f"Two things differ. First the fleet: Llama 3's log{_cite(_llama3_source())} is {ev} unexpected interruptions in "
           f"{days:g} days on up to "
           f"{gpus:,} GPUs, {theirs.failures_per_day:.1f} a day, and at the question's minutes per restart that alone is a "
           f"restart-only ETTR of {100 * theirs.baseline.ettr_complete:.1f} % ({100 * theirs.after.ettr_complete:.1f} % "
           f"with every lever); your {s.n_gpus:,} GPUs fail {a.failures_per_day:.2f} times a day. Second, their figure "
           f"counts everything and is a lower bound{_cite(ts['llama3_effective_training_time'].source)}: {planned} planned interruptions in the same days, job start-up, slow "
           "or straggling ranks, data and evaluation stalls, and restarts that take longer than a hot spare. The model "
           f"counts restarts only: {100 * a.baseline.ettr_complete:.1f} % before the levers, "
           f"{100 * a.after.ettr_complete:.2f} % after them. Quote the restart-only number as a ceiling, not as the ETTR a "
           "team will see.")
    return q, ans


@follow_up("how_sure", "08-the-floor.ipynb")
def _how_sure(c: _Context):
    a, f = c.a, c.f
    rate, ev, gpus, days = _llama3_rate()
    lo, hi = fa.rate_ci_per_gpu_day(ev, gpus, days, CONFIDENCE)
    bad = math.ceil(2 * a.failures_per_day)
    p_bad = un.p_at_least(bad, a.failures_per_day)
    spread = (f"Over the inputs' ranges the floor is {a.spread.floor.text()} and the after-levers loss "
              f"{a.spread.loss.text()}; the {a.spread.dominant} dominates. ") if a.spread else ""
    q = "How sure are you of those numbers?"
    ans = (f"The rate is counted, so it has an exact Poisson interval: {ev} interruptions{_cite(_llama3_source())} give {rate:.2e} per GPU-day, "
           f"{CONFIDENCE:.0%} CI {lo:.2e} to {hi:.2e}; Llama 3's 'up to' GPU count could make it up to twice as high. {spread}"
           f"The point estimate is {f.floor_minutes_per_day:.2f} min a day. Days also vary: at {a.failures_per_day:.2f} "
           f"failures a day, {p_bad:.0%} of days have {bad} or more, so a daily average hides bad days.")
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
           f"is optimal at a blocking cost of **{_s(need)}**. A synchronous torch.save of the {s.shard_bytes / 1e9:.2g} GB "
           f"shard blocks {_s(a.write_cost_before_min)} (optimum {a.interval_before_min:.1f} min); the in-memory snapshot{measured} "
           f"blocks {_s(a.snapshot_cost_min)} (optimum {a.interval_after_min:.2f} min). A {ratio:.0f} x cheaper write gives "
           f"a {a.interval_before_min / a.interval_after_min:.1f} x shorter interval, about the square root "
           f"({math.sqrt(ratio):.1f}). The asynchronous part of a save (the durable copy) does not count in delta, only "
           "what blocks training.")
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
    return dataclasses.replace(next(x for x in follow_ups(scenario) if x.key == key), answered=answered)
