"""The rendezvous server of the nodes lab: ``python -m course_lib.nodelab.store HOST PORT EVENTS``.

A c10d ``TCPStore`` that torchrun's c10d rendezvous of every node uses (each agent runs with
``is_host=false``). It runs in the lab's switch namespace, like a cluster's rendezvous or
etcd service outside the compute nodes, so losing any node never loses the rendezvous.
It binds ``PORT`` (0: any free port), logs ``rdzv_ready`` with the port it bound to the event log
``EVENTS`` once it listens, and serves until it is killed.
"""
import sys
import time
from datetime import timedelta


def main(argv=None) -> None:
    host, port, events = (sys.argv[1:] if argv is None else argv)[:3]
    from torch.distributed import TCPStore

    from course_lib.labkit import EventLog

    store = TCPStore(host, int(port), is_master=True, wait_for_workers=False, timeout=timedelta(seconds=600))
    EventLog(events, rank=-2)("rdzv_ready", port=store.port)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
