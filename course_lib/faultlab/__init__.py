"""Fault-injection lab: a tiny training job under torchrun, killed and hung on purpose, its
restarts measured stage by stage from its own event log (notebook 07).

Modules: :mod:`.spec` (what a run does: :class:`LabConfig`, :class:`Failure`),
:mod:`.job` (the training script torchrun starts), :mod:`.launch` (torchrun with agent
events), :mod:`.events` (the four stages read from the event log), :mod:`.lab` (:func:`run_lab`),
:mod:`.results` (the committed restart benchmark, :func:`load_benchmark`), :mod:`.reference` (the
uninterrupted run computed in this process, :func:`reference_run`, bit for bit a real one's end).
Only :mod:`.job` imports torch at import time. How a run starts, is watched and is torn down is
the lab kit's (:mod:`course_lib.labkit`).
"""
from ..labkit import LabError, read_events
from .events import STAGE_NAMES, MeasuredRestart, restart_stages, to_restart_stages
from .lab import RestartResult, load_final, run_lab, same_final_state
from .reference import reference_run, reference_state
from .results import BenchmarkSummary, load_benchmark
from .spec import FAILURE_KINDS, SNAPSHOTS, Failure, LabConfig

__all__ = [
    "FAILURE_KINDS",
    "SNAPSHOTS",
    "STAGE_NAMES",
    "Failure",
    "LabConfig",
    "LabError",
    "RestartResult",
    "BenchmarkSummary",
    "load_benchmark",
    "MeasuredRestart",
    "load_final",
    "read_events",
    "reference_run",
    "reference_state",
    "restart_stages",
    "run_lab",
    "same_final_state",
    "to_restart_stages",
]
