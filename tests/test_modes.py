"""The per-mode model, the step-time bound and the complete-model loss (course_lib.modes, step, interval)."""
import math

import pytest
from hypothesis import given, settings, strategies as st

from course_lib import interval as iv
from course_lib import modes as md
from course_lib import restart as rs
from course_lib import step
from course_lib.scenario import Scenario


def test_step_time_is_6nd_over_gf():
    # Llama 3 Table 4 [@llama3]: 405B, 16M tokens, 16,384 GPUs at 400 TFLOP/s -> 5.9 s; 4,096 GPUs at 430 -> 22 s
    assert 60 * step.step_time_min(405e9, 16e6, 16384, 400) == pytest.approx(5.93, abs=0.01)
    assert 60 * md.ModeInputs().step_min(Scenario()) == pytest.approx(22.07, abs=0.01)
    assert step.interval_lower_bound_min(0.3, 0.1, 0.5) == 0.5
    with pytest.raises(ValueError, match="tflops_per_gpu"):
        step.step_time_min(1e9, 1e6, 8, 0)


def test_detection_per_mode_follows_one_convention():
    s, inp = Scenario(), md.ModeInputs()
    by = {x.mode: x for x in md.mode_stages(s, inp)}
    assert by["crash"].detect == pytest.approx(inp.poll_min / 2)  # half a poll
    assert by["hang"].detect == pytest.approx(inp.poll_min / 2 + 5 * inp.step_min(s))  # NVRx safety factor x the step
    assert by["sdc"].latency == pytest.approx(60 + s.checkpoint_interval_min / 2)
    assert by["host_loss"].reload == pytest.approx(s.reload_from_memory_min)
    no_copy = {x.mode: x for x in md.mode_stages(s, md.ModeInputs(peer_copy=False))}
    assert no_copy["host_loss"].reload == s.reload_min and no_copy["host_loss"].latency == s.checkpoint_interval_min / 2


def test_false_kills_fall_with_the_timeout():
    p = [md.false_kill_probability(t, 1.0, 0.2) for t in (1.2, 1.5, 2.0, 5.0)]
    assert p == sorted(p, reverse=True) and p[-1] < 1e-12 < p[0] < 0.5
    with pytest.raises(ValueError, match="timeout_min"):
        md.false_kill_probability(0.5, 1.0, 0.2)


@pytest.mark.parametrize("kw, word", [({"shares": (0.5, 0.5, 0.5, 0.0)}, "shares"), ({"safety_factor": 0.5}, "safety_factor"),
                                      ({"poll_min": 0}, "poll_min"), ({"sdc_latency_min": -1}, "sdc_latency_min")])
def test_bad_mode_inputs_name_the_input(kw, word):
    with pytest.raises(ValueError, match=word):
        md.ModeInputs(**kw)


def test_hang_timeout_must_exceed_the_step():
    with pytest.raises(ValueError, match="hang_timeout_min"):
        md.ModeInputs(hang_timeout_min=0.1).timeout_min(Scenario())


def test_per_mode_floor_sums_to_the_days_floor():
    s = Scenario()
    after = rs.waterfall(rs.baseline_budget(s), rs.default_levers(s, modes=True))[-1].after
    assert sum(md.per_mode_floor(s).values()) == pytest.approx(after.floor_minutes_per_day, rel=1e-12)
    assert after.interval_min >= after.step_min and after.floor_minutes_per_day <= after.minutes_per_day


@settings(max_examples=40, deadline=None)
@given(lam=st.floats(0.01, 50), d=st.floats(0, 30), r=st.floats(0, 30), load=st.floats(0, 10))
def test_one_mode_point_inputs_reduce_to_lambda_d_plus_r(lam, d, r, load):
    b = rs.RestartBudget(lam, rs.RestartStages(d, r, load, 1.0))
    assert b.floor_minutes_per_day == lam * (d + r + load)  # exactly today's lambda (D + R)


@settings(max_examples=40, deadline=None)
@given(lam=st.floats(0.01, 5000), d=st.floats(0, 60), tau=st.floats(0.01, 120), delta=st.floats(0, 5))
def test_loss_never_exceeds_one_and_floor_never_exceeds_loss(lam, d, tau, delta):
    b = rs.RestartBudget(lam, rs.RestartStages(d, 0.0, 0.0, tau / 2), write_cost_min=delta, step_min=tau / 2)
    assert 0.0 <= b.loss_fraction <= 1.0
    assert b.floor_minutes_per_day <= b.minutes_per_day * (1 + 1e-12)


def test_complete_model_agrees_with_daly_and_first_order_at_the_question():
    assert iv.complete_loss_fraction(10, 0.5, 720, 10) == pytest.approx(1 - 1 / (1 + iv.expected_waste(10, 0.5, 720, 10)), rel=1e-12)
    b = rs.baseline_budget(Scenario())
    assert b.loss_fraction == pytest.approx(b.fraction_of_day, rel=0.02)  # 2.06 % against the first-order 2.08 %


def test_no_progress_is_said_plainly():
    b = rs.baseline_budget(Scenario().replace(n_gpus=1_000_000))
    assert b.fraction_of_day > 1 and b.loss_fraction < 1 and not b.makes_progress
    assert "faster than the job restarts" in b.progress_sentence and "%" in b.progress_sentence
    assert rs.baseline_budget(Scenario()).makes_progress
    assert math.isfinite(b.loss_fraction)


def test_floor_range_contains_its_central_value_and_floor_below_loss():
    from course_lib import uncertainty as un

    r = un.floor_range(n=4000)
    for x in (r.floor, r.loss):
        assert 0 <= x.low <= x.central <= x.high <= 1
    assert r.floor.central <= r.loss.central and r.dominant in un.INPUTS
    assert un.p_at_least(4, 2.0) == pytest.approx(0.1429, abs=1e-4)


def test_spares_cost_and_break_even():
    from course_lib import spares

    assert spares.spare_cost_minutes_per_day(8, 4096) == pytest.approx(8 / 4096 * 1440)
    assert spares.spare_cost_minutes_per_day(8, 4096, pooled=True) == 0.0
    assert spares.break_even_repair_min(2, 128, 8) == pytest.approx(45.0)
    with pytest.raises(ValueError, match="replica_gpus"):
        spares.elastic_cost_minutes_per_day(2, 8192, 4096, 60)
