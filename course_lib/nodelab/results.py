"""The committed nodes-lab benchmark (benchmarks/nodelab_bench.py), read back for notebook 11.

:func:`load_nodelab_benchmark` returns the medians, ratios and settings of
``benchmarks/results/nodelab.json`` so that the notebook's conclusions come from the committed
measurement (deterministic output), next to the run the learner has just made.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from ..faultlab.events import STAGE_NAMES

__all__ = ["NODELAB_JSON", "NodeLabBenchmark", "load_nodelab_benchmark"]

NODELAB_JSON = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "nodelab.json"


@dataclass(frozen=True)
class NodeLabBenchmark:
    """Medians of the committed benchmark (seconds).

    medians: ``{setting: {stage: s, ..., "total_s": s, "reps": n}}``; ratios: ``{setting without
    a spare: its median rescheduling / the hot spare's}``; settings: what each setting ran;
    scale: fleet-scale seconds per benchmark second; all_bit_identical: every faulty run ended
    with the final state of the run that never failed; tier_medians: ``{"buddy restore" |
    "persisted fallback": {stage: s, ..., "resumed": [steps], "tiers": [...]}}`` of the two-tier
    part; raw: the whole JSON.
    """

    medians: dict
    ratios: dict
    settings: dict
    scale: float
    all_bit_identical: bool
    machine: dict
    tier_medians: dict
    raw: dict

    def stages(self, setting: str) -> dict[str, float]:
        """{stage: median seconds} of one setting."""
        return {k: self.medians[setting][k] for k in STAGE_NAMES}


def load_nodelab_benchmark(path: str | os.PathLike | None = None) -> NodeLabBenchmark:
    """Read the committed benchmark JSON (default: :data:`NODELAB_JSON`)."""
    p = Path(path) if path is not None else NODELAB_JSON
    if not p.exists():
        raise FileNotFoundError(f"{p}: run `python benchmarks/nodelab_bench.py` (as root) to create it")
    d = json.loads(p.read_text())
    medians = {s["setting"]: {**{k: s[k] for k in (*STAGE_NAMES, "total_s")}, "reps": s["reps"]} for s in d["summary"]}
    tiers = {s["setting"]: {**{k: s[k] for k in (*STAGE_NAMES, "total_s")}, "reps": s["reps"],
                            "resumed": d["tier_resumed"][s["setting"]], "tiers": d["tier_tiers"][s["setting"]]}
             for s in d.get("tier_summary", [])}
    return NodeLabBenchmark(medians=medians, ratios=dict(d["ratios"]), settings=d["settings"], scale=d["scale"],
                            all_bit_identical=bool(d["all_bit_identical"]), machine=d["machine"], tier_medians=tiers, raw=d)
