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
