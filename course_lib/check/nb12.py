"""Self-checks for the four scoring points of notebook 12 (the interview drill): solutions/12-interview-drill-sol.ipynb.

The interview question is scored on four things; each is one number the learner types in, graded at
the learner's own :class:`~course_lib.scenario.Scenario` (``nb12.name(answer, scenario)``; None: the
course's 4,096-GPU question), with the hints of the course's other exercises.

- :func:`reschedule_stage`: decompose one restart: the reschedule stage's minutes, what the
  minutes per restart leave once detection, reload and the rewind are paid.
- :func:`first_lever_saving`: attack the largest term first: minutes a day the first lever of the
  waterfall saves.
- :func:`young_interval_before`: the interval and the write cost trade: Young's optimal interval
  (minutes) with today's synchronous checkpoint write.
- :func:`floor_after_levers`: the residual set by the failure rate: the floor after every lever, in
  minutes a day.
"""
from __future__ import annotations

import functools
import math

from .. import MINUTES_PER_DAY, Scenario
from . import Mistake
from ._common import NumberCheck, exercise

__all__ = ["reschedule_stage", "first_lever_saving", "young_interval_before", "floor_after_levers"]


@functools.lru_cache(maxsize=8)
def _answer(scenario: Scenario):
    from ..answer import answer

    return answer(scenario, spread_draws=0)


def _scenario(scenario) -> Scenario:
    s = Scenario() if scenario is None else scenario
    if not isinstance(s, Scenario):
        raise ValueError(f"scenario must be a Scenario (got {type(s).__name__}); notebook 12 builds one from its parameters")
    return s


# ---------------------------------------------------------------- scoring point 1
@exercise
def reschedule_stage(scenario=None) -> NumberCheck:
    """Scoring point 1: the reschedule stage of one baseline restart, in minutes (the remainder of the minutes per restart)."""
    s = _scenario(scenario)
    st = _answer(s).baseline.stages
    right = st.reschedule
    lam = s.failures_per_day
    return NumberCheck("12.1 decompose one restart", right, 0.01, "min", (
        Mistake(st.total - st.detect - st.reload,
                f"the {st.total:.3g} minutes per restart include the rewound work: subtract the mean rewind ({st.rewind:.3g} min) too"),
        Mistake(st.total - st.detect - st.reload - s.checkpoint_interval_min,
                "a failure rewinds half the checkpoint interval on average, not the whole interval"),
        Mistake(st.total - st.detect - st.reload - s.checkpoint_interval_min / 2,
                "a silent corruption also rewinds its latency past the checkpoint: the mean rewind is half the interval plus "
                "the SDC share x its latency"),
        Mistake(st.total - st.detect - st.rewind,
                f"the reload is a stage of its own: subtract the {st.reload:.3g} minutes of reading the checkpoint back too"),
        Mistake(st.total - st.reload - st.rewind,
                f"detection is a stage of its own: subtract the {st.detect:.3g} minutes until the job notices the failure too"),
        Mistake(lam * right, "that is minutes per day: the task asks for the minutes of one restart"),
        Mistake(60 * right, "that is seconds: the task asks for minutes"),
    ))


# ---------------------------------------------------------------- scoring point 2
#: Why a lever shortens its stage without removing it (the hint for "the whole stage").
_WHAT_STAYS = {
    "detect": "a crash is still seen half a poll later and a hang only at its timeout",
    "reschedule": "the spare still has to join, restart and rebuild the communicators",
    "reload": "the shard is still copied back from host memory, and a silent corruption or a host loss without a peer "
              "copy still reads the persisted checkpoint",
    "rewind": "the snapshot still rewinds half its (shorter) interval, still writes, and cannot save the rewind past a "
              "silent corruption",
}


@exercise
def first_lever_saving(scenario=None) -> NumberCheck:
    """Scoring point 2: minutes a day saved by the lever that saves most, applied first to the baseline."""
    s = _scenario(scenario)
    a = _answer(s)
    first = a.steps[0]
    right = first.saved_minutes_per_day
    base = first.before
    parts = base.breakdown()
    all_levers = a.baseline.minutes_per_day - a.after.minutes_per_day
    lam = base.failures_per_day
    mistakes = []
    whole: dict[float, list] = {}  # a whole stage, by its minutes a day (two stages can cost the same)
    for step in a.steps:
        if step.lever.stage not in parts:  # a rate lever has no stage of its own
            continue
        whole.setdefault(round(parts[step.lever.stage], 9), []).append(step)
    for value, steps in whole.items():  # the likeliest mistake: the lever removes its whole stage
        names = " stage and the whole ".join(st_.lever.stage for st_ in steps)
        stays = "; ".join(f"{st_.lever.name}: {_WHAT_STAYS.get(st_.lever.stage, 'part of it stays')}" for st_ in steps)
        mistakes.append(Mistake(value, f"{value:.3g} min/day is the whole {names} stage "
                                f"({lam:.3g} failures a day x {value / lam:.3g} min{', each' if len(steps) > 1 else ''}): "
                                f"a lever shortens its stage, it does not remove it ({stays})"))
    rewind = next((st_ for st_ in a.steps if st_.lever.stage == "rewind"), None)
    if rewind is not None:
        both = parts["rewind"] + parts["write"]
        mistakes.append(Mistake(both, f"{both:.3g} min/day is the whole rewind and every write: {rewind.lever.name} shortens "
                                f"them, it does not remove them ({_WHAT_STAYS['rewind']})"))
    for step in a.steps[1:]:  # the wrong lever: another one's saving, applied first to the same baseline
        other = step.lever.saving(base)
        mistakes.append(Mistake(other, f"{other:.3g} min/day is what {step.lever.name} saves applied first: "
                                f"{first.lever.name} saves more, so it goes first (rank the levers by what each saves "
                                "from the baseline, not by which stage looks largest)"))
    mistakes += [
        Mistake(right / a.failures_per_day, "that is minutes per restart: multiply by the failures per day"),
        Mistake(100 * right / MINUTES_PER_DAY, "that is a percentage of the day: the task asks for minutes per day"),
        Mistake(all_levers, "that is what the levers save together: the task asks for the first one alone"),
    ]
    return NumberCheck("12.2 largest term first", right, 0.01, "min/day", tuple(mistakes))


# ---------------------------------------------------------------- scoring point 3
@exercise
def young_interval_before(scenario=None) -> NumberCheck:
    """Scoring point 3: the optimal checkpoint interval, in minutes, with today's synchronous write (Young's sqrt(2 delta M) to within 1 %)."""
    s = _scenario(scenario)
    a = _answer(s)
    delta, m = a.write_cost_before_min, a.baseline.mtbf_min
    right = a.interval_before_min
    return NumberCheck("12.3 interval vs write cost", right, 0.01, "min", (
        Mistake(math.sqrt(delta * m), "Young's interval is sqrt(2 delta M): you dropped the 2"),
        Mistake(math.sqrt(2 * 60 * delta * m), "the write cost must be in minutes, like the MTBF: you used seconds"),
        Mistake(math.sqrt(2 * delta * m / 60), "the MTBF must be in minutes, like the write cost: you used hours"),
        Mistake(2 * delta * m, "that is tau*^2: take the square root"),
        Mistake(60 * right, "that is seconds: the task asks for minutes"),
        Mistake(a.interval_after_min, "that is the interval with the in-memory snapshot's write: the task asks for today's "
                "synchronous write, before any lever"),
        Mistake(a.baseline.interval_min, f"that is the baseline's {a.baseline.interval_min:g}-minute interval as it is set today, "
                "not the optimum: compute sqrt(2 delta M)"),
    ))


# ---------------------------------------------------------------- scoring point 4
@exercise
def floor_after_levers(scenario=None) -> NumberCheck:
    """Scoring point 4: the floor after every lever, in minutes a day (what no checkpoint removes)."""
    s = _scenario(scenario)
    a = _answer(s)
    f = a.after
    right = f.floor_minutes_per_day
    return NumberCheck("12.4 the floor", right, 0.01, "min/day", (
        Mistake(f.minutes_per_day, "that is the whole after-levers loss: the floor leaves out the rewind to the snapshot and its writes"),
        Mistake(f.failures_per_day * f.stages.restart_cost,
                "that is lambda (D + R) alone: each failure also rewinds half a step, and a corruption rewinds past its latency"),
        Mistake(right / f.failures_per_day, "that is minutes per failure: multiply by the failures per day"),
        Mistake(100 * right / MINUTES_PER_DAY, "that is a percentage of the day: the task asks for minutes per day"),
        Mistake(a.baseline.failures_per_day * a.baseline.stages.restart_cost,
                "that is lambda (D + R) of the baseline: the floor is what is left after every lever"),
        Mistake(f.failures_per_day * (f.stages.restart_cost + f.step_min / 2),
                "the rewind past a silent corruption is part of the floor too: a corruption is noticed only after its "
                "latency, and every checkpoint since then is bad"),
        Mistake(f.failures_per_day * (f.stages.restart_cost + f.latency_min),
                "each failure also rewinds half a step: a checkpoint cannot be taken more often than once a step"),
    ))
