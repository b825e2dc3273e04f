"""From a write cost measured on one machine to the per-GPU shard of a real model (notebook 05).

A checkpoint's blocking cost grows with the bytes each GPU has to save: its shard of the
training state, ``params x bytes_per_param / n_gpus`` (fully sharded; 16 bytes per parameter,
see :mod:`.state`). A strategy measured at ``s`` seconds per GiB therefore costs
``delta = s x shard_GiB`` per checkpoint, and the square-root law of notebook 04 turns that
into the optimal interval ``tau* = sqrt(2 delta M)`` and its first-order waste
``sqrt(2 delta / M)`` (writes + rewinds, without the restart term).

Pure functions on floats/arrays; no torch.
"""
from __future__ import annotations

import numpy as np

from .. import interval as iv
from .._validate import check_int_positive, check_positive

__all__ = ["GIB", "shard_bytes", "write_cost_s", "interval_rows"]

GIB = 2**30


def shard_bytes(params, n_gpus, bytes_per_param=16) -> float:
    """Bytes of training state per GPU when ``params`` parameters are sharded over ``n_gpus``."""
    return check_positive("params", params) * check_positive("bytes_per_param", bytes_per_param) / check_int_positive("n_gpus", n_gpus)


def write_cost_s(nbytes, seconds_per_gib) -> float:
    """Blocking cost in seconds of writing ``nbytes`` at ``seconds_per_gib`` (a measured rate)."""
    return check_positive("nbytes", nbytes) / GIB * check_positive("seconds_per_gib", seconds_per_gib)


def interval_rows(shards: dict, costs_s_per_gib: dict, mtbf_min) -> list[dict]:
    """One row per (shard, strategy): write cost delta (s), Young's interval (min), first-order waste.

    ``shards`` maps a label (e.g. a model name) to bytes per GPU; ``costs_s_per_gib`` maps a
    strategy to seconds per GiB; ``mtbf_min`` is the fleet MTBF in minutes. The waste is
    ``sqrt(2 delta / M)``, the writes and rewinds at the optimum (restarts excluded).
    """
    m = check_positive("mtbf_min", mtbf_min)
    rows = []
    for label, nbytes in shards.items():
        for strategy, rate in costs_s_per_gib.items():
            delta_s = write_cost_s(nbytes, rate)
            tau = iv.young_interval(delta_s / 60, m)
            rows.append({
                "shard": label,
                "shard_GiB": nbytes / GIB,
                "strategy": strategy,
                "delta_s": delta_s,
                "interval_min": tau,
                "waste": iv.waste_fraction(tau, delta_s / 60, m),
                "young_waste": float(np.sqrt(2 * delta_s / 60 / m)),
            })
    return rows
