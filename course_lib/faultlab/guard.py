"""The restart-loop guard: stop restarting a job whose restarts make no progress (notebooks 07, 11).

A bad node that nobody removes fails the job at the same step after every restart; an automatic
restart policy without a bound then restarts it forever, each time paying detection, restart,
reload and the rewound work, and the job never gets past that step. NVIDIA's Resiliency Extension
gives up after ``max_no_progress_restarts`` restarts in a row without progress (default 3,
``data/restart_ranges.csv`` row ``nvrx_max_no_progress_restarts`` [@nvrx-docs]).

Progress here is the newest training step an attempt completed: an attempt that ends without
getting past the best step of every earlier attempt made no progress. :class:`RestartGuard` is
the policy (pure, no torch); the fault lab's instrumented torchrun (:mod:`.launch`) asks it after
every failure its agent notices and, when it says stop, spends the agent's remaining restarts so
the job ends with the guard's message, which names the node, the rank and the step.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from .._validate import check_int_non_negative, check_int_positive

__all__ = ["NoProgressError", "Attempt", "RestartGuard", "default_max_no_progress_restarts"]


def default_max_no_progress_restarts() -> int:
    """NVRx's ``max_no_progress_restarts`` default, read from data/restart_ranges.csv [@nvrx-docs]."""
    from ..data import sourced

    return int(sourced("restart_ranges.csv")["nvrx_max_no_progress_restarts"].value)


class NoProgressError(RuntimeError):
    """Restarts made no progress ``max_no_progress_restarts`` times in a row (the message says where)."""

    def __init__(self, message: str, attempts: tuple):
        super().__init__(message)
        self.attempts = attempts


@dataclass(frozen=True)
class Attempt:
    """One attempt that ended in a failure: the newest step it completed (``progress``), the step
    it failed in (``step``), and where (``node``, ``rank``; empty / -1 when unknown)."""

    progress: int
    step: int
    node: str = ""
    rank: int = -1

    def where(self) -> str:
        who = f"rank {self.rank} on node {self.node}" if self.rank >= 0 else f"node {self.node}"
        return f"step {self.step} ({who})" if self.node or self.rank >= 0 else f"step {self.step}"


class RestartGuard:
    """Count restarts in a row that made no progress; :meth:`after_failure` raises when it is time to stop.

    >>> g = RestartGuard(3)
    >>> [g.after_failure(progress=6, step=7, node="n1") for _ in range(3)]   # restart, restart, restart
    [True, True, True]
    >>> g.after_failure(progress=6, step=7, node="n1")                       # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    course_lib.faultlab.guard.NoProgressError: stopped restarting: 3 restarts in a row made no progress ...
    """

    def __init__(self, max_no_progress_restarts: int | None = None):
        if max_no_progress_restarts is None:
            max_no_progress_restarts = default_max_no_progress_restarts()
        self.max_no_progress_restarts = check_int_positive("max_no_progress_restarts", max_no_progress_restarts)
        self.attempts: list[Attempt] = []
        self.best = -1
        self.no_progress = 0

    def after_failure(self, progress: int, step: int | None = None, node: str = "", rank: int = -1) -> bool:
        """Record a failed attempt; True when the job may restart, :class:`NoProgressError` otherwise.

        progress: the newest step this attempt completed. step: the step it failed in (default
        ``progress + 1``). The first failure always allows a restart; after that, an attempt that
        did not complete a step beyond every earlier attempt's best counts as no progress, and the
        ``max_no_progress_restarts``-th such attempt in a row stops the job.
        """
        progress = check_int_non_negative("progress", progress)
        step = progress + 1 if step is None else check_int_non_negative("step", step)
        attempt = Attempt(progress, step, str(node), int(rank))
        self.attempts.append(attempt)
        if progress > self.best:
            self.best, self.no_progress = progress, 0
            return True
        self.no_progress += 1  # the restart that led to this attempt made no progress
        if self.no_progress < self.max_no_progress_restarts:
            return True
        stuck = tuple(self.attempts[-(self.no_progress + 1):])
        raise NoProgressError(self._message(stuck), stuck)

    def _message(self, stuck: tuple) -> str:
        where = Counter(a.where() for a in stuck)
        places = "; ".join(f"{w} x{n}" if n > 1 else w for w, n in where.most_common())
        return (
            f"stopped restarting: {self.no_progress} restarts in a row made no progress "
            f"(max_no_progress_restarts={self.max_no_progress_restarts}); the job failed at {places}, "
            f"never getting past step {self.best}. Remove or repair that node before restarting."
        )
