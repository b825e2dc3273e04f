#!/usr/bin/env python
"""Build the course website from the executed notebooks (`make course` calls it).

    python scripts/build_site.py                            # committed notebooks -> build/site/index.html
    python scripts/build_site.py --executed build/notebooks # lessons and solutions as make course ran them
    python scripts/build_site.py --out /tmp/site            # anywhere else (the tests build into a temp dir)

Sphinx with myst-nb and sphinx-book-theme (website/conf.py says why each piece is there).
Nothing is executed: each page shows the outputs its notebook already has. The script stages
a copy of the course next to the output folder (``<out>-src``) with the layout of the
repository (notebooks/, exercises/, solutions/, ANSWER_SHEET.md, SOURCES.md, data/, the
benchmark tables of benchmarks/), so a relative link that works in JupyterLab works on the site.

The course's order is one table, notebooks/course.csv (scripts/course.py): the home page (the
three tracks: the evening, the full course, the classroom; and the map with each notebook's time
and prerequisites, declared there as data) and the sidebar and previous/next footer (one path:
lesson N -> its exercises -> lesson N+1 -> ... -> the answer sheet; the solutions are reached from
their exercises, off the path) are all generated from it.

On the staged pages: every interactive cell gets a line saying where it is live; a citation
``[@key]`` reads as author and year, linked to its entry in the bibliography (plain text inside a
printed output); a printed table (columns aligned by spaces) becomes an HTML table and other printed
text wraps (website/_static/course.css); a figure's alt text is the text that introduces it. The
site works offline: MathJax is served from the site, and no page loads a script or a style from
another host (tests/test_site.py checks it in Chromium with the network blocked).
"""
from __future__ import annotations

import argparse
import ast
import copy
import html
import re
import subprocess
import sys
import time
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent))
import course  # noqa: E402  (scripts/course.py: the course's order, notebooks/course.csv)

from course_lib import citations  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
WEBSITE = ROOT / "website"
DEFAULT_OUT = ROOT / "build" / "site"

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
LIVE_NOTE = (
    '<div class="course-live-note"><b>Interactive cell.</b> Its controls are live when you run the notebook '
    "in JupyterLab (<code>make lab</code>); the floor dashboard is also the classroom app (<code>make app</code>). "
    "This page shows a still instead: the output of the static call of the same function just above.</div>"
)
SOURCES_PLACEHOLDER = """# Sources

The course's bibliography (`SOURCES.md`, generated from `data/sources.csv`) is not in this
checkout yet. Every number about the outside world is still cited beside its use in the
notebooks, and `data/MANIFEST.csv` records the source of every data file.
"""


# ----------------------------------------------------------------- what the course has
def lessons(root: Path = ROOT) -> list[Path]:
    """The lessons, in the course's order (notebooks/course.csv)."""
    return [root / lesson.path for lesson in course.lessons(root)]


def exercises(root: Path = ROOT) -> list[Path]:
    """The exercise notebooks, in the course's order."""
    return [root / e.exercises for e in course.lessons(root) if e.exercises and (root / e.exercises).is_file()]


def solutions(root: Path = ROOT) -> list[Path]:
    """The solution notebooks, in the course's order."""
    return [root / e.solutions for e in course.lessons(root) if e.solutions]


def notebook_info(path: Path, root: Path = ROOT) -> dict:
    """Number, title, minutes (the notebook's own first cell) and prerequisites (notebooks/course.csv, as data)."""
    info = course.notebook_info(path)
    rows = {lesson.stem: lesson for lesson in course.lessons(root)}
    row = rows.get(path.stem.removesuffix("-ex").removesuffix("-sol"))
    info["prerequisites"] = list(row.prerequisites) if row and path.parent.name == "notebooks" else []
    return info


# ----------------------------------------------------------------- notebook pages
def _widget_html(text_plain: str) -> str | None:
    """The value of an ``HTML(value='...')`` widget from its text repr (the still of a result widget)."""
    m = re.match(r"""^HTML\(value=('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")""", text_plain)
    if not m:
        return None
    try:
        return ast.literal_eval(m.group(1))
    except (ValueError, SyntaxError):
        return None


def is_interactive(cell) -> bool:
    tags = cell.metadata.get("tags", [])
    return cell.cell_type == "code" and "skip-execution" in tags and ("interact(" in cell.source or "dashboard(" in cell.source)


def site_notebook(nb, folder: str = "notebooks"):
    """The page version of a notebook: widget outputs as their still, interactive cells with a live note,
    citations as author-year links, printed tables as tables, figures with alt text; solutions off the path."""
    nb = copy.deepcopy(nb)
    nb.metadata.pop("widgets", None)
    up = "../"  # every notebook page sits one folder down
    if folder == "solutions":
        nb.metadata["orphan"] = True  # reached from its exercise, not on the sidebar's path
    last_text = ""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = cite_html(cell.source, up)
            last_text = cell.source
            continue
        if cell.cell_type != "code":
            continue
        if is_interactive(cell):
            cell.outputs = [nbformat.v4.new_output("display_data", data={"text/html": LIVE_NOTE})]
            continue
        kept = []
        for out in _merged_streams(cell.outputs):
            data = out.get("data", {})
            if WIDGET_VIEW in data:
                value = _widget_html(data.get("text/plain", ""))
                if value is None:
                    continue  # a live widget has no still without its state: drop it
                out = copy.deepcopy(out)
                out["data"] = {"text/html": value}
            elif out.get("output_type") == "stream" and out.get("name") == "stdout":
                out = nbformat.v4.new_output("display_data", data={"text/html": text_output_html(out["text"])})
            elif "text/markdown" in data:
                out = copy.deepcopy(out)
                out["data"]["text/markdown"] = cite_html(data["text/markdown"], up)
            kept.append(out)
        cell.outputs = kept
        if any("image/png" in o.get("data", {}) or "image/svg+xml" in o.get("data", {}) for o in kept):
            cell.metadata.setdefault("mystnb", {})["image"] = {"alt": figure_alt(last_text)}
    return nb


def _merged_streams(outputs):
    """Consecutive stdout outputs as one (a table printed line by line is one table)."""
    out = []
    for o in outputs:
        if (o.get("output_type") == "stream" and out and out[-1].get("output_type") == "stream"
                and out[-1].get("name") == o.get("name")):
            prev = copy.deepcopy(out[-1])
            prev["text"] = prev["text"] + o["text"]
            out[-1] = prev
        else:
            out.append(o)
    return out


def figure_alt(text: str) -> str:
    """A figure's alt text: the first sentence of the text that introduces it, without markup."""
    plain = re.sub(r"<[^>]+>", "", text)
    plain = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", plain)  # links -> their text
    plain = re.sub(r"^#+\s*", "", plain, flags=re.M)
    plain = re.sub(r"[*`$\\]", "", plain)
    plain = " ".join(plain.split())
    first = re.split(r"(?<=[.:?!])\s", plain, maxsplit=1)[0] if plain else ""
    return ("Figure: " + first)[:240] if first else "Figure"


# ----------------------------------------------------------------- citations on the page
_MD_CITE_LINK = re.compile(r"\[([^\]\[]+)\]\(((?:\.\./)*)SOURCES\.md#([\w-]+)\)")
_CODE = re.compile(r"(```.*?```|`[^`\n]*`)", re.S)


def _outside_code(text: str, fn) -> str:
    """``fn`` applied to the parts of markdown ``text`` that are not code (fences, inline code)."""
    parts = _CODE.split(text)
    return "".join(p if i % 2 else fn(p) for i, p in enumerate(parts))


def cite_html(text: str, up: str = "") -> str:
    """Markdown with each ``[@key]`` (and each markdown link to SOURCES.md#key, the drill's form) as an
    author-year HTML link to the bibliography page; ``up`` leads from the page to the site's root."""
    def link(key: str, label: str) -> str:
        return f'<a class="course-cite" href="{up}SOURCES.html#{key}">{label}</a>'

    def prose(part: str) -> str:
        part = _MD_CITE_LINK.sub(lambda m: link(m.group(3), m.group(1)), part)
        return citations.render(part, link)

    return _outside_code(text, prose)


# ----------------------------------------------------------------- printed text: tables as tables, the rest wraps
_SEPARATOR = re.compile(r"^[\s\-=+|:]*-{3,}[\s\-=+|:]*$")


def _columns(lines: list[str]) -> list[tuple[int, int]] | None:
    """Column spans of lines aligned by runs of two or more spaces common to every line (None: not aligned)."""
    width = max(len(line) for line in lines)
    padded = [line.ljust(width) for line in lines]
    blank = [all(line[i] == " " for line in padded) for i in range(width)]
    spans, start, i = [], None, 0
    while i < width:
        if not blank[i]:
            start = i if start is None else start
            i += 1
            continue
        j = i
        while j < width and blank[j]:
            j += 1
        if start is not None and (j - i >= 2 or j == width):
            spans.append((start, i))
            start = None
        elif start is not None:
            pass  # a single space inside a cell
        i = j
    if start is not None:
        spans.append((start, width))
    return spans if 2 <= len(spans) <= 10 else None


def _table(lines: list[str]) -> list[list[str]] | None:
    """The cells of a printed table, or None when the lines are not one (at least 3 rows, 2 columns,
    a number in most rows after the first)."""
    rows = [line.rstrip() for line in lines if line.strip() and not _SEPARATOR.match(line)]
    if len(rows) < 3:
        return None
    spans = _columns(rows[1:])  # the data rows set the columns; a header may break them ("saves min/day left min/day")
    if spans is None:
        return None
    if "  " not in rows[0].strip():  # a sentence that introduces the table, not its header (no column gap)
        return None
    end = max(spans[-1][1], max(len(r) for r in rows))
    spans[-1] = (spans[-1][0], end)
    cells = [_header_cells(rows[0], spans)] + [[line.ljust(end)[a:b].strip() for a, b in spans] for line in rows[1:]]
    numeric = sum(any(re.search(r"\d", c) for c in row[1:]) for row in cells[1:])
    filled = all(sum(bool(c) for c in row) >= 2 for row in cells[1:])
    if numeric < max(2, (len(cells) - 1) // 2) or not filled:
        return None
    return cells


def _header_cells(line: str, spans: list[tuple[int, int]]) -> list[str]:
    """The first row's words by column: a word over a column belongs to it; a word in a gap belongs to the
    column whose end follows it (right-aligned numbers' headers start in the gap before them)."""
    cells: list[list[str]] = [[] for _ in spans]
    for m in re.finditer(r"\S+", line):
        i = next((k for k, (a, b) in enumerate(spans) if m.start() < b and a < m.end()), None)  # over its column
        if i is None:
            i = next((k for k, (_, stop) in enumerate(spans) if m.end() <= stop), len(spans) - 1)
        cells[i].append(m.group())
    return [" ".join(c) for c in cells]


def _table_html(cells: list[list[str]]) -> str:
    head = cells[0]
    pairs = all(re.match(r"[:=]", row[1]) for row in cells if len(row) > 1 and row[1])  # "label : value" lines
    if pairs:
        cells = [[row[0], re.sub(r"^:\s*", "", row[1]), *row[2:]] for row in cells]
    is_head = not pairs and not any(re.fullmatch(r"[-+\d.,%e ]+", c) for c in head if c)
    rows = cells[1:] if is_head else cells
    out = ['<table class="course-table">']
    if is_head:
        out.append("<thead><tr>" + "".join(f"<th>{html.escape(c).replace('_', '_<wbr>')}</th>" for c in head) + "</tr></thead>")
    out.append("<tbody>")
    for row in rows:
        out.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def text_output_html(text: str) -> str:
    """Printed output as HTML: each paragraph that is a table (columns aligned by spaces) as a table, the
    rest as preformatted text that wraps (no side-scrolling box); citations as author and year."""
    text = citations.render(text, citations.plain)
    blocks, pre = [], []

    def flush():
        if pre:
            blocks.append(f'<pre class="course-pre">{html.escape(chr(10).join(pre))}</pre>')
            pre.clear()

    for para in re.split(r"\n\s*\n", text.rstrip("\n")):
        lines = para.split("\n")
        done = False
        # a sentence or two may introduce the table, or follow it: try the fewest lines left out first
        cuts = sorted(((h, t) for h in range(3) for t in range(3) if len(lines) - h - t >= 3), key=sum)
        for head, tail in cuts:
            cells = _table(lines[head:len(lines) - tail])
            if cells:
                pre.extend(lines[:head])
                flush()
                blocks.append(_table_html(cells))
                pre.extend(lines[len(lines) - tail:])
                done = True
                break
        if not done:
            if pre:
                pre.append("")
            pre.extend(lines)
    flush()
    return '<div class="course-text-output">' + "".join(blocks) + "</div>"


# ----------------------------------------------------------------- home page
def toc_title(path: Path) -> str:
    """The sidebar's short title: '04 · The optimal checkpoint interval', '04 · Exercises'."""
    return course.short_title(path)


def _link(path: Path, text: str) -> str:
    return f"[{text}]({path.parent.name}/{path.name})"


def _exercise_count(path: Path) -> int:
    nb = nbformat.read(path, as_version=4)
    return sum(len(re.findall(r"^## Exercise \d+", c.source, re.M)) for c in nb.cells if c.cell_type == "markdown") or 1


def tracks(root: Path = ROOT) -> dict:
    """The home page's tracks as data: the evening's steps with minutes, the full course's total, the classroom's order."""
    rows = course.lessons(root)
    evening, classroom = [], []
    for r in rows:
        info = notebook_info(root / r.path, root)
        if r.in_evening:
            ex_min, ex = 0, r.evening_exercises
            if ex and r.exercises:
                ex_info = course.notebook_info(root / r.exercises)
                ex_min = round((ex_info["minutes"] or 0) * len(ex) / _exercise_count(root / r.exercises))
            evening.append({"lesson": r, "minutes": info["minutes"] or 0, "exercises": ex, "exercise_minutes": ex_min})
        if r.classroom_min:
            classroom.append({"lesson": r, "minutes": r.classroom_min, "what": r.classroom})
    lesson_min = sum(notebook_info(root / r.path, root)["minutes"] or 0 for r in rows)
    ex_min = sum(course.notebook_info(root / r.exercises)["minutes"] or 0 for r in rows if r.exercises and (root / r.exercises).is_file())
    evening_min = sum(e["minutes"] + e["exercise_minutes"] for e in evening) + course.ANSWER_SHEET_MIN
    return {"evening": evening, "evening_min": evening_min, "classroom": classroom,
            "classroom_min": sum(c["minutes"] for c in classroom), "lesson_min": lesson_min, "exercise_min": ex_min}


def _ex_words(numbers: tuple[int, ...]) -> str:
    if len(numbers) == 1:
        return f"exercise {numbers[0]}"
    if list(numbers) == list(range(numbers[0], numbers[-1] + 1)):
        return f"exercises {numbers[0]}-{numbers[-1]}"
    return "exercises " + ", ".join(map(str, numbers))


def home_page(root: Path = ROOT) -> str:
    rows = course.lessons(root)
    infos = [notebook_info(root / r.path, root) for r in rows]
    by_number = {i["number"]: i for i in infos}
    t = tracks(root)
    table = []
    for r, i in zip(rows, infos):
        n = i["number"]
        pre = ", ".join(_link(by_number[q]["path"], q) for q in i["prerequisites"] if q in by_number) or "none"
        ex_path = root / r.exercises if r.exercises and (root / r.exercises).is_file() else None
        ex_cell = f"{_link(ex_path, 'exercises ' + n)} ({course.notebook_info(ex_path)['minutes']} min)" if ex_path else "none"
        sol_cell = _link(root / r.solutions, "solutions " + n) if r.solutions else "none"
        minutes = f"{i['minutes']} min" if i["minutes"] else ""
        table.append(f"| {n} | {_link(i['path'], toc_title(i['path']).split(' · ', 1)[1])} | {minutes} | {pre} | {ex_cell} | {sol_cell} |")
    evening = []
    for k, e in enumerate(t["evening"], start=1):
        r = e["lesson"]
        line = f"{k}. {_link(root / r.path, toc_title(root / r.path))} ({e['minutes']} min)"
        if e["exercises"] and r.exercises:
            line += (f", then {_ex_words(e['exercises'])} of {_link(root / r.exercises, 'its exercises')} "
                     f"(about {e['exercise_minutes']} min)")
        evening.append(line)
    evening.append(f"{len(evening) + 1}. [The answer sheet](ANSWER_SHEET.md) ({course.ANSWER_SHEET_MIN} min): say the "
                   "2-minute answer aloud, then read the 10-minute one and the follow-ups.")
    classroom = ["| order | project | minutes | what to show |", "|---|---|---|---|"]
    for k, c in enumerate(t["classroom"], start=1):
        r = c["lesson"]
        classroom.append(f"| {k} | {_link(root / r.path, toc_title(root / r.path))} | {c['minutes']} | {c['what']} |")
    path_toc = ["```{toctree}", ":caption: The course: lesson, its exercises, the next lesson", ":hidden:", ":maxdepth: 1", ""]
    for stop in course.path(root):
        if stop.kind == "answer sheet":
            path_toc.append("The answer sheet <ANSWER_SHEET>")
        else:
            path_toc.append(f"{toc_title(root / stop.path)} <{stop.path.parent.name}/{stop.path.stem}>")
    path_toc.append("```")
    return "\n".join([
        "# Restarts at scale",
        "",
        "> *A 4,096-GPU training run loses about 2 % of every day to restarts (two a day, about 15 minutes each).",
        "> Fix it, and say where the floor is.*",
        "",
        "One notebook per step, each handing its number to the next. Each lesson ends by pointing to its exercises,",
        "whose checks name your likely mistake, and each exercise notebook ends by pointing to the next lesson; open a",
        "solution after your own attempt. This site shows the executed notebooks: to run them or move a slider, open",
        "them in JupyterLab (`make lab`); the floor dashboard is also a classroom app (`make app`).",
        "",
        "## Three ways through",
        "",
        f"### The evening (about {t['evening_min'] / 60:.1f} hours)",
        "",
        "The question, where a restart's minutes go, the interval, the floor, then the interview drill and the answer sheet:",
        "",
        *evening,
        "",
        f"In all about {t['evening_min']} minutes. The lessons it skips are in the map below, with the notebooks each one uses.",
        "",
        f"### The full course (about {t['lesson_min'] / 60:.1f} hours, and {t['exercise_min'] / 60:.1f} hours of exercises)",
        "",
        "Every lesson in order, each followed by its exercises: the sidebar lists that path and the link at the foot",
        "of every page walks it, from notebook 00 to the answer sheet.",
        "",
        f"### The classroom (about {t['classroom_min']} minutes)",
        "",
        "What a teacher projects, in this order. Start the app before the class, in presentation mode (large type, the",
        "chart and its sentence on one screen): `make app MODE=present`.",
        "",
        *classroom,
        "",
        "## The map",
        "",
        f"Lessons: about {t['lesson_min'] / 60:.1f} hours; exercises: about {t['exercise_min'] / 60:.1f} hours more. "
        "Prerequisites are the notebooks whose numbers a lesson uses.",
        "",
        "| # | lesson | time | prerequisites | exercises | solutions |",
        "|---|---|---|---|---|---|",
        *table,
        "",
        "## Also here",
        "",
        "- [The answer sheet](ANSWER_SHEET.md): the interview answer in 2 and in 10 minutes, every number computed.",
        "- [Sources](SOURCES.md): the bibliography of every outside number the course uses.",
        "- [Benchmarks](benchmarks/README.md): the course's own measurements, as committed tables.",
        "",
        *path_toc,
        "",
        "```{toctree}\n:caption: Reference\n:hidden:\n\nSOURCES\nBenchmarks <benchmarks/README>\n```",
        "",
    ])


# ----------------------------------------------------------------- staging and build
def _write(path: Path, data: bytes, wanted: set[Path]) -> None:
    """Write only when the bytes change, so Sphinx's incremental build reuses unchanged pages."""
    wanted.add(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_bytes() != data:
        path.write_bytes(data)


def stage(src: Path, executed: Path | None = None, root: Path = ROOT) -> None:
    """Lay out the site's sources in ``src`` (files no longer wanted are removed)."""
    wanted: set[Path] = set()
    for f in WEBSITE.rglob("*"):
        if f.is_file() and "__pycache__" not in f.parts:
            _write(src / f.relative_to(WEBSITE), f.read_bytes(), wanted)
    for folder, paths in (("notebooks", lessons(root)), ("exercises", exercises(root)), ("solutions", solutions(root))):
        for p in paths:
            chosen = executed / p.name if executed and (executed / p.name).is_file() else p
            nb = site_notebook(nbformat.read(chosen, as_version=4), folder)
            if folder == "solutions":  # the solution notebooks share their exercises' title
                first = next(c for c in nb.cells if c.cell_type == "markdown")
                first.source = re.sub(r"^(#\s+\d{2}\s+·\s+)Exercises:", r"\1Solutions:", first.source, count=1)
            _write(src / folder / p.name, nbformat.writes(nb).encode(), wanted)
    _write(src / "index.md", home_page(root).encode(), wanted)
    _write(src / "ANSWER_SHEET.md", cite_html((root / "ANSWER_SHEET.md").read_text(encoding="utf-8")).encode(), wanted)
    sources = root / "SOURCES.md"
    _write(src / "SOURCES.md", sources.read_bytes() if sources.is_file() else SOURCES_PLACEHOLDER.encode(), wanted)
    # the benchmark tables SOURCES.md and the lessons cite: the README in the Reference section, each table a page
    bench = root / "benchmarks"
    if (bench / "README.md").is_file():
        _write(src / "benchmarks" / "README.md", cite_html((bench / "README.md").read_text(encoding="utf-8"), "../").encode(), wanted)
    for f in sorted((bench / "results").glob("*.md")):
        _write(src / "benchmarks" / "results" / f.name, b"---\norphan: true\n---\n\n" + f.read_bytes(), wanted)
    for f in sorted((root / "data").glob("*.csv")):  # pages may link a data file: it is offered for download
        _write(src / "data" / f.name, f.read_bytes(), wanted)
    for f in list(src.rglob("*")):
        if f.is_file() and "_build" not in f.relative_to(src).parts and f not in wanted:
            f.unlink()


def build(out: Path = DEFAULT_OUT, executed: Path | None = None, root: Path = ROOT, quiet: bool = True) -> Path:
    """Stage and build the site into ``out``; returns ``out / 'index.html'``. Raises on a Sphinx error."""
    out = Path(out).resolve()
    src = out.parent / (out.name + "-src")
    stage(src, executed, root)
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-d", str(src / "_build" / "doctrees"), str(src), str(out)]
    if quiet:
        cmd.insert(3, "-q")
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.stdout.strip() and not quiet:
        print(proc.stdout)
    if proc.stderr.strip():
        print(proc.stderr, file=sys.stderr)
    if proc.returncode != 0:
        raise RuntimeError(f"sphinx-build failed ({proc.returncode}); see the messages above")
    return out / "index.html"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder (default build/site)")
    ap.add_argument("--executed", type=Path, default=None,
                    help="folder of executed notebooks (make course's build/notebooks) to use instead of the committed ones")
    ap.add_argument("--verbose", action="store_true", help="show Sphinx's progress")
    args = ap.parse_args(argv)
    t0 = time.monotonic()
    try:
        index = build(args.out, args.executed, quiet=not args.verbose)
    except RuntimeError as exc:
        print(exc, file=sys.stderr)
        return 1
    print(f"site: {index} ({time.monotonic() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
