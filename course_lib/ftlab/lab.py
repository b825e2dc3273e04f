"""``run_ftlab``: the torchft lab in one call (notebook 10; the lab test and the benchmark use it).

    from course_lib.faultlab import Failure
    from course_lib.ftlab import FtConfig, run_ftlab
    res = run_ftlab(FtConfig(groups=2, steps=40, failures=[Failure("kill", 15, rank=1)]))
    res.recoveries[0].stall_s      # survivors: failure -> their next committed step
    res.recoveries[0].rejoin_s     # the failed group: failure -> its first committed step again
    res.replicas_identical         # every group's final model and optimizer state hash the same

One lighthouse (``torchft_lighthouse``, bound to 127.0.0.1 on a free port) and one torchrun per
replica group, each in a session of its own. Clean-up is registered before anything starts and
runs whatever happens: every launcher's process group, every worker the event log names or whose
command line holds this run's config path, and the lighthouse are SIGKILLed, so no process and
no port outlives the call (the helpers are notebook 07's, :mod:`course_lib.faultlab.lab`).
"""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from .._validate import check_positive
from ..faultlab.events import read_events
from ..faultlab.lab import LabError, _kill_group, _temporary_run_dir, kill_workers
from .events import Recovery, recoveries
from .spec import FtConfig

__all__ = ["FtResult", "run_ftlab", "JOB_SCRIPT", "port_is_open"]

JOB_SCRIPT = Path(__file__).with_name("job.py")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_is_open(port: int, host: str = "127.0.0.1") -> bool:
    """True if something accepts TCP connections on ``host:port``."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.5)
        return s.connect_ex((host, port)) == 0


def _lighthouse_exe() -> str:
    exe = Path(sys.executable).with_name("torchft_lighthouse")
    return str(exe) if exe.exists() else (shutil.which("torchft_lighthouse") or "torchft_lighthouse")


@dataclass
class FtResult:
    """What one torchft lab run produced (seconds; events sorted by time).

    recoveries: one :class:`~course_lib.ftlab.events.Recovery` per injected failure that healed.
    digests: ``{group: sha256 of its final model + optimizer state}``.
    lighthouse_port: the port the lighthouse listened on (closed when the call returns).
    pids: every process the run started (all gone when the call returns).
    """

    config: FtConfig
    events: list
    recoveries: list
    digests: dict
    wall_s: float
    run_dir: Path
    lighthouse_port: int
    pids: set = field(default_factory=set)

    @property
    def replicas_identical(self) -> bool:
        """Every group finished with the same parameters and optimizer state (bit for bit)."""
        return len(self.digests) == self.config.groups and len(set(self.digests.values())) == 1

    def events_of(self, ev: str) -> list:
        return [e for e in self.events if e["ev"] == ev]

    @property
    def steps_committed(self) -> int:
        """Steps the job committed (the last committed step number)."""
        return max((e["step"] for e in self.events_of("step_done")), default=0)

    def committed_share(self, group: int) -> float:
        """Share of the job's committed steps in which ``group`` took part."""
        mine = {e["step"] for e in self.events_of("step_done") if e["rank"] == group}
        return len(mine) / max(self.steps_committed, 1)

    def attempted_share_committed(self, group: int) -> float:
        """Of the steps ``group`` attempted, the share committed (the others were aborted by a failure)."""
        done = sum(1 for e in self.events_of("step_done") if e["rank"] == group)
        aborted = sum(1 for e in self.events_of("step_aborted") if e["rank"] == group)
        return done / max(done + aborted, 1)


def run_ftlab(config: FtConfig = FtConfig(), *, timeout_s: float = 180.0,
              run_dir: str | os.PathLike | None = None) -> FtResult:
    """Run the torchft job of ``config`` (lighthouse + one torchrun per group); :class:`LabError` on failure or timeout."""
    if not isinstance(config, FtConfig):
        raise ValueError(f"config must be an FtConfig (got {type(config).__name__})")
    timeout_s = check_positive("timeout_s", timeout_s)
    run_dir = _temporary_run_dir() if run_dir is None else Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    events_path = run_dir / "events.jsonl"
    events_path.unlink(missing_ok=True)
    paths = {"events": str(events_path), "final": str(run_dir / "final-{group}.pt")}
    cfg_path = run_dir / f"ftconfig-{os.getpid()}-{time.time_ns()}.json"
    cfg_path.write_text(json.dumps({**json.loads(config.to_json()), "_paths": paths}, indent=1))
    port = _free_port()
    procs: list[subprocess.Popen] = []
    started: set[int] = set()

    def cleanup():
        for p in procs:
            _kill_group(p.pid)
        started.update(kill_workers(events_path, cfg_path))
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:  # pragma: no cover
                pass

    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1", GLOO_SOCKET_IFNAME="lo",
               TORCHFT_LIGHTHOUSE=f"http://127.0.0.1:{port}", LOGLEVEL="WARNING", RUST_LOG="warn")
    env.pop("TORCH_DISABLE_SHARE_RDZV_TCP_STORE", None)  # torchft's manager uses torchrun's store
    t0 = time.time()
    with ExitStack() as stack:
        stack.callback(cleanup)  # registered before anything starts
        lh_log = open(run_dir / "lighthouse.log", "wb")
        stack.callback(lh_log.close)
        lh = subprocess.Popen(
            [_lighthouse_exe(), "--bind", f"127.0.0.1:{port}", "--min_replicas", "1",
             "--join_timeout_ms", str(config.join_timeout_ms),
             "--heartbeat_timeout_ms", str(config.heartbeat_timeout_ms), "--quorum_tick_ms", "50"],
            stdout=lh_log, stderr=subprocess.STDOUT, env=env, start_new_session=True, cwd=run_dir)
        procs.append(lh)
        while not port_is_open(port):
            if lh.poll() is not None or time.time() - t0 > 30:
                raise LabError(f"the lighthouse did not start: {(run_dir / 'lighthouse.log').read_text()[-2000:]}")
            time.sleep(0.05)
        groups = []
        for g in range(config.groups):
            out = open(run_dir / f"torchrun-{g}.log", "wb")
            stack.callback(out.close)
            cmd = [sys.executable, "-m", "course_lib.faultlab.launch", "--standalone", "--nproc-per-node", "1",
                   "--max-restarts", str(config.max_restarts(g)), "--monitor-interval", str(config.monitor_interval_s),
                   str(JOB_SCRIPT), str(cfg_path)]
            genv = dict(env, FTLAB_GROUP=str(g), FAULTLAB_EVENTS=str(run_dir / f"agent-{g}.jsonl"))
            p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=genv, start_new_session=True, cwd=run_dir)
            procs.append(p)
            groups.append(p)
        deadline = t0 + timeout_s
        rcs = []
        for p in groups:
            try:
                rcs.append(p.wait(timeout=max(deadline - time.time(), 0.1)))
            except subprocess.TimeoutExpired:
                rcs.append(None)
        wall = time.time() - t0
        tails = "\n".join(f"--- group {g}:\n" + (run_dir / f"torchrun-{g}.log").read_text(errors="replace")[-1500:]
                          for g in range(config.groups))
        if any(rc is None for rc in rcs):
            raise LabError(f"torchft lab run exceeded timeout_s={timeout_s:g} s; output tails:\n{tails}")
        if any(rc != 0 for rc in rcs):
            raise LabError(f"a group's torchrun exited with {rcs}; output tails:\n{tails}")
    started |= {p.pid for p in procs}
    events = read_events(events_path)
    digests = {e["rank"]: e["digest"] for e in events if e["ev"] == "done"}
    return FtResult(config=config, events=events, recoveries=recoveries(events, config.groups), digests=digests,
                    wall_s=wall, run_dir=run_dir, lighthouse_port=port, pids=started)


def load_finals(result: FtResult) -> dict:
    """``{group: final state}`` (torch; the lab test compares them tensor by tensor)."""
    import torch

    return {g: torch.load(result.run_dir / f"final-{g}.pt", weights_only=True) for g in range(result.config.groups)}


__all__ += ["load_finals", "Recovery"]
