"""The committed SDC-lab benchmark (benchmarks/sdclab_bench.py), read back for notebook 14, and what its
measured latencies make of the floor's silent-corruption term.

:func:`load_sdc_benchmark` returns ``benchmarks/results/sdclab.json`` as an :class:`SdcBenchmark`: the
detection cases (which detector caught each flip after how many steps), the false alarms, the
fingerprint's cost. :meth:`SdcBenchmark.latency_min` turns a detector's measured latency in steps into
minutes at a fleet's step time, the ``sdc_latency_min`` input of the course's model
(``course_lib.scenario.ModeInputs``); :meth:`SdcBenchmark.sdc_terms` puts each detector's latency into the
model's one SDC function, :func:`course_lib.floor.sdc_minutes_per_day` (nothing recomputed here).
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from .._validate import check_positive
from .detectors import DETECTORS

__all__ = ["SDCLAB_JSON", "SdcBenchmark", "SdcTerm", "load_sdc_benchmark"]

SDCLAB_JSON = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "sdclab.json"


class SdcTerm(NamedTuple):
    """One detector's row: the cases it caught (run on its own), its latency (measured steps; minutes at the fleet's
    step, the half step of the fault's own step added) and the floor's SDC term at that latency (min a day)."""

    detector: str
    cases: tuple
    steps: float
    latency_min: float
    minutes_per_day: float


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

    def detector_latency_steps(self, detectors=DETECTORS, *, replay_mean: bool = True) -> dict:
        """``{detector: steps}`` of every detector in ``detectors`` that caught a case, each run on its own:
        :meth:`latency_steps` of that detector alone (the largest latency among the cases it caught)."""
        return {d: self.latency_steps((d,), replay_mean=replay_mean) for d in detectors if self.caught((d,))}

    def latency_steps(self, detectors=DETECTORS, *, replay_mean: bool = True) -> float:
        """The detection latency, in steps, that every corruption ``detectors`` see is charged: of each caught
        case the latency of the first detector to see it, and the largest of those (the slowest kind of case,
        conservatively); 0 if they catch nothing. Steps count from the flip's step to the alarm's. A replay
        sees a fault at its next replayed step, so with ``replay_mean`` its cases count the mean over one
        replay period (the committed sweep: a fault starts anywhere in it), as every periodic check of the
        course does; without, the one start step its cases used."""
        worst = 0.0
        for c, d, steps in self.caught(detectors):
            if d == "replay" and replay_mean and "replay_mean" in self.raw["latency_steps"]:
                steps = self.raw["latency_steps"]["replay_mean"]
            worst = max(worst, float(steps))
        return worst

    def latency_min(self, step_min: float, detectors=DETECTORS, *, replay_mean: bool = True) -> float:
        """The detection latency in minutes at a fleet's step (``step_min``): (:meth:`latency_steps` + 1/2) x the step.

        The lab counts whole steps from the flip's step to the alarm's, and flips its bit just before that
        step's check; a real fault strikes anywhere in its step, so it is seen half a step later on average
        (the course's one convention for a periodic check, :func:`course_lib.modes.half_period`). For the
        replay (mean 1.5 steps over a 4-step period) that makes half its period, 2 steps."""
        from ..modes import half_period

        step = check_positive("step_min", step_min)
        return self.latency_steps(detectors, replay_mean=replay_mean) * step + half_period(step)

    def sdc_terms(self, day, step_min: float, detectors=DETECTORS) -> list:
        """One :class:`SdcTerm` per detector that caught a case (each on its own): the floor's SDC term of ``day`` (a
        :class:`course_lib.restart.RestartBudget`, the course's after-levers day) at that detector's
        :meth:`latency_min`, through the model's one SDC function :func:`course_lib.floor.sdc_minutes_per_day`."""
        from ..floor import sdc_minutes_per_day

        out = []
        for d, steps in self.detector_latency_steps(detectors).items():
            lat = self.latency_min(step_min, (d,))
            out.append(SdcTerm(d, tuple(c["case"] for c, _, _ in self.caught((d,))), steps, lat, sdc_minutes_per_day(day, lat)))
        return out

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

