"""The lemon-node lab: a node that fails again each time it rejoins, and three policies for it, on the
nodes lab's namespaced nodes (notebook 14).

    from course_lib.nodelab.lemon import LemonLabConfig, run_lemonlab
    res = run_lemonlab(LemonLabConfig(policy="quarantine", k=2))
    res.failures, res.restarts, res.regain_s, res.gpu_s_lost     # 2 failures, then the spare: progress again

The job is notebook 07's on ``nodes`` nodes (one rank each, c10d rendezvous), with node ``n<lemon>`` a
lemon: every time the job starts on it, it fails (the whole node goes down, as a ``node_kill``) in its
``lemon_after``-th step (``NODELAB_LEMON_AFTER`` in the node's environment, read by
:mod:`course_lib.faultlab.job` and by the gate). After each failure the lab, standing in for the scheduler,
acts when the job has noticed the loss (an agent's ``agent_noticed``) and the node has rebooted
(``rejoin_delay_s``), by the run's ``policy``:

``same_node``
    the node rejoins as it is, every time. The job fails at the same step again and again; the restart-loop
    guard of the surviving agents (:mod:`course_lib.faultlab.guard`, NVRx's ``max_no_progress_restarts``)
    stops the job. Progress is never regained.
``quarantine``
    the node rejoins until it has failed ``k`` times; then it is quarantined and a spare node (a fresh
    namespace and agent) takes its place.
``gate``
    before a node (re)joins, it must pass the pre-flight gate (:mod:`course_lib.nodelab.gate`: a short
    health check and an all-reduce test of the node); a node that fails it is kept out, and the next
    candidate (a spare) is gated in its turn.

Measured (:class:`LemonResult`): the failures and the job's restarts, the time from the first failure until
the job is past the step it failed in (``regain_s``; ``None`` if never), the GPU-seconds lost (the job's
GPUs x that time; for a job the guard stopped, x the time until it gave up, and more until someone acts),
and every gate's verdict and seconds. Needs root, as the nodes lab does.
"""
from __future__ import annotations

import dataclasses
import os
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from .._validate import check_int_non_negative, check_int_positive, check_non_negative, check_positive, checked
from ..faultlab.lab import JOB_SCRIPT, write_job_config
from ..labkit import Lab, LabError, LabResult, events_of
from ..labkit.config import one_of
from .lab import _Cluster, _Job, _prepare
from .spec import NodeJobConfig, NodeLabConfig

__all__ = ["POLICIES", "LEMON_VAR", "LemonLabConfig", "LemonResult", "rejoin_action", "run_gate", "run_lemonlab",
           "GATE_SCRIPT", "LEMONLAB_JSON", "load_lemon_benchmark", "quarantine_rate_factor"]

POLICIES = ("same_node", "quarantine", "gate")
#: The environment variable that makes a node a lemon: it fails in this many units of work of every start.
LEMON_VAR = "NODELAB_LEMON_AFTER"
GATE_SCRIPT = "course_lib.nodelab.gate"
#: The agents' rendezvous store reads wait this long (s): the lemon is never the master node, whose loss the
#: nodes lab's 5 s is short for, and a read was seen answered after more than 5 s (an agent then died; put down to
#: load then, it may have been the bridge-MAC fault fixed since, course_lib/nodelab/net.py SWITCH_MAC).
READ_TIMEOUT_S = 30


@dataclass(frozen=True)
class LemonLabConfig(NodeJobConfig):
    """Settings of one lemon-lab run (times in seconds).

    policy: ``same_node``, ``quarantine`` or ``gate`` (see the module doc).
    nodes: nodes in the job (one rank and one GPU each). lemon: the index of the lemon node (``n<lemon>``).
    lemon_after: the lemon fails in this step of every start of the job on it (and at this unit of the gate).
    k: quarantine after this many failures of a node (policy ``quarantine``).
    gate_rounds: health-check rounds and all-reduce rounds of the gate (each a unit of work on the node).
    gate_timeout_s: a gate not passed within this is failed.
    spares: spare nodes the scheduler can hand out (started when taken: no idle spare waits).
    rejoin_delay_s: a failed node reboots this long before it may rejoin.
    max_no_progress_restarts: the restart-loop guard's limit (None: NVRx's, data/restart_ranges.csv).
    nodes, steps, ckpt_every, step_compute_s, collective_timeout_s, dead_node_s, monitor_interval_s, keep, seed,
    batch, features, hidden: the job's (:class:`~course_lib.nodelab.spec.NodeJobConfig`; 12 steps here).
    """

    policy: str = checked(one_of(POLICIES), default="quarantine")
    lemon: int = checked(check_int_non_negative, default=1)
    lemon_after: int = checked(check_int_positive, default=2)
    k: int = checked(check_int_positive, default=2)
    gate_rounds: int = checked(check_int_positive, default=2)
    gate_timeout_s: float = checked(check_positive, default=90.0)
    spares: int = checked(check_int_non_negative, default=1)
    rejoin_delay_s: float = checked(check_non_negative, default=0.0)
    max_no_progress_restarts: int | None = checked(check_int_positive, default=None)
    steps: int = checked(check_int_positive, default=12)  # the job's, a shorter run than the nodes lab's 16

    def _validate_fields(self):
        if self.lemon >= self.nodes:
            raise ValueError(f"lemon must be an integer in [0, {self.nodes - 1}] (the job's nodes; got {self.lemon})")
        if self.lemon_after > self.steps:
            raise ValueError(f"lemon_after must be an integer in [1, steps={self.steps}] (the step of every start in "
                             f"which the lemon fails; got {self.lemon_after})")
        if self.max_no_progress_restarts is None:
            from ..faultlab.guard import default_max_no_progress_restarts

            object.__setattr__(self, "max_no_progress_restarts", default_max_no_progress_restarts())
        if self.policy in ("quarantine", "gate") and self.spares < 1:
            raise ValueError(f"spares must be >= 1 for policy {self.policy!r} (a quarantined node needs a replacement; got {self.spares})")

    def job(self) -> NodeLabConfig:
        """The job's settings as a :class:`~course_lib.nodelab.NodeLabConfig` (no scheduled failure: the lemon is the node's)."""
        return NodeLabConfig(**{f.name: getattr(self, f.name) for f in dataclasses.fields(NodeJobConfig)})

    @property
    def fail_step(self) -> int:
        """The step the lemon fails in on the job's first start (from step 0)."""
        return self.lemon_after


@dataclass
class LemonResult(LabResult):
    """A lemon-lab run: the kit's :class:`~course_lib.labkit.LabResult` plus the policy's measurements.

    outcome: ``"done"`` (the job finished) or ``"gave_up"`` (the guard stopped it; ``gave_up`` holds its
    message). failures: the lemon's failures in the job (``inject`` events). restarts: times the job re-formed
    after a failure. regain_s: first failure -> every rank past the step it failed in (None: never).
    gpu_s_lost: the job's GPUs x regain_s (x the time until the guard gave up, if it did). gates: one
    {node, passed, seconds, reason} per gate run. quarantined: nodes kept out. joined: the nodes of the last
    round. final_digest: rank 0's final state digest (``done``), else "".
    """

    policy: str = ""
    outcome: str = ""
    gave_up: str = ""
    failures: list = field(default_factory=list)
    restarts: int = 0
    regain_s: float | None = None
    until_s: float = 0.0
    gpu_s_lost: float = 0.0
    gates: list = field(default_factory=list)
    quarantined: list = field(default_factory=list)
    joined: list = field(default_factory=list)
    final_digest: str = ""

    @property
    def gate_s(self) -> float | None:
        """Median seconds of the gates that passed (the gate's cost per (re)join), None if none passed."""
        import statistics

        ok = [g["seconds"] for g in self.gates if g["passed"]]
        return statistics.median(ok) if ok else None


def rejoin_action(policy: str, failures: int, k: int) -> str:
    """What the scheduler does with a node that just failed for the ``failures``-th time: ``"rejoin"`` (as it
    is), ``"quarantine"`` (keep it out, take a spare) or ``"gate"`` (let it rejoin only if it passes the gate)."""
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {list(POLICIES)} (got {policy!r})")
    check_int_positive("failures", failures)
    check_int_positive("k", k)
    if policy == "gate":
        return "gate"
    return "quarantine" if policy == "quarantine" and failures >= k else "rejoin"


def run_gate(lab: Lab, net, i: int, env: dict, rounds: int, timeout_s: float) -> dict:
    """Run the pre-flight gate on node ``n<i>`` of ``net`` (its processes get ``env``) against a partner in
    the switch; return {node, gate, passed, seconds, reason, t}."""
    n = sum(1 for name in lab.procs if name.startswith(f"gate-n{i}-"))
    gate = f"n{i}-{n}"
    t0 = time.time()
    cand = lab.start(f"gate-{gate}", [*net.prefix(i), sys.executable, "-m", GATE_SCRIPT, "node", net.addr(i),
                                      lab.events_path, rounds, gate], env=env)
    peer = lab.start(f"gate-peer-{gate}", [*net.prefix("switch"), sys.executable, "-m", GATE_SCRIPT, "peer",
                                           lab.events_path, rounds, gate], env=dict(env, GLOO_SOCKET_IFNAME="br0"))
    deadline = min(time.monotonic() + timeout_s, lab.deadline)
    while cand.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    rc = cand.poll()
    for p in (cand, peer):
        if p.poll() is None:
            p.kill()
        p.wait()
    verdict = [e for e in lab.events() if e["ev"] in ("gate_pass", "gate_fail", "gate_fault") and e.get("gate") == gate]
    reason = ("passed" if rc == 0 else next((e.get("reason") or f"the node went down at unit {e['unit']} ({e['what']})"
                                             for e in verdict if e["ev"] != "gate_pass"), f"exit code {rc}")
              if rc is not None else f"no verdict within timeout_s={timeout_s:g} s")
    return {"node": f"n{i}", "gate": gate, "passed": rc == 0, "seconds": time.time() - t0, "reason": reason, "t": t0}


def _measure(lab: Lab, cfg: LemonLabConfig, gates: list, quarantined: list, wall_s: float) -> LemonResult:
    events = lab.events()
    failures = [e for e in events_of(events, "inject", kind="lemon")]
    gave = events_of(events, "gave_up")
    done = [e for e in events_of(events, "done") if e["rank"] == 0]
    t0 = failures[0]["t"] if failures else None
    ranks = range(cfg.nodes)
    regain = None
    if t0 is not None:
        step = failures[0]["step"]
        times = [min((e["t"] for e in events_of(events, "step_done", rank=r) if e["t"] > t0 and e["step"] >= step),
                     default=None) for r in ranks]
        if all(t is not None for t in times):
            regain = max(times) - t0
    rounds = sorted({e["gen"] for e in events_of(events, "pg_ready", rank=0)})
    last = rounds[-1] if rounds else None
    joined = sorted({e["node"] for e in events_of(events, "worker_start") if e["gen"] == last}) if last is not None else []
    until = regain if regain is not None else ((gave[0]["t"] - t0) if gave and t0 is not None else wall_s)
    return LemonResult(
        config=cfg, events=events, run_dir=lab.run_dir, wall_s=wall_s, output=lab.tail(3000), pids=frozenset(lab.pids),
        policy=cfg.policy, outcome="done" if done else "gave_up" if gave else "stopped",
        gave_up=gave[0]["message"] if gave else "", failures=failures, restarts=max(len(rounds) - 1, 0),
        regain_s=regain, until_s=until, gpu_s_lost=cfg.nodes * until, gates=gates, quarantined=quarantined,
        joined=joined, final_digest=done[-1]["digest"] if done else "")


def run_lemonlab(config: LemonLabConfig = LemonLabConfig(), *, timeout_s: float = 240.0,
                 run_dir: str | os.PathLike | None = None) -> LemonResult:
    """Run ``config``'s job on ``config.nodes`` namespaced nodes, node ``n<lemon>`` a lemon, under its policy;
    return a :class:`LemonResult`. Raises :class:`~course_lib.nodelab.NodeLabUnavailable` without root (before
    creating anything), :class:`~course_lib.labkit.LabError` past ``timeout_s``."""
    if not isinstance(config, LemonLabConfig):
        raise ValueError(f"config must be a LemonLabConfig (got {type(config).__name__})")
    cfg = config
    timeout_s = _prepare(timeout_s)
    waits = cfg.collective_timeout_s + cfg.dead_node_s + cfg.rejoin_delay_s + cfg.gate_timeout_s + READ_TIMEOUT_S
    with Lab(run_dir, timeout_s=timeout_s, prefix="lemon", stall_waits_s=waits) as lab:
        persist = lab.run_dir / "persist"
        shutil.rmtree(persist, ignore_errors=True)
        paths = {"events": str(lab.events_path), "disk": str(persist), "shm": str(lab.run_dir / "unused-shm"),
                 "final": str(lab.run_dir / "final.pt")}
        cfg_path = write_job_config(lab.run_dir, cfg.job().job_config(), paths)
        (lab.run_dir / "lemonlab.json").write_text(cfg.to_json())
        job = _Job(JOB_SCRIPT, cfg_path, cfg.nodes, 0, 0.0, (), 1,
                   max_restarts=cfg.max_no_progress_restarts + cfg.k + 4, monitor_interval_s=cfg.monitor_interval_s,
                   dead_node_s=cfg.dead_node_s, max_no_progress_restarts=cfg.max_no_progress_restarts,
                   read_timeout_s=READ_TIMEOUT_S)
        cluster = _Cluster(lab, job)
        lemon = f"n{cfg.lemon}"

        def env_of(node: str) -> dict:  # the lemon's fault is the node's: every process on it has it
            return {LEMON_VAR: cfg.lemon_after} if node == lemon else {}

        for i in range(cfg.nodes):
            cluster.start_agent(cluster.net.add_node(), **env_of(f"n{i}"))
        failed: dict[str, int] = {}
        handled: set = set()
        waiting: list = []  # failures the lab has not acted on yet
        gates: list = []
        quarantined: list = []
        spares_left = cfg.spares
        t_done = None
        while True:
            events = lab.events()
            lab.check_deadline("lemon lab run", events)
            if events_of(events, "gave_up"):
                break
            for e in events_of(events, "inject", kind="lemon"):
                key = (e["node"], e["gen"])
                if key in handled:
                    continue
                handled.add(key)
                cluster.kill_node(e["node"])  # the whole host is down: agent and workers
                failed[e["node"]] = failed.get(e["node"], 0) + 1
                waiting.append(e)
            for e in list(waiting):  # act once the job noticed the loss and the node has rebooted
                noticed = next((n for n in events_of(events, "agent_noticed") if n["t"] >= e["t"]), None)
                if noticed is None or time.time() < noticed["t"] + cfg.rejoin_delay_s:
                    continue
                waiting.remove(e)
                node = e["node"]
                idx = int(node[1:])
                action = rejoin_action(cfg.policy, failed[node], cfg.k)
                if action == "rejoin":
                    cluster.start_agent(idx, **env_of(node))
                    continue
                candidates = [idx] if action == "gate" else []
                while True:
                    if not candidates:
                        if node not in quarantined:
                            quarantined.append(node)
                        if spares_left == 0:
                            lab.fail(f"no spare left to replace {node}")
                        spares_left -= 1
                        candidates.append(cluster.net.add_node())  # a spare host from the pool
                    i = candidates.pop(0)
                    if action == "gate":
                        g = run_gate(lab, cluster.net, i, cluster.node_env(i, **env_of(f"n{i}")), cfg.gate_rounds,
                                     cfg.gate_timeout_s)
                        gates.append(g)
                        if not g["passed"]:
                            continue
                    cluster.start_agent(i, **env_of(f"n{i}"))
                    break
            if not waiting and not any(p.poll() is None for p in cluster.agents.values()) and \
                    not any(e["ev"] == "done" and e["rank"] == 0 for e in events):
                lab.fail("every agent of the job exited before it finished (and the guard did not stop it)")
            if t_done is None:
                t_done = next((e["t"] for e in events if e["ev"] == "done" and e["rank"] == 0), None)
            if t_done is not None:
                alive = [p for name, p in cluster.agents.items() if p.poll() is None]
                if not alive or time.time() - t_done > 10.0:
                    break
            time.sleep(0.05)
        wall = lab.elapsed_s()
        result = _measure(lab, cfg, gates, quarantined, wall)
    if result.outcome == "stopped":
        raise LabError(f"the lemon lab's job neither finished nor was stopped by the guard; output tails:\n{result.output}")
    return result


# ----------------------------------------------------------------- the committed benchmark, the rate
LEMONLAB_JSON = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "lemonlab.json"


def load_lemon_benchmark(path: str | os.PathLike | None = None) -> dict:
    """The committed benchmark (benchmarks/lemonlab_bench.py): {"summary": {policy: medians}, "settings",
    "machine", "runs", "raw"}."""
    import json

    p = Path(path) if path is not None else LEMONLAB_JSON
    if not p.exists():
        raise FileNotFoundError(f"{p}: run `python benchmarks/lemonlab_bench.py` (as root) to create it")
    d = json.loads(p.read_text())
    return {"summary": {x["policy"]: x for x in d["summary"]}, "settings": d["settings"], "machine": d["machine"],
            "runs": d["runs"], "raw": d}


def quarantine_rate_factor(repeat_share: float, baseline_share: float = 0.0) -> float:
    """The factor on the failure rate of quarantining a node after each failure for a window (notebook 14):
    the failures that fall on a node within the window after its previous one (``repeat_share``, measured on
    a fault log: ``course_lib.incidents.trace_repeat_fault_share``) no longer hit the job, while the node that
    stands in fails at an ordinary node's rate over the same window (``baseline_share``: the share identical
    Poisson nodes would give, ``RepeatShare.poisson_share``). ``1 - repeat_share + baseline_share``."""
    from .._validate import check_unit_interval

    r = check_unit_interval("repeat_share", repeat_share)
    b = check_unit_interval("baseline_share", baseline_share)
    if b > r:
        raise ValueError(f"baseline_share must be <= repeat_share (got {b!r} > {r!r}): quarantine cannot add failures")
    return 1.0 - r + b
