"""Reliability proof of the fault-injection lab: real torchrun runs with injected failures.

One real torchrun run of a 24-step job (2 ranks, gloo, checkpoints in the /dev/shm snapshot) is hit
by four failures, one per worker generation: a rank SIGKILLed mid-step (step 7), the writer SIGKILLed
halfway through the checkpoint of step 12, the newest checkpoint corrupted and the writer killed (step
15), and a rank that hangs (step 19) so that only the collective timeout can notice it. It is compared
with the same job run uninterrupted, computed in this process (course_lib.faultlab.reference_run: the
job's own step functions, the two ranks' all-reduce as one float32 addition; no torchrun). That reference
is itself checked bit for bit against a real launch's first generation in tests/test_faultlab_guard.py.

Each test asserts one property on those two runs. Nothing here asserts a speed: the stage
durations are measured and only bounded where the property is itself a bound (a hang is
noticed within the configured timeout plus a stated margin).
"""
import os
import time
from collections import defaultdict
from pathlib import Path

import pytest

from course_lib.faultlab import Failure, LabConfig, LabError, reference_run, run_lab, same_final_state
from course_lib.restart import RestartStages

pytestmark = pytest.mark.slow

STEPS, EVERY, TIMEOUT_S, MONITOR_S = 24, 4, 2.0, 0.1
#: A hang must be noticed within the collective timeout + this margin (seconds): one monitor
#: poll of the agent plus scheduling delays of a busy 2-core machine.
HANG_MARGIN_S = 3.0
FAILURES = (
    Failure("kill", 7, rank=1),
    Failure("kill_in_ckpt", 12),
    Failure("corrupt_ckpt", 15),
    Failure("hang", 19, rank=0),
)


REFERENCE = LabConfig(steps=STEPS, ckpt_every=EVERY, snapshot="disk")


#: How long the processes of a run killed at its timeout may take to be gone from /proc (seconds): the lab's
#: close() has SIGKILLed and reaped them before run_lab raises, so this is only a bound for a loaded machine.
GONE_DEADLINE_S = 30.0


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    return reference_run(REFERENCE, run_dir=tmp_path_factory.mktemp("ref"))  # in-process: no torchrun


@pytest.fixture(scope="module")
def faulty(tmp_path_factory):
    config = REFERENCE.replace(failures=FAILURES, collective_timeout_s=TIMEOUT_S, monitor_interval_s=MONITOR_S, snapshot="memory")
    return run_lab(config, run_dir=tmp_path_factory.mktemp("faulty"), timeout_s=240)


def _by_kind(result):
    return {m.kind: m for m in result.restarts}


def test_killed_run_ends_bit_identical_to_uninterrupted(reference, faulty):
    kills = [e for e in faulty.events_of("inject") if e["kind"] in ("kill", "kill_in_ckpt", "corrupt_ckpt")]
    # every configured kill struck exactly once, on its rank at its step, each in a later worker generation than the
    # one before (a real restart between them), so the final state below survived three SIGKILLs, not fewer
    assert [(e["kind"], e["rank"], e["step"]) for e in kills] == [(f.kind, f.rank, f.step) for f in FAILURES if f.kind != "hang"]
    assert all(a["gen"] < b["gen"] for a, b in zip(kills, kills[1:]))
    cmp = same_final_state(reference, faulty)
    assert cmp == {"params": True, "optimizer": True, "rng": True, "applied": (STEPS, STEPS), "digest": True}
    assert reference.applied == faulty.applied == STEPS
    assert len(faulty.restarts) == len(FAILURES)


def test_every_recomputed_step_repeats_the_original_exactly(reference, faulty):
    """Same loss on every rank each time a step is (re)computed, to the last bit: nothing lost, nothing applied twice."""
    ref = {(e["step"], e["rank"]): e["loss"] for e in reference.events_of("step_done")}
    # the log keeps the float32 loss exactly (not rounded), so equal here means bit-identical
    assert all(isinstance(v, float) for v in ref.values()) and any(round(v, 6) != v for v in ref.values())
    seen = defaultdict(list)
    for e in faulty.events_of("step_done"):
        seen[(e["step"], e["rank"])].append(e["loss"])
    assert set(seen) == set(ref)
    assert all(set(v) == {ref[k]} for k, v in seen.items())
    recomputed = sum(len(v) - 1 for v in seen.values()) // 2
    assert recomputed == sum(m.steps_recomputed for m in faulty.restarts)
    # the surviving lineage applies each step once: resumed step + steps after it
    last = max(e["gen"] for e in faulty.events)
    resumed = [e["step"] for e in faulty.events_of("state_loaded") if e["gen"] == last][0]
    final_gen_steps = sorted(e["step"] for e in faulty.events_of("step_done") if e["gen"] == last and e["rank"] == 0)
    assert final_gen_steps == list(range(resumed + 1, STEPS + 1))


def test_kill_during_checkpoint_write_falls_back_to_the_previous_checkpoint(faulty):
    m = _by_kind(faulty)["kill_in_ckpt"]
    assert (m.pre_failure_step, m.resumed_step) == (12, 12 - EVERY)
    assert m.reload_source == "memory"


def test_hang_is_detected_by_the_collective_timeout_and_recovered(faulty):
    m = _by_kind(faulty)["hang"]
    assert "Timed out" in m.reason  # the peer's collective timed out: nothing else noticed it
    assert 0 < m.peer_noticed_s <= TIMEOUT_S + HANG_MARGIN_S
    assert m.detect_s <= TIMEOUT_S + MONITOR_S + HANG_MARGIN_S
    assert m.rewind_s >= 0 and faulty.applied == STEPS  # and the job finished


def test_corrupted_newest_checkpoint_is_skipped(faulty):
    m = _by_kind(faulty)["corrupt_ckpt"]
    assert m.skipped_checkpoints == 1
    corrupted = [e for e in faulty.events_of("inject") if e["kind"] == "corrupt_ckpt"][0]["file"]
    skipped = [e["message"] for e in faulty.events_of("ckpt_skipped")]
    assert skipped and all(corrupted in s and "sha256" in s for s in skipped)
    assert m.resumed_step == 12 - EVERY  # the previous good one


def test_stages_are_measured_for_every_restart(faulty):
    stages = faulty.stages()
    assert [m.kind for m in faulty.restarts] == [f.kind for f in FAILURES] and len(stages) == len(FAILURES)
    ranks = sorted({e["rank"] for e in faulty.events if e["rank"] >= 0})
    for f, m, rs in zip(FAILURES, faulty.restarts, stages):
        # the pre-failure step by hand: a kill inside a checkpoint strikes after its step, the others before it
        pre = f.step if f.kind == "kill_in_ckpt" else f.step - 1
        assert m.pre_failure_step == pre and m.steps_recomputed == pre - m.resumed_step > 0
        # the four stages add up to the wall clock from the injection to the moment every rank has again applied
        # the pre-failure step in a later generation, read straight off the raw log (not through restart_stages)
        (inject,) = faulty.events_of("inject", kind=f.kind)
        back = max(min(e["t"] for e in faulty.events_of("step_done", rank=r, step=pre) if e["gen"] > inject["gen"]) for r in ranks)
        assert m.t_fail == inject["t"] and m.total_s == pytest.approx(back - inject["t"], rel=0, abs=1e-6)
        assert isinstance(rs, RestartStages)
        assert [60 * x for x in (rs.detect, rs.reschedule, rs.reload, rs.rewind)] == pytest.approx(list(m.stages_s().values()))
        assert min(m.stages_s().values()) >= 0
        assert m.reschedule_s > 0 and m.reload_s > 0  # a new process group, a real load
        assert m.noticed_by == "agent"


def _processes_naming(path) -> list[int]:
    """Live processes whose command line names ``path`` (a run's folder)."""
    found = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                if str(path).encode() in (p / "cmdline").read_bytes():
                    found.append(int(p.name))
            except OSError:
                pass
    return found


def test_no_process_or_snapshot_is_left_behind(faulty, reference):
    # the reference ran in this process: it started nothing, and every one of its events is this process's
    assert reference.pids == frozenset() and {e["pid"] for e in reference.events} == {os.getpid()}
    # the faulty run's processes: every one that logged (agent, each generation's workers) and every one it started
    pids = {e["pid"] for e in faulty.events} | set(faulty.pids)
    assert len({e["pid"] for e in faulty.events_of("worker_start")}) == 2 * (len(FAILURES) + 1)
    for pid in pids:
        cmdline = Path(f"/proc/{pid}/cmdline")
        assert not (cmdline.exists() and str(faulty.run_dir).encode() in cmdline.read_bytes())
    assert _processes_naming(faulty.run_dir) == []
    cfg = (faulty.run_dir / "config.json").read_text()
    import json

    assert not Path(json.loads(cfg)["_paths"]["shm"]).exists()


def test_a_run_past_its_timeout_is_killed_and_reported(tmp_path):
    with pytest.raises(LabError, match="timeout_s"):
        run_lab(REFERENCE, run_dir=tmp_path, timeout_s=1.0)
    # the state checked: no process carrying the run's folder is left; polled until it holds or the deadline passes
    deadline = time.monotonic() + GONE_DEADLINE_S
    while (left := _processes_naming(tmp_path)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert left == [], f"processes of the killed run still alive {GONE_DEADLINE_S:g} s after run_lab raised: {left}"
