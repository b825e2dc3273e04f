"""The restart-loop guard: a job whose restarts make no progress is stopped after a bounded
number of attempts, with a message naming the node, the rank and the step.

The policy is tested as a pure function; one lab run (marked slow) puts a bad node under the
instrumented torchrun and checks that the guard, not torchrun's restart budget, ends the loop.
"""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course_lib import data
from course_lib.faultlab import Failure, LabConfig, LabError, read_events, run_lab
from course_lib.labkit import EventLog
from course_lib.faultlab.guard import NoProgressError, RestartGuard, default_max_no_progress_restarts
from course_lib.faultlab.launch import _first_failed_rank, _pop_option, _progress


def test_the_default_is_nvrx_max_no_progress_restarts_from_the_data():
    row = data.sourced("restart_ranges.csv")["nvrx_max_no_progress_restarts"]
    assert row.unit == "restarts" and "[@nvrx-docs]" in row.source
    assert default_max_no_progress_restarts() == int(row.value) == 3
    assert RestartGuard().max_no_progress_restarts == 3
    assert LabConfig().max_no_progress_restarts == 3


def test_a_stuck_job_is_stopped_after_three_restarts_with_node_rank_and_step():
    g = RestartGuard()
    assert [g.after_failure(6, 7, node="n1", rank=1) for _ in range(3)] == [True, True, True]
    with pytest.raises(NoProgressError) as err:
        g.after_failure(6, 7, node="n1", rank=1)
    msg = str(err.value)
    assert "3 restarts in a row made no progress" in msg and "max_no_progress_restarts=3" in msg
    assert "step 7 (rank 1 on node n1) x4" in msg and "never getting past step 6" in msg
    assert len(err.value.attempts) == 4


def test_progress_resets_the_count():
    g = RestartGuard(2)
    assert g.after_failure(5) and g.after_failure(5)  # first attempt, then one without progress
    assert g.after_failure(9)  # progress again: the count starts over
    assert g.after_failure(9)
    with pytest.raises(NoProgressError, match="at step 10"):
        g.after_failure(9)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(0, 30), min_size=1, max_size=40), st.integers(1, 5))
def test_the_guard_stops_exactly_at_the_limit_of_consecutive_restarts_without_progress(progresses, limit):
    g = RestartGuard(limit)
    best, run = -1, 0
    for p in progresses:
        run = 0 if p > best else run + 1
        best = max(best, p)
        if run >= limit:
            with pytest.raises(NoProgressError):
                g.after_failure(p)
            return
        assert g.after_failure(p) is True


def test_strictly_increasing_progress_never_stops():
    g = RestartGuard(1)
    assert all(g.after_failure(p) for p in range(50))


@pytest.mark.parametrize("kw, name", [({"max_no_progress_restarts": 0}, "max_no_progress_restarts"),
                                      ({"max_no_progress_restarts": 1.5}, "max_no_progress_restarts")])
def test_bad_limits_name_the_parameter(kw, name):
    with pytest.raises(ValueError, match=f"^{name} must be an integer >= 1"):
        RestartGuard(**kw)
    with pytest.raises(ValueError, match=f"^{name} must be an integer >= 1"):
        LabConfig(**kw)


def test_bad_node_is_only_allowed_last_and_leaves_the_guard_the_last_word():
    with pytest.raises(ValueError, match=r"failures\[0\] of kind 'bad_node' must be the last"):
        LabConfig(failures=[Failure("bad_node", 5), Failure("kill", 9)])
    cfg = LabConfig(failures=[Failure("kill", 3), Failure("bad_node", 6)])
    assert cfg.max_restarts > 1 + cfg.max_no_progress_restarts
    assert LabConfig.from_json(cfg.to_json()) == cfg


def test_launcher_option_is_removed_before_torchrun_sees_it():
    argv = ["--standalone", "--max-no-progress-restarts", "2", "job.py"]
    assert _pop_option(argv, "--max-no-progress-restarts") == "2" and argv == ["--standalone", "job.py"]
    argv = ["--max-no-progress-restarts=4", "job.py"]
    assert _pop_option(argv, "--max-no-progress-restarts") == "4" and argv == ["job.py"]
    assert _pop_option(["job.py"], "--max-no-progress-restarts") is None


def test_progress_of_a_generation_is_read_from_the_event_log(tmp_path):
    path = tmp_path / "events.jsonl"
    for rank, steps in ((0, (5, 6)), (1, (5,))):
        log = EventLog(path, rank=rank, gen=2)
        log("state_loaded", step=4)
        for s in steps:
            log("step_done", step=s)
    EventLog(path, rank=1, gen=2)("inject", step=6, kind="kill")
    assert _progress(EventLog(path, rank=-1, gen=0), 2) == (5, 6, 1)  # every rank got to 5
    assert _progress(EventLog(path, rank=-1, gen=0), 3) == (0, None, None)


def test_the_rank_named_is_the_one_that_failed_first():
    from types import SimpleNamespace as F

    assert _first_failed_rank({0: F(exitcode=1, timestamp=5), 1: F(exitcode=-9, timestamp=5)}) == 1
    assert _first_failed_rank({2: F(exitcode=1, timestamp=4), 1: F(exitcode=1, timestamp=5)}) == 2
    assert _first_failed_rank({}) == -1


@pytest.mark.slow
def test_a_bad_node_under_torchrun_is_stopped_by_the_guard(tmp_path):
    cfg = LabConfig(steps=8, ckpt_every=4, failures=[Failure("bad_node", 6, rank=1)], step_compute_s=0.0)
    with pytest.raises(LabError, match=r"3 restarts in a row made no progress") as err:
        run_lab(cfg, run_dir=tmp_path, timeout_s=150)
    assert "step 6 (rank 1 on node" in str(err.value)
    events = read_events(tmp_path / "events.jsonl")
    gens = {e["gen"] for e in events if e["ev"] == "worker_start"}
    assert gens == {0, 1, 2, 3}  # the first attempt and three restarts, not torchrun's budget
    assert cfg.max_restarts > 3
    assert [e["step"] for e in events if e["ev"] == "gave_up"] == [6]
