"""Notebook 13 reads another log and another fleet from its parameters: its numbers are that log's."""
from __future__ import annotations

import json
from pathlib import Path

import papermill
import pytest

from course_lib import Scenario, ledger
from course_lib import incidents as inc

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
NAME = "13-your-incident-log.ipynb"


def test_incident_log_notebook_follows_an_injected_log_and_job(tmp_path, monkeypatch):
    # a synthetic year of a 600-node fleet (gamma node rates, bursts), its faults written as GPU faults of the trace's classes
    log, _ = inc.synthetic_log(5, n_nodes=600, days=365.0, rate_per_node_day=4e-3, shape=0.6, burst_share=0.2)
    path = inc.write_csv(log, tmp_path / "my-log.csv")
    path.write_text(path.read_text().replace("Synthetic,independent", "Hardware Failure,GPU").replace("Synthetic,burst", "Hardware Failure,NIC"))
    ledger_path = tmp_path / "ledger.json"
    monkeypatch.setenv(ledger.ENV_VAR, str(ledger_path))
    src = NOTEBOOKS / NAME
    before = src.read_bytes()
    params = dict(n_gpus=8192, log_path=str(path), log_format="csv", fleet_nodes=600, gpus_per_node=8)
    papermill.execute_notebook(str(src), str(tmp_path / NAME), parameters=params, cwd=str(NOTEBOOKS),
                               kernel_name="python3", progress_bar=False)
    assert src.read_bytes() == before, "papermill must never write over the source notebook"
    stored = {k.split(":", 1)[1]: v["value"] for k, v in json.loads(ledger_path.read_text()).items()}
    expected = inc.answer_for_log(inc.read_csv(path), inc.Fleet(600, 8), 8192, base=Scenario.from_params(n_gpus=8192))
    assert stored["log_rate_per_gpu_day"] == pytest.approx(len(log) / (600 * 8 * 365.0))
    assert stored["log_floor_pct"] == pytest.approx(100 * expected.job_answer.after.floor_fraction)
    assert stored["log_lemon_factor"] == pytest.approx(expected.analysis.lemon.factor)
    trace = inc.answer_for_log(inc.load_trace(), inc.trace_fleet())
    assert stored["log_floor_pct"] != pytest.approx(100 * trace.job_answer.after.floor_fraction)
