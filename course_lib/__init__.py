"""course_lib: the tested engine behind the course "Restarts at scale".

The course answers: *a 4,096-GPU training run loses about 2 % of every day to restarts
(two a day, about 15 minutes each); fix it, and say where the floor is.* Each module holds
one idea and names the notebook that explains it. The maths modules (failures, restart,
interval, simulate) import neither matplotlib nor ipywidgets, and only checkpoint and
faultlab import torch.
"""
from .scenario import MINUTES_PER_DAY, Scenario

__all__ = ["Scenario", "MINUTES_PER_DAY"]
__version__ = "0.1.0"
