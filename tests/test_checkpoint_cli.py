"""The benchmark's command line: impossible sizes and bad options are refused before allocation."""
import json

import pytest
import torch

from course_lib.checkpoint.__main__ import main
from course_lib.checkpoint.bench import check_resources, parse_sizes, parse_strategies, resolve_device

GiB = 2**30

pytestmark = pytest.mark.filterwarnings("ignore:torch.distributed is disabled")


def test_sizes_larger_than_memory_are_refused(capsys, tmp_path):
    assert main(["--sizes", "64MiB,100TiB", "--dir", str(tmp_path / "b"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "sizes" in err and "host memory" in err
    assert not (tmp_path / "b").exists()  # refused before anything was written


def test_check_resources_names_memory_disk_and_gpu(tmp_path):
    with pytest.raises(ValueError, match="sizes: .*host memory"):
        check_resources([4 * GiB], tmp_path, memory=8 * GiB, disk=100 * GiB)
    with pytest.raises(ValueError, match="sizes: .*free disk"):
        check_resources([4 * GiB], tmp_path, memory=100 * GiB, disk=4 * GiB)
    with pytest.raises(ValueError, match="sizes: .*GPU memory"):
        check_resources([4 * GiB], tmp_path, device="cuda", memory=100 * GiB, disk=100 * GiB, gpu_memory=GiB)
    check_resources([GiB], tmp_path, memory=100 * GiB, disk=100 * GiB)  # fits


@pytest.mark.parametrize(
    "args, word",
    [(["--sizes", "12 parsecs"], "sizes"), (["--strategies", "rsync"], "strategies"), (["--repeats", "0"], "repeats"),
     (["--ranks", "0"], "ranks"), (["--sizes", ""], "sizes")],
)
def test_bad_options_name_the_parameter(capsys, args, word):
    assert main(args + ["--no-progress"]) == 2
    assert word in capsys.readouterr().err


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU message")
def test_cuda_without_gpu_is_refused(capsys):
    with pytest.raises(ValueError, match="device"):
        resolve_device("cuda")
    assert main(["--device", "cuda", "--sizes", "64KiB"]) == 2


def test_parsers():
    assert parse_sizes("256MiB,1GiB") == [256 * 2**20, GiB]
    assert parse_strategies("snapshot,bare_copy") == ["bare_copy", "snapshot"]
    assert parse_strategies("all")[0] == "bare_copy"
    assert resolve_device("cpu") == "cpu"
    with pytest.raises(ValueError, match="device"):
        resolve_device("tpu")


def test_cli_writes_csv_and_json(tmp_path, capsys):
    csv_path, json_path = tmp_path / "r.csv", tmp_path / "r.json"
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "keep.txt").write_text("not the benchmark's")
    rc = main(["--sizes", "64KiB", "--repeats", "1", "--device", "cpu", "--dir", str(tmp_path / "b"), "--verify",
               "--csv", str(csv_path), "--json", str(json_path), "--no-progress"])
    assert rc == 0
    assert [p.name for p in (tmp_path / "b").iterdir()] == ["keep.txt"]  # only its own subfolder was removed
    out = capsys.readouterr().out
    assert "snapshot" in out and "target" in out
    lines = csv_path.read_text().splitlines()
    assert lines[0].startswith("size,ranks,device,strategy,repeat,nbytes,blocking_s") and len(lines) == 6
    payload = json.loads(json_path.read_text())
    assert {"cpu_model", "cpu_cores", "ram", "disk", "torch", "date"} <= set(payload["machine"])
    assert len(payload["summary"]) == 5 and len(payload["ratios"]) == 3
