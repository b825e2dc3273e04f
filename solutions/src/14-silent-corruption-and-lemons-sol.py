# %% [markdown]
# # 14 · Exercises: silent corruption and lemon nodes
#
# Practice for [notebook 14](../notebooks/14-silent-corruption-and-lemons.ipynb): put the measured detection latency
# of silent data corruption into the floor, then the measured repeat faults of a real log into the failure
# rate. No lab runs here: the exercises read `benchmarks/results/sdclab.json`, the vendored InfiniteHBD trace
# and the course's model, so the answers are the same on every machine.
#
# **How to work through it.** Work in [`exercises/14-silent-corruption-and-lemons-ex.ipynb`](../exercises/14-silent-corruption-and-lemons-ex.ipynb). Each exercise states
# the task, the form of the answer (a number in a stated unit) and the tolerance. Replace the cell that
# raises `NotImplementedError` with your code, keep the names the task asks for, and run the check cell
# below it: it says *Correct* or *Not yet* and names the likely mistake. Stuck? Open the **Hint** under the task before the solution. In the exercise notebook each **Why** is folded: open it once your answer is correct. Worked solutions:
# [`solutions/14-silent-corruption-and-lemons-sol.ipynb`](../solutions/14-silent-corruption-and-lemons-sol.ipynb) (the exercises are generated from it).
#
# **Time:** 15 minutes. **Prerequisites:** [notebook 14](../notebooks/14-silent-corruption-and-lemons.ipynb).

# %%
from course_lib.notebook import setup

rng = setup()

# %%
from course_lib import Scenario
from course_lib import floor as fl
from course_lib.answer import answer
from course_lib.check import nb14
from course_lib.incidents.trace import trace_repeat_fault_share
from course_lib.levers import RateLever
from course_lib.nodelab.lemon import quarantine_rate_factor
from course_lib.sdclab.results import load_sdc_benchmark

scenario = Scenario()
bench = load_sdc_benchmark()
after = answer(scenario, spread_draws=0).after  # the course's day once every lever is pulled (its floor: notebook 08)
print(f"benchmark: machine {bench.machine.get('cpu', '?')}, {bench.machine.get('cores', '?')} cores; "
      f"{len(bench.cases)} detection cases")

# %% [markdown]
# ## Exercise 1 · The SDC term at the measured latency
#
# The course's floor charges silent data corruption a detection latency of `scenario.modes.sdc_latency_min` (an
# hour, its own judgement). The lab measured how many *steps* the four detectors took: `bench.latency_steps()` is
# the latency of the slowest kind of case they caught (the replay's averaged over its period, as every periodic
# check of the course is), counted from the flip's step to the alarm's. A real fault strikes anywhere in its step,
# so in minutes the latency is those steps **plus half a step**, times the fleet's step `scenario.step_min`.
#
# **Task.** Compute the floor's SDC term, in minutes a day, for the course's scenario when the latency is that
# measured latency at the fleet's step time. **Answer:** `answer` (float, minutes a day, within 0.2 %).
# **Predict first:** more or less than half a minute a day?
#
# <details class="course-hint"><summary>Hint (open it when you are stuck, before the solution)</summary>
#
# The latency in minutes is `(bench.latency_steps() + 0.5) * scenario.step_min` (the step, in minutes), which is
# what `bench.latency_min(scenario.step_min)` returns; `fl.sdc_minutes_per_day(after, latency_min)` is the model's
# SDC term of the after-levers day at that latency.
#
# </details>

# %% tags=["solution"]
# Task: set `answer` to the SDC term (min a day) at latency = (bench.latency_steps() + 1/2) x the fleet's step (minutes).
latency_min = (bench.latency_steps() + 0.5) * scenario.step_min
answer = fl.sdc_minutes_per_day(after, latency_min)
print(f"caught after {bench.latency_steps():g} steps and half a step = {60 * latency_min:.0f} s: SDC term {answer:.3f} min a day")

# %%
nb14.sdc_term_at_measured_latency(answer)

# %% [markdown]
# **Why.** A few steps of a 4,096-GPU job are seconds, against the assumed hour, so the rewound work past the
# corruption all but vanishes; what stays is the restart and the rewind to the persisted checkpoint, which
# the model charges every SDC:

# %%
print(f"at the assumed hour: {fl.sdc_minutes_per_day(after, scenario.modes.sdc_latency_min):.2f} min a day; "
      f"at no latency at all: {fl.sdc_minutes_per_day(after, 0.0):.3f}")

# %% [markdown]
# ## Exercise 2 · What a week's quarantine takes off the floor
#
# In the InfiniteHBD trace, `trace_repeat_fault_share(within_days=7.0).share` of the interruptions fall on a node
# that had one within the previous 7 days; identical nodes would give `.poisson_share`. Quarantining each failed
# node for 7 days removes the repeats, and the node standing in fails at an ordinary node's rate: the failure
# rate is multiplied by `1 - share + poisson_share` (`quarantine_rate_factor`).
#
# **Task.** Compute how many minutes a day this takes off the floor of the course's scenario: the floor after the
# levers (`after`, computed at the top) minus the same with the rate lever
# `RateLever(name, factor, "notebook 14", "")` applied. **Answer:** `saving` (float, minutes a day, within 0.5 %).
# **Predict first:** more or less than a fifth of the floor?
#
# <details class="course-hint"><summary>Hint (open it when you are stuck, before the solution)</summary>
#
# `RateLever("quarantine", factor, "notebook 14", "")(after)` returns the day with `factor` x the failures;
# compare the two `.floor_minutes_per_day`.
#
# </details>

# %%
repeat = trace_repeat_fault_share(within_days=7.0)
print(f"repeats within 7 days: {repeat.share:.1%} (identical nodes: {repeat.poisson_share:.1%}); "
      f"the floor after the levers: {after.floor_minutes_per_day:.2f} min a day")

# %% tags=["solution"]
# Task: set `factor` to the quarantine's factor on the rate and `saving` to the floor (min a day) without it minus with it.
factor = quarantine_rate_factor(repeat.share, repeat.poisson_share)
saving = after.floor_minutes_per_day - RateLever("quarantine", factor, "notebook 14", "")(after).floor_minutes_per_day
print(f"rate x {factor:.3f}: the floor {after.floor_minutes_per_day:.2f} -> {after.floor_minutes_per_day - saving:.2f} min a day")

# %%
nb14.quarantine_floor_saving(saving)

# %% [markdown]
# **Why.** The floor is the failures a day times what each costs, so a factor on the rate moves it in proportion:
# the saving is the floor times `1 - factor`. Dropping the stand-in's own failures would overstate it:

# %%
print(f"floor x (1 - factor) = {after.floor_minutes_per_day * (1 - factor):.3f}; "
      f"without the stand-in's failures the factor would be {1 - repeat.share:.3f}")
