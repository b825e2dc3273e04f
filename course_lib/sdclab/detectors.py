"""The four cheap detectors of silent data corruption, and what recovery does with their alarms
(notebook 14). Plain Python: the training job (:mod:`.job`) gathers the numbers, every rank runs these
functions on the same gathered numbers and so takes the same decision, with no further agreement.

``fingerprint``
    after every optimizer step each replica's 64-bit parameter fingerprint
    (:func:`~course_lib.sdclab.fingerprint.fingerprint64`) is gathered; replicas that differ mean a
    replica's memory changed. With three or more replicas the odd one out is the bad one; with two a
    mismatch is seen but cannot be pinned on either; with one there is nothing to compare.
``loss``
    every replica's loss against a running estimate (an exponential moving average of the median loss):
    not finite, or above ``factor`` x the estimate, is an alarm. A corrupted weight shows in the next
    step's loss; a corrupted gradient, averaged into every replica, in every replica's next loss.
``grad_norm``
    every replica's local gradient norm (before the all-reduce) against a running estimate, the same way:
    a gradient corrupted by a compute error is seen in the step it happens, on the replica that made it.
``replay``
    every ``every`` steps each replica's gradient is recomputed on another replica (same weights, batch and
    dropout seed) and the two 64-bit gradient fingerprints compared: a compute error that changes even the
    lowest bit shows, if it happens in a replayed step. With three or more replicas a third one arbitrates
    a mismatch (whose gradient agrees with the third computation); with one, nothing can replay.

What an alarm leaves behind (:class:`Alarm`): the step it was raised in, the suspect (a physical rank, or
None when the numbers cannot name one) and the detector's **window**: how many steps before the alarm the
corruption may already have entered the state. Recovery rewinds to the newest kept snapshot of a step at
most ``step - 1 - window`` (:func:`rewind_target`), hands the suspect's data shard to a healthy replica
(:func:`reassign`) and goes on; the run then ends bit-identical to one that never failed.
"""
from __future__ import annotations

import math
import statistics
from collections import Counter
from dataclasses import dataclass, field

from .._validate import check_int_non_negative, check_int_positive, check_positive

__all__ = ["DETECTORS", "Alarm", "unavailable", "fingerprint_alarm", "RunningCheck", "checkers", "arbiter",
           "replay_alarm", "rewind_target", "reassign", "window"]

#: The detectors, cheapest first.
DETECTORS = ("fingerprint", "loss", "grad_norm", "replay")


@dataclass(frozen=True)
class Alarm:
    """One detector's alarm: raised in ``step`` (the corruption is at most ``window`` steps older), the
    ``suspect`` physical rank (None: not identifiable from these numbers) and the ``reason`` in words."""

    detector: str
    step: int
    suspect: int | None
    reason: str
    window: int = 0


def window(detector: str, replay_every: int = 1) -> int:
    """Steps before the alarm that the corruption may have entered the state, for ``detector``.

    fingerprint, grad_norm: 0 (each checks every step, before the next one reads the state); loss: 1 (a
    weight corrupted in step s shows in the loss of step s + 1); replay: ``replay_every - 1`` (a compute
    fault that began just after the previous replayed step).
    """
    if detector not in DETECTORS:
        raise ValueError(f"detector must be one of {list(DETECTORS)} (got {detector!r})")
    return {"fingerprint": 0, "grad_norm": 0, "loss": 1, "replay": check_int_positive("replay_every", replay_every) - 1}[detector]


def unavailable(detector: str, replicas: int) -> str | None:
    """Why ``detector`` cannot run with ``replicas`` replicas (None: it can). A detector that cannot run
    says so: it never passes silently."""
    if detector not in DETECTORS:
        raise ValueError(f"detector must be one of {list(DETECTORS)} (got {detector!r})")
    n = check_int_positive("replicas", replicas)
    if detector == "fingerprint" and n < 2:
        return f"the fingerprint compares replicas and there is {n} (a lone replica has nothing to disagree with)"
    if detector == "replay" and n < 2:
        return f"replay recomputes a step on another replica and there is {n}"
    return None


def fingerprint_alarm(step: int, fingerprints: dict) -> Alarm | None:
    """The fingerprint check of ``step``: ``fingerprints`` is {physical rank: 64-bit fingerprint} of the
    active replicas. None when they all agree; else an alarm naming the odd one out when a strict majority
    agrees and exactly one differs (three or more replicas), and no suspect otherwise."""
    if len(fingerprints) < 2:
        raise ValueError(f"fingerprints must hold two or more replicas (got {len(fingerprints)}): {unavailable('fingerprint', max(len(fingerprints), 1))}")
    counts = Counter(fingerprints.values())
    if len(counts) == 1:
        return None
    value, n = counts.most_common(1)[0]
    odd = sorted(r for r, v in fingerprints.items() if v != value)
    if len(fingerprints) >= 3 and n > len(fingerprints) / 2 and len(odd) == 1:
        return Alarm("fingerprint", step, odd[0], f"rank {odd[0]}'s parameters differ from the other {n} replicas'")
    if len(fingerprints) == 2:
        return Alarm("fingerprint", step, None, "the two replicas' parameters differ: no majority says which one is bad")
    return Alarm("fingerprint", step, None, f"the replicas' parameters differ ({len(counts)} distinct fingerprints among "
                                            f"{len(fingerprints)}): no single odd one out")


@dataclass
class RunningCheck:
    """A value per replica checked against a running estimate (the loss, the gradient norm).

    ``factor``: an alarm when a replica's value exceeds ``factor`` x the estimate, or is not finite;
    ``warmup``: steps observed before the ratio is checked (the non-finite check is on from the start);
    ``decay``: the estimate is ``decay x estimate + (1 - decay) x the median of the step``, updated only by
    steps without an alarm. ``state()`` / ``restore()`` rewind it with the snapshots.
    """

    detector: str
    factor: float
    warmup: int = 3
    decay: float = 0.9
    estimate: float | None = None
    seen: int = 0
    _checked: bool = field(default=False, repr=False)

    def __post_init__(self):
        if self.detector not in ("loss", "grad_norm"):
            raise ValueError(f"detector must be 'loss' or 'grad_norm' (got {self.detector!r})")
        self.factor = check_positive("factor", self.factor)
        if self.factor <= 1:
            raise ValueError(f"factor must be a finite number > 1 (got {self.factor!r}): a threshold at the estimate flags every other step")
        self.warmup = check_int_non_negative("warmup", self.warmup)
        if not 0 <= self.decay < 1:
            raise ValueError(f"decay must be in [0, 1) (got {self.decay!r})")

    def check(self, step: int, values: dict, servers: dict | None = None) -> Alarm | None:
        """``values``: {logical rank: value} of this step; ``servers``: {logical rank: physical rank serving
        it} (default: the same). An alarm names the server of the one flagged replica, or no suspect when
        several are flagged (a corruption averaged into every replica)."""
        servers = servers or {k: k for k in values}
        bad = sorted(k for k, v in values.items() if not math.isfinite(v))
        what = "loss" if self.detector == "loss" else "gradient norm"
        if bad:
            reason = f"the {what} of replica {', '.join(map(str, bad))} is not finite"
        elif self.estimate is not None and self.seen >= self.warmup:
            limit = self.factor * self.estimate
            bad = sorted(k for k, v in values.items() if v > limit)
            reason = f"the {what} of replica {', '.join(map(str, bad))} exceeds {self.factor:g} x its running estimate {self.estimate:.4g}"
        if not bad:
            self._observe(values)
            return None
        suspect = servers[bad[0]] if len(bad) == 1 else None
        if len(bad) > 1:
            reason += " (every flagged replica: no single suspect)"
        return Alarm(self.detector, step, suspect, reason, window(self.detector))

    def _observe(self, values: dict) -> None:
        m = statistics.median(values.values())
        self.estimate = m if self.estimate is None else self.decay * self.estimate + (1 - self.decay) * m
        self.seen += 1

    def state(self) -> tuple:
        return (self.estimate, self.seen)

    def restore(self, state: tuple) -> None:
        self.estimate, self.seen = state


def checkers(servers: dict) -> dict:
    """{logical rank: physical rank that replays it}: the server of the next logical rank that another
    physical rank serves (so no rank checks itself). Empty when only one physical rank serves them all."""
    order = sorted(servers)
    out = {}
    for i, lg in enumerate(order):
        for j in range(1, len(order)):
            other = servers[order[(i + j) % len(order)]]
            if other != servers[lg]:
                out[lg] = other
                break
    return out


def arbiter(server: int, checker: int, active) -> int | None:
    """The lowest active physical rank that is neither ``server`` nor ``checker`` (None with two ranks)."""
    rest = sorted(set(active) - {server, checker})
    return rest[0] if rest else None


def replay_alarm(step: int, grad_fps: dict, replay_fps: dict, servers: dict, arbiter_fps: dict | None = None,
                 every: int = 1) -> Alarm | None:
    """The replay check of ``step``: ``grad_fps`` {logical: fingerprint of the gradient its server sent},
    ``replay_fps`` {logical: fingerprint of its checker's recomputation}, ``arbiter_fps`` {logical: the
    arbiter's recomputation} for the mismatched ones (three or more replicas).

    A mismatch whose arbiter agrees with the checker blames the server; one whose arbiter agrees with the
    server blames the checker; the alarm names the one rank every mismatch blames, else no suspect.
    """
    cks = checkers(servers)
    mismatched = sorted(lg for lg, fp in replay_fps.items() if fp != grad_fps[lg])
    if not mismatched:
        return None
    arbiter_fps = arbiter_fps or {}
    blamed, unresolved = [], []
    for lg in mismatched:
        a = arbiter_fps.get(lg)
        if a is None:
            unresolved.append(lg)
        elif a == replay_fps[lg] != grad_fps[lg]:
            blamed.append(servers[lg])
        elif a == grad_fps[lg]:
            blamed.append(cks[lg])
        else:
            unresolved.append(lg)
    who = set(blamed)
    suspect = who.pop() if len(set(blamed)) == 1 and not unresolved else None
    pairs = ", ".join(f"replica {lg} (rank {servers[lg]}) vs its replay on rank {cks[lg]}" for lg in mismatched)
    if suspect is not None:
        reason = f"gradients differ from their replay: {pairs}; the arbiter's recomputation blames rank {suspect}"
    elif unresolved and not arbiter_fps:
        reason = f"gradients differ from their replay: {pairs}; with two replicas no third one can say which side is wrong"
    else:
        reason = f"gradients differ from their replay: {pairs}; the recomputations do not name one rank"
    return Alarm("replay", step, suspect, reason, window("replay", every))


def rewind_target(snapshot_steps, alarm: Alarm) -> int | None:
    """The newest kept snapshot older than the corruption can be: the largest step <= ``alarm.step - 1 -
    alarm.window`` (None: every kept snapshot may hold the corruption; keep more, or detect sooner)."""
    limit = alarm.step - 1 - alarm.window
    ok = [s for s in snapshot_steps if s <= limit]
    return max(ok) if ok else None


def reassign(servers: dict, bad: int) -> dict:
    """``servers`` ({logical: physical}) with every logical rank of physical rank ``bad`` handed to the healthy
    physical rank serving the fewest (the lowest rank on a tie); unchanged when ``bad`` is the only one."""
    healthy = sorted({p for p in servers.values() if p != bad})
    if not healthy:
        return dict(servers)
    out = dict(servers)
    for lg in sorted(k for k, p in servers.items() if p == bad):
        load = Counter(out[k] for k in out if out[k] != bad)
        out[lg] = min(healthy, key=lambda p: (load.get(p, 0), p))
    return out
