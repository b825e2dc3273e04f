"""course_lib.floor and course_lib.projection: the floor's terms, per mode and per group; ETTR at scale (notebook 08)."""
from __future__ import annotations

import dataclasses
import re

import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from course_lib import MINUTES_PER_DAY, Scenario
from course_lib import floor as fl
from course_lib import levers as lv
from course_lib import projection as pj
from course_lib.answer import answer
from course_lib.restart import RestartBudget, RestartStages


# ----------------------------------------------------------------- the floor as named terms
def test_floor_terms_are_lambda_times_minutes_and_add_up():
    a = answer(spread_draws=0)
    f = a.after
    terms = fl.terms(f)
    assert [t.symbol for t in terms] == ["lambda (D + R)", "lambda T_step / 2", "lambda_sdc (latency + persisted rewind)"]
    assert sum(t.minutes_per_day for t in terms) == pytest.approx(f.floor_minutes_per_day, rel=1e-12)
    lam = f.failures_per_day
    s = a.scenario
    dr = sum(m.share * (m.detect + m.reschedule + m.reload) for m in f.modes)
    assert terms[0].minutes_per_day == pytest.approx(lam * dr, rel=1e-12)  # below saturation: exactly lambda x minutes
    assert terms[1].minutes_per_day == pytest.approx(lam * (1 - s.modes.share("sdc")) * s.step_min / 2, rel=1e-12)
    sdc = s.modes.share("sdc") * (s.modes.sdc_latency_min + s.checkpoint_interval_min / 2)
    assert terms[2].minutes_per_day == pytest.approx(lam * sdc, rel=1e-12)
    line = fl.terms_sentence(f)
    printed = [float(x) for x in re.findall(r"[0-9]+\.[0-9]+", line.split("min/day")[0])]
    for x, v in zip(printed, [t.minutes_per_day for t in terms] + [f.floor_minutes_per_day]):
        assert abs(x - v) <= 0.005 + 1e-12, line  # each printed number is its value correctly rounded
    adds = round(sum(printed[:-1]), 2) == printed[-1]
    assert (" = " in line) == adds and (" ≈ " in line) == (not adds), line  # "≈" exactly where the printed terms miss


def test_no_checkpoint_lever_moves_the_floor_but_the_persisted_interval_does():
    a = answer(spread_draws=0)
    f = a.after
    cheaper = lv.in_memory_checkpoint(f, f.write_cost_min / 10, f.interval_bound_min)
    assert cheaper.floor_minutes_per_day == pytest.approx(f.floor_minutes_per_day, rel=1e-12)
    halved = dataclasses.replace(f, persisted_interval_min=f.persisted_interval_min / 2)
    assert halved.floor_minutes_per_day < f.floor_minutes_per_day  # the SDC term rests on a checkpoint setting


def test_the_floor_is_the_limit_of_free_writes_symbolically():
    lam, X, s, tau, delta, T = sp.symbols("lambda X s tau delta T", positive=True)
    lost = 1 - (1 - lam * (X + s * tau / 2) / T) * tau / (tau + delta)  # the day model below saturation
    floor = sp.limit(sp.limit(lost, delta, 0), tau, 0)
    assert sp.simplify(floor - lam * X / T) == 0  # with a step -> 0 the floor is lambda X, whatever the write cost was


@given(st.floats(0.01, 5e3), st.floats(0.0, 30.0), st.floats(0.01, 30.0))
def test_per_mode_sums_to_the_floor(lam, d, r):
    day = RestartBudget.single(lam, RestartStages(d, r, 0.5, 1.0), 0.01, step_min=0.2)
    assert sum(fl.per_mode(day).values()) == pytest.approx(day.floor_minutes_per_day, rel=1e-9, abs=1e-12)
    assert day.floor_minutes_per_day <= day.minutes_per_day + 1e-9 <= MINUTES_PER_DAY + 1e-9


# ----------------------------------------------------------------- per-step fault tolerance
def test_one_group_is_the_floor_and_more_groups_lower_it():
    s = Scenario()
    day = dataclasses.replace(lv.all_levers_day(s), idle_share=0.0)
    r = s.replicas
    assert fl.per_mode_groups(day, 1, r.stall_min, r.rejoin_min) == fl.per_mode(day)
    floors = [sum(fl.per_mode_groups(day, g, r.stall_min, r.rejoin_min).values()) for g in (1, 2, 8, 32)]
    assert floors == sorted(floors, reverse=True)
    g32 = fl.per_mode_groups(day, 32, r.stall_min, r.rejoin_min)
    assert g32["sdc"] == pytest.approx(fl.per_mode(day)["sdc"])  # every replica averaged the corruption: it still rewinds


def test_strategies_and_groups():
    s = Scenario()
    by = fl.by_strategy(s)
    whole, spare, ft = (sum(by[k].values()) for k in fl.STRATEGIES)
    assert ft < spare < whole
    assert fl.groups_for(s) == 32
    with pytest.raises(ValueError, match="groups must be an integer in"):
        fl.groups_for(s.replace(groups=64))


def test_spare_break_even_is_where_the_spare_stops_paying():
    s = Scenario()
    a = answer(s, spread_draws=0)
    be = a.spare.break_even_min
    just_above = answer(s.replace(reschedule_min=be * 1.02), spread_draws=0).spare
    just_below = answer(s.replace(reschedule_min=be * 0.98), spread_draws=0).spare
    assert just_above.net > 0 > just_below.net
    assert not a.spare.pulled and a.spare.net < 0 and a.spare.reschedule_min < be
    assert a.spare.net == pytest.approx(a.spare.gross - a.spare.cost)
    big = answer(s.replace(n_gpus=16384), spread_draws=0).spare
    assert big.pulled and big.net > 0


def test_sdc_term_grows_with_the_latency():
    f = answer(spread_draws=0).after
    values = [fl.sdc_minutes_per_day(f, lat) for lat in (5.0, 60.0, 1440.0)]
    assert values == sorted(values)
    assert values[1] == pytest.approx(fl.per_mode(f)["sdc"], rel=1e-12)  # the assumed hour is the floor's


# ----------------------------------------------------------------- ETTR at scale
def test_kokolis_formula_reproduces_their_printed_numbers_and_is_the_course_model_at_their_inputs():
    k = pj.kokolis_projection()
    assert round(k.ettr(k.interval_hourly_min), 1) == k.ettr_hourly
    assert round(k.ettr(k.interval_short_min), 2) == k.ettr_short
    assert round(k.mttf_hours_at(k.n_gpus), 1) == k.mttf_hours
    assert round(k.mttf_hours_at(k.large_n_gpus), 2) == k.large_mttf_hours
    for dt in (k.interval_hourly_min, k.interval_short_min):
        assert k.course_ettr(dt) == pytest.approx(k.ettr(dt), rel=1e-12)  # their formula is the course's day model here


@given(st.integers(8, 200_000), st.floats(1e-5, 2e-3), st.floats(0.0, 30.0), st.floats(0.1, 120.0), st.floats(0.0, 5.0))
def test_kokolis_formula_is_clipped_and_the_course_model_bounded(n, rate, u0, dt, w):
    e = pj.kokolis_ettr(n, rate, u0, dt, w)
    assert 0.0 <= e <= 1.0
    r = pj.CheckpointRegime("x", u0, write_cost_min=w, interval_min=dt)
    assert 0.0 <= r.ettr(n, rate) <= 1.0
    if (n * rate / MINUTES_PER_DAY) * (u0 + dt / 2) < 1:
        assert r.ettr(n, rate) == pytest.approx(e, rel=1e-9)


def test_regimes_and_the_90_percent_fleet_size():
    regimes = pj.default_regimes()
    assert [r.name for r in regimes] == ["hourly, blocking", "async writes", "in-memory snapshots"]
    band = 5e-4
    sizes = [pj.fleet_size_at_ettr(r, band) for r in regimes]
    assert sizes[0] < sizes[1] < sizes[2]
    for r, n in zip(regimes, sizes):
        assert r.ettr(n, band) == pytest.approx(0.9, abs=1e-9)
    mem = regimes[2]
    assert mem.write_cost(2048) == pytest.approx(2 * mem.write_cost(4096))
    assert regimes[1].interval(131072, 8e-4) == pytest.approx(regimes[1].min_interval_min)
    assert pj.fleet_size_at_ettr(mem.with_restart_overhead(0.5), band) > sizes[2]
    assert pj.fleet_size_at_ettr(mem, band, lo=8, hi=16) is None
    with pytest.raises(ValueError, match="target"):
        pj.fleet_size_at_ettr(mem, band, target=1.5)
    with pytest.raises(ValueError, match="hi must be > lo"):
        pj.fleet_size_at_ettr(mem, band, lo=100.0, hi=50.0)
    for kwargs, name in [(dict(n_gpus=0), "n_gpus"), (dict(interval=0), "interval"), (dict(write_cost=float("inf")), "write_cost")]:
        args = dict(n_gpus=1024, rate_per_gpu_day=5e-4, restart_overhead=5.0, interval=60.0, write_cost=0.0) | kwargs
        with pytest.raises(ValueError, match=name):
            pj.kokolis_ettr(**args)


# ----------------------------------------------------------------- the dashboard and the figures
def _walk(widget):
    yield widget
    for child in getattr(widget, "children", ()):
        yield from _walk(child)


def test_floor_text_is_what_the_dashboard_shows():
    import matplotlib

    matplotlib.use("Agg")
    from course_lib.widgets import floor as wf

    d = wf.dashboard_defaults()
    a = answer(spread_draws=0)
    assert d["n_gpus"] == 4096 and d["rate_per_gpu_day"] == pytest.approx(a.rate_per_gpu_day)
    text = wf.floor_text()
    assert f"{a.after.floor_minutes_per_day:.2f} min/day" in text and "4,096 GPUs" in text
    assert f"{100 * a.after.floor_fraction:.3f} %" in text and f"{a.after.minutes_per_day:.2f} min/day" in text
    lam, x, total = re.search(r"= ([0-9.]+) failures a day × ([0-9.]+) min per failure .*?= ([0-9.]+) min/day", text).groups()
    assert round(float(lam) * float(x), 2) == pytest.approx(float(total), abs=1e-9)  # the printed product holds
    assert f"after the levers {a.after.minutes_per_day:.2f} min/day" in text
    # at 16,384 GPUs the spare is kept: its idle GPUs are a term of their own and the sentence still adds up as printed
    kept = wf.floor_text(16384)
    lam, x, train, idle, total = map(float, re.search(
        r"= ([0-9.]+) failures a day × ([0-9.]+) min per failure .*? × ([0-9.]+) \(the GPUs that train\) \+ ([0-9.]+) min/day of "
        r"idle spare = ([0-9.]+) min/day", kept).groups())
    assert round(round(lam * x * train, 2) + idle, 2) == pytest.approx(total, abs=1e-9)
    big = wf.dashboard_answer(n_gpus=16384)
    assert total == pytest.approx(round(big.after.floor_minutes_per_day, 2)) and "hot-spare restart" in kept
    bigger = wf.dashboard_answer(n_gpus=8192)
    assert bigger.after.floor_minutes_per_day == pytest.approx(answer(Scenario().replace(n_gpus=8192), spread_draws=0).after.floor_minutes_per_day)
    e = wf.dashboard_answer(hang_timeout_min=60, restart_after_min=120, reload_after_min=60_000)
    assert e.scenario.hang_timeout_min == 1.0 and e.scenario.restart_after_min == 2.0 and e.scenario.reload_after_min == 1.0
    assert wf.floor_html(8192) == f"<b>{wf.floor_text(8192).replace('&', '&amp;')}</b>"
    with pytest.raises(ValueError, match="n_gpus"):
        wf.floor_text(0)
    with pytest.raises(ValueError, match="slider must be one of"):
        wf.dashboard_scenario(detect_s=1)
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


@pytest.mark.parametrize("n, rate", [(131_072, 10**-2.5), (131_072, 8e-4), (1024, 10**-4.5), (4096, 2 / 4096)])
def test_dashboard_sentence_never_prints_more_than_the_day(n, rate):
    from course_lib.widgets.floor import floor_text

    text = floor_text(n_gpus=n, rate_per_gpu_day=rate)
    assert all(float(p) <= 100 for p in re.findall(r"([\d.]+) %", text)), text
    assert all(float(p) <= MINUTES_PER_DAY for p in re.findall(r"([\d.]+) min/day", text)), text


def _slider_corners():
    """Every slider at each end of its range (64 combinations), in display units, from the dashboard's own sliders."""
    import itertools

    from course_lib.widgets import floor as wf

    controls = wf._controls(wf.dashboard_defaults())  # the sliders dashboard() shows, not drawn
    ends = [(c.options[0][1], c.options[-1][1]) if hasattr(c, "options") else (10**c.min, 10**c.max) for c in controls.values()]
    return [dict(zip(controls, corner)) for corner in itertools.product(*ends)]


def _shown(values) -> str:
    """The text the dashboard's result holds for these slider values: the sentence, or the refusal in words.

    The widget's redraw does exactly this (dashboard_answer, then the sentence, or refusal_text of the
    ValueError); test_the_dashboard_widget_shows_floor_html_or_the_refusal_at_its_corners checks it does."""
    from course_lib.widgets import floor as wf

    try:
        return wf.floor_text(**values)
    except ValueError as err:
        return wf.refusal_text(err)


def test_every_slider_corner_gives_a_plain_sentence_no_number_above_the_day_and_no_warning():
    """Issue 24: the dashboard's corners (each slider at its end, 64 combinations) print one plain sentence each: no
    raw exception (a hang timeout below a 1,024-GPU job's 88 s step is refused in words), no Python warning, no
    percentage above 100 and no minutes above the day. Driven through the functions the widget calls (the widget
    itself: the test below)."""
    import warnings

    corners = _slider_corners()
    assert len(corners) == 64
    refused = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for values in corners:
            text = _shown(values)
            plain = text.replace(",", "")
            assert "Traceback" not in text and "\n" not in text, text
            assert all(float(p) <= 100 for p in re.findall(r"([\d.]+) %", plain)), text
            assert all(float(m) <= MINUTES_PER_DAY for m in re.findall(r"([\d.]+) min/day", plain)), text
            if text.startswith("No answer"):
                assert text.startswith("No answer for the slider 'tuned hang timeout (s)' here: hang_timeout_min must be"), text
                refused.append(values)
            else:
                assert text.startswith((f"Floor at {values['n_gpus']:,} GPUs = ", f"At {values['n_gpus']:,} GPUs, ")), text
    # Refused: exactly the 16 corners with a 1 s hang timeout on 1,024 GPUs, whose healthy step is 88 s; on 131,072
    # GPUs a step takes 0.74 s (each GPU's share of the batch is 128x smaller), under the 1 s timeout, so it is answered.
    assert 0 < len(refused) < 64
    assert all(v["n_gpus"] == 1024 and v["hang_timeout_min"] == 1.0 for v in refused) and len(refused) == 64 // 4


def test_the_dashboard_widget_shows_floor_html_or_the_refusal_at_its_corners():
    """The one corner test through the real widget: with every slider moved to a corner, the result holds
    floor_html of exactly those slider values (or, where the model refuses them, refusal_text of its ValueError),
    and neither the sentence nor the chart it redraws warns."""
    import html
    import warnings

    import matplotlib

    matplotlib.use("Agg")
    from course_lib.widgets import floor as wf

    corners = {tuple(v.values()): v for v in _slider_corners()}
    top = next(v for v in corners.values() if all(v[k] >= v2[k] for v2 in corners.values() for k in v))  # every slider at its top
    low_rate = dict(top, rate_per_gpu_day=10**-4.5)  # then one slider down: 131,072 x 10^-4.5 = 4.14 failures a day
    refused = dict(low_rate, n_gpus=1024, hang_timeout_min=1.0)  # two more: a 1 s timeout under the 88 s step
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        box = wf.dashboard()
        result = next(w for w in _walk(box) if "course-result" in getattr(w, "_dom_classes", ()))
        by_label = {w.description: w for w in _walk(box) if hasattr(w, "continuous_update")}
        for values, says in ((top, "At 131,072 GPUs, 414 failures a day: "),  # 131,072 x 10^-2.5 = 414.5
                             (low_rate, "Floor at 131,072 GPUs = 4.14 failures a day × "), (refused, "No answer for the slider ")):
            for name, v in values.items():
                by_label[wf.SLIDER_LABELS[name]].value = v
            assert {name: by_label[label].value for name, label in wf.SLIDER_LABELS.items()} == values
            shown = result.value
            assert shown.startswith(f"<b>{says}"), shown
            if values is not refused:
                assert shown == wf.floor_html(**values) == f"<b>{html.escape(_shown(values))}</b>"
            else:
                with pytest.raises(ValueError, match="hang_timeout_min") as err:
                    wf.dashboard_answer(**values)
                assert shown == f"<b>{html.escape(wf.refusal_text(err.value))}</b>" == f"<b>{html.escape(_shown(values))}</b>"


def test_floor_figures_draw():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from course_lib.plots import floor as pf

    a = answer(spread_draws=0)
    ax = pf.answer_waterfall(a)
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels[0] == "baseline" and labels[-1] == "floor" and len(labels) == len(a.steps) + 3
    band = {"band_low": 3e-4, "central": 5e-4, "band_high": 8e-4}
    ax = pf.ettr_vs_fleet(pj.default_regimes(), band, [1024, 4096, 131072])
    central = [ln for ln in ax.get_lines() if ln.get_label() == "hourly, blocking"][0]
    assert central.get_ydata() == pytest.approx([pj.default_regimes()[0].ettr(n, 5e-4) for n in (1024, 4096, 131072)], rel=1e-12)
    ax = pf.floor_alternatives({"after": a.after, "fewer": a.fewer[0][1]})
    bars = [p.get_width() for p in ax.patches]
    assert bars[0::2] == pytest.approx([a.after.floor_minutes_per_day, a.fewer[0][1].floor_minutes_per_day])
    ax = pf.floor_vs_fleet({"after": 0.6}, band, [1024, 131072])
    (line,) = ax.get_lines()
    assert line.get_ydata() == pytest.approx([100 * n * 5e-4 * 0.6 / MINUTES_PER_DAY for n in (1024, 131072)], rel=1e-12)
    plt.close("all")


# ----------------------------------------------------------------- issue 29: the floor with replica groups, by hand
def test_floor_with_groups_is_lambda_times_the_cost_of_a_failure_by_hand():
    """lambda x the share-weighted cost of a failure (tests/replica_moments.py: detection, (G - 1)/G x (stall + half a
    step), rejoin / G; an sdc rewinds the whole job), per mode and summed, for one, a few and every replica group."""
    from replica_moments import cost_moments, floor_by_hand

    from course_lib.scenario import ReplicaInputs

    for g in (1, 2, 3, 32):
        s = Scenario().replace(replicas=ReplicaInputs(groups=g))
        assert fl.floor_minutes_per_day_groups(s) == pytest.approx(floor_by_hand(s, g), rel=1e-12)
        assert fl.floor_minutes_per_day_groups(s, lv.all_levers_day(s)) == fl.floor_minutes_per_day_groups(s)
        day = dataclasses.replace(lv.all_levers_day(s), idle_share=0.0)
        by_mode = fl.per_mode_groups(day, g, s.replicas.stall_min, s.replicas.rejoin_min)
        for mode, (share, mean, _) in cost_moments(s, g).items():
            assert by_mode[mode] == pytest.approx(s.failures_per_day * share * mean, rel=1e-12)
    assert fl.groups_for(Scenario()) == 4096 // 128
    assert fl.groups_for(Scenario(n_gpus=4100)) == 32  # whole replicas only: 4100 / 128 = 32.03
    assert fl.groups_for(Scenario().replace(replicas=ReplicaInputs(groups=32))) == 32  # every replica its own group
    with pytest.raises(ValueError, match=r"groups must be an integer in \[1, 32\]"):
        fl.groups_for(Scenario().replace(replicas=ReplicaInputs(groups=33)))


# ----------------------------------------------------------------- issue 29, third pass: hand-worked days
def _three_mode_day(persisted_interval_min=None, idle_share=0.0):
    """lambda 2; a hang (share 0.5: 1 + 2 + 3 min), a lost host restoring the persisted checkpoint (0.2: 2 + 2 + 4)
    and an SDC (0.3: 3 + 2 + 5, an hour's latency, persisted); interval 10 min, step 0.5 min (the floor's interval)."""
    from course_lib.restart import ModeCost

    modes = (ModeCost("hang", 0.5, 1.0, 2.0, 3.0),
             ModeCost("host_loss", 0.2, 2.0, 2.0, 4.0, 0.0, True),
             ModeCost("sdc", 0.3, 3.0, 2.0, 5.0, 60.0, True))
    return RestartBudget(2.0, modes, 10.0, 0.5, persisted_interval_min, step_min=0.5, idle_share=idle_share)


def test_floor_terms_by_hand_with_one_checkpoint_and_with_a_persisted_one():
    """D + R = 0.5 x 6 + 0.2 x 8 + 0.3 x 10 = 7.6 min a failure. One checkpoint (the tied branch: tau_p = tau = the
    0.5-min step): every failure rewinds half a step, 0.25, and an SDC its hour, 0.3 x 60 = 18. A persisted checkpoint
    every 30 min: only the hang rewinds half a step (0.5 x 0.25 = 0.125); the lost host and the SDC rewind half of
    tau_p, 0.2 x 15 + 0.3 x (15 + 60) = 25.5. Below saturation each term is lambda = 2 times its minutes."""
    tied = fl.terms(_three_mode_day())
    assert [t.per_failure_min for t in tied] == pytest.approx([7.6, 0.25, 18.0], rel=1e-12)
    assert [t.minutes_per_day for t in tied] == pytest.approx([15.2, 0.5, 36.0], rel=1e-12)
    assert fl.per_mode(_three_mode_day()) == pytest.approx(
        {"hang": 2 * 0.5 * 6.25, "host_loss": 2 * 0.2 * 8.25, "sdc": 2 * 0.3 * 70.25}, rel=1e-12)
    assert fl.terms_sentence(_three_mode_day()).startswith("15.20 + 0.50 + 36.00 = 51.70 min/day (lambda (D + R), ")
    untied = fl.terms(_three_mode_day(persisted_interval_min=30.0))
    assert [t.per_failure_min for t in untied] == pytest.approx([7.6, 0.125, 25.5], rel=1e-12)
    assert [t.minutes_per_day for t in untied] == pytest.approx([15.2, 0.25, 51.0], rel=1e-12)


def test_floor_terms_by_hand_with_an_idle_spare():
    """A spare idle 10 % of the GPUs: the terms are lambda (1 - i) x their minutes (2 x 0.9 x 7.6 = 13.68, 0.45,
    32.4) and the spare's own term is T i = 144 min/day with nothing per failure; 144 + 0.9 x 51.7 = 190.53."""
    ts = fl.terms(_three_mode_day(idle_share=0.1))
    assert [t.symbol for t in ts][-1] == "T i"
    assert [t.minutes_per_day for t in ts] == pytest.approx([13.68, 0.45, 32.4, 144.0], rel=1e-12)
    assert ts[-1].per_failure_min == 0.0
    assert sum(t.minutes_per_day for t in ts) == pytest.approx(190.53, rel=1e-12)


def test_groups_for_a_fleet_smaller_than_a_replica_and_its_own_refusal():
    """Fewer GPUs than one 128-GPU replica are still one group; 256 GPUs are two. groups_for refuses more groups than
    whole replicas itself, also when handed inputs no Scenario validated (a stand-in with the three fields it reads)."""
    from types import SimpleNamespace

    assert fl.groups_for(Scenario(n_gpus=64)) == 1
    assert fl.groups_for(Scenario(n_gpus=128)) == 1
    assert fl.groups_for(Scenario(n_gpus=256)) == 2

    def stand_in(n_gpus, groups):
        return SimpleNamespace(n_gpus=n_gpus, modes=SimpleNamespace(replica_gpus=128.0), replicas=SimpleNamespace(groups=groups))

    assert fl.groups_for(stand_in(64, None)) == 1
    assert fl.groups_for(stand_in(4096, 32)) == 32
    with pytest.raises(ValueError, match=r"groups must be an integer in \[1, 32\].*got 33"):
        fl.groups_for(stand_in(4096, 33))
    with pytest.raises(ValueError, match=r"groups must be an integer in \[1, 1\].*got 2"):
        fl.groups_for(stand_in(64, 2))


def _two_mode_day(lam, hang_detect, sdc_stages, sdc_latency, step_min):
    from course_lib.restart import ModeCost

    return lambda shares: RestartBudget(lam, (ModeCost("hang", shares[0], hang_detect, 0.0, 0.0),
                                              ModeCost("sdc", shares[1], *sdc_stages, sdc_latency, True)),
                                        10.0, 0.0, None, step_min=step_min)


def test_per_mode_groups_by_hand_when_a_failure_costs_under_a_minute():
    """4 groups, stall 0.2, rejoin 0.4, a 0.4-min step: a hang costs 0.1 + 3/4 x (0.2 + 0.2) + 0.4 / 4 = 0.5 min, an
    SDC 0.1 + 0.1 + 0.1 + (0.2 + 0.2) = 0.7 (half the step and its latency: the whole job rewinds). lambda 0.5:
    0.5 x 0.9 x 0.5 = 0.225 and 0.5 x 0.1 x 0.7 = 0.035 min/day (x = 0.52 min a failure, under one minute)."""
    day = _two_mode_day(0.5, 0.1, (0.1, 0.1, 0.1), 0.2, 0.4)((0.9, 0.1))
    assert fl.per_mode_groups(day, 4, 0.2, 0.4) == pytest.approx({"hang": 0.225, "sdc": 0.035}, rel=1e-12)


def test_per_mode_groups_at_saturation_split_the_day_and_never_pass_it():
    """lambda 200: the failures take the whole day. 4 groups, stall 1, rejoin 2, a 1-min step: a hang costs
    39.6 + 3/4 x 1.5 + 2/4 = 41.225 min, an SDC 5.6 + 1 + 1 + 0.5 + 60 = 68.1; x = 0.6 x 41.225 + 0.4 x 68.1 = 51.975.
    The day splits in the shares of the cost, 1440 x 24.735 / 51.975 and 1440 x 27.24 / 51.975, and the parts add to
    no more than the day, exactly (without the rescaling they pass it by a rounding unit at these numbers)."""
    day = _two_mode_day(200.0, 39.6, (5.6, 1.0, 1.0), 60.0, 1.0)((0.6, 0.4))
    parts = fl.per_mode_groups(day, 4, 1.0, 2.0)
    assert parts == pytest.approx({"hang": 1440 * 24.735 / 51.975, "sdc": 1440 * 27.24 / 51.975}, rel=1e-12)
    assert sum(parts.values()) <= MINUTES_PER_DAY
    assert sum(parts.values()) == pytest.approx(MINUTES_PER_DAY, rel=1e-12)


def test_spare_break_even_by_hand_on_a_busy_day():
    """lambda 10, 60 min a failure (50 + 2 + 5 + 3): rho_1 = 600 / 1440. A spare idle 5 %: the break-even reschedule
    is 2 + 1440 x 0.05 x (840 / 1440) / 10 = 6.2 min, where the day without the spare (X = 64.2) loses what the day
    with it loses: 1440 - 0.95 x (1440 - 600) = 642 = 10 x 64.2 min."""
    with_spare = dataclasses.replace(RestartBudget.single(10.0, RestartStages(50.0, 2.0, 5.0, 3.0)), idle_share=0.05)
    be = fl.spare_break_even_reschedule_min(with_spare)
    assert be == pytest.approx(6.2, rel=1e-12)
    assert with_spare.minutes_per_day == pytest.approx(642.0, rel=1e-12)
    without = dataclasses.replace(with_spare, idle_share=0.0).with_modes(reschedule=6.2)
    assert without.minutes_per_day == pytest.approx(642.0, rel=1e-12)


def test_per_mode_groups_when_no_failure_costs_anything():
    """No detection, stall, step, rejoin, reload or latency: a failure costs nothing with or without groups (0 min/day,
    what per_mode says for one group; it raised ZeroDivisionError before issue 29's third pass)."""
    day = _two_mode_day(3.0, 0.0, (0.0, 0.0, 0.0), 0.0, 0.0)((0.9, 0.1))
    assert fl.per_mode(day) == {"hang": 0.0, "sdc": 0.0}
    assert fl.per_mode_groups(day, 4, 0.0, 0.0) == {"hang": 0.0, "sdc": 0.0}


# ------------------------------------------------------------ projection: the regimes' defaults and the fleet-size search
def test_a_regime_defaults_to_no_write_no_state_no_bound_and_is_frozen():
    r = pj.CheckpointRegime("plain", 5.0)
    assert (r.write_cost_min, r.state_bytes, r.min_interval_min, r.interval_min) == (0.0, 0.0, 0.0, None)
    assert r.write_cost(4096) == 0.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.name = "other"
    with pytest.raises(dataclasses.FrozenInstanceError):
        pj.kokolis_projection().ettr_hourly = 0.0  # any field: the record is frozen


def test_with_restart_overhead_keeps_the_name_unless_given_one():
    r = pj.CheckpointRegime("plain", 5.0)
    assert r.with_restart_overhead(3.0).name == "plain" and r.with_restart_overhead(3.0).restart_overhead_min == 3.0
    assert r.with_restart_overhead(3.0, name="tuned").name == "tuned"


def test_the_in_memory_regime_holds_the_whole_model_state():
    # 405e9 parameters x 12 bytes of checkpoint content = 4.86e12 bytes, split over the GPUs by write_cost
    mem = pj.default_regimes()[2]
    assert mem.state_bytes == pytest.approx(4.86e12, rel=1e-12)
    assert mem.write_cost(4096) == pytest.approx(4.86e12 / 4096 / 55e9 / 60, rel=1e-12)


def test_fleet_size_at_ettr_by_hand_and_at_its_default_ends():
    # ETTR = 1 - n r (u0 + tau/2) / 1440 with no write: 0.9 at n = 0.1 x 1440 / (r (u0 + tau/2))
    r, u0, tau = 9.6e-5, 1.0, 1e-3
    regime = pj.CheckpointRegime("fixed", u0, interval_min=tau)
    n = 0.1 * 1440 / (r * (u0 + tau / 2))  # 1.49925e6 GPUs: above the default search end 2**20 = 1,048,576
    assert pj.fleet_size_at_ettr(regime, r) is None
    assert pj.fleet_size_at_ettr(regime, r, hi=2.0**21) == pytest.approx(n, rel=1e-8)
    # already below 90 % at the default lower end (8 GPUs): that end comes back, exactly
    assert pj.fleet_size_at_ettr(pj.CheckpointRegime("slow", 1440 / 8 * 0.2 / r), r) == 8.0
    with pytest.raises(ValueError, match="hi must be > lo"):
        pj.fleet_size_at_ettr(regime, r, lo=100.0, hi=100.0)


def test_a_value_passed_to_the_dashboard_is_kept_when_another_slider_moves():
    """dashboard(rate_per_gpu_day=...) (notebook 08 passes its scenario's rate): the rate stays in the answer when the
    restart slider moves next, and a passed hang timeout stays when the fleet moves (it once fell back to the
    course's value at the first move: the passed sliders were not counted as set)."""
    import matplotlib

    matplotlib.use("Agg")
    from course_lib.widgets import floor as wf

    box = wf.dashboard(rate_per_gpu_day=1e-3, hang_timeout_min=300.0)  # display units: seconds
    result = next(w for w in _walk(box) if "course-result" in getattr(w, "_dom_classes", ()))
    by_label = {w.description: w for w in _walk(box) if hasattr(w, "continuous_update")}
    restart = by_label[wf.SLIDER_LABELS["restart_after_min"]]
    restart.value = restart.max  # a move of another slider
    moved = dict(rate_per_gpu_day=1e-3, hang_timeout_min=by_label[wf.SLIDER_LABELS["hang_timeout_min"]].value,
                 restart_after_min=restart.value)
    assert result.value == wf.floor_html(**moved)
    assert result.value != wf.floor_html(restart_after_min=restart.value)  # not the course's rate
    fleet = by_label[wf.SLIDER_LABELS["n_gpus"]]
    hang_before = by_label[wf.SLIDER_LABELS["hang_timeout_min"]].value
    fleet.value = 16384  # the fleet's own defaults refill only the sliders nobody set
    assert by_label[wf.SLIDER_LABELS["hang_timeout_min"]].value == hang_before
    assert result.value == wf.floor_html(n_gpus=16384, **moved)
