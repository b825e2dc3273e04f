"""The committed comparison benchmark (benchmarks/ftlab_bench.py), read back for notebook 10.

``benchmarks/results/ftlab_compare.json`` holds, per failure kind (``kill``, ``hang``), the
medians of the whole-job restart (notebook 07's tuned settings) and of torchft (two replica
groups) on the same machine, their GPU-seconds lost per failure and ratio, both in the goodput
taxonomy's buckets, and the learned-timeout sweep. :func:`load_comparison` returns it, so the
notebook's conclusions are the committed measurement (deterministic output).

``benchmarks/results/ftlab_groups.json`` (benchmarks/ftlab_groups_bench.py) holds the same comparison
measured at G = 2, 4, 8 replica groups, next to :func:`ratio_with_groups` extrapolated from the smallest
G's inputs; :func:`load_group_sweep` returns it, so that notebook 10 cites the measured sweep.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["COMPARISON_JSON", "GROUPS_JSON", "Comparison", "GroupSweep", "load_comparison", "load_group_sweep",
           "ratio_with_groups"]

COMPARISON_JSON = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "ftlab_compare.json"
GROUPS_JSON = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "ftlab_groups.json"


@dataclass(frozen=True)
class Comparison:
    """The committed comparison (seconds). summary: ``{kind: row}``; sweep: one dict per safety factor."""

    summary: dict
    sweep: list
    ranks: int
    groups: int
    step_s: float
    tuned: dict
    ft_config: dict
    machine: dict

    def ratio(self, kind: str) -> float:
        """Whole-job GPU-seconds lost per failure / torchft's, measured."""
        return self.summary[kind]["ratio"]


def ratio_with_groups(restart_s: float, stall_s: float, rejoin_s: float, groups) -> float:
    """Whole-job GPU-seconds lost / torchft's with ``groups`` groups of equal size, per GPU of the job.

    Whole job: every GPU x ``restart_s``; torchft: every GPU x ``stall_s`` + ``1/groups`` of them x
    ``rejoin_s``. Tends to ``restart_s / stall_s`` as the groups grow; at most ``groups x restart_s /
    rejoin_s`` when the stall vanishes.
    """
    from .._validate import check_non_negative, check_positive

    r, s, j = check_positive("restart_s", restart_s), check_non_negative("stall_s", stall_s), check_positive("rejoin_s", rejoin_s)
    g = check_positive("groups", groups)
    return r / (s + j / g)


def load_comparison(path: str | os.PathLike | None = None) -> Comparison:
    """Read the committed comparison JSON (default: :data:`COMPARISON_JSON`)."""
    p = Path(path) if path is not None else COMPARISON_JSON
    if not p.exists():
        raise FileNotFoundError(f"{p}: run `python benchmarks/ftlab_bench.py` to create it")
    d = json.loads(p.read_text())
    return Comparison(summary={s["scenario"]: s for s in d["summary"]}, sweep=d["sweep"], ranks=d["ranks"],
                      groups=d["groups"], step_s=d["step_s"], tuned=d["tuned"], ft_config=d["ft_config"],
                      machine=d["machine"])


@dataclass(frozen=True)
class GroupSweep:
    """The committed sweep over the number of replica groups (seconds, GPU-seconds).

    cells: ``{(kind, G): row}``, each row the medians at G (``ratio``: measured whole-job / torchft GPU-seconds
    lost; ``model_ratio``: :func:`ratio_with_groups` with the smallest G's inputs; ``model_err``; the whole-job
    restart ``whole_restart_s``; torchft's ``ft_stall_s`` and ``ft_rejoin_s``; ``ratio_default_timeout`` and
    ``ft_default_timeout_stall_s``: torchft at FtConfig's default collective timeout). groups: the G measured;
    targets: ``{target: met}``; default_timeout_s: that default timeout; machine, command: where and how it ran.
    """

    cells: dict
    groups: tuple
    targets: dict
    default_timeout_s: float
    machine: dict
    command: str

    def ratio(self, groups: int, kind: str = "kill") -> float:
        """The measured ratio at ``groups`` groups."""
        return self.cells[(kind, groups)]["ratio"]

    def model_ratio(self, groups: int, kind: str = "kill") -> float:
        """The model's ratio at ``groups`` groups, from the smallest G's measured inputs."""
        return self.cells[(kind, groups)]["model_ratio"]


def load_group_sweep(path: str | os.PathLike | None = None) -> GroupSweep:
    """Read the committed group sweep JSON (default: :data:`GROUPS_JSON`)."""
    p = Path(path) if path is not None else GROUPS_JSON
    if not p.exists():
        raise FileNotFoundError(f"{p}: run `python benchmarks/ftlab_groups_bench.py` to create it")
    d = json.loads(p.read_text())
    return GroupSweep(cells={(s["scenario"], s["groups"]): s for s in d["summary"]}, groups=tuple(d["groups"]),
                      targets=dict(d["targets"]), default_timeout_s=float(d["ft_default_timeout_s"]),
                      machine=d["machine"], command=d["command"])
