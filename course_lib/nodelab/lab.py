"""``run_nodelab``: the training job on several nodes (network namespaces), one torchrun agent per
node, a node lost on purpose, every restart measured from the event log (notebook 11).

    from course_lib.nodelab import NodeFailure, NodeLabConfig, run_nodelab
    ref = run_nodelab(NodeLabConfig())                                   # 2 nodes, no failure
    res = run_nodelab(NodeLabConfig(spares=1, failures=[NodeFailure("node_kill", 7)]))
    res.restarts[0].stages_s()    # {'detect': ..., 'reschedule': ..., 'reload': ..., 'rewind': ...}
    same_final_state(ref, res)    # notebook 07's bit-for-bit comparison

    res = run_tier_nodelab(TierLabConfig(failures=[NodeLoss(11, nodes=(1,))], spares=1))
    res.resumed                   # {rank: (step, tier)}: the lost node's shard from its buddy's memory

Each node runs ``torchrun --nnodes N:N --rdzv-backend c10d`` (elastic membership) inside its own
namespace, its workers talk gloo over the node's link; the c10d rendezvous server runs in the
lab's switch namespace, on the port it bound (it logs it). Nodes ``n0 .. n{N-1}`` start first.

What happens when is decided by states the job reports, never by a sleep:

* **spares**: one waits at a time (a second agent waiting beyond the job's node count keeps the c10d
  rendezvous re-forming). The first starts once a round has formed (every node's agent spawned its
  workers); the next once the previous spare has taken a place and its round has formed. A spare
  waits in the rendezvous's redundancy list (its agent logs ``rdzv_waiting``), so ranks follow the
  node order (torchrun orders a round's nodes by address).
* **losses**: a node loss that a spare is to absorb waits, on every rank before its step, until the
  log shows a spare waiting (:func:`course_lib.labkit.spare_state`; or until the spare is overdue,
  ``SPARE_MARGIN`` x the job's own measured agent start-up: under load the rendezvous can re-open a
  round while a spare joins, and then it never waits in the redundancy list); the job logs ``inject`` and the
  lab kills the node (agent, workers, memory) at once. A loss beyond the spares gets a replacement
  node ``replace_delay_s`` after the job noticed it (an agent's ``agent_noticed``).

Everything runs under the lab kit's :class:`~course_lib.labkit.Lab` and inside a
:class:`~course_lib.nodelab.net.LabNetwork`, whose teardown deletes the namespaces: every process,
namespace and file of the run is gone when the call returns, whatever happened.

The two-tier run (:func:`run_tier_nodelab`) runs the two-tier checkpoint's job
(:mod:`course_lib.nodelab.tiers_job`) the same way, with each node's memory holder
(``course_lib/checkpoint/holder.py``) inside the node's namespace: killing a node kills its
holder, so the copies in its memory are gone.
"""
from __future__ import annotations

import os
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from .._validate import check_positive
from ..faultlab.lab import JOB_SCRIPT, RestartResult, finish, write_job_config
from ..labkit import EventLog, Lab, LabError, events_of, waiting_nodes
from .net import IFACE, SWITCH_ADDR, LabNetwork, net_admin_missing
from .spec import NODE_FAILURE_KINDS, NodeLabConfig
from .tierlab import HOLDER_SCRIPT, TierLabConfig, TierResult, tier_result
from .tierlab import JOB_SCRIPT as TIERS_JOB_SCRIPT

__all__ = ["NodeLabUnavailable", "run_nodelab", "run_tier_nodelab", "uninterrupted_reference"]


#: The rank of the events the lab itself logs (agents log -1, the rendezvous server -2).
LAB_RANK = -3


class NodeLabUnavailable(LabError):
    """This machine cannot run the nodes lab (the message says why, in one line)."""


@dataclass(frozen=True)
class _Job:
    """What every node runs: the script, its config file, and torchrun's membership settings."""

    script: Path
    cfg_path: Path
    nodes: int
    spares: int
    replace_delay_s: float
    absorbed: tuple  # per failure: whether a spare absorbs it
    nproc_per_node: int = 1
    max_restarts: int = 1
    monitor_interval_s: float = 0.1
    dead_node_s: int = 3
    holder_keep: int | None = None  # a memory holder per node (the two-tier job), keeping this many copies
    max_no_progress_restarts: int | None = None  # the restart-loop guard's limit (None: NVRx's default)
    read_timeout_s: int = 15  # a rendezvous store read gives up after this (short enough that a lost master node is noticed). 5 s once let an agent die on a read answered late, put down to load 7-8 then; the bridge-MAC fault fixed since (net.SWITCH_MAC) cut nodes off the store for 15-45 s and may have been that cause: not remeasured


def _agent_cmd(job: _Job, net: LabNetwork, i: int, rdzv_port: int) -> list[str]:
    conf = ",".join([
        "is_host=false",  # the rendezvous server runs in the switch, not on a node
        "keep_alive_interval=1",
        f"keep_alive_max_attempt={job.dead_node_s}",
        "join_timeout=300",
        "last_call_timeout=1",
        f"read_timeout={job.read_timeout_s}",  # a store read gives up after read_timeout_s, not torch's 60
    ])
    return [
        sys.executable, "-m", "course_lib.faultlab.launch",
        "--nnodes", f"{job.nodes}:{job.nodes}",
        "--nproc-per-node", str(job.nproc_per_node),
        "--rdzv-backend", "c10d",
        "--rdzv-endpoint", f"{SWITCH_ADDR}:{rdzv_port}",
        "--rdzv-id", net.run_id,
        "--rdzv-conf", conf,
        "--local-addr", net.addr(i),
        "--max-restarts", str(job.max_restarts),
        "--monitor-interval", str(job.monitor_interval_s),
        *(["--max-no-progress-restarts", str(job.max_no_progress_restarts)] if job.max_no_progress_restarts else []),
        str(job.script), str(job.cfg_path),
    ]  # fmt: skip


def _round_formed(events: list, node: str | None, nodes: int) -> bool:
    """A round has formed (every one of ``nodes`` agents spawned its workers in it); with ``node``, one
    that ``node`` takes part in."""
    spawned: dict[int, set] = {}
    for e in events_of(events, "workers_spawned"):
        spawned.setdefault(e["gen"], set()).add(e.get("node"))
    return any(len(members) == nodes and (node is None or node in members) for members in spawned.values())


class _Cluster:
    """The nodes of one run (notebooks 11, 14): the lab's network, the rendezvous server in the switch and
    one torchrun agent per node. :meth:`start_node` brings up a new node, :meth:`start_agent` starts an agent
    on an existing one (a node that rejoins after it went down), :meth:`kill_node` takes a node down whole."""

    def __init__(self, lab: Lab, job: _Job):
        self.lab, self.job = lab, job
        self.base_env = lab.env(
            FAULTLAB_EVENTS=lab.events_path,
            FAULTLAB_GEN_FROM="round",
            NODELAB_IFACE=IFACE,
            GLOO_SOCKET_IFNAME=IFACE,
            TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1,  # see course_lib.faultlab.lab (pytorch/pytorch#135712)
            LOGLEVEL=os.environ.get("LOGLEVEL", "WARNING"),
        )
        self.net = net = LabNetwork()
        lab.on_close(net.close)
        self.log = EventLog(lab.events_path, rank=LAB_RANK)  # the lab's own events (node_start)
        lab.on_close(self.log.close)
        net.__enter__()
        (lab.run_dir / "netns-tag").write_text(net.tag)  # every namespace of this run starts with it
        self.agents: dict[str, object] = {}
        self._starts: dict[str, int] = {}
        store = [sys.executable, "-m", "course_lib.nodelab.store", SWITCH_ADDR, "0", lab.events_path]
        lab.start("rdzv", [*net.prefix("switch"), *store], env=self.base_env)
        self.rdzv_port = lab.wait_for("rdzv_ready", what="the rendezvous server")["port"]

    def node_env(self, i: int, **extra) -> dict:
        name = f"n{i}"
        return dict(self.base_env, NODELAB_NODE=name, TIERS_NODE=name, FAULTLAB_NODE=name,
                    **{k: str(v) for k, v in extra.items()})

    def start_agent(self, i: int, **env) -> str:
        """Start node ``n<i>``'s agent (and its memory holder, for the two-tier job) inside its namespace;
        ``env``: extra variables for every process of the node. Returns the node's name."""
        job, lab, net = self.job, self.lab, self.net
        name = f"n{i}"
        n = self._starts[name] = self._starts.get(name, 0) + 1
        tag = name if n == 1 else f"{name}-{n}"  # a node that rejoins keeps its name; its logs get a new file
        env = self.node_env(i, **env)
        if job.holder_keep is not None:  # the node's memory, beside its agent
            holder = lab.start(f"holder-{tag}", [*net.prefix(i), sys.executable, HOLDER_SCRIPT, "--host", net.addr(i),
                                                 "--port", "0", "--keep", job.holder_keep], env=env, pipe=True)
            line = holder.stdout.readline()
            if not line.startswith("HOLDER "):
                lab.fail(f"the memory holder of node {name} did not start: {line!r}")
            env["TIERS_HOLDER"] = line.split()[1]
        self.agents[name] = lab.start(f"agent-{tag}", [*net.prefix(i), *_agent_cmd(job, net, i, self.rdzv_port)], env=env)
        return name

    def start_node(self, **env) -> str:
        """A new node (namespace, link, address) and its agent; returns its name. Logs ``node_start``
        (rank :data:`LAB_RANK`, the node's name) at the moment the lab begins to bring it up."""
        t0 = time.time()
        i = self.net.add_node()
        self.log("node_start", t=t0, node=f"n{i}")
        return self.start_agent(i, **env)

    def kill_node(self, name: str) -> None:
        """Every process of node ``name`` SIGKILLed at once (agent, workers, memory)."""
        self.net.kill_node(int(name[1:]))


def _run_on_nodes(lab: Lab, job: _Job) -> float:
    """Build the network, start the rendezvous server, the nodes and the spares, act on node losses
    (kill the node, bring a replacement), wait for rank 0's ``done``; return the wall time."""
    cluster = _Cluster(lab, job)
    net, agents = cluster.net, cluster.agents
    start_node = cluster.start_node

    for _ in range(job.nodes):
        start_node()
    spares: list[str] = []
    acted: set[int] = set()  # failures whose node the lab has killed
    spares_left = job.spares  # waiting spares not yet used up by a loss
    to_replace: list[tuple[dict, int]] = []  # (loss, nodes no spare takes), waiting for the job's notice
    due: list[float] = []  # start times of replacement nodes
    lost: set[str] = set()
    t_done = None
    while True:
        events = lab.events()
        lab.check_deadline("nodes lab run", events)
        # one spare waits at a time: the next once the previous one has a place in a formed round
        if len(spares) < job.spares and not waiting_nodes(events) and \
                _round_formed(events, spares[-1] if spares else None, job.nodes):
            spares.append(start_node())
        for e in events_of(events, "inject"):
            if e.get("kind") not in NODE_FAILURE_KINDS or e["failure"] in acted:
                continue
            acted.add(e["failure"])
            names = e.get("nodes") or [e["node"]]
            lost.update(names)
            if e["kind"] != "link_cut":  # the whole host goes at once: agent, workers, memory
                for name in names:
                    net.kill_node(int(name[1:]))
            # a spare takes one lost node's place; a loss of more nodes than the spares left (a node and its
            # buddy) needs fresh nodes for the rest
            taken = min(spares_left, 1) if job.absorbed[e["failure"]] else 0  # one spare waits at a time
            spares_left -= taken
            if len(names) > taken:
                to_replace.append((e, len(names) - taken))
        for item in list(to_replace):  # the scheduler learns of a lost node from the job noticing it
            e, n_fresh = item
            noticed = next((n for n in events_of(events, "agent_noticed") if n["t"] >= e["t"]), None)
            if noticed is not None:
                to_replace.remove(item)
                due.extend(noticed["t"] + job.replace_delay_s for _ in range(n_fresh))
        now = time.time()
        for t in [t for t in due if t <= now]:
            due.remove(t)
            start_node()
        if t_done is None:
            t_done = next((e["t"] for e in events if e["ev"] == "done" and e["rank"] == 0), None)
        if t_done is not None:
            alive = [p for name, p in agents.items() if name not in lost and p.poll() is None]
            if not alive or now - t_done > 10.0:  # the agents' exit barrier, bounded
                break
        time.sleep(0.05)
    return lab.elapsed_s()


def _prepare(timeout_s) -> float:
    timeout_s = check_positive("timeout_s", timeout_s)
    missing = net_admin_missing()
    if missing:
        raise NodeLabUnavailable(missing)
    return timeout_s


def run_nodelab(
    config: NodeLabConfig = NodeLabConfig(),
    *,
    timeout_s: float = 120.0,
    run_dir: str | os.PathLike | None = None,
) -> RestartResult:
    """Run ``config`` on ``config.nodes`` (+ ``config.spares``) namespaced nodes; return a
    :class:`course_lib.faultlab.RestartResult` (its ``restarts`` measured from the event log).

    Raises :class:`NodeLabUnavailable` (before creating anything) where network namespaces
    cannot be made, :class:`course_lib.labkit.LabError` when the job does not finish within
    ``timeout_s``.
    """
    if not isinstance(config, NodeLabConfig):
        raise ValueError(f"config must be a NodeLabConfig (got {type(config).__name__})")
    cfg = config
    timeout_s = _prepare(timeout_s)
    # the longest silences the run's settings ask for: a collective timeout, a dead node's expiry, a replacement's
    # delay, a store read waiting out its timeout
    waits = cfg.collective_timeout_s + cfg.dead_node_s + cfg.replace_delay_s + _Job.read_timeout_s
    with Lab(run_dir, timeout_s=timeout_s, prefix="nodelab", stall_waits_s=waits) as lab:
        final_path = lab.run_dir / "final.pt"
        final_path.unlink(missing_ok=True)
        persist = lab.run_dir / "persist"  # what every node sees: the lab's shared storage
        shutil.rmtree(persist, ignore_errors=True)
        paths = {"events": str(lab.events_path), "disk": str(persist), "shm": str(lab.run_dir / "unused-shm"),
                 "final": str(final_path)}
        cfg_path = write_job_config(lab.run_dir, cfg.job_config(), paths)
        (lab.run_dir / "nodelab.json").write_text(cfg.to_json())
        job = _Job(JOB_SCRIPT, cfg_path, cfg.nodes, cfg.spares, cfg.replace_delay_s,
                   tuple(cfg.absorbed_by_spare(i) for i in range(len(cfg.failures))), cfg.nproc_per_node,
                   len(cfg.failures) + 1, cfg.monitor_interval_s, cfg.dead_node_s)
        wall = _run_on_nodes(lab, job)
    return finish(lab, cfg, wall, 0, final_path)


def uninterrupted_reference(config: NodeLabConfig = NodeLabConfig(), *,
                            run_dir: str | os.PathLike | None = None) -> RestartResult:
    """What :func:`run_nodelab` of ``config`` without its failures ends with, computed in this process (no
    torchrun, no namespaces): the fault lab's in-process run of the same job
    (:func:`course_lib.faultlab.reference_run`, the job's own step functions; its final state in
    ``run_dir/final.pt``, its digest, ``step_done`` and ``done`` events) with ``config`` as its config, for
    :func:`course_lib.faultlab.same_final_state`. Across nodes the job is the same script on the same
    ranks (one process group, gloo), so the end is the same bit for bit. It has no restarts and started no
    process. The job's world (``nodes x nproc_per_node``) must be 2 ranks (gloo's sum over more has an order
    of its own)."""
    if not isinstance(config, NodeLabConfig):
        raise ValueError(f"config must be a NodeLabConfig (got {type(config).__name__})")
    if config.world != 2:
        raise ValueError(f"config.nodes x config.nproc_per_node must be 2 for an in-process reference "
                         f"(gloo's sum over more ranks has an order of its own; got {config.world})")
    import dataclasses

    from ..faultlab import LabConfig, reference_run

    job = LabConfig(steps=config.steps, nproc=config.world, seed=config.seed, batch=config.batch,
                    features=config.features, hidden=config.hidden)
    return dataclasses.replace(reference_run(job, run_dir=run_dir), config=config.replace(failures=()))


def run_tier_nodelab(config: TierLabConfig = TierLabConfig(), *, timeout_s: float = 150.0,
                     run_dir: str | os.PathLike | None = None) -> TierResult:
    """Run the two-tier checkpoint's job (:class:`~course_lib.nodelab.tierlab.TierLabConfig`) on
    ``config.nodes`` namespaced nodes, each with its memory holder, with the config's node loss (node
    ``n<i>`` runs rank ``i``). The first ``config.spares`` losses are absorbed by waiting spares, later
    ones by fresh nodes ``replace_delay_s`` after the loss is noticed. The job restores each shard from
    the newest step every rank can load: its own node's memory, another node's (the buddy), or the
    persisted store."""
    if not isinstance(config, TierLabConfig):
        raise ValueError(f"config must be a TierLabConfig (got {type(config).__name__})")
    if config.damage:
        raise ValueError("damage is the loopback lab's (run_tier_lab): a namespaced node's memory is not reachable from here")
    if len(config.failures) > 1:
        raise ValueError(f"failures must hold at most one NodeLoss on namespaced nodes (a spare's place in the node "
                         f"order is the rendezvous's; several losses in one run are the loopback lab's, run_tier_lab; "
                         f"got {len(config.failures)})")
    timeout_s = _prepare(timeout_s)
    waits = config.collective_timeout_s + _Job.dead_node_s + config.replace_delay_s + _Job.read_timeout_s
    with Lab(run_dir, timeout_s=timeout_s, prefix="tiers", stall_waits_s=waits) as lab:
        cfg_path = config.write_job(lab, spares=config.spares)
        job = _Job(TIERS_JOB_SCRIPT, cfg_path, config.nodes, config.spares, config.replace_delay_s,
                   tuple(config.absorbed_by_spare(i) for i in range(len(config.failures))), 1,
                   1 + len(config.failures), holder_keep=config.keep)
        wall = _run_on_nodes(lab, job)
    return tier_result(lab, config, wall)
