"""A 2-rank torchrun job saves and reloads a sharded state with DCP (gloo on CPU)."""
import json
import os
import subprocess
import sys

import pytest


@pytest.mark.slow
def test_two_ranks_save_and_reload_sharded_state(tmp_path):
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", OMP_NUM_THREADS="1")
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node=2",
           "-m", "course_lib.checkpoint.dist_worker", "--selftest", str(tmp_path / "ck"), "--sizes", "256KiB"]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    result = json.loads([line for line in proc.stdout.splitlines() if line.startswith("{")][-1])
    assert result["ok"] and result["world_size"] == 2
    assert {"__0_0.distcp", "__1_0.distcp", ".metadata", "MANIFEST.sha256"} <= set(result["files"])  # one shard file per rank
    assert all(result["bit_exact"].values()) and len(result["bit_exact"]) == 5
