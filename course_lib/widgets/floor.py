"""Notebook 08's dashboard: fleet size, per-GPU rate, the levers' stage times and the write
cost -> the waterfall from the baseline to the floor, and the floor itself.

The key number is produced by :func:`floor_html` (tested) and shown in an ``ipywidgets.HTML``
with the CSS class ``course-result``. :func:`dashboard` returns the widget box (notebook 08
displays it, ``make app`` serves it with Voila). For the browser test:
``DashboardTarget("notebooks/08-the-floor.ipynb", "GPUs in the job", floor_html)``: with every
other slider at its default, ``floor_html(n_gpus)`` is the text the page must show.

Layout for a projector (1280 x 800 and up): the sliders on the left, the live chart beside
them at the top, the sentence under both, then one line defining every symbol. Every slider
moves the sentence (it states each slider's value as it enters the floor), so even a reload
step of a few milliseconds shows. The only call into the rest of course_lib is
:func:`dashboard_answer` (the Scenario of the slider values -> the answer).
"""
from __future__ import annotations

import html

import ipywidgets as widgets
import matplotlib.pyplot as plt

from ..answer import answer
from ..plots.floor import answer_waterfall
from ..scenario import Scenario
from ..units import from_minutes, to_minutes

__all__ = ["FLEET_SIZES", "SLIDER_LABELS", "SYMBOLS", "dashboard_defaults", "dashboard_scenario", "dashboard_answer",
           "floor_text", "floor_html", "dashboard"]

#: The fleet sizes the slider offers (GPUs): 1,024 to 131,072, powers of two and 1.5x between.
FLEET_SIZES = tuple(sorted({1024 * 2**k for k in range(8)} | {1536 * 2**k for k in range(7)}))

#: The sliders' labels, in words (each fits its label column whole: nothing is cut to "rate /GPU...").
SLIDER_LABELS = {
    "n_gpus": "GPUs in the job",
    "rate_per_gpu_day": "failures per GPU-day",
    "detect_s": "crash-detection poll (s)",
    "restart_s": "R: reschedule (s)",
    "reload_ms": "reload from memory (ms)",
    "write_ms": "checkpoint write δ (ms)",
}

#: The line under the dashboard that defines every symbol it shows.
SYMBOLS = (
    "λ: failures a day (GPUs × failures per GPU-day). D: detection, until the job notices a failure (heartbeat). "
    "R: restart, rescheduling onto a hot spare plus reloading the checkpoint from host memory. "
    "δ: how long one checkpoint write blocks training; it sets the checkpoint interval τ* = √(2δM), M = 24 h / λ. "
    "The floor λ(D+R) is what no checkpoint removes: the hatched bar. The levers take the baseline down to it, largest first."
)


def dashboard_defaults(n_gpus: int | None = None) -> dict:
    """The sliders' starting values: the course's Scenario (at ``n_gpus``, if given).

    Keys: n_gpus, rate_per_gpu_day, detect_s (heartbeat detection), restart_s (reschedule on a
    hot spare), reload_ms (from host memory) and write_ms (the in-memory snapshot's blocking
    cost). The last two depend on the fleet: the shard per GPU shrinks as the fleet grows.
    """
    sc = Scenario.from_params(n_gpus=n_gpus)
    return {
        "n_gpus": sc.n_gpus,
        "rate_per_gpu_day": sc.rate_per_gpu_day,
        "detect_s": from_minutes(sc.detect_after_min, "s"),
        "restart_s": from_minutes(sc.reschedule_after_min, "s"),
        "reload_ms": from_minutes(sc.reload_from_memory_min, "ms"),
        "write_ms": from_minutes(sc.snapshot_min, "ms"),
    }


def dashboard_scenario(n_gpus=None, rate_per_gpu_day=None, detect_s=None, restart_s=None, reload_ms=None, write_ms=None) -> Scenario:
    """The one Scenario of the dashboard's values (the slider units are converted here, and only here).

    None keeps the course's value at that fleet size, so with only ``n_gpus`` set the
    dashboard answers exactly what ``python -m course_lib budget --gpus N`` answers.
    """
    conv = lambda x, unit: None if x is None else to_minutes(x, unit)  # noqa: E731
    return Scenario.from_params(
        n_gpus=None if n_gpus is None else int(round(n_gpus)), rate_per_gpu_day=rate_per_gpu_day,
        detect_after_min=conv(detect_s, "s"), reschedule_after_min=conv(restart_s, "s"),
        reload_after_min=conv(reload_ms, "ms"), snapshot_cost_min=conv(write_ms, "ms"),
    )


def dashboard_answer(n_gpus=None, rate_per_gpu_day=None, detect_s=None, restart_s=None, reload_ms=None, write_ms=None):
    """:func:`course_lib.answer.answer` for the dashboard's values (None: the course's value)."""
    # the sentence and the waterfall use no Monte Carlo range: skip it on every slider move
    return answer(dashboard_scenario(n_gpus, rate_per_gpu_day, detect_s, restart_s, reload_ms, write_ms), spread_draws=0)


def floor_text(n_gpus=None, rate_per_gpu_day=None, detect_s=None, restart_s=None, reload_ms=None, write_ms=None) -> str:
    """The dashboard's key sentence: the floor and the after-levers loss for these values."""
    return _sentence(dashboard_answer(n_gpus, rate_per_gpu_day, detect_s, restart_s, reload_ms, write_ms))


def _duration(minutes: float) -> str:
    """A stage time in the unit that keeps three figures readable: ms, s or min."""
    seconds = 60.0 * minutes
    if seconds < 1.0:
        return f"{1000 * seconds:.3g} ms"
    if seconds < 120.0:
        return f"{seconds:.3g} s"
    return f"{minutes:.3g} min"


def _sentence(a) -> str:
    f = a.after
    st = f.stages
    if not f.makes_progress or f.fraction_of_day > 1.0:  # no percentage above 100: say it plainly
        return f"At {a.n_gpus:,} GPUs, {a.failures_per_day:.3g} failures a day, after the levers: {f.progress_sentence}"
    return (
        f"Floor λ(D+R) at {a.n_gpus:,} GPUs = {a.failures_per_day:.3g} failures a day × "
        f"(D {_duration(st.detect)} + R {_duration(st.reschedule)} + {_duration(st.reload)}) = "
        f"{f.floor_minutes_per_day:.2f} min/day ({100 * f.floor_fraction:.3f} % of the day); "
        f"after the levers {f.minutes_per_day:.2f} min/day ({100 * f.fraction_of_day:.3f} %), "
        f"checkpoint every {f.interval_min:.2f} min (write δ {_duration(a.snapshot_cost_min)}); "
        f"a crash is seen within a {_duration(a.scenario.detect_after_min)} poll, a hang only at its timeout; "
        f"a shard reloads from memory in {_duration(a.scenario.reload_from_memory_min)}"
    )


def floor_html(n_gpus=None, rate_per_gpu_day=None, detect_s=None, restart_s=None, reload_ms=None, write_ms=None) -> str:
    """:func:`floor_text` as the HTML the ``course-result`` widget holds."""
    return f"<b>{html.escape(floor_text(n_gpus, rate_per_gpu_day, detect_s, restart_s, reload_ms, write_ms))}</b>"


def _controls(d: dict) -> dict:
    style = {"description_width": "165px"}
    layout = widgets.Layout(width="440px")
    log = lambda key, lo, hi, fmt: widgets.FloatLogSlider(  # noqa: E731
        value=d[key], base=10, min=lo, max=hi, step=0.05, description=SLIDER_LABELS[key], readout_format=fmt,
        continuous_update=False, style=style, layout=layout)
    return {
        "n_gpus": widgets.SelectionSlider(
            options=[(f"{n:,}", n) for n in FLEET_SIZES], value=d["n_gpus"], description=SLIDER_LABELS["n_gpus"],
            continuous_update=False, style=style, layout=layout),
        "rate_per_gpu_day": log("rate_per_gpu_day", -4.5, -2.5, ".2e"),
        "detect_s": log("detect_s", -1, 3, ".3g"),
        "restart_s": log("restart_s", -1, 3, ".3g"),
        "reload_ms": log("reload_ms", 0, 6, ".3g"),
        "write_ms": log("write_ms", 0, 6, ".3g"),
    }


#: The live chart's size in inches (at the course's 100 dpi: 720 x 420 px, beside 440 px of sliders).
CHART_SIZE = (7.2, 4.2)


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
    out = widgets.Output(layout=widgets.Layout(width="760px", max_width="100%"))  # beside the sliders from 1280 px wide

    touched: set = set()  # sliders a person moved; the others keep the course's value at this fleet
    busy = []

    def redraw(change=None):
        if busy:
            return
        if change is not None:
            touched.add(change["owner"].description)
        values = {k: (c.value if k == "n_gpus" or c.description in touched else None) for k, c in controls.items()}
        ans = dashboard_answer(**values)  # one answer per slider move
        result.value = f"<b>{html.escape(_sentence(ans))}</b>"
        with out:
            out.clear_output(wait=True)
            _, ax = plt.subplots(figsize=CHART_SIZE)
            answer_waterfall(ans, ax=ax)
            plt.show()

    def new_fleet(change):
        # the shard per GPU follows the fleet, so the default reload and snapshot times do too
        fresh = dashboard_defaults(change["new"])
        busy.append(True)
        try:
            for key in ("reload_ms", "write_ms"):
                if controls[key].description not in touched:
                    controls[key].value = fresh[key]
        finally:
            busy.clear()
        redraw()

    for key, c in controls.items():
        c.observe(new_fleet if key == "n_gpus" else redraw, names="value")
    redraw()
    out.add_class("course-chart")
    sliders = widgets.VBox(list(controls.values()), layout=widgets.Layout(padding="8px 12px 0 0", flex="0 0 auto"))
    top = widgets.HBox([sliders, out], layout=widgets.Layout(flex_flow="row wrap", align_items="flex-start"))
    symbols = widgets.HTML(value=f'<div style="font-size:0.9em;color:#333;max-width:1160px">{html.escape(SYMBOLS)}</div>')
    symbols.add_class("course-symbols")
    return widgets.VBox([top, result, symbols])
