"""course_lib.answer: the whole answer for one fleet agrees with the modules it is built from."""
from __future__ import annotations

import json
import math

import pytest

from course_lib import MINUTES_PER_DAY, Scenario
from course_lib import restart as rs
from course_lib.answer import answer


def test_default_answer_is_the_course_question():
    a = answer()
    s = Scenario()
    assert a.n_gpus == s.n_gpus
    assert a.failures_per_day == pytest.approx(s.failures_per_day)
    assert a.baseline_restart_fraction == pytest.approx(s.loss_fraction)  # the question's 2.08 %: restarts only
    assert a.baseline.fraction_of_day == pytest.approx(s.loss_fraction + s.write_before_min / s.checkpoint_interval_min)  # + writes
    assert a.baseline.stages == rs.baseline_stages(s)
    # the stage levers agree with notebook 03's; the interval lever is at the snapshot's optimum
    ref = rs.waterfall(rs.baseline_budget(s), rs.default_levers(s, modes=True))[-1].after  # the per-mode levers (issue 12)
    assert a.after.stages.detect == ref.stages.detect
    assert a.after.stages.reschedule == ref.stages.reschedule
    assert a.after.stages.reload == pytest.approx(ref.stages.reload)
    assert a.after_levers_minutes_per_day == pytest.approx(ref.minutes_per_day, rel=1e-9)
    # the in-memory checkpoint turns the interval into about a minute
    assert 0.5 < a.interval_after_min < 1.5 < a.interval_before_min
    from course_lib.modes import ModeInputs

    share = 1 - ModeInputs().share("sdc")  # an SDC does not restore from the snapshot
    assert a.interval_after_min == pytest.approx(math.sqrt(2 * a.snapshot_cost_min * a.baseline.mtbf_min / share))


@pytest.mark.parametrize("kwargs", [dict(), dict(n_gpus=16384, rate_per_gpu_day=8.1e-4),
                                    dict(failures_per_day=5, detect_min=1, reschedule_min=4, reload_min=3, checkpoint_interval_min=30,
                                         write_cost_min=0.5, state_gb_per_gpu=4.0)])
def test_answer_is_consistent(kwargs):
    a = answer(Scenario.from_params(**kwargs))
    # the waterfall's last budget is the floor's
    assert a.after.minutes_per_day == pytest.approx(a.after.minutes_per_day, rel=1e-12)
    assert sum(a.savings.values()) == pytest.approx(a.baseline.minutes_per_day - a.after.minutes_per_day)
    assert list(a.savings.values()) == sorted(a.savings.values(), reverse=True)  # largest first
    assert a.after.floor_minutes_per_day == pytest.approx(
        a.failures_per_day * (a.after.stages.detect + a.after.stages.reschedule + a.after.stages.reload
                              + a.after.step_min / 2 + a.after.latency_rewind_min))  # half a step and the SDC rewind (issue 12)
    assert a.after.floor_minutes_per_day < a.after.minutes_per_day < a.baseline.minutes_per_day
    assert a.interval_before_min == pytest.approx(math.sqrt(2 * a.write_cost_before_min * MINUTES_PER_DAY / a.failures_per_day))
    for lever, g in a.fewer:
        assert g.floor_minutes_per_day == pytest.approx(lever.factor * a.after.floor_minutes_per_day)
    rows = {r.key: r for r in a.rows()}
    assert rows["baseline_loss_pct"].value == pytest.approx(100 * a.baseline_restart_fraction)
    assert rows["baseline_total_pct"].value == pytest.approx(100 * a.baseline.fraction_of_day)
    assert rows["baseline_write_minutes_per_day"].value + rows["baseline_minutes_per_day"].value == pytest.approx(rows["baseline_total_minutes_per_day"].value)
    assert rows["floor_pct"].value == pytest.approx(100 * a.after.floor_fraction)
    assert rows["after_levers_pct"].value == pytest.approx(100 * a.after.fraction_of_day)
    assert rows["interval_after_min"].value == a.interval_after_min
    assert len(rows) == len(a.rows())  # keys are unique
    d = json.loads(a.to_json())
    assert d["floor_minutes_per_day"]["value"] == pytest.approx(a.after.floor_minutes_per_day)
    assert d["text"] == a.text


def test_inputs_flow_through():
    a = answer(Scenario.from_params(n_gpus=8192))
    assert a.failures_per_day == pytest.approx(2 * Scenario().failures_per_day)  # per-GPU rate kept
    b = answer(Scenario.from_params(failures_per_day=3, n_gpus=1000))
    assert b.rate_per_gpu_day == pytest.approx(3e-3)
    c = answer(Scenario.from_params(detect_min=1, reschedule_min=2, reload_min=3, checkpoint_interval_min=8))
    assert c.baseline.stages == rs.RestartStages(1, 2, 3, 4)
    d = answer(Scenario.from_params(state_gb_per_gpu=3.3))
    assert d.snapshot_cost_min == pytest.approx(3.3 / 55 / 60, rel=1e-12, abs=0)  # 3.3 GB at the 55 GB/s snapshot path
    e = answer(Scenario.from_params(detect_after_min=0.5, reschedule_after_min=2.0, reload_after_min=0.1, snapshot_cost_min=0.01),
               modes=False)  # the single-stage levers: floor lambda (D + R) exactly
    assert e.after.floor_minutes_per_day == pytest.approx(2 * (0.5 + 2.0 + 0.1))
    assert e.after.write_cost_min == 0.01


def test_text_states_the_numbers():
    a = answer()
    t = a.text
    for fragment in (f"{a.baseline.fraction_of_day:.2%}", f"{a.interval_after_min:.2f} min",
                     f"{a.after.floor_minutes_per_day:.2f} min", f"{a.after.loss_fraction:.3%}", "4,096-GPU",
                     f"{a.spread.floor.central:.2%}", "90 % range", "dominates", "No checkpoint lever moves lambda (D + R)"):
        assert fragment in t
    assert "\n" not in t and "only fewer failures" not in t.lower()


@pytest.mark.parametrize("kwargs, name", [
    (dict(n_gpus=0), "n_gpus"), (dict(n_gpus=2.5), "n_gpus"), (dict(rate_per_gpu_day=-1e-4), "rate_per_gpu_day"),
    (dict(failures_per_day=0), "failures_per_day"), (dict(detect_min=-1), "detect_min"),
    (dict(checkpoint_interval_min=0), "interval_min"), (dict(write_cost_min=0), "write_cost_min"),
    (dict(state_gb_per_gpu=float("nan")), "state_gb_per_gpu"), (dict(rate_per_gpu_day=1e-4, failures_per_day=2), "in one form"),
])
def test_bad_inputs_name_the_parameter(kwargs, name):
    with pytest.raises(ValueError, match=name):
        answer(Scenario.from_params(**kwargs))


def test_article_before_the_fleet_size():
    assert answer(Scenario.from_params(n_gpus=8192)).text.startswith("An 8,192-GPU job")
    assert answer(Scenario.from_params(n_gpus=11000)).text.startswith("An 11,000-GPU job")
    assert answer(Scenario.from_params(n_gpus=1800)).text.startswith("A 1,800-GPU job")
    assert answer().text.startswith("A 4,096-GPU job")


def test_lever_table_lists_every_lever_in_order_with_what_is_left():
    from course_lib.answer import answer as _answer

    ans = _answer()
    lines = ans.lever_table().splitlines()
    assert len(lines) == 2 + len(ans.steps)
    assert lines[1].startswith("baseline") and f"{ans.baseline.minutes_per_day:.2f}" in lines[1]
    for line, step in zip(lines[2:], ans.steps):
        assert line.startswith(f"+ {step.lever.name}")
        assert f"{step.saved_minutes_per_day:.2f}" in line and f"{step.after.minutes_per_day:.2f}" in line


def test_reported_ettrs_sit_below_the_restart_only_model():
    from course_lib.answer import reported_ettr

    rows = reported_ettr()
    assert [r.run for r in rows] == ["Llama 3 405B", "MegaScale", "ByteRobust"]
    for r in rows:
        # restarts and checkpoints only, after the levers: what the runs report (every cause) must not beat it
        assert r.baseline < r.after_levers < 1 and r.reported <= r.after_levers
        assert r.other_causes_at_most == pytest.approx(r.after_levers - r.reported)
        assert r.after_levers == pytest.approx(answer(Scenario().replace(n_gpus=r.gpus), spread_draws=0).after.ettr_complete)
    worse = reported_ettr(Scenario().replace(rate_per_gpu_day=2 * Scenario().rate_per_gpu_day))
    assert all(w.after_levers < r.after_levers for w, r in zip(worse, rows))


def test_custom_mode_inputs_flow_through_levers_and_range():
    import dataclasses
    from course_lib import modes as md
    from course_lib import uncertainty as un

    inp = dataclasses.replace(md.ModeInputs(), peer_copy=False, hang_timeout_min=5.0)
    a, d = answer(Scenario(), modes=inp), answer()
    assert a.after.floor_minutes_per_day > d.after.floor_minutes_per_day
    assert a.after.floor_minutes_per_day == pytest.approx(sum(md.per_mode_floor(Scenario(), inp).values()))
    point = un.floor_range(Scenario(), inp, n=50, vary=())  # no input drawn: the range is the point model
    assert point.floor.low == pytest.approx(a.after.floor_fraction) == pytest.approx(point.floor.high)
    assert "central value sits above the point value" in a.text
    with pytest.raises(ValueError, match="vary"):
        un.floor_range(vary=("weather",))


def test_hot_spare_is_judged_net_of_its_cost():
    small, large = answer(), answer(Scenario().replace(n_gpus=16384))
    assert small.hot_spare_net_minutes_per_day < 0 < large.hot_spare_net_minutes_per_day  # 8 idle GPUs weigh 4x more at 4,096
    assert "pooled" in small.text and "worth keeping" in large.text
