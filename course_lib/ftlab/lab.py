"""``run_ftlab``: the torchft lab in one call (notebook 10; the lab test and the benchmark use it).

    from course_lib.faultlab import Failure
    from course_lib.ftlab import FtConfig, run_ftlab
    res = run_ftlab(FtConfig(groups=2, steps=40, failures=[Failure("kill", 15, rank=1)]))
    res.recoveries[0].stall_s      # survivors: failure -> their next committed step
    res.recoveries[0].rejoin_s     # the failed group: failure -> its first committed step again
    res.replicas_identical         # every group's final model and optimizer state hash the same

One lighthouse (torchft's, bound to 127.0.0.1 on the port the kernel gives it: :mod:`.lighthouse`) and one torchrun per
replica group, each in a session of its own, under the lab kit's :class:`~course_lib.labkit.Lab`:
clean-up is registered before anything starts and runs whatever happens, so no process and no
port outlives the call.
"""
from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ..labkit import Lab, LabResult, port_is_open
from .events import Recovery, recoveries
from .spec import FtConfig

__all__ = ["FtResult", "run_ftlab", "JOB_SCRIPT", "port_is_open"]

JOB_SCRIPT = Path(__file__).with_name("job.py")


@dataclass
class FtResult(LabResult):
    """A torchft lab run: the kit's :class:`~course_lib.labkit.LabResult` plus (seconds; events by time)

    recoveries: one :class:`~course_lib.ftlab.events.Recovery` per injected failure that healed.
    digests: ``{group: sha256 of its final model + optimizer state}``.
    lighthouse_port: the port the lighthouse listened on (closed when the call returns).
    """

    recoveries: list = field(default_factory=list)
    digests: dict = field(default_factory=dict)
    lighthouse_port: int = 0

    @property
    def replicas_identical(self) -> bool:
        """Every group finished with the same parameters and optimizer state (bit for bit)."""
        return len(self.digests) == self.config.groups and len(set(self.digests.values())) == 1

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
    with Lab(run_dir, timeout_s=timeout_s, prefix="ftlab") as lab:
        paths = {"events": str(lab.events_path), "final": str(lab.run_dir / "final-{group}.pt")}
        cfg_path = lab.run_dir / "ftconfig.json"
        cfg_path.write_text(json.dumps({**json.loads(config.to_json()), "_paths": paths}, indent=1))
        # the lighthouse binds 127.0.0.1:0 and logs the port the kernel gave it (no port chosen before the bind)
        lh_cmd = [sys.executable, "-m", "course_lib.ftlab.lighthouse", lab.events_path, 1, config.join_timeout_ms,
                  config.heartbeat_timeout_ms, 50]
        lab.start("lighthouse", lh_cmd, env=lab.env(RUST_LOG="warn"))
        port = lab.wait_for("lighthouse_ready", what="the lighthouse")["port"]
        env = lab.env(GLOO_SOCKET_IFNAME="lo", TORCHFT_LIGHTHOUSE=f"http://127.0.0.1:{port}", LOGLEVEL="WARNING",
                      RUST_LOG="warn", TORCH_DISABLE_SHARE_RDZV_TCP_STORE=None)  # torchft's manager uses torchrun's store
        groups = []
        for g in range(config.groups):
            cmd = [sys.executable, "-m", "course_lib.faultlab.launch", "--standalone", "--nproc-per-node", "1",
                   "--max-restarts", config.max_restarts(g), "--monitor-interval", config.monitor_interval_s,
                   JOB_SCRIPT, cfg_path]
            genv = dict(env, FTLAB_GROUP=str(g), FAULTLAB_EVENTS=str(lab.run_dir / f"agent-{g}.jsonl"))
            groups.append(lab.start(f"torchrun-{g}", cmd, env=genv))
        rcs = [lab.wait(p, "torchft lab run") for p in groups]
        wall = lab.elapsed_s()
        if any(rc != 0 for rc in rcs):
            lab.fail(f"a group's torchrun exited with {rcs}")
    events = lab.events()
    digests = {e["rank"]: e["digest"] for e in events if e["ev"] == "done"}
    return FtResult(config=config, events=events, run_dir=lab.run_dir, wall_s=wall, output=lab.tail(),
                    pids=frozenset(lab.pids), recoveries=recoveries(events, config.groups), digests=digests,
                    lighthouse_port=port)


def load_finals(result: FtResult) -> dict:
    """``{group: final state}`` (torch; the lab test compares them tensor by tensor)."""
    import torch

    return {g: torch.load(result.run_dir / f"final-{g}.pt", weights_only=True) for g in range(result.config.groups)}


__all__ += ["load_finals", "Recovery"]
