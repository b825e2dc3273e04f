"""Self-checks for the exercises of notebook 15 (the scheduler's share): solutions/15-the-schedulers-share-sol.ipynb.

The exercises read the scheduler lab's committed exports and runs (benchmarks/results/slurmlab/,
data/slurm_requeue.csv, ``course_lib.requeue``) and the course's model, so their answers do
not depend on the machine and need no cluster.

- :func:`requeue_from_accounting`: the seconds from the failed attempt's End to the requeued attempt's
  Start in the default node kill's sacct export, read by the course's reader
  (:func:`course_lib.incidents.reschedule_times`).
- :func:`startup_budget`: the minutes a fleet's own start-up may take, at Slurm's tuned settings, before
  a hot spare pays for its idle GPUs: the spare's break-even reschedule less the measured scheduler's share.
"""
from __future__ import annotations

from ..slurmlab.lab import EXPORTS
from . import Mistake
from ._common import NumberCheck, exercise

__all__ = ["requeue_from_accounting", "startup_budget", "accounting_numbers", "budget_numbers", "EXPORTS"]


def _attempts(sacct) -> list[dict]:
    lines = [ln for ln in sacct.read_text().splitlines() if ln.strip()]
    head = lines[0].split("|")
    return [r for r in (dict(zip(head, ln.split("|"))) for ln in lines[1:]) if "." not in r["JobID"]]


def accounting_numbers(mode: str = "node_kill", setting: str = "default") -> dict:
    """What exercise 1 starts from: the export's path, the reader's reschedule (s: the failed attempt's End to
    the next attempt's Start) and the wrong readings of the same rows (Eligible instead of Start, the first
    attempt's Start, minutes)."""
    from datetime import datetime

    from ..incidents import read_sacct, reschedule_times

    path = EXPORTS / f"{mode}-{setting}" / "sacct.txt"
    seconds = float(reschedule_times(read_sacct(path)).seconds[0])
    failed, nxt = _attempts(path)[:2]
    t = {k: datetime.fromisoformat(v) for k, v in (("end", failed["End"]), ("eligible", nxt["Eligible"]),
                                                   ("start", nxt["Start"]), ("first_start", failed["Start"]))}
    return {"path": path, "seconds": seconds, "to_eligible": (t["eligible"] - t["end"]).total_seconds(),
            "eligible_to_start": (t["start"] - t["eligible"]).total_seconds(),
            "from_first_start": (t["start"] - t["first_start"]).total_seconds(), "minutes": seconds / 60.0}


# ---------------------------------------------------------------- exercise 1
@exercise
def requeue_from_accounting() -> NumberCheck:
    """Exercise 1: seconds from the NODE_FAIL attempt's End to the requeued attempt's Start in
    ``benchmarks/results/slurmlab/node_kill-default/sacct.txt`` (the job's own rows, not its steps')."""
    n = accounting_numbers()
    mistakes = (
        Mistake(n["to_eligible"], "that stops at the next attempt's Eligible: the job may start then, but it starts at its Start"),
        Mistake(n["eligible_to_start"], "that is Eligible to Start only: the wait before Eligible (cred_expire) is the scheduler's too"),
        Mistake(n["from_first_start"], "that starts at the failed attempt's Start: the reschedule begins when that attempt ended (End)"),
        Mistake(n["minutes"], "that is in minutes: the task asks for seconds"),
    )
    return NumberCheck("15.1 requeue from Slurm's accounting", n["seconds"], 0.002, "s", mistakes)


def budget_numbers(setting: str = "tuned") -> dict:
    """What exercise 2 starts from: the spare's break-even reschedule at the course's scenario (min), the measured
    scheduler's share and reschedule of a killed node at ``setting`` and at the other setting (s, medians of the
    committed runs), and the course's reschedule (the question's remainder, min)."""
    from ..answer import answer
    from ..scenario import Scenario
    from ..requeue import read_runs, restart_parts

    sc = Scenario()
    runs = read_runs()
    other = "default" if setting == "tuned" else "tuned"
    mine, theirs = restart_parts(runs, "node_kill", setting), restart_parts(runs, "node_kill", other)
    return {"break_even_min": answer(sc, spread_draws=0).spare.break_even_min, "scheduler_s": mine.median["scheduler_s"],
            "reschedule_s": mine.median["reschedule_s"], "other_scheduler_s": theirs.median["scheduler_s"],
            "course_reschedule_min": sc.reschedule_min}


# ---------------------------------------------------------------- exercise 2
@exercise
def startup_budget() -> NumberCheck:
    """Exercise 2: minutes a fleet's own start-up may take, at Slurm's tuned settings, before a hot spare pays:
    the spare's break-even reschedule less the tuned scheduler's share (median of the committed node kills)."""
    n = budget_numbers()
    be, s = n["break_even_min"], n["scheduler_s"] / 60.0
    mistakes = (
        Mistake(be - n["other_scheduler_s"] / 60.0, "that takes the scheduler's share at Slurm's defaults: the task asks for the tuned one"),
        Mistake(be - n["reschedule_s"] / 60.0, "that takes off the whole measured reschedule: its start-up part is the toy's, the budget is for the fleet's"),
        Mistake(be - n["scheduler_s"], "that takes off seconds from minutes: divide the scheduler's share by 60"),
        Mistake(be - n["course_reschedule_min"], "that takes off the course's reschedule (what the 15 minutes leave), not the measured scheduler's share"),
        Mistake(be, "that is the break-even reschedule itself: the scheduler's share comes out of it before the start-up"),
    )
    return NumberCheck("15.2 start-up budget before a spare pays", be - s, 0.002, "min", mistakes)
