"""The incident log's readers: each format's fixture read right and round-tripped, and every bad input handled as stated.

Fixtures in tests/fixtures/incidents/ (small, hand-written, with the expected incidents worked out
in the tests below), and data/faultlab_events.jsonl, a real notebook-07 lab run, whose stages
faultlab's own reader measured when it was captured (tests/fixtures/incidents/faultlab_restarts.json).
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from course_lib import incidents as inc
from course_lib.incidents import policy, readers
from course_lib.incidents.analysis import Fleet, rate, repair_times
from course_lib.incidents.schema import UNKNOWN, IncidentLog, LogFormatError

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "tests" / "fixtures" / "incidents"
LAB_LOG = ROOT / "data" / "faultlab_events.jsonl"


def round_trip(log: IncidentLog, tmp_path: Path) -> IncidentLog:
    back = inc.read_csv(inc.write_csv(log, tmp_path / "log.csv"))
    assert back.equals(log), "the schema's CSV must give back the same incidents, bit for bit"
    return back


# ---------------------------------------------------------------------------------- InfiniteHBD
def test_infinitehbd_fixture_pairs_by_node_and_cause(tmp_path):
    log = inc.read_infinitehbd(FIX / "trace_small.json")
    assert len(log) == 5 and log.window == (0.0, 9.75)
    got = sorted(zip(log.node_names.tolist(), log.start.tolist(), log.end.tolist(), log.cause_part("class").tolist()),
                 key=lambda r: (r[0], r[1]))
    nan = got[-1][2]
    assert math.isnan(nan)
    assert got[:-1] == [("a", 1.5, 2.25, "GPU"), ("a", 3.0, 7.0, "Stress Test Failure"), ("a", 3.125, 4.0, "Fan"),
                        ("b", 1.5, 6.5, "NIC")]
    assert got[-1][:2] == ("c", 9.75)
    r = log.report
    assert (r.rows_read, r.rows_used, r.rows_ignored, r.rows_rejected) == (9, 9, 0, 0)
    assert r.notes == {"fault started while another was open on its node (both kept)": 1,
                       "fault still open at the end of the log (its repair time is censored)": 1}
    round_trip(log, tmp_path)
    again = inc.read_infinitehbd(readers.write_infinitehbd(log, tmp_path / "trace.json"))
    assert again.equals(log)
    original = sorted(json.dumps(e, sort_keys=True) for e in json.loads((FIX / "trace_small.json").read_text()))
    written = sorted(json.dumps(e, sort_keys=True) for e in json.loads((tmp_path / "trace.json").read_text()))
    assert written == original, "writing the trace's format gives back its events"


def test_the_course_classes_decide_which_faults_interrupt_a_job():
    log = inc.read_infinitehbd(FIX / "trace_small.json")
    c = policy.classify(log)
    by_class = dict(zip(log.cause_part("class").tolist(), zip(c.interruption.tolist(), c.mode.tolist())))
    assert by_class == {"GPU": (True, "crash"), "NIC": (True, "hang"), "Stress Test Failure": (False, "none"),
                        "Fan": (True, "host_loss"), "Operating System": (True, "host_loss")}
    assert c.unlisted == 0
    shares = policy.mode_shares(c.mode[c.interruption])
    assert shares == pytest.approx({"crash": 0.25, "hang": 0.25, "host_loss": 0.5, "sdc": 0.0})


def _trace(tmp_path, events, name="t.json") -> Path:
    p = tmp_path / name
    p.write_text(json.dumps(events, indent=1))
    return p


def ev(node, t, kind, level="Hardware Failure", cls="GPU", desc="GPU Lost"):
    return {"node_id": node, "event_time": t, "event_type": kind, "fault_type": {"Level": level, "Class": cls, "Desc": desc}}


def test_a_malformed_row_names_the_file_the_line_and_the_field(tmp_path):
    p = tmp_path / "t.json"
    p.write_text("[\n" + json.dumps(ev("a", 1.0, "fault_start")) + ",\n" + json.dumps(ev("a", "later", "fault_end")) + "\n]\n")
    with pytest.raises(LogFormatError) as e:
        inc.read_infinitehbd(p)
    assert (Path(e.value.file).name, e.value.line, e.value.field) == ("t.json", 3, "event_time")
    assert str(e.value).startswith("t.json, line 3, field event_time: must be a finite number of days >= 0 and at most 100,000 (274 years: more is a unit error) (got 'later')")
    for bad, field in (({"event_type": "fault_begin"}, "event_type"), ({"node_id": ""}, "node_id"),
                       ({"event_time": -1.0}, "event_time"), ({"fault_type": "GPU"}, "fault_type")):
        with pytest.raises(LogFormatError, match=f"field {field}"):
            inc.read_infinitehbd(_trace(tmp_path, [ev("a", 1.0, "fault_start") | bad]))
    broken = tmp_path / "broken.json"
    broken.write_text("[\n{,}\n]")
    with pytest.raises(LogFormatError, match=r"broken.json, line 2, field \(JSON syntax\)"):
        inc.read_infinitehbd(broken)


def test_malformed_rows_can_be_rejected_and_counted_instead(tmp_path):
    events = [ev("a", 1.0, "fault_start"), ev("a", "later", "fault_end"), ev("a", 2.0, "fault_end")]
    log = inc.read_infinitehbd(_trace(tmp_path, events), errors="reject")
    assert len(log) == 1 and log.end[0] == 2.0
    assert log.report.rejected == {"malformed event_time": 1} and log.report.rows_read == 3 and log.report.rows_used == 2
    with pytest.raises(ValueError, match="errors must be one of"):
        inc.read_infinitehbd(_trace(tmp_path, events), errors="skip")


def test_an_end_without_a_start_is_rejected_and_a_start_never_ended_stays_open(tmp_path):
    events = [ev("a", 1.0, "fault_end"), ev("b", 2.0, "fault_start"), ev("b", 3.0, "fault_end"), ev("c", 4.0, "fault_start")]
    log = inc.read_infinitehbd(_trace(tmp_path, events))
    assert log.report.rejected == {"fault_end without an open fault_start on its node": 1}
    assert log.report.first_line["fault_end without an open fault_start on its node"] == 2
    assert len(log) == 2 and log.open.tolist() == [False, True]
    r = repair_times(log)
    assert r.censored == 1 and r.n == 2  # the open repair is a lower bound (Kaplan-Meier), not dropped
    assert rate(log, Fleet(3, 8)).count == 2  # and the open fault counts in the rate


def test_duplicates_are_rejected_and_out_of_order_events_are_sorted(tmp_path):
    events = [ev("a", 1.0, "fault_start"), ev("a", 1.0, "fault_start"), ev("a", 2.0, "fault_end")]
    log = inc.read_infinitehbd(_trace(tmp_path, events))
    assert len(log) == 1 and log.report.rejected == {"duplicate event (same node, type, time and cause as an earlier one)": 1}
    ordered = [ev("a", 1.0, "fault_start"), ev("b", 1.5, "fault_start"), ev("a", 2.0, "fault_end"), ev("b", 3.0, "fault_end")]
    shuffled = [ordered[i] for i in (2, 0, 3, 1)]
    a, b = inc.read_infinitehbd(_trace(tmp_path, ordered, "o.json")), inc.read_infinitehbd(_trace(tmp_path, shuffled, "s.json"))
    assert a.equals(b)
    assert b.report.notes == {"events out of time order (sorted by time before pairing)": 2} and not a.report.notes


def test_an_end_closes_its_own_cause_else_the_oldest_open_fault(tmp_path):
    events = [ev("a", 1.0, "fault_start", cls="GPU"), ev("a", 2.0, "fault_start", cls="Fan"),
              ev("a", 3.0, "fault_end", cls="Fan"), ev("a", 4.0, "fault_end", cls="NIC")]
    log = inc.read_infinitehbd(_trace(tmp_path, events))
    assert sorted(zip(log.cause_part("class").tolist(), log.end.tolist())) == [("Fan", 3.0), ("GPU", 4.0)]
    assert log.report.notes["fault_end closed its node's oldest open fault of another cause"] == 1


def test_a_zero_length_log_needs_its_window_and_then_rates_zero_with_an_upper_bound(tmp_path):
    p = _trace(tmp_path, [])
    with pytest.raises(ValueError, match="holds no events: give window"):
        inc.read_infinitehbd(p)
    log = inc.read_infinitehbd(p, window=(0, 30))
    est = rate(log, Fleet(10, 8))
    assert len(log) == 0 and est.rate_per_gpu_day == 0 and est.low == 0
    assert est.high == pytest.approx(-math.log(0.025) / (10 * 8 * 30))  # Garwood's bound for a count of 0
    with pytest.raises(ValueError, match="window must be a pair .* last > first"):
        inc.read_infinitehbd(_trace(tmp_path, [ev("a", 1.0, "fault_start")]), window=(1.0, 1.0))


def test_an_unknown_cause_is_kept_as_unknown_and_counted_as_an_interruption(tmp_path):
    events = [{"node_id": "a", "event_time": 1.0, "event_type": "fault_start"},
              ev("b", 2.0, "fault_start", level="", cls="Mystery", desc="")]
    log = inc.read_infinitehbd(_trace(tmp_path, events))
    assert sorted(log.causes) == [(UNKNOWN, "Mystery", UNKNOWN), (UNKNOWN, UNKNOWN, UNKNOWN)]
    assert sum(n for k, n in log.report.notes.items() if k.startswith("cause missing")) == 5
    c = policy.classify(log)
    assert c.interruption.all() and (c.mode == "unknown").all() and c.unlisted == 2


# ---------------------------------------------------------------------------------- sacct
def test_sacct_fixture_gives_interruptions_with_the_requeue_chain(tmp_path):
    log = inc.read_sacct(FIX / "sacct_small.txt")
    assert log.origin == "2024-03-30T10:00:00+00:00"
    h = lambda x: np.round(np.asarray(x) * 24, 9).tolist()  # noqa: E731  hours since 2024-03-30 10:00 UTC
    assert h(log.start) == [2.0, 15.5, 21.0]
    assert log.end[:2] * 24 == pytest.approx([2 + 10 / 60, 18.0]) and math.isnan(log.end[2])
    assert log.cause_part("class").tolist() == ["NODE_FAIL", "REQUEUED", "FAILED"]
    assert log.node_names.tolist() == ["gpu[001-004]", "gpu[002-005]", "gpu010"]
    assert [log.jobs[j] for j in log.job] == ["100", "100", "101"] and log.attempt.tolist() == [0, 1, 0]
    r = log.report
    assert (r.rows_read, r.rows_used, r.rows_ignored, r.rows_rejected) == (7, 4, 3, 0)
    assert r.ignored == {"job step (the job's own row counts)": 1, "never started (Start is None or Unknown)": 1,
                         "not an interruption (state RUNNING)": 1}
    assert "FAILED not requeued: no later attempt of the job in the log (restart time open)" in r.notes
    c = policy.classify(log)
    assert c.mode.tolist() == ["host_loss", "unknown", "crash"] and c.unlisted == 0
    round_trip(log, tmp_path)


def _sacct(tmp_path, *rows, header="JobID|State|Start|End|NodeList|ExitCode") -> Path:
    p = tmp_path / "sacct.txt"
    p.write_text("\n".join((header,) + rows) + "\n")
    return p


def test_sacct_time_zones_offsets_daylight_saving_and_epochs(tmp_path):
    # Berlin moves its clocks from 02:00 to 03:00 on 2024-03-31: a requeue "two clock hours" later is one hour
    p = _sacct(tmp_path, "7|NODE_FAIL|2024-03-31T00:00:00|2024-03-31T01:30:00|n1|0:0",
               "7|COMPLETED|2024-03-31T03:30:00|2024-03-31T05:00:00|n1|0:0")
    utc, berlin = inc.read_sacct(p), inc.read_sacct(p, tz="Europe/Berlin")
    assert utc.duration_days[0] * 24 == pytest.approx(2.0) and berlin.duration_days[0] * 24 == pytest.approx(1.0)
    assert berlin.origin == "2024-03-30T23:00:00+00:00"
    with pytest.raises(LogFormatError, match=r"line 2, field End: .*does not exist in Europe/Berlin"):
        inc.read_sacct(_sacct(tmp_path, "7|FAILED|2024-03-31T01:00:00|2024-03-31T02:30:00|n1|1:0"), tz="Europe/Berlin")
    # the hour repeated in autumn (2024-10-27 02:00-03:00 in Berlin) is read as the first, and noted
    amb = inc.read_sacct(_sacct(tmp_path, "8|FAILED|2024-10-27T01:00:00|2024-10-27T02:30:00|n1|1:0"), tz="Europe/Berlin")
    assert any("ambiguous local time" in k for k in amb.report.notes)
    # an explicit offset wins over tz, and Unix seconds are UTC
    off = inc.read_sacct(_sacct(tmp_path, "9|FAILED|2024-03-30T12:00:00+02:00|2024-03-30T13:00:00+02:00|n1|1:0"), tz="Asia/Tokyo")
    assert off.origin == "2024-03-30T10:00:00+00:00"
    ep = inc.read_sacct(_sacct(tmp_path, "9|FAILED|1711792800|1711796400|n1|1:0"))
    assert ep.origin == "2024-03-30T10:00:00+00:00" and ep.start[0] * 24 == pytest.approx(1.0)
    with pytest.raises(ValueError, match="tz must be an IANA time zone"):
        inc.read_sacct(p, tz="Mars/Olympus")


@pytest.mark.parametrize("row, field", [
    ("7|EXPLODED|2024-03-31T00:00:00|2024-03-31T01:30:00|n1|0:0", "State"),
    ("7|FAILED|yesterday|2024-03-31T01:30:00|n1|0:0", "Start"),
    ("7|FAILED|2024-03-31T00:00:00|2024-03-31T01:30:00|n1|one", "ExitCode"),
    ("seven|FAILED|2024-03-31T00:00:00|2024-03-31T01:30:00|n1|0:0", "JobID"),
    ("7|FAILED|2024-03-31T02:00:00|2024-03-31T01:30:00|n1|0:0", "End"),
    ("7|FAILED|2024-03-31T00:00:00|n1|0:0", r"\(row\)"),
])
def test_sacct_malformed_rows_name_the_line_and_field(tmp_path, row, field):
    with pytest.raises(LogFormatError, match=f"sacct.txt, line 2, field {field}"):
        inc.read_sacct(_sacct(tmp_path, row))


def test_sacct_needs_its_columns_and_rejects_duplicate_rows(tmp_path):
    with pytest.raises(LogFormatError, match="line 1, field NodeList: column missing"):
        inc.read_sacct(_sacct(tmp_path, "7|FAILED|2024-03-31T00:00:00|2024-03-31T01:30:00|0:0", header="JobID|State|Start|End|ExitCode"))
    row = "7|FAILED|2024-03-31T00:00:00|2024-03-31T01:30:00|n1|1:0"
    log = inc.read_sacct(_sacct(tmp_path, row, row))
    assert len(log) == 1 and log.report.rejected == {"duplicate row (same job, state, times and nodes as an earlier one)": 1}


def test_hostlists_expand_like_slurm():
    assert readers.expand_hostlist("gpu[001-003,7],login1") == ["gpu001", "gpu002", "gpu003", "gpu7", "login1"]
    assert readers.expand_hostlist("r[1-2]n[01-02]") == ["r1n01", "r1n02", "r2n01", "r2n02"]
    for bad in ("gpu[1-", "gpu[3-1]", "gpu[a-b]"):
        with pytest.raises(ValueError, match="hostlist"):
            readers.expand_hostlist(bad)


# ---------------------------------------------------------------------------------- the schema's CSV
def test_csv_fixture_reads_days_stages_and_unknown_causes(tmp_path):
    log = inc.read_csv(FIX / "log_small.csv")
    assert log.window == (0.0, 30.0) and len(log) == 3
    assert log.start.tolist() == [2.0, 5.5, 11.25] and log.end[:2].tolist() == [2.5, 6.0] and math.isnan(log.end[2])
    assert log.node_names.tolist() == ["n1", "n1", "n2"]
    assert log.causes[log.cause[1]] == (UNKNOWN, UNKNOWN, UNKNOWN) and log.causes[log.cause[2]] == ("Hardware Failure", "Power Supply", UNKNOWN)
    assert [log.jobs[j] if j >= 0 else None for j in log.job] == [None, "j7", None] and log.attempt.tolist() == [0, 1, 0]
    s = inc.stage_seconds(log)
    assert s["detect"][0] == pytest.approx(0.001 * 86400) and s["rewind"][0] == pytest.approx(0.0005 * 86400)
    assert np.isnan(s["detect"][1:]).all()
    assert log.report.notes["rows out of time order (sorted by start)"] == 1
    round_trip(log, tmp_path)


def test_csv_iso_times_become_days_since_the_first(tmp_path):
    p = tmp_path / "iso.csv"
    p.write_text("start,end,node\n2024-03-30T12:00:00+02:00,2024-03-30T16:00:00+02:00,x\n2024-03-31T10:00:00Z,,y\n")
    log = inc.read_csv(p)
    assert log.origin == "2024-03-30T10:00:00+00:00" and log.start.tolist() == [0.0, 1.0] and log.end[0] == pytest.approx(4 / 24)


@pytest.mark.parametrize("body, field", [
    ("start,end,node\n1.0,0.5,a\n", "end"),
    ("start,end,node\nsoon,,a\n", "start"),
    ("start,end,node\n1.0,,\n", "node"),
    ("start,stop,node\n1.0,2.0,a\n", "stop"),
    ("start,end,node\n1.0,2024-03-30T00:00:00,a\n", "end"),
    ("end,node\n1.0,a\n", "start"),
])
def test_csv_malformed_rows_name_the_line_and_field(tmp_path, body, field):
    p = tmp_path / "bad.csv"
    p.write_text(body)
    with pytest.raises(LogFormatError, match=f"bad.csv, line [12], field {field}"):
        inc.read_csv(p)


def test_csv_duplicates_are_rejected(tmp_path):
    p = tmp_path / "dup.csv"
    p.write_text("start,end,node\n1.0,2.0,a\n1.0,2.0,a\n3.0,4.0,a\n")
    log = inc.read_csv(p)
    assert len(log) == 2 and log.report.rejected == {"duplicate row (identical to an earlier one)": 1}
    log.report.check()


# ---------------------------------------------------------------------------------- lab event logs
def test_a_real_lab_run_gives_the_stages_faultlab_measured(tmp_path):
    log = inc.read_lab_events(LAB_LOG)
    ref = json.loads((FIX / "faultlab_restarts.json").read_text())  # course_lib.faultlab.events.restart_stages, at capture
    assert len(log) == len(ref) == 2
    assert log.cause_part("class").tolist() == [r["kind"] for r in ref]
    assert log.node_names.tolist() == [f"rank {r['failed_rank']}" for r in ref]
    s = inc.stage_seconds(log)
    for i, r in enumerate(ref):
        for stage in ("detect", "reschedule", "reload", "rewind"):
            assert s[stage][i] == pytest.approx(r[f"{stage}_s"], abs=1e-4), (i, stage)
        assert log.duration_days[i] * 86400 == pytest.approx(r["total_s"], abs=1e-4)  # the four add up to the restart
    assert np.all(log.stages["torn_down"] >= log.stages["detected"])
    assert np.all(log.stages["first_step"] >= log.stages["loaded"])
    rep = log.report
    assert rep.rows_read == len(LAB_LOG.read_text().splitlines()) and rep.rows_rejected == 0
    assert rep.rows_used == 22 and set(rep.ignored) == {"lab event that marks no failure and no stage boundary"}
    round_trip(log, tmp_path)


def test_the_lab_kits_record_separators_and_an_extra_round_change_no_stage(tmp_path):
    """The lab kit's writer (course_lib.labkit.events) leads every record with RFC 7464's RS, and a
    rendezvous round that never loads a state (a spare re-forming the round under load) can come
    between a failure and its restart: neither moves a stage."""
    from course_lib.labkit.events import RS, read_events

    events = [json.loads(ln) for ln in LAB_LOG.read_text().splitlines()]
    shifted = [dict(e, gen=e["gen"] + 1) if e["gen"] >= 1 else e for e in events]  # generation 1 never loads
    seq = tmp_path / "kit.jsonl"
    seq.write_bytes(b"".join(RS + json.dumps(e, sort_keys=True).encode() + b"\n" for e in shifted))
    assert len(read_events(seq)) == len(events)  # the kit reads what it wrote
    a, b = inc.stage_seconds(inc.read_lab_events(LAB_LOG)), inc.stage_seconds(inc.read_lab_events(seq))
    assert set(a) == set(b) and all(np.allclose(a[k], b[k], equal_nan=True) for k in a)
    assert inc.read_lab_events(seq).report.rows_read == len(events)


def test_a_torn_last_line_is_rejected_and_a_broken_one_elsewhere_is_an_error(tmp_path):
    lines = LAB_LOG.read_text().splitlines()
    torn = tmp_path / "torn.jsonl"
    torn.write_text("\n".join(lines + ['{"t": 1796160830.1, "ev": "st']) + "\n")
    log = inc.read_lab_events(torn)
    assert log.report.rejected == {"torn last line (the run was cut short while writing it)": 1}
    assert len(log) == 2
    broken = tmp_path / "broken.jsonl"
    broken.write_text("\n".join(lines[:3] + ["{oops"] + lines[3:]) + "\n")
    with pytest.raises(LogFormatError, match=r"broken.jsonl, line 4, field \(JSON syntax\)"):
        inc.read_lab_events(broken)
    nameless = tmp_path / "nameless.jsonl"
    nameless.write_text('{"t": 1.0, "rank": 0, "gen": 0}\n{"t": 2.0, "ev": "done", "rank": 0, "gen": 0}\n')
    with pytest.raises(LogFormatError, match="line 1, field ev"):
        inc.read_lab_events(nameless)


def test_read_log_dispatches_and_names_the_formats(tmp_path):
    assert inc.read_log(FIX / "log_small.csv", "csv").equals(inc.read_csv(FIX / "log_small.csv"))
    with pytest.raises(ValueError, match="format must be one of"):
        inc.read_log(FIX / "log_small.csv", "xlsx")


def test_the_schema_refuses_inconsistent_incidents():
    with pytest.raises(ValueError, match="end must be >= start"):
        IncidentLog.build([2.0], [1.0], ["a"], window=(0, 3))
    with pytest.raises(ValueError, match="node_names must hold one id per incident"):
        IncidentLog.build([1.0, 2.0], [np.nan, np.nan], ["a"], window=(0, 3))
    with pytest.raises(ValueError, match="stages must be named from"):
        IncidentLog.build([1.0], [np.nan], ["a"], window=(0, 3), stages={"noticed": [1.0]})
    log = IncidentLog.build([1.0, 2.0], [1.5, np.nan], ["a", "b"], window=(0, 3))
    with pytest.raises(ValueError, match="window must contain every start"):
        log.with_window((1.5, 3))


# ================================================================================== issue 37: every branch of the readers
# Tiny hand-written logs; each expected count, time and line number is worked out in the comments.

# ---------------------------------------------------------------------------------- InfiniteHBD: layout and lines
def test_infinitehbd_names_the_line_of_each_event_however_the_file_is_laid_out(tmp_path):
    # brackets, braces, commas and escaped quotes inside strings must not move the count of elements
    tricky = {"Level": "L", "Class": "C [x], {y}", "Desc": 'say "hi", ]'}
    e0 = json.dumps({"node_id": "a", "event_time": 1.0, "event_type": "fault_start", "fault_type": tricky})
    e1 = json.dumps({"node_id": "a", "event_time": 2.0, "event_type": "fault_end", "fault_type": tricky})
    bad_time = json.dumps({"node_id": "b", "event_time": "x", "event_type": "fault_start"})
    bad_node = json.dumps({"node_id": "", "event_time": 3.0, "event_type": "fault_start"})
    # line 1 "[e0,", line 2 "e1, bad_time,", line 3 a list, line 4 a string, line 5 bad_node, line 6 "]"
    p = tmp_path / "layout.json"
    p.write_text(f"[{e0},\n {e1}, {bad_time},\n [1, 2],\n \"oops\",\n {bad_node}\n]\n")
    log = inc.read_infinitehbd(p, errors="reject")
    r = log.report
    assert len(log) == 1 and log.start.tolist() == [1.0] and log.end.tolist() == [2.0]
    assert log.causes[log.cause[0]] == ("L", "C [x], {y}", 'say "hi", ]')
    assert r.rejected == {"malformed event_time": 1, "malformed (event)": 2, "malformed node_id": 1}
    assert r.first_line["malformed event_time"] == 2 and r.first_line["malformed (event)"] == 3
    assert r.first_line["malformed node_id"] == 5
    assert (r.rows_read, r.rows_used, r.rows_rejected) == (6, 2, 4)
    with pytest.raises(LogFormatError, match=r"layout.json, line 2, field event_time: must be a finite number of days >= 0 and at most 100,000 \(274 years: more is a unit error\) \(got 'x'\)"):
        inc.read_infinitehbd(p)  # the first bad event, raised
    p.write_text(f"[{e0},\n {e1},\n [1, 2],\n \"oops\"\n]\n")
    with pytest.raises(LogFormatError, match=r"layout.json, line 3, field \(event\): each event must be a JSON object \(got list\)"):
        inc.read_infinitehbd(p)


def test_infinitehbd_rejects_a_bare_number_element_without_failing(tmp_path):
    good = json.dumps(ev("a", 1.0, "fault_start"))
    p = tmp_path / "scalar.json"
    for text in (f"[\n{good},\n5\n]\n", f"[5, {good}]"):  # a number last, or first
        p.write_text(text)
        log = inc.read_infinitehbd(p, errors="reject")
        assert len(log) == 1 and log.report.rejected == {"malformed (event)": 1}


def test_infinitehbd_string_elements_count_as_events_first_or_second(tmp_path):
    good = json.dumps(ev("a", 1.0, "fault_start"))
    p = tmp_path / "strings.json"
    p.write_text(f'[\n"first",\n"second",\n{good},\n"fourth"\n]\n')  # lines 2, 3, 4, 5
    log = inc.read_infinitehbd(p, errors="reject")
    assert len(log) == 1 and log.report.rejected == {"malformed (event)": 3} and log.report.first_line["malformed (event)"] == 2
    p.write_text(f'[{good},\n"second"]')
    with pytest.raises(LogFormatError, match=r"strings.json, line 2, field \(event\): each event must be a JSON object \(got str\)"):
        inc.read_infinitehbd(p)


def test_infinitehbd_names_the_line_after_a_bare_number_element(tmp_path):
    good, bad = json.dumps(ev("a", 1.0, "fault_start")), json.dumps(ev("a", -1.0, "fault_start"))
    p = tmp_path / "scalar.json"
    p.write_text(f"[\n{good},\n5,\n{bad}\n]\n")  # 5 on line 3, the bad time on line 4
    log = inc.read_infinitehbd(p, errors="reject")
    assert log.report.first_line["malformed (event)"] == 3 and log.report.first_line["malformed event_time"] == 4


def test_infinitehbd_top_level_and_empty_files(tmp_path):
    p = tmp_path / "obj.json"
    p.write_text(json.dumps(ev("a", 1.0, "fault_start")))
    with pytest.raises(LogFormatError, match=r"^obj.json, line 1, field \(top level\): must be a JSON list of events \(got dict\)"):
        inc.read_infinitehbd(p)
    for text in ("", "  \n", "[]"):
        e = tmp_path / "empty.json"
        e.write_text(text)
        with pytest.raises(ValueError, match="empty.json holds no events: give window"):
            inc.read_infinitehbd(e)
        log = inc.read_infinitehbd(e, window=(0.0, 30.0))
        assert len(log) == 0 and log.window == (0.0, 30.0) and log.report.rows_read == 0


def test_infinitehbd_event_fields_at_their_edges(tmp_path):
    # day 0 and integer days are times; True, NaN, inf and negative days are not
    ok = [ev("a", 0, "fault_start"), ev("a", 0.5, "fault_end"), ev(" b ", 2, "fault_start"), ev("b", 3.0, "fault_end")]
    log = inc.read_infinitehbd(_trace(tmp_path, ok))
    got = sorted(zip(log.node_names.tolist(), log.start.tolist(), log.end.tolist()))
    assert got == [("a", 0.0, 0.5), ("b", 2.0, 3.0)]  # the node id is stripped: " b " closes with "b"
    assert log.window == (0.0, 3.0) and (log.report.rows_read, log.report.rows_used) == (4, 4)
    for t in (True, math.nan, math.inf, -0.5, None, "1.0"):
        p = tmp_path / "t.json"
        p.write_text(json.dumps([ev("a", 1.0, "fault_start"), ev("a", t, "fault_end")], indent=1))
        with pytest.raises(LogFormatError, match="field event_time: must be a finite number of days >= 0"):
            inc.read_infinitehbd(p)
    for node in (5, None, "   "):
        with pytest.raises(LogFormatError, match="field node_id: must be a non-empty string"):
            inc.read_infinitehbd(_trace(tmp_path, [{"node_id": node, "event_time": 1.0, "event_type": "fault_start"}]))
    for ft in ("GPU", ["L", "C", "D"], 3):
        with pytest.raises(LogFormatError, match="field fault_type: must be an object"):
            inc.read_infinitehbd(_trace(tmp_path, [{"node_id": "a", "event_time": 1.0, "event_type": "fault_start", "fault_type": ft}]))
    # a null fault_type is a cause not given: Unknown at its three depths, noted once each
    log = inc.read_infinitehbd(_trace(tmp_path, [{"node_id": "a", "event_time": 1.0, "event_type": "fault_start", "fault_type": None}]))
    assert log.causes == ((UNKNOWN, UNKNOWN, UNKNOWN),)
    assert log.report.notes == {f"cause missing at depth {d} (kept as {UNKNOWN!r})": 1 for d in ("Level", "Class", "Desc")} | \
        {"fault still open at the end of the log (its repair time is censored)": 1}


def test_infinitehbd_pairing_counts_every_event(tmp_path):
    # node a: GPU opens at 1, Fan at 2, GPU again at 3 (two notes: each opened while another was open);
    # the GPU end at 4 closes the oldest open GPU (1-4), the Fan end at 5 the Fan (2-5); GPU 3 stays open.
    # node b: an end with nothing open (rejected), then the same start twice at 6 (the copy rejected).
    events = [ev("a", 1.0, "fault_start"), ev("a", 2.0, "fault_start", cls="Fan"), ev("a", 3.0, "fault_start"),
              ev("a", 4.0, "fault_end"), ev("a", 5.0, "fault_end", cls="Fan"), ev("b", 5.5, "fault_end"),
              ev("b", 6.0, "fault_start"), ev("b", 6.0, "fault_start")]
    log = inc.read_infinitehbd(_trace(tmp_path, events))
    got = sorted(zip(log.node_names.tolist(), log.start.tolist(), log.end.tolist(), log.cause_part("class").tolist()))
    assert [g[:2] for g in got] == [("a", 1.0), ("a", 2.0), ("a", 3.0), ("b", 6.0)]
    assert got[0][2:] == (4.0, "GPU") and got[1][2:] == (5.0, "Fan") and math.isnan(got[2][2]) and math.isnan(got[3][2])
    r = log.report
    assert r.notes == {"fault started while another was open on its node (both kept)": 2,
                       "fault still open at the end of the log (its repair time is censored)": 2}
    assert r.rejected == {"fault_end without an open fault_start on its node": 1,
                          "duplicate event (same node, type, time and cause as an earlier one)": 1}
    # 8 read: 4 + 1 starts and 2 ends used (the open ones' starts count), 2 rejected
    assert (r.rows_read, r.rows_used, r.rows_rejected) == (8, 6, 2)
    assert log.window == (0.0, 6.0)
    assert inc.read_infinitehbd(_trace(tmp_path, events), window=(-1.0, 10.0)).window == (-1.0, 10.0)


def test_infinitehbd_counts_each_step_back_in_time_once(tmp_path):
    # times 3, 1, 2, 0.5: two steps back (3 -> 1, 2 -> 0.5); equal times are in order
    events = [ev("a", 3.0, "fault_start"), ev("b", 1.0, "fault_start"), ev("c", 2.0, "fault_start"), ev("d", 0.5, "fault_start"),
              ev("e", 0.5, "fault_start")]
    log = inc.read_infinitehbd(_trace(tmp_path, events))
    assert log.report.notes["events out of time order (sorted by time before pairing)"] == 2
    assert log.window == (0.0, 3.0)  # the latest event, wherever it stands in the file
    same = [ev("a", 1.0, "fault_start"), ev("b", 1.0, "fault_start")]
    assert "events out of time order (sorted by time before pairing)" not in inc.read_infinitehbd(_trace(tmp_path, same)).report.notes


def test_write_infinitehbd_orders_events_and_lays_them_out_like_the_trace(tmp_path):
    # incident 0 on a: 1-2; incident 1 on b: 2-3; incident 2 on c: 2.5, open. At day 2 b's start comes before a's end.
    log = IncidentLog.build([1.0, 2.0, 2.5], [2.0, 3.0, np.nan], ["a", "b", "c"], [("L", "C", "D")] * 3, window=(0, 4))
    p = readers.write_infinitehbd(log, tmp_path / "w.json")
    written = json.loads(p.read_text())
    assert [(e["node_id"], e["event_type"], e["event_time"]) for e in written] == [
        ("a", "fault_start", 1.0), ("b", "fault_start", 2.0), ("a", "fault_end", 2.0), ("c", "fault_start", 2.5),
        ("b", "fault_end", 3.0)]
    assert written[0]["fault_type"] == {"Level": "L", "Class": "C", "Desc": "D"}
    # the vendored trace's layout: four-space indent, one key per line, a final newline
    trace_head = (ROOT / "data" / "infinitehbd_fault_trace.json").read_text().splitlines()[:3]
    lines = p.read_text().splitlines()
    assert lines[:2] == trace_head[:2] and lines[2].startswith('        "node_id": ') and trace_head[2].startswith('        "node_id": ')
    assert p.read_text().endswith("]\n")
    # an incident of zero length: its start is written before its end
    z = readers.write_infinitehbd(IncidentLog.build([1.0], [1.0], ["a"], window=(0, 2)), tmp_path / "z.json")
    assert [e["event_type"] for e in json.loads(z.read_text())] == ["fault_start", "fault_end"]


# ---------------------------------------------------------------------------------- time stamps
def test_parse_time_reads_each_form():
    from zoneinfo import ZoneInfo

    for empty in ("", " ", "Unknown", "None", "N/A", " Unknown "):
        t, note = readers.parse_time(empty)
        assert math.isnan(t) and note == ""
    # 2024-03-30 12:00 UTC is 1711800000 (10:00 is 1711792800: the sacct fixture's origin)
    assert readers.parse_time("1711800000") == (1711800000.0, "")
    assert readers.parse_time("2024-03-30T12:00:00Z") == (1711800000.0, "")
    assert readers.parse_time("2024-03-30T14:00:00+02:00", tz="Asia/Tokyo") == (1711800000.0, "")
    assert readers.parse_time("2024-03-30T12:00:00") == (1711800000.0, "")
    assert readers.parse_time("2024-03-30T12:00:00", tz="Z") == (1711800000.0, "")
    # naive in Berlin on 30 March: CET, UTC+1 -> 11:00 UTC, and no note (the hour is not repeated)
    assert readers.parse_time("2024-03-30T12:00:00", tz="Europe/Berlin") == (1711800000.0 - 3600, "")
    # a tzinfo instead of a name: Tokyo, UTC+9 -> 03:00 UTC
    assert readers.parse_time("2024-03-30T12:00:00", tz=ZoneInfo("Asia/Tokyo")) == (1711800000.0 - 9 * 3600, "")
    # 02:30 on 27 October 2024 happens twice in Berlin: the first (CEST, UTC+2) is 00:30 UTC
    t, note = readers.parse_time("2024-10-27T02:30:00", tz="Europe/Berlin")
    assert t == 1729989000.0 and note == "ambiguous local time in Europe/Berlin (the repeated hour), read as the first"
    for bad in ("yesterday", "17117928", "2024-13-01T00:00:00"):  # 8 digits are not Unix seconds
        with pytest.raises(ValueError, match="must be an ISO 8601 time"):
            readers.parse_time(bad)
    with pytest.raises(ValueError, match="does not exist in Europe/Berlin"):
        readers.parse_time("2024-03-31T02:30:00", tz="Europe/Berlin")
    for tz in ("Mars/Olympus", "", "../etc"):
        with pytest.raises(ValueError, match="tz must be an IANA time zone name"):
            readers.parse_time("2024-03-30T12:00:00", tz=tz)


# ---------------------------------------------------------------------------------- Slurm hostlists
def test_hostlists_at_their_edges():
    assert readers.expand_hostlist("n[08-10]") == ["n08", "n09", "n10"]  # the width of the first number
    assert readers.expand_hostlist("gpu[7]") == ["gpu7"]
    assert readers.expand_hostlist("a,,b") == ["a", "b"] and readers.expand_hostlist("") == []
    assert readers.expand_hostlist(" n[1-2]-ib ") == ["n1-ib", "n2-ib"]
    for bad, message in (("gpu]1[", "unmatched ']'"), ("gpu[1-2", "unmatched '\\['"), ("gpu[1]]", "unmatched ']'"),
                         ("gpu[]", "cannot read 'gpu\\[\\]'"), ("gpu[[1]]", "cannot read"), ("gpu[a]", "must be N or N-M"),
                         ("gpu[1-x]", "must be N or N-M"), ("gpu[-2]", "must be N or N-M"), ("gpu[5-3]", "runs backwards")):
        with pytest.raises(ValueError, match=f"hostlist .*{message}"):
            readers.expand_hostlist(bad)


# ---------------------------------------------------------------------------------- sacct
def test_sacct_fixture_window_runs_from_the_first_start_to_the_last_time(tmp_path):
    log = inc.read_sacct(FIX / "sacct_small.txt")
    # from 2024-03-30 10:00 (job 100's first Start) to 2024-04-01 00:00 (its COMPLETED End): 38 h; the
    # latest Start (job 103, 2024-03-31 08:00, 22 h) is earlier
    assert log.window == (0.0, pytest.approx(38 / 24, rel=1e-12))
    assert inc.read_sacct(FIX / "sacct_small.txt", window=(0.0, 7.0)).window == (0.0, 7.0)


def test_sacct_empty_exports_need_a_window(tmp_path):
    p = tmp_path / "empty.txt"
    p.write_text("\n\n")
    with pytest.raises(ValueError, match="empty.txt holds no rows: give window"):
        inc.read_sacct(p)
    log = inc.read_sacct(p, window=(0.0, 5.0))
    assert len(log) == 0 and log.window == (0.0, 5.0) and log.format == "sacct"
    never = _sacct(tmp_path, "102|PENDING|None|Unknown|None assigned|0:0", "104|CANCELLED|Unknown|Unknown||0:0")
    with pytest.raises(ValueError, match="sacct.txt holds no job that started: give window"):
        inc.read_sacct(never)
    log = inc.read_sacct(never, window=(0.0, 5.0))
    assert len(log) == 0 and log.window == (0.0, 5.0)
    assert log.report.ignored == {"never started (Start is None or Unknown)": 2} and log.report.rows_read == 2


def test_sacct_interruptions_their_ends_causes_and_attempts(tmp_path):
    p = _sacct(tmp_path,
               "200|NODE_FAIL|2024-03-30T10:00:00|2024-03-30T11:00:00|n[1-2]|0:0",  # attempt 0: stops at 11:00
               "200|FAILED|2024-03-30T11:02:00|2024-03-30T11:02:00|n[3-4]|1:0",     # attempt 1 starts 11:02, stops at once
               "200|COMPLETED|2024-03-30T12:00:00|2024-03-30T13:00:00||0:0",       # attempt 2: no NodeList
               "201_4|failed|2024-03-30T10:30:00|Unknown|n5|1:0",                   # an array task, lower case, no End
               "202+0|CANCELLED by 1000|2024-03-30T10:30:00|2024-03-30T10:40:00|n6|0:15",  # a het job, cancelled
               "203_[1-3]|PENDING|Unknown|Unknown|None assigned|0:0",
               "200.extern|COMPLETED|2024-03-30T10:00:00|2024-03-30T11:00:00|n[1-2]|0:0")
    log = inc.read_sacct(p)
    # times in hours since 10:00: attempt 0 stops at 1 h and the job runs again at 62 min; attempt 1 stops
    # at 62 min and the job runs again at 2 h
    h = lambda x: (np.asarray(x) * 24).tolist()  # noqa: E731
    assert h(log.start) == pytest.approx([1.0, 62 / 60], rel=1e-12) and h(log.end) == pytest.approx([62 / 60, 2.0], rel=1e-12)
    assert log.causes[log.cause[0]] == ("Slurm", "NODE_FAIL", "exit 0:0") and log.causes[log.cause[1]] == ("Slurm", "FAILED", "exit 1:0")
    assert [log.jobs[j] for j in log.job] == ["200", "200"] and log.attempt.tolist() == [0, 1]
    assert log.node_names.tolist() == ["n[1-2]", "n[3-4]"]
    r = log.report
    assert r.rejected == {"FAILED row without an End time (when did it stop?)": 1}
    assert r.ignored == {"not an interruption (state CANCELLED)": 1, "never started (Start is None or Unknown)": 1,
                         "job step (the job's own row counts)": 1}
    # both interruptions ran on two nodes: sacct cannot say which one failed (noted, first at line 2)
    note = "interruption of a job on several nodes: sacct's NodeList names them all, not the one that failed"
    assert r.notes[note] == 2 and r.first_line[note] == 2
    # 7 rows: 2 interruptions and the COMPLETED attempt that closes the second used; 3 ignored; 1 rejected
    assert (r.rows_read, r.rows_used, r.rows_ignored, r.rows_rejected) == (7, 3, 3, 1)
    assert log.window == (0.0, pytest.approx(3 / 24, rel=1e-12))  # 10:00 to the last End, 13:00


def test_sacct_attempts_of_one_job_that_overlap_are_malformed(tmp_path):
    # attempt 1 starts at 10:59, a minute before attempt 0 ended: one job runs one attempt at a time
    rows = ("200|NODE_FAIL|2024-03-30T10:00:00|2024-03-30T11:00:00|n[1-2]|0:0",
            "200|COMPLETED|2024-03-30T10:59:00|2024-03-30T12:00:00|n[3-4]|0:0")
    with pytest.raises(LogFormatError, match=r"^sacct.txt, line 3, field Start: is 2024-03-30T10:59:00, before the previous "
                                             r"attempt of job 200 ended \(2024-03-30T11:00:00, line 2\): one job's attempts cannot overlap"):
        inc.read_sacct(_sacct(tmp_path, *rows))
    log = inc.read_sacct(_sacct(tmp_path, *rows), errors="reject")
    # the later attempt rejected: the NODE_FAIL stays open (no later attempt left)
    assert len(log) == 1 and math.isnan(log.end[0]) and log.report.rejected == {"malformed Start": 1}
    assert log.report.first_line["malformed Start"] == 3 and log.report.rows_used == 1
    # an attempt that never ended (End Unknown), followed by another: its End is at fault
    rows = ("300|RUNNING|2024-03-30T10:00:00|Unknown|n1|0:0", "300|COMPLETED|2024-03-30T11:00:00|2024-03-30T12:00:00|n2|0:0")
    with pytest.raises(LogFormatError, match=r"^sacct.txt, line 2, field End: is 'Unknown', yet a later attempt of job 300 "
                                             r"starts at 2024-03-30T11:00:00 \(line 3\): an attempt that never ended"):
        inc.read_sacct(_sacct(tmp_path, *rows))
    log = inc.read_sacct(_sacct(tmp_path, *rows), errors="reject")
    assert len(log) == 0 and log.report.rejected == {"malformed End": 1} and log.report.ignored == {"not an interruption (state COMPLETED)": 1}
    # an attempt that starts the second its predecessor ended is no overlap: a reschedule of 0 s
    log = inc.read_sacct(_sacct(tmp_path, "400|NODE_FAIL|2024-03-30T10:00:00|2024-03-30T11:00:00|n1|0:0",
                                "400|COMPLETED|2024-03-30T11:00:00|2024-03-30T12:00:00|n2|0:0"))
    assert log.duration_days.tolist() == [0.0] and log.report.rows_used == 2


def test_sacct_a_node_list_that_is_not_a_hostlist_names_its_line(tmp_path):
    p = _sacct(tmp_path, "7|NODE_FAIL|2024-03-30T10:00:00|2024-03-30T11:00:00|gpu[1-|0:0")
    with pytest.raises(LogFormatError, match=r"^sacct.txt, line 2, field NodeList: must be a Slurm hostlist such as gpu\[001-004\]"):
        inc.read_sacct(p)
    assert inc.read_sacct(p, errors="reject", window=(0, 1)).report.rejected == {"malformed NodeList": 1}


def test_sacct_only_the_attempt_right_after_an_interruption_closes_it(tmp_path):
    p = _sacct(tmp_path, "9|FAILED|2024-03-30T10:00:00|2024-03-30T11:00:00|n1|1:0",
               "9|PREEMPTED|2024-03-30T11:30:00|2024-03-30T12:00:00|n1|0:0",   # running again at 11:30: closes it
               "9|COMPLETED|2024-03-30T13:00:00|2024-03-30T14:00:00|n1|0:0")   # a later attempt: not an interruption
    log = inc.read_sacct(p)
    assert log.start * 24 == pytest.approx([1.0]) and log.end * 24 == pytest.approx([1.5])
    assert log.report.ignored == {"not an interruption (state COMPLETED)": 1} and log.report.rows_used == 2


def test_sacct_without_an_exit_code_or_a_node_list(tmp_path):
    p = _sacct(tmp_path, "7|REQUEUED|2024-03-30T10:00:00|2024-03-30T10:00:00||", "7|RUNNING|2024-03-30T10:06:00|Unknown||",
               header="JobID|State|Start|End|NodeList|Comment")
    log = inc.read_sacct(p)
    # a zero-length attempt is allowed (End == Start); requeued and running again 6 min later
    assert log.causes == (("Slurm", "REQUEUED", UNKNOWN),) and log.node_names.tolist() == [UNKNOWN]
    assert log.start.tolist() == [0.0] and log.end[0] * 1440 == pytest.approx(6.0)
    assert (log.report.rows_used, log.report.rows_ignored) == (2, 0)


def test_sacct_bad_rows_can_be_rejected_and_counted(tmp_path):
    p = _sacct(tmp_path, "7|FAILED|2024-03-30T10:00:00|2024-03-30T11:00:00|n1|1:0",
               "x7|FAILED|2024-03-30T10:00:00|2024-03-30T11:00:00|n1|1:0",
               "8|EXPLODED|2024-03-30T10:00:00|2024-03-30T11:00:00|n1|1:0",
               "9|FAILED|2024-03-30T10:00:00|2024-03-30T11:00:00|n1|one",
               "10|FAILED|later|2024-03-30T11:00:00|n1|1:0",
               "11|FAILED|2024-03-30T12:00:00|2024-03-30T11:00:00|n1|1:0",
               "12|FAILED|2024-03-30T10:00:00|n1|1:0")
    log = inc.read_sacct(p, errors="reject")
    assert len(log) == 1 and log.jobs == ("7",)
    assert log.report.rejected == {"malformed JobID": 1, "malformed State": 1, "malformed ExitCode": 1, "malformed Start": 1,
                                   "malformed End": 1, "malformed (row)": 1}
    assert log.report.first_line["malformed JobID"] == 3 and log.report.first_line["malformed (row)"] == 8
    with pytest.raises(ValueError, match="errors must be one of"):
        inc.read_sacct(p, errors="ignore")


# ---------------------------------------------------------------------------------- the schema's CSV: the header
def _csv(tmp_path, text, name="c.csv") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_csv_header_errors_name_the_header_line_after_the_comments(tmp_path):
    meta = "# origin: 2024-03-30T00:00:00Z\n# a comment without a key\n"  # two comment lines: the header is line 3
    with pytest.raises(LogFormatError, match=r"c.csv, line 3, field \(header\): the header line is missing"):
        inc.read_csv(_csv(tmp_path, meta))
    with pytest.raises(LogFormatError, match="c.csv, line 3, field stop: unknown column"):
        inc.read_csv(_csv(tmp_path, meta + "start,stop,node\n1.0,2.0,a\n"))
    with pytest.raises(LogFormatError, match="c.csv, line 3, field node: required column missing"):
        inc.read_csv(_csv(tmp_path, meta + "start,end\n1.0,2.0\n"))
    with pytest.raises(LogFormatError, match=r"c.csv, line 1, field \(header\)"):
        inc.read_csv(_csv(tmp_path, ""))


def test_csv_window_lines_both_or_neither(tmp_path):
    for meta in ("# window_start: 0\n", "# window_end: 9\n", "# window_start: 0\n# window_end: soon\n"):
        n = meta.count("\n")
        with pytest.raises(LogFormatError, match=f"c.csv, line {n}, field window_start/window_end: both must be given"):
            inc.read_csv(_csv(tmp_path, meta + "start,node\n1.0,a\n"))
    log = inc.read_csv(_csv(tmp_path, "#window_start:0.5\n  # window_end: 9\nstart,node\n1.0,a\n"))
    assert log.window == (0.5, 9.0)
    # a window given to the reader wins over the file's
    assert inc.read_csv(_csv(tmp_path, "# window_start: 0\nstart,node\n1.0,a\n"), window=(0.0, 3.0)).window == (0.0, 3.0)


def test_csv_without_rows_needs_a_window(tmp_path):
    with pytest.raises(ValueError, match="c.csv holds no rows: give window"):
        inc.read_csv(_csv(tmp_path, "start,end,node\n"))
    log = inc.read_csv(_csv(tmp_path, "# window_start: 0\n# window_end: 10\nstart,end,node\n\n"))
    assert len(log) == 0 and log.window == (0.0, 10.0) and log.report.rows_read == 0


# ---------------------------------------------------------------------------------- the schema's CSV: the two paths
CLEAN = ("start,end,node,level,class,desc,job,attempt,detected\n"
         "2.0,2.5,n1,Hardware Failure,GPU,GPU Lost,j1,0,2.001\n"   # line 2
         "1.0,1.0,n2,,,,,1,\n"                                       # line 3: zero length, no cause, no job
         "1.0,,n2,Software Failure,OS,,j1,2,\n"                      # line 4: open; same start as line 3 (not a step back)
         "0.5,0.75,n3,Hardware Failure,GPU,GPU Lost,j2,,0.5005\n")   # line 5: a step back (1.0 -> 0.5); 2.0 -> 1.0 the other


def _spy_fast(monkeypatch):
    seen = []
    real = readers._csv_fast

    def spy(*args, **kw):
        out = real(*args, **kw)
        seen.append(out is not None)
        return out

    monkeypatch.setattr(readers, "_csv_fast", spy)
    return seen


def _expect_clean(log):
    """The incidents of CLEAN, by hand, in order of start (lines 5, 3, 4, 2: equal starts keep the file's order)."""
    assert log.start.tolist() == [0.5, 1.0, 1.0, 2.0]
    assert log.end[[0, 1, 3]].tolist() == [0.75, 1.0, 2.5] and math.isnan(log.end[2])
    assert log.node_names.tolist() == ["n3", "n2", "n2", "n1"]
    assert [log.causes[c] for c in log.cause] == [("Hardware Failure", "GPU", "GPU Lost"), (UNKNOWN, UNKNOWN, UNKNOWN),
                                                  ("Software Failure", "OS", UNKNOWN), ("Hardware Failure", "GPU", "GPU Lost")]
    assert [log.jobs[j] if j >= 0 else None for j in log.job] == ["j2", None, "j1", "j1"]
    assert log.attempt.tolist() == [0, 1, 2, 0]
    det = log.stages["detected"]
    assert det[0] == 0.5005 and det[3] == 2.001 and np.isnan(det[1:3]).all() and set(log.stages) == {"detected"}
    assert log.window == (0.0, 2.5)  # no window given: day 0 to the latest time
    r = log.report
    assert r.notes == {"rows out of time order (sorted by start)": 2, f"cause missing at depth level (kept as {UNKNOWN!r})": 1,
                       f"cause missing at depth class (kept as {UNKNOWN!r})": 1, f"cause missing at depth desc (kept as {UNKNOWN!r})": 2}
    assert r.first_line[f"cause missing at depth level (kept as {UNKNOWN!r})"] == 3
    assert r.first_line[f"cause missing at depth desc (kept as {UNKNOWN!r})"] == 3
    assert (r.rows_read, r.rows_used, r.rows_rejected) == (4, 4, 0)


def test_a_clean_csv_takes_the_vectorized_path_and_reads_as_worked_out(tmp_path, monkeypatch):
    seen = _spy_fast(monkeypatch)
    _expect_clean(inc.read_csv(_csv(tmp_path, CLEAN)))
    assert seen == [True]


@pytest.mark.parametrize("change", ["padded", "blank line", "short row"])
def test_the_row_by_row_path_reads_the_same_incidents(tmp_path, monkeypatch, change):
    seen = _spy_fast(monkeypatch)
    lines = CLEAN.splitlines()
    if change == "padded":  # spaces around cells: stripped
        lines[2] = " 1.0 , 1.0 ,n2,,,,, 1 ,"
        text = "\n".join(lines) + "\n"
        log = inc.read_csv(_csv(tmp_path, text))
        _expect_clean(log)
    elif change == "blank line":  # a blank line between rows is skipped, the later lines keep their numbers
        text = "\n".join(lines[:3] + ["", ""] + lines[3:]) + "\n"
        log = inc.read_csv(_csv(tmp_path, text, "b.csv"))
        assert log.report.first_line[f"cause missing at depth level (kept as {UNKNOWN!r})"] == 3
        assert log.start.tolist() == [0.5, 1.0, 1.0, 2.0] and log.report.rows_read == 4
    else:  # a row with too few fields: an error naming its line, or rejected and counted
        text = "\n".join(lines + ["3.0,4.0,n1"]) + "\n"
        with pytest.raises(LogFormatError, match=r"c.csv, line 6, field \(row\): has 3 fields, the header 9"):
            inc.read_csv(_csv(tmp_path, text))
        log = inc.read_csv(_csv(tmp_path, text), errors="reject")
        assert log.report.rejected == {"malformed (row)": 1} and log.report.first_line["malformed (row)"] == 6
        assert log.start.tolist() == [0.5, 1.0, 1.0, 2.0] and (log.report.rows_read, log.report.rows_used) == (5, 4)
    assert seen in ([], [False])  # not the vectorized path


@pytest.mark.parametrize("cells, why", [
    ("1.0,inf,a,0", "end"), ("1.0,2.0,a,x", "attempt"), ("nan,2.0,a,0", "start"), ("1.0,2.0,,0", "node"),
    ("2.0,1.0,a,0", "end"), ("1.0,2024-03-30T00:00:00Z,a,0", "end"),
])
def test_the_vectorized_path_sends_every_odd_cell_to_the_row_by_row_path(tmp_path, monkeypatch, cells, why):
    seen = _spy_fast(monkeypatch)
    p = _csv(tmp_path, "start,end,node,attempt\n0.5,0.6,b,0\n" + cells + "\n")
    with pytest.raises(LogFormatError, match=f"c.csv, line 3, field {why}:"):
        inc.read_csv(p)
    assert seen == [False]


def test_row_by_row_errors_and_rejections_name_line_and_field(tmp_path):
    head = "# window_start: 0\n# window_end: 10\nstart,end,node,attempt\n"  # data from line 4
    body = ["1.0,2.0,a,0", "1.0,inf,b,0", "nan,,c,0", "2.0,1.5,d,0", "1.0,,,0", "3.0,,e,-1", "1.0,2.0,a,0", "4.0,,f,"]
    p = _csv(tmp_path, head + "\n".join(body) + "\n")
    log = inc.read_csv(p, errors="reject")
    # kept: line 4 (a) and line 11 (f, attempt empty = 0); line 10 repeats line 4
    assert log.node_names.tolist() == ["a", "f"] and log.attempt.tolist() == [0, 0] and log.start.tolist() == [1.0, 4.0]
    r = log.report
    assert r.rejected == {"malformed end": 2, "malformed start": 1, "malformed node": 1, "malformed attempt": 1,
                          "duplicate row (identical to an earlier one)": 1}
    assert {k: r.first_line[k] for k in r.rejected} == {"malformed end": 5, "malformed start": 6, "malformed node": 8,
                                                        "malformed attempt": 9, "duplicate row (identical to an earlier one)": 10}
    assert (r.rows_read, r.rows_used, r.rows_rejected) == (8, 2, 6)
    for line, field, message in ((5, "end", "must be a finite number of days"), (6, "start", "must be a finite number of days"),
                                 (7, "end", "is before start"), (8, "node", "is empty"), (9, "attempt", "must be a whole number")):
        good = [f"0.{k + 1},,z{k},0" for k in range(line - 4)]  # distinct good rows before the bad one
        bad = _csv(tmp_path, head + "\n".join(good + [body[line - 4]]) + "\n", "one.csv")
        with pytest.raises(LogFormatError, match=f"one.csv, line {line}, field {field}: {message}"):
            inc.read_csv(bad)
    with pytest.raises(LogFormatError, match="line 4, field start: is empty: every incident needs its start"):
        inc.read_csv(_csv(tmp_path, head + ",2.0,a,0\n"))
    with pytest.raises(LogFormatError, match=r"line 4, field start: must be an ISO 8601 time .*\(got 'soon'\)"):
        inc.read_csv(_csv(tmp_path, head + "soon,,a,0\n"))


def test_csv_one_kind_of_time_per_file(tmp_path):
    with pytest.raises(LogFormatError, match="c.csv, line 3, field end: mixes a timestamp into a file of numbers of days"):
        inc.read_csv(_csv(tmp_path, "start,end,node\n1.0,,a\n2.0,2024-03-30T00:00:00Z,b\n"))
    with pytest.raises(LogFormatError, match="c.csv, line 2, field end: mixes a number of days into a file of timestamps"):
        inc.read_csv(_csv(tmp_path, "start,end,node\n2024-03-30T00:00:00Z,1.5,a\n"))


def test_csv_timestamps_count_days_from_the_stated_origin(tmp_path):
    # the origin line (2024-03-29 00:00 UTC) wins over the first row (2024-03-30 00:00): that row is day 1
    text = ("# origin: 2024-03-29T00:00:00Z\nstart,end,node,detected,loaded\n"
            "2024-03-30T00:00:00Z,2024-03-30T12:00:00Z,a,2024-03-30T00:01:00Z,\n"
            " 2024-03-31T00:00:00Z ,,b,,2024-03-31T06:00:00Z\n")  # padded: the row-by-row path
    log = inc.read_csv(_csv(tmp_path, text))
    assert log.origin == "2024-03-29T00:00:00+00:00"
    assert log.start.tolist() == [1.0, 2.0] and log.end[0] == 1.5 and math.isnan(log.end[1])
    assert log.stages["detected"][0] * 1440 == pytest.approx(1441.0) and np.isnan(log.stages["detected"][1])
    assert log.stages["loaded"][1] == 2.25 and set(log.stages) == {"detected", "loaded"}
    # without an origin line: days from the earliest time in the file (here a stage before the first start)
    no_origin = inc.read_csv(_csv(tmp_path, "start,node,detected\n2024-03-30T12:00:00Z,a,\n2024-03-30T06:00:00Z,b,2024-03-30T00:00:00Z\n"))
    assert no_origin.origin == "2024-03-30T00:00:00+00:00" and no_origin.start.tolist() == [0.25, 0.5]
    assert no_origin.report.notes["rows out of time order (sorted by start)"] == 1
    # naive times in the reader's tz, and the ambiguous hour noted on its line
    berlin = inc.read_csv(_csv(tmp_path, "start,node\n2024-10-27T02:30:00,a\n"), tz="Europe/Berlin", window=(0, 1))
    assert berlin.origin == "2024-10-27T00:30:00+00:00"
    assert berlin.report.first_line["ambiguous local time in Europe/Berlin (the repeated hour), read as the first"] == 2


def test_csv_a_local_time_that_does_not_exist_names_its_line(tmp_path):
    p = _csv(tmp_path, "start,node\n2024-03-31T01:00:00,a\n2024-03-31T02:30:00,b\n")  # Berlin skips 02:00-03:00
    with pytest.raises(LogFormatError, match="c.csv, line 3, field start: '2024-03-31T02:30:00' does not exist in Europe/Berlin"):
        inc.read_csv(p, tz="Europe/Berlin")


def test_csv_each_step_back_in_time_counts_once(tmp_path):
    # starts 1, 0, 1 (row by row: padded): one step back (1 -> 0); 0 -> 1 is forward
    log = inc.read_csv(_csv(tmp_path, "start,node\n1.0,a\n0.0, b\n1.0,c\n"))
    assert log.report.notes["rows out of time order (sorted by start)"] == 1


def test_csv_rows_with_equal_starts_are_in_order_and_empty_jobs_are_none(tmp_path):
    log = inc.read_csv(_csv(tmp_path, "start,node,job\n1.0,a,\n1.0, b ,\n0.5,c,j\n"))  # padded: row by row
    assert log.report.notes == {"rows out of time order (sorted by start)": 1} | {
        f"cause missing at depth {d} (kept as {UNKNOWN!r})": 3 for d in ("level", "class", "desc")}
    # in order of start: c (0.5), then a and b (1.0, in the file's order)
    assert [log.jobs[j] if j >= 0 else None for j in log.job] == ["j", None, None] and log.node_names.tolist() == ["c", "a", "b"]


# ---------------------------------------------------------------------------------- lab event logs, by hand
def _lab(tmp_path, events, name="lab.jsonl") -> Path:
    p = tmp_path / name
    p.write_text("".join(json.dumps(e) + "\n" for e in events))
    return p


def E(t, ev, rank, gen, **kw):  # noqa: N802
    return {"t": t, "ev": ev, "rank": rank, "gen": gen, **kw}


#: Two ranks. Generation 0 runs to step 4, rank 1 is killed at 1004.5 (progress 4); rank 0 notices at 1005.5 and
#: does one more step of generation 0; the agent notices at 1006.0 and stops at 1006.5. Generation 1 is a round that
#: never loads (rank 0 only). Generation 2 rendezvouses at 1011.0 (rank 0 last), loads at 1012.5 (rank 1 last; rank 0
#: loaded step 4, rank 1 step 2: the older one decides), does its first step at 1013.5 (rank 1 last) and regains step 4
#: at 1014.0 (rank 0 at 1013.0 with step 5, rank 1 at 1014.0 with step 4). Then a hang injected on rank 0 at 1020.0 (no node named):
#: the detector fires at the same instant, a peer notices at 1020.5; the agent stops at 1022.0, generation 3
#: rendezvouses at 1023.5 and the log ends before it loads.
LAB = [
    E(1000.0, "agent_start", -1, 0),
    E(1001.0, "pg_ready", 0, 0), E(1001.0, "pg_ready", 1, 0),
    E(1001.5, "state_loaded", 0, 0, step=0), E(1001.5, "state_loaded", 1, 0, step=0),
    E(1002.0, "step_done", 0, 0, step=1), E(1002.0, "step_done", 1, 0, step=1),
    E(1003.0, "step_done", 0, 0, step=2), E(1003.0, "step_done", 1, 0, step=2), E(1003.0, "ckpt_written", 0, 0, step=2),
    E(1004.0, "step_done", 0, 0, step=3), E(1004.0, "step_done", 1, 0, step=3),
    E(1004.2, "step_done", 0, 0, step=4), E(1004.2, "step_done", 1, 0, step=4),
    E(1004.5, "inject", 1, 0, kind="kill", progress=4, node="hostB"),
    E(1005.0, "step_done", 0, 0, step=5),
    E(1005.5, "noticed", 0, 0),
    E(1006.0, "agent_noticed", -1, 0),
    E(1006.5, "agent_stopped", -1, 1),
    E(1008.0, "pg_ready", 0, 1),
    E(1010.0, "pg_ready", 1, 2), E(1011.0, "pg_ready", 0, 2),
    E(1012.0, "state_loaded", 0, 2, step=4), E(1012.5, "state_loaded", 1, 2, step=2),
    E(1013.0, "step_done", 0, 2, step=5), E(1013.5, "step_done", 1, 2, step=3),
    E(1014.0, "step_done", 0, 2, step=6), E(1014.0, "step_done", 1, 2, step=4),
    E(1020.0, "inject", 0, 2, kind="hang", progress=4), E(1020.0, "hang_detected", -1, 2), E(1020.5, "noticed", 1, 2),
    E(1022.0, "agent_stopped", -1, 3),
    E(1023.0, "pg_ready", 1, 3), E(1023.5, "pg_ready", 0, 3),
]


def test_lab_events_by_hand(tmp_path):
    log = inc.read_lab_events(_lab(tmp_path, LAB[::-1]))  # in any order: sorted by time
    day = 86400.0
    assert log.origin == "1970-01-01T00:16:40+00:00"  # t0 = 1000 s after the epoch
    assert log.start.tolist() == pytest.approx([4.5 / day, 20.0 / day], rel=1e-12)
    assert log.window == (0.0, pytest.approx(23.5 / day, rel=1e-12))
    assert log.node_names.tolist() == ["hostB", "rank 0"] and log.causes == (("Injected", "hang", "hang"), ("Injected", "kill", "kill"))
    assert log.cause_part("class").tolist() == ["kill", "hang"]
    st = {k: v * day for k, v in log.stages.items()}  # seconds since t0 (day 0 is t0)
    first = {k: st[k][0] for k in st}
    assert first == pytest.approx({"detected": 6.0, "torn_down": 6.5, "rendezvous": 11.0, "loaded": 12.5, "first_step": 13.5,
                                   "progress_regained": 14.0}, abs=1e-6)
    assert log.end[0] * day == pytest.approx(14.0, abs=1e-6)
    s = inc.stage_seconds(log)
    assert [s[k][0] for k in ("detect", "reschedule", "reload", "rewind")] == pytest.approx([1.5, 5.0, 1.5, 1.5], abs=1e-6)
    # the hang: detected at the inject's own instant (the detector before the peer), torn down at 22.0, the
    # next generation's rendezvous at 23.5, never loaded: the rest open
    second = {k: st[k][1] for k in st}
    assert second["detected"] == pytest.approx(20.0, abs=1e-6) and second["torn_down"] == pytest.approx(22.0, abs=1e-6)
    assert second["rendezvous"] == pytest.approx(23.5, abs=1e-6)
    assert all(math.isnan(second[k]) for k in ("loaded", "first_step", "progress_regained")) and math.isnan(log.end[1])
    r = log.report
    assert r.notes == {"failure whose restart never regained its progress in the log (end open)": 1}
    # used: inject, agent_noticed, agent_stopped, 2 pg_ready, 2 state_loaded, 2 first steps and rank 1's step 4
    # (rank 0's first step is its step >= 4 too) (first restart: 10); inject, hang_detected, agent_stopped, 2
    # pg_ready (second: 5)
    assert (r.rows_read, r.rows_used, r.rows_ignored, r.rows_rejected) == (len(LAB), 15, len(LAB) - 15, 0)


def test_lab_events_a_checkpoint_that_holds_the_progress_and_the_quieter_detectors(tmp_path):
    # no agent_noticed: the detector's hang_detected is preferred to a peer's earlier noticed; the restart loads
    # step 4 and the inject's progress was 4: progress is regained when loaded. No progress field: 0.
    # A slow rank 1 of generation 0 finishes loading after the inject (that load is not the restart's); rank 1 of
    # generation 1 starts but never reaches the rendezvous (only ranks with a pg_ready count).
    events = [E(0.0, "pg_ready", 0, 0), E(10.0, "inject", 0, 0, kind="hang", progress=4), E(10.5, "state_loaded", 1, 0, step=0),
              E(11.0, "noticed", 1, 0), E(12.0, "hang_detected", -1, 0), E(12.0, "agent_stopped", -1, 1),
              E(14.0, "worker_start", 1, 1), E(15.0, "pg_ready", 0, 1), E(16.0, "state_loaded", 0, 1, step=4),
              E(17.0, "step_done", 0, 1, step=5),
              # the second: a peer's notice only, no agent_stopped, no kind, no progress (0): regained at the load
              E(30.0, "inject", 0, 1), E(31.0, "noticed", 1, 1), E(32.0, "pg_ready", 0, 2),
              E(33.0, "state_loaded", 0, 2, step=0),
              # the third: progress 1, the load names no step (0): regained at the first step_done with step >= 1
              E(40.0, "inject", 0, 2, kind="kill", progress=1), E(42.0, "pg_ready", 0, 3), E(43.0, "state_loaded", 0, 3),
              E(44.0, "step_done", 0, 3, step=1),
              # the fourth: no load logged and a step_done without its step: progress cannot be shown regained
              E(50.0, "inject", 0, 3, kind="kill"), E(51.0, "pg_ready", 0, 4), E(52.0, "step_done", 0, 4)]
    log = inc.read_lab_events(_lab(tmp_path, events))
    st = {k: v * 86400.0 for k, v in log.stages.items()}
    names = ("detected", "torn_down", "rendezvous", "loaded", "first_step", "progress_regained")
    nan = math.nan
    want = [[12.0, 12.0, 15.0, 16.0, 17.0, 16.0], [31.0, nan, 32.0, 33.0, nan, 33.0], [nan, nan, 42.0, 43.0, 44.0, 44.0],
            [nan, nan, 51.0, nan, 52.0, nan]]
    for i, row in enumerate(want):
        assert [st[k][i] for k in names] == pytest.approx(row, abs=1e-6, nan_ok=True), i
    assert log.cause_part("class").tolist() == ["hang", UNKNOWN, "kill", "kill"] and set(log.node_names.tolist()) == {"rank 0"}
    assert log.report.notes == {"failure whose restart never regained its progress in the log (end open)": 1}


@pytest.mark.parametrize("event, field", [
    (E(True, "x", 0, 0), "t"), (E("1.0", "x", 0, 0), "t"), (E(math.nan, "x", 0, 0), "t"), (E(math.inf, "x", 0, 0), "t"),
    ({"t": 1.0, "rank": 0, "gen": 0}, "ev"), (E(1.0, "", 0, 0), "ev"), (E(1.0, 5, 0, 0), "ev"),
    (E(1.0, "x", True, 0), "rank"), (E(1.0, "x", "0", 0), "rank"), (E(1.0, "x", 0.0, 0), "rank"),
    (E(1.0, "x", 0, True), "gen"), (E(1.0, "x", 0, 1.5), "gen"), ({"t": 1.0, "ev": "x", "rank": 0}, "gen"),
])
def test_lab_events_malformed_fields_name_the_line(tmp_path, event, field):
    p = _lab(tmp_path, [E(0.0, "pg_ready", 0, 0), event, E(2.0, "pg_ready", 1, 0)])
    with pytest.raises(LogFormatError, match=f"lab.jsonl, line 2, field {field}: must be"):
        inc.read_lab_events(p)
    log = inc.read_lab_events(p, errors="reject")
    assert log.report.rejected == {f"malformed {field}": 1} and log.report.first_line[f"malformed {field}"] == 2


def test_lab_events_empty_logs_and_lines_that_are_not_objects(tmp_path):
    for text in ("", "\n\x1e\n \t\n", '{"t": 1.0, "ev": "st'):
        p = tmp_path / "e.jsonl"
        p.write_text(text)
        with pytest.raises(ValueError, match="e.jsonl holds no lab events: nothing to read"):
            inc.read_lab_events(p)
    p = tmp_path / "list.jsonl"
    p.write_text('[1, 2]\n{"t": 1.0, "ev": "x", "rank": 0, "gen": 0}\n{"t": 2.0, "ev": "y", "rank": 0, "gen": 0}\n')
    with pytest.raises(LogFormatError, match=r"list.jsonl, line 1, field \(event\): each line must be a JSON object"):
        inc.read_lab_events(p)
    log = inc.read_lab_events(p, errors="reject")
    assert log.report.rejected == {"malformed (event)": 1} and len(log) == 0
    assert log.report.ignored == {"lab event that marks no failure and no stage boundary": 2}


def test_an_event_time_of_exactly_max_days_is_the_last_one_accepted(tmp_path):
    # 100,000 days (274 years) is the reader's bound: at it a time is read, beyond it refused at its line and field
    ev = [{"node_id": "a", "event_time": 1.0, "event_type": "fault_start", "fault_level": "Hardware Failure",
           "fault_class": "GPU", "fault_description": "GPU Lost"},
          {"node_id": "a", "event_time": 100_000, "event_type": "fault_end", "fault_level": "Hardware Failure",
           "fault_class": "GPU", "fault_description": "GPU Lost"}]
    p = tmp_path / "t.json"
    p.write_text(json.dumps(ev))
    log = inc.read_infinitehbd(p)
    assert log.report.rows_used == 2 and log.end.tolist() == [100_000.0]
    ev[1]["event_time"] = 100_000.5
    p.write_text(json.dumps(ev))
    with pytest.raises(LogFormatError, match="field event_time: must be a finite number of days >= 0 and at most 100,000"):
        inc.read_infinitehbd(p)
    # the CSV schema, on its fast path (every row clean) and row by row (one bad row, rejected)
    c = tmp_path / "t.csv"
    c.write_text("node,start,end\na,1.0,100000\n")
    assert inc.read_csv(c).end.tolist() == [100_000.0]
    c.write_text("node,start,end\na,1.0,100000\nb,1e6,2e6\n")  # b beyond the bound: the file is read row by row
    got = inc.read_csv(c, errors="reject")
    assert got.end.tolist() == [100_000.0] and got.report.rows_used == 1 and got.report.rows_rejected == 1
    c.write_text("node,start,end\na,1.0,100000.5\n")
    with pytest.raises(LogFormatError, match=r"t.csv, line 2, field end: must be a finite number of days, at most 100,000"):
        inc.read_csv(c)


def test_a_binary_byte_at_the_very_start_is_named_at_offset_0_line_1(tmp_path):
    p = tmp_path / "log.txt"
    p.write_bytes(b"\x00JobID|State\n")
    with pytest.raises(LogFormatError) as e:
        inc.read_sacct(p)
    assert e.value.line == 1 and "byte 0x00 at offset 0 " in str(e.value)
    p.write_bytes(b"\xd2JobID|State\n1|x\n")
    with pytest.raises(LogFormatError) as e:
        inc.read_sacct(p)
    assert e.value.line == 1 and "byte 0xd2 at offset 0 " in str(e.value)
    p.write_bytes(b"\n\xff")  # a blank first line: the bad byte is on line 2, at offset 1
    with pytest.raises(LogFormatError) as e:
        inc.read_sacct(p)
    assert e.value.line == 2 and "byte 0xff at offset 1 " in str(e.value)
