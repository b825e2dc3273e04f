#!/usr/bin/env python
"""Benchmark: a lemon node under three policies, the same failure schedule (notebook 14). Needs root.

    sudo .venv/bin/python benchmarks/lemonlab_bench.py             # 3 interleaved repeats of each policy (~15 min)
    .venv/bin/python benchmarks/lemonlab_bench.py --reps 1

The nodes lab's job on 2 namespaced nodes (course_lib.nodelab.lemon); node n1 is a lemon: it goes down in
the 2nd step of every start of the job on it (and at the 2nd unit of work of a gate). Policies:

* **same node**: it rejoins as it is after every failure, until the restart-loop guard (NVRx's
  ``max_no_progress_restarts``, 3) stops the job;
* **quarantine after k = 2**: it rejoins once, fails again, is quarantined; a spare node takes its place;
* **pre-flight gate**: before it rejoins, a short health check and an all-reduce test (2 rounds each); the
  lemon fails it and is kept out; the spare is gated too, passes and joins.

Per run: the lemon's failures in the job, the job's restarts, the time from the first failure until the job
is past the step it failed in (never, for the same node), the GPU-seconds lost (the job's 2 GPUs x that
time, or x the time until the guard gave up: and the job is then down until someone acts), and the gate's
seconds. Runs are interleaved so a busy machine slows every policy alike; the table reports medians.

Writes ``benchmarks/results/lemonlab.{md,csv,json}``.
"""
from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

from machine import machine, shown_command, write_tables  # benchmarks/ (on sys.path when run as a script)

from course_lib.nodelab import net_admin_missing
from course_lib.nodelab.lemon import POLICIES, LemonLabConfig, run_lemonlab

OUT = Path(__file__).resolve().parent / "results"
BASE = LemonLabConfig(k=2, gate_rounds=2, lemon_after=2, spares=1)
LABELS = {"same_node": "same node until the guard gives up", "quarantine": "quarantine after k failures, take a spare",
          "gate": "pre-flight gate before every rejoin"}


def one(policy: str) -> dict:
    r = run_lemonlab(BASE.replace(policy=policy), timeout_s=900)
    failed = [g for g in r.gates if not g["passed"]]
    return {"policy": policy, "outcome": r.outcome, "failures": len(r.failures), "restarts": r.restarts,
            "regained": r.regain_s is not None, "regain_s": r.regain_s, "until_s": r.until_s, "gpu_s_lost": r.gpu_s_lost,
            "gates": len(r.gates), "gate_pass_s": r.gate_s, "gate_fail_s": statistics.median([g["seconds"] for g in failed]) if failed else None,
            "quarantined": r.quarantined, "joined": r.joined, "gave_up": r.gave_up, "wall_s": r.wall_s}


def _med(rows, key):
    vals = [r[key] for r in rows if r[key] is not None]
    return statistics.median(vals) if vals else None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    missing = net_admin_missing()
    if missing:
        print(f"lemonlab_bench: {missing}", file=sys.stderr)
        return 2
    runs = []
    for rep in range(args.reps):
        for policy in POLICIES:
            row = one(policy)
            row["rep"] = rep
            runs.append(row)
            print(f"rep {rep} {policy:10s} {row['outcome']:8s} failures {row['failures']} restarts {row['restarts']} "
                  f"until {row['until_s']:.1f} s lost {row['gpu_s_lost']:.1f} GPU-s", flush=True)
    summary = []
    for policy in POLICIES:
        rows = [r for r in runs if r["policy"] == policy]
        summary.append({"policy": policy, "label": LABELS[policy], "reps": len(rows),
                        "outcomes": sorted({r["outcome"] for r in rows}), "regained": all(r["regained"] for r in rows),
                        "failures": _med(rows, "failures"), "restarts": _med(rows, "restarts"),
                        "regain_s": _med(rows, "regain_s"), "until_s": _med(rows, "until_s"),
                        "gpu_s_lost": _med(rows, "gpu_s_lost"), "gate_pass_s": _med(rows, "gate_pass_s"),
                        "gate_fail_s": _med(rows, "gate_fail_s")})
    payload = {"machine": machine(), "command": shown_command("benchmarks/lemonlab_bench.py", sys.argv[1:] if argv is None else argv),
               "settings": {"nodes": BASE.nodes, "lemon": f"n{BASE.lemon}", "lemon_after": BASE.lemon_after, "k": BASE.k,
                            "gate_rounds": BASE.gate_rounds, "spares": BASE.spares,
                            "max_no_progress_restarts": BASE.max_no_progress_restarts, "steps": BASE.steps,
                            "ckpt_every": BASE.ckpt_every, "step_compute_s": BASE.step_compute_s,
                            "dead_node_s": BASE.dead_node_s, "rejoin_delay_s": BASE.rejoin_delay_s},
               "summary": summary, "runs": runs}
    rows = [{k: v for k, v in r.items() if k not in ("quarantined", "joined", "gave_up")} for r in runs]
    write_tables(args.out, "lemonlab", payload, rows, markdown(payload))
    print(markdown(payload))
    return 0


def _s(v, unit=" s") -> str:
    return "-" if v is None else f"{v:.1f}{unit}"


def markdown(p: dict) -> str:
    s, m = p["settings"], p["machine"]
    lines = [
        "# Lemon node: three policies, the same failure schedule",
        "",
        f"`{p['command']}` on {m['cpu']} ({m['cores_usable']} of {m['cores']} cores usable, load {m['load_average_1min']}), "
        f"{m['date']}. The nodes lab's job on {s['nodes']} namespaced nodes (one rank, one \"GPU\" each), {s['steps']} steps "
        f"of {s['step_compute_s']:g} s, a checkpoint every {s['ckpt_every']}; node {s['lemon']} goes down in step "
        f"{s['lemon_after']} of every start of the job on it (and at unit {s['lemon_after']} of a gate). k = {s['k']}; the "
        f"gate: {s['gate_rounds']} health-check rounds and {s['gate_rounds']} all-reduce rounds; {s['spares']} spare, "
        f"started when taken; the guard: max_no_progress_restarts = {s['max_no_progress_restarts']}. Medians of "
        f"{p['summary'][0]['reps']} interleaved runs per policy.",
        "",
        "| policy | parameter | lemon failures | restarts | progress regained after | GPU-seconds lost | gate (pass / fail) |",
        "|---|---|---|---|---|---|---|",
    ]
    for x in p["summary"]:
        param = {"same_node": f"guard {s['max_no_progress_restarts']}", "quarantine": f"k = {s['k']}",
                 "gate": f"{s['gate_rounds']} + {s['gate_rounds']} rounds"}[x["policy"]]
        regain = _s(x["regain_s"]) if x["regained"] else f"never (the guard stopped the job after {_s(x['until_s'])})"
        lost = _s(x["gpu_s_lost"], "") + ("" if x["regained"] else " and counting")
        gate = f"{_s(x['gate_pass_s'])} / {_s(x['gate_fail_s'])}" if x["policy"] == "gate" else "-"
        lines.append(f"| {x['label']} | {param} | {x['failures']:g} | {x['restarts']:g} | {regain} | {lost} | {gate} |")
    lines += ["", "Every run: " + "; ".join(f"{r['policy']} #{r['rep']}: {r['outcome']}, {r['failures']} failures, "
                                              f"{_s(r['until_s'])}" for r in p["runs"]) + ".", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
