"""The two-tier checkpoint's loopback lab: "nodes" on 127.0.0.1, one torchrun agent and one
memory holder each; kill nodes, restart the job on replacements, see which tier it resumed from
(the tests and notebook 11 use it; the namespace lab replaces the loopback "nodes" by real
network namespaces and keeps the job and the holders).

    from course_lib.nodelab.tierlab import NodeLoss, TierLabConfig, run_tier_lab
    ref = run_tier_lab(TierLabConfig())                            # never fails
    res = run_tier_lab(TierLabConfig(failures=[NodeLoss(11, nodes=(1,))]))
    res.resumed        # {rank: (step, tier)} of the generation after the kill
    res.digests == ref.digests                                      # bit-identical final shards
    res = run_tier_lab(TierLabConfig(steps=24, failures=[NodeLoss(11), NodeLoss(17, nodes=(1, 2))]))
    res.resumed_by_gen  # {gen: {rank: (step, tier)}}: generation k + 1 resumed after loss k

A "node" here is a set of processes: its torchrun agent (with its worker) and its holder
(``course_lib/checkpoint/holder.py``, the node's memory). Killing a node SIGKILLs all of them at
once, so the copies in its memory are gone. The job runs in generations, as under a scheduler
that requeues it: generation 0 on nodes 0..N-1; after a kill, generation 1 on the surviving
nodes (their holders, and the copies in them, are still up) and one fresh node per lost one (a
replacement with an empty holder), which takes the lost node's place in the node order. Several losses
(``failures``, in increasing step order) strike one after the other, one per generation: loss ``k`` at its
step of generation ``k``, then generation ``k + 1`` on the survivors and replacements
(:meth:`TierLabConfig.node_names`).
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
    ``how`` is ``flip`` (bytes flipped) or ``truncate`` (its tail lost); ``after``: the loss (its index in
    :attr:`TierLabConfig.failures`) whose restart it precedes."""

    node: int = checked(check_int_non_negative)
    shard: int = checked(check_int_non_negative)
    step: int = checked(check_int_non_negative)
    how: str = checked(one_of(("flip", "truncate")), default="flip")
    after: int = checked(check_int_non_negative, default=0)  # the index of the loss (in failures) it follows


@dataclass(frozen=True)
class TierLabConfig(LabConfigBase):
    """One two-tier lab job and its failure.

    nodes: nodes (one rank each). steps: optimizer steps. every: steps between snapshots.
    persist_every: every k-th snapshot is persisted. params, batch: shard size and batch.
    ballast_floats: extra untrained floats per shard (a bigger state to copy). keep: copies kept
    per shard by each holder and by the store. step_compute_s: a sleep per step (simulated compute).
    failures: :class:`NodeLoss` records in strictly increasing step order, one per generation (the loopback
    lab; on namespaced nodes at most one). damage: :class:`Damage` records (loopback lab only).
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
        last = 0
        for i, f in enumerate(self.failures):
            if f.step > self.steps:
                raise ValueError(f"failures[{i}].step must be an integer in [1, steps={self.steps}] (got {f.step})")
            if f.step <= last:  # loss i strikes in generation i, which resumes before loss i-1's step
                raise ValueError(f"failures[{i}].step must be > {last} (the losses strike one after the other, in "
                                 f"increasing step order; got {f.step})")
            last = f.step
            if max(f.nodes) >= self.nodes:
                raise ValueError(f"failures[{i}].nodes must hold node indices in [1, {self.nodes - 1}] "
                                 f"(node 0 stays rank 0 in every generation; got {f.nodes})")
        for i, d in enumerate(self.damage):
            if not self.failures:
                raise ValueError(f"damage[{i}].node must name a surviving node of a run with a NodeLoss (no failures; "
                                 f"got node {d.node})")
            if d.after >= len(self.failures):
                raise ValueError(f"damage[{i}].after must be the index of a NodeLoss in failures, an integer in "
                                 f"[0, {len(self.failures) - 1}] (got {d.after})")
            if d.node in self.failures[d.after].nodes or d.node >= self.nodes:
                raise ValueError(f"damage[{i}].node must name a surviving node of a run with a NodeLoss, one that "
                                 f"failures[{d.after}] spares (got node {d.node})")

    def node_names(self, gen: int) -> list[str]:
        """The loopback lab's node names in generation ``gen`` (position ``i`` runs rank ``i``): ``n0 ..``; the
        replacement of a node lost in loss ``k`` (:attr:`failures`) is ``spare<i>`` (``spare<i>-<k>`` for k > 0)."""
        gen = check_int_non_negative("gen", gen)
        if gen > len(self.failures):
            raise ValueError(f"gen must be an integer in [0, {len(self.failures)}] (one generation per loss, then "
                             f"the last; got {gen})")
        names = [f"n{i}" for i in range(self.nodes)]
        for k, f in enumerate(self.failures[:gen]):
            for i in f.nodes:
                names[i] = f"spare{i}" if k == 0 else f"spare{i}-{k}"
        return names

    def absorbed_by_spare(self, i: int) -> bool:
        return i < self.spares

    def write_job(self, lab: Lab, spares: int = 0) -> Path:
        """The job's config file (:mod:`course_lib.nodelab.tiers_job` reads it) in ``lab``'s folder."""
        fs = [{"kind": f.kind, "step": f.step, "rank": min(f.nodes), "nodes": [self.node_names(k)[i] for i in f.nodes],
               "wait_for_spare": k < spares} for k, f in enumerate(self.failures)]
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
    [copies skipped]}``. resumed_by_gen, skipped_by_gen: the same for every generation, ``{gen: {rank: ...}}``
    (generation ``k + 1`` is the restart after loss ``k``); loaded_by_gen: ``{gen: {rank: sha256}}`` of the
    state each rank loaded (the digest :func:`reference_digests` gives for that step).
    """

    restarts: list = field(default_factory=list)
    resumed: dict = field(default_factory=dict)
    digests: dict = field(default_factory=dict)
    restore_s: dict = field(default_factory=dict)
    skipped: dict = field(default_factory=dict)
    resumed_by_gen: dict = field(default_factory=dict)
    skipped_by_gen: dict = field(default_factory=dict)
    loaded_by_gen: dict = field(default_factory=dict)


def tier_result(lab: Lab, config: TierLabConfig, wall_s: float) -> TierResult:
    """The run's :class:`TierResult`, read from its event log (:class:`LabError` unless every rank is done)."""
    from ..faultlab.events import restart_stages

    evs = lab.events()
    by_gen: dict = {}
    for e in evs:
        if e["ev"] == "state_loaded":
            by_gen.setdefault(e["gen"], {})[e["rank"]] = e
    by_gen = {g: dict(sorted(by_gen[g].items())) for g in sorted(by_gen)}
    last = max(by_gen, default=0)
    loaded = by_gen.get(last, {})
    done = {e["rank"]: e["digest"] for e in evs if e["ev"] == "done" and e["gen"] == last}
    output = lab.tail(1500)
    if len(done) != config.nodes:
        raise LabError(f"the job finished without a 'done' from every rank ({sorted(done)}); output tails:\n{output}")
    return TierResult(
        config=config, events=evs, run_dir=lab.run_dir, wall_s=wall_s, output=output, pids=frozenset(lab.pids),
        restarts=restart_stages(evs), resumed={r: (e["step"], e["source"]) for r, e in sorted(loaded.items())},
        digests=dict(sorted(done.items())), restore_s={r: e["restore_s"] for r, e in sorted(loaded.items())},
        skipped={r: e["skipped"] for r, e in sorted(loaded.items())},
        resumed_by_gen={g: {r: (e["step"], e["source"]) for r, e in ls.items()} for g, ls in by_gen.items()},
        skipped_by_gen={g: {r: e["skipped"] for r, e in ls.items()} for g, ls in by_gen.items()},
        loaded_by_gen={g: {r: e.get("digest") for r, e in ls.items()} for g, ls in by_gen.items()},
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
    """Run the job on ``config.nodes`` loopback nodes; for the ``k``-th :class:`NodeLoss` in ``config.failures``,
    kill those nodes at its step of generation ``k`` (once the job reports it is there) and rerun on the
    survivors and replacements as generation ``k + 1``; each :class:`Damage` is applied to a surviving node's
    memory between the kill of its loss (``after``) and that rerun. See the module doc."""
    if not isinstance(config, TierLabConfig):
        raise ValueError(f"config must be a TierLabConfig (got {type(config).__name__})")
    from ..checkpoint.holder import HolderClient

    with Lab(run_dir, timeout_s=timeout_s, prefix="tiers") as lab:
        cfg_path = config.write_job(lab)
        names = config.node_names(0)
        holders = {name: start_holder(lab, f"holder-{name}", keep=config.keep) for name in names}
        # the rendezvous server (a c10d store outside every node, so no loss takes it down) binds port 0 and
        # logs the port it got; each generation is a rendezvous of its own on it
        lab.start("rdzv", [sys.executable, "-m", "course_lib.nodelab.store", "127.0.0.1", "0", lab.events_path])
        port = lab.wait_for("rdzv_ready", what="the rendezvous server")["port"]
        for gen in range(1 + len(config.failures)):
            loss = config.failures[gen] if gen < len(config.failures) else None
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
            if loss:
                alive = lambda: all(p.poll() is None for p in agents.values())  # noqa: E731
                lab.wait_for("inject", failure=gen, what=f"node loss {gen} at step {loss.step}", alive=alive)
                dead = [names[i] for i in loss.nodes]
                workers = [e["pid"] for e in lab.events()
                           if e["ev"] == "worker_start" and e.get("node") in dead and e.get("gen") == gen]
                for name in dead:  # the whole node at once: agent, its workers, its memory
                    for pid in (agents[name].pid, holders[name][0].pid, *workers):
                        kill_group(pid)
                for name in names:
                    lab.wait(agents[name], f"generation {gen}")
                for d in config.damage:  # memory damaged on a surviving node
                    if d.after != gen:
                        continue
                    client = HolderClient(holders[names[d.node]][1])
                    if not client.damage(lab.token, d.shard, d.step, d.how):
                        raise LabError(f"node {names[d.node]} holds no copy of shard {d.shard} step {d.step} to damage")
                    client.close()
                names = config.node_names(gen + 1)
                for i in loss.nodes:  # replacements with empty memory take the lost nodes' places
                    holders[names[i]] = start_holder(lab, f"holder-{names[i]}", keep=config.keep)
            else:
                for name in names:
                    rc = lab.wait(agents[name], f"generation {gen}")
                    if rc != 0:
                        lab.fail(f"generation {gen}: agent of {name} exited with {rc}")
        wall = lab.elapsed_s()
    return tier_result(lab, config, wall)


def reference_digests(config: TierLabConfig = TierLabConfig(), step: int | None = None) -> dict:
    """``{rank: sha256}`` of the shards of an uninterrupted run of ``config``'s job after ``step`` (default: the
    final ones, ``config.steps``), computed in this process by the workers' own step functions (no torchrun
    needed); the digest a worker logs of the state it loaded (``state_loaded``) is of this kind."""
    from .tiers_job import reference_digests as _reference

    if step is not None:
        step = check_int_non_negative("step", step)
        if step > config.steps:
            raise ValueError(f"step must be an integer in [0, steps={config.steps}] (got {step})")
    return _reference(asdict(config), config.nodes, step)
