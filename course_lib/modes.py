"""Failure modes: how each failure presents and how soon it is seen (notebook 03 explains it; notebook 08 sums it).

Llama 3's Table 5 mixes four modes (data/failure_modes.csv, shares from the raw counts; the mapping of a
component to a mode is mostly the course's judgement, labelled per row):

- **crash**: a process exits. Its launcher sees it at the next poll of its monitor (torchrun
  ``--monitor-interval``, 0.1 s), and the other nodes' launchers at their next poll, when the
  rendezvous round it opens is visible: about 0.1 s in all, before and after any lever.
- **hang**: a rank stops without exiting. It is seen only when a timeout expires: at the baseline NCCL's
  untuned 10-minute collective timeout; tuned, a heartbeat timeout of ``safety_factor x`` the longest
  legitimate gap between heartbeats (NVRx's safety factor 5), which the rank monitor evaluates every
  ``workload_check_interval`` (5 s: a hang is seen half a period after its timeout). The 5 s is the
  period of that check, not a detection time, and it never sees a crash.
- **host_loss**: the node and its memory are gone. A dead host opens no rendezvous round and tells
  nobody: its peers learn it from failing collectives, a cross-node heartbeat (NVRx in-process
  restart's ``heartbeat_timeout``, 30 s), or at worst the hang timeout; the baseline sees it at the next
  cluster health check (half a 5-minute period on average). Its in-memory snapshot is gone with it: the
  restart needs a copy on a peer (``peer_copy``), or it falls back to the persisted checkpoint.
- **sdc**: silent data corruption, seen after a latency; the job rewinds past the corruption to a
  persisted checkpoint older than it (keep more than one).

**One convention for every periodic check: it is seen, on average, half a period after the event**
(:func:`half_period`). A timeout is not periodic: a hang is seen a whole timeout after the last
heartbeat. The detection per mode is a property of the one input record
(:attr:`course_lib.scenario.Scenario.detect_by_mode`, ``detect_after_by_mode``); the day's stages per
mode are :class:`course_lib.restart.ModeCost`; the floor per mode is :func:`course_lib.floor.per_mode`.
This module keeps the formulas of the hang timeout and its false kills, and the compatible entry points
the lab notebooks use (:func:`per_mode_floor`, :func:`mode_stages`).
"""
from __future__ import annotations

import dataclasses
import math

from scipy.stats import lognorm

from ._validate import check_non_negative, check_positive
from .scenario import MODES, ModeInputs, Scenario, shares_with_hang
from .units import MINUTES_PER_DAY

__all__ = ["MODES", "ModeInputs", "half_period", "hang_timeout_min", "false_kill_probability", "false_kills_per_day",
           "shares_with_hang", "mode_stages", "per_mode_floor"]


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

    A simple model, stated: healthy step times are lognormal with mean ``step_min`` and coefficient of
    variation ``step_cv`` (> 0; the course has no sourced value: measure yours). ``timeout_min`` must
    exceed ``step_min``. The trade: a shorter timeout detects hangs sooner but kills slow-but-healthy
    steps (:func:`false_kills_per_day`).
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


def _with(scenario: Scenario, inputs: ModeInputs | None) -> Scenario:
    return scenario if inputs is None else dataclasses.replace(scenario, modes=inputs)


def mode_stages(scenario: Scenario, inputs: ModeInputs | None = None) -> list:
    """Every mode's stages once all four levers are pulled (:class:`course_lib.restart.ModeCost`; notebook 03's table)."""
    from .levers import all_levers_day

    return list(all_levers_day(_with(scenario, inputs)).modes)


def per_mode_floor(scenario: Scenario, inputs: ModeInputs | None = None) -> dict[str, float]:
    """``{mode: minutes per day}`` of the floor with all four levers pulled (the spare's idle GPUs not counted here).

    The entry point of notebooks 10 and 11; :func:`course_lib.floor.per_mode` of
    :func:`course_lib.levers.all_levers_day`. ``inputs`` replaces the scenario's mode inputs.
    """
    from . import floor
    from .levers import all_levers_day

    day = dataclasses.replace(all_levers_day(_with(scenario, inputs)), idle_share=0.0)
    return floor.per_mode(day)
