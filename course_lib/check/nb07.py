"""Self-checks for the exercises of notebook 07 (fault-injection lab): solutions/07-fault-injection-lab-sol.ipynb.

The exercises read the committed restart benchmark (``course_lib.faultlab.load_benchmark``,
benchmarks/results/faultlab_restart.json), so their answers do not depend on the machine.

- :func:`best_single_lever`: seconds the best single lever saves on the default-like hang restart.
- :func:`in_process_ceiling`: sympy, the speed-up ceiling once in-process restart removes process start.
- :func:`tuned_fleet_loss`: % of the day the question's fleet would lose restarting like the tuned hang.
"""
from __future__ import annotations

from .. import MINUTES_PER_DAY, Scenario
from . import Feedback, Mistake
from ._common import ExprCheck, NumberCheck

__all__ = [
    "SINGLE_LEVER_PREFIX",
    "single_lever_rows",
    "best_single_lever",
    "ceiling_symbols",
    "in_process_ceiling",
    "tuned_fleet_loss",
    "checks",
    "expr_checks",
]

SINGLE_LEVER_PREFIX = "default-like, tuned "  # the benchmark's one-lever rows are named like this


def single_lever_rows(bench=None) -> dict[str, float]:
    """{lever: median total seconds} of the benchmark's hang runs with one lever tuned."""
    from ..faultlab import load_benchmark

    bench = load_benchmark() if bench is None else bench
    return {setting[len(SINGLE_LEVER_PREFIX):]: row["total_s"] for (scenario, setting), row in bench.medians.items()
            if scenario == "hang" and setting.startswith(SINGLE_LEVER_PREFIX)}


# ---------------------------------------------------------------- exercise 1
def _lever_check() -> NumberCheck:
    from ..faultlab import load_benchmark

    bench = load_benchmark()
    base = bench.medians[("hang", "default-like")]["total_s"]
    savings = {lever: base - total for lever, total in single_lever_rows(bench).items()}
    best = max(savings, key=savings.get)
    right = savings[best]
    others = sorted((s, lever) for lever, s in savings.items() if lever != best)
    mistakes = [
        Mistake(base - bench.medians[("hang", "tuned")]["total_s"], "that is the saving of all levers together: the task asks for the best single lever"),
        Mistake(single_lever_rows(bench)[best], "that is the restart time with the best lever, not what it saves: subtract it from the default-like total"),
        Mistake(bench.ratios["hang"], "that is the speed-up of all levers together (a ratio): the task asks for seconds saved by one lever"),
    ]
    if others:
        s, lever = others[-1]
        mistakes.append(Mistake(s, f"that is the second-best lever ({lever}): compare the savings of every one-lever row"))
    return NumberCheck("07.1 best single lever", right, 0.005, "s", tuple(mistakes))


def best_single_lever(answer) -> Feedback:
    """Exercise 1: seconds saved on the default-like hang restart by the best single tuned lever."""
    return _lever_check()(answer)


# ---------------------------------------------------------------- exercise 2 (sympy)
def ceiling_symbols():
    """(T, m, P, Q, L, tau, k) as the exercise names them, all positive."""
    import sympy

    return sympy.symbols("T m P Q L tau k", positive=True)


def _ceiling_check() -> ExprCheck:
    T, m, P, Q, L, tau, _ = ceiling_symbols()
    before = T + m / 2 + P + Q + L + tau / 2
    return ExprCheck(
        "07.2 in-process ceiling",
        before / Q,
        (
            (before / (P + Q), "that is notebook 07's ceiling for a process restart: in-process restart also removes the process start P"),
            ((T + m / 2 + L + tau / 2) / Q, "the default restart also pays its rescheduling P + Q: keep it in the numerator"),
            ((T + m + P + Q + L + tau / 2) / Q, "a failure waits on average half a poll for the agent to look: m/2"),
            (Q / before, "upside down: the speed-up is the old restart time over the new one"),
        ),
        "not the ceiling: restart(k) = k (T + m/2 + L + tau/2) + Q; take the limit of the default restart over restart(k) as k -> 0",
    )


def in_process_ceiling(answer) -> Feedback:
    """Exercise 2: the speed-up ceiling (sympy) when levers scale by k -> 0 and in-process restart removes P."""
    return _ceiling_check()(answer)


# ---------------------------------------------------------------- exercise 3
def _fleet_check() -> NumberCheck:
    from ..faultlab import load_benchmark

    bench = load_benchmark()
    lam = Scenario().failures_per_day
    tuned_s = bench.medians[("hang", "tuned")]["total_s"]
    right = 100 * lam * tuned_s / 60 / MINUTES_PER_DAY
    return NumberCheck("07.3 the fleet restarting like the lab", right, 0.005, "% of the day", (
        Mistake(right * 60, "the benchmark's stages are in seconds: convert them to minutes before dividing by the minutes in a day"),
        Mistake(100 * lam * bench.medians[("hang", "default-like")]["total_s"] / 60 / MINUTES_PER_DAY, "that is the default-like restart: the task asks for the tuned one"),
        Mistake(100 * lam * bench.medians[("kill", "tuned")]["total_s"] / 60 / MINUTES_PER_DAY, "that is the kill restart: the task asks for the hang"),
        Mistake(right / lam, f"that is one restart a day: the question's fleet restarts {lam:g} times a day"),
        Mistake(right / 100, "that is a fraction: the task asks for a percentage of the day"),
    ))


def tuned_fleet_loss(answer) -> Feedback:
    """Exercise 3: % of the day lost at the question's restarts per day if each took the tuned hang restart's time."""
    return _fleet_check()(answer)


def checks() -> dict[str, NumberCheck]:
    """Every graded number of notebook 07's exercises, by name."""
    return {"best_single_lever": _lever_check(), "tuned_fleet_loss": _fleet_check()}


def expr_checks() -> dict[str, ExprCheck]:
    """Every graded sympy expression of notebook 07's exercises, by name."""
    return {"in_process_ceiling": _ceiling_check()}
