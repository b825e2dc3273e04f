# %% [markdown]
# # 15 · Exercises: the scheduler's share
#
# Practice for [notebook 15](../notebooks/15-the-schedulers-share.ipynb): read the reschedule out of Slurm's own
# accounting, then ask how long a fleet's start-up may take before a hot spare pays. No cluster runs here: the
# exercises read the scheduler lab's committed exports (`benchmarks/results/slurmlab/`) and runs
# (`data/slurm_requeue.csv`) and the course's model, so the answers are the same on every machine.
#
# **How to work through it.** Work in [`exercises/15-the-schedulers-share-ex.ipynb`](../exercises/15-the-schedulers-share-ex.ipynb). Each exercise states
# the task, the form of the answer (a number in a stated unit) and the tolerance. Replace the cell that
# raises `NotImplementedError` with your code, keep the names the task asks for, and run the check cell
# below it: it says *Correct* or *Not yet* and names the likely mistake. Stuck? Open the **Hint** under the task before the solution. In the exercise notebook each **Why** is folded: open it once your answer is correct. Worked solutions:
# [`solutions/15-the-schedulers-share-sol.ipynb`](../solutions/15-the-schedulers-share-sol.ipynb) (the exercises are generated from it).
#
# **Time:** 15 minutes. **Prerequisites:** [notebook 15](../notebooks/15-the-schedulers-share.ipynb).

# %%
from course_lib.notebook import setup

rng = setup()

# %%
from datetime import datetime

from course_lib import Scenario
from course_lib.answer import answer
from course_lib.check import nb15
from course_lib.slurmlab import read_runs, restart_parts

scenario = Scenario()
spare = answer(scenario, spread_draws=0).spare  # the course's hot-spare verdict (notebook 08)
export = nb15.EXPORTS / "node_kill-default" / "sacct.txt"
print(export.read_text())

# %% [markdown]
# ## Exercise 1 · The requeue, from Slurm's own accounting
#
# Above is `sacct -D --parsable2` of the lab's job at Slurm's defaults after one of its two nodes was killed:
# one row per attempt of the job (`JobID` without a dot) and one per job step (`1.batch`, `1.0`). The first
# attempt ended `NODE_FAIL`; Slurm requeued the job and a second attempt ran on the spare.
#
# **Task.** Compute the seconds from the end of the failed attempt (its `End`) to the start of the requeued one (its
# `Start`): the part of the reschedule that Slurm itself spends. **Answer:** `answer` (float, seconds, within 0.2 %).
# **Predict first:** more or less than `cred_expire`'s 120 s?
#
# <details class="course-hint"><summary>Hint (open it when you are stuck, before the solution)</summary>
#
# Split each line at `|`, zip it with the header, keep the rows whose `JobID` has no dot, and parse the two
# times with `datetime.fromisoformat`; `(b - a).total_seconds()` is the gap. The course's reader does the same:
# `course_lib.incidents.reschedule_times(course_lib.incidents.read_sacct(export))`.
#
# </details>

# %% tags=["solution"]
# Task: set `answer` to the seconds from the NODE_FAIL attempt's End to the next attempt's Start.
lines = [ln for ln in export.read_text().splitlines() if ln.strip()]
head = lines[0].split("|")
jobs = [r for r in (dict(zip(head, ln.split("|"))) for ln in lines[1:]) if "." not in r["JobID"]]
failed = next(i for i, r in enumerate(jobs) if r["State"].startswith("NODE_FAIL"))
end, start = datetime.fromisoformat(jobs[failed]["End"]), datetime.fromisoformat(jobs[failed + 1]["Start"])
answer = (start - end).total_seconds()
print(f"failed attempt ended {end:%H:%M:%S}, the requeued one started {start:%H:%M:%S}: {answer:.0f} s")

# %%
nb15.requeue_from_accounting(answer)

# %% [markdown]
# **Why.** A requeued batch job may not start again before `cred_expire` (120 s by default, slurm.conf(5)): the
# second attempt's `Eligible` is that much after the first one's `End`. The rest is the scheduler's cycle
# finding the job eligible and allocating it:

# %%
n = nb15.accounting_numbers()  # the same export, read by the course's check
print(f"End -> Eligible {n['to_eligible']:.0f} s (at least cred_expire), Eligible -> Start {n['eligible_to_start']:.0f} s "
      "(the scheduler's cycle)")

# %% [markdown]
# ## Exercise 2 · How long may a fleet's start-up take before a spare pays?
#
# Without a spare, the reschedule of a lost node is the scheduler's share (DOWN to the requeued attempt's start,
# measured) plus the job's own start-up (srun, torchrun, the interpreter, the rendezvous: seconds for the lab's toy,
# far longer for 4,096 GPUs). The spare pays for its idle GPUs once that reschedule exceeds its break-even,
# `spare.break_even_min` (computed at the top from the course's answer).
#
# **Task.** At Slurm's *tuned* settings, compute how many minutes the fleet's start-up may take before the spare
# pays: the break-even less the tuned scheduler's share, `restart_parts(read_runs(), "node_kill", "tuned")
# .median["scheduler_s"]` (seconds). **Answer:** `budget` (float, minutes, within 0.2 %).
# **Predict first:** is it more or less than MegaScale's 30 s initialisation at 10,000 GPUs?
#
# <details class="course-hint"><summary>Hint (open it when you are stuck, before the solution)</summary>
#
# Both in minutes: `break_even_min - scheduler_s / 60`. The scheduler's share is not the whole measured
# reschedule (`median["reschedule_s"]` adds the toy's own start-up).
#
# </details>

# %%
parts = restart_parts(read_runs(), "node_kill", "tuned")
print({k: round(v, 2) for k, v in parts.median.items()})

# %% tags=["solution"]
# Task: set `budget` to the spare's break-even reschedule (min) less the tuned scheduler's share (min).
be = spare.break_even_min
budget = be - parts.median["scheduler_s"] / 60.0
print(f"break-even {be:.2f} min - scheduler's share {parts.median['scheduler_s']:.0f} s = {budget:.2f} min of start-up")

# %%
nb15.startup_budget(budget)

# %% [markdown]
# **Why.** Tuned, Slurm's own share is seconds, so nearly all of the break-even is left for the job's start-up:
# whether a spare pays is then a question about the job (its container, its communicator set-up, its data
# loader), not the scheduler. At Slurm's defaults the scheduler alone takes more of it:

# %%
d = restart_parts(read_runs(), "node_kill", "default")
be = spare.break_even_min
print(f"at Slurm's defaults: {be:.2f} - {d.median['scheduler_s'] / 60:.2f} = {be - d.median['scheduler_s'] / 60:.2f} min "
      "of start-up before the spare pays")
