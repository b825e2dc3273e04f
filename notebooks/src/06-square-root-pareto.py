# %% [markdown]
# # 06 · The square-root Pareto: why an in-memory snapshot makes the interval about a minute
#
# **The question.** [Notebook 04](04-optimal-interval.ipynb) found $\tau^* = \sqrt{2\delta M}$: the best interval, and the waste at it, grow
# with the square root of the blocking write cost $\delta$. *What does that buy across the write costs seen in
# practice (a synchronous write to a parallel file system, an asynchronous DCP save, a snapshot to host memory),
# how cheap must a checkpoint be for a one-minute interval, and what stops the interval from shrinking further?*
#
# **Learning objectives**
# - Read the square-root law off a log-log plot (slope 1/2) and fit it.
# - Place real write costs on that curve and compute the interval and waste each one allows.
# - Compute the blocking cost a one-minute interval needs, and the bounds that set the interval from below: the step, the copy, the copy off the host (GEMINI).
#
# **Time:** 15 minutes. **Prerequisites:** [notebook 04](04-optimal-interval.ipynb) ($\tau^*$, Daly's exact optimum) and [notebook 02](02-fleet-mtbf.ipynb) (fleet MTBF).

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
target_interval_min = 1.0  # the interval we would like to afford (minutes)

# %%
import math

import matplotlib.pyplot as plt
import numpy as np

from course_lib import Scenario, ledger
from course_lib import interval as iv
from course_lib.data import load_table
from course_lib.plots import interval as interval_plots

scenario = Scenario.from_namespace(globals())  # the parameters above
M = scenario.mtbf_min
shard_gb = scenario.shard_bytes / 1e9
print(f"fleet MTBF M         : {M:.0f} min")
print(f"per-GPU shard        : {scenario.model_params:.3g} parameters x {scenario.checkpoint_bytes_per_param:g} B / {scenario.n_gpus:,} GPUs = {shard_gb:.2f} GB")

# %% [markdown]
# The model is Llama 3 405B (Llama Team, arXiv:2407.21783) with 12 bytes of checkpoint content per parameter
# (the fp32 master weights and Adam's two moments of mixed-precision Adam, ZeRO, SC 2020; `data/training_step.csv`),
# spread over the job's GPUs.
#
# ## The write costs seen in practice
#
# `data/write_costs.csv` holds blocking write costs with their sources: a synchronous checkpoint to a parallel
# file system (about 5 minutes, Kokolis et al., HPCA 2025, as reported); PyTorch DCP on a 7B model, synchronous
# and with `async_save` (PyTorch blog, June 2024); ByteCheckpoint's blocking time for a 405B model on 8,960 GPUs
# (NSDI 2025, Table 8, as reported); and this course's own measurements on one H200 host (`data/h200_host.csv` [@h200-measurement]):
# `async_save` blocking, `torch.save` + fsync at 0.87 GB/s, and a GPU -> pinned host memory copy at 55 GB/s. For
# the last two the blocking time is our shard size divided by the bandwidth.
#
# These are not all different kinds of thing. The blocking part of DCP `async_save` *is* a staging copy of the
# state into host memory; the save to storage then runs in the background. An in-memory snapshot makes the same
# copy and stops there, or sends it to a peer's memory. Two of the rows are also measured differently: the
# course's `async_save` blocking time (0.30 s for 4 GiB) was a copy from CPU memory to CPU memory, while the
# snapshot row is a GPU to pinned host copy, so their ratio is not a like-for-like comparison. What really
# differs between the strategies is what happens after the stall: *where the durable copy lives* (a file system
# that survives losing the node, or host memory that does not survive losing that host unless it is replicated
# to a peer, as GEMINI does [@gemini2023]) and *how fast it can be read back* after a failure (from local or peer memory in
# well under a second per shard, against ByteCheckpoint's load of a 405B model from storage in minutes [@bytecheckpoint]).
#
# **Predict first:** if one write is ten thousand times cheaper than another, how much shorter is its best
# interval: ten thousand times, a hundred times, or ten times?

# %%
costs = load_table("write_costs.csv")
regimes = []
for row in costs.rows:
    blocking_s = row["blocking_s"] if not math.isnan(row["blocking_s"]) else shard_gb / row["bandwidth_gb_per_s"]
    regimes.append((row["regime"], row["description"], blocking_s))
regimes.sort(key=lambda r: -r[2])
print(f"{'regime':<22} {'blocking':>10} {'tau* (min)':>11} {'waste at tau*':>14}")
for name, _, b in regimes:
    tau = iv.optimal_interval_exact(b / 60, M)
    w = iv.expected_waste(tau, b / 60, M, 0.0)
    print(f"{name:<22} {b:>9.3g}s {tau:>11.3g} {w:>14.3%}")

# %% [markdown]
# (Waste here counts writes and rewinds only, $R = 0$: the restart adds its $R/M$ whatever the interval, as [notebook 04](04-optimal-interval.ipynb)
# showed.)
#
# ## Slope 1/2
#
# Sweep the write cost over six decades and fit a straight line to $\log\tau^*$ against $\log\delta$, using Daly's
# exact optimum [@daly2006] rather than Young's formula (which has slope 1/2 by construction). The fit uses write costs up to a
# thousandth of the MTBF; beyond that the exact optimum bends below the square root ([notebook 04](04-optimal-interval.ipynb)'s table).

# %%
deltas_s = np.logspace(-3, 3, 61)
taus = iv.optimal_interval_exact(deltas_s / 60, M)
wastes = iv.expected_waste(taus, deltas_s / 60, M, 0.0)
small = deltas_s / 60 <= 1e-3 * M  # the fit uses write costs up to a thousandth of the MTBF
slope_tau = np.polyfit(np.log(deltas_s[small]), np.log(taus[small]), 1)[0]
slope_waste = np.polyfit(np.log(deltas_s[small]), np.log(wastes[small]), 1)[0]
print(f"fit over delta = {deltas_s[small].min():g} s .. {deltas_s[small].max():.3g} s ({small.sum()} points)")
print(f"fitted slope of tau* against delta : {slope_tau:.3f}")
print(f"fitted slope of waste against delta: {slope_waste:.3f}")
assert abs(slope_tau - 0.5) < 0.01 and abs(slope_waste - 0.5) < 0.01
print(f"100x cheaper writes -> interval x {100 ** -slope_tau:.3f}, waste x {100 ** -slope_waste:.3f}")

# %% [markdown]
# The reveal: ten thousand times cheaper writes give a hundred times shorter interval and a hundred times less
# waste. The square root is a harsh exchange rate: each tenfold cut in waste needs a hundredfold cut in write cost.
#
# ## What a one-minute interval needs
#
# Invert the square root: $\delta = \tau^2 / 2M$. **Predict:** at a 12-hour MTBF, how long may a checkpoint block
# training if we want one every minute?

# %%
needed = iv.write_cost_for_interval(target_interval_min, M)  # minutes
assert math.isclose(needed, target_interval_min**2 / (2 * M))
print(f"a {target_interval_min:g}-minute interval at M = {M:.0f} min needs a blocking cost of {needed * 60e3:.1f} ms")
print(f"check: the exact optimum at that cost is {iv.optimal_interval_exact(needed, M):.3f} min")
for name, _, b in regimes:
    print(f"  {name:<22} {b * 1e3:>10.3g} ms: {b / (needed * 60):>9.3g} x the budget")

# %%
points = [(f"{name} ({b:.3g} s)", b / 60) for name, _, b in regimes]
axes = interval_plots.square_root_law(deltas_s / 60, M, points=points, reference_interval=target_interval_min)
plt.show()

# %% [markdown]
# Only a copy of the shard alone into pinned host memory fits the budget: a synchronous file-system write sits at hourly
# intervals (where the large clusters of Kokolis et al. live), the 7B model's asynchronous DCP save at minutes, and the
# snapshot of our shard at about a minute. Taking the save to storage off the critical path is the lever, in
# `async_save` and in a snapshot alike: the copy to host memory is what blocks, and it is short when it comes from the
# GPU over a fast path into pinned memory and each GPU holds only its shard.
#
# ## The bounds that bind: the step, the copy, the copy that leaves the host
#
# GEMINI (Wang et al., SOSP 2023 [@gemini2023]) models the waste as $t_{ckpt} + 1/(2f) + t_{rtvl}$ with the checkpoint
# frequency bounded by $1/f \ge \max(t_{ckpt}, T_{iter})$. Three things bound the interval from below, whatever the
# square root says:
# - **the training step** $T_{iter}$: the state is consistent only at a step boundary, so at most one checkpoint per
#   step is useful. From the model, the tokens per step and the fleet: $T_{iter} = 6 N D / (G F)$ (Llama 3 Table 4
#   [@llama3]: 405B parameters, 16M tokens per step, 430 TFLOP/s per GPU up to 8,192 GPUs, 400 at 16,384);
# - **the snapshot copy** $t_{copy}$: a new snapshot cannot start before the previous copy has finished;
# - **the copy that leaves the host**: a snapshot in host memory survives the loss of that host only once a peer or
#   storage holds it; if every snapshot must get there before the next one starts, the interval is at least that
#   copy (here the shard at the synchronous write's bandwidth, the course's stand-in for the persist or peer copy).
#
# **Predict:** at 4,096 GPUs, which of the three is longest, and is it longer than the square root's interval?

# %%
from course_lib import levers as lv
from course_lib import step as st


def interval_bounds(sc):
    """Young's interval for the snapshot and the three lower bounds, in minutes, for one scenario."""
    share = lv.all_levers_day(sc).latest_share  # the failures that restore from the snapshot (not a silent corruption)
    young = iv.young_interval(sc.snapshot_cost_min, sc.mtbf_min / share)
    return {"young": young, "step": sc.step_min, "copy": sc.snapshot_cost_min, "leaves host": sc.write_cost_min}


b = interval_bounds(scenario)
bound = st.interval_lower_bound_min(b["step"], b["copy"], b["leaves host"])
binding = max(("step", "copy", "leaves host"), key=b.get)
for name, v in b.items():
    print(f"{name:12s} {60 * v:9.3f} s")
print(f"longest bound: {binding} ({60 * bound:.1f} s); the square root's interval is {b['young'] / bound:.1f}x it, "
      f"so the interval is {60 * max(b['young'], bound):.0f} s")

# %% [markdown]
# The step is the bound that matters: the two copies take milliseconds to about a second, but one step of the 405B
# model takes tens of seconds on this fleet, and the square root asks for a snapshot only about every two steps.
# Does that hold on other fleets? **Predict:** on 16 times the GPUs, does the step get closer to the
# square root's interval or further from it?

# %%
fleets = [1024, 2048, 4096, 8192, 16384, 32768, 65536]
print(f"{'GPUs':>7s} {'Young s':>8s} {'step s':>7s} {'copy ms':>8s} {'leaves host s':>14s} {'Young/step':>11s}  interval set by")
for g in fleets:
    x = interval_bounds(scenario.replace(n_gpus=g))
    lower = st.interval_lower_bound_min(x["step"], x["copy"], x["leaves host"])
    print(f"{g:7,d} {60 * x['young']:8.1f} {60 * x['step']:7.1f} {60e3 * x['copy']:8.2f} {60 * x['leaves host']:14.2f} "
          f"{x['young'] / x['step']:11.2f}  {'the square root' if x['young'] >= lower else 'the step'}")
# the rate at which the step binds here: sqrt(2 delta M / share) = T_iter
share = lv.all_levers_day(scenario).latest_share
m_bind = share * b["step"] ** 2 / (2 * scenario.snapshot_cost_min)
print(f"\nat {scenario.n_gpus:,} GPUs the step binds once failures come every {m_bind:.0f} min or more often: "
      f"{scenario.mtbf_min / m_bind:.1f}x the scenario's rate")

# %% [markdown]
# The ratio hardly moves with the fleet, and that is no accident: at a fixed global batch the step shrinks as
# $1/G$, and so does the square root's interval, because the shard (so $\delta$) and the MTBF both shrink as $1/G$
# and $\sqrt{2\delta M} \propto 1/G$. The snapshot interval stays at one or two steps on every fleet (the step
# changes a little where Llama 3's throughput per GPU changes). It reaches the step once failures come several times
# more often than the scenario's, or on a job with a smaller state per step: there the interval is pinned at one
# step, and the rewind per failure is half a step, which the floor of [notebook 08](08-the-floor.ipynb) includes. The
# copy-time bound never binds on these numbers; the next cells show what happens where it would.
#
# ### Below the copy time
#
# Once the copy runs beside training, the stall $\delta$ can shrink below the copy time $t_{copy}$, but the interval
# cannot: below $t_{copy}$, each snapshot waits for the last and training stalls for $t_{copy} - \tau$ every interval.

# %%
snap = [b for name, _, b in regimes if name == "snapshot_pinned_host"][0]  # seconds
copy_min = snap / 60
tau_snap = iv.bounded_interval(copy_min, M, copy_min)  # the copy blocks: delta = t_copy
w_snap = iv.expected_waste(tau_snap, copy_min, M, 0.0)
print(f"snapshot copy time t_copy      : {snap * 1e3:.1f} ms")
print(f"optimal interval (delta = t_copy): {tau_snap:.3f} min = {tau_snap * 60:.0f} s, waste {w_snap:.3%} (R = 0)")
print(f"interval / copy time           : {tau_snap / copy_min:,.0f}")

# %%
grid = np.logspace(math.log10(copy_min / 30), math.log10(30 * tau_snap), 400)
ax = interval_plots.snapshot_bound(grid, copy_min, copy_min, M)
ax.set_title("Below the copy time each snapshot waits for the last: a wall, not a trade-off")
plt.show()
def stall_waste(tau, delta, t_copy, mtbf):
    """interval.stalled_waste (R = 0): each interval stalls max(delta, t_copy - tau), not delta plus the wait."""
    return iv.stalled_waste(tau, delta, mtbf, t_copy)


below = stall_waste(copy_min / 10, copy_min, copy_min, M)
assert math.isclose(below, 10 + copy_min / 20 / M)  # the copy is the stall: t_copy per tenth of t_copy
print(f"forcing the interval to a tenth of the copy time: waste {below:.0%} of useful work")
print(f"a snapshot whose stall is a tenth of the copy, at that interval: {stall_waste(copy_min / 10, copy_min / 10, copy_min, M):.0%}")

# %% [markdown]
# When the copy blocks ($\delta = t_{copy}$), an interval shorter than the copy adds no wait of its own: the copy
# *is* the stall, $t_{copy}$ per interval, so a tenth of the copy time costs ten times the interval in stalls (the
# first line). The wait appears only when the copy runs beside training with a shorter stall: then each interval
# stalls $\max(\delta, t_{copy} - \tau)$, and making the stall cheaper stops helping once $\tau < t_{copy}$ (second line).
#
# So the interval is set by the square root and, close behind it, by the step; in GEMINI's regime, where a snapshot
# every iteration is affordable, the rewind is at most one iteration and what remains of the waste is the restart
# itself: detection, rescheduling and reload ([notebook 08](08-the-floor.ipynb)).
#
# **Try it.** Set `n_gpus = 16384`: the shard shrinks 4x and the MTBF 4x; which effect wins for the snapshot's interval?
# Set `failures_per_day = 8`: which bound sets the interval now?
# Set `target_interval_min = 0.1`: how many milliseconds may a checkpoint then block?
#
# ## The answer table

# %%
ledger.record("06-square-root-pareto", "snapshot_interval_min", "optimal interval with an in-memory snapshot", tau_snap, "min", ".2f")
ledger.record("06-square-root-pareto", "snapshot_waste_pct", "waste from checkpointing at that interval (R excluded)", 100 * w_snap, "% of useful work", ".3f")
ledger.record("06-square-root-pareto", "one_minute_budget_ms", f"blocking cost a {target_interval_min:g}-min interval allows", needed * 60e3, "ms", ".1f")
print(ledger.table())

# %% [markdown]
# ## Summary

# %%
print(
    f"The best interval grows as the square root of the write cost (fitted slope {slope_tau:.2f}): a {target_interval_min:g}-minute "
    f"interval at a {scenario.fleet_mtbf_hours:.0f} h MTBF needs a {needed * 60e3:.0f} ms stall, which only a snapshot to host "
    f"memory ({snap * 1e3:.0f} ms for a {shard_gb:.1f} GB shard) meets: interval {tau_snap * 60:.0f} s, waste {w_snap:.2%}."
)

# %% [markdown]
# **Exercises:** [exercises/06-square-root-pareto-ex.ipynb](../exercises/06-square-root-pareto-ex.ipynb) practises this notebook (about 20 minutes; a check names your mistake, and the worked [solutions](../solutions/06-square-root-pareto-sol.ipynb) are there after your own attempt).
#
# **Next:** [notebook 07](07-fault-injection-lab.ipynb) runs a real restart under torchrun with injected failures and measures its stages.
