#!/usr/bin/env python
"""Benchmark: the reschedule on a real Slurm cluster, at Slurm's defaults and tuned (issue 38's lab).

    sudo .venv/bin/python benchmarks/slurmlab_bench.py --repeat 3      # every mode x setting, 3 runs each (~100 min)
    sudo .venv/bin/python benchmarks/slurmlab_bench.py --setting tuned # the tuned runs only, once (~2 min)
    sudo .venv/bin/python benchmarks/slurmlab_bench.py --mode health_check --repeat 3   # one mode's rows only

Needs root, network namespaces and Debian's Slurm packages (``course_lib.slurmlab.INSTALL``). Each run
brings up a fresh cluster (munge, MariaDB, slurmdbd, slurmctld, three slurmd nodes in namespaces),
submits the user's batch script ``benchmarks/slurm/train.sbatch`` (``sbatch --requeue``, srun starting
torchrun on both nodes of the allocation) and injects one failure at step 6 of 12 (checkpoint every 4):

* ``worker_crash``: rank 1's worker SIGKILLed; torchrun restarts the workers inside the allocation;
* ``hang``: rank 1's worker stops before the all-reduce; rank 0 waits out the 30 s collective timeout,
  then torchrun restarts both nodes' workers inside the allocation (Slurm sees nothing);
* ``node_kill``: every process of rank 1's node SIGKILLed (slurmd included): Slurm sets the node DOWN
  after ``SlurmdTimeout``, the job goes NODE_FAIL, is requeued and starts again after ``cred_expire`` on
  the two healthy nodes (the third node is the spare the partition holds);
* ``link_cut``: rank 1's node loses its link (alive, unreachable): the same DOWN and requeue as a dead host;
* ``health_check``: rank 1's node loses its GPU (every worker started there fails): torchrun's restarts in the
  allocation fail until they run out, the batch script requeues the job (``scontrol requeue``), the node's
  ``HealthCheckProgram`` drains it, and the first attempt after the drain runs on the two healthy nodes;
* ``spare``: ``node_kill`` with a spare inside the allocation (``sbatch --nodes=3 --no-kill``, ``TRAIN_NODES=2``:
  the third node's torchrun agent waits in the rendezvous): the survivor's agent restarts its workers, the spare
  takes the lost node's place, no requeue (sacct records the job RESIZING, then on the two nodes left);
* ``slurmd_pause``: nothing fails; rank 1's node's slurmd is stopped for 15 s and resumed while the job trains on
  (3 s steps here): past the tuned SlurmdTimeout the node is set DOWN anyway and the job requeued (a false
  DOWN: what tuning costs); at the default the stall passes unseen.

Settings (``course_lib.slurmlab.SETTINGS``): ``default`` is slurm.conf(5)'s defaults (SlurmdTimeout=300,
cred_expire=120, sched_interval=60, MessageTimeout=10); ``tuned`` is the smallest the lab runs with
(6, 5, 2, 3); the health check runs every 300 s at "default" (Slurm runs none by default) and 5 s tuned
(``course_lib.slurmlab.HEALTH_CHECK_INTERVAL_S``). The phases come from timestamps: the job's event log (failure, noticed, process group
ready, checkpoint loaded, steps) and Slurm's own accounting (sacct's End/Eligible/Start of the attempts,
``sacctmgr show event``'s DOWN or DRAIN), both at one-second resolution for Slurm's.

Writes ``benchmarks/results/slurmlab.{md,json}``, ``data/slurm_requeue.csv`` (one row per run,
the course's measured reschedule) and its MANIFEST checksum, and each run's exports under
``benchmarks/results/slurmlab/<mode>-<setting>/`` (sacct.txt, events.txt: what
``course-budget --log sacct.txt --format sacct --events events.txt`` reads).
"""
from __future__ import annotations

import argparse
import csv
import json
import signal
import sys
import time
from pathlib import Path

from machine import machine  # benchmarks/machine.py (this folder is on sys.path when run as a script)

from course_lib import data
from course_lib.labkit import LabError
from course_lib.slurmlab import HEALTH_CHECK_INTERVAL_S, MODES, SETTINGS, read_runs, run_failure, slurm_missing, slurm_version, summary

OUT = Path(__file__).resolve().parent / "results"
DATA_FILE = data.DATA_DIR / "slurm_requeue.csv"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--setting", choices=("all", *SETTINGS), default="all")
    ap.add_argument("--mode", choices=("all", *MODES), default="all", help="one failure mode's rows only (the others kept)")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each mode x setting (the table shows their median)")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    if args.repeat < 1:
        ap.error(f"argument --repeat: must be an int >= 1 (got {args.repeat})")
    why = slurm_missing()
    if why:
        print(f"slurmlab_bench skipped: {why}")
        return 0
    import torch

    # `kill` (SIGTERM) becomes a KeyboardInterrupt, so the running lab's close takes its daemons, namespaces and
    # files down as it does on Ctrl-C (a bare SIGTERM would leave the namespaces behind)
    signal.signal(signal.SIGTERM, _interrupt)
    settings = list(SETTINGS) if args.setting == "all" else [args.setting]
    modes = list(MODES) if args.mode == "all" else [args.mode]
    kept = []  # the other settings' and modes' committed runs stay (their rows as written)
    if DATA_FILE.exists():
        with DATA_FILE.open(newline="") as fh:
            kept = [r for r in csv.DictReader(fh) if not (r["setting"] in settings and r["mode"] in modes)]
    rows, failed, t0 = [], [], time.time()
    for setting in settings:
        for rep in range(args.repeat):
            for mode in modes:
                _one(mode, setting, rep, args.out, kept, rows, failed, t0)
    rows = sorted(kept + rows, key=lambda r: (list(SETTINGS).index(r["setting"]), MODES.index(r["mode"])))  # stable: run order kept
    for i, r in enumerate(rows):
        r["run"] = i
    fields = max((list(r) for r in rows), key=len, default=[])  # a new run's columns (a kept row may predate one)
    with open(DATA_FILE, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    data.update_manifest()
    payload = {"machine": machine(torch=torch.__version__, slurm=slurm_version()),
               "command": " ".join(["python benchmarks/slurmlab_bench.py", *(argv if argv is not None else sys.argv[1:])]),
               "settings": {k: v.__dict__ for k, v in SETTINGS.items()}, "health_check_interval_s": HEALTH_CHECK_INTERVAL_S, "rows": read_runs(DATA_FILE), "failed_runs": failed,
               "wall_s": time.time() - t0, "kept_from": _kept_from(args.out / "slurmlab.json") if kept else []}
    (args.out / "slurmlab.json").write_text(json.dumps(payload, indent=1, sort_keys=True) + "\n")
    (args.out / "slurmlab.md").write_text(_markdown(payload))
    print((args.out / "slurmlab.md").read_text())
    return 1 if failed else 0


def _kept_from(previous: Path) -> list[dict]:
    """The earlier benchmark runs whose rows this one keeps: their commands and machines (the rows carry no machine)."""
    if not previous.exists():
        return []
    old = json.loads(previous.read_text())
    return [{"command": old["command"], "machine": old["machine"]}] + old.get("kept_from", [])


def _interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def _one(mode, setting, rep, out, kept, rows, failed, t0) -> None:
    """One run: its row appended to ``rows``, or its error to ``failed`` (a run that did not finish is reported)."""
    keep = out / "slurmlab" / f"{mode}-{setting}"  # the first run's exports are the committed ones
    try:
        res = run_failure(mode, setting, keep_exports=keep if rep == 0 else None)
    except LabError as exc:
        failed.append({"mode": mode, "setting": setting, "error": str(exc).splitlines()[0]})
        print(f"[{time.time() - t0:6.0f} s] {mode} {setting} FAILED: {failed[-1]['error']}", flush=True)
        return
    rows.append(res.row(len(kept) + len(rows)))
    print(f"[{time.time() - t0:6.0f} s] {mode:12s} {setting:8s} run {rep + 1}  attempts {res.attempts}  identical {res.identical}  "
          + "  ".join(f"{k} {'-' if v is None else f'{v:.2f}'}" for k, v in res.stages_s().items()), flush=True)


def _markdown(p: dict) -> str:
    m = p["machine"]
    lines = ["# The reschedule on a real Slurm cluster: defaults against tuned", "",
             f"`{p['command']}`; Slurm {m.get('slurm')}, torch {m.get('torch')}; {m.get('cpu', '')}, "
             f"{m.get('cores_usable', m.get('cores', ''))} cores; {m.get('date', '')}."
             + "".join(f" Rows of the other modes or settings are kept from `{k['command']}` ({k['machine'].get('cpu', '')}, "
                       f"{k['machine'].get('cores_usable', k['machine'].get('cores', ''))} cores; {k['machine'].get('date', '')})."
                       for k in p.get("kept_from", [])), "",
             "One failure at step 6 of 12 (checkpoint every 4) of a 2-node job (one torchrun agent per node, c10d), "
             "on a 3-node partition (one spare). Seconds after the failure; Slurm's own times have 1 s resolution. "
             "detect = failure to the moment what acts noticed (Slurm's DOWN for a lost node, the DRAIN for a node that "
             "fails its health check; torchrun for a crash); "
             "reschedule = that to every rank's process group ready again.", "",
             "Medians of each row's runs (lowest to highest in brackets where they differ); every run "
             "ended bit-identical to an uninterrupted run (data/slurm_requeue.csv has each run's row).", "",
             "| mode | setting | SlurmdTimeout | cred_expire | HealthCheckInterval | runs | attempts | DOWN or DRAIN | requeued | "
             "eligible | started | process group | progress regained | detect | reschedule | reload | rewind |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for s in summary(p["rows"]).values():
        cells = [s.mode, s.setting, f"{s.slurmd_timeout_s:g}", f"{s.cred_expire_s:g}",
                 f"{s.health_check_interval_s:g}" if s.health_check_interval_s else "-", s.n, s.attempts,
                 *[_cell(s, k) for k in ("down_s", "requeued_s", "eligible_s", "started_s", "rendezvous_s", "progress_s",
                                         "detect_s", "reschedule_s", "reload_s", "rewind_s")]]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    if p["failed_runs"]:
        lines += ["", "Runs that did not finish:", ""] + [f"- {f['mode']} {f['setting']}: {f['error']}" for f in p["failed_runs"]]
    lines += ["", "What the rows say: a worker crash or a hang never reaches the scheduler (one attempt in sacct; torchrun "
              "restarts the workers in the allocation), and a hang costs its collective timeout before anyone acts (the hung "
              "rank's node answers every ping). A lost node, dead or cut off, costs SlurmdTimeout before anyone acts (nobody tells Slurm a host "
              "died), then cred_expire before the requeued job may start, then the job's own start-up (srun, torchrun, "
              "import torch, rendezvous). This toy's start-up is seconds; a 4,096-GPU allocation's is not (container and "
              "image pull, NCCL initialisation across the fleet), so only the two settings' shares carry over to a fleet, "
              "not the toy's remainder. A node that fails its health check is neither: it answers every ping, so Slurm never "
              "sets it DOWN; torchrun restarts the workers onto the same broken node until its restarts run out, the batch "
              "script requeues the job, and only an attempt that starts after the health check's DRAIN avoids the node (an "
              "attempt before it lands there again: the extra attempts in sacct). Its detect is up to one period of the health "
              "check, not SlurmdTimeout. A spare inside the allocation takes neither the DOWN nor the requeue: the survivor's "
              "torchrun notices the lost peer at once and the spare joins the next rendezvous round once the lost agent's "
              "heartbeat has expired (torchrun's keep-alive), at either setting; Slurm sets the node DOWN later, and with "
              "--no-kill only shrinks the job. A stalled slurmd on a healthy node (slurmd_pause) is the price of a short "
              "SlurmdTimeout: past it the node is set DOWN and the job requeued for nothing; at the default the same stall "
              "passes unseen (its phases are empty).", ""]
    return "\n".join(lines)


def _cell(s, key: str) -> str:
    if s.median[key] is None:
        return "-"
    spread = f" [{s.low[key]:.2f}-{s.high[key]:.2f}]" if s.high[key] > s.low[key] else ""
    return f"{s.median[key]:.2f}{spread}"


if __name__ == "__main__":
    sys.exit(main())
