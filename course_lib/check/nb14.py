"""Self-checks for the exercises of notebook 14 (silent corruption and lemon nodes):
solutions/14-silent-corruption-and-lemons-sol.ipynb.

The exercises read the committed SDC-lab benchmark (``course_lib.sdclab.results.load_sdc_benchmark``,
benchmarks/results/sdclab.json), the vendored fault trace (``course_lib.incidents``) and the course's model,
so their answers do not depend on the machine.

- :func:`sdc_term_at_measured_latency`: the floor's SDC term (minutes a day) when silent corruption is
  caught with the four detectors' measured latency (the slowest case's, on average), at the fleet's step,
  through the model's one SDC function (:func:`course_lib.floor.sdc_minutes_per_day`).
- :func:`quarantine_floor_saving`: minutes a day of the floor that quarantining a node for a week after each
  failure saves, at the trace's measured repeat-fault share.
"""
from __future__ import annotations

from . import Mistake
from ._common import NumberCheck, exercise

__all__ = ["sdc_term_at_measured_latency", "quarantine_floor_saving", "sdc_numbers", "quarantine_numbers"]


def sdc_numbers() -> dict:
    """What exercise 1 starts from: the fleet's step (min), the measured latency (steps; minutes with the half
    step of the fault's own step), and the SDC term of the course's after-levers day at that latency, at no
    latency and at the course's assumed hour (min a day), all through :func:`course_lib.floor.sdc_minutes_per_day`."""
    from .. import floor as fl
    from ..answer import answer
    from ..scenario import Scenario
    from ..sdclab.results import load_sdc_benchmark

    sc = Scenario()
    after = answer(sc, spread_draws=0).after
    bench = load_sdc_benchmark()
    step_min, steps = sc.step_min, bench.latency_steps()
    lat = bench.latency_min(step_min)
    return {"step_min": step_min, "latency_steps": steps, "latency_min": lat, "term": fl.sdc_minutes_per_day(after, lat),
            "term_no_half_step": fl.sdc_minutes_per_day(after, steps * step_min),
            "term_steps_as_min": fl.sdc_minutes_per_day(after, steps),
            "term_seconds_as_min": fl.sdc_minutes_per_day(after, lat * 60.0),
            "term_zero": fl.sdc_minutes_per_day(after, 0.0),
            "term_hour": fl.sdc_minutes_per_day(after, sc.modes.sdc_latency_min), "assumed_min": sc.modes.sdc_latency_min}


# ---------------------------------------------------------------- exercise 1
@exercise
def sdc_term_at_measured_latency() -> NumberCheck:
    """Exercise 1: the floor's SDC term (min a day) with the latency = the four detectors' measured latency
    (``bench.latency_min(Scenario().step_min)``: the steps plus the half step of the fault's own step)."""
    n = sdc_numbers()
    mistakes = (
        Mistake(n["term_steps_as_min"], "that takes the latency in steps as minutes: multiply the steps by the step time (minutes)"),
        Mistake(n["term_no_half_step"], "that leaves out the half step: a fault strikes anywhere in its step (bench.latency_min adds it)"),
        Mistake(n["term_seconds_as_min"], "that takes the step in seconds as minutes: the model's latency is in minutes (the step is step_min)"),
        Mistake(n["term_hour"], "that is the term at the course's assumed hour: use the measured latency instead"),
        Mistake(n["term_hour"] - n["term"], "that is the saving against the assumed hour: the task asks for the term itself"),
        Mistake(n["term_zero"], "that is the term with no latency at all: the replay needs steps to see a compute fault (bench.latency_steps())"),
    )
    return NumberCheck("14.1 SDC term at the measured latency", n["term"], 0.002, "min/day", mistakes)


def quarantine_numbers() -> dict:
    """What exercise 2 starts from: the trace's repeat shares (7 days, whole log), the course's floor (min a
    day) and the floor with each candidate factor on the rate."""
    from ..answer import answer
    from ..incidents.trace import trace_repeat_fault_share
    from ..levers import RateLever
    from ..nodelab.lemon import quarantine_rate_factor
    from ..scenario import Scenario

    week, ever = trace_repeat_fault_share(within_days=7.0), trace_repeat_fault_share(within_days=None)
    after = answer(Scenario(), spread_draws=0).after

    def floor_with(factor):
        return RateLever("quarantine", factor, "notebook 14", "")(after).floor_minutes_per_day

    right = quarantine_rate_factor(week.share, week.poisson_share)
    return {"week": week, "ever": ever, "floor": after.floor_minutes_per_day, "factor": right,
            "saving": after.floor_minutes_per_day - floor_with(right),
            "saving_no_baseline": after.floor_minutes_per_day - floor_with(1 - week.share),
            "saving_ever": after.floor_minutes_per_day - floor_with(quarantine_rate_factor(ever.share, ever.poisson_share)),
            "floor_after": floor_with(right), "minutes_after": after.minutes_per_day,
            "saving_of_loss": after.minutes_per_day - RateLever("quarantine", right, "notebook 14", "")(after).minutes_per_day}


# ---------------------------------------------------------------- exercise 2
@exercise
def quarantine_floor_saving() -> NumberCheck:
    """Exercise 2: minutes a day of the floor saved by quarantining each failed node for 7 days, the rate x
    (1 - the trace's 7-day repeat share + the share identical nodes would give)."""
    n = quarantine_numbers()
    mistakes = (
        Mistake(n["saving_no_baseline"], "that drops the stand-in node's own failures: add the share identical Poisson nodes would give (poisson_share)"),
        Mistake(n["saving_ever"], "that uses repeats over the whole log: a 7-day quarantine removes the repeats within 7 days"),
        Mistake(n["floor_after"], "that is the floor with quarantine: subtract it from the floor without"),
        Mistake(n["factor"], "that is the factor on the rate: apply it to the floor and give the minutes saved"),
        Mistake(n["saving_of_loss"], "that is the saving on the whole after-levers loss: the task asks for the floor's"),
    )
    return NumberCheck("14.2 quarantine saving", n["saving"], 0.005, "min/day", mistakes)
