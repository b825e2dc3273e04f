"""What one SDC-lab run does: the data-parallel job, the bit flips to inject, the detectors and the
recovery (notebook 14). Plain data, no torch: :func:`course_lib.sdclab.run_sdclab` writes the config as
JSON beside the run and the training script (:mod:`course_lib.sdclab.job`) reads it back.

Steps are numbered 1..``steps``. A flip (:class:`Flip`) strikes one physical rank at its step:

``param``
    after that rank's optimizer update, bit ``bit`` of element ``element`` of its flattened parameters
    flips (a memory error): that replica now differs from the others.
``grad``
    that rank's local gradient, before the all-reduce (a compute error): the average carries it to every
    replica, which stay identical to each other and all wrong. ``persistent``: the rank's unit keeps
    miscomputing, every gradient it computes from that step on (its replays too), until it is excluded.
``loss``
    the loss that rank computed and reports (a corrupted reduction): the gradients are untouched.

Validation names the field and its range: the bit within the dtype (float32: 0..31), the step within
the run, the rank within the world, the element within the parameters (or 0 for the loss).
"""
from __future__ import annotations

from dataclasses import dataclass

from .._validate import Validated, check_choice, check_int_non_negative, check_int_positive, check_non_negative, check_positive, checked
from ..labkit.config import LabConfigBase, at_least, one_of, records
from .bits import check_bit, check_element
from .detectors import DETECTORS, unavailable

__all__ = ["TARGETS", "DTYPES", "Flip", "SdcLabConfig", "param_count"]

TARGETS = ("param", "grad", "loss")
DTYPES = ("float32", "float64")


def param_count(features: int, hidden: int) -> int:
    """Parameters of the lab kit's toy MLP (Linear(features, hidden), ReLU, Dropout, Linear(hidden, 1))."""
    return features * hidden + hidden + hidden + 1


@dataclass(frozen=True)
class Flip(Validated):
    """One bit flip: ``target`` (param, grad, loss) on physical ``rank`` at ``step``, bit ``bit`` of element
    ``element``; ``persistent`` (grad only): every later gradient of that rank too."""

    target: str = checked(lambda name, value: check_choice(name, value, TARGETS))
    step: int = checked(check_int_positive)
    rank: int = checked(check_int_non_negative, default=0)
    bit: int = checked(check_int_non_negative, default=30)
    element: int = checked(check_int_non_negative, default=0)
    persistent: bool = False

    def _validate_fields(self):
        if self.persistent and self.target != "grad":
            raise ValueError(f"persistent applies to target 'grad' only (a compute unit that keeps miscomputing; got target {self.target!r})")
        if self.target == "loss" and self.element != 0:
            raise ValueError(f"element must be 0 for target 'loss' (the loss is one number; got {self.element!r})")


def _detectors(name, value):
    if isinstance(value, str) or not hasattr(value, "__iter__"):
        raise ValueError(f"{name} must be a sequence of detector names from {list(DETECTORS)} (got {value!r})")
    out = tuple(value)
    for i, d in enumerate(out):
        if d not in DETECTORS:
            raise ValueError(f"{name}[{i}] must be one of {list(DETECTORS)} (got {d!r})")
    if len(set(out)) != len(out):
        raise ValueError(f"{name} must not repeat a detector (got {value!r})")
    return out


def _factor(name, value):
    x = check_positive(name, value)
    if x <= 1:
        raise ValueError(f"{name} must be a finite number > 1 (got {value!r}): a threshold at the running estimate flags every other step")
    return x


@dataclass(frozen=True)
class SdcLabConfig(LabConfigBase):
    """Settings of one SDC-lab run.

    replicas: data-parallel ranks (one process each, under torchrun).
    steps: optimizer steps of the run.
    snapshot_every, keep: an in-memory snapshot every ``snapshot_every`` steps (and of step 0), the
        ``keep`` newest kept.
    detectors: the detectors that run (:data:`~course_lib.sdclab.detectors.DETECTORS`).
    replay_every: the replay detector recomputes every replica's gradient on another every this many steps.
    loss_factor, grad_norm_factor, warmup: the running checks' thresholds (x the running estimate) and
        the steps they observe before checking the ratio.
    recover: True: the first alarm rewinds to a snapshot, excludes the suspect (its data goes to a healthy
        replica) and the run goes on; False: the detectors only watch (every alarm is logged, nothing
        is done): the measurement of which detector sees what, how late.
    max_recoveries: recoveries before the run gives up (a fault that comes back with no suspect to exclude).
    flips: the bit flips, in strictly increasing step order.
    dtype: the parameters' float format. step_compute_s: simulated compute per step (a sleep).
    cost_probe: after the run, time the fingerprint and its all-gather alone this many times (after a
        barrier each, so no rank waits on a slower one's step): the benchmark's cost per step.
    seed, batch, features, hidden: the lab kit's toy problem (:mod:`course_lib.labkit.toy`).
    """

    replicas: int = checked(at_least(1), default=3)
    steps: int = checked(check_int_positive, default=16)
    snapshot_every: int = checked(check_int_positive, default=2)
    keep: int = checked(at_least(1), default=3)
    detectors: tuple = checked(_detectors, default=DETECTORS)
    replay_every: int = checked(check_int_positive, default=4)
    loss_factor: float = checked(_factor, default=10.0)
    grad_norm_factor: float = checked(_factor, default=10.0)
    warmup: int = checked(check_int_non_negative, default=3)
    recover: bool = True
    max_recoveries: int = checked(check_int_positive, default=4)
    flips: tuple = checked(records(Flip), default=())
    dtype: str = checked(one_of(DTYPES), default="float32")
    step_compute_s: float = checked(check_non_negative, default=0.0)
    cost_probe: int = checked(check_int_non_negative, default=0)
    seed: int = checked(check_int_non_negative, default=0)
    batch: int = checked(check_int_positive, default=32)
    features: int = checked(check_int_positive, default=16)
    hidden: int = checked(check_int_positive, default=32)

    def _validate_fields(self):
        n = self.params
        last = 0
        for i, f in enumerate(self.flips):
            where = f"flips[{i}]"
            if f.rank >= self.replicas:
                raise ValueError(f"{where}.rank must be an integer in [0, {self.replicas - 1}] (the world's ranks; got {f.rank})")
            if f.step > self.steps:
                raise ValueError(f"{where}.step must be an integer in [1, steps={self.steps}] (got {f.step})")
            if f.step <= last:
                raise ValueError(f"{where}.step must be > {last} (flips in strictly increasing step order; got {f.step})")
            last = f.step
            check_bit(f"{where}.bit", f.bit, self.dtype)
            if f.target != "loss":
                check_element(f"{where}.element", f.element, n, f"the model's {n} parameters")

    @property
    def params(self) -> int:
        """Parameters of the model (every replica holds them all)."""
        return param_count(self.features, self.hidden)

    def unavailable(self) -> dict:
        """{detector: why it cannot run} for this run's detectors at this world size (empty when all can)."""
        return {d: why for d in self.detectors if (why := unavailable(d, self.replicas))}
