"""Notebook 05 runs under papermill with an injected fleet and a smaller state (into a temp folder)."""
import json
import math
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
    assert set(stored) == {"snapshot_blocking_s_per_gib", "torch_save_blocking_s_per_gib", "sync_over_snapshot"}
    snap, sync = (stored[k]["value"] for k in ("snapshot_blocking_s_per_gib", "torch_save_blocking_s_per_gib"))
    # the recorded ratio is the ratio of the two recorded costs (one state, so per GiB and per save alike), whatever the
    # machine's timings; and each is a real number of seconds per GiB
    assert stored["sync_over_snapshot"]["value"] == pytest.approx(sync / snap, rel=1e-9)
    assert [stored[k]["unit"] for k in sorted(stored)] == ["s/GiB", "x", "s/GiB"] and all(0 < v < math.inf for v in (snap, sync))
    text = "".join(o.get("text", "") for c in nbformat.read(tmp_path / NAME, as_version=4).cells if c.cell_type == "code" for o in c.outputs)
    assert "every reload bit-exact                      : True" in text
    # the injected size and repeats were the ones measured, and the summary prints the costs the ledger holds
    assert "state measured  : 16MiB (toy training state), 1 saves per strategy" in text and "(1 per strategy)" in text
    assert f"the snapshot blocks {snap:.3g} s per GiB, torch.save + fsync {sync:.3g} s per GiB" in text
    # the 405B model at 12 B/param of checkpoint content, sharded over the injected fleet
    assert f"{Scenario().replace(n_gpus=16384).shard_bytes / GIB:8.3f} GiB of state per GPU on 16,384 GPUs" in text
