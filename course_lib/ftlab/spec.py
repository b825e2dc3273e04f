"""What one torchft lab run does (notebook 10): :class:`FtConfig`, plain data (no torch).

The same toy job as notebook 07's lab (:mod:`course_lib.faultlab.job`: the MLP, its synthetic
batches, SGD with momentum), trained by ``groups`` replica groups of one rank each with
torchft's fault-tolerant data parallelism over gloo. Each group is its own torchrun (its own
agent, its own restarts); a torchft lighthouse on 127.0.0.1 forms a quorum of the groups
that are up before every step. Failures are notebook 07's :class:`~course_lib.faultlab.Failure`
(``kill`` or ``hang``) with ``rank`` naming the **replica group** they strike; a group's failures
fire in order (a new worker takes its group's first failure the event log does not show injected,
so a false kill of a slow step shifts nothing), each at the group's first step >= ``step`` in
which every group takes part (the groups start a few steps apart, so step numbers are the
job's committed steps, not the group's). ``slow`` injects slow-but-healthy steps:
``(step, factor, group)``: the compute of the first step >= ``step`` in a full quorum, once the
group's hang timeout is armed, ``factor`` times longer (each fires once per run).
"""
from __future__ import annotations

from dataclasses import dataclass

from .._validate import check_int_non_negative, check_int_positive, check_positive, checked
from ..faultlab.spec import Failure
from ..labkit.config import LabConfigBase, at_least, records

__all__ = ["FT_FAILURE_KINDS", "FtFailure", "FtConfig"]

FT_FAILURE_KINDS = ("kill", "hang")


@dataclass(frozen=True)
class FtFailure(Failure):
    """A failure of one replica group (``rank`` = the group): notebook 07's ``kill`` or ``hang``."""

    KINDS = FT_FAILURE_KINDS
    ON_WRITER = ()
    IN_CKPT = ()


def _at_least_one(name, value):
    x = check_positive(name, value)
    if x < 1:
        raise ValueError(f"{name} must be a finite number >= 1 (got {value!r})")
    return x


def _slow_steps(name, value):
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise ValueError(f"{name} must be a sequence of (step, factor, group) (got {value!r})")
    out = []
    for i, s in enumerate(value):
        step, factor, group = s
        out.append((check_int_positive(f"{name}[{i}].step", step), check_positive(f"{name}[{i}].factor", factor),
                    check_int_non_negative(f"{name}[{i}].group", group)))
    return tuple(out)


@dataclass(frozen=True)
class FtConfig(LabConfigBase):
    """Settings of one torchft lab run (times in seconds).

    groups: replica groups (2 or 3 on a laptop). steps: committed steps the job trains; if a group
        is still out then, the others go on until it is back, at most ``grace_steps`` more.
    failures: :class:`FtFailure` (kill, hang; notebook 07's :class:`Failure` is accepted), ``rank`` = the replica group.
    slow: slow-but-healthy steps ``(step, factor, group)``.
    step_compute_s: simulated compute per step (a sleep, as in notebook 07).
    safety_factor, warmup: the learned hang timeout (:mod:`course_lib.ftlab.hang`).
    timeout_s: torchft's collective and commit timeout (Manager ``timeout``).
    heartbeat_timeout_ms, join_timeout_ms: the lighthouse's: a group that stopped heartbeating
        is dropped after ``heartbeat_timeout_ms``; a quorum waits for heartbeating stragglers
        at most ``join_timeout_ms``.
    monitor_interval_s: torchrun's agent poll in every group.
    seed, batch, features, hidden: the toy problem (notebook 07's defaults).
    """

    groups: int = checked(at_least(2, "a survivor needs a peer"), default=2)
    steps: int = checked(check_int_positive, default=40)
    grace_steps: int = checked(check_int_positive, default=400)
    failures: tuple = checked(records(FtFailure), default=())
    slow: tuple = checked(_slow_steps, default=())
    step_compute_s: float = checked(check_positive, default=0.1)
    safety_factor: float = checked(_at_least_one, default=5.0)
    warmup: int = checked(check_int_non_negative, default=3)
    timeout_s: float = checked(check_positive, default=10.0)
    heartbeat_timeout_ms: int = checked(check_int_positive, default=1000)
    join_timeout_ms: int = checked(check_int_positive, default=1000)
    monitor_interval_s: float = checked(check_positive, default=0.1)
    seed: int = checked(check_int_non_negative, default=0)
    batch: int = checked(check_int_positive, default=32)
    features: int = checked(check_int_positive, default=16)
    hidden: int = checked(check_int_positive, default=32)

    def _validate_fields(self):
        for i, f in enumerate(self.failures):
            if f.rank >= self.groups:
                raise ValueError(f"failures[{i}].rank (the replica group) must be an integer in [0, {self.groups - 1}] (got {f.rank})")
            if not self.warmup < f.step < self.steps:
                raise ValueError(f"failures[{i}].step must be an integer in ({self.warmup}, {self.steps}) (got {f.step})")
        for i, (step, _, group) in enumerate(self.slow):
            if group >= self.groups or step > self.steps:
                raise ValueError(f"slow[{i}] must name a step in [1, {self.steps}] and a group in [0, {self.groups - 1}] "
                                 f"(got {self.slow[i]!r})")

    def failures_of(self, group: int) -> list[Failure]:
        """The failures that strike ``group``, in order (each fires once the previous one has)."""
        return [f for f in self.failures if f.rank == group]

    def max_restarts(self, group: int) -> int:
        """Restarts ``group``'s torchrun must allow: its failures, plus one per slow step (a false kill)."""
        return len(self.failures_of(group)) + sum(1 for s in self.slow if s[2] == group)
