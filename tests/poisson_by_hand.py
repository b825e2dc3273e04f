"""A Poisson CDF and the spare-pool search written out by hand: the independent reference the incident tests check
course_lib's spare pool against (tests/test_incidents_stats.py, tests/test_incidents_trace.py). No scipy."""
from __future__ import annotations

import math


def poisson_cdf_by_sum(k, mu):
    """P(N <= k) for N ~ Poisson(mu), summed term by term."""
    term, total = math.exp(-mu), 0.0
    for j in range(k + 1):
        total += term
        term *= mu / (j + 1)
    return total


def spares_by_search(mu, q):
    """The smallest s with P(N <= s - 1) >= q, N ~ Poisson(mu): searched upwards from 1."""
    s = 1
    while poisson_cdf_by_sum(s - 1, mu) < q:
        s += 1
    return s
