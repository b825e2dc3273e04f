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


# --- issue 29: each formula of course_lib.modes pinned by an independent route ---------------------------

def test_half_period_is_half_the_period():
    assert md.half_period(5.0) == 2.5 and md.half_period(0) == 0.0  # a 5 s check sees an event 2.5 s later on average
    with pytest.raises(ValueError, match="period_min"):
        md.half_period(-1.0)


def test_hang_timeout_is_the_safety_factor_times_the_longest_gap():
    assert md.hang_timeout_min(2.0, 5) == 10.0  # NVRx: 5 x a 2-minute gap
    assert md.hang_timeout_min(0.5, 1) == 0.5  # a safety factor of exactly 1 is allowed: the timeout is the gap
    assert md.hang_timeout_min(0.5, 1.5) == 0.75
    for bad in (0.999, 0.5):  # below 1 the timeout would kill healthy steps
        with pytest.raises(ValueError, match="safety_factor must be a finite number >= 1"):
            md.hang_timeout_min(1.0, bad)
    with pytest.raises(ValueError, match="longest_gap_min"):
        md.hang_timeout_min(0.0, 5)


def test_false_kill_probability_by_hand():
    """Mean 1, CV 0.2: sigma^2 = ln(1 + 0.04) = 0.0392207, mu = -sigma^2/2 = -0.0196104; a 1.5-minute timeout is
    z = (ln 1.5 - mu) / sigma = (0.405465 + 0.019610) / 0.198042 = 2.14639 standard deviations out: 1 - Phi(z) = 0.015921."""
    assert md.false_kill_probability(1.5, 1.0, 0.2) == pytest.approx(0.015921, abs=2e-6)
    # the same by the normal tail written with erfc, for another mean and CV (mean 2, CV 0.5, timeout 3)
    import math

    s2 = math.log(1.25)
    z = (math.log(3.0) - (math.log(2.0) - s2 / 2)) / math.sqrt(s2)
    assert md.false_kill_probability(3.0, 2.0, 0.5) == pytest.approx(0.5 * math.erfc(z / math.sqrt(2)), rel=1e-12)


@pytest.mark.parametrize("step_min, cv", [(1.0, 0.2), (2.0, 0.5), (0.37, 1.3)])
def test_false_kill_probability_is_the_tail_of_a_lognormal_with_that_mean_and_cv(step_min, cv):
    """Recover the lognormal from the function's own tails at two timeouts (ln t = mu + sigma z, z = Phi^-1(1 - p)),
    then check with scipy that the recovered distribution has the stated mean and coefficient of variation."""
    import math

    from scipy.stats import lognorm, norm

    t1, t2 = 1.2 * step_min, 2.0 * step_min
    z1, z2 = (norm.isf(md.false_kill_probability(t, step_min, cv)) for t in (t1, t2))
    sigma = (math.log(t2) - math.log(t1)) / (z2 - z1)
    mu = math.log(t1) - sigma * z1
    dist = lognorm(s=sigma, scale=math.exp(mu))
    assert dist.mean() == pytest.approx(step_min, rel=1e-9)
    assert dist.std() / dist.mean() == pytest.approx(cv, rel=1e-9)


def test_false_kill_probability_grows_with_the_spread_and_refuses_a_timeout_at_the_step():
    p = [md.false_kill_probability(1.5, 1.0, cv) for cv in (0.05, 0.1, 0.2, 0.4)]
    assert p == sorted(p) and p[0] < 1e-15
    for bad in (1.0, 0.99):  # a timeout at or below the mean step is refused
        with pytest.raises(ValueError, match=r"timeout_min must be > step_min = 1"):
            md.false_kill_probability(bad, 1.0, 0.2)
    with pytest.raises(ValueError, match="step_cv"):
        md.false_kill_probability(1.5, 1.0, 0)


def test_false_kills_per_day_are_steps_per_day_times_the_probability():
    # 2-minute steps: 720 steps a day, each outlasting a 3-minute timeout with the probability of the erfc tail
    import math

    s2 = math.log(1.25)
    p = 0.5 * math.erfc((math.log(3.0) - (math.log(2.0) - s2 / 2)) / math.sqrt(2 * s2))
    assert md.false_kills_per_day(3.0, 2.0, 0.5) == pytest.approx(720 * p, rel=1e-12)
    with pytest.raises(ValueError, match="step_min"):
        md.false_kills_per_day(3.0, 0.0, 0.5)


def test_mode_stages_take_the_inputs_given():
    s = Scenario()
    by = {x.mode: x for x in md.mode_stages(s, ModeInputs(sdc_latency_min=30.0))}
    assert by["sdc"].latency == 30.0  # the default's 60 replaced
    assert {x.mode: x.latency for x in md.mode_stages(s)}["sdc"] == 60.0
