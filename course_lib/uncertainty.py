"""The floor as a range: Monte Carlo over the uncertain inputs, and the day-to-day spread (notebook 08).

Vectorized over ``n`` draws (numpy), each draw is one after-levers day of the per-mode model
(:mod:`course_lib.modes`; the same formulas as :func:`course_lib.restart.default_levers` with
``modes``, checked against it in tests/test_modes.py). The uncertain inputs:

- **rate**: the per-GPU rate x a Poisson factor (Gamma(k + 1/2) / k, Jeffreys, with k = Llama 3's
  419 interruptions, data/llama3_table5.csv) x a systematic factor uniform in [1, 2] (Llama 3 ran
  on "up to 16K" GPUs: fewer GPUs on average would make the per-GPU rate up to twice as high);
- **hang share**: triangular (low, central, high) of data/failure_modes.csv, the other shares rescaled;
- **hang timeout**: triangular (2 x, 5 x the longest gap, NCCL's 10-minute collective timeout):
  5 x is NVRx's safety factor, 10 min the fallback when no heartbeat timeout is tuned, 2 x the
  course's judgement of the tightest a team would set (false kills: :func:`course_lib.modes.false_kill_probability`);
- **restart**: triangular (DeadPool's < 40 s, the scenario's hot-spare target (FlashRecovery's
  150 s), Kokolis et al.'s 5-minute low end of a re-queue: the course's judgement that an in-job
  restart is no slower than the fastest re-queue), data/restart_ranges.csv.

Triangular and uniform shapes are the course's choice (stated, not sourced). The central value
is the median of the draws; the range is the 5th-95th percentile; "what dominates" is the input
with the largest Spearman rank correlation with the output.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.stats import poisson, spearmanr

from . import interval as iv
from . import modes as md
from ._validate import check_int_positive, check_non_negative
from .scenario import Scenario
from .units import MINUTES_PER_DAY

__all__ = ["INPUTS", "Range", "FloorRange", "floor_range", "p_at_least"]

#: The uncertain inputs, in the order of :attr:`FloorRange.dominance`.
INPUTS = ("rate", "hang share", "hang timeout", "restart")


@dataclass(frozen=True)
class Range:
    """A central value (median) and a 90 % range (5th and 95th percentiles), as fractions of the day."""

    central: float
    low: float
    high: float

    def text(self) -> str:
        return f"{self.central:.2%} (90 % range {self.low:.2%}-{self.high:.2%})"


@dataclass(frozen=True)
class FloorRange:
    """The Monte Carlo result: ranges of the floor and of the after-levers loss, and what dominates."""

    floor: Range
    loss: Range
    dominance: dict  # {input: Spearman rank correlation with the after-levers loss}
    n: int
    shifts: dict = field(default_factory=dict)  # {input: median floor with that input alone drawn - point floor}

    @property
    def shift_sentence(self) -> str:
        """Why the central value sits where it does against the point value: each input's own shift."""
        if not self.shifts:
            return ""
        parts = ", ".join(f"{name} {100 * v:+.2f}" for name, v in sorted(self.shifts.items(), key=lambda kv: -abs(kv[1])))
        return f"each input's range alone moves the floor's median from its point value by (percentage points): {parts}"

    @property
    def dominant(self) -> str:
        return max(self.dominance, key=lambda k: abs(self.dominance[k]))


def _tri(rng, lo, mode, hi, n):
    lo, hi = min(lo, mode), max(hi, mode)
    return np.full(n, mode) if hi == lo else rng.triangular(lo, mode, hi, n)


def floor_range(scenario: Scenario | None = None, inputs: md.ModeInputs | None = None, n: int = 20_000,
                seed: int = 12, data_dir=None, vary=INPUTS) -> FloorRange:
    """Central value and 90 % range of the floor and the after-levers loss (notebook 08).

    vary: the uncertain inputs drawn (a subset of :data:`INPUTS`); the others stay at their point
    values (the scenario's and ``inputs``'). With ``vary=()`` every draw is the point model, so the
    range collapses onto the first-order floor (tests/test_modes.py). :attr:`FloorRange.shifts`
    says how far each input alone moves the central value from the point value.
    """
    from .data import llama3_table5, mode_shares, sourced

    s = Scenario() if scenario is None else scenario
    inp = md.ModeInputs() if inputs is None else inputs
    n = check_int_positive("n", n)
    unknown = set(vary) - set(INPUTS)
    if unknown:
        raise ValueError(f"vary must be a subset of {list(INPUTS)} (got {sorted(unknown)})")
    rng = np.random.default_rng(seed)
    k = float(np.sum(llama3_table5(data_dir)["count"]))
    rr = sourced("restart_ranges.csv", "key", data_dir)
    hs = mode_shares(data_dir)["hang"]
    step = inp.step_min(s)
    gap = max(step, s.snapshot_min)
    point = {"rate": s.failures_per_day, "hang share": inp.share("hang"), "hang timeout": inp.timeout_min(s),
             "restart": s.reschedule_after_min}
    # every input is drawn (the same random stream whatever ``vary`` is), then fixed where not varied
    draws = {
        "rate": s.failures_per_day * rng.gamma(k + 0.5, 1.0 / k, n) * rng.uniform(1.0, 2.0, n),
        "hang share": _tri(rng, hs["low"], point["hang share"], hs["high"], n),
        "hang timeout": _tri(rng, 2 * gap, point["hang timeout"], max(rr["nccl_collective_timeout"].minutes, point["hang timeout"]), n),
        "restart": _tri(rng, rr["deadpool_hot_swap_512"].minutes, point["restart"], rr["kokolis_u0_low"].minutes, n),
    }
    draws = {name: x if name in vary else np.full(n, point[name]) for name, x in draws.items()}
    floor, loss = _evaluate(s, inp, step, draws)
    pct = lambda x: Range(*np.percentile(x, [50, 5, 95]).tolist())  # noqa: E731
    dom = {name: float(spearmanr(x, loss).statistic) if np.ptp(x) > 0 else 0.0 for name, x in draws.items()}
    shifts = {}
    if tuple(vary) == INPUTS:
        p_floor, _ = _evaluate(s, inp, step, {name: np.array([v]) for name, v in point.items()})
        for name in INPUTS:
            alone = {m: draws[m] if m == name else np.full(n, point[m]) for m in INPUTS}
            shifts[name] = float(np.median(_evaluate(s, inp, step, alone)[0]) - p_floor[0])
    return FloorRange(pct(floor), pct(loss), dom, n, shifts)


def _evaluate(s: Scenario, inp: md.ModeInputs, step: float, draws: dict) -> tuple[np.ndarray, np.ndarray]:
    """Floor and after-levers loss (fractions of the day) for arrays of the four uncertain inputs."""
    rate, hang, timeout, restart = (draws[name] for name in INPUTS)
    shares = md.shares_with_hang(inp.shares, hang)
    ms = md.mode_stages(s, inp)
    idx = {x.mode: i for i, x in enumerate(ms)}
    reload_k = np.array([x.reload for x in ms])
    latency_k = np.array([x.latency for x in ms])
    snap_k = np.array([x.uses_snapshot for x in ms], dtype=float)
    detect = md.half_period(inp.poll_min) + shares[:, idx["hang"]] * timeout
    reload = shares @ reload_k
    latency = shares @ latency_k
    snap_share = shares @ snap_k
    mtbf = MINUTES_PER_DAY / rate
    delta = s.snapshot_min
    bound = max(step, s.snapshot_min, s.write_before_min)
    tau = np.maximum(np.sqrt(2 * delta * mtbf / snap_share), bound)
    per_failure = detect + restart + reload + latency
    floor = rate * (per_failure + step / 2) / MINUTES_PER_DAY
    loss = iv.complete_loss_fraction(tau, delta, mtbf, per_failure)
    return np.minimum(floor, loss), loss  # the floor is first order, capped by the complete model's 1 - ETTR


def p_at_least(k, failures_per_day) -> float:
    """Probability of ``k`` or more failures in one day (Poisson): with 2 a day, P(4 or more) = 14 %."""
    k = check_int_positive("k", k)
    return float(poisson.sf(k - 1, check_non_negative("failures_per_day", failures_per_day)))
