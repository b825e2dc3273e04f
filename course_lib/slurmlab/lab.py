"""``run_failure``: the course's training job under ``sbatch --requeue`` on a real Slurm cluster, one failure,
its phases read from timestamps (benchmarks/results/slurmlab.md).

The job is notebook 07's training script (:mod:`course_lib.faultlab.job`) on two nodes, one torchrun agent
per node, submitted with the user's own batch script (``benchmarks/slurm/train.sbatch``: srun starts
torchrun on every node of the allocation, c10d rendezvous on its first node). The cluster has one node
more than the job (the spare Slurm requeues onto). The failure fires by state: the worker of global
rank 1 injects it in the middle of step ``step`` (it logs ``inject`` first).

Failure modes (:data:`MODES`):

``worker_crash``
    rank 1's worker SIGKILLed: torchrun notices and restarts its workers inside the allocation; Slurm
    never sees it (no second attempt in sacct).
``hang``
    rank 1's worker stops in the middle of a step and never reaches the all-reduce (alive, silent): rank 0
    waits in the collective until its timeout (30 s here, the job's process-group timeout), then torchrun
    restarts the workers of both nodes inside the allocation. Slurm sees nothing: the node answers its pings.
``node_kill``
    every process of rank 1's node SIGKILLed at once (slurmd with the job's processes): the host is gone.
    Nobody tells Slurm: slurmctld sets the node DOWN once it has not answered for ``SlurmdTimeout``, the
    job goes NODE_FAIL and is requeued; it may start again after ``cred_expire``, on the two healthy
    nodes.
``link_cut``
    rank 1's node loses its link in the middle of a step (it stays alive, its processes keep running, nothing
    reaches it). Its peer hangs in the collective; slurmctld, whose pings go unanswered, sets the node DOWN
    after ``SlurmdTimeout`` as for a dead host, and the job is requeued onto the two reachable nodes. The
    cut-off node's processes live on until the lab's close: Slurm cannot reach them to kill them either.
``health_check``
    rank 1's node loses its GPU in the middle of a step (the job's ``gpu_lost``: the worker dies and every
    worker started there afterwards fails at its start). torchrun restarts the workers in the allocation,
    onto the same broken node, until its restarts run out; the batch script then requeues the job itself
    (``scontrol requeue``: ``--requeue`` alone acts only on a node failure). The node's health check
    (``HealthCheckProgram``, :data:`HEALTH_CHECK`, every :data:`HEALTH_CHECK_INTERVAL_S`) drains it; an
    attempt that starts before the drain lands on the broken node again and fails the same way, so sacct
    can show a chain of attempts; the first after the drain runs on the two healthy nodes.
``spare``
    ``node_kill`` with a spare already in the allocation: the job asks for three nodes and trains on two
    (``sbatch --nodes=3 --no-kill``, ``TRAIN_NODES=2``: torchrun's ``--nnodes 2``), so the third node's
    agent waits in the rendezvous's redundancy list. The node is killed once that spare waits. The
    survivor's agent notices, restarts its workers and the spare takes the lost node's place in the next
    round: no requeue, one attempt in sacct. Slurm still sets the lost node DOWN after ``SlurmdTimeout``
    (``--no-kill`` keeps the allocation, on the nodes left).
``slurmd_pause``
    nothing fails: rank 1's node stays healthy and so does the job, but the node's ``slurmd`` stops answering
    for :data:`PAUSE_S` seconds (SIGSTOP, then SIGCONT: a daemon stalled on a loaded host). Past
    ``SlurmdTimeout`` slurmctld sets the node DOWN anyway, the job goes NODE_FAIL and is requeued: a whole
    restart for nothing, the cost of a short timeout. At Slurm's default ``SlurmdTimeout`` the pause passes
    unseen (one attempt, no phases). The job's steps take :data:`PAUSE_STEP_S` each here, so that it is still
    training when the DOWN comes.

Phases, in seconds since the failure (the ``inject`` event): ``noticed_s`` (the first torchrun agent that
noticed), ``down_s`` (the node taken out of service: set DOWN, or DRAIN by its health check; the node event's
start in ``sacctmgr show event``), ``requeued_s`` (the first failed attempt's End in sacct), ``eligible_s``
(the last attempt's Eligible: the one that completed), ``started_s`` (its Start), ``rendezvous_s`` (every rank's process group ready again), ``loaded_s`` (every rank has loaded
the checkpoint), ``first_step_s`` (the first step done after it), ``progress_s`` (back at the pre-failure
step). Slurm's times have a resolution of one second. The course's stages (notebook 03):
detect = failure to the moment what acts has noticed (Slurm's DOWN for a lost node, the DRAIN for a node
that fails its health check, torchrun's notice for a crash), reschedule = that to the process group ready, reload, rewind.
"""
from __future__ import annotations

import shutil
import sys
import time
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path

from ..faultlab.lab import JOB_SCRIPT, write_job_config
from ..labkit import Lab, LabError
from ..nodelab.lab import uninterrupted_reference
from ..nodelab.net import IFACE
from ..nodelab.spec import NodeLabConfig
from .cluster import DEFAULTS, TUNED, SlurmCluster, SlurmSettings, slurm_version
from ..requeue import LOST_NODE_MODES, PHASES, STAGES
from ..data import sourced

__all__ = ["COLLECTIVE_TIMEOUT_S", "MODES", "NODE_MODES", "DRAIN_MODES", "REQUEUED_MODES", "SPARE_MODES", "FALSE_DOWN_MODES", "PAUSE_S", "HEALTH_CHECK",
           "HEALTH_CHECK_INTERVAL_S", "SETTINGS", "PHASES", "STAGES", "SlurmLabResult", "run_failure", "SBATCH_SCRIPT", "TASK_PROLOG",
           "SACCT_FORMAT", "EVENTS_COMMAND", "EXPORTS"]

ROOT = Path(__file__).resolve().parents[2]
SBATCH_SCRIPT = ROOT / "benchmarks" / "slurm" / "train.sbatch"
TASK_PROLOG = Path(__file__).resolve().parent / "task_prolog.sh"
#: The committed exports of the first run of each mode x setting: ``<mode>-<setting>/sacct.txt`` and ``events.txt``.
EXPORTS = ROOT / "benchmarks" / "results" / "slurmlab"
MODES = ("worker_crash", "hang", "node_kill", "link_cut", "health_check", "spare", "slurmd_pause")
#: A lost node that a spare in the allocation replaces (no requeue).
SPARE_MODES = ("spare",)
#: A healthy node whose slurmd stalls: set DOWN only where the stall outlasts SlurmdTimeout (a false DOWN).
FALSE_DOWN_MODES = ("slurmd_pause",)
#: How long the ``slurmd_pause`` stall lasts, s: past the tuned SlurmdTimeout and its ping cycle, far inside the default's.
PAUSE_S = 15.0
#: The ``slurmd_pause`` job's compute per step, s: its last six steps outlast the tuned DOWN.
PAUSE_STEP_S = 3.0
#: The lost nodes: silent to Slurm, set DOWN after SlurmdTimeout, the job requeued (NODE_FAIL).
NODE_MODES = LOST_NODE_MODES
#: A node its health check drains: the job fails by itself and requeues itself; its next attempt avoids the node.
DRAIN_MODES = ("health_check",)
#: The modes the scheduler handles (a node taken out of service, the job requeued); the others torchrun handles in
#: the allocation.
REQUEUED_MODES = NODE_MODES + DRAIN_MODES
#: The lab's HealthCheckProgram (a drain on a lost GPU); the lab runs it through a wrapper that sets its paths.
HEALTH_CHECK = Path(__file__).resolve().parent / "health_check.sh"
#: HealthCheckInterval per setting, s. Slurm's own default is 0 (no periodic check at all: a requeued job would land
#: on the broken node at every attempt), so "default" is the course's health-check period (5 min: the detect row of
#: data/restart_stages.csv, the Scenario's health_check_min) and "tuned" 5 s, of the order of the tuned SlurmdTimeout
#: (a real GPU check itself takes seconds).
HEALTH_CHECK_INTERVAL_S = {"default": round(60 * sourced("restart_stages.csv", "stage")["detect"].minutes), "tuned": 5}
#: The job's process-group (collective) timeout, s: when a hang is noticed.
COLLECTIVE_TIMEOUT_S = 30.0
SETTINGS = {"default": DEFAULTS, "tuned": TUNED}
#: The sacct columns the lab exports (course_lib.incidents.read_sacct reads them).
SACCT_FORMAT = "JobID,JobName,State,ExitCode,Submit,Eligible,Start,End,NodeList,NNodes,Reason"
#: The node events' export (course_lib.incidents.read_slurm_events reads it).
EVENTS_COMMAND = ["sacctmgr", "show", "event", "--parsable2", "All_Time", "Event=Node",
                  "format=Cluster,NodeName,Start,End,State,Reason,User"]


@dataclass(frozen=True)
class SlurmLabResult:
    """One run: its mode and setting, the phases (s since the failure; None where it does not occur), the
    exports (sacct and node-event texts), the job's final digest (sha256 of its parameters, optimizer state
    and every rank's RNG state) and that of the same job run uninterrupted in this process."""

    mode: str
    setting: str
    settings: SlurmSettings
    slurm_version: str
    phases: dict
    sacct: str
    events: str
    attempts: int
    final_digest: str
    reference_digest: str
    wall_s: float
    lab_events: list = field(repr=False, default_factory=list)

    @property
    def identical(self) -> bool:
        """The requeued job ended bit for bit where the uninterrupted run ends."""
        return bool(self.final_digest) and self.final_digest == self.reference_digest

    def stages_s(self) -> dict:
        """The course's four stages (s): detect, reschedule, reload, rewind (see the module doc)."""
        p = self.phases
        acted = p["down_s"] if self.mode in REQUEUED_MODES or self.attempts > 1 else p["noticed_s"]
        if acted is None:  # a stall that passed unseen: no restart, no stages
            return dict.fromkeys(STAGES)
        return {"detect_s": acted, "reschedule_s": p["rendezvous_s"] - acted, "reload_s": p["loaded_s"] - p["rendezvous_s"],
                "rewind_s": p["progress_s"] - p["loaded_s"]}

    def row(self, run: int) -> dict:
        """The run as one row of data/slurm_requeue.csv."""
        out = {"run": run, "mode": self.mode, "setting": self.setting, "slurm_version": self.slurm_version,
               "slurmd_timeout_s": self.settings.slurmd_timeout_s, "cred_expire_s": self.settings.cred_expire_s,
               "health_check_interval_s": self.settings.health_check_interval_s,
               "attempts": self.attempts, "identical": self.identical}
        out.update({k: _fmt(v) for k, v in self.phases.items()})
        out.update({k: _fmt(v) for k, v in self.stages_s().items()})
        return out


def _fmt(v):
    return "" if v is None else f"{v:.2f}"


def _job_config(mode: str, steps: int, fail_step: int) -> tuple[NodeLabConfig, dict]:
    """The job (two nodes, one rank each) and its one failure: rank 1 fails in the middle of ``fail_step``."""
    kind = {"worker_crash": "kill", "hang": "hang", "node_kill": "node_kill", "link_cut": "link_cut",
            "health_check": "gpu_lost", "spare": "node_kill", "slurmd_pause": "slurmd_pause"}[mode]
    if mode in FALSE_DOWN_MODES:
        return (NodeLabConfig(nodes=2, steps=steps, ckpt_every=4, collective_timeout_s=COLLECTIVE_TIMEOUT_S,
                              step_compute_s=PAUSE_STEP_S), {"kind": kind, "step": fail_step, "rank": 1, "pause_s": PAUSE_S})
    return (NodeLabConfig(nodes=2, steps=steps, ckpt_every=4, collective_timeout_s=COLLECTIVE_TIMEOUT_S),
            {"kind": kind, "step": fail_step, "rank": 1})


def _parse(ts: str) -> float | None:
    """A Slurm timestamp (``2026-12-05T14:03:11``, the local time of the daemons: this process's) as epoch
    seconds; None for an empty, ``Unknown`` or ``None`` field."""
    ts = ts.strip()
    if not ts or ts in ("Unknown", "None"):
        return None
    return datetime.fromisoformat(ts).timestamp()


def _sacct_rows(text: str) -> list[dict]:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    head = lines[0].split("|")
    return [dict(zip(head, ln.split("|"))) for ln in lines[1:]]


def run_failure(mode: str = "node_kill", setting: str = "tuned", *, steps: int = 12, fail_step: int = 6,
                timeout_s: float | None = None, run_dir=None, keep_exports: Path | None = None) -> SlurmLabResult:
    """Run the job with one failure of ``mode`` under Slurm's ``setting`` ("default" or "tuned"); see the module doc.

    ``keep_exports``: a folder to copy the run's sacct and node-event exports to (``sacct.txt``,
    ``events.txt``). Raises :class:`~course_lib.slurmlab.SlurmUnavailable` where the lab cannot run,
    :class:`~course_lib.labkit.LabError` past ``timeout_s`` (default: the setting's timeouts plus 120 s).
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {list(MODES)} (got {mode!r})")
    if setting not in SETTINGS:
        raise ValueError(f"setting must be one of {list(SETTINGS)} (got {setting!r})")
    settings = SETTINGS[setting]
    if mode in DRAIN_MODES:
        settings = replace(settings, health_check_interval_s=HEALTH_CHECK_INTERVAL_S[setting])
    if not (isinstance(steps, int) and isinstance(fail_step, int) and 1 < fail_step < steps):
        raise ValueError(f"fail_step must be an int with 1 < fail_step < steps (got fail_step={fail_step!r}, steps={steps!r})")
    if timeout_s is None:
        timeout_s = 2.0 * (settings.slurmd_timeout_s + settings.cred_expire_s + settings.sched_interval_s
                           + 2 * settings.health_check_interval_s) + 120.0
    cfg, failure = _job_config(mode, steps, fail_step)
    with Lab(run_dir, timeout_s=timeout_s, prefix="slurmlab") as lab:
        health = None
        if mode in DRAIN_MODES:
            health = _health_check_wrapper(lab.run_dir)
        cluster = SlurmCluster(lab, nodes=3, settings=settings, task_prolog=str(TASK_PROLOG),
                               health_check=str(health) if health else None)
        persist = lab.run_dir / "persist"
        shutil.rmtree(persist, ignore_errors=True)
        final = lab.run_dir / "final.pt"
        job = cfg.job_config()
        job["failures"] = [dict(failure, wait_for_spare=mode in SPARE_MODES)]
        cfg_path = write_job_config(lab.run_dir, job, {"events": str(lab.events_path), "disk": str(persist),
                                                      "shm": str(lab.run_dir / "unused-shm"), "final": str(final)})
        env = {"TORCHRUN": f"{sys.executable} -m course_lib.faultlab.launch", "FAULTLAB_EVENTS": lab.events_path,
               "FAULTLAB_GEN_FROM": "round", "NODELAB_IFACE": IFACE, "SLURMLAB_IFACE": IFACE,
               "TORCH_DISABLE_SHARE_RDZV_TCP_STORE": "1", "MAX_RESTARTS": "3", "LOGLEVEL": "WARNING"}
        if health:
            env["FAULTLAB_HEALTH_DIR"] = health.parent / "health"
        alloc = ["--nodes=2"]
        if mode in SPARE_MODES:  # one node more than the job trains on, kept when a node fails
            alloc = [f"--nodes={cfg.nodes + 1}", "--no-kill"]
            env["TRAIN_NODES"] = str(cfg.nodes)
        out = cluster.run(["sbatch", "--parsable", *alloc, f"--output={lab.run_dir}/job-%j.out", SBATCH_SCRIPT,
                           JOB_SCRIPT, cfg_path], env=env).stdout
        jobid = out.strip().split(";")[0]
        t_start = time.time()
        last_poll = [0.0, True]

        def alive() -> bool:  # the job still queued or running (polled once a second)
            if time.monotonic() - last_poll[0] > 1.0:
                last_poll[:] = [time.monotonic(), cluster.job_state(jobid) in ("PENDING", "RUNNING", "CONFIGURING",
                                                                             "REQUEUED", "COMPLETING", "REQUEUE_HOLD")]
            return last_poll[1]

        done = lab.wait_for("done", what="the job's last step", alive=alive, rank=0)
        # the job's own row COMPLETED (sacct), then the exports. With a spare, the lost node's job step ends only when
        # Slurm sets the node DOWN (SlurmdTimeout, often after the training is done), and the batch script waits for it.
        wait_s = 60 + (settings.slurmd_timeout_s + 2 * settings.message_timeout_s if mode in SPARE_MODES else 0)
        cluster._wait(lambda: "COMPLETED" in cluster.run(["sacct", "-X", "-n", "-j", jobid, "-o", "State"]).stdout,
                      "sacct to show the job COMPLETED", wait_s)
        sacct = cluster.run(["sacct", "-D", "--parsable2", "--allusers", "-j", jobid, f"--format={SACCT_FORMAT}"]).stdout
        events_txt = cluster.run(EVENTS_COMMAND).stdout
        wall = time.time() - t_start
        ev = lab.events()
        if keep_exports is not None:
            keep = Path(keep_exports)
            keep.mkdir(parents=True, exist_ok=True)
            (keep / "sacct.txt").write_text(sacct)
            (keep / "events.txt").write_text(events_txt)
    phases = _phases(mode, ev, sacct, events_txt, jobid)
    attempts = _attempts(sacct, jobid)
    reference = uninterrupted_reference(cfg).final_digest
    return SlurmLabResult(mode, setting, settings, slurm_version(), phases, sacct, events_txt, attempts, done["digest"],
                          reference, wall, ev)


def _attempts(sacct: str, jobid: str) -> int:
    """The job's attempts in a ``sacct -D`` export: its own rows, less the RESIZING rows (a ``--no-kill`` job that lost a
    node is recorded as a resized job, not started again)."""
    return len([r for r in _sacct_rows(sacct) if r["JobID"] == jobid and not r["State"].startswith("RESIZING")])


def _health_check_wrapper(run_dir: Path) -> Path:
    """The HealthCheckProgram slurmd runs: :data:`HEALTH_CHECK` with the lab's paths (slurmd passes it only
    SLURMD_NODENAME), and the folder a lost GPU's marker goes to."""
    (run_dir / "health").mkdir(exist_ok=True)
    wrapper = run_dir / "health_check"
    wrapper.write_text(f"#!/bin/sh\nexport SLURM_CONF='{run_dir / 'slurm' / 'slurm.conf'}' "
                       f"SLURMLAB_HEALTH_DIR='{run_dir / 'health'}'\nexec /bin/sh '{HEALTH_CHECK}'\n")
    wrapper.chmod(0o755)
    return wrapper


def _first(events, ev, after, **match):
    return next((e for e in events if e["ev"] == ev and e["t"] >= after and all(e.get(k) == v for k, v in match.items())), None)


def _all_ranks(events, ev, after, ranks=(0, 1), **match):
    ts = [(_first(events, ev, after, rank=r, **match) or {}).get("t") for r in ranks]
    return None if any(t is None for t in ts) else max(ts)


def _phases(mode: str, events: list, sacct: str, events_txt: str, jobid: str) -> dict:
    events = sorted(events, key=lambda e: e["t"])
    inj = next((e for e in events if e["ev"] == "inject"), None)
    if inj is None:
        raise LabError("the run logged no inject event: the failure never fired")
    t0 = inj["t"]
    rel = lambda t: None if t is None else t - t0  # noqa: E731
    noticed = _first(events, "agent_noticed", t0)
    p = dict.fromkeys(PHASES)
    p["noticed_s"] = rel(noticed["t"]) if noticed else None
    restart_from = t0
    rows = [r for r in _sacct_rows(sacct) if r["JobID"] == jobid]
    requeued = mode in REQUEUED_MODES or (mode in FALSE_DOWN_MODES and any(r["State"].startswith("NODE_FAIL") for r in rows))
    if requeued or mode in SPARE_MODES:  # the node taken out of service (for a spare: after the job went on)
        node = inj.get("node")
        state = "DRAIN" if mode in DRAIN_MODES else "DOWN"
        down = [r for r in _sacct_rows(events_txt) if r.get("NodeName") == node and r.get("State", "").startswith(state)]
        starts = [_parse(r["TimeStart"]) for r in down if _parse(r["TimeStart"]) is not None and _parse(r["TimeStart"]) >= t0 - 1]
        p["down_s"] = rel(min(starts)) if starts else None
    if requeued:
        failed = rows[0] if len(rows) > 1 and rows[0]["State"].startswith("REQUEUE" if mode in DRAIN_MODES else "NODE_FAIL") else None
        nxt = rows[-1] if failed is not None and rows[-1]["State"].startswith("COMPLETED") else None
        if failed is None or nxt is None:
            raise LabError(f"sacct shows no requeue of job {jobid}:\n{sacct}")
        p["requeued_s"] = rel(_parse(failed["End"]))
        p["eligible_s"] = rel(_parse(nxt["Eligible"]))
        p["started_s"] = rel(_parse(nxt["Start"]))
        restart_from = _parse(nxt["Start"]) - 1.0  # sacct's second: the job's own events follow it
    elif noticed is not None:
        restart_from = noticed["t"]
    elif mode in FALSE_DOWN_MODES:  # the stall passed unseen: nothing restarted
        return p
    p["rendezvous_s"] = rel(_all_ranks(events, "pg_ready", restart_from))
    p["loaded_s"] = rel(_all_ranks(events, "state_loaded", restart_from))
    first = _first(events, "step_done", restart_from, rank=0)
    p["first_step_s"] = rel(first["t"]) if first else None
    pre = inj.get("progress", 0)
    back = next((e for e in events if e["ev"] == "step_done" and e["t"] > t0 + (p["loaded_s"] or 0) - 1e-9
                 and e["rank"] == 0 and e["step"] >= pre), None)
    p["progress_s"] = rel(back["t"]) if back else None
    return p
