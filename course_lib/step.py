"""The step-time bound: a checkpoint cannot be taken more often than once per training step.

Notebook 06 explains this module (its last section computes the bounds that bind); notebook 08
uses it in the floor. Units: minutes for every result, like the rest of course_lib; FLOP/s per
GPU are given in **TFLOP/s** (1e12), as Llama 3's Table 4 prints them.

One training step of a dense transformer costs about ``6 N D`` FLOPs (``N`` parameters, ``D``
tokens per step: 2 for the forward pass, 4 for the backward), shared by ``G`` GPUs that each
sustain ``F`` FLOP/s, so::

    T_iter = 6 N D / (G F)

Llama 3 405B, 16M tokens per step, 16,384 GPUs at 400 TFLOP/s: 5.9 s; on 4,096 GPUs with the
same batch at 430 TFLOP/s (Table 4's 8,192-GPU throughput), about 22 s. GEMINI's bound
``1/f >= max(t_ckpt, T_iter)`` makes the checkpoint interval at least the step, the snapshot
copy and the copy that leaves the host (persist or replication), so the rewind per failure is at
least about half a step, and the floor includes it (:attr:`RestartBudget.floor_minutes_per_day`).
The inputs come from data/training_step.csv (Llama 3 Table 4), never from literals here.
"""
from __future__ import annotations

from ._validate import check_non_negative, check_positive

__all__ = ["step_time_min", "default_tokens_per_step", "default_tflops_per_gpu", "interval_lower_bound_min",
           "min_rewind_min"]


def step_time_min(model_params, tokens_per_step, n_gpus, tflops_per_gpu) -> float:
    """Minutes per training step, ``6 N D / (G F)`` (notebook 06).

    model_params (N), tokens_per_step (D), n_gpus (G, may be fractional for sweeps) and
    tflops_per_gpu (F, achieved TFLOP/s per GPU) must all be > 0.
    """
    n = check_positive("model_params", model_params)
    d = check_positive("tokens_per_step", tokens_per_step)
    g = check_positive("n_gpus", n_gpus)
    f = check_positive("tflops_per_gpu", tflops_per_gpu)
    return 6.0 * n * d / (g * f * 1e12) / 60.0


def _step_table(data_dir=None):
    from .data import sourced

    return sourced("training_step.csv", "key", data_dir)


def default_tokens_per_step(data_dir=None) -> float:
    """Llama 3 405B's 16M tokens per step (Table 4, data/training_step.csv)."""
    return _step_table(data_dir)["llama3_405b_tokens_per_batch"].value


def default_tflops_per_gpu(n_gpus, data_dir=None) -> float:
    """Table 4's achieved TFLOP/s per GPU at the configuration nearest ``n_gpus``.

    430 up to 8,192 GPUs, 400 above (16,384 GPUs); a smaller fleet is given the 8,192-GPU
    throughput (the course's choice: Table 4 has no smaller configuration).
    """
    g = check_positive("n_gpus", n_gpus)
    t = _step_table(data_dir)
    small, large = t["llama3_405b_8k_gpus"].value, t["llama3_405b_16k_gpus"].value
    key = "llama3_405b_8k_tflops_per_gpu" if g <= (small * large) ** 0.5 else "llama3_405b_16k_tflops_per_gpu"
    return t[key].value


def interval_lower_bound_min(step_min, snapshot_min=0.0, persist_min=0.0) -> float:
    """The shortest useful checkpoint interval: ``max(step, snapshot copy, persist/replication)`` (minutes).

    A snapshot cannot start before the previous copy has finished, and at most one per step is
    useful (GEMINI, SOSP 2023; notebook 06).
    """
    return max(check_non_negative("step_min", step_min), check_non_negative("snapshot_min", snapshot_min),
               check_non_negative("persist_min", persist_min))


def min_rewind_min(step_min) -> float:
    """The least mean rewind per failure: half a step (the interval is at least one step)."""
    return check_non_negative("step_min", step_min) / 2.0
