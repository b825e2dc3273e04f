"""The course website (`make course` / `make site`): built, complete, linked, and offline.

The site is built here from the committed notebooks into a temporary folder
(scripts/build_site.py, the same function `make course` calls), so `make test` alone works on
a clean clone. The checks that need no browser read the HTML: the home page links every
lesson, exercise and solution page, and no page links to a missing file or loads anything
from another host. The browser checks serve the folder on 127.0.0.1 to Debian's Chromium
with every other request blocked (and recorded): following "next" from notebook 00 walks the
course's one path (lesson, its exercises, the next lesson, ..., the answer sheet; notebooks/course.csv),
no lesson's output overflows its column at 1280 x 800 (each Summary included), the drill hides
every model answer until the candidate commits one, citations read as author-year links, figures
enlarge, and a page's math is typeset by the MathJax the site serves itself. Screenshots of the
home page, one lesson and the drill go to build/screenshots/.
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
import course  # noqa: E402

#: `make test` runs the browser tests on two xdist workers (--dist loadgroup); the site's tests are one group
#: (they share the built site and its server), beside tests/test_browser.py's groups.
pytestmark = pytest.mark.xdist_group("site")

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


def test_home_page_prerequisites_are_the_declared_ones_not_numbers_in_the_prose(site):
    """The map's prerequisites come from notebooks/course.csv (04 uses 00 and 02: not '12 h' or 'the 10-minute interval')."""
    text = (site / "index.html").read_text(encoding="utf-8")
    rows = {r.stem: r for r in course.lessons()}
    assert rows["04-optimal-interval"].prerequisites == ("00", "02")
    for lesson in course.lessons():
        info = build_site.notebook_info(REPO / lesson.path)
        assert info["prerequisites"] == list(lesson.prerequisites)
        order = [r.number for r in course.lessons()]
        assert all(order.index(q) < order.index(lesson.number) for q in lesson.prerequisites), f"{lesson.stem}: a later prerequisite"
        head = next(c.source for c in build_site.nbformat.read(REPO / lesson.path, 4).cells if c.cell_type == "markdown")
        prose = head[head.find("**Prerequisites:**"):]
        named = {f"{n:02d}" for a, b in re.findall(r"\b(\d{2})(?:-(\d{2}))?\b", prose) for n in range(int(a), int(b or a) + 1)}
        assert set(lesson.prerequisites) <= named, f"{lesson.stem}: the table names {lesson.prerequisites}, its text does not"
    row = next(line for line in text.split("<tr") if "04-optimal-interval.html" in line and "exercises 04" in line)
    linked = re.findall(r'href="notebooks/(\d{2})-', row)
    assert linked[0] == "04" and sorted(linked[1:]) == ["00", "02"], linked


def test_home_page_has_the_evening_the_full_course_and_the_classroom(site):
    t = build_site.tracks()
    assert [e["lesson"].number for e in t["evening"]] == ["00", "03", "04", "08", "12"]
    assert 120 <= t["evening_min"] <= 180, t["evening_min"]
    assert all(e["exercises"] for e in t["evening"] if e["lesson"].number == "12")
    assert t["classroom"] and all(c["minutes"] > 0 and c["what"] for c in t["classroom"])
    text = (site / "index.html").read_text(encoding="utf-8")
    for heading in ("The evening", "The full course", "The classroom"):
        assert heading in text
    assert "make app MODE=present" in text and "ANSWER_SHEET.html" in text


def test_lesson_00s_road_lists_every_notebook_in_the_course_order():
    road = next(c.source for c in build_site.nbformat.read(LESSONS[0], 4).cells
                if c.cell_type == "markdown" and "## The road" in c.source)
    road = road[road.find("## The road"):]
    rows = [line for line in road.splitlines() if line.startswith("| [")]
    linked = [m for line in rows for m in re.findall(r"\]\((\d{2}-[\w-]+)\.ipynb\)", line)[:1]]
    assert linked == [r.stem for r in course.lessons()][1:], "the road of notebook 00 must list every later notebook, in order"


def test_the_sidebar_is_one_path_and_the_solutions_hang_off_their_exercises(site):
    home = (site / "index.html").read_text(encoding="utf-8")
    toc = home[home.find('class="bd-sidebar-primary'):]
    toc = toc[:toc.find("</nav>")]
    order = [o for o in (urlsplit(v).path.removesuffix(".html") for v in re.findall(r'class="reference internal" href="([^"]+)"', toc)) if o]
    expected = [f"{p.path.parent.name}/{p.path.stem}" if p.kind != "answer sheet" else "ANSWER_SHEET" for p in course.path()]
    assert order[:len(expected)] == expected
    assert not any(o.startswith("solutions/") for o in order), "solutions are off the path"
    for nb in EXERCISES:
        page = _page(site, nb).read_text(encoding="utf-8")
        assert f"../solutions/{nb.stem.removesuffix('-ex')}-sol.html" in page, f"{nb.name} does not link its solution"


def test_citations_read_as_author_year_links_to_the_bibliography(site):
    import html as html_lib

    anchors = set(re.findall(r'id="([\w-]+)"', (site / "SOURCES.html").read_text(encoding="utf-8")))
    cites = 0
    for page in pages(site):
        text = page.read_text(encoding="utf-8")
        body = re.sub(r"<(pre|code)[^>]*>.*?</\1>", "", text, flags=re.S)  # the form itself may be shown as code
        raw = re.findall(r"\[@[\w-]+", html_lib.unescape(re.sub(r"<[^>]+>", "", body)))
        assert not raw, f"{page.relative_to(site)} shows citation markup: {raw[:3]}"
        for key in re.findall(r'class="course-cite" href="[^"]*SOURCES\.html#([\w-]+)"', text):
            assert key in anchors, f"{page.relative_to(site)} cites {key}, which SOURCES has no anchor for"
            cites += 1
    assert cites > 50


def test_printed_tables_become_tables_and_figures_have_alt_text(site):
    page = _page(site, next(nb for nb in LESSONS if nb.name.startswith("08-"))).read_text(encoding="utf-8")
    assert page.count('class="course-table"') >= 3 and "<th>saves min/day</th>" in page
    alts = re.findall(r'<img[^>]*alt="([^"]*)"', page)
    assert alts and not any(a.endswith(".png") or "_images" in a for a in alts), alts[:3]
    assert all(a.startswith("Figure") for a in alts)
    cells = build_site._table(["                         saves min/day left min/day     loss",  # notebook 08's waterfall
                               "baseline (with writes)                        33.27   2.311%",
                               "+ in-memory checkpoint            9.97        23.30   1.618%"])
    assert cells == [["", "saves min/day", "left min/day", "loss"], ["baseline (with writes)", "", "33.27", "2.311%"],
                     ["+ in-memory checkpoint", "9.97", "23.30", "1.618%"]]
    assert build_site._table(["a sentence that is not a table at all", "nor is this one", "or this"]) is None


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
def test_next_walks_lesson_exercises_next_lesson_to_the_answer_sheet(offline_page):
    """The footer's "next" from notebook 00 is the course's one path: 00, 01, exercises 01, 02, ..., the answer sheet."""
    page, base, _ = offline_page
    expected = [f"{p.path.parent.name}/{p.path.stem}" if p.kind != "answer sheet" else "ANSWER_SHEET" for p in course.path()]
    page.goto(f"{base}/{expected[0]}.html", wait_until="domcontentloaded")
    seen = [expected[0]]
    while seen[-1] != "ANSWER_SHEET" and len(seen) <= len(expected):
        page.locator("a.right-next").first.click()
        page.wait_for_load_state("domcontentloaded")
        seen.append(urlsplit(page.url).path.lstrip("/").removesuffix(".html"))
    assert seen == expected
    kinds = [p.kind for p in course.path()]
    assert all(not (a == b == "exercises") for a, b in zip(kinds, kinds[1:])), "two exercise notebooks in a row"
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.goto(f"{base}/index.html", wait_until="load")
    page.screenshot(path=str(SCREENSHOTS / "site-home.png"))


_OVERFLOWING = """() => Array.from(document.querySelectorAll('.cell_output .output')).filter(e => {
    const box = e.querySelector('pre, table') || e;
    return box.scrollWidth > box.clientWidth + 1 || e.scrollWidth > e.clientWidth + 1; }).length"""


@pytest.mark.browser
def test_no_lesson_output_overflows_at_1280x800(offline_page):
    """Results wrap or are tables: none sits in a side-scrolling box (93 of 153 did), each Summary included."""
    page, base, _ = offline_page
    page.set_viewport_size({"width": 1280, "height": 800})
    counts = {}
    for nb in LESSONS:
        page.goto(f"{base}/notebooks/{nb.stem}.html", wait_until="load")
        counts[nb.stem] = page.evaluate(_OVERFLOWING)
        summary = page.locator("section:has(> h2:text-matches('Summary'))")
        assert summary.count() == 1, f"{nb.stem}: no Summary section"
        assert summary.evaluate("s => Array.from(s.querySelectorAll('.cell_output .output pre'))"
                                ".every(p => p.scrollWidth <= p.clientWidth + 1)"), f"{nb.stem}: its Summary overflows"
    print("overflowing outputs per lesson at 1280x800:", counts)
    assert sum(counts.values()) == 0, counts


@pytest.mark.browser
def test_the_drill_hides_each_model_answer_until_one_is_committed(offline_page):
    """Notebook 12 on the site: the question, a box to commit an answer (and a 2-minute clock), then the model answer."""
    page, base, _ = offline_page
    drill = next(nb for nb in LESSONS if nb.name.startswith("12-"))
    page.goto(f"{base}/notebooks/{drill.stem}.html", wait_until="load")
    page.evaluate("() => localStorage.clear()")
    page.reload(wait_until="load")
    answers = page.locator("details.course-answer")
    from course_lib import drill as course_drill

    assert answers.count() == len(course_drill.REGISTRY) + 2, "every follow-up, the first answer and the scoring points"
    assert page.locator(".course-commit textarea").count() == answers.count()
    assert page.evaluate("() => Array.from(document.querySelectorAll('details.course-answer')).every(d => !d.open)")
    first = answers.first
    model = first.locator("p").first
    assert not model.is_visible(), "a model answer is shown before the candidate answered"
    first.locator("summary").click()
    page.wait_for_timeout(200)
    assert not first.evaluate("d => d.open"), "the summary opened the answer before a commit"
    box = page.locator(".course-commit").first
    box.locator("button.course-clock-start").click()
    page.wait_for_timeout(1100)
    assert re.fullmatch(r"[01]:\d\d", box.locator(".course-clock").inner_text().strip())
    box.locator("textarea").fill("Detection first: the heartbeat turns minutes into seconds.")
    box.locator("button.course-commit-button").click()
    assert first.evaluate("d => d.open") and model.is_visible()
    assert "Detection first" in box.inner_text() and "committed" in box.inner_text()
    first.scroll_into_view_if_needed()
    page.screenshot(path=str(SCREENSHOTS / "site-drill-revealed.png"))
    # the others stay folded; a reload remembers the committed one
    assert not answers.nth(1).evaluate("d => d.open")
    page.reload(wait_until="load")
    assert page.locator("details.course-answer").first.evaluate("d => d.open")
    assert not page.locator("details.course-answer").nth(1).evaluate("d => d.open")


@pytest.mark.browser
def test_a_figure_enlarges_on_click(offline_page):
    page, base, _ = offline_page
    lesson = next(nb for nb in LESSONS if nb.name.startswith("08-"))
    page.goto(f"{base}/notebooks/{lesson.stem}.html", wait_until="load")
    img = page.locator("div.cell_output img").first
    img.scroll_into_view_if_needed()
    img.click()
    big = page.locator(".course-zoom img")
    assert big.is_visible() and big.bounding_box()["width"] > img.bounding_box()["width"]
    page.keyboard.press("Escape")
    assert page.locator(".course-zoom").count() == 0


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
