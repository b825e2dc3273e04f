"""Papermill runs notebooks with injected parameters into a temporary folder (never over the source)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import papermill
import pytest

from course_lib import Scenario, ledger

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"


def run(name: str, tmp_path: Path, monkeypatch, **params) -> dict:
    """Execute notebooks/<name> with ``params`` into tmp_path; return the ledger it wrote."""
    ledger_path = tmp_path / "ledger.json"
    monkeypatch.setenv(ledger.ENV_VAR, str(ledger_path))
    src = NOTEBOOKS / name
    before = src.read_bytes()
    papermill.execute_notebook(str(src), str(tmp_path / name), parameters=params, cwd=str(NOTEBOOKS), kernel_name="python3", progress_bar=False)
    assert src.read_bytes() == before, "papermill must never write over the source notebook"
    return {k.split(":", 1)[1]: v for k, v in json.loads(ledger_path.read_text()).items()}


def test_question_notebook_follows_an_injected_fleet(tmp_path, monkeypatch):
    stored = run("00-the-question.ipynb", tmp_path, monkeypatch, n_gpus=16384, failures_per_day=8, minutes_per_restart=13)
    expected = Scenario.from_params(n_gpus=16384, failures_per_day=8, minutes_per_restart=13)
    assert stored["baseline_loss_pct"]["value"] == pytest.approx(100 * expected.loss_fraction)
    assert stored["baseline_minutes_per_day"]["value"] == pytest.approx(104)
    nb = nbformat.read(tmp_path / "00-the-question.ipynb", as_version=4)
    injected = [c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert injected and "n_gpus = 16384" in injected[0].source


def test_every_notebook_declares_its_parameters():
    for path in sorted(NOTEBOOKS.glob("[0-9][0-9]-*.ipynb")):
        assert papermill.inspect_notebook(str(path)), f"{path.name} has no papermill 'parameters' cell"


def test_make_course_runner_names_the_failing_notebook_and_cell(tmp_path):
    (tmp_path / "notebooks").mkdir()
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [
        nbformat.v4.new_code_cell("n_gpus = None", metadata={"tags": ["parameters"]}),
        nbformat.v4.new_code_cell("x = 1"),
        nbformat.v4.new_code_cell("raise RuntimeError('boom from the test')"),
    ]
    nbformat.write(nb, tmp_path / "notebooks" / "00-broken.ipynb")
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "run_course.py"), "--root", str(tmp_path), "--out", str(tmp_path / "build"), "--no-solutions"],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 1
    assert "FAILED: notebooks/00-broken.ipynb" in proc.stderr
    assert "RuntimeError: boom from the test" in proc.stderr
    assert "cell" in proc.stderr


def test_course_runner_reads_numbers_and_rejects_a_bad_scenario_before_running():
    sys.path.insert(0, str(ROOT / "scripts"))
    import run_course

    assert run_course.parse_params(["rate_per_gpu_day=8e-4", "n_gpus=16384", "size=1GiB"]) == {
        "rate_per_gpu_day": 8e-4, "n_gpus": 16384, "size": "1GiB"}
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "run_course.py"), "--param", "detect_min=-1",
                           "--out", "/nonexistent-course-build"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "detect_min must be a finite number >= 0" in proc.stderr
