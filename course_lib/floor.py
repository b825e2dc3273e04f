"""The floor: what is left of the loss once every checkpoint lever is pulled, term by term, per mode and per group (notebook 08).

Notebook 08 explains this module; the capstone (notebook 09), ``course_lib.answer``, the drill and
the CLI use it. Units: **minutes** for every time, **per day** for every loss
(``*_minutes_per_day``), like the rest of course_lib.

The floor is a property of the one day model, :attr:`course_lib.restart.RestartBudget.floor_budget`:
the after-levers day with the write cost at zero and the interval at one step (a checkpoint cannot be
taken more often than once a step). While the failures of a day take less than the day to recover
from, its minutes are exactly ``lambda`` times the minutes per failure, term by term
(:func:`terms`)::

    lambda (D + R)                     detection, restart and reload of every failure
  + lambda s T_step / 2                half a step rewound (s: the failures that restore the latest checkpoint)
  + lambda_sdc (L + tau_p / 2)         an SDC's latency and the rewind to the persisted checkpoint older
                                       than it (and a lost host's, when no peer holds its snapshot)
  [+ T i                               an idle hot spare, when one is kept]

``D + R`` rests on the course's assumptions where they are spoken: the share of failures that hang
(the course's mapping of Table 5), the tuned hang timeout (NVRx's safety factor 5) and the in-job
restart (FlashRecovery's end-to-end 150 s); the half step on Llama 3's batch and throughput; the SDC
term on an assumed one-hour latency and on the persisted interval, which **is** a checkpoint setting
(persisting more often shrinks it; keeping more than one persisted checkpoint makes it possible at all).
No other checkpoint lever moves the floor. What moves it: fewer failures (a smaller ``lambda``:
:mod:`course_lib.levers` rate levers), a smaller ``D + R`` (bounded below: a hang is seen only at a
timeout longer than the longest legitimate gap, a new process pays its start-up), faster SDC
detection, or stopping fewer GPUs per failure (per-step fault tolerance across replica groups:
:func:`per_mode_groups`).

With ``G`` replica groups (torchft: each group a full copy of the model, the groups average gradients
every step), a failure of mode ``k`` costs, in job-minutes, its detection ``D_k`` (the survivors wait in
the all-reduce until it is seen), the survivors' quorum change and the step in flight,
``(G - 1)/G x (stall + T_step/2)``, and the failed group's rejoin, ``rejoin / G``; no rewind for the
survivors and no persisted checkpoint for a lost host (a peer holds the weights). **Silent data
corruption still rewinds the whole job**: every replica averaged the corrupted gradient. With ``G = 1``
the result is :func:`per_mode` exactly.
"""
from __future__ import annotations

import dataclasses
from typing import NamedTuple


from .restart import RestartBudget, day_loss
from .scenario import Scenario
from .units import MINUTES_PER_DAY

__all__ = ["FloorTerm", "terms", "terms_sentence", "per_mode", "groups_for", "per_mode_groups",
           "floor_minutes_per_day_groups", "STRATEGIES", "by_strategy", "spare_break_even_reschedule_min",
           "sdc_minutes_per_day"]


class FloorTerm(NamedTuple):
    """One named term of the floor: its symbol, minutes per failure, minutes per day, and what it rests on."""

    name: str
    symbol: str
    per_failure_min: float
    minutes_per_day: float
    rests_on: str


def _parts(day: RestartBudget) -> dict[str, float]:
    """The floor day's minutes per failure: D + R, the half step, the SDC (and persisted) rewind, share-weighted."""
    f = day.floor_budget
    rewind = f.rewind_by_mode()
    tied = f.persisted_interval_min is None
    dr = sum(m.share * (m.detect + m.reschedule + m.reload) for m in f.modes)
    step = sum(m.share * (rewind[m.mode] - m.latency) for m in f.modes if tied or not m.persisted)
    late = sum(m.share * rewind[m.mode] for m in f.modes if m.persisted and not tied) + \
        sum(m.share * m.latency for m in f.modes if tied or not m.persisted)
    return {"dr": dr, "step": step, "late": late}


def terms(day: RestartBudget) -> list[FloorTerm]:
    """The floor of ``day`` as named terms (minutes per day sum to ``day.floor_minutes_per_day`` exactly).

    Each term's minutes per day is its share of the recovering time, ``T rho (1 - i) x part / X``:
    ``lambda x part`` while the job makes progress; the idle spare's term is ``T i``.
    """
    f = day.floor_budget
    parts = _parts(day)
    per_day = {k: float(f._per_failure_part(v)) for k, v in parts.items()}
    out = [
        FloorTerm("detection, restart and reload", "lambda (D + R)", parts["dr"], per_day["dr"],
                  "the hang share (the course's mapping of Table 5), the tuned hang timeout and the in-job restart"),
        FloorTerm("half a step", "lambda T_step / 2", parts["step"], per_day["step"],
                  "Llama 3's batch and throughput (the step, 6 N D / (G F))"),
        FloorTerm("silent corruption and the persisted rewind", "lambda_sdc (latency + persisted rewind)", parts["late"],
                  per_day["late"], "an assumed 1 h SDC latency and the persisted interval, a checkpoint setting"),
    ]
    if f.idle_share:
        out.append(FloorTerm("idle hot spare", "T i", 0.0, float(f.idle_minutes_per_day), "one idle spare server"))
    return out


def terms_sentence(day: RestartBudget, digits: int = 2) -> str:
    """The floor's terms as one printed sum, ``a + b + c = total min/day``, adding up as printed (:func:`course_lib.prose.added`)."""
    from .prose import sum_line

    ts = terms(day)
    return (sum_line([t.minutes_per_day for t in ts], day.floor_minutes_per_day, digits) + " min/day ("
            + ", ".join(t.symbol for t in ts) + ")")


def per_mode(day: RestartBudget, floor: bool = True) -> dict[str, float]:
    """``{mode: minutes per day}`` of the floor of ``day`` (``floor=False``: of the day itself, writes excluded)."""
    f = day.floor_budget if floor else day
    rewind = f.rewind_by_mode()
    return {m.mode: float(f._per_failure_part(m.share * (m.detect + m.reschedule + m.reload + rewind[m.mode])))
            for m in f.modes}


def groups_for(scenario: Scenario) -> int:
    """``G``: the scenario's replica groups, or one per data-parallel replica; at most ``n_gpus / replica_gpus``."""
    most = max(int(scenario.n_gpus // scenario.modes.replica_gpus), 1)
    g = scenario.replicas.groups
    if g is None:
        return most
    if g > most:
        raise ValueError(f"groups must be an integer in [1, {most}] (n_gpus / replica_gpus = {scenario.n_gpus:g} / "
                         f"{scenario.modes.replica_gpus:g}: each group holds a whole replica; got {g})")
    return g


def per_mode_groups(day: RestartBudget, groups: int, stall_min: float, rejoin_min: float) -> dict[str, float]:
    """``{mode: minutes per day}`` of the floor of ``day`` with ``groups`` replica groups (the module doc).

    The costs per failure are turned into minutes a day by the same day model
    (:func:`course_lib.restart.day_loss`), so they never pass the day either.
    """
    if groups == 1:
        return per_mode(day)
    f = day.floor_budget
    half_step = f.floor_interval_min / 2.0
    rewind = f.rewind_by_mode()
    cost = {}
    for m in f.modes:
        if m.mode == "sdc":  # every replica holds the corruption: the whole job rewinds, as today
            cost[m.mode] = m.detect + m.reschedule + m.reload + rewind[m.mode]
        else:
            cost[m.mode] = m.detect + (groups - 1) / groups * (stall_min + half_step) + rejoin_min / groups
    x = sum(m.share * cost[m.mode] for m in f.modes)
    if not x:  # no failure costs a minute: nothing is lost (as per_mode says; the split below would divide by 0)
        return {m.mode: 0.0 for m in f.modes}
    total = MINUTES_PER_DAY * day_loss(f.failures_per_day, x, 1.0, 0.0, 0.0)
    out = {m.mode: total * m.share * cost[m.mode] / x for m in f.modes}
    scale = min(1.0, total / sum(out.values())) if total else 1.0  # the parts never add past the day by rounding
    return {k: v * scale for k, v in out.items()}


def floor_minutes_per_day_groups(scenario: Scenario, day: RestartBudget | None = None) -> float:
    """The floor with the scenario's replica groups, minutes per day (every lever pulled unless ``day`` is given)."""
    from .levers import all_levers_day

    d = all_levers_day(scenario) if day is None else day
    return sum(per_mode_groups(dataclasses.replace(d, idle_share=0.0), groups_for(scenario), scenario.replicas.stall_min,
                               scenario.replicas.rejoin_min).values())


#: The three restart strategies notebook 10 compares.
STRATEGIES = ("whole-job restart", "in-job restart on a hot spare", "per-step fault tolerance")


def by_strategy(scenario: Scenario) -> dict[str, dict[str, float]]:
    """``{strategy: {mode: minutes per day}}`` of the floor for :data:`STRATEGIES`, the other levers all pulled.

    whole-job restart: the job re-queued, its reschedule today's (``reschedule_min``), no spare;
    in-job restart on a hot spare: the floor with the spare (its idle GPUs counted beside, not here);
    per-step fault tolerance: :func:`per_mode_groups` (the failed group restarts, no spare).
    """
    from .levers import all_levers_day

    day = dataclasses.replace(all_levers_day(scenario), idle_share=0.0)
    requeued = day.with_modes(reschedule=scenario.reschedule_min)
    return {
        STRATEGIES[0]: per_mode(requeued),
        STRATEGIES[1]: per_mode(day),
        STRATEGIES[2]: per_mode_groups(day, groups_for(scenario), scenario.replicas.stall_min, scenario.replicas.rejoin_min),
    }


def spare_break_even_reschedule_min(day_with_spare: RestartBudget) -> float:
    """The reschedule without a spare above which the spare pays for its idle GPUs (minutes).

    With the spare the day recovers a share ``rho_1`` and wastes ``i`` of its GPUs; without it every
    failure reschedules ``S`` instead of the spare's ``S_1``. The two days lose the same when
    ``S = S_1 + T i (1 - rho_1) / lambda`` (the spare's idle minutes spread over the failures).
    """
    s1 = sum(m.share * m.reschedule for m in day_with_spare.modes)
    rho1 = day_with_spare.busy_share
    return float(s1 + MINUTES_PER_DAY * day_with_spare.idle_share * (1.0 - rho1) / day_with_spare.failures_per_day)


def sdc_minutes_per_day(day: RestartBudget, latency_min) -> float:
    """The SDC mode's floor (minutes per day) if a corruption were noticed ``latency_min`` after it struck."""
    return per_mode(day.with_modes(latency={"sdc": latency_min}))["sdc"]
