"""Exercises are generated from the solution sources (text to text, nothing executed), and their stubs are real."""
from __future__ import annotations

import ast
import re
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


def test_committed_exercises_match_the_solutions(capsys):
    """`python scripts/make_exercises.py --check`, in-process: the main its `__main__` guard calls."""
    assert make_exercises.main(["--check"]) == 0, capsys.readouterr().out
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


# ---------------------------------------------------------------- the stubs, statically (nbval runs what comes before)
# An exercise is its solution with the `solution` cells stubbed: every other code cell is the solution's
# own (same id, same source, a folded Why's code behind one comment line). nbval executes the committed
# solution notebook (solutions/NN-slug-sol.ipynb), so the cells before the first stub are known to run;
# the stubs are checked by their syntax tree (nothing in them can run but `name = None` and the raise);
# one exercise is run in a kernel (the last test of this block) to show the two facts make an exercise
# stop at its first stub.
DIR_WORDS = ("solutions", "exercises", "-sol", "-ex.", "getcwd", "cwd()", "__file__")  # what would tie a cell to its folder


def _solution_notebook(solution: Path):
    """The committed, executed solution notebook nbval runs (tests/test_notebooks_committed.py: the same cells as the source)."""
    return nbformat.read(ROOT / "solutions" / (solution.stem + ".ipynb"), as_version=4)


def _code(nb) -> list:
    return [c for c in nb.cells if c.cell_type == "code"]


def _stub_parts(source: str):
    """``(task line, names set to None, raise message)`` of a stub, or an AssertionError saying what else it does."""
    tree = ast.parse(source)
    *before, last = tree.body
    assert isinstance(last, ast.Raise) and last.cause is None, "a stub ends with its raise"
    exc = last.exc
    assert (isinstance(exc, ast.Call) and isinstance(exc.func, ast.Name) and exc.func.id == "NotImplementedError"
            and not exc.keywords and len(exc.args) == 1 and isinstance(exc.args[0], ast.Constant)
            and isinstance(exc.args[0].value, str)), f"the raise is not NotImplementedError('...'): {ast.unparse(last)}"
    names: list[str] = []
    for node in before:  # only `a = b = None`: nothing that can raise, nothing that sets an answer
        assert isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and node.value.value is None, (
            f"a stub does more than set names to None before it raises: {ast.unparse(node)}")
        assert all(isinstance(t, ast.Name) for t in node.targets), ast.unparse(node)
        names += [t.id for t in node.targets]
    assert len(before) <= 1
    return source.splitlines()[0], tuple(names), exc.args[0].value


def _task(source: str) -> str:
    """The solution cell's task, read from its '# Task: ...' line (by hand here, not with make_exercises.task_sentence)."""
    lines = [line.strip() for line in source.splitlines() if line.strip().lower().startswith("# task:")]
    assert len(lines) == 1, "one task line per solution cell"
    return lines[0][len("# task:"):].strip()


@pytest.mark.parametrize("solution", SOLUTIONS, ids=lambda p: p.stem)
def test_every_stub_raises_not_implemented_with_its_task_and_sets_no_answer(solution):
    """Was: each exercise run in a kernel until its first stub raised. Now every stub, not only the first: its syntax
    tree holds the task line, at most one `names = None`, and `raise NotImplementedError('<the task>')`, so running it
    can only raise NotImplementedError, and no line of the solution's code is left in it."""
    sol = {c.id: c for c in _code(_solution_notebook(solution))}
    stubs = [c for c in _code(nbformat.read(make_exercises.exercise_path(solution), as_version=4))
             if "exercise" in c.metadata.get("tags", [])]
    assert stubs and len(stubs) == sum("solution" in c.metadata.get("tags", []) for c in sol.values())
    for cell in stubs:
        answer = sol[cell.id]
        assert "solution" in answer.metadata.get("tags", []), f"{cell.id}: a stub where the solution has no solution cell"
        first, names, message = _stub_parts(cell.source)
        assert first == answer.source.splitlines()[0] and first.lower().startswith("# task:"), "the task line is kept first"
        assert message == _task(answer.source), f"{cell.id}: the raise says {message!r}, not the task"
        code = [line.strip() for line in answer.source.splitlines() if line.strip() and not line.strip().startswith("#")]
        assert code and not any(line in cell.source.splitlines() for line in code), f"{cell.id}: the solution's code is in the stub"
        stored = {n.id for n in ast.walk(ast.parse(answer.source)) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        assert set(names) <= stored, f"{cell.id}: None for a name the solution never sets"


@pytest.mark.parametrize("solution", SOLUTIONS, ids=lambda p: p.stem)
def test_the_cells_before_the_first_stub_are_the_solution_cells_nbval_runs(solution):
    """Every code cell of the exercise that is not a stub is the solution notebook's cell of the same id, with the same
    source (a folded Why's code: one comment line above it). Before the first stub: the very cells nbval executes in the
    solution notebook, committed run in order without an error, none skipped by nbclient or expected to raise, none
    tied to its folder (the exercise runs in exercises/, the solution in solutions/), none rebinding NotImplementedError;
    so the exercise runs them as the solution does and stops at the first stub (raising, test above)."""
    ex = _code(nbformat.read(make_exercises.exercise_path(solution), as_version=4))
    sol = _code(_solution_notebook(solution))
    assert [c.id for c in ex] == [c.id for c in sol], "the same code cells, in the same order"
    for e, s in zip(ex, sol):
        if "solution" in s.metadata.get("tags", []):
            assert "exercise" in e.metadata.get("tags", []), f"{e.id}: a solution cell left in the exercise"
        elif e.metadata.get("jupyter", {}).get("source_hidden"):
            assert e.source == make_exercises.HIDDEN_FIRST_LINE + "\n" + s.source and e.source.startswith("# "), e.id
        else:
            assert e.source == s.source and "exercise" not in e.metadata.get("tags", []), f"{e.id}: differs from the solution"
    first = next(i for i, c in enumerate(ex) if "exercise" in c.metadata.get("tags", []))
    assert first >= 1, "setup() and the notebook's inputs run before the first exercise"
    assert [c.execution_count for c in sol[:first]] == list(range(1, first + 1)), "the solution ran them first, in order"
    for e, s in zip(ex[:first], sol[:first]):
        assert not any(o.get("output_type") == "error" for o in s.outputs), f"{s.id} failed in the solution"
        tags = set(e.metadata.get("tags", [])) | set(s.metadata.get("tags", []))
        assert not tags & {"skip-execution", "raises-exception", "nbval-skip", "nbval-raises-exception", "hide-input"}, tags
        assert "NBVAL_SKIP" not in e.source and "NBVAL_RAISES_EXCEPTION" not in e.source
        assert not any(w in e.source for w in DIR_WORDS), f"{e.id} depends on the notebook's folder"
        assert not any(isinstance(n, ast.Name) and n.id == "NotImplementedError" and not isinstance(n.ctx, ast.Load)
                       for n in ast.walk(ast.parse(e.source))), f"{e.id} rebinds NotImplementedError"


@pytest.mark.parametrize("solution", SOLUTIONS, ids=lambda p: p.stem)
def test_each_stub_is_followed_by_its_check_cell(solution):
    """Right after every stub comes its check: one call of this notebook's course_lib.check module (imported before the
    first stub) on exactly the names the stub set to None, so the check says "no answer yet" instead of a NameError."""
    import importlib

    nn = solution.stem[:2]
    nb = nbformat.read(make_exercises.exercise_path(solution), as_version=4)
    module = importlib.import_module(f"course_lib.check.nb{nn}")
    first = next(i for i, c in enumerate(nb.cells) if "exercise" in c.metadata.get("tags", []))
    imports = "\n".join(c.source for c in nb.cells[:first] if c.cell_type == "code")
    assert f"from course_lib.check import nb{nn}" in imports, f"nb{nn} is not imported before the first stub"
    for i, cell in enumerate(nb.cells):
        if "exercise" not in cell.metadata.get("tags", []):
            continue
        _, names, _ = _stub_parts(cell.source)
        check = nb.cells[i + 1]
        assert check.cell_type == "code" and not check.metadata.get("tags"), f"cell {i + 1} is not a plain check cell"
        (stmt,) = ast.parse(check.source).body
        call = stmt.value
        assert isinstance(stmt, ast.Expr) and isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
        assert isinstance(call.func.value, ast.Name) and call.func.value.id == f"nb{nn}", check.source
        assert callable(getattr(module, call.func.attr, None)), f"nb{nn}.{call.func.attr} does not exist"
        assert names and tuple(a.id for a in call.args if isinstance(a, ast.Name)) == names and not call.keywords, (
            f"cell {i}: the check reads {ast.unparse(call)}, the stub sets {names} to None")


EXECUTED = "01-per-gpu-failure-rate-sol"  # the cheapest kernel of the fourteen (two cells before its first stub)


def test_one_exercise_run_in_a_kernel_stops_at_its_first_stub():
    """The executed example of the static checks above: the exercise runs its cells up to the first stub and stops
    there with the stub's NotImplementedError, and not before."""
    ex_path = make_exercises.exercise_path(ROOT / "solutions" / "src" / f"{EXECUTED}.py")
    nb = nbformat.read(ex_path, as_version=4)
    first_stub = next(i for i, c in enumerate(nb.cells) if "exercise" in c.metadata.get("tags", []))
    client = NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(ex_path.parent)}})
    with pytest.raises(CellExecutionError) as info:
        client.execute()
    assert info.value.ename == "NotImplementedError"
    assert info.value.evalue == _stub_parts(nb.cells[first_stub].source)[2], "raised by the first stub, with its task"
    executed = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and c.get("execution_count")]
    assert executed and max(executed) == first_stub, "execution must stop at the first stub, not before"
    code_before = [i for i, c in enumerate(nb.cells[:first_stub]) if c.cell_type == "code"]
    assert executed == code_before + [first_stub], "every cell before the stub ran"
    assert not any(o.get("output_type") == "error" for i in code_before for o in nb.cells[i].outputs)


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
