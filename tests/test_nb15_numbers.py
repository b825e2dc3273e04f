"""Notebook 15's numbers, read from the committed notebook's outputs and recomputed by hand from the raw rows of
data/slurm_requeue.csv and the committed sacct export (csv and string parsing, not course_lib.slurmlab's readers)."""
import csv
from datetime import datetime
from pathlib import Path

import nbformat
import pytest

from course_lib import Scenario
from course_lib.answer import answer

ROOT = Path(__file__).resolve().parents[1]
NB = ROOT / "notebooks" / "15-the-schedulers-share.ipynb"
RUNS = ROOT / "data" / "slurm_requeue.csv"
EXPORT = ROOT / "benchmarks" / "results" / "slurmlab" / "node_kill-default" / "sacct.txt"


def _outputs() -> str:
    book = nbformat.read(NB, as_version=4)
    return "\n".join(o.get("text", "") for c in book.cells if c.cell_type == "code" for o in c.get("outputs", [])
                     if o.get("output_type") == "stream")


def _middle(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def _rows(mode, setting):
    with RUNS.open(newline="") as fh:
        return [r for r in csv.DictReader(fh) if r["mode"] == mode and r["setting"] == setting]


def _parts(setting):
    rs = _rows("node_kill", setting)
    assert len(rs) >= 3  # medians of repeated runs
    f = lambda r, k: float(r[k])  # noqa: E731
    # the run's own stages (the lab's detect and reschedule), its reschedule split at the requeued attempt's Start
    return {"detect": _middle(f(r, "detect_s") for r in rs), "scheduler": _middle(f(r, "started_s") - f(r, "down_s") for r in rs),
            "startup": _middle(f(r, "reschedule_s") - (f(r, "started_s") - f(r, "down_s")) for r in rs),
            "reschedule": _middle(f(r, "reschedule_s") for r in rs)}


@pytest.mark.parametrize("setting", ["default", "tuned"])
def test_the_split_of_a_lost_nodes_restart_is_the_runs_medians(setting):
    p = _parts(setting)
    assert (f"detect {p['detect']:.0f} s; reschedule {p['reschedule']:.0f} s = the scheduler's {p['scheduler']:.0f} s + "
            f"the job's start-up {p['startup']:.1f} s") in _outputs()


def test_the_start_up_budget_is_the_break_even_less_the_schedulers_share():
    be = answer(Scenario(), spread_draws=0).spare.break_even_min
    d, t = _parts("default"), _parts("tuned")
    out = _outputs()
    assert f"the start-up may take {be - d['scheduler'] / 60:.2f} min at Slurm's defaults and {be - t['scheduler'] / 60:.2f} min tuned" in out
    assert f"exceeds {be - d['scheduler'] / 60:.2f} min at Slurm's defaults or {be - t['scheduler'] / 60:.2f} min tuned" in out
    # at the defaults the scheduler alone takes more than half of the break-even, as the lesson says
    assert d["scheduler"] / 60 > be / 2 > t["scheduler"] / 60


def test_the_accounting_read_back_is_end_to_start_in_the_export():
    lines = [ln.split("|") for ln in EXPORT.read_text().splitlines() if ln.strip()]
    head, jobs = lines[0], [dict(zip(lines[0], ln)) for ln in lines[1:] if "." not in ln[0]]
    assert head[0] == "JobID" and [j["State"] for j in jobs] == ["NODE_FAIL", "COMPLETED"]
    gap = (datetime.fromisoformat(jobs[1]["Start"]) - datetime.fromisoformat(jobs[0]["End"])).total_seconds()
    assert f"End of the failed attempt to Start of the next: {gap:.0f} s" in _outputs()
    assert gap >= 120  # cred_expire's default (slurm.conf(5)) holds a requeued job at least this long


def test_only_the_node_failures_reach_the_scheduler():
    out = _outputs()
    for mode, who in (("worker_crash", "torchrun"), ("hang", "torchrun"), ("node_kill", "Slurm"), ("link_cut", "Slurm")):
        for setting in ("default", "tuned"):
            attempts = {int(r["attempts"]) for r in _rows(mode, setting)}
            n = 2 if who == "Slurm" else 1
            assert attempts == {n}
            assert any(ln.split()[:4] == [mode, setting, str(n), who] for ln in out.splitlines())
    hang = _middle(float(r["detect_s"]) for r in _rows("hang", "default"))
    assert 30.0 <= hang < 35.0  # the job's 30 s collective timeout
    for setting in ("default", "tuned"):  # the spare in the allocation: one attempt, and the spare acts
        assert {int(r["attempts"]) for r in _rows("spare", setting)} == {1}
        assert any(ln.split()[:5] == ["spare", setting, "1", "the", "spare"] for ln in out.splitlines())


def test_a_stalled_slurmd_restarts_the_job_only_at_the_tuned_timeout():
    """By hand from the raw rows: at the tuned SlurmdTimeout the stall's DOWN and the reschedule after it, as the
    notebook prints them; at the default one attempt and no DOWN."""
    out = _outputs()
    t = _rows("slurmd_pause", "tuned")
    (n,) = {int(r["attempts"]) for r in t}
    down, resched = _middle(float(r["down_s"]) for r in t), _middle(float(r["reschedule_s"]) for r in t)
    assert n == 2 and f"slurmd set it DOWN {down:.1f} s" in out and f"({n} attempts) and trained again {resched:.1f} s" in out
    d = _rows("slurmd_pause", "default")
    assert {int(r["attempts"]) for r in d} == {1} and all(r["down_s"] == "" for r in d)
    assert "passed unseen (1 attempt, no DOWN)" in out


def test_a_spare_in_the_allocation_trains_again_before_slurm_sets_the_node_down():
    """By hand from the raw rows: the spare's notice, its reschedule and the DOWN, as the notebook prints them; at
    Slurm's defaults the job trains again minutes before the node is set DOWN."""
    out = _outputs()
    for setting in ("default", "tuned"):
        rows = _rows("spare", setting)
        med = {k: _middle(float(r[k]) for r in rows) for k in ("noticed_s", "reschedule_s", "down_s")}
        assert f"{setting:8s} a spare in the allocation: noticed {med['noticed_s']:.2f} s" in out
        assert f"training again {med['reschedule_s']:.1f} s" in out and f"the node set DOWN {med['down_s']:.1f} s" in out
    d = {k: _middle(float(r[k]) for r in _rows("spare", "default")) for k in ("noticed_s", "reschedule_s", "down_s")}
    assert d["noticed_s"] + d["reschedule_s"] < 60 < 240 < d["down_s"]  # SlurmdTimeout's default is 300 s
    # the export of the first default run: the job resized (the lost node removed), never requeued
    export = EXPORT.parent.parent / "spare-default"
    head, *rows = [ln.split("|") for ln in export.joinpath("sacct.txt").read_text().splitlines() if ln]
    jobs = [dict(zip(head, r)) for r in rows if "." not in r[0]]
    assert [j["State"] for j in jobs] == ["RESIZING", "COMPLETED"] and jobs[0]["NodeList"] == "n[0-2]"


def test_a_lost_gpu_leaves_the_allocation_only_after_its_health_checks_drain():
    """By hand from the raw rows: the drain's median (failure to DRAIN) and the attempts, as the notebook prints them;
    at a 5-minute check the drain comes minutes after torchrun saw the dead worker (at once)."""
    out = _outputs()
    for setting in ("default", "tuned"):
        rows = _rows("health_check", setting)
        (n,) = {int(r["attempts"]) for r in rows}
        (interval,) = {float(r["health_check_interval_s"]) for r in rows}
        drain = _middle(float(r["detect_s"]) for r in rows)
        assert n >= 2 and all(float(r["noticed_s"]) < 1.0 for r in rows)
        assert any(ln.split()[:4] == ["health_check", setting, str(n), "its"] for ln in out.splitlines())
        assert f"health check every {interval:g} s: drained {drain:.1f} s" in out
        assert f"{n} attempts in sacct, {n - 1} of them on the broken node" in out
    assert _middle(float(r["detect_s"]) for r in _rows("health_check", "default")) > 60.0
    # "of them on the broken node", read in the committed export of the first default run: every attempt before
    # the completed one ran on n[0-1] (the broken n1), the completed one on the two healthy nodes, after the DRAIN
    export = EXPORT.parent.parent / "health_check-default"
    head, *rows = [ln.split("|") for ln in export.joinpath("sacct.txt").read_text().splitlines() if ln]
    jobs = [dict(zip(head, r)) for r in rows if "." not in r[0]]  # the job's attempts, not their steps
    (drain,) = [ln.split("|") for ln in export.joinpath("events.txt").read_text().splitlines()[1:] if ln]
    assert [(j["State"], j["NodeList"]) for j in jobs] == [("REQUEUED", "n[0-1]")] * (len(jobs) - 1) + [("COMPLETED", "n[0,2]")]
    assert jobs[-2]["Start"] < drain[2] <= jobs[-1]["Start"] and drain[4] == "DRAIN"


def test_the_reschedule_range_is_the_tuned_share_plus_a_start_up_up_to_kokolis_less_the_reload():
    """The low end by hand: the median of started - DOWN over every tuned run that was requeued (a lost node and a cut
    link), plus MegaScale's 5 s; the high end Kokolis' 5 min less ByteCheckpoint's 129.5 s reload."""
    shares = [float(r["started_s"]) - float(r["down_s"]) for m in ("node_kill", "link_cut") for r in _rows(m, "tuned")]
    assert len(shares) >= 6
    low, high = (_middle(shares) + 5.0) / 60, (300.0 - 129.5) / 60
    s = Scenario()
    assert (s.reschedule_low_min, s.reschedule_high_min) == pytest.approx((low, high), rel=1e-9)
    assert low < s.reschedule_min < high
    assert (f"the reschedule's range: {low:.2f} min (the tuned share {_middle(shares):.0f} s + a 5 s start-up), "
            f"{s.reschedule_min:.2f} min (the question's remainder), {high:.2f} min") in _outputs()
