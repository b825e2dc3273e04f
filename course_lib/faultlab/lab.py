"""``run_lab``: one call that runs the training job under torchrun, injects failures and
measures every restart from the event log (notebook 07; the reliability tests use it too).

    from course_lib.faultlab import Failure, LabConfig, run_lab
    ref = run_lab(LabConfig(steps=24))                          # never fails
    res = run_lab(ref.config.replace(failures=[Failure("kill", 7), Failure("hang", 14, rank=0)],
                                     collective_timeout_s=2.0, snapshot="memory"))
    res.restarts[0].stages_s()      # {'detect': ..., 'reschedule': ..., 'reload': ..., 'rewind': ...}
    res.stages()                    # the same as course_lib.restart.RestartStages (minutes)
    same_final_state(ref, res)      # bit-identical parameters, optimizer and RNG state?

torchrun runs under the lab kit's :class:`~course_lib.labkit.Lab`: every wait is bounded by
``timeout_s`` and, whatever happens, every process of the run is SIGKILLed on the way out and the
shared-memory snapshot folder is removed.
"""
from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ..labkit import Lab, LabError, LabResult
from .events import restart_stages, to_restart_stages
from .spec import LabConfig

__all__ = ["RestartResult", "LabError", "run_lab", "load_final", "same_final_state", "JOB_SCRIPT"]

JOB_SCRIPT = Path(__file__).with_name("job.py")
SHM_ROOT = Path("/dev/shm")


@dataclass
class RestartResult(LabResult):
    """A run of the fault lab's job (on one host, or on namespaced nodes): the kit's
    :class:`~course_lib.labkit.LabResult` plus what the job measured.

    restarts: one :class:`MeasuredRestart` per injected failure (seconds).
    final_digest: sha256 of the final parameters, optimizer state and every rank's RNG state
    (rank 0's ``done``). final_path: the final state file (safe-writer format; :func:`load_final`).
    applied: optimizer steps applied to the final state. returncode: the launcher's exit code.
    """

    restarts: list = field(default_factory=list)
    final_digest: str = ""
    final_path: Path | None = None
    applied: int = 0
    returncode: int = 0

    def stages(self):
        """The restarts as ``course_lib.restart.RestartStages`` (minutes), one per failure."""
        return [to_restart_stages(r) for r in self.restarts]


def write_job_config(run_dir: Path, job: dict, paths: dict) -> Path:
    """The job's settings and the run's paths, as the JSON file the training script reads."""
    cfg_path = run_dir / "config.json"
    cfg_path.write_text(json.dumps({**job, "_paths": paths}, sort_keys=True, indent=1))
    return cfg_path


def finish(lab: Lab, config, wall_s: float, returncode: int = 0, final_path: Path | None = None) -> RestartResult:
    """The run's :class:`RestartResult`, read from its event log (:class:`LabError` without rank 0's ``done``)."""
    events = lab.events()
    done = [e for e in events if e["ev"] == "done" and e["rank"] == 0]
    output = lab.tail(3000)
    if not done:
        raise LabError(f"the job finished without a 'done' event; output tails:\n{output}")
    return RestartResult(config=config, events=events, run_dir=lab.run_dir, wall_s=wall_s, output=output,
                         pids=frozenset(lab.pids), restarts=restart_stages(events), final_digest=done[-1]["digest"],
                         final_path=final_path, applied=done[-1]["applied"], returncode=returncode)


def run_lab(
    config: LabConfig = LabConfig(),
    *,
    timeout_s: float = 180.0,
    run_dir: str | os.PathLike | None = None,
) -> RestartResult:
    """Run the job of ``config`` under torchrun with its failures and levers; return a :class:`RestartResult`.

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
    with Lab(run_dir, timeout_s=timeout_s, prefix="faultlab") as lab:
        shm_dir = lab.temporary_path("shm", SHM_ROOT if SHM_ROOT.is_dir() else None)
        final_path = lab.run_dir / "final.pt"
        final_path.unlink(missing_ok=True)
        paths = {"events": str(lab.events_path), "disk": str(lab.run_dir / "ckpt"), "shm": str(shm_dir),
                 "final": str(final_path)}
        cfg_path = write_job_config(lab.run_dir, json.loads(cfg.to_json()), paths)
        cmd = [
            sys.executable, "-m", "course_lib.faultlab.launch",
            "--standalone",
            "--nproc-per-node", str(cfg.nproc),
            "--max-restarts", str(cfg.max_restarts),
            "--max-no-progress-restarts", str(cfg.max_no_progress_restarts),
            "--monitor-interval", str(cfg.monitor_interval_s),
            str(JOB_SCRIPT), str(cfg_path),
        ]  # fmt: skip
        # Each generation of workers gets a fresh TCPStore: with the store shared with torchrun's
        # rendezvous (the default since PyTorch 2.4), a restarted generation can read the
        # previous generation's connection keys and fail to connect (pytorch/pytorch#135712).
        env = lab.env(FAULTLAB_EVENTS=lab.events_path, TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1,
                      LOGLEVEL=os.environ.get("LOGLEVEL", "WARNING"))
        proc = lab.start("torchrun", cmd, env=env)
        rc = lab.wait(proc, "lab run")
        wall = lab.elapsed_s()
        if rc != 0:
            gave_up = [e for e in lab.events() if e["ev"] == "gave_up"]
            if gave_up:  # the restart-loop guard stopped the job: its message says where and why
                raise LabError(f"{gave_up[0]['message']}\n(torchrun exited with {rc})")
            lab.fail(f"torchrun exited with {rc}")
    return finish(lab, cfg, wall, rc, final_path)


def load_final(result: RestartResult) -> dict:
    """The final state of a run (``model``, ``optim``, ``rng``: one RNG state per rank, ``step``,
    ``applied``), verified by its checksum."""
    from ..checkpoint.safe import load_checkpoint

    return load_checkpoint(result.final_path)


def same_final_state(a: RestartResult, b: RestartResult) -> dict:
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
