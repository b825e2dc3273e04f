"""Per-step fault tolerance across replica groups: the entry points notebook 10 uses (the floor itself lives in course_lib.floor).

The record is :class:`course_lib.scenario.ReplicaInputs`, held by the
:class:`~course_lib.scenario.Scenario` (``scenario.replicas``); the floor with ``G`` groups is
:func:`course_lib.floor.per_mode_groups` (its derivation in :mod:`course_lib.floor`). The stall and
the rejoin default to the course's own torchft lab measurement (data/replica_lab.csv,
benchmarks/results/ftlab_compare.md), scaled to the fleet by notebook 07's factor 10 (an
assumption); on GPUs a replica group that dies holds its peers at most torchft's ``Manager``
timeouts (60 s, data/restart_ranges.csv ``torchft_manager_timeout``). Each group holds a whole
replica's optimizer state sharded over its own GPUs only (HSDP): for the 405B model over a 128-GPU
replica that is 405e9 x 12 B / 128 = 38 GB per GPU, against the 1.2 GB shard of the fully sharded
job (:func:`replica_shard_gb`).
"""
from __future__ import annotations

import dataclasses

from . import floor as fl
from .scenario import ModeInputs, ReplicaInputs, Scenario, defaults

__all__ = ["ReplicaInputs", "replica_lab_inputs", "replica_shard_gb", "groups_for", "per_mode_floor_groups",
           "floor_minutes_per_day_groups", "STRATEGIES", "floor_by_strategy"]

STRATEGIES = fl.STRATEGIES


def replica_lab_inputs(data_dir=None) -> dict[str, float]:
    """The lab's stall and rejoin at fleet scale, minutes (data/replica_lab.csv, value x scale)."""
    d = defaults(data_dir)
    return {"stall_min": d["stall_min"], "rejoin_min": d["rejoin_min"]}


def replica_shard_gb(scenario: Scenario) -> float:
    """Checkpoint state per GPU when each replica group shards it over its own ``replica_gpus`` only (HSDP), GB."""
    return scenario.model_params * scenario.checkpoint_bytes_per_param / scenario.modes.replica_gpus / 1e9


def _with(scenario: Scenario, replica_inputs: ReplicaInputs | None, mode_inputs: ModeInputs | None) -> Scenario:
    changes = {}
    if replica_inputs is not None:
        changes["replicas"] = replica_inputs
    if mode_inputs is not None:
        changes["modes"] = mode_inputs
    return dataclasses.replace(scenario, **changes) if changes else scenario


def groups_for(scenario: Scenario, replica_inputs: ReplicaInputs | None = None, mode_inputs: ModeInputs | None = None) -> int:
    """``G``: :func:`course_lib.floor.groups_for` of the scenario (with these inputs, if given)."""
    return fl.groups_for(_with(scenario, replica_inputs, mode_inputs))


def per_mode_floor_groups(scenario: Scenario, replica_inputs: ReplicaInputs | None = None,
                          mode_inputs: ModeInputs | None = None) -> dict[str, float]:
    """``{mode: minutes per day}`` of the floor with ``G`` replica groups, every other lever pulled."""
    from .levers import all_levers_day

    s = _with(scenario, replica_inputs, mode_inputs)
    day = dataclasses.replace(all_levers_day(s), idle_share=0.0)
    return fl.per_mode_groups(day, fl.groups_for(s), s.replicas.stall_min, s.replicas.rejoin_min)


def floor_minutes_per_day_groups(scenario: Scenario, replica_inputs: ReplicaInputs | None = None,
                                 mode_inputs: ModeInputs | None = None) -> float:
    """The floor with ``G`` replica groups, minutes per day: the sum of :func:`per_mode_floor_groups`."""
    return sum(per_mode_floor_groups(scenario, replica_inputs, mode_inputs).values())


def floor_by_strategy(scenario: Scenario, replica_inputs: ReplicaInputs | None = None,
                      mode_inputs: ModeInputs | None = None) -> dict[str, dict[str, float]]:
    """``{strategy: {mode: minutes per day}}`` for :data:`STRATEGIES` (:func:`course_lib.floor.by_strategy`)."""
    return fl.by_strategy(_with(scenario, replica_inputs, mode_inputs))
