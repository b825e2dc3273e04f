# %% [markdown]
# # 04 · Exercises: the optimal checkpoint interval
#
# Practice for [notebook 04](../notebooks/04-optimal-interval.ipynb): find the exact optimum for an
# expensive write, derive what planned maintenance does to the interval, and measure with the simulator
# how flat the waste curve is.
#
# **How to work through it.** Work in [`exercises/04-optimal-interval-ex.ipynb`](../exercises/04-optimal-interval-ex.ipynb). Each exercise states the
# task, the form of the answer (a number in a stated unit, or a sympy expression) and the tolerance.
# Replace the cell that raises `NotImplementedError` with your code, keep the names the task asks for, and
# run the check cell below it: it says *Correct* or *Not yet* and names the likely mistake. Stuck? Open the **Hint** under the task before the solution. In the exercise notebook each **Why** is folded: open it once your answer is correct. Worked solutions:
# [`solutions/04-optimal-interval-sol.ipynb`](../solutions/04-optimal-interval-sol.ipynb) (the exercises are generated from it).
#
# **Time:** 25 minutes. **Prerequisites:** [notebook 04](../notebooks/04-optimal-interval.ipynb).

# %%
from course_lib.notebook import setup

rng = setup()

# %%
import math

import sympy as sp

from course_lib import Scenario
from course_lib import interval as iv
from course_lib.check import nb04
from course_lib.data import load_table
from course_lib.simulate import simulate_job

scenario = Scenario()
M = scenario.fleet_mtbf_hours * 60  # fleet MTBF in minutes
R = scenario.minutes_per_restart - scenario.mean_rewind_min  # restart cost without the rewound work
costs = load_table("write_costs.csv")
print(f"M = {M:.0f} min, R = {R:.0f} min; write costs (s): "
      + ", ".join(f"{r['regime']} {r['blocking_s']:g}" for r in costs.rows if not math.isnan(r["blocking_s"])))

# %% [markdown]
# ## Exercise 1 · The exact optimum for a 5-minute write
#
# Large research clusters write synchronous checkpoints to a parallel file system that block training
# for about five minutes (Kokolis et al., HPCA 2025, as reported; row `pfs_sync` of
# `data/write_costs.csv`, in seconds).
#
# **Task.** Compute the exact optimal interval of Daly's complete model (Lambert W) for that write at
# the question's MTBF `M`. **Answer:** `answer` (float, minutes, within 0.5 %). **Predict first:** is
# Young's sqrt(2 delta M) too long or too short here, and by more or less than 0.5 %?
#
# <details class="course-hint"><summary>Hint (open it when you are stuck, before the solution)</summary>
#
# The `blocking_s` column is in seconds and `M` in minutes: convert the write first. `iv.optimal_interval_exact(delta, M)` solves Daly's model exactly.
#
# </details>

# %% tags=["solution"]
# Task: set `delta_pfs` to the pfs_sync write cost of data/write_costs.csv in minutes, then `answer` to the exact optimal interval in minutes (interval.optimal_interval_exact) at the MTBF `M`.
delta_pfs = costs.where("regime", "pfs_sync").rows[0]["blocking_s"] / 60
answer = iv.optimal_interval_exact(delta_pfs, M)
print(f"delta = {delta_pfs:g} min, delta/M = {delta_pfs / M:.1e}: exact {answer:.2f} min, Young {iv.young_interval(delta_pfs, M):.2f} min, "
      f"Daly {iv.daly_interval(delta_pfs, M):.2f} min")

# %%
nb04.pfs_interval(answer)

# %% [markdown]
# **Why.** Young's formula forgets that failures also strike during the write and the restart; at this
# delta/M it overshoots by more than the tolerance, while Daly's series is as good as exact. The optimum
# is in the hourly regime of large clusters:

# %%
print(f"Young overshoots by {iv.young_interval(delta_pfs, M) / answer - 1:.1%}; Daly's series is off by "
      f"{iv.daly_interval(delta_pfs, M) / answer - 1:.3%}; optimum {answer / 60:.2f} h")

# %% [markdown]
# ## Exercise 2 · Planned stops
#
# Besides failures (mean time M between them), a job is stopped for planned maintenance every P
# minutes (Llama 3's snapshot had planned interruptions besides the unexpected ones, arXiv:2407.21783).
# A planned stop takes a checkpoint just before it, so it rewinds nothing, but it still costs a restart
# R. Per minute of useful work:
# $$W(\tau) = \frac{\delta}{\tau} + \frac{\tau/2 + R}{M} + \frac{R}{P}.$$
#
# **Task.** Find the interval tau* that minimises W. **Answer:** `answer`, a sympy expression in the
# symbols defined below (compared symbolically: exact). **Predict first:** do planned stops make you
# checkpoint more often?
#
# <details class="course-hint"><summary>Hint (open it when you are stuck, before the solution)</summary>
#
# Which terms of W depend on tau at all? Differentiate with respect to tau, set it to zero and solve (`sp.solve(sp.diff(W, tau), tau)` returns a list: take its element).
#
# </details>

# %%
tau, delta, M_, R_, P = sp.symbols("tau delta M R P", positive=True)

# %% tags=["solution"]
# Task: write the waste `W` as a function of tau (symbols tau, delta, M_, R_, P), then set `answer` to the interval tau* that minimises it.
W = delta / tau + (tau / 2 + R_) / M_ + R_ / P
(answer,) = sp.solve(sp.diff(W, tau), tau)
assert sp.diff(W, tau, 2).subs(tau, answer).is_positive  # a minimum
answer

# %%
nb04.planned_stops_interval(answer)

# %% [markdown]
# **Why.** Only events that rewind work enter the tau/2 term; a stop that checkpoints first adds R/P, a
# constant, and a constant never moves a minimum. Treating planned stops as failures (a shorter M)
# would checkpoint too often. The waste at the optimum does grow:

# %%
print("W at tau* =", sp.simplify(W.subs(tau, answer)))

# %% [markdown]
# ## Exercise 3 · How flat is the minimum?
#
# [Notebook 04](../notebooks/04-optimal-interval.ipynb)'s baseline write is the course's synchronous checkpoint: each GPU's shard of the
# 405B model through `torch.save` + `fsync` at the bandwidth notebook 05 measures (`scenario.write_cost_min`).
#
# **Task.** Checkpoint at *twice* the exact optimal interval for that write and measure the waste with
# the simulator: `simulate_job(work, interval, write_cost, mtbf, restart, n_runs=4000, seed=...)` over
# a month of useful work (`work` below), restart `R`, then `sim.mean("waste")`. **Answer:** `answer`
# (a fraction of useful work, within 1 %). **Predict first:** how much more waste than at the optimum:
# double, +50 %, or a few percent?
#
# <details class="course-hint"><summary>Hint (open it when you are stuck, before the solution)</summary>
#
# First the exact optimum for `delta_sync` (`iv.optimal_interval_exact`), then `simulate_job(work, 2 * that, delta_sync, M, R, n_runs=4000, seed=...)` and `sim.mean("waste")`.
#
# </details>

# %%
work = 30 * 24 * 60.0  # a month of useful work (minutes)
delta_sync = scenario.write_cost_min  # minutes

# %% tags=["solution"]
# Task: simulate the job at twice the exact optimal interval for `delta_sync` (4,000 runs of `work` minutes, restart `R`) and set `answer` to the mean simulated waste.
tau_opt = iv.optimal_interval_exact(delta_sync, M)
sim = simulate_job(work, 2 * tau_opt, delta_sync, M, R, n_runs=4000, seed=4)
answer = sim.mean("waste")
print(f"interval {2 * tau_opt:.1f} min (2 x {tau_opt:.1f}): simulated waste {answer:.4%} +- {sim.stderr('waste'):.4%}")

# %%
nb04.waste_at_twice_optimum(answer)

# %% [markdown]
# **Why.** Near its minimum the waste is flat: doubling the interval doubles the rewind term and halves
# the write term, and the two move in opposite directions. The restart's R/M is paid whatever the
# interval, so it dilutes the difference further:

# %%
at_opt = iv.expected_waste(iv.optimal_interval_exact(delta_sync, M), delta_sync, M, R)
print(f"waste at the optimum {at_opt:.3%}, at twice it {answer:.3%}: +{answer / at_opt - 1:.0%}")
