# %% [markdown]
# # 09 · Exercises: your fleet
#
# Practice for [notebook 09](../notebooks/09-your-fleet.ipynb): carry one incident log through the whole
# answer, say how sure the floor is, price the checkpoint that the course's interval would need, and find
# the fleet size at which a hot spare pays for itself.
# This is the interview question answered for a fleet you did not see before.
#
# **How to work through it.** Work in [`exercises/09-your-fleet-ex.ipynb`](../exercises/09-your-fleet-ex.ipynb). Each exercise states the task,
# the form of the answer (a number in a stated unit) and the tolerance. Replace the cell that raises
# `NotImplementedError` with your code, keep the names the task asks for, and run the check cell below it:
# it says *Correct* or *Not yet* and names the likely mistake. Stuck? Open the **Hint** under the task before the solution. In the exercise notebook each **Why** is folded: open it once your answer is correct. Worked solutions: [`solutions/09-your-fleet-sol.ipynb`](../solutions/09-your-fleet-sol.ipynb)
# (the exercises are generated from it).
#
# **Time:** 25 minutes. **Prerequisites:** notebooks [01](../notebooks/01-per-gpu-failure-rate.ipynb), [04](../notebooks/04-optimal-interval.ipynb) and [09](../notebooks/09-your-fleet.ipynb).

# %%
from course_lib.notebook import setup

rng = setup()

# %%
import math

from course_lib import MINUTES_PER_DAY, Scenario, failures
from course_lib import interval as iv
from course_lib.answer import answer as course_answer
from course_lib.check import nb09

# %% [markdown]
# ## The incident log
#
# A made-up log (a course choice, the example in [notebook 09](../notebooks/09-your-fleet.ipynb)'s papermill line): a job on `n_gpus`
# GPUs counted `observed_failures` unexpected failures in `observed_days` days. Every other input is
# the course's (the stage minutes of [notebook 03](../notebooks/03-anatomy-of-a-restart.ipynb), the levers' sourced numbers, the 405B state split over
# the fleet): `course_answer(Scenario().replace(n_gpus=..., rate_per_gpu_day=...))` computes the whole answer, as in
# [notebook 09](../notebooks/09-your-fleet.ipynb).

# %%
n_gpus = 16_384
observed_failures = 60
observed_days = 7
print(f"{observed_failures} failures in {observed_days} days on {n_gpus:,} GPUs")

# %% [markdown]
# ## Exercise 1 · The loss after every lever
#
# **Task.** Turn the log into a per-GPU-day rate, run the course's answer for this fleet, and report
# the loss after every lever. **Answer:** `answer` (float, % of the day, within 1 %). **Predict first:**
# the baseline of this fleet loses several percent of the day; how much is left after the levers?
#
# <details class="course-hint"><summary>Hint (open it when you are stuck, before the solution)</summary>
#
# The rate is failures / (GPUs x days) (`failures.rate_per_gpu_day`); `course_answer(Scenario().replace(n_gpus=..., rate_per_gpu_day=rate)).after.fraction_of_day` is a fraction, the answer a percentage.
#
# </details>

# %% tags=["solution"]
# Task: compute `rate`, the log's failures per GPU-day, and `answer`, the % of the day the fleet still loses after every lever (course_answer(...).after.fraction_of_day).
rate = failures.rate_per_gpu_day(observed_failures, n_gpus, observed_days)
fleet = course_answer(Scenario().replace(n_gpus=n_gpus, rate_per_gpu_day=rate))
answer = 100 * fleet.after.fraction_of_day
print(fleet.text)

# %%
nb09.after_levers_loss(answer)

# %% [markdown]
# **Why.** The exposure is this log's GPUs x days; the rest is [notebook 09](../notebooks/09-your-fleet.ipynb)'s chain. The fleet fails
# several times a day, so the levers matter more here than for the question's fleet:

# %%
print(f"rate {rate:.2e} per GPU-day = {rate / Scenario().rate_per_gpu_day:.2f}x the question's; "
      f"{n_gpus * rate:.2f} failures a day; after the levers {answer:.3f} % of the day")

# %% [markdown]
# ## Exercise 2 · How sure is the floor?
#
# A week of failures is a small count: the rate has an exact (Garwood) 95 % interval ([notebook 01](../notebooks/01-per-gpu-failure-rate.ipynb)).
#
# **Task.** Compute the floor lambda (D + R), in % of the day, at the *upper* end of the rate's 95 %
# interval. **Answer:** `answer` (float, % of the day, within 0.5 %). **Predict first:** how much above
# the floor at the point estimate?
#
# <details class="course-hint"><summary>Hint (open it when you are stuck, before the solution)</summary>
#
# `failures.rate_ci_per_gpu_day(..., confidence=0.95)` returns (low, high): run the answer at `high` and read `.after.floor_fraction`.
#
# </details>

# %% tags=["solution"]
# Task: compute `answer`, the floor (course_answer(...).after.floor_fraction, in % of the day) at the upper end of the 95% interval of the log's rate.
low, high = failures.rate_ci_per_gpu_day(observed_failures, n_gpus, observed_days, confidence=0.95)
answer = 100 * course_answer(Scenario().replace(n_gpus=n_gpus, rate_per_gpu_day=high)).after.floor_fraction
print(f"rate 95% interval {low:.2e} to {high:.2e} per GPU-day; floor at the upper end {answer:.3f} % of the day")

# %%
nb09.floor_upper_bound(answer)

# %% [markdown]
# **Why.** The floor lambda (D + R) is proportional to the rate, so its interval is the rate's interval
# scaled; a week's count leaves it uncertain by tens of percent either way:

# %%
point = 100 * course_answer(Scenario().replace(n_gpus=n_gpus, rate_per_gpu_day=rate)).after.floor_fraction
print(f"floor at the point estimate {point:.3f} %, upper end {answer:.3f} % ({answer / point - 1:+.0%})")

# %% [markdown]
# ## Exercise 3 · What would the course's 10-minute interval need?
#
# Young's interval tau* = sqrt(2 delta M) ([notebook 04](../notebooks/04-optimal-interval.ipynb)) can be read backwards: the write cost for which a
# given interval is optimal is delta = tau^2 / (2 M). The course's baseline checkpoints every
# `Scenario().checkpoint_interval_min` minutes.
#
# **Task.** Compute the blocking write cost that makes that interval optimal at this fleet's MTBF
# (from the log's rate). **Answer:** `answer` (float, seconds, within 1 %). **Predict first:** more or
# less than the question fleet's, and why?
#
# <details class="course-hint"><summary>Hint (open it when you are stuck, before the solution)</summary>
#
# The fleet MTBF in minutes is the minutes in a day / (GPUs x rate). `iv.write_cost_for_interval(tau, M)` gives the write in minutes; the answer is in seconds.
#
# </details>

# %% tags=["solution"]
# Task: compute `answer`, the blocking write cost in seconds for which Scenario().checkpoint_interval_min is Young's optimum at this fleet's MTBF (use `rate`).
mtbf_min = MINUTES_PER_DAY / (n_gpus * rate)
answer = 60 * iv.write_cost_for_interval(Scenario().checkpoint_interval_min, mtbf_min)
print(f"M = {mtbf_min:.0f} min; delta = tau^2 / (2 M) = {answer:.1f} s")

# %%
nb09.break_even_write_cost(answer)

# %% [markdown]
# **Why.** A shorter MTBF makes every rewind come round more often, so a fixed interval is optimal only
# for a *more expensive* write: the break-even grows as 1/M. Any write cheaper than that should run more
# often than every 10 minutes. Compare with what this fleet's synchronous and in-memory writes actually cost (the
# per-GPU shard at the measured bandwidths, `data/write_costs.csv`):

# %%
fleet = course_answer(Scenario().replace(n_gpus=n_gpus, rate_per_gpu_day=rate))
print(f"break-even {answer:.1f} s; this fleet's torch.save + fsync {60 * fleet.write_cost_before_min:.2f} s, "
      f"in-memory snapshot {60_000 * fleet.snapshot_cost_min:.1f} ms")
print(f"for the question's fleet (M = {Scenario().fleet_mtbf_hours * 60:.0f} min) the break-even is "
      f"{60 * iv.write_cost_for_interval(Scenario().checkpoint_interval_min, Scenario().fleet_mtbf_hours * 60):.1f} s")

# %% [markdown]
# Both of this fleet's writes are far cheaper than the break-even, so both should run more often than
# every 10 minutes: that is the shorter-interval lever of notebooks [03](../notebooks/03-anatomy-of-a-restart.ipynb) and [08](../notebooks/08-the-floor.ipynb), and why the answer's
# optimal interval is so short.
#
# ## Exercise 4 · When does a hot spare pay for itself?
#
# A hot spare shortens every restart's rescheduling to its own 150 s back to training, but its GPUs wait: one idle
# 8-GPU server is charged as lost job-time, `spare_gpus / N` of every day ([notebook 08](../notebooks/08-the-floor.ipynb), `course_lib.spares`).
# On N GPUs at the question's per-GPU rate r the spare saves `N r d` minutes a day (d: minutes of rescheduling it
# saves per failure) and costs `k T / N` (k spare GPUs, T minutes in a day).
#
# **Task.** Find the fleet size N at which the saving equals the cost. **Answer:** `answer` (GPUs, within 1 %; the
# inputs are in `x` below). **Predict first:** is it above or below the question's 4,096 GPUs?
#
# <details class="course-hint"><summary>Hint (open it when you are stuck, before the solution)</summary>
#
# N r d = k T / N: solve for N (it comes out as a square root).
#
# </details>

# %%
x = nb09.spare_inputs()
print(", ".join(f"{k} = {v:.4g}" for k, v in x.items()))

# %% tags=["solution"]
# Task: set `answer` to the fleet size (GPUs) at which x["saved_per_failure_min"] per failure, at x["rate_per_gpu_day"] per GPU-day, equals the idle cost of x["spare_gpus"].
answer = math.sqrt(x["spare_gpus"] * MINUTES_PER_DAY / (x["rate_per_gpu_day"] * x["saved_per_failure_min"]))
print(f"break-even at {answer:,.0f} GPUs")

# %%
nb09.spare_break_even_gpus(answer)

# %% [markdown]
# **Why.** The saving grows with the fleet (more failures a day), the cost shrinks (the same 8 GPUs are a smaller
# share of a larger job), so they cross once. The course's whole answer agrees to within its second-order terms (the
# day model charges the spare as a share of the GPUs paid for, and only while the job trains): its net hot-spare saving
# changes sign near there.

# %%
for n in (4096, int(answer) // 2, 2 * int(answer)):
    a = course_answer(Scenario().replace(n_gpus=n), spread_draws=0)
    print(f"{n:7,d} GPUs: net {a.spare.net:+.2f} min/day")

# %% [markdown]
# Below the break-even a dedicated spare costs more than it saves: share it across jobs (then it costs this job
# nothing), or continue elastically on one replica fewer until the node is repaired.
