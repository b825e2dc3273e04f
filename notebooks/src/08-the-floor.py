# %% [markdown]
# # 08 · The floor: what is left when every checkpoint lever is pulled
#
# **The question.** *A 4,096-GPU training run loses about 2 % of every day to restarts (two a day,
# about 15 minutes each). Fix it, and say where the floor is.* Notebooks [03](03-anatomy-of-a-restart.ipynb)-[07](07-fault-injection-lab.ipynb) built the levers:
# heartbeats, hot spares, reload from memory, and an in-memory checkpoint that makes the optimal
# interval short. This notebook applies them all in one chain, finds what remains, how sure that
# number is, why no checkpoint lever removes it and what does, and asks how the answer changes
# from 1,024 to 131,072 GPUs.
#
# **Learning objectives**
# - Derive the floor $\lambda (D + R)$: the loss that stays when the checkpoint write cost goes to zero, and check it by simulation.
# - Read the whole chain from 2.08 % to the floor as one waterfall, each lever with the minutes a day it saves.
# - Say where 90 % ETTR breaks with hourly checkpoints, async writes and in-memory snapshots, across the band of published failure rates.
#
# **Time:** 30 minutes. **Prerequisites:** [notebook 03](03-anatomy-of-a-restart.ipynb) (the stages and the levers), [notebook 04](04-optimal-interval.ipynb) (the
# optimal interval $\sqrt{2\delta M}$), [notebook 06](06-square-root-pareto.ipynb) (write costs and the square-root law).

# %%
from course_lib.notebook import setup

rng = setup()

# %% tags=["parameters"]
# The scenario: the same names in every notebook (None keeps the course's value);
# `make course --param KEY=VALUE` or papermill `-p KEY VALUE` changes every notebook at once.
n_gpus = None  # GPUs in the job (4,096)
rate_per_gpu_day = None  # failures per GPU-day (the question's 2 a day on 4,096 GPUs) ...
failures_per_day = None  # ... or failures per day of the whole job ...
observed_failures = None  # ... or failures counted in a log, over observed_days on n_gpus GPUs
observed_days = None  # days the log covers
minutes_per_restart = None  # the question's 15 minutes per restart, rewound work included
checkpoint_interval_min = None  # the baseline checkpoint interval (10 min)
detect_min = None  # minutes to notice a failure (a 5-minute health check)
reschedule_min = None  # minutes to tear down, replace and restart (None: the rest of the 15)
reload_min = None  # minutes to read the checkpoint back (ByteCheckpoint's 405B load)
model_params = None  # parameters of the model (Llama 3 405B)
checkpoint_bytes_per_param = None  # checkpoint bytes per parameter (12: saved content; 14 with bf16 weights)
state_gb_per_gpu = None  # checkpoint GB per GPU (None: the model's state split over the fleet)
persist_gb_per_s = None  # GB/s of today's synchronous write (torch.save + fsync, measured)
write_cost_min = None  # blocking minutes of today's checkpoint (None: the shard at that speed)
detect_after_min = None  # detection with a per-rank heartbeat (5 s)
reschedule_after_min = None  # restart on a hot spare, end to end (150 s)
snapshot_gb_per_s = None  # GB/s of the GPU -> pinned host snapshot (measured)
restore_gb_per_s = None  # GB/s of the pinned host -> GPU reload (measured)
snapshot_cost_min = None  # blocking minutes of the in-memory snapshot (None: the shard at that speed)
reload_after_min = None  # minutes to reload from host memory (None: the shard at that speed)
# this notebook's own knobs (not scenario inputs)
sim_runs = 4000  # simulated jobs in the check of section 3
sim_days = 30  # days of useful work per simulated job

# %%
import matplotlib.pyplot as plt
import numpy as np
import sympy as sp
from IPython.display import display

from course_lib import MINUTES_PER_DAY, Scenario, ledger
from course_lib import floor as fl
from course_lib import interval as iv
from course_lib import modes as md
from course_lib import spares
from course_lib.answer import answer, reported_ettr
from course_lib.data import failure_logs, load_table
from course_lib.plots.floor import answer_waterfall, ettr_vs_fleet, floor_alternatives, floor_vs_fleet
from course_lib.simulate import simulate_job
from course_lib.widgets.floor import FLEET_SIZES, dashboard, dashboard_answer

scenario = Scenario.from_namespace(globals())  # the parameters above
ans = answer(scenario)
print(f"{ans.n_gpus:,} GPUs at {ans.rate_per_gpu_day:.2e} failures per GPU-day: {ans.failures_per_day:.2f} failures a day")

# %% [markdown]
# ## 1. The chain, from the baseline to the floor
#
# **Predict first:** after heartbeats, hot spares, reload from memory and an in-memory checkpoint,
# how many of the baseline's 30 minutes a day are left? More or less than two minutes?
#
# Each lever's number is sourced in `data/` ([notebook 03](03-anatomy-of-a-restart.ipynb) cites them): a 5 s heartbeat check (NVIDIA
# Resiliency Extension; a hang is seen only at its timeout), a hot-spare restart back to training in 150 s end to
# end (FlashRecovery [@flashrecovery]), the shard read
# back from pinned host memory and snapshotted to it at the bandwidth measured for this course
# (`data/write_costs.csv` [@h200-measurement]). The write *before* is a plain synchronous
# `torch.save` + fsync of the same shard (also measured for this course). The in-memory checkpoint
# lever checkpoints at the optimal interval for its own write cost. `course_lib.answer` applies the
# levers largest saving first.
#
# The in-memory snapshot is not a different kind of step from DCP's `async_save`: the blocking part of
# `async_save` is also a copy of the state into host memory ([notebook 06](06-square-root-pareto.ipynb)). What differs is what
# follows. `async_save` goes on to write a durable copy to shared storage, which survives the loss of the
# node and is read back at the storage's bandwidth after a failure; the snapshot keeps the copy in host
# memory (and, in GEMINI's design [@gemini2023], in a peer's), from where it is read back in milliseconds, but
# it is lost with the host unless a peer holds it, so a job still needs the occasional durable checkpoint.

# %%
from course_lib.notebook import predict

my_guess = None  # your guess: minutes a day left after every lever (type it, run this cell, then the next ones)
guess = predict("08.after-levers", my_guess, "min/day")

# %%
b = ans.baseline
print(ans.lever_table())
f = ans.after
print(f"\ninterval: {ans.interval_before_min:.2f} min with a {60 * ans.write_cost_before_min:.2f} s synchronous write -> "
      f"{ans.interval_after_min:.2f} min with a {60_000 * ans.snapshot_cost_min:.1f} ms in-memory snapshot")
half_step = f.step_min / 2
print(f"after the levers: {f.minutes_per_day:.2f} min/day = floor {f.floor_minutes_per_day:.2f} "
      f"+ rewind beyond half a step {f.rewind_minutes_per_day - f.failures_per_day * half_step:.2f} + writes {f.write_minutes_per_day:.2f}")
print(f"floor lambda (D + R + T_step/2 + L) = {f.failures_per_day:.2f}/day x ({f.stages.detect:.3f} + {f.stages.reschedule:.3f} + "
      f"{f.stages.reload:.4f} + {half_step:.3f} + {f.latency_rewind_min:.3f}) min = {f.floor_minutes_per_day:.2f} min/day "
      f"= {f.floor_fraction:.3%} of the day")
print("  (D, R and the corruption latency L are means over the failure modes: the per-mode floor is below)")

# %%
guess.reveal(f.minutes_per_day)

# %%
answer_waterfall(ans)
plt.show()

# %% [markdown]
# ### The floor per failure mode, and how sure it is
#
# Not every failure costs the same. A crash is seen within half a heartbeat poll; a hang only when its
# timeout expires; a lost host must reload from a peer's copy; a silent corruption (SDC) rewinds past the
# work done since it struck (`course_lib.modes`, inputs in `data/`). The floor is the sum over the modes of
# $\lambda_k (D_k + R_k + T_{step}/2 + L_k)$. Its inputs are ranges, not points: a Monte Carlo over them
# (`course_lib.uncertainty`) gives the floor's median and 90 % range, and the rank correlation of each input
# with the loss says which one the answer hangs on. **Predict:** which mode costs most, and which input
# dominates the range?

# %%
per_mode = md.per_mode_floor(scenario)
print(f"{'mode':10s} {'share':>6s} {'floor min/day':>14s}")
for x in md.mode_stages(scenario):
    print(f"{x.mode:10s} {x.share:6.1%} {per_mode[x.mode]:14.2f}")
print(f"{'total':10s} {'':6s} {sum(per_mode.values()):14.2f}  (= the floor, {f.floor_fraction:.3%} of the day)")
assert abs(sum(per_mode.values()) - f.floor_minutes_per_day) < 1e-9 * f.floor_minutes_per_day
r = ans.spread
print(f"\nMonte Carlo over the inputs' ranges ({r.n:,} draws): floor {r.floor.text()}, after-levers loss {r.loss.text()}")
print("rank correlation with the after-levers loss: " + ", ".join(
    f"{k} {v:+.2f}" for k, v in sorted(r.dominance.items(), key=lambda kv: -abs(kv[1]))))
print(f"the {r.dominant} dominates the range")
print(f"point value (every input at its central value): floor {f.floor_fraction:.3%}; {r.shift_sentence}")

# %% [markdown]
# The central inputs give one number; the draws give a median well above it, because the inputs' ranges reach
# further above their central values than below, and the last line says by how much each one pulls. The rate pulls
# most: the question's two failures a day are Llama 3's interruptions spread over all 16,384 GPUs for the whole run,
# and if the run used fewer GPUs on average the per-GPU rate is higher, up to twice (it cannot be lower). The hang
# timeout pulls next: the point model takes NVRx's five times the step, while a job that never tunes it waits for
# NCCL's ten minutes. Read the answer as the range, with the point value as its optimistic end. What dominates it is
# the failure rate, the hang timeout and the restart time: none of them a checkpoint setting.
#
# The interval lever now checkpoints about once a minute: at a blocking cost of tens of
# milliseconds, Young's optimum $\sqrt{2\delta M}$ falls from minutes to under one. What remains is
# made of two different things: the rewind and the writes, which shrink with the write cost, and
# the floor, which does not.
#
# ## 2. The floor, derived
#
# With $\lambda$ failures a day, detection $D$, restart $R$ (reschedule + reload), interval $\tau$
# and blocking write $\delta$, a day of $T$ minutes loses
# $\lambda (D + R) + \lambda\tau/2 + \delta T/\tau$. **Predict:** at the best $\tau$, what happens
# to the loss as $\delta \to 0$?

# %%
lam, D, R, delta, T, tau = sp.symbols("lambda D R delta T tau", positive=True)
loss = lam * (D + R) + lam * tau / 2 + delta * T / tau
tau_star = [t for t in sp.solve(sp.diff(loss, tau), tau) if t.is_positive][0]
loss_star = sp.simplify(loss.subs(tau, tau_star))
floor_expr = sp.limit(loss_star, delta, 0)
assert sp.simplify(tau_star - sp.sqrt(2 * delta * T / lam)) == 0
assert sp.simplify(loss_star - (lam * (D + R) + sp.sqrt(2 * delta * lam * T))) == 0
assert sp.expand(floor_expr - lam * (D + R)) == 0
print("tau*          =", tau_star)
print("loss at tau*  =", loss_star)
print("delta -> 0    :", floor_expr)

values = {lam: f.failures_per_day, D: f.stages.detect, R: (f.stages.reschedule + f.stages.reload), delta: f.write_cost_min, T: MINUTES_PER_DAY}
symbolic = float(loss_star.subs(values)) + f.latency_minutes_per_day  # + lambda L: the rewind past a corruption (section 5)
assert abs(symbolic - f.minutes_per_day) < 1e-3 * f.minutes_per_day
assert abs(f.fraction_of_day - iv.waste_fraction(f.interval_min, f.write_cost_min, f.mtbf_min, f.per_failure_restart_min)) < 1e-12
print(f"\ncourse_lib: {f.minutes_per_day:.4f} min/day; the symbolic loss at these numbers plus lambda L "
      f"({f.latency_minutes_per_day:.2f} min/day) gives {symbolic:.4f}, and interval.waste_fraction agrees")

# %% [markdown]
# The checkpoint term $\sqrt{2\delta\lambda T}$ vanishes with the write cost; $\lambda(D+R)$ is
# left. Every failure still has to be noticed and the job restarted, however cheap the checkpoint.
# (course_lib adds $\lambda L$, the work rewound past a silent corruption, and picks the interval over the
# failures that rewind to the snapshot, so the two agree to 0.1 %, not exactly.)
#
# ### A day is not the mean
#
# The floor is a mean over days. Failures are random, so one day's count is Poisson with mean $\lambda$
# (if failures are independent: [notebook 13](13-your-incident-log.ipynb) finds bursts in a real log, which make bad days more
# common), and that day pays $D + R$ per failure it actually had. **Predict:** with about two failures a day, how
# often does a day have four or more?

# %%
from scipy import stats

day = stats.poisson(f.failures_per_day)
per_failure_min = f.floor_minutes_per_day / f.failures_per_day  # the floor of one failure, the modes' mean
print(f"failures a day: mean {f.failures_per_day:.2f}; the floor costs {per_failure_min:.2f} min per failure")
print(f"{'failures in a day':>18s} {'share of days':>14s} {'floor that day (min)':>21s}")
for n_fail in range(0, 6):
    print(f"{n_fail:>18d} {day.pmf(n_fail):14.1%} {n_fail * per_failure_min:21.2f}")
p4 = day.sf(3)  # P(N >= 4)
print(f"a day with 4 or more failures: {p4:.1%} of days, about one day in {1 / p4:.0f}; "
      f"a day with none: {day.pmf(0):.1%}")
lo, hi = day.ppf(0.05), day.ppf(0.95)
print(f"90 % of days have {lo:.0f} to {hi:.0f} failures: a floor of {lo * per_failure_min:.2f} to {hi * per_failure_min:.2f} min that day")

# %% [markdown]
# About one day a week has twice the mean number of failures, and about one in seven has none. A
# day's floor swings from nothing to more than twice the mean while the long-run share stays at the floor: judge a fix
# over weeks of failures, not by one good or bad day.
#
# ## 3. Check by simulation
#
# `course_lib.simulate` runs Daly's complete model event by event: exponential failures, a failure
# loses the segment since the last checkpoint, a restart of $D + R$ (plus the corruption latency $L$) must itself survive.
# **Predict:** will the simulated waste at the after-levers numbers land within three standard
# errors of the formula?

# %%
work = sim_days * MINUTES_PER_DAY
sim = simulate_job(work, f.interval_min, f.write_cost_min, f.mtbf_min, f.per_failure_restart_min, n_runs=sim_runs, seed=8)
mean, se = sim.mean("waste"), sim.stderr("waste")
exact = iv.expected_waste(f.interval_min, f.write_cost_min, f.mtbf_min, f.per_failure_restart_min)
print(f"simulated waste  : {mean:.5%} +- {se:.5%} ({sim_runs:,} jobs of {sim_days} days)")
print(f"complete model   : {exact:.5%}  (within 3 SE: {abs(mean - exact) < 3 * se})")
print(f"first order      : {f.fraction_of_day:.5%}  (differs from the complete model by {abs(exact - f.fraction_of_day) / exact:.2%})")
assert abs(mean - exact) < 3 * se
parts = sim.breakdown()
print("simulated minutes per day of useful work: " + ", ".join(
    f"{k} {v / sim_days:.2f}" for k, v in parts.items() if k != "useful"))

# %% [markdown]
# The simulation's "restart" minutes are $\lambda(D + R + L)$, the floor but its half step; its "checkpoint" and
# "rewound" minutes are the two near-equal halves of $\sqrt{2\delta\lambda T}$.
#
# ## 4. What moves the floor: fewer failures, a smaller D + R, or stopping fewer GPUs
#
# No checkpoint lever moves $\lambda(D+R)$. It has two factors. $D + R$ is a few minutes after the levers, most of it
# the hot spare's 150 s, and it is bounded below: a hang is seen only at a timeout, a new process pays its start-up.
# $\lambda$ is untouched by anything in notebooks [03](03-anatomy-of-a-restart.ipynb)-[07](07-fault-injection-lab.ipynb). Two ways to see how far fewer failures could
# shrink it, neither a measured lever for this fleet:
# - **lemon-node removal (illustrative)**: Kokolis et al. (HPCA 2025 [@kokolis2025], `data/floor_inputs.csv`) cut the share of
#   large jobs (512+ GPUs) that failed on one research cluster; for Poisson failures over the same job lengths the rate
#   scales as $\ln(1-p_{after})/\ln(1-p_{before})$. Carried over to another fleet, that factor is an illustration:
#   it depends on how many lemons that fleet has. A fleet that already screens its nodes may gain little (a factor
#   near 1); one like that cluster before the screening, about a factor 0.3. The course uses that cluster's number to show the effect;
#   [notebook 13](13-your-incident-log.ipynb) measures the factor out of sample on a real fault trace.
# - **no faulty GPUs and no HBM3 failures (a bound)**: the top causes of Llama 3's Table 5 (arXiv:2407.21783 [@llama3];
#   shares computed from the raw counts, [notebook 01](01-per-gpu-failure-rate.ipynb)'s erratum). This is not a lever anyone can pull: it
#   asks what the floor would be if those causes vanished altogether, an upper bound on what better hardware and burn-in buy.
#
# They are alternatives, not a chain: lemon nodes are largely those same bad GPUs.
#
# **Predict:** which one lowers the floor more?

# %%
inputs = fl.floor_inputs()
alternatives = {"after the levers": f}
for lever in fl.rate_levers():
    g = lever(ans.after)
    alternatives[lever.name] = g
    print(f"{lever.name:22s} {lever.description}")
    print(f"{'':22s} floor {f.floor_minutes_per_day:.2f} -> {g.floor_minutes_per_day:.2f} min/day; "
          f"after-levers loss {f.minutes_per_day:.2f} -> {g.minutes_per_day:.2f} min/day")
lemon_p = (inputs["lemon_job_failure_before"].value, inputs["lemon_job_failure_after"].value)
print(f"\nlemon nodes: {lemon_p[0]:g} % -> {lemon_p[1]:g} % of large jobs failed; naive ratio {lemon_p[1] / lemon_p[0]:.2f}, "
      f"Poisson rate factor {fl.lemon_node_factor():.2f}")
for factor in (fl.lemon_node_factor(), 0.5, 0.8, 1.0):  # the cluster's factor, then fleets with fewer lemons
    g = fl.fewer_failures(f, factor)
    print(f"  rate x {factor:.2f}: floor {g.floor_minutes_per_day:.2f} min/day ({g.floor_fraction:.3%})")

# %%
floor_alternatives(alternatives)
plt.title("Fewer failures shrink both the floor and the checkpoint term")
plt.show()

# %% [markdown]
# A hot spare is not free either. Its GPUs wait, and a GPU that waits is capacity the job does not train on: one
# 8-GPU server beside the job is charged as lost job-minutes every day, unless it is pooled across jobs
# (`course_lib.spares`). **Predict:** does the spare pay for itself at this fleet, and at four times the fleet?

# %%
for g in (scenario.n_gpus, 4 * scenario.n_gpus):
    a_g = ans if g == scenario.n_gpus else answer(scenario.replace(n_gpus=g), spread_draws=0)
    print(f"{g:7,d} GPUs: hot spare saves {a_g.savings['hot-spare restart']:.2f} min/day, its idle GPUs cost "
          f"{a_g.spare_cost_minutes_per_day:.2f}: net {a_g.hot_spare_net_minutes_per_day:+.2f} min/day")
be = spares.break_even_repair_min(ans.failures_per_day, ans.inputs.replica_gpus, ans.inputs.spare_gpus)
print(f"elastic instead (drop one {ans.inputs.replica_gpus:g}-GPU replica until the node is repaired): cheaper than the "
      f"spare when a repair takes less than {be:.0f} min")

# %% [markdown]
# The spare's saving grows with the failures, so with the fleet; its cost, a fixed number of GPUs, shrinks as a
# share of a larger job. On a small fleet whose restart is already a few minutes, a dedicated spare costs more than it
# saves; on a large one it pays. Continuing elastically on one replica fewer, until the node is repaired, is the
# other way to do without a spare.
#
# The other way out is to stop fewer GPUs per failure. **In-process restart** (NVIDIA Resiliency
# Extension) skips the scheduler, the container, the interpreter and the CUDA context: it shrinks
# $R$ further, but publishes no speed-up figure, so the course gives none. **Hot spares** already
# sit in our chain. **Per-step fault tolerance** (TorchFT; PyTorch blog "Fault Tolerant Llama
# training", 2025) keeps training on the surviving replica groups while the failed group rejoins
# and recovers its weights from a healthy peer, with no checkpoint on the recovery path; it trades
# the floor for a different cost (a full replica per group, a smaller batch while a group is out).
#
# ## 5. Further floors: silent data corruption and planned maintenance
#
# Two kinds of interruption escape the levers above.
#
# **Planned maintenance.** Llama 3's 54-day snapshot had planned interruptions besides the
# unexpected ones (`data/failure_logs.csv`). A planned stop needs no detection and can checkpoint
# just before, so it costs a restart, $R$. The count is per job, not per GPU, so it is not scaled
# with the fleet (an assumption).
#
# **Silent data corruption.** Table 5 attributes a few interruptions to SDC. Its cost is set by
# how late it is noticed: the job must rewind to a checkpoint taken *before* the corruption, so
# each event costs the detection latency $L$ on top of $D + R$ (and checkpoints must be kept that
# long). No source gives $L$; the curve below sweeps it. (The per-mode floor of section 1 already counts SDC at
# the course's assumed one-hour latency, `ModeInputs.sdc_latency_min`, with its own restart; the sweep shows how that
# term grows with $L$, at the modes' mean restart.)

# %%
logs = failure_logs()
rows = {r["run"]: r for r in logs.rows}
unexpected, all_stops = rows["Llama 3 405B"], rows["Llama 3 405B (with planned)"]
planned_per_day = (all_stops["events_high"] - unexpected["events_high"]) / unexpected["period_days"]
planned_min = planned_per_day * (f.stages.reschedule + f.stages.reload)
print(f"planned interruptions: {all_stops['events_high'] - unexpected['events_high']:.0f} in {unexpected['period_days']:.0f} days "
      f"= {planned_per_day:.2f} a day, x R = {(f.stages.reschedule + f.stages.reload):.2f} min -> {planned_min:.2f} min/day "
      f"({planned_min / MINUTES_PER_DAY:.3%} of the day)")
sdc_share = fl.table5_share(["Silent Data Corruption"])
sdc_per_day = sdc_share * ans.failures_per_day
print(f"silent data corruption: {sdc_share:.1%} of Table 5's interruptions -> {sdc_per_day:.3f} a day on this job")
latency_h = np.array([0.25, 1, 4, 12, 24])
sdc_min = sdc_per_day * (60 * latency_h + f.stages.restart_cost)
for lh, m in zip(latency_h, sdc_min):
    print(f"  noticed after {lh:5.2f} h: {m:6.2f} min/day ({m / f.floor_minutes_per_day:5.1f}x the floor)")
others = f.minutes_per_day + planned_min
cross_floor = (f.floor_minutes_per_day / sdc_per_day - f.stages.detect - (f.stages.reschedule + f.stages.reload)) / 60
cross_all = (others / sdc_per_day - f.stages.detect - (f.stages.reschedule + f.stages.reload)) / 60
print(f"SDC costs more than the floor once noticed after {cross_floor:.2f} h, more than the after-levers loss and "
      f"planned maintenance together after {cross_all:.2f} h")

# %%
fig, ax = plt.subplots(figsize=(7.0, 3.6))
grid_h = np.geomspace(0.05, 48, 100)
ax.plot(grid_h, sdc_per_day * (60 * grid_h + f.stages.restart_cost), label="silent data corruption")
ax.axhline(f.floor_minutes_per_day, color="#8c564b", ls="--", label="floor λ(D+R) of the unexpected failures")
ax.axhline(planned_min, color="#7f7f7f", ls=":", label="planned maintenance x R")
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_xlabel("SDC detection latency L (hours, swept: no source)")
ax.set_ylabel("minutes lost per day")
ax.set_title("An SDC noticed late costs more than every other failure together")
ax.legend(fontsize=9)
plt.show()

# %% [markdown]
# Planned maintenance adds a fraction of the floor. SDC is different in kind: its cost grows with
# the detection latency, and past the crossover printed above it outweighs everything else the
# job loses. The lever there is detection (loss-spike and gradient checks, deterministic
# re-execution), not checkpointing.
#
# ## 6. The floor and ETTR from 1,024 to 131,072 GPUs
#
# The job's failure rate is GPUs x per-GPU rate, so both the floor and the checkpoint term grow
# with the fleet. Kokolis et al. project the **expected ETTR** (useful time / elapsed) as
# $[1 - N_{nodes} r_f (u_0 + \Delta t/2)] / (1 + w_{cp}/\Delta t)$. First, their own numbers: with
# their inputs (`data/floor_inputs.csv`) `floor.ettr` must reproduce what they print.
# $N_{nodes} r_f$ is the job's failures per day; their $r_f$ is per node-day, so per GPU-day it is
# divided by 8 GPUs per node.

# %%
k = fl.kokolis_projection()
print(f"r_f = {k.rf_per_node_day:g} per node-day = {k.rate_per_gpu_day:.3e} per GPU-day; {k.n_gpus:,.0f} GPUs, "
      f"u0 = {k.restart_overhead_min:g} min, w_cp = {k.write_cost_min:g}")
for dt, printed, digits in [(k.interval_hourly_min, k.ettr_hourly, 1), (k.interval_short_min, k.ettr_short, 2)]:
    e = k.ettr(dt)
    print(f"  dt = {dt:g} min: ETTR {e:.4f} -> rounds to {round(e, digits):g} (paper: {printed:g})")
    assert round(e, digits) == printed
print(f"  MTTF {k.mttf_hours_at(k.n_gpus):.2f} h at {k.n_gpus:,.0f} GPUs (paper {k.mttf_hours:g} h), "
      f"{k.mttf_hours_at(k.large_n_gpus):.3f} h at {k.large_n_gpus:,.0f} (paper {k.large_mttf_hours:g} h)")

# %% [markdown]
# Those printed values use a free write ($w_{cp} = 0$), so they check the numerator and never the
# denominator $1 + w_{cp}/\Delta t$, on which the "hourly, blocking" regime below relies. The paper prints no
# ETTR with a write cost, so the check with one uses their other inputs, the five-minute blocking write of their
# clusters (`data/write_costs.csv`, `pfs_sync` [@kokolis2025]) and hourly checkpoints, against two references:
# `floor.ettr` must equal the free-write ETTR divided by $1 + w_{cp}/\Delta t$, and the job simulated event by
# event (`simulate_job`, useful time over wall time) must match Daly's complete model; the first-order formula
# is then judged against both.

# %%
w_cp = load_table("write_costs.csv").where("regime", "pfs_sync").rows[0]["blocking_s"] / 60  # minutes
dt, u0 = k.interval_hourly_min, k.restart_overhead_min
mttf_min = 60 * k.mttf_hours_at(k.n_gpus)
work_k = sim_days * MINUTES_PER_DAY
print(f"{'w_cp (min)':>10s} {'first order':>12s} {'complete model':>15s} {'simulated':>18s}")
ettr_rows = {}
for w in (0.0, w_cp):
    first = fl.ettr(k.n_gpus, k.rate_per_gpu_day, u0, dt, w)
    w_sim = max(w, 1e-6)  # simulate_job needs a positive write cost
    complete = work_k / iv.expected_wall_time(work_k, dt, w_sim, mttf_min, u0)
    job = simulate_job(work_k, dt, w_sim, mttf_min, u0, n_runs=sim_runs, seed=13)
    e = job.useful / job.wall
    ettr_rows[w] = (first, complete, e.mean(), e.std(ddof=1) / np.sqrt(e.size))
    print(f"{w:10g} {first:12.4f} {complete:15.4f} {e.mean():11.4f} +- {ettr_rows[w][3]:.4f}")
    assert abs(e.mean() - complete) < 4 * ettr_rows[w][3] + 1e-3  # the simulation is Daly's model
assert abs(ettr_rows[w_cp][0] - ettr_rows[0.0][0] / (1 + w_cp / dt)) < 1e-12
print(f"\nthe write's factor: first order 1/(1 + w_cp/dt) = {1 / (1 + w_cp / dt):.3f}, "
      f"complete model {ettr_rows[w_cp][1] / ettr_rows[0.0][1]:.3f}, simulated {ettr_rows[w_cp][2] / ettr_rows[0.0][2]:.3f}")

# %% [markdown]
# The write term is the one the formula gets right in form: a five-minute write every hour stretches the wall time
# by a twelfth. Both first-order factors are approximations, though: at a 1.8-hour MTTF the complete model and the
# simulation put ETTR a few points higher without the write (the formula's $u_0 + \Delta t/2$ per failure overcounts
# at this rate) and charge the write a little more than $1/(1 + w_{cp}/\Delta t)$, because failures also strike
# during the write and make the rewound segment longer. The projection below keeps the paper's first-order
# formula, as the paper does, so read its fleet sizes as first-order estimates.

# %% [markdown]
# Now three ways to checkpoint, each at Kokolis et al.'s restart overhead $u_0$, over the band of
# recent per-GPU rates (`data/failure_rate_band.csv`, the course's band from the public logs of notebook 01):
# - **hourly, blocking**: hourly checkpoints with a blocking write of about five minutes (typical on
#   Meta's research clusters, Kokolis et al.; `data/write_costs.csv`);
# - **async writes**: ByteCheckpoint's blocking 0.59 s for a 405B model (NSDI 2025, Table 8), at the
#   optimal interval but never shorter than its 51 s save;
# - **in-memory snapshots**: the shard to pinned host memory, at the optimal interval;
#
# and a fourth line: in-memory snapshots with this notebook's fast restart ($u_0 = D + R$ after the levers).
#
# **Predict:** at the central rate, at what fleet size does each fall below 90 % ETTR?

# %%
band_table = load_table("failure_rate_band.csv")
band = {r["quantity"]: r["value"] for r in band_table.rows}
regimes = fl.default_regimes(scenario)
regimes.append(regimes[-1].with_restart_overhead(f.stages.restart_cost, "in-memory + fast restart"))
print(f"{'fleet size at 90 % ETTR':28s}" + "".join(f"{q + ' ' + format(band[q], '.0e'):>20s}" for q in ("band_low", "central", "band_high")))
for regime in regimes:
    cells = []
    for q in ("band_low", "central", "band_high"):
        n90 = fl.fleet_size_at_ettr(regime, band[q])
        cells.append(f"{n90:>20,.0f}" if n90 is not None else f"{'beyond 1,048,576':>20s}")
    print(f"{regime.name:28s}" + "".join(cells))

# %%
sizes = np.geomspace(1024, 131072, 57)
fig, axes = plt.subplots(1, 2, figsize=(13.0, 4.4))
ettr_vs_fleet(regimes, band, sizes, ax=axes[0])
floor_vs_fleet({"baseline restart": b.stages.restart_cost, "after the levers": f.stages.restart_cost}, band, sizes, ax=axes[1])
plt.tight_layout()
plt.show()

# %%
big = ans.after.with_failures_per_day(ans.rate_per_gpu_day * sizes[-1])
print(f"floor at {sizes[-1]:,.0f} GPUs and this rate: {big.floor_minutes_per_day:.1f} min/day ({big.floor_fraction:.2%}), "
      f"{big.floor_minutes_per_day / f.floor_minutes_per_day:.0f}x the {ans.n_gpus:,}-GPU floor")

# %% [markdown]
# ### Against what large runs report
#
# Large runs publish their effective training time: Llama 3 405B "higher than 90 %" on up to 16K GPUs (section
# 3.3.4 [@llama3]), MegaScale more than 90 % on more than 10,000 GPUs [@megascale], ByteRobust 97 % over three months
# on 9,600 GPUs [@byterobust] (`data/training_step.csv`). Those figures count every cause; this model counts restarts
# and checkpoints only, so its ETTR at the same fleet size must sit above them. **Predict:** by how much?

# %%
print(f"{'run':14s} {'GPUs':>7s} {'reported':>9s} {'model, baseline':>16s} {'model, levers':>14s} {'left for other causes':>22s}")
for r in reported_ettr(scenario):
    print(f"{r.run:14s} {r.gpus:7,d} {'>=' if r.run != 'ByteRobust' else '  '}{r.reported:7.0%} {r.baseline:16.2%} "
          f"{r.after_levers:14.2%} {'at most ' + format(r.other_causes_at_most, '.1%'):>22s}")

# %% [markdown]
# The model passes the check: at each run's fleet size, restarts and checkpoints alone, after the levers, leave an
# ETTR above what the run reports. What the reports leave for everything else (at most the last column) goes to
# causes this course does not model: stragglers and slow steps, planned maintenance, evaluation pauses, restarts
# that need a person. The course has no sourced number for any of them and invents none; a reported ETTR is a lower
# bound ("higher than 90 %"), so the true remainder may be smaller. Before the levers the check is tighter:
# ByteRobust's 97 % is above this model's baseline at its fleet size, so a run that reaches it must already have
# pulled some of the levers.
#
# Hourly blocking checkpoints break 90 % ETTR at a few thousand GPUs: the write alone costs
# several percent and the half-hour rewind does the rest. Async writes and in-memory snapshots move
# the break out by an order of magnitude, and then the restart overhead $u_0$ sets it: with a
# five-minute restart, $\lambda u_0$ reaches 10 % long before the checkpoint term does. With the
# levers' restart of about three minutes (the last row) the break moves out again, by about the ratio of
# the two restart overheads. The floor grows linearly with the fleet (right panel):
#
# **Try it**
# - Run the notebook with `n_gpus=16384` and `rate_per_gpu_day=8.1e-4` (Meta's RSC-1): how much of the after-levers loss is floor?
# - In the dashboard below, set the write cost to one second: how much does the interval lengthen, and how much does the loss grow? Does the floor move?
# - Which slider moves the floor most per unit of effort: detection, restart or the rate?
#
# ## 7. The dashboard
#
# The same figure as section 1, first as a static call for 16,384 GPUs, then with sliders:
# fleet size, per-GPU rate, what the levers bring detection, restart and reload to, and the
# blocking write cost of the in-memory checkpoint. The sentence above the chart states the floor.

# %%
answer_waterfall(dashboard_answer(n_gpus=4 * scenario.n_gpus))
plt.show()

# %% tags=["nbval-ignore-output", "skip-execution"]
display(dashboard(n_gpus=scenario.n_gpus if scenario.n_gpus in FLEET_SIZES else None, rate_per_gpu_day=scenario.rate_per_gpu_day))

# %% [markdown]
# ## The answer table

# %%
nb = "08-the-floor"
ledger.record(nb, "after_levers_pct", "loss after every lever", 100 * f.fraction_of_day, "% of the day", ".3f")
ledger.record(nb, "after_levers_minutes_per_day", "loss after every lever", f.minutes_per_day, "min/day", ".2f")
ledger.record(nb, "floor_pct", "floor lambda (D + R)", 100 * f.floor_fraction, "% of the day", ".3f")
ledger.record(nb, "interval_after_min", "optimal interval after the in-memory checkpoint", f.interval_min, "min", ".2f")
central_mem = fl.fleet_size_at_ettr(regimes[2], band["central"])
ledger.record(nb, "floor_ettr90_inmemory_gpus", "fleet size at 90 % ETTR, in-memory snapshots (u0 5 min)", central_mem, "GPUs", ",.0f")
print(ledger.table())

# %% [markdown]
# ## Summary

# %%
print(
    f"Every lever, largest first, takes the {ans.n_gpus:,}-GPU job from {b.fraction_of_day:.2%} to {f.fraction_of_day:.3%} "
    f"of the day ({f.minutes_per_day:.2f} min/day, checkpointing every {f.interval_min:.2f} min); the floor "
    f"lambda (D + R) = {f.floor_minutes_per_day:.2f} min/day ({f.floor_fraction:.3%}) stays whatever the checkpoint "
    f"costs (90 % range {ans.spread.floor.low:.2%}-{ans.spread.floor.high:.2%}, the {ans.spread.dominant} dominating); no checkpoint "
    f"lever moves it: fewer failures (lemon-node removal, at one research cluster's illustrative factor: "
    f"{alternatives['lemon-node removal'].floor_minutes_per_day:.2f} min/day), a smaller D + R or stopping fewer GPUs per failure do; "
    f"a day with 4 or more failures, {p4:.0%} of days, pays at least twice the mean."
)

# %% [markdown]
# **Exercises:** [exercises/08-the-floor-ex.ipynb](../exercises/08-the-floor-ex.ipynb) practises this notebook (about 30 minutes; a check names your mistake, and the worked [solutions](../solutions/08-the-floor-sol.ipynb) are there after your own attempt).
#
# **Next:** [notebook 09](09-your-fleet.ipynb) computes this whole answer for your own fleet: size, failure rate, stage
# minutes, state size and measured write cost.
