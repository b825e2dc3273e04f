"""Your incident log: a real fault log in; its rates, lemon nodes, bursts and repair times out (notebook 13).

One idea per module:

- :mod:`~course_lib.incidents.schema`: the log's schema (:class:`IncidentLog`, one row per interruption or
  node fault, with optional restart-stage timestamps) and the handling of bad input (:class:`ReadReport`);
- :mod:`~course_lib.incidents.readers`: the InfiniteHBD JSON, Slurm ``sacct --parsable2``, the schema's CSV,
  and the labs' JSON-lines event logs;
- :mod:`~course_lib.incidents.policy`: which classes interrupt a job, and their failure modes (a mapping);
- :mod:`~course_lib.incidents.analysis`: the rate, the dispersion test, the gamma-Poisson fit, the worst
  nodes, lemon removal out of sample, bursts, monthly rates, repair times, spare pools;
- :mod:`~course_lib.incidents.synthetic`: logs with a known truth;
- :mod:`~course_lib.incidents.report`: the whole analysis and the course's answer for the log's fleet;
- :mod:`~course_lib.incidents.trace`: the vendored InfiniteHBD trace, and the measured numbers other
  modules take from it (:func:`trace_lemon_removal`, :func:`trace_repeat_fault_share`, :func:`trace_spare_pool`);
- :mod:`~course_lib.incidents.cli`: ``course-budget --log FILE``.

numpy and scipy only: no plotting (figures: :mod:`course_lib.plots.incidents`), no torch.
"""
from .analysis import Fleet
from .readers import FORMATS, EmptyLogError, read_csv, read_infinitehbd, read_lab_events, read_log, read_sacct, read_slurm_events
from .report import LogAnalysis, LogAnswer, Reschedule, analyse, answer_for_log, node_attribution, reschedule_times, scenario_for_log
from .schema import STAGES, IncidentLog, LogFormatError, ReadReport, stage_seconds, write_csv
from .synthetic import synthetic_log
from .trace import lab_example, load_trace, trace_path, trace_fleet, trace_interruptions, trace_lemon_removal, trace_repeat_fault_share, trace_spare_pool

__all__ = ["Fleet", "FORMATS", "read_log", "read_infinitehbd", "read_sacct", "read_slurm_events", "read_csv", "read_lab_events", "EmptyLogError",
           "Reschedule", "reschedule_times", "node_attribution", "LogAnalysis",
           "LogAnswer", "analyse", "answer_for_log", "scenario_for_log", "STAGES", "IncidentLog", "LogFormatError",
           "ReadReport", "stage_seconds", "write_csv", "synthetic_log", "lab_example", "trace_path", "load_trace", "trace_fleet", "trace_interruptions",
           "trace_lemon_removal", "trace_repeat_fault_share", "trace_spare_pool"]
