"""The Scenario holds the question's numbers; the ledger collects each notebook's results."""
from __future__ import annotations

import dataclasses
import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from course_lib import MINUTES_PER_DAY, Scenario, ledger
from course_lib import _validate as v


def test_baseline_reproduces_the_question():
    s = Scenario()
    assert s.minutes_lost_per_day == 30
    assert math.isclose(s.loss_fraction, 30 / 1440)
    assert round(100 * s.loss_fraction, 2) == 2.08
    assert s.fleet_mtbf_hours == 12
    assert math.isclose(s.rate_per_gpu_day, 2 / 4096)
    assert s.mean_rewind_min <= s.minutes_per_restart


def test_scenario_is_frozen_and_replace_ignores_none():
    s = Scenario()
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.n_gpus = 1  # type: ignore[misc]
    assert s.replace(n_gpus=None) == s
    assert s.replace(n_gpus=16384).n_gpus == 16384


def test_a_new_fleet_size_keeps_the_per_gpu_rate():
    s = Scenario()
    big = s.replace(n_gpus=16384)
    assert big.failures_per_day == pytest.approx(8.0, rel=1e-15, abs=0)
    assert big.rate_per_gpu_day == s.rate_per_gpu_day
    assert big.fleet_mtbf_hours == pytest.approx(3.0, rel=1e-15, abs=0)
    assert s.replace(n_gpus=16384, failures_per_day=2).failures_per_day == pytest.approx(2, rel=1e-15, abs=0)  # explicit value wins
    assert s.replace(observed_failures=60, observed_days=7, n_gpus=2048).rate_per_gpu_day == pytest.approx(60 / (2048 * 7), rel=1e-15, abs=0)
    with pytest.raises(ValueError, match="in one form"):
        s.replace(rate_per_gpu_day=1e-4, failures_per_day=2)
    with pytest.raises(ValueError, match="together"):
        s.replace(observed_failures=3)
    with pytest.raises(ValueError, match="no input"):
        s.replace(restarts_per_day=2)
    with pytest.raises(ValueError, match="n_gpus"):
        s.replace(n_gpus=0)


@given(st.integers(1, 10**6), st.floats(0.01, 100), st.floats(1, 120))
def test_loss_fraction_is_restarts_times_minutes_over_a_day(n, r, m):
    s = Scenario().replace(n_gpus=n, failures_per_day=r, checkpoint_interval_min=m)
    m = s.minutes_per_restart
    assert math.isclose(s.loss_fraction * MINUTES_PER_DAY, min(r * m, MINUTES_PER_DAY))
    assert math.isclose(s.fleet_mtbf_hours * r, 24)


@pytest.mark.parametrize(
    "field,value,match",
    [
        ("n_gpus", 0, "n_gpus must be an integer >= 1"),
        ("n_gpus", 2.5, "n_gpus"),
        ("rate_per_gpu_day", -1, "rate_per_gpu_day must be a finite number > 0"),
        ("detect_min", -1, "detect_min must be a finite number >= 0"),
        ("shard_gb", 0, "shard_gb must be a finite number > 0"),
        ("lemon_factor", 2, "lemon_factor"),
        ("observed_days", -1, "observed_days"),
        ("write_cost_min", float("nan"), "write_cost_min"),
        ("snapshot_gb_per_s", 0, "snapshot_gb_per_s"),
        ("minutes_per_restart", float("nan"), "minutes_per_restart"),
        ("checkpoint_interval_min", float("inf"), "checkpoint_interval_min"),
        ("checkpoint_interval_min", 31, "minutes_per_restart must be >= detect \\+ reload \\+ rewind"),
    ],
)
def test_bad_scenario_is_rejected_naming_the_field(field, value, match):
    with pytest.raises(ValueError, match=match):
        Scenario(**{field: value})


@pytest.mark.parametrize("fn,value", [(v.check_positive, 0), (v.check_non_negative, -1e-9), (v.check_open_unit, 1.0), (v.check_finite, "3"), (v.check_int_non_negative, True)])
def test_validators_name_the_parameter(fn, value):
    with pytest.raises(ValueError, match="^widget_count "):
        fn("widget_count", value)


def test_ledger_records_in_kernel_and_file(tmp_path, monkeypatch):
    path = tmp_path / "ledger.json"
    monkeypatch.setenv(ledger.ENV_VAR, str(path))
    ledger.clear()
    ledger.record("02-fleet-mtbf", "mtbf", "fleet MTBF", 12.345, "h", ".1f")
    ledger.record("00-the-question", "loss", "baseline loss", 2.0833, "%", ".2f")
    stored = json.loads(path.read_text())
    assert set(stored) == {"02-fleet-mtbf:mtbf", "00-the-question:loss"}
    from_file = ledger.entries(path)
    assert [e.key for e in from_file] == ["loss", "mtbf"]  # notebook order, not insertion order
    text = ledger.table(from_file)
    assert "2.08" in text and "12.3" in text and text.splitlines()[0].startswith("notebook")
    assert [e.key for e in ledger.entries()] == ["loss", "mtbf"]
    ledger.clear()
    assert ledger.table() == "(the answer table is empty)"


def test_ledger_reports_notebooks_that_disagree(monkeypatch):
    monkeypatch.delenv(ledger.ENV_VAR, raising=False)
    ledger.clear()
    ledger.record("03-anatomy", "after_levers_pct", "loss after the levers", 0.196, "%")
    ledger.record("08-the-floor", "after_levers_pct", "loss after the levers", 0.196, "%")
    assert ledger.disagreements() == {}
    assert "03 08" in ledger.table() and "DISAGREE" not in ledger.table()
    ledger.record("09-your-fleet", "after_levers_pct", "loss after the levers", 0.44, "%")
    assert set(ledger.disagreements()["after_levers_pct"]) == {"03-anatomy", "08-the-floor", "09-your-fleet"}
    assert "DISAGREE" in ledger.table()
    ledger.clear()


def test_every_notebook_declares_the_same_scenario_parameters():
    import nbformat
    from pathlib import Path

    from course_lib.scenario import parameters_block

    root = Path(__file__).resolve().parents[1] / "notebooks"
    books = sorted(root.glob("[0-9][0-9]-*.ipynb"))
    assert len(books) >= 10
    for book in books:
        nb = nbformat.read(book, as_version=4)
        (cell,) = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
        assert cell.source.startswith(parameters_block()), book.name


def test_resolved_inputs_are_one_field_and_a_copy_recomputes_them():
    import dataclasses

    s = Scenario()
    assert s.shard_gb == pytest.approx(405e9 * 12 / 4096 / 1e9)
    assert "shard_gb" not in s.given and "minutes_per_restart" in s.given
    big = s.replace(n_gpus=8192)
    assert big.shard_gb == pytest.approx(s.shard_gb / 2) and big.snapshot_cost_min == pytest.approx(s.snapshot_cost_min / 2)
    assert dataclasses.replace(s, n_gpus=8192).shard_gb == pytest.approx(big.shard_gb)  # dataclasses.replace too
    kept = s.replace(shard_gb=3.0).replace(n_gpus=8192)
    assert kept.shard_gb == 3.0 and "shard_gb" in kept.given  # a value given stays given
    assert s.replace(n_gpus=16384).step_min == pytest.approx(s.step_min / 4 * 430 / 400)  # Table 4's 16K throughput
    assert Scenario(n_gpus=8192) == s.replace(n_gpus=8192)
    assert hash(Scenario()) == hash(Scenario())


def test_one_vocabulary_for_papermill_the_cli_and_the_dashboard():
    from course_lib.__main__ import build_parser
    from course_lib.scenario import PARAMETERS, parameters_block
    from course_lib.widgets.floor import SLIDERS

    import argparse

    from course_lib.incidents.cli import add_log_arguments

    log = argparse.ArgumentParser()
    add_log_arguments(log)  # --log FILE and its options: a fault log to measure, not a Scenario input
    cli = {a.dest for a in build_parser()._actions} - {"help", "json"} - {a.dest for a in log._actions}
    cell = {line.split(" = ")[0] for line in parameters_block().splitlines() if " = None" in line}
    assert cli == set(PARAMETERS) == cell
    assert set(SLIDERS) <= set(PARAMETERS)
    s = Scenario.from_params(sdc_latency_min=120, groups=4, hang_share=0.5, peer_copy=False)
    assert s.modes.sdc_latency_min == 120 and s.replicas.groups == 4 and s.modes.share("hang") == 0.5 and not s.modes.peer_copy
    params = s.params()
    assert set(params) == set(PARAMETERS) - {"failures_per_day", "observed_failures", "hang_share"}
    assert Scenario.from_params(**params) == s  # a round trip through the vocabulary


def test_sourced_defaults_are_read_once_per_process():
    import subprocess
    import sys

    code = ("from course_lib import data\nfrom course_lib.answer import answer\nanswer()\nfirst = data.READS['verified']\n"
            "answer(); answer()\nprint(first, data.READS['verified'] - first)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    first, again = int(out[0]), int(out[1])
    assert first <= 15 and again == 0


def test_the_documented_make_course_command_parses_into_scenario_parameters():
    import re
    import shlex
    import subprocess
    import sys
    from pathlib import Path

    from course_lib.scenario import PARAMETERS, parameters_block

    root = Path(__file__).resolve().parents[1]
    documented = re.search(r"`(make course PARAMS=\"[^\"]+\")`", parameters_block()).group(1)  # what every notebook shows
    params = shlex.split(documented)[2].split("=", 1)[1]
    out = subprocess.run(["make", "-n", "--no-print-directory", "-C", str(root), "course", f"PARAMS={params}"],
                         capture_output=True, text=True, check=True).stdout
    (line,) = [ln for ln in out.splitlines() if "run_course.py" in ln]
    args = shlex.split(line)[2:]
    sys.path.insert(0, str(root / "scripts"))
    import run_course

    ns = run_course.build_parser().parse_args(args)
    got = run_course.parse_params(ns.param)
    assert got == {"n_gpus": 16384, "rate_per_gpu_day": 8.1e-4} and set(got) <= set(PARAMETERS)
    assert Scenario.from_params(**got).failures_per_day == pytest.approx(16384 * 8.1e-4)


# ---------------------------------------------------------------- issue 29: each resolved value by hand, each check at its edge
from course_lib.scenario import ModeInputs, ReplicaInputs, defaults  # noqa: E402


def test_the_question_is_counted_over_an_assumed_month():
    s = Scenario()
    assert s.observed_days == 30.0 and s.observed_failures == pytest.approx(60.0, rel=1e-15)
    assert s.replace(observed_days=7).observed_failures == pytest.approx(14.0, rel=1e-15)


def test_defaults_are_a_fresh_copy_of_the_sourced_numbers():
    d = defaults()
    assert d["reload_min"] == pytest.approx(129.5 / 60) and d["replica_gpus"] == 8 * 16  # ByteCheckpoint's 129.5 s; TP 8 x PP 16
    d["reload_min"] = -1
    assert defaults()["reload_min"] == pytest.approx(129.5 / 60)
    # the torchft lab's medians x the scale factor 10, in minutes (data/replica_lab.csv: 1.14 s and 3.77 s)
    assert Scenario().replicas.stall_min == pytest.approx(1.14 * 10 / 60) and Scenario().replicas.rejoin_min == pytest.approx(3.77 * 10 / 60)
    m = ModeInputs()
    assert m.peer_copy is True and m.spares_pooled is False and m.replica_gpus == 128


def test_copies_and_timeouts_resolve_by_hand():
    s = Scenario()
    gb = 405e9 * 12 / 4096 / 1e9
    assert s.shard_bytes == pytest.approx(gb * 1e9, rel=1e-12)
    assert s.write_cost_min == pytest.approx(gb / s.persist_gb_per_s / 60, rel=1e-12)
    assert s.snapshot_cost_min == pytest.approx(gb / s.snapshot_gb_per_s / 60, rel=1e-12)
    assert s.reload_after_min == pytest.approx(gb / s.restore_gb_per_s / 60, rel=1e-12)
    assert s.step_min > s.snapshot_cost_min and s.hang_timeout_min == pytest.approx(5 * s.step_min, rel=1e-12)  # 5 x 22.1 s
    slow = Scenario().replace(snapshot_cost_min=1.0)  # the snapshot is now the longest gap
    assert slow.hang_timeout_min == pytest.approx(5.0, rel=1e-12)


def test_detection_per_mode_by_hand():
    s = Scenario()
    poll = 0.1 / 60
    assert s.detect_by_mode == pytest.approx({"crash": poll, "hang": 10 + poll, "host_loss": 2.5, "sdc": poll})
    tuned = s.hang_timeout_min + 5 / 60 / 2 + poll  # the timeout, half a rank-monitor period, the launcher's poll
    assert s.detect_after_by_mode == pytest.approx({"crash": poll, "hang": tuned, "host_loss": 0.5, "sdc": poll})
    slow = Scenario().replace(host_heartbeat_min=3.0)  # a heartbeat slower than half the health check: never slower
    assert slow.detect_after_by_mode["host_loss"] == 2.5
    given = Scenario().replace(detect_min=1.0)
    assert given.detect_by_mode == {k: 1.0 for k in ("crash", "hang", "host_loss", "sdc")}
    shares = dict(zip(("crash", "hang", "host_loss", "sdc"), s.modes.shares))
    assert s.detect_min == pytest.approx(sum(shares[k] * v for k, v in s.detect_by_mode.items()), rel=1e-12)


def test_the_reschedule_is_what_the_15_minutes_leave():
    s = Scenario()
    rewind = 10 / 2 + s.modes.share("sdc") * 60  # half the interval, and the SDC share's hour past the corruption
    assert s.mean_rewind_min == pytest.approx(rewind, rel=1e-12)
    rest = s.detect_min + 129.5 / 60 + rewind
    assert s.reschedule_min == pytest.approx(15 - rest, rel=1e-12)
    edge = Scenario(minutes_per_restart=rest)  # exactly the other stages: a zero reschedule, not an error
    assert edge.reschedule_min == 0.0
    assert Scenario(minutes_per_restart=rest - 1e-10).reschedule_min == 0.0  # inside the tolerance: clamped at 0
    with pytest.raises(ValueError, match="minutes_per_restart must be >= detect"):
        Scenario(minutes_per_restart=rest - 1e-6)
    with pytest.raises(ValueError, match="minutes_per_restart must be given"):
        Scenario(minutes_per_restart=None)
    with pytest.raises(ValueError, match="minutes_per_restart must equal"):
        Scenario(reschedule_min=1.0, minutes_per_restart=15.0)
    assert Scenario(reschedule_min=1.0, minutes_per_restart=None).minutes_per_restart == pytest.approx(rest + 1.0, rel=1e-12)


def test_the_spares_reschedule_is_the_150_s_less_what_it_contains():
    s = Scenario()
    assert s.reschedule_after_min == pytest.approx(2.5 - 0.1 / 60 - s.reload_after_min, rel=1e-12)
    assert Scenario().replace(restart_after_min=0.0).reschedule_after_min == 0.0  # never negative


def test_replace_moves_the_minutes_per_restart_only_the_documented_ways():
    s = Scenario()
    longer = s.replace(minutes_per_restart=20)  # the observed minutes alone: the remainder grows
    assert longer.minutes_per_restart == 20 and longer.reschedule_min == pytest.approx(s.reschedule_min + 5, rel=1e-12)
    given = s.replace(reschedule_min=4.0)  # a stage given: the minutes become the sum
    assert given.minutes_per_restart == pytest.approx(15 - s.reschedule_min + 4.0, rel=1e-12)
    assert s.replace(n_gpus=8192).minutes_per_restart == 15


def test_hang_share_edges():
    s = Scenario()
    assert s.replace(hang_share=1.0).modes.shares == (0.0, 1.0, 0.0, 0.0)
    all_hang = s.replace(shares=(0.0, 1.0, 0.0, 0.0))
    assert all_hang.replace(hang_share=1.0).modes.shares == (0.0, 1.0, 0.0, 0.0)  # nothing to rescale: kept, no 0/0
    with pytest.raises(ValueError, match="shares and hang_share"):
        s.replace(shares=(0.25, 0.25, 0.25, 0.25), hang_share=0.5)
    with pytest.raises(ValueError, match="observed_failures must be >= 1"):
        s.replace(observed_failures=0, observed_days=30)
    assert s.replace(observed_failures=1, observed_days=30).rate_per_gpu_day == pytest.approx(1 / (4096 * 30))


def test_field_checks_at_their_edges():
    assert ModeInputs(shares=(1.0, 0.0, 0.0, 0.0)).share("crash") == 1.0  # a share of exactly 1 is allowed
    for bad in ((0.5, 0.5), 3, (0.5, 0.5, 0.5, -0.5), (0.3, 0.3, 0.3, 0.3)):
        with pytest.raises(ValueError, match="shares"):
            ModeInputs(shares=bad)
    assert ModeInputs(safety_factor=1).safety_factor == 1 and ModeInputs(safety_factor=1.5).safety_factor == 1.5
    with pytest.raises(ValueError, match="safety_factor must be a finite number >= 1"):
        ModeInputs(safety_factor=0.99)
    with pytest.raises(ValueError, match="peer_copy must be True or False"):
        ModeInputs(peer_copy="yes")
    with pytest.raises(ValueError, match="modes must be a ModeInputs"):
        Scenario(modes=3)
    with pytest.raises(ValueError, match="replicas must be a ReplicaInputs"):
        Scenario(replicas=3)
    assert ReplicaInputs(stall_min=1.0, rejoin_min=1.0).rejoin_min == 1.0
    with pytest.raises(ValueError, match="rejoin_min must be a finite number >= stall_min"):
        ReplicaInputs(stall_min=2.0, rejoin_min=1.0)
    s = Scenario()
    with pytest.raises(ValueError, match="hang_timeout_min must be > the step"):
        s.replace(hang_timeout_min=s.step_min)
    assert s.replace(groups=32).replicas.groups == 32  # 4,096 / 128: one group per replica
    with pytest.raises(ValueError, match=r"groups must be an integer in \[1, 32\]"):
        s.replace(groups=33)
    with pytest.raises(ValueError, match=r"groups must be an integer in \[1, 1\]"):
        s.replace(n_gpus=128, groups=2)


def test_the_resolution_record_is_not_part_of_a_scenarios_identity():
    s = Scenario()
    explicit = Scenario(shard_gb=s.shard_gb)  # the same number, given rather than computed
    assert explicit == s and "shard_gb" in explicit.given and "shard_gb" not in s.given
    assert Scenario.from_namespace({"n_gpus": 8192, "unrelated": 1}).n_gpus == 8192


def test_new_minutes_with_a_new_interval_resplit_the_remainder():
    s = Scenario()
    both = s.replace(minutes_per_restart=20, checkpoint_interval_min=12)  # both given: the reschedule is what 20 leaves
    rewind = 12 / 2 + s.modes.share("sdc") * 60
    assert both.minutes_per_restart == 20
    assert both.reschedule_min == pytest.approx(20 - s.detect_min - s.reload_min - rewind, rel=1e-12)


def test_the_reschedule_range_resolves_by_hand():
    """Low: the median of started - DOWN over the committed tuned runs that were requeued (data/slurm_requeue.csv,
    read here with csv) plus MegaScale's 5 s; high: Kokolis' 5-minute re-queue less the reload, never below zero."""
    import csv
    import statistics

    from course_lib.data import DATA_DIR

    with (DATA_DIR / "slurm_requeue.csv").open(newline="") as fh:
        shares = [float(r["started_s"]) - float(r["down_s"]) for r in csv.DictReader(fh)
                  if r["setting"] == "tuned" and int(r["attempts"]) >= 2]
    s = Scenario()
    assert len(shares) >= 6
    assert s.reschedule_low_min == pytest.approx((statistics.median(shares) + 5.0) / 60, rel=1e-12)
    assert s.reschedule_high_min == pytest.approx((300.0 - 129.5) / 60, rel=1e-12)
    assert Scenario(reload_min=4.0, minutes_per_restart=30.0).reschedule_high_min == pytest.approx(1.0, rel=1e-12)
    long = Scenario(reload_min=10.0, minutes_per_restart=30.0)  # a reload longer than the re-queue leaves no reschedule
    assert long.reschedule_high_min == 0.0 and long.reschedule_low_min == 0.0  # the resolved low end follows it down
    assert Scenario(reload_min=4.0, reschedule_low_min=1.0, minutes_per_restart=30.0).reschedule_low_min == 1.0  # low = high is a range
    with pytest.raises(ValueError, match="reschedule_low_min must be <= reschedule_high_min"):
        Scenario(reschedule_low_min=3.0, reschedule_high_min=2.0)
    with pytest.raises(ValueError, match="reschedule_low_min"):
        Scenario(reload_min=4.0, reschedule_low_min=1.5, minutes_per_restart=30.0)
