"""Exercises are generated from the solution sources (text to text, nothing executed), and their stubs are real."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import make_exercises  # noqa: E402

SOLUTIONS = make_exercises.solutions()


def test_committed_exercises_match_the_solutions():
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "make_exercises.py"), "--check"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    committed = sorted(p.name for p in (ROOT / "exercises").glob("*-ex.ipynb"))
    assert committed == sorted(make_exercises.exercise_path(s).name for s in SOLUTIONS), "an exercise without a solution (or vice versa)"


def test_every_course_notebook_from_01_has_a_solution():
    course = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb") if not p.name.startswith("00-"))
    have = {s.stem.removesuffix("-sol") for s in SOLUTIONS}
    missing = [c for c in course if c not in have]
    assert not missing, f"notebooks without a solution notebook: {missing}"


@pytest.mark.parametrize("solution", SOLUTIONS, ids=lambda p: p.stem)
def test_solution_has_2_to_4_tagged_exercises_with_tasks(solution):
    nb = make_exercises.read_source(solution)
    tagged = [c for c in nb.cells if "solution" in c.metadata.get("tags", [])]
    assert 2 <= len(tagged) <= 4 * 3, "2 to 4 exercises (an exercise may span a few solution cells)"
    for cell in tagged:
        assert make_exercises.task_sentence(cell.source)


@pytest.mark.parametrize("solution", SOLUTIONS, ids=lambda p: p.stem)
def test_exercise_stops_at_its_first_stub(solution):
    ex_path = make_exercises.exercise_path(solution)
    nb = nbformat.read(ex_path, as_version=4)
    first_stub = next(i for i, c in enumerate(nb.cells) if "exercise" in c.metadata.get("tags", []))
    client = NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(ex_path.parent)}})
    with pytest.raises(CellExecutionError) as info:
        client.execute()
    assert info.value.ename == "NotImplementedError"
    executed = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and c.get("execution_count")]
    assert executed and max(executed) == first_stub, "execution must stop at the first stub, not before"


def test_stub_keeps_the_task_and_raises():
    src = "# Task: compute the fleet MTBF in hours.\nanswer = 24 / 2\ncheck(answer)"
    out = make_exercises.stub(src)
    assert out.startswith("# Task: compute the fleet MTBF in hours.")
    assert "answer = 24 / 2" not in out
    assert "raise NotImplementedError('compute the fleet MTBF in hours.')" in out
    with pytest.raises(ValueError, match="Task"):
        make_exercises.stub("answer = 1")


def test_an_exercise_is_generated_from_the_source_text_without_running_it(tmp_path, monkeypatch):
    src, out = tmp_path / "src", tmp_path / "exercises"
    src.mkdir()
    source = src / "01-demo-sol.py"
    source.write_text(
        '# %% [markdown]\n# # Demo\n\n'
        '# %% tags=["solution"]\n# Task: set `answer` to the fleet MTBF in hours.\nraise SystemExit("a solution cell ran")\n\n'
        '# %%\nprint(answer)\n'
    )
    monkeypatch.setattr(make_exercises, "SOURCES", src)
    monkeypatch.setattr(make_exercises, "EXERCISES", out)
    monkeypatch.setattr(make_exercises, "next_line", lambda solution: "**Next:** the demo's next stop.")  # not in notebooks/course.csv
    assert make_exercises.main([]) == 0
    nb = nbformat.read(out / "01-demo-ex.ipynb", as_version=4)
    assert [c.id for c in nb.cells] == ["c000", "c001", "c002", "next"]
    assert nb.cells[-1].source == "**Next:** the demo's next stop."
    assert nb.metadata.kernelspec.name == "python3" and "widgets" not in nb.metadata and "jupytext" not in nb.metadata
    exercise = nb.cells[1]
    assert exercise.metadata.tags == ["exercise"] and "SystemExit" not in exercise.source
    assert exercise.source.endswith("raise NotImplementedError('set `answer` to the fleet MTBF in hours.')")
    assert all(c.outputs == [] and c.execution_count is None for c in nb.cells if c.cell_type == "code")
    assert make_exercises.main(["--check"]) == 0
    source.write_text(source.read_text().replace("print(answer)", "print(round(answer, 1))"))
    assert make_exercises.main(["--check"]) == 1, "an edited source makes the committed exercise stale"


def test_stub_sets_the_checked_names_so_an_early_check_says_no_answer_yet():
    out = make_exercises.stub("# Task: compute `rate` and `ci`.\nrate = 1\nci = (0, 2)", ("rate", "ci"))
    assert "rate = ci = None" in out.splitlines()[1]
    assert make_exercises.checked_names("rate = 1\nci = (0, 2)\nx = 3", "nb01.opt_rate(rate, ci)") == ("rate", "ci")


@pytest.mark.parametrize("solution", SOLUTIONS, ids=lambda p: p.stem)
def test_why_is_folded_and_a_hint_precedes_each_stub(solution):
    nb = nbformat.read(make_exercises.exercise_path(solution), as_version=4)
    md = [c.source for c in nb.cells if c.cell_type == "markdown"]
    assert not any(s.lstrip().startswith("**Why.**") for s in md), "a Why shown open beside the task"
    assert sum(s.startswith('<details class="course-why">') for s in md) >= 2
    for i, cell in enumerate(nb.cells):
        if "exercise" in cell.metadata.get("tags", []):
            before = next(c.source for c in reversed(nb.cells[:i]) if c.cell_type == "markdown")
            assert 'class="course-hint"' in before, f"no folded hint before the stub in cell {i}"


# ---------------------------------------------------------------- the fold holds the explanation, nothing else
FOLD = re.compile(r'<details class="course-why">.*?</details>', re.S)
HINT = re.compile(r'<details class="course-hint">.*?</details>', re.S)


def _outside_folds(source: str) -> str:
    return FOLD.sub("", source)


@pytest.mark.parametrize("solution", SOLUTIONS, ids=lambda p: p.stem)
def test_every_exercise_heading_task_and_hint_is_outside_any_fold(solution):
    """Each heading, task line and hint of the source is shown in the exercise, not folded into a Why;
    the stubs and their check cells are never collapsed (only a Why's own code is)."""
    src = make_exercises.read_source(solution)
    nb = nbformat.read(make_exercises.exercise_path(solution), as_version=4)
    md = [c.source for c in nb.cells if c.cell_type == "markdown"]
    shown = "\n".join(_outside_folds(s) for s in md)
    folded = "\n".join(m for s in md for m in FOLD.findall(s))
    headings = [line for c in src.cells if c.cell_type == "markdown" for line in c.source.splitlines()
                if re.match(r"^#{1,6}\s", line)]
    assert len(headings) >= 3, "the title and at least two exercises"
    for heading in headings:
        assert heading in shown.splitlines(), f"{solution.stem}: heading {heading!r} is not shown outside a fold"
        assert heading not in folded, f"{solution.stem}: heading {heading!r} is inside a folded Why"
    tasks = [line for c in src.cells if c.cell_type == "markdown" for line in c.source.splitlines() if "**Task.**" in line]
    assert tasks, f"{solution.stem}: no **Task.** line"
    for line in tasks:
        assert line in shown and line not in folded, f"{solution.stem}: task {line[:60]!r} is folded"
    hints = [h for c in src.cells if c.cell_type == "markdown" for h in HINT.findall(c.source)]
    assert hints
    for hint in hints:
        assert hint in shown and hint not in folded, f"{solution.stem}: a hint is inside a folded Why"
    assert "**Next:**" not in folded
    for i, cell in enumerate(nb.cells):
        if "exercise" in cell.metadata.get("tags", []):
            check = nb.cells[i + 1]
            for c in (cell, check):
                assert not c.metadata.get("jupyter", {}).get("source_hidden"), f"{solution.stem}: cell {i} collapsed"
                assert "hide-input" not in c.metadata.get("tags", [])


@pytest.mark.parametrize("solution", SOLUTIONS, ids=lambda p: p.stem)
def test_collapsed_code_gives_nothing_away_in_its_preview(solution):
    """JupyterLab's collapsed cell shows its first line: that line is a comment, never the Why's computation."""
    nb = nbformat.read(make_exercises.exercise_path(solution), as_version=4)
    for cell in nb.cells:
        if cell.metadata.get("jupyter", {}).get("source_hidden"):
            assert cell.source.splitlines()[0] == make_exercises.HIDDEN_FIRST_LINE


def test_split_why_stops_at_the_next_heading_or_next_line():
    why, rest = make_exercises.split_why("**Why.** Because.\nStill why.\n\n## Exercise 2 · More\n\n**Task.** Do it.")
    assert why == "**Why.** Because.\nStill why." and rest == "## Exercise 2 · More\n\n**Task.** Do it."
    assert make_exercises.split_why("**Why.** Only this.\n") == ("**Why.** Only this.", "")
    why, rest = make_exercises.split_why("**Why.** A.\n\n**Next:** [x](y)")
    assert why == "**Why.** A." and rest == "**Next:** [x](y)"


def test_each_exercise_ends_pointing_to_the_next_stop_on_the_course_path():
    """Lesson N -> its exercises -> lesson N+1: every exercise's one Next line is the stop after it (notebooks/course.csv)."""
    import course

    stops = course.path()
    for i, stop in enumerate(stops):
        if stop.kind != "exercises":
            continue
        nb = nbformat.read(ROOT / stop.path, as_version=4)
        nexts = [c.source for c in nb.cells if c.cell_type == "markdown" and "**Next:**" in c.source]
        assert nexts == [nb.cells[-1].source], f"{stop.path}: one Next line, in the last cell"
        target = stops[i + 1]
        assert target.kind in ("lesson", "answer sheet")
        assert f"](../{target.path.as_posix()})" in nexts[0], f"{stop.path}: Next is {nexts[0]!r}, not {target.path}"
        assert "last exercise" not in nexts[0]
