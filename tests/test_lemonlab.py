"""The lemon-node lab (notebook 14): a node that fails again each time it rejoins, on the nodes lab's
namespaced nodes.

The policy logic and the settings are checked without root, and so is the committed benchmark table (each
policy's failures, restarts and outcome as its rule says). One real run, the smallest that proves what the
gate is for: the pre-flight gate alone on two namespaced nodes (the lemon goes down under the gate's load at
its configured unit, a healthy node passes). The whole policies, a lemon failing in the job, rejoining,
quarantined, the spare taking its place, each run end to end under torchrun, are benchmarks/lemonlab_bench.py's
(three interleaved runs per policy, about a minute each on a loaded 2-core machine: too long for the test
suite); the restart-loop guard that stops the same-node policy is tested by tests/test_faultlab_guard.py.
"""
import os

import pytest

from course_lib.labkit import Lab
from course_lib.nodelab import LabNetwork, net_admin_missing
from course_lib.nodelab.lemon import LEMON_VAR, POLICIES, LemonLabConfig, rejoin_action, run_gate

MISSING = net_admin_missing()
if MISSING and os.environ.get("CI"):
    raise RuntimeError(f"CI must run the nodes lab: {MISSING}")
needs_root = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")


# ----- without root -----
@pytest.mark.parametrize("kw, message", [
    ({"lemon": 2}, r"lemon must be an integer in \[0, 1\] \(the job's nodes"),
    ({"lemon_after": 13}, r"lemon_after must be an integer in \[1, steps=12\]"),
    ({"lemon_after": 0}, r"lemon_after must be an integer >= 1"),
    ({"policy": "reboot"}, r"policy must be one of"),
    ({"policy": "gate", "spares": 0}, r"spares must be >= 1 for policy 'gate'"),
    ({"k": 0}, r"k must be an integer >= 1"),
    ({"nodes": 1}, r"nodes must be an integer >= 2"),
    ({"gate_rounds": 0}, r"gate_rounds must be an integer >= 1"),
])
def test_bad_settings_are_rejected_naming_them(kw, message):
    with pytest.raises(ValueError, match=message):
        LemonLabConfig(**kw)


def test_the_policies_decide_as_documented():
    assert [rejoin_action("same_node", n, 2) for n in (1, 2, 5)] == ["rejoin"] * 3
    assert [rejoin_action("quarantine", n, 2) for n in (1, 2, 3)] == ["rejoin", "quarantine", "quarantine"]
    assert [rejoin_action("quarantine", n, 1) for n in (1, 2)] == ["quarantine"] * 2
    assert rejoin_action("gate", 1, 2) == "gate"
    with pytest.raises(ValueError, match="policy must be one of"):
        rejoin_action("pray", 1, 2)
    assert set(POLICIES) == {"same_node", "quarantine", "gate"}


def test_the_job_is_the_nodes_labs_with_no_scheduled_failure():
    cfg = LemonLabConfig(steps=10, ckpt_every=5, seed=3)
    job = cfg.job()
    assert (job.steps, job.ckpt_every, job.seed, job.failures, job.nodes) == (10, 5, 3, (), 2)
    assert cfg.max_no_progress_restarts == 3  # NVRx's default, read from data/restart_ranges.csv
    assert LemonLabConfig.from_json(cfg.to_json()) == cfg


# ----- real runs (root) -----
@needs_root
def test_the_gate_keeps_the_lemon_out_and_lets_a_healthy_node_in(tmp_path):
    with Lab(tmp_path, timeout_s=240, prefix="gate") as lab, LabNetwork() as net:
        lab.on_close(net.close)
        env = lab.env(GLOO_SOCKET_IFNAME="eth0")
        healthy, lemon = net.add_node(), net.add_node()
        bad = run_gate(lab, net, lemon, dict(env, NODELAB_NODE="n1", **{LEMON_VAR: "2"}), rounds=2, timeout_s=200)
        good = run_gate(lab, net, healthy, dict(env, NODELAB_NODE="n0"), rounds=2, timeout_s=200)
        events = lab.events()
    assert not bad["passed"] and "went down at unit 2" in bad["reason"]
    assert good["passed"] and good["reason"] == "passed"
    assert [e["ev"] for e in events if e.get("gate") == good["gate"]] == ["gate_start", "gate_port", "gate_pass"]
    assert [e["unit"] for e in events if e["ev"] == "gate_fault"] == [2]


def test_quarantine_removes_the_repeats_and_the_stand_in_adds_an_ordinary_nodes_failures():
    from course_lib.nodelab.lemon import quarantine_rate_factor

    assert quarantine_rate_factor(0.217) == pytest.approx(0.783)
    assert quarantine_rate_factor(0.217, 0.024) == pytest.approx(0.807)
    assert quarantine_rate_factor(0.0) == 1.0
    with pytest.raises(ValueError, match=r"repeat_share must be a finite number in \[0, 1\]"):
        quarantine_rate_factor(1.2)
    with pytest.raises(ValueError, match="baseline_share must be <= repeat_share"):
        quarantine_rate_factor(0.1, 0.2)


def test_the_committed_table_counts_what_each_policy_must():
    from course_lib.nodelab.lemon import load_lemon_benchmark

    b = load_lemon_benchmark()
    s, by = b["settings"], b["summary"]
    assert set(by) == set(POLICIES)
    for r in b["runs"]:
        assert r["gpu_s_lost"] == pytest.approx(s["nodes"] * r["until_s"])
        if r["policy"] == "same_node":  # the first failure, then max_no_progress_restarts that make no progress
            assert (r["outcome"], r["regained"], r["failures"]) == ("gave_up", False, s["max_no_progress_restarts"] + 1)
        else:
            assert r["outcome"] == "done" and r["regained"] and r["restarts"] == r["failures"]
            assert r["quarantined"] == [s["lemon"]] and s["lemon"] not in r["joined"]
    assert all(r["failures"] == s["k"] for r in b["runs"] if r["policy"] == "quarantine")
    assert all(r["failures"] == 1 and r["gates"] == 2 for r in b["runs"] if r["policy"] == "gate")
