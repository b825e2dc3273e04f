"""course_lib.simulate: the vectorized Monte Carlo against the per-event loop (run by run), against
Daly's complete model (within 3 standard errors), its simulated optimum against the exact one, and
its Weibull, seeding and validation behaviour."""
from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np
import pytest

from course_lib import interval as iv
from course_lib import simulate as sim
from course_lib.levers import all_levers_day
from course_lib.scenario import ModeInputs, ReplicaInputs, Scenario
from course_lib.simulate import SimulationResult, simulate_job, simulate_job_reference, weibull_scale
from replica_moments import floor_by_hand, standard_error_by_hand


@pytest.mark.parametrize(
    "args, kw",
    [
        ((10.0, 0.3, 0.01, 1.0, 0.1), {}),
        ((10.05, 0.3, 0.01, 1.0, 0.2), {}),  # a remainder segment
        ((3.0, 0.5, 0.5, 1.0, 0.2), {}),  # delta/M = 0.5: failures during writes and restarts
        ((20.0, 0.0141, 1e-4, 1.0, 0.0), {}),  # delta/M = 1e-4, many segments per failure
        ((5.0, 0.2, 0.02, 1.0, 0.1), {"distribution": "weibull", "shape": 0.7}),
    ],
)
def test_vectorized_equals_the_per_event_loop_run_by_run(args, kw):
    fast = simulate_job(*args, n_runs=150, seed=11, **kw)
    slow = simulate_job_reference(*args, n_runs=150, seed=11, **kw)
    for name in ("failures", "restart_failures"):
        np.testing.assert_array_equal(getattr(fast, name), getattr(slow, name))
    for name in ("wall", "useful", "checkpoint", "rewound", "restart"):
        np.testing.assert_allclose(getattr(fast, name), getattr(slow, name), rtol=1e-11, atol=1e-9)
    # the loop accumulates every part separately: they add up to its wall clock
    parts = slow.useful + slow.checkpoint + slow.rewound + slow.restart
    np.testing.assert_allclose(parts, slow.wall, rtol=1e-12)
    assert np.all(slow.rewound >= 0) and np.all(slow.restart >= 0)


class _Scripted(np.random.Generator):
    """A Generator whose exponential draws are a script: row k holds every run's k-th inter-failure time
    (rows past the script repeat its last row)."""

    def __init__(self, rows):
        super().__init__(np.random.PCG64(0))
        self.rows, self.next = [np.asarray(r, dtype=float) for r in rows], 0

    def standard_exponential(self, size=None, *args, **kwargs):
        k = range(self.next, self.next + size[0])
        self.next += size[0]
        return np.stack([self.rows[min(i, len(self.rows) - 1)] for i in k])


def test_both_simulators_follow_the_convention_at_exact_ties():
    """Work 1.25 in segments of 0.5 + a 0.25 write (0.75, 0.75, then 0.25 + 0.25), restart 0.25, failure
    times chosen to fall exactly on the boundaries (dyadic numbers: the sums are exact)."""
    script = [[0.75, 0.5, 2.0, 10.0],  # A fails the instant write 1 completes; B mid-segment; C as the job ends
              [10.0, 0.25, 10.0, 10.0],  # B's restart completes the instant the next failure strikes
              [10.0, 10.0, 10.0, 10.0]]
    expected = {
        "wall": [2.25, 3.0, 2.0, 2.0],  # A keeps segment 1; B loses 0.5, restarts twice; C and D never fail
        "failures": [1, 2, 0, 0],
        "restart_failures": [0, 0, 0, 0],
        "rewound": [0.0, 0.5, 0.0, 0.0],
        "restart": [0.25, 0.5, 0.0, 0.0],
        "checkpoint": [0.75] * 4,
    }
    for simulator in (simulate_job, simulate_job_reference):
        res = simulator(1.25, 0.5, 0.25, 1.0, 0.25, n_runs=4, seed=_Scripted(script))
        for name, values in expected.items():
            np.testing.assert_array_equal(getattr(res, name), values, err_msg=f"{simulator.__name__}: {name}")


GRID = [(ratio, r) for ratio in (1e-4, 1e-3, 1e-2, 0.1, 0.5) for r in (0.0, 0.2)]


@pytest.mark.parametrize("ratio, restart", GRID)
def test_mean_wall_time_agrees_with_dalys_model(ratio, restart):
    """Within 3 standard errors at the exact optimum, and off it with a remainder segment."""
    m = 1.0
    delta = ratio * m
    seed = GRID.index((ratio, restart))
    tau = iv.optimal_interval_exact(delta, m)
    for k, (t, work) in enumerate([(tau, 10.0), (0.6 * tau, 7.3)]):
        res = simulate_job(work, t, delta, m, restart, n_runs=4000, seed=100 * seed + k)
        expected = iv.expected_wall_time(work, t, delta, m, restart)
        assert abs(res.mean() - expected) < 3 * res.stderr(), (t, work, res.mean(), expected, res.stderr())
        np.testing.assert_allclose(res.useful + res.checkpoint + res.rewound + res.restart, res.wall, rtol=1e-12)


def test_simulated_optimum_agrees_with_the_exact_optimum():
    """The argmin over a fine grid, with common random numbers.

    Every interval sees the same failure process (same seed: run i's k-th inter-failure time is
    the same for all intervals), so neighbouring grid points differ only through the model and the
    Monte Carlo noise largely cancels in their differences. The grid is fixed (not centred on the
    answer). The test also checks its own power: two grid steps either side of the exact optimum,
    the simulated mean is above the simulated minimum by more than 3 paired standard errors.
    """
    m, delta, restart, work = 1.0, 0.01, 0.1, 20.0
    exact = iv.optimal_interval_exact(delta, m)  # 0.1348
    step = 0.01
    grid = np.round(np.arange(0.06, 0.30 + step / 2, step), 10)
    walls = np.array([simulate_job(work, t, delta, m, restart, n_runs=20000, seed=2024).wall for t in grid])
    means = walls.mean(axis=1)
    best = int(np.argmin(means))
    assert abs(grid[best] - exact) <= step
    for j in (int(np.argmin(np.abs(grid - (exact - 2 * step)))), int(np.argmin(np.abs(grid - (exact + 2 * step))))):
        diff = walls[j] - walls[best]
        assert diff.mean() > 3 * diff.std(ddof=1) / math.sqrt(diff.size)
    # common random numbers make the paired noise far smaller than the unpaired one
    diff = walls[best + 1] - walls[best]
    unpaired = math.sqrt(walls[best].var() + walls[best + 1].var())
    assert diff.std() < unpaired / 3


def test_weibull_shape_one_is_the_exponential():
    args = (10.0, 0.2, 0.02, 1.0, 0.1)
    exp = simulate_job(*args, n_runs=3000, seed=5)
    wb = simulate_job(*args, n_runs=3000, seed=5, distribution="weibull", shape=1.0)
    np.testing.assert_allclose(wb.wall, exp.wall, rtol=1e-12)  # same draws: Weibull(1) is exponential
    other = simulate_job(*args, n_runs=3000, seed=6, distribution="weibull", shape=1.0)
    assert abs(other.mean() - exp.mean()) < 3 * math.hypot(other.stderr(), exp.stderr())
    assert abs(other.mean() - iv.expected_wall_time(*args)) < 3 * other.stderr()


@pytest.mark.parametrize("shape", [0.7, 1.5])
def test_weibull_keeps_the_mtbf(shape):
    """Renewal theorem: in a long job the failure rate is 1/MTBF whatever the shape."""
    assert weibull_scale(2.0, shape) * math.gamma(1 + 1 / shape) == pytest.approx(2.0)
    res = simulate_job(400.0, 0.5, 0.01, 2.0, 0.05, n_runs=200, seed=1, distribution="weibull", shape=shape)
    rate = (res.failures.sum() + res.restart_failures.sum()) / res.wall.sum()
    assert rate == pytest.approx(1 / 2.0, rel=0.03)


def test_seeding_is_reproducible_and_common_random_numbers_couple_runs():
    args = (10.0, 0.2, 0.02, 1.0, 0.1)
    a = simulate_job(*args, n_runs=2000, seed=3)
    b = simulate_job(*args, n_runs=2000, seed=3)
    for name in SimulationResult.FIELDS:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert not np.array_equal(a.wall, simulate_job(*args, n_runs=2000, seed=4).wall)
    # a Generator works too: the same runs as the int seed it was made from, and it is consumed
    gen = np.random.default_rng(3)
    c = simulate_job(*args, n_runs=2000, seed=gen)
    for name in SimulationResult.FIELDS:
        np.testing.assert_array_equal(getattr(c, name), getattr(a, name))
    assert c.params["seed"] is None and a.params["seed"] == 3
    assert not np.array_equal(simulate_job(*args, n_runs=2000, seed=gen).wall, a.wall)  # the stream moved on
    slow = simulate_job_reference(*args, n_runs=20, seed=np.random.default_rng(3))
    np.testing.assert_array_equal(slow.failures, simulate_job_reference(*args, n_runs=20, seed=3).failures)
    near = simulate_job(10.0, 0.22, 0.02, 1.0, 0.1, n_runs=2000, seed=3)
    assert np.corrcoef(a.wall, near.wall)[0, 1] > 0.8
    free = simulate_job(*args, n_runs=2000, seed=3, common_random_numbers=False)
    freer = simulate_job(10.0, 0.22, 0.02, 1.0, 0.1, n_runs=2000, seed=3, common_random_numbers=False)
    # without them only the first draw is shared (both start from the same stream)
    assert np.corrcoef(free.wall, freer.wall)[0, 1] < np.corrcoef(a.wall, near.wall)[0, 1] - 0.1
    assert abs(free.mean() - iv.expected_wall_time(*args)) < 3 * free.stderr()


def test_rounds_and_draws():
    """Round k of a run uses its k-th inter-failure time: one for the start, one per failure (during work or
    a restart). The loop runs as many rounds as the longest run needs; a job that never fails draws one
    time per run (without common random numbers only the runs still going draw)."""
    for crn in (True, False):
        res = simulate_job(10.0, 0.3, 0.01, 1.0, 0.2, n_runs=500, seed=8, common_random_numbers=crn)
        used = res.failures + res.restart_failures + 1
        assert res.params["rounds"] == used.max()
        assert res.params["drawn"] >= used.sum()
    never = simulate_job(1.0, 0.25, 1e-3, 1e9, n_runs=100, seed=0, common_random_numbers=False)
    assert never.params["rounds"] == 1 and never.params["drawn"] == 100


def test_defaults_are_no_restart_cost_exponential_failures_and_seed_0():
    args = (3.0, 0.3, 0.01, 1.0)
    base = simulate_job(*args, n_runs=400)
    for other in (simulate_job(*args, 0.0, n_runs=400, seed=0),
                  simulate_job(*args, n_runs=400, distribution="weibull"),  # shape 1: the exponential
                  simulate_job(*args, n_runs=400, distribution="weibull", shape=1.0)):
        np.testing.assert_allclose(other.wall, base.wall, rtol=1e-12)
    assert simulate_job(*args).n_runs == 10_000
    ref = simulate_job_reference(*args)
    assert ref.n_runs == 100
    for other in (simulate_job_reference(*args, 0.0, n_runs=100, seed=0), simulate_job_reference(*args, distribution="weibull")):
        np.testing.assert_allclose(other.wall, ref.wall, rtol=1e-12)


def test_results_are_immutable():
    res = simulate_job(1.0, 0.5, 0.01, 1.0, n_runs=10)
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.wall = res.wall * 0


def test_result_helpers():
    res = simulate_job(5.0, 0.5, 0.05, 2.0, 0.1, n_runs=500, seed=0)
    assert res.mean("wall") == pytest.approx(float(np.mean(res.wall)))
    assert res.stderr() == pytest.approx(float(np.std(res.wall, ddof=1) / math.sqrt(500)))
    assert res.mean("waste") == pytest.approx(res.mean() / 5.0 - 1)
    assert sum(res.breakdown().values()) == pytest.approx(res.mean())
    with pytest.raises(ValueError, match="field"):
        res.mean("nonsense")
    one = simulate_job(5.0, 0.5, 0.05, 2.0, 0.1, n_runs=1, seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # one run has no standard error: NaN, without numpy's ddof warning
        assert math.isnan(one.stderr()) and one.mean() == one.wall[0]
    two = simulate_job(5.0, 0.5, 0.05, 2.0, 0.1, n_runs=2, seed=0)
    assert two.stderr() == pytest.approx(abs(two.wall[0] - two.wall[1]) / 2, rel=1e-12)  # s / sqrt(2), s = |a - b| / sqrt(2)


def test_no_failures_possible_means_no_waste_but_writes():
    res = simulate_job(1.0, 0.25, 1e-3, 1e9, 1.0, n_runs=100, seed=0)
    np.testing.assert_allclose(res.wall, 1.0 + 4e-3)
    assert res.failures.sum() == 0 and res.rewound.max() == 0


def test_a_job_that_cannot_finish_stops_at_the_round_limit(monkeypatch):
    """A segment far longer than the MTBF almost never completes: the guard stops the loop with a message
    that names the cause instead of running for ever (the limit is lowered so that it fires quickly)."""
    monkeypatch.setattr(sim, "MAX_ROUNDS", 50)
    with pytest.raises(RuntimeError, match=r"did not finish within 50 failures per run: the segment interval \+ write_cost = 30 is too long for mtbf = 1"):
        simulate_job(60.0, 20.0, 10.0, 1.0, n_runs=10, seed=0)
    # the limit is exact: runs that need MAX_ROUNDS failures finish, one more and the guard fires
    args = (6.0, 1.0, 0.2, 1.0, 0.1)
    free = simulate_job(*args, n_runs=10, seed=0)
    most = int((free.failures + free.restart_failures).max())
    monkeypatch.setattr(sim, "MAX_ROUNDS", most)
    np.testing.assert_array_equal(simulate_job(*args, n_runs=10, seed=0).wall, free.wall)
    monkeypatch.setattr(sim, "MAX_ROUNDS", most - 1)
    with pytest.raises(RuntimeError, match=f"within {most - 1} failures per run"):
        simulate_job(*args, n_runs=10, seed=0)


@pytest.mark.parametrize(
    "kw, name",
    [
        ({"work": 0}, "work"),
        ({"interval": -1}, "interval"),
        ({"write_cost": math.nan}, "write_cost"),
        ({"mtbf": 0}, "mtbf"),
        ({"restart": -0.1}, "restart"),
        ({"n_runs": 0}, "n_runs"),
        ({"n_runs": 2.5}, "n_runs"),
        ({"distribution": "gamma"}, "distribution"),
        ({"shape": 0}, "shape"),
        ({"seed": -1}, "seed"),
    ],
)
def test_bad_input_names_the_parameter(kw, name):
    args = dict(work=1.0, interval=0.1, write_cost=0.01, mtbf=1.0, restart=0.0)
    extra = {k: kw.pop(k) for k in list(kw) if k not in args}
    args.update(kw)
    with pytest.raises(ValueError, match=name):
        simulate_job(**args, **extra)
    if name not in ("n_runs",):
        with pytest.raises(ValueError, match=name):
            simulate_job_reference(**args, **extra)


# --- issue 29: simulate_replica_floor against its own tests (the event model of notebook 10) -------------------------


class _Recorder(np.random.Generator):
    """numpy's ``default_rng(seed)`` (the same PCG64 stream) that records every draw: (method, arguments, result)."""

    def __init__(self, seed):
        super().__init__(np.random.PCG64(seed))
        self.calls = []

    def _record(self, name, args, kwargs):
        out = getattr(super(), name)(*args, **kwargs)
        self.calls.append((name, args, kwargs, out))
        return out

    def poisson(self, *args, **kwargs):
        return self._record("poisson", args, kwargs)

    def choice(self, *args, **kwargs):
        return self._record("choice", args, kwargs)

    def uniform(self, *args, **kwargs):
        return self._record("uniform", args, kwargs)


def _recorded(monkeypatch, *args, **kwargs):
    made = []

    def default_rng(seed):
        made.append(_Recorder(seed))
        return made[-1]

    monkeypatch.setattr(np.random, "default_rng", default_rng)
    out = sim.simulate_replica_floor(*args, **kwargs)
    monkeypatch.undo()
    (rng,) = made
    return out, rng.calls


@pytest.mark.parametrize("groups, peer_copy", [(1, True), (1, False), (4, False), (32, True)])
def test_replica_floor_is_the_cost_of_its_draws(monkeypatch, groups, peer_copy):
    """Capture the draws where they enter the event model and check each has the distribution the docstring states:
    a Poisson count per run at lambda x days, modes in the shares, the step in flight U(0, step), the hang's check
    U(0, poll), the rewind to the persisted checkpoint U(0, tau_p) for each persisted mode. Then add up each run's
    minutes by hand from those draws and the stages (one group or an sdc: the whole job's restart; G groups: the
    survivors' (G - 1)/G (stall + step in flight) and rejoin / G) and compare the mean and standard error."""
    from scipy import stats

    days, n_runs, seed = 7.0, 400, 5
    s = Scenario().replace(replicas=ReplicaInputs(groups=groups), modes=ModeInputs(peer_copy=peer_copy))
    (mean, se), calls = _recorded(monkeypatch, Scenario(), ReplicaInputs(groups=groups), ModeInputs(peer_copy=peer_copy),
                                  days=days, n_runs=n_runs, seed=seed)
    assert (mean, se) == sim.simulate_replica_floor(s, days=days, n_runs=n_runs, seed=seed)  # the recorder is numpy's stream
    day = all_levers_day(s).floor_budget
    stages = day.modes
    lam, step, poll, tau_p = s.failures_per_day, s.step_min, s.modes.rank_monitor_poll_min, day.persisted_interval_min
    assert [c[0] for c in calls[:4]] == ["poisson", "choice", "uniform", "uniform"]
    counts = calls[0][3]
    assert calls[0][1][0] == pytest.approx(lam * days) and counts.shape == (n_runs,)  # 14 failures a run on average
    assert abs(counts.mean() - lam * days) < 4 * math.sqrt(lam * days / n_runs)
    assert counts.var(ddof=1) == pytest.approx(lam * days, rel=0.25)  # a Poisson count: variance = mean
    total = int(counts.sum())
    mode = calls[1][3]
    assert mode.shape == (total,) and calls[1][2]["p"] == pytest.approx(np.array([m.share for m in stages]), rel=1e-12)
    assert stats.chisquare(np.bincount(mode, minlength=4), total * np.array([m.share for m in stages])).pvalue > 1e-3
    in_flight, seen = calls[2][3], calls[3][3]
    assert calls[2][1][:2] == (0.0, step) and calls[3][1][:2] == (0.0, poll)
    assert in_flight.shape == seen.shape == (total,)
    assert stats.kstest(in_flight / step, "uniform").pvalue > 1e-3 and stats.kstest(seen / poll, "uniform").pvalue > 1e-3
    persisted = [i for i, m in enumerate(stages) if m.persisted]
    assert [stages[i].mode for i in persisted] == (["sdc"] if peer_copy else ["host_loss", "sdc"])
    backs = {}
    for i, call in zip(persisted, calls[4:], strict=True):
        assert call[0] == "uniform" and call[1][:2] == (0.0, tau_p) and call[2]["size"] == int((mode == i).sum())
        backs[i] = call[3]
    # each failure's job-minutes by hand
    cost = np.empty(total)
    for i, m in enumerate(stages):
        k = mode == i
        detect = m.detect - poll / 2 + seen[k] if m.mode == "hang" else m.detect
        if groups == 1 or m.mode == "sdc":
            back = m.latency + backs[i] if m.persisted else in_flight[k]
            cost[k] = detect + m.reschedule + m.reload + back
        else:
            cost[k] = detect + (groups - 1) / groups * (s.replicas.stall_min + in_flight[k]) + s.replicas.rejoin_min / groups
    runs = np.repeat(np.arange(n_runs), counts)
    per_run = np.array([cost[runs == r].sum() for r in range(n_runs)]) / days
    assert mean == pytest.approx(per_run.mean(), rel=1e-12)
    assert se == pytest.approx(per_run.std(ddof=1) / math.sqrt(n_runs), rel=1e-12)


@pytest.mark.parametrize("groups, peer_copy", [(1, True), (1, False), (3, True), (32, False)])
def test_replica_floor_agrees_with_the_closed_form(groups, peer_copy):
    """The mean of 1,500 runs within 4 standard errors of lambda E[c], the standard error within 10 % of
    sqrt(lambda E[c^2] / (days n_runs)): both by hand (tests/replica_moments.py)."""
    s = Scenario().replace(replicas=ReplicaInputs(groups=groups), modes=ModeInputs(peer_copy=peer_copy))
    mean, se = sim.simulate_replica_floor(s, n_runs=1500, seed=40 + groups)
    want_se = standard_error_by_hand(s, groups, 30.0, 1500)
    assert se == pytest.approx(want_se, rel=0.1)
    assert abs(mean - floor_by_hand(s, groups)) < 4 * want_se
    # and a shorter window: the standard error grows as 1 / sqrt(days)
    _, se7 = sim.simulate_replica_floor(s, days=7.5, n_runs=1500, seed=40 + groups)
    assert se7 == pytest.approx(2 * want_se, rel=0.1)


def test_a_wider_check_period_moves_the_floor_and_its_spread_up():
    """Widen the hang's rank-monitor check (U(0, 5 s) -> U(0, 60 s)): with the same seed every draw is the same
    standard uniform scaled, so every run's minutes rise; the mean by lambda x hang share x 55 s / 2 within the paired
    error, and the spread of the runs with it."""
    base = Scenario().replace(replicas=ReplicaInputs(groups=4))
    wide = base.replace(modes=dataclasses.replace(base.modes, rank_monitor_poll_min=1.0))
    m0, se0 = sim.simulate_replica_floor(base, n_runs=1500, seed=9)
    m1, se1 = sim.simulate_replica_floor(wide, n_runs=1500, seed=9)
    shift = base.failures_per_day * base.modes.shares[1] * (1.0 - base.modes.rank_monitor_poll_min) / 2
    # the shift of a run: the sum over its hangs of U(0, 55 s) / days; its standard error by hand
    paired_se = math.sqrt(base.failures_per_day * base.modes.shares[1] * (1.0 - base.modes.rank_monitor_poll_min) ** 2 / 3
                          / 30.0 / 1500)
    assert m1 > m0 and abs((m1 - m0) - shift) < 4 * paired_se
    assert se1 > se0


def test_replica_floor_inputs_replace_the_scenarios():
    s = Scenario()
    rep, mi = ReplicaInputs(groups=3), ModeInputs(peer_copy=False)
    kw = dict(days=5.0, n_runs=300, seed=2)
    assert sim.simulate_replica_floor(s, rep, **kw) == sim.simulate_replica_floor(s.replace(replicas=rep), **kw)
    assert sim.simulate_replica_floor(s, mode_inputs=mi, **kw) == sim.simulate_replica_floor(s.replace(modes=mi), **kw)
    both = s.replace(replicas=rep, modes=mi)
    assert sim.simulate_replica_floor(s, rep, mi, **kw) == sim.simulate_replica_floor(both, **kw)
    assert sim.simulate_replica_floor(s, **kw) != sim.simulate_replica_floor(both, **kw)


def test_replica_floor_defaults_and_bad_input():
    s = Scenario()
    assert sim.simulate_replica_floor(s) == sim.simulate_replica_floor(s, None, None, days=30.0, n_runs=2000, seed=0)
    for kw, name in [({"days": 0}, "days"), ({"days": math.nan}, "days"), ({"n_runs": 0}, "n_runs"),
                     ({"n_runs": 2.5}, "n_runs"), ({"seed": -1}, "seed")]:
        with pytest.raises(ValueError, match=name):
            sim.simulate_replica_floor(s, **kw)
    with pytest.raises(ValueError, match="groups"):
        sim.simulate_replica_floor(s, ReplicaInputs(groups=33))


def test_without_common_random_numbers_a_round_draws_for_the_entries_still_held():
    """Without common random numbers a round draws one time for every entry still in the arrays: the runs going and
    the finished ones not yet dropped, which are dropped once they are more than 1/8 of the entries (simulate_job's
    comment: there the schedule is part of the stream). The count of draws follows from the round each run finished in."""
    res = simulate_job(10.0, 0.3, 0.01, 1.0, 0.2, n_runs=500, seed=8, common_random_numbers=False)
    finished_in = res.failures + res.restart_failures  # round of the last draw (round 0: the start)
    held, stale, drawn = 500, 0, 0
    for k in range(res.params["rounds"]):
        drawn += held
        stale += int((finished_in == k).sum())
        if stale and 8 * stale > held:
            held, stale = held - stale, 0
    assert res.params["drawn"] == drawn
    crn = simulate_job(10.0, 0.3, 0.01, 1.0, 0.2, n_runs=500, seed=8)
    assert crn.params["drawn"] >= 500 * crn.params["rounds"]  # with them a round draws a whole row, every run
