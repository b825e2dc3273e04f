"""``run_nodelab``: the training job on several nodes (network namespaces), one torchrun agent per
node, a node lost on purpose, every restart measured from the event log (notebook 11).

    from course_lib.nodelab import NodeFailure, NodeLabConfig, run_nodelab
    ref = run_nodelab(NodeLabConfig())                                   # 2 nodes, no failure
    res = run_nodelab(NodeLabConfig(spares=1, failures=[NodeFailure("node_kill", 7)]))
    res.restarts[0].stages_s()    # {'detect': ..., 'reschedule': ..., 'reload': ..., 'rewind': ...}
    same_final_state(ref, res)    # notebook 07's bit-for-bit comparison

Each node runs ``torchrun --nnodes N:N --rdzv-backend c10d`` (elastic membership) inside its own
namespace, its workers talk gloo over the node's link; the c10d rendezvous server runs in the
lab's switch namespace. Everything runs inside :class:`~course_lib.nodelab.net.LabNetwork`,
whose teardown SIGKILLs every process of the lab and deletes its namespaces, whatever happens.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

from .._validate import check_positive
from ..faultlab.events import read_events, restart_stages
from ..faultlab.lab import JOB_SCRIPT, LabError, LabResult, _temporary_run_dir
from .net import IFACE, SWITCH_ADDR, LabNetwork, net_admin_missing
from .spec import NodeLabConfig

__all__ = ["NodeLabUnavailable", "run_nodelab", "RDZV_PORT"]

RDZV_PORT = 29400
NODE_LOSS_KINDS = ("node_kill", "link_cut", "node_kill_in_ckpt")


class NodeLabUnavailable(RuntimeError):
    """This machine cannot run the nodes lab (the message says why, in one line)."""


def _agent_cmd(cfg: NodeLabConfig, net: LabNetwork, i: int, cfg_path: Path) -> list[str]:
    conf = ",".join([
        "is_host=false",  # the rendezvous server runs in the switch, not on a node
        "keep_alive_interval=1",
        f"keep_alive_max_attempt={cfg.dead_node_s}",
        "join_timeout=300",
        "last_call_timeout=1",
    ])
    return [
        sys.executable, "-m", "course_lib.faultlab.launch",
        "--nnodes", f"{cfg.nodes}:{cfg.nodes}",
        "--nproc-per-node", str(cfg.nproc_per_node),
        "--rdzv-backend", "c10d",
        "--rdzv-endpoint", f"{SWITCH_ADDR}:{RDZV_PORT}",
        "--rdzv-id", net.run_id,
        "--rdzv-conf", conf,
        "--local-addr", net.addr(i),
        "--max-restarts", str(len(cfg.failures) + 1),
        "--monitor-interval", str(cfg.monitor_interval_s),
        str(JOB_SCRIPT), str(cfg_path),
    ]  # fmt: skip


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
    timeout_s = check_positive("timeout_s", timeout_s)
    missing = net_admin_missing()
    if missing:
        raise NodeLabUnavailable(missing)
    run_dir = _temporary_run_dir() if run_dir is None else Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    events_path = run_dir / "events.jsonl"
    events_path.unlink(missing_ok=True)
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
    logs = []
    net = LabNetwork()
    (run_dir / "netns-tag").write_text(net.tag)  # every namespace of this run starts with it
    with net:

        def start_node() -> int:
            i = net.add_node()
            out = open(run_dir / f"agent-n{i}.log", "wb")
            logs.append(out)
            env = dict(base_env, NODELAB_NODE=f"n{i}")
            agents[i] = net.popen(i, _agent_cmd(cfg, net, i, cfg_path), stdout=out, stderr=out, env=env, cwd=run_dir)
            return i

        agents: dict = {}
        try:
            ready = run_dir / "rdzv.ready"
            ready.unlink(missing_ok=True)
            store_log = open(run_dir / "rdzv.log", "wb")
            logs.append(store_log)
            net.popen("switch", [sys.executable, "-m", "course_lib.nodelab.store", SWITCH_ADDR, str(RDZV_PORT), str(ready)],
                      stdout=store_log, stderr=store_log, env=base_env)
            deadline = t0 + timeout_s
            while not ready.exists():
                if time.time() > deadline:
                    raise LabError(f"the rendezvous server did not start within timeout_s={timeout_s:g} s")
                time.sleep(0.05)
            for _ in range(cfg.nodes + cfg.spares):
                start_node()
            spares_left = cfg.spares
            lost: set[int] = set()
            pending: list[float] = []  # start times of replacement nodes
            handled = 0  # node losses already acted on
            t_done = None
            while True:
                now = time.time()
                if now > deadline:
                    tails = "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-1500:]}" for p in sorted(run_dir.glob("agent-n*.log")))
                    raise LabError(f"nodes lab run exceeded timeout_s={timeout_s:g} s; agents' output tails:\n{tails}")
                events = read_events(events_path) if events_path.exists() else []
                losses = [e for e in events if e["ev"] == "inject" and e.get("kind") in NODE_LOSS_KINDS]
                for e in losses[handled:]:
                    # the loss counts once the job has noticed it (a surviving agent's notice):
                    # a scheduler learns of a lost node from the job or its health check, not at once
                    noticed = next((n for n in events if n["ev"] == "agent_noticed" and n["t"] >= e["t"]), None)
                    if noticed is None:
                        break
                    handled += 1
                    lost.add(int(str(e.get("node", "n-1"))[1:]))
                    if spares_left:
                        spares_left -= 1  # the waiting spare takes the lost node's place
                    else:
                        pending.append(noticed["t"] + cfg.replace_delay_s)  # the scheduler provisions a node
                t_done = next((e["t"] for e in events if e["ev"] == "done" and e["rank"] == 0), None)
                for t in [t for t in pending if t <= now]:
                    pending.remove(t)
                    start_node()
                if t_done is not None:
                    alive = [p for i, p in agents.items() if i not in lost and p.poll() is None]
                    if not alive or now - t_done > 10.0:
                        break
                time.sleep(0.05)
        finally:
            net.close()
            for fh in logs:
                fh.close()
    wall = time.time() - t0
    events = read_events(events_path)
    done = [e for e in events if e["ev"] == "done" and e["rank"] == 0]
    output = "\n".join(p.read_text(errors="replace")[-2000:] for p in sorted(run_dir.glob("agent-n*.log")))
    if not done:
        raise LabError(f"the job finished without a 'done' event; agents' output:\n{output[-4000:]}")
    return LabResult(
        config=cfg,
        events=events,
        restarts=restart_stages(events),
        final_digest=done[-1]["digest"],
        final_path=final_path,
        applied=done[-1]["applied"],
        wall_s=wall,
        run_dir=run_dir,
        returncode=0,
        output=output,
    )
