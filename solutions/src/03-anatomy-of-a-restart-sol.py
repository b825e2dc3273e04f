# %% [markdown]
# # 03 · Exercises: anatomy of a restart
#
# Practice for [notebook 03](../notebooks/03-anatomy-of-a-restart.ipynb): change the checkpoint interval
# and redo the daily budget, derive the best health-check period in sympy, and rerun the levers for a
# job that fails twice as often.
#
# **How to work through it.** Work in [`exercises/03-anatomy-of-a-restart-ex.ipynb`](../exercises/03-anatomy-of-a-restart-ex.ipynb). Each exercise states
# the task, the form of the answer (a number in a stated unit, or a sympy expression) and the tolerance.
# Replace the cell that raises `NotImplementedError` with your code, keep the names the task asks for, and
# run the check cell below it: it says *Correct* or *Not yet* and names the likely mistake. Stuck? Open the **Hint** under the task before the solution. In the exercise notebook each **Why** is folded: open it once your answer is correct. Worked solutions:
# [`solutions/03-anatomy-of-a-restart-sol.ipynb`](../solutions/03-anatomy-of-a-restart-sol.ipynb) (the exercises are generated from it).
#
# **Time:** 30 minutes. **Prerequisites:** [notebook 03](../notebooks/03-anatomy-of-a-restart.ipynb).

# %%
from course_lib.notebook import setup

rng = setup()

# %%
import sympy as sp

from course_lib import MINUTES_PER_DAY, Scenario
from course_lib import levers as lv
from course_lib import restart as rs
from course_lib.check import nb03

budget = rs.baseline_budget(Scenario())
print(f"baseline: {budget.failures_per_day:g} failures/day x ({', '.join(f'{k} {v:.2f}' for k, v in budget.stages.as_dict().items())}) min "
      f"= {budget.minutes_per_day:.1f} min/day = {budget.loss_fraction:.2%} of the day")

# %% [markdown]
# ## Exercise 1 · An hourly checkpoint interval
#
# The course's baseline checkpoints every 10 minutes ([notebook 00](../notebooks/00-the-question.ipynb)). Suppose the job checkpointed every
# `interval_min` = 60 minutes instead (a what-if), with detection, rescheduling and reload as in
# [notebook 03](../notebooks/03-anatomy-of-a-restart.ipynb)'s baseline (`budget` above, sources in `data/restart_stages.csv`).
#
# **Task.** Compute the percentage of the day lost to restarts. **Answer:** `answer` (float, % of the
# day, within 0.5 %). **Predict first:** does the loss double, triple, or more?
#
# <details class="course-hint"><summary>Hint (open it when you are stuck, before the solution)</summary>
#
# Only the rewind changes: on average it is half the interval. `budget.with_stages(rewind=...)` gives the new budget; its `restart_minutes_per_day` counts restarts only (the budget also counts blocking writes, which this question leaves out), and the answer is a percentage of the day.
#
# </details>

# %%
interval_min = 60.0

# %% tags=["solution"]
# Task: compute `answer`, the % of the day lost to restarts with a checkpoint every `interval_min` minutes (detect, reschedule and reload as in `budget`).
hourly = budget.with_stages(rewind=interval_min / 2)
answer = 100 * hourly.restart_minutes_per_day / MINUTES_PER_DAY  # restarts only, as the question counts
print(f"per restart: {hourly.stages.total:.1f} min (rewind {hourly.stages.rewind:g}); "
      f"{hourly.restart_minutes_per_day:.1f} min/day = {answer:.2f} % of the day")

# %%
nb03.hourly_interval_loss(answer)

# %% [markdown]
# **Why.** A failure strikes at a uniformly random moment of an interval, so on average it rewinds half
# of it. The other three stages do not change with the interval, so replace the rewind stage only (the
# question's 15 minutes already contain the baseline's rewind). The rewind alone now outweighs
# everything else:

# %%
rewind_per_day = budget.failures_per_day * interval_min / 2
lost_per_day = answer / 100 * MINUTES_PER_DAY
print(f"rewind {rewind_per_day:.0f} of {lost_per_day:.0f} min/day ({rewind_per_day / lost_per_day:.0%}); "
      f"the loss is {answer / (100 * budget.loss_fraction):.1f}x the baseline's")

# %% [markdown]
# ## Exercise 2 · The best health-check period
#
# [Notebook 03](../notebooks/03-anatomy-of-a-restart.ipynb)'s detection stage waits for the next health check. Model it: checks every P minutes, each
# costing the job c minutes; a failure strikes at a uniformly random moment between two checks, so it
# waits on average P/2 to be noticed (the same argument as the rewind). With the other stages as in
# [notebook 03](../notebooks/03-anatomy-of-a-restart.ipynb), the minutes lost per day of T minutes are
# $$W(P) = \lambda\,(P/2 + S + L + \tau/2) + c\,T/P .$$
#
# **Task.** Find the period P* that minimises W. **Answer:** `answer`, a sympy expression in `c, T, lam`
# (symbols defined below; compared symbolically: exact). **Predict first:** which earlier formula will
# it look like?
#
# <details class="course-hint"><summary>Hint (open it when you are stuck, before the solution)</summary>
#
# W has a term that grows with P and one that falls as 1/P, like the waste of notebook 04. Solve dW/dP = 0 with `sp.diff` and `sp.solve` (which returns a list).
#
# </details>

# %%
P, c, lam, T, S, L, tau = sp.symbols("P c lambda T S L tau", positive=True)

# %% tags=["solution"]
# Task: write the daily loss `W` as a function of the check period P, then set `answer` to the period P* that minimises it (a sympy expression in c, T, lam).
W = lam * (P / 2 + S + L + tau / 2) + c * T / P
(answer,) = sp.solve(sp.diff(W, P), P)
assert sp.diff(W, P, 2).subs(P, answer).is_positive  # a minimum
answer

# %%
nb03.health_check_period(answer)

# %% [markdown]
# **Why.** It is Young's interval again: the waiting term grows linearly in P (half a period per
# failure) and the overhead term falls as 1/P, so the optimum balances them. Replace c by the write cost
# delta and P by the interval tau and you get tau* = sqrt(2 delta M) with M = T/lambda. Read backwards,
# it prices a heartbeat: for [notebook 03](../notebooks/03-anatomy-of-a-restart.ipynb)'s check period (`data/levers.csv`) to be optimal at the
# question's two failures a day, one check may cost only

# %%
check_min = Scenario().modes.rank_monitor_poll_min  # NVRx's rank monitor checks every 5 s
(c_star,) = sp.solve(sp.Eq(answer, check_min), c)
c_value = float(c_star.subs({lam: budget.failures_per_day, T: MINUTES_PER_DAY}))
print(f"check period {check_min * 60:g} s is optimal when one check costs {c_value * 60_000:.2f} ms of job time")

# %% [markdown]
# A check that costs more than that should run less often; a cheaper one, more often. Checking often is cheap;
# what a hang costs is the timeout the check waits for, which is why the heartbeat lever in
# [notebook 03](../notebooks/03-anatomy-of-a-restart.ipynb)'s waterfall is a tuned timeout, not a faster poll.
#
# ## Exercise 3 · Twice the failures: rerun the levers
#
# Take a worse cluster: `failures_per_day` = 4, twice the question's (a what-if), with the same fleet,
# stages and the four levers of [notebook 03](../notebooks/03-anatomy-of-a-restart.ipynb) (`lv.default_levers`, sources in `data/levers.csv`).
#
# **Task.** Apply the levers that save, largest first, and compute the minutes per day still lost, snapshot
# writes included. **Answer:** `answer` (float, minutes per day, within 1 %). **Predict first:** more or
# less than twice [notebook 03](../notebooks/03-anatomy-of-a-restart.ipynb)'s result after the levers?
#
# <details class="course-hint"><summary>Hint (open it when you are stuck, before the solution)</summary>
#
# Build the worse scenario with `Scenario().replace(failures_per_day=...)`, rebuild the levers for it (`lv.default_levers(worse)`) and run `lv.waterfall` from `rs.baseline_budget(worse)`; the last step's `after` is what is left.
#
# </details>

# %%
failures_per_day = 4.0

# %% tags=["solution"]
# Task: set `answer` to the minutes per day left after notebook 03's levers (the ones that save, largest first) when the job fails `failures_per_day` times a day.
worse = Scenario().replace(failures_per_day=failures_per_day)
steps = lv.waterfall(rs.baseline_budget(worse), lv.default_levers(worse))
answer = steps[-1].after.minutes_per_day
for step in steps:
    print(f"+ {step.lever.name:20s} saves {step.saved_minutes_per_day:6.2f} min/day, leaves {step.after.minutes_per_day:6.2f}")
print(f"left: {answer:.2f} min/day ({', '.join(f'{k} {v:.2f}' for k, v in steps[-1].after.breakdown().items())})")

# %%
nb03.levers_at_four_a_day(answer)

# %% [markdown]
# **Why.** The restart stages left after the levers (detection, rescheduling, reload) are paid per
# failure, so they double. The interval lever re-optimises: Young's interval shrinks as the MTBF
# shrinks, and rewind + writes at the optimum grow only as the square root of the failure rate. So the
# total grows by less than the failure rate does:

# %%
base = lv.waterfall(budget, lv.default_levers(Scenario()))[-1].after.minutes_per_day
print(f"{failures_per_day / budget.failures_per_day:g}x the failures -> {answer / base:.2f}x the minutes lost after the levers "
      f"({base:.2f} -> {answer:.2f} min/day)")
