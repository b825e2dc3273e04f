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
    # reschedule: triangular from a tuned Slurm's 10 s share + MegaScale's 5 s start-up (15 s) through the question's
    # remainder to Kokolis' 5-min re-queue less the 129.5 s reload (170.5 s)
    lo, hi = 15.0 / 60, (300 - 129.5) / 60
    assert (s.reschedule_low_min, s.reschedule_high_min) == pytest.approx((lo, hi))
    x = draws["reschedule"]
    assert lo <= x.min() and x.max() <= hi and x.min() < lo + 0.2 and x.max() > hi - 0.03
    _close(x, *_tri_mean_sd(lo, s.reschedule_min, hi))


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
        for got, y in ((r.dominance, loss), (r.floor_dominance, floor)):
            want = 0.0 if np.ptp(x) == 0 else stats.spearmanr(x, y).statistic
            assert got[name] == pytest.approx(want, abs=1e-9)
    assert r.dominance["rate"] > 0.2 and r.dominance["reschedule"] > 0.2  # more failures, a longer re-queue: more loss
    # the widest input: the SDC latency's 10 min to 24 h (a factor 144) against the reschedule's 15 s to 2.8 min (11)
    assert r.dominant == r.floor_dominant == "sdc latency" and r.dominance["sdc latency"] > 0.7
    assert all(abs(v) < 0.5 for k, v in r.dominance.items() if k != "sdc latency")
    assert r.dominance_text == "the SDC latency dominates both"


def test_the_reschedule_range_lowers_and_widens_the_floor():
    """Notebooks 08 and 15: drawing the reschedule moves the floor's median down and widens its range.

    By hand: the triangular (0.25, 2.79, 2.84) has mean (0.25 + 2.79 + 2.84) / 3 = 1.96 min, below its mode, and the
    floor is linear in the reschedule of every failure, so the median floor falls; an extra independent input can only
    add spread. The point floor stays inside the wider range."""
    from course_lib.answer import answer

    a = answer(Scenario(), spread_draws=0)
    held = un.floor_range(Scenario(), pulled=list(a.order), vary=[x for x in un.INPUTS if x not in ("reschedule", "sdc latency")])
    full = un.floor_range(Scenario(), pulled=list(a.order), shifts=True, vary=[x for x in un.INPUTS if x != "sdc latency"])
    assert full.shifts["reschedule"] < 0 and full.shifts["reschedule"] == min(full.shifts.values())
    assert full.floor.central < held.floor.central
    assert full.floor.high - full.floor.low > held.floor.high - held.floor.low
    assert full.floor.contains(a.after.floor_fraction) and held.floor.contains(a.after.floor_fraction)
    assert held.dominant == "rate" and full.dominant == "reschedule"


def test_the_varied_inputs_are_spoken_as_drawn():
    """The answer's sentence names the inputs that moved: the spare's restart only when the spare is pulled."""
    r = un.floor_range(Scenario(), n=200, pulled=[])
    assert r.varied == ("rate", "hang share", "hang timeout", "reschedule", "sdc latency")
    assert r.inputs_text(" (counted)") == ("the rate (counted), the hang share, the tuned timeout, the reschedule, "
                                           "the SDC latency")
    r = un.floor_range(Scenario(), n=200, pulled=["hot-spare restart"], vary=("restart", "rate"))
    assert r.varied == ("rate", "restart") and r.inputs_text() == "the rate, the spare's restart"


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
    """The six draws, remade here with numpy from the seed in the documented order (rate, hang share, timeout, restart,
    reschedule, SDC latency: its logarithm triangular on ln 10, ln 60 and ln 1,440 minutes)."""
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
                                              rr["kokolis_u0_low"].minutes, N) - inside, 0.0, None),
            "reschedule": rng.triangular(15 / 60, s.reschedule_min, (300 - 129.5) / 60, N),
            "sdc latency": np.exp(rng.triangular(np.log(10), np.log(60), np.log(1440), N))}
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


# ---------------------------------------------------------------- tied draws (issue 37)
def _ordinal_spearman(x, y):
    """Spearman's correlation with ties ranked by their index (the rank the stable sort gives), in plain Python:
    each value's rank is its place in the list sorted by (value, index); then Pearson's formula on the ranks."""
    def ranks(v):
        r = [0] * len(v)
        for place, i in enumerate(sorted(range(len(v)), key=lambda i: (v[i], i))):
            r[i] = place
        return r

    rx, ry = ranks(list(x)), ranks(list(y))
    n = len(rx)
    mx, my = sum(rx) / n, sum(ry) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    return sxy / math.sqrt(sxx * syy)


def test_the_ranges_and_ranks_of_a_tied_loss_by_hand(monkeypatch):
    """40 days: one loss of 0 (the first), then 0.02, 0.03, 0.04, 0.01 in turn (nine 0.01s, ten of each other), so
    equal losses lie far apart and the lowest is not tied. By hand (numpy's percentile: linear between the sorted
    values at (n - 1) q; sorted: 0, 0.01 at places 1-9, 0.02 at 10-19, 0.03 at 20-29, 0.04 at 30-39): the median
    sits at 19.5, between 0.02 and 0.03: 0.025; the 5th percentile at 1.95, among the 0.01s; the 95th at 37.05,
    among the 0.04s. The floor is half the loss. The rate's rank correlation ranks the tied losses by their
    index (the stable sort), not in whatever order a faster sort leaves them."""
    from types import SimpleNamespace

    loss = np.array([0.0] + [0.01 * (1 + i % 4) for i in range(1, 40)])
    seen = []

    def fake(s, pulled, draws, data_dir=None):
        seen.append({k: np.array(v, dtype=float) for k, v in draws.items()})
        return None, SimpleNamespace(floor_fraction=loss / 2, loss_fraction=loss)

    monkeypatch.setattr(un, "_days", fake)
    r = un.floor_range(Scenario(), n=40, vary=("rate",))
    assert (r.loss.central, r.loss.low, r.loss.high) == pytest.approx((0.025, 0.01, 0.04), rel=1e-12)
    assert (r.floor.central, r.floor.low, r.floor.high) == pytest.approx((0.0125, 0.005, 0.02), rel=1e-12)
    (draws,) = seen
    rate = draws["rate"]
    assert len(set(rate.tolist())) == 40  # the rate is continuous: the ties are the loss's
    assert r.dominance["rate"] == pytest.approx(_ordinal_spearman(rate, loss), rel=1e-12, abs=1e-15)
    assert {k: v for k, v in r.dominance.items() if k != "rate"} == {"hang share": 0.0, "hang timeout": 0.0, "restart": 0.0,
                                                                       "reschedule": 0.0, "sdc latency": 0.0}

    # the other way round: a tied input (its lowest value alone, the rest 1, 2, 3, 0 in turn) against a loss
    # falling with the index, so that ranking the ties by index runs against the loss
    loss2 = np.linspace(0.05, 0.01, 40)
    tied = np.array([-1.0] + [float(i % 4) for i in range(1, 40)])

    def fake2(s, pulled, draws, data_dir=None):
        return None, SimpleNamespace(floor_fraction=loss2, loss_fraction=loss2)

    monkeypatch.setattr(un, "_days", fake2)
    monkeypatch.setattr(un, "_tri", lambda rng, lo, mode, hi, n: tied.copy())
    r2 = un.floor_range(Scenario(), n=40, vary=("hang share",))
    # by hand: -1 has rank 0; the nine 0s (i = 4, 8, ..., 36) ranks 1-9, the ten 1s (i = 1, 5, ..., 37) 10-19, the 2s
    # 20-29, the 3s 30-39, each group in index order; the loss's ranks are 39 - i
    first = {0: 1, 1: 10, 2: 20, 3: 30}
    rk = [0] + [first[i % 4] + i // 4 - (i % 4 == 0) for i in range(1, 40)]
    assert sorted(rk) == list(range(40))
    want = float(np.corrcoef(rk, [39 - i for i in range(40)])[0, 1])
    assert _ordinal_spearman(tied, loss2) == pytest.approx(want, rel=1e-12)
    assert r2.dominance["hang share"] == pytest.approx(want, rel=1e-12)
    assert r2.dominance["rate"] == 0.0  # not drawn: constant


def test_restart_draws_clamped_at_zero_tie_and_the_range_sits_on_them(monkeypatch):
    """A reload from memory of 1.5 min: the crash's detection and that reload take 1.5017 min of the restart, so
    the triangular draws (0.667, 2.5, 5) below it are clamped to a reschedule of 0, all tied. By hand the share of
    them is the triangular's CDF there, (1.5017 - 0.667)^2 / ((5 - 0.667)(2.5 - 0.667)) = 8.78 %, within 4 binomial
    standard errors of the 4,000 draws. At the other end the spare never reschedules slower than the baseline's
    2.786 min (the lever takes the smaller), so the draws above 1.5017 + 2.786 = 4.288 min tie in the loss though
    not in the restart: (5 - 4.288)^2 / ((5 - 0.667)(5 - 2.5)) = 4.68 %. More than 5 % tie at the lowest loss, so
    the 5th percentile of the loss (and of the floor) is that loss exactly. The rank correlation ranks each tie by
    its index (the stable sort): the reference below does it in plain Python."""
    s = Scenario().replace(n_gpus=16384, reload_after_min=1.5)
    rr = sourced("restart_ranges.csv", "key")
    lo, mode, hi = rr["deadpool_hot_swap_512"].minutes, s.restart_after_min, rr["kokolis_u0_low"].minutes
    inside = s.detect_after_by_mode["crash"] + s.reload_after_min
    cap = inside + s.reschedule_min  # a drawn restart above it reschedules no faster than the baseline
    assert lo < inside < mode < cap < hi  # the CDF's rising branch at the bottom, its falling one at the top
    p0 = (inside - lo) ** 2 / ((hi - lo) * (mode - lo))
    p1 = (hi - cap) ** 2 / ((hi - lo) * (hi - mode))
    assert p0 == pytest.approx(0.0878, abs=1e-4) and p1 == pytest.approx(0.0468, abs=1e-4)
    r, seen = _capture(monkeypatch, s, vary=("restart",))
    draws, after = seen[0]
    x, loss, floor = draws["restart"], np.asarray(after.loss_fraction), np.asarray(after.floor_fraction)
    zeros, top = x == 0.0, x >= s.reschedule_min
    for group, p in ((zeros, p0), (top, p1)):
        assert abs(group.mean() - p) < 4 * math.sqrt(p * (1 - p) / N)
        assert len(set(loss[group].tolist())) == 1  # one loss for the whole group
    assert len(set(x[top].tolist())) == top.sum()  # ... though the top's restarts all differ
    assert loss[zeros][0] == loss.min() < loss[~zeros].min() and loss[top][0] == loss.max() > loss[~top].max()
    assert zeros.sum() > 0.05 * (N - 1) + 1  # enough ties to hold the 5th percentile's two neighbours
    assert r.loss.low == loss.min() and r.floor.low == floor.min()
    assert r.dominance["restart"] == pytest.approx(_ordinal_spearman(x, loss), rel=1e-9)
    assert 0.99 < r.dominance["restart"] < 1.0  # the loss rises with the restart, flat at the top
    # and with the rate drawn too the tied restarts meet untied losses: the ties ranked by index
    r2, seen2 = _capture(monkeypatch, s, vary=("rate", "restart"))
    d2, a2 = seen2[-1]
    assert np.array_equal(d2["restart"] == 0.0, zeros)  # the same stream: the same draws tie
    for name in ("rate", "restart"):
        assert r2.dominance[name] == pytest.approx(_ordinal_spearman(d2[name], np.asarray(a2.loss_fraction)), rel=1e-9)


def _tri_quantile(q, lo, mode, hi):
    """The q-quantile of triangular(lo, mode, hi), inverted by hand from its CDF."""
    if q <= (mode - lo) / (hi - lo):
        return lo + np.sqrt(q * (hi - lo) * (mode - lo))
    return hi - np.sqrt((1 - q) * (hi - lo) * (hi - mode))


def test_the_sdc_latency_alone_moves_the_floor_along_its_log_triangle():
    """The SDC latency drawn alone (the course's assumed 10 min, 1 h, 24 h, its logarithm triangular). The floor is the
    point floor plus lambda p_sdc (L - 60) minutes a day, linear and rising in L, so its percentiles are those of L put
    through that line. By hand: p_sdc = 6/419 (Llama 3's SDCs among its 419 interruptions), lambda = 2 a day; the
    quantiles of ln L inverted from the triangle's CDF. A sample quantile of 4,000 draws sits within a few
    hundredths of q of the true one: allowed 4 standard errors on the CDF's side."""
    from course_lib.answer import answer

    a = answer(Scenario(), spread_draws=0)
    r = un.floor_range(Scenario(), pulled=list(a.order), vary=("sdc latency",))
    assert r.varied == ("sdc latency",) and r.floor_dominant == "sdc latency"
    point = a.after.floor_fraction
    slope = 2.0 * 6 / 419 / 1440.0  # share of the day per minute of latency
    lo, mode, hi = np.log(10), np.log(60), np.log(1440)
    for q, got in ((0.5, r.floor.central), (0.05, r.floor.low), (0.95, r.floor.high)):
        latency = (got - point) / slope + 60.0  # the latency this floor is the point floor plus
        ln = np.log(latency)
        # F(ln L) by hand, triangular CDF
        cdf = (ln - lo) ** 2 / ((hi - lo) * (mode - lo)) if ln <= mode else 1 - (hi - ln) ** 2 / ((hi - lo) * (hi - mode))
        assert cdf == pytest.approx(q, abs=4 * np.sqrt(q * (1 - q) / r.n)), q
    # the 95th percentile by hand: exp(ln 1440 - sqrt(0.05 x 4.970 x 3.178)) = exp(7.272 - 0.889) = 592 min, 9.9 h
    assert np.exp(_tri_quantile(0.95, lo, mode, hi)) == pytest.approx(592, rel=0.005)
    assert r.floor.contains(point) and r.floor.high > 2 * point  # a day-long tail: the floor's range is mostly this input
    # a latency given: the same ratios (1/6 and 24 x) around it; zero: nothing to spread (an SDC seen at once)
    for latency in (30.0, 3.0):  # half the hour, and under a minute at the low end (0.5 min): the ratios 1/6 and 24 kept
        given = Scenario().replace(sdc_latency_min=latency)
        g = un.floor_range(given, n=400, vary=("sdc latency",))
        assert g.floor.low < answer(given, spread_draws=0).after.floor_fraction < g.floor.high

    seen = []
    real = un._days

    def spy(s, pulled, draws, data_dir=None):
        seen.append(np.array(draws["sdc latency"], dtype=float))
        return real(s, pulled, draws, data_dir)

    un._days = spy  # put back below whatever happens
    try:
        un.floor_range(Scenario().replace(sdc_latency_min=30.0), n=4000, vary=("sdc latency",))
    finally:
        un._days = real
    x = np.log(seen[0])
    lo, mode, hi = np.log(5.0), np.log(30.0), np.log(720.0)  # 30 min / 6 and 30 min x 24, by hand
    assert lo <= x.min() and x.max() <= hi and x.min() < lo + 0.3 and x.max() > hi - 0.3
    # the triangle's mean and standard deviation, by hand: (a + b + c) / 3 and sqrt((a^2 + b^2 + c^2 - ab - ac - bc) / 18)
    sd = np.sqrt((lo**2 + mode**2 + hi**2 - lo * mode - lo * hi - mode * hi) / 18)
    assert x.mean() == pytest.approx((lo + mode + hi) / 3, abs=4 * sd / np.sqrt(x.size))
    zero = Scenario().replace(sdc_latency_min=0.0)
    z = un.floor_range(zero, n=50, vary=("sdc latency",))
    assert z.floor.low == z.floor.high == pytest.approx(answer(zero, spread_draws=0).after.floor_fraction, rel=1e-12)


def test_the_sdc_latency_range_is_the_assumed_ratios_around_the_scenario():
    """By hand: the default hour gives the data's 10 min, 1 h and 24 h; 30 min gives 5 min and 12 h; 0 gives 0, 0, 0."""
    assert un.sdc_latency_range(Scenario()) == pytest.approx((10.0, 60.0, 1440.0), rel=1e-12)
    assert un.sdc_latency_range(Scenario().replace(sdc_latency_min=30.0)) == pytest.approx((5.0, 30.0, 720.0), rel=1e-12)
    assert un.sdc_latency_range(Scenario().replace(sdc_latency_min=0.0)) == (0.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="scenario must be a Scenario"):
        un.sdc_latency_range({"sdc_latency_min": 60})
