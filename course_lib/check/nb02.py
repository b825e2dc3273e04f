"""Self-checks for the exercises of notebook 02 (fleet MTBF): solutions/02-fleet-mtbf-sol.ipynb.

- :func:`mixed_fleet_mtbf`: sympy, the mean time to the first failure of a job with N GPUs
  (rate lambda each) and M switches (rate mu each).
- :func:`rsc1_fleet_mtbf`: the fleet MTBF in hours of a 16,384-GPU job at Meta RSC-1's
  published rate (per 1,000 node-days in data/failure_logs.csv).
- :func:`wearout_first_failure`: the mean time to the first failure of a fresh 4,096-GPU
  fleet whose GPUs wear out (Weibull shape 1.5) with Llama 3's per-GPU mean lifetime.
"""
from __future__ import annotations

from .. import Scenario, data, failures
from . import Mistake
from ._common import ExprCheck, NumberCheck, exercise

__all__ = [
    "RSC1_RUN",
    "RSC1_GPUS",
    "WEAROUT_SHAPE",
    "NOTEBOOK_SHAPE",
    "mixed_fleet_symbols",
    "mixed_fleet_mtbf",
    "rsc1_fleet_mtbf",
    "wearout_first_failure",
]

RSC1_RUN = "Meta RSC-1"
RSC1_GPUS = 16_384  # the exercise's fleet (a course choice: Llama 3's "up to 16K")
WEAROUT_SHAPE = 1.5  # the exercise's wear-out shape (a course choice, not a measurement)
NOTEBOOK_SHAPE = 0.7  # notebook 02's infant-mortality shape (its parameters cell)


# ---------------------------------------------------------------- exercise 1 (sympy)
def mixed_fleet_symbols():
    """(t, N, M, lambda, mu) as the exercise names them, all positive."""
    import sympy

    return sympy.symbols("t N M lambda mu", positive=True)


@exercise
def mixed_fleet_mtbf() -> ExprCheck:
    """Exercise 1: the mean time to the first failure of N GPUs (rate lambda) and M switches (rate mu), in sympy."""
    import sympy

    t, N, M, lam, mu = mixed_fleet_symbols()
    right = 1 / (N * lam + M * mu)
    return ExprCheck(
        "02.1 mixed fleet",
        right,
        (
            (1 / (N * lam) + 1 / (M * mu), "you added the two MTBFs: independent failure processes add their *rates*; the MTBF is 1 / (sum of the rates)"),
            (N * lam + M * mu, "that is the job's failure rate; the question asks for its mean time to failure, 1 / rate"),
            (1 / (N * lam), "you left out the switches: the job also stops when any of the M switches fails"),
            (1 / (lam + mu), "you forgot the counts: N GPUs fail N times as often as one (and M switches M times)"),
            (sympy.exp(-(N * lam + M * mu) * t), "that is the survival function S(t); its integral over t from 0 to oo is the mean"),
            (1 / (N * M * lam * mu), "survival probabilities multiply, so the rates in the exponent add: they do not multiply"),
        ),
        "not the mean time to the first failure: multiply the survival functions, integrate over t from 0 to oo",
    )


# ---------------------------------------------------------------- exercise 2
@exercise
def rsc1_fleet_mtbf() -> NumberCheck:
    """Exercise 2: the fleet MTBF in hours of a 16,384-GPU job at Meta RSC-1's per-GPU rate."""
    row = data.failure_logs().where("run", RSC1_RUN).rows[0]
    per_node_day = row["published_per_1000_node_days"] / 1000
    per_gpu_node = row["gpus_per_node"]
    rate = per_node_day / per_gpu_node
    right = failures.fleet_mtbf_hours(RSC1_GPUS, rate)
    llama = next(r for r in failures.log_rates() if r.run == "Llama 3 405B").rate_low
    question = Scenario().n_gpus
    return NumberCheck("02.2 RSC-1 fleet MTBF", right, 0.01, "h", (
        Mistake(right / per_gpu_node, f"you used the per-node-day rate as a per-GPU rate: divide by {per_gpu_node:.0f} GPUs per node (or multiply by nodes, not GPUs)"),
        Mistake(right * 1000, "the published rate is per 1,000 node-days: divide it by 1,000 first"),
        Mistake(right * 1000 / per_gpu_node, "two slips: the rate is per 1,000 node-days (divide by 1,000) and per node (divide by GPUs per node)"),
        Mistake(right * 60, "that is minutes: the task asks for hours"),
        Mistake(right / 24, "that is days: the task asks for hours"),
        Mistake(24 / right, "that is failures per day, not the MTBF in hours"),
        Mistake(failures.fleet_mtbf_hours(question, rate), f"that is the {question:,}-GPU job: the task's fleet is {RSC1_GPUS:,} GPUs"),
        Mistake(failures.fleet_mtbf_hours(RSC1_GPUS, llama), "that is Llama 3's rate: the task asks for Meta RSC-1's published rate"),
    ))


# ---------------------------------------------------------------- exercise 3
@exercise
def wearout_first_failure() -> NumberCheck:
    """Exercise 3: mean hours to the first failure of a fresh 4,096-GPU fleet with Weibull shape 1.5."""
    n = Scenario().n_gpus
    llama = next(r for r in failures.log_rates() if r.run == "Llama 3 405B").rate_low
    mean_days = 1 / llama
    k = WEAROUT_SHAPE
    scale = failures.weibull_scale_for_mean(k, mean_days)
    right = 24 * failures.fleet_mean_time_to_first_failure(n, k, scale)
    infant = 24 * failures.fleet_mean_time_to_first_failure(n, NOTEBOOK_SHAPE, failures.weibull_scale_for_mean(NOTEBOOK_SHAPE, mean_days))
    return NumberCheck("02.3 wear-out fleet", right, 0.01, "h", (
        Mistake(failures.fleet_mtbf_hours(n, llama), "that is the exponential MTBF 24 / (N lambda): with shape k the fleet's scale shrinks by N**(-1/k), not 1/N"),
        Mistake(24 * failures.fleet_mean_time_to_first_failure(n, k, mean_days), "you used the mean lifetime as the Weibull scale: convert it with failures.weibull_scale_for_mean(shape, mean)"),
        Mistake(infant, f"that is the notebook's infant-mortality shape {NOTEBOOK_SHAPE:g}: the task's wear-out shape is {k:g}"),
        Mistake(24 * failures.weibull_mean(k, scale * n ** (-k)), "the scale shrinks by N**(-1/k), not N**(-k)"),
        Mistake(right / 24, "that is days: the task asks for hours"),
        Mistake(right * 60, "that is minutes: the task asks for hours"),
    ))
