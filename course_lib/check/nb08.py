"""Self-checks for the exercises of notebook 08 (the floor): solutions/08-the-floor-sol.ipynb.

- :func:`floor_share_at`: the floor's share of the after-levers loss on a 16,384-GPU job.
- :func:`kokolis_ettr`: Kokolis et al.'s expected ETTR at their inputs and a 15-minute interval.
- :func:`sdc_crossover`: sympy, the SDC detection latency at which silent data corruption
  costs as much as the floor of all unexpected failures.
- :func:`floor_at_hang_share`: the per-mode floor (min/day) when a larger share of failures hang.
"""
from __future__ import annotations

from .. import MINUTES_PER_DAY, Scenario
from .. import projection as pj
from . import Mistake
from ._common import ExprCheck, NumberCheck, exercise

__all__ = [
    "FLEET_GPUS",
    "ETTR_INTERVAL_MIN",
    "floor_share_at",
    "kokolis_ettr",
    "sdc_symbols",
    "sdc_crossover",
    "HANG_SHARE",
    "floor_at_hang_share",
]

FLEET_GPUS = 16_384  # exercise 1's fleet (a course choice: Llama 3's "up to 16K")
ETTR_INTERVAL_MIN = 15.0  # exercise 2's checkpoint interval (a course choice)
HANG_SHARE = 0.55  # exercise 4's hang share (a course choice, near the high end of data/failure_modes.csv)


# ---------------------------------------------------------------- exercise 1
@exercise
def floor_share_at() -> NumberCheck:
    """Exercise 1: floor lambda (D + R) / after-levers loss on a 16,384-GPU job (a fraction)."""
    from ..answer import answer

    from ..levers import in_memory_checkpoint

    small = answer(Scenario())
    big = answer(small.scenario.replace(n_gpus=FLEET_GPUS))
    f, f0 = big.after, small.after
    right = f.floor_minutes_per_day / f.minutes_per_day
    fixed_delta = in_memory_checkpoint(big.after, small.snapshot_cost_min, big.after.interval_bound_min or 0.0)
    return NumberCheck("08.1 floor share", right, 0.01, "", (
        Mistake(f0.floor_minutes_per_day / f0.minutes_per_day, f"that is the {small.n_gpus:,}-GPU job: rerun the answer for {FLEET_GPUS:,} GPUs"),
        Mistake(1 - right, "that is the checkpoint term's share (rewind + writes): the task asks for the floor lambda (D + R)"),
        Mistake(f.minutes_per_day / f.floor_minutes_per_day, "upside down: the floor divided by the after-levers loss"),
        Mistake(fixed_delta.floor_minutes_per_day / fixed_delta.minutes_per_day,
                "you kept the smaller fleet's snapshot cost: each GPU's shard shrinks as the fleet grows, so delta falls as 1/N"),
        Mistake(100 * right, "that is a percentage: give the share as a fraction between 0 and 1"),
        Mistake(f.floor_minutes_per_day / big.baseline.minutes_per_day, "you divided by the baseline loss (before the levers): divide by the loss after them"),
    ))


# ---------------------------------------------------------------- exercise 2
@exercise
def kokolis_ettr() -> NumberCheck:
    """Exercise 2: expected ETTR at Kokolis et al.'s inputs and a 15-minute interval (a fraction)."""
    k = pj.kokolis_projection()
    dt = ETTR_INTERVAL_MIN
    lam_day = k.n_gpus / k.gpus_per_node * k.rf_per_node_day  # failures per day: N_nodes r_f
    right = k.ettr(dt)

    def raw(lam_per_min, lost):
        return (1 - lam_per_min * lost) / (1 + k.write_cost_min / dt)

    return NumberCheck("08.2 Kokolis ETTR", right, 0.005, "", (
        Mistake(raw(lam_day / MINUTES_PER_DAY, k.restart_overhead_min + dt), "a failure rewinds half an interval on average: u0 + dt/2, not u0 + dt"),
        Mistake(raw(lam_day / MINUTES_PER_DAY, dt / 2), "you forgot the restart overhead u0: every failure pays u0 + dt/2"),
        Mistake(raw(lam_day * k.gpus_per_node / MINUTES_PER_DAY, k.restart_overhead_min + dt / 2),
                "r_f is per node-day: multiply it by the number of nodes (GPUs / GPUs per node), not GPUs"),
        Mistake(raw(lam_day, k.restart_overhead_min + dt / 2), "r_f is per day and u0, dt are in minutes: divide the failures per day by the minutes in a day"),
        Mistake(1 - right, "that is the lost fraction: ETTR is the useful fraction"),
        Mistake(100 * right, "that is a percentage: give ETTR as a fraction between 0 and 1"),
        Mistake(k.ettr(k.interval_hourly_min), "that is the paper's hourly interval: the task's interval is 15 minutes"),
    ))


# ---------------------------------------------------------------- exercise 3 (sympy)
def sdc_symbols():
    """(L, s, D, R, lambda) as the exercise names them, all positive."""
    import sympy

    return sympy.symbols("L s D R lambda", positive=True)


@exercise
def sdc_crossover() -> ExprCheck:
    """Exercise 3: the detection latency L at which SDC costs as much as the floor (sympy, in s, D, R)."""
    L, s, D, R, lam = sdc_symbols()
    return ExprCheck(
        "08.3 SDC crossover",
        (1 - s) * (D + R) / s,
        (
            ((D + R) / s, "an SDC event also pays D + R itself: solve s lambda (L + D + R) = lambda (D + R) for L"),
            ((1 - s) / s, "the latency is in the units of D + R: keep the factor (D + R)"),
            (s * (D + R), "upside down: a rarer kind of failure (smaller s) may go unnoticed longer before it costs as much"),
            (lam * (D + R), "that is the floor in minutes per day, not a latency: solve for L"),
            ((1 - s) * (D + R) / (s * lam), "lambda cancels: both sides are proportional to the failure rate"),
        ),
        "not the crossover: set s lambda (L + D + R) equal to lambda (D + R) and solve for L",
    )


# ---------------------------------------------------------------- exercise 4
@exercise
def floor_at_hang_share() -> NumberCheck:
    """Exercise 4: the floor (min/day) at 4,096 GPUs when HANG_SHARE of the failures hang (others rescaled)."""
    from .. import floor as fl
    from ..answer import answer
    from ..scenario import MODES

    s = Scenario()
    a = answer(s.replace(hang_share=HANG_SHARE), spread_draws=0)
    right = a.after.floor_minutes_per_day
    base = answer(s, spread_draws=0).after
    per_mode = fl.per_mode(a.after)
    unscaled = list(s.modes.shares)
    unscaled[MODES.index("hang")] = HANG_SHARE
    fb = base.floor_budget
    rewind = fb.rewind_by_mode()
    per_failure = {m.mode: m.detect + m.reschedule + m.reload + rewind[m.mode] for m in fb.modes}
    return NumberCheck("08.4 floor at a larger hang share", right, 0.005, "min/day", (
        Mistake(base.floor_minutes_per_day, "that is the floor at the default shares: set the hang share first"),
        Mistake(per_mode["hang"], "that is the hang mode alone: the floor sums every mode"),
        Mistake(s.failures_per_day * sum(u * per_failure[m] for u, m in zip(unscaled, MODES)),
                "the shares must still sum to 1: rescale the other modes (Scenario.replace(hang_share=...)) instead of only raising the hang share"),
        Mistake(100 * right / MINUTES_PER_DAY, "that is a percentage of the day: the task asks for minutes per day"),
        Mistake(s.failures_per_day * HANG_SHARE * s.hang_timeout_min, "that is only the hangs' timeout: every mode also pays its restart, reload and half a step"),
    ))
