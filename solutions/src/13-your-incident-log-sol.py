# %% [markdown]
# # 13 · Exercises: your incident log
#
# Practice for [notebook 13](../notebooks/13-your-incident-log.ipynb): the InfiniteHBD fault trace
# (stepfun-ai/InfiniteHBD-Trace [@infinitehbd-trace]) read into the course's schema, then three numbers a
# reliability review asks for first: the fleet's interruption rate per GPU-day, whether its nodes are
# identical, and the spare pool its repair times call for. Every answer comes from the vendored trace, so it
# is the same on every machine.
#
# **How to work through it.** Work in [`exercises/13-your-incident-log-ex.ipynb`](../exercises/13-your-incident-log-ex.ipynb). Each exercise states
# the task, the form of the answer (a number in a stated unit) and the tolerance. Replace the cell that
# raises `NotImplementedError` with your code, keep the names the task asks for, and run the check cell
# below it: it says *Correct* or *Not yet* and names the likely mistake. Stuck? Open the **Hint** under the task before the solution. In the exercise notebook each **Why** is folded: open it once your answer is correct. Worked solutions:
# [`solutions/13-your-incident-log-sol.ipynb`](../solutions/13-your-incident-log-sol.ipynb) (the exercises are generated from it).
#
# **Time:** 25 minutes. **Prerequisites:** [notebook 13](../notebooks/13-your-incident-log.ipynb).

# %%
from course_lib.notebook import setup

rng = setup()

# %%
import math

import numpy as np
from scipy import stats

from course_lib import incidents as inc
from course_lib.check import nb13
from course_lib.incidents import policy

log = inc.load_trace()  # every fault of the trace, as incidents (start, end, node, cause)
fleet = inc.trace_fleet()  # 400 servers (the trace's README) x 8 GPUs (the course's assumption)
interrupts = policy.classify(log).interruption  # True where the fault interrupts a job (data/incident_classes.csv)
print(f"{len(log)} faults, {interrupts.sum()} of them job interruptions, over {log.days:.2f} days; "
      f"{len(np.unique(log.node))} servers appear in the trace, the fleet has {fleet.n_nodes} x {fleet.gpus_per_node} GPUs")

# %% [markdown]
# ## Exercise 1 · The fleet's interruption rate
#
# **Task.** Compute the trace's job interruptions per GPU-day: the interruptions over the fleet's GPU-days
# (every server, 8 GPUs each, over the log's `log.days`). **Answer:** `answer` (float, per GPU-day, within 0.5 %).
# **Predict first:** above or below Llama 3's 4.7e-4?
#
# <details class="course-hint"><summary>Hint (open it when you are stuck, before the solution)</summary>
#
# `interrupts.sum()` counts the interruptions; the exposure is `fleet.n_nodes * fleet.gpus_per_node * log.days`,
# with the servers that never failed included.
#
# </details>

# %% tags=["solution"]
# Task: set `answer` to the trace's interruptions per GPU-day over the whole fleet.
answer = interrupts.sum() / (fleet.n_nodes * fleet.gpus_per_node * log.days)
print(f"{answer:.3e} interruptions per GPU-day")

# %%
nb13.trace_rate(answer)

# %% [markdown]
# **Why.** A rate is a count over an exposure, and the exposure is every GPU that could have failed. The trace
# lists only the servers that had a fault; dividing by those alone overstates the rate by the fleet's size over
# theirs. And a fault found by a stress test on a node out of service interrupted no job:

# %%
seen = len(np.unique(log.node))
print(f"over the {seen} servers in the trace only: {answer * fleet.n_nodes / seen:.3e}; every fault counted: "
      f"{len(log) / (fleet.n_nodes * fleet.gpus_per_node * log.days):.3e}")

# %% [markdown]
# ## Exercise 2 · Are the nodes identical?
#
# **Task.** Compute the index of dispersion of the interruptions per node: their variance (`ddof=1`) over their
# mean, across **all** 400 nodes of the fleet. **Answer:** `answer` (float, within 1 %). **Predict first:** for
# identical Poisson nodes it would be about 1; more or less here?
#
# <details class="course-hint"><summary>Hint (open it when you are stuck, before the solution)</summary>
#
# `np.bincount(log.node[interrupts])` gives the interruptions of each node that appears in the log; the nodes that
# never failed are zeros: append `fleet.n_nodes - (number of nodes with one)` zeros before taking the variance.
#
# </details>

# %% tags=["solution"]
# Task: set `answer` to variance / mean of the interruptions per node, the nodes without one included.
per_node = np.bincount(log.node[interrupts])
per_node = per_node[per_node > 0]
counts = np.concatenate([per_node, np.zeros(fleet.n_nodes - per_node.size)])
answer = counts.var(ddof=1) / counts.mean()
print(f"mean {counts.mean():.2f}, variance {counts.var(ddof=1):.2f}: index of dispersion {answer:.2f}")

# %%
nb13.dispersion_ratio(answer)

# %% [markdown]
# **Why.** For identical nodes the counts are Poisson, so the variance equals the mean. The index of dispersion
# times (n - 1) is chi-square with n - 1 degrees of freedom under that model, which makes the ratio a test:

# %%
counts = inc.analysis.node_counts(log.where(interrupts), fleet.n_nodes)  # the same counts, from course_lib
per_node = counts[counts > 0]
d = answer * (counts.size - 1)
print(f"statistic {d:.0f} on {counts.size - 1} dof: p = {stats.chi2.sf(d, counts.size - 1):.1g}; without the zeros the ratio "
      f"would be {per_node.var(ddof=1) / per_node.mean():.2f}: the quiet nodes are most of the evidence")

# %% [markdown]
# ## Exercise 3 · The spare pool
#
# A job of 4,096 GPUs holds 512 of these nodes. Each interruption takes a node out until its repair; a spare
# takes its place. **Task.** Compute how many spare nodes the job needs so that a failure finds one free with
# 99 % probability: the number of the job's nodes in repair is Poisson with mean lambda x E[R] (lambda the job's
# interruptions per day at the fleet's rate per node-day, E[R] the **mean** repair time of an interrupted node in
# days), and a failure finds a spare when fewer than s are out. **Answer:** `answer` (int, nodes, within 1 %).
# **Predict first:** more or fewer than 10?
#
# <details class="course-hint"><summary>Hint (open it when you are stuck, before the solution)</summary>
#
# Repair times are `log.duration_days` (end - start) of the interruptions; lambda = interruptions / (400 x days) x 512;
# the smallest s with P(N <= s - 1) >= 0.99 is `stats.poisson.ppf(0.99, m) + 1`.
#
# </details>

# %% tags=["solution"]
# Task: set `answer` to the spare nodes a 512-node job needs for a free one with 99 % probability.
job_nodes = math.ceil(4096 / fleet.gpus_per_node)
lam = interrupts.sum() / (fleet.n_nodes * log.days) * job_nodes
mean_repair = log.duration_days[interrupts].mean()
answer = int(stats.poisson.ppf(0.99, lam * mean_repair)) + 1
print(f"{lam:.2f} interruptions a day x {mean_repair:.2f} days = {lam * mean_repair:.1f} nodes out on average: {answer} spares")

# %%
nb13.spare_pool(answer)

# %% [markdown]
# **Why.** The number in repair depends on the mean repair time only (an M/G/infinity queue), and a heavy tail
# makes the mean much longer than the median: a pool sized on the median would run dry. Bursts take several nodes
# out at once, which the Poisson number does not know; replaying the trace's own faults and repairs on the job
# asks for more:

# %%
repairs = log.duration_days[interrupts]
replay, seen_out = inc.analysis.replay_spares(log.where(interrupts), math.ceil(4096 / fleet.gpus_per_node), fleet.n_nodes, 0.99)
print(f"median repair {24 * np.median(repairs):.0f} h, mean {24 * repairs.mean():.0f} h; "
      f"replaying the trace: {replay} spares (at most {seen_out.max()} out at once)")
