# %% [markdown]
# # 02 · Exercises: fleet MTBF
#
# Practice for [notebook 02](../notebooks/02-fleet-mtbf.ipynb): derive the first failure of a job made
# of different parts, compute a fleet MTBF from a published per-node rate, and see what GPUs that wear
# out (instead of failing young) do to a fresh fleet.
#
# **How to work through it.** Work in [`exercises/02-fleet-mtbf-ex.ipynb`](../exercises/02-fleet-mtbf-ex.ipynb). Each exercise states the task,
# the form of the answer (a number in a stated unit, or a sympy expression) and the tolerance. Replace the
# cell that raises `NotImplementedError` with your code, keep the names the task asks for, and run the
# check cell below it: it says *Correct* or *Not yet* and names the likely mistake. Stuck? Open the **Hint** under the task before the solution. In the exercise notebook each **Why** is folded: open it once your answer is correct. Worked solutions:
# [`solutions/02-fleet-mtbf-sol.ipynb`](../solutions/02-fleet-mtbf-sol.ipynb) (the exercises are generated from it).
#
# **Time:** 30 minutes. **Prerequisites:** notebooks [01](../notebooks/01-per-gpu-failure-rate.ipynb) and [02](../notebooks/02-fleet-mtbf.ipynb).

# %%
from course_lib.notebook import setup

rng = setup()

# %%
import math

import sympy as sp

from course_lib import Scenario, data, failures
from course_lib.check import nb02

logs = data.failure_logs()
llama_rate = next(r.rate_low for r in failures.log_rates(logs) if r.run == "Llama 3 405B")
print(f"Llama 3's per-GPU rate (notebook 01): {llama_rate:.3e} failures per GPU-day")

# %% [markdown]
# ## Exercise 1 · GPUs and switches: the first failure of a mixed job
#
# A job stops when any of its parts fails. Say it runs on N GPUs, each failing independently at rate
# lambda (exponential lifetimes), and depends on M network switches, each failing at rate mu.
#
# **Task.** Derive the job's mean time to its first failure in sympy, from the survival functions.
# **Answer:** `answer`, a sympy expression in the symbols `N, M, lam, mu` defined below (compared
# symbolically: exact). **Predict first:** if the GPUs alone give an MTBF of 12 h and the switches
# alone 12 h, is the job's MTBF 24 h, 12 h or 6 h?
#
# <details class="course-hint"><summary>Hint (open it when you are stuck, before the solution)</summary>
#
# The job survives to time t only if every part does: S_job(t) = S_gpu(t)^N S_switch(t)^M, with S(t) = exp(-rate t). The mean time to the first failure is the integral of S_job from 0 to infinity (`sp.integrate(..., (t, 0, sp.oo))`).
#
# </details>

# %%
t, N, M, lam, mu = sp.symbols("t N M lambda mu", positive=True)

# %% tags=["solution"]
# Task: derive the job's mean time to first failure `answer` (a sympy expression in N, M, lam, mu) by multiplying the survival functions and integrating over t.
S_job = sp.powsimp(sp.exp(-lam * t) ** N * sp.exp(-mu * t) ** M, force=True)
answer = sp.simplify(sp.integrate(S_job, (t, 0, sp.oo)))
S_job, answer

# %%
nb02.mixed_fleet_mtbf(answer)

# %% [markdown]
# **Why.** Survival probabilities of independent parts multiply, so the rates in the exponent *add*:
# the job fails at rate N lambda + M mu, and its MTBF is one over that sum. MTBFs combine like
# resistors in parallel, never by adding. Two parts with 12 h each:

# %%
mtbf_each = sp.Rational(12)  # hours, the prediction prompt's example
both = answer.subs({N: 1, lam: 1 / mtbf_each, M: 1, mu: 1 / mtbf_each})
print(f"12 h and 12 h together: {both} h")

# %% [markdown]
# ## Exercise 2 · Meta RSC-1's rate on a 16,384-GPU job
#
# Kokolis et al. (*Revisiting Reliability in Large-Scale Machine Learning Research Clusters*, HPCA 2025
# / arXiv:2410.21680, as reported) publish RSC-1's failures **per 1,000 node-days**, with 8 A100 GPUs
# per node; the row `Meta RSC-1` of `data/failure_logs.csv` holds both numbers.
#
# **Task.** Compute the fleet MTBF of a job on `n_fleet` GPUs (16,384, a course choice: Llama 3's
# "up to 16K") at RSC-1's per-GPU rate. **Answer:** `answer` (float, hours, within 1 %).
# **Predict first:** more or less than the question's 12 h?
#
# <details class="course-hint"><summary>Hint (open it when you are stuck, before the solution)</summary>
#
# Per 1,000 node-days -> per node-day (divide by 1,000) -> per GPU-day (divide by the GPUs per node); then `failures.fleet_mtbf_hours(n_fleet, rate)`.
#
# </details>

# %%
n_fleet = 16_384

# %% tags=["solution"]
# Task: compute `answer`, the fleet MTBF in hours of a job on `n_fleet` GPUs at Meta RSC-1's published failure rate (data/failure_logs.csv).
rsc1 = logs.where("run", "Meta RSC-1").rows[0]
per_gpu_day = rsc1["published_per_1000_node_days"] / 1000 / rsc1["gpus_per_node"]
answer = failures.fleet_mtbf_hours(n_fleet, per_gpu_day)
print(f"{rsc1['published_per_1000_node_days']:g} per 1,000 node-days / {rsc1['gpus_per_node']:.0f} GPUs per node = {per_gpu_day:.3e} per GPU-day")
print(f"{n_fleet:,} GPUs: {failures.failures_per_day(n_fleet, per_gpu_day):.1f} failures a day, MTBF {answer:.2f} h")

# %%
nb02.rsc1_fleet_mtbf(answer)

# %% [markdown]
# **Why.** Convert the published unit first: per 1,000 node-days to per node-day (divide by 1,000),
# then per node to per GPU (divide by the GPUs per node). Multiplying the per-node rate by the number of
# *nodes* gives the same failures per day; mixing a per-node rate with a count of GPUs is the usual slip.
# A job at Llama 3's scale on RSC-1's hardware stops far more often than the question's:

# %%
print(f"vs the question's {Scenario().fleet_mtbf_hours:g} h: {Scenario().fleet_mtbf_hours / answer:.1f}x more often")

# %% [markdown]
# ## Exercise 3 · GPUs that wear out: Weibull shape 1.5
#
# [Notebook 02](../notebooks/02-fleet-mtbf.ipynb) gave GPUs an infant-mortality lifetime (Weibull shape < 1). Suppose instead they *wear
# out*: Weibull shape `shape` = 1.5 (a course choice, not a measurement), with the same per-GPU mean
# lifetime as Llama 3's rate, 1 / `llama_rate` days. The fleet is the question's, freshly racked (every
# GPU at age 0).
#
# **Task.** Compute the mean time until the first GPU of the fresh fleet fails. **Answer:** `answer`
# (float, hours, within 1 %). **Predict first:** sooner or later than the exponential fleet MTBF of
# [notebook 02](../notebooks/02-fleet-mtbf.ipynb), and by how much?
#
# <details class="course-hint"><summary>Hint (open it when you are stuck, before the solution)</summary>
#
# The first of N Weibull lifetimes of shape k is Weibull with the same shape and its scale times N^(-1/k). `failures.weibull_scale_for_mean` turns the mean into a scale and `failures.fleet_mean_time_to_first_failure` does the rest, in days.
#
# </details>

# %%
shape = 1.5
n_gpus = Scenario().n_gpus

# %% tags=["solution"]
# Task: compute `answer`, the mean time in hours until the first of `n_gpus` fresh GPUs fails, each lifetime Weibull with shape `shape` and mean 1 / llama_rate days.
scale = failures.weibull_scale_for_mean(shape, 1 / llama_rate)
answer = 24 * failures.fleet_mean_time_to_first_failure(n_gpus, shape, scale)
exponential = failures.fleet_mtbf_hours(n_gpus, llama_rate)
print(f"Weibull scale {scale:,.0f} days; fleet scale x N**(-1/k) = {scale * n_gpus ** (-1 / shape):.2f} days")
print(f"fresh wear-out fleet: {answer:.1f} h to the first failure; exponential MTBF {exponential:.1f} h ({answer / exponential:.0f}x later)")

# %%
nb02.wearout_first_failure(answer)

# %% [markdown]
# **Check by simulation.** Draw every GPU's Weibull lifetime for 1,000 fresh fleets and keep each
# fleet's first failure (the same check as [notebook 02](../notebooks/02-fleet-mtbf.ipynb)'s).

# %%
draws = 24 * failures.sample_fleet_first_failure(rng, n_gpus, 1000, shape=shape, scale=failures.weibull_scale_for_mean(shape, 1 / llama_rate))
mc, se = draws.mean(), draws.std(ddof=1) / math.sqrt(draws.size)
print(f"Monte Carlo {mc:.1f} +- {se:.1f} h vs your answer {answer:.1f} h: within 4 s.e. = {abs(mc - answer) < 4 * se}")

# %% [markdown]
# **Why.** The minimum of N Weibull(k, s) lifetimes is Weibull(k, s N^(-1/k)). With k = 1 the scale
# shrinks by N; with k = 1.5 only by N^(1/k), less than N, because a new GPU is *less* likely to fail than an old
# one: a fresh wear-out fleet runs far longer before its first failure than the exponential says. That
# advantage fades as the fleet ages and GPUs are replaced at random ages, which is why the rest of the
# course uses the exponential for a fleet in steady state.
