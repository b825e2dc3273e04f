"""Checksums, truncation, latest-good fallback and SIGKILL mid-save, for the safe writer and for DCP."""
import os
import select
import signal
import subprocess
import sys
import textwrap
import time
import warnings

import pytest

from course_lib.checkpoint import CheckpointStore, CorruptCheckpointError, load_checkpoint
from course_lib.checkpoint.dcp_safe import MANIFEST_NAME, DcpCheckpointStore, verify_dcp_checkpoint
from course_lib.checkpoint.state import empty_like_state, states_equal, toy_state

SIZE = 32 * 1024

pytestmark = pytest.mark.filterwarnings("ignore:torch.distributed is disabled")


def flip_byte(path, offset):
    data = bytearray(path.read_bytes())
    data[offset % len(data)] ^= 0xFF
    path.write_bytes(bytes(data))


def cut(path, keep_fraction=0.5):
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep_fraction)])


@pytest.mark.parametrize("damage", ["flip_start", "flip_middle", "flip_footer", "truncate", "empty"])
def test_safe_store_detects_damage_and_falls_back(tmp_path, damage):
    store = CheckpointStore(tmp_path, keep=3)
    s1, s2 = toy_state(SIZE, seed=1), toy_state(SIZE, seed=2)
    store.save(1, s1)
    store.save(2, s2)
    p = store.path_for(2)
    n = p.stat().st_size
    {"flip_start": lambda: flip_byte(p, 100), "flip_middle": lambda: flip_byte(p, n // 2),
     "flip_footer": lambda: flip_byte(p, n - 5), "truncate": lambda: cut(p), "empty": lambda: p.write_bytes(b"")}[damage]()
    with pytest.raises(CorruptCheckpointError):
        load_checkpoint(p)
    with pytest.warns(RuntimeWarning, match="ckpt-0000000002"):
        step, got = store.load_latest_good()
    assert step == 1 and states_equal(got, s1)


def _dcp_pair(tmp_path):
    store = DcpCheckpointStore(tmp_path, keep=3)
    s1, s2 = toy_state(SIZE, seed=1), toy_state(SIZE, seed=2)
    store.save(1, s1)
    store.async_save(2, s2).wait()
    return store, s1, s2


def test_dcp_store_round_trip_and_layout(tmp_path):
    store, s1, s2 = _dcp_pair(tmp_path)
    assert store.steps() == [1, 2] and store.latest_pointer() == 2
    names = sorted(p.name for p in store.path_for(2).iterdir())
    assert names == [".metadata", MANIFEST_NAME, "__0_0.distcp"]
    assert not list(tmp_path.glob(".*.tmp"))
    verify_dcp_checkpoint(store.path_for(2))
    step, got = store.load_latest_good(empty_like_state(s2))
    assert step == 2 and states_equal(got, s2)
    assert states_equal(store.load(1, empty_like_state(s1)), s1)


@pytest.mark.parametrize("damage", ["flip_data", "truncate_data", "flip_metadata", "no_manifest", "flip_manifest", "missing_data"])
def test_dcp_store_detects_damage_and_falls_back(tmp_path, damage):
    store, s1, _ = _dcp_pair(tmp_path)
    d = store.path_for(2)
    data, meta, man = d / "__0_0.distcp", d / ".metadata", d / MANIFEST_NAME
    {"flip_data": lambda: flip_byte(data, data.stat().st_size // 2), "truncate_data": lambda: cut(data),
     "flip_metadata": lambda: flip_byte(meta, 10), "no_manifest": man.unlink, "flip_manifest": lambda: flip_byte(man, 3),
     "missing_data": data.unlink}[damage]()
    with pytest.raises(CorruptCheckpointError):
        verify_dcp_checkpoint(d)
    with pytest.warns(RuntimeWarning, match="dcp-0000000002"):
        step, got = store.load_latest_good(empty_like_state(s1))
    assert step == 1 and states_equal(got, s1)


def test_dcp_store_prunes_and_resaves(tmp_path):
    store = DcpCheckpointStore(tmp_path, keep=2)
    s = toy_state(SIZE)
    for step in (1, 2, 3):
        store.save(step, s)
    store.save(3, toy_state(SIZE, seed=9))  # re-saving a step replaces it
    assert store.steps() == [2, 3]
    assert states_equal(store.load(3, empty_like_state(s)), toy_state(SIZE, seed=9))


def test_nothing_to_load_returns_none(tmp_path):
    assert DcpCheckpointStore(tmp_path / "d").load_latest_good(toy_state(SIZE)) is None
    assert CheckpointStore(tmp_path / "s").load_latest_good() is None


def test_stores_validate_keep(tmp_path):
    with pytest.raises(ValueError, match="keep"):
        DcpCheckpointStore(tmp_path, keep=0)
    with pytest.raises(ValueError, match="step"):
        DcpCheckpointStore(tmp_path).path_for(-1)


# -- a writer killed with SIGKILL in the middle of a save ------------------------------------
_WRITER = {
    "safe": """
        store = CheckpointStore(d, keep=3)
        store.save(1, toy_state(SIZE, seed=1))
        def slow(fh):
            torch.save(toy_state(SIZE, seed=2), fh)   # half of the payload is in the temp file
            print("MID-SAVE", flush=True)
            time.sleep(120)
        store.commit(2, slow)
    """,
    "dcp": """
        store = DcpCheckpointStore(d, keep=3)
        store.save(1, toy_state(SIZE, seed=1))
        def hang(fd):                                 # DCP has written its data, not fsynced it
            print("MID-SAVE", flush=True)
            time.sleep(120)
        os.fsync = hang
        store.save(2, toy_state(SIZE, seed=2))
    """,
}


def _start_writer(kind, d):
    code = "import os, sys, time, torch\n" \
           "from course_lib.checkpoint import CheckpointStore\n" \
           "from course_lib.checkpoint.dcp_safe import DcpCheckpointStore\n" \
           "from course_lib.checkpoint.state import toy_state\n" \
           f"SIZE = {SIZE}\nd = sys.argv[1]\n" + textwrap.dedent(_WRITER[kind])
    return subprocess.Popen([sys.executable, "-c", code, str(d)], stdout=subprocess.PIPE, bufsize=0)


def _read_line_before(proc, deadline: float) -> str:
    """The first line ``proc`` prints, or AssertionError at ``deadline`` (time.monotonic()) if it prints
    none by then: select() waits with a timeout, so a stuck writer fails the test instead of hanging it."""
    fd, buf = proc.stdout.fileno(), b""
    while b"\n" not in buf:
        left = deadline - time.monotonic()
        ready, _, _ = select.select([fd], [], [], max(left, 0.0))
        if not ready:
            raise AssertionError(f"no line from pid {proc.pid} before the deadline (got {buf!r})")
        chunk = os.read(fd, 4096)
        if not chunk:  # the writer exited
            break
        buf += chunk
    return buf.decode(errors="replace").split("\n", 1)[0]


def _kill(procs):
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)
        proc.stdout.close()


def test_the_writer_deadline_fires():
    """A writer that never reaches its mark fails the test at the deadline instead of hanging it."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], stdout=subprocess.PIPE, bufsize=0)
    try:
        with pytest.raises(AssertionError, match="before the deadline"):
            _read_line_before(proc, time.monotonic() + 0.5)
        assert proc.poll() is None  # it was the deadline, not the writer's exit
    finally:
        _kill([proc])


def test_sigkill_mid_save_leaves_previous_checkpoint(tmp_path):
    procs = {kind: _start_writer(kind, tmp_path / kind) for kind in _WRITER}  # both at once: one torch import time
    try:
        for kind, proc in procs.items():
            line = _read_line_before(proc, deadline=time.monotonic() + 60)
            assert line.strip() == "MID-SAVE", f"{kind} writer did not reach the middle of its save (printed {line!r})"
            proc.send_signal(signal.SIGKILL)
            assert proc.wait(timeout=30) == -signal.SIGKILL
    finally:
        _kill(procs.values())
    s1 = toy_state(SIZE, seed=1)

    safe = CheckpointStore(tmp_path / "safe", keep=3)
    assert not safe.path_for(2).exists()             # no partial file at the final path
    assert list((tmp_path / "safe").glob(".ckpt-0000000002.pt.tmp-*"))  # the partial file is a temp file
    assert safe.latest_pointer() == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")               # nothing to skip: step 1 is the newest
        step, got = safe.load_latest_good()
    assert step == 1 and states_equal(got, s1)

    dstore = DcpCheckpointStore(tmp_path / "dcp", keep=3)
    assert not dstore.path_for(2).exists() and (tmp_path / "dcp" / ".dcp-0000000002.tmp").is_dir()
    assert dstore.steps() == [1] and dstore.latest_pointer() == 1
    step, got = dstore.load_latest_good(empty_like_state(s1))
    assert step == 1 and states_equal(got, s1)
    dstore.save(2, toy_state(SIZE, seed=2))          # the next save cleans up the leftovers
    assert not (tmp_path / "dcp" / ".dcp-0000000002.tmp").exists()
    assert states_equal(dstore.load(2, empty_like_state(s1)), toy_state(SIZE, seed=2))
