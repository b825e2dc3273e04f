"""torchrun with an event log: ``python -m course_lib.faultlab.launch <torchrun args>`` (notebook 07).

This runs PyTorch's own launcher (``torch.distributed.run.main``, the code behind the
``torchrun`` command, with the same arguments) after wrapping three methods of its local
elastic agent so that the agent's side of a restart lands in the lab's event log (the
environment variable ``FAULTLAB_EVENTS`` names the file):

* ``_monitor_workers``: the first poll that finds a failed worker -> ``agent_noticed``;
* ``_stop_workers``: the survivors are stopped -> ``agent_stopped``;
* ``_start_workers``: a generation of workers was started -> ``workers_spawned``.

The wrappers only observe (they call the original and return its result). They use private
method names of ``torch.distributed.elastic``; if a future PyTorch renames them the lab still
runs, without the agent events, and detection falls back to the peers' notice.

Generations. On one host (notebook 07) a generation is the agent's restart count. Across
nodes (notebook 11, ``FAULTLAB_GEN_FROM=round``) agents restart different numbers of times
(a spare joins with a count of 0), so the generation is the rendezvous round instead: the
wrapper of ``DynamicRendezvousHandler.next_rendezvous`` puts the round the node joined in
the environment variables ``FAULTLAB_GEN`` and ``TIERS_GEN`` (the two-tier job's name), which
the workers inherit and log.
"""
from __future__ import annotations

import os
import sys
import time

from .events import EventLog


def _instrument(log: EventLog) -> bool:
    try:
        from torch.distributed.elastic.agent.server.api import WorkerState
        from torch.distributed.elastic.agent.server.local_elastic_agent import LocalElasticAgent
    except ImportError:  # pragma: no cover - depends on the torch version
        return False
    needed = ("_monitor_workers", "_stop_workers", "_start_workers")
    if not all(hasattr(LocalElasticAgent, n) for n in needed):  # pragma: no cover
        return False
    noticed: set[int] = set()
    by_round = os.environ.get("FAULTLAB_GEN_FROM") == "round"
    if by_round:
        _instrument_round()

    def gen_of(agent) -> int:
        if by_round:
            return int(os.environ.get("FAULTLAB_GEN", "0"))
        spec = agent._worker_group.spec
        return spec.max_restarts - agent._remaining_restarts

    orig_monitor = LocalElasticAgent._monitor_workers
    orig_stop = LocalElasticAgent._stop_workers
    orig_start = LocalElasticAgent._start_workers

    def _monitor_workers(self, worker_group):
        result = orig_monitor(self, worker_group)
        if result.state in (WorkerState.FAILED, WorkerState.UNHEALTHY):
            g = gen_of(self)
            if g not in noticed:
                noticed.add(g)
                codes = {str(k): getattr(v, "exitcode", None) for k, v in (result.failures or {}).items()}
                log.gen = g
                log("agent_noticed", state=result.state.name, exitcodes=codes)
        return result

    def _stop_workers(self, worker_group, *args, **kwargs):
        out = orig_stop(self, worker_group, *args, **kwargs)
        log.gen = gen_of(self)
        log("agent_stopped")
        return out

    def _start_workers(self, worker_group, *args, **kwargs):
        out = orig_start(self, worker_group, *args, **kwargs)
        log.gen = gen_of(self)
        log("workers_spawned", pids={str(k): v for k, v in out.items()})
        return out

    LocalElasticAgent._monitor_workers = _monitor_workers
    LocalElasticAgent._stop_workers = _stop_workers
    LocalElasticAgent._start_workers = _start_workers
    return True


def _instrument_round() -> None:
    """After each rendezvous, ``FAULTLAB_GEN`` = the round joined (the workers inherit it)."""
    from torch.distributed.elastic.rendezvous.dynamic_rendezvous import DynamicRendezvousHandler

    orig = DynamicRendezvousHandler.next_rendezvous

    def next_rendezvous(self, *args, **kwargs):
        out = orig(self, *args, **kwargs)
        os.environ["FAULTLAB_GEN"] = os.environ["TIERS_GEN"] = str(self._state_holder.state.round)
        return out

    DynamicRendezvousHandler.next_rendezvous = next_rendezvous


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    log = EventLog(os.environ["FAULTLAB_EVENTS"], rank=-1, gen=0)
    t0 = time.time()
    from torch.distributed.run import main as torchrun_main

    ok = _instrument(log)
    log("agent_start", t=t0, instrumented=ok)
    try:
        torchrun_main(argv)
    finally:
        log("agent_exit")


if __name__ == "__main__":
    main()
