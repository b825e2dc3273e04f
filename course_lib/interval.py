"""The optimal checkpoint interval: the waste model, Young's and Daly's optima, Daly's complete model.

Notebook 04 derives and checks everything here; notebook 06 uses it to show the square-root law
(tau* ~ sqrt(write cost)) and where real write costs put the interval.

Symbols (Young [@young1974]; Daly [@daly2006]), all in one time unit (the course uses minutes):

- ``interval`` (tau): useful work between two checkpoints;
- ``write_cost`` (delta): the time a checkpoint blocks training;
- ``mtbf`` (M): mean time between failures of the whole job;
- ``restart`` (R): time to get back to work after a failure (detect, reschedule, reload),
  not counting the rewound work.

Models
------
*First order* (Young 1974): ``W(tau) = delta/tau + (tau/2 + R)/M``, the fraction of time lost per
unit of useful work; ``dW/dtau = 0`` gives ``tau* = sqrt(2 delta M)`` and
``W* = sqrt(2 delta / M) + R / M`` (:func:`derive_young` does the algebra in sympy).

*Complete* (Daly 2006): each segment is ``tau + delta`` of work that must run failure-free; a
failure rewinds the segment, then a restart of length ``R`` must itself run failure-free (a
failure during the restart restarts the restart); failures are exponential with mean ``M``. The
expected time to finish one segment of length ``s`` is ``M e^{R/M} (e^{s/M} - 1)``, so a job of
``work = n tau`` takes ``T_w = M e^{R/M} (e^{(tau+delta)/M} - 1) work / tau``.

Remainder segment: when ``work`` is not a whole number of intervals, the job is ``n`` full
segments and one last segment of ``r = work - n tau`` useful work, which (like every segment in
Daly's model) ends with a checkpoint write, so it costs ``M e^{R/M} (e^{(r+delta)/M} - 1)``.
:mod:`course_lib.simulate` splits work the same way (:func:`split_work`).

The exact optimum of the complete model: with ``x = tau/M`` and ``a = delta/M``, ``dT_w/dtau = 0``
reads ``(1 - x) e^{x + a} = 1``, i.e. ``(x - 1) e^{x - 1} = -e^{-a - 1}``, whose root in
``0 < x < 1`` is on the principal branch of Lambert W: ``tau = M (1 + W_0(-e^{-delta/M - 1}))``.
In Daly's notation ``eta = (tau + delta)/M`` solves ``e^{-eta} + eta = 2 xi^2 + 1`` with
``xi^2 = delta/(2M)``. ``R`` appears only in the factor ``e^{R/M}``, so it drops out of every
optimum but not out of the waste.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy.special import lambertw

from ._validate import check_non_negative, check_positive

__all__ = [
    "waste_fraction",
    "young_interval",
    "daly_interval",
    "optimal_interval_exact",
    "expected_wall_time",
    "expected_waste",
    "complete_loss_fraction",
    "split_work",
    "bounded_interval",
    "best_interval",
    "write_cost_for_interval",
    "stalled_waste",
    "YoungDerivation",
    "derive_young",
]


def _check(name: str, value, *, allow_zero: bool = False):
    """Validate a scalar (returns float) or an array (returns float ndarray): finite, > 0 (or >= 0)."""
    if isinstance(value, (list, tuple, np.ndarray)):
        arr = np.asarray(value, dtype=float)
        bound = "> 0" if not allow_zero else ">= 0"
        bad = ~np.isfinite(arr) | ((arr < 0) if allow_zero else (arr <= 0))
        if arr.size == 0 or bad.any():
            first = arr[bad][0].item() if bad.any() else "an empty array"
            raise ValueError(f"{name} must be a finite number {bound} (got {first!r})")
        return arr
    if isinstance(value, np.generic):
        value = value.item()
    return check_non_negative(name, value) if allow_zero else check_positive(name, value)


def _out(x):
    """Plain float for a scalar result, ndarray otherwise."""
    return float(x) if np.ndim(x) == 0 else np.asarray(x, dtype=float)


def waste_fraction(interval, write_cost, mtbf, restart=0.0):
    """First-order waste ``delta/tau + (tau/2 + R)/M`` (time lost per unit of useful work).

    Accepts scalars or arrays (broadcast). Notebook 04 derives it; notebook 06 plots it.
    """
    tau = _check("interval", interval)
    delta = _check("write_cost", write_cost)
    m = _check("mtbf", mtbf)
    r = _check("restart", restart, allow_zero=True)
    return _out(delta / tau + (tau / 2 + r) / m)


def young_interval(write_cost, mtbf):
    """Young's first-order optimum ``tau* = sqrt(2 delta M)`` (notebook 04)."""
    delta = _check("write_cost", write_cost)
    m = _check("mtbf", mtbf)
    return _out(np.sqrt(2 * delta * m))


def daly_interval(write_cost, mtbf):
    """Daly's higher-order estimate (2006), notebook 04.

    ``sqrt(2 delta M) [1 + (1/3) sqrt(delta/(2M)) + (1/9) delta/(2M)] - delta`` for ``delta < 2M``,
    and ``M`` when ``delta >= 2M``.
    """
    delta = _check("write_cost", write_cost)
    m = _check("mtbf", mtbf)
    ratio = delta / (2 * m)
    est = np.sqrt(2 * delta * m) * (1 + np.sqrt(ratio) / 3 + ratio / 9) - delta
    return _out(np.where(delta < 2 * m, est, m))


def optimal_interval_exact(write_cost, mtbf):
    """Exact minimiser of Daly's complete model: ``tau = M (1 + W_0(-e^{-delta/M - 1}))`` (notebook 04).

    Uses ``scipy.special.lambertw`` on the principal branch; the result lies in ``(0, M)``.
    For tiny ``delta/M`` the argument is within rounding of ``-1/e`` (the branch point), where
    ``W_0`` loses precision, so there the series ``W_0(-e^{-1-a}) = -1 + p - p^2/3 + 11 p^3/72 - ...``
    with ``p = sqrt(2 (1 - e^{-a}))`` is used instead (relative error < 1e-13 for ``a < 1e-5``).
    """
    delta = _check("write_cost", write_cost)
    m = _check("mtbf", mtbf)
    a = np.asarray(delta / m, dtype=float)
    with np.errstate(over="ignore", under="ignore"):
        x = 1.0 + lambertw(-np.exp(-a - 1.0), 0).real
    p = np.sqrt(-2.0 * np.expm1(-a))  # p = sqrt(2 (e z + 1)) with z = -e^{-1-a}
    series = p - p**2 / 3 + 11 * p**3 / 72 - 43 * p**4 / 540 + 769 * p**5 / 17280  # 1 + W_0(z)
    x = np.where(a < 1e-5, series, x)
    return _out(m * x)


def split_work(work: float, interval: float) -> tuple[int, float]:
    """Split ``work`` into ``n`` full intervals and a remainder ``r`` (``0 <= r < interval``).

    A remainder within 1e-9 (relative) of zero or of a whole interval is rounded away, so
    ``split_work(10, 0.1)`` is ``(100, 0.0)`` despite floating point. Used by both the analytic
    model and the simulator, so the two treat the last segment the same way.
    """
    work = check_positive("work", work)
    interval = check_positive("interval", interval)
    q = work / interval
    n = int(math.floor(q))
    if q - n > 1 - 1e-9:
        n += 1
    r = work - n * interval
    if abs(r) <= 1e-9 * work:
        r = 0.0
    return n, max(r, 0.0)


def expected_wall_time(work, interval, write_cost, mtbf, restart=0.0) -> float:
    """Daly's complete model: expected wall time to finish ``work`` of useful work (notebook 04).

    ``T_w = M e^{R/M} [n (e^{(tau+delta)/M} - 1) + (e^{(r+delta)/M} - 1 if r > 0)]`` where
    ``work = n tau + r`` (:func:`split_work`); for ``r = 0`` this is Daly's
    ``M e^{R/M} (e^{(tau+delta)/M} - 1) work / tau``. Every segment, the last included, ends with a
    checkpoint write. Scalars only.
    """
    work = check_positive("work", work)
    tau = check_positive("interval", interval)
    delta = check_positive("write_cost", write_cost)
    m = check_positive("mtbf", mtbf)
    r = check_non_negative("restart", restart)
    n, rem = split_work(work, tau)
    per = n * math.expm1((tau + delta) / m)
    if rem > 0:
        per += math.expm1((rem + delta) / m)
    return m * math.exp(r / m) * per


def expected_waste(interval, write_cost, mtbf, restart=0.0):
    """Waste of the complete model per unit of useful work, ``T_w / work - 1`` for whole intervals.

    ``M e^{R/M} (e^{(tau+delta)/M} - 1) / tau - 1``; the first-order :func:`waste_fraction` is its
    expansion for small ``tau/M``, ``delta/M``, ``R/M``. Accepts arrays (notebook 04's curve).
    """
    tau = _check("interval", interval)
    delta = _check("write_cost", write_cost)
    m = _check("mtbf", mtbf)
    r = _check("restart", restart, allow_zero=True)
    return _out(m * np.exp(r / m) * np.expm1((tau + delta) / m) / tau - 1.0)


def complete_loss_fraction(interval, write_cost, mtbf, restart=0.0):
    """1 - ETTR of Daly's complete model: the share of wall-clock time that is not useful work.

    ``1 - 1 / (1 + W)`` with ``1 + W = e^{R/M} M (e^{(tau+delta)/M} - 1) / tau`` (:func:`expected_waste`),
    computed in log space so that it never overflows and never exceeds 1, at any scale (the
    course's day model, :mod:`course_lib.restart`, is the renewal form of the same loss). Unlike
    :func:`expected_waste` it accepts ``interval = 0``: with ``write_cost = 0`` the limit
    ``M (e^{tau/M} - 1)/tau -> 1`` (continuous checkpointing, only the restart is lost); with a write
    cost, a write without work between: the whole day. Scalars or arrays (broadcast).
    """
    tau = _check("interval", interval, allow_zero=True)
    delta = _check("write_cost", write_cost, allow_zero=True)
    m = _check("mtbf", mtbf)
    r = _check("restart", restart, allow_zero=True)
    seg = np.asarray((tau + delta) / m, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):  # tau = 0: log(x / 0) = inf (the whole day), or 0 / 0
        ratio = np.log(np.expm1(seg) / (tau / m))
    ratio = np.where(seg == 0, 0.0, ratio)  # no interval and no write cost: only the restart
    log_slowdown = r / m + ratio  # log(1 + W) >= 0
    return _out(-np.expm1(-log_slowdown))


def bounded_interval(write_cost, mtbf, min_interval):
    """The best interval when it cannot go below ``min_interval`` (notebook 06).

    GEMINI's model (Wang et al., SOSP 2023): a snapshot cannot start before the previous copy has
    finished and at most one per iteration is useful, so ``interval >= max(t_copy, T_iter)``. The
    complete model's waste is convex in ``tau``, so the constrained optimum is
    ``max(optimal_interval_exact(delta, M), min_interval)``.
    """
    tau = optimal_interval_exact(write_cost, mtbf)
    floor = _check("min_interval", min_interval)
    return _out(np.maximum(tau, floor))


def best_interval(write_cost, mtbf, fixed=0.0, share=1.0, min_interval=0.0):
    """The interval that minimises the course's day model, bounded below (notebooks 03, 06, 08; the one
    bounded optimum every caller uses).

    The day model (:mod:`course_lib.restart`) loses ``1 - (1 - (R + s tau/2)/M) tau / (tau + delta)``
    of the day: ``R`` (``fixed``) the minutes per failure that do not depend on the interval, ``s``
    (``share``) the share of failures that rewind half of it. Setting the derivative to zero gives::

        tau* = -delta + sqrt(delta^2 + 2 delta (M - R) / s)

    (Young's ``sqrt(2 delta M)`` when ``delta``, ``R`` << ``M``; the form of Saxena et al.'s
    availability optimum), and the loss is unimodal in ``tau``, so the bounded optimum is
    ``max(tau*, min_interval)``: a checkpoint cannot start before the previous copy has finished nor
    be taken more often than once a step (GEMINI). With no write cost, or failures faster than the
    restart (``M <= R``: every interval loses the whole day), the bound itself; with ``s = 0`` (no
    failure restores the latest checkpoint) the interval only costs writes: ``max(M, min_interval)``.
    Numbers or arrays (broadcast); every argument is validated (write_cost, fixed, min_interval >= 0;
    mtbf > 0; share in [0, 1]).
    """
    delta = _check("write_cost", write_cost, allow_zero=True)
    m = _check("mtbf", mtbf)
    r = _check("fixed", fixed, allow_zero=True)
    s = _check("share", share, allow_zero=True)
    if np.any(np.asarray(s) > 1):
        raise ValueError(f"share must be a finite number in [0, 1] (got {share!r})")
    bound = _check("min_interval", min_interval, allow_zero=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        inner = delta**2 + 2.0 * delta * (m - r) / np.where(s > 0, s, 1.0)
        tau = -delta + np.sqrt(np.maximum(inner, 0.0))
    tau = np.where((m > r) & (delta > 0), tau, 0.0)
    tau = np.where(s > 0, tau, np.maximum(m, bound))
    return _out(np.maximum(tau, bound))


def stalled_waste(interval, write_cost, mtbf, copy_time, restart=0.0):
    """First-order waste when a snapshot copy of ``copy_time`` runs off the critical path (notebook 06).

    The copy starts with the stall ``delta`` and the next snapshot cannot start before it has
    finished, so each interval stalls ``max(delta, copy_time - tau)``:
    ``W = max(delta, copy_time - tau)/tau + (tau/2 + R)/M``. When the stall is the copy
    (``delta == copy_time``) there is no wait on top of it. Above ``copy_time - delta`` this is
    :func:`waste_fraction`; below it the stall grows as ``1/tau``.
    """
    tau = _check("interval", interval)
    delta = _check("write_cost", write_cost)
    m = _check("mtbf", mtbf)
    c = _check("copy_time", copy_time)
    r = _check("restart", restart, allow_zero=True)
    return _out(np.maximum(delta, c - tau) / tau + (tau / 2 + r) / m)


def write_cost_for_interval(interval, mtbf):
    """The blocking write cost that makes ``interval`` Young-optimal: ``delta = tau^2 / (2M)`` (notebook 06)."""
    tau = _check("interval", interval)
    m = _check("mtbf", mtbf)
    return _out(tau**2 / (2 * m))


class YoungDerivation(NamedTuple):
    """The sympy objects of the first-order derivation (notebook 04 displays them)."""

    tau: object  # symbol: interval
    delta: object  # symbol: write cost
    M: object  # symbol: MTBF
    R: object  # symbol: restart cost
    waste: object  # W(tau) = delta/tau + (tau/2 + R)/M
    derivative: object  # dW/dtau
    tau_star: object  # the positive root of dW/dtau
    waste_star: object  # W(tau*)
    second_derivative: object  # d2W/dtau2 at tau* (positive: a minimum)


def derive_young() -> YoungDerivation:
    """Derive Young's optimum in sympy: ``tau* = sqrt(2 delta M)``, ``W* = sqrt(2 delta/M) + R/M``."""
    import sympy as sp

    tau, delta, M = sp.symbols("tau delta M", positive=True)
    R = sp.symbols("R", nonnegative=True)
    waste = delta / tau + (tau / 2 + R) / M
    derivative = sp.diff(waste, tau)
    roots = sp.solve(sp.Eq(derivative, 0), tau)
    (tau_star,) = [r for r in roots if r.is_positive]
    waste_star = sp.simplify(waste.subs(tau, tau_star))
    second = sp.simplify(sp.diff(waste, tau, 2).subs(tau, tau_star))
    return YoungDerivation(tau, delta, M, R, waste, derivative, tau_star, waste_star, second)
