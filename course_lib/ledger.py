"""The course's answer table (the ledger): each notebook adds the numbers it establishes.

Notebooks call :func:`record` for their key results. The entries live in the running
kernel and, when the environment variable ``COURSE_LEDGER`` names a JSON file (``make
course`` sets it), are also appended there so that the runner can print the whole answer
when every notebook has run. Values are always computed by course_lib, never typed.

One quantity has one key in every notebook (notebooks 03, 08 and 09 all record
``after_levers_pct``), and each notebook's entry is kept: :func:`disagreements` lists the
keys whose notebooks disagree, which for one Scenario must be none (tests/papermill checks
it for several scenarios; ``make course`` prints it).
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass
from pathlib import Path

ENV_VAR = "COURSE_LEDGER"


@dataclass(frozen=True)
class Entry:
    notebook: str
    key: str
    label: str
    value: float
    unit: str
    fmt: str = ".3g"

    def formatted(self) -> str:
        return format(self.value, self.fmt)


_entries: dict[str, Entry] = {}


def record(notebook: str, key: str, label: str, value: float, unit: str = "", fmt: str = ".3g") -> Entry:
    """Add (or replace) one result of a notebook in the answer table and return it."""
    entry = Entry(notebook=notebook, key=key, label=label, value=float(value), unit=unit, fmt=fmt)
    _entries[f"{notebook}:{key}"] = entry
    path = os.environ.get(ENV_VAR)
    if path:
        p = Path(path)
        stored = _read(p)
        stored[f"{notebook}:{key}"] = asdict(entry)
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_suffix(p.suffix + ".tmp")
        tmp.write_text(json.dumps(stored, indent=1))
        os.replace(tmp, p)
    return entry


def _read(path: Path) -> dict:
    if path.exists():
        return json.loads(path.read_text())
    return {}


def entries(path: str | os.PathLike | None = None) -> list[Entry]:
    """Entries of this kernel, or of a ledger file when ``path`` is given, in notebook order."""
    if path is None:
        items = list(_entries.values())
    else:
        items = [Entry(**d) for d in _read(Path(path)).values()]
    order = {nb: i for i, nb in enumerate(dict.fromkeys(e.notebook for e in items))}
    return sorted(items, key=lambda e: (e.notebook.split("-")[0], order[e.notebook]))


def disagreements(items: list[Entry] | None = None, rel_tol: float = 1e-9) -> dict[str, dict[str, float]]:
    """{key: {notebook: value}} for every key that notebooks recorded with different values."""
    items = entries() if items is None else items
    by_key: dict[str, dict[str, float]] = {}
    for e in items:
        by_key.setdefault(e.key, {})[e.notebook] = e.value
    out = {}
    for key, values in by_key.items():
        vals = list(values.values())
        if any(not math.isclose(v, vals[0], rel_tol=rel_tol, abs_tol=1e-15) for v in vals[1:]):
            out[key] = values
    return out


def table(items: list[Entry] | None = None) -> str:
    """The answer table as aligned plain text (what ``make course`` prints), one row per key.

    A key recorded by several notebooks is shown once with their numbers (``03 08 09``);
    if they disagree, every value is shown and the row is marked ``DISAGREE``.
    """
    items = entries() if items is None else items
    if not items:
        return "(the answer table is empty)"
    bad = disagreements(items)
    rows = [("notebook", "result", "value", "unit")]
    seen: dict[str, list[Entry]] = {}
    for e in items:
        seen.setdefault(e.key, []).append(e)
    for key, group in seen.items():
        nbs = " ".join(dict.fromkeys(g.notebook.split("-")[0] for g in group))
        first = group[0]
        if key in bad:
            rows.append((nbs, first.label + "  DISAGREE", " / ".join(g.formatted() for g in group), first.unit))
        else:
            rows.append((nbs if len(group) > 1 else first.notebook, first.label, first.formatted(), first.unit))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = []
    for j, r in enumerate(rows):
        lines.append("  ".join(c.ljust(w) if i != 2 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip())
        if j == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def clear() -> None:
    """Forget this kernel's entries (the file, if any, is left alone)."""
    _entries.clear()
