"""The lab kit: what every lab of the course shares (notebooks 07, 10, 11).

A lab is a job module, a config, its failures and what to inject when; everything else is here:
:mod:`.lab` (:class:`Lab`: one run's folder, processes, deadline and clean-up; :class:`LabResult`), :mod:`.events` (the event log every process appends to, reading it, waiting on it,
and the injection-by-state helpers :func:`next_failure` and :func:`waiting_nodes`), :mod:`.procs`
(process groups, the run's token, output tails, ports, :class:`LabError`), :mod:`.toy` (the toy training problem).
Nothing here imports torch at import time.
"""
from .events import EventLog, events_of, next_failure, read_events, spare_state, stall_limit_s, wait_for, waiting_nodes
from .lab import Lab, LabResult, leftovers, temporary_run_dir
from .procs import LabError, die_with_parent, kill_group, output_tail, pids_with_token, port_is_open

__all__ = [
    "EventLog",
    "Lab",
    "LabError",
    "LabResult",
    "die_with_parent",
    "events_of",
    "kill_group",
    "leftovers",
    "next_failure",
    "output_tail",
    "pids_with_token",
    "port_is_open",
    "read_events",
    "spare_state",
    "stall_limit_s",
    "temporary_run_dir",
    "wait_for",
    "waiting_nodes",
]
