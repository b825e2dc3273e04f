"""The scheduler lab's committed measurements (``data/slurm_requeue.csv``, one row per run of
benchmarks/slurmlab_bench.py) and their medians per failure mode and setting: the one place the lab's
numbers are summarised (the benchmark's table, notebook 15, and the Scenario's reschedule range read it;
the lab itself is course_lib.slurmlab, this is the model's side of it).

    from course_lib.requeue import read_runs, summary
    s = summary(read_runs())            # {("node_kill", "tuned"): Summary(n=3, median={...}, low={...}, high={...}), ...}
    s["node_kill", "default"].median["reschedule_s"]

A phase that does not occur in a run (a worker crash has no DOWN, no requeue) is None there and in the
summary. Runs that did not end bit-identical to the uninterrupted reference are refused: their phases
would time a run that went wrong.
"""
from __future__ import annotations

import csv
import statistics
from dataclasses import dataclass
from pathlib import Path

from . import data

__all__ = ["DATA_FILE", "LOST_NODE_MODES", "PARTS", "PHASES", "SETTING_COLUMNS", "STAGES", "TIMES", "Parts", "Summary", "read_runs", "restart_parts", "scheduler_share_s", "summary"]

DATA_FILE = data.DATA_DIR / "slurm_requeue.csv"
#: A run's phases, s since the failure (course_lib.slurmlab.lab's module doc defines each).
PHASES = ("noticed_s", "down_s", "requeued_s", "eligible_s", "started_s", "rendezvous_s", "loaded_s", "first_step_s",
          "progress_s")
#: The course's stages of one restart (notebook 03), from the phases.
STAGES = ("detect_s", "reschedule_s", "reload_s", "rewind_s")
#: The scheduler's settings of a run's row (s; course_lib.slurmlab.SlurmSettings; 0: no periodic health check).
SETTING_COLUMNS = ("slurmd_timeout_s", "cred_expire_s", "health_check_interval_s")
#: The timed columns of a run's row.
TIMES = PHASES + STAGES
#: The failure modes of a lost node (dead, or its link cut): silent to Slurm, which sets it DOWN after SlurmdTimeout.
#: Their scheduler's share is what the Scenario's reschedule range reads (a node its health check drains is
#: requeued by the job itself, a path of its own).
LOST_NODE_MODES = ("node_kill", "link_cut")
#: A requeued restart split by who spends it (:func:`restart_parts`).
PARTS = ("detect_s", "scheduler_s", "startup_s", "reschedule_s")


@dataclass(frozen=True)
class Summary:
    """The runs of one mode x setting: how many, and each timed column's median, lowest and highest
    (None where the phase does not occur in these runs)."""

    mode: str
    setting: str
    n: int
    attempts: int
    slurmd_timeout_s: float
    cred_expire_s: float
    health_check_interval_s: float
    median: dict
    low: dict
    high: dict

    def text(self, key: str, fmt: str = ".1f") -> str:
        """``key``'s median in seconds, with its lowest to highest run where they differ: "394.9 s (390.2-399.0)"."""
        if self.median[key] is None:
            return "-"
        spread = f" ({self.low[key]:{fmt}}-{self.high[key]:{fmt}})" if self.high[key] > self.low[key] else ""
        return f"{self.median[key]:{fmt}} s{spread}"


def read_runs(path: Path | str = DATA_FILE) -> list[dict]:
    """The rows of ``path`` with their times and settings as floats (None where empty), ``attempts`` an int and
    ``identical`` a bool. Raises ValueError naming the row of a bad value or a missing column."""
    path = Path(path)
    with path.open(newline="") as fh:
        reader = csv.DictReader(fh)
        need = {"mode", "setting", "attempts", "identical", *SETTING_COLUMNS, *TIMES}
        missing = sorted(need - set(reader.fieldnames or ()))
        if missing:
            raise ValueError(f"{path}: columns missing: {', '.join(missing)}")
        rows = []
        for line, r in enumerate(reader, start=2):
            try:
                out = dict(r, attempts=int(r["attempts"]), **{k: float(r[k]) for k in SETTING_COLUMNS})
                out.update({k: (float(r[k]) if r[k] != "" else None) for k in TIMES})
            except ValueError as exc:
                raise ValueError(f"{path}, line {line}: {exc}") from None
            if r["identical"] not in ("True", "False"):
                raise ValueError(f"{path}, line {line}: identical must be True or False (got {r['identical']!r})")
            out["identical"] = r["identical"] == "True"
            rows.append(out)
    return rows


def summary(rows: list[dict]) -> dict:
    """``{(mode, setting): Summary}`` over ``rows`` (:func:`read_runs`), in the rows' order of first
    appearance. Raises ValueError for no rows, a run that did not end bit-identical, or runs of one mode
    x setting that differ in their settings or their number of attempts."""
    if not rows:
        raise ValueError("rows must hold at least one run")
    groups: dict = {}
    for r in rows:
        if not r["identical"]:
            raise ValueError(f"run {r.get('run')!r} ({r['mode']}, {r['setting']}) did not end bit-identical: its phases are not a measurement")
        groups.setdefault((r["mode"], r["setting"]), []).append(r)
    out = {}
    for (mode, setting), rs in groups.items():
        for key in ("attempts", *SETTING_COLUMNS):
            if len({r[key] for r in rs}) != 1:
                raise ValueError(f"the runs of {mode}, {setting} differ in {key}: {sorted({r[key] for r in rs})}")
        med, low, high = {}, {}, {}
        for k in TIMES:
            vals = [r[k] for r in rs if r[k] is not None]
            if vals and len(vals) != len(rs):
                raise ValueError(f"{k} is missing from some runs of {mode}, {setting}")
            med[k] = statistics.median(vals) if vals else None
            low[k] = min(vals) if vals else None
            high[k] = max(vals) if vals else None
        out[mode, setting] = Summary(mode, setting, len(rs), rs[0]["attempts"], *(rs[0][k] for k in SETTING_COLUMNS), med, low, high)
    return out


@dataclass(frozen=True)
class Parts:
    """A requeued restart's parts over the runs of one mode x setting (s): each part's median, lowest and highest,
    the medians of the per-run differences (not differences of medians)."""

    mode: str
    setting: str
    n: int
    median: dict
    low: dict
    high: dict
    runs: tuple = ()  # each run's parts, in the rows' order


def restart_parts(rows: list[dict], mode: str, setting: str) -> Parts:
    """A lost node's restart split by who spends it, per run then summarised (notebook 15), in seconds:

    - ``detect_s``: the failure to the node set DOWN (Slurm's ``SlurmdTimeout`` and its ping cycle), or drained by
      its health check (``HealthCheckInterval``);
    - ``scheduler_s``: DOWN (or DRAIN) to the completed attempt's Start (the requeue, ``cred_expire``'s wait before a
      requeued job may start, the scheduler's cycle): what Slurm's settings decide, at any scale;
    - ``startup_s``: that Start to every rank's process group ready (srun, torchrun, the interpreter, the
      rendezvous): the job's own start-up, a toy's here, a fleet's far longer;
    - ``reschedule_s``: the course's reschedule stage, the run's own (``scheduler_s + startup_s``).

    rows: :func:`read_runs`. Raises ValueError when no run of ``mode`` x ``setting`` was requeued (a worker
    crash or a hang never reaches the scheduler) or when a run lacks a phase.
    """
    runs = [r for r in rows if r["mode"] == mode and r["setting"] == setting]
    if not runs:
        raise ValueError(f"no run of mode {mode!r} at setting {setting!r} in the rows "
                         f"(there are: {sorted({(r['mode'], r['setting']) for r in rows})})")
    per_run = []
    for r in runs:
        need = ("detect_s", "reschedule_s", "down_s", "started_s")
        if r["attempts"] < 2 or any(r[k] is None for k in need):
            raise ValueError(f"run {r.get('run')!r} ({mode}, {setting}) was not requeued (attempts {r['attempts']}): "
                             "only a node Slurm sets DOWN has a scheduler's share")
        scheduler = r["started_s"] - r["down_s"]  # the run's own stages (the lab's stages_s) are split, not recomputed
        per_run.append({"detect_s": r["detect_s"], "scheduler_s": scheduler, "startup_s": r["reschedule_s"] - scheduler,
                        "reschedule_s": r["reschedule_s"]})
    med = {k: statistics.median(x[k] for x in per_run) for k in PARTS}
    return Parts(mode, setting, len(per_run), med, {k: min(x[k] for x in per_run) for k in PARTS},
                 {k: max(x[k] for x in per_run) for k in PARTS}, tuple(per_run))


def scheduler_share_s(rows: list[dict], setting: str) -> float:
    """The scheduler's share of a requeue at ``setting`` (s; notebook 15): the median of :func:`restart_parts`'
    per-run ``scheduler_s`` over every requeued run of that setting whose node was lost (:data:`LOST_NODE_MODES`:
    killed or its link cut, Slurm sees the same silent node; a drained node's job requeues itself, another path). What Slurm's settings decide, so it carries to a fleet
    unscaled; the job's start-up does not (the Scenario adds a fleet's).

    rows: :func:`read_runs`. Raises ValueError naming the setting when no run of it was requeued.
    """
    modes = sorted({r["mode"] for r in rows if r["setting"] == setting and r["attempts"] >= 2 and r["mode"] in LOST_NODE_MODES})
    if not modes:
        raise ValueError(f"setting must be one with a requeued run of a lost node in the rows (got {setting!r}; there are: "
                         f"{sorted({r['setting'] for r in rows if r['attempts'] >= 2 and r['mode'] in LOST_NODE_MODES})})")
    return statistics.median(run["scheduler_s"] for mode in modes for run in restart_parts(rows, mode, setting).runs)
