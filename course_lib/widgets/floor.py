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

The sliders carry the Scenario's own names (:data:`SLIDERS`, a subset of
:data:`course_lib.scenario.PARAMETERS`; tests/test_scenario_ledger.py compares the sets); their
display units (s, ms) are converted in :func:`dashboard_scenario` only. The chart is
:func:`course_lib.plots.floor.dashboard_waterfall` (one row per bar: no two labels can meet). The
only call into the rest of course_lib is :func:`dashboard_answer` (the Scenario of the slider values
-> the answer), one day model, so the sentence, the chart and the CLI cannot disagree and no number
passes the day.
"""
from __future__ import annotations

import base64
import html
import io
import os

import ipywidgets as widgets
import matplotlib.pyplot as plt

from .. import prose
from ..answer import answer
from ..plots.floor import dashboard_waterfall
from ..scenario import Scenario
from ..units import from_minutes, to_minutes

__all__ = ["FLEET_SIZES", "SLIDERS", "SLIDER_LABELS", "SYMBOLS", "MODES", "dashboard_defaults", "dashboard_scenario",
           "dashboard_answer", "floor_text", "floor_html", "refusal_text", "present_text", "present_html", "app_mode",
           "dashboard"]

#: The fleet sizes the slider offers (GPUs): 1,024 to 131,072, powers of two and 1.5x between.
FLEET_SIZES = tuple(sorted({1024 * 2**k for k in range(8)} | {1536 * 2**k for k in range(7)}))

#: The sliders, keyed by the Scenario's own names (:data:`course_lib.scenario.PARAMETERS`): label and display unit.
SLIDERS = {
    "n_gpus": ("GPUs in the job", None),
    "rate_per_gpu_day": ("failures per GPU-day", None),
    "hang_timeout_min": ("tuned hang timeout (s)", "s"),
    "restart_after_min": ("in-job restart, end to end (s)", "s"),
    "reload_after_min": ("reload from memory (ms)", "ms"),
    "snapshot_cost_min": ("checkpoint write δ (ms)", "ms"),
}
#: The sliders' labels, in words (each fits its label column whole: nothing is cut to "rate /GPU...").
SLIDER_LABELS = {name: label for name, (label, _) in SLIDERS.items()}

#: The line under the dashboard that defines every symbol it shows.
SYMBOLS = (
    "λ: failures a day (GPUs × failures per GPU-day). X: minutes one failure costs: detection D (a crash within the "
    "launcher's 0.1 s poll, a hang at its tuned timeout, a lost host at a 30 s heartbeat) + restart R (reschedule and "
    "reload) + the work rewound. δ: how long one checkpoint write blocks training; it sets the interval τ. "
    "The day lost is λX + the writes (never more than the day); the floor is that day with δ = 0 and τ one step, "
    "what no checkpoint removes: the hatched bar. The levers take the baseline down to it, largest first, each only "
    "while it saves."
)


def _display(name: str, minutes: float) -> float:
    unit = SLIDERS[name][1]
    return from_minutes(minutes, unit) if unit else minutes


def dashboard_defaults(n_gpus: int | None = None) -> dict:
    """The sliders' starting values, in their display units: the course's Scenario (at ``n_gpus``, if given).

    The reload and snapshot times depend on the fleet (the shard per GPU shrinks as it grows), and so
    does the hang timeout (the step shrinks).
    """
    sc = Scenario.from_params(n_gpus=n_gpus)
    values = {"n_gpus": sc.n_gpus, "rate_per_gpu_day": sc.rate_per_gpu_day, "hang_timeout_min": sc.hang_timeout_min,
              "restart_after_min": sc.restart_after_min, "reload_after_min": sc.reload_after_min,
              "snapshot_cost_min": sc.snapshot_cost_min}
    return {name: (v if name in ("n_gpus", "rate_per_gpu_day") else _display(name, v)) for name, v in values.items()}


def dashboard_scenario(**values) -> Scenario:
    """The one Scenario of the dashboard's values (display units converted here, and only here).

    None keeps the course's value at that fleet size, so with only ``n_gpus`` set the dashboard
    answers exactly what ``python -m course_lib budget --gpus N`` answers.
    """
    unknown = set(values) - set(SLIDERS)
    if unknown:
        raise ValueError(f"slider must be one of {sorted(SLIDERS)} (got {sorted(unknown)})")
    params = {}
    for name, v in values.items():
        unit = SLIDERS[name][1]
        if v is None:
            continue
        params[name] = int(round(v)) if name == "n_gpus" else (to_minutes(v, unit) if unit else v)
    return Scenario.from_params(**params)


def dashboard_answer(**values):
    """:func:`course_lib.answer.answer` for the dashboard's values (None: the course's value), without the Monte Carlo range."""
    return answer(dashboard_scenario(**values), spread_draws=0)


def floor_text(n_gpus=None, rate_per_gpu_day=None, **values) -> str:
    """The dashboard's key sentence: the floor and the after-levers loss for these values."""
    return _sentence(dashboard_answer(n_gpus=n_gpus, rate_per_gpu_day=rate_per_gpu_day, **values))


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
    fb = f.floor_budget
    st = fb.stages
    if not fb.makes_progress:  # no percentage of a day above 100: say it plainly
        return (f"At {a.n_gpus:,} GPUs, {a.failures_per_day:,.3g} failures a day: every lever pulled, a failure still costs "
                f"{_duration(st.total)} and the next comes {_duration(f.mtbf_min)} later, so the job never catches up: "
                f"100 % of the day is lost, floor included.")
    idle = float(f.floor_budget.idle_minutes_per_day)
    train = 1.0 - float(f.floor_budget.idle_share)
    stages = (f"(D: detection {_duration(st.detect)} + R: reschedule {_duration(st.reschedule)} + reload "
              f"{_duration(st.reload)} + rewind {_duration(st.rewind)})")
    if idle > 0:  # a kept spare: its idle GPUs are a term of their own, and the failures cost only the training share
        idle_t, floor = f"{idle:.2f}", f"{f.floor_minutes_per_day:.2f}"  # each correctly rounded; the work term is not printed
        product = (f"{a.failures_per_day:.2f} failures a day × {st.total:.3f} min per failure {stages} × {train:.4f} "
                   f"(the GPUs that train) + {idle_t} min/day of idle spare = {floor}")
    else:
        lam, x, floor = prose.times(a.failures_per_day, st.total, f.floor_minutes_per_day, digits=(2, 3, 2))
        product = f"{lam} failures a day × {x} min per failure {stages} = {floor}"
    pulled = ", ".join(a.order) if a.order else "none"
    return (
        f"Floor at {a.n_gpus:,} GPUs = {product} min/day ({100 * f.floor_fraction:.3f} % of the day); "
        f"after the levers {f.minutes_per_day:.2f} min/day ({100 * f.loss_fraction:.3f} %; {pulled}), checkpoint every "
        f"{f.interval_min:.2f} min (write δ {_duration(a.snapshot_cost_min)}); "
        f"a hang is seen at its {_duration(a.scenario.hang_timeout_min)} timeout; "
        f"a shard reloads from memory in {_duration(a.scenario.reload_after_min)}{_spare_clause(a)}"
    )


def _spare_clause(a) -> str:
    """A hot spare the answer leaves out still has its in-job restart on a slider: say what it would buy."""
    v = a.spare
    if v is None or v.pulled:
        return ""  # none offered, or kept: its restart is then the floor's R above
    return (f"; a hot spare restarting in {_duration(a.scenario.restart_after_min)} would save {v.gross:.2f} min/day "
            f"against {v.cost:.2f} of idle GPUs, so it is left out")


def refusal_text(err: ValueError) -> str:
    """The dashboard's sentence for slider values the model refuses: the slider's name and the model's reason."""
    name = next((n for n in SLIDERS if str(err).startswith(n)), None)
    what = f"the slider '{SLIDER_LABELS[name]}'" if name else "these slider values"
    return f"No answer for {what} here: {err}. Move it back into range."


def floor_html(n_gpus=None, rate_per_gpu_day=None, **values) -> str:
    """:func:`floor_text` as the HTML the ``course-result`` widget holds."""
    return f"<b>{html.escape(floor_text(n_gpus, rate_per_gpu_day, **values))}</b>"


def _headline(a) -> str:
    f = a.after
    if not f.floor_budget.makes_progress:  # no percentage of a day above 100: say it plainly
        return f"At {a.n_gpus:,} GPUs, every lever pulled, the job never catches up: 100 % of the day is lost."
    nb = "\u00a0"  # the value and its unit stay on one line at 30 px ("(0.656" never above "%)")
    return (f"At {a.n_gpus:,} GPUs the floor is {f.floor_minutes_per_day:.2f}{nb}min a day "
            f"({100 * f.floor_fraction:.3f}{nb}%); after the levers {f.minutes_per_day:.2f}{nb}min a day "
            f"({100 * f.loss_fraction:.3f}{nb}%).")


def present_text(n_gpus=None, rate_per_gpu_day=None, **values) -> str:
    """The presentation mode's result sentence: the floor and the after-levers loss, short enough for 30 px type."""
    return _headline(dashboard_answer(n_gpus=n_gpus, rate_per_gpu_day=rate_per_gpu_day, **values))


def present_html(n_gpus=None, rate_per_gpu_day=None, **values) -> str:
    """:func:`present_text` as the HTML the ``course-result`` widget holds in presentation mode."""
    return f"<b>{html.escape(present_text(n_gpus, rate_per_gpu_day, **values))}</b>"


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
        "hang_timeout_min": log("hang_timeout_min", 0, 3, ".3g"),
        "restart_after_min": log("restart_after_min", 0, 3, ".3g"),
        "reload_after_min": log("reload_after_min", 0, 6, ".3g"),
        "snapshot_cost_min": log("snapshot_cost_min", 0, 6, ".3g"),
    }


#: The live chart's size in inches (at the course's 100 dpi: 720 x 420 px, beside 440 px of sliders)
#: and its type size, per mode.
CHART_SIZE = {"lesson": (7.2, 4.2), "present": (8.0, 4.5)}
CHART_FONT = {"lesson": 11.0, "present": 15.0}


def _png_output(fig) -> dict:
    """The figure as one display_data output for an ``Output`` widget's ``outputs`` (its synced state).

    Set as state, not printed inside ``with out:``: a capture routes the kernel's display message to the
    widget only once the page has registered the widget's view, so the first chart of a fresh Voila page
    was sometimes lost to that race; state reaches the page whenever the view is made.
    """
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=fig.dpi, bbox_inches="tight")
    png = base64.b64encode(buf.getvalue()).decode("ascii")
    return {"output_type": "display_data", "metadata": {},
            "data": {"image/png": png, "text/plain": "<the floor's waterfall>"}}


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
    # sliders a person moved or the caller set: they keep their value; the others keep the course's value at this fleet
    # (a value passed in was once dropped at the first move of another slider)
    touched: set = {controls[k].description for k, v in overrides.items() if v is not None and k != "n_gpus"}
    busy = []
    last = {"ans": ans0}

    def draw(ans):
        m = state["mode"]
        result.value = f"<b>{html.escape(_sentence(ans) if m == 'lesson' else _headline(ans))}</b>"
        detail.value = f"<div>{html.escape(_sentence(ans))}</div>"
        fig, ax = plt.subplots(figsize=CHART_SIZE[m], layout="constrained")
        dashboard_waterfall(ans, ax=ax, fontsize=CHART_FONT[m])
        out.outputs = (_png_output(fig),)
        plt.close(fig)  # drawn; keep no figure open per slider move

    def redraw(change=None):
        if busy:
            return
        if change is not None:
            touched.add(change["owner"].description)
        values = {k: (c.value if k == "n_gpus" or c.description in touched else None) for k, c in controls.items()}
        try:
            last["ans"] = dashboard_answer(**values)  # one answer per slider move
        except ValueError as err:  # a combination the model refuses (a hang timeout below a step): say so in words
            result.value = f"<b>{html.escape(refusal_text(err))}</b>"
            return
        draw(last["ans"])

    def new_fleet(change):
        # the shard per GPU follows the fleet, so the default reload and snapshot times do too
        fresh = dashboard_defaults(change["new"])
        busy.append(True)
        try:
            for key in ("hang_timeout_min", "reload_after_min", "snapshot_cost_min"):
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
