"""Every strategy round-trips bit for bit; the snapshot's two phases; the benchmark rows (course_lib.checkpoint)."""
import math

import pytest
import torch

from course_lib.checkpoint import strategies
from course_lib.checkpoint.bench import ratios, run_benchmark, summarize
from course_lib.checkpoint.dcp_safe import DcpCheckpointStore
from course_lib.checkpoint.safe import CheckpointStore
from course_lib.checkpoint.state import POISON, empty_like_state, iter_tensors, poison_state, states_equal, toy_state
from course_lib.checkpoint.strategies import STRATEGIES, SnapshotCheckpointer, make_strategy, measure

SIZE = 64 * 1024

pytestmark = pytest.mark.filterwarnings("ignore:torch.distributed is disabled")


@pytest.mark.parametrize("name", STRATEGIES)
def test_round_trip_is_bit_exact(tmp_path, name):
    state = toy_state(SIZE, seed=5)
    rows = measure(name, state, tmp_path, repeats=2, verify=True)
    assert [r["repeat"] for r in rows] == [0, 1]
    assert all(r["bit_exact"] for r in rows)
    for r in rows:
        assert r["blocking_s"] >= 0
        if name == "bare_copy":
            assert math.isnan(r["durable_s"]) and math.isnan(r["reload_s"])
        else:
            assert r["durable_s"] >= r["blocking_s"] and r["reload_s"] >= 0
        assert math.isnan(r["dcp_call_s"]) == (name not in ("dcp", "dcp_async"))


def test_poisoned_state_equals_no_real_state():
    state = toy_state(SIZE, seed=5)
    poisoned = poison_state(empty_like_state(state))
    # POISON is equal to nothing but itself: not to the leaf it replaced, nor to any stand-in for "no value", nor to
    # another object of its own kind; and a poisoned state still equals itself, so the comparison below fails on the
    # poison, not because states_equal could never hold
    assert poisoned["step"] is POISON and state["step"] is not POISON
    assert POISON != state["step"] and state["step"] != POISON
    assert all(POISON != v and v != POISON for v in (0, -1, None, "", float("nan"), type(POISON)()))
    assert states_equal(poisoned, poisoned)
    for _, t in iter_tensors(poisoned):
        assert torch.all(t.view(torch.uint8) == 0xFF)
        assert not t.is_floating_point() or torch.isnan(t).all()
    assert not states_equal(poisoned, state)
    # one tensor poisoned is enough to fail the comparison
    partly = toy_state(SIZE, seed=5)
    poison_state(partly["optim"])
    assert not states_equal(partly, state)


def test_a_dcp_reload_that_writes_nothing_is_caught(tmp_path, monkeypatch):
    """dcp and dcp_async reload into one shared template: after the first real reload it already holds
    the right bytes, so a later reload that loads nothing must still fail the check (the template is
    poisoned before every save)."""
    original = DcpCheckpointStore.load_latest_good

    def fake(self, template):
        fake.calls += 1
        if fake.calls == 1:
            return original(self, template)
        return (max(self.steps()), template)  # claims success, loads nothing

    fake.calls = 0
    monkeypatch.setattr(DcpCheckpointStore, "load_latest_good", fake)
    rows = measure(["dcp", "dcp_async"], toy_state(SIZE, seed=5), tmp_path, repeats=2, verify=True)
    assert [(r["strategy"], r["repeat"], r["bit_exact"]) for r in rows] == [
        ("dcp", 0, True), ("dcp", 1, False), ("dcp_async", 0, False), ("dcp_async", 1, False)]


def test_a_bare_copy_that_copies_nothing_is_caught(tmp_path, monkeypatch):
    original = strategies._BareCopy.start

    def fake(self, step):  # copies at the first save only, then returns as if it had
        return original(self, step) if step == 1 else strategies._Done()

    monkeypatch.setattr(strategies._BareCopy, "start", fake)
    rows = measure("bare_copy", toy_state(SIZE, seed=5), tmp_path, repeats=3, verify=True)
    assert [r["bit_exact"] for r in rows] == [True, False, False]


def test_snapshot_is_independent_of_later_updates(tmp_path):
    state = toy_state(SIZE, seed=1)
    expected = toy_state(SIZE, seed=1)
    snap = SnapshotCheckpointer(state, CheckpointStore(tmp_path, keep=2))
    snap.snapshot(state, step=10)
    state["optim"]["layer0.master"].add_(1.0)  # the loop continues and updates the state
    snap.wait()
    step, loaded = snap.store.load_latest_good()
    assert step == 10 and states_equal(loaded, expected)
    restored = snap.restore_into(empty_like_state(state))
    assert states_equal(restored, expected)


def test_snapshot_persist_error_is_reraised(tmp_path):
    state = toy_state(SIZE)
    store = CheckpointStore(tmp_path, keep=1)
    snap = SnapshotCheckpointer(state, store)

    def boom(step, obj):
        raise OSError("disk full")

    store.save = boom
    snap.snapshot(state, 1)
    with pytest.raises(OSError, match="disk full"):
        snap.wait()


def test_make_strategy_and_measure_validate(tmp_path):
    state = toy_state(SIZE)
    with pytest.raises(ValueError, match="strategy"):
        make_strategy("rsync", state, tmp_path)
    with pytest.raises(ValueError, match="repeats"):
        measure("snapshot", state, tmp_path, repeats=0)


def test_run_benchmark_summary_and_ratios(tmp_path):
    rows = run_benchmark("64KiB,128KiB", "all", repeats=1, device="cpu", directory=tmp_path / "b", verify=True, progress=False)
    assert len(rows) == 2 * len(STRATEGIES) and all(r["bit_exact"] for r in rows)
    assert not list((tmp_path / "b").iterdir())  # checkpoint files are cleaned up
    summary = summarize(rows)
    assert [(s["size"], s["strategy"]) for s in summary] == [(z, n) for z in (65536, 131072) for n in STRATEGIES]
    rs = ratios(summary)
    assert {r["ratio"] for r in rs} == {"snapshot_vs_bare_copy", "torch_save_vs_snapshot", "async_vs_dcp"}
    assert all(r["value"] > 0 and isinstance(r["met"], bool) for r in rs)


def test_summarize_takes_medians():
    rows = [
        {"size": 1, "strategy": "snapshot", "nbytes": 2**30, "blocking_s": b, "durable_s": 2 * b, "reload_s": 1.0, "dcp_call_s": float("nan")}
        for b in (1.0, 3.0, 2.0)
    ]
    (s,) = summarize(rows)
    assert s["blocking_s"] == 2.0 and s["durable_s"] == 4.0 and s["repeats"] == 3
    assert s["blocking_s_per_GiB"] == 2.0
    assert math.isnan(s["dcp_call_s"])


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("name", STRATEGIES)
def test_round_trip_on_gpu(tmp_path, name):
    state = toy_state(SIZE, device="cuda", seed=2)
    rows = measure(name, state, tmp_path, repeats=1, verify=True)
    assert all(r["bit_exact"] for r in rows)
