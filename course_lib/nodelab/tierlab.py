"""The two-tier checkpoint's loopback lab: "nodes" on 127.0.0.1, one torchrun agent and one
memory holder each; kill nodes, restart the job on replacements, see which tier it resumed from
(the tests and notebook 11 use it; the namespace lab replaces the loopback "nodes" by real
network namespaces and keeps the job and the holders).

    from course_lib.nodelab.tierlab import NodeLoss, TierLabConfig, run_tier_lab
    ref = run_tier_lab(TierLabConfig())                            # never fails
    res = run_tier_lab(TierLabConfig(failures=[NodeLoss(11, nodes=(1,))]))
    res.resumed        # {rank: (step, tier)} of the generation after the kill
    res.digests == ref.digests                                      # bit-identical final shards

A "node" here is a set of processes: its torchrun agent (with its worker) and its holder
(``course_lib/checkpoint/holder.py``, the node's memory). Killing a node SIGKILLs all of them at
once, so the copies in its memory are gone. The job runs in generations, as under a scheduler
that requeues it: generation 0 on nodes 0..N-1; after a kill, generation 1 on the surviving
nodes (their holders, and the copies in them, are still up) and one fresh node per lost one (a
replacement with an empty holder), which takes the lost node's place in the node order.
Rendezvous is torchrun's c10d one, on a store the lab runs outside every node
(:mod:`course_lib.nodelab.store`: it binds port 0 and logs the port it got, so no port is chosen before
it is bound); the nodes' loopback addresses (:func:`loopback_addr`) sort as their indices, so node
``n<i>`` runs rank ``i``. Node 0 stays rank 0 in every generation: the lab never kills it. Everything runs under the lab kit's :class:`~course_lib.labkit.Lab`: every
process the lab starts is killed on the way out, also on failure.
"""
from __future__ import annotations

import json
import os
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .._validate import Validated, check_int_non_negative, check_int_positive, check_non_negative, check_positive, checked
from ..labkit import Lab, LabError, LabResult, kill_group
from ..labkit.config import LabConfigBase, at_least, one_of, records

__all__ = ["NodeLoss", "Damage", "TierLabConfig", "TierResult", "run_tier_lab", "reference_digests", "HOLDER_SCRIPT",
           "JOB_SCRIPT", "start_holder", "tier_result"]

HOLDER_SCRIPT = Path(__file__).resolve().parents[1] / "checkpoint" / "holder.py"  # run as a script: stdlib only
JOB_SCRIPT = Path(__file__).with_name("tiers_job.py")


def _node_indices(name, value):
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise ValueError(f"{name} must be a sequence of node indices (got {value!r})")
    out = tuple(sorted({check_int_positive(f"{name}[{i}]", n) for i, n in enumerate(value)}))
    if not out:
        raise ValueError(f"{name} must name at least one node (got {value!r})")
    return out


@dataclass(frozen=True)
class NodeLoss(Validated):
    """Nodes lost together at ``step`` (node ``n<i>`` runs rank ``i``; node 0 is never lost: it stays
    rank 0 in every generation, the fixed point of the node order). Every rank first waits until its newest snapshot is
    replicated and meets the others at a barrier, so which copies exist is known."""

    step: int = checked(check_int_positive)
    nodes: tuple = checked(_node_indices, default=(1,))
    kind = "node_kill"


@dataclass(frozen=True)
class Damage(Validated):
    """A copy damaged in a surviving node's memory between the loss and the restart (loopback lab):
    ``how`` is ``flip`` (bytes flipped) or ``truncate`` (its tail lost)."""

    node: int = checked(check_int_non_negative)
    shard: int = checked(check_int_non_negative)
    step: int = checked(check_int_non_negative)
    how: str = checked(one_of(("flip", "truncate")), default="flip")


@dataclass(frozen=True)
class TierLabConfig(LabConfigBase):
    """One two-tier lab job and its failure.

    nodes: nodes (one rank each). steps: optimizer steps. every: steps between snapshots.
    persist_every: every k-th snapshot is persisted. params, batch: shard size and batch.
    ballast_floats: extra untrained floats per shard (a bigger state to copy). keep: copies kept
    per shard by each holder and by the store. step_compute_s: a sleep per step (simulated compute).
    failures: at most one :class:`NodeLoss`. damage: :class:`Damage` records (loopback lab only).
    spares, replace_delay_s: on namespaced nodes (:func:`course_lib.nodelab.run_tier_nodelab`), as in
    :class:`~course_lib.nodelab.NodeLabConfig`. collective_timeout_s: the job's process-group timeout.
    """

    nodes: int = checked(at_least(2, "a buddy is another node"), default=3)
    steps: int = checked(check_int_positive, default=16)
    every: int = checked(check_int_positive, default=2)
    persist_every: int = checked(check_int_positive, default=3)
    params: int = checked(check_int_positive, default=32)
    batch: int = checked(check_int_positive, default=8)
    ballast_floats: int = checked(check_int_non_negative, default=0)
    keep: int = checked(check_int_positive, default=2)
    step_compute_s: float = checked(check_non_negative, default=0.0)
    seed: int = checked(check_int_non_negative, default=0)
    failures: tuple = checked(records(NodeLoss), default=())
    damage: tuple = checked(records(Damage), default=())
    spares: int = checked(check_int_non_negative, default=0)
    replace_delay_s: float = checked(check_non_negative, default=0.0)
    collective_timeout_s: float = checked(check_positive, default=30.0)

    def _validate_fields(self):
        if len(self.failures) > 1:
            raise ValueError(f"failures must hold at most one NodeLoss (the tier labs lose nodes once; got {len(self.failures)})")
        for f in self.failures:
            if f.step > self.steps:
                raise ValueError(f"failures[0].step must be an integer in [1, steps={self.steps}] (got {f.step})")
            if max(f.nodes) >= self.nodes:
                raise ValueError(f"failures[0].nodes must hold node indices in [1, {self.nodes - 1}] "
                                 f"(node 0 stays rank 0 in every generation; got {f.nodes})")
        lost = set(self.failures[0].nodes) if self.failures else set()
        for i, d in enumerate(self.damage):
            if not lost or d.node in lost or d.node >= self.nodes:
                raise ValueError(f"damage[{i}].node must name a surviving node of a run with a NodeLoss (got node {d.node})")

    def absorbed_by_spare(self, i: int) -> bool:
        return i < self.spares

    def write_job(self, lab: Lab, spares: int = 0) -> Path:
        """The job's config file (:mod:`course_lib.nodelab.tiers_job` reads it) in ``lab``'s folder."""
        fs = [{"kind": f.kind, "step": f.step, "rank": min(f.nodes), "nodes": [f"n{i}" for i in f.nodes],
               "wait_for_spare": i < spares} for i, f in enumerate(self.failures)]
        cfg = dict(asdict(self), failures=fs, job=lab.token, events=str(lab.events_path),
                   persist_dir=str(lab.run_dir / "persisted"))
        path = lab.run_dir / "config.json"
        path.write_text(json.dumps(cfg, indent=1, sort_keys=True))
        return path


@dataclass
class TierResult(LabResult):
    """A two-tier run (loopback or namespaced): the kit's :class:`~course_lib.labkit.LabResult` plus

    restarts: one :class:`~course_lib.faultlab.MeasuredRestart` per loss. resumed: ``{rank: (step,
    tier)}`` of the last generation (``(0, "init")`` without a loss). digests: ``{rank: sha256}`` of the
    final shards. restore_s: ``{rank: seconds}`` of the last generation's restore. skipped: ``{rank:
    [copies skipped]}``.
    """

    restarts: list = field(default_factory=list)
    resumed: dict = field(default_factory=dict)
    digests: dict = field(default_factory=dict)
    restore_s: dict = field(default_factory=dict)
    skipped: dict = field(default_factory=dict)


def tier_result(lab: Lab, config: TierLabConfig, wall_s: float) -> TierResult:
    """The run's :class:`TierResult`, read from its event log (:class:`LabError` unless every rank is done)."""
    from ..faultlab.events import restart_stages

    evs = lab.events()
    last = max((e["gen"] for e in evs if e["ev"] == "state_loaded"), default=0)
    loaded = {e["rank"]: e for e in evs if e["ev"] == "state_loaded" and e["gen"] == last}
    done = {e["rank"]: e["digest"] for e in evs if e["ev"] == "done" and e["gen"] == last}
    output = lab.tail(1500)
    if len(done) != config.nodes:
        raise LabError(f"the job finished without a 'done' from every rank ({sorted(done)}); output tails:\n{output}")
    return TierResult(
        config=config, events=evs, run_dir=lab.run_dir, wall_s=wall_s, output=output, pids=frozenset(lab.pids),
        restarts=restart_stages(evs), resumed={r: (e["step"], e["source"]) for r, e in sorted(loaded.items())},
        digests=dict(sorted(done.items())), restore_s={r: e["restore_s"] for r, e in sorted(loaded.items())},
        skipped={r: e["skipped"] for r, e in sorted(loaded.items())},
    )


def start_holder(lab: Lab, name: str = "holder", host: str = "127.0.0.1", keep: int = 2, prefix: tuple = ()):
    """Start a holder process under ``lab`` (killed when it closes); returns (proc, address).

    ``prefix`` goes before the command, e.g. ``LabNetwork.prefix(i)`` to start it inside a network
    namespace, listening on that namespace's ``host`` address. The holder binds port 0 and prints the
    address it bound.
    """
    proc = lab.start(name, [*prefix, sys.executable, HOLDER_SCRIPT, "--host", host, "--port", "0", "--keep", keep],
                     pipe=True)
    line = proc.stdout.readline()  # the holder's first line, or '' if it died
    if not line.startswith("HOLDER "):
        raise LabError(f"holder {name} did not start: {line!r}")
    return proc, line.split()[1]


def loopback_addr(i: int) -> str:
    """Loopback node ``n<i>``'s address: ``127.1.<100 + i>.1`` (every 127.x address is this machine's own). The c10d
    rendezvous ranks a round's nodes by address, so these sort as the node indices do (the same number of digits)."""
    i = check_int_non_negative("i", i)
    if i > 155:
        raise ValueError(f"i must be an integer in [0, 155] (got {i})")
    return f"127.1.{100 + i}.1"


def run_tier_lab(config: TierLabConfig = TierLabConfig(), *, timeout_s: float = 120.0, run_dir=None) -> TierResult:
    """Run the job on ``config.nodes`` loopback nodes; with a :class:`NodeLoss` in ``config.failures``,
    kill those nodes at its step of generation 0 (once the job reports it is there) and rerun on
    replacements; ``config.damage`` is applied to surviving nodes' memory between the kill and the
    rerun. See the module doc."""
    if not isinstance(config, TierLabConfig):
        raise ValueError(f"config must be a TierLabConfig (got {type(config).__name__})")
    from ..checkpoint.holder import HolderClient

    with Lab(run_dir, timeout_s=timeout_s, prefix="tiers") as lab:
        cfg_path = config.write_job(lab)
        names = [f"n{i}" for i in range(config.nodes)]
        holders = {name: start_holder(lab, f"holder-{name}", keep=config.keep) for name in names}
        loss = config.failures[0] if config.failures else None
        # the rendezvous server (a c10d store outside every node, so no loss takes it down) binds port 0 and
        # logs the port it got; each generation is a rendezvous of its own on it
        lab.start("rdzv", [sys.executable, "-m", "course_lib.nodelab.store", "127.0.0.1", "0", lab.events_path])
        port = lab.wait_for("rdzv_ready", what="the rendezvous server")["port"]
        for gen in range(1 + bool(loss)):
            agents = {}
            for i, name in enumerate(names):
                cmd = [sys.executable, "-m", "torch.distributed.run", "--nnodes", f"{config.nodes}:{config.nodes}",
                       "--nproc-per-node", "1", "--rdzv-backend", "c10d", "--rdzv-endpoint", f"127.0.0.1:{port}",
                       "--rdzv-id", f"{lab.token}-{gen}", "--rdzv-conf", "is_host=false,read_timeout=60",
                       "--local-addr", loopback_addr(i), "--max-restarts", "0", "--monitor-interval", "0.1",
                       JOB_SCRIPT, cfg_path]
                env = lab.env(TIERS_HOLDER=holders[name][1], TIERS_NODE=name, TIERS_GEN=gen,
                              LOGLEVEL=os.environ.get("LOGLEVEL", "ERROR"))
                agents[name] = lab.start(f"agent-{gen}-{name}", cmd, env=env)
            if gen == 0 and loss:
                alive = lambda: all(p.poll() is None for p in agents.values())  # noqa: E731
                lab.wait_for("inject", what=f"the node loss at step {loss.step}", alive=alive)
                dead = [f"n{i}" for i in loss.nodes]
                workers = [e["pid"] for e in lab.events() if e["ev"] == "worker_start" and e.get("node") in dead]
                for name in dead:  # the whole node at once: agent, its workers, its memory
                    for pid in (agents[name].pid, holders[name][0].pid, *workers):
                        kill_group(pid)
                for name in names:
                    lab.wait(agents[name], f"generation {gen}")
                for d in config.damage:  # memory damaged on a surviving node
                    client = HolderClient(holders[names[d.node]][1])
                    if not client.damage(lab.token, d.shard, d.step, d.how):
                        raise LabError(f"node {names[d.node]} holds no copy of shard {d.shard} step {d.step} to damage")
                    client.close()
                for i in loss.nodes:  # replacements with empty memory take the lost nodes' places
                    names[i] = f"spare{i}"
                    holders[names[i]] = start_holder(lab, f"holder-{names[i]}", keep=config.keep)
            else:
                for name in names:
                    rc = lab.wait(agents[name], f"generation {gen}")
                    if rc != 0:
                        lab.fail(f"generation {gen}: agent of {name} exited with {rc}")
        wall = lab.elapsed_s()
    return tier_result(lab, config, wall)


def reference_digests(config: TierLabConfig = TierLabConfig()) -> dict:
    """``{rank: sha256}`` of the final shards of an uninterrupted run of ``config``'s job, computed
    in this process by the workers' own step functions (no torchrun needed)."""
    from .tiers_job import reference_digests as _reference

    return _reference(asdict(config), config.nodes)
