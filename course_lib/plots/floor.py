"""Figures for notebook 08 (the floor) and notebook 09 (your fleet).

Pure drawing: every number comes from :mod:`course_lib.answer`, :mod:`course_lib.floor` and
:mod:`course_lib.projection` (one day model: no bar or line passes 100 % of the day).
The waterfall reuses notebook 03's :func:`course_lib.plots.restart.waterfall_chart` and adds
the floor bar. Each builder takes an optional ``ax`` and returns it.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np

from ..answer import Answer
from ..projection import CheckpointRegime, fleet_size_at_ettr
from ..restart import RestartBudget, RestartStages
from .restart import STAGE_COLOURS, waterfall_chart

__all__ = ["FLOOR_COLOUR", "answer_waterfall", "dashboard_waterfall", "overlapping_texts", "ettr_vs_fleet", "floor_vs_fleet",
           "floor_alternatives"]

FLOOR_COLOUR = "#8c564b"
REGIME_COLOURS = ("#d62728", "#ff7f0e", "#1f77b4", "#2ca02c", "#9467bd")


def answer_waterfall(ans: Answer, ax=None, title: str | None = None):
    """The chain from the baseline to the floor: each lever that saves (largest first), the after-levers
    loss, and the floor (the after-levers day with free writes and a checkpoint a step) as a hatched last
    bar; the interval change is noted."""
    if ax is None:
        _, ax = plt.subplots(figsize=(9.0, 4.6))
    steps = list(ans.steps)
    waterfall_chart(steps, ax=ax, start=ans.baseline, title=title or (  # no lever saves: the baseline bar, then the floor
        f"{ans.n_gpus:,} GPUs, {ans.failures_per_day:.2g} failures a day: from the baseline to the floor"))
    f = ans.after
    x = len(steps) + 2 if steps else 1
    if not steps:
        ax.set_xlim(-1, 2)
    pct = 100 * f.floor_fraction
    ax.bar(x, pct, color="white", edgecolor=FLOOR_COLOUR, hatch="//", width=0.6, linewidth=1.5)
    ax.text(x, pct, f"{pct:.3f} %\n{f.floor_minutes_per_day:.2f} min/day", ha="center", va="bottom", fontsize=9)
    labels = [t.get_text() for t in ax.get_xticklabels()] + ["floor"]
    ax.set_xticks(range(len(labels)), labels, rotation=20, ha="right")
    ax.text(0.99, 0.97, f"checkpoint interval {ans.interval_before_min:.1f} min (sync write) -> "
            f"{ans.interval_after_min:.2f} min (in-memory)", transform=ax.transAxes, ha="right", va="top", fontsize=9)
    return ax


def dashboard_waterfall(ans: Answer, ax=None, fontsize: float = 11.0):
    """The floor dashboard's chart (notebook 08, ``make app``): the same chain as :func:`answer_waterfall`,
    as horizontal bars, one row each, so that no two labels can meet at any slider value.

    Rows, top to bottom: the baseline, each lever (largest saving first; a floating bar from what it
    leaves to what it started from), the after-levers loss and the floor (free writes, a checkpoint a step), hatched. Each
    row's names are its y tick label; its value is written right of the bar's end, in its own row; the
    interval change is a second title line, above the axes. ``fontsize`` scales every text (the
    presentation mode uses a larger one). Returns the axes.
    """
    if ax is None:
        _, ax = plt.subplots(figsize=(8.0, 4.5))
    steps = list(ans.steps)
    f = ans.after
    start = steps[0].before if steps else ans.baseline
    pct = lambda b: 100 * b.fraction_of_day  # noqa: E731
    rows = [("baseline", 0.0, pct(start), "#444444", None, f"{pct(start):.2f} %  ({start.minutes_per_day:.1f} min/day)")]
    for st in steps:
        rows.append((st.lever.name, pct(st.after), pct(st.before), STAGE_COLOURS[st.lever.stage], None,
                     f"-{st.saved_minutes_per_day:.2f} min/day"))
    end = steps[-1].after if steps else start
    rows.append(("after the levers", 0.0, pct(end), "#2ca02c", None, f"{pct(end):.3f} %  ({end.minutes_per_day:.2f} min/day)"))
    rows.append(("floor", 0.0, 100 * f.floor_fraction, "white", "//",
                 f"{100 * f.floor_fraction:.3f} %  ({f.floor_minutes_per_day:.2f} min/day)"))
    top = max(r[2] for r in rows) or 1.0
    labels = []
    for y, (name, left, right, colour, hatch, label) in enumerate(rows):
        ax.barh(y, right - left, left=left, height=0.62, color=colour, hatch=hatch,
                edgecolor=FLOOR_COLOUR if hatch else colour, linewidth=1.5 if hatch else 0)
        labels.append(ax.text(right, y, "  " + label, va="center", ha="left", fontsize=fontsize))
    ax.set_yticks(range(len(rows)), [r[0] for r in rows], fontsize=fontsize)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_xlabel("share of the day lost (%)", fontsize=fontsize)
    ax.tick_params(axis="x", labelsize=fontsize * 0.9)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    ax.figure.suptitle(f"{ans.n_gpus:,} GPUs, {ans.failures_per_day:.3g} failures a day\ncheckpoint every "
                       f"{ans.interval_before_min:.2g} min (sync write) -> {ans.interval_after_min:.2g} min (in-memory)",
                       x=0.01, ha="left", fontsize=fontsize)
    ax.set_xlim(0, top * 1.6)
    for _ in range(4):  # widen the axis until the longest value label ends inside it
        ax.figure.canvas.draw()
        to_data = ax.transData.inverted()
        right = max(to_data.transform(t.get_window_extent().get_points())[1][0] for t in labels)
        if right <= ax.get_xlim()[1]:
            break
        ax.set_xlim(0, right * 1.03)
    return ax


def overlapping_texts(fig) -> list[tuple[str, str]]:
    """Pairs of visible texts of ``fig`` whose drawn boxes overlap, and texts that leave the figure
    (paired with 'outside the figure'); [] when every label stands clear. Draws the figure."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    hidden = set()  # tick labels of ticks outside the view are not drawn
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            eps = 1e-9 * max(1.0, abs(hi - lo))
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                if not lo - eps <= tick.get_loc() <= hi + eps:
                    hidden |= {id(tick.label1), id(tick.label2)}
    texts = [t for t in fig.findobj(plt.Text) if t.get_visible() and t.get_text().strip() and id(t) not in hidden]
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in texts]
    page = fig.bbox
    out = [(a, "outside the figure") for a, b in boxes
           if b.x0 < page.x0 - 0.5 or b.y0 < page.y0 - 0.5 or b.x1 > page.x1 + 0.5 or b.y1 > page.y1 + 0.5]
    for i, (a, ba) in enumerate(boxes):
        for b_text, bb in boxes[i + 1:]:
            if ba.x0 < bb.x1 and bb.x0 < ba.x1 and ba.y0 < bb.y1 and bb.y0 < ba.y1:
                out.append((a, b_text))
    return out


def ettr_vs_fleet(regimes: Sequence[CheckpointRegime], rates: Mapping[str, float], sizes, target: float = 0.9, ax=None):
    """ETTR against fleet size for each regime: a line at the central rate, a band between the
    lowest and highest rates, and a dot where the central line crosses ``target``.

    rates: {"band_low": r0, "central": r1, "band_high": r2} in failures per GPU-day.
    """
    if ax is None:
        _, ax = plt.subplots(figsize=(8.0, 4.4))
    sizes = np.asarray(sizes, dtype=float)
    lo, mid, hi = rates["band_low"], rates["central"], rates["band_high"]
    for colour, regime in zip(REGIME_COLOURS, regimes):
        central = [regime.ettr(n, mid) for n in sizes]
        best = [regime.ettr(n, lo) for n in sizes]
        worst = [regime.ettr(n, hi) for n in sizes]
        ax.fill_between(sizes, worst, best, color=colour, alpha=0.15, lw=0)
        ax.plot(sizes, central, color=colour, lw=2, label=regime.name)
        n90 = fleet_size_at_ettr(regime, mid, target, lo=sizes[0], hi=sizes[-1])
        if n90 is not None and n90 > sizes[0]:
            ax.plot([n90], [target], "o", color=colour)
    ax.axhline(target, color="#444444", lw=0.8, ls="--")
    ax.text(sizes[0], target, f" {target:.0%} ETTR", va="bottom", fontsize=9)
    ax.set_xscale("log", base=2)
    ax.set_xlim(sizes[0], sizes[-1])
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("GPUs in the job")
    ax.set_ylabel("expected ETTR (useful time / elapsed)")
    ax.set_title(f"ETTR at the central rate {mid:.1e}/GPU-day (band {lo:.0e} to {hi:.0e})")
    ax.legend(loc="lower left", fontsize=9)
    return ax


def floor_vs_fleet(detect_plus_restart_min: Mapping[str, float], rates: Mapping[str, float], sizes, ax=None):
    """The floor of a day whose failures each cost ``D + R`` minutes, as a share of the day against fleet
    size, one line per ``D + R`` (label -> minutes), shaded over the band of published rates (at most 100 %)."""
    if ax is None:
        _, ax = plt.subplots(figsize=(8.0, 4.0))
    sizes = np.asarray(sizes, dtype=float)
    lo, mid, hi = rates["band_low"], rates["central"], rates["band_high"]
    for colour, (label, dr) in zip(REGIME_COLOURS[::-1], detect_plus_restart_min.items()):
        stages = RestartStages(detect=dr, reschedule=0.0, reload=0.0, rewind=0.0)
        pct = lambda r: np.array([100 * RestartBudget.single(n * r, stages).floor_fraction for n in sizes])  # noqa: E731
        ax.fill_between(sizes, pct(lo), pct(hi), color=colour, alpha=0.15, lw=0)
        ax.plot(sizes, pct(mid), color=colour, lw=2, label=f"{label}: D + R = {dr:.2f} min")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlim(sizes[0], sizes[-1])
    ax.set_xlabel("GPUs in the job")
    ax.set_ylabel("floor (% of the day)")
    ax.set_title("The floor grows with the fleet (λ = GPUs x rate) until it takes the day")
    ax.legend(loc="upper left", fontsize=9)
    return ax


def floor_alternatives(floors: Mapping[str, RestartBudget], ax=None):
    """Horizontal bars: floor and checkpoint minutes per day for named alternatives (one day each)."""
    if ax is None:
        _, ax = plt.subplots(figsize=(7.5, 0.8 + 0.55 * len(floors)))
    names = list(floors)
    for row, name in enumerate(names):
        f = floors[name]
        ax.barh(row, f.floor_minutes_per_day, color=FLOOR_COLOUR, label="floor" if row == 0 else None)
        ax.barh(row, f.minutes_per_day - f.floor_minutes_per_day, left=f.floor_minutes_per_day, color="#9467bd",
                label="checkpoint: rewind beyond a step + writes" if row == 0 else None)
        ax.text(f.minutes_per_day, row, f" {f.minutes_per_day:.2f}", va="center", fontsize=9)
    ax.set_yticks(range(len(names)), names)
    ax.invert_yaxis()
    ax.set_xlabel("minutes lost per day after the levers")
    ax.legend(loc="lower right", fontsize=9)
    return ax
