"""Figures of notebook 05 (the write cost of a checkpoint).

Pure drawing: the numbers come from :func:`course_lib.checkpoint.bench.summarize` and
:func:`course_lib.sizing.interval_rows`. Each builder takes an optional ``ax``
and returns it; the notebook calls ``plt.show()``.
"""
from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np

__all__ = ["LABELS", "write_cost_bars", "scaled_cost_lines"]

LABELS = {
    "bare_copy": "bare copy\n(reference)",
    "torch_save": "torch.save\n+ fsync",
    "dcp": "DCP save",
    "dcp_async": "DCP\nasync_save",
    "snapshot": "snapshot +\npersist",
}


def _axes(ax, figsize=None):
    if ax is None:
        _, ax = plt.subplots(figsize=figsize)
    return ax


def write_cost_bars(summary, ax=None, title=None):
    """Blocking time vs time to durable (and reload) per strategy, log seconds, one size.

    ``summary`` is the list of medians from ``summarize`` for a single (size, ranks).
    """
    ax = _axes(ax, (8, 4))
    names = [s["strategy"] for s in summary]
    x = np.arange(len(names))
    width = 0.27
    series = [("blocking_s", "blocking (training stalled)", "C3"), ("durable_s", "until durable (on disk, fsynced)", "C0"),
              ("reload_s", "reload (verify + load)", "C2")]
    for i, (key, label, color) in enumerate(series):
        vals = [s[key] if s[key] is not None and not (isinstance(s[key], float) and math.isnan(s[key])) else np.nan for s in summary]
        ax.bar(x + (i - 1) * width, vals, width, label=label, color=color)
    ax.set_yscale("log")
    ax.set_xticks(x)
    ax.set_xticklabels([LABELS.get(n, n) for n in names], fontsize=9)
    ax.set_ylabel("time per checkpoint (s, log scale)")
    ax.set_title(title or "Write cost per strategy (median of the repeats)")
    ax.legend(fontsize=8, loc="upper left")
    return ax


def scaled_cost_lines(rows, ax=None, title=None):
    """Blocking write cost delta (s, log) per shard for each strategy; rows from ``interval_rows``.

    Strategies whose name starts with "H200" are drawn dashed (the reference host).
    """
    ax = _axes(ax, (8, 4))
    shards = list(dict.fromkeys(r["shard"] for r in rows))
    strategies = list(dict.fromkeys(r["strategy"] for r in rows))
    x = np.arange(len(shards))
    for i, st in enumerate(strategies):
        ys = [next(r["delta_s"] for r in rows if r["shard"] == sh and r["strategy"] == st) for sh in shards]
        ls = "--" if st.startswith("H200") else "-"
        ax.plot(x, ys, ls, marker="o", color=f"C{i}", label=st)
    ax.set_yscale("log")
    ax.set_xticks(x)
    gib = {r["shard"]: r["shard_GiB"] for r in rows}
    ax.set_xticklabels([f"{sh}\n({gib[sh]:.2g} GiB/GPU)" for sh in shards], fontsize=9)
    ax.set_ylabel("blocking write cost $\\delta$ (s, log scale)")
    ax.set_title(title or "Write cost of one per-GPU shard")
    ax.legend(fontsize=8)
    return ax
