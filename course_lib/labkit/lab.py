"""One lab run: its folder, its event log, every process it starts and the one place they all stop
(notebooks 07, 10, 11; shaped like ``torch.distributed.elastic.multiprocessing``'s ``PContext``).

    with Lab(run_dir, timeout_s=120) as lab:      # close() runs on success, failure and Ctrl-C alike
        agent = lab.start("agent", [sys.executable, "-m", "course_lib.faultlab.launch", ...])
        lab.wait_for("step_done", step=6)         # the state the job reported, within the deadline
        ...                                       # act on it: inject, kill a node, start a spare
        rc = lab.wait(agent)
    result = LabResult(config, lab.events(), lab.run_dir, lab.elapsed_s())

The clean-up contract: :meth:`Lab.close` SIGKILLs every process of the run (each one started here,
in a session of its own, and every descendant, found by the run's token in its environment, see
:mod:`.procs`), then runs the callbacks registered with :meth:`Lab.on_close` (a network's teardown,
a shared-memory folder's removal) in reverse order, reaps the children and closes the output files.
It is registered with ``atexit`` before anything starts. :func:`leftovers` lists what any run of this
process left behind (empty after every clean exit); the test suite checks it when the session ends.
"""
from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from .._validate import check_non_negative, check_positive
from .events import STALL_MARGIN, events_of, read_events, stall_limit_s, startups_s, wait_for
from .procs import TOKEN_VAR, LabError, die_with_parent, kill_group, listening_ports, output_tail, pids_with_token

__all__ = ["LabError", "LabResult", "Lab", "temporary_run_dir", "leftovers"]

_TOKENS: list[str] = []  # every run this process started (leftovers() looks for their processes)
_PATHS: list[Path] = []  # temporary paths the runs registered (gone once their run closed)


@dataclass
class LabResult:
    """What every lab run produced; each lab's result adds the measurements of its own job.

    config: the run's config. events: its event log (dicts, by time). run_dir: its folder (config,
    event log, every process's output). wall_s: the whole run, seconds. output: the output tails.
    pids: every process the run started (all gone when the run returned).
    """

    config: object
    events: list
    run_dir: Path
    wall_s: float
    output: str = field(repr=False, default="")
    pids: frozenset = field(repr=False, default=frozenset())

    def events_of(self, ev: str, **match) -> list:
        """The events named ``ev`` (with fields equal to ``match``)."""
        return events_of(self.events, ev, **match)


def temporary_run_dir(prefix: str = "lab") -> Path:
    """A new temporary folder for one run, removed when this Python process exits (a notebook's
    results stay readable while its kernel runs; nothing is left in the temp folder after)."""
    path = Path(tempfile.mkdtemp(prefix=f"{prefix}-"))
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


class Lab:
    """The owner of one run's processes, files and clean-up (see the module doc).

    run_dir: the run's folder (default: a new temporary one, see :func:`temporary_run_dir`).
    timeout_s: the whole run's deadline; every wait of the run is bounded by it.
    prefix: names the temporary folder and shared-memory paths.
    stall_waits_s: with a value, the run also fails as soon as it has logged nothing for longer than
        :data:`~course_lib.labkit.events.STALL_MARGIN` x its slowest agent start-up measured so far plus
        ``stall_waits_s`` (the longest silence its settings ask for; :func:`~.events.stall_limit_s`):
        a deadline measured on this machine at its present load, so ``timeout_s`` can be a generous cap.
    """

    def __init__(self, run_dir=None, *, timeout_s: float, prefix: str = "lab", stall_waits_s: float | None = None):
        self.timeout_s = check_positive("timeout_s", timeout_s)
        self.stall_waits_s = None if stall_waits_s is None else check_non_negative("stall_waits_s", stall_waits_s)
        self.prefix = prefix
        self.run_dir = temporary_run_dir(prefix) if run_dir is None else Path(run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.events_path = self.run_dir / "events.jsonl"
        self.events_path.unlink(missing_ok=True)
        self.token = f"{os.getpid()}-{uuid.uuid4().hex[:10]}"
        self.procs: dict[str, subprocess.Popen] = {}
        self.pids: set[int] = set()
        self._logs: list[Path] = []
        self._files: list = []
        self._callbacks: list = []
        self._closed = False
        self._t0 = time.monotonic()  # a duration: the wall clock can be stepped (NTP)
        self.deadline = time.monotonic() + self.timeout_s

    # ----- the run's life -----
    def __enter__(self) -> "Lab":
        _TOKENS.append(self.token)
        atexit.register(self.close)  # registered before anything starts
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def elapsed_s(self) -> float:
        return time.monotonic() - self._t0

    def remaining_s(self) -> float:
        return self.deadline - time.monotonic()

    def env(self, **extra) -> dict:
        """The environment of the run's processes: this one's, one thread each, unbuffered output, the
        run's token, and ``extra`` (a value of ``None`` removes that variable)."""
        env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1")
        env[TOKEN_VAR] = self.token
        for k, v in extra.items():
            if v is None:
                env.pop(k, None)
            else:
                env[k] = str(v)
        return env

    def start(self, name: str, cmd: list, *, env: dict | None = None, cwd=None, pipe: bool = False) -> subprocess.Popen:
        """Start ``cmd`` in a session of its own (killed if this process dies), its output in
        ``run_dir/<name>.log`` (``pipe``: on ``proc.stdout`` instead, as text)."""
        if self._closed:
            raise LabError("the lab is closed")
        env = self.env() if env is None else env
        if env.get(TOKEN_VAR) != self.token:
            raise ValueError("env must come from Lab.env() (the run's token finds its processes)")
        if pipe:
            out = subprocess.PIPE
        else:
            path = self.run_dir / f"{name}.log"
            out = open(path, "wb")
            self._files.append(out)
            self._logs.append(path)
        proc = subprocess.Popen([str(c) for c in cmd], stdout=out, stderr=subprocess.STDOUT, env=env,
                                cwd=str(cwd or self.run_dir), start_new_session=True, preexec_fn=die_with_parent,
                                text=pipe)
        self.procs[name] = proc
        self.pids.add(proc.pid)
        return proc

    def on_close(self, fn, *args) -> None:
        """Run ``fn(*args)`` when the run closes (after its processes are killed; last registered first)."""
        self._callbacks.append((fn, args))

    def temporary_path(self, name: str, root: str | os.PathLike | None = None) -> Path:
        """A path unique to this run (under ``root``, default the run folder), removed when it closes."""
        path = Path(root or self.run_dir) / f"{self.prefix}-{self.token}-{name}"
        _PATHS.append(path)
        self.on_close(shutil.rmtree, path, True)
        return path

    # ----- watching it -----
    def events(self) -> list[dict]:
        return read_events(self.events_path)

    def tail(self, chars: int = 1500) -> str:
        """The last ``chars`` characters of every output file of the run."""
        return output_tail(self._logs, chars)

    def fail(self, message: str) -> None:
        """Raise :class:`LabError` with ``message`` and the output tails."""
        raise LabError(f"{message}; output tails:\n{self.tail()}")

    def check_deadline(self, what: str = "the run", events: list | None = None) -> None:
        """:class:`LabError` past ``timeout_s``, or once the run has stalled (:meth:`check_stall`)."""
        if time.monotonic() > self.deadline:
            self.fail(f"{what} exceeded timeout_s={self.timeout_s:g} s")
        self.check_stall(events)

    def check_stall(self, events: list | None = None) -> None:
        """:class:`LabError` when the run has logged nothing for longer than its stall limit (see the
        class doc; nothing happens without ``stall_waits_s`` or before a start-up is measured)."""
        if self.stall_waits_s is None:
            return
        events = self.events() if events is None else events
        limit = stall_limit_s(events, self.stall_waits_s)
        if limit is None:
            return
        silent = time.time() - events[-1]["t"]
        if silent > limit:
            self.fail(f"the run has stalled: nothing logged for {silent:.1f} s, more than {STALL_MARGIN:g} x its "
                      f"slowest agent start-up ({max(startups_s(events)):.1f} s, measured in this run) "
                      f"+ {self.stall_waits_s:g} s of waits its settings ask for")

    def wait_for(self, ev: str | None = None, *, what: str = "", where=None, alive=None, **match) -> dict:
        """The first event named ``ev`` with fields ``match`` (see :func:`.events.wait_for`), within the deadline."""
        return wait_for(self.events_path, ev, deadline=self.deadline, where=where, tail=self.tail, alive=alive,
                        what=what, budget=f" (the run's timeout_s={self.timeout_s:g} s)", check=self.check_stall, **match)

    def wait(self, proc: subprocess.Popen, what: str = "") -> int:
        """``proc``'s exit code, within the deadline (else :class:`LabError` with the tails)."""
        try:
            return proc.wait(timeout=max(self.remaining_s(), 0.01))
        except subprocess.TimeoutExpired:
            self.fail(f"{what or 'the run'} exceeded timeout_s={self.timeout_s:g} s")

    # ----- the end -----
    def kill_all(self) -> None:
        """SIGKILL every process of the run: those started here (their groups) and every descendant."""
        for proc in self.procs.values():
            kill_group(proc.pid)
        quiet = 0
        for _ in range(20):  # a launcher may start a worker between one scan and the kill
            found = pids_with_token(self.token) - {os.getpid()}
            self.pids |= found
            quiet = 0 if found else quiet + 1
            if quiet == 2:  # two scans in a row found nothing
                break
            for pid in found:
                kill_group(pid)
            time.sleep(0.05)

    def close(self) -> None:
        """Kill every process, run the callbacks, reap, close the files (idempotent; see the module doc)."""
        if self._closed:
            return
        self._closed = True
        try:
            self.kill_all()
            for fn, args in reversed(self._callbacks):
                try:
                    fn(*args)
                except Exception:  # pragma: no cover - one failed clean-up must not stop the others
                    pass
            self.kill_all()
            for proc in self.procs.values():
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:  # pragma: no cover
                    pass
                if proc.stdout is not None:
                    proc.stdout.close()
        finally:
            for fh in self._files:
                fh.close()
            try:
                atexit.unregister(self.close)
            except Exception:  # pragma: no cover
                pass


def leftovers() -> dict[str, list]:
    """What the runs of this process left behind: live processes carrying a run's token, the ports
    they listen on, and temporary paths not removed (``{"processes": [], "ports": [], "paths": []}``
    after clean runs)."""
    procs = sorted(set().union(*(pids_with_token(t) for t in _TOKENS))) if _TOKENS else []
    return {"processes": procs, "ports": sorted(listening_ports(procs)),
            "paths": [str(p) for p in _PATHS if p.exists()]}
