"""Readers: a fault log in five formats, into the schema of :mod:`course_lib.incidents.schema` (notebook 13).

- :func:`read_infinitehbd`: the InfiniteHBD trace's JSON (``fault_start`` / ``fault_end`` events per
  node; each end is paired with its node's open start of the same cause, else its oldest open one);
- :func:`read_sacct`: a Slurm ``sacct --parsable2`` export (``|``-separated, a header line; columns
  JobID, State, Start, End, NodeList and, if present, ExitCode). NODE_FAIL, FAILED and REQUEUED rows
  are interruptions; with ``sacct --duplicates`` a requeued job has one row per attempt, and the
  requeue chain closes each interruption at the next attempt's Start (the job running again): its
  length is the scheduler's reschedule (:func:`course_lib.incidents.report.reschedule_times`);
- :func:`read_slurm_events`: Slurm's node events, ``sacctmgr show event --parsable2`` (a node set
  DOWN, DRAIN or FAIL, with its reason): one fault per node event, the per-node analyses' log;
- :func:`read_csv`: the schema's own plain CSV (:data:`~course_lib.incidents.schema.CSV_COLUMNS`);
- :func:`read_lab_events`: the JSON-lines event log the course's labs write (notebooks 07, 10, 11:
  ``t`` wall-clock seconds, ``ev``, ``rank``, ``gen``), one incident per ``inject`` with the stage
  timestamps read from the events that follow it.

Every reader returns an :class:`~course_lib.incidents.schema.IncidentLog` whose ``report`` accounts
for every row; the bad-input rules are in the schema's docstring. A file that is not UTF-8 text (a
binary or compressed file) is a :class:`~course_lib.incidents.schema.LogFormatError` naming the file,
the line of the first bad byte and the format it is not; a log with no rows and no window given is an
:class:`EmptyLogError` (its hint names the ``window=`` argument, :meth:`EmptyLogError.cli_message` the
CLI's ``--window``). :func:`read_log` dispatches on a format name.
"""
from __future__ import annotations

import bisect
import csv
import itertools
import json
import math
import re
from datetime import datetime, timezone
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np

from .schema import CSV_COLUMNS, SECONDS_PER_DAY, STAGES, UNKNOWN, IncidentLog, LogFormatError, ReadReport, default_window

__all__ = ["FORMATS", "read_log", "read_infinitehbd", "write_infinitehbd", "read_sacct", "read_slurm_events", "read_csv",
           "read_lab_events", "expand_hostlist", "parse_time", "SLURM_STATES", "INTERRUPTION_STATES", "NODE_STATES",
           "NODE_FAULT_STATES", "EVENTS_REQUIRED", "EmptyLogError", "MAX_DAYS"]

FORMATS = ("infinitehbd", "sacct", "slurm-events", "csv", "lab")
ERRORS = ("raise", "reject")
#: The largest time in days a log may hold (274 years): a larger one is a unit error (seconds read as
#: days), and would make the window so long that every rate rounds to zero.
MAX_DAYS = 100_000.0
#: What each format is, for the message about a file that is not text.
_WHAT = {"infinitehbd": "the InfiniteHBD trace's JSON", "sacct": "a Slurm sacct --parsable2 export",
         "slurm-events": "a Slurm sacctmgr show event --parsable2 export", "csv": "the course's CSV schema",
         "lab": "a lab's JSON-lines event log"}


def read_log(path, format: str, **options) -> IncidentLog:
    """Read ``path`` in ``format`` (one of :data:`FORMATS`); ``options`` go to that format's reader."""
    readers = {"infinitehbd": read_infinitehbd, "sacct": read_sacct, "slurm-events": read_slurm_events, "csv": read_csv,
               "lab": read_lab_events}
    if format not in readers:
        raise ValueError(f"format must be one of {list(FORMATS)} (got {format!r})")
    return readers[format](path, **options)


class EmptyLogError(ValueError):
    """A log with nothing to rate and no window given: its message says to give ``window=(first day, last day)``.

    ``file`` and ``what`` (what the file holds none of) let the CLI say the same with its own flag
    (:meth:`cli_message`).
    """

    def __init__(self, file, what: str, extra: str = ""):
        self.file, self.what, self.extra = str(file), what, extra
        super().__init__(self._message("window=(first day, last day)"))

    def _message(self, how: str) -> str:
        return f"{Path(self.file).name} holds no {self.what}: give {how}{self.extra} to rate it"

    def cli_message(self) -> str:
        """The same message for the command line: ``--window FIRST_DAY LAST_DAY`` instead of the Python argument."""
        return self._message("--window FIRST_DAY LAST_DAY")


def _not_text(path, format: str, raw: bytes | None = None) -> LogFormatError | None:
    """The error for a file that is not UTF-8 text (None if it is): the line and offset of its first bad byte, and what it is not.

    A byte UTF-8 cannot decode, or a NUL (binary files and UTF-16 exports hold them; text exports never).
    """
    raw = Path(path).read_bytes() if raw is None else raw
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        pos = exc.start
    else:
        pos = raw.find(b"\x00")
        if pos < 0:
            return None
    return LogFormatError(path, raw.count(b"\n", 0, pos) + 1, "(encoding)", f"not a text export of the {format} format "
                          f"({_WHAT[format]}): byte 0x{raw[pos]:02x} at offset {pos:,} cannot be read as UTF-8 text (a binary "
                          f"or compressed file, or UTF-16?)")


def _read_text(path, format: str) -> str:
    """The file's text (UTF-8), or the :func:`_not_text` error."""
    raw = Path(path).read_bytes()
    bad = _not_text(path, format, raw)
    if bad is not None:
        raise bad
    return raw.decode("utf-8")


class _Rows:
    """Malformed-row handling shared by the readers: raise (default) or reject and count."""

    def __init__(self, path, errors: str, report: ReadReport):
        if errors not in ERRORS:
            raise ValueError(f"errors must be one of {list(ERRORS)} (got {errors!r})")
        self.path, self.errors, self.report = Path(path), errors, report

    def bad(self, line, field_name: str, message: str) -> None:
        if self.errors == "raise":
            raise LogFormatError(self.path, line, field_name, message)
        self.report.reject(f"malformed {field_name}", line)


def _cause_part(value, report, line, depth) -> str:
    if isinstance(value, str) and value.strip():
        return value.strip()
    report.note(f"cause missing at depth {depth} (kept as {UNKNOWN!r})", line)
    return UNKNOWN


# ---------------------------------------------------------------------------------- InfiniteHBD
def _json_element_lines(text: str):
    """A function i -> the 1-based line on which the i-th element of the top-level JSON list starts."""
    cache: list = []

    def line_of(i: int):
        if not cache:
            newlines = [m.start() for m in re.finditer("\n", text)]
            depth, starts = 0, []
            for m in re.finditer(r'"(?:[^"\\]|\\.)*"|[\[\]{}]|,|[-\w.+]+', text):
                tok = m.group()
                if tok[0] not in '[]{},':  # a string, a number, true, false, null (NaN, Infinity): an element of its own
                    if depth == 1 and (not starts or starts[-1][1]):
                        starts.append([m.start(), False])
                    continue
                if tok in "[{":
                    if depth == 1 and (not starts or starts[-1][1]):
                        starts.append([m.start(), False])
                    depth += 1
                elif tok in "]}":
                    depth -= 1
                elif tok == "," and depth == 1 and starts:
                    starts[-1][1] = True
            cache.append(([s for s, _ in starts], newlines))
        starts, newlines = cache[0]
        if i >= len(starts):
            return None
        return bisect.bisect_left(newlines, starts[i]) + 1

    return line_of


def read_infinitehbd(path, *, window=None, errors: str = "raise") -> IncidentLog:
    """The InfiniteHBD trace (``fault_trace.json``) as incidents, one per fault.

    Each event is ``node_id`` (a string), ``event_time`` (days, >= 0), ``event_type``
    (``fault_start`` / ``fault_end``) and ``fault_type`` {Level, Class, Desc}. Events are sorted
    by time (noted if they were not); each ``fault_end`` closes its node's open ``fault_start``
    of the same cause, else the node's oldest open one (noted); an end with nothing open is
    rejected; a start never ended stays open (``end`` NaN, noted). window: (first, last) day of
    the observation; default (0, the last event's time): the trace counts days from the start
    of its observation, so day 0 is observed even though its first fault is at day 3.9.
    """
    path = Path(path)
    report = ReadReport(source=str(path))
    rows = _Rows(path, errors, report)
    text = _read_text(path, "infinitehbd")
    line_of = _json_element_lines(text)
    try:
        events = json.loads(text) if text.strip() else []
    except json.JSONDecodeError as exc:
        raise LogFormatError(path, exc.lineno, "(JSON syntax)", exc.msg) from None
    if not isinstance(events, list):
        raise LogFormatError(path, 1, "(top level)", f"must be a JSON list of events (got {type(events).__name__})")
    report.rows_read = len(events)
    kept = []  # (time, order, kind, node, cause, index)
    for i, e in enumerate(events):
        if not isinstance(e, dict):
            rows.bad(line_of(i), "(event)", f"each event must be a JSON object (got {type(e).__name__})")
            continue
        node, t, kind = e.get("node_id"), e.get("event_time"), e.get("event_type")
        if not isinstance(node, str) or not node.strip():
            rows.bad(line_of(i), "node_id", f"must be a non-empty string (got {node!r})")
            continue
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not 0 <= t <= MAX_DAYS:
            rows.bad(line_of(i), "event_time", f"must be a finite number of days >= 0 and at most {MAX_DAYS:,.0f} (274 years: "
                     f"more is a unit error) (got {t!r})")
            continue
        if kind not in ("fault_start", "fault_end"):
            rows.bad(line_of(i), "event_type", f"must be 'fault_start' or 'fault_end' (got {kind!r})")
            continue
        ft = e.get("fault_type")
        if not isinstance(ft, dict):
            if ft is not None:
                rows.bad(line_of(i), "fault_type", f"must be an object with Level, Class, Desc (got {ft!r})")
                continue
            ft = {}
        cause = tuple(_cause_part(ft.get(k), report, line_of(i), k) for k in ("Level", "Class", "Desc"))
        kept.append((float(t), i, kind, node.strip(), cause))
    times = [k[0] for k in kept]
    late = sum(1 for a, b in zip(times, times[1:]) if b < a)
    if late:
        report.note("events out of time order (sorted by time before pairing)", None, late)
        kept.sort(key=lambda k: k[0])
    return _pair(kept, report, path, window, line_of)


def write_infinitehbd(log: IncidentLog, path) -> Path:
    """Write ``log`` in the InfiniteHBD trace's JSON: a ``fault_start`` and (if ended) a ``fault_end`` per incident.

    Events sorted by time (a start before an end at the same time); times as exact floats, so
    :func:`read_infinitehbd` reads the same incidents back (tests/test_incidents_readers.py).
    """
    path = Path(path)
    names = log.node_names
    events = []
    for i in range(len(log)):
        level, cls, desc = log.causes[log.cause[i]]
        ft = {"Level": level, "Class": cls, "Desc": desc}
        events.append((float(log.start[i]), 0, i, {"node_id": str(names[i]), "event_time": float(log.start[i]),
                                                   "event_type": "fault_start", "fault_type": ft}))
        if not np.isnan(log.end[i]):
            events.append((float(log.end[i]), 1, i, {"node_id": str(names[i]), "event_time": float(log.end[i]),
                                                     "event_type": "fault_end", "fault_type": ft}))
    events.sort(key=lambda e: e[:3])
    path.write_text(json.dumps([e[3] for e in events], indent=4) + "\n", encoding="utf-8")
    return path


def _pair(kept, report: ReadReport, path, window, line_of) -> IncidentLog:
    """Pair start/end events per node into incidents (the rules of :func:`read_infinitehbd`)."""
    seen: set = set()
    open_: dict = {}  # node -> list of [start, cause, line]
    starts, ends, nodes, causes = [], [], [], []
    used = 0
    for t, i, kind, node, cause in kept:
        key = (node, kind, t, cause)
        if key in seen:
            report.reject("duplicate event (same node, type, time and cause as an earlier one)", line_of(i))
            continue
        seen.add(key)
        if kind == "fault_start":
            if open_.get(node):
                report.note("fault started while another was open on its node (both kept)", line_of(i))
            open_.setdefault(node, []).append([t, cause])
            used += 1
            continue
        pending = open_.get(node)
        if not pending:
            report.reject("fault_end without an open fault_start on its node", line_of(i))
            continue
        j = next((k for k, p in enumerate(pending) if p[1] == cause), None)
        if j is None:
            j = 0
            report.note("fault_end closed its node's oldest open fault of another cause", line_of(i))
        s, c = pending.pop(j)
        starts.append(s), ends.append(t), nodes.append(node), causes.append(c)
        used += 1
    for node, pending in open_.items():
        for s, c in pending:
            starts.append(s), ends.append(math.nan), nodes.append(node), causes.append(c)
            report.note("fault still open at the end of the log (its repair time is censored)")
    report.rows_used = used
    report.check()
    if window is None:
        if not kept:
            raise EmptyLogError(path, "events")
        window = (0.0, max(k[0] for k in kept))
    return IncidentLog.build(starts, ends, nodes, causes, window=window, source=str(path), format="infinitehbd",
                             report=report)


# ---------------------------------------------------------------------------------- time stamps
def _zone(tz: str):
    if tz in ("UTC", "Z"):
        return timezone.utc
    try:
        return ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"tz must be an IANA time zone name such as 'UTC' or 'Europe/Berlin' (got {tz!r})") from None


def parse_time(text: str, tz="UTC") -> tuple[float, str]:
    """Unix seconds (UTC) of a timestamp and a note ('' or why it is kept with a caveat).

    ``2024-03-30T12:00:00`` (naive: read in ``tz``), ``2024-03-30T12:00:00+02:00`` or ``...Z``
    (its own offset), ``1711800000`` (Unix seconds). ``Unknown``, ``None`` and ``""`` give NaN.
    A naive local time that does not exist in ``tz`` (a daylight-saving gap) raises ValueError;
    an ambiguous one (the repeated hour) is read as the first and noted.
    """
    s = text.strip()
    if s in ("", "Unknown", "None", "N/A"):
        return math.nan, ""
    if re.fullmatch(r"\d{9,11}", s):
        return float(s), ""
    try:
        dt = datetime.fromisoformat(s.replace("Z", "+00:00") if s.endswith("Z") else s)
    except ValueError:
        raise ValueError(f"must be an ISO 8601 time (2024-03-30T12:00:00, with an optional offset) or Unix seconds (got {text!r})") from None
    if dt.tzinfo is not None:
        return dt.timestamp(), ""
    zone = tz if not isinstance(tz, str) else _zone(tz)
    if zone is timezone.utc:
        return dt.replace(tzinfo=timezone.utc).timestamp(), ""
    first, second = dt.replace(tzinfo=zone, fold=0), dt.replace(tzinfo=zone, fold=1)
    back = datetime.fromtimestamp(first.timestamp(), zone).replace(tzinfo=None)
    if back != dt:
        raise ValueError(f"{text!r} does not exist in {getattr(zone, 'key', zone)} (a daylight-saving gap): the export cannot hold it")
    note = "" if first.utcoffset() == second.utcoffset() else f"ambiguous local time in {zone.key} (the repeated hour), read as the first"
    return first.timestamp(), note


def _iso(unix_s: float) -> str:
    return datetime.fromtimestamp(unix_s, timezone.utc).isoformat()


# ---------------------------------------------------------------------------------- Slurm
#: Job states sacct prints (the first word of the State column).
SLURM_STATES = ("BOOT_FAIL", "CANCELLED", "COMPLETED", "DEADLINE", "FAILED", "NODE_FAIL", "OUT_OF_MEMORY", "PENDING",
                "PREEMPTED", "RUNNING", "REQUEUED", "RESIZING", "REVOKED", "SUSPENDED", "TIMEOUT")
#: The states counted as interruptions (the issue's: the node failed, the job failed, the job was requeued).
INTERRUPTION_STATES = ("NODE_FAIL", "FAILED", "REQUEUED")
SACCT_REQUIRED = ("JobID", "State", "Start", "End", "NodeList")


def expand_hostlist(expr: str) -> list[str]:
    """Slurm's hostlist syntax expanded: ``gpu[001-003,7],login1`` -> gpu001, gpu002, gpu003, gpu7, login1."""
    parts, depth, cur = [], 0, ""
    for ch in expr.strip():
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += (ch == "[") - (ch == "]")
        if depth < 0:
            raise ValueError(f"hostlist {expr!r} has an unmatched ']'")
        cur += ch
    if depth:
        raise ValueError(f"hostlist {expr!r} has an unmatched '['")
    parts.append(cur)
    out = []
    for part in (p for p in parts if p):
        m = re.fullmatch(r"([^\[\]]*)\[([^\[\]]+)\](.*)", part)
        if not m:
            if "[" in part or "]" in part:
                raise ValueError(f"hostlist {expr!r}: cannot read {part!r}")
            out.append(part)
            continue
        head, ranges, tail = m.groups()
        for r in ranges.split(","):
            a, _, b = r.partition("-")
            if not a.isdigit() or (b and not b.isdigit()):
                raise ValueError(f"hostlist {expr!r}: range {r!r} must be N or N-M")
            lo, hi = int(a), int(b or a)
            if hi < lo:
                raise ValueError(f"hostlist {expr!r}: range {r!r} runs backwards")
            out += [f"{head}{n:0{len(a)}d}{x}" for n in range(lo, hi + 1) for x in expand_hostlist(tail) or [""]]
    return out


def read_sacct(path, *, tz: str = "UTC", window=None, errors: str = "raise") -> IncidentLog:
    """A ``sacct --parsable2`` export as interruptions (NODE_FAIL, FAILED, REQUEUED rows), with the requeue chain.

    Export it with ``sacct --allusers --duplicates --parsable2 --format
    JobID,State,Start,End,NodeList,ExitCode`` (``--duplicates``, ``-D``: one row per attempt of a
    requeued job; other columns may come too). Job steps (``123.batch``, ``123.0``) are ignored (the
    job's row counts); so are rows in other states (a completed or cancelled job) and jobs that
    never started (Start ``Unknown`` or ``None``).

    The requeue chain: a job's attempts (its rows) in order of Start. One job runs one attempt at a
    time, so an attempt that starts before the previous one ended, or follows one that never ended
    (End ``Unknown``), is malformed (its ``Start``, or the earlier one's ``End``: two jobs under one
    JobID, or a clock step). An interruption's ``start`` is its attempt's End (when Slurm stopped
    it); its ``end`` is the next attempt's Start (the job running again), so ``end - start`` is the
    scheduler's reschedule (requeue, the wait before the job may start again, the allocation); an
    interruption with no later attempt in the log stays open (noted), one without an End is
    rejected. ``node`` is the row's NodeList (Slurm's hostlist, checked): for a job on several nodes
    sacct does not say which one failed (noted; the node events do, :func:`read_slurm_events`). cause
    ("Slurm", State, ExitCode). tz: the time zone of naive times (sacct prints the local time of the
    machine that ran it; see :func:`parse_time`). Days count from the earliest Start; ``origin`` is
    that time in UTC.
    """
    path = Path(path)
    report = ReadReport(source=str(path))
    rows = _Rows(path, errors, report)
    zone = _zone(tz)
    lines = _read_text(path, "sacct").splitlines()
    body = [(n, ln) for n, ln in enumerate(lines, start=1) if ln.strip()]
    if not body:
        if window is None:
            raise EmptyLogError(path, "rows")
        return IncidentLog.build([], [], [], window=window, source=str(path), format="sacct", report=report)
    header_line, header = body[0][0], body[0][1].split("|")
    missing = [c for c in SACCT_REQUIRED if c not in header]
    if missing:
        raise LogFormatError(path, header_line, missing[0], f"column missing from the header (sacct --parsable2 --format must "
                             f"include {', '.join(SACCT_REQUIRED)}; got {', '.join(header)})")
    col = {c: header.index(c) for c in header}
    report.rows_read = len(body) - 1
    jobs: dict = {}  # base job id -> list of attempts
    seen: set = set()
    for n, ln in body[1:]:
        cells = ln.split("|")
        if len(cells) != len(header):
            rows.bad(n, "(row)", f"has {len(cells)} fields, the header {len(header)} (a truncated row, or a field holding a '|'?)")
            continue
        jobid = cells[col["JobID"]].strip()
        if not re.fullmatch(r"\d+(_\d+|_\[[\d\-,%]+\])?(\+\d+)?(\.\w+)?", jobid):
            rows.bad(n, "JobID", f"must be a Slurm job id such as 123, 123_4 or 123.batch (got {jobid!r})")
            continue
        if "." in jobid:
            report.ignore("job step (the job's own row counts)", n)
            continue
        state = cells[col["State"]].strip().split(" ")[0].upper()
        if state not in SLURM_STATES:
            rows.bad(n, "State", f"must be a Slurm job state, one of {', '.join(SLURM_STATES)} (got {cells[col['State']]!r})")
            continue
        exitcode = cells[col["ExitCode"]].strip() if "ExitCode" in col else ""
        if "ExitCode" in col and not re.fullmatch(r"\d+:\d+", exitcode):
            rows.bad(n, "ExitCode", f"must be EXIT:SIGNAL such as 0:0 or 1:9 (got {exitcode!r})")
            continue
        times = _times(rows, report, n, cells, col, ("Start", "End"), zone)
        if times is None:
            continue
        start, end = times
        if math.isnan(start):
            report.ignore("never started (Start is None or Unknown)", n)
            continue
        if not math.isnan(end) and end < start:
            rows.bad(n, "End", f"is before Start ({cells[col['End']]!r} < {cells[col['Start']]!r})")
            continue
        nodelist = cells[col["NodeList"]].strip()
        try:
            hosts = len(expand_hostlist(nodelist))
        except ValueError as exc:
            rows.bad(n, "NodeList", f"must be a Slurm hostlist such as gpu[001-004] ({exc})")
            continue
        key = (jobid, state, start, end, nodelist)
        if key in seen:
            report.reject("duplicate row (same job, state, times and nodes as an earlier one)", n)
            continue
        seen.add(key)
        jobs.setdefault(jobid, []).append({"line": n, "state": state, "start": start, "end": end, "nodes": nodelist,
                                           "hosts": hosts, "exit": exitcode, "Start": cells[col["Start"]].strip(),
                                           "End": cells[col["End"]].strip()})
    chains = {jobid: _chain(jobid, att, rows) for jobid, att in jobs.items()}
    every = [a for chain in chains.values() for a in chain]
    if not every:
        report.check()
        if window is None:
            raise EmptyLogError(path, "job that started")
        return IncidentLog.build([], [], [], window=window, source=str(path), format="sacct", report=report)
    origin = min(a["start"] for a in every)
    last = max(a["start"] if math.isnan(a["end"]) else a["end"] for a in every)
    starts, ends, nodes, causes, job_ids, attempts = [], [], [], [], [], []
    used = 0
    for jobid, chain in chains.items():
        closes_one = set()
        for k, a in enumerate(chain):
            if a["state"] not in INTERRUPTION_STATES:
                continue
            if math.isnan(a["end"]):
                report.reject(f"{a['state']} row without an End time (when did it stop?)", a["line"])
                continue
            nxt = chain[k + 1] if k + 1 < len(chain) else None
            if nxt is None:
                report.note(f"{a['state']} not requeued: no later attempt of the job in the log (restart time open)", a["line"])
            else:
                closes_one.add(k + 1)
            if a["hosts"] > 1:
                report.note("interruption of a job on several nodes: sacct's NodeList names them all, not the one that failed",
                            a["line"])
            starts.append((a["end"] - origin) / SECONDS_PER_DAY)
            ends.append(math.nan if nxt is None else (nxt["start"] - origin) / SECONDS_PER_DAY)
            nodes.append(a["nodes"] or UNKNOWN)
            causes.append(("Slurm", a["state"], f"exit {a['exit']}" if a["exit"] else UNKNOWN))
            job_ids.append(jobid.split("+")[0])
            attempts.append(k)
            used += 1
        for k, a in enumerate(chain):
            if a["state"] in INTERRUPTION_STATES:
                continue
            if k in closes_one:
                used += 1  # the next attempt that ends an interruption (the requeue chain)
            else:
                report.ignore(f"not an interruption (state {a['state']})", a["line"])
    report.rows_used = used
    report.check()
    if window is None:
        window = (0.0, (last - origin) / SECONDS_PER_DAY)
    return IncidentLog.build(starts, ends, nodes, causes, window=window, jobs=job_ids, attempt=attempts, origin=_iso(origin),
                             source=str(path), format="sacct", report=report)


def _times(rows, report, n, cells, col, names, zone):
    """The row's times in Unix seconds (NaN: Unknown/None), or None after a malformed one (reported by ``rows``)."""
    times = []
    for name in names:
        try:
            t, note = parse_time(cells[col[name]], zone)
        except ValueError as exc:
            rows.bad(n, name, str(exc))
            return None
        if note:
            report.note(note, n)
        times.append(t)
    return times


def _chain(jobid, attempts, rows) -> list:
    """One job's attempts in order of Start, each after the previous one ended (an overlap is malformed: see read_sacct)."""
    chain: list = []
    for a in sorted(attempts, key=lambda a: a["start"]):
        while chain:
            p = chain[-1]
            if math.isnan(p["end"]):
                rows.bad(p["line"], "End", f"is {p['End']!r}, yet a later attempt of job {jobid} starts at {a['Start']} (line "
                         f"{a['line']}): an attempt that never ended cannot be followed by another")
                chain.pop()
            elif a["start"] < p["end"]:
                rows.bad(a["line"], "Start", f"is {a['Start']}, before the previous attempt of job {jobid} ended ({p['End']}, line "
                         f"{p['line']}): one job's attempts cannot overlap (two jobs under one JobID, or a clock step?)")
                a = None
                break
            else:
                break
        if a is not None:
            chain.append(a)
    return chain


# ---------------------------------------------------------------------------------- Slurm node events
#: Node states ``sacctmgr show event`` prints (Slurm's compact names, node_state_string_compact), without
#: their flag suffix (``*`` not responding, ``$`` maintenance, ``@`` reboot, ``#`` powering up, ``~`` powered down).
NODE_STATES = ("DOWN", "DRAIN", "DRNG", "FAIL", "FAILG", "MAINT", "BOOT", "CANC_R", "POW_DN", "POW_UP", "ALLOC", "COMP",
               "IDLE", "MIX", "FUTR", "RESV", "NPC", "RESM", "UNK")
#: The node states that are a fault of the node: set DOWN (not responding, or by hand), DRAIN (a health check,
#: an admin) or FAIL; draining (DRNG, FAILG) while a job still runs on it counts the same.
NODE_FAULT_STATES = ("DOWN", "DRAIN", "DRNG", "FAIL", "FAILG")
EVENTS_REQUIRED = ("NodeName", "TimeStart", "TimeEnd", "State")


def read_slurm_events(path, *, tz: str = "UTC", window=None, origin=None, errors: str = "raise") -> IncidentLog:
    """Slurm's node events (``sacctmgr show event --parsable2``) as node faults, one per event.

    Export them with ``sacctmgr show event --parsable2 All_Time Event=Node
    format=Cluster,NodeName,Start,End,State,Reason,User`` (sacctmgr's own default columns; sacctmgr(1),
    "LIST/SHOW EVENT FORMAT OPTIONS"): the header names Start and End ``TimeStart`` and ``TimeEnd``
    (``Start`` and ``End`` are read too); NodeName, TimeStart, TimeEnd and State are required. A row
    is the span a node spent in one state: ``start`` its TimeStart, ``end`` its TimeEnd (``Unknown``:
    still in it when exported, end NaN, noted). States DOWN, DRAIN, DRNG, FAIL, FAILG (with any flag:
    ``DOWN*`` is DOWN and not responding) are faults (:data:`NODE_FAULT_STATES`); other states of
    :data:`NODE_STATES` (maintenance, reboot, power saving) are ignored, an unknown one is malformed. A
    cluster event (no NodeName: the cluster's size changed) is ignored. The next event of a node that
    starts before (or when) its previous one ended continues that fault (DOWN, then DRAIN before the
    node came back): merged into one, noted. A Reason holding a ``|`` (sacctmgr does not escape it) is
    joined back when the row has more fields than the header. cause ("Slurm node", base State, Reason
    or ``Unknown``). tz: the zone of naive times (sacctmgr prints the local time of the machine that
    ran it). Days count from ``origin`` (an ISO 8601 time or Unix seconds: pass the sacct log's
    ``origin`` to put both on one clock), default the earliest TimeStart.
    """
    path = Path(path)
    report = ReadReport(source=str(path))
    rows = _Rows(path, errors, report)
    zone = _zone(tz)
    origin_s = None
    if origin is not None:
        try:
            origin_s = parse_time(str(origin), zone)[0]
        except ValueError as exc:
            raise ValueError(f"origin {exc}") from None
        if math.isnan(origin_s):
            raise ValueError(f"origin must be a time (got {origin!r})")
    lines = _read_text(path, "slurm-events").splitlines()
    body = [(n, ln) for n, ln in enumerate(lines, start=1) if ln.strip()]
    if not body:
        if window is None:
            raise EmptyLogError(path, "rows")
        return IncidentLog.build([], [], [], window=window, source=str(path), format="slurm-events", report=report)
    header_line = body[0][0]
    header = [{"Start": "TimeStart", "End": "TimeEnd"}.get(h.strip(), h.strip()) for h in body[0][1].split("|")]
    missing = [c for c in EVENTS_REQUIRED if c not in header]
    if missing:
        raise LogFormatError(path, header_line, missing[0], f"column missing from the header (sacctmgr show event --parsable2 "
                             f"format= must include NodeName, Start, End, State; got {', '.join(header)})")
    col = {c: header.index(c) for c in header}
    report.rows_read = len(body) - 1
    kept, seen = [], set()
    for n, ln in body[1:]:
        cells = ln.split("|")
        if len(cells) > len(header) and "Reason" in col:  # a reason with a '|' in it
            r, extra = col["Reason"], len(cells) - len(header)
            cells = cells[:r] + ["|".join(cells[r:r + extra + 1])] + cells[r + extra + 1:]
            report.note("Reason holding a '|' (joined back)", n)
        if len(cells) != len(header):
            rows.bad(n, "(row)", f"has {len(cells)} fields, the header {len(header)} (a truncated row?)")
            continue
        node = cells[col["NodeName"]].strip()
        if not node:
            report.ignore("cluster event (no NodeName: the cluster's size changed, not a node fault)", n)
            continue
        raw_state = cells[col["State"]].strip()
        state = raw_state.upper().rstrip("*$@#~+")
        if state not in NODE_STATES:
            rows.bad(n, "State", f"must be a Slurm node state, one of {', '.join(NODE_STATES)} with an optional flag * $ @ # ~ "
                     f"(got {raw_state!r})")
            continue
        times = _times(rows, report, n, cells, col, ("TimeStart", "TimeEnd"), zone)
        if times is None:
            continue
        start, end = times
        if math.isnan(start):
            rows.bad(n, "TimeStart", f"is {cells[col['TimeStart']].strip()!r}: every node event has its start")
            continue
        if not math.isnan(end) and end < start:
            rows.bad(n, "TimeEnd", f"is before TimeStart ({cells[col['TimeEnd']].strip()!r} < {cells[col['TimeStart']].strip()!r})")
            continue
        if state not in NODE_FAULT_STATES:
            report.ignore(f"not a node fault (state {state})", n)
            continue
        reason = cells[col["Reason"]].strip() if "Reason" in col else ""
        key = (node, state, start)
        if key in seen:
            report.reject("duplicate event (same node, state and start as an earlier one)", n)
            continue
        seen.add(key)
        kept.append({"line": n, "node": node, "state": state, "start": start, "end": end, "reason": reason or UNKNOWN})
    faults: list = []
    last_of: dict = {}
    for e in sorted(kept, key=lambda e: (e["node"], e["start"])):
        p = last_of.get(e["node"])
        if p is not None and (math.isnan(p["end"]) or e["start"] <= p["end"]):
            report.note("event continuing its node's previous fault (merged into one fault)", e["line"])
            p["end"] = math.nan if math.isnan(e["end"]) or math.isnan(p["end"]) else max(p["end"], e["end"])
            continue
        last_of[e["node"]] = dict(e)
        faults.append(last_of[e["node"]])
    for f in faults:
        if math.isnan(f["end"]):
            report.note("node still down or drained at the end of the export (its repair time is censored)", f["line"])
    report.rows_used = len(kept)
    report.check()
    if not faults:
        if window is None:
            raise EmptyLogError(path, "node fault (DOWN, DRAIN or FAIL event)")
        return IncidentLog.build([], [], [], window=window, source=str(path), format="slurm-events", report=report)
    if origin_s is None:
        origin_s = min(f["start"] for f in faults)
    day = lambda t: (t - origin_s) / SECONDS_PER_DAY  # noqa: E731
    return IncidentLog.build([day(f["start"]) for f in faults], [day(f["end"]) for f in faults], [f["node"] for f in faults],
                             [("Slurm node", f["state"], f["reason"]) for f in faults], window=window, origin=_iso(origin_s),
                             source=str(path), format="slurm-events", report=report)


# ---------------------------------------------------------------------------------- the schema's CSV
def _meta_lines(lines):
    meta, k = {}, 0
    while k < len(lines) and lines[k].lstrip().startswith("#"):
        key, sep, value = lines[k].lstrip()[1:].partition(":")
        if sep:
            meta[key.strip()] = value.strip()
        k += 1
    return meta, k


def read_csv(path, *, tz: str = "UTC", window=None, errors: str = "raise") -> IncidentLog:
    """The schema's plain CSV (columns :data:`~course_lib.incidents.schema.CSV_COLUMNS`; start and node required).

    Times are numbers (days since the log's day 0) or ISO 8601 timestamps (naive ones in
    ``tz``), one kind per file. Leading ``# key: value`` lines may give ``window_start``,
    ``window_end`` (days) and ``origin``. An empty level / class / desc is ``Unknown`` (noted);
    a row identical to an earlier one is rejected; rows need not be in time order.
    """
    path = Path(path)
    report = ReadReport(source=str(path))
    rows = _Rows(path, errors, report)
    zone = _zone(tz)
    try:
        with open(path, encoding="utf-8", newline="") as fh:
            head = []
            for line in fh:  # the leading '# key: value' lines, then the CSV itself, streamed to the csv module
                if not line.lstrip().startswith("#"):
                    head.append(line)
                    break
                head.append(line)
            meta, skip = _meta_lines([h.rstrip("\r\n") for h in head])
            records = list(csv.reader(itertools.chain(head[skip:], fh)))
    except (UnicodeDecodeError, csv.Error):
        raise _not_text(path, "csv") or LogFormatError(path, None, "(CSV syntax)", "cannot be read as CSV") from None
    if window is None and ("window_start" in meta or "window_end" in meta):
        try:
            window = (float(meta["window_start"]), float(meta["window_end"]))
        except (KeyError, ValueError):
            raise LogFormatError(path, skip, "window_start/window_end", "both must be given, as numbers of days") from None
    if not records:
        raise LogFormatError(path, skip + 1, "(header)", f"the header line is missing (columns: {', '.join(CSV_COLUMNS)})")
    header = [h.strip() for h in records[0]]
    for h in header:
        if h not in CSV_COLUMNS:
            raise LogFormatError(path, skip + 1, h, f"unknown column; the schema's columns are {', '.join(CSV_COLUMNS)}")
    for need in ("start", "node"):
        if need not in header:
            raise LogFormatError(path, skip + 1, need, "required column missing")
    body = records[1:]
    if body and all(len(r) == len(header) for r in body) and all(map(any, body)):
        report.rows_read = len(body)
        fast = _csv_fast(path, header, body, skip + 2, report, window, meta)
        if fast is not None:
            return fast
        report = ReadReport(source=str(path))  # the row-by-row read starts its report afresh
        rows = _Rows(path, errors, report)
    data = [(skip + 2 + k, r) for k, r in enumerate(body) if any(c.strip() for c in r)]
    report.rows_read = len(data)
    good = []
    for n, r in data:
        if len(r) != len(header):
            rows.bad(n, "(row)", f"has {len(r)} fields, the header {len(header)}")
            continue
        good.append((n, [c.strip() for c in r]))
    time_cols = [c for c in header if c in ("start", "end") + STAGES]
    kind = _time_kind(path, good, header, time_cols)
    origin_s = None
    if kind == "iso":
        origin_s = parse_time(meta["origin"], zone)[0] if "origin" in meta else None
    parsed, seen = [], set()
    for n, r in good:
        rec = dict(zip(header, r))
        vals, bad = {}, False
        for c in time_cols:
            v = rec[c]
            try:
                if v == "":
                    vals[c] = math.nan
                elif kind == "days":
                    vals[c] = float(v)
                    if not abs(vals[c]) <= MAX_DAYS:
                        raise ValueError(f"must be a finite number of days, at most {MAX_DAYS:,.0f} (274 years) from day 0 (got {v!r})")
                else:
                    vals[c], note = parse_time(v, zone)
                    if note:
                        report.note(note, n)
            except ValueError as exc:
                rows.bad(n, c, str(exc) if "must" in str(exc) or "exist" in str(exc) else f"must be a number of days (got {v!r})")
                bad = True
                break
        if bad:
            continue
        if math.isnan(vals["start"]):
            rows.bad(n, "start", "is empty: every incident needs its start")
            continue
        if not rec["node"]:
            rows.bad(n, "node", "is empty: every incident needs its node (the id as the log spells it)")
            continue
        if "end" in vals and not math.isnan(vals["end"]) and vals["end"] < vals["start"]:
            rows.bad(n, "end", f"is before start ({rec['end']!r} < {rec['start']!r})")
            continue
        att = rec.get("attempt", "") or "0"
        if not att.isdigit():
            rows.bad(n, "attempt", f"must be a whole number >= 0 (got {att!r})")
            continue
        key = tuple(r)
        if key in seen:
            report.reject("duplicate row (identical to an earlier one)", n)
            continue
        seen.add(key)
        cause = tuple(_cause_part(rec.get(d, ""), report, n, d) for d in ("level", "class", "desc"))
        parsed.append((n, vals, rec["node"], cause, rec.get("job") or None, int(att)))
    report.rows_used = len(parsed)
    report.check()
    starts = [p[1]["start"] for p in parsed]
    late = sum(1 for a, b in zip(starts, starts[1:]) if b < a)
    if late:
        report.note("rows out of time order (sorted by start)", None, late)
    if kind == "iso":
        every = [v for p in parsed for v in p[1].values() if not math.isnan(v)]
        if origin_s is None:
            if not every:
                origin_s = 0.0
            else:
                origin_s = min(every)
        conv = lambda x: (x - origin_s) / SECONDS_PER_DAY  # noqa: E731
    else:
        conv = lambda x: x  # noqa: E731
    col = lambda c: [conv(p[1][c]) if c in p[1] else math.nan for p in parsed]  # noqa: E731
    stages = {c: col(c) for c in STAGES if c in header}
    if window is None and not parsed:
        raise EmptyLogError(path, "rows", " (or '# window_start:' lines)")
    return IncidentLog.build(col("start"), col("end"), [p[2] for p in parsed], [p[3] for p in parsed], window=window,
                             jobs=[p[4] for p in parsed], attempt=[p[5] for p in parsed], stages=stages,
                             origin=_iso(origin_s) if kind == "iso" else meta.get("origin"), source=str(path), format="csv",
                             report=report)


def _csv_fast(path, header, body, first_line: int, report: ReadReport, window, meta):
    """The vectorized read of a clean CSV of numbers of days (None: not clean, read it row by row instead).

    Same result and same report as the row-by-row path; any cell that path would reject or refuse
    (a time that is not a number, an empty start or node, an end before its start, a bad attempt, a
    duplicate row) sends the file there, which names the line and the field.
    """
    cols = {h: np.array(c, dtype=str) for h, c in zip(header, zip(*body))}
    n = len(body)
    if any(np.any(np.char.strip(a) != a) for a in cols.values()):
        return None  # cells padded with spaces: the row-by-row path strips them
    if len(set(map(tuple, body))) != n:
        return None
    vals = {}
    for c in [h for h in header if h in ("start", "end") + STAGES]:
        a = cols[c]
        empty = a == ""
        try:
            v = np.where(empty, "nan", a).astype(np.float64)
        except ValueError:
            return None
        if not np.all(np.abs(v[~empty]) <= MAX_DAYS):
            return None
        vals[c] = v
    start = vals["start"]
    end = vals.get("end", np.full(n, np.nan))
    if np.isnan(start).any() or (cols["node"] == "").any() or np.any(end < start):
        return None
    attempt = np.zeros(n, np.int64)
    if "attempt" in cols:
        a = np.where(cols["attempt"] == "", "0", cols["attempt"])
        if not np.char.isdigit(a).all():
            return None
        attempt = a.astype(np.int64)
    parts = []
    for d in ("level", "class", "desc"):
        a = cols.get(d, np.full(n, "", dtype=str)).astype(object)
        missing = a == ""
        if missing.any():
            report.note(f"cause missing at depth {d} (kept as {UNKNOWN!r})", first_line + int(np.argmax(missing)), int(missing.sum()))
            a[missing] = UNKNOWN
        parts.append(a.astype(str))
    key = np.char.add(np.char.add(np.char.add(parts[0], "\x1f"), np.char.add(parts[1], "\x1f")), parts[2])
    vocab, cause = np.unique(key, return_inverse=True)
    nodes, node = np.unique(cols["node"], return_inverse=True)
    job_col = cols.get("job", np.full(n, "", dtype=str))
    jobs = np.unique(job_col[job_col != ""])
    job = np.where(job_col == "", -1, np.searchsorted(jobs, job_col))
    late = int(np.sum(start[1:] < start[:-1]))
    if late:
        report.note("rows out of time order (sorted by start)", None, late)
    report.rows_used = n
    report.check()
    return IncidentLog.from_codes(start, end, node, tuple(nodes.tolist()), cause, tuple(tuple(v.split("\x1f")) for v in vocab.tolist()),
                                  window=default_window(start, end) if window is None else window, job=job,
                                  jobs=tuple(jobs.tolist()), attempt=attempt, stages={c: vals[c] for c in STAGES if c in vals},
                                  origin=meta.get("origin"), source=str(path), format="csv", report=report)


def _time_kind(path, good, header, time_cols) -> str:
    """'days' or 'iso': the kind of every time cell of the file (a mix is an error naming the first odd cell)."""
    kind = None
    for n, r in good:
        for c, v in zip(header, r):
            if c not in time_cols or v == "":
                continue
            try:
                float(v)
                k = "days"
            except ValueError:
                k = "iso"
            if kind is None:
                kind = k
            elif k != kind:
                raise LogFormatError(path, n, c, f"mixes a {'number of days' if k == 'days' else 'timestamp'} into a file of "
                                     f"{'numbers of days' if kind == 'days' else 'timestamps'}: use one kind of time per file")
    return kind or "days"


# ---------------------------------------------------------------------------------- lab event logs
def read_lab_events(path, *, errors: str = "raise") -> IncidentLog:
    """A lab run's JSON-lines event log as one incident per injected failure, with its stage timestamps.

    The format the labs write (notebook 07): one JSON object per line with ``t`` (wall-clock
    seconds), ``ev`` (event name), ``rank`` (-1: the launcher's agent) and ``gen`` (the worker
    generation). For an ``inject`` in generation g at time t, the stages are read from what
    follows: ``detected`` the launcher's ``agent_noticed`` of generation g (the moment the
    restart machinery knows), else the learned detector's ``hang_detected``, else a peer's
    ``noticed``; ``torn_down`` the agent's first ``agent_stopped`` after that; ``rendezvous``,
    ``loaded`` and ``first_step`` the moment every rank of the next generation that loaded a state (g + 1, unless an extra rendezvous round came between) has logged its first
    ``pg_ready``, ``state_loaded`` and ``step_done``; ``progress_regained`` the moment every one of
    them has completed again the step done before the failure (the inject's ``progress``; the
    load itself when the checkpoint already holds it). ``end`` is ``progress_regained``. node: the
    event's ``node`` if it names one, else ``rank N``; cause ("Injected", kind, kind). A torn last
    line (a run cut short mid-write) is rejected; a malformed line elsewhere is an error.
    """
    path = Path(path)
    report = ReadReport(source=str(path))
    rows = _Rows(path, errors, report)
    # One record per line, each optionally led by RFC 7464's record separator (the lab kit's
    # writer, course_lib.labkit.events, puts one before every record): split on newlines only
    # (str.splitlines would also split at the separator) and drop it.
    raw = _read_text(path, "lab").split("\n")
    lines = [(n, ln.lstrip("\x1e")) for n, ln in enumerate(raw, start=1) if ln.strip("\x1e \t\r")]
    report.rows_read = len(lines)
    events = []
    for k, (n, ln) in enumerate(lines):
        try:
            e = json.loads(ln)
        except json.JSONDecodeError as exc:
            if k == len(lines) - 1:
                report.reject("torn last line (the run was cut short while writing it)", n)
                continue
            rows.bad(n, "(JSON syntax)", exc.msg)
            continue
        if not isinstance(e, dict):
            rows.bad(n, "(event)", "each line must be a JSON object")
            continue
        t, ev, rank, gen = e.get("t"), e.get("ev"), e.get("rank"), e.get("gen")
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t):
            rows.bad(n, "t", f"must be wall-clock seconds (got {t!r})")
            continue
        if not isinstance(ev, str) or not ev:
            rows.bad(n, "ev", f"must be the event's name (got {ev!r})")
            continue
        if isinstance(rank, bool) or not isinstance(rank, int) or isinstance(gen, bool) or not isinstance(gen, int):
            rows.bad(n, "rank" if not isinstance(rank, int) or isinstance(rank, bool) else "gen", "must be an integer")
            continue
        events.append(dict(e, _line=n))
    events.sort(key=lambda e: e["t"])
    if not events:
        raise ValueError(f"{path.name} holds no lab events: nothing to read")
    t0 = events[0]["t"]
    used: set = set()
    starts, ends, nodes, causes, stage_cols = [], [], [], [], {s: [] for s in STAGES}
    for inj in (e for e in events if e["ev"] == "inject"):
        g, t = inj["gen"], inj["t"]
        used.add(inj["_line"])
        later = [e for e in events if e["t"] >= t]
        stamps = dict.fromkeys(STAGES, math.nan)
        det = None
        for name in ("agent_noticed", "hang_detected", "noticed"):  # the restart machinery's notice first, a peer's last
            det = det or next((e for e in later if e["ev"] == name and e["gen"] == g), None)
        if det is not None:
            stamps["detected"] = det["t"]
            used.add(det["_line"])
            stop = next((e for e in later if e["ev"] == "agent_stopped" and e["t"] >= det["t"]), None)
            if stop is not None:
                stamps["torn_down"] = stop["t"]
                used.add(stop["_line"])
        # the generation that restarted from it: the next one that loaded a state (usually g + 1; an
        # extra rendezvous round in between, one that never loaded, is skipped)
        g_next = min((e["gen"] for e in later if e["ev"] == "state_loaded" and e["gen"] > g), default=g + 1)
        nxt = [e for e in later if e["gen"] == g_next and e["rank"] >= 0]
        ranks = sorted({e["rank"] for e in nxt if e["ev"] == "pg_ready"})

        def all_ranks(ev, cond=lambda e: True):
            hits = []
            for r in ranks:
                e = next((x for x in nxt if x["ev"] == ev and x["rank"] == r and cond(x)), None)
                if e is None:
                    return math.nan
                hits.append(e)
            for e in hits:
                used.add(e["_line"])
            return max(e["t"] for e in hits) if hits else math.nan

        if ranks:
            stamps["rendezvous"] = all_ranks("pg_ready")
            stamps["loaded"] = all_ranks("state_loaded")
            stamps["first_step"] = all_ranks("step_done")
            pre = int(inj.get("progress", 0) or 0)
            resumed = [e.get("step", 0) for e in nxt if e["ev"] == "state_loaded"]
            stamps["progress_regained"] = (stamps["loaded"] if resumed and min(resumed) >= pre
                                           else all_ranks("step_done", lambda e: e.get("step", -1) >= pre))
        kind = str(inj.get("kind") or UNKNOWN)
        node = inj.get("node")
        starts.append(t)
        ends.append(stamps["progress_regained"])
        nodes.append(str(node) if node else f"rank {inj['rank']}")
        causes.append(("Injected", kind, kind))
        for s in STAGES:
            stage_cols[s].append(stamps[s])
        if math.isnan(stamps["progress_regained"]):
            report.note("failure whose restart never regained its progress in the log (end open)", inj["_line"])
    n_used = len(used)
    report.rows_used = n_used
    for e in events:
        if e["_line"] not in used:
            report.ignore("lab event that marks no failure and no stage boundary", e["_line"])
    report.check()
    day = lambda x: (np.asarray(x, dtype=float) - t0) / SECONDS_PER_DAY  # noqa: E731
    window = (0.0, (events[-1]["t"] - t0) / SECONDS_PER_DAY)
    return IncidentLog.build(day(starts), day(ends), nodes, causes, window=window, stages={s: day(v) for s, v in stage_cols.items()},
                             origin=_iso(t0), source=str(path), format="lab", report=report)
