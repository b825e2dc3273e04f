"""The two-tier checkpoint: holders, the buddy ring, restore order and verification, and the
loopback lab (three torchrun "nodes", each with its own memory holder) that kills nodes.

The unit tests run holders in threads of this process; the lab tests (marked slow) run real
torchrun agents and kill whole "nodes" (agent, worker and holder at once).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import types

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from course_lib.checkpoint.holder import HolderClient, HolderServer, MemoryHolder
from course_lib.checkpoint.safe import seal
from course_lib.labkit import port_is_open
from course_lib.checkpoint.state import poison_state, states_equal
from course_lib.checkpoint.tiers import TieredCheckpointer, buddy_ring, load_sealed
from course_lib.nodelab.tierlab import HOLDER_SCRIPT, Damage, NodeLoss, TierLabConfig, reference_digests, run_tier_lab


@pytest.fixture
def holders():
    made = []

    def make(n=2, keep=2):
        for _ in range(n):
            made.append(HolderServer(keep=keep).start_thread())
        return made[-n:]

    yield make
    for h in made:
        h.stop()


def _state(value: float, step: int) -> dict:
    g = torch.Generator().manual_seed(step)
    return {"w": torch.full((16,), value), "opt": {"m": torch.arange(4.0) * value},
            "rng": g.get_state(), "step": step}


def _fill(ckpt, steps=(2, 4, 6, 8)):
    state = _state(0.0, 0)
    for s in steps:
        new = _state(float(s), s)
        for k in ("w", "rng"):
            state[k] = new[k]
        state["opt"]["m"].copy_(new["opt"]["m"])
        state["step"] = s
        ckpt.maybe_snapshot(state, s)
    ckpt.wait()
    return state


def _ckpt(tmp_path, own, buddy, **kw):
    kw = {"every": 2, "persist_every": 2, **kw}
    return TieredCheckpointer(_state(0.0, 0), local_holder=own.address, peers=[buddy.address],
                              persist_dir=tmp_path, job="t", **kw)


# ----- the holder -----
def test_holder_keeps_the_newest_copies_and_returns_bytes_unchanged(holders):
    (h,) = holders(1, keep=2)
    c = HolderClient(h.address)
    for s in (1, 2, 3):
        c.put("j", 0, s, seal(bytes([s]) * 100), role="own")
    assert [m["step"] for m in c.list("j", 0)] == [3, 2]
    assert c.get("j", 0, 3) == seal(bytes([3]) * 100)
    assert c.get("j", 0, 1) is None and c.list("j", 1) == [] and c.list("other", 0) == []
    assert c.stats()["held_bytes"] == 2 * len(seal(b"x" * 100))
    assert c.damage("j", 0, 3, "truncate") and len(c.get("j", 0, 3)) < 100
    assert not c.damage("j", 0, 99)
    assert c.drop("j") == 1 and c.list("j", 0) == []
    c.close()


def test_holder_answers_bad_requests_and_keeps_serving(holders):
    (h,) = holders(1)
    c = HolderClient(h.address)
    assert c._call({"op": "explode"})[0]["error"] == "unknown op 'explode'"
    assert not c._call({"op": "damage", "job": "j", "shard": 0, "step": 1, "how": "melt"})[0]["ok"]
    assert c.list("j", 0) == []


def test_a_dead_holder_raises_oserror_within_the_timeout(holders):
    (h,) = holders(1)
    address = h.address
    h.stop()
    with pytest.raises(OSError):
        HolderClient(address, timeout_s=1.0).list("j", 0)


def test_memory_holder_validates():
    with pytest.raises(ValueError, match="keep must be an integer >= 1"):
        MemoryHolder(0)
    with pytest.raises(ValueError, match="how must be one of"):
        MemoryHolder().damage("j", 0, 0, "melt")


def test_the_holder_script_starts_without_torch():
    proc = subprocess.Popen([sys.executable, "-X", "importtime", str(HOLDER_SCRIPT), "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().startswith("HOLDER 127.0.0.1:")
    finally:
        proc.kill()
        _, err = proc.communicate(timeout=10)
    assert "torch" not in {line.rsplit("|", 1)[-1].strip() for line in err.splitlines()}


# ----- the buddy ring -----
@given(st.lists(st.integers(0, 6), min_size=1, max_size=24))
@settings(max_examples=60, deadline=None)
def test_every_node_has_another_node_as_buddy_and_holds_one_copy(rank_nodes):
    holders = [f"10.0.0.{n}:7000" for n in rank_nodes]
    ring = buddy_ring(holders)
    nodes = set(holders)
    assert set(ring) == nodes
    if len(nodes) == 1:
        assert ring == {holders[0]: None}
    else:
        assert all(b != n and b in nodes for n, b in ring.items())
        assert sorted(ring.values()) == sorted(nodes)  # a permutation: each node holds one node's copies


# ----- restore order and verification -----
def test_restore_prefers_own_memory_then_buddy_then_persisted(tmp_path, holders):
    own, buddy = holders(2)
    ckpt = _ckpt(tmp_path, own, buddy)
    saved = _fill(ckpt)
    assert ckpt.replication_errors == []
    assert [m["role"] for m in HolderClient(buddy.address).list("t", 0)] == ["buddy", "buddy"]
    assert ckpt.store.steps() == [4, 8]  # every 2nd snapshot persisted

    target = poison_state(_state(1.0, 1))
    got = ckpt.restore(target)
    assert (got.step, got.tier, got.skipped) == (8, "own", ())
    assert states_equal(target, saved)

    HolderClient(own.address).damage("t", 0, 8, "flip")
    got = ckpt.restore(poison_state(target))
    assert (got.step, got.tier) == (8, "buddy") and "sha256 mismatch" in got.skipped[0]
    assert states_equal(target, saved)

    HolderClient(buddy.address).damage("t", 0, 8, "truncate")
    got = ckpt.restore(poison_state(target))
    assert (got.step, got.tier) == (8, "persisted") and len(got.skipped) == 2
    assert states_equal(target, saved)
    ckpt.close()


def test_every_tier_of_the_newest_step_damaged_resumes_from_an_older_verified_step(tmp_path, holders):
    own, buddy = holders(2)
    ckpt = _ckpt(tmp_path, own, buddy)
    _fill(ckpt)
    for h in (own, buddy):
        HolderClient(h.address).damage("t", 0, 8, "flip")
    path = ckpt.store.path_for(8)
    path.write_bytes(path.read_bytes()[:-10])  # truncated persisted file
    got = ckpt.restore()
    assert (got.step, got.tier) == (6, "own")  # never the damaged step 8
    assert len(got.skipped) == 3 and all("step 8" in line for line in got.skipped)
    assert torch.equal(got.state["w"], torch.full((16,), 6.0))


def test_a_lost_node_and_buddy_fall_back_to_the_persisted_step(tmp_path, holders):
    own, buddy = holders(2)
    ckpt = _ckpt(tmp_path, own, buddy, timeout_s=1.0)
    _fill(ckpt, steps=(2, 4, 6))
    own.stop()
    buddy.stop()
    got = ckpt.restore()
    assert (got.step, got.tier) == (4, "persisted")
    assert sum("unreachable" in line for line in got.skipped) == 2


def test_nothing_anywhere_is_a_fresh_start(tmp_path, holders):
    own, buddy = holders(2)
    assert _ckpt(tmp_path, own, buddy).restore() is None


def test_a_copy_that_verifies_but_holds_another_step_is_refused(tmp_path, holders):
    own, buddy = holders(2)
    ckpt = _ckpt(tmp_path, own, buddy)
    _fill(ckpt, steps=(2,))
    stale = HolderClient(own.address).get("t", 0, 2)
    HolderClient(own.address).put("t", 0, 4, stale, role="own")  # a copy filed under the wrong step
    got = ckpt.restore()
    assert got.step == 2 and any("holds step 2, not 4" in line for line in got.skipped)


def test_sealed_garbage_is_not_loaded():
    from course_lib.checkpoint.safe import CorruptCheckpointError

    with pytest.raises(CorruptCheckpointError, match="not a loadable state"):
        load_sealed(seal(b"not a torch file"), "x")


def test_a_lost_buddy_does_not_stop_training(tmp_path, holders):
    own, buddy = holders(2)
    ckpt = _ckpt(tmp_path, own, buddy, timeout_s=1.0)
    buddy.stop()
    _fill(ckpt, steps=(2, 4))
    assert [e[0] for e in ckpt.replication_errors] == [2, 4]
    assert ckpt.restore().tier == "own"


def test_only_the_copy_blocks_the_snapshot_and_the_copy_is_taken_at_the_call(tmp_path, holders):
    own, buddy = holders(2)
    ckpt = _ckpt(tmp_path, own, buddy)
    state = _state(3.0, 2)
    ckpt.snapshot(state, 2)
    state["w"].fill_(-1.0)  # training goes on while the copy is sent
    ckpt.wait()
    assert torch.equal(ckpt.restore().state["w"], torch.full((16,), 3.0))
    assert {"blocking_s", "serialize_s", "own_s", "buddy_s", "background_s"} <= set(ckpt.last_timings)


@pytest.mark.parametrize("kw, name", [({"every": 0}, "every"), ({"persist_every": -1}, "persist_every"),
                                      ({"timeout_s": 0}, "timeout_s"), ({"shard": -1}, "shard")])
def test_bad_settings_name_the_parameter(tmp_path, holders, kw, name):
    own, buddy = holders(2)
    with pytest.raises(ValueError, match=f"^{name} must be"):
        _ckpt(tmp_path, own, buddy, **kw)


def test_lab_settings_are_validated():
    with pytest.raises(ValueError, match="nodes must be an integer >= 2"):
        TierLabConfig(nodes=1)
    with pytest.raises(ValueError, match=r"failures\[0\].nodes\[0\] must be an integer >= 1"):
        TierLabConfig(failures=[(3, (0,))])  # node 0 stays rank 0 in every generation
    with pytest.raises(ValueError, match=r"failures\[0\].nodes must hold node indices in \[1, 2\]"):
        TierLabConfig(failures=[NodeLoss(3, (3,))])
    with pytest.raises(ValueError, match=r"failures\[0\].step must be"):
        TierLabConfig(failures=[{"step": 0}])
    with pytest.raises(ValueError, match=r"failures\[1\].step must be > 5"):  # several losses: in increasing step order
        TierLabConfig(failures=[NodeLoss(5), NodeLoss(3)])
    with pytest.raises(ValueError, match=r"damage\[0\].node must name a surviving node"):
        TierLabConfig(failures=[NodeLoss(3)], damage=[(1, 1, 2, "flip")])
    with pytest.raises(ValueError, match=r"damage\[0\].how must be one of"):
        TierLabConfig(failures=[NodeLoss(3)], damage=[(2, 1, 2, "melt")])
    cfg = TierLabConfig(failures=[NodeLoss(11, (2, 1))], damage=[(0, 1, 10, "truncate")])
    assert TierLabConfig.from_json(cfg.to_json()) == cfg and cfg.failures[0].nodes == (1, 2)


def test_loopback_node_addresses_sort_as_their_indices():
    """The c10d rendezvous ranks a round's nodes by address (as text): node n<i> gets rank i only if the
    addresses sort as the indices do, also past 9 and 99; each is this machine's own (127.0.0.0/8)."""
    import ipaddress

    from course_lib.nodelab.tierlab import loopback_addr

    addrs = [loopback_addr(i) for i in range(156)]
    assert sorted(addrs) == addrs and len(set(addrs)) == 156
    assert all(ipaddress.ip_address(a).is_loopback for a in addrs)
    for bad in (-1, 156, 1.5):
        with pytest.raises(ValueError, match="^i must"):
            loopback_addr(bad)


# ----- the loopback lab: three torchrun "nodes", its three failure plans in one launch -----
# 24 steps on 3 nodes (node n<i> runs rank i and holds shard i; rank r's buddy is node r+1 mod 3): a snapshot every 2
# steps into the node's memory and its buddy's, every 3rd one also persisted (steps 0, 6, 12, 18, 24); each memory and
# the store keep the newest 2 copies per shard. The losses strike one per generation (generation k+1 is the restart
# after loss k), each after at least 2 snapshots of its own generation, so the copies that exist are those below:
# loss 0 at step 11 of gen 0: node 1 killed. Memory holds 8, 10; the store 0, 6. Shard 1's 10 is on node 2 (buddy)
#   -> gen 1 resumes every rank from 10 (own, buddy, own), not from the persisted 6.
# loss 1 at step 17 of gen 1 (from 10; snapshots 12 persisted, 14, 16): nodes 1 and 2 killed (shard 1's own copy and its
#   buddy's). Memory (node 0) holds 14, 16 only; the store 6, 12; shard 1 is only in the store
#   -> gen 2 resumes every rank from the persisted 12 (no memory holds 12 any more).
# loss 2 at step 23 of gen 2 (from 12; snapshots 14, 16, 18 persisted, 20, 22): node 1 killed, node 2's copy of shard 1
#   step 22 truncated. Memory holds 20, 22; the store 12, 18. Shard 1: 22 damaged, 20 from the buddy
#   -> gen 3 resumes every rank from 20, never from the damaged 22 and not from the older persisted 18; runs to 24.
# Each restore loads state written after the previous restore (10 < 12 < 20), so a wrong restore anywhere would carry
# into the final shards; and each restored state is compared with the uninterrupted run's at its step.
LAB = TierLabConfig(nodes=3, steps=24, every=2, persist_every=3)
PLAN = LAB.replace(failures=[NodeLoss(11, (1,)), NodeLoss(17, (1, 2)), NodeLoss(23, (1,))],
                   damage=[Damage(node=2, shard=1, step=22, how="truncate", after=2)])


@pytest.fixture(scope="module")
def reference():
    return reference_digests(LAB)


@pytest.fixture(scope="module")
def plan_run(tmp_path_factory):
    """The three failure plans in one launch (4 generations); each test below asserts on its own restart."""
    return run_tier_lab(PLAN, run_dir=tmp_path_factory.mktemp("tiers-plan"), timeout_s=400)


def _all_gone(pids) -> bool:
    return not [p for p in pids if os.path.exists(f"/proc/{p}") and "zombie" not in _status(p)]


def _status(pid) -> str:
    try:
        return open(f"/proc/{pid}/status").read().lower()
    except OSError:
        return "zombie"


def test_a_plan_of_several_losses_is_validated_and_names_its_nodes(tmp_path):
    with pytest.raises(ValueError, match=r"failures\[1\].step must be > 11"):
        LAB.replace(failures=[NodeLoss(11), NodeLoss(11, (2,))])
    with pytest.raises(ValueError, match=r"failures\[2\].step must be an integer in \[1, steps=24\]"):
        LAB.replace(failures=[NodeLoss(11), NodeLoss(17), NodeLoss(25)])
    with pytest.raises(ValueError, match=r"failures\[1\].nodes must hold node indices in \[1, 2\]"):
        LAB.replace(failures=[NodeLoss(11), NodeLoss(17, (3,))])
    with pytest.raises(ValueError, match=r"damage\[0\].after must be the index of a NodeLoss in failures, an integer in \[0, 1\]"):
        LAB.replace(failures=[NodeLoss(11), NodeLoss(17)], damage=[Damage(2, 1, 10, after=2)])
    with pytest.raises(ValueError, match=r"damage\[0\].node must name a surviving node .* failures\[1\]"):
        LAB.replace(failures=[NodeLoss(11), NodeLoss(17, (1, 2))], damage=[Damage(2, 1, 16, after=1)])
    with pytest.raises(ValueError, match=r"damage\[0\].node must name a surviving node"):
        LAB.replace(damage=[Damage(2, 1, 16)])  # no loss at all
    assert PLAN.damage[0].after == 2 and TierLabConfig.from_json(PLAN.to_json()) == PLAN
    assert Damage(2, 1, 10, "truncate").after == 0  # the old four-field record: the first loss
    # the replacement of a node lost in loss k takes its place (and rank); replacements of later losses get new names
    assert [PLAN.node_names(g) for g in range(4)] == [
        ["n0", "n1", "n2"], ["n0", "spare1", "n2"], ["n0", "spare1-1", "spare2-1"], ["n0", "spare1-2", "spare2-1"]]
    with pytest.raises(ValueError, match=r"^gen must be an integer in \[0, 3\]"):
        PLAN.node_names(4)
    # the job is told which node of its generation is lost (the first one logs the injection); write_job reads a
    # Lab's token, event log and folder
    lab = types.SimpleNamespace(token="job", run_dir=tmp_path, events_path=tmp_path / "events.jsonl")
    assert [f["nodes"] for f in json.loads(PLAN.write_job(lab).read_text())["failures"]] == [
        ["n1"], ["spare1", "n2"], ["spare1-1"]]
    with pytest.raises(ValueError, match=r"^step must be an integer in \[0, steps=24\]"):
        reference_digests(LAB, 25)


def test_several_losses_are_refused_on_namespaced_nodes(tmp_path):
    from course_lib.nodelab import run_tier_nodelab

    with pytest.raises(ValueError, match="^failures must hold at most one NodeLoss on namespaced nodes"):
        run_tier_nodelab(LAB.replace(failures=[NodeLoss(11), NodeLoss(17)], spares=1), run_dir=tmp_path)
    assert not list(tmp_path.iterdir())  # refused before anything started


@pytest.mark.slow
def test_a_killed_node_resumes_from_the_newest_memory_step_bit_identical(plan_run, reference):
    res = plan_run
    assert res.resumed_by_gen[0] == {0: (0, "init"), 1: (0, "init"), 2: (0, "init")}  # nothing held before the start
    assert res.loaded_by_gen[0] == reference_digests(LAB, 0)
    assert res.resumed_by_gen[1] == {0: (10, "own"), 1: (10, "buddy"), 2: (10, "own")}  # not the persisted 6
    assert res.loaded_by_gen[1] == reference_digests(LAB, 10)  # the shards as the uninterrupted run had them at 10
    assert res.digests == reference and [m.kind for m in res.restarts] == ["node_kill"] * 3
    assert (res.restarts[0].resumed_step, res.restarts[0].resumed_gen) == (10, 1)
    assert _all_gone(res.pids)
    (ready,) = res.events_of("rdzv_ready")  # the lab's rendezvous store bound port 0 and said which port it got
    assert ready["port"] > 0 and not port_is_open(ready["port"])


@pytest.mark.slow
def test_a_node_and_its_buddy_lost_resume_from_the_persisted_step_bit_identical(plan_run, reference):
    res = plan_run
    assert res.resumed_by_gen[2] == {0: (12, "persisted"), 1: (12, "persisted"), 2: (12, "persisted")}
    assert res.loaded_by_gen[2] == reference_digests(LAB, 12)
    assert res.digests == reference and [m.kind for m in res.restarts] == ["node_kill"] * 3
    assert (res.restarts[1].resumed_step, res.restarts[1].resumed_gen) == (12, 2)
    # the two lost nodes' processes were started (and killed) in generation 1, under the names the plan gave them
    assert {e["node"] for e in res.events_of("worker_start", gen=1)} == {"n0", "spare1", "n2"}
    assert _all_gone(res.pids)


@pytest.mark.slow
def test_a_damaged_buddy_copy_is_skipped_and_every_rank_goes_back_to_a_step_all_can_load(plan_run, reference):
    # node 1 lost; its shard's newest copy (step 22, in node 2's memory) damaged: shard 1 has step 20
    # from the buddy, so every rank resumes from 20, never from the damaged 22 and not from the older persisted 18
    res = plan_run
    assert res.resumed_by_gen[3] == {0: (20, "own"), 1: (20, "buddy"), 2: (20, "own")}
    assert res.resumed == res.resumed_by_gen[3] and res.skipped == res.skipped_by_gen[3]  # the last generation's
    assert any("shard 1 step 22" in line and "truncated" in line for line in res.skipped[1])
    assert not any("truncated" in line for g in (1, 2) for lines in res.skipped_by_gen[g].values() for line in lines)
    assert res.loaded_by_gen[3] == reference_digests(LAB, 20)
    assert res.digests == reference and [m.kind for m in res.restarts] == ["node_kill"] * 3
    assert (res.restarts[2].resumed_step, res.restarts[2].resumed_gen) == (20, 3)
    assert _all_gone(res.pids)
