"""The torchft lab's event log read back: one :class:`Recovery` per failure (notebook 10).

Same log format as notebook 07 (:mod:`course_lib.faultlab.events`); ``rank`` is the replica
group and ``gen`` its torchrun restart count. For a failure injected into group ``g`` at
``t_fail`` (seconds, wall clock):

* **detect_s**: until the failure is known: 0 for a kill (the process is gone; its sockets
  close), the learned timeout's ``hang_detected`` for a hang;
* **stall_s**: failure -> the *last* surviving group's next committed step (the survivors wait
  in the all-reduce until the failure is seen, the step is not committed, the lighthouse forms
  a quorum without ``g``, then they step on). It contains at most one ordinary step;
* **rejoin_s**: failure -> group ``g``'s first committed step again (its process restarted,
  ``import torch``, torchft's manager up, weights and optimizer state fetched from a healthy
  peer: ``state_loaded`` with ``source`` ``peer``, then a quorum with everyone);
* **restart_s**, **recover_s**: the parts of the rejoin: failure -> the new worker's manager is
  up; -> the peer's state is loaded.

GPU-seconds lost per failure (:meth:`Recovery.gpu_seconds_lost`): every rank x the stall, plus
the failed group's ranks x its rejoin (it double-counts the stall for the failed group: on
the safe side for torchft).

:func:`badput_buckets` names the same seconds in the buckets of Google's goodput taxonomy
(``ml-goodput-measurement``'s ``BadputType``) for a whole-job restart and for a torchft recovery.
That package's own calculator is not run here: it imports the Google Cloud Logging, Monitoring
and Storage clients at import time and reads its entries from Cloud Logging (its tests inject a
mock logger); the course names its own measured seconds in its buckets instead.
"""
from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass

__all__ = ["Recovery", "recoveries", "BADPUT_BUCKETS", "badput_buckets", "restart_badput"]

#: Google's goodput taxonomy: the members of ``ml_goodput_measurement``'s ``BadputType`` (0.2.3) that a
#: restart touches, in its spelling (its TPU initialisation is the accelerator's; data loading and the
#: elastic buckets do not occur in these labs).
BADPUT_BUCKETS = ("TPU_INITIALIZATION", "PROGRAM_STARTUP", "UNPRODUCTIVE_CHECKPOINT_SAVE_TIME",
                  "UNPRODUCTIVE_CHECKPOINT_RESTORE_TIME", "WASTED_PROGRESS_FROM_DISRUPTION",
                  "INFRASTRUCTURE_RECOVERY_FROM_DISRUPTION", "OTHER")


def _buckets(**gpu_s) -> dict[str, float]:
    return {b: float(gpu_s.get(b, 0.0)) for b in BADPUT_BUCKETS}


@dataclass(frozen=True)
class Recovery:
    """One failure in the torchft lab, measured from the event log (seconds)."""

    kind: str
    group: int
    gen: int
    t_fail: float
    detect_s: float
    stall_s: float
    rejoin_s: float
    restart_s: float
    recover_s: float
    step_time_s: float
    survivor_steps_while_out: int
    aborted_steps: int
    recovered_from: str

    def gpu_seconds_lost(self, ranks_per_group: int, groups: int) -> float:
        """Every rank x the stall + the failed group's ranks x its rejoin."""
        return groups * ranks_per_group * self.stall_s + ranks_per_group * self.rejoin_s

    def as_dict(self) -> dict:
        return asdict(self)


def _first(events, **match):
    for e in events:
        if all(e.get(k) == v for k, v in match.items()):
            return e
    return None


def recoveries(events: list[dict], groups: int) -> list[Recovery]:
    """One :class:`Recovery` per ``inject`` event whose group rejoined (a run cut short is left out)."""
    events = sorted(events, key=lambda e: e["t"])
    out = []
    for inj in (e for e in events if e["ev"] == "inject"):
        g, k, t0 = inj["rank"], inj["gen"], inj["t"]
        later = [e for e in events if e["t"] >= t0]
        survivors = [s for s in range(groups) if s != g]
        nexts = [_first(later, ev="step_done", rank=s) for s in survivors]
        back = _first(later, ev="step_done", rank=g, gen=k + 1)
        up = _first(later, ev="pg_ready", rank=g, gen=k + 1)
        loaded = _first(later, ev="state_loaded", rank=g, gen=k + 1)
        if back is None or up is None or any(n is None for n in nexts):
            continue
        hang = _first(later, ev="hang_detected", rank=g, gen=k)
        detect = (hang["t"] - t0) if (inj["kind"] == "hang" and hang is not None) else 0.0
        before = sorted(e["t"] for e in events if e["ev"] == "step_done" and e["rank"] == survivors[0] and e["t"] < t0)
        diffs = [b - a for a, b in zip(before, before[1:])][-10:]
        out.append(Recovery(
            kind=inj["kind"], group=g, gen=k, t_fail=t0, detect_s=detect,
            stall_s=max(n["t"] for n in nexts) - t0,
            rejoin_s=back["t"] - t0,
            restart_s=up["t"] - t0,
            recover_s=(loaded["t"] - t0) if loaded is not None else float("nan"),
            step_time_s=statistics.median(diffs) if diffs else float("nan"),
            survivor_steps_while_out=sum(1 for e in events if e["ev"] == "step_done" and e["rank"] == survivors[0]
                                         and t0 <= e["t"] < back["t"]),
            aborted_steps=sum(1 for e in events if e["ev"] == "step_aborted" and e["rank"] in survivors
                              and t0 <= e["t"] <= back["t"]),
            recovered_from=(loaded or {}).get("source", "none"),
        ))
    return out


def badput_buckets(recovery: Recovery, ranks_per_group: int, groups: int) -> dict[str, float]:
    """GPU-seconds of one torchft recovery in the goodput taxonomy's buckets (:data:`BADPUT_BUCKETS`).

    Every rank waits the stall, until the failure is seen and a quorum without the failed group
    forms (``INFRASTRUCTURE_RECOVERY_FROM_DISRUPTION``); the failed group's ranks are, beyond that,
    restarting (``PROGRAM_STARTUP``: process, ``import torch``, torchft's manager), then fetching the
    state from a peer (``UNPRODUCTIVE_CHECKPOINT_RESTORE_TIME``: a restore, from a peer's memory, not
    from storage), then waiting for their first committed step (``WASTED_PROGRESS_FROM_DISRUPTION``:
    no rewind, at most a step). The sum is :meth:`Recovery.gpu_seconds_lost`.
    """
    n, f = groups * ranks_per_group, ranks_per_group
    recover = recovery.recover_s if recovery.recover_s == recovery.recover_s else recovery.restart_s
    return _buckets(PROGRAM_STARTUP=f * recovery.restart_s,
                    UNPRODUCTIVE_CHECKPOINT_RESTORE_TIME=f * max(recover - recovery.restart_s, 0.0),
                    WASTED_PROGRESS_FROM_DISRUPTION=f * max(recovery.rejoin_s - recover, 0.0),
                    INFRASTRUCTURE_RECOVERY_FROM_DISRUPTION=n * recovery.stall_s)


def restart_badput(stages_s: dict[str, float], ranks: int) -> dict[str, float]:
    """GPU-seconds of one whole-job restart (notebook 07's four stages, seconds) in the same buckets.

    detect -> ``INFRASTRUCTURE_RECOVERY_FROM_DISRUPTION`` (every rank idle until the failure is
    noticed and the agent acts); reschedule (teardown, process start, ``import torch``, rendezvous,
    communicator) -> ``PROGRAM_STARTUP``; reload -> ``UNPRODUCTIVE_CHECKPOINT_RESTORE_TIME``; rewound
    work -> ``WASTED_PROGRESS_FROM_DISRUPTION``. A CPU has no accelerator to initialise
    (``TPU_INITIALIZATION`` 0); the lab's checkpoint writes are not part of a restart.
    """
    return _buckets(PROGRAM_STARTUP=ranks * stages_s["reschedule"],
                    UNPRODUCTIVE_CHECKPOINT_RESTORE_TIME=ranks * stages_s["reload"],
                    WASTED_PROGRESS_FROM_DISRUPTION=ranks * stages_s["rewind"],
                    INFRASTRUCTURE_RECOVERY_FROM_DISRUPTION=ranks * stages_s["detect"])
