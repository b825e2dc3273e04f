# %% [markdown]
# # 12 · The interview drill: the follow-ups, answered with your own numbers
#
# **The question.** *A 4,096-GPU training run loses about 2 % of every day to restarts (two a day,
# about 15 minutes each). Fix it, and say where the floor is.* [Notebook 09](09-your-fleet.ipynb) gave the whole answer
# and [the answer sheet](../ANSWER_SHEET.md) a 2- and a 10-minute version of it. An interview does not stop there: the
# first answer is followed by questions that probe whether you understand it. This notebook rehearses that
# conversation. First the four things the answer is scored on, each as a number you type in and a check that
# names your likely mistake; then the follow-ups a senior interviewer asks, each with a model answer whose every
# number is computed for the scenario in the parameters cell, and a link to the notebook that derives it.
#
# **Learning objectives**
# - Give the four scoring points in your own numbers: the stages of one restart in minutes, the largest term first with what it buys, the trade between interval and write cost, and the floor set by the failure rate.
# - Answer the follow-ups (hangs and timeouts, the step bound, a lost host, hot spares, scale, silent corruption, ETTR, measuring the stages, crash loops, correlated failures, in-process restart) with numbers, not adjectives.
# - Rerun the drill for another fleet and see which answers change.
#
# **Time:** 40 minutes. **Prerequisites:** notebooks [03](03-anatomy-of-a-restart.ipynb) (stages and levers), 04-06 (the interval and
# write costs), [08](08-the-floor.ipynb) (the floor) and [09](09-your-fleet.ipynb) (your fleet).
#
# **Run it for your own numbers:** the parameters cell takes the same names as every notebook, so
# `make course PARAMS="n_gpus=16384"` or
# `papermill notebooks/12-interview-drill.ipynb out.ipynb -p n_gpus 16384 -p observed_failures 60 -p observed_days 7`
# drills you on that fleet; the checks and the model answers change with it.

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
from course_lib import Scenario, drill, ledger
from course_lib.answer import SPEAKING_WORDS_PER_MIN, answer, spoken_length
from course_lib.check import nb12

scenario = Scenario.from_namespace(globals())  # the parameters above: the fleet you are drilled on
ans = answer(scenario)
b, f = ans.baseline, ans.after
print(f"{scenario.n_gpus:,} GPUs at {scenario.rate_per_gpu_day:.3e} failures per GPU-day: {b.failures_per_day:.2f} failures a day, "
      f"MTBF {b.mtbf_min:.0f} min")
print(f"one restart: {b.stages.total:.2f} min observed; detect {b.stages.detect:.2f} min, reload {b.stages.reload:.2f} min, "
      f"checkpoint every {b.interval_min:g} min")
print(f"today's synchronous checkpoint write: {60 * ans.write_cost_before_min:.3g} s blocking")

# %% [markdown]
# ## 1. The four scoring points
#
# An interviewer scores the answer on four things. Answer each in the numbers printed above (and the ones
# each task names), type the number in place of `None`, and run the cell: the check says *Correct* or
# *Not yet* and names the likely mistake. Each is graded at this notebook's scenario, so after a
# `-p n_gpus 16384` run your answers must be that fleet's.
#
# ### Scoring point 1 · Decompose the loss per failure into named stages
#
# One restart is detection + rescheduling + reload + rewound work. Detection and reload are printed above;
# the mean rewind is half the checkpoint interval ([notebook 00](00-the-question.ipynb)); rescheduling is what the
# observed minutes per restart leave ([notebook 03](03-anatomy-of-a-restart.ipynb)).
#
# **Task.** How many minutes of one restart are rescheduling (tear down, replace the node, restart, rebuild
# communicators)? **Answer:** minutes, within 1 %.

# %%
my_reschedule_min = None  # type your number (minutes per restart)
nb12.reschedule_stage(my_reschedule_min, scenario)

# %% [markdown]
# ### Scoring point 2 · Attack the largest term first
#
# Each minute of a stage costs $\lambda$ minutes a day, so the stages rank by their minutes. The four levers
# of [notebook 03](03-anatomy-of-a-restart.ipynb): heartbeat detection (a hang at a tuned timeout instead of NCCL's ten minutes, a
# lost host at a heartbeat; a crash is already seen within the launcher's poll), a hot-spare restart (kept only where it
# saves more than its idle GPUs cost), the reload from host memory and an in-memory checkpoint at its optimal interval.
#
# **Task.** Applied first to the baseline, how many minutes a day does the lever that saves most save?
# (`ans.steps` holds the waterfall if you want to check your reasoning afterwards.) **Answer:** minutes per day, within 1 %.

# %%
my_first_lever_min_per_day = None  # type your number (minutes per day)
nb12.first_lever_saving(my_first_lever_min_per_day, scenario)

# %% [markdown]
# ### Scoring point 3 · The interval and the write cost trade against each other
#
# A shorter interval rewinds less per failure and writes more often: the waste
# $\delta/\tau + (\tau/2 + R)/M$ is smallest at Young's $\tau^* = \sqrt{2\delta M}$ ([notebook 04](04-optimal-interval.ipynb)).
#
# **Task.** With today's synchronous write (its blocking seconds and the MTBF are printed above), what is the
# optimal checkpoint interval? (Young's $\sqrt{2\delta M}$ is within 1 % of the day model's optimum here.)
# **Answer:** minutes, within 1 %.

# %%
my_interval_min = None  # type your number (minutes)
nb12.young_interval_before(my_interval_min, scenario)

# %% [markdown]
# ### Scoring point 4 · The residual set by the failure rate itself
#
# After every lever each failure still pays detection, restart and reload, half a step (a checkpoint cannot be
# taken more often than once a step) and, for a silent corruption, the rewind past its latency to the persisted
# checkpoint ([notebook 08](08-the-floor.ipynb)). Per failure, share-weighted over the failure modes:

# %%
from course_lib import floor as fl

print("after the levers, minutes per failure: " + ", ".join(f"{t.symbol} {t.per_failure_min:.3f}" for t in fl.terms(f)))

# %% [markdown]
# **Task.** What is the floor, the minutes a day that no checkpoint lever removes? **Answer:** minutes per day, within 1 %.

# %%
my_floor_min_per_day = None  # type your number (minutes per day)
nb12.floor_after_levers(my_floor_min_per_day, scenario)

# %% [markdown]
# ## 2. The first answer
#
# The answer you give in two minutes: what the loss is, the stages of a restart largest first, the levers largest
# first with what each saves and the tool that does it, and the floor with its range. About a dozen numbers, each
# at two significant figures: that is what a listener keeps. It is generated from the same numbers by
# `course_lib.answer` ([notebook 09](09-your-fleet.ipynb)); the written answer below it carries every stage, lever
# and floor term, and the [answer sheet](../ANSWER_SHEET.md) has a 10-minute version too.
# Say yours aloud first (or type it into `my_first_answer`), then open the model answer and compare.

# %%
my_first_answer = ""  # your first answer, in two minutes; then run the cell
drill.reveal("**The first answer**, as you say it in two minutes:", ans.spoken, answered=my_first_answer)

# %%
words, numbers, minutes = spoken_length(ans.spoken)
print(f"{words} words ({minutes:.1f} minutes at {SPEAKING_WORDS_PER_MIN} words a minute) and {numbers} numbers")
print("\nThe written answer, every stage, lever and floor term:\n" + ans.written)

# %% [markdown]
# ## 3. The follow-ups
#
# Each follow-up is what a senior interviewer asks next. Answer it first, in two minutes and with numbers:
# aloud, or typed into the cell's `my_answer` (run the cell and your answer stays above the model answer);
# then open the folded model answer and compare. Every number in it is computed by `course_lib` for this
# notebook's scenario, and the link names the notebook that derives it. The answer sheet's follow-ups
# section is generated from the same source (`course_lib.drill`), at the course's scenario.

# %% [markdown]
# ### The largest term first

# %%
my_answer = ""  # your answer first: say it aloud within two minutes, or type it here; then run the cell
drill.ask("largest_first", scenario, answered=my_answer)

# %% [markdown]
# ### Detection, hangs and the hang timeout

# %%
my_answer = ""  # your answer first: say it aloud within two minutes, or type it here; then run the cell
drill.ask("detection_and_hangs", scenario, answered=my_answer)

# %% [markdown]
# ### Why not checkpoint every step?

# %%
my_answer = ""  # your answer first: say it aloud within two minutes, or type it here; then run the cell
drill.ask("checkpoint_every_step", scenario, answered=my_answer)

# %% [markdown]
# ### When the host dies

# %%
my_answer = ""  # your answer first: say it aloud within two minutes, or type it here; then run the cell
drill.ask("host_dies", scenario, answered=my_answer)

# %% [markdown]
# ### Is an idle hot spare worth it?

# %%
my_answer = ""  # your answer first: say it aloud within two minutes, or type it here; then run the cell
drill.ask("hot_spare", scenario, answered=my_answer)

# %% [markdown]
# ### A bigger fleet, a worse failure rate

# %%
my_answer = ""  # your answer first: say it aloud within two minutes, or type it here; then run the cell
drill.ask("fleet_and_rate", scenario, answered=my_answer)

# %% [markdown]
# ### The floor, and what moves it

# %%
my_answer = ""  # your answer first: say it aloud within two minutes, or type it here; then run the cell
drill.ask("floor", scenario, answered=my_answer)

# %% [markdown]
# ### Silent data corruption

# %%
my_answer = ""  # your answer first: say it aloud within two minutes, or type it here; then run the cell
drill.ask("silent_corruption", scenario, answered=my_answer)

# %% [markdown]
# ### Restart the whole job at all?

# %%
my_answer = ""  # your answer first: say it aloud within two minutes, or type it here; then run the cell
drill.ask("per_step_ft", scenario, answered=my_answer)

# %% [markdown]
# ### Restart-only ETTR against a reported one

# %%
my_answer = ""  # your answer first: say it aloud within two minutes, or type it here; then run the cell
drill.ask("ettr_gap", scenario, answered=my_answer)

# %% [markdown]
# ### How sure are you?

# %%
my_answer = ""  # your answer first: say it aloud within two minutes, or type it here; then run the cell
drill.ask("how_sure", scenario, answered=my_answer)

# %% [markdown]
# ### The write cost of a short interval

# %%
my_answer = ""  # your answer first: say it aloud within two minutes, or type it here; then run the cell
drill.ask("write_cost_for_interval", scenario, answered=my_answer)

# %% [markdown]
# ### Measure the stages first

# %%
my_answer = ""  # your answer first: say it aloud within two minutes, or type it here; then run the cell
drill.ask("measure_stages", scenario, answered=my_answer)

# %% [markdown]
# ### Restarting onto the same bad node

# %%
my_answer = ""  # your answer first: say it aloud within two minutes, or type it here; then run the cell
drill.ask("same_bad_node", scenario, answered=my_answer)

# %% [markdown]
# ### A switch takes the spare and two buddy pairs

# %%
my_answer = ""  # your answer first: say it aloud within two minutes, or type it here; then run the cell
drill.ask("correlated_failures", scenario, answered=my_answer)

# %% [markdown]
# ### Eight GPUs copying at once, and memory a dead process pinned

# %%
my_answer = ""  # your answer first: say it aloud within two minutes, or type it here; then run the cell
drill.ask("eight_gpus_copy", scenario, answered=my_answer)

# %% [markdown]
# ### In-process restart: the first lever on R

# %%
my_answer = ""  # your answer first: say it aloud within two minutes, or type it here; then run the cell
drill.ask("in_process_restart", scenario, answered=my_answer)

# %% [markdown]
# ### Planned maintenance

# %%
my_answer = ""  # your answer first: say it aloud within two minutes, or type it here; then run the cell
drill.ask("planned_maintenance", scenario, answered=my_answer)

# %% [markdown]
# ### Faster than the hang timeout

# %%
my_answer = ""  # your answer first: say it aloud within two minutes, or type it here; then run the cell
drill.ask("faster_detection", scenario, answered=my_answer)

# %% [markdown]
# ### What it is worth, and where the next engineer goes

# %%
my_answer = ""  # your answer first: say it aloud within two minutes, or type it here; then run the cell
drill.ask("cost_priority", scenario, answered=my_answer)

# %% [markdown]
# ### The 15 minutes, read another way

# %%
my_answer = ""  # your answer first: say it aloud within two minutes, or type it here; then run the cell
drill.ask("fifteen_minutes_read_another_way", scenario, answered=my_answer)

# %% [markdown]
# ## Summary

# %%
nb = "12-interview-drill"
ledger.record(nb, "floor_minutes_per_day", "floor", f.floor_minutes_per_day, "min/day", ".2f")
asked = drill.follow_ups(scenario)
print(f"{len(asked)} follow-ups answered for {scenario.n_gpus:,} GPUs.")
drill.reveal("**The four scoring points in one line** (open it once you have answered them above):",
             f"One restart is {b.stages.total:.1f} min (reschedule {b.stages.reschedule:.2f}); {ans.order[0]} first saves "
             f"{ans.steps[0].saved_minutes_per_day:.2f} min a day; the synchronous write's optimal interval is {ans.interval_before_min:.2f} min "
             f"({ans.interval_after_min:.2f} with the snapshot); the floor is {f.floor_minutes_per_day:.2f} min a day ({f.floor_fraction:.3%}).")

# %% [markdown]
# **Exercises:** [exercises/12-interview-drill-ex.ipynb](../exercises/12-interview-drill-ex.ipynb) works the four scoring points
# out with `course_lib` instead of by hand (about 20 minutes; worked [solutions](../solutions/12-interview-drill-sol.ipynb)).
# The whole answer for the course's fleet, with these follow-ups, is in [the answer sheet](../ANSWER_SHEET.md).
#
# **Next:** [notebook 13](13-your-incident-log.ipynb) takes a real fault log and tests the model's assumptions behind every number here.
