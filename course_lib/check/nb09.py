"""Self-checks for the exercises of notebook 09 (your fleet): solutions/09-your-fleet-sol.ipynb.

The exercises take one made-up incident log (a course choice, the example of notebook 09's
papermill line): ``OBSERVED_FAILURES`` failures in ``OBSERVED_DAYS`` days on ``FLEET_GPUS`` GPUs.

- :func:`after_levers_loss`: the after-levers loss of that fleet, % of the day.
- :func:`floor_upper_bound`: the floor at the upper end of the counted rate's 95 % interval, % of the day.
- :func:`break_even_write_cost`: the blocking write cost (seconds) that makes the course's
  10-minute interval Young-optimal at that fleet's MTBF.
- :func:`spare_break_even_gpus`: the fleet size at which one idle 8-GPU hot spare saves as much as it
  costs, at the question's per-GPU rate.
"""
from __future__ import annotations

import math

from scipy import stats

from .. import MINUTES_PER_DAY, Scenario, failures
from .. import interval as iv
from . import Mistake
from ._common import NumberCheck, exercise

__all__ = [
    "FLEET_GPUS",
    "OBSERVED_FAILURES",
    "OBSERVED_DAYS",
    "after_levers_loss",
    "floor_upper_bound",
    "break_even_write_cost",
    "spare_break_even_gpus",
]

FLEET_GPUS = 16_384  # the exercise's fleet (a course choice)
OBSERVED_FAILURES = 60  # the exercise's incident log (made up: notebook 09's papermill example)
OBSERVED_DAYS = 7


def _rate() -> float:
    return failures.rate_per_gpu_day(OBSERVED_FAILURES, FLEET_GPUS, OBSERVED_DAYS)


# ---------------------------------------------------------------- exercise 1
@exercise
def after_levers_loss() -> NumberCheck:
    """Exercise 1: % of the day lost after the levers by the exercise's fleet at its counted rate."""
    from ..answer import answer

    fleet = Scenario().replace(n_gpus=FLEET_GPUS)
    a = answer(fleet.replace(rate_per_gpu_day=_rate()), spread_draws=0)
    right = 100 * a.after.fraction_of_day
    question_rate = answer(fleet, spread_draws=0)
    wrong_exposure = answer(fleet.replace(rate_per_gpu_day=failures.rate_per_gpu_day(OBSERVED_FAILURES, Scenario().n_gpus, OBSERVED_DAYS)), spread_draws=0)
    return NumberCheck("09.1 after-levers loss", right, 0.01, "% of the day", (
        Mistake(100 * question_rate.after.fraction_of_day, "that uses the question's per-GPU rate: pass the rate your log gives, failures / (GPUs x days)"),
        # the wrong exposure (4x the rate) after the levers lands within 1 % of the right rate's baseline
        # (9.01 % vs 8.93 % of the day): both are exact numbers, so a 0.3 % tolerance tells them apart
        Mistake(100 * wrong_exposure.after.fraction_of_day, f"the exposure is {FLEET_GPUS:,} GPUs x {OBSERVED_DAYS} days: you divided by the question's fleet", 0.003),
        Mistake(100 * a.baseline.fraction_of_day, "that is the baseline, before the levers", 0.003),
        Mistake(100 * a.after.floor_fraction, "that is only the floor lambda (D + R): the loss after the levers adds the rewind and the writes"),
        Mistake(a.after.minutes_per_day, "that is minutes per day: the task asks for a percentage of the day"),
        Mistake(a.after.fraction_of_day, "that is a fraction: the task asks for a percentage of the day"),
    ))


# ---------------------------------------------------------------- exercise 2
@exercise
def floor_upper_bound() -> NumberCheck:
    """Exercise 2: the floor (% of the day) at the upper end of the counted rate's 95 % interval."""
    from ..answer import answer

    def floor_pct(rate):
        return 100 * answer(Scenario().replace(n_gpus=FLEET_GPUS, rate_per_gpu_day=rate), spread_draws=0).after.floor_fraction

    low, high = failures.rate_ci_per_gpu_day(OBSERVED_FAILURES, FLEET_GPUS, OBSERVED_DAYS)
    _, high99 = failures.rate_ci_per_gpu_day(OBSERVED_FAILURES, FLEET_GPUS, OBSERVED_DAYS, 0.99)
    normal_high = (OBSERVED_FAILURES + stats.norm.ppf(0.975) * math.sqrt(OBSERVED_FAILURES)) / (FLEET_GPUS * OBSERVED_DAYS)
    right = floor_pct(high)
    return NumberCheck("09.2 floor, upper bound", right, 0.005, "% of the day", (
        Mistake(floor_pct(_rate()), "that is the floor at the point estimate: the task asks for the upper end of the rate's 95 % interval"),
        Mistake(floor_pct(low), "that is the lower end of the interval: the task asks for the upper end"),
        Mistake(floor_pct(high99), "that is the 99 % interval's upper end: the task asks for 95 %"),
        Mistake(floor_pct(normal_high), "that is the normal approximation k + 1.96 sqrt(k): use the exact interval, failures.rate_ci_per_gpu_day"),
        Mistake(right / 100, "that is a fraction: the task asks for a percentage of the day"),
        Mistake(right / 100 * MINUTES_PER_DAY, "that is minutes per day: the task asks for a percentage of the day"),
    ))


# ---------------------------------------------------------------- exercise 3
@exercise
def break_even_write_cost() -> NumberCheck:
    """Exercise 3: seconds of blocking write that make the course's 10-minute interval optimal for the exercise's fleet."""
    tau = Scenario().checkpoint_interval_min
    m_min = MINUTES_PER_DAY / (FLEET_GPUS * _rate())
    right = 60 * iv.write_cost_for_interval(tau, m_min)
    return NumberCheck("09.3 break-even write cost", right, 0.01, "s", (
        Mistake(right * 2, "Young's interval is sqrt(2 delta M), so delta = tau^2 / (2 M): you dropped the 2"),
        Mistake(right / 60, "that is minutes: the task asks for seconds"),
        Mistake(60 * iv.write_cost_for_interval(tau, Scenario().fleet_mtbf_hours * 60), f"that is at the question's {Scenario().fleet_mtbf_hours:g}-hour MTBF: use this fleet's MTBF, the minutes in a day / failures per day"),
        Mistake(60 * iv.write_cost_for_interval(tau, m_min / 60), "the MTBF must be in minutes, like the interval: you used hours"),
        Mistake(60 * math.sqrt(2 * tau * m_min), "that is sqrt(2 tau M): solve tau = sqrt(2 delta M) for delta instead"),
    ))


# ---------------------------------------------------------------- exercise 4
def spare_inputs() -> dict:
    """The inputs of exercise 4 at the question's scenario: the rate, the reschedule the spare saves, its GPUs."""
    s = Scenario()
    before, after = s.reschedule_min, s.reschedule_after_min
    return {"rate_per_gpu_day": s.rate_per_gpu_day, "saved_per_failure_min": before - after, "spare_gpus": s.modes.spare_gpus,
            "reschedule_before_min": before}


@exercise
def spare_break_even_gpus() -> NumberCheck:
    """Exercise 4: GPUs at which the hot spare's saving (lambda x minutes saved) equals its idle cost (spares / GPUs x day)."""
    x = spare_inputs()
    r, d, k = x["rate_per_gpu_day"], x["saved_per_failure_min"], x["spare_gpus"]
    right = math.sqrt(k * MINUTES_PER_DAY / (r * d))
    s = Scenario()
    full = x["reschedule_before_min"]
    return NumberCheck("09.4 hot-spare break-even", right, 0.01, "GPUs", (
        Mistake(k * MINUTES_PER_DAY / (s.failures_per_day * d), "you kept the question's 2 failures a day: on a fleet of N GPUs the failures are N x the per-GPU rate, so the saving grows with N while the cost shrinks as 1/N"),
        Mistake(math.sqrt(k * MINUTES_PER_DAY / (r * full)), "the spare saves the difference between today's rescheduling and its own 150 s restart, not the whole rescheduling"),
        Mistake(math.sqrt(k * 24 / (r * d)), "the day has 1,440 minutes: the saving is in minutes, so the cost must be too"),
        Mistake(k * MINUTES_PER_DAY / (r * d), "saving N r d = cost k T / N gives N squared, not N: take the square root"),
    ))
