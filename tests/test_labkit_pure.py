"""The lab kit's pure parts, without starting a process: the event log's records and reader, the
queries on a log (waiting spares, the next failure, start-ups and the stall limit), ``wait_for`` on a
log written beforehand (a fake clock where the timing matters), and the lab configs' checks.

Every expected value is worked out by hand from the docstrings' contracts."""
import json
import os
import time
from dataclasses import dataclass

import pytest

from course_lib._validate import Validated, checked
from course_lib.labkit import events
from course_lib.labkit.config import LabConfigBase, at_least, one_of, records
from course_lib.labkit.events import (
    RS,
    EventLog,
    events_of,
    next_failure,
    read_events,
    spare_state,
    stall_limit_s,
    startups_s,
    wait_for,
    waiting_nodes,
)
from course_lib.labkit.procs import LabError


def _ev(t, ev, pid=1, rank=-1, gen=0, **kw):
    return {"t": t, "ev": ev, "rank": rank, "gen": gen, "pid": pid, **kw}


def _agent(t, ev, node, pid=3):
    return _ev(t, ev, pid=pid, node=node)


def _write(path, *recs):
    """A log written by hand: each record framed as RFC 7464 (RS, the object, a newline)."""
    with open(path, "ab") as fh:
        fh.writelines(RS + json.dumps(r).encode() + b"\n" for r in recs)


class _Clock:
    """``events.time`` replaced: a monotonic clock that moves only when the code sleeps."""

    def __init__(self, now=0.0, wall=1234.5):
        self.now, self.wall, self.slept = now, wall, []

    def monotonic(self):
        return self.now

    def time(self):
        return self.wall

    def sleep(self, s):
        self.slept.append(s)
        self.now += s
        if len(self.slept) > 5:
            raise AssertionError("still polling after 5 sleeps")


# ----- the stall limit and start-ups: numbers worked by hand -----
START_UPS = [_ev(0.0, "agent_start", 11), _ev(0.5, "agent_start", 12), _ev(2.0, "workers_spawned", 11),
             _ev(2.5, "rdzv_waiting", 12),  # another agent event of a started agent: not its start-up
             _ev(3.0, "workers_spawned", 12, rank=0),  # a worker's event: ignored
             _ev(3.5, "agent_start", 14, rank=0),  # a worker's event: ignored
             _ev(5.5, "workers_spawned", 12),
             _ev(6.0, "agent_start", 14),  # an agent that never spawned workers: nothing measured
             _ev(9.0, "workers_spawned", 11),  # a restart of agent 11's workers: not a second start-up
             _ev(9.5, "workers_spawned", 13)]  # an agent whose start the log never saw


def test_start_ups_are_each_agents_start_to_its_first_workers_spawned():
    assert startups_s(START_UPS) == [2.0, 5.0]
    assert startups_s([_ev(1.0, "agent_start", 7), _ev(4.0, "workers_spawned", 7, rank=1),
                       _ev(4.5, "workers_spawned", 7, rank=0)]) == []  # workers only: no start-up
    assert startups_s([_ev(1.0, "agent_start", 7)]) == [] and startups_s([]) == []


def test_the_stall_limit_is_margin_times_the_slowest_start_up_plus_the_waits():
    assert stall_limit_s(START_UPS) == 20.0  # STALL_MARGIN 4.0 x 5.0 s, no waits
    assert stall_limit_s(START_UPS, waits_s=6.0) == 26.0
    assert stall_limit_s(START_UPS, waits_s=6.0, margin=2.0) == 16.0
    assert stall_limit_s(START_UPS[:2]) is None and stall_limit_s([]) is None  # nothing measured yet
    assert events.STALL_MARGIN == 4.0 and events.SPARE_MARGIN == 4.0


# ----- spare_state: the boundary is margin x the slowest start-up after the newest pending spare -----
# n0 starts up in 4 s, n1 in 5 s: with the default margin 4.0 a spare started at t=10 is overdue after t=30
SPARE_LOG = [_agent(0, "agent_start", "n0"), _agent(1, "agent_start", "n1"), _agent(4, "workers_spawned", "n0"),
             _agent(6, "workers_spawned", "n1"), _agent(10, "agent_start", "n2")]


def test_a_spare_is_overdue_strictly_after_margin_times_the_slowest_start_up():
    assert spare_state(SPARE_LOG, now=30.0) is None  # exactly 4 x 5 s: not yet
    assert spare_state(SPARE_LOG, now=30.5) == "overdue"
    assert spare_state(SPARE_LOG, now=10.5) is None
    assert spare_state(SPARE_LOG, now=20.0, margin=2.0) is None  # 2 x 5 s after t=10
    assert spare_state(SPARE_LOG, now=20.25, margin=2.0) == "overdue"


def test_the_newest_pending_spare_sets_the_boundary():
    log = SPARE_LOG + [_agent(12, "agent_start", "n3")]  # pending since 10 and 12: the newest is 12
    assert spare_state(log, now=31.0) is None and spare_state(log, now=32.0) is None
    assert spare_state(log, now=32.5) == "overdue"


def test_a_waiting_spare_may_be_struck_at_once():
    assert spare_state(SPARE_LOG + [_agent(12, "rdzv_waiting", "n2")], now=12.0) == "waiting"
    assert spare_state([_agent(0, "rdzv_waiting", "n5")], now=0.0) == "waiting"  # even before any start-up


def test_no_spare_state_without_a_measured_start_up_or_a_pending_agent():
    assert spare_state(SPARE_LOG[:4], now=1e9) is None  # no spare started
    assert spare_state([_agent(10, "agent_start", "n2")], now=1e9) is None  # nothing measured
    assert spare_state([], now=1e9) is None
    lost = SPARE_LOG + [_ev(11, "inject", rank=0, nodes=["n2"])]
    assert spare_state(lost, now=1e9) is None  # the pending spare was struck: not pending
    lost1 = SPARE_LOG + [_ev(11, "inject", rank=0, node="n2")]
    assert spare_state(lost1, now=1e9) is None
    other = SPARE_LOG + [_ev(11, "inject", rank=0, node="n0")]  # a loss elsewhere: n2 still pending
    assert spare_state(other, now=30.5) == "overdue"


def test_spare_state_keeps_the_first_agent_start_and_workers_spawned_of_a_node():
    # n0: start 0, spawned 5 (the start-up, 5 s); its agent restarts at 7 and spawns again at 9: neither counts
    log = [_agent(0, "agent_start", "n0"), _agent(5, "workers_spawned", "n0"), _agent(7, "agent_start", "n0"),
           _agent(9, "workers_spawned", "n0"), _agent(10, "agent_start", "n2"), _agent(11, "agent_start", "n2")]
    assert spare_state(log, now=30.0) is None  # pending since its FIRST start, 10: boundary 10 + 4 x 5
    assert spare_state(log, now=30.5) == "overdue"


def test_spare_state_ignores_worker_events_and_agent_events_without_a_node():
    log = SPARE_LOG + [_ev(11, "agent_start", pid=9),  # an agent of no node
                       _ev(12, "agent_start", rank=0, node="n4")]  # a worker's event
    assert spare_state(log, now=30.0) is None and spare_state(log, now=30.5) == "overdue"
    log = SPARE_LOG + [_ev(7, "workers_spawned", rank=1, node="n2")]  # a worker of n2: n2 is still pending
    assert spare_state(log, now=30.5) == "overdue"


# ----- waiting_nodes -----
def test_a_spare_waits_from_rdzv_waiting_until_a_later_agent_event():
    log = [_agent(1, "workers_spawned", "n0"), _agent(1, "workers_spawned", "n1"), _agent(2, "rdzv_waiting", "n2"),
           _agent(2, "rdzv_waiting", "n3")]
    assert waiting_nodes(log) == {"n2", "n3"}
    assert waiting_nodes(log + [_agent(3, "workers_spawned", "n2")]) == {"n3"}
    assert waiting_nodes(log + [_agent(3, "agent_exit", "n3")]) == {"n2"}
    assert waiting_nodes(log + [_agent(3, "workers_spawned", "n2"), _agent(4, "rdzv_waiting", "n2")]) == {"n2", "n3"}
    assert waiting_nodes([]) == set()


def test_an_injected_loss_removes_the_nodes_it_names():
    log = [_agent(2, "rdzv_waiting", "n2"), _agent(2, "rdzv_waiting", "n3"), _agent(2, "rdzv_waiting", "n4")]
    assert waiting_nodes(log + [_ev(3, "inject", rank=0, nodes=["n2", "n3"])]) == {"n4"}
    assert waiting_nodes(log + [_ev(3, "inject", rank=0, node="n3")]) == {"n2", "n4"}
    # `nodes` names the struck nodes; `node` is then the injecting worker's own
    assert waiting_nodes(log + [_ev(3, "inject", rank=0, nodes=["n4"], node="n2")]) == {"n2", "n3"}
    assert waiting_nodes(log + [_ev(3, "inject", rank=0)]) == {"n2", "n3", "n4"}  # a loss of no node


def test_waiting_nodes_ignores_worker_events_and_agent_events_without_a_node():
    log = [_agent(2, "rdzv_waiting", "n2"), _ev(3, "agent_exit", rank=0, node="n2"),
           _ev(3, "workers_spawned", rank=1, node="n2"), _ev(3, "step_done", rank=-1, node="n2"),
           _ev(4, "rdzv_waiting", rank=-1), _ev(4, "rdzv_waiting", rank=0, node="n7")]
    assert waiting_nodes(log) == {"n2"}


# ----- next_failure -----
FAILURES = [{"kind": "kill", "step": 5, "rank": 1}, {"kind": "hang", "step": 9, "rank": 0},
            {"kind": "kill", "step": 12, "rank": 1}, {"kind": "kill", "step": 15, "rank": 1}]


@dataclass(frozen=True)
class _F:
    kind: str
    step: int
    rank: int = 0


RECORDS = [_F("kill", 5, 1), _F("hang", 9, 0), _F("kill", 12, 1), _F("kill", 15, 1)]


def _inject(i, rank):
    return _ev(float(i), "inject", pid=1, rank=rank, gen=7, failure=i)


def test_the_next_failure_is_the_first_not_yet_injected():
    assert next_failure([], FAILURES) == (0, FAILURES[0])
    assert next_failure([_inject(0, 1)], FAILURES) == (1, FAILURES[1])
    assert next_failure([_inject(0, 1), _inject(2, 1)], FAILURES) == (1, FAILURES[1])
    assert next_failure([_inject(1, 0)], FAILURES) == (0, FAILURES[0])
    # an event that names a failure but is not an injection fires nothing
    assert next_failure([_ev(0.0, "armed", rank=1, failure=0)], FAILURES) == (0, FAILURES[0])
    assert next_failure([], []) == (None, None)


def test_when_every_failure_fired_none_or_the_last_again():
    done = [_inject(i, f["rank"]) for i, f in enumerate(FAILURES)]
    assert next_failure(done, FAILURES) == (None, None)
    assert next_failure(done, FAILURES, recurring=True) == (3, FAILURES[3])
    assert next_failure([], [], recurring=True) == (None, None)


def test_next_failure_of_one_rank():
    assert next_failure([], FAILURES, who=0) == (1, FAILURES[1])
    assert next_failure([_inject(0, 1)], FAILURES, who=1) == (2, FAILURES[2])
    assert next_failure([_inject(0, 1)], FAILURES, who=0) == (1, FAILURES[1])
    # an injection logged by another rank does not count for this one
    assert next_failure([_inject(1, 1)], FAILURES, who=0) == (1, FAILURES[1])
    assert next_failure([_inject(1, 0)], FAILURES, who=0) == (None, None)
    assert next_failure([_inject(1, 0)], FAILURES, who=0, recurring=True) == (1, FAILURES[1])
    assert next_failure([], FAILURES, who=5) == (None, None)
    assert next_failure([], FAILURES, who=5, recurring=True) == (None, None)


def test_next_failure_of_records():
    assert next_failure([], RECORDS) == (0, RECORDS[0])
    assert next_failure([_inject(0, 1)], RECORDS, who=1) == (2, RECORDS[2])
    assert next_failure([_inject(0, 1), _inject(2, 1), _inject(3, 1)], RECORDS, who=1, recurring=True) == (3, RECORDS[3])
    assert next_failure([_inject(0, 1), _inject(2, 1), _inject(3, 1)], RECORDS, who=1) == (None, None)


# ----- events_of -----
def test_events_of_matches_the_name_and_every_given_field():
    log = [_ev(1, "step_done", pid=5, rank=0, gen=0, step=1), _ev(2, "step_done", pid=6, rank=1, gen=0, step=1),
           _ev(3, "step_done", pid=7, rank=0, gen=1, step=2), _ev(4, "inject", pid=7, rank=0, gen=1, failure=0)]
    assert events_of(log, "step_done") == log[:3]
    assert events_of(log, "step_done", rank=0) == [log[0], log[2]]
    assert events_of(log, "step_done", rank=0, gen=1) == [log[2]]
    assert events_of(log, "step_done", rank=1, gen=1) == []
    assert events_of(log, "inject", rank=0) == [log[3]]
    assert events_of(log, "inject", node="n1") == []  # a missing field never equals a given value
    assert events_of(log, "agent_exit") == []


# ----- wait_for: a fake clock, a log written beforehand -----
WAIT_LOG = [_ev(1.0, "step_done", rank=0, step=1), _ev(2.0, "step_done", rank=1, step=2),
            _ev(3.0, "step_done", rank=0, step=2), _ev(4.0, "agent_exit", rank=-1)]


@pytest.fixture
def log_path(tmp_path):
    path = tmp_path / "events.jsonl"
    _write(path, *WAIT_LOG[::-1])  # written out of order: read back by time
    return path


@pytest.fixture
def clock(monkeypatch):
    c = _Clock()
    monkeypatch.setattr(events, "time", c)
    return c


def test_wait_for_returns_the_first_matching_event(log_path, clock):
    past = clock.now - 1
    assert wait_for(log_path, "step_done", deadline=past) == WAIT_LOG[0]
    assert wait_for(log_path, "step_done", deadline=past, step=2) == WAIT_LOG[1]
    assert wait_for(log_path, "step_done", deadline=past, step=2, rank=0) == WAIT_LOG[2]
    assert wait_for(log_path, "agent_exit", deadline=past) == WAIT_LOG[3]
    assert wait_for(log_path, deadline=past) == WAIT_LOG[0]  # ev=None: any event
    assert wait_for(log_path, None, deadline=past, rank=-1) == WAIT_LOG[3]
    assert clock.slept == []


def test_wait_for_applies_where_to_the_event_and_every_event(log_path, clock):
    seen = []

    def where(e, evs):
        seen.append((e["t"], len(evs)))
        return e["rank"] == 0 and e["step"] == 2

    assert wait_for(log_path, "step_done", deadline=clock.now - 1, where=where) == WAIT_LOG[2]
    assert seen == [(1.0, 4), (2.0, 4), (3.0, 4)]
    assert wait_for(log_path, "step_done", deadline=clock.now - 1, where=lambda e, evs: e is evs[1]) == WAIT_LOG[1]


def test_wait_for_past_its_deadline_raises_at_once_naming_what_it_awaited(log_path, clock):
    with pytest.raises(LabError) as err:
        wait_for(log_path, "step_done", deadline=clock.now - 1, tail=lambda: "TAIL", budget=" (timeout_s=60)", step=6)
    assert str(err.value) == "timed out waiting for event 'step_done' with {'step': 6} (timeout_s=60); output tails:\nTAIL"
    with pytest.raises(LabError) as err:
        wait_for(log_path, "done", deadline=clock.now - 1)
    assert str(err.value) == "timed out waiting for event 'done'; output tails:\n"
    with pytest.raises(LabError) as err:
        wait_for(log_path, "done", deadline=clock.now - 1, what="the spare", tail=lambda: "T", step=3)
    assert str(err.value) == "timed out waiting for the spare; output tails:\nT"
    assert clock.slept == []


def test_wait_for_polls_until_its_deadline_has_passed(log_path, clock):
    with pytest.raises(LabError, match="^timed out waiting for event 'done'"):
        wait_for(log_path, "done", deadline=0.1)
    assert clock.slept == [0.05, 0.05, 0.05]  # at 0.0, 0.05, 0.1 (not past): polled again


def test_wait_for_polls_again_at_exactly_its_deadline_then_stops_when_the_run_ended(log_path, clock):
    calls = []

    def alive():
        calls.append(clock.now)
        return len(calls) < 2

    with pytest.raises(LabError) as err:
        wait_for(log_path, "done", deadline=0.0, alive=alive, tail=lambda: "worker: crashed", poll_s=0.25)
    assert str(err.value) == "the run ended before event 'done' was logged; output tails:\nworker: crashed"
    assert calls == [0.0, 0.25] and clock.slept == [0.25]


def test_wait_for_stops_at_once_when_the_run_ended(log_path, clock):
    with pytest.raises(LabError) as err:
        wait_for(log_path, "done", deadline=clock.now - 1, alive=lambda: False, tail=lambda: "gone", step=1)
    assert str(err.value) == "the run ended before event 'done' with {'step': 1} was logged; output tails:\ngone"
    # alive and the deadline not yet passed: it polls on
    with pytest.raises(LabError, match="^timed out"):
        wait_for(log_path, "done", deadline=0.1, alive=lambda: True)
    assert clock.slept == [0.05, 0.05, 0.05]


def test_wait_for_runs_check_on_the_events_at_every_poll_and_lets_it_raise(log_path, clock):
    seen = []

    class Stalled(Exception):
        pass

    def check(evs):
        seen.append(evs)
        if len(seen) == 2:
            raise Stalled("stalled")

    with pytest.raises(Stalled):
        wait_for(log_path, "done", deadline=200.0, check=check, alive=lambda: True)
    assert seen == [WAIT_LOG, WAIT_LOG] and clock.slept == [0.05]
    seen.clear()
    assert wait_for(log_path, "agent_exit", deadline=200.0, check=check) == WAIT_LOG[3]
    assert seen == []  # found at once: no check needed


def test_wait_for_with_a_real_clock_and_a_deadline_already_past(log_path):
    t0 = time.monotonic()
    with pytest.raises(LabError) as err:
        wait_for(log_path, "step_done", deadline=time.monotonic() - 1, tail=lambda: "--- worker.log\nstuck",
                 what="step 6", budget=" (the lab's timeout_s=1.5)", step=6)
    assert str(err.value) == "timed out waiting for step 6 (the lab's timeout_s=1.5); output tails:\n--- worker.log\nstuck"
    assert time.monotonic() - t0 < 1.0
    assert wait_for(log_path, "step_done", deadline=time.monotonic() - 1, step=2) == WAIT_LOG[1]


def test_wait_for_on_a_missing_log(tmp_path, clock):
    with pytest.raises(LabError, match="^timed out waiting for event 'x'"):
        wait_for(tmp_path / "none.jsonl", "x", deadline=-1.0)


# ----- read_events -----
def test_read_events_of_a_missing_file_is_empty(tmp_path):
    assert read_events(tmp_path / "missing.jsonl") == []


def test_read_events_drops_torn_records_and_only_them(tmp_path):
    path = tmp_path / "events.jsonl"
    a = b'{"ev": "a", "t": 3.0}'
    b = b'{"ev": "b", "t": 1.0, "x": "\xc3\xa9"}'
    c = b'{"ev": "c", "t": 2.0}'
    path.write_bytes(RS + a + b"\n" + RS + b'{"ev": "torn", "t": 4.0, "pad": "yyy'  # killed mid-write
                     + RS + b + b"\n" + RS + b'{"ev": "bad", "t": 5.0, "x": "\xff\xfe"}\n'  # not UTF-8
                     + RS + c + b"\n" + RS + b'{"ev": "tail", "t"')
    assert read_events(path) == [{"ev": "b", "t": 1.0, "x": "\u00e9"}, {"ev": "c", "t": 2.0}, {"ev": "a", "t": 3.0}]


def test_read_events_drops_what_is_not_an_event(tmp_path):
    path = tmp_path / "events.jsonl"
    path.write_bytes(RS + b"[1, 2]\n" + RS + b'"tev"\n' + RS + b"7\n" + RS + b'{"ev": "no time"}\n'
                     + RS + b'{"t": 1.0}\n' + RS + b'{"t": 2.0, "ev": "ok"}\n' + RS + RS + b"  \n" + RS
                     + RS + b"\n\n" + RS + b'{"ev": "first", "t": 0.5, "rank": 3}\n\n')
    assert read_events(path) == [{"ev": "first", "t": 0.5, "rank": 3}, {"ev": "ok", "t": 2.0}]
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    assert read_events(empty) == []
    blank = tmp_path / "blank.jsonl"
    blank.write_bytes(RS + b"\n" + RS + b" \t\n" + RS)
    assert read_events(blank) == []


# ----- EventLog -----
def test_eventlog_writes_one_rs_framed_record_with_sorted_keys(tmp_path, clock):
    path = tmp_path / "events.jsonl"
    log = EventLog(path, rank=-1, gen=2, node="n1", zone=None)
    assert log("agent_start", t=5, step=3) == 5.0
    log.close()
    pid = os.getpid()
    assert path.read_bytes() == (b'\x1e{"ev": "agent_start", "gen": 2, "node": "n1", "pid": %d, "rank": -1, '
                                 b'"step": 3, "t": 5.0}\n' % pid)


def test_eventlog_takes_the_time_when_none_is_given_and_appends(tmp_path, clock):
    path = tmp_path / "events.jsonl"
    _write(path, {"t": 0.5, "ev": "before"})
    log = EventLog(str(path), rank="2")
    assert log("step_done", step=1) == 1234.5  # the fake wall clock
    assert log("step_done", t=7.25, step=2, node="n3") == 7.25
    log.close()
    pid = os.getpid()
    assert read_events(path) == [{"t": 0.5, "ev": "before"},
                                 {"t": 7.25, "ev": "step_done", "rank": 2, "gen": 0, "pid": pid, "step": 2, "node": "n3"},
                                 {"t": 1234.5, "ev": "step_done", "rank": 2, "gen": 0, "pid": pid, "step": 1}]
    assert log.rank == 2 and log.gen == 0 and log.static == {} and log.path == str(path)


def test_eventlog_static_fields_go_into_every_record_and_none_is_dropped(tmp_path):
    path = tmp_path / "events.jsonl"
    log = EventLog(path, rank=0, gen=1, node="n2", group=None, zone="z")
    assert log.static == {"node": "n2", "zone": "z"}
    log("a", t=1.0)
    log("b", t=2.0, zone="override")
    log.close()
    ev = read_events(path)
    assert [(e["ev"], e["node"], e["zone"], e["gen"], e["rank"]) for e in ev] == [("a", "n2", "z", 1, 0),
                                                                                   ("b", "n2", "override", 1, 0)]
    assert all("group" not in e for e in ev)


def test_eventlog_creates_its_file_readable_by_all(tmp_path):
    old = os.umask(0)
    try:
        EventLog(tmp_path / "events.jsonl", rank=0).close()
    finally:
        os.umask(old)
    assert os.stat(tmp_path / "events.jsonl").st_mode & 0o777 == 0o644


# ----- config: the shared checks -----
def test_at_least_returns_the_integer_and_names_lo_and_why():
    check = at_least(2, "a survivor needs a peer")
    assert check("groups", 2) == 2 and check("groups", 7) == 7
    n = check("groups", 3.0)
    assert n == 3 and type(n) is int
    with pytest.raises(ValueError) as err:
        check("groups", 1)
    assert str(err.value) == "groups must be an integer >= 2 (a survivor needs a peer) (got 1)"
    with pytest.raises(ValueError) as err:
        at_least(1)("steps", 0)
    assert str(err.value) == "steps must be an integer >= 1 (got 0)"
    assert at_least(0)("seed", 0) == 0


@pytest.mark.parametrize("value", [True, False, 2.5, "3", None, float("nan")])
def test_at_least_refuses_what_is_not_an_integer_naming_its_range(value):
    with pytest.raises(ValueError, match=r"^n must be an integer >= 0 \(got "):
        at_least(0)("n", value)
    # the range named is the check's own, with its reason (it was ">= 0" whatever lo was)
    with pytest.raises(ValueError, match=r"^n must be an integer >= 2 \(a survivor needs a peer\) \(got "):
        at_least(2, "a survivor needs a peer")("n", value)
    with pytest.raises(ValueError, match=r"^n must be an integer >= -3 \(got "):
        at_least(-3)("n", value)


def test_at_least_names_its_range_for_a_negative_integer():
    with pytest.raises(ValueError) as err:
        at_least(2, "a survivor needs a peer")("groups", -1)
    assert str(err.value) == "groups must be an integer >= 2 (a survivor needs a peer) (got -1)"


def test_at_least_with_a_negative_lo():
    check = at_least(-3, "an offset")
    assert check("offset", -3) == -3 and check("offset", 4) == 4 and check("offset", -2.0) == -2
    with pytest.raises(ValueError) as err:
        check("offset", -4)
    assert str(err.value) == "offset must be an integer >= -3 (an offset) (got -4)"


def test_one_of():
    check = one_of(("fast", "slow"))
    assert check("mode", "slow") == "slow"
    with pytest.raises(ValueError) as err:
        check("mode", "medium")
    assert str(err.value) == "mode must be one of ['fast', 'slow'] (got 'medium')"


@dataclass(frozen=True)
class Hit(Validated):
    kind: str = checked(one_of(("kill", "hang")))
    step: int = checked(at_least(1, "steps count from 1"))
    rank: int = checked(at_least(0), default=0)


@dataclass(frozen=True)
class NodeHit(Hit):
    node: str = "n0"


@dataclass(frozen=True)
class WideHit:  # a kindred record: Hit's fields and one more
    kind: str
    step: int
    rank: int = 0
    note: str = ""


def test_records_accepts_records_tuples_lists_dicts_and_kindred_records():
    check = records(Hit)
    h = Hit("kill", 3)
    out = check("hits", [h, ("hang", 4, 1), ["kill", 5], {"kind": "hang", "step": 6}, WideHit("kill", 7, 2, "x")])
    assert out == (Hit("kill", 3, 0), Hit("hang", 4, 1), Hit("kill", 5, 0), Hit("hang", 6, 0), Hit("kill", 7, 2))
    assert type(out) is tuple and out[0] is h and all(type(x) is Hit for x in out)
    assert check("hits", ()) == () and check("hits", iter([("kill", 2)])) == (Hit("kill", 2),)
    # a record of the base class becomes one of cls
    assert records(NodeHit)("hits", [Hit("hang", 2, 1)]) == (NodeHit("hang", 2, 1, "n0"),)


@pytest.mark.parametrize("value, shown", [("kill", "'kill'"), (b"kill", "b'kill'"), (5, "5"), (None, "None"),
                                          ({"kind": "kill", "step": 1}, "{'kind': 'kill', 'step': 1}")])
def test_records_refuses_what_is_not_a_sequence(value, shown):
    with pytest.raises(ValueError) as err:
        records(Hit)("hits", value)
    assert str(err.value) == f"hits must be a sequence of Hit (got {shown})"


def test_records_names_the_bad_item_by_its_index():
    check = records(Hit)
    with pytest.raises(ValueError) as err:
        check("hits", [("kill", 3), ("kill", 0)])
    assert str(err.value) == "hits[1].step must be an integer >= 1 (steps count from 1) (got 0)"
    with pytest.raises(ValueError) as err:
        check("hits", [{"kind": "boom", "step": 1}])
    assert str(err.value) == "hits[0].kind must be one of ['hang', 'kill'] (got 'boom')"
    with pytest.raises(ValueError) as err:
        check("hits", [Hit("kill", 3), 5])
    assert str(err.value) == "hits[1] must be a Hit, a tuple of its fields or a dict (got 5)"
    with pytest.raises(ValueError) as err:
        check("hits", ["kill"])
    assert str(err.value) == "hits[0] must be a Hit, a tuple of its fields or a dict (got 'kill')"


def test_records_reports_a_wrong_arity_with_the_index():
    check = records(Hit)
    with pytest.raises(ValueError, match=r"^hits\[1\] Hit\.__init__\(\) takes from 3 to 4 positional arguments "
                                         r"but 5 were given$"):
        check("hits", [("kill", 3), ("kill", 3, 0, 9)])
    with pytest.raises(ValueError, match=r"^hits\[0\] Hit\.__init__\(\) missing 1 required positional argument: "
                                         r"'step'$"):
        check("hits", [("kill",)])
    with pytest.raises(ValueError, match=r"^hits\[0\] Hit\.__init__\(\) got an unexpected keyword argument 'x'$"):
        check("hits", [{"kind": "kill", "step": 1, "x": 2}])


# ----- config: LabConfigBase -----
@dataclass(frozen=True)
class MiniConfig(LabConfigBase):
    workers: int = checked(at_least(2, "a survivor needs a peer"), default=2)
    mode: str = checked(one_of(("fast", "slow")), default="fast")
    hits: tuple = checked(records(Hit), default=())
    offset: int = checked(at_least(-3), default=0)


def test_a_lab_config_checks_its_fields_and_replaces():
    cfg = MiniConfig(workers=3, mode="slow", hits=[("kill", 2)])
    assert cfg.hits == (Hit("kill", 2, 0),) and cfg.workers == 3
    new = cfg.replace(workers=4, offset=-1)
    assert (new.workers, new.mode, new.hits, new.offset) == (4, "slow", (Hit("kill", 2, 0),), -1)
    assert (cfg.workers, cfg.offset) == (3, 0)  # the original is unchanged
    with pytest.raises(ValueError, match=r"^workers must be an integer >= 2 \(a survivor needs a peer\) \(got 1\)$"):
        cfg.replace(workers=1)
    with pytest.raises(ValueError, match=r"^mode must be one of"):
        MiniConfig(mode="medium")


def test_a_lab_config_as_dict_and_json_round_trip():
    cfg = MiniConfig(workers=3, mode="slow", hits=[("kill", 2), {"kind": "hang", "step": 5, "rank": 1}])
    assert cfg.as_dict() == {"workers": 3, "mode": "slow", "offset": 0,
                             "hits": ({"kind": "kill", "step": 2, "rank": 0}, {"kind": "hang", "step": 5, "rank": 1})}
    text = cfg.to_json()
    assert text == ('{"hits": [{"kind": "kill", "rank": 0, "step": 2}, {"kind": "hang", "rank": 1, "step": 5}], '
                    '"mode": "slow", "offset": 0, "workers": 3}')
    assert MiniConfig.from_json(text) == cfg
    assert MiniConfig.from_json('{"workers": 5}') == MiniConfig(workers=5)
    assert MiniConfig().to_json() == '{"hits": [], "mode": "fast", "offset": 0, "workers": 2}'
    with pytest.raises(ValueError, match=r"^hits\[0\]\.step must be an integer >= 1"):
        MiniConfig.from_json('{"hits": [["kill", 0]]}')
