# %% [markdown]
# # 01 · How often does one GPU fail? A per-GPU-day rate from public logs
#
# **The question.** The question's run fails twice a day on 4,096 GPUs. Is that bad luck, a bad
# cluster, or simply what GPUs do? This notebook turns the largest public failure log, Llama 3's
# 54-day snapshot, into a failure rate *per GPU-day* with an exact confidence interval, reads its
# root-cause table carefully (the printed percentages do not add up), and checks the rate against
# every other public log we have.
#
# **Learning objectives**
# - Turn a failure count over GPUs x days into a per-GPU-day rate with an exact (Garwood) Poisson interval.
# - Compute root-cause shares from counts, and spot when a published table's percentages are inconsistent.
# - Judge whether one cluster's rate is typical by placing it among other public logs, with their caveats.
#
# **Time:** 20 minutes. **Prerequisites:** [notebook 00](00-the-question.ipynb) (the question's implied per-GPU rate, from `Scenario`).

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
llama3_gpus = None  # GPUs assumed for the Llama 3 snapshot (None: the logged "up to 16K")
confidence = 0.95  # confidence level of the intervals (a course choice)

# %%
import matplotlib.pyplot as plt
import numpy as np
from scipy import stats

from course_lib import Scenario, data, failures, ledger
from course_lib.plots import failures as failure_plots

scenario = Scenario.from_namespace(globals())  # the parameters above
logs = data.failure_logs()
llama = logs.where("run", "Llama 3 405B").rows[0]
gpus = llama["gpus"] if llama3_gpus is None else llama3_gpus
events, days = llama["events_low"], llama["period_days"]
print(f"{llama['run']}: {events:.0f} {llama['counted']} in {days:.0f} days on {gpus:,.0f} GPUs")
print("caveat from the log:", llama["assumption"])

# %% [markdown]
# ## Llama 3: 419 unexpected interruptions in 54 days
#
# Source: Llama Team, *The Llama 3 Herd of Models*, arXiv:2407.21783 (2024), section 3.3.4 and
# Table 5: during a 54-day snapshot of 405B pre-training on up to 16K H100 GPUs, the job was
# interrupted 466 times, 47 planned and 419 unexpected (the numbers above are read from
# `data/failure_logs.csv`, which cites the same section).
#
# **Predict first:** divide the unexpected interruptions by the GPU-days of exposure. Is one GPU's
# failure rate closer to once a month, once a year, or once every few years? And how wide should the
# uncertainty on a count of a few hundred be?
#
# A count of independent rare events is Poisson. Its exact two-sided interval (Garwood, 1936) uses the
# chi-square distribution: `low = chi2.ppf(alpha/2, 2k)/2`, `high = chi2.ppf(1 - alpha/2, 2k + 2)/2`.
# Dividing by the exposure (GPUs x days) turns the count interval into a rate interval. That rests on two
# assumptions a log can test: the events are independent (no bursts that take several nodes at once) and the
# exposure is every GPU that could have failed. [Notebook 13](13-your-incident-log.ipynb) tests both on a real fault trace.

# %%
rate = failures.rate_per_gpu_day(events, gpus, days)
ci_low, ci_high = failures.rate_ci_per_gpu_day(events, gpus, days, confidence)
count_low, count_high = failures.poisson_ci(events, confidence)
print(f"exposure            : {gpus * days:,.0f} GPU-days")
print(f"per-GPU rate        : {rate:.3e} failures per GPU-day")
print(f"{confidence:.0%} interval        : {ci_low:.3e} to {ci_high:.3e} (counts {count_low:.1f} to {count_high:.1f})")
print(f"one GPU fails every : {1 / rate:,.0f} GPU-days = {1 / rate / 365.25:.1f} years")
print(f"job MTBF            : {days * 24 / events:.2f} h ({events / days:.1f} interruptions a day)")

# %% [markdown]
# ## Check: what the interval promises
#
# The Garwood bounds are defined by tail probabilities: at the upper bound, seeing `k` or fewer events
# has probability alpha/2; at the lower bound, seeing `k` or more has probability alpha/2. Check that
# with scipy's Poisson distribution, then check the *coverage* by simulation: draw many counts from a
# Poisson with a known mean (Llama 3's count), build each interval, and count how often it contains the
# truth. An exact interval is conservative: coverage at least the confidence level, within the
# simulation's binomial error.

# %%
alpha = 1 - confidence
k = int(events)
assert np.isclose(stats.poisson.cdf(k, count_high), alpha / 2)
assert np.isclose(stats.poisson.sf(k - 1, count_low), alpha / 2)

true_mean = float(events)
draws = rng.poisson(true_mean, size=4000)
intervals = {int(x): failures.poisson_ci(int(x), confidence) for x in np.unique(draws)}
covered = np.mean([intervals[int(x)][0] <= true_mean <= intervals[int(x)][1] for x in draws])
se = np.sqrt(confidence * (1 - confidence) / draws.size)
print(f"coverage in {draws.size} simulated counts: {covered:.3f} (target >= {confidence}, binomial s.e. {se:.3f})")
assert covered >= confidence - 4 * se

# %% [markdown]
# ## The GPU-count caveat
#
# The paper says *up to* 16K GPUs. If part of the snapshot ran on 8,192 GPUs (half), the exposure
# shrinks and the rate grows. **Predict:** by how much, at most?

# %%
half = failures.rate_per_gpu_day(events, gpus / 2, days)
print(f"at {gpus:,.0f} GPUs: {rate:.2e} per GPU-day")
print(f"at {gpus / 2:,.0f} GPUs: {half:.2e} per GPU-day ({half / rate:.0f}x)")
print("so the logged rate is a lower bound if fewer GPUs were in the job for part of the 54 days")

# %% [markdown]
# ## Root causes: compute shares from the counts
#
# Llama 3's Table 5 lists the 419 unexpected interruptions by component, with a count and a printed
# percentage for each (`data/llama3_table5.csv`, copied from the paper). **Predict:** which category
# dominates, and by how much?

# %%
table5 = data.llama3_table5()
shares = failures.shares_from_counts(table5["count"])
print(f"{'component':32s} {'category':22s} {'count':>5s} {'share':>7s} {'printed':>8s}")
for comp, cat, n, s, p in zip(table5["component"], table5["category"], table5["count"], shares, table5["printed_percent"]):
    print(f"{comp:32s} {cat:22s} {n:5d} {s:7.1%} {p:7.1f}%")

# %%
by_category = failures.category_counts(table5["category"], table5["count"])
failure_plots.root_causes_by_category(by_category)
plt.show()

# %% [markdown]
# **Footnote: an erratum in Table 5.** The counts add up to the 419 interruptions, but the printed
# percentages do not match them: they sum to less than 100 %, the top row's printed share is not its
# count over 419, and the paper's headline share for "GPU issues" is the sum of the *printed* GPU rows,
# not of the counts. The course uses shares computed from counts. The numbers, from the data file:

# %%
e = failures.table5_erratum(table5)
print(f"counts sum to                  : {e.total_count}")
print(f"printed percentages sum to     : {e.printed_percent_sum:.1f} %")
print(f"{e.top_component:31s}: {e.top_count}/{e.total_count} = {e.top_share_percent:.1f} % (printed {e.top_printed_percent:.1f} %)")
print(f"GPU rows ({e.gpu_rows})                   : {e.gpu_count}/{e.total_count} = {e.gpu_share_percent:.1f} % (paper: {e.gpu_printed_percent:.1f} %, the sum of the printed shares)")

# %% [markdown]
# Either way, GPUs and their memory are the largest single category: hardware that sits on every node
# of the job, so the job's exposure grows with every GPU added.
#
# ## Is Llama 3 typical? The other public logs
#
# `data/failure_logs.csv` holds every public log we found, each with what was counted and the
# assumption needed to turn it into a rate:
# Meta RSC-1 and RSC-2 (Kokolis et al., *Revisiting Reliability in Large-Scale Machine Learning
# Research Clusters*, HPCA 2025 / arXiv:2410.21680, as reported: published per 1,000 node-days, so no
# count and no interval), BLOOM-176B (Hugging Face blog, *The Technology Behind BLOOM Training*, 2022),
# OPT-175B (Zhang et al., arXiv:2205.01068, sections 2.4-2.5), MegaScale (Jiang et al., NSDI 2024).
# The band of recent fleets (`data/failure_rate_band.csv`) is the course's own, derived from the same
# logs [@kokolis2025; @bloom-blog; @megascale; @llama3]. **Predict:** which log will be the outlier, and why?

# %%
rates = failures.log_rates(logs, confidence)
band_table = data.load_table("failure_rate_band.csv")
band = {q: v for q, v in zip(band_table["quantity"], band_table["value"])}
print(f"{'run':28s} {'rate (per GPU-day)':>22s} {f'{confidence:.0%} interval':>24s}  counted")
for r in rates:
    span = f"{r.rate_low:.2e}" if r.rate_low == r.rate_high else f"{r.rate_low:.2e}-{r.rate_high:.2e}"
    ci = f"{r.ci_low:.2e}-{r.ci_high:.2e}" if r.has_ci else "(rate only)"
    print(f"{r.run:28s} {span:>22s} {ci:>24s}  {r.counted}")
print(f"\nband of recent fleets: {band['band_low']:.1e} to {band['band_high']:.1e} per GPU-day (central {band['central']:.0e})")

# %%
failure_plots.public_log_rates(rates, band=(band["band_low"], band["band_high"]), question_rate=scenario.rate_per_gpu_day)
plt.show()

# %% [markdown]
# Read the plot with the caveats in the table's `assumption` column: OPT counts *restarts* (manual and
# automatic) on 2021-22 hardware and software, not hardware failures, so it sits above the band;
# BLOOM's "failures a week" is a range over a small fleet, hence its wide interval; MegaScale's period
# is "several weeks". The recent large fleets sit in or near the band. The band leaves two numbers out on
# purpose, and says so in its row: OPT's, and Kokolis et al.'s measured MTTF of 1,024-GPU jobs, which counts
# every cause (hardware, software, user) of one job type [@kokolis2025]. A team with an immature stack or a
# count of every cause sits above the band: read your own rate from your own log.

# %%
for r in rates:
    if r.assumption:
        print(f"{r.run}: {r.assumption}")
mttf_1024 = data.sourced("floor_inputs.csv")["kokolis_mttf_1024_jobs"]
print(f"Kokolis et al., 1,024-GPU jobs: MTTF {mttf_1024.value:g} {mttf_1024.unit}, all causes: "
      f"{24 / mttf_1024.value / 1024:.1e} per GPU-day, {24 / mttf_1024.value / 1024 / band['band_high']:.1f} x the band's high end")
print(f"why the band stops at {band['band_high']:.0e}: " + next(r["basis"] for r in band_table.rows if r["quantity"] == "band_high"))

# %% [markdown]
# ## The question's rate against Llama 3
#
# The question implies `failures_per_day / n_gpus` failures per GPU-day ([notebook 00](00-the-question.ipynb)). **Predict:** is
# the question's cluster unusually fragile?

# %%
q = scenario.rate_per_gpu_day
print(f"question: {scenario.failures_per_day:g} restarts/day / {scenario.n_gpus:,} GPUs = {q:.2e} per GPU-day")
print(f"Llama 3 : {rate:.2e} per GPU-day ({confidence:.0%} interval {ci_low:.2e} to {ci_high:.2e})")
print(f"ratio question / Llama 3: {q / rate:.2f}; inside Llama 3's interval: {ci_low <= q <= ci_high}; "
      f"inside the band: {band['band_low'] <= q <= band['band_high']}")

# %% [markdown]
# **Try it**
# - Rerun with `llama3_gpus = 8192` (papermill or edit the parameters cell): where does Llama 3 land in the band now?
# - Set `confidence = 0.99`: which logs' intervals still exclude the band?
# - Drop the planned interruptions back in (the "with planned" row): how much does the rate move?
#
# ## Answer table

# %%
NB = "01-per-gpu-failure-rate"
ledger.record(NB, "llama3_rate_per_gpu_day", "Llama 3 per-GPU failure rate", rate, "failures/GPU-day", ".2e")
ledger.record(NB, "llama3_rate_ci_low", f"Llama 3 rate, {confidence:.0%} interval low", ci_low, "failures/GPU-day", ".2e")
ledger.record(NB, "llama3_rate_ci_high", f"Llama 3 rate, {confidence:.0%} interval high", ci_high, "failures/GPU-day", ".2e")
print(ledger.table())

# %% [markdown]
# ## Summary

# %%
print(
    f"Llama 3's {events:.0f} unexpected interruptions over {days:.0f} days on {gpus:,.0f} GPUs give {rate:.2e} failures per "
    f"GPU-day ({confidence:.0%} interval {ci_low:.2e} to {ci_high:.2e}): one GPU fails every {1 / rate / 365.25:.1f} years; "
    f"the question's {q:.2e} is {q / rate:.2f}x that."
)

# %% [markdown]
# **Exercises:** [exercises/01-per-gpu-failure-rate-ex.ipynb](../exercises/01-per-gpu-failure-rate-ex.ipynb) practises this notebook (about 30 minutes; a check names your mistake, and the worked [solutions](../solutions/01-per-gpu-failure-rate-sol.ipynb) are there after your own attempt).
#
# **Next:** [notebook 02](02-fleet-mtbf.ipynb) multiplies that rate by the fleet: how often does a 4,096-GPU job stop?
