"""The torchft lab's lighthouse: ``python -m course_lib.ftlab.lighthouse EVENTS MIN_REPLICAS JOIN_MS HEARTBEAT_MS TICK_MS``.

torchft's ``torchft_lighthouse`` binary takes its address on the command line and cannot say which port it
got, so a lab would have to choose a free port first and hope nobody takes it before the lighthouse binds
it (a race between parallel test workers). This server is the same lighthouse (torchft's own
``LighthouseServer``, the Rust server the binary runs) bound to ``127.0.0.1:0``: the kernel picks the port
at the bind, and the server logs ``lighthouse_ready`` with that port to the run's event log ``EVENTS`` once
it listens, then serves until it is killed (like the nodes lab's rendezvous server,
:mod:`course_lib.nodelab.store`).

The extension module is loaded from its file without importing the ``torchft`` package, whose
``__init__`` imports torch: the lighthouse is ready in a fraction of a second, not after torch's import.
"""
import importlib.machinery
import importlib.util
import sys
import time
from pathlib import Path


def lighthouse_server_class():
    """torchft's ``LighthouseServer`` (from ``torchft/_torchft*.so``, without importing torch)."""
    package = importlib.util.find_spec("torchft")  # locates the package; runs none of its code
    if package is None or package.origin is None:
        raise ImportError("torchft is not installed")
    (path,) = sorted(Path(package.origin).parent.glob("_torchft*.so"))[:1] or [None]
    if path is None:
        raise ImportError(f"torchft's extension module is missing next to {package.origin}")
    loader = importlib.machinery.ExtensionFileLoader("torchft._torchft", str(path))
    spec = importlib.util.spec_from_file_location("torchft._torchft", str(path), loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module.LighthouseServer


def port_of(address: str) -> int:
    """The port of a lighthouse address such as ``http://host:43817``."""
    tail = address.rstrip("/").rsplit(":", 1)
    if len(tail) != 2 or not tail[1].isdigit():
        raise ValueError(f"address must end with ':<port>' (got {address!r})")
    return int(tail[1])


def main(argv=None) -> None:
    events, min_replicas, join_ms, heartbeat_ms, tick_ms = (sys.argv[1:] if argv is None else argv)[:5]
    from course_lib.labkit import EventLog

    server = lighthouse_server_class()(bind="127.0.0.1:0", min_replicas=int(min_replicas), join_timeout_ms=int(join_ms),
                                       quorum_tick_ms=int(tick_ms), heartbeat_timeout_ms=int(heartbeat_ms))
    EventLog(events, rank=-2)("lighthouse_ready", port=port_of(server.address()))
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
