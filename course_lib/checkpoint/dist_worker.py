"""The benchmark's worker under torchrun: every rank saves its shard (notebook 05).

Launched by ``python -m course_lib.checkpoint --ranks N`` as::

    torchrun --standalone --nproc-per-node N -m course_lib.checkpoint.dist_worker --sizes 256MiB ...

Each rank joins the process group through torchrun's rendezvous (NCCL on GPUs, gloo on CPUs),
builds its 1/N shard of the toy state as DTensors sharded along dimension 0 of a 1-D device
mesh (the layout FSDP produces) and runs the same measurements as one process: DCP writes one
file per rank, torch_save and snapshot write one file per rank. Checkpoint collectives (DCP's
plan exchange, the manifest commit) use a gloo group, as is usual on NCCL jobs. Rank 0 gathers
the rows of every rank and writes them as JSON; per save, the slowest rank's time is the one a
synchronous job feels, so the rows keep every rank and the launcher reports the maximum.

``--selftest DIR`` instead saves a small sharded state with DCP, reloads it into an empty
template and checks it bit for bit on every rank (the test suite's 2-rank check).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

import torch
import torch.distributed as dist

from .bench import parse_sizes, parse_strategies
from .dcp_safe import DcpCheckpointStore
from .state import empty_like_state, states_equal, toy_state
from .strategies import STRATEGIES, local_state, measure


def shard_state(local: dict, mesh) -> dict:
    """Wrap every tensor of a rank's local state as a DTensor sharded on dimension 0 of ``mesh``."""
    from torch.distributed.tensor import DTensor, Shard

    out = {}
    for k, v in local.items():
        if isinstance(v, dict):
            out[k] = shard_state(v, mesh)
        elif isinstance(v, torch.Tensor):
            world = mesh.size()
            shape = (v.shape[0] * world,) + tuple(v.shape[1:])
            out[k] = DTensor.from_local(v, mesh, [Shard(0)], shape=torch.Size(shape), stride=v.stride(), run_check=False)
        else:
            out[k] = v
    return out


def _init():
    cuda = torch.cuda.is_available()
    backend = "nccl" if cuda else "gloo"
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if cuda:
        torch.cuda.set_device(local_rank)
    dist.init_process_group(backend=backend)
    from torch.distributed.device_mesh import init_device_mesh

    device = "cuda" if cuda else "cpu"
    mesh = init_device_mesh(device, (dist.get_world_size(),))
    ckpt_pg = dist.new_group(backend="gloo") if cuda else None
    return device, mesh, ckpt_pg


def _finish(rc: int):
    """Leave the job cleanly: all ranks meet, the process group is destroyed, then the process exits.

    ``os._exit`` skips the interpreter's teardown, where C++ threads of the communication
    library could otherwise be destroyed in an arbitrary order (an occasional SIGABRT,
    "terminate called without an active exception", after all the work was done). Every file
    was closed and fsynced before this point.
    """
    try:
        dist.barrier()
        dist.destroy_process_group()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(rc)


def _sharded_toy_state(size: int, device: str, mesh, seed: int) -> dict:
    rank, world = dist.get_rank(), dist.get_world_size()
    local = toy_state(max(size // world, 1), device=device, seed=seed + rank)
    local["step"] = seed  # the same step counter on every rank
    return shard_state(local, mesh)


def selftest(directory: Path, size: int) -> int:
    device, mesh, ckpt_pg = _init()
    rank = dist.get_rank()
    state = _sharded_toy_state(size, device, mesh, seed=7)
    store = DcpCheckpointStore(directory, keep=2, process_group=ckpt_pg)
    store.save(1, state)
    pending = store.async_save(2, state)
    pending.wait()
    ok = True
    for step in (1, 2):
        template = empty_like_state(state)
        store.load(step, template)
        ok &= states_equal(local_state(template), local_state(state))
    template = empty_like_state(state)
    got = store.load_latest_good(template)
    ok &= got is not None and got[0] == 2 and states_equal(local_state(template), local_state(state))
    # every benchmark strategy round-trips bit for bit under torchrun too
    exact = {}
    for r in measure(STRATEGIES, state, directory / "bench", repeats=1, verify=True, process_group=ckpt_pg):
        exact[r["strategy"]] = exact.get(r["strategy"], True) and r["bit_exact"]
    ok &= all(exact.values())
    flag = torch.tensor([1 if ok else 0], dtype=torch.int32)
    dist.all_reduce(flag, op=dist.ReduceOp.MIN, group=ckpt_pg)
    files = sorted(p.name for p in store.path_for(2).iterdir())
    if rank == 0:
        print(json.dumps({"ok": bool(flag.item()), "world_size": dist.get_world_size(), "files": files, "bit_exact": exact}))
    store.close()
    _finish(0 if flag.item() else 1)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="course_lib.checkpoint.dist_worker")
    ap.add_argument("--sizes", default="64MiB")
    ap.add_argument("--strategies", default="all")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--dir", default="build/checkpoint-bench")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", help="JSON file for the rows (written by rank 0)")
    ap.add_argument("--verify", action="store_true")
    ap.add_argument("--progress", action="store_true")
    ap.add_argument("--selftest", metavar="DIR")
    args = ap.parse_args(argv)
    if args.selftest:
        return selftest(Path(args.selftest), parse_sizes(args.sizes)[0])

    device, mesh, ckpt_pg = _init()
    rank, world = dist.get_rank(), dist.get_world_size()
    sizes, strategies = parse_sizes(args.sizes), parse_strategies(args.strategies)
    bar = None
    if args.progress and rank == 0:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(sizes) * len(strategies) * args.repeats, desc=f"checkpoint bench x{world} ranks", unit="save", leave=False, file=sys.stderr)
    rows = []
    root = Path(args.dir)
    for size in sizes:
        state = _sharded_toy_state(size, device, mesh, args.seed)
        out = root / f"{size}-x{world}"
        for row in measure(strategies, state, out, repeats=args.repeats, verify=args.verify, process_group=ckpt_pg,
                           on_repeat=(lambda _r: bar.update(1)) if bar is not None else None):
            rows.append({"size": size, "ranks": world, "device": device, "rank": rank, **row})
        dist.barrier(group=ckpt_pg)
        if rank == 0:
            shutil.rmtree(out, ignore_errors=True)
        del state
    if bar is not None:
        bar.close()
    gathered = [None] * world if rank == 0 else None
    dist.gather_object(rows, gathered, dst=0, group=ckpt_pg)
    if rank == 0:
        allrows = [r for part in gathered for r in part]
        text = json.dumps(allrows, default=lambda x: None)
        if args.out:
            Path(args.out).parent.mkdir(parents=True, exist_ok=True)
            Path(args.out).write_text(text)
        else:
            print(text)
    _finish(0)


if __name__ == "__main__":
    raise SystemExit(main())
