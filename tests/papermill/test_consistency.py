"""One scenario, one answer: the notebooks on the answer path, the CLI and the dashboard agree.

For scenarios other than the course's (another per-GPU rate, another stage time, another
fleet), notebooks 03, 08 and 09 run under papermill with the same parameters into one ledger;
every quantity that two notebooks record under the same key must agree, and must equal what
``course_lib.answer.answer`` computes for the same Scenario. The budget CLI (``--json``) and
the dashboard's sentence must state the same after-levers loss and floor.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import papermill
import pytest

from course_lib import Scenario, ledger
from course_lib.__main__ import main as cli
from course_lib.answer import answer
from course_lib.widgets.floor import floor_text

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
ANSWER_PATH = ("03-anatomy-of-a-restart.ipynb", "08-the-floor.ipynb", "09-your-fleet.ipynb")
SMALL = {"08-the-floor.ipynb": {"sim_runs": 300, "sim_days": 10}, "09-your-fleet.ipynb": {"sim_runs": 300}}

SCENARIOS = {  # name: (notebook parameters, the same as CLI flags)
    "RSC-1 rate": ({"rate_per_gpu_day": 8.1e-4}, ["--rate", "8.1e-4"]),
    "slower detection": ({"detect_min": 12.0}, ["--detect", "12"]),
    "16,384 GPUs": ({"n_gpus": 16384}, ["--gpus", "16384"]),
}


def _run_answer_path(params: dict, tmp_path: Path, monkeypatch) -> list:
    ledger_path = tmp_path / "ledger.json"
    monkeypatch.setenv(ledger.ENV_VAR, str(ledger_path))
    for name in ANSWER_PATH:
        papermill.execute_notebook(str(NOTEBOOKS / name), str(tmp_path / name), parameters=params | SMALL.get(name, {}),
                                   cwd=str(NOTEBOOKS), kernel_name="python3", progress_bar=False)
    return ledger.entries(ledger_path)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(SCENARIOS))
def test_answer_path_agrees_for_one_scenario(name, tmp_path, monkeypatch, capsys):
    params, flags = SCENARIOS[name]
    scenario = Scenario.from_params(**params)
    ans = answer(scenario)
    items = _run_answer_path(params, tmp_path, monkeypatch)

    assert ledger.disagreements(items) == {}, "two notebooks recorded one quantity with different values"
    by_key = {}
    for e in items:
        by_key.setdefault(e.key, set()).add(e.notebook)
    shared = {k for k, nbs in by_key.items() if len(nbs) > 1}
    assert {"after_levers_pct", "after_levers_minutes_per_day"} <= shared
    rows = {r.key: r.value for r in ans.rows()}
    for e in items:
        if e.key in rows:
            assert e.value == pytest.approx(rows[e.key], rel=1e-12, abs=0), (e.notebook, e.key)

    assert cli(["budget", "--json", *flags]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["after_levers_pct"]["value"] == pytest.approx(rows["after_levers_pct"], rel=1e-12, abs=0)
    assert got["floor_pct"]["value"] == pytest.approx(rows["floor_pct"], rel=1e-12, abs=0)

    if set(params) <= {"n_gpus", "rate_per_gpu_day"}:  # what the dashboard's sliders can express
        text = floor_text(**params)
        assert f"{ans.after.floor_minutes_per_day:.2f} min/day" in text
        assert f"after the levers {ans.after.minutes_per_day:.2f} min/day" in text
    # and the notebooks did follow the scenario: the course's own answer differs from it
    default = {r.key: r.value for r in answer(Scenario()).rows()}
    changed = [e.key for e in items if e.key in default and not math.isclose(e.value, default[e.key], rel_tol=1e-9)]
    assert changed, "no recorded quantity moved: the parameters did not reach the notebooks"
