"""course_lib.restart: one restart, the one day model, and the Scenario's baseline (notebook 03).

The properties the whole course rests on: the baseline reproduces the question exactly (two a day
x 15 min = 30 min, 2.08 %); the day model is lambda X + writes while the failures fit in the day,
never above 100 %; floor <= after the levers <= baseline at any scale (the grid up to 10^7 GPUs and
10^4 failures a day); the sentence's numbers are the table's; the interval's optimum is the
model's own (sympy).
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from course_lib import MINUTES_PER_DAY, Scenario
from course_lib import interval as iv
from course_lib.answer import answer
from course_lib.restart import (STAGES, ModeCost, RestartBudget, RestartStages, baseline_budget, baseline_modes, baseline_stages,
                                day_loss)

minutes = st.floats(min_value=0.0, max_value=120.0, allow_nan=False)
rates = st.floats(min_value=0.01, max_value=50.0, allow_nan=False)


shares = st.one_of(st.just(0.0), st.floats(min_value=0.0, max_value=0.5))  # no spare, or an idle one up to half the GPUs


@st.composite
def days(draw, write=True):
    """One mode's day: stages, a write, an idle spare's share (0 or up to 0.5) and a step (0, not modelled, or up
    to half the interval). Returns the day and its inputs, so that a property can work the day out by hand."""
    d, r, l = draw(minutes), draw(minutes), draw(minutes)
    rewind = draw(st.floats(min_value=0.01, max_value=120.0))
    tau = 2.0 * rewind  # RestartBudget.single's interval: twice the mean rewind
    delta = draw(st.floats(min_value=0.0, max_value=5.0)) if write else 0.0
    lam = draw(rates)
    idle = draw(shares)
    step = draw(st.one_of(st.just(0.0), st.floats(min_value=0.0, max_value=0.5).map(lambda f: f * tau)))
    b = RestartBudget(lam, (ModeCost("any", 1.0, d, r, l),), tau, delta, step_min=step, idle_share=idle)
    return b, {"lam": lam, "D": d, "R": r, "L": l, "tau": tau, "delta": delta, "i": idle, "step": step}


def _by_hand(lam, D, R, L, tau, delta, i, **_):
    """The day model of the module's docstring, from the inputs: minutes lost (restart, writes, idle) and the total."""
    T = 1440.0
    x = D + R + L + tau / 2
    rho = min(lam * x / T, 1.0)
    restart = T * rho * (1 - i)
    writes = T * (1 - i) * (1 - rho) * delta / (tau + delta) if tau + delta > 0 else 0.0
    return {"X": x, "rho": rho, "restart": restart, "writes": writes, "idle": T * i, "total": restart + writes + T * i}


# ---------------------------------------------------------------- hand-worked days and every edge (first: quick, so a
# mutation run stops early; issue 29, third pass)
M4 = ("crash", "hang", "host_loss", "sdc")


def _modes4(shares=(0.5, 0.25, 0.125, 0.125), latency=8.0, host_persisted=False):
    """Four modes with distinct round stages (minutes), an SDC latency, an SDC restoring the persisted checkpoint."""
    d = (1.0, 2.0, 3.0, 4.0)
    return tuple(ModeCost(k, sh, d[i], 10.0 + i, 0.5 * (i + 1), latency if k == "sdc" else 0.0,
                          k == "sdc" or (k == "host_loss" and host_persisted)) for i, (k, sh) in enumerate(zip(M4, shares)))


def test_stages_total_and_restart_cost_by_hand():
    s = RestartStages(detect=1.0, reschedule=2.0, reload=4.0, rewind=8.0)
    assert s.total == 15.0 and s.restart_cost == 7.0
    assert s.as_dict() == {"detect": 1.0, "reschedule": 2.0, "reload": 4.0, "rewind": 8.0}
    assert s.replace(reload=0.5).total == 11.5
    with pytest.raises(ValueError, match=r"stage must be one of \['detect', 'reschedule', 'reload', 'rewind'\]"):
        s.replace(warmup=1.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.detect = 2.0
    t = RestartStages(detect=2, reschedule=np.float64(3.0), reload=0, rewind=0.0)  # ints and numpy scalars: plain floats
    assert all(type(v) is float for v in t.as_dict().values()) and t.total == 5.0


@pytest.mark.parametrize("bad", [-1.0, -1e-300, float("inf"), float("nan"), -1, np.float64(-0.5), np.float64(np.inf),
                                 np.array([1.0, -1.0]), np.array([-1.0, 1.0]), np.array([1.0, np.inf]),
                                 np.array([np.inf, 1.0]), np.array([np.nan]), np.array([-2.0])])
def test_a_stage_must_be_finite_and_non_negative(bad):
    with pytest.raises(ValueError, match="reload must be (a )?finite numbers? >= 0"):
        RestartStages(detect=1.0, reschedule=1.0, reload=bad, rewind=1.0)


@pytest.mark.parametrize("ok", [0.0, 5e-324, 1e300, 0, np.float64(0.0), np.array([0.0, 1.0]), np.array([2.0, 0.0])])
def test_a_stage_at_its_edges_is_accepted_unchanged(ok):
    got = RestartStages(detect=1.0, reschedule=1.0, reload=ok, rewind=1.0).reload
    assert np.array_equal(got, np.asarray(ok, dtype=float))
    assert type(got) is (float if np.ndim(ok) == 0 else np.ndarray)


def test_mode_cost_defaults_and_the_mode_list_checks():
    m = ModeCost("x", 1.0, 1.0, 2.0, 3.0)
    assert m.latency == 0.0 and m.persisted is False
    with pytest.raises(ValueError, match="modes must be a non-empty sequence of ModeCost"):
        RestartBudget(2.0, (), 10.0)
    with pytest.raises(ValueError, match="modes must be a non-empty sequence of ModeCost"):
        RestartBudget(2.0, (m, ("y", 0.0, 1.0, 1.0, 1.0)), 10.0)
    with pytest.raises(ValueError, match=r"modes\[x\].latency must be a finite number >= 0"):
        RestartBudget(2.0, (m._replace(latency=-1.0),), 10.0)
    # the shares' sum: floats within 1e-9 (math.isclose), arrays within 1e-9 + 1e-5 (np.allclose's rule)
    half = ModeCost("a", 0.5, 1.0, 1.0, 1.0)
    for eps, ok in ((0.5e-9, True), (1.5e-9, False), (1e-6, False)):
        modes = (half, half._replace(mode="b", share=0.5 + eps))
        if ok:
            assert RestartBudget(2.0, modes, 10.0).modes == modes
        else:
            with pytest.raises(ValueError, match="shares must sum to 1"):
                RestartBudget(2.0, modes, 10.0)
    for eps, ok in ((0.0, True), (0.9e-5, True), (1e-5 + 0.5e-9, True), (1e-5 + 1.5e-9, False), (1.5e-5, False),
                    (-0.9e-5, True), (-1.5e-5, False)):
        modes = (half._replace(share=np.array([0.5, 0.5])), half._replace(mode="b", share=np.array([0.5, 0.5 + eps])))
        if ok:
            RestartBudget(2.0, modes, 10.0)
        else:
            with pytest.raises(ValueError, match="shares must sum to 1"):
                RestartBudget(2.0, modes, 10.0)


def test_day_loss_edges_by_hand():
    r = 30 / 1440  # two failures of 15 minutes
    assert day_loss(2.0, 15.0, 0.0, 0.0) == pytest.approx(r, rel=1e-12)  # no checkpoint and no write: trains all the rest
    assert day_loss(2.0, 15.0, 0.5, 0.5) == pytest.approx(1 - (1 - r) * 0.5, rel=1e-12)
    assert day_loss(2.0, 15.0, 0.5, 1.0) == pytest.approx(1 - (1 - r) / 3, rel=1e-12)
    assert day_loss(2.0, 15.0, 3.0, 1.0, 0.5) == pytest.approx(1 - 0.5 * (1 - r) * 0.75, rel=1e-12)
    assert day_loss(2.0, 720.0, 10.0, 1.0) == 1.0 and day_loss(1.0, 720.0, 10.0, 0.0) == pytest.approx(0.5)
    assert type(day_loss(2.0, 15.0, 10.0, 0.0)) is float
    out = day_loss(np.array([2.0, 1.0]), 15.0, np.array([0.0, 0.5]), np.array([0.0, 0.5]))
    assert isinstance(out, np.ndarray) and np.allclose(out, [r, 1 - (1 - 15 / 1440) * 0.5], rtol=1e-12)


def test_budget_defaults_and_frozen():
    modes = (ModeCost("any", 1.0, 1.0, 2.0, 3.0),)
    b = RestartBudget(2.0, modes, 10.0)
    assert b.write_cost_min == 0.0 and b.step_min == 0.0 and b.idle_share == 0.0
    assert b.persisted_interval_min is None and b.interval_bound_min is None
    assert b.loss_fraction == pytest.approx(2 * 11 / 1440, rel=1e-12)  # X = 1 + 2 + 3 + 10 / 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        b.interval_min = 3.0


@pytest.mark.parametrize("lam, tau, delta, match", [
    (0.0, 10.0, 0.0, "failures_per_day must be a finite number > 0"),
    (np.array([1.0, 0.0]), 10.0, 0.0, "failures_per_day must be a finite number > 0"),
    (np.array([0.0, 1.0]), np.array([1.0, 2.0]), 0.0, "failures_per_day must be a finite number > 0"),
    (-1.0, 10.0, 0.0, "failures_per_day must be (a )?finite numbers? >= 0"),
    (2.0, 0.0, 0.5, "write_cost_min must be 0 when interval_min is 0"),
    (2.0, 0.0, 1e-9, "write_cost_min must be 0 when interval_min is 0"),
    (2.0, np.array([0.0, 1.0]), 0.5, "write_cost_min must be 0 when interval_min is 0"),
    (2.0, 0.0, np.array([0.0, 0.5]), "write_cost_min must be 0 when interval_min is 0"),
    (np.array([1.0, 2.0]), np.array([0.0, 1.0]), np.array([0.5, 0.0]), "write_cost_min must be 0 when interval_min is 0"),
    (2.0, 10.0, 0.0, None), (0.5, 10.0, 0.0, None), (1e-300, 0.0, 0.0, None), (2.0, 1e-9, 0.5, None),
    (np.array([0.5, 2.0]), 10.0, 0.0, None), (np.array([0.5, 2.0]), np.array([1.0, 2.0]), np.array([0.0, 0.5]), None),
    (2.0, np.array([0.0, 1.0]), np.array([0.0, 0.5]), None), (np.array([1e-300, 1.0]), 0.0, 0.0, None),
])
def test_the_day_checks_at_and_past_each_edge(lam, tau, delta, match):
    modes = (ModeCost("any", 1.0, 1.0, 2.0, 3.0),)
    if match is None:
        b = RestartBudget(lam, modes, tau, delta)
        assert np.all(np.asarray(b.loss_fraction) >= 0) and np.all(np.asarray(b.loss_fraction) < 1)
    else:
        with pytest.raises(ValueError, match=match):
            RestartBudget(lam, modes, tau, delta)


def test_single_and_with_modes():
    s = RestartStages(detect=1.0, reschedule=2.0, reload=3.0, rewind=4.0)
    b = RestartBudget.single(2.0, s)
    assert b.interval_min == 8.0 and b.write_cost_min == 0.0 and b.step_min == 0.0 and b.stages == s
    with pytest.raises(ValueError, match="stages must be a RestartStages"):
        RestartBudget.single(2.0, {"detect": 1.0})
    four = RestartBudget(2.0, _modes4(), 8.0)
    c = four.with_modes(detect={"crash": 5.0}, reload=7.0)
    by = {m.mode: m for m in c.modes}
    assert by["crash"].detect == 5.0 and by["hang"].detect == 2.0 and by["sdc"].detect == 4.0
    assert all(m.reload == 7.0 for m in c.modes)


def test_the_modes_mean_by_hand_float_and_array():
    b = RestartBudget(2.0, _modes4(), 8.0)  # shares 1/2, 1/4, 1/8, 1/8
    s = b.stages
    assert s.detect == pytest.approx(0.5 * 1 + 0.25 * 2 + 0.125 * 3 + 0.125 * 4, rel=1e-15)  # 1.875
    assert s.reschedule == pytest.approx(10 + 0.25 * 1 + 0.125 * 2 + 0.125 * 3, rel=1e-15)  # 10.875
    assert s.reload == pytest.approx(0.5 * (0.5 * 1 + 0.25 * 2 + 0.125 * 3 + 0.125 * 4), rel=1e-15)  # 0.9375
    assert b.rewind_by_mode() == {"crash": 4.0, "hang": 4.0, "host_loss": 4.0, "sdc": 12.0}
    assert s.rewind == pytest.approx(4.0 + 0.125 * 8, rel=1e-15) and b.latency_min == pytest.approx(1.0)
    assert b.per_failure_min == pytest.approx(1.875 + 10.875 + 0.9375 + 5.0, rel=1e-15)
    assert b.latest_share == 1.0 and b.persisted_interval == 8.0
    assert b.nonlatest_min == pytest.approx(b.per_failure_min - 4.0, rel=1e-15)
    # the same day with the shares (or the stages) as one-draw arrays gives the same numbers
    sh = (0.5, 0.25, 0.125, 0.125)
    arr = RestartBudget(2.0, _modes4(tuple(np.array([x]) for x in sh)), 8.0)
    assert np.allclose(arr.stages.detect, 1.875) and np.allclose(arr.stages.rewind, 5.0)
    assert np.allclose(arr.per_failure_min, b.per_failure_min, rtol=1e-15)
    lat = RestartBudget(2.0, _modes4(latency=np.array([8.0, 16.0])), 8.0)
    assert np.allclose(lat.latency_min, [1.0, 2.0]) and np.allclose(lat.stages.rewind, [5.0, 6.0])
    assert np.allclose(lat.loss_fraction, [b.loss_fraction, 2 * (b.per_failure_min + 1) / 1440], rtol=1e-12)


def test_the_persisted_checkpoint_rewind_by_hand():
    # an in-memory snapshot every 2 minutes, the persisted checkpoint every 30: the SDC (and a host lost
    # without a peer copy) rewinds to the persisted one, 15 minutes, plus the SDC's latency
    b = RestartBudget(2.0, _modes4(host_persisted=True), 2.0, persisted_interval_min=30.0)
    assert b.persisted_interval == 30.0
    assert b.rewind_by_mode() == {"crash": 1.0, "hang": 1.0, "host_loss": 15.0, "sdc": 23.0}
    assert b.rewind_by_mode(interval=4.0) == {"crash": 2.0, "hang": 2.0, "host_loss": 15.0, "sdc": 23.0}
    assert b.latest_share == pytest.approx(0.75) and b.stages.rewind == pytest.approx(0.75 * 1 + 0.125 * 15 + 0.125 * 23)
    assert b.nonlatest_min == pytest.approx(b.per_failure_min - 0.75 * 1.0, rel=1e-15)
    peer = RestartBudget(2.0, _modes4(), 2.0, persisted_interval_min=30.0)
    assert peer.rewind_by_mode()["host_loss"] == 1.0 and peer.latest_share == pytest.approx(0.875)
    same = RestartBudget(2.0, _modes4(host_persisted=True), 2.0)  # one checkpoint: the flag changes nothing
    assert same.rewind_by_mode(interval=6.0) == {"crash": 3.0, "hang": 3.0, "host_loss": 3.0, "sdc": 11.0}


def test_baseline_modes_peer_copy_and_draws():
    shares, det = [0.4, 0.3, 0.2, 0.1], {"crash": 1.0, "hang": 2.0, "host_loss": 3.0, "sdc": 4.0}
    modes = baseline_modes(shares, det, 5.0, 6.0, 60.0)  # a list of shares; peer copy by default
    assert [m.mode for m in modes] == list(M4) and [m.share for m in modes] == shares
    assert [m.latency for m in modes] == [0.0, 0.0, 0.0, 60.0]
    assert [m.persisted for m in modes] == [False, False, False, True]
    assert [m.detect for m in modes] == [1.0, 2.0, 3.0, 4.0] and all(m.reschedule == 5.0 and m.reload == 6.0 for m in modes)
    lost = baseline_modes(shares, det, 5.0, 6.0, 60.0, peer_copy=False)
    assert [m.persisted for m in lost] == [False, False, True, True] and [m.latency for m in lost] == [0.0, 0.0, 0.0, 60.0]
    draws = np.array([[0.4, 0.3, 0.2, 0.1], [0.1, 0.2, 0.3, 0.4]])  # two draws of the four shares
    m2 = baseline_modes(draws, det, 5.0, 6.0, 60.0)
    assert all(np.array_equal(m.share, draws[:, i]) for i, m in enumerate(m2))
    b = RestartBudget(2.0, m2, 10.0)  # detect means 0.4 + 0.6 + 0.6 + 0.4 = 2.0 and 0.1 + 0.4 + 0.9 + 1.6 = 3.0
    assert np.allclose(b.stages.detect, [2.0, 3.0]) and np.allclose(b.latency_min, [6.0, 24.0])
    # a host lost without a peer copy, after the snapshot lever: it rewinds half the persisted interval
    s = Scenario()
    nopeer = baseline_modes(s.modes.shares, s.detect_by_mode, s.reschedule_min, s.reload_min, s.modes.sdc_latency_min, False)
    b1 = RestartBudget(2.0, nopeer, 1.0, persisted_interval_min=10.0)
    assert b1.rewind_by_mode()["host_loss"] == 5.0 and b1.rewind_by_mode()["crash"] == 0.5


def test_busy_share_mtbf_progress_scalar_and_array():
    s = RestartStages(detect=1.0, reschedule=2.0, reload=3.0, rewind=4.0)  # X = 10 minutes
    b = RestartBudget.single(3.0, s)
    assert b.busy_share == pytest.approx(30 / 1440, rel=1e-15) and type(b.busy_share) is float
    assert b.mtbf_min == pytest.approx(480.0, rel=1e-15) and type(b.mtbf_min) is float and b.makes_progress is True
    many = b.with_failures_per_day(np.array([3.0, 144.0, 288.0]))
    assert np.allclose(many.busy_share, [30 / 1440, 1.0, 1.0], rtol=1e-15)
    assert np.allclose(many.mtbf_min, [480.0, 10.0, 5.0], rtol=1e-15)
    assert isinstance(many.makes_progress, np.ndarray) and list(many.makes_progress) == [True, False, False]
    edge = b.with_failures_per_day(144.0)  # lambda X = T exactly: recovering all day, no progress
    assert edge.makes_progress is False and edge.loss_fraction == 1.0 and edge.busy_share == 1.0
    assert "Failures come faster" in edge.progress_sentence and "trains" in b.progress_sentence
    with pytest.raises(ValueError, match="progress_sentence needs a day of numbers"):
        many.progress_sentence


def test_the_day_parts_by_hand_with_writes_and_a_spare():
    s = RestartStages(detect=1.0, reschedule=2.0, reload=3.0, rewind=4.0)  # X = 10, tau = 8
    b = RestartBudget.single(3.0, s, write_cost_min=2.0)._evolve(idle_share=0.25)
    rho, train = 30 / 1440, 8 / 10
    assert b.loss_fraction == pytest.approx(1 - 0.75 * (1 - rho) * train, rel=1e-12)
    assert b.ettr == pytest.approx(0.75 * (1 - rho) * train, rel=1e-12)
    assert b.fraction_of_day == b.loss_fraction and b.minutes_per_day == pytest.approx(1440 * b.loss_fraction, rel=1e-15)
    assert b.restart_minutes_per_day == pytest.approx(30 * 0.75, rel=1e-12)
    assert b.write_minutes_per_day == pytest.approx(0.75 * (1440 - 30) * 0.2, rel=1e-12)
    assert type(b.write_minutes_per_day) is float and b.idle_minutes_per_day == pytest.approx(360.0)
    parts = b.breakdown()
    assert all(type(v) is float for v in parts.values()), parts
    assert parts["detect"] == pytest.approx(22.5 * 0.1) and parts["reload"] == pytest.approx(22.5 * 0.3)
    assert parts["rewind"] == pytest.approx(22.5 * 0.4) and parts["idle"] == pytest.approx(360.0)
    assert "latency" not in parts and b.latency_minutes_per_day == 0.0
    assert b.rewind_minutes_per_day == pytest.approx(9.0) and b.checkpoint_minutes_per_day == pytest.approx(9.0 + b.write_minutes_per_day)
    no_spare = RestartBudget.single(3.0, s).breakdown()
    assert "idle" not in no_spare and no_spare["write"] == 0.0
    lat = RestartBudget(3.0, (ModeCost("sdc", 1.0, 1.0, 2.0, 3.0, 6.0, True),), 8.0)  # X = 1 + 2 + 3 + 4 + 6 = 16
    p = lat.breakdown()
    assert p["latency"] == pytest.approx(3 * 6.0) and p["rewind"] == pytest.approx(3 * 4.0)
    assert lat.latency_minutes_per_day == pytest.approx(18.0) and lat.rewind_minutes_per_day == pytest.approx(30.0)
    small = RestartBudget(2.0, _modes4(latency=4.0), 8.0)  # a mean latency under a minute: 0.125 x 4 = 0.5
    assert small.latency_min == pytest.approx(0.5) and small.breakdown()["latency"] == pytest.approx(2 * 0.5, rel=1e-12)
    # arrays: the same numbers draw by draw
    arr = RestartBudget.single(np.array([3.0, 6.0]), s, write_cost_min=2.0)
    assert np.allclose(arr.write_minutes_per_day, [(1440 - 30) * 0.2, (1440 - 60) * 0.2], rtol=1e-12)
    assert np.allclose(arr.breakdown()["detect"], [3.0, 6.0], rtol=1e-12)


def test_a_restart_under_a_minute_and_a_free_one():
    small = RestartStages(detect=0.2, reschedule=0.1, reload=0.1, rewind=0.1)  # X = 0.5 minute
    p = RestartBudget.single(2.0, small).breakdown()
    assert p["detect"] == pytest.approx(0.4) and p["reschedule"] == pytest.approx(0.2) and p["rewind"] == pytest.approx(0.2)
    free = RestartBudget.single(2.0, RestartStages(detect=0.0, reschedule=0.0, reload=0.0, rewind=0.0))
    assert free.interval_min == 0.0 and free.loss_fraction == 0.0 and free.write_minutes_per_day == 0.0
    assert all(v == 0.0 for v in free.breakdown().values()) and free.rewind_minutes_per_day == 0.0
    many = free.with_failures_per_day(np.array([1.0, 2.0]))
    assert np.array_equal(many.breakdown()["detect"], [0.0, 0.0]) and np.array_equal(many.write_minutes_per_day, [0.0, 0.0])


def test_the_floor_interval_and_budget():
    s = RestartStages(detect=1.0, reschedule=2.0, reload=3.0, rewind=5.0)  # tau = 10
    b = RestartBudget.single(2.0, s, write_cost_min=0.5, step_min=1.0)
    assert b.floor_interval_min == 1.0
    f = b.floor_budget
    assert f.interval_min == 1.0 and f.write_cost_min == 0.0 and f.interval_bound_min is None
    assert b.floor_fraction == pytest.approx(2 * 6.5 / 1440, rel=1e-12) and b.floor_minutes_per_day == pytest.approx(13.0)
    short = RestartBudget.single(2.0, RestartStages(detect=1.0, reschedule=2.0, reload=3.0, rewind=0.25), step_min=1.0)
    assert short.floor_interval_min == 0.5  # the interval itself, when shorter than a step
    arr = b.with_interval(np.array([0.5, 10.0]))
    assert np.array_equal(arr.floor_interval_min, [0.5, 1.0])


# ---------------------------------------------------------------- the baseline: the question's numbers
def test_baseline_reproduces_the_question_exactly():
    s = Scenario()
    b = baseline_budget(s)
    assert b.stages.total == pytest.approx(15.0, abs=1e-12)
    assert b.restart_minutes_per_day == pytest.approx(30.0, abs=1e-12)  # 2 a day x 15 min, exactly: no first-order approximation
    assert b.restart_minutes_per_day / MINUTES_PER_DAY == pytest.approx(30 / 1440, abs=1e-15)
    assert round(100 * s.loss_fraction, 2) == 2.08
    # the blocking writes are a separate term: a 1.36 s write every 10 minutes of training
    tau, delta = s.checkpoint_interval_min, s.write_cost_min
    assert b.write_minutes_per_day == pytest.approx((MINUTES_PER_DAY - 30) * delta / (tau + delta), rel=1e-12)
    assert b.minutes_per_day == pytest.approx(b.restart_minutes_per_day + b.write_minutes_per_day, rel=1e-12)


def test_baseline_stages_per_mode():
    s = Scenario()
    m = s.modes
    b = baseline_budget(s)
    by = {x.mode: x for x in b.modes}
    # a crash at the launcher's poll, a hang at NCCL's untuned timeout, a lost host at half a health check
    assert by["crash"].detect == pytest.approx(m.launcher_poll_min)
    assert by["hang"].detect == pytest.approx(m.untuned_hang_timeout_min + m.launcher_poll_min)
    assert by["host_loss"].detect == pytest.approx(m.health_check_min / 2)
    assert by["sdc"].latency == m.sdc_latency_min and by["sdc"].persisted
    assert all(x.reload == s.reload_min and x.reschedule == s.reschedule_min for x in b.modes)
    st_ = b.stages
    assert st_.detect == pytest.approx(s.detect_min)
    assert st_.rewind == pytest.approx(s.checkpoint_interval_min / 2 + m.share("sdc") * m.sdc_latency_min)
    assert st_.reschedule == pytest.approx(15 - st_.detect - st_.reload - st_.rewind)
    assert baseline_stages(s) == st_


def test_a_stage_given_keeps_the_others_and_moves_the_total():
    s = Scenario()
    t = s.replace(detect_min=1.0)
    assert t.reschedule_min == pytest.approx(s.reschedule_min)
    assert t.minutes_per_restart == pytest.approx(15 - s.detect_min + 1.0)
    assert all(v == 1.0 for v in t.detect_by_mode.values())
    u = s.replace(hang_share=0.9)  # a mode input that moves the baseline's detection keeps the reschedule
    assert u.reschedule_min == pytest.approx(s.reschedule_min) and u.minutes_per_restart > 15
    v = s.replace(minutes_per_restart=20)  # a new total alone re-splits the remainder
    assert v.reschedule_min == pytest.approx(s.reschedule_min + 5)
    with pytest.raises(ValueError, match="minutes_per_restart must be >= detect"):
        Scenario(checkpoint_interval_min=31)


# ---------------------------------------------------------------- the day model
@given(days())
def test_breakdown_sums_to_the_day(day):
    b, inputs = day
    want = _by_hand(**inputs)
    parts = b.breakdown()
    assert sum(parts.values()) == pytest.approx(b.minutes_per_day, rel=1e-9, abs=1e-9)
    assert b.minutes_per_day == pytest.approx(want["total"], rel=1e-9, abs=1e-9) and b.minutes_per_day <= MINUTES_PER_DAY + 1e-9
    # the spare's idle term is a part of its own, T i, named only where there is a spare
    assert ("idle" in parts) == (inputs["i"] > 0) and parts.get("idle", 0.0) == pytest.approx(want["idle"], rel=1e-12)
    assert parts["write"] == pytest.approx(want["writes"], rel=1e-9, abs=1e-9)
    stages = sum(v for k, v in parts.items() if k not in ("write", "idle"))
    assert stages == pytest.approx(want["restart"], rel=1e-9, abs=1e-9)


@given(days())
def test_below_saturation_the_day_is_lambda_x_plus_the_writes(day):
    """Below saturation the restarts cost lambda X of the GPUs that train, (1 - i) lambda X of those paid for; the
    writes take delta / (tau + delta) of what is left; the spare T i. At saturation the day is lost, whatever i."""
    b, inputs = day
    lam, i, tau, delta = inputs["lam"], inputs["i"], inputs["tau"], inputs["delta"]
    x = inputs["D"] + inputs["R"] + inputs["L"] + tau / 2
    assert b.per_failure_min == pytest.approx(x, rel=1e-12)
    assert b.idle_minutes_per_day == pytest.approx(MINUTES_PER_DAY * i, rel=1e-12)
    if lam * x < MINUTES_PER_DAY:
        assert b.makes_progress
        assert b.restart_minutes_per_day == pytest.approx((1 - i) * lam * x, rel=1e-12)
        writes = (1 - i) * (MINUTES_PER_DAY - lam * x) * delta / (tau + delta)
        assert b.write_minutes_per_day == pytest.approx(writes, rel=1e-9, abs=1e-12)
        assert b.minutes_per_day == pytest.approx((1 - i) * lam * x + writes + MINUTES_PER_DAY * i, rel=1e-9, abs=1e-12)
    else:
        assert b.loss_fraction == 1.0 and not b.makes_progress and b.busy_share == 1.0
        assert b.minutes_per_day == MINUTES_PER_DAY and b.write_minutes_per_day == 0.0
        assert b.restart_minutes_per_day == pytest.approx((1 - i) * MINUTES_PER_DAY, rel=1e-12)  # the rest is the spare's


@given(days())
def test_the_floor_is_one_checkpoint_a_step_no_write_and_the_same_spare(day):
    """The floor's day, by hand: the interval min(step, tau) (a step of 0, not modelled, rewinds nothing), no
    write, the spare's idle share kept: floor = 1 - (1 - i)(1 - min(lambda X_f / T, 1)), X_f = D + R + L + min(step, tau) / 2.
    It is never above the day itself and never below the spare's share."""
    b, inputs = day
    lam, i, tau, step = inputs["lam"], inputs["i"], inputs["tau"], inputs["step"]
    tf = min(step, tau)
    xf = inputs["D"] + inputs["R"] + inputs["L"] + tf / 2
    floor = 1 - (1 - i) * (1 - min(lam * xf / MINUTES_PER_DAY, 1.0))
    assert b.floor_interval_min == tf
    f = b.floor_budget
    assert f.interval_min == tf and f.write_cost_min == 0.0 and f.idle_share == i and f.step_min == step
    assert b.floor_fraction == pytest.approx(floor, rel=1e-9, abs=1e-12)
    assert i - 1e-12 <= b.floor_fraction <= b.loss_fraction + 1e-12
    assert b.floor_minutes_per_day == pytest.approx(MINUTES_PER_DAY * floor, rel=1e-9, abs=1e-9)
    if lam * xf < MINUTES_PER_DAY:  # the floor's rewind is half a step a failure, of the GPUs that train
        assert f.rewind_minutes_per_day == pytest.approx((1 - i) * lam * tf / 2, rel=1e-9, abs=1e-12)


def test_day_loss_closed_form_and_arrays():
    assert day_loss(2.0, 15.0, 10.0, 0.0) == pytest.approx(30 / 1440)
    assert day_loss(2.0, 1440.0, 10.0, 1.0) == 1.0
    lam = np.array([1.0, 2.0, 1e4])
    out = day_loss(lam, 15.0, 10.0, 0.1, 0.01)
    expect = 1 - 0.99 * (1 - np.minimum(lam * 15 / 1440, 1)) * 10 / 10.1
    assert np.allclose(out, expect, rtol=1e-12)


def test_day_model_interval_optimum_is_the_closed_form_symbolically():
    import sympy as sp

    tau, delta, M, R, s = sp.symbols("tau delta M R s", positive=True)
    useful = (1 - (R + s * tau / 2) / M) * tau / (tau + delta)  # the day model's share trained
    roots = sp.solve(sp.diff(useful, tau), tau)
    (root,) = [r for r in roots if r.subs({delta: 1e-3, M: 720, R: 4, s: 1}).is_positive]
    assert sp.simplify(root - (-delta + sp.sqrt(delta**2 + 2 * delta * (M - R) / s))) == 0
    # and the library's function is that root, bounded below
    assert iv.best_interval(1e-3, 720.0, 4.0, 0.9) == pytest.approx(float(root.subs({delta: 1e-3, M: 720, R: 4, s: 0.9})))
    assert iv.best_interval(1e-3, 720.0, 4.0, 0.9, min_interval=5.0) == 5.0
    # Young's sqrt(2 delta M) to first order: sqrt(2 x 1e-6 x 1e4) = 0.1414
    assert iv.best_interval(1e-6, 1e4) == pytest.approx(0.1414214, rel=1e-3)


@given(st.floats(1e-5, 1.0), st.floats(10.0, 1e5), st.floats(0.0, 5.0), st.floats(0.05, 1.0))
def test_best_interval_is_the_minimum_of_the_day(delta, m, r, share):
    tau = iv.best_interval(delta, m, r, share)
    lam = MINUTES_PER_DAY / m

    def loss(t):
        x = r + share * t / 2
        return day_loss(lam, x, t, delta)

    for other in (tau * 0.8, tau * 1.25):
        assert loss(tau) <= loss(other) + 1e-15


def test_a_day_of_draws_is_the_day_of_each_draw():
    s = Scenario()
    b = baseline_budget(s)
    lam = np.array([1.0, 2.0, 5.0])
    many = b.with_failures_per_day(lam)
    for i, x in enumerate(lam):
        assert many.loss_fraction[i] == pytest.approx(b.with_failures_per_day(float(x)).loss_fraction, rel=1e-12)


def test_copies_and_rejections():
    b = baseline_budget(Scenario())
    assert b.with_stages(detect=0.5).stages.detect == 0.5
    assert b.with_stages(rewind=30).interval_min == 60
    with pytest.raises(ValueError, match="stage must be one of"):
        b.with_stages(warmup=1.0)
    with pytest.raises(ValueError, match="failures_per_day"):
        dataclasses.replace(b, failures_per_day=0.0)
    with pytest.raises(ValueError, match="shares must sum to 1"):
        dataclasses.replace(b, modes=b.modes[:2])
    with pytest.raises(ValueError, match="write_cost_min must be 0 when interval_min is 0"):
        dataclasses.replace(b, interval_min=0.0)
    for stage in STAGES:
        with pytest.raises(ValueError, match=stage):
            RestartStages(**{k: (-1.0 if k == stage else 1.0) for k in STAGES})


# ---------------------------------------------------------------- floor <= after <= baseline <= 100 %, at any scale
GRID_GPUS = [8, 1024, 4096, 131_072, 1_000_000, 10_000_000]
GRID_RATES = [1e-5, 4.9e-4, 8e-4, 1e-2, 10.0]


@pytest.mark.parametrize("n", GRID_GPUS)
@pytest.mark.parametrize("rate", GRID_RATES)
def test_one_model_orders_floor_after_and_baseline_at_any_scale(n, rate):
    s = Scenario().replace(n_gpus=n, rate_per_gpu_day=rate)
    if s.failures_per_day > 1e4:
        pytest.skip("beyond the grid's 10^4 failures a day")
    a = answer(s, spread_draws=0)
    b, f = a.baseline, a.after
    assert 0 <= f.floor_fraction <= f.loss_fraction + 1e-15
    assert f.loss_fraction <= b.loss_fraction + 1e-15 and b.loss_fraction <= 1.0
    for day in (b, f, f.floor_budget):
        assert 0 <= day.minutes_per_day <= MINUTES_PER_DAY + 1e-9
        assert all(v >= -1e-9 for v in day.breakdown().values())
    rows = {r.key: r.value for r in a.rows()}
    assert rows["after_levers_pct"] == pytest.approx(100 * f.loss_fraction) and rows["floor_pct"] <= rows["after_levers_pct"] + 1e-12
    assert rows["baseline_total_pct"] <= 100 + 1e-9 and rows["after_levers_minutes_per_day"] <= MINUTES_PER_DAY + 1e-9
    got = __import__("json").loads(a.to_json())  # the JSON is the table, row for row, and the sentence
    assert got["text"] == a.text and {k: v["value"] for k, v in got.items() if k not in ("text", "spoken")} == pytest.approx(rows)
    text = a.text
    assert f"{f.loss_fraction:.2%}" in text or f"{f.loss_fraction:.3%}" in text  # the sentence's number is the table's
    assert f"{f.floor_fraction:.2%}" in text or f"{f.floor_fraction:.3%}" in text
    for pct in (float(x) for x in __import__("re").findall(r"([0-9]+(?:\.[0-9]+)?) ?%", text)):
        assert pct <= 100.0 + 1e-9, text


@given(st.floats(1.0, 1e7), st.floats(1e-3, 1e4))
def test_property_grid_up_to_ten_million_gpus_and_ten_thousand_failures_a_day(n, failures_per_day):
    s = Scenario().replace(n_gpus=int(n), failures_per_day=failures_per_day)
    a = answer(s, spread_draws=0)
    b, f = a.baseline, a.after
    assert f.floor_fraction <= f.loss_fraction + 1e-12 and f.loss_fraction <= b.loss_fraction + 1e-12 and b.loss_fraction <= 1.0
    assert max(b.minutes_per_day, f.minutes_per_day, f.floor_minutes_per_day) <= MINUTES_PER_DAY + 1e-9
    assert sum(t.minutes_per_day for t in a.floor_terms) == pytest.approx(f.floor_minutes_per_day, rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("changes", [
    {"interval_min": 3.0}, {"failures_per_day": 7, "write_cost_min": 0.5}, {"idle_share": 0.25},
    {"persisted_interval_min": 10.0, "interval_bound_min": 0.2},
    {"interval_min": np.array([1.0, 2.0]), "failures_per_day": np.array([0.5, 4.0])},
])
def test_the_fast_copy_is_the_dataclass_copy(changes):
    """Validated._evolve (the levers' copy) builds the record dataclasses.replace builds, field for field."""
    b = baseline_budget(Scenario())
    fast, slow = b._evolve(**changes), dataclasses.replace(b, **changes)
    for f in dataclasses.fields(RestartBudget):
        x, y = getattr(fast, f.name), getattr(slow, f.name)
        assert type(x) is type(y) and np.array_equal(np.asarray(x, dtype=object), np.asarray(y, dtype=object)), f.name
    assert np.array_equal(fast.loss_fraction, slow.loss_fraction)


@pytest.mark.parametrize("changes, name", [
    ({"interval_min": -1.0}, "interval_min"), ({"failures_per_day": 0.0}, "failures_per_day"),
    ({"idle_share": 1.0}, "idle_share"), ({"write_cost_min": np.array([0.1, np.nan])}, "write_cost_min"),
    ({"interval_min": 0.0, "write_cost_min": 0.5}, "write_cost_min"),
])
def test_the_fast_copy_rejects_what_the_dataclass_copy_rejects(changes, name):
    b = baseline_budget(Scenario())
    for copy in (lambda: b._evolve(**changes), lambda: dataclasses.replace(b, **changes)):
        with pytest.raises(ValueError, match=name):
            copy()
