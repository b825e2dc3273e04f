"""The committed restart benchmark (benchmarks/faultlab_bench.py), read back for notebook 07.

The benchmark measures the restart time of the lab's job under torchrun with default-like
and with tuned settings, several repetitions each, on one machine, and commits
``benchmarks/results/faultlab_restart.json``. :func:`load_benchmark` returns its medians and
settings so that the notebook shows the committed measurement (deterministic output),
next to the run the learner has just made.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from .events import STAGE_NAMES

__all__ = ["BENCHMARK_JSON", "BenchmarkSummary", "load_benchmark"]

BENCHMARK_JSON = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "faultlab_restart.json"


@dataclass(frozen=True)
class BenchmarkSummary:
    """Medians of the committed benchmark (seconds).

    medians: ``{(scenario, setting): {stage: s, ..., "total_s": s, "reps": n}}``.
    ratios: ``{scenario: default-like total / tuned total}``.
    settings: ``{"default-like": {...}, "tuned": {...}}`` (the levers' values that ran).
    scale: fleet-scale seconds per benchmark second. machine: where it ran.
    """

    medians: dict
    ratios: dict
    settings: dict
    scale: float
    machine: dict

    def stages(self, scenario: str, setting: str) -> dict[str, float]:
        """{stage: median seconds} of one scenario and setting."""
        row = self.medians[(scenario, setting)]
        return {k: row[k] for k in STAGE_NAMES}


def load_benchmark(path: str | os.PathLike | None = None) -> BenchmarkSummary:
    """Read the committed benchmark JSON (default: :data:`BENCHMARK_JSON`)."""
    p = Path(path) if path is not None else BENCHMARK_JSON
    if not p.exists():
        raise FileNotFoundError(f"{p}: run `python benchmarks/faultlab_bench.py` to create it")
    d = json.loads(p.read_text())
    medians = {(s["scenario"], s["setting"]): {**{k: s[k] for k in (*STAGE_NAMES, "total_s")}, "reps": s["reps"]}
               for s in d["summary"]}
    return BenchmarkSummary(
        medians=medians,
        ratios=dict(d["ratios"]),
        settings={"default-like": d["default_like"], "tuned": d["tuned"]},
        scale=d["scale"],
        machine=d["machine"],
    )
