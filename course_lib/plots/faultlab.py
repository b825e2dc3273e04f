"""Figures of notebook 07 (the fault-injection lab): a real restart drawn as a timeline.

Pure drawing: the events come from the lab's log and the stages from
:func:`course_lib.faultlab.restart_stages`; colours are the course's stage colours
(:data:`course_lib.plots.restart.STAGE_COLOURS`). Times are in seconds here (the lab's
restarts last seconds, not minutes).
"""
from __future__ import annotations

from typing import Sequence

import matplotlib.pyplot as plt

from .restart import STAGE_COLOURS

__all__ = ["restart_timeline", "stage_bars_seconds"]

_STAGES = ("detect", "reschedule", "reload", "rewind")


def restart_timeline(events: Sequence[dict], restarts: Sequence, ax=None, rank: int = 0, zoom: int | None = None):
    """Training progress (completed step) of ``rank`` against wall-clock seconds since the first
    event, one line per worker generation, with each restart's four stages shaded in their colours
    and each injected failure marked by a black line labelled with its kind. ``zoom`` (an index
    into ``restarts``) limits the time axis to that restart, one second either side."""
    if ax is None:
        _, ax = plt.subplots(figsize=(8.0, 4.0))
    t0 = min(e["t"] for e in events)
    gens = sorted({e["gen"] for e in events if e["rank"] == rank})
    for g in gens:
        pts = sorted((e["t"] - t0, e["step"]) for e in events
                     if e["rank"] == rank and e["gen"] == g and e["ev"] in ("step_done", "state_loaded"))
        if pts:
            xs, ys = zip(*pts)
            ax.plot(xs, ys, "-", color="#333333", lw=1.2, marker=".", ms=3, label="completed step (rank %d)" % rank if g == gens[0] else None)
    top = max([e["step"] for e in events if e["ev"] == "step_done"] or [1])
    seen = set()
    for m in restarts:
        left = m.t_fail - t0
        for stage, secs in m.stages_s().items():
            if secs > 0:
                ax.axvspan(left, left + secs, color=STAGE_COLOURS[stage], alpha=0.35, lw=0,
                           label=None if stage in seen else stage)
                seen.add(stage)
            left += secs
        ax.axvline(m.t_fail - t0, color="black", lw=1.0)
        ax.text(m.t_fail - t0, top * 1.02, f" {m.kind}", rotation=0, va="bottom", ha="left", fontsize=8)
    ax.set_xlabel("wall-clock time since torchrun started (s)")
    ax.set_ylabel("optimizer steps completed")
    ax.set_ylim(0, top * 1.12)
    if zoom is not None:
        m = restarts[zoom]
        ax.set_xlim(m.t_fail - t0 - 1.0, m.t_fail - t0 + m.total_s + 1.0)
        ax.set_title(f"restart {zoom + 1}: {m.kind}, {m.total_s:.1f} s from failure to back at step {m.pre_failure_step}")
    ax.legend(loc="lower right", fontsize=8)
    return ax


def stage_bars_seconds(rows: dict[str, dict[str, float]], ax=None, log: bool = False):
    """Horizontal stacked bars of seconds per stage, one bar per named restart (``{name: {stage: s}}``)."""
    if ax is None:
        _, ax = plt.subplots(figsize=(8.0, 1.2 + 0.55 * len(rows)))
    names = list(rows)
    seen = set()
    for i, name in enumerate(names):
        left = 0.0
        for stage in _STAGES:
            secs = rows[name].get(stage, 0.0)
            if secs <= 0:
                continue
            ax.barh(i, secs, left=left, color=STAGE_COLOURS[stage], edgecolor="white", label=None if stage in seen else stage)
            seen.add(stage)
            left += secs
        ax.text(left, i, f" {left:.1f} s", va="center", fontsize=9)
    ax.set_yticks(range(len(names)), names)
    ax.invert_yaxis()
    ax.set_xlabel("seconds from failure to back at the pre-failure step")
    if log:
        ax.set_xscale("log")
    ax.legend(ncol=4, loc="lower center", bbox_to_anchor=(0.5, 1.0), fontsize=9)
    return ax
