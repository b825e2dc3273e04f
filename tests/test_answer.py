"""course_lib.answer: the whole answer for one fleet, from the one day model."""
from __future__ import annotations

import json
import re

import pytest

from course_lib import MINUTES_PER_DAY, Scenario
from course_lib import levers as lv
from course_lib import restart as rs
from course_lib.answer import answer


def test_default_answer_is_the_course_question():
    a = answer()
    s = Scenario()
    assert a.n_gpus == s.n_gpus
    assert a.failures_per_day == pytest.approx(s.failures_per_day)
    assert a.baseline_restart_fraction == pytest.approx(30 / 1440)  # the question's 2.08 %: two a day x 15 minutes
    assert a.baseline.stages == rs.baseline_stages(s)
    ref = lv.waterfall(rs.baseline_budget(s), lv.default_levers(s))
    assert a.order == tuple(x.lever.name for x in ref) == ("in-memory checkpoint", "heartbeat detection", "reload from memory")
    assert a.after.minutes_per_day == pytest.approx(ref[-1].after.minutes_per_day, rel=1e-12)
    assert 0.5 < a.interval_after_min < 1.5 < a.interval_before_min
    # the spare: its net saving is negative here, so it is left out, with the reschedule at which it would pay
    assert [x.name for x, _ in a.left_out] == ["hot-spare restart"] and a.spare.net < 0 and not a.spare.pulled
    assert a.spare.reschedule_min < a.spare.break_even_min < a.spare.requeue_low_min


@pytest.mark.parametrize("kwargs", [dict(), dict(n_gpus=16384, rate_per_gpu_day=8.1e-4),
                                    dict(failures_per_day=5, detect_min=1, reschedule_min=4, reload_min=3, checkpoint_interval_min=30,
                                         write_cost_min=0.5, shard_gb=4.0)])
def test_answer_is_consistent(kwargs):
    a = answer(Scenario.from_params(**kwargs))
    assert sum(a.savings.values()) == pytest.approx(a.baseline.minutes_per_day - a.after.minutes_per_day)
    assert list(a.savings.values()) == sorted(a.savings.values(), reverse=True)  # largest first
    assert all(v > 0 for v in a.savings.values()) and all(s <= 0 for _, s in a.left_out)
    assert a.after.floor_minutes_per_day <= a.after.minutes_per_day <= a.baseline.minutes_per_day
    idle = a.after.idle_minutes_per_day  # an idle spare costs the same with fewer failures
    for lever, g in a.fewer:
        assert g.floor_minutes_per_day - idle == pytest.approx(lever.factor * (a.after.floor_minutes_per_day - idle), rel=1e-9)
    rows = {r.key: r for r in a.rows()}
    assert rows["baseline_loss_pct"].value == pytest.approx(100 * a.baseline_restart_fraction)
    assert rows["baseline_total_pct"].value == pytest.approx(100 * a.baseline.loss_fraction)
    assert rows["baseline_write_minutes_per_day"].value + rows["baseline_minutes_per_day"].value == pytest.approx(
        rows["baseline_total_minutes_per_day"].value)
    assert rows["floor_pct"].value == pytest.approx(100 * a.after.floor_fraction)
    assert rows["after_levers_pct"].value == pytest.approx(100 * a.after.loss_fraction)
    assert len(rows) == len(a.rows())  # keys are unique
    d = json.loads(a.to_json())
    assert d["floor_minutes_per_day"]["value"] == pytest.approx(a.after.floor_minutes_per_day)
    assert d["text"] == a.text
    # the range holds its point value (issue 24: the uncertainty is the fleet's own count)
    assert a.spread.loss.contains(a.after.loss_fraction) and a.spread.floor.contains(a.after.floor_fraction)


def test_inputs_flow_through():
    a = answer(Scenario.from_params(n_gpus=8192), spread_draws=0)
    assert a.failures_per_day == pytest.approx(2 * Scenario().failures_per_day)  # per-GPU rate kept
    b = answer(Scenario.from_params(failures_per_day=3, n_gpus=1000), spread_draws=0)
    assert b.rate_per_gpu_day == pytest.approx(3e-3)
    c = answer(Scenario.from_params(detect_min=1, reschedule_min=2, reload_min=3, checkpoint_interval_min=8), spread_draws=0)
    assert c.baseline.stages.detect == 1 and c.baseline.stages.reschedule == 2
    d = answer(Scenario.from_params(shard_gb=3.3), spread_draws=0)
    assert d.snapshot_cost_min == pytest.approx(3.3 / 55 / 60, rel=1e-12, abs=0)
    e = answer(Scenario.from_params(sdc_latency_min=120, hang_share=0.5), spread_draws=0)
    assert e.scenario.modes.sdc_latency_min == 120 and e.scenario.modes.share("hang") == 0.5
    assert e.after.floor_minutes_per_day > answer(spread_draws=0).after.floor_minutes_per_day


def test_text_states_the_numbers_and_they_add_up():
    a = answer()
    t = a.text
    _b, f = a.baseline, a.after
    for fragment in ("2.00 a day x 15.0 min = 30.0 min a day", f"{a.baseline_restart_fraction:.2%}",
                     f"{a.interval_after_min:.2f} min", f"{f.floor_minutes_per_day:.2f} min a day", f"{f.loss_fraction:.3%}",
                     "4,096-GPU", "90 % range", "dominates", "First I would measure", "break-even" if False else "pays only once"):
        assert fragment in t, fragment
    assert "\n" not in t
    for line in re.findall(r"((?:[0-9]+\.[0-9]+ \+ )+[0-9]+\.[0-9]+ = [0-9]+\.[0-9]+)", t):
        *terms, total = (float(x) for x in re.findall(r"[0-9]+\.[0-9]+", line))
        assert sum(terms) == pytest.approx(total, abs=1e-9), line
    order = ", ".join(a.order)
    assert ", ".join(x.split(" ", 2)[0] for x in []) == ""  # (the order is the answer's: tests/test_docs.py compares every copy)
    assert order.split(", ")[0] in t


@pytest.mark.parametrize("kwargs, name", [
    (dict(n_gpus=0), "n_gpus"), (dict(n_gpus=2.5), "n_gpus"), (dict(rate_per_gpu_day=-1e-4), "rate_per_gpu_day"),
    (dict(failures_per_day=0), "failures_per_day"), (dict(detect_min=-1), "detect_min"),
    (dict(checkpoint_interval_min=0), "interval_min"), (dict(write_cost_min=0), "write_cost_min"),
    (dict(shard_gb=float("nan")), "shard_gb"), (dict(rate_per_gpu_day=1e-4, failures_per_day=2), "in one form"),
    (dict(observed_days=0), "observed_days"), (dict(hang_share=1.5), "hang_share"), (dict(groups=0), "groups"),
])
def test_bad_inputs_name_the_parameter(kwargs, name):
    with pytest.raises(ValueError, match=name):
        answer(Scenario.from_params(**kwargs))


def test_article_before_the_fleet_size():
    assert answer(Scenario.from_params(n_gpus=8192), spread_draws=0).text.startswith("An 8,192-GPU job")
    assert answer(Scenario.from_params(n_gpus=11000), spread_draws=0).text.startswith("An 11,000-GPU job")
    assert answer(Scenario.from_params(n_gpus=1800), spread_draws=0).text.startswith("A 1,800-GPU job")
    assert answer(spread_draws=0).text.startswith("A 4,096-GPU job")


def test_lever_table_lists_every_lever_in_order_with_what_is_left():
    ans = answer(spread_draws=0)
    lines = ans.lever_table().splitlines()
    assert len(lines) == 2 + len(ans.steps) + len(ans.left_out)
    assert lines[1].startswith("baseline") and f"{ans.baseline.minutes_per_day:.2f}" in lines[1]
    for line, step in zip(lines[2:], ans.steps):
        assert line.startswith(f"+ {step.lever.name}")
        assert f"{step.saved_minutes_per_day:.2f}" in line and f"{step.after.minutes_per_day:.2f}" in line
    assert "left out" in lines[-1]
    end = lines[0].index("saves min/day") + len("saves min/day")  # every saving ends under its header (the site reads it as a table)
    for line, saving in zip(lines[2:], [st.saved_minutes_per_day for st in ans.steps] + [v for _, v in ans.left_out]):
        assert line.index(f"{saving:.2f}") + len(f"{saving:.2f}") == end, line


def test_reported_ettrs_sit_below_the_restart_only_model():
    from course_lib.answer import reported_ettr

    rows = reported_ettr()
    assert [r.run for r in rows] == ["Llama 3 405B", "MegaScale", "ByteRobust"]
    for r in rows:
        assert r.baseline < r.after_levers < 1 and r.reported <= r.after_levers
        assert r.other_causes_at_most == pytest.approx(r.after_levers - r.reported)
    worse = reported_ettr(Scenario().replace(rate_per_gpu_day=2 * Scenario().rate_per_gpu_day))
    assert all(w.after_levers < r.after_levers for w, r in zip(worse, rows))


def test_custom_mode_inputs_flow_through_levers_and_range():
    from course_lib import uncertainty as un

    s = Scenario().replace(peer_copy=False, hang_timeout_min=5.0)
    a, d = answer(s), answer()
    assert a.after.floor_minutes_per_day > d.after.floor_minutes_per_day
    point = un.floor_range(s, n=50, vary=())  # no input drawn: the range is the point model
    assert point.floor.low == pytest.approx(a.after.floor_fraction) == pytest.approx(point.floor.high)
    with pytest.raises(ValueError, match="vary"):
        un.floor_range(vary=("weather",))


def test_range_comes_from_the_fleets_own_count():
    from course_lib import uncertainty as un

    r = un.floor_range(Scenario(), vary=("rate",))
    assert r.count == pytest.approx(60) and r.days == 30
    longer = un.floor_range(Scenario().replace(observed_days=300), vary=("rate",))
    assert longer.floor.high - longer.floor.low < r.floor.high - r.floor.low  # ten times the count: a narrower range
    shifted = un.floor_range(Scenario(), shifts=True)
    assert set(shifted.shifts) == set(un.INPUTS) and "percentage points" in shifted.shift_sentence


def test_hot_spare_follows_from_the_course_numbers():
    small, large = answer(spread_draws=0), answer(Scenario().replace(n_gpus=16384), spread_draws=0)
    assert small.spare.net < 0 < large.spare.net  # 8 idle GPUs weigh 4x more at 4,096
    assert "do not keep one here" in small.text and "so keep it" in large.text
    assert "hot-spare restart" in large.order and "hot-spare restart" not in small.order
    pooled = answer(Scenario().replace(spares_pooled=True), spread_draws=0)
    assert "hot-spare restart" in pooled.order and pooled.spare.cost == 0


@pytest.mark.parametrize("kwargs", [dict(n_gpus=131_072, rate_per_gpu_day=8e-4), dict(n_gpus=1_000_000), dict(rate_per_gpu_day=10)])
def test_no_number_above_the_day_at_any_scale(kwargs):
    a = answer(Scenario().replace(**kwargs), spread_draws=0)
    rows = {r.key: r for r in a.rows()}
    for key, r in rows.items():
        if r.unit == "% of the day":
            assert r.value <= 100 + 1e-9, key
        if r.unit == "min/day":
            assert r.value <= MINUTES_PER_DAY + 1e-9, key
    for pct in re.findall(r"([0-9]+(?:\.[0-9]+)?) ?%", a.text):
        assert float(pct) <= 100 + 1e-9, a.text
    assert f"{a.after.loss_fraction:.2%}" in a.text  # the sentence's number is the table's
