"""``run_nodelab``: the training job on several nodes (network namespaces), one torchrun agent per
node, a node lost on purpose, every restart measured from the event log (notebook 11).

    from course_lib.nodelab import NodeFailure, NodeLabConfig, run_nodelab
    ref = run_nodelab(NodeLabConfig())                                   # 2 nodes, no failure
    res = run_nodelab(NodeLabConfig(spares=1, failures=[NodeFailure("node_kill", 7)]))
    res.restarts[0].stages_s()    # {'detect': ..., 'reschedule': ..., 'reload': ..., 'rewind': ...}
    same_final_state(ref, res)    # notebook 07's bit-for-bit comparison

    res = run_tier_nodelab(TierLabConfig(), kill_nodes=("n1",), kill_step=11, spares=1)
    res.resumed                   # {rank: (step, tier)}: the lost node's shard from its buddy's memory

Each node runs ``torchrun --nnodes N:N --rdzv-backend c10d`` (elastic membership) inside its own
namespace, its workers talk gloo over the node's link; the c10d rendezvous server runs in the
lab's switch namespace. Nodes ``n0 .. n{N-1}`` start first; spares (``n{N}`` ...) start once the
job's first rendezvous round has formed (every node's agent has spawned its workers), so they wait in the rendezvous's redundancy list and ranks follow
the node order (torchrun orders a round's nodes by address). Everything runs inside
:class:`~course_lib.nodelab.net.LabNetwork`, whose teardown SIGKILLs every process of the lab and
deletes its namespaces, whatever happens.

The two-tier run (:func:`run_tier_nodelab`) runs the two-tier checkpoint's job
(``course_lib/checkpoint/tiers_job.py``) the same way, with each node's memory holder
(``course_lib/checkpoint/holder.py``) inside the node's namespace: killing a node kills its
holder, so the copies in its memory are gone.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .._validate import check_int_non_negative, check_non_negative, check_positive
from ..faultlab.events import read_events, restart_stages
from ..faultlab.lab import JOB_SCRIPT, LabError, LabResult, _temporary_run_dir
from .net import IFACE, SWITCH_ADDR, LabNetwork, net_admin_missing
from .spec import NodeLabConfig

__all__ = ["NodeLabUnavailable", "TierNodeLabResult", "run_nodelab", "run_tier_nodelab", "RDZV_PORT"]

RDZV_PORT = 29400
NODE_LOSS_KINDS = ("node_kill", "link_cut", "node_kill_in_ckpt")
HOLDER_SCRIPT = Path(__file__).resolve().parents[1] / "checkpoint" / "holder.py"
TIERS_JOB_SCRIPT = Path(__file__).resolve().parents[1] / "checkpoint" / "tiers_job.py"


class NodeLabUnavailable(RuntimeError):
    """This machine cannot run the nodes lab (the message says why, in one line)."""


@dataclass(frozen=True)
class _Job:
    """What every node runs: the script, its config file, and torchrun's membership settings."""

    script: Path
    cfg_path: Path
    nodes: int
    spares: int
    replace_delay_s: float
    nproc_per_node: int = 1
    max_restarts: int = 1
    monitor_interval_s: float = 0.1
    dead_node_s: int = 3
    holder_keep: int | None = None  # a memory holder per node (the two-tier job), keeping this many copies


def _agent_cmd(job: _Job, net: LabNetwork, i: int) -> list[str]:
    conf = ",".join([
        "is_host=false",  # the rendezvous server runs in the switch, not on a node
        "keep_alive_interval=1",
        f"keep_alive_max_attempt={job.dead_node_s}",
        "join_timeout=300",
        "last_call_timeout=1",
        "read_timeout=5",  # a store read that waits on a dead node's agent gives up after 5 s, not 60
    ])
    return [
        sys.executable, "-m", "course_lib.faultlab.launch",
        "--nnodes", f"{job.nodes}:{job.nodes}",
        "--nproc-per-node", str(job.nproc_per_node),
        "--rdzv-backend", "c10d",
        "--rdzv-endpoint", f"{SWITCH_ADDR}:{RDZV_PORT}",
        "--rdzv-id", net.run_id,
        "--rdzv-conf", conf,
        "--local-addr", net.addr(i),
        "--max-restarts", str(job.max_restarts),
        "--monitor-interval", str(job.monitor_interval_s),
        str(job.script), str(job.cfg_path),
    ]  # fmt: skip


def _tails(run_dir: Path) -> str:
    return "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-1500:]}" for p in sorted(run_dir.glob("agent-n*.log")))


def _run_on_nodes(job: _Job, run_dir: Path, events_path: Path, timeout_s: float) -> float:
    """Build the network, start the rendezvous server, the nodes and the spares, act on node
    losses (kill the node, bring a replacement), wait for rank 0's ``done``; return the wall time."""
    base_env = dict(
        os.environ,
        FAULTLAB_EVENTS=str(events_path),
        FAULTLAB_GEN_FROM="round",
        NODELAB_IFACE=IFACE,
        GLOO_SOCKET_IFNAME=IFACE,
        TORCH_DISABLE_SHARE_RDZV_TCP_STORE="1",  # see course_lib.faultlab.lab (pytorch/pytorch#135712)
        OMP_NUM_THREADS="1",
        PYTHONUNBUFFERED="1",
    )
    base_env.setdefault("LOGLEVEL", "WARNING")
    t0 = time.time()
    deadline = t0 + timeout_s
    logs = []
    net = LabNetwork()
    (run_dir / "netns-tag").write_text(net.tag)  # every namespace of this run starts with it
    agents: dict = {}
    with net:
        try:
            def start_node() -> int:
                i = net.add_node()
                env = dict(base_env, NODELAB_NODE=f"n{i}", TIERS_NODE=f"n{i}", FAULTLAB_NODE=f"n{i}")
                if job.holder_keep is not None:  # the node's memory, beside its agent
                    holder = net.popen(i, [sys.executable, str(HOLDER_SCRIPT), "--host", net.addr(i), "--port", "0",
                                           "--keep", str(job.holder_keep)], stdout=subprocess.PIPE, text=True)
                    line = holder.stdout.readline()
                    if not line.startswith("HOLDER "):
                        raise LabError(f"the memory holder of node n{i} did not start: {line!r}")
                    env["TIERS_HOLDER"] = line.split()[1]
                out = open(run_dir / f"agent-n{i}.log", "wb")
                logs.append(out)
                agents[i] = net.popen(i, _agent_cmd(job, net, i), stdout=out, stderr=out, env=env, cwd=run_dir)
                return i

            ready = run_dir / "rdzv.ready"
            ready.unlink(missing_ok=True)
            store_log = open(run_dir / "rdzv.log", "wb")
            logs.append(store_log)
            net.popen("switch", [sys.executable, "-m", "course_lib.nodelab.store", SWITCH_ADDR, str(RDZV_PORT), str(ready)],
                      stdout=store_log, stderr=store_log, env=base_env)
            while not ready.exists():
                if time.time() > deadline:
                    raise LabError(f"the rendezvous server did not start within timeout_s={timeout_s:g} s")
                time.sleep(0.05)
            for _ in range(job.nodes):
                start_node()
            # One spare waits at a time: a second waiting agent, beyond the job's node count, keeps the
            # c10d rendezvous re-forming (the running agents restart whenever a node waits), so the next
            # spare starts only once a full round has formed after the last one took a place.
            spares_started, spares_left, spare_due_round = 0, job.spares, 0
            lost: set[int] = set()
            pending: list[float] = []  # start times of replacement nodes
            handled = 0  # node losses already acted on
            killed = 0
            while True:
                now = time.time()
                if now > deadline:
                    raise LabError(f"nodes lab run exceeded timeout_s={timeout_s:g} s; agents' output tails:\n{_tails(run_dir)}")
                events = read_events(events_path) if events_path.exists() else []
                spawned = [e["gen"] for e in events if e["ev"] == "workers_spawned"]
                round_now = max(spawned, default=-1)
                waiting = spares_started - (job.spares - spares_left)
                if (spares_started < job.spares and waiting == 0 and round_now >= spare_due_round
                        and spawned.count(round_now) == job.nodes):
                    start_node()  # the job is running: the spare joins its rendezvous and waits
                    spares_started += 1
                losses = [e for e in events if e["ev"] == "inject" and e.get("kind") in NODE_LOSS_KINDS]
                for e in losses[killed:]:  # a node the job asked to lose: the whole host goes (agent, workers, memory)
                    if e["kind"] != "link_cut":
                        for name in e.get("nodes", [e.get("node")]):
                            if name:
                                net.kill_node(int(name[1:]))
                    killed += 1
                for e in losses[handled:]:
                    # the loss counts once the job has noticed it (a surviving agent's notice):
                    # a scheduler learns of a lost node from the job or its health check, not at once
                    noticed = next((n for n in events if n["ev"] == "agent_noticed" and n["t"] >= e["t"]), None)
                    if noticed is None:
                        break
                    handled += 1
                    for name in e.get("nodes", [e.get("node")]):
                        lost.add(int(str(name)[1:]))
                        if spares_left and spares_started > job.spares - spares_left:
                            spares_left -= 1  # the waiting spare takes the lost node's place
                            spare_due_round = round_now + 1  # the next spare waits for the round it forms
                        else:
                            pending.append(noticed["t"] + job.replace_delay_s)  # the scheduler provisions a node
                for t in [t for t in pending if t <= now]:
                    pending.remove(t)
                    start_node()
                t_done = next((e["t"] for e in events if e["ev"] == "done" and e["rank"] == 0), None)
                if t_done is not None:
                    alive = [p for i, p in agents.items() if i not in lost and p.poll() is None]
                    if not alive or now - t_done > 10.0:
                        break
                time.sleep(0.05)
        finally:
            net.close()
            for fh in logs:
                fh.close()
    return time.time() - t0


def _prepare(run_dir, timeout_s) -> tuple[Path, Path, float]:
    timeout_s = check_positive("timeout_s", timeout_s)
    missing = net_admin_missing()
    if missing:
        raise NodeLabUnavailable(missing)
    run_dir = _temporary_run_dir() if run_dir is None else Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    events_path = run_dir / "events.jsonl"
    events_path.unlink(missing_ok=True)
    return run_dir, events_path, timeout_s


def run_nodelab(
    config: NodeLabConfig = NodeLabConfig(),
    *,
    timeout_s: float = 120.0,
    run_dir: str | os.PathLike | None = None,
) -> LabResult:
    """Run ``config`` on ``config.nodes`` (+ ``config.spares``) namespaced nodes; return a
    :class:`course_lib.faultlab.LabResult` (its ``restarts`` measured from the event log).

    Raises :class:`NodeLabUnavailable` (before creating anything) where network namespaces
    cannot be made, :class:`course_lib.faultlab.LabError` when the job does not finish within
    ``timeout_s``.
    """
    if not isinstance(config, NodeLabConfig):
        raise ValueError(f"config must be a NodeLabConfig (got {type(config).__name__})")
    cfg = config
    run_dir, events_path, timeout_s = _prepare(run_dir, timeout_s)
    final_path = run_dir / "final.pt"
    final_path.unlink(missing_ok=True)
    persist = run_dir / "persist"  # what every node sees: the lab's shared storage
    if persist.exists():
        shutil.rmtree(persist)
    paths = {"events": str(events_path), "disk": str(persist), "shm": str(run_dir / "unused-shm"),
             "final": str(final_path)}
    cfg_path = run_dir / "config.json"
    cfg_path.write_text(json.dumps({**cfg.job_config(), "_paths": paths}, sort_keys=True, indent=1))
    (run_dir / "nodelab.json").write_text(cfg.to_json())
    job = _Job(JOB_SCRIPT, cfg_path, cfg.nodes, cfg.spares, cfg.replace_delay_s, cfg.nproc_per_node,
               len(cfg.failures) + 1, cfg.monitor_interval_s, cfg.dead_node_s)
    wall = _run_on_nodes(job, run_dir, events_path, timeout_s)
    events = read_events(events_path)
    done = [e for e in events if e["ev"] == "done" and e["rank"] == 0]
    output = _tails(run_dir)
    if not done:
        raise LabError(f"the job finished without a 'done' event; agents' output:\n{output[-4000:]}")
    return LabResult(config=cfg, events=events, restarts=restart_stages(events), final_digest=done[-1]["digest"],
                     final_path=final_path, applied=done[-1]["applied"], wall_s=wall, run_dir=run_dir, returncode=0,
                     output=output)


@dataclass
class TierNodeLabResult:
    """One two-tier run on namespaced nodes.

    events: the event log. restarts: one :class:`~course_lib.faultlab.MeasuredRestart` per loss.
    resumed: ``{rank: (step, tier)}`` of the last generation (``(0, "init")`` without a loss).
    digests: ``{rank: sha256}`` of the final shards. restore_s: ``{rank: seconds}`` of the last
    generation's restore. skipped: ``{rank: [copies skipped]}``. wall_s, run_dir: as usual.
    """

    config: object
    events: list
    restarts: list
    resumed: dict
    digests: dict
    restore_s: dict
    skipped: dict
    wall_s: float
    run_dir: Path
    output: str = field(repr=False, default="")


def run_tier_nodelab(config=None, *, kill_nodes: tuple = (), kill_step: int | None = None, spares: int = 0,
                     replace_delay_s: float = 0.0, collective_timeout_s: float = 30.0, timeout_s: float = 150.0,
                     run_dir: str | os.PathLike | None = None) -> TierNodeLabResult:
    """Run the two-tier checkpoint's job (:class:`course_lib.checkpoint.tierlab.TierLabConfig`) on
    ``config.nodes`` namespaced nodes, each with its memory holder; kill ``kill_nodes`` (names
    ``"n1"`` ...; node ``n<i>`` runs rank ``i``) at ``kill_step`` of the first generation. Lost
    nodes are replaced by ``spares`` waiting spares, then by fresh nodes ``replace_delay_s``
    after the loss is noticed. The job restores each shard from the newest step every rank can
    load: its own node's memory, another node's (the buddy), or the persisted store."""
    from ..checkpoint.tierlab import TierLabConfig

    config = TierLabConfig() if config is None else config
    if not isinstance(config, TierLabConfig):
        raise ValueError(f"config must be a TierLabConfig (got {type(config).__name__})")
    spares = check_int_non_negative("spares", spares)
    replace_delay_s = check_non_negative("replace_delay_s", replace_delay_s)
    collective_timeout_s = check_positive("collective_timeout_s", collective_timeout_s)
    names = [f"n{i}" for i in range(config.nodes)]
    kill_nodes = tuple(kill_nodes)
    for n in kill_nodes:
        if n not in names[1:]:
            raise ValueError(f"kill_nodes must hold node names in {names[1:]} (got {n!r})")
    if kill_nodes and (kill_step is None or not 1 <= kill_step <= config.steps):
        raise ValueError(f"kill_step must be an integer in [1, steps={config.steps}] (got {kill_step!r})")
    run_dir, events_path, timeout_s = _prepare(run_dir, timeout_s)
    shutil.rmtree(run_dir / "persisted", ignore_errors=True)
    cfg = dict(asdict(config), job=uuid.uuid4().hex[:12], events=str(events_path), persist_dir=str(run_dir / "persisted"),
               collective_timeout_s=collective_timeout_s,
               inject={"gen": 0, "step": kill_step, "nodes": list(kill_nodes)} if kill_nodes else None)
    cfg_path = run_dir / "config.json"
    cfg_path.write_text(json.dumps(cfg, indent=1, sort_keys=True))
    job = _Job(TIERS_JOB_SCRIPT, cfg_path, config.nodes, spares, replace_delay_s, 1, 1 + bool(kill_nodes),
               holder_keep=config.keep)
    wall = _run_on_nodes(job, run_dir, events_path, timeout_s)
    evs = read_events(events_path)
    last = max((e["gen"] for e in evs if e["ev"] == "state_loaded"), default=0)
    loaded = {e["rank"]: e for e in evs if e["ev"] == "state_loaded" and e["gen"] == last}
    done = {e["rank"]: e["digest"] for e in evs if e["ev"] == "done" and e["gen"] == last}
    output = _tails(run_dir)
    if len(done) != config.nodes:
        raise LabError(f"the job finished without a 'done' from every rank ({sorted(done)}):\n{output[-4000:]}")
    return TierNodeLabResult(
        config=config, events=evs, restarts=restart_stages(evs),
        resumed={r: (e["step"], e["source"]) for r, e in sorted(loaded.items())},
        digests=dict(sorted(done.items())),
        restore_s={r: e["restore_s"] for r, e in sorted(loaded.items())},
        skipped={r: e["skipped"] for r, e in sorted(loaded.items())},
        wall_s=wall, run_dir=run_dir, output=output,
    )
