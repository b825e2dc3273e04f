"""What one nodes-lab run does: the job across nodes, the node failures, the spare (notebook 11).

A :class:`NodeLabConfig` is plain data (no torch). The job is notebook 07's training script
(:mod:`course_lib.faultlab.job`) with one rank per node (``nproc_per_node`` ranks in general),
``nodes`` nodes in the job and ``spares`` hot-spare nodes whose agents wait in the rendezvous.

Node failure kinds (``NodeFailure.kind``), each fired once, in order (the first one the event
log does not show injected fires at its step, in whatever rendezvous round gets there), on the
node that runs global rank ``rank``:

``node_kill``
    every process of that node (its torchrun agent and its workers) SIGKILLed at once, in
    the middle of step ``step``: the host is gone, nobody on it reports anything.
``link_cut``
    that node's link taken down in the middle of step ``step``: it is alive but cut off, its
    peers hang in the all-reduce until the collective timeout.
``node_kill_in_ckpt``
    the node of the checkpoint writer (rank 0) killed halfway through writing the checkpoint
    of step ``step`` (a multiple of ``ckpt_every``).

After a node is lost the job needs ``nodes`` nodes again: for each of the first ``spares`` losses
a spare is already waiting in the rendezvous (the loss waits for it: every rank holds before the
failure's step until the spare's agent has joined the rendezvous's redundancy list, or is overdue:
:func:`course_lib.labkit.spare_state`) and takes the
lost node's place; for a loss beyond them, the lab (standing in for the scheduler) provisions a new
node ``replace_delay_s`` after the job noticed the loss (a fresh namespace and a fresh torchrun
agent, which has to start up before it can join).

Checkpoints go to a folder every node sees (the lab's stand-in for shared storage), written by
rank 0 with the course's checksummed store every ``ckpt_every`` steps.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from .._validate import check_int_non_negative, check_int_positive, check_non_negative, check_positive, checked
from ..faultlab.spec import Failure
from ..labkit.config import LabConfigBase, at_least, records

__all__ = ["NODE_FAILURE_KINDS", "NodeFailure", "NodeJobConfig", "NodeLabConfig"]

NODE_FAILURE_KINDS = ("node_kill", "link_cut", "node_kill_in_ckpt")


@dataclass(frozen=True)
class NodeFailure(Failure):
    """One node failure: ``kind`` (see the module doc) at step ``step`` on the node of ``rank``
    (notebook 07's :class:`~course_lib.faultlab.Failure`, with the node kinds)."""

    KINDS = NODE_FAILURE_KINDS
    ON_WRITER = ("node_kill_in_ckpt",)  # the checkpoint writer's node
    IN_CKPT = ("node_kill_in_ckpt",)


@dataclass(frozen=True)
class NodeJobConfig(LabConfigBase):
    """The job every namespaced-nodes lab runs (notebook 07's training script, one torchrun agent per node):
    the fields the nodes lab (:class:`NodeLabConfig`) and the lemon lab
    (:class:`~course_lib.nodelab.lemon.LemonLabConfig`) share, declared once (times in seconds).

    nodes: nodes in the job. collective_timeout_s: process-group timeout (what a cut link runs into).
    dead_node_s: the rendezvous declares a silent node dead after this many seconds (torchrun's
    ``keep_alive_interval`` of 1 s times ``keep_alive_max_attempt``).
    steps, ckpt_every, monitor_interval_s, step_compute_s, keep, seed, batch, features, hidden: as in
    notebook 07's :class:`course_lib.faultlab.LabConfig`.
    """

    steps: int = checked(check_int_positive, default=16)
    ckpt_every: int = checked(check_int_positive, default=4)
    nodes: int = checked(at_least(2, "a lost node needs a surviving peer"), default=2)
    collective_timeout_s: float = checked(check_positive, default=3.0)
    dead_node_s: int = checked(check_int_positive, default=3)
    monitor_interval_s: float = checked(check_positive, default=0.1)
    step_compute_s: float = checked(check_non_negative, default=0.05)
    keep: int = checked(at_least(2, "fallback needs an older checkpoint"), default=3)
    seed: int = checked(check_int_non_negative, default=0)
    batch: int = checked(check_int_positive, default=32)
    features: int = checked(check_int_positive, default=16)
    hidden: int = checked(check_int_positive, default=32)


@dataclass(frozen=True)
class NodeLabConfig(NodeJobConfig):
    """Settings of one nodes-lab run: the job (:class:`NodeJobConfig`) and its node failures (times in seconds).

    spares: hot-spare nodes, one waiting in the rendezvous at a time; the first ``spares`` node
        losses are each absorbed by a spare that is already waiting when the loss strikes.
    replace_delay_s: a loss beyond the spares: seconds from the job noticing it (an agent's
        ``agent_noticed``) until the lab starts a replacement node (the scheduler's provisioning time; 0: at once).
    failures: the node failures, in order of strictly increasing step.
    nproc_per_node: ranks per node (the world is ``nodes x nproc_per_node`` ranks).
    state_mb: as in notebook 07's :class:`course_lib.faultlab.LabConfig`.
    """

    failures: tuple = checked(records(NodeFailure), default=())
    spares: int = checked(check_int_non_negative, default=0)
    replace_delay_s: float = checked(check_non_negative, default=0.0)
    nproc_per_node: int = checked(check_int_positive, default=1)
    state_mb: float = checked(check_non_negative, default=0.0)

    def _validate_fields(self):
        NodeFailure.check_order(self.failures, ranks=self.world, steps=self.steps, ckpt_every=self.ckpt_every)
        if any(f.kind == "link_cut" for f in self.failures) and self.collective_timeout_s > 120:
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

    def absorbed_by_spare(self, i: int) -> bool:
        """Whether failure ``i`` (a node loss) is absorbed by a hot spare (the first ``spares`` are)."""
        return i < self.spares

    def job_config(self) -> dict:
        """The settings notebook 07's training script reads (:mod:`course_lib.faultlab.job`); a loss
        that a spare absorbs waits until the spare waits in the rendezvous (``wait_for_spare``)."""
        d = {k: getattr(self, k) for k in ("steps", "ckpt_every", "collective_timeout_s", "step_compute_s",
                                           "state_mb", "keep", "seed", "batch", "features", "hidden")}
        d["failures"] = [dict(dataclasses.asdict(f), wait_for_spare=self.absorbed_by_spare(i))
                         for i, f in enumerate(self.failures)]
        d["snapshot"] = "disk"
        return d
