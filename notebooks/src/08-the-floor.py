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
# - Derive the floor: the loss that stays when the checkpoint write cost goes to zero, as named terms, and check it by simulation.
# - Read the whole chain from 2.08 % to the floor as one waterfall, each lever with the minutes a day it saves, and say why one is left out.
# - Say where 90 % ETTR breaks with hourly checkpoints, async writes and in-memory snapshots, across the band of published failure rates.
#
# **Time:** 30 minutes. **Prerequisites:** [notebook 03](03-anatomy-of-a-restart.ipynb) (the stages and the levers), [notebook 04](04-optimal-interval.ipynb) (the
# optimal interval $\sqrt{2\delta M}$), [notebook 06](06-square-root-pareto.ipynb) (write costs and the square-root law).

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
# this notebook's own knobs (not scenario inputs)
sim_runs = 4000  # simulated jobs in the check of section 3
sim_days = 30  # days of useful work per simulated job

# %%
import matplotlib.pyplot as plt
import numpy as np
import sympy as sp
from IPython.display import display

from course_lib import MINUTES_PER_DAY, Scenario, ledger, prose
from course_lib import failures as fa
from course_lib import floor as fl
from course_lib import interval as iv
from course_lib import levers as lv
from course_lib import projection as pj
from course_lib import uncertainty as un
from course_lib.answer import answer, reported_ettr
from course_lib.data import load_table, sourced
from course_lib.plots.floor import answer_waterfall, ettr_vs_fleet, floor_alternatives, floor_vs_fleet
from course_lib import spares
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
# Each lever's number is sourced in `data/` ([notebook 03](03-anatomy-of-a-restart.ipynb) cites them): a hang seen at a tuned
# timeout (NVRx's safety factor 5 times the step [@nvrx-docs]) instead of NCCL's untuned ten minutes, a lost host at a 30 s
# cross-node heartbeat [@nvrx-source], the shard read back from pinned host memory and snapshotted to it at the
# bandwidth measured for this course (`data/write_costs.csv` [@h200-measurement]), and an in-job restart on a spare,
# FlashRecovery's 150 s end to end [@flashrecovery]. The write *before* is a plain synchronous `torch.save` + fsync of
# the same shard (also measured for this course). `course_lib.answer` applies the levers largest saving first, and each
# only while it saves: a spare whose idle GPUs cost more than its faster restart saves is left out.
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
print(ans.spare.sentence)
floor_line = fl.terms_sentence(f)
rest = f.minutes_per_day - f.floor_minutes_per_day
after = prose.added([f.floor_minutes_per_day, rest], f.minutes_per_day)
print(f"after the levers: {after.total} min/day {after.eq} floor {after.terms[0]} + rewind beyond a step and writes {after.terms[1]}")
print(f"the floor, term by term: {floor_line}")
for t in fl.terms(f):
    print(f"  {t.symbol:42s} {t.per_failure_min:7.3f} min per failure -> {t.minutes_per_day:5.2f} min/day; rests on {t.rests_on}")
print(f"= {f.floor_fraction:.3%} of the day: lambda x the minutes per failure, while the failures fit in the day")

# %%
guess.reveal(f.minutes_per_day)

# %%
answer_waterfall(ans)
plt.show()

# %% [markdown]
# ### The floor per failure mode, and how sure it is
#
# Not every failure costs the same. A crash is seen within the launcher's poll; a hang only when its
# timeout expires; a lost host must reload from a peer's copy; a silent corruption (SDC) rewinds past the
# work done since it struck to a persisted checkpoint older than it (`course_lib.floor`, inputs in `data/`). Its inputs
# are ranges, not points: a Monte Carlo over them (`course_lib.uncertainty`, the same day model on arrays of draws) gives
# the floor's median and 90 % range, and the rank correlation of each input with the floor (and with the loss after
# the levers) says which one the answer hangs on. **Predict:** which mode costs most, and which input dominates the
# floor's range?

# %%
per_mode = fl.per_mode(f)
idle = float(f.floor_budget.idle_minutes_per_day)  # a kept spare's idle GPUs: a term of the floor, of no mode
print(f"{'mode':10s} {'share':>6s} {'floor min/day':>14s}")
for m in f.modes:
    print(f"{m.mode:10s} {m.share:6.1%} {per_mode[m.mode]:14.2f}")
if idle:
    print(f"{'idle spare':10s} {'':6s} {idle:14.2f}")
total = sum(per_mode.values()) + idle
print(f"{'total':10s} {'':6s} {total:14.2f}  (= the floor, {f.floor_fraction:.3%} of the day)")
assert abs(total - f.floor_minutes_per_day) < 1e-9 * f.floor_minutes_per_day
spread = un.floor_range(scenario, n=ans.spread.n, pulled=list(ans.order), shifts=True)
print(f"\nMonte Carlo over the inputs' ranges ({spread.n:,} draws; the rate from its own count, {spread.count:.0f} failures over "
      f"{spread.days:g} days): floor {spread.floor.text()}, after-levers loss {spread.loss.text()}")
for what, dom in (("the floor", spread.floor_dominance), ("the after-levers loss", spread.dominance)):
    print(f"rank correlation with {what}: " + ", ".join(
        f"{k} {v:+.2f}" for k, v in sorted(dom.items(), key=lambda kv: -abs(kv[1]))))
print(spread.dominance_text[:1].upper() + spread.dominance_text[1:])
print(f"point values: floor {f.floor_fraction:.3%}, loss {f.loss_fraction:.3%}, both inside their ranges: "
      f"{spread.floor.contains(f.floor_fraction) and spread.loss.contains(f.loss_fraction)}")
print(spread.shift_sentence)

# %% [markdown]
# The rate's range is the Poisson uncertainty of the count it was measured from: the question's two a day, counted over
# an assumed month, are 60 failures, and 60 counted events pin a rate to about a quarter either way. (Llama 3's log
# says the question's rate is plausible, notebook 01; it is not this fleet's uncertainty.) The hang share is the course's
# mapping of Table 5, a range per component; the hang timeout stays in the *tuned* regime, two to ten times the longest
# gap (NCCL's untuned ten minutes is the baseline, another day, not a tail of this one). The reschedule, which no lever
# shortens without a spare, runs from a tuned Slurm's measured share plus the fastest published start-up, through the
# question's remainder, to what Kokolis et al.'s re-queue leaves ([notebook 15](15-the-schedulers-share.ipynb) measures
# it on a real Slurm cluster); its point sits near the top of that range, which is why the floor's median lies below
# the point floor. None of them is a checkpoint setting. The point values sit inside their ranges; the last line says how far each input alone moves the median.
#
# The widest input is the one nobody has measured: how long a silent corruption goes unnoticed. Where SDC is measured,
# it is measured by screening fleets for the CPUs that miscompute (Meta's [@dixit2021]; Google's "mercurial cores"
# [@hochschild2021]) or by isolating an event once it is suspected (the Gemini report replays steps to find the bad
# device [@gemini1-google]); none of them says how many minutes of a training job ran on corrupt state first. So the
# course assumes it, an hour, and samples ten minutes (a loss-spike check) to a day (a daily evaluation), its logarithm
# triangular because the range spans two orders of magnitude. Every SDC rewinds past that latency, so at its top a
# rare failure mode outweighs every other: the floor's range is mostly this one assumption. The engineering move is
# to measure it (how often does your job compare a checksum or replay a step?) and then to shorten it, which is the
# floor's "faster SDC detection".
#
# The interval lever now checkpoints about once a minute: at a blocking cost of tens of
# milliseconds, the optimum falls from minutes to under one. What remains is
# made of two different things: the rewind and the writes, which shrink with the write cost, and
# the floor, which does not.
#
# ## 2. The floor, derived
#
# With $\lambda$ failures a day, each costing $X = D + R + s\tau/2 + \ell$ (detection, restart and reload, the rewind to the
# latest checkpoint for the share $s$ of failures that restore it, and $\ell$, what the others rewind to the persisted
# checkpoint past a corruption), interval $\tau$ and blocking write $\delta$, the day of $T$ minutes loses
# $W = \lambda X + (T - \lambda X)\,\delta/(\tau + \delta)$ ([notebook 03](03-anatomy-of-a-restart.ipynb); a kept hot spare
# idles a share $i$ of the GPUs, and the day loses $T i + (1 - i) W$). **Predict:** at the best
# $\tau$, what happens to the loss as $\delta \to 0$?

# %%
lam, DR, s_, ell, delta, T, tau = sp.symbols("lambda DR s ell delta T tau", positive=True)
W = lam * (DR + s_ * tau / 2 + ell) + (T - lam * (DR + s_ * tau / 2 + ell)) * delta / (tau + delta)
tau_star = [t for t in sp.solve(sp.diff(W, tau), tau) if t.subs({delta: 1e-3, T: 1440, lam: 2, DR: 3, s_: 1, ell: 1}).is_positive][0]
floor_expr = sp.limit(sp.limit(W, delta, 0), tau, 0)
M = T / lam
assert sp.simplify(tau_star - (-delta + sp.sqrt(delta**2 + 2 * delta * (M - DR - ell) / s_))) == 0
assert sp.simplify(floor_expr - lam * (DR + ell)) == 0
print("tau*          =", sp.simplify(tau_star))
print("delta -> 0, tau -> 0 :", floor_expr, "  (a checkpoint cannot be more frequent than a step: tau -> T_step adds lambda s T_step / 2)")
dr = sum(m.share * (m.detect + m.reschedule + m.reload) for m in f.modes)
values = {lam: f.failures_per_day, DR: dr, s_: f.latest_share, delta: f.write_cost_min, T: MINUTES_PER_DAY,
          ell: f.per_failure_min - dr - f.latest_share * f.interval_min / 2, tau: f.interval_min}
i = float(f.idle_share)  # a kept hot spare's idle share (none unless the spare pays): the day loses T i + (1 - i) W
assert abs(MINUTES_PER_DAY * i + (1 - i) * float(W.subs(values)) - f.minutes_per_day) < 1e-9
assert abs(float(tau_star.subs(values)) - f.interval_min) < 1e-9 * f.interval_min or f.interval_min == f.interval_bound_min
print(f"\ncourse_lib: {f.minutes_per_day:.4f} min/day and an interval of {f.interval_min:.4f} min: the symbolic day and its optimum")

# %% [markdown]
# The checkpoint term vanishes with the write cost, and with it the reason for a longer interval: the interval falls
# to one step, the shortest a checkpoint can be, and what is left is $\lambda$ times the minutes every failure costs
# outside the checkpoint, plus half a step. Every failure still has to be noticed and the job restarted, however cheap
# the checkpoint. That is the floor, the day model's own limit: while the failures fit in the day its minutes are
# $\lambda$ times the minutes per failure. Like the day model it charges a failure during a recovery in full, so it is
# an upper bound; section 3 measures how close it is to a simulated job.
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
# `course_lib.simulate` runs a job event by event: exponential failures, a failure loses the segment since the last
# checkpoint, then a restart of the minutes that do not depend on the interval must itself survive (a failure during
# it restarts it): Daly's complete model, which the simulator reproduces exactly. **Predict:** will the simulated
# waste land within three standard errors of Daly's formula, and how far is the course's day model from both?

# %%
work = sim_days * MINUTES_PER_DAY
restart = f.nonlatest_min  # detection, restart, reload and the rewinds that do not depend on the interval
sim = simulate_job(work, f.interval_min, f.write_cost_min, f.mtbf_min, restart, n_runs=sim_runs, seed=8)
mean, se = sim.mean("waste"), sim.stderr("waste")
exact = iv.expected_waste(f.interval_min, f.write_cost_min, f.mtbf_min, restart)
day_model = f.loss_fraction / (1 - f.loss_fraction)  # the day model's lost time per unit of useful time
print(f"simulated waste  : {mean:.5%} +- {se:.5%} ({sim_runs:,} jobs of {sim_days} days)")
print(f"Daly's model     : {exact:.5%}  (within 3 SE: {abs(mean - exact) < 3 * se})")
print(f"the day model    : {day_model:.5%}  (differs from Daly's by {abs(exact - day_model) / exact:.2%})")
assert abs(mean - exact) < 3 * se
parts = sim.breakdown()
print("simulated minutes per day of useful work: " + ", ".join(
    f"{k} {v / sim_days:.2f}" for k, v in parts.items() if k != "useful"))

# %% [markdown]
# The simulation's "restart" minutes are $\lambda$ times the minutes outside the interval; its "checkpoint" and
# "rewound" minutes are the two near-equal halves of the checkpoint term. The day model and Daly's agree to a fraction
# of a percent here: they differ only in second order, in how a failure during a restart is charged (Daly restarts the
# restart; the day model adds the new failure's own minutes). At scale they part (notebook 09 shows where), and the
# day model is the one that never passes the day.
#
## 4. What moves the floor: fewer failures, a smaller D + R, or stopping fewer GPUs
#
# No checkpoint lever moves $\lambda(D+R)$. It has two factors. $D + R$ is a few minutes after the levers, most of it
# the rescheduling, and it is bounded below: a hang is seen only at a timeout, a new process pays its start-up.
# $\lambda$ is untouched by anything in notebooks [03](03-anatomy-of-a-restart.ipynb)-[07](07-fault-injection-lab.ipynb). Two ways to see how far fewer failures could
# shrink it, one measured on a real fleet and one a bound:
# - **lemon-node removal, measured**: take the nodes that fail most out of the fleet. Measured the only honest way, out of
#   sample, on a real fault log (the InfiniteHBD trace, stepfun-ai [@infinitehbd-trace]: 400 servers over 348 days;
#   [notebook 13](13-your-incident-log.ipynb) derives it): the lemons are chosen on the log's first half and the removal is
#   judged on its second half. The servers that failed most in the first half do not fail more than the rest in the second:
#   the factor comes out above 1, while in sample (chosen and judged on the same faults) the same removal looks like a large
#   gain. A factor above 1 means removal bought nothing, so the course's lever is clamped at 1, and says so. Kokolis et al.
#   (HPCA 2025 [@kokolis2025], `data/floor_inputs.csv`) cut the share of large jobs (512+ GPUs) that failed on one research
#   cluster from 14 % to 4 %: a job-level share, not a per-GPU rate. Read as a rate factor
#   ($\ln(1-p_{after})/\ln(1-p_{before})$ for Poisson failures over the same job lengths) it would remove more failures than
#   there are faulty-GPU and HBM3 failures to remove, and lemon nodes fail through exactly those. So whatever a fleet
#   measures, no removal can buy more than the bound below. The factor is one input of the scenario, `lemon_factor`: a
#   factor measured on your own fault log replaces the trace's with one line.
# - **no faulty GPUs and no HBM3 failures (a bound)**: the top causes of Llama 3's Table 5 (arXiv:2407.21783 [@llama3];
#   shares computed from the raw counts, [notebook 01](01-per-gpu-failure-rate.ipynb)'s erratum). This is not a lever anyone can pull: it
#   asks what the floor would be if those causes vanished altogether, an upper bound on what better hardware, burn-in and
#   any lemon removal buy.
#
# They are alternatives, not a chain: lemon nodes are largely those same bad GPUs.
#
# **Predict:** which one lowers the floor more?

# %%
inputs = sourced("floor_inputs.csv")
alternatives = {"after the levers": f}
for lever, g in ans.fewer:
    alternatives[lever.name] = g
    print(f"{lever.name:22s} {lever.description}")
    print(f"{'':22s} floor {f.floor_minutes_per_day:.2f} -> {g.floor_minutes_per_day:.2f} min/day; "
          f"after-levers loss {f.minutes_per_day:.2f} -> {g.minutes_per_day:.2f} min/day")
measured = lv.measured_lemon_removal()  # the InfiniteHBD trace, out of sample (notebook 13)
print(f"\nlemon nodes, measured on a real fleet: x {measured.factor:.3f} out of sample (95 % interval {measured.factor_low:.3f}-"
      f"{measured.factor_high:.3f}), x {measured.in_sample:.2f} in sample; the lever: x {scenario.lemon_factor:.2f}"
      + ("" if measured.gained or "lemon_factor" in scenario.given else " (clamped at 1: removal bought nothing)"))
lemon_p = (inputs["lemon_job_failure_before"].value, inputs["lemon_job_failure_after"].value)
print(f"one research cluster: {lemon_p[0]:g} % -> {lemon_p[1]:g} % of large jobs failed; read as a rate x "
      f"{lv.kokolis_lemon_rate_factor():.2f}, beyond what removing every faulty GPU and HBM3 failure gives, x {lv.lemon_bound():.2f}")
for factor in sorted({lv.lemon_bound(), 0.8, 0.9, 1.0, scenario.lemon_factor}):  # the most any removal buys ... no gain
    g = lv.fewer_failures(f, factor)
    print(f"  rate x {factor:.2f}: floor {g.floor_minutes_per_day:.2f} min/day ({g.floor_fraction:.3%})")

# %%
floor_alternatives(alternatives)
plt.title("Fewer failures shrink both the floor and the checkpoint term")
plt.show()

# %% [markdown]
# A hot spare is not free either. Its GPUs wait, and a GPU that waits is capacity the job does not train on: one
# 8-GPU server beside the job is charged to the day as the share of the GPUs paid for that idle, unless it is pooled
# across jobs. The answer keeps a lever only while it saves, so the spare is kept or left out by its net saving, and
# the reschedule it replaces decides which: **predict** at what reschedule the spare pays for itself at this fleet.

# %%
v = ans.spare
print(v.sentence)
print(f"break-even reschedule: {v.break_even_min:.2f} min (the spare's own {scenario.reschedule_after_min:.2f} min + its "
      f"idle minutes spread over the failures)")
for resched in (v.reschedule_min, v.break_even_min, v.requeue_low_min, 20.0):
    x = answer(scenario.replace(reschedule_min=resched), spread_draws=0).spare
    print(f"  reschedule {resched:5.2f} min without a spare: net {x.net:+6.2f} min/day -> {'keep' if x.net > 0 else 'leave out'}")
for g in (scenario.n_gpus, 4 * scenario.n_gpus):
    a_g = ans if g == scenario.n_gpus else answer(scenario.replace(n_gpus=g), spread_draws=0)
    print(f"{g:7,d} GPUs: the spare's restart saves {a_g.spare.gross:.2f} min/day, its idle GPUs cost "
          f"{a_g.spare.cost:.2f}: net {a_g.spare.net:+.2f} min/day, {'kept' if a_g.spare.pulled else 'left out'}")
be = spares.break_even_repair_min(ans.failures_per_day, scenario.modes.replica_gpus, scenario.modes.spare_gpus)
print(f"elastic instead (drop one {scenario.modes.replica_gpus:g}-GPU replica until the node is repaired): cheaper than a "
      f"dedicated spare when a repair takes less than {be:.0f} min")

# %% [markdown]
# The spare's saving grows with the failures, so with the fleet; its cost, a fixed number of GPUs, shrinks as a
# share of a larger job. At the question's numbers the reschedule it replaces is only what the 15 minutes leave, just
# above FlashRecovery's end-to-end restart, so it does not pay; every sourced re-queue (Kokolis et al.'s 5-20 minutes)
# is above the break-even, and there it would. The recommendation therefore rests on a stage the course could not
# source: measure the reschedule before buying a spare ([notebook 15](15-the-schedulers-share.ipynb) measures Slurm's share of it
# on a real cluster and asks how long the job's own start-up may take before the spare pays). Continuing elastically on one replica fewer, until the node is
# repaired, is the other way to do without a spare.
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
# unexpected ones (`data/failure_logs.csv`): inside the question's two a day, or on top? The question says failures,
# so on top, unless its log counted them too. A planned stop needs no detection and can checkpoint just before it
# (checkpoint on notice), so it costs a restart and a reload, no rewind. The count is per job, not per GPU, so it is
# not scaled with the fleet (an assumption).
#
# **Silent data corruption.** Table 5 attributes a few interruptions to SDC. Its cost is set by
# how late it is noticed: the job must rewind to a persisted checkpoint taken *before* the corruption, so
# each event costs the detection latency $L$ and half the persisted interval on top of $D + R$ (and checkpoints must be
# kept that long). No source gives $L$; the course assumes an hour (the floor's third term), and the curve below sweeps
# it through the same day model (`floor.sdc_minutes_per_day`).

# %%
count, days, planned_per_day = fa.planned_interruptions()
restart_only = sum(m.share * (m.reschedule + m.reload) for m in f.modes)
planned_min = planned_per_day * restart_only
print(f"planned interruptions: {count} in {days:g} days = {planned_per_day:.2f} a day, x a restart and a reload "
      f"({restart_only:.2f} min) -> {planned_min:.2f} min/day ({planned_min / MINUTES_PER_DAY:.3%} of the day)")
sdc_share = lv.table5_share(["Silent Data Corruption"])
print(f"silent data corruption: {sdc_share:.1%} of Table 5's interruptions -> {sdc_share * ans.failures_per_day:.3f} a day on this job")
latency_h = np.array([5 / 60, 0.25, 1, 4, 12, 24])
sdc_min = np.array([fl.sdc_minutes_per_day(f, 60 * lh) for lh in latency_h])
for lh, m in zip(latency_h, sdc_min):
    print(f"  noticed after {lh:5.2f} h: {m:6.2f} min/day ({m / f.floor_minutes_per_day:5.2f}x the floor)")
grid_h = np.geomspace(0.05, 48, 200)
sdc_grid = np.array([fl.sdc_minutes_per_day(f, 60 * lh) for lh in grid_h])
others = f.minutes_per_day - fl.per_mode(f)["sdc"]  # everything else the job loses after the levers
cross_floor = grid_h[np.argmax(sdc_grid > f.floor_minutes_per_day)]
cross_all = grid_h[np.argmax(sdc_grid > others + planned_min)]
print(f"SDC alone costs more than the whole floor once noticed after about {cross_floor:.1f} h, more than everything else "
      f"after the levers and planned maintenance together after about {cross_all:.1f} h")

# %%
fig, ax = plt.subplots(figsize=(7.0, 3.6))
ax.plot(grid_h, sdc_grid, label="silent data corruption (the floor's SDC term)")
ax.axhline(f.floor_minutes_per_day, color="#8c564b", ls="--", label="the floor, every mode (SDC at 1 h)")
ax.axhline(planned_min, color="#7f7f7f", ls=":", label="planned maintenance x a restart")
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
# their inputs (`data/floor_inputs.csv`) their formula (`projection.kokolis_ettr`) must reproduce what they print, and
# the course's day model at the same inputs (one failure mode costing $u_0 + \Delta t/2$) is compared beside it.
# $N_{nodes} r_f$ is the job's failures per day; their $r_f$ is per node-day, so per GPU-day it is
# divided by 8 GPUs per node.

# %%
k = pj.kokolis_projection()
print(f"r_f = {k.rf_per_node_day:g} per node-day = {k.rate_per_gpu_day:.3e} per GPU-day; {k.n_gpus:,.0f} GPUs, "
      f"u0 = {k.restart_overhead_min:g} min, w_cp = {k.write_cost_min:g}")
for dt, printed, digits in [(k.interval_hourly_min, k.ettr_hourly, 1), (k.interval_short_min, k.ettr_short, 2)]:
    e = k.ettr(dt)
    print(f"  dt = {dt:g} min: their formula {e:.4f} -> rounds to {round(e, digits):g} (paper: {printed:g}); "
          f"the course's day model {k.course_ettr(dt):.4f}")
    assert round(e, digits) == printed and abs(k.course_ettr(dt) - e) < 1e-12
print(f"  MTTF {k.mttf_hours_at(k.n_gpus):.2f} h at {k.n_gpus:,.0f} GPUs (paper {k.mttf_hours:g} h), "
      f"{k.mttf_hours_at(k.large_n_gpus):.3f} h at {k.large_n_gpus:,.0f} (paper {k.large_mttf_hours:g} h)")

# %% [markdown]
# At their inputs the course's day model *is* their formula: one failure costs $u_0 + \Delta t/2$, the job recovers
# $\lambda (u_0 + \Delta t/2)$ of the day, and every $\Delta t$ of training pays $w_{cp}$, so the useful share is
# $[1 - \lambda(u_0 + \Delta t/2)]\,\Delta t/(\Delta t + w_{cp})$, their expression exactly. One model, theirs shown and
# compared. Their printed values use a free write ($w_{cp} = 0$); the check with one uses their clusters' five-minute
# blocking write (`data/write_costs.csv`, `pfs_sync` [@kokolis2025]) and hourly checkpoints, against the job simulated
# event by event (`simulate_job`, useful time over wall time), which is Daly's complete model.

# %%
w_cp = load_table("write_costs.csv").where("regime", "pfs_sync").rows[0]["blocking_s"] / 60  # minutes
dt, u0 = k.interval_hourly_min, k.restart_overhead_min
mttf_min = 60 * k.mttf_hours_at(k.n_gpus)
work_k = sim_days * MINUTES_PER_DAY
print(f"{'w_cp (min)':>10s} {'day model':>10s} {'Daly':>8s} {'simulated':>18s}")
ettr_rows = {}
for w in (0.0, w_cp):
    ours = pj.CheckpointRegime("theirs", u0, write_cost_min=w, interval_min=dt).ettr(k.n_gpus, k.rate_per_gpu_day)
    w_sim = max(w, 1e-6)  # simulate_job needs a positive write cost
    complete = work_k / iv.expected_wall_time(work_k, dt, w_sim, mttf_min, u0)
    job = simulate_job(work_k, dt, w_sim, mttf_min, u0, n_runs=sim_runs, seed=13)
    e = job.useful / job.wall
    ettr_rows[w] = (ours, complete, e.mean(), e.std(ddof=1) / np.sqrt(e.size))
    print(f"{w:10g} {ours:10.4f} {complete:8.4f} {e.mean():11.4f} +- {ettr_rows[w][3]:.4f}")
    assert abs(e.mean() - complete) < 4 * ettr_rows[w][3] + 1e-3  # the simulation is Daly's model
    assert abs(ours - pj.kokolis_ettr(k.n_gpus, k.rate_per_gpu_day, u0, dt, w)) < 1e-12  # their formula, exactly
print(f"\nthe write's factor: dt / (dt + w_cp) = {dt / (dt + w_cp):.3f} in the day model, "
      f"Daly {ettr_rows[w_cp][1] / ettr_rows[0.0][1]:.3f}, simulated {ettr_rows[w_cp][2] / ettr_rows[0.0][2]:.3f}")

# %% [markdown]
# The write term is the one the formula gets right in form: a five-minute write every hour stretches the wall time
# by a twelfth. At a 1.8-hour MTTF the second-order terms show: Daly's model and the simulation put ETTR a few points
# higher (a failure soon after a restart rewinds less than half an interval) and charge the write a little more
# (failures strike during the write too). The day model stays on the cautious side of both here, and it never passes
# the day at any scale: read the fleet sizes below as the day model's.

# %% [markdown]
# Now three ways to checkpoint, each at Kokolis et al.'s restart overhead $u_0$, over the band of
# recent per-GPU rates (`data/failure_rate_band.csv`, the course's band from the public logs of notebook 01):
# - **hourly, blocking**: hourly checkpoints with a blocking write of about five minutes (typical on
#   Meta's research clusters, Kokolis et al.; `data/write_costs.csv`);
# - **async writes**: ByteCheckpoint's blocking 0.59 s for a 405B model (NSDI 2025, Table 8), at the
#   optimal interval but never shorter than its 51 s save;
# - **in-memory snapshots**: the shard to pinned host memory, at the optimal interval;
#
# and a fourth line: in-memory snapshots with this notebook's restart after the levers ($u_0 = D + R$ after the levers).
# All four are days of the course's model (`projection.CheckpointRegime`), their intervals chosen by the one bounded
# optimum (`interval.best_interval`).
#
# **Predict:** at the central rate, at what fleet size does each fall below 90 % ETTR?

# %%
band_table = load_table("failure_rate_band.csv")
band = {r["quantity"]: r["value"] for r in band_table.rows}
regimes = pj.default_regimes(scenario)
regimes.append(regimes[-1].with_restart_overhead(f.stages.restart_cost, "in-memory + fast restart"))
print(f"{'fleet size at 90 % ETTR':28s}" + "".join(f"{q + ' ' + format(band[q], '.0e'):>20s}" for q in ("band_low", "central", "band_high")))
for regime in regimes:
    cells = []
    for q in ("band_low", "central", "band_high"):
        n90 = pj.fleet_size_at_ettr(regime, band[q])
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
big = answer(scenario.replace(n_gpus=int(sizes[-1])), spread_draws=0)
print(f"at {sizes[-1]:,.0f} GPUs and this rate: after the levers ({', '.join(big.order)}) {big.after.minutes_per_day:.1f} min/day "
      f"({big.after.loss_fraction:.2%}), floor {big.after.floor_minutes_per_day:.1f} min/day ({big.after.floor_fraction:.2%}), "
      f"{big.after.floor_minutes_per_day / f.floor_minutes_per_day:.0f}x the {ans.n_gpus:,}-GPU floor")

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
ledger.record(nb, "floor_pct", "floor", 100 * f.floor_fraction, "% of the day", ".3f")
ledger.record(nb, "interval_after_min", "optimal interval after the in-memory checkpoint", f.interval_min, "min", ".2f")
central_mem = pj.fleet_size_at_ettr(regimes[2], band["central"])
ledger.record(nb, "floor_ettr90_inmemory_gpus", "fleet size at 90 % ETTR, in-memory snapshots (u0 5 min)", central_mem, "GPUs", ",.0f")
print(ledger.table())

# %% [markdown]
# ## Summary

# %%
print(
    f"The levers that save, largest first ({', '.join(ans.order)}), take the {ans.n_gpus:,}-GPU job from "
    f"{b.loss_fraction:.2%} to {f.loss_fraction:.3%} of the day ({f.minutes_per_day:.2f} min/day, checkpointing every "
    f"{f.interval_min:.2f} min); the floor, {floor_line}, is {f.floor_fraction:.3%} of the day whatever the checkpoint "
    f"costs (90 % range {spread.floor.low:.2%}-{spread.floor.high:.2%}, {un.SPOKEN[spread.floor_dominant]} dominating); no checkpoint lever moves it but "
    f"the persisted interval behind a silent corruption: fewer failures ({ans.lemon_words}), a smaller D + R or stopping fewer GPUs per "
    f"failure do; a day with 4 or more failures, {p4:.0%} of days, pays at least twice the mean."
)

# %% [markdown]
# **Exercises:** [exercises/08-the-floor-ex.ipynb](../exercises/08-the-floor-ex.ipynb) practises this notebook (about 30 minutes; a check names your mistake, and the worked [solutions](../solutions/08-the-floor-sol.ipynb) are there after your own attempt).
#
# **Next:** [notebook 09](09-your-fleet.ipynb) computes this whole answer for your own fleet: size, failure rate, stage
# minutes, state size and measured write cost.
