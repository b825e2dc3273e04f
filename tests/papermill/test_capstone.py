"""The capstone (notebook 09) answers for another fleet: 16,384 GPUs at Meta RSC-1's rate.

Papermill runs it into tmp_path with injected parameters; the numbers it writes to the ledger
(COURSE_LEDGER) must be course_lib.answer's for the same inputs.
"""
from __future__ import annotations

import json
from pathlib import Path

import nbformat
import papermill
import pytest

from course_lib import Scenario, ledger
from course_lib.answer import answer
from course_lib.data import failure_logs
from course_lib.data import sourced

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
NAME = "09-your-fleet.ipynb"


def rsc1_rate_per_gpu_day() -> float:
    """Meta RSC-1's published failures per 1,000 node-days, per GPU-day (8 GPUs per node)."""
    row = failure_logs().where("run", "Meta RSC-1").rows[0]
    return row["published_per_1000_node_days"] / 1000.0 / row["gpus_per_node"]


def test_capstone_answers_for_16384_gpus_at_the_rsc1_rate(tmp_path, monkeypatch):
    ledger_path = tmp_path / "ledger.json"
    monkeypatch.setenv(ledger.ENV_VAR, str(ledger_path))
    src = NOTEBOOKS / NAME
    before = src.read_bytes()
    rate = rsc1_rate_per_gpu_day()
    assert rate == pytest.approx(sourced("floor_inputs.csv")["kokolis_rf"].value / 1000 / 8)
    params = dict(n_gpus=16384, rate_per_gpu_day=rate, write_cost_min=2.0 / 60, sim_runs=500)
    papermill.execute_notebook(str(src), str(tmp_path / NAME), parameters=params, cwd=str(NOTEBOOKS),
                               kernel_name="python3", progress_bar=False)
    assert src.read_bytes() == before, "papermill must never write over the source notebook"
    stored = {k.split(":", 1)[1]: v for k, v in json.loads(ledger_path.read_text()).items()}
    expected = answer(Scenario.from_params(n_gpus=16384, rate_per_gpu_day=rate, write_cost_min=2.0 / 60))
    for row in expected.rows():
        assert stored[row.key]["value"] == pytest.approx(row.value, rel=1e-12), row.key
    assert stored["failures_per_day"]["value"] == pytest.approx(16384 * rate)
    assert stored["baseline_loss_pct"]["value"] == pytest.approx(100 * expected.baseline_restart_fraction)
    assert stored["baseline_total_pct"]["value"] == pytest.approx(100 * expected.baseline.fraction_of_day)
    assert stored["floor_pct"]["value"] < stored["after_levers_pct"]["value"] < stored["baseline_loss_pct"]["value"]
    nb = nbformat.read(tmp_path / NAME, as_version=4)
    text = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
    assert expected.text in text and "16,384-GPU job" in text


def test_capstone_takes_counted_failures(tmp_path, monkeypatch):
    ledger_path = tmp_path / "ledger.json"
    monkeypatch.setenv(ledger.ENV_VAR, str(ledger_path))
    params = dict(n_gpus=2048, observed_failures=12, observed_days=7, detect_min=2.0, sim_runs=300)
    papermill.execute_notebook(str(NOTEBOOKS / NAME), str(tmp_path / NAME), parameters=params, cwd=str(NOTEBOOKS),
                               kernel_name="python3", progress_bar=False)
    stored = {k.split(":", 1)[1]: v for k, v in json.loads(ledger_path.read_text()).items()}
    expected = answer(Scenario.from_params(n_gpus=2048, rate_per_gpu_day=12 / (2048 * 7), detect_min=2.0))
    assert stored["rate_per_gpu_day"]["value"] == pytest.approx(12 / (2048 * 7))
    assert stored["floor_minutes_per_day"]["value"] == pytest.approx(expected.after.floor_minutes_per_day)
    assert stored["stage_detect_min"]["value"] == 2.0
