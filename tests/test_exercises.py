"""Exercises are generated from the solution sources (text to text, nothing executed), and their stubs are real."""
from __future__ import annotations

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
    assert make_exercises.main([]) == 0
    nb = nbformat.read(out / "01-demo-ex.ipynb", as_version=4)
    assert [c.id for c in nb.cells] == ["c000", "c001", "c002"]
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
