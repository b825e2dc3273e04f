#!/usr/bin/env python3
"""Serve the course's dashboard notebook as a Voila app on localhost, code hidden (`make app`).

    .venv/bin/python scripts/app.py                    # the floor dashboard of notebook 08 (notebooks/floor-dashboard.ipynb)
    .venv/bin/python scripts/app.py notebooks/04-optimal-interval.ipynb --port 8867

Voila runs every cell of the notebook in a fresh kernel and shows only the outputs and the
widgets (``--strip_sources=True``), so a class can move sliders without seeing code. It
listens on 127.0.0.1 only and works as root (Voila, unlike JupyterLab, needs no
``--allow-root``). tests/test_browser.py starts the app through this script, so what the
test drives is what the classroom gets.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# The dashboard to serve when none is named: the first that exists (08's floor dashboard on its
# own, which starts in seconds; else notebook 08 whole; else 04's optimal-interval sliders).
DASHBOARDS = ("notebooks/floor-dashboard.ipynb", "notebooks/08-the-floor.ipynb", "notebooks/04-optimal-interval.ipynb")


def default_notebook() -> Path:
    """The first existing notebook in DASHBOARDS (raises SystemExit if none exists yet)."""
    for rel in DASHBOARDS:
        if (REPO / rel).is_file():
            return REPO / rel
    raise SystemExit(f"no dashboard notebook yet: looked for {', '.join(DASHBOARDS)}")


def voila_command(notebook: Path, port: int, token: str | None = None) -> list[str]:
    """The voila command line serving ``notebook`` on 127.0.0.1:``port``, sources stripped."""
    voila = Path(sys.executable).with_name("voila")
    cmd = [
        str(voila) if voila.exists() else "voila",
        "--no-browser",
        "--strip_sources=True",
        "--Voila.ip=127.0.0.1",
        f"--port={port}",
        "--Voila.port_retries=0",
        "--show_tracebacks=True",
        # the course tags its slider cells `skip-execution` so batch runs (papermill, nbclient)
        # skip them; the app is the one place they must run
        "--VoilaExecutor.skip_cells_with_tag=voila-never-skips",
    ]
    if token:
        cmd.append(f"--token={token}")
    cmd.append(str(notebook))
    return cmd


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("notebook", nargs="?", type=Path, help="dashboard notebook (default: %s)" % DASHBOARDS[0])
    p.add_argument("--port", type=int, default=int(os.environ.get("PORT", 8866)))
    p.add_argument("--token", default=None, help="require ?token=... (default: none; loopback only)")
    args = p.parse_args(argv)
    notebook = (args.notebook or default_notebook()).resolve()
    if not notebook.is_file():
        raise SystemExit(f"no such notebook: {notebook}")
    cmd = voila_command(notebook, args.port, args.token)
    print(f"Serving {notebook.relative_to(REPO) if notebook.is_relative_to(REPO) else notebook} "
          f"at http://127.0.0.1:{args.port}/ (Ctrl-C stops it)", flush=True)
    os.execvp(cmd[0], cmd)  # replace this process: signals reach voila directly


if __name__ == "__main__":
    main()
