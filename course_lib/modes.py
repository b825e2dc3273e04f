"""Failure modes: how each failure presents, how soon it is seen, and what its restart costs.

Notebook 03 explains this module (detection and restart per mode, the levers' order); notebook
08 sums it into the floor. Units: minutes, like the rest of course_lib.

Llama 3's Table 5 mixes four modes (data/failure_modes.csv, shares from the raw counts):

- **crash**: a process exits; its agent sees it at the next poll.
- **hang**: a rank stops without exiting; it is seen only when a timeout expires, and the timeout
  must exceed the longest legitimate gap between heartbeats (a step, a blocking checkpoint
  save): ``timeout = safety_factor x longest gap`` (NVRx's ``safety_factor`` 5).
- **host_loss**: the node and its memory are gone; like a crash, but the in-memory snapshot of
  that node is lost: the restart needs a copy on a peer (``peer_copy``), or it falls back to the
  last persisted checkpoint (older, read from storage).
- **sdc**: silent data corruption, seen after a latency; the job must rewind past the corruption
  to a persisted checkpoint older than it (keep more than one).

**One convention for every periodic check: it is seen, on average, half a period after the event**
(:func:`half_period`). A timeout is not periodic: a hang is seen a whole timeout after the last
heartbeat, plus half a poll of the monitor that checks it.

The per-mode floor is ``sum_k lambda_k (D_k + R_k + T_iter / 2 + latency_k)``; with one mode and
point inputs it is today's ``lambda (D + R)`` exactly (tests/test_modes.py). Because it is linear
in the shares, the after-levers day is one :class:`~course_lib.restart.RestartBudget` whose stages
are the share-weighted means (:func:`after_levers_stages`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from scipy.stats import lognorm

from . import step as st
from ._validate import Validated, check_non_negative, check_positive, checked
from .scenario import Scenario
from .units import MINUTES_PER_DAY

__all__ = ["MODES", "half_period", "hang_timeout_min", "false_kill_probability", "false_kills_per_day",
           "ModeInputs", "ModeStages", "mode_stages", "after_levers_stages", "per_mode_floor"]

#: The failure modes, in the order of data/failure_modes.csv.
MODES = ("crash", "hang", "host_loss", "sdc")


def half_period(period_min) -> float:
    """The course's one convention: a periodic check sees an event half a period later, on average."""
    return check_non_negative("period_min", period_min) / 2.0


def hang_timeout_min(longest_gap_min, safety_factor) -> float:
    """A hang timeout computed from observed gaps: ``safety_factor x longest legitimate gap`` (NVRx)."""
    gap = check_positive("longest_gap_min", longest_gap_min)
    f = check_positive("safety_factor", safety_factor)
    if f < 1:
        raise ValueError(f"safety_factor must be a finite number >= 1 (got {safety_factor!r}): a timeout below the longest gap kills healthy steps")
    return f * gap


def false_kill_probability(timeout_min, step_min, step_cv) -> float:
    """Probability that one healthy step outlasts the hang timeout (a false kill), notebook 03.

    A simple model, stated: healthy step times are lognormal with mean ``step_min`` and
    coefficient of variation ``step_cv`` (> 0; the course has no sourced value: measure yours).
    ``timeout_min`` must exceed ``step_min``. The trade: a shorter timeout detects hangs sooner
    but kills slow-but-healthy steps (:func:`false_kills_per_day`).
    """
    t = check_positive("timeout_min", timeout_min)
    m = check_positive("step_min", step_min)
    cv = check_positive("step_cv", step_cv)
    if t <= m:
        raise ValueError(f"timeout_min must be > step_min = {m:g} (got {timeout_min!r})")
    sigma = math.sqrt(math.log1p(cv**2))
    mu = math.log(m) - sigma**2 / 2
    return float(lognorm.sf(t, s=sigma, scale=math.exp(mu)))


def false_kills_per_day(timeout_min, step_min, step_cv) -> float:
    """Expected false kills per day: steps per day x :func:`false_kill_probability`."""
    return MINUTES_PER_DAY / check_positive("step_min", step_min) * false_kill_probability(timeout_min, step_min, step_cv)


def _shares(name, value):
    arr = tuple(float(check_non_negative(f"{name}[{m}]", v)) for m, v in zip(MODES, value))
    if len(tuple(value)) != len(MODES) or any(v > 1 for v in arr) or not math.isclose(sum(arr), 1.0, abs_tol=1e-9):
        raise ValueError(f"{name} must be {len(MODES)} shares ({', '.join(MODES)}) in [0, 1] summing to 1 (got {value!r})")
    return arr


def _at_least_one(name, value):
    x = check_positive(name, value)
    if x < 1:
        raise ValueError(f"{name} must be a finite number >= 1 (got {value!r})")
    return x


def _default(name):
    return checked(_checks[name], default_factory=lambda: _defaults()[name])


def _defaults(data_dir=None) -> dict:
    from .data import mode_shares, sourced

    sh = mode_shares(data_dir)
    rr = sourced("restart_ranges.csv", "key", data_dir)
    ts = sourced("training_step.csv", "key", data_dir)
    return {
        "shares": tuple(sh[m]["central"] for m in MODES),
        "poll_min": rr["nvrx_workload_check_interval"].minutes,
        "safety_factor": rr["nvrx_safety_factor"].value,
        "sdc_latency_min": rr["sdc_detection_central"].minutes,
        "tokens_per_step": ts["llama3_405b_tokens_per_batch"].value,
        "spare_gpus": ts["llama3_gpus_per_server"].value,
        "replica_gpus": ts["llama3_tensor_parallel"].value * ts["llama3_pipeline_parallel"].value,
    }


_checks = {"shares": _shares, "poll_min": check_positive, "safety_factor": _at_least_one,
           "sdc_latency_min": check_non_negative, "tokens_per_step": check_positive,
           "spare_gpus": check_non_negative, "replica_gpus": check_positive}


@dataclass(frozen=True)
class ModeInputs(Validated):
    """The inputs of the per-mode model beside the :class:`~course_lib.scenario.Scenario` (notebooks 03, 06, 08).

    shares: crash, hang, host_loss, sdc shares of the failures (data/failure_modes.csv, central).
    poll_min: the rank monitor's poll (NVRx ``workload_check_interval`` 5 s); crash detection is half of it.
    safety_factor: hang timeout / longest legitimate gap (NVRx 5).
    hang_timeout_min: None: ``safety_factor x max(step, blocking snapshot)``; else given (> the step).
    sdc_latency_min: time until silent data corruption is noticed (the course's judgement, 1 h).
    tokens_per_step, tflops_per_gpu: the step (Llama 3 Table 4; None: the configuration nearest the fleet).
    peer_copy: the snapshot is also held by a peer, so a host loss restores from memory.
    spare_gpus, spares_pooled: the hot spare's GPUs (one 8-GPU server) and whether they serve other jobs.
    replica_gpus: GPUs an elastic job drops per failure (one data-parallel replica, TP 8 x PP 16).
    """

    shares: tuple = _default("shares")
    poll_min: float = _default("poll_min")
    safety_factor: float = _default("safety_factor")
    hang_timeout_min: float | None = checked(check_positive, default=None)
    sdc_latency_min: float = _default("sdc_latency_min")
    tokens_per_step: float = _default("tokens_per_step")
    tflops_per_gpu: float | None = checked(check_positive, default=None)
    peer_copy: bool = True
    spare_gpus: float = _default("spare_gpus")
    spares_pooled: bool = False
    replica_gpus: float = _default("replica_gpus")

    def share(self, mode: str) -> float:
        return self.shares[MODES.index(mode)]

    def step_min(self, scenario: Scenario) -> float:
        """The training step of ``scenario``'s model on its fleet (:func:`course_lib.step.step_time_min`)."""
        f = self.tflops_per_gpu if self.tflops_per_gpu is not None else st.default_tflops_per_gpu(scenario.n_gpus)
        return st.step_time_min(scenario.model_params, self.tokens_per_step, scenario.n_gpus, f)

    def timeout_min(self, scenario: Scenario) -> float:
        """The hang timeout: given, or ``safety_factor x max(step, blocking snapshot)``."""
        step = self.step_min(scenario)
        if self.hang_timeout_min is not None:
            if self.hang_timeout_min <= step:
                raise ValueError(f"hang_timeout_min must be > the step time {step:.3g} min (got {self.hang_timeout_min!r})")
            return self.hang_timeout_min
        return hang_timeout_min(max(step, scenario.snapshot_min), self.safety_factor)


class ModeStages(NamedTuple):
    """One mode after the levers (minutes per failure): detect, reschedule, reload, latency, fallback."""

    mode: str
    share: float
    detect: float
    reschedule: float
    reload: float
    latency: float  # extra rewind beyond the snapshot: SDC latency + older persisted checkpoint, host loss without a copy
    uses_snapshot: bool


def mode_stages(scenario: Scenario, inputs: ModeInputs | None = None) -> list[ModeStages]:
    """Every mode's stages once every lever is pulled (notebook 03's table, notebook 08's floor).

    crash and host loss: half a poll; hang: the timeout plus half a poll; sdc: half a poll once a
    check flags it (the latency is rewound work, not idle detection). Reschedule: the hot-spare
    restart, end to end. Reload: from host memory, except an sdc (the snapshot postdates the
    corruption) and a host loss without a peer copy, which read the persisted checkpoint
    (``scenario.reload_min``) and rewind to it (half the persisted interval, today's
    ``checkpoint_interval_min``).
    """
    inp = ModeInputs() if inputs is None else inputs
    poll = half_period(inp.poll_min)
    persisted_rewind = scenario.checkpoint_interval_min / 2.0
    out = []
    for m in MODES:
        detect = poll + (inp.timeout_min(scenario) if m == "hang" else 0.0)
        from_storage = m == "sdc" or (m == "host_loss" and not inp.peer_copy)
        latency = (inp.sdc_latency_min if m == "sdc" else 0.0) + (persisted_rewind if from_storage else 0.0)
        out.append(ModeStages(m, inp.share(m), detect, scenario.reschedule_after_min,
                              scenario.reload_min if from_storage else scenario.reload_from_memory_min,
                              latency, not from_storage))
    return out


def after_levers_stages(scenario: Scenario, inputs: ModeInputs | None = None) -> dict[str, float]:
    """Share-weighted means of :func:`mode_stages`: detect, reschedule, reload, latency, snapshot share."""
    ms = mode_stages(scenario, inputs)
    return {k: sum(x.share * getattr(x, k) for x in ms) for k in ("detect", "reschedule", "reload", "latency")} | {
        "snapshot_share": sum(x.share for x in ms if x.uses_snapshot)}


def per_mode_floor(scenario: Scenario, inputs: ModeInputs | None = None) -> dict[str, float]:
    """``{mode: lambda_k (D_k + R_k + T_iter / 2 + latency_k)}`` in minutes per day (notebook 08)."""
    inp = ModeInputs() if inputs is None else inputs
    lam, half_step = scenario.failures_per_day, inp.step_min(scenario) / 2.0
    return {x.mode: lam * x.share * (x.detect + x.reschedule + x.reload + half_step + x.latency)
            for x in mode_stages(scenario, inp)}


def shares_with_hang(shares, hang_share) -> np.ndarray:
    """The shares with the hang share set to ``hang_share`` (scalar or array), the others rescaled to sum to 1."""
    base = np.asarray(shares, dtype=float)
    h = np.asarray(hang_share, dtype=float)
    i = MODES.index("hang")
    rest = 1.0 - base[i]
    out = base * ((1.0 - h[..., None]) / rest)
    out[..., i] = h
    return out
