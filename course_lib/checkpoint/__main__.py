"""``python -m course_lib.checkpoint``: measure checkpoint write costs on this machine (notebook 05).

Examples::

    python -m course_lib.checkpoint --sizes 256MiB,1GiB --repeats 3 --csv out.csv --json out.json
    python -m course_lib.checkpoint --sizes 64MiB --ranks 2          # torchrun, gloo or NCCL
    python -m course_lib.checkpoint --sizes 1GiB --strategies bare_copy,snapshot --device cuda

Sizes are the whole training state (16 bytes per parameter: bf16 weights, fp32 master, two
fp32 Adam moments); with ``--ranks N`` each rank holds a 1/N shard. Impossible sizes (more
than the free memory or disk) are refused before anything is allocated.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from .bench import (
    check_resources,
    machine_info,
    parse_sizes,
    parse_strategies,
    ratios,
    resolve_device,
    run_benchmark,
    summarize,
    write_csv,
    write_json,
)
from .state import format_size
from .strategies import DESCRIPTIONS, STRATEGIES


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m course_lib.checkpoint", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="256MiB,1GiB", help="comma list of state sizes, e.g. 256MiB,1GiB (default %(default)s)")
    ap.add_argument("--strategies", default="all", help=f"'all' or a comma list of {','.join(STRATEGIES)}")
    ap.add_argument("--repeats", type=int, default=3, help="saves per (size, strategy); medians are reported (default %(default)s)")
    ap.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"), help="where the state lives (default: cuda if present)")
    ap.add_argument("--ranks", type=int, default=1, help="processes; >1 launches torchrun --nproc-per-node RANKS (default %(default)s)")
    ap.add_argument("--dir", default="build/checkpoint-bench", help="folder on the disk to measure; the checkpoints go into a fresh subfolder, removed afterwards")
    ap.add_argument("--csv", help="write one row per save to this CSV file")
    ap.add_argument("--json", help="write machine info, medians and ratios to this JSON file")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--verify", action="store_true", help="also check every reload bit for bit")
    ap.add_argument("--no-progress", action="store_true", help="no progress bar")
    return ap


def _run_ranks(args, sizes, strategies, device) -> list[dict]:
    """Launch the worker under torchrun and return the rows of every rank."""
    Path(args.dir).mkdir(parents=True, exist_ok=True)
    work = tempfile.mkdtemp(prefix="ckpt-bench-", dir=args.dir)  # removed afterwards; nothing else in --dir is touched
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "rows.json"
        cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={args.ranks}",
               "-m", "course_lib.checkpoint.dist_worker",
               "--sizes", ",".join(str(s) for s in sizes), "--strategies", ",".join(strategies),
               "--repeats", str(args.repeats), "--dir", work, "--seed", str(args.seed), "--out", str(out)]
        if args.verify:
            cmd.append("--verify")
        if not args.no_progress:
            cmd.append("--progress")
        env = dict(os.environ)
        if device == "cpu":
            env["CUDA_VISIBLE_DEVICES"] = ""
        try:
            proc = subprocess.run(cmd, env=env)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        if proc.returncode != 0:
            raise SystemExit(f"torchrun failed with exit code {proc.returncode}")
        rows = json.loads(out.read_text())
    for r in rows:  # JSON null -> NaN
        for k, v in r.items():
            if v is None:
                r[k] = float("nan")
    return rows


def _max_over_ranks(rows) -> list[dict]:
    """Per (size, strategy, repeat): the slowest rank's times (what a synchronous job waits for)."""
    groups = {}
    for r in rows:
        groups.setdefault((r["size"], r["strategy"], r["repeat"]), []).append(r)
    out = []
    for rs in groups.values():
        merged = {k: v for k, v in rs[0].items() if k != "rank"}
        for k in ("blocking_s", "durable_s", "reload_s", "dcp_call_s"):
            merged[k] = max(r[k] for r in rs)
        if "bit_exact" in merged:
            merged["bit_exact"] = all(r["bit_exact"] for r in rs)
        out.append(merged)
    return out


def format_summary(summary, ratio_rows) -> str:
    lines = [f"{'size':>9} {'ranks':>5} {'strategy':<11} {'blocking s':>11} {'durable s':>10} {'reload s':>9} {'GB/s blk':>9}"]
    for s in summary:
        lines.append(f"{format_size(s['size']):>9} {s['ranks']:>5} {s['strategy']:<11} {s['blocking_s']:>11.4f} "
                     f"{s['durable_s']:>10.3f} {s['reload_s']:>9.3f} {s['blocking_GBps']:>9.2f}")
    for r in ratio_rows:
        lines.append(f"{format_size(r['size'])} x{r['ranks']}: {r['description']} = {r['value']:.3g} (target {r['target']}: "
                     f"{'met' if r['met'] else 'MISSED'})")
    return "\n".join(lines)


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        sizes = parse_sizes(args.sizes)
        strategies = parse_strategies(args.strategies)
        device = resolve_device(args.device)
        if args.repeats < 1:
            raise ValueError(f"repeats must be an integer >= 1 (got {args.repeats})")
        if args.ranks < 1:
            raise ValueError(f"ranks must be an integer >= 1 (got {args.ranks})")
        if device == "cuda" and args.ranks > 1:
            import torch

            if args.ranks > torch.cuda.device_count():
                raise ValueError(f"ranks must be <= {torch.cuda.device_count()} (one GPU per rank) (got {args.ranks})")
        check_resources(sizes, args.dir, device, args.ranks)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.ranks == 1:
        rows = run_benchmark(sizes, strategies, args.repeats, device, args.dir, seed=args.seed, verify=args.verify,
                             progress=not args.no_progress, check=False)
    else:
        rows = _max_over_ranks(_run_ranks(args, sizes, strategies, device))
    summary = summarize(rows)
    ratio_rows = ratios(summary)
    print(format_summary(summary, ratio_rows))
    if args.csv:
        write_csv(rows, args.csv)
    if args.json:
        write_json({"machine": machine_info(Path(args.dir).parent if Path(args.dir).parent.exists() else ".", device),
                    "command": "python -m course_lib.checkpoint " + " ".join(argv if argv is not None else sys.argv[1:]),
                    "strategies": {k: DESCRIPTIONS[k] for k in strategies},
                    "summary": summary, "ratios": ratio_rows}, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
