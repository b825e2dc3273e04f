"""Processes and ports of a lab run: spawn in a session of its own, kill by group, find every
descendant by the run's token, output tails (notebooks 07, 10, 11).

No lab chooses a port before it is bound: every server a lab starts itself (the rendezvous store,
torchft's lighthouse, the memory holders) binds port 0 and reports the port the kernel gave it, so two
parallel runs cannot race for one. (One choice stays torch's own: with ``TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1``,
which notebook 07's lab sets for pytorch/pytorch#135712, torchrun's rank-0 agent picks its workers' store
port with ``get_free_port()`` before a worker binds it.)

Every process a lab starts gets the run's token in its environment (``LABKIT_RUN``); torchrun's
workers, torchft's lighthouse and anything started through ``ip netns exec`` inherit it. So the
clean-up finds every process of the run, also one started by a launcher that died before it could
say so, by reading ``/proc/<pid>/environ``, and kills only those: never a process of another run.
"""
from __future__ import annotations

import ctypes
import os
import signal
import socket
from pathlib import Path

__all__ = ["TOKEN_VAR", "die_with_parent", "kill_group", "pids_with_token", "listening_ports", "output_tail",
           "port_is_open", "LabError"]

TOKEN_VAR = "LABKIT_RUN"


class LabError(RuntimeError):
    """A lab run failed or ran past its deadline (the message holds the output tails of its processes,
    :func:`output_tail`)."""


def die_with_parent() -> None:
    """Ask Linux to SIGKILL this process when its parent dies (``PR_SET_PDEATHSIG``; kept across exec)."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG = 1
    except OSError:  # pragma: no cover - not Linux
        pass


def kill_group(pid: int) -> None:
    """SIGKILL the process group led by ``pid`` and ``pid`` itself (gone already: nothing happens)."""
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError, OSError):
            pass


def pids_with_token(token: str) -> set[int]:
    """Every live process whose environment holds ``LABKIT_RUN=<token>`` (zombies excluded)."""
    needle = f"{TOKEN_VAR}={token}".encode()
    found = set()
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            if needle in (p / "environ").read_bytes().split(b"\0"):
                stat = (p / "stat").read_text()
                if stat[stat.rindex(")") + 2] != "Z":
                    found.add(int(p.name))
        except (OSError, ValueError):
            continue
    return found


def _socket_inodes(pid: int) -> set[str]:
    out = set()
    try:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if target.startswith("socket:["):
                out.add(target[8:-1])
    except OSError:
        pass
    return out


def listening_ports(pids) -> set[int]:
    """TCP ports (IPv4 and IPv6, this network namespace) on which one of ``pids`` listens."""
    inodes = set().union(*(_socket_inodes(p) for p in pids)) if pids else set()
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            f = line.split()
            if len(f) > 9 and f[3] == "0A" and f[9] in inodes:  # 0A: LISTEN
                ports.add(int(f[1].rsplit(":", 1)[1], 16))
    return ports


def output_tail(paths, chars: int = 1500) -> str:
    """The last ``chars`` characters of each file, under a ``--- name`` line (missing files skipped)."""
    parts = []
    for p in paths:
        p = Path(p)
        try:
            text = p.read_text(errors="replace")
        except OSError:
            continue
        parts.append(f"--- {p.name}\n{text[-chars:]}")
    return "\n".join(parts)


def port_is_open(port: int, host: str = "127.0.0.1") -> bool:
    """True if something accepts TCP connections on ``host:port``."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.5)
        return s.connect_ex((host, port)) == 0
