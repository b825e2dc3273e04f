"""Self-checks for the exercises of notebook 07 (fault-injection lab): solutions/07-fault-injection-lab-sol.ipynb.

The exercises read the committed restart benchmark (``course_lib.faultlab.load_benchmark``,
benchmarks/results/faultlab_restart.json), so their answers do not depend on the machine.

- :func:`best_single_lever`: seconds the best single lever saves on the default-like hang restart.
- :func:`in_process_ceiling`: sympy, the speed-up ceiling once in-process restart removes process start.
- :func:`tuned_reschedule_share`: % of the tuned hang restart that is rescheduling (what tuning leaves).
"""
from __future__ import annotations

from . import Mistake
from ._common import ExprCheck, NumberCheck, exercise

__all__ = [
    "SINGLE_LEVER_PREFIX",
    "single_lever_rows",
    "best_single_lever",
    "ceiling_symbols",
    "in_process_ceiling",
    "tuned_reschedule_share",
]

SINGLE_LEVER_PREFIX = "default-like, tuned "  # the benchmark's one-lever rows are named like this


def single_lever_rows(bench=None) -> dict[str, float]:
    """{lever: median total seconds} of the benchmark's hang runs with one lever tuned."""
    from ..faultlab import load_benchmark

    bench = load_benchmark() if bench is None else bench
    return {setting[len(SINGLE_LEVER_PREFIX):]: row["total_s"] for (scenario, setting), row in bench.medians.items()
            if scenario == "hang" and setting.startswith(SINGLE_LEVER_PREFIX)}


# ---------------------------------------------------------------- exercise 1
@exercise
def best_single_lever() -> NumberCheck:
    """Exercise 1: seconds saved on the default-like hang restart by the best single tuned lever."""
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


# ---------------------------------------------------------------- exercise 2 (sympy)
def ceiling_symbols():
    """(T, m, P, Q, L, tau, k) as the exercise names them, all positive."""
    import sympy

    return sympy.symbols("T m P Q L tau k", positive=True)


@exercise
def in_process_ceiling() -> ExprCheck:
    """Exercise 2: the speed-up ceiling (sympy) when levers scale by k -> 0 and in-process restart removes P."""
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


# ---------------------------------------------------------------- exercise 3
@exercise
def tuned_reschedule_share() -> NumberCheck:
    """Exercise 3: the rescheduling stage's share (%) of the benchmark's tuned hang restart."""
    from ..faultlab import load_benchmark

    bench = load_benchmark()

    def share(scenario, setting):
        st = bench.stages(scenario, setting)
        return 100 * st["reschedule"] / sum(st.values())

    tuned = bench.stages("hang", "tuned")
    right = share("hang", "tuned")
    rest = sum(tuned.values()) - tuned["reschedule"]
    return NumberCheck("07.3 what tuning leaves", right, 0.005, "% of the restart", (
        Mistake(right / 100, "that is a fraction: the task asks for a percentage of the restart"),
        Mistake(share("hang", "default-like"), "that is the default-like restart: the task asks for the tuned one"),
        Mistake(share("kill", "tuned"), "that is the kill restart: the task asks for the hang"),
        Mistake(100 * tuned["reschedule"] / rest, "that divides by the other three stages: divide by the whole restart, all four stages"),
        Mistake(tuned["reschedule"], "that is the rescheduling time in seconds: the task asks for its share of the restart, in %"),
    ))
