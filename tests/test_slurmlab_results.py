"""The scheduler lab's committed runs (course_lib.slurmlab.results, data/slurm_requeue.csv): each mode and setting's
median and range worked out by hand on a small table, bad rows refused with their line, and the committed runs
checked against what slurm.conf(5) documents (DOWN after SlurmdTimeout, a requeued job held for cred_expire).
No cluster is started here: the lab's own runs are in tests/test_slurmlab.py.
"""
import pytest

from course_lib.slurmlab import DRAIN_MODES, FALSE_DOWN_MODES, HEALTH_CHECK_INTERVAL_S, MODES, NODE_MODES, PAUSE_S, SPARE_MODES, read_runs, restart_parts, summary

RUNS_HEADER = ("run,mode,setting,slurm_version,slurmd_timeout_s,cred_expire_s,health_check_interval_s,attempts,identical,noticed_s,down_s,requeued_s,"
               "eligible_s,started_s,rendezvous_s,loaded_s,first_step_s,progress_s,detect_s,reschedule_s,reload_s,rewind_s")


def _runs_file(tmp_path, *rows):
    p = tmp_path / "runs.csv"
    p.write_text("\n".join((RUNS_HEADER,) + rows) + "\n")
    return p


def test_the_summary_is_each_mode_and_settings_median_and_range(tmp_path):
    p = _runs_file(tmp_path,
                   "0,node_kill,tuned,22.05.8,6,5,0,2,True,0.1,12,12,22,22,28.7,28.7,28.8,28.8,12,16.7,0.01,0.05",
                   "1,node_kill,tuned,22.05.8,6,5,0,2,True,0.1,10,10,20,21,27.0,27.1,27.2,27.2,10,17.0,0.01,0.05",
                   "2,node_kill,tuned,22.05.8,6,5,0,2,True,0.1,11,11,21,22,28.0,28.1,28.2,28.2,11,17.5,0.01,0.05",
                   "3,worker_crash,tuned,22.05.8,6,5,0,1,True,0.05,,,,,4.3,4.3,4.4,4.4,0.05,4.25,0.01,0.06")
    s = summary(read_runs(p))
    assert list(s) == [("node_kill", "tuned"), ("worker_crash", "tuned")]
    k = s["node_kill", "tuned"]
    # by hand: the middle of (16.7, 17.0, 17.5) and of (12, 10, 11); lowest and highest
    assert (k.n, k.attempts, k.median["reschedule_s"], k.low["reschedule_s"], k.high["reschedule_s"]) == (3, 2, 17.0, 16.7, 17.5)
    assert (k.median["down_s"], k.low["detect_s"], k.high["detect_s"]) == (11.0, 10.0, 12.0)
    w = s["worker_crash", "tuned"]
    assert w.n == 1 and w.median["down_s"] is None and w.median["reschedule_s"] == 4.25


@pytest.mark.parametrize("row, message", [
    ("0,node_kill,tuned,22.05.8,6,5,0,2,False,0.1,12,12,22,22,28.7,28.7,28.8,28.8,12,16.7,0.01,0.05", "did not end bit-identical"),
    ("0,node_kill,tuned,22.05.8,6,5,0,2,yes,0.1,12,12,22,22,28.7,28.7,28.8,28.8,12,16.7,0.01,0.05", "line 2: identical must be"),
    ("0,node_kill,tuned,22.05.8,6,5,0,2,True,0.1,12,x,22,22,28.7,28.7,28.8,28.8,12,16.7,0.01,0.05", "line 2: could not convert"),
])
def test_a_bad_run_row_is_refused_with_its_line(tmp_path, row, message):
    with pytest.raises(ValueError, match=message):
        summary(read_runs(_runs_file(tmp_path, row)))


def test_runs_of_one_mode_that_disagree_are_refused(tmp_path):
    a = "0,node_kill,tuned,22.05.8,6,5,0,2,True,0.1,12,12,22,22,28.7,28.7,28.8,28.8,12,16.7,0.01,0.05"
    with pytest.raises(ValueError, match="differ in attempts"):
        summary(read_runs(_runs_file(tmp_path, a, a.replace(",2,True", ",3,True"))))
    with pytest.raises(ValueError, match="down_s is missing from some runs"):
        summary(read_runs(_runs_file(tmp_path, a, a.replace(",0.1,12,", ",0.1,,"))))
    with pytest.raises(ValueError, match="columns missing: attempts"):
        read_runs(_runs_file(tmp_path).write_text("run,mode,setting\n") and tmp_path / "runs.csv")
    with pytest.raises(ValueError, match="at least one run"):
        summary([])


def test_the_committed_runs_are_whole_and_each_requeue_waited_its_settings():
    runs = read_runs()  # data/slurm_requeue.csv, written by benchmarks/slurmlab_bench.py
    assert set(summary(runs)) == {(m, k) for m in MODES for k in ("default", "tuned")}
    for r in runs:
        assert r["identical"]
        if r["mode"] in DRAIN_MODES:  # slurm.conf(5): a check every HealthCheckInterval (one period may slip: the
            # checks start on slurmctld's background cycle); a drained node takes no new job, so the completed
            # attempt started after the drain; every requeue held for cred_expire
            interval = HEALTH_CHECK_INTERVAL_S[r["setting"]]
            assert r["health_check_interval_s"] == interval and r["attempts"] >= 2
            assert -1.0 <= r["down_s"] <= 2 * interval + 1.0 and r["started_s"] >= r["down_s"] - 1.0
            assert r["eligible_s"] - r["requeued_s"] >= r["cred_expire_s"] - 1
            continue
        if r["mode"] in FALSE_DOWN_MODES:  # a healthy node's slurmd stalled PAUSE_S: DOWN (and a requeue) only past SlurmdTimeout
            if PAUSE_S > r["slurmd_timeout_s"]:
                assert r["attempts"] == 2 and r["noticed_s"] is None
                assert r["slurmd_timeout_s"] * 2 / 3 - 1 <= r["down_s"] <= PAUSE_S + 1
                assert r["eligible_s"] - r["requeued_s"] >= r["cred_expire_s"] - 1
            else:
                assert r["attempts"] == 1 and all(r[k] is None for k in ("noticed_s", "down_s", "rendezvous_s", "detect_s"))
            continue
        assert r["health_check_interval_s"] == 0 and r["attempts"] == (2 if r["mode"] in NODE_MODES else 1)
        if r["mode"] in NODE_MODES:  # slurm.conf(5): DOWN after SlurmdTimeout (pinged every third of it), start after cred_expire
            assert r["down_s"] >= r["slurmd_timeout_s"] * 2 / 3 - 1
            assert r["eligible_s"] - r["requeued_s"] >= r["cred_expire_s"] - 1
            assert r["reschedule_s"] == pytest.approx(r["rendezvous_s"] - r["detect_s"], abs=0.011)
        elif r["mode"] in SPARE_MODES:  # no requeue: the spare in the allocation trains again before or after the DOWN
            assert r["down_s"] >= r["slurmd_timeout_s"] * 2 / 3 - 1 and r["requeued_s"] is None and r["started_s"] is None
            assert 0 <= r["detect_s"] == r["noticed_s"] < 1.0  # the survivor's torchrun sees the lost peer at once
            assert r["reschedule_s"] == pytest.approx(r["rendezvous_s"] - r["noticed_s"], abs=0.011)
        else:  # torchrun handles it inside the allocation: Slurm never sees it
            assert r["down_s"] is None and r["requeued_s"] is None and r["started_s"] is None
        if r["mode"] == "hang":  # seen only at the job's 30 s collective timeout (course_lib.slurmlab.lab)
            assert 30.0 <= r["detect_s"] < 30.0 + 5.0


def test_a_requeued_restart_is_split_per_run_into_detect_scheduler_and_start_up(tmp_path):
    p = _runs_file(tmp_path,
                   "0,node_kill,tuned,22.05.8,6,5,0,2,True,,12,12,22,22,28.5,28.7,28.8,28.8,12,16.5,0.2,0.05",
                   "1,node_kill,tuned,22.05.8,6,5,0,2,True,,10,10,20,21,27.0,27.1,27.2,27.2,10,17.0,0.1,0.05",
                   "2,node_kill,tuned,22.05.8,6,5,0,2,True,,11,11,21,23,28.0,28.1,28.2,28.2,11,17.0,0.1,0.05",
                   "3,worker_crash,tuned,22.05.8,6,5,0,1,True,0.05,,,,,4.3,4.3,4.4,4.4,0.05,4.25,0.01,0.06")
    k = restart_parts(read_runs(p), "node_kill", "tuned")
    # by hand, per run: scheduler = started - DOWN (10, 11, 12), start-up = process group - started (6.5, 6.0, 5.0)
    assert k.n == 3
    assert (k.median["detect_s"], k.low["detect_s"], k.high["detect_s"]) == (11, 10, 12)
    assert (k.median["scheduler_s"], k.low["scheduler_s"], k.high["scheduler_s"]) == (11, 10, 12)
    assert (k.median["startup_s"], k.low["startup_s"], k.high["startup_s"]) == (6.0, 5.0, 6.5)
    # the median of the per-run sums (16.5, 17.0, 17.0), not the sum of the medians (11 + 6.0)
    assert k.median["reschedule_s"] == 17.0 and k.low["reschedule_s"] == 16.5
    with pytest.raises(ValueError, match="was not requeued"):
        restart_parts(read_runs(p), "worker_crash", "tuned")
    with pytest.raises(ValueError, match="no run of mode 'link_cut'"):
        restart_parts(read_runs(p), "link_cut", "tuned")


def test_a_summary_cell_is_the_median_with_its_range_only_where_the_runs_differ(tmp_path):
    p = _runs_file(tmp_path,
                   "0,node_kill,tuned,22.05.8,6,5,0,2,True,0.1,12,12,22,22,28.7,28.7,28.8,28.8,12,16.7,0.01,0.05",
                   "1,node_kill,tuned,22.05.8,6,5,0,2,True,0.1,10,10,20,21,27.0,27.1,27.2,27.2,10,16.7,0.01,0.05",
                   "2,worker_crash,tuned,22.05.8,6,5,0,1,True,0.05,,,,,4.3,4.3,4.4,4.4,0.05,4.25,0.01,0.06")
    s = summary(read_runs(p))
    k = s["node_kill", "tuned"]
    assert k.text("down_s") == "11.0 s (10.0-12.0)"  # by hand: the middle of 10 and 12, then the two
    assert k.text("reschedule_s", ".2f") == "16.70 s"  # both runs alike: no range
    assert s["worker_crash", "tuned"].text("down_s") == "-"  # a phase the failure does not have


def test_a_requeue_with_a_missing_phase_is_refused_not_computed(tmp_path):
    p = _runs_file(tmp_path, "0,node_kill,tuned,22.05.8,6,5,0,2,True,,12,12,22,,28.5,28.7,28.8,28.8,12,16.5,0.2,0.05")
    with pytest.raises(ValueError, match="was not requeued"):
        restart_parts(read_runs(p), "node_kill", "tuned")


def test_the_scheduler_share_is_the_median_over_every_requeued_run_of_a_setting(tmp_path):
    p = _runs_file(tmp_path,
                   "0,node_kill,tuned,22.05.8,6,5,0,2,True,,12,12,22,22,28.5,28.7,28.8,28.8,12,16.5,0.2,0.05",
                   "1,node_kill,tuned,22.05.8,6,5,0,2,True,,10,10,20,21,27.0,27.1,27.2,27.2,10,17.0,0.1,0.05",
                   "2,link_cut,tuned,22.05.8,6,5,0,2,True,,11,11,21,30,36.0,36.1,36.2,36.2,11,25.0,0.1,0.05",
                   "3,worker_crash,tuned,22.05.8,6,5,0,1,True,0.05,,,,,4.3,4.3,4.4,4.4,0.05,4.25,0.01,0.06",
                   "4,health_check,tuned,22.05.8,6,5,5,3,True,0.1,7,7,100,107,117,117,117.1,117.1,7,110,0.01,0.05",
                   "5,health_check,default,22.05.8,300,120,300,3,True,0.1,280,8,300,310,320,320,320.1,320.1,280,40,0.01,0.05")
    from course_lib.requeue import scheduler_share_s

    # by hand: started - DOWN over the three requeued lost-node runs (10, 11, 19); the crash never reached the
    # scheduler, and the drained node's job requeued itself (started - DRAIN 100 s, another path: with it the median
    # would be 15)
    assert scheduler_share_s(read_runs(p), "tuned") == 11
    with pytest.raises(ValueError, match="setting must be one with a requeued run"):  # only a drain at default
        scheduler_share_s(read_runs(p), "default")
