"""What one torchft lab run does (notebook 10): :class:`FtConfig`, plain data (no torch).

The same toy job as notebook 07's lab (:mod:`course_lib.faultlab.job`: the MLP, its synthetic
batches, SGD with momentum), trained by ``groups`` replica groups of one rank each with
torchft's fault-tolerant data parallelism over gloo. Each group is its own torchrun (its own
agent, its own restarts); a torchft lighthouse on 127.0.0.1 forms a quorum of the groups
that are up before every step. Failures are notebook 07's :class:`~course_lib.faultlab.Failure`
(``kill`` or ``hang``) with ``rank`` naming the **replica group** they strike; the i-th failure
of a group fires in that group's i-th worker generation, at its first step >= ``step`` in
which every group takes part (the groups start a few steps apart, so step numbers are the
job's committed steps, not the group's). ``slow`` injects slow-but-healthy steps:
``(step, factor, group)``: the compute of the first step >= ``step`` in a full quorum, once the
group's hang timeout is armed, ``factor`` times longer (each fires once per run).
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass

from .._validate import check_int_non_negative, check_int_positive, check_positive
from ..faultlab.spec import Failure

__all__ = ["FT_FAILURE_KINDS", "FtConfig"]

FT_FAILURE_KINDS = ("kill", "hang")


@dataclass(frozen=True)
class FtConfig:
    """Settings of one torchft lab run (times in seconds).

    groups: replica groups (2 or 3 on a laptop). steps: committed steps the job trains; if a group
        is still out then, the others go on until it is back, at most ``grace_steps`` more.
    failures: :class:`Failure` (kill, hang), ``rank`` = the replica group.
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

    groups: int = 2
    steps: int = 40
    grace_steps: int = 400
    failures: tuple = ()
    slow: tuple = ()
    step_compute_s: float = 0.1
    safety_factor: float = 5.0
    warmup: int = 3
    timeout_s: float = 10.0
    heartbeat_timeout_ms: int = 1000
    join_timeout_ms: int = 1000
    monitor_interval_s: float = 0.1
    seed: int = 0
    batch: int = 32
    features: int = 16
    hidden: int = 32

    def __post_init__(self):
        object.__setattr__(self, "groups", check_int_positive("groups", self.groups))
        if self.groups < 2:
            raise ValueError(f"groups must be an integer >= 2 (a survivor needs a peer; got {self.groups!r})")
        for name in ("steps", "grace_steps", "heartbeat_timeout_ms", "join_timeout_ms", "batch", "features", "hidden"):
            object.__setattr__(self, name, check_int_positive(name, getattr(self, name)))
        for name in ("step_compute_s", "timeout_s", "monitor_interval_s"):
            check_positive(name, getattr(self, name))
        if self.safety_factor < 1 or check_positive("safety_factor", self.safety_factor) < 1:
            raise ValueError(f"safety_factor must be a finite number >= 1 (got {self.safety_factor!r})")
        object.__setattr__(self, "warmup", check_int_non_negative("warmup", self.warmup))
        object.__setattr__(self, "seed", check_int_non_negative("seed", self.seed))
        if isinstance(self.failures, (str, bytes)) or not hasattr(self.failures, "__iter__"):
            raise ValueError(f"failures must be a sequence of Failure (got {self.failures!r})")
        fs = tuple(Failure.coerce(f) for f in self.failures)
        for i, f in enumerate(fs):
            if f.kind not in FT_FAILURE_KINDS:
                raise ValueError(f"failures[{i}].kind must be one of {list(FT_FAILURE_KINDS)} (got {f.kind!r})")
            if f.rank >= self.groups:
                raise ValueError(f"failures[{i}].rank (the replica group) must be an integer in [0, {self.groups - 1}] (got {f.rank})")
            if not self.warmup < f.step < self.steps:
                raise ValueError(f"failures[{i}].step must be an integer in ({self.warmup}, {self.steps}) (got {f.step})")
        object.__setattr__(self, "failures", fs)
        sl = []
        for i, s in enumerate(self.slow):
            step, factor, group = s
            step = check_int_positive(f"slow[{i}].step", step)
            factor = check_positive(f"slow[{i}].factor", factor)
            group = check_int_non_negative(f"slow[{i}].group", group)
            if group >= self.groups or step > self.steps:
                raise ValueError(f"slow[{i}] must name a step in [1, {self.steps}] and a group in [0, {self.groups - 1}] (got {s!r})")
            sl.append((step, factor, group))
        object.__setattr__(self, "slow", tuple(sl))

    def failures_of(self, group: int) -> list[Failure]:
        """The failures that strike ``group``, in order (the i-th fires in its i-th generation)."""
        return [f for f in self.failures if f.rank == group]

    def max_restarts(self, group: int) -> int:
        """Restarts ``group``'s torchrun must allow: its failures, plus one per slow step (a false kill)."""
        return len(self.failures_of(group)) + sum(1 for s in self.slow if s[2] == group)

    def replace(self, **changes) -> "FtConfig":
        return dataclasses.replace(self, **changes)

    def to_json(self) -> str:
        d = dataclasses.asdict(self)
        d["failures"] = [dataclasses.asdict(f) for f in self.failures]
        d["slow"] = [list(s) for s in self.slow]
        return json.dumps(d, sort_keys=True)
