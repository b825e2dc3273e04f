"""benchmarks/results/mutation.md is current: each row names the module version it measured (issue 37).

The mutation score is a measurement, made outside `make test` (../shared/tools/mutate.py takes minutes a module). A
row is only true of the module it measured, so each row records the commit it was measured at and the git blob of
the module there. This test fails when a module has changed since its row (its blob today differs), so a change to a
model module is remeasured before it lands; and it re-adds each row's arithmetic.
"""
from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "benchmarks" / "results" / "mutation.md"
ROW = re.compile(r"^\| (?P<module>[a-z_/]+\.py) \| (?P<tests>tests/[a-z_0-9]+\.py) \| (?P<mutants>\d+) \| (?P<caught>\d+)[^|]* \| "
                 r"\*\*(?P<score>[0-9.]+) %\*\* \| (?P<when>[^|]+) \| (?P<commit>[0-9a-f]{7,40}) \| (?P<blob>[0-9a-f]{12}) \|$")
#: modules that must have a row (issue 37 asked for the incident readers and report to be measured)
REQUIRED = {"incidents/readers.py", "incidents/report.py", "uncertainty.py", "restart.py", "interval.py", "simulate.py"}


def git_blob(data: bytes) -> str:
    """The id git gives a file's content (sha1 of 'blob <size>\\0' and the bytes): no git needed to compute it."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _rows() -> list[dict]:
    lines = TABLE.read_text().splitlines()
    start = lines.index(next(x for x in lines if x.startswith("| module | test file")))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        m = ROW.match(line)
        assert m, f"a row of the summary table does not have the expected columns: {line}"
        rows.append(m.groupdict())
    return rows


def test_git_blob_is_gits_own_id():
    # known ids: the empty file, and "hello\n" (git hash-object on each)
    assert git_blob(b"") == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
    assert git_blob(b"hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a"


def test_every_row_measured_the_module_as_it_is_now():
    rows = _rows()
    assert rows and len({r["module"] for r in rows}) == len(rows), "one row per module"
    stale = []
    for r in rows:
        path = ROOT / "course_lib" / r["module"]
        assert path.is_file(), r["module"]
        assert (ROOT / r["tests"]).is_file(), r["tests"]
        if not git_blob(path.read_bytes()).startswith(r["blob"]):
            stale.append(r["module"])
    assert not stale, (f"changed since their mutation row, remeasure them with ../shared/tools/mutate.py and update "
                       f"benchmarks/results/mutation.md: {stale}")


def test_the_required_modules_have_rows():
    assert REQUIRED <= {r["module"] for r in _rows()}


def test_each_score_is_its_counts_and_at_least_90_percent():
    for r in _rows():
        mutants, caught, score = int(r["mutants"]), int(r["caught"]), float(r["score"])
        assert 0 < caught <= mutants, r["module"]
        assert score == round(100 * caught / mutants, 1), r["module"]
        assert score >= 90.0, r["module"]


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="needs the git history")
def test_each_rows_blob_is_the_module_at_its_commit():
    for r in _rows():
        out = subprocess.run(["git", "-C", str(ROOT), "rev-parse", f"{r['commit']}:course_lib/{r['module']}"],
                             capture_output=True, text=True)
        if out.returncode and "unknown revision" in out.stderr:  # a shallow clone lacks the commit: nothing to compare
            continue
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip().startswith(r["blob"]), (r["module"], r["commit"])
