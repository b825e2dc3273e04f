"""course_lib.step: the step-time bound, each value recomputed by hand (issue 29)."""
from __future__ import annotations

import math

import pytest

from course_lib import step


def test_step_time_is_6ND_over_GF_in_minutes():
    # 6 x 1e9 x 1e6 FLOPs over 10 GPUs x 100e12 FLOP/s = 6 s = 0.1 min
    assert step.step_time_min(1e9, 1e6, 10, 100) == pytest.approx(0.1, rel=1e-12)
    # Llama 3 405B, 16M tokens, 16,384 GPUs at 400 TFLOP/s: 3.888e19 / 6.5536e18 s
    assert step.step_time_min(405e9, 16e6, 16384, 400) == pytest.approx(3.888e19 / 6.5536e18 / 60, rel=1e-12)
    # each input enters with its own power: N and D linearly, G and F inversely
    base = step.step_time_min(2e9, 3e6, 7, 50)
    assert step.step_time_min(4e9, 3e6, 7, 50) == pytest.approx(2 * base, rel=1e-12)
    assert step.step_time_min(2e9, 9e6, 7, 50) == pytest.approx(3 * base, rel=1e-12)
    assert step.step_time_min(2e9, 3e6, 3.5, 50) == pytest.approx(2 * base, rel=1e-12)  # fractional GPUs allowed
    assert step.step_time_min(2e9, 3e6, 7, 25) == pytest.approx(2 * base, rel=1e-12)


@pytest.mark.parametrize("args, name", [((0, 1e6, 8, 400), "model_params"), ((1e9, 0, 8, 400), "tokens_per_step"),
                                        ((1e9, 1e6, 0, 400), "n_gpus"), ((1e9, 1e6, 8, 0), "tflops_per_gpu"),
                                        ((1e9, 1e6, -8, 400), "n_gpus"), ((-1e9, 1e6, 8, 400), "model_params")])
def test_step_time_rejects_non_positive_inputs(args, name):
    with pytest.raises(ValueError, match=name):
        step.step_time_min(*args)


def test_defaults_are_llama3_table4():
    assert step.default_tokens_per_step() == 16e6
    assert step.default_tflops_per_gpu(1) == 430  # a smaller fleet gets the 8,192-GPU row
    assert step.default_tflops_per_gpu(4096) == 430
    assert step.default_tflops_per_gpu(8192) == 430
    assert step.default_tflops_per_gpu(16384) == 400
    assert step.default_tflops_per_gpu(131072) == 400
    # the switch is at the geometric mean of the two configurations, sqrt(8192 x 16384) = 11,585.2
    mid = math.sqrt(8192 * 16384)
    assert step.default_tflops_per_gpu(mid) == 430
    assert step.default_tflops_per_gpu(mid * (1 + 1e-9)) == 400
    assert step.default_tflops_per_gpu(11585) == 430 and step.default_tflops_per_gpu(11586) == 400
    for bad in (0, -1):
        with pytest.raises(ValueError, match="n_gpus"):
            step.default_tflops_per_gpu(bad)


@pytest.mark.parametrize("args, expected", [((0.3,), 0.3), ((0.3, 0.1, 0.5), 0.5), ((0.3, 0.7, 0.5), 0.7),
                                            ((0.9, 0.7, 0.5), 0.9), ((0.3, 0.7), 0.7), ((0.0, 0.0, 0.0), 0.0)])
def test_interval_lower_bound_is_the_largest_of_step_snapshot_persist(args, expected):
    assert step.interval_lower_bound_min(*args) == expected


@pytest.mark.parametrize("args, name", [((-0.1,), "step_min"), ((0.1, -0.1), "snapshot_min"), ((0.1, 0.1, -0.1), "persist_min")])
def test_interval_lower_bound_rejects_negative_times(args, name):
    with pytest.raises(ValueError, match=name):
        step.interval_lower_bound_min(*args)


def test_min_rewind_is_half_a_step():
    assert step.min_rewind_min(0.1) == pytest.approx(0.05, rel=1e-15)
    assert step.min_rewind_min(6.0) == 3.0 and step.min_rewind_min(0.0) == 0.0
    with pytest.raises(ValueError, match="step_min"):
        step.min_rewind_min(-1.0)
