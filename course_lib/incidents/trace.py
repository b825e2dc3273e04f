"""The vendored InfiniteHBD trace and the numbers the course's model takes from it (notebooks 08, 13).

``data/infinitehbd_fault_trace.json`` is stepfun-ai/InfiniteHBD-Trace's ``fault_trace.json``
(Apache-2.0, Shou et al., InfiniteHBD, SIGCOMM 2025), checksum-verified on load; its fleet
(400 servers, of which the trace lists the 231 with a fault) is ``data/infinitehbd_fleet.csv``.
The three functions the rest of the course calls, each measured on the trace's interruptions
with the course's defaults:

- :func:`trace_lemon_removal`: the out-of-sample lemon-removal rate factor and the capacity it
  removes (``.factor``, ``.capacity_removed``), the measured replacement of a guessed factor;
- :func:`trace_repeat_fault_share`: the share of interruptions on a node that had one before
  (within ``within_days``), the case for quarantining a node after a fault;
- :func:`trace_spare_pool`: the spares a job needs for a free one with 99 % probability, from the
  measured repair times (Poisson and replayed).
"""
from __future__ import annotations

import functools
import math

from .analysis import Fleet, LemonRemoval, RepeatShare, lemon_removal, repeat_fault_share, replay_spares, spare_pool
from .policy import classify
from .readers import read_infinitehbd
from .schema import IncidentLog

__all__ = ["TRACE_FILE", "LAB_FILE", "trace_path", "lab_example", "load_trace", "trace_fleet", "trace_interruptions", "trace_lemon_removal",
           "trace_repeat_fault_share", "SparePool", "trace_spare_pool"]

TRACE_FILE = "infinitehbd_fault_trace.json"


LAB_FILE = "faultlab_events.jsonl"


def _verified(name: str, data_dir=None):
    from pathlib import Path

    from ..data import DATA_DIR, verify

    d = Path(data_dir or DATA_DIR)
    verify(name, d)
    return d / name


def trace_path(data_dir=None):
    """The vendored trace's path, after checking it against data/MANIFEST.csv."""
    return _verified(TRACE_FILE, data_dir)


def lab_example(data_dir=None) -> IncidentLog:
    """The course's own fault-lab run (data/faultlab_events.jsonl, notebook 07's lab) read into the schema's stage timestamps."""
    from .readers import read_lab_events

    return read_lab_events(_verified(LAB_FILE, data_dir))


@functools.lru_cache(maxsize=4)
def _load(data_dir) -> IncidentLog:
    return read_infinitehbd(trace_path(data_dir))


def load_trace(data_dir=None) -> IncidentLog:
    """The InfiniteHBD trace as an :class:`~course_lib.incidents.schema.IncidentLog` (every fault)."""
    return _load(None if data_dir is None else str(data_dir))


def trace_fleet(data_dir=None) -> Fleet:
    """The trace's fleet: 400 servers (the README) x 8 GPUs (the course's assumption), data/infinitehbd_fleet.csv."""
    from ..data import sourced

    f = sourced("infinitehbd_fleet.csv", "key", data_dir)
    return Fleet(int(f["servers"].value), int(f["gpus_per_server"].value))


def trace_interruptions(data_dir=None) -> IncidentLog:
    """The trace's job interruptions (the classes data/incident_classes.csv counts)."""
    log = load_trace(data_dir)
    return log.where(classify(log).interruption)


def trace_lemon_removal(data_dir=None, split: float = 0.5, threshold: int | None = None) -> LemonRemoval:
    """Lemon-node removal measured out of sample on the trace: ``.factor`` (with ``.factor_low``/``.factor_high``)
    on the rate, ``.capacity_removed`` (share of the nodes). Defaults: lemons chosen on the first half by the
    1 % rule (:func:`course_lib.incidents.analysis.lemon_threshold`), the factor measured on the second half."""
    return lemon_removal(trace_interruptions(data_dir), trace_fleet(data_dir).n_nodes, split, threshold)


def trace_repeat_fault_share(data_dir=None, within_days: float | None = 7.0) -> RepeatShare:
    """Share of the trace's interruptions on a node that had one within ``within_days`` before (None: ever)."""
    return repeat_fault_share(trace_interruptions(data_dir), trace_fleet(data_dir).n_nodes, within_days)


class SparePool(tuple):
    """(poisson, replay): spares for a free one with the given probability, the two ways."""

    @property
    def poisson(self) -> int:
        return self[0]

    @property
    def replay(self) -> int:
        return self[1]


def trace_spare_pool(job_gpus: int = 4096, quantile: float = 0.99, data_dir=None) -> SparePool:
    """Spare nodes a ``job_gpus`` job on the trace's fleet needs so that a failure finds one free with
    probability ``quantile``: (Poisson over the mean repair time, replaying the trace)."""
    from .analysis import rate, repair_times

    fleet = trace_fleet(data_dir)
    intr = trace_interruptions(data_dir)
    nodes = math.ceil(job_gpus / fleet.gpus_per_node)
    lam = rate(intr, fleet).rate_per_node_day * nodes
    mean = repair_times(intr).mean_days
    return SparePool((spare_pool(lam, mean, quantile), replay_spares(intr, nodes, fleet.n_nodes, quantile)[0]))
