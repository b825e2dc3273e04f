"""The lab's training job: the script torchrun starts on every rank (notebook 07).

    torchrun --standalone --nproc-per-node 2 --max-restarts K course_lib/faultlab/job.py CONFIG.json

The lab kit's toy problem (:mod:`course_lib.labkit.toy`: a tiny MLP with dropout, so the random
stream matters, learns a fixed random linear map on synthetic data), with SGD + momentum. Everything that decides the result is a pure function of the
seed, the step and the rank: the batch of step ``s`` on rank ``r`` comes from a generator
seeded with ``(seed, s, r)``; the model is initialised from ``seed`` on every rank; the
dropout stream of rank ``r`` starts from ``(seed, r)`` and is saved in every checkpoint.
Gradients are averaged by an explicit ``all_reduce`` (sum of two floats is commutative, so
the average is bit-identical on every rank). Rank 0 writes the whole state (model, momentum
state, every rank's RNG state, the count of applied optimizer steps) with the course's safe
writer (:class:`course_lib.checkpoint.CheckpointStore`) every ``ckpt_every`` steps, and at
step 0; after a restart every rank loads the newest checkpoint that verifies.

Backend: gloo on CPU; NCCL when CUDA is available (the model and batches then live on the
GPU of ``LOCAL_RANK``; checkpoints are always saved from CPU copies).

Failures fire by state: a worker reads the event log before it joins the process group and takes
the first failure not yet logged as injected (:func:`course_lib.labkit.next_failure`); it fires at
its step in this generation or, if this one ends first for another reason, in the next.

Across nodes (notebook 11, :mod:`course_lib.nodelab`) the same script runs on every node's
agent; the generation is then the rendezvous round (``FAULTLAB_GEN``, set by
:mod:`course_lib.faultlab.launch`). A node loss that a hot spare is to absorb (``wait_for_spare``
in its failure) waits, on every rank before its step (so no collective is pending), until the
event log shows a spare agent waiting in the rendezvous. Three more failure kinds act on the whole node
(``NODELAB_NODE`` names it; they refuse to run outside a lab namespace):
``node_kill`` (every process of the node SIGKILLed at once, mid-step), ``node_kill_in_ckpt``
(the same, halfway through writing a checkpoint) and ``link_cut`` (the node's link taken
down mid-step: it stays alive, its peers hang until the collective timeout), ``slurmd_pause`` (the node's
slurmd stopped for ``pause_s`` seconds and resumed: the node and the job are healthy, only the scheduler's daemon
stalls, as on a loaded host; :mod:`course_lib.slurmlab`), and ``gpu_lost`` (the
node's accelerator falls off the bus mid-step: the worker dies, and every worker started on that node
afterwards fails at its start, as a process that opens a lost GPU does; the node's health check sees it
in the file ``$FAULTLAB_HEALTH_DIR/<node>`` the failure writes, the scheduler lab's
:mod:`course_lib.slurmlab`). A *lemon* node (notebook 14,
:mod:`course_lib.nodelab.lemon`: ``NODELAB_LEMON_AFTER=n`` in its environment) fails the same way in the
``n``-th step of every start of the job on it: it fails again each time it rejoins.
"""
import time

_T_START = time.time()  # process start, before the heavy imports (the lab's "workers restarted")

import io  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import signal  # noqa: E402
import sys  # noqa: E402
import warnings  # noqa: E402
from datetime import timedelta  # noqa: E402
from pathlib import Path  # noqa: E402


SETUP_TIMEOUT_S = 300.0  # process-group set-up (rendezvous + connect), before the lever applies

# SGD with momentum: its momentum buffers are optimizer state that must survive a restart.
# (torch.optim.Adam would do as well, but its first construction imports torch._dynamo,
# about 2 s of start-up on every restart of this tiny job.)
LR, MOMENTUM = 0.05, 0.9


# ----- one rank's step, as functions: the job runs them, and so does the in-process reference -----
# (course_lib.faultlab.reference: an uninterrupted run without torchrun, bit for bit the same)
def dropout_seed(seed: int, rank: int) -> int:
    """The seed of rank ``rank``'s dropout stream (torch's global generator in the job)."""
    return seed * 1000 + 17 + rank


def build(cfg: dict, device="cpu"):
    """The job's model, optimizer and target (pure functions of the seed; the model on ``device``).
    Leaves the global generator seeded with the model's seed: seed the dropout stream after it."""
    import torch

    from course_lib.labkit.toy import toy_model, toy_target

    model = toy_model(cfg["seed"], cfg["features"], cfg["hidden"]).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    return model, opt, toy_target(cfg["seed"], cfg["features"])


def forward_backward(model, opt, x, y):
    """This rank's loss and local gradients of one step (left in ``p.grad``); returns the loss."""
    import torch

    opt.zero_grad(set_to_none=False)
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    return loss


def flat_grad(model):
    """Every parameter's gradient in one flat tensor (what the all-reduce sums)."""
    import torch

    return torch.cat([p.grad.reshape(-1) for p in model.parameters()])


def apply_mean(model, opt, flat) -> None:
    """Put the ranks' mean gradient ``flat`` back into ``p.grad`` and take the optimizer step."""
    off = 0
    for p in model.parameters():
        n = p.numel()
        p.grad.copy_(flat[off : off + n].view_as(p))
        off += n
    opt.step()


def _drop_page_cache(path) -> None:
    """Drop a just-fsynced file's pages from the page cache, so the next read hits the device."""
    try:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
    except (OSError, AttributeError):
        pass


def _my_node_pids(comm: str | None = None) -> list[int]:
    """The other processes in this process's network namespace (the lab's node); ``comm``: only those of that name."""
    me = os.getpid()
    mine = os.readlink(f"/proc/{me}/ns/net")
    pids = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit() and int(p.name) != me:
            try:
                if os.readlink(p / "ns" / "net") == mine and (comm is None or (p / "comm").read_text().strip() == comm):
                    pids.append(int(p.name))
            except OSError:
                continue
    return pids


def _kill_my_node() -> None:
    """SIGKILL every process in this process's network namespace (the lab's node), self last."""
    if not os.environ.get("NODELAB_NODE"):
        raise RuntimeError("node failures run only inside a nodes-lab namespace (NODELAB_NODE unset)")
    for pid in _my_node_pids():
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            continue
    os.kill(os.getpid(), signal.SIGKILL)


def _cut_my_link() -> None:
    """Take this node's link down (the node stays alive; nothing reaches it or leaves it)."""
    import subprocess

    iface = os.environ.get("NODELAB_IFACE")
    if not os.environ.get("NODELAB_NODE") or not iface:
        raise RuntimeError("link_cut runs only inside a nodes-lab namespace (NODELAB_NODE unset)")
    subprocess.run(["ip", "link", "set", "dev", iface, "down"], check=True, timeout=30)


def _pause_my_slurmd(pause_s: float) -> list[int]:
    """SIGSTOP the slurmd of this process's network namespace (the lab's node) and leave a process that SIGCONTs it
    ``pause_s`` seconds later, in a session of its own (the job's kill does not reach it): a stalled daemon on a
    healthy node. Returns the paused pids."""
    import subprocess

    if not os.environ.get("NODELAB_NODE"):
        raise RuntimeError("slurmd_pause runs only inside a nodes-lab namespace (NODELAB_NODE unset)")
    pids = _my_node_pids("slurmd")
    if not pids:
        raise RuntimeError("slurmd_pause found no slurmd in this node's namespace")
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    subprocess.Popen(["sh", "-c", f"sleep {float(pause_s)}; kill -CONT {' '.join(map(str, pids))}"], start_new_session=True,
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return pids


def _lost_gpu_marker() -> Path | None:
    """The file a ``gpu_lost`` failure leaves for this node (None outside a lab with a health directory)."""
    where, node = os.environ.get("FAULTLAB_HEALTH_DIR"), os.environ.get("NODELAB_NODE")
    return Path(where) / node if where and node else None


def _lose_my_gpu(step: int) -> None:
    """Mark this node's accelerator lost (what its health check reads), then die as the worker on it does."""
    marker = _lost_gpu_marker()
    if marker is None:
        raise RuntimeError("gpu_lost runs only in a lab node with FAULTLAB_HEALTH_DIR set")
    marker.write_text(f"GPU lost (the lab's XID 79) in step {step}\n")


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    cfg_path = Path(argv[0])
    cfg = json.loads(cfg_path.read_text())
    paths = cfg.pop("_paths")
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    gen = int(os.environ.get("FAULTLAB_GEN", os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")))
    from course_lib.labkit import EventLog, die_with_parent, next_failure, read_events, spare_state
    from course_lib.labkit.toy import state_digest, toy_batch

    die_with_parent()
    node = os.environ.get("NODELAB_NODE")
    lemon_after = int(os.environ.get("NODELAB_LEMON_AFTER") or 0)  # a lemon node fails this many steps into every start
    log = EventLog(paths["events"], rank=rank, gen=gen, node=node)
    log("worker_start", t=_T_START)
    marker = _lost_gpu_marker()
    if marker is not None and marker.exists():  # this node's GPU is gone: the worker cannot start
        log("device_missing", reason=marker.read_text().strip())
        return 1
    failures = cfg["failures"]
    # read before the process group forms, so every rank of this generation sees the same log
    index, mine = next_failure(read_events(paths["events"]), failures,
                               recurring=bool(failures) and failures[-1]["kind"] == "bad_node")

    import torch
    import torch.distributed as dist

    from course_lib.checkpoint.safe import CheckpointStore

    torch.set_num_threads(1)
    use_cuda = torch.cuda.is_available()
    if use_cuda:  # NCCL branch (not exercised on the course's CPU machines)
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
        torch.cuda.set_device(device)
        backend = "nccl"
    else:
        device = torch.device("cpu")
        backend = "gloo"
    seed, steps, every = cfg["seed"], cfg["steps"], cfg["ckpt_every"]

    # ----- model, optimizer, data: pure functions of seed, step and rank -----
    B = cfg["batch"]
    model, opt, target = build(cfg, device)
    ballast_n = int(cfg["state_mb"] * 2**20 // 4)
    ballast = torch.arange(ballast_n, dtype=torch.float32) * 1e-3 if ballast_n else None
    torch.manual_seed(dropout_seed(seed, rank))  # this rank's dropout stream

    def batch(step):
        x, y = toy_batch(seed, step, rank, B, target)
        return x.to(device), y.to(device)

    def rng_state():
        return torch.cuda.get_rng_state(device) if use_cuda else torch.get_rng_state()

    def set_rng_state(s):
        if use_cuda:
            torch.cuda.set_rng_state(s, device)
        else:
            torch.set_rng_state(s)

    # Set-up (store rendezvous, gloo's full-mesh connect, the first barrier) gets a generous
    # timeout: ranks of a restarted generation start seconds apart on a busy machine. Only
    # then is the process group's timeout lowered to the lever's value, which is what a hung
    # peer in a training collective runs into.
    timeout = timedelta(seconds=cfg["collective_timeout_s"])
    setup = max(timeout, timedelta(seconds=SETUP_TIMEOUT_S))
    dist.init_process_group(backend, timeout=setup)
    dist.barrier()
    try:
        from torch.distributed.distributed_c10d import _set_pg_timeout

        _set_pg_timeout(timeout)
    except ImportError:  # pragma: no cover - older torch: keep the set-up timeout
        pass
    log("pg_ready", backend=backend)

    if cfg["snapshot"] == "memory":
        store = CheckpointStore(paths["shm"], keep=cfg["keep"])
    else:
        store = CheckpointStore(paths["disk"], keep=cfg["keep"])

    def full_state(step, applied, rngs):
        return {
            "step": step,
            "applied": applied,
            "model": {k: v.detach().cpu() for k, v in model.state_dict().items()},
            "optim": opt.state_dict(),
            "rng": rngs,
            "ballast": ballast,
        }

    def checkpoint(step, applied):
        rngs = [None] * world
        dist.all_gather_object(rngs, rng_state().cpu())
        if rank != 0:
            return
        state = full_state(step, applied, rngs)
        if mine and mine["kind"] in ("kill_in_ckpt", "node_kill_in_ckpt") and mine["step"] == step:
            buf = io.BytesIO()
            torch.save(state, buf)
            data = buf.getvalue()

            def half_then_die(fh):
                fh.write(data[: len(data) // 2])
                fh.flush()
                log("inject", kind=mine["kind"], failure=index, step=step, progress=step, bytes_written=len(data) // 2)
                if mine["kind"] == "node_kill_in_ckpt":
                    _kill_my_node()
                os.kill(os.getpid(), signal.SIGKILL)

            store.commit(step, half_then_die)
        path = store.save(step, state)
        if cfg["snapshot"] == "disk":
            _drop_page_cache(path)
        log("ckpt_written", step=step, bytes=path.stat().st_size)

    # ----- resume from the newest checkpoint that verifies -----
    start, applied = 0, 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loaded = store.load_latest_good(map_location="cpu")
    for w in caught:
        log("ckpt_skipped", message=str(w.message)[:300])
    if loaded is not None:
        start, st = loaded
        model.load_state_dict(st["model"])
        opt.load_state_dict(st["optim"])
        set_rng_state(st["rng"][rank])
        applied = st["applied"]
        source = cfg["snapshot"]
    else:
        source = "init"
    agree = torch.tensor([start, -start], dtype=torch.int64, device=device)
    dist.all_reduce(agree, op=dist.ReduceOp.MAX)
    if int(agree[0]) != start or int(agree[1]) != -start:
        raise RuntimeError(f"ranks resumed from different steps (rank {rank}: {start})")
    log("state_loaded", step=start, source=source)
    if loaded is None:
        checkpoint(0, 0)

    def wait_for_spare(step):
        """Every rank, before the step (no collective pending): wait until a spare agent waits."""
        log("spare_awaited", step=step)
        while (state := spare_state(read_events(paths["events"]), time.time())) is None:
            time.sleep(0.05)
        log("spare_ready", step=step, state=state)

    # ----- train -----
    try:
        for step in range(start + 1, steps + 1):
            if mine and mine["step"] == step and mine.get("wait_for_spare"):
                wait_for_spare(step)
            if cfg["step_compute_s"]:
                time.sleep(cfg["step_compute_s"])  # simulated compute of a real model's step
            x, y = batch(step)
            loss = forward_backward(model, opt, x, y)
            if lemon_after and step - start == lemon_after:
                log("inject", kind="lemon", failure=None, step=step, progress=step - 1)
                _kill_my_node()
            if mine and mine["step"] == step and mine["rank"] == rank:
                kind = mine["kind"]
                if kind == "corrupt_ckpt":
                    newest = store.path_for(max(store.steps()))
                    with open(newest, "r+b") as fh:
                        fh.seek(newest.stat().st_size // 2)
                        b = fh.read(8)
                        fh.seek(newest.stat().st_size // 2)
                        fh.write(bytes(x ^ 0xFF for x in b))
                        fh.flush()
                        os.fsync(fh.fileno())
                    log("inject", kind=kind, failure=index, step=step, progress=step - 1, file=newest.name)
                    os.kill(os.getpid(), signal.SIGKILL)
                elif kind in ("kill", "bad_node"):
                    log("inject", kind=kind, failure=index, step=step, progress=step - 1)
                    os.kill(os.getpid(), signal.SIGKILL)
                elif kind == "node_kill":
                    log("inject", kind=kind, failure=index, step=step, progress=step - 1)
                    _kill_my_node()
                elif kind == "gpu_lost":
                    _lose_my_gpu(step)
                    log("inject", kind=kind, failure=index, step=step, progress=step - 1)
                    os.kill(os.getpid(), signal.SIGKILL)
                elif kind == "slurmd_pause":  # the node stays healthy: the job trains on (what Slurm does next is its own)
                    pids = _pause_my_slurmd(mine["pause_s"])
                    log("inject", kind=kind, failure=index, step=step, progress=step - 1, pause_s=mine["pause_s"], paused=pids)
                elif kind == "link_cut":
                    log("inject", kind=kind, failure=index, step=step, progress=step - 1)
                    _cut_my_link()
                    while True:  # alive but cut off: the peers wait until their collective timeout
                        time.sleep(3600)
                elif kind == "hang":
                    log("inject", kind=kind, failure=index, step=step, progress=step - 1)
                    while True:  # never reaches the all-reduce; the agent's SIGTERM ends it
                        time.sleep(3600)
            flat = flat_grad(model)
            dist.all_reduce(flat)
            flat /= world
            apply_mean(model, opt, flat)
            applied += 1
            log("step_done", step=step, loss=loss.item())  # the float32 loss exactly (JSON keeps every digit)
            if step % every == 0:
                checkpoint(step, applied)
        rngs = [None] * world  # every rank's RNG state: a resumed run must continue the same streams
        dist.all_gather_object(rngs, rng_state().cpu())
        final = full_state(steps, applied, rngs)
        final.pop("ballast")
        dist.barrier()
    except Exception as exc:  # a peer failed: the collective raised (closed connection or timeout)
        log("noticed", reason=f"{type(exc).__name__}: {exc}"[:300])
        os._exit(1)
    if rank == 0:
        from course_lib.checkpoint.safe import save_checkpoint

        save_checkpoint(final, paths["final"])
        log("done", step=steps, applied=applied, digest=state_digest(final))
    else:
        log("done", step=steps, applied=applied)
    dist.destroy_process_group()
    os._exit(0)  # everything is on disk (fsynced) or in the log; skip the slow interpreter teardown


if __name__ == "__main__":
    sys.exit(main())
