"""The committed SDC-lab benchmark (benchmarks/sdclab_bench.py), read back for notebook 14, and what its
measured latencies make of the floor's silent-corruption term.

:func:`load_sdc_benchmark` returns ``benchmarks/results/sdclab.json`` as an :class:`SdcBenchmark`: the
detection cases (which detector caught each flip after how many steps), the false alarms, the
fingerprint's cost. :meth:`SdcBenchmark.latency_min` turns a detector set's measured latency in steps
into minutes at a fleet's step time, the ``sdc_latency_min`` input of the course's model
(``course_lib.modes.ModeInputs``); :func:`sdc_term_min_per_day` is that model's SDC term at a given
latency (``course_lib.modes.per_mode_floor``, nothing recomputed here).
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from .._validate import check_non_negative, check_positive
from .detectors import DETECTORS

__all__ = ["SDCLAB_JSON", "SdcBenchmark", "load_sdc_benchmark", "sdc_term_min_per_day"]

SDCLAB_JSON = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "sdclab.json"


@dataclass(frozen=True)
class SdcBenchmark:
    """The committed benchmark. cases: one dict per detection case (``case``, ``target``, ``bit``,
    ``persistent``, ``latency`` {detector: steps or None}, ``first``, ``corrupted_at_end``, ``recover``);
    false_alarms: {``runs``, ``steps``, ``by_detector``, ``factor_sweep``}; fingerprint_cost: one dict per
    model size; replay_sweep; settings; machine; raw: the whole JSON."""

    cases: list
    false_alarms: dict
    fingerprint_cost: list
    replay_sweep: list
    settings: dict
    machine: dict
    raw: dict

    def invisible(self, detectors=DETECTORS) -> list:
        """The cases none of ``detectors`` caught within the horizon."""
        return [c for c in self.cases if all(c["latency"][d] is None for d in detectors)]

    def caught(self, detectors=DETECTORS) -> list:
        """(case, first detector, latency in steps) of every case one of ``detectors`` caught."""
        out = []
        for c in self.cases:
            seen = {d: c["latency"][d] for d in detectors if c["latency"][d] is not None}
            if seen:
                d = min(seen, key=lambda k: (seen[k], DETECTORS.index(k)))
                out.append((c, d, seen[d]))
        return out

    def latency_steps(self, detectors=DETECTORS, *, replay_mean: bool = True) -> float:
        """The detection latency, in steps, that every corruption ``detectors`` see is charged: of each caught
        case the latency of the first detector to see it, and the largest of those (the slowest kind of case,
        conservatively). A replay sees a fault at its next replayed step, so with ``replay_mean`` its cases
        count the mean over one replay period (the committed sweep: a fault starts anywhere in it), as every
        periodic check of the course does; without, the one start step its cases used."""
        worst = 0.0
        for c, d, steps in self.caught(detectors):
            if d == "replay" and replay_mean and "replay_mean" in self.raw["latency_steps"]:
                steps = self.raw["latency_steps"]["replay_mean"]
            worst = max(worst, float(steps))
        return worst

    def latency_min(self, step_min: float, detectors=DETECTORS, *, replay_mean: bool = True) -> float:
        """:meth:`latency_steps` x the step (``step_min``, minutes): the detection latency at a fleet's step."""
        return self.latency_steps(detectors, replay_mean=replay_mean) * check_positive("step_min", step_min)

    def fingerprint_ns_per_param(self) -> float:
        """The digest's cost per parameter on the largest model measured (ns)."""
        return max(self.fingerprint_cost, key=lambda x: x["params"])["ns_per_param"]


def load_sdc_benchmark(path: str | os.PathLike | None = None) -> SdcBenchmark:
    """Read the committed benchmark JSON (default: :data:`SDCLAB_JSON`)."""
    p = Path(path) if path is not None else SDCLAB_JSON
    if not p.exists():
        raise FileNotFoundError(f"{p}: run `python benchmarks/sdclab_bench.py` to create it")
    d = json.loads(p.read_text())
    return SdcBenchmark(cases=d["cases"], false_alarms=d["false_alarms"], fingerprint_cost=d["fingerprint_cost"],
                        replay_sweep=d["replay_sweep"], settings=d["settings"], machine=d["machine"], raw=d)


def sdc_term_min_per_day(latency_min: float, scenario=None, inputs=None) -> float:
    """The floor's silent-corruption term (minutes a day) of the course's model with ``sdc_latency_min =
    latency_min`` (``course_lib.modes.per_mode_floor``; ``scenario`` default the course's, ``inputs`` the
    other mode inputs, default the course's)."""
    import dataclasses

    from .. import modes
    from ..scenario import Scenario

    inp = modes.ModeInputs() if inputs is None else inputs
    sc = Scenario() if scenario is None else scenario
    return modes.per_mode_floor(sc, dataclasses.replace(inp, sdc_latency_min=check_non_negative("latency_min", latency_min)))["sdc"]
