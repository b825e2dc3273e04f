"""The course website (`make course` / `make site`): built, complete, linked, and offline.

The site is built here from the committed notebooks into a temporary folder
(scripts/build_site.py, the same function `make course` calls), so `make test` alone works on
a clean clone. The checks that need no browser read the HTML: the home page links every
lesson, exercise and solution page, and no page links to a missing file or loads anything
from another host. The browser checks serve the folder on 127.0.0.1 to Debian's Chromium
with every other request blocked (and recorded): following "next" from notebook 00 walks
00 -> 09 in order, and a page's math is typeset by the MathJax the site serves itself.
Screenshots of the home page and one lesson go to build/screenshots/.
"""
from __future__ import annotations

import functools
import http.server
import os
import re
import sys
import threading
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # works whether or not tests/ is a package
from browser_support import REPO, SCREENSHOTS, chromium_missing, launch_chromium  # noqa: E402

sys.path.insert(0, str(REPO / "scripts"))
import build_site  # noqa: E402

LESSONS = build_site.lessons()
EXERCISES = build_site.exercises()
SOLUTIONS = build_site.solutions()


class _Refs(HTMLParser):
    """Every href/src of a page (links, scripts, styles, images)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.refs: list[tuple[str, str, str]] = []  # (tag, attribute, value)

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("href", "src") and value:
                self.refs.append((tag, name, value))


def refs(page: Path) -> list[tuple[str, str, str]]:
    p = _Refs()
    p.feed(page.read_text(encoding="utf-8"))
    return p.refs


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site") / "site"
    index = build_site.build(out)
    assert index.is_file()
    return out


def pages(site: Path) -> list[Path]:
    """The site's pages (not the theme's Jinja macro files Sphinx copies into _static/)."""
    return [p for p in site.rglob("*.html") if "_static" not in p.relative_to(site).parts]


def _page(site: Path, notebook: Path) -> Path:
    return site / notebook.parent.name / (notebook.stem + ".html")


# ---------------------------------------------------------------- the HTML itself
def test_home_page_links_every_lesson_exercise_and_solution(site):
    home = site / "index.html"
    links = {urlsplit(v).path for tag, attr, v in refs(home) if tag == "a" and attr == "href"}
    for nb in LESSONS + EXERCISES + SOLUTIONS:
        rel = f"{nb.parent.name}/{nb.stem}.html"
        assert rel in links, f"the home page does not link {rel}"
        assert _page(site, nb).is_file(), f"no page for {nb.name}"
    text = home.read_text(encoding="utf-8")
    assert "Fix it, and say where the floor is" in text
    for n, info in ((i["number"], i) for i in map(build_site.notebook_info, LESSONS)):
        assert f"{info['minutes']} min" in text, f"the map lacks the time of notebook {n}"
    for page in ("ANSWER_SHEET.html", "SOURCES.html"):
        assert page in links and (site / page).is_file()


def test_no_page_links_to_a_missing_file(site):
    missing = []
    for page in pages(site):
        for tag, attr, value in refs(page):
            parts = urlsplit(value)
            if parts.scheme or parts.netloc or value.startswith(("#", "mailto:", "data:", "javascript:")):
                continue
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if not target.exists():
                missing.append(f"{page.relative_to(site)} -> {value}")
    assert not missing, "links to missing files:\n" + "\n".join(sorted(set(missing))[:40])


def test_no_page_loads_a_script_or_style_from_another_host(site):
    remote = []
    for page in pages(site):
        for tag, attr, value in refs(page):
            if tag in ("script", "link", "img", "iframe") and urlsplit(value).netloc:
                remote.append(f"{page.relative_to(site)}: <{tag} {attr}={value}>")
    assert not remote, "\n".join(remote[:20])


def test_interactive_cells_carry_a_still_and_say_where_they_are_live(site):
    interactive = [nb for nb in LESSONS if any(build_site.is_interactive(c) for c in build_site.nbformat.read(nb, 4).cells)]
    assert interactive, "no interactive cell found: the test looks for skip-execution interact()/dashboard() cells"
    for nb in interactive:
        html = _page(site, nb).read_text(encoding="utf-8")
        assert "course-live-note" in html and "make lab" in html and "make app" in html, nb.name
        assert "application/vnd.jupyter.widget-view+json" not in html, f"{nb.name} shows an empty widget placeholder"


def test_exercise_pages_fold_the_hint_and_the_why(site):
    for nb in EXERCISES:
        html = _page(site, nb).read_text(encoding="utf-8")
        hint, why = html.find('class="course-hint"'), html.find('class="course-why"')
        stub = html.find("tag_exercise")  # myst-nb marks a cell with its tags: the first stub
        assert 0 <= hint < stub < why, f"{nb.name}: a folded hint before the first stub, the folded Why after it"


def test_lessons_end_pointing_to_their_exercises_and_exercises_never_next_to_a_solution():
    import nbformat

    for nb in LESSONS[1:]:
        last = [c for c in nbformat.read(nb, 4).cells if c.cell_type == "markdown"][-1].source
        assert f"../exercises/{nb.stem}-ex.ipynb" in last, f"{nb.name} does not end pointing to its exercises"
    for nb in EXERCISES:
        nexts = [line for c in nbformat.read(nb, 4).cells if c.cell_type == "markdown"
                 for line in c.source.splitlines() if line.startswith("**Next:**")]
        assert len(nexts) == 1, f"{nb.name}: one Next: line"
        targets = re.findall(r"\]\(([^)]+)\)", nexts[0])
        assert targets and not any("-sol.ipynb" in t for t in targets), f"{nb.name}: {nexts[0]}"


# ---------------------------------------------------------------- in Chromium, offline
@pytest.fixture(scope="module")
def served(site):
    """The built site on a free 127.0.0.1 port (a thread of this process), always stopped."""
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # the test output stays readable
        pass


@pytest.fixture(scope="module")
def offline_page(served, tmp_path_factory):
    reason = chromium_missing()
    if reason:
        if os.environ.get("COURSE_REQUIRE_BROWSER") == "1":
            pytest.fail(f"browser test required (COURSE_REQUIRE_BROWSER=1) but {reason}")
        pytest.skip(f"browser test skipped: {reason}")
    from playwright.sync_api import sync_playwright

    attempted: list[str] = []

    def gate(route):
        url = route.request.url
        if url.startswith(served + "/"):
            route.continue_()
        else:  # every other host is blocked, and the attempt is recorded
            attempted.append(url)
            route.abort()

    with sync_playwright() as pw:
        context = launch_chromium(pw, tmp_path_factory.mktemp("site-browser") / "profile")
        context.set_default_timeout(30_000)
        context.route("**/*", gate)
        page = context.new_page()
        page.set_viewport_size({"width": 1280, "height": 800})
        try:
            yield page, served, attempted
        finally:
            context.close()


@pytest.mark.browser
def test_next_from_notebook_00_reaches_09_in_order(offline_page):
    page, base, _ = offline_page
    page.goto(f"{base}/notebooks/{LESSONS[0].stem}.html", wait_until="domcontentloaded")
    seen = [LESSONS[0].stem]
    while seen[-1] != LESSONS[-1].stem and len(seen) <= len(LESSONS):
        page.locator("a.right-next").first.click()
        page.wait_for_load_state("domcontentloaded")
        seen.append(Path(urlsplit(page.url).path).stem)
    assert seen == [nb.stem for nb in LESSONS]
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.goto(f"{base}/index.html", wait_until="load")
    page.screenshot(path=str(SCREENSHOTS / "site-home.png"))


@pytest.mark.browser
def test_math_is_typeset_offline_and_no_other_host_is_asked(offline_page):
    page, base, attempted = offline_page
    lesson = next(nb for nb in LESSONS if nb.name.startswith("04-"))
    page.goto(f"{base}/notebooks/{lesson.stem}.html", wait_until="load")
    typeset = page.locator("mjx-container")
    typeset.first.wait_for(state="attached", timeout=30_000)
    math = page.locator("span.math, div.math")
    assert math.count() > 5
    # every math element has been typeset: none is left showing its TeX source
    raw = page.evaluate("() => Array.from(document.querySelectorAll('span.math, div.math'))"
                        ".filter(e => !e.querySelector('mjx-container')).map(e => e.textContent.slice(0, 60))")
    assert not raw, f"math left as TeX: {raw[:5]}"
    body = page.locator("article").inner_text()
    assert "$\\tau" not in body and "\\sqrt{" not in body
    page.screenshot(path=str(SCREENSHOTS / "site-lesson.png"))
    assert not attempted, f"the site asked other hosts: {attempted[:5]}"
