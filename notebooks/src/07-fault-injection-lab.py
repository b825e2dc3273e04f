# %% [markdown]
# # 07 · Fault-injection lab: a real restart under torchrun, its four stages measured
#
# **The question.** *A 4,096-GPU training run loses about 2 % of every day to restarts (two a day,
# about 15 minutes each). Fix it, and say where the floor is.* Notebooks [03](03-anatomy-of-a-restart.ipynb)-[06](06-square-root-pareto.ipynb) reasoned about
# detection, rescheduling, reload and rewound work from published numbers. Here you watch them
# happen: a small training job runs under PyTorch's elastic launcher (`torchrun`), we kill one of
# its processes and make another one hang, and we measure each stage of each restart from the
# job's own event log. The same runs are the course's reliability proof: a job killed and hung
# mid-training ends with exactly the same weights as one that never failed.
#
# **Learning objectives**
# - Name the event that starts and ends each stage of a restart, and measure the four stages of a real one.
# - Show that resuming from the latest good checkpoint (RNG and optimizer state included) is bit-identical to never failing.
# - Explain what a one-host lab can and cannot tell you about a fleet's restart (what binds a timeout, what reload depends on).
#
# **Time:** 20 minutes (the lab's two runs take well under a minute). **Prerequisites:** [notebook 03](03-anatomy-of-a-restart.ipynb) (the
# four stages and their fleet-scale minutes), [notebook 05](05-write-cost.ipynb) (the safe checkpoint writer), [notebook 06](06-square-root-pareto.ipynb)
# (why an in-memory snapshot makes a short interval affordable).

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
# the lab's own knobs (a toy job on this machine, not numbers about the outside world)
lab_steps = 24  # optimizer steps of the job
lab_ckpt_every = 4  # checkpoint interval, in steps
lab_timeout_s = 2.0  # collective (process-group) timeout: the lever that catches a hang
lab_snapshot = "memory"  # reload from "memory" (/dev/shm snapshot) or "disk"

# %%
import matplotlib.pyplot as plt
import sympy as sp
from ipywidgets import IntSlider, interact

from course_lib import Scenario, ledger
from course_lib import restart as rs
from course_lib.data import sourced
from course_lib.faultlab import Failure, LabConfig, load_benchmark, run_lab, same_final_state
from course_lib.plots.faultlab import restart_timeline, stage_bars_seconds

scenario = Scenario.from_namespace(globals())  # the parameters above
fleet = rs.baseline_stages(scenario)  # notebook 03's four stages at fleet scale (minutes)
scenario

# %% [markdown]
# ## 1. The job, the failures, and the event log
#
# The job (`course_lib/faultlab/job.py`) is a tiny MLP with dropout learning a random linear map on
# synthetic data, with SGD and momentum, on 2 ranks (gloo on CPU; NCCL when GPUs are present).
# Everything that decides its result is a pure function of the seed, the step and the rank: the batch
# of step *s* on rank *r*, the initial weights, and each rank's dropout stream, whose state is saved in
# every checkpoint with the momentum buffers. Gradients are averaged by an explicit all-reduce. Rank 0
# writes a checkpoint every `lab_ckpt_every` steps with the course's safe writer (checksum, fsync,
# atomic rename; [notebook 05](05-write-cost.ipynb)); after a restart every rank loads the newest checkpoint that verifies.
#
# `run_lab` starts `torchrun --nproc-per-node 2 --max-restarts K` as a subprocess, with a wrapper that
# only *observes* the launcher's agent, and injects one failure per worker generation:
#
# - `kill`: SIGKILL a rank in the middle of a step. Its peer is blocked in the all-reduce and sees the
#   socket close at once; the agent sees the dead process at its next poll.
# - `hang`: a rank stops without any error. Nothing notices until the peer's collective **times out**.
#
# Every process appends timestamped events to one log. The stage boundaries:
#
# | stage | starts at | ends when |
# |---|---|---|
# | detection | `inject` (the failure) | `agent_noticed`: the launcher knows (the peer's `noticed` is kept too) |
# | rescheduling | `agent_noticed` | every rank of the new generation logs `pg_ready` (process started, `import torch`, rendezvous, communicator) |
# | reload | `pg_ready` | every rank logs `state_loaded` |
# | rewound work | `state_loaded` | every rank has again done the step it had done before the failure |
#
# **Predict first:** the job below is killed once and hung once, restarts from checkpoints a few
# steps old, and recomputes those steps. Will its final weights equal those of a run that never
# failed: exactly, to rounding, or not at all?

# %%
kill_step = lab_ckpt_every + lab_ckpt_every // 2 + 1  # mid-interval, after the first checkpoint
hang_step = 3 * lab_ckpt_every + lab_ckpt_every // 2 + 1
failures = [Failure("kill", kill_step, rank=1), Failure("hang", hang_step, rank=0)]

job = LabConfig(steps=lab_steps, ckpt_every=lab_ckpt_every, snapshot="disk")
reference = run_lab(job)
lab = run_lab(job.replace(failures=failures, collective_timeout_s=lab_timeout_s, snapshot=lab_snapshot))
print(f"reference run : no failure, {reference.applied} optimizer steps applied")
print(f"faulty run    : {len(lab.events_of('inject'))} failures injected "
      f"({', '.join(f'{f.kind} at step {f.step}' for f in failures)}), "
      f"{len(lab.restarts)} restarts measured, {lab.applied} optimizer steps applied")

# %% [markdown]
# ## 2. The reliability check: bit-identical, nothing lost, nothing applied twice
#
# `same_final_state` compares every tensor of the two final states with `torch.equal` (bit for bit):
# the parameters, the optimizer's momentum buffers and its settings, and each rank's random-number
# state. The event log adds a stronger check: every step that was computed twice produced the same
# loss on the same rank both times, to the last bit (the log keeps the float32 loss exactly).

# %%
cmp = same_final_state(reference, lab)
print(f"parameters bit-identical      : {cmp['params']}")
print(f"optimizer state bit-identical : {cmp['optimizer']}")
print(f"RNG state of every rank equal : {cmp['rng']}")
print(f"optimizer steps applied       : {cmp['applied'][0]} (reference) vs {cmp['applied'][1]} (faulty)")

first = {}
repeats = mismatches = 0
for e in lab.events_of("step_done"):
    key = (e["step"], e["rank"])
    if key in first:
        repeats += 1
        mismatches += first[key] != e["loss"]
    else:
        first[key] = e["loss"]
print(f"steps recomputed after restarts: {repeats // 2} per rank; losses that differ from the first time: {mismatches}")
assert cmp == {"params": True, "optimizer": True, "rng": True, "applied": (lab_steps, lab_steps), "digest": True}
assert mismatches == 0 and repeats // 2 == sum(m.steps_recomputed for m in lab.restarts)

# %% [markdown]
# Exactly, not to rounding. That needs everything that feeds a step to be restored or recomputable:
# weights, optimizer state, the random stream of each rank, and a data order that is a function of
# the step (not of how many batches a loader has handed out since the process started). Drop any one
# of them from the checkpoint and the resumed run drifts: try it in `job.py` by not restoring the RNG
# state, and this cell fails.
#
# ## 3. The restart, drawn
#
# The black line is the failure; the coloured bands are the four stages of its restart.

# %%
fig, ax = plt.subplots(figsize=(9.0, 4.2))
restart_timeline(lab.events, lab.restarts, ax=ax)
ax.set_title("Progress of rank 0: a kill, then a hang, each followed by a restart")
plt.show()

# %% [markdown]
# **Predict:** which band is the widest after the kill, and which after the hang?
#
# The measured stages (they vary from run to run and from machine to machine, so this cell's output is
# not compared by the course's tests):

# %% tags=["nbval-ignore-output"]
print(f"{'failure':8s} {'detect':>7s} {'resched':>8s} {'reload':>7s} {'rewind':>7s} {'total':>7s}  noticed first by")
for m in lab.restarts:
    s = m.stages_s()
    peer = (f"peer after {m.peer_noticed_s:.2f} s ({m.reason.split(':')[0]})" if m.peer_noticed_s is not None
            else "the agent stopped the peer before its collective failed")
    print(f"{m.kind:8s} {s['detect']:7.2f} {s['reschedule']:8.2f} {s['reload']:7.3f} {s['rewind']:7.2f} {m.total_s:7.2f}"
          f"  {peer}, agent after {m.detect_s:.2f} s")
print("(seconds; rewind = "
      + ", ".join(f"{m.steps_recomputed} steps x {m.step_time_s * 1000:.0f} ms" for m in lab.restarts) + ")")

# %% [markdown]
# The kill is noticed almost at once: the dead rank's socket closes and its peer's all-reduce fails.
# The hang is noticed only when the collective timeout expires, so its detection is the timeout,
# whatever else happens. Both restarts then pay the same rescheduling: new processes, `import torch`,
# rendezvous and the gloo connection, seconds on this machine. Reload is a few milliseconds (a tiny
# model from `/dev/shm`) and the rewind is the steps since the last checkpoint.

# %%
hang = next(m for m in lab.restarts if m.kind == "hang")
kill = next(m for m in lab.restarts if m.kind == "kill")
margin_s = 3.0  # one agent poll plus scheduling delays of a busy machine (the tests use the same)
print(f"hang noticed by a collective timeout : {'Timed out' in hang.reason}")
print(f"hang noticed within timeout + margin : {hang.peer_noticed_s <= lab_timeout_s + margin_s}")
print(f"kill noticed before the timeout      : {kill.detect_s < lab_timeout_s}")
print(f"every restart resumed from           : {sorted({m.reload_source for m in lab.restarts})}")
assert "Timed out" in hang.reason and hang.peer_noticed_s <= lab_timeout_s + margin_s

# %% [markdown]
# ## 4. The toy next to the fleet
#
# [Notebook 03](03-anatomy-of-a-restart.ipynb) split the question's 15 minutes with sourced numbers. Here is the same split measured
# on the hang restart, as the course's `RestartStages` (so [notebook 03](03-anatomy-of-a-restart.ipynb)'s budget can be filled from a
# measurement).

# %% tags=["nbval-ignore-output"]
measured = lab.stages()[lab.restarts.index(hang)]  # RestartStages, minutes
what_sets_it = {
    "detect": "the timeout: a setting, bounded below by the longest legitimate gap between collectives",
    "reschedule": "process start, import, rendezvous, communicators; at scale also replacing a node",
    "reload": "bytes per rank / bandwidth of where the checkpoint lives (shared storage or host memory)",
    "rewind": "half the interval: chosen (notebooks 04-06)",
}
print(f"{'stage':10s} {'this lab (s)':>12s} {'fleet, notebook 03 (min)':>25s}   what sets it")
for stage in rs.STAGES:
    print(f"{stage:10s} {60 * getattr(measured, stage):12.2f} {getattr(fleet, stage):25.2f}   {what_sets_it[stage]}")
print(f"{'total':10s} {60 * measured.total:12.2f} {fleet.total:25.2f}")

# %% [markdown]
# The toy restarts in seconds, the fleet in minutes. The lab's seconds are not a forecast for the
# fleet: two processes on one host have no scheduler, no node to replace, a tiny state and a
# timeout chosen for the lab. What the lab does show is what sets each stage:
#
# - **Detection of a hang is the timeout**, whatever the fleet. What binds the timeout in practice is
#   the longest *legitimate* gap between two collectives: a checkpoint save or load, an evaluation pass,
#   the first step of a compiled model. Set it shorter and a healthy job is killed during one of them.
#   NVIDIA's resiliency extension says as much for its heartbeats: none are sent during checkpoint save and
#   load, so the timeout must cover them [@nvrx-docs]. PyTorch's NCCL default is loaded below from `data/levers.csv`
#   [@pytorch-docs]. Heartbeats ([notebook 03](03-anatomy-of-a-restart.ipynb)'s lever) notice a dead process in seconds; a *hung* one still
#   needs a timeout.
# - **Rescheduling** is process start, `import torch`, rendezvous and communicator set-up here; on a fleet it
#   also replaces a node through the scheduler. How long that takes at scale is an engineering result, not a
#   law: MegaScale cut job initialisation on 2,048 GPUs from over 1,000 s to under 5 s [@megascale].
# - **Reload** is the bytes each rank reads over the bandwidth of wherever the checkpoint lives: shared
#   storage is shared by every reader, host or peer memory is local to each GPU.
# - **Rewound work** is half the checkpoint interval: it is chosen, and notebooks 04-06 choose it.

# %%
nccl_timeout = sourced("levers.csv")["nccl_collective_timeout"]
print(f"NCCL collective timeout default: {nccl_timeout.value:g} {nccl_timeout.unit}  ({nccl_timeout.source})")

# %% [markdown]
# ## 5. The levers, measured: default-like vs tuned
#
# Each lever of the lab is a field of `LabConfig`: the collective timeout, the launcher's monitor
# interval (how often torchrun's agent polls its workers), the checkpoint interval, and reload from the
# `/dev/shm` snapshot (host memory that outlives the worker processes) instead of disk (with the file
# dropped from the page cache, so the read really hits the device). The committed benchmark
# (`benchmarks/faultlab_bench.py`, table in `benchmarks/results/faultlab_restart.md`) measured a
# mid-interval failure several times with each setting on one machine. Fleet-scale defaults are minutes,
# so it scales them by one factor to finish in about a minute; process start, rendezvous and reload are
# measured as they are.
#
# "Default-like" means the values a fleet runs with, scaled, and one of them stands in for a different
# mechanism. The collective timeout stands for NCCL's default. The 30 s agent poll is *not* torchrun's
# default: torchrun's `--monitor-interval` is 0.1 s in torch 2.13 [@torchrun-source], so the agent sees a worker
# that exits on a live node almost at once. The benchmark stretches the poll to stand for a **cluster health
# check** (the 5-minute check of `data/restart_stages.csv`, scaled [@kokolis2025]), which is another mechanism: it
# finds dead or broken *nodes*, whose agent died with them and can report nothing. The lab has only the agent,
# so it uses the agent's poll to play the health check.
#
# **Predict:** tuned, which stage is left as the largest?

# %%
bench = load_benchmark()
print(f"fleet-scale times scaled by 1/{bench.scale:g}")
print(f"{'lever':28s} {'default-like':>14s} {'tuned':>10s}")
for key, label in [("collective_timeout_s", "collective timeout (s)"), ("monitor_interval_s", "health check (agent poll, s)"),
                   ("interval_s", "checkpoint interval (s)"), ("snapshot", "reload from")]:
    d, t = bench.settings["default-like"][key], bench.settings["tuned"][key]
    print(f"{label:28s} {d!s:>14s} {t!s:>10s}")
rows = {f"{sc}, {st}": bench.stages(sc, st) for sc in ("hang", "kill") for st in ("default-like", "tuned")}
for name, st in rows.items():
    print(f"{name:20s} " + "  ".join(f"{k} {v:6.2f}" for k, v in st.items()) + f"  total {sum(st.values()):6.2f} s")
for sc, r in bench.ratios.items():
    print(f"{sc}: tuned is {r:.1f}x faster (median restart time, {bench.medians[(sc, 'tuned')]['reps']} repeats each)")

# %% [markdown]
# One lever at a time, from the default-like setting (hang scenario): what does each save on its own?

# %%
base = bench.medians[("hang", "default-like")]["total_s"]
for (sc, st), row in bench.medians.items():
    if st.startswith("default-like, tuned "):
        lever = st.removeprefix("default-like, tuned ")
        print(f"tune only {lever:22s}: restart {row['total_s']:6.1f} s (saves {base - row['total_s']:6.1f} s of {base:.1f})")
reload_disk = bench.medians[("hang", "default-like")]["reload"]
reload_mem = bench.medians[("hang", "tuned")]["reload"]
print(f"reload: disk {reload_disk:.2f} s vs /dev/shm {reload_mem:.2f} s for the benchmark's state")

# %% [markdown]
# The timeout and the interval each save a large share; the shorter poll (the health check's stand-in) saves
# the wait for the next look; the reload source saves nothing here: this machine's local disk reads the benchmark's state about as fast as memory,
# and checksum verification and deserialisation dominate. That lever pays when the state is large and
# the storage is shared by thousands of readers (section 4), not on one host.

# %%
fig, ax = plt.subplots(figsize=(9.0, 3.2))
stage_bars_seconds(rows, ax=ax)
ax.set_title("Median restart time on the benchmark machine", pad=30)
plt.show()

# %% [markdown]
# Tuned, what is left is rescheduling: a new process, `import torch`, the rendezvous and the
# communicator. No setting of the four removes it, and it sets a ceiling on the speed-up. In symbols,
# with detection $T$ (timeout) plus half a poll $m/2$, rescheduling $S$, reload $L$ and rewind $\tau/2$,
# scale every lever by $k$:

# %%
T, m, S, L, tau, k = sp.symbols("T m S L tau k", positive=True)
restart = k * (T + m / 2 + L + tau / 2) + S
ceiling = sp.limit((T + m / 2 + L + tau / 2 + S) / restart, k, 0)
assert sp.simplify(ceiling - (T + m / 2 + L + tau / 2 + S) / S) == 0
print(f"restart(k) = {restart}")
print(f"speed-up as k -> 0: {ceiling}")
d = bench.medians[("hang", "default-like")]
ceiling_here = d["total_s"] / bench.medians[("hang", "tuned")]["reschedule"]
print(f"on the benchmark machine: at most {ceiling_here:.0f}x for the hang (measured {bench.ratios['hang']:.1f}x)")

# %% [markdown]
# What no setting removes from a *process* restart is the process restart itself. That is why the field goes further
# than tuning: in-process restart (NVIDIA's resiliency extension keeps the processes and their CUDA
# contexts) and not restarting everyone at all (hot spares, per-step fault tolerance). [Notebook 08](08-the-floor.ipynb)
# makes failures x (detection + restart) the floor of the whole question.
#
# ## 6. Look closer
#
# The same timeline, zoomed on one restart (static call first, then the slider):

# %%
fig, ax = plt.subplots(figsize=(9.0, 4.0))
restart_timeline(lab.events, lab.restarts, ax=ax, zoom=len(lab.restarts) - 1)
plt.show()


# %% tags=["nbval-ignore-output", "skip-execution"]
def show_restart(restart_index=0):
    fig, ax = plt.subplots(figsize=(9.0, 4.0))
    restart_timeline(lab.events, lab.restarts, ax=ax, zoom=restart_index)
    plt.show()


_ = interact(show_restart, restart_index=IntSlider(value=0, min=0, max=len(lab.restarts) - 1, description="restart shown (0 = first)",
                                                   style={"description_width": "initial"}, continuous_update=False))

# %% [markdown]
# **Try it**
# - Set `lab_timeout_s = 6.0` and rerun: which band grows, and by how much?
# - Set `lab_snapshot = "disk"`: does the reload band change for this tiny state? (The benchmark adds
#   64 MiB of state to make the difference visible.)
# - Add `Failure("kill_in_ckpt", 3 * lab_ckpt_every)` to `failures`: the writer dies halfway through a
#   checkpoint. Which checkpoint does the restart load, and is the result still bit-identical?
# - Set `lab_ckpt_every = 2`: what happens to the rewind band?
#
# ## The answer table
#
# The measured stages of this run's hang restart go into the course's answer table (they vary by
# machine, so this cell's output is not compared):

# %% tags=["nbval-ignore-output"]
nb = "07-fault-injection-lab"
for stage in rs.STAGES:
    ledger.record(nb, f"lab_{stage}_s", f"lab hang restart: {stage}", 60 * getattr(measured, stage), "s", ".2f")
ledger.record(nb, "lab_restart_s", "lab hang restart: failure -> back at step", 60 * measured.total, "s", ".2f")
print(ledger.table())

# %%
_ = ledger.record(nb, "lab_bit_identical", "killed + hung run bit-identical to uninterrupted (1 = yes)",
              float(cmp["params"] and cmp["optimizer"]), "", ".0f")
_ = ledger.record(nb, "lab_tuned_speedup", "tuned vs default-like restart (hang, benchmark)", bench.ratios["hang"], "x", ".1f")

# %% [markdown]
# ## Summary

# %%
print(
    f"A job killed and hung mid-training resumed from its checkpoints and ended bit-identical to one that never failed "
    f"({cmp['applied'][1]} optimizer steps, parameters and optimizer state equal: {cmp['params'] and cmp['optimizer']}). "
    f"Measured from its event log, a restart is detection + rescheduling + reload + rewind; tuning the timeout, the poll, "
    f"the interval and the reload source made the hang restart {bench.ratios['hang']:.1f}x faster on the benchmark machine, "
    f"down to the process restart itself ({bench.medians[('hang', 'tuned')]['reschedule']:.1f} s of "
    f"{bench.medians[('hang', 'tuned')]['total_s']:.1f} s)."
)

# %% [markdown]
# **Exercises:** [exercises/07-fault-injection-lab-ex.ipynb](../exercises/07-fault-injection-lab-ex.ipynb) practises this notebook (about 20 minutes; a check names your mistake, and the worked [solutions](../solutions/07-fault-injection-lab-sol.ipynb) are there after your own attempt).
#
# **Next:** [notebook 08](08-the-floor.ipynb) takes what no checkpoint trick removes, failures x (detection + restart), and
# makes it the floor of the question.
