"""The committed nodes-lab benchmark (benchmarks/nodelab_bench.py), read back for notebook 11.

:func:`load_nodelab_benchmark` returns the medians, ratios and settings of
``benchmarks/results/nodelab.json`` so that the notebook's conclusions come from the committed
measurement (deterministic output), next to the run the learner has just made.
:func:`load_storage_link` returns ``benchmarks/results/storage_link.json`` (benchmarks/storage_link_bench.py:
a restore from the buddy's memory vs the persisted checkpoint behind a shaped link), so that notebook 11
cites the measured ratio.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..faultlab.events import STAGE_NAMES

__all__ = ["NODELAB_JSON", "STORAGE_LINK_JSON", "NodeLabBenchmark", "StorageLinkBenchmark", "load_nodelab_benchmark",
           "load_storage_link"]

NODELAB_JSON = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "nodelab.json"
STORAGE_LINK_JSON = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "storage_link.json"


@dataclass(frozen=True)
class NodeLabBenchmark:
    """Medians of the committed benchmark (seconds).

    medians: ``{setting: {stage: s, ..., "total_s": s, "reps": n}}``; ratios: ``{setting without
    a spare: its median rescheduling / the hot spare's}``; settings: what each setting ran;
    scale: fleet-scale seconds per benchmark second; all_bit_identical: every faulty run ended
    with the final state of the run that never failed; tier_medians: ``{"buddy restore" |
    "persisted fallback": {stage: s, ..., "resumed": [steps], "tiers": [...]}}`` of the two-tier
    part; raw: the whole JSON; phases: ``{setting: {phase: median s}}``, the rescheduling split at the
    rendezvous's events (:data:`course_lib.nodelab.phases.PHASES`, ``None`` where a setting has no such phase;
    ``gated_by``: what each repeat's new round waited for), empty for a table measured before the lab logged them.
    """

    medians: dict
    ratios: dict
    settings: dict
    scale: float
    all_bit_identical: bool
    machine: dict
    tier_medians: dict
    raw: dict
    phases: dict = field(default_factory=dict)

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
    from .phases import PHASES

    phases = {s["setting"]: {k: s[k] for k in (*PHASES, "gated_by")} for s in d["summary"] if "heartbeat_expiry" in s}
    return NodeLabBenchmark(medians=medians, ratios=dict(d["ratios"]), settings=d["settings"], scale=d["scale"],
                            all_bit_identical=bool(d["all_bit_identical"]), machine=d["machine"], tier_medians=tiers, raw=d,
                            phases=phases)


@dataclass(frozen=True)
class StorageLinkBenchmark:
    """The committed storage-link benchmark (seconds).

    sizes: ``{MiB: row}``, each row the medians at that state size (``buddy_fetch_s``, ``persisted_fetch_s``,
    their ``*_restore_s`` with the sha256 check, ``ratio_fetch`` and ``ratio_restore``: persisted / buddy,
    ``bit_exact``); links: the two shaped links (``rate_mbit``, ``latency_ms``), assumptions scaled to this
    machine; targets: ``{target: met}``; machine, command: where and how it ran.
    """

    sizes: dict
    links: dict
    targets: dict
    machine: dict
    command: str

    def ratio(self, size_mib: int, what: str = "fetch") -> float:
        """persisted / buddy at ``size_mib`` MiB: ``what`` ``"fetch"`` (connect -> last byte) or ``"restore"``."""
        if what not in ("fetch", "restore"):
            raise ValueError(f"what must be 'fetch' or 'restore' (got {what!r})")
        return self.sizes[size_mib][f"ratio_{what}"]


def load_storage_link(path: str | os.PathLike | None = None) -> StorageLinkBenchmark:
    """Read the committed storage-link JSON (default: :data:`STORAGE_LINK_JSON`)."""
    p = Path(path) if path is not None else STORAGE_LINK_JSON
    if not p.exists():
        raise FileNotFoundError(f"{p}: run `python benchmarks/storage_link_bench.py` (as root) to create it")
    d = json.loads(p.read_text())
    return StorageLinkBenchmark(sizes={s["size_mib"]: s for s in d["summary"]}, links=d["links"], targets=dict(d["targets"]),
                                machine=d["machine"], command=d["command"])
