"""Units at the edges: the one place where a number a person types or reads changes unit.

Inside course_lib every time is in **minutes** (fields and arguments end in ``_min``; losses
are minutes per day, ``*_minutes_per_day``), every rate in failures per **GPU-day**, every
size in **bytes**. Numbers arrive in other units only at the edges: a data file's ``unit``
column, a CLI flag, a slider in milliseconds, a printed table in seconds. Those edges call
:func:`to_minutes` / :func:`from_minutes` and nothing else converts.
"""
from __future__ import annotations

from ._validate import check_choice

__all__ = ["MINUTES_PER_DAY", "HOURS_PER_DAY", "MINUTES_PER_UNIT", "to_minutes", "from_minutes"]

HOURS_PER_DAY = 24
MINUTES_PER_DAY = HOURS_PER_DAY * 60

#: Minutes in one of each time unit the course's data, flags and screens use.
MINUTES_PER_UNIT = {"ms": 1.0 / 60_000.0, "s": 1.0 / 60.0, "min": 1.0, "h": 60.0, "day": float(MINUTES_PER_DAY)}


def to_minutes(value: float, unit: str) -> float:
    """``value`` in ``unit`` (ms, s, min, h, day) as minutes."""
    return float(value) * MINUTES_PER_UNIT[check_choice("unit", unit, MINUTES_PER_UNIT)]


def from_minutes(minutes: float, unit: str) -> float:
    """``minutes`` expressed in ``unit`` (ms, s, min, h, day)."""
    return float(minutes) / MINUTES_PER_UNIT[check_choice("unit", unit, MINUTES_PER_UNIT)]
