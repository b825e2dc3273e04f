"""SDC lab: silent data corruption injected as real bit flips into a data-parallel job, caught by cheap
detectors within steps, and recovered bit-identical (notebook 14).

Modules: :mod:`.bits` (float layouts, :func:`flip_bit` through an integer view), :mod:`.fingerprint`
(the 64-bit parameter fingerprint), :mod:`.detectors` (the four detectors, rewind and exclusion; plain
Python), :mod:`.spec` (:class:`SdcLabConfig`, :class:`Flip`), :mod:`.job` (the training script torchrun
starts), :mod:`.lab` (:func:`run_sdclab`, :class:`SdcResult`), :mod:`.results` (the committed benchmark
and the floor's SDC term at the measured latencies). How a run starts, is watched and torn down is the lab
kit's (:mod:`course_lib.labkit`). Nothing here imports torch at import time.
"""
from ..labkit import LabError
from .bits import BIT_NAMES, bit_class, named_bit
from .detectors import DETECTORS, Alarm
from .lab import SdcResult, run_sdclab, run_sdclab_trials
from .spec import TARGETS, Flip, SdcLabConfig

__all__ = ["BIT_NAMES", "DETECTORS", "TARGETS", "Alarm", "Flip", "LabError", "SdcLabConfig", "SdcResult", "bit_class",
           "named_bit", "run_sdclab", "run_sdclab_trials"]
