"""The one input record: every number the course's answer needs, held once (the input wing).

*A 4,096-GPU training run loses about 2 % of every day to restarts (two a day, about
15 minutes each). Fix it, and say where the floor is.*

Every entry point builds exactly one :class:`Scenario` and passes it down: each notebook's
papermill parameters cell (:meth:`Scenario.from_params`, the same names in every notebook), the
budget CLI (one flag per name, ``course_lib.__main__``), the dashboard (its sliders carry the same
names), notebook 09, ``scripts/run_course.py`` and the self-checks. The names are
:data:`PARAMETERS`, generated from the three records below, so the three edges cannot drift apart.

The record composes two nested records with defaults, the way QuantEcon's ``Kalman(ss)`` holds
its state space:

- :class:`ModeInputs`: how each failure mode (crash, hang, host loss, silent data corruption)
  presents and is detected, the training step, the spare (notebooks 03, 06, 08);
- :class:`ReplicaInputs`: per-step fault tolerance across replica groups (notebook 10).

A name that a person may give or leave to the course (``shard_gb``, ``write_cost_min``,
``snapshot_cost_min``, ``reload_after_min``, ``reschedule_min``, ``detect_min``,
``reschedule_after_min``, ``minutes_per_restart``, ``lemon_factor``; ``hang_timeout_min`` and
``tflops_per_gpu`` of the modes) is **one field, resolved once at construction**: ``None`` means
"computed from the others", and after construction the field holds the number either way
(``Scenario().shard_gb`` is 1.19). A copy made with :meth:`Scenario.replace` (or
``dataclasses.replace``) recomputes the resolved values it was not given, so a new fleet gets its
own shard and its own step.

Notebook 00 explains the question's numbers and the baseline checkpoint interval: the 15 minutes
of a restart include the rewound work (on average half a checkpoint interval), so the course
assumes a 10-minute baseline interval (an assumption: an hourly interval would rewind 30 minutes
on its own and could not fit in 15).

Units: every time is in **minutes** (fields end in ``_min``), the failure rate is per **GPU-day**,
sizes are in parameters and **GB** (1e9 bytes), bandwidths in **GB/s**. Defaults that are numbers
about the outside world come from ``data/`` (:func:`defaults`, read and verified once per process
and data folder), never from literals here; the question's own numbers (4,096 GPUs, two failures a
day, 15 minutes) are the question, and the course's assumptions about it are named in
:data:`ASSUMED`.
"""
from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass, field, fields

from . import failures, sizing
from ._validate import (Validated, check_int_positive, check_non_negative, check_positive, check_unit_interval,
                        checked)
from .units import MINUTES_PER_DAY

__all__ = ["Scenario", "ModeInputs", "ReplicaInputs", "MODES", "MINUTES_PER_DAY", "QUESTION", "ASSUMED", "defaults",
           "PARAMETERS", "PARAMETER_NOTES", "ALTERNATIVE_FORMS", "parameters_block", "shares_with_hang"]

#: The failure modes, in the order of data/failure_modes.csv.
MODES = ("crash", "hang", "host_loss", "sdc")

#: The question's own numbers (given, not sourced): fleet, failures a day, minutes a restart.
QUESTION = {"n_gpus": 4096, "failures_per_day": 2.0, "minutes_per_restart": 15.0}

#: The course's assumptions about the question (stated where they are spoken, never sourced): the
#: baseline checkpoint interval inside the 15 minutes, and the days over which "two a day" was
#: counted (a month: 60 failures, whose Poisson interval is the rate's uncertainty).
ASSUMED = {"checkpoint_interval_min": 10.0, "observed_days": 30.0}


# --------------------------------------------------------------------------------------
# Sourced defaults: read and verified once per data folder
# --------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def _defaults_cached(data_dir) -> dict:
    from .data import load_table, mode_shares, sourced
    from .units import to_minutes

    stages = sourced("restart_stages.csv", "stage", data_dir)
    lev = sourced("levers.csv", "key", data_dir)
    step = sourced("training_step.csv", "key", data_dir)
    rr = sourced("restart_ranges.csv", "key", data_dir)
    wc = sourced("write_costs.csv", "regime", data_dir, value="bandwidth_gb_per_s")
    shares = mode_shares(data_dir)
    lab = {r["key"]: r for r in load_table("replica_lab.csv", data_dir).rows}
    scaled = {k: to_minutes(float(r["value"]) * float(r["scale"]), r["unit"]) for k, r in lab.items() if r["unit"] != "x"}
    return {
        # the Scenario
        "reload_min": stages["reload"].minutes,
        "model_params": lev["model_params"].value,
        "checkpoint_bytes_per_param": step["ckpt_bytes_per_param"].value,
        "persist_gb_per_s": wc["torch_save_local"].value,
        "snapshot_gb_per_s": lev["gpu_to_host_pinned"].value,
        "restore_gb_per_s": lev["host_to_gpu_pinned"].value,
        "restart_after_min": rr["flashrecovery_restore_4800"].minutes,
        # the reschedule's range (notebook 15): a tuned Slurm's measured share and a fleet's fastest start-up; Kokolis' re-queue
        "reschedule_low_min": _tuned_scheduler_min(data_dir) + rr["megascale_init_2048_after"].minutes,
        "requeue_low_min": rr["kokolis_u0_low"].minutes,
        # the failure modes
        "shares": tuple(shares[m]["central"] for m in MODES),
        "launcher_poll_min": rr["torchrun_monitor_interval"].minutes,
        "rank_monitor_poll_min": rr["nvrx_workload_check_interval"].minutes,
        "safety_factor": rr["nvrx_safety_factor"].value,
        "untuned_hang_timeout_min": rr["nccl_collective_timeout"].minutes,
        "health_check_min": stages["detect"].minutes,
        "host_heartbeat_min": rr["nvrx_inprocess_heartbeat_timeout"].minutes,
        "sdc_latency_min": rr["sdc_detection_central"].minutes,
        "tokens_per_step": step["llama3_405b_tokens_per_batch"].value,
        "spare_gpus": step["llama3_gpus_per_server"].value,
        "replica_gpus": step["llama3_tensor_parallel"].value * step["llama3_pipeline_parallel"].value,
        # per-step fault tolerance
        "stall_min": scaled["ftlab_survivor_stall"],
        "rejoin_min": scaled["ftlab_rejoin"],
        # the rate lever (measured on the InfiniteHBD trace and clamped, course_lib.levers)
        "lemon_factor": _lemon_default(data_dir),
    }


def _tuned_scheduler_min(data_dir):
    from pathlib import Path

    from .data import DATA_DIR
    from .requeue import read_runs, scheduler_share_s

    return scheduler_share_s(read_runs(Path(data_dir or DATA_DIR) / "slurm_requeue.csv"), "tuned") / 60.0


def _lemon_default(data_dir):
    from .failures import lemon_node_factor

    return lemon_node_factor(data_dir)


def defaults(data_dir=None) -> dict:
    """The sourced default of every input that is a number about the outside world (a copy).

    restart_stages.csv: the 5-minute health-check period and the 129.5 s reload of a 405B
    checkpoint (ByteCheckpoint); training_step.csv: 12 bytes of checkpoint content per parameter
    (fp32 master weights and two Adam moments, not ZeRO's 16 B of training memory), Llama 3's step
    (16M tokens) and server (8 GPUs) and replica (TP 8 x PP 16 = 128 GPUs); levers.csv: the 405B
    model and the pinned host<->GPU bandwidths; write_costs.csv: the torch.save + fsync bandwidth;
    restart_ranges.csv: torchrun's 0.1 s monitor interval (crash detection), NVRx's 5 s rank-monitor
    period and safety factor 5 (hangs), NCCL's 10-minute collective timeout (an untuned hang), NVRx
    in-process restart's 30 s heartbeat timeout (a lost host), the assumed 1 h SDC latency and
    FlashRecovery's 150 s end to end (the in-job restart), MegaScale's 5 s job initialisation and Kokolis et al.'s
    5-minute re-queue (the reschedule's range, with slurm_requeue.csv: the scheduler lab's tuned share; the re-queue
    is ``requeue_low_min``, not a field: ``reschedule_high_min`` is resolved from it less ``reload_min``);
    failure_modes.csv: the mode shares;
    replica_lab.csv: the torchft lab's stall and rejoin at fleet scale. Read and checksum-verified
    once per process and data folder.
    """
    return dict(_defaults_cached(None if data_dir is None else str(data_dir)))


def _sourced(name):
    return lambda: _defaults_cached(None)[name]


# --------------------------------------------------------------------------------------
# Field checks
# --------------------------------------------------------------------------------------
def _shares(name, value):
    try:
        arr = tuple(float(check_non_negative(f"{name}[{m}]", v)) for m, v in zip(MODES, value))
        n = len(tuple(value))
    except TypeError:
        raise ValueError(f"{name} must be {len(MODES)} shares ({', '.join(MODES)}) in [0, 1] summing to 1 (got {value!r})") from None
    if n != len(MODES) or any(v > 1 for v in arr) or not math.isclose(sum(arr), 1.0, abs_tol=1e-9):
        raise ValueError(f"{name} must be {len(MODES)} shares ({', '.join(MODES)}) in [0, 1] summing to 1 (got {value!r})")
    return arr


def _at_least_one(name, value):
    x = check_positive(name, value)
    if x < 1:
        raise ValueError(f"{name} must be a finite number >= 1 (got {value!r}): a timeout below the longest gap kills healthy steps")
    return x


def _bool(name, value):
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be True or False (got {value!r})")
    return value


def _factor(name, value):
    x = check_positive(name, value)
    if x > 1:
        raise ValueError(f"{name} must be a finite number in (0, 1] (got {value!r}): a measured factor above 1 means "
                         "removal did not lower the rate, so give 1 (no gain)")
    return x


def shares_with_hang(shares, hang_share):
    """The shares with the hang share set to ``hang_share`` (a number or an array), the others rescaled to sum to 1."""
    import numpy as np

    base = np.asarray(shares, dtype=float)
    h = np.asarray(hang_share, dtype=float)
    i = MODES.index("hang")
    rest = 1.0 - base[i]
    out = base * ((1.0 - h[..., None]) / rest)
    out[..., i] = h
    return out


# --------------------------------------------------------------------------------------
# The nested records
# --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ModeInputs(Validated):
    """How the failures present and how soon each is seen (notebooks 03, 06, 08), part of the :class:`Scenario`.

    shares: crash, hang, host_loss, sdc shares of the failures (data/failure_modes.csv: Llama 3's
        Table 5 mapped to modes, the mapping mostly the course's judgement; 39 % hang).
    launcher_poll_min: the launcher's monitor interval (torchrun ``--monitor-interval`` 0.1 s): a crash
        (the process exits) is seen by its agent and, through the rendezvous round it opens, by the
        other nodes' agents at their next poll: half a poll each, one poll in all.
    rank_monitor_poll_min: NVRx's ``workload_check_interval`` (5 s): the period at which each rank
        monitor evaluates its rank's heartbeat and section *timeouts*; it detects hangs (half a period
        after the timeout), never crashes.
    safety_factor: a tuned hang timeout over the longest legitimate gap between heartbeats (NVRx 5).
    hang_timeout_min: the tuned hang timeout; None: ``safety_factor x max(step, blocking snapshot)``.
    untuned_hang_timeout_min: the baseline's hang detection, NCCL's default collective timeout (10 min).
    health_check_min: the cluster health-check period (5 min): the baseline sees a lost host half a
        period later (a dead host opens no rendezvous round and tells nobody).
    host_heartbeat_min: after the levers a lost host is seen by a cross-node heartbeat (NVRx in-process
        restart's ``heartbeat_timeout``, 30 s).
    sdc_latency_min: work done between a silent data corruption and its detection (an assumption, 1 h).
    tokens_per_step, tflops_per_gpu: the step (Llama 3 Table 4; tflops None: Table 4's configuration
        nearest the fleet).
    peer_copy: a peer holds the snapshot too, so a host loss restores from memory.
    spare_gpus, spares_pooled: the hot spare's GPUs (one 8-GPU server) and whether other jobs use them.
    replica_gpus: GPUs of one data-parallel replica (TP 8 x PP 16).
    """

    shares: tuple = checked(_shares, default_factory=_sourced("shares"))
    launcher_poll_min: float = checked(check_positive, default_factory=_sourced("launcher_poll_min"))
    rank_monitor_poll_min: float = checked(check_positive, default_factory=_sourced("rank_monitor_poll_min"))
    safety_factor: float = checked(_at_least_one, default_factory=_sourced("safety_factor"))
    hang_timeout_min: float | None = checked(check_positive, default=None)
    untuned_hang_timeout_min: float = checked(check_positive, default_factory=_sourced("untuned_hang_timeout_min"))
    health_check_min: float = checked(check_positive, default_factory=_sourced("health_check_min"))
    host_heartbeat_min: float = checked(check_positive, default_factory=_sourced("host_heartbeat_min"))
    sdc_latency_min: float = checked(check_non_negative, default_factory=_sourced("sdc_latency_min"))
    tokens_per_step: float = checked(check_positive, default_factory=_sourced("tokens_per_step"))
    tflops_per_gpu: float | None = checked(check_positive, default=None)
    peer_copy: bool = checked(_bool, default=True)
    spare_gpus: float = checked(check_non_negative, default_factory=_sourced("spare_gpus"))
    spares_pooled: bool = checked(_bool, default=False)
    replica_gpus: float = checked(check_positive, default_factory=_sourced("replica_gpus"))

    def share(self, mode: str) -> float:
        """The share of failures that present as ``mode``."""
        return self.shares[MODES.index(mode)]


@dataclass(frozen=True)
class ReplicaInputs(Validated):
    """Per-step fault tolerance across replica groups (notebook 10), part of the :class:`Scenario` (minutes).

    groups: replica groups ``G``; None: one per data-parallel replica, ``n_gpus / replica_gpus``.
    stall_min: the survivors' stall per failure for the quorum change (the mode's detection excluded).
    rejoin_min: the failed group's restart and weight recovery from a peer, until it commits again.
    Defaults: the course's own torchft lab measurement x notebook 07's scale factor 10
    (data/replica_lab.csv; tests/test_replicas.py ties it to benchmarks/results/ftlab_compare.json).
    """

    groups: int | None = checked(check_int_positive, default=None)
    stall_min: float = checked(check_non_negative, default_factory=_sourced("stall_min"))
    rejoin_min: float = checked(check_non_negative, default_factory=_sourced("rejoin_min"))

    def _validate_fields(self) -> None:
        if self.rejoin_min < self.stall_min:
            raise ValueError(f"rejoin_min must be a finite number >= stall_min = {self.stall_min:g} (the rejoining group "
                             f"waits for the quorum change too; got {self.rejoin_min!r})")


# --------------------------------------------------------------------------------------
# The Scenario
# --------------------------------------------------------------------------------------
def _int(name, value):
    return check_int_positive(name, value)


def _modes(name, value):
    if not isinstance(value, ModeInputs):
        raise ValueError(f"{name} must be a ModeInputs (got {type(value).__name__})")
    return value


def _replicas(name, value):
    if not isinstance(value, ReplicaInputs):
        raise ValueError(f"{name} must be a ReplicaInputs (got {type(value).__name__})")
    return value


#: Fields resolved at construction when ``None`` (the record's own and its modes', as "modes.<name>").
_RESOLVED = ("shard_gb", "write_cost_min", "snapshot_cost_min", "reload_after_min", "modes.tflops_per_gpu",
             "modes.hang_timeout_min", "detect_min", "reschedule_min", "minutes_per_restart", "reschedule_after_min",
             "reschedule_low_min", "reschedule_high_min", "lemon_factor")


@dataclass(frozen=True)
class Scenario(Validated):
    """The course's running example and every input of its answer.

    The question
        n_gpus: GPUs in the job (4,096).
        rate_per_gpu_day: failures per GPU-day (the question's 2 a day on 4,096 GPUs); a new fleet
            size keeps it, so failures per day scale with ``n_gpus``.
        observed_days: the days over which the rate was counted (assumed 30 for the question); the
            count ``failures_per_day x observed_days`` sets the rate's Poisson uncertainty.
        minutes_per_restart: the observed minutes per restart, rewound work included (15); the
            reschedule stage is its remainder unless ``reschedule_min`` is given (then None: the sum).
        checkpoint_interval_min: the baseline checkpoint interval (assumed 10; the mean rewind is half).
    One restart today (minutes; notebook 03), per failure mode
        detect_min: None: each mode's own (a crash at the launcher's poll, a hang at NCCL's untuned
            10-minute timeout, a lost host at half a 5-minute health-check period); given: every mode's.
            Resolved: the share-weighted mean.
        reschedule_min: None: ``minutes_per_restart`` less the other stages.
        reschedule_low_min, reschedule_high_min: the reschedule's range, which the floor's uncertainty
            samples (notebooks 08 and 15). None: low, the scheduler's share of a requeue measured on the
            course's Slurm lab at tuned settings (seconds: ``SlurmdTimeout`` and ``cred_expire`` at their
            smallest) plus the fastest published start-up of a large job (MegaScale's 5 s on 2,048 GPUs);
            high, Kokolis et al.'s re-queue at its low end (5 min, rescheduling and re-initialising)
            less ``reload_min`` (not below 0): the reschedule that re-queue leaves. A resolved low end is never
            above the high end; a given one above it is refused.
        reload_min: reading the persisted checkpoint back (sourced).
    The checkpoint (notebooks 05 and 06)
        model_params, checkpoint_bytes_per_param: the state a checkpoint saves.
        shard_gb: checkpoint GB per GPU; None: the model's state split over ``n_gpus``.
        persist_gb_per_s: the synchronous write path (torch.save + fsync to local disk).
        write_cost_min: blocking minutes of today's synchronous checkpoint; None: the shard at
            ``persist_gb_per_s``.
    The levers' targets (notebooks 03 and 08)
        restart_after_min: an in-job restart on a hot spare, end to end for a crash (failure to
            training, rewind excluded): FlashRecovery's 150 s on 4,800 devices.
        reschedule_after_min: the reschedule stage of that restart; None: ``restart_after_min`` less
            the crash's detection and the reload from memory it contains.
        snapshot_gb_per_s, restore_gb_per_s: GPU -> pinned host and back.
        snapshot_cost_min, reload_after_min: None: the shard over those bandwidths.
        lemon_factor: the failure rate after removing lemon nodes, as a factor in (0, 1]; None: the
            course's, measured out of sample on the InfiniteHBD trace and clamped at 1 (removal bought
            nothing there; :func:`course_lib.failures.lemon_node_factor`). A factor measured on your own
            fault log replaces it here (above 1 give 1: removal that did not lower the rate buys nothing).
    modes: :class:`ModeInputs`; replicas: :class:`ReplicaInputs`.
    """

    n_gpus: int = checked(_int, default=QUESTION["n_gpus"])
    rate_per_gpu_day: float = checked(check_positive, default=QUESTION["failures_per_day"] / QUESTION["n_gpus"])
    observed_days: float = checked(check_positive, default=ASSUMED["observed_days"])
    minutes_per_restart: float | None = checked(check_positive, optional=True, default=QUESTION["minutes_per_restart"])
    checkpoint_interval_min: float = checked(check_positive, default=ASSUMED["checkpoint_interval_min"])
    detect_min: float | None = checked(check_non_negative, default=None)
    reschedule_min: float | None = checked(check_non_negative, default=None)
    reload_min: float = checked(check_non_negative, default_factory=_sourced("reload_min"))
    model_params: float = checked(check_positive, default_factory=_sourced("model_params"))
    checkpoint_bytes_per_param: float = checked(check_positive, default_factory=_sourced("checkpoint_bytes_per_param"))
    shard_gb: float | None = checked(check_positive, default=None)
    persist_gb_per_s: float = checked(check_positive, default_factory=_sourced("persist_gb_per_s"))
    write_cost_min: float | None = checked(check_positive, default=None)
    restart_after_min: float = checked(check_non_negative, default_factory=_sourced("restart_after_min"))
    reschedule_after_min: float | None = checked(check_non_negative, default=None)
    reschedule_low_min: float | None = checked(check_non_negative, default=None)
    reschedule_high_min: float | None = checked(check_non_negative, default=None)
    snapshot_gb_per_s: float = checked(check_positive, default_factory=_sourced("snapshot_gb_per_s"))
    restore_gb_per_s: float = checked(check_positive, default_factory=_sourced("restore_gb_per_s"))
    snapshot_cost_min: float | None = checked(check_positive, default=None)
    reload_after_min: float | None = checked(check_non_negative, default=None)
    lemon_factor: float | None = checked(_factor, default=None)
    modes: ModeInputs = checked(_modes, default_factory=ModeInputs)
    replicas: ReplicaInputs = checked(_replicas, default_factory=ReplicaInputs)
    _resolved: dict | None = field(default=None, compare=False, repr=False)

    # ----- resolution (once, at construction) -----
    def _validate_fields(self) -> None:
        from . import step as st

        old = self._resolved or {}
        done: dict = {}
        object.__setattr__(self, "_resolved", done)  # filled as each value is resolved

        def put(name, value):
            done[name] = value
            if name.startswith("modes."):
                object.__setattr__(self, "modes", dataclasses.replace(self.modes, **{name[6:]: value}))
            else:
                object.__setattr__(self, name, value)

        # a copy recomputes every value its original resolved and nobody gave since
        for name in _RESOLVED:
            value = self._get(name)
            if value is not None and name in old and old[name] == value:
                if name.startswith("modes."):
                    object.__setattr__(self, "modes", dataclasses.replace(self.modes, **{name[6:]: None}))
                else:
                    object.__setattr__(self, name, None)
        if self.shard_gb is None:
            put("shard_gb", sizing.shard_bytes(self.model_params, self.checkpoint_bytes_per_param, self.n_gpus) / sizing.GB)
        gb = self.shard_gb * sizing.GB
        if self.write_cost_min is None:
            put("write_cost_min", sizing.copy_min(gb, self.persist_gb_per_s))
        if self.snapshot_cost_min is None:
            put("snapshot_cost_min", sizing.copy_min(gb, self.snapshot_gb_per_s))
        if self.reload_after_min is None:
            put("reload_after_min", sizing.copy_min(gb, self.restore_gb_per_s))
        if self.modes.tflops_per_gpu is None:
            put("modes.tflops_per_gpu", st.default_tflops_per_gpu(self.n_gpus))
        step = self.step_min
        if self.modes.hang_timeout_min is None:
            put("modes.hang_timeout_min", self.modes.safety_factor * max(step, self.snapshot_cost_min))
        elif self.modes.hang_timeout_min <= step:
            raise ValueError(f"hang_timeout_min must be > the step time {step:.3g} min (got {self.modes.hang_timeout_min!r}): "
                             "a timeout shorter than a healthy step kills every step")
        if self.detect_min is None:
            put("detect_min", sum(self.modes.share(k) * v for k, v in self.detect_by_mode.items()))
        rest = self.detect_min + self.reload_min + self.mean_rewind_min
        if self.reschedule_min is None:
            if self.minutes_per_restart is None:
                raise ValueError("minutes_per_restart must be given when reschedule_min is None (reschedule is its remainder)")
            if self.minutes_per_restart < rest - 1e-9:
                raise ValueError(
                    f"minutes_per_restart must be >= detect + reload + rewind = {self.detect_min:.3g} + {self.reload_min:.3g} + "
                    f"{self.mean_rewind_min:.3g} = {rest:.3g} min (got {self.minutes_per_restart!r}); shorten "
                    "checkpoint_interval_min, lengthen minutes_per_restart, or give reschedule_min")
            put("reschedule_min", max(self.minutes_per_restart - rest, 0.0))
        elif self.minutes_per_restart is None:
            put("minutes_per_restart", rest + self.reschedule_min)
        elif abs(rest + self.reschedule_min - self.minutes_per_restart) > 1e-9:
            raise ValueError(
                f"minutes_per_restart must equal detect + reschedule + reload + rewind = {rest + self.reschedule_min:.4g} min "
                f"when reschedule_min is given (got {self.minutes_per_restart!r}); pass minutes_per_restart=None")
        if self.reschedule_after_min is None:
            inside = self.detect_after_by_mode["crash"] + self.reload_after_min
            put("reschedule_after_min", max(self.restart_after_min - inside, 0.0))
        if self.reschedule_high_min is None:
            put("reschedule_high_min", max(_defaults_cached(None)["requeue_low_min"] - self.reload_min, 0.0))
        if self.reschedule_low_min is None:  # never above the high end (a reload longer than the re-queue)
            put("reschedule_low_min", min(_defaults_cached(None)["reschedule_low_min"], self.reschedule_high_min))
        if self.reschedule_low_min > self.reschedule_high_min:
            raise ValueError(f"reschedule_low_min must be <= reschedule_high_min = {self.reschedule_high_min:.4g} min "
                             f"(got {self.reschedule_low_min!r})")
        if self.lemon_factor is None:
            put("lemon_factor", _defaults_cached(None)["lemon_factor"])
        most = max(int(self.n_gpus // self.modes.replica_gpus), 1)
        if self.replicas.groups is not None and self.replicas.groups > most:
            raise ValueError(f"groups must be an integer in [1, {most}] (n_gpus / replica_gpus = {self.n_gpus:g} / "
                             f"{self.modes.replica_gpus:g}: each group holds a whole replica; got {self.replicas.groups})")

    def _get(self, name):
        return getattr(self.modes, name[6:]) if name.startswith("modes.") else getattr(self, name)

    @property
    def given(self) -> frozenset:
        """The resolvable inputs a person gave (the others the course computed)."""
        return frozenset(n for n in _RESOLVED if n not in (self._resolved or {}))

    # ----- the fleet (one formula each, in course_lib.failures) -----
    @property
    def failures_per_day(self) -> float:
        """n_gpus x rate_per_gpu_day."""
        return failures.failures_per_day(self.n_gpus, self.rate_per_gpu_day)

    @property
    def observed_failures(self) -> float:
        """The count the rate rests on: failures per day x ``observed_days`` (60 for the question)."""
        return self.failures_per_day * self.observed_days

    @property
    def mtbf_min(self) -> float:
        """Job MTBF in minutes."""
        return failures.mtbf_min(self.failures_per_day)

    @property
    def fleet_mtbf_hours(self) -> float:
        """Job MTBF in hours."""
        return failures.fleet_mtbf_hours(self.n_gpus, self.rate_per_gpu_day)

    # ----- the step and the hang timeout (notebooks 03, 06) -----
    @property
    def step_min(self) -> float:
        """The training step of this model on this fleet, ``6 N D / (G F)`` (:func:`course_lib.step.step_time_min`)."""
        from . import step as st

        return st.step_time_min(self.model_params, self.modes.tokens_per_step, self.n_gpus, self.modes.tflops_per_gpu)

    @property
    def hang_timeout_min(self) -> float:
        """The tuned hang timeout (``modes.hang_timeout_min``, resolved)."""
        return self.modes.hang_timeout_min

    # ----- detection per mode -----
    @property
    def detect_by_mode(self) -> dict[str, float]:
        """Baseline detection per mode (minutes): ``detect_min`` for every mode if given, else each mode's own.

        crash and sdc (once a check flags it, the process exits): one launcher poll (half on the
        failing node, half on its peers when the rendezvous round opens); hang: NCCL's untuned
        collective timeout, then that poll; host loss: half a health-check period.
        """
        if "detect_min" not in (self._resolved or {}) and self.detect_min is not None:
            return {k: self.detect_min for k in MODES}
        m = self.modes
        crash = m.launcher_poll_min
        return {"crash": crash, "hang": m.untuned_hang_timeout_min + crash, "host_loss": m.health_check_min / 2.0,
                "sdc": crash}

    @property
    def detect_after_by_mode(self) -> dict[str, float]:
        """Detection per mode once the detection lever is pulled (minutes).

        crash and sdc: unchanged (the launcher already sees an exit within a poll); hang: the tuned
        timeout, half a rank-monitor period (the monitor evaluates it every 5 s), then the launcher's
        poll; host loss: a cross-node heartbeat timeout. Never slower than the baseline's.
        """
        m, base = self.modes, self.detect_by_mode
        crash = m.launcher_poll_min
        after = {"crash": crash, "hang": m.hang_timeout_min + m.rank_monitor_poll_min / 2.0 + crash,
                 "host_loss": m.host_heartbeat_min, "sdc": crash}
        return {k: min(after[k], base[k]) for k in MODES}

    # ----- one restart -----
    @property
    def mean_rewind_min(self) -> float:
        """Mean rewound work per failure at the baseline: half the interval, plus the SDC share x its latency."""
        return self.checkpoint_interval_min / 2.0 + self.modes.share("sdc") * self.modes.sdc_latency_min

    @property
    def minutes_lost_per_day(self) -> float:
        """Minutes a day the baseline's restarts take (writes not counted): failures/day x minutes/restart, at most the day."""
        return MINUTES_PER_DAY * self.loss_fraction

    @property
    def loss_fraction(self) -> float:
        """Share of the day the baseline is restarting, ``min(lambda X / day, 1)`` (the question's 2.08 %)."""
        return min(self.failures_per_day * self.minutes_per_restart / MINUTES_PER_DAY, 1.0)

    @property
    def shard_bytes(self) -> float:
        """``shard_gb`` in bytes (for the copy-time formulas of :mod:`course_lib.sizing`)."""
        return self.shard_gb * sizing.GB

    # ----- copies -----
    def replace(self, **changes) -> "Scenario":
        """A copy with some inputs changed; ``None`` values are ignored (papermill's "keep").

        Takes every name of :data:`PARAMETERS`: the Scenario's fields, its modes' and its replicas'
        (routed to the nested record), and the alternative forms of an input: the failure rate as
        ``failures_per_day`` (of the whole job, at the new ``n_gpus`` if one is given) or as
        ``observed_failures`` over ``observed_days`` on ``n_gpus`` GPUs (a count from a log), and the
        mode shares as ``hang_share`` (the others rescaled). A new ``n_gpus`` keeps the per-GPU rate.
        A stage given (detect, reschedule, reload, the interval that sets the rewind, or a mode input that
        moves the baseline's detection or rewind: the shares, a timeout, the health check, the SDC latency)
        changes the minutes per restart, which become the sum of the stages; the stages not given keep
        their minutes (a what-if: the mechanisms that are not changed take as long as before). Only a new
        ``minutes_per_restart`` alone re-splits the remainder into the reschedule stage (the question's
        way: 15 minutes observed, the other stages sourced).
        """
        changes = {k: v for k, v in changes.items() if v is not None}
        unknown = set(changes) - set(PARAMETERS) - {"modes", "replicas"}
        if unknown:
            raise ValueError(f"Scenario has no input {sorted(unknown)}; its inputs are {sorted(PARAMETERS)}")
        rate_forms = [k for k in ("rate_per_gpu_day", "failures_per_day", "observed_failures") if k in changes]
        if len(rate_forms) > 1:
            raise ValueError(f"{' and '.join(rate_forms)}: give the failure rate in one form, not {len(rate_forms)}")
        n = check_int_positive("n_gpus", changes.get("n_gpus", self.n_gpus))
        if "failures_per_day" in changes:
            changes["rate_per_gpu_day"] = check_positive("failures_per_day", changes.pop("failures_per_day")) / n
        if "observed_failures" in changes:
            if "observed_days" not in changes:
                raise ValueError("observed_failures and observed_days must be given together")
            events = changes.pop("observed_failures")
            if isinstance(events, (int, float)) and not isinstance(events, bool) and events == 0:
                raise ValueError("observed_failures must be >= 1 to estimate a rate (got 0)")
            changes["rate_per_gpu_day"] = failures.rate_per_gpu_day(events, n, changes["observed_days"])
        mode_changes = {k: changes.pop(k) for k in list(changes) if k in _MODE_FIELDS}
        replica_changes = {k: changes.pop(k) for k in list(changes) if k in _REPLICA_FIELDS}
        if "hang_share" in changes:
            if "shares" in mode_changes:
                raise ValueError("shares and hang_share: give the mode shares in one form, not 2")
            h = check_unit_interval("hang_share", changes.pop("hang_share"))
            if h == 1.0 and self.modes.share("hang") == 1.0:
                mode_changes["shares"] = self.modes.shares
            else:
                mode_changes["shares"] = tuple(float(x) for x in shares_with_hang(self.modes.shares, h))
        if "minutes_per_restart" not in changes and (
                "reschedule_min" in changes or {"detect_min", "reload_min", "checkpoint_interval_min"} & set(changes)
                or _BASELINE_MODE_FIELDS & set(mode_changes)):
            # a stage a person sets changes the minutes per restart; the stages not given keep their minutes
            changes.setdefault("reschedule_min", self.reschedule_min)
            changes["minutes_per_restart"] = None
        explicit = set(changes) | {f"modes.{k}" for k in mode_changes}
        changes["_resolved"] = {k: v for k, v in (self._resolved or {}).items() if k not in explicit}
        if mode_changes:
            changes["modes"] = dataclasses.replace(changes.get("modes", self.modes), **mode_changes)
        if replica_changes:
            changes["replicas"] = dataclasses.replace(changes.get("replicas", self.replicas), **replica_changes)
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_params(cls, **params) -> "Scenario":
        """The course's Scenario with a notebook's parameters applied (``None`` keeps a value)."""
        return cls().replace(**params)

    @classmethod
    def from_namespace(cls, namespace: dict) -> "Scenario":
        """The Scenario of a notebook's parameters cell: every name of :data:`PARAMETERS` it holds."""
        return cls.from_params(**{k: namespace[k] for k in PARAMETERS if k in namespace})

    def params(self) -> dict:
        """Every input as ``{name: value}`` in the vocabulary of :data:`PARAMETERS` (resolved values included)."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("modes", "replicas", "_resolved")}
        out |= {f.name: getattr(self.modes, f.name) for f in fields(ModeInputs)}
        out |= {f.name: getattr(self.replicas, f.name) for f in fields(ReplicaInputs)}
        return out


_MODE_FIELDS = tuple(f.name for f in fields(ModeInputs))
#: Mode inputs that change the baseline's stages: a change keeps the reschedule and moves the minutes per restart.
_BASELINE_MODE_FIELDS = {"shares", "launcher_poll_min", "untuned_hang_timeout_min", "health_check_min", "sdc_latency_min",
                         "peer_copy"}
_REPLICA_FIELDS = tuple(f.name for f in fields(ReplicaInputs))
_OWN_FIELDS = tuple(f.name for f in fields(Scenario) if f.name not in ("modes", "replicas", "_resolved"))

#: Other forms of an input a person may have instead (Scenario.replace converts them).
ALTERNATIVE_FORMS = {
    "failures_per_day": "... or failures per day of the whole job ...",
    "observed_failures": "... or failures counted in a log over observed_days on n_gpus GPUs",
    "hang_share": "share of failures that hang (the other modes rescaled) instead of shares",
}

#: The names a notebook's parameters cell, a CLI flag or a dashboard slider may set, with what each means.
PARAMETER_NOTES = {
    "n_gpus": "GPUs in the job (4,096)",
    "rate_per_gpu_day": "failures per GPU-day (the question's 2 a day on 4,096 GPUs) ...",
    "failures_per_day": ALTERNATIVE_FORMS["failures_per_day"],
    "observed_failures": ALTERNATIVE_FORMS["observed_failures"],
    "observed_days": "days the rate was counted over (assumed 30: its Poisson uncertainty)",
    "minutes_per_restart": "the question's 15 minutes per restart, rewound work included",
    "checkpoint_interval_min": "the baseline checkpoint interval (assumed 10 min)",
    "detect_min": "minutes to notice a failure (None: per mode; a hang at NCCL's 10 min)",
    "reschedule_min": "minutes to tear down, replace and restart (None: the rest of the 15)",
    "reschedule_low_min": "its range's low end (None: a tuned Slurm's measured share + a 5 s start-up)",
    "reschedule_high_min": "its range's high end (None: Kokolis' 5-min re-queue less the reload)",
    "reload_min": "minutes to read the checkpoint back (ByteCheckpoint's 405B load)",
    "model_params": "parameters of the model (Llama 3 405B)",
    "checkpoint_bytes_per_param": "checkpoint bytes per parameter (12: saved content; 14 with bf16 weights)",
    "shard_gb": "checkpoint GB per GPU (None: the model's state split over the fleet)",
    "persist_gb_per_s": "GB/s of today's synchronous write (torch.save + fsync, measured)",
    "write_cost_min": "blocking minutes of today's checkpoint (None: the shard at that speed)",
    "restart_after_min": "in-job restart on a hot spare, end to end for a crash (FlashRecovery's 150 s)",
    "reschedule_after_min": "its reschedule stage (None: the 150 s less the detection and reload inside it)",
    "snapshot_gb_per_s": "GB/s of the GPU -> pinned host snapshot (measured)",
    "restore_gb_per_s": "GB/s of the pinned host -> GPU reload (measured)",
    "snapshot_cost_min": "blocking minutes of the in-memory snapshot (None: the shard at that speed)",
    "reload_after_min": "minutes to reload from host memory (None: the shard at that speed)",
    "lemon_factor": "failure rate after lemon-node removal, a factor (None: measured on a real trace, clamped at 1)",
    "shares": "crash, hang, host_loss, sdc shares of the failures (Table 5 mapped to modes) ...",
    "hang_share": "... " + ALTERNATIVE_FORMS["hang_share"],
    "launcher_poll_min": "the launcher's monitor interval, crash detection (torchrun 0.1 s)",
    "rank_monitor_poll_min": "NVRx rank monitor's period for evaluating hang timeouts (5 s)",
    "safety_factor": "tuned hang timeout / longest legitimate gap (NVRx 5)",
    "hang_timeout_min": "the tuned hang timeout (None: safety factor x the longest gap)",
    "untuned_hang_timeout_min": "the baseline's hang detection: NCCL's collective timeout (10 min)",
    "health_check_min": "the baseline's health-check period: a lost host is seen half of it later (5 min)",
    "host_heartbeat_min": "a lost host after the levers: a cross-node heartbeat timeout (NVRx 30 s)",
    "sdc_latency_min": "minutes until silent data corruption is noticed (assumed 60)",
    "tokens_per_step": "tokens per training step (Llama 3's 16M)",
    "tflops_per_gpu": "achieved TFLOP/s per GPU (None: Llama 3 Table 4 at the nearest fleet)",
    "peer_copy": "a peer holds the snapshot too (True), so a lost host restores from memory",
    "spare_gpus": "idle hot-spare GPUs (one 8-GPU server)",
    "spares_pooled": "the spares serve other jobs (True): charge them nothing",
    "replica_gpus": "GPUs of one data-parallel replica (TP 8 x PP 16)",
    "groups": "replica groups of per-step fault tolerance (None: one per replica)",
    "stall_min": "survivors' stall per failure with per-step fault tolerance (lab x 10)",
    "rejoin_min": "failed group's rejoin with per-step fault tolerance (lab x 10)",
}
PARAMETERS = tuple(PARAMETER_NOTES)
assert set(PARAMETERS) == set(_OWN_FIELDS) | set(_MODE_FIELDS) | set(_REPLICA_FIELDS) | set(ALTERNATIVE_FORMS), (
    set(PARAMETERS) ^ (set(_OWN_FIELDS) | set(_MODE_FIELDS) | set(_REPLICA_FIELDS) | set(ALTERNATIVE_FORMS)))


def parameters_block() -> str:
    """The lines every notebook's papermill parameters cell starts with (tests/test_scenario_ledger.py)."""
    lines = ["# The scenario: the same names in every notebook (None keeps the course's value);",
             '# `make course PARAMS="n_gpus=16384 rate_per_gpu_day=8.1e-4"` or papermill `-p KEY VALUE` changes every notebook.']
    lines += [f"{name} = None  # {note}" for name, note in PARAMETER_NOTES.items()]
    return "\n".join(lines)
