"""Self-checks for the exercises of notebook 13 (your incident log): solutions/13-your-incident-log-sol.ipynb.

The exercises read the vendored InfiniteHBD trace (``course_lib.incidents.load_trace``) and its
fleet (400 servers, 8 GPUs each), so their answers are the same on every machine.

- :func:`trace_rate`: the trace's job interruptions per GPU-day, the fleet's every server counted.
- :func:`dispersion_ratio`: variance / mean of the interruptions per node, over every node of the fleet.
- :func:`spare_pool`: spare nodes a 4,096-GPU job needs so that a failure finds one free 99 % of the time.
"""
from __future__ import annotations

import math

from . import Mistake
from ._common import NumberCheck, exercise

__all__ = ["trace_rate", "dispersion_ratio", "spare_pool", "trace_numbers"]


def trace_numbers() -> dict:
    """The trace's numbers the three exercises start from (interruptions, every fault, nodes, days, repairs)."""
    import numpy as np

    from ..incidents import analysis as an
    from ..incidents import load_trace, trace_fleet, trace_interruptions

    log, intr, fleet = load_trace(), trace_interruptions(), trace_fleet()
    counts = an.node_counts(intr, fleet.n_nodes)
    rep = an.repair_times(intr)
    closed = intr.duration_days[~intr.open]
    return {"faults": len(log), "interruptions": len(intr), "nodes": fleet.n_nodes, "gpus_per_node": fleet.gpus_per_node,
            "seen_nodes": int(len(np.unique(log.node))), "days": intr.days, "counts": counts,
            "counts_all": an.node_counts(log, fleet.n_nodes), "mean_repair_days": rep.mean_days,
            "median_repair_days": float(np.median(closed)), "p90_repair_days": rep.p90_days}


# ---------------------------------------------------------------- exercise 1
@exercise
def trace_rate() -> NumberCheck:
    """Exercise 1: the trace's interruptions per GPU-day: interruptions / (400 servers x 8 GPUs x the days)."""
    t = trace_numbers()
    gpu_days = t["nodes"] * t["gpus_per_node"] * t["days"]
    right = t["interruptions"] / gpu_days
    mistakes = (
        Mistake(t["interruptions"] / (t["seen_nodes"] * t["gpus_per_node"] * t["days"]),
                "that counts only the servers that appear in the trace (231): the other 169 ran all year without a fault, and their GPU-days count too"),
        Mistake(t["faults"] / gpu_days, "that counts every fault, stress tests, tests and planned changes too: count only the job interruptions (the course's classes)"),
        Mistake(right * t["gpus_per_node"], "that is per node-day (per server): divide by the 8 GPUs of each server"),
        Mistake(t["faults"] / (t["seen_nodes"] * t["gpus_per_node"] * t["days"]),
                "that counts every fault and only the servers in the trace: use the interruptions over all 400 servers"),
    )
    return NumberCheck("13.1 trace rate", right, 0.005, "per GPU-day", mistakes)


# ---------------------------------------------------------------- exercise 2
@exercise
def dispersion_ratio() -> NumberCheck:
    """Exercise 2: variance / mean of the interruptions per node, the nodes without one included (all 400)."""
    t = trace_numbers()
    c, a = t["counts"], t["counts_all"]
    right = c.var(ddof=1) / c.mean()
    seen = c[c > 0]
    mistakes = (
        Mistake(seen.var(ddof=1) / seen.mean(), "that uses only the nodes with an interruption: the nodes with none belong to the fleet (add zeros up to 400)"),
        Mistake(a.var(ddof=1) / a.mean(), "that counts every fault, stress tests too: use the job interruptions"),
        Mistake(c.mean() / c.var(ddof=1), "that is mean / variance: the index of dispersion is variance / mean (1 for Poisson)"),
    )
    return NumberCheck("13.2 dispersion", right, 0.01, "", mistakes)


# ---------------------------------------------------------------- exercise 3
def _pool(lam: float, repair_days: float) -> int:
    from scipy import stats

    return int(stats.poisson.ppf(0.99, lam * repair_days)) + 1


@exercise
def spare_pool() -> NumberCheck:
    """Exercise 3: spare nodes for a 4,096-GPU (512-node) job so that a failure finds one free with 99 % probability."""
    t = trace_numbers()
    nodes = math.ceil(4096 / t["gpus_per_node"])
    lam = t["interruptions"] / (t["nodes"] * t["days"]) * nodes  # the job's interruptions per day
    m = lam * t["mean_repair_days"]
    right = _pool(lam, t["mean_repair_days"])
    from scipy import stats

    mistakes = (
        Mistake(int(stats.poisson.ppf(0.99, m)), "one short: with s spares a failure finds one free when fewer than s are out, so s = the 99th percentile + 1"),
        Mistake(_pool(lam, t["median_repair_days"]), "that uses the median repair time: the number out at once is Poisson with mean lambda x the *mean* repair time, and the long repairs dominate it"),
        Mistake(round(m), "that is the mean number of nodes out at once: a pool that covers the mean leaves no spare about half the time"),
        Mistake(_pool(lam / nodes * t["nodes"], t["mean_repair_days"]), "that is for the trace's 400-node fleet: the job has 512 nodes (4,096 GPUs / 8)"),
    )
    return NumberCheck("13.3 spare pool", right, 0.01, "nodes", mistakes)
