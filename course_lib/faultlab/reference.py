"""The fault lab's uninterrupted run, computed in this process without torchrun (notebook 07's
reference; the reliability tests compare a faulty run with it).

    from course_lib.faultlab import LabConfig, reference_run, run_lab, same_final_state
    ref = reference_run(LabConfig(steps=24))        # milliseconds: no processes, no process group
    res = run_lab(ref.config.replace(failures=[...]))
    same_final_state(ref, res)                      # the same comparison as against a real run

An uninterrupted run of the job (:mod:`.job`) is a pure function of its config: every rank builds
the same model and optimizer from the seed, draws the batch of step ``s`` from ``(seed, s, rank)``
and its dropout from its own stream, and the ranks' gradients are summed by the all-reduce and
divided by the world size. Here each rank is a model of its own, stepped with the job's own
functions (:func:`.job.build`, :func:`.job.forward_backward`, :func:`.job.flat_grad`,
:func:`.job.apply_mean`), its dropout stream kept as a saved state of torch's global generator
between its turns; the all-reduce becomes ``g0 + g1``. That is the gloo all-reduce of two ranks bit
for bit: each element of its result is one float32 addition of the two ranks' values, and that
addition is commutative (over more ranks gloo's ring adds in an order of its own, so this reference
refuses ``nproc != 2``). It reproduces the CPU job (gloo); the job runs NCCL on a GPU when CUDA is
available, and its RNG state is then the GPU's.

The levers and failures of ``config`` change how a run gets to its end, not the end: they are
ignored here (the result's config has no failures). Checked bit for bit against real runs of notebook 07's
job (tests/test_faultlab_guard.py compares a real run's first generation with it on every test run).
"""
from __future__ import annotations

import os
import time
from pathlib import Path

from ..labkit.config import LabConfigBase
from .lab import RestartResult
from .spec import LabConfig

__all__ = ["reference_run", "reference_state"]

#: What an uninterrupted run's end depends on (any lab config with these fields runs this job: notebook 07's
#: LabConfig, and course_lib.nodelab's NodeLabConfig, whose nproc is its world size)
_FIELDS = ("steps", "seed", "batch", "features", "hidden", "nproc")


def reference_state(config: LabConfig = LabConfig()) -> tuple[dict, list[dict]]:
    """The final state of an uninterrupted run of ``config`` (``step``, ``applied``, ``model``,
    ``optim``, ``rng``: every rank's RNG state, as the job's ``final.pt`` holds it) and its
    ``step_done`` events (one per step and rank, with the float32 loss), computed in this process.

    torch's global generator, its thread count and default dtype are restored on return.
    """
    if not (isinstance(config, LabConfigBase) and all(hasattr(config, k) for k in _FIELDS)):
        raise ValueError(f"config must be a LabConfig (got {type(config).__name__}); build one with LabConfig(steps=..., ...)")
    if config.nproc != 2:
        raise ValueError(f"nproc must be 2 for the in-process reference (got {config.nproc}): over more ranks gloo's "
                         f"all-reduce adds the ranks' gradients in an order of its own; run run_lab(config) instead")
    import torch

    from ..labkit.toy import toy_batch
    from .job import apply_mean, build, dropout_seed, flat_grad, forward_backward

    cfg = {k: getattr(config, k) for k in _FIELDS}
    world = config.nproc
    threads, dtype = torch.get_num_threads(), torch.get_default_dtype()
    events = []
    try:
        torch.set_num_threads(1)  # as in the job (one thread per worker)
        torch.set_default_dtype(torch.float32)
        with torch.random.fork_rng(devices=[]):
            ranks = []
            for rank in range(world):  # as each worker starts: its model, then its dropout stream
                model, opt, target = build(cfg)
                torch.manual_seed(dropout_seed(cfg["seed"], rank))
                ranks.append([model, opt, torch.get_rng_state()])
            pid, applied = os.getpid(), 0
            for step in range(1, cfg["steps"] + 1):
                flats, losses = [], []
                for rank, r in enumerate(ranks):  # each rank's turn: its own dropout stream
                    model, opt, rng = r
                    torch.set_rng_state(rng)
                    x, y = toy_batch(cfg["seed"], step, rank, cfg["batch"], target)
                    losses.append(forward_backward(model, opt, x, y).item())
                    r[2] = torch.get_rng_state()
                    flats.append(flat_grad(model))
                total = flats[0] + flats[1]  # gloo's sum of two ranks (commutative: the same on both)
                for model, opt, _ in ranks:
                    flat = total.clone()
                    flat /= world
                    apply_mean(model, opt, flat)
                applied += 1  # optimizer steps applied (the same on every rank)
                t = time.time()
                events += [{"t": t, "ev": "step_done", "rank": rank, "gen": 0, "pid": pid, "step": step, "loss": loss}
                           for rank, loss in enumerate(losses)]
        model, opt, _ = ranks[0]  # rank 0 writes the final state, with every rank's RNG state
        state = {
            "step": cfg["steps"],
            "applied": applied,
            "model": {k: v.detach().cpu() for k, v in model.state_dict().items()},
            "optim": opt.state_dict(),
            "rng": [r[2] for r in ranks],
        }
    finally:
        torch.set_num_threads(threads)
        torch.set_default_dtype(dtype)
    return state, events


def reference_run(config: LabConfig = LabConfig(), *, run_dir: str | os.PathLike | None = None) -> RestartResult:
    """An uninterrupted run of ``config`` computed in this process (:func:`reference_state`), as a
    :class:`RestartResult` that :func:`~.lab.same_final_state` compares with a real run: its final state
    in ``run_dir/final.pt`` (the safe writer's format, as the job writes it; ``run_dir`` by default a new
    temporary folder removed when the Python process exits), its digest, the ``step_done`` events and a
    ``done`` event. It starts no process (``pids`` is empty) and has no restarts."""
    from ..checkpoint.safe import save_checkpoint
    from ..labkit import temporary_run_dir
    from ..labkit.toy import state_digest

    t0 = time.monotonic()  # a duration: the wall clock can be stepped (NTP); events keep wall time
    state, events = reference_state(config)
    run_dir = temporary_run_dir("faultlab-ref") if run_dir is None else Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    final_path = save_checkpoint(state, run_dir / "final.pt")
    digest = state_digest(state)
    events.append({"t": time.time(), "ev": "done", "rank": 0, "gen": 0, "pid": os.getpid(), "step": state["step"],
                   "applied": state["applied"], "digest": digest})
    return RestartResult(config=config.replace(failures=()), events=events, run_dir=run_dir, wall_s=time.monotonic() - t0,
                         restarts=[], final_digest=digest, final_path=Path(final_path), applied=state["applied"],
                         returncode=0)
