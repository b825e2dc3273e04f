"""Self-checks for the exercises of notebook 11 (losing a node): solutions/11-losing-a-node-sol.ipynb.

The exercises read the committed nodes-lab benchmark (``course_lib.nodelab.load_nodelab_benchmark``,
benchmarks/results/nodelab.json) and the per-mode floor (``course_lib.modes``), so their answers do
not depend on the machine.

- :func:`spare_saving`: seconds of rescheduling the hot spare saves against a replacement via the scheduler.
- :func:`buddy_copy_saving`: minutes a day of the host-loss floor a buddy copy saves (with a spare).
"""
from __future__ import annotations

from . import Mistake
from ._common import NumberCheck, exercise

__all__ = ["spare_saving", "buddy_copy_saving", "host_loss_floors"]


# ---------------------------------------------------------------- exercise 1
@exercise
def spare_saving() -> NumberCheck:
    """Exercise 1: median rescheduling seconds without a spare (scheduler) minus with the hot spare."""
    from ..nodelab import load_nodelab_benchmark

    bench = load_nodelab_benchmark()
    spare = bench.medians["hot spare"]["reschedule"]
    via = bench.medians["replacement via scheduler"]["reschedule"]
    cold = bench.medians["replacement, cold"]["reschedule"]
    mistakes = (
        Mistake(bench.ratios["replacement via scheduler"], "that is the ratio of the two (how many times faster): the task asks for seconds saved"),
        Mistake(bench.settings["replacement via scheduler"]["replace_delay_s"], "that is the scheduler's delay the lab adds, not the measured difference: subtract the medians"),
        Mistake(cold - spare, "that is the saving against a fresh node started at once ('replacement, cold'): use the scheduler's row"),
        Mistake(spare, "that is the rescheduling with the spare itself: subtract it from the no-spare row"),
    )
    return NumberCheck("11.1 spare saving", via - spare, 0.005, "s", mistakes)


# ---------------------------------------------------------------- exercise 2
def host_loss_floors(scenario=None) -> tuple[float, float]:
    """(host-loss floor with a buddy copy, without one), minutes a day, with the spare (notebook 11)."""
    from .. import modes
    from ..scenario import Scenario

    sc = Scenario() if scenario is None else scenario
    with_copy = modes.per_mode_floor(sc, modes.ModeInputs(peer_copy=True))["host_loss"]
    without = modes.per_mode_floor(sc, modes.ModeInputs(peer_copy=False))["host_loss"]
    return with_copy, without


@exercise
def buddy_copy_saving() -> NumberCheck:
    """Exercise 2: minutes a day the buddy copy takes off the host-loss floor (the course's scenario, a spare)."""
    from .. import modes
    from ..scenario import Scenario

    sc = Scenario()
    with_copy, without = host_loss_floors(sc)
    right = without - with_copy
    share = modes.ModeInputs().share("host_loss")
    mistakes = (
        Mistake(without, "that is the host-loss floor without the copy: subtract the floor with it"),
        Mistake(without / with_copy, "that is a ratio: the task asks for minutes a day saved"),
        Mistake(right / share, "that counts every failure as a host loss: only the host-loss share of the failures loses a node's memory"),
        Mistake(right / sc.failures_per_day, "that is per failure: multiply by the failures a day"),
    )
    return NumberCheck("11.2 buddy copy saving", right, 0.005, "min/day", mistakes)
