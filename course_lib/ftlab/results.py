"""The committed comparison benchmark (benchmarks/ftlab_bench.py), read back for notebook 10.

``benchmarks/results/ftlab_compare.json`` holds, per failure kind (``kill``, ``hang``), the
medians of the whole-job restart (notebook 07's tuned settings) and of torchft (two replica
groups) on the same machine, their GPU-seconds lost per failure and ratio, both in the goodput
taxonomy's buckets, and the learned-timeout sweep. :func:`load_comparison` returns it, so the
notebook's conclusions are the committed measurement (deterministic output).
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["COMPARISON_JSON", "Comparison", "load_comparison", "ratio_with_groups"]

COMPARISON_JSON = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "ftlab_compare.json"


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
