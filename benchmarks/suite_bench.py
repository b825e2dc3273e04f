#!/usr/bin/env python
"""Benchmark: how long `make test` takes from a fresh clone, install included, stage by stage (issue 37).

    .venv/bin/python benchmarks/suite_bench.py                 # one run on the machine as it is
    .venv/bin/python benchmarks/suite_bench.py --burners 2     # the same beside two CPU burners (a loaded machine)

It clones the committed HEAD of this repository into a temporary folder (uncommitted changes are not measured) and
runs there the install (`make .venv/.installed`: a new .venv, torch pinned, the package with its dev extras) and then
each step of `make test`'s recipe, in its order (read from the Makefile: lint, then suite beside culling, then pages), timing
each with a wall clock. A stage that fails ends the run and is recorded as failed. Each run appends one row to
`benchmarks/results/suite.md` (and its CSV) with the machine, the load and the commit.

The goal (DEVELOPERS.md): `make test` in at most 6 minutes from a fresh clone on 2 cores, install included. It is a
benchmark row, not a timed test: a pass/fail on seconds would fail on a slow day for no fault of the code.
pip's download and wheel cache (~/.cache/pip) is what a developer's and CI's machine have; the row says the install
ran with it.
"""
from __future__ import annotations

import argparse
import csv
import multiprocessing
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from machine import machine  # benchmarks/machine.py (this folder is on sys.path when run as a script)

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "results"


def make_test_stages(makefile: Path = ROOT / "Makefile") -> tuple[tuple[str, ...], ...]:
    """The steps of `make test`'s recipe, in order, each the make arguments of one line (targets and their flags, e.g.
    ``('-j2', '--output-sync=target', 'suite', 'culling')``: two targets run side by side)."""
    lines = makefile.read_text().splitlines()
    i = lines.index(next(x for x in lines if x.startswith("test:"))) + 1
    steps = []
    while i < len(lines) and lines[i].startswith("\t"):
        steps.append(tuple(w for w in lines[i].split() if w not in ("$(MAKE)", "--no-print-directory")))
        i += 1
    return tuple(steps)


def stage_name(args: tuple[str, ...]) -> str:
    return "+".join(w for w in args if not w.startswith("-"))


STEPS = {"install": (".venv/.installed",), **{stage_name(a): a for a in make_test_stages()}}
STAGES = tuple(STEPS)
TARGET_S = 360.0
FIELDS = ["date", "commit", "burners", "load_before", *[f"{s}_s" for s in STAGES], "total_s", "status", "cpu", "cores"]


def _burn(stop):  # a CPU burner: a busy loop until told to stop
    while not stop.is_set():
        pass


def _run_stage(clone: Path, stage: str, log) -> tuple[float, int]:
    t0 = time.perf_counter()
    rc = subprocess.run(["make", "--no-print-directory", *STEPS[stage]], cwd=clone, stdout=log, stderr=subprocess.STDOUT,
                        env={**os.environ, "COURSE_REQUIRE_BROWSER": os.environ.get("COURSE_REQUIRE_BROWSER", "1")},
                        timeout=3600).returncode
    return time.perf_counter() - t0, rc


def measure(burners: int, keep: bool) -> dict:
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short=7", "HEAD"], capture_output=True, text=True,
                            check=True).stdout.strip()
    work = Path(tempfile.mkdtemp(prefix="suite-bench-"))
    clone = work / "course"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    stop = multiprocessing.Event()
    procs = [multiprocessing.Process(target=_burn, args=(stop,), daemon=True) for _ in range(burners)]
    row = {"commit": commit, "burners": burners, "load_before": round(os.getloadavg()[0], 2)}
    status = "passed"
    try:
        for p in procs:
            p.start()
        with open(work / "make.log", "w") as log:
            for stage in STAGES:
                seconds, rc = _run_stage(clone, stage, log)
                row[f"{stage}_s"] = round(seconds, 1)
                print(f"{stage:10s} {seconds:7.1f} s  rc={rc}", flush=True)
                if rc:
                    status = f"failed at {stage} (rc {rc}; log {work / 'make.log'})"
                    keep = True
                    break
    finally:
        stop.set()
        for p in procs:
            p.join(10)
            if p.is_alive():
                p.kill()
        if not keep:
            shutil.rmtree(work, ignore_errors=True)
    row["total_s"] = round(sum(row.get(f"{s}_s", 0.0) for s in STAGES), 1)
    row["status"] = status
    return row


def write(row: dict) -> None:
    info = machine()
    row = {"date": info["date"], **row, "cpu": info["cpu"], "cores": info["cores"]}
    csv_path = OUT / "suite.csv"
    rows = list(csv.DictReader(open(csv_path, newline=""))) if csv_path.exists() else []
    rows.append({k: row.get(k, "") for k in FIELDS})
    with open(csv_path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=FIELDS)
        w.writeheader()
        w.writerows(rows)
    lines = [
        "# `make test` from a fresh clone, install included",
        "",
        "Written by `benchmarks/suite_bench.py` (one row per run, appended; `suite.csv` beside it): a `git clone` of the",
        "commit, then `make .venv/.installed` and `make test`'s stages in its order, each timed by the wall clock, with",
        "pip's cache as a developer's or CI's machine has it. `burners`: busy-loop processes running beside it (a loaded",
        f"machine). Goal: total <= {TARGET_S:.0f} s on 2 cores. `load_before`: the 1-minute load average at the start.",
        "",
        "| date | commit | burners | load before | " + " | ".join(f"{s} s" for s in STAGES) + " | total s | goal | status | cpu, cores |",
        "|---|---|---:|---:|" + "---:|" * len(STAGES) + "---:|---|---|---|",
    ]
    for r in rows:
        total = float(r["total_s"] or 0)
        goal = "met" if r["status"] == "passed" and total <= TARGET_S else ("missed" if r["status"] == "passed" else "-")
        lines.append(f"| {r['date']} | {r['commit']} | {r['burners']} | {r['load_before']} | "
                     + " | ".join(str(r[f'{s}_s'] or '-') for s in STAGES)
                     + f" | {r['total_s']} | {goal} | {r['status']} | {r['cpu']}, {r['cores']} |")
    (OUT / "suite.md").write_text("\n".join(lines) + "\n")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--burners", type=int, default=0, help="CPU burners beside the run (default 0)")
    ap.add_argument("--keep", action="store_true", help="keep the clone and its log")
    args = ap.parse_args(argv)
    if args.burners < 0:
        ap.error("--burners must be >= 0")
    row = measure(args.burners, args.keep)
    write(row)
    print(f"total {row['total_s']} s ({row['status']}); table: {OUT / 'suite.md'}")
    return 0 if row["status"] == "passed" else 1


if __name__ == "__main__":
    sys.exit(main())
