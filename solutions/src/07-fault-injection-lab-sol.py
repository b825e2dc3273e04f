# %% [markdown]
# # 07 · Exercises: the fault-injection lab
#
# Practice for [notebook 07](../notebooks/07-fault-injection-lab.ipynb): read the committed restart
# benchmark to find the lever that matters most for a hang, derive how far in-process restart moves the
# ceiling of the speed-up, and see what share of the tuned restart is left to rescheduling. No
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
# ## Exercise 3 · What tuning leaves: the share of the restart that is rescheduling
#
# **Task.** In the benchmark's tuned *hang* restart (`bench.stages("hang", "tuned")`, seconds per stage), what
# share of the whole restart is rescheduling (new processes, `import torch`, rendezvous, communicators)?
# **Answer:** `answer` (float, % of the restart, within 0.5 %). **Predict first:** the default-like hang restart
# is mostly detection and rewind; tuned, is rescheduling a tenth, a half, or most of what is left?
#
# <details class="course-hint"><summary>Hint (open it when you are stuck, before the solution)</summary>
#
# `bench.stages("hang", "tuned")` is a dict {stage: seconds}; the share is the `reschedule` entry over the sum of all four, times 100.
#
# </details>

# %% tags=["solution"]
# Task: set `answer` to the rescheduling stage's share (in %) of the benchmark's tuned hang restart.
stages = bench.stages("hang", "tuned")
answer = 100 * stages["reschedule"] / sum(stages.values())
print(", ".join(f"{k} {v:.2f} s" for k, v in stages.items()) + f": rescheduling is {answer:.1f} % of the restart")

# %%
nb07.tuned_reschedule_share(answer)

# %% [markdown]
# **Why.** Tuning shortened the stages that are waiting (the timeout, the health check's stand-in, the
# interval) and left the one that is work: starting processes and connecting them. That share is what
# in-process restart attacks (exercise 2). It is a fact about this two-process job on one host, not a
# forecast for 4,096 GPUs: there, rescheduling also replaces a node, and reload and detection are set by the
# fleet's storage and timeouts ([notebook 07](../notebooks/07-fault-injection-lab.ipynb), section 4). Against the default-like restart:

# %%
default = bench.stages("hang", "default-like")
print(f"default-like: rescheduling {default['reschedule']:.2f} s of {sum(default.values()):.2f} s "
      f"= {100 * default['reschedule'] / sum(default.values()):.1f} %; tuned: {answer:.1f} %")
