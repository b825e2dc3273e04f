"""The lab kit (course_lib.labkit): the event log survives a writer killed mid-write, a wait that
runs past its deadline fails with the output tail of the run's processes, the clean-up runs when the
lab raises (also on Ctrl-C), and failures are injected by state (the first one not yet injected)."""
import json
import multiprocessing as mp
import os
import select
import signal
import subprocess
import sys
import time

import pytest

from course_lib.labkit import (EventLog, Lab, LabError, leftovers, next_failure, pids_with_token, read_events,
                               waiting_nodes)
from course_lib.labkit.config import records
from course_lib.labkit.events import RS


#: Deadline for a helper process to reach the state a test waits for (seconds). The longest such wait here is a
#: Python start-up with course_lib's import, which took up to about 10 s on this 2-core machine at load 12; the
#: bound is there so that a helper that hangs fails the test instead of hanging the suite.
STATE_DEADLINE_S = 120.0


def _output(path) -> str:
    try:
        return path.read_text(errors="replace")[-3000:]
    except OSError:
        return "(no output file)"


def _wait_until(cond, proc, what, output, deadline_s=STATE_DEADLINE_S):
    """Poll ``cond()`` until it holds; fail when ``proc`` has exited without it (its exit status and output
    ``output``, a path, in the message) or when the deadline passes (the process is then left to the caller)."""
    deadline = time.monotonic() + deadline_s
    while not cond():
        rc = proc.poll()
        if rc is not None and not cond():
            pytest.fail(f"{what}: the process exited with status {rc} before it; its output:\n{_output(output)}")
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not reached within {deadline_s:g} s (process still running); its output:\n"
                        f"{_output(output)}")
        time.sleep(0.01)


def _readline(pipe, what, deadline_s=STATE_DEADLINE_S) -> str:
    """One line from a text pipe, or a failure when none comes within the deadline (no blocking read without one)."""
    ready, _, _ = select.select([pipe], [], [], deadline_s)
    if not ready:
        pytest.fail(f"{what}: no line within {deadline_s:g} s")
    return pipe.readline()


# ----- the event log -----
def _writer(path, rank, n):
    log = EventLog(path, rank=rank, gen=0)
    for i in range(n):
        log("step_done", step=i, pad="x" * 200)
    log.close()


def test_records_from_concurrent_processes_never_interleave(tmp_path):
    path = tmp_path / "events.jsonl"
    ctx = mp.get_context("fork")
    procs = [ctx.Process(target=_writer, args=(str(path), r, 300)) for r in range(3)]
    try:
        for p in procs:
            p.start()
        deadline = time.monotonic() + STATE_DEADLINE_S
        for p in procs:
            p.join(max(deadline - time.monotonic(), 0.01))
        assert [p.exitcode for p in procs] == [0, 0, 0]  # each writer finished (None: still running at the deadline)
    finally:
        for p in procs:
            if p.is_alive():
                p.kill()
                p.join(10)
    chunks = [c for c in path.read_bytes().split(RS) if c.strip()]
    assert len(chunks) == 900 and all(json.loads(c)["ev"] == "step_done" for c in chunks)
    ev = read_events(path)
    assert [e["t"] for e in ev] == sorted(e["t"] for e in ev)
    assert {r: sum(e["rank"] == r for e in ev) for r in range(3)} == {0: 300, 1: 300, 2: 300}


_TORN = """
import os, signal, sys
from course_lib.labkit import EventLog
log = EventLog(sys.argv[1], rank=1)
log("step_done", step=1)
rec = b'\\x1e{"ev": "step_done", "gen": 0, "pid": 1, "rank": 1, "step": 2, "t": 5.0, "pad": "' + b"y" * 500
os.write(os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND), rec[: len(rec) // 2])  # half a record, then the kill
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_worker_killed_mid_write_leaves_no_partial_event(tmp_path):
    path = tmp_path / "events.jsonl"
    p = subprocess.run([sys.executable, "-c", _TORN, str(path)], timeout=60)
    assert p.returncode == -signal.SIGKILL
    EventLog(path, rank=0)("step_done", step=3)  # the next writer appends right after the torn tail
    assert [(e["rank"], e["step"]) for e in read_events(path)] == [(1, 1), (0, 3)]


def test_a_writer_killed_at_any_moment_leaves_only_complete_events(tmp_path):
    path = tmp_path / "events.jsonl"
    code = ("import sys\nfrom course_lib.labkit import EventLog\nlog = EventLog(sys.argv[1], rank=2)\n"
            "i = 0\nwhile True:\n    log('step_done', step=i, pad='z' * 20000); i += 1\n")
    out = tmp_path / "writer.log"
    with open(out, "wb") as fh:
        p = subprocess.Popen([sys.executable, "-c", code, str(path)], stdout=fh, stderr=subprocess.STDOUT)
    try:  # the state: 2 MB (100 records) written; a writer that dies first fails the test with its status and output
        _wait_until(lambda: path.exists() and path.stat().st_size >= 2_000_000, p, "the writer's first 2 MB", out)
    finally:
        p.kill()
        p.wait(30)
    assert p.returncode == -signal.SIGKILL  # killed by us, mid-stream (it never stops by itself)
    EventLog(path, rank=0)("done")
    ev = read_events(path)
    steps = [e["step"] for e in ev if e["rank"] == 2]
    assert steps == list(range(len(steps))) and all(len(e["pad"]) == 20000 for e in ev if e["rank"] == 2)
    assert ev[-1]["ev"] == "done"


# ----- waiting and the deadline -----
def test_wait_for_returns_the_event_once_logged(tmp_path):
    with Lab(tmp_path, timeout_s=60) as lab:
        code = ("import sys, time\nfrom course_lib.labkit import EventLog\ntime.sleep(0.3)\n"
                "EventLog(sys.argv[1], rank=0)('step_done', step=6)\n")
        lab.start("worker", [sys.executable, "-c", code, lab.events_path])
        e = lab.wait_for("step_done", step=6)
    assert e["step"] == 6 and e["rank"] == 0


def test_wait_for_fails_with_the_tail_of_the_workers_output_when_the_deadline_passes(tmp_path):
    line = "worker: stuck before step 6"
    with Lab(tmp_path, timeout_s=1.5) as lab:
        p = lab.start("worker", [sys.executable, "-c", f"import time; print({line!r}, flush=True); time.sleep(600)"])
        # the state first: the worker has printed (a loaded machine's start-up may outlast the run's 1.5 s); only
        # then may the deadline pass, so the tail below holds the line whatever the start-up took
        log = tmp_path / "worker.log"
        _wait_until(lambda: line in log.read_text(errors="replace"), p, "the worker's first print", log)
        with pytest.raises(LabError) as err:
            lab.wait_for("step_done", step=6)
        assert time.monotonic() > lab.deadline  # it failed at the deadline, not before
        assert p.poll() is None  # the worker was still alive: the deadline, not its exit, ended the wait
    msg = str(err.value)
    assert "timed out waiting for event 'step_done'" in msg and "worker: stuck before step 6" in msg
    assert "--- worker.log" in msg


def test_wait_for_fails_at_once_when_the_processes_that_could_log_it_are_gone(tmp_path):
    with Lab(tmp_path, timeout_s=60) as lab:
        p = lab.start("worker", [sys.executable, "-c", "print('worker: crashed')"])
        t0 = time.monotonic()
        with pytest.raises(LabError, match="worker: crashed"):
            lab.wait_for("step_done", alive=lambda: p.poll() is None)
    assert time.monotonic() - t0 < 30


# ----- the clean-up contract -----
_SPAWNER = ("import subprocess, sys, time\n"
            "c = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'], start_new_session=True)\n"
            "print(c.pid, flush=True); time.sleep(600)\n")


def _gone(pid) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


@pytest.mark.parametrize("exc", [RuntimeError, KeyboardInterrupt])
def test_clean_up_runs_when_the_lab_raises(tmp_path, exc):
    """A process and its grandchild in a session of its own (as torchrun starts workers), a temporary path:
    all gone when the lab's block raises, an error or Ctrl-C alike."""
    with pytest.raises(exc):
        with Lab(tmp_path, timeout_s=60) as lab:
            p = lab.start("spawner", [sys.executable, "-c", _SPAWNER], pipe=True)
            grandchild = int(_readline(p.stdout, "the spawner's grandchild pid"))
            scratch = lab.temporary_path("scratch")
            scratch.mkdir()
            token = lab.token
            assert not _gone(p.pid) and not _gone(grandchild)
            raise exc("boom")
    assert _gone(p.pid) and _gone(grandchild)  # the grandchild was in a session of its own: found by the token
    assert pids_with_token(token) == set() and not scratch.exists()
    assert leftovers() == {"processes": [], "ports": [], "paths": []}


def test_start_refuses_an_environment_without_the_runs_token(tmp_path):
    with Lab(tmp_path, timeout_s=10) as lab:
        with pytest.raises(ValueError, match="Lab.env"):
            lab.start("x", [sys.executable, "-c", "pass"], env=dict(os.environ))


# ----- injection by state -----
FAILURES = [{"kind": "kill", "step": 5, "rank": 1}, {"kind": "hang", "step": 9, "rank": 0},
            {"kind": "kill", "step": 12, "rank": 1}]


def _inject(i, rank):
    return {"t": float(i), "ev": "inject", "rank": rank, "gen": 7, "pid": 1, "failure": i}


def test_the_next_failure_is_the_first_not_yet_injected_whatever_the_generation():
    assert next_failure([], FAILURES) == (0, FAILURES[0])
    # any number of generations without an injection (a restart no failure caused) shifts nothing
    restarts = [{"t": 0.5, "ev": "workers_spawned", "rank": -1, "gen": g, "pid": 2} for g in range(5)]
    assert next_failure(restarts, FAILURES) == (0, FAILURES[0])
    assert next_failure(restarts + [_inject(0, 1)], FAILURES) == (1, FAILURES[1])
    done = [_inject(i, f["rank"]) for i, f in enumerate(FAILURES)]
    assert next_failure(done, FAILURES) == (None, None)
    assert next_failure(done, FAILURES, recurring=True) == (2, FAILURES[2])  # a bad node nobody removed
    # per replica group: group 1's failures are 0 and 2
    assert next_failure([_inject(0, 1)], FAILURES, who=1) == (2, FAILURES[2])
    assert next_failure([_inject(0, 1)], FAILURES, who=0) == (1, FAILURES[1])


def test_a_spare_waits_from_joining_the_redundancy_list_until_it_takes_a_place():
    def agent(t, ev, node):
        return {"t": t, "ev": ev, "rank": -1, "gen": 0, "pid": 3, "node": node}

    log = [agent(1, "workers_spawned", "n0"), agent(1, "workers_spawned", "n1"), agent(2, "rdzv_waiting", "n2")]
    assert waiting_nodes(log) == {"n2"}
    assert waiting_nodes(log + [agent(3, "workers_spawned", "n2")]) == set()
    lost = {"t": 3, "ev": "inject", "rank": 0, "gen": 0, "pid": 4, "node": "n2"}
    assert waiting_nodes(log + [lost]) == set()


def test_a_list_of_records_names_the_bad_item():
    from course_lib.faultlab import Failure

    check = records(Failure)
    assert check("failures", [("kill", 3), {"kind": "hang", "step": 4, "rank": 0}]) == (Failure("kill", 3),
                                                                                        Failure("hang", 4, 0))
    with pytest.raises(ValueError, match=r"^failures\[1\].step must be an integer >= 1"):
        check("failures", [("kill", 3), ("kill", 0)])
    with pytest.raises(ValueError, match=r"^failures must be a sequence of Failure"):
        check("failures", "kill")


def test_a_loss_waits_for_the_spare_until_it_waits_or_is_overdue_by_the_measured_start_up():
    from course_lib.labkit import spare_state
    from course_lib.labkit.events import SPARE_MARGIN

    def agent(t, ev, node):
        return {"t": t, "ev": ev, "rank": -1, "gen": 0, "pid": 3, "node": node}

    # the job's own start-up: agent start -> workers spawned, 5 s for the slower node
    log = [agent(0, "agent_start", "n0"), agent(1, "agent_start", "n1"), agent(4, "workers_spawned", "n0"),
           agent(6, "workers_spawned", "n1"), agent(10, "agent_start", "n2")]
    assert spare_state(log, now=10 + SPARE_MARGIN * 5 - 0.1) is None  # the spare is still starting
    assert spare_state(log, now=10 + SPARE_MARGIN * 5 + 0.1) == "overdue"
    assert spare_state(log + [agent(12, "rdzv_waiting", "n2")], now=12) == "waiting"
    assert spare_state(log[:4], now=1e9) is None  # no spare started yet: nothing is overdue


@pytest.fixture
def one_torch_thread():
    """torch on one thread for the test, as each lab job runs (set_num_threads(1)); the caller's count restored.
    Two threads' tiny ops on a loaded 2-core machine wait for each other: 440 toy steps took 30 s, 0.4 s on one."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.mark.parametrize("seed", range(3))
def test_one_replica_group_training_alone_stays_finite_over_the_longest_ftlab_run(seed, one_torch_thread):
    """A survivor may train alone for the whole run plus its grace steps (FtConfig's defaults): with the torchft
    lab's step size the toy loss stays finite for every group (at lr 0.05 seeds 1 and 2 reached inf within 150 steps)."""
    import torch

    from course_lib.ftlab import FtConfig
    from course_lib.labkit.toy import TOY_LR, TOY_MOMENTUM, toy_batch, toy_model, toy_target

    cfg = FtConfig(seed=seed)
    for group in range(cfg.groups):
        model = toy_model(seed, cfg.features, cfg.hidden)
        opt = torch.optim.SGD(model.parameters(), lr=TOY_LR, momentum=TOY_MOMENTUM)
        target = toy_target(seed, cfg.features)
        torch.manual_seed(seed * 1000 + 17 + group)  # the job's dropout stream (course_lib/ftlab/job.py)
        for step in range(1, cfg.steps + cfg.grace_steps + 1):
            opt.zero_grad()
            x, y = toy_batch(seed, step, group, cfg.batch, target)
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()
        assert torch.isfinite(loss) and loss.item() < 10.0, (seed, group, loss.item())


# ----- the stall rule: a deadline measured in the run, not a constant -----
def _ev(t, ev, pid, rank=-1, **kw):
    return {"t": t, "ev": ev, "rank": rank, "gen": 0, "pid": pid, **kw}


def test_start_ups_are_each_agents_start_to_its_first_workers_and_set_the_stall_limit():
    from course_lib.labkit.events import STALL_MARGIN, stall_limit_s, startups_s

    events = [_ev(0.0, "agent_start", 11), _ev(0.5, "agent_start", 12), _ev(2.0, "workers_spawned", 11),
              _ev(3.0, "step_done", 99, rank=0), _ev(5.5, "workers_spawned", 12),
              _ev(9.0, "workers_spawned", 11),  # a restart of agent 11's workers: not a start-up
              _ev(9.5, "workers_spawned", 13)]  # an agent whose start the log never saw
    assert startups_s(events) == [2.0, 5.0]
    assert stall_limit_s(events) == STALL_MARGIN * 5.0 == 20.0
    assert stall_limit_s(events, waits_s=6.0, margin=2.0) == 16.0
    assert stall_limit_s(events[:2]) is None and stall_limit_s([]) is None  # nothing measured yet


def test_a_run_that_logs_nothing_past_its_measured_limit_fails_and_one_within_it_does_not(tmp_path):
    with pytest.raises(ValueError, match="stall_waits_s"):
        Lab(tmp_path / "bad", timeout_s=60, stall_waits_s=-1)
    with Lab(tmp_path / "a", timeout_s=60, stall_waits_s=0.5) as lab:
        log = EventLog(lab.events_path, rank=-1)
        now = time.time()
        log("agent_start", t=now - 10.0)
        log("workers_spawned", t=now - 9.0)  # a 1 s start-up: the run may be silent 4 x 1 + 0.5 = 4.5 s
        log("step_done", t=now - 3.0)
        lab.check_deadline()  # 3 s of silence: within the limit
        log("step_done", t=now - 6.0)  # the newest event is still 3 s old
        lab.check_stall()
    with Lab(tmp_path / "b", timeout_s=60, stall_waits_s=0.5) as lab:
        log = EventLog(lab.events_path, rank=-1)
        now = time.time()
        log("agent_start", t=now - 10.0)
        log("workers_spawned", t=now - 9.0)
        log("step_done", t=now - 6.0)  # 6 s of silence > 4.5 s
        with pytest.raises(LabError, match=r"stalled: nothing logged for 6\.\d s, more than 4 x its slowest agent "
                                           r"start-up \(1\.0 s"):
            lab.check_deadline("the run")
        with pytest.raises(LabError, match="stalled"):  # a wait fails on it too, long before its deadline
            lab.wait_for("done")
    with Lab(tmp_path / "c", timeout_s=60) as lab:  # no stall rule: only timeout_s bounds the run
        log = EventLog(lab.events_path, rank=-1)
        log("agent_start", t=time.time() - 100.0)
        log("workers_spawned", t=time.time() - 99.0)
        lab.check_deadline()
