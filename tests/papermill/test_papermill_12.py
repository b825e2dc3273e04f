"""Notebook 12, the interview drill, follows an injected scenario: its model answers are that fleet's."""
from __future__ import annotations

import json
from pathlib import Path

import nbformat
import papermill
import pytest

from course_lib import Scenario, drill, ledger
from course_lib.answer import answer

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
NAME = "12-interview-drill.ipynb"


def test_drill_follows_an_injected_fleet(tmp_path, monkeypatch):
    ledger_path = tmp_path / "ledger.json"
    monkeypatch.setenv(ledger.ENV_VAR, str(ledger_path))
    src = NOTEBOOKS / NAME
    before = src.read_bytes()
    params = dict(n_gpus=16384, observed_failures=60, observed_days=7)
    papermill.execute_notebook(str(src), str(tmp_path / NAME), parameters=params, cwd=str(NOTEBOOKS),
                               kernel_name="python3", progress_bar=False)
    assert src.read_bytes() == before
    scenario = Scenario.from_params(**params)
    stored = {k.split(":", 1)[1]: v for k, v in json.loads(ledger_path.read_text()).items()}
    assert stored["floor_minutes_per_day"]["value"] == pytest.approx(answer(scenario, spread_draws=0).after.floor_minutes_per_day)
    nb = nbformat.read(tmp_path / NAME, as_version=4)
    shown = [o["data"]["text/markdown"] for c in nb.cells if "drill.ask(" in c.source for o in c.outputs if "text/markdown" in o.get("data", {})]
    assert shown == [x.drill_markdown() for x in drill.follow_ups(scenario)]  # each answer folded under its question
    assert shown != [x.drill_markdown() for x in drill.follow_ups()]
