# %% [markdown]
# # 07 · Exercises: the fault-injection lab
#
# Practice for [notebook 07](../notebooks/07-fault-injection-lab.ipynb): read the committed restart
# benchmark to find the lever that matters most for a hang, derive how far in-process restart moves the
# ceiling of the speed-up, and put the lab's tuned restart into the question's daily budget. No
# torchrun job runs here: the exercises read `benchmarks/results/faultlab_restart.json`, so the answers
# are the same on every machine.
#
# **How to work through it.** Work in [`exercises/07-fault-injection-lab-ex.ipynb`](../exercises/07-fault-injection-lab-ex.ipynb). Each exercise states
# the task, the form of the answer (a number in a stated unit, or a sympy expression) and the tolerance.
# Replace the cell that raises `NotImplementedError` with your code, keep the names the task asks for, and
# run the check cell below it: it says *Correct* or *Not yet* and names the likely mistake. Stuck? Open the **Hint** under the task before the solution. In the exercise notebook each **Why** is folded: open it once your answer is correct. Worked solutions:
# [`solutions/07-fault-injection-lab-sol.ipynb`](../solutions/07-fault-injection-lab-sol.ipynb) (the exercises are generated from it).
#
# **Time:** 20 minutes. **Prerequisites:** [notebook 07](../notebooks/07-fault-injection-lab.ipynb).

# %%
from course_lib.notebook import setup

rng = setup()

# %%
import sympy as sp

from course_lib import Scenario
from course_lib import restart as rs
from course_lib.check import nb07
from course_lib.faultlab import load_benchmark

bench = load_benchmark()
print(f"benchmark: fleet-scale times scaled by 1/{bench.scale:g}; machine {bench.machine.get('cpu', '?')}, {bench.machine.get('cores', '?')} cores")
print(f"{'scenario, setting':52s} {'detect':>7s} {'resched':>8s} {'reload':>7s} {'rewind':>7s} {'total':>7s}")
for (scenario, setting), row in bench.medians.items():
    print(f"{scenario + ', ' + setting:52s} {row['detect']:7.2f} {row['reschedule']:8.2f} {row['reload']:7.2f} {row['rewind']:7.2f} {row['total_s']:7.2f}")

# %% [markdown]
# ## Exercise 1 · Which single lever matters most for a hang?
#
# Besides all levers at once, the benchmark (this course's measurement, `benchmarks/faultlab_bench.py`)
# ran the default-like hang restart with *one* lever tuned at a time: the rows named
# `"default-like, tuned <lever>"` of `bench.medians` (seconds).
#
# **Task.** Compute how many seconds each single lever saves against the default-like hang restart, and
# report the largest saving. **Answer:** `answer` (float, seconds, within 0.5 %); keep the savings as
# a dict `savings` {lever: seconds} for the explanation. **Predict first:** the collective timeout, the
# agent's poll, the checkpoint interval or the reload source?
#
# <details class="course-hint"><summary>Hint (open it when you are stuck, before the solution)</summary>
#
# Loop over `bench.medians.items()`: a key is (scenario, setting); keep the `hang` rows whose setting starts with `"default-like, tuned "`. A lever's saving is `base` minus that row's `total_s`.
#
# </details>

# %%
base = bench.medians[("hang", "default-like")]["total_s"]  # the default-like hang restart, seconds

# %% tags=["solution"]
# Task: build `savings` = {lever: `base` - that one-lever row's total} from bench.medians, then set `answer` to the largest saving in seconds.
prefix = "default-like, tuned "
savings = {setting[len(prefix):]: base - row["total_s"]
           for (scenario, setting), row in bench.medians.items() if scenario == "hang" and setting.startswith(prefix)}
answer = max(savings.values())
print(f"best single lever: {max(savings, key=savings.get)}, saves {answer:.1f} s of {base:.1f} s")

# %%
nb07.best_single_lever(answer)

# %% [markdown]
# **Why.** A hung rank raises no error: nothing notices it until the peer's collective times out, so for a
# hang the timeout *is* the detection stage. The rewind (the checkpoint interval) and the agent's poll
# follow; single runs are noisy (one repetition each), so a lever that saves nothing on this small state
# can even show a small negative saving. The ranking:

# %%
for lever, s in sorted(savings.items(), key=lambda kv: -kv[1]):
    print(f"{lever:22s} saves {s:7.2f} s")
all_levers = base - bench.medians[("hang", "tuned")]["total_s"]
print(f"{'all levers at once':22s} saves {all_levers:7.2f} s (sum of the single savings {sum(savings.values()):.2f} s)")

# %% [markdown]
# ## Exercise 2 · How far can in-process restart go?
#
# [Notebook 07](../notebooks/07-fault-injection-lab.ipynb) modelled a restart as detection T + m/2 (the timeout plus, on average, half the agent's
# poll m), rescheduling S, reload L and rewind tau/2, and scaled every lever by k -> 0: the speed-up of a
# *process* restart tops out at (T + m/2 + S + L + tau/2) / S. Split the rescheduling into S = P + Q:
# P is starting the processes (new interpreter, `import torch`, CUDA context), Q the rendezvous and the
# communicator. In-process restart (NVIDIA's resiliency extension) keeps the processes, so P disappears;
# Q stays.
#
# **Task.** With restart(k) = k (T + m/2 + L + tau/2) + Q after in-process restart and the tuned levers,
# find the speed-up ceiling (the default restart over restart(k) as k -> 0). **Answer:** `answer`, a
# sympy expression in the symbols defined below (compared symbolically: exact). **Predict first:** what
# is left in the denominator?
#
# <details class="course-hint"><summary>Hint (open it when you are stuck, before the solution)</summary>
#
# Write the default restart and restart(k) as sympy expressions, then `sp.limit(default / restart_k, k, 0)`.
#
# </details>

# %%
T, m, P, Q, L, tau, k = sp.symbols("T m P Q L tau k", positive=True)

# %% tags=["solution"]
# Task: write `default`, the default restart, and `restart_k` (in-process: no P; levers scaled by k), then set `answer` to the limit of default / restart_k as k -> 0.
default = T + m / 2 + P + Q + L + tau / 2
restart_k = k * (T + m / 2 + L + tau / 2) + Q
answer = sp.limit(default / restart_k, k, 0)
answer

# %%
nb07.in_process_ceiling(answer)

# %% [markdown]
# **Why.** Every lever that scales with a setting goes to zero; what no setting removes sets the ceiling.
# In-process restart moves that floor from P + Q to Q, so the ceiling grows by (P + Q)/Q:

# %%
print("in-process ceiling / process-restart ceiling =", sp.simplify(answer / (default / (P + Q))))

# %% [markdown]
# ## Exercise 3 · The question's fleet, restarting like the tuned lab
#
# **Task.** Suppose each of the question's restarts took as long as the benchmark's tuned *hang* restart
# (all four stages, `bench.stages("hang", "tuned")`, in seconds). What share of the day would the
# restarts cost? **Answer:** `answer` (float, % of the day, within 0.5 %). **Predict first:** the
# baseline is [notebook 03](../notebooks/03-anatomy-of-a-restart.ipynb)'s 2 %; how many times less?
#
# <details class="course-hint"><summary>Hint (open it when you are stuck, before the solution)</summary>
#
# `bench.stages("hang", "tuned")` gives seconds per stage: convert to minutes, build `rs.RestartStages(**...)` and a `rs.RestartBudget` at the question's restarts per day; `fraction_of_day` is a fraction.
#
# </details>

# %% tags=["solution"]
# Task: put the tuned hang restart's four stages (converted to minutes) into a restart.RestartBudget at the question's restarts per day and set `answer` to its % of the day.
stages = rs.RestartStages(**{stage: seconds / 60 for stage, seconds in bench.stages("hang", "tuned").items()})
budget = rs.RestartBudget(failures_per_day=Scenario().failures_per_day, stages=stages)
answer = 100 * budget.fraction_of_day
print(f"{stages.total * 60:.2f} s per restart x {budget.failures_per_day:g} a day = {budget.minutes_per_day:.3f} min/day = {answer:.4f} % of the day")

# %%
nb07.tuned_fleet_loss(answer)

# %% [markdown]
# **Why.** Seconds instead of minutes per restart. But a two-rank toy is not a 4,096-GPU job: the
# rendezvous and communicator set-up, shared-storage reload and safe timeouts all grow with the fleet
# ([notebook 07](../notebooks/07-fault-injection-lab.ipynb), section 4), which is why [notebook 08](../notebooks/08-the-floor.ipynb)'s floor keeps a rescheduling term (the hot spare's
# re-initialisation, MegaScale). Against the baseline:

# %%
baseline = rs.baseline_budget(Scenario())
print(f"baseline {100 * baseline.fraction_of_day:.2f} % of the day; restarting like the tuned lab {answer:.4f} %: "
      f"{100 * baseline.fraction_of_day / answer:.0f}x less")

# %% [markdown]
# **Next:** [the exercises for notebook 08](../exercises/08-the-floor-ex.ipynb) take every lever to its limit.
