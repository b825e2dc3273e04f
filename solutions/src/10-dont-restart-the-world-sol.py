# %% [markdown]
# # 10 · Exercises: don't restart the world
#
# Practice for [notebook 10](../notebooks/10-dont-restart-the-world.ipynb): count the GPU-seconds a failure costs
# under per-step fault tolerance from the committed comparison, and derive what is left of a crash's cost when
# the job has many replica groups. No torchft job runs here: exercise 1 reads
# `benchmarks/results/ftlab_compare.json`, so the answers are the same on every machine.
#
# **How to work through it.** Work in [`exercises/10-dont-restart-the-world-ex.ipynb`](../exercises/10-dont-restart-the-world-ex.ipynb). Each exercise states
# the task, the form of the answer (a number in a stated unit, or a sympy expression) and the tolerance.
# Replace the cell that raises `NotImplementedError` with your code, keep the names the task asks for, and
# run the check cell below it: it says *Correct* or *Not yet* and names the likely mistake. Stuck? Open the **Hint** under the task before the solution. In the exercise notebook each **Why** is folded: open it once your answer is correct. Worked solutions:
# [`solutions/10-dont-restart-the-world-sol.ipynb`](../solutions/10-dont-restart-the-world-sol.ipynb) (the exercises are generated from it).
#
# **Time:** 15 minutes. **Prerequisites:** [notebook 10](../notebooks/10-dont-restart-the-world.ipynb).

# %%
from course_lib.notebook import setup

rng = setup()

# %%
import sympy as sp

from course_lib.check import nb10
from course_lib.ftlab import load_comparison

cmp = load_comparison()
kill = cmp.summary["kill"]
print(f"{cmp.ranks} ranks in {cmp.groups} replica groups; kill medians: stall {kill['ft_stall_s']:.2f} s, "
      f"rejoin {kill['ft_rejoin_s']:.2f} s, whole-job restart {kill['whole_restart_s']:.2f} s")

# %% [markdown]
# ## Exercise 1 · GPU-seconds lost per failure under torchft
#
# In the benchmark (this course's measurement, `benchmarks/ftlab_bench.py`) one group's rank is killed. The
# survivors stall `kill["ft_stall_s"]` seconds (failure -> their next committed step); the failed group is out
# `kill["ft_rejoin_s"]` seconds (failure -> it commits again).
#
# **Task.** Count the GPU-seconds lost per failure the way notebook 10 does: every rank x the stall, plus the
# failed group's ranks x its rejoin. **Answer:** `answer` (float, GPU-seconds, within 0.5 %). **Predict first:**
# is it more or less than half the whole-job restart's `kill["whole_gpu_s"]`?
#
# <details class="course-hint"><summary>Hint (open it when you are stuck, before the solution)</summary>
#
# `cmp.ranks` ranks in all, `cmp.ranks // cmp.groups` in the failed group; multiply each time by the ranks that pay it and add.
#
# </details>

# %% tags=["solution"]
# Task: set `answer` to cmp.ranks x the stall + the failed group's ranks x the rejoin, in GPU-seconds.
answer = cmp.ranks * kill["ft_stall_s"] + (cmp.ranks // cmp.groups) * kill["ft_rejoin_s"]
print(f"torchft loses {answer:.2f} GPU-s per kill; the whole-job restart {kill['whole_gpu_s']:.2f} GPU-s")

# %%
nb10.ft_gpu_seconds(answer)

# %% [markdown]
# **Why.** The rejoin dominates: it is a process restart of its own. With two groups half of the job pays it,
# so torchft cannot win much more than a factor of two here; the survivors' part is small. The ratio:

# %%
print(f"whole-job / torchft = {kill['whole_gpu_s'] / answer:.1f}x (the benchmark's median ratio {cmp.ratio('kill'):.1f}x)")

# %% [markdown]
# ## Exercise 2 · What is left of a crash with many groups
#
# With $G$ replica groups a crash costs, in job-minutes: detection $D$ (the whole job), the quorum change $s$ and
# the step in flight $h$ (the survivors, $(G-1)/G$ of the job), and the rejoin $j$ (the failed group, $1/G$).
#
# **Task.** Write that cost as a sympy expression in the symbols below and take its limit as $G \to \infty$.
# **Answer:** `answer`, a sympy expression (compared symbolically: exact). **Predict first:** which terms survive?
#
# <details class="course-hint"><summary>Hint (open it when you are stuck, before the solution)</summary>
#
# `cost = D + (G - 1) / G * (s + h) + j / G`, then `sp.limit(cost, G, sp.oo)`.
#
# </details>

# %%
D, s, h, j, W, G = sp.symbols("D s h j W G", positive=True)

# %% tags=["solution"]
# Task: write `cost`, a crash's job-minutes with G groups, then set `answer` to its limit as G -> infinity.
cost = D + (G - 1) / G * (s + h) + j / G
answer = sp.limit(cost, G, sp.oo)
answer

# %%
nb10.crash_cost_many_groups(answer)

# %% [markdown]
# **Why.** The rejoin is divided among ever more groups; detection is not: every survivor waits on the failed
# group's all-reduce until the failure is seen. With $G = 1$ the same failure costs $D + W$ (the whole-job
# restart, rewind included); the course's `course_lib.replicas.per_mode_floor_groups` is this expression per mode:

# %%
print("G = 1 :", D + W, "   G -> infinity :", answer)
