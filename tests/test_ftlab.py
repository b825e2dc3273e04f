"""The torchft lab (course_lib.ftlab): settings, the learned hang timeout, the event log, and one
failure end to end (a killed replica group rejoins from a healthy peer; nothing is left behind)."""
import os

import pytest

from course_lib.faultlab import Failure
from course_lib.labkit import EventLog
from course_lib.ftlab import (BADPUT_BUCKETS, FtConfig, LearnedHangDetector, badput_buckets, load_finals,
                              port_is_open, recoveries, restart_badput, run_ftlab)


@pytest.mark.parametrize("kw, word", [({"groups": 1}, "groups"), ({"steps": 0}, "steps"),
                                      ({"safety_factor": 0.5}, "safety_factor"), ({"timeout_s": 0}, "timeout_s"),
                                      ({"failures": [Failure("kill_in_ckpt", 8, 0)]}, "kind"),
                                      ({"failures": [Failure("kill", 8, 2)]}, "rank"),
                                      ({"failures": [Failure("kill", 2, 1)]}, "step"),
                                      ({"slow": [(5, 0, 0)]}, "factor")])
def test_bad_settings_name_the_setting(kw, word):
    with pytest.raises(ValueError, match=word):
        FtConfig(**kw)


def test_restarts_allowed_per_group():
    c = FtConfig(groups=3, failures=[Failure("kill", 10, 1), Failure("hang", 20, 1)], slow=[(30, 10, 2)])
    assert [c.max_restarts(g) for g in range(3)] == [0, 2, 1]


def test_learned_timeout_is_safety_factor_times_the_longest_step():
    t = [0.0]
    d = LearnedHangDetector(safety_factor=5, warmup=2, clock=lambda: t[0])
    for length in (0.1, 0.2):
        d.begin()
        t[0] += length
        d.end()
    assert d.timeout_s == pytest.approx(1.0)
    d.begin()
    t[0] += 0.6  # a step three times the longest: healthy, not killed
    assert not d.check()
    d.end()
    assert d.timeout_s == pytest.approx(3.0)  # it learned the slow step
    d.begin()
    t[0] += 3.01
    assert d.check() and not d.check()  # fires once
    t[0] += 100
    d2 = LearnedHangDetector(5, warmup=3, clock=lambda: t[0])
    d2.begin()
    t[0] += 1e6
    assert not d2.check()  # warming up: nothing is declared hung


def _synthetic_log(path):
    # two groups, 0.1 s steps; group 1 killed at t = 1.05; survivors commit again at 2.2; group 1 back at 8.0
    for g in (0, 1):
        log = EventLog(path, rank=g, gen=0)
        for i in range(1, 11):
            log("step_done", t=0.1 * i, step=i, participants=2)
    log = EventLog(path, rank=1, gen=0)
    log("inject", t=1.05, kind="kill", step=11, progress=10)
    EventLog(path, rank=0, gen=0)("step_aborted", t=1.2, step=11)
    for i, t in enumerate((2.2, 2.3, 8.0), start=11):
        EventLog(path, rank=0, gen=0)("step_done", t=t, step=i, participants=1 if t < 8 else 2)
    new = EventLog(path, rank=1, gen=1)
    new("worker_start", t=1.3)
    new("pg_ready", t=6.0)
    new("state_loaded", t=7.0, source="peer", step=12)
    new("step_done", t=8.0, step=13, participants=2)


def test_recovery_from_the_event_log(tmp_path):
    from course_lib.faultlab import read_events

    p = tmp_path / "events.jsonl"
    _synthetic_log(p)
    (r,) = recoveries(read_events(p), groups=2)
    assert (r.kind, r.group, r.recovered_from) == ("kill", 1, "peer")
    assert r.stall_s == pytest.approx(1.15) and r.rejoin_s == pytest.approx(6.95)
    assert r.restart_s == pytest.approx(4.95) and r.recover_s == pytest.approx(5.95)
    assert r.survivor_steps_while_out == 2 and r.aborted_steps == 1 and r.step_time_s == pytest.approx(0.1)
    assert r.gpu_seconds_lost(ranks_per_group=1, groups=2) == pytest.approx(2 * 1.15 + 6.95)
    b = badput_buckets(r, 1, 2)
    assert tuple(b) == BADPUT_BUCKETS and sum(b.values()) == pytest.approx(2 * 1.15 + 6.95)
    w = restart_badput({"detect": 1, "reschedule": 4, "reload": 0.2, "rewind": 0.5}, ranks=2)
    assert sum(w.values()) == pytest.approx(2 * 5.7) and w["PROGRAM_STARTUP"] == 8


def _our_processes(cfg_marker: str) -> list[int]:
    found = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/cmdline", "rb") as fh:
                    if cfg_marker.encode() in fh.read():
                        found.append(int(d))
            except OSError:
                pass
    return found


@pytest.mark.slow
def test_one_failure_end_to_end(tmp_path):
    """A killed replica group: the survivor keeps committing, the group rejoins from its peer, the replicas
    end identical, every process exits and the lighthouse's port is closed (run_ftlab cleans up also on error)."""
    cfg = FtConfig(groups=2, steps=60, failures=[Failure("kill", 20, rank=1)], step_compute_s=0.05)
    res = run_ftlab(cfg, timeout_s=150, run_dir=tmp_path)
    (r,) = res.recoveries
    assert r.survivor_steps_while_out >= 1  # the survivor kept committing while group 1 was out
    assert r.recovered_from == "peer" and r.rejoin_s > r.stall_s > 0
    after = sorted(e["step"] for e in res.events_of("step_done") if e["rank"] == 0 and e["t"] >= r.t_fail)
    assert after == list(range(after[0], res.steps_committed + 1))  # from the failure on, the survivor committed every step
    assert 0 < res.committed_share(1) < res.committed_share(0)  # the failed group missed the steps it was out
    assert res.replicas_identical
    finals = load_finals(res)
    import torch

    for k, v in finals[0]["model"].items():
        assert torch.equal(v, finals[1]["model"][k])
    assert not port_is_open(res.lighthouse_port)
    # the lighthouse bound port 0 and reported what it got: the port was never chosen before the bind
    assert [e["port"] for e in res.events_of("lighthouse_ready")] == [res.lighthouse_port] and res.lighthouse_port > 0
    assert all(not os.path.exists(f"/proc/{p}") or open(f"/proc/{p}/stat").read().split()[2] == "Z" for p in res.pids)
    assert _our_processes(str(tmp_path)) == []


def test_committed_comparison_and_the_ratio_with_groups():
    from course_lib.ftlab import load_comparison, ratio_with_groups

    c = load_comparison()
    k = c.summary["kill"]
    assert c.ratio("kill") == pytest.approx(k["whole_gpu_s"] / k["ft_gpu_s"])
    assert all(s["ft_identical"] and s["ft_recovered_from"] == ["peer"] for s in c.summary.values())
    r = [ratio_with_groups(10.0, 1.0, 8.0, g) for g in (1, 2, 8, 1e9)]
    assert r == sorted(r) and r[-1] == pytest.approx(10.0)
    with pytest.raises(ValueError, match="rejoin_s"):
        ratio_with_groups(10.0, 1.0, 0.0, 2)


def test_replica_lab_rows_are_the_committed_comparison():
    """data/replica_lab.csv (the model's inputs) holds the committed benchmark's medians, not numbers typed apart from it."""
    from course_lib.data import load_table
    from course_lib.ftlab import load_comparison

    c = load_comparison()
    rows = {r["key"]: float(r["value"]) for r in load_table("replica_lab.csv").rows}
    assert rows["ftlab_survivor_stall"] == round(c.summary["kill"]["ft_stall_s"], 2)
    assert rows["ftlab_rejoin"] == round(c.summary["kill"]["ft_rejoin_s"], 2)
    (default,) = [r for r in c.sweep if r["safety_factor"] == c.ft_config["safety_factor"]]
    assert rows["ftlab_hang_detect_per_step"] == round(default["hang_detect_per_step"], 2)


def test_committed_group_sweep_adds_up_from_its_runs():
    """benchmarks/results/ftlab_groups.json: each cell is the median of its runs, each run's GPU-seconds are its
    ranks x its seconds, and the model column is ratio_with_groups with the smallest G's inputs."""
    import json
    import statistics
    from pathlib import Path

    from course_lib.ftlab import ratio_with_groups

    p = json.loads((Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "ftlab_groups.json").read_text())
    assert set(p["groups"]) >= {2, 4, 8} and p["reps"] >= 3
    runs = [r for r in p["rows"] if not r["error"]]
    for r in runs:
        if r["setting"] == "whole":
            assert r["gpu_s_lost"] == pytest.approx(r["groups"] * r["total_s"])
        else:
            assert r["gpu_s_lost"] == pytest.approx(r["groups"] * r["stall_s"] + r["rejoin_s"])
            assert r["identical"] and r["recovered_from"] == "peer"
    cells = [s for s in p["summary"] if s["scenario"] == "kill"]
    assert sorted(s["groups"] for s in cells) == sorted(p["groups"])
    base = min(cells, key=lambda s: s["groups"])
    for s in cells:
        mine = [r for r in runs if r["scenario"] == "kill" and r["groups"] == s["groups"]]
        w = [r["gpu_s_lost"] for r in mine if r["setting"] == "whole"]
        f = [r["gpu_s_lost"] for r in mine if r["setting"] == "torchft"]
        assert s["ratio"] == pytest.approx(statistics.median(w) / statistics.median(f))
        assert s["model_ratio"] == pytest.approx(ratio_with_groups(base["whole_restart_s"], base["ft_stall_s"],
                                                                   base["ft_rejoin_s"], s["groups"]))
        assert s["model_err"] == pytest.approx(s["model_ratio"] / s["ratio"] - 1)


def test_the_lighthouse_reports_the_port_it_bound_and_loads_without_torch():
    """torchft's own lighthouse server, loaded from its extension module without importing torch, binds
    127.0.0.1:0 and reports the port; the address parser takes the port off an address and refuses others."""
    import subprocess
    import sys

    from course_lib.ftlab.lighthouse import port_of

    assert port_of("http://vm:43817") == 43817 and port_of("http://127.0.0.1:8/") == 8
    for bad in ("http://vm", "vm:port", ""):
        with pytest.raises(ValueError, match="address"):
            port_of(bad)
    code = ("import sys; from course_lib.ftlab.lighthouse import lighthouse_server_class as c; "
            "s = c()(bind='127.0.0.1:0', min_replicas=1); print(s.address(), 'torch' in sys.modules); s.shutdown()")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120).stdout.split()
    assert port_of(out[0]) > 0 and out[1] == "False"
