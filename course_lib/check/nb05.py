"""Self-checks for the exercises of notebook 05 (write cost): solutions/05-write-cost-sol.ipynb.

- :func:`shard_gib`: one GPU's share of Llama 3 70B's training state on the question's fleet, GiB.
- :func:`sync_save_interval`: Young's interval for the 405B shard written with the H200 host's
  ``torch.save`` + fsync, in minutes.
- :func:`async_interval`: sympy, the optimal interval when an asynchronous checkpoint blocks
  for delta_b and becomes durable only delta_d later.

The shard arithmetic is :mod:`course_lib.sizing` (pure, no torch).
"""
from __future__ import annotations

import math

from .. import Scenario
from .. import interval as iv
from .. import sizing
from ..data import failure_logs, load_table
from . import Mistake
from ._common import ExprCheck, NumberCheck, exercise

__all__ = [
    "GIB",
    "SHARD_MODEL",
    "INTERVAL_MODEL",
    "shard_gib",
    "sync_save_interval",
    "async_symbols",
    "async_interval",
]

GIB = sizing.GIB  # bytes in a GiB (a unit)
SHARD_MODEL = "Llama 3 70B"  # exercise 1's model
INTERVAL_MODEL = "Llama 3 405B"  # exercise 2's model


def _params(model: str) -> float:
    models = load_table("model_sizes.csv")
    return float(dict(zip(models["model"], models["params"]))[model])


def _bytes_per_param() -> float:
    return Scenario().checkpoint_bytes_per_param


# ---------------------------------------------------------------- exercise 1
@exercise
def shard_gib() -> NumberCheck:
    """Exercise 1: GiB of checkpoint content (12 B/param) per GPU for Llama 3 70B on the question's fleet."""
    n = Scenario().n_gpus
    params, bpp = _params(SHARD_MODEL), _bytes_per_param()
    nbytes = sizing.shard_bytes(params, bpp, n)
    right = nbytes / GIB
    per_node = failure_logs().where("run", "Llama 3 405B").rows[0]["gpus_per_node"]
    return NumberCheck("05.1 shard per GPU", right, 0.005, "GiB", (
        Mistake(nbytes / 1e9, "that is GB (10^9 bytes): the task asks for GiB (2^30 bytes)"),
        Mistake(params * 2 / n / GIB, "that counts the bf16 weights only (2 bytes/parameter): a checkpoint saves 12 bytes/parameter (fp32 master weights and two Adam moments)"),
        Mistake(params * (bpp - 4) / n / GIB, "that leaves out the fp32 master weights: 4 + 4 + 4 = 12 bytes/parameter"),
        Mistake(params * (bpp + 4) / n / GIB, "that is ZeRO's 16 bytes/parameter of training memory: the fp16 weights and gradients are not saved at a step boundary (12 bytes/parameter)"),
        Mistake(params * bpp / GIB, "that is the whole model's state: fully sharded, each GPU holds 1/N of it"),
        Mistake(nbytes * per_node / GIB, f"that is one node's share ({per_node:.0f} GPUs): the task asks per GPU"),
        Mistake(nbytes / 2**20, "that is MiB: the task asks for GiB"),
    ))


# ---------------------------------------------------------------- exercise 2
@exercise
def sync_save_interval() -> NumberCheck:
    """Exercise 2: Young's interval (minutes) for the 405B shard written with torch.save + fsync on the H200 host."""
    scenario = Scenario()
    nbytes = sizing.shard_bytes(_params(INTERVAL_MODEL), _bytes_per_param(), scenario.n_gpus)
    delta_min = sizing.copy_min(nbytes, scenario.persist_gb_per_s)
    m_min = scenario.mtbf_min
    right = iv.young_interval(delta_min, m_min)
    return NumberCheck("05.2 interval for a synchronous save", right, 0.01, "min", (
        Mistake(math.sqrt(2 * delta_min * 60 * m_min), "the write cost is in seconds and the MTBF in minutes: convert both to minutes first"),
        Mistake(math.sqrt(2 * delta_min * scenario.fleet_mtbf_hours), "the MTBF is in hours and the write cost in minutes: convert both to minutes first"),
        Mistake(math.sqrt(delta_min * m_min), "Young's interval is sqrt(2 delta M): the factor 2 comes from the mean rewind tau/2"),
        Mistake(iv.young_interval(nbytes / (scenario.persist_gb_per_s * GIB) / 60, m_min), "the bandwidth is in GB/s (10^9 bytes), not GiB/s"),
        Mistake(iv.young_interval(sizing.copy_min(nbytes, scenario.snapshot_gb_per_s), m_min), "that is the in-memory snapshot's bandwidth: the task asks for torch.save + fsync"),
        Mistake(right * 60, "that is seconds: the task asks for minutes"),
        Mistake(delta_min, "that is the write cost delta itself: the task asks for the interval sqrt(2 delta M)"),
    ))


# ---------------------------------------------------------------- exercise 3 (sympy)
def async_symbols():
    """(tau, delta_b, delta_d, M, R) as the exercise names them, all positive."""
    import sympy

    return sympy.symbols("tau delta_b delta_d M R", positive=True)


@exercise
def async_interval() -> ExprCheck:
    """Exercise 3: optimal interval when a checkpoint blocks delta_b and is durable delta_d later (sympy)."""
    import sympy

    tau, db, dd, M, _ = async_symbols()
    return ExprCheck(
        "05.3 asynchronous checkpoint",
        sympy.sqrt(2 * db * M),
        (
            (sympy.sqrt(2 * (db + dd) * M), "the persist time does not block training: it only delays durability, which adds delta_d to every rewind whatever tau is"),
            (sympy.sqrt(2 * dd * M), "the interval is set by what blocks (delta_b); delta_d only shifts the waste by delta_d / M"),
            (sympy.sqrt(db * M), "the mean rewind is tau/2 + delta_d: keep the 1/2, it gives the factor 2 under the root"),
            (sympy.sqrt(2 * db * M) + dd, "delta_d adds to the waste, not to the optimal interval: differentiate with respect to tau"),
        ),
        "not the optimum: W = delta_b/tau + (tau/2 + delta_d + R)/M; differentiate with respect to tau, set to zero, take the positive root",
    )
