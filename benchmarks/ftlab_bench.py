#!/usr/bin/env python
"""Benchmark: GPU-seconds lost per failure, whole-job restart (notebook 07, tuned) vs torchft (notebook 10).

    .venv/bin/python benchmarks/ftlab_bench.py               # 3 interleaved repeats + the hang-timeout sweep (~10 min)
    .venv/bin/python benchmarks/ftlab_bench.py --reps 1 --no-sweep

Same machine, same toy model (course_lib.faultlab.job), same step (0.1 s of simulated compute),
same failures (a rank SIGKILLed; a rank hung), two ranks in all:

* **whole-job restart**: notebook 07's 2-rank job under torchrun with its tuned settings
  (benchmarks/faultlab_bench.py ``TUNED``: 1 s collective timeout, 0.1 s agent poll, 1 s
  checkpoint interval in /dev/shm). Lost per failure: every rank x the restart (failure ->
  every rank back at its pre-failure step).
* **torchft**: two replica groups of one rank (course_lib.ftlab), each under its own torchrun,
  a lighthouse on 127.0.0.1; the hang is caught by the learned timeout (safety factor 5).
  Lost per failure: every rank x the survivors' stall (failure -> their next committed step)
  + the failed group's rank x its rejoin (failure -> it commits again, weights from its peer).

Runs are interleaved (whole-job, torchft, whole-job, ...) so a busy machine slows both alike;
the table reports medians. Target (benchmarks/README.md): torchft >= 5x fewer GPU-seconds lost
per failure. The sweep runs the torchft job with slow-but-healthy steps (3x and 10x the usual
step) in one group and a real hang in the other, for safety factors 2, 5 and 10: which slow steps
are falsely killed, and how long the real hang takes to be seen.

Writes ``benchmarks/results/ftlab_compare.{md,csv,json}``.
"""
from __future__ import annotations

import argparse
import csv
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from faultlab_bench import STEP_S, TUNED, machine_info, one_run  # benchmarks/ (on sys.path when run as a script)

from course_lib.faultlab import Failure
from course_lib.ftlab import FtConfig, Recovery, badput_buckets, restart_badput, run_ftlab

OUT = Path(__file__).resolve().parent / "results"
RANKS = 2
GROUPS = 2
FAIL_STEP = 30
SAFETY = (2.0, 5.0, 10.0)
SLOW = (3.0, 10.0)


def ft_config(kind: str) -> FtConfig:
    return FtConfig(groups=GROUPS, steps=FAIL_STEP + 30, failures=[Failure(kind, FAIL_STEP, rank=1)], step_compute_s=STEP_S)


def ft_run(kind: str, work: Path) -> dict:
    res = run_ftlab(ft_config(kind), run_dir=work, timeout_s=300)
    (r,) = res.recoveries
    if not res.replicas_identical:
        raise RuntimeError(f"replicas differ after healing: {res.digests}")
    return {"kind": r.kind, "group": r.group, "gen": r.gen, "t_fail": r.t_fail, "stall_s": r.stall_s, "rejoin_s": r.rejoin_s, "detect_s": r.detect_s, "restart_s": r.restart_s,
            "recover_s": r.recover_s, "step_time_s": r.step_time_s, "recovered_from": r.recovered_from,
            "survivor_steps_while_out": r.survivor_steps_while_out, "aborted_steps": r.aborted_steps,
            "committed_share_failed_group": res.committed_share(1),
            "gpu_s_lost": r.gpu_seconds_lost(RANKS // GROUPS, GROUPS), "identical": res.replicas_identical}


def whole_run(kind: str, work: Path) -> dict:
    r = one_run(TUNED, kind, work)
    return {**r, "gpu_s_lost": RANKS * r["total_s"]}


def buckets(row: dict) -> dict[str, float]:
    """One run's GPU-seconds in the goodput taxonomy's buckets (course_lib.ftlab.events)."""
    if row["setting"] == "torchft":
        fields = ("kind", "group", "gen", "t_fail", "detect_s", "stall_s", "rejoin_s", "restart_s", "recover_s",
                  "step_time_s", "survivor_steps_while_out", "aborted_steps", "recovered_from")
        rec = Recovery(**{f: row.get(f, 0) for f in fields})
        return badput_buckets(rec, RANKS // GROUPS, GROUPS)
    return restart_badput({k: row[k] for k in ("detect", "reschedule", "reload", "rewind")}, RANKS)


def summarize(rows: list[dict]) -> list[dict]:
    out = []
    for kind in ("kill", "hang"):
        w = [r for r in rows if r["scenario"] == kind and r["setting"].startswith("whole")]
        f = [r for r in rows if r["scenario"] == kind and r["setting"] == "torchft"]
        bw, bf = [buckets(r) for r in w], [buckets(r) for r in f]
        out.append({
            "scenario": kind, "reps": len(w),
            "whole_restart_s": med(w, "total_s"), "whole_gpu_s": med(w, "gpu_s_lost"),
            "whole_stages": {k: med(w, k) for k in ("detect", "reschedule", "reload", "rewind")},
            "ft_stall_s": med(f, "stall_s"), "ft_rejoin_s": med(f, "rejoin_s"), "ft_detect_s": med(f, "detect_s"),
            "ft_restart_s": med(f, "restart_s"), "ft_recover_s": med(f, "recover_s"), "ft_step_s": med(f, "step_time_s"),
            "ft_gpu_s": med(f, "gpu_s_lost"), "ratio": med(w, "gpu_s_lost") / med(f, "gpu_s_lost"),
            "whole_buckets": {k: statistics.median(b[k] for b in bw) for k in bw[0]},
            "ft_buckets": {k: statistics.median(b[k] for b in bf) for k in bf[0]},
            "ft_committed_share_failed_group": med(f, "committed_share_failed_group"),
            "ft_recovered_from": sorted({r["recovered_from"] for r in f}),
            "ft_identical": all(r["identical"] for r in f),
        })
    return out


def sweep_run(safety: float, work: Path) -> dict:
    """Slow steps in group 0 (3x, then 10x), then a real hang in group 1; each waits for a full quorum."""
    cfg = FtConfig(groups=GROUPS, steps=60, failures=[Failure("hang", 35, rank=1)], slow=[(25, SLOW[0], 0), (30, SLOW[1], 0)],
                   safety_factor=safety, step_compute_s=STEP_S)
    res = run_ftlab(cfg, run_dir=work, timeout_s=300)
    slow = [e for e in res.events if e["ev"] == "slow"]
    out = {"safety_factor": safety}
    for e in slow:
        killed = any(h["rank"] == e["rank"] and h["gen"] == e["gen"] and h["t"] >= e["t"] for h in res.events_of("hang_detected"))
        out[f"slow_{e['factor']:g}x_killed"] = killed
    (r,) = [x for x in res.recoveries if x.kind == "hang"]
    out["hang_detect_s"] = r.detect_s
    out["step_time_s"] = r.step_time_s
    out["hang_detect_per_step"] = r.detect_s / r.step_time_s
    out["identical"] = res.replicas_identical
    return out


def med(rows, key):
    return statistics.median(r[key] for r in rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--no-sweep", action="store_true")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--render", action="store_true", help="only re-derive the summary and the table from the committed JSON")
    args = ap.parse_args(argv)
    if args.render:
        path = args.out / "ftlab_compare.json"
        payload = json.loads(path.read_text())
        payload["summary"] = summarize(payload["rows"])
        path.write_text(json.dumps(payload, indent=1, default=str))
        (args.out / "ftlab_compare.md").write_text(markdown(payload))
        print(markdown(payload))
        return 0
    mach = machine_info()
    import torchft  # noqa: F401  (its version is part of the record)
    from importlib.metadata import version

    mach["torchft"] = version("torchft")
    rows, sweep = [], []
    t0 = time.time()
    with tempfile.TemporaryDirectory(prefix="ftlab-bench-") as tmp:
        i = 0
        for _ in range(args.reps):
            for kind in ("kill", "hang"):
                for setting, fn in (("whole-job restart (tuned)", whole_run), ("torchft", ft_run)):
                    work = Path(tmp) / f"run{i}"
                    r = fn(kind, work)
                    shutil.rmtree(work, ignore_errors=True)
                    i += 1
                    rows.append({"scenario": kind, "setting": setting, **r})
                    print(f"[{time.time() - t0:6.0f} s] {kind:4s} {setting:28s} GPU-s lost {r['gpu_s_lost']:6.2f}", flush=True)
        if not args.no_sweep:
            for safety in SAFETY:
                work = Path(tmp) / f"sweep{safety:g}"
                r = sweep_run(safety, work)
                shutil.rmtree(work, ignore_errors=True)
                sweep.append(r)
                print(f"[{time.time() - t0:6.0f} s] sweep {r}", flush=True)
    summary = summarize(rows)
    shown = [a for a in (argv if argv is not None else sys.argv[1:])]
    if "--out" in shown:
        j = shown.index("--out")
        del shown[j : j + 2]
    payload = {"machine": mach, "command": " ".join(["python benchmarks/ftlab_bench.py", *shown]), "ranks": RANKS,
               "groups": GROUPS, "step_s": STEP_S, "tuned": TUNED, "ft_config": json.loads(ft_config("kill").to_json()),
               "rows": rows, "summary": summary, "sweep": sweep, "wall_s": time.time() - t0}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "ftlab_compare.json").write_text(json.dumps(payload, indent=1, default=str))
    keys = sorted({k for r in rows for k in r})
    with open(args.out / "ftlab_compare.csv", "w", newline="") as fh:
        wr = csv.DictWriter(fh, fieldnames=keys)
        wr.writeheader()
        wr.writerows(rows)
    (args.out / "ftlab_compare.md").write_text(markdown(payload))
    print(markdown(payload))
    return 0


def markdown(p: dict) -> str:
    m = p["machine"]
    lines = [
        "# GPU-seconds lost per failure: whole-job restart (tuned) vs torchft",
        "",
        f"Command: `{p['command']}` (wall {p['wall_s'] / 60:.1f} min)",
        "",
        "Machine: " + ", ".join(f"{k} {v}" for k, v in m.items()),
        "",
        f"Same toy model, same {p['step_s']} s step, same failures, {p['ranks']} ranks in all. Whole-job restart: notebook 07's "
        f"job with its tuned settings (collective timeout {p['tuned']['collective_timeout_s']:g} s, agent poll "
        f"{p['tuned']['monitor_interval_s']:g} s, checkpoint every {p['tuned']['interval_s']:g} s in /dev/shm); lost = every "
        f"rank x the restart. torchft: {p['groups']} replica groups of {p['ranks'] // p['groups']} rank, lighthouse on "
        f"127.0.0.1 (heartbeat timeout {p['ft_config']['heartbeat_timeout_ms']} ms), learned hang timeout "
        f"(safety factor {p['ft_config']['safety_factor']:g}); lost = every rank x the survivors' stall + the failed "
        "group x its rejoin. Runs interleaved; medians.",
        "",
        "| scenario | reps | whole-job restart (s) | whole-job GPU-s lost | torchft detect (s) | survivors' stall (s) | "
        "failed group's rejoin (s) | torchft GPU-s lost | whole / torchft | target | verdict |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in p["summary"]:
        verdict = "met" if s["ratio"] >= 5 else f"**missed** by {5 / s['ratio']:.1f}x"
        lines.append(f"| {s['scenario']} | {s['reps']} | {s['whole_restart_s']:.2f} | {s['whole_gpu_s']:.2f} | {s['ft_detect_s']:.2f} | "
                     f"{s['ft_stall_s']:.2f} | {s['ft_rejoin_s']:.2f} | {s['ft_gpu_s']:.2f} | **{s['ratio']:.1f}x** | >= 5x | {verdict} |")
    lines += ["", "Badput in the buckets of Google's goodput taxonomy (GPU-seconds per failure, medians):", "",
              "| scenario | setting | " + " | ".join(p["summary"][0]["whole_buckets"]) + " |",
              "|---|---|" + "---|" * len(p["summary"][0]["whole_buckets"])]
    for s in p["summary"]:
        for name, b in (("whole-job restart", s["whole_buckets"]), ("torchft", s["ft_buckets"])):
            lines.append(f"| {s['scenario']} | {name} | " + " | ".join(f"{v:.2f}" for v in b.values()) + " |")
    lines += ["", "Every torchft run: the failed group recovered its weights from "
              + ", ".join(sorted({x for s in p["summary"] for x in s["ft_recovered_from"]}))
              + "; all replicas identical at the end: " + str(all(s["ft_identical"] for s in p["summary"])) + "."]
    if p["sweep"]:
        lines += ["", "Learned hang timeout (one run per safety factor; slow-but-healthy steps in one group, a real hang in the other):",
                  "", "| safety factor | 3x step falsely killed | 10x step falsely killed | real hang seen after (s) | in steps |",
                  "|---|---|---|---|---|"]
        for r in p["sweep"]:
            lines.append(f"| {r['safety_factor']:g} | {r.get('slow_3x_killed', '-')} | {r.get('slow_10x_killed', '-')} | "
                         f"{r['hang_detect_s']:.2f} | {r['hang_detect_per_step']:.1f} |")
    lines += [
        "",
        "Reading it: torchft's survivors lose the stall (the failure seen, a quorum without the failed group), not a "
        "restart; the failed group pays the rejoin, which is a restart of its own (a new process, `import torch`, "
        "torchft's manager) plus the weights from a peer. Here a group is half of the job, so half of the job pays the "
        "rejoin; with G groups it is 1/G (notebook 10). The learned timeout sees a hang after about safety factor x the "
        "longest step; a slow step longer than that is killed although healthy. The 10x step comes after the 3x one: "
        "a 3x step that survives raises the longest step seen, and with it the timeout (safety factor x 3 steps), so "
        "a factor that spares the 3x step also spares the 10x one here.",
        "",
        f"Measured on a shared machine (load average {m['load_average_1min']} on {m['cores']} cores at the start).",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
