"""Self-checks for the exercises of notebook 04 (optimal interval): solutions/04-optimal-interval-sol.ipynb.

Inputs as in notebook 04: M = the question's fleet MTBF in minutes, R = the 15-minute restart
minus the mean rewind, write costs from data/write_costs.csv.

- :func:`pfs_interval`: the exact optimal interval (Lambert W) for a 5-minute synchronous write.
- :func:`planned_stops_interval`: sympy, the optimum when planned stops (which checkpoint first)
  come on top of the failures.
- :func:`waste_at_twice_optimum`: the simulated waste when checkpointing at twice the optimum.
"""
from __future__ import annotations

from .. import Scenario
from .. import interval as iv
from ..data import load_table
from . import Mistake
from ._common import ExprCheck, NumberCheck, exercise

__all__ = [
    "PFS_REGIME",
    "baseline_write_min",
    "job_inputs",
    "pfs_interval",
    "planned_symbols",
    "planned_stops_interval",
    "waste_at_twice_optimum",
]

PFS_REGIME = "pfs_sync"  # exercise 1's write cost (a row of data/write_costs.csv)


def job_inputs() -> tuple[float, float]:
    """(M, R) in minutes as notebook 04 defines them from the Scenario."""
    s = Scenario()
    return s.fleet_mtbf_hours * 60, s.minutes_per_restart - s.mean_rewind_min


def baseline_write_min() -> float:
    """Notebook 04's baseline write (exercise 3's): the course's synchronous write of the shard, in minutes."""
    return Scenario().write_cost_min


def _blocking_min(regime: str) -> float:
    return load_table("write_costs.csv").where("regime", regime).rows[0]["blocking_s"] / 60


# ---------------------------------------------------------------- exercise 1
@exercise
def pfs_interval() -> NumberCheck:
    """Exercise 1: the exact optimal interval (minutes) for the pfs_sync write at the question's MTBF."""
    m, _ = job_inputs()
    delta = _blocking_min(PFS_REGIME)
    right = iv.optimal_interval_exact(delta, m)
    return NumberCheck("04.1 exact interval, 5-minute write", right, 0.005, "min", (
        Mistake(iv.young_interval(delta, m), "that is Young's first-order sqrt(2 delta M): at this delta/M it overshoots; the task asks for the exact optimum, interval.optimal_interval_exact"),
        Mistake(iv.optimal_interval_exact(delta, m) / 60, "that is hours: the task asks for minutes"),
        Mistake(iv.optimal_interval_exact(delta * 60, m), "the write cost is in seconds in the table: convert it to minutes (/60) before mixing it with M in minutes"),
        Mistake(iv.young_interval(delta, m / 60), "M must be in minutes, like delta: you used hours"),
        Mistake(iv.optimal_interval_exact(baseline_write_min(), m), "that is notebook 04's baseline write cost: the task asks for the parallel-file-system write (pfs_sync)"),
    ))


# ---------------------------------------------------------------- exercise 2 (sympy)
def planned_symbols():
    """(tau, delta, M, R, P) as the exercise names them, all positive."""
    import sympy

    return sympy.symbols("tau delta M R P", positive=True)


@exercise
def planned_stops_interval() -> ExprCheck:
    """Exercise 2: the optimal interval with failures (MTBF M) and planned stops every P (sympy)."""
    import sympy

    tau, delta, M, R, P = planned_symbols()
    return ExprCheck(
        "04.2 planned stops",
        sympy.sqrt(2 * delta * M),
        (
            (sympy.sqrt(2 * delta * M * P / (M + P)), "a planned stop checkpoints first, so it rewinds nothing: only failures enter the tau/2 term, and the stops' R/P is a constant"),
            (sympy.sqrt(2 * delta * P), "the rewind term comes from the failures (mean time M), not from the planned stops"),
            (sympy.sqrt(2 * delta * (M + P)), "rates add, times do not: and here the planned stops do not enter the optimum at all"),
            (sympy.sqrt(delta * M), "the mean rewind is tau/2: the 1/2 gives the factor 2 under the root"),
        ),
        "not the optimum: W = delta/tau + (tau/2 + R)/M + R/P; differentiate with respect to tau, set to zero, take the positive root",
    )


# ---------------------------------------------------------------- exercise 3
@exercise
def waste_at_twice_optimum() -> NumberCheck:
    """Exercise 3: the simulated waste (fraction of useful work) at twice the exact optimal interval."""
    m, r = job_inputs()
    delta = baseline_write_min()
    tau = iv.optimal_interval_exact(delta, m)
    right = iv.expected_waste(2 * tau, delta, m, r)
    return NumberCheck("04.3 waste at twice the optimum", right, 0.01, "", (
        Mistake(iv.expected_waste(tau, delta, m, r), "that is the waste at the optimum: the task asks for twice the optimal interval"),
        Mistake(iv.expected_waste(2 * tau, delta, m, 0.0), "you left out the restart R: pass restart=R to the simulator"),
        Mistake(100 * right, "that is a percentage: give the waste as a fraction of useful work"),
    ))
