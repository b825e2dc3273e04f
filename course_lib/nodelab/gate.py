"""The pre-flight gate of the lemon-node lab (notebook 14): a short health check and an all-reduce test that
a node passes before it may (re)join the job.

    python -m course_lib.nodelab.gate node ADDR EVENTS ROUNDS GATE_ID   # in the candidate node
    python -m course_lib.nodelab.gate peer EVENTS ROUNDS GATE_ID        # in the switch: the test partner

Both start at once. The candidate binds a c10d ``TCPStore`` on its own address ``ADDR``, port 0, and logs
``gate_port`` with the port it bound (the partner waits for it in the event log, so neither waits for the
other's ``import torch``); it runs ``ROUNDS`` rounds of a health check (a seeded 128 x 128 matrix product
checked against float64), then ``ROUNDS`` all-reduces of 1 MiB with the partner over the node's own link
(gloo), each checked.
Every round is one unit of work on the node: a lemon node (``NODELAB_LEMON_AFTER=n`` in its environment,
as for the training job, :mod:`course_lib.faultlab.job`) fails at its ``n``-th unit, here as in training,
and the gate sees the node go down instead of the job. The candidate logs ``gate_start`` (before ``import
torch``), ``gate_fault`` when the lemon strikes, and ``gate_pass`` or ``gate_fail`` with the reason; its exit
code is 0 only on a pass. A fault that needs more units than the gate runs passes it: the gate is short.
"""
import time

_T_START = time.time()

import os  # noqa: E402
import signal  # noqa: E402
import sys  # noqa: E402
from datetime import timedelta  # noqa: E402


def _store(host: str, port: int, master: bool):
    from torch.distributed import TCPStore

    return TCPStore(host, port, world_size=2, is_master=master, wait_for_workers=False, timeout=timedelta(seconds=60))


def _all_reduce_rounds(store, rank: int, rounds: int, unit=None) -> None:
    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo", store=store, rank=rank, world_size=2, timeout=timedelta(seconds=30))
    for r in range(rounds):
        if unit is not None:
            unit(f"all-reduce {r + 1}")
        t = torch.full((1 << 18,), float(rank + 1))  # 1 MiB of float32
        dist.all_reduce(t)
        if not bool((t == 3.0).all()):
            raise RuntimeError(f"all-reduce {r + 1} returned {float(t[0])} instead of 3.0")
    dist.barrier()
    dist.destroy_process_group()


def peer(events: str, rounds: int, gate: str) -> int:
    from course_lib.labkit import die_with_parent, wait_for

    die_with_parent()
    where = wait_for(events, "gate_port", gate=gate, deadline=time.monotonic() + 300, what=f"gate {gate}'s port")
    _all_reduce_rounds(_store(where["addr"], where["port"], False), 1, rounds)
    return 0


def node(addr: str, events: str, rounds: int, gate: str) -> int:
    from course_lib.labkit import EventLog, die_with_parent

    die_with_parent()
    log = EventLog(events, rank=-3, node=os.environ.get("NODELAB_NODE"), gate=gate)
    log("gate_start", t=_T_START, rounds=rounds)
    lemon_after = int(os.environ.get("NODELAB_LEMON_AFTER") or 0)
    done = [0]

    def unit(what: str) -> None:
        done[0] += 1
        if lemon_after and done[0] == lemon_after:  # the node's fault strikes under load, as in training
            log("gate_fault", unit=done[0], what=what)
            os.kill(os.getpid(), signal.SIGKILL)

    try:
        import torch

        store = _store(addr, 0, True)
        log("gate_port", addr=addr, port=store.port)
        torch.set_num_threads(1)
        g = torch.Generator().manual_seed(0)
        a, b = torch.randn(128, 128, generator=g), torch.randn(128, 128, generator=g)
        want = (a.double() @ b.double())
        for r in range(rounds):
            unit(f"health check {r + 1}")
            got = a @ b
            if not torch.allclose(got.double(), want, rtol=1e-4, atol=1e-4):
                raise RuntimeError(f"health check {r + 1}: the matrix product is off by {float((got.double() - want).abs().max())}")
        _all_reduce_rounds(store, 0, rounds, unit)
    except Exception as exc:  # noqa: BLE001 - any failure of the check fails the gate, with its reason
        log("gate_fail", reason=f"{type(exc).__name__}: {exc}"[:300], units=done[0])
        return 1
    log("gate_pass", units=done[0])
    return 0


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[0] == "peer":
        return peer(argv[1], int(argv[2]), argv[3])
    return node(argv[1], argv[2], int(argv[3]), argv[4])


if __name__ == "__main__":
    sys.exit(main())
