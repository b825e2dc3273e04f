"""One restart and one day: the course's only model of what failures cost (notebook 03; 08 and 09 use it).

Every unplanned restart costs, in order, **detection** (the job notices), **rescheduling** (tear
down, replace the node, restart processes, rebuild communicators), **reload** (read the last
checkpoint back) and **rewound work** (the steps since that checkpoint: on average half the
checkpoint interval; a silent corruption rewinds further, past its detection latency, to a
persisted checkpoint older than it). The four differ by failure mode (:data:`MODES`): a crash is
seen within a launcher poll, a hang only at a timeout, a lost host takes its memory with it, an SDC
is seen late. A :class:`RestartBudget` holds one day: the failures per day, each mode's stages
(:class:`ModeCost`), the checkpoint interval and its blocking write cost.

The day model (renewal-reward with a wall-clock failure rate)
-------------------------------------------------------------
Failures arrive at ``lambda`` a day; each costs its mode's ``X_k = D_k + S_k + L_k + rewind_k`` minutes
of the job (a failure that strikes while the job is still recovering from another adds its own), so
the job is recovering a share ``rho = min(lambda X / T, 1)`` of the day of ``T`` minutes, ``X`` the
share-weighted mean. Of the rest it trains ``tau / (tau + delta)``: every checkpoint interval ``tau``
of training is followed by a blocking write ``delta``. An idle hot spare wastes a share ``i`` of the
GPUs paid for. The share of the day lost is::

    loss = 1 - (1 - i) (1 - rho) tau / (tau + delta)

``lambda X / T`` plus the writes while ``lambda X`` is below a day: "two a day x 15 min = 30 min" is the
question's own accounting, which the baseline is calibrated to. As a model of the process it is a queue that
charges a failure striking during a recovery its whole ``X`` (a real one restarts the recovery and rewinds
no training), so it is an upper bound on the loss: close to Daly's complete model
(:func:`course_lib.interval.expected_waste`, which the per-event simulator reproduces) while ``lambda X`` is a
small share of the day, and further above it as the share grows (notebook 08 measures the gap). It is never
above 1 (at ``lambda X >= T`` the job never catches up: 100 %), and never more minutes than the day has. The floor is the same day with the
write cost at zero and the interval at one step (a checkpoint cannot be taken more often than once a
step), so ``floor <= after the levers <= baseline <= 100 %`` holds by construction
(tests/test_restart.py checks it over fleets up to 10^7 GPUs and 10^4 failures a day).

The rewind of mode ``k`` is ``tau / 2`` when it restores from the latest checkpoint, and ``tau_p / 2 +
latency_k`` when it must go back to the persisted checkpoint (an SDC, and a lost host whose snapshot no
peer holds): ``tau_p`` is the persisted interval, the same checkpoint as ``tau`` at the baseline and
today's ``checkpoint_interval_min`` once an in-memory snapshot takes over the short interval. The
interval that minimises the loss is :func:`course_lib.interval.best_interval`.

Units: **every time in this module is in minutes**, except where a name says otherwise
(``*_per_day`` is minutes per day). The numbers of the outside world reach it through the
:class:`~course_lib.scenario.Scenario`, never as literals here. The levers that change a day live in
:mod:`course_lib.levers`, the floor's terms in :mod:`course_lib.floor`.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from . import failures
from ._validate import Validated, check_non_negative, checked
from .scenario import MODES, Scenario
from .units import MINUTES_PER_DAY

__all__ = ["STAGES", "MODES", "RestartStages", "ModeCost", "RestartBudget", "day_loss", "baseline_modes",
           "baseline_stages", "baseline_budget"]

#: The four stages of one restart, in the order they happen (the labs' event logs use the same names).
STAGES = ("detect", "reschedule", "reload", "rewind")


def _nonneg(name, value):
    """A number or an array (Monte Carlo draws), finite and >= 0."""
    if type(value) is float and 0.0 <= value < math.inf:  # the common case, fast
        return value
    if np.ndim(value) == 0:
        return check_non_negative(name, float(value))
    arr = np.asarray(value, dtype=float)
    if arr.size and arr.min() >= 0 and arr.max() < math.inf:  # finite and >= 0 (a NaN makes min() NaN): two reductions
        return arr
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError(f"{name} must be finite numbers >= 0 (got {arr[~(np.isfinite(arr) & (arr >= 0))][:1]!r})")
    return arr


def _share(name, value):
    x = _nonneg(name, value)
    if np.any(np.asarray(x) >= 1):
        raise ValueError(f"{name} must be a finite number in [0, 1) (got {value!r})")
    return x


# --------------------------------------------------------------------------------------
# One restart
# --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RestartStages(Validated):
    """Minutes one restart costs, stage by stage (all four in **minutes**, >= 0; means over the modes).

    detect: from the failure until the job knows it failed.
    reschedule: teardown, node replacement, process start, communicator re-initialisation.
    reload: reading the checkpoint back into GPU memory.
    rewind: work since that checkpoint, recomputed (half the interval, plus any rewind past a corruption).
    """

    detect: float = checked(_nonneg)
    reschedule: float = checked(_nonneg)
    reload: float = checked(_nonneg)
    rewind: float = checked(_nonneg)

    @property
    def total(self) -> float:
        """Minutes per restart, all four stages (the question's 15)."""
        return self.detect + self.reschedule + self.reload + self.rewind

    @property
    def restart_cost(self) -> float:
        """detect + reschedule + reload: the ``D + R`` of the floor (minutes)."""
        return self.detect + self.reschedule + self.reload

    def as_dict(self) -> dict[str, float]:
        """{stage: minutes} in the order of :data:`STAGES`."""
        return {name: getattr(self, name) for name in STAGES}

    def replace(self, **changes) -> "RestartStages":
        """A copy with some stages changed (validated)."""
        unknown = set(changes) - set(STAGES)
        if unknown:
            raise ValueError(f"stage must be one of {list(STAGES)} (got {sorted(unknown)})")
        return self._evolve(**changes)


class ModeCost(NamedTuple):
    """One failure mode's share and minutes per failure (numbers, or arrays of Monte Carlo draws).

    latency: work rewound past a corruption, beyond the checkpoint it restores (an SDC's detection
    latency). persisted: it restores the persisted checkpoint, not the latest snapshot (an SDC; a lost
    host whose snapshot no peer holds).
    """

    mode: str
    share: float
    detect: float
    reschedule: float
    reload: float
    latency: float = 0.0
    persisted: bool = False


def _modes(name, value):
    value = tuple(value)
    if not value or not all(isinstance(m, ModeCost) for m in value):
        raise ValueError(f"{name} must be a non-empty sequence of ModeCost (got {value!r})")
    for m in value:
        for f in ("share", "detect", "reschedule", "reload", "latency"):
            _nonneg(f"{name}[{m.mode}].{f}", getattr(m, f))
    shares = [m.share for m in value]
    if all(type(x) is float for x in shares):
        ok = math.isclose(sum(shares), 1.0, abs_tol=1e-9)
    else:  # np.allclose(total, 1.0, atol=1e-9), written out: |total - 1| <= atol + rtol |1| (NaN and inf fail)
        ok = bool(np.all(np.abs(sum(np.asarray(x, dtype=float) for x in shares) - 1.0) <= 1e-9 + 1e-05))
    if not ok:
        total = sum(np.asarray(x, dtype=float) for x in shares)
        raise ValueError(f"{name}: the shares must sum to 1 (got {np.ravel(total)[:1]!r})")
    return value


def day_loss(failures_per_day, per_failure_min, interval_min, write_cost_min, idle_share=0.0):
    """The day model's lost share: ``1 - (1 - i)(1 - min(lambda X / T, 1)) tau / (tau + delta)`` (numbers or arrays)."""
    rho = np.minimum(np.asarray(failures_per_day, dtype=float) * per_failure_min / MINUTES_PER_DAY, 1.0)
    tau = np.asarray(interval_min, dtype=float)
    delta = np.asarray(write_cost_min, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        train = np.where(tau + delta > 0, tau / np.where(tau + delta > 0, tau + delta, 1.0), 1.0)
    out = 1.0 - (1.0 - np.asarray(idle_share, dtype=float)) * (1.0 - rho) * train
    return float(out) if np.ndim(out) == 0 else out


# --------------------------------------------------------------------------------------
# One day
# --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RestartBudget(Validated):
    """One day of the job: failures, each mode's minutes per failure, checkpoints, an idle spare.

    failures_per_day: unplanned failures per day, ``lambda`` (> 0).
    modes: one :class:`ModeCost` per failure mode (shares sum to 1).
    interval_min: the latest checkpoint's interval ``tau`` (minutes of training between checkpoints).
    write_cost_min: the blocking minutes of one checkpoint, ``delta`` (0: free; needs ``tau > 0``).
    persisted_interval_min: the persisted checkpoint's interval ``tau_p``; None: the same checkpoint as
        ``tau`` (the baseline, where every checkpoint is the durable one).
    step_min: the training step (0: not modelled); the floor's interval, one checkpoint a step.
    idle_share: the share of the GPUs paid for that wait as a hot spare (0 if none or pooled).
    interval_bound_min: None: the interval is a given one; else it was chosen at its optimum above
        this bound, and is chosen again when the failure rate changes (:func:`course_lib.levers.fewer_failures`).
    """

    failures_per_day: float = checked(_nonneg)
    modes: tuple = checked(_modes)
    interval_min: float = checked(_nonneg)
    write_cost_min: float = checked(_nonneg, default=0.0)
    persisted_interval_min: float | None = checked(_nonneg, default=None)
    step_min: float = checked(_nonneg, default=0.0)
    idle_share: float = checked(_share, default=0.0)
    interval_bound_min: float | None = checked(_nonneg, default=None)

    def _validate_fields(self) -> None:
        lam, tau, delta = self.failures_per_day, self.interval_min, self.write_cost_min
        if type(lam) is float and type(tau) is float and type(delta) is float:  # the common case, fast: the same rules
            if lam <= 0:
                raise ValueError(f"failures_per_day must be a finite number > 0 (got {lam!r})")
            if delta > 0 and tau == 0:
                raise ValueError("write_cost_min must be 0 when interval_min is 0 (a zero interval would write continuously)")
            return
        if np.any(np.asarray(self.failures_per_day) <= 0):
            raise ValueError(f"failures_per_day must be a finite number > 0 (got {self.failures_per_day!r})")
        if np.any((np.asarray(self.write_cost_min) > 0) & (np.asarray(self.interval_min) == 0)):
            raise ValueError("write_cost_min must be 0 when interval_min is 0 (a zero interval would write continuously)")

    # ----- constructors and copies -----
    @classmethod
    def single(cls, failures_per_day, stages: RestartStages, write_cost_min: float = 0.0, step_min: float = 0.0) -> "RestartBudget":
        """A day with one failure mode whose restart is ``stages`` (the interval is twice its rewind)."""
        if not isinstance(stages, RestartStages):
            raise ValueError(f"stages must be a RestartStages (got {type(stages).__name__})")
        mode = ModeCost("any", 1.0, stages.detect, stages.reschedule, stages.reload)
        return cls(failures_per_day, (mode,), 2.0 * stages.rewind, write_cost_min, step_min=step_min)

    def with_modes(self, **per_stage) -> "RestartBudget":
        """A copy whose modes have some stages replaced: ``{stage: {mode: minutes}}`` or ``{stage: minutes}`` (every mode)."""
        modes = []
        for m in self.modes:
            changes = {}
            for stage, value in per_stage.items():
                if isinstance(value, dict):
                    if m.mode in value:
                        changes[stage] = value[m.mode]
                else:
                    changes[stage] = value
            modes.append(m._replace(**changes))
        return self._evolve(modes=tuple(modes))

    def with_stages(self, **changes) -> "RestartBudget":
        """A copy with a stage set for every mode, e.g. ``budget.with_stages(detect=0.1)``; ``rewind=r`` sets the interval to 2r."""
        unknown = set(changes) - set(STAGES)
        if unknown:
            raise ValueError(f"stage must be one of {list(STAGES)} (got {sorted(unknown)})")
        out = self
        if "rewind" in changes:
            out = out.with_interval(2.0 * _nonneg("rewind", changes.pop("rewind")))
        return out.with_modes(**changes) if changes else out

    def with_interval(self, interval_min) -> "RestartBudget":
        """A copy checkpointing every ``interval_min`` (a given interval: not re-optimised)."""
        return self._evolve(interval_min=interval_min, interval_bound_min=None)

    def with_failures_per_day(self, failures_per_day) -> "RestartBudget":
        """A copy with another failure rate (stages, interval and write cost unchanged)."""
        return self._evolve(failures_per_day=failures_per_day)

    def with_write_cost(self, write_cost_min) -> "RestartBudget":
        """A copy with another blocking write cost per checkpoint (minutes), the interval unchanged."""
        return self._evolve(write_cost_min=write_cost_min)

    # ----- the modes' means -----
    def _mean(self, values):
        values = list(values)
        if all(type(m.share) is float for m in self.modes) and all(type(v) is float for v in values):
            total = 0  # the fast path: the same products and sums in the same order, as the same np.float64
            for m, v in zip(self.modes, values):
                total = total + m.share * v
            return np.float64(total)
        return sum(np.asarray(m.share, dtype=float) * v for m, v in zip(self.modes, values))

    @property
    def persisted_interval(self):
        """``tau_p``: the persisted checkpoint's interval (the interval itself while the two are one checkpoint)."""
        return self.interval_min if self.persisted_interval_min is None else self.persisted_interval_min

    def rewind_by_mode(self, interval=None) -> dict:
        """Work rewound per failure of each mode (minutes): half the interval it restores, plus its latency."""
        tau = self.interval_min if interval is None else interval
        tau_p = tau if self.persisted_interval_min is None else self.persisted_interval_min
        return {m.mode: (tau_p if m.persisted else tau) / 2.0 + m.latency for m in self.modes}

    @functools.cached_property
    def latest_share(self):
        """Share of failures whose rewind depends on ``tau`` (all of them while the checkpoint is one)."""
        if self.persisted_interval_min is None:
            return 1.0
        return self._mean([0.0 if m.persisted else 1.0 for m in self.modes])

    @property
    def latency_min(self):
        """Mean rewind past a corruption per failure (minutes; an SDC's latency x its share)."""
        return self._mean([m.latency for m in self.modes])

    @functools.cached_property
    def stages(self) -> RestartStages:
        """The mean restart over the modes (minutes); ``stages.total`` is the ``X`` of the day model."""
        r = self.rewind_by_mode()
        return RestartStages(detect=self._mean([m.detect for m in self.modes]),
                             reschedule=self._mean([m.reschedule for m in self.modes]),
                             reload=self._mean([m.reload for m in self.modes]),
                             rewind=self._mean([r[m.mode] for m in self.modes]))

    @functools.cached_property
    def per_failure_min(self):
        """``X``: minutes one failure costs, all four stages, the modes' mean."""
        return self.stages.total

    @property
    def nonlatest_min(self):
        """``X`` less the rewinds that depend on ``tau``: what the interval's optimum treats as fixed."""
        return self.per_failure_min - self.latest_share * self.interval_min / 2.0

    # ----- the day model -----
    @property
    def mtbf_min(self):
        """Job MTBF (minutes), :func:`course_lib.failures.mtbf_min` (arrays: ``T / lambda``)."""
        if np.ndim(self.failures_per_day) == 0:
            return failures.mtbf_min(self.failures_per_day)
        return MINUTES_PER_DAY / np.asarray(self.failures_per_day, dtype=float)

    @property
    def busy_share(self):
        """``rho = min(lambda X / T, 1)``: the share of the day the job is recovering from failures."""
        rho = np.minimum(np.asarray(self.failures_per_day, dtype=float) * self.per_failure_min / MINUTES_PER_DAY, 1.0)
        return float(rho) if np.ndim(rho) == 0 else rho

    @property
    def makes_progress(self):
        """False when the failures of a day take the whole day to recover from (``lambda X >= T``)."""
        out = np.asarray(self.failures_per_day, dtype=float) * self.per_failure_min < MINUTES_PER_DAY
        return bool(out) if np.ndim(out) == 0 else out

    @functools.cached_property
    def loss_fraction(self):
        """The share of the day lost: ``1 - (1 - i)(1 - rho) tau / (tau + delta)`` (:func:`day_loss`)."""
        return day_loss(self.failures_per_day, self.per_failure_min, self.interval_min, self.write_cost_min, self.idle_share)

    @property
    def fraction_of_day(self):
        """The same as :attr:`loss_fraction` (the name notebooks 03 and 09 read)."""
        return self.loss_fraction

    @property
    def ettr(self):
        """Effective training time ratio: 1 - :attr:`loss_fraction`."""
        return 1.0 - self.loss_fraction

    @property
    def minutes_per_day(self):
        """Minutes lost per day (at most the day's 1,440)."""
        return MINUTES_PER_DAY * self.loss_fraction

    @property
    def restart_minutes_per_day(self):
        """Minutes a day the job spends recovering: ``T rho (1 - i)`` (``lambda X`` below saturation)."""
        return MINUTES_PER_DAY * self.busy_share * (1.0 - np.asarray(self.idle_share, dtype=float))

    @property
    def write_minutes_per_day(self):
        """Minutes a day of blocking writes: the training time's share ``delta / (tau + delta)``."""
        tau, delta = np.asarray(self.interval_min, dtype=float), np.asarray(self.write_cost_min, dtype=float)
        with np.errstate(invalid="ignore", divide="ignore"):
            w = np.where(tau + delta > 0, delta / np.where(tau + delta > 0, tau + delta, 1.0), 0.0)
        out = MINUTES_PER_DAY * (1.0 - np.asarray(self.idle_share)) * (1.0 - np.asarray(self.busy_share)) * w
        return float(out) if np.ndim(out) == 0 else out

    @property
    def idle_minutes_per_day(self):
        """Minutes a day of the GPU time paid for that an idle spare wastes: ``T i``."""
        return MINUTES_PER_DAY * self.idle_share

    def _per_failure_part(self, minutes):
        """A part of ``X`` (minutes per failure) as minutes per day of the restart term."""
        x = self.per_failure_min
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(x > 0, self.restart_minutes_per_day * minutes / np.where(x > 0, x, 1.0), 0.0) * 1.0

    def breakdown(self) -> dict[str, float]:
        """Minutes per day by stage, plus ``latency``, ``write`` and ``idle`` where non-zero; they sum to :attr:`minutes_per_day`."""
        s = self.stages
        lat = self.latency_min
        out = {"detect": s.detect, "reschedule": s.reschedule, "reload": s.reload, "rewind": s.rewind - lat}
        out = {k: _f(self._per_failure_part(v)) for k, v in out.items()}
        if np.any(np.asarray(lat) > 0):
            out["latency"] = _f(self._per_failure_part(lat))
        out["write"] = self.write_minutes_per_day
        if np.any(np.asarray(self.idle_share) > 0):
            out["idle"] = self.idle_minutes_per_day
        return out

    @property
    def rewind_minutes_per_day(self):
        """Minutes a day of rewound work (latency included)."""
        return _f(self._per_failure_part(self.stages.rewind))

    @property
    def latency_minutes_per_day(self):
        """Minutes a day rewound past corruptions."""
        return _f(self._per_failure_part(self.latency_min))

    @property
    def checkpoint_minutes_per_day(self):
        """Rewind + writes: what checkpointing leaves."""
        return self.rewind_minutes_per_day + self.write_minutes_per_day

    @property
    def progress_sentence(self) -> str:
        """One plain sentence on whether the job can make progress (the CLI and the dashboard print it)."""
        if np.ndim(self.failures_per_day):
            raise ValueError("progress_sentence needs a day of numbers, not of draws")
        x, m = self.per_failure_min, self.mtbf_min
        if self.makes_progress:
            return f"The job makes progress: it trains {self.ettr:.2%} of the day."
        return (f"Failures come faster than the job recovers: each costs {x:.3g} min and the next comes "
                f"{m:.3g} min later on average, so the job spends the whole day recovering and never trains "
                "(the model caps the loss at 100 % of the day).")

    # ----- the floor (notebook 08; the named terms in course_lib.floor) -----
    @property
    def floor_interval_min(self):
        """The floor's interval: one checkpoint a step (or the interval itself, if shorter)."""
        return np.minimum(self.step_min, self.interval_min) * 1.0 if np.ndim(self.interval_min) else min(self.step_min, self.interval_min)

    @property
    def floor_budget(self) -> "RestartBudget":
        """This day with the write cost at zero and the interval at one step: what no checkpoint lever removes."""
        return self._evolve(interval_min=self.floor_interval_min, write_cost_min=0.0, interval_bound_min=None)

    @property
    def floor_minutes_per_day(self):
        """Minutes a day of :attr:`floor_budget` (:func:`course_lib.floor.terms` names its parts)."""
        return self.floor_budget.minutes_per_day

    @property
    def floor_fraction(self):
        """The floor as a share of the day."""
        return self.floor_budget.loss_fraction


def _f(x):
    return float(x) if np.ndim(x) == 0 else x


# --------------------------------------------------------------------------------------
# The Scenario's day
# --------------------------------------------------------------------------------------
def baseline_modes(shares, detect_by_mode, reschedule, reload, sdc_latency, peer_copy=True) -> tuple:
    """The baseline's :class:`ModeCost` per mode (numbers or arrays; notebook 03's table).

    Every mode reschedules ``reschedule`` and reloads the persisted checkpoint (``reload``); an SDC
    also rewinds its latency; an SDC (and a lost host whose snapshot no peer holds) restores the
    persisted checkpoint (at the baseline the only one, so the flag matters only after the levers).
    """
    out = []
    for i, mode in enumerate(MODES):
        share = shares[..., i] if np.ndim(shares) > 1 else shares[i]
        out.append(ModeCost(mode, share, detect_by_mode[mode], reschedule, reload,
                            sdc_latency if mode == "sdc" else 0.0,
                            mode == "sdc" or (mode == "host_loss" and not peer_copy)))
    return tuple(out)


def baseline_budget(scenario: Scenario) -> RestartBudget:
    """The scenario's day: its failures, each mode's baseline stages, today's synchronous write.

    The stages' mean over the modes sums to ``scenario.minutes_per_restart`` (the question's 15
    minutes: detection, the reschedule remainder, the reload from storage, half the 10-minute interval
    and an hour rewound past each silent corruption); the blocking write of the synchronous checkpoint
    (``scenario.write_cost_min``) is counted beside it, so every lever is judged like with like.
    """
    m = scenario.modes
    modes = baseline_modes(m.shares, scenario.detect_by_mode, scenario.reschedule_min, scenario.reload_min,
                           m.sdc_latency_min, m.peer_copy)
    return RestartBudget(scenario.failures_per_day, modes, scenario.checkpoint_interval_min, scenario.write_cost_min,
                         None, scenario.step_min)


def baseline_stages(scenario: Scenario) -> RestartStages:
    """The scenario's minutes per restart split into four stages (notebook 03): the baseline day's mean restart."""
    return baseline_budget(scenario).stages
