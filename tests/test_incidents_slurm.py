"""Slurm's accounting as the course's log (notebook 13's reader; the scheduler lab, course_lib.slurmlab): the node-events reader, the requeue chain's
measured reschedule, a job-level log's per-node analyses reported as not available, and the CLI.

The inputs here are hand-made (their expected values worked out in the comments), except the last tests':
the scheduler lab's own exports of a measured run, committed under benchmarks/results/slurmlab/ (a fresh
run's are read in tests/test_slurmlab.py).
"""
from __future__ import annotations

import csv
import json
import math
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest

from course_lib import incidents as inc
from course_lib.__main__ import main
from course_lib.incidents.schema import LogFormatError

EVENTS_HEADER = "Cluster|NodeName|TimeStart|TimeEnd|State|Reason|User"
SACCT_HEADER = "JobID|State|Start|End|NodeList|ExitCode"

# A hand-made job-level export: one 512-node job interrupted three times. Its attempts end on days 2,
# 5 and 8 (since 2024-05-01T00:00) and the next ones start 120 s, 150 s and 600 s later.
JOB_LEVEL = (SACCT_HEADER,
             "1000|NODE_FAIL|2024-05-01T00:00:00|2024-05-03T00:00:00|gpu[001-512]|0:0",
             "1000|NODE_FAIL|2024-05-03T00:02:00|2024-05-06T00:00:00|gpu[001-511,513]|0:0",
             "1000|NODE_FAIL|2024-05-06T00:02:30|2024-05-09T00:00:00|gpu[002-513]|0:0",
             "1000|COMPLETED|2024-05-09T00:10:00|2024-05-20T00:00:00|gpu[002-513]|0:0")

# Hand-made node events on the same clock. gpu007: DOWN at day 1 23:59, then DRAIN from day 2 12:00
# (before it came back at day 3 00:00) to day 4 00:00: one fault from day 1 23:59 to day 4. A cluster
# event (no NodeName) and a MAINT are not node faults. gpu001: drained at day 4 23:59, still drained.
# gpu513: FAIL from day 7 23:58 to day 9. The DRAIN's reason holds a '|' (sacctmgr does not escape it).
EVENTS = (EVENTS_HEADER,
          "lab|gpu007|2024-05-02T23:59:00|2024-05-04T00:00:00|DOWN*|Not responding|slurm(64030)",
          "lab||2024-05-01T00:00:00|Unknown|||",
          "lab|gpu007|2024-05-03T12:00:00|2024-05-05T00:00:00|DRAIN|health check: GPU|xid 79|root(0)",
          "lab|gpu001|2024-05-05T23:59:00|Unknown|DRAIN|health check failed|root(0)",
          "lab|gpu010|2024-05-07T00:00:00|2024-05-07T02:00:00|MAINT|upgrade|root(0)",
          "lab|gpu513|2024-05-08T23:58:00|2024-05-10T00:00:00|FAIL|ecc|root(0)")


def _write(tmp_path: Path, name: str, lines) -> Path:
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n")
    return p


# ---------------------------------------------------------------------------------- node events
def test_node_events_are_one_fault_per_node_span_merged_and_on_the_sacct_clock(tmp_path):
    ev = inc.read_slurm_events(_write(tmp_path, "events.txt", EVENTS), origin="2024-05-01T00:00:00")
    got = sorted(zip(ev.node_names.tolist(), (ev.start * 24).tolist(), (ev.end * 24).tolist(),
                     [ev.causes[c] for c in ev.cause]))
    assert got[0][:2] == ("gpu001", pytest.approx(4 * 24 + 23 + 59 / 60)) and math.isnan(got[0][2])
    assert got[0][3] == ("Slurm node", "DRAIN", "health check failed")
    assert got[1][:3] == ("gpu007", pytest.approx(47 + 59 / 60), pytest.approx(4 * 24.0))  # DOWN then DRAIN: one fault
    assert got[1][3] == ("Slurm node", "DOWN", "Not responding")
    assert got[2][:3] == ("gpu513", pytest.approx(7 * 24 + 23 + 58 / 60), pytest.approx(9 * 24.0))
    assert got[2][3] == ("Slurm node", "FAIL", "ecc")
    r = ev.report
    assert r.rows_read == 6 and r.ignored == {"cluster event (no NodeName: the cluster's size changed, not a node fault)": 1,
                                              "not a node fault (state MAINT)": 1}
    assert r.notes["Reason holding a '|' (joined back)"] == 1 and r.first_line["Reason holding a '|' (joined back)"] == 4
    assert r.notes["event continuing its node's previous fault (merged into one fault)"] == 1
    assert r.notes["node still down or drained at the end of the export (its repair time is censored)"] == 1
    assert ev.origin == "2024-05-01T00:00:00+00:00"
    # without an origin, day 0 is the earliest fault (gpu007's DOWN)
    alone = inc.read_slurm_events(_write(tmp_path, "events.txt", EVENTS))
    assert sorted(alone.start.tolist())[0] == 0.0 and alone.origin == "2024-05-02T23:59:00+00:00"


def test_node_events_read_sacctmgrs_own_column_names_and_a_time_zone(tmp_path):
    p = _write(tmp_path, "events.txt", ("NodeName|Start|End|State", "n1|2024-03-31T01:00:00|2024-03-31T04:00:00|DOWN"))
    berlin = inc.read_slurm_events(p, tz="Europe/Berlin")  # 01:00 CET to 04:00 CEST: two hours, not three
    assert berlin.duration_days[0] * 24 == pytest.approx(2.0) and berlin.origin == "2024-03-31T00:00:00+00:00"


@pytest.mark.parametrize("row, field, message", [
    ("lab|n1|2024-05-01T00:00:00|2024-05-02T00:00:00|BROKEN|x|root(0)", "State", "must be a Slurm node state"),
    ("lab|n1|2024-05-01T00:00:00|2024-05-02T00:00:00", "(row)", "has 4 fields, the header 7 (a truncated row?)"),
    ("lab|n1|2024-05-02T00:00:00|2024-05-01T00:00:00|DOWN|x|root(0)", "TimeEnd", "is before TimeStart"),
    ("lab|n1|Unknown|2024-05-01T00:00:00|DOWN|x|root(0)", "TimeStart", "every node event has its start"),
    ("lab|n1|yesterday|2024-05-01T00:00:00|DOWN|x|root(0)", "TimeStart", ""),
])
def test_a_bad_node_event_names_its_line_and_field(tmp_path, row, field, message):
    p = _write(tmp_path, "events.txt", (EVENTS_HEADER, "lab|n0|2024-05-01T00:00:00|2024-05-01T01:00:00|DOWN|ok|root(0)", row))
    with pytest.raises(LogFormatError) as e:
        inc.read_slurm_events(p)
    assert (Path(e.value.file).name, e.value.line, e.value.field) == ("events.txt", 3, field) and message in str(e.value)
    kept = inc.read_slurm_events(p, errors="reject")
    assert len(kept) == 1 and kept.report.rows_rejected == 1


def test_node_events_without_their_columns_or_faults_or_text_are_refused(tmp_path):
    with pytest.raises(LogFormatError, match=r"events.txt, line 1, field TimeEnd: column missing from the header"):
        inc.read_slurm_events(_write(tmp_path, "events.txt", ("NodeName|TimeStart|State", "n1|2024-05-01T00:00:00|DOWN")))
    only_maint = _write(tmp_path, "events.txt", (EVENTS_HEADER, "lab|n1|2024-05-01T00:00:00|Unknown|MAINT|x|root(0)"))
    with pytest.raises(inc.EmptyLogError) as e:
        inc.read_slurm_events(only_maint)
    assert str(e.value) == "events.txt holds no node fault (DOWN, DRAIN or FAIL event): give window=(first day, last day) to rate it"
    assert e.value.cli_message().endswith("give --window FIRST_DAY LAST_DAY to rate it")
    assert len(inc.read_slurm_events(only_maint, window=(0, 10))) == 0
    binary = tmp_path / "events.gz"
    binary.write_bytes(b"\x1f\x8b\x08\x00" + bytes(range(256)))
    with pytest.raises(LogFormatError, match=r"line 1, field \(encoding\): not a text export of the slurm-events format "
                                             r"\(a Slurm sacctmgr show event --parsable2 export\): byte 0x8b at offset 1"):
        inc.read_slurm_events(binary)
    with pytest.raises(ValueError, match="origin"):
        inc.read_slurm_events(_write(tmp_path, "events.txt", EVENTS), origin="soon")


# ---------------------------------------------------------------------------------- the reschedule
def test_the_reschedule_is_the_gap_between_a_failed_attempt_and_the_next(tmp_path):
    log = inc.read_sacct(_write(tmp_path, "sacct.txt", JOB_LEVEL))
    rs = inc.reschedule_times(log)
    assert rs.seconds.tolist() == pytest.approx([120.0, 150.0, 600.0]) and rs.open == 0 and rs.count == 3
    assert (rs.median_s, rs.min_s, rs.max_s) == pytest.approx((150.0, 120.0, 600.0))
    # linear between order statistics: q = 0.1 sits 0.2 of the way from 120 to 150; q = 0.9 0.8 from 150 to 600
    assert rs.quantile_s(0.1) == pytest.approx(126.0) and rs.quantile_s(0.9) == pytest.approx(510.0)
    assert rs.text() == "150 s at the median over 3 requeues (shortest 120 s, longest 600 s)"
    with pytest.raises(ValueError, match="q"):
        rs.quantile_s(1.5)
    # the last interruption never requeued: one open, the other two timed
    log = inc.read_sacct(_write(tmp_path, "sacct.txt", JOB_LEVEL[:3]))
    rs = inc.reschedule_times(log)
    assert rs.seconds.tolist() == pytest.approx([120.0]) and rs.open == 1
    assert rs.text() == "120 s at the median over 1 requeue (shortest 120 s, longest 120 s)"


def test_a_reschedule_needs_a_sacct_log_with_a_requeue(tmp_path):
    with pytest.raises(ValueError, match="no interruption of the log was followed by a later attempt"):
        inc.reschedule_times(inc.read_sacct(_write(tmp_path, "sacct.txt", JOB_LEVEL[:2])))
    with pytest.raises(ValueError, match="log must be a sacct log"):
        inc.reschedule_times(inc.read_slurm_events(_write(tmp_path, "events.txt", EVENTS)))


def test_a_job_level_log_says_it_cannot_name_the_failed_node(tmp_path):
    log = inc.read_sacct(_write(tmp_path, "sacct.txt", JOB_LEVEL))
    why = inc.node_attribution(log)
    assert why.startswith("a job-level log: sacct's NodeList names every node of the job (512 in its largest attempt)")
    one_node = inc.read_sacct(_write(tmp_path, "one.txt", (SACCT_HEADER,
                                                            "5|NODE_FAIL|2024-05-01T00:00:00|2024-05-01T01:00:00|n1|0:0",
                                                            "5|COMPLETED|2024-05-01T01:02:00|2024-05-01T02:00:00|n2|0:0")))
    assert inc.node_attribution(one_node) is None
    assert inc.node_attribution(inc.read_slurm_events(_write(tmp_path, "events.txt", EVENTS))) is None


# ---------------------------------------------------------------------------------- the answer
PER_NODE_KEYS = ("nodes_with_fault", "dispersion_ratio", "negbin_shape", "worst_nodes_share", "lemon_factor", "repeat_share",
                 "repeat_week_share", "burst_share", "repair_median_h", "spares_poisson", "job_floor_lemon_pct")


def test_a_job_level_log_rates_the_job_and_marks_every_per_node_analysis_unavailable(tmp_path):
    log = inc.read_sacct(_write(tmp_path, "sacct.txt", JOB_LEVEL))
    ans = inc.answer_for_log(log, inc.Fleet(512, 8), 4096)
    # 3 interruptions over the 19 days from the first Start to the last End, on 512 x 8 GPUs
    assert ans.analysis.rate.rate_per_gpu_day == pytest.approx(3 / (512 * 8 * 19))
    d = ans.as_dict()
    for key in PER_NODE_KEYS:
        assert d[key]["value"] is None and d[key]["not_available"], key
    assert "a job-level log" in d["lemon_factor"]["not_available"]
    assert d["spares_poisson"]["not_available"].startswith("it needs the nodes' repair times")
    assert d["reschedule_median_s"]["value"] == pytest.approx(150.0) and d["reschedule_count"]["value"] == 3
    assert d["reschedule_p90_s"]["value"] == pytest.approx(510.0)
    table = ans.table()
    assert table.count("not available") == len(PER_NODE_KEYS)
    assert "Per-node analyses are not available: a job-level log" in ans.text
    assert "150 s at the median over 3 requeues (shortest 120 s, longest 600 s), measured" in ans.text
    json.dumps(d, allow_nan=True)
    # the job ran on 512 nodes at a time (513 distinct: it came back on a spare): a fleet of fewer is refused
    with pytest.raises(ValueError, match=r"fleet.n_nodes must be >= the 512 nodes the log's largest attempt ran on \(got 511\)"):
        inc.answer_for_log(log, inc.Fleet(511, 8), 4096)


def test_node_events_give_the_per_node_analyses_of_a_job_level_log(tmp_path):
    log = inc.read_sacct(_write(tmp_path, "sacct.txt", JOB_LEVEL))
    ev = inc.read_slurm_events(_write(tmp_path, "events.txt", EVENTS), origin=log.origin)
    ans = inc.answer_for_log(log, inc.Fleet(600, 8), 4096, node_events=ev)
    d = ans.as_dict()
    assert not any("not_available" in v for v in d.values() if isinstance(v, dict))
    assert d["nodes_with_fault"]["value"] == 3 and d["nodes_with_fault"]["label"] == "nodes with a fault in the node events"
    # the rate is still the job's: 3 interruptions over 19 days on 600 x 8 GPUs
    assert ans.analysis.rate.rate_per_gpu_day == pytest.approx(3 / (600 * 8 * 19))
    # repairs from the events: gpu007 48 h 1 min, gpu513 24 h 2 min closed; gpu001 still open (censored)
    assert d["repair_censored"]["value"] == 1
    assert sorted((ans.analysis.node_log.duration_days * 24)[~ans.analysis.node_log.open].tolist()) == pytest.approx(
        [24 + 2 / 60, 48 + 1 / 60])
    with pytest.raises(ValueError, match="node_events must be an IncidentLog"):
        inc.analyse(log, inc.Fleet(600, 8), node_events="events.txt")


def test_a_lemon_factor_of_zero_is_reported_not_applied():
    from course_lib.incidents.analysis import Fleet
    c = ("Hardware Failure", "GPU", "GPU Lost")
    # node a: 5, 10 (first half: 2 faults, flagged at threshold 2) and 40 (the only later one): removing a
    # takes every second-half interruption, a factor of 0
    log = inc.IncidentLog.build([5.0, 10.0, 40.0], [5.5, 10.5, 40.5], ["a", "a", "a"], [c, c, c], window=(0.0, 60.0))
    ans = inc.answer_for_log(log, Fleet(4, 8), 32, lemon_threshold=2)
    assert ans.analysis.lemon.factor == 0.0 and ans.lemon_after is None
    assert ans.unavailable["lemon lever"].startswith("a measured factor of x 0")
    assert ans.as_dict()["job_floor_lemon_pct"]["value"] is None


# ---------------------------------------------------------------------------------- the CLI
def test_the_cli_budgets_a_512_node_job_level_log_and_says_what_it_cannot_measure(capsys, tmp_path):
    p = _write(tmp_path, "sacct.txt", JOB_LEVEL)
    assert main(["--log", str(p), "--format", "sacct", "--nodes", "512"]) == 0
    out = capsys.readouterr().out
    table_rows = [ln for ln in out.splitlines() if ln.endswith("not available")]
    assert "reschedule, measured: median" in out and len(table_rows) == len(PER_NODE_KEYS)
    assert "not measured: nodes with a fault, dispersion, negative binomial, worst nodes, lemon removal" in out
    assert main(["--log", str(p), "--format", "sacct", "--nodes", "512", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["lemon_factor"]["value"] is None and d["reschedule_median_s"]["value"] == pytest.approx(150.0)


def test_the_cli_reads_node_events_beside_sacct_or_alone(capsys, tmp_path):
    s, e = _write(tmp_path, "sacct.txt", JOB_LEVEL), _write(tmp_path, "events.txt", EVENTS)
    assert main(["--log", str(s), "--format", "sacct", "--events", str(e), "--nodes", "600"]) == 0
    out = capsys.readouterr().out
    assert "the node events: " in out and "nodes with a fault in the node events" in out and "not available" not in out
    assert main(["--log", str(e), "--format", "slurm-events", "--nodes", "600"]) == 0
    out = capsys.readouterr().out
    assert "3 of the log's 3 faults interrupt a job" in out


@pytest.mark.parametrize("args, message", [
    (["--format", "infinitehbd", "--events", "E"], "argument --events: only with --format sacct"),
    (["--format", "sacct", "--events", "nope.txt"], "argument --events: no such file 'nope.txt'"),
])
def test_the_cli_refuses_events_it_cannot_use(capsys, tmp_path, args, message):
    s = _write(tmp_path, "sacct.txt", JOB_LEVEL)
    assert main(["--log", str(s), "--nodes", "600"] + args) == 2
    assert message in capsys.readouterr().err


def test_the_cli_says_to_give_its_own_window_flag_for_an_empty_log(capsys, tmp_path):
    p = _write(tmp_path, "sacct.txt", (SACCT_HEADER,))
    assert main(["--log", str(p), "--format", "sacct", "--nodes", "4"]) == 2
    err = capsys.readouterr().err
    assert "give --window FIRST_DAY LAST_DAY to rate it" in err and "window=(" not in err


def test_an_event_time_far_beyond_any_log_names_its_line_and_field(capsys, tmp_path):
    events = [{"node_id": "a", "event_time": 1.0, "event_type": "fault_start", "fault_level": "Hardware Failure",
               "fault_class": "GPU", "fault_description": "GPU Lost"},
              {"node_id": "a", "event_time": 1e308, "event_type": "fault_end", "fault_level": "Hardware Failure",
               "fault_class": "GPU", "fault_description": "GPU Lost"}]
    p = tmp_path / "t.json"
    p.write_text("[\n" + ",\n".join(json.dumps(e) for e in events) + "\n]\n")
    assert main(["--log", str(p), "--format", "infinitehbd", "--nodes", "4"]) == 2
    err = capsys.readouterr().err
    assert "t.json, line 3, field event_time: must be a finite number of days >= 0 and at most 100,000" in err
    assert "rate_per_gpu_day" not in err
    np.testing.assert_equal(inc.read_infinitehbd(p, errors="reject").report.rows_rejected, 1)


def test_node_event_edges_a_reason_with_two_bars_an_instant_event_and_back_to_back_spans(tmp_path):
    p = _write(tmp_path, "events.txt", (
        EVENTS_HEADER,
        "lab|n1|2024-05-01T00:00:00|2024-05-01T00:00:00|DOWN|a|b|c|root(0)",      # instant: TimeEnd == TimeStart
        "lab|n2|2024-05-01T00:00:00|2024-05-01T01:00:00|DOWN|Not responding|slurm(1)",
        "lab|n2|2024-05-01T01:00:00|2024-05-01T02:00:00|DRAIN|health|root(0)"))  # starts as the DOWN ends: one fault
    ev = inc.read_slurm_events(p)
    got = sorted(zip(ev.node_names.tolist(), (ev.duration_days * 24).tolist(), [ev.causes[c][2] for c in ev.cause]))
    assert got == [("n1", 0.0, "a|b|c"), ("n2", pytest.approx(2.0), "Not responding")]
    assert ev.report.notes["Reason holding a '|' (joined back)"] == 1
    assert ev.report.notes["event continuing its node's previous fault (merged into one fault)"] == 1
    # an open span continued by another stays open
    p = _write(tmp_path, "events.txt", (EVENTS_HEADER, "lab|n2|2024-05-01T00:00:00|2024-05-01T01:00:00|DOWN|x|root(0)",
                                        "lab|n2|2024-05-01T00:30:00|Unknown|DRAIN|y|root(0)"))
    assert math.isnan(inc.read_slurm_events(p, window=(0.0, 1.0)).end[0])


def test_an_empty_events_export_or_an_unknown_origin_is_refused(tmp_path):
    empty = _write(tmp_path, "events.txt", ("",))
    with pytest.raises(inc.EmptyLogError, match="events.txt holds no rows: give window="):
        inc.read_slurm_events(empty)
    assert len(inc.read_slurm_events(empty, window=(0.0, 1.0))) == 0
    with pytest.raises(ValueError, match=r"origin must be a time \(got 'Unknown'\)"):
        inc.read_slurm_events(_write(tmp_path, "events.txt", EVENTS), origin="Unknown")


def test_a_binary_file_is_refused_by_the_library_readers_too(tmp_path):
    binary = tmp_path / "log.bin"
    binary.write_bytes(b"start,end\n\xff\xfe\x00\x01")
    for read, fmt in ((inc.read_csv, "csv"), (inc.read_sacct, "sacct"), (inc.read_infinitehbd, "infinitehbd")):
        with pytest.raises(LogFormatError) as e:
            read(binary)
        assert e.value.field == "(encoding)" and e.value.line == 2, fmt
        assert f"not a text export of the {fmt} format" in str(e.value) and "byte 0xff at offset 10" in str(e.value)
    nul = tmp_path / "nul.txt"
    nul.write_bytes(b"JobID|State\n1|\x00")  # valid UTF-8 but a NUL: a binary file
    with pytest.raises(LogFormatError, match=r"byte 0x00 at offset 14"):
        inc.read_sacct(nul)


def test_a_one_node_interruption_carries_no_job_level_note(tmp_path):
    log = inc.read_sacct(_write(tmp_path, "one.txt", (SACCT_HEADER,
                                                      "5|NODE_FAIL|2024-05-01T00:00:00|2024-05-01T01:00:00|n1|0:0",
                                                      "5|COMPLETED|2024-05-01T01:02:00|2024-05-01T02:00:00|n2|0:0")))
    assert not any("several nodes" in k for k in log.report.notes)


# The scheduler lab's exports of the committed measurement (benchmarks/slurmlab_bench.py): sacct and
# sacctmgr's own text, read here by the course's readers; the expected values are worked out from
# the text itself with the standard library (the job's own rows, JobID without a step suffix).
LAB_RUNS = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "slurmlab"
LAB_ROWS = Path(__file__).resolve().parents[1] / "data" / "slurm_requeue.csv"


def _job_rows(sacct: Path) -> list[dict]:
    lines = sacct.read_text().splitlines()
    header = lines[0].split("|")
    rows = [dict(zip(header, ln.split("|"))) for ln in lines[1:] if ln.strip()]
    return [r for r in rows if "." not in r["JobID"]]


def _measured_row(mode: str, setting: str) -> dict:
    with LAB_ROWS.open() as fh:
        return next(r for r in csv.DictReader(fh) if (r["mode"], r["setting"]) == (mode, setting))


@pytest.mark.parametrize("setting", ["default", "tuned"])
def test_the_labs_node_kill_export_gives_the_requeue_it_measured(setting):
    run = LAB_RUNS / f"node_kill-{setting}"
    jobs = _job_rows(run / "sacct.txt")
    assert [j["State"] for j in jobs] == ["NODE_FAIL", "COMPLETED"]
    gap = (datetime.fromisoformat(jobs[1]["Start"]) - datetime.fromisoformat(jobs[0]["End"])).total_seconds()
    log = inc.read_sacct(run / "sacct.txt")
    assert len(log) == 1 and log.report.ignored == {"job step (the job's own row counts)": 4}
    r = inc.reschedule_times(log)
    assert r.count == 1 and r.open == 0 and r.seconds.tolist() == pytest.approx([gap], abs=1e-6)  # days on the clock: float error
    row = _measured_row("node_kill", setting)  # the lab's phases: the requeue's Start less its requeue time
    assert float(row["started_s"]) - float(row["requeued_s"]) == pytest.approx(gap, abs=0.011)
    events = inc.read_slurm_events(run / "events.txt", origin=log.origin)
    assert [events.nodes[i] for i in events.node] == ["n1"]  # the killed node, which sacct cannot name
    assert events.causes[events.cause[0]][1] == "DOWN" and math.isnan(events.end[0])  # still down when exported


def test_the_cli_budgets_the_labs_export_with_its_node_events(capsys):
    run = LAB_RUNS / "node_kill-default"
    jobs = _job_rows(run / "sacct.txt")
    gap = (datetime.fromisoformat(jobs[1]["Start"]) - datetime.fromisoformat(jobs[0]["End"])).total_seconds()
    assert main(["--log", str(run / "sacct.txt"), "--format", "sacct", "--events", str(run / "events.txt"),
                 "--nodes", "3", "--gpus-per-node", "1", "--gpus", "2"]) == 0
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if ln.startswith("  reschedule, measured: median"))
    assert line.split()[-2] == f"{gap:.1f}"
    assert next(ln for ln in out.splitlines() if ln.startswith("nodes with a fault in the node events")).split()[-2] == "1"


@pytest.mark.parametrize("setting", ["default", "tuned"])
def test_the_labs_worker_crash_never_reaches_the_schedulers_accounting(setting):
    run = LAB_RUNS / f"worker_crash-{setting}"
    assert [j["State"] for j in _job_rows(run / "sacct.txt")] == ["COMPLETED"]
    assert (run / "events.txt").read_text().splitlines()[1:] == []
    log = inc.read_sacct(run / "sacct.txt")
    assert len(log) == 0 and log.report.ignored["not an interruption (state COMPLETED)"] == 1
    with pytest.raises(ValueError, match="no interruption of the log was followed by a later attempt"):
        inc.reschedule_times(log)
