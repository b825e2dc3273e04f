"""The scheduler lab: a real Slurm cluster of network-namespace nodes on one machine, the course's training job
under ``sbatch --requeue``, one failure, and the requeue timed stage by stage from timestamps (the job's event
log and Slurm's own accounting). Results: ``benchmarks/results/slurmlab.md`` and ``data/slurm_requeue.csv``.

    from course_lib.slurmlab import run_failure, slurm_missing
    if slurm_missing() is None:                 # root, namespaces, Debian's Slurm packages (INSTALL)
        res = run_failure("node_kill", "tuned")  # about a minute; "default" takes about 8
        res.stages_s(), res.identical, res.sacct  # stages (s), bit-identical to an uninterrupted run, the export

:mod:`.cluster` brings the cluster up inside a :class:`~course_lib.labkit.Lab` (every daemon, namespace and
file goes with the lab's close); :mod:`.lab` runs a failure and reads its phases; :mod:`course_lib.requeue`
(the model's side) reads the committed runs (data/slurm_requeue.csv) and their medians.
"""
from .cluster import (DEFAULTS, INSTALL, PACKAGES, TUNED, SlurmCluster, SlurmSettings, SlurmUnavailable, slurm_missing,
                      slurm_version)
from ..requeue import Parts, Summary, read_runs, restart_parts, scheduler_share_s, summary
from .lab import (COLLECTIVE_TIMEOUT_S, DRAIN_MODES, EVENTS_COMMAND, EXPORTS, HEALTH_CHECK, HEALTH_CHECK_INTERVAL_S, MODES, NODE_MODES,
                  REQUEUED_MODES, PHASES, SACCT_FORMAT, SBATCH_SCRIPT, SETTINGS, SPARE_MODES, STAGES, FALSE_DOWN_MODES, PAUSE_S, SlurmLabResult, run_failure)

__all__ = ["COLLECTIVE_TIMEOUT_S", "DEFAULTS", "DRAIN_MODES", "HEALTH_CHECK", "HEALTH_CHECK_INTERVAL_S", "REQUEUED_MODES", "EVENTS_COMMAND", "EXPORTS", "INSTALL", "MODES", "PACKAGES", "PHASES", "SACCT_FORMAT", "SBATCH_SCRIPT", "SETTINGS",
           "SPARE_MODES", "STAGES", "FALSE_DOWN_MODES", "PAUSE_S", "TUNED", "Parts", "restart_parts", "NODE_MODES", "SlurmCluster", "SlurmLabResult", "SlurmSettings", "SlurmUnavailable", "Summary", "read_runs",
           "run_failure", "scheduler_share_s", "slurm_missing", "slurm_version", "summary"]
