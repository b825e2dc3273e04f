"""The notebooks' answer table (course_lib.ledger): the file it appends to, the tolerance of a disagreement, the table's layout.

tests/test_scenario_ledger.py checks the ledger end to end in a few lines; here each part is
pinned by hand: the JSON text written (indent 1, through a .tmp file), the notebook order, the
exact tolerances (rel 1e-9, abs 1e-15) and the table as a literal string.
"""
from __future__ import annotations

import dataclasses
import json

import pytest

from course_lib import ledger
from course_lib.ledger import Entry


@pytest.fixture(autouse=True)
def fresh_ledger(monkeypatch):
    monkeypatch.delenv(ledger.ENV_VAR, raising=False)
    ledger.clear()
    yield
    ledger.clear()


def four():
    """Four results from four notebooks, recorded out of notebook order; 03 and 08 agree on one key."""
    ledger.record("02-fleet-mtbf", "mtbf", "fleet MTBF", 12.345, "h", ".1f")
    ledger.record("03-anatomy", "after_levers_pct", "loss after the levers", 0.196, "%")
    ledger.record("08-the-floor", "after_levers_pct", "loss after the levers", 0.196, "%")
    ledger.record("00-the-question", "loss", "baseline loss", 2.0833, "%", ".2f")


# ------------------------------------------------------------------------------------------ the table
def test_the_table_is_aligned_with_a_rule_under_the_header_and_values_right_justified():
    four()
    assert ledger.table() == "\n".join([
        "notebook         result                 value  unit",
        "---------------  ---------------------  -----  ----",
        "00-the-question  baseline loss           2.08  %",
        "02-fleet-mtbf    fleet MTBF              12.3  h",
        "03 08            loss after the levers  0.196  %",
    ])


def test_a_disagreement_shows_every_value_and_is_marked():
    ledger.record("03-anatomy", "after_levers_pct", "loss after the levers", 0.196, "%")
    ledger.record("09-your-fleet", "after_levers_pct", "loss after the levers", 0.44, "%")
    assert ledger.table() == "\n".join([
        "notebook  result                                  value  unit",
        "--------  -------------------------------  ------------  ----",
        "03 09     loss after the levers  DISAGREE  0.196 / 0.44  %",
    ])


def test_a_single_entry_keeps_its_notebooks_full_name_and_an_empty_table_says_so():
    assert ledger.table() == "(the answer table is empty)"
    assert ledger.table([]) == "(the answer table is empty)"
    items = [Entry("05-what-a-restart-costs", "restart_min", "minutes per restart", 15.0, "min")]
    assert ledger.table(items) == "\n".join([
        "notebook                 result               value  unit",
        "-----------------------  -------------------  -----  ----",
        "05-what-a-restart-costs  minutes per restart     15  min",
    ])


# ------------------------------------------------------------------------------------------ disagreements
def pair(a: float, b: float) -> list[Entry]:
    return [Entry("03-anatomy", "k", "a number", a, ""), Entry("08-the-floor", "k", "a number", b, "")]


@pytest.mark.parametrize("a,b,differ", [
    (1.0, 1.0, False),
    (1.0, 1.0 + 1e-10, False),   # 1e-10 apart, relative: the same number
    (1.0, 1.0 + 1.5e-9, True),   # past rel_tol 1e-9
    (1.0, 1.0 + 1e-8, True),
    (1e6, 1e6 + 1e-4, False),    # 1e-10 relative at another scale
    (1e6, 1e6 + 1.5e-3, True),   # 1.5e-9 relative
    (0.0, 1e-16, False),         # near zero only the absolute tolerance 1e-15 holds
    (0.0, 1.5e-15, True),
    (0.0, 1e-14, True),
    (-0.0, 0.0, False),
    (2.0, 1.0, True),
])
def test_notebooks_disagree_past_a_relative_1e_9_or_near_zero_an_absolute_1e_15(a, b, differ):
    expected = {"k": {"03-anatomy": a, "08-the-floor": b}} if differ else {}
    assert ledger.disagreements(pair(a, b)) == expected
    assert ledger.disagreements(pair(b, a)) == ({"k": {"03-anatomy": b, "08-the-floor": a}} if differ else {})


def test_disagreements_take_a_tolerance_compare_each_key_and_default_to_the_kernels_entries():
    assert ledger.disagreements(pair(1.0, 1.0 + 1e-8), rel_tol=1e-6) == {}
    three = pair(1.0, 1.0) + [Entry("09-your-fleet", "k", "a number", 1.5, "")]
    assert ledger.disagreements(three) == {"k": {"03-anatomy": 1.0, "08-the-floor": 1.0, "09-your-fleet": 1.5}}
    other = [Entry("03-anatomy", "j", "another", 7.0, ""), Entry("09-your-fleet", "j", "another", 7.0, "")]
    assert ledger.disagreements(pair(1.0, 2.0) + other) == {"k": {"03-anatomy": 1.0, "08-the-floor": 2.0}}
    assert ledger.disagreements() == {}
    ledger.record("03-anatomy", "k", "a number", 1.0)
    ledger.record("08-the-floor", "k", "a number", 3.0)
    assert ledger.disagreements() == {"k": {"03-anatomy": 1.0, "08-the-floor": 3.0}}


# ------------------------------------------------------------------------------------------ entries and the file
def test_an_entry_is_frozen_and_formats_its_value():
    e = ledger.record("00-the-question", "loss", "baseline loss", 2, "%")
    assert e == Entry("00-the-question", "loss", "baseline loss", 2.0, "%", ".3g") and type(e.value) is float
    with pytest.raises(dataclasses.FrozenInstanceError):
        e.value = 3.0  # type: ignore[misc]
    assert Entry("n", "k", "l", 0.6666666666666666, "").formatted() == "0.667"
    assert Entry("n", "k", "l", 12.345, "h", ".1f").formatted() == "12.3"


def test_entries_come_in_notebook_order_and_a_key_recorded_again_is_replaced():
    ledger.record("09-your-fleet", "x", "x", 1.0)
    ledger.record("03-anatomy", "y", "y", 2.0)
    ledger.record("09-your-fleet", "z", "z", 3.0)
    ledger.record("00-the-question", "w", "w", 4.0)
    ledger.record("03-anatomy", "y", "y", 5.0)  # replaces 2.0
    got = [(e.notebook, e.key, e.value) for e in ledger.entries()]
    assert got == [("00-the-question", "w", 4.0), ("03-anatomy", "y", 5.0), ("09-your-fleet", "x", 1.0),
                   ("09-your-fleet", "z", 3.0)]


def test_record_writes_the_ledger_file_as_indented_json_through_a_tmp_file(tmp_path, monkeypatch):
    path = tmp_path / "build" / "course" / "ledger.json"  # its folders do not exist yet
    monkeypatch.setenv("COURSE_LEDGER", str(path))
    ledger.record("00-the-question", "loss", "baseline loss", 2.5, "%", ".2f")
    assert path.read_text() == ('{\n'
                                ' "00-the-question:loss": {\n'
                                '  "notebook": "00-the-question",\n'
                                '  "key": "loss",\n'
                                '  "label": "baseline loss",\n'
                                '  "value": 2.5,\n'
                                '  "unit": "%",\n'
                                '  "fmt": ".2f"\n'
                                ' }\n'
                                '}')
    assert [p.name for p in path.parent.iterdir()] == ["ledger.json"]  # the .tmp replaced it, none left behind
    ledger.record("02-fleet-mtbf", "mtbf", "fleet MTBF", 12, "h")
    ledger.record("00-the-question", "loss", "baseline loss", 3.0, "%", ".2f")  # replaced in place
    stored = json.loads(path.read_text())
    assert list(stored) == ["00-the-question:loss", "02-fleet-mtbf:mtbf"]
    assert stored["00-the-question:loss"]["value"] == 3.0
    assert stored["02-fleet-mtbf:mtbf"] == {"notebook": "02-fleet-mtbf", "key": "mtbf", "label": "fleet MTBF",
                                            "value": 12.0, "unit": "h", "fmt": ".3g"}
    assert sorted(p.name for p in path.parent.iterdir()) == ["ledger.json"]


def test_each_kernel_appends_to_the_file_and_entries_reads_it_in_notebook_order(tmp_path, monkeypatch):
    path = tmp_path / "ledger.json"
    path.write_text(json.dumps({"09-your-fleet:x": {"notebook": "09-your-fleet", "key": "x", "label": "x", "value": 1.0,
                                                    "unit": "", "fmt": ".3g"}}))  # a notebook that ran before
    monkeypatch.setenv("COURSE_LEDGER", str(path))
    ledger.record("03-anatomy", "y", "y", 2.0)
    ledger.clear()  # the next notebook's kernel
    ledger.record("00-the-question", "w", "w", 4.0)
    assert [(e.notebook, e.key) for e in ledger.entries()] == [("00-the-question", "w")]  # the kernel knows its own
    assert [(e.notebook, e.key, e.value) for e in ledger.entries(path)] == [
        ("00-the-question", "w", 4.0), ("03-anatomy", "y", 2.0), ("09-your-fleet", "x", 1.0)]
    assert ledger.entries(str(path))[0] == Entry("00-the-question", "w", "w", 4.0, "", ".3g")
    assert ledger.entries(tmp_path / "none.json") == []


def test_an_empty_variable_writes_no_file(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_LEDGER", "")
    monkeypatch.chdir(tmp_path)
    ledger.record("00-the-question", "loss", "baseline loss", 2.5)
    assert list(tmp_path.iterdir()) == []
    assert [e.key for e in ledger.entries()] == ["loss"]
