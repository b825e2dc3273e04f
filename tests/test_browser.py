"""The course used the way a learner uses it: a real (headless) browser moves a slider.

nbval checks that cells run and that printed outputs match; it never draws a widget and
never fires a slider's callback from the page. This test does: it starts JupyterLab and,
separately, the Voila app of `make app` (scripts/app.py), opens the dashboard notebook in
Debian's Chromium through Playwright, runs all cells (JupyterLab's Run menu), moves one
slider with the keyboard, and checks that the dashboard's ``course-result`` text becomes
what course_lib computes for the slider's new value. Screenshots go to build/screenshots/.

Which dashboard is driven is one line: ``TARGET`` below. On a machine without Chromium the
browser tests are skipped with the install command (set COURSE_REQUIRE_BROWSER=1, as CI
does, to make that a failure instead).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # works whether or not tests/ is a package
from browser_support import (  # noqa: E402
    CHROMIUM_ARGS,
    REPO,
    SCREENSHOTS,
    DashboardTarget,
    chromium_missing,
    html_to_text,
    launch_chromium,
    move_slider,
    open_in_lab,
    parse_number,
    run_all_cells,
    slider_widget,
    start_jupyterlab,
    start_voila,
)

sys.path.insert(0, str(Path(__file__).parent / "fixtures"))
from fixture_widgets import fleet_mtbf_hours, fleet_mtbf_html  # noqa: E402

# ---------------------------------------------------------------- what the test drives
# A small dashboard this test owns (tests/fixtures/): a fleet-size slider and the fleet MTBF.
FIXTURE = DashboardTarget(
    notebook="tests/fixtures/dashboard_fixture.ipynb",
    slider="GPUs",
    expected=fleet_mtbf_html,
)

# Notebook 08's floor dashboard: the fleet-size slider; with every other slider at its
# default, course_lib.widgets.floor.floor_html(n_gpus) is the sentence the page must show.
def _floor_html(n_gpus):
    from course_lib.widgets.floor import floor_html

    return floor_html(n_gpus)


FLOOR = DashboardTarget(notebook="notebooks/08-the-floor.ipynb", slider="GPUs in the job", expected=_floor_html)
# The same dashboard alone, as `make app` serves it to a classroom (Voila runs only these few cells).
FLOOR_APP = DashboardTarget(notebook="notebooks/floor-dashboard.ipynb", slider="GPUs in the job", expected=_floor_html)

TARGET = FLOOR  # <- the one line that picks the notebook a learner runs in JupyterLab (or FIXTURE)
APP_TARGET = FLOOR_APP  # <- and the one the Voila app serves (scripts/app.py's default)

# ---------------------------------------------------------------- checks without a browser


def test_fixture_dashboard_text_comes_from_course_lib():
    from course_lib import Scenario

    assert fleet_mtbf_hours(Scenario().n_gpus) == pytest.approx(Scenario().fleet_mtbf_hours)
    assert fleet_mtbf_hours(2 * 4096) == pytest.approx(Scenario().fleet_mtbf_hours / 2)
    assert html_to_text(fleet_mtbf_html(4608)) == "Fleet MTBF at 4,608 GPUs: 10.67 h"
    with pytest.raises(ValueError, match="n_gpus"):
        fleet_mtbf_html(0)


def test_text_helpers():
    assert parse_number(" 4,608 ") == 4608 and isinstance(parse_number("4608"), int)
    assert parse_number("12.50") == 12.5
    assert html_to_text("a <b>1&nbsp;h</b><br>b") == "a 1 h b"


def test_target_notebook_exists_and_app_hides_code():
    import importlib.util

    assert (REPO / TARGET.notebook).is_file(), f"browser-test target missing: {TARGET.notebook}"
    spec = importlib.util.spec_from_file_location("course_app", REPO / "scripts" / "app.py")
    app = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(app)
    assert app.default_notebook() == (REPO / APP_TARGET.notebook).resolve(), "make app must serve the tested dashboard"
    cmd = app.voila_command(REPO / APP_TARGET.notebook, 8866)
    assert "--strip_sources=True" in cmd and "--Voila.ip=127.0.0.1" in cmd and "--no-browser" in cmd
    assert {"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic"} <= set(CHROMIUM_ARGS)


# ---------------------------------------------------------------- the browser tests


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory):
    reason = chromium_missing()
    if reason:
        if os.environ.get("COURSE_REQUIRE_BROWSER") == "1":
            pytest.fail(f"browser test required (COURSE_REQUIRE_BROWSER=1) but {reason}")
        pytest.skip(f"browser test skipped: {reason}")
    assert (REPO / TARGET.notebook).is_file(), f"browser-test target missing: {TARGET.notebook}"
    return tmp_path_factory.mktemp("browser")


@pytest.fixture(scope="module")
def servers(sandbox):
    """JupyterLab and the Voila app, started together, always stopped."""
    started = []
    try:
        lab = start_jupyterlab(sandbox)
        started.append(lab)
        voila = start_voila(sandbox, REPO / APP_TARGET.notebook)
        started.append(voila)
        lab.wait_ready(probe=f"{lab.url}/api/status?token={lab.token}", timeout_s=120)
        voila.wait_ready(timeout_s=120)
        yield {"lab": lab, "voila": voila}
    finally:
        for server in reversed(started):
            server.stop()


@pytest.fixture(scope="module")
def browser(sandbox):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        context = launch_chromium(pw, sandbox / "chromium-profile")
        context.set_default_timeout(60_000)
        try:
            yield context
        finally:
            context.close()


def _failure_evidence(page, where):
    """On failure: a screenshot and the page's visible text, to see what the learner saw."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    try:
        page.screenshot(path=str(SCREENSHOTS / f"{where}-failure.png"), timeout=10_000)
        print(f"--- {where} page text at failure ---\n{page.locator('body').inner_text(timeout=10_000)[-3000:]}")
    except Exception as exc:  # evidence is best effort; the original error is what matters
        print(f"(no failure evidence: {exc})")


def _report(where, seen):
    print(f"{where}: {seen['before_value']!r} -> {seen['after_value']!r}: "
          f"{seen['before_text']!r} -> {seen['after_text']!r}")


@pytest.mark.browser
def test_jupyterlab_learner_moves_slider(servers, browser):
    lab = servers["lab"]
    notebook_bytes = (REPO / TARGET.notebook).read_bytes()
    page = browser.new_page()
    try:
        open_in_lab(page, lab, TARGET.notebook)
        # before Run, no live slider: a saved one would be stale widget state in the notebook
        assert slider_widget(page, TARGET.slider).count() == 0, (
            f"{TARGET.notebook} renders a '{TARGET.slider}' slider before running: strip metadata.widgets")
        run_all_cells(page)
        seen = move_slider(page, TARGET, "jupyterlab")
    except Exception:
        _failure_evidence(page, "jupyterlab")
        raise
    finally:
        page.close()
    _report("jupyterlab", seen)
    assert (REPO / TARGET.notebook).read_bytes() == notebook_bytes, "JupyterLab wrote over the notebook"
    assert seen["after_value"] != seen["before_value"]
    assert seen["after_text"] == seen["expected_after"] != seen["before_text"]
    assert (SCREENSHOTS / "jupyterlab-after.png").stat().st_size > 10_000


@pytest.mark.browser
def test_voila_app_learner_moves_slider(servers, browser):
    voila = servers["voila"]
    page = browser.new_page()
    try:
        # Voila streams the page while it runs the notebook: bounded, with room for a loaded 2-core CI host
        page.goto(f"{voila.url}/?token={voila.token}", wait_until="domcontentloaded", timeout=180_000)
        seen = move_slider(page, APP_TARGET, "voila")
        # code is hidden: no editor, and no code cell shows its source (markdown stays)
        assert page.locator(".jp-CodeMirrorEditor, .cm-editor").count() == 0
        shown_inputs = [t for t in page.locator(".jp-CodeCell .jp-InputArea").all_inner_texts() if t.strip()]
        assert not shown_inputs, f"the app shows code: {shown_inputs}"
    except Exception:
        _failure_evidence(page, "voila")
        raise
    finally:
        page.close()
    _report("voila", seen)
    assert seen["after_value"] != seen["before_value"]
    assert seen["after_text"] == seen["expected_after"] != seen["before_text"]
    assert (SCREENSHOTS / "voila-after.png").stat().st_size > 10_000


# ---------------------------------------------------------------- the classroom app fits a projector
def _chart_src(page) -> str:
    return page.locator(".course-chart img").first.get_attribute("src", timeout=30_000) or ""


@pytest.mark.browser
def test_voila_app_chart_in_first_viewport_and_every_slider_shows(servers, browser):
    """At 1280 x 800 the live chart is on the first screen; each slider moves the chart or the sentence."""
    from playwright.sync_api import expect

    from course_lib.widgets.floor import SLIDER_LABELS

    voila = servers["voila"]
    page = browser.new_page()
    page.set_viewport_size({"width": 1280, "height": 800})
    moved = {}
    try:
        page.goto(f"{voila.url}/?token={voila.token}", wait_until="domcontentloaded", timeout=180_000)
        chart = page.locator(".course-chart img").first
        expect(chart).to_be_visible(timeout=180_000)
        page.evaluate("window.scrollTo(0, 0)")
        box = chart.bounding_box()
        assert box and box["y"] >= 0 and box["x"] >= 0, box
        assert box["y"] + box["height"] <= 800 and box["x"] + box["width"] <= 1280, f"chart outside 1280 x 800: {box}"
        sentence = page.locator(".course-result").first
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "app-1280x800.png"))
        for label in SLIDER_LABELS.values():
            slider = slider_widget(page, label).first
            expect(slider).to_be_visible(timeout=30_000)
            readout = slider.locator(".widget-readout")
            before = (readout.inner_text().strip(), sentence.inner_text().strip(), _chart_src(page))
            handle = slider.locator(".noUi-handle").first
            handle.focus()
            handle.press("ArrowRight")
            page.wait_for_timeout(300)
            if readout.inner_text().strip() == before[0]:  # at its maximum: step the other way
                handle.press("ArrowLeft")
            expect(readout).not_to_have_text(before[0], timeout=30_000)
            page.wait_for_function(
                "([s, c]) => document.querySelector('.course-result').innerText.trim() !== s"
                " || (document.querySelector('.course-chart img') || {}).src !== c",
                arg=[before[1], before[2]], timeout=45_000)
            after = (readout.inner_text().strip(), sentence.inner_text().strip(), _chart_src(page))
            moved[label] = {"sentence": after[1] != before[1], "chart": after[2] != before[2]}
        page.set_viewport_size({"width": 1920, "height": 1080})
        page.evaluate("window.scrollTo(0, 0)")
        page.wait_for_timeout(1000)
        page.screenshot(path=str(SCREENSHOTS / "app-1920x1080.png"))
    except Exception:
        _failure_evidence(page, "voila-projector")
        raise
    finally:
        page.close()
    print("slider -> what changed:", moved)
    assert set(moved) == set(SLIDER_LABELS.values())
    assert all(m["sentence"] or m["chart"] for m in moved.values()), moved


# ---------------------------------------------------------------- an exercise, as a learner answers it
EXERCISE = "exercises/04-optimal-interval-ex.ipynb"
SOLUTION = "solutions/04-optimal-interval-sol.ipynb"


def _answered_exercise(dest: Path) -> Path:
    """Exercise 1 of notebook 04 as a learner leaves it: a wrong answer (Young's interval instead of the
    exact one) and its check, then the right answer (the solution's code) and the same check."""
    import nbformat

    ex = nbformat.read(REPO / EXERCISE, as_version=4)
    sol = nbformat.read(REPO / SOLUTION, as_version=4)
    stub_at = next(i for i, c in enumerate(ex.cells) if "exercise" in c.metadata.get("tags", []))
    check = ex.cells[stub_at + 1]
    right = next(c for c in sol.cells if "solution" in c.metadata.get("tags", []))
    wrong = nbformat.v4.new_code_cell(
        'delta_pfs = costs.where("regime", "pfs_sync").rows[0]["blocking_s"] / 60\n'
        "answer = iv.young_interval(delta_pfs, M)  # the learner's attempt: Young's first-order interval")
    nb = nbformat.v4.new_notebook(metadata=ex.metadata)
    nb.cells = ex.cells[:stub_at] + [wrong, nbformat.v4.new_code_cell(check.source),
                                     nbformat.v4.new_code_cell(right.source), nbformat.v4.new_code_cell(check.source)]
    dest.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, dest)
    return dest


@pytest.mark.browser
def test_exercise_verdict_reads_not_yet_then_correct(servers, browser):
    """In JupyterLab: a wrong answer's verdict says it is not yet right (in words, in colour); a right one says Correct."""
    from playwright.sync_api import expect

    lab = servers["lab"]
    nb = _answered_exercise(REPO / "build" / "browser-test" / "04-exercise-answered.ipynb")  # build/ is git-ignored
    page = browser.new_page()
    try:
        open_in_lab(page, lab, str(nb.relative_to(REPO)))
        run_all_cells(page)
        verdicts = page.locator(".jp-OutputArea-output .course-feedback")
        expect(verdicts).to_have_count(2, timeout=120_000)
        wrong, right = verdicts.nth(0), verdicts.nth(1)
        wrong_text, right_text = wrong.inner_text().strip(), right.inner_text().strip()
        wrong_colour = wrong.locator("strong").evaluate("e => getComputedStyle(e).color")
        right_colour = right.locator("strong").evaluate("e => getComputedStyle(e).color")
        wrong.evaluate("e => e.scrollIntoView({block: 'center'})")
        page.wait_for_timeout(500)
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "exercise-wrong-answer.png"))
    except Exception:
        _failure_evidence(page, "exercise")
        raise
    finally:
        page.close()
        nb.unlink(missing_ok=True)
    print("verdicts:", wrong_text, "|", right_text)
    assert wrong_text.startswith("Not yet") and "Correct" not in wrong_text
    assert right_text.startswith("Correct")
    assert wrong_colour != right_colour  # the colour tells them apart too (red-orange vs green)
