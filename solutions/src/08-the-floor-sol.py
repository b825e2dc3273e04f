# %% [markdown]
# # 08 · Exercises: the floor
#
# Practice for [notebook 08](../notebooks/08-the-floor.ipynb): see how the floor's share of what is left
# grows with the fleet, redo Kokolis et al.'s ETTR projection by hand, derive when silent data
# corruption costs more than every other failure together, and see how the floor depends on the share of failures that hang.
#
# **How to work through it.** Work in [`exercises/08-the-floor-ex.ipynb`](../exercises/08-the-floor-ex.ipynb). Each exercise states the task,
# the form of the answer (a number in a stated unit, or a sympy expression) and the tolerance. Replace the
# cell that raises `NotImplementedError` with your code, keep the names the task asks for, and run the
# check cell below it: it says *Correct* or *Not yet* and names the likely mistake. Stuck? Open the **Hint** under the task before the solution. In the exercise notebook each **Why** is folded: open it once your answer is correct. Worked solutions:
# [`solutions/08-the-floor-sol.ipynb`](../solutions/08-the-floor-sol.ipynb) (the exercises are generated from it).
#
# **Time:** 30 minutes. **Prerequisites:** [notebook 08](../notebooks/08-the-floor.ipynb).

# %%
from course_lib.notebook import setup

rng = setup()

# %%
import sympy as sp

from course_lib import MINUTES_PER_DAY, Scenario
from course_lib import floor as fl
from course_lib import levers as lv
from course_lib import projection as pj
from course_lib.answer import answer as course_answer
from course_lib.check import nb08

here = course_answer()
f = here.after
print(f"{here.n_gpus:,} GPUs after every lever: {f.minutes_per_day:.2f} min/day = floor {f.floor_minutes_per_day:.2f} "
      f"+ rewind {f.rewind_minutes_per_day:.2f} + writes {f.write_minutes_per_day:.2f}")

# %% [markdown]
# ## Exercise 1 · The floor's share on a bigger fleet
#
# `course_answer(Scenario().replace(n_gpus=...))` (`course_lib.answer.answer`, [notebook 09](../notebooks/09-your-fleet.ipynb)'s function) applies every lever
# of [notebook 08](../notebooks/08-the-floor.ipynb) to a fleet at the question's per-GPU failure rate. Take `n_gpus` = 16,384 GPUs (a
# course choice, Llama 3's "up to 16K").
#
# **Task.** Compute the floor lambda (D + R) as a fraction of the loss after the levers on that fleet.
# **Answer:** `answer` (a fraction between 0 and 1, within 1 %). **Predict first:** the floor grows with
# the failure rate; the checkpoint term grows as sqrt(delta lambda). Does the floor's share grow or
# shrink, and by how much?
#
# <details class="course-hint"><summary>Hint (open it when you are stuck, before the solution)</summary>
#
# `course_answer(Scenario().replace(n_gpus=...)).after` is the day after every lever: it carries both `floor_minutes_per_day` and `minutes_per_day`, and the share is their ratio.
#
# </details>

# %%
n_gpus = 16_384

# %% tags=["solution"]
# Task: compute `answer`, the floor's share of the after-levers loss (floor_minutes_per_day / loss_minutes_per_day) on `n_gpus` GPUs.
big = course_answer(Scenario().replace(n_gpus=n_gpus)).after
answer = big.floor_minutes_per_day / big.minutes_per_day
print(f"{n_gpus:,} GPUs: floor {big.floor_minutes_per_day:.2f} of {big.minutes_per_day:.2f} min/day = {answer:.1%}; "
      f"snapshot {60_000 * big.write_cost_min:.1f} ms, interval {big.interval_min:.2f} min")

# %%
nb08.floor_share_at(answer)

# %% [markdown]
# **Why.** The floor lambda (D + R) grows in proportion to the fleet. The checkpoint term
# sqrt(2 delta lambda T) would grow as the square root, but delta shrinks too: each GPU's shard, and so
# its snapshot, is 1/N of the state. With lambda ~ N and delta ~ 1/N the checkpoint term stays put, and
# the floor takes over:

# %%
big = course_answer(Scenario().replace(n_gpus=n_gpus)).after
print(f"checkpoint term: {f.checkpoint_minutes_per_day:.2f} min/day at {here.n_gpus:,} GPUs, "
      f"{big.checkpoint_minutes_per_day:.2f} at {n_gpus:,}; floor {f.floor_minutes_per_day:.2f} -> {big.floor_minutes_per_day:.2f}")

# %% [markdown]
# ## Exercise 2 · Kokolis et al.'s ETTR by hand
#
# Kokolis et al. (*Revisiting Reliability in Large-Scale Machine Learning Research Clusters*, HPCA 2025 /
# arXiv:2410.21680, as reported; `data/floor_inputs.csv`) project the expected effective training time
# ratio as
# $$E[\mathrm{ETTR}] \approx \frac{1 - N_{nodes}\, r_f\, (u_0 + \Delta t/2)}{1 + w_{cp}/\Delta t},$$
# with $r_f$ failures per node-day and $u_0$, $\Delta t$, $w_{cp}$ in minutes. Their inputs are in `k`
# below. Take $\Delta t$ = `dt` = 15 minutes (a course choice, between their hourly and 5-minute
# projections).
#
# **Task.** Compute the expected ETTR from the formula. **Answer:** `answer` (a fraction between 0 and 1,
# within 0.5 %). **Predict first:** above or below 90 %?
#
# <details class="course-hint"><summary>Hint (open it when you are stuck, before the solution)</summary>
#
# N_nodes is the GPUs over the GPUs per node, and N_nodes r_f is failures per *day*: divide by the minutes in a day so that it multiplies minutes. Then the formula as written.
#
# </details>

# %%
k = pj.kokolis_projection()
dt = 15.0
print(f"GPUs {k.n_gpus:,.0f}, {k.gpus_per_node:g} per node, r_f {k.rf_per_node_day:g} per node-day, "
      f"u0 {k.restart_overhead_min:g} min, w_cp {k.write_cost_min:g} min")

# %% tags=["solution"]
# Task: compute `answer`, the expected ETTR of Kokolis et al.'s formula at their inputs `k` and the interval `dt` (minutes).
failures_per_min = k.n_gpus / k.gpus_per_node * k.rf_per_node_day / MINUTES_PER_DAY
answer = (1 - failures_per_min * (k.restart_overhead_min + dt / 2)) / (1 + k.write_cost_min / dt)
assert abs(answer - k.ettr(dt)) < 1e-12  # course_lib's implementation agrees
print(f"N_nodes r_f = {failures_per_min * MINUTES_PER_DAY:.2f} failures/day; each costs u0 + dt/2 = "
      f"{k.restart_overhead_min + dt / 2:g} min; ETTR = {answer:.4f}")

# %%
nb08.kokolis_ettr(answer)

# %% [markdown]
# **Why.** $N_{nodes} r_f$ is failures per *day* while $u_0$ and $\Delta t$ are minutes, so divide by the
# minutes in a day; each failure costs the restart plus, on average, half an interval. Compare with the
# paper's two printed projections (which `floor.ettr` reproduces in [notebook 08](../notebooks/08-the-floor.ipynb)):

# %%
for interval, printed in [(k.interval_hourly_min, k.ettr_hourly), (dt, None), (k.interval_short_min, k.ettr_short)]:
    note = f"(paper {printed:g})" if printed is not None else "(this exercise)"
    print(f"dt = {interval:4g} min: ETTR {k.ettr(interval):.3f} {note}")

# %% [markdown]
# ## Exercise 3 · When does silent data corruption cost more than the floor?
#
# [Notebook 08](../notebooks/08-the-floor.ipynb): a share s of the failures are silent data corruption (SDC), noticed only after a latency
# L; each costs L + D + R (rewind to a checkpoint before the corruption, then detect and restart). All
# unexpected failures together cost the floor lambda (D + R) per day.
#
# **Task.** Find the latency L at which the SDC cost per day, s lambda (L + D + R), equals the floor.
# **Answer:** `answer`, a sympy expression in the symbols `s, D, R` defined below (compared
# symbolically: exact). **Predict first:** does the crossover depend on the failure rate lambda?
#
# <details class="course-hint"><summary>Hint (open it when you are stuck, before the solution)</summary>
#
# `sp.solve(sp.Eq(left, right), L)`; watch which symbol cancels.
#
# </details>

# %%
L, s, D, R, lam = sp.symbols("L s D R lambda", positive=True)

# %% tags=["solution"]
# Task: solve s*lam*(L + D + R) = lam*(D + R) for L and set `answer` to the solution (a sympy expression in s, D, R).
(answer,) = sp.solve(sp.Eq(s * lam * (L + D + R), lam * (D + R)), L)
answer = sp.factor(answer)
answer

# %%
nb08.sdc_crossover(answer)

# %% [markdown]
# **Why.** lambda is on both sides and cancels: the crossover depends only on the SDC share and on the
# restart after the levers. With Table 5's SDC share (Llama 3, arXiv:2407.21783; shares from counts) and
# this fleet's D + R after the levers, an SDC noticed later than this costs more than every other
# failure's restart together ([notebook 08](../notebooks/08-the-floor.ipynb) prints the same crossover):

# %%
share = lv.table5_share(["Silent Data Corruption"])
minutes = float(answer.subs({s: share, D: f.stages.detect, R: (f.stages.reschedule + f.stages.reload)}))
print(f"SDC share {share:.2%}, D + R = {f.stages.restart_cost:.3f} min: crossover after {minutes:.1f} min = {minutes / 60:.2f} h")

# %% [markdown]
# The levers made D + R small, so the crossover is short: SDC detection (loss-spike and gradient checks)
# matters more, not less, once restarts are fast.
#
# ## Exercise 4 · The floor as a function of the hang share
#
# [Notebook 08](../notebooks/08-the-floor.ipynb) sums the floor over four failure modes; how the failures of Llama 3's Table 5 split
# between crashes and hangs is partly the course's judgement (`data/failure_modes.csv` gives a low, central and high
# share). A crash is seen within half a poll, a hang only when its timeout expires.
#
# **Task.** Compute the floor in minutes per day at 4,096 GPUs when a share `nb08.HANG_SHARE` of the failures hang,
# the other modes rescaled so the shares still sum to 1. **Answer:** `answer` (min/day, within 0.5 %).
# **Predict first:** does the floor move by a lot or a little, and what would make it move more?
#
# <details class="course-hint"><summary>Hint (open it when you are stuck, before the solution)</summary>
#
# `Scenario().replace(hang_share=...)` sets the hang share and rescales the others; `answer(that, spread_draws=0).after`
# is its day after the levers, and `fl.per_mode(day)` gives the floor of each mode in minutes per day.
#
# </details>

# %%
hang_share = nb08.HANG_SHARE

# %% tags=["solution"]
# Task: set `answer` to the floor (min/day) at 4,096 GPUs with the hang share set to `hang_share`, the other shares rescaled.
day = course_answer(Scenario().replace(hang_share=hang_share), spread_draws=0).after
per_mode = fl.per_mode(day)
answer = sum(per_mode.values())
print(", ".join(f"{m} {v:.2f}" for m, v in per_mode.items()) + f": floor {answer:.2f} min/day")

# %%
nb08.floor_at_hang_share(answer)

# %% [markdown]
# **Why.** The floor is linear in the shares, so it moves with the hang share at a slope set by how much more a hang
# costs than the average other failure: the hang timeout. With NVRx's timeout of five times the step, a hang costs
# little more than a crash and the share barely matters; with NCCL's ten-minute collective timeout (no heartbeat
# tuned) the same shares give a very different floor:

# %%
for timeout_min in (None, 10.0):
    row = [course_answer(Scenario().replace(hang_share=h, hang_timeout_min=timeout_min), spread_draws=0).after.floor_minutes_per_day
           for h in (0.2, 0.4, 0.6, 0.8)]
    label = f"timeout {60 * Scenario().replace(hang_timeout_min=timeout_min).hang_timeout_min:.0f} s"
    print(f"{label:16s} floor at hang share 0.2 / 0.4 / 0.6 / 0.8: " + " / ".join(f"{v:.2f}" for v in row) + " min/day")

# %% [markdown]
# So the uncertain hang share matters only as much as the hang timeout lets it: tune the timeout first, and the
# judgement about the share stops mattering.
