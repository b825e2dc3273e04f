"""Loaders for ``data/``: every file is checked against ``data/MANIFEST.csv`` before use.

The MANIFEST records, per file, its sha256, its label (P: read in the primary text,
Q: a quote seen only in secondary copies, cited "as reported"; D: arithmetic derived from P/Q
inputs; assumption: the course's own judgement, never a source), its units and its source.
Sources are cited as ``[@key]``, a key of ``data/sources.csv`` (rendered as ``SOURCES.md``).
A file whose checksum does not match raises :class:`ChecksumError` naming the file, so a
silently edited number can never reach a notebook. Notebook 01 explains the tables; every
notebook loads through here.

Run ``python -m course_lib.data --update`` after deliberately changing or adding a file
(the new file needs its MANIFEST row first: label, units, source).
"""
from __future__ import annotations

import csv
import functools
import hashlib
import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = [
    "DATA_DIR",
    "ChecksumError",
    "Table",
    "manifest",
    "sha256",
    "verify",
    "load_table",
    "llama3_table5",
    "failure_logs",
    "restart_stages",
    "SourcedValue",
    "sourced",
    "sources",
    "CITATION",
    "MODES",
    "BOUNDS",
    "failure_modes",
    "mode_shares",
    "restart_ranges",
    "training_step",
    "resolve_refs",
]

#: How the course cites a source: ``[@key]`` (several: ``[@key1; @key2]``), a key of data/sources.csv.
CITATION = "[@key]"

DATA_DIR = Path(os.environ.get("COURSE_DATA_DIR", Path(__file__).resolve().parent.parent / "data"))
MANIFEST_NAME = "MANIFEST.csv"


class ChecksumError(ValueError):
    """A data file does not match the sha256 recorded in the MANIFEST."""


@dataclass(frozen=True)
class Table:
    """A typed table: ``columns`` maps name -> numpy array (float/int) or tuple of str.

    ``rows`` gives the same data as dicts; ``meta`` is the file's MANIFEST row
    (label, units, source).
    """

    name: str
    columns: dict
    meta: dict

    def __getitem__(self, column: str):
        return self.columns[column]

    def __len__(self) -> int:
        first = next(iter(self.columns.values()))
        return len(first)

    @functools.cached_property
    def rows(self) -> list[dict]:
        """The rows as dicts (computed once per table; treat them as read-only)."""
        names = list(self.columns)
        return [{k: _scalar(self.columns[k][i]) for k in names} for i in range(len(self))]

    def where(self, column: str, value) -> "Table":
        """The rows whose ``column`` equals ``value``."""
        mask = [v == value for v in self.columns[column]]
        cols = {}
        for k, v in self.columns.items():
            if isinstance(v, np.ndarray):
                cols[k] = v[np.array(mask, dtype=bool)]
            else:
                cols[k] = tuple(x for x, m in zip(v, mask) if m)
        return Table(self.name, cols, self.meta)


def _scalar(x):
    return x.item() if isinstance(x, np.generic) else x


def sha256(path: Path) -> str:
    """Hex sha256 of a file's bytes."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def manifest(data_dir: Path | None = None) -> dict[str, dict]:
    """The MANIFEST as {file: {sha256, label, units, source}}."""
    data_dir = Path(data_dir or DATA_DIR)
    with open(data_dir / MANIFEST_NAME, newline="") as fh:
        return {row["file"]: row for row in csv.DictReader(fh)}


#: Verified reads of data files in this process (benchmarks/answer_bench.py counts them).
READS = {"verified": 0}


def verify(name: str, data_dir: Path | None = None) -> dict:
    """Check ``name`` against the MANIFEST and return its MANIFEST row.

    Raises ChecksumError (naming the file) when the file is not listed or its sha256
    differs from the recorded one.
    """
    data_dir = Path(data_dir or DATA_DIR)
    READS["verified"] += 1
    rows = manifest(data_dir)
    if name not in rows:
        raise ChecksumError(f"data file {name!r} is not listed in {data_dir / MANIFEST_NAME}")
    expected = rows[name]["sha256"]
    actual = sha256(data_dir / name)
    if actual != expected:
        raise ChecksumError(
            f"data file {name!r} does not match its MANIFEST checksum "
            f"(expected {expected[:12]}..., found {actual[:12]}...): it was edited without updating "
            "the MANIFEST; restore it or run `python -m course_lib.data --update` if the change is deliberate"
        )
    return rows[name]


def _convert(values: list[str]):
    """Typed column: int array, float array (empty cells -> nan) or tuple of str."""
    nonempty = [v for v in values if v.strip() != ""]
    try:
        if nonempty and len(nonempty) == len(values) and all(float(v).is_integer() and "." not in v for v in values):
            return np.array([int(v) for v in values], dtype=np.int64)
    except ValueError:
        pass
    try:
        if nonempty:
            return np.array([float(v) if v.strip() != "" else math.nan for v in values], dtype=float)
    except ValueError:
        pass
    return tuple(values)


def load_table(name: str, data_dir: Path | None = None) -> Table:
    """Verify and load a CSV file from data/ as a typed :class:`Table`, its ``ref`` cells resolved.

    A file with a ``ref`` column holds a number that another data/ file already holds as a
    reference to it (one row per measurement); :func:`resolve_refs` fills it in here, so
    every reader sees the number and no file repeats it.
    """
    folder = _folder(data_dir)
    path = folder / name
    try:
        stat = path.stat()
        manifest_stat = (folder / MANIFEST_NAME).stat()
    except OSError:
        stat = manifest_stat = None
    if stat is None:  # let verify() name the missing file
        return _load_table(name, folder)
    key = (str(path), stat.st_mtime_ns, stat.st_size, manifest_stat.st_mtime_ns, manifest_stat.st_size)
    table = _CACHE.get(key)
    if table is None:
        table = _load_table(name, folder)
        _CACHE[key] = table
    return table


def _folder(data_dir) -> Path:
    """``data_dir`` (None: data/) resolved; an absolute one resolved once per process (relative: each call, the cwd may move)."""
    raw = data_dir or DATA_DIR
    hit = _FOLDERS.get(raw) if isinstance(raw, (str, Path)) else None
    if hit is None:
        hit = Path(raw).resolve()
        if Path(raw).is_absolute():
            _FOLDERS[raw] = hit
    return hit


_FOLDERS: dict = {}  # {absolute data_dir as given: resolved Path}


#: Loaded tables by (path, mtime, size, MANIFEST mtime, size): each file is verified once per
#: process and reloaded (and verified again) whenever it or the MANIFEST changes on disk.
_CACHE: dict = {}


def _load_table(name: str, data_dir: Path) -> Table:
    table = _read_table(name, data_dir)
    if "ref" in table.columns:
        table = resolve_refs(table, data_dir)
    for v in table.columns.values():
        if isinstance(v, np.ndarray):
            v.flags.writeable = False  # one cached table is shared by every reader
    return table


def _read_table(name: str, data_dir: Path | None = None) -> Table:
    data_dir = Path(data_dir or DATA_DIR)
    meta = verify(name, data_dir)
    with open(data_dir / name, newline="") as fh:
        reader = csv.DictReader(fh)
        raw = {k: [] for k in reader.fieldnames}
        for row in reader:
            for k in raw:
                raw[k].append(row[k])
    return Table(name=name, columns={k: _convert(v) for k, v in raw.items()}, meta=meta)


@dataclass(frozen=True)
class SourcedValue:
    """One number from data/: value in ``unit``, what it means (basis), where it comes from."""

    key: str
    value: float
    unit: str
    basis: str
    source: str
    label: str

    @property
    def minutes(self) -> float:
        """The value converted to minutes (only for time units: ms, s, min, h)."""
        from .units import to_minutes

        return to_minutes(self.value, self.unit)


_VALUE_UNITS = {"bandwidth_gb_per_s": "GB/s", "blocking_s": "s"}


def sourced(name: str, key: str = "key", data_dir: Path | None = None, value: str = "value") -> dict[str, SourcedValue]:
    """The rows of a data/ file as {row key: :class:`SourcedValue`} (the one reader of sourced numbers).

    key: the column that names a row; value: the column that holds its number (rows where it
    is empty are left out). The unit is the row's ``unit`` column, or the one the value
    column's name implies (``bandwidth_gb_per_s`` -> GB/s, ``blocking_s`` -> s).
    """
    table = load_table(name, data_dir)
    memo = (id(table), key, value)
    hit = _SOURCED.get(memo)
    if hit is not None and hit[0] is table:
        return dict(hit[1])
    out = {}
    for r in table.rows:
        v = r[value]
        if isinstance(v, str) or v is None or (isinstance(v, float) and math.isnan(v)):
            continue
        unit = r.get("unit") or _VALUE_UNITS.get(value, "")
        out[r[key]] = SourcedValue(r[key], float(v), unit, r.get("basis", ""), r.get("source", ""), r.get("label", ""))
    _SOURCED[memo] = (table, out)
    return dict(out)


_SOURCED: dict = {}  # {(id(table), key, value): (table, {row: SourcedValue})}: the cached table's rows, read once


def llama3_table5(data_dir: Path | None = None) -> Table:
    """Llama 3 Table 5: component, category, count, printed_percent (419 unexpected interruptions)."""
    return load_table("llama3_table5.csv", data_dir)


def failure_logs(data_dir: Path | None = None) -> Table:
    """Public failure logs (Llama 3, Meta RSC, BLOOM, OPT, MegaScale) with counts, periods, what was counted, sources."""
    return load_table("failure_logs.csv", data_dir)


def restart_stages(data_dir: Path | None = None) -> Table:
    """Sourced typical durations of the restart stages (detect, reload), with their sources."""
    return load_table("restart_stages.csv", data_dir)


def sources(data_dir: Path | None = None) -> Table:
    """The course's bibliography: one row per primary source, by citation ``key`` (SOURCES.md renders it)."""
    return load_table("sources.csv", data_dir)


#: Failure modes of data/failure_modes.csv: a process exits; no exit (seen only at a timeout); the
#: node and its memory are gone; silent data corruption.
MODES = ("crash", "hang", "host_loss", "sdc")
#: The bounds of every uncertain share or range.
BOUNDS = ("low", "central", "high")
_SECONDS_PER = {"s": 1.0, "min": 60.0, "h": 3600.0}


def failure_modes(data_dir: Path | None = None) -> Table:
    """Llama 3 Table 5 components mapped to failure modes, with low/central/high shares per mode.

    Columns: ``component``, ``mode_central``, ``<mode>_share_<bound>`` for every mode in
    :data:`MODES` and bound in :data:`BOUNDS`, ``basis``, ``source``, ``label`` (``P`` where
    the component's name states the mode, ``assumption`` where the mapping is the course's
    judgement). Validated on load: exactly the components of :func:`llama3_table5`, every share
    in [0, 1] with low <= central <= high, central shares summing to 1 per component, and a
    ``mode_central`` that is the component's largest central share. A violation raises
    ValueError naming the component and the column.
    """
    t = load_table("failure_modes.csv", data_dir)
    t5 = llama3_table5(data_dir)
    if _CHECKED.get(id(t)) is t:
        return t
    if sorted(t["component"]) != sorted(t5["component"]) or len(set(t["component"])) != len(t):
        raise ValueError("failure_modes.csv: components must be exactly those of llama3_table5.csv, once each")
    for row in t.rows:
        comp = row["component"]
        for m in MODES:
            lo, c, hi = (float(row[f"{m}_share_{b}"]) for b in BOUNDS)
            if not 0.0 <= lo <= c <= hi <= 1.0:
                raise ValueError(f"failure_modes.csv, {comp!r}: {m}_share_low/central/high must satisfy "
                                 f"0 <= low <= central <= high <= 1 (got {lo}, {c}, {hi})")
        central = {m: float(row[f"{m}_share_central"]) for m in MODES}
        if not math.isclose(sum(central.values()), 1.0, abs_tol=1e-9):
            raise ValueError(f"failure_modes.csv, {comp!r}: central shares must sum to 1 (got {sum(central.values()):g})")
        if row["mode_central"] != max(central, key=central.get):
            raise ValueError(f"failure_modes.csv, {comp!r}: mode_central must be the largest central share "
                             f"({max(central, key=central.get)!r}), got {row['mode_central']!r}")
    _CHECKED[id(t)] = t
    return t


_CHECKED: dict = {}  # tables already validated (each cached table once)


def mode_shares(data_dir: Path | None = None) -> dict[str, dict[str, float]]:
    """Fleet-wide share of each failure mode, ``{mode: {"low": .., "central": .., "high": ..}}``.

    Each component's shares weighted by its Table 5 count (never by the printed percentage):
    ``share_k = sum_c count_c * share_{c,k} / sum_c count_c``. The central shares sum to 1; the
    low and high of one mode are that mode's bounds (each taken with every component at its own
    bound), not a mix that sums to 1.
    """
    t = failure_modes(data_dir)
    t5 = llama3_table5(data_dir)
    memo = _SHARES.get((id(t), id(t5)))
    if memo is not None and memo[0] is t and memo[1] is t5:
        return {m: dict(v) for m, v in memo[2].items()}
    counts = dict(zip(t5["component"], t5["count"].tolist()))
    total = float(sum(counts.values()))
    out = {}
    for m in MODES:
        out[m] = {b: sum(counts[r["component"]] * float(r[f"{m}_share_{b}"]) for r in t.rows) / total for b in BOUNDS}
    _SHARES[(id(t), id(t5))] = (t, t5, out)
    return {m: dict(v) for m, v in out.items()}


_SHARES: dict = {}


def resolve_refs(table: Table, data_dir: Path | None = None) -> Table:
    """Fill the empty number of every row whose ``ref`` names the row that already holds it.

    ``ref`` is ``file:row`` or ``file:row:column`` (the row of ``data/<file>`` whose first column
    equals ``row``, and its ``column``, default ``value``), filling this row's ``value``; or
    ``target=file:row:column`` to fill this row's column ``target`` (files with several number
    columns, like write_costs.csv). A number that already lives in data/ is referenced, never
    copied. Raises ValueError naming the ref when it does not resolve, when the row also
    carries that number, or when the units disagree. :func:`load_table` calls it.
    """
    refs = table["ref"]
    cols = {k: (np.array(v, dtype=float) if isinstance(v, np.ndarray) else list(v)) for k, v in table.columns.items()}
    cache: dict[str, Table] = {}
    for i, ref in enumerate(refs):
        ref = str(ref).strip()
        if not ref:
            if "value" in cols and isinstance(cols["value"], np.ndarray) and math.isnan(cols["value"][i]):
                raise ValueError(f"{table.name}, row {i + 2}: value is empty and there is no ref")
            continue
        target_col, _, spec = ref.rpartition("=")
        target_col = target_col or "value"
        parts = spec.split(":")
        if len(parts) not in (2, 3):
            raise ValueError(f"{table.name}: ref {ref!r} must be file:row, file:row:column or column=file:row:column")
        fname, key, column = parts[0], parts[1], parts[2] if len(parts) == 3 else "value"
        col = cols.get(target_col)
        if col is None:
            raise ValueError(f"{table.name}: ref {ref!r} fills a column {target_col!r} the file does not have")
        if not isinstance(col, np.ndarray):  # an all-empty column is read as text
            col = np.array([math.nan if str(x).strip() == "" else float(x) for x in col], dtype=float)
        if not math.isnan(col[i]):
            raise ValueError(f"{table.name}: ref {ref!r} and a value; keep the number in one place")
        if fname not in cache:
            cache[fname] = load_table(fname, data_dir)
        target = cache[fname]
        first = next(iter(target.columns))
        hits = [r for r in target.rows if str(r[first]) == key]
        if len(hits) != 1 or column not in hits[0]:
            raise ValueError(f"{table.name}: ref {ref!r} does not name one row and column of {fname}")
        if "unit" in hits[0] and column == "value" and "unit" in cols and hits[0]["unit"] != cols["unit"][i]:
            raise ValueError(f"{table.name}: ref {ref!r} is in {hits[0]['unit']!r}, the row says {cols['unit'][i]!r}")
        col[i] = float(hits[0][column])
        cols[target_col] = col
    return Table(table.name, {k: (tuple(v) if isinstance(v, list) else v) for k, v in cols.items()}, table.meta)


def restart_ranges(data_dir: Path | None = None) -> Table:
    """Sourced detection, restart, reload and rewind measurements per stage and mode (refs resolved).

    One row per measurement (``key``, ``stage``, ``mode``, ``setting``, ``range_role``, ``value``,
    ``unit``, ``ref``, ``what``, ``basis``, ``source``, ``label``); a number that already lives in
    another data/ file is a ``ref`` to it, resolved here. Adds ``value_s``: the value in seconds
    for time units (s, min, h), nan for the others (bandwidths, sizes, multiples, counts).
    """
    t = load_table("restart_ranges.csv", data_dir)
    per = np.array([_SECONDS_PER.get(u, math.nan) for u in t["unit"]])
    cols = dict(t.columns)
    cols["value_s"] = t["value"] * per
    return Table(t.name, cols, t.meta)


def training_step(data_dir: Path | None = None) -> Table:
    """Step-time inputs (Llama 3 Table 4), checkpoint bytes per parameter and reported ETTR (refs resolved)."""
    return load_table("training_step.csv", data_dir)


def update_manifest(data_dir: Path | None = None) -> list[str]:
    """Rewrite the sha256 column of the MANIFEST from the files on disk; return changed names."""
    data_dir = Path(data_dir or DATA_DIR)
    path = data_dir / MANIFEST_NAME
    with open(path, newline="") as fh:
        reader = csv.DictReader(fh)
        fields = reader.fieldnames
        rows = list(reader)
    changed = []
    for row in rows:
        digest = sha256(data_dir / row["file"])
        if row["sha256"] != digest:
            row["sha256"] = digest
            changed.append(row["file"])
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    unlisted = sorted(p.name for p in data_dir.iterdir() if p.is_file() and p.name != MANIFEST_NAME and p.name not in {r["file"] for r in rows} and not p.name.startswith("."))
    if unlisted:
        raise SystemExit(f"files in data/ without a MANIFEST row (add label, units, source first): {unlisted}")
    return changed


if __name__ == "__main__":  # pragma: no cover - maintenance entry
    import sys

    if sys.argv[1:] == ["--update"]:
        print("updated:", update_manifest() or "nothing")
    else:
        for name in manifest():
            verify(name)
        print("all data files match the MANIFEST")
