"""The loaders notebooks 10 and 11 cite the committed benchmark tables through (course_lib.ftlab.load_group_sweep,
course_lib.nodelab.load_storage_link, load_nodelab_benchmark's phases).

Each loaded number is recomputed another way: from the one-row-per-run CSV the same benchmark wrote beside its
JSON (medians of the runs, read with the csv module), or, for the node-loss phases, from the per-repeat rows of
the JSON (the three rescheduling phases add up to the stage the fault lab's reader measured).
"""
import csv
import statistics
from pathlib import Path

import pytest

from course_lib.ftlab import load_group_sweep
from course_lib.nodelab import load_nodelab_benchmark, load_storage_link
from course_lib.nodelab.phases import PHASES

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"


def _rows(name):
    with open(RESULTS / name, newline="") as fh:
        return list(csv.DictReader(fh))


def test_group_sweep_ratios_are_the_medians_of_the_csv_runs():
    sweep = load_group_sweep()
    runs = [r for r in _rows("ftlab_groups.csv") if not r["error"] and r["scenario"] == "kill"]
    assert set(sweep.groups) == {int(r["groups"]) for r in runs}
    for g in sweep.groups:
        whole = [float(r["gpu_s_lost"]) for r in runs if int(r["groups"]) == g and r["setting"] == "whole"]
        ft = [float(r["gpu_s_lost"]) for r in runs if int(r["groups"]) == g and r["setting"] == "torchft"]
        assert sweep.ratio(g) == pytest.approx(statistics.median(whole) / statistics.median(ft), rel=1e-9)
    assert sweep.ratio(max(sweep.groups)) > sweep.ratio(min(sweep.groups))  # more groups, more saved


def test_storage_link_ratios_are_the_medians_of_the_csv_fetches():
    link = load_storage_link()
    rows = _rows("storage_link.csv")
    for mib in link.sizes:
        fetch = {t: statistics.median(float(r["fetch_s"]) for r in rows if r["tier"] == t and int(r["size_mib"]) == mib)
                 for t in ("buddy", "persisted")}
        assert link.ratio(mib) == pytest.approx(fetch["persisted"] / fetch["buddy"], rel=1e-9)
    with pytest.raises(ValueError, match="what"):
        link.ratio(min(link.sizes), "reload")


def test_node_loss_phases_add_up_to_the_rescheduling_in_every_repeat():
    bench = load_nodelab_benchmark()
    assert set(bench.phases) == set(bench.medians)
    for r in bench.raw["rows"]:
        assert r["membership_wait"] + r["round_formed"] + r["workers_start"] == pytest.approx(r["reschedule"], abs=1e-6)
        assert (r["replacement_startup"] is None) == (r["replacement_kind"] == "spare")
    for name, ph in bench.phases.items():
        reps = [r for r in bench.raw["rows"] if r["setting"] == name]
        for k in PHASES:
            vals = [r[k] for r in reps if r[k] is not None]
            assert ph[k] == (statistics.median(vals) if vals else None)
