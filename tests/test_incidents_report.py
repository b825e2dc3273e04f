"""course_lib.incidents.report on a tiny hand-written log: what it measures, what it asks the course's model, what it prints.

The log is tests/fixtures/incidents/report_small.csv: 4 nodes x 8 GPUs (32 GPUs), window 0-60 days,
eight rows (one an exact duplicate, rejected), seven incidents:

    node a: 10.0-10.5 GPU, 20.0-21.0 Fan, 50.0-50.5 GPU      (interruptions)
    node b: 25.0-25.25 GPU                                    (interruption)
            49.8-50.2 Stress                                  (not an interruption: a test after repair)
    node c: 20.5-20.75 GPU, 45.0-45.25 GPU                    (interruptions)
    node d: nothing (only the fleet size says it exists)

``detected`` is given for three incidents, 0.001, 0.002 and 0.004 days after their start. Every
expected number below is worked by hand from these rows (or, in the formatting tests, from the
stand-in numbers the test itself sets); none is read back from the code under test.
"""
from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from types import SimpleNamespace as NS

import numpy as np
import pytest
from scipy import stats

from course_lib import incidents as inc
from course_lib.incidents import policy as pl
from course_lib.incidents import report
from course_lib.incidents.analysis import Fleet, RateEstimate
from course_lib.incidents.schema import IncidentLog
from course_lib.scenario import Scenario

FIX = Path(__file__).resolve().parent / "fixtures" / "incidents"
SMALL = FIX / "report_small.csv"
FLEET = Fleet(4, 8)
GPU_DAYS = 4 * 8 * 60  # 1920 GPU-days of exposure
#: The test's own policy (not the course's table): GPU -> crash, Fan -> host_loss, Stress -> not an interruption.
POLICY = pl.Policy({("Hardware Failure", "GPU", ""): (True, "crash", "test"),
                    ("Hardware Failure", "Fan", ""): (True, "host_loss", "test"),
                    ("Test", "Stress", ""): (False, "none", "test")})
# float tolerance for values that pass through a few float operations (sums of day fractions): far
# below any difference a wrong formula makes
REL = 1e-9


def chi2_sf_odd(x: float, dof: int) -> float:
    """The chi-square survival function for dof 1 or 3, in closed form (Abramowitz & Stegun 26.4.4)."""
    q = math.erfc(math.sqrt(x / 2))
    if dof == 1:
        return q
    assert dof == 3
    return q + math.sqrt(2 * x / math.pi) * math.exp(-x / 2)


def poisson_cdf(k: int, mu: float) -> float:
    return sum(math.exp(-mu) * mu ** i / math.factorial(i) for i in range(k + 1))


@pytest.fixture(scope="module")
def log():
    return inc.read_csv(SMALL)


@pytest.fixture(scope="module")
def analysis(log):
    return report.analyse(log, FLEET, policy=POLICY)


# ---------------------------------------------------------------------------------- stage_minutes
def test_stage_minutes_are_the_median_of_the_incidents_that_have_the_stage():
    d = 1 / 86400  # one second, in days
    log = IncidentLog.build([1.0, 2.0, 3.0], [np.nan] * 3, ["a", "b", "c"], window=(0, 4),
                            stages={"detected": [1.0 + 60 * d, 2.0 + 120 * d, np.nan],
                                    "rendezvous": [1.0 + 90 * d, 2.0 + 210 * d, np.nan]})
    m = report.stage_minutes(log)
    assert set(m) == {"detect", "reschedule", "reload", "rewind"}
    assert m["detect"] == pytest.approx(1.5, rel=REL)  # median of 60 s and 120 s (the third has none) = 90 s
    assert m["reschedule"] == pytest.approx(1.0, rel=REL)  # 30 s and 90 s -> 60 s
    assert math.isnan(m["reload"]) and math.isnan(m["rewind"])  # no incident has loaded / progress_regained


def test_stage_minutes_of_the_fixture(log):
    m = report.stage_minutes(log)
    # detect: 0.001, 0.002, 0.004 days (86.4, 172.8, 345.6 s); the median 0.002 d = 2.88 min
    assert m["detect"] == pytest.approx(2.88, rel=REL)
    assert all(math.isnan(m[k]) for k in ("reschedule", "reload", "rewind"))


# ---------------------------------------------------------------------------------- analyse
def test_analyse_measures_the_interruptions_not_every_fault(log, analysis):
    a = analysis
    assert len(log) == 7 and a.log is log and a.fleet == FLEET
    assert a.classified.interruption.tolist() == [c != "Stress" for c in log.cause_part("class").tolist()]
    assert len(a.interruptions) == 6 and "Stress" not in a.interruptions.cause_part("class").tolist()
    assert a.rate_all.count == 7 and a.rate_all.rate_per_gpu_day == pytest.approx(7 / GPU_DAYS, rel=REL)
    assert a.rate.count == 6 and a.rate.rate_per_gpu_day == pytest.approx(6 / GPU_DAYS, rel=REL)
    assert a.rate.confidence == 0.95 == a.rate_all.confidence  # the default confidence
    # interruptions per node: a 3, c 2, b 1, d 0 (the Stress on b does not count)
    assert sorted(a.counts.tolist()) == [0, 1, 2, 3]
    # 5 crashes (the GPU rows), 1 host_loss (Fan)
    assert a.mode_shares == pytest.approx({"crash": 5 / 6, "hang": 0.0, "host_loss": 1 / 6, "sdc": 0.0})
    assert a.skipped == {}


def test_analyse_runs_each_test_on_the_interruptions_with_its_defaults(analysis):
    a = analysis
    # dispersion of [3, 2, 1, 0]: mean 1.5, squares 2.25 + 0.25 + 0.25 + 2.25 = 5, variance 5 / 3,
    # D = 5 / 1.5 = 10 / 3 on 3 dof; zero nodes 1, expected 4 exp(-1.5)
    d = a.dispersion
    assert d.variance / d.mean == pytest.approx((5 / 3) / 1.5, rel=REL)
    assert d.p_value == pytest.approx(chi2_sf_odd(10 / 3, 3), rel=1e-7)
    assert d.zero_nodes == 1 and d.zero_expected == pytest.approx(4 * math.exp(-1.5), rel=REL)
    assert a.negbin is not None and a.worst is not None
    # lemons, split at half the window (day 30): 4 interruptions in the first half over 4 nodes, mean 1;
    # the threshold is the smallest k >= 2 with P(Poisson(1) >= k) <= 1 %: P(>= 4) = 1.9 %, P(>= 5) = 0.37 % -> 5
    lm = a.lemon
    assert lm.split_day == 30.0 and lm.threshold == 5 and lm.n_removed == 0
    assert (lm.count_all, lm.count_kept, lm.factor) == (2, 2, 1.0)  # c at 45, a at 50 (the Stress at 49.8 is not one)
    # repeats: a's 2nd and 3rd, c's 2nd of 6 interruptions; within 7 days: none (gaps 10, 30 and 24.5 days)
    assert (a.repeat.repeats, a.repeat.total, a.repeat.within_days) == (3, 6, None)
    assert (a.repeat_week.repeats, a.repeat_week.within_days) == (0, 7.0)
    # bursts within 5 minutes (the default): no two interruptions on different nodes that close
    assert a.bursts.window_min == 5.0 and a.bursts.coincident == 0
    # months of 30 days: 4 interruptions in 0-30 (10, 20, 20.5, 25), 2 in 30-60; chi2 = (1 + 1) / 3 on 1 dof
    m = a.monthly
    assert m.edges.tolist() == [0.0, 30.0, 60.0] and m.counts.tolist() == [4, 2] and m.first_ratio == 2.0
    assert m.p_value == pytest.approx(chi2_sf_odd(2 / 3, 1), rel=1e-7)
    # repairs of the six interruptions: 0.5, 1, 0.25, 0.25, 0.25, 0.5 days (the Stress's 0.4 d is not one);
    # three of six <= 0.25 -> median 0.25 d, p90 1 d, mean 2.75 / 6
    r = a.repairs
    assert (r.n, r.censored) == (6, 0)
    assert r.median_days == 0.25 and r.p90_days == 1.0 and r.mean_days == pytest.approx(2.75 / 6, rel=REL)
    assert a.stages_min["detect"] == pytest.approx(2.88, rel=REL)


def test_analyse_passes_its_options_on(log):
    a = report.analyse(log, FLEET, policy=POLICY, burst_window_min=720.0, lemon_split=0.25, lemon_threshold=2,
                       month_days=20.0, confidence=0.9)
    assert a.rate.confidence == 0.9 and a.rate_all.confidence == 0.9
    # within 12 h (720 min): c at 20.5 is 0.5 d after a at 20 (both count as coincident)
    assert a.bursts.window_min == 720.0 and a.bursts.coincident == 2
    # split at day 15: a has 1 interruption before it (< 2), so nothing is removed
    assert a.lemon.split_day == 15.0 and a.lemon.threshold == 2 and a.lemon.n_removed == 0
    assert a.monthly.edges.tolist() == [0.0, 20.0, 40.0, 60.0] and a.monthly.counts.tolist() == [1, 3, 2]


def test_analyse_of_a_log_without_interruptions_says_what_it_skipped(log):
    only_stress = log.where(log.cause_part("class") == "Stress")
    a = report.analyse(only_stress, FLEET, policy=POLICY)
    assert a.rate_all.count == 1 and a.rate.count == 0 and len(a.interruptions) == 0
    assert a.mode_shares is None and a.skipped["mode shares"] == "the log holds no interruption"
    assert a.dispersion is None and "must not all be zero" in a.skipped["dispersion"]
    # what needs the dispersion, or an interruption at all, is not attempted (and so not listed as skipped)
    assert a.negbin is None and a.worst is None and a.lemon is None
    assert not {"negative binomial", "worst nodes", "lemon removal"} & set(a.skipped)
    for name in ("repeat faults", "repeat faults within 7 days", "bursts", "monthly rates", "repair times"):
        assert name in a.skipped
    assert a.repeat is a.repeat_week is a.bursts is a.monthly is a.repairs is None


def test_analyse_refuses_what_is_not_a_log():
    with pytest.raises(ValueError, match="log must be an IncidentLog"):
        report.analyse([1.0, 2.0], FLEET)


# ---------------------------------------------------------------------------------- scenario_for_log
def test_scenario_for_log_replaces_the_rate_the_size_and_the_measured_stages():
    base = Scenario()
    s = report.scenario_for_log(2e-4, 1024, base, {"detect": 2.5, "reschedule": math.nan, "reload": None, "rewind": 9.0})
    assert (s.n_gpus, s.rate_per_gpu_day, s.detect_min) == (1024, 2e-4, 2.5)
    assert s.reschedule_min == base.reschedule_min and s.reload_min == base.reload_min  # NaN / None: the sourced ones stay
    t = report.scenario_for_log(2e-4, 64, base.replace(reload_min=7.0))
    assert (t.n_gpus, t.reload_min, t.detect_min) == (64, 7.0, base.detect_min)  # the given base's stages, none measured
    u = report.scenario_for_log(3e-4, 8, None, {"reload": 4.0})
    assert u.reload_min == 4.0 and u.modes.shares == base.modes.shares  # base None: the course's Scenario
    with pytest.raises(ValueError, match="n_gpus"):
        report.scenario_for_log(2e-4, 0)


# ---------------------------------------------------------------------------------- answer_for_log
@pytest.fixture(scope="module")
def ans60(log, analysis):
    return report.answer_for_log(log, FLEET, 60, analysis=analysis)


def test_answer_for_log_asks_the_model_at_the_logs_rate_and_its_interval(ans60):
    r = ans60
    rate = 6 / GPU_DAYS
    assert r.job_gpus == 60 and r.job_answer.n_gpus == 60 and r.fleet_answer.n_gpus == 32
    assert r.job_answer.failures_per_day == pytest.approx(rate * 60, rel=REL)  # 0.1875 a day
    assert r.fleet_answer.failures_per_day == pytest.approx(rate * 32, rel=REL)  # 0.1 a day
    # Garwood's exact interval for 6 events: chi2 quantiles on 12 and 14 dof, over 1920 GPU-days
    low, high = stats.chi2.ppf(0.025, 12) / 2 / GPU_DAYS, stats.chi2.ppf(0.975, 14) / 2 / GPU_DAYS
    assert r.job_low.failures_per_day == pytest.approx(low * 60, rel=1e-7)
    assert r.job_high.failures_per_day == pytest.approx(high * 60, rel=1e-7)
    assert r.job_low.after.floor_fraction < r.job_answer.after.floor_fraction < r.job_high.after.floor_fraction
    for a in (r.fleet_answer, r.job_answer, r.job_low, r.job_high):
        assert a.scenario.detect_min == pytest.approx(2.88, rel=REL)  # the log's measured detection
        assert a.scenario.reschedule_min == Scenario().reschedule_min  # not measured: the course's
        assert a.spread is None  # no Monte Carlo spread: the range is the rate's interval
    assert r.job_low.scenario.rate_per_gpu_day == pytest.approx(low, rel=1e-7)


def test_answer_for_log_applies_the_logs_mode_shares_and_the_lemon_factor(ans60, log):
    r = ans60
    assert r.log_modes_answer.scenario.modes.shares == pytest.approx((5 / 6, 0.0, 1 / 6, 0.0))  # crash, hang, host_loss, sdc
    assert r.log_modes_answer.spread is None and r.log_modes_answer.n_gpus == 60
    # the default lemon threshold removes nothing: factor 1, the lever changes nothing
    assert r.lemon_after.failures_per_day == pytest.approx(0.1875, rel=REL)
    # threshold 2 removes node a (2 in the first half); after day 30: c at 45 kept, a at 50 removed:
    # factor = 1/2 x 4/3 nodes = 2/3
    b = report.answer_for_log(log, FLEET, 60, policy=POLICY, lemon_threshold=2)
    assert b.analysis.lemon.factor == pytest.approx(2 / 3, rel=REL)
    assert b.lemon_after.failures_per_day == pytest.approx(2 / 3 * 0.1875, rel=REL)
    assert b.lemon_after.floor_fraction < b.job_answer.after.floor_fraction


def test_answer_for_log_sizes_the_spare_pool_from_the_repairs(ans60):
    r = ans60
    # 60 GPUs on 8-GPU nodes: 8 nodes (7.5 rounded up); their interruptions: 6 / 1920 x 8 GPUs x 8 nodes = 0.2 a day
    assert r.job_nodes == 8 and r.spare_quantile == 0.99
    lam, mean_repair = 0.2, 2.75 / 6
    mu = lam * mean_repair  # nodes in repair, Poisson(0.0917): P(0) = 0.912 < 0.99 <= P(<= 1) = 0.996 -> 1 + 1 spares
    assert poisson_cdf(0, mu) < 0.99 <= poisson_cdf(1, mu)
    assert r.spares_poisson == 2
    assert r.spare_cost_min_per_day == pytest.approx(2 * 8 / 60 * 1440, rel=REL)  # 384 min/day
    # elastic: lambda x min(replica 128, job 60) / job x repair minutes = 0.2 x 1 x 660 = 132 min/day
    assert r.elastic_cost_min_per_day == pytest.approx(lam * 1440 * mean_repair, rel=REL)
    assert isinstance(r.spares_replay, int) and r.spares_replay >= 1


def test_a_job_the_size_of_the_fleet_replays_the_log_itself(log, analysis):
    r = report.answer_for_log(log, FLEET, 32, analysis=analysis)
    # the replay of the six interruptions on all four nodes: only c at 20.5 finds another node (a, 20-21)
    # in repair: counts [0, 0, 1, 0, 0, 0]; the 99th percentile is 1 -> 1 + 1 spares
    assert r.job_nodes == 4 and r.spares_replay == 2
    lam = 6 / GPU_DAYS * 8 * 4  # 0.1 a day
    assert r.spares_poisson == 2  # Poisson(0.1 x 0.458) = Poisson(0.0458): P(<= 1) = 0.999
    assert r.spare_cost_min_per_day == pytest.approx(2 * 8 / 32 * 1440, rel=REL)  # 720
    assert r.elastic_cost_min_per_day == pytest.approx(lam * 1440 * 2.75 / 6, rel=REL)  # 66


def test_a_job_larger_than_a_replica_loses_one_replica_not_the_job(log, analysis):
    r = report.answer_for_log(log, FLEET, 256, analysis=analysis)
    lam = 6 / GPU_DAYS * 8 * 32  # 32 nodes: 0.8 interruptions a day
    assert r.job_nodes == 32
    # Poisson(0.8 x 0.458 = 0.367): P(<= 1) = 0.947, P(<= 2) = 0.992 -> 2 + 1 spares
    assert poisson_cdf(1, lam * 2.75 / 6) < 0.99 <= poisson_cdf(2, lam * 2.75 / 6) and r.spares_poisson == 3
    assert r.spare_cost_min_per_day == pytest.approx(3 * 8 / 256 * 1440, rel=REL)  # 135
    # the course's replica is 128 GPUs (TP 8 x PP 16): half of the job out until repair
    assert r.elastic_cost_min_per_day == pytest.approx(lam * 128 / 256 * 1440 * 2.75 / 6, rel=REL)  # 264


def test_answer_for_log_defaults_and_refusals(log, analysis):
    base = Scenario().replace(n_gpus=96)
    r = report.answer_for_log(log, FLEET, base=base, analysis=analysis)
    assert r.job_gpus == 96 and r.job_nodes == 12  # the base's job size when none is given
    q = report.answer_for_log(log, FLEET, 60, analysis=analysis, spare_quantile=0.5)
    assert q.spare_quantile == 0.5 and q.spares_poisson == 1  # P(0 in repair) = 0.912 >= 0.5: 0 + 1
    with pytest.raises(ValueError, match="spare_quantile"):
        report.answer_for_log(log, FLEET, 60, analysis=analysis, spare_quantile=1.0)
    with pytest.raises(ValueError, match="job_gpus"):
        report.answer_for_log(log, FLEET, 0, analysis=analysis)
    only_stress = log.where(log.cause_part("class") == "Stress")
    # one fault, no interruption: the rate's upper bound is -ln(0.025) / 1920 = 1.921e-03 per GPU-day
    with pytest.raises(ValueError, match=r"no job interruption: .*upper bound: 1\.921e-03 per GPU-day"):
        report.answer_for_log(only_stress, FLEET, policy=POLICY)


def test_no_spare_pool_without_a_measured_repair_time():
    c = ("Hardware Failure", "GPU", "GPU Lost")
    opened = IncidentLog.build([5.0, 10.0, 20.0], [np.nan] * 3, ["a", "b", "a"], [c] * 3, window=(0, 60))
    instant = IncidentLog.build([5.0, 10.0, 20.0], [5.0, 10.0, 20.0], ["a", "b", "a"], [c] * 3, window=(0, 60))
    for lg in (opened, instant):  # every repair open (mean NaN) or every one zero long (mean 0)
        r = report.answer_for_log(lg, FLEET, 64, policy=POLICY)
        assert r.spares_poisson is r.spares_replay is r.spare_cost_min_per_day is r.elastic_cost_min_per_day is None
        keys = {row.key for row in r.rows()}
        assert not keys & {"spare_job_nodes", "spares_poisson", "spares_replay", "spare_cost_min_per_day"}
    assert math.isnan(report.analyse(opened, FLEET, policy=POLICY).repairs.mean_days)


def test_a_lemon_removal_that_removes_every_later_interruption_still_gives_an_answer():
    c = ("Hardware Failure", "GPU", "GPU Lost")
    # a: 5, 10 (first half: 2 >= threshold 2, removed) and 40 (the only later one): factor 0 / 1 x 4 / 3 = 0
    lg = IncidentLog.build([5.0, 10.0, 20.0, 40.0], [5.5, 10.5, 20.5, 40.5], ["a", "a", "b", "a"], [c] * 4, window=(0, 60))
    r = report.answer_for_log(lg, FLEET, 64, policy=POLICY, lemon_threshold=2)
    assert r.analysis.lemon.factor == 0.0
    assert r.lemon_after is None or r.lemon_after.failures_per_day <= r.job_answer.after.failures_per_day


# ---------------------------------------------------------------------------------- rows, table, json, text
def _answer_ns(n_gpus, per_day, baseline, after, floor):
    return NS(n_gpus=n_gpus, failures_per_day=per_day, baseline=NS(fraction_of_day=baseline),
              after=NS(fraction_of_day=after, floor_fraction=floor))


def _stand_in(analysis, **changes) -> report.LogAnswer:
    """A LogAnswer whose measurements and answers are numbers this test chose (the log and fleet are the fixture's)."""
    a = dataclasses.replace(
        analysis,
        rate_all=RateEstimate(7, 60.0, 4, 8, 3.5e-3, 1.5e-3, 7.5e-3, 0.95),
        rate=RateEstimate(6, 60.0, 4, 8, 2.6e-3, 8.4e-4, 6.1e-3, 0.95),
        dispersion=NS(ratio=2.4, p_value=0.03, zero_nodes=np.int64(1), zero_expected=1.2),
        negbin=NS(shape=2.0, shape_low=0.5, shape_high=9.0, rate_cv=0.7),
        worst=NS(fractions=(0.01, 0.05, 0.9), nodes=(1, 1, 4), observed=(0.5, 0.5, 0.6), poisson=(0.2, 0.25, 0.3)),
        lemon=NS(threshold=3, n_removed=1, capacity_removed=0.25, factor=0.8, factor_low=0.5, factor_high=1.2),
        repeat=NS(share=0.4, poisson_share=0.3), repeat_week=NS(share=0.1, poisson_share=0.05),
        bursts=NS(gap_cv=1.5, gap_cv_sd=0.1, window_min=5.0, coincident_share=0.2, coincident_low=0.1, chance_share=0.01, at_least=4,
                  p_at_least_observed=0.05, p_at_least_poisson=0.001),
        monthly=NS(first_ratio=1.5, p_value=0.04),
        repairs=NS(median_days=0.5, p90_days=2.0, mean_days=0.75, censored=1),
        skipped={"something": "a reason"})
    a = dataclasses.replace(a, **{k: v for k, v in changes.items() if k in {f.name for f in dataclasses.fields(a)}})
    fields = dict(analysis=a, job_gpus=64, fleet_answer=_answer_ns(32, 0.08, 0.1, 0.02, 0.01),
                  job_answer=_answer_ns(64, 0.16, 0.2, 0.03, 0.015), job_low=_answer_ns(64, 0.05, 0.1, 0.01, 0.005),
                  job_high=_answer_ns(64, 0.4, 0.5, 0.06, 0.04), lemon_after=NS(floor_fraction=0.012),
                  log_modes_answer=NS(after=NS(floor_fraction=0.014)), spare_quantile=0.99, job_nodes=8,
                  spares_poisson=3, spares_replay=2, spare_cost_min_per_day=540.0, elastic_cost_min_per_day=90.0)
    fields.update({k: v for k, v in changes.items() if k in fields})
    return report.LogAnswer(**fields)


# every row's value, by hand from the stand-in numbers above and the fixture's report (8 rows read,
# 7 used, 1 rejected), window (60 d), fleet (4 nodes) and levels (6 Hardware Failure, 1 Test)
EXPECTED_ROWS = {
    "log_rows_read": 8, "log_rows_used": 7, "log_rows_ignored": 0, "log_rows_rejected": 1, "window_days": 60.0,
    "fleet_nodes": 4, "nodes_with_fault": 3, "faults": 7, "share_hardware_failure": 100 * 6 / 7, "share_test": 100 / 7,
    "interruptions": 6, "rate_all_per_gpu_day": 3.5e-3, "rate_per_gpu_day": 2.6e-3, "rate_low": 8.4e-4, "rate_high": 6.1e-3,
    "rate_llama3": 419 / (16384 * 54),  # [@llama3] section 3.3.4: 419 unexpected interruptions, 16,384 GPUs, 54 days
    "dispersion_ratio": 2.4, "dispersion_p": 0.03, "zero_nodes": 1, "zero_nodes_poisson": 1.2,
    "negbin_shape": 2.0, "negbin_shape_low": 0.5, "negbin_shape_high": 9.0, "node_rate_cv": 0.7,
    "worst_1pct_share": 50.0, "worst_1pct_poisson": 20.0, "worst_5pct_share": 50.0, "worst_5pct_poisson": 25.0,
    "worst_90pct_share": 60.0, "worst_90pct_poisson": 30.0,
    "lemon_threshold": 3, "lemon_removed": 1, "lemon_capacity_removed": 25.0, "lemon_factor": 0.8,
    "lemon_factor_low": 0.5, "lemon_factor_high": 1.2,
    "repeat_share": 40.0, "repeat_share_poisson": 30.0, "repeat_week_share": 10.0, "repeat_week_poisson": 5.0,
    "gap_cv": 1.5, "burst_share": 20.0, "burst_share_chance": 1.0, "p_day_observed": 5.0, "p_day_poisson": 0.1,
    "first_month_ratio": 1.5, "monthly_p": 0.04,
    "repair_median_h": 12.0, "repair_p90_h": 48.0, "repair_mean_d": 0.75, "repair_censored": 1,
    "spare_job_nodes": 8, "spares_poisson": 3, "spares_replay": 2, "spare_cost_min_per_day": 540.0,
    "elastic_cost_min_per_day": 90.0,
    "fleet_gpus": 32, "fleet_failures_per_day": 0.08, "fleet_baseline_pct": 10.0, "fleet_after_levers_pct": 2.0,
    "fleet_floor_pct": 1.0,
    "job_gpus": 64, "job_failures_per_day": 0.16, "job_baseline_pct": 20.0, "job_after_levers_pct": 3.0, "job_floor_pct": 1.5,
    "job_floor_low_pct": 0.5, "job_floor_high_pct": 4.0, "job_floor_lemon_pct": 1.2, "job_floor_log_modes_pct": 1.4,
}


def test_rows_carry_every_measurement_in_its_unit(analysis):
    rows = _stand_in(analysis).rows()
    got = {r.key: r.value for r in rows}
    assert list(got) == list(EXPECTED_ROWS)  # every row, in the printed order, none twice
    assert got == pytest.approx(EXPECTED_ROWS, rel=1e-12)
    units = {r.key: r.unit for r in rows}
    assert units["repair_median_h"] == "h" and units["repair_mean_d"] == "days" and units["rate_low"] == "per GPU-day"


def test_rows_leave_out_what_was_not_measured(analysis):
    base = set(EXPECTED_ROWS)
    dispersion = {"dispersion_ratio", "dispersion_p", "zero_nodes", "zero_nodes_poisson"}
    negbin = {"negbin_shape", "negbin_shape_low", "negbin_shape_high", "node_rate_cv"}
    worst = {k for k in base if k.startswith("worst_")}
    lemon = {k for k in base if k.startswith("lemon_")}
    cases = [
        (dict(dispersion=None), dispersion),
        (dict(negbin=None), negbin),
        (dict(negbin=NS(shape=math.inf, shape_low=1.0, shape_high=math.inf, rate_cv=0.0)), negbin),  # Poisson-like: no k
        (dict(worst=None), worst),
        (dict(lemon=None, lemon_after=None), lemon | {"job_floor_lemon_pct"}),
        (dict(repeat=None), {"repeat_share", "repeat_share_poisson"}),
        (dict(repeat_week=None), {"repeat_week_share", "repeat_week_poisson"}),
        (dict(bursts=None), {"gap_cv", "burst_share", "burst_share_chance", "p_day_observed", "p_day_poisson"}),
        (dict(monthly=None), {"first_month_ratio", "monthly_p"}),
        (dict(repairs=None), {"repair_median_h", "repair_p90_h", "repair_mean_d", "repair_censored"}),
        (dict(spares_poisson=None, spares_replay=None),
         {"spare_job_nodes", "spares_poisson", "spares_replay", "spare_cost_min_per_day", "elastic_cost_min_per_day"}),
        (dict(spares_replay=None), {"spares_replay"}),
        (dict(log_modes_answer=None), {"job_floor_log_modes_pct"}),
    ]
    for changes, gone in cases:
        keys = [r.key for r in _stand_in(analysis, **changes).rows()]
        assert set(keys) == base - gone, changes


def test_the_table_aligns_labels_values_and_units(analysis):
    ans = _stand_in(analysis)
    rows, lines = ans.rows(), ans.table().splitlines()
    assert len(lines) == len(rows)
    ends, unit_starts = set(), set()
    for r, line in zip(rows, lines):
        value = r.formatted()
        assert line.startswith(r.label) and line == line.rstrip()
        start = line.index(value, len(r.label))
        ends.add(start + len(value))  # values right-aligned in one column
        if r.unit:
            assert line.endswith("  " + r.unit)
            unit_starts.add(len(line) - len(r.unit))
    assert len(ends) == 1 and len(unit_starts) == 1 and unit_starts == {next(iter(ends)) + 2}
    # the longest label is followed by exactly two spaces before the widest column: nothing wider than needed
    # and no wider than needed: the longest label, two spaces, the widest value, two spaces, the unit
    w0, w1 = max(len(r.label) for r in rows), max(len(r.formatted()) for r in rows)
    assert unit_starts == {w0 + 2 + w1 + 2}


def test_as_dict_and_json_give_every_row_the_report_and_what_was_skipped(analysis):
    ans = _stand_in(analysis)
    d = ans.as_dict()
    assert set(d) == set(EXPECTED_ROWS) | {"report", "skipped", "text"}
    assert d["repair_median_h"] == {"label": "repair time of an interrupted node, median", "value": 12.0, "unit": "h"}
    assert d["rate_high"]["label"] == "95 % interval, high"  # the table's indent stripped
    assert d["report"]["rows_read"] == 8 and d["report"]["rejected"] == {"duplicate row (identical to an earlier one)": 1}
    assert d["skipped"] == {"something": "a reason"} and d["text"] == ans.text
    text = ans.to_json()
    back = json.loads(text)
    assert back["zero_nodes"]["value"] == 1.0  # a numpy integer written as a number
    assert back["rate_llama3"]["value"] == pytest.approx(419 / (16384 * 54), rel=1e-12)
    assert text.splitlines()[1].startswith(' "') and not text.splitlines()[1].startswith('  ')  # one-space indent


def test_text_tells_the_logs_story_with_its_numbers(analysis):
    ans = _stand_in(analysis)
    assert ans.text == (
        "6 of the log's 7 faults interrupt a job (the course's classes); on 4 nodes x 8 GPUs over 60 days that is "
        "2.60e-03 per GPU-day (95 % interval 8.40e-04 to 6.10e-03). "
        "The nodes are not identical: their counts have 2.4 times the Poisson variance (p = 0.03) and the worst 90 % of "
        "nodes carry 60% of the interruptions (30% if identical). "
        "Yet removing the 1 nodes with 3 or more in the first half (25.0% of the capacity) changes the second half's "
        "rate by x 0.80 (interval 0.50 to 1.20): out of sample, past lemons are not the future's. "
        "Faults are not independent: the inter-arrival CV is 1.50 (Poisson 1) and 20% come within 5 min of one on "
        "another node (1.0% by chance). "
        "Nor stationary: one rate over the 30-day periods has p = 0.04. "
        "A repair takes 12 h at the median and 2.0 days at the 90th percentile, so a 8-node job needs 3 spares "
        "(2 replaying the log) to find one free 99 % of the time. "
        "At this rate a 64-GPU job stops 0.16 times a day; after the levers it loses 3.000% of the day, of which the "
        "floor is 1.500% (0.500% to 4.000% over the rate's interval).")


def test_text_says_the_lemon_lever_is_clamped_at_a_factor_of_one_or_more(analysis):
    at_one = _stand_in(analysis, lemon=NS(threshold=3, n_removed=1, capacity_removed=0.25, factor=1.0, factor_low=0.5,
                                          factor_high=1.5)).text
    assert "by x 1.00 (interval 0.50 to 1.50): out of sample, past lemons are not the future's, so the lemon lever is " \
           "clamped at x 1.00: removal buys nothing here." in at_one
    assert "clamped" not in _stand_in(analysis).text  # 0.8: the lever is used


def test_text_leaves_out_the_sentences_of_what_was_not_measured(analysis):
    full = _stand_in(analysis).text
    assert "The nodes are not identical" in full
    for changes in (dict(dispersion=None), dict(worst=None)):  # the sentence needs both
        assert "The nodes are not identical" not in _stand_in(analysis, **changes).text
    assert "Yet removing" not in _stand_in(analysis, lemon=None).text
    assert "Faults are not independent" not in _stand_in(analysis, bursts=None).text
    assert "Nor stationary" not in _stand_in(analysis, monthly=None).text
    for changes in (dict(repairs=None), dict(spares_poisson=None)):  # the repair sentence needs both
        assert "A repair takes" not in _stand_in(analysis, **changes).text
    assert _stand_in(analysis, dispersion=None, lemon=None, bursts=None, monthly=None, repairs=None).text.count(". ") == 1


def test_the_real_answer_prints_every_section_with_the_logs_numbers(ans60):
    # every row of the stand-in is there (the worst-node rows at the default fractions 1, 5 and 10 %) but
    # the gamma shape's: counts [3, 2, 1, 0] have the maximum-likelihood variance 5 / 4 below their mean
    # 3 / 2, so the negative binomial's best k is infinite (Poisson) and has no row
    keys = [r.key for r in ans60.rows()]
    negbin = {"negbin_shape", "negbin_shape_low", "negbin_shape_high", "node_rate_cv"}
    assert keys == [k.replace("worst_90pct", "worst_10pct") for k in EXPECTED_ROWS if k not in negbin]
    assert math.isinf(ans60.analysis.negbin.shape)
    rows = {r.key: r.value for r in ans60.rows()}
    assert rows["faults"] == 7 and rows["interruptions"] == 6 and rows["nodes_with_fault"] == 3
    assert rows["repair_median_h"] == 6.0 and rows["repair_p90_h"] == 24.0  # 0.25 and 1 day
    assert rows["spares_poisson"] == 2 and rows["spare_job_nodes"] == 8
    assert len(ans60.table().splitlines()) == len(keys)


def test_rows_of_a_log_without_faults_count_no_node_and_no_level(analysis):
    empty = IncidentLog.build([], [], [], window=(0, 60))
    rows = {r.key: r.value for r in _stand_in(analysis, log=empty).rows()}
    assert rows["nodes_with_fault"] == 0 and not any(k.startswith("share_") for k in rows)
    assert rows["window_days"] == 60.0 and rows["log_rows_read"] == 0


def test_the_records_cannot_be_changed_after_the_fact(ans60):
    with pytest.raises(dataclasses.FrozenInstanceError):
        ans60.job_gpus = 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        ans60.analysis.rate = None


def test_text_names_the_quantile_the_spare_pool_was_sized_for(analysis):
    text = _stand_in(analysis, spare_quantile=0.9).text
    assert "to find one free 90 % of the time" in text


def _disp(p):
    return NS(ratio=2.4, p_value=p, zero_nodes=np.int64(1), zero_expected=1.2)


def _bursts(gap_cv, sd, low, chance=0.01):
    return NS(gap_cv=gap_cv, gap_cv_sd=sd, window_min=5.0, coincident_share=0.2, coincident_low=low, chance_share=chance,
              at_least=4, p_at_least_observed=0.05, p_at_least_poisson=0.001)


@pytest.mark.parametrize("p, differ", [(0.03, True), (0.05, False), (0.3, False)])
def test_text_says_the_nodes_differ_only_when_the_dispersion_test_rejects_poisson_at_5_percent(analysis, p, differ):
    text = _stand_in(analysis, dispersion=_disp(p)).text
    assert ("The nodes are not identical: their counts" in text) is differ
    assert ("Nothing here says the nodes differ: their counts" in text) is not differ


@pytest.mark.parametrize("p, steady", [(0.04, False), (0.05, True), (0.5, True)])
def test_text_says_the_rate_is_not_stationary_only_below_5_percent(analysis, p, steady):
    text = _stand_in(analysis, monthly=NS(first_ratio=1.5, p_value=p)).text
    assert (f"One rate fits the 30-day periods (p = {p:.1g})." in text) is steady
    assert ("Nor stationary" in text) is not steady


# bursts: together when the gap CV is more than 2 standard errors above Poisson's 1 (by hand: 1 + 2 x 0.1 = 1.2),
# or when the coincident share's interval lies above the chance share
@pytest.mark.parametrize("gap_cv, sd, low, together", [
    (1.5, 0.1, 0.0, True),     # CV 1.5 > 1.2
    (1.2, 0.1, 0.01, False),   # CV at 1.2 exactly, the coincident interval reaching chance: independent
    (1.25, 0.1, 0.0, True),    # just above 1.2
    (1.25, 0.2, 0.0, False),   # 1 + 2 x 0.2 = 1.4: within the spread
    (0.9, 0.1, 0.02, True),    # the CV says nothing, the coincident share does
])
def test_text_says_faults_come_together_only_beyond_poissons_spread(analysis, gap_cv, sd, low, together):
    text = _stand_in(analysis, bursts=_bursts(gap_cv, sd, low)).text
    assert ("Faults are not independent: the inter-arrival CV" in text) is together
    assert ("Nothing here shows faults coming together" in text) is not together


def test_node_events_that_name_more_nodes_than_the_fleet_are_refused():
    c = ("Slurm node", "DOWN", "Not responding")
    events = IncidentLog.build([1.0, 2.0, 3.0], [1.5, 2.5, 3.5], ["n1", "n2", "n3"], [c, c, c], window=(0.0, 10.0),
                               format="slurm-events")
    job = IncidentLog.build([1.0], [1.1], ["n1"], [("Slurm", "NODE_FAIL", "exit 0:0")], window=(0.0, 10.0), format="sacct")
    with pytest.raises(ValueError, match=r"fleet.n_nodes must be >= the 3 distinct nodes in the node events \(got 2\)"):
        report.analyse(job, Fleet(2, 8), node_events=events)
    assert report.analyse(job, Fleet(3, 8), node_events=events).node_log is not None


def test_the_measured_reschedule_rows_and_sentence_with_and_without_the_answers_scenario(analysis):
    rs = report.Reschedule(np.array([120.0, 150.0, 600.0, 60.0]), 1)
    # by hand: sorted 60, 120, 150, 600; the median (120 + 150) / 2 = 135; q = 0.1 at position 0.3: 60 + 0.3 x 60 = 78;
    # q = 0.9 at position 2.7: 150 + 0.7 x 450 = 465
    with_scen = _stand_in(analysis, reschedule=rs, job_answer=NS(**vars(_answer_ns(64, 0.16, 0.2, 0.03, 0.015)),
                                                                 scenario=NS(reschedule_min=2.79)))
    d = with_scen.as_dict()
    assert [d[k]["value"] for k in ("reschedule_count", "reschedule_median_s", "reschedule_p10_s", "reschedule_p90_s",
                                    "reschedule_min_s", "reschedule_max_s", "reschedule_open")] == pytest.approx(
        [4, 135.0, 78.0, 465.0, 60.0, 600.0, 1])
    assert d["reschedule_assumed_min"]["value"] == 2.79
    assert ("Slurm's accounting times the reschedule, End of the failed attempt to Start of the next: 135 s at the median "
            "over 4 requeues (shortest 60 s, longest 600 s), measured, 1 more not rescheduled before the log ends. That is "
            "the scheduler's share only (the job's own start-up comes after its Start): the answer keeps the course's "
            "reschedule stage of 2.79 min (assumed).") in with_scen.text
    bare = _stand_in(analysis, reschedule=report.Reschedule(np.array([120.0]), 0))
    assert "reschedule_assumed_min" not in bare.as_dict()
    assert "(the job's own start-up comes after its Start). " in bare.text and "more not rescheduled" not in bare.text


def test_only_a_sacct_log_with_several_nodes_an_interruption_is_job_level():
    c = ("Slurm", "NODE_FAIL", "exit 0:0")
    assert report.node_attribution(IncidentLog.build([], [], [], window=(0.0, 1.0), format="sacct")) is None
    small_then_large = IncidentLog.build([1.0, 2.0], [1.1, 2.1], ["n[1-2]", "n[1-4]"], [c, c], window=(0.0, 10.0), format="sacct")
    assert "(4 in its largest attempt)" in report.node_attribution(small_then_large)
    # the job's size is its largest attempt's: 4 nodes, so a fleet of 3 is refused and one of 4 rated
    with pytest.raises(ValueError, match=r"the 4 nodes the log's largest attempt ran on \(got 3\)"):
        report.analyse(small_then_large, Fleet(3, 8))
    assert report.analyse(small_then_large, Fleet(4, 8)).rate.rate_per_gpu_day == pytest.approx(2 / (4 * 8 * 10))


def test_node_attribution_reads_hostlists_only_in_sacct_and_refuses_a_missing_node_list(tmp_path):
    from course_lib.incidents.report import node_attribution

    # a CSV log's node names are names, even one that looks like a Slurm hostlist
    p = tmp_path / "t.csv"
    p.write_text("node,start,end\ngpu[01-02],1.0,2\n")
    assert node_attribution(inc.read_csv(p)) is None
    # a sacct interruption with no NodeList (empty field): no node to charge it to, so no per-node analyses
    s = tmp_path / "s.txt"
    s.write_text("JobID|State|Start|End|NodeList|ExitCode\n"
                 "5|NODE_FAIL|2024-05-01T00:00:00|2024-05-02T00:00:00||0:0\n"
                 "6|NODE_FAIL|2024-05-01T00:00:00|2024-05-02T00:00:00|n1|0:0\n")
    assert node_attribution(inc.read_sacct(s, window=(0, 5))) is not None
    s.write_text("JobID|State|Start|End|NodeList|ExitCode\n6|NODE_FAIL|2024-05-01T00:00:00|2024-05-02T00:00:00|n1|0:0\n")
    assert node_attribution(inc.read_sacct(s, window=(0, 5))) is None  # one named node: attributed
