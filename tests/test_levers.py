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


def _single_savings_by_hand(s: Scenario) -> dict:
    """Minutes a day each lever saves from the baseline, by the closed forms of the day model (restart.py's module doc).

    The baseline's interval tau_0 = 10 min is given (no stage lever moves it) and writes delta_0 (the synchronous write), so
    w_0 = tau_0 / (tau_0 + delta_0) and a lever that cuts the mean restart by dX saves lambda dX w_0 exactly; the spare also
    costs T i (1 - rho_1) w_0 (loss = 1 - (1 - i)(1 - rho) w). The in-memory checkpoint changes the write to delta_1 and the
    interval to tau_1 = -delta_1 + sqrt(delta_1^2 + 2 delta_1 (M - A_1) / s_1) (the optimum of (1 - lambda X / T) tau / (tau +
    delta), A_1 = X at tau = 0 with the SDC still rewinding tau_0 / 2 + its latency, s_1 = 1 - the SDC share), never below
    max(step, snapshot, persist copy).
    """
    T, lam, sh = 1440.0, s.failures_per_day, dict(zip(("crash", "hang", "host_loss", "sdc"), s.modes.shares))
    tau0, d0 = s.checkpoint_interval_min, s.write_cost_min
    w0, x0 = tau0 / (tau0 + d0), s.minutes_per_restart
    base, after = s.detect_by_mode, s.detect_after_by_mode
    d_detect = sum(sh[k] * (base[k] - after[k]) for k in ("hang", "host_loss"))
    d_reload = (1 - sh["sdc"]) * (s.reload_min - s.reload_after_min)  # peer copy: only the SDC still reads storage
    d_spare = max(s.reschedule_min - s.reschedule_after_min, 0.0)
    i = 0.0 if s.modes.spares_pooled else s.modes.spare_gpus / (s.n_gpus + s.modes.spare_gpus)  # 8 / 4,104; pooled: free
    s1, d1 = 1 - sh["sdc"], s.snapshot_cost_min
    a1 = x0 - s1 * tau0 / 2
    tau1 = max(-d1 + math.sqrt(d1 ** 2 + 2 * d1 * (T / lam - a1) / s1), s.step_min, d1, d0)
    x1 = a1 + s1 * tau1 / 2
    baseline = T * (1 - (1 - lam * x0 / T) * w0)
    return {"heartbeat detection": lam * d_detect * w0, "reload from memory": lam * d_reload * w0,
            "hot-spare restart": w0 * (lam * d_spare - T * i * (1 - lam * (x0 - d_spare) / T)),
            "in-memory checkpoint": baseline - T * (1 - (1 - lam * x1 / T) * tau1 / (tau1 + d1))}


@pytest.mark.parametrize("scenario, pulled_names", [
    (Scenario(), ["in-memory checkpoint", "heartbeat detection", "reload from memory"]),
    (Scenario().replace(n_gpus=16384), ["in-memory checkpoint", "heartbeat detection", "reload from memory", "hot-spare restart"]),
    (Scenario().replace(spares_pooled=True), ["in-memory checkpoint", "heartbeat detection", "reload from memory", "hot-spare restart"]),
])
def test_waterfall_is_largest_first_and_pulls_only_what_saves(scenario, pulled_names):
    """The greedy order against a brute force over every order of every subset of the levers.

    The property: the four levers commute. Detection, reschedule and reload each set a stage to min(now, its target), the
    spare sets the idle share to max(now, its own), and the in-memory checkpoint keeps the persisted interval at the
    baseline's (no stage lever moves a given interval), after which every lever chooses the interval again at its optimum
    for the day as it then is. So the day after a set of levers is the same in every order (checked on every permutation of
    every subset, each applied by the levers' own transformations); the greedy's final day is then the brute force's for
    every order of the levers it pulls, and here, where a lever's saving has the same sign from every day, it is the best
    day of any subset. At each step the greedy lever is the one that drops the day most among the orders sharing its
    prefix, and the first is the lever with the largest single saving by the closed forms of _single_savings_by_hand.
    """
    b = baseline_budget(scenario)
    levers = lv.default_levers(scenario)
    pulled, left = lv.order_by_saving(b, levers)
    assert [x.name for x in pulled] == pulled_names
    assert [x.name for x, _ in left] == [x.name for x in levers if x.name not in pulled_names]
    steps = lv.waterfall(b, levers)
    savings = [x.saved_minutes_per_day for x in steps]
    assert savings == sorted(savings, reverse=True) and all(v > 0 for v in savings)
    # brute force: every order of every subset, each day by the budget's own transformations
    final = {}
    for r in range(len(levers) + 1):
        for order in itertools.permutations(levers, r):
            days = lv.apply_levers(b, order)
            final.setdefault(frozenset(x.name for x in order), []).append(days[-1].minutes_per_day)
    for subset, ends in final.items():
        assert max(ends) == pytest.approx(min(ends), rel=1e-9), subset  # the levers commute
    greedy_end = steps[-1].after.minutes_per_day
    assert final[frozenset(pulled_names)] == pytest.approx([greedy_end] * len(final[frozenset(pulled_names)]), rel=1e-9)
    assert greedy_end == pytest.approx(min(min(v) for v in final.values()), rel=1e-9)  # no subset, no order does better
    for subset_left, saving in left:  # a lever left out would add to the day what the brute force says
        with_it = final[frozenset(pulled_names) | {subset_left.name}][0]
        assert saving == pytest.approx(greedy_end - with_it, rel=1e-9) and saving < 0
    # at each step, among the orders that share the greedy's prefix, the greedy's next lever drops the day most
    for k, step in enumerate(steps):
        drops = {}
        for order in itertools.permutations(levers, k + 1):
            if [x.name for x in order[:k]] == pulled_names[:k]:
                days = lv.apply_levers(b, order)
                drops[order[k].name] = days[k].minutes_per_day - days[k + 1].minutes_per_day
        assert max(drops, key=drops.get) == step.lever.name and step.saved_minutes_per_day == pytest.approx(max(drops.values()))
    # the first lever: the largest single saving, by the closed forms; and each closed form is the brute force's first drop
    by_hand = _single_savings_by_hand(scenario)
    assert max(by_hand, key=by_hand.get) == pulled_names[0] == steps[0].lever.name
    for lever in levers:
        first = lv.apply_levers(b, [lever])
        assert first[0].minutes_per_day - first[1].minutes_per_day == pytest.approx(by_hand[lever.name], rel=1e-9), lever.name
        assert lever.saving(b) == pytest.approx(by_hand[lever.name], rel=1e-9), lever.name  # Lever.saving: the same minutes
    assert steps[0].saved_minutes_per_day == pytest.approx(by_hand[pulled_names[0]], rel=1e-9)


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


# ---------------------------------------------------------------- issue 29: each lever's number by another route
def test_a_lever_is_a_frozen_record_that_needs_a_callable():
    lever = lv.default_levers(Scenario())[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        lever.name = "x"  # type: ignore[misc]
    with pytest.raises(ValueError, match="function must be callable"):
        lv.Lever("x", "detect", "d", "s", 3)
    with pytest.raises(ValueError, match="stage"):
        lv.Lever("x", "lunch", "d", "s", lambda b: b)


def test_the_durable_checkpoint_at_its_optimum_is_the_persisted_one():
    s = Scenario()
    b = baseline_budget(s)
    out = lv.checkpoint_at_optimum(b, s.write_cost_min)  # not in memory: the new checkpoint is the persisted one
    assert out.persisted_interval_min is None and out.interval_bound_min == s.step_min  # no bound given: one step
    assert out.rewind_by_mode()["sdc"] == pytest.approx(out.interval_min / 2 + s.modes.sdc_latency_min)
    # Young's first order with every failure restoring it: sqrt(2 delta M)
    assert out.interval_min == pytest.approx(math.sqrt(2 * s.write_cost_min * b.mtbf_min), rel=0.05)
    for tau in (out.interval_min * 0.9, out.interval_min * 1.1):
        assert dataclasses.replace(out, interval_min=tau).minutes_per_day >= out.minutes_per_day


def test_the_interval_is_never_below_a_step_nor_the_bound_given():
    s = Scenario()
    b = baseline_budget(s)
    free = lv.checkpoint_at_optimum(b, 1e-7)  # Young alone would give sqrt(2e-7 x 720) = 0.017 min, below a step
    assert math.sqrt(2e-7 * b.mtbf_min) < s.step_min and free.interval_min == pytest.approx(s.step_min, rel=1e-12)
    bound = lv.in_memory_checkpoint(b, s.snapshot_cost_min, min_interval_min=2.0)  # a bound above the optimum binds
    assert bound.interval_min == pytest.approx(2.0, rel=1e-12) and bound.interval_bound_min == 2.0


def test_a_second_in_memory_checkpoint_keeps_the_first_persisted_interval():
    s = Scenario()
    once = lv.in_memory_checkpoint(baseline_budget(s), s.snapshot_cost_min)
    twice = lv.in_memory_checkpoint(once, s.snapshot_cost_min)
    assert once.interval_min < s.checkpoint_interval_min
    assert twice.persisted_interval_min == once.persisted_interval_min == s.checkpoint_interval_min


def test_every_lever_reoptimises_an_optimised_interval():
    s = Scenario()
    b = baseline_budget(s)
    snap = lv.in_memory_checkpoint(b, s.snapshot_cost_min, s.step_min)
    levers = lv.default_levers(s)
    for lever in levers[:3]:
        out = lever(snap)
        assert out.interval_bound_min == snap.interval_bound_min
        for tau in (out.interval_min * 0.95, out.interval_min * 1.05):  # any other interval above the bound loses more
            assert dataclasses.replace(out, interval_min=tau).minutes_per_day > out.minutes_per_day
    # faster detection moves the MTBF-independent cost, not the failures: the first-order optimum stays put
    share = 1 - s.modes.share("sdc")
    assert levers[0](snap).interval_min == pytest.approx(math.sqrt(2 * s.snapshot_cost_min * b.mtbf_min / share), rel=0.02)


def test_idle_share_is_the_spares_share_of_the_gpus_paid_for():
    assert lv.idle_share(8, 4096) == pytest.approx(8 / 4104, rel=1e-15)
    assert lv.idle_share(8, 4096, pooled=True) == 0.0 and lv.idle_share(0, 4096) == 0.0
    with pytest.raises(ValueError, match="job_gpus"):
        lv.idle_share(8, 0)


def test_stage_levers_take_a_target_per_draw():
    s = Scenario().replace(peer_copy=False)
    b = baseline_budget(s)
    targets = np.array([0.001, 10.0])  # one draw below today's reload, one above
    by = {m.mode: m for m in lv.reload_from_memory(b, targets).modes}
    assert np.array_equal(by["crash"].reload, [0.001, s.reload_min])  # never slower than now
    assert by["sdc"].reload == s.reload_min  # the persisted modes read storage whatever the draw
    one = {m.mode: m for m in lv.reload_from_memory(b, 0.001).modes}
    assert type(one["crash"].reload) is float  # a scalar stays a plain number


def test_lever_descriptions_state_the_binding_gap_and_bound():
    s = Scenario()
    detect, _, _, snap = lv.default_levers(s)
    step_s = f"{60 * s.step_min:.3g} s"  # 22.1 s: the step is the longest gap and the interval's bound here
    assert s.step_min > s.snapshot_cost_min and f"the longest gap, {step_s};" in detect.description
    assert f"never below {step_s} (a step)" in snap.description
    slow = Scenario().replace(write_cost_min=2.0, snapshot_cost_min=0.5)  # a 30 s snapshot, a 120 s persist copy
    detect, _, _, snap = lv.default_levers(slow)
    assert "the longest gap, 30 s;" in detect.description and "never below 120 s (the persist copy)" in snap.description
    persist = Scenario().replace(write_cost_min=2.0)  # the persist copy alone above the snapshot's optimum: it binds
    assert lv.default_levers(persist)[3](baseline_budget(persist)).interval_min == pytest.approx(2.0, rel=1e-12)
    assert lv._s(0.5) == "30 s" and lv._s(0.1 / 60) == "0.1 s" and lv._s(0.05 / 60) == "50 ms"


def test_all_levers_day_has_every_stage_lever_pulled():
    s = Scenario()
    day = lv.all_levers_day(s)
    after = s.detect_after_by_mode
    for m in day.modes:
        assert m.detect == pytest.approx(after[m.mode]) and m.reschedule == pytest.approx(s.reschedule_after_min)
        assert m.reload == pytest.approx(s.reload_min if m.persisted else s.reload_after_min)
    assert day.write_cost_min == s.snapshot_cost_min and day.persisted_interval_min == s.checkpoint_interval_min
    assert day.idle_share == pytest.approx(lv.idle_share(s.modes.spare_gpus, s.n_gpus))


def test_levers_built_twice_are_equal_and_ties_keep_the_input_order():
    s = Scenario()
    assert lv.default_levers(s) == lv.default_levers(s)  # the function (a new partial each time) is not compared
    b = baseline_budget(s)
    first = lv.default_levers(s)[0]
    twin = lv.Lever("the same lever again", first.stage, first.description, first.source, first.function)
    pulled, left = lv.order_by_saving(b, [first, twin])
    assert [x.name for x in pulled] == [first.name] and [x.name for x, _ in left] == [twin.name]
    assert left[0][1] == pytest.approx(0.0, abs=1e-12)  # once pulled, the same lever saves nothing more
    pulled, _ = lv.order_by_saving(b, [twin, first])
    assert pulled[0].name == twin.name


def test_a_waterfall_step_saves_its_minutes_as_a_share_of_the_day():
    s = Scenario()
    steps = lv.waterfall(baseline_budget(s), lv.default_levers(s))
    for step in steps:
        assert step.saved_fraction_of_day == pytest.approx(step.saved_minutes_per_day / 1440, rel=1e-9)
        assert step.saved_fraction_of_day > 0
    with pytest.raises(dataclasses.FrozenInstanceError):
        steps[0].lever = None  # type: ignore[misc]


def test_a_rate_lever_halving_the_failures_saves_half_the_restarts():
    b = baseline_budget(Scenario())  # a given interval: kept, so only the writes move (a little more time trains)
    half = lv.RateLever("half", 0.5, "d", "s")
    assert half.saving(b) == pytest.approx(b.restart_minutes_per_day / 2, abs=0.1) and half.saving(b) < b.restart_minutes_per_day / 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        half.factor = 0.1  # type: ignore[misc]
    for bad in (1.5, 1 + 1e-9):
        with pytest.raises(ValueError, match="factor must be a finite number in"):
            lv.RateLever("more", bad, "d", "s")
    assert lv.RateLever("none", 1.0, "d", "s").saving(b) == 0.0


def test_the_hot_spare_charges_each_draws_idle_share():
    b = baseline_budget(Scenario())
    shares = np.array([0.001, 0.01])
    out = lv.hot_spare_restart(b, 2.5, idle_share=shares)
    assert np.array_equal(out.idle_share, shares)  # never below the day's own (0 at the baseline)
    assert lv.hot_spare_restart(b, 2.5, idle_share=0.002).idle_share == 0.002
    assert lv.idle_share(1, 4096) == pytest.approx(1 / 4097, rel=1e-15)


def test_the_lemon_lever_says_removal_bought_nothing_where_the_trace_measured_no_gain():
    m = lv.measured_lemon_removal()
    assert m.factor > 1 and not m.gained  # x 1.02 out of sample: the second half's rate did not fall
    lemon = lv.rate_levers(Scenario())[0]
    assert "so removal bought nothing and the lever's factor is clamped at x 1.00" in lemon.description
    assert lemon.factor == 1.0
    assert lv._s(0.15 / 60) == "0.15 s" and lv._s(0.099 / 60) == "99 ms"


def test_the_chosen_interval_is_the_day_models_minimum_found_numerically():
    from scipy.optimize import minimize_scalar

    s = Scenario()
    b = baseline_budget(s)
    snap = lv.in_memory_checkpoint(b, s.snapshot_cost_min, s.step_min)
    days = [lv.checkpoint_at_optimum(b, s.write_cost_min), snap] + [lever(snap) for lever in lv.default_levers(s)[:3]]
    for day in days:
        best = minimize_scalar(lambda tau: dataclasses.replace(day, interval_min=tau).minutes_per_day,
                               bounds=(day.interval_bound_min, 30.0), method="bounded", options={"xatol": 1e-10})
        assert day.interval_min == pytest.approx(best.x, rel=1e-5)  # a wrong fixed cost moves it by 7e-4
