"""The scheduler lab's committed measurements (``data/slurm_requeue.csv``, one row per run of
benchmarks/slurmlab_bench.py) and their medians per failure mode and setting: the one place the lab's
numbers are summarised (the benchmark's table, notebook 15, and the course's measured reschedule read it).

    from course_lib.slurmlab.results import read_runs, summary
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

from .. import data

__all__ = ["DATA_FILE", "PHASES", "STAGES", "TIMES", "Summary", "read_runs", "summary"]

DATA_FILE = data.DATA_DIR / "slurm_requeue.csv"
#: A run's phases, s since the failure (course_lib.slurmlab.lab's module doc defines each).
PHASES = ("noticed_s", "down_s", "requeued_s", "eligible_s", "started_s", "rendezvous_s", "loaded_s", "first_step_s",
          "progress_s")
#: The course's stages of one restart (notebook 03), from the phases.
STAGES = ("detect_s", "reschedule_s", "reload_s", "rewind_s")
#: The timed columns of a run's row.
TIMES = PHASES + STAGES


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
    median: dict
    low: dict
    high: dict


def read_runs(path: Path | str = DATA_FILE) -> list[dict]:
    """The rows of ``path`` with their times as floats (None where empty), ``attempts`` an int and
    ``identical`` a bool. Raises ValueError naming the row of a bad value or a missing column."""
    path = Path(path)
    with path.open(newline="") as fh:
        reader = csv.DictReader(fh)
        need = {"mode", "setting", "attempts", "identical", "slurmd_timeout_s", "cred_expire_s", *TIMES}
        missing = sorted(need - set(reader.fieldnames or ()))
        if missing:
            raise ValueError(f"{path}: columns missing: {', '.join(missing)}")
        rows = []
        for line, r in enumerate(reader, start=2):
            try:
                out = dict(r, attempts=int(r["attempts"]), slurmd_timeout_s=float(r["slurmd_timeout_s"]),
                           cred_expire_s=float(r["cred_expire_s"]))
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
        for key in ("attempts", "slurmd_timeout_s", "cred_expire_s"):
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
        out[mode, setting] = Summary(mode, setting, len(rs), rs[0]["attempts"], rs[0]["slurmd_timeout_s"],
                                     rs[0]["cred_expire_s"], med, low, high)
    return out
