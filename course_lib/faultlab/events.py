"""The four restart stages read from the lab's event log (notebook 07).

The log is the lab kit's (:mod:`course_lib.labkit.events`): every process of a run (torchrun's
agent and each worker) appends records carrying the wall clock ``t``, the event name ``ev``, the
``rank`` (``-1`` for the agent), the worker generation ``gen`` (on one host torchrun's restart count,
across nodes the rendezvous round) and the ``pid``.

Events (who writes them):

============== ======= ==============================================================
``ev``         writer  meaning
============== ======= ==============================================================
agent_start    agent   the instrumented torchrun started
agent_noticed  agent   the agent decided to restart its workers: its monitor found a failed
                       worker (``state`` FAILED, ``exitcodes``), or the rendezvous has a node
                       waiting because a member was declared dead (``state`` NODE_WAITING)
rdzv_waiting   agent   a spare agent joined the redundancy list of a complete round
rdzv_enter     agent   the agent calls the rendezvous (nodes lab: a new node's start-up is over)
rdzv_joined    agent   the rendezvous returned: the agent is in round ``round`` (nodes lab)
rdzv_dead      agent   the rendezvous dropped nodes whose heartbeat expired (``dead``; nodes lab)
agent_stopped  agent   the agent stopped the surviving workers of that generation
workers_spawned agent  the agent started a new generation of workers
worker_start   worker  a worker process started (logged before ``import torch``)
pg_ready       worker  the process group is up (rendezvous and communicator done)
ckpt_skipped   worker  a checkpoint failed verification and was skipped on reload
state_loaded   worker  the state of step ``step`` was loaded (``source``)
step_done      worker  optimizer step ``step`` applied
ckpt_written   worker  the checkpoint of step ``step`` was committed (rank 0)
inject         worker  failure number ``failure`` (of ``kind``) is injected now
noticed        worker  a collective raised (``reason``): a peer noticed the failure
done           worker  the job finished (rank 0 adds the state digest)
============== ======= ==============================================================

:func:`restart_stages` turns a log into one :class:`MeasuredRestart` per injected
failure. The stage boundaries (seconds, wall clock):

* **detection**: failure injected -> the agent notices (the first moment the restart
  machinery knows; a peer's collective error usually comes first and is kept as
  ``peer_noticed_s``; without agent events the peer's notice is used);
* **rescheduling**: noticed -> every rank of the next generation that loaded a state (the next
  one, unless a round that formed in between broke up again) has its process group up
  (teardown, process start, ``import torch``, rendezvous, communicator);
* **reload**: -> every rank has loaded the checkpoint;
* **rewound work**: -> every rank has again completed the step that was done before the
  failure (``steps_recomputed`` steps, each ``step_time_s`` long).

The four add up exactly to the restart time, failure -> back at the pre-failure step.
"""
from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass

from ..labkit.events import read_events
from ..restart import STAGES

__all__ = [
    "read_events",
    "MeasuredRestart",
    "restart_stages",
    "to_restart_stages",
    "STAGE_NAMES",
]

STAGE_NAMES = STAGES  # the course's four stages of a restart (notebook 03), in order


@dataclass(frozen=True)
class MeasuredRestart:
    """One restart measured from the event log (times in seconds; see the module doc)."""

    kind: str
    failed_rank: int
    gen: int  # generation that failed
    resumed_gen: int  # the generation the restart brought up
    t_fail: float
    detect_s: float
    reschedule_s: float
    reload_s: float
    rewind_s: float
    peer_noticed_s: float | None
    noticed_by: str
    reason: str
    pre_failure_step: int
    resumed_step: int
    steps_recomputed: int
    step_time_s: float
    reload_source: str
    skipped_checkpoints: int

    @property
    def total_s(self) -> float:
        """Failure -> back at the pre-failure step (the sum of the four stages)."""
        return self.detect_s + self.reschedule_s + self.reload_s + self.rewind_s

    def stages_s(self) -> dict[str, float]:
        """{stage: seconds} in the course's order."""
        return dict(zip(STAGE_NAMES, (self.detect_s, self.reschedule_s, self.reload_s, self.rewind_s)))

    def as_dict(self) -> dict:
        d = asdict(self)
        d["total_s"] = self.total_s
        return d


def _first(events, **match):
    for e in events:
        if all(e.get(k) == v for k, v in match.items()):
            return e
    return None


def _all_ranks_time(events, ev, gen, ranks, **match):
    """Latest time at which every rank in ``ranks`` has logged ``ev`` in ``gen`` (None if one has not)."""
    times = []
    for r in ranks:
        e = _first(events, ev=ev, gen=gen, rank=r, **match)
        if e is None:
            return None, None
        times.append(e["t"])
    return max(times), times


def _next_generation(events, g, ranks):
    """The first generation after ``g`` in which every rank loaded a state (None: none did)."""
    for n in sorted({e["gen"] for e in events if e["ev"] == "state_loaded" and e["gen"] > g}):
        if _all_ranks_time(events, "state_loaded", n, ranks)[0] is not None \
                and _all_ranks_time(events, "pg_ready", n, ranks)[0] is not None:
            return n
    return None


def restart_stages(events: list[dict]) -> list[MeasuredRestart]:
    """One :class:`MeasuredRestart` per injected failure whose restart got back to its step.

    ``events`` as returned by :func:`read_events` (sorted by time). A failure after which
    the job never got back to its pre-failure step (the run was cut short) is left out.
    """
    events = sorted(events, key=lambda e: e["t"])
    ranks = sorted({e["rank"] for e in events if e["rank"] >= 0})
    if not ranks:
        return []
    out = []
    for inj in (e for e in events if e["ev"] == "inject"):
        g = inj["gen"]
        t_fail = inj["t"]
        later = [e for e in events if e["t"] >= t_fail]
        agent = _first(later, ev="agent_noticed", gen=g)
        peer = _first(later, ev="noticed", gen=g)
        if agent is None and peer is None:
            continue
        t_noticed = agent["t"] if agent is not None else peer["t"]
        noticed_by = "agent" if agent is not None else "peer"
        done_before = [e["step"] for e in events if e["ev"] == "step_done" and e["gen"] == g and e["t"] <= t_fail]
        pre = max(done_before) if done_before else inj.get("progress", 0)
        pre = max(pre, inj.get("progress", 0))
        nxt = _next_generation(events, g, ranks)
        if nxt is None:
            continue
        t_running, _ = _all_ranks_time(events, "pg_ready", nxt, ranks)
        t_loaded, _ = _all_ranks_time(events, "state_loaded", nxt, ranks)
        loaded = _first(events, ev="state_loaded", gen=nxt)
        resumed = loaded["step"]
        if resumed >= pre:
            t_back = t_loaded
        else:
            t_back, _ = _all_ranks_time(events, "step_done", nxt, ranks, step=pre)
            if t_back is None:
                continue
        new_steps = sorted(
            (e["step"], e["t"]) for e in events if e["ev"] == "step_done" and e["gen"] == nxt and e["rank"] == ranks[0]
        )
        diffs = [b[1] - a[1] for a, b in zip(new_steps, new_steps[1:]) if b[0] == a[0] + 1 and b[0] <= max(pre, resumed + 1)]
        if not diffs:
            diffs = [b[1] - a[1] for a, b in zip(new_steps, new_steps[1:]) if b[0] == a[0] + 1]
        step_time = statistics.median(diffs) if diffs else 0.0
        skipped = sum(1 for e in events if e["ev"] == "ckpt_skipped" and e["gen"] == nxt and e["rank"] == ranks[0])
        out.append(
            MeasuredRestart(
                kind=inj["kind"],
                failed_rank=inj["rank"],
                gen=g,
                resumed_gen=nxt,
                t_fail=t_fail,
                detect_s=t_noticed - t_fail,
                reschedule_s=t_running - t_noticed,
                reload_s=t_loaded - t_running,
                rewind_s=t_back - t_loaded,
                peer_noticed_s=(peer["t"] - t_fail) if peer is not None else None,
                noticed_by=noticed_by,
                reason=(peer or {}).get("reason", "") if peer is not None else "",
                pre_failure_step=pre,
                resumed_step=resumed,
                steps_recomputed=max(pre - resumed, 0),
                step_time_s=step_time,
                reload_source=loaded.get("source", ""),
                skipped_checkpoints=skipped,
            )
        )
    return out


def to_restart_stages(measured: MeasuredRestart):
    """The measured restart as the course's ``RestartStages`` (minutes), notebook 03's type."""
    from ..restart import RestartStages

    s = measured.stages_s()
    return RestartStages(**{k: max(v, 0.0) / 60.0 for k, v in s.items()})
