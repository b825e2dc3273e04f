#!/usr/bin/env python
"""Generate exercises/NN-slug-ex.ipynb from solutions/NN-slug-sol.ipynb (the source of truth).

Cells tagged ``solution`` are replaced by a stub that raises ``NotImplementedError`` with the
cell's task sentence (its first line, written ``# Task: ...``); every output is cleared.
``python scripts/make_exercises.py`` writes them; ``--check`` exits 1 when a committed
exercise differs from what the solutions generate (tests/test_exercises.py runs it).
"""
from __future__ import annotations

import copy
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = ROOT / "solutions"
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
    nb = nbformat.read(solution, as_version=4)
    ex = copy.deepcopy(nb)
    ex.metadata.pop("widgets", None)
    for cell in ex.cells:
        if cell.cell_type != "code":
            continue
        cell.outputs = []
        cell.execution_count = None
        if TAG in cell.metadata.get("tags", []):
            cell.source = stub(cell.source)
            cell.metadata["tags"] = [t for t in cell.metadata["tags"] if t != TAG] + ["exercise"]
    return ex


def solutions() -> list[Path]:
    return sorted(SOLUTIONS.glob("[0-9][0-9]-*-sol.ipynb"))


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
            print("wrote", dest.relative_to(ROOT))
    if check and stale:
        print("exercises out of date (run scripts/make_exercises.py):", ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
