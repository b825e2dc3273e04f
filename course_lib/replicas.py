"""Where the floor moves when a failure stops one replica group, not the world (notebook 10).

The floor of notebook 08 is ``sum_k lambda_k (D_k + R_k + T_iter / 2 + latency_k)``
(:func:`course_lib.modes.per_mode_floor`): every failure stops every GPU. With per-step fault
tolerance across ``G`` replica groups (torchft: each group a full copy of the model, the
groups average gradients every step), one failure of mode ``k`` costs, in job-minutes:

* the **detection** ``D_k``, paid by the whole job: the survivors wait in the gradient
  all-reduce on the failed group until its failure is seen;
* the **quorum change**, ``stall`` (plus the step in flight, which is not committed: half a
  step on average), paid by the survivors, ``(G - 1) / G`` of the job;
* the **rejoin** of the failed group (its restart and the weights fetched from a healthy peer,
  not from a checkpoint), paid by ``1 / G`` of the job.

No rewind for the survivors, and a host loss needs no persisted checkpoint (a peer holds the
weights). **Silent data corruption still rewinds**: every replica averaged the corrupted
gradient, so every replica holds the corruption; the job restarts from a persisted checkpoint
older than it, as today. With ``G = 1`` there is no peer to recover from: the failed group is
the job and its "rejoin" is the whole-job restart, so the result equals
:func:`course_lib.modes.per_mode_floor` exactly (tests/test_replicas.py). For ``G >= 2`` the
cost per failure is ``D + S + (F - S) / G`` with ``S`` the survivors' part and ``F`` the
rejoin: it falls with ``G`` while the rejoin is at least the survivors' stall
(:class:`ReplicaInputs` requires ``rejoin_min >= stall_min``) and the rejoin is not slower
than a whole-job restart.

The stall and the rejoin default to the course's own torchft lab measurement
(data/replica_lab.csv, benchmarks/results/ftlab_compare.md), scaled to the fleet by the same
factor 10 by which notebook 07 scales its timeouts (an assumption, stated where it is used).
Units: minutes (``*_per_day``: minutes per day). Pure: no torch.
"""
from __future__ import annotations

from dataclasses import dataclass

from . import modes as md
from ._validate import Validated, check_int_positive, check_non_negative, checked
from .scenario import Scenario

__all__ = ["ReplicaInputs", "replica_lab_inputs", "groups_for", "per_mode_floor_groups",
           "floor_minutes_per_day_groups", "STRATEGIES", "floor_by_strategy"]

#: The three restart strategies notebook 10 compares.
STRATEGIES = ("whole-job restart", "in-job restart on a hot spare", "per-step fault tolerance")


def replica_lab_inputs(data_dir=None) -> dict[str, float]:
    """The lab's stall and rejoin at fleet scale, minutes: ``value x scale`` of data/replica_lab.csv."""
    from .data import load_table
    from .units import to_minutes

    rows = {r["key"]: r for r in load_table("replica_lab.csv", data_dir).rows}
    fleet = {k: to_minutes(float(r["value"]) * float(r["scale"]), r["unit"]) for k, r in rows.items() if r["unit"] != "x"}
    return {"stall_min": fleet["ftlab_survivor_stall"], "rejoin_min": fleet["ftlab_rejoin"]}


def _lab(name):
    return checked(check_non_negative, default_factory=lambda: replica_lab_inputs()[name])


@dataclass(frozen=True)
class ReplicaInputs(Validated):
    """Per-step fault tolerance across replica groups (minutes).

    groups: replica groups ``G`` (int >= 1); None: one per data-parallel replica,
        ``n_gpus / ModeInputs.replica_gpus`` (:func:`groups_for`).
    stall_min: the survivors' stall per failure for the quorum change (detection excluded:
        it is the mode's, paid by the whole job).
    rejoin_min: the failed group's restart + weight recovery from a peer, until it commits again.
    Defaults: the course's own torchft lab measurement x notebook 07's scale factor
    (:func:`replica_lab_inputs`).
    """

    groups: int | None = checked(check_int_positive, default=None)
    stall_min: float = _lab("stall_min")
    rejoin_min: float = _lab("rejoin_min")

    def _validate_fields(self) -> None:
        if self.rejoin_min < self.stall_min:
            raise ValueError(f"rejoin_min must be a finite number >= stall_min = {self.stall_min:g} (the rejoining group "
                             f"waits for the quorum change too; got {self.rejoin_min!r})")


def groups_for(scenario: Scenario, replica_inputs: ReplicaInputs | None = None,
               mode_inputs: md.ModeInputs | None = None) -> int:
    """``G``: the given groups, or one per data-parallel replica; at most ``n_gpus / replica_gpus``."""
    rep = ReplicaInputs() if replica_inputs is None else replica_inputs
    inp = md.ModeInputs() if mode_inputs is None else mode_inputs
    most = max(int(scenario.n_gpus // inp.replica_gpus), 1)
    if rep.groups is None:
        return most
    if rep.groups > most:
        raise ValueError(f"groups must be an integer in [1, {most}] (n_gpus / replica_gpus = {scenario.n_gpus:g} / "
                         f"{inp.replica_gpus:g}: each group holds a whole replica; got {rep.groups})")
    return rep.groups


def per_mode_floor_groups(scenario: Scenario, replica_inputs: ReplicaInputs | None = None,
                          mode_inputs: md.ModeInputs | None = None) -> dict[str, float]:
    """``{mode: minutes per day}`` of the floor with ``G`` replica groups (see the module doc)."""
    inp = md.ModeInputs() if mode_inputs is None else mode_inputs
    rep = ReplicaInputs() if replica_inputs is None else replica_inputs
    g = groups_for(scenario, rep, inp)
    if g == 1:
        return md.per_mode_floor(scenario, inp)
    lam, half_step = scenario.failures_per_day, inp.step_min(scenario) / 2.0
    out = {}
    for x in md.mode_stages(scenario, inp):
        whole = x.detect + x.reschedule + x.reload + half_step + x.latency
        if x.mode == "sdc":  # every replica holds the corruption: the whole job rewinds, as today
            cost = whole
        else:
            cost = x.detect + (g - 1) / g * (rep.stall_min + half_step) + rep.rejoin_min / g
        out[x.mode] = lam * x.share * cost
    return out


def floor_minutes_per_day_groups(scenario: Scenario, replica_inputs: ReplicaInputs | None = None,
                                 mode_inputs: md.ModeInputs | None = None) -> float:
    """The floor with ``G`` replica groups, minutes per day: the sum of :func:`per_mode_floor_groups`."""
    return sum(per_mode_floor_groups(scenario, replica_inputs, mode_inputs).values())


def floor_by_strategy(scenario: Scenario, replica_inputs: ReplicaInputs | None = None,
                      mode_inputs: md.ModeInputs | None = None) -> dict[str, dict[str, float]]:
    """``{strategy: {mode: minutes per day}}`` for :data:`STRATEGIES` (every lever of notebook 08 pulled).

    whole-job restart: the job requeued, its reschedule today's (``baseline_reschedule_min``);
    in-job restart on a hot spare: notebook 08's floor (``reschedule_after_min``);
    per-step fault tolerance: :func:`per_mode_floor_groups`.
    """
    requeued = scenario.replace(reschedule_after_min=scenario.baseline_reschedule_min)
    return {
        STRATEGIES[0]: md.per_mode_floor(requeued, mode_inputs),
        STRATEGIES[1]: md.per_mode_floor(scenario, mode_inputs),
        STRATEGIES[2]: per_mode_floor_groups(scenario, replica_inputs, mode_inputs),
    }
