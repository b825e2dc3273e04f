"""Don't restart the world: per-step fault tolerance with torchft, measured (notebook 10).

Notebook 07's toy job trained by replica groups with torchft (:mod:`.job`), each group under
its own torchrun, a lighthouse on 127.0.0.1 (:mod:`.lab`: :func:`run_ftlab`); one failure
strikes one group, the others keep stepping, the failed group rejoins with weights from a
healthy peer (:mod:`.events`: :class:`Recovery`); a hang is caught by a learned timeout,
``safety_factor x`` the longest step seen (:mod:`.hang`). :mod:`.results` reads the committed
comparison with notebook 07's tuned whole-job restart and its sweep over the number of groups. Only :mod:`.job` imports torch.
"""
from .events import BADPUT_BUCKETS, Recovery, badput_buckets, recoveries, restart_badput
from .hang import LearnedHangDetector, start_watchdog
from .lab import FtResult, load_finals, port_is_open, run_ftlab
from .results import Comparison, GroupSweep, load_comparison, load_group_sweep, ratio_with_groups
from .spec import FT_FAILURE_KINDS, FtConfig, FtFailure

__all__ = ["BADPUT_BUCKETS", "FT_FAILURE_KINDS", "FtConfig", "FtFailure", "FtResult", "LearnedHangDetector", "Recovery",
           "Comparison", "GroupSweep", "badput_buckets", "load_comparison", "load_group_sweep", "load_finals", "ratio_with_groups", "port_is_open", "recoveries", "restart_badput", "run_ftlab",
           "start_watchdog"]
