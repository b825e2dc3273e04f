"""The course's order, read from one table: notebooks/course.csv.

One row per lesson, in the order a learner takes them; a new notebook joins the course with one
line there. Each row names the lesson (its stem in notebooks/; its exercises and solutions follow
from the name), the notebooks whose numbers it uses (``prerequisites``, as data: never parsed from
the lesson's prose), whether it is on the evening track (``evening``: ``lesson``, optionally with
``; exercise 1`` or ``; exercises 1-4``) and what a teacher projects of it in the classroom
(``classroom_min``, ``classroom``).

Everything that walks the course reads it here: the website's home page, its sidebar and its
previous/next footer (scripts/build_site.py), and the ``**Next:**`` line that ends each exercise
(scripts/make_exercises.py). The path is lesson N -> its exercises -> lesson N+1 -> ... -> the
answer sheet; the solutions hang off their exercises, not off the path.

Each notebook's title and time (``**Time:** N minutes``) are read from the notebook's first cell:
they are the notebook's own words, and stated once there.
"""
from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
TABLE = Path("notebooks") / "course.csv"
ANSWER_SHEET = "ANSWER_SHEET.md"
#: Minutes the evening track gives the answer sheet: the 2-minute answer said aloud, the 10-minute one read.
ANSWER_SHEET_MIN = 15


@dataclass(frozen=True)
class Page:
    """One stop on the course's path: a lesson, an exercise notebook or the answer sheet."""

    kind: str  # "lesson", "exercises", "answer sheet"
    path: Path  # relative to the repository root
    title: str
    number: str = ""

    def markdown_link(self, base: str = "") -> str:
        """A markdown link to this page from a folder ``base`` (e.g. '../' from notebooks/)."""
        return f"[{self.title}]({base}{self.path.as_posix()})"

    @property
    def what(self) -> str:
        return {"lesson": "the next lesson", "exercises": "its exercises",
                "answer sheet": "the whole answer in 2 and in 10 minutes"}[self.kind]


@dataclass(frozen=True)
class Lesson:
    """One row of notebooks/course.csv."""

    stem: str
    prerequisites: tuple[str, ...]
    evening: str
    classroom_min: int | None
    classroom: str
    root: Path = ROOT

    @property
    def number(self) -> str:
        return self.stem[:2]

    @property
    def path(self) -> Path:
        return Path("notebooks") / f"{self.stem}.ipynb"

    @property
    def exercises(self) -> Path | None:
        """exercises/NN-slug-ex.ipynb, when the lesson has exercises (generated, or about to be, from solutions/src/)."""
        p = Path("exercises") / f"{self.stem}-ex.ipynb"
        has = (self.root / p).is_file() or (self.root / "solutions" / "src" / f"{self.stem}-sol.py").is_file()
        return p if has else None

    @property
    def solutions(self) -> Path | None:
        p = Path("solutions") / f"{self.stem}-sol.ipynb"
        return p if (self.root / p).is_file() else None

    @property
    def in_evening(self) -> bool:
        return bool(self.evening)

    @property
    def evening_exercises(self) -> tuple[int, ...]:
        """The exercises (1, 2, ...) the evening track does: ``; exercise 1`` -> (1,), ``; exercises 1-4`` -> (1, 2, 3, 4)."""
        m = re.search(r"exercises?\s+([\d\s,-]+)", self.evening)
        if not m:
            return ()
        out: list[int] = []
        for a, b in re.findall(r"(\d+)(?:\s*-\s*(\d+))?", m.group(1)):
            out += range(int(a), int(b or a) + 1)
        return tuple(out)


def lessons(root: Path = ROOT) -> list[Lesson]:
    """The rows of notebooks/course.csv, in order.

    ValueError for a row that names no notebook, a lesson named twice, a prerequisite that is not an
    earlier row, and a lesson notebook (notebooks/NN-slug.ipynb) that has no row: a new notebook joins
    the course with its row, and is never silently left off the site's path."""
    rows: list[Lesson] = []
    with open(root / TABLE, newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            stem = row["notebook"].strip()
            minutes = row.get("classroom_min", "").strip()
            lesson = Lesson(stem, tuple(row.get("prerequisites", "").split()), row.get("evening", "").strip(),
                            int(minutes) if minutes else None, row.get("classroom", "").strip(), root)
            if not (root / lesson.path).is_file():
                raise ValueError(f"{TABLE}: row {stem!r} names no notebook (no {lesson.path})")
            if any(r.stem == stem for r in rows):
                raise ValueError(f"{TABLE}: {stem!r} has two rows")
            earlier = {r.number for r in rows}
            late = [q for q in lesson.prerequisites if q not in earlier]
            if late:
                raise ValueError(f"{TABLE}: the prerequisites of {stem!r} must be earlier rows (got {late})")
            rows.append(lesson)
    listed = {r.stem for r in rows}
    missing = sorted(p.stem for p in (root / "notebooks").glob("[0-9][0-9]-*.ipynb") if p.stem not in listed)
    if missing:
        raise ValueError(f"{TABLE} must have a row for every lesson: add {missing} (notebook,prerequisites,evening,"
                         "classroom_min,classroom)")
    return rows


def notebook_info(path: Path) -> dict:
    """Number, title, short title and minutes, read from a notebook's first markdown cell."""
    nb = nbformat.read(path, as_version=4)
    head = next(c.source for c in nb.cells if c.cell_type == "markdown")
    title = re.search(r"^#\s+(.+)$", head, re.M).group(1).strip()
    short = title.split("·", 1)[1].strip() if "·" in title else title
    minutes = re.search(r"\*\*Time:\*\*\s*(\d+)\s*minutes", head)
    return {"number": path.name[:2], "title": title, "short": short,
            "minutes": int(minutes.group(1)) if minutes else None, "path": path}


def short_title(path: Path) -> str:
    """'04 · The optimal checkpoint interval' (a lesson), '04 · Exercises' (its exercises)."""
    info = notebook_info(path)
    if path.parent.name in ("exercises", "solutions"):
        return f"{info['number']} · {'Exercises' if path.parent.name == 'exercises' else 'Solutions'}"
    short = re.split(r"(?<=\?)\s|:\s", info["short"], maxsplit=1)[0].strip()  # up to the colon, or the question mark
    return f"{info['number']} · {short[0].upper() + short[1:]}"


def path(root: Path = ROOT) -> list[Page]:
    """The course's one path: lesson, its exercises, the next lesson, ..., the answer sheet."""
    out: list[Page] = []
    for lesson in lessons(root):
        out.append(Page("lesson", lesson.path, short_title(root / lesson.path), lesson.number))
        if lesson.exercises:
            out.append(Page("exercises", lesson.exercises, f"the exercises of notebook {lesson.number}", lesson.number))
    out.append(Page("answer sheet", Path(ANSWER_SHEET), "the answer sheet"))
    return out


def after_exercises(stem: str, root: Path = ROOT) -> Page:
    """The page that follows the exercises of lesson ``stem`` on the path (the next lesson, or the answer sheet)."""
    stops = path(root)
    here = next((i for i, p in enumerate(stops) if p.kind == "exercises" and p.path.stem == f"{stem}-ex"), None)
    if here is None:
        raise ValueError(f"stem must be a lesson with exercises in {TABLE} (got {stem!r})")
    return next(p for p in stops[here + 1:] if p.kind != "exercises")
