"""The incident log's schema: one row per interruption or node fault (notebook 13).

A practitioner's log, whatever wrote it (a cluster's fault tracker, Slurm's accounting, a
lab's event log), comes down to the same few fields, and :class:`IncidentLog` holds them as
columns (numpy arrays, one entry per incident):

============================ ==========================================================================
field                        meaning
============================ ==========================================================================
``start``                    when the fault began or the job was interrupted (days since ``origin``)
``end``                      when the node was repaired and back, or the job running again (days);
                             NaN: still open when the log ends (the repair time is *censored*)
``node``                     the node (an index into ``nodes``, the ids as the log spells them;
                             for Slurm, the job's NodeList: sacct does not say which node failed)
``cause``                    an index into ``causes``, each a (level, class, desc) triple: the cause at
                             whatever depth the log knows it (``UNKNOWN`` where it is silent)
``job``                      an index into ``jobs`` (Slurm's JobID; -1: none) and ``attempt``, the
                             requeue count (0 for the first run)
stage timestamps (optional)  ``detected``, ``torn_down``, ``rendezvous``, ``loaded``, ``first_step``,
                             ``progress_regained`` (days; NaN where the log does not say): the moments a
                             restart passes (:data:`STAGES`); :func:`stage_seconds` turns them into the
                             course's four stages
============================ ==========================================================================

The log also carries its observation ``window`` (days: the exposure of a rate is the fleet
times its length), its ``origin`` (an ISO 8601 time of day 0 where the log has absolute
times), the ``source`` file and a :class:`ReadReport`: every row read is **used**, **ignored**
(read and not an incident by design: a job step, a completed job, a lab event that marks no
stage) or **rejected** (it should have been one and could not be used), each kind with its
reason and the first line it happened on, and the **notes** on rows kept with a caveat.
Nothing is dropped silently.

How the readers (:mod:`course_lib.incidents.readers`) handle bad input:

- a malformed row (a field missing, not a number, a time that does not parse, a negative
  time, an unknown event type or job state): :class:`LogFormatError` naming the file, the
  line and the field (``errors="reject"``: the row is rejected instead, reason ``malformed
  <field>``);
- a ``fault_end`` without an open ``fault_start`` on its node: rejected (no start, so no fault
  to count and no repair time);
- a fault never ended: kept, counted in every rate, with ``end`` NaN; its repair time is
  censored (a lower bound), which the repair statistics use as such (Kaplan-Meier);
- duplicate events (the same node, type, time and cause as an earlier row): the later one is
  rejected;
- events out of time order: kept and sorted by time before faults are paired (noted);
- a zero-length log (no rows): an empty log; a rate then needs the window given, and gives 0
  with its upper bound; a window of no length is a ``ValueError``;
- an unknown cause (a level, class or description missing): kept as ``UNKNOWN`` at that depth
  (noted); a class the course's table does not list counts as an interruption of unknown mode
  (:mod:`course_lib.incidents.policy`);
- Slurm times: a time with an offset (``+02:00``, ``Z``) is honoured, a naive one is read in the
  export's time zone (``tz``, an IANA name; default UTC), an integer is Unix seconds; a local
  time that does not exist (a daylight-saving gap) is malformed, an ambiguous one (the hour
  repeated in autumn) is read as the first and noted.

Pure numpy; no plotting here.
"""
from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field, fields
from pathlib import Path

import numpy as np

__all__ = ["STAGES", "STAGE_BOUNDS", "UNKNOWN", "LogFormatError", "ReadReport", "IncidentLog", "stage_seconds",
           "write_csv", "CSV_COLUMNS"]

#: The optional stage timestamps of a restart, in the order a restart passes them.
STAGES = ("detected", "torn_down", "rendezvous", "loaded", "first_step", "progress_regained")
#: The course's four restart stages (notebook 03) as (from, to) timestamps of the schema.
STAGE_BOUNDS = {"detect": ("start", "detected"), "reschedule": ("detected", "rendezvous"),
                "reload": ("rendezvous", "loaded"), "rewind": ("loaded", "progress_regained")}
#: How a cause the log does not give is spelled (at any of its three depths).
UNKNOWN = "Unknown"
SECONDS_PER_DAY = 86_400.0


class LogFormatError(ValueError):
    """A malformed row: names the file, the line (1-based) and the field."""

    def __init__(self, file, line, field_name: str, message: str):
        self.file, self.line, self.field = str(file), line, field_name
        where = f"{Path(self.file).name}, line {line}" if line is not None else Path(self.file).name
        super().__init__(f"{where}, field {field_name}: {message}")


@dataclass
class ReadReport:
    """What a reader did with every row: used, ignored (by design), rejected (with reasons), notes."""

    source: str = ""
    rows_read: int = 0
    rows_used: int = 0
    ignored: dict = field(default_factory=dict)   # {reason: rows}
    rejected: dict = field(default_factory=dict)  # {reason: rows}
    notes: dict = field(default_factory=dict)     # {caveat: incidents or rows kept with it}
    first_line: dict = field(default_factory=dict)  # {reason: first line it happened on}

    def _add(self, table: dict, reason: str, line=None, n: int = 1) -> None:
        table[reason] = table.get(reason, 0) + n
        if line is not None:
            self.first_line.setdefault(reason, line)

    def ignore(self, reason: str, line=None, n: int = 1) -> None:
        self._add(self.ignored, reason, line, n)

    def reject(self, reason: str, line=None, n: int = 1) -> None:
        self._add(self.rejected, reason, line, n)

    def note(self, reason: str, line=None, n: int = 1) -> None:
        self._add(self.notes, reason, line, n)

    @property
    def rows_ignored(self) -> int:
        return sum(self.ignored.values())

    @property
    def rows_rejected(self) -> int:
        return sum(self.rejected.values())

    def check(self) -> None:
        """Every row is accounted for: read = used + ignored + rejected (a reader's bug otherwise: RuntimeError)."""
        if self.rows_read != self.rows_used + self.rows_ignored + self.rows_rejected:
            raise RuntimeError(f"rows unaccounted for in {self.source}: " + self.text())

    def lines(self) -> list[str]:
        """The report as lines of text (the CLI and notebook 13 print them)."""
        out = [f"rows read {self.rows_read:,}: used {self.rows_used:,}, ignored {self.rows_ignored:,}, "
               f"rejected {self.rows_rejected:,}"]
        for title, table in (("ignored", self.ignored), ("rejected", self.rejected), ("note", self.notes)):
            for reason, n in sorted(table.items(), key=lambda kv: -kv[1]):
                line = self.first_line.get(reason)
                out.append(f"  {title}: {n:,} x {reason}" + (f" (first at line {line})" if line is not None else ""))
        return out

    def text(self) -> str:
        return "\n".join(self.lines())

    def as_dict(self) -> dict:
        return {"source": self.source, "rows_read": self.rows_read, "rows_used": self.rows_used,
                "rows_ignored": self.rows_ignored, "rows_rejected": self.rows_rejected,
                "ignored": dict(self.ignored), "rejected": dict(self.rejected), "notes": dict(self.notes)}


def _f64(x) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(x, dtype=np.float64))


def _i64(x) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(x, dtype=np.int64))


@dataclass(frozen=True, eq=False)
class IncidentLog:
    """The incidents of one log as columns (see the module doc for the fields).

    Build one with :meth:`build` (which validates and sorts by start) or through a reader.
    ``len(log)`` is the number of incidents; :meth:`where` keeps a subset of them.
    """

    start: np.ndarray
    end: np.ndarray
    node: np.ndarray
    nodes: tuple
    cause: np.ndarray
    causes: tuple
    window: tuple
    job: np.ndarray
    jobs: tuple = ()
    attempt: np.ndarray | None = None
    stages: dict = field(default_factory=dict)
    origin: str | None = None
    source: str = ""
    format: str = ""
    report: ReadReport = field(default_factory=ReadReport)

    # ----- construction -----
    @classmethod
    def build(cls, start, end, node_names, causes=None, *, window=None, jobs=None, attempt=None, stages=None,
              origin=None, source="", format="", report=None) -> "IncidentLog":
        """An :class:`IncidentLog` from per-incident values (any order; sorted by start, stably).

        start, end: days (end NaN: open). node_names: one id per incident (strings). causes:
        one (level, class, desc) per incident (None: unknown). window: (first day, last day)
        of the observation; None: (0, the latest start or end) when the log is not empty.
        jobs: one job id per incident or None. stages: {stage: days per incident}.
        """
        start, end = _f64(start), _f64(end)
        n = start.size
        if start.ndim != 1 or end.shape != start.shape:
            raise ValueError(f"start and end must be 1-D and of equal length (got {start.shape} and {end.shape})")
        if not np.all(np.isfinite(start)):
            raise ValueError("start must hold finite times (days)")
        if np.any(np.isinf(end)):
            raise ValueError("end must hold finite times or NaN (open)")
        bad = np.flatnonzero(end < start)
        if bad.size:
            raise ValueError(f"end must be >= start for every incident (incident {int(bad[0])}: start {start[bad[0]]!r}, end {end[bad[0]]!r})")
        names = list(node_names)
        if len(names) != n:
            raise ValueError(f"node_names must hold one id per incident ({n}), got {len(names)}")
        nodes, node = (np.unique(np.asarray(names, dtype=str), return_inverse=True) if n else (np.array([], dtype=str), np.zeros(0, np.int64)))
        triples = [(UNKNOWN, UNKNOWN, UNKNOWN)] * n if causes is None else [tuple(c) for c in causes]
        if len(triples) != n or any(len(c) != 3 for c in triples):
            raise ValueError("causes must hold one (level, class, desc) triple per incident")
        vocab, cause = _codes(triples)
        job_names = [None] * n if jobs is None else list(jobs)
        if len(job_names) != n:
            raise ValueError(f"jobs must hold one job id (or None) per incident ({n}), got {len(job_names)}")
        job_vocab = tuple(sorted({j for j in job_names if j is not None}))
        index = {j: i for i, j in enumerate(job_vocab)}
        job = _i64([index[j] if j is not None else -1 for j in job_names])
        att = _i64(np.zeros(n) if attempt is None else attempt)
        st = {}
        for k, v in (stages or {}).items():
            if k not in STAGES:
                raise ValueError(f"stages must be named from {STAGES} (got {k!r})")
            arr = _f64(v)
            if arr.shape != start.shape:
                raise ValueError(f"stage {k} must hold one time (or NaN) per incident")
            st[k] = arr
        window = _window(default_window(start, end) if window is None else window)
        order = np.argsort(start, kind="stable")
        log = cls(start=start[order], end=end[order], node=_i64(node)[order], nodes=tuple(str(x) for x in nodes),
                  cause=cause[order], causes=vocab, window=window, job=job[order], jobs=job_vocab, attempt=att[order],
                  stages={k: v[order] for k, v in st.items()}, origin=origin, source=str(source), format=format,
                  report=report if report is not None else ReadReport(source=str(source)))
        return log

    @classmethod
    def from_codes(cls, start, end, node, nodes, cause, causes, *, window, job=None, jobs=(), attempt=None, stages=None,
                   origin=None, source="", format="", report=None) -> "IncidentLog":
        """An :class:`IncidentLog` from integer codes (fast: no string work; the synthetic generator's path).

        node: an index into ``nodes`` per incident; cause: an index into ``causes``. Sorted by start.
        """
        start, end, node, cause = _f64(start), _f64(end), _i64(node), _i64(cause)
        if not (start.shape == end.shape == node.shape == cause.shape) or start.ndim != 1:
            raise ValueError("start, end, node and cause must be 1-D and of equal length")
        if start.size and (node.min() < 0 or node.max() >= len(nodes) or cause.min() < 0 or cause.max() >= len(causes)):
            raise ValueError("node and cause must index into nodes and causes")
        if np.any(end < start):
            raise ValueError("end must be >= start for every incident")
        order = np.argsort(start, kind="stable")
        n = start.size
        job = np.full(n, -1, np.int64) if job is None else _i64(job)
        attempt = np.zeros(n, np.int64) if attempt is None else _i64(attempt)
        if job.shape != start.shape or attempt.shape != start.shape or (n and (job.min() < -1 or job.max() >= len(jobs))):
            raise ValueError("job and attempt must hold one value per incident, job indexing into jobs (-1: none)")
        st = {k: _f64(v) for k, v in (stages or {}).items()}
        if any(k not in STAGES or v.shape != start.shape for k, v in st.items()):  # before sorting: a short stage
            raise ValueError(f"stages must be named from {STAGES}, one time (or NaN) per incident")
        st = {k: v[order] for k, v in st.items()}
        return cls(start=start[order], end=end[order], node=node[order], nodes=tuple(nodes), cause=cause[order],
                   causes=tuple(tuple(c) for c in causes), window=_window(window), job=job[order], jobs=tuple(jobs),
                   attempt=attempt[order], stages=st, origin=origin, source=str(source), format=format,
                   report=report if report is not None else ReadReport(source=str(source)))

    def __post_init__(self):
        _window(self.window)

    # ----- size and parts -----
    def __len__(self) -> int:
        return int(self.start.size)

    @property
    def days(self) -> float:
        """Length of the observation window in days."""
        return self.window[1] - self.window[0]

    @property
    def open(self) -> np.ndarray:
        """True where the incident had not ended when the log ends."""
        return np.isnan(self.end)

    @property
    def duration_days(self) -> np.ndarray:
        """end - start (days): the repair or restart time; NaN where open."""
        return self.end - self.start

    def cause_part(self, depth: str) -> np.ndarray:
        """Per incident, its cause's ``level``, ``class`` or ``desc`` (a string array)."""
        i = {"level": 0, "class": 1, "desc": 2}[depth]
        vocab = np.array([c[i] for c in self.causes] or [""], dtype=str)
        return vocab[self.cause] if len(self) else np.array([], dtype=str)

    @property
    def node_names(self) -> np.ndarray:
        return np.array(self.nodes, dtype=str)[self.node] if len(self) else np.array([], dtype=str)

    def where(self, mask) -> "IncidentLog":
        """The incidents where ``mask`` is true (same window, vocabularies, report)."""
        m = np.asarray(mask, dtype=bool)
        if m.shape != self.start.shape:
            raise ValueError(f"mask must hold one bool per incident ({len(self)}), got shape {m.shape}")
        return IncidentLog(start=self.start[m], end=self.end[m], node=self.node[m], nodes=self.nodes, cause=self.cause[m],
                           causes=self.causes, window=self.window, job=self.job[m], jobs=self.jobs,
                           attempt=None if self.attempt is None else self.attempt[m],
                           stages={k: v[m] for k, v in self.stages.items()}, origin=self.origin, source=self.source,
                           format=self.format, report=self.report)

    def with_window(self, window) -> "IncidentLog":
        """The same incidents observed over another window (days)."""
        w = _window(window)
        if len(self) and (self.start.min() < w[0] or self.start.max() > w[1]):
            raise ValueError(f"window must contain every start (starts span {self.start.min():g} to {self.start.max():g} days, got {w})")
        return IncidentLog(**{f.name: getattr(self, f.name) for f in fields(self) if f.name != "window"}, window=w)

    def equals(self, other: "IncidentLog") -> bool:
        """Same incidents, bit for bit (times, node ids, causes, jobs, stages, window)."""
        def same(a, b):
            return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=a.dtype.kind == "f")
        return (len(self) == len(other) and self.window == other.window
                and same(self.start, other.start) and same(self.end, other.end)
                and np.array_equal(self.node_names, other.node_names)
                and [self.causes[c] for c in self.cause] == [other.causes[c] for c in other.cause]
                and [self.jobs[j] if j >= 0 else None for j in self.job] == [other.jobs[j] if j >= 0 else None for j in other.job]
                and same(self.attempt, other.attempt)
                and set(self.stages) == set(other.stages) and all(same(self.stages[k], other.stages[k]) for k in self.stages))


def default_window(start, end) -> tuple:
    """(0 or the earliest start if negative, the latest start or end): the window of a log that does not state one."""
    start, end = _f64(start), _f64(end)
    if start.size == 0:
        raise ValueError("window must be given for a log with no incidents: a rate needs the days it covers")
    return (min(0.0, float(start.min())), float(np.nanmax(np.concatenate([start, end]))))


def _codes(triples):
    vocab = tuple(sorted(set(triples)))
    index = {c: i for i, c in enumerate(vocab)}
    return vocab, _i64([index[c] for c in triples])


def _window(window) -> tuple:
    try:
        lo, hi = (float(x) for x in window)
    except (TypeError, ValueError):
        raise ValueError(f"window must be a pair (first day, last day) of numbers (got {window!r})") from None
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        raise ValueError(f"window must be a pair (first day, last day) with last > first: a log of no length has no rate (got {window!r})")
    return (lo, hi)


def stage_seconds(log: IncidentLog) -> dict[str, np.ndarray]:
    """The course's four restart stages per incident, in seconds (NaN where a bound is missing).

    detect: start -> detected; reschedule: detected -> rendezvous (teardown, process start,
    rendezvous, communicator); reload: rendezvous -> loaded; rewind: loaded -> progress regained
    (the work redone). Notebook 07 measures the same boundaries; they add up to start -> progress
    regained.
    """
    def t(name):
        if name == "start":
            return log.start
        return log.stages.get(name, np.full(len(log), np.nan))
    return {k: (t(b) - t(a)) * SECONDS_PER_DAY for k, (a, b) in STAGE_BOUNDS.items()}


#: The plain CSV's columns (start and node required; the rest optional), in the order written.
CSV_COLUMNS = ("start", "end", "node", "level", "class", "desc", "job", "attempt") + STAGES


def write_csv(log: IncidentLog, path) -> Path:
    """Write ``log`` as the schema's plain CSV (times in days, exact: ``repr`` of each float).

    Comment lines at the top carry the window (and the origin); ``read_csv`` reads it back bit
    for bit (tests/test_incidents_readers.py).
    """
    path = Path(path)
    with open(path, "w", newline="") as fh:
        fh.write(f"# window_start: {log.window[0]!r}\n# window_end: {log.window[1]!r}\n")
        if log.origin:
            fh.write(f"# origin: {log.origin}\n")
        w = csv.writer(fh, lineterminator="\n")
        cols = [c for c in CSV_COLUMNS if c not in STAGES or c in log.stages]
        w.writerow(cols)
        def times(arr):
            return ["" if x != x else repr(x) for x in arr.tolist()]  # NaN (open) is written empty

        jobs = np.array(list(log.jobs) + [""], dtype=object)  # index -1 -> ""
        column = {"start": times(log.start), "end": times(log.end), "node": log.node_names.tolist(),
                  "level": log.cause_part("level").tolist(), "class": log.cause_part("class").tolist(),
                  "desc": log.cause_part("desc").tolist(), "job": jobs[log.job].tolist(),
                  "attempt": [str(a) for a in log.attempt.tolist()]}
        column.update({k: times(v) for k, v in log.stages.items()})
        w.writerows(zip(*(column[c] for c in cols)))
    return path
