#!/usr/bin/env python3
"""Serve the course's dashboard notebook as a Voila app on localhost, code hidden (`make app`).

    .venv/bin/python scripts/app.py                    # the floor dashboard of notebook 08 (notebooks/floor-dashboard.ipynb)
    .venv/bin/python scripts/app.py --mode present     # presentation mode for a projector (make app MODE=present)
    .venv/bin/python scripts/app.py notebooks/04-optimal-interval.ipynb --port 8867

Voila runs every cell of the notebook in a fresh kernel and shows only the outputs and the
widgets (``--strip_sources=True``), so a class can move sliders without seeing code. It
listens on 127.0.0.1 only and works as root (Voila, unlike JupyterLab, needs no
``--allow-root``). tests/test_browser.py starts the app through this script, so what the
test drives is what the classroom gets.

- ``--mode present`` starts the dashboard in presentation mode (large type, the result sentence
  above the chart, both on one screen at 1024 x 768 and at 1280 x 720 zoomed to 150 %); a toggle
  on the dashboard switches modes at any time. The mode reaches the kernel as ``COURSE_APP_MODE``
  (course_lib.widgets.floor.app_mode).
- The page is Voila's lab template less its CDN links (scripts/app_share/voila/templates/course):
  the app asks no host but this one.
- Every page load starts a kernel, and a closed or reloaded page leaves it behind (Voila 0.5 keeps
  it for a reconnection that never comes): the kernel manager culls a kernel once no page is
  connected to it and it has been idle ``--cull-idle-s`` seconds (checked every ``--cull-every-s``),
  so a class that reloads the page does not pile kernels up until the server stops. A page still
  rendering is safe: its kernel is busy while Voila executes a cell, and every message it sends counts as activity.
- Voila starts through scripts/app_voila.py, which makes nbclient's wait for a cell's reply read a
  reply whose wakeup was lost (a page otherwise waits for ever and its idle kernel is culled: "Kernel died").
- The server's log lines carry their time (``[Voila 05:09:41.739] Kernel started: ...``), so a kernel's
  start, cull or death can be read against a page's own timeline.
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
#: The app's Voila template (a Jupyter data folder: voila/templates/course).
TEMPLATE_ROOT = REPO / "scripts" / "app_share"
TEMPLATE = "course"
#: Starts Voila after making a wait on a kernel channel with no timeout catch a lost wakeup (see its docstring).
LAUNCHER = REPO / "scripts" / "app_voila.py"
MODES = ("lesson", "present")
CULL_IDLE_S = 120  # a kernel no page is connected to is shut down after this many idle seconds
CULL_EVERY_S = 30  # how often the kernel manager looks


def default_notebook() -> Path:
    """The first existing notebook in DASHBOARDS (raises SystemExit if none exists yet)."""
    for rel in DASHBOARDS:
        if (REPO / rel).is_file():
            return REPO / rel
    raise SystemExit(f"no dashboard notebook yet: looked for {', '.join(DASHBOARDS)}")


def voila_command(notebook: Path, port: int, token: str | None = None, cull_idle_s: int = CULL_IDLE_S,
                  cull_every_s: int = CULL_EVERY_S) -> list[str]:
    """The voila command line serving ``notebook`` on 127.0.0.1:``port``, sources stripped, idle kernels culled."""
    if cull_idle_s < 1 or cull_every_s < 1:
        raise ValueError(f"cull_idle_s and cull_every_s must be >= 1 s (got {cull_idle_s}, {cull_every_s})")
    cmd = [
        sys.executable, str(LAUNCHER),  # Voila, with one fix to a kernel channel's wait (its docstring says why)
        "--no-browser",
        "--strip_sources=True",
        "--Voila.ip=127.0.0.1",
        f"--port={port}",
        "--Voila.port_retries=0",
        "--show_tracebacks=True",
        f"--template={TEMPLATE}",
        # the course tags its slider cells `skip-execution` so batch runs (papermill, nbclient)
        # skip them; the app is the one place they must run
        "--VoilaExecutor.skip_cells_with_tag=voila-never-skips",
        # cull kernels no page is connected to (a reload or a closed tab leaves one behind)
        f"--MappingKernelManager.cull_idle_timeout={cull_idle_s}",
        f"--MappingKernelManager.cull_interval={cull_every_s}",
        "--MappingKernelManager.cull_connected=False",
        "--MappingKernelManager.cull_busy=False",
        # every log line with its time, to the millisecond
        "--Voila.log_format=[%(name)s %(asctime)s.%(msecs)03d] %(message)s",
        "--Voila.log_datefmt=%H:%M:%S",
    ]
    if token:
        cmd.append(f"--token={token}")
    cmd.append(str(notebook))
    return cmd


def voila_env(mode: str = "lesson", base: dict | None = None) -> dict[str, str]:
    """The environment of the voila process: the course's template on JUPYTER_PATH, the mode for the kernel."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES} (got {mode!r})")
    env = dict(os.environ if base is None else base)
    env["JUPYTER_PATH"] = os.pathsep.join([str(TEMPLATE_ROOT)] + ([env["JUPYTER_PATH"]] if env.get("JUPYTER_PATH") else []))
    env["COURSE_APP_MODE"] = mode
    return env


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("notebook", nargs="?", type=Path, help="dashboard notebook (default: %s)" % DASHBOARDS[0])
    p.add_argument("--port", type=int, default=int(os.environ.get("PORT", 8866)))
    p.add_argument("--token", default=None, help="require ?token=... (default: none; loopback only)")
    p.add_argument("--mode", choices=MODES, default="lesson",
                   help="lesson (default) or present: large type for a projector (make app MODE=present)")
    p.add_argument("--cull-idle-s", type=int, default=CULL_IDLE_S, help=f"shut a kernel no page uses down after this many idle seconds ({CULL_IDLE_S})")
    p.add_argument("--cull-every-s", type=int, default=CULL_EVERY_S, help=f"how often to look for such kernels ({CULL_EVERY_S} s)")
    args = p.parse_args(argv)
    notebook = (args.notebook or default_notebook()).resolve()
    if not notebook.is_file():
        raise SystemExit(f"no such notebook: {notebook}")
    cmd = voila_command(notebook, args.port, args.token, args.cull_idle_s, args.cull_every_s)
    print(f"Serving {notebook.relative_to(REPO) if notebook.is_relative_to(REPO) else notebook} "
          f"at http://127.0.0.1:{args.port}/ in {args.mode} mode (Ctrl-C stops it)", flush=True)
    os.execvpe(cmd[0], cmd, voila_env(args.mode))  # replace this process: signals reach voila directly


if __name__ == "__main__":
    main()
