# %% [markdown]
# # 02 · Fleet MTBF: why 4,096 reliable GPUs fail twice a day
#
# **The question.** [Notebook 01](01-per-gpu-failure-rate.ipynb) found that one GPU fails only once every several years. A
# synchronous training job stops when *any* of its GPUs stops. How often does a job on 4,096 of them
# stop, and does the answer change if GPUs fail most often when they are new?
#
# **Learning objectives**
# - Derive (in sympy) that the first failure among N independent exponential lifetimes is exponential with rate N lambda, so the fleet MTBF is 1/(N lambda).
# - Compute failures per day and fleet MTBF from 1 to 100,000 GPUs, and check the formula by Monte Carlo within its standard error.
# - Explain what Weibull lifetimes with shape < 1 (infant mortality) change for a freshly racked fleet.
#
# **Time:** 25 minutes. **Prerequisites:** [notebook 01](01-per-gpu-failure-rate.ipynb) (Llama 3's per-GPU-day rate, recomputed here
# from the same data with `course_lib`).

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
weibull_shape = 0.7  # illustrative infant-mortality shape (a course choice, not a measured value)
calibration_age_days = 180.0  # age of the fleet when its rate was observed (a course choice: no log gives it)
mc_fleets = 2000  # simulated fleets per Monte Carlo check

# %%
import math

import matplotlib.pyplot as plt
import sympy as sp
from ipywidgets import fixed, interact

from course_lib import Scenario, data, failures, ledger
from course_lib.plots import failures as failure_plots
from course_lib.widgets.fleet import fleet_controls, fleet_view

scenario = Scenario.from_namespace(globals())  # the parameters above
logs = {r.run: r for r in failures.log_rates()}
llama = logs["Llama 3 405B"]
llama_row = data.failure_logs().where("run", "Llama 3 405B").rows[0]
rate_given = any(x is not None for x in (rate_per_gpu_day, failures_per_day, observed_failures))
rate = scenario.rate_per_gpu_day if rate_given else llama.rate_low  # Llama 3's measured rate unless a scenario rate is given
print(f"Llama 3 per-GPU rate (notebook 01): {llama.rate_low:.2e} per GPU-day (95% interval {llama.ci_low:.2e} to {llama.ci_high:.2e})")
print(f"rate used here                    : {rate:.2e} per GPU-day; fleet of the question: {scenario.n_gpus:,} GPUs")

# %% [markdown]
# ## Derivation: the first of N failures
#
# Give each GPU an exponential lifetime with rate lambda: it survives past time t with probability
# S(t) = exp(-lambda t). The job survives past t only if *every* GPU does, and with independent GPUs
# those probabilities multiply.
#
# **Predict first:** at 4,096 GPUs and Llama 3's rate, is the fleet MTBF closer to a week, a day, or
# an hour?

# %%
t, lam = sp.symbols("t lambda", positive=True)
N = sp.symbols("N", positive=True, integer=True)
S_gpu = sp.exp(-lam * t)
S_fleet = sp.powsimp(S_gpu**N)
assert sp.simplify(S_fleet - sp.exp(-N * lam * t)) == 0  # exponential again, with rate N*lambda
mean_fleet = sp.integrate(S_fleet, (t, 0, sp.oo))  # E[T] = integral of the survival function
assert sp.simplify(mean_fleet - 1 / (N * lam)) == 0
S_fleet, mean_fleet

# %% [markdown]
# The job's time to first failure is exponential with rate N lambda: N GPUs fail N times as often as
# one, and the fleet MTBF is 1/(N lambda). Memorylessness means the same holds after every restart
# (with failed GPUs replaced), so this is also the mean time *between* job failures.
#
# ## The numbers, from one GPU to 100,000
#
# Fleet sizes below are course choices spanning one GPU to a frontier cluster.

# %%
sizes = sorted({1, 1024, 4096, 16384, 100_000, scenario.n_gpus})
print(f"{'GPUs':>8s} {'failures/day':>13s} {'fleet MTBF':>14s}")
for n in sizes:
    mtbf = failures.fleet_mtbf_hours(n, rate)
    shown = f"{mtbf / 24 / 365.25:.1f} years" if mtbf > 24 * 365.25 else (f"{mtbf:.1f} h" if mtbf >= 1 else f"{mtbf * 60:.0f} min")
    print(f"{n:8,d} {failures.failures_per_day(n, rate):13.3g} {shown:>14s}")

# %% [markdown]
# The plot marks two measured points: Llama 3's own job MTBF over its 54-day snapshot (the log above,
# arXiv:2407.21783) and the question's 4,096-GPU run (Scenario). The dashed lines are Meta's RSC-1 and
# RSC-2 research clusters at their published per-GPU rates (Kokolis et al., HPCA 2025 /
# arXiv:2410.21680, as reported; `data/failure_logs.csv`).

# %%
llama_job_mtbf = llama_row["period_days"] * 24 / llama_row["events_low"]
failure_plots.fleet_mtbf_vs_size(
    sizes,
    rate,
    rate_ci=None if rate_given else (llama.ci_low, llama.ci_high),
    reference_rates={name: logs[name].rate_low for name in ("Meta RSC-1", "Meta RSC-2")},
    points=[
        (f"Llama 3 measured: {llama_row['gpus']:,.0f} GPUs, {llama_job_mtbf:.1f} h", llama_row["gpus"], llama_job_mtbf),
        (f"the question: {scenario.n_gpus:,} GPUs, {scenario.fleet_mtbf_hours:.0f} h", scenario.n_gpus, scenario.fleet_mtbf_hours),
    ],
)
plt.show()

# %% [markdown]
# ## Check: simulate the fleets
#
# The formula assumed independence and took a minimum analytically. Check it the slow way: draw every
# GPU's lifetime for many simulated fleets of the question's size, keep each fleet's shortest, and
# compare the mean with 1/(N lambda). The Monte Carlo mean has standard error sd / sqrt(fleets); the
# check passes if the difference is within 4 of them.

# %%
mtbf_formula = failures.fleet_mtbf_hours(scenario.n_gpus, rate)
first_days = failures.sample_fleet_first_failure(rng, scenario.n_gpus, mc_fleets, shape=1.0, scale=1 / rate)
first_hours = 24 * first_days
mc_mean = first_hours.mean()
mc_se = first_hours.std(ddof=1) / math.sqrt(first_hours.size)
print(f"{mc_fleets} fleets x {scenario.n_gpus:,} GPUs = {mc_fleets * scenario.n_gpus:,} simulated lifetimes")
print(f"Monte Carlo mean time to first failure: {mc_mean:.2f} h +- {mc_se:.2f} h (1 s.e.)")
print(f"formula 24 / (N lambda)               : {mtbf_formula:.2f} h; difference = {(mc_mean - mtbf_formula) / mc_se:+.2f} s.e.")
assert abs(mc_mean - mtbf_formula) < 4 * mc_se

# %%
failure_plots.first_failure_check(first_hours, mtbf_formula)
plt.show()

# %% [markdown]
# ## When GPUs fail young: Weibull lifetimes with shape < 1
#
# Hardware often fails early (manufacturing defects, bad seating, marginal memory) and then settles
# down: a hazard that *falls* with age. The Weibull distribution with shape k < 1 models that; k = 1
# is the exponential. Here the shape is an illustrative course choice (`weibull_shape`, no source
# measured it for these GPUs).
#
# How to put a Weibull next to the observed rate matters. A rate counted on a fleet that has already run
# for a while is the *hazard at the fleet's age*, not one over the mean lifetime: for shape < 1 the mean
# lifetime is much longer than 1/lambda, because the hazard keeps falling. So the course calibrates the
# Weibull to fail at the observed rate at the age the rate was observed, `calibration_age_days` (six months,
# another course choice: no public log gives its fleet's age). Setting the two *means* equal instead would
# make the fleet fail above the observed rate at every age up to about three years (printed below).
#
# The same survival product works for Weibull lifetimes: the minimum of N is Weibull with the same
# shape and its scale shrunk by N^(-1/k).

# %%
k_, s_ = sp.symbols("k s", positive=True)
S_weib_fleet = sp.exp(-((t / s_) ** k_)) ** N
assert sp.simplify(S_weib_fleet - sp.exp(-((t / (s_ * N ** (-1 / k_))) ** k_))) == 0
# the age at which the falling Weibull hazard (k/s)(t/s)^(k-1) comes down to the exponential's lambda
t_cross = sp.solve(sp.Eq(k_ / s_ * (t / s_) ** (k_ - 1), lam), t)
assert len(t_cross) == 1
t_cross = t_cross[0]
sp.powsimp(S_weib_fleet, force=True), t_cross

# %% [markdown]
# **Predict:** with shape `weibull_shape` (below 1), calibrated to the observed rate at six months, does a freshly
# racked 4,096-GPU fleet meet its first failure sooner or later than the exponential's MTBF, and by how much?

# %%
mean_days = 1 / rate
scale = failures.weibull_scale_for_hazard(weibull_shape, rate, calibration_age_days)
assert abs(failures.weibull_hazard(calibration_age_days, weibull_shape, scale) / rate - 1) < 1e-12
first_weib = 24 * failures.fleet_mean_time_to_first_failure(scenario.n_gpus, weibull_shape, scale)
first_exp = 24 * failures.fleet_mean_time_to_first_failure(scenario.n_gpus, 1.0, mean_days)
_, fleet_scale = failures.fleet_first_failure_weibull(scenario.n_gpus, weibull_shape, scale)
p_hour_weib = failures.weibull_cdf(1 / 24, weibull_shape, fleet_scale)
p_hour_exp = failures.weibull_cdf(1 / 24, 1.0, mean_days / scenario.n_gpus)
cross_days = float(t_cross.subs({k_: weibull_shape, s_: scale, lam: rate}))
print(f"per-GPU mean lifetime                  : exponential {mean_days:,.0f} days, Weibull {failures.weibull_mean(weibull_shape, scale):,.0f} days "
      f"(scale {scale:,.0f} days at shape {weibull_shape:g}, hazard = the observed rate at {calibration_age_days:g} days)")
print(f"new fleet, mean time to first failure  : exponential {first_exp:.1f} h, Weibull {first_weib * 60:.0f} min ({first_exp / first_weib:.0f}x sooner)")
print(f"P(a failure within the first hour)     : exponential {p_hour_exp:.1%}, Weibull {p_hour_weib:.1%}")
weib_per_day = {}
for age in (1, 30, 90, calibration_age_days, 365, 1095):
    weib_per_day[age] = scenario.n_gpus * failures.weibull_hazard(age, weibull_shape, scale)
    print(f"fleet failures/day at age {age:5g} days   : Weibull {weib_per_day[age]:6.2f} vs exponential {failures.failures_per_day(scenario.n_gpus, rate):.2f}")
print(f"the Weibull hazard crosses the exponential's at age {cross_days:,.0f} days (the calibration age)")
mean_scale = failures.weibull_scale_for_mean(weibull_shape, mean_days)
print(f"had the two means been set equal instead: {scenario.n_gpus * failures.weibull_hazard(calibration_age_days, weibull_shape, mean_scale):.2f} "
      f"failures/day at {calibration_age_days:g} days, {scenario.n_gpus * failures.weibull_hazard(365, weibull_shape, mean_scale):.2f} at a year: "
      f"above the rate that was observed")

# %% [markdown]
# Check the Weibull minimum the same way: simulate every GPU's Weibull lifetime, keep the first.

# %%
weib_draws = 24 * failures.sample_fleet_first_failure(rng, scenario.n_gpus, mc_fleets, shape=weibull_shape, scale=scale)
w_mean, w_se = weib_draws.mean(), weib_draws.std(ddof=1) / math.sqrt(weib_draws.size)
print(f"Monte Carlo: {w_mean * 60:.1f} min +- {w_se * 60:.1f} min; formula {first_weib * 60:.1f} min; difference {(w_mean - first_weib) / w_se:+.2f} s.e.")
assert abs(w_mean - first_weib) < 4 * w_se

# %%
failure_plots.weibull_vs_exponential(scenario.n_gpus, rate, weibull_shape, scale=scale,
                                     weibull_label=f"Weibull shape {weibull_shape:g}, observed rate at {calibration_age_days:g} days")
plt.tight_layout()
plt.show()

# %% [markdown]
# For a freshly racked fleet, infant mortality front-loads the failures: the first one arrives in
# under an hour rather than after half a day, and the first days run several times above the rate observed later, which is why operators burn in
# new nodes before a big job and remove "lemon" nodes that keep failing (Kokolis et al., HPCA 2025 [@kokolis2025]). How much
# sooner depends on the calibration: these numbers follow from the assumed shape and age, not from a measurement.
# Around the age at which the rate was observed, the two models give about the same failures a day (the
# table above: within about a quarter between three months and a year at this shape), and the exponential's
# constant rate is then the simpler working model for a training run of weeks; it is the one the rest of
# the course uses. It is not a law: a Weibull fleet keeps getting slightly more reliable with age, and a fleet
# that keeps racking new nodes keeps some infant mortality in its mix. The derivation above also assumes the N GPUs
# are identical and independent; [notebook 13](13-your-incident-log.ipynb) tests identical, independent and stationary on a real
# fault log of 400 servers, and measures what lemon-node removal buys there.
#
# ## The result at the question's fleet size
#
# **Predict:** using Llama 3's rate, how many failures a day and what MTBF at the question's fleet size?
# Compare with the question's own "two a day".

# %%
per_day = failures.failures_per_day(scenario.n_gpus, rate)
mtbf_h = failures.fleet_mtbf_hours(scenario.n_gpus, rate)
print(f"{scenario.n_gpus:,} GPUs at {rate:.2e} per GPU-day: {per_day:.2f} failures/day, fleet MTBF {mtbf_h:.1f} h")
print(f"the question says: {scenario.failures_per_day:g} restarts/day, fleet MTBF {scenario.fleet_mtbf_hours:.1f} h")
print(f"Llama 3's 95% interval gives {failures.failures_per_day(scenario.n_gpus, llama.ci_low):.2f} to "
      f"{failures.failures_per_day(scenario.n_gpus, llama.ci_high):.2f} failures/day")

# %% [markdown]
# ## Explore: your fleet
#
# The same function first with the course's numbers, then with sliders (fleet size on a log scale,
# per-GPU rate from a tenth to ten times the course's).

# %%
fleet_view(scenario.n_gpus, rate, reference_rate=llama.rate_low)

# %% tags=["nbval-ignore-output", "skip-execution"]
_ = interact(fleet_view, **fleet_controls(scenario.n_gpus, rate), reference_rate=fixed(llama.rate_low), reference_label=fixed("Llama 3"))

# %% [markdown]
# **Try it**
# - How many GPUs make the fleet MTBF one hour? Check your guess with the slider, then with `24 / rate`.
# - Rerun with `n_gpus = 100000`: how long does a 100,000-GPU job run between failures?
# - Set `weibull_shape = 0.5`, then `1.5` (wear-out): how does the first failure of a new fleet move?
#
# ## Answer table

# %%
NB = "02-fleet-mtbf"
ledger.record(NB, "fleet_failures_per_day", f"failures per day at {scenario.n_gpus:,} GPUs", per_day, "failures/day", ".2f")
ledger.record(NB, "fleet_mtbf_hours", f"fleet MTBF at {scenario.n_gpus:,} GPUs", mtbf_h, "h", ".1f")
print(ledger.table())

# %% [markdown]
# ## Summary

# %%
print(
    f"At {scenario.n_gpus:,} GPUs and {rate:.2e} failures per GPU-day the job fails {per_day:.2f} times a day: "
    f"fleet MTBF {mtbf_h:.1f} h (Monte Carlo {mc_mean:.1f} +- {mc_se:.1f} h), against the question's "
    f"{scenario.failures_per_day:g} a day; a new fleet with shape-{weibull_shape:g} infant mortality, failing at the observed "
    f"rate at {calibration_age_days:g} days, meets its first failure {first_exp / first_weib:.0f}x sooner."
)

# %% [markdown]
# **Exercises:** [exercises/02-fleet-mtbf-ex.ipynb](../exercises/02-fleet-mtbf-ex.ipynb) practises this notebook (about 30 minutes; a check names your mistake, and the worked [solutions](../solutions/02-fleet-mtbf-sol.ipynb) are there after your own attempt).
#
# **Next:** [notebook 03](03-anatomy-of-a-restart.ipynb) takes the two failures a day as given and splits each restart's 15 minutes into
# its stages.
