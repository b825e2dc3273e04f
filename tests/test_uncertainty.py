"""course_lib.uncertainty: the draws have the distributions they claim, and the ranges are their percentiles (issue 29).

The draws are captured where they enter the day model (``_days``) and checked against their stated
shapes with scipy's own distributions and the triangular's closed-form mean; the reported ranges and
rank correlations are recomputed from the captured days with numpy/scipy.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from course_lib import Scenario
from course_lib import uncertainty as un
from course_lib.data import mode_shares, sourced

N = 4_000


def _capture(monkeypatch, scenario, **kwargs):
    seen = []
    real = un._days

    def spy(s, pulled, draws, data_dir=None):
        base, after = real(s, pulled, draws, data_dir)
        seen.append(({k: np.array(v, dtype=float) for k, v in draws.items()}, after))
        return base, after

    monkeypatch.setattr(un, "_days", spy)
    r = un.floor_range(scenario, n=N, **kwargs)
    return r, seen


def _tri_mean_sd(lo, mode, hi):
    mean = (lo + mode + hi) / 3
    var = (lo * lo + mode * mode + hi * hi - lo * mode - lo * hi - mode * hi) / 18
    return mean, math.sqrt(var)


def _close(x, mean, sd):  # the sample mean within 5 standard errors, the sample sd within 10 %
    assert abs(x.mean() - mean) < 5 * sd / math.sqrt(x.size)
    assert x.std() == pytest.approx(sd, rel=0.1)


def test_each_draw_has_its_stated_distribution(monkeypatch):
    s = Scenario()
    r, seen = _capture(monkeypatch, s)
    draws, after = seen[0]
    assert set(draws) == set(un.INPUTS) and all(x.shape == (N,) for x in draws.values())
    # rate: Jeffreys posterior Gamma(k + 1/2) / days, k = 2 a day x 30 days = 60
    k, days = 2.0 * 30, 30.0
    assert r.count == pytest.approx(k) and r.days == days
    lam = draws["rate"]
    _close(lam, (k + 0.5) / days, math.sqrt(k + 0.5) / days)
    assert stats.kstest(lam * days, stats.gamma(k + 0.5).cdf).pvalue > 1e-3
    # hang share: triangular on the data's (low, central, high)
    hs = mode_shares()["hang"]
    h = draws["hang share"]
    assert hs["low"] <= h.min() and h.max() <= hs["high"]
    _close(h, *_tri_mean_sd(hs["low"], s.modes.share("hang"), hs["high"]))
    # hang timeout: triangular (2, 5, 10) x the longest gap between heartbeats, max(step, snapshot copy)
    gap = max(s.step_min, s.snapshot_cost_min)
    assert gap == s.step_min > s.snapshot_cost_min > 0  # the question's fleet: the step is the longer gap
    t = draws["hang timeout"]
    assert 2 * gap <= t.min() and t.max() <= 10 * gap and t.min() < 2.5 * gap and t.max() > 9 * gap
    _close(t, *_tri_mean_sd(2 * gap, s.modes.hang_timeout_min, 10 * gap))
    # restart: no spare pulled at 4,096 GPUs, so its restart stays at the point value
    assert "hot-spare restart" not in r.shifts and np.all(draws["restart"] == s.reschedule_after_min)


def test_the_ranges_are_the_percentiles_of_the_days_and_dominance_is_spearman(monkeypatch):
    r, seen = _capture(monkeypatch, Scenario())
    draws, after = seen[0]
    floor, loss = np.asarray(after.floor_fraction), np.asarray(after.loss_fraction)
    for got, x in ((r.floor, floor), (r.loss, loss)):
        assert (got.central, got.low, got.high) == pytest.approx(
            (np.median(x), np.quantile(x, 0.05), np.quantile(x, 0.95)), rel=1e-12)
        assert got.low < got.central < got.high
    for name in un.INPUTS:
        x = draws[name]
        want = 0.0 if np.ptp(x) == 0 else stats.spearmanr(x, loss).statistic
        assert r.dominance[name] == pytest.approx(want, abs=1e-9)
    assert r.dominance["rate"] > 0.5  # more failures, more loss
    assert r.dominant == "rate" and all(abs(v) < r.dominance["rate"] for k, v in r.dominance.items() if k != "rate")


def test_rate_alone_scales_the_range_like_the_gamma_posterior():
    """With only the rate drawn, the floor's median and percentiles move with the rate's own quantiles."""
    s = Scenario()
    point = un.floor_range(s, n=10, vary=()).floor.central
    r = un.floor_range(s, n=N, vary=("rate",))
    g = stats.gamma(60.5, scale=1 / 30)
    lam0 = s.failures_per_day
    # the floor grows with the rate; within the draws' statistical error it follows the gamma's quantiles
    lo_q, hi_q = g.ppf(0.05) / lam0, g.ppf(0.95) / lam0
    assert r.floor.low < point < r.floor.high
    assert r.floor.low / point == pytest.approx(lo_q, rel=0.03)
    assert r.floor.high / point == pytest.approx(hi_q, rel=0.03)
    assert r.floor.central / point == pytest.approx(g.median() / lam0, rel=0.02)


def test_a_given_timeout_is_spread_from_0_4_to_2_times(monkeypatch):
    s = Scenario().replace(hang_timeout_min=5.0)
    r, seen = _capture(monkeypatch, s, vary=("hang timeout",))
    draws, _ = seen[0]
    t = draws["hang timeout"]
    assert 2.0 <= t.min() and t.max() <= 10.0
    _close(t, *_tri_mean_sd(2.0, 5.0, 10.0))
    for name in ("rate", "hang share", "restart"):  # not varied: fixed at the point value
        assert np.ptp(draws[name]) == 0
    assert draws["rate"][0] == pytest.approx(s.failures_per_day)
    assert r.dominance["rate"] == 0.0 and r.dominance["hang timeout"] > 0.9  # a longer timeout, a longer hang


def test_restart_is_drawn_when_the_spare_is_pulled(monkeypatch):
    s = Scenario().replace(n_gpus=16384)
    r, seen = _capture(monkeypatch, s, vary=("restart",))
    draws, _ = seen[0]
    rr = sourced("restart_ranges.csv", "key")
    inside = s.detect_after_by_mode["crash"] + s.reload_after_min
    lo, hi = rr["deadpool_hot_swap_512"].minutes, rr["kokolis_u0_low"].minutes
    x = draws["restart"]
    assert x.min() >= 0 and x.max() <= hi - inside
    mean, _ = _tri_mean_sd(lo, s.restart_after_min, hi)
    assert x.mean() == pytest.approx(max(mean - inside, 0.0), rel=0.05)
    assert np.ptp(draws["rate"]) == 0 and r.dominance["restart"] > 0.5


def test_shifts_are_each_inputs_own_move_of_the_median():
    s = Scenario()
    point = un.floor_range(s, n=10, vary=()).floor.central
    r = un.floor_range(s, n=N, vary=("rate",), shifts=True)
    assert set(r.shifts) == {"rate"}
    assert r.shifts["rate"] == pytest.approx(r.floor.central - point, rel=1e-9, abs=1e-15)
    assert r.shift_sentence.endswith(f"rate {100 * r.shifts['rate']:+.3f}")
    assert un.floor_range(s, n=10).shift_sentence == ""
    both = un.FloorRange(r.floor, r.loss, {}, 1, {"a": 0.001, "b": -0.003})
    assert both.shift_sentence.endswith("b -0.300, a +0.100")  # largest move first


def test_range_helpers():
    r = un.Range(0.02, 0.01, 0.03)
    assert r.contains(0.01) and r.contains(0.03) and r.contains(0.02) and not r.contains(0.031) and not r.contains(0.009)
    assert r.text() == "2.00% (90 % range 1.00%-3.00%)"
    f = un.FloorRange(r, r, {"rate": 0.2, "hang share": -0.7, "restart": 0.5}, 3)
    assert f.dominant == "hang share"
    rng = np.random.default_rng(0)
    assert np.all(un._tri(rng, 1.0, 1.0, 1.0, 5) == 1.0)
    x = un._tri(rng, 3.0, 2.0, 1.0, 2000)  # low above mode and high below it are widened to the mode
    assert x.min() >= 1.0 - 1e-12 and x.max() <= 3.0


def test_bad_input_is_rejected():
    for kwargs, name in ((dict(n=0), "n"), (dict(seed=-1), "seed"), (dict(vary=("weather",)), "vary")):
        with pytest.raises(ValueError, match=name):
            un.floor_range(**kwargs)
    with pytest.raises(ValueError, match="scenario"):
        un.floor_range({"n_gpus": 4096})


def test_p_at_least_is_the_poisson_tail():
    lam = 2.0
    assert un.p_at_least(4, lam) == pytest.approx(1 - math.exp(-lam) * (1 + 2 + 2 + 4 / 3), rel=1e-12)  # the 14 %
    assert un.p_at_least(1, lam) == pytest.approx(1 - math.exp(-lam), rel=1e-12)
    assert un.p_at_least(1, 0.0) == 0.0
    for args, name in (((0, 2.0), "k"), ((1.5, 2.0), "k"), ((2, -1.0), "failures_per_day")):
        with pytest.raises(ValueError, match=name):
            un.p_at_least(*args)


def test_draws_are_the_documented_stream_from_the_seed(monkeypatch):
    """The four draws, remade here with numpy from the seed in the documented order (rate, hang share, timeout, restart)."""
    s = Scenario().replace(n_gpus=16384)  # the spare is pulled here, so the restart is drawn too
    r, seen = _capture(monkeypatch, s, seed=7)
    draws, _ = seen[0]
    m = s.modes
    k, days = s.failures_per_day * s.observed_days, s.observed_days
    gap = max(s.step_min, s.snapshot_cost_min)
    hs = mode_shares()["hang"]
    rr = sourced("restart_ranges.csv", "key")
    inside = s.detect_after_by_mode["crash"] + s.reload_after_min
    rng = np.random.default_rng(7)
    want = {"rate": rng.gamma(k + 0.5, 1.0 / days, N),
            "hang share": rng.triangular(hs["low"], m.share("hang"), hs["high"], N),
            "hang timeout": rng.triangular(2 * gap, m.hang_timeout_min, 10 * gap, N),
            "restart": np.clip(rng.triangular(rr["deadpool_hot_swap_512"].minutes, s.restart_after_min,
                                              rr["kokolis_u0_low"].minutes, N) - inside, 0.0, None)}
    assert inside > 0 and want["restart"].min() > 0
    for name in un.INPUTS:
        np.testing.assert_allclose(draws[name], want[name], rtol=1e-12, atol=0, err_msg=name)
    # the defaults: 4,000 draws from seed 12
    d = un.floor_range(s)
    assert d.n == N and d == un.floor_range(s, n=N, seed=12) and d != un.floor_range(s, n=N, seed=13)


def test_the_point_draw_is_the_point_answer():
    """With nothing drawn the day is the answer's own (the tuned hang detection: timeout + half a rank-monitor poll + the launcher's poll)."""
    from course_lib.answer import answer

    for s in (Scenario(), Scenario().replace(n_gpus=16384), Scenario().replace(hang_timeout_min=5.0)):
        p = un.floor_range(s, n=10, vary=())
        a = answer(s, spread_draws=0)
        assert p.floor.central == pytest.approx(a.after.floor_fraction, rel=1e-12)
        assert p.loss.central == pytest.approx(a.after.loss_fraction, rel=1e-12)
        m = s.modes
        assert s.detect_after_by_mode["hang"] == pytest.approx(
            min(m.hang_timeout_min + m.rank_monitor_poll_min / 2 + m.launcher_poll_min, s.detect_by_mode["hang"]), rel=1e-12)


def test_a_constant_loss_makes_every_input_uncorrelated():
    """No lever pulled: the after-levers day is the baseline, which the tuned timeout does not touch."""
    r = un.floor_range(Scenario(), n=500, vary=("hang timeout",), pulled=[])
    assert r.loss.low == r.loss.high and all(v == 0.0 for v in r.dominance.values())


def test_results_are_frozen():
    import dataclasses

    r = un.Range(0.02, 0.01, 0.03)
    f = un.FloorRange(r, r, {}, 1)
    assert f.count == 0.0 and f.days == 0.0 and f.shifts == {}
    for obj, attr in ((r, "central"), (f, "n")):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(obj, attr, 1)
