# %% [markdown]
# # 00 · The question: a 4,096-GPU run loses about 2 % of every day to restarts
#
# **The question.** *A 4,096-GPU training run loses about 2 % of every day to restarts (two a day,
# about 15 minutes each). Fix it, and say where the floor is.* This notebook turns the sentence
# into numbers, names the four stages every restart goes through, states the checkpoint interval
# the course assumes, and lays out the road through notebooks [01](01-per-gpu-failure-rate.ipynb)-[15](15-the-schedulers-share.ipynb).
#
# **Learning objectives**
# - Compute the daily loss, the implied fleet MTBF and the implied per-GPU failure rate from the question's numbers.
# - Name the four stages of a restart (detection, rescheduling, reload, rewound work) and which number each one is.
# - Explain why "15 minutes per restart" forces a short baseline checkpoint interval.
#
# **Time:** 10 minutes. **Prerequisites:** none; every later notebook starts from the `Scenario` defined here.

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
from course_lib import MINUTES_PER_DAY, Scenario, ledger

scenario = Scenario.from_namespace(globals())  # the parameters above
scenario

# %% [markdown]
# ## The loss, from the question's own numbers
#
# **Predict first:** two restarts of 15 minutes: what fraction of a 24-hour day is that? And if the
# fleet fails twice a day, how long does one GPU run, on average, between failures?
#
# The question is the source of these numbers (`Scenario`); everything below is computed from them.

# %%
from course_lib.notebook import predict

my_guess = None  # your guess: the % of the day two 15-minute restarts cost (type it, run this cell, then the next)
guess = predict("00.loss", my_guess, "% of the day")

# %%
print(f"minutes lost per day : {scenario.minutes_lost_per_day:.0f} of {MINUTES_PER_DAY}")
print(f"fraction of the day  : {scenario.loss_fraction:.2%}")
print(f"fleet MTBF           : {scenario.fleet_mtbf_hours:.1f} h")
print(f"per-GPU rate         : {scenario.rate_per_gpu_day:.2e} failures per GPU-day")
print(f"per-GPU MTBF         : {1 / scenario.rate_per_gpu_day:,.0f} GPU-days = {1 / scenario.rate_per_gpu_day / 365.25:.1f} years")

# %%
guess.reveal(100 * scenario.loss_fraction)

# %% [markdown]
# A GPU that fails once every five and a half years looks reliable. Four thousand of them, all in
# one synchronous job, fail twice a day: the job stops whenever *any* GPU stops. Notebooks [01](01-per-gpu-failure-rate.ipynb) and [02](02-fleet-mtbf.ipynb)
# check both numbers against public failure logs.
#
# ## The four stages of one restart
#
# Every unplanned restart costs, in order:
#
# | stage | what happens | lever (later notebooks) |
# |---|---|---|
# | **detection** | a GPU dies or hangs; the job notices (collective timeout, heartbeat, health check) | heartbeats instead of timeouts ([03](03-anatomy-of-a-restart.ipynb), [07](07-fault-injection-lab.ipynb)) |
# | **rescheduling** | the job is torn down, nodes replaced, processes restarted, communicators rebuilt | in-job restart on hot spares ([03](03-anatomy-of-a-restart.ipynb), [07](07-fault-injection-lab.ipynb)) |
# | **reload** | the last checkpoint is read back into GPU memory | reload from host or peer memory ([03](03-anatomy-of-a-restart.ipynb), [05](05-write-cost.ipynb)) |
# | **rewound work** | steps done since that checkpoint are lost and recomputed: on average half the interval | a shorter interval, paid for by a cheaper write ([04](04-optimal-interval.ipynb)-[06](06-square-root-pareto.ipynb)) |
#
# ## The baseline interval the course assumes
#
# The rewound work hides inside the 15 minutes. The course *assumes* that a failure strikes at a
# uniformly random moment within a checkpoint interval, so that the mean rewind is half the interval.
# That holds when failures arrive as a Poisson process, independent of when checkpoints are taken, and
# the interval is much shorter than the time between failures; [notebook 03](03-anatomy-of-a-restart.ipynb) checks it by simulation
# and shows when clustered failures break it. An hourly interval (common in
# practice, Kokolis et al., HPCA 2025) would rewind 30 minutes on its own, more than the whole
# restart. **Predict:** what is the longest interval that fits inside 15 minutes per restart?

# %%
half = scenario.checkpoint_interval_min / 2
sdc = scenario.mean_rewind_min - half  # the hour a silent corruption rewinds, x its share of the failures (notebook 08)
print(f"baseline checkpoint interval : {scenario.checkpoint_interval_min:g} min (the course's assumption)")
print(f"mean rewound work            : {half:g} min (half the interval) + {sdc:.2f} min (silent corruption) = "
      f"{scenario.mean_rewind_min:.2f} min per restart")
print(f"left for detect + reschedule + reload : {scenario.minutes_per_restart - scenario.mean_rewind_min:.2f} min")
print(f"longest interval that fits   : {2 * (scenario.minutes_per_restart - sdc):.1f} min (and then nothing else may cost anything)")
hourly = scenario.replace(checkpoint_interval_min=60)  # the other reading: 15 minutes of downtime, hourly checkpoints
print(f"if the 15 min were downtime only and the team checkpointed hourly: {hourly.minutes_per_restart:.1f} min per restart, "
      f"{hourly.minutes_lost_per_day:.0f} min a day ({hourly.loss_fraction:.2%})")

# %% [markdown]
# So the course assumes a **10-minute** baseline interval: the mean rewind is half of it, plus the small share of
# failures that are silent corruptions rewinding an (assumed) hour each, and the other three stages share what is
# left. That is an assumption, and the question may mean otherwise: if the 15 minutes are downtime only and the team
# checkpoints hourly, each restart rewinds half an hour on top, and the loss is the last line above, not 2 %. Ask.
# [Notebook 03](03-anatomy-of-a-restart.ipynb) splits the rest with sourced stage times.
#
# ## The road
#
# | notebook | result it hands on |
# |---|---|
# | [01 per-GPU failure rate](01-per-gpu-failure-rate.ipynb) | failures per GPU-day from Llama 3's 419 interruptions, with a Poisson interval |
# | [02 fleet MTBF](02-fleet-mtbf.ipynb) | MTBF of 4,096 GPUs (about 12 h, about 2 failures a day) |
# | [03 anatomy of a restart](03-anatomy-of-a-restart.ipynb) | the 15 minutes split into four stages; what each lever saves |
# | [04 optimal interval](04-optimal-interval.ipynb) | the square-root law tau* = sqrt(2 delta M), derived and simulated |
# | [05 write cost](05-write-cost.ipynb) | delta measured with real PyTorch checkpoints on your machine |
# | [06 square-root Pareto](06-square-root-pareto.ipynb) | why an in-memory snapshot makes the interval about a minute |
# | [07 fault-injection lab](07-fault-injection-lab.ipynb) | a real restart under torchrun, its stages measured |
# | [08 the floor](08-the-floor.ipynb) | lambda x (detection + restart): what no checkpointing removes |
# | [09 your fleet](09-your-fleet.ipynb) | the whole answer for your own numbers |
# | [10 don't restart the world](10-dont-restart-the-world.ipynb) | per-step fault tolerance (torchft): a failure stops one replica group, not the job |
# | [11 losing a node](11-losing-a-node.ipynb) | a lost node, a hot spare and where the state comes back from, measured |
# | [12 interview drill](12-interview-drill.ipynb) | the four scoring points and the follow-ups, answered first by you, then by the course |
# | [13 your incident log](13-your-incident-log.ipynb) | a real fault trace tests the model's identical, independent, stationary nodes; the floor for that fleet |
# | [14 silent corruption and lemons](14-silent-corruption-and-lemons.ipynb) | real bit flips caught within steps by cheap detectors, the SDC term at their measured latency; a node that keeps failing and three policies for it |
# | [15 the scheduler's share](15-the-schedulers-share.ipynb) | a lost node timed on a real Slurm cluster at its defaults and tuned: who spends the reschedule, and how long a fleet's start-up may take before a spare pays |
#
# Then [the answer sheet](../ANSWER_SHEET.md): the whole answer in 2 and in 10 minutes. Short of time? The
# course's home page has an evening's path through it (00, 03, 04, 08, 12 and the answer sheet).
#
# ## The answer table so far
#
# Each notebook adds what it establishes to the course's answer table (`make course` prints the whole
# table at the end).

# %%
ledger.record("00-the-question", "baseline_loss_pct", "baseline loss to restarts", 100 * scenario.loss_fraction, "% of the day", ".2f")
ledger.record("00-the-question", "baseline_minutes_per_day", "minutes lost per day", scenario.minutes_lost_per_day, "min/day", ".0f")
ledger.record("00-the-question", "baseline_interval_min", "baseline checkpoint interval (assumed)", scenario.checkpoint_interval_min, "min", "g")
print(ledger.table())

# %% [markdown]
# ## Summary

# %%
print(
    f"Two {scenario.minutes_per_restart:g}-minute restarts a day cost {scenario.loss_fraction:.2%} of the day "
    f"({scenario.minutes_lost_per_day:.0f} of {MINUTES_PER_DAY} minutes): a fleet MTBF of {scenario.fleet_mtbf_hours:.0f} h, "
    f"{scenario.rate_per_gpu_day:.1e} failures per GPU-day."
)

# %% [markdown]
# **Next:** [notebook 01](01-per-gpu-failure-rate.ipynb) checks that per-GPU rate against Llama 3's public failure log.
