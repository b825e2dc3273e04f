"""The SDC lab, real (notebook 14): bit flips in a 3-rank data-parallel job under torchrun (gloo), caught
by the detectors, recovered, and the end compared bit for bit with the run that was never corrupted.

Every trial runs in **one** torchrun launch (``run_sdclab_trials``: start-up paid once; a trial's steps
take milliseconds). Flips strike at the steps the job reaches, never after a sleep, so each test asserts
what was injected, which detector raised the alarm at which step, whom it blamed, and the final state;
nothing asserts a speed (benchmarks/sdclab_bench.py does).
"""
import math

import pytest

from course_lib.labkit import leftovers
from course_lib.sdclab import Flip, SdcLabConfig, run_sdclab_trials

BASE = SdcLabConfig(replicas=3, steps=12, snapshot_every=2, keep=3, replay_every=4)
TRIALS = {
    "reference": BASE,
    "memory, 3 replicas": BASE.replace(flips=[Flip("param", 5, rank=2, bit=0)]),
    "compute, then memory with 2 left": BASE.replace(flips=[Flip("grad", 6, rank=1, bit=0, persistent=True),
                                                            Flip("param", 10, rank=2, bit=0)]),
    "gross gradient": BASE.replace(flips=[Flip("grad", 5, rank=1, bit=30)]),
    "watch a gross weight": BASE.replace(recover=False, flips=[Flip("param", 5, rank=2, bit=30)]),
    # the lowest exponent bit: the weight doubles or halves, and stays wrong (a flip of mantissa bit 0 of this
    # small weight is rounded away by the next update: the replicas agree again from step 6)
    "watch a doubled weight": BASE.replace(recover=False, flips=[Flip("param", 5, rank=2, bit=23)]),
    # bit 4, not 0: one unit in the last place of one shard's gradient can vanish in the average's rounding
    "invisible gradient": BASE.replace(flips=[Flip("grad", 5, rank=1, bit=4)]),
    "loss": BASE.replace(flips=[Flip("loss", 5, rank=0, bit=30)]),
    "too late for the snapshots": BASE.replace(snapshot_every=1, keep=1, flips=[Flip("grad", 6, rank=1, bit=0, persistent=True)]),
    "one replica": BASE.replace(replicas=1),
    "two replicas, compute": BASE.replace(replicas=2, max_recoveries=2, flips=[Flip("grad", 6, rank=1, bit=0, persistent=True)]),
}


@pytest.fixture(scope="module")
def runs():
    results = run_sdclab_trials(TRIALS.values(), timeout_s=300)
    return dict(zip(TRIALS, results))


def _acted(res):
    return [a for a in res.alarms if a["acted"]]


def test_a_clean_run_raises_no_alarm_and_its_replicas_agree(runs):
    ref = runs["reference"]
    assert ref.outcome == "done" and ref.alarms == [] and ref.false_alarms() == [] and ref.injections == []
    assert len(ref.digests) == 3 and ref.final_digest is not None
    assert [e["step"] for e in ref.steps] == list(range(1, 13))
    assert [e["alarms"] for e in ref.steps] == [[]] * 12  # no detector fired in any step, replayed steps 4, 8, 12 included
    assert ref.rewinds == [] and ref.excluded == [] and ref.unavailable == {}


def test_a_memory_flip_is_caught_the_same_step_its_replica_excluded_and_the_end_is_bit_identical(runs):
    res, ref = runs["memory, 3 replicas"], runs["reference"]
    (inj,) = res.injections
    assert (inj["target"], inj["rank"], inj["step"], inj["bit"]) == ("param", 2, 5, 0) and inj["before"] != inj["after"]
    (alarm,) = _acted(res)
    assert (alarm["detector"], alarm["step"], alarm["suspect"]) == ("fingerprint", 5, 2)
    (rw,) = res.rewinds
    assert (rw["to"], rw["excluded"], rw["servers"]) == (4, 2, [0, 1, 0])  # shard 2 now computed on rank 0
    assert res.excluded == [2] and set(res.digests) == {0, 1}
    assert res.final_digest == ref.final_digest


def test_a_compute_fault_is_found_by_replay_and_a_two_replica_mismatch_names_nobody(runs):
    res, ref = runs["compute, then memory with 2 left"], runs["reference"]
    assert {e["step"] for e in res.injections if e["flip"] == 0} == {6, 7, 8}  # every gradient of rank 1 from step 6 on
    first, second = _acted(res)
    assert (first["detector"], first["step"], first["suspect"]) == ("replay", 8, 1)  # the next replayed step
    assert (second["detector"], second["step"], second["suspect"]) == ("fingerprint", 10, None)
    assert "no majority" in second["reason"]
    assert [(r["to"], r["excluded"]) for r in res.rewinds] == [(4, 1), (8, None)]  # 6 may hold the fault: 4
    assert res.excluded == [1] and res.final_digest == ref.final_digest
    assert res.latencies(0) == {"replay": 2} and res.latencies(1)["fingerprint"] == 0


def test_a_gross_gradient_is_caught_by_its_norm_before_the_update_on_the_rank_that_made_it(runs):
    res, ref = runs["gross gradient"], runs["reference"]
    (inj,) = res.injections
    assert abs(inj["after"]) > 1e30
    (alarm,) = _acted(res)
    assert (alarm["detector"], alarm["step"], alarm["suspect"]) == ("grad_norm", 5, 1)
    assert res.rewinds[0]["to"] == 4 and res.final_digest == ref.final_digest


def _steps_of(res, detector):
    return [a["step"] for a in res.alarms if a["detector"] == detector]


def test_watching_a_weight_that_stays_wrong_replay_fires_at_the_next_replayed_step(runs):
    """Worked by hand from the settings: replay runs in the steps divisible by replay_every = 4 of 12 (4, 8, 12);
    the flip strikes after step 5's update, so the first replayed step that computes with the wrong weight is 8:
    latency 8 - 5 = 3 steps, and again at 12. The fingerprint sees it after step 5's update (latency 0) and in
    every step after (nothing repairs it while watching). The arbiter blames rank 2, whose weight was flipped."""
    res, ref = runs["watch a doubled weight"], runs["reference"]
    (inj,) = res.injections
    assert (inj["target"], inj["rank"], inj["step"], inj["bit"]) == ("param", 2, 5, 23)
    assert inj["after"] in (2 * inj["before"], inj["before"] / 2)  # the lowest exponent bit: x 2 or / 2, exactly
    assert res.false_alarms() == []  # nothing before the flip: step 4 replayed clean
    assert _steps_of(res, "replay") == [8, 12]
    assert _steps_of(res, "fingerprint") == list(range(5, 13))
    assert {a["suspect"] for a in res.alarms} == {2}
    assert res.latencies() == {"fingerprint": 0, "replay": 3}  # a weight twice too big moves neither loss nor norm 10 x
    assert res.rewinds == [] and not any(a["acted"] for a in res.alarms) and res.outcome == "done"
    assert res.final_digest is None and res.digests[0] == res.digests[1] != res.digests[2]  # rank 2 still differs
    assert res.digests[0] != ref.final_digest  # and its wrong gradients went into everyone's average


def test_watching_a_gross_weight_measures_each_detectors_latency_and_the_nans_blind_the_comparisons(runs):
    """Bit 30 of the weight makes it about 1e35: rank 2's loss of step 6 is not finite (loss and grad_norm: latency
    1), and step 6's average carries it into every replica, so from step 7 every replica's loss is NaN and all
    hold the same NaNs. The fingerprint, which fired in steps 5 and 6, agrees again from step 7; replay's first
    step after the flip is 8, when the replicas are identical: it never fires. The corruption stays."""
    res, ref = runs["watch a gross weight"], runs["reference"]
    (inj,) = res.injections
    assert abs(inj["after"]) > 1e30
    losses = {e["step"]: e["losses"] for e in res.steps}
    assert all(math.isfinite(v) for s in range(1, 6) for v in losses[s])
    assert not math.isfinite(losses[6][2]) and all(math.isfinite(v) for v in losses[6][:2])
    assert all(math.isnan(v) for s in range(7, 13) for v in losses[s])
    assert res.latencies() == {"fingerprint": 0, "loss": 1, "grad_norm": 1}
    assert _steps_of(res, "fingerprint") == [5, 6] and _steps_of(res, "replay") == []
    assert _steps_of(res, "loss") == _steps_of(res, "grad_norm") == list(range(6, 13))
    assert res.rewinds == [] and not any(a["acted"] for a in res.alarms)
    assert res.final_digest != ref.final_digest


def test_a_low_bit_of_a_gradient_off_the_replay_schedule_is_invisible_and_stays_in_the_model(runs):
    res, ref = runs["invisible gradient"], runs["reference"]
    (inj,) = res.injections
    assert inj["step"] % BASE.replay_every and abs(inj["after"] - inj["before"]) < 1e-5 * abs(inj["before"])
    assert res.alarms == [] and res.outcome == "done"
    assert res.final_digest is not None  # the replicas still agree with each other ...
    assert res.final_digest != ref.final_digest  # ... and are all wrong


def test_a_flipped_loss_never_touches_the_state(runs):
    res, ref = runs["loss"], runs["reference"]
    (inj,) = res.injections
    went_up = abs(inj["after"]) > abs(inj["before"])
    assert [(a["detector"], a["suspect"]) for a in _acted(res)] == ([("loss", 0)] if went_up else [])
    assert res.final_digest == ref.final_digest  # rewound or not, the weights were never corrupt


def test_a_corruption_older_than_every_kept_snapshot_is_unrecoverable_and_says_so(runs):
    res = runs["too late for the snapshots"]
    assert res.outcome == "unrecoverable"
    (e,) = [e for e in res.events if e["ev"] == "unrecoverable"]
    assert e["detector"] == "replay" and "no kept snapshot is older than step 5" in e["reason"]


def test_with_one_replica_the_comparing_detectors_say_they_cannot_run(runs):
    res = runs["one replica"]
    assert set(res.unavailable) == {"fingerprint", "replay"}
    assert "1" in res.unavailable["fingerprint"] and res.outcome == "done" and len(res.digests) == 1
    assert res.fingerprint_cost()["steps_measured"] == 0  # not run, not passed


def test_with_two_replicas_replay_sees_a_compute_fault_but_cannot_name_it(runs):
    res = runs["two replicas, compute"]
    assert all(a["detector"] == "replay" and a["suspect"] is None for a in _acted(res))
    assert "two replicas" in _acted(res)[0]["reason"]
    assert res.outcome == "unrecoverable" and res.excluded == []
    assert "still there" in next(e for e in res.events if e["ev"] == "unrecoverable")["reason"]


def test_the_launch_leaves_nothing_behind(runs):
    assert all(not v for v in leftovers().values())
