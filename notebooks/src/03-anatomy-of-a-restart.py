# %% [markdown]
# # 03 · Anatomy of a restart: where the 15 minutes go, and which lever wins them back
#
# **The question.** *A 4,096-GPU training run loses about 2 % of every day to restarts (two a day,
# about 15 minutes each). Fix it, and say where the floor is.* [Notebook 00](00-the-question.ipynb) named the four stages of
# a restart. This notebook puts sourced numbers on each stage, for each way a failure presents (a crash, a hang, a
# lost host, a silent corruption), turns them into a daily budget, and applies the four levers the field uses, one
# per stage (heartbeats on detection, hot spares on the reschedule, reload from memory, a shorter interval on the
# rewind), in the order of what each saves at your fleet and each only while it saves, to see how far the 2 % falls.
#
# **Learning objectives**
# - Split the question's 15 minutes into detection (per failure mode), rescheduling, reload and rewound work, each with a cited source.
# - Compute what each lever saves in minutes per day, and why a lever that costs more than it saves is left out.
# - Explain why detection and rewind dominate at the defaults, and why a shorter interval is only as good as its write cost.
#
# **Time:** 25 minutes. **Prerequisites:** [notebook 00](00-the-question.ipynb) (the `Scenario`: two restarts a day, 15 minutes
# each, a 10-minute baseline checkpoint interval).

# %%
from course_lib.notebook import setup

rng = setup()

# %% tags=["parameters"]
# The scenario: the same names in every notebook (None keeps the course's value);
# `make course PARAMS="n_gpus=16384 rate_per_gpu_day=8.1e-4"` or papermill `-p KEY VALUE` changes every notebook.
n_gpus = None  # GPUs in the job (4,096)
rate_per_gpu_day = None  # failures per GPU-day (the question's 2 a day on 4,096 GPUs) ...
failures_per_day = None  # ... or failures per day of the whole job ...
observed_failures = None  # ... or failures counted in a log over observed_days on n_gpus GPUs
observed_days = None  # days the rate was counted over (assumed 30: its Poisson uncertainty)
minutes_per_restart = None  # the question's 15 minutes per restart, rewound work included
checkpoint_interval_min = None  # the baseline checkpoint interval (assumed 10 min)
detect_min = None  # minutes to notice a failure (None: per mode; a hang at NCCL's 10 min)
reschedule_min = None  # minutes to tear down, replace and restart (None: the rest of the 15)
reschedule_low_min = None  # its range's low end (None: a tuned Slurm's measured share + a 5 s start-up)
reschedule_high_min = None  # its range's high end (None: Kokolis' 5-min re-queue less the reload)
reload_min = None  # minutes to read the checkpoint back (ByteCheckpoint's 405B load)
model_params = None  # parameters of the model (Llama 3 405B)
checkpoint_bytes_per_param = None  # checkpoint bytes per parameter (12: saved content; 14 with bf16 weights)
shard_gb = None  # checkpoint GB per GPU (None: the model's state split over the fleet)
persist_gb_per_s = None  # GB/s of today's synchronous write (torch.save + fsync, measured)
write_cost_min = None  # blocking minutes of today's checkpoint (None: the shard at that speed)
restart_after_min = None  # in-job restart on a hot spare, end to end for a crash (FlashRecovery's 150 s)
reschedule_after_min = None  # its reschedule stage (None: the 150 s less the detection and reload inside it)
snapshot_gb_per_s = None  # GB/s of the GPU -> pinned host snapshot (measured)
restore_gb_per_s = None  # GB/s of the pinned host -> GPU reload (measured)
snapshot_cost_min = None  # blocking minutes of the in-memory snapshot (None: the shard at that speed)
reload_after_min = None  # minutes to reload from host memory (None: the shard at that speed)
lemon_factor = None  # failure rate after lemon-node removal, a factor (None: measured on a real trace, clamped at 1)
shares = None  # crash, hang, host_loss, sdc shares of the failures (Table 5 mapped to modes) ...
hang_share = None  # ... share of failures that hang (the other modes rescaled) instead of shares
launcher_poll_min = None  # the launcher's monitor interval, crash detection (torchrun 0.1 s)
rank_monitor_poll_min = None  # NVRx rank monitor's period for evaluating hang timeouts (5 s)
safety_factor = None  # tuned hang timeout / longest legitimate gap (NVRx 5)
hang_timeout_min = None  # the tuned hang timeout (None: safety factor x the longest gap)
untuned_hang_timeout_min = None  # the baseline's hang detection: NCCL's collective timeout (10 min)
health_check_min = None  # the baseline's health-check period: a lost host is seen half of it later (5 min)
host_heartbeat_min = None  # a lost host after the levers: a cross-node heartbeat timeout (NVRx 30 s)
sdc_latency_min = None  # minutes until silent data corruption is noticed (assumed 60)
tokens_per_step = None  # tokens per training step (Llama 3's 16M)
tflops_per_gpu = None  # achieved TFLOP/s per GPU (None: Llama 3 Table 4 at the nearest fleet)
peer_copy = None  # a peer holds the snapshot too (True), so a lost host restores from memory
spare_gpus = None  # idle hot-spare GPUs (one 8-GPU server)
spares_pooled = None  # the spares serve other jobs (True): charge them nothing
replica_gpus = None  # GPUs of one data-parallel replica (TP 8 x PP 16)
groups = None  # replica groups of per-step fault tolerance (None: one per replica)
stall_min = None  # survivors' stall per failure with per-step fault tolerance (lab x 10)
rejoin_min = None  # failed group's rejoin with per-step fault tolerance (lab x 10)

# %%
import matplotlib.pyplot as plt
import numpy as np
import sympy as sp

from course_lib import MINUTES_PER_DAY, Scenario, ledger
from course_lib import levers as lv
from course_lib import restart as rs
from course_lib.data import sourced
from course_lib.plots.restart import stage_bar, waterfall_chart

scenario = Scenario.from_namespace(globals())  # the parameters above
scenario

# %% [markdown]
# ## 1. Four stages, four sources
#
# **Predict first:** of the 15 minutes, which stage do you think is the largest: noticing the
# failure, restarting the job, reading the checkpoint back, or redoing the lost steps?
#
# Where each number comes from (`data/restart_stages.csv` and `data/restart_ranges.csv`, cited per row there):
# - **detection** depends on how the failure presents (`data/failure_modes.csv` maps Llama 3's Table 5 to four
#   modes; the mapping is mostly the course's judgement, labelled per row). A **crash** (the process exits) is seen by
#   the launcher: torchrun polls its workers every 0.1 s (`--monitor-interval` [@torchrun-source]), and the other
#   nodes see the rendezvous round it opens at their next poll. A **hang** exits nothing: with nothing tuned, the job
#   waits for NCCL's 10-minute collective timeout [@pytorch-docs]. A **lost host** opens no round and tells nobody:
#   the cluster's health check notices it, every 5 minutes on Meta's research clusters [@kokolis2025], half a period
#   later on average. A **silent corruption** is noticed after a latency the course assumes (an hour), then stops the
#   job like a crash.
# - **reload**: loading a frontier-size checkpoint from a distributed file system (ByteCheckpoint, NSDI 2025, Table 8).
# - **rewound work**: on average half the checkpoint interval ([notebook 00](00-the-question.ipynb); the course's assumed
#   baseline interval), and for a silent corruption its hour as well.
# - **rescheduling**: what the question's 15 minutes leave once the other three are paid: teardown,
#   replacing the node, starting processes and rebuilding communicators.

# %%
sources = sourced("restart_stages.csv", "stage")
for stage, sv in sources.items():
    print(f"{stage:8s} {sv.value:g} {sv.unit:4s} ({sv.label}) {sv.basis}")
    print(f"{'':8s} source: {sv.source}")

# %%
budget = rs.baseline_budget(scenario)
stages = budget.stages
print(f"{'mode':10s} {'share':>6s} {'detect min':>11s}   how it is seen")
how = {"crash": "the launcher's poll (and the peers' at the next rendezvous)", "hang": "NCCL's untuned collective timeout",
       "host_loss": "half a health-check period", "sdc": "after its latency, then like a crash"}
for m in budget.modes:
    print(f"{m.mode:10s} {m.share:6.1%} {m.detect:11.4f}   {how[m.mode]}")
print(f"{'mean':10s} {'':6s} {stages.detect:11.4f}\n")
print(f"{'stage':11s} {'min/restart':>11s} {'min/day':>8s} {'share':>6s}")
parts = budget.breakdown()
per_restart = stages.as_dict() | {"rewind": stages.rewind - budget.latency_min, "latency": budget.latency_min}
for stage, per_day in parts.items():
    if stage == "write":
        continue
    print(f"{stage:11s} {per_restart[stage]:11.2f} {per_day:8.2f} {per_day / budget.minutes_per_day:6.1%}")
print(f"{'restarts':11s} {stages.total:11.2f} {budget.restart_minutes_per_day:8.2f} {budget.restart_minutes_per_day / budget.minutes_per_day:6.1%}")
print(f"{'writes':11s} {'':11s} {budget.write_minutes_per_day:8.2f} {budget.write_minutes_per_day / budget.minutes_per_day:6.1%}"
      f"   ({60 * budget.write_cost_min:.3g} s blocking, every {budget.interval_min:g} min of training)")
print(f"\nto restarts: {budget.restart_minutes_per_day:.1f} of {MINUTES_PER_DAY} minutes = "
      f"{budget.restart_minutes_per_day / MINUTES_PER_DAY:.2%} of the day (the question's 2 %)")
print(f"with the writes: {budget.minutes_per_day:.1f} min = {budget.loss_fraction:.2%} of the day")
assert abs(stages.total - scenario.minutes_per_restart) < 1e-12
assert abs(budget.restart_minutes_per_day / MINUTES_PER_DAY - scenario.loss_fraction) < 1e-12

# %% [markdown]
# The split reproduces the question's 2 % exactly, because the rescheduling stage is defined as the
# remainder: its minutes are what the question's 15 leave once the other three are paid, not a measured stage.
# The hang share (39 %), the 10-minute interval and the hour a corruption goes unnoticed are the course's assumptions;
# with a different split of the same 15 minutes the reschedule would be larger or smaller. Measure it first: the
# labs of notebooks [07](07-fault-injection-lab.ipynb) and [11](11-losing-a-node.ipynb) log the events that time each stage, and
# [notebook 15](15-the-schedulers-share.ipynb) times the reschedule itself on a real Slurm cluster. The question's 2 %
# counts restarts only. The checkpoints that make a restart cheap cost something too: every interval,
# training stops while the synchronous `torch.save` writes the shard ([notebook 05](05-write-cost.ipynb)
# measures it). The course counts those writes beside the restarts in every day it compares, before the
# levers and after, so each lever is judged like with like.
#
# Detection and rewound work are the two largest pieces of a restart; both are *waiting*: the job
# waits for the next check to notice, and it waits to recompute the steps since the last checkpoint.
# Neither is hard work; both are set by a period someone chose.

# %%
fig, ax = plt.subplots(figsize=(7.0, 1.8))
stage_bar({"baseline": budget}, ax=ax)
ax.set_title(f"Two restarts a day at {stages.total:g} min each", pad=28)
plt.show()

# %% [markdown]
# ## 2. The algebra of the budget
#
# With failures at rate $\lambda$ per day, stages $D$ (detect), $S$ (reschedule), $L$ (reload), a
# checkpoint interval $\tau$ (mean rewind $\tau/2$) and a blocking write cost $\delta$ per checkpoint,
# each failure costs $X = D + S + L + \tau/2 + \ell$ minutes of the job ($\ell$: the mean rewind past a silent
# corruption, its share times its latency), and the day of $T$ minutes loses
# $$W = \lambda X + (T - \lambda X)\,\frac{\delta}{\tau + \delta}:$$
# the failures take $\lambda X$ (a failure that strikes while the job recovers from another adds its own), and of
# the time that is left, every $\tau$ of training pays a blocking write $\delta$. This is the question's own
# accounting (two a day $\times$ 15 minutes = 30 minutes). As a model of the job it charges a failure that strikes
# during a recovery its whole $X$, where a real one only restarts the recovery, so it is an upper bound on the loss:
# close to Daly's complete model while $\lambda X$ is a small share of the day, and at $\lambda X \geq T$ the job
# never trains and $W = T$ ([notebook 08](08-the-floor.ipynb) measures the gap against a per-event simulation). **Predict:** does it matter in which order the
# levers are applied?

# %%
lam, D, S, L, tau, delta, T, lat = sp.symbols("lambda D S L tau delta T ell", positive=True)
X = D + S + L + tau / 2 + lat  # ell: the mean rewind past a silent corruption (its share x its latency)
W = lam * X + (T - lam * X) * delta / (tau + delta)

# each minute of a stage costs lambda minutes a day of the time the job trains, whatever the other stages are
assert all(sp.simplify(sp.diff(W, x) - lam * tau / (tau + delta)) == 0 for x in (D, S, L))
assert all(sp.diff(W, x, y) == 0 for x, y in [(D, S), (D, L), (S, L)])
display_pairs = {"dW/dD": sp.simplify(sp.diff(W, D)), "d2W/dD dS": sp.diff(W, D, S)}
for name, expr in display_pairs.items():
    print(f"{name:10s} = {expr}")

# the symbolic budget equals course_lib's at the baseline (one failure mode with the modes' mean stages)
values = {lam: budget.failures_per_day, D: stages.detect, S: stages.reschedule, L: stages.reload,
          tau: budget.interval_min, lat: budget.latency_min, delta: budget.write_cost_min, T: MINUTES_PER_DAY}
assert abs(float(W.subs(values)) - budget.minutes_per_day) < 1e-9

# %% [markdown]
# The mixed derivatives vanish: the stage levers do not interact, so every order of applying them
# ends at the same budget, and "largest first" is simply the order that wins the most soonest. The
# interval is the exception: it has a price (the writes), and [notebook 04](04-optimal-interval.ipynb) derives its optimum.
#
# ## 3. Check by simulation: is the mean rewind half the interval?
#
# The budget's only modelling step is the rewind: it charges each failure $\tau/2$. That rests on an
# assumption ([notebook 00](00-the-question.ipynb) states it): failures arrive as a Poisson process that knows nothing of the
# checkpoint schedule, so a failure lands at a uniformly random moment of its interval, and the interval is
# much shorter than the MTBF. Drawing uniform rewinds and Poisson counts would only re-check the arithmetic of
# the mean, so the check here plays the job out instead: `course_lib.simulate.simulate_job` runs it event by
# event (checkpoints every $\tau$, failures striking work, writes or restarts, a failure during a restart
# restarting it) and records the work each failure erased. The write cost is set to a microsecond, because the
# simulator needs a positive one and the question's 2 % counts no writes.
#
# Two failure processes: exponential times between failures (Poisson arrivals), and Weibull times with shape
# below 1 and the same mean (`failures.weibull_scale_for_mean`), where a failure is likely soon after the previous one:
# failures cluster after a restart. Each at the baseline (the 10-minute interval and this restart) and at a
# short restart with an hourly interval.
#
# **Predict:** with clustered failures, does a failure erase more or less than half an interval, and when does
# the difference matter?

# %%
from course_lib.simulate import simulate_job

work = 30 * MINUTES_PER_DAY  # a month of useful work per simulated run (minutes)
tiny_write = 1e-6  # minutes: simulate_job needs a positive write cost; this one is negligible
cases = [("baseline", budget.interval_min, stages.restart_cost), ("short restart, hourly", 60.0, 0.5)]
processes = [("exponential", "exponential", 1.0), ("Weibull shape 0.7", "weibull", 0.7), ("Weibull shape 0.5", "weibull", 0.5)]
print(f"{'case':22s} {'failures':18s} {'tau':>5s} {'R':>5s} {'rewind/(tau/2)':>15s} {'failures in restarts':>21s}")
rewind_ratio = {}
for case, tau_c, restart_c in cases:
    for name, dist, shape in processes:
        sim = simulate_job(work, tau_c, tiny_write, scenario.mtbf_min, restart_c, n_runs=2000, distribution=dist, shape=shape, seed=3)
        hits = sim.failures.astype(float)
        per_failure = sim.rewound.sum() / hits.sum()  # minutes of work erased per failure
        se = np.sqrt(np.var(sim.rewound - per_failure * hits, ddof=1) / hits.size) / hits.mean()
        rewind_ratio[(case, name)] = (per_failure / (tau_c / 2), se / (tau_c / 2))
        print(f"{case:22s} {name:18s} {tau_c:5.0f} {restart_c:5.1f} {per_failure / (tau_c / 2):9.3f} +- {se / (tau_c / 2):.3f} "
              f"{sim.restart_failures.sum() / (hits.sum() + sim.restart_failures.sum()):20.1%}")
        if dist == "exponential":  # Poisson arrivals: the rewind is an exponential time cut at the segment length
            c = tau_c + tiny_write
            exact = scenario.mtbf_min - c / np.expm1(c / scenario.mtbf_min)
            assert abs(per_failure - exact) < 3 * se, (case, per_failure, exact, se)

# %% [markdown]
# With Poisson arrivals the simulated rewind agrees with the exact mean of an exponential time cut at the
# interval, $M - \tau/(e^{\tau/M} - 1) \approx \tau/2 - \tau^2/12M$: "half the interval" is right to
# $\tau/6M$, a fraction of a percent at 10 minutes against a 12-hour MTBF, and the cell asserts the agreement.
# At the baseline the Weibull cases stay close to half too: many of the clustered failures strike during the
# 10-minute restart (the last column; they restart the restart) before any work is done, and the rest are
# spread over the interval almost evenly. With a
# short restart and a long interval the clustered failures land early in the first interval after a restart,
# and "half the interval" overstates the rewind (by over a tenth at shape 0.5). The mean rewind is a
# property of the failure process, not of the schedule alone; for the question's numbers, $\tau/2$ holds.

# %% [markdown]
# ## 4. The levers and their sources
#
# Each lever replaces a mechanism with a faster one and attacks exactly one stage. The numbers come
# from `data/`, cited per row; those that depend on the fleet (the shard per GPU, the step) are
# computed for this scenario:
# - **heartbeat detection**: a hang is seen at a *tuned* timeout, NVRx's safety factor 5 times the longest
#   legitimate gap between heartbeats (the step), which the rank monitor evaluates every 5 s (its
#   `workload_check_interval` [@nvrx-docs]: the period of that check, not a detection time); a lost host by a
#   cross-node heartbeat (NVRx in-process restart's 30 s `heartbeat_timeout` [@nvrx-source]). A crash is already seen
#   within torchrun's 0.1 s poll: this lever does not touch it.
# - **hot-spare restart**: an in-job restart on a spare node that is already up, instead of a re-queue;
#   FlashRecovery (arXiv:2509.03047 [@flashrecovery]) has a 4,800-device job back to training in 150 s end to end:
#   detection, restart and a checkpoint-free recovery together, so it is an end-to-end anchor, not a stage: the
#   model's reschedule stage is what the 150 s leave once the crash's detection and the reload inside them are taken
#   out (`data/restart_ranges.csv` has DeadPool's under 40 s and a 5-20 minute re-queue beside it). Its idle server
#   is charged to the day: it is capacity the job pays for and does not train on.
# - **reload from memory**: the checkpoint shard is read back from pinned host memory (GEMINI, SOSP
#   2023, keeps checkpoints in local and remote host memory) at the bandwidth measured for this course
#   (`data/h200_host.csv` [@h200-measurement]); the shard is the checkpoint's content split over the fleet: 12 bytes per
#   parameter, the fp32 master weights and Adam's two moments (ZeRO, SC 2020 [@zero2020]; `data/training_step.csv`), not the
#   16 bytes of training memory, whose gradients are not saved. A silent corruption still reads the persisted
#   checkpoint older than it, from storage.
# - **in-memory checkpoint**: an in-memory snapshot makes a write cost milliseconds, so the interval can
#   shrink to its optimum (Young's square root to first order, CACM 1974 [@young1974]; [notebook 04](04-optimal-interval.ipynb)).
#   The write is not free: it is counted; and the persisted checkpoint stays every 10 minutes, written off the critical path.

# %%
inputs = sourced("levers.csv")
timeout, check = inputs["nccl_collective_timeout"], inputs["heartbeat_check_interval"]
print(f"untuned hang: NCCL's {timeout.minutes:g} min collective timeout; tuned: {60 * scenario.hang_timeout_min:.3g} s "
      f"({scenario.modes.safety_factor:g} x the {60 * scenario.step_min:.3g} s step), checked every {check.minutes * 60:g} s")
print(f"shard per GPU at {scenario.n_gpus:,} GPUs: {scenario.shard_gb:.2f} GB\n")
levers = lv.default_levers(scenario)
for lever in levers:
    print(f"{lever.name:20s} [{lever.stage}] {lever.description}")
    print(f"{'':20s} source: {lever.source}")

# %% [markdown]
# **Predict:** rank the four levers by the minutes per day each saves on its own, before you run the next cell.

# %%
from course_lib.notebook import predict

my_guess = None  # your guess: the name of the lever that saves most on its own, e.g. "hot-spare restart"
guess = predict("03.top-lever", my_guess)

# %%
print(f"{'lever':20s} {'stage':10s} {'before':>7s} {'after':>7s} {'saves min/day':>13s}")
for lever in levers:
    after = lever(budget)
    print(f"{lever.name:20s} {lever.stage:10s} {getattr(stages, lever.stage):7.3f} {getattr(after.stages, lever.stage):7.3f} "
          f"{lever.saving(budget):13.2f}")
interval_after = levers[-1](budget)  # the in-memory checkpoint alone
print(f"\nin-memory checkpoint: {budget.interval_min:g} min -> {interval_after.interval_min:.2f} min; rewind "
      f"{budget.rewind_minutes_per_day:.2f} -> {interval_after.rewind_minutes_per_day:.2f} min/day (of which the rewind no "
      f"snapshot saves, past a silent corruption to the persisted checkpoint, {budget.latency_minutes_per_day:.2f} -> "
      f"{interval_after.latency_minutes_per_day:.2f}), writes {budget.write_minutes_per_day:.2f} -> "
      f"{interval_after.write_minutes_per_day:.2f} min/day")
spare = levers[1]
print(f"hot-spare restart alone: its faster restart {budget.stages.reschedule:.2f} -> {spare(budget).stages.reschedule:.2f} min "
      f"per failure, and its idle GPUs {spare(budget).idle_minutes_per_day:.2f} min/day: net {spare.saving(budget):+.2f} min/day")

# %%
by_saving = sorted(levers, key=lambda lever: lever.saving(budget), reverse=True)
guess.reveal(by_saving[0].name, ranking=[lever.name for lever in by_saving])

# %% [markdown]
# ## 5. The waterfall, largest first
#
# `order_by_saving` applies, at each step, the lever that saves most from the budget as it is then, and stops
# when the best of the rest would not save: a lever that costs more than it saves is left out, with its net.

# %%
steps = lv.waterfall(budget, levers)
left_out = lv.order_by_saving(budget, levers)[1]
print(f"{'step':22s} {'saves min/day':>13s} {'left min/day':>12s} {'loss':>7s}")
print(f"{'baseline':22s} {'':13s} {budget.minutes_per_day:12.2f} {budget.loss_fraction:7.2%}")
for step in steps:
    print(f"+ {step.lever.name:20s} {step.saved_minutes_per_day:13.2f} {step.after.minutes_per_day:12.2f} "
          f"{step.after.loss_fraction:7.2%}")
for lever, saving in left_out:
    print(f"  {lever.name + ' (left out)':20s} {saving:13.2f}")
final = steps[-1].after
print(f"\nafter the levers that save: {final.loss_fraction:.2%} of the day ({final.minutes_per_day:.1f} min/day), "
      f"{budget.minutes_per_day / final.minutes_per_day:.1f}x less than the baseline")
first = steps[0]
print(f"first: {first.lever.name}, {first.saved_minutes_per_day:.2f} min/day "
      f"(rewind {first.before.rewind_minutes_per_day - first.after.rewind_minutes_per_day:.2f} "
      f"+ writes {first.before.write_minutes_per_day - first.after.write_minutes_per_day:.2f})")

# %% [markdown]
# Why this order. The in-memory checkpoint comes first because it removes two costs at once: most of the
# rewind (a failure now loses well under a minute of work, not half of ten) and nearly all of today's writes
# (milliseconds instead of about a second and a half, even at a shorter interval). Heartbeat detection is second, not
# first, because the baseline already sees a crash within the launcher's poll: the lever moves only the hangs (from
# NCCL's untuned timeout to a tuned one) and the lost hosts (from the health check to a heartbeat). The hot spare is
# left out at this fleet: the rescheduling it shortens is the remainder of the question's 15 minutes, hardly longer
# than FlashRecovery's end-to-end restart, and its idle server costs more than that saves. [Notebook 08](08-the-floor.ipynb) gives
# the reschedule at which it pays, and the fleet size.

# %%
ax = waterfall_chart(steps, title=f"{scenario.n_gpus:,} GPUs, {budget.failures_per_day:g} failures a day: each lever, largest first")
plt.show()

# %%
fig, ax = plt.subplots(figsize=(7.0, 2.4))
stage_bar({"baseline": budget, "after levers": final}, ax=ax)
plt.show()

# %% [markdown]
# ## 6. Why detection and rewind dominate at the defaults
#
# **Predict:** after the levers, which stage is now the largest, and why can no checkpoint trick remove it?

# %%
shares = {k: v / budget.minutes_per_day for k, v in budget.breakdown().items() if v > 0}
top_two = sorted(shares, key=shares.get, reverse=True)[:2]
print("baseline shares: " + ", ".join(f"{k} {v:.0%}" for k, v in shares.items()))
print(f"the two largest: {top_two[0]} and {top_two[1]}, together {sum(shares[k] for k in top_two):.0%} of the loss")
final_parts = final.breakdown()
largest_after = max(final_parts, key=final_parts.get)
print("after the levers: " + ", ".join(f"{k} {v:.2f}" for k, v in final_parts.items()) + " min/day")
print(f"largest remaining: {largest_after} ({final_parts[largest_after] / final.minutes_per_day:.0%})")

# %% [markdown]
# Detection and rewound work dominate the baseline because both are set by a *period* or a *timeout* someone chose:
# a hang waits for NCCL's untuned timeout, a lost host for the next health check, and every failure loses on average
# half a checkpoint interval of work. Shortening them is cheap for detection (a tuned timeout, a heartbeat) and costs
# writes for the interval, which is why the interval lever stops at its optimum, where (to first order, Young's
# square root) rewind and write minutes are equal. What is left is restart work (the rescheduling, the largest part
# by far, and the tuned hang timeout) and the write/rewind pair: to first order the after-levers loss at the optimum
# is $\lambda (D + R) + \sqrt{2 \delta \lambda T}$. Its first term, $\lambda (D + R)$, is the largest part of what
# [notebook 08](08-the-floor.ipynb) calls the floor: no checkpoint lever moves it. Fewer failures (a smaller $\lambda$), a smaller $D + R$ (bounded below: a hang
# is seen only at a timeout, a new process pays its start-up) or stopping fewer GPUs per failure do.
#
# **Try it**
# - Run the notebook with `failures_per_day=4` (papermill or the parameters cell): which savings double, and which do not?
# - Replace the in-memory snapshot by a 1-minute blocking write (`lv.checkpoint_at_optimum(budget, 1.0)`):
#   does the in-memory checkpoint still pay? At what write cost does it stop paying at the 10-minute baseline interval?
# - Set `n_gpus=16384`: the shard per GPU shrinks, so what happens to the reload lever?
#
# ## 7. Explore: switch levers on and off
#
# A static call first (the waterfall for the default levers at twice the failure rate), then the same
# function with sliders.

# %%
def show_levers(failures_per_day=2.0, heartbeat=True, hot_spare=True, memory_reload=True, interval=True):
    chosen = [lever for lever, on in zip(levers, (heartbeat, hot_spare, memory_reload, interval)) if on]
    start = budget.with_failures_per_day(failures_per_day)
    waterfall_chart(lv.waterfall(start, chosen), title=f"{failures_per_day:g} failures a day (the levers that save)",
                    start=start)
    plt.show()


show_levers(2 * budget.failures_per_day)

# %% tags=["nbval-ignore-output", "skip-execution"]
from ipywidgets import Checkbox, FloatSlider, interact

_ = interact(
    show_levers,
    failures_per_day=FloatSlider(value=budget.failures_per_day, min=0.5, max=10.0, step=0.5, description="failures a day",
                                 style={"description_width": "initial"}, continuous_update=False),
    **{key: Checkbox(value=True, description=lever.name, indent=False)
       for key, lever in zip(("heartbeat", "hot_spare", "memory_reload", "interval"), levers)},
)

# %% [markdown]
# ## The answer table

# %%
nb = "03-anatomy-of-a-restart"
for stage in rs.STAGES:
    ledger.record(nb, f"stage_{stage}_min", f"{stage} per restart (baseline)", getattr(stages, stage), "min", ".2f")
ledger.record(nb, "after_levers_pct", "loss after the levers", 100 * final.loss_fraction, "% of the day", ".3f")
ledger.record(nb, "after_levers_minutes_per_day", "loss after the levers", final.minutes_per_day, "min/day", ".2f")
print(ledger.table())

# %% [markdown]
# ## Summary

# %%
from course_lib import prose

split = prose.added([stages.detect, stages.reschedule, stages.reload, stages.rewind], stages.total, digits=1)
print(
    f"The {split.total}-minute restart splits into detect {split.terms[0]} + reschedule {split.terms[1]} + "
    f"reload {split.terms[2]} + rewind {split.terms[3]} min{'' if split.exact else ' (each rounded on its own)'}; the levers that save, largest first "
    f"({', '.join(s.lever.name for s in steps)}; left out: {', '.join(x.name for x, _ in left_out) or 'none'}), take the loss "
    f"from {budget.loss_fraction:.2%} to {final.loss_fraction:.2%} of the day."
)

# %% [markdown]
# **Exercises:** [exercises/03-anatomy-of-a-restart-ex.ipynb](../exercises/03-anatomy-of-a-restart-ex.ipynb) practises this notebook (about 30 minutes; a check names your mistake, and the worked [solutions](../solutions/03-anatomy-of-a-restart-sol.ipynb) are there after your own attempt).
#
# **Next:** [notebook 04](04-optimal-interval.ipynb) derives the optimal interval $\tau^* = \sqrt{2\delta M}$ that the shorter-interval
# lever used, and checks it against a simulator.
