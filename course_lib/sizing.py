"""How big a checkpoint shard is and how long a copy of it takes (notebooks 03, 05, 06).

A fully sharded job of ``params`` parameters saves ``params x bytes_per_param`` bytes of
state, split over its GPUs; each GPU's shard is what one checkpoint write, one in-memory
snapshot or one reload moves. A path measured at ``b`` GB/s (1e9 bytes per second) moves a
shard in ``shard / b`` seconds; a strategy measured at ``s`` seconds per GiB costs ``s x shard
/ 2**30`` seconds. Pure arithmetic on numbers: no torch, no data files (callers pass the
sourced numbers in), results in bytes and **minutes** like the rest of course_lib.
"""
from __future__ import annotations

import numpy as np

from . import interval as iv
from ._validate import check_int_positive, check_positive

__all__ = ["GIB", "GB", "shard_bytes", "copy_min", "write_cost_min_per_gib", "interval_rows"]

GIB = 2**30
GB = 1e9


def shard_bytes(params, bytes_per_param, n_gpus) -> float:
    """Bytes of checkpoint state per GPU: ``params x bytes_per_param / n_gpus`` (fully sharded)."""
    return check_positive("params", params) * check_positive("bytes_per_param", bytes_per_param) / check_int_positive("n_gpus", n_gpus)


def copy_min(nbytes, gb_per_s) -> float:
    """Minutes to move ``nbytes`` over a path measured at ``gb_per_s`` GB/s (1e9 bytes/s)."""
    return check_positive("nbytes", nbytes) / GB / check_positive("gb_per_s", gb_per_s) / 60.0


def write_cost_min_per_gib(nbytes, seconds_per_gib) -> float:
    """Minutes of blocking write for ``nbytes`` at a measured ``seconds_per_gib`` (notebook 05)."""
    return check_positive("nbytes", nbytes) / GIB * check_positive("seconds_per_gib", seconds_per_gib) / 60.0


def interval_rows(shards: dict, costs_s_per_gib: dict, mtbf_min) -> list[dict]:
    """One row per (shard, strategy): write cost delta (s), Young's interval (min), first-order waste.

    ``shards`` maps a label (e.g. a model name) to bytes per GPU; ``costs_s_per_gib`` maps a
    strategy to seconds per GiB; ``mtbf_min`` is the fleet MTBF in minutes. The waste is the
    first-order ``waste_fraction`` at Young's interval without a restart term (writes and
    rewinds only), which equals ``sqrt(2 delta / M)`` there (notebook 04 derives it).
    """
    m = check_positive("mtbf_min", mtbf_min)
    rows = []
    for label, nbytes in shards.items():
        for strategy, rate in costs_s_per_gib.items():
            delta = write_cost_min_per_gib(nbytes, rate)
            tau = iv.young_interval(delta, m)
            rows.append({
                "shard": label,
                "shard_GiB": nbytes / GIB,
                "strategy": strategy,
                "delta_s": 60.0 * delta,
                "interval_min": tau,
                "waste": iv.waste_fraction(tau, delta, m),
                "young_waste": float(np.sqrt(2 * delta / m)),
            })
    return rows
