#!/usr/bin/env python
"""Benchmark: the write cost (delta) of four checkpoint strategies, and the course's targets.

    .venv/bin/python benchmarks/checkpoint_bench.py                  # 256MiB,1GiB, 5 repeats, + 2 ranks
    .venv/bin/python benchmarks/checkpoint_bench.py --sizes 64MiB --repeats 3 --ranks 1

Writes ``benchmarks/results/checkpoint_<device>.{md,csv,json}`` (one process) and
``checkpoint_<device>_x<N>.{md,csv,json}`` (N ranks under torchrun), each with the machine it
ran on. All strategies of one size are measured in one run, one after the other, on the same
state; the table reports medians of the repeats and the ratios the targets are stated in:

* snapshot blocking <= 1.5x a bare copy of the same bytes into a preallocated tensor;
* torch.save + fsync (synchronous) >= 10x the snapshot's blocking time;
* async_save's blocking part <= 20 % of the time inside dcp.save;
* on a GPU: snapshot device-to-host bandwidth >= 80 % of a bare pinned copy.

A missed target is reported with its measured value, never hidden.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from course_lib.checkpoint.__main__ import main as cli_main
from course_lib.checkpoint.bench import resolve_device
from course_lib.checkpoint.state import format_size

OUT = Path(__file__).resolve().parent / "results"


def markdown(payload: dict, title: str) -> str:
    m = payload["machine"]
    lines = [f"# {title}", "",
             f"Command: `{payload['command']}`", "",
             "Machine: " + ", ".join(f"{k} {v}" for k, v in m.items()), "",
             "Medians of the repeats. Blocking = the training loop is stalled; durable = on disk, fsynced, committed; "
             "reload = verify + load back (from the page cache: the file was just written). "
             "With several ranks, each row is the slowest rank and sizes are the whole state (each rank saves 1/N).", "",
             "| size | ranks | strategy | blocking (s) | durable (s) | reload (s) | inside dcp call (s) | blocking GB/s | blocking s/GiB |",
             "|---|---|---|---|---|---|---|---|---|"]
    for s in payload["summary"]:
        f = lambda x, p=4: "-" if x is None else f"{x:.{p}f}"
        lines.append(f"| {format_size(s['size'])} | {s['ranks']} | {s['strategy']} | {f(s['blocking_s'])} | {f(s['durable_s'], 3)} | "
                     f"{f(s['reload_s'], 3)} | {f(s['dcp_call_s'], 3)} | {f(s['blocking_GBps'], 2)} | {f(s['blocking_s_per_GiB'])} |")
    lines += ["", "## Targets (ratios measured in the same run)", "", "| size | ranks | ratio | measured | target | verdict |", "|---|---|---|---|---|---|"]
    for r in payload["ratios"]:
        verdict = "met" if r["met"] else "**missed**"
        lines.append(f"| {format_size(r['size'])} | {r['ranks']} | {r['description']} | {r['value']:.3g} | {r['target']} | {verdict} |")
    if m.get("device") != "cuda":
        lines += ["", "GPU table: not produced on this machine (torch sees no CUDA GPU). On a GPU host `make bench` writes "
                  "`checkpoint_cuda.md` with the same strategies (pinned host buffers, side stream, NCCL under torchrun) and "
                  "the snapshot's device-to-host bandwidth against a bare pinned copy (target >= 80 %)."]
    return "\n".join(lines) + "\n"


def run(sizes, repeats, ranks, device, extra_note=""):
    import json

    if device == "cuda":
        import torch

        if ranks > torch.cuda.device_count():
            print(f"skipped {ranks} ranks: one GPU per rank and this host has {torch.cuda.device_count()}")
            return
    suffix = f"_x{ranks}" if ranks > 1 else ""
    stem = OUT / f"checkpoint_{device}{suffix}"
    argv = ["--sizes", sizes, "--repeats", str(repeats), "--ranks", str(ranks), "--device", device,
            "--csv", str(stem.with_suffix(".csv")), "--json", str(stem.with_suffix(".json"))]
    rc = cli_main(argv)
    if rc != 0:
        raise SystemExit(rc)
    payload = json.loads(stem.with_suffix(".json").read_text())
    payload["command"] = "python -m course_lib.checkpoint " + " ".join(argv).replace(str(OUT) + "/", "benchmarks/results/")
    stem.with_suffix(".json").write_text(json.dumps(payload, indent=1) + "\n")
    title = f"Checkpoint write cost on {device.upper()}" + (f", {ranks} ranks under torchrun" if ranks > 1 else ", one process")
    stem.with_suffix(".md").write_text(markdown(payload, title) + extra_note)
    print("wrote", stem.with_suffix(".md"))


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="256MiB,1GiB")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--ranks", type=int, nargs="*", default=[1, 2])
    ap.add_argument("--device", default="auto")
    ap.add_argument("--note", default="", help="text appended to each table (e.g. why a target was missed)")
    args = ap.parse_args()
    device = resolve_device(args.device)
    for n in args.ranks:
        run(args.sizes, args.repeats, n, device, args.note)
