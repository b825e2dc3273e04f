"""data/ loaders verify every file against the MANIFEST and return typed tables."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

from course_lib import data


def test_every_file_in_data_is_listed_and_matches():
    listed = data.manifest()
    on_disk = {p.name for p in data.DATA_DIR.iterdir() if p.is_file() and p.name != data.MANIFEST_NAME}
    assert on_disk == set(listed), "every data file needs a MANIFEST row and vice versa"
    for name, row in listed.items():
        data.verify(name)
        assert row["label"], f"{name}: MANIFEST label (P/Q/D) missing"
        assert row["source"], f"{name}: MANIFEST source missing"
        assert row["units"], f"{name}: MANIFEST units missing"


def test_llama3_table5_is_typed_and_sums_to_419():
    t = data.llama3_table5()
    assert t["count"].dtype.kind == "i"
    assert int(t["count"].sum()) == 419
    assert len(t) == 18
    assert t.where("category", "GPU")["count"].sum() == 268


def test_failure_logs_columns_are_typed():
    t = data.failure_logs()
    assert t["gpus"].dtype == float  # has empty cells (published rates) -> nan
    llama = t.where("run", "Llama 3 405B")
    assert llama["events_low"][0] == 419 and llama["period_days"][0] == 54
    assert all(isinstance(s, str) and s for s in t["source"])


@pytest.fixture
def data_copy(tmp_path):
    shutil.copytree(data.DATA_DIR, tmp_path / "data")
    return tmp_path / "data"


def test_edited_file_is_refused_with_its_name(data_copy):
    path = data_copy / "llama3_table5.csv"
    path.write_text(path.read_text().replace("148", "149"))
    with pytest.raises(data.ChecksumError, match="llama3_table5.csv"):
        data.llama3_table5(data_copy)


def test_unlisted_file_is_refused(data_copy):
    (data_copy / "extra.csv").write_text("a\n1\n")
    with pytest.raises(data.ChecksumError, match="extra.csv"):
        data.load_table("extra.csv", data_copy)


def test_update_manifest_accepts_a_deliberate_change(data_copy):
    path = data_copy / "llama3_table5.csv"
    path.write_text(path.read_text().replace("148", "149"))
    assert data.update_manifest(data_copy) == ["llama3_table5.csv"]
    assert data.llama3_table5(data_copy)["count"][0] == 149


def test_rows_round_trip_the_columns():
    t = data.llama3_table5()
    rows = t.rows
    assert rows[0]["component"] == "Faulty GPU" and rows[0]["count"] == 148
    assert np.isclose(sum(r["printed_percent"] for r in rows), t["printed_percent"].sum())
