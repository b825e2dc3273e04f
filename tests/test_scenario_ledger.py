"""The Scenario holds the question's numbers; the ledger collects each notebook's results."""
from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from course_lib import MINUTES_PER_DAY, Scenario, ledger
from course_lib import _validate as v


def test_baseline_reproduces_the_question():
    s = Scenario()
    assert s.minutes_lost_per_day == 30
    assert math.isclose(s.loss_fraction, 30 / 1440)
    assert round(100 * s.loss_fraction, 2) == 2.08
    assert s.fleet_mtbf_hours == 12
    assert math.isclose(s.rate_per_gpu_day, 2 / 4096)
    assert s.mean_rewind_min <= s.minutes_per_restart


def test_scenario_is_frozen_and_replace_ignores_none():
    s = Scenario()
    with pytest.raises(Exception):
        s.n_gpus = 1  # type: ignore[misc]
    assert s.replace(n_gpus=None) == s
    assert s.replace(n_gpus=16384).n_gpus == 16384


def test_a_new_fleet_size_keeps_the_per_gpu_rate():
    s = Scenario()
    big = s.replace(n_gpus=16384)
    assert big.failures_per_day == pytest.approx(8.0, rel=1e-15, abs=0)
    assert big.rate_per_gpu_day == s.rate_per_gpu_day
    assert big.fleet_mtbf_hours == pytest.approx(3.0, rel=1e-15, abs=0)
    assert s.replace(n_gpus=16384, failures_per_day=2).failures_per_day == pytest.approx(2, rel=1e-15, abs=0)  # explicit value wins
    assert s.replace(observed_failures=60, observed_days=7, n_gpus=2048).rate_per_gpu_day == pytest.approx(60 / (2048 * 7), rel=1e-15, abs=0)
    with pytest.raises(ValueError, match="in one form"):
        s.replace(rate_per_gpu_day=1e-4, failures_per_day=2)
    with pytest.raises(ValueError, match="together"):
        s.replace(observed_failures=3)
    with pytest.raises(ValueError, match="no input"):
        s.replace(restarts_per_day=2)
    with pytest.raises(ValueError, match="n_gpus"):
        s.replace(n_gpus=0)


@given(st.integers(1, 10**6), st.floats(0.01, 100), st.floats(1, 120))
def test_loss_fraction_is_restarts_times_minutes_over_a_day(n, r, m):
    s = Scenario().replace(n_gpus=n, failures_per_day=r, minutes_per_restart=m + 5 + 129.5 / 60, checkpoint_interval_min=m)
    m = s.restart_total_min
    assert math.isclose(s.loss_fraction * MINUTES_PER_DAY, r * m)
    assert math.isclose(s.fleet_mtbf_hours * r, 24)


@pytest.mark.parametrize(
    "field,value,match",
    [
        ("n_gpus", 0, "n_gpus must be an integer >= 1"),
        ("n_gpus", 2.5, "n_gpus"),
        ("rate_per_gpu_day", -1, "rate_per_gpu_day must be a finite number > 0"),
        ("detect_min", -1, "detect_min must be a finite number >= 0"),
        ("detect_min", None, "detect_min"),
        ("state_gb_per_gpu", 0, "state_gb_per_gpu must be a finite number > 0"),
        ("write_cost_min", float("nan"), "write_cost_min"),
        ("snapshot_gb_per_s", 0, "snapshot_gb_per_s"),
        ("minutes_per_restart", float("nan"), "minutes_per_restart"),
        ("checkpoint_interval_min", float("inf"), "checkpoint_interval_min"),
        ("checkpoint_interval_min", 31, "minutes_per_restart must be >= detect \\+ reload \\+ rewind"),
    ],
)
def test_bad_scenario_is_rejected_naming_the_field(field, value, match):
    with pytest.raises(ValueError, match=match):
        Scenario(**{field: value})


@pytest.mark.parametrize("fn,value", [(v.check_positive, 0), (v.check_non_negative, -1e-9), (v.check_open_unit, 1.0), (v.check_finite, "3"), (v.check_int_non_negative, True)])
def test_validators_name_the_parameter(fn, value):
    with pytest.raises(ValueError, match="^widget_count "):
        fn("widget_count", value)


def test_ledger_records_in_kernel_and_file(tmp_path, monkeypatch):
    path = tmp_path / "ledger.json"
    monkeypatch.setenv(ledger.ENV_VAR, str(path))
    ledger.clear()
    ledger.record("02-fleet-mtbf", "mtbf", "fleet MTBF", 12.345, "h", ".1f")
    ledger.record("00-the-question", "loss", "baseline loss", 2.0833, "%", ".2f")
    stored = json.loads(path.read_text())
    assert set(stored) == {"02-fleet-mtbf:mtbf", "00-the-question:loss"}
    from_file = ledger.entries(path)
    assert [e.key for e in from_file] == ["loss", "mtbf"]  # notebook order, not insertion order
    text = ledger.table(from_file)
    assert "2.08" in text and "12.3" in text and text.splitlines()[0].startswith("notebook")
    assert [e.key for e in ledger.entries()] == ["loss", "mtbf"]
    ledger.clear()
    assert ledger.table() == "(the answer table is empty)"


def test_ledger_reports_notebooks_that_disagree(monkeypatch):
    monkeypatch.delenv(ledger.ENV_VAR, raising=False)
    ledger.clear()
    ledger.record("03-anatomy", "after_levers_pct", "loss after the levers", 0.196, "%")
    ledger.record("08-the-floor", "after_levers_pct", "loss after the levers", 0.196, "%")
    assert ledger.disagreements() == {}
    assert "03 08" in ledger.table() and "DISAGREE" not in ledger.table()
    ledger.record("09-your-fleet", "after_levers_pct", "loss after the levers", 0.44, "%")
    assert set(ledger.disagreements()["after_levers_pct"]) == {"03-anatomy", "08-the-floor", "09-your-fleet"}
    assert "DISAGREE" in ledger.table()
    ledger.clear()


def test_every_notebook_declares_the_same_scenario_parameters():
    import nbformat
    from pathlib import Path

    from course_lib.scenario import parameters_block

    root = Path(__file__).resolve().parents[1] / "notebooks"
    books = sorted(root.glob("[0-9][0-9]-*.ipynb"))
    assert len(books) >= 10
    for book in books:
        nb = nbformat.read(book, as_version=4)
        (cell,) = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
        assert cell.source.startswith(parameters_block()), book.name
