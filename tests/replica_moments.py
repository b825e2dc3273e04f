"""The cost of one failure in simulate_replica_floor's event model, its mean and variance by hand (the tests' independent route).

A failure of mode k costs a constant plus independent uniform draws (the module docs of course_lib.floor and
course_lib.simulate): its detection (a hang's rank-monitor check ``U(0, poll)`` after its timeout), then with one
group, or for silent corruption, the whole job's restart and reload and its rewind (the step in flight
``U(0, step)``, or back to the persisted checkpoint: the latency and ``U(0, tau_p)``); with ``G`` groups the
survivors' ``(G - 1)/G x (stall + U(0, step))`` and the failed group's ``rejoin / G``. ``c U(0, w)`` has mean
``c w / 2`` and variance ``c^2 w^2 / 12``. A run of ``days`` days sees a Poisson number of failures at ``lambda``
a day, so its minutes per day, a compound Poisson sum over ``days``, has mean ``lambda E[c]`` and variance
``lambda E[c^2] / days``; the mean of ``n_runs`` runs has the standard error ``sqrt(lambda E[c^2] / (days n_runs))``.
"""
import math

from course_lib.levers import all_levers_day


def cost_moments(scenario, groups):
    """``{mode: (share, E[c], Var[c])}`` of one failure's cost in job-minutes."""
    day = all_levers_day(scenario).floor_budget
    step, tau_p, poll = scenario.step_min, day.persisted_interval_min, scenario.modes.rank_monitor_poll_min
    rep = scenario.replicas
    out = {}
    for m in day.modes:
        uniforms = []  # (coefficient, width) of each uniform draw
        if m.mode == "hang":
            const = m.detect - poll / 2
            uniforms.append((1.0, poll))
        else:
            const = m.detect
        if groups == 1 or m.mode == "sdc":
            const += m.reschedule + m.reload
            if m.persisted:
                const += m.latency
                uniforms.append((1.0, tau_p))
            else:
                uniforms.append((1.0, step))
        else:
            survivors = (groups - 1) / groups
            const += survivors * rep.stall_min + rep.rejoin_min / groups
            uniforms.append((survivors, step))
        mean = const + sum(c * w / 2 for c, w in uniforms)
        var = sum((c * w) ** 2 / 12 for c, w in uniforms)
        out[m.mode] = (m.share, mean, var)
    return out


def floor_by_hand(scenario, groups):
    """``lambda E[c]``: the floor in minutes per day (the day far from saturated)."""
    return scenario.failures_per_day * sum(share * mean for share, mean, _ in cost_moments(scenario, groups).values())


def standard_error_by_hand(scenario, groups, days, n_runs):
    second = sum(share * (var + mean**2) for share, mean, var in cost_moments(scenario, groups).values())
    return math.sqrt(scenario.failures_per_day * second / (days * n_runs))
