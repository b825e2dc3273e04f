"""Where the floor moves with replica groups (course_lib.replicas, course_lib.floor; the simulator in course_lib.simulate)."""
import json
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from course_lib import modes as md
from course_lib import replicas as rp
from course_lib.scenario import ModeInputs, ReplicaInputs, Scenario
from course_lib.simulate import simulate_replica_floor
from replica_moments import floor_by_hand, standard_error_by_hand

ROOT = Path(__file__).resolve().parents[1]


def test_one_group_is_todays_floor_exactly():
    s = Scenario()
    assert rp.per_mode_floor_groups(s, ReplicaInputs(groups=1)) == md.per_mode_floor(s)
    assert sum(md.per_mode_floor(s).values()) == pytest.approx(floor_by_hand(s, 1), rel=1e-12)
    other = Scenario(n_gpus=16384, rate_per_gpu_day=1e-3)
    assert rp.per_mode_floor_groups(other, ReplicaInputs(groups=1, stall_min=3, rejoin_min=9)) == md.per_mode_floor(other)


def test_defaults_come_from_the_lab_scaled_like_notebook_07_and_tie_to_the_committed_benchmark():
    rep = Scenario().replicas
    lab = rp.replica_lab_inputs()
    assert rep.stall_min == lab["stall_min"] and rep.rejoin_min == lab["rejoin_min"]
    from course_lib.data import load_table

    rows = {r["key"]: r for r in load_table("replica_lab.csv").rows}
    assert rep.stall_min == pytest.approx(rows["ftlab_survivor_stall"]["value"] * 10 / 60)
    # the numbers in data/ are the committed benchmark's medians (benchmarks/results/ftlab_compare.json), to their printed digits
    bench = {r["scenario"]: r for r in json.loads((ROOT / "benchmarks/results/ftlab_compare.json").read_text())["summary"]}
    assert rows["ftlab_survivor_stall"]["value"] == pytest.approx(bench["kill"]["ft_stall_s"], abs=0.005)
    assert rows["ftlab_rejoin"]["value"] == pytest.approx(bench["kill"]["ft_rejoin_s"], abs=0.005)
    sweep = json.loads((ROOT / "benchmarks/results/ftlab_compare.json").read_text())["sweep"]
    five = next(r for r in sweep if r.get("safety_factor") == 5)
    assert rows["ftlab_hang_detect_per_step"]["value"] == pytest.approx(five["hang_detect_per_step"], abs=0.005)
    assert rp.groups_for(Scenario()) == 4096 // 128  # one group per data-parallel replica (TP 8 x PP 16)


def test_sdc_still_rewinds_and_detection_is_paid_by_the_whole_job():
    s = Scenario()
    one = md.per_mode_floor(s)
    many = rp.per_mode_floor_groups(s, ReplicaInputs(groups=32))
    assert many["sdc"] == pytest.approx(one["sdc"])
    hang = next(x for x in md.mode_stages(s) if x.mode == "hang")
    assert many["hang"] >= s.failures_per_day * hang.share * hang.detect  # the timeout is not divided by G
    assert many["crash"] < one["crash"] / 3


@settings(max_examples=40, deadline=None)
@given(g1=st.integers(1, 32), g2=st.integers(1, 32), stall=st.floats(0, 0.5), extra=st.floats(0, 1.5))
def test_floor_falls_monotonically_with_groups(g1, g2, stall, extra):
    s = Scenario()
    lo, hi = sorted((g1, g2))
    kw = {"stall_min": stall, "rejoin_min": stall + s.step_min / 2 + extra}  # rejoin >= survivors' part, <= a whole-job restart
    f = [rp.floor_minutes_per_day_groups(s, ReplicaInputs(groups=g, **kw)) for g in (lo, hi)]
    assert f[1] <= f[0] + 1e-12


@pytest.mark.parametrize("kw, word", [({"groups": 0}, "groups"), ({"groups": 2.5}, "groups"),
                                      ({"stall_min": -1}, "stall_min"), ({"rejoin_min": float("nan")}, "rejoin_min"),
                                      ({"stall_min": 2.0, "rejoin_min": 1.0}, "rejoin_min")])
def test_bad_replica_inputs_name_the_input(kw, word):
    with pytest.raises(ValueError, match=word):
        ReplicaInputs(**kw)


def test_more_groups_than_replicas_is_refused():
    with pytest.raises(ValueError, match=r"groups must be an integer in \[1, 32\]"):
        rp.per_mode_floor_groups(Scenario(), ReplicaInputs(groups=33))


def test_strategies_order_and_sum():
    by = rp.floor_by_strategy(Scenario())
    totals = [sum(by[k].values()) for k in rp.STRATEGIES]
    assert totals == sorted(totals, reverse=True)
    # lambda x the share-weighted cost of a failure, summed by hand from the stages (tests/replica_moments.py)
    assert totals[1] == pytest.approx(floor_by_hand(Scenario(), 1), rel=1e-12)  # about 8.87 min/day
    assert totals[2] == pytest.approx(floor_by_hand(Scenario(), 32), rel=1e-12)  # about 4.38 min/day with 32 groups
    assert rp.floor_by_strategy(Scenario(), mode_inputs=ModeInputs(peer_copy=False))[rp.STRATEGIES[1]]["host_loss"] > by[rp.STRATEGIES[1]]["host_loss"]


def test_hsdp_shards_the_optimizer_state_inside_a_group():
    assert rp.replica_shard_gb(Scenario()) == pytest.approx(405e9 * 12 / 128 / 1e9)  # about 38 GB per GPU


@pytest.mark.parametrize("groups", [1, 3, 32])
def test_simulation_agrees_with_the_model(groups):
    """The event simulation's mean within 4 standard errors of the model; the standard error computed by hand
    (a compound Poisson sum: sqrt(lambda E[c^2] / (days n_runs)), tests/replica_moments.py), not the one it returns."""
    s, rep = Scenario(), ReplicaInputs(groups=groups)
    mean, se = simulate_replica_floor(s, rep, n_runs=1500, seed=groups)
    expected_se = standard_error_by_hand(s.replace(replicas=rep), groups, 30.0, 1500)  # about 0.06 min/day
    assert se == pytest.approx(expected_se, rel=0.1)
    model = rp.floor_minutes_per_day_groups(s, rep)
    assert model == pytest.approx(floor_by_hand(s.replace(replicas=rep), groups), rel=1e-12)
    assert abs(mean - model) < 4 * expected_se
