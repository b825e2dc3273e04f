"""Self-checks for the exercises of notebook 06 (square-root Pareto): solutions/06-square-root-pareto-sol.ipynb.

Inputs as in notebook 06: the 405B training state from data/levers.csv, write costs from
data/write_costs.csv, the question's fleet MTBF.

- :func:`fleet_scaling`: sympy, the optimal interval of a fully sharded job of N GPUs.
- :func:`snapshot_interval_at`: the in-memory snapshot's optimal interval on 16,384 GPUs, seconds.
- :func:`bandwidth_for_interval`: the copy bandwidth (GB/s) a 10-second interval needs.
"""
from __future__ import annotations

from .. import Scenario
from .. import interval as iv
from .. import sizing
from . import Feedback, Mistake
from ._common import ExprCheck, NumberCheck

__all__ = [
    "FLEET_GPUS",
    "TARGET_INTERVAL_S",
    "shard_gb",
    "fleet_scaling_symbols",
    "fleet_scaling",
    "snapshot_interval_at",
    "bandwidth_for_interval",
    "checks",
    "expr_checks",
]

FLEET_GPUS = 16_384  # exercise 2's fleet (a course choice: notebook 06's "Try it")
TARGET_INTERVAL_S = 10.0  # exercise 3's interval (a course choice)


def shard_gb(n_gpus: int) -> float:
    """GB (1e9 bytes) of checkpoint state per GPU of the course's model on ``n_gpus`` GPUs."""
    return Scenario().replace(n_gpus=n_gpus).shard_bytes / sizing.GB


def _snapshot_gbps() -> float:
    return Scenario().snapshot_gb_per_s


# ---------------------------------------------------------------- exercise 1 (sympy)
def fleet_scaling_symbols():
    """(tau, S, B, r, N) as the exercise names them, all positive."""
    import sympy

    return sympy.symbols("tau S B r N", positive=True)


def _scaling_check() -> ExprCheck:
    import sympy

    tau, S, B, r, N = fleet_scaling_symbols()
    return ExprCheck(
        "06.1 interval against fleet size",
        sympy.sqrt(2 * S / (B * r)) / N,
        (
            (sympy.sqrt(2 * S / (B * N * r)), "only one of the two shrinks in your answer: each GPU writes its shard S/N, and the fleet MTBF is 1/(N r); both scale with N"),
            (sympy.sqrt(2 * S / (B * r)), "N cancelled: the fleet MTBF is 1/(N r), it shrinks as the fleet grows"),
            (sympy.sqrt(S / (B * r)) / N, "Young's interval is sqrt(2 delta M): keep the factor 2"),
            (sympy.sqrt(2 * S * r / B), "that is the waste at the optimum, sqrt(2 delta / M), which does not depend on N: the task asks for tau*"),
        ),
        "not the optimum: put delta = S/(N B) and M = 1/(N r) into tau* = sqrt(2 delta M) and simplify",
    )


def fleet_scaling(answer) -> Feedback:
    """Exercise 1: the optimal interval of a fully sharded N-GPU job, in sympy (S, B, r, N)."""
    return _scaling_check()(answer)


# ---------------------------------------------------------------- exercise 2
def _snapshot_interval_s(n_gpus: int, m_min: float, shard: float) -> float:
    copy_min = sizing.copy_min(shard * sizing.GB, _snapshot_gbps())
    return 60 * iv.bounded_interval(copy_min, m_min, copy_min)


def _snapshot_check() -> NumberCheck:
    s = Scenario()
    m_big = s.replace(n_gpus=FLEET_GPUS).mtbf_min
    m_small = s.mtbf_min
    right = _snapshot_interval_s(FLEET_GPUS, m_big, shard_gb(FLEET_GPUS))
    return NumberCheck("06.2 snapshot interval at 16,384 GPUs", right, 0.01, "s", (
        Mistake(_snapshot_interval_s(s.n_gpus, m_small, shard_gb(s.n_gpus)), f"that is the {s.n_gpus:,}-GPU job: both the shard and the MTBF change with the fleet"),
        Mistake(_snapshot_interval_s(FLEET_GPUS, m_big, shard_gb(s.n_gpus)),
                "you scaled only one of the two: the per-GPU shard shrinks with the fleet, and so does the MTBF (same per-GPU rate, more GPUs)"),
        Mistake(right / 60, "that is minutes: the task asks for seconds"),
        Mistake(right * 1000, "that is milliseconds: the task asks for seconds"),
    ))


def snapshot_interval_at(answer) -> Feedback:
    """Exercise 2: seconds between in-memory snapshots at the optimum on 16,384 GPUs (the question's per-GPU rate)."""
    return _snapshot_check()(answer)


# ---------------------------------------------------------------- exercise 3
def _bandwidth_check() -> NumberCheck:
    s = Scenario()
    m = s.mtbf_min
    tau_min = TARGET_INTERVAL_S / 60
    delta_s = 60 * iv.write_cost_for_interval(tau_min, m)
    shard = shard_gb(s.n_gpus)
    right = shard / delta_s
    return NumberCheck("06.3 bandwidth for a 10-second interval", right, 0.01, "GB/s", (
        Mistake(right / 2, "delta = tau^2 / (2 M): you dropped the 2, which doubles the write budget"),
        Mistake(shard / (60 * iv.write_cost_for_interval(TARGET_INTERVAL_S, m)), "the interval is in seconds and M in minutes: convert the interval to minutes first"),
        Mistake(right * 1e9 / 2**30, "that is GiB/s: the task asks for GB/s (10^9 bytes)"),
        Mistake(right * 60, "you divided by the write budget in minutes: for GB/s divide the shard's GB by seconds"),
        Mistake(delta_s * 1000, "that is the write budget in milliseconds: the task asks for the bandwidth that copies the shard in that time"),
    ))


def bandwidth_for_interval(answer) -> Feedback:
    """Exercise 3: GB/s a snapshot copy needs for a 10-second optimal interval (the 405B shard on the question's fleet)."""
    return _bandwidth_check()(answer)


def checks() -> dict[str, NumberCheck]:
    """Every graded number of notebook 06's exercises, by name."""
    return {"snapshot_interval_at": _snapshot_check(), "bandwidth_for_interval": _bandwidth_check()}


def expr_checks() -> dict[str, ExprCheck]:
    """Every graded sympy expression of notebook 06's exercises, by name."""
    return {"fleet_scaling": _scaling_check()}
