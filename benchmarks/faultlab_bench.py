#!/usr/bin/env python
"""Benchmark: restart time under torchrun with default-like settings vs tuned settings (notebook 07).

    .venv/bin/python benchmarks/faultlab_bench.py              # 3 repeats + one-lever sweeps (~25 min)
    .venv/bin/python benchmarks/faultlab_bench.py --reps 1 --no-levers   # quick look

Restart time = failure injected -> every rank back at the step it had completed before the
failure, measured from the lab's event log (course_lib.faultlab). The same 2-rank gloo job
(tiny MLP, 0.1 s of simulated compute per step, 32 MiB of extra state in every checkpoint)
is hit by one failure in the middle of a checkpoint interval (so the rewind is half the
interval) in two scenarios:

* ``hang``: a rank stops without an error; only the collective timeout notices it (what a
  hung GPU or NCCL kernel does);
* ``kill``: a rank is SIGKILLed; over gloo/TCP the peer sees the closed socket at once.

Settings. A fleet's defaults are minutes long; the benchmark scales every fleet-scale time by
the same factor 1/10 so that a run takes about two minutes (the scaled value is what runs; the
fleet values are read from data/levers.csv, data/restart_stages.csv and the Scenario, with
their sources there):

================== ================================ =========================================
lever              default-like (scaled 1/10)        tuned
================== ================================ =========================================
collective timeout 60 s  (NCCL's 600 s default)      1 s  (10 s at fleet scale: heartbeat-like)
agent poll         30 s  (stands for a 5-min health check, 0.1 s (torchrun's own default)
                   another mechanism)
checkpoint every   60 s  (the course's 10-min baseline) 1 s (10 s at fleet scale, in-memory snapshot)
reload from        disk, page cache dropped          /dev/shm snapshot (host memory)
================== ================================ =========================================

Not scaled (measured as they are on this machine): process start, ``import torch``, the
rendezvous and gloo connect (rescheduling) and reading the checkpoint (reload). Repeats are
interleaved (default, tuned, default, ...) so that a busy machine slows both alike; the
table reports medians and their ratio. Target (benchmarks/README.md): tuned >= 10x faster
in the hang scenario. The one-lever sweeps start from default-like and tune one lever each.

Writes ``benchmarks/results/faultlab_restart.{md,csv,json}``.
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from machine import machine, shown_command, write_tables  # benchmarks/machine.py (this folder is on sys.path when run as a script)

from course_lib.faultlab import Failure, LabConfig, run_lab

OUT = Path(__file__).resolve().parent / "results"
SCALE = 10  # fleet-scale seconds per benchmark second
STEP_S = 0.1  # simulated compute per step
STATE_MB = 32



def _default_like() -> dict:
    """Fleet defaults from data/ (sources there), scaled by 1/SCALE."""
    from course_lib import Scenario
    from course_lib.data import sourced

    return {
        "collective_timeout_s": 60 * sourced("levers.csv")["nccl_collective_timeout"].minutes / SCALE,  # NCCL's default
        "monitor_interval_s": 60 * sourced("restart_stages.csv", "stage")["detect"].minutes / SCALE,  # one health-check period
        "interval_s": 60 * Scenario().checkpoint_interval_min / SCALE,  # the course's baseline interval
        "snapshot": "disk",
    }


DEFAULT_LIKE = _default_like()
TUNED = {"collective_timeout_s": 1.0, "monitor_interval_s": 0.1, "interval_s": 1.0, "snapshot": "memory"}
LEVERS = ("collective_timeout_s", "monitor_interval_s", "interval_s", "snapshot")


def machine_info() -> dict:
    import torch

    return machine(torch=torch.__version__, backend="nccl" if torch.cuda.is_available() else "gloo (CPU)")


def one_run(setting: dict, scenario: str, work: Path, nproc: int = 2) -> dict:
    """One restart of the ``nproc``-rank job under ``setting``; the failure strikes rank 1."""
    every = max(int(round(setting["interval_s"] / STEP_S)), 2)
    fail_step = every // 2 + 1  # after the step-0 checkpoint: the rewind is half an interval
    failure = Failure("hang" if scenario == "hang" else "kill", fail_step, rank=1)
    config = LabConfig(
        steps=fail_step + 3,
        ckpt_every=every,
        failures=(failure,),
        collective_timeout_s=setting["collective_timeout_s"],
        monitor_interval_s=setting["monitor_interval_s"],
        snapshot=setting["snapshot"],
        step_compute_s=STEP_S,
        state_mb=STATE_MB,
        nproc=nproc,
    )
    res = run_lab(config, run_dir=work, timeout_s=600)
    shutil.rmtree(work / "ckpt", ignore_errors=True)  # the checkpoints (STATE_MB each) are not needed after the run
    (m,) = res.restarts
    return {**m.stages_s(), "total_s": m.total_s, "peer_noticed_s": m.peer_noticed_s,
            "steps_recomputed": m.steps_recomputed, "step_time_s": m.step_time_s, "reload_source": m.reload_source}


def median_row(rows):
    keys = ("detect", "reschedule", "reload", "rewind", "total_s")
    return {k: statistics.median(r[k] for r in rows) for k in keys}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--lever-reps", type=int, default=1)
    ap.add_argument("--no-levers", action="store_true")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    mach = machine_info()
    plan = []  # (scenario, setting name, setting)
    for _ in range(args.reps):
        for scenario in ("hang", "kill"):
            plan += [(scenario, "default-like", DEFAULT_LIKE), (scenario, "tuned", TUNED)]
    if not args.no_levers:
        for _ in range(args.lever_reps):
            for lever in LEVERS:
                plan.append(("hang", f"default-like, tuned {lever}", {**DEFAULT_LIKE, lever: TUNED[lever]}))
    rows = []
    t0 = time.time()
    with tempfile.TemporaryDirectory(prefix="faultlab-bench-") as tmp:
        for i, (scenario, name, setting) in enumerate(plan):
            r = one_run(setting, scenario, Path(tmp) / f"run{i}")
            rows.append({"scenario": scenario, "setting": name, **{k: setting[k] for k in LEVERS}, **r})
            print(f"[{time.time() - t0:6.0f} s] {scenario:4s} {name:38s} total {r['total_s']:6.2f} s  "
                  + "  ".join(f"{k} {r[k]:.2f}" for k in ("detect", "reschedule", "reload", "rewind")), flush=True)
    groups = {}
    for r in rows:
        groups.setdefault((r["scenario"], r["setting"]), []).append(r)
    summary = [{"scenario": s, "setting": n, "reps": len(g), **median_row(g)} for (s, n), g in groups.items()]
    ratios = {}
    for scenario in ("hang", "kill"):
        d = groups[(scenario, "default-like")]
        t = groups[(scenario, "tuned")]
        ratios[scenario] = median_row(d)["total_s"] / median_row(t)["total_s"]
    payload = {"machine": mach, "command": shown_command("benchmarks/faultlab_bench.py", argv if argv is not None else sys.argv[1:]),
               "scale": SCALE, "step_s": STEP_S, "state_mb": STATE_MB, "default_like": DEFAULT_LIKE, "tuned": TUNED,
               "rows": rows, "summary": summary, "ratios": ratios, "wall_s": time.time() - t0}
    write_tables(args.out, "faultlab_restart", payload, rows, markdown(payload))
    print(markdown(payload))
    return 0


def markdown(p: dict) -> str:
    m = p["machine"]
    f = lambda x: f"{x:.2f}"
    lines = [
        "# Restart time under torchrun: default-like vs tuned settings",
        "",
        f"Command: `{p['command']}` (wall {p['wall_s'] / 60:.1f} min)",
        "",
        "Machine: " + ", ".join(f"{k} {v}" for k, v in m.items()),
        "",
        f"Job: 2 ranks, tiny MLP, {p['step_s']} s simulated compute per step, {p['state_mb']} MiB of extra state per "
        "checkpoint; one failure in the middle of a checkpoint interval. Restart time = failure -> every rank back "
        "at its pre-failure step, from the job's event log (course_lib.faultlab).",
        "",
        f"Fleet-scale times are scaled by 1/{p['scale']:g} so that a run takes about two minutes: "
        f"the collective timeout {p['default_like']['collective_timeout_s']:g} s stands for NCCL's default "
        "(data/levers.csv: PyTorch docs, 10 min), the agent poll "
        f"{p['default_like']['monitor_interval_s']:g} s for a health-check period (data/restart_stages.csv: 5 min, "
        f"Kokolis et al.), the {p['default_like']['interval_s']:g} s checkpoint interval for the course's 10-minute "
        "baseline. Process start, import, rendezvous and the reload are not scaled (measured as they are).",
        "",
        "The agent poll is not torchrun's default: torchrun's --monitor-interval is 0.1 s in torch 2.13 (the tuned "
        "value). A cluster health check is another mechanism (it finds dead or broken nodes, whose agent died with "
        "them); the lab has only torchrun's agent, so the default-like setting stretches the agent's poll to stand in "
        "for the health check's period.",
        "",
        "| lever | default-like | tuned |",
        "|---|---|---|",
        f"| collective timeout (s) | {p['default_like']['collective_timeout_s']:g} | {p['tuned']['collective_timeout_s']:g} |",
        f"| agent poll (s): default-like stands for a health check, tuned is torchrun's default | {p['default_like']['monitor_interval_s']:g} | {p['tuned']['monitor_interval_s']:g} |",
        f"| checkpoint interval (s) | {p['default_like']['interval_s']:g} | {p['tuned']['interval_s']:g} |",
        f"| reload from | {p['default_like']['snapshot']} | {p['tuned']['snapshot']} (/dev/shm) |",
        "",
        "Medians of the repeats (seconds):",
        "",
        "| scenario | setting | reps | detect | reschedule | reload | rewind | restart total |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for s in p["summary"]:
        lines.append(f"| {s['scenario']} | {s['setting']} | {s['reps']} | {f(s['detect'])} | {f(s['reschedule'])} | "
                     f"{f(s['reload'])} | {f(s['rewind'])} | **{f(s['total_s'])}** |")
    lines += ["", "| scenario | default-like / tuned (medians) | target | verdict |", "|---|---|---|---|"]
    for scenario, r in p["ratios"].items():
        target = ">= 10x" if scenario == "hang" else "(reported)"
        verdict = ("met" if r >= 10 else "**missed**") if scenario == "hang" else "-"
        lines.append(f"| {scenario} | {r:.1f}x | {target} | {verdict} |")
    med = {(r["scenario"], r["setting"]): r for r in p["summary"]}
    d_reload, t_reload = med[("hang", "default-like")]["reload"], med[("hang", "tuned")]["reload"]
    faster = "faster" if t_reload < d_reload else "not faster"
    lines += [
        "",
        f"Reload lever: from /dev/shm {t_reload:.2f} s vs from disk (page cache dropped) {d_reload:.2f} s (hang medians): "
        f"memory is {faster} here. For {p['state_mb']} MiB on this machine's local disk the read is not the bottleneck; "
        "checksum verification and deserialisation are. The lever pays where the state is large and the storage is "
        "shared by many readers (notebook 07, section 4).",
        "",
        f"Measured on a shared machine (load average {m['load_average_1min']} on {m['cores']} cores at the "
        "start): contention lands mostly in rescheduling (process start and `import torch`); default-like and tuned "
        "runs were interleaved, so both saw the same machine.",
    ]
    lines += [
        "",
        "Reading it: with the default-like settings the restart is detection (the timeout) and rewound work; "
        "tuned, what is left is rescheduling: a new process, `import torch`, rendezvous and gloo connect, which "
        "no setting here removes (in-process restart would). A killed rank over gloo is noticed at once by its "
        "peer, so the timeout lever matters only for hangs here; NCCL peers often wait for the watchdog timeout.",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
