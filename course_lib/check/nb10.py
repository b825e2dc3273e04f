"""Self-checks for the exercises of notebook 10 (don't restart the world): solutions/10-dont-restart-the-world-sol.ipynb.

Exercise 1 reads the committed comparison (``course_lib.ftlab.load_comparison``,
benchmarks/results/ftlab_compare.json), so its answer does not depend on the machine.

- :func:`ft_gpu_seconds`: GPU-seconds torchft lost per killed group (every rank x stall + the group x rejoin).
- :func:`crash_cost_many_groups`: sympy, a crash's cost per failure as the groups grow without bound.
"""
from __future__ import annotations

from . import Mistake
from ._common import ExprCheck, NumberCheck, exercise

__all__ = ["ft_gpu_seconds", "cost_symbols", "crash_cost_many_groups"]


@exercise
def ft_gpu_seconds() -> NumberCheck:
    """Exercise 1: torchft's GPU-seconds lost per kill, from the medians of the committed comparison."""
    from ..ftlab import load_comparison

    c = load_comparison()
    k = c.summary["kill"]
    n, f = c.ranks, c.ranks // c.groups
    right = n * k["ft_stall_s"] + f * k["ft_rejoin_s"]
    return NumberCheck("10.1 torchft GPU-seconds per failure", right, 0.005, "GPU-s", (
        Mistake(n * k["ft_stall_s"], "that counts only the survivors' stall: the failed group is out for its whole rejoin too"),
        Mistake(f * k["ft_rejoin_s"], "that counts only the rejoin: every rank waits through the stall"),
        Mistake(n * k["ft_rejoin_s"], "that charges the rejoin to every rank: only the failed group rejoins"),
        Mistake(k["ft_stall_s"] + k["ft_rejoin_s"], "those are seconds, not GPU-seconds: multiply each by the ranks that wait"),
        Mistake(k["whole_gpu_s"], "that is the whole-job restart's loss: the task asks for torchft's"),
    ))


def cost_symbols():
    """(D, s, h, j, W, G) as the exercise names them, all positive."""
    import sympy

    return sympy.symbols("D s h j W G", positive=True)


@exercise
def crash_cost_many_groups() -> ExprCheck:
    """Exercise 2: a crash's job-minutes per failure with G groups, in the limit G -> infinity."""
    D, s, h, j, W, G = cost_symbols()
    return ExprCheck(
        "10.2 a crash with many groups",
        D + s + h,
        (
            (D + s, "the step in flight is not committed: the survivors lose it too (h, half a step on average)"),
            (D, "the survivors also wait for the quorum change s and lose the step in flight h"),
            (D + s + h + j, "the rejoin is paid by 1/G of the job: it vanishes as G grows"),
            (D + W, "that is the whole-job restart (G = 1): take the limit of the G-group cost"),
            (s + h, "detection is paid by the whole job: the survivors wait on the failed group until it is seen"),
        ),
        "not the limit: cost(G) = D + (G - 1)/G (s + h) + j/G; take sp.limit(cost, G, sp.oo)",
    )
