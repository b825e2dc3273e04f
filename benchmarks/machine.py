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
