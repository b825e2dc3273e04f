"""What one nodes-lab run does: the job across nodes, the node failures, the spare (notebook 11).

A :class:`NodeLabConfig` is plain data (no torch). The job is notebook 07's training script
(:mod:`course_lib.faultlab.job`) with one rank per node (``nproc_per_node`` ranks in general),
``nodes`` nodes in the job and ``spares`` hot-spare nodes whose agents wait in the rendezvous.

Node failure kinds (``NodeFailure.kind``), each fired once, in its own generation (failure
``i`` strikes generation ``i``, the ``i``-th rendezvous round), on the node that runs global
rank ``rank``:

``node_kill``
    every process of that node (its torchrun agent and its workers) SIGKILLed at once, in
    the middle of step ``step``: the host is gone, nobody on it reports anything.
``link_cut``
    that node's link taken down in the middle of step ``step``: it is alive but cut off, its
    peers hang in the all-reduce until the collective timeout.
``node_kill_in_ckpt``
    the node of the checkpoint writer (rank 0) killed halfway through writing the checkpoint
    of step ``step`` (a multiple of ``ckpt_every``).

After a node is lost the job needs ``nodes`` nodes again: an unused spare is already waiting
in the rendezvous and takes the lost node's place; without one, the lab (standing in for the
scheduler) provisions a new node ``replace_delay_s`` after the job noticed the loss (a fresh
namespace and a fresh torchrun agent, which has to start up before it can join).

Checkpoints go to a folder every node sees (the lab's stand-in for shared storage), written by
rank 0 with the course's checksummed store every ``ckpt_every`` steps.
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass

from .._validate import check_int_non_negative, check_int_positive, check_non_negative, check_positive
from ..faultlab.spec import Failure

__all__ = ["NODE_FAILURE_KINDS", "NodeFailure", "NodeLabConfig"]

NODE_FAILURE_KINDS = ("node_kill", "link_cut", "node_kill_in_ckpt")


@dataclass(frozen=True)
class NodeFailure(Failure):
    """One node failure: ``kind`` (see the module doc) at step ``step`` on the node of ``rank``
    (notebook 07's :class:`~course_lib.faultlab.Failure`, with the node kinds)."""

    KINDS = NODE_FAILURE_KINDS
    ON_WRITER = ("node_kill_in_ckpt",)  # the checkpoint writer's node
    IN_CKPT = ("node_kill_in_ckpt",)


@dataclass(frozen=True)
class NodeLabConfig:
    """Settings of one nodes-lab run (times in seconds).

    nodes: nodes in the job (the world is ``nodes x nproc_per_node`` ranks).
    spares: hot-spare nodes started with the job, waiting in the rendezvous.
    replace_delay_s: without an unused spare, seconds from the job noticing a node's loss
        (a surviving agent's ``agent_noticed``) until the lab starts a replacement node (the scheduler's provisioning time; 0: at once).
    failures: the node failures, in order of strictly increasing step.
    collective_timeout_s: process-group timeout (what a cut link runs into).
    dead_node_s: the rendezvous declares a silent node dead after this many seconds
        (torchrun's ``keep_alive_interval`` of 1 s times ``keep_alive_max_attempt``).
    steps, ckpt_every, monitor_interval_s, step_compute_s, state_mb, keep, seed, batch,
    features, hidden: as in notebook 07's :class:`course_lib.faultlab.LabConfig`.
    """

    steps: int = 16
    ckpt_every: int = 4
    failures: tuple = ()
    nodes: int = 2
    spares: int = 0
    replace_delay_s: float = 0.0
    nproc_per_node: int = 1
    collective_timeout_s: float = 3.0
    dead_node_s: int = 3
    monitor_interval_s: float = 0.1
    step_compute_s: float = 0.05
    state_mb: float = 0.0
    keep: int = 3
    seed: int = 0
    batch: int = 32
    features: int = 16
    hidden: int = 32

    def __post_init__(self):
        for name in ("steps", "ckpt_every", "nodes", "nproc_per_node", "keep", "dead_node_s"):
            object.__setattr__(self, name, check_int_positive(name, getattr(self, name)))
        if self.nodes < 2:
            raise ValueError(f"nodes must be an integer >= 2 (a lost node needs a surviving peer; got {self.nodes!r})")
        if self.keep < 2:
            raise ValueError(f"keep must be an integer >= 2 (fallback needs an older checkpoint; got {self.keep!r})")
        object.__setattr__(self, "spares", check_int_non_negative("spares", self.spares))
        object.__setattr__(self, "seed", check_int_non_negative("seed", self.seed))
        check_non_negative("replace_delay_s", self.replace_delay_s)
        check_positive("collective_timeout_s", self.collective_timeout_s)
        check_positive("monitor_interval_s", self.monitor_interval_s)
        check_non_negative("step_compute_s", self.step_compute_s)
        check_non_negative("state_mb", self.state_mb)
        for name in ("batch", "features", "hidden"):
            object.__setattr__(self, name, check_int_positive(name, getattr(self, name)))
        fs = NodeFailure.checked_sequence(self.failures, ranks=self.world, steps=self.steps, ckpt_every=self.ckpt_every)
        object.__setattr__(self, "failures", fs)
        if any(f.kind == "link_cut" for f in fs) and self.collective_timeout_s > 120:
            raise ValueError(f"collective_timeout_s must be <= 120 when a link is cut (the lab would wait that long; "
                             f"got {self.collective_timeout_s!r})")

    @property
    def world(self) -> int:
        """Ranks in the job."""
        return self.nodes * self.nproc_per_node

    @property
    def nproc(self) -> int:
        """Ranks in the job (notebook 07's name, so :func:`course_lib.faultlab.same_final_state`
        compares the RNG state of every rank)."""
        return self.world

    def replace(self, **changes) -> "NodeLabConfig":
        return dataclasses.replace(self, **changes)

    def job_config(self) -> dict:
        """The settings notebook 07's training script reads (:mod:`course_lib.faultlab.job`)."""
        d = {k: getattr(self, k) for k in ("steps", "ckpt_every", "collective_timeout_s", "step_compute_s",
                                           "state_mb", "keep", "seed", "batch", "features", "hidden")}
        d["failures"] = [dataclasses.asdict(f) for f in self.failures]
        d["snapshot"] = "disk"
        return d

    def to_json(self) -> str:
        d = dataclasses.asdict(self)
        d["failures"] = [dataclasses.asdict(f) for f in self.failures]
        return json.dumps(d, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> "NodeLabConfig":
        d = json.loads(text)
        d["failures"] = tuple(NodeFailure(**f) for f in d.get("failures", ()))
        return cls(**d)
