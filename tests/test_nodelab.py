"""The nodes lab (notebook 11): nodes as network namespaces, one torchrun agent per node, a node lost.

A real run of a 12-step job on 2 nodes (gloo over the namespaces' links, c10d rendezvous), compared with
the same job's uninterrupted run computed in this process (bit for bit what a real uninterrupted run ends
with: gloo's sum of two ranks is one commutative addition per element; a faulty run that ends bit-identical
to it also shows that the in-process reference has not drifted from the job). The real run starts with two
hot spares and is hit by two node failures, one after the other: a node's link cut mid-step (nobody is told: the job notices only at
a timeout, its peer's collective timeout or the rendezvous's dead-node timeout, whichever comes
first; a spare takes its place), and the checkpoint writer's node killed halfway through a
checkpoint (the second spare takes its place; the restart loads the older checkpoint). Each loss
strikes when the state it needs is there (its step reached, a spare waiting in the rendezvous), so
the same failures happen and are recovered whatever the machine's load. A third run puts the two-tier checkpoint's job on 3 nodes with a spare and
kills one node outright (agent, worker and memory holder at once): it resumes from the buddy's
memory copy. Each test asserts one property; nothing asserts a speed
(benchmarks/nodelab_bench.py does).

Needs root (network namespaces): elsewhere these tests are skipped with one line saying so,
except under CI (``CI`` set), where a missing capability is a failure, not a skip.
"""
import os
import subprocess
import sys

import pytest

from course_lib.faultlab import LabError, same_final_state
from course_lib.nodelab import (LabNetwork, NodeFailure, NodeLabConfig, leftovers, net_admin_missing, run_nodelab,
                                uninterrupted_reference)
from course_lib.nodelab.net import PREFIX

MISSING = net_admin_missing()
if MISSING and os.environ.get("CI"):
    raise RuntimeError(f"CI must run the nodes lab: {MISSING}")
needs_root = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")

STEPS, EVERY, TIMEOUT_S, DEAD_NODE_S = 12, 4, 3.0, 3
#: The rendezvous's keep-alive interval (seconds): a node's last heartbeat is at most this old when it
#: goes silent, so the rendezvous declares it dead no sooner than DEAD_NODE_S - KEEP_ALIVE_S after.
KEEP_ALIVE_S = 1.0
FAILURES = (NodeFailure("link_cut", 6, rank=1), NodeFailure("node_kill_in_ckpt", 8))
REFERENCE = NodeLabConfig(steps=STEPS, ckpt_every=EVERY)
CAP_S = 600  # a generous cap on a whole run: the stall rule (course_lib.labkit.stall_limit_s) fails a stuck one first


# ----- settings (no root needed) -----
@pytest.mark.parametrize(
    "kw, name",
    [
        ({"nodes": 1}, "nodes"),
        ({"spares": -1}, "spares"),
        ({"replace_delay_s": -1}, "replace_delay_s"),
        ({"dead_node_s": 0}, "dead_node_s"),
        ({"keep": 1}, "keep"),
        ({"collective_timeout_s": 0}, "collective_timeout_s"),
        ({"failures": "node_kill"}, "failures"),
        ({"failures": [("node_kill", 30)]}, r"failures\[0\].step"),
        ({"failures": [("node_kill", 5, 2)]}, r"failures\[0\].rank"),
        ({"failures": [("node_kill", 9), ("link_cut", 8)]}, r"failures\[1\].step"),
        ({"failures": [("node_kill_in_ckpt", 6)]}, "multiple of ckpt_every"),
        ({"failures": [("kill", 6)]}, "kind"),
        ({"failures": [("link_cut", 6)], "collective_timeout_s": 600}, "collective_timeout_s"),
    ],
)
def test_bad_settings_are_rejected_naming_the_parameter(kw, name):
    with pytest.raises(ValueError, match=name):
        NodeLabConfig(**kw)


def test_config_round_trips_and_feeds_notebook_07s_job():
    cfg = NodeLabConfig(spares=1, failures=[("node_kill", 6), {"kind": "node_kill_in_ckpt", "step": 8, "rank": 1}])
    assert NodeLabConfig.from_json(cfg.to_json()) == cfg
    assert cfg.failures[1].rank == 0  # the writer's node
    assert cfg.world == cfg.nproc == 2
    job = cfg.job_config()
    assert job["failures"][0] == {"kind": "node_kill", "step": 6, "rank": 1, "wait_for_spare": True}  # the spare's loss
    assert job["failures"][1]["wait_for_spare"] is False and job["snapshot"] == "disk"  # no second spare


def test_the_in_process_reference_refuses_what_it_cannot_replay_bit_for_bit(tmp_path):
    with pytest.raises(ValueError, match="^config must be a NodeLabConfig"):
        uninterrupted_reference({"steps": 4}, run_dir=tmp_path)
    with pytest.raises(ValueError, match=r"^config.nodes x config.nproc_per_node must be 2 .* got 3"):
        uninterrupted_reference(NodeLabConfig(nodes=3), run_dir=tmp_path)  # gloo sums 3 ranks in an order of its own
    with pytest.raises(ValueError, match=r"^config.nodes x config.nproc_per_node must be 2 .* got 4"):
        uninterrupted_reference(NodeLabConfig(nproc_per_node=2), run_dir=tmp_path)
    assert not list(tmp_path.iterdir())


def test_run_nodelab_validates_before_starting_anything(tmp_path):
    with pytest.raises(ValueError, match="^config must be a NodeLabConfig"):
        run_nodelab({"steps": 4}, run_dir=tmp_path)
    with pytest.raises(ValueError, match="^timeout_s"):
        run_nodelab(NodeLabConfig(), timeout_s=0, run_dir=tmp_path)
    assert not list(tmp_path.iterdir())


# ----- the network (root) -----
@pytest.fixture
def lab_network():
    """A LabNetwork torn down after the test, pass or fail; the teardown checks nothing is left."""
    net = LabNetwork().__enter__()
    yield net
    net.close()
    assert leftovers(net.tag) == {"netns": [], "links": [], "processes": []}


@needs_root
def test_nodes_reach_each_other_only_inside_the_lab(lab_network):
    a, b = lab_network.add_node(), lab_network.add_node()
    ping = [sys.executable, "-c", "import socket,sys; s=socket.create_connection((sys.argv[1], 9), 2)"]
    # node a listens, node b connects through the bridge
    srv = lab_network.popen(a, [sys.executable, "-c", "import socket,time; s=socket.socket(); "
                            f"s.bind(('{lab_network.addr(a)}', 9)); s.listen(); s.accept(); time.sleep(1)"])
    import time

    for _ in range(100):
        cli = lab_network.popen(b, [*ping, lab_network.addr(a)])
        if cli.wait(timeout=10) == 0:
            break
        time.sleep(0.05)
    assert cli.returncode == 0
    srv.wait(timeout=10)
    # nothing of the lab is visible in the machine's own namespace
    assert leftovers(lab_network.tag)["links"] == []
    lab_network.cut_link(a)
    cli = lab_network.popen(b, [*ping, lab_network.addr(a)])
    assert cli.wait(timeout=10) != 0  # the cut link carries nothing


@needs_root
def test_nodes_plugged_in_mid_run_never_cut_off_the_nodes_already_talking(lab_network):
    """A node already talking to the switch (the rendezvous store's address) keeps getting answers while
    more nodes are plugged in. A Linux bridge left to pick its MAC takes its ports' lowest and changes it
    when a lower one joins; a node whose ARP entry names the old MAC then sends into nothing for 15-45 s
    (the node-and-buddy flake: a store read timed out, an agent died, the rendezvous closed). The switch's
    MAC is set once, so it never moves."""
    from course_lib.nodelab.net import SWITCH_ADDR, SWITCH_MAC

    def switch_mac():
        out = subprocess.run(["ip", "-n", lab_network.switch, "-o", "link", "show", "br0"], capture_output=True,
                             text=True, check=True).stdout
        return out.split("link/ether ")[1].split()[0]

    echo = ("import socket\n"
            "s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
            f"s.bind(('{SWITCH_ADDR}', 7)); s.listen(); c, _ = s.accept()\n"
            "while (d := c.recv(64)):\n    c.sendall(d)\n")
    client = ("import socket, sys, time\n"
              "for _ in range(200):\n"
              "    try:\n"
              f"        c = socket.create_connection(('{SWITCH_ADDR}', 7), 2); break\n"
              "    except OSError:\n        time.sleep(0.05)\n"
              "c.settimeout(3.0)\n"
              "for line in sys.stdin:\n"
              "    c.sendall(b'x')\n"
              "    try:\n        print('ok' if c.recv(64) == b'x' else 'bad', flush=True)\n"
              "    except socket.timeout:\n        print('no answer in 3 s', flush=True)\n")
    lab_network.add_node()  # node 0 (its port may hold the lowest MAC), then the talker
    talker = lab_network.add_node()
    lab_network.popen("switch", [sys.executable, "-c", echo])
    talk = lab_network.popen(talker, [sys.executable, "-c", client], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True)

    def ask():
        talk.stdin.write("?\n")
        talk.stdin.flush()
        return talk.stdout.readline().strip()

    assert ask() == "ok"  # connected: the talker's ARP entry holds the switch's MAC
    answers = []
    for _ in range(8):  # spares and replacements plugged in while the job runs
        lab_network.add_node()
        answers.append((switch_mac(), ask()))
    assert answers == [(SWITCH_MAC, "ok")] * 8
    talk.stdin.close()
    talk.wait(timeout=10)


@needs_root
def test_a_failure_inside_the_network_leaves_nothing_behind():
    with pytest.raises(RuntimeError, match="boom"):
        with LabNetwork() as net:
            net.add_node()
            net.popen(0, [sys.executable, "-c", "import time; time.sleep(600)"])
            tag = net.tag
            raise RuntimeError("boom")
    assert leftovers(tag) == {"netns": [], "links": [], "processes": []}


@needs_root
def test_a_lab_killed_by_a_signal_is_removed_by_the_next_one():
    code = ("import os, signal, sys, time\n"
            "from course_lib.nodelab import LabNetwork\n"
            "net = LabNetwork().__enter__(); net.add_node()\n"
            "net.popen(0, [sys.executable, '-c', 'import time; time.sleep(600)'])\n"
            "print(net.tag, flush=True); time.sleep(0.5); os.kill(os.getpid(), signal.SIGKILL)\n")
    import subprocess

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    tag = out.stdout.strip()
    assert tag.startswith(PREFIX) and leftovers(tag)["netns"]  # SIGKILL: no teardown ran
    with LabNetwork():  # the next lab removes what the dead one left
        pass
    assert leftovers(tag) == {"netns": [], "links": [], "processes": []}


@needs_root
def test_a_run_that_times_out_leaves_nothing_behind(tmp_path):
    with pytest.raises(LabError, match="timeout_s"):
        run_nodelab(REFERENCE, run_dir=tmp_path, timeout_s=2.0)
    tag = (tmp_path / "netns-tag").read_text()
    assert tag.startswith(PREFIX) and leftovers(tag) == {"netns": [], "links": [], "processes": []}


# ----- the real run and the uninterrupted reference -----
@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    # the uninterrupted run of REFERENCE computed in this process (no torchrun, no namespaces): its final state
    # and digest are the job's bit for bit (checked against a real run_nodelab(REFERENCE) once, 12 steps, digest
    # c853cdb7...; a drift between the two fails test_losing_nodes_ends_bit_identical_to_uninterrupted)
    ref = uninterrupted_reference(REFERENCE, run_dir=tmp_path_factory.mktemp("ref"))
    assert ref.pids == frozenset() and ref.restarts == [] and ref.applied == STEPS
    return ref


@pytest.fixture(scope="module")
def faulty(tmp_path_factory):
    # the deadline that matters is the lab's stall rule (measured in the run: 4 x its slowest agent start-up plus
    # the waits its settings ask for); timeout_s is only a cap for a run that keeps logging but never ends
    # two spares: one per loss. (A replacement provisioned after the loss, the no-spare path, is
    # exercised by benchmarks/nodelab_bench.py and by the node-and-buddy test below.)
    config = REFERENCE.replace(spares=2, failures=FAILURES, collective_timeout_s=TIMEOUT_S, dead_node_s=DEAD_NODE_S)
    return run_nodelab(config, run_dir=tmp_path_factory.mktemp("faulty"), timeout_s=CAP_S)


def _by_kind(result):
    return {m.kind: m for m in result.restarts}


@needs_root
@pytest.mark.slow
def test_losing_nodes_ends_bit_identical_to_uninterrupted(reference, faulty):
    cmp = same_final_state(reference, faulty)
    assert cmp == {"params": True, "optimizer": True, "rng": True, "applied": (STEPS, STEPS), "digest": True}
    assert sorted(_by_kind(faulty)) == sorted(f.kind for f in FAILURES)
    # every failure fired once, in order, and each was followed by a generation that got back past it
    assert [(e["failure"], e["kind"]) for e in faulty.events_of("inject")] == list(enumerate(f.kind for f in FAILURES))
    assert [m.resumed_gen > m.gen for m in faulty.restarts] == [True, True]


@needs_root
@pytest.mark.slow
def test_the_spares_take_the_lost_nodes_places(faulty):
    by_gen = {}
    for e in faulty.events_of("worker_start"):
        by_gen.setdefault(e["gen"], set()).add(e["node"])
    # 4 agents: 2 nodes, then the spares n2 and n3 once the job runs; no replacement is needed
    assert len(faulty.events_of("agent_start")) == 4
    assert by_gen[0] == {"n0", "n1"}
    first_loss, second_loss = (e["node"] for e in faulty.events_of("inject"))
    gens = sorted(by_gen)
    # every round after a loss runs on two nodes, without the lost ones, its newcomers only the waiting spares
    # (which spare joins which round, and whether a round re-forms under load, is the rendezvous's timing)
    assert all(len(by_gen[g]) == 2 for g in gens)
    assert first_loss not in by_gen[gens[1]] and not {first_loss, second_loss} & by_gen[gens[-1]]
    assert set().union(*by_gen.values()) - by_gen[0] <= {"n2", "n3"}


@needs_root
@pytest.mark.slow
def test_a_killed_node_is_noticed_at_once_a_cut_link_only_at_a_timeout(faulty, tiered):
    (killed,) = tiered.restarts
    cut = _by_kind(faulty)["link_cut"]
    first_notice = min(x for x in (killed.peer_noticed_s, killed.detect_s) if x is not None)
    assert killed.kind == "node_kill" and first_notice < min(TIMEOUT_S, DEAD_NODE_S - KEEP_ALIVE_S)
    # a cut link tells nobody: it is noticed by its peer's collective timeout, or by the rendezvous
    # declaring the silent node dead (a spare then steps forward), whichever comes first; never sooner
    assert cut.detect_s >= min(TIMEOUT_S, DEAD_NODE_S - KEEP_ALIVE_S) - 0.05
    if cut.peer_noticed_s is not None and cut.peer_noticed_s <= cut.detect_s:
        assert "timed out" in cut.reason.lower() and cut.peer_noticed_s >= TIMEOUT_S - 0.05


@needs_root
@pytest.mark.slow
def test_a_node_lost_mid_checkpoint_resumes_from_the_previous_checkpoint(faulty):
    m = _by_kind(faulty)["node_kill_in_ckpt"]
    assert m.pre_failure_step == 8 and m.resumed_step == 8 - EVERY
    r = _by_kind(faulty)["link_cut"]
    assert r.resumed_step == r.pre_failure_step // EVERY * EVERY  # the newest persisted step
    assert all(m.reload_source == "disk" for m in faulty.restarts)


@needs_root
@pytest.mark.slow
def test_every_stage_is_measured_and_adds_up(faulty):
    for m in faulty.restarts:
        s = m.stages_s()
        assert all(v >= 0 for v in s.values()) and abs(sum(s.values()) - m.total_s) < 1e-9
        assert m.noticed_by == "agent"


@needs_root
@pytest.mark.slow
def test_nothing_of_the_runs_is_left(reference, faulty):
    tag = (faulty.run_dir / "netns-tag").read_text()
    assert tag.startswith(PREFIX) and leftovers(tag) == {"netns": [], "links": [], "processes": []}
    assert not (reference.run_dir / "netns-tag").exists() and not reference.pids  # the reference made no namespace
    assert leftovers(PREFIX)["links"] == []  # the machine's own namespace never saw a lab link


# ----- the two-tier checkpoint on namespaced nodes (course_lib.checkpoint.tiers) -----
@pytest.fixture(scope="module")
def tiered(tmp_path_factory):
    from course_lib.nodelab import NodeLoss, TierLabConfig, run_tier_nodelab

    # 3 nodes, a snapshot every 2 steps, every 3rd one persisted; node n1 lost at step 11, a spare waiting
    config = TierLabConfig(failures=[NodeLoss(11, nodes=(1,))], spares=1)
    return run_tier_nodelab(config, run_dir=tmp_path_factory.mktemp("tiers"), timeout_s=CAP_S)


@needs_root
@pytest.mark.slow
def test_a_killed_node_resumes_from_memory_on_the_spare_bit_identical(tiered):
    from course_lib.nodelab import reference_digests

    cfg = tiered.config
    newest = (11 - 1) // cfg.every * cfg.every  # the newest snapshot before the kill
    persisted = (11 - 1) // (cfg.every * cfg.persist_every) * cfg.every * cfg.persist_every
    assert newest > persisted  # the test means something: memory is newer than storage
    assert {step for step, _ in tiered.resumed.values()} == {newest}
    assert all(tier in ("own", "buddy") for _, tier in tiered.resumed.values())  # never the persisted tier
    assert "buddy" in {tier for _, tier in tiered.resumed.values()}  # the lost node's shard came from another node
    assert tiered.digests == reference_digests(cfg)
    (m,) = tiered.restarts
    assert m.resumed_step == newest and m.kind == "node_kill"
    assert leftovers((tiered.run_dir / "netns-tag").read_text()) == {"netns": [], "links": [], "processes": []}


@needs_root
@pytest.mark.slow
def test_a_node_and_its_buddy_lost_take_the_spare_and_a_fresh_node_and_resume_from_storage(tmp_path):
    """Two nodes lost at once with one spare: the spare takes one place, the lab brings a fresh node up for
    the other (the benchmark's persisted fallback; a lab that counted the loss as absorbed whole started no
    fresh node, and the 3-node round never formed)."""
    from course_lib.nodelab import NodeLoss, TierLabConfig, reference_digests, run_tier_nodelab

    cfg = TierLabConfig(failures=[NodeLoss(11, nodes=(1, 2))], spares=1)
    res = run_tier_nodelab(cfg, run_dir=tmp_path, timeout_s=CAP_S)
    persisted = (11 - 1) // (cfg.every * cfg.persist_every) * cfg.every * cfg.persist_every
    assert {step for step, _ in res.resumed.values()} == {persisted}
    assert "persisted" in {tier for _, tier in res.resumed.values()}  # shard 1 was only in storage
    started = [e["node"] for e in res.events if e["ev"] == "node_start"]
    assert len(started) == cfg.nodes + 2  # the job's nodes, the spare, one fresh node
    assert res.digests == reference_digests(cfg)
    assert leftovers((res.run_dir / "netns-tag").read_text()) == {"netns": [], "links": [], "processes": []}


# ----- the persisted checkpoint behind a shaped link (course_lib.nodelab.storage) -----
def test_storage_link_settings_and_model():
    from course_lib.nodelab.storage import Link, predicted_fetch_s, run_storage_link

    assert predicted_fetch_s(125_000_000, Link(1000.0, 2.0)) == pytest.approx(1.002)  # 1 Gbit in 1 s, plus 2 ms
    with pytest.raises(ValueError, match="rate_mbit"):
        Link(0.0)
    with pytest.raises(ValueError, match="latency_ms"):
        Link(100.0, -1.0)
    with pytest.raises(ValueError, match="sizes_mib"):
        run_storage_link([])


@needs_root
def test_storage_read_crosses_the_shaped_link_and_nothing_is_left():
    """The persisted bytes arrive bit-exact no sooner than the link allows (its pages were dropped, so they came
    over the storage node's link, not from the reader's page cache); every namespace and process is gone after."""
    from course_lib.nodelab.storage import Link, run_storage_link

    slow = Link(100.0, 1.0)  # 100 Mbit/s: 2 MiB take >= 0.16 s beyond the 64 KiB burst
    res = run_storage_link([2], repeats=1, persisted=slow, buddy=Link(1000.0), timeout_s=120)
    assert {r["tier"] for r in res.rows} == {"buddy", "persisted"} and all(r["bit_exact"] for r in res.rows)
    (p,) = [r for r in res.rows if r["tier"] == "persisted"]
    assert p["fetch_s"] >= (2 * 2**20 - 65536) * 8 / 100e6
    assert res.left == {"netns": [], "links": [], "processes": []}
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert not any(ns in listed for ns in res.netns)
