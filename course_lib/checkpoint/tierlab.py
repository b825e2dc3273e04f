"""The two-tier checkpoint's loopback lab: "nodes" on 127.0.0.1, one torchrun agent and one
memory holder each; kill nodes, restart the job on replacements, see which tier it resumed from
(the tests and notebook 11 use it; the namespace lab replaces the loopback "nodes" by real
network namespaces and keeps the job and the holders).

    from course_lib.checkpoint.tierlab import TierLabConfig, run_tier_lab
    ref = run_tier_lab(TierLabConfig())                            # never fails
    res = run_tier_lab(TierLabConfig(), kill_nodes=(1,), kill_step=11)
    res.resumed        # {rank: (step, tier)} of the generation after the kill
    res.digests == ref.digests                                      # bit-identical final shards

A "node" here is a set of processes: its torchrun agent (with its worker) and its holder
(:mod:`course_lib.checkpoint.holder`, the node's memory). Killing a node SIGKILLs all of them at
once, so the copies in its memory are gone. The job runs in generations, as under a scheduler
that requeues it: generation 0 on nodes 0..N-1; after a kill, generation 1 on the surviving
nodes (their holders, and the copies in them, are still up) and one fresh node per lost one (a
replacement with an empty holder), which takes the lost node's place in the node order.
Rendezvous is torchrun's static one (``--node-rank``, the store on node 0's agent), so node 0 is
not one the lab kills. Every process the lab starts is killed on the way out, also on failure.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from contextlib import ExitStack
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..faultlab.lab import _temporary_run_dir
from .holder import HolderClient
from .._validate import check_int_non_negative, check_int_positive, check_non_negative, check_positive

__all__ = ["TierLabConfig", "TierLabResult", "TierLabError", "run_tier_lab", "reference_digests", "HOLDER_SCRIPT", "JOB_SCRIPT", "start_holder"]

HOLDER_SCRIPT = Path(__file__).with_name("holder.py")
JOB_SCRIPT = Path(__file__).with_name("tiers_job.py")


class TierLabError(RuntimeError):
    """A lab run failed or timed out (the message holds the tail of the agents' output)."""


@dataclass(frozen=True)
class TierLabConfig:
    """One lab job. nodes: nodes (one rank each). steps: optimizer steps. every: steps between
    snapshots. persist_every: every k-th snapshot is persisted. params, batch: shard size and batch.
    ballast_floats: extra untrained floats per shard (a bigger state to copy). keep: copies kept
    per shard by each holder and by the store. step_compute_s: a sleep per step (simulated compute)."""

    nodes: int = 3
    steps: int = 16
    every: int = 2
    persist_every: int = 3
    params: int = 32
    batch: int = 8
    ballast_floats: int = 0
    keep: int = 2
    step_compute_s: float = 0.0
    seed: int = 0

    def __post_init__(self):
        for name in ("nodes", "steps", "every", "persist_every", "params", "batch", "keep"):
            object.__setattr__(self, name, check_int_positive(name, getattr(self, name)))
        if self.nodes < 2:
            raise ValueError(f"nodes must be an integer >= 2 (a buddy is another node; got {self.nodes!r})")
        object.__setattr__(self, "ballast_floats", check_int_non_negative("ballast_floats", self.ballast_floats))
        object.__setattr__(self, "seed", check_int_non_negative("seed", self.seed))
        check_non_negative("step_compute_s", self.step_compute_s)


@dataclass
class TierLabResult:
    """events: the event log (dicts by time). resumed: ``{rank: (step, tier)}`` of the last
    generation (``(0, 'init')`` without a failure). digests: ``{rank: sha256}`` of the final shards.
    restore_s: ``{rank: seconds}`` of the last generation's restore. skipped: ``{rank: [lines]}``.
    wall_s: the whole run. run_dir: its folder (config, events, agents' output, persisted tier).
    pids: every process the lab started (holders, agents, workers); all are gone when it returns."""

    config: TierLabConfig
    events: list
    resumed: dict
    digests: dict
    restore_s: dict
    skipped: dict
    wall_s: float
    run_dir: Path
    pids: frozenset = frozenset()
    output: str = field(repr=False, default="")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _kill(pid: int) -> None:
    for f in (os.killpg, os.kill):
        try:
            f(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError, OSError):
            pass


def start_holder(stack: ExitStack, host: str = "127.0.0.1", keep: int = 2, prefix: tuple = ()):
    """Start a holder process (its own session), registered on ``stack`` for SIGKILL; returns (proc, address).

    ``prefix`` goes before the command, e.g. ``("ip", "netns", "exec", "node1")`` to start it inside
    a network namespace, listening on that namespace's ``host`` address.
    """
    proc = subprocess.Popen([*prefix, sys.executable, str(HOLDER_SCRIPT), "--host", host, "--port", "0", "--keep", str(keep)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True, text=True)
    stack.callback(_reap, proc)
    line = proc.stdout.readline()  # the holder's first line, or '' if it died
    if not line.startswith("HOLDER "):
        raise TierLabError(f"holder did not start: {line!r}")
    return proc, line.split()[1]


def _reap(proc: subprocess.Popen) -> None:
    _kill(proc.pid)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:  # pragma: no cover
        pass
    for f in (proc.stdout, proc.stderr):
        if f is not None:
            f.close()


def _read_events(path: Path) -> list:
    from ..faultlab.events import read_events

    try:
        return read_events(path)
    except FileNotFoundError:
        return []


def run_tier_lab(config: TierLabConfig = TierLabConfig(), *, kill_nodes: tuple = (), kill_step: int | None = None,
                 damage: tuple = (), timeout_s: float = 120.0, run_dir=None) -> TierLabResult:
    """Run the job on ``config.nodes`` loopback nodes; with ``kill_nodes`` (node indices >= 1), kill
    those nodes at ``kill_step`` of generation 0 and rerun on replacements. ``damage`` holds
    ``(node, shard, step, how)`` tuples applied to surviving nodes' memory between the kill and the
    rerun (``how``: ``flip`` or ``truncate``, see :meth:`MemoryHolder.damage`). See the module doc."""
    if not isinstance(config, TierLabConfig):
        raise ValueError(f"config must be a TierLabConfig (got {type(config).__name__})")
    timeout_s = check_positive("timeout_s", timeout_s)
    kill_nodes = tuple(sorted(set(int(n) for n in kill_nodes)))
    for n in kill_nodes:
        if not 1 <= n < config.nodes:
            raise ValueError(f"kill_nodes must hold node indices in [1, {config.nodes - 1}] (node 0 hosts the rendezvous; got {n})")
    if kill_nodes:
        if kill_step is None or not 1 <= kill_step <= config.steps:
            raise ValueError(f"kill_step must be an integer in [1, steps={config.steps}] (got {kill_step!r})")
    damage = tuple((int(n), int(shard), int(step), str(how)) for n, shard, step, how in damage)
    for n, _, _, how in damage:
        if not kill_nodes or n in kill_nodes or not 0 <= n < config.nodes:
            raise ValueError(f"damage must name surviving nodes of a run with kill_nodes (got node {n})")
        if how not in ("flip", "truncate"):
            raise ValueError(f"damage how must be one of ['flip', 'truncate'] (got {how!r})")
    run_dir = _temporary_run_dir() if run_dir is None else Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    events = run_dir / "events.jsonl"
    events.unlink(missing_ok=True)
    shutil.rmtree(run_dir / "persisted", ignore_errors=True)
    cfg = dict(asdict(config), job=uuid.uuid4().hex[:12], events=str(events), persist_dir=str(run_dir / "persisted"),
               inject={"gen": 0, "step": kill_step, "nodes": [f"n{i}" for i in kill_nodes]} if kill_nodes else None)
    cfg_path = run_dir / "config.json"
    cfg_path.write_text(json.dumps(cfg, indent=1, sort_keys=True))
    deadline = time.time() + timeout_s
    t0 = time.time()
    outputs = []
    started = set()
    with ExitStack() as stack:
        holders = {}  # node name -> (proc, address)
        names = [f"n{i}" for i in range(config.nodes)]
        for name in names:
            holders[name] = start_holder(stack, keep=config.keep)
            started.add(holders[name][0].pid)
        gens = 2 if kill_nodes else 1
        for gen in range(gens):
            port = _free_port()
            agents = {}
            for i, name in enumerate(names):
                cmd = [sys.executable, "-m", "torch.distributed.run", "--nnodes", str(config.nodes), "--node-rank", str(i),
                       "--nproc-per-node", "1", "--master-addr", "127.0.0.1", "--master-port", str(port),
                       "--max-restarts", "0", "--monitor-interval", "0.1", str(JOB_SCRIPT), str(cfg_path)]
                env = dict(os.environ, TIERS_HOLDER=holders[name][1], TIERS_NODE=name, TIERS_GEN=str(gen),
                           OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1", LOGLEVEL=os.environ.get("LOGLEVEL", "ERROR"))
                out = open(run_dir / f"agent-{gen}-{name}.log", "wb")
                stack.callback(out.close)
                proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True, cwd=run_dir)
                stack.callback(_reap, proc)
                stack.callback(_kill_workers, events, cfg_path)
                agents[name] = proc
                started.add(proc.pid)
            if gen == 0 and kill_nodes:
                while not any(e["ev"] == "inject" for e in _read_events(events)):
                    _check_alive(agents, deadline, run_dir, gen, expect_failure=False)
                    time.sleep(0.05)
                dead = [f"n{i}" for i in kill_nodes]
                workers = [e["pid"] for e in _read_events(events) if e["ev"] == "worker_start" and e.get("node") in dead and e["gen"] == 0]
                for name in dead:  # the whole node at once: agent, its workers, its memory
                    _kill(agents[name].pid)
                    _kill(holders[name][0].pid)
                for pid in workers:
                    _kill(pid)
                for name in names:
                    _wait(agents[name], deadline, run_dir, gen)
                for n, shard, step, how in damage:  # memory damaged on a surviving node
                    client = HolderClient(holders[names[n]][1])
                    if not client.damage(cfg["job"], shard, step, how):
                        raise TierLabError(f"node {names[n]} holds no copy of shard {shard} step {step} to damage")
                    client.close()
                for i in kill_nodes:  # replacements with empty memory take the lost nodes' places
                    names[i] = f"spare{i}"
                    holders[names[i]] = start_holder(stack, keep=config.keep)
                    started.add(holders[names[i]][0].pid)
            else:
                for name in names:
                    rc = _wait(agents[name], deadline, run_dir, gen)
                    if rc != 0:
                        raise TierLabError(f"generation {gen}: agent of {name} exited with {rc}:\n{_tails(run_dir, gen)}")
        outputs.append(_tails(run_dir, gens - 1))
    evs = _read_events(events)
    last = max(e["gen"] for e in evs) if evs else 0
    loaded = {e["rank"]: e for e in evs if e["ev"] == "state_loaded" and e["gen"] == last}
    done = {e["rank"]: e["digest"] for e in evs if e["ev"] == "done" and e["gen"] == last}
    if len(done) != config.nodes:
        raise TierLabError(f"the job finished without a 'done' from every rank ({sorted(done)}):\n{outputs[-1]}")
    return TierLabResult(
        config=config, events=evs,
        resumed={r: (e["step"], e["source"]) for r, e in sorted(loaded.items())},
        digests=dict(sorted(done.items())),
        restore_s={r: e["restore_s"] for r, e in sorted(loaded.items())},
        skipped={r: e["skipped"] for r, e in sorted(loaded.items())},
        wall_s=time.time() - t0, run_dir=run_dir, output=outputs[-1],
        pids=frozenset(started | {e["pid"] for e in evs if e["ev"] == "worker_start"}),
    )


def _tails(run_dir: Path, gen: int) -> str:
    parts = []
    for p in sorted(run_dir.glob(f"agent-{gen}-*.log")):
        parts.append(f"--- {p.name}\n{p.read_text(errors='replace')[-1500:]}")
    return "\n".join(parts)


def _check_alive(agents: dict, deadline: float, run_dir: Path, gen: int, expect_failure: bool) -> None:
    if time.time() > deadline:
        raise TierLabError(f"lab run exceeded its timeout in generation {gen}:\n{_tails(run_dir, gen)}")
    for name, proc in agents.items():
        if proc.poll() is not None and not expect_failure:
            raise TierLabError(f"generation {gen}: agent of {name} exited early with {proc.returncode}:\n{_tails(run_dir, gen)}")


def _wait(proc: subprocess.Popen, deadline: float, run_dir: Path, gen: int) -> int:
    try:
        return proc.wait(timeout=max(deadline - time.time(), 0.1))
    except subprocess.TimeoutExpired:
        raise TierLabError(f"lab run exceeded its timeout in generation {gen}:\n{_tails(run_dir, gen)}") from None


def _kill_workers(events: Path, cfg_path: Path) -> None:
    """SIGKILL every worker the log names whose command line still holds this run's config path."""
    needle = str(cfg_path).encode()
    for e in _read_events(events):
        if e["ev"] == "worker_start":
            try:
                if needle in Path(f"/proc/{e['pid']}/cmdline").read_bytes():
                    _kill(e["pid"])
            except OSError:
                pass


def reference_digests(config: TierLabConfig = TierLabConfig()) -> dict:
    """``{rank: sha256}`` of the final shards of an uninterrupted run of ``config``'s job, computed
    in this process by the workers' own step functions (no torchrun needed)."""
    from .tiers_job import reference_digests as _reference

    return _reference(asdict(config), config.nodes)
