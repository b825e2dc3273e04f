"""The vendored InfiniteHBD trace, the answer for its fleet, and ``course-budget --log`` (notebook 13)."""
from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from course_lib import data
from course_lib import incidents as inc
from course_lib.__main__ import main
from course_lib.answer import answer
from course_lib.incidents import analysis as an
from course_lib.incidents.report import scenario_for_log

ROOT = Path(__file__).resolve().parent.parent
TRACE = ROOT / "data" / "infinitehbd_fault_trace.json"


@pytest.fixture(scope="module")
def result():
    return inc.answer_for_log(inc.load_trace(), inc.trace_fleet())


def test_the_vendored_trace_matches_its_own_statistics_and_readme():
    log = inc.load_trace()
    stats = json.loads((ROOT / "data" / "infinitehbd_fault_statistics.json").read_text())
    fleet = data.sourced("infinitehbd_fleet.csv")
    assert len(log) == sum(v["LevelTotal"] for v in stats.values())
    for level, classes in stats.items():
        for cls, descs in classes.items():
            if cls == "LevelTotal":
                continue
            got = int(np.sum((log.cause_part("level") == level) & (log.cause_part("class") == cls)))
            assert got == descs["ClassTotal"], (level, cls)
    assert len(np.unique(log.node)) == fleet["servers_with_fault"].value
    assert math.floor(log.days) == fleet["days"].value
    assert log.report.rows_read == 2 * len(log) and log.report.rows_rejected == 0 and not log.open.any()


def test_every_class_of_the_trace_has_a_decision_with_its_reason():
    from course_lib.incidents import policy

    c = policy.classify(inc.load_trace())
    assert c.unlisted == 0
    pol = policy.load_policy()
    assert all(basis.strip() for _, _, basis in pol.rules.values())
    log = inc.load_trace()
    no = set(log.cause_part("class")[~c.interruption].tolist())
    assert no == {"Stress Test Failure", "Change", "Test", "Firmware"}


def test_the_rate_counts_every_server_of_the_fleet_not_only_those_that_failed():
    intr = inc.trace_interruptions()
    fleet = inc.trace_fleet()
    est = an.rate(intr, fleet)
    assert est.rate_per_gpu_day == pytest.approx(est.count / (400 * 8 * intr.days))
    seen_only = an.rate(intr, an.Fleet(231, 8))
    assert seen_only.rate_per_gpu_day / est.rate_per_gpu_day == pytest.approx(400 / 231)  # the trap, by that factor
    counts = an.node_counts(intr, 400)
    assert counts.size == 400 and (counts == 0).sum() >= 400 - 231


def test_the_answer_for_the_trace_adds_up(result):
    a = result.analysis
    rows = {r.key: r.value for r in result.rows()}
    for tag, ans in (("fleet", result.fleet_answer), ("job", result.job_answer)):
        assert 0 < ans.after.floor_fraction <= ans.after.fraction_of_day <= ans.baseline.fraction_of_day <= 1
        assert ans.failures_per_day == pytest.approx(a.rate.rate_per_gpu_day * ans.n_gpus)
    assert result.fleet_answer.n_gpus == 3200 and result.job_answer.n_gpus == 4096
    # the floor's range follows the rate's interval and contains the point value
    assert rows["job_floor_low_pct"] <= rows["job_floor_pct"] <= rows["job_floor_high_pct"]
    same = answer(scenario_for_log(a.rate.rate_per_gpu_day, 4096), spread_draws=0)
    assert result.job_answer.after.floor_fraction == pytest.approx(same.after.floor_fraction)
    assert rows["log_rows_read"] == rows["log_rows_used"] + rows["log_rows_ignored"] + rows["log_rows_rejected"]
    assert rows["faults"] >= rows["interruptions"]
    assert result.spares_replay >= 1 and result.spares_poisson >= 1
    assert result.spare_cost_min_per_day == pytest.approx(result.spares_poisson * 8 / 4096 * 1440)
    text = result.text
    for key in ("rate_per_gpu_day",):
        assert f"{rows[key]:.2e}" in text


def test_the_measured_numbers_other_modules_take(result):
    lem = inc.trace_lemon_removal()
    assert lem == result.analysis.lemon
    assert 0 < lem.capacity_removed < 0.2 and lem.factor_low <= lem.factor <= lem.factor_high
    rep = inc.trace_repeat_fault_share()
    assert rep.within_days == 7.0 and rep.low > rep.poisson_share  # nodes that just failed fail again
    pool = inc.trace_spare_pool(4096)
    assert pool.poisson == result.spares_poisson and pool.replay == result.spares_replay


def test_the_lemon_rows_of_data_are_the_traces_measurement_and_the_lever_clamps_them():
    """data/floor_inputs.csv's infinitehbd_lemon_* rows recomputed from the trace; the course's lever uses them, clamped."""
    from course_lib import levers as lv
    from course_lib.scenario import Scenario

    lem = inc.trace_lemon_removal()
    m = lv.measured_lemon_removal()
    assert (m.threshold, m.nodes_removed) == (lem.threshold, lem.n_removed) == (4, 16)
    assert m.capacity_removed == pytest.approx(lem.capacity_removed, abs=5e-4)
    for row, measured in ((m.factor, lem.factor), (m.factor_low, lem.factor_low), (m.factor_high, lem.factor_high)):
        assert row == pytest.approx(measured, abs=5e-5)  # the rows hold 4 decimals
    # in sample: the same threshold chosen and judged on the whole trace (the gain out of sample does not show)
    intr, fleet = inc.trace_interruptions(), inc.trace_fleet()
    whole = np.bincount(intr.node, minlength=len(intr.nodes))
    lemons = np.flatnonzero(whole >= lem.threshold)
    kept = ~np.isin(intr.node, lemons)
    assert m.in_sample == pytest.approx(kept.sum() / len(intr) * fleet.n_nodes / (fleet.n_nodes - lemons.size), abs=5e-5)
    # out of sample removal bought nothing: the lever's factor is clamped at 1, the bound stays the most removal could buy
    assert m.factor > 1 and not m.gained and m.lever_factor == 1.0
    assert Scenario().lemon_factor == lv.lemon_node_factor() == 1.0
    levers = {x.name: x for x in lv.rate_levers()}
    assert levers["lemon-node removal"].factor == 1.0 and "clamped at x 1.00" in levers["lemon-node removal"].description
    assert levers["no faulty GPU / HBM3"].factor == pytest.approx(lv.lemon_bound())
    assert lv.lemon_bound() < 0.5
    a = answer(spread_draws=0)
    assert "bought nothing out of sample" in a.text and f"x {m.factor:.2f}" in a.text
    fewer = {lever.name: g for lever, g in a.fewer}
    assert fewer["lemon-node removal"].floor_minutes_per_day == pytest.approx(a.after.floor_minutes_per_day)
    assert lv.clamp_lemon_factor(1.3) == 1.0 and lv.clamp_lemon_factor(0.2, lv.lemon_bound()) == lv.lemon_bound()
    with pytest.raises(ValueError, match="give 1"):
        Scenario().replace(lemon_factor=m.factor)
    # a log's own measured factor above 1 is clamped the same way in its answer
    res = inc.answer_for_log(inc.load_trace(), inc.trace_fleet())
    assert res.lemon_after.floor_fraction == pytest.approx(res.job_answer.after.floor_fraction)
    assert "removal buys nothing here" in res.text


def test_scenario_for_log_takes_measured_stages_where_the_log_has_them():
    lab = inc.read_lab_events(ROOT / "data" / "faultlab_events.jsonl")
    st = inc.report.stage_minutes(lab)
    s = scenario_for_log(4e-4, 4096, stages_min=st)
    assert s.detect_min == pytest.approx(st["detect"]) and s.reschedule_min == pytest.approx(st["reschedule"])
    assert s.reload_min == pytest.approx(st["reload"]) and s.rate_per_gpu_day == 4e-4
    plain = scenario_for_log(4e-4, 4096)
    assert plain.detect_min == type(plain)().detect_min


def test_the_cli_prints_the_traces_numbers(capsys):
    assert main(["--log", str(TRACE), "--format", "infinitehbd", "--nodes", "400"]) == 0
    out = capsys.readouterr().out
    for label in ("interruption rate per GPU", "95 % interval, low", "variance / mean", "worst 1 % of nodes",
                  "rate factor, out of sample", "within 5 min of one on another node", "repair time of an interrupted node, median",
                  "90th percentile", "a 4,096-GPU job: GPUs", "floor (its named terms", "rows read 1,168"):
        assert label in out, label
    assert main(["--log", str(TRACE), "--format", "infinitehbd", "--nodes", "400", "--json", "--gpus", "8192"]) == 0
    js = json.loads(capsys.readouterr().out)
    assert js["job_gpus"]["value"] == 8192 and js["report"]["rows_read"] == 1168 and js["text"]


@pytest.mark.parametrize("args, message", [
    (["--format", "infinitehbd", "--nodes", "400"], None),
    (["--nodes", "400"], "--format: required with --log"),
    (["--format", "infinitehbd"], "--nodes: required with --log"),
    (["--format", "infinitehbd", "--nodes", "100"], "n_nodes must be >= the 231 distinct nodes"),
    (["--format", "infinitehbd", "--nodes", "400", "--rate", "1e-4"], "not with --log"),
    (["--format", "infinitehbd", "--nodes", "400", "--tz", "UTC"], "--tz: the InfiniteHBD trace has no clock times"),
    (["--format", "sacct", "--nodes", "400"], "column missing from the header"),
])
def test_the_cli_refuses_bad_log_calls_in_one_line(capsys, args, message):
    code = main(["--log", str(TRACE)] + args)
    err = capsys.readouterr().err
    if message is None:
        assert code == 0
        return
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_the_cli_reads_sacct_with_a_time_zone_and_a_missing_file(capsys, tmp_path):
    fix = ROOT / "tests" / "fixtures" / "incidents" / "sacct_small.txt"
    assert main(["--log", str(fix), "--format", "sacct", "--nodes", "30", "--tz", "Europe/Berlin", "--gpus", "64"]) == 0
    out = capsys.readouterr().out
    assert "rows read 7: used 4, ignored 3, rejected 0" in out and "not measured:" in out
    assert main(["--log", str(tmp_path / "nope.json"), "--format", "infinitehbd", "--nodes", "4"]) == 2
    assert "no such file" in capsys.readouterr().err


def test_the_incident_maths_loads_no_screen_and_no_torch():
    code = ("import importlib, json, sys; importlib.import_module('course_lib.incidents'); "
            "importlib.import_module('course_lib.incidents.cli'); print(json.dumps(sorted(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    loaded = {m.split(".")[0] for m in json.loads(out)}
    assert not loaded & {"matplotlib", "ipywidgets", "torch"}


# ---------------------------------------------------------------- issue 29: the trace's measured numbers at their defaults
def test_the_trace_functions_defaults_are_the_documented_ones():
    intr, fleet = inc.trace_interruptions(), inc.trace_fleet()
    assert (fleet.n_nodes, fleet.gpus_per_node) == (400, 8)  # the README's 400 servers x the course's 8 GPUs
    assert inc.trace_lemon_removal() == an.lemon_removal(intr, 400, 0.5)  # lemons chosen on the first half
    assert inc.trace_repeat_fault_share() == an.repeat_fault_share(intr, 400, 7.0)  # within a week
    assert inc.trace_repeat_fault_share(within_days=None) == an.repeat_fault_share(intr, 400, None)
    assert inc.trace_path().name == "infinitehbd_fault_trace.json" and inc.trace_path(data.DATA_DIR) == inc.trace_path()
    assert len(inc.load_trace(data.DATA_DIR)) == len(inc.load_trace()) >= len(intr)


def test_the_spare_pool_is_poissons_quantile_over_the_jobs_nodes():
    from scipy import stats

    intr, fleet = inc.trace_interruptions(), inc.trace_fleet()
    assert fleet.n_nodes == 400
    per_node_day = len(intr) / (400 * intr.days)  # interruptions per server-day, the zero-fault servers counted
    mean_repair = an.repair_times(intr).mean_days
    for gpus, nodes in ((4096, 512), (4100, 513)):  # a part-filled server is a whole server: ceil(4100 / 8) = 513
        pool = inc.trace_spare_pool(gpus)
        assert pool.poisson == int(stats.poisson.ppf(0.99, per_node_day * nodes * mean_repair)) + 1
        assert pool.replay == an.replay_spares(intr, nodes, 400, 0.99)[0]
        assert pool == (pool.poisson, pool.replay)
    assert inc.trace_spare_pool() == inc.trace_spare_pool(4096, 0.99)
    assert inc.trace_spare_pool(4096, 0.5).poisson < inc.trace_spare_pool(4096, 0.999).poisson
