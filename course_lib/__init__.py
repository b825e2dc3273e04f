"""course_lib: the tested engine behind the course "Restarts at scale".

The course answers: *a 4,096-GPU training run loses about 2 % of every day to restarts
(two a day, about 15 minutes each); fix it, and say where the floor is.* Each module holds
one idea and names the notebook that explains it. The maths modules (failures, restart,
interval, simulate) import neither matplotlib nor ipywidgets, and only checkpoint and
faultlab import torch.
"""
__all__ = ["Scenario", "MINUTES_PER_DAY"]
__version__ = "0.1.0"


def __getattr__(name):
    # Loaded on first use, not at ``import course_lib``: the lab's worker processes import
    # course_lib.checkpoint / course_lib.faultlab on every restart and need neither the scenario
    # nor the scipy it pulls in (seconds of start-up per worker on a busy machine).
    if name in __all__:
        from . import scenario

        value = getattr(scenario, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
