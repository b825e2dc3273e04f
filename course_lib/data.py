"""Loaders for ``data/``: every file is checked against ``data/MANIFEST.csv`` before use.

The MANIFEST records, per file, its sha256, the facts.md label (P: read in the primary text,
Q: quoted as reported, D: derived), its units and its source. A file whose checksum does
not match raises :class:`ChecksumError` naming the file, so a silently edited number can
never reach a notebook. Notebook 01 explains the tables; every notebook loads through here.

Run ``python -m course_lib.data --update`` after deliberately changing or adding a file
(the new file needs its MANIFEST row first: label, units, source).
"""
from __future__ import annotations

import csv
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
]

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

    @property
    def rows(self) -> list[dict]:
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


def verify(name: str, data_dir: Path | None = None) -> dict:
    """Check ``name`` against the MANIFEST and return its MANIFEST row.

    Raises ChecksumError (naming the file) when the file is not listed or its sha256
    differs from the recorded one.
    """
    data_dir = Path(data_dir or DATA_DIR)
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
    """Verify and load a CSV file from data/ as a typed :class:`Table`."""
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
    out = {}
    for r in load_table(name, data_dir).rows:
        v = r[value]
        if isinstance(v, str) or v is None or (isinstance(v, float) and math.isnan(v)):
            continue
        unit = r.get("unit") or _VALUE_UNITS.get(value, "")
        out[r[key]] = SourcedValue(r[key], float(v), unit, r.get("basis", ""), r.get("source", ""), r.get("label", ""))
    return out


def llama3_table5(data_dir: Path | None = None) -> Table:
    """Llama 3 Table 5: component, category, count, printed_percent (419 unexpected interruptions)."""
    return load_table("llama3_table5.csv", data_dir)


def failure_logs(data_dir: Path | None = None) -> Table:
    """Public failure logs (facts.md section 3) with counts, periods, what was counted, sources."""
    return load_table("failure_logs.csv", data_dir)


def restart_stages(data_dir: Path | None = None) -> Table:
    """Sourced typical durations of the restart stages (facts.md section 6)."""
    return load_table("restart_stages.csv", data_dir)


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
