# %% [markdown]
# # 13 · Your incident log: a real fault trace tests the model's assumptions
#
# **The question.** *A 4,096-GPU training run loses about 2 % of every day to restarts (two a day,
# about 15 minutes each). Fix it, and say where the floor is.* Every number the course started from was
# an aggregate: Llama 3's 419 interruptions in 54 days, or a split of the question's 15 minutes. The first
# thing a senior engineer does with this question is measure. The model behind notebooks [01](01-per-gpu-failure-rate.ipynb),
# [02](02-fleet-mtbf.ipynb) and [08](08-the-floor.ipynb) is that nodes are **identical**, fail **independently**, at a
# **stationary** rate: a Poisson process. A real fault log lets us test each of those three words instead of
# assuming it. We read one: 348 days of node faults on 400 GPU servers of an LLM pre-training cluster
# (stepfun-ai/InfiniteHBD-Trace [@infinitehbd-trace], released with Shou et al., *InfiniteHBD*, SIGCOMM 2025 [@infinitehbd]),
# and end with the floor for that fleet.
#
# **Learning objectives**
# - Turn a node fault log into a per-GPU-day rate with its exact interval, counting the whole fleet (the nodes that never failed too) and only the faults that interrupt a job.
# - Test the model's three assumptions (identical, independent, stationary nodes) on the log, each with a statistic against what the Poisson model predicts.
# - Measure what the levers need from the log (lemon removal out of sample, repeat faults, repair times and the spare pool) and say what each violation does to the floor.
#
# **Time:** 35 minutes. **Prerequisites:** [notebook 01](01-per-gpu-failure-rate.ipynb) (a rate from a count and its Garwood interval),
# [notebook 02](02-fleet-mtbf.ipynb) (N identical, independent nodes), [notebook 03](03-anatomy-of-a-restart.ipynb) (the failure modes)
# and [notebook 08](08-the-floor.ipynb) (the floor and the rate levers).

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
log_path = None  # None: the vendored InfiniteHBD trace (data/infinitehbd_fault_trace.json); or the path of your own log
log_format = "infinitehbd"  # infinitehbd, sacct (sacct --parsable2) or csv (the schema below)
fleet_nodes = None  # nodes of the fleet the log covers, those without a fault included (None: the trace's 400)
gpus_per_node = None  # GPUs per node (None: the trace's, 8: the course's assumption)
log_tz = "UTC"  # time zone of the log's naive times (sacct, csv)

# %%
import math

import matplotlib.pyplot as plt
import numpy as np
import sympy as sp

from scipy import stats

from course_lib import Scenario, ledger
from course_lib import levers as course_levers
from course_lib import incidents as inc
from course_lib.answer import answer
from course_lib.failures import log_rates
from course_lib.incidents import analysis as an
from course_lib.incidents import policy
from course_lib.notebook import predict
from course_lib.plots import incidents as plots

scenario = Scenario.from_namespace(globals())  # the parameters above: the job is scenario.n_gpus GPUs
if log_path is None:
    log, fleet = inc.load_trace(), inc.trace_fleet()
else:
    log = inc.read_log(log_path, log_format, **({} if log_format == "infinitehbd" else {"tz": log_tz}))
    fleet = inc.Fleet(fleet_nodes or inc.trace_fleet().n_nodes, gpus_per_node or inc.trace_fleet().gpus_per_node)
if fleet_nodes or gpus_per_node:
    fleet = inc.Fleet(fleet_nodes or fleet.n_nodes, gpus_per_node or fleet.gpus_per_node)
print(f"{log.source.split('/')[-1]}: {len(log):,} faults over {log.days:.1f} days; "
      f"{len(np.unique(log.node)):,} nodes appear in it, of a fleet of {fleet.n_nodes:,} x {fleet.gpus_per_node} GPUs")
print(log.report.text())

# %% [markdown]
# ## 1. The log and its schema
#
# A fault log, whatever wrote it, comes down to a few fields per incident; `course_lib.incidents` reads four
# formats into one schema (the InfiniteHBD JSON, a Slurm `sacct --parsable2` export, a plain CSV of the schema,
# and the event logs of the course's own labs):
#
# | field | meaning |
# |---|---|
# | `start` | when the fault began, or the job was interrupted (days since the log's day 0) |
# | `end` | when the node was repaired and back, or the job running again; empty: still open when the log ends |
# | `node` | the node as the log spells it (anonymous ids are fine: only the counts matter) |
# | `level`, `class`, `desc` | the cause at whatever depth the log knows it (`Unknown` where it does not) |
# | `job`, `attempt` | Slurm's JobID and the requeue count, where there is a scheduler |
# | `detected`, `torn_down`, `rendezvous`, `loaded`, `first_step`, `progress_regained` | the optional timestamps a restart passes (section 8) |
#
# Every row read is accounted for: **used**, **ignored** (not an incident by design: a job step, a completed
# job), or **rejected** (a fault end without a start, a duplicate), each with its reason; a malformed row stops
# the reader with the file, the line and the field. The report above says what happened to this log's rows.
# The InfiniteHBD trace is a list of `fault_start` / `fault_end` events; the reader pairs each end with its node's
# open start of the same cause (two of its servers had two faults open at once).
#
# One trap before any number: the trace lists only the servers that had a fault. The fleet is 400 servers
# (the trace's README [@infinitehbd-trace]); the others ran the whole year without one, and they count.
#
# ## 2. Which faults interrupt a job, and at what rate
#
# A node fault log is not a list of job interruptions. Some faults are found on nodes that run no job: a stress
# test after a repair, a test, a planned change. The course decides per class, and says why, in
# `data/incident_classes.csv` (every decision labelled an assumption; the classes are the log's):

# %%
cl = policy.classify(log)
pol = policy.load_policy()
level, klass = log.cause_part("level"), log.cause_part("class")
print(f"{'level':17s} {'class':30s} {'faults':>6s}  {'share (95 % interval)':22s} interrupts a job?  mode")
for (lv, kl), n in sorted({(a, b): int(np.sum((level == a) & (klass == b))) for a, b in zip(level, klass)}.items(),
                          key=lambda kv: -kv[1]):
    yes, mode, _ = pol.decide(lv, kl, "")
    lo, hi = an.clopper_pearson(n, len(log))
    print(f"{lv:17s} {kl:30s} {n:6d}  {n / len(log):5.1%} ({lo:5.1%}-{hi:5.1%})   {'yes' if yes else 'no ':17s}  {mode}")
intr = log.where(cl.interruption)
print(f"\n{len(intr):,} of {len(log):,} faults interrupt a job; {len(log) - len(intr):,} were found on nodes out of service")
print("shares of the faults per level, with exact 95 % intervals: " + "; ".join(
    f"{s.name} {s.share:.1%} ({s.low:.1%}-{s.high:.1%})" for s in an.shares(level)))

# %% [markdown]
# The stress-test failures are the big class the course leaves out: a stress test runs on a node that is out of
# service, so it finds a fault no job met. Leaving them in would overstate the rate (printed with the rate below).
#
# **Predict first:** the rate per GPU-day of this fleet's interruptions, against Llama 3's 4.7e-4 (notebook 01):
# higher, lower or about the same? Type a number.

# %%
my_guess = None  # your guess: interruptions per GPU-day of the trace's fleet
guess = predict("13.rate", my_guess, "per GPU-day")

# %%
est = an.rate(intr, fleet)
print(est.text())
print(f"counting only the {len(np.unique(log.node))} servers that appear in the log would give "
      f"{an.rate(intr, inc.Fleet(len(np.unique(log.node)), fleet.gpus_per_node)).rate_per_gpu_day:.3e}: "
      f"{fleet.n_nodes / len(np.unique(log.node)):.2f} times too high")
print(f"every fault, the stress tests too: {an.rate(log, fleet).rate_per_gpu_day:.3e} per GPU-day")

# %%
guess.reveal(est.rate_per_gpu_day)

# %%
print(f"{'log':30s} {'per GPU-day':>12s}  95 % interval")
print(f"{'this log (interruptions)':30s} {est.rate_per_gpu_day:12.2e}  {est.low:.2e} to {est.high:.2e}")
for r in log_rates():
    ci = f"{r.ci_low:.2e} to {r.ci_high:.2e}" if r.has_ci else "(published as a rate)"
    print(f"{r.run:30s} {r.rate_low:12.2e}  {ci}")

# %% [markdown]
# The trace's interruption rate sits in the band of the other public logs of [notebook 01](01-per-gpu-failure-rate.ipynb),
# close to Llama 3's: the question's two failures a day on 4,096 GPUs is an ordinary fleet. That interval assumes
# the model this notebook is about to test: a Poisson count of independent faults.
#
# ## 3. Are the nodes identical?
#
# If every node failed at the same rate, the faults per node would be Poisson: variance equal to the mean, and
# the share of nodes with none close to $e^{-\bar x}$. If the node rates vary (a gamma distribution of shape $k$
# is the usual model), the counts are negative binomial and the variance grows to $\mu + \mu^2/k$. The
# derivation, by the law of total variance:

# %%
k, theta, t = sp.symbols("k theta t", positive=True)
lam = sp.Symbol("lambda", positive=True)
gamma_pdf = lam ** (k - 1) * sp.exp(-lam / theta) / (sp.gamma(k) * theta ** k)  # node rates ~ Gamma(k, theta)
mean_rate = sp.simplify(sp.integrate(lam * gamma_pdf, (lam, 0, sp.oo)))
var_rate = sp.simplify(sp.integrate(lam ** 2 * gamma_pdf, (lam, 0, sp.oo)) - mean_rate ** 2)
mu = mean_rate * t
var_count = mean_rate * t + var_rate * t ** 2  # E[Var(N | lambda)] + Var(E[N | lambda]), N | lambda ~ Poisson(lambda t)
assert sp.simplify(var_count - (mu + mu ** 2 / k)) == 0
print("E[lambda] =", mean_rate, "  Var[lambda] =", var_rate)
print("Var N =", sp.simplify(var_count), "= mu + mu^2/k with mu =", mu)

# %% [markdown]
# **Predict first:** what share of the interruptions fall on the worst 10 % of the nodes? (With identical nodes
# it would not be 10 %: chance alone puts more on some nodes than on others.)

# %%
my_guess = None  # your guess: % of the interruptions on the worst 10 % of nodes
guess = predict("13.worst", my_guess, "%")

# %%
counts = an.node_counts(intr, fleet.n_nodes)
disp = an.dispersion_test(counts)
fit = an.fit_negative_binomial(counts)
worst = an.worst_node_shares(counts, fit=fit)
print(f"interruptions per node: mean {disp.mean:.2f}, variance {disp.variance:.2f}, ratio {disp.ratio:.2f} (Poisson: 1)")
print(f"index of dispersion {disp.statistic:.0f} on {disp.dof} degrees of freedom: p = {disp.p_value:.1g}")
print(f"nodes with none: {disp.zero_nodes} observed, {disp.zero_expected:.0f} if identical, {fit.zero_expected:.0f} under the gamma fit")
print(f"gamma shape k = {fit.shape:.2f} (95 % interval {fit.shape_low:.2f} to {fit.shape_high:.2f}): "
      f"node rates vary with a coefficient of variation of {fit.rate_cv:.2f}")
for f, n, o, p, g in zip(worst.fractions, worst.nodes, worst.observed, worst.poisson, worst.negbin):
    print(f"worst {100 * f:4.0f} % of nodes ({n:3d}): {o:5.1%} of the interruptions  (identical nodes {p:5.1%}, gamma fit {g:5.1%})")

# %%
guess.reveal(100 * worst.observed[-1])

# %% [markdown]
# **Check by simulation.** Is a dispersion statistic that large possible by chance? Draw 200 fleets of identical
# nodes with this fleet's size, days and rate (`course_lib.incidents.synthetic_log`) and compute the same statistic:

# %%
sims = np.array([an.dispersion_test(an.node_counts(inc.synthetic_log(seed, n_nodes=fleet.n_nodes, days=intr.days,
                                                                      rate_per_node_day=est.rate_per_node_day)[0],
                                                   fleet.n_nodes)).statistic for seed in range(200)])
print(f"identical fleets: statistic {np.median(sims):.0f} at the median, {np.percentile(sims, 99):.0f} at the 99th percentile "
      f"(chi-square: {disp.dof} and {float(stats.chi2.ppf(0.99, disp.dof)):.0f}); this log: {disp.statistic:.0f}")
assert abs(np.median(sims) - disp.dof) < 0.1 * disp.dof  # the simulation agrees with the chi-square it is tested against

# %%
plots.faults_per_node(counts, fit)
plt.show()

# %% [markdown]
# The nodes are not identical: far more of them never failed than identical nodes would allow, and a few failed
# many times. Heterogeneity is what makes "remove the lemons" a lever at all. Whether it works is a different
# question, and the log can answer it.
#
# ## 4. Lemon nodes, measured out of sample
#
# Pick the lemons on the first half of the log: a node is a lemon when it had so many interruptions that an
# ordinary node would reach that count with under 1 % probability (`analysis.lemon_threshold`). Remove them,
# and compare the second half's rate of the remaining nodes with the whole fleet's. Measuring the factor on the
# same half that chose the lemons would count each lemon's selecting faults as the gain: in sample it always
# looks good.
#
# **Predict first:** by what factor does removing the first half's lemons change the second half's rate?
# ([Notebook 08](08-the-floor.ipynb) bounds it by what lemon nodes fail through, the faulty GPUs and HBM3 of Table 5, and
# reads one research cluster's job-level numbers as x 0.27.)

# %%
my_guess = None  # your guess: the out-of-sample rate factor (1 = no change)
guess = predict("13.lemon", my_guess, "x")

# %%
lemon = an.lemon_removal(intr, fleet.n_nodes)
print(f"lemons: {lemon.threshold} or more interruptions in the first {lemon.split_day:.0f} days -> {lemon.n_removed} nodes removed "
      f"({lemon.capacity_removed:.1%} of the capacity)")
print(f"second half: whole fleet {lemon.rate_all_per_node_day:.2e}, remaining nodes {lemon.rate_kept_per_node_day:.2e} per node-day: "
      f"factor {lemon.factor:.3f} (95 % interval {lemon.factor_low:.3f} to {lemon.factor_high:.3f})")
whole = np.bincount(intr.node, minlength=len(intr.nodes))
in_sample_kept = ~np.isin(intr.node, np.flatnonzero(whole >= lemon.threshold))
n_in = int((whole >= lemon.threshold).sum())
print(f"in sample (lemons chosen and judged on the whole log): {n_in} nodes, factor "
      f"{in_sample_kept.sum() / len(intr) * fleet.n_nodes / (fleet.n_nodes - n_in):.3f}")

# %%
guess.reveal(lemon.factor)

# %%
print(f"{'threshold':>9s} {'removed':>8s} {'capacity':>9s} {'factor':>7s}  95 % interval")
for th in range(2, 7):
    lm = an.lemon_removal(intr, fleet.n_nodes, threshold=th)
    print(f"{th:9d} {lm.n_removed:8d} {lm.capacity_removed:9.1%} {lm.factor:7.3f}  {lm.factor_low:.3f} to {lm.factor_high:.3f}")
repeat_all = an.repeat_fault_share(intr, fleet.n_nodes)
repeat_week = an.repeat_fault_share(intr, fleet.n_nodes, within_days=7.0)
print(f"\nrepeat faults: {repeat_all.share:.0%} of the interruptions fall on a node that had one before "
      f"({repeat_all.poisson_share:.0%} if identical); {repeat_week.share:.0%} within 7 days of the node's previous one "
      f"({repeat_week.poisson_share:.1%} if identical)")

# %% [markdown]
# In sample, removing the worst nodes looks like a clear gain; out of sample it is far smaller, at any threshold,
# and removing more nodes costs capacity. The nodes that failed most in the first half are not the ones that fail
# most in the second: repairs fix them, and some of their faults were bursts that hit many nodes at once
# (section 5). What does persist is short-term: a node that just failed is many times as likely as an ordinary one
# to fail again within a week (the last line above). That argues for quarantine (a burn-in after each repair) rather than for
# blacklisting nodes on their history. Read x 0.27 as one cluster's number, not a property of lemons.
#
# ## 5. Do the nodes fail independently?
#
# A Poisson process has exponential gaps between faults, whose coefficient of variation (standard deviation
# over mean) is 1. A switch, a power feed or a change that takes several nodes at once shows up as an excess of
# short gaps. **Predict first:** the coefficient of variation of the gaps between consecutive interruptions
# across the fleet.

# %%
my_guess = None  # your guess: the inter-arrival coefficient of variation (Poisson: 1)
guess = predict("13.cv", my_guess, "")

# %%
b = an.bursts(intr, window_min=5.0)
print(f"gaps between interruptions: CV {b.gap_cv:.2f} (a Poisson process: 1, give or take {b.gap_cv_sd:.2f})")
print(f"interruptions within {b.window_min:g} min of one on another node: {b.coincident} of {b.n} = {b.coincident_share:.1%} "
      f"(95 % interval {b.coincident_low:.1%}-{b.coincident_high:.1%}); by chance {b.chance_share:.1%}")
print(f"days with {b.at_least} or more: {b.p_at_least_observed:.1%} observed ({b.p_at_least_low:.1%}-{b.p_at_least_high:.1%}), "
      f"{b.p_at_least_poisson:.1%} for Poisson at the same mean of {b.daily_mean:.2f} a day")
phi = b.daily_variance / b.daily_mean
wide = an.overdispersed_interval(est, phi)
print(f"daily counts: variance / mean {phi:.2f}; the rate's interval widened for it: {wide[0]:.2e} to {wide[1]:.2e} "
      f"(Poisson: {est.low:.2e} to {est.high:.2e})")

# %%
guess.reveal(b.gap_cv)

# %%
plots.interarrival_histogram(b.gaps_days)
plt.show()

# %% [markdown]
# A large share of the interruptions come within minutes of one on another node, many times what chance
# gives: faults arrive in bursts. Two consequences. Bad days are worse than notebook 08's Poisson days (days with
# four or more are more common than Poisson allows), so a floor judged over a week can swing further. And the count carries
# less information than its size suggests: the rate's honest interval is wider than the Poisson one.
#
# ## 6. Is the rate stationary?

# %%
monthly = an.monthly_rates(intr, fleet)
for lo_d, hi_d, c, r, lo, hi in zip(monthly.edges[:-1], monthly.edges[1:], monthly.counts, monthly.rate, monthly.low, monthly.high):
    print(f"days {lo_d:5.0f}-{hi_d:5.0f}: {c:4d} interruptions, {r:.2e} per GPU-day ({lo:.2e} to {hi:.2e})")
print(f"one rate for every period: chi-square {monthly.chi2:.0f} on {monthly.dof} dof, p = {monthly.p_value:.1g}")
print(f"first 30 days / the rest: x {monthly.first_ratio:.2f} ({monthly.first_low:.2f} to {monthly.first_high:.2f})")

# %%
plots.monthly_rate(monthly, est.rate_per_gpu_day)
plt.show()

# %% [markdown]
# The rate is not stationary: one month had several times the others' rate, and the month-to-month spread is far
# beyond the Poisson intervals. The infant mortality of [notebook 02](02-fleet-mtbf.ipynb) (a new fleet failing more in its first
# weeks) is not visible: this fleet's first month was its quietest, since it was not new when the trace began.
# A rate measured over one quiet month would badly underestimate the year.
#
# ## 7. Repair times and the spare pool
#
# A node leaves the job at its fault and comes back at its repair. **Predict first:** the median repair time
# of an interrupted node, in hours.

# %%
my_guess = None  # your guess: the median repair time, hours
guess = predict("13.repair", my_guess, "h")

# %%
rep = an.repair_times(intr)
print(f"{rep.n} repairs ({rep.censored} still open, {rep.zero_length} of no measurable length): median {24 * rep.median_days:.1f} h "
      f"({24 * rep.median_low:.0f}-{24 * rep.median_high:.0f}), 90th percentile {rep.p90_days:.1f} days "
      f"({rep.p90_low:.1f}-{rep.p90_high:.1f}), mean {rep.mean_days:.1f} days")

# %%
guess.reveal(24 * rep.median_days)

# %%
plots.repair_cdf(rep)
plt.show()

# %% [markdown]
# The tail sets the spare pool. The number of a job's nodes in repair at once is Poisson with mean $\lambda E[R]$
# (failures per day times the *mean* repair time, whatever the repair distribution: an M/G/$\infty$ queue), and a
# failure finds a spare when fewer than $s$ are out. Replaying the log's own faults and repairs on the job checks
# that, bursts and all. The alternative is elastic: drop the failed node's data-parallel replica until it is back.

# %%
job_nodes = math.ceil(scenario.n_gpus / fleet.gpus_per_node)
lam_job = est.rate_per_node_day * job_nodes
s_pois = an.spare_pool(lam_job, rep.mean_days, 0.99)
s_replay, seen = an.replay_spares(intr, job_nodes, fleet.n_nodes, 0.99)
print(f"a {scenario.n_gpus:,}-GPU job ({job_nodes} nodes): {lam_job:.2f} interruptions a day x {rep.mean_days:.1f} days = "
      f"{lam_job * rep.mean_days:.1f} nodes in repair on average")
print(f"spares for a free one 99 % of the time: {s_pois} (Poisson), {s_replay} replaying the log "
      f"(the most ever out at once there: {seen.max()})")
ans_log = inc.answer_for_log(log, fleet, scenario.n_gpus, base=scenario)
print(f"idle spares cost {ans_log.spare_cost_min_per_day:.0f} min a day of the job's GPU-time; running elastic instead "
      f"(a {ans_log.job_answer.scenario.modes.replica_gpus:.0f}-GPU replica out until each repair) costs {ans_log.elastic_cost_min_per_day:.0f}")

# %% [markdown]
# With repairs measured in days, elastic continuation costs several times what a pool of spares does, and
# the pool must be sized on the replay, not the Poisson number: bursts take several nodes out at once. The spare
# verdict of [notebook 08](08-the-floor.ipynb) (an idle spare beside one job costs more than it saves) concerns *restart time*; here the
# question is capacity, and a job this size needs a shared pool of replacement nodes either way.
#
# ## 8. A real restart, stage by stage, from timestamps
#
# The trace has no stage timestamps, but a log of your own restarts can: the schema's `detected`, `rendezvous`,
# `loaded` and `progress_regained` fields are the boundaries of notebook 03's four stages. The course's own lab
# writes them ([notebook 07](07-fault-injection-lab.ipynb)); `data/faultlab_events.jsonl` is one of its runs (a kill and a hang of a
# 2-rank CPU job) read through the same schema:

# %%
lab = inc.lab_example()  # data/faultlab_events.jsonl, through inc.read_lab_events
secs = inc.stage_seconds(lab)
for i in range(len(lab)):
    kind = lab.causes[lab.cause[i]][1]
    print(f"{kind:5s} on {lab.node_names[i]}: " + ", ".join(f"{s} {secs[s][i]:.2f} s" for s in secs)
          + f" = {lab.duration_days[i] * 86400:.2f} s to regain progress")

# %% [markdown]
# These are seconds of a toy job on a CPU, not minutes of a 4,096-GPU job; what carries over is the method. Log
# these timestamps from your own restarts and `scenario_for_log` puts the measured stages into the Scenario in
# place of the sourced ones.
#
# ## 9. From the log to the floor
#
# The course's one model, now at the log's rate: the Scenario of a job on this fleet takes the log's interruption
# rate (`course_lib.incidents.scenario_for_log`), and `course_lib.answer` applies the levers and finds the floor.
# The same call answers `course-budget --log FILE --format infinitehbd --nodes 400`.

# %%
fa, ja = ans_log.fleet_answer, ans_log.job_answer
for name, a in ((f"the trace's fleet ({fa.n_gpus:,} GPUs)", fa), (f"a {ja.n_gpus:,}-GPU job", ja)):
    print(f"{name:28s}: {a.failures_per_day:.2f} interruptions a day; baseline {a.baseline.fraction_of_day:.2%}, after the levers "
          f"{a.after.fraction_of_day:.3%}, floor {a.after.floor_fraction:.3%} ({a.after.floor_minutes_per_day:.2f} min a day)")

# %% [markdown]
# What each violation does to that floor:

# %%
def floor_pct(rate_per_gpu_day):
    """The floor (% of the day) of the job at another rate: the same Scenario, the same levers."""
    return 100 * answer(inc.scenario_for_log(rate_per_gpu_day, scenario.n_gpus, scenario), spread_draws=0).after.floor_fraction


bound = course_levers.rate_levers(scenario)[1]  # notebook 08's bound (no faulty GPU / HBM3): the most any removal buys
kokolis = course_levers.kokolis_lemon_rate_factor()  # one research cluster's job-level numbers read as a rate (notebook 08)
guessed = course_levers.RateLever("lemon-node removal, Kokolis et al.'s reading", kokolis, "notebook 08", "")(ja.after)
print(f"{'':46s} floor, % of the day")
print(f"{'at the log rate':46s} {100 * ja.after.floor_fraction:.3f}")
print(f"{'the rate interval (Poisson)':46s} {floor_pct(est.low):.3f} to {floor_pct(est.high):.3f}")
print(f"{'the rate interval widened for bursts':46s} {floor_pct(wide[0]):.3f} to {floor_pct(wide[1]):.3f}")
print(f"{'the quietest and the busiest 30 days':46s} {floor_pct(max(monthly.rate.min(), 1e-9)):.3f} to {floor_pct(monthly.rate.max()):.3f}")
print(f"{f'lemon removal, one cluster read as x {kokolis:.2f}':46s} {100 * guessed.floor_fraction:.3f}")
print(f"{f'the bound, no faulty GPU / HBM3, x {bound.factor:.2f}':46s} {100 * bound(ja.after).floor_fraction:.3f}")
print(f"{'lemon removal, measured out of sample':46s} {100 * ans_log.lemon_after.floor_fraction:.3f}  (x {lemon.factor:.2f}"
      + (", clamped at 1: removal buys nothing" if lemon.factor >= 1 else "") + f"; {lemon.capacity_removed:.0%} of the capacity removed)")
if ans_log.log_modes_answer is not None:  # a log whose classes the course maps to failure modes
    print(f"{'the log mapped to failure modes':46s} {100 * ans_log.log_modes_answer.after.floor_fraction:.3f}  "
          f"({', '.join(f'{m} {v:.0%}' for m, v in ans_log.analysis.mode_shares.items())}: the course's mapping, an assumption)")

# %% [markdown]
# The floor's point value survives the test: the log's rate is close to the question's, so the floor of a
# 4,096-GPU job is close to notebook 08's. What changes is how sure we are of it and which levers are worth
# having. Bursts and a drifting rate widen the range more than the count's Poisson interval admits; lemon removal,
# measured the only honest way, buys nothing here (a factor above 1 is clamped at 1: no gain), and this trace's factor
# is the course's lemon lever in [notebook 08](08-the-floor.ipynb) and the answer; quarantining freshly repaired nodes
# and a spare pool sized on the replayed repairs are what the log asks for.
#
# **Try it**
# - Run this notebook on your own log: `papermill notebooks/13-your-incident-log.ipynb out.ipynb -p log_path my.csv -p log_format csv -p fleet_nodes 512`.
# - Change the lemon split (`an.lemon_removal(intr, fleet.n_nodes, split=0.3)`): does an earlier choice of lemons do better?
# - Count the stress-test failures as interruptions (`log` instead of `intr`): how much does the floor move?
#
# ## The answer table

# %%
nb = "13-your-incident-log"
ledger.record(nb, "log_rate_per_gpu_day", "the log's interruption rate per GPU", est.rate_per_gpu_day, "per GPU-day", ".3e")
ledger.record(nb, "log_dispersion_ratio", "the log's faults per node, variance / mean", disp.ratio, "x", ".2f")
ledger.record(nb, "log_lemon_factor", "lemon removal, out of sample", lemon.factor, "x", ".3f")
ledger.record(nb, "log_burst_share_pct", f"interruptions within {b.window_min:g} min of another node's", 100 * b.coincident_share, "%", ".1f")
ledger.record(nb, "log_repair_median_h", "repair time, median", 24 * rep.median_days, "h", ".1f")
ledger.record(nb, "log_floor_pct", f"floor of a {ja.n_gpus:,}-GPU job at the log's rate", 100 * ja.after.floor_fraction, "% of the day", ".3f")
print(ledger.table())

# %% [markdown]
# ## Summary

# %%
print(f"The log's {est.count} job interruptions on {fleet.n_nodes} nodes x {fleet.gpus_per_node} GPUs are {est.rate_per_gpu_day:.2e} "
      f"per GPU-day ({est.low:.2e}-{est.high:.2e}), but its nodes are not identical (variance {disp.ratio:.1f} x the mean), not "
      f"independent ({b.coincident_share:.0%} within {b.window_min:g} min of another node's fault) and not stationary (p = "
      f"{monthly.p_value:.0g}); lemon removal out of sample gives x {lemon.factor:.2f}, repairs take {24 * rep.median_days:.0f} h "
      f"(median) to {rep.p90_days:.0f} days (p90), and a {ja.n_gpus:,}-GPU job at this rate has a floor of "
      f"{ja.after.floor_fraction:.3%} of the day.")

# %% [markdown]
# **Exercises:** [exercises/13-your-incident-log-ex.ipynb](../exercises/13-your-incident-log-ex.ipynb) practises this notebook (about 25 minutes; a check names your mistake, and the worked [solutions](../solutions/13-your-incident-log-sol.ipynb) are there after your own attempt).
