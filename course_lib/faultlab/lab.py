"""``run_lab``: one call that runs the training job under torchrun, injects failures and
measures every restart from the event log (notebook 07; the reliability tests use it too).

    from course_lib.faultlab import Failure, LabConfig, run_lab
    ref = run_lab(LabConfig(steps=24))                          # never fails
    res = run_lab(ref.config.replace(failures=[Failure("kill", 7), Failure("hang", 14, rank=0)],
                                     collective_timeout_s=2.0, snapshot="memory"))
    res.restarts[0].stages_s()      # {'detect': ..., 'reschedule': ..., 'reload': ..., 'rewind': ...}
    res.stages()                    # the same as course_lib.restart.RestartStages (minutes)
    same_final_state(ref, res)      # bit-identical parameters, optimizer and RNG state?

torchrun runs as a subprocess in its own session (process group); every wait is bounded by
``timeout_s`` and, whatever happens, the launcher's group and every worker the event log
names are SIGKILLed on the way out, and the shared-memory snapshot folder is removed.
"""
from __future__ import annotations

import atexit
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from .._validate import check_positive
from .events import read_events, restart_stages, to_restart_stages
from .spec import LabConfig

__all__ = ["LabResult", "LabError", "run_lab", "load_final", "same_final_state", "JOB_SCRIPT"]

JOB_SCRIPT = Path(__file__).with_name("job.py")
SHM_ROOT = Path("/dev/shm")


class LabError(RuntimeError):
    """The lab run failed or timed out (the message holds the tail of torchrun's output)."""


@dataclass
class LabResult:
    """What one lab run produced.

    config: the :class:`LabConfig` it ran. events: the event log (dicts, sorted by time).
    restarts: one :class:`MeasuredRestart` per injected failure (seconds).
    final_digest: sha256 of the final parameters, optimizer state and every rank's RNG state
    (rank 0's ``done``).
    final_path: the final state file (safe-writer format; :func:`load_final`).
    applied: optimizer steps applied to the final state. wall_s: the whole run, seconds.
    run_dir: the folder with the config, the event log, torchrun's output and checkpoints.
    """

    config: LabConfig
    events: list
    restarts: list
    final_digest: str
    final_path: Path
    applied: int
    wall_s: float
    run_dir: Path
    returncode: int
    output: str = field(repr=False, default="")

    def stages(self):
        """The restarts as ``course_lib.restart.RestartStages`` (minutes), one per failure."""
        return [to_restart_stages(r) for r in self.restarts]

    def events_of(self, ev: str) -> list:
        return [e for e in self.events if e["ev"] == ev]


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _worker_pids(events_path: Path) -> set[int]:
    try:
        return {e["pid"] for e in read_events(events_path) if e["ev"] == "worker_start"}
    except FileNotFoundError:
        return set()


def _pids_with_arg(cfg_path: Path) -> set[int]:
    found = set()
    needle = str(cfg_path).encode()
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                if needle in (p / "cmdline").read_bytes():
                    found.add(int(p.name))
            except OSError:
                continue
    return found


def _is_our_worker(pid: int, cfg_path: Path) -> bool:
    try:
        return str(cfg_path).encode() in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def kill_workers(events_path: Path, cfg_path: Path) -> set[int]:
    """Kill this run's workers; return every pid considered (the labs' shared clean-up step).

    Workers run in sessions of their own (torchrun starts them so): kill each one the log names,
    and any process whose command line holds this run's unique config path (a worker killed
    before it could log).
    """
    pids = _worker_pids(events_path) | _pids_with_arg(cfg_path)
    for pid in pids:
        if _is_our_worker(pid, cfg_path):
            _kill_group(pid)
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
    return pids


def _temporary_run_dir() -> Path:
    """A new temporary folder for one run, removed when this Python process exits (a notebook's
    results stay readable while its kernel runs; nothing is left in the temp folder after)."""
    path = Path(tempfile.mkdtemp(prefix="faultlab-"))
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


def run_lab(
    config: LabConfig = LabConfig(),
    *,
    timeout_s: float = 180.0,
    run_dir: str | os.PathLike | None = None,
) -> LabResult:
    """Run the job of ``config`` under torchrun with its failures and levers; return a :class:`LabResult`.

    ``config`` is a :class:`LabConfig` (what the run does: its fields are described in
    :mod:`course_lib.faultlab.spec`; ``config.replace(...)`` makes a variant). ``timeout_s``
    bounds the whole run (:class:`LabError` when exceeded); ``run_dir`` is where the run's
    files go (config, event log, torchrun's output, checkpoints, final state); by default a new
    temporary folder, removed when the Python process exits. Raises :class:`LabError` when
    torchrun exits non-zero.
    """
    if not isinstance(config, LabConfig):
        raise ValueError(f"config must be a LabConfig (got {type(config).__name__}); build one with LabConfig(steps=..., ...)")
    cfg = config
    timeout_s = check_positive("timeout_s", timeout_s)
    run_dir = _temporary_run_dir() if run_dir is None else Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    run_id = uuid.uuid4().hex[:12]
    shm_dir = (SHM_ROOT if SHM_ROOT.is_dir() else run_dir) / f"faultlab-{run_id}"
    events_path = run_dir / "events.jsonl"
    events_path.unlink(missing_ok=True)
    final_path = run_dir / "final.pt"
    final_path.unlink(missing_ok=True)
    disk_dir = run_dir / "ckpt"
    if disk_dir.exists():
        shutil.rmtree(disk_dir)
    paths = {"events": str(events_path), "disk": str(disk_dir), "shm": str(shm_dir), "final": str(final_path)}
    cfg_path = run_dir / "config.json"
    import json

    d = json.loads(cfg.to_json())
    d["_paths"] = paths
    cfg_path.write_text(json.dumps(d, sort_keys=True, indent=1))

    cmd = [
        sys.executable, "-m", "course_lib.faultlab.launch",
        "--standalone",
        "--nproc-per-node", str(cfg.nproc),
        "--max-restarts", str(cfg.max_restarts),
        "--max-no-progress-restarts", str(cfg.max_no_progress_restarts),
        "--monitor-interval", str(cfg.monitor_interval_s),
        str(JOB_SCRIPT), str(cfg_path),
    ]  # fmt: skip
    env = dict(os.environ, FAULTLAB_EVENTS=str(events_path), OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1")
    # Each generation of workers gets a fresh TCPStore: with the store shared with torchrun's
    # rendezvous (the default since PyTorch 2.4), a restarted generation can read the
    # previous generation's connection keys and fail to connect (pytorch/pytorch#135712).
    env["TORCH_DISABLE_SHARE_RDZV_TCP_STORE"] = "1"
    env.setdefault("LOGLEVEL", "WARNING")
    out_path = run_dir / "torchrun.log"
    t0 = time.time()
    proc = None
    try:
        with open(out_path, "wb") as out:
            proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True, cwd=run_dir)
            try:
                rc = proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                rc = None
        wall = time.time() - t0
        output = out_path.read_text(errors="replace")
        if rc is None:
            raise LabError(f"lab run exceeded timeout_s={timeout_s:g} s; torchrun output tail:\n{output[-3000:]}")
        if rc != 0:
            gave_up = [e for e in read_events(events_path) if e["ev"] == "gave_up"] if events_path.exists() else []
            if gave_up:  # the restart-loop guard stopped the job: its message says where and why
                raise LabError(f"{gave_up[0]['message']}\n(torchrun exited with {rc})")
            raise LabError(f"torchrun exited with {rc}; output tail:\n{output[-3000:]}")
    finally:
        if proc is not None:
            _kill_group(proc.pid)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:  # pragma: no cover
                pass
        kill_workers(events_path, cfg_path)
        shutil.rmtree(shm_dir, ignore_errors=True)
    events = read_events(events_path)
    done = [e for e in events if e["ev"] == "done" and e["rank"] == 0]
    if not done:
        raise LabError(f"the job finished without a 'done' event; output tail:\n{output[-3000:]}")
    return LabResult(
        config=cfg,
        events=events,
        restarts=restart_stages(events),
        final_digest=done[-1]["digest"],
        final_path=final_path,
        applied=done[-1]["applied"],
        wall_s=wall,
        run_dir=run_dir,
        returncode=rc,
        output=output,
    )


def load_final(result: LabResult) -> dict:
    """The final state of a run (``model``, ``optim``, ``rng``: one RNG state per rank, ``step``,
    ``applied``), verified by its checksum."""
    from ..checkpoint.safe import load_checkpoint

    return load_checkpoint(result.final_path)


def same_final_state(a: LabResult, b: LabResult) -> dict:
    """Compare two runs' final states tensor by tensor (``torch.equal``, so bit for bit).

    Returns ``{"params": bool, "optimizer": bool, "rng": bool, "applied": (a, b), "digest": bool}``;
    ``rng`` compares the RNG state of every rank (the dropout streams a resumed run must continue).
    """
    import torch

    sa, sb = load_final(a), load_final(b)

    def tensors(obj, prefix=""):
        if isinstance(obj, torch.Tensor):
            yield prefix, obj
        elif isinstance(obj, dict):
            for k in sorted(obj, key=str):
                yield from tensors(obj[k], f"{prefix}/{k}")
        elif isinstance(obj, (list, tuple)):
            for i, v in enumerate(obj):
                yield from tensors(v, f"{prefix}[{i}]")

    def equal(x, y):
        tx, ty = list(tensors(x)), list(tensors(y))
        return len(tx) == len(ty) and all(
            na == nb and ta.dtype == tb.dtype and ta.shape == tb.shape and torch.equal(ta, tb)
            for (na, ta), (nb, tb) in zip(tx, ty)
        )

    return {
        "params": equal(sa["model"], sb["model"]),
        "optimizer": equal(sa["optim"], sb["optim"]) and sa["optim"]["param_groups"] == sb["optim"]["param_groups"],
        "rng": len(sa["rng"]) == a.config.nproc and equal(sa["rng"], sb["rng"]),
        "applied": (sa["applied"], sb["applied"]),
        "digest": a.final_digest == b.final_digest,
    }
