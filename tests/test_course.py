"""The course's one ordered list (notebooks/course.csv, read by scripts/course.py).

Every walk through the course reads it: the site's sidebar, footer and home page (tracks, map,
prerequisites) and each exercise's Next line. A new lesson joins with one row, and a lesson without a
row is an error, never a page silently left off the path.
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import build_site  # noqa: E402
import course  # noqa: E402

NEW = "16-a-new-lesson"  # a lesson another branch is about to add (after the last one)


def test_every_lesson_notebook_has_one_row_in_number_order():
    rows = course.lessons()
    on_disk = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb"))
    assert [r.stem for r in rows] == on_disk
    for r in rows:
        assert all(q < r.number for q in r.prerequisites), r


def _lesson(path: Path, title: str, minutes: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(f"# {title}\n\n**Time:** {minutes} minutes. **Prerequisites:** none.")]
    nbformat.write(nb, path)


@pytest.fixture
def course_copy(tmp_path):
    """The course's table and a stand-in for each of its lessons, exercises and solutions, in a temporary root."""
    (tmp_path / "notebooks").mkdir()
    shutil.copy(ROOT / course.TABLE, tmp_path / course.TABLE)
    for r in course.lessons():
        info = course.notebook_info(ROOT / r.path)
        _lesson(tmp_path / r.path, info["title"], info["minutes"] or 10)
        if r.exercises:
            _lesson(tmp_path / r.exercises, f"{r.number} · Exercises: {info['short']}", 20)
        if r.solutions:
            _lesson(tmp_path / r.solutions, f"{r.number} · Exercises: {info['short']}", 20)
    return tmp_path


def test_a_new_lesson_joins_the_path_with_one_row(course_copy):
    last = course.lessons()[-1]
    _lesson(course_copy / "notebooks" / f"{NEW}.ipynb", "16 · A new lesson", 30)
    _lesson(course_copy / "exercises" / f"{NEW}-ex.ipynb", "16 · Exercises: a new lesson", 20)
    with pytest.raises(ValueError, match=NEW):  # the notebook alone: named as missing from the table
        course.lessons(course_copy)
    with open(course_copy / course.TABLE, "a", encoding="utf-8") as fh:
        fh.write(f"{NEW},08 13,,,\n")
    stops = [(p.kind, p.path.stem) for p in course.path(course_copy)]
    assert stops[-5:] == [("lesson", last.stem), ("exercises", f"{last.stem}-ex"), ("lesson", NEW),
                          ("exercises", f"{NEW}-ex"), ("answer sheet", "ANSWER_SHEET")]
    assert course.after_exercises(last.stem, course_copy).path.stem == NEW
    assert course.after_exercises(NEW, course_copy).kind == "answer sheet"
    home = build_site.home_page(course_copy)
    assert f"notebooks/{NEW}" in home and f"exercises/{NEW}-ex" in home  # the map and the sidebar's path
    row = next(line for line in home.splitlines() if line.startswith("| 16 |"))
    assert "(notebooks/08-" in row and "(notebooks/13-" in row, row  # its prerequisites, from the row


@pytest.mark.parametrize("line,match", [
    (f"{NEW},17,,,\n", "earlier rows"),
    ("00-the-question,,,,\n", "two rows"),
    ("17-nowhere,,,,\n", "names no notebook"),
])
def test_a_bad_row_is_rejected_by_name(course_copy, line, match):
    _lesson(course_copy / "notebooks" / f"{NEW}.ipynb", "16 · A new lesson", 30)
    with open(course_copy / course.TABLE, "a", encoding="utf-8") as fh:
        fh.write(line)
    with pytest.raises(ValueError, match=match):
        course.lessons(course_copy)
