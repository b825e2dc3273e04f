# %% [markdown]
# # 09 · Your fleet: the whole answer for your own numbers
#
# **The question.** *A 4,096-GPU training run loses about 2 % of every day to restarts (two a day,
# about 15 minutes each). Fix it, and say where the floor is.* Notebooks [00](00-the-question.ipynb)-[08](08-the-floor.ipynb) answered it for the
# course's fleet. This capstone answers it for **yours**: put your fleet size, your failure rate (or
# the failures you counted), your restart stage minutes, your state size and your measured write
# cost in the parameters cell (or inject them with papermill) and it computes everything again.
#
# **Learning objectives**
# - Turn a fleet's own numbers into the daily restart budget, stage by stage, with the uncertainty of a counted failure rate.
# - Find the optimal checkpoint interval before and after an in-memory checkpoint, and what each lever saves.
# - State the after-levers loss and the floor $\lambda(D+R)$ per failure mode, with its 90 % range and what dominates it, and say the answer in two minutes and write it out in one paragraph.
#
# **Time:** 20 minutes. **Prerequisites:** notebooks [03](03-anatomy-of-a-restart.ipynb) (stages and levers), 04-06 (the interval and
# write costs; [notebook 05](05-write-cost.ipynb) measures a write cost you can paste here), 08 (the floor).
#
# Run it for your fleet from the shell, for example:
# `papermill notebooks/09-your-fleet.ipynb out.ipynb -p n_gpus 16384 -p observed_failures 60 -p observed_days 7`,
# or get the same numbers as a table with `python -m course_lib budget --help`.

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
sim_runs = 2000  # simulated jobs in the check of section 4

# %%
import math

import matplotlib.pyplot as plt
import numpy as np
from scipy import stats

from course_lib import MINUTES_PER_DAY, Scenario, failures, ledger
from course_lib.scenario import PARAMETERS
from course_lib import interval as iv
from course_lib import floor as fl
from course_lib.answer import answer
from course_lib.plots.floor import answer_waterfall, floor_alternatives
from course_lib.simulate import simulate_job

scenario = Scenario.from_namespace(globals())  # the parameters above: your fleet, in one record
# the rate is counted: its exact Poisson interval from the count it rests on (notebook 01), your log's or the assumed month's
rate_ci = failures.rate_ci_per_gpu_day(round(scenario.observed_failures), scenario.n_gpus, scenario.observed_days)
ans = answer(scenario)
given = {k: v for k, v in globals().items() if k in PARAMETERS and v is not None and k != "n_gpus"}
print(f"fleet: {ans.n_gpus:,} GPUs; your inputs: " + (", ".join(f"{k}={v:g}" for k, v in given.items()) or "none (the course's values)"))

# %% [markdown]
# ## 1. Your failure rate and your baseline
#
# **Predict first:** how many failures a day does your fleet see, and what share of the day do they
# cost at your stage minutes?

# %%
print(f"failure rate      : {ans.rate_per_gpu_day:.3e} per GPU-day")
print(f"  95 % interval   : {rate_ci[0]:.3e} to {rate_ci[1]:.3e} (exact Poisson, {scenario.observed_failures:.0f} failures "
      f"in {scenario.observed_days:g} days{'' if observed_failures is not None else ', an assumed month'}; notebook 01)")
print(f"failures per day  : {ans.failures_per_day:.2f} (fleet MTBF {ans.fleet_mtbf_hours:.1f} h)")
b = ans.baseline
per_restart = b.stages.as_dict() | {"rewind": b.stages.rewind - b.latency_min, "latency": b.latency_min}
print(f"\n{'stage':11s} {'min/restart':>11s} {'min/day':>8s} {'share':>6s}")
for stage, per_day in b.breakdown().items():
    minutes = per_restart.get(stage)
    print(f"{stage:11s} {'' if minutes is None else format(minutes, '11.2f'):>11s} {per_day:8.2f} {per_day / b.minutes_per_day:6.1%}")
print(f"{'total':11s} {b.stages.total:11.2f} {b.minutes_per_day:8.2f}")
print(f"\nbaseline loss: {b.minutes_per_day:.1f} min/day = {b.loss_fraction:.2%} of the day")

# %% [markdown]
# ## 2. The optimal interval, before and after the in-memory checkpoint
#
# The first-order waste $\delta/\tau + (\tau/2 + R)/M$ ([notebook 04](04-optimal-interval.ipynb)) is smallest at
# $\tau^* = \sqrt{2\delta M}$; the day model's own optimum ([notebook 08](08-the-floor.ipynb)) is that to first order.
# **Predict:** if the blocking write falls by a factor of 60, by what factor does the best interval fall? (Nearly the
# square root: to first order the optimum is $\sqrt{2\delta(M - R)/s}$, with $R$ the minutes of a failure the interval
# does not move and $s$ the share of failures that rewind to the latest checkpoint; the levers shorten $R$ and leave
# the corruptions rewinding to the persisted checkpoint, which moves the ratio by a few per cent, more where failures are
# frequent.)

# %%
m = b.mtbf_min
restart = b.stages.restart_cost
print(f"synchronous write : {60 * ans.write_cost_before_min:8.3f} s -> optimal interval {ans.interval_before_min:7.2f} min")
print(f"in-memory snapshot: {60 * ans.snapshot_cost_min:8.3f} s -> optimal interval {ans.interval_after_min:7.2f} min")
ratio_write = ans.write_cost_before_min / ans.snapshot_cost_min
ratio_tau = ans.interval_before_min / ans.interval_after_min
# first order, tau* = sqrt(2 delta (M - R) / s): R the minutes per failure the interval does not move, s the share of
# failures that rewind to the latest checkpoint (after the levers an SDC rewinds to the persisted one)
def first_order(day, delta):
    return math.sqrt(2 * delta * (day.mtbf_min - day.nonlatest_min) / day.latest_share)


predicted = first_order(b, ans.write_cost_before_min) / first_order(ans.after, ans.snapshot_cost_min)
print(f"write {ratio_write:.0f}x cheaper -> interval {ratio_tau:.1f}x shorter (sqrt: {math.sqrt(ratio_write):.1f}; "
      f"with each day's M - R and s: {predicted:.1f})")
assert abs(ratio_tau - predicted) < 0.02 * ratio_tau
assert abs(ans.interval_before_min - first_order(b, ans.write_cost_before_min)) < 0.02 * ans.interval_before_min
assert abs(ans.interval_before_min - iv.young_interval(ans.write_cost_before_min, m - b.nonlatest_min)) < 0.02 * ans.interval_before_min

# %%
taus = np.geomspace(ans.interval_after_min / 10, max(ans.interval_before_min, b.interval_min) * 10, 200)
fig, ax = plt.subplots(figsize=(7.5, 4.0))
for label, delta, tau_opt in [("synchronous write", ans.write_cost_before_min, ans.interval_before_min),
                              ("in-memory snapshot", ans.snapshot_cost_min, ans.interval_after_min)]:
    w = 100 * iv.waste_fraction(taus, delta, m, restart)
    line, = ax.plot(taus, w, label=f"{label} ({60 * delta:.3g} s)")
    ax.plot([tau_opt], [100 * iv.waste_fraction(tau_opt, delta, m, restart)], "o", color=line.get_color())
ax.axvline(b.interval_min, color="#7f7f7f", ls=":", label=f"your interval ({b.interval_min:g} min)")
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_xlabel("checkpoint interval (min)")
ax.set_ylabel("time lost (% of the day, baseline restart)")
ax.set_title("The waste curve and its minimum for each write cost")
ax.legend(fontsize=9)
plt.show()

# %% [markdown]
# ## 3. The levers, largest saving first, and the floor
#
# The four levers of notebooks [03](03-anatomy-of-a-restart.ipynb) and [08](08-the-floor.ipynb) (sources in `data/levers.csv` and `data/write_costs.csv`),
# applied in the order of what they save for **your** numbers, each only while it saves. **Predict:** which lever comes
# first for your fleet, and is the hot spare worth its idle GPUs?

# %%
print(ans.lever_table())
f = ans.after
print(f"\nafter the levers: {f.minutes_per_day:.2f} min/day ({f.loss_fraction:.3%}), "
      f"of which the floor is {f.floor_minutes_per_day:.2f} min/day ({f.floor_fraction:.3%}): {fl.terms_sentence(f)}")
print(ans.spare.sentence)

# %%
answer_waterfall(ans)
plt.show()

# %% [markdown]
# The floor per failure mode ([notebook 08](08-the-floor.ipynb)): crashes, hangs (seen only at a timeout), host losses and
# silent corruption each cost their own $D_k + R_k + T_{step}/2 + L_k$. Your inputs are ranges, not points: the
# Monte Carlo gives the floor's median and 90 % range and the input that dominates it. **Predict:** does a
# checkpoint setting dominate your range?

# %%
per_mode = fl.per_mode(f)
idle = float(f.floor_budget.idle_minutes_per_day)  # a kept spare's idle GPUs: a term of the floor, of no mode
for x in f.modes:
    print(f"{x.mode:10s} {x.share:6.1%} of failures: floor {per_mode[x.mode]:6.2f} min/day")
if idle:
    print(f"{'idle spare':10s} {'':17s} floor {idle:6.2f} min/day")
total = sum(per_mode.values()) + idle
assert abs(total - f.floor_minutes_per_day) < 1e-9 * f.floor_minutes_per_day
print(f"{'total':10s} {'':17s} floor {total:6.2f} min/day ({f.floor_fraction:.3%} of the day)")
r = ans.spread
print(f"\n90 % ranges ({r.n:,} draws): floor {r.floor.text()}, after-levers loss {r.loss.text()}")
print("rank correlation with the loss: " + ", ".join(f"{k} {v:+.2f}" for k, v in sorted(r.dominance.items(), key=lambda kv: -abs(kv[1]))))
day = stats.poisson(f.failures_per_day)
lo_day, hi_day = day.ppf(0.05), day.ppf(0.95)
print(f"day to day: 90 % of days have {lo_day:.0f} to {hi_day:.0f} failures, a floor of "
      f"{lo_day * f.floor_minutes_per_day / f.failures_per_day:.2f} to {hi_day * f.floor_minutes_per_day / f.failures_per_day:.2f} min that day")

# %%
alternatives = {"after the levers": f} | {lever.name: g for lever, g in ans.fewer}
floor_alternatives(alternatives)
plt.title("Fewer failures lower the floor and the checkpoint term (alternatives, not a chain)")
plt.show()

# %% [markdown]
# ## 4. Check by simulation
#
# **Predict:** will an event-by-event simulation of the after-levers job ([notebook 04](04-optimal-interval.ipynb)'s simulator)
# agree with the after-levers loss within three standard errors?

# %%
work = 30 * MINUTES_PER_DAY
sim = simulate_job(work, f.interval_min, f.write_cost_min, f.mtbf_min, f.nonlatest_min, n_runs=sim_runs, seed=9)
exact = iv.expected_waste(f.interval_min, f.write_cost_min, f.mtbf_min, f.nonlatest_min)
mean, se = sim.mean("waste"), sim.stderr("waste")
print(f"simulated {mean:.4%} +- {se:.4%}; Daly's model {exact:.4%}; the day model (the answer) "
      f"{f.loss_fraction / (1 - f.loss_fraction):.4%} of useful time")
print(f"simulation within 3 SE of the complete model: {abs(mean - exact) < 3 * se}")
assert abs(mean - exact) < 3 * se

# %% [markdown]
# ## 5. The answer, in two minutes and written out
#
# Generated from the numbers above by `course_lib.answer` (the budget CLI prints the same). First what you say in
# two minutes: four moves, about a dozen numbers at two significant figures, stages and levers largest first. Then the
# written answer, which carries every stage, lever and floor term.

# %%
print(ans.spoken)
print()
print(ans.written)
lo, hi = (answer(scenario.replace(rate_per_gpu_day=r), spread_draws=0) for r in rate_ci)
print(f"\nWith the 95 % interval of the counted rate, the floor lies between {lo.after.floor_fraction:.3%} and "
      f"{hi.after.floor_fraction:.3%} of the day.")

# %% [markdown]
# **Try it**
# - Paste the blocking write cost [notebook 05](05-write-cost.ipynb) measured on your machine into `write_cost_min` (minutes): how far does the "before" interval move?
# - Set `observed_failures` and `observed_days` from your own incident log: how wide is the floor's range? (The
#   course assumes the question's two a day were counted over a month: 60 failures.)
# - Run `python -m course_lib budget --gpus 16384 --rate 8.1e-4 --json` and compare with this notebook run at the same numbers.
#
# ## The answer table

# %%
nb = "09-your-fleet"
for row in ans.rows():
    ledger.record(nb, row.key, row.label, row.value, row.unit, row.fmt)
print(ledger.table())

# %% [markdown]
# ## Summary

# %%
print(
    f"{ans.n_gpus:,} GPUs: baseline {b.loss_fraction:.2%} of the day; optimal interval {ans.interval_before_min:.2f} min "
    f"before and {ans.interval_after_min:.2f} min after the in-memory checkpoint; after the levers {f.loss_fraction:.3%}; "
    f"floor {f.floor_fraction:.3%} ({f.floor_minutes_per_day:.2f} min/day); {ans.spare.sentence}"
)

# %% [markdown]
# **Exercises:** [exercises/09-your-fleet-ex.ipynb](../exercises/09-your-fleet-ex.ipynb) practises this notebook (about 25 minutes; a check names your mistake, and the worked [solutions](../solutions/09-your-fleet-sol.ipynb) are there after your own attempt).
#
# **Next:** [notebook 10](10-dont-restart-the-world.ipynb) asks whether a failure must stop the whole job at all.
# `make course` prints this answer table; run it with `FLEET=16384` (or papermill with your numbers) to carry another
# fleet through every notebook.
