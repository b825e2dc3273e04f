# %% [markdown]
# # 06 · Exercises: the square-root Pareto
#
# Practice for [notebook 06](../notebooks/06-square-root-pareto.ipynb): derive how the optimal interval
# scales with the fleet when every GPU writes only its shard, check it on the in-memory snapshot, and
# price a 10-second interval in copy bandwidth.
#
# **How to work through it.** Work in [`exercises/06-square-root-pareto-ex.ipynb`](../exercises/06-square-root-pareto-ex.ipynb). Each exercise states the
# task, the form of the answer (a number in a stated unit, or a sympy expression) and the tolerance.
# Replace the cell that raises `NotImplementedError` with your code, keep the names the task asks for, and
# run the check cell below it: it says *Correct* or *Not yet* and names the likely mistake. Stuck? Open the **Hint** under the task before the solution. In the exercise notebook each **Why** is folded: open it once your answer is correct. Worked solutions:
# [`solutions/06-square-root-pareto-sol.ipynb`](../solutions/06-square-root-pareto-sol.ipynb) (the exercises are generated from it).
#
# **Time:** 20 minutes. **Prerequisites:** notebooks [04](../notebooks/04-optimal-interval.ipynb) and [06](../notebooks/06-square-root-pareto.ipynb).

# %%
from course_lib.notebook import setup

rng = setup()

# %%
import sympy as sp

from course_lib import Scenario
from course_lib import interval as iv
from course_lib.check import nb06
from course_lib.data import load_table

scenario = Scenario()
M = scenario.fleet_mtbf_hours * 60  # minutes
levers = load_table("levers.csv")
model_params = float(levers.where("key", "model_params")["value"][0])
bytes_per_param = float(levers.where("key", "state_bytes_per_param")["value"][0])
snapshot_gbps = float(load_table("write_costs.csv").where("regime", "snapshot_pinned_host")["bandwidth_gb_per_s"][0])
print(f"{model_params:.3g} parameters x {bytes_per_param:g} B of state; snapshot copy {snapshot_gbps:g} GB/s; "
      f"{scenario.n_gpus:,} GPUs at {scenario.rate_per_gpu_day:.2e} failures per GPU-day, M = {M:.0f} min")

# %% [markdown]
# ## Exercise 1 · The interval against the fleet size
#
# A fully sharded job of N GPUs holds S bytes of training state; each GPU copies its shard S/N at B
# bytes per minute, so the blocking cost is delta = S/(N B). Each GPU fails at rate r per minute, so the
# fleet MTBF is M = 1/(N r) ([notebook 02](../notebooks/02-fleet-mtbf.ipynb)).
#
# **Task.** Derive Young's optimal interval tau* = sqrt(2 delta M) as a function of N. **Answer:**
# `answer`, a sympy expression in the symbols `S, B, r, N` defined below (compared symbolically:
# exact). **Predict first:** four times the GPUs: a shorter interval by 2x, by 4x, or unchanged?
#
# <details class="course-hint"><summary>Hint (open it when you are stuck, before the solution)</summary>
#
# Substitute both into sqrt(2 delta M) and `sp.simplify`; with positive symbols the square root of 1/N^2 is 1/N.
#
# </details>

# %%
S, B, r, N = sp.symbols("S B r N", positive=True)

# %% tags=["solution"]
# Task: put delta = S/(N B) and M = 1/(N r) into Young's tau* = sqrt(2 delta M) and set `answer` to the simplified expression.
answer = sp.simplify(sp.sqrt(2 * (S / (N * B)) * (1 / (N * r))))
answer

# %%
nb06.fleet_scaling(answer)

# %% [markdown]
# **Why.** Both factors under the root shrink as 1/N, so the interval shrinks as 1/N, not 1/sqrt(N). The
# waste at the optimum, sqrt(2 delta / M), does not depend on N at all: the smaller shard exactly pays
# for the more frequent failures ([notebook 08](../notebooks/08-the-floor.ipynb) sees the same thing in the after-levers loss).

# %%
print("tau*(4N) / tau*(N) =", sp.simplify(answer.subs(N, 4 * N) / answer))
print("waste at tau*: sqrt(2 delta / M) =", sp.simplify(sp.sqrt(2 * (S / (N * B)) / (1 / (N * r)))))

# %% [markdown]
# ## Exercise 2 · The snapshot's interval on 16,384 GPUs
#
# Take `n_big` = 16,384 GPUs (a course choice, [notebook 06](../notebooks/06-square-root-pareto.ipynb)'s "Try it") at the question's per-GPU rate,
# the 405B state (`data/levers.csv`) and the snapshot to pinned host memory (`snapshot_gbps`, this
# course's H200 measurement, `data/write_costs.csv`). As in [notebook 06](../notebooks/06-square-root-pareto.ipynb) the copy blocks (delta = t_copy)
# and the interval cannot be shorter than the copy: `iv.bounded_interval(t_copy, M, t_copy)`.
#
# **Task.** Compute the optimal interval between snapshots on that fleet. **Answer:** `answer` (float,
# seconds, within 1 %). **Predict first:** use exercise 1.
#
# <details class="course-hint"><summary>Hint (open it when you are stuck, before the solution)</summary>
#
# Both the shard (divided by `n_big`) and the MTBF (1 / (n_big x rate), in minutes) change with the fleet. The copy time is the shard over the bandwidth; keep every time in minutes for `iv.bounded_interval`, then convert the interval to seconds.
#
# </details>

# %%
n_big = 16_384

# %% tags=["solution"]
# Task: compute `answer`, the optimal interval in seconds between in-memory snapshots on `n_big` GPUs (shard and MTBF both for n_big GPUs; iv.bounded_interval with delta = t_copy).
shard_big = model_params * bytes_per_param / n_big / 1e9  # GB per GPU
copy_min = shard_big / snapshot_gbps / 60
m_big = 24 * 60 / (n_big * scenario.rate_per_gpu_day)
answer = 60 * iv.bounded_interval(copy_min, m_big, copy_min)
print(f"shard {shard_big:.3f} GB, copy {copy_min * 60e3:.2f} ms, M = {m_big:.0f} min: snapshot every {answer:.2f} s")

# %%
nb06.snapshot_interval_at(answer)

# %% [markdown]
# **Why.** Exercise 1 in numbers: the shard and the MTBF both shrink with the fleet, so the interval
# shrinks in proportion. Against the question's fleet:

# %%
shard_small = model_params * bytes_per_param / scenario.n_gpus / 1e9
small = 60 * iv.bounded_interval(shard_small / snapshot_gbps / 60, M, shard_small / snapshot_gbps / 60)
print(f"{scenario.n_gpus:,} GPUs: every {small:.1f} s; {n_big:,} GPUs: every {answer:.1f} s ({small / answer:.2f}x shorter)")

# %% [markdown]
# ## Exercise 3 · What a 10-second interval costs in bandwidth
#
# **Task.** On the question's fleet (M above, the 405B shard over `scenario.n_gpus` GPUs), how fast must
# the snapshot copy run for a `target_s` = 10-second interval (a course choice) to be Young-optimal?
# Invert the square root, delta = tau^2 / (2 M), then divide the shard by delta. **Answer:** `answer`
# (float, GB/s, within 1 %). **Predict first:** is the H200 host's pinned-memory copy fast enough?
#
# <details class="course-hint"><summary>Hint (open it when you are stuck, before the solution)</summary>
#
# `iv.write_cost_for_interval(tau, M)` is tau^2 / (2 M), minutes in and minutes out. The bandwidth is the shard in GB divided by that write cost in seconds.
#
# </details>

# %%
target_s = 10.0

# %% tags=["solution"]
# Task: compute `answer`, the copy bandwidth in GB/s for which a `target_s`-second interval is Young-optimal for the 405B shard on the question's fleet.
shard = model_params * bytes_per_param / scenario.n_gpus / 1e9  # GB
delta_s = 60 * iv.write_cost_for_interval(target_s / 60, M)
answer = shard / delta_s
print(f"delta = tau^2 / 2M = {delta_s * 1e3:.2f} ms for a {shard:.2f} GB shard: {answer:,.0f} GB/s")

# %%
nb06.bandwidth_for_interval(answer)

# %% [markdown]
# **Why.** The budget falls with the *square* of the interval, so a ten-second interval asks for a copy
# far faster than any host link the course measured (`data/h200_host.csv`); only a copy inside GPU memory
# is fast enough, and that copy does not survive the loss of the GPU. This is why in-memory checkpointing
# settles at about a minute at this fleet size:

# %%
h200 = {row["key"]: row for row in load_table("h200_host.csv").rows}
for key in ("gpu_to_pinned", "gpu_d2d"):
    print(f"{h200[key]['path']:32s} {h200[key]['value']:7g} GB/s: {h200[key]['value'] / answer:.2f}x the bandwidth needed")
