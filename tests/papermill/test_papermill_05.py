"""Notebook 05 runs under papermill with an injected fleet and a smaller state (into a temp folder)."""
import json
from pathlib import Path

import nbformat
import papermill
import pytest

from course_lib import Scenario, ledger
from course_lib.sizing import GIB

ROOT = Path(__file__).resolve().parents[2]
NAME = "05-write-cost.ipynb"


@pytest.mark.slow
def test_notebook_05_follows_injected_parameters(tmp_path, monkeypatch):
    ledger_path = tmp_path / "ledger.json"
    monkeypatch.setenv(ledger.ENV_VAR, str(ledger_path))
    src = ROOT / "notebooks" / NAME
    before = src.read_bytes()
    papermill.execute_notebook(str(src), str(tmp_path / NAME), parameters={"n_gpus": 16384, "size": "16MiB", "repeats": 1},
                               cwd=str(src.parent), kernel_name="python3", progress_bar=False)
    assert src.read_bytes() == before
    stored = {k.split(":", 1)[1]: v for k, v in json.loads(ledger_path.read_text()).items()}
    assert {"snapshot_blocking_s_per_gib", "torch_save_blocking_s_per_gib", "sync_over_snapshot"} <= set(stored)
    assert all(stored[k]["value"] > 0 for k in ("snapshot_blocking_s_per_gib", "torch_save_blocking_s_per_gib"))
    text = "".join(o.get("text", "") for c in nbformat.read(tmp_path / NAME, as_version=4).cells if c.cell_type == "code" for o in c.outputs)
    assert "every reload bit-exact                      : True" in text
    # the 405B model at 12 B/param of checkpoint content, sharded over the injected fleet
    assert f"{Scenario().replace(n_gpus=16384).shard_bytes / GIB:8.3f} GiB of state per GPU on 16,384 GPUs" in text
