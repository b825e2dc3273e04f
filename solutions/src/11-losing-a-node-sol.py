# %% [markdown]
# # 11 · Exercises: losing a node
#
# Practice for [notebook 11](../notebooks/11-losing-a-node.ipynb): read the committed nodes-lab benchmark to
# see what a hot spare saves, then put a buddy copy of the state into the floor of the host-loss mode. No
# lab runs here (it needs root): the exercises read `benchmarks/results/nodelab.json` and the course's
# per-mode model, so the answers are the same on every machine.
#
# **How to work through it.** Work in [`exercises/11-losing-a-node-ex.ipynb`](../exercises/11-losing-a-node-ex.ipynb). Each exercise states
# the task, the form of the answer (a number in a stated unit) and the tolerance. Replace the cell that
# raises `NotImplementedError` with your code, keep the names the task asks for, and run the check cell
# below it: it says *Correct* or *Not yet* and names the likely mistake. Stuck? Open the **Hint** under the task before the solution. In the exercise notebook each **Why** is folded: open it once your answer is correct. Worked solutions:
# [`solutions/11-losing-a-node-sol.ipynb`](../solutions/11-losing-a-node-sol.ipynb) (the exercises are generated from it).
#
# **Time:** 15 minutes. **Prerequisites:** [notebook 11](../notebooks/11-losing-a-node.ipynb).

# %%
from course_lib.notebook import setup

rng = setup()

# %%
from course_lib import Scenario, modes
from course_lib.check import nb11
from course_lib.nodelab import load_nodelab_benchmark

bench = load_nodelab_benchmark()
print(f"benchmark: machine {bench.machine.get('cpu', '?')}, {bench.machine.get('cores', '?')} cores")
print(f"{'setting':28s} {'detect':>7s} {'resched':>8s} {'reload':>7s} {'rewind':>7s} {'total':>7s}")
for name, row in bench.medians.items():
    print(f"{name:28s} {row['detect']:7.2f} {row['reschedule']:8.2f} {row['reload']:7.2f} {row['rewind']:7.2f} {row['total_s']:7.2f}")

# %% [markdown]
# ## Exercise 1 · What does the spare save?
#
# The benchmark killed a node with a hot spare waiting in the rendezvous (`"hot spare"`), and without one,
# the replacement node arriving after the scheduler's (scaled) re-queue (`"replacement via scheduler"`).
#
# **Task.** Compute how many seconds of *rescheduling* the spare saves: the median rescheduling stage
# without it minus with it. **Answer:** `answer` (float, seconds, within 0.5 %). **Predict first:** more or
# less than the scheduler's delay the lab adds (`bench.settings["replacement via scheduler"]["replace_delay_s"]`)?
#
# <details class="course-hint"><summary>Hint (open it when you are stuck, before the solution)</summary>
#
# `bench.medians[setting]["reschedule"]` is a median in seconds; subtract the hot spare's from the scheduler's.
#
# </details>

# %% tags=["solution"]
# Task: set `answer` to the median rescheduling seconds of "replacement via scheduler" minus those of "hot spare".
answer = bench.medians["replacement via scheduler"]["reschedule"] - bench.medians["hot spare"]["reschedule"]
print(f"the spare saves {answer:.1f} s of rescheduling")

# %%
nb11.spare_saving(answer)

# %% [markdown]
# **Why.** Without a spare the job waits for the replacement to exist and then for it to start (its agent,
# `import torch`, the rendezvous); the spare has done all of that already. The saving is close to the
# scheduler's delay because, in the lab, a fresh node's start-up overlaps the wait for the dead node's
# heartbeat to expire; against a fresh node started at once the spare saves little:

# %%
delay = bench.settings["replacement via scheduler"]["replace_delay_s"]
cold = bench.medians["replacement, cold"]["reschedule"] - bench.medians["hot spare"]["reschedule"]
print(f"scheduler's delay {delay:g} s; saving against a fresh node at once: {cold:.1f} s")

# %% [markdown]
# ## Exercise 2 · What is a buddy copy worth in the floor?
#
# In the course's per-mode floor ([notebook 08](../notebooks/08-the-floor.ipynb)), a host loss with `peer_copy=True` reloads from
# another node's memory; with `peer_copy=False` it reads the persisted checkpoint and rewinds to it.
#
# **Task.** For the course's scenario (`Scenario()`, every lever pulled, the spare included), compute how
# many minutes a day of the host-loss floor the buddy copy saves: `modes.per_mode_floor` without the copy
# minus with it, for the `"host_loss"` mode. **Answer:** `answer` (float, minutes a day, within 0.5 %).
# **Predict first:** more or less than a minute a day?
#
# <details class="course-hint"><summary>Hint (open it when you are stuck, before the solution)</summary>
#
# `modes.per_mode_floor(scenario, modes.ModeInputs(peer_copy=False))` returns {mode: minutes a day}; do the same with `peer_copy=True` and subtract the `"host_loss"` entries.
#
# </details>

# %%
scenario = Scenario()

# %% tags=["solution"]
# Task: set `answer` to the host-loss floor without a buddy copy minus with one (minutes a day).
without = modes.per_mode_floor(scenario, modes.ModeInputs(peer_copy=False))["host_loss"]
with_copy = modes.per_mode_floor(scenario, modes.ModeInputs(peer_copy=True))["host_loss"]
answer = without - with_copy
print(f"host-loss floor: {without:.2f} min a day without the copy, {with_copy:.2f} with it: saves {answer:.2f}")

# %%
nb11.buddy_copy_saving(answer)

# %% [markdown]
# **Why.** Without the copy every host loss rereads storage and rewinds to the last persisted checkpoint,
# half a persisted interval on average; host loss is a tenth of the failures, so the saving is about a
# tenth of what the same change would save if every failure lost a node's memory:

# %%
share = modes.ModeInputs().share("host_loss")
print(f"host-loss share of the failures: {share:.1%}; the saving if every failure lost memory: {answer / share:.2f} min a day")
