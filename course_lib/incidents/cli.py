"""``course-budget --log FILE``: a fault log measured, and the course's answer for that fleet (notebook 13).

    course-budget --log data/infinitehbd_fault_trace.json --format infinitehbd --nodes 400
    course-budget --log sacct.txt --format sacct --nodes 512 --gpus-per-node 8 --gpus 4096 --tz Europe/Berlin --json
    course-budget --log sacct.txt --format sacct --events events.txt --nodes 4 --gpus-per-node 1 --gpus 4
    course-budget --log events.txt --format slurm-events --nodes 512

The budget CLI (:mod:`course_lib.__main__`) adds these flags to its parser
(:func:`add_log_arguments`) and hands a call with ``--log`` to :func:`run_log`: the log is read
(:func:`course_lib.incidents.read_log`), every test of the model is run on it and the levers and
the floor are computed for the fleet and for a job of ``--gpus`` GPUs (default the course's 4,096)
at the log's rate (:func:`course_lib.incidents.answer_for_log`); the other flags of the CLI (the
restart stages, the write cost, the failure modes) still apply. A malformed row ends with a
one-line error naming the file, the line and the field, exit status 2; so does a file that is not
a text export (binary, compressed), and a log with nothing to rate says to give ``--window``.

Slurm (notebook 15): ``--format sacct`` reads the job's accounting (its interruptions give the rate,
its requeue chains the measured reschedule with its spread); ``--events FILE`` adds the node events
(``sacctmgr show event --parsable2``, on the sacct log's clock) for the per-node analyses, which a
job-level sacct log cannot give (they are then printed as not available, with the reason);
``--format slurm-events`` reads the node events alone.
"""
from __future__ import annotations

import argparse
import sys

__all__ = ["CLI_FORMATS", "add_log_arguments", "run_log"]

#: The formats the CLI reads (the labs' event logs are read in notebook 13, not budgeted: they are a toy job's).
CLI_FORMATS = ("infinitehbd", "sacct", "slurm-events", "csv")


def _positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer (got {text!r})") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1 (got {text!r})")
    return v


def add_log_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``--log`` flags, as a group of the budget CLI's parser."""
    g = parser.add_argument_group("a fault log (notebook 13): measure it, then answer for that fleet at its rate")
    g.add_argument("--log", metavar="FILE", help="a fault log to read instead of --rate: its interruption rate, dispersion, "
                   "worst nodes, out-of-sample lemon factor, bursts, repair times and the floor at its rate")
    g.add_argument("--format", choices=CLI_FORMATS, help="the log's format (with --log): the InfiniteHBD JSON, a Slurm "
                   "sacct --parsable2 export (sacct --duplicates --format JobID,State,Start,End,NodeList,ExitCode), "
                   "Slurm's node events (sacctmgr show event --parsable2 format=Cluster,NodeName,Start,End,State,Reason,User), "
                   "or the course's CSV schema")
    g.add_argument("--events", metavar="FILE", help="with --format sacct: the node events of the same cluster (sacctmgr "
                   "show event --parsable2 All_Time Event=Node): the per-node analyses (lemons, worst nodes, dispersion, "
                   "repair times) from them, the rate from the job's interruptions")
    g.add_argument("--nodes", type=_positive_int, metavar="N", help="nodes in the fleet the log covers, those without "
                   "a fault included (with --log; the trace lists only the nodes that failed)")
    g.add_argument("--gpus-per-node", type=_positive_int, metavar="G", help="GPUs per node (with --log; default 8)")
    g.add_argument("--tz", metavar="ZONE", help="time zone of the log's naive times (sacct, csv; an IANA name; default UTC)")
    g.add_argument("--window", type=float, nargs=2, metavar=("FIRST_DAY", "LAST_DAY"),
                   help="the days the log observed (default: day 0 to its last event)")
    g.add_argument("--bad-rows", choices=("raise", "reject"), help="a malformed row: stop with an error naming it "
                   "(raise, the default) or reject it and count it in the report (reject)")


def run_log(ns, prog: str, scenario_from_args) -> int:
    """The ``--log`` path of the CLI: read, measure, answer; print a table and the report (or JSON)."""
    from . import Fleet, LogFormatError, answer_for_log, read_log
    from .readers import EmptyLogError

    def fail(msg: str) -> int:
        print(f"{prog}: error: {msg}", file=sys.stderr)
        return 2

    if ns.format is None:
        return fail(f"argument --format: required with --log (one of {', '.join(CLI_FORMATS)})")
    if ns.nodes is None:
        return fail("argument --nodes: required with --log: the nodes of the fleet the log covers, those without a fault "
                    "included (a log lists only the nodes that failed)")
    if any(getattr(ns, k, None) is not None for k in ("rate_per_gpu_day", "failures_per_day", "observed_failures")):
        return fail("argument --rate-per-gpu-day/--failures-per-day/--observed-failures: not with --log (the log gives the rate)")
    options = {}
    if ns.bad_rows:
        options["errors"] = ns.bad_rows
    if ns.window:
        options["window"] = tuple(ns.window)
    if ns.tz:
        if ns.format == "infinitehbd":
            return fail("argument --tz: the InfiniteHBD trace has no clock times (its times are days)")
        options["tz"] = ns.tz
    if getattr(ns, "events", None) is not None and ns.format != "sacct":
        return fail("argument --events: only with --format sacct (the node events beside the job's accounting)")

    def read(flag, path, fmt, **opts):
        try:
            return read_log(path, fmt, **opts), None
        except FileNotFoundError:
            return None, fail(f"argument {flag}: no such file {path!r}")
        except EmptyLogError as exc:
            return None, fail(f"argument {flag}: {exc.cli_message()}")
        except LogFormatError as exc:
            if exc.field == "(encoding)":  # a binary or compressed file: its path, and why it cannot be read
                return None, fail(f"argument {flag}: {path}, line {exc.line}: {str(exc).split(': ', 1)[1]}")
            return None, fail(f"argument {flag}: {exc}")
        except ValueError as exc:
            return None, fail(f"argument {flag}: {exc}")

    log, code = read("--log", ns.log, ns.format, **options)
    if log is None:
        return code
    events = None
    if getattr(ns, "events", None) is not None:  # on the sacct log's clock: one day 0 for both
        events, code = read("--events", ns.events, "slurm-events", **options, **({"origin": log.origin} if log.origin else {}))
        if events is None:
            return code
    try:
        fleet = Fleet(ns.nodes, ns.gpus_per_node or 8)
        base = scenario_from_args(ns)  # the CLI's other inputs, its mode inputs included (Scenario.modes)
        result = answer_for_log(log, fleet, ns.n_gpus, base=base, node_events=events)
    except ValueError as exc:
        return fail(str(exc))
    if ns.json:
        print(result.to_json())
        return 0
    print(result.table())
    print()
    print(f"the log: {log.source} ({ns.format})")
    print("\n".join(log.report.lines()))
    if events is not None:
        print(f"the node events: {events.source} (slurm-events, on the log's clock)")
        print("\n".join(events.report.lines()))
    by_reason: dict = {}  # one line per reason: a job-level log's per-node analyses share theirs
    for name, why in result.analysis.skipped.items():
        by_reason.setdefault(why, []).append(name)
    for why, names in by_reason.items():
        print(f"  not measured: {', '.join(names)}: {why}")
    print()
    print(result.text)
    return 0
