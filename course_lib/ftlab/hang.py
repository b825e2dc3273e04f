"""A learned hang timeout: ``safety_factor x`` the longest step seen so far (notebook 10).

NVIDIA's Resiliency Extension computes its timeouts from observed intervals, a
``safety_factor`` (5 in its documentation, data/restart_ranges.csv) times the longest one
seen, and sends no heartbeats during a checkpoint save or load, so that a slow save is not
mistaken for a hang. :class:`LearnedHangDetector` is that rule for one rank, in plain Python
(no torch): the training loop calls :meth:`~LearnedHangDetector.begin` when a step's compute
starts and :meth:`~LearnedHangDetector.end` when it is done; time outside a step (the
quorum, the gradient all-reduce, recovering weights from a peer, a checkpoint save or load)
is *out of section* and never timed here (torchft's own collective and quorum timeouts watch
it). The first ``warmup`` steps only teach the detector (like NVRx's generous initial
timeout); after that a step that runs longer than the timeout is declared hung.

:func:`start_watchdog` runs the check on a daemon thread every ``poll_s`` and calls
``on_hang`` once (the lab's job logs the event and SIGKILLs itself, so that torchrun
restarts the replica group). A slow-but-healthy step longer than the timeout is killed too:
that is the false kill the safety factor trades against detection delay
(:func:`course_lib.modes.false_kill_probability`).
"""
from __future__ import annotations

import threading
import time
from typing import Callable

from .._validate import check_int_non_negative, check_positive

__all__ = ["LearnedHangDetector", "start_watchdog"]


class LearnedHangDetector:
    """Learned step timeout for one rank (seconds). Not thread-safe beyond one writer + one checker."""

    def __init__(self, safety_factor: float = 5.0, warmup: int = 3, clock: Callable[[], float] = time.monotonic):
        self.safety_factor = check_positive("safety_factor", safety_factor)
        if self.safety_factor < 1:
            raise ValueError(f"safety_factor must be a finite number >= 1 (got {safety_factor!r})")
        self.warmup = check_int_non_negative("warmup", warmup)
        self.clock = clock
        self.longest_s = 0.0
        self.seen = 0
        self._started: float | None = None
        self.fired = False

    @property
    def armed(self) -> bool:
        """True once ``warmup`` steps have been seen (before that nothing is declared hung)."""
        return self.seen >= self.warmup and self.longest_s > 0

    @property
    def timeout_s(self) -> float | None:
        """``safety_factor x`` the longest step seen, or None while warming up."""
        return self.safety_factor * self.longest_s if self.armed else None

    def begin(self) -> None:
        """A step's compute starts (the heartbeat)."""
        self._started = self.clock()

    def end(self) -> float:
        """The step's compute is done: learn its length (seconds) and leave the section."""
        if self._started is None:
            raise RuntimeError("end() without begin()")
        d = self.clock() - self._started
        self._started = None
        self.seen += 1
        self.longest_s = max(self.longest_s, d)
        return d

    def overdue_s(self, now: float | None = None) -> float | None:
        """Seconds the current step has run past the timeout (None: not in a step or not armed)."""
        t = self.timeout_s
        if t is None or self._started is None:
            return None
        now = self.clock() if now is None else now
        return (now - self._started) - t

    def check(self, now: float | None = None) -> bool:
        """True (once) when the step in progress has outlasted the timeout."""
        over = self.overdue_s(now)
        if over is not None and over > 0 and not self.fired:
            self.fired = True
            return True
        return False


def start_watchdog(detector: LearnedHangDetector, on_hang: Callable[[LearnedHangDetector], None],
                   poll_s: float = 0.02) -> threading.Thread:
    """Check ``detector`` every ``poll_s`` seconds on a daemon thread; call ``on_hang(detector)`` once."""
    poll = check_positive("poll_s", poll_s)

    def loop():
        while not detector.fired:
            if detector.check():
                on_hang(detector)
                return
            time.sleep(poll)

    th = threading.Thread(target=loop, name="hang-watchdog", daemon=True)
    th.start()
    return th
