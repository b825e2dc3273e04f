"""The labs' event log: one file that every process of a run appends to (notebooks 07, 10, 11).

Every process of a lab run (the launcher's agents, each worker, the lab itself) appends records to
one file. A record is one JSON object written with **one** ``write`` on a descriptor opened with
``O_APPEND``, so concurrent writers never interleave, and framed as an RFC 7464 JSON text sequence:
the record separator ``\\x1e`` (RS) before the object and a newline after it. A process killed in the
middle of a write leaves at most a torn tail; the next record starts with its own RS, so
:func:`read_events` drops the torn record and loses nothing else (a plain JSON-lines reader would
glue the torn tail to the next record and lose both).

Each record carries the wall clock ``t`` (``time.time()``: one clock for every process of the host),
the event name ``ev``, the ``rank`` (``-1`` for an agent), the generation ``gen`` and the ``pid``,
plus the writer's static fields (for example ``node``) and the event's own.

Injection by state, not by time: :func:`next_failure` says which failure a new worker is to inject
(the first one not yet logged as injected), so a failure fires at its step in whatever generation
gets there, however many generations came before; :func:`waiting_nodes` says which spare agents are
waiting in the rendezvous right now; :func:`wait_for` blocks until an event is logged, with a deadline
that fails with the output tails of the run's processes.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Callable

from .procs import LabError

__all__ = ["RS", "EventLog", "read_events", "events_of", "wait_for", "next_failure", "waiting_nodes", "spare_state",
           "SPARE_MARGIN", "STALL_MARGIN", "startups_s", "stall_limit_s"]

#: How many times the job's own measured agent start-up (agent start -> workers spawned, the slowest of
#: the first round's nodes) a spare agent may take to reach the rendezvous's redundancy list before a
#: loss that waits for it goes ahead anyway (the spare then joins the next round as a fresh node).
SPARE_MARGIN = 4.0

#: How many times the run's slowest measured agent start-up (plus the silences its own settings ask for) a
#: run may log nothing before it counts as stalled (:func:`stall_limit_s`). An agent's start-up (Python,
#: torch's import, the launcher) is the slowest phase a loaded machine stretches; everything else a lab
#: waits for is either logged as it happens or a timeout the run's settings name.
STALL_MARGIN = 4.0

RS = b"\x1e"  # RFC 7464 record separator: every record starts with it


class EventLog:
    """Append-only event writer shared by every process of a run (one ``write`` per record).

    ``static`` fields (e.g. ``node="n1"``) are added to every record this writer logs.
    """

    def __init__(self, path: str | os.PathLike, rank: int, gen: int = 0, **static):
        self.path = str(path)
        self.rank = int(rank)
        self.gen = int(gen)
        self.static = {k: v for k, v in static.items() if v is not None}
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def __call__(self, ev: str, t: float | None = None, **fields) -> float:
        t = time.time() if t is None else float(t)
        rec = {"t": t, "ev": ev, "rank": self.rank, "gen": self.gen, "pid": os.getpid(), **self.static, **fields}
        os.write(self._fd, RS + json.dumps(rec, sort_keys=True).encode() + b"\n")
        return t

    def close(self) -> None:
        os.close(self._fd)


def read_events(path: str | os.PathLike) -> list[dict]:
    """Every complete event of a log, sorted by time (``[]`` while the file does not exist).

    A torn record (its writer was killed mid-write) is dropped, and only it.
    """
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        return []
    out = []
    for chunk in raw.split(RS):
        chunk = chunk.strip()
        if not chunk:
            continue
        try:
            rec = json.loads(chunk)
        except (json.JSONDecodeError, UnicodeDecodeError):
            continue  # a torn record: its writer died in the middle of it
        if isinstance(rec, dict) and "t" in rec and "ev" in rec:
            out.append(rec)
    out.sort(key=lambda e: e["t"])
    return out


def events_of(events: list[dict], ev: str, **match) -> list[dict]:
    """The events named ``ev`` whose fields equal ``match``."""
    return [e for e in events if e["ev"] == ev and all(e.get(k) == v for k, v in match.items())]


def wait_for(path: str | os.PathLike, ev: str | None = None, *, deadline: float, where: Callable | None = None,
             tail: Callable[[], str] = lambda: "", what: str = "", poll_s: float = 0.05, alive: Callable | None = None,
             budget: str = "", check: Callable | None = None, **match) -> dict:
    """Block until the log at ``path`` holds an event named ``ev`` with fields ``match`` (and for which
    ``where(event, events)`` is true); return it.

    ``deadline`` is a ``time.monotonic()`` value (``budget`` says where it came from, in the message). When it passes, or when ``alive()`` returns False (the
    processes that could log it are gone), :class:`~course_lib.labkit.LabError` is raised, naming what
    was awaited and holding ``tail()`` (the output tails of the run's processes). ``check(events)``, if
    given, runs at every poll and may raise (a lab's stall rule, :meth:`~course_lib.labkit.Lab.check_stall`).
    """
    label = what or f"event {ev!r}" + (f" with {match}" if match else "")
    while True:
        events = read_events(path)
        for e in events:
            if (ev is None or e["ev"] == ev) and all(e.get(k) == v for k, v in match.items()) \
                    and (where is None or where(e, events)):
                return e
        if check is not None:
            check(events)
        if alive is not None and not alive():
            raise LabError(f"the run ended before {label} was logged; output tails:\n{tail()}")
        if time.monotonic() > deadline:
            raise LabError(f"timed out waiting for {label}{budget}; output tails:\n{tail()}")
        time.sleep(poll_s)


def next_failure(events: list[dict], failures: list, *, who: int | None = None, recurring: bool = False):
    """``(index, failure)`` of the first failure not yet logged as injected, or ``(None, None)``.

    ``failures`` is the run's list (dicts or records, in the order they are to fire); an ``inject``
    event carries the ``failure`` index it fired. ``who``: only the failures and injections of that
    rank / replica group (``failure["rank"]``). ``recurring``: once every failure has fired, the last
    one fires again (a bad node that nobody removes).
    """
    fired = {e.get("failure") for e in events if e["ev"] == "inject" and (who is None or e["rank"] == who)}
    mine = [(i, f) for i, f in enumerate(failures)
            if who is None or (f["rank"] if isinstance(f, dict) else f.rank) == who]
    for i, f in mine:
        if i not in fired:
            return i, f
    if recurring and mine:
        return mine[-1]
    return None, None


def waiting_nodes(events: list[dict]) -> set[str]:
    """Nodes whose agent waits in the rendezvous now: its last agent event is ``rdzv_waiting`` (it joined
    the redundancy list of a complete round), not a later ``workers_spawned`` or ``agent_exit``, and no
    failure has struck it."""
    last: dict[str, str] = {}
    lost = set()
    for e in events:
        if e["ev"] == "inject":
            lost.update(e.get("nodes") or [e.get("node")])
        elif e["rank"] == -1 and e.get("node") and e["ev"] in ("rdzv_waiting", "workers_spawned", "agent_exit"):
            last[e["node"]] = e["ev"]
    return {n for n, ev in last.items() if ev == "rdzv_waiting" and n not in lost}


def spare_state(events: list[dict], now: float, margin: float = SPARE_MARGIN) -> str | None:
    """Whether a loss that a hot spare is to absorb may strike now: ``"waiting"`` (a spare waits in the
    rendezvous, :func:`waiting_nodes`), ``"overdue"`` (a spare agent started more than ``margin`` x the
    job's measured agent start-up ago and is still not listed: under load the rendezvous can re-open a
    round while it joins, and then it never waits in the redundancy list), or ``None`` (wait on)."""
    if waiting_nodes(events):
        return "waiting"
    started: dict[str, float] = {}
    spawned: dict[str, float] = {}
    lost = set()
    for e in events:
        if e["ev"] == "inject":
            lost.update(e.get("nodes") or [e.get("node")])
        elif e["rank"] == -1 and e.get("node"):
            if e["ev"] == "agent_start":
                started.setdefault(e["node"], e["t"])
            elif e["ev"] == "workers_spawned":
                spawned.setdefault(e["node"], e["t"])
    startup = [spawned[n] - started[n] for n in spawned if n in started]
    pending = [t for n, t in started.items() if n not in spawned and n not in lost]
    if startup and pending and now - max(pending) > margin * max(startup):
        return "overdue"
    return None


def startups_s(events: list[dict]) -> list[float]:
    """Every agent start-up measured in the log so far, in seconds: an agent's ``agent_start`` to the first
    ``workers_spawned`` of the same process (its launcher, torch's import, its first rendezvous)."""
    started: dict[int, float] = {}
    spans: list[float] = []
    for e in events:
        if e["rank"] != -1:
            continue
        if e["ev"] == "agent_start":
            started[e["pid"]] = e["t"]
        elif e["ev"] == "workers_spawned" and e["pid"] in started:
            spans.append(e["t"] - started.pop(e["pid"]))
    return spans


def stall_limit_s(events: list[dict], waits_s: float = 0.0, margin: float = STALL_MARGIN) -> float | None:
    """How long a run may log nothing before it has stalled: ``margin`` x the slowest agent start-up measured
    in this run so far (:func:`startups_s`, on this machine at its present load) plus ``waits_s``, the longest
    silence the run's own settings ask for (a collective timeout, a dead node's expiry, a replacement's
    delay). ``None`` until a start-up has been measured: the run's ``timeout_s`` alone bounds it until then."""
    spans = startups_s(events)
    return margin * max(spans) + waits_s if spans else None
