"""Notebook 08's dashboard: fleet size, per-GPU rate, the levers' stage times and the write
cost -> the waterfall from the baseline to the floor, and the floor itself.

The key number is produced by :func:`floor_html` (tested) and shown in an ``ipywidgets.HTML``
with the CSS class ``course-result``. :func:`dashboard` returns the widget box (notebook 08
displays it, ``make app`` serves it with Voila). For the browser test:
``DashboardTarget("notebooks/08-the-floor.ipynb", "fleet GPUs", floor_html)``: with every
other slider at its default, ``floor_html(n_gpus)`` is the text the page must show.
"""
from __future__ import annotations

import html

import ipywidgets as widgets
import matplotlib.pyplot as plt

from ..answer import answer
from ..plots.floor import answer_waterfall

__all__ = ["FLEET_SIZES", "dashboard_defaults", "dashboard_answer", "floor_text", "floor_html", "dashboard"]

#: The fleet sizes the slider offers (GPUs): 1,024 to 131,072, powers of two and 1.5x between.
FLEET_SIZES = tuple(sorted({1024 * 2**k for k in range(8)} | {1536 * 2**k for k in range(7)}))


def dashboard_defaults() -> dict:
    """The sliders' starting values: the course's answer for 4,096 GPUs (computed from data/).

    Keys: n_gpus, rate_per_gpu_day, detect_s, restart_s (reschedule on a hot spare),
    reload_ms (from host memory) and write_ms (the in-memory snapshot's blocking cost).
    """
    a = answer()
    s = a.after.stages
    return {
        "n_gpus": a.n_gpus,
        "rate_per_gpu_day": a.rate_per_gpu_day,
        "detect_s": 60.0 * s.detect,
        "restart_s": 60.0 * s.reschedule,
        "reload_ms": 60_000.0 * s.reload,
        "write_ms": 60_000.0 * a.snapshot_cost_min,
    }


def dashboard_answer(n_gpus=None, rate_per_gpu_day=None, detect_s=None, restart_s=None, reload_ms=None, write_ms=None):
    """:func:`course_lib.answer.answer` for the dashboard's values (None: the default)."""
    d = dashboard_defaults()
    val = lambda name, x: d[name] if x is None else x  # noqa: E731
    return answer(
        n_gpus=int(round(val("n_gpus", n_gpus))),
        rate_per_gpu_day=val("rate_per_gpu_day", rate_per_gpu_day),
        detect_after_min=val("detect_s", detect_s) / 60.0,
        reschedule_after_min=val("restart_s", restart_s) / 60.0,
        reload_after_min=val("reload_ms", reload_ms) / 60_000.0,
        snapshot_cost_min=val("write_ms", write_ms) / 60_000.0,
    )


def floor_text(n_gpus=None, rate_per_gpu_day=None, detect_s=None, restart_s=None, reload_ms=None, write_ms=None) -> str:
    """The dashboard's key sentence: the floor and the after-levers loss for these values."""
    a = dashboard_answer(n_gpus, rate_per_gpu_day, detect_s, restart_s, reload_ms, write_ms)
    f = a.floor
    return (
        f"Floor λ(D+R) at {a.n_gpus:,} GPUs: {f.floor_minutes_per_day:.2f} min/day ({100 * f.floor_fraction:.3f} % of the day); "
        f"after the levers {f.loss_minutes_per_day:.2f} min/day ({100 * f.loss_fraction:.3f} %), "
        f"checkpoint every {f.interval_min:.2f} min"
    )


def floor_html(n_gpus=None, rate_per_gpu_day=None, detect_s=None, restart_s=None, reload_ms=None, write_ms=None) -> str:
    """:func:`floor_text` as the HTML the ``course-result`` widget holds."""
    return f"<b>{html.escape(floor_text(n_gpus, rate_per_gpu_day, detect_s, restart_s, reload_ms, write_ms))}</b>"


def _controls(d: dict) -> dict:
    style = {"description_width": "110px"}
    layout = widgets.Layout(width="420px")
    log = lambda value, lo, hi, desc, fmt: widgets.FloatLogSlider(  # noqa: E731
        value=value, base=10, min=lo, max=hi, step=0.05, description=desc, readout_format=fmt,
        continuous_update=False, style=style, layout=layout)
    return {
        "n_gpus": widgets.SelectionSlider(
            options=[(f"{n:,}", n) for n in FLEET_SIZES], value=d["n_gpus"], description="fleet GPUs",
            continuous_update=False, style=style, layout=layout),
        "rate_per_gpu_day": log(d["rate_per_gpu_day"], -4.5, -2.5, "rate /GPU-day", ".2e"),
        "detect_s": log(d["detect_s"], -1, 3, "detect (s)", ".3g"),
        "restart_s": log(d["restart_s"], -1, 3, "restart (s)", ".3g"),
        "reload_ms": log(d["reload_ms"], 0, 6, "reload (ms)", ".3g"),
        "write_ms": log(d["write_ms"], 0, 6, "write (ms)", ".3g"),
    }


def dashboard(**overrides) -> widgets.VBox:
    """The floor dashboard: sliders, the ``course-result`` floor sentence, the waterfall.

    overrides: starting values for any key of :func:`dashboard_defaults`.
    """
    d = dashboard_defaults()
    unknown = set(overrides) - set(d)
    if unknown:
        raise ValueError(f"overrides must be keys of {sorted(d)} (got {sorted(unknown)})")
    d.update({k: v for k, v in overrides.items() if v is not None})
    controls = _controls(d)
    result = widgets.HTML(value=floor_html(**d))
    result.add_class("course-result")
    out = widgets.Output()

    def redraw(_change=None):
        values = {k: c.value for k, c in controls.items()}
        result.value = floor_html(**values)
        with out:
            out.clear_output(wait=True)
            answer_waterfall(dashboard_answer(**values))
            plt.show()

    for c in controls.values():
        c.observe(redraw, names="value")
    redraw()
    names = list(controls)
    left = widgets.VBox([controls[k] for k in names[:3]])
    right = widgets.VBox([controls[k] for k in names[3:]])
    return widgets.VBox([widgets.HBox([left, right]), result, out])
