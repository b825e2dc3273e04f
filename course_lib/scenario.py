"""The one input record: every number the course's answer needs, held once.

*A 4,096-GPU training run loses about 2 % of every day to restarts (two a day, about
15 minutes each). Fix it, and say where the floor is.*

Every entry point builds exactly one :class:`Scenario` and passes it down: each notebook's
papermill parameters cell (:meth:`Scenario.from_params`, the same names in every notebook),
the budget CLI, the dashboard, notebook 09, ``scripts/run_course.py`` and the self-checks.
Notebook 00 explains the question's numbers and the baseline checkpoint interval: the 15
minutes of a restart include the rewound work (on average half a checkpoint interval), so
the course assumes a 10-minute baseline interval; an hourly interval would rewind 30 minutes
on its own and could not fit in 15.

Units: every time is in **minutes** (fields end in ``_min``), the failure rate is per
**GPU-day**, sizes are in parameters and **bytes**, bandwidths in **GB/s** (1e9 bytes/s).
Defaults that are numbers about the outside world come from ``data/`` (:func:`defaults`),
never from literals here; the question's own numbers (4,096 GPUs, two failures a day,
15 minutes) are the question.
"""
from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field, fields

from . import failures, sizing
from ._validate import Validated, check_int_positive, check_non_negative, check_positive, checked
from .units import MINUTES_PER_DAY

__all__ = ["Scenario", "MINUTES_PER_DAY", "QUESTION", "defaults", "PARAMETERS", "PARAMETER_NOTES", "parameters_block"]

#: The question's own numbers (given, not sourced): fleet, failures a day, minutes a restart.
QUESTION = {"n_gpus": 4096, "failures_per_day": 2.0, "minutes_per_restart": 15.0, "checkpoint_interval_min": 10.0}


@functools.lru_cache(maxsize=None)
def _defaults_cached(data_dir) -> dict:
    from .data import sourced

    stages = sourced("restart_stages.csv", "stage", data_dir)
    lev = sourced("levers.csv", "key", data_dir)
    step = sourced("training_step.csv", "key", data_dir)
    ranges = sourced("restart_ranges.csv", "key", data_dir)
    wc = sourced("write_costs.csv", "regime", data_dir, value="bandwidth_gb_per_s")
    return {
        "detect_min": stages["detect"].minutes,
        "reload_min": stages["reload"].minutes,
        "model_params": lev["model_params"].value,
        "checkpoint_bytes_per_param": step["ckpt_bytes_per_param"].value,
        "persist_gb_per_s": wc["torch_save_local"].value,
        "snapshot_gb_per_s": lev["gpu_to_host_pinned"].value,
        "restore_gb_per_s": lev["host_to_gpu_pinned"].value,
        "detect_after_min": lev["heartbeat_check_interval"].minutes,
        "reschedule_after_min": ranges["flashrecovery_restore_4800"].minutes,
    }


def defaults(data_dir=None) -> dict:
    """The sourced default of every Scenario field that is a number about the outside world.

    detect 5 min (a health-check period) and reload 129.5 s (a 405B load), from
    data/restart_stages.csv; the checkpoint content, 12 bytes per parameter (fp32 master weights
    and two Adam moments; not ZeRO's 16 B/param of training memory), from data/training_step.csv;
    the 405B model, the heartbeat
    detection target and the pinned host<->GPU bandwidths, from
    data/levers.csv; the torch.save + fsync bandwidth, from data/write_costs.csv; the
    hot-spare restart target, end to end (FlashRecovery's 150 s on 4,800 devices; MegaScale's
    "< 30 s" is job initialisation, not failure-to-training), from data/restart_ranges.csv.
    """
    return dict(_defaults_cached(None if data_dir is None else str(data_dir)))


def _sourced(name: str):
    return field(default_factory=lambda: defaults()[name])


def _int(name, value):
    return check_int_positive(name, value)


@dataclass(frozen=True)
class Scenario(Validated):
    """The course's running example and every input of its answer.

    The question
        n_gpus: GPUs in the job (4,096).
        rate_per_gpu_day: failures per GPU-day (the question's 2 a day on 4,096 GPUs). A new
            fleet size keeps it, so failures per day scale with ``n_gpus``.
        minutes_per_restart: the observed minutes per restart, rewound work included (15); the
            reschedule stage is its remainder unless ``reschedule_min`` is given.
        checkpoint_interval_min: the baseline checkpoint interval (10; the mean rewind is half).
    One restart today (minutes; notebook 03)
        detect_min, reload_min: sourced (data/restart_stages.csv).
        reschedule_min: None: ``minutes_per_restart`` minus the other three stages.
    The checkpoint (notebooks 05 and 06)
        model_params, checkpoint_bytes_per_param: the state each checkpoint saves, sharded over
            the fleet (data/levers.csv; 12 B/param of checkpoint content, data/training_step.csv).
        state_gb_per_gpu: checkpoint GB (1e9 bytes) per GPU, if you know it; None: the model's
            state split over ``n_gpus`` (so a bigger fleet has a smaller shard).
        persist_gb_per_s: the synchronous write path (torch.save + fsync to local disk).
        write_cost_min: blocking minutes of today's synchronous checkpoint; None: the shard at
            ``persist_gb_per_s``.
    The levers' targets (notebooks 03 and 08)
        detect_after_min, reschedule_after_min: heartbeat detection, hot-spare restart.
        snapshot_gb_per_s, restore_gb_per_s: GPU -> pinned host and back (the in-memory
            snapshot and the reload from memory).
        snapshot_cost_min, reload_after_min: None: the shard over those bandwidths.
    """

    n_gpus: int = checked(_int, default=QUESTION["n_gpus"])
    rate_per_gpu_day: float = checked(check_positive, default=QUESTION["failures_per_day"] / QUESTION["n_gpus"])
    minutes_per_restart: float | None = checked(check_positive, optional=True, default=QUESTION["minutes_per_restart"])
    checkpoint_interval_min: float = checked(check_positive, default=QUESTION["checkpoint_interval_min"])
    detect_min: float = checked(check_non_negative, default_factory=lambda: defaults()["detect_min"])
    reschedule_min: float | None = checked(check_non_negative, default=None)
    reload_min: float = checked(check_non_negative, default_factory=lambda: defaults()["reload_min"])
    model_params: float = checked(check_positive, default_factory=lambda: defaults()["model_params"])
    checkpoint_bytes_per_param: float = checked(check_positive, default_factory=lambda: defaults()["checkpoint_bytes_per_param"])
    state_gb_per_gpu: float | None = checked(check_positive, default=None)
    persist_gb_per_s: float = checked(check_positive, default_factory=lambda: defaults()["persist_gb_per_s"])
    write_cost_min: float | None = checked(check_positive, default=None)
    detect_after_min: float = checked(check_non_negative, default_factory=lambda: defaults()["detect_after_min"])
    reschedule_after_min: float = checked(check_non_negative, default_factory=lambda: defaults()["reschedule_after_min"])
    snapshot_gb_per_s: float = checked(check_positive, default_factory=lambda: defaults()["snapshot_gb_per_s"])
    restore_gb_per_s: float = checked(check_positive, default_factory=lambda: defaults()["restore_gb_per_s"])
    snapshot_cost_min: float | None = checked(check_positive, default=None)
    reload_after_min: float | None = checked(check_non_negative, default=None)

    def _validate_fields(self) -> None:
        stages = self.detect_min + self.reload_min + self.mean_rewind_min
        if self.reschedule_min is None:
            if self.minutes_per_restart is None:
                raise ValueError("minutes_per_restart must be given when reschedule_min is None (reschedule is its remainder)")
            if self.minutes_per_restart < stages - 1e-12:
                raise ValueError(
                    f"minutes_per_restart must be >= detect + reload + rewind = {self.detect_min:g} + {self.reload_min:g} + "
                    f"{self.mean_rewind_min:g} = {stages:g} min (got {self.minutes_per_restart!r}); shorten "
                    "checkpoint_interval_min or lengthen minutes_per_restart"
                )
        elif self.minutes_per_restart is not None and abs(stages + self.reschedule_min - self.minutes_per_restart) > 1e-9:
            raise ValueError(
                f"minutes_per_restart must equal detect + reschedule + reload + rewind = {stages + self.reschedule_min:g} min "
                f"when reschedule_min is given (got {self.minutes_per_restart!r}); pass minutes_per_restart=None"
            )

    # ----- the fleet (one formula each, in course_lib.failures) -----
    @property
    def failures_per_day(self) -> float:
        """n_gpus x rate_per_gpu_day."""
        return failures.failures_per_day(self.n_gpus, self.rate_per_gpu_day)

    @property
    def mtbf_min(self) -> float:
        """Job MTBF in minutes."""
        return failures.mtbf_min(self.failures_per_day)

    @property
    def fleet_mtbf_hours(self) -> float:
        """Job MTBF in hours."""
        return failures.fleet_mtbf_hours(self.n_gpus, self.rate_per_gpu_day)

    # ----- one restart -----
    @property
    def mean_rewind_min(self) -> float:
        """Mean rewound work per failure: half the checkpoint interval."""
        return self.checkpoint_interval_min / 2.0

    @property
    def baseline_reschedule_min(self) -> float:
        """The reschedule stage: given, or the remainder of minutes_per_restart."""
        if self.reschedule_min is not None:
            return self.reschedule_min
        rest = self.minutes_per_restart - self.detect_min - self.reload_min - self.mean_rewind_min
        return max(rest, 0.0)  # a remainder within rounding of zero

    @property
    def restart_total_min(self) -> float:
        """Minutes per restart, all four stages (the question's 15)."""
        return self.detect_min + self.baseline_reschedule_min + self.reload_min + self.mean_rewind_min

    @property
    def minutes_lost_per_day(self) -> float:
        """failures/day x minutes/restart (the question's 30 min; writes not counted)."""
        return self.failures_per_day * self.restart_total_min

    @property
    def loss_fraction(self) -> float:
        """Fraction of the day lost to restarts (the question's ~2 %)."""
        return self.minutes_lost_per_day / MINUTES_PER_DAY

    # ----- the checkpoint -----
    @property
    def shard_bytes(self) -> float:
        """Checkpoint bytes per GPU: state_gb_per_gpu, or model_params x checkpoint_bytes_per_param / n_gpus."""
        if self.state_gb_per_gpu is not None:
            return self.state_gb_per_gpu * sizing.GB
        return sizing.shard_bytes(self.model_params, self.checkpoint_bytes_per_param, self.n_gpus)

    @property
    def write_before_min(self) -> float:
        """Blocking minutes of today's synchronous checkpoint (given, or the shard at persist_gb_per_s)."""
        if self.write_cost_min is not None:
            return self.write_cost_min
        return sizing.copy_min(self.shard_bytes, self.persist_gb_per_s)

    @property
    def snapshot_min(self) -> float:
        """Blocking minutes of the in-memory snapshot (given, or the shard at snapshot_gb_per_s)."""
        if self.snapshot_cost_min is not None:
            return self.snapshot_cost_min
        return sizing.copy_min(self.shard_bytes, self.snapshot_gb_per_s)

    @property
    def reload_from_memory_min(self) -> float:
        """Minutes to reload the shard from host memory (given, or the shard at restore_gb_per_s)."""
        if self.reload_after_min is not None:
            return self.reload_after_min
        return sizing.copy_min(self.shard_bytes, self.restore_gb_per_s)

    # ----- copies -----
    def replace(self, **changes) -> "Scenario":
        """A copy with some fields changed; ``None`` values are ignored (papermill's "keep").

        Besides the fields, it takes the failure rate in the two other forms a person has it:
        ``failures_per_day`` (of the whole job, at the new ``n_gpus`` if one is given), or
        ``observed_failures`` over ``observed_days`` on ``n_gpus`` GPUs (a count from a log).
        A new ``n_gpus`` keeps the per-GPU rate, so failures per day scale with the fleet. A
        stage given (detect, reschedule, reload, or the interval that sets the rewind) changes
        the minutes per restart, which become the sum of the stages; the stages not given keep
        their minutes. Only a new ``minutes_per_restart`` alone re-splits the remainder into
        the reschedule stage (the question's way: 15 minutes observed, three stages sourced).
        """
        changes = {k: v for k, v in changes.items() if v is not None}
        names = {f.name for f in fields(self)}
        rate_forms = [k for k in ("rate_per_gpu_day", "failures_per_day", "observed_failures") if k in changes]
        if len(rate_forms) > 1:
            raise ValueError(f"{' and '.join(rate_forms)}: give the failure rate in one form, not {len(rate_forms)}")
        n = check_int_positive("n_gpus", changes.get("n_gpus", self.n_gpus))
        if "failures_per_day" in changes:
            changes["rate_per_gpu_day"] = check_positive("failures_per_day", changes.pop("failures_per_day")) / n
        if "observed_failures" in changes or "observed_days" in changes:
            if "observed_failures" not in changes or "observed_days" not in changes:
                raise ValueError("observed_failures and observed_days must be given together")
            events, days = changes.pop("observed_failures"), changes.pop("observed_days")
            if events == 0:
                raise ValueError("observed_failures must be >= 1 to estimate a rate (got 0)")
            changes["rate_per_gpu_day"] = failures.rate_per_gpu_day(events, n, days)
        if "minutes_per_restart" not in changes and (
                "reschedule_min" in changes or {"detect_min", "reload_min", "checkpoint_interval_min"} & set(changes)):
            # a stage a person sets changes the minutes per restart; the stages not given keep their minutes
            changes.setdefault("reschedule_min", self.baseline_reschedule_min)
            changes["minutes_per_restart"] = None
        unknown = set(changes) - names
        if unknown:
            raise ValueError(f"Scenario has no input {sorted(unknown)}; its inputs are {sorted(PARAMETERS)}")
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_params(cls, **params) -> "Scenario":
        """The course's Scenario with a notebook's parameters applied (``None`` keeps a value)."""
        return cls().replace(**params)

    @classmethod
    def from_namespace(cls, namespace: dict) -> "Scenario":
        """The Scenario of a notebook's parameters cell: every name of :data:`PARAMETERS` it holds."""
        return cls.from_params(**{k: namespace[k] for k in PARAMETERS if k in namespace})


#: The names a notebook's parameters cell may set (the same in every notebook), with what each means.
PARAMETER_NOTES = {
    "n_gpus": "GPUs in the job (4,096)",
    "rate_per_gpu_day": "failures per GPU-day (the question's 2 a day on 4,096 GPUs) ...",
    "failures_per_day": "... or failures per day of the whole job ...",
    "observed_failures": "... or failures counted in a log, over observed_days on n_gpus GPUs",
    "observed_days": "days the log covers",
    "minutes_per_restart": "the question's 15 minutes per restart, rewound work included",
    "checkpoint_interval_min": "the baseline checkpoint interval (10 min)",
    "detect_min": "minutes to notice a failure (a 5-minute health check)",
    "reschedule_min": "minutes to tear down, replace and restart (None: the rest of the 15)",
    "reload_min": "minutes to read the checkpoint back (ByteCheckpoint's 405B load)",
    "model_params": "parameters of the model (Llama 3 405B)",
    "checkpoint_bytes_per_param": "checkpoint bytes per parameter (12: saved content; 14 with bf16 weights)",
    "state_gb_per_gpu": "checkpoint GB per GPU (None: the model's state split over the fleet)",
    "persist_gb_per_s": "GB/s of today's synchronous write (torch.save + fsync, measured)",
    "write_cost_min": "blocking minutes of today's checkpoint (None: the shard at that speed)",
    "detect_after_min": "detection with a per-rank heartbeat (5 s)",
    "reschedule_after_min": "restart on a hot spare, end to end (150 s)",
    "snapshot_gb_per_s": "GB/s of the GPU -> pinned host snapshot (measured)",
    "restore_gb_per_s": "GB/s of the pinned host -> GPU reload (measured)",
    "snapshot_cost_min": "blocking minutes of the in-memory snapshot (None: the shard at that speed)",
    "reload_after_min": "minutes to reload from host memory (None: the shard at that speed)",
}
PARAMETERS = tuple(PARAMETER_NOTES)
assert set(PARAMETERS) == {f.name for f in fields(Scenario)} | {"failures_per_day", "observed_failures", "observed_days"}


def parameters_block() -> str:
    """The lines every notebook's papermill parameters cell starts with (tests/test_notebooks_committed.py)."""
    lines = ["# The scenario: the same names in every notebook (None keeps the course's value);",
             "# `make course --param KEY=VALUE` or papermill `-p KEY VALUE` changes every notebook at once."]
    lines += [f"{name} = None  # {note}" for name, note in PARAMETER_NOTES.items()]
    return "\n".join(lines)
