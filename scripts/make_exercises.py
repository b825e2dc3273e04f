#!/usr/bin/env python
"""Generate exercises/NN-slug-ex.ipynb from solutions/src/NN-slug-sol.py, text to text.

The jupytext percent source of a solution is the source of truth: it is read as text (the same
reader as ``scripts/nb.py``: cell ids c000, c001, ..., the course's kernelspec, no
``metadata.widgets``), each cell tagged ``solution`` is replaced by a stub that keeps its task
line (``# Task: ...``) and raises ``NotImplementedError`` with it, and the notebook is written
with no outputs. Nothing is executed, so editing an exercise needs no run of its solution.
``python scripts/make_exercises.py`` writes them; ``--check`` exits 1 when a committed exercise
differs from what the sources generate (tests/test_exercises.py runs it).
"""
from __future__ import annotations

import sys
from pathlib import Path

import nbformat

from nb import clean, read_source  # scripts/nb.py, the one reader of a percent source

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ROOT / "solutions" / "src"
EXERCISES = ROOT / "exercises"
TAG = "solution"


def task_sentence(source: str) -> str:
    for line in source.splitlines():
        stripped = line.strip()
        if stripped.lower().startswith("# task:"):
            return stripped[len("# task:"):].strip()
    raise ValueError("a cell tagged 'solution' must start with a '# Task: ...' comment line")


def stub(source: str) -> str:
    """The exercise version of a solution cell: keep the task and the ``answer = ...`` names."""
    task = task_sentence(source)
    keep = [line for line in source.splitlines() if line.strip().lower().startswith("# task:")]
    return "\n".join(keep + ["# Your code here.", f"raise NotImplementedError({task!r})"])


def exercise_path(solution: Path) -> Path:
    return EXERCISES / (solution.stem.removesuffix("-sol") + "-ex.ipynb")


def generate(solution: Path):
    """The exercise notebook of one solution source (never executed, so it has no outputs)."""
    ex = read_source(solution)
    clean(ex)
    for cell in ex.cells:
        if cell.cell_type == "code" and TAG in cell.metadata.get("tags", []):
            cell.source = stub(cell.source)
            cell.metadata["tags"] = [t for t in cell.metadata["tags"] if t != TAG] + ["exercise"]
    return ex


def solutions() -> list[Path]:
    """The solution sources, solutions/src/NN-slug-sol.py."""
    return sorted(SOURCES.glob("[0-9][0-9]-*-sol.py"))


def main(argv: list[str]) -> int:
    check = "--check" in argv
    EXERCISES.mkdir(exist_ok=True)
    stale = []
    for sol in solutions():
        text = nbformat.writes(generate(sol)) + "\n"
        dest = exercise_path(sol)
        if check:
            if not dest.exists() or dest.read_text() != text:
                stale.append(dest.name)
        else:
            dest.write_text(text)
            print("wrote", dest.relative_to(EXERCISES.parent))
    if check and stale:
        print("exercises out of date (run scripts/make_exercises.py):", ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
