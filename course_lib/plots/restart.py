"""Figures for notebook 03 (and notebook 08's floor): one restart by stage, and the lever waterfall.

Pure drawing: every number comes from :mod:`course_lib.restart` (a budget and its
:class:`~course_lib.restart.WaterfallStep` list). Each builder takes an optional ``ax``
and returns it, so a notebook can place two figures side by side.
"""
from __future__ import annotations

from typing import Sequence

import matplotlib.pyplot as plt

from ..levers import WaterfallStep
from ..restart import STAGES, RestartBudget

__all__ = ["STAGE_COLOURS", "stage_bar", "waterfall_chart"]

#: One colour per stage (and the checkpoint write), shared by every restart figure.
STAGE_COLOURS = {
    "detect": "#d62728",
    "reschedule": "#ff7f0e",
    "reload": "#1f77b4",
    "rewind": "#9467bd",
    "latency": "#8c564b",  # the rewind past a late-detected corruption (silent data corruption)
    "write": "#7f7f7f",
    "idle": "#bcbd22",  # an idle hot spare's GPUs
}


def stage_bar(budgets: dict[str, RestartBudget], ax=None):
    """Horizontal stacked bars of minutes per day by stage, one bar per named budget."""
    if ax is None:
        _, ax = plt.subplots(figsize=(7.0, 1.2 + 0.6 * len(budgets)))
    names = list(budgets)
    seen: set[str] = set()
    for row, name in enumerate(names):
        left = 0.0
        for stage, minutes in budgets[name].breakdown().items():
            if minutes <= 0:
                continue
            ax.barh(row, minutes, left=left, color=STAGE_COLOURS[stage], edgecolor="white",
                    label=None if stage in seen else stage)
            seen.add(stage)
            if minutes >= 1.5:
                ax.text(left + minutes / 2, row, f"{minutes:.1f}", ha="center", va="center", color="white", fontsize=9)
            left += minutes
    ax.set_yticks(range(len(names)), names)
    ax.invert_yaxis()
    ax.set_xlabel("minutes lost per day")
    handles, labels = ax.get_legend_handles_labels()
    order = [labels.index(s) for s in (*STAGES, "latency", "write", "idle") if s in labels]
    ax.legend([handles[i] for i in order], [labels[i] for i in order], ncol=5, loc="lower center",
              bbox_to_anchor=(0.5, 1.0), fontsize=9)
    return ax


def waterfall_chart(steps: Sequence[WaterfallStep], ax=None, title: str | None = None, start: RestartBudget | None = None):
    """Waterfall from the first budget's loss (% of the day) down through each lever.

    Each falling bar is coloured by the stage its lever attacks and labelled with the
    minutes per day it saves; the first and last bars are the totals. With no step (every
    lever switched off) and ``start`` given, the chart is the baseline bar alone.
    """
    if not steps and start is None:
        raise ValueError("steps must contain at least one WaterfallStep (or give start, the budget with no lever)")
    if ax is None:
        _, ax = plt.subplots(figsize=(8.0, 4.2))
    if not steps:
        pct = 100 * start.fraction_of_day
        ax.bar(0, pct, color="#444444", width=0.6)
        ax.text(0, pct, f"{pct:.2f} %\n{start.minutes_per_day:.1f} min/day", ha="center", va="bottom", fontsize=9)
        ax.set_xticks([0], ["baseline (no lever)"])
        ax.set_xlim(-1, 1)
        ax.set_ylabel("share of the day lost (%)")
        ax.set_ylim(0, pct * 1.25)
        ax.set_title(title or "No lever: the baseline")
        return ax
    start = steps[0].before
    pct = [100 * start.fraction_of_day] + [100 * s.after.fraction_of_day for s in steps]
    labels = ["baseline"] + [s.lever.name for s in steps] + ["after levers"]
    ax.bar(0, pct[0], color="#444444", width=0.6)
    ax.text(0, pct[0], f"{pct[0]:.2f} %\n{start.minutes_per_day:.1f} min/day", ha="center", va="bottom", fontsize=9)
    for i, step in enumerate(steps, start=1):
        top, bottom = pct[i - 1], pct[i]
        ax.bar(i, top - bottom, bottom=bottom, color=STAGE_COLOURS[step.lever.stage], width=0.6)
        ax.plot([i - 1.3, i + 0.3], [top, top], color="#999999", lw=0.8, ls=":")
        ax.text(i, top, f"-{step.saved_minutes_per_day:.1f} min/day", ha="center", va="bottom", fontsize=9)
    last = len(steps) + 1
    end = steps[-1].after
    ax.plot([last - 1.3, last + 0.3], [pct[-1], pct[-1]], color="#999999", lw=0.8, ls=":")
    ax.bar(last, pct[-1], color="#2ca02c", width=0.6)
    ax.text(last, pct[-1], f"{pct[-1]:.2f} %\n{end.minutes_per_day:.1f} min/day", ha="center", va="bottom", fontsize=9)
    ax.set_xticks(range(len(labels)), labels, rotation=20, ha="right")
    ax.set_ylabel("share of the day lost (%)")
    ax.set_ylim(0, pct[0] * 1.25)
    ax.set_title(title or "Each lever, largest saving first")
    return ax
