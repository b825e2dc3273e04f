"""The phases of a node loss, read from the nodes lab's event log (notebook 11).

:func:`course_lib.faultlab.events.restart_stages` measures the course's four stages of a restart
(detect, reschedule, reload, rewind). On namespaced nodes the rescheduling stage is itself a chain,
and which link of it a hot spare shortens is the question of notebook 11; :func:`node_loss_phases`
splits it with the agents' rendezvous events (:mod:`course_lib.faultlab.launch`):

* **heartbeat expiry**: failure -> an agent's copy of the rendezvous state drops the lost node
  (``rdzv_dead``): the rendezvous declares it dead ``keep_alive_interval x keep_alive_max_attempt``
  after its last heartbeat, at the next state sync of a live agent. Until then the round the lost
  node belonged to still counts it, and no new round can form.
* **replacement start-up**: the lab begins to bring up a fresh replacement node (``node_start``,
  the nodes lab's own event, :mod:`course_lib.nodelab.lab`; the agent's ``agent_start`` in a log without it) -> its
  agent calls the rendezvous (``rdzv_enter``): the namespace and its link, the agent's process start,
  ``import torch``, the agent's set-up. A hot spare did this before the failure (``None``).
* **replacement ready**: failure -> the replacement is in the rendezvous (a fresh node's
  ``rdzv_enter``; 0 for a spare that was already waiting in it).
* **membership wait**: the job noticed the loss -> the later of the heartbeat expiry and the
  replacement being ready (the gate: ``gated_by`` says which); 0 when both came before the notice.
* **round formed**: the gate -> every member of the new round has joined it (``rdzv_joined``; the
  rendezvous's last-call wait and state syncs).
* **workers start**: the round formed -> every rank of the new generation has its process group up
  (``workers_spawned``, the worker processes' ``import torch``, gloo's connect).
* **first step**: every rank loaded the state -> every rank completed its first step.

membership wait + round formed + workers start = the rescheduling stage, exactly; detect +
rescheduling + reload + first step = failure -> first step of the new generation. These are the
boundaries of :func:`course_lib.incidents.read_lab_events` too (its ``detected``, ``rendezvous``,
``loaded``, ``first_step``), with the rendezvous's three events between ``detected`` and
``rendezvous``.
"""
from __future__ import annotations

from ..faultlab.events import MeasuredRestart, _all_ranks_time

__all__ = ["PHASES", "node_loss_phases"]

#: The phases :func:`node_loss_phases` returns (seconds), in the order a node loss passes them.
PHASES = ("heartbeat_expiry", "replacement_startup", "replacement_ready", "membership_wait", "round_formed",
          "workers_start", "first_step")


def _joined(events: list[dict], round_: int) -> dict[str, float]:
    """{node: first time its agent joined round ``round_``}."""
    out: dict[str, float] = {}
    for e in events:
        if e["ev"] == "rdzv_joined" and e.get("round") == round_ and e.get("node"):
            out.setdefault(e["node"], e["t"])
    return out


def node_loss_phases(events: list[dict], restart: MeasuredRestart) -> dict:
    """The phases (module doc) of one restart after a node loss, in seconds, plus ``gated_by``
    (``"heartbeat expiry"`` or ``"replacement"``), ``replacement`` (the node that took the lost one's
    place), ``replacement_kind`` (``"spare"``: it waited in the rendezvous before the failure;
    ``"fresh"``: its agent started after it) and ``reschedule_s`` (the sum of the three rescheduling
    phases).

    ``events``: the run's event log (:func:`course_lib.labkit.read_events`); ``restart``: one of
    :func:`course_lib.faultlab.events.restart_stages`'s restarts of that log. Raises ValueError when
    the log lacks the rendezvous events of that restart (a log written by a launcher without them,
    or a restart not caused by a node loss).
    """
    if not isinstance(restart, MeasuredRestart):
        raise ValueError(f"restart must be a MeasuredRestart (got {type(restart).__name__})")
    events = sorted(events, key=lambda e: e["t"])
    t_fail = restart.t_fail
    t_noticed = t_fail + restart.detect_s
    ranks = sorted({e["rank"] for e in events if e["rank"] >= 0})
    dead = next((e for e in events if e["ev"] == "rdzv_dead" and e["t"] >= t_fail), None)
    members = _joined(events, restart.resumed_gen)
    if dead is None or not members:
        raise ValueError("events must hold the rendezvous's rdzv_dead and rdzv_joined events of the restart "
                         "(the nodes lab's launcher logs them; this log has none after the failure)")
    before = {e.get("node") for e in events if e["ev"] == "workers_spawned" and e["gen"] == restart.gen}
    new = sorted(set(members) - before)
    if len(new) != 1:
        raise ValueError(f"the restart's new round must take in exactly one node the failed round did not have "
                         f"(got {new}): one node lost, one replacement")
    (node,) = new
    own = [e for e in events if e.get("node") == node and e["rank"] < 0]
    t_start = next((e["t"] for e in own if e["ev"] == "node_start"), None)
    if t_start is None:
        t_start = next(e["t"] for e in own if e["ev"] == "agent_start")
    t_enter = next((e["t"] for e in own if e["ev"] == "rdzv_enter"), None)
    if t_enter is None:
        raise ValueError(f"the replacement node {node} has no rdzv_enter event")
    spare = t_start < t_fail
    t_ready = t_fail if spare else t_enter
    t_gate = max(dead["t"], t_ready)
    t_after = max(t_gate, t_noticed)
    t_round = max(members.values())
    t_pg, _ = _all_ranks_time(events, "pg_ready", restart.resumed_gen, ranks)
    t_loaded, _ = _all_ranks_time(events, "state_loaded", restart.resumed_gen, ranks)
    t_step, _ = _all_ranks_time(events, "step_done", restart.resumed_gen, ranks)
    if None in (t_pg, t_loaded, t_step):
        raise ValueError("every rank of the restarted generation must have its pg_ready, state_loaded and a step_done")
    out = {
        "heartbeat_expiry": dead["t"] - t_fail,
        "replacement_startup": None if spare else t_enter - t_start,
        "replacement_ready": t_ready - t_fail,
        "membership_wait": t_after - t_noticed,
        "round_formed": t_round - t_after,
        "workers_start": t_pg - t_round,
        "first_step": t_step - t_loaded,
    }
    out.update(gated_by="heartbeat expiry" if dead["t"] >= t_ready else "replacement", replacement=node,
               replacement_kind="spare" if spare else "fresh",
               reschedule_s=out["membership_wait"] + out["round_formed"] + out["workers_start"])
    return out
