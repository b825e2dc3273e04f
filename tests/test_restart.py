"""Tests for course_lib.restart: the stage split, the daily budget and the levers (notebook 03)."""
from __future__ import annotations

import dataclasses
import itertools
import math
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course_lib import MINUTES_PER_DAY, Scenario
from course_lib import restart as rs
from course_lib.data import sourced
from course_lib.restart import (
    STAGES,
    Lever,
    RestartBudget,
    RestartStages,
    apply_levers,
    baseline_budget,
    baseline_stages,
    default_levers,
    heartbeat_detection,
    hot_spare_restart,
    order_by_saving,
    reload_from_memory,
    checkpoint_at_optimum,
    waterfall,
)

minutes = st.floats(min_value=0.0, max_value=120.0, allow_nan=False)
rates = st.floats(min_value=0.01, max_value=50.0, allow_nan=False)


@st.composite
def budgets(draw, write=True):
    stages = RestartStages(
        detect=draw(minutes), reschedule=draw(minutes), reload=draw(minutes),
        rewind=draw(st.floats(min_value=0.01, max_value=120.0)),
    )
    delta = draw(st.floats(min_value=0.0, max_value=5.0)) if write else 0.0
    return RestartBudget(draw(rates), stages, delta)


# ----- the baseline: the question's numbers -----
def test_baseline_reproduces_the_question():
    s = Scenario()
    b = baseline_budget(s)
    assert b.restart_minutes_per_day == pytest.approx(s.minutes_lost_per_day) == pytest.approx(30.0)
    assert round(100 * b.restart_minutes_per_day / MINUTES_PER_DAY, 2) == 2.08  # the question's 2 %: restarts only
    assert b.stages.total == pytest.approx(s.minutes_per_restart)
    # today's synchronous write, every interval, is counted beside the restarts (like with like)
    assert b.write_cost_min == s.write_before_min > 0
    assert b.write_minutes_per_day == pytest.approx(s.write_before_min * MINUTES_PER_DAY / s.checkpoint_interval_min)
    assert b.minutes_per_day == pytest.approx(30.0 + b.write_minutes_per_day)


def test_baseline_stages_from_data():
    src = sourced("restart_stages.csv", "stage")
    st_ = baseline_stages(Scenario())
    assert st_.detect == pytest.approx(src["detect"].minutes) == pytest.approx(5.0)
    assert st_.reload == pytest.approx(129.5 / 60)
    assert st_.rewind == Scenario().checkpoint_interval_min / 2
    assert st_.reschedule == pytest.approx(15 - 5 - 129.5 / 60 - 5)


@settings(max_examples=40, deadline=None)
@given(
    restarts=st.floats(min_value=0.1, max_value=20),
    per_restart=st.floats(min_value=15, max_value=60),
    frac=st.floats(min_value=0.01, max_value=0.5),
)
def test_baseline_follows_any_scenario(restarts, per_restart, frac):
    s = Scenario().replace(failures_per_day=restarts, minutes_per_restart=per_restart, checkpoint_interval_min=2 * frac * per_restart)
    assert s.restart_total_min == pytest.approx(per_restart)
    b = baseline_budget(s)
    assert b.restart_minutes_per_day == pytest.approx(s.minutes_lost_per_day)
    assert b.fraction_of_day == pytest.approx(s.loss_fraction + s.write_before_min / s.checkpoint_interval_min)


def test_baseline_rejects_negative_remainder():
    with pytest.raises(ValueError, match="minutes_per_restart"):  # 5 + 2.16 + 5 > 10
        Scenario(minutes_per_restart=10, checkpoint_interval_min=10)


def test_a_stage_given_keeps_the_others_and_moves_the_total():
    s = Scenario().replace(detect_min=20)
    base = Scenario()
    assert s.baseline_reschedule_min == pytest.approx(base.baseline_reschedule_min, rel=1e-15, abs=0)
    assert s.restart_total_min == pytest.approx(base.restart_total_min + 15, rel=1e-15, abs=0)
    assert Scenario().replace(minutes_per_restart=20).baseline_reschedule_min == pytest.approx(base.baseline_reschedule_min + 5)
    with pytest.raises(ValueError, match="minutes_per_restart must equal"):
        Scenario(reschedule_min=1.0, minutes_per_restart=15.0)


# ----- stages and budget -----
@settings(max_examples=60, deadline=None)
@given(budgets())
def test_breakdown_sums_to_total(b):
    parts = b.breakdown()
    assert list(parts) == [*STAGES, "write"]
    assert sum(parts.values()) == pytest.approx(b.minutes_per_day, rel=1e-12, abs=1e-12)
    assert b.fraction_of_day == pytest.approx(b.minutes_per_day / MINUTES_PER_DAY)
    assert sum(b.stages.as_dict().values()) == pytest.approx(b.stages.total)


@settings(max_examples=40, deadline=None)
@given(budgets())
def test_matches_first_order_waste_model(b):
    # delta/tau + (tau/2 + R)/M, written out here so the test does not depend on course_lib.interval
    tau, delta, m, r = b.interval_min, b.write_cost_min, b.mtbf_min, b.stages.restart_cost
    assert b.fraction_of_day == pytest.approx(delta / tau + (tau / 2 + r) / m, rel=1e-12)


def test_matches_interval_module_when_present():
    interval = pytest.importorskip("course_lib.interval")
    b = baseline_budget(Scenario()).with_write_cost(0.05)
    assert b.fraction_of_day == pytest.approx(
        interval.waste_fraction(b.interval_min, b.write_cost_min, b.mtbf_min, b.stages.restart_cost), rel=1e-12
    )
    opt = rs.checkpoint_at_optimum(b, 0.05)
    assert opt.interval_min == pytest.approx(interval.young_interval(0.05, b.mtbf_min), rel=1e-15, abs=0)


def test_copies():
    b = baseline_budget(Scenario())
    b2 = b.with_stages(detect=1.0)
    assert b2.stages.detect == 1.0 and b.stages.detect == 5.0
    assert b2.stages.reschedule == b.stages.reschedule
    b3 = b.with_failures_per_day(4)
    assert b3.restart_minutes_per_day == pytest.approx(2 * b.restart_minutes_per_day)
    assert b3.write_minutes_per_day == b.write_minutes_per_day  # writes do not scale with failures
    assert b.with_write_cost(0.1).write_minutes_per_day == pytest.approx(0.1 * MINUTES_PER_DAY / b.interval_min)


@pytest.mark.parametrize("stage", STAGES)
@pytest.mark.parametrize("bad", [-1.0, math.nan, math.inf, "5", None, True])
def test_stages_reject_bad_values(stage, bad):
    kw = dict.fromkeys(STAGES, 1.0)
    kw[stage] = bad
    with pytest.raises(ValueError, match=stage):
        RestartStages(**kw)


@pytest.mark.parametrize("bad", [0, -2, math.nan, math.inf])
def test_budget_rejects_bad_failures(bad):
    with pytest.raises(ValueError, match="failures_per_day"):
        RestartBudget(bad, baseline_stages(Scenario()))


def test_budget_rejects_bad_write_cost_and_stages():
    with pytest.raises(ValueError, match="write_cost_min"):
        RestartBudget(2, baseline_stages(Scenario()), -0.1)
    with pytest.raises(ValueError, match="write_cost_min"):
        RestartBudget(2, baseline_stages(Scenario()).replace(rewind=0.0), 0.1)
    with pytest.raises(ValueError, match="stages"):
        RestartBudget(2, {"detect": 1})
    with pytest.raises(ValueError, match="stage"):
        baseline_budget(Scenario()).with_stages(detekt=1.0)


def test_frozen():
    b = baseline_budget(Scenario())
    with pytest.raises(AttributeError):
        b.failures_per_day = 3  # type: ignore[misc]
    with pytest.raises(AttributeError):
        b.stages.detect = 0  # type: ignore[misc]


# ----- sourced lever numbers -----
def test_lever_numbers_come_from_data():
    inp = sourced("levers.csv")
    s = Scenario()
    assert inp["heartbeat_check_interval"].minutes == pytest.approx(5 / 60) == s.detect_after_min
    # the hot-spare target is end to end (FlashRecovery 150 s), not MegaScale's 30 s of job initialisation
    assert sourced("restart_ranges.csv")["flashrecovery_restore_4800"].minutes == pytest.approx(2.5) == s.reschedule_after_min
    assert s.shard_bytes == pytest.approx(405e9 * 12 / 4096, rel=1e-15, abs=0)  # 12 B/param of checkpoint content
    assert s.reload_from_memory_min * 60 == pytest.approx(s.shard_bytes / 1e9 / 55, rel=1e-12, abs=0)
    assert s.snapshot_min * 60 == pytest.approx(s.shard_bytes / 1e9 / 55, rel=1e-12, abs=0)
    assert s.write_before_min * 60 == pytest.approx(s.shard_bytes / 1e9 / 0.87, rel=1e-12, abs=0)
    for sv in inp.values():
        assert sv.source and sv.basis and sv.label in {"P", "Q", "D"}


def test_default_levers_carry_sources_and_stages():
    levers = default_levers(Scenario())
    assert [lv.stage for lv in levers] == list(STAGES)
    assert all(lv.source and lv.description for lv in levers)
    assert "FlashRecovery" in levers[1].source and "Resiliency" in levers[0].source


def test_default_levers_follow_the_fleet():
    # a bigger fleet has smaller shards, so the memory reload is faster
    small, big = default_levers(Scenario(n_gpus=1024), modes=False), default_levers(Scenario(n_gpus=16384), modes=False)
    b = baseline_budget(Scenario())
    assert big[2](b).stages.reload == pytest.approx(small[2](b).stages.reload / 16, rel=1e-12, abs=0)
    # and the snapshot: the interval lever at 16x the fleet writes 1/16 of the bytes
    assert big[3](b).write_cost_min == pytest.approx(small[3](b).write_cost_min / 16, rel=1e-12, abs=0)


def test_levers_receive_their_numbers_from_the_scenario():
    s = Scenario(detect_after_min=0.25, reschedule_after_min=1.5, reload_after_min=0.02, snapshot_cost_min=0.001)
    b = baseline_budget(s)
    det, res, rel, ckpt = default_levers(s, modes=False)
    assert det(b).stages.detect == 0.25 and res(b).stages.reschedule == 1.5 and rel(b).stages.reload == 0.02
    assert ckpt(b).write_cost_min == 0.001
    assert ckpt(b).interval_min == pytest.approx(math.sqrt(2 * 0.001 * b.mtbf_min), rel=1e-15, abs=0)


# ----- levers: only their own stage, never worse -----
def _stage_levers():
    return [
        ("detect", heartbeat_detection, "detect_min"),
        ("reschedule", hot_spare_restart, "reschedule_min"),
        ("reload", reload_from_memory, "reload_min"),
    ]


@settings(max_examples=60, deadline=None)
@given(budgets(), minutes)
def test_stage_levers_touch_only_their_stage_and_never_hurt(b, value):
    for stage, fn, kw in _stage_levers():
        after = fn(b, **{kw: value})
        for other in STAGES:
            if other != stage:
                assert getattr(after.stages, other) == getattr(b.stages, other)
        assert after.failures_per_day == b.failures_per_day and after.write_cost_min == b.write_cost_min
        assert getattr(after.stages, stage) == min(value, getattr(b.stages, stage))
        assert after.minutes_per_day <= b.minutes_per_day + 1e-12


def test_checkpoint_at_optimum_reports_write_cost():
    b = baseline_budget(Scenario())
    after = checkpoint_at_optimum(b, 0.001, min_interval_min=2.0)  # the bound binds: Young's is 1.7 min here
    assert after.interval_min == 2.0
    assert after.breakdown()["write"] == pytest.approx(0.001 * MINUTES_PER_DAY / 2.0, rel=1e-12, abs=0)
    assert after.breakdown()["rewind"] == pytest.approx(b.failures_per_day * 1.0, rel=1e-12, abs=0)
    # an expensive write makes checkpointing at its own optimum worse than a free 10-minute baseline: the lever is honest
    assert checkpoint_at_optimum(b, 5.0).minutes_per_day > b.minutes_per_day
    # no write cost and no bound: continuous checkpoints, no rewind
    assert checkpoint_at_optimum(b, 0.0).stages.rewind == 0.0


@settings(max_examples=40, deadline=None)
@given(rates, st.floats(min_value=1e-4, max_value=1.0))
def test_checkpoint_at_optimum_is_young_and_optimal(lam, delta):
    b = RestartBudget(lam, RestartStages(1, 1, 1, 10 * MINUTES_PER_DAY))
    after = checkpoint_at_optimum(b, delta)
    tau = after.interval_min
    assert tau == pytest.approx(math.sqrt(2 * delta * MINUTES_PER_DAY / lam), rel=1e-12, abs=0)
    # first-order optimum: write and rewind minutes per day are equal, and a step either way costs more
    assert after.breakdown()["write"] == pytest.approx(after.breakdown()["rewind"], rel=1e-9, abs=0)
    for f in (0.9, 1.1):
        assert checkpoint_at_optimum(b, delta, f * tau).minutes_per_day >= after.minutes_per_day
        off = dataclasses.replace(after, stages=after.stages.replace(rewind=f * tau / 2))
        assert off.minutes_per_day > after.minutes_per_day


@settings(max_examples=40, deadline=None)
@given(budgets())
def test_floor_is_detect_reschedule_reload_and_checkpoint_terms_are_the_rest(b):
    assert b.floor_minutes_per_day == pytest.approx(b.failures_per_day * (b.stages.detect + b.stages.reschedule + b.stages.reload),
                                                    rel=1e-12, abs=1e-300)
    assert b.floor_minutes_per_day + b.checkpoint_minutes_per_day == pytest.approx(b.minutes_per_day, rel=1e-12, abs=1e-300)
    assert b.floor_fraction == pytest.approx(b.floor_minutes_per_day / MINUTES_PER_DAY, rel=1e-15, abs=0)
    assert b.ettr == pytest.approx(1 - b.fraction_of_day, rel=1e-15, abs=0)
    assert b.floor_minutes_per_day <= b.minutes_per_day


def test_lever_rejections_name_the_parameter():
    b = baseline_budget(Scenario())
    for fn, kw in [(heartbeat_detection, "detect_min"), (hot_spare_restart, "reschedule_min"), (reload_from_memory, "reload_min")]:
        with pytest.raises(ValueError, match=kw):
            fn(b, **{kw: -1.0})
    with pytest.raises(ValueError, match="write_cost_min"):
        checkpoint_at_optimum(b, -1.0)
    with pytest.raises(ValueError, match="min_interval_min"):
        checkpoint_at_optimum(b, 0.1, -1.0)
    with pytest.raises(ValueError, match="n_gpus"):
        Scenario(n_gpus=0)
    with pytest.raises(ValueError, match="stage"):
        Lever("x", "lunch", "", "", lambda b: b)


# ----- ordering and the waterfall -----
def test_apply_levers_sequence():
    b = baseline_budget(Scenario())
    levers = default_levers(Scenario())
    seq = apply_levers(b, levers)
    assert len(seq) == len(levers) + 1 and seq[0] is b
    assert all(x.minutes_per_day >= y.minutes_per_day for x, y in zip(seq, seq[1:]))


def _fixed(name, stage, minutes_):
    return Lever(name, stage, "", "test", lambda b, s=stage, m=minutes_: b.with_stages(**{s: min(m, getattr(b.stages, s))}))


# a lever may not set the rewind to 0 or a subnormal (a zero interval with a write cost is not a budget,
# and write_cost * 1440 / 5e-324 overflows to inf)
_specs = st.tuples(st.sampled_from(STAGES), minutes).filter(lambda t: t[0] != "rewind" or t[1] >= 1e-3)


@settings(max_examples=40, deadline=None)
@given(budgets(), st.lists(_specs, min_size=1, max_size=5))
def test_order_by_saving_is_greedy(b, specs):
    levers = [_fixed(f"L{i}", s, m) for i, (s, m) in enumerate(specs)]
    ordered = order_by_saving(b, levers)
    assert sorted(lv.name for lv in ordered) == sorted(lv.name for lv in levers)
    current, remaining = b, list(levers)
    for lever in ordered:
        best = max(lv.saving(current) for lv in remaining)
        assert lever.saving(current) == pytest.approx(best, abs=1e-12)
        remaining.remove(lever)
        current = lever(current)


def test_order_by_saving_beats_every_order_at_each_step_on_defaults():
    b = baseline_budget(Scenario())
    levers = default_levers(Scenario())
    ordered = order_by_saving(b, levers)
    # "largest first": the first saving is the largest any single lever achieves
    assert ordered[0].saving(b) == pytest.approx(max(lv.saving(b) for lv in levers))
    # every order ends at the same budget (the stage levers commute), so only the path differs
    ends = {round(apply_levers(b, perm)[-1].minutes_per_day, 9) for perm in itertools.permutations(levers)}
    assert len(ends) == 1
    steps = waterfall(b, levers)
    savings = [s.saved_minutes_per_day for s in steps]
    assert savings == sorted(savings, reverse=True)
    assert sum(savings) == pytest.approx(b.minutes_per_day - steps[-1].after.minutes_per_day)
    assert {s.lever.stage for s in steps[:2]} == {"detect", "rewind"}  # rewind (with the writes it saves) and detection dominate


def test_order_ties_keep_input_order():
    b = baseline_budget(Scenario())
    a, c = _fixed("a", "detect", 0.0), _fixed("c", "detect", 0.0)
    assert [lv.name for lv in order_by_saving(b, [a, c])] == ["a", "c"]


def test_maths_module_imports_no_screen_or_torch():
    code = "import sys, course_lib.restart; bad = {'matplotlib', 'ipywidgets', 'torch'} & set(sys.modules); print(sorted(bad))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"


def test_plots_draw_the_waterfall():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from course_lib.plots.restart import stage_bar, waterfall_chart

    b = baseline_budget(Scenario())
    steps = waterfall(b, default_levers(Scenario()))
    ax = waterfall_chart(steps)
    heights = [p.get_height() for p in ax.patches]
    assert heights[0] == pytest.approx(100 * b.fraction_of_day)
    assert heights[1:-1] == pytest.approx([100 * s.saved_fraction_of_day for s in steps])
    assert heights[-1] == pytest.approx(100 * steps[-1].after.fraction_of_day)
    ax2 = stage_bar({"baseline": b, "after": steps[-1].after})
    assert sum(p.get_width() for p in ax2.patches) == pytest.approx(b.minutes_per_day + steps[-1].after.minutes_per_day)
    with pytest.raises(ValueError, match="steps"):
        waterfall_chart([])
    plt.close("all")


# ----- what the mutation score found untested after the per-mode rewrite -----
def test_a_checkpoint_is_never_more_frequent_than_a_step():
    st_ = RestartStages(1.0, 1.0, 1.0, 0.25)
    ok = RestartBudget(2.0, st_, 0.01, step_min=0.5)  # rewind = half a step: allowed
    assert ok.interval_min == 0.5
    with pytest.raises(ValueError, match="stages.rewind must be >= step_min / 2"):
        RestartBudget(2.0, st_.replace(rewind=0.2499), 0.01, step_min=0.5)


def test_complete_model_loss_and_progress():
    from course_lib import interval as iv

    b = RestartBudget(2.0, RestartStages(1.0, 2.0, 0.5, 0.5), 0.001, latency_rewind_min=3.0)
    assert b.per_failure_restart_min == pytest.approx(3.5 + 3.0, rel=1e-15, abs=0)
    assert b.loss_fraction == pytest.approx(iv.complete_loss_fraction(1.0, 0.001, MINUTES_PER_DAY / 2, 6.5), rel=1e-15, abs=0)
    assert b.ettr_complete == pytest.approx(1.0 - b.loss_fraction, rel=1e-15, abs=0)
    assert b.makes_progress
    edge = RestartBudget(MINUTES_PER_DAY / 10.0, RestartStages(10.0, 0.0, 0.0, 0.0))  # D + R equals the MTBF exactly
    assert not edge.makes_progress and edge.loss_fraction <= 1.0


def test_lever_needs_a_callable_and_the_lever_records_are_frozen():
    with pytest.raises(ValueError, match="function must be callable"):
        Lever("x", "detect", "", "", None)
    lv = default_levers(Scenario(), modes=False)[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        lv.name = "y"
    with pytest.raises(dataclasses.FrozenInstanceError):
        baseline_budget(Scenario()).failures_per_day = 3.0


def test_the_reload_lever_describes_the_shard_in_gb():
    s = Scenario()
    desc = default_levers(s, modes=False)[2].description
    assert f"{s.shard_bytes / 1e9:.2g} GB shard" in desc


def test_default_levers_are_the_per_mode_ones():
    s = Scenario()
    b = baseline_budget(s)
    modal = waterfall(b, default_levers(s))[-1].after
    assert modal == waterfall(b, default_levers(s, modes=True))[-1].after
    assert modal != waterfall(b, default_levers(s, modes=False))[-1].after
    assert modal.step_min > 0  # the per-mode checkpoint lever carries the step bound


def test_snapshot_checkpoint_bounds_and_shares():
    b = RestartBudget(2.0, RestartStages(1.0, 1.0, 1.0, 5.0))
    m = b.mtbf_min
    full = rs.snapshot_checkpoint(b, 0.001, 0.0, 0.1, 0.0)
    assert full.interval_min == pytest.approx(math.sqrt(2 * 0.001 * m), rel=1e-12, abs=0)
    half = rs.snapshot_checkpoint(b, 0.001, 0.0, 0.1, 0.0, snapshot_share=0.5)
    assert half.interval_min == pytest.approx(math.sqrt(2 * 0.001 * m / 0.5), rel=1e-12, abs=0)
    bound = rs.snapshot_checkpoint(b, 0.001, 5.0, 0.1, 0.0)
    assert bound.interval_min == 5.0
    step = rs.snapshot_checkpoint(b, 0.0, 0.0, 0.4, 2.0)  # no write cost: one checkpoint a step
    assert step.interval_min == 0.4 and step.write_cost_min == 0.0 and step.latency_rewind_min == 2.0
    free = rs.snapshot_checkpoint(b, 0.0, 0.0, 0.0, 0.0)
    assert free.interval_min == 0.0 and free.write_cost_min == 0.0
