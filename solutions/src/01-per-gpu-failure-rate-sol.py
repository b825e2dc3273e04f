# %% [markdown]
# # 01 · Exercises: per-GPU failure rates
#
# Practice for [notebook 01](../notebooks/01-per-gpu-failure-rate.ipynb): turn a public failure log
# into a per-GPU-day rate with an exact interval, read Llama 3's Table 5 from its counts, and see by
# simulation why the course uses exact Poisson intervals.
#
# **How to work through it.** Work in [`exercises/01-per-gpu-failure-rate-ex.ipynb`](../exercises/01-per-gpu-failure-rate-ex.ipynb). Each exercise states
# the task, the form of the answer (a number in a stated unit, or a pair) and the tolerance. Replace the
# cell that raises `NotImplementedError` with your code, keep the names the task asks for, and run the
# check cell below it: it says *Correct* or *Not yet* and names the likely mistake. Stuck? Open the **Hint** under the task before the solution. In the exercise notebook each **Why** is folded: open it once your answer is correct. Worked solutions:
# [`solutions/01-per-gpu-failure-rate-sol.ipynb`](../solutions/01-per-gpu-failure-rate-sol.ipynb) (the exercises are generated from it).
#
# **Time:** 30 minutes. **Prerequisites:** [notebook 01](../notebooks/01-per-gpu-failure-rate.ipynb).

# %%
from course_lib.notebook import setup

rng = setup()

# %%
import numpy as np
from scipy import stats

from course_lib import data, failures
from course_lib.check import nb01

logs = data.failure_logs()
llama = logs.where("run", "Llama 3 405B").rows[0]
print("runs in data/failure_logs.csv:", ", ".join(logs["run"]))

# %% [markdown]
# ## Exercise 1 · OPT-175B's rate, with a 99 % interval
#
# OPT-175B was trained on 992 A100 GPUs for about two months with "at least 35 manual" and "70+
# automatic" restarts (Zhang et al., *OPT: Open Pre-trained Transformer Language Models*,
# arXiv:2205.01068, sections 2.4-2.5; the row `OPT-175B` of `data/failure_logs.csv` holds the count,
# the GPUs and the 60 days the course reads "about two months" as).
#
# **Task.** Compute OPT-175B's failures per GPU-day, `rate`, and its exact (Garwood) two-sided **99 %**
# interval, `ci = (low, high)`, both in failures per GPU-day, from the data file.
# **Answer:** `rate` (float, failures per GPU-day, within 0.5 %) and `ci` (a pair of floats, each
# bound within 0.2 %). **Predict first:** will OPT's interval reach down into the band of recent
# fleets ([notebook 01](../notebooks/01-per-gpu-failure-rate.ipynb))?
#
# <details class="course-hint"><summary>Hint (open it when you are stuck, before the solution)</summary>
#
# A rate is events / (GPUs x days): the row `logs.where("run", "OPT-175B").rows[0]` has all three. `failures.rate_ci_per_gpu_day` takes the same three numbers and a `confidence=`.
#
# </details>

# %% tags=["solution"]
# Task: compute OPT-175B's failures per GPU-day `rate` and its exact 99% interval `ci = (low, high)` from data/failure_logs.csv.
opt = logs.where("run", "OPT-175B").rows[0]
events, gpus, days = opt["events_low"], opt["gpus"], opt["period_days"]
rate = failures.rate_per_gpu_day(events, gpus, days)
ci = failures.rate_ci_per_gpu_day(events, gpus, days, confidence=0.99)
print(f"{events:.0f} {opt['counted']} over {gpus:,.0f} GPUs x {days:.0f} days = {gpus * days:,.0f} GPU-days")
print(f"rate {rate:.3e} per GPU-day, 99% interval {ci[0]:.3e} to {ci[1]:.3e}")

# %%
nb01.opt_rate(rate, ci)

# %% [markdown]
# **Why.** A rate is a count over an exposure in GPU-days (not node-days, not GPU-hours); the count is
# Poisson, so its exact interval comes from the chi-square distribution (`2k` degrees of freedom for the
# lower bound, `2k + 2` for the upper). A 99 % interval is wider than [notebook 01](../notebooks/01-per-gpu-failure-rate.ipynb)'s 95 % one, and yet:

# %%
band_table = data.load_table("failure_rate_band.csv")
band = dict(zip(band_table["quantity"], band_table["value"]))
print(f"OPT 99% low bound {ci[0]:.2e} vs the band's high end {band['band_high']:.1e}: above the band = {ci[0] > band['band_high']}")

# %% [markdown]
# Even at 99 % OPT sits above the band of recent fleets, so its higher rate is not bad luck in a
# small count. The log's own caveat explains it: OPT counted *restarts* (manual and automatic, on
# 2021-22 hardware and software), not hardware failures.
#
# ## Exercise 2 · The GPU category as a rate
#
# Llama 3's Table 5 (Llama Team, *The Llama 3 Herd of Models*, arXiv:2407.21783, 2024;
# `data/llama3_table5.csv`) splits the 419 unexpected interruptions by component; six rows are in the
# category `GPU`. [Notebook 01](../notebooks/01-per-gpu-failure-rate.ipynb) computed their *share*; here you turn it into a *rate*.
#
# **Task.** Compute the failures per GPU-day caused by the GPU category alone during Llama 3's
# snapshot (exposure as in [notebook 01](../notebooks/01-per-gpu-failure-rate.ipynb): the GPUs x days of `llama`, the log's row). **Answer:** `answer` (float, failures
# per GPU-day, within 0.5 %). **Predict first:** what fraction of Llama 3's total rate is it?
#
# <details class="course-hint"><summary>Hint (open it when you are stuck, before the solution)</summary>
#
# Add up the `count` column of the Table 5 rows whose `category` is `GPU` (the counts, not the printed percentages), then divide by the same GPU-days as Llama 3's whole rate (`failures.rate_per_gpu_day`).
#
# </details>

# %% tags=["solution"]
# Task: compute `answer`, the failures per GPU-day of Llama 3's GPU-category interruptions (the GPU rows of Table 5, counts not printed percentages).
table5 = data.llama3_table5()
gpu_count = sum(int(n) for n, cat in zip(table5["count"], table5["category"]) if cat == "GPU")
answer = failures.rate_per_gpu_day(gpu_count, llama["gpus"], llama["period_days"])
print(f"{gpu_count} GPU-category interruptions / ({llama['gpus']:,.0f} GPUs x {llama['period_days']:.0f} days) = {answer:.3e} per GPU-day")

# %%
nb01.gpu_category_rate(answer)

# %% [markdown]
# **Why.** Take the count from the count column: the printed percentages of Table 5 do not match the
# counts ([notebook 01](../notebooks/01-per-gpu-failure-rate.ipynb)'s footnote), so percentage x total gives a different, wrong count. Against the
# whole rate:

# %%
total_rate = failures.rate_per_gpu_day(llama["events_low"], llama["gpus"], llama["period_days"])
print(f"GPU category {answer:.2e} of the total {total_rate:.2e} per GPU-day: {answer / total_rate:.0%}")

# %% [markdown]
# Most of a GPU's failure rate is the GPU itself (and its memory): a job's exposure grows with every
# GPU it adds, which is [notebook 02](../notebooks/02-fleet-mtbf.ipynb)'s starting point.
#
# ## Exercise 3 · Why exact intervals: the normal approximation for a small count
#
# BLOOM-176B reported "1-2 GPU failures a week" (Hugging Face blog, *The Technology Behind BLOOM
# Training*, 2022; `data/failure_logs.csv`). Take the middle of that range as the *true* mean count of
# a week (a course choice). A common shortcut for a count k is the normal interval k +- 1.96 sqrt(k).
#
# **Task.** Simulate 20,000 weekly counts from a Poisson with that mean (use `rng`), build the
# normal interval for each, and compute the fraction of intervals that contain the true mean (the
# interval's *coverage*). **Answer:** `answer` (a fraction between 0 and 1, within 2 % relative, several
# times the simulation's own error). **Predict first:** a "95 %" interval should cover 95 % of the
# time. Does it here?
#
# <details class="course-hint"><summary>Hint (open it when you are stuck, before the solution)</summary>
#
# The true mean is halfway between 1 and 2. `rng.poisson(mean, size=20_000)` draws the weekly counts; an interval k +- 1.96 sqrt(k) contains the mean when |k - mean| <= 1.96 sqrt(k), and the coverage is the mean of that array of True/False.
#
# </details>

# %%
bloom = logs.where("run", "BLOOM-176B").rows[0]
true_mean = (bloom["events_low"] + bloom["events_high"]) / 2
print(f"true mean count per week: {true_mean:g}")

# %% tags=["solution"]
# Task: simulate 20,000 Poisson counts with mean `true_mean` using `rng`, build k +- 1.96 sqrt(k) for each, and set `answer` to the fraction of intervals that contain `true_mean`.
z = stats.norm.ppf(0.975)
counts = rng.poisson(true_mean, size=20_000)
answer = float(np.mean(np.abs(counts - true_mean) <= z * np.sqrt(counts)))
exact = {int(k): failures.poisson_ci(int(k)) for k in np.unique(counts)}
garwood = float(np.mean([exact[int(k)][0] <= true_mean <= exact[int(k)][1] for k in counts]))
print(f"coverage of k +- {z:.2f} sqrt(k): {answer:.3f}; of the exact Garwood interval: {garwood:.3f}")

# %%
nb01.normal_interval_coverage(answer)

# %% [markdown]
# **Why.** With a mean near 1, a week with no failure is common, and the normal interval of k = 0 has
# zero width, so it never contains the truth; large counts also get intervals that are too short.
# The exact Garwood interval never undercovers (it is conservative), which is why [notebook 01](../notebooks/01-per-gpu-failure-rate.ipynb) uses it
# and why BLOOM's interval in [notebook 01](../notebooks/01-per-gpu-failure-rate.ipynb)'s plot is so wide: a handful of events cannot pin a rate down.

# %%
print(f"P(a week with no failure) = {stats.poisson.pmf(0, true_mean):.3f}: the share of zero-width normal intervals")
