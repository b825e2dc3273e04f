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
    assert str(e.value).startswith("t.json, line 3, field event_time: must be a finite number of days >= 0 (got 'later')")
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
