"""Notebook 08's dashboard: fleet size, per-GPU rate, the levers' stage times and the write
cost -> the waterfall from the baseline to the floor, and the floor itself.

The key number is produced by :func:`floor_html` (tested) and shown in an ``ipywidgets.HTML``
with the CSS class ``course-result``. :func:`dashboard` returns the widget box (notebook 08
displays it, ``make app`` serves it with Voila). For the browser test:
``DashboardTarget("notebooks/08-the-floor.ipynb", "GPUs in the job", floor_html)``: with every
other slider at its default, ``floor_html(n_gpus)`` is the text the page must show.

Two modes, switched by the toggle at its top (``dashboard(mode=...)`` starts in one; ``make app
MODE=present`` starts the classroom app in presentation mode, :func:`app_mode`):

- *lesson* (notebook 08, ``make app``): the sentence first, then the sliders and the live chart
  beside them (1280 x 800 and up), then one line defining every symbol. Every slider moves the
  sentence (it states each slider's value as it enters the floor, each term named), so even a
  reload step of a few milliseconds shows.
- *present* (a projector): large type, the result in one short sentence (:func:`present_text`,
  30 px) above the chart, which is drawn with large labels and scaled to the screen's height, so
  that both stand on one screen at 1024 x 768 and at 1280 x 720 zoomed to 150 %; the full sentence,
  the sliders and the symbols follow below.

The chart is :func:`course_lib.plots.floor.dashboard_waterfall` (one row per bar: no two labels can
meet). The only call into the rest of course_lib is :func:`dashboard_answer` (the Scenario of the
slider values -> the answer).
"""
from __future__ import annotations

import html
import os

import ipywidgets as widgets
import matplotlib.pyplot as plt

from ..answer import answer
from ..plots.floor import dashboard_waterfall
from ..scenario import Scenario
from ..units import from_minutes, to_minutes

__all__ = ["FLEET_SIZES", "SLIDER_LABELS", "SYMBOLS", "MODES", "dashboard_defaults", "dashboard_scenario", "dashboard_answer",
           "floor_text", "floor_html", "present_text", "present_html", "app_mode", "dashboard"]

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
    "R: restart, rescheduling onto a hot spare plus reloading the checkpoint from host memory. Every failure also "
    "rewinds half a training step, and a silent corruption rewinds past its latency (share-weighted). "
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
        f"(D: detection {_duration(st.detect)} + R: reschedule {_duration(st.reschedule)} + reload {_duration(st.reload)} "
        f"+ half a step {_duration(f.step_min / 2)} + corruption rewind {_duration(f.latency_rewind_min)}) = "
        f"{f.floor_minutes_per_day:.2f} min/day ({100 * f.floor_fraction:.3f} % of the day); "
        f"after the levers {f.minutes_per_day:.2f} min/day ({100 * f.fraction_of_day:.3f} %), "
        f"checkpoint every {f.interval_min:.2f} min (write δ {_duration(a.snapshot_cost_min)}); "
        f"a crash is seen within a {_duration(a.scenario.detect_after_min)} poll, a hang only at its timeout; "
        f"a shard reloads from memory in {_duration(a.scenario.reload_from_memory_min)}"
    )


def floor_html(n_gpus=None, rate_per_gpu_day=None, detect_s=None, restart_s=None, reload_ms=None, write_ms=None) -> str:
    """:func:`floor_text` as the HTML the ``course-result`` widget holds."""
    return f"<b>{html.escape(floor_text(n_gpus, rate_per_gpu_day, detect_s, restart_s, reload_ms, write_ms))}</b>"


def _headline(a) -> str:
    f = a.after
    if not f.makes_progress or f.fraction_of_day > 1.0:
        return f"At {a.n_gpus:,} GPUs, after the levers: {f.progress_sentence}"
    return (f"At {a.n_gpus:,} GPUs the floor λ(D+R) is {f.floor_minutes_per_day:.2f} min a day "
            f"({100 * f.floor_fraction:.3f} %); after the levers {f.minutes_per_day:.2f} min a day ({100 * f.fraction_of_day:.3f} %).")


def present_text(n_gpus=None, rate_per_gpu_day=None, detect_s=None, restart_s=None, reload_ms=None, write_ms=None) -> str:
    """The presentation mode's result sentence: the floor and the after-levers loss, short enough for 30 px type."""
    return _headline(dashboard_answer(n_gpus, rate_per_gpu_day, detect_s, restart_s, reload_ms, write_ms))


def present_html(n_gpus=None, rate_per_gpu_day=None, detect_s=None, restart_s=None, reload_ms=None, write_ms=None) -> str:
    """:func:`present_text` as the HTML the ``course-result`` widget holds in presentation mode."""
    return f"<b>{html.escape(present_text(n_gpus, rate_per_gpu_day, detect_s, restart_s, reload_ms, write_ms))}</b>"


#: The dashboard's modes: a lesson's (notebook 08) and a projector's (``make app MODE=present``).
MODES = ("lesson", "present")


def app_mode() -> str:
    """The mode the classroom app asks for (``COURSE_APP_MODE``, set by scripts/app.py; 'lesson' when unset)."""
    mode = os.environ.get("COURSE_APP_MODE") or "lesson"
    if mode not in MODES:
        raise ValueError(f"COURSE_APP_MODE must be one of {MODES} (got {mode!r})")
    return mode


#: The presentation mode's type and layout (scoped to the dashboard in that mode; the notebook's own
#: text is hidden there, the dashboard says everything it needs). Chart: at most the screen's height
#: less the sentence above it.
STYLE = """<style>
.course-dashboard .course-chart img { max-width: 100%; height: auto; }
.course-dashboard.course-present .course-result { font-size: 30px; line-height: 1.25; margin: 4px 0 8px 0; }
.course-dashboard.course-present .course-detail, .course-dashboard.course-present .course-symbols { font-size: 18px; line-height: 1.35; }
.course-dashboard.course-present .widget-label, .course-dashboard.course-present .widget-readout,
.course-dashboard.course-present .widget-toggle-button { font-size: 18px; }
.course-dashboard.course-present .widget-slider { height: 40px; }
.course-dashboard.course-present .course-chart img { max-height: calc(100vh - 175px); width: auto; }
body:has(.course-dashboard.course-present) .jp-MarkdownOutput, body:has(.course-dashboard.course-present) .jp-RenderedMarkdown
  { display: none; }
body:has(.course-dashboard.course-present) #rendered_cells { padding-top: 0; }
</style>"""


def _controls(d: dict, present: bool = False) -> dict:
    style = {"description_width": "230px" if present else "165px"}
    layout = widgets.Layout(width="600px" if present else "440px")
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


#: The live chart's size in inches (at the course's 100 dpi: 720 x 420 px, beside 440 px of sliders)
#: and its type size, per mode.
CHART_SIZE = {"lesson": (7.2, 4.2), "present": (8.0, 4.5)}
CHART_FONT = {"lesson": 11.0, "present": 15.0}


def dashboard(mode: str = "lesson", **overrides) -> widgets.VBox:
    """The floor dashboard: sliders, the ``course-result`` floor sentence, the waterfall.

    mode: 'lesson' or 'present' (large type for a projector); the toggle at its top switches.
    overrides: starting values for any key of :func:`dashboard_defaults`.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES} (got {mode!r})")
    d = dashboard_defaults()
    unknown = set(overrides) - set(d)
    if unknown:
        raise ValueError(f"overrides must be keys of {sorted(d)} (got {sorted(unknown)})")
    d.update({k: v for k, v in overrides.items() if v is not None})
    state = {"mode": mode}
    controls = _controls(d, mode == "present")
    ans0 = dashboard_answer(**d)
    result = widgets.HTML(value=floor_html(**d) if mode == "lesson" else f"<b>{html.escape(_headline(ans0))}</b>")
    result.add_class("course-result")
    detail = widgets.HTML(value=f"<div>{html.escape(_sentence(ans0))}</div>")
    detail.add_class("course-detail")
    out = widgets.Output(layout=widgets.Layout(width="760px", max_width="100%"))  # beside the sliders from 1280 px wide
    out.add_class("course-chart")
    toggle = widgets.ToggleButton(value=mode == "present", description="Presentation mode",
                                  tooltip="large type: the result and the chart on one screen (a projector)",
                                  layout=widgets.Layout(width="auto", align_self="flex-start"))
    style = widgets.HTML(value=STYLE)
    touched: set = set()  # sliders a person moved; the others keep the course's value at this fleet
    busy = []
    last = {"ans": ans0}

    def draw(ans):
        m = state["mode"]
        result.value = f"<b>{html.escape(_sentence(ans) if m == 'lesson' else _headline(ans))}</b>"
        detail.value = f"<div>{html.escape(_sentence(ans))}</div>"
        with out:
            out.clear_output(wait=True)
            fig, ax = plt.subplots(figsize=CHART_SIZE[m], layout="constrained")
            dashboard_waterfall(ans, ax=ax, fontsize=CHART_FONT[m])
            plt.show()

    def redraw(change=None):
        if busy:
            return
        if change is not None:
            touched.add(change["owner"].description)
        values = {k: (c.value if k == "n_gpus" or c.description in touched else None) for k, c in controls.items()}
        last["ans"] = dashboard_answer(**values)  # one answer per slider move
        draw(last["ans"])

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
    sliders = widgets.VBox(list(controls.values()), layout=widgets.Layout(padding="8px 12px 0 0", flex="0 0 auto"))
    symbols = widgets.HTML(value=f'<div style="font-size:0.9em;color:#333;max-width:1160px">{html.escape(SYMBOLS)}</div>')
    symbols.add_class("course-symbols")
    root = widgets.VBox(layout=widgets.Layout(width="100%"))
    root.add_class("course-dashboard")

    def arrange(m):
        state["mode"] = m
        if m == "present":
            root.add_class("course-present")
            out.layout.width = "100%"
            chart_and_sliders = [out, widgets.HBox([sliders], layout=widgets.Layout(flex_flow="row wrap"))]
            root.children = [style, toggle, result, *chart_and_sliders[:1], detail, *chart_and_sliders[1:], symbols]
        else:
            root.remove_class("course-present")
            out.layout.width = "760px"
            top = widgets.HBox([sliders, out], layout=widgets.Layout(flex_flow="row wrap", align_items="flex-start"))
            root.children = [style, toggle, result, top, symbols]
        for key, c in controls.items():
            c.style.description_width = "230px" if m == "present" else "165px"
            c.layout.width = "600px" if m == "present" else "440px"
        draw(last["ans"])

    toggle.observe(lambda change: arrange("present" if change["new"] else "lesson"), names="value")
    arrange(mode)
    return root
