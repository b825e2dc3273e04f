"""The budget CLI: the course's whole answer for your fleet, from the shell.

    python -m course_lib budget                                   # the course's 4,096-GPU question
    python -m course_lib budget --gpus 4096 --failures-per-day 2 --detect 5 --reschedule 4 \\
        --reload 3 --interval 10 --write-cost 0.5 [--json]
    course-budget --gpus 16384 --rate 8.1e-4                      # the console script, same flags

Every input of the :class:`~course_lib.scenario.Scenario` is a flag, generated from its one
vocabulary (:data:`course_lib.scenario.PARAMETERS`): ``--n-gpus``, ``--sdc-latency-min``,
``--hang-share``, ``--peer-copy/--no-peer-copy``..., each in the input's own unit (minutes for
``*_min``), with the short names of before as aliases (``--gpus``, ``--rate``, ``--detect``,
``--reschedule``, ``--reload``, ``--interval``, ``--write-cost``, ``--state-gb``, ``--hang-timeout``,
``--safety-factor``, ``--sdc-latency``). It prints the 2-minute answer first (what a candidate says), then the answer
table and the written answer (or JSON with --json), all computed by :func:`course_lib.answer.answer` (notebook 09 explains every line). A
bad value ends with a one-line error naming the flag and exit status 2; an extreme value that pushes
a number to its limit gets one plain sentence, never a Python warning.
"""
from __future__ import annotations

import argparse
import os
import sys
import warnings

from ._validate import check_int_positive, check_non_negative, check_positive, check_unit_interval

__all__ = ["main", "build_parser", "FLAGS", "ALIASES", "scenario_from_args"]

#: The short flags of before, kept as aliases of the generated ones.
ALIASES = {"n_gpus": ["--gpus"], "rate_per_gpu_day": ["--rate"], "detect_min": ["--detect"],
           "reschedule_min": ["--reschedule"], "reload_min": ["--reload"], "checkpoint_interval_min": ["--interval"],
           "write_cost_min": ["--write-cost"], "shard_gb": ["--state-gb"], "hang_timeout_min": ["--hang-timeout"],
           "sdc_latency_min": ["--sdc-latency"]}

#: Inputs whose None means "computed" but which must be > 0 when given.
_POSITIVE = {"rate_per_gpu_day", "failures_per_day", "observed_days", "minutes_per_restart", "checkpoint_interval_min",
             "model_params", "checkpoint_bytes_per_param", "shard_gb", "persist_gb_per_s", "write_cost_min",
             "snapshot_gb_per_s", "restore_gb_per_s", "snapshot_cost_min", "launcher_poll_min", "rank_monitor_poll_min",
             "safety_factor", "hang_timeout_min", "untuned_hang_timeout_min", "health_check_min", "host_heartbeat_min",
             "tokens_per_step", "tflops_per_gpu", "replica_gpus", "lemon_factor"}
_INTS = {"n_gpus", "groups", "observed_failures"}
_BOOLS = {"peer_copy", "spares_pooled"}


def flag(name: str) -> str:
    """The generated flag of an input: ``--`` and its name with dashes."""
    return "--" + name.replace("_", "-")


def _typed(check, kind: str):
    """An argparse type from a course_lib validator; its message names the allowed range."""

    def convert(text: str):
        try:
            value = int(text) if kind == "int" else float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {'an integer' if kind == 'int' else 'a number'} (got {text!r})") from None
        try:
            return check("value", value)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc).replace("value ", "", 1)) from None

    convert.__name__ = kind  # argparse names the type in its messages
    return convert


def _shares(text: str):
    try:
        values = tuple(float(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be four numbers separated by commas (crash,hang,host_loss,sdc; got {text!r})") from None
    if len(values) != 4:
        raise argparse.ArgumentTypeError(f"must be four numbers separated by commas (crash,hang,host_loss,sdc; got {text!r})")
    return values


positive_int = _typed(check_int_positive, "int")
positive_float = _typed(check_positive, "float")
non_negative_float = _typed(check_non_negative, "float")
unit_float = _typed(check_unit_interval, "float")


class _OneLineParser(argparse.ArgumentParser):
    """Errors as one line (``course-budget: error: argument --gpus: ...``), exit status 2."""

    def error(self, message):  # noqa: D102
        self.exit(2, f"{self.prog}: error: {message}\n")


def _type_for(name: str):
    if name == "shares":
        return _shares
    if name in _INTS:
        return positive_int
    if name == "hang_share":
        return unit_float
    return positive_float if name in _POSITIVE else non_negative_float


def build_parser(prog: str = "course-budget") -> argparse.ArgumentParser:
    """The CLI's parser: one flag per name of :data:`course_lib.scenario.PARAMETERS` (and its aliases)."""
    from .scenario import PARAMETER_NOTES

    p = _OneLineParser(
        prog=prog,
        description="The daily restart budget of a training job, the levers, the after-levers loss and the floor. "
        "Every flag is optional; an omitted one keeps the course's 4,096-GPU value. Times are in minutes.",
    )
    rate = p.add_mutually_exclusive_group()
    for name, note in PARAMETER_NOTES.items():
        target = rate if name in ("rate_per_gpu_day", "failures_per_day") else p
        names = [flag(name)] + ALIASES.get(name, [])
        if name in _BOOLS:
            target.add_argument(*names, dest=name, action=argparse.BooleanOptionalAction, default=None, help=note)
        else:
            target.add_argument(*names, dest=name, type=_type_for(name), default=None, metavar=name.upper(), help=note)
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    from .incidents.cli import add_log_arguments  # --log FILE: a fault log measured (notebook 13)

    add_log_arguments(p)
    return p


#: Scenario input -> the flag a person typed (error messages name it).
FLAGS = {}


def _flags() -> dict:
    from .scenario import PARAMETERS

    if not FLAGS:
        for name in PARAMETERS:
            FLAGS[name] = "/".join([flag(name)] + ALIASES.get(name, []))
        FLAGS["shares"] = "--shares/--hang-share"
        FLAGS["minutes_per_restart"] = ("--minutes-per-restart (the stages must fit in the minutes a restart costs: "
                                        "shorten --interval or give --reschedule)")
    return FLAGS


def scenario_from_args(ns):
    """The one Scenario of a CLI call: the course's, with the flags given (``None``: keep)."""
    from .scenario import PARAMETERS, Scenario

    return Scenario.from_params(**{name: getattr(ns, name) for name in PARAMETERS})


def _flag_message(exc: ValueError) -> str:
    text = str(exc)
    flags = _flags()
    for name in sorted(flags, key=len, reverse=True):
        if text.startswith(name + " ") or text.startswith(name + "[") or text.startswith(name + ":"):
            return f"argument {flags[name]}: {text}"
    return text


def main(argv=None) -> int:
    """Entry point of ``python -m course_lib budget`` and the ``course-budget`` script."""
    args = list(sys.argv[1:] if argv is None else argv)
    prog = "python -m course_lib" if __name__ == "__main__" else "course-budget"  # the name a person typed
    if args and args[0] == "budget":
        args, prog = args[1:], f"{prog} budget"
    elif args and not args[0].startswith("-"):
        print(f"{prog}: error: unknown command {args[0]!r} (the command is 'budget')", file=sys.stderr)
        return 2
    parser = build_parser(prog)
    try:
        ns = parser.parse_args(args)
    except SystemExit as exc:  # argparse: --help (0) or a bad value (2)
        return int(exc.code or 0)

    import numpy as np

    from .answer import answer

    with warnings.catch_warnings(record=True) as caught, np.errstate(all="ignore"):
        warnings.simplefilter("always")
        if getattr(ns, "log", None) is not None:  # a fault log: course_lib.incidents.cli (notebook 13)
            from .incidents.cli import run_log

            code = run_log(ns, prog, scenario_from_args)
        else:
            try:
                result = answer(scenario_from_args(ns))
                out = (result.to_json() if ns.json else
                       "\n\n".join((result.spoken, result.table(), "The written answer: " + result.written)))
            except ValueError as exc:
                print(f"{prog}: error: {_flag_message(exc)}", file=sys.stderr)
                return 2
            print(out)
            code = 0
    if caught:
        print(f"{prog}: note: an input is extreme enough that some numbers sit at their limits (0 % or 100 % of the day).",
              file=sys.stderr)
    return code


def cli() -> int:
    """:func:`main` for a shell: output piped into ``head`` (which closes the pipe early) ends quietly."""
    try:
        code = main()
        sys.stdout.flush()
    except BrokenPipeError:
        # the reader left: send what is still buffered to /dev/null so the interpreter's own
        # flush at exit raises nothing either (Python docs, "Note on SIGPIPE")
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, what a shell reports for a program stopped by a closed pipe
    return code


if __name__ == "__main__":
    sys.exit(cli())
