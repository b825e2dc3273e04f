"""The course's day model worked by hand: the tests' independent route to the answer's numbers.

tests/test_answer.py and tests/test_drill.py take their expected values from here. Nothing in this file calls
course_lib: every input is read from data/*.csv or is the question's own number, and every formula is written from
its statement in the course (restart.py's and levers.py's module docs, notebooks 03, 04 and 08).
"""
from __future__ import annotations

import csv
import dataclasses
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.optimize import brentq

# ---------------------------------------------------------------- the day model by hand (the tests' independent route)
# Written from the model's statement (course_lib/restart.py's module doc, notebook 03) and the levers' (course_lib/levers.py's
# module doc, notebooks 03 and 08), with every input read from data/*.csv or the question itself; nothing below calls course_lib.
#
#   X   = sum_k share_k (D_k + S_k + L_k + latency_k + tau_k / 2)   minutes per failure; tau_k = tau, or tau_p for a mode that
#                                                                     restores the persisted checkpoint (once the two differ)
#   rho = min(lambda X / T, 1),  T = 1,440 min                       the share of the day spent recovering
#   loss minutes = T (1 - (1 - i)(1 - rho) tau / (tau + delta))     i: an idle spare's share of the GPUs paid for
#
# The interval at its optimum (notebook 04, exact, not Young's first order): with A = X at tau = 0 and s the share of
# failures whose rewind moves with tau, (1 - lambda (A + s tau / 2) / T) tau / (tau + delta) is largest where
# tau^2 + 2 delta tau - 2 delta (M - A) / s = 0, M = T / lambda: tau* = -delta + sqrt(delta^2 + 2 delta (M - A) / s),
# never below the bound (Young's sqrt(2 delta M / s) to first order). test_the_hand_optimum_is_the_brute_force_minimum
# checks the derivation against a numerical minimum.
HAND_T = 1440.0
HAND_MODES = ("crash", "hang", "host_loss", "sdc")
DATA = Path(__file__).resolve().parent.parent / "data"


def table5_mode_shares(bound: str = "central") -> dict:
    """Each mode's share, weighted by Llama 3's Table 5 counts (data/llama3_table5.csv x data/failure_modes.csv): 419 in all."""
    with open(DATA / "llama3_table5.csv", newline="") as f:
        counts = {r["component"]: float(r["count"]) for r in csv.DictReader(f)}
    with open(DATA / "failure_modes.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    total = sum(counts.values())
    return {k: sum(counts[r["component"]] * float(r[f"{k}_share_{bound}"]) for r in rows) / total for k in HAND_MODES}


@dataclass(frozen=True)
class Hand:
    """The question's inputs, typed from their sources (minutes unless named otherwise); None: derived by hand below."""

    n_gpus: int = 4096  # the question
    failures_per_day: float = 2.0  # the question: two a day
    minutes_per_restart: float = 15.0  # the question
    interval_min: float = 10.0  # the course's assumption (Scenario's ASSUMED)
    reload_min: float = 129.5 / 60  # data/restart_stages.csv: ByteCheckpoint's 129.5 s load of a 405B checkpoint
    reschedule_min: float | None = None  # None: what the 15 minutes leave
    shares: tuple | None = None  # None: Table 5's counts x the modes' central shares
    params: float = 405e9  # Llama 3 405B
    bytes_per_param: float = 12.0  # data/training_step.csv: fp32 master weights and two Adam moments
    persist_gb_s: float = 0.87  # data/h200_host.csv: torch.save + fsync
    copy_gb_s: float = 55.0  # data/h200_host.csv: GPU <-> pinned host, both ways
    write_cost_min: float | None = None  # None: the shard at persist_gb_s
    snapshot_cost_min: float | None = None  # None: the shard at copy_gb_s
    reload_after_min: float | None = None  # None: the shard at copy_gb_s
    tokens_per_step: float = 16e6  # Llama 3 Table 4: 16M tokens a step
    tflops: float = 430.0  # Llama 3 Table 4: 430 TFLOP/s per GPU on 8,192 GPUs (400 on 16,384)
    launcher_poll_min: float = 0.1 / 60  # torchrun's 0.1 s monitor interval
    rank_poll_min: float = 5 / 60  # NVRx's 5 s workload_check_interval
    safety: float = 5.0  # NVRx's safety factor
    untuned_min: float = 10.0  # NCCL's collective timeout
    health_min: float = 5.0  # the cluster health check
    heartbeat_min: float = 0.5  # NVRx in-process restart's 30 s heartbeat timeout
    sdc_latency_min: float = 60.0  # the course's assumed hour
    restart_after_min: float = 2.5  # FlashRecovery's 150 s end to end
    spare_gpus: float = 8.0  # one 8-GPU server
    pooled: bool = False
    peer_copy: bool = True

    @property
    def share(self) -> dict:
        return table5_mode_shares() if self.shares is None else dict(zip(HAND_MODES, self.shares))

    @property
    def shard_gb(self):
        return self.params * self.bytes_per_param / self.n_gpus / 1e9  # 405e9 x 12 / 4,096 = 1.1865 GB

    @property
    def write(self):  # 1.1865 / 0.87 = 1.364 s
        return self.shard_gb / self.persist_gb_s / 60 if self.write_cost_min is None else self.write_cost_min

    @property
    def snapshot(self):  # 1.1865 / 55 = 21.6 ms
        return self.shard_gb / self.copy_gb_s / 60 if self.snapshot_cost_min is None else self.snapshot_cost_min

    @property
    def reload_after(self):
        return self.shard_gb / self.copy_gb_s / 60 if self.reload_after_min is None else self.reload_after_min

    @property
    def step(self):  # 6 N D / (G F) = 6 x 405e9 x 16e6 / (4,096 x 430e12) = 22.07 s
        return 6 * self.params * self.tokens_per_step / (self.n_gpus * self.tflops * 1e12) / 60

    @property
    def detect(self) -> dict:  # a crash (and a flagged SDC) at one poll, a hang at NCCL's timeout, a lost host at half a check
        p = self.launcher_poll_min
        return {"crash": p, "hang": self.untuned_min + p, "host_loss": self.health_min / 2, "sdc": p}

    @property
    def detect_after(self) -> dict:  # the tuned timeout (5 x the longest gap) + half a monitor period + the poll; a heartbeat
        p, base = self.launcher_poll_min, self.detect
        hang = self.safety * max(self.step, self.snapshot) + self.rank_poll_min / 2 + p
        return {"crash": p, "hang": min(hang, base["hang"]), "host_loss": min(self.heartbeat_min, base["host_loss"]), "sdc": p}

    @property
    def reschedule(self):  # 15 - detection - reload - (half the interval + the SDC share x its hour)
        if self.reschedule_min is not None:
            return self.reschedule_min
        sh = self.share
        rewind = self.interval_min / 2 + sh["sdc"] * self.sdc_latency_min
        return self.minutes_per_restart - sum(sh[k] * self.detect[k] for k in HAND_MODES) - self.reload_min - rewind

    @property
    def reschedule_after(self):  # the 150 s less the crash's detection and the reload from memory inside it
        return max(self.restart_after_min - self.launcher_poll_min - self.reload_after, 0.0)

    @property
    def idle(self):  # 8 / (4,096 + 8)
        return 0.0 if self.pooled else self.spare_gpus / (self.n_gpus + self.spare_gpus)


@dataclass(frozen=True)
class HandDay:
    """One day of the hand model (numbers, or numpy arrays of draws): per mode {mode: minutes}."""

    lam: object
    share: dict
    D: dict
    S: dict
    L: dict
    lat: dict
    persisted: dict
    tau: object
    delta: object
    step: float
    tau_p: object = None  # None: the latest checkpoint is the persisted one
    idle: object = 0.0
    bound: object = None  # None: a given interval; else chosen at its optimum above this bound

    def _rewinds_tau(self, k) -> bool:
        return not (self.persisted[k] and self.tau_p is not None)

    def X(self, tau=None):
        tau = self.tau if tau is None else tau
        return sum(self.share[k] * (self.D[k] + self.S[k] + self.L[k] + self.lat[k] + (tau if self._rewinds_tau(k) else self.tau_p) / 2)
                   for k in HAND_MODES)

    def rho(self, tau=None):
        return np.minimum(self.lam * self.X(tau) / HAND_T, 1.0)

    def minutes(self, tau=None):
        tau = self.tau if tau is None else tau
        return HAND_T * (1 - (1 - self.idle) * (1 - self.rho(tau)) * tau / (tau + self.delta))

    def best_tau(self, bound):
        s = sum(self.share[k] for k in HAND_MODES if self._rewinds_tau(k))
        a, m, d = self.X(0.0), HAND_T / self.lam, self.delta
        return np.maximum(-d + np.sqrt(d * d + 2 * d * (m - a) / s), bound)

    def reoptimised(self) -> HandDay:
        return self if self.bound is None else dataclasses.replace(self, tau=self.best_tau(self.bound))

    @property
    def floor(self):
        """The floor: the same day with a free write and a checkpoint every step (restart.py, notebook 08)."""
        return dataclasses.replace(self, tau=np.minimum(self.step, self.tau), delta=0.0, bound=None).minutes()


def hand_baseline(h: Hand, lam=None, shares=None, reschedule=None, latency=None) -> HandDay:
    """Every mode reschedules and reloads the persisted checkpoint; an SDC also rewinds its hour (notebook 03's table).
    reschedule: None: ``h.reschedule`` (what the 15 minutes leave); else every mode's (a number or draws).
    latency: None: ``h.sdc_latency_min`` (the assumed hour); else the SDC's (a number or draws)."""
    sh = h.share if shares is None else shares
    detect = h.detect
    resched = h.reschedule if reschedule is None else reschedule
    return HandDay(h.failures_per_day if lam is None else lam, sh, detect, {k: resched for k in HAND_MODES},
                   {k: h.reload_min for k in HAND_MODES}, {k: ((h.sdc_latency_min if latency is None else latency) if k == "sdc" else 0.0) for k in HAND_MODES},
                   {k: k == "sdc" or (k == "host_loss" and not h.peer_copy) for k in HAND_MODES}, h.interval_min, h.write, h.step)


def hand_levers(h: Hand, hang_after=None, reschedule_after=None) -> dict:
    """The four stage levers, each a change of the day that is never slower than now; each re-chooses an optimised interval."""
    after = h.detect_after
    if hang_after is not None:
        after = dict(after, hang=np.minimum(hang_after, h.detect["hang"]))
    s_after = h.reschedule_after if reschedule_after is None else reschedule_after

    def detect(d):
        return dataclasses.replace(d, D={k: np.minimum(d.D[k], after[k]) if k in ("hang", "host_loss") else d.D[k]
                                         for k in HAND_MODES}).reoptimised()

    def spare(d):
        return dataclasses.replace(d, S={k: np.minimum(d.S[k], s_after) for k in HAND_MODES},
                                   idle=np.maximum(d.idle, h.idle)).reoptimised()

    def reload(d):
        return dataclasses.replace(d, L={k: d.L[k] if d.persisted[k] else np.minimum(d.L[k], h.reload_after)
                                         for k in HAND_MODES}).reoptimised()

    def memory(d):  # a snapshot in host memory; the persisted checkpoint stays at today's interval
        bound = max(h.step, h.snapshot, h.write)
        d = dataclasses.replace(d, tau_p=d.tau if d.tau_p is None else d.tau_p, delta=h.snapshot)
        return dataclasses.replace(d, tau=d.best_tau(bound), bound=bound)

    return {"heartbeat detection": detect, "hot-spare restart": spare, "reload from memory": reload, "in-memory checkpoint": memory}


@dataclass(frozen=True)
class HandAnswer:
    baseline: HandDay
    steps: list  # [(lever name, minutes a day saved, the day after)], largest saving first
    left_out: dict  # {lever name: what it would save (<= 0)}
    spare: dict  # gross, cost, net, break_even (minutes), pulled

    @property
    def after(self) -> HandDay:
        return self.steps[-1][2] if self.steps else self.baseline

    @property
    def order(self) -> tuple:
        return tuple(name for name, _, _ in self.steps)

    @property
    def interval_before(self):  # the synchronous write at its optimum: every failure restores it
        return self.baseline.best_tau(self.baseline.step)


def hand_answer(h: Hand = Hand()) -> HandAnswer:
    """Largest saving first, each lever only while it saves (levers.py's waterfall), and the spare's verdict."""
    levers = hand_levers(h)
    day, remaining, steps, left = hand_baseline(h), dict(levers), [], {}
    while remaining:
        days = {name: f(day) for name, f in remaining.items()}
        saving = {name: day.minutes() - d.minutes() for name, d in days.items()}
        best = max(saving, key=saving.get)
        if saving[best] <= 0:
            left = saving
            break
        steps.append((best, saving[best], days[best]))
        day = days[best]
        del remaining[best]
    # the spare's verdict: the day without it (every other lever pulled) against the same day with it, the interval held at
    # the spare's re-optimised one: gross = T w (rho_0 - rho_1), cost = T w i (1 - rho_1), w = tau / (tau + delta)
    without = hand_baseline(h)
    for name, _, _ in steps:
        if name != "hot-spare restart":
            without = levers[name](without)
    with_spare = levers["hot-spare restart"](without)
    w = with_spare.tau / (with_spare.tau + with_spare.delta)
    gross = HAND_T * w * (without.rho() - with_spare.rho())
    cost = HAND_T * w * with_spare.idle * (1 - with_spare.rho())
    # break-even: the reschedule S at which the day without the spare (at the same interval) loses what the day with it loses
    lose = with_spare.minutes()

    def at(s_min):
        return dataclasses.replace(with_spare, S={k: s_min for k in HAND_MODES}, idle=0.0).minutes() - lose

    break_even = brentq(at, h.reschedule_after, 100.0, xtol=1e-13)
    return HandAnswer(hand_baseline(h), steps, left, {"gross": gross, "cost": cost, "net": gross - cost, "break_even": break_even,
                                                      "pulled": "hot-spare restart" in [n for n, _, _ in steps],
                                                      "without": without, "with_spare": with_spare})


HAND = hand_answer()
#: the other fleet of the issue: 16,384 GPUs at the question's per-GPU rate (8 a day), Table 4's 400 TFLOP/s per GPU there
HAND_16K = hand_answer(Hand(n_gpus=16384, failures_per_day=8.0, tflops=400.0))
