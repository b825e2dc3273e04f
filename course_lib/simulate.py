"""Monte Carlo of one training job under failures with periodic checkpoints (notebook 04 checks the maths with it).

The model is Daly's complete model (:mod:`course_lib.interval`), simulated event by event:

- the job needs ``work`` of useful work, cut into segments of ``interval`` useful work, each
  followed by a checkpoint write of ``write_cost`` (the last segment may be shorter:
  :func:`course_lib.interval.split_work`; it also ends with a write);
- failures form a renewal process: the times between failures are independent draws from an
  exponential or a Weibull(``shape``) distribution whose mean is ``mtbf`` (the Weibull scale is
  ``mtbf / Gamma(1 + 1/shape)``), and the failure clock restarts at every failure;
- a failure during work or during a checkpoint write loses the whole segment (back to the last
  completed checkpoint); then a restart of length ``restart`` must run failure-free: a failure
  during the restart restarts the restart;
- at an exact tie (probability zero with continuous draws, but both simulators follow it): a
  failure at the instant a write completes keeps that segment, a restart that completes at the
  instant of the next failure succeeds, and a failure at the instant the last write completes
  finds the job done.

Each run's wall time splits into ``useful`` (= work), ``checkpoint`` (completed writes),
``rewound`` (time in segments that a failure then erased, partial writes included) and
``restart`` (all time in restarts, interrupted ones included).

Vectorization: every run consumes exactly one inter-failure time per *round*. In one round all
active runs, as numpy arrays, finish the restart in progress (or fail in it), then complete as
many whole segments as the remaining time allows (``floor(time / segment)``, no loop over
segments), and either finish the job or fail inside a segment. The Python loop is over rounds
(about the largest number of failures of any run), never over runs or events. To keep each
round to about ten array passes it tracks only the segments left and the clock of each run still
going (compacted in place once a quarter of them have finished), logs finished runs and failed
restarts per round and writes them to the per-run results once at the end, and reuses its memory
(the scratch of the rounds becomes the results: a page touched for the first time costs about as
much as a pass over it); the rewound time is what remains of the wall time. Profiled on the
benchmark's scenario (benchmarks/simulate_bench.py), drawing the stream is about half the time,
the passes and the bookkeeping the other half. :func:`simulate_job_reference` accumulates every
part separately, and the tests check the two agree run by run.

Common random numbers: the inter-failure time that run ``i`` uses in round ``k`` is element
``[k, i]`` of a fixed stream (drawn in blocks of whole rows, for every run, whether or not it is
still active), so with the same ``seed`` and ``n_runs`` every run sees the *same failure
process* whatever the interval, write cost or restart cost. Comparisons across intervals then
differ only through the model, which is how notebook 04 and the tests find the simulated optimum.
:func:`simulate_job_reference` is the straightforward per-event loop over the same stream.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ._validate import check_choice, check_int_non_negative, check_int_positive, check_non_negative, check_positive
from .interval import split_work

__all__ = ["SimulationResult", "simulate_job", "simulate_job_reference", "weibull_scale", "DISTRIBUTIONS",
           "simulate_replica_floor"]

DISTRIBUTIONS = ("exponential", "weibull")
MAX_ROUNDS = 2_000_000


def weibull_scale(mtbf: float, shape: float) -> float:
    """Weibull scale whose mean is ``mtbf``: :func:`course_lib.failures.weibull_scale_for_mean` (the one formula)."""
    from .failures import weibull_scale_for_mean

    return weibull_scale_for_mean(shape, mtbf)


@dataclass(frozen=True)
class SimulationResult:
    """Per-run arrays (one entry per simulated run) and the parameters that produced them."""

    wall: np.ndarray
    useful: np.ndarray
    checkpoint: np.ndarray
    rewound: np.ndarray
    restart: np.ndarray
    failures: np.ndarray  # failures during work or a write (each one rewinds a segment)
    restart_failures: np.ndarray  # failures during a restart (each one restarts the restart)
    params: dict = field(default_factory=dict)

    FIELDS = ("wall", "useful", "checkpoint", "rewound", "restart", "failures", "restart_failures")

    @property
    def n_runs(self) -> int:
        return int(self.wall.size)

    def _field(self, name: str) -> np.ndarray:
        if name == "waste":
            return self.waste()
        check_choice("field", name, self.FIELDS + ("waste",))
        return np.asarray(getattr(self, name), dtype=float)

    def mean(self, field: str = "wall") -> float:
        """Mean over runs of ``field`` (any array attribute, or ``"waste"``)."""
        return float(np.mean(self._field(field)))

    def stderr(self, field: str = "wall") -> float:
        """Standard error of :meth:`mean`: sample standard deviation / sqrt(n_runs)."""
        x = self._field(field)
        return float(np.std(x, ddof=1) / math.sqrt(x.size)) if x.size > 1 else math.nan

    def waste(self) -> np.ndarray:
        """Per-run waste, ``wall / useful - 1`` (time lost per unit of useful work)."""
        return self.wall / self.useful - 1.0

    def breakdown(self) -> dict:
        """Mean of each part of the wall time: {useful, checkpoint, rewound, restart}."""
        return {k: self.mean(k) for k in ("useful", "checkpoint", "rewound", "restart")}


class _Stream:
    """Inter-failure times. ``row(k)``: every run's draw for round k (common random numbers);
    ``fresh(m)``: m new draws for the active runs only (``common_random_numbers=False``).

    Rows are drawn in blocks of whole rows; numpy fills arrays in order, so the values do not
    depend on the block size (row k is always draws k*n .. k*n + n - 1 of the stream).
    ``scaled=False``: rows and fresh draws come unscaled (the caller multiplies the values it uses by
    ``scale``, which gives the same numbers: the product is elementwise), and a stream that keeps
    no rows draws each block into one reused buffer (no new memory per round).
    """

    def __init__(self, rng, n_runs, distribution, mtbf, shape, *, keep: bool, scaled: bool = True):
        self.rng, self.n, self.dist, self.keep, self.scaled = rng, n_runs, distribution, keep, scaled
        self.shape = shape
        self.scale = weibull_scale(mtbf, shape) if distribution == "weibull" else mtbf
        self.block_rows = max(1, min(16, 65536 // n_runs))
        self.blocks: list[np.ndarray] = []
        self.first = 0  # index of the first row held
        self.drawn = 0  # values drawn in all
        self._buf = None if keep else np.empty((self.block_rows, n_runs))

    def _draw(self, size, out=None) -> np.ndarray:
        if self.dist == "exponential":
            x = self.rng.standard_exponential(size) if out is None else self.rng.standard_exponential(size, out=out)
        else:
            x = self.rng.weibull(self.shape, size)
        if self.scaled:
            x *= self.scale
        self.drawn += x.size
        return x

    def fresh(self, m: int) -> np.ndarray:
        return self._draw(m)

    def row(self, k: int) -> np.ndarray:
        while k >= self.first + self.block_rows * len(self.blocks):
            if self.keep:
                self.blocks.append(self._draw((self.block_rows, self.n)))
            else:
                self.first += self.block_rows * len(self.blocks)
                self.blocks = [self._draw((self.block_rows, self.n), out=self._buf)]
        b, i = divmod(k - self.first, self.block_rows)
        return self.blocks[b][i]


def _validated(work, interval, write_cost, mtbf, restart, n_runs, distribution, shape, seed):
    p = dict(
        work=check_positive("work", work),
        interval=check_positive("interval", interval),
        write_cost=check_positive("write_cost", write_cost),
        mtbf=check_positive("mtbf", mtbf),
        restart=check_non_negative("restart", restart),
        n_runs=check_int_positive("n_runs", n_runs),
        distribution=check_choice("distribution", distribution, DISTRIBUTIONS),
        shape=check_positive("shape", shape),
    )
    if isinstance(seed, np.random.Generator):
        rng = seed
        p["seed"] = None
    else:
        p["seed"] = check_int_non_negative("seed", seed)
        rng = np.random.default_rng(p["seed"])
    return p, rng


def simulate_job(
    work,
    interval,
    write_cost,
    mtbf,
    restart=0.0,
    *,
    n_runs: int = 10_000,
    distribution: str = "exponential",
    shape: float = 1.0,
    seed=0,
    common_random_numbers: bool = True,
) -> SimulationResult:
    """Simulate ``n_runs`` independent runs of one job; vectorized over runs (see the module doc).

    Parameters are in one time unit (the course: minutes). ``distribution`` is ``"exponential"``
    or ``"weibull"`` (with ``shape``; shape < 1 means clustered, infant-mortality failures); the
    mean time between failures is ``mtbf`` either way. ``seed`` is an int (reproducible) or a
    ``numpy.random.Generator``. With ``common_random_numbers`` (the default) run ``i`` sees the
    same failure process for any interval, write cost or restart cost (same seed and
    ``n_runs``), at the price of drawing a whole row of the stream per round; ``False`` draws
    only for the runs still going (faster; :func:`simulate_job_reference` then no longer
    reproduces the runs).
    """
    p, rng = _validated(work, interval, write_cost, mtbf, restart, n_runs, distribution, shape, seed)
    p["common_random_numbers"] = bool(common_random_numbers)
    n_full, rem = split_work(p["work"], p["interval"])
    delta, R = p["write_cost"], p["restart"]
    seg = p["interval"] + delta
    seg_last = rem + delta if rem > 0 else 0.0
    n_seg = n_full + (1 if rem > 0 else 0)
    n = p["n_runs"]
    stream = _Stream(rng, n, p["distribution"], p["mtbf"], p["shape"], keep=False, scaled=False)
    scale = stream.scale

    # What happens to a run is logged per round and written to the per-run results once, at the end (a few
    # large scatters instead of many small ones; a run's sums keep the order of its rounds).
    fin_who, fin_wall, fin_round = [], [], []  # runs that finished: their wall time and round
    rf_who, rf_time = [], []  # failed restarts: the run and the time the restart ran before the failure
    # The state of the m runs still in the arrays is the first m entries of these (compacted in place), the
    # scratch of a round the first m of d_all, q_all, b_all; at the end the same memory holds the results
    # (memory touched once: a new page costs as much as a pass over it).
    block = np.empty((4, n))
    remaining_all, clock_all, d_all, q_all = block
    remaining_all.fill(float(n_full))  # whole segments still to complete
    clock_all.fill(0.0)  # sum of the inter-failure times drawn so far
    ids_all = np.arange(n)  # which run each entry is
    b_all = np.empty(n, dtype=bool)
    m = n
    compacted = False  # until the first compaction, entry i is run i and its draw is row[i]
    # a compaction drops the finished runs once they are 1/share of the entries; without common random
    # numbers the draws follow the number of entries, so there the schedule is part of the stream (1/8)
    share = 4 if common_random_numbers else 8
    stale = 0  # finished runs among the m entries (marked remaining = inf)
    k_round = 0
    while m:
        ids, remaining, clock = ids_all[:m], remaining_all[:m], clock_all[:m]
        if not common_random_numbers:
            d = stream.fresh(m)
        elif compacted:  # mode="wrap": the indices are valid, and numpy then skips its buffered bounds check
            d = np.take(stream.row(k_round), ids, out=d_all[:m], mode="wrap")
        else:  # the row itself (its buffer is redrawn next round)
            d = stream.row(k_round)
        d *= scale  # the same products as scaling the whole row
        clock += d
        if k_round:  # a restart first (the job starts without one) ...
            d -= R  # ... d is now the time left for work after it
            if R > 0:
                neg = np.flatnonzero(np.less(d, 0.0, out=b_all[:m]))  # ... which fails when the next failure is sooner
                if neg.size:
                    neg = neg[remaining[neg] != np.inf]  # not the finished runs awaiting compaction
                    rf_who.append(ids[neg])
                    rf_time.append(d[neg] + R)
                    d[neg] = 0.0  # no work this round
        q = np.divide(d, seg, out=q_all[:m])  # whole segments this draw covers
        np.floor(q, out=q)
        idx = np.flatnonzero(np.greater_equal(q, remaining, out=b_all[:m]))  # enough for the rest of the job
        if idx.size:
            left, d_i = remaining[idx], d[idx]
            if rem > 0:  # the short last segment must fit too
                fits = (d_i - left * seg) >= seg_last
                if not fits.all():
                    remaining[idx[~fits]] = q[idx[~fits]]  # every whole segment done (0 after the update below)
                    idx, left, d_i = idx[fits], left[fits], d_i[fits]
            fin_who.append(ids[idx])
            fin_wall.append(clock[idx] - d_i + left * seg + seg_last)
            fin_round.append((k_round, idx.size))
            remaining[idx] = np.inf  # finished: never "done" again (inf - q stays inf)
            stale += idx.size
        remaining -= q
        if stale and share * stale > m:  # in place: the kept entries keep their order
            keep = np.flatnonzero(remaining != np.inf)
            m = keep.size
            ids_all[:m], remaining_all[:m], clock_all[:m] = ids[keep], remaining[keep], clock[keep]
            compacted = True
            stale = 0
        k_round += 1
        if k_round > MAX_ROUNDS and np.isfinite(remaining_all[:m]).any():  # a run still going has failed MAX_ROUNDS + 1 times
            raise RuntimeError(
                f"simulation did not finish within {MAX_ROUNDS} failures per run: the segment "
                f"interval + write_cost = {seg:g} is too long for mtbf = {p['mtbf']:g}"
            )
    wall = d_all  # every run finishes once: every entry is written
    who = np.concatenate(fin_who)
    wall[who] = np.concatenate(fin_wall)
    failures = ids_all  # first the round each run finished in ...
    failures[who] = np.repeat(*np.array(fin_round).T)
    who = np.concatenate(rf_who) if rf_who else np.zeros(0, dtype=np.int64)
    rfail = np.bincount(who, minlength=n)  # failed restarts per run
    rfail_time = np.bincount(who, weights=np.concatenate(rf_time), minlength=n) if rf_who else np.zeros(n)
    failures -= rfail  # ... then the failures: every round after the first starts with a restart attempt
    restart_time = np.multiply(failures, R, out=clock_all)
    restart_time += rfail_time
    checkpoint = np.full(n, n_seg * delta)
    useful = remaining_all
    useful.fill(p["work"])
    rewound = np.subtract(wall, p["work"], out=q_all)  # = wall - useful - checkpoint - restart, at least 0,
    rewound -= n_seg * delta  # for a run that failed
    rewound -= restart_time
    np.maximum(rewound, 0.0, out=rewound)
    rewound[failures == 0] = 0.0
    p.update(n_full=n_full, remainder=rem, rounds=k_round, drawn=stream.drawn)
    return SimulationResult(wall, useful, checkpoint, rewound, restart_time, failures, rfail, p)


def simulate_job_reference(
    work,
    interval,
    write_cost,
    mtbf,
    restart=0.0,
    *,
    n_runs: int = 100,
    distribution: str = "exponential",
    shape: float = 1.0,
    seed=0,
) -> SimulationResult:
    """The same model as :func:`simulate_job` as a straightforward per-event Python loop.

    One loop iteration per event (a completed segment, a failure, a completed or failed
    restart), run after run, over the same stream of inter-failure times, so with the same
    seed it reproduces :func:`simulate_job` run for run (up to rounding). Slow on purpose: the
    test suite's cross-check and the benchmark's baseline (benchmarks/simulate_bench.py).
    """
    p, rng = _validated(work, interval, write_cost, mtbf, restart, n_runs, distribution, shape, seed)
    n_full, rem = split_work(p["work"], p["interval"])
    delta, R = p["write_cost"], p["restart"]
    lengths = [p["interval"] + delta] * n_full + ([rem + delta] if rem > 0 else [])
    n = p["n_runs"]
    stream = _Stream(rng, n, p["distribution"], p["mtbf"], p["shape"], keep=True)
    out = {k: np.zeros(n) for k in ("wall", "rewound", "restart")}
    fails = np.zeros(n, dtype=np.int64)
    rfails = np.zeros(n, dtype=np.int64)
    for i in range(n):
        k = 0
        ttf = float(stream.row(k)[i])
        clock = rewound = rst = 0.0
        nf = nr = 0
        s = 0
        while s < len(lengths):
            length = lengths[s]
            if ttf >= length:  # the segment and its write complete
                ttf -= length
                clock += length
                s += 1
                continue
            clock += ttf  # failure inside the segment: it is lost
            rewound += ttf
            nf += 1
            while True:  # restart until one completes failure-free
                k += 1
                ttf = float(stream.row(k)[i])
                if ttf >= R:
                    ttf -= R
                    clock += R
                    rst += R
                    break
                clock += ttf
                rst += ttf
                nr += 1
        out["wall"][i], out["rewound"][i], out["restart"][i] = clock, rewound, rst
        fails[i], rfails[i] = nf, nr
    n_seg = len(lengths)
    p.update(n_full=n_full, remainder=rem)
    return SimulationResult(
        out["wall"], np.full(n, p["work"]), np.full(n, n_seg * delta), out["rewound"], out["restart"], fails, rfails, p
    )


def simulate_replica_floor(scenario, replica_inputs=None, mode_inputs=None, *, days: float = 30.0,
                           n_runs: int = 2000, seed: int = 0) -> tuple[float, float]:
    """Monte Carlo of the floor with replica groups (notebook 10): ``(mean, standard error)`` in minutes per day.

    Checks :func:`course_lib.floor.per_mode_groups` event by event on the all-levers day
    (:func:`course_lib.levers.all_levers_day`). In each of ``n_runs`` runs of ``days`` days, failures
    arrive as a Poisson process at the scenario's rate; each draws its mode from the shares; the periodic
    parts are drawn, not averaged (a hang's rank-monitor check ``U(0, period)`` after its timeout; the step in
    flight ``U(0, step)``; the rewind to the persisted checkpoint ``U(0, interval)`` of an sdc, and of a lost
    host when no peer holds its snapshot); a crash's detection, the launcher's 0.1 s poll, is taken at its
    mean. Detection stops the whole job, the quorum change and the step
    in flight stop the survivors, the rejoin stops the failed group (``1 / G`` of the job); an sdc restarts
    the whole job. With one group every failure is a whole-job restart. The model takes the means, so it
    must agree within the simulation's error (the day is far from saturated, where the model is linear).
    """
    import dataclasses

    from . import floor as fl
    from .levers import all_levers_day

    s = scenario
    if replica_inputs is not None or mode_inputs is not None:
        changes = {}
        if replica_inputs is not None:
            changes["replicas"] = replica_inputs
        if mode_inputs is not None:
            changes["modes"] = mode_inputs
        s = dataclasses.replace(scenario, **changes)
    days = check_positive("days", days)
    n_runs = check_int_positive("n_runs", n_runs)
    g = fl.groups_for(s)
    rep = s.replicas
    rng = np.random.default_rng(check_int_non_negative("seed", seed))
    day = all_levers_day(s).floor_budget
    modes = day.modes
    rewind = day.rewind_by_mode()
    step = day.floor_interval_min
    poll = s.modes.rank_monitor_poll_min
    counts = rng.poisson(s.failures_per_day * days, size=n_runs)
    total = int(counts.sum())
    run = np.repeat(np.arange(n_runs), counts)
    shares = np.array([m.share for m in modes], dtype=float)
    mode = rng.choice(len(modes), size=total, p=shares / shares.sum())
    in_flight = rng.uniform(0.0, step, size=total)
    seen = rng.uniform(0.0, poll, size=total)
    cost = np.empty(total)
    for i, m in enumerate(modes):
        k = mode == i
        # a hang: its timeout, then the rank monitor's check at a uniform phase (the model's half period)
        detect = m.detect - poll / 2.0 + seen[k] if m.mode == "hang" else np.full(int(k.sum()), m.detect)
        if m.persisted:  # back to the persisted checkpoint: its age at the corruption is uniform over the interval
            back = m.latency + rng.uniform(0.0, 2.0 * (rewind[m.mode] - m.latency), size=int(k.sum()))
        else:
            back = in_flight[k]
        whole = detect + m.reschedule + m.reload + back
        if g == 1 or m.mode == "sdc":
            cost[k] = whole
        else:
            cost[k] = detect + (g - 1) / g * (rep.stall_min + in_flight[k]) + rep.rejoin_min / g
    per_run = np.bincount(run, weights=cost, minlength=n_runs) / days
    return float(per_run.mean()), float(per_run.std(ddof=1) / math.sqrt(n_runs))
