# %% [markdown]
# # 12 · Exercises: the interview drill
#
# Practice for [notebook 12](../notebooks/12-interview-drill.ipynb): the drill asks for the four scoring points as numbers
# typed in; here you compute each of them with `course_lib`, from the scenario's inputs, so that you can
# redo them for any fleet in an interview's two minutes.
#
# **How to work through it.** Work in [`exercises/12-interview-drill-ex.ipynb`](../exercises/12-interview-drill-ex.ipynb). Each exercise states the task,
# the form of the answer (a number in a stated unit) and the tolerance. Replace the cell that raises
# `NotImplementedError` with your code, keep the names the task asks for, and run the check cell below it: it
# says *Correct* or *Not yet* and names the likely mistake. Stuck? Open the **Hint** under the task before the
# solution. In the exercise notebook each **Why** is folded: open it once your answer is correct. Worked solutions:
# [`solutions/12-interview-drill-sol.ipynb`](../solutions/12-interview-drill-sol.ipynb) (the exercises are generated from it).
#
# **Time:** 20 minutes. **Prerequisites:** [notebook 12](../notebooks/12-interview-drill.ipynb).

# %%
from course_lib.notebook import setup

rng = setup()

# %%
import math

from course_lib import Scenario
from course_lib import levers as lv
from course_lib import restart as rs
from course_lib.answer import answer as course_answer
from course_lib.check import nb12

scenario = Scenario()  # the course's question; nb12's checks take another Scenario as their second argument
here = course_answer(scenario)
print(f"{scenario.n_gpus:,} GPUs, {scenario.failures_per_day:.2f} failures a day, {scenario.minutes_per_restart:g} min per restart, "
      f"checkpoint every {scenario.checkpoint_interval_min:g} min")

# %% [markdown]
# ## Exercise 1 · The reschedule stage
#
# The scenario observes `scenario.minutes_per_restart` per restart and sources detection (`scenario.detect_min`, the
# modes' mean) and reload (`scenario.reload_min`); the mean rewind is half the interval (`scenario.checkpoint_interval_min`)
# plus the hour a silent corruption rewinds, times its share (`scenario.mean_rewind_min` holds both).
#
# **Task.** Compute the minutes of one restart left for rescheduling. **Answer:** `answer` (minutes, within 1 %).
# **Predict first:** more or less than detection?
#
# <details class="course-hint"><summary>Hint (open it when you are stuck, before the solution)</summary>
#
# Subtract the three other stages from the observed minutes; the rewind is a stage too: `scenario.mean_rewind_min`.
#
# </details>

# %% tags=["solution"]
# Task: compute `answer`, the reschedule stage of one restart in minutes (the observed minutes minus detect, reload and the mean rewind).
answer = scenario.minutes_per_restart - scenario.detect_min - scenario.reload_min - scenario.mean_rewind_min
assert abs(answer - rs.baseline_stages(scenario).reschedule) < 1e-12
print(f"reschedule = {scenario.minutes_per_restart:g} - {scenario.detect_min:.3f} - {scenario.reload_min:.3f} - "
      f"{scenario.mean_rewind_min:.3f} = {answer:.3f} min")

# %%
nb12.reschedule_stage(answer)

# %% [markdown]
# **Why.** The rewound work hides inside the observed minutes: forgetting it makes the restart look twice as slow
# as it is, and sends you after the wrong lever.
#
# ## Exercise 2 · The first lever
#
# `lv.waterfall(budget, lv.default_levers(scenario))` applies the levers of notebook 03, each time the one that
# saves most from what is left, and only while it saves.
#
# **Task.** Compute the minutes a day saved by the first lever of the waterfall. **Answer:** `answer` (minutes per
# day, within 1 %). **Predict first:** which lever, and does it remove its whole stage?
#
# <details class="course-hint"><summary>Hint (open it when you are stuck, before the solution)</summary>
#
# The waterfall's steps carry `saved_minutes_per_day`; the budget is `rs.baseline_budget(scenario)`.
#
# </details>

# %% tags=["solution"]
# Task: compute `answer`, the minutes per day the waterfall's first lever saves from the baseline budget.
budget = rs.baseline_budget(scenario)
first = lv.waterfall(budget, lv.default_levers(scenario))[0]
answer = first.saved_minutes_per_day
print(f"{first.lever.name} ({first.lever.stage}) saves {answer:.2f} of the stage's {budget.breakdown()[first.lever.stage]:.1f} min a day")

# %%
nb12.first_lever_saving(answer)

# %% [markdown]
# **Why.** A lever shortens its stage without removing it, so it saves less than the stage. The order is the
# waterfall's, at your scenario: the same one the answer sheet, the drill and the README print (one source,
# `answer(...).order`: print it and compare). The check names the other levers' savings if you pick one of them.
#
# ## Exercise 3 · Young's interval with today's write
#
# `here.write_cost_before_min` is the blocking minutes of today's synchronous checkpoint, `budget.mtbf_min` the MTBF.
#
# **Task.** Compute Young's optimal interval with that write. **Answer:** `answer` (minutes, within 1 %).
# **Predict first:** longer or shorter than the 10-minute baseline interval?
#
# <details class="course-hint"><summary>Hint (open it when you are stuck, before the solution)</summary>
#
# tau* = sqrt(2 delta M), with delta and M in the same unit.
#
# </details>

# %% tags=["solution"]
# Task: compute `answer`, Young's optimal interval in minutes with the synchronous write cost and the baseline MTBF.
answer = math.sqrt(2 * here.write_cost_before_min * budget.mtbf_min)
print(f"sqrt(2 x {here.write_cost_before_min:.4f} min x {budget.mtbf_min:.0f} min) = {answer:.2f} min")

# %%
nb12.young_interval_before(answer)

# %% [markdown]
# **Why.** The interval grows with the square root of the write cost: the in-memory snapshot's much smaller delta is
# what buys the short interval after the levers:

# %%
print(f"snapshot {60_000 * here.snapshot_cost_min:.1f} ms -> {here.interval_after_min:.2f} min")

# %% [markdown]
# ## Exercise 4 · The floor
#
# `here.after` is the day after every lever that saves. `fl.terms(here.after)` lists what each failure still pays
# once the write is free and the interval one step: D + R, half a step (for the failures that restore the latest
# checkpoint) and a silent corruption's latency with its rewind to the persisted checkpoint, each with its minutes
# per failure (`per_failure_min`).
#
# **Task.** Compute the floor in minutes a day. **Answer:** `answer` (minutes per day, within 1 %). **Predict
# first:** what share of the after-levers loss is it?
#
# <details class="course-hint"><summary>Hint (open it when you are stuck, before the solution)</summary>
#
# failures per day x the sum of the terms' minutes per failure (the failures take far less than the day here).
#
# </details>

# %% tags=["solution"]
# Task: compute `answer`, the floor after every lever in minutes per day.
from course_lib import floor as fl

f = here.after
terms = fl.terms(f)
answer = f.failures_per_day * sum(t.per_failure_min for t in terms)
print(f"{f.failures_per_day:.2f}/day x (" + " + ".join(f"{t.per_failure_min:.3f}" for t in terms) + f") min = "
      f"{answer:.2f} min a day, {answer / f.minutes_per_day:.0%} of the {f.minutes_per_day:.2f} left")

# %%
nb12.floor_after_levers(answer)

# %% [markdown]
# **Why.** Only the rewind to the snapshot and its writes depend on the checkpoint; everything else is paid per
# failure, so only fewer failures, a smaller D + R or stopping fewer GPUs per failure move it.
