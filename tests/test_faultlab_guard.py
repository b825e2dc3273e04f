"""The restart-loop guard: a job whose restarts make no progress is stopped after a bounded
number of attempts, with a message naming the node, the rank and the step.

The policy is tested as a pure function; one lab run (marked slow) puts a bad node under the
instrumented torchrun and checks that the guard, not torchrun's restart budget, ends the loop. The same
run is the suite's real launch of the job that nothing interrupts before its step 6: its first
generation's checkpoint of step 4 and every loss it logs are compared with the in-process reference
(course_lib.faultlab.reference_run), which the reliability tests use in place of a torchrun launch.
"""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course_lib import data
from course_lib.faultlab import (Failure, LabConfig, LabError, RestartResult, read_events, reference_run,
                                 reference_state, run_lab, same_final_state)
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
    EventLog(path, rank=1, gen=2, node="n1")("inject", step=6, kind="kill")
    assert _progress(EventLog(path, rank=-1, gen=0), 2) == (5, 6, 1, "n1")  # every rank got to 5; the failed rank's node
    assert _progress(EventLog(path, rank=-1, gen=0), 3) == (0, None, None, None)


def test_the_rank_named_is_the_one_that_failed_first():
    from types import SimpleNamespace as F

    assert _first_failed_rank({0: F(exitcode=1, timestamp=5), 1: F(exitcode=-9, timestamp=5)}) == 1
    assert _first_failed_rank({2: F(exitcode=1, timestamp=4), 1: F(exitcode=1, timestamp=5)}) == 2
    assert _first_failed_rank({}) == -1


BAD_NODE = LabConfig(steps=8, ckpt_every=4, failures=[Failure("bad_node", 6, rank=1)], step_compute_s=0.0)


@pytest.fixture(scope="module")
def bad_node_run(tmp_path_factory):
    """The bad node's run under torchrun: its folder and the LabError that ended it."""
    run_dir = tmp_path_factory.mktemp("bad_node")
    with pytest.raises(LabError, match=r"3 restarts in a row made no progress") as err:
        run_lab(BAD_NODE, run_dir=run_dir, timeout_s=150)
    return run_dir, err.value


@pytest.mark.slow
def test_a_bad_node_under_torchrun_is_stopped_by_the_guard(bad_node_run):
    run_dir, err = bad_node_run
    assert "step 6 (rank 1 on node" in str(err)
    events = read_events(run_dir / "events.jsonl")
    gens = {e["gen"] for e in events if e["ev"] == "worker_start"}
    assert gens == {0, 1, 2, 3}  # the first attempt and three restarts, not torchrun's budget
    assert BAD_NODE.max_restarts > 3
    assert [e["step"] for e in events if e["ev"] == "gave_up"] == [6]


@pytest.mark.slow
def test_the_in_process_reference_is_a_real_launch_bit_for_bit(bad_node_run):
    """Drift between course_lib.faultlab.reference_run and the job under torchrun: the real run's first
    generation trained steps 1-4 uninterrupted and wrote their checkpoint (on disk, kept after the run);
    params, optimizer state, both ranks' RNG states, the step count and the digest are the in-process run's
    of 4 steps, and every loss logged (steps 1-5, each generation) is the reference's to the last bit."""
    run_dir, _ = bad_node_run
    events = read_events(run_dir / "events.jsonl")
    assert [e["step"] for e in events if e["ev"] == "ckpt_written"] == [0, 4]  # gen 0's, before the first kill
    from course_lib.checkpoint.safe import load_checkpoint
    from course_lib.labkit.toy import state_digest

    path = run_dir / "ckpt" / "ckpt-0000000004.pt"
    written = load_checkpoint(path)
    assert written.pop("ballast") is None and (written["step"], written["applied"]) == (4, 4)
    real = RestartResult(config=BAD_NODE, events=events, run_dir=run_dir, wall_s=0.0, final_digest=state_digest(written),
                         final_path=path, applied=4)
    ref = reference_run(BAD_NODE.replace(steps=4, failures=()), run_dir=run_dir / "reference")
    assert same_final_state(ref, real) == {"params": True, "optimizer": True, "rng": True, "applied": (4, 4),
                                           "digest": True}
    # the check can fail: the state after 3 steps (one step short) differs in every part
    short = reference_run(BAD_NODE.replace(steps=3, failures=()), run_dir=run_dir / "short")
    assert same_final_state(short, real) == {"params": False, "optimizer": False, "rng": False, "applied": (3, 4),
                                             "digest": False}
    _, ref_steps = reference_state(BAD_NODE)
    ref_loss = {(e["step"], e["rank"]): e["loss"] for e in ref_steps}
    logged = [((e["step"], e["rank"]), e["loss"]) for e in events if e["ev"] == "step_done"]
    assert sorted({k for k, _ in logged}) == [(s, r) for s in range(1, 6) for r in (0, 1)]
    assert len(logged) == 2 * (5 + 3)  # gen 0: steps 1-5; gens 1-3: step 5 again, from the checkpoint of step 4
    assert all(loss == ref_loss[k] for k, loss in logged)
