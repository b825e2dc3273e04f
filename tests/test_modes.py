"""The failure modes: detection per mode, hang timeouts, the step-time bound, the compatible entry points (course_lib.modes, step)."""
import pytest

from course_lib import modes as md
from course_lib import step
from course_lib.levers import all_levers_day
from course_lib.scenario import ModeInputs, Scenario


def test_step_time_is_6nd_over_gf():
    # Llama 3 Table 4 [@llama3]: 405B, 16M tokens, 16,384 GPUs at 400 TFLOP/s -> 5.9 s; 4,096 GPUs at 430 -> 22 s
    assert 60 * step.step_time_min(405e9, 16e6, 16384, 400) == pytest.approx(5.93, abs=0.01)
    assert 60 * Scenario().step_min == pytest.approx(22.07, abs=0.01)
    assert step.interval_lower_bound_min(0.3, 0.1, 0.5) == 0.5
    with pytest.raises(ValueError, match="tflops_per_gpu"):
        step.step_time_min(1e9, 1e6, 8, 0)


def test_detection_per_mode_before_and_after_the_levers():
    s = Scenario()
    m = s.modes
    base, after = s.detect_by_mode, s.detect_after_by_mode
    assert base["crash"] == after["crash"] == pytest.approx(0.1 / 60)  # torchrun's monitor: a poll, before any lever
    assert base["hang"] == pytest.approx(10 + 0.1 / 60)  # NCCL's untuned collective timeout
    assert after["hang"] == pytest.approx(5 * s.step_min + 2.5 / 60 + 0.1 / 60)  # safety factor x the step + half the 5 s check
    assert base["host_loss"] == pytest.approx(2.5) and after["host_loss"] == pytest.approx(0.5)  # half a health check; a 30 s heartbeat
    assert m.hang_timeout_min == pytest.approx(md.hang_timeout_min(s.step_min, 5))
    by = {x.mode: x for x in md.mode_stages(s)}  # every lever pulled
    assert by["sdc"].latency == 60 and by["sdc"].persisted and not by["crash"].persisted
    no_copy = {x.mode: x for x in md.mode_stages(s.replace(peer_copy=False))}
    assert no_copy["host_loss"].persisted and no_copy["host_loss"].reload == s.reload_min


def test_false_kills_fall_with_the_timeout():
    p = [md.false_kill_probability(t, 1.0, 0.2) for t in (1.2, 1.5, 2.0, 5.0)]
    assert p == sorted(p, reverse=True) and p[-1] < 1e-12 < p[0] < 0.5
    with pytest.raises(ValueError, match="timeout_min"):
        md.false_kill_probability(0.5, 1.0, 0.2)
    assert md.false_kills_per_day(1.5, 1.0, 0.2) == pytest.approx(1440 * md.false_kill_probability(1.5, 1.0, 0.2))


@pytest.mark.parametrize("kw, word", [({"shares": (0.5, 0.5, 0.5, 0.0)}, "shares"), ({"safety_factor": 0.5}, "safety_factor"),
                                      ({"launcher_poll_min": 0}, "launcher_poll_min"), ({"sdc_latency_min": -1}, "sdc_latency_min"),
                                      ({"peer_copy": 1}, "peer_copy"), ({"shares": 3}, "shares")])
def test_bad_mode_inputs_name_the_input(kw, word):
    with pytest.raises(ValueError, match=word):
        ModeInputs(**kw)


def test_hang_timeout_must_exceed_the_step():
    with pytest.raises(ValueError, match="hang_timeout_min"):
        Scenario().replace(hang_timeout_min=0.1)


def test_per_mode_floor_is_the_all_levers_day_without_the_spare():
    s = Scenario()
    from course_lib import floor as fl
    import dataclasses

    day = dataclasses.replace(all_levers_day(s), idle_share=0.0)
    assert md.per_mode_floor(s) == fl.per_mode(day)
    assert md.per_mode_floor(s, ModeInputs(peer_copy=False))["host_loss"] > md.per_mode_floor(s)["host_loss"]


def test_shares_with_hang_rescale_the_others():
    s = Scenario()
    out = md.shares_with_hang(s.modes.shares, 0.6)
    assert out.sum() == pytest.approx(1.0) and out[1] == 0.6
    assert out[0] / out[2] == pytest.approx(s.modes.shares[0] / s.modes.shares[2])
