#!/usr/bin/env python
"""Benchmark: restore from the buddy's memory vs the persisted fallback (notebook 11).

    .venv/bin/python benchmarks/tiers_bench.py                       # 16, 64, 256 MiB, 5 repeats
    .venv/bin/python benchmarks/tiers_bench.py --sizes 16MiB --repeats 3   # quick look

One process plays the restoring rank of :class:`course_lib.checkpoint.tiers.TieredCheckpointer`;
the node memories are two holder processes (``course_lib/checkpoint/holder.py``) on 127.0.0.1,
the persisted tier a folder on the local disk. A toy training state
(``course_lib.checkpoint.state.toy_state``) is snapshotted once (own holder, buddy holder and the
store), then restored in three situations, interleaved repeat by repeat:

* ``own``: the rank's node is alive (its own holder answers);
* ``buddy``: the node was lost; a replacement with an empty holder restores from the buddy's
  copy over TCP (what a hot spare does);
* ``persisted``: the node and its buddy were lost; the replacement restores from the store,
  with the file's pages dropped from the page cache first, so the read hits the disk.

Each restore is timed whole: listing the tiers, fetching, verifying the sha256, ``torch.load``
and the copy into the rank's state. Also recorded: the snapshot's blocking time (the copy into
host buffers, on the training step's critical path) and its background replication time.
Target (benchmarks/README.md): a buddy restore faster than the persisted fallback.
Loopback TCP is faster than a data-centre network and this machine's disk may be slower or
faster than a parallel file system: the ratio is this machine's, the table says which.

Writes ``benchmarks/results/tiers_restore.{md,csv,json}``.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from machine import machine, shown_command, write_tables  # benchmarks/machine.py (this folder is on sys.path when run as a script)

from course_lib.checkpoint.state import empty_like_state, format_size, parse_size, poison_state, states_equal, toy_state
from course_lib.labkit import Lab
from course_lib.nodelab.tierlab import start_holder
from course_lib.checkpoint.tiers import TieredCheckpointer

OUT = Path(__file__).resolve().parent / "results"
SITUATIONS = ("own", "buddy", "persisted")


def _drop_cache(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def measure(size: int, repeats: int, work: Path) -> list[dict]:
    rows = []
    with Lab(work / "holders", timeout_s=3600, prefix="tiers-bench") as stack:
        _, own = start_holder(stack, "own", keep=1)
        _, buddy = start_holder(stack, "buddy", keep=1)
        _, empty = start_holder(stack, "empty", keep=1)  # the replacement node's fresh memory
        state = toy_state(size, seed=1)
        ckpt = TieredCheckpointer(state, local_holder=own, peers=[buddy], persist_dir=work, job="bench", keep=1)
        ckpt.snapshot(state, 1, persist=True)
        blocking = ckpt.last_timings["blocking_s"]
        ckpt.wait()
        timings = dict(ckpt.last_timings)
        views = {
            "own": ckpt,
            "buddy": TieredCheckpointer(state, local_holder=empty, peers=[buddy], persist_dir=work, job="bench", keep=1),
            "persisted": TieredCheckpointer(state, local_holder=empty, persist_dir=work, job="bench", keep=1),
        }
        target = empty_like_state(state)
        for r in range(repeats):
            for name in SITUATIONS:
                poison_state(target)
                if name == "persisted":
                    _drop_cache(ckpt.store.path_for(1))
                t0 = time.perf_counter()
                got = views[name].restore(target)
                dt = time.perf_counter() - t0
                rows.append({"size": size, "repeat": r, "situation": name, "tier": got.tier, "restore_s": dt,
                             "fetch_s": views[name].last_restore["fetch_s"], "verify_load_s": views[name].last_restore["verify_load_s"],
                             "bit_exact": states_equal(target, state), "snapshot_blocking_s": blocking,
                             "replication_s": timings.get("background_s"), "sealed_bytes": timings.get("nbytes")})
        for v in views.values():
            v.close()
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="16MiB,64MiB,256MiB")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    mach = machine(torch=torch.__version__, disk="the folder of tempfile (local disk here)")
    t0 = time.time()
    rows = []
    with tempfile.TemporaryDirectory(prefix="tiers-bench-") as tmp:
        for size in [parse_size(s) for s in args.sizes.split(",")]:
            rows += measure(size, args.repeats, Path(tmp) / str(size))
            print(f"[{time.time() - t0:5.0f} s] {format_size(size)} done", flush=True)
    summary = []
    for size in dict.fromkeys(r["size"] for r in rows):
        med = {n: statistics.median(r["restore_s"] for r in rows if r["size"] == size and r["situation"] == n) for n in SITUATIONS}
        one = next(r for r in rows if r["size"] == size)
        fetch = {n: statistics.median(r["fetch_s"] for r in rows if r["size"] == size and r["situation"] == n) for n in SITUATIONS}
        summary.append({"size": size, **{f"{n}_s": med[n] for n in SITUATIONS}, **{f"{n}_fetch_s": fetch[n] for n in SITUATIONS},
                        "persisted_over_buddy": med["persisted"] / med["buddy"],
                        "snapshot_blocking_s": one["snapshot_blocking_s"], "replication_s": one["replication_s"],
                        "all_bit_exact": all(r["bit_exact"] for r in rows if r["size"] == size),
                        "tiers_as_expected": all(r["tier"] == r["situation"] for r in rows if r["size"] == size)})
    payload = {"machine": mach, "command": shown_command("benchmarks/tiers_bench.py", argv if argv is not None else sys.argv[1:]),
               "repeats": args.repeats, "rows": rows, "summary": summary, "wall_s": time.time() - t0}
    write_tables(args.out, "tiers_restore", payload, rows, markdown(payload))
    print(markdown(payload))
    return 0


def markdown(p: dict) -> str:
    from course_lib.checkpoint.state import format_size as fs

    m = p["machine"]
    lines = [
        "# Restore from the buddy's memory vs the persisted fallback",
        "",
        f"Command: `{p['command']}` (wall {p['wall_s']:.0f} s)",
        "",
        "Machine: " + ", ".join(f"{k} {v}" for k, v in m.items()),
        "",
        "One restoring rank (course_lib.checkpoint.tiers.TieredCheckpointer); node memories are holder processes on "
        "127.0.0.1 (loopback TCP); the persisted tier is a folder on the local disk, its file's pages dropped from the "
        "page cache before each persisted restore. A restore = list the tiers, fetch the bytes, verify the sha256, "
        f"torch.load, copy into the rank's state. Medians of {p['repeats']} interleaved repeats (own, buddy, persisted, "
        "own, ...); every restore was checked bit for bit. In brackets: the fetch alone (bytes from a holder over TCP, "
        "or from the disk); the rest is the same sha256 and torch.load on every tier.",
        "",
        "| state | own memory (s) | buddy's memory (s) | persisted, cache dropped (s) | persisted / buddy | snapshot blocking (s) | background replication (s) | bit-exact |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for s in p["summary"]:
        lines.append(f"| {fs(s['size'])} | {s['own_s']:.3f} ({s['own_fetch_s']:.3f}) | {s['buddy_s']:.3f} ({s['buddy_fetch_s']:.3f}) | "
                     f"{s['persisted_s']:.3f} ({s['persisted_fetch_s']:.3f}) | **{s['persisted_over_buddy']:.2f}x** | "
                     f"{s['snapshot_blocking_s']:.3f} | {s['replication_s']:.3f} | "
                     f"{'yes' if s['all_bit_exact'] and s['tiers_as_expected'] else 'NO'} |")
    missed = [s for s in p["summary"] if s["persisted_over_buddy"] <= 1]
    if not missed:
        verdict = "Target (a buddy restore faster than the persisted fallback): **met** at every size."
    else:
        worst = min(missed, key=lambda s: s["persisted_over_buddy"])
        verdict = (f"Target (a buddy restore faster than the persisted fallback): **missed** at "
                   f"{', '.join(fs(s['size']) for s in missed)}; worst at {fs(worst['size'])}, where the buddy restore "
                   f"took {worst['buddy_s'] / worst['persisted_s']:.2f}x the persisted one. Why: on this virtual machine "
                   "a read whose pages were dropped from the guest's page cache is still served from the host's memory "
                   "(compare the fetch columns), so the 'disk' here is memory behind a virtual device, while the "
                   "buddy's bytes cross a loopback socket between two busy processes on two shared cores.")
    lines += [
        "",
        verdict,
        "",
        "What a single-machine measurement leaves out, in both directions: a real buddy is one network hop away; a real "
        "persisted tier is a shared file system that every rank of the job reads at once after a restart (this single "
        "reader shows none of that contention); and the persisted step is older than the newest snapshot (every "
        "k-th snapshot is persisted), so the fallback also rewinds more work, which no restore time includes. The "
        "snapshot's blocking time is the copy on the training step's critical path; replication (serialise, seal, send "
        "to both holders, persist) runs in the background.",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
