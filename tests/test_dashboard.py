"""The floor dashboard's presentation (course_lib.widgets.floor) and the classroom app's command (scripts/app.py).

What a browser must see is in tests/test_browser.py; here: the two modes and the toggle, every term
of the sentence named and adding up, no two labels of the chart meeting at any corner of the sliders,
and the app's command line (template without CDN, idle kernels culled, the mode passed on).
"""
from __future__ import annotations

import importlib.util
import itertools
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from course_lib.plots.floor import dashboard_waterfall, overlapping_texts  # noqa: E402
from course_lib.widgets import floor as wf  # noqa: E402

REPO = Path(__file__).resolve().parent.parent


def _walk(w):
    yield w
    for c in getattr(w, "children", ()):
        yield from _walk(c)


def _app():
    spec = importlib.util.spec_from_file_location("course_app", REPO / "scripts" / "app.py")
    app = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(app)
    return app


def _seconds(term: str) -> float:
    value, unit = re.fullmatch(r"([\d.]+) (ms|s|min)", term).groups()
    return float(value) * {"ms": 1e-3, "s": 1.0, "min": 60.0}[unit]


@pytest.mark.parametrize("kw", [{}, {"n_gpus": 16384},
                                {"hang_timeout_min": 60, "restart_after_min": 600, "reload_after_min": 5e4}])
def test_every_term_of_the_sentence_is_named_and_they_add_up(kw):
    """'D 46 s + R 150 s + 1.88 s' named nothing and summed to less than the floor it claimed."""
    text = wf.floor_text(**kw)
    m = re.search(r"= ([\d.]+) failures a day × ([\d.]+) min per failure \((.*?)\)"
                  r"(?: × ([\d.]+) \(the GPUs that train\) \+ ([\d.]+) min/day of idle spare)? = ([\d.]+) min/day", text)
    assert m, text
    lam, x, inner, train, idle, floor = m.groups()
    terms = dict(re.fullmatch(r"(.+?) ([\d.]+ (?:ms|s|min))", t.strip()).groups() for t in inner.split(" + "))
    assert list(terms) == ["D: detection", "R: reschedule", "reload", "rewind"]
    assert sum(_seconds(v) for v in terms.values()) / 60 == pytest.approx(float(x), rel=0.01)  # the terms make X
    total = float(lam) * float(x) * (float(train) if train else 1.0) + (float(idle) if idle else 0.0)
    assert total == pytest.approx(float(floor), rel=0.01)  # as printed, to its digits


def test_present_sentence_is_short_and_says_the_floor_and_the_loss():
    a = wf.dashboard_answer()
    text = wf.present_text()
    assert len(text) <= 110, "at 30 px it must fit two lines of a 1024 px screen"
    nb = "\u00a0"  # a number never parts from its unit at the line's end
    assert f"{a.after.floor_minutes_per_day:.2f}{nb}min a day" in text and f"{a.after.minutes_per_day:.2f}{nb}min a day" in text
    assert f"{100 * a.after.floor_fraction:.3f}{nb}%" in text
    assert wf.present_html() == f"<b>{text}</b>"


def test_modes_and_the_toggle():
    lesson = wf.dashboard()
    result = next(w for w in _walk(lesson) if "course-result" in getattr(w, "_dom_classes", ()))
    assert result.value == wf.floor_html()
    assert "course-dashboard" in lesson._dom_classes and "course-present" not in lesson._dom_classes
    toggle = next(w for w in _walk(lesson) if getattr(w, "description", "") == "Presentation mode")
    toggle.value = True
    assert "course-present" in lesson._dom_classes and result.value == wf.present_html()
    kinds = [type(c).__name__ for c in lesson.children]
    assert kinds.index("Output") < kinds.index("HBox"), "present: the chart right under the sentence, the sliders below"
    assert "30px" in lesson.children[0].value
    toggle.value = False
    assert "course-present" not in lesson._dom_classes and result.value == wf.floor_html()
    present = wf.dashboard(mode="present")
    assert "course-present" in present._dom_classes
    with pytest.raises(ValueError, match="mode"):
        wf.dashboard(mode="projector")


def test_app_mode_comes_from_the_environment(monkeypatch):
    monkeypatch.delenv("COURSE_APP_MODE", raising=False)
    assert wf.app_mode() == "lesson"
    monkeypatch.setenv("COURSE_APP_MODE", "present")
    assert wf.app_mode() == "present"
    monkeypatch.setenv("COURSE_APP_MODE", "big")
    with pytest.raises(ValueError, match="COURSE_APP_MODE"):
        wf.app_mode()


# the sliders' corners: every slider at each end of its range
_CORNERS = list(itertools.product((min(wf.FLEET_SIZES), 4096, max(wf.FLEET_SIZES)), (10**-4.5, 10**-2.5), (None, 1000.0),
                                  (0.1, 1000.0), (1.0, 1e6), (1.0, 1e6)))


@pytest.mark.parametrize("mode", ["lesson", "present"])
def test_no_two_labels_of_the_chart_ever_meet(mode):
    """'33.3 min/day-10.0 min/day' ran together; now each value stands in its own row, inside the figure. The chart the
    dashboard redraws at each of these corners also draws without a Python warning (the 64 slider corners' sentences:
    tests/test_floor.py, through the functions the widget calls, since the widget is not driven to every corner)."""
    import warnings

    keys = tuple(wf.SLIDERS)  # n_gpus, rate, hang timeout (s), restart (s), reload (ms), write (ms)
    corners = _CORNERS[:: 13 if mode == "lesson" else 11] + [(4096, None, None, None, None, None)]
    for corner in corners:
        ans = wf.dashboard_answer(**dict(zip(keys, corner)))
        fig, ax = plt.subplots(figsize=wf.CHART_SIZE[mode], layout="constrained")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                dashboard_waterfall(ans, ax=ax, fontsize=wf.CHART_FONT[mode])
                clash = overlapping_texts(fig)
        finally:
            plt.close(fig)
        assert not clash, f"{mode} at {corner}: {clash[:3]}"


def test_a_refused_value_is_said_not_raised():
    """A hang timeout under one healthy step is refused by the model: the sentence says why, the app stays up."""
    board = wf.dashboard()
    result = next(w for w in _walk(board) if "course-result" in getattr(w, "_dom_classes", ()))
    slider = next(w for w in _walk(board) if getattr(w, "description", "") == wf.SLIDER_LABELS["hang_timeout_min"])
    slider.value = 1.0  # s: shorter than any step of the course's fleets
    assert "hang_timeout_min must be" in result.value


def test_overlapping_texts_finds_a_clash():
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.text(0.5, 0.5, "33.3 min/day")
    ax.text(0.55, 0.5, "-10.0 min/day")
    try:
        assert ("33.3 min/day", "-10.0 min/day") in overlapping_texts(fig)
    finally:
        plt.close(fig)


def test_app_command_culls_idle_kernels_and_uses_the_template_without_a_cdn():
    app = _app()
    cmd = app.voila_command(REPO / "notebooks" / "floor-dashboard.ipynb", 8866)
    assert "--template=course" in cmd and "--MappingKernelManager.cull_connected=False" in cmd
    assert f"--MappingKernelManager.cull_idle_timeout={app.CULL_IDLE_S}" in cmd
    assert f"--MappingKernelManager.cull_interval={app.CULL_EVERY_S}" in cmd
    with pytest.raises(ValueError, match="cull_idle_s"):
        app.voila_command(REPO / "notebooks" / "floor-dashboard.ipynb", 8866, cull_idle_s=0)
    template = app.TEMPLATE_ROOT / "voila" / "templates" / app.TEMPLATE
    assert (template / "index.html.j2").is_file() and '"base_template": "lab"' in (template / "conf.json").read_text()
    env = app.voila_env("present", base={"JUPYTER_PATH": "/elsewhere"})
    assert env["COURSE_APP_MODE"] == "present" and env["JUPYTER_PATH"].split(":") == [str(app.TEMPLATE_ROOT), "/elsewhere"]
    with pytest.raises(ValueError, match="mode"):
        app.voila_env("big")


def test_the_restart_slider_shows_when_the_spare_is_left_out():
    """At 6,144 GPUs with these values the answer leaves the hot spare out, so its in-job restart is in no lever the
    answer pulls; the sentence still says what the spare would buy at the slider's value (a slider that changes nothing
    on screen reads as broken)."""
    from course_lib.widgets.floor import dashboard_answer, floor_text

    values = dict(hang_timeout_min=79.4)  # slider units: seconds
    ans = dashboard_answer(n_gpus=6144, rate_per_gpu_day=5.62e-4, restart_after_min=175, **values)
    assert ans.spare is not None and not ans.spare.pulled
    a, b = (floor_text(6144, 5.62e-4, restart_after_min=r, **values) for r in (175, 178))
    assert a != b and "hot spare restarting in 2.92 min" in a and "left out" in a
    kept = floor_text(16384, None)  # kept at 16,384 GPUs: its restart is the floor's R, no extra clause
    assert "so it is left out" not in kept


def test_the_chart_is_in_the_widget_state_from_the_first_draw():
    """The chart is the Output widget's synced ``outputs``, set outside any kernel: a fresh page gets it from the
    widget's state whenever it makes the view (a ``with out:`` capture lost the first chart to that race, and outside a
    kernel it leaves ``outputs`` empty). Each slider move replaces it with one new PNG."""
    import base64

    board = wf.dashboard()
    out = next(w for w in _walk(board) if "course-chart" in getattr(w, "_dom_classes", ()))

    def png():
        assert len(out.outputs) == 1, out.outputs
        data = base64.b64decode(out.outputs[0]["data"]["image/png"])
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        return data

    first = png()
    slider = next(w for w in _walk(board) if getattr(w, "description", "") == wf.SLIDER_LABELS["hang_timeout_min"])
    slider.value = slider.value + slider.step * 5
    assert png() != first
    assert plt.get_fignums() == [], "a figure left open per draw"
