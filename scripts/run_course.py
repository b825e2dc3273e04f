#!/usr/bin/env python
"""make course: run every notebook in order with papermill, build the website, print the answer table.

    make course PARAMS="n_gpus=16384 rate_per_gpu_day=8.1e-4"
    python scripts/run_course.py --param n_gpus=16384 --param rate_per_gpu_day=8.1e-4

Notebooks run from notebooks/ (and solutions/) into build/notebooks/; the course website is
built from those executed notebooks (no second execution) into build/site/ (open
build/site/index.html; scripts/build_site.py).
Each ``KEY=VALUE`` (the Makefile passes every word of ``PARAMS`` as one ``--param``) is injected
into every notebook whose parameters cell declares KEY (values parsed as YAML, so
``n_gpus=16384`` is an int); KEY must be a name of the Scenario's vocabulary
(:data:`course_lib.scenario.PARAMETERS`). A failing notebook stops the run with the notebook's
name, the failing cell and the error.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import nbformat
import papermill
import yaml
from papermill.exceptions import PapermillExecutionError
from tqdm import tqdm

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # noqa: E402  (course_lib is installed; this keeps the script runnable from a checkout)

sys.path.insert(0, str(ROOT / "scripts"))
import build_site  # noqa: E402

from course_lib import ledger  # noqa: E402
from course_lib.scenario import PARAMETERS, Scenario  # noqa: E402

CELL_TIMEOUT_S = 600  # no course cell comes near this; a hung kernel fails the run instead of stalling it


def parse_params(items: list[str]) -> dict:
    params = {}
    for item in items:
        if "=" not in item:
            raise SystemExit(f"--param expects KEY=VALUE (got {item!r})")
        key, value = item.split("=", 1)
        parsed = yaml.safe_load(value)
        if isinstance(parsed, str):  # YAML 1.1 reads 8e-4 (no dot) as text: a number is meant
            try:
                parsed = float(parsed)
            except ValueError:
                pass
        params[key.strip()] = parsed
    return params


def course_notebooks(include_solutions: bool = True, root: Path = ROOT) -> list[Path]:
    books = sorted((root / "notebooks").glob("[0-9][0-9]-*.ipynb"))
    if include_solutions:
        books += sorted((root / "solutions").glob("[0-9][0-9]-*-sol.ipynb"))
    return books


def failing_cell(nb_path: Path) -> tuple[int, str]:
    """1-based number (in the source notebook) and first line of the cell that raised.

    Papermill's own cells (the error banner, injected parameters) are not counted, so the
    number is the one a learner sees in the notebook they opened.
    """
    nb = nbformat.read(nb_path, as_version=4)
    own = [c for c in nb.cells if not {"papermill-error-cell-tag", "injected-parameters"} & set(c.metadata.get("tags", []))]
    for i, cell in enumerate(own, start=1):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                first = cell.source.strip().splitlines()[0] if cell.source.strip() else ""
                return i, first
    return -1, ""


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--param", action="append", default=[], help="KEY=VALUE injected where declared (make: PARAMS=\"K=V K=V\")")
    ap.add_argument("--out", default=str(ROOT / "build"), help="output folder (default build/)")
    ap.add_argument("--no-solutions", action="store_true", help="skip the solution notebooks")
    ap.add_argument("--only", default=None, help="run only notebooks whose name starts with this prefix")
    ap.add_argument("--root", default=str(ROOT), help="folder holding notebooks/ and solutions/ (default: the repository)")
    ap.add_argument("--no-site", action="store_true", help="do not build the website (build/site/)")
    return ap


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    params = parse_params(args.param)
    unknown = sorted(set(params) - set(PARAMETERS))
    if unknown:
        print(f"--param: the scenario has no input {unknown}; its inputs are {sorted(PARAMETERS)}", file=sys.stderr)
        return 2
    try:  # the one Scenario of this run: a bad value fails here, naming the input, before any notebook runs
        scenario = Scenario.from_params(**{k: v for k, v in params.items() if k in PARAMETERS})
    except ValueError as exc:
        print(f"--param: {exc}", file=sys.stderr)
        return 2

    out = Path(args.out)
    (out / "notebooks").mkdir(parents=True, exist_ok=True)
    ledger_path = out / "ledger.json"
    ledger_path.unlink(missing_ok=True)
    os.environ[ledger.ENV_VAR] = str(ledger_path)

    books = course_notebooks(not args.no_solutions, Path(args.root))
    if args.only:
        books = [b for b in books if b.name.startswith(args.only)]
    undeclared = set(params)
    bar = tqdm(books, desc="course", unit="notebook")
    for src in bar:
        bar.set_postfix_str(src.stem)
        declared = papermill.inspect_notebook(str(src))
        injected = {k: v for k, v in params.items() if k in declared}
        undeclared -= set(injected)
        dest = out / "notebooks" / src.name
        try:
            papermill.execute_notebook(
                str(src), str(dest), parameters=injected, cwd=str(src.parent),
                kernel_name="python3", progress_bar=False, log_output=False,
                execution_timeout=CELL_TIMEOUT_S, start_timeout=120,
            )
        except PapermillExecutionError as exc:
            bar.close()
            index, first = failing_cell(dest)
            print(f"\nFAILED: {src.parent.name}/{src.name}, cell {index} ({first!r})", file=sys.stderr)
            print(f"  {exc.ename}: {exc.evalue}", file=sys.stderr)
            print(f"  the executed notebook with the traceback: {dest}", file=sys.stderr)
            return 1
    bar.close()

    print(f"\nexecuted notebooks: {out / 'notebooks'}")
    if not args.no_site and Path(args.root).resolve() == ROOT:
        print(f"website: {build_site.build(out / 'site', executed=out / 'notebooks')} (open it in a browser; it works offline)")
    if params:
        print("parameters:", ", ".join(f"{k}={v}" for k, v in params.items()))
    if undeclared:
        print(f"warning: no notebook declares {sorted(undeclared)}", file=sys.stderr)
    print(f"\nThe course's answer for {scenario.n_gpus:,} GPUs at {scenario.rate_per_gpu_day:.3e} failures per GPU-day\n")
    items = ledger.entries(ledger_path)
    print(ledger.table(items))
    bad = ledger.disagreements(items)
    if bad:
        print(f"\nFAILED: notebooks disagree on {sorted(bad)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
