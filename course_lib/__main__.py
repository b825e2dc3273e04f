"""The budget CLI: the course's whole answer for your fleet, from the shell.

    python -m course_lib budget                                   # the course's 4,096-GPU question
    python -m course_lib budget --gpus 4096 --failures-per-day 2 --detect 5 --reschedule 4 \\
        --reload 3 --interval 10 --write-cost 0.5 [--json]
    course-budget --gpus 16384 --rate 8.1e-4                      # the console script, same flags

It prints the decomposition of the daily loss by restart stage, the optimal checkpoint
interval before and after the in-memory snapshot, what each lever saves, the after-levers
loss and the floor lambda (D + R) as a table (or JSON with --json), all computed by
:func:`course_lib.answer.answer` (notebook 09 explains every line). A bad value (negative,
zero where zero means nothing, not a number) ends with a one-line error naming the flag and
exit status 2.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import sys

from ._validate import check_int_positive, check_non_negative, check_positive, check_unit_interval

__all__ = ["main", "build_parser"]


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


positive_int = _typed(check_int_positive, "int")
positive_float = _typed(check_positive, "float")
non_negative_float = _typed(check_non_negative, "float")
unit_float = _typed(check_unit_interval, "float")


class _OneLineParser(argparse.ArgumentParser):
    """Errors as one line (``course-budget: error: argument --gpus: ...``), exit status 2."""

    def error(self, message):  # noqa: D102
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser(prog: str = "course-budget") -> argparse.ArgumentParser:
    p = _OneLineParser(
        prog=prog,
        description="The daily restart budget of a training job, the levers, the after-levers loss and the floor. "
        "Every flag is optional; an omitted one keeps the course's 4,096-GPU value.",
    )
    p.add_argument("--gpus", type=positive_int, metavar="N", help="GPUs in the job (integer >= 1; course: 4096)")
    rate = p.add_mutually_exclusive_group()
    rate.add_argument("--rate", type=positive_float, metavar="PER_GPU_DAY",
                      help="failures per GPU-day (> 0; course: 2 / 4096)")
    rate.add_argument("--failures-per-day", type=positive_float, metavar="F",
                      help="failures per day of the whole job (> 0; course: 2); instead of --rate")
    p.add_argument("--detect", type=non_negative_float, metavar="MIN", help="minutes to detect a failure (>= 0; course: 5)")
    p.add_argument("--reschedule", type=non_negative_float, metavar="MIN",
                   help="minutes to tear down, replace the node and restart (>= 0; course: the rest of 15 min)")
    p.add_argument("--reload", type=non_negative_float, metavar="MIN", help="minutes to reload the checkpoint (>= 0; course: 2.16 min, i.e. 129.5 s)")
    p.add_argument("--interval", type=positive_float, metavar="MIN", help="current checkpoint interval in minutes (> 0; course: 10)")
    p.add_argument("--write-cost", type=positive_float, metavar="MIN",
                   help="blocking minutes per checkpoint of your current synchronous write (> 0; course: the shard at "
                   "the torch.save + fsync bandwidth)")
    p.add_argument("--state-gb", type=positive_float, metavar="GB",
                   help="checkpoint state per GPU in GB (> 0; course: 405B parameters x 12 B / GPUs)")
    modes = p.add_argument_group("failure modes, step and spares (the per-mode model of notebooks 03 and 08)")
    modes.add_argument("--hang-share", type=unit_float, metavar="SHARE",
                       help="share of failures that hang (0-1; the other modes rescaled; course: Llama 3 Table 5 mapped to modes, data/failure_modes.csv)")
    modes.add_argument("--hang-timeout", type=positive_float, metavar="MIN",
                       help="hang timeout in minutes (> the step time; course: safety factor x the longest gap)")
    modes.add_argument("--safety-factor", type=positive_float, metavar="X",
                       help="hang timeout / longest legitimate gap (>= 1; course: NVRx's 5)")
    modes.add_argument("--sdc-latency", type=non_negative_float, metavar="MIN",
                       help="minutes until silent data corruption is noticed (>= 0; course: 60, a judgement)")
    modes.add_argument("--tokens-per-step", type=positive_float, metavar="TOKENS",
                       help="tokens per training step (> 0; course: Llama 3's 16M)")
    modes.add_argument("--tflops-per-gpu", type=positive_float, metavar="TFLOPS",
                       help="achieved TFLOP/s per GPU (> 0; course: Llama 3 Table 4 at the nearest fleet size)")
    modes.add_argument("--no-peer-copy", action="store_true",
                       help="no peer holds the snapshot: a host loss reloads the older persisted checkpoint")
    modes.add_argument("--spare-gpus", type=non_negative_float, metavar="N", help="idle hot-spare GPUs (>= 0; course: one 8-GPU server)")
    modes.add_argument("--spares-pooled", action="store_true", help="the spares serve other jobs: charge them nothing")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    from .incidents.cli import add_log_arguments  # --log FILE: a fault log measured (notebook 13)

    add_log_arguments(p)
    return p


def mode_inputs_from_args(ns):
    """The per-mode inputs of a CLI call: the course's, with the flags given."""
    from . import modes as md

    base = md.ModeInputs()
    given = {"hang_timeout_min": ns.hang_timeout, "safety_factor": ns.safety_factor, "sdc_latency_min": ns.sdc_latency,
             "tokens_per_step": ns.tokens_per_step, "tflops_per_gpu": ns.tflops_per_gpu, "spare_gpus": ns.spare_gpus}
    changes = {k: v for k, v in given.items() if v is not None}
    if ns.hang_share is not None:
        changes["shares"] = tuple(float(x) for x in md.shares_with_hang(base.shares, ns.hang_share))
    if ns.no_peer_copy:
        changes["peer_copy"] = False
    if ns.spares_pooled:
        changes["spares_pooled"] = True
    return dataclasses.replace(base, **changes) if changes else base


#: Scenario input -> the flag that sets it (error messages name the flag a person typed).
FLAGS = {"n_gpus": "--gpus", "rate_per_gpu_day": "--rate", "failures_per_day": "--failures-per-day",
         "detect_min": "--detect", "reschedule_min": "--reschedule", "reload_min": "--reload",
         "checkpoint_interval_min": "--interval", "write_cost_min": "--write-cost", "state_gb_per_gpu": "--state-gb",
         "hang_timeout_min": "--hang-timeout", "safety_factor": "--safety-factor", "sdc_latency_min": "--sdc-latency",
         "tokens_per_step": "--tokens-per-step", "tflops_per_gpu": "--tflops-per-gpu", "spare_gpus": "--spare-gpus",
         "shares": "--hang-share",
         "minutes_per_restart": "--detect/--reload/--interval (the stages must fit in the 15 minutes a restart costs; "
                                "or give --reschedule)"}


def scenario_from_args(ns):
    """The one Scenario of a CLI call: the course's, with the flags given (``None``: keep)."""
    from .scenario import Scenario

    return Scenario.from_params(
        n_gpus=ns.gpus, rate_per_gpu_day=ns.rate, failures_per_day=ns.failures_per_day,
        detect_min=ns.detect, reschedule_min=ns.reschedule, reload_min=ns.reload,
        checkpoint_interval_min=ns.interval, write_cost_min=ns.write_cost, state_gb_per_gpu=ns.state_gb,
    )


def _flag_message(exc: ValueError) -> str:
    text = str(exc)
    for name, flag in FLAGS.items():
        if text.startswith(name + " "):
            return f"argument {flag}: {text}"
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

    if getattr(ns, "log", None) is not None:  # a fault log: course_lib.incidents.cli (notebook 13)
        from .incidents.cli import run_log

        return run_log(ns, prog, scenario_from_args, mode_inputs_from_args)

    from .answer import answer

    try:
        result = answer(scenario_from_args(ns), modes=mode_inputs_from_args(ns))
    except ValueError as exc:
        print(f"{prog}: error: {_flag_message(exc)}", file=sys.stderr)
        return 2
    if ns.json:
        print(result.to_json())
    else:
        print(result.table())
        print()
        print(result.text)
    return 0


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
