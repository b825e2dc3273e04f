"""Notebook 03 follows an injected scenario: its answer-table entries match course_lib.restart."""
from __future__ import annotations

import json
from pathlib import Path

import papermill
import pytest

from course_lib import Scenario, ledger
from course_lib import levers as lv
from course_lib import restart as rs

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
NAME = "03-anatomy-of-a-restart.ipynb"


def test_restart_notebook_follows_an_injected_fleet(tmp_path, monkeypatch):
    ledger_path = tmp_path / "ledger.json"
    monkeypatch.setenv(ledger.ENV_VAR, str(ledger_path))
    src = NOTEBOOKS / NAME
    before = src.read_bytes()
    params = dict(n_gpus=16384, failures_per_day=4, checkpoint_interval_min=12)
    papermill.execute_notebook(str(src), str(tmp_path / NAME), parameters=params, cwd=str(NOTEBOOKS),
                               kernel_name="python3", progress_bar=False)
    assert src.read_bytes() == before
    stored = {k.split(":", 1)[1]: v for k, v in json.loads(ledger_path.read_text()).items()}
    scenario = Scenario.from_params(**params)
    budget = rs.baseline_budget(scenario)
    final = lv.waterfall(budget, lv.default_levers(scenario))[-1].after
    sdc = scenario.modes.share("sdc")  # half the 12-minute interval, and an SDC's latency before its rewind
    assert stored["stage_rewind_min"]["value"] == pytest.approx((1 - sdc) * 6.0 + sdc * (scenario.modes.sdc_latency_min + 6.0))
    assert stored["stage_reschedule_min"]["value"] == pytest.approx(budget.stages.reschedule)
    assert stored["after_levers_pct"]["value"] == pytest.approx(100 * final.loss_fraction)
