#!/usr/bin/env python
"""Generate exercises/NN-slug-ex.ipynb from solutions/src/NN-slug-sol.py, text to text.

The jupytext percent source of a solution is the source of truth: it is read as text (the same
reader as ``scripts/nb.py``: cell ids c000, c001, ..., the course's kernelspec, no
``metadata.widgets``) and the notebook is written with no outputs. Nothing is executed, so
editing an exercise needs no run of its solution. Cells tagged ``solution`` are replaced by a
stub that raises ``NotImplementedError`` with the cell's task sentence (its first line, written
``# Task: ...``); the stub first sets the names the check cell below it reads to ``None``, so a
check run before the exercise is done says "no answer yet" instead of raising a ``NameError``
(or grading an earlier exercise's ``answer``). Each ``**Why.**`` explanation is folded (an HTML
``<details>``, with the code cells that follow it collapsed), so it does not give the answer
away beside the task: the learner opens it once the check says *Correct*, or on purpose. Only the
explanation is folded: a source cell that goes on after it (the next exercise's heading, task and
hint, or the Next line) is split there, and what follows stays outside the fold, as do the cells
after it. A collapsed code cell starts with a comment line, since JupyterLab's collapsed preview
shows a cell's first line. The exercise ends with its place on the course's path (``**Next:**``,
the next lesson in notebooks/course.csv), generated here from that one ordered list, never
copied from the source.
``python scripts/make_exercises.py`` writes them; ``--check`` exits 1 when a committed exercise
differs from what the sources generate (tests/test_exercises.py runs it).
"""
from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import nbformat

import course  # scripts/course.py, the course's order (notebooks/course.csv)
from nb import clean, read_source  # scripts/nb.py, the one reader of a percent source

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ROOT / "solutions" / "src"
EXERCISES = ROOT / "exercises"
TAG = "solution"
WHY = "**Why.**"
WHY_SUMMARY = "Why (open it once the check above says Correct, or when you want the reasoning)"
HIDDEN_FIRST_LINE = "# The Why's own code (collapsed with it): run it once your answer is correct."
NEXT = "**Next:**"


def task_sentence(source: str) -> str:
    for line in source.splitlines():
        stripped = line.strip()
        if stripped.lower().startswith("# task:"):
            return stripped[len("# task:"):].strip()
    raise ValueError("a cell tagged 'solution' must start with a '# Task: ...' comment line")


def stub(source: str, names: tuple[str, ...] = ()) -> str:
    """The exercise version of a solution cell: keep the task, set the checked ``names`` to None, raise."""
    task = task_sentence(source)
    keep = [line for line in source.splitlines() if line.strip().lower().startswith("# task:")]
    placeholder = [f"{' = '.join(names)} = None  # your code below sets {', '.join(f'`{n}`' for n in names)}"] if names else []
    return "\n".join(keep + placeholder + ["# Your code here.", f"raise NotImplementedError({task!r})"])


def checked_names(solution_source: str, check_source: str) -> tuple[str, ...]:
    """Names the check cell reads that the solution cell assigns, in the check's order."""
    try:
        assigned = {t.id for node in ast.walk(ast.parse(solution_source)) if isinstance(node, (ast.Assign, ast.AnnAssign))
                    for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
                    for t in ast.walk(target) if isinstance(t, ast.Name)}
        read = [n.id for n in ast.walk(ast.parse(check_source)) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
    except SyntaxError:
        return ()
    return tuple(dict.fromkeys(n for n in read if n in assigned))


def fold_why(source: str) -> str:
    """A ``**Why.**`` explanation as a folded ``<details>`` (JupyterLab and the website both fold it)."""
    return f'<details class="course-why"><summary>{WHY_SUMMARY}</summary>\n\n{source.strip()}\n\n</details>'


def split_why(source: str) -> tuple[str, str]:
    """``(explanation, rest)`` of a markdown cell that starts with ``**Why.**``.

    The explanation ends where the cell goes on to something else: a heading (the next exercise)
    or a ``**Next:**`` line; ``rest`` is that part ('' when the cell is the explanation alone)."""
    lines = source.splitlines()
    for i, line in enumerate(lines[1:], start=1):
        if re.match(r"^#{1,6}\s", line) or line.startswith(NEXT):
            return "\n".join(lines[:i]).strip(), "\n".join(lines[i:]).strip()
    return source.strip(), ""


def hidden_code(source: str) -> str:
    """A collapsed code cell's source: a first line that gives nothing away (Lab's collapsed preview shows it)."""
    return f"{HIDDEN_FIRST_LINE}\n{source}"


def exercise_path(solution: Path) -> Path:
    return EXERCISES / (solution.stem.removesuffix("-sol") + "-ex.ipynb")


def generate(solution: Path):
    """The exercise notebook of one solution source (never executed, so it has no outputs)."""
    ex = read_source(solution)
    clean(ex)
    cells = []
    in_why = False  # True while the cells after a Why are its own code (a Why that ends its cell)
    for cell in ex.cells:
        cells.append(cell)
        if cell.cell_type == "markdown":
            in_why = False
            if cell.source.lstrip().startswith(WHY):
                why, rest = split_why(cell.source.lstrip())
                cell.source = fold_why(why)
                if rest:  # the next exercise (or the Next line) is not part of the explanation
                    cells.append(nbformat.v4.new_markdown_cell(rest, id=f"{cell.id}-after-why"))
                else:
                    in_why = True
            continue
        if cell.cell_type != "code":
            continue
        if TAG in cell.metadata.get("tags", []):
            i = ex.cells.index(cell)
            after = next((c for c in ex.cells[i + 1:] if c.cell_type == "code"), None)
            names = checked_names(cell.source, after.source) if after is not None else ()
            cell.source = stub(cell.source, names)
            cell.metadata["tags"] = [t for t in cell.metadata["tags"] if t != TAG] + ["exercise"]
        elif in_why:  # the code of an explanation: collapsed in JupyterLab, behind a toggle on the website
            cell.source = hidden_code(cell.source)
            cell.metadata["jupyter"] = {"source_hidden": True}
            cell.metadata["tags"] = list(cell.metadata.get("tags", [])) + ["hide-input"]
    ex.cells = cells
    _set_next(ex, solution)
    return ex


def next_line(solution: Path) -> str:
    """The exercise's ``**Next:**`` line: the lesson after its own on the course's path (notebooks/course.csv)."""
    nxt = course.after_exercises(solution.stem.removesuffix("-sol"))
    return f"{NEXT} {nxt.markdown_link('../')}, {nxt.what}."


def _set_next(ex, solution: Path) -> None:
    """Drop any ``**Next:**`` line of the source and end the exercise with the generated one."""
    for cell in ex.cells:
        if cell.cell_type == "markdown" and NEXT in cell.source:
            paragraphs = re.split(r"\n\s*\n", cell.source)
            cell.source = "\n\n".join(p for p in paragraphs if not p.lstrip().startswith(NEXT)).strip()
    ex.cells = [c for c in ex.cells if c.cell_type != "markdown" or c.source.strip()]
    ex.cells.append(nbformat.v4.new_markdown_cell(next_line(solution), id="next"))


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
