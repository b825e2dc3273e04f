"""Voila's culling of the kernels of closed pages, in a real (headless) browser (issue "The classroom app").

Every page load of the classroom app (`make app`) starts a kernel, and a closed or reloaded page leaves it behind:
scripts/app.py has the kernel manager cull a kernel once no page is connected to it and it has been idle. This test
loads the app three times, closes two pages, and checks that their kernels go while the open page's kernel stays
and still answers its slider. It starts a Voila app of its own, so every kernel it counts is one of its pages'.

Most of its time is a wait for the culler (CULL_IDLE_S), so it is a file of its own: `make test` runs it in a
process of its own beside the unit tests and notebooks (`make culling`), where the wait overlaps their work instead
of holding one of the two workers of the other browser tests. Skipped without Chromium (a failure with COURSE_REQUIRE_BROWSER=1, as in CI).
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # works whether or not tests/ is a package
from browser_support import (  # noqa: E402
    REPO,
    DashboardTarget,
    failure_evidence,
    kernel_pids,
    slider_widget,
    start_voila,
)
import browser_support  # noqa: E402

# the fixtures the browser test modules share (a Chromium-gated folder, one Chromium), bound here for pytest to find
sandbox = browser_support.sandbox
browser = browser_support.browser

#: `make browser` runs this file beside the other browser tests' groups (--dist loadgroup); `make test` beside the suite
pytestmark = pytest.mark.xdist_group("culling")

#: seconds a page may take to draw its chart (the browser tests' bound on running a dashboard's cells)
RUN_TIMEOUT_S = DashboardTarget.run_timeout_s


def _app_notebook() -> Path:
    """The notebook `make app` serves: scripts/app.py's default, the one a classroom sees."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("course_app", REPO / "scripts" / "app.py")
    app = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(app)
    return app.default_notebook()

#: The app's kernel culling, shortened for the test (the classroom default is scripts/app.py's 120 s / 30 s).
#: A page's kernel stays busy (and its IOPub messages count as activity) while Voila executes its cells, so
#: the culler takes only kernels no page is connected to that have been idle this long; the test's open
#: pages and their renders (3-35 s measured) stay well inside it. On a failure the server's own account
#: (kernels started, culled, restarted, dead) is printed beside the page (browser_support.server_account).
CULL_IDLE_S, CULL_EVERY_S = 90, 4


@pytest.fixture
def culling_voila(sandbox):
    """A Voila app of its own for the culling test (only it opens pages there, so every kernel is one it counts), with
    the culling shortened; started and stopped by the test."""
    tmp = sandbox / "culling"
    tmp.mkdir(exist_ok=True)
    voila = start_voila(tmp, _app_notebook(), f"--cull-idle-s={CULL_IDLE_S}", f"--cull-every-s={CULL_EVERY_S}")
    try:
        voila.wait_ready(timeout_s=120)
        yield voila
    finally:
        voila.stop()


@pytest.mark.browser
def test_voila_culls_the_kernels_of_closed_pages_and_keeps_an_open_one(culling_voila, browser):
    """A class reloading the page piled one kernel per load up until the server stopped: now a kernel no
    page is connected to goes once it has been idle CULL_IDLE_S, while the open page's kernel stays."""
    from playwright.sync_api import expect

    voila = culling_voila
    loads = 2
    counts = []
    keep = browser.new_page()
    try:
        for i in range(loads + 1):
            page = keep if i == loads else browser.new_page()
            page.goto(f"{voila.url}/?token={voila.token}", wait_until="commit", timeout=60_000)
            expect(page.locator(".course-chart img").first).to_be_visible(timeout=int(RUN_TIMEOUT_S * 1000))
            counts.append(len(kernel_pids(voila)))
            if page is not keep:
                page.close()
        # a closed page's kernel outlived its page (on a loaded machine a load can outlast CULL_IDLE_S, so not
        # every closed page's kernel is still there at the last load)
        assert max(counts) >= 2, f"the closed pages' kernels were gone at once: {counts} (the test would prove nothing)"
        deadline = time.monotonic() + CULL_IDLE_S + 3 * CULL_EVERY_S + 60  # culled after idle + one interval; room for load
        while len(kernel_pids(voila)) > 1 and time.monotonic() < deadline:
            time.sleep(1)
        left = len(kernel_pids(voila))
        waited = round(time.monotonic() - (deadline - CULL_IDLE_S - 3 * CULL_EVERY_S - 60))
        # the open page's kernel survived the idle time: its slider still moves the sentence
        slider = slider_widget(keep, "GPUs in the job").first
        handle = slider.locator(".noUi-handle").first
        before = keep.locator(".course-result").first.inner_text()
        handle.focus()
        handle.press("ArrowRight")
        expect(keep.locator(".course-result").first).not_to_have_text(before, timeout=45_000)
    except Exception:
        failure_evidence(keep, "voila-culling", voila)
        raise
    finally:
        keep.close()
    print(f"kernels after each of {loads + 1} page loads: {counts}; {left} left {waited} s after the last load")
    assert left == 1, f"kernels of closed pages not culled: {left} left (counts {counts})"
    assert not browser.attempted, f"the app asked other hosts: {browser.attempted[:5]}"
