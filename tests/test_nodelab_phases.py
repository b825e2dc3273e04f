"""course_lib.nodelab.phases: the rescheduling of a node loss split at the rendezvous's events.

Hand-built logs of the two shapes the benchmark meets (a hot spare that waited before the failure;
a fresh replacement whose start-up outlasts the heartbeat expiry), every timestamp chosen by hand,
so the expected phases are differences read off the list. The rescheduling total is checked against
two other readers of the same log: the fault lab's stage reader and the incidents reader (which reads
the file the lab kit writes).
"""
import pytest

from course_lib.faultlab.events import restart_stages
from course_lib.incidents import read_lab_events
from course_lib.incidents.schema import SECONDS_PER_DAY
from course_lib.labkit import EventLog, read_events
from course_lib.nodelab.phases import PHASES, node_loss_phases


def _log(path, *, spare: bool):
    """n0 survives, n1 is killed at t=10 (after step 9), n2 takes its place: waiting since t=4.2 (spare) or
    brought up from t=10.4 (fresh). Returns the path of the log."""
    agents = {n: EventLog(path, rank=-1, node=n) for n in ("n0", "n1", "n2")}
    workers = {}

    def a(node, t, ev, gen=0, **kw):
        agents[node].gen = gen
        agents[node](ev, t=t, **kw)

    def w(rank, node, gen, t, ev, **kw):
        log = workers.setdefault((rank, node, gen), EventLog(path, rank=rank, gen=gen, node=node))
        log(ev, t=t, **kw)

    for n in ("n0", "n1"):
        a(n, 0.0, "agent_start")
        a(n, 1.0, "rdzv_enter")
        a(n, 2.0, "rdzv_joined", round=0)
        a(n, 2.1, "workers_spawned")
    for rank, n in ((0, "n0"), (1, "n1")):
        w(rank, n, 0, 2.2, "worker_start")
        w(rank, n, 0, 3.5, "pg_ready")
        w(rank, n, 0, 3.6, "state_loaded", step=0, source="init")
        for step in range(1, 10):
            w(rank, n, 0, 3.6 + 0.5 * step + 0.01 * rank, "step_done", step=step)
    if spare:
        a("n2", 3.0, "agent_start")
        a("n2", 4.0, "rdzv_enter")
        a("n2", 4.2, "rdzv_waiting", round=0)
    w(1, "n1", 0, 10.0, "inject", failure=0, kind="node_kill", step=10, progress=9)
    w(0, "n0", 0, 10.1, "noticed", reason="connection reset")
    a("n0", 10.2, "agent_noticed", state="FAILED")
    a("n0", 10.3, "agent_stopped")
    a("n0", 10.35, "rdzv_enter")
    if not spare:
        EventLog(path, rank=-3)("node_start", t=10.4, node="n2")  # the lab begins to bring it up
        a("n2", 10.5, "agent_start")
        a("n2", 14.5, "rdzv_enter")
    a("n0", 13.0, "rdzv_dead", dead=["10.0.0.2"], round=0)
    t_round = 14.2 if spare else 15.7  # the second member joins 0.1 s later
    a("n0", t_round, "rdzv_joined", gen=0, round=1)
    a("n2", t_round + 0.1, "rdzv_joined", round=1)
    for n in ("n0", "n2"):
        a(n, t_round + 0.2, "workers_spawned", gen=1)
    base = t_round + 0.1  # the round formed
    for rank, n in ((0, "n0"), (1, "n2")):
        w(rank, n, 1, base + 0.2, "worker_start")
        w(rank, n, 1, base + 1.7 + 0.5 * rank, "pg_ready")  # all up at base + 2.2
        w(rank, n, 1, base + 2.3 + 0.1 * rank, "state_loaded", step=6, source="disk")  # all loaded at base + 2.4
        for k, step in enumerate((7, 8, 9)):
            w(rank, n, 1, base + 2.6 + 0.3 * k + 0.1 * rank, "step_done", step=step)  # first: all at base + 2.7
    return path


def _phases(tmp_path, spare):
    path = _log(tmp_path / "events.jsonl", spare=spare)
    events = read_events(path)
    (m,) = restart_stages(events)
    return path, m, node_loss_phases(events, m)


def test_hot_spare_phases_are_the_log_differences(tmp_path):
    _, m, ph = _phases(tmp_path, spare=True)
    want = {"heartbeat_expiry": 3.0, "replacement_startup": None, "replacement_ready": 0.0,
            "membership_wait": 13.0 - 10.2, "round_formed": 14.3 - 13.0, "workers_start": 16.5 - 14.3,
            "first_step": 17.0 - 16.7}
    assert set(PHASES) == set(want)
    for k, v in want.items():
        assert ph[k] == (None if v is None else pytest.approx(v, abs=1e-9)), k
    assert (ph["gated_by"], ph["replacement"], ph["replacement_kind"]) == ("heartbeat expiry", "n2", "spare")


def test_fresh_replacement_gates_the_round_when_its_start_up_outlasts_the_expiry(tmp_path):
    _, m, ph = _phases(tmp_path, spare=False)
    assert ph["replacement_startup"] == pytest.approx(14.5 - 10.4)  # from the lab's node_start
    assert ph["replacement_ready"] == pytest.approx(14.5 - 10.0)
    assert ph["heartbeat_expiry"] == pytest.approx(3.0)  # the same expiry: a spare cannot shorten it
    assert ph["membership_wait"] == pytest.approx(14.5 - 10.2)
    assert ph["round_formed"] == pytest.approx(15.8 - 14.5)
    assert (ph["gated_by"], ph["replacement_kind"]) == ("replacement", "fresh")


@pytest.mark.parametrize("spare", [True, False])
def test_phases_add_up_to_what_the_other_readers_measure(tmp_path, spare):
    path, m, ph = _phases(tmp_path, spare)
    # the fault lab's reader: the three rescheduling phases are its reschedule stage
    assert ph["reschedule_s"] == pytest.approx(m.reschedule_s, abs=1e-9)
    # the incidents reader, from the file: failure -> first step of the new generation
    log = read_lab_events(path)
    first = (log.stages["first_step"][0] - log.start[0]) * SECONDS_PER_DAY
    assert m.detect_s + ph["reschedule_s"] + m.reload_s + ph["first_step"] == pytest.approx(first, abs=1e-6)
    resched = (log.stages["rendezvous"][0] - log.stages["detected"][0]) * SECONDS_PER_DAY
    assert ph["reschedule_s"] == pytest.approx(resched, abs=1e-6)


def test_a_log_without_the_rendezvous_events_is_refused(tmp_path):
    path = _log(tmp_path / "events.jsonl", spare=True)
    events = [e for e in read_events(path) if e["ev"] != "rdzv_dead"]
    (m,) = restart_stages(events)
    with pytest.raises(ValueError, match="rdzv_dead"):
        node_loss_phases(events, m)
    with pytest.raises(ValueError, match="restart"):
        node_loss_phases(events, {"t_fail": 10.0})


def _events(tmp_path, spare):
    events = read_events(_log(tmp_path / "events.jsonl", spare=spare))
    (m,) = restart_stages(events)
    return events, m


def _one(events, ev, **match):
    (e,) = [e for e in events if e["ev"] == ev and all(e.get(k) == v for k, v in match.items())]
    return e


def test_a_log_without_the_labs_node_start_times_the_start_up_from_the_agent(tmp_path):
    events, m = _events(tmp_path, spare=False)
    events = [e for e in events if e["ev"] != "node_start"]
    ph = node_loss_phases(events, m)
    assert ph["replacement_startup"] == pytest.approx(14.5 - 10.5)  # agent_start -> rdzv_enter
    assert ph["replacement_kind"] == "fresh"


def test_an_agent_started_at_the_failure_itself_is_fresh_not_a_spare(tmp_path):
    events, m = _events(tmp_path, spare=False)
    events = [e for e in events if e["ev"] != "node_start"]
    _one(events, "agent_start", node="n2")["t"] = 10.0  # exactly t_fail: started with, not before, the failure
    ph = node_loss_phases(events, m)
    assert ph["replacement_kind"] == "fresh" and ph["replacement_startup"] == pytest.approx(4.5)


def test_rank_0_counts_among_the_ranks_whose_slowest_sets_each_phase(tmp_path):
    events, m = _events(tmp_path, spare=True)
    _one(events, "pg_ready", rank=0, gen=1)["t"] = 14.3 + 2.9  # rank 0 now up last, 0.7 s after rank 1
    ph = node_loss_phases(sorted(events, key=lambda e: e["t"]), m)
    assert ph["workers_start"] == pytest.approx(17.2 - 14.3)


def test_an_expiry_at_the_failure_itself_and_a_tie_with_the_replacement(tmp_path):
    events, m = _events(tmp_path, spare=True)
    _one(events, "rdzv_dead")["t"] = 10.0  # the lost node was already overdue: declared dead at the failure
    ph = node_loss_phases(sorted(events, key=lambda e: e["t"]), m)
    assert ph["heartbeat_expiry"] == 0.0 and ph["membership_wait"] == 0.0
    # a fresh node ready exactly when the lost one is declared dead: the expiry gates (a spare could not do better)
    (tmp_path / "tie").mkdir()
    events, m = _events(tmp_path / "tie", spare=False)
    _one(events, "rdzv_dead")["t"] = 14.5
    ph = node_loss_phases(sorted(events, key=lambda e: e["t"]), m)
    assert ph["gated_by"] == "heartbeat expiry" and ph["replacement_ready"] == pytest.approx(4.5)


def test_logs_that_do_not_show_one_replacement_are_refused(tmp_path):
    events, m = _events(tmp_path, spare=True)
    # two nodes new to the round
    extra = dict(_one(events, "rdzv_joined", node="n2", round=1), node="n3")
    with pytest.raises(ValueError, match="exactly one node"):
        node_loss_phases(events + [extra], m)
    # none: the replacement's join is missing
    with pytest.raises(ValueError, match="exactly one node"):
        node_loss_phases([e for e in events if not (e["ev"] == "rdzv_joined" and e.get("node") == "n2")], m)
    # the replacement never entered the rendezvous
    with pytest.raises(ValueError, match="n2 has no rdzv_enter"):
        node_loss_phases([e for e in events if not (e["ev"] == "rdzv_enter" and e.get("node") == "n2")], m)
    # a rank of the new generation never stepped
    with pytest.raises(ValueError, match="every rank of the restarted generation"):
        node_loss_phases([e for e in events if not (e["ev"] == "step_done" and e["gen"] == 1 and e["rank"] == 1)], m)
