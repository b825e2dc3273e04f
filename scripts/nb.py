#!/usr/bin/env python
"""Maintainer tool: build a notebook from its jupytext source, execute it, and store it clean.

    python scripts/nb.py notebooks/src/02-fleet-mtbf.py      # -> notebooks/02-fleet-mtbf.ipynb
    python scripts/nb.py solutions/src/02-fleet-mtbf-sol.py  # -> solutions/02-fleet-mtbf-sol.ipynb
    python scripts/nb.py --markdown-only notebooks/src/*.py  # only text changed: no execution, outputs kept

The source (percent format, cell tags as ``# %% tags=["parameters"]``) is the diffable
text a maintainer edits; the committed .ipynb is that source executed in order, with
``metadata.widgets`` stripped (GitHub refuses to render stale widget state) and a stable
kernelspec. tests/test_notebooks_committed.py checks that the two agree cell by cell.
"""
from __future__ import annotations

import sys
from pathlib import Path

import jupytext
import nbformat
from nbclient import NotebookClient

KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}


def target_for(src: Path) -> Path:
    return src.parent.parent / (src.stem + ".ipynb")


def clean(nb) -> None:
    nb.metadata.pop("widgets", None)
    nb.metadata.pop("jupytext", None)
    nb.metadata["kernelspec"] = KERNELSPEC
    nb.metadata["language_info"] = {"name": "python"}
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        if cell.cell_type == "code":
            for out in cell.outputs:
                out.get("metadata", {}).pop("execution", None)


def read_source(src: Path):
    """The notebook a percent source describes, not executed: stable cell ids (c000, c001, ...) and the course's kernelspec."""
    nb = jupytext.read(src)
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"c{i:03d}"
    nb.metadata["kernelspec"] = KERNELSPEC
    return nb


def build(src: Path, execute: bool = True, timeout: int = 600) -> Path:
    nb = read_source(src)
    dest = target_for(src)
    if execute:
        NotebookClient(nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(dest.parent)}}).execute()
    clean(nb)
    nbformat.write(nb, dest)
    return dest


def update_markdown(src: Path) -> Path:
    """Copy the markdown cells of ``src`` into its committed notebook, keeping every output.

    For an edit of the text only: it refuses (ValueError) when a code cell, a tag or the cell
    layout differs from the committed notebook, since then the outputs would be stale.
    """
    nb = jupytext.read(src)
    dest = target_for(src)
    built = nbformat.read(dest, as_version=4)
    if [c.cell_type for c in nb.cells] != [c.cell_type for c in built.cells]:
        raise ValueError(f"{src}: cells added, removed or changed type: rebuild with execution")
    for i, (s, b) in enumerate(zip(nb.cells, built.cells)):
        if s.metadata.get("tags", []) != b.metadata.get("tags", []):
            raise ValueError(f"{src}: cell {i} tags changed: rebuild with execution")
        if s.cell_type == "code" and s.source != b.source:
            raise ValueError(f"{src}: code cell {i} changed: rebuild with execution")
        if s.cell_type == "markdown":
            b.source = s.source
    nbformat.write(built, dest)
    return dest


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if not args:
        raise SystemExit(__doc__)
    for a in args:
        if "--markdown-only" in sys.argv:
            print("updated the text of", update_markdown(Path(a)))
        else:
            print("built", build(Path(a), execute="--no-execute" not in sys.argv))
