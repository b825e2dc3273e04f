"""What one lab run does: the job's settings, the failures to inject, and the levers (notebook 07).

A :class:`LabConfig` is plain data (no torch): :func:`course_lib.faultlab.run_lab` writes it
as JSON next to the run, and the training script :mod:`course_lib.faultlab.job` that
torchrun starts reads it back. Steps are numbered 1..``steps``; "step s" is the s-th
optimizer step, and the checkpoint "of step s" holds the state after s steps.

Failure kinds (``Failure.kind``), each fired once, in order: a worker injects the first failure
of the list that the event log does not yet show injected, at its step, in whatever generation gets
there (:func:`course_lib.labkit.next_failure`; a restart that no failure caused shifts nothing):

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

from dataclasses import dataclass

from .._validate import Validated, check_int_non_negative, check_int_positive, check_non_negative, check_positive, checked
from ..labkit.config import LabConfigBase, at_least, one_of, records

__all__ = ["FAILURE_KINDS", "SNAPSHOTS", "Failure", "LabConfig"]

FAILURE_KINDS = ("kill", "kill_in_ckpt", "hang", "corrupt_ckpt", "bad_node")
SNAPSHOTS = ("disk", "memory")


@dataclass(frozen=True)
class Failure(Validated):
    """One injected failure: ``kind`` (see module doc) at optimizer step ``step`` on ``rank``."""

    kind: str = checked(lambda name, value: value)  # checked against the class's KINDS below
    step: int = checked(check_int_positive)
    rank: int = checked(check_int_non_negative, default=1)

    KINDS = FAILURE_KINDS  # the kinds this class accepts (course_lib.nodelab.NodeFailure has its own)
    ON_WRITER = ("kill_in_ckpt", "corrupt_ckpt")  # kinds that strike the checkpoint writer, rank 0
    IN_CKPT = ("kill_in_ckpt",)  # kinds that strike after the step, inside its checkpoint

    def _validate_fields(self):
        if self.kind not in self.KINDS:
            raise ValueError(f"kind must be one of {sorted(self.KINDS)} (got {self.kind!r})")
        if self.kind in self.ON_WRITER and self.rank != 0:
            object.__setattr__(self, "rank", 0)  # the checkpoint writer is rank 0; these failures happen on it

    @classmethod
    def coerce(cls, value) -> "Failure":
        """Accept a Failure, a (kind, step[, rank]) tuple or a dict."""
        return records(cls)("failures", [value])[0]

    @property
    def progress_before(self) -> int:
        """Optimizer steps completed when this failure strikes (the pre-failure step)."""
        return self.step if self.kind in self.IN_CKPT else self.step - 1

    @classmethod
    def check_order(cls, fs: tuple, *, ranks: int, steps: int, ckpt_every: int) -> None:
        """Each failure on a rank in [0, ranks), at a step in [1, steps], after the previous one's
        pre-failure step (the next failure fires only once the job is past the last one's), a checkpoint
        failure on a checkpoint step."""
        last = 0
        for i, f in enumerate(fs):
            if f.rank >= ranks:
                raise ValueError(f"failures[{i}].rank must be an integer in [0, {ranks - 1}] (got {f.rank})")
            if f.step > steps:
                raise ValueError(f"failures[{i}].step must be an integer in [1, steps={steps}] (got {f.step})")
            if f.step <= last:
                raise ValueError(
                    f"failures[{i}].step must be > {last} (failures fire one after the other, "
                    f"each after the previous one's pre-failure step; got {f.step})"
                )
            if f.kind in cls.IN_CKPT and f.step % ckpt_every:
                raise ValueError(
                    f"failures[{i}].step must be a multiple of ckpt_every={ckpt_every} for kind "
                    f"'{f.kind}' (got {f.step})"
                )
            last = f.progress_before


@dataclass(frozen=True)
class LabConfig(LabConfigBase):
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

    steps: int = checked(check_int_positive, default=24)
    ckpt_every: int = checked(check_int_positive, default=4)
    failures: tuple = checked(records(Failure), default=())
    collective_timeout_s: float = checked(check_positive, default=30.0)
    monitor_interval_s: float = checked(check_positive, default=0.1)
    snapshot: str = checked(one_of(SNAPSHOTS), default="disk")
    step_compute_s: float = checked(check_non_negative, default=0.02)
    state_mb: float = checked(check_non_negative, default=0.0)
    nproc: int = checked(at_least(2, "a collective needs a peer"), default=2)
    keep: int = checked(at_least(2, "fallback needs an older checkpoint"), default=3)
    seed: int = checked(check_int_non_negative, default=0)
    batch: int = checked(check_int_positive, default=32)
    features: int = checked(check_int_positive, default=16)
    hidden: int = checked(check_int_positive, default=32)
    max_no_progress_restarts: int | None = checked(check_int_positive, default=None)

    def _validate_fields(self):
        if self.max_no_progress_restarts is None:
            from .guard import default_max_no_progress_restarts

            object.__setattr__(self, "max_no_progress_restarts", default_max_no_progress_restarts())
        fs = self.failures
        Failure.check_order(fs, ranks=self.nproc, steps=self.steps, ckpt_every=self.ckpt_every)
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
