"""The question's own numbers, held once (every notebook starts from here).

*A 4,096-GPU training run loses about 2 % of every day to restarts (two a day, about
15 minutes each). Fix it, and say where the floor is.*

Notebook 00 explains these numbers and the baseline checkpoint interval. The 15 minutes
of a restart include the rewound work (on average half a checkpoint interval), so the
course assumes a 10-minute baseline interval: an hourly interval would rewind 30 minutes
on its own and could not fit in 15 (facts.md section 1, "Caution").
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ._validate import check_int_positive, check_positive

MINUTES_PER_DAY = 24 * 60


@dataclass(frozen=True)
class Scenario:
    """The course's running example (all times in minutes).

    Attributes
    ----------
    n_gpus: GPUs in the training job (the question: 4,096).
    restarts_per_day: unplanned restarts per day (the question: 2).
    minutes_per_restart: wall-clock minutes lost per restart, rewound work included (15).
    checkpoint_interval_min: the baseline checkpoint interval the course assumes (10 min,
        so the mean rewind is 5 min and fits inside the 15).
    """

    n_gpus: int = 4096
    restarts_per_day: float = 2.0
    minutes_per_restart: float = 15.0
    checkpoint_interval_min: float = 10.0

    def __post_init__(self):
        check_int_positive("n_gpus", self.n_gpus)
        check_positive("restarts_per_day", self.restarts_per_day)
        check_positive("minutes_per_restart", self.minutes_per_restart)
        check_positive("checkpoint_interval_min", self.checkpoint_interval_min)
        if self.checkpoint_interval_min / 2 > self.minutes_per_restart:
            raise ValueError(
                "checkpoint_interval_min must be <= 2 * minutes_per_restart "
                f"(mean rewind interval/2 = {self.checkpoint_interval_min / 2:g} min cannot exceed "
                f"the {self.minutes_per_restart:g} min a restart costs)"
            )

    # ----- derived numbers (computed, never typed) -----
    @property
    def minutes_lost_per_day(self) -> float:
        """restarts/day x minutes/restart."""
        return self.restarts_per_day * self.minutes_per_restart

    @property
    def loss_fraction(self) -> float:
        """Fraction of the day lost to restarts (the question's ~2 %)."""
        return self.minutes_lost_per_day / MINUTES_PER_DAY

    @property
    def fleet_mtbf_hours(self) -> float:
        """Mean time between failures of the whole job implied by restarts/day."""
        return 24.0 / self.restarts_per_day

    @property
    def rate_per_gpu_day(self) -> float:
        """Implied per-GPU failure rate: restarts/day / GPUs."""
        return self.restarts_per_day / self.n_gpus

    @property
    def mean_rewind_min(self) -> float:
        """Mean rewound work per failure: half the checkpoint interval."""
        return self.checkpoint_interval_min / 2.0

    def replace(self, **changes) -> "Scenario":
        """A copy with some fields changed; ``None`` values are ignored.

        Notebooks take papermill parameters that default to ``None`` ("keep the course's
        value"), so ``Scenario().replace(n_gpus=n_gpus)`` is the one line each needs.

        A new fleet size keeps the per-GPU failure rate: unless ``restarts_per_day`` is given
        too, it scales with ``n_gpus`` (16,384 GPUs at the question's rate restart 8 times a
        day). That is what "the same course for a bigger fleet" means, and it is how a
        change of fleet size flows through every notebook (``make course FLEET=...``).
        """
        changes = {k: v for k, v in changes.items() if v is not None}
        if "n_gpus" in changes and "restarts_per_day" not in changes:
            n = check_int_positive("n_gpus", changes["n_gpus"])
            changes["restarts_per_day"] = self.rate_per_gpu_day * n
        return dataclasses.replace(self, **changes)


BASELINE = Scenario()
