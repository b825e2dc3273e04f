"""course_lib: the tested engine behind the course "Restarts at scale".

The course answers: *a 4,096-GPU training run loses about 2 % of every day to restarts (two a day,
about 15 minutes each); fix it, and say where the floor is.* Each module holds one idea and names the
notebook that explains it. The map (course_lib/README.md has it with one line per module):

- **input**: ``scenario`` (the one record, :class:`Scenario`, with its nested ``ModeInputs`` and
  ``ReplicaInputs``; sourced defaults read once), ``data`` (checksum-verified data/ tables), ``units`` and
  ``prose`` (numbers at the edges: units, and printed sums that add up).
- **model**: ``failures`` (rates, MTBF, Poisson intervals, Weibull, the rate factors: Table 5's shares and the
  measured lemon-node removal), ``interval`` (Young, Daly, the one
  bounded optimum), ``step``, ``sizing``, ``restart`` (one restart and the one day model),
  ``levers`` (stage and rate levers, the waterfall), ``floor`` (the floor's terms, per mode and per
  replica group), ``modes`` (hang timeouts, false kills), ``replicas`` (per-step fault tolerance entry
  points), ``uncertainty`` (the same model on arrays of draws), ``projection`` (ETTR at scale, Kokolis
  et al.'s formula shown as theirs), ``simulate`` (Monte Carlo checks), ``spares``.
- **faces**: ``answer`` (the whole answer: the 2-minute spoken one and the written one), ``drill`` (the follow-ups), ``ledger``, ``__main__`` (the budget CLI), ``plots``,
  ``widgets``, ``notebook``, ``incidents`` (a real fault log in: its rate and the answer at it).
- **grader**: ``check`` (the exercises' self-checks).
- **checkpoint library**: ``checkpoint`` (torch).
- **labs**: ``labkit`` (one lab run's processes, events and clean-up), ``faultlab``, ``ftlab``, ``nodelab`` (torch,
  torchrun, torchft, namespaces).

Imports go one way: input <- model <- faces <- grader; the labs use the input and the model, never
the faces. The Scenario resolves its derived inputs with model functions (shard, step, rates), and no
module imports back into one that imports it. The model wing imports neither matplotlib nor ipywidgets nor torch
(tests/test_architecture.py enforces the direction and the absence of cycles for every module of the package).
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
