# %% [markdown]
# # 04 · The optimal checkpoint interval: a square root, derived and simulated
#
# **The question.** Every checkpoint stalls training for a moment; every failure throws away the work
# done since the last one. Checkpoint often and the stalls add up; checkpoint rarely and the rewinds do.
# *Where is the best interval for our 4,096-GPU job, and how much does the restart cost change it?*
#
# **Learning objectives**
# - Derive Young's optimum $\tau^* = \sqrt{2\delta M}$ and the waste at it, $W^* = \sqrt{2\delta/M} + R/M$, in sympy.
# - Compare Young's first-order answer with Daly's higher-order estimate and the exact optimum (Lambert W).
# - Check the whole model with a Monte Carlo of the job, and say which models let the restart cost $R$ move the optimum and which do not.
#
# **Time:** 25 minutes. **Prerequisites:** [notebook 02](02-fleet-mtbf.ipynb) (fleet MTBF $M$ = 12 h) and [notebook 00](00-the-question.ipynb) (the 15-minute restart and
# the 10-minute baseline interval).

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
write_cost_regime = None  # None: the course's synchronous write (the scenario's); or a row of data/write_costs.csv
n_runs = 20000  # simulated runs per interval

# %%
import math

import matplotlib.pyplot as plt
import numpy as np
import sympy as sp
from IPython.display import Math, display
from ipywidgets import interact

from course_lib import Scenario, ledger
from course_lib import interval as iv
from course_lib.data import load_table
from course_lib.plots import interval as interval_plots
from course_lib.simulate import simulate_job
from course_lib.widgets.interval import interval_controls, interval_view

scenario = Scenario.from_namespace(globals())  # the parameters above
M = scenario.mtbf_min  # fleet MTBF in minutes
R = scenario.minutes_per_restart - scenario.mean_rewind_min  # restart cost without the rewound work
costs = load_table("write_costs.csv")
if write_cost_regime is None:  # the synchronous write every notebook uses: the shard per GPU through torch.save + fsync
    write_s = 60 * scenario.write_cost_min
    write_what = (f"the {scenario.shard_gb:.2g} GB shard per GPU through torch.save + fsync at "
                  f"{scenario.persist_gb_per_s:g} GB/s, measured")
else:  # a what-if from the table of write costs seen in practice
    row = costs.where("regime", write_cost_regime).rows[0]
    write_s, write_what = row["blocking_s"], row["description"]
delta = write_s / 60  # blocking write cost in minutes
print(f"fleet MTBF M          : {M:.0f} min ({scenario.fleet_mtbf_hours:.0f} h)")
print(f"restart cost R        : {R:.2f} min (the {scenario.minutes_per_restart:g} min per restart minus the mean rewind of {scenario.mean_rewind_min:.2f} min)")
print(f"baseline write cost   : {write_s:.3g} s = {delta:.4f} min ({write_what})")

# %% [markdown]
# The baseline write cost is the one the whole course uses: each GPU writes its shard of the 405B model's
# checkpoint (12 bytes per parameter: fp32 weights and two Adam moments) with `torch.save` and `fsync`, at the
# bandwidth [notebook 05](05-write-cost.ipynb) measures. The restart cost $R$ is what is left of the question's
# 15 minutes once the mean rewind (half the 10-minute baseline interval) is taken out.
#
# The question's 2 % counts restarts only. The writes are a cost of their own, paid every interval whether or
# not anything fails, so the course counts them beside the restarts, before the levers and after: the waste
# below includes them.
#
# ## The waste model
#
# Take a checkpoint every $\tau$ minutes of work; each one blocks training for $\delta$; failures arrive
# on average every $M$ minutes; each failure costs a restart $R$ plus the work since the last checkpoint,
# on average $\tau/2$. Per minute of useful work the job loses
#
# $$W(\tau) = \underbrace{\frac{\delta}{\tau}}_{\text{writing}} + \underbrace{\frac{\tau/2 + R}{M}}_{\text{failures}}.$$
#
# **Predict first:** if checkpoints become 4 times cheaper, does the best interval get 4 times shorter, 2 times
# shorter, or stay the same? And does a faster restart (smaller $R$) make you checkpoint more or less often?

# %%
from course_lib.notebook import predict

my_guess = None  # your guess: how many times shorter the best interval gets with 4 times cheaper checkpoints
guess = predict("04.cheaper-interval", my_guess, "times shorter")

# %%
d = iv.derive_young()
display(Math(r"W(\tau) = " + sp.latex(d.waste)))
display(Math(r"\frac{dW}{d\tau} = " + sp.latex(d.derivative)))
display(Math(r"\tau^* = " + sp.latex(d.tau_star)))
display(Math(r"W(\tau^*) = " + sp.latex(d.waste_star)))
assert sp.simplify(d.tau_star - sp.sqrt(2 * d.delta * d.M)) == 0
assert sp.simplify(d.waste_star - (sp.sqrt(2 * d.delta / d.M) + d.R / d.M)) == 0
assert d.second_derivative.is_positive  # a minimum
print("R appears in tau*:", d.R in d.tau_star.free_symbols, "| R appears in W*:", d.R in d.waste_star.free_symbols)

# %%
guess.reveal(float(d.tau_star / d.tau_star.subs(d.delta, d.delta / 4)))

# %% [markdown]
# The reveal: the best interval grows with the **square root** of the write cost, so 4 times cheaper
# checkpoints mean a 2 times shorter interval, and in this first-order model the restart cost $R$ is
# not in $\tau^*$ at all (Young, *A first order approximation to the optimum checkpoint interval*, CACM
# 17(9), 1974 [@young1974]): $R/M$ is a fixed toll per minute of work that no choice of interval removes. Whether
# $R$ moves the optimum depends on the model, as the section on $R$ below shows.
#
# ## The numbers for our job

# %%
tau_young = iv.young_interval(delta, M)
w_young = iv.waste_fraction(tau_young, delta, M, R)
print(f"tau* = sqrt(2 delta M) = sqrt(2 x {delta:.4f} x {M:.0f}) = {tau_young:.1f} min")
print(f"W*   = sqrt(2 delta/M) + R/M = {math.sqrt(2 * delta / M):.2%} + {R / M:.2%} = {w_young:.2%} of useful work")
w_base = iv.waste_fraction(scenario.checkpoint_interval_min, delta, M, R)
print(f"the course's baseline interval: {scenario.checkpoint_interval_min:g} min, waste there {w_base:.2%} "
      f"= the question's {(scenario.mean_rewind_min + R) / M:.2%} to restarts + {delta / scenario.checkpoint_interval_min:.2%} to writes")
print(f"moving to tau* saves {w_base - w_young:.2%} of useful work ({(w_base - w_young) / w_base:.0%} of the waste)")

# %% [markdown]
# The 10-minute interval the course assumed in [notebook 00](00-the-question.ipynb) is longer than the optimum for
# this write, and moving to $\tau^*$ saves a modest share of the waste: the curve is flat near its minimum, and
# most of what is lost is the restart toll $R/M$, which no interval removes. Counted like this, with its writes,
# the baseline loses a little more than the question's 2 %.
#
# ## Daly: higher order and exact
#
# The first-order model ignores failures during a checkpoint write and during a restart, and that the
# rewound work can itself be hit again. Daly's complete model (Daly, *A higher order estimate of the optimum
# checkpoint interval for restart dumps*, FGCS 22(3), 2006) keeps them: every segment of $\tau + \delta$ must
# run failure-free, and a failure during a restart restarts the restart. With exponential failures the
# expected wall time of a job of $T_s$ useful minutes is
#
# $$T_w(\tau) = M e^{R/M}\left(e^{(\tau+\delta)/M} - 1\right)\frac{T_s}{\tau}.$$
#
# Setting $dT_w/d\tau = 0$ gives $(1 - \tau/M)\,e^{(\tau+\delta)/M} = 1$, solved exactly by the principal branch of Lambert W:
# $\tau = M\,(1 + W_0(-e^{-\delta/M-1}))$. Daly's series estimate is
# $\sqrt{2\delta M}\,[1 + \tfrac13\sqrt{\delta/2M} + \tfrac19\,\delta/2M] - \delta$ (for $\delta < 2M$).
#
# **Predict:** at $\delta/M = 0.1$ (a write of a tenth of the MTBF), is Young's interval too long or too short, and by how much?

# %%
ratios = np.array([1e-4, 1e-3, 1e-2, 0.1, 0.5, 1.0])
young = iv.young_interval(ratios * M, M)
daly = iv.daly_interval(ratios * M, M)
exact = iv.optimal_interval_exact(ratios * M, M)
print(f"{'delta/M':>8} {'Young/M':>9} {'Daly/M':>9} {'exact/M':>9} {'Young err':>10} {'Daly err':>9}")
for r, y, dl, e in zip(ratios, young, daly, exact):
    print(f"{r:8.0e} {y / M:9.4f} {dl / M:9.4f} {e / M:9.4f} {y / e - 1:+10.2%} {dl / e - 1:+9.2%}")
tau_exact = iv.optimal_interval_exact(delta, M)
print(f"\nour job, delta/M = {delta / M:.1e}: Young {tau_young:.2f} min, Daly {iv.daly_interval(delta, M):.2f} min, exact {tau_exact:.2f} min")

# %% [markdown]
# Young's square root overshoots, and more so as $\delta/M$ grows; Daly's series stays close to the exact optimum
# across the whole table. For our job $\delta/M$ is tiny and the three agree closely (last line): the square root
# is all we need, and the exact form is there to check it.
#
# ## Check by simulation
#
# `course_lib.simulate` plays the job out: a month of useful work, failure times drawn from an exponential
# distribution with mean $M$, failures striking during work, during a write or during a restart, exactly as in
# Daly's model, but without any of the algebra. All intervals see the same failures (common random numbers),
# so the curve's shape is not blurred by noise between points.
#
# **Predict:** will the simulated minimum sit at Young's interval or a little to the left of it?

# %%
work = 30 * 24 * 60.0  # a month of useful work (minutes)
taus = np.round(np.linspace(0.4, 2.5, 22) * tau_exact, 3)
sims = [simulate_job(work, t, delta, M, R, n_runs=n_runs, seed=2024) for t in taus]
sim_mean = np.array([s.mean("waste") for s in sims])
sim_se = np.array([s.stderr("waste") for s in sims])
exact_curve = np.array([iv.expected_wall_time(work, t, delta, M, R) / work - 1 for t in taus])
z = (sim_mean - exact_curve) / sim_se
best = taus[np.argmin(sim_mean)]
step = taus[1] - taus[0]
print(f"simulated optimum {best:.2f} min, exact {tau_exact:.2f} min (grid step {step:.2f} min)")
print(f"points within 2 standard errors of Daly's model: {np.sum(np.abs(z) < 2)} of {z.size}; largest |z| = {np.abs(z).max():.1f}")
assert abs(best - tau_exact) <= step
assert np.abs(z).max() < 4

# %%
ax = interval_plots.waste_curve(taus, delta, M, R, sim_mean=sim_mean, sim_se=sim_se, exact=exact_curve)
ax.set_title(f"Waste against the interval: {n_runs:,} simulated months per point (M = {M:.0f} min, R = {R:.0f} min)")
plt.show()

# %% [markdown]
# The simulation sits on Daly's curve within its error band, and the first-order curve is a hair below both
# (it forgets failures during writes and restarts). The minimum is flat: one interval step either side costs
# little, which is why a round 10 minutes is fine.
#
# ## Does $R$ move the optimum? It depends on the model
#
# Three models, three answers:
# - **Daly's complete exponential model** (the $T_w$ above [@daly2006]): $R$ enters only through the factor
#   $e^{R/M}$, which multiplies the whole curve. It scales the waste up but cannot move its minimum, so the
#   exact optimum does not depend on $R$. The first-order waste $W(\tau)$ agrees: there $R/M$ is an additive constant.
# - **Daly's own first-order estimate** in the same paper is $\sqrt{2\delta(M + R)}$: derived with the
#   restart inside the time between failures, it lengthens the interval a little when restarts are long.
# - **Saxena et al.** (NVIDIA, 2024 [@saxena2024]) optimise *availability* rather than wall time and give
#   $T_s + \sqrt{2 (T_f + T_r) T_s + T_s^2}$, with the save time $T_s = \delta$, the MTBF $T_f = M$ and the restart
#   time $T_r = R$; they add that when errors are detected late (a long detection latency) the interval should be
#   at least that latency, or the job rewinds past its last good checkpoint.
#
# Whatever the model, the restart itself is paid once per failure at any interval, so no interval buys it back;
# only a faster restart or fewer failures can (notebooks [03](03-anatomy-of-a-restart.ipynb) and [08](08-the-floor.ipynb)). For our job the
# intervals below differ by a few percent at most, because $R$ is small against $M$ and $\delta$ against both, and
# the waste curve is flat near its minimum, so any of them is a good choice here.

# %%
daly_first = math.sqrt(2 * delta * (M + R))
saxena = delta + math.sqrt(2 * (M + R) * delta + delta**2)
print(f"exact optimum (Daly's complete model, any R): {tau_exact:.3f} min")
print(f"Daly's first-order sqrt(2 delta (M + R))    : {daly_first:.3f} min ({daly_first / tau_exact - 1:+.2%})")
print(f"Saxena et al. T_s + sqrt(2(T_f+T_r)T_s+T_s^2): {saxena:.3f} min ({saxena / tau_exact - 1:+.2%})")
print(f"Young's sqrt(2 delta M)                     : {tau_young:.3f} min ({tau_young / tau_exact - 1:+.2%})\n")

restarts = [0.0, R, 3 * R]
fine = np.linspace(0.3 * tau_exact, 3 * tau_exact, 400)
for r in restarts:
    w = iv.expected_waste(fine, delta, M, r)
    print(f"R = {r:5.1f} min: argmin {fine[np.argmin(w)]:.2f} min, waste at the optimum {w.min():.3%}")
ax = interval_plots.restart_shift(fine, delta, M, restarts)
plt.show()

# %% [markdown]
# **Try it.** Change `write_cost_regime` in the parameters cell to `"pfs_sync"` (a 5-minute synchronous write to a
# parallel file system, Kokolis et al., HPCA 2025) and rerun: the optimum moves to well over an hour, the regime
# the hourly checkpoints of large clusters live in. Then try `n_gpus = 16384` (4 times the failures).
#
# ## Explore
#
# The dashboard computes the same numbers for any write cost, MTBF and restart cost. First a static call with our
# job's values:

# %%
interval_view(write_s, scenario.fleet_mtbf_hours, R)

# %% tags=["nbval-ignore-output", "skip-execution"]
_ = interact(interval_view, **interval_controls(write_s, scenario.fleet_mtbf_hours, R))

# %% [markdown]
# ## How fast is the simulator?
#
# `benchmarks/simulate_bench.py` times the vectorized simulator against a plain per-event Python loop of the
# same model on the same seeds (the two give the same runs), and against numpy's raw exponential draws, the
# ceiling for any simulator that must draw its failure times. The committed table (measured on one machine: yours
# will give other numbers):

# %% tags=["nbval-ignore-output"]
import json
from pathlib import Path

import course_lib

bench = Path(course_lib.__file__).resolve().parent.parent / "benchmarks" / "results" / "simulate_bench.json"
if bench.exists():
    b = json.loads(bench.read_text())
    loop, crn, fresh = b["rows"][0], b["rows"][2], b["rows"][3]
    print(f"machine: {b['machine']['cpu']}, {b['machine']['cores']} cores, numpy {b['machine']['numpy']}, {b['machine']['date']}")
    print(f"vectorized vs loop (events/s): {crn['x_loop_events']:.0f}x")
    print(f"draws/s as a share of raw numpy draws: {crn['pct_of_raw_draws']:.0f} % with common random numbers, "
          f"{fresh['pct_of_raw_draws']:.0f} % without")
else:
    print("run benchmarks/simulate_bench.py to produce the table")

# %% [markdown]
# Why the simulator runs at only a fraction of the speed of numpy's raw draws: a round of the simulator makes about a
# dozen passes over the arrays of runs still going (restart, whole segments by one floor division, completion test),
# each costing about as much as drawing the number, and with common random numbers each round also draws a value for
# every run, finished or not, so about half of the values drawn are never used. That is the price of giving every
# interval the same failures, which is what makes the simulated optimum above sharp. (The benchmark's own table,
# `benchmarks/results/simulate_bench.md`, records how it measured this.)
#
# ## The answer table

# %%
w_exact = iv.expected_waste(tau_exact, delta, M, R)
ledger.record("04-optimal-interval", "optimal_interval_min", f"optimal checkpoint interval ({write_s:.3g} s write)", tau_exact, "min", ".1f")
ledger.record("04-optimal-interval", "waste_at_optimum_pct", "waste at that interval (writes + rewinds + restarts)", 100 * w_exact, "% of useful work", ".2f")
print(ledger.table())

# %% [markdown]
# ## Summary

# %%
print(
    f"With a {write_s:.3g} s write and a {scenario.fleet_mtbf_hours:.0f} h MTBF the best interval is "
    f"{tau_exact:.1f} min (Young's sqrt(2 delta M) = {tau_young:.1f} min); the waste there is {w_exact:.2%} of useful work, "
    f"{math.exp(R / M) - 1:.2%} of it from the {R:.0f}-minute restarts that no interval removes."
)

# %% [markdown]
# **Exercises:** [exercises/04-optimal-interval-ex.ipynb](../exercises/04-optimal-interval-ex.ipynb) practises this notebook (about 25 minutes; a check names your mistake, and the worked [solutions](../solutions/04-optimal-interval-sol.ipynb) are there after your own attempt).
#
# **Next:** [notebook 05](05-write-cost.ipynb) measures the write cost $\delta$ with real PyTorch checkpoints on your machine.
