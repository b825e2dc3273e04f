"""The torchft lab's training job: one replica group, the script its torchrun starts (notebook 10).

    TORCHFT_LIGHTHOUSE=http://127.0.0.1:PORT FTLAB_GROUP=g \\
    torchrun --standalone --nproc-per-node 1 --max-restarts K course_lib/ftlab/job.py CONFIG.json

The lab kit's toy problem (:func:`course_lib.labkit.toy.toy_model`, ``toy_batch``: the batch of
step ``s`` in group ``g`` is a pure function of the seed, ``s`` and ``g``), trained with
torchft: ``torchft.Manager`` asks the lighthouse for a quorum of the groups that are up before
every step, ``Manager.allreduce`` averages the gradients over the groups in the quorum (gloo; one flat
all-reduce, as notebook 07's job does: torchft's DDP wrapper hit an internal assertion of the
DDP reducer after an aborted step on this build), and ``torchft.optim.OptimizerWrapper`` applies the step only if every group
in the quorum says it should commit. A group that (re)starts behind the others *heals*: the
manager fetches the model and optimizer state from a healthy peer (torchft's HTTP transport),
not from a checkpoint. Every server binds to 127.0.0.1.

The learned hang detector (:mod:`course_lib.ftlab.hang`) watches each step's compute; when
it fires the worker logs ``hang_detected`` and SIGKILLs itself, so torchrun restarts the group.
Events (the faultlab event log, ``rank`` = the replica group, ``gen`` = its torchrun restart
count): worker_start, pg_ready, quorum, state_loaded (source ``peer``), step_done (the step
committed, ``participants``), step_aborted, inject, slow, hang_detected, done (``digest``).
"""
import time

_T_START = time.time()

import json  # noqa: E402
import logging  # noqa: E402
import os  # noqa: E402
import signal  # noqa: E402
import sys  # noqa: E402
from datetime import timedelta  # noqa: E402
from pathlib import Path  # noqa: E402


def _loopback_only(tm, ht) -> None:
    """Make torchft's manager server and checkpoint server bind to 127.0.0.1 (their defaults bind every interface)."""
    import socket
    from http.server import ThreadingHTTPServer

    orig_server = tm.ManagerServer

    def manager_server(**kw):
        return orig_server(**{**kw, "bind": "127.0.0.1:0", "hostname": "127.0.0.1"})

    tm.ManagerServer = manager_server

    class LoopbackHTTPServer(ThreadingHTTPServer):
        address_family = socket.AF_INET

        def __init__(self, server_address, handler):
            super().__init__(("127.0.0.1", 0), handler)

    ht._IPv6HTTPServer = LoopbackHTTPServer

    def address(self) -> str:
        return f"http://127.0.0.1:{self._server.socket.getsockname()[1]}/checkpoint/"

    ht.HTTPTransport.address = address


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    cfg = json.loads(Path(argv[0]).read_text())
    paths = cfg.pop("_paths")
    group = int(os.environ["FTLAB_GROUP"])
    gen = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))

    from course_lib.ftlab.hang import LearnedHangDetector, start_watchdog
    from course_lib.labkit import EventLog, die_with_parent, next_failure, read_events
    from course_lib.labkit.toy import state_digest, toy_batch, toy_model, toy_target

    die_with_parent()
    log = EventLog(paths["events"], rank=group, gen=gen)
    log("worker_start", t=_T_START)
    earlier = read_events(paths["events"])
    index, failure = next_failure(earlier, cfg["failures"], who=group)  # this group's first not yet injected
    logging.basicConfig(level=logging.WARNING)

    import torch
    import torchft.checkpointing.http_transport as ht
    import torchft.manager as tm
    from torchft.optim import OptimizerWrapper
    from torchft.process_group import ProcessGroupGloo

    _loopback_only(tm, ht)
    torch.set_num_threads(1)
    seed, steps = cfg["seed"], cfg["steps"]
    slow = {s[0]: s[1] for s in cfg["slow"] if s[2] == group}
    for e in earlier:  # a slow step fires once per job, not once per generation
        if e["ev"] == "slow" and e["rank"] == group:
            slow.pop(e["planned"], None)

    F, H, B = cfg["features"], cfg["hidden"], cfg["batch"]
    model = toy_model(seed, F, H)
    inner = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    target = toy_target(seed, F)
    torch.manual_seed(seed * 1000 + 17 + group)

    detector = LearnedHangDetector(cfg["safety_factor"], cfg["warmup"])
    dead = {"step": 0}

    def on_hang(d):
        log("hang_detected", step=dead["step"], timeout_s=d.timeout_s, longest_s=d.longest_s)
        os.kill(os.getpid(), signal.SIGKILL)

    def state_dict():
        return {"model": model.state_dict(), "optim": inner.state_dict()}

    def load_state_dict(sd):
        model.load_state_dict(sd["model"])
        inner.load_state_dict(sd["optim"])
        log("state_loaded", source="peer", step=manager.current_step())

    timeout = timedelta(seconds=cfg["timeout_s"])
    manager = tm.Manager(
        pg=ProcessGroupGloo(timeout=timeout),
        load_state_dict=load_state_dict,
        state_dict=state_dict,
        min_replica_size=1,
        use_async_quorum=False,
        timeout=timeout,
        quorum_timeout=timedelta(seconds=120),
        connect_timeout=timedelta(seconds=60),
        rank=0,
        world_size=1,
        replica_id=f"group{group}",
        hostname="127.0.0.1",
    )
    opt = OptimizerWrapper(manager, inner)
    log("pg_ready", backend="gloo (torchft)")
    start_watchdog(detector, on_hang)

    last = {"full": False}

    def going() -> bool:  # train `steps`; then go on (at most grace_steps) until a step with every group commits
        n = manager.current_step()
        return n < steps or (n < steps + cfg["grace_steps"] and not last["full"])

    while going():
        opt.zero_grad(set_to_none=False)  # the quorum (and healing, if this group is behind)
        step = manager.current_step() + 1
        full = manager.num_participants() == cfg["groups"]
        log("quorum", step=step, participants=manager.num_participants(), quorum_id=manager._quorum_id)
        dead["step"] = step
        detector.begin()
        # a failure strikes at the first step >= its step in which every group takes part
        if failure is not None and step >= failure["step"] and full:
            log("inject", kind=failure["kind"], failure=index, step=step, progress=step - 1)
            if failure["kind"] == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            while True:  # hang: never reaches the all-reduce; the learned timeout ends it
                time.sleep(3600)
        due = [k for k in sorted(slow) if k <= step] if (full and detector.armed) else []  # a slow step tests an armed timeout
        factor = slow.pop(due[0]) if due else 1.0
        if due:
            log("slow", step=step, factor=factor, planned=due[0])
        time.sleep(cfg["step_compute_s"] * factor)
        x, y = toy_batch(seed, step, group, B, target)
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        detector.end()
        try:
            # the gradient average across the groups in the quorum (torchft's fault-tolerant all-reduce:
            # an error does not raise here, it makes should_commit below say no)
            flat = torch.cat([p.grad.reshape(-1) for p in model.parameters()])
            manager.allreduce(flat).wait()
            off = 0
            for p in model.parameters():
                p.grad.copy_(flat[off : off + p.numel()].view_as(p))
                off += p.numel()
            opt.step()  # applied only if every group in the quorum commits
        except Exception as exc:  # pragma: no cover - torchft normally reports errors through should_commit
            log("step_aborted", step=step, reason=f"{type(exc).__name__}: {exc}"[:300])
            continue
        if manager.current_step() >= step:
            last["full"] = manager.num_participants() == cfg["groups"]
            log("step_done", step=step, loss=loss.item(), participants=manager.num_participants())
        else:
            last["full"] = False
            log("step_aborted", step=step, reason=str(manager.errored())[:300])
    digest = state_digest({"model": model.state_dict(), "optim": inner.state_dict()})
    log("done", step=manager.current_step(), digest=digest)
    torch.save({"model": model.state_dict(), "optim": inner.state_dict()}, paths["final"].format(group=group))
    manager.shutdown(wait=False)
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
