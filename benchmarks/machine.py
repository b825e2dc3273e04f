"""The machine a benchmark ran on, recorded beside its table (shared by the benchmark scripts).

``course_lib.checkpoint.bench.machine_info`` adds the disk and torch details the checkpoint
tables need; the scripts here add their own library versions through ``extra``.
"""
from __future__ import annotations

import datetime as dt
import os
import platform
from pathlib import Path

import numpy as np


def proc_field(path: str, key: str) -> str | None:
    """The value after ``key:`` on the first matching line of a /proc file, or None."""
    try:
        for line in Path(path).read_text().splitlines():
            if line.startswith(key):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def machine(**extra) -> dict:
    """CPU model, cores (all and usable), memory, 1-minute load average now, versions, date."""
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        usable = os.cpu_count()
    mem = proc_field("/proc/meminfo", "MemTotal")
    info = {
        "cpu": proc_field("/proc/cpuinfo", "model name") or "unknown",
        "cores": os.cpu_count(),
        "cores_usable": usable,
        "memory_GiB": round(int(mem.split()[0]) / 2**20, 1) if mem else None,
        "load_average_1min": round(os.getloadavg()[0], 2),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "date": dt.date.today().isoformat(),
    }
    info.update(extra)
    return info


def shown_command(script: str, argv: list) -> str:
    """The command line a table records: the script and its options, without ``--out DIR`` (where
    the files went is not part of what was measured)."""
    shown = list(argv)
    if "--out" in shown:
        i = shown.index("--out")
        del shown[i:i + 2]
    return " ".join([f"python {script}", *shown])


def write_tables(out: Path, stem: str, payload: dict, rows: list, markdown_text: str) -> None:
    """Write ``out/stem.json`` (the payload), ``out/stem.csv`` (the rows) and ``out/stem.md``."""
    import csv
    import json

    out.mkdir(parents=True, exist_ok=True)
    (out / f"{stem}.json").write_text(json.dumps(payload, indent=1))
    with open(out / f"{stem}.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    (out / f"{stem}.md").write_text(markdown_text)
