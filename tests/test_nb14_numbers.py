"""Notebook 14's spoken SDC numbers, read from the committed notebook's outputs and recomputed from the
committed SDC-lab table (benchmarks/results/sdclab.json) and the model's SDC term written out, not with the
functions the notebook calls."""
import json
import re
from pathlib import Path

import nbformat
import pytest

from course_lib import Scenario
from course_lib.answer import answer

ROOT = Path(__file__).resolve().parents[1]
NB = ROOT / "notebooks" / "14-silent-corruption-and-lemons.ipynb"
DETECTORS = ("fingerprint", "loss", "grad_norm", "replay")


def _outputs() -> str:
    book = nbformat.read(NB, as_version=4)
    return "\n".join(o.get("text", "") for c in book.cells if c.cell_type == "code" for o in c.get("outputs", [])
                     if o.get("output_type") == "stream")


def _expected():
    raw = json.loads((ROOT / "benchmarks" / "results" / "sdclab.json").read_text())
    sc = Scenario()
    f = answer(sc, spread_draws=0).after.floor_budget
    m = next(x for x in f.modes if x.mode == "sdc")
    per_sdc = f.failures_per_day * (1 - f.idle_share) * m.share  # SDC failures a day that cost GPU time

    def term(latency_min):  # lambda (1 - i) s (D + S + R + tau_p / 2 + L), below saturation
        return per_sdc * (m.detect + m.reschedule + m.reload + f.persisted_interval_min / 2 + latency_min)

    replay_mean = sum(x["latency"] for x in raw["replay_sweep"]) / len(raw["replay_sweep"])
    alone = {}
    for d in DETECTORS:
        seen = [c["latency"][d] for c in raw["cases"] if c["latency"][d] is not None]
        if seen:
            alone[d] = (len(seen), replay_mean if d == "replay" else max(seen))
    first = []
    for c in raw["cases"]:
        seen = [(v, DETECTORS.index(d), d) for d, v in c["latency"].items() if v is not None]
        if seen:
            v, _, d = min(seen)
            first.append(replay_mean if d == "replay" else v)
    invisible = sum(all(v is None for v in c["latency"].values()) for c in raw["cases"])
    return sc, term, alone, (len(first), max(first)), invisible


def test_notebook_14_speaks_the_sdc_term_at_each_detectors_measured_latency():
    sc, term, alone, (n_first, slowest), invisible = _expected()
    text = _outputs()
    step_s = 60 * sc.step_min
    assert f"a training step of {step_s:.1f} s" in text
    assert f"SDC term at the assumed {sc.modes.sdc_latency_min:g} min (an assumption): {term(sc.modes.sdc_latency_min):.2f} min a day" in text
    for d, (n, steps) in alone.items():
        lat_s = (steps + 0.5) * step_s  # the measured steps plus the half step of the fault's own step
        row = re.search(rf"^{d} on its own\s+(\d+)\s+([\d.]+)\s+([\d.]+) s\s+([\d.]+)$", text, re.M)
        assert row, d
        assert int(row[1]) == n and float(row[2]) == pytest.approx(steps)
        assert row[3] == f"{lat_s:.1f}" and row[4] == f"{term(lat_s / 60):.3f}"
    row = re.search(r"^all four, first alarm\s+(\d+)\s+([\d.]+)\s+([\d.]+) s\s+([\d.]+)$", text, re.M)
    lat_s = (slowest + 0.5) * step_s
    assert row and int(row[1]) == n_first and float(row[2]) == pytest.approx(slowest)
    assert row[3] == f"{lat_s:.1f}" and row[4] == f"{term(lat_s / 60):.3f}"
    row = re.search(r"^none of them\s+(\d+)\s+-\s+(\d+) min\s+([\d.]+)\s+\(the assumed hour", text, re.M)
    assert row and int(row[1]) == invisible and float(row[2]) == sc.modes.sdc_latency_min
    assert row[3] == f"{term(sc.modes.sdc_latency_min):.2f}"
    assert f"no latency at all: {term(0.0):.3f} min a day" in text
    assert (f"({lat_s:.0f} s, the slowest detector: the replay) instead of the assumed hour, the floor's SDC term is "
            f"{term(lat_s / 60):.2f} min a day instead of {term(sc.modes.sdc_latency_min):.2f}") in text
