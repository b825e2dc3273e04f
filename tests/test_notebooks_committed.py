"""Committed notebooks are executed, clean, and built from their jupytext sources."""
from __future__ import annotations

from pathlib import Path

import jupytext
import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "notebooks" / "src").glob("*.py")) + sorted((ROOT / "solutions" / "src").glob("*.py"))
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb")) + sorted((ROOT / "solutions").glob("[0-9][0-9]-*.ipynb"))


def _ipynb_for(src: Path) -> Path:
    return src.parent.parent / (src.stem + ".ipynb")


@pytest.mark.parametrize("src", SOURCES, ids=lambda p: p.name)
def test_notebook_matches_its_source(src):
    built = nbformat.read(_ipynb_for(src), as_version=4)
    source = jupytext.read(src)
    assert [c.cell_type for c in built.cells] == [c.cell_type for c in source.cells]
    for i, (b, s) in enumerate(zip(built.cells, source.cells)):
        assert b.source == s.source, f"cell {i} differs from {src.name}: rebuild with scripts/nb.py"
        assert b.metadata.get("tags", []) == s.metadata.get("tags", []), f"cell {i} tags differ"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_committed_executed_and_clean(path):
    nb = nbformat.read(path, as_version=4)
    assert "widgets" not in nb.metadata, "strip metadata.widgets (scripts/nb.py does)"
    cells = [c for c in nb.cells if c.cell_type == "code"]
    # Interactive cells (sliders) carry nbclient's `skip-execution` tag: papermill, nbclient and
    # scripts/nb.py skip them (nbclient can block on widget cells, jupyter/nbclient#312), while
    # nbval and JupyterLab still run them. Every other code cell is committed executed.
    skipped = [c for c in cells if "skip-execution" in c.metadata.get("tags", [])]
    for c in skipped:
        assert "nbval-ignore-output" in c.metadata["tags"] and ("interact(" in c.source or "dashboard(" in c.source), (
            "only interactive widget cells may skip execution")
    code = [c for c in cells if c not in skipped]
    assert code and all(c.execution_count is not None for c in code), "commit notebooks executed"
    counts = [c.execution_count for c in code]
    assert counts == list(range(1, len(code) + 1)), "executed top to bottom in one kernel"
    assert not any(o.get("output_type") == "error" for c in code for o in c.outputs)
    assert (path.parent / "src" / (path.stem + ".py")).exists(), "every notebook has a jupytext source"
    assert any("from course_lib.notebook import setup" in c.source for c in code[:2]), "setup() in the first cells"
    for c in code:
        assert not c.source.rstrip().endswith(";"), "never hide output with ';' (nbval compares it anyway)"
