"""course_lib.levers: the stage levers, the rate levers and the waterfall (notebooks 03, 08)."""
from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from course_lib import Scenario
from course_lib import interval as iv
from course_lib import levers as lv
from course_lib.data import sourced
from course_lib.restart import baseline_budget


def test_lever_numbers_come_from_the_scenario_and_data():
    s = Scenario()
    levers = lv.default_levers(s)
    assert [x.stage for x in levers] == ["detect", "reschedule", "reload", "rewind"]
    assert all("[@" in x.source for x in levers)
    rr = sourced("restart_ranges.csv")
    assert s.modes.launcher_poll_min == rr["torchrun_monitor_interval"].minutes == pytest.approx(0.1 / 60)
    assert s.modes.rank_monitor_poll_min == pytest.approx(5 / 60)
    assert s.modes.host_heartbeat_min == rr["nvrx_inprocess_heartbeat_timeout"].minutes == pytest.approx(0.5)
    assert s.restart_after_min == rr["flashrecovery_restore_4800"].minutes == pytest.approx(2.5)
    # the end-to-end 150 s is not a stage: the reschedule is what it leaves once its detection and reload are out
    assert s.reschedule_after_min == pytest.approx(2.5 - s.detect_after_by_mode["crash"] - s.reload_after_min)
    big = Scenario().replace(n_gpus=16384)
    assert big.reload_after_min == pytest.approx(s.reload_after_min / 4)  # a bigger fleet, a smaller shard


def test_detection_lever_moves_hangs_and_lost_hosts_never_crashes():
    s = Scenario()
    b = baseline_budget(s)
    after = lv.default_levers(s)[0](b)
    by0, by1 = {m.mode: m for m in b.modes}, {m.mode: m for m in after.modes}
    assert by1["crash"].detect == by0["crash"].detect  # torchrun already sees an exit within its poll
    assert by1["hang"].detect == pytest.approx(s.hang_timeout_min + s.modes.rank_monitor_poll_min / 2 + s.modes.launcher_poll_min)
    assert by1["host_loss"].detect == pytest.approx(s.modes.host_heartbeat_min)
    assert by1["hang"].detect < by0["hang"].detect


@given(st.floats(0.0, 30.0))
def test_stage_levers_never_lengthen_a_stage(target):
    b = baseline_budget(Scenario())
    for fn, stage in ((lambda d: lv.hot_spare_restart(d, target), "reschedule"), (lambda d: lv.reload_from_memory(d, target), "reload"),
                      (lambda d: lv.heartbeat_detection(d, {"hang": target, "host_loss": target}), "detect")):
        out = fn(b)
        for m0, m1 in zip(b.modes, out.modes):
            assert getattr(m1, stage) <= getattr(m0, stage) + 1e-15
            others = [f for f in ("detect", "reschedule", "reload", "latency") if f != stage]
            assert all(getattr(m1, f) == getattr(m0, f) for f in others)


def test_reload_from_memory_leaves_the_persisted_modes_on_storage():
    s = Scenario().replace(peer_copy=False)
    out = lv.reload_from_memory(baseline_budget(s), 0.001)
    by = {m.mode: m for m in out.modes}
    assert by["crash"].reload == 0.001 and by["hang"].reload == 0.001
    assert by["sdc"].reload == s.reload_min and by["host_loss"].reload == s.reload_min


def test_in_memory_checkpoint_keeps_the_persisted_checkpoint_and_is_optimal():
    s = Scenario()
    b = baseline_budget(s)
    bound = max(s.step_min, s.snapshot_cost_min, s.write_cost_min)
    out = lv.in_memory_checkpoint(b, s.snapshot_cost_min, bound)
    assert out.persisted_interval_min == s.checkpoint_interval_min and out.interval_bound_min == bound
    assert out.write_cost_min == s.snapshot_cost_min
    assert out.rewind_by_mode()["sdc"] == pytest.approx(s.checkpoint_interval_min / 2 + s.modes.sdc_latency_min)
    # optimal: any other interval above the bound loses more
    for tau in (out.interval_min * 0.9, out.interval_min * 1.1):
        assert dataclasses.replace(out, interval_min=tau).minutes_per_day >= out.minutes_per_day
    # Young's first order: sqrt(2 delta M / share of failures that restore the snapshot)
    share = 1 - s.modes.share("sdc")
    assert out.interval_min == pytest.approx(math.sqrt(2 * s.snapshot_cost_min * b.mtbf_min / share), rel=0.01)
    with pytest.raises(ValueError, match="write_cost_min"):
        lv.checkpoint_at_optimum(b, -1.0)


def test_waterfall_is_largest_first_and_pulls_only_what_saves():
    s = Scenario()
    b = baseline_budget(s)
    levers = lv.default_levers(s)
    pulled, left = lv.order_by_saving(b, levers)
    assert [x.name for x in pulled] == ["in-memory checkpoint", "heartbeat detection", "reload from memory"]
    assert [x.name for x, _ in left] == ["hot-spare restart"] and left[0][1] < 0  # the spare's idle GPUs cost more
    steps = lv.waterfall(b, levers)
    savings = [x.saved_minutes_per_day for x in steps]
    assert savings == sorted(savings, reverse=True) and all(v > 0 for v in savings)
    # greedy: at every step no other remaining lever would save more
    current = b
    remaining = list(levers)
    for step in steps:
        best = max(x.saving(current) for x in remaining)
        assert step.saved_minutes_per_day == pytest.approx(best)
        remaining.remove(step.lever)
        current = step.after
    # a pooled spare costs nothing, so it is pulled
    pooled = Scenario().replace(spares_pooled=True)
    assert "hot-spare restart" in [x.name for x in lv.order_by_saving(baseline_budget(pooled), lv.default_levers(pooled))[0]]


def test_the_stage_levers_commute_without_writes():
    s = Scenario()
    b = baseline_budget(s)
    stage_levers = lv.default_levers(s)[:3]
    ends = {round(lv.apply_levers(b, order)[-1].minutes_per_day, 9) for order in itertools.permutations(stage_levers)}
    assert len(ends) == 1


def test_lemon_lever_is_measured_clamped_at_one_and_bounded_by_what_it_can_remove():
    s = Scenario()
    kok = lv.kokolis_lemon_rate_factor()
    bound = 1 - lv.table5_share(lv.TOP_TABLE5_CAUSES)
    assert lv.lemon_bound() == pytest.approx(bound)
    assert kok == pytest.approx(math.log(1 - 0.04) / math.log(1 - 0.14))
    assert kok < bound  # the cluster's reading would remove more than every faulty GPU and HBM3 failure
    measured = lv.measured_lemon_removal().factor
    assert lv.lemon_node_factor() == min(max(measured, bound), 1.0) == s.lemon_factor
    levers = {x.name: x for x in lv.rate_levers(s)}
    assert levers["lemon-node removal"].factor == s.lemon_factor
    assert bound <= levers["lemon-node removal"].factor <= 1.0
    from course_lib.answer import answer

    yours = Scenario().replace(lemon_factor=0.8)  # one line wires a fault log's factor in
    lever = {x.name: x for x in lv.rate_levers(yours)}["lemon-node removal"]
    assert lever.factor == 0.8 and "given" in lever.description
    assert "factor given, x 0.80" in answer(yours, spread_draws=0).text
    with pytest.raises(ValueError, match="lemon_factor"):
        Scenario().replace(lemon_factor=1.5)
    for f, b, want in ((1.02, bound, 1.0), (0.9, bound, 0.9), (0.27, bound, bound), (1.0, 0.0, 1.0)):
        assert lv.clamp_lemon_factor(f, b) == pytest.approx(want)
    with pytest.raises(ValueError, match="factor"):
        lv.clamp_lemon_factor(0.0)


def test_table5_shares_come_from_the_counts():
    assert lv.table5_share(["Faulty GPU"]) == pytest.approx(148 / 419)
    assert lv.rate_without_causes(1e-3, ["Faulty GPU", "GPU HBM3 Memory"]) == pytest.approx(1e-3 * (1 - 220 / 419))
    with pytest.raises(ValueError, match="components"):
        lv.table5_share(["Cosmic rays"])


@given(st.floats(0.05, 1.0))
def test_fewer_failures_scales_the_floor_and_reoptimises_an_optimised_interval(factor):
    from course_lib.answer import answer

    f = answer(spread_draws=0).after
    g = lv.fewer_failures(f, factor)
    assert g.failures_per_day == pytest.approx(factor * f.failures_per_day)
    assert g.floor_minutes_per_day == pytest.approx(factor * f.floor_minutes_per_day, rel=1e-9)
    assert g.interval_min >= f.interval_min - 1e-12  # fewer failures: a longer best interval
    with pytest.raises(ValueError, match="factor"):
        lv.fewer_failures(f, 1.5)


def test_levers_work_on_arrays_of_draws():
    s = Scenario()
    b = baseline_budget(s).with_failures_per_day(np.array([1.0, 2.0, 4.0]))
    for lever in lv.default_levers(s):
        out = lever(b)
        assert np.shape(out.loss_fraction) == (3,)
        assert np.all(out.loss_fraction <= b.loss_fraction + 1e-15) or lever.stage == "reschedule"
    assert np.allclose(iv.best_interval(np.array([1e-3, 1e-2]), 720.0), [iv.best_interval(1e-3, 720.0), iv.best_interval(1e-2, 720.0)])
