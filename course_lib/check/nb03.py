"""Self-checks for the exercises of notebook 03 (anatomy of a restart): solutions/03-anatomy-of-a-restart-sol.ipynb.

- :func:`hourly_interval_loss`: the % of the day lost with an hourly checkpoint interval,
  other stages as in notebook 03's baseline.
- :func:`health_check_period`: sympy, the health-check period that minimises the daily
  loss when each check costs job time (the same trade-off as Young's interval).
- :func:`levers_at_four_a_day`: minutes per day left after notebook 03's four levers when
  the job fails four times a day.
"""
from __future__ import annotations

from .. import MINUTES_PER_DAY, Scenario
from .. import levers as lv
from .. import restart as rs
from . import Mistake
from ._common import ExprCheck, NumberCheck, exercise

__all__ = [
    "HOURLY_INTERVAL_MIN",
    "FAILURES_PER_DAY",
    "hourly_interval_loss",
    "health_check_symbols",
    "health_check_period",
    "levers_at_four_a_day",
]

HOURLY_INTERVAL_MIN = 60.0  # the exercise's what-if interval (a course choice)
FAILURES_PER_DAY = 4.0  # the exercise's what-if failure rate: twice the question's


# ---------------------------------------------------------------- exercise 1
@exercise
def hourly_interval_loss() -> NumberCheck:
    """Exercise 1: % of the day lost with a 60-minute checkpoint interval (other stages unchanged)."""
    budget = rs.baseline_budget(Scenario())
    stages = budget.stages
    lam = budget.failures_per_day
    hourly = budget.with_stages(rewind=HOURLY_INTERVAL_MIN / 2)
    right = 100 * hourly.restart_minutes_per_day / MINUTES_PER_DAY  # the question's measure: restarts only

    def pct(minutes_per_restart):
        return 100 * lam * minutes_per_restart / MINUTES_PER_DAY

    return NumberCheck("03.1 hourly interval", right, 0.005, "% of the day", (
        Mistake(pct(stages.restart_cost + HOURLY_INTERVAL_MIN), "you rewound the whole interval: a failure lands on average halfway through it, so the mean rewind is interval / 2"),
        Mistake(pct(HOURLY_INTERVAL_MIN / 2), "you forgot the restart term: detect + reschedule + reload are still paid at every failure"),
        Mistake(pct(stages.restart_cost + HOURLY_INTERVAL_MIN / 2), "a silent corruption still rewinds its assumed latency past the checkpoint: keep the share x latency the baseline's rewind holds (hourly.stages.rewind)"),
        Mistake(pct(stages.total + HOURLY_INTERVAL_MIN / 2), f"the {stages.total:g} minutes already contain the baseline's {stages.rewind:g}-minute rewind: replace the rewind stage, do not add to it"),
        Mistake(100 * hourly.fraction_of_day, "that counts the blocking writes too: the question's 2 % counts restarts only, so count restarts only here"),
        Mistake(100 * budget.restart_minutes_per_day / MINUTES_PER_DAY, f"that is the baseline with its {2 * stages.rewind:g}-minute interval: set the rewind to interval / 2 for the hourly interval"),
        Mistake(right / 100, "that is a fraction: the task asks for a percentage of the day"),
        Mistake(hourly.restart_minutes_per_day, "that is minutes per day: divide by the minutes in a day and give a percentage"),
        Mistake(hourly.stages.total, "that is the minutes of one restart: multiply by the failures per day and divide by the day"),
    ))


# ---------------------------------------------------------------- exercise 2 (sympy)
def health_check_symbols():
    """(P, c, lambda, T, S, L, tau) as the exercise names them, all positive."""
    import sympy

    return sympy.symbols("P c lambda T S L tau", positive=True)


@exercise
def health_check_period() -> ExprCheck:
    """Exercise 2: the health-check period P* minimising lambda (P/2 + S + L + tau/2) + c T / P, in sympy."""
    import sympy

    P, c, lam, T, *_ = health_check_symbols()
    right = sympy.sqrt(2 * c * T / lam)
    return ExprCheck(
        "03.2 health-check period",
        right,
        (
            (sympy.sqrt(c * T / lam), "off by a factor 2 inside the root: a failure waits on average P/2 for the next check (like the rewind tau/2), not a whole period"),
            (sympy.sqrt(2 * c / lam), "you dropped T: the checks cost c minutes every P minutes of a T-minute day, c T / P minutes per day"),
            (2 * c * T / lam, "that is P*^2: take the positive square root"),
            (sympy.sqrt(2 * c * lam * T), "that is the minimal loss per day from detection and checks, not the period P*"),
            (sympy.sqrt(2 * lam / (c * T)), "upside down: more frequent failures (larger lambda) should make checks more frequent (smaller P)"),
        ),
        "not the optimum: differentiate the daily loss with respect to P, set it to zero and solve for the positive root",
    )


# ---------------------------------------------------------------- exercise 3
@exercise
def levers_at_four_a_day() -> NumberCheck:
    """Exercise 3: minutes per day left after notebook 03's levers (each that saves) at 4 failures a day."""
    scenario = Scenario().replace(failures_per_day=FAILURES_PER_DAY)
    budget = rs.baseline_budget(scenario)
    final = lv.waterfall(budget, lv.default_levers(scenario))[-1].after
    right = final.minutes_per_day
    base = Scenario()
    base_final = lv.waterfall(rs.baseline_budget(base), lv.default_levers(base))[-1].after
    factor = FAILURES_PER_DAY / base.failures_per_day
    return NumberCheck("03.3 four failures a day", right, 0.01, "min/day", (
        Mistake(factor * base_final.minutes_per_day, f"you scaled the {base.failures_per_day:g}-a-day result linearly: the restart stages scale with the failures, but Young's interval re-optimises, so rewind + writes grow only with the square root"),
        Mistake(right - final.write_minutes_per_day, "you left out the snapshot writes: the shorter interval pays write_cost x day / interval, counted in minutes_per_day"),
        Mistake(base_final.minutes_per_day, f"that is the result at the question's {base.failures_per_day:g} failures a day: rebuild the budget for {FAILURES_PER_DAY:g} a day"),
        Mistake(budget.minutes_per_day, "that is the budget before the levers: apply them (lv.waterfall pulls each lever that saves)"),
        Mistake(100 * final.fraction_of_day, "that is a percentage of the day: the task asks for minutes per day"),
    ))
