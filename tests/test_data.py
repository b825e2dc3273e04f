"""data/ loaders verify every file against the MANIFEST and return typed tables."""
from __future__ import annotations

import csv
import shutil

import numpy as np
import pytest

from course_lib import data
from course_lib.data import load_table


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


def test_failure_modes_cover_table5_and_shares_sum_to_one_per_component():
    t = data.failure_modes()
    assert sorted(t["component"]) == sorted(data.llama3_table5()["component"]) and len(t) == 18
    for row in t.rows:
        central = [row[f"{m}_share_central"] for m in data.MODES]
        assert np.isclose(sum(central), 1.0), row["component"]
        for m in data.MODES:
            assert 0 <= row[f"{m}_share_low"] <= row[f"{m}_share_central"] <= row[f"{m}_share_high"] <= 1
        # low + high of the component's uncertain pair of modes are consistent: the lows sum to <= 1 <= the highs
        assert sum(row[f"{m}_share_low"] for m in data.MODES) <= 1 + 1e-9 <= sum(row[f"{m}_share_high"] for m in data.MODES) + 2e-9
        assert row["label"] in {"P", "assumption"} and row["basis"] and row["source"]
    # the components whose name states the mode are read from the paper, the rest are the course's judgement
    labels = dict(zip(t["component"], t["label"]))
    assert labels["NCCL Watchdog Timeouts"] == "P" and labels["Silent Data Corruption"] == "P"
    assert labels["Faulty GPU"] == "assumption"


def test_mode_shares_are_count_weighted_and_bracket_the_central():
    shares = data.mode_shares()
    assert set(shares) == set(data.MODES)
    assert np.isclose(sum(s["central"] for s in shares.values()), 1.0)
    for s in shares.values():
        assert s["low"] <= s["central"] <= s["high"]
    # silent data corruption: Table 5's 6 of 419, from the count (not the printed 1.4 %)
    assert np.isclose(shares["sdc"]["central"], 6 / 419)
    # host loss: maintenance, PSU, chassis, CPU, system memory (32 + 3 + 2 + 2 + 2) and a share of IO board / SSD
    assert 41 / 419 <= shares["host_loss"]["central"] <= shares["host_loss"]["high"] <= 46 / 419


def test_bad_failure_mode_shares_are_refused_with_the_component(data_copy):
    path = data_copy / "failure_modes.csv"
    text = path.read_text()
    path.write_text(text.replace("Power Supply,host_loss,0,0,0", "Power Supply,host_loss,0,0.5,0", 1))
    data.update_manifest(data_copy)
    with pytest.raises(ValueError, match="Power Supply"):
        data.failure_modes(data_copy)


def test_restart_ranges_resolve_refs_and_convert_to_seconds():
    t = data.restart_ranges()
    assert not np.isnan(t["value"]).any(), "every row has a value or a ref that resolves"
    keys = list(t["key"])
    assert len(keys) == len(set(keys))
    by = {r["key"]: r for r in t.rows}
    assert by["torchrun_monitor_interval"]["value_s"] == 0.1
    assert by["nccl_collective_timeout"]["value_s"] == 600  # ref to levers.csv, 10 min
    assert by["cluster_health_check"]["value_s"] == 300  # ref to restart_stages.csv, 5 min
    assert by["bytecheckpoint_load_405b"]["value_s"] == 129.5  # ref to restart_stages.csv
    assert by["megascale_init_10k"]["stage"] == "job_init"  # initialisation, not a restart
    assert np.isnan(by["nvrx_safety_factor"]["value_s"]) and by["nvrx_safety_factor"]["value"] == 5
    for r in t.rows:
        assert r["mode"] in set(data.MODES) | {"any"}
        assert r["range_role"] in {"", "low", "central", "high"}
        assert r["label"] in {"P", "Q", "D", "assumption"} and r["source"]
        if r["label"] == "assumption":
            assert "[@" not in r["source"], "an assumption cites no source as its own"


def test_training_step_inputs_give_llama3s_step_time():
    v = {r["key"]: r["value"] for r in data.training_step().rows}
    step_s = 6 * v["llama3_405b_params"] * v["llama3_405b_tokens_per_batch"] / (
        v["llama3_405b_16k_gpus"] * v["llama3_405b_16k_tflops_per_gpu"] * 1e12)
    assert round(step_s, 1) == 5.9
    assert v["ckpt_bytes_per_param"] == 12 and v["ckpt_bytes_per_param_with_bf16_weights"] == 14
    assert v["training_memory_bytes_per_param"] == 16  # ref to levers.csv: memory, not checkpoint content


def test_a_ref_that_does_not_resolve_is_refused(data_copy):
    path = data_copy / "training_step.csv"
    path.write_text(path.read_text().replace("levers.csv:state_bytes_per_param", "levers.csv:no_such_row"))
    data.update_manifest(data_copy)
    with pytest.raises(ValueError, match="no_such_row"):
        data.training_step(data_copy)


def test_one_row_per_measurement_the_h200_numbers_live_only_in_h200_host():
    """A number measured on the H200 host is stored once (data/h200_host.csv); other files reference it."""
    from course_lib.data import DATA_DIR, manifest

    measured = {r["key"]: r["value"] for r in load_table("h200_host.csv").rows}
    for name in manifest():
        if name in ("h200_host.csv", "MANIFEST.csv", "sources.csv") or not name.endswith(".csv"):
            continue  # the vendored JSON trace, the lab's JSON lines and a licence hold no H200 number
        raw = list(csv.DictReader(open(DATA_DIR / name, newline="")))
        for row in raw:
            if "h200" not in " ".join(row.values()).lower():
                continue
            ref = row.get("ref", "")
            assert ref, f"{name}: row {row[next(iter(row))]!r} names the H200 measurement but copies its number"
        for resolved, row in zip(load_table(name).rows, raw):
            ref = row.get("ref", "")
            if "h200_host.csv:" in ref:
                key = ref.split("h200_host.csv:")[1].split(":")[0]
                filled = [v for k, v in resolved.items() if isinstance(v, float) and v == measured[key]]
                assert filled, f"{name}: {ref} did not resolve to {measured[key]}"


def test_a_ref_and_a_copied_number_cannot_coexist(tmp_path):
    import shutil

    from course_lib.data import DATA_DIR, update_manifest

    for p in DATA_DIR.iterdir():
        shutil.copy(p, tmp_path / p.name)
    text = (tmp_path / "levers.csv").read_text().replace("host_to_gpu_pinned,,GB/s", "host_to_gpu_pinned,55,GB/s")
    (tmp_path / "levers.csv").write_text(text)
    update_manifest(tmp_path)
    with pytest.raises(ValueError, match="keep the number in one place"):
        load_table("levers.csv", tmp_path)


def test_every_row_a_manifest_or_ref_names_exists():
    """Provenance cannot go stale: every data/ file and file:row a MANIFEST entry or a data cell names is there."""
    import csv
    import re

    from course_lib.data import DATA_DIR, load_table, manifest

    names = {p.name for p in DATA_DIR.glob("*.csv")}
    rows_of = {}
    for name in names - {"MANIFEST.csv"}:
        t = load_table(name)  # resolves every ref: a ref to a missing row raises here
        first = next(iter(t.columns))
        rows_of[name] = {str(r[first]) for r in t.rows}
    texts = [" ".join(row.values()) for row in manifest().values()]
    for name in names - {"MANIFEST.csv"}:
        with open(DATA_DIR / name, newline="") as fh:
            texts += [" ".join(v or "" for v in row.values()) for row in csv.DictReader(fh)]
    for text in texts:
        for fname in re.findall(r"(?:data/)?([a-z0-9_]+\.csv)", text):
            assert fname in names, f"{fname!r} is named but not in data/: {text[:120]}"
    for name in names - {"MANIFEST.csv"}:  # every ref cell names a row that exists (load_table resolved them; checked again here)
        t = load_table(name)
        for ref in t.columns.get("ref", ()):
            spec = str(ref).strip().rpartition("=")[2]
            if spec:
                fname, key = spec.split(":")[:2]
                assert key in rows_of[fname], f"{name}: ref {ref!r} names a row {fname} does not have"
    assert "two torchft rows" not in " ".join(texts)
