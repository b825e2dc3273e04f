"""The incident log's record (course_lib.incidents.schema): every value worked out by hand, every refusal at its edge.

tests/test_incidents_readers.py reads real fixtures through the schema; here the schema is
driven directly: what build and from_codes keep (sorted by start, vocabularies sorted), what
they refuse, and the small parts (days, where, with_window, equals, stage_seconds, write_csv,
the ReadReport's counts and text).
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from course_lib.incidents.schema import (UNKNOWN, IncidentLog, LogFormatError, ReadReport, default_window,
                                         stage_seconds, write_csv)

NAN = np.nan
GPU, NCCL = ("hw", "GPU", "Xid 79"), ("sw", "NCCL", "timeout")


def three() -> IncidentLog:
    """Three incidents given out of order; sorted by start they are (1, n1, NCCL), (2, n2, GPU), (3, n2, GPU)."""
    return IncidentLog.build([3.0, 1.0, 2.0], [3.5, NAN, 2.25], ["n2", "n1", "n2"], [GPU, NCCL, GPU], window=(0, 10),
                             jobs=["j7", None, "j3"], attempt=[1, 0, 0], stages={"detected": [3.125, NAN, 2.0625]},
                             origin="2024-01-01T00:00:00Z", source="x.csv", format="csv")


def eq(a, b):
    """Arrays equal in shape, dtype and values (NaN equal to NaN)."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype, (a, b)
    np.testing.assert_array_equal(a, b)


# ------------------------------------------------------------------------------------------ ReadReport
def test_a_report_counts_each_reason_keeps_its_first_line_and_prints_them_largest_first():
    r = ReadReport(source="x.log")
    assert (r.rows_read, r.rows_used, r.rows_ignored, r.rows_rejected) == (0, 0, 0, 0)
    r.check()  # nothing read, nothing to account for
    r.ignore("completed job", line=2, n=5)
    r.ignore("job step", line=4)
    r.ignore("job step", line=9)  # counted, and line 4 stays the first
    r.reject("malformed start", line=7, n=3)
    r.reject("no start", line=12)
    r.note("out of order")
    assert r.ignored == {"completed job": 5, "job step": 2}
    assert r.rejected == {"malformed start": 3, "no start": 1}
    assert r.notes == {"out of order": 1}
    assert r.first_line == {"completed job": 2, "job step": 4, "malformed start": 7, "no start": 12}
    assert (r.rows_ignored, r.rows_rejected) == (7, 4)
    r.rows_read, r.rows_used = 1015, 1004
    r.check()  # 1,004 + 7 + 4
    assert r.lines() == ["rows read 1,015: used 1,004, ignored 7, rejected 4",
                         "  ignored: 5 x completed job (first at line 2)",
                         "  ignored: 2 x job step (first at line 4)",
                         "  rejected: 3 x malformed start (first at line 7)",
                         "  rejected: 1 x no start (first at line 12)",
                         "  note: 1 x out of order"]
    assert r.as_dict() == {"source": "x.log", "rows_read": 1015, "rows_used": 1004, "rows_ignored": 7, "rows_rejected": 4,
                           "ignored": {"completed job": 5, "job step": 2}, "rejected": {"malformed start": 3, "no start": 1},
                           "notes": {"out of order": 1}}


@pytest.mark.parametrize("read,used", [(1016, 1004), (1014, 1004), (1015, 1003)])
def test_a_report_with_rows_unaccounted_for_is_a_readers_bug(read, used):
    r = ReadReport(source="x.log")
    r.ignore("job step", n=7)
    r.reject("no start", n=4)
    r.rows_read, r.rows_used = read, used
    with pytest.raises(RuntimeError, match="rows unaccounted for in x.log: rows read"):
        r.check()


def test_a_reports_private_add_counts_one_by_default():
    r = ReadReport()
    r._add(r.notes, "kept open")
    r._add(r.notes, "kept open", line=3)
    assert r.notes == {"kept open": 2} and r.first_line == {"kept open": 3}


def test_a_format_error_names_the_file_the_line_and_the_field():
    e = LogFormatError("/data/logs/sacct.txt", 12, "Start", "not a time")
    assert isinstance(e, ValueError)
    assert str(e) == "sacct.txt, line 12, field Start: not a time"
    assert (e.file, e.line, e.field) == ("/data/logs/sacct.txt", 12, "Start")
    assert str(LogFormatError("a/b.csv", None, "header", "column node missing")) == "b.csv, field header: column node missing"


# ------------------------------------------------------------------------------------------ windows
@pytest.mark.parametrize("window", [(0, math.inf), (-math.inf, 3), (math.nan, 3), (0, math.nan), (2, 1), (1, 1)])
def test_a_window_must_be_finite_and_of_some_length(window):
    with pytest.raises(ValueError, match="with last > first: a log of no length has no rate"):
        IncidentLog.build([], [], [], window=window)


@pytest.mark.parametrize("window", [None, (1,), (1, 2, 3), ("a", "b"), 5])
def test_a_window_must_be_a_pair_of_numbers(window):
    with pytest.raises(ValueError, match=r"window must be a pair \(first day, last day\) of numbers"):
        IncidentLog.from_codes([], [], [], (), [], (), window=window)


def test_a_window_is_kept_as_two_floats_and_its_length_is_the_days():
    log = IncidentLog.build([], [], [], window=(2, 5.5))
    assert log.window == (2.0, 5.5) and type(log.window[0]) is float and type(log.window[1]) is float
    assert log.days == 3.5
    assert IncidentLog.build([], [], [], window=(-1.0, 0.25)).days == 1.25
    assert len(log) == 0


def test_the_default_window_runs_from_day_0_or_the_earliest_start_to_the_latest_time():
    assert default_window([3.0, 1.0], [4.0, NAN]) == (0.0, 4.0)  # the latest end
    assert default_window([1.0, 5.0], [2.0, NAN]) == (0.0, 5.0)  # the latest start (the other still open)
    assert default_window([2.0], [NAN]) == (0.0, 2.0)  # one incident
    assert default_window([-2.0, 1.0], [NAN, 6.5]) == (-2.0, 6.5)  # a start before day 0
    assert IncidentLog.build([1.0, 3.0], [2.0, NAN], ["a", "b"]).window == (0.0, 3.0)
    with pytest.raises(ValueError, match="window must be given for a log with no incidents"):
        default_window([], [])
    with pytest.raises(ValueError, match="window must be given for a log with no incidents"):
        IncidentLog.build([], [], [])


# ------------------------------------------------------------------------------------------ build
def test_build_sorts_by_start_and_codes_nodes_causes_and_jobs_in_sorted_vocabularies():
    log = three()
    assert len(log) == 3
    eq(log.start, np.array([1.0, 2.0, 3.0]))
    eq(log.end, np.array([NAN, 2.25, 3.5]))
    assert log.nodes == ("n1", "n2")
    eq(log.node, np.array([0, 1, 1], dtype=np.int64))
    assert log.causes == (GPU, NCCL)
    eq(log.cause, np.array([1, 0, 0], dtype=np.int64))
    assert log.jobs == ("j3", "j7")
    eq(log.job, np.array([-1, 0, 1], dtype=np.int64))
    eq(log.attempt, np.array([0, 0, 1], dtype=np.int64))
    assert list(log.stages) == ["detected"]
    eq(log.stages["detected"], np.array([NAN, 2.0625, 3.125]))
    assert (log.window, log.origin, log.source, log.format) == ((0.0, 10.0), "2024-01-01T00:00:00Z", "x.csv", "csv")
    assert log.report.source == "x.csv" and log.report.rows_read == 0
    eq(log.node_names, np.array(["n1", "n2", "n2"]))
    eq(log.open, np.array([True, False, False]))
    eq(log.duration_days, np.array([NAN, 0.25, 0.5]))
    eq(log.cause_part("level"), np.array(["sw", "hw", "hw"]))
    eq(log.cause_part("class"), np.array(["NCCL", "GPU", "GPU"]))
    eq(log.cause_part("desc"), np.array(["timeout", "Xid 79", "Xid 79"]))


def test_build_defaults_unknown_causes_no_jobs_first_attempts_and_its_own_report():
    log = IncidentLog.build([2.0, 1.0], [2.0, 1.5], [7, 10], window=(0, 4))  # an incident of no length is allowed
    assert log.nodes == ("10", "7")  # ids kept as the log spells them, as strings
    eq(log.node_names, np.array(["10", "7"]))
    assert log.causes == ((UNKNOWN, UNKNOWN, UNKNOWN),) and UNKNOWN == "Unknown"
    eq(log.cause, np.array([0, 0], dtype=np.int64))
    assert log.jobs == ()
    eq(log.job, np.array([-1, -1], dtype=np.int64))
    eq(log.attempt, np.array([0, 0], dtype=np.int64))
    assert log.stages == {} and log.origin is None and log.source == "" and log.format == ""
    rep = ReadReport(source="elsewhere")
    assert IncidentLog.build([1.0], [2.0], ["a"], window=(0, 4), report=rep).report is rep


def test_an_empty_log_has_empty_parts():
    log = IncidentLog.build([], [], [], window=(0, 7))
    assert len(log) == 0 and log.nodes == () and log.causes == () and log.jobs == ()
    for part in (log.node_names, log.cause_part("level"), log.cause_part("desc")):
        eq(part, np.array([], dtype=str))
    eq(log.start, np.array([]))
    eq(log.node, np.array([], dtype=np.int64))


@pytest.mark.parametrize("args,kw,match", [
    (([[1.0, 2.0]], [[1.5, 2.5]], ["a", "b"]), {}, r"start and end must be 1-D and of equal length"),
    (([1.0, 2.0], [1.5], ["a", "b"]), {}, r"start and end must be 1-D and of equal length \(got \(2,\) and \(1,\)\)"),
    (([1.0, NAN], [1.5, NAN], ["a", "b"]), {}, "start must hold finite times"),
    (([1.0, math.inf], [1.5, NAN], ["a", "b"]), {}, "start must hold finite times"),
    (([1.0, 2.0], [1.5, math.inf], ["a", "b"]), {}, r"end must hold finite times or NaN \(open\)"),
    (([1.0, 2.0], [1.5, 1.0], ["a", "b"]), {}, r"end must be >= start for every incident \(incident 1: start "),
    (([1.0, 2.0], [NAN, NAN], ["a"]), {}, r"node_names must hold one id per incident \(2\), got 1"),
    (([1.0, 2.0], [NAN, NAN], ["a", "b", "c"]), {}, r"node_names must hold one id per incident \(2\), got 3"),
    (([1.0, 2.0], [NAN, NAN], ["a", "b"]), {"causes": [GPU]}, r"causes must hold one \(level, class, desc\) triple"),
    (([1.0, 2.0], [NAN, NAN], ["a", "b"]), {"causes": [GPU, ("hw", "GPU")]}, r"causes must hold one \(level, class, desc\)"),
    (([1.0, 2.0], [NAN, NAN], ["a", "b"]), {"causes": [GPU, GPU + ("x",)]}, r"causes must hold one \(level, class, desc\)"),
    (([1.0, 2.0], [NAN, NAN], ["a", "b"]), {"jobs": ["j1"]}, r"jobs must hold one job id \(or None\) per incident \(2\), got 1"),
    (([1.0, 2.0], [NAN, NAN], ["a", "b"]), {"stages": {"noticed": [1.0, 2.0]}}, r"stages must be named from .*'noticed'"),
    (([1.0, 2.0], [NAN, NAN], ["a", "b"]), {"stages": {"loaded": [1.0]}}, r"stage loaded must hold one time \(or NaN\) per incident"),
])
def test_build_refuses_inconsistent_incidents(args, kw, match):
    with pytest.raises(ValueError, match=match):
        IncidentLog.build(*args, window=(0, 3), **kw)


# ------------------------------------------------------------------------------------------ from_codes
def test_from_codes_sorts_by_start_and_keeps_the_codes():
    log = IncidentLog.from_codes([2.0, 1.0], [2.5, 1.0], [1, 0], ("a", "b"), [0, 1], [GPU, list(NCCL)], window=(0, 4),
                                 job=[0, -1], jobs=["j1"], attempt=[2, 0], stages={"loaded": [2.25, NAN]}, source="gen")
    eq(log.start, np.array([1.0, 2.0]))
    eq(log.end, np.array([1.0, 2.5]))  # an incident of no length is allowed
    eq(log.node, np.array([0, 1], dtype=np.int64))
    assert log.nodes == ("a", "b") and log.causes == (GPU, NCCL) and log.jobs == ("j1",)
    eq(log.cause, np.array([1, 0], dtype=np.int64))
    eq(log.job, np.array([-1, 0], dtype=np.int64))
    eq(log.attempt, np.array([0, 2], dtype=np.int64))
    assert list(log.stages) == ["loaded"]
    eq(log.stages["loaded"], np.array([NAN, 2.25]))
    assert log.window == (0.0, 4.0) and log.source == "gen" and log.report.source == "gen"
    rep = ReadReport()
    assert IncidentLog.from_codes([1.0], [2.0], [0], ("a",), [0], [GPU], window=(0, 4), report=rep).report is rep


def test_from_codes_defaults_no_jobs_first_attempts_and_takes_an_empty_log():
    log = IncidentLog.from_codes([1.0, 2.0], [NAN, NAN], [0, 0], ("a",), [0, 0], [GPU], window=(0, 4))
    eq(log.job, np.array([-1, -1], dtype=np.int64))
    eq(log.attempt, np.array([0, 0], dtype=np.int64))
    assert log.jobs == () and log.stages == {}
    empty = IncidentLog.from_codes([], [], [], (), [], (), window=(0, 4))
    assert len(empty) == 0 and empty.window == (0.0, 4.0)


OK = dict(start=[1.0, 2.0], end=[1.5, NAN], node=[0, 1], nodes=("a", "b"), cause=[0, 1], causes=(GPU, NCCL))


@pytest.mark.parametrize("over,kw,match", [
    ({"end": [1.5]}, {}, "start, end, node and cause must be 1-D and of equal length"),
    ({"node": [0]}, {}, "start, end, node and cause must be 1-D and of equal length"),
    ({"cause": [0]}, {}, "start, end, node and cause must be 1-D and of equal length"),
    ({"start": [[1.0, 2.0]], "end": [[1.5, 2.5]], "node": [[0, 1]], "cause": [[0, 1]]}, {}, "must be 1-D and of equal length"),
    ({"node": [-1, 1]}, {}, "node and cause must index into nodes and causes"),
    ({"node": [0, 2]}, {}, "node and cause must index into nodes and causes"),
    ({"cause": [-1, 1]}, {}, "node and cause must index into nodes and causes"),
    ({"cause": [0, 2]}, {}, "node and cause must index into nodes and causes"),
    ({"end": [1.5, 1.75]}, {}, "end must be >= start for every incident"),
    ({}, {"job": [0]}, "job and attempt must hold one value per incident"),
    ({}, {"attempt": [0, 0, 0]}, "job and attempt must hold one value per incident"),
    ({}, {"job": [0, 1], "jobs": ("j1",)}, r"job indexing into jobs \(-1: none\)"),
    ({}, {"job": [0, -1]}, r"job indexing into jobs \(-1: none\)"),
    ({}, {"job": [-2, -1], "jobs": ("j0", "j1")}, r"job indexing into jobs \(-1: none\)"),  # was stored; write_csv wrote j0
    ({}, {"stages": {"noticed": [1.0, 2.0]}}, r"stages must be named from .*one time \(or NaN\) per incident"),
])
def test_from_codes_refuses_codes_that_do_not_fit(over, kw, match):
    with pytest.raises(ValueError, match=match):
        IncidentLog.from_codes(**{**OK, **over}, window=(0, 3), **kw)


@pytest.mark.parametrize("times", [[1.0], [1.0, 2.0, 3.0]])
def test_from_codes_refuses_a_stage_of_the_wrong_length(times):
    # it indexed the stage by the sort order first: a short one was an IndexError, a long one was cut silently
    with pytest.raises(ValueError, match=r"stages must be named from .*one time \(or NaN\) per incident"):
        IncidentLog.from_codes(**OK, window=(0, 3), stages={"loaded": times})


# ------------------------------------------------------------------------------------------ the record itself
def test_a_log_is_frozen_and_compared_by_identity_only():
    log = three()
    with pytest.raises(dataclasses.FrozenInstanceError):
        log.window = (0.0, 1.0)  # type: ignore[misc]
    # eq=False: == and hash are object's (identity), so numpy columns never take part (a generated __hash__ would
    # raise on the arrays, a generated __eq__ would compare them elementwise and raise on the truth value)
    assert type(log).__eq__ is object.__eq__ and type(log).__hash__ is object.__hash__
    assert hash(log) == object.__hash__(log)
    twin = three()  # the same incidents in another object
    assert twin.equals(log) and log.equals(twin)  # equals() is the comparison of contents ...
    assert log != twin and not (log == twin) and twin != log  # noqa: SIM201 (== itself, not !=): identity, so equal contents are distinct
    assert hash(twin) != hash(log)  # identity hashes of two live objects (CPython's pointer hash is one-to-one)
    # usable as a dict key and a set member, each object its own entry
    table = {log: "first", twin: "second"}
    assert len(table) == 2 and table[log] == "first" and table[twin] == "second"
    assert len({log, twin, log}) == 2 and log in {log} and twin not in {log}
    # a copy that changes one field is another log by both comparisons; an unchanged copy is equal in contents only
    assert dataclasses.replace(log).equals(log) and dataclasses.replace(log) != log
    moved = dataclasses.replace(log, window=(0.0, 11.0))
    assert not moved.equals(log) and moved != log
    assert not dataclasses.replace(log, start=log.start + 0.5).equals(log)
    # the hash does not follow the contents: a column changed in place keeps the key (a content hash would lose it)
    h = hash(log)
    log.end[1] = 2.5  # was 2.25
    assert hash(log) == h and table[log] == "first"
    assert not log.equals(twin) and not twin.equals(log)  # equals() reads the contents as they are now
    with pytest.raises(ValueError, match="last > first"):
        IncidentLog(start=np.array([]), end=np.array([]), node=np.array([], np.int64), nodes=(), cause=np.array([], np.int64),
                    causes=(), window=(3.0, 1.0), job=np.array([], np.int64))


def test_where_keeps_the_incidents_of_a_mask_and_everything_else():
    log = three()
    sub = log.where([True, False, True])
    eq(sub.start, np.array([1.0, 3.0]))
    eq(sub.end, np.array([NAN, 3.5]))
    eq(sub.node_names, np.array(["n1", "n2"]))
    eq(sub.cause_part("class"), np.array(["NCCL", "GPU"]))
    eq(sub.job, np.array([-1, 1], dtype=np.int64))
    eq(sub.attempt, np.array([0, 1], dtype=np.int64))
    eq(sub.stages["detected"], np.array([NAN, 3.125]))
    assert (sub.nodes, sub.causes, sub.jobs, sub.window) == (("n1", "n2"), (GPU, NCCL), ("j3", "j7"), (0.0, 10.0))
    assert (sub.origin, sub.source, sub.format) == ("2024-01-01T00:00:00Z", "x.csv", "csv") and sub.report is log.report
    assert len(log.where([False, False, False])) == 0
    with pytest.raises(ValueError, match=r"mask must hold one bool per incident \(3\), got shape \(2,\)"):
        log.where([True, False])


def test_where_on_a_log_without_attempts_keeps_none():
    bare = IncidentLog(start=np.array([1.0, 2.0]), end=np.array([NAN, NAN]), node=np.array([0, 0]), nodes=("a",),
                       cause=np.array([0, 0]), causes=(GPU,), window=(0.0, 3.0), job=np.array([-1, -1]))
    assert bare.where([True, False]).attempt is None


def test_with_window_moves_the_window_and_refuses_to_leave_a_start_outside():
    log = IncidentLog.build([1.0, 2.0], [1.5, NAN], ["a", "b"], window=(0, 3))
    moved = log.with_window((1, 2))  # the starts on its edges
    assert moved.window == (1.0, 2.0) and moved.days == 1.0
    eq(moved.start, np.array([1.0, 2.0]))
    eq(moved.end, np.array([1.5, NAN]))
    assert moved.nodes == ("a", "b") and moved.report is log.report
    assert log.with_window((0, 5)).window == (0.0, 5.0)
    assert log.window == (0.0, 3.0)  # the original is untouched
    with pytest.raises(ValueError, match=r"window must contain every start \(starts span 1 to 2 days"):
        log.with_window((1.5, 3))
    with pytest.raises(ValueError, match=r"window must contain every start \(starts span 1 to 2 days"):
        log.with_window((0, 1.5))
    with pytest.raises(ValueError, match="last > first"):
        log.with_window((2, 2))
    empty = IncidentLog.build([], [], [], window=(0, 3))
    assert empty.with_window((5, 6)).window == (5.0, 6.0)  # no start to contain


# ------------------------------------------------------------------------------------------ equals
BASE = dict(start=[1.0, 2.0], end=[1.5, NAN], node_names=["a", "b"], causes=[GPU, NCCL], window=(0.0, 5.0),
            jobs=["j1", None], attempt=[0, 1], stages={"detected": [1.25, NAN]})


def make(**over) -> IncidentLog:
    return IncidentLog.build(**{**BASE, **over})


def test_equal_logs_are_the_same_incidents_bit_for_bit():
    assert make().equals(make())  # NaN (open, no stage time) equal to NaN
    reordered = IncidentLog.build([2.0, 1.0], [NAN, 1.5], ["b", "a"], [NCCL, GPU], window=(0, 5), jobs=[None, "j1"],
                                  attempt=[1, 0], stages={"detected": [NAN, 1.25]})
    assert make().equals(reordered) and reordered.equals(make())
    # the vocabularies may differ: the ids and causes are compared, not the codes
    wide = IncidentLog.from_codes([1.0, 2.0], [1.5, NAN], [1, 2], ("z", "a", "b"), [2, 0], (NCCL, ("x", "y", "z"), GPU),
                                  window=(0, 5), job=[1, -1], jobs=("j0", "j1"), attempt=[0, 1], stages={"detected": [1.25, NAN]})
    assert make().equals(wide) and wide.equals(make())


@pytest.mark.parametrize("over", [
    {"window": (0.0, 6.0)},
    {"start": [1.0, 2.5]},
    {"end": [1.75, NAN]},
    {"end": [1.5, 3.0]},
    {"node_names": ["a", "c"]},
    {"causes": [GPU, ("sw", "NCCL", "hang")]},
    {"jobs": ["j2", None]},
    {"jobs": [None, None]},
    {"jobs": ["j1", "j1"]},
    {"attempt": [0, 2]},
    {"stages": {"detected": [1.25, 2.5]}},
    {"stages": {}},
    {"stages": {"detected": [1.25, NAN], "loaded": [1.375, NAN]}},
    {"start": [1.0], "end": [1.5], "node_names": ["a"], "causes": [GPU], "jobs": ["j1"], "attempt": [0], "stages": {"detected": [1.25]}},
])
def test_a_log_differing_in_one_field_is_not_equal(over):
    a, b = make(), make(**over)
    assert not a.equals(b)
    assert not b.equals(a)


# ------------------------------------------------------------------------------------------ stages and CSV
def test_stage_seconds_are_the_differences_of_the_stage_times_in_seconds():
    # times in days chosen as binary fractions: 1/1024 day = 84.375 s exactly
    log = IncidentLog.build([1.0, 2.0], [NAN, NAN], ["a", "b"], window=(0, 3),
                            stages={"detected": [1.0009765625, NAN], "rendezvous": [1.0029296875, NAN],
                                    "loaded": [1.00390625, 2.5], "progress_regained": [1.0078125, NAN]})
    s = stage_seconds(log)
    assert list(s) == ["detect", "reschedule", "reload", "rewind"]
    eq(s["detect"], np.array([84.375, NAN]))
    eq(s["reschedule"], np.array([168.75, NAN]))
    eq(s["reload"], np.array([84.375, NAN]))
    eq(s["rewind"], np.array([337.5, NAN]))
    partial = stage_seconds(IncidentLog.build([1.0, 2.0], [NAN, NAN], ["a", "b"], window=(0, 3),
                                              stages={"detected": [1.0009765625, 2.0009765625]}))
    eq(partial["detect"], np.array([84.375, 84.375]))
    for k in ("reschedule", "reload", "rewind"):
        eq(partial[k], np.array([NAN, NAN]))  # a bound the log does not give


def test_write_csv_writes_the_window_the_origin_and_one_exact_row_per_incident(tmp_path):
    path = write_csv(three(), tmp_path / "log.csv")
    assert path == tmp_path / "log.csv"
    assert path.read_text() == (
        "# window_start: 0.0\n"
        "# window_end: 10.0\n"
        "# origin: 2024-01-01T00:00:00Z\n"
        "start,end,node,level,class,desc,job,attempt,detected\n"
        "1.0,,n1,sw,NCCL,timeout,,0,\n"
        "2.0,2.25,n2,hw,GPU,Xid 79,j3,0,2.0625\n"
        "3.0,3.5,n2,hw,GPU,Xid 79,j7,1,3.125\n")
    bare = IncidentLog.build([0.1], [0.30000000000000004], ["a"], window=(0, 1))
    assert write_csv(bare, tmp_path / "bare.csv").read_text() == (
        "# window_start: 0.0\n"
        "# window_end: 1.0\n"
        "start,end,node,level,class,desc,job,attempt\n"
        "0.1,0.30000000000000004,a,Unknown,Unknown,Unknown,,0\n")
