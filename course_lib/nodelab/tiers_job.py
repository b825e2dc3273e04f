"""The two-tier checkpoint lab's worker: one shard of a toy training job per rank (notebook 11).

    torchrun --nnodes N --node-rank I --nproc-per-node 1 ... course_lib/nodelab/tiers_job.py CONFIG.json

Environment: ``TIERS_HOLDER`` (this node's holder, ``host:port``), ``TIERS_NODE`` (the node's
name, for the event log), ``TIERS_GEN`` (the lab's generation of the job; default torchrun's
restart count).

Each rank owns a different shard of the state, as under FSDP or ZeRO: its parameters ``w`` and
momentum ``m`` (``params`` floats each), and its own random stream (the "dropout" mask of every
step is drawn from it, so the RNG state must be restored too). The step is written as pure
functions (:func:`gradient`, :func:`apply`), so :func:`reference_digests` computes the uninterrupted
run in one process. The ranks are coupled by one
collective per step (every rank's gradient norm is all-gathered and summed in rank order into the
step size), so the job is a real collective job, a dead rank stops its peers, and every number is
a pure function of the seed, the step and the shard: a resumed run is bit-identical to an
uninterrupted one exactly when every shard resumed from the same step's state.

Every ``every`` steps the state is snapshotted into the two memory tiers, every
``persist_every``-th snapshot also persisted (:class:`course_lib.checkpoint.tiers.TieredCheckpointer`).
The lab's faults (``failures``: the first one the event log does not show injected fires at its
``step``, in whatever generation gets there; the next one in a later generation) makes every rank wait until its last snapshot is
replicated (and, if a spare is to absorb the loss, until a spare waits in the rendezvous) and meet
at a barrier (so which copies exist is deterministic); then the rank of the first node in ``nodes``
logs ``inject`` and stops, and the lab kills those nodes (agent, worker and holder: the node's memory).
"""
import time

_T_START = time.time()

import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402


def init_state(cfg: dict, shard: int) -> dict:
    """Shard ``shard``'s state at step 0: parameters, momentum, its regression target, ballast,
    and the state of its random stream (a ``torch.Generator``'s, saved in every snapshot)."""
    import torch

    g = torch.Generator().manual_seed(cfg["seed"] * 7919 + shard)
    return {
        "w": 0.1 * torch.randn(cfg["params"], generator=g),
        "m": torch.zeros(cfg["params"]),
        "target": torch.randn(cfg["params"], generator=g),
        "ballast": torch.arange(int(cfg.get("ballast_floats", 0)), dtype=torch.float32),
        "rng": torch.Generator().manual_seed(cfg["seed"] * 1000 + 17 + shard).get_state(),
        "step": 0,
    }


def gradient(state: dict, step: int, cfg: dict, shard: int):
    """Shard ``shard``'s gradient at ``step``: its batch is a pure function of (seed, step, shard),
    its dropout mask is drawn from the shard's random stream (advanced in ``state``)."""
    import torch

    P, B = cfg["params"], cfg["batch"]
    g = torch.Generator().manual_seed((cfg["seed"] * 1_000_003 + step) * 64 + shard)
    x = torch.randn(B, P, generator=g)
    y = x @ state["target"]
    grad = x.T @ (x @ state["w"] - y) / B
    stream = torch.Generator()
    stream.set_state(state["rng"])
    grad = grad * (torch.rand(P, generator=stream) > 0.1) / 0.9
    state["rng"] = stream.get_state()
    return grad


def apply(state: dict, grad, norms: list, step: int) -> None:
    """Momentum SGD whose step size depends on every shard's gradient norm (summed in rank order)."""
    total = sum(float(n) for n in norms)
    state["m"].mul_(0.9).add_(grad)
    state["w"].sub_(0.05 / (1.0 + total) * state["m"])
    state["step"] = step


def final_digest(state: dict) -> str:
    from course_lib.checkpoint.tiers import state_digest

    return state_digest({k: v for k, v in state.items() if k != "ballast"})


def reference_digests(cfg: dict, nodes: int, upto: int | None = None) -> dict:
    """The digest of every shard of an uninterrupted run after step ``upto`` (default the last, ``cfg["steps"]``),
    computed in one process (the same functions the workers run; the all-gather of the norms becomes a list)."""
    states = [init_state(cfg, r) for r in range(nodes)]
    for step in range(1, (cfg["steps"] if upto is None else upto) + 1):
        grads = [gradient(st, step, cfg, r) for r, st in enumerate(states)]
        norms = [g.norm().reshape(1) for g in grads]
        for st, g in zip(states, grads):
            apply(st, g, norms, step)
    return {r: final_digest(st) for r, st in enumerate(states)}


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    cfg = json.loads(Path(argv[0]).read_text())
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    gen = int(os.environ.get("TIERS_GEN", os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")))
    node = os.environ.get("TIERS_NODE", "node")
    from course_lib.labkit import EventLog, die_with_parent, next_failure, read_events, spare_state

    die_with_parent()
    log = EventLog(cfg["events"], rank=rank, gen=gen, node=node)
    log("worker_start", t=_T_START)
    index, mine = next_failure(read_events(cfg["events"]), cfg.get("failures", []))  # before the group forms

    from datetime import timedelta

    import torch
    import torch.distributed as dist

    from course_lib.checkpoint.tiers import TieredCheckpointer

    torch.set_num_threads(1)
    dist.init_process_group("gloo", timeout=timedelta(seconds=cfg.get("collective_timeout_s", 60)))
    log("pg_ready", backend="gloo")
    state = init_state(cfg, rank)
    ckpt = TieredCheckpointer(state, local_holder=os.environ["TIERS_HOLDER"], persist_dir=cfg["persist_dir"],
                              job=cfg["job"], every=cfg["every"], persist_every=cfg["persist_every"],
                              keep=cfg.get("keep", 2), timeout_s=cfg.get("holder_timeout_s", 5.0))
    got = ckpt.restore(state)
    if got is None:
        start, tier = 0, "init"
        ckpt.snapshot(state, 0, persist=True)
    else:
        start, tier = got.step, got.tier
    log("state_loaded", step=start, source=tier, restore_s=got.seconds if got else 0.0,
        skipped=list(got.skipped) if got else [], digest=final_digest(state))  # the state it goes on from

    try:
        for step in range(start + 1, cfg["steps"] + 1):
            if mine and step == mine["step"]:
                ckpt.wait()  # every rank's newest snapshot is replicated: the copies that exist are known
                if mine.get("wait_for_spare"):  # no collective is pending while every rank waits
                    log("spare_awaited", step=step)
                    while (ready := spare_state(read_events(cfg["events"]), time.time())) is None:  # not `state`: that is the model
                        time.sleep(0.05)
                    log("spare_ready", step=step, state=ready)
                dist.barrier()
                if node == mine["nodes"][0]:
                    log("inject", kind=mine["kind"], failure=index, step=step, progress=step - 1, nodes=mine["nodes"])
                    while True:  # the lab kills this node now
                        time.sleep(3600)
            if cfg.get("step_compute_s"):
                time.sleep(cfg["step_compute_s"])
            grad = gradient(state, step, cfg, rank)
            norms = [torch.zeros(1) for _ in range(world)]
            dist.all_gather(norms, grad.norm().reshape(1))
            apply(state, grad, norms, step)
            log("step_done", step=step)
            if ckpt.maybe_snapshot(state, step):
                log("snapshot", step=step, persisted=step % (ckpt.every * ckpt.persist_every) == 0,
                    blocking_s=ckpt.last_timings["blocking_s"])
        ckpt.close()
        dist.barrier()
    except Exception as exc:  # a peer is gone: the collective raised
        log("noticed", reason=f"{type(exc).__name__}: {exc}"[:300])
        os._exit(1)
    log("done", step=cfg["steps"], digest=final_digest(state))
    dist.destroy_process_group()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
