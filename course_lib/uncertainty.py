"""The floor as a range: the same day model evaluated on arrays of draws of its uncertain inputs (notebook 08).

Each of ``n`` draws is one baseline day and one after-levers day, built by the same functions as the
point answer (:func:`course_lib.restart.baseline_modes`, :func:`course_lib.levers.default_levers` with
drawn targets, the levers the answer pulled in the order it pulled them): numpy arrays flow through
the one model, nothing is restated here. The uncertain inputs:

- **rate**: the question's rate is an observation of *this* fleet, so its uncertainty is the Poisson
  uncertainty of the count it was measured from: ``k = failures_per_day x observed_days`` failures
  (60 for the question's two a day over an assumed month), the rate drawn from the Jeffreys posterior
  Gamma(k + 1/2) / observed_days (its 90 % interval is the exact Poisson one to within a few percent).
  Llama 3's "up to 16K GPUs" belongs to notebook 01's cross-check of the rate, not here.
- **hang share**: triangular (low, central, high) of data/failure_modes.csv, the other shares rescaled
  (the baseline's detection moves with it; the reschedule keeps its minutes, as in
  :meth:`course_lib.scenario.Scenario.replace`);
- **hang timeout**: the *tuned* regime only, triangular (2 x, 5 x, 10 x the longest gap between
  heartbeats: the safety factors of the course's torchft lab sweep, 5 NVRx's). NCCL's untuned
  10-minute timeout is the baseline, a separate day, never a tail of the tuned one;
- **restart**: the in-job restart on a spare, triangular on the end-to-end anchors (DeadPool's 40 s,
  FlashRecovery's 150 s, the low end of a re-queue, Kokolis et al.'s 5 min), its reschedule stage
  what remains once the crash's detection and the reload from memory are taken out; it moves the
  answer only where the spare is pulled.
- **reschedule**: the baseline's re-queue (tear down, the scheduler, the job's start-up), triangular
  (``reschedule_low_min``, ``reschedule_min``, ``reschedule_high_min``): from a tuned Slurm's measured share
  plus a fleet's fastest start-up, through the question's remainder, to what Kokolis et al.'s re-queue
  leaves (notebook 15). No lever shortens it unless the spare is pulled, so it stays in the floor; the
  baseline's total moves with it (as with the hang share), and the spare's restart is the shorter of the two.
- **sdc latency**: the work done between a silent corruption and its detection, which every SDC rewinds past.
  No public source measures it in a training job (Dixit et al. and Hochschild et al. measure how often
  fleets' CPUs corrupt, found by screening; the Gemini report how its team isolated them), so its range is
  the course's assumption: data/restart_ranges.csv's ``sdc_detection_low`` / ``_central`` / ``_high`` (10 min,
  1 h, 24 h: a loss-spike check, the point, a daily evaluation; a scenario's own latency keeps those ratios
  around it), drawn triangular in the logarithm (the
  range spans two orders of magnitude; a triangle in minutes would put most draws near its top). Like the
  reschedule, no lever shortens it; the baseline's total moves with it.

Triangular shapes are the course's choice (stated, not sourced). The central value is the median of
the draws; the range is the 5th-95th percentile; "what dominates" is the input with the largest
Spearman rank correlation with the after-levers loss (:attr:`FloorRange.dominant`), or with the floor
(:attr:`FloorRange.floor_dominant`: what the floor's range rests on most).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.stats import poisson

from ._validate import check_int_non_negative, check_int_positive, check_non_negative
from .scenario import Scenario, shares_with_hang

__all__ = ["INPUTS", "Range", "FloorRange", "floor_range", "sdc_latency_range", "p_at_least"]

#: The uncertain inputs, in the order of :attr:`FloorRange.dominance`.
INPUTS = ("rate", "hang share", "hang timeout", "restart", "reschedule", "sdc latency")

#: How the answer speaks of each (the hang's timeout is the tuned one: the levers' day).
SPOKEN = {"rate": "the rate", "hang share": "the hang share", "hang timeout": "the tuned timeout",
          "restart": "the spare's restart", "reschedule": "the reschedule", "sdc latency": "the SDC latency"}


@dataclass(frozen=True)
class Range:
    """A central value (median) and a 90 % range (5th and 95th percentiles), as fractions of the day."""

    central: float
    low: float
    high: float

    def text(self) -> str:
        return f"{self.central:.2%} (90 % range {self.low:.2%}-{self.high:.2%})"

    def contains(self, value: float) -> bool:
        return self.low <= value <= self.high


@dataclass(frozen=True)
class FloorRange:
    """The Monte Carlo result: ranges of the floor and of the after-levers loss, and what dominates."""

    floor: Range
    loss: Range
    dominance: dict  # {input: Spearman rank correlation with the after-levers loss}
    n: int
    shifts: dict = field(default_factory=dict)  # {input: median floor with that input alone drawn - point floor}
    count: float = 0.0  # the failures the rate rests on
    days: float = 0.0  # over how many days
    varied: tuple = ()  # the inputs that were drawn and moved the day (in INPUTS' order)
    floor_dominance: dict = field(default_factory=dict)  # {input: Spearman rank correlation with the floor}

    def inputs_text(self, rate: str = "") -> str:
        """The varied inputs in words ("the rate, the hang share, ..."); ``rate``: words after "the rate"."""
        return ", ".join(SPOKEN[k] + (rate if k == "rate" else "") for k in self.varied)

    @property
    def shift_sentence(self) -> str:
        """Why the central value sits where it does against the point value: each input's own shift."""
        if not self.shifts:
            return ""
        parts = ", ".join(f"{name} {100 * v:+.3f}" for name, v in sorted(self.shifts.items(), key=lambda kv: -abs(kv[1])))
        return f"each input's range alone moves the floor's median from its point value by (percentage points): {parts}"

    @property
    def dominant(self) -> str:
        """The input whose draws go most with the after-levers loss (largest absolute Spearman correlation)."""
        return max(self.dominance, key=lambda k: abs(self.dominance[k]))

    @property
    def dominance_text(self) -> str:
        """What the two ranges rest on most, in words: "the X dominates both", or each range's own."""
        loss, floor = (SPOKEN.get(k, k) for k in (self.dominant, self.floor_dominant))
        if loss == floor:
            return f"{loss} dominates both"
        return f"{loss} dominates the loss's range, {floor} the floor's"

    @property
    def floor_dominant(self) -> str:
        """The input whose draws go most with the floor: what the floor's range rests on most."""
        return max(self.floor_dominance, key=lambda k: abs(self.floor_dominance[k]))


def _tri(rng, lo, mode, hi, n):
    lo, hi = min(lo, mode), max(hi, mode)
    return np.full(n, float(mode)) if hi == lo else rng.triangular(lo, mode, hi, n)


def _log_tri(rng, lo, mode, hi, n):
    """Draws whose logarithm is triangular (log lo, log mode, log hi); the mode itself where the range is one value."""
    if not 0 < min(lo, mode, hi):  # a zero latency (an SDC seen at once): nothing to spread on a log scale
        return np.full(n, float(mode))
    return np.exp(_tri(rng, np.log(lo), np.log(mode), np.log(hi), n))


def sdc_latency_range(scenario: Scenario, data_dir=None) -> tuple[float, float, float]:
    """``(low, point, high)`` minutes of the SDC latency the floor's range samples (notebook 08).

    data/restart_ranges.csv's assumed ``sdc_detection_low`` / ``_central`` / ``_high`` (10 min, 1 h, 24 h), as ratios
    around the scenario's own latency (the same three at the default hour).
    """
    from .data import sourced

    if not isinstance(scenario, Scenario):
        raise ValueError(f"scenario must be a Scenario (got {type(scenario).__name__})")
    return _latency_range(scenario.modes.sdc_latency_min, sourced("restart_ranges.csv", "key", data_dir))


def _latency_range(point, rr):
    lo, mid, hi = (rr[f"sdc_detection_{k}"].minutes for k in ("low", "central", "high"))
    return point * lo / mid, point, point * hi / mid


def _days(s: Scenario, pulled, draws: dict, data_dir=None):
    """The baseline and after-levers days of the draws (numpy arrays through the one model)."""
    from .levers import default_levers
    from .restart import RestartBudget, baseline_modes

    m = s.modes
    lam, hang, timeout, restart, reschedule, latency = (draws[name] for name in INPUTS)
    shares = shares_with_hang(m.shares, hang)
    base_detect = s.detect_by_mode
    # a drawn share changes what the baseline's detection takes, not how long a reschedule takes (Scenario.replace's what-if)
    base = RestartBudget(lam, baseline_modes(shares, base_detect, reschedule, s.reload_min, latency, m.peer_copy),
                         s.checkpoint_interval_min, s.write_cost_min, None, s.step_min)
    hang_after = np.minimum(timeout + m.rank_monitor_poll_min / 2.0 + m.launcher_poll_min, base_detect["hang"])
    targets = {"detect": {"hang": hang_after}, "reschedule": restart}
    levers = {lv.name: lv for lv in default_levers(s, data_dir, targets)}
    after = base
    for name in pulled:
        after = levers[name](after)
    return base, after


def floor_range(scenario: Scenario | None = None, n: int = 4_000, seed: int = 12, data_dir=None, vary=INPUTS,
                pulled=None, shifts: bool = False) -> FloorRange:
    """Central value and 90 % range of the floor and the after-levers loss (notebook 08).

    pulled: the names of the levers the answer pulled, in its order (None: :func:`course_lib.levers.order_by_saving`
    at the point values). vary: the uncertain inputs drawn (a subset of :data:`INPUTS`); the others stay
    at their point values. With ``vary=()`` every draw is the point answer, so the range collapses onto it.
    shifts: also compute :attr:`FloorRange.shifts`, how far each input alone moves the central value from
    the point value (one more evaluation per input varied).
    """
    from .data import mode_shares, sourced
    from .levers import default_levers, order_by_saving
    from .restart import baseline_budget

    s = Scenario() if scenario is None else scenario
    if not isinstance(s, Scenario):
        raise ValueError(f"scenario must be a Scenario (got {type(s).__name__})")
    n = check_int_positive("n", n)
    seed = check_int_non_negative("seed", seed)
    unknown = set(vary) - set(INPUTS)
    if unknown:
        raise ValueError(f"vary must be a subset of {list(INPUTS)} (got {sorted(unknown)})")
    if pulled is None:
        pulled = [lv.name for lv in order_by_saving(baseline_budget(s), default_levers(s, data_dir))[0]]
    m = s.modes
    rng = np.random.default_rng(seed)
    rr = sourced("restart_ranges.csv", "key", data_dir)
    hs = mode_shares(data_dir)["hang"]
    gap = max(s.step_min, s.snapshot_cost_min)
    inside = s.detect_after_by_mode["crash"] + s.reload_after_min
    count, days = s.observed_failures, s.observed_days
    point = {"rate": s.failures_per_day, "hang share": m.share("hang"), "hang timeout": m.hang_timeout_min,
             "restart": s.reschedule_after_min, "reschedule": s.reschedule_min, "sdc latency": m.sdc_latency_min}
    if "modes.hang_timeout_min" not in s.given:
        t_lo, t_hi = 2.0 * gap, 10.0 * gap
    else:  # a timeout given: the same relative spread around it
        t_lo, t_hi = 0.4 * m.hang_timeout_min, 2.0 * m.hang_timeout_min
    latency = _latency_range(m.sdc_latency_min, rr)  # sdc_latency_range, on the table already read
    # every input is drawn (the same random stream whatever ``vary`` is), then fixed where not varied
    draws = {
        "rate": rng.gamma(count + 0.5, 1.0 / days, n),
        "hang share": _tri(rng, hs["low"], point["hang share"], hs["high"], n),
        "hang timeout": _tri(rng, t_lo, point["hang timeout"], t_hi, n),
        "restart": np.maximum(_tri(rng, rr["deadpool_hot_swap_512"].minutes, s.restart_after_min,
                                   rr["kokolis_u0_low"].minutes, n) - inside, 0.0),
        "reschedule": _tri(rng, s.reschedule_low_min, s.reschedule_min, s.reschedule_high_min, n),
        "sdc latency": _log_tri(rng, *latency, n),
    }
    varied = [name for name in INPUTS if name in vary]
    if "hot-spare restart" not in pulled:
        draws["restart"] = np.full(n, point["restart"])  # no spare: its restart time moves nothing
        varied = [name for name in varied if name != "restart"]
    fixed = {name: np.full(n, float(v)) for name, v in point.items()}
    draws = {name: x if name in vary else fixed[name] for name, x in draws.items()}

    def evaluate(d):
        _, after = _days(s, pulled, d, data_dir)
        return np.asarray(after.floor_fraction, dtype=float), np.asarray(after.loss_fraction, dtype=float)

    floor, loss = evaluate(draws)
    pct = lambda x: Range(*np.percentile(x, [50, 5, 95]).tolist())  # noqa: E731

    def ranks(x):
        # the stable sort's ranks; without ties (and NaNs) every sort gives that one order, and the default sort is faster
        order = np.argsort(x)
        xs = x[order]
        if not (x.size and np.all(xs[1:] != xs[:-1]) and not np.isnan(xs[-1])):
            order = np.argsort(x, kind="stable")  # ties: equal draws ranked by their index, as before
        r = np.empty(x.size)
        r[order] = np.arange(x.size)
        return r

    x_ranks = {name: None if np.ptp(x) == 0 else ranks(x) for name, x in draws.items()}  # each input ranked once

    def against(y):  # Spearman's rank correlation of each input with y (continuous draws: no ties), 0 for a constant
        if np.ptp(y) == 0:
            return {name: 0.0 for name in draws}
        y_ranks = ranks(y)
        return {name: 0.0 if r is None else float(np.corrcoef(r, y_ranks)[0, 1]) for name, r in x_ranks.items()}

    dom, floor_dom = against(loss), against(floor)
    moved = {}
    if shifts:
        p_floor = evaluate({name: np.array([float(v)]) for name, v in point.items()})[0][0]
        for name in vary:
            alone = {k: draws[k] if k == name else fixed[k] for k in INPUTS}
            moved[name] = float(np.median(evaluate(alone)[0]) - p_floor)
    return FloorRange(pct(floor), pct(loss), dom, n, moved, float(count), float(days), tuple(varied), floor_dom)


def p_at_least(k, failures_per_day) -> float:
    """Probability of ``k`` or more failures in one day (Poisson): with 2 a day, P(4 or more) = 14 %."""
    k = check_int_positive("k", k)
    return float(poisson.sf(k - 1, check_non_negative("failures_per_day", failures_per_day)))
