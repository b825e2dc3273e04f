"""torchrun with an event log: ``python -m course_lib.faultlab.launch <torchrun args>`` (notebook 07).

This runs PyTorch's own launcher (``torch.distributed.run.main``, the code behind the
``torchrun`` command, with the same arguments) after wrapping three methods of its local
elastic agent so that the agent's side of a restart lands in the lab's event log (the
environment variable ``FAULTLAB_EVENTS`` names the file):

* ``_monitor_workers``: the first poll that finds a failed worker -> ``agent_noticed``;
* ``_stop_workers``: the survivors are stopped -> ``agent_stopped``;
* ``_start_workers``: a generation of workers was started -> ``workers_spawned``;
* ``_restart_workers`` reached with healthy workers (the rendezvous has a node waiting, because a
  member was declared dead and a spare stepped forward) -> ``agent_noticed`` with state
  ``NODE_WAITING``: for a node that went silent, that is how the job notices it first when the
  rendezvous's keep-alive expires before the collective timeout.

The wrappers observe (they call the original and return its result), with one exception: the
restart-loop guard (:class:`.guard.RestartGuard`). After each failure the agent notices, the
guard is told the newest step that generation completed (read from the event log) and the
failed ranks; when restarts have made no progress ``--max-no-progress-restarts`` times in a row
(this launcher's own option, removed before torchrun sees the rest; default NVRx's 3) the agent's
remaining restarts are set to zero, a ``gave_up`` event and a line on stderr name the node
(``FAULTLAB_NODE``, default the host name: set it per node in a multi-node lab), the rank and the step, and torchrun ends the job instead of restarting it again. They use private
method names of ``torch.distributed.elastic``; if a future PyTorch renames them the lab still
runs, without the agent events and the guard, and detection falls back to the peers' notice.

Generations. On one host (notebook 07) a generation is the agent's restart count. Across
nodes (notebook 11, ``FAULTLAB_GEN_FROM=round``) agents restart different numbers of times
(a spare joins with a count of 0), so the generation is the rendezvous round instead: the
wrapper of ``DynamicRendezvousHandler.next_rendezvous`` puts the round the node joined in
the environment variables ``FAULTLAB_GEN`` and ``TIERS_GEN`` (the two-tier job's name), which
the workers inherit and log. In that mode the agent also logs the rendezvous's side of a node loss
(:mod:`course_lib.nodelab.phases` reads them): ``rdzv_enter`` when it calls ``next_rendezvous`` (for a
new node: its start-up is over), ``rdzv_joined`` (``round``) when that returns (the round formed with
it), and ``rdzv_dead`` (``dead``: the addresses) when its copy of the rendezvous state drops nodes
whose heartbeat expired (``keep_alive_interval`` x ``keep_alive_max_attempt`` without one).
"""
from __future__ import annotations

import os
import socket
import sys
import time

from ..labkit.events import EventLog, read_events
from .guard import NoProgressError, RestartGuard


def _progress(log: EventLog, gen: int) -> tuple[int, int | None, int | None, str | None]:
    """Of generation ``gen``: the newest step every rank that logged one completed, and the step,
    rank and node of the injected failure (None when the log has none)."""
    try:
        events = [e for e in read_events(log.path) if e.get("gen") == gen]
    except ValueError:
        return 0, None, None, None
    done: dict[int, int] = {}
    for e in events:
        if e["ev"] in ("step_done", "state_loaded"):
            done[e["rank"]] = max(done.get(e["rank"], 0), int(e["step"]))
    injected = [e for e in events if e["ev"] == "inject"]
    first = injected[0] if injected else {}
    return (min(done.values()) if done else 0), first.get("step"), first.get("rank"), first.get("node")


def _first_failed_rank(failures: dict) -> int:
    """The rank that failed first: killed by a signal before those that exited after noticing it,
    then the earliest timestamp, then the lowest rank (-1 when there is none)."""
    if not failures:
        return -1

    def key(item):
        rank, f = item
        code = getattr(f, "exitcode", 0) or 0
        return (0 if code < 0 else 1, getattr(f, "timestamp", 0) or 0, rank)

    return min(failures.items(), key=key)[0]


def _instrument(log: EventLog, guard: RestartGuard | None = None) -> bool:
    try:
        from torch.distributed.elastic.agent.server.api import WorkerState
        from torch.distributed.elastic.agent.server.local_elastic_agent import LocalElasticAgent
    except ImportError:  # pragma: no cover - depends on the torch version
        return False
    needed = ("_monitor_workers", "_stop_workers", "_start_workers", "_restart_workers")
    if not all(hasattr(LocalElasticAgent, n) for n in needed):  # pragma: no cover
        return False
    noticed: set[int] = set()
    by_round = os.environ.get("FAULTLAB_GEN_FROM") == "round"
    if by_round:
        _instrument_round(log)

    def gen_of(agent) -> int:
        frozen = getattr(agent, "_faultlab_gen", None)  # set when the guard spent the restarts
        if frozen is not None:
            return frozen
        if by_round:
            return int(os.environ.get("FAULTLAB_GEN", "0"))
        spec = agent._worker_group.spec
        return spec.max_restarts - agent._remaining_restarts

    orig_monitor = LocalElasticAgent._monitor_workers
    orig_stop = LocalElasticAgent._stop_workers
    orig_start = LocalElasticAgent._start_workers
    orig_restart = LocalElasticAgent._restart_workers

    def _monitor_workers(self, worker_group):
        result = orig_monitor(self, worker_group)
        self._faultlab_failed = result.state in (WorkerState.FAILED, WorkerState.UNHEALTHY)
        if self._faultlab_failed:
            g = gen_of(self)
            if g not in noticed:
                noticed.add(g)
                codes = {str(k): getattr(v, "exitcode", None) for k, v in (result.failures or {}).items()}
                log.gen = g
                log("agent_noticed", state=result.state.name, exitcodes=codes)
                if guard is not None:
                    _ask_guard(self, guard, log, g, result)
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

    def _restart_workers(self, worker_group, *args, **kwargs):
        # Reached after a failure the monitor noticed, or with healthy workers when the rendezvous has
        # a node waiting (a member was declared dead and a spare stepped forward): the agent then
        # restarts its workers without any failure of theirs. That decision is this agent's notice.
        if not getattr(self, "_faultlab_failed", False):  # healthy workers: the membership changed
            g = gen_of(self)
            if g not in noticed:
                noticed.add(g)
                log.gen = g
                log("agent_noticed", state="NODE_WAITING", exitcodes={})
        self._faultlab_failed = False
        return orig_restart(self, worker_group, *args, **kwargs)

    def _ask_guard(agent, guard, log, g, result):
        progress, step, rank, node = _progress(log, g)
        if rank is None:
            rank = _first_failed_rank(result.failures or {})
        node = node or os.environ.get("FAULTLAB_NODE") or socket.gethostname()  # the failed rank's node, else this one
        try:
            guard.after_failure(progress, step, node=node, rank=rank)
        except NoProgressError as exc:
            agent._faultlab_gen = g
            agent._remaining_restarts = 0
            log("gave_up", message=str(exc), node=node, step=exc.attempts[-1].step, progress=progress)
            print(f"[restart-loop guard] {exc}", file=sys.stderr, flush=True)

    LocalElasticAgent._monitor_workers = _monitor_workers
    LocalElasticAgent._stop_workers = _stop_workers
    LocalElasticAgent._start_workers = _start_workers
    LocalElasticAgent._restart_workers = _restart_workers
    return True


def _instrument_round(log: EventLog) -> None:
    """After each rendezvous, ``FAULTLAB_GEN`` = the round joined (the workers inherit it); a node that
    joins the redundancy list of a complete round (a hot spare) logs ``rdzv_waiting``."""
    from torch.distributed.elastic.rendezvous import dynamic_rendezvous as dr

    DynamicRendezvousHandler = dr.DynamicRendezvousHandler
    orig = DynamicRendezvousHandler.next_rendezvous
    executor = getattr(dr, "_DistributedRendezvousOpExecutor", None)
    orig_spare = getattr(executor, "_add_to_redundancy_list", None)
    if orig_spare is not None:
        def _add_to_redundancy_list(self, *args, **kwargs):
            out = orig_spare(self, *args, **kwargs)
            log("rdzv_waiting", round=self._state.round)
            return out

        executor._add_to_redundancy_list = _add_to_redundancy_list

    holder = getattr(dr, "_BackendRendezvousStateHolder", None)
    orig_sanitize = getattr(holder, "_sanitize", None)
    if orig_sanitize is not None:
        def _sanitize(self, *args, **kwargs):
            out = orig_sanitize(self, *args, **kwargs)
            dead = getattr(self, "_dead_nodes", None)
            if dead:  # nodes whose last heartbeat is older than the keep-alive's limit: declared dead now
                log("rdzv_dead", dead=[str(getattr(n, "addr", n)) for n in dead], round=self._state.round)
            return out

        holder._sanitize = _sanitize

    def next_rendezvous(self, *args, **kwargs):
        log("rdzv_enter")
        out = orig(self, *args, **kwargs)
        joined = self._state_holder.state.round
        os.environ["FAULTLAB_GEN"] = os.environ["TIERS_GEN"] = str(joined)
        log("rdzv_joined", round=joined)
        return out

    DynamicRendezvousHandler.next_rendezvous = next_rendezvous


def _pop_option(argv: list, name: str):
    """Remove ``name VALUE`` (or ``name=VALUE``) from ``argv``; return VALUE or None."""
    for i, a in enumerate(argv):
        if a == name and i + 1 < len(argv):
            value = argv[i + 1]
            del argv[i:i + 2]
            return value
        if a.startswith(name + "="):
            del argv[i]
            return a.split("=", 1)[1]
    return None


def main(argv=None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    limit = _pop_option(argv, "--max-no-progress-restarts")
    guard = RestartGuard(None if limit is None else int(limit))
    log = EventLog(os.environ["FAULTLAB_EVENTS"], rank=-1, gen=0, node=os.environ.get("FAULTLAB_NODE"))
    t0 = time.time()
    from torch.distributed.run import main as torchrun_main

    ok = _instrument(log, guard)
    log("agent_start", t=t0, instrumented=ok)
    try:
        torchrun_main(argv)
    finally:
        log("agent_exit")


if __name__ == "__main__":
    main()
