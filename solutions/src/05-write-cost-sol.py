# %% [markdown]
# # 05 · Exercises: the write cost
#
# Practice for [notebook 05](../notebooks/05-write-cost.ipynb): size one GPU's shard of a model's
# training state, turn a measured bandwidth into a write cost and an interval, and derive what an
# asynchronous checkpoint changes in the square-root law. No benchmark runs here: the exercises use the
# course's H200 measurements in `data/`, so the answers are the same on every machine.
#
# **How to work through it.** Work in [`exercises/05-write-cost-ex.ipynb`](../exercises/05-write-cost-ex.ipynb). Each exercise states the task,
# the form of the answer (a number in a stated unit, or a sympy expression) and the tolerance. Replace the
# cell that raises `NotImplementedError` with your code, keep the names the task asks for, and run the
# check cell below it: it says *Correct* or *Not yet* and names the likely mistake. Stuck? Open the **Hint** under the task before the solution. In the exercise notebook each **Why** is folded: open it once your answer is correct. Worked solutions:
# [`solutions/05-write-cost-sol.ipynb`](../solutions/05-write-cost-sol.ipynb) (the exercises are generated from it).
#
# **Time:** 25 minutes. **Prerequisites:** notebooks [04](../notebooks/04-optimal-interval.ipynb) and [05](../notebooks/05-write-cost.ipynb).

# %%
from course_lib.notebook import setup

rng = setup()

# %%
import sympy as sp

from course_lib import Scenario
from course_lib import interval as iv
from course_lib.check import nb05
from course_lib.data import load_table

scenario = Scenario()
models = dict(zip(load_table("model_sizes.csv")["model"], load_table("model_sizes.csv")["params"]))
h200 = {r["key"]: r for r in load_table("h200_host.csv").rows}
bytes_per_param = scenario.checkpoint_bytes_per_param
GIB = 2**30  # bytes in a GiB
print(f"models: {', '.join(f'{m} ({p:.3g} parameters)' for m, p in models.items())}")
print(f"checkpoint content: {bytes_per_param:g} bytes per parameter; fleet: {scenario.n_gpus:,} GPUs")

# %% [markdown]
# ## Exercise 1 · One GPU's share of a 70B model
#
# A checkpoint of mixed-precision Adam saves 12 bytes per parameter, the fp32 master weights and Adam's two
# moments (ZeRO, Rajbhandari et al., SC 2020, section 3.1; `data/training_step.csv`), and a fully sharded job
# splits them evenly over its GPUs.
# Model sizes: Llama 3 (Llama Team, arXiv:2407.21783, 2024; `data/model_sizes.csv`).
#
# **Task.** Compute the training state each GPU holds for Llama 3 70B on the question's fleet.
# **Answer:** `answer` (float, GiB = 2^30 bytes, within 0.5 %). **Predict first:** more or less than the
# 64 MiB state [notebook 05](../notebooks/05-write-cost.ipynb) measures by default?
#
# <details class="course-hint"><summary>Hint (open it when you are stuck, before the solution)</summary>
#
# Parameters x bytes per parameter / GPUs is the bytes each GPU holds; a GiB is 2^30 bytes (`GIB`), not 10^9.
#
# </details>

# %% tags=["solution"]
# Task: compute `answer`, the GiB of training state per GPU for "Llama 3 70B" sharded over `scenario.n_gpus` GPUs at `bytes_per_param` bytes per parameter.
nbytes = models["Llama 3 70B"] * bytes_per_param / scenario.n_gpus
answer = nbytes / GIB
print(f"{models['Llama 3 70B']:.3g} x {bytes_per_param:g} B / {scenario.n_gpus:,} = {nbytes:,.0f} bytes = {answer:.4f} GiB per GPU")

# %%
nb05.shard_gib(answer)

# %% [markdown]
# **Why.** Twelve bytes per parameter, not two: a checkpoint must hold everything training needs to
# resume (the fp32 master weights and Adam's two moments; the bf16 weights are recast from the master
# copy, and gradients are not kept across a step boundary), and sharding divides it by every GPU in the job. GB and GiB differ by far more than the 0.5 % tolerance.

# %%
print(f"{answer * 1024:.0f} MiB per GPU: {answer * 1024 / 64:.1f}x notebook 05's default 64 MiB state")

# %% [markdown]
# ## Exercise 2 · The interval a synchronous save forces
#
# The course measured `torch.save` + fsync to local disk on one H200 host (`data/h200_host.csv`
# [@h200-measurement]). The fleet MTBF is the question's, in minutes (`mtbf_min` below).
#
# **Task.** Compute the blocking write cost delta of the Llama 3 405B shard on the question's fleet at
# that bandwidth, then Young's optimal interval sqrt(2 delta M). **Answer:** `answer` (float, minutes,
# within 1 %); keep the write cost as `delta_min` (minutes): the explanation below uses it.
# **Predict first:** longer or shorter than the course's 10-minute baseline interval?
#
# <details class="course-hint"><summary>Hint (open it when you are stuck, before the solution)</summary>
#
# Shard bytes / (bandwidth in GB/s x 10^9) is the write in seconds; Young's formula wants it in minutes, like `mtbf_min`: then `iv.young_interval(delta_min, mtbf_min)`.
#
# </details>

# %%
mtbf_min = scenario.fleet_mtbf_hours * 60
print(f"fleet MTBF M = {mtbf_min:.0f} min")

# %% tags=["solution"]
# Task: compute `delta_min`, the minutes the "Llama 3 405B" shard blocks at the H200 host's torch.save + fsync bandwidth (h200["torch_save_fsync"], GB/s), then `answer`, Young's interval in minutes at `mtbf_min`.
shard = models["Llama 3 405B"] * bytes_per_param / scenario.n_gpus
delta_min = shard / (h200["torch_save_fsync"]["value"] * 1e9) / 60
answer = iv.young_interval(delta_min, mtbf_min)
print(f"delta = {shard / 1e9:.2f} GB / {h200['torch_save_fsync']['value']:g} GB/s = {60 * delta_min:.2f} s; "
      f"M = {mtbf_min:.0f} min; tau* = {answer:.2f} min")

# %%
nb05.sync_save_interval(answer)

# %% [markdown]
# **Why.** Put delta and M in the same unit before taking the root: mixing seconds and minutes is off by a
# factor sqrt(60). The waste at that interval is sqrt(2 delta / M) of the time, the price of a
# synchronous save:

# %%
print(f"interval {answer:.2f} min vs the baseline's {scenario.checkpoint_interval_min:g} min; "
      f"write + rewind waste at tau*: {iv.waste_fraction(answer, delta_min, mtbf_min):.2%} of the time")

# %% [markdown]
# ## Exercise 3 · An asynchronous checkpoint: blocking and durable are different times
#
# An asynchronous save (DCP `async_save`, or a snapshot with a background persist) blocks training for
# delta_b, then writes in the background; the checkpoint is durable only delta_d later. A failure
# before that moment rewinds to the *previous* checkpoint, so for delta_d < tau the mean rewind is
# tau/2 + delta_d. The first-order waste per unit of useful work is
# $$W(\tau) = \frac{\delta_b}{\tau} + \frac{\tau/2 + \delta_d + R}{M}.$$
#
# **Task.** Find the interval tau* that minimises W. **Answer:** `answer`, a sympy expression in the
# symbols `delta_b, delta_d, M` defined below (compared symbolically: exact). **Predict first:** does a
# slow background persist (large delta_d) lengthen the best interval?
#
# <details class="course-hint"><summary>Hint (open it when you are stuck, before the solution)</summary>
#
# As in notebook 04: solve dW/dtau = 0. Does delta_d multiply tau anywhere, or does it vanish from the derivative?
#
# </details>

# %%
tau, delta_b, delta_d, M, R = sp.symbols("tau delta_b delta_d M R", positive=True)

# %% tags=["solution"]
# Task: write the waste `W` as a function of tau, then set `answer` to the interval tau* that minimises it (a sympy expression).
W = delta_b / tau + (tau / 2 + delta_d + R) / M
(answer,) = sp.solve(sp.diff(W, tau), tau)
assert sp.diff(W, tau, 2).subs(tau, answer).is_positive  # a minimum
answer

# %%
nb05.async_interval(answer)

# %% [markdown]
# **Why.** delta_d adds the same amount to every rewind, whatever the interval, so it drops out of the
# derivative: the interval is set by what *blocks*. The persist still costs: it adds delta_d / M to the
# waste at the optimum, and the next save cannot start before it ends ([notebook 06](../notebooks/06-square-root-pareto.ipynb)'s bound on the
# interval). The H200 host's DCP `async_save` measurements (`data/h200_host.csv`) put numbers on both:

# %%
w_star = sp.simplify(W.subs(tau, answer))
print("W at tau* =", w_star)
block, total = h200["dcp_async_blocking"]["value"], h200["dcp_async_total"]["value"]
print(f"DCP async_save of a {h200['dcp_state']['value']:g} GiB state: blocks {block:g} s, durable after {total:g} s "
      f"({total / block:.0f}x later); only the {block:g} s enters tau*")
