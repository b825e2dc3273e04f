"""course_lib.restart: one restart, the one day model, and the Scenario's baseline (notebook 03).

The properties the whole course rests on: the baseline reproduces the question exactly (two a day
x 15 min = 30 min, 2.08 %); the day model is lambda X + writes while the failures fit in the day,
never above 100 %; floor <= after the levers <= baseline at any scale (the grid up to 10^7 GPUs and
10^4 failures a day); the sentence's numbers are the table's; the interval's optimum is the
model's own (sympy).
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from course_lib import MINUTES_PER_DAY, Scenario
from course_lib import interval as iv
from course_lib.answer import answer
from course_lib.restart import (STAGES, RestartBudget, RestartStages, baseline_budget, baseline_stages, day_loss)

minutes = st.floats(min_value=0.0, max_value=120.0, allow_nan=False)
rates = st.floats(min_value=0.01, max_value=50.0, allow_nan=False)


@st.composite
def days(draw, write=True):
    stages = RestartStages(detect=draw(minutes), reschedule=draw(minutes), reload=draw(minutes),
                           rewind=draw(st.floats(min_value=0.01, max_value=120.0)))
    delta = draw(st.floats(min_value=0.0, max_value=5.0)) if write else 0.0
    return RestartBudget.single(draw(rates), stages, delta)


# ---------------------------------------------------------------- the baseline: the question's numbers
def test_baseline_reproduces_the_question_exactly():
    s = Scenario()
    b = baseline_budget(s)
    assert b.stages.total == pytest.approx(15.0, abs=1e-12)
    assert b.restart_minutes_per_day == pytest.approx(30.0, abs=1e-12)  # 2 a day x 15 min, exactly: no first-order approximation
    assert b.restart_minutes_per_day / MINUTES_PER_DAY == pytest.approx(30 / 1440, abs=1e-15)
    assert round(100 * s.loss_fraction, 2) == 2.08
    # the blocking writes are a separate term: a 1.36 s write every 10 minutes of training
    tau, delta = s.checkpoint_interval_min, s.write_cost_min
    assert b.write_minutes_per_day == pytest.approx((MINUTES_PER_DAY - 30) * delta / (tau + delta), rel=1e-12)
    assert b.minutes_per_day == pytest.approx(b.restart_minutes_per_day + b.write_minutes_per_day, rel=1e-12)


def test_baseline_stages_per_mode():
    s = Scenario()
    m = s.modes
    b = baseline_budget(s)
    by = {x.mode: x for x in b.modes}
    # a crash at the launcher's poll, a hang at NCCL's untuned timeout, a lost host at half a health check
    assert by["crash"].detect == pytest.approx(m.launcher_poll_min)
    assert by["hang"].detect == pytest.approx(m.untuned_hang_timeout_min + m.launcher_poll_min)
    assert by["host_loss"].detect == pytest.approx(m.health_check_min / 2)
    assert by["sdc"].latency == m.sdc_latency_min and by["sdc"].persisted
    assert all(x.reload == s.reload_min and x.reschedule == s.reschedule_min for x in b.modes)
    st_ = b.stages
    assert st_.detect == pytest.approx(s.detect_min)
    assert st_.rewind == pytest.approx(s.checkpoint_interval_min / 2 + m.share("sdc") * m.sdc_latency_min)
    assert st_.reschedule == pytest.approx(15 - st_.detect - st_.reload - st_.rewind)
    assert baseline_stages(s) == st_


def test_a_stage_given_keeps_the_others_and_moves_the_total():
    s = Scenario()
    t = s.replace(detect_min=1.0)
    assert t.reschedule_min == pytest.approx(s.reschedule_min)
    assert t.minutes_per_restart == pytest.approx(15 - s.detect_min + 1.0)
    assert all(v == 1.0 for v in t.detect_by_mode.values())
    u = s.replace(hang_share=0.9)  # a mode input that moves the baseline's detection keeps the reschedule
    assert u.reschedule_min == pytest.approx(s.reschedule_min) and u.minutes_per_restart > 15
    v = s.replace(minutes_per_restart=20)  # a new total alone re-splits the remainder
    assert v.reschedule_min == pytest.approx(s.reschedule_min + 5)
    with pytest.raises(ValueError, match="minutes_per_restart must be >= detect"):
        Scenario(checkpoint_interval_min=31)


# ---------------------------------------------------------------- the day model
@given(days())
def test_breakdown_sums_to_the_day(b):
    assert sum(b.breakdown().values()) == pytest.approx(b.minutes_per_day, rel=1e-9, abs=1e-9)
    assert b.minutes_per_day <= MINUTES_PER_DAY + 1e-9


@given(days())
def test_below_saturation_the_day_is_lambda_x_plus_the_writes(b):
    x = b.per_failure_min
    if b.failures_per_day * x < MINUTES_PER_DAY:
        assert b.restart_minutes_per_day == pytest.approx(b.failures_per_day * x, rel=1e-12)
        tau, delta = b.interval_min, b.write_cost_min
        writes = (MINUTES_PER_DAY - b.failures_per_day * x) * delta / (tau + delta)
        assert b.write_minutes_per_day == pytest.approx(writes, rel=1e-9, abs=1e-12)
    else:
        assert b.loss_fraction == 1.0 and not b.makes_progress


def test_day_loss_closed_form_and_arrays():
    assert day_loss(2.0, 15.0, 10.0, 0.0) == pytest.approx(30 / 1440)
    assert day_loss(2.0, 1440.0, 10.0, 1.0) == 1.0
    lam = np.array([1.0, 2.0, 1e4])
    out = day_loss(lam, 15.0, 10.0, 0.1, 0.01)
    expect = 1 - 0.99 * (1 - np.minimum(lam * 15 / 1440, 1)) * 10 / 10.1
    assert np.allclose(out, expect, rtol=1e-12)


def test_day_model_interval_optimum_is_the_closed_form_symbolically():
    import sympy as sp

    tau, delta, M, R, s = sp.symbols("tau delta M R s", positive=True)
    useful = (1 - (R + s * tau / 2) / M) * tau / (tau + delta)  # the day model's share trained
    roots = sp.solve(sp.diff(useful, tau), tau)
    (root,) = [r for r in roots if r.subs({delta: 1e-3, M: 720, R: 4, s: 1}).is_positive]
    assert sp.simplify(root - (-delta + sp.sqrt(delta**2 + 2 * delta * (M - R) / s))) == 0
    # and the library's function is that root, bounded below
    assert iv.best_interval(1e-3, 720.0, 4.0, 0.9) == pytest.approx(float(root.subs({delta: 1e-3, M: 720, R: 4, s: 0.9})))
    assert iv.best_interval(1e-3, 720.0, 4.0, 0.9, min_interval=5.0) == 5.0
    # Young's sqrt(2 delta M) to first order: sqrt(2 x 1e-6 x 1e4) = 0.1414
    assert iv.best_interval(1e-6, 1e4) == pytest.approx(0.1414214, rel=1e-3)


@given(st.floats(1e-5, 1.0), st.floats(10.0, 1e5), st.floats(0.0, 5.0), st.floats(0.05, 1.0))
def test_best_interval_is_the_minimum_of_the_day(delta, m, r, share):
    tau = iv.best_interval(delta, m, r, share)
    lam = MINUTES_PER_DAY / m

    def loss(t):
        x = r + share * t / 2
        return day_loss(lam, x, t, delta)

    for other in (tau * 0.8, tau * 1.25):
        assert loss(tau) <= loss(other) + 1e-15


def test_a_day_of_draws_is_the_day_of_each_draw():
    s = Scenario()
    b = baseline_budget(s)
    lam = np.array([1.0, 2.0, 5.0])
    many = b.with_failures_per_day(lam)
    for i, x in enumerate(lam):
        assert many.loss_fraction[i] == pytest.approx(b.with_failures_per_day(float(x)).loss_fraction, rel=1e-12)


def test_copies_and_rejections():
    b = baseline_budget(Scenario())
    assert b.with_stages(detect=0.5).stages.detect == 0.5
    assert b.with_stages(rewind=30).interval_min == 60
    with pytest.raises(ValueError, match="stage must be one of"):
        b.with_stages(warmup=1.0)
    with pytest.raises(ValueError, match="failures_per_day"):
        dataclasses.replace(b, failures_per_day=0.0)
    with pytest.raises(ValueError, match="shares must sum to 1"):
        dataclasses.replace(b, modes=b.modes[:2])
    with pytest.raises(ValueError, match="write_cost_min must be 0 when interval_min is 0"):
        dataclasses.replace(b, interval_min=0.0)
    for stage in STAGES:
        with pytest.raises(ValueError, match=stage):
            RestartStages(**{k: (-1.0 if k == stage else 1.0) for k in STAGES})


# ---------------------------------------------------------------- floor <= after <= baseline <= 100 %, at any scale
GRID_GPUS = [8, 1024, 4096, 131_072, 1_000_000, 10_000_000]
GRID_RATES = [1e-5, 4.9e-4, 8e-4, 1e-2, 10.0]


@pytest.mark.parametrize("n", GRID_GPUS)
@pytest.mark.parametrize("rate", GRID_RATES)
def test_one_model_orders_floor_after_and_baseline_at_any_scale(n, rate):
    s = Scenario().replace(n_gpus=n, rate_per_gpu_day=rate)
    if s.failures_per_day > 1e4:
        pytest.skip("beyond the grid's 10^4 failures a day")
    a = answer(s, spread_draws=0)
    b, f = a.baseline, a.after
    assert 0 <= f.floor_fraction <= f.loss_fraction + 1e-15
    assert f.loss_fraction <= b.loss_fraction + 1e-15 and b.loss_fraction <= 1.0
    for day in (b, f, f.floor_budget):
        assert 0 <= day.minutes_per_day <= MINUTES_PER_DAY + 1e-9
        assert all(v >= -1e-9 for v in day.breakdown().values())
    rows = {r.key: r.value for r in a.rows()}
    assert rows["after_levers_pct"] == pytest.approx(100 * f.loss_fraction) and rows["floor_pct"] <= rows["after_levers_pct"] + 1e-12
    assert rows["baseline_total_pct"] <= 100 + 1e-9 and rows["after_levers_minutes_per_day"] <= MINUTES_PER_DAY + 1e-9
    got = __import__("json").loads(a.to_json())  # the JSON is the table, row for row, and the sentence
    assert got["text"] == a.text and {k: v["value"] for k, v in got.items() if k != "text"} == pytest.approx(rows)
    text = a.text
    assert f"{f.loss_fraction:.2%}" in text or f"{f.loss_fraction:.3%}" in text  # the sentence's number is the table's
    assert f"{f.floor_fraction:.2%}" in text or f"{f.floor_fraction:.3%}" in text
    for pct in (float(x) for x in __import__("re").findall(r"([0-9]+(?:\.[0-9]+)?) ?%", text)):
        assert pct <= 100.0 + 1e-9, text


@given(st.floats(1.0, 1e7), st.floats(1e-3, 1e4))
def test_property_grid_up_to_ten_million_gpus_and_ten_thousand_failures_a_day(n, failures_per_day):
    s = Scenario().replace(n_gpus=int(n), failures_per_day=failures_per_day)
    a = answer(s, spread_draws=0)
    b, f = a.baseline, a.after
    assert f.floor_fraction <= f.loss_fraction + 1e-12 and f.loss_fraction <= b.loss_fraction + 1e-12 and b.loss_fraction <= 1.0
    assert max(b.minutes_per_day, f.minutes_per_day, f.floor_minutes_per_day) <= MINUTES_PER_DAY + 1e-9
    assert sum(t.minutes_per_day for t in a.floor_terms) == pytest.approx(f.floor_minutes_per_day, rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("changes", [
    {"interval_min": 3.0}, {"failures_per_day": 7, "write_cost_min": 0.5}, {"idle_share": 0.25},
    {"persisted_interval_min": 10.0, "interval_bound_min": 0.2},
    {"interval_min": np.array([1.0, 2.0]), "failures_per_day": np.array([0.5, 4.0])},
])
def test_the_fast_copy_is_the_dataclass_copy(changes):
    """Validated._evolve (the levers' copy) builds the record dataclasses.replace builds, field for field."""
    b = baseline_budget(Scenario())
    fast, slow = b._evolve(**changes), dataclasses.replace(b, **changes)
    for f in dataclasses.fields(RestartBudget):
        x, y = getattr(fast, f.name), getattr(slow, f.name)
        assert type(x) is type(y) and np.array_equal(np.asarray(x, dtype=object), np.asarray(y, dtype=object)), f.name
    assert np.array_equal(fast.loss_fraction, slow.loss_fraction)


@pytest.mark.parametrize("changes, name", [
    ({"interval_min": -1.0}, "interval_min"), ({"failures_per_day": 0.0}, "failures_per_day"),
    ({"idle_share": 1.0}, "idle_share"), ({"write_cost_min": np.array([0.1, np.nan])}, "write_cost_min"),
    ({"interval_min": 0.0, "write_cost_min": 0.5}, "write_cost_min"),
])
def test_the_fast_copy_rejects_what_the_dataclass_copy_rejects(changes, name):
    b = baseline_budget(Scenario())
    for copy in (lambda: b._evolve(**changes), lambda: dataclasses.replace(b, **changes)):
        with pytest.raises(ValueError, match=name):
            copy()
