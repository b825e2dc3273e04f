"""What one lab run does: the job's settings, the failures to inject, and the levers (notebook 07).

A :class:`LabConfig` is plain data (no torch): :func:`course_lib.faultlab.run_lab` writes it
as JSON next to the run, and the training script :mod:`course_lib.faultlab.job` that
torchrun starts reads it back. Steps are numbered 1..``steps``; "step s" is the s-th
optimizer step, and the checkpoint "of step s" holds the state after s steps.

Failure kinds (``Failure.kind``), each fired once, in its own worker generation (failure
``i`` fires in generation ``i``, the one torchrun started after ``i`` restarts):

``kill``
    SIGKILL rank ``rank`` in the middle of step ``step`` (after its backward pass, before
    the gradient all-reduce): the peers find a closed connection in the collective.
``kill_in_ckpt``
    SIGKILL the checkpoint writer (rank 0) halfway through writing the checkpoint of step
    ``step`` (``step`` must be a multiple of ``ckpt_every``): a partial temporary file is
    left behind, the committed checkpoints are untouched.
``hang``
    rank ``rank`` stops in step ``step`` and sleeps forever without a collective error: the
    peers wait in the all-reduce until the collective timeout fires.
``corrupt_ckpt``
    at step ``step`` rank 0 flips bytes in the middle of the newest committed checkpoint
    (storage corruption) and is then SIGKILLed: the restart must skip that file.
``bad_node``
    rank ``rank`` sits on a bad node that nobody removes: it is SIGKILLed in step ``step`` of
    its generation *and of every later one* (only as the last failure). Restarts then make no
    progress, and the restart-loop guard (:mod:`.guard`) stops the job after
    ``max_no_progress_restarts`` of them with a message naming the node, the rank and the step.

Levers (each a field): ``collective_timeout_s`` (the gloo/NCCL process-group timeout),
``monitor_interval_s`` (how often torchrun's agent polls its workers), ``ckpt_every`` (the
checkpoint interval in steps, so the rewind) and ``snapshot`` (``"disk"``: a checkpoint
store on the local disk whose pages are dropped from the page cache after each write, so a
reload really reads the device; ``"memory"``: the same safe store in a shared-memory folder
under ``/dev/shm`` that outlives the worker processes, the lab's stand-in for a host-memory
snapshot).
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass

from .._validate import (
    check_choice,
    check_int_non_negative,
    check_int_positive,
    check_non_negative,
    check_positive,
)

__all__ = ["FAILURE_KINDS", "SNAPSHOTS", "Failure", "LabConfig"]

FAILURE_KINDS = ("kill", "kill_in_ckpt", "hang", "corrupt_ckpt", "bad_node")
SNAPSHOTS = ("disk", "memory")


@dataclass(frozen=True)
class Failure:
    """One injected failure: ``kind`` (see module doc) at optimizer step ``step`` on ``rank``."""

    kind: str
    step: int
    rank: int = 1

    KINDS = FAILURE_KINDS  # the kinds this class accepts (course_lib.nodelab.NodeFailure has its own)
    ON_WRITER = ("kill_in_ckpt", "corrupt_ckpt")  # kinds that strike the checkpoint writer, rank 0
    IN_CKPT = ("kill_in_ckpt",)  # kinds that strike after the step, inside its checkpoint

    def __post_init__(self):
        check_choice("kind", self.kind, self.KINDS)
        object.__setattr__(self, "step", check_int_positive("step", self.step))
        object.__setattr__(self, "rank", check_int_non_negative("rank", self.rank))
        if self.kind in self.ON_WRITER and self.rank != 0:
            # the checkpoint writer is rank 0; these failures happen on the writer
            object.__setattr__(self, "rank", 0)

    @classmethod
    def coerce(cls, value) -> "Failure":
        """Accept a Failure, a (kind, step[, rank]) tuple or a dict."""
        if isinstance(value, cls):
            return value
        if isinstance(value, dict):
            return cls(**value)
        if isinstance(value, (tuple, list)):
            return cls(*value)
        raise ValueError(f"failures must hold {cls.__name__}, (kind, step, rank) tuples or dicts (got {value!r})")

    @property
    def progress_before(self) -> int:
        """Optimizer steps completed when this failure strikes (the pre-failure step)."""
        return self.step if self.kind in self.IN_CKPT else self.step - 1

    @classmethod
    def checked_sequence(cls, failures, *, ranks: int, steps: int, ckpt_every: int) -> tuple:
        """``failures`` as a tuple of ``cls``, each on a rank in [0, ranks), at a step in [1, steps],
        after the previous one's pre-failure step, a checkpoint failure on a checkpoint step."""
        if isinstance(failures, (str, bytes)) or not hasattr(failures, "__iter__"):
            raise ValueError(f"failures must be a sequence of {cls.__name__} (got {failures!r})")
        fs = tuple(cls.coerce(f) for f in failures)
        last = 0
        for i, f in enumerate(fs):
            if f.rank >= ranks:
                raise ValueError(f"failures[{i}].rank must be an integer in [0, {ranks - 1}] (got {f.rank})")
            if f.step > steps:
                raise ValueError(f"failures[{i}].step must be an integer in [1, steps={steps}] (got {f.step})")
            if f.step <= last:
                raise ValueError(
                    f"failures[{i}].step must be > {last} (failures fire in successive generations, "
                    f"each after the previous one's pre-failure step; got {f.step})"
                )
            if f.kind in cls.IN_CKPT and f.step % ckpt_every:
                raise ValueError(
                    f"failures[{i}].step must be a multiple of ckpt_every={ckpt_every} for kind "
                    f"'{f.kind}' (got {f.step})"
                )
            last = f.progress_before
        return fs


@dataclass(frozen=True)
class LabConfig:
    """Settings of one lab run (times in seconds; see the module doc for the levers).

    steps: optimizer steps of the whole job.
    ckpt_every: checkpoint interval in steps (a checkpoint of step 0 is always written).
    failures: the failures to inject, in order of strictly increasing step.
    collective_timeout_s: process-group timeout (detects a hung peer).
    monitor_interval_s: torchrun ``--monitor-interval`` (how often the agent polls).
    snapshot: ``"disk"`` or ``"memory"`` (where checkpoints are written and reloaded from).
    step_compute_s: simulated compute per step (a sleep: the tiny MLP itself takes about a
        millisecond, a real model's step takes seconds; the sleep makes rewound work visible).
    state_mb: extra megabytes of (untrained, deterministic) state carried in every
        checkpoint, so that the reload reads a realistic amount of bytes.
    nproc: worker processes (ranks) on this machine.
    keep: checkpoints kept by the store.
    seed: seed of the model, the data and the dropout streams.
    batch, features, hidden: size of the synthetic problem and the MLP.
    max_no_progress_restarts: restarts in a row without progress before the restart-loop guard
        stops the job (default: NVRx's, from data/restart_ranges.csv).
    """

    steps: int = 24
    ckpt_every: int = 4
    failures: tuple = ()
    collective_timeout_s: float = 30.0
    monitor_interval_s: float = 0.1
    snapshot: str = "disk"
    step_compute_s: float = 0.02
    state_mb: float = 0.0
    nproc: int = 2
    keep: int = 3
    seed: int = 0
    batch: int = 32
    features: int = 16
    hidden: int = 32
    max_no_progress_restarts: int | None = None

    def __post_init__(self):
        if self.max_no_progress_restarts is None:
            from .guard import default_max_no_progress_restarts

            object.__setattr__(self, "max_no_progress_restarts", default_max_no_progress_restarts())
        object.__setattr__(self, "max_no_progress_restarts",
                           check_int_positive("max_no_progress_restarts", self.max_no_progress_restarts))
        object.__setattr__(self, "steps", check_int_positive("steps", self.steps))
        object.__setattr__(self, "ckpt_every", check_int_positive("ckpt_every", self.ckpt_every))
        check_positive("collective_timeout_s", self.collective_timeout_s)
        check_positive("monitor_interval_s", self.monitor_interval_s)
        check_choice("snapshot", self.snapshot, SNAPSHOTS)
        check_non_negative("step_compute_s", self.step_compute_s)
        check_non_negative("state_mb", self.state_mb)
        object.__setattr__(self, "nproc", check_int_positive("nproc", self.nproc))
        if self.nproc < 2:
            raise ValueError(f"nproc must be an integer >= 2 (a collective needs a peer; got {self.nproc!r})")
        object.__setattr__(self, "keep", check_int_positive("keep", self.keep))
        if self.keep < 2:
            raise ValueError(f"keep must be an integer >= 2 (fallback needs an older checkpoint; got {self.keep!r})")
        object.__setattr__(self, "seed", check_int_non_negative("seed", self.seed))
        for name in ("batch", "features", "hidden"):
            object.__setattr__(self, name, check_int_positive(name, getattr(self, name)))
        fs = Failure.checked_sequence(self.failures, ranks=self.nproc, steps=self.steps, ckpt_every=self.ckpt_every)
        object.__setattr__(self, "failures", fs)
        for i, f in enumerate(fs):
            if f.kind == "bad_node" and i != len(fs) - 1:
                raise ValueError(f"failures[{i}] of kind 'bad_node' must be the last failure (it recurs in every later generation)")
        if any(f.kind == "hang" for f in fs) and self.collective_timeout_s > 600:
            raise ValueError(
                f"collective_timeout_s must be <= 600 when a hang is injected (the lab would wait that long; "
                f"got {self.collective_timeout_s!r})"
            )

    @property
    def max_restarts(self) -> int:
        """Restarts torchrun must allow: one per injected failure; with a ``bad_node``, more than the
        guard will use (so the guard, not torchrun's budget, is what stops the loop)."""
        if self.failures and self.failures[-1].kind == "bad_node":
            return len(self.failures) + self.max_no_progress_restarts + 2
        return len(self.failures)

    def replace(self, **changes) -> "LabConfig":
        return dataclasses.replace(self, **changes)

    def to_json(self) -> str:
        d = dataclasses.asdict(self)
        d["failures"] = [dataclasses.asdict(f) for f in self.failures]
        return json.dumps(d, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> "LabConfig":
        d = json.loads(text)
        d["failures"] = tuple(Failure(**f) for f in d.get("failures", ()))
        return cls(**d)
