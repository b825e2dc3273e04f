#!/usr/bin/env python
"""Build the course website from the executed notebooks (`make course` calls it).

    python scripts/build_site.py                            # committed notebooks -> build/site/index.html
    python scripts/build_site.py --executed build/notebooks # lessons and solutions as make course ran them
    python scripts/build_site.py --out /tmp/site            # anywhere else (the tests build into a temp dir)

Sphinx with myst-nb and sphinx-book-theme (website/conf.py says why each piece is there).
Nothing is executed: each page shows the outputs its notebook already has. The script stages
a copy of the course next to the output folder (``<out>-src``) with the layout of the
repository (notebooks/, exercises/, solutions/, ANSWER_SHEET.md, SOURCES.md, data/), so a
relative link that works in JupyterLab works on the site; writes the home page (the question
and the map lesson -> exercises -> solutions, with each notebook's time and prerequisites,
read from the notebooks themselves); gives every interactive cell a line saying where it is
live; and runs Sphinx. The site works offline: MathJax is served from the site, and no page
loads a script or a style from another host (tests/test_site.py checks it in Chromium with
the network blocked).
"""
from __future__ import annotations

import argparse
import ast
import copy
import re
import subprocess
import sys
import time
from pathlib import Path

import nbformat

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
    return sorted((root / "notebooks").glob("[0-9][0-9]-*.ipynb"))


def exercises(root: Path = ROOT) -> list[Path]:
    return sorted((root / "exercises").glob("[0-9][0-9]-*-ex.ipynb"))


def solutions(root: Path = ROOT) -> list[Path]:
    return sorted((root / "solutions").glob("[0-9][0-9]-*-sol.ipynb"))


def notebook_info(path: Path) -> dict:
    """Number, title, minutes and prerequisite notebook numbers, read from the first markdown cell."""
    nb = nbformat.read(path, as_version=4)
    head = next(c.source for c in nb.cells if c.cell_type == "markdown")
    title = re.search(r"^#\s+(.+)$", head, re.M).group(1).strip()
    number = path.name[:2]
    short = title.split("·", 1)[1].strip() if "·" in title else title
    minutes = re.search(r"\*\*Time:\*\*\s*(\d+)\s*minutes", head)
    prereq = re.search(r"\*\*Prerequisites:\*\*(.*?)(?:\n\s*\n|\Z)", head, re.S)
    numbers: list[str] = []
    if prereq:
        for a, b in re.findall(r"\b(\d{2})(?:\s*-\s*(\d{2}))?\b", prereq.group(1)):
            for n in range(int(a), int(b or a) + 1):
                if f"{n:02d}" not in numbers and f"{n:02d}" != number:
                    numbers.append(f"{n:02d}")
    return {"number": number, "title": title, "short": short, "minutes": int(minutes.group(1)) if minutes else None,
            "prerequisites": numbers, "path": path}


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


def site_notebook(nb):
    """The page version of a notebook: widget outputs as their still, interactive cells with a live note."""
    nb = copy.deepcopy(nb)
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        if is_interactive(cell):
            cell.outputs = [nbformat.v4.new_output("display_data", data={"text/html": LIVE_NOTE})]
            continue
        kept = []
        for out in cell.outputs:
            data = out.get("data", {})
            if WIDGET_VIEW in data:
                value = _widget_html(data.get("text/plain", ""))
                if value is None:
                    continue  # a live widget has no still without its state: drop it
                out = copy.deepcopy(out)
                out["data"] = {"text/html": value}
            kept.append(out)
        cell.outputs = kept
    return nb


# ----------------------------------------------------------------- home page
def toc_title(path: Path) -> str:
    """The sidebar's short title: '04 · The optimal checkpoint interval', '04 · the optimal checkpoint interval'."""
    info = notebook_info(path)
    short = info["short"]
    if path.parent.name == "solutions":
        short = short.replace("Exercises:", "Solutions:", 1)
    if short.lower().startswith(("exercises", "solutions")) and ":" in short:
        short = short.split(":", 1)[1].strip()
    else:
        short = short.split(":", 1)[0].strip()
    return f"{info['number']} · {short[0].upper() + short[1:]}"


def _link(path: Path, text: str) -> str:
    return f"[{text}]({path.parent.name}/{path.name})"


def home_page(root: Path = ROOT) -> str:
    infos = [notebook_info(p) for p in lessons(root)]
    by_number = {i["number"]: i for i in infos}
    ex = {p.name[:2]: p for p in exercises(root)}
    sol = {p.name[:2]: p for p in solutions(root)}
    ex_minutes = {n: notebook_info(p)["minutes"] for n, p in ex.items()}
    rows = []
    for i in infos:
        n = i["number"]
        pre = ", ".join(_link(by_number[p]["path"], p) for p in i["prerequisites"] if p in by_number) or "none"
        ex_cell = f"{_link(ex[n], 'exercises ' + n)} ({ex_minutes[n]} min)" if n in ex else "none"
        sol_cell = _link(sol[n], "solutions " + n) if n in sol else "none"
        minutes = f"{i['minutes']} min" if i["minutes"] else ""
        rows.append(f"| {n} | {_link(i['path'], toc_title(i['path']).split(' · ', 1)[1])} | {minutes} | {pre} | {ex_cell} | {sol_cell} |")
    total = sum(i["minutes"] or 0 for i in infos)
    total_ex = sum(m or 0 for m in ex_minutes.values())
    toc = lambda caption, paths: "\n".join(  # noqa: E731
        ["```{toctree}", f":caption: {caption}", ":hidden:", ":maxdepth: 1", ""]
        + [f"{toc_title(p)} <{p.parent.name}/{p.stem}>" for p in paths] + ["```"])
    return "\n".join([
        "# Restarts at scale",
        "",
        "> *A 4,096-GPU training run loses about 2 % of every day to restarts (two a day, about 15 minutes each).",
        "> Fix it, and say where the floor is.*",
        "",
        "One notebook per step, each handing its number to the next. Read the lessons in order; each ends by",
        "pointing to its exercises, whose checks name your likely mistake; open a solution after your own attempt.",
        "This site shows the executed notebooks: to run them or move a slider, open them in JupyterLab",
        "(`make lab`); the floor dashboard is also a classroom app (`make app`).",
        "",
        "## The map",
        "",
        f"Lessons: about {total / 60:.1f} hours; exercises: about {total_ex / 60:.1f} hours more. "
        "Prerequisites are the notebooks whose numbers a lesson uses.",
        "",
        "| # | lesson | time | prerequisites | exercises | solutions |",
        "|---|---|---|---|---|---|",
        *rows,
        "",
        "## Also here",
        "",
        "- [The answer sheet](ANSWER_SHEET.md): the interview answer in 2 and in 10 minutes, every number computed.",
        "- [Sources](SOURCES.md): the bibliography of every outside number the course uses.",
        "",
        toc("Lessons", lessons(root)),
        "",
        toc("Exercises", exercises(root)),
        "",
        toc("Solutions", solutions(root)),
        "",
        "```{toctree}\n:caption: Reference\n:hidden:\n\nANSWER_SHEET\nSOURCES\n```",
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
            nb = site_notebook(nbformat.read(chosen, as_version=4))
            if folder == "solutions":  # the solution notebooks share their exercises' title
                first = next(c for c in nb.cells if c.cell_type == "markdown")
                first.source = re.sub(r"^(#\s+\d{2}\s+·\s+)Exercises:", r"\1Solutions:", first.source, count=1)
            _write(src / folder / p.name, nbformat.writes(nb).encode(), wanted)
    _write(src / "index.md", home_page(root).encode(), wanted)
    _write(src / "ANSWER_SHEET.md", (root / "ANSWER_SHEET.md").read_bytes(), wanted)
    sources = root / "SOURCES.md"
    _write(src / "SOURCES.md", sources.read_bytes() if sources.is_file() else SOURCES_PLACEHOLDER.encode(), wanted)
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
