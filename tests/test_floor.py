"""course_lib.floor: the floor lambda (D + R), the after-levers loss, ETTR (Kokolis et al.), fewer failures."""
from __future__ import annotations

import math

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from course_lib import MINUTES_PER_DAY, Scenario
from course_lib import floor as fl
from course_lib import interval as iv
from course_lib import restart as rs

finite = dict(allow_nan=False, allow_infinity=False)
rates = st.floats(0.05, 50.0, **finite)
minutes = st.floats(0.0, 30.0, **finite)
writes = st.floats(1e-6, 5.0, **finite)


def budget(lam=2.0, detect=5.0, resched=3.0, reload=2.0, rewind=5.0, write=0.0):
    return rs.RestartBudget(lam, rs.RestartStages(detect, resched, reload, rewind), write)


def at_best(b, delta=None, min_interval_min=0.0):
    """The day of ``b`` at its best interval for write cost ``delta`` (None: the budget's)."""
    return rs.checkpoint_at_optimum(b, b.write_cost_min if delta is None else delta, min_interval_min)


# ----------------------------------------------------------------- the floor
@settings(max_examples=60, deadline=None)
@given(lam=rates, d=minutes, s=minutes, r=minutes, delta=writes)
def test_loss_equals_waste_fraction_at_the_optimum(lam, d, s, r, delta):
    f = at_best(budget(lam, d, s, r), delta)
    m = MINUTES_PER_DAY / lam
    tau = math.sqrt(2 * delta * m)
    assert f.interval_min == pytest.approx(tau, rel=1e-12)
    assert f.interval_min == pytest.approx(iv.young_interval(delta, m), rel=1e-12)
    assert f.fraction_of_day == pytest.approx(iv.waste_fraction(tau, delta, m, d + s + r), rel=1e-12)
    # rewind and writes are equal at Young's optimum and sum to sqrt(2 delta lambda T)
    assert f.rewind_minutes_per_day == pytest.approx(f.write_minutes_per_day, rel=1e-9)
    assert f.checkpoint_minutes_per_day == pytest.approx(math.sqrt(2 * delta * lam * MINUTES_PER_DAY), rel=1e-9)
    assert f.floor_minutes_per_day == pytest.approx(lam * (d + s + r), rel=1e-12, abs=1e-15)


@settings(max_examples=40, deadline=None)
@given(lam=rates, d=minutes, s=minutes, r=minutes)
def test_after_levers_loss_tends_to_the_floor_as_the_write_cost_vanishes(lam, d, s, r):
    b = budget(lam, d, s, r)
    losses = [at_best(b, delta).minutes_per_day for delta in (1.0, 1e-2, 1e-4, 1e-6, 1e-8)]
    gaps = [x - at_best(b, 0.0).floor_minutes_per_day for x in losses]
    assert all(g > 0 for g in gaps) and all(a > b_ for a, b_ in zip(gaps, gaps[1:]))
    assert gaps[-1] == pytest.approx(math.sqrt(2e-8 * lam * MINUTES_PER_DAY), rel=1e-6)  # sqrt(2 delta lambda T) -> 0
    zero = at_best(b, 0.0)
    assert zero.minutes_per_day == zero.floor_minutes_per_day and zero.interval_min == 0.0


def test_floor_symbolically():
    lam, D, R, delta, T, tau = sp.symbols("lambda D R delta T tau", positive=True)
    loss = lam * (D + R) + lam * tau / 2 + delta * T / tau
    tau_star = [t for t in sp.solve(sp.diff(loss, tau), tau) if t.is_positive][0]
    at_opt = sp.simplify(loss.subs(tau, tau_star))
    assert sp.simplify(at_opt - (lam * (D + R) + sp.sqrt(2 * delta * lam * T))) == 0
    assert sp.expand(sp.limit(at_opt, delta, 0) - lam * (D + R)) == 0


def test_minimum_interval_bound_and_at_optimal_interval():
    b = budget(write=0.0)
    f = at_best(b, 1e-4, min_interval_min=5.0)
    assert f.interval_min == 5.0
    assert f.minutes_per_day > at_best(b, 1e-4).minutes_per_day
    out = rs.checkpoint_at_optimum(b, 0.5)
    assert out.interval_min == pytest.approx(math.sqrt(2 * 0.5 * b.mtbf_min))
    assert out.write_cost_min == 0.5 and out.stages.detect == b.stages.detect
    # the course's after-levers budget (restart.waterfall) is at the optimum already
    steps = rs.waterfall(rs.baseline_budget(Scenario()), rs.default_levers(Scenario(), modes=False))
    after = steps[-1].after
    assert at_best(after).minutes_per_day == pytest.approx(after.minutes_per_day, rel=1e-12)


def test_floor_rejects_bad_input_naming_the_parameter():
    with pytest.raises(ValueError, match="write_cost_min"):
        at_best(budget(), -1.0)
    with pytest.raises(ValueError, match="min_interval_min"):
        at_best(budget(), 0.1, min_interval_min=float("nan"))
    with pytest.raises(ValueError, match="write_cost_min"):
        rs.checkpoint_at_optimum(budget(), -0.1)


# ----------------------------------------------------------------- ETTR
def test_ettr_reproduces_kokolis_projections():
    k = fl.kokolis_projection()
    # r_f per node-day -> per GPU-day: the GPUs per node cancel in N_nodes r_f
    assert k.rate_per_gpu_day * k.n_gpus == pytest.approx(k.rf_per_node_day * k.n_gpus / k.gpus_per_node)
    assert round(k.ettr(k.interval_hourly_min), 1) == k.ettr_hourly
    assert round(k.ettr(k.interval_short_min), 2) == k.ettr_short
    assert round(k.mttf_hours_at(k.n_gpus), 1) == k.mttf_hours
    assert round(k.mttf_hours_at(k.large_n_gpus), 2) == k.large_mttf_hours


@settings(max_examples=60, deadline=None)
@given(n=st.integers(8, 200_000), rate=st.floats(1e-5, 2e-3, **finite), u0=minutes,
       dt=st.floats(0.1, 120.0, **finite), w=st.floats(0.0, 5.0, **finite))
def test_ettr_properties(n, rate, u0, dt, w):
    e = fl.ettr(n, rate, u0, dt, w)
    assert 0.0 <= e <= 1.0
    assert fl.ettr(2 * n, rate, u0, dt, w) <= e + 1e-15  # a bigger fleet never helps
    lam = n * rate / MINUTES_PER_DAY
    assert fl.ettr(n, rate, u0, dt, 0.0) == pytest.approx(max(0.0, 1 - lam * (u0 + dt / 2)))
    # to first order ETTR = 1 - waste_fraction (the difference is second order)
    if w > 0 and lam * (u0 + dt / 2) < 0.5:  # away from the clip at 0
        waste = iv.waste_fraction(dt, w, 1 / lam, u0)
        assert abs(e - (1 - waste)) <= (w / dt) ** 2 + lam * (u0 + dt / 2) * w / dt + 1e-12


def test_ettr_rejects_bad_input():
    for kwargs, name in [(dict(n_gpus=0), "n_gpus"), (dict(rate_per_gpu_day=-1e-4), "rate_per_gpu_day"),
                         (dict(restart_overhead=-1), "restart_overhead"), (dict(interval=0), "interval"),
                         (dict(write_cost=float("inf")), "write_cost")]:
        args = dict(n_gpus=1024, rate_per_gpu_day=5e-4, restart_overhead=5.0, interval=60.0, write_cost=0.0) | kwargs
        with pytest.raises(ValueError, match=name):
            fl.ettr(**args)


def test_regimes_and_the_90_percent_fleet_size():
    regimes = fl.default_regimes()
    assert [r.name for r in regimes] == ["hourly, blocking", "async writes", "in-memory snapshots"]
    band = 5e-4
    sizes = [fl.fleet_size_at_ettr(r, band) for r in regimes]
    assert sizes[0] < sizes[1] < sizes[2]  # each better way to checkpoint scales further
    for r, n in zip(regimes, sizes):
        assert r.ettr(n, band) == pytest.approx(0.9, abs=1e-9)
    # the in-memory snapshot shrinks with the fleet (the shard does) and is never below the copy
    mem = regimes[2]
    assert mem.write_cost(2048) == pytest.approx(2 * mem.write_cost(4096))
    assert regimes[1].interval(131072, 8e-4) == pytest.approx(regimes[1].min_interval_min)
    # a faster restart moves the break further out
    faster = mem.with_restart_overhead(0.5)
    assert fl.fleet_size_at_ettr(faster, band) > sizes[2]
    assert fl.fleet_size_at_ettr(mem, band, lo=8, hi=16) is None
    with pytest.raises(ValueError, match="target"):
        fl.fleet_size_at_ettr(mem, band, target=1.5)


# ----------------------------------------------------------------- fewer failures
def test_table5_shares_come_from_the_counts():
    assert fl.table5_share(["Faulty GPU"]) == pytest.approx(148 / 419)
    assert fl.table5_share(fl.TOP_TABLE5_CAUSES) == pytest.approx((148 + 72) / 419)
    assert fl.rate_without_causes(1e-3, ["Faulty GPU", "GPU HBM3 Memory"]) == pytest.approx(1e-3 * 199 / 419)
    with pytest.raises(ValueError, match="components"):
        fl.table5_share(["Cosmic rays"])
    with pytest.raises(ValueError, match="rate_per_gpu_day"):
        fl.rate_without_causes(0.0, ["Faulty GPU"])


def test_lemon_node_factor_from_job_failure_shares():
    f = fl.floor_inputs()
    p0, p1 = f["lemon_job_failure_before"].value / 100, f["lemon_job_failure_after"].value / 100
    assert fl.lemon_node_factor() == pytest.approx(math.log(1 - p1) / math.log(1 - p0))
    assert fl.lemon_node_factor() < p1 / p0 < 1  # Poisson conversion is a bit stronger than the ratio


@settings(max_examples=30, deadline=None)
@given(factor=st.floats(0.01, 1.0, **finite), delta=st.floats(0.0, 1.0, **finite))
def test_fewer_failures_scales_the_floor_and_reoptimises_the_interval(factor, delta):
    b = rs.checkpoint_at_optimum(budget(), delta) if delta > 0 else budget()
    out = fl.fewer_failures(b, factor)
    assert out.failures_per_day == pytest.approx(factor * b.failures_per_day)
    assert at_best(out).floor_minutes_per_day == pytest.approx(factor * at_best(b).floor_minutes_per_day)
    if delta > 0:
        assert out.interval_min == pytest.approx(math.sqrt(2 * delta * out.mtbf_min))
    assert out.minutes_per_day <= b.minutes_per_day + 1e-12


def test_rate_levers_are_sourced_and_validated():
    levers = fl.rate_levers()
    assert {lv.name for lv in levers} == {"lemon-node removal", "no faulty GPU / HBM3"}
    for lv in levers:
        assert 0 < lv.factor < 1 and lv.source and lv.stage == "rate"
        assert lv.saving(budget()) > 0
    with pytest.raises(ValueError, match="factor"):
        fl.RateLever("x", 1.5, "", "")
    with pytest.raises(ValueError, match="factor"):
        fl.fewer_failures(budget(), 0.0)


def test_regime_write_costs_from_data():
    pfs, asy, mem = fl.default_regimes()
    assert pfs.write_cost(4096) == pytest.approx(5.0, rel=1e-15, abs=0)  # Kokolis: w_cp about 5 min
    assert asy.write_cost(4096) == pytest.approx(0.59 / 60, rel=1e-15, abs=0)  # ByteCheckpoint's blocking part
    m = MINUTES_PER_DAY / (4096 * 5e-4)
    assert asy.interval(4096, 5e-4) == pytest.approx(max(iv.young_interval(0.59 / 60, m), 51 / 60), rel=1e-12, abs=0)
    assert asy.interval(4096, 0.5) == pytest.approx(51 / 60, rel=1e-12, abs=0)  # at a high rate the 51 s save binds
    assert mem.write_cost(4096) == pytest.approx(405e9 * 12 / 4096 / 1e9 / 55 / 60, rel=1e-12, abs=0)
    assert mem.write_cost(16384) == pytest.approx(mem.write_cost(4096) / 4, rel=1e-12, abs=0)


# ----------------------------------------------------------------- the dashboard and figures
def test_floor_text_is_what_the_dashboard_shows():
    import matplotlib

    matplotlib.use("Agg")
    from course_lib.answer import answer
    from course_lib.widgets import floor as wf

    d = wf.dashboard_defaults()
    a = answer()
    assert d["n_gpus"] == 4096 and d["rate_per_gpu_day"] == pytest.approx(a.rate_per_gpu_day)
    text = wf.floor_text()
    assert f"{a.after.floor_minutes_per_day:.2f} min/day" in text and "4,096 GPUs" in text
    assert f"{100 * a.after.floor_fraction:.3f} %" in text
    # the text follows the fleet slider: the floor is linear in the fleet at a fixed rate
    bigger = wf.dashboard_answer(n_gpus=8192)
    s8 = Scenario().replace(n_gpus=8192)  # twice the failures; the shard, so the reload from memory, halves
    from course_lib.modes import per_mode_floor

    # the per-mode floor sum_k lambda_k (D_k + R_k + T_iter / 2 + latency_k) (issue 12)
    assert bigger.after.floor_minutes_per_day == pytest.approx(sum(per_mode_floor(s8).values()), rel=1e-12, abs=0)
    assert bigger.after.floor_minutes_per_day == pytest.approx(answer(s8).after.floor_minutes_per_day, rel=1e-15, abs=0)
    assert "8,192 GPUs" in wf.floor_text(8192)
    # the levers' slider values set the floor: lambda (D + R)
    e = wf.dashboard_answer(detect_s=60, restart_s=120, reload_ms=60_000)
    assert e.after.floor_minutes_per_day == pytest.approx(sum(per_mode_floor(e.scenario).values()), rel=1e-12)
    assert wf.floor_html(8192) == f"<b>{wf.floor_text(8192).replace('&', '&amp;')}</b>"
    with pytest.raises(ValueError, match="n_gpus"):
        wf.floor_text(0)

    box = wf.dashboard()
    results = [w for w in _walk(box) if "course-result" in getattr(w, "_dom_classes", ())]
    assert len(results) == 1 and results[0].value == wf.floor_html()
    sliders = {w.description: w for w in _walk(box) if hasattr(w, "continuous_update")}
    assert set(wf.SLIDER_LABELS.values()) <= set(sliders)
    assert not any(w.continuous_update for w in sliders.values())
    sliders["GPUs in the job"].value = 16384
    assert results[0].value == wf.floor_html(16384)
    with pytest.raises(ValueError, match="overrides"):
        wf.dashboard(fleet=3)


def _walk(widget):
    yield widget
    for child in getattr(widget, "children", ()):
        yield from _walk(child)


def test_floor_figures_draw():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from course_lib.answer import answer
    from course_lib.plots import floor as pf

    a = answer()
    ax = pf.answer_waterfall(a)
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels[0] == "baseline" and labels[-1] == "floor λ(D+R)" and len(labels) == len(a.steps) + 3
    band = {"band_low": 3e-4, "central": 5e-4, "band_high": 8e-4}
    ax = pf.ettr_vs_fleet(fl.default_regimes(), band, [1024, 4096, 131072])
    central = [ln for ln in ax.get_lines() if ln.get_label() == "hourly, blocking"][0]
    assert central.get_ydata() == pytest.approx([fl.default_regimes()[0].ettr(n, 5e-4) for n in (1024, 4096, 131072)], rel=1e-12)
    ax = pf.floor_alternatives({"after": a.after, "fewer": a.fewer[0][1]})
    bars = [p.get_width() for p in ax.patches]
    assert bars[0::2] == pytest.approx([a.after.floor_minutes_per_day, a.fewer[0][1].floor_minutes_per_day])
    assert bars[1::2] == pytest.approx([a.after.checkpoint_minutes_per_day, a.fewer[0][1].checkpoint_minutes_per_day])
    ax = pf.floor_vs_fleet({"after": 0.6}, band, [1024, 131072])
    (line,) = ax.get_lines()
    assert line.get_ydata() == pytest.approx([100 * n * 5e-4 * 0.6 / MINUTES_PER_DAY for n in (1024, 131072)], rel=1e-12)
    plt.close("all")


# ----------------------------------------------------------------- what the mutation score found untested
def test_fewer_failures_accepts_one_and_rejects_more_than_one():
    b = budget(write=0.01)
    same = fl.fewer_failures(b, 1.0)  # factor 1: the same failures, the interval re-optimised
    assert same.failures_per_day == b.failures_per_day
    assert same.interval_min == pytest.approx(iv.young_interval(0.01, b.mtbf_min), rel=1e-12, abs=0)
    free = fl.fewer_failures(budget(write=0.0), 0.5)  # no write cost: the stages are kept as they are
    assert free.stages == budget().stages and free.failures_per_day == 1.0
    for bad in (1.0 + 1e-12, 2.0):
        with pytest.raises(ValueError, match=r"factor must be a finite number in \(0, 1\]"):
            fl.fewer_failures(b, bad)
        with pytest.raises(ValueError, match=r"factor must be a finite number in \(0, 1\]"):
            fl.RateLever("x", bad, "", "")
    assert fl.RateLever("x", 1.0, "", "").factor == 1.0


def test_rate_lever_saving_is_the_minutes_it_removes():
    b = budget(write=0.01)
    lever = fl.RateLever("half", 0.5, "", "")
    assert lever.saving(b) == pytest.approx(b.minutes_per_day - fl.fewer_failures(b, 0.5).minutes_per_day, rel=1e-15, abs=0)
    assert lever.saving(b) > 0 and lever.stage == "rate"


def test_records_are_frozen():
    import dataclasses

    for record in (fl.kokolis_projection(), fl.rate_levers()[0], fl.default_regimes()[0]):
        with pytest.raises(dataclasses.FrozenInstanceError):
            record.name = "changed" if hasattr(record, "name") else None
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(record, next(iter(vars(record))), None)


def test_regime_defaults_are_free_writes_without_a_bound():
    r = fl.CheckpointRegime("plain", 5.0)
    assert (r.write_cost_min, r.state_bytes, r.min_interval_min, r.interval_min, r.write_bandwidth_gb_s) == (0.0, 0.0, 0.0, None, None)
    assert r.write_cost(4096) == 0.0 and r.interval(4096, 5e-4) == 0.0  # continuous checkpoints: no write, no interval
    renamed = r.with_restart_overhead(1.0)
    assert renamed.name == "plain" and renamed.restart_overhead_min == 1.0
    assert r.with_restart_overhead(1.0, "fast").name == "fast"


def test_fleet_size_at_ettr_bounds_and_defaults():
    mem = fl.default_regimes()[2]
    n90 = fl.fleet_size_at_ettr(mem, 5e-4)
    assert mem.ettr(n90, 5e-4) == pytest.approx(0.9, abs=1e-9)
    assert fl.fleet_size_at_ettr(mem, 5e-4, lo=8.0) == n90  # the default search starts at one 8-GPU node
    assert fl.fleet_size_at_ettr(mem, 5e-4, lo=16.0) == pytest.approx(n90, rel=1e-9)
    assert fl.fleet_size_at_ettr(mem, 5e-4, lo=2 * n90) == 2 * n90  # already below the target at lo
    assert fl.fleet_size_at_ettr(mem, 5e-4, hi=n90 / 2) is None  # not yet below it at hi
    exactly = fl.fleet_size_at_ettr(mem, 5e-4, target=mem.ettr(64.0, 5e-4), lo=64.0)
    assert exactly == 64.0  # at lo the ETTR equals the target: lo is the answer
    for lo, hi in ((100.0, 100.0), (100.0, 50.0)):
        with pytest.raises(ValueError, match="hi must be > lo"):
            fl.fleet_size_at_ettr(mem, 5e-4, lo=lo, hi=hi)
    assert fl.fleet_size_at_ettr(mem, 5e-4, hi=n90 * (1 + 1e-12)) == pytest.approx(n90, rel=1e-9)


def test_dashboard_sentence_never_prints_a_loss_above_100_percent():
    import re

    from course_lib.widgets.floor import FLEET_SIZES, floor_text

    text = floor_text(n_gpus=max(FLEET_SIZES), rate_per_gpu_day=10**-2.5)  # the sliders' far corner
    assert "faster than the job restarts" in text
    assert all(float(p) <= 100 for p in re.findall(r"([\d.]+) %", text))
    assert "Floor" in floor_text()  # the course's fleet keeps the floor sentence
